#include "nn/layernorm.h"

#include <math.h>
#include <stddef.h>

#include "core/status.h"
#include "nn/colsum.h"

void lt_layernorm_forward_team(float *out, float *mean, float *rstd, const float *in,
                               const float *gamma, const float *beta, int R, int C)
{
    LT_ASSERT(R >= 0 && C > 0);
#pragma omp for schedule(static)
    for (int r = 0; r < R; r++) {
        const float *x = in + (size_t)r * C;
        float *y = out + (size_t)r * C;
        double sum = 0;
        for (int c = 0; c < C; c++)
            sum += x[c];
        double mu = sum / C;
        /* Two passes: the variance of deviations does not cancel the way
         * E[x^2] - E[x]^2 does for rows with a large mean. */
        double sq = 0;
        for (int c = 0; c < C; c++) {
            double d = x[c] - mu;
            sq += d * d;
        }
        float row_rstd = (float)(1.0 / sqrt(sq / C + LT_LAYERNORM_EPS));
        float row_mean = (float)mu;
        for (int c = 0; c < C; c++)
            y[c] = (x[c] - row_mean) * row_rstd * gamma[c] + beta[c];
        if (mean)
            mean[r] = row_mean;
        if (rstd)
            rstd[r] = row_rstd;
    }
}

void lt_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                          const float *gamma, const float *beta, int R, int C)
{
#pragma omp parallel if ((long)R * C > 16384)
    lt_layernorm_forward_team(out, mean, rstd, in, gamma, beta, R, C);
}

void lt_layernorm_backward(float *d_in, float *d_gamma, float *d_beta, const float *d_out,
                           const float *in, const float *mean, const float *rstd,
                           const float *gamma, int R, int C)
{
    LT_ASSERT(R >= 0 && C > 0);
    if (d_in) {
        /* With xhat = (x - mean) rstd and g = d_out * gamma:
         * d_in = rstd (g - mean(g) - xhat mean(g xhat)). */
#pragma omp parallel for schedule(static) if ((long)R * C > 16384)
        for (int r = 0; r < R; r++) {
            const float *x = in + (size_t)r * C;
            const float *dy = d_out + (size_t)r * C;
            float *dx = d_in + (size_t)r * C;
            float mu = mean[r], s = rstd[r];
            double g_sum = 0, gx_sum = 0;
            for (int c = 0; c < C; c++) {
                float g = dy[c] * gamma[c];
                g_sum += g;
                gx_sum += (double)g * ((x[c] - mu) * s);
            }
            float g_mean = (float)(g_sum / C), gx_mean = (float)(gx_sum / C);
            for (int c = 0; c < C; c++) {
                float xhat = (x[c] - mu) * s;
                dx[c] += s * (dy[c] * gamma[c] - g_mean - xhat * gx_mean);
            }
        }
    }
    if (d_beta)
        lt_colsum_add(d_beta, d_out, R, C);
    if (d_gamma)
        lt_colsum_add_normalized(d_gamma, d_out, in, mean, rstd, R, C);
}
