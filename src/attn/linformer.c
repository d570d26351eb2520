/* Linformer attention (Wang et al. 2020): keys and values are projected
 * along the sequence by learned E, F (k x n_max, shared by all heads; a
 * sequence of N <= n_max positions uses their first N columns), then softmax
 * attention runs over the k projected slots:
 *   Kp = E[:, :N] K (k x D),  Vp = F[:, :N] V (k x M),
 *   out = softmax(Q Kp^T / sqrt(D)) Vp.
 * Non-causal only: every projected slot mixes all positions. */
#include <math.h>

#include "attn/attn_internal.h"
#include "core/gemm.h"
#include "core/rng.h"

static const char KERNEL_GEMM[] = "linformer-gemm";

static const char NOT_CAUSAL_REASON[] =
    "every projected key/value slot mixes all positions of the sequence, so no position "
    "can be kept from seeing later ones (Linformer is encoder-only)";

static float score_scale(int D) { return 1.0f / sqrtf((float)D); }

/* One head's saved tensors, laid out [P (B,H,N,k) | Kp (B,H,k,D) | Vp (B,H,k,M)]. */
typedef struct saved_view {
    float *p, *kp, *vp;
} saved_view;

static saved_view view_saved(const attn_call *call, int bh)
{
    saved_view s = {NULL, NULL, NULL};
    if (call->saved == NULL)
        return s;
    size_t BH = (size_t)call->shape.B * call->shape.H, N = call->shape.N;
    size_t D = call->shape.D, M = call->shape.M, K = call->attn->config.proj_k;
    float *base = call->saved;
    s.p = base + bh * N * K;
    s.kp = base + BH * N * K + bh * K * D;
    s.vp = base + BH * N * K + BH * K * D + bh * K * M;
    return s;
}

/* Workspace of one thread: a probability block (backward: its gradient)
 * and, for a forward that saves nothing, the projected keys and values. */
typedef struct slice_view {
    float *p, *kp, *vp;
} slice_view;

static slice_view view_slice(char *ws, lt_attn_shape shape, int K)
{
    slice_view w;
    w.p = attn_take(&ws, (size_t)shape.N * K);
    w.kp = attn_take(&ws, (size_t)K * shape.D);
    w.vp = attn_take(&ws, (size_t)K * shape.M);
    return w;
}

/* Shared workspace: every head's dKp (k x D) and dVp (k x M), kept until
 * dE and dF sum them over the heads in head order. */
static float *head_dkp(const attn_call *call, int bh)
{
    size_t K = call->attn->config.proj_k;
    return (float *)call->shared + (size_t)bh * K * call->shape.D;
}

static float *head_dvp(const attn_call *call, int bh)
{
    size_t K = call->attn->config.proj_k, BH = (size_t)call->shape.B * call->shape.H;
    return (float *)call->shared + BH * K * call->shape.D + (size_t)bh * K * call->shape.M;
}

static void head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    /* A sequence shorter than the padded N projects through the first N
     * columns of E and F, exactly as when it runs alone. */
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int K = call->attn->config.proj_k, n_max = call->attn->config.n_max;
    const float *E = call->params, *F = call->params + (size_t)K * n_max;
    const float *q = call->q + (size_t)bh * stride * D, *k = call->k + (size_t)bh * stride * D;
    const float *v = call->v + (size_t)bh * stride * M;
    float *out = call->out + (size_t)bh * stride * M;
    saved_view s = view_saved(call, bh);
    slice_view w = view_slice(ws, call->shape, K);
    float *p = s.p != NULL ? s.p : w.p;
    float *kp = s.kp != NULL ? s.kp : w.kp;
    float *vp = s.vp != NULL ? s.vp : w.vp;

    lt_sgemm(LT_N, LT_N, K, D, N, 1.0f, E, n_max, k, D, 0.0f, kp, D);
    lt_sgemm(LT_N, LT_N, K, M, N, 1.0f, F, n_max, v, M, 0.0f, vp, M);
    lt_sgemm(LT_N, LT_T, N, K, D, score_scale(D), q, D, kp, D, 0.0f, p, K);
    attn_softmax_rows(p, K, N, K, 0, 0, inner);
    lt_sgemm(LT_N, LT_N, N, M, K, 1.0f, p, K, vp, M, 0.0f, out, M);
}

/* Everything of one head's backward but its share of dE and dF, which
 * linformer_backward adds afterwards from the dKp, dVp left in `shared`. */
static void head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int K = call->attn->config.proj_k, n_max = call->attn->config.n_max;
    const float scale = score_scale(D);
    const float *E = call->params, *F = call->params + (size_t)K * n_max;
    size_t qk = (size_t)bh * stride * D, vo = (size_t)bh * stride * M;
    const float *q = call->q + qk, *g = call->d_out + vo;
    saved_view s = view_saved(call, bh);
    float *ds = view_slice(ws, call->shape, K).p;
    float *dkp = head_dkp(call, bh), *dvp = head_dvp(call, bh);

    /* dVp = P^T dOut; dP = dOut Vp^T, then dS = P * (dP - rowsum(dP * P)) */
    lt_sgemm(LT_T, LT_N, K, M, N, 1.0f, s.p, K, g, M, 0.0f, dvp, M);
    lt_sgemm(LT_N, LT_T, N, K, M, 1.0f, g, M, s.vp, M, 0.0f, ds, K);
    attn_softmax_rows_backward(ds, K, s.p, K, N, K, inner);
    /* dQ += dS Kp / sqrt(D); dKp = dS^T Q / sqrt(D) */
    lt_sgemm(LT_N, LT_N, N, D, K, scale, ds, K, s.kp, D, 1.0f, call->dq + qk, D);
    lt_sgemm(LT_T, LT_N, K, D, N, scale, ds, K, q, D, 0.0f, dkp, D);
    /* Kp = E K: dK += E^T dKp; likewise V through F */
    lt_sgemm(LT_T, LT_N, N, D, K, 1.0f, E, n_max, dkp, D, 1.0f, call->dk + qk, D);
    lt_sgemm(LT_T, LT_N, N, M, K, 1.0f, F, n_max, dvp, M, 1.0f, call->dv + vo, M);
}

static void linformer_forward(const attn_call *call) { attn_for_each_head(call, head_forward); }

/* Columns of dE or dF one task sums over the heads. */
#define DPARAM_COLS 256

/* dE += sum_h dKp_h K_h^T and dF += sum_h dVp_h V_h^T. Tasks own column
 * blocks of dE or dF and add the heads in head order, so every sum has the
 * same order for any thread count (and whether heads ran in parallel). */
static void add_param_grads(const attn_call *call)
{
    const int K = call->attn->config.proj_k, n_max = call->attn->config.n_max;
    const int N = call->shape.N, heads = call->shape.B * call->shape.H;
    const int blocks = (N + DPARAM_COLS - 1) / DPARAM_COLS;
#pragma omp parallel for schedule(static) num_threads(call->threads)
    for (int task = 0; task < 2 * blocks; task++) {
        const int of_f = task >= blocks, n0 = (task % blocks) * DPARAM_COLS;
        const int width = of_f ? call->shape.M : call->shape.D;
        float *dparam = call->d_params + (size_t)of_f * K * n_max + n0;
        for (int bh = 0; bh < heads; bh++) {
            int end = attn_head_rows(call, bh) < n0 + DPARAM_COLS ? attn_head_rows(call, bh)
                                                                   : n0 + DPARAM_COLS;
            if (end <= n0)
                continue;
            const float *x = (of_f ? call->v : call->k) + ((size_t)bh * N + n0) * width;
            const float *dx = of_f ? head_dvp(call, bh) : head_dkp(call, bh);
            lt_sgemm_serial(LT_N, LT_T, K, end - n0, width, 1.0f, dx, width, x, width, 1.0f,
                            dparam, n_max);
        }
    }
}

static void linformer_backward(const attn_call *call)
{
    attn_for_each_head(call, head_backward);
    add_param_grads(call);
}

/* ---- variant interface ---- */

static lt_status linformer_check_config(const lt_attn_config *config)
{
    if (config->causal)
        return lt_fail(LT_E_USAGE, "causal: linformer attention cannot be causal: %s; use "
                                   "softmax or linear attention for causal models",
                       NOT_CAUSAL_REASON);
    if (config->proj_k < 1)
        return lt_fail(LT_E_USAGE, "proj_k: linformer's projected length must be >= 1, got %d",
                       config->proj_k);
    if (config->n_max < 1)
        return lt_fail(LT_E_USAGE, "n_max: linformer's maximum length must be >= 1, got %d",
                       config->n_max);
    return LT_OK;
}

static size_t linformer_param_count(const lt_attn_config *config)
{
    return 2 * (size_t)config->proj_k * config->n_max;
}

/* E and F ~ normal(0, 1/sqrt(k)), from streams 0 and 1 of `seed`. */
static void linformer_init_params(const lt_attn_config *config, float *params,
                                  unsigned long long seed)
{
    size_t count = (size_t)config->proj_k * config->n_max;
    float stddev = 1.0f / sqrtf((float)config->proj_k);
    for (int which = 0; which < 2; which++) {
        lt_rng rng;
        lt_rng_seed(&rng, seed, (uint64_t)which);
        lt_rng_fill_normal(&rng, params + which * count, (long)count, stddev);
    }
}

static size_t linformer_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t K = attn->config.proj_k;
    return (size_t)shape.B * shape.H * K * ((size_t)shape.N + shape.D + shape.M) * sizeof(float);
}

static size_t linformer_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t K = attn->config.proj_k, N = shape.N;
    return attn_round(N * K * sizeof(float)) + attn_round(K * shape.D * sizeof(float)) +
           attn_round(K * shape.M * sizeof(float));
}

static size_t linformer_shared_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    return (size_t)shape.B * shape.H * attn->config.proj_k * ((size_t)shape.D + shape.M) *
           sizeof(float);
}

/* Model (per head, multiply-add = 2): the projections E K and F V cost
 * 2 k N D and 2 k N M, the scores Q Kp^T 2 N k D and P Vp 2 N k M, so a
 * forward is 4 N k (D + M). Backward runs eight products of those sizes
 * (dVp, dP, dQ, dKp, dK, dE, dV, dF): twice the forward. */
static double linformer_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    double forward = 4.0 * shape.N * (double)attn->config.proj_k * (shape.D + shape.M) * shape.B *
                     shape.H;
    return backward ? 2.0 * forward : forward;
}

/* The one kernel runs the model's products, over the sequence's own n. */
static double linformer_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                                   int inner)
{
    (void)inner;
    double forward = 4.0 * n * (double)attn->config.proj_k * (shape.D + shape.M);
    return backward ? 2.0 * forward : forward;
}

/* Its backward adds the heads' parameter gradients after the heads, so the
 * variant runs the heads itself. */
static const attn_kernel_info linformer_kernels[] = {
    {KERNEL_GEMM, ATTN_NONCAUSAL_ONLY, NULL, NULL, NULL},
};

const lt_attn_variant lt_attn_linformer_variant = {
    .name = "linformer",
    .kernels = linformer_kernels,
    .kernel_count = 1,
    .kernel_names = "linformer-gemm",
    .check_config = linformer_check_config,
    .param_count = linformer_param_count,
    .init_params = linformer_init_params,
    .saved_bytes = linformer_saved_bytes,
    .slice_bytes = linformer_slice_bytes,
    .shared_bytes = linformer_shared_bytes,
    .flops = linformer_flops,
    .head_flops = linformer_head_flops,
    .forward = linformer_forward,
    .backward = linformer_backward,
    .no_causal_reason = NOT_CAUSAL_REASON,
    .no_recurrence_reason = NOT_CAUSAL_REASON,
};
