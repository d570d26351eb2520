/* The table src/core/small_gemm.c exports once per kernel set
 * (core/kernels.h); core/gemm.c calls the active set's. */
#ifndef LT_CORE_GEMM_KERNELS_H
#define LT_CORE_GEMM_KERNELS_H

#include "core/gemm.h"

typedef struct lt_gemm_kernels {
    void (*sgemm_small)(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                        const float *A, int lda, const float *B, int ldb, float beta, float *C,
                        int ldc);
} lt_gemm_kernels;

#endif
