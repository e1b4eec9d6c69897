// A part of 02_cp_async/cp_async.cu, whose main() runs the parts in order.
#pragma once
#include <math.h>

#include "02_cp_async/parts/problem.cuh"

// ---- Part 4: pipelines, a copy and real arithmetic --------------------------
// Polynomial coefficients: c[k] = (-1)^k / (k + 2). Inputs lie in [-1, 1), so
// every intermediate stays small and finite.
__constant__ float c_coeff[MAX_DEGREE];

// The "real work" per element: `degree` fused multiply-adds (Horner's rule
// starting from x). degree 0 is the identity, so the same kernels are a pure
// copy. fmaf on the CPU and __fmaf_rn on the GPU both round once, correctly,
// so the results agree bit for bit.
static float poly_cpu(float x, int degree, const float* c) {
    float acc = x;
    for (int k = 0; k < degree; ++k) acc = fmaf(acc, x, c[k]);
    return acc;
}

static __device__ __forceinline__ float poly(float x, int degree) {
    float acc = x;
#pragma unroll 4
    for (int k = 0; k < degree; ++k) acc = __fmaf_rn(acc, x, c_coeff[k]);
    return acc;
}

// The same polynomial on a thread's VEC float4 at once, coefficient loop
// outside: 16 independent FMA chains per step instead of one. Each chain is a
// dependent sequence (acc feeds the next FMA, 4+ cycles apart), so with few
// warps per SM the independent chains are what keeps the FMA units busy.
// Per element the operations are exactly those of poly(): same bits.
static __device__ __forceinline__ void poly_vec(float4 (&v)[VEC], int degree) {
    float4 x[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) x[j] = v[j];
#pragma unroll 2
    for (int k = 0; k < degree; ++k) {
        const float c = c_coeff[k];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            v[j].x = __fmaf_rn(v[j].x, x[j].x, c);
            v[j].y = __fmaf_rn(v[j].y, x[j].y, c);
            v[j].z = __fmaf_rn(v[j].z, x[j].z, c);
            v[j].w = __fmaf_rn(v[j].w, x[j].w, c);
        }
    }
}

// The trivially correct reference the pipelines are compared with: one
// thread per element, no shared memory. It is itself checked on the CPU.
__global__ void poly_reference(const float* __restrict__ in, float* __restrict__ out, size_t n, int degree) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = poly(in[i], degree);
}
