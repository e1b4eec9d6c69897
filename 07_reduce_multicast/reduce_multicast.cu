// 07_reduce_multicast: two things the TMA does that a load or a store cannot:
// reduce a tile INTO global memory (store-reduce), and write one load into the
// shared memory of every CTA of a cluster (multicast). Each part is checked on
// every element, then timed against cudaMemcpy.
// Part A, store-reduce: 1 reduce_ops (the tensor form: every op on u32
// tiles), 2 bulk_reduce_ops (the 1D form), 3 split_k (f32: many CTAs add
// partial tiles into one tile set; TMA reduce against the coalesced
// atomicAdd, red.global.add.v4.f32 and one CTA's load-add-store, at 1 to 64
// contributors, and atomicAdd in a strided layout, a lesson about layout).
// Part B, clusters: 4 broadcast (every CTA needs the same tiles: cluster 1 to
// 16, with and without .multicast::cluster), 5 dsmem_ring (a bulk copy into
// a peer CTA's shared memory, completing on the peer's barrier).
// New since step 06: 07_reduce_multicast/tma_reduce.cuh, 07_reduce_multicast/cluster.cuh.
// SASS: make sass-07. Counters: make profile-07. Lesson: 07_reduce_multicast/README.md.
//
// Run: make run-07 [ARGS="--quick"], make check-07.
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "07_reduce_multicast/cluster.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"

#include <math.h>

// ===========================================================================
// Part A: store-reduce
// ===========================================================================
// A reduce tile is 64 x 64 elements of 4 bytes (16 KiB): one box, 256-byte
// rows (no swizzle: the threads write it row by row, 16 bytes each).
#define RT_ROWS 64
#define RT_COLS 64
#define RT_ELEMS (RT_ROWS * RT_COLS)
#define RT_BYTES (RT_ELEMS * 4)
#define RT_THREADS 256
#define RT_CHUNKS (RT_ELEMS / 4 / RT_THREADS)  // 16-byte chunks per thread per tile: 4

// ---- The values every contributor adds ------------------------------------
// Contributor k's word for element i of the output (row-major index): a
// hash of both, so a wrong position or a missing contributor changes sums.
static __host__ __device__ __forceinline__ uint32_t partial_word(uint32_t seed, uint32_t k, uint32_t i) {
    uint32_t h = i * 0x9E3779B1u ^ (k + seed * 0x632BE5ABu) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    return h ^ (h >> 12);
}

static __host__ __device__ __forceinline__ float bits_to_float(uint32_t w) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(w);
#else
    float f;
    memcpy(&f, &w, 4);
    return f;
#endif
}

// Its f32 value: a sign and 23 bits of mantissa at exponent -1, so every
// partial is +-[0.5, 1): a missing one moves a sum by at least 0.5, far more
// than any rounding error of the sum.
static __host__ __device__ __forceinline__ float partial_f32(uint32_t seed, uint32_t k, uint32_t i) {
    const uint32_t w = partial_word(seed, k, i);
    return bits_to_float((w & 0x80000000u) | 0x3F000000u | (w & 0x007FFFFFu));
}

// ---- Parts 1 and 2: every op, exactly, on u32 ------------------------------
// What contributor k reduces into element i with `op`, chosen so that every
// contributor shows in the result: add and xor get hashes; min and max
// hashes against a start of all ones / zero; and clears (or sets) one bit
// per contributor, a different bit for each; inc and dec count with a
// per-element bound b in 1..15 (inc: x >= b ? 0 : x + 1; dec: x == 0 or
// x > b ? b : x - 1, the same b from every contributor, so the count wraps
// at the same place whatever the order).
static __host__ __device__ __forceinline__ uint32_t op_source(ReduceOp op, uint32_t seed, uint32_t k,
                                                              uint32_t i) {
    const uint32_t h = partial_word(seed, 0xFFFFu, i);
    switch (op) {
    case RED_INC:
    case RED_DEC:
        return 1 + h % 15;
    case RED_AND:
        return ~(1u << ((k + h) % 32));
    case RED_OR:
        return 1u << ((k + h) % 32);
    default:
        return partial_word(seed, k, i);
    }
}

// The tensor form: contributor blockIdx.y writes its tile of sources and one
// thread reduces the box into the output, like a TMA store (step 04): fence
// by every writer, barrier, issue, commit, and wait with .read before the
// block exits (its shared memory is the source until the copy has read it).
#define OPS_ROWS 256
#define OPS_COLS 256
#define OPS_K 8  // contributors per tile

template <ReduceOp OP>
__global__ void __launch_bounds__(RT_THREADS)
    reduce_ops_tensor(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[RT_ELEMS];
    const uint32_t tiles_c = OPS_COLS / RT_COLS, k = blockIdx.y;
    const uint32_t r0 = blockIdx.x / tiles_c * RT_ROWS, c0 = blockIdx.x % tiles_c * RT_COLS;
    for (uint32_t e = threadIdx.x; e < RT_ELEMS; e += RT_THREADS)
        box[e] = op_source(OP, seed, k, (r0 + e / RT_COLS) * OPS_COLS + c0 + e % RT_COLS);
    SHADOW_WROTE(box, sizeof box);  // (the shadow build: these writes need the fence)
    fence_proxy_async_shared();     // these generic writes before the TMA's async-proxy read
    __syncthreads();
    if (threadIdx.x == 0) {
        // LAB-BEGIN: reduce the box into this block's output tile with the op OP (tma_reduce.cuh; the coordinates are a load's)
        tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);  // element type: the map's (u32)
        // LAB-END
        bulk_commit_group();
        bulk_wait_group_read<0>();  // the box has been read: the block may exit
    }
}

// The 1D form: no tensor map; the output is a flat array, and contributor k
// reduces one contiguous run of RT_ELEMS words into it.
template <ReduceOp OP>
__global__ void __launch_bounds__(RT_THREADS) reduce_ops_bulk(uint32_t* out, uint32_t seed) {
    __shared__ alignas(128) uint32_t run[RT_ELEMS];
    const uint32_t first = blockIdx.x * RT_ELEMS, k = blockIdx.y;
    for (uint32_t e = threadIdx.x; e < RT_ELEMS; e += RT_THREADS) run[e] = op_source(OP, seed, k, first + e);
    SHADOW_WROTE(run, sizeof run);
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_reduce<OP>(out + first, run, RT_BYTES);  // the type is uint32_t's: .u32 or .b32
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

// ---- Parts 1 and 2 (host): the reference and the launches ------------------
// What the output holds before the contributors: hashes for add and xor;
// for min, max, and, or the identity of the op (all ones or zero), so an
// element that no contributor reached still shows; a count in 0..19 for inc
// and dec (above some bounds b, so the first step wraps there).
static uint32_t op_init(ReduceOp op, uint32_t seed, uint32_t i) {
    switch (op) {
    case RED_MIN:
    case RED_AND:
        return 0xFFFFFFFFu;
    case RED_MAX:
    case RED_OR:
        return 0;
    case RED_INC:
    case RED_DEC:
        return partial_word(seed, 0xFFFEu, i) % 20;
    default:
        return seeded_word(seed, i);
    }
}

// One reduction step as the PTX ISA defines it for .u32 / .b32.
static uint32_t apply_op(ReduceOp op, uint32_t x, uint32_t v) {
    switch (op) {
    case RED_ADD:
        return x + v;
    case RED_MIN:
        return v < x ? v : x;
    case RED_MAX:
        return v > x ? v : x;
    case RED_INC:
        return x >= v ? 0 : x + 1;
    case RED_DEC:
        return x == 0 || x > v ? v : x - 1;
    case RED_AND:
        return x & v;
    case RED_OR:
        return x | v;
    default:
        return x ^ v;
    }
}

typedef void (*OpsTensorKernel)(CUtensorMap, uint32_t);
typedef void (*OpsBulkKernel)(uint32_t*, uint32_t);
static const OpsTensorKernel kOpsTensor[NUM_REDUCE_OPS] = {
    reduce_ops_tensor<RED_ADD>, reduce_ops_tensor<RED_MIN>, reduce_ops_tensor<RED_MAX>,
    reduce_ops_tensor<RED_INC>, reduce_ops_tensor<RED_DEC>, reduce_ops_tensor<RED_AND>,
    reduce_ops_tensor<RED_OR>,  reduce_ops_tensor<RED_XOR>};
static const OpsBulkKernel kOpsBulk[NUM_REDUCE_OPS] = {
    reduce_ops_bulk<RED_ADD>, reduce_ops_bulk<RED_MIN>, reduce_ops_bulk<RED_MAX>, reduce_ops_bulk<RED_INC>,
    reduce_ops_bulk<RED_DEC>, reduce_ops_bulk<RED_AND>, reduce_ops_bulk<RED_OR>,  reduce_ops_bulk<RED_XOR>};

// Parts 1 and 2: every op in both forms on a 256 x 256 u32 output, OPS_K
// contributors per tile, each result compared word for word.
static void part_reduce_ops(uint32_t seed, cudaStream_t s) {
    const size_t n = (size_t)OPS_ROWS * OPS_COLS;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    uint32_t* init = (uint32_t*)xmalloc(n * 4, "the reduce_ops input");
    uint32_t* want = (uint32_t*)xmalloc(n * 4, "the reduce_ops reference");
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, out, OPS_ROWS, OPS_COLS,
                                              OPS_COLS * 4, RT_ROWS, RT_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the reduce_ops output");
    const dim3 grid((unsigned)(n / RT_ELEMS), OPS_K);
    for (int form = 0; form < 2; ++form)
        for (int o = 0; o < NUM_REDUCE_OPS; ++o) {
            const ReduceOp op = (ReduceOp)o;
            char msg[256], name[32];
            if (reduce_rule_broken(op, spec.dtype, msg, sizeof msg)) die_internal("%s", msg);
            for (uint32_t i = 0; i < n; ++i) {
                init[i] = want[i] = op_init(op, seed, i);
                for (uint32_t k = 0; k < OPS_K; ++k)
                    want[i] = apply_op(op, want[i], op_source(op, seed, k, i));
            }
            CUDA_CHECK(cudaMemcpyAsync(out, init, n * 4, cudaMemcpyHostToDevice, s));
            snprintf(name, sizeof name, "%s_%s_u32", form ? "bulk" : "tensor", kReduceOpName[op]);
            if (form)
                kOpsBulk[op]<<<grid, RT_THREADS, 0, s>>>(out, seed);
            else
                kOpsTensor[op]<<<grid, RT_THREADS, 0, s>>>(map, seed);
            CHECK_LAUNCH();
            check_device(name, out, want, n, s);
        }
    free(init);
    free(want);
    CUDA_CHECK(cudaFree(out));
}

// ---- Part 3: split-K, f32 ----------------------------------------------------
// The output is rows x cols f32 in 64 x 64 tiles; each tile gets `k_per_tile`
// partial tiles, one per contributor, as the K slices of a split-K GEMM
// would produce them. Work item w is (tile w % tiles, contributor w / tiles):
// the blocks in flight at one time work on different tiles. Every method
// computes the same partials (partial_f32, element by element) and differs
// only in how it gets them into the output.
// Element e (row-major, 0 .. 4095) of tile `tile`: its index in the output.
static __device__ __forceinline__ uint32_t tile_element(uint32_t tile, uint32_t e, uint32_t cols) {
    const uint32_t tiles_c = cols / RT_COLS;
    return (tile / tiles_c * RT_ROWS + e / RT_COLS) * cols + tile % tiles_c * RT_COLS + e % RT_COLS;
}

// Thread t's share of a tile in 16-byte chunks: RT_CHUNKS chunks of 4
// consecutive floats, chunk q = j * RT_THREADS + t: a warp covers 512
// contiguous bytes (2 rows) per chunk.
static __device__ __forceinline__ uint32_t chunk_element(uint32_t tile, uint32_t q, uint32_t cols) {
    return tile_element(tile, q * 4, cols);
}

static __device__ __forceinline__ float4 partial_chunk(uint32_t seed, uint32_t k, uint32_t i) {
    return make_float4(partial_f32(seed, k, i), partial_f32(seed, k, i + 1), partial_f32(seed, k, i + 2),
                       partial_f32(seed, k, i + 3));
}

typedef struct {
    float* out;
    uint32_t cols, tiles, k_per_tile, seed;
} SplitK;

// The reduction 3a asks of its f32 map. The op is part of the opcode, the
// element type comes from the map at run time, so nothing refuses a pair the
// type table forbids at build time: check_arguments checks this one on the
// host, before the GPU is touched.
#define SPLITK_OP RED_ADD

// 3a. TMA store-reduce: the block writes a partial tile into one of two
// shared buffers (32 STS.128 warp instructions), fences, passes a barrier,
// and ONE thread reduces the 16 KiB tile into the output with one
// instruction. Two buffers so that filling one overlaps the reduce reading
// the other; before a buffer is rewritten, wait_group.read 1 says the reduce
// issued from it two items ago has read it (the newest group, from the other
// buffer, may still be reading). Before the block exits, wait_group.read 0:
// its shared memory must outlive the reads, not the writes (step 04).
__global__ void __launch_bounds__(RT_THREADS)
    splitk_tma_reduce(const __grid_constant__ CUtensorMap map, SplitK p) {
    uint8_t* base = tma_smem_base<128>();
    const uint32_t items = p.tiles * p.k_per_tile;
    for (uint32_t j = 0, w = blockIdx.x; w < items; ++j, w += gridDim.x) {
        float* buf = (float*)base + (j & 1) * RT_ELEMS;  // [64][64] floats, 128-byte aligned
        const uint32_t tile = w % p.tiles, k = w / p.tiles;
        if (threadIdx.x == 0) bulk_wait_group_read<1>();
        __syncthreads();  // buf is free
        for (uint32_t j4 = 0; j4 < RT_CHUNKS; ++j4) {
            const uint32_t q = j4 * RT_THREADS + threadIdx.x;
            ((float4*)buf)[q] = partial_chunk(p.seed, k, chunk_element(tile, q, p.cols));
        }
        SHADOW_WROTE(buf, RT_ELEMS * 4);
        fence_proxy_async_shared();
        __syncthreads();
        if (threadIdx.x == 0) {
            const uint32_t tiles_c = p.cols / RT_COLS;
            tma_reduce_2d<SPLITK_OP>(&map, (int32_t)(tile % tiles_c * RT_COLS),
                                     (int32_t)(tile / tiles_c * RT_ROWS), buf);
            bulk_commit_group();
        }
    }
    if (threadIdx.x == 0) bulk_wait_group_read<0>();  // every buffer read: the block may exit
}

// 3b. The baseline: atomicAdd, coalesced. Thread t adds element
// j * RT_THREADS + t of the tile (j = 0 .. 15), one float per instruction:
// a warp's 32 lanes add 32 consecutive floats, 128 contiguous bytes (4
// sectors), and a tile takes 4096 / 32 = 128 warp instructions. The result
// is unused, so the compiler emits the reduction REDG.E.ADD.F32, not the
// atomic that returns the old value.
__global__ void __launch_bounds__(RT_THREADS) splitk_atomic_add(SplitK p) {
    const uint32_t items = p.tiles * p.k_per_tile;
    for (uint32_t w = blockIdx.x; w < items; w += gridDim.x)
        for (uint32_t j = 0; j < RT_ELEMS / RT_THREADS; ++j) {
            const uint32_t i = tile_element(w % p.tiles, j * RT_THREADS + threadIdx.x, p.cols);
            atomicAdd(&p.out[i], partial_f32(p.seed, w / p.tiles, i));
        }
}

// 3c. red.global.add.v4.f32: thread t adds chunk j * RT_THREADS + t, four
// consecutive floats in one instruction: a warp covers 512 contiguous bytes
// (16 sectors), and a tile takes 4096 / 4 / 32 = 32 warp instructions.
__global__ void __launch_bounds__(RT_THREADS) splitk_red_v4(SplitK p) {
    const uint32_t items = p.tiles * p.k_per_tile;
    for (uint32_t w = blockIdx.x; w < items; w += gridDim.x)
        for (uint32_t j4 = 0; j4 < RT_CHUNKS; ++j4) {
            const uint32_t i = chunk_element(w % p.tiles, j4 * RT_THREADS + threadIdx.x, p.cols);
            const float4 v = partial_chunk(p.seed, w / p.tiles, i);
            red_add_v4_f32(&p.out[i], v.x, v.y, v.z, v.w);
        }
}

// 3d. No atomics at all: ONE block owns a tile and adds the contributions
// one after another, each a load, an add and a store of the running sum in
// global memory (L2), as a tile's owner would when its partials arrive one
// at a time. Nobody else writes the tile, so plain loads and stores are
// right; the price is that a tile's contributions no longer overlap.
// load_cg_v4_f32 / store_v4_f32 (tma_reduce.cuh) keep each round trip: plain
// C++ would let the compiler keep the sum in registers across the loop.
__global__ void __launch_bounds__(RT_THREADS) splitk_load_add_store(SplitK p) {
    for (uint32_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x)
        for (uint32_t k = 0; k < p.k_per_tile; ++k)
            for (uint32_t j4 = 0; j4 < RT_CHUNKS; ++j4) {
                const uint32_t i = chunk_element(tile, j4 * RT_THREADS + threadIdx.x, p.cols);
                const float4 v = partial_chunk(p.seed, k, i);
                float4 s = load_cg_v4_f32(&p.out[i]);
                s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
                store_v4_f32(&p.out[i], s);
            }
}

// 3e. A lesson about layout, not a method to use: atomicAdd on red_v4's
// chunk mapping. Thread t does four scalar atomics at t * 16 bytes (+ 0, 4,
// 8, 12): the 32 lanes of one warp instruction are 16 bytes apart, so it
// touches 512 bytes in 16 sectors for 128 bytes of data, and each sector is
// reached by 4 instructions (the same 128 warp instructions per tile as 3b).
__global__ void __launch_bounds__(RT_THREADS) splitk_atomic_add_strided(SplitK p) {
    const uint32_t items = p.tiles * p.k_per_tile;
    for (uint32_t w = blockIdx.x; w < items; w += gridDim.x)
        for (uint32_t j4 = 0; j4 < RT_CHUNKS; ++j4) {
            const uint32_t i = chunk_element(w % p.tiles, j4 * RT_THREADS + threadIdx.x, p.cols);
            const float4 v = partial_chunk(p.seed, w / p.tiles, i);
            atomicAdd(&p.out[i], v.x);
            atomicAdd(&p.out[i + 1], v.y);
            atomicAdd(&p.out[i + 2], v.z);
            atomicAdd(&p.out[i + 3], v.w);
        }
}

// ---- Part 3 (host): the exact reference, the bound, the runs ---------------
#define SPLITK_RUNS 4
static const uint32_t kContributors[SPLITK_RUNS] = {1, 4, 16, 64};
enum { SK_TMA_REDUCE, SK_ATOMIC_ADD, SK_RED_V4, SK_LOAD_ADD_STORE, SK_ATOMIC_ADD_STRIDED, SK_METHODS };
static const char* const kSplitKName[SK_METHODS] = {"tma_reduce", "atomicAdd", "red_v4", "load_add_store",
                                                    "atomicAdd_strided"};

typedef struct {
    SplitK p;
    CUtensorMap map;
    size_t n, smem;
    const float* init;  // host: the output before the contributors
    float* init_dev;
    int grid[SK_METHODS];
    double *ref, *bound;  // per element: the exact sum, and how far an f32 sum may be from it
    float* in_order;      // the f32 sum taken in contributor order, as one thread would
    cudaStream_t s;
    const Cli* cli;
} SplitKRun;

// The exact sum (each partial has 24 significant bits at exponent -1 and
// there are at most 65 terms: a double holds every sum exactly) and the
// bound on an f32 sum of the same n terms in ANY order: every addition
// rounds once, by at most 2^-24 of what it produced, so |error| <=
// (n - 1) * 2^-24 * sum |term| (recursive summation, to first order); we
// allow n * 2^-24 * sum |term|.
static void splitk_reference(SplitKRun* r) {
    const SplitK* p = &r->p;
    for (uint32_t i = 0; i < r->n; ++i) {
        double sum = r->init[i], mag = fabs(r->init[i]);
        float f = r->init[i];
        for (uint32_t k = 0; k < p->k_per_tile; ++k) {
            const float v = partial_f32(p->seed, k, i);
            sum += v, mag += fabs(v), f += v;
        }
        r->ref[i] = sum;
        r->bound[i] = (p->k_per_tile + 1) * ldexp(mag, -24);
        r->in_order[i] = f;
    }
}

// Every element within its bound (the order of the additions is the GPU's),
// and, as a TIME line since it changes from run to run, how many sums came
// out with other bits than the in-order sum.
static size_t check_splitk(const char* name, const SplitKRun* r) {
    enum { SHOW = 5 };
    const float* got = (const float*)read_back(r->p.out, r->n, r->s);
    size_t wrong = 0, differ = 0, shown[SHOW];
    for (size_t i = 0; i < r->n; ++i) {
        if (!(fabs((double)got[i] - r->ref[i]) <= r->bound[i])) {  // a NaN (poison) fails too
            if (wrong < SHOW) shown[wrong] = i;
            ++wrong;
        }
        differ += memcmp(&got[i], &r->in_order[i], 4) != 0;
    }
    const int failed = report_check(name, wrong, r->n);
    for (size_t j = 0; j < wrong && j < SHOW; ++j)
        printf("       [%zu] got %.9g want %.9g (bound %.2g)\n", shown[j], got[shown[j]], r->ref[shown[j]],
               r->bound[shown[j]]);
    if (!failed && r->p.k_per_tile == kContributors[SPLITK_RUNS - 1])
        record_time_line(
            "%-22s %zu of %zu sums differ in their bits from the in-order sum (all within bound)", name,
            differ, r->n);
    return failed && !wrong ? 1 : wrong;
}

static void launch_splitk(int method, const SplitKRun* r) {
    const int g = r->grid[method];
    switch (method) {
    case SK_TMA_REDUCE:
        splitk_tma_reduce<<<g, RT_THREADS, r->smem, r->s>>>(r->map, r->p);
        break;
    case SK_ATOMIC_ADD:
        splitk_atomic_add<<<g, RT_THREADS, 0, r->s>>>(r->p);
        break;
    case SK_RED_V4:
        splitk_red_v4<<<g, RT_THREADS, 0, r->s>>>(r->p);
        break;
    case SK_LOAD_ADD_STORE:
        splitk_load_add_store<<<g, RT_THREADS, 0, r->s>>>(r->p);
        break;
    default:
        splitk_atomic_add_strided<<<g, RT_THREADS, 0, r->s>>>(r->p);
        break;
    }
}

// Part 3: for each number of contributors, the reference once, then each
// method: the output reset to its start, one checked run, then the timed runs
// (which keep adding to the output: the time does not depend on its values).
// Bytes per run: the partial tiles delivered, k x rows x cols x 4.
static void part_split_k(uint32_t rows, uint32_t cols, uint32_t seed, const Cli* cli, cudaStream_t s) {
    SplitKRun r;
    memset(&r, 0, sizeof r);
    r.n = (size_t)rows * cols;
    r.s = s;
    r.cli = cli;
    r.p.cols = cols;
    r.p.tiles = (uint32_t)(r.n / RT_ELEMS);
    r.p.seed = seed;
    CUDA_CHECK(cudaMalloc(&r.p.out, r.n * 4));
    CUDA_CHECK(cudaMalloc(&r.init_dev, r.n * 4));
    float* init = (float*)xmalloc(r.n * 4, "the split-K start");
    fill_seeded_floats(init, r.n, seed);
    r.init = init;
    CUDA_CHECK(cudaMemcpyAsync(r.init_dev, init, r.n * 4, cudaMemcpyHostToDevice, s));
    r.ref = (double*)xmalloc(r.n * 8, "the split-K reference");
    r.bound = (double*)xmalloc(r.n * 8, "the split-K bounds");
    r.in_order = (float*)xmalloc(r.n * 4, "the in-order sums");
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, r.p.out, rows, cols, (uint64_t)cols * 4, RT_ROWS,
                       RT_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    r.map = make_tensor_map(&spec, "--rows, --cols");
    r.smem = tma_smem_bytes(2 * RT_BYTES);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)splitk_tma_reduce,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)r.smem));
    r.grid[SK_TMA_REDUCE] = persistent_grid((const void*)splitk_tma_reduce, RT_THREADS, r.smem);
    r.grid[SK_ATOMIC_ADD] = persistent_grid((const void*)splitk_atomic_add, RT_THREADS, 0);
    r.grid[SK_RED_V4] = persistent_grid((const void*)splitk_red_v4, RT_THREADS, 0);
    r.grid[SK_ATOMIC_ADD_STRIDED] = persistent_grid((const void*)splitk_atomic_add_strided, RT_THREADS, 0);
    const int owner = persistent_grid((const void*)splitk_load_add_store, RT_THREADS, 0);
    r.grid[SK_LOAD_ADD_STORE] = owner < (int)r.p.tiles ? owner : (int)r.p.tiles;
    for (int run = 0; run < SPLITK_RUNS; ++run) {
        r.p.k_per_tile = kContributors[run];
        splitk_reference(&r);
        for (int m = 0; m < SK_METHODS; ++m) {
            char name[40];
            snprintf(name, sizeof name, "%s_k%u", kSplitKName[m], r.p.k_per_tile);
            CUDA_CHECK(cudaMemcpyAsync(r.p.out, r.init_dev, r.n * 4, cudaMemcpyDeviceToDevice, s));
            CHECK_THEN_TIME(name, cli, s, 4.0 * r.n * r.p.k_per_tile, check_splitk(name, &r),
                            launch_splitk(m, &r));
        }
    }
    record_gpu_line(
        "split_k: %u tiles of 64 x 64; grids %d (tma_reduce), %d (atomicAdd), %d (red_v4), %d "
        "(load_add_store), %d (atomicAdd_strided) blocks of %d threads",
        r.p.tiles, r.grid[SK_TMA_REDUCE], r.grid[SK_ATOMIC_ADD], r.grid[SK_RED_V4], r.grid[SK_LOAD_ADD_STORE],
        r.grid[SK_ATOMIC_ADD_STRIDED], RT_THREADS);
    free(init);
    free(r.ref);
    free(r.bound);
    free(r.in_order);
    CUDA_CHECK(cudaFree(r.p.out));
    CUDA_CHECK(cudaFree(r.init_dev));
}

// ===========================================================================
// Part B: clusters
// ===========================================================================
// ---- Part 4: broadcast ------------------------------------------------------
// Every CTA needs ALL of a matrix B of `tiles` tiles of 64 x 64 u32, as
// every CTA of one column of a GEMM's C reads all of that column's panel of
// B (the operand shared along one axis; along the other it is A's row
// panel). B stays in L2 and every CTA reads it from there. What a CTA does with
// a tile is small (a checksum per row), so the time is the time to deliver B.
// Warp 0's elected lane is the producer: BC_STAGES stages of one tile each.
// Warps 1-4 consume: each row's sum of (2c + 1) * B[row][c] (mod 2^32),
// written out per (CTA, tile, row), so the check can tell which row of B a
// CTA really got.
// With .multicast::cluster, a tile is split into S slices of 64 / S rows
// (S = the cluster size); CTA rank r loads slice r once, for all S CTAs:
// - every CTA arms its OWN full barrier for the WHOLE tile (expect_tx 16 KiB),
//   since every slice lands in every CTA and completes on its barrier;
// - a stage may be refilled only when ALL S CTAs have consumed it: each
//   consumer warp arrives on the empty barrier of every CTA of the cluster
//   (count 4 x S), and a producer waits for its own;
// - the inits are published to the cluster (fence.mbarrier_init +
//   barrier.cluster) before any CTA issues, and a last barrier.cluster keeps
//   every CTA alive until no peer can still write into it or arrive on it.
// Without multicast (S = 1 for the protocol) each CTA loads every tile itself.
// Order: with stagger 0 every CTA reads tile 0, 1, 2, ... at about the same
// time; with stagger d, the CTAs of cluster q (of CTA c without multicast)
// start at tile q * d and wrap around, so different clusters read different
// tiles at any moment, as CTAs that drift apart would.
#define BT_ROWS 64
#define BT_COLS 64
#define BT_BYTES (BT_ROWS * BT_COLS * 4)
#define BC_STAGES 8
#define BC_CONSUMER_WARPS 4
#define BC_THREADS (32 + 32 * BC_CONSUMER_WARPS)
#define MAX_CLUSTER 16

template <bool MULTICAST>
__global__ void __launch_bounds__(BC_THREADS, 1)
    broadcast(const __grid_constant__ CUtensorMap map, uint32_t* sums, uint32_t tiles, uint32_t stagger) {
    __shared__ uint64_t full[BC_STAGES], empty[BC_STAGES];
    uint32_t* stages = (uint32_t*)tma_smem_base<128>();  // [BC_STAGES][64][64] u32
    const uint32_t S = MULTICAST ? cluster_nctarank() : 1, rank = MULTICAST ? cluster_ctarank() : 0;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t first = blockIdx.x / S * stagger % tiles;  // the tile this CTA (and its cluster) starts at
    if (threadIdx.x == 0) {
        for (int s = 0; s < BC_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], BC_CONSUMER_WARPS * S);
        }
        mbar_fence_init();  // release the inits to the cluster ...
    }
    cluster_sync();  // ... which acquires them before any CTA issues into, or arrives on, a peer
    if (warp == 0) {
        if (elect_one_sync()) {
            const uint32_t slice_rows = BT_ROWS / S, slice = rank;
            for (uint32_t t = 0; t < tiles; ++t) {
                const uint32_t s = t % BC_STAGES;
                if (t >= BC_STAGES && !MBAR_WAIT_CLUSTER(&empty[s], (t / BC_STAGES - 1) & 1)) break;
                mbar_arrive_expect_tx(&full[s], BT_BYTES);  // all S slices
                const uint32_t row0 = (first + t) % tiles * BT_ROWS;
                uint32_t* dst = stages + s * BT_ROWS * BT_COLS + rank * slice_rows * BT_COLS;
                // LAB-BEGIN: load this CTA's part of tile t: with MULTICAST, slice `slice` (slice_rows rows) into dst for every CTA of the cluster (the ctaMask); without, the whole tile into dst
                if (MULTICAST)
                    tma_load_2d_multicast(dst, &map, 0, (int32_t)(row0 + slice * slice_rows), &full[s],
                                          (uint16_t)((1u << S) - 1));
                else
                    tma_load_2d(dst, &map, 0, (int32_t)row0, &full[s]);
                // LAB-STUB: (void)dst, (void)row0, (void)slice;
                // LAB-END
            }
        }
        __syncwarp();
    } else {
        // Consumer thread c (0..127) sums half a row: row c / 2, columns
        // 32 h .. 32 h + 31 (h = c % 2), as 8 chunks of 16 bytes taken in a
        // rotated order, so that the 8 threads of a quarter warp (4 rows, 2
        // halves) always read 8 different bank groups: no conflicts.
        const uint32_t c = threadIdx.x - 32, row = c / 2, h = c % 2;
        for (uint32_t t = 0; t < tiles; ++t) {
            const uint32_t s = t % BC_STAGES;
            if (!MBAR_WAIT(&full[s], (t / BC_STAGES) & 1)) break;
            const uint32_t* tile = stages + s * BT_ROWS * BT_COLS;
            uint32_t sum = 0;
#pragma unroll
            for (uint32_t j = 0; j < 8; ++j) {
                const uint32_t col = (h * 8 + (j + row + 4 * h) % 8) * 4;
                const uint4 v = *(const uint4*)&tile[row * BT_COLS + col];
                sum += v.x * (2 * col + 1) + v.y * (2 * col + 3) + v.z * (2 * col + 5) + v.w * (2 * col + 7);
            }
            sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);  // the other half of the row
            if (h == 0) sums[((size_t)blockIdx.x * tiles + (first + t) % tiles) * BT_ROWS + row] = sum;
            __syncwarp();  // the whole warp has read the stage
            if (MULTICAST) {
                if (lane < S) mbar_arrive_remote(&empty[s], lane);  // one arrival on each CTA's barrier
            } else if (lane == 0) {
                mbar_arrive(&empty[s]);
            }
        }
        __syncwarp();  // a bounded wait that gave up may leave the lanes apart; .aligned needs them together
    }
    // No CTA leaves while a peer may still write into it or arrive on it.
    // barrier.cluster does not wait for asynchronous copies; what makes this
    // safe is that every consumer waited for its last full stage (every
    // multicast into this CTA has landed) before arriving here.
    cluster_sync();
}

// ---- Part 4 (host): the variants, the check, the cluster sizes -------------
typedef struct {
    const char* name;
    uint32_t cluster;  // CTAs per cluster; 1 = a plain launch
    bool multicast, staggered;
} BroadcastVariant;

static const BroadcastVariant kBroadcast[] = {
    {"broadcast_c1", 1, false, false},           {"broadcast_c2", 2, false, false},
    {"broadcast_c2_mc", 2, true, false},         {"broadcast_c4", 4, false, false},
    {"broadcast_c4_mc", 4, true, false},         {"broadcast_c8_mc", 8, true, false},
    {"broadcast_c16_mc", 16, true, false},       {"broadcast_c1_staggered", 1, false, true},
    {"broadcast_c4_mc_staggered", 4, true, true}};
#define NUM_BROADCAST (int)(sizeof kBroadcast / sizeof kBroadcast[0])

typedef struct {
    uint32_t *b, *sums;  // B: tiles x 64 rows x 64 u32; sums: ctas x tiles x 64
    uint32_t tiles, ctas, seed;
    size_t smem, nsums;
    uint32_t* row_sum;                 // host: each row's checksum, as the consumers compute it
    uint32_t* want;                    // host: row_sum for every CTA
    CUtensorMap map[MAX_CLUSTER + 1];  // map[S]: boxes of 64 / S rows (slices), S = 1, 2, 4, 8, 16
    cudaStream_t s;
} Broadcast;

static uint32_t b_word(uint32_t seed, size_t i) {
    return seeded_word(seed ^ 0xB0Bu, i);
}

// A launch of the broadcast kernel in clusters of `cluster` CTAs (1: no
// cluster attribute, a plain launch). `attr` must outlive the config.
static cudaLaunchConfig_t broadcast_config(const Broadcast* b, uint32_t cluster, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster;  // the grid must be a multiple of it
    attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cfg.gridDim = dim3(b->ctas);
    cfg.blockDim = dim3(BC_THREADS);
    cfg.dynamicSmemBytes = b->smem;
    cfg.stream = b->s;
    cfg.attrs = attr;
    cfg.numAttrs = cluster > 1;
    return cfg;
}

static void launch_broadcast(const Broadcast* b, const BroadcastVariant* v) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = broadcast_config(b, v->cluster, &attr);
    const CUtensorMap* map = &b->map[v->multicast ? v->cluster : 1];
    // staggered: the groups that read together (clusters with multicast,
    // else single CTAs) start evenly spread over the tiles
    const uint32_t groups = b->ctas / (v->multicast ? v->cluster : 1);
    const uint32_t stagger = v->staggered ? (b->tiles + groups - 1) / groups : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, v->multicast ? broadcast<true> : broadcast<false>, *map, b->sums,
                                  b->tiles, stagger));
}

// Every (CTA, tile, row) checksum. A wrong one is looked up among all rows
// of B: a row that holds ANOTHER row's data is a slice loaded into the wrong
// place (or twice).
static size_t check_broadcast(const char* name, const Broadcast* b) {
    const uint32_t* got = read_back(b->sums, b->nsums, b->s);
    const size_t wrong = check_words(name, got, b->want, b->nsums);
    if (!wrong) return 0;
    size_t moved = 0, unwritten = 0, other = 0;
    const uint32_t rows = b->tiles * BT_ROWS;
    for (size_t i = 0; i < b->nsums; ++i) {
        if (got[i] == b->want[i]) continue;
        uint32_t r = 0;
        while (r < rows && b->row_sum[r] != got[i]) ++r;
        if (got[i] == POISON_WORD)
            ++unwritten;
        else if (r < rows) {
            if (moved++ == 0)
                printf("       CTA %zu, tile %zu, row %zu holds the data of tile %u, row %u\n",
                       i / BT_ROWS / b->tiles, i / BT_ROWS % b->tiles, i % BT_ROWS, r / BT_ROWS, r % BT_ROWS);
        } else
            ++other;
    }
    printf(
        "       of the %zu wrong: %zu hold another row of B (a slice in the wrong place), %zu were never "
        "written, %zu match no row\n",
        wrong, moved, unwritten, other);
    return wrong;
}

// The cluster sizes this GPU can run with this kernel's shape, one GPU line:
// the largest it supports, and how many clusters of each size fit at once.
static void report_clusters(const Broadcast* b) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = broadcast_config(b, 1, &attr);
    int most = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&most, (const void*)broadcast<true>, &cfg));
    char fit[160] = "";
    for (uint32_t S = 1; S <= MAX_CLUSTER; S *= 2) {
        int clusters = 0;
        cfg = broadcast_config(b, S, &attr);
        cfg.numAttrs = 1;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, (const void*)broadcast<true>, &cfg));
        snprintf(fit + strlen(fit), sizeof fit - strlen(fit), "%s%d x %u", S > 1 ? ", " : "", clusters, S);
        if (clusters * S < b->ctas && S <= (uint32_t)most)
            record_gpu_line("broadcast: only %u of the %u CTAs run at once in clusters of %u", clusters * S,
                            b->ctas, S);
    }
    record_gpu_line(
        "broadcast: %u CTAs of %d threads, 1 per SM, %d stages of 16 KiB; largest cluster %d; at once: "
        "%s CTAs",
        b->ctas, BC_THREADS, BC_STAGES, most, fit);
}

// Part 4: B's rows, their checksums, one map per slice height, then every
// variant checked and timed. Bytes per run: what the CTAs receive, ctas x B.
static void part_broadcast(uint32_t tiles, uint32_t ctas, uint32_t seed, const Cli* cli, cudaStream_t s) {
    Broadcast b;
    memset(&b, 0, sizeof b);
    b.tiles = tiles, b.ctas = ctas, b.seed = seed, b.s = s;
    const size_t words = (size_t)tiles * BT_ROWS * BT_COLS;
    b.nsums = (size_t)ctas * tiles * BT_ROWS;
    CUDA_CHECK(cudaMalloc(&b.b, words * 4));
    CUDA_CHECK(cudaMalloc(&b.sums, b.nsums * 4));
    uint32_t* host_b = (uint32_t*)xmalloc(words * 4, "the broadcast matrix");
    b.row_sum = (uint32_t*)xmalloc((size_t)tiles * BT_ROWS * 4, "the row checksums");
    b.want = (uint32_t*)xmalloc(b.nsums * 4, "the broadcast reference");
    for (size_t r = 0; r < (size_t)tiles * BT_ROWS; ++r) {
        uint32_t sum = 0;
        for (uint32_t c = 0; c < BT_COLS; ++c) {
            host_b[r * BT_COLS + c] = b_word(seed, r * BT_COLS + c);
            sum += host_b[r * BT_COLS + c] * (2 * c + 1);
        }
        b.row_sum[r] = sum;
    }
    for (size_t i = 0; i < b.nsums; ++i) b.want[i] = b.row_sum[i % ((size_t)tiles * BT_ROWS)];
    CUDA_CHECK(cudaMemcpyAsync(b.b, host_b, words * 4, cudaMemcpyHostToDevice, s));
    for (uint32_t S = 1; S <= MAX_CLUSTER; S *= 2) {
        const TensorMapSpec spec =
            tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, b.b, (uint64_t)tiles * BT_ROWS, BT_COLS,
                           BT_COLS * 4, BT_ROWS / S, BT_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
        b.map[S] = make_tensor_map(&spec, "the broadcast matrix");
    }
    b.smem = smem_for_one_block_per_sm((const void*)broadcast<true>, BC_THREADS,
                                       tma_smem_bytes(BC_STAGES * BT_BYTES));
    smem_for_one_block_per_sm((const void*)broadcast<false>, BC_THREADS, b.smem);
    // Clusters of more than 8 are "non-portable": a kernel must opt in.
    CUDA_CHECK(cudaFuncSetAttribute((const void*)broadcast<true>,
                                    cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    report_clusters(&b);
    for (int v = 0; v < NUM_BROADCAST; ++v) {
        const BroadcastVariant* bv = &kBroadcast[v];
        poison_device(b.sums, b.nsums * 4, s);
        CHECK_THEN_TIME(bv->name, cli, s, 4.0 * words * ctas, check_broadcast(bv->name, &b),
                        launch_broadcast(&b, bv));
    }
    free(host_b);
    free(b.row_sum);
    free(b.want);
    CUDA_CHECK(cudaFree(b.b));
    CUDA_CHECK(cudaFree(b.sums));
}

// ---- Part 5: distributed shared memory -------------------------------------
// __cluster_dims__ fixes the cluster size at compile time (a plain <<<>>>
// launch then makes clusters of 4): the alternative to the launch attribute.
// Each CTA fills a buffer and copies it into the NEXT rank's shared memory
// with one bulk copy, which completes on the RECEIVER's barrier; the receiver
// arms it for the bytes after the start-up cluster barrier, possibly after
// they landed (the transaction count may go negative for a while). The
// sender learns nothing from the copy itself, so
// the last cluster barrier is what keeps its source alive until every
// receiver has its data.
#define DS_CLUSTER 4
#define DS_WORDS 4096
#define DS_CTAS 64

static __host__ __device__ __forceinline__ uint32_t dsmem_word(uint32_t seed, uint32_t cta, uint32_t i) {
    return partial_word(seed ^ 0x5EEDu, cta, i) & 0x7FFFFFFFu;  // never the poison word
}

__global__ void __cluster_dims__(DS_CLUSTER, 1, 1) __launch_bounds__(RT_THREADS)
    dsmem_ring(uint32_t* out, uint32_t seed) {
    __shared__ alignas(128) uint32_t send[DS_WORDS], recv[DS_WORDS];
    __shared__ uint64_t bar;
    const uint32_t rank = cluster_ctarank(), S = cluster_nctarank();
    for (uint32_t i = threadIdx.x; i < DS_WORDS; i += RT_THREADS) {
        send[i] = dsmem_word(seed, blockIdx.x, i);
        recv[i] = POISON_WORD;
    }
    SHADOW_WROTE(send, sizeof send);
    SHADOW_WROTE(recv, sizeof recv);
    fence_proxy_async_shared();  // send is read, recv written, by the async proxy
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    cluster_sync();  // inits and poison visible to the cluster before any copy
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, DS_WORDS * 4);  // what the previous rank will send here
        bulk_copy_to_peer(recv, send, DS_WORDS * 4, &bar, (rank + 1) % S);
    }
    MBAR_WAIT(&bar, 0);
    for (uint32_t i = threadIdx.x; i < DS_WORDS; i += RT_THREADS)
        out[(size_t)blockIdx.x * DS_WORDS + i] = recv[i];
    cluster_sync();  // every receiver has its data: the senders' buffers may go
}

// ---- Part 5 (host): the ring through distributed shared memory --------------
static void part_dsmem(uint32_t seed, cudaStream_t s) {
    const size_t n = (size_t)DS_CTAS * DS_WORDS;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    uint32_t* want = (uint32_t*)xmalloc(n * 4, "the dsmem reference");
    for (uint32_t cta = 0; cta < DS_CTAS; ++cta) {
        const uint32_t rank = cta % DS_CLUSTER, from = cta - rank + (rank + DS_CLUSTER - 1) % DS_CLUSTER;
        for (uint32_t i = 0; i < DS_WORDS; ++i) want[(size_t)cta * DS_WORDS + i] = dsmem_word(seed, from, i);
    }
    poison_device(out, n * 4, s);
    dsmem_ring<<<DS_CTAS, RT_THREADS, 0, s>>>(out, seed);  // clusters of DS_CLUSTER: __cluster_dims__
    CHECK_LAUNCH();
    check_device("dsmem_ring", out, want, n, s);
    free(want);
    CUDA_CHECK(cudaFree(out));
}

// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_TILES, OPT_CTAS, OPT_MIB, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the split-K output (f32, a multiple of 64)", 64, 16384, 512, 256},
    {"--cols", "C", "columns of the split-K output (a multiple of 64)", 64, 16384, 512, 256},
    {"--tiles", "T", "tiles of 64 x 64 u32 in the broadcast matrix", 1, 16384, 256, 16},
    {"--ctas", "N", "CTAs that each read the whole broadcast matrix (a multiple of 16)", 16, 4096, 112, 32},
    {"--mib", "M", "MiB of the cudaMemcpy reference copy", 1, 4096, 256, 8},
};
// Every rule before the GPU is touched, and the host memory.
static void check_arguments(const Cli* cli) {
    const long long rows = cli->value[OPT_ROWS], cols = cli->value[OPT_COLS], ctas = cli->value[OPT_CTAS];
    if (rows % RT_ROWS || cols % RT_COLS)
        die_usage("--rows %lld --cols %lld: both must be multiples of 64, the split-K tile", rows, cols);
    if (ctas % MAX_CLUSTER)
        die_usage("--ctas %lld is not a multiple of 16: the grid must divide into clusters of up to 16",
                  ctas);
    char msg[256];
    if (reduce_rule_broken(SPLITK_OP, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, msg, sizeof msg))
        die_internal("split_k asks for a .%s reduction on its f32 map: %s", kReduceOpName[SPLITK_OP], msg);
    const size_t n = (size_t)rows * cols, sums = (size_t)ctas * cli->value[OPT_TILES] * BT_ROWS;
    require_host_memory("--rows, --cols, --tiles, --ctas", n * 24 + sums * 8);
}

static const CliSpec kCli = {
    "07_reduce_multicast: TMA store-reduce (every op, and split-K against atomics) and cluster\n"
    "multicast (a broadcast operand, cluster 1 to 16), each checked on every element.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    print_header("07_reduce_multicast", "TMA store-reduce and cluster multicast");
    printf(
        "problem: reduce ops on %d x %d u32 (%d contributors); split-K %lld x %lld f32 in 64 x 64 tiles, 1 "
        "to %u "
        "contributors; broadcast %lld tiles of 64 x 64 u32 to %lld CTAs\n",
        OPS_ROWS, OPS_COLS, OPS_K, cli->value[OPT_ROWS], cli->value[OPT_COLS], kContributors[SPLITK_RUNS - 1],
        cli->value[OPT_TILES], cli->value[OPT_CTAS]);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t rows = (uint32_t)cli.value[OPT_ROWS], cols = (uint32_t)cli.value[OPT_COLS];
    const uint32_t tiles = (uint32_t)cli.value[OPT_TILES], ctas = (uint32_t)cli.value[OPT_CTAS];
    const size_t ref_bytes = (size_t)cli.value[OPT_MIB] << 20;
    require_hopper();
    require_device_memory(
        "--rows, --cols, --tiles, --ctas, --mib",
        (size_t)rows * cols * 8 + (size_t)tiles * BT_BYTES * (1 + ctas / BT_ROWS) + 2 * ref_bytes);
    print_problem(&cli);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *ref_src = NULL, *ref_dst = NULL;
    CUDA_CHECK(cudaMalloc(&ref_src, ref_bytes));
    CUDA_CHECK(cudaMalloc(&ref_dst, ref_bytes));
    measure_memcpy_reference(ref_dst, ref_src, ref_bytes, &cli, s);
    CUDA_CHECK(cudaFree(ref_src));
    CUDA_CHECK(cudaFree(ref_dst));
    part_reduce_ops(cli.seed, s);
    part_split_k(rows, cols, cli.seed, &cli, s);
    part_broadcast(tiles, ctas, cli.seed, &cli, s);
    part_dsmem(cli.seed, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
