// Where a tensor map lives (step 03's "Passing a map", step 08): the same TMA loads through one map kept
// in four places, timed.
//   param     a `const __grid_constant__ CUtensorMap` kernel parameter (what the steps do)
//   constant  a `__constant__ CUtensorMap`, written with cudaMemcpyToSymbol
//   global    128 bytes of global memory written with cudaMemcpy; each block's issuing thread first runs
//             fence.proxy.tensormap::generic.acquire.sys on it (the host wrote it)
//   global+pf the same, then prefetch.tensormap
// Two workloads per place:
//   A. one 64 x 64 float box (16 KiB) per block over a 1 GiB matrix (65536 blocks, step 03's sum_tma
//      shape): the map is read by every block, once; GB/s of the whole launch, median of 7.
//   B. one thread loading the same 4 x 64 float box (1 KiB, in L2) 20000 times in a row, each load
//      waited for: ns per round trip, median of 5 (the map's fetch, if the TMA does not keep it).
// Output: map_location_<GPU>.txt beside this file. Build: `make experiments`.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"

enum Where { PARAM, CONSTANT, GLOBAL, GLOBAL_PREFETCH };
static const char* const where_name[] = {"param", "constant", "global", "global+pf"};

__constant__ CUtensorMap c_map;

template <int WHERE>
static __device__ __forceinline__ const CUtensorMap* the_map(const CUtensorMap* param,
                                                             const CUtensorMap* global) {
    if (WHERE == PARAM) return param;
    if (WHERE == CONSTANT) return &c_map;  // a generic address into the constant bank: the TMA accepts it
    tmap_acquire_sys(global);              // the host wrote it: acquire before the first copy
    if (WHERE == GLOBAL_PREFETCH) tmap_prefetch(global);
    return global;
}

#define COLS 4096  // floats per matrix row

template <int WHERE>
__global__ void box_per_block(const __grid_constant__ CUtensorMap pmap, const CUtensorMap* gmap,
                              uint32_t* sink) {
    __shared__ alignas(128) float box[64 * 64];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const CUtensorMap* map = the_map<WHERE>(&pmap, gmap);
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, map, (blockIdx.x % (COLS / 64)) * 64, (blockIdx.x / (COLS / 64)) * 64, &bar);
    }
    MBAR_WAIT(&bar, 0);
    uint32_t x = 0;
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) x ^= __float_as_uint(box[i]);
    if (x == 0x12345678u) *sink = x;  // practically never: the box is read, nothing written
}

template <int WHERE>
__global__ void round_trips(const __grid_constant__ CUtensorMap pmap, const CUtensorMap* gmap, int n,
                            unsigned long long* ns) {
    __shared__ alignas(128) float box[4 * 64];
    __shared__ uint64_t bar;
    mbar_init(&bar, 1);
    mbar_fence_init();
    const CUtensorMap* map = the_map<WHERE>(&pmap, gmap);
    const uint64_t t0 = globaltimer_ns();
    for (int i = 0; i < n; ++i) {
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, map, 0, 0, &bar);
        MBAR_WAIT(&bar, i & 1);
    }
    *ns = globaltimer_ns() - t0;
}

static int compare_floats_(const void* a, const void* b) {
    const float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

template <int WHERE>
static void measure(const CUtensorMap& big, const CUtensorMap& small, CUtensorMap* gbig, CUtensorMap* gsmall,
                    int blocks, double bytes, uint32_t* sink, unsigned long long* ns) {
    // The constant and global copies hold the map this workload uses.
    CUDA_CHECK(cudaMemcpyToSymbol(c_map, &big, sizeof big));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    float a[7];
    for (int r = 0; r < 8; ++r) {  // one warm-up, then 7
        CUDA_CHECK(cudaEventRecord(e0));
        box_per_block<WHERE><<<blocks, 128>>>(big, gbig, sink);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        if (r) CUDA_CHECK(cudaEventElapsedTime(&a[r - 1], e0, e1));
    }
    qsort(a, 7, sizeof a[0], compare_floats_);
    CUDA_CHECK(cudaMemcpyToSymbol(c_map, &small, sizeof small));
    const int n = 20000;
    float b[5];
    for (int r = 0; r < 6; ++r) {  // one warm-up, then 5
        round_trips<WHERE><<<1, 1>>>(small, gsmall, n, ns);
        CHECK_LAUNCH();
        unsigned long long t = 0;
        CUDA_CHECK(cudaMemcpy(&t, ns, 8, cudaMemcpyDeviceToHost));
        if (r) b[r - 1] = (float)t / n;
    }
    qsort(b, 5, sizeof b[0], compare_floats_);
    char hung[REPORT_CAP];
    if (take_wait_report(hung, sizeof hung)) die_internal("a wait hung: %s", hung);
    printf(
        "MAP %-10s A: one 16 KiB box per block, 1 GiB: %.3f ms (%6.0f GB/s)   B: %6.1f ns per 1 KiB round "
        "trip\n",
        where_name[WHERE], a[3], bytes / (a[3] * 1e-3) / 1e9, b[2]);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
}

int main(void) {
    require_hopper();
    const size_t bytes = (size_t)1 << 30, rows = bytes / (COLS * 4);
    require_device_memory("the 1 GiB matrix", bytes);
    float* m = NULL;
    CUtensorMap* gmaps = NULL;  // [0] the 1 GiB map, [1] the small box's map: 128-byte aligned (cudaMalloc)
    uint32_t* sink = NULL;
    unsigned long long* ns = NULL;
    CUDA_CHECK(cudaMalloc(&m, bytes));
    CUDA_CHECK(cudaMalloc(&gmaps, 2 * sizeof(CUtensorMap)));
    CUDA_CHECK(cudaMalloc(&sink, 4));
    CUDA_CHECK(cudaMalloc(&ns, 8));
    CUDA_CHECK(cudaMemset(m, 0x3f, bytes));
    const TensorMapSpec sbig = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, m, rows, COLS, COLS * 4, 64,
                                              64, CU_TENSOR_MAP_SWIZZLE_NONE);
    const TensorMapSpec ssmall = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, m, rows, COLS, COLS * 4, 4,
                                                64, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap big = make_tensor_map(&sbig, "the 1 GiB matrix in 64 x 64 boxes");
    const CUtensorMap small = make_tensor_map(&ssmall, "the 1 GiB matrix in 4 x 64 boxes");
    CUDA_CHECK(cudaMemcpy(&gmaps[0], &big, sizeof big, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(&gmaps[1], &small, sizeof small, cudaMemcpyHostToDevice));
    print_gpu();
    const int blocks = (int)(rows / 64 * (COLS / 64));
    // Each place twice (the second pass shows the spread); the constant bank last: if the TMA refused a
    // map there, the error would end the program, after the other places were measured.
    for (int rep = 0; rep < 2; ++rep) {
        measure<PARAM>(big, small, &gmaps[0], &gmaps[1], blocks, (double)bytes, sink, ns);
        measure<GLOBAL>(big, small, &gmaps[0], &gmaps[1], blocks, (double)bytes, sink, ns);
        measure<GLOBAL_PREFETCH>(big, small, &gmaps[0], &gmaps[1], blocks, (double)bytes, sink, ns);
    }
    for (int rep = 0; rep < 2; ++rep)
        measure<CONSTANT>(big, small, &gmaps[0], &gmaps[1], blocks, (double)bytes, sink, ns);
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(gmaps));
    CUDA_CHECK(cudaFree(sink));
    CUDA_CHECK(cudaFree(ns));
    return 0;
}
