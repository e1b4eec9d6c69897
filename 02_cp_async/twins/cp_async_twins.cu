// 02_cp_async/twins: step 02's cp.async through the C++ APIs a learner will
// write next. Each kernel copies 16 bytes per thread global -> shared in one
// group, waits, and stores the value back: the PTX wrapper, cuda_pipeline.h's
// primitives, cuda::memcpy_async on a cuda::pipeline (with and without
// cuda::aligned_size_t), and cooperative groups. This program checks that
// each copies every element; make test compiles it for sm_90a and compares
// each twin's SASS with the PTX kernel's, instruction by instruction,
// registers aside (tests/test_twins.py). Lesson: 02_cp_async/twins/README.md.
//
// Run: make check-02 (the step and its twins).
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

#include "02_cp_async/cp_async.cuh"

namespace cg = cooperative_groups;

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

// Typed pointers need no promise: from float4 pointers the library knows
// the 16-byte alignment of both addresses (alignof(float4)), so a plain
// sizeof is enough for the same one 16-byte cp.async.
__global__ void copy_cuda_memcpy_async_typed(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&s[threadIdx.x], &in[i], sizeof(float4), pipe);
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

// Cooperative groups: the whole block copies its 4 KiB with one call, and
// cg::wait waits for the block's copies AND syncs the block. The same
// LDGSTS.E.BYPASS.128, inside a loop over the block's threads (the library
// cannot assume one 16-byte piece per thread), and a BAR.SYNC after the wait.
__global__ void copy_cooperative_groups(const float4* in, float4* out) {
    __shared__ float4 s[THREADS];
    const size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, s, &in[(size_t)blockIdx.x * THREADS], cuda::aligned_size_t<16>(sizeof s));
    cg::wait(block);
    out[i] = s[threadIdx.x];
}

// ---- The run: every twin copies the same seeded array; all of it is compared.
typedef void (*CopyKernel)(const float4*, float4*);
static const struct {
    const char* name;
    CopyKernel kernel;
} kTwins[] = {
    {"copy_ptx", copy_ptx},
    {"copy_pipeline_primitives", copy_pipeline_primitives},
    {"copy_cuda_memcpy_async", copy_cuda_memcpy_async},
    {"copy_cuda_memcpy_async_typed", copy_cuda_memcpy_async_typed},
    {"copy_cuda_memcpy_async_unaligned", copy_cuda_memcpy_async_unaligned},
    {"copy_cooperative_groups", copy_cooperative_groups},
};

enum { OPT_MIB, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--mib", "N", "size of the copy in MiB", 1, 4096, 256, 4},
};
static void check_arguments(const Cli* cli) {
    require_host_memory("--mib", 2 * ((size_t)cli->value[OPT_MIB] << 20));
}
static const CliSpec kCli = {
    "02_cp_async/twins: step 02's 16-byte cp.async written with cuda_pipeline.h, cuda::memcpy_async\n"
    "and cooperative groups; every copy checked in full (the SASS comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const size_t bytes = (size_t)cli.value[OPT_MIB] << 20, words = bytes / 4,
                 blocks = bytes / sizeof(float4) / THREADS;
    require_hopper();
    require_device_memory("--mib", 2 * bytes);
    print_header("02_cp_async/twins",
                 "cp.async through cuda_pipeline.h, cuda::memcpy_async, cooperative groups");
    printf(
        "problem: a copy of %lld MiB, 16 bytes per thread, %d threads per block, each twin checked in full\n",
        cli.value[OPT_MIB], THREADS);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the input");
    fill_seeded_words(want, words, cli.seed);
    float4 *in, *out;
    CUDA_CHECK(cudaMalloc(&in, bytes));
    CUDA_CHECK(cudaMalloc(&out, bytes));
    CUDA_CHECK(cudaMemcpy(in, want, bytes, cudaMemcpyHostToDevice));
    for (const auto& t : kTwins)
        CHECK_AND_TIME(t.name, NULL, s, out, want, words, 0,
                       t.kernel<<<(unsigned)blocks, THREADS, 0, s>>>(in, out));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(want);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
