// Step 04's TMA store of one box, twice: through the step's PTX wrappers and
// through CCCL's cuda::ptx. Not a program: make test compiles it for sm_90a
// and compares the two kernels' SASS instruction by instruction, registers
// aside (tests/test_twins.py). Lesson: 04_tma_store/README.md, "In CUDA C++".
#include <cuda/ptx>

#include "04_tma_store/tma_store.cuh"

#define BOX_ROWS 32
#define BOX_COLS 32

// The PTX: the threads write the box, each fences its generic writes before
// the async proxy reads them, the block syncs, and one thread stores the box
// (cp.async.bulk.tensor.2d.global.shared::cta), commits the bulk group and
// waits until the store has read shared memory.
__global__ void store_ptx(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_ROWS * BOX_COLS];
    for (uint32_t i = threadIdx.x; i < BOX_ROWS * BOX_COLS; i += blockDim.x) box[i] = seed + i;
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, BOX_COLS * blockIdx.x, 0, box);
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

// cuda::ptx: fence_proxy_async(space_shared), cp_async_bulk_tensor(space_global,
// space_shared, ...), cp_async_bulk_commit_group, cp_async_bulk_wait_group_read(n32_t<0>).
__global__ void store_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_ROWS * BOX_COLS];
    for (uint32_t i = threadIdx.x; i < BOX_ROWS * BOX_COLS; i += blockDim.x) box[i] = seed + i;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        const int32_t coords[2] = {(int32_t)(BOX_COLS * blockIdx.x), 0};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map, coords, box);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
}
