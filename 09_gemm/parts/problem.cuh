// 09_gemm/parts/problem.cuh: the host harness of step 09. The data (small
// integers, exact in any summation order), the framed and poisoned output,
// the check of every word, and the plain reference GEMM every part is
// compared with, itself checked on the CPU.
#pragma once
#include "common/cublas_check.h"
#include "03_tma_load/tensor_map.h"
#include "09_gemm/reference.cuh"
#include "09_gemm/parts/config.cuh"

#define FRAME 32  // guard rows and columns around C (128 B: rows stay 16-byte aligned)

// ---- The problem (host): the data, the output, the check, one part ---------
// Element (r, k) of A (and of B) is a nonzero integer in -4..4, a hash of the
// seed and its position: a wrong index, a skipped or doubled k cannot give
// the right sum. Every product is at most 16 in magnitude, every partial sum
// at most 16 K < 2^24 (K <= 2^20): exact in fp32 in any order, so a GEMM that
// adds in another order (tensor cores, split-K, atomics) must still agree bit
// for bit. Padding at the end of a row (the 16-byte rule, step 03) holds a
// bf16 NaN, which no element is: a load that reads it poisons its sums.
#define PAD_BF16 0x7FC0u
#define MAX_K (1u << 20)

static int8_t input_value(uint32_t seed, uint64_t i) {
    const uint32_t w = seeded_word(seed, i), v = (w & 3) + 1;
    return (int8_t)((w & 4) ? -(int)v : (int)v);
}

// bf16 is the top half of an fp32: 1 sign, 8 exponent, 7 fraction bits.
// Integers up to 256 in magnitude are exact in it.
static uint16_t bf16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

typedef struct {
    const Cli* cli;  // the options: repetitions, --quick
    const char* prefix;
    cudaStream_t s;
    cublasHandle_t h;
    uint32_t m, n, k;
    uint32_t ld_ab;         // elements from one row of A (and of B) to the next: K rounded up to 8 (16 bytes)
    uint32_t ldc;           // floats from one row of the framed output to the next
    const uint16_t *a, *b;  // bf16 bits, M x ld_ab and N x ld_ab
    float *out, *c;         // the framed output, and where C starts in it
    size_t framed_words;
    uint32_t* want;             // the framed output as it must come out
    int8_t *host_a, *host_b;    // the elements, M x K and N x K, for the CPU check
    uint32_t splits, band;      // split-K pieces (the split-K problem); the raster's band
    const struct LtBest* best;  // cuBLAS at its best on this problem (part 7)
    // A in boxes of 64 (K) x 128, 64 or 32 rows; B of 64 x 256 or 128 rows:
    // 128B-swizzled. C in boxes of 32 x 64 fp32, 128B-swizzled (TMA epilogues).
    CUtensorMap a_box[3], b_box[2], c_box;
    uint32_t* flags;  // stream-K's cut tiles' flags (stream_k.cuh): zero once, launches' epochs after
} Gemm;

static uint32_t round_up(uint32_t x, uint32_t to) {
    return (x + to - 1) / to * to;
}

// The output buffer: M rows of ldc floats, FRAME guard rows above and below,
// FRAME guard columns left and right; the row length N is rounded up to 4
// floats (16 bytes), so every row of C starts 16-byte aligned.
static uint32_t output_ld(uint32_t n) {
    return round_up(n, 4) + 2 * FRAME;
}

static double gemm_flops(const Gemm* g) {
    return 2.0 * g->m * g->n * g->k;
}

// Why the wrong words are wrong: never written, written outside C, or a wrong value.
static void explain_wrong(const uint32_t* got, const Gemm* g) {
    size_t outside = 0, unwritten = 0, nan = 0, other = 0;
    for (size_t w = 0; w < g->framed_words; ++w) {
        if (got[w] == g->want[w]) continue;
        const size_t row = w / g->ldc, col = w % g->ldc;
        if (row < FRAME || row >= FRAME + g->m || col < FRAME || col >= FRAME + g->n)
            ++outside;
        else if (got[w] == POISON_WORD)
            ++unwritten;
        else if ((got[w] & 0x7F800000u) == 0x7F800000u)
            ++nan;
        else
            ++other;
    }
    printf(
        "       inside C: %zu never written, %zu NaN or inf (a row's padding was read?), %zu wrong "
        "values; outside C: %zu written\n",
        unwritten, nan, other, outside);
}

// A TMA store or reduce writes whole 16-byte chunks (step 06): where a row of C does not end on a
// 16-byte boundary, it also writes the rest of the row's last chunk, in its padding, with what the box
// holds there: sums over B's zero-filled rows, zeros. A store leaves a zero (of either sign); a reduce
// adds zero to the poison there, which leaves a NaN. Those words, holding exactly that, are counted and
// restored to poison; any other value stays and is reported wrong, as is every other padding and frame
// word. (Where C is a slice of a wider matrix, those words are a neighbour's: lesson 09.)
enum { TAIL_NONE, TAIL_STORE, TAIL_REDUCE };  // what a part's epilogue leaves past C
static size_t tma_store_tail(uint32_t* got, const Gemm* g, int tail) {
    size_t written = 0;
    for (size_t r = 0; r < g->m; ++r)
        for (uint32_t j = g->n; j < round_up(g->n, 4); ++j) {
            uint32_t* w = &got[(FRAME + r) * g->ldc + FRAME + j];
            const bool nan = (*w & 0x7F800000u) == 0x7F800000u && (*w & 0x7FFFFFu) && *w != POISON_WORD;
            if (tail == TAIL_STORE ? (*w & 0x7FFFFFFFu) == 0u : nan) ++written, *w = POISON_WORD;
        }
    return written;
}

// Every word of the framed output: C inside, poison (never written) in the
// frame and in the padding of each row.
static size_t check_gemm(const char* name, const Gemm* g, int tail_kind) {
    // The harness's readback buffer: ours to edit (tma_store_tail does).
    uint32_t* got = (uint32_t*)read_back(g->out, g->framed_words, g->s);
    const size_t tail = tail_kind != TAIL_NONE ? tma_store_tail(got, g, tail_kind) : 0;
    const size_t wrong = check_words(name, got, g->want, g->framed_words);
    if (wrong) explain_wrong(got, g);
    if (tail)
        printf(
            "note   %s: the TMA %s also wrote %zu words past C, in the 16-byte chunk of a row's last "
            "element\n",
            name, tail_kind == TAIL_STORE ? "store" : "reduce", tail);
    return wrong;
}

// ---- The reference: a plain GPU GEMM, itself checked on the CPU ------------
// 09_gemm/reference.cuh: shared-memory tiling, fp32 FMAs, no tensor cores,
// 64 x 64 outputs per block. Slow next to the tensor cores, and plainly right.
__global__ void __launch_bounds__(256)
    reference_gemm(const uint16_t* a, const uint16_t* b, float* c, uint32_t m, uint32_t n, uint32_t k,
                   uint32_t ld_ab, uint32_t ldc) {
    reference_tile(a, b, c, m, n, k, ld_ab, ldc);
}

// The rows of C the CPU recomputes: the first, the last, and hashed ones.
#define CPU_ROWS 8

// Run the reference into the framed output; check CPU_ROWS of its rows
// against exact integer sums on the CPU, and every frame and padding word
// against the poison; keep its output as every part's expected output.
static void run_reference(Gemm* g) {
    poison_device(g->out, g->framed_words * 4, g->s);
    const dim3 grid((g->n + REF_TILE - 1) / REF_TILE, (g->m + REF_TILE - 1) / REF_TILE);
    reference_gemm<<<grid, 256, 0, g->s>>>(g->a, g->b, g->c, g->m, g->n, g->k, g->ld_ab, g->ldc);
    CHECK_LAUNCH();
    const uint32_t* got = read_back(g->out, g->framed_words, g->s);
    size_t wrong = 0, checked = 0;
    for (uint32_t i = 0; i < CPU_ROWS; ++i) {
        const uint32_t r = i == 0 ? 0 : i == 1 ? g->m - 1 : seeded_word(0xC0FFEEu, i) % g->m;
        const int8_t* ar = g->host_a + (size_t)r * g->k;
        for (uint32_t j = 0; j < g->n; ++j) {
            const int8_t* bj = g->host_b + (size_t)j * g->k;
            int32_t sum = 0;
            for (uint32_t kk = 0; kk < g->k; ++kk) sum += ar[kk] * bj[kk];
            const float want = (float)sum;  // exact: |sum| < 2^24
            uint32_t bits;
            memcpy(&bits, &want, 4);
            wrong += got[(FRAME + (size_t)r) * g->ldc + FRAME + j] != bits;
            ++checked;
        }
    }
    for (size_t w = 0; w < g->framed_words; ++w) {
        const size_t row = w / g->ldc, col = w % g->ldc;
        if (row >= FRAME && row < FRAME + g->m && col >= FRAME && col < FRAME + g->n) continue;
        wrong += got[w] != POISON_WORD;
        ++checked;
    }
    char name[64];
    snprintf(name, sizeof name, "%sreference_vs_cpu", g->prefix);
    report_check(name, wrong, checked);
    memcpy(g->want, got, g->framed_words * 4);
}

// An operand: rows x k elements, rows ld_ab apart (the padding holds PAD_BF16),
// on the device as bf16; the elements also kept on the host for the CPU.
static uint16_t* make_operand(uint32_t seed, uint32_t rows, uint32_t k, uint32_t ld_ab, int8_t** host,
                              cudaStream_t s) {
    *host = (int8_t*)xmalloc((size_t)rows * k, "an operand's elements");
    uint16_t* staged = (uint16_t*)xmalloc((size_t)rows * ld_ab * 2, "an operand in bf16");
    for (size_t r = 0; r < rows; ++r)
        for (size_t kk = 0; kk < ld_ab; ++kk) {
            const int8_t v = kk < k ? input_value(seed, r * k + kk) : 0;
            if (kk < k) (*host)[r * k + kk] = v;
            staged[r * ld_ab + kk] = kk < k ? bf16_bits((float)v) : (uint16_t)PAD_BF16;
        }
    uint16_t* dev = NULL;
    CUDA_CHECK(cudaMalloc((void**)&dev, (size_t)rows * ld_ab * 2));
    CUDA_CHECK(cudaMemcpyAsync(dev, staged, (size_t)rows * ld_ab * 2, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    free(staged);
    return dev;
}

// A tensor map of an operand (rows x K bf16, rows ld_ab apart) in boxes of
// 64 elements of K (128 bytes: the swizzle span) by box_rows rows. The L2
// promotion is tensor_spec_2d's (none) until measured on this kernel:
// make NVCCFLAGS="-DOPERAND_L2_PROMOTION=CU_TENSOR_MAP_L2_PROMOTION_L2_256B" build-09.
#ifndef OPERAND_L2_PROMOTION
#define OPERAND_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_NONE
#endif
static CUtensorMap operand_map(const uint16_t* dev, uint32_t rows, const Gemm* g, uint32_t box_rows,
                               const char* what) {
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, dev, rows, g->k,
                                        (uint64_t)g->ld_ab * 2, box_rows, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    spec.l2_promotion = OPERAND_L2_PROMOTION;
    return make_tensor_map(&spec, what);
}
