/* Helpers of the gated recurrences (gated.h). */
#include "attn/gated.h"

#include <math.h>

float *gated_take(gated_cursor *c, size_t floats)
{
    float *block = c->base != NULL ? (float *)(c->base + c->bytes) : NULL;
    c->bytes += attn_round(floats * sizeof(float));
    return block;
}

double *gated_take_doubles(gated_cursor *c, size_t count)
{
    return (double *)gated_take(c, 2 * count);
}

const char gated_not_noncausal[] =
    "the state is a recurrence over positions (each step gates or corrects what came "
    "before); a bidirectional form would be another model";

lt_status gated_check_config(const lt_attn_config *config)
{
    if (!config->causal)
        return lt_fail(LT_E_USAGE, "causal: %s attention is causal only: %s; set causal = 1, "
                                   "or use linear attention for non-causal models",
                       config->variant, gated_not_noncausal);
    return LT_OK;
}

void gated_add_log_alpha_grad(float *d_log_alpha, float *dg, int rows, int width)
{
    for (int t = rows - 2; t >= 0; t--)
        for (int f = 0; f < width; f++)
            dg[(size_t)t * width + f] += dg[(size_t)(t + 1) * width + f];
    for (size_t i = 0; i < (size_t)rows * width; i++)
        d_log_alpha[i] += dg[i];
}

void gated_scale_rows(float *out, const float *x, const float *w, int rows, int width)
{
    for (int t = 0; t < rows; t++)
        for (int f = 0; f < width; f++)
            out[(size_t)t * width + f] = w[t] * x[(size_t)t * width + f];
}

void gated_running_sums(double *g, const float *log_alpha, int rows, int width)
{
    for (int f = 0; f < width; f++)
        g[f] = log_alpha != NULL ? log_alpha[f] : 0.0;
    for (int t = 1; t < rows; t++)
        for (int f = 0; f < width; f++)
            g[(size_t)t * width + f] = g[(size_t)(t - 1) * width + f] +
                                       (log_alpha != NULL ? log_alpha[(size_t)t * width + f] : 0.0);
}

float gated_exp(double x)
{
    /* below -104 exp underflows past float's smallest subnormal anyway */
    return x < -104.0 ? 0.0f : (float)exp(x);
}

int gated_step_parallel(const lt_attn *attn, int heads, int D, int M, int steps)
{
    (void)attn, (void)steps;
    return (double)heads * D * M >= 16384;
}

size_t gated_no_saved(const lt_attn *attn, lt_attn_shape shape)
{
    (void)attn, (void)shape;
    return 0;
}

double gated_model_flops(lt_attn_shape shape, double per_token, int backward)
{
    double forward = per_token * shape.N * shape.D * shape.M * shape.B * shape.H;
    return backward ? 2.0 * forward : forward;
}

/* Added to |x|^2 before the square root, as DeltaNet's l2norm: a zero row
 * stays 0 and its gradient finite. */
#define L2_EPS 1e-6f

void gated_l2_rows(float *xn, float *norm, const float *x, int rows, int D)
{
    for (int t = 0; t < rows; t++) {
        const float *xt = x + (size_t)t * D;
        float sq = 0.0f;
        for (int f = 0; f < D; f++)
            sq += xt[f] * xt[f];
        norm[t] = sqrtf(sq + L2_EPS);
        for (int f = 0; f < D; f++)
            xn[(size_t)t * D + f] = xt[f] / norm[t];
    }
}

void gated_l2_rows_backward(float *dx, const float *dxn, const float *xn, const float *norm,
                            int rows, int D)
{
    for (int t = 0; t < rows; t++) {
        const float *g = dxn + (size_t)t * D, *u = xn + (size_t)t * D;
        float along = 0.0f;
        for (int f = 0; f < D; f++)
            along += u[f] * g[f];
        for (int f = 0; f < D; f++)
            dx[(size_t)t * D + f] += (g[f] - u[f] * along) / norm[t];
    }
}

void gated_delta_token(float *S, float *u, float *out, const float *qn, const float *kn,
                       const float *v, float a, float b, int D, int M)
{
    for (int m = 0; m < M; m++)
        u[m] = 0.0f;
    for (int f = 0; f < D; f++) {
        float *row = S + (size_t)f * M;
        for (int m = 0; m < M; m++) {
            row[m] *= a;
            u[m] += kn[f] * row[m];
        }
    }
    for (int m = 0; m < M; m++)
        u[m] = b * (v[m] - u[m]);
    if (out == NULL) { /* the state alone: the same updates, no read */
        for (int f = 0; f < D; f++)
            for (int m = 0; m < M; m++)
                S[(size_t)f * M + m] += kn[f] * u[m];
        return;
    }
    for (int m = 0; m < M; m++)
        out[m] = 0.0f;
    for (int f = 0; f < D; f++) {
        float *row = S + (size_t)f * M;
        for (int m = 0; m < M; m++) {
            row[m] += kn[f] * u[m];
            out[m] += qn[f] * row[m];
        }
    }
}

void gated_gla_token(float *S, float *out, const float *q, const float *k, const float *v,
                     const float *log_alpha, int D, int M)
{
    for (int m = 0; out != NULL && m < M; m++)
        out[m] = 0.0f;
    for (int f = 0; f < D; f++) {
        float *row = S + (size_t)f * M;
        const float a = gated_exp(log_alpha[f]);
        for (int m = 0; m < M; m++)
            row[m] = a * row[m] + k[f] * v[m];
        for (int m = 0; out != NULL && m < M; m++)
            out[m] += q[f] * row[m];
    }
}
