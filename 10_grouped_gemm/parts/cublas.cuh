// 10_grouped_gemm/parts/cublas.cuh: the baselines, one launch per expert
// (cuBLAS's and ours), and cuBLAS's grouped call.
#pragma once
#include "common/cublas_check.h"
#include "10_grouped_gemm/parts/kernel.cuh"
#include "10_grouped_gemm/parts/problem.cuh"

// ---- cuBLAS: one call per expert, and the grouped call -----------------------
// 09's call (cuBLAS is column-major: C^T = B A^T, the "TN" GEMM) on expert
// g's rows; an expert without rows is skipped (cuBLAS takes m = 0, but a
// launch that does nothing still costs its launch).
static void cublas_expert(const Problem* q, const Batch* b, uint32_t g) {
    const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
    if (rows == 0) return;
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasGemmEx(q->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)q->n, (int)rows, (int)q->k, &one,
                              q->b + (size_t)g * q->n * q->ld_ab, CUDA_R_16BF, (int)q->ld_ab,
                              b->a + (size_t)b->first_row[g] * q->ld_ab, CUDA_R_16BF, (int)q->ld_ab, &zero,
                              b->c + (size_t)b->first_row[g] * q->ldc, CUDA_R_32F, (int)q->ldc,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
static void cublas_loop(const Problem* q) {
    const Batch* b = &q->host[q->batch];
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) cublas_expert(q, b, g);
}

// Ours, one launch per expert: the grouped kernel on a batch of one expert
// (loop_batches[g] on the device: its rows of A and C, 1 expert), through
// the host's maps of that expert.
static void ours_loop(const Problem* q, const Batch* loop_batches) {
    const Batch* b = &q->host[q->batch];
    GroupArgs p = group_args(q);
    p.experts = 1;
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) {
        const uint32_t tiles = tiles_of(b->first_row[g + 1] - b->first_row[g], q->n);
        if (tiles == 0) continue;
        p.batch = loop_batches + g, p.maps = q->maps + 3 * g;
        launch_grouped<HOST_MAPS>(q, p, grid_for(q, tiles));
    }
}

// cublasGemmGroupedBatchedEx: every expert with rows as a group of one GEMM.
// It answers NOT_SUPPORTED for some type combinations; then a note says so
// and the part is not timed.
typedef struct {
    int count, m[MAX_EXPERTS], n[MAX_EXPERTS], k[MAX_EXPERTS], lda[MAX_EXPERTS], ldb[MAX_EXPERTS],
        ldc[MAX_EXPERTS], size[MAX_EXPERTS];
    cublasOperation_t ta[MAX_EXPERTS], tb[MAX_EXPERTS];
    float alpha[MAX_EXPERTS], beta[MAX_EXPERTS];
    const void** ptrs;  // device: [0, count) B_g, [count, 2 count) A_g, [2 count, 3 count) C_g
} GroupedCall;

static cublasStatus_t cublas_grouped(const Problem* q, const GroupedCall* c, cudaDataType c_type) {
    return cublasGemmGroupedBatchedEx(q->h, c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->ptrs, CUDA_R_16BF,
                                      c->lda, c->ptrs + c->count, CUDA_R_16BF, c->ldb, c->beta,
                                      (void* const*)(c->ptrs + 2 * c->count), c_type, c->ldc, c->count,
                                      c->size, CUBLAS_COMPUTE_32F);
}

static void grouped_batched_part(const Problem* q) {
    const Batch* b = &q->host[q->batch];
    GroupedCall c;
    memset(&c, 0, sizeof c);
    const void* host_ptrs[3 * MAX_EXPERTS];
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) {
        const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
        if (rows == 0) continue;
        const int i = c.count++;
        c.ta[i] = CUBLAS_OP_T, c.tb[i] = CUBLAS_OP_N, c.m[i] = (int)q->n, c.n[i] = (int)rows,
        c.k[i] = (int)q->k;
        c.lda[i] = c.ldb[i] = (int)q->ld_ab, c.ldc[i] = (int)q->ldc, c.size[i] = 1, c.alpha[i] = 1.f;
        host_ptrs[i] = q->b + (size_t)g * q->n * q->ld_ab;
        host_ptrs[MAX_EXPERTS + i] = b->a + (size_t)b->first_row[g] * q->ld_ab;
        host_ptrs[2 * MAX_EXPERTS + i] = b->c + (size_t)b->first_row[g] * q->ldc;
    }
    const void* packed[3 * MAX_EXPERTS];
    for (int w = 0; w < 3; ++w)
        for (int i = 0; i < c.count; ++i) packed[w * c.count + i] = host_ptrs[w * MAX_EXPERTS + i];
    CUDA_CHECK(cudaMalloc((void**)&c.ptrs, 3 * sizeof(void*) * (size_t)c.count));
    CUDA_CHECK(cudaMemcpy(c.ptrs, packed, 3 * sizeof(void*) * (size_t)c.count, cudaMemcpyHostToDevice));
    char name[64];
    snprintf(name, sizeof name, "%scublas_grouped_batched", q->prefix);
    poison_device(q->out[set_of(q->batch)], q->framed_words * 4, q->s);
    const cublasStatus_t st = cublas_grouped(q, &c, CUDA_R_32F);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
        // What it takes instead: the same call with C in bf16 (into the poisoned output; not this
        // problem's output type, so neither checked nor timed).
        const cublasStatus_t bf16_out = cublas_grouped(q, &c, CUDA_R_16BF);
        CUDA_CHECK(cudaStreamSynchronize(q->s));
        printf(
            "note   %s: cublasGemmGroupedBatchedEx answers %s for bf16 inputs, fp32 output, fp32 compute; "
            "with a bf16 output, %s\n",
            name, cublasGetStatusName(st), cublasGetStatusName(bf16_out));
    } else {
        GROUP_PART(q, "cublas_grouped_batched", CUBLAS_CHECK(cublas_grouped(q, &c, CUDA_R_32F)));
    }
    CUDA_CHECK(cudaStreamSynchronize(q->s));
    CUDA_CHECK(cudaFree(c.ptrs));
}
