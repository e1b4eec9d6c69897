// A framed output as the host checks of 06 and 09 want it, for their unit
// tests: `rows` rows of `ld` words with FRAME guard rows above and below and
// FRAME guard words on the left (the program's own FRAME), poison everywhere
// but the rows x cols interior, whose word (r, c) is base + r * cols + c.
// Returns the expected buffer; *got is a second buffer of the same size.
#pragma once
#include <stdint.h>

static uint32_t* framed_want(uint32_t rows, uint32_t cols, uint32_t ld, uint32_t base, size_t* words,
                             uint32_t** got) {
    *words = (size_t)(rows + 2 * FRAME) * ld;
    uint32_t* want = (uint32_t*)xmalloc(*words * 4, "want");
    *got = (uint32_t*)xmalloc(*words * 4, "got");
    for (size_t w = 0; w < *words; ++w) want[w] = POISON_WORD;
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) want[(FRAME + r) * ld + FRAME + c] = base + r * cols + c;
    return want;
}

// Writes `word` into every row's tail: the words past its `cols` up to the end of the row's last
// 16-byte chunk, where a TMA store's box (or a reduce's) lands past the output (what the checks must
// tell from a wrong word). `got` as framed_want lays it out.
static void fill_tails(uint32_t* got, uint32_t rows, uint32_t cols, uint32_t ld, uint32_t word) {
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = cols; c % 4 != 0; ++c) got[(FRAME + r) * ld + FRAME + c] = word;
}
