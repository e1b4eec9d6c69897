// The swizzle in three notations, compared on every offset of a 64 KiB span
// (tests/test_swizzle.py builds and runs this on the host; no GPU):
//   this tutorial's  swizzle_address(a, mode)  (05_swizzle/swizzle.h)
//   the chunk form   16-byte chunk x16 ^ (line y16 & mask), as the PTX ISA
//                    draws the modes (chunks of a 128-byte line permuted by the line)
//   CuTe's           Swizzle<B, M, S>: bits [M + S, M + S + B) XORed into [M, M + B)
// In bytes, mode 32B/64B/128B is Swizzle<1/2/3, 4, 3>: 16-byte chunks (M = 4)
// keep their bytes, the line index starts 3 bits higher (S = 3: 128-byte
// lines). On element offsets the same function is Swizzle<3, 4 - log2(size),
// 3>: Swizzle<3, 3, 3> for bf16, Swizzle<3, 2, 3> for fp32 (128B mode).
// Output: one line per comparison, "name mismatches"; the last one is a
// negative control (64B's CuTe swizzle against the 128B mode) that must differ.
#include <cute/swizzle.hpp>
#include <cstdio>

#include "05_swizzle/swizzle.h"

static const uint32_t SPAN = 1u << 16;

static uint32_t chunk_form(uint32_t a, int mode) {
    const uint32_t x16 = (a >> 4) & 7, y16 = (a >> 7) & 7;
    return (a & ~0x70u) | ((x16 ^ (y16 & swizzle_mask(mode))) << 4);
}

template <int B, int M, int S>
static long cute_vs_tutorial(int mode, uint32_t elem_bytes) {
    long bad = 0;
    for (uint32_t e = 0; e < SPAN / elem_bytes; ++e) {
        const uint32_t cute_bytes = (uint32_t)cute::Swizzle<B, M, S>{}(e)*elem_bytes;
        if (cute_bytes != swizzle_address(e * elem_bytes, mode)) ++bad;
    }
    return bad;
}

int main() {
    long chunk_bad = 0;
    for (int mode = 0; mode <= 3; ++mode)
        for (uint32_t a = 0; a < SPAN; ++a) chunk_bad += chunk_form(a, mode) != swizzle_address(a, mode);
    printf("chunk_form %ld\n", chunk_bad);
    printf("Swizzle<0,4,3>_none %ld\n", cute_vs_tutorial<0, 4, 3>(SWIZZLE_MODE_NONE, 1));
    printf("Swizzle<1,4,3>_32B %ld\n", cute_vs_tutorial<1, 4, 3>(SWIZZLE_MODE_32B, 1));
    printf("Swizzle<2,4,3>_64B %ld\n", cute_vs_tutorial<2, 4, 3>(SWIZZLE_MODE_64B, 1));
    printf("Swizzle<3,4,3>_128B %ld\n", cute_vs_tutorial<3, 4, 3>(SWIZZLE_MODE_128B, 1));
    printf("Swizzle<3,3,3>_128B_bf16 %ld\n", cute_vs_tutorial<3, 3, 3>(SWIZZLE_MODE_128B, 2));
    printf("Swizzle<3,2,3>_128B_fp32 %ld\n", cute_vs_tutorial<3, 2, 3>(SWIZZLE_MODE_128B, 4));
    printf("control_Swizzle<2,4,3>_as_128B %ld\n", cute_vs_tutorial<2, 4, 3>(SWIZZLE_MODE_128B, 1));
    return 0;
}
