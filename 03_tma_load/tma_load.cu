// 03_tma_load: the Tensor Memory Accelerator, loading: tensor maps and mbarriers.
//
// One thread names a box of a tensor by its coordinates; the TMA copies the
// whole box into shared memory and counts its bytes on an mbarrier, which
// every thread waits on. Parts: a grid of boxes over a matrix whose sizes are
// not multiples of the box; one barrier and two barriers reused across loads
// (the phase parity); a box hanging over the edge (out-of-bounds fill); a 1D
// bulk copy; a strided box; every tensor-map rule checked against the
// driver's encoder; a sum over 1 GiB: 16-byte loads, a TMA pipeline, and the
// Hopper pipeline (a producer warp, consumer warps, full/empty barriers); the
// tensor maps' L2 promotion, measured on the sums.
// New since step 02: 03_tma_load/tensor_map.h (host: the map and its rules),
// 03_tma_load/mbarrier.cuh, 03_tma_load/tma_load.cuh, 03_tma_load/pipeline.cuh
// (warp roles, setmaxnreg, schedules). Lesson: 03_tma_load/README.md.
// Run: make run-03 [ARGS="--cols 1001"], make check-03, make sass-03.
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"

#define THREADS 256
#define MAX_BOX_BYTES (128 << 10)  // the largest box part 1 accepts (shared memory)

// Every tensor here holds its own coordinates: element (r, c) of a matrix
// with `cols` columns is r * cols + c, its row-major index. A box loaded from
// the wrong coordinate, transposed, shifted or short cannot match; an
// out-of-bounds element must read as 0 (oobFill NONE).
static __host__ __device__ __forceinline__ uint32_t expected_word(int64_t r, int64_t c, uint64_t rows,
                                                                  uint64_t cols) {
    return (r >= 0 && c >= 0 && (uint64_t)r < rows && (uint64_t)c < cols) ? (uint32_t)(r * cols + c) : 0u;
}

// A position-coded matrix on the device (and the host copy of it).
typedef struct {
    uint64_t rows, cols;
    uint32_t* dev;
} Matrix;

// Every loaded box is copied out to global memory (poisoned by the host), so
// the host checks every element, and a block that never ran leaves poison.
static __device__ __forceinline__ void copy_out(const uint32_t* box, uint32_t words, uint32_t* out) {
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) out[i] = box[i];
}

// The expected contents of `tiles` boxes of box_rows x box_cols at the given
// box origins, tile after tile (the layout copy_out produces).
static uint32_t* expected_boxes(const Matrix* m, uint32_t tiles, const int64_t* row0, const int64_t* col0,
                                uint32_t box_rows, uint32_t box_cols, uint32_t row_step) {
    const size_t words = (size_t)box_rows * box_cols;
    uint32_t* want = (uint32_t*)xmalloc(tiles * words * 4, "the expected boxes");
    for (uint32_t t = 0; t < tiles; ++t)
        for (size_t i = 0; i < words; ++i)
            want[t * words + i] = expected_word(row0[t] + (int64_t)(i / box_cols) * row_step,
                                                col0[t] + (int64_t)(i % box_cols), m->rows, m->cols);
    return want;
}

// The same for the first `tiles` boxes of a grid of boxes, box t at grid
// position (t / tiles_x, t % tiles_x): parts 1 and 2.
static uint32_t* expected_grid_boxes(const Matrix* m, uint32_t tiles, uint32_t tiles_x, uint32_t box_rows,
                                     uint32_t box_cols) {
    int64_t* row0 = (int64_t*)xmalloc(tiles * sizeof(int64_t), "box origins");
    int64_t* col0 = (int64_t*)xmalloc(tiles * sizeof(int64_t), "box origins");
    for (uint32_t t = 0; t < tiles; ++t) {
        row0[t] = (int64_t)(t / tiles_x) * box_rows;
        col0[t] = (int64_t)(t % tiles_x) * box_cols;
    }
    uint32_t* want = expected_boxes(m, tiles, row0, col0, box_rows, box_cols, 1);
    free(row0);
    free(col0);
    return want;
}

// ---- Part 1: one box per CTA -----------------------------------------------
// CTA b loads box (b / tiles_x, b % tiles_x) of the matrix and copies it out.
// load_box (parts 1, 3 and 5) arms the barrier for exactly the bytes the box
// delivers (one byte more and the phase never completes) and issues the load.
// The wait names parity 0, the barrier's first phase; parity 1 would name the
// phase BEFORE the first one, which counts as complete: it returns at once.
static __device__ __forceinline__ void load_box(uint32_t* dst, const CUtensorMap* map, int32_t col0,
                                                int32_t row0, uint64_t* bar, uint32_t bytes) {
    // LAB-BEGIN: arm the barrier for the box's bytes, then load the box at (col0, row0) into dst with one TMA load (which coordinate comes first?)
    mbar_arrive_expect_tx(bar, bytes);
    tma_load_2d(dst, map, col0, row0, bar);  // coordinates: column first, then row
    // LAB-STUB: (void)dst, (void)map, (void)col0, (void)row0, (void)bar, (void)bytes;
    // LAB-END
}

__global__ void __launch_bounds__(THREADS)
    tile_load(const __grid_constant__ CUtensorMap map, uint32_t box_rows, uint32_t box_cols, uint32_t tiles_x,
              uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();  // [box_rows][box_cols] uint32, 128-byte aligned
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = box_rows * box_cols,
                   bytes = words * 4;  // the FULL box, out-of-bounds part included
    const int32_t col0 = (int32_t)(blockIdx.x % tiles_x * box_cols),
                  row0 = (int32_t)(blockIdx.x / tiles_x * box_rows);
    poison_smem(box, words);
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);  // one arrival per phase: thread 0's arrive.expect_tx
        mbar_fence_init();   // orders the init for the cluster (see mbarrier.cuh)
    }
    __syncthreads();  // barrier initialized and box poisoned, for everyone
    if (threadIdx.x == 0) load_box(box, &map, col0, row0, &bar, bytes);
    MBAR_WAIT(&bar, 0);
    copy_out(box, words, out + (size_t)blockIdx.x * words);
}

static void part_tiling(const Matrix* m, uint32_t box_rows, uint32_t box_cols, cudaStream_t s) {
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m->dev, m->rows, m->cols,
                                              m->cols * 4, box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map =
        make_tensor_map(&spec, "the part-1 matrix (--rows, --cols, --box-rows, --box-cols)");
    const uint32_t tiles_x = (uint32_t)((m->cols + box_cols - 1) / box_cols);
    const uint32_t tiles = tiles_x * (uint32_t)((m->rows + box_rows - 1) / box_rows);
    const size_t words = (size_t)box_rows * box_cols;
    uint32_t* want = expected_grid_boxes(m, tiles, tiles_x, box_rows, box_cols);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, tiles * words * 4));
    poison_device(out, tiles * words * 4, s);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tile_load, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(MAX_BOX_BYTES)));
    tile_load<<<tiles, THREADS, tma_smem_bytes(words * 4), s>>>(map, box_rows, box_cols, tiles_x, out);
    CHECK_LAUNCH();
    check_device("tiling", out, want, tiles * words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// ---- Part 2: reuse ---------------------------------------------------------
// One CTA loads `tiles` boxes in sequence (CTA b: boxes b * tiles ...), all
// through ONE buffer and ONE barrier: the k-th load completes the barrier's
// k-th phase, so the k-th wait names parity k & 1. The __syncthreads() after
// the copy-out keeps the next load from overwriting a box still being read.
#define REUSE_BOX 64  // 64 x 64 uint32 = 16 KiB per box

static __device__ __forceinline__ int32_t reuse_col0(uint32_t t, uint32_t tiles_x) {
    return (int32_t)(t % tiles_x * REUSE_BOX);
}
static __device__ __forceinline__ int32_t reuse_row0(uint32_t t, uint32_t tiles_x) {
    return (int32_t)(t / tiles_x * REUSE_BOX);
}

__global__ void __launch_bounds__(THREADS)
    reuse_one_barrier(const __grid_constant__ CUtensorMap map, uint32_t tiles_x, int tiles, uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = REUSE_BOX * REUSE_BOX, bytes = words * 4;
    mbar_init_cta(&bar, 1, 1);
    for (int k = 0; k < tiles; ++k) {
        const uint32_t t = blockIdx.x * tiles + k;
        poison_smem(box, words);
        __syncthreads();  // poisoned (and the previous box fully read) before the load
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(&bar, bytes);
            tma_load_2d(box, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x), &bar);
        }
        MBAR_WAIT(&bar, (uint32_t)(k & 1));
        copy_out(box, words, out + (size_t)t * words);
        __syncthreads();
    }
    if (threadIdx.x == 0) mbar_inval(&bar);
}

// Two buffers, two barriers: tile k+1 is loaded into the other buffer while
// tile k is copied out. Barrier b completes its u-th phase at its u-th use, so
// the wait for tile k (barrier k & 1, use k / 2) names parity (k / 2) & 1.
__global__ void __launch_bounds__(THREADS)
    reuse_two_barriers(const __grid_constant__ CUtensorMap map, uint32_t tiles_x, int tiles, uint32_t* out) {
    uint32_t* boxes = (uint32_t*)tma_smem_base();  // [2][REUSE_BOX * REUSE_BOX] uint32
    __shared__ __align__(8) uint64_t bar[2];
    const uint32_t words = REUSE_BOX * REUSE_BOX, bytes = words * 4, first = blockIdx.x * tiles;
    poison_smem(boxes, 2 * words);
    mbar_init_cta(bar, 2, 1);
    if (threadIdx.x == 0) {  // prologue: tile 0 into buffer 0
        mbar_arrive_expect_tx(&bar[0], bytes);
        tma_load_2d(boxes, &map, reuse_col0(first, tiles_x), reuse_row0(first, tiles_x), &bar[0]);
    }
    for (int k = 0; k < tiles; ++k) {
        if (threadIdx.x == 0 && k + 1 < tiles) {  // buffer (k+1)&1 was freed by the barrier at the end of k-1
            const uint32_t t = first + k + 1;
            mbar_arrive_expect_tx(&bar[(k + 1) & 1], bytes);
            tma_load_2d(boxes + ((k + 1) & 1) * words, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x),
                        &bar[(k + 1) & 1]);
        }
        MBAR_WAIT(&bar[k & 1], (uint32_t)((k / 2) & 1));
        copy_out(boxes + (k & 1) * words, words, out + (size_t)(first + k) * words);
        __syncthreads();  // everyone is done with buffer k&1 before tile k+2 is loaded into it
    }
}

static void part_reuse(const Matrix* m, cudaStream_t s) {
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m->dev, m->rows, m->cols,
                                              m->cols * 4, REUSE_BOX, REUSE_BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the part-2 matrix (--rows, --cols)");
    const int ctas = 8, per_cta = 16;  // 8 CTAs x 16 consecutive boxes (zero fill past the matrix)
    const uint32_t tiles = ctas * per_cta, tiles_x = (uint32_t)((m->cols + REUSE_BOX - 1) / REUSE_BOX);
    const size_t words = REUSE_BOX * REUSE_BOX;
    uint32_t* want = expected_grid_boxes(m, tiles, tiles_x, REUSE_BOX, REUSE_BOX);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, tiles * words * 4));
    poison_device(out, tiles * words * 4, s);
    reuse_one_barrier<<<ctas, THREADS, tma_smem_bytes(words * 4), s>>>(map, tiles_x, per_cta, out);
    CHECK_LAUNCH();
    check_device("reuse_one_barrier", out, want, tiles * words, s);
    poison_device(out, tiles * words * 4, s);
    reuse_two_barriers<<<ctas, THREADS, tma_smem_bytes(2 * words * 4), s>>>(map, tiles_x, per_cta, out);
    CHECK_LAUNCH();
    check_device("reuse_two_barriers", out, want, tiles * words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// ---- Parts 3 and 5: one box, anywhere, with any traversal stride -------------
// `bytes` is what the box delivers (tensor_box_bytes on the host): the full
// box, out-of-bounds part included, with ceil(box / stride) rows.
__global__ void __launch_bounds__(THREADS) one_box(const __grid_constant__ CUtensorMap map, int32_t col0,
                                                   int32_t row0, uint32_t bytes, uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    poison_smem(box, bytes / 4);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) load_box(box, &map, col0, row0, &bar, bytes);
    MBAR_WAIT(&bar, 0);
    copy_out(box, bytes / 4, out);
}

// Loads one box of `m` described by `spec` at (col0, row0) and checks it.
static void load_one_box(const char* name, const Matrix* m, const TensorMapSpec* spec, int64_t col0,
                         int64_t row0, cudaStream_t s) {
    const CUtensorMap map = make_tensor_map(spec, name);
    const uint32_t bytes = tensor_box_bytes(spec), rows_loaded = bytes / 4 / spec->box[0];
    uint32_t* want = expected_boxes(m, 1, &row0, &col0, rows_loaded, spec->box[0], spec->elem_stride[1]);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    poison_device(out, bytes, s);
    one_box<<<1, THREADS, tma_smem_bytes(bytes), s>>>(map, (int32_t)col0, (int32_t)row0, bytes, out);
    CHECK_LAUNCH();
    check_device(name, out, want, bytes / 4, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// A small position-coded matrix of its own, whatever the part-1 sizes are.
static Matrix small_matrix(uint64_t rows, uint64_t cols, cudaStream_t s) {
    Matrix m = {rows, cols, NULL};
    uint32_t* h = (uint32_t*)xmalloc(rows * cols * 4, "a small matrix");
    for (uint64_t i = 0; i < rows * cols; ++i) h[i] = (uint32_t)i;
    CUDA_CHECK(cudaMalloc((void**)&m.dev, rows * cols * 4));
    CUDA_CHECK(cudaMemcpyAsync(m.dev, h, rows * cols * 4, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    free(h);
    return m;
}

// A 100 x 100 tensor and a 32 x 32 box at column -8, row 90: the TMA fills
// what lies outside with zeros, and the full box's bytes arrive. Every word
// of the box is compared: the inside with the matrix, the outside with 0, so
// a wrong fill or a shifted box cannot hide (the matrix holds no zero there).
static void part_out_of_bounds(cudaStream_t s) {
    const Matrix m = small_matrix(100, 100, s);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m.dev, 100, 100, 400, 32, 32,
                                              CU_TENSOR_MAP_SWIZZLE_NONE);
    load_one_box("oob_box_at_col_-8_row_90", &m, &spec, -8, 90, s);
    CUDA_CHECK(cudaFree(m.dev));
}

// Traversal strides: with elementStrides {1, 2} the TMA takes every second
// row of a 16-row box, so 8 rows land (and 8 rows' bytes are what expect_tx
// must say). Dimension 0's stride is ignored without interleave: {2, 2} loads
// exactly the same 8 rows of 32 whole columns.
static void part_strided(cudaStream_t s) {
    const Matrix m = small_matrix(64, 64, s);
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m.dev, 64, 64, 256, 16, 32,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
    spec.elem_stride[1] = 2;
    load_one_box("strided_rows_1x2", &m, &spec, 8, 4, s);
    spec.elem_stride[0] = 2;
    load_one_box("strided_dim0_ignored_2x2", &m, &spec, 8, 4, s);
    CUDA_CHECK(cudaFree(m.dev));
}

// ---- Part 4: 1D bulk copy ---------------------------------------------------
// No tensor map: a source address and a byte count (both multiples of 16).
__global__ void __launch_bounds__(THREADS)
    bulk_copy(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t chunk_bytes) {
    uint32_t* buf = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = chunk_bytes / 4;
    poison_smem(buf, words);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, chunk_bytes);
        bulk_load(buf, in + (size_t)blockIdx.x * words, chunk_bytes, &bar);
    }
    MBAR_WAIT(&bar, 0);
    copy_out(buf, words, out + (size_t)blockIdx.x * words);
}

static void part_bulk(uint32_t chunk_bytes, cudaStream_t s) {
    const size_t bytes = 1u << 20, words = bytes / 4;
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the bulk part's data");
    for (size_t i = 0; i < words; ++i) want[i] = (uint32_t)(i * 2654435761u);  // position-coded, all distinct
    uint32_t *in = NULL, *out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    CUDA_CHECK(cudaMemcpyAsync(in, want, bytes, cudaMemcpyHostToDevice, s));
    poison_device(out, bytes, s);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(65536)));
    bulk_copy<<<(unsigned)(bytes / chunk_bytes), THREADS, tma_smem_bytes(chunk_bytes), s>>>(in, out,
                                                                                            chunk_bytes);
    CHECK_LAUNCH();
    check_device("bulk_load", out, want, words, s);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// ---- Part 6: the rules, against the driver's encoder ---------------------------
// tensor_map_rule_broken() says which rule a spec breaks; the encoder only
// says CUDA_ERROR_INVALID_VALUE. Here both judge the same specs, each one rule
// away from a valid map, and must agree. The valid neighbours matter as much:
// overlapping rows, a box larger than the tensor, a narrow swizzled box.
typedef struct {
    const char* name;
    TensorMapSpec spec;
} RuleCase;

static void part_rules(const void* dev_base) {
    const TensorMapSpec base = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dev_base, 1024, 1000, 4000, 64,
                                              64, CU_TENSOR_MAP_SWIZZLE_NONE);
    RuleCase c[32];
    int n = 0;
#define RULE_CASE(label, ...)                                                               \
    do {                                                                                    \
        if (n == (int)(sizeof c / sizeof c[0])) die_internal("more than %d rule cases", n); \
        TensorMapSpec s_ = base;                                                            \
        __VA_ARGS__;                                                                        \
        c[n].name = label;                                                                  \
        c[n++].spec = s_;                                                                   \
    } while (0)
    RULE_CASE("valid_2d", (void)0);
    RULE_CASE("rank_0", s_.rank = 0);
    RULE_CASE("rank_6", s_.rank = 6);
    RULE_CASE("address_8_aligned", s_.address = (const char*)dev_base + 8);
    RULE_CASE("address_16_aligned", s_.address = (const char*)dev_base + 16);
    RULE_CASE("dim_0", s_.dim[1] = 0);
    RULE_CASE("dim_2^32", s_.dim[1] = 1ull << 32);
    RULE_CASE("dim_2^32+1", s_.dim[1] = (1ull << 32) + 1);
    RULE_CASE("row_stride_4004", s_.dim[0] = 1001; s_.stride[0] = 4004);
    RULE_CASE("row_stride_2^40", s_.stride[0] = 1ull << 40);
    RULE_CASE("rows_overlap_stride_2000", s_.stride[0] = 2000);
    RULE_CASE("box_0", s_.box[1] = 0);
    RULE_CASE("box_256", s_.box[1] = 256);
    RULE_CASE("box_257", s_.box[1] = 257);
    RULE_CASE("box_larger_than_tensor", s_.dim[0] = 8; s_.dim[1] = 8; s_.stride[0] = 32);
    RULE_CASE("inner_box_12_bytes", s_.box[0] = 3);
    RULE_CASE("swizzle_128B_inner_256_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B);
    RULE_CASE("swizzle_128B_inner_128_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B; s_.box[0] = 32);
    RULE_CASE("swizzle_128B_inner_32_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B; s_.box[0] = 8);
    RULE_CASE("elem_stride_0", s_.elem_stride[1] = 0);
    RULE_CASE("elem_stride_8", s_.elem_stride[1] = 8);
    RULE_CASE("elem_stride_9", s_.elem_stride[1] = 9);
    RULE_CASE("nan_fill_float32", s_.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    RULE_CASE("nan_fill_uint32", s_.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT32;
              s_.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
#undef RULE_CASE
    size_t disagree = 0;
    for (int k = 0; k < n; ++k) {
        char msg[256];
        CUtensorMap map;
        const int host_refuses = tensor_map_rule_broken(&c[k].spec, msg, sizeof msg) != NULL;
        const int driver_refuses = encode_tensor_map(&c[k].spec, &map) != CUDA_SUCCESS;
        disagree += host_refuses != driver_refuses;
        printf("rule   %-30s host %-7s encoder %s\n", c[k].name, host_refuses ? "refuses" : "accepts",
               driver_refuses ? "refuses" : "accepts");
    }
    report_check("rules_agree_with_encoder", disagree, (size_t)n);
}

// ---- Parts 7 and 8: a sum at memory speed ------------------------------------------
// Block-wide reduction, then ONE atomic per block: thousands of warps adding
// to one address would make the L2's atomic unit the bottleneck.
static __device__ __forceinline__ void add_to_total(unsigned long long v, unsigned long long* total) {
    __shared__ unsigned long long warp_sums[THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long s = 0;
        for (int w = 0; w < THREADS / 32; ++w) s += warp_sums[w];
        atomicAdd(total, s);
    }
}

// Plain loads: a block sums 64 KiB; each
// thread issues SUM_VEC uint4 loads (LDG.E.128) before using any of them.
#define SUM_VEC 4
#define SUM_LDG_ROUNDS 4  // 256 threads x 4 x 4 uint4 = 64 KiB per block
__global__ void __launch_bounds__(THREADS) sum_ldg(const uint4* __restrict__ in, unsigned long long* total) {
    unsigned long long s = 0;
    for (int round = 0; round < SUM_LDG_ROUNDS; ++round) {
        const size_t base = ((size_t)blockIdx.x * SUM_LDG_ROUNDS + round) * THREADS * SUM_VEC + threadIdx.x;
        uint4 v[SUM_VEC];
#pragma unroll
        for (int j = 0; j < SUM_VEC; ++j) v[j] = in[base + j * THREADS];  // all loads before any use
#pragma unroll
        for (int j = 0; j < SUM_VEC; ++j) s += (unsigned long long)v[j].x + v[j].y + v[j].z + v[j].w;
    }
    add_to_total(s, total);
}

// TMA: the buffer seen as rows of SUM_COLS words; a box is SUM_BOX_ROWS rows
// (16 KiB). Each block sums `chunk` consecutive boxes through SUM_STAGES
// buffers: thread 0 keeps SUM_STAGES boxes in flight, every thread sums its
// share of the oldest one, and a __syncthreads() frees that stage for the
// next load.
#define SUM_COLS 256
#define SUM_BOX_ROWS 16
#define SUM_STAGES 4
#define SUM_BOX_WORDS (SUM_COLS * SUM_BOX_ROWS)

__global__ void __launch_bounds__(THREADS)
    sum_tma(const __grid_constant__ CUtensorMap map, uint32_t chunk, unsigned long long* total) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [SUM_STAGES][SUM_BOX_ROWS][SUM_COLS] uint32
    __shared__ __align__(8) uint64_t full[SUM_STAGES];
    const uint32_t bytes = SUM_BOX_WORDS * 4;
    const uint32_t first = blockIdx.x * chunk;  // this block's first box (a box = SUM_BOX_ROWS rows)
    mbar_init_cta(full, SUM_STAGES, 1);
    if (threadIdx.x == 0)
        for (uint32_t s = 0; s < SUM_STAGES && s < chunk; ++s) {  // prologue: fill every stage
            mbar_arrive_expect_tx(&full[s], bytes);
            tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0, (int32_t)((first + s) * SUM_BOX_ROWS), &full[s]);
        }
    unsigned long long sum = 0;
    for (uint32_t i = 0; i < chunk; ++i) {
        const uint32_t s = i % SUM_STAGES;
        MBAR_WAIT(&full[s], (i / SUM_STAGES) & 1);
        const uint4* v = (const uint4*)(stage + s * SUM_BOX_WORDS);
        for (uint32_t j = threadIdx.x; j < SUM_BOX_WORDS / 4; j += THREADS) {
            const uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        __syncthreads();  // stage s fully read: it may be refilled
        if (threadIdx.x == 0 && i + SUM_STAGES < chunk) {
            mbar_arrive_expect_tx(&full[s], bytes);
            tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0,
                        (int32_t)((first + i + SUM_STAGES) * SUM_BOX_ROWS), &full[s]);
        }
    }
    add_to_total(sum, total);
}

// ---- Part 8: the Hopper pipeline ----------------------------------------------
// The same sum, warp-specialized. Warpgroup 0 is the producer: one elected
// lane of its first warp issues every load; the other 3 warps only hand their
// registers back. Warpgroups 1..RING_CONSUMER_WARPGROUPS sum. Two rings of
// mbarriers pass the RING_STAGES stages back and forth:
//   full[s]   count 1: the producer arms it with expect_tx, the TMA completes
//             it. Stage s holds a new box.
//   empty[s]  count RING_CONSUMERS: every consumer thread arrives when it has
//             read stage s (its own arrive releases its own reads). Free.
// Use i of the ring is pass p = i / RING_STAGES of stage s = i % RING_STAGES.
// (Fewer arrivals work too: CUTLASS's PipelineTmaAsync counts consumer
// warpgroups, one signalling thread each. But compute-sanitizer's racecheck
// does not follow the other threads' reads through the synchronization that
// precedes one elected arrive, so here each thread arrives for itself.)
// Consumers wait on full[s] for parity p & 1. The producer waits on empty[s]
// for parity (p & 1) ^ 1: on its first pass that names the phase before the
// first, which counts as complete, so every stage starts out free. No
// __syncthreads() in the loops: each side waits only for what it needs.
// Persistent: one block per SM, boxes handed out in units of RING_UNIT
// through a counter (pipeline.cuh). The producer tells the consumers which
// box a stage holds in box_of[s], and nboxes means "no more": the arrive
// that completes full[s] releases that write to the waiting consumers.
// SETMAXNREG: the producer warpgroup drops to PRODUCER_REGS registers per
// thread and the consumers rise to CONSUMER_REGS. BULK: each box is loaded
// as 16 contiguous KiB with cp.async.bulk instead of through the tensor map.
// A wait that gives up (the bounded wait, mbarrier.cuh) ends its loop, so no
// copy is left in flight.
#ifndef RING_STAGES
#define RING_STAGES 8
#endif
#ifndef RING_UNIT
#define RING_UNIT 4
#endif
#define RING_CONSUMER_WARPGROUPS 2
#define RING_THREADS (128 * (1 + RING_CONSUMER_WARPGROUPS))  // 384
#define RING_CONSUMERS (128 * RING_CONSUMER_WARPGROUPS)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232  // 128 x 40 + 256 x 232 = 64512 of the SM's 65536

template <bool SETMAXNREG, bool BULK>
__global__ void __launch_bounds__(RING_THREADS, 1)
    sum_ring(const __grid_constant__ CUtensorMap map, const uint32_t* src, uint32_t nboxes,
             unsigned int* next_unit, unsigned long long* total) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [RING_STAGES][SUM_BOX_ROWS][SUM_COLS] uint32
    __shared__ __align__(8) uint64_t full[RING_STAGES], empty[RING_STAGES];
    __shared__ uint32_t box_of[RING_STAGES];
    const uint32_t warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < RING_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], RING_CONSUMERS);
            box_of[s] = 0;
        }
        mbar_fence_init();
    }
    __syncthreads();  // the only block-wide barrier: the barriers exist before the roles split
    if (warp < 4) {   // producer warpgroup
        if (SETMAXNREG) setmaxnreg_dec<PRODUCER_REGS>();
        if (warp == 0 && elect_one_sync()) {
            Schedule sched = make_schedule(SCHED_DYNAMIC, RING_UNIT, nboxes, next_unit);
            for (uint32_t i = 0;; ++i) {
                const uint32_t s = i % RING_STAGES, pass = i / RING_STAGES;
                if (!MBAR_WAIT(&empty[s], (pass & 1) ^ 1u)) break;  // stage s is free
                const uint32_t box = next_box(&sched, i);
                box_of[s] = box;
                if (box == nboxes) {  // no more: complete full[s] without a copy
                    mbar_arrive(&full[s]);
                    break;
                }
                mbar_arrive_expect_tx(&full[s], SUM_BOX_WORDS * 4);
                if (BULK)  // the same 16 KiB, as one contiguous bulk copy: no tensor map
                    bulk_load(stage + s * SUM_BOX_WORDS, src + (size_t)box * SUM_BOX_WORDS, SUM_BOX_WORDS * 4,
                              &full[s]);
                else
                    tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0, (int32_t)(box * SUM_BOX_ROWS), &full[s]);
            }
        }
        return;
    }
    if (SETMAXNREG) setmaxnreg_inc<CONSUMER_REGS>();
    const uint32_t c = threadIdx.x - 128;  // this thread among the consumers
    unsigned long long sum = 0;
    for (uint32_t i = 0;; ++i) {
        const uint32_t s = i % RING_STAGES, pass = i / RING_STAGES;
        if (!MBAR_WAIT(&full[s], pass & 1)) break;  // stage s holds a box
        if (box_of[s] == nboxes) break;
        const uint4* v = (const uint4*)(stage + s * SUM_BOX_WORDS);
        for (uint32_t j = c; j < SUM_BOX_WORDS / 4; j += RING_CONSUMERS) {
            const uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        mbar_arrive(&empty[s]);  // this thread is done with stage s
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);  // one atomic per consumer warp
}

// The sums only read, so their bandwidth (bytes read / time) can exceed a
// copy's (read + written / time). The result is one number, checked exactly:
// word i of the buffer is i, so the sum of n words is n (n - 1) / 2, and a box
// skipped or summed twice changes it.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    size_t bytes;
    const uint32_t* d;          // the buffer: word i holds i
    unsigned long long* total;  // the kernels add into it
    unsigned int* counter;      // sum_ring's dynamic schedule
    unsigned long long want;
} Sum;

// The total, read back after the stream's work.
static unsigned long long read_total(const Sum* m) {
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpyAsync(&got, m->total, sizeof got, cudaMemcpyDeviceToHost, m->s));
    CUDA_CHECK(cudaStreamSynchronize(m->s));
    return got;
}

static void sum_ldg_part(const Sum* m) {
    const unsigned grid = (unsigned)(m->bytes / 16 / (THREADS * SUM_VEC * SUM_LDG_ROUNDS));
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    sum_ldg<<<grid, THREADS, 0, m->s>>>((const uint4*)m->d, m->total);
    CHECK_LAUNCH();
    if (!check_value("sum_ldg_uint4", read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, "sum_ldg_uint4", (double)m->bytes); timer_next(&t);) {
            sum_ldg<<<grid, THREADS, 0, m->s>>>((const uint4*)m->d, m->total);
            CHECK_LAUNCH();
        }
}

static void sum_tma_part(const Sum* m, const CUtensorMap* map, uint32_t chunk, const char* name) {
    const uint32_t grid = (uint32_t)(m->bytes / (SUM_BOX_WORDS * 4)) / chunk;
    const size_t smem = tma_smem_bytes((size_t)SUM_STAGES * SUM_BOX_WORDS * 4);
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)sum_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    sum_tma<<<grid, THREADS, smem, m->s>>>(*map, chunk, m->total);
    CHECK_LAUNCH();
    if (!check_value(name, read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, name, (double)m->bytes); timer_next(&t);) {
            sum_tma<<<grid, THREADS, smem, m->s>>>(*map, chunk, m->total);
            CHECK_LAUNCH();
        }
}

// One launch of the warp-specialized sum: its counter and the total start at 0.
template <bool SETMAXNREG, bool BULK>
static void launch_sum_ring(const Sum* m, const CUtensorMap* map, size_t smem) {
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    CUDA_CHECK(cudaMemsetAsync(m->counter, 0, sizeof *m->counter, m->s));
    sum_ring<SETMAXNREG, BULK><<<sm_count(), RING_THREADS, smem, m->s>>>(
        *map, m->d, (uint32_t)(m->bytes / (SUM_BOX_WORDS * 4)), m->counter, m->total);
    CHECK_LAUNCH();
}

template <bool SETMAXNREG, bool BULK>
static void sum_ring_part(const Sum* m, const CUtensorMap* map, const char* name) {
    const size_t smem = tma_smem_bytes((size_t)RING_STAGES * SUM_BOX_WORDS * 4);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)sum_ring<SETMAXNREG, BULK>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    launch_sum_ring<SETMAXNREG, BULK>(m, map, smem);
    if (!check_value(name, read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, name, (double)m->bytes); timer_next(&t);)
            launch_sum_ring<SETMAXNREG, BULK>(m, map, smem);
}

// The L2 promotion of a tensor map (cuTensorMapEncodeTiled's l2Promotion) is
// the size of the requests L2 makes to DRAM when a TMA load misses. Part 9
// measures the sums under each of the four values; the plain loads and the
// bulk copies have no map and no such knob.
static const CUtensorMapL2promotion kPromotion[] = {
    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
static const char* const kPromotionName[] = {"none", "64B", "128B", "256B"};

// Parts 7-9: the sums (7: plain loads and TMA, 8: the Hopper pipeline) with
// the maps' default promotion (none, as tensor_spec_2d sets it), then 9: the
// two tensor-map sums again with each other promotion.
static void part_sums(size_t bytes, uint32_t chunk, const Cli* cli, cudaStream_t s) {
    const size_t words = bytes / 4;
    uint32_t* h = (uint32_t*)xmalloc(bytes, "the sum's buffer");
    for (size_t i = 0; i < words; ++i) h[i] = (uint32_t)i;
    uint32_t *d = NULL, *copy = NULL;
    unsigned long long* total = NULL;
    unsigned int* counter = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d, bytes));
    CUDA_CHECK(cudaMalloc((void**)&copy, bytes));
    CUDA_CHECK(cudaMalloc((void**)&total, sizeof *total));
    CUDA_CHECK(cudaMalloc((void**)&counter, sizeof *counter));
    CUDA_CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    measure_memcpy_reference(copy, d, bytes, cli, s);
    const Sum m = {cli, s, bytes, d, total, counter, (unsigned long long)words * (words - 1) / 2};
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d, words / SUM_COLS, SUM_COLS,
                                        SUM_COLS * 4, SUM_BOX_ROWS, SUM_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the part-7 buffer (--mib)");
    sum_ldg_part(&m);
    sum_tma_part(&m, &map, chunk, "sum_tma_4stage");
    sum_ring_part<false, false>(&m, &map, "sum_tma_ring");
    sum_ring_part<true, false>(&m, &map, "sum_tma_ring_setmaxnreg");
    sum_ring_part<false, true>(&m, &map, "sum_bulk_ring");
    for (int p = 1; p < 4; ++p) {  // part 9: the other promotions (none was measured above)
        char name4[48], ring[48];
        snprintf(name4, sizeof name4, "sum_tma_4stage_l2_%s", kPromotionName[p]);
        snprintf(ring, sizeof ring, "sum_tma_ring_l2_%s", kPromotionName[p]);
        spec.l2_promotion = kPromotion[p];
        const CUtensorMap promoted = make_tensor_map(&spec, "the part-9 buffer (--mib)");
        sum_tma_part(&m, &promoted, chunk, name4);
        sum_ring_part<false, false>(&m, &promoted, ring);
    }
    record_gpu_line(
        "sum_tma: %u boxes of %d x %d uint32 per block, %d stages, %d blocks per SM", chunk, SUM_BOX_ROWS,
        SUM_COLS, SUM_STAGES,
        blocks_per_sm((const void*)sum_tma, THREADS, tma_smem_bytes((size_t)SUM_STAGES * SUM_BOX_WORDS * 4)));
    record_gpu_line(
        "sum_tma_ring: %d threads (1 producer warpgroup, %d consumer warpgroups), %d stages of 16 KiB, "
        "1 block per SM, units of %d boxes",
        RING_THREADS, RING_CONSUMER_WARPGROUPS, RING_STAGES, RING_UNIT);
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(copy));
    CUDA_CHECK(cudaFree(total));
    CUDA_CHECK(cudaFree(counter));
    free(h);
}

// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_BOX_ROWS, OPT_BOX_COLS, OPT_BULK, OPT_MIB, OPT_CHUNK, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the part-1/2 matrix (uint32)", 1, 1 << 20, 3000, 3000},
    {"--cols", "C", "columns of the part-1/2 matrix (a row must be a multiple of 16 B)", 1, 1 << 20, 2000,
     2000},
    {"--box-rows", "R", "rows of a part-1 box", 1, 256, 64, 64},
    {"--box-cols", "C", "columns of a part-1 box", 1, 256, 64, 64},
    {"--bulk-bytes", "B", "bytes per 1D bulk copy in part 4 (must divide 1 MiB)", 16, 65536, 32768, 32768},
    {"--mib", "N", "size of the part-7 sum in MiB", 1, 16384, 1024, 32},
    {"--chunk", "T", "16 KiB boxes per block in sum_tma (must divide 64 x --mib)", 1, 4096, 8, 8},
};
// Every rule before the GPU is touched (cudaMalloc's addresses are 256-byte
// aligned, so an aligned stand-in address is checked), and the host memory.
static void check_arguments(const Cli* cli) {
    const uint64_t rows = (uint64_t)cli->value[OPT_ROWS], cols = (uint64_t)cli->value[OPT_COLS];
    const uint32_t box_rows = (uint32_t)cli->value[OPT_BOX_ROWS],
                   box_cols = (uint32_t)cli->value[OPT_BOX_COLS];
    const uint32_t bulk_bytes = (uint32_t)cli->value[OPT_BULK];
    char what[160], msg[256];
    snprintf(what, sizeof what, "--rows %llu --cols %llu --box-rows %u --box-cols %u",
             (unsigned long long)rows, (unsigned long long)cols, box_rows, box_cols);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, rows, cols,
                                              cols * 4, box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    require_tensor_rules(&spec, what);
    if ((size_t)box_rows * box_cols * 4 > MAX_BOX_BYTES)
        die_usage(
            "a box of %u x %u x 4 B = %u KiB does not fit this program's %d KiB of shared memory per box",
            box_rows, box_cols, box_rows * box_cols * 4 >> 10, MAX_BOX_BYTES >> 10);
    const uint64_t tiles = (rows + box_rows - 1) / box_rows * ((cols + box_cols - 1) / box_cols);
    require_grid(what, tiles, "boxes");
    if (bulk_copy_rule_broken(bulk_bytes, msg, sizeof msg)) die_usage("--bulk-bytes %u: %s", bulk_bytes, msg);
    require_divisor("--bulk-bytes", bulk_bytes, 1u << 20, "bytes of the 1 MiB part-4 buffer");
    require_divisor("--chunk", cli->value[OPT_CHUNK], (size_t)cli->value[OPT_MIB] * 64,
                    "16 KiB boxes of the part-7 sum (64 per MiB)");
    // The host holds the matrix, the expected boxes and their readback (part
    // 1), or the sum's buffer (part 7), whichever is more.
    const size_t mat = rows * cols * 4, boxes = tiles * box_rows * box_cols * 4,
                 sum = (size_t)cli->value[OPT_MIB] << 20;
    require_host_memory(what, mat + 2 * boxes);  // never both at once: each names its own options
    snprintf(what, sizeof what, "--mib %lld", cli->value[OPT_MIB]);
    require_host_memory(what, sum);
}

static const CliSpec kCli = {
    "03_tma_load: TMA loads with tensor maps and mbarriers, out-of-bounds fill, strides,\n"
    "1D bulk copies and a TMA read pipeline, each checked in full.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint64_t rows = (uint64_t)cli.value[OPT_ROWS], cols = (uint64_t)cli.value[OPT_COLS];
    const uint32_t box_rows = (uint32_t)cli.value[OPT_BOX_ROWS], box_cols = (uint32_t)cli.value[OPT_BOX_COLS];
    const size_t sum_bytes = (size_t)cli.value[OPT_MIB] << 20;
    require_hopper();
    const size_t boxes =
        (rows + box_rows - 1) / box_rows * box_rows * ((cols + box_cols - 1) / box_cols * box_cols);
    // The matrix stays allocated through the sums (part 6 encodes maps on it):
    // plus the sum's buffer and the memcpy reference's copy.
    require_device_memory("--rows, --cols, --box-rows, --box-cols, --mib",
                          (rows * cols + boxes) * 4 + 2 * sum_bytes);
    print_header("03_tma_load", "TMA loads: tensor maps, mbarriers, out-of-bounds fill, bulk copies");
    printf(
        "problem: parts 1-2 a %llu x %llu uint32 matrix, part-1 boxes of %u x %u; part 4 bulk copies of %lld "
        "B; "
        "part 7 a sum over %lld MiB\n",
        (unsigned long long)rows, (unsigned long long)cols, box_rows, box_cols, cli.value[OPT_BULK],
        cli.value[OPT_MIB]);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const Matrix m = small_matrix(rows, cols, s);  // "small": the part-1 sizes
    part_tiling(&m, box_rows, box_cols, s);
    part_reuse(&m, s);
    part_out_of_bounds(s);
    part_bulk((uint32_t)cli.value[OPT_BULK], s);
    part_strided(s);
    part_rules(m.dev);
    part_sums(sum_bytes, (uint32_t)cli.value[OPT_CHUNK], &cli, s);
    CUDA_CHECK(cudaFree(m.dev));
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
