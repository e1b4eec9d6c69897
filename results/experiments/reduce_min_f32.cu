// What a .min store-reduce does on an f32 tensor map: the assembler cannot
// refuse it (the element type is in the map, not in the instruction), and
// the PTX ISA does not define it. Run once on the GPU; the output is in
// reduce_min_f32_<GPU>.txt beside this file. Step 07 refuses the case on the
// host (reduce_rule_broken) instead of launching it.
// Build (the steps' flags, into build/experiments/reduce_min_f32), from the repository root:
//   make experiments
#include "03_tma_load/tensor_map.h"
#include "07_reduce_multicast/tma_reduce.cuh"

template <ReduceOp OP>
__global__ void reduce_box(const __grid_constant__ CUtensorMap map) {
    __shared__ alignas(128) float box[64 * 64];
    for (int e = threadIdx.x; e < 64 * 64; e += blockDim.x) box[e] = 1.0f;
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_reduce_2d<OP>(&map, 0, 0, box);
        bulk_commit_group();
        bulk_wait_group<0>();
    }
}

int main(int argc, char**) {
    const int use_min = argc > 1;  // no argument: .add, the control; any argument: .min
    require_hopper();
    float* out = NULL;
    CUDA_CHECK(cudaMalloc(&out, 64 * 64 * 4));
    CUDA_CHECK(cudaMemset(out, 0, 64 * 64 * 4));
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, out, 64, 64, 256, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "a 64 x 64 f32 tile");
    if (use_min)
        reduce_box<RED_MIN><<<1, 256>>>(map);
    else
        reduce_box<RED_ADD><<<1, 256>>>(map);
    const cudaError_t launch = cudaGetLastError(), done = cudaDeviceSynchronize();
    printf("%s on an f32 map: launch %s, cudaDeviceSynchronize %s (%s)\n", use_min ? ".min" : ".add",
           cudaGetErrorName(launch), cudaGetErrorName(done), cudaGetErrorString(done));
    return done == cudaSuccess ? 0 : 1;
}
