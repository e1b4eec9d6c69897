// An experiment behind step 03's lesson, not a step: what limits TMA reads?
// Its output is section C of results/experiments/tma_read_NVIDIA_H200.txt. A ring sum (1 producer
// warp, 8 consumer warps, 8 stages, dynamic units of 16 boxes) loads 16 KiB per stage as tensor
// boxes of several shapes or as one 1D bulk copy. Build (the steps' flags) and run on a Hopper GPU, from
// the root:
//   make experiments
//   build/experiments/tma_read_boxes
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#define ST 8
#define W 4096
template <int MODE>  // 0 tensor, 1 bulk
__global__ void __launch_bounds__(384, 1)
    ring(const __grid_constant__ CUtensorMap map, const uint32_t* src, uint32_t nboxes, uint32_t box_rows,
         unsigned* counter, unsigned long long* total) {
    uint32_t* stage = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t full[ST], empty[ST];
    __shared__ uint32_t box_of[ST];
    if (threadIdx.x == 0) {
        for (int s = 0; s < ST; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 8);
        }
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        if (threadIdx.x < 32 && elect_one_sync()) {
            Schedule sc = make_schedule(SCHED_DYNAMIC, 16, nboxes, counter);
            for (uint32_t i = 0;; ++i) {
                const uint32_t s = i % ST, p = i / ST;
                if (!MBAR_WAIT(&empty[s], (p & 1) ^ 1)) break;
                const uint32_t box = next_box(&sc, i);
                box_of[s] = box;
                if (box == nboxes) {
                    mbar_arrive(&full[s]);
                    break;
                }
                mbar_arrive_expect_tx(&full[s], W * 4);
                if (MODE == 0)
                    tma_load_2d(stage + s * W, &map, 0, (int32_t)(box * box_rows), &full[s]);
                else
                    bulk_load(stage + s * W, src + (size_t)box * W, W * 4, &full[s]);
            }
        }
        return;
    }
    const uint32_t c = threadIdx.x - 128, lane = threadIdx.x % 32;
    unsigned long long sum = 0;
    for (uint32_t i = 0;; ++i) {
        const uint32_t s = i % ST, p = i / ST;
        if (!MBAR_WAIT(&full[s], p & 1)) break;
        if (__shfl_sync(~0u, lane == 0 ? box_of[s] : 0u, 0) == nboxes) break;
        const uint4* v = (const uint4*)(stage + s * W);
        for (uint32_t j = c; j < W / 4; j += 256) {
            uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty[s]);
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(~0u, sum, o);
    if (lane == 0) atomicAdd(total, sum);
}
int main() {
    require_hopper();
    const size_t bytes = 1ull << 30, words = bytes / 4;
    uint32_t* h = (uint32_t*)xmalloc(bytes, "h");
    for (size_t i = 0; i < words; ++i) h[i] = (uint32_t)i;
    uint32_t* d;
    unsigned* cnt;
    unsigned long long* tot;
    void* cp;
    CUDA_CHECK(cudaMalloc(&d, bytes));
    CUDA_CHECK(cudaMalloc(&cp, bytes));
    CUDA_CHECK(cudaMalloc(&cnt, 4));
    CUDA_CHECK(cudaMalloc(&tot, 8));
    CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    Cli cli;
    memset(&cli, 0, sizeof cli);
    cli.reps = 20;
    cli.warmup = 3;
    measure_memcpy_reference(cp, d, bytes, &cli, s);
    const unsigned long long want = (unsigned long long)words * (words - 1) / 2;
    const size_t smem = tma_smem_bytes(ST * W * 4);
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)ring<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)ring<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const uint32_t shapes[5][2] = {{16, 256}, {64, 64}, {128, 32}, {256, 16}, {32, 128}};
    for (int k = 0; k < 6; ++k) {
        const int mode = k == 5;
        const uint32_t rows = mode ? 16 : shapes[k][0], cols = mode ? 256 : shapes[k][1];
        TensorMapSpec sp = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d, words / cols, cols, cols * 4,
                                          rows, cols, CU_TENSOR_MAP_SWIZZLE_NONE);
        CUtensorMap map = make_tensor_map(&sp, "m");
        char name[64];
        snprintf(name, sizeof name, mode ? "ring_bulk_16KiB" : "ring_tensor_%ux%u", rows, cols);
        for (Timer t = timer_begin(&cli, s, name, (double)bytes); timer_next(&t);) {
            CUDA_CHECK(cudaMemsetAsync(cnt, 0, 4, s));
            CUDA_CHECK(cudaMemsetAsync(tot, 0, 8, s));
            if (mode)
                ring<1><<<sm_count(), 384, smem, s>>>(map, d, (uint32_t)(words / W), rows, cnt, tot);
            else
                ring<0><<<sm_count(), 384, smem, s>>>(map, d, (uint32_t)(words / W), rows, cnt, tot);
            CHECK_LAUNCH();
        }
        unsigned long long got;
        CUDA_CHECK(cudaMemcpy(&got, tot, 8, cudaMemcpyDeviceToHost));
        check_value(name, got, want);
    }
    return finish();
}
