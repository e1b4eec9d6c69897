// A part of 02_cp_async/cp_async.cu, whose main() runs the parts in order.
#pragma once
#include "02_cp_async/cp_async.cuh"
#include "02_cp_async/parts/problem.cuh"

// ---- Part 3: the tail of an array of n floats ------------------------------
// Chunk c covers floats [4c, 4c + 4). Whole chunks: a normal 16-byte copy.
// The chunk that straddles n: the src-size form reads only the 4 * (n - 4c)
// bytes that exist and zero-fills the rest. Chunks wholly past n: the
// ignore-src form reads nothing and writes 16 zero bytes. Shared memory is
// poisoned first, so a copy that did not happen shows as poison; a read past
// the end shows as the guard words the host put after the array.
__global__ void __launch_bounds__(THREADS) tail_copy(const float* __restrict__ in, size_t n, float4* out) {
    __shared__ float4 slot[THREADS];
    const unsigned t = threadIdx.x;
    const size_t c = (size_t)blockIdx.x * THREADS + t;
    const float poison = __uint_as_float(POISON_WORD);
    slot[t] = make_float4(poison, poison, poison, poison);
    __syncthreads();  // the poison is in place before any copy can land
    const size_t first = 4 * c;
    if (first + 4 <= n) {
        cp_async_cg16(&slot[t], in + first);
    } else if (first < n) {
        cp_async_cg16_zfill(&slot[t], in + first, (uint32_t)(4 * (n - first)));
    } else {
        cp_async_cg16_ignore_src(&slot[t], in, 1);  // source never read; `in` just keeps it valid
    }
    cp_async_wait_all();
    out[c] = slot[t];  // each thread reads only its own slot: its own wait suffices
}

// The array sits in a buffer followed by GUARD words that are neither data
// nor zero: a copy that read past element n - 1 would bring them in.
static void part_tail(const Copy* c, size_t n) {
    enum { GUARD = 64 };
    // One block more than the data needs, so the ignore-src path always runs.
    const size_t chunks = (n + 3) / 4, blocks = chunks / THREADS + 1;
    const size_t padded = blocks * THREADS * 4;  // floats the kernel writes
    float* h_in = (float*)xmalloc((n + GUARD) * sizeof(float), "the tail array");
    uint32_t* want = (uint32_t*)xmalloc(padded * sizeof(uint32_t), "the tail's expected output");
    fill_seeded_floats(h_in, n, c->cli->seed);
    for (int g = 0; g < GUARD; ++g) h_in[n + g] = 12345.0f;  // guard: not data, not zero
    // Expected: the data, then zeros (src-size fill of the straddling chunk),
    // then zeros (ignore-src chunks).
    memcpy(want, h_in, n * sizeof(float));
    memset(want + n, 0, (padded - n) * sizeof(uint32_t));
    float* d_in = NULL;
    float4* d_out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_in, (n + GUARD) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&d_out, padded * sizeof(float)));
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, (n + GUARD) * sizeof(float), cudaMemcpyHostToDevice, c->s));
    poison_device(d_out, padded * sizeof(float), c->s);
    tail_copy<<<(unsigned)blocks, THREADS, 0, c->s>>>(d_in, n, d_out);
    CHECK_LAUNCH();
    const uint32_t* out = (const uint32_t*)d_out;
    const size_t zfill_end = chunks * 4;
    check_device("tail_data", out, want, n, c->s);
    if (zfill_end > n)  // n % 4 != 0: a chunk straddles the end (not so for --tail a multiple of 4)
        check_device("tail_zfill", out + n, want + n, zfill_end - n, c->s);
    check_device("tail_ignore_src", out + zfill_end, want + zfill_end, padded - zfill_end, c->s);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(want);
}
