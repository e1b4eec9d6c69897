// 03_tma_load: the Tensor Memory Accelerator, loading: tensor maps and mbarriers.
//
// What it teaches
//   One thread describes a tile with a tensor map and a coordinate; the TMA
//   unit copies the whole box from global to shared memory and reports the
//   bytes on an mbarrier, which every thread of the block waits on. Parts:
//     1. tiling      a grid of CTAs each loads its box of a position-coded
//                    matrix (each value encodes its row and column) whose
//                    sizes are not multiples of the box; each CTA checks every
//                    element of its box, out-of-bounds zeros included
//     2. reuse       one CTA loads tiles in sequence through ONE barrier
//                    (the phase parity flips each time) and through TWO
//                    barriers (double buffering: the next tile loads while
//                    this one is checked)
//     3. oob         a 100 x 100 tensor, a 32 x 32 box at column -8, row 90:
//                    the outside reads as zero, the inside is right
//     4. bulk        cp.async.bulk: a 1D copy with no tensor map
//     5. sum_*       a sum over 1 GiB: a 4-stage TMA pipeline against uint4
//                    loads (LDG.E.128)
//     6. rules       every tensor-map rule checked on the host first, so a bad
//                    size exits 2 naming the rule (try --cols 1001)
//
// New since step 02: common/mbarrier.cuh (mbar_init, mbar_fence_init, mbar_init_cta,
// mbar_arrive_expect_tx, mbar_wait with its bounded wait, mbar_inval),
// common/tma.cuh (tma_load_1d..5d, bulk_load, fence_proxy_async_shared),
// common/tensor_map.h (TensorMapSpec, tensor_map_rule_broken, make_tensor_map).
// SASS: UTMALDG.2D, UBLKCP.S.G, SYNCS.* (`make sass-03`).
//
// Run
//   make run-03                         default sizes
//   make run-03 ARGS="--cols 1001"      a rule violation: exit 2 with the rule
//   make run-03 ARGS="--bug 1"          exercise: wrong phase parity (check fails)
//   make run-03 ARGS="--bug 2"          exercise: expect_tx 16 bytes too many
//                                       (the bounded wait reports it; check fails)
//   make check-03
//
// A passing run prints a check line per part, the GPU lines, PERF lines for
// the two sums and "RESULT: PASS"; exit code 0.
#include "mbarrier.cuh"
#include "tensor_map.h"
#include "tma.cuh"

#define THREADS 256
#define MAX_BOX_BYTES (128 << 10)  // the largest box part 1 accepts (shared memory)

// ---------------------------------------------------------------------------
// CPU reference
// ---------------------------------------------------------------------------
// Every tensor here holds its own coordinates: element (r, c) of a matrix with
// `cols` columns is r * cols + c, i.e. its row-major index. A box loaded from
// the wrong coordinate, transposed, shifted or short cannot match; an
// out-of-bounds element must read as 0 (oobFill NONE). The sum of n such
// words is n (n - 1) / 2.
static __host__ __device__ __forceinline__ uint32_t expected_word(int64_t r, int64_t c, uint64_t rows,
                                                                  uint64_t cols) {
    return (r >= 0 && c >= 0 && (uint64_t)r < rows && (uint64_t)c < cols) ? (uint32_t)(r * cols + c) : 0u;
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
// Poison a box in shared memory with ordinary stores, then order those
// stores before the TMA's writes: the TMA writes through the async proxy, and
// only fence.proxy.async orders the generic proxy's accesses before it.
static __device__ __forceinline__ void poison_box(uint32_t* box, uint32_t words) {
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) box[i] = POISON_WORD;
    fence_proxy_async_shared();
}

// Counts this thread's share of wrong words of a box loaded at (col0, row0).
static __device__ uint32_t count_wrong(const uint32_t* box, uint32_t box_rows, uint32_t box_cols, int64_t row0,
                                       int64_t col0, uint64_t rows, uint64_t cols) {
    uint32_t wrong = 0;
    for (uint32_t i = threadIdx.x; i < box_rows * box_cols; i += blockDim.x)
        wrong += box[i] != expected_word(row0 + i / box_cols, col0 + i % box_cols, rows, cols);
    return wrong;
}

// ---- Part 1: one box per CTA -----------------------------------------------
// bug 1: wait on parity 1 instead of 0. Parity 1 names the phase BEFORE the
//        first one, which counts as complete: the wait returns at once and the
//        threads read the box before it has landed.
// bug 2: arm the barrier with 16 bytes more than the box delivers: the phase
//        never completes, and the bounded wait reports it and gives up.
__global__ void __launch_bounds__(THREADS) tile_load(const __grid_constant__ CUtensorMap map, uint64_t rows,
                                                     uint64_t cols, uint32_t box_rows, uint32_t box_cols, int bug,
                                                     unsigned long long* wrong) {
    uint32_t* box = (uint32_t*)tma_smem_base();  // [box_rows][box_cols] uint32, 128-byte aligned
    __shared__ __align__(8) uint64_t bar;
    const uint32_t bytes = box_rows * box_cols * 4;  // the FULL box, out-of-bounds part included
    const int32_t col0 = (int32_t)(blockIdx.x * box_cols), row0 = (int32_t)(blockIdx.y * box_rows);
    poison_box(box, box_rows * box_cols);
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);  // one arrival per phase: thread 0's arrive.expect_tx
        mbar_fence_init();   // make the initialized barrier visible to the TMA unit
    }
    __syncthreads();  // barrier initialized and box poisoned, for everyone
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, bytes + (bug == 2 ? 16 : 0));
        tma_load_2d(box, &map, col0, row0, &bar);  // coordinates: column first, then row
    }
    mbar_wait(&bar, bug == 1 ? 1 : 0, "tile_load's barrier", bytes + (bug == 2 ? 16 : 0));
    const uint32_t w = count_wrong(box, box_rows, box_cols, row0, col0, rows, cols);
    if (w) atomicAdd(wrong, w);
    // A block must not exit while a copy into its shared memory is in flight.
    // Correct code has already waited; with bug 1 this is the real wait.
    if (bug == 1) mbar_wait(&bar, 0, "tile_load's barrier", bytes);
}

// ---- Part 2: reuse ---------------------------------------------------------
// One CTA, one box buffer, one barrier: the k-th load completes the barrier's
// k-th phase, so the k-th wait names parity k & 1. The __syncthreads() after
// the check keeps the next load from overwriting a box still being read.
#define REUSE_BOX 64  // 64 x 64 uint32 = 16 KiB per box

__global__ void __launch_bounds__(THREADS) reuse_one_barrier(const __grid_constant__ CUtensorMap map,
                                                             uint64_t rows, uint64_t cols, int tiles,
                                                             unsigned long long* wrong) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t bytes = REUSE_BOX * REUSE_BOX * 4, tiles_x = (uint32_t)((cols + REUSE_BOX - 1) / REUSE_BOX);
    mbar_init_cta(&bar, 1, 1);
    uint32_t w = 0;
    for (int k = 0; k < tiles; ++k) {
        const uint32_t t = blockIdx.x * tiles + k;
        const int32_t col0 = (int32_t)(t % tiles_x * REUSE_BOX), row0 = (int32_t)(t / tiles_x * REUSE_BOX);
        poison_box(box, REUSE_BOX * REUSE_BOX);
        __syncthreads();  // poisoned (and the previous box fully read) before the load
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(&bar, bytes);
            tma_load_2d(box, &map, col0, row0, &bar);
        }
        mbar_wait(&bar, (uint32_t)(k & 1), "reuse_one_barrier's barrier", bytes);
        w += count_wrong(box, REUSE_BOX, REUSE_BOX, row0, col0, rows, cols);
        __syncthreads();
    }
    if (threadIdx.x == 0) mbar_inval(&bar);
    if (w) atomicAdd(wrong, w);
}

// Two buffers, two barriers: tile k+1 is loaded into the other buffer while
// tile k is checked. Barrier b completes its u-th phase at its u-th use, so
// the wait for tile k (barrier k & 1, use k / 2) names parity (k / 2) & 1.
__global__ void __launch_bounds__(THREADS) reuse_two_barriers(const __grid_constant__ CUtensorMap map,
                                                              uint64_t rows, uint64_t cols, int tiles,
                                                              unsigned long long* wrong) {
    uint32_t* boxes = (uint32_t*)tma_smem_base();  // [2][REUSE_BOX * REUSE_BOX] uint32
    __shared__ __align__(8) uint64_t bar[2];
    const uint32_t words = REUSE_BOX * REUSE_BOX, bytes = words * 4;
    const uint32_t tiles_x = (uint32_t)((cols + REUSE_BOX - 1) / REUSE_BOX);
    poison_box(boxes, 2 * words);
    mbar_init_cta(bar, 2, 1);
    if (threadIdx.x == 0) {  // prologue: tile 0 into buffer 0
        const uint32_t t = blockIdx.x * tiles;
        mbar_arrive_expect_tx(&bar[0], bytes);
        tma_load_2d(boxes, &map, (int32_t)(t % tiles_x * REUSE_BOX), (int32_t)(t / tiles_x * REUSE_BOX), &bar[0]);
    }
    uint32_t w = 0;
    for (int k = 0; k < tiles; ++k) {
        if (threadIdx.x == 0 && k + 1 < tiles) {  // buffer (k+1)&1 was freed by the barrier at the end of k-1
            const uint32_t t = blockIdx.x * tiles + k + 1;
            mbar_arrive_expect_tx(&bar[(k + 1) & 1], bytes);
            tma_load_2d(boxes + ((k + 1) & 1) * words, &map, (int32_t)(t % tiles_x * REUSE_BOX),
                        (int32_t)(t / tiles_x * REUSE_BOX), &bar[(k + 1) & 1]);
        }
        const uint32_t t = blockIdx.x * tiles + k;
        mbar_wait(&bar[k & 1], (uint32_t)((k / 2) & 1), "reuse_two_barriers' barrier", bytes);
        w += count_wrong(boxes + (k & 1) * words, REUSE_BOX, REUSE_BOX, (int64_t)(t / tiles_x * REUSE_BOX),
                         (int64_t)(t % tiles_x * REUSE_BOX), rows, cols);
        __syncthreads();  // everyone is done with buffer k&1 before tile k+2 is loaded into it
    }
    if (w) atomicAdd(wrong, w);
}

// ---- Part 3: out of bounds --------------------------------------------------
// One box, copied out word for word so the host can look at every element.
#define OOB_BOX 32

__global__ void __launch_bounds__(THREADS) oob_load(const __grid_constant__ CUtensorMap map, int32_t col0,
                                                    int32_t row0, uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    poison_box(box, OOB_BOX * OOB_BOX);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, OOB_BOX * OOB_BOX * 4);  // the whole box, though most of it is outside
        tma_load_2d(box, &map, col0, row0, &bar);
    }
    mbar_wait(&bar, 0, "oob_load's barrier", OOB_BOX * OOB_BOX * 4);
    for (uint32_t i = threadIdx.x; i < OOB_BOX * OOB_BOX; i += blockDim.x) out[i] = box[i];
}

// ---- Part 4: 1D bulk copy ---------------------------------------------------
// No tensor map: a source address and a byte count (both multiples of 16).
__global__ void __launch_bounds__(THREADS) bulk_copy(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                                     uint32_t chunk_bytes) {
    uint32_t* buf = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = chunk_bytes / 4;
    poison_box(buf, words);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, chunk_bytes);
        bulk_load(buf, in + (size_t)blockIdx.x * words, chunk_bytes, &bar);
    }
    mbar_wait(&bar, 0, "bulk_copy's barrier", chunk_bytes);
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) out[(size_t)blockIdx.x * words + i] = buf[i];
}

// ---- Part 5: a sum at memory speed ------------------------------------------
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

// Plain loads: a block sums 64 KiB, the same share as a sum_tma block; each
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
// (16 KiB). Each block sums `chunk` consecutive boxes through STAGES buffers:
// thread 0 keeps STAGES boxes in flight, every thread sums its share of the
// oldest one, and a __syncthreads() frees that stage for the next load.
#define SUM_COLS 256
#define SUM_BOX_ROWS 16
#define SUM_STAGES 4
#define SUM_BOX_WORDS (SUM_COLS * SUM_BOX_ROWS)

__global__ void __launch_bounds__(THREADS) sum_tma(const __grid_constant__ CUtensorMap map, uint32_t chunk,
                                                   unsigned long long* total) {
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
        mbar_wait(&full[s], (i / SUM_STAGES) & 1, "sum_tma's stage barrier", bytes);
        const uint4* v = (const uint4*)(stage + s * SUM_BOX_WORDS);
        for (uint32_t j = threadIdx.x; j < SUM_BOX_WORDS / 4; j += THREADS) {
            const uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        __syncthreads();  // stage s fully read: it may be refilled
        if (threadIdx.x == 0 && i + SUM_STAGES < chunk) {
            mbar_arrive_expect_tx(&full[s], bytes);
            tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0, (int32_t)((first + i + SUM_STAGES) * SUM_BOX_ROWS),
                        &full[s]);
        }
    }
    add_to_total(sum, total);
}

// ---------------------------------------------------------------------------
// Host launchers
// ---------------------------------------------------------------------------
typedef struct {
    const void* in;
    const CUtensorMap* map;
    unsigned long long* total;
    unsigned grid;
    size_t smem;
    uint32_t chunk;
} SumJob;

static void enqueue_sum_ldg(void* ctx, cudaStream_t s) {
    const SumJob* j = (const SumJob*)ctx;
    CUDA_CHECK(cudaMemsetAsync(j->total, 0, sizeof *j->total, s));
    sum_ldg<<<j->grid, THREADS, 0, s>>>((const uint4*)j->in, j->total);
    CHECK_LAUNCH();
}

static void enqueue_sum_tma(void* ctx, cudaStream_t s) {
    const SumJob* j = (const SumJob*)ctx;
    CUDA_CHECK(cudaMemsetAsync(j->total, 0, sizeof *j->total, s));
    sum_tma<<<j->grid, THREADS, j->smem, s>>>(*j->map, j->chunk, j->total);
    CHECK_LAUNCH();
}

// Reads back a device counter of wrong words and prints the check line.
// A timed-out mbarrier wait, if any, is reported first (its own FAIL line).
static void report_wrong(const char* name, const unsigned long long* d_wrong, size_t total, cudaStream_t s) {
    unsigned long long w = 0;
    CUDA_CHECK(cudaMemcpyAsync(&w, d_wrong, sizeof w, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    mbar_check_timeouts();
    print_check_line(name, (size_t)w, total);
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_BOX_ROWS, OPT_BOX_COLS, OPT_BULK, OPT_MIB, OPT_CHUNK, OPT_BUG, NUM_OPTS };

int main(int argc, char** argv) {
    const IntOption opts[NUM_OPTS] = {
        {"--rows", "R", "rows of the part-1 matrix (uint32)", 1, 1 << 20, 3000, 3000},
        {"--cols", "C", "columns of the part-1 matrix (rows must be a multiple of 16 B)", 1, 1 << 20, 2000, 2000},
        {"--box-rows", "R", "rows of a part-1 box", 1, 1024, 64, 64},
        {"--box-cols", "C", "columns of a part-1 box", 1, 1024, 64, 64},
        {"--bulk-bytes", "B", "bytes per 1D bulk copy in part 4", 1, 65536, 32768, 32768},
        {"--mib", "N", "size of the part-5 sum in MiB", 1, 16384, 1024, 32},
        {"--chunk", "T", "16 KiB boxes per block in sum_tma (must divide 64 x --mib)", 1, 4096, 8, 8},
        {"--bug", "B", "exercise: 1 = wrong phase parity, 2 = expect_tx 16 bytes too many", 0, 2, 0, 0},
    };
    Cli cli = parse_cli(argc, argv,
                        "03_tma_load: TMA loads with tensor maps and mbarriers, out-of-bounds fill, 1D bulk\n"
                        "copies and a TMA read pipeline, each checked in full.",
                        opts, NUM_OPTS);
    const uint64_t rows = (uint64_t)cli.value[OPT_ROWS], cols = (uint64_t)cli.value[OPT_COLS];
    const uint32_t box_rows = (uint32_t)cli.value[OPT_BOX_ROWS], box_cols = (uint32_t)cli.value[OPT_BOX_COLS];
    const uint32_t bulk_bytes = (uint32_t)cli.value[OPT_BULK];
    const long long mib = cli.value[OPT_MIB];
    const int bug = (int)cli.value[OPT_BUG];
    const size_t sum_bytes = (size_t)mib << 20, sum_words = sum_bytes / 4;
    const uint32_t chunk = (uint32_t)cli.value[OPT_CHUNK];

    // Every rule before the GPU is touched. The address is not known yet;
    // cudaMalloc's is 256-byte aligned, so stand in an aligned one.
    {
        char msg[256];
        TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, rows, cols, cols * 4,
                                            box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
        if (tensor_map_rule_broken(&spec, msg, sizeof msg)) die_usage("%s", msg);
        if ((size_t)box_rows * box_cols * 4 > MAX_BOX_BYTES)
            die_usage("a box of %u x %u x 4 B = %u KiB does not fit this program's %d KiB of shared memory per box",
                      box_rows, box_cols, box_rows * box_cols * 4 >> 10, MAX_BOX_BYTES >> 10);
        if (bulk_copy_rule_broken(bulk_bytes, msg, sizeof msg)) die_usage("%s", msg);
        require_divisor("--bulk-bytes", bulk_bytes, 1u << 20, "bytes of the 1 MiB part-4 buffer");
        require_divisor("--chunk", chunk, sum_words / SUM_BOX_WORDS, "16 KiB boxes of the part-5 sum (64 per MiB)");
    }

    require_hopper();

    print_header("03_tma_load", "TMA loads: tensor maps, mbarriers, out-of-bounds fill, bulk copies");
    printf("problem: part 1 a %llu x %llu uint32 matrix in %u x %u boxes; part 4 bulk copies of %u B; part 5 a sum "
           "over %lld MiB%s\n",
           (unsigned long long)rows, (unsigned long long)cols, box_rows, box_cols, bulk_bytes, mib,
           bug == 1 ? "; BUG 1: wrong phase parity" : bug == 2 ? "; BUG 2: expect_tx 16 bytes too many" : "");

    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long* d_wrong = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_wrong, sizeof *d_wrong));

    // The part 1-2 matrix: position-coded, made on the host.
    const size_t mat_words = rows * cols;
    uint32_t* h_mat = (uint32_t*)malloc(mat_words * 4);
    if (!h_mat) die_usage("cannot allocate the %llu x %llu matrix on the host", (unsigned long long)rows,
                          (unsigned long long)cols);
    for (size_t i = 0; i < mat_words; ++i) h_mat[i] = (uint32_t)i;
    uint32_t* d_mat = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_mat, mat_words * 4));
    CUDA_CHECK(cudaMemcpyAsync(d_mat, h_mat, mat_words * 4, cudaMemcpyHostToDevice, s));

    // --- 1. tiling ------------------------------------------------------------
    // The tensor map, argument by argument: see tensor_spec_2d and the lesson.
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_mat, rows, cols, cols * 4, box_rows,
                                        box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap tile_map = make_tensor_map(&spec);
    const dim3 tile_grid((unsigned)((cols + box_cols - 1) / box_cols), (unsigned)((rows + box_rows - 1) / box_rows));
    const size_t box_bytes = (size_t)box_rows * box_cols * 4;
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tile_load, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(MAX_BOX_BYTES)));
    CUDA_CHECK(cudaMemsetAsync(d_wrong, 0, sizeof *d_wrong, s));
    tile_load<<<tile_grid, THREADS, tma_smem_bytes(box_bytes), s>>>(tile_map, rows, cols, box_rows, box_cols, bug, d_wrong);
    CHECK_LAUNCH();
    report_wrong("tiling", d_wrong, (size_t)tile_grid.x * tile_grid.y * box_rows * box_cols, s);

    // --- 2. reuse ---------------------------------------------------------------
    spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_mat, rows, cols, cols * 4, REUSE_BOX, REUSE_BOX,
                          CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap reuse_map = make_tensor_map(&spec);
    const int reuse_ctas = 8, reuse_tiles = 16;  // 8 CTAs x 16 consecutive boxes
    const size_t reuse_words = (size_t)reuse_ctas * reuse_tiles * REUSE_BOX * REUSE_BOX;
    CUDA_CHECK(cudaMemsetAsync(d_wrong, 0, sizeof *d_wrong, s));
    reuse_one_barrier<<<reuse_ctas, THREADS, tma_smem_bytes(REUSE_BOX * REUSE_BOX * 4), s>>>(reuse_map, rows, cols,
                                                                                      reuse_tiles, d_wrong);
    CHECK_LAUNCH();
    report_wrong("reuse_one_barrier", d_wrong, reuse_words, s);
    CUDA_CHECK(cudaMemsetAsync(d_wrong, 0, sizeof *d_wrong, s));
    reuse_two_barriers<<<reuse_ctas, THREADS, tma_smem_bytes(2 * REUSE_BOX * REUSE_BOX * 4), s>>>(reuse_map, rows, cols,
                                                                                           reuse_tiles, d_wrong);
    CHECK_LAUNCH();
    report_wrong("reuse_two_barriers", d_wrong, reuse_words, s);

    // --- 3. out of bounds --------------------------------------------------------
    {
        const uint64_t n = 100;
        const int32_t col0 = -8, row0 = 90;
        uint32_t *d_small = NULL, *d_out = NULL, h_out[OOB_BOX * OOB_BOX];
        CUDA_CHECK(cudaMalloc((void**)&d_small, n * n * 4));
        CUDA_CHECK(cudaMalloc((void**)&d_out, sizeof h_out));
        CUDA_CHECK(cudaMemcpyAsync(d_small, h_mat, n * n * 4, cudaMemcpyHostToDevice, s));  // words 0..9999
        spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_small, n, n, n * 4, OOB_BOX, OOB_BOX,
                              CU_TENSOR_MAP_SWIZZLE_NONE);
        const CUtensorMap oob_map = make_tensor_map(&spec);
        oob_load<<<1, THREADS, tma_smem_bytes(sizeof h_out), s>>>(oob_map, col0, row0, d_out);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        size_t in_wrong = 0, in_total = 0, out_wrong = 0, out_total = 0;
        for (int i = 0; i < OOB_BOX * OOB_BOX; ++i) {
            const int64_t r = row0 + i / OOB_BOX, c = col0 + i % OOB_BOX;
            const int inside = r >= 0 && c >= 0 && r < (int64_t)n && c < (int64_t)n;
            const uint32_t want = expected_word(r, c, n, n);
            in_total += inside;
            out_total += !inside;
            (inside ? in_wrong : out_wrong) += h_out[i] != want;
        }
        print_check_line("oob_inside", in_wrong, in_total);
        print_check_line("oob_outside_zero", out_wrong, out_total);
        CUDA_CHECK(cudaFree(d_small));
        CUDA_CHECK(cudaFree(d_out));
    }

    // The part 4-5 buffer: word i holds i.
    uint32_t* h_sum = (uint32_t*)malloc(sum_bytes);
    if (!h_sum) die_usage("--mib %lld: cannot allocate the host buffer", mib);
    for (size_t i = 0; i < sum_words; ++i) h_sum[i] = (uint32_t)i;
    uint32_t* d_sum = NULL;
    unsigned long long* d_total = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_sum, sum_bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_total, sizeof *d_total));
    CUDA_CHECK(cudaMemcpyAsync(d_sum, h_sum, sum_bytes, cudaMemcpyHostToDevice, s));
    // --- 4. 1D bulk copy ----------------------------------------------------------
    {
        const size_t bytes = sum_bytes < (1u << 20) ? sum_bytes : (1u << 20), words = bytes / 4;
        uint32_t *d_out = NULL, *h_out = (uint32_t*)malloc(bytes);
        CUDA_CHECK(cudaMalloc((void**)&d_out, bytes));
        poison_device(d_out, bytes, s);
        CUDA_CHECK(cudaFuncSetAttribute((const void*)bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)tma_smem_bytes(65536)));
        bulk_copy<<<(unsigned)(bytes / bulk_bytes), THREADS, tma_smem_bytes(bulk_bytes), s>>>(d_sum, d_out, bulk_bytes);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        check_words("bulk_load", h_out, h_sum, words < sum_words ? words : sum_words);
        CUDA_CHECK(cudaFree(d_out));
        free(h_out);
    }

    // --- 5. sums --------------------------------------------------------------------
    spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_sum, sum_words / SUM_COLS, SUM_COLS, SUM_COLS * 4,
                          SUM_BOX_ROWS, SUM_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap sum_map = make_tensor_map(&spec);
    const uint32_t nboxes = (uint32_t)(sum_words / SUM_BOX_WORDS);
    const size_t sum_smem = tma_smem_bytes((size_t)SUM_STAGES * SUM_BOX_WORDS * 4);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)sum_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sum_smem));
    SumJob ldg = {d_sum, NULL, d_total, (unsigned)(sum_words / 4 / (THREADS * SUM_VEC * SUM_LDG_ROUNDS)), 0, 0};
    SumJob tma = {d_sum, &sum_map, d_total, nboxes / chunk, sum_smem, chunk};
    const unsigned long long want_sum = (unsigned long long)sum_words * (sum_words - 1) / 2;
    const char* sum_names[2] = {"sum_ldg_uint4", "sum_tma_4stage"};
    SumJob* sum_jobs[2] = {&ldg, &tma};
    EnqueueFn sum_fns[2] = {enqueue_sum_ldg, enqueue_sum_tma};
    for (int k = 0; k < 2; ++k) {
        unsigned long long got = 0;
        sum_fns[k](sum_jobs[k], s);
        CUDA_CHECK(cudaMemcpyAsync(&got, d_total, sizeof got, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        print_check_line(sum_names[k], got != want_sum, 1);
        if (got != want_sum) printf("       got %llu want %llu\n", got, want_sum);
    }

    mbar_check_timeouts();  // parts 3-5 waited too

    // --- timing -----------------------------------------------------------------------
    print_gpu();
    printf("GPU    sum_tma: %u boxes of %d x %d uint32 per block, %d stages, %d blocks per SM\n", chunk, SUM_BOX_ROWS,
           SUM_COLS, SUM_STAGES, blocks_per_sm((const void*)sum_tma, THREADS, sum_smem));
    uint32_t* d_copy = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_copy, sum_bytes));
    measure_memcpy_reference(d_copy, d_sum, sum_bytes, &cli);
    for (int k = 0; k < 2; ++k)
        print_perf(sum_names[k], time_median_ms(sum_fns[k], sum_jobs[k], s, &cli), (double)sum_bytes);  // reads only
    mbar_check_timeouts();  // the timed runs waited too

    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(d_wrong));
    CUDA_CHECK(cudaFree(d_mat));
    CUDA_CHECK(cudaFree(d_sum));
    CUDA_CHECK(cudaFree(d_total));
    CUDA_CHECK(cudaFree(d_copy));
    free(h_mat);
    free(h_sum);
    return finish();
}
