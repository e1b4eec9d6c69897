// What cuda::memcpy_async with a cuda::barrier becomes on sm_90a (CUDA 13.0's
// CCCL): compiled, never run; tests/test_sass.py::test_memcpy_async_with_a_barrier
// reads the machine code. One kernel per call. The alignment the call promises,
// by its pointers' type or a cuda::aligned_size_t, whichever is larger, decides:
//   16 B  a TMA bulk copy (cp.async.bulk, SASS UBLKCP) whose bytes the barrier
//         counts as transactions: calls 0, 1, 3 (block-wide or one thread's),
//         8 (a warp's), 9 (each thread its own 16 bytes);
//   8 B   cp.async of 8 bytes (LDGSTS.E.64), each thread's copies tracked by the
//         barrier (cp.async.mbarrier.arrive: ARRIVES.LDGSTSBAR): calls 4
//         (float2 pointers) and 6 (char pointers, aligned_size_t<8>);
//   4 B   the same with 4-byte cp.async (LDGSTS.E): calls 5 (float pointers)
//         and 7 (char pointers, aligned_size_t<4>);
//   1 B   nothing promised (char pointers, a plain size): a synchronous byte
//         copy by the threads (LDG.E.U8 + STS), call 2.
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
    if (CALL == 4) cuda::memcpy_async(block, (float2*)tile, (const float2*)src, sizeof(tile), bar);
    if (CALL == 5) cuda::memcpy_async(block, (float*)tile, (const float*)src, sizeof(tile), bar);
    if (CALL == 6)
        cuda::memcpy_async(block, (char*)tile, (const char*)src, cuda::aligned_size_t<8>(sizeof(tile)), bar);
    if (CALL == 7)
        cuda::memcpy_async(block, (char*)tile, (const char*)src, cuda::aligned_size_t<4>(sizeof(tile)), bar);
    if (CALL == 8 && block.thread_rank() < 32)
        cuda::memcpy_async(cg::tiled_partition<32>(block), tile, src, cuda::aligned_size_t<16>(sizeof(tile)),
                           bar);
    if (CALL == 9)
        cuda::memcpy_async(&tile[threadIdx.x], &src[threadIdx.x], cuda::aligned_size_t<16>(16), bar);
    bar.arrive_and_wait();
    dst[threadIdx.x] = tile[threadIdx.x];
}
template __global__ void memcpy_async_barrier<0>(const float4*, float4*);  // block, aligned_size_t<16>
template __global__ void memcpy_async_barrier<1>(const float4*, float4*);  // block, float4*, sizeof
template __global__ void memcpy_async_barrier<2>(const float4*, float4*);  // block, char*, sizeof
template __global__ void memcpy_async_barrier<3>(const float4*, float4*);  // one thread, aligned_size_t<16>
template __global__ void memcpy_async_barrier<4>(const float4*, float4*);  // block, float2*, sizeof
template __global__ void memcpy_async_barrier<5>(const float4*, float4*);  // block, float*, sizeof
template __global__ void memcpy_async_barrier<6>(const float4*, float4*);  // block, char*, aligned_size_t<8>
template __global__ void memcpy_async_barrier<7>(const float4*, float4*);  // block, char*, aligned_size_t<4>
template __global__ void memcpy_async_barrier<8>(const float4*, float4*);  // a warp, aligned_size_t<16>
template __global__ void memcpy_async_barrier<9>(const float4*, float4*);  // each thread its 16 B
