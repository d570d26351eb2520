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
#include "core/kernels.h"
#include "core/lanes.h"
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
    float *P;           /* (C, C) scores */
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
    s.P = gated_take(&c, C * C);
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

/* exp(g_t - g_s) for one channel, s <= t: the difference of the double
 * sums (<= 0) rounded once to float, then the exponential that vectorises. */
static inline __attribute__((always_inline)) float pair_decay(double gt, double gs)
{
    return lt_exp_nonpositive((float)(gt - gs));
}

/* The running sums g of the chunk's log decays, E = e^{g_t}, tail =
 * e^{g_last - g_t}, Qg = q . E and Kt = k . tail. Each exponent is <= 0
 * and rounded once to float: exp then errs by at most |g| 2^-24 relative
 * plus the exponential's own 1.3 ulp, under 6e-6 wherever e^g is a normal
 * float. */
static inline __attribute__((always_inline)) void
decay_row(float *restrict E, float *restrict tail, float *restrict Qg, float *restrict Kt,
          const float *restrict q, const float *restrict k, const double *restrict g,
          const double *restrict last, int D)
{
    for (int f = 0; f < D; f++) {
        E[f] = lt_exp_nonpositive((float)g[f]);
        tail[f] = pair_decay(last[f], g[f]);
        Qg[f] = q[f] * E[f];
        Kt[f] = k[f] * tail[f];
    }
}

static inline __attribute__((always_inline)) void
chunk_decays_body(double *g, float *E, float *tail, float *Qg, float *Kt, const float *q,
                  const float *k, const float *log_alpha, int n, int D)
{
    gated_running_sums(g, log_alpha, n, D);
    const double *last = g + (size_t)(n - 1) * D;
    for (int t = 0; t < n; t++) {
        const size_t tD = (size_t)t * D;
        decay_row(E + tD, tail + tD, Qg + tD, Kt + tD, q + tD, k + tD, g + tD, last, D);
    }
}
LT_PER_KERNEL_SET(static, chunk_decays,
                  (double *g, float *E, float *tail, float *Qg, float *Kt, const float *q,
                   const float *k, const float *log_alpha, int n, int D),
                  (g, E, tail, Qg, Kt, q, k, log_alpha, n, D))

/* P (n x n, rows C apart; 0 above the diagonal): P[t][s] = sum_f q_tf k_sf
 * e^{g_tf - g_sf}, each pair's exponentials its own, summed in lanes.h's
 * 16 partial sums: the same bits at any vector width. */
static inline __attribute__((always_inline)) void
pair_scores_body(float *P, const float *q, const float *k, const double *g, int n, int C, int D)
{
    const int whole = D / LT_WIDE * LT_WIDE;
    for (int t = 0; t < n; t++) {
        const float *qt = q + (size_t)t * D;
        const double *gt = g + (size_t)t * D;
        for (int s = 0; s <= t; s++) {
            const float *ks = k + (size_t)s * D;
            const double *gs = g + (size_t)s * D;
            float part[LT_WIDE] = {0};
            for (int f0 = 0; f0 < whole; f0 += LT_WIDE)
                for (int l = 0; l < LT_WIDE; l++)
                    part[l] += qt[f0 + l] * ks[f0 + l] * pair_decay(gt[f0 + l], gs[f0 + l]);
            for (int l = 0; whole + l < D; l++)
                part[l] += qt[whole + l] * ks[whole + l] * pair_decay(gt[whole + l], gs[whole + l]);
            P[(size_t)t * C + s] = lt_wide_total(part);
        }
        for (int s = t + 1; s < n; s++)
            P[(size_t)t * C + s] = 0.0f;
    }
}
LT_PER_KERNEL_SET(static, pair_scores,
                  (float *P, const float *q, const float *k, const double *g, int n, int C, int D),
                  (P, q, k, g, n, C, D))

/* Decays, Qg = q . E, Kt = k . tail, and (scores) the pairwise P. */
static void chunk_prepare(const gla_plan *p, const gla_space *s, const gla_rows *r, int scores)
{
    chunk_decays(s->g, s->E, s->tail, s->Qg, s->Kt, r->q, r->k, r->log_alpha, r->rows, p->D);
    if (scores)
        pair_scores(s->P, r->q, r->k, s->g, r->rows, p->C, p->D);
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
        chunk_prepare(&p, &s, &r, 1);
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
        chunk_prepare(p, s, &r, 0); /* the state alone: no scores */
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

/* One pair s < t of the scores' backward, w = dp e^{g_t - g_s}: dq_t +=
 * w . k_s, dk_s += w . q_t, and the decays' share z = w . q_t . k_s into
 * dg_t (+) and dg_s (-). */
static inline __attribute__((always_inline)) void
pair_back(float *restrict dqt, float *restrict dks, float *restrict dgt, float *restrict dgs,
          const float *qt, const float *ks, const double *gt, const double *gs, float dp, int D)
{
    for (int f = 0; f < D; f++) {
        const float w = dp * pair_decay(gt[f], gs[f]), z = w * qt[f] * ks[f];
        dqt[f] += w * ks[f];
        dks[f] += w * qt[f];
        dgt[f] += z;
        dgs[f] -= z;
    }
}

/* dq, dk and dg (rows D apart) through P's pairs given dP (rows C apart).
 * A diagonal pair's decay is e^0 = 1 whatever g: no share into dg. */
static inline __attribute__((always_inline)) void
pair_backward_body(float *dq, float *dk, float *dg, const float *dP, const float *q,
                   const float *k, const double *g, int n, int C, int D)
{
    for (int t = 0; t < n; t++) {
        const size_t tD = (size_t)t * D;
        for (int s = 0; s < t; s++) {
            const size_t sD = (size_t)s * D;
            pair_back(dq + tD, dk + sD, dg + tD, dg + sD, q + tD, k + sD, g + tD, g + sD,
                      dP[(size_t)t * C + s], D);
        }
        const float dp = dP[(size_t)t * C + t];
        for (int f = 0; f < D; f++) {
            dq[tD + f] += dp * k[tD + f];
            dk[tD + f] += dp * q[tD + f];
        }
    }
}
LT_PER_KERNEL_SET(static, pair_backward,
                  (float *dq, float *dk, float *dg, const float *dP, const float *q,
                   const float *k, const double *g, int n, int C, int D),
                  (dq, dk, dg, dP, q, k, g, n, C, D))

/* Through the pairwise scores: out += P V. */
static void back_scores(const gla_plan *p, const gla_space *s, const gla_rows *r,
                        const float *dO, float *dq, float *dk, float *dv)
{
    const int D = p->D, M = p->M, C = p->C, n = r->rows;
    lt_sgemm_small(LT_N, LT_T, n, n, M, 1.0f, dO, M, r->v, M, 0.0f, s->dP, C);
    lt_sgemm_small(LT_T, LT_N, n, M, n, 1.0f, s->P, C, dO, M, 1.0f, dv, M);
    pair_backward(dq, dk, s->dg, s->dP, r->q, r->k, s->g, n, C, D);
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
        chunk_prepare(&p, &s, &r, 1);
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

/* Per chunk of r rows: the state's products (Qg S, Kt^T V; backward the
 * sweep's Kt^T V and back_state's four, 2 r D M each), P V and its two
 * gradients, and the pairwise scores (r (r + 1) / 2 pairs of 2 D;
 * backward three such passes: the scores again and their gradients, the
 * entering states' sweep needing none). */
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
        total += backward ? 10.0 * r * D * M + 4.0 * r * r * M + 3.0 * pairs
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
