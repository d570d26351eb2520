/* Softmax attention: out = softmax(Q K^T / sqrt(D)) V, the paper's baseline.
 *
 * softmax-gemm computes the scores a block of query rows at a time with
 * sgemm, straight into the saved probabilities P (B,H,N,N) when training or
 * into a per-thread block when only the output is wanted. Causal blocks stop
 * at their last row's position, skipping the masked triangle except inside
 * the diagonal block (masked there with -INFINITY).
 *
 * softmax-reference is the same computation in plain loops, kept to test the
 * fast kernel against. */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "attn/attn_internal.h"

/* Query rows per score block: enough rows for efficient GEMMs while the
 * inference-only scratch stays BLOCK_ROWS x N per thread. */
#define BLOCK_ROWS 128

static const char KERNEL_GEMM[] = "softmax-gemm";
static const char KERNEL_REFERENCE[] = "softmax-reference";

/* Indexes softmax_kernels below (resolved once by lt_attn_init). */
enum { GEMM, REFERENCE };

static int uses_reference(const lt_attn *attn) { return attn->kernel == REFERENCE; }

static float score_scale(int D) { return 1.0f / sqrtf((float)D); }

static int block_rows(int N) { return N < BLOCK_ROWS ? N : BLOCK_ROWS; }

/* One head's saved probabilities P (N, N) at the padded N (row stride N;
 * a shorter sequence uses the top-left block), or NULL when not saved. */
static float *saved_probs(const attn_call *call, int bh)
{
    size_t N = call->shape.N;
    return call->saved != NULL ? (float *)call->saved + (size_t)bh * N * N : NULL;
}

/* ---- softmax-gemm ---- */

static void gemm_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int causal = call->attn->config.causal;
    attn_head h = attn_view_head(call, bh);
    float *probs = saved_probs(call, bh);
    for (int r0 = 0; r0 < N; r0 += BLOCK_ROWS) {
        int rows = N - r0 < BLOCK_ROWS ? N - r0 : BLOCK_ROWS;
        int cols = causal ? r0 + rows : N; /* later keys are all masked */
        float *p = probs != NULL ? probs + (size_t)r0 * stride : (float *)ws;
        size_t ld = probs != NULL ? stride : (size_t)cols;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, D, score_scale(D),
                    h.q + (size_t)r0 * D, D, h.k, D, 0.0f, p, ld);
        attn_softmax_rows(p, ld, rows, cols, r0, causal, inner);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, M, cols, 1.0f, p, ld, h.v,
                    M, 0.0f, h.out + (size_t)r0 * M, M);
    }
}

static void gemm_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int causal = call->attn->config.causal;
    const float scale = score_scale(D);
    attn_head h = attn_view_head(call, bh);
    float *probs = saved_probs(call, bh);
    float *ds = (float *)ws; /* dL/dP, then dL/dS, of one block (rows x cols) */
    for (int r0 = 0; r0 < N; r0 += BLOCK_ROWS) {
        int rows = N - r0 < BLOCK_ROWS ? N - r0 : BLOCK_ROWS;
        int cols = causal ? r0 + rows : N;
        const float *p = probs + (size_t)r0 * stride;
        const float *g = h.d_out + (size_t)r0 * M;
        /* dV[:cols] += P^T dOut */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, M, rows, 1.0f, p, stride, g,
                    M, 1.0f, h.dv, M);
        /* dP = dOut V^T, then dS = P * (dP - rowsum(dP * P)) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, M, 1.0f, g, M, h.v, M,
                    0.0f, ds, cols);
        attn_softmax_rows_backward(ds, cols, p, stride, rows, cols, inner);
        /* dQ += dS K / sqrt(D), dK[:cols] += dS^T Q / sqrt(D) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, cols, scale, ds, cols,
                    h.k, D, 1.0f, h.dq + (size_t)r0 * D, D);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, D, rows, scale, ds, cols,
                    h.q + (size_t)r0 * D, D, 1.0f, h.dk, D);
    }
}

/* ---- softmax-reference: the same computation in plain loops ---- */

static void reference_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const int causal = call->attn->config.causal;
    const float scale = score_scale(D);
    attn_head h = attn_view_head(call, bh);
    float *probs = saved_probs(call, bh);
    for (int i = 0; i < N; i++) {
        float *p = probs != NULL ? probs + (size_t)i * stride : (float *)ws;
        int cols = causal ? i + 1 : N;
        float max = -INFINITY;
        for (int j = 0; j < cols; j++) {
            float s = 0.0f;
            for (int d = 0; d < D; d++)
                s += h.q[(size_t)i * D + d] * h.k[(size_t)j * D + d];
            p[j] = s * scale;
            if (p[j] > max)
                max = p[j];
        }
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) {
            p[j] = expf(p[j] - max);
            sum += p[j];
        }
        for (int j = 0; j < cols; j++)
            p[j] /= sum;
        for (int j = cols; j < N; j++)
            p[j] = 0.0f;
        for (int m = 0; m < M; m++) {
            float acc = 0.0f;
            for (int j = 0; j < cols; j++)
                acc += p[j] * h.v[(size_t)j * M + m];
            h.out[(size_t)i * M + m] = acc;
        }
    }
}

static void reference_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const size_t stride = (size_t)call->shape.N;
    const float scale = score_scale(D);
    attn_head h = attn_view_head(call, bh);
    float *probs = saved_probs(call, bh);
    float *dp = (float *)ws; /* one row of dL/dP, then dL/dS */
    for (int i = 0; i < N; i++) {
        const float *p = probs + (size_t)i * stride;
        const float *g = h.d_out + (size_t)i * M;
        float dot = 0.0f;
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int m = 0; m < M; m++) {
                s += g[m] * h.v[(size_t)j * M + m];
                h.dv[(size_t)j * M + m] += p[j] * g[m];
            }
            dp[j] = s;
            dot += s * p[j];
        }
        for (int j = 0; j < N; j++) {
            float ds = p[j] * (dp[j] - dot) * scale;
            for (int d = 0; d < D; d++) {
                h.dq[(size_t)i * D + d] += ds * h.k[(size_t)j * D + d];
                h.dk[(size_t)j * D + d] += ds * h.q[(size_t)i * D + d];
            }
        }
    }
}

/* ---- variant interface ---- */

static lt_status softmax_check_config(const lt_attn_config *config)
{
    (void)config;
    return LT_OK;
}

static size_t softmax_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    (void)attn;
    return (size_t)shape.B * shape.H * shape.N * shape.N * sizeof(float);
}

static size_t softmax_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t rows = uses_reference(attn) ? 1 : (size_t)block_rows(shape.N);
    return rows * shape.N * sizeof(float);
}

/* Model: QK^T is 2 N^2 D and PV is 2 N^2 M multiply-adds counted as 2, so a
 * forward is 2 N^2 (D + M) per head (the exp and normalisation, O(N^2), are
 * not counted), halved when causal because the masked triangle is skipped.
 * Backward runs four products of the same sizes (dV = P^T dO, dP = dO V^T,
 * dQ = dS K, dK = dS^T Q): 4 N^2 (D + M), twice the forward. */
static double softmax_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    double n = shape.N;
    double forward = 2.0 * n * n * (shape.D + shape.M) * shape.B * shape.H;
    if (attn->config.causal)
        forward *= 0.5;
    return backward ? 2.0 * forward : forward;
}

static void softmax_forward(const attn_call *call)
{
    attn_for_each_head(call, uses_reference(call->attn) ? reference_head_forward
                                                         : gemm_head_forward);
}

static void softmax_backward(const attn_call *call)
{
    attn_for_each_head(call, uses_reference(call->attn) ? reference_head_backward
                                                         : gemm_head_backward);
}

/* ---- recurrent form: a key/value cache ---- */

/* Payload: keys (B,H,max_steps,D) then values (B,H,max_steps,M). */
static size_t softmax_state_payload_bytes(int B, int H, int D, int M, int max_steps)
{
    return (size_t)B * H * max_steps * (D + M) * sizeof(float);
}

/* Appends (k, v) to each head's cache and attends over all cached rows with
 * an online softmax (running max and sum, rescaled when the max grows), so
 * no score buffer is needed; out holds the running weighted sum. */
static lt_status softmax_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                              int max_steps, int steps, float *out, const float *q,
                              const float *k, const float *v)
{
    if (steps >= max_steps)
        return lt_fail(LT_E_USAGE,
                       "softmax attention step: the key/value cache is full (max_steps = %d); "
                       "initialise the state with a larger max_steps",
                       max_steps);
    const int heads = B * H;
    const float scale = score_scale(D);
    float *keys = (float *)payload;
    float *values = keys + (size_t)heads * max_steps * D;
    (void)attn;
#pragma omp parallel for schedule(static)
    for (int bh = 0; bh < heads; bh++) {
        float *kc = keys + (size_t)bh * max_steps * D;
        float *vc = values + (size_t)bh * max_steps * M;
        const float *qh = q + (size_t)bh * D;
        float *o = out + (size_t)bh * M;
        memcpy(kc + (size_t)steps * D, k + (size_t)bh * D, (size_t)D * sizeof(float));
        memcpy(vc + (size_t)steps * M, v + (size_t)bh * M, (size_t)M * sizeof(float));
        float max = -INFINITY, sum = 0.0f;
        for (int m = 0; m < M; m++)
            o[m] = 0.0f;
        for (int j = 0; j <= steps; j++) {
            float s = 0.0f;
            for (int d = 0; d < D; d++)
                s += qh[d] * kc[(size_t)j * D + d];
            s *= scale;
            if (s > max) {
                float shrink = expf(max - s); /* 0 on the first row */
                sum *= shrink;
                for (int m = 0; m < M; m++)
                    o[m] *= shrink;
                max = s;
            }
            float w = expf(s - max);
            sum += w;
            for (int m = 0; m < M; m++)
                o[m] += w * vc[(size_t)j * M + m];
        }
        for (int m = 0; m < M; m++)
            o[m] /= sum;
    }
    return LT_OK;
}

static const attn_kernel_info softmax_kernels[] = {
    {KERNEL_GEMM, ATTN_EITHER},
    {KERNEL_REFERENCE, ATTN_EITHER},
};

const lt_attn_variant lt_attn_softmax_variant = {
    .name = "softmax",
    .kernels = softmax_kernels,
    .kernel_count = 2,
    .kernel_names = "softmax-gemm|softmax-reference",
    .check_config = softmax_check_config,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = softmax_saved_bytes,
    .slice_bytes = softmax_slice_bytes,
    .flops = softmax_flops,
    .forward = softmax_forward,
    .backward = softmax_backward,
    .state_payload_bytes = softmax_state_payload_bytes,
    .step = softmax_step,
};
