/* Gated linear attention (`gla`, attn.h): S_t = diag(alpha_t) S_{t-1} +
 * k_t v_t^T, S D x M, out_t = S_t^T q_t, alpha_t a decay per key channel.
 *
 * Kernel gla-causal-chunked: chunks of GLA_CHUNK rows through the state.
 * With g_t the running sums of log alpha from the chunk's start (per
 * channel, in double) and S_0 the entering state:
 *   out_t = S_0^T (q_t . e^{g_t}) + sum_{s <= t} (sum_f q_tf k_sf e^{g_tf - g_sf}) v_s,
 *   S_C   = diag(e^{g_last}) S_0 + sum_s (k_s . e^{g_last - g_s}) v_s^T.
 * Every exponent is a difference <= 0. The usual factorisation of the
 * scores, (q . e^g)(k . e^-g)^T as one GEMM, needs e^{-g_s}, which
 * overflows once decays of 1e-12 have run for four rows; so the scores are
 * formed pairwise, each pair's own exponentials, which costs C D / 2
 * exponentials a row: hence short chunks (16), with the state products as
 * GEMMs. Forward saves nothing; backward rebuilds each chunk's entering
 * state in one sweep, then walks the chunks backwards. A head runs on one
 * thread with single-threaded products: the same bits on any thread count. */
#include <string.h>

#include "attn/attn_internal.h"
#include "attn/gated.h"
#include "core/gemm.h"
#include "core/vexp.h"

#define GLA_CHUNKED "gla-causal-chunked"
#define GLA_RECURRENT "gla-causal-recurrent"

/* gla_kernels below: the chunked kernel (the default), then the recurrent
 * one (gated_recurrent.c: a position at a time, as the recurrent step). */
enum { CHUNKED, RECURRENT };

/* Rows a chunk: the pairwise scores cost C D / 2 exponentials a row, the
 * state products 4 D M multiply-adds a row whatever C. */
#define GLA_CHUNK 16

typedef struct gla_plan {
    int n, D, M, C, chunks;
} gla_plan;

static gla_plan plan_of(lt_attn_shape shape, int n)
{
    gla_plan p = {n, shape.D, shape.M, GLA_CHUNK, (n + GLA_CHUNK - 1) / GLA_CHUNK};
    return p;
}

typedef struct gla_space {
    float *S;           /* forward (D, M); backward (chunks, D, M) entering states */
    float *dS;          /* backward (D, M) */
    double *g;          /* (C, D) running sums */
    float *E, *tail;    /* (C, D): e^{g_t}, e^{g_last - g_t} */
    float *Qg, *Kt;     /* (C, D): q . E, k . tail */
    float *P, *w;       /* (C, C) scores; (D) one pair's exponentials */
    float *dP, *R, *dg; /* backward: (C, C), (C, D), (C, D) */
} gla_space;

static gla_space space_of(char *ws, const gla_plan *p, int backward, size_t *bytes)
{
    gla_space s = {0};
    gated_cursor c = {ws, 0};
    const size_t C = p->C, D = p->D, M = p->M;
    /* at least one state: a sequence of length 0 still clears it */
    s.S = gated_take(&c, (backward && p->chunks > 1 ? (size_t)p->chunks : 1) * D * M);
    s.g = gated_take_doubles(&c, C * D);
    s.E = gated_take(&c, C * D), s.tail = gated_take(&c, C * D);
    s.Qg = gated_take(&c, C * D), s.Kt = gated_take(&c, C * D);
    s.P = gated_take(&c, C * C), s.w = gated_take(&c, D);
    if (backward) {
        s.dS = gated_take(&c, D * M), s.dP = gated_take(&c, C * C);
        s.R = gated_take(&c, C * D), s.dg = gated_take(&c, C * D);
    }
    if (bytes != NULL)
        *bytes = c.bytes;
    return s;
}

typedef struct gla_rows {
    const float *q, *k, *v, *log_alpha;
    int c0, rows;
} gla_rows;

static gla_rows rows_of(const attn_call *call, int bh, const gla_plan *p, int c)
{
    const int c0 = c * p->C;
    const size_t row = (size_t)bh * call->shape.N + (size_t)c0;
    gla_rows r = {call->q + row * p->D, call->k + row * p->D, call->v + row * p->M,
                  call->gates.log_alpha + row * p->D, c0, p->n - c0 < p->C ? p->n - c0 : p->C};
    return r;
}

/* w (D) = e^{g_t - g_s} for s <= t: each exponent a difference <= 0. */
static void pair_decay(float *w, const double *gt, const double *gs, int D)
{
    for (int f = 0; f < D; f++)
        w[f] = lt_exp_nonpositive((float)(gt[f] - gs[f]));
}

/* Decays, Qg = q . E, Kt = k . tail, and the scores P (0 above the diagonal). */
static void chunk_prepare(const gla_plan *p, const gla_space *s, const gla_rows *r)
{
    const int n = r->rows, D = p->D, C = p->C;
    const double *last = s->g + (size_t)(n - 1) * D;
    gated_running_sums(s->g, r->log_alpha, n, D);
    for (int t = 0; t < n; t++)
        for (int f = 0; f < D; f++) {
            const size_t tf = (size_t)t * D + f;
            s->E[tf] = gated_exp(s->g[tf]);
            s->tail[tf] = gated_exp(last[f] - s->g[tf]);
            s->Qg[tf] = r->q[tf] * s->E[tf];
            s->Kt[tf] = r->k[tf] * s->tail[tf];
        }
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++) {
            float score = 0.0f;
            if (j <= t) {
                const float *qt = r->q + (size_t)t * D, *kj = r->k + (size_t)j * D;
                pair_decay(s->w, s->g + (size_t)t * D, s->g + (size_t)j * D, D);
                for (int f = 0; f < D; f++)
                    score += qt[f] * kj[f] * s->w[f];
            }
            s->P[(size_t)t * C + j] = score;
        }
}

/* S (D x M) moves to the chunk's end: diag(E_last) S + Kt^T V. */
static void chunk_to_end(const gla_plan *p, const gla_space *s, const gla_rows *r, float *S)
{
    const int D = p->D, M = p->M, n = r->rows;
    const float *last = s->E + (size_t)(n - 1) * D;
    for (int f = 0; f < D; f++)
        for (int m = 0; m < M; m++)
            S[(size_t)f * M + m] *= last[f];
    lt_sgemm_small(LT_T, LT_N, D, M, n, 1.0f, s->Kt, D, r->v, M, 1.0f, S, M);
}

static void head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner; /* chunks follow each other through the state */
    const gla_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const gla_space s = space_of(ws, &p, 0, NULL);
    const int D = p.D, M = p.M;
    memset(s.S, 0, (size_t)D * M * sizeof(float));
    for (int c = 0; c < p.chunks; c++) {
        const gla_rows r = rows_of(call, bh, &p, c);
        float *out = call->out + ((size_t)bh * call->shape.N + r.c0) * M;
        chunk_prepare(&p, &s, &r);
        lt_sgemm_small(LT_N, LT_N, r.rows, M, D, 1.0f, s.Qg, D, s.S, M, 0.0f, out, M);
        lt_sgemm_small(LT_N, LT_N, r.rows, M, r.rows, 1.0f, s.P, p.C, r.v, M, 1.0f, out, M);
        chunk_to_end(&p, &s, &r, s.S);
    }
}

/* ---- backward ---- */

static void sweep_states(const attn_call *call, int bh, const gla_plan *p, const gla_space *s)
{
    const size_t DM = (size_t)p->D * p->M;
    memset(s->S, 0, DM * sizeof(float));
    for (int c = 0; c + 1 < p->chunks; c++) {
        const gla_rows r = rows_of(call, bh, p, c);
        float *next = s->S + (size_t)(c + 1) * DM;
        memcpy(next, s->S + (size_t)c * DM, DM * sizeof(float));
        chunk_prepare(p, s, &r);
        chunk_to_end(p, s, &r, next);
    }
}

/* Through S' = diag(E_last) S + Kt^T V, then out = Qg S: dV, dK and dQ's
 * state terms, the decays' share into dg, and dS moved to S. */
static void back_state(const gla_plan *p, const gla_space *s, const gla_rows *r, const float *S,
                       const float *dO, float *dq, float *dk, float *dv)
{
    const int D = p->D, M = p->M, n = r->rows;
    float *dg_last = s->dg + (size_t)(n - 1) * D;
    const float *E_last = s->E + (size_t)(n - 1) * D;
    lt_sgemm_small(LT_N, LT_T, n, D, M, 1.0f, r->v, M, s->dS, M, 0.0f, s->R, D); /* dKt */
    lt_sgemm_small(LT_N, LT_N, n, M, D, 1.0f, s->Kt, D, s->dS, M, 1.0f, dv, M);
    for (size_t tf = 0; tf < (size_t)n * D; tf++) {
        const float w = s->Kt[tf] * s->R[tf];
        dk[tf] += s->tail[tf] * s->R[tf];
        dg_last[tf % D] += w;
        s->dg[tf] -= w;
    }
    for (int f = 0; f < D; f++) {
        float *row = s->dS + (size_t)f * M, along = 0.0f;
        for (int m = 0; m < M; m++)
            along += S[(size_t)f * M + m] * row[m];
        dg_last[f] += E_last[f] * along;
        for (int m = 0; m < M; m++)
            row[m] *= E_last[f];
    }
    lt_sgemm_small(LT_N, LT_T, n, D, M, 1.0f, dO, M, S, M, 0.0f, s->R, D); /* dQg */
    for (size_t tf = 0; tf < (size_t)n * D; tf++) {
        dq[tf] += s->E[tf] * s->R[tf];
        s->dg[tf] += s->Qg[tf] * s->R[tf];
    }
    lt_sgemm_small(LT_T, LT_N, D, M, n, 1.0f, s->Qg, D, dO, M, 1.0f, s->dS, M);
}

/* Through the pairwise scores: out += P V. */
static void back_scores(const gla_plan *p, const gla_space *s, const gla_rows *r,
                        const float *dO, float *dq, float *dk, float *dv)
{
    const int D = p->D, M = p->M, C = p->C, n = r->rows;
    lt_sgemm_small(LT_N, LT_T, n, n, M, 1.0f, dO, M, r->v, M, 0.0f, s->dP, C);
    lt_sgemm_small(LT_T, LT_N, n, M, n, 1.0f, s->P, C, dO, M, 1.0f, dv, M);
    for (int t = 0; t < n; t++) {
        const float *qt = r->q + (size_t)t * D;
        float *dqt = dq + (size_t)t * D, *dgt = s->dg + (size_t)t * D;
        for (int j = 0; j <= t; j++) {
            const float dp = s->dP[(size_t)t * C + j], *kj = r->k + (size_t)j * D;
            float *dkj = dk + (size_t)j * D, *dgj = s->dg + (size_t)j * D;
            pair_decay(s->w, s->g + (size_t)t * D, s->g + (size_t)j * D, D);
            for (int f = 0; f < D; f++) {
                const float w = dp * s->w[f], z = w * qt[f] * kj[f];
                dqt[f] += w * kj[f];
                dkj[f] += w * qt[f];
                dgt[f] += z;
                dgj[f] -= z;
            }
        }
    }
}

static void head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const gla_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const gla_space s = space_of(ws, &p, 1, NULL);
    const int D = p.D, M = p.M;
    sweep_states(call, bh, &p, &s);
    memset(s.dS, 0, (size_t)D * M * sizeof(float));
    for (int c = p.chunks - 1; c >= 0; c--) {
        const gla_rows r = rows_of(call, bh, &p, c);
        const size_t row = (size_t)bh * call->shape.N + (size_t)r.c0;
        const float *S = s.S + (size_t)c * D * M, *dO = call->d_out + row * M;
        float *dq = call->dq + row * D, *dk = call->dk + row * D, *dv = call->dv + row * M;
        chunk_prepare(&p, &s, &r);
        memset(s.dg, 0, (size_t)r.rows * D * sizeof(float));
        back_state(&p, &s, &r, S, dO, dq, dk, dv);
        back_scores(&p, &s, &r, dO, dq, dk, dv);
        gated_add_log_alpha_grad(call->gates.d_log_alpha + row * D, s.dg, r.rows, D);
    }
}

/* ---- plans and counts ---- */

static size_t gla_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    if (attn->kernel == RECURRENT)
        return gated_recurrent_slice_bytes(shape);
    const gla_plan p = plan_of(shape, shape.N);
    size_t bytes;
    space_of(NULL, &p, 1, &bytes); /* backward's space holds forward's */
    return bytes;
}

/* Model (per head), as linear attention's state: a rank-one update and a
 * read of S, 2 D M each: 4 N D M; backward twice that. */
static double gla_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    (void)attn;
    return gated_model_flops(shape, 4.0, backward);
}

/* Per chunk of r rows: the state's products (Qg S, Kt^T V; backward a
 * sweep and six), P V and its two gradients, and the pairwise scores
 * (r (r + 1) / 2 pairs of 2 D; backward four such passes). */
static double gla_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                             int inner)
{
    (void)inner;
    /* recurrent: 4 D M a row forward; backward's sweeps redo k v^T (2 D M),
     * then a row back is S_t (k v^T again), S_t g, q g^T, dS v, k dS and
     * S . dS: 12 D M */
    if (attn->kernel == RECURRENT)
        return gated_recurrent_head_flops(shape, n, backward, 4.0, 2.0, 12.0);
    const double D = shape.D, M = shape.M;
    double total = 0.0;
    for (int c0 = 0; c0 < n; c0 += GLA_CHUNK) {
        const double r = n - c0 < GLA_CHUNK ? n - c0 : GLA_CHUNK, pairs = r * (r + 1.0) * D;
        total += backward ? 16.0 * r * D * M + 4.0 * r * r * M + 4.0 * pairs
                          : 4.0 * r * D * M + 2.0 * r * r * M + pairs;
    }
    return total;
}

/* ---- recurrent form: S (D, M) a head ---- */

static size_t gla_state_payload_bytes(const lt_attn *attn, int B, int H, int D, int M,
                                      int max_steps)
{
    (void)attn, (void)max_steps; /* constant size */
    return (size_t)B * H * D * M * sizeof(float);
}

static void gla_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                     int max_steps, int steps, int bh0, int bh1, float *out, const float *q,
                     const float *k, const float *v, const lt_attn_gates *gates)
{
    (void)attn, (void)B, (void)H, (void)max_steps, (void)steps;
    for (int bh = bh0; bh < bh1; bh++)
        gated_gla_token((float *)payload + (size_t)bh * D * M, out + (size_t)bh * M,
                        q + (size_t)bh * D, k + (size_t)bh * D, v + (size_t)bh * M,
                        gates->log_alpha + (size_t)bh * D, D, M);
}

static const attn_kernel_info gla_kernels[] = {
    [CHUNKED] = {GLA_CHUNKED, ATTN_CAUSAL_ONLY, head_forward, head_backward, NULL},
    [RECURRENT] = {GLA_RECURRENT, ATTN_CAUSAL_ONLY, gated_gla_recurrent_forward,
                   gated_gla_recurrent_backward, NULL},
};

const lt_attn_variant lt_attn_gla_variant = {
    .name = "gla",
    .kernels = gla_kernels,
    .kernel_count = 2,
    .kernel_names = GLA_CHUNKED "|" GLA_RECURRENT,
    .check_config = gated_check_config,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = gated_no_saved,
    .slice_bytes = gla_slice_bytes,
    .flops = gla_flops,
    .head_flops = gla_head_flops,
    .forward = attn_kernel_forward,
    .backward = attn_kernel_backward,
    .no_noncausal_reason = gated_not_noncausal,
    .state_payload_bytes = gla_state_payload_bytes,
    .step = gla_step,
    .step_parallel = gated_step_parallel,
    .gates = LT_ATTN_GATE_ALPHA_KEYS,
};
