// 06_transpose: where an element sits in a swizzled box, and which 4 x 4 block a thread takes: the
// index formulas the kernels and the host's bank model share.
#pragma once
#include "05_swizzle/swizzle.h"
#include "06_transpose/parts/problem.cuh"

// ---- Indices shared by the kernels and the host's bank model ---------------
// Byte `offset` of a 128B-swizzled box that starts at shared address `base`:
// where it really is, as an offset from `base`. The formula takes the
// ABSOLUTE address (05_swizzle), so a box need not start at a 1024-byte
// boundary for this to be right.
static __host__ __device__ __forceinline__ uint32_t swizzled_offset(uint32_t base, uint32_t offset) {
    return swizzle_address(base + offset, SWIZZLE_MODE_128B) - base;
}

// The element index of (row, col) in a swizzled 32 x 32 fp32 box at `base`.
static __host__ __device__ __forceinline__ uint32_t swizzled_element(uint32_t base, uint32_t row,
                                                                     uint32_t col) {
    return swizzled_offset(base, (row * TILE + col) * 4) / 4;
}

// Part 6 moves a tile of PIPE_ROWS x PIPE_COLS elements as blocks of 4 x 4;
// block (a, b) holds rows 4a..4a+3 and columns 4b..4b+3, read as four 16-byte
// chunks and written as four. A quarter warp (8 threads) is served in one
// wavefront when its 8 chunks lie in 8 different positions of 8 (16 bytes x
// 8 = the 32 banks). Work item g takes i = g % 8, d = g / 8 % 8 and
// b = 8 * hi_b + i, a = 8 * hi_a + (i ^ d): within a quarter warp the b are
// 8 consecutive values and the a 8 different ones, on both sides of the
// transpose. With a 128B-swizzled box the position is also XORed with the
// row (the lesson shows it stays one-to-one); with an unswizzled box whose
// rows are a multiple of 128 B it is the chunk index mod 8. The plain
// mapping a = g / 8 gives the writes of a quarter warp one a: conflicts.
static __host__ __device__ __forceinline__ void block_of_thread(uint32_t g, uint32_t blocks_a, uint32_t* a,
                                                                uint32_t* b) {
    const uint32_t i = g % 8, d = g / 8 % 8, hi = g / 64, groups_a = blocks_a / 8;
    *b = hi / groups_a * 8 + i;
    *a = hi % groups_a * 8 + (i ^ d);
}
