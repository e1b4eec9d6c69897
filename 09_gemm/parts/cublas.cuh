// 09_gemm/parts/cublas.cuh: cuBLAS at its best, the reference of every PERF
// line of step 09: cublasGemmEx and cublasLt's heuristic candidates, the
// fastest exact one chosen per problem, and each part timed interleaved
// with it.
#pragma once
#include "common/cublas_check.h"
#include <cublasLt.h>
#include "09_gemm/parts/problem.cuh"

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
// order is exact), then all are timed interleaved, LT_TRIAL_RUNS rounds of
// one run each (3 under --quick); the exact one with the fastest median is
// the reference (fastest_candidate). A check line says every candidate was exact (an
// inexact one means a wrong call, which would also make the reference look
// slower than cuBLAS is). Should none be exact, the fastest is taken anyway,
// and its own check fails. Machine-dependent (which candidates, which
// wins): a GPU line names it.
#define LT_TRIAL_RUNS 10
#define LT_MIN_ROUNDS 3  // --quick: still three rounds, so a median means something

// The reference among n candidates, each with its median time and whether its
// output was exact: the fastest exact one; the fastest of all if none is.
static int fastest_candidate(const float* median, const bool* exact, int n) {
    int best = -1;
    bool any_exact = false;
    for (int i = 0; i < n; ++i) any_exact |= exact[i];
    for (int i = 0; i < n; ++i)
        if ((exact[i] || !any_exact) && (best < 0 || median[i] < median[best])) best = i;
    return best;
}

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
    // No candidate for a shape (NOT_SUPPORTED) is no error: cublasGemmEx, candidate `found`, remains.
    if (cublasLtMatmulAlgoGetHeuristic(lt, b->op, b->la, b->lb, b->lc, b->lc, pref, LT_CANDIDATES, cand,
                                       &found) != CUBLAS_STATUS_SUCCESS)
        found = 0;
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    // Each candidate checked once, then all of them timed in rounds, one run of
    // each per round in turns (a drift of the clocks reaches every one alike);
    // each one's median over the rounds decides.
    const int tried = found + 1, rounds = g->cli->quick ? LT_MIN_ROUNDS : LT_TRIAL_RUNS;
    static bool same[LT_CANDIDATES + 1];
    static float ms[LT_CANDIDATES + 1][LT_TRIAL_RUNS], median[LT_CANDIDATES + 1];
    for (int i = 0; i < tried; ++i) {  // i == found: cublasGemmEx
        poison_device(g->out, g->framed_words * 4, g->s);
        cublas_candidate(g, i < found ? &cand[i].algo : NULL);
        same[i] = !memcmp(read_back(g->out, g->framed_words, g->s), g->want, g->framed_words * 4);
        exact += same[i];
    }
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int r = -1; r < rounds; ++r)  // round -1: the warm-up
        for (int i = 0; i < tried; ++i) {
            CUDA_CHECK(cudaEventRecord(e0, g->s));
            cublas_candidate(g, i < found ? &cand[i].algo : NULL);
            CUDA_CHECK(cudaEventRecord(e1, g->s));
            CUDA_CHECK(cudaEventSynchronize(e1));
            if (r >= 0) CUDA_CHECK(cudaEventElapsedTime(&ms[i][r], e0, e1));
        }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    for (int i = 0; i < tried; ++i) median[i] = median_of(ms[i], rounds);
    best = fastest_candidate(median, same, tried);
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
