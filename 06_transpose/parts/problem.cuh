// 06_transpose's own harness: the position-coded input, the framed output and its check, and
// TRANSPOSE_PART, which checks and times one part.
#pragma once
#include "03_tma_load/tensor_map.h"

#define TILE 32   // a 32 x 32 fp32 box: 128-byte rows, exactly the 128B swizzle span
#define FRAME 32  // guard rows and columns around the output (128 B: its rows stay 128-byte aligned)

// ---- The problem (host): the data, the check, one part -----------------------
// Element (r, c) of the input holds a positive normal float whose bits code
// its position r * cols + c, one-to-one, so a wrong index cannot pass, and
// neighbours' codes are far apart. Padding at the end of the input's rows
// holds PAD_WORD (-1.0f), which no element holds. Every code is a normal
// float: cuBLAS computes 1 * a + 0 and returns each one bit for bit.
#define CODE_BASE 0x00800000u   // the smallest positive normal float
#define CODE_RANGE 0x7F000000u  // the positive normal floats: CODE_BASE .. 0x7F7FFFFF
#define CODE_MUL 2654435761u    // odd, and not a multiple of 127: invertible modulo 2^24 * 127
#define PAD_WORD 0xBF800000u

static uint32_t input_word(uint64_t i) {
    return CODE_BASE + (uint32_t)(i * CODE_MUL % CODE_RANGE);
}

// The position whose code `w` is, or UINT64_MAX if w is no element's code.
static uint64_t input_position(uint32_t w) {
    static uint64_t inverse = 0;  // CODE_MUL^-1 modulo CODE_RANGE (extended Euclid, once)
    if (!inverse) {
        int64_t r0 = CODE_RANGE, r1 = CODE_MUL % CODE_RANGE, t0 = 0, t1 = 1;
        while (r1) {
            const int64_t q = r0 / r1, r2 = r0 - q * r1, t2 = t0 - q * t1;
            r0 = r1, r1 = r2, t0 = t1, t1 = t2;
        }
        inverse = (uint64_t)((t0 % (int64_t)CODE_RANGE + CODE_RANGE) % CODE_RANGE);
    }
    if (w < CODE_BASE || w - CODE_BASE >= CODE_RANGE) return UINT64_MAX;
    return (uint64_t)(w - CODE_BASE) * inverse % CODE_RANGE;
}

typedef struct {
    const Cli* cli;  // NULL: the edge matrix, checked and not timed
    const char* prefix;
    cudaStream_t s;
    uint32_t rows, cols, ld_in, ld_out;  // ld: elements from one row to the next
    const float* in;
    float *out, *interior;  // the framed output, and where its matrix starts
    size_t framed_words;
    uint32_t* want;  // the framed output as it must come out
    CUtensorMap in_box, out_box, in_swizzled, out_swizzled, in_tile, out_tile;
    unsigned int* counter;
} Transpose;

// The output buffer: cols rows of ld_out elements, FRAME guard rows above and
// below, FRAME guard columns left and right; ld_out keeps rows 128-byte aligned.
static uint32_t output_ld(uint32_t rows) {
    return (rows + TILE - 1) / TILE * TILE + 2 * FRAME;
}

// Why the wrong words are wrong: a moved element, a word never written, the
// load's zero fill, the input's padding, or a write outside the matrix.
static void explain_wrong(const uint32_t* got, const Transpose* t) {
    size_t outside = 0, unwritten = 0, zero = 0, padding = 0, moved = 0, other = 0;
    const uint64_t n = (uint64_t)t->rows * t->cols;
    for (size_t k = 0; k < t->framed_words; ++k) {
        if (got[k] == t->want[k]) continue;
        const size_t row = k / t->ld_out, col = k % t->ld_out;
        if (row < FRAME || row >= FRAME + t->cols || col < FRAME || col >= FRAME + t->rows)
            ++outside;
        else if (got[k] == POISON_WORD)
            ++unwritten;
        else if (got[k] == 0)
            ++zero;
        else if (got[k] == PAD_WORD)
            ++padding;
        else if (input_position(got[k]) < n)
            ++moved;
        else
            ++other;
    }
    printf(
        "       inside the matrix: %zu moved (another element's value), %zu never written, %zu zero "
        "(out-of-bounds fill), %zu the input's row padding, %zu other; outside it: %zu written\n",
        moved, unwritten, zero, padding, other, outside);
}

// A TMA store writes whole 16-byte chunks: when a row of the output (the
// input's row count) does not end on a 16-byte boundary, the store also
// writes the rest of its last chunk, in the row's padding, with whatever the
// box holds there (the load's zero fill). Those words, and only those, may
// come out zero in a TMA part; they are counted and restored to poison, so
// that every other padding and frame word is still checked untouched.
static size_t tma_store_tail(uint32_t* got, const Transpose* t) {
    size_t written = 0;
    const uint32_t end = (t->rows + 3) / 4 * 4;  // the interior starts 16-byte aligned (FRAME)
    for (size_t c = 0; c < t->cols; ++c)
        for (uint32_t r = t->rows; r < end; ++r) {
            uint32_t* w = &got[(FRAME + c) * t->ld_out + FRAME + r];
            if (*w == 0) ++written, *w = POISON_WORD;
        }
    return written;
}

// Every word of the framed output: the transpose inside, poison (never
// written) in the frame and in the padding of each output row.
static size_t check_transposed(const char* name, const Transpose* t, bool tma_store) {
    uint32_t* got =
        (uint32_t*)read_back(t->out, t->framed_words, t->s);  // the harness's buffer: ours to edit
    const size_t tail = tma_store ? tma_store_tail(got, t) : 0;
    const size_t wrong = check_words(name, got, t->want, t->framed_words);
    if (wrong) explain_wrong(got, t);
    if (tail)
        printf(
            "note   %s: the TMA store also wrote %zu words past the matrix, each in the 16-byte chunk of a "
            "row's "
            "last element\n",
            name, tail);
    return wrong;
}

// One part: poison the framed output, launch, check, and (timed matrix only) time.
#define TRANSPOSE_PART(name, t, tma_store, ...)                                   \
    do {                                                                          \
        char name_[64];                                                           \
        snprintf(name_, sizeof name_, "%s%s", (t)->prefix, (name));               \
        poison_device((t)->out, (t)->framed_words * 4, (t)->s);                   \
        CHECK_THEN_TIME(name_, (t)->cli, (t)->s, 2.0 * 4 * (t)->rows * (t)->cols, \
                        check_transposed(name_, (t), (tma_store)), __VA_ARGS__);  \
    } while (0)
