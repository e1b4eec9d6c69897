// A part of 02_cp_async/cp_async.cu, whose main() runs the parts in order.
#pragma once
#include "02_cp_async/cp_async.cuh"
#include "02_cp_async/parts/problem.cuh"

// ---- Part 1: step 01's staged copy, five ways to fill the tile ------------
// Each thread fills VEC float4 of the tile, then (after the barrier) copies
// its partner's (t ^ 32, another warp's) elements to global memory, so data
// crosses threads as in every tiled kernel. One tile per block.
enum { LDG_STS, CA4, CA8, CA16, CG16 };

template <int METHOD>
static __device__ __forceinline__ void fill_element(float4* dst, const float4* src) {
    if (METHOD == CA4) {  // four 4-byte copies: LDGSTS.E x4
        for (int w = 0; w < 4; ++w) cp_async_ca<4>((float*)dst + w, (const float*)src + w);
    } else if (METHOD == CA8) {  // two 8-byte copies: LDGSTS.E.64 x2
        for (int w = 0; w < 2; ++w) cp_async_ca<8>((float2*)dst + w, (const float2*)src + w);
    } else if (METHOD == CA16) {  // one 16-byte copy through L1: LDGSTS.E.128
        cp_async_ca<16>(dst, src);
    } else {  // one 16-byte copy, L2 only: LDGSTS.E.BYPASS.128
        cp_async_cg16(dst, src);
    }
}

template <int METHOD>
__global__ void __launch_bounds__(THREADS) staged(const float4* __restrict__ in, float4* __restrict__ out) {
    __shared__ float4 tile[TILE4];  // [VEC][THREADS] float4 = 16 KiB
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const float4* src = in + (size_t)blockIdx.x * TILE4;
    if (METHOD == LDG_STS) {
        float4 r[VEC];  // the data passes through 16 registers
#pragma unroll
        for (int j = 0; j < VEC; ++j) r[j] = src[j * THREADS + t];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            tile[j * THREADS + t] = r[j];
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) fill_element<METHOD>(&tile[j * THREADS + t], &src[j * THREADS + t]);
        cp_async_commit_group();
        cp_async_wait_group<0>();  // this thread's copies have landed...
    }
    __syncthreads();  // ...and now everyone's: partners may be read
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        out[(size_t)blockIdx.x * TILE4 + j * THREADS + partner] = tile[j * THREADS + partner];
    }
}

template <int METHOD>
static void staged_part(const Copy* c, const char* name) {
    COPY_PART(c, name, staged<METHOD><<<(unsigned)c->ntiles, THREADS, 0, c->s>>>(c->in, c->out));
}

static void part_staged(const Copy* c) {
    staged_part<LDG_STS>(c, "staged_ldg_sts");
    staged_part<CA4>(c, "staged_ca4");
    staged_part<CA8>(c, "staged_ca8");
    staged_part<CA16>(c, "staged_ca16");
    staged_part<CG16>(c, "staged_cg16");
}
