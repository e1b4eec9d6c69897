// What cuda::memcpy_async with a cuda::barrier becomes on sm_90a (CUDA 13.0's
// CCCL): compiled, never run; tests/test_sass.py::test_memcpy_async_with_a_barrier
// reads the machine code. One kernel per call: a block-wide copy from float4
// pointers with cuda::aligned_size_t<16>, the same with a plain sizeof, the same
// from char pointers with a plain size, and one thread's copy. Where the types
// or the size promise 16-byte alignment, the library issues a TMA bulk copy
// (cp.async.bulk, SASS UBLKCP) whose bytes the barrier counts as transactions;
// where nothing promises it, it falls back, silently, to a synchronous byte
// copy by the threads (LDG.E.U8 + STS): never cp.async (LDGSTS).
#include <cooperative_groups.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;

#define WORDS 256  // float4s: 4 KiB

template <int CALL>
__global__ void memcpy_async_barrier(const float4* __restrict__ src, float4* dst) {
    using Barrier = cuda::barrier<cuda::thread_scope_block>;
    __shared__ alignas(128) float4 tile[WORDS];
    __shared__ alignas(Barrier) unsigned char storage[sizeof(Barrier)];  // no dynamic init of __shared__
    Barrier& bar = *reinterpret_cast<Barrier*>(storage);
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    if (CALL == 0) cuda::memcpy_async(block, tile, src, cuda::aligned_size_t<16>(sizeof(tile)), bar);
    if (CALL == 1) cuda::memcpy_async(block, tile, src, sizeof(tile), bar);
    if (CALL == 2) cuda::memcpy_async(block, (char*)tile, (const char*)src, sizeof(tile), bar);
    if (CALL == 3 && block.thread_rank() == 0)
        cuda::memcpy_async(tile, src, cuda::aligned_size_t<16>(sizeof(tile)), bar);
    bar.arrive_and_wait();
    dst[threadIdx.x] = tile[threadIdx.x];
}
template __global__ void memcpy_async_barrier<0>(const float4*, float4*);  // block, aligned_size_t<16>
template __global__ void memcpy_async_barrier<1>(const float4*, float4*);  // block, float4*, sizeof
template __global__ void memcpy_async_barrier<2>(const float4*, float4*);  // block, char*, sizeof
template __global__ void memcpy_async_barrier<3>(const float4*, float4*);  // one thread, aligned_size_t<16>
