// Groundwork for step 06's library reference: which cuBLAS route transposes an fp32 matrix fastest? Step 06
// compares its kernels with cublasSgeam (C = 1 op_T(A) + 0 B, B = C). cuBLAS has a second route,
// cublasLtMatrixTransform (C = alpha op(A) + beta op(B), B may be absent), and either may pick another
// kernel. Here, on 06's main problem (16384 x 16384 fp32, rows 16 bytes aligned), each route's output is
// checked element by element against the input on the host, then all of them and cudaMemcpy (device to
// device, the same bytes: 06's reference) are timed interleaved, one launch of each per round, 20 rounds
// after 3 warm-up rounds, so that a drift of the clocks hits all alike. Each route's median is printed as
// GB/s (read plus written) and as a percent of memcpy's median.
// Output: transpose_cublas_<GPU>.txt beside this file. Build: `make experiments`.
// link: -lcublas -lcublasLt
#include "common/cublas_check.h"
#include "common/tutorial.cuh"
#include <cublasLt.h>

#define ROWS 16384
#define COLS 16384
#define ROUNDS 20
#define WARMUP 3

typedef struct {
    const float* in;  // ROWS x COLS, row-major
    float* out;       // COLS x ROWS, row-major
    cublasHandle_t h;
    cublasLtHandle_t lt;
    cublasLtMatrixTransformDesc_t desc;
    cublasLtMatrixLayout_t la, lc;
    cudaStream_t s;
} Routes;

// Our row-major input is a COLS x ROWS column-major matrix A (ld COLS); its
// transpose, written column-major as ROWS x COLS (ld ROWS), is our row-major
// COLS x ROWS output: C = op_T(A).
static void sgeam(const Routes* r) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasSgeam(r->h, CUBLAS_OP_T, CUBLAS_OP_N, ROWS, COLS, &one, r->in, COLS, &zero, r->out,
                             ROWS, r->out, ROWS));
}

static void lt_transform(const Routes* r) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(
        cublasLtMatrixTransform(r->lt, r->desc, &one, r->in, r->la, &zero, NULL, NULL, r->out, r->lc, r->s));
}

static void memcpy_d2d(const Routes* r) {
    CUDA_CHECK(cudaMemcpyAsync(r->out, r->in, (size_t)ROWS * COLS * 4, cudaMemcpyDeviceToDevice, r->s));
}

// Every element: out[c][r] must be in[r][c], bit for bit.
static size_t wrong_elements(const Routes* r, const uint32_t* host_in, uint32_t* host_out) {
    CUDA_CHECK(cudaStreamSynchronize(r->s));
    CUDA_CHECK(cudaMemcpy(host_out, r->out, (size_t)ROWS * COLS * 4, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < ROWS; ++i)
        for (size_t j = 0; j < COLS; ++j) wrong += host_out[j * ROWS + i] != host_in[i * COLS + j];
    return wrong;
}

int main(void) {
    require_hopper();
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU      %s\n", prop.name);
    const size_t n = (size_t)ROWS * COLS;
    uint32_t* host_in = (uint32_t*)xmalloc(n * 4, "the input");
    uint32_t* host_out = (uint32_t*)xmalloc(n * 4, "the output");
    fill_seeded_floats((float*)host_in, n, 6);  // floats in [-1, 1): 1 * x + 0 is x, bit for bit
    Routes r;
    memset(&r, 0, sizeof r);
    CUDA_CHECK(cudaStreamCreate(&r.s));
    CUDA_CHECK(cudaMalloc((void**)&r.in, n * 4));
    CUDA_CHECK(cudaMalloc((void**)&r.out, n * 4));
    CUDA_CHECK(cudaMemcpy((void*)r.in, host_in, n * 4, cudaMemcpyHostToDevice));
    CUBLAS_CHECK(cublasCreate(&r.h));
    CUBLAS_CHECK(cublasSetStream(r.h, r.s));
    CUBLAS_CHECK(cublasLtCreate(&r.lt));
    const cublasOperation_t t = CUBLAS_OP_T;
    CUBLAS_CHECK(cublasLtMatrixTransformDescCreate(&r.desc, CUDA_R_32F));
    CUBLAS_CHECK(
        cublasLtMatrixTransformDescSetAttribute(r.desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &t, sizeof t));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&r.la, CUDA_R_32F, COLS, ROWS, COLS));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&r.lc, CUDA_R_32F, ROWS, COLS, ROWS));

    typedef void (*Route)(const Routes*);
    const char* names[] = {"cudaMemcpy_D2D", "cublasSgeam", "cublasLtMatrixTransform"};
    const Route routes[] = {memcpy_d2d, sgeam, lt_transform};
    enum { NROUTES = 3 };
    printf("PROBLEM  %d x %d fp32, transposed out of place (%.0f MiB read, %.0f MiB written)\n", ROWS, COLS,
           n * 4 / 1048576.0, n * 4 / 1048576.0);
    for (int i = 1; i < NROUTES; ++i) {
        CUDA_CHECK(cudaMemsetAsync(r.out, 0xFF, n * 4, r.s));
        routes[i](&r);
        printf("CHECK    %-24s %zu of %zu elements wrong\n", names[i], wrong_elements(&r, host_in, host_out),
               n);
    }
    float ms[NROUTES][ROUNDS];
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int round = 0; round < WARMUP + ROUNDS; ++round)
        for (int i = 0; i < NROUTES; ++i) {
            CUDA_CHECK(cudaEventRecord(e0, r.s));
            routes[i](&r);
            CUDA_CHECK(cudaEventRecord(e1, r.s));
            CUDA_CHECK(cudaEventSynchronize(e1));
            if (round >= WARMUP) CUDA_CHECK(cudaEventElapsedTime(&ms[i][round - WARMUP], e0, e1));
        }
    float median[NROUTES];
    for (int i = 0; i < NROUTES; ++i) {
        float lo = ms[i][0], hi = ms[i][0];
        for (int k = 1; k < ROUNDS; ++k) lo = fminf(lo, ms[i][k]), hi = fmaxf(hi, ms[i][k]);
        median[i] = median_of(ms[i], ROUNDS);
        printf("ROUTE    %-24s %7.3f ms %7.1f GB/s %6.1f %% of memcpy  (rounds: %.3f to %.3f ms)\n", names[i],
               median[i], 2.0 * n * 4 / (median[i] * 1e-3) / 1e9, 100.0 * median[0] / median[i], lo, hi);
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(r.la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(r.lc));
    CUBLAS_CHECK(cublasLtMatrixTransformDescDestroy(r.desc));
    CUBLAS_CHECK(cublasLtDestroy(r.lt));
    CUBLAS_CHECK(cublasDestroy(r.h));
    CUDA_CHECK(cudaFree((void*)r.in));
    CUDA_CHECK(cudaFree(r.out));
    CUDA_CHECK(cudaStreamDestroy(r.s));
    free(host_in);
    free(host_out);
    return 0;
}
