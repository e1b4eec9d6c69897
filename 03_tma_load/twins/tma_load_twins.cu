// Step 03's TMA load of one box, twice: through the step's PTX wrappers and
// through CCCL's cuda::ptx, which names each PTX instruction as a C++
// function (the same operands, as tag types and arguments). Not a program:
// make test compiles it for sm_90a and compares the two kernels' SASS
// instruction by instruction, registers aside (tests/test_twins.py). Both
// wait with the step's bounded wait, through one helper, so that the source
// line it reports is the same. Lesson: 03_tma_load/README.md, "In CUDA C++".
#include <cuda/ptx>

#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"

#define BOX_ROWS 32
#define BOX_COLS 32

static __device__ __forceinline__ void wait_for_the_box(uint64_t* bar) {
    MBAR_WAIT(bar, 0);
}

// The PTX: mbarrier.init + fence.mbarrier_init, arrive.expect_tx for the
// box's bytes, cp.async.bulk.tensor.2d, then the wait.
__global__ void load_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, &map, BOX_COLS * blockIdx.x, 0, &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_ROWS * BOX_COLS + threadIdx.x] = box[threadIdx.x];
}

// cuda::ptx: the same four instructions, each qualifier a tag argument
// (sem_release, scope_cta, space_shared; space_cluster for the destination
// of the tensor copy, as the PTX's .shared::cluster).
__global__ void load_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, &bar, sizeof box);
        const int32_t coords[2] = {(int32_t)(BOX_COLS * blockIdx.x), 0};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, box, &map, coords,
                                        &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_ROWS * BOX_COLS + threadIdx.x] = box[threadIdx.x];
}
