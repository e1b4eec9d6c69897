// A part of 02_cp_async/cp_async.cu, whose main() runs the parts in order.
#pragma once
#include "02_cp_async/cp_async.cuh"
#include "02_cp_async/parts/problem.cuh"

// ---- Part 2: groups, consumed oldest first --------------------------------
// Each tile is copied as VEC = 4 groups (group g = row g of the tile, one
// 16-byte copy per thread). Then row g is consumed after
// cp.async.wait_group (3 - g): "at most 3 - g of my newest groups may still be
// pending", i.e. groups 0..g are complete. The __syncthreads() after each wait
// extends "my copies landed" to "everyone's copies landed".
// stamps (block 0, thread 0): clock64 after each wait, from before the issue.
static __device__ __forceinline__ void consume_row(const float4* tile, float4* out, int row,
                                                   unsigned partner) {
    __syncthreads();
    out[row * THREADS + partner] = tile[row * THREADS + partner];
}

__global__ void __launch_bounds__(THREADS)
    groups(const float4* __restrict__ in, float4* __restrict__ out, long long* stamps) {
    __shared__ float4 tile[TILE4];  // [4 groups][THREADS] float4
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const size_t b = blockIdx.x;
    const long long t0 = clock64();
#pragma unroll
    for (int g = 0; g < VEC; ++g) {
        cp_async_cg16(&tile[g * THREADS + t], &in[b * TILE4 + g * THREADS + t]);
        cp_async_commit_group();  // one group per row
    }
    float4* dst = out + b * TILE4;
    long long when[4];
    cp_async_wait_group<3>();  // group 0 complete; 1, 2, 3 may be in flight
    when[0] = clock64();
    consume_row(tile, dst, 0, partner);
    cp_async_wait_group<2>();  // groups 0, 1 complete
    when[1] = clock64();
    consume_row(tile, dst, 1, partner);
    cp_async_wait_group<1>();  // groups 0..2 complete
    when[2] = clock64();
    consume_row(tile, dst, 2, partner);
    cp_async_wait_group<0>();  // all complete
    when[3] = clock64();
    consume_row(tile, dst, 3, partner);
    if (stamps && b == 0 && t == 0)
        for (int g = 0; g < 4; ++g) stamps[g] = when[g] - t0;
}

static void part_groups(const Copy* c) {
    long long* d_stamps = NULL;
    long long stamps[4];
    CUDA_CHECK(cudaMalloc((void**)&d_stamps, sizeof stamps));
    COPY_PART(c, "groups_oldest_first",
              groups<<<(unsigned)c->ntiles, THREADS, 0, c->s>>>(c->in, c->out, d_stamps));
    CUDA_CHECK(cudaMemcpyAsync(stamps, d_stamps, sizeof stamps, cudaMemcpyDeviceToHost, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    record_time_line(
        "groups (block 0): wait_group 3 returned after %lld cycles, 2 after %lld, 1 after %lld, "
        "0 after %lld",
        stamps[0], stamps[1], stamps[2], stamps[3]);
    CUDA_CHECK(cudaFree(d_stamps));
}
