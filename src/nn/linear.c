#include "nn/linear.h"

#include <omp.h>
#include <stddef.h>

#include "core/gemm.h"
#include "core/kernels.h"
#include "core/status.h"
#include "nn/colsum.h"
#include "nn/rows_kernels.h"

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

/* ---- the few-rows products: the active kernel set's (nn/rows.c) ---- */

LT_KERNEL_TABLE(lt_rows_kernels, lt_rows_kernels, rows_kernels)

void lt_linear_rows_forward_team(float *out, const float *in, const float *weight,
                                 const float *bias, int R, int C_in, int C_out)
{
    rows_kernels()->rows_forward_team(out, in, weight, bias, R, C_in, C_out);
}

void lt_linear_rows_forward(float *out, const float *in, const float *weight, const float *bias,
                            int R, int C_in, int C_out)
{
    /* A smaller matrix than this is not worth spreading; outside any region
     * the team function's work-sharing loop is this thread's alone, with no
     * region of its own (whose closing barrier would cost a system call, a
     * generation step's head pays it once a position). */
    if ((long)C_out * C_in < 16384 && !omp_in_parallel()) {
        lt_linear_rows_forward_team(out, in, weight, bias, R, C_in, C_out);
        return;
    }
    /* A weight matrix worth spreading: both threads stream half of it. */
#pragma omp parallel if ((long)C_out * C_in >= 16384)
    lt_linear_rows_forward_team(out, in, weight, bias, R, C_in, C_out);
}

size_t lt_linear_panels_floats(int C_in, int C_out)
{
    return (size_t)((C_out + LT_ROWS_PANEL - 1) / LT_ROWS_PANEL) * LT_ROWS_PANEL * (size_t)C_in;
}

void lt_linear_panels_pack_team(float *panels, const float *weight, int C_in, int C_out)
{
    rows_kernels()->panels_pack_team(panels, weight, C_in, C_out);
}

void lt_linear_panels_pack(float *panels, const float *weight, int C_in, int C_out)
{
#pragma omp parallel if ((long)C_out * C_in >= 16384)
    lt_linear_panels_pack_team(panels, weight, C_in, C_out);
}

void lt_linear_panels_forward_own(float *out, const float *in, const float *panels,
                                  const float *bias, int R, int C_in, int C_out, int *first,
                                  int *end)
{
    rows_kernels()->panels_forward_own(out, in, panels, bias, R, C_in, C_out, first, end);
}

void lt_linear_panels_forward_team(float *out, const float *in, const float *panels,
                                   const float *bias, int R, int C_in, int C_out)
{
    int first, end;
    lt_linear_panels_forward_own(out, in, panels, bias, R, C_in, C_out, &first, &end);
#pragma omp barrier
}

void lt_linear_panels_forward(float *out, const float *in, const float *panels,
                              const float *bias, int R, int C_in, int C_out)
{
#pragma omp parallel if ((long)C_out * C_in >= 16384)
    lt_linear_panels_forward_team(out, in, panels, bias, R, C_in, C_out);
}
