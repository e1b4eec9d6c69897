// The same copy four ways: step 02's PTX wrapper and the C++ APIs a learner
// will write next, each one 16-byte copy global -> shared per thread, one
// group, a wait, then the value read back and stored. Not a program: make
// test compiles it for sm_90a and compares each twin's SASS with the PTX
// kernel's, instruction by instruction, registers aside
// (tests/test_twins.py). Lesson: 02_cp_async/README.md, "In CUDA C++".
#include <cuda/pipeline>
#include <cuda_pipeline.h>

#include "02_cp_async/cp_async.cuh"

#define THREADS 256

// The PTX: cp.async.cg.shared.global 16 bytes, commit_group, wait_group 0.
__global__ void copy_ptx(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    cp_async_cg16(&s[threadIdx.x], &in[i]);
    cp_async_commit_group();
    cp_async_wait_group<0>();
    out[i] = s[threadIdx.x];
}

// cuda_pipeline.h's primitives: the same three steps under C names.
__global__ void copy_pipeline_primitives(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    __pipeline_memcpy_async(&s[threadIdx.x], &in[i], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[i] = s[threadIdx.x];
}

// cuda::memcpy_async through a thread-scope cuda::pipeline, the size given as
// cuda::aligned_size_t<16>: the promise that both addresses and the size are
// 16-byte aligned is what lets it issue one 16-byte cp.async.
__global__ void copy_cuda_memcpy_async(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async((char*)&s[threadIdx.x], (const char*)&in[i], cuda::aligned_size_t<16>(16), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    out[i] = s[threadIdx.x];
    pipe.consumer_release();
}

// The trap: the same call with a plain byte count. From char pointers the
// library can prove no alignment, so it copies byte by byte, synchronously
// (16 LDG.E.U8, then STS): no cp.async at all, and nothing warns.
__global__ void copy_cuda_memcpy_async_unaligned(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async((char*)&s[threadIdx.x], (const char*)&in[i], 16, pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    out[i] = s[threadIdx.x];
    pipe.consumer_release();
}
