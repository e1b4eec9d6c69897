// 07_reduce_multicast's own harness: the reduce tile, and the values every contributor adds (hashes of
// the contributor and the position, so that a missing or misplaced one changes a sum).
#pragma once
#include "common/tutorial.cuh"

// ===========================================================================
// Part A: store-reduce
// ===========================================================================
// A reduce tile is 64 x 64 elements of 4 bytes (16 KiB): one box, 256-byte
// rows (no swizzle: the threads write it row by row, 16 bytes each).
#define RT_ROWS 64
#define RT_COLS 64
#define RT_ELEMS (RT_ROWS * RT_COLS)
#define RT_BYTES (RT_ELEMS * 4)
#define RT_THREADS 256
#define RT_CHUNKS (RT_ELEMS / 4 / RT_THREADS)  // 16-byte chunks per thread per tile: 4

// ---- The values every contributor adds ------------------------------------
// Contributor k's word for element i of the output (row-major index): a
// hash of both, so a wrong position or a missing contributor changes sums.
static __host__ __device__ __forceinline__ uint32_t partial_word(uint32_t seed, uint32_t k, uint32_t i) {
    uint32_t h = i * 0x9E3779B1u ^ (k + seed * 0x632BE5ABu) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    return h ^ (h >> 12);
}

static __host__ __device__ __forceinline__ float bits_to_float(uint32_t w) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(w);
#else
    float f;
    memcpy(&f, &w, 4);
    return f;
#endif
}

// Its f32 value: a sign and 23 bits of mantissa at exponent -1, so every
// partial is +-[0.5, 1): a missing one moves a sum by at least 0.5, far more
// than any rounding error of the sum.
static __host__ __device__ __forceinline__ float partial_f32(uint32_t seed, uint32_t k, uint32_t i) {
    const uint32_t w = partial_word(seed, k, i);
    return bits_to_float((w & 0x80000000u) | 0x3F000000u | (w & 0x007FFFFFu));
}
