// Groundwork for step 09's reference: is `cublasGemmEx` cuBLAS at its best on step 09's problems, and how
// much does it vary? Step 09 reports every PERF line as a fraction of cublasGemmEx (CUBLAS_GEMM_DEFAULT) in
// the same run. Here, on the same operands and layout (C = A B^T, A M x K and B N x K row-major bf16, C
// fp32, fp32 accumulation: cuBLAS's "TN" GEMM, called as in 09_gemm/gemm.cu's cublas_gemm), cublasLt's
// heuristic returns up to 32 candidates for a 256 MiB workspace; each is timed (median of 20 after 3
// warm-ups) and its output compared with cublasGemmEx's, bit for bit (the inputs are small integers, so
// every fp32 sum is exact in any order). Then cublasGemmEx and the fastest candidate are timed interleaved,
// A B A B ..., ten rounds of ten launches each, so that a drift of the clocks hits both: the rounds give
// each one's spread within a process.
// Output: cublas_best_<GPU>.txt beside this file. Build: `make experiments` (build/experiments/cublas_best).
// link: -lcublas -lcublasLt
#include "common/cublas_check.h"
#include "common/tutorial.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#define MAX_CANDIDATES 32
#define WORKSPACE (256u << 20)

typedef struct {
    int m, n, k;
    __nv_bfloat16 *a, *b;
    float *c, *want;
    cublasHandle_t h;
    cublasLtHandle_t lt;
    void* workspace;
    cudaStream_t s;
} Problem;

static void gemm_ex(const Problem* p) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasGemmEx(p->h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, p->b, CUDA_R_16BF, p->k,
                              p->a, CUDA_R_16BF, p->k, &zero, p->c, CUDA_R_32F, p->n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
}

typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
} LtGemm;

// The same product through cublasLt: column-major C^T (n x m) = op_T(B as k x n) * A as k x m.
static LtGemm lt_gemm(const Problem* p) {
    LtGemm g;
    const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.la, CUDA_R_16BF, p->k, p->n, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.lb, CUDA_R_16BF, p->k, p->m, p->k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g.lc, CUDA_R_32F, p->n, p->m, p->n));
    return g;
}

static void lt_run(const Problem* p, const LtGemm* g, const cublasLtMatmulAlgo_t* algo) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasLtMatmul(p->lt, g->op, &one, p->b, g->la, p->a, g->lb, &zero, p->c, g->lc, p->c, g->lc,
                                algo, p->workspace, WORKSPACE, p->s));
}

// Median ms of `reps` launches (after `warm` untimed ones) of cublasGemmEx (algo NULL) or one candidate.
static float time_ms(const Problem* p, const LtGemm* g, const cublasLtMatmulAlgo_t* algo, int warm,
                     int reps) {
    float ms[32];
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < warm + reps; ++i) {
        CUDA_CHECK(cudaEventRecord(e0, p->s));
        if (algo)
            lt_run(p, g, algo);
        else
            gemm_ex(p);
        CUDA_CHECK(cudaEventRecord(e1, p->s));
        CUDA_CHECK(cudaEventSynchronize(e1));
        if (i >= warm) CUDA_CHECK(cudaEventElapsedTime(&ms[i - warm], e0, e1));
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return median_of(ms, reps);
}

static int same_output(const Problem* p) {
    const size_t n = (size_t)p->m * p->n;
    float* got = (float*)xmalloc(n * sizeof(float), "the output");
    float* want = (float*)xmalloc(n * sizeof(float), "the reference output");
    CUDA_CHECK(cudaMemcpy(got, p->c, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(want, p->want, n * sizeof(float), cudaMemcpyDeviceToHost));
    const int same = memcmp(got, want, n * sizeof(float)) == 0;
    free(got);
    free(want);
    return same;
}

// One field of a candidate's configuration, whatever its width (-1 if this cuBLAS does not report it).
static long long attr(const cublasLtMatmulAlgo_t* a, cublasLtMatmulAlgoConfigAttributes_t which) {
    unsigned long long v = 0;
    size_t need = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(a, which, NULL, 0, &need) != CUBLAS_STATUS_SUCCESS ||
        need > sizeof v)
        return -1;
    if (cublasLtMatmulAlgoConfigGetAttribute(a, which, &v, need, &need) != CUBLAS_STATUS_SUCCESS) return -1;
    return (long long)v;
}

static void run_problem(cublasHandle_t h, cublasLtHandle_t lt, void* workspace, cudaStream_t s, int m, int n,
                        int k) {
    Problem p = {m, n, k, NULL, NULL, NULL, NULL, h, lt, workspace, s};
    const size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
    __nv_bfloat16* host = (__nv_bfloat16*)xmalloc((na > nb ? na : nb) * sizeof(__nv_bfloat16), "the inputs");
    CUDA_CHECK(cudaMalloc((void**)&p.a, na * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc((void**)&p.b, nb * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc((void**)&p.c, nc * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&p.want, nc * sizeof(float)));
    uint32_t x = 12345u;  // small integers in -2..2: every product and sum exact in fp32
    for (size_t i = 0; i < na; ++i)
        host[i] = __float2bfloat16((float)((x = x * 1664525u + 1013904223u) >> 29) - 2.f);
    CUDA_CHECK(cudaMemcpy(p.a, host, na * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    for (size_t i = 0; i < nb; ++i)
        host[i] = __float2bfloat16((float)((x = x * 1664525u + 1013904223u) >> 29) - 2.f);
    CUDA_CHECK(cudaMemcpy(p.b, host, nb * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    free(host);
    const double flop = 2.0 * m * n * k;
    printf("PROBLEM  %d x %d x %d\n", m, n, k);

    gemm_ex(&p);
    CUDA_CHECK(cudaMemcpy(p.want, p.c, nc * sizeof(float), cudaMemcpyDeviceToDevice));
    const float ex_ms = time_ms(&p, NULL, NULL, 3, 20);
    printf("GEMMEX   %8.3f ms %7.1f TFLOP/s  (cublasGemmEx, CUBLAS_GEMM_DEFAULT)\n", ex_ms,
           flop / ex_ms / 1e9);

    LtGemm g = lt_gemm(&p);
    cublasLtMatmulPreference_t pref;
    const size_t ws = WORKSPACE;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t cand[MAX_CANDIDATES];
    int found = 0;
    CUBLAS_CHECK(
        cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.la, g.lb, g.lc, g.lc, pref, MAX_CANDIDATES, cand, &found));
    printf("HEURISTIC %d candidates (asked for up to %d, workspace %u MiB)\n", found, MAX_CANDIDATES,
           WORKSPACE >> 20);
    int best = -1;
    float best_ms = 1e30f;
    for (int i = 0; i < found; ++i) {
        CUDA_CHECK(cudaMemset(p.c, 0xff, nc * sizeof(float)));
        lt_run(&p, &g, &cand[i].algo);
        CUDA_CHECK(cudaStreamSynchronize(s));
        const int same = same_output(&p);
        const float ms = time_ms(&p, &g, &cand[i].algo, 3, 20);
        printf(
            "CAND %2d  %8.3f ms %7.1f TFLOP/s  algo %lld tile %lld stages %lld splitk %lld swizzle %lld "
            "cluster %lld  %s\n",
            i, ms, flop / ms / 1e9, attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_ID),
            attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
            attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
            attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
            attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
            attr(&cand[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
            same ? "output equal" : "OUTPUT DIFFERS");
        if (same && ms < best_ms) best_ms = ms, best = i;
    }
    if (best >= 0) {
        printf("BEST     candidate %d: %.1f TFLOP/s, %.1f %% of cublasGemmEx's\n", best, flop / best_ms / 1e9,
               100.0 * ex_ms / best_ms);
        float ex_r[10], lt_r[10];
        for (int r = 0; r < 10; ++r) {  // interleaved: A B A B ...
            ex_r[r] = time_ms(&p, NULL, NULL, 1, 10);
            lt_r[r] = time_ms(&p, &g, &cand[best].algo, 1, 10);
            printf("ROUND %d  cublasGemmEx %7.1f TFLOP/s   best candidate %7.1f TFLOP/s\n", r,
                   flop / ex_r[r] / 1e9, flop / lt_r[r] / 1e9);
        }
        float lo_ex = ex_r[0], hi_ex = ex_r[0], lo_lt = lt_r[0], hi_lt = lt_r[0];
        for (int r = 1; r < 10; ++r) {
            lo_ex = fminf(lo_ex, ex_r[r]), hi_ex = fmaxf(hi_ex, ex_r[r]);
            lo_lt = fminf(lo_lt, lt_r[r]), hi_lt = fmaxf(hi_lt, lt_r[r]);
        }
        printf("SPREAD   cublasGemmEx %.1f to %.1f TFLOP/s; best candidate %.1f to %.1f TFLOP/s\n",
               flop / hi_ex / 1e9, flop / lo_ex / 1e9, flop / hi_lt / 1e9, flop / lo_lt / 1e9);
    }
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(g.la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(g.lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(g.lc));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(g.op));
    CUDA_CHECK(cudaFree(p.a));
    CUDA_CHECK(cudaFree(p.b));
    CUDA_CHECK(cudaFree(p.c));
    CUDA_CHECK(cudaFree(p.want));
}

int main(void) {
    require_hopper();
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU      %s\n", prop.name);
    cublasHandle_t h;
    cublasLtHandle_t lt;
    cudaStream_t s;
    void* workspace;
    CUDA_CHECK(cudaStreamCreate(&s));
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    CUBLAS_CHECK(cublasLtCreate(&lt));
    CUDA_CHECK(cudaMalloc(&workspace, WORKSPACE));
    run_problem(h, lt, workspace, s, 8192, 8192, 8192);   // 09's main problem
    run_problem(h, lt, workspace, s, 1024, 1024, 65536);  // 09's split-K problem's shape
    CUDA_CHECK(cudaFree(workspace));
    CUBLAS_CHECK(cublasLtDestroy(lt));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
