// 09_gemm/reference.cuh: the GEMM every tensor-core part of steps 09 and 10
// is checked against, in plain CUDA (no tensor cores, no TMA, no PTX), itself
// checked on the CPU by each program. One block of 256 threads computes a
// 64 x 64 tile of C = A B^T (A m x k, B n x k, rows ld_ab bf16 apart; C rows
// ldc floats apart) with classic shared-memory tiling and fp32 FMAs: 16
// outputs per thread (rows ty + 16 i, columns tx + 16 j: a warp reads one or
// two words of `as` (a broadcast) and 16 consecutive words of `bs`). Slow
// next to the tensor cores, and plainly right: with the programs' integer
// inputs every sum is exact in any order.
#pragma once
#include <stdint.h>

#define REF_TILE 64
#define REF_K 16

// The tile at (blockIdx.y, blockIdx.x) of 64 x 64; rows past m and columns
// past n are neither read (zeros instead) nor written.
static __device__ __forceinline__ void reference_tile(const uint16_t* a, const uint16_t* b, float* c,
                                                      uint32_t m, uint32_t n, uint32_t k, uint32_t ld_ab,
                                                      uint32_t ldc) {
    // [k][row or column]; the + 1 spreads the transposing stores over the banks
    __shared__ float as[REF_K][REF_TILE + 1], bs[REF_K][REF_TILE + 1];
    const uint32_t tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const uint32_t row0 = blockIdx.y * REF_TILE, col0 = blockIdx.x * REF_TILE;
    float acc[4][4] = {};
    for (uint32_t k0 = 0; k0 < k; k0 += REF_K) {
        for (uint32_t e = threadIdx.x; e < REF_TILE * REF_K; e += 256) {
            const uint32_t r = e / REF_K, kk = e % REF_K, inside_k = k0 + kk < k;
            // bf16 to fp32: the same bits, 16 places up
            as[kk][r] = inside_k && row0 + r < m
                            ? __uint_as_float((uint32_t)a[(size_t)(row0 + r) * ld_ab + k0 + kk] << 16)
                            : 0.f;
            bs[kk][r] = inside_k && col0 + r < n
                            ? __uint_as_float((uint32_t)b[(size_t)(col0 + r) * ld_ab + k0 + kk] << 16)
                            : 0.f;
        }
        __syncthreads();
        for (uint32_t kk = 0; kk < REF_K; ++kk)
#pragma unroll
            for (uint32_t i = 0; i < 4; ++i)
#pragma unroll
                for (uint32_t j = 0; j < 4; ++j) acc[i][j] += as[kk][ty + 16 * i] * bs[kk][tx + 16 * j];
        __syncthreads();
    }
#pragma unroll
    for (uint32_t i = 0; i < 4; ++i)
#pragma unroll
        for (uint32_t j = 0; j < 4; ++j) {
            const uint32_t r = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
            if (r < m && col < n) c[(size_t)r * ldc + col] = acc[i][j];
        }
}
