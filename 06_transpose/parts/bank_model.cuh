// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "05_swizzle/swizzle.h"
#include "06_transpose/parts/indices.cuh"
#include "06_transpose/parts/ldg_blocked.cuh"
#include "06_transpose/parts/pipelined.cuh"
#include "06_transpose/parts/problem.cuh"

// ---- On the host: the index formulas and the bank model ---------------------
// The transpose write-up this step follows wrote the 128B swizzle of a
// 32 x 32 fp32 box in 16-byte units: i16 the chunk of the box an element is
// in, y16 its 128-byte line, x16 the chunk within the line; the swizzle moves
// chunk x16 to x16 ^ (y16 % 8). Checked here against swizzle.h's element
// index for every element, at three 1024-byte-aligned bases.
static uint32_t writeup_index(uint32_t y, uint32_t x) {
    const uint32_t i16 = (y * TILE + x) * 4 / 16, y16 = i16 / 8, x16 = i16 % 8;
    return y16 * TILE + (x16 ^ (y16 % 8)) * 4 + x % 4;
}

static void check_writeup_index(void) {
    uint32_t got[3 * TILE * TILE], want[3 * TILE * TILE];
    for (uint32_t k = 0; k < 3; ++k)
        for (uint32_t e = 0; e < TILE * TILE; ++e) {
            got[k * TILE * TILE + e] = writeup_index(e / TILE, e % TILE);
            want[k * TILE * TILE + e] =
                swizzle_element(1024 * k, SWIZZLE_MODE_128B, e / TILE, e % TILE, 4, TILE * 4);
        }
    check_words("writeup_index_is_swizzle_h", got, want, 3 * TILE * TILE);
}

// Shared-memory wavefronts of one warp instruction: lane l accesses `bytes`
// (4 or 16) at byte address addr[l]. The 32 banks serve one 4-byte word
// each per wavefront (one word to many lanes is a broadcast); a 16-byte
// access is served a quarter warp (8 lanes, 128 B) at a time, so 4 is its
// conflict-free minimum.
static int wavefronts(const uint32_t* addr, uint32_t bytes) {
    const uint32_t group = bytes == 16 ? 8 : 32;
    int total = 0;
    for (uint32_t g0 = 0; g0 < 32; g0 += group) {
        int worst = 0;
        for (uint32_t bank = 0; bank < 32; ++bank) {
            uint32_t words[32 * 4];
            int n = 0;
            for (uint32_t l = g0; l < g0 + group; ++l)
                for (uint32_t w = addr[l] / 4; w < (addr[l] + bytes) / 4; ++w) {
                    int seen = w % 32 != bank;
                    for (int i = 0; i < n && !seen; ++i) seen = words[i] == w;
                    if (!seen) words[n++] = w;
                }
            worst = n > worst ? n : worst;
        }
        total += worst;
    }
    return total;
}

// The model's prediction for the first warp of each kernel, from the same
// index functions the kernels use (boxes at a 1024-byte-aligned base 0; the
// output box 4 KiB after the input box).
static void print_bank_model(void) {
    uint32_t ld[32], st[32];
    for (uint32_t l = 0; l < 32; ++l) {  // smem_padded: row in, column out, 33-word rows
        ld[l] = (l * (TILE + 1) + 0) * 4;
        st[l] = (0 * (TILE + 1) + l) * 4;
    }
    printf("note   bank model: %-22s STS %2d, LDS %2d wavefronts per warp instruction\n", "smem_padded",
           wavefronts(st, 4), wavefronts(ld, 4));
    for (int swizzled = 0; swizzled < 2; ++swizzled) {
        const uint32_t a = 0, t = TILE * TILE * 4;  // warp 0: i = 0, j = lane
        for (uint32_t l = 0; l < 32; ++l) {
            ld[l] = a + 4 * (swizzled ? swizzled_element(a, 0, l) : l);
            st[l] = t + 4 * (swizzled ? swizzled_element(t, l, 0) : l * TILE);
        }
        printf("note   bank model: %-22s LDS %2d, STS %2d wavefronts per warp instruction\n",
               swizzled ? "tma_swizzle(_batched)" : "tma_naive", wavefronts(ld, 4), wavefronts(st, 4));
    }
    // Consumer warp 0's first 32 work items: block_of_thread's mapping, then
    // the plain one (a = g / 8) it replaces.
    const uint32_t src = 0, dst = PIPE_STAGES * PIPE_TILE_FLOATS * 4;
    for (int diagonal = 1; diagonal >= 0; --diagonal) {
        for (uint32_t l = 0; l < 32; ++l) {
            uint32_t a = l / 8, b = l % 8;
            if (diagonal) block_of_thread(l, PIPE_ROWS / 4, &a, &b);
            ld[l] = src + chunk_offset(src, 4 * a, b, PIPE_COLS, PIPE_IN_SWIZZLED);
            st[l] = dst + chunk_offset(dst, 4 * b, a, PIPE_ROWS, PIPE_OUT_SWIZZLED);
        }
        printf(
            "note   bank model: %-22s LDS.128 %2d, STS.128 %2d wavefronts per warp instruction (4: no "
            "conflict)\n",
            diagonal ? "tma_pipelined" : "the same, a = g / 8", wavefronts(ld, 16), wavefronts(st, 16));
    }
    // ldg_blocked's warp 0: its first STS.128 (load j = 0) and first LDS.128 (block n = 0, row 4a).
    for (uint32_t l = 0; l < 32; ++l) {
        st[l] = 16 * ldg_chunk(l / LDG_ROW_CHUNKS, l % LDG_ROW_CHUNKS);
        ld[l] = 16 * ldg_chunk(4 * (l % (PIPE_ROWS / 4)), l / (PIPE_ROWS / 4));
    }
    printf(
        "note   bank model: %-22s STS.128 %2d, LDS.128 %2d wavefronts per warp instruction (4: no "
        "conflict)\n",
        "ldg_blocked", wavefronts(st, 16), wavefronts(ld, 16));
}
