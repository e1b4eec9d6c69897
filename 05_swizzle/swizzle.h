/* swizzle.h: where the TMA puts each byte of a box in shared memory.
 * Plain C, usable on the host and (under nvcc) on the device. Taught in step
 * 05 (05_swizzle/README.md); confirmed there on the H200 for every mode and
 * element size, for a 128B box at 0, 128, 256 and 512 bytes past a
 * 1024-aligned base, and for inner boxes narrower than the span.
 *
 * Derivation. A box is laid out row after row: byte (row, b) has the logical
 * absolute shared address A = buffer + row * pitch + b. Unswizzled, the pitch
 * is the inner box's bytes (rows packed densely). With a swizzle the pitch is
 * the swizzle span, 32, 64 or 128 B, even when the inner box is narrower: a
 * 64-byte row under the 128B swizzle still takes a 128-byte line, and the
 * other 64 bytes are left as they were. Then the 16-byte chunk index of A
 * (bits 4..6) is XORed with the 128-byte line index (bits 7..9), masked to
 * the mode's width:
 *
 *     phys = A ^ (((A >> 7) & M) << 4),   M = 0, 1, 3, 7 for NONE, 32B, 64B, 128B
 *
 * In 128B mode, the 8 chunks of each 128-byte line are permuted by that
 * line's index mod 8, so a column of 8 consecutive lines (one chunk wide)
 * spreads over all 8 chunk positions, that is over all 32 banks. The pattern
 * repeats every 256 / 512 / 1024 bytes (32B / 64B / 128B). The formula uses
 * the ABSOLUTE address: for a buffer that is not aligned to that period,
 * indexing relative to the buffer gets the pattern wrong.
 *
 * The i16/y16/x16 form seen in CUTLASS-style code is the same thing: with
 * x16 = (A >> 4) & 7 (chunk in line) and y16 = (A >> 7) & 7 (line), the
 * 128B swizzle maps chunk x16 to x16 ^ y16.
 */
#ifndef TUTORIAL_SWIZZLE_H
#define TUTORIAL_SWIZZLE_H

#include <stdint.h>

#ifdef __CUDACC__
#define SWIZZLE_FN static inline __host__ __device__
#else
#define SWIZZLE_FN static inline
#endif

/* The modes, numbered as CUtensorMapSwizzle numbers them (NONE=0 .. 128B=3). */
enum { SWIZZLE_MODE_NONE = 0, SWIZZLE_MODE_32B = 1, SWIZZLE_MODE_64B = 2, SWIZZLE_MODE_128B = 3 };

/* Bits of the line index that take part: 0, 1, 3, 7. */
SWIZZLE_FN uint32_t swizzle_mask(int mode) {
    return mode <= 0 ? 0u : (1u << mode) - 1u;
}

/* The physical byte address of the byte whose logical address is `a`. */
SWIZZLE_FN uint32_t swizzle_address(uint32_t a, int mode) {
    return a ^ (((a >> 7) & swizzle_mask(mode)) << 4);
}

/* Bytes from one row of a box to the next in shared memory, for an inner box
 * of `inner_bytes` (boxDim[0] x element size): the swizzle span, or the inner
 * box itself when unswizzled. A box takes rows x this many bytes. */
SWIZZLE_FN uint32_t swizzle_row_pitch(int mode, uint32_t inner_bytes) {
    return mode <= 0 ? inner_bytes : 16u << mode;
}

/* Element (row, col) of a box whose inner dimension is `inner_bytes`, loaded
 * at absolute shared address `base`: its physical element index from `base`. */
SWIZZLE_FN uint32_t swizzle_element(uint32_t base, int mode, uint32_t row, uint32_t col, uint32_t elem_bytes,
                                    uint32_t inner_bytes) {
    const uint32_t logical = base + row * swizzle_row_pitch(mode, inner_bytes) + col * elem_bytes;
    return (swizzle_address(logical, mode) - base) / elem_bytes;
}

#endif /* TUTORIAL_SWIZZLE_H */
