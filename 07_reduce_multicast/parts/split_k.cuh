// A part of 07_reduce_multicast/reduce_multicast.cu, whose main() runs the parts in order.
#pragma once
#include <math.h>

#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"
#include "07_reduce_multicast/parts/problem.cuh"

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
