/* Linformer attention (Wang et al. 2020): keys and values are projected
 * along the sequence by learned E, F (k x n_max, shared by all heads; a
 * sequence of N <= n_max positions uses their first N columns), then softmax
 * attention runs over the k projected slots:
 *   Kp = E[:, :N] K (k x D),  Vp = F[:, :N] V (k x M),
 *   out = softmax(Q Kp^T / sqrt(D)) Vp.
 * Non-causal only: every projected slot mixes all positions. */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "attn/attn_internal.h"
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

/* Workspace of one thread: a probability (or its gradient) block, the
 * projected keys and values (or their gradients), and private dE, dF
 * accumulators (k x N each) for when heads run in parallel. */
typedef struct slice_view {
    float *p, *kp, *vp, *acc_e, *acc_f;
} slice_view;

static slice_view view_slice(char *ws, lt_attn_shape shape, int K)
{
    slice_view w;
    w.p = attn_take(&ws, (size_t)shape.N * K);
    w.kp = attn_take(&ws, (size_t)K * shape.D);
    w.vp = attn_take(&ws, (size_t)K * shape.M);
    w.acc_e = attn_take(&ws, (size_t)K * shape.N);
    w.acc_f = attn_take(&ws, (size_t)K * shape.N);
    return w;
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

    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, D, N, 1.0f, E, n_max, k, D, 0.0f, kp,
                D);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, M, N, 1.0f, F, n_max, v, M, 0.0f, vp,
                M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, K, D, score_scale(D), q, D, kp, D, 0.0f,
                p, K);
    attn_softmax_rows(p, K, N, K, 0, 0, inner);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, M, K, 1.0f, p, K, vp, M, 0.0f, out, M);
}

static void head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int K = call->attn->config.proj_k, n_max = call->attn->config.n_max;
    const float scale = score_scale(D);
    const float *E = call->params, *F = call->params + (size_t)K * n_max;
    size_t qk = (size_t)bh * stride * D, vo = (size_t)bh * stride * M;
    const float *q = call->q + qk, *k = call->k + qk, *v = call->v + vo, *g = call->d_out + vo;
    saved_view s = view_saved(call, bh);
    slice_view w = view_slice(ws, call->shape, K);
    float *ds = w.p, *dkp = w.kp, *dvp = w.vp;
    /* Heads one at a time may add straight into d_params; heads in parallel
     * add into their thread's private copy, reduced afterwards. */
    float *dE = inner ? call->d_params : w.acc_e;
    float *dF = inner ? call->d_params + (size_t)K * n_max : w.acc_f;
    size_t ld = inner ? (size_t)n_max : stride;

    /* dVp = P^T dOut; dP = dOut Vp^T, then dS = P * (dP - rowsum(dP * P)) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, M, N, 1.0f, s.p, K, g, M, 0.0f, dvp, M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, K, M, 1.0f, g, M, s.vp, M, 0.0f, ds, K);
    attn_softmax_rows_backward(ds, K, s.p, K, N, K, inner);
    /* dQ += dS Kp / sqrt(D); dKp = dS^T Q / sqrt(D) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, D, K, scale, ds, K, s.kp, D, 1.0f,
                call->dq + qk, D);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, D, N, scale, ds, K, q, D, 0.0f, dkp, D);
    /* Kp = E K: dK += E^T dKp, dE += dKp K^T; likewise V through F */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, D, K, 1.0f, E, n_max, dkp, D, 1.0f,
                call->dk + qk, D);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K, N, D, 1.0f, dkp, D, k, D, 1.0f, dE, ld);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, M, K, 1.0f, F, n_max, dvp, M, 1.0f,
                call->dv + vo, M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K, N, M, 1.0f, dvp, M, v, M, 1.0f, dF, ld);
}

static void linformer_forward(const attn_call *call) { attn_for_each_head(call, head_forward); }

static void linformer_backward(const attn_call *call)
{
    const int K = call->attn->config.proj_k, N = call->shape.N, n_max = call->attn->config.n_max;
    const int across = attn_across_heads(call);
    if (across)
        for (int t = 0; t < call->threads; t++) {
            slice_view w = view_slice(call->workspace + (size_t)t * call->slice, call->shape, K);
            memset(w.acc_e, 0, (size_t)K * N * sizeof(float));
            memset(w.acc_f, 0, (size_t)K * N * sizeof(float));
        }
    attn_for_each_head(call, head_backward);
    if (!across)
        return;
    /* Rows 0..K-1 are E's, K..2K-1 F's; threads added in a fixed order. */
#pragma omp parallel for schedule(static) num_threads(call->threads)
    for (int row = 0; row < 2 * K; row++) {
        float *dst = call->d_params + (size_t)row * n_max;
        for (int t = 0; t < call->threads; t++) {
            slice_view w = view_slice(call->workspace + (size_t)t * call->slice, call->shape, K);
            const float *src = row < K ? w.acc_e + (size_t)row * N : w.acc_f + (size_t)(row - K) * N;
            for (int j = 0; j < N; j++)
                dst[j] += src[j];
        }
    }
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
    return 3 * attn_round(N * K * sizeof(float)) + attn_round(K * shape.D * sizeof(float)) +
           attn_round(K * shape.M * sizeof(float));
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

/* Its backward adds the threads' parameter gradients after the heads, so the
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
    .flops = linformer_flops,
    .head_flops = linformer_head_flops,
    .forward = linformer_forward,
    .backward = linformer_backward,
    .no_causal_reason = NOT_CAUSAL_REASON,
    .no_recurrence_reason = NOT_CAUSAL_REASON,
};
