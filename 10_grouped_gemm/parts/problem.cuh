// 10_grouped_gemm/parts/problem.cuh: the host harness of step 10. A
// problem's batches on the device, their tensor maps made on the host, the
// per-expert reference GEMM (itself checked on the CPU), and the check of
// every expert's C, word for word.
#pragma once
#include "common/cublas_check.h"
#include "03_tma_load/tensor_map.h"
#include "09_gemm/reference.cuh"
#include "10_grouped_gemm/parts/batch.cuh"
#include "10_grouped_gemm/parts/schedule.cuh"

// ---- The reference: a plain GPU GEMM per expert, itself checked on the CPU ----
// 09's (09_gemm/reference.cuh): shared-memory tiling, fp32 FMAs, no tensor
// cores, 64 x 64 outputs per block; blockIdx.z is the expert.
__global__ void __launch_bounds__(256)
    reference_grouped(const Batch* batch, const uint16_t* b_all, uint32_t n, uint32_t k, uint32_t ld_ab,
                      uint32_t ldc) {
    const uint32_t g = blockIdx.z, m = batch->first_row[g + 1] - batch->first_row[g];
    if (blockIdx.y * REF_TILE >= m) return;  // the grid covers the largest expert
    reference_tile(batch->a + (size_t)batch->first_row[g] * ld_ab, b_all + (size_t)g * n * ld_ab,
                   batch->c + (size_t)batch->first_row[g] * ldc, m, n, k, ld_ab, ldc);
}

// ---- The problem (host) ---------------------------------------------------------
// Three batches share B (the experts' weights) and the launch sizes: batch 0
// (every part), batch 1 (new tokens: another draw of M_g, new A and C
// buffers; the graphs captured on batch 0 are replayed on it), and the
// dense problem (one expert of all the rows: the reference's shape).
enum { BATCH_0, BATCH_1, DENSE, NUM_BATCHES };

typedef struct {
    const Cli* cli;
    const char* prefix;
    cudaStream_t s;
    cublasHandle_t h;
    uint32_t experts, total, n, k, ld_ab, ldc, band;
    uint32_t skew;  // the Zipf exponent in hundredths
    uint16_t* b;    // G N x ld_ab
    uint16_t* a[2];
    float* out[2];  // framed outputs (FRAME guard rows and columns), one per buffer set
    size_t framed_words;
    Batch* staged;  // pinned: the batch the next copy sends to the device
    Batch host[NUM_BATCHES];
    uint32_t experts_of[NUM_BATCHES];
    Batch* dev;  // the batch the kernels read
    uint32_t* want[NUM_BATCHES];
    CUtensorMap* maps;                                // 3 per expert (HOST_MAPS, DEVICE_MAPS)
    CUtensorMap* host_maps;                           // pinned: the host's encoding of them
    CUtensorMap* slots;                               // 6 per CTA (EDIT)
    CUtensorMap a_tmpl[2], b_tmpl, c_tmpl[2], b_all;  // templates per buffer set; B over every expert
    uint32_t grid;                                    // CTAs of the persistent kernel
    int batch;                                        // the batch on the device now
} Problem;

static double problem_flops(const Problem* q) {
    return 2.0 * q->total * q->n * q->k;
}
static uint32_t output_ld(uint32_t n) {
    return round_up(n, 4) + 2 * FRAME;
}
static float* c_of(const Problem* q, int set) {
    return q->out[set] + (size_t)FRAME * q->ldc + FRAME;
}

// Make batch i the one the kernels read (a copy on the stream, from pinned memory).
static void use_batch(Problem* q, int i) {
    CUDA_CHECK(cudaStreamSynchronize(q->s));  // the staged copy is not in use
    *q->staged = q->host[i];
    CUDA_CHECK(cudaMemcpyAsync(q->dev, q->staged, sizeof(Batch), cudaMemcpyHostToDevice, q->s));
    q->batch = i;
}
// Batch i's schedule planned again (or the other one), sent to the device.
static void plan_batch(Problem* q, int i, bool other) {
    Batch* b = &q->host[i];
    uint32_t rows[MAX_EXPERTS];
    for (uint32_t g = 0; g < q->experts_of[i]; ++g) rows[g] = b->first_row[g + 1] - b->first_row[g];
    fill_batch(b, rows, q->experts_of[i], q->n, other);
    use_batch(q, i);
}
static int set_of(int batch) {
    return batch == BATCH_1 ? 1 : 0;
}

// An operand's map: rows x K bf16, boxes of 64 (K) x box_rows, 128B-swizzled.
static CUtensorMap operand_map(const Problem* q, const uint16_t* p, uint32_t rows, uint32_t box_rows,
                               const char* what) {
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, p, rows, q->k, (uint64_t)q->ld_ab * 2, box_rows, BK,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    return make_tensor_map(&spec, what);
}
static CUtensorMap output_map(const Problem* q, float* c, uint32_t rows, const char* what) {
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c, rows, q->n, (uint64_t)q->ldc * 4, WG_M, EPI_COLS,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    return make_tensor_map(&spec, what);
}

// HOST_MAPS: the host encodes expert g's three maps of batch i.
static void encode_host_maps(Problem* q, int i, CUtensorMap* maps) {
    const Batch* b = &q->host[i];
    for (uint32_t g = 0; g < q->experts_of[i]; ++g) {
        const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
        if (rows == 0) continue;  // no tile uses it, and a 0-row map is invalid
        maps[3 * g] = operand_map(q, b->a + (size_t)b->first_row[g] * q->ld_ab, rows, BM, "A_g");
        maps[3 * g + 1] = operand_map(q, q->b + (size_t)g * q->n * q->ld_ab, q->n, BN, "B_g");
        maps[3 * g + 2] = output_map(q, b->c + (size_t)b->first_row[g] * q->ldc, rows, "C_g");
    }
}

static GroupArgs group_args(const Problem* q) {
    GroupArgs p;
    memset(&p, 0, sizeof p);
    p.experts = q->experts_of[q->batch], p.n = q->n, p.kblocks = (q->k + BK - 1) / BK, p.ldc = q->ldc;
    p.tiles_n = (q->n + BN - 1) / BN, p.band = q->band, p.batch = q->dev, p.maps = q->maps,
    p.slots = q->slots;
    p.ld_ab = q->ld_ab, p.b = q->b;
    return p;
}

// ---- The check: every expert's C, bit for bit, and the frame -----------------
// The reference (reference_grouped) runs into the framed output; the CPU
// recomputes a row of each expert (its last: where a tile ends) and a few
// hashed rows; frame and row padding must still hold the poison. Its output
// is the batch's expected output.
#define CPU_ROWS 8      // hashed rows the CPU recomputes
#define CPU_EXPERTS 16  // experts whose last row it recomputes (every one if there are no more)

// Row `row` of C (expert g's) on the CPU: exact integer sums, column by column.
static void cpu_row(const Problem* q, uint32_t row, uint32_t g, uint32_t a_seed, int* arow, float* out) {
    const uint32_t b_seed = q->cli->seed ^ 0xB0Bu;  // B is the same in every batch
    for (uint32_t kk = 0; kk < q->k; ++kk) arow[kk] = input_value(a_seed, (uint64_t)row * q->k + kk);
    for (uint32_t j = 0; j < q->n; ++j) {
        const uint64_t brow = (uint64_t)g * q->n + j;
        int64_t sum = 0;
        for (uint32_t kk = 0; kk < q->k; ++kk) sum += arow[kk] * input_value(b_seed, brow * q->k + kk);
        out[j] = (float)sum;  // exact: |sum| <= 16 K <= 2^24
    }
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint32_t a_seed(const Problem* q, int set) {
    return q->cli->seed + 17u * (uint32_t)set;
}

static void run_reference(Problem* q, int batch, const char* name) {
    use_batch(q, batch);
    const int set = set_of(batch);
    const Batch* b = &q->host[batch];
    const uint32_t experts = q->experts_of[batch];
    uint32_t largest = 0;
    for (uint32_t g = 0; g < experts; ++g) largest = max(largest, b->first_row[g + 1] - b->first_row[g]);
    poison_device(q->out[set], q->framed_words * 4, q->s);
    const dim3 grid((q->n + REF_TILE - 1) / REF_TILE, (largest + REF_TILE - 1) / REF_TILE, experts);
    if (largest) reference_grouped<<<grid, 256, 0, q->s>>>(q->dev, q->b, q->n, q->k, q->ld_ab, q->ldc);
    CHECK_LAUNCH();
    const uint32_t* got = read_back(q->out[set], q->framed_words, q->s);
    size_t wrong = 0, checked = 0;
    uint32_t rows_checked[MAX_EXPERTS + CPU_ROWS], nrows = 0;
    const uint32_t every = experts > CPU_EXPERTS ? experts / CPU_EXPERTS : 1;
    for (uint32_t g = 0; g < experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        if (m && (g % every == 0 || m == 1)) rows_checked[nrows++] = b->first_row[g + 1] - 1;
    }
    for (uint32_t i = 0; i < CPU_ROWS && q->total; ++i)
        rows_checked[nrows++] = seeded_word(0xC0FFEEu, i) % q->total;
    int* arow = (int*)xmalloc(sizeof(int) * q->k, "a row of A");
    float* want = (float*)xmalloc(sizeof(float) * q->n, "a row of C");
    for (uint32_t i = 0; i < nrows; ++i) {
        const uint32_t r = rows_checked[i], g = range_of(b->first_row, experts, r);
        cpu_row(q, r, g, a_seed(q, set), arow, want);
        for (uint32_t j = 0; j < q->n; ++j, ++checked)
            wrong += got[(FRAME + (size_t)r) * q->ldc + FRAME + j] != float_bits(want[j]);
    }
    free(arow);
    free(want);
    for (size_t w = 0; w < q->framed_words; ++w) {
        const size_t row = w / q->ldc, col = w % q->ldc;
        if (row >= FRAME && row < FRAME + q->total && col >= FRAME && col < FRAME + q->n) continue;
        wrong += got[w] != POISON_WORD;
        ++checked;
    }
    char full[64];
    snprintf(full, sizeof full, "%s%s", q->prefix, name);
    report_check(full, wrong, checked);
    q->want[batch] = (uint32_t*)xmalloc(q->framed_words * 4, "an expected output");
    memcpy(q->want[batch], got, q->framed_words * 4);
}

// Every word of the framed output against the batch's expected one; on a
// failure, which experts are wrong (a stale map shows as whole experts).
static size_t check_batch(const Problem* q, const char* name) {
    const int set = set_of(q->batch);
    const uint32_t* got = read_back(q->out[set], q->framed_words, q->s);
    const size_t wrong = check_words(name, got, q->want[q->batch], q->framed_words);
    if (wrong) {
        const Batch* b = &q->host[q->batch];
        uint32_t bad = 0, outside = 0;
        uint8_t seen[MAX_EXPERTS] = {0};
        for (size_t w = 0; w < q->framed_words; ++w) {
            if (got[w] == q->want[q->batch][w]) continue;
            const size_t row = w / q->ldc, col = w % q->ldc;
            if (row < FRAME || row >= FRAME + q->total || col < FRAME || col >= FRAME + q->n) {
                ++outside;
                continue;
            }
            const uint32_t g = range_of(b->first_row, q->experts_of[q->batch], (uint32_t)(row - FRAME));
            bad += !seen[g], seen[g] = 1;
        }
        printf("       wrong in %u of %u experts; %u words written outside C\n", bad, q->experts_of[q->batch],
               outside);
    }
    return wrong;
}

// One part: poison the batch's output, run, check, and (if it passed) time
// it: PERF line prefix + name, 2 sum(M_g) N K flops per run.
#define GROUP_PART(q, name, ...)                                                                          \
    do {                                                                                                  \
        char name_[64];                                                                                   \
        snprintf(name_, sizeof name_, "%s%s", (q)->prefix, (name));                                       \
        poison_device((q)->out[set_of((q)->batch)], (q)->framed_words * 4, (q)->s);                       \
        CHECK_THEN_TIME(name_, (q)->cli, (q)->s, problem_flops(q), check_batch((q), name_), __VA_ARGS__); \
    } while (0)
