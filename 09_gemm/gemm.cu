// 09_gemm: a BF16 GEMM on Hopper's tensor cores, fed by the TMA, from one
// synchronous loop to cuBLAS's speed: the capstone that uses every step.
// C = A B^T (A M x K, B N x K, row-major bf16: cuBLAS's "TN"), C M x N fp32.
// Parts, each checked bit for bit and timed against cuBLAS in this process:
// 1 wgmma_sync, 2 ring (+ setmaxnreg), 3 cooperative, pingpong, 4 multicast,
// 5 persistent (+ a TMA-store epilogue), the ablation, 6 split-K, 7 cuBLAS.
// New since step 08: 09_gemm/wgmma.cuh (wgmma and its shared-memory matrix
// descriptor), 09_gemm/reference.cuh (the plain GEMM every part is checked
// against). The Makefile and tools/sanitize.sh read these lines (below):
// link: -lcublas -lcublasLt
// sanitize: --kernel-name kns=gemm_ws --kernel-name kns=wgmma_sync --kernel-name kns=reference_gemm
// sanitize-tools: memcheck synccheck
// Run: make run-09 [ARGS="--m 4096 --n 4096 --k 4096"], make check-09.
#include "common/cublas_check.h"
#include <cublasLt.h>
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/named_barrier.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"
#include "09_gemm/reference.cuh"
#include "09_gemm/wgmma.cuh"

// The parts, in order. 1 wgmma_sync: TMA + wgmma, one buffer, nothing
// overlaps. 2 ring, ring_setmaxnreg: a producer warpgroup, two consumer
// warpgroups, a full/empty mbarrier ring. 3 cooperative, pingpong
// (persistent: two warpgroups on one tile, or on alternating tiles). 4
// multicast_2x1, multicast_1x2: clusters of 2 sharing B or A by TMA
// multicast. 5 persistent (+ a banded tile order), persistent_tma_store (the
// epilogue through shared memory and the TMA); the ablation: the best kernel
// with one mechanism off at a time. 6 split-K on a K-heavy problem, its
// pieces added by TMA store-reduce, red.global.add.v4.f32 or coalesced
// atomicAdd. 7 cuBLAS at its best (cublasLt's fastest heuristic candidate:
// the reference of every PERF line, timed interleaved with each part) and
// cublas_gemmex (the plain call). Each is also checked on an edge problem
// whose sizes are no multiple of a tile (a K tail from the TMA's zero fill,
// an odd K with a NaN-padded row, a cluster's padding CTA, clipped stores).
// The check: inputs are small nonzero integers, so every product and every
// fp32 sum is exact (|sum| <= 16 K <= 2^24) in any order: every method's
// output must equal a plain GPU GEMM's bit for bit, and that one is checked
// against the CPU on a sample of rows.
// make sanitize-09 checks this program's own kernels (not cuBLAS's, which we
// can neither read nor fix) with memcheck and synccheck. racecheck is left
// out: on the H100 it stops with an internal error ("failed to handle a
// hardware exception") once a cluster kernel runs, instrumented or not.

// The tile every kernel here is built from. One stage of K is BK = 64 bf16:
// 128 bytes, exactly one row of the 128B swizzle (05_swizzle), so a TMA box
// of 64 x rows lands as rows of 128-byte lines, each 16-byte chunk XORed
// with its row % 8, which is the layout the MMA's descriptor names.
#define BK 64      // K per stage (elements): one 128-byte swizzle row of bf16
#define BN 256     // columns of a tile: the N of wgmma.m64n256k16
#define WG_M 64    // rows one warpgroup computes: the M of the MMA
#define K_STEP 16  // K of one MMA: 32 bytes, so 4 MMAs per stage
#define ROW_BYTES (BK * 2)
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
    uint32_t splits, group;     // split-K pieces (the split-K problem); the raster's band
    const struct LtBest* best;  // cuBLAS at its best on this problem (part 7)
    // A in boxes of 64 (K) x 128, 64 or 32 rows; B of 64 x 256 or 128 rows:
    // 128B-swizzled. C in boxes of 32 x 64 fp32, 128B-swizzled (TMA epilogues).
    CUtensorMap a_box[3], b_box[2], c_box;
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

// ---- Timing against cuBLAS at its best, interleaved ------------------------
// The reference of every PERF line is cuBLAS at its best on the same problem:
// of the candidates cublasLt's heuristic offers (up to LT_CANDIDATES, with a
// LT_WORKSPACE workspace, part 7), the fastest whose output is exact. It is
// timed interleaved with each part: the clocks drift under sustained load
// (by several percent on the H100, between runs and within one run),
// and a drift then moves both alike. Each part's PERF line is a fraction of
// the median of the reference runs timed beside it (cublas_reference_ms).
struct LtBest {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    void* workspace;
    bool gemmex;  // cublasGemmEx itself was the fastest
};
#define LT_CANDIDATES 32
#define LT_WORKSPACE (256u << 20)

static void lt_matmul(const Gemm* g, const cublasLtMatmulAlgo_t* algo) {
    const LtBest* b = g->best;
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasLtMatmul(b->lt, b->op, &one, g->b, b->la, g->a, b->lb, &zero, g->c, b->lc, g->c, b->lc,
                                algo, b->workspace, LT_WORKSPACE, g->s));
}

static void cublas_gemm(const Gemm* g);

// One candidate: a cublasLt algorithm, or (NULL) cublasGemmEx.
static void cublas_candidate(const Gemm* g, const cublasLtMatmulAlgo_t* algo) {
    if (algo)
        lt_matmul(g, algo);
    else
        cublas_gemm(g);
}

static void cublas_best(const Gemm* g) {
    cublas_candidate(g, g->best->gemmex ? NULL : &g->best->algo);
}

// Each part's reference time: the median of the reference runs timed beside it.
typedef struct {
    char name[64];
    float ms;
} PairedReference;
static PairedReference g_paired[MAX_MACHINE_LINES];
static int g_npaired = 0;

// for (Pair p = pair_begin(g, name); pair_next(&p);) launch;  runs
// cli->warmup untimed rounds, then cli->reps timed rounds, each a reference
// run and a part run back to back, in turns reference first and part first
// (whichever runs first after the host's last wait finds the GPU idle), each
// run between its own two events; nothing waits until the last round, so
// the GPU never idles between them. Records the part's median as PERF line
// `name` and the reference's median beside it.
typedef struct {
    const Gemm* g;
    const char* name;
    int i, warmup, reps;
    cudaEvent_t* e;  // 3 per timed round: its start, between its two runs, its end
} Pair;

static Pair pair_begin(const Gemm* g, const char* name) {
    Pair p;
    memset(&p, 0, sizeof p);
    p.g = g, p.name = name, p.warmup = g->cli->warmup, p.reps = g->cli->reps;
    p.e = (cudaEvent_t*)xmalloc(3 * sizeof(cudaEvent_t) * (size_t)p.reps, "the interleaved timing's events");
    for (int i = 0; i < 3 * p.reps; ++i) CUDA_CHECK(cudaEventCreate(&p.e[i]));
    return p;
}

// Round r: [e0] reference [e1] part [e2] when r is even, [e0] part [e1] reference [e2] when odd.
static void pair_event(const Pair* p, int round, int which) {
    if (round >= p->warmup) CUDA_CHECK(cudaEventRecord(p->e[3 * (round - p->warmup) + which], p->g->s));
}

static void pair_finish(const Pair* p) {
    CUDA_CHECK(cudaEventSynchronize(p->e[3 * p->reps - 1]));
    float part[MAX_REPS], ref[MAX_REPS];
    for (int r = 0; r < p->reps; ++r) {
        const cudaEvent_t* e = p->e + 3 * r;
        const bool ref_first = (p->warmup + r) % 2 == 0;
        CUDA_CHECK(cudaEventElapsedTime(ref_first ? &ref[r] : &part[r], e[0], e[1]));
        CUDA_CHECK(cudaEventElapsedTime(ref_first ? &part[r] : &ref[r], e[1], e[2]));
    }
    for (int i = 0; i < 3 * p->reps; ++i) CUDA_CHECK(cudaEventDestroy(p->e[i]));
    free(p->e);
    char hung[REPORT_CAP], what[80];
    if (take_wait_report(hung, sizeof hung)) {  // a bounded wait gave up in the timed runs
        snprintf(what, sizeof what, "%s_timed_runs", p->name);
        report_check_hung(what, 1, 1, hung);
        return;
    }
    if (g_npaired == MAX_MACHINE_LINES) die_internal("more than %d paired parts", MAX_MACHINE_LINES);
    PairedReference* pr = &g_paired[g_npaired++];
    snprintf(pr->name, sizeof pr->name, "%s", p->name);
    pr->ms = median_of(ref, p->reps);
    record_perf(p->name, median_of(part, p->reps), gemm_flops(p->g));
}

// Before each part run: closes the round whose part just ran, opens the next.
static int pair_next(Pair* p) {
    if (p->i > 0) {
        const int r = p->i - 1;
        if (r % 2) {  // part first: the reference's run closes the round
            pair_event(p, r, 1);
            cublas_best(p->g);
        }
        pair_event(p, r, 2);
    }
    if (p->i == p->warmup + p->reps) {
        pair_finish(p);
        return 0;
    }
    const int r = p->i++;
    pair_event(p, r, 0);
    if (r % 2 == 0) {  // reference first
        cublas_best(p->g);
        pair_event(p, r, 1);
    }
    return 1;
}

// One part: poison the framed output, launch, check, and (if `timed` and the
// problem is timed) time it interleaved with the reference, as PERF line
// prefix + name with 2 M N K flops per run. A failed part is not timed.
#define GEMM_PART(name, g, timed, tail, ...)                                           \
    do {                                                                               \
        char name_[64];                                                                \
        snprintf(name_, sizeof name_, "%s%s", (g)->prefix, (name));                    \
        poison_device((g)->out, (g)->framed_words * 4, (g)->s);                        \
        __VA_ARGS__;                                                                   \
        CHECK_LAUNCH();                                                                \
        if (check_gemm(name_, (g), (tail)) == 0 && (timed) && timing_wanted((g)->cli)) \
            for (Pair p_ = pair_begin((g), name_); pair_next(&p_);) {                  \
                __VA_ARGS__;                                                           \
                CHECK_LAUNCH();                                                        \
            }                                                                          \
    } while (0)

// The reference itself: checked like a part, timed alone (its PERF line reads 100 %).
#define GEMM_REFERENCE(g)                                                                          \
    do {                                                                                           \
        char name_[64];                                                                            \
        snprintf(name_, sizeof name_, "%scublas", (g)->prefix);                                    \
        poison_device((g)->out, (g)->framed_words * 4, (g)->s);                                    \
        CHECK_THEN_TIME(name_, (g)->cli, (g)->s, gemm_flops(g), check_gemm(name_, (g), TAIL_NONE), \
                        cublas_best(g));                                                           \
    } while (0)

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

// ---- The epilogue every kernel shares: registers to C -------------------------
// Thread t of a warpgroup holds 128 accumulators of a 64 x 256 tile whose
// top-left element is C[row0][col0] (wgmma.cuh gives the fragment): for each
// 8-column block i, two adjacent columns in row 16 w + l / 4 and the same two
// in the row 8 below. One 8-byte store per pair: the 4 lanes of a row write
// 32 contiguous bytes, a whole sector. A tile wholly inside C is stored
// without a test; an edge tile writes only what lies inside.
static __device__ __forceinline__ void store_tile(const float (&d)[128], float* c, uint32_t m, uint32_t n,
                                                  uint32_t ldc, uint32_t row0, uint32_t col0) {
    const uint32_t t = threadIdx.x % 128, r = row0 + 16 * (t / 32) + t % 32 / 4, c0 = col0 + 2 * (t % 4);
    if (row0 + WG_M <= m && col0 + BN <= n) {
        float* p = c + (size_t)r * ldc + c0;
#pragma unroll
        for (uint32_t i = 0; i < BN / 8; ++i) {
            *(float2*)(p + 8 * i) = make_float2(d[4 * i], d[4 * i + 1]);
            *(float2*)(p + 8 * (size_t)ldc + 8 * i) = make_float2(d[4 * i + 2], d[4 * i + 3]);
        }
        return;
    }
#pragma unroll
    for (uint32_t h = 0; h < 2; ++h) {
        if (r + 8 * h >= m) continue;
        float* p = c + (size_t)(r + 8 * h) * ldc;
#pragma unroll
        for (uint32_t i = 0; i < BN / 8; ++i) {
            const uint32_t col = c0 + 8 * i;
            if (col + 1 < n)
                *(float2*)(p + col) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            else if (col < n)
                p[col] = d[4 * i + 2 * h];
        }
    }
}

// One stage's MMAs for one warpgroup: its 64 rows of A (a_rows) times the
// 256 rows of B, over the stage's 64 elements of K, as 4 MMAs of K = 16,
// each reading 32 bytes further into every 128-byte row. `accumulate` 0
// starts the tile: the first MMA overwrites the accumulators.
static __device__ __forceinline__ void mma_stage(float (&d)[128], const uint8_t* a_rows,
                                                 const uint8_t* b_rows, bool accumulate) {
    // LAB-BEGIN: the k-block's MMAs as one group: a descriptor for A's and for B's rows (09_gemm/wgmma.cuh), the fence before the first MMA, BK / K_STEP MMAs along K (where does each one's K start, in the descriptor's units?), accumulating except in the very first, then the commit
    const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
    wgmma_fence();
#pragma unroll
    for (uint32_t s = 0; s < BK / K_STEP; ++s)  // + 2 in the start field: 32 bytes, 16 bf16 of K
        wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);
    wgmma_commit_group();
    // LAB-STUB: (void)d, (void)a_rows, (void)b_rows, (void)accumulate;
    // LAB-END
}

// ---- Part 1: wgmma_sync -------------------------------------------------------
// One block per 128 x 256 tile of C, two warpgroups of 64 rows each, one
// buffer: thread 0 loads the k-block's A box (64 x 128) and B box (64 x 256)
// with the TMA, every thread waits on the barrier, each warpgroup issues its
// 4 MMAs and waits for them, and the block syncs before the next load may
// overwrite what the MMAs read. Loads and MMAs take turns: nothing overlaps.
// The MMAs read the boxes where the TMA put them: the tensor maps and the
// descriptors (09_gemm/wgmma.cuh, field by field) both say 128B swizzle, and
// every box starts 1024-byte aligned (A at 0, B 16 KiB further).
#define SYNC_M 128
#define SYNC_THREADS (SYNC_M / WG_M * 128)
#define SYNC_STAGE_BYTES ((SYNC_M + BN) * ROW_BYTES)

__global__ void __launch_bounds__(SYNC_THREADS)
    wgmma_sync(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, float* c,
               uint32_t m, uint32_t n, uint32_t ldc, uint32_t kblocks, uint32_t tiles_n) {
    uint8_t* a_tile = tma_smem_base<1024>();        // [SYNC_M][64] bf16, 128B-swizzled, 1024-byte aligned
    uint8_t* b_tile = a_tile + SYNC_M * ROW_BYTES;  // [BN][64] bf16, likewise (16 KiB further)
    __shared__ __align__(8) uint64_t bar;
    const uint32_t tm = blockIdx.x / tiles_n, tn = blockIdx.x % tiles_n, wg = threadIdx.x / 128;
    mbar_init_cta(&bar, 1, 1);
    float d[128];
    for (uint32_t kb = 0; kb < kblocks; ++kb) {
        if (threadIdx.x == 0) {
            // The whole boxes arrive, out-of-bounds parts as zeros: the K
            // tail and the rows past M or N add nothing to any sum.
            mbar_arrive_expect_tx(&bar, SYNC_STAGE_BYTES);
            tma_load_2d(a_tile, &a_map, (int32_t)(kb * BK), (int32_t)(tm * SYNC_M), &bar);
            tma_load_2d(b_tile, &b_map, (int32_t)(kb * BK), (int32_t)(tn * BN), &bar);
        }
        MBAR_WAIT(&bar, kb & 1);
        mma_stage(d, a_tile + wg * WG_M * ROW_BYTES, b_tile, kb > 0);
        wgmma_wait_group<0>();
        __syncthreads();  // both warpgroups' MMAs have read the buffer: the next load may overwrite it
    }
    wgmma_fence_operands(d);
    store_tile(d, c, m, n, ldc, tm * SYNC_M + wg * WG_M, tn * BN);
}

static void launch_wgmma_sync(const Gemm* g) {
    const uint32_t tiles_n = (g->n + BN - 1) / BN, tiles = tiles_n * ((g->m + SYNC_M - 1) / SYNC_M);
    const size_t smem = tma_smem_bytes(SYNC_STAGE_BYTES, 1024);
    wgmma_sync<<<tiles, SYNC_THREADS, smem, g->s>>>(g->a_box[0], g->b_box[0], g->c, g->m, g->n, g->ldc,
                                                    (g->k + BK - 1) / BK, tiles_n);
}

// ---- Parts 2-6: one warp-specialized kernel, its mechanisms as knobs ----------
// A RING of STAGES buffers, each one k-block of A (BM x 64) and of B
// (256 x 64), with two mbarriers per stage (step 03's ring): full[s], which
// the producer arms with the stage's bytes and the TMA completes, and
// empty[s], on which every consumer warpgroup that read the stage arrives
// once its MMAs are done with it. The roles:
//   producer   warpgroup 0 (SPECIALIZED): one elected lane of its first warp
//              issues every TMA load; the other 127 threads only give their
//              registers away (setmaxnreg.dec) and wait at the end;
//   consumers  two warpgroups, each 64 rows x 256 columns of accumulators,
//              128 fp32 registers per thread.
// A consumer waits on full[s], issues the stage's 4 MMAs, commits them, and
// waits until at most ONE batch is pending (wgmma_wait_group<1>): the batch
// just issued keeps the tensor cores busy while the one before is known
// done reading ITS stage, which the consumer then hands back (empty). It
// cannot hand back the stage it just issued on: its MMAs still read it.
//
// The knobs (Config), each a template parameter, so that every variant is
// the same kernel with one thing changed:
//   MODE         COOPERATIVE: both warpgroups on one 128 x 256 tile (rows 0-63
//                and 64-127; each stage is read by both); PINGPONG: each
//                warpgroup on its own 64 x 256 tiles, taking turns (unit 0
//                to warpgroup 0, unit 1 to warpgroup 1, ...): while one
//                stores its tile, the other computes, so the epilogue hides
//                behind the other's MMAs. The stages of a unit are read by
//                one warpgroup.
//   STAGES       the ring's depth.
//   SPECIALIZED  false: no producer warpgroup; consumer thread 0 also issues
//                the loads, each one as soon as a stage comes back (the
//                classic multistage loop). setmaxnreg then has nothing to move.
//   SETMAXNREG   the producer keeps 40 registers per thread, the consumers
//                take 232: 128 * 40 + 256 * 232 = 64512 of the SM's 65536
//                (at launch all 384 threads get 168, the most that fits).
//   CM x CN      the cluster: CM CTAs on consecutive tiles down M share B's
//                tile, CN across N share A's; each loads 1/CM of B (1/CN of
//                A) and MULTICASTS it to all of them (step 07). A stage is
//                then written by several CTAs' copies, so it may be reloaded
//                only when the consumers of EVERY CTA that receives it are
//                done: each consumer warpgroup arrives on empty[s] of every
//                CTA in the cluster (count READERS x CS), with the default
//                .release.cta semantics as CUTLASS does (cluster.cuh says why).
//   EPI          how the accumulators reach C (below, after the kernel).
// And at run time: persistent (one CTA per SM looping over units) or one CTA
// per unit; the raster order (`group` rows of cluster tiles per band); and
// split-K (`splits` pieces of K per tile, each a unit, added into C).
enum { COOPERATIVE, PINGPONG };
enum { EPI_DIRECT, EPI_TMA_STORE, EPI_TMA_REDUCE, EPI_RED_V4, EPI_ATOMIC };
#define EPI_COLS 32  // an epilogue box: 64 rows x 32 fp32 = 128-byte rows, the 128B swizzle span
#define EPI_BOX_BYTES (WG_M * EPI_COLS * 4)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define MAX_SMEM_PER_BLOCK (227 * 1024)  // sm_90's opt-in limit per block, static shared memory included

template <int MODE_, int STAGES_, bool SPECIALIZED_, bool SETMAXNREG_, int CM_, int CN_, int EPI_>
struct Config {
    static constexpr int MODE = MODE_, STAGES = STAGES_, CM = CM_, CN = CN_, CS = CM_ * CN_, EPI = EPI_;
    static constexpr bool SPECIALIZED = SPECIALIZED_, SETMAXNREG = SETMAXNREG_;
    static constexpr int BM = MODE == COOPERATIVE ? 2 * WG_M : WG_M;  // rows of a unit's tile
    static constexpr int READERS = MODE == COOPERATIVE ? 2 : 1;       // warpgroups that read a stage
    static constexpr int THREADS = (SPECIALIZED ? 128 : 0) + 2 * 128;
    static constexpr int A_BYTES = BM * ROW_BYTES, STAGE_BYTES = (BM + BN) * ROW_BYTES;
    static constexpr int A_ROWS = BM / CN, B_ROWS = BN / CM;  // the slice of A and of B this CTA loads
    static constexpr bool STAGED_EPILOGUE =
        EPI == EPI_TMA_STORE || EPI == EPI_TMA_REDUCE || EPI == EPI_ATOMIC;
    static constexpr int EPI_BYTES = STAGED_EPILOGUE ? 2 * 2 * EPI_BOX_BYTES : 0;    // 2 boxes per consumer
    static constexpr size_t SMEM = (size_t)STAGES * STAGE_BYTES + EPI_BYTES + 1024;  // + 1024: alignment
    static_assert(SMEM + 256 <= MAX_SMEM_PER_BLOCK, "the stages do not fit in shared memory");
    static_assert(SPECIALIZED || (!SETMAXNREG && MODE == COOPERATIVE),
                  "setmaxnreg and pingpong need a producer warpgroup");
    static_assert(CS <= 2 && STAGES >= 2, "clusters of 1 or 2 CTAs, 2 or more stages");
    // The same kernel with one knob changed (the ablation):
    using NoMulticast = Config<MODE_, STAGES_, SPECIALIZED_, SETMAXNREG_, 1, 1, EPI_>;
    using NoSetmaxnreg = Config<MODE_, STAGES_, SPECIALIZED_, false, CM_, CN_, EPI_>;
    using NoSpecialization = Config<MODE_, STAGES_, false, false, CM_, CN_, EPI_>;
    template <int S>
    using WithStages = Config<MODE_, S, SPECIALIZED_, SETMAXNREG_, CM_, CN_, EPI_>;
    template <int E>
    using WithEpilogue = Config<MODE_, STAGES_, SPECIALIZED_, SETMAXNREG_, CM_, CN_, E>;
};

typedef struct {
    float* c;  // C's first element; rows ldc floats apart
    uint32_t m, n, ldc;
    uint32_t kblocks, splits;     // k-blocks of 64 in K; split-K pieces per tile (1: none)
    uint32_t ctiles_m, ctiles_n;  // the grid of cluster tiles (CM x CN tiles of BM x 256 each)
    uint32_t group;               // raster: bands of `group` cluster-tile rows (1: row-major)
} GemmArgs;

// A unit of work: a tile of C (rows row0.., columns col0..) and a range of k-blocks.
typedef struct {
    uint32_t row0, col0, kb_begin, kb_end;
} Work;

// Unit u of this CTA (rank in its cluster). Units number the cluster tiles
// split-major (all tiles of split 0, then of split 1, ...); within a split,
// bands of `group` cluster-tile rows, each walked column by column, top to
// bottom: the tiles in flight at once share few rows of A and few columns
// of B, which stay in L2 while they are reused (group 1: plain row-major).
template <class Cfg>
static __device__ __forceinline__ Work unit_work(const GemmArgs& g, uint32_t u, uint32_t rank) {
    const uint32_t ctiles = g.ctiles_m * g.ctiles_n, tile = u % ctiles, split = u / ctiles;
    const uint32_t per_band = g.group * g.ctiles_n, first = tile / per_band * g.group, rest = tile % per_band;
    const uint32_t band_rows = min(g.group, g.ctiles_m - first);
    const uint32_t ctm = first + rest % band_rows, ctn = rest / band_rows;
    Work w;
    w.row0 = (ctm * Cfg::CM + rank / Cfg::CN) * Cfg::BM;
    w.col0 = (ctn * Cfg::CN + rank % Cfg::CN) * BN;
    w.kb_begin = split * g.kblocks / g.splits;  // splits <= kblocks: no range is empty
    w.kb_end = (split + 1) * g.kblocks / g.splits;
    return w;
}

// The producer's side of the ring: walks this CTA's units and their
// k-blocks, one stage per call to issue(). Position `pos` counts every stage
// ever loaded: stage pos % STAGES, in its (pos / STAGES)-th round.
template <class Cfg>
struct Loader {
    const CUtensorMap *a_map, *b_map;
    uint8_t* stages;
    uint64_t *full, *empty;
    const GemmArgs* g;
    uint32_t rank, unit, stride, units, kb, pos;
    Work w;

    __device__ __forceinline__ void start(uint32_t first) {
        unit = first, pos = 0;
        if (unit < units) w = unit_work<Cfg>(*g, unit, rank), kb = w.kb_begin;
    }

    // Load the next k-block into the next stage; false when there is none
    // (or a bounded wait gave up: then nothing more is issued).
    __device__ __forceinline__ bool issue() {
        if (unit >= units) return false;
        const uint32_t s = pos % Cfg::STAGES;
        if (pos >= Cfg::STAGES) {  // round r > 0: wait until round r - 1's readers are done
            const uint32_t parity = (pos / Cfg::STAGES - 1) & 1;
            const bool free =
                Cfg::CS > 1 ? MBAR_WAIT_CLUSTER(&empty[s], parity) : MBAR_WAIT(&empty[s], parity);
            if (!free) return (unit = units), false;
        }
        uint8_t* stage = stages + s * Cfg::STAGE_BYTES;
        const uint32_t rank_m = rank / Cfg::CN, rank_n = rank % Cfg::CN;
        const int32_t k0 = (int32_t)(kb * BK);
        // Every byte of the stage lands in THIS CTA, whoever issued it: arm for all.
        mbar_arrive_expect_tx(&full[s], Cfg::STAGE_BYTES);
        // A: the CN CTAs of this cluster row share the rows; this one loads
        // slice rank_n and, with CN > 1, multicasts it to all CN.
        uint8_t* a_dst = stage + rank_n * Cfg::A_ROWS * ROW_BYTES;
        const int32_t a_row = (int32_t)(w.row0 + rank_n * Cfg::A_ROWS);
        if (Cfg::CN > 1)
            tma_load_2d_multicast(a_dst, a_map, k0, a_row, &full[s],
                                  (uint16_t)(((1u << Cfg::CN) - 1) << (rank_m * Cfg::CN)));
        else
            tma_load_2d(a_dst, a_map, k0, a_row, &full[s]);
        // B: the CM CTAs of this cluster column share it; slice rank_m.
        uint8_t* b_dst = stage + Cfg::A_BYTES + rank_m * Cfg::B_ROWS * ROW_BYTES;
        const int32_t b_row = (int32_t)(w.col0 + rank_m * Cfg::B_ROWS);
        if (Cfg::CM > 1) {
            uint16_t mask = 0;
            for (uint32_t i = 0; i < Cfg::CM; ++i) mask |= (uint16_t)(1u << (i * Cfg::CN + rank_n));
            tma_load_2d_multicast(b_dst, b_map, k0, b_row, &full[s], mask);
        } else {
            tma_load_2d(b_dst, b_map, k0, b_row, &full[s]);
        }
        ++pos;
        if (++kb == w.kb_end && (unit += stride) < units) w = unit_work<Cfg>(*g, unit, rank), kb = w.kb_begin;
        return true;
    }
};

// A consumer warpgroup hands stage s back: one arrival per warpgroup on each
// CTA of the cluster (thread r arrives on CTA r's barrier). wait_group in
// one thread covers the whole warpgroup's MMAs: an MMA is one operation of
// the warpgroup, started only once all 4 warps issued it.
template <class Cfg>
static __device__ __forceinline__ void release_stage(uint64_t* empty, uint32_t tid) {
    if (Cfg::CS == 1) {
        if (tid == 0) mbar_arrive(empty);
    } else if (tid < Cfg::CS) {
        mbar_arrive_remote(empty, tid);
    }
}

// bar.sync of one consumer warpgroup (ids 1 and 2; 0 is __syncthreads()).
static __device__ __forceinline__ void warpgroup_barrier(uint32_t wg) {
    if (wg == 0)
        named_barrier_sync<1, 128>();
    else
        named_barrier_sync<2, 128>();
}

// Ping-pong's order (CUTLASS calls it an ordered barrier): the two consumer
// warpgroups take turns at the k-loop, unit by unit. The turn is not only
// for speed: without it, a warpgroup could wait on a stage's full barrier
// two or more phases before the producer gets there; the parity it waits for
// is then that of a phase already complete (the other unit's), the wait
// returns at once, and it multiplies the other unit's tiles. Barrier 3 is "warpgroup 0's turn", 4 "warpgroup
// 1's": each is 128 waiting threads plus 128 arriving ones.
static __device__ __forceinline__ void pingpong_wait_turn(uint32_t wg) {
    if (wg == 0)
        named_barrier_sync<3, 256>();
    else
        named_barrier_sync<4, 256>();
}
static __device__ __forceinline__ void pingpong_pass_turn(uint32_t wg) {
    if (wg == 0)
        named_barrier_arrive<4, 256>();
    else
        named_barrier_arrive<3, 256>();
}

// ---- The epilogues: how 128 accumulators per thread reach C ----------------
// EPI_DIRECT     store_tile: 8-byte stores from registers (above).
// EPI_TMA_STORE  through shared memory: the warpgroup writes 32 columns at a
//                time into a 64 x 32 fp32 box (128-byte rows, 128B-swizzled:
//                a warp's 8-byte stores hit 8 rows x 32 bytes, all 32 banks
//                twice, no conflict), fences, and one thread stores the box
//                with the TMA (step 04), which clips it at C's edges. Two
//                boxes per warpgroup, taken in turns by a count that runs on
//                across tiles (an edge tile may have an odd number of
//                chunks): the store of one overlaps the filling of the other,
//                and wait_group.read 1 says the older store is done reading.
// EPI_TMA_REDUCE the same with cp.reduce.async.bulk.tensor .add (step 07):
//                the L2 adds the box into C, for split-K.
// EPI_RED_V4     red.global.add.v4.f32 from registers: a shuffle between
//                lanes 2j and 2j+1 gives each lane 4 consecutive columns of
//                one row (the even lane row r, the odd lane row r + 8).
// EPI_ATOMIC     through the same box, then atomicAdd by rows: a warp adds
//                32 consecutive floats per instruction (coalesced).
template <int EPI>
static __device__ __forceinline__ void staged_epilogue(const float (&d)[128], const GemmArgs& g,
                                                       const CUtensorMap* c_map, float* boxes, uint32_t row0,
                                                       uint32_t col0, uint32_t tid, uint32_t wg,
                                                       uint32_t& chunks) {
    if (row0 >= g.m) return;  // a tile of the cluster's padding, past C: the whole warpgroup skips it
    const uint32_t warp = tid / 32, lane = tid % 32, r = 16 * warp + lane / 4, q = lane % 4;
#pragma unroll
    for (uint32_t ch = 0; ch < BN / EPI_COLS; ++ch) {
        if (col0 + ch * EPI_COLS >= g.n) break;                   // the same for the whole warpgroup
        float* box = boxes + chunks++ % 2 * (EPI_BOX_BYTES / 4);  // [64][32] fp32, 128B-swizzled
        if (EPI != EPI_ATOMIC) {
            if (tid == 0) bulk_wait_group_read<1>();  // the store that last read this box is done reading
            warpgroup_barrier(wg);
        }
#pragma unroll
        for (uint32_t j = 0; j < EPI_COLS / 8; ++j) {
            const uint32_t i = ch * (EPI_COLS / 8) + j;  // the accumulators' 8-column block
#pragma unroll
            for (uint32_t h = 0; h < 2; ++h) {
                const uint32_t row = r + 8 * h, offset = row * 128 + (8 * j + 2 * q) * 4;
                *(float2*)((uint8_t*)box + (offset ^ (row % 8) << 4)) =
                    make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            }
        }
        if (EPI != EPI_ATOMIC) {
            SHADOW_WROTE(box, EPI_BOX_BYTES);  // (the shadow build checks the fence and the read wait)
            fence_proxy_async_shared();        // every writer, before the barrier
        }
        warpgroup_barrier(wg);
        if (EPI == EPI_ATOMIC) {
            const uint32_t col = col0 + ch * EPI_COLS + lane;
#pragma unroll 4
            for (uint32_t k = 0; k < 16; ++k) {
                const uint32_t row = 16 * warp + k;
                const float v =
                    *(const float*)((const uint8_t*)box + ((row * 128 + lane * 4) ^ (row % 8) << 4));
                if (row0 + row < g.m && col < g.n) atomicAdd(&g.c[(size_t)(row0 + row) * g.ldc + col], v);
            }
        } else if (tid == 0) {
            if (EPI == EPI_TMA_STORE)
                tma_store_2d(c_map, (int32_t)(col0 + ch * EPI_COLS), (int32_t)row0, box);
            else
                tma_reduce_2d<RED_ADD>(c_map, (int32_t)(col0 + ch * EPI_COLS), (int32_t)row0, box);
            bulk_commit_group();
        }
    }
}

static __device__ __forceinline__ void red_tile(const float (&d)[128], const GemmArgs& g, uint32_t row0,
                                                uint32_t col0, uint32_t tid) {
    const uint32_t lane = tid % 32, q = lane % 4, odd = q & 1;
    const uint32_t row = row0 + 16 * (tid / 32) + lane / 4 + 8 * odd;
#pragma unroll
    for (uint32_t i = 0; i < BN / 8; ++i) {
        // The even lane gives away its row-(r + 8) pair, the odd lane its row-r pair.
        const float o0 = __shfl_xor_sync(0xFFFFFFFFu, odd ? d[4 * i] : d[4 * i + 2], 1);
        const float o1 = __shfl_xor_sync(0xFFFFFFFFu, odd ? d[4 * i + 1] : d[4 * i + 3], 1);
        const float v0 = odd ? o0 : d[4 * i], v1 = odd ? o1 : d[4 * i + 1];
        const float v2 = odd ? d[4 * i + 2] : o0, v3 = odd ? d[4 * i + 3] : o1;
        const uint32_t col = col0 + 8 * i + 2 * (q & 2);  // 4 columns from a multiple of 4: 16-byte aligned
        if (row >= g.m) continue;
        float* p = g.c + (size_t)row * g.ldc + col;
        if (col + 3 < g.n) {
            red_add_v4_f32(p, v0, v1, v2, v3);
        } else {
            const float v[4] = {v0, v1, v2, v3};
#pragma unroll
            for (uint32_t e = 0; e < 4; ++e)
                if (col + e < g.n) atomicAdd(p + e, v[e]);
        }
    }
}

template <class Cfg>
static __device__ __forceinline__ void epilogue(const float (&d)[128], const GemmArgs& g,
                                                const CUtensorMap* c_map, float* boxes, uint32_t row0,
                                                uint32_t col0, uint32_t tid, uint32_t wg, uint32_t& chunks) {
    if constexpr (Cfg::EPI == EPI_DIRECT)
        store_tile(d, g.c, g.m, g.n, g.ldc, row0, col0);
    else if constexpr (Cfg::EPI == EPI_RED_V4)
        red_tile(d, g, row0, col0, tid);
    else
        staged_epilogue<Cfg::EPI>(d, g, c_map, boxes, row0, col0, tid, wg, chunks);
}

// A consumer warpgroup: every unit of this CTA (in PINGPONG every other
// one), k-block by k-block through the ring, then the epilogue.
template <class Cfg>
static __device__ __forceinline__ void consume(const GemmArgs& g, const CUtensorMap* c_map,
                                               Loader<Cfg>& loader, uint8_t* stages, float* epi_boxes,
                                               uint64_t* full, uint64_t* empty, uint32_t first,
                                               uint32_t stride, uint32_t units, uint32_t rank) {
    const uint32_t wg = threadIdx.x / 128 - (Cfg::SPECIALIZED ? 1 : 0), tid = threadIdx.x % 128;
    const bool issuer = !Cfg::SPECIALIZED && threadIdx.x == 0;  // no producer: this thread loads
    float* boxes = epi_boxes + wg * 2 * (EPI_BOX_BYTES / 4);
    const uint32_t a_offset = Cfg::MODE == COOPERATIVE ? wg * WG_M * ROW_BYTES : 0;
    if (issuer)
        for (int s = 0; s < Cfg::STAGES; ++s) loader.issue();  // fill the ring
    __syncwarp();
    float d[128];
    uint32_t pos = 0, i = 0, chunks = 0;  // chunks: epilogue boxes filled so far (staged epilogues)
    for (uint32_t unit = first; unit < units; unit += stride, ++i) {
        const Work w = unit_work<Cfg>(g, unit, rank);
        const uint32_t kblocks = w.kb_end - w.kb_begin;
        if (Cfg::MODE == PINGPONG && i % 2 != wg) {  // the other warpgroup's unit
            pos += kblocks;
            continue;
        }
        if (Cfg::MODE == PINGPONG && i > 0) pingpong_wait_turn(wg);  // the other one's k-loop is done
        for (uint32_t j = 0; j < kblocks; ++j, ++pos) {
            const uint32_t s = pos % Cfg::STAGES;
            uint8_t* stage = stages + s * Cfg::STAGE_BYTES;
            MBAR_WAIT(&full[s], (pos / Cfg::STAGES) & 1);
            mma_stage(d, stage + a_offset, stage + Cfg::A_BYTES, j > 0);
            if (j > 0) {
                wgmma_wait_group<1>();  // the batch before this one is done: its stage is free
                release_stage<Cfg>(&empty[(pos - 1) % Cfg::STAGES], tid);
                if (issuer) loader.issue();
                __syncwarp();
            }
        }
        // Ping-pong: the tensor cores go to the other warpgroup, whose next
        // unit's k-loop overlaps this one's epilogue.
        if (Cfg::MODE == PINGPONG && unit + stride < units) pingpong_pass_turn(wg);
        wgmma_wait_group<0>();
        wgmma_fence_operands(d);
        release_stage<Cfg>(&empty[(pos - 1) % Cfg::STAGES], tid);
        if (issuer) loader.issue();
        __syncwarp();
        epilogue<Cfg>(d, g, c_map, boxes, w.row0 + (Cfg::MODE == COOPERATIVE ? wg * WG_M : 0), w.col0, tid,
                      wg, chunks);
    }
    if (Cfg::EPI == EPI_TMA_STORE || Cfg::EPI == EPI_TMA_REDUCE)
        if (tid == 0) bulk_wait_group<0>();  // every store done before the block ends
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    gemm_ws(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
            const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmArgs g) {
    __shared__ __align__(8) uint64_t full[Cfg::STAGES], empty[Cfg::STAGES];
    uint8_t* stages = tma_smem_base<1024>();  // [STAGES][A: BM x 64 | B: 256 x 64] bf16, 128B-swizzled
    float* epi_boxes = (float*)(stages + Cfg::STAGES * Cfg::STAGE_BYTES);  // [2 consumers][2][64][32] fp32
    const uint32_t rank = Cfg::CS > 1 ? cluster_ctarank() : 0;
    const uint32_t units = g.ctiles_m * g.ctiles_n * g.splits;
    const uint32_t first = blockIdx.x / Cfg::CS, stride = gridDim.x / Cfg::CS;  // this cluster's units
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(&full[s], 1);                        // the producer's arrive.expect_tx
            mbar_init(&empty[s], Cfg::READERS * Cfg::CS);  // each reader warpgroup of each CTA
        }
        mbar_fence_init();
    }
    // The inits are visible to the cluster before any CTA multicasts into,
    // or arrives on, a peer's barriers.
    if (Cfg::CS > 1)
        cluster_sync();
    else
        __syncthreads();
    Loader<Cfg> loader = {&a_map, &b_map, stages, full, empty, &g, rank, 0, stride, units, 0, 0, {}};
    loader.start(first);
    if (Cfg::SPECIALIZED && threadIdx.x < 128) {
        if constexpr (Cfg::SETMAXNREG) setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            if (elect_one_sync())
                while (loader.issue()) {
                }
            __syncwarp();
        }
    } else {
        if constexpr (Cfg::SETMAXNREG) setmaxnreg_inc<CONSUMER_REGS>();
        consume<Cfg>(g, &c_map, loader, stages, epi_boxes, full, empty, first, stride, units, rank);
    }
    // No CTA leaves while a peer may still arrive on its barriers: every
    // multicast into this CTA has landed (its consumers waited for each full
    // stage), but the peers' consumers may still be releasing stages here.
    if (Cfg::CS > 1) cluster_sync();
}

// The configurations measured. The best one (so far: to be confirmed on the
// GPU) and the ablation's variants of it; the earlier parts' kernels.
using Best = Config<COOPERATIVE, 4, true, true, 2, 1, EPI_DIRECT>;
using Ring = Best::NoMulticast::NoSetmaxnreg;  // part 2: one CTA per tile, no register move
using RingRegs = Best::NoMulticast;            // part 2 with setmaxnreg; part 3 cooperative
using Pingpong = Config<PINGPONG, 5, true, true, 1, 1, EPI_DIRECT>;  // 40 KiB stages: 5 fit
using Multicast1x2 = Config<COOPERATIVE, 4, true, true, 1, 2, EPI_DIRECT>;

template <class Cfg>
static CUtensorMap a_map_for(const Gemm* g) {
    return g->a_box[Cfg::A_ROWS == 128 ? 0 : Cfg::A_ROWS == 64 ? 1 : 2];
}
template <class Cfg>
static CUtensorMap b_map_for(const Gemm* g) {
    return g->b_box[Cfg::B_ROWS == 256 ? 0 : 1];
}

// The launch of `clusters` clusters of this kernel: the cluster dimension is
// a launch attribute (CS CTAs along x), none for CS == 1. attr must outlive cfg.
template <class Cfg>
static cudaLaunchConfig_t cluster_launch(uint32_t clusters, cudaStream_t s, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = Cfg::CS, attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cfg.gridDim = dim3(clusters * Cfg::CS), cfg.blockDim = dim3(Cfg::THREADS);
    cfg.dynamicSmemBytes = Cfg::SMEM, cfg.stream = s;
    cfg.attrs = attr, cfg.numAttrs = Cfg::CS > 1;
    return cfg;
}

// How many clusters of this kernel run at once (one CTA per SM: the stages
// leave room for one), asked once per kernel.
template <class Cfg>
static int resident_clusters(void) {
    static int clusters = 0;
    if (!clusters) {
        CUDA_CHECK(cudaFuncSetAttribute((const void*)gemm_ws<Cfg>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Cfg::SMEM));
        if (Cfg::CS == 1) {
            clusters = persistent_grid((const void*)gemm_ws<Cfg>, Cfg::THREADS, Cfg::SMEM);
        } else {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = cluster_launch<Cfg>(1, 0, &attr);
            CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, (const void*)gemm_ws<Cfg>, &cfg));
        }
        if (clusters < 1) die_internal("gemm_ws: no cluster of %d CTAs fits on this GPU", Cfg::CS);
    }
    return clusters;
}

// persistent: as many CTAs as run at once, each looping over units; else one
// CTA (one cluster) per unit.
template <class Cfg>
static void launch_gemm(const Gemm* g, bool persistent, uint32_t group, uint32_t splits) {
    const uint32_t tiles_m = (g->m + Cfg::BM - 1) / Cfg::BM, tiles_n = (g->n + BN - 1) / BN;
    GemmArgs a;
    a.c = g->c, a.m = g->m, a.n = g->n, a.ldc = g->ldc;
    a.kblocks = (g->k + BK - 1) / BK, a.splits = splits;
    a.ctiles_m = (tiles_m + Cfg::CM - 1) / Cfg::CM, a.ctiles_n = (tiles_n + Cfg::CN - 1) / Cfg::CN;
    a.group = group;
    const uint32_t units = a.ctiles_m * a.ctiles_n * splits, resident = (uint32_t)resident_clusters<Cfg>();
    const uint32_t clusters = persistent && resident < units ? resident : units;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_launch<Cfg>(clusters, g->s, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemm_ws<Cfg>, a_map_for<Cfg>(g), b_map_for<Cfg>(g), g->c_box, a));
}

// Split-K adds every piece into C: C starts at zero (the interior only: the
// frame stays poisoned), and the zeroing is part of the timed work.
template <class Cfg>
static void launch_split_k(const Gemm* g) {
    CUDA_CHECK(cudaMemset2DAsync(g->c, (size_t)g->ldc * 4, 0, (size_t)g->n * 4, g->m, g->s));
    launch_gemm<Cfg>(g, true, g->group, g->splits);
}

// ---- Part 7: cuBLAS -----------------------------------------------------------
// cuBLAS is column-major. Our row-major C (M x N, ldc) is, read column-major,
// C^T: an N x M matrix with leading dimension ldc. C^T = B * A^T, and our
// row-major B (N x K, ld_ab) read column-major is B^T (K x N): op T makes it
// B. Our row-major A (M x K) read column-major is A^T (K x M): op N. So
// cuBLAS computes the N x M product op(B^T) * A^T with m' = N, n' = M, k = K:
// the "TN" GEMM, both operands K-major, the layout wgmma reads without
// transposes. FP32 accumulation (CUBLAS_COMPUTE_32F), fp32 output.
static void cublas_gemm(const Gemm* g) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)g->n, (int)g->m, (int)g->k, &one, g->b,
                              CUDA_R_16BF, (int)g->ld_ab, g->a, CUDA_R_16BF, (int)g->ld_ab, &zero, g->c,
                              CUDA_R_32F, (int)g->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// cuBLAS at its best: the same product through cublasLt (the layouts as
// above: B^T as K x N with op T, A^T as K x M, C^T as N x M, fp32 compute).
// Its heuristic offers candidates (kernels, tiles, split-K, cluster shapes);
// each, and cublasGemmEx, runs once on the poisoned output and is compared
// with the reference bit for bit (inputs are small integers: any summation
// order is exact), then timed (median of LT_TRIAL_RUNS); the fastest exact
// one is the reference. A check line says every candidate was exact (an
// inexact one means a wrong call, which would also make the reference look
// slower than cuBLAS is). Should none be exact, the fastest is taken anyway,
// and its own check fails. Machine-dependent (which candidates, which
// wins): a GPU line names it.
#define LT_TRIAL_RUNS 10
static long long lt_config(const cublasLtMatmulAlgo_t* a, cublasLtMatmulAlgoConfigAttributes_t which) {
    unsigned long long v = 0;  // one field of a candidate's configuration, whatever its width; -1 if absent
    size_t need = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(a, which, NULL, 0, &need) != CUBLAS_STATUS_SUCCESS ||
        need > sizeof v ||
        cublasLtMatmulAlgoConfigGetAttribute(a, which, &v, need, &need) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return (long long)v;
}

static void choose_cublas_best(Gemm* g, LtBest* b, cublasLtHandle_t lt, void* workspace) {
    memset(b, 0, sizeof *b);
    b->lt = lt, b->workspace = workspace;
    g->best = b;
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&b->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(b->op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(b->op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b->la, CUDA_R_16BF, g->k, g->n, g->ld_ab));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b->lb, CUDA_R_16BF, g->k, g->m, g->ld_ab));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b->lc, CUDA_R_32F, g->n, g->m, g->ldc));
    cublasLtMatmulPreference_t pref;
    const size_t ws = LT_WORKSPACE;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    static cublasLtMatmulHeuristicResult_t cand[LT_CANDIDATES];
    int found = 0, exact = 0, best = -1;
    bool best_exact = false;
    // No candidate for a shape (NOT_SUPPORTED) is no error: cublasGemmEx, candidate `found`, remains.
    if (cublasLtMatmulAlgoGetHeuristic(lt, b->op, b->la, b->lb, b->lc, b->lc, pref, LT_CANDIDATES, cand,
                                       &found) != CUBLAS_STATUS_SUCCESS)
        found = 0;
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    const int warm = 1, runs = g->cli->quick ? 2 : LT_TRIAL_RUNS;
    float best_ms = 0.f, ms[LT_TRIAL_RUNS];
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i <= found; ++i) {  // i == found: cublasGemmEx
        const cublasLtMatmulAlgo_t* algo = i < found ? &cand[i].algo : NULL;
        poison_device(g->out, g->framed_words * 4, g->s);
        cublas_candidate(g, algo);
        const bool same = !memcmp(read_back(g->out, g->framed_words, g->s), g->want, g->framed_words * 4);
        exact += same;
        if (best_exact && !same) continue;  // an exact candidate beats any inexact one
        for (int r = 0; r < warm + runs; ++r) {
            CUDA_CHECK(cudaEventRecord(e0, g->s));
            cublas_candidate(g, algo);
            CUDA_CHECK(cudaEventRecord(e1, g->s));
            CUDA_CHECK(cudaEventSynchronize(e1));
            if (r >= warm) CUDA_CHECK(cudaEventElapsedTime(&ms[r - warm], e0, e1));
        }
        const float m = median_of(ms, runs);
        if (best < 0 || (same && !best_exact) || m < best_ms) best = i, best_ms = m, best_exact = same;
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    char name[64];
    snprintf(name, sizeof name, "%scublas_candidates", g->prefix);
    if (report_check(name, exact < found + 1, 1))
        printf("       %d of cublasLt's %d candidates and cublasGemmEx came out wrong\n", found + 1 - exact,
               found);
    b->gemmex = best == found;
    if (b->gemmex) {
        record_gpu_line(
            "%scublas: cublasGemmEx, faster than each of cublasLt's %d heuristic candidates (%d of %d "
            "exact)",
            g->prefix, found, exact, found + 1);
        return;
    }
    b->algo = cand[best].algo;
    record_gpu_line(
        "%scublas: the fastest of cublasLt's %d heuristic candidates and cublasGemmEx (%d of %d exact; "
        "workspace %u MiB): cublasLt algo %lld, tile %lld, stages %lld, split-K %lld, swizzle %lld, cluster "
        "shape %lld",
        g->prefix, found, exact, found + 1, LT_WORKSPACE >> 20, lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_ID),
        lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
        lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
        lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
        lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
        lt_config(&b->algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
}

static void release_cublas_best(LtBest* b) {
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(b->la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(b->lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(b->lc));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(b->op));
}

// ---- Every part on one problem ------------------------------------------------
typedef enum { SHAPE_MAIN, SHAPE_EDGE, SHAPE_SPLIT_K } ShapeKind;

static void run_parts(const Gemm* g, ShapeKind kind) {
    GEMM_REFERENCE(g);  // cuBLAS at its best
    GEMM_PART("cublas_gemmex", g, true, TAIL_NONE, cublas_gemm(g));
    if (kind == SHAPE_SPLIT_K) {  // part 6: a K-heavy problem, K split into g->splits pieces per tile
        GEMM_PART("no_split", g, true, TAIL_NONE, launch_gemm<Best>(g, true, g->group, 1));
        GEMM_PART("tma_reduce", g, true, TAIL_REDUCE, launch_split_k<Best::WithEpilogue<EPI_TMA_REDUCE>>(g));
        GEMM_PART("red_v4", g, true, TAIL_NONE, launch_split_k<Best::WithEpilogue<EPI_RED_V4>>(g));
        GEMM_PART("atomic_add", g, true, TAIL_NONE, launch_split_k<Best::WithEpilogue<EPI_ATOMIC>>(g));
        return;
    }
    const bool all = kind == SHAPE_MAIN;  // the edge shape: every part checked; cuBLAS and the best timed
    const uint32_t G = g->group;
    GEMM_PART("wgmma_sync", g, all, TAIL_NONE, launch_wgmma_sync(g));
    GEMM_PART("ring", g, all, TAIL_NONE, launch_gemm<Ring>(g, false, 1, 1));
    GEMM_PART("ring_setmaxnreg", g, all, TAIL_NONE, launch_gemm<RingRegs>(g, false, 1, 1));
    GEMM_PART("cooperative", g, all, TAIL_NONE, launch_gemm<RingRegs>(g, true, 1, 1));
    // Ping-pong's units are 64 x 256: twice as many tiles, each reading all of
    // B's tile for half the rows, so without the banded raster its operands
    // miss L2 (pingpong_rowmajor); with it, it is measured as it can be.
    GEMM_PART("pingpong", g, all, TAIL_NONE, launch_gemm<Pingpong>(g, true, G, 1));
    GEMM_PART("pingpong_rowmajor", g, all, TAIL_NONE, launch_gemm<Pingpong>(g, true, 1, 1));
    GEMM_PART("multicast_2x1", g, all, TAIL_NONE, launch_gemm<Best>(g, true, 1, 1));
    GEMM_PART("multicast_1x2", g, all, TAIL_NONE, launch_gemm<Multicast1x2>(g, true, 1, 1));
    GEMM_PART("persistent", g, true, TAIL_NONE, launch_gemm<Best>(g, true, G, 1));
    GEMM_PART("persistent_tma_store", g, all, TAIL_STORE,
              launch_gemm<Best::WithEpilogue<EPI_TMA_STORE>>(g, true, G, 1));
    // The ablation: the best kernel with one mechanism off at a time.
    GEMM_PART("ablate_no_multicast", g, all, TAIL_NONE, launch_gemm<Best::NoMulticast>(g, true, G, 1));
    GEMM_PART("ablate_no_setmaxnreg", g, all, TAIL_NONE, launch_gemm<Best::NoSetmaxnreg>(g, true, G, 1));
    GEMM_PART("ablate_no_warp_special", g, all, TAIL_NONE,
              launch_gemm<Best::NoSpecialization>(g, true, G, 1));
    GEMM_PART("ablate_stages_2", g, all, TAIL_NONE, launch_gemm<Best::WithStages<2>>(g, true, G, 1));
    GEMM_PART("ablate_rowmajor_raster", g, all, TAIL_NONE, launch_gemm<Best>(g, true, 1, 1));
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

// What every problem shares: the stream, the libraries, the options.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    cublasHandle_t h;
    cublasLtHandle_t lt;
    void* workspace;  // LT_WORKSPACE bytes for cublasLt
    uint32_t splits, group;
} Session;

// One problem: data, reference, tensor maps, cuBLAS's best candidate, the parts.
static void part_problem(const char* prefix, uint32_t m, uint32_t n, uint32_t k, ShapeKind kind,
                         const Session* ses) {
    Gemm g;
    memset(&g, 0, sizeof g);
    const cudaStream_t s = ses->s;
    g.cli = ses->cli, g.prefix = prefix, g.s = s, g.h = ses->h, g.splits = ses->splits, g.group = ses->group;
    const uint32_t seed = ses->cli->seed;
    g.m = m, g.n = n, g.k = k, g.ld_ab = round_up(k, 8), g.ldc = output_ld(n);
    g.framed_words = (size_t)(m + 2 * FRAME) * g.ldc;
    g.a = make_operand(seed, m, k, g.ld_ab, &g.host_a, s);
    g.b = make_operand(seed ^ 0xB0Bu, n, k, g.ld_ab, &g.host_b, s);
    CUDA_CHECK(cudaMalloc((void**)&g.out, g.framed_words * 4));
    g.c = g.out + (size_t)FRAME * g.ldc + FRAME;
    g.want = (uint32_t*)xmalloc(g.framed_words * 4, "the expected output");
    g.a_box[0] = operand_map(g.a, m, &g, 128, "A in boxes of 64 x 128");
    g.a_box[1] = operand_map(g.a, m, &g, 64, "A in boxes of 64 x 64");
    g.a_box[2] = operand_map(g.a, m, &g, 32, "A in boxes of 64 x 32");
    g.b_box[0] = operand_map(g.b, n, &g, 256, "B in boxes of 64 x 256");
    g.b_box[1] = operand_map(g.b, n, &g, 128, "B in boxes of 64 x 128");
    const TensorMapSpec c_spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.c, m, n, (uint64_t)g.ldc * 4, WG_M, EPI_COLS,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    g.c_box = make_tensor_map(&c_spec, "C in boxes of 32 x 64");
    run_reference(&g);
    LtBest best;
    choose_cublas_best(&g, &best, ses->lt, ses->workspace);
    run_parts(&g, kind);
    release_cublas_best(&best);
    CUDA_CHECK(cudaFree((void*)g.a));
    CUDA_CHECK(cudaFree((void*)g.b));
    CUDA_CHECK(cudaFree(g.out));
    free(g.want);
    free(g.host_a);
    free(g.host_b);
}

// ---- The output: PERF lines as TFLOP/s and a fraction of cuBLAS ---------------
// The other steps report bandwidth against cudaMemcpy; a GEMM is measured in
// flops against cuBLAS at its best on the same problem, in the same process.
// Each PERF line's `bytes` field holds its flops. A part's reference time is
// the median of the reference runs interleaved with it (pair_next); the
// reference lines themselves (cublas, edge_cublas, splitk_cublas) are timed
// alone and read 100 %.
static double cublas_reference_ms(const MachineLine* l) {
    for (int i = 0; i < g_npaired; ++i)
        if (!strcmp(g_paired[i].name, l->text)) return g_paired[i].ms;
    const size_t n = strlen(l->text);  // a reference line; any other line without its pair gets no percent
    return n >= 6 && !strcmp(l->text + n - 6, "cublas") ? perf_ms(l->text) : 0.0;
}

// After the parts: how the kernels launched (machine-dependent: GPU lines).
static int kernel_registers(const void* kernel) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    return attr.numRegs;
}

// The main problem's waves and the tensor cores' peak. A persistent kernel
// deals cluster tiles to its resident clusters in rounds; the last round is
// partly idle (wave quantization). The peak: every SM's tensor cores doing
// 4096 flops (2048 bf16 FMAs) per clock, dense, at the SM clock's maximum:
// under sustained load the clock runs lower, so a fraction of it is a floor
// of how near the tensor cores' limit a kernel runs.
#define DENSE_BF16_FLOP_PER_CLOCK_SM 4096
static void report_waves_and_peak(uint32_t m, uint32_t n, uint32_t k) {
    const uint32_t ctiles = (((m + Best::BM - 1) / Best::BM + Best::CM - 1) / Best::CM) *
                            (((n + BN - 1) / BN + Best::CN - 1) / Best::CN);
    const uint32_t clusters = (uint32_t)resident_clusters<Best>(),
                   rounds = (ctiles + clusters - 1) / clusters;
    record_gpu_line(
        "waves: %u cluster tiles of %d x %d over %u clusters, %.2f each: %u rounds, %.1f %% of the "
        "cluster-rounds busy",
        ctiles, Best::BM * Best::CM, BN * Best::CN, clusters, (double)ctiles / clusters, rounds,
        100.0 * ctiles / ((double)rounds * clusters));
    int sms = 0, khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const double peak = (double)sms * DENSE_BF16_FLOP_PER_CLOCK_SM * khz * 1e3, flops = 2.0 * m * n * k;
    const double ms_cublas = perf_ms("cublas"), ms_ours = perf_ms("persistent");
    record_gpu_line(
        "peak: %d SMs x %d flop per clock (dense bf16) x %d MHz (the SM clock's maximum) = %.1f TFLOP/s; "
        "cublas reached %.1f %% of it, persistent %.1f %%",
        sms, DENSE_BF16_FLOP_PER_CLOCK_SM, khz / 1000, peak / 1e12,
        ms_cublas > 0 ? 100.0 * flops / (ms_cublas * 1e-3) / peak : 0.0,
        ms_ours > 0 ? 100.0 * flops / (ms_ours * 1e-3) / peak : 0.0);
}

static void report_launches(uint32_t group) {
    record_gpu_line(
        "persistent: %d clusters of %d x %d CTAs of %d threads, %d stages of %d KiB, %d registers per thread "
        "at "
        "launch, setmaxnreg %d (producer) / %d (consumers), band of %u cluster-tile rows",
        resident_clusters<Best>(), Best::CM, Best::CN, Best::THREADS, Best::STAGES, Best::STAGE_BYTES >> 10,
        kernel_registers((const void*)gemm_ws<Best>), PRODUCER_REGS, CONSUMER_REGS, group);
    record_gpu_line(
        "registers at launch: wgmma_sync %d, ring %d, pingpong %d, no_warp_special %d, no_setmaxnreg %d",
        kernel_registers((const void*)wgmma_sync), kernel_registers((const void*)gemm_ws<Ring>),
        kernel_registers((const void*)gemm_ws<Pingpong>),
        kernel_registers((const void*)gemm_ws<Best::NoSpecialization>),
        kernel_registers((const void*)gemm_ws<Best::NoSetmaxnreg>));
}

// ---------------------------------------------------------------------------
enum {
    OPT_M,
    OPT_N,
    OPT_K,
    OPT_EDGE_M,
    OPT_EDGE_N,
    OPT_EDGE_K,
    OPT_SPLIT_M,
    OPT_SPLIT_N,
    OPT_SPLIT_K,
    OPT_SPLITS,
    OPT_GROUP,
    NUM_OPTS
};
static const IntOption kOptions[NUM_OPTS] = {
    {"--m", "M", "rows of A and C of the timed problem", 1, 32768, 8192, 1024},
    {"--n", "N", "rows of B, columns of C", 1, 32768, 8192, 1024},
    {"--k", "K", "the inner dimension (exact sums need K <= 2^20)", 1, MAX_K, 8192, 1024},
    // The edge problem, full and --quick (the sanitizers' run): no size a multiple of a tile; an odd number
    // of 128-row tiles (63, 9) whose last holds under 64 rows, so a cluster of 2 runs a padding CTA and a
    // warpgroup a padding tile; an odd K (a K tail from the TMA's zero fill, and a row padded to 16 bytes
    // with NaNs that only a load past K would read); C's rows (4097, 777 floats) no multiple of 16 bytes.
    {"--edge-m", "M", "M of the edge problem (every part checked; cuBLAS and the best timed)", 1, 32768, 7990,
     1050},
    {"--edge-n", "N", "N of the edge problem", 1, 32768, 4097, 777},
    {"--edge-k", "K", "K of the edge problem", 1, MAX_K, 3001, 1001},
    {"--splitk-m", "M", "M of the K-heavy split-K problem", 1, 32768, 1024, 256},
    {"--splitk-n", "N", "N of the split-K problem", 1, 32768, 1024, 256},
    {"--splitk-k", "K", "K of the split-K problem", 1, MAX_K, 65536, 8192},
    {"--splits", "S", "pieces of K per tile in the split-K parts", 1, 64, 4, 4},
    {"--group", "G", "raster: bands of G cluster-tile rows (1 = row-major)", 1, 1024, 8, 8},
};

// Host bytes of one problem: elements (int8), a bf16 staging copy of the
// larger operand, the expected output and the pinned readback.
static size_t host_bytes(uint32_t m, uint32_t n, uint32_t k) {
    const uint32_t big = m > n ? m : n;
    return (size_t)(m + n) * k + (size_t)big * round_up(k, 8) * 2 +
           2 * 4 * (size_t)(m + 2 * FRAME) * output_ld(n);
}

// One problem's operands and framed output, and cublasLt's workspace (problems run one at a time).
static size_t device_bytes(uint32_t m, uint32_t n, uint32_t k) {
    return (size_t)(m + n) * round_up(k, 8) * 2 + 4 * (size_t)(m + 2 * FRAME) * output_ld(n) + LT_WORKSPACE;
}

// Every rule before the GPU is touched: the tensor maps' (the rows of A and B
// are padded to 16 bytes, so only sizes can break one) and host memory.
static void check_problem(const char* opts, uint32_t m, uint32_t n, uint32_t k) {
    char what[96];
    snprintf(what, sizeof what, "%s %u x %u x %u", opts, m, n, k);
    const TensorMapSpec a =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, m, k, (uint64_t)round_up(k, 8) * 2,
                       SYNC_M, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&a, what);
    require_host_memory(what, host_bytes(m, n, k));
}

static void check_arguments(const Cli* cli) {
    const long long* v = cli->value;
    check_problem("--m --n --k", (uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    check_problem("--edge-m --edge-n --edge-k", (uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N],
                  (uint32_t)v[OPT_EDGE_K]);
    check_problem("--splitk-m --splitk-n --splitk-k", (uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N],
                  (uint32_t)v[OPT_SPLIT_K]);
    const long long kblocks = (v[OPT_SPLIT_K] + BK - 1) / BK;
    if (v[OPT_SPLITS] > kblocks)
        die_usage("--splits %lld: --splitk-k %lld has only %lld k-blocks of %d, and every piece needs one",
                  v[OPT_SPLITS], v[OPT_SPLIT_K], kblocks, BK);
}

static const CliSpec kCli = {
    "09_gemm: C = A B^T in bf16 with fp32 accumulation on Hopper's tensor cores (wgmma + TMA),\n"
    "each method checked bit for bit and timed against cuBLAS.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    const long long* v = cli->value;
    print_header("09_gemm", "a bf16 GEMM with wgmma and TMA, from one synchronous loop to cuBLAS");
    printf(
        "problem: C = A B^T, A M x K and B N x K row-major bf16 (K-major: TN), C M x N row-major fp32; "
        "timed %lld x %lld x %lld, edge %lld x %lld x %lld, split-K %lld x %lld x %lld in %lld pieces; "
        "tiles %d x %d x %d\n",
        v[OPT_M], v[OPT_N], v[OPT_K], v[OPT_EDGE_M], v[OPT_EDGE_N], v[OPT_EDGE_K], v[OPT_SPLIT_M],
        v[OPT_SPLIT_N], v[OPT_SPLIT_K], v[OPT_SPLITS], 2 * WG_M, BN, BK);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const long long* v = cli.value;
    require_hopper();
    require_device_memory("--m --n --k",
                          device_bytes((uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]));
    require_device_memory(
        "--edge-m --edge-n --edge-k",
        device_bytes((uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N], (uint32_t)v[OPT_EDGE_K]));
    require_device_memory(
        "--splitk-m --splitk-n --splitk-k",
        device_bytes((uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N], (uint32_t)v[OPT_SPLIT_K]));
    print_problem(&cli);
    Session ses = {&cli, NULL, NULL, NULL, NULL, (uint32_t)v[OPT_SPLITS], (uint32_t)v[OPT_GROUP]};
    CUDA_CHECK(cudaStreamCreateWithFlags(&ses.s, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ses.h));
    CUBLAS_CHECK(cublasSetStream(ses.h, ses.s));
    CUBLAS_CHECK(cublasLtCreate(&ses.lt));
    CUDA_CHECK(cudaMalloc(&ses.workspace, LT_WORKSPACE));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)wgmma_sync, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(SYNC_STAGE_BYTES, 1024)));
    part_problem("edge_", (uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N], (uint32_t)v[OPT_EDGE_K],
                 SHAPE_EDGE, &ses);
    part_problem("", (uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K], SHAPE_MAIN, &ses);
    part_problem("splitk_", (uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N], (uint32_t)v[OPT_SPLIT_K],
                 SHAPE_SPLIT_K, &ses);
    report_launches(ses.group);
    report_waves_and_peak((uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    CUDA_CHECK(cudaFree(ses.workspace));
    CUBLAS_CHECK(cublasLtDestroy(ses.lt));
    CUBLAS_CHECK(cublasDestroy(ses.h));
    CUDA_CHECK(cudaStreamDestroy(ses.s));
    return finish_against(cublas_reference_ms, "TFLOP/s", 1e12, "cublas");
}
