// The TMA's place in the SM (step 03): Hopper has one TMA unit per SM, which every thread of every CTA on
// that SM issues to. What that predicts, and this probe measures: boxes per microsecond per SM do not grow
// with more issuing threads on the SM once the unit is the bottleneck, and they do not depend on how many
// other SMs issue too (each SM has its own unit).
// One CTA per SM (the shared memory a CTA takes leaves room for no second one); W issuing threads per CTA
// (lane 0 of each of W warps, W = 1, 2, 4, 8), each with its own mbarrier and 16 KiB of shared memory
// (a 1 KiB slot per load: a box's destination must be 128-byte aligned, whatever its size): per phase it arms
// its barrier, issues 16 loads of one box, and waits; 256 phases. Boxes of 16 B (4 floats), 256 B (64 floats)
// and 1 KiB (4 x 64 floats) from a 4 MiB matrix that stays in L2, so the issue, not DRAM, is what is
// measured. On every SM, and on one SM alone. Each rate is the median of 5 launches (CUDA events). Output:
// tma_issue_rate_<GPU>.txt beside this file. Build: `make experiments`.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"

#define LOADS 16    // per phase and issuer
#define PHASES 256  // per issuer
#define SLOT_BYTES (16 * 1024)
#define COLS 1024  // the matrix: 1024 x 1024 floats, 4 MiB
#define ROWS 1024

__global__ void issue(const __grid_constant__ CUtensorMap map, int box_rows, int box_cols, uint32_t box_bytes,
                      uint32_t* sink) {
    __shared__ uint64_t bars[8];
    uint8_t* smem = tma_smem_base();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        mbar_init(&bars[warp], 1);
        mbar_fence_init();
    }
    __syncwarp();
    if (lane == 0) {
        uint8_t* mine = smem + warp * SLOT_BYTES;
        for (int p = 0; p < PHASES; ++p) {
            mbar_arrive_expect_tx(&bars[warp], LOADS * box_bytes);
            for (int k = 0; k < LOADS; ++k) {
                const int c0 = ((k + warp * LOADS) * box_cols) % COLS,
                          c1 = ((p + blockIdx.x) * box_rows) % ROWS;
                tma_load_2d(mine + k * (SLOT_BYTES / LOADS), &map, c0, c1, &bars[warp]);  // 128-B aligned
            }
            MBAR_WAIT(&bars[warp], p & 1);
        }
        if (*(volatile uint32_t*)mine == 0x12345678u) *sink = 1;  // practically never
    }
}

static int compare_floats_(const void* a, const void* b) {
    const float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

int main(void) {
    require_hopper();
    int sms = 0, smem_max = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    // All the shared memory a block may have, less its static part (the barriers): room for 8 issuers'
    // slots, and none for a second CTA on the SM.
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, issue));
    const size_t smem = (size_t)smem_max - attr.sharedSizeBytes;
    if (smem < tma_smem_bytes(8 * SLOT_BYTES))
        die_internal("needs %zu B of shared memory", tma_smem_bytes(8 * SLOT_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute(issue, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    float* m = NULL;
    uint32_t* sink = NULL;
    CUDA_CHECK(cudaMalloc(&m, (size_t)ROWS * COLS * 4));
    CUDA_CHECK(cudaMalloc(&sink, 4));
    CUDA_CHECK(cudaMemset(m, 0, (size_t)ROWS * COLS * 4));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    print_gpu();
    printf("one CTA per SM (%zu B of shared memory each); %d loads per phase, %d phases per issuer\n", smem,
           LOADS, PHASES);
    const int shapes[3][2] = {{1, 4}, {1, 64}, {4, 64}};  // box rows x floats per row
    for (int s = 0; s < 3; ++s) {
        const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, m, ROWS, COLS, COLS * 4,
                                                  shapes[s][0], shapes[s][1], CU_TENSOR_MAP_SWIZZLE_NONE);
        const CUtensorMap map = make_tensor_map(&spec, "the 4 MiB matrix");
        const uint32_t box_bytes = tensor_box_bytes(&spec);
        for (int all = 1; all >= 0; --all)
            for (int w = 1; w <= 8; w *= 2) {
                const int grid = all ? sms : 1;
                float ms[5];
                for (int r = 0; r < 6; ++r) {  // one warm-up, then 5
                    CUDA_CHECK(cudaEventRecord(e0));
                    issue<<<grid, 32 * w, smem>>>(map, shapes[s][0], shapes[s][1], box_bytes, sink);
                    CHECK_LAUNCH();
                    CUDA_CHECK(cudaEventRecord(e1));
                    CUDA_CHECK(cudaEventSynchronize(e1));
                    if (r) CUDA_CHECK(cudaEventElapsedTime(&ms[r - 1], e0, e1));
                }
                char hung[REPORT_CAP];
                if (take_wait_report(hung, sizeof hung)) die_internal("a wait hung: %s", hung);
                qsort(ms, 5, sizeof ms[0], compare_floats_);
                const double boxes_per_sm = (double)w * LOADS * PHASES, us = ms[2] * 1e3;
                printf(
                    "ISSUE box %5u B  %-9s %d issuer%s per SM: %7.1f boxes per us per SM (%6.1f GB/s per "
                    "SM)\n",
                    box_bytes, all ? "every SM," : "one SM,", w, w > 1 ? "s" : " ", boxes_per_sm / us,
                    boxes_per_sm * box_bytes / us / 1e3);
            }
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(sink));
    return 0;
}
