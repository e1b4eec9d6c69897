// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "common/cublas_check.h"
#include "06_transpose/parts/problem.cuh"

// ---- Part 7: cuBLAS's transpose, the library reference ------------------------
// C = 1 * op(A) + 0 * B in cuBLAS's column-major terms: our row-major input
// is a cols x rows column-major A (lda = ld_in), op = transpose; the output
// C is rows x cols column-major (ldc = ld_out). B is C itself, the in-place
// form cuBLAS allows, and is not read with beta = 0: C is poisoned (NaN), so
// a read would show in the check.
static void cublas_sgeam(const Transpose* t, cublasHandle_t h) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)t->rows, (int)t->cols, &one, t->in,
                             (int)t->ld_in, &zero, t->interior, (int)t->ld_out, t->interior, (int)t->ld_out));
}
