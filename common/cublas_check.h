// cublas_check.h: CUBLAS_CHECK, for the steps that time cuBLAS in the same
// process (06's transpose, 09's GEMM): a failed cuBLAS call prints where and
// why, and exits 2 like every CUDA error (common/tutorial.cuh's CUDA_CHECK).
#pragma once

#include <cublas_v2.h>

#include "common/tutorial.cuh"

#define CUBLAS_CHECK(call)                                                                     \
    do {                                                                                       \
        const cublasStatus_t st_ = (call);                                                     \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            fprintf(stderr, "cuBLAS error at %s:%d: %s\n  -> %s\n", __FILE__, __LINE__, #call, \
                    cublasGetStatusName(st_));                                                 \
            exit(EXIT_USAGE);                                                                  \
        }                                                                                      \
    } while (0)
