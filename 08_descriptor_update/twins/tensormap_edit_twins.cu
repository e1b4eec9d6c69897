// Step 08's retarget of a tensor map, twice: through the step's PTX wrappers
// and through CCCL's cuda::ptx. One warp copies a map into shared memory,
// one lane replaces its address, dimension 0 and row stride, the warp copies
// it to global memory with the release fence built in, and a reader acquires
// it. Not a program: make test compiles it for sm_90a and compares the two
// kernels' SASS instruction by instruction, registers aside
// (tests/test_twins.py). Lesson: 08_descriptor_update/README.md, "In CUDA C++".
#include <cuda/ptx>

#include "08_descriptor_update/tensormap_edit.cuh"

// The PTX: tensormap.replace (address, global_dim 0, global_stride 0),
// tensormap.cp_fenceproxy (copy + release, .sync.aligned: the whole warp),
// fence.proxy.tensormap::generic.acquire.gpu.
__global__ void retarget_ptx(const __grid_constant__ CUtensorMap src, CUtensorMap* slot, const float* base,
                             uint32_t cols, uint64_t row_bytes) {
    __shared__ alignas(128) CUtensorMap edit;
    if (threadIdx.x == 0) edit = src;
    __syncwarp();
    if (threadIdx.x == 0) {
        tmap_replace_address(&edit, base);
        tmap_replace_dim<0>(&edit, cols);
        tmap_replace_stride<0>(&edit, row_bytes);
    }
    __syncwarp();
    tmap_cp_fenceproxy(slot, &edit);
    tmap_acquire_gpu(slot);
}

// cuda::ptx: tensormap_replace_global_address / _global_dim / _global_stride
// (space_shared, the ordinal as n32_t), tensormap_cp_fenceproxy(sem_release,
// scope_gpu, ...), fence_proxy_tensormap_generic(sem_acquire, scope_gpu, ...).
__global__ void retarget_cuda_ptx(const __grid_constant__ CUtensorMap src, CUtensorMap* slot,
                                  const float* base, uint32_t cols, uint64_t row_bytes) {
    __shared__ alignas(128) CUtensorMap edit;
    if (threadIdx.x == 0) edit = src;
    __syncwarp();
    if (threadIdx.x == 0) {
        cuda::ptx::tensormap_replace_global_address(cuda::ptx::space_shared, &edit, (uint64_t)base);
        cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_shared, &edit, cuda::ptx::n32_t<0>(), cols);
        cuda::ptx::tensormap_replace_global_stride(cuda::ptx::space_shared, &edit, cuda::ptx::n32_t<0>(),
                                                   row_bytes);
    }
    __syncwarp();
    cuda::ptx::tensormap_cp_fenceproxy(cuda::ptx::sem_release, cuda::ptx::scope_gpu, slot, &edit,
                                       cuda::ptx::n32_t<128>());
    cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu, slot,
                                             cuda::ptx::n32_t<128>());
}
