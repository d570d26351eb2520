/* Private to src/attn: what the gated recurrences (delta.c: delta and
 * gated-delta; gla.c: gla) share. Their workspace is carved by one
 * function that also counts it (so the plan and the carving cannot
 * drift), their decays are running sums of log_alpha kept in double within
 * a chunk, and only differences of those sums that are <= 0 are ever
 * exponentiated. */
#ifndef LT_ATTN_GATED_H
#define LT_ATTN_GATED_H

#include <stddef.h>

#include "attn/attn_internal.h"

/* Carves floats from base (aligned as attn_take); with base NULL it only
 * counts, so a slice's size is the carving run on NULL. */
typedef struct gated_cursor {
    char *base;
    size_t bytes;
} gated_cursor;

float *gated_take(gated_cursor *c, size_t floats);
double *gated_take_doubles(gated_cursor *c, size_t count);

/* Causal only, as decay: the check_config of the three variants. */
lt_status gated_check_config(const lt_attn_config *config);

/* Why the three have no non-causal form. */
extern const char gated_not_noncausal[];

/* d_log_alpha (rows x width, added) from dg, the gradient of the chunk's
 * running sums g_t = sum_{r <= t} log_alpha_r: the sum of dg over rows >= r. */
void gated_add_log_alpha_grad(float *d_log_alpha, float *dg, int rows, int width);

/* out row t = w[t] * x row t (rows x width). */
void gated_scale_rows(float *out, const float *x, const float *w, int rows, int width);

/* Running sums g (rows x width, double) of log_alpha from the chunk's start
 * (NULL: no decay, all 0). */
void gated_running_sums(double *g, const float *log_alpha, int rows, int width);

/* exp(x) for x <= 0 given in double, rounded once to float; 0 far below. */
float gated_exp(double x);

/* A state step's parallel region is worth it from this many state floats
 * (heads x D x M), as linear attention's. */
int gated_step_parallel(const lt_attn *attn, int heads, int D, int M, int steps);

/* A model count of `per_token` D M FLOPs a position and head forward,
 * backward modelled as twice that. */
double gated_model_flops(lt_attn_shape shape, double per_token, int backward);

/* The variant table entries all three share (no parameters, no reference
 * products). */
size_t gated_no_saved(const lt_attn *attn, lt_attn_shape shape);

/* xn (rows x D) = x / sqrt(|x|^2 + 1e-6) row by row, the roots into norm:
 * DeltaNet's l2norm of q and k (delta, gated-delta). */
void gated_l2_rows(float *xn, float *norm, const float *x, int rows, int D);

/* dx += the gradient through gated_l2_rows: (dxn - xn (xn . dxn)) / norm. */
void gated_l2_rows_backward(float *dx, const float *dxn, const float *xn, const float *norm,
                            int rows, int D);

/* One position of delta / gated-delta on the state S (D x M, S^T of
 * attn.h): S = a S; u = b (v - S^T k); S += k u^T; out = S^T q, with q, k
 * normalised and u (M) scratch. out NULL: the state alone (the same bits).
 * The step, the recurrent kernel and its backward's rebuilt states all
 * come from here, so they agree to the bit. */
void gated_delta_token(float *S, float *u, float *out, const float *qn, const float *kn,
                       const float *v, float a, float b, int D, int M);

/* One position of gla: S = diag(exp(log_alpha)) S + k v^T, out = S^T q
 * (out NULL: the state alone). Shared as gated_delta_token is. */
void gated_gla_token(float *S, float *out, const float *q, const float *k, const float *v,
                     const float *log_alpha, int D, int M);

/* ---- the recurrent kernels (gated_recurrent.c) ---- */

/* Per-head functions of delta-causal-recurrent and
 * gated-delta-causal-recurrent (one pair: gated-delta's decay is read when
 * the call has log_alpha), and of gla-causal-recurrent. */
void gated_delta_recurrent_forward(const attn_call *call, int bh, char *ws, int inner);
void gated_delta_recurrent_backward(const attn_call *call, int bh, char *ws, int inner);
void gated_gla_recurrent_forward(const attn_call *call, int bh, char *ws, int inner);
void gated_gla_recurrent_backward(const attn_call *call, int bh, char *ws, int inner);

/* Workspace bytes of one thread of a recurrent kernel (forward's space
 * inside backward's). */
size_t gated_recurrent_slice_bytes(lt_attn_shape shape);

/* FLOPs a recurrent kernel performs on one head of n rows, given per
 * position (in units of D M FLOPs) its forward (`token`), a state update
 * alone as backward's sweeps redo it (`advance`), and backward's own walk
 * back (`back`). */
double gated_recurrent_head_flops(lt_attn_shape shape, int n, int backward, double token,
                                  double advance, double back);

#endif
