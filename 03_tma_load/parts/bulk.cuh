// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "03_tma_load/parts/problem.cuh"

// ---- Part 4: 1D bulk copy ---------------------------------------------------
// No tensor map: a source address and a byte count (both multiples of 16).
__global__ void __launch_bounds__(THREADS)
    bulk_copy(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t chunk_bytes) {
    uint32_t* buf = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = chunk_bytes / 4;
    poison_smem(buf, words);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, chunk_bytes);
        bulk_load(buf, in + (size_t)blockIdx.x * words, chunk_bytes, &bar);
    }
    MBAR_WAIT(&bar, 0);
    copy_out(buf, words, out + (size_t)blockIdx.x * words);
}

static void part_bulk(uint32_t chunk_bytes, cudaStream_t s) {
    const size_t bytes = 1u << 20, words = bytes / 4;
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the bulk part's data");
    for (size_t i = 0; i < words; ++i) want[i] = (uint32_t)(i * 2654435761u);  // position-coded, all distinct
    uint32_t *in = NULL, *out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    CUDA_CHECK(cudaMemcpyAsync(in, want, bytes, cudaMemcpyHostToDevice, s));
    poison_device(out, bytes, s);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(65536)));
    bulk_copy<<<(unsigned)(bytes / chunk_bytes), THREADS, tma_smem_bytes(chunk_bytes), s>>>(in, out,
                                                                                            chunk_bytes);
    CHECK_LAUNCH();
    check_device("bulk_load", out, want, words, s);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(want);
}
