#include "nn/linear.h"

#include <stddef.h>

#include "core/gemm.h"
#include "core/status.h"
#include "nn/colsum.h"

void lt_linear_forward(float *out, const float *in, const float *weight, const float *bias,
                       int R, int C_in, int C_out)
{
    LT_ASSERT(R >= 0 && C_in > 0 && C_out > 0);
    if (R == 0)
        return;
    float beta = 0.0f;
    if (bias) {
        /* Seed each row with the bias and let the GEMM accumulate onto it. */
#pragma omp parallel for schedule(static) if ((long)R * C_out > 16384)
        for (int r = 0; r < R; r++)
            for (int o = 0; o < C_out; o++)
                out[(size_t)r * C_out + o] = bias[o];
        beta = 1.0f;
    }
    lt_sgemm(LT_N, LT_T, R, C_out, C_in, 1.0f, in, C_in, weight, C_in, beta, out, C_out);
}

void lt_linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                        const float *in, const float *weight, int R, int C_in, int C_out)
{
    LT_ASSERT(R >= 0 && C_in > 0 && C_out > 0);
    if (R == 0)
        return;
    if (d_bias)
        lt_colsum_add(d_bias, d_out, R, C_out);
    /* beta = 1 makes BLAS add into the existing gradients. */
    if (d_in)
        lt_sgemm(LT_N, LT_N, R, C_in, C_out, 1.0f, d_out, C_out, weight, C_in, 1.0f, d_in, C_in);
    if (d_weight)
        lt_sgemm(LT_T, LT_N, C_out, C_in, R, 1.0f, d_out, C_out, in, C_in, 1.0f, d_weight, C_in);
}
