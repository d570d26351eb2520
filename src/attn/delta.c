/* Delta-rule attention: DeltaNet (`delta`) and Gated DeltaNet
 * (`gated-delta`), as attn.h states them. The state is kept as S^T, D x M
 * (row f: key channel f), the layout of linear attention's state, so with
 * a_t = alpha_t (1 for delta) and unit q, k:
 *   S_t = a_t (I - b_t k_t k_t^T) S_{t-1} + b_t k_t v_t^T,  out_t = S_t^T q_t.
 *
 * Kernel delta-causal-chunked (gated-delta-causal-chunked): chunks of C rows
 * (attn_linear_chunk), one after another through the state. Inside a chunk
 * (rows t, s from its start, g_t = sum of log a up to row t, in double) the
 * state is S_t = gam_t S_0 + sum_{s<=t} G_ts k_s u_s^T, gam_t = exp(g_t),
 * G_ts = exp(g_t - g_s) (s <= t: every exponent is <= 0, so decays of
 * 1e-12 a row underflow towards 0 and never overflow), with pseudo-values
 *   (I + A) U = diag(b) (V - diag(gam) K S_0),  A_ts = b_t G_ts k_t . k_s (s < t).
 * We form T = (I + A)^-1 explicitly (the UT transform: forward
 * substitution on a unit lower triangle, C^3 / 6 multiply-adds) rather
 * than solving per right-hand side: then W = T diag(b gam) K and U~ = T
 * diag(b) V are GEMMs, U = U~ - W S_0, and backward reuses T for its
 * transposed products (T^T dU, T^T dT T^T). With |k| <= 1 and b in [0, 1]
 * each factor I - b k k^T is a contraction, so T's entries stay bounded
 * (no pivoting needed) even at b = 1. Then
 *   O = diag(gam) Q S_0 + (Q K^T . G) U,   S_C = gam_C S_0 + (diag(G_C.) K)^T U.
 * Forward saves nothing; backward rebuilds the state at every chunk start
 * (one sweep, into its workspace), then walks the chunks backwards
 * recomputing each chunk's T, W and U. Heads run in parallel, each on one
 * thread with single-threaded products (lt_sgemm_small), so the bits do not
 * depend on the thread count.
 *
 * Kernel delta-causal-recurrent (gated-delta-causal-recurrent): the same
 * recurrence a position at a time, as the recurrent step runs it
 * (gated_recurrent.c). */
#include <math.h>
#include <string.h>

#include "attn/attn_internal.h"
#include "attn/gated.h"
#include "core/gemm.h"

#define DELTA_CHUNKED "delta-causal-chunked"
#define GATED_CHUNKED "gated-delta-causal-chunked"
#define DELTA_RECURRENT "delta-causal-recurrent"
#define GATED_RECURRENT "gated-delta-causal-recurrent"

/* The kernel tables below: the chunked kernel (the default), then the
 * recurrent one (gated_recurrent.c). */
enum { CHUNKED, RECURRENT };

/* One head's chunk plan. */
typedef struct delta_plan {
    int n, D, M, C, chunks;
} delta_plan;

static delta_plan plan_of(lt_attn_shape shape, int n)
{
    delta_plan p = {n, shape.D, shape.M, attn_linear_chunk(shape.D, shape.M), 0};
    p.chunks = (n + p.C - 1) / p.C;
    return p;
}

/* A thread's buffers; the backward ones NULL in forward. */
typedef struct delta_space {
    float *S;              /* forward (D, M) running state; backward (chunks, D, M) starts */
    float *dS;             /* backward (D, M): gradient of the state leaving the chunk */
    float *qn, *kn;        /* (C, D) normalised rows */
    float *qnorm, *knorm;  /* (C) their norms */
    double *g;             /* (C) running sum of log alpha */
    float *gam, *tail;     /* (C) exp(g_t), exp(g_last - g_t) */
    float *G, *KK, *A, *T, *P; /* (C, C): exp(g_t - g_s), K K^T, A, T, scores */
    float *Y, *W, *Kt;     /* (C, D): b gam K, W, scratch */
    float *X, *U;          /* (C, M): b V, U */
    float *dU, *dqn, *dkn, *dW, *R; /* backward: (C, M), then (C, D) */
    float *dT, *Z;         /* backward (C, C) */
    float *db, *dg;        /* backward (C) */
} delta_space;

/* Carves the space; with ws NULL only counts it, into *bytes. */
static delta_space space_of(char *ws, const delta_plan *p, int backward, size_t *bytes)
{
    delta_space s = {0};
    gated_cursor c = {ws, 0};
    const size_t C = p->C, D = p->D, M = p->M, CC = C * C;
    /* at least one state: a sequence of length 0 still clears it */
    s.S = gated_take(&c, (backward && p->chunks > 1 ? (size_t)p->chunks : 1) * D * M);
    s.qn = gated_take(&c, C * D), s.kn = gated_take(&c, C * D);
    s.qnorm = gated_take(&c, C), s.knorm = gated_take(&c, C);
    s.g = gated_take_doubles(&c, C);
    s.gam = gated_take(&c, C), s.tail = gated_take(&c, C);
    s.G = gated_take(&c, CC), s.KK = gated_take(&c, CC), s.A = gated_take(&c, CC);
    s.T = gated_take(&c, CC), s.P = gated_take(&c, CC);
    s.Y = gated_take(&c, C * D), s.W = gated_take(&c, C * D), s.Kt = gated_take(&c, C * D);
    s.X = gated_take(&c, C * M), s.U = gated_take(&c, C * M);
    if (backward) {
        s.dS = gated_take(&c, D * M), s.dU = gated_take(&c, C * M);
        s.dqn = gated_take(&c, C * D), s.dkn = gated_take(&c, C * D);
        s.dW = gated_take(&c, C * D), s.R = gated_take(&c, C * D);
        s.dT = gated_take(&c, CC), s.Z = gated_take(&c, CC);
        s.db = gated_take(&c, C), s.dg = gated_take(&c, C);
    }
    if (bytes != NULL)
        *bytes = c.bytes;
    return s;
}

/* One chunk's inputs. */
typedef struct delta_rows {
    const float *q, *k, *v, *beta, *log_alpha; /* log_alpha NULL: delta */
    int c0, rows;
} delta_rows;

static delta_rows rows_of(const attn_call *call, int bh, const delta_plan *p, int c)
{
    const int c0 = c * p->C;
    const size_t row = (size_t)bh * call->shape.N + (size_t)c0;
    delta_rows r = {call->q + row * p->D, call->k + row * p->D, call->v + row * p->M,
                    call->gates.beta + row, NULL, c0, p->n - c0 < p->C ? p->n - c0 : p->C};
    if (call->gates.log_alpha != NULL)
        r.log_alpha = call->gates.log_alpha + row;
    return r;
}

/* gam_t = exp(g_t), tail_t = exp(g_last - g_t), G_ts = exp(g_t - g_s) for
 * s <= t (0 above): differences of double sums, all <= 0. */
static void chunk_decays(const delta_plan *p, const delta_space *s, const delta_rows *r)
{
    const int n = r->rows, C = p->C;
    gated_running_sums(s->g, r->log_alpha, n, 1);
    for (int t = 0; t < n; t++) {
        s->gam[t] = gated_exp(s->g[t]);
        s->tail[t] = gated_exp(s->g[n - 1] - s->g[t]);
        for (int j = 0; j < n; j++)
            s->G[(size_t)t * C + j] = j <= t ? gated_exp(s->g[t] - s->g[j]) : 0.0f;
    }
}

/* T = (I + A)^-1 for A strictly lower (rows x rows, stride C): row t of T
 * is e_t - sum_{r<t} A_tr T_r, each T_r nonzero only up to column r. */
static void unit_lower_inverse(float *T, const float *A, int rows, int C)
{
    for (int t = 0; t < rows; t++) {
        float *row = T + (size_t)t * C;
        memset(row, 0, (size_t)rows * sizeof(float));
        row[t] = 1.0f;
        for (int r = 0; r < t; r++) {
            const float a = A[(size_t)t * C + r], *Tr = T + (size_t)r * C;
            for (int j = 0; j <= r; j++)
                row[j] -= a * Tr[j];
        }
    }
}

/* What a chunk needs from its own rows: normalised q and k, decays, K K^T,
 * A, T, W = T diag(b gam) K, and U~ = T diag(b) V (in U). */
static void chunk_prepare(const delta_plan *p, const delta_space *s, const delta_rows *r)
{
    const int n = r->rows, C = p->C, D = p->D, M = p->M;
    gated_l2_rows(s->qn, s->qnorm, r->q, n, D);
    gated_l2_rows(s->kn, s->knorm, r->k, n, D);
    chunk_decays(p, s, r);
    lt_sgemm_small(LT_N, LT_T, n, n, D, 1.0f, s->kn, D, s->kn, D, 0.0f, s->KK, C);
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++) {
            const size_t tj = (size_t)t * C + j;
            s->A[tj] = j < t ? r->beta[t] * s->G[tj] * s->KK[tj] : 0.0f;
        }
    unit_lower_inverse(s->T, s->A, n, C);
    for (int t = 0; t < n; t++) {
        const float bg = r->beta[t] * s->gam[t];
        for (int f = 0; f < D; f++)
            s->Y[(size_t)t * D + f] = bg * s->kn[(size_t)t * D + f];
        for (int m = 0; m < M; m++)
            s->X[(size_t)t * M + m] = r->beta[t] * r->v[(size_t)t * M + m];
    }
    lt_sgemm_small(LT_N, LT_N, n, D, n, 1.0f, s->T, C, s->Y, D, 0.0f, s->W, D);
    lt_sgemm_small(LT_N, LT_N, n, M, n, 1.0f, s->T, C, s->X, M, 0.0f, s->U, M);
}

/* U = U~ - W S for the state S entering the chunk. */
static void chunk_pseudo_values(const delta_plan *p, const delta_space *s, const float *S, int n)
{
    lt_sgemm_small(LT_N, LT_N, n, p->M, p->D, -1.0f, s->W, p->D, S, p->M, 1.0f, s->U, p->M);
}

/* S (D x M) moves to the chunk's end: gam_last S + (diag(tail) K)^T U. */
static void chunk_to_end(const delta_plan *p, const delta_space *s, float *S, int n)
{
    const int D = p->D, M = p->M;
    gated_scale_rows(s->Kt, s->kn, s->tail, n, D);
    for (size_t i = 0; i < (size_t)D * M; i++)
        S[i] *= s->gam[n - 1];
    lt_sgemm_small(LT_T, LT_N, D, M, n, 1.0f, s->Kt, D, s->U, M, 1.0f, S, M);
}

/* P = (Q K^T) . G on and below the diagonal, 0 above. */
static void chunk_scores(const delta_plan *p, const delta_space *s, int n)
{
    const int C = p->C;
    lt_sgemm_small(LT_N, LT_T, n, n, p->D, 1.0f, s->qn, p->D, s->kn, p->D, 0.0f, s->P, C);
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++)
            s->P[(size_t)t * C + j] *= s->G[(size_t)t * C + j];
}

/* out (n x M) = diag(gam) Q S + P U, S the state entering the chunk. */
static void chunk_output(const delta_plan *p, const delta_space *s, const float *S, float *out,
                         int n)
{
    const int D = p->D, M = p->M;
    gated_scale_rows(s->Kt, s->qn, s->gam, n, D);
    lt_sgemm_small(LT_N, LT_N, n, M, D, 1.0f, s->Kt, D, S, M, 0.0f, out, M);
    chunk_scores(p, s, n);
    lt_sgemm_small(LT_N, LT_N, n, M, n, 1.0f, s->P, p->C, s->U, M, 1.0f, out, M);
}

static void head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner; /* chunks follow each other through the state */
    const delta_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const delta_space s = space_of(ws, &p, 0, NULL);
    memset(s.S, 0, (size_t)p.D * p.M * sizeof(float));
    for (int c = 0; c < p.chunks; c++) {
        const delta_rows r = rows_of(call, bh, &p, c);
        chunk_prepare(&p, &s, &r);
        chunk_pseudo_values(&p, &s, s.S, r.rows);
        chunk_output(&p, &s, s.S, call->out + ((size_t)bh * call->shape.N + r.c0) * p.M, r.rows);
        chunk_to_end(&p, &s, s.S, r.rows);
    }
}

/* ---- backward ---- */

/* The state entering every chunk, into s->S (chunks x D x M). */
static void sweep_states(const attn_call *call, int bh, const delta_plan *p, const delta_space *s)
{
    const size_t DM = (size_t)p->D * p->M;
    memset(s->S, 0, DM * sizeof(float));
    for (int c = 0; c + 1 < p->chunks; c++) {
        const delta_rows r = rows_of(call, bh, p, c);
        float *next = s->S + (size_t)(c + 1) * DM;
        memcpy(next, s->S + (size_t)c * DM, DM * sizeof(float));
        chunk_prepare(p, s, &r);
        chunk_pseudo_values(p, s, next, r.rows);
        chunk_to_end(p, s, next, r.rows);
    }
}

static float dot(const float *a, const float *b, int n)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

/* Through S' = gam_last S + (diag(tail) K)^T U: dU = diag(tail) K dS',
 * dK starts with diag(tail) U dS'^T, the decays' share goes to dg, and dS
 * becomes what reaches S through gam_last. */
static void back_state(const delta_plan *p, const delta_space *s, const float *S, int n)
{
    const int D = p->D, M = p->M, last = n - 1;
    gated_scale_rows(s->Kt, s->kn, s->tail, n, D);
    lt_sgemm_small(LT_N, LT_N, n, M, D, 1.0f, s->Kt, D, s->dS, M, 0.0f, s->dU, M);
    lt_sgemm_small(LT_N, LT_T, n, D, M, 1.0f, s->U, M, s->dS, M, 0.0f, s->R, D);
    for (int t = 0; t < n; t++) {
        const float *rt = s->R + (size_t)t * D;
        const float de = s->tail[t] * dot(s->kn + (size_t)t * D, rt, D);
        s->dg[last] += de;
        s->dg[t] -= de;
        for (int f = 0; f < D; f++)
            s->dkn[(size_t)t * D + f] = s->tail[t] * rt[f];
    }
    const size_t DM = (size_t)D * M;
    s->dg[last] += s->gam[last] * dot(S, s->dS, (int)DM);
    for (size_t i = 0; i < DM; i++)
        s->dS[i] *= s->gam[last];
}

/* Through out = diag(gam) Q S + P U with P = (Q K^T) . G. */
static void back_output(const delta_plan *p, const delta_space *s, const float *S,
                        const float *dO, int n)
{
    const int D = p->D, M = p->M, C = p->C;
    lt_sgemm_small(LT_N, LT_T, n, D, M, 1.0f, dO, M, S, M, 0.0f, s->R, D);
    for (int t = 0; t < n; t++) {
        const float *rt = s->R + (size_t)t * D;
        s->dg[t] += s->gam[t] * dot(s->qn + (size_t)t * D, rt, D);
        for (int f = 0; f < D; f++)
            s->dqn[(size_t)t * D + f] = s->gam[t] * rt[f];
    }
    gated_scale_rows(s->Kt, s->qn, s->gam, n, D);
    lt_sgemm_small(LT_T, LT_N, D, M, n, 1.0f, s->Kt, D, dO, M, 1.0f, s->dS, M);
    lt_sgemm_small(LT_N, LT_T, n, n, M, 1.0f, dO, M, s->U, M, 0.0f, s->Z, C); /* dP */
    lt_sgemm_small(LT_T, LT_N, n, M, n, 1.0f, s->P, C, dO, M, 1.0f, s->dU, M);
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++) {
            const size_t tj = (size_t)t * C + j;
            const float dp = j <= t ? s->Z[tj] : 0.0f, pz = dp * s->P[tj];
            s->dg[t] += pz;
            s->dg[j] -= pz;
            s->Z[tj] = dp * s->G[tj]; /* the gradient of Q K^T */
        }
    lt_sgemm_small(LT_N, LT_N, n, D, n, 1.0f, s->Z, C, s->kn, D, 1.0f, s->dqn, D);
    lt_sgemm_small(LT_T, LT_N, n, D, n, 1.0f, s->Z, C, s->qn, D, 1.0f, s->dkn, D);
}

/* Through U = T diag(b) V - T diag(b gam) K S: dS, dV, and dT into s->dT;
 * db starts here. X and Y are overwritten by their gradients. */
static void back_pseudo_values(const delta_plan *p, const delta_space *s, const float *S,
                               const delta_rows *r, float *dv)
{
    const int D = p->D, M = p->M, C = p->C, n = r->rows;
    lt_sgemm_small(LT_N, LT_T, n, D, M, -1.0f, s->dU, M, S, M, 0.0f, s->dW, D);
    lt_sgemm_small(LT_T, LT_N, D, M, n, -1.0f, s->W, D, s->dU, M, 1.0f, s->dS, M);
    lt_sgemm_small(LT_N, LT_T, n, n, M, 1.0f, s->dU, M, s->X, M, 0.0f, s->dT, C);
    lt_sgemm_small(LT_N, LT_T, n, n, D, 1.0f, s->dW, D, s->Y, D, 1.0f, s->dT, C);
    lt_sgemm_small(LT_T, LT_N, n, M, n, 1.0f, s->T, C, s->dU, M, 0.0f, s->X, M);
    lt_sgemm_small(LT_T, LT_N, n, D, n, 1.0f, s->T, C, s->dW, D, 0.0f, s->Y, D);
    for (int t = 0; t < n; t++) {
        const float b = r->beta[t], gam = s->gam[t], *dx = s->X + (size_t)t * M;
        const float *dy = s->Y + (size_t)t * D;
        const float along = dot(s->kn + (size_t)t * D, dy, D);
        for (int m = 0; m < M; m++)
            dv[(size_t)t * M + m] += b * dx[m];
        for (int f = 0; f < D; f++)
            s->dkn[(size_t)t * D + f] += b * gam * dy[f];
        s->db[t] = dot(r->v + (size_t)t * M, dx, M) + gam * along;
        s->dg[t] += gam * b * along;
    }
}

/* Through T = (I + A)^-1 (dA = -T^T dT T^T) and A_ts = b_t G_ts k_t . k_s. */
static void back_inverse(const delta_plan *p, const delta_space *s, const delta_rows *r)
{
    const int D = p->D, C = p->C, n = r->rows;
    lt_sgemm_small(LT_T, LT_N, n, n, n, 1.0f, s->T, C, s->dT, C, 0.0f, s->Z, C);
    lt_sgemm_small(LT_N, LT_T, n, n, n, -1.0f, s->Z, C, s->T, C, 0.0f, s->dT, C);
    for (int t = 0; t < n; t++)
        for (int j = 0; j < n; j++) {
            const size_t tj = (size_t)t * C + j;
            const float da = j < t ? s->dT[tj] : 0.0f, ea = da * s->A[tj];
            s->db[t] += da * s->G[tj] * s->KK[tj];
            s->dg[t] += ea;
            s->dg[j] -= ea;
            s->dT[tj] = da * r->beta[t] * s->G[tj]; /* the gradient of K K^T */
        }
    lt_sgemm_small(LT_N, LT_N, n, D, n, 1.0f, s->dT, C, s->kn, D, 1.0f, s->dkn, D);
    lt_sgemm_small(LT_T, LT_N, n, D, n, 1.0f, s->dT, C, s->kn, D, 1.0f, s->dkn, D);
}

/* One chunk's gradients, given dS of the state leaving it; leaves dS of
 * the state entering it. */
static void chunk_backward(const attn_call *call, int bh, const delta_plan *p,
                           const delta_space *s, int c)
{
    const delta_rows r = rows_of(call, bh, p, c);
    const size_t row = (size_t)bh * call->shape.N + (size_t)r.c0;
    const float *S = s->S + (size_t)c * p->D * p->M;
    const int n = r.rows;
    chunk_prepare(p, s, &r);
    chunk_pseudo_values(p, s, S, n);
    chunk_scores(p, s, n);
    memset(s->dg, 0, (size_t)n * sizeof(float));
    back_state(p, s, S, n);
    back_output(p, s, S, call->d_out + row * p->M, n);
    back_pseudo_values(p, s, S, &r, call->dv + row * p->M);
    back_inverse(p, s, &r);
    gated_l2_rows_backward(call->dq + row * p->D, s->dqn, s->qn, s->qnorm, n, p->D);
    gated_l2_rows_backward(call->dk + row * p->D, s->dkn, s->kn, s->knorm, n, p->D);
    for (int t = 0; t < n; t++)
        call->gates.d_beta[row + t] += s->db[t];
    if (call->gates.d_log_alpha != NULL)
        gated_add_log_alpha_grad(call->gates.d_log_alpha + row, s->dg, n, 1);
}

static void head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const delta_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const delta_space s = space_of(ws, &p, 1, NULL);
    sweep_states(call, bh, &p, &s);
    memset(s.dS, 0, (size_t)p.D * p.M * sizeof(float));
    for (int c = p.chunks - 1; c >= 0; c--)
        chunk_backward(call, bh, &p, &s, c);
}

/* ---- plans and counts ---- */

static size_t delta_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    if (attn->kernel == RECURRENT)
        return gated_recurrent_slice_bytes(shape);
    const delta_plan p = plan_of(shape, shape.N);
    size_t bytes;
    space_of(NULL, &p, 1, &bytes); /* backward's space holds forward's */
    return bytes;
}

/* Model (per head): a token reads S^T k, updates S by a rank one and reads
 * S^T q, 2 D M each: 6 N D M; backward modelled as twice that. */
static double delta_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    (void)attn;
    return gated_model_flops(shape, 6.0, backward);
}

/* The products each chunk of r rows issues (the inverse's r^3 / 6
 * multiply-adds included): forward K K^T, W, U~, U, the output's two and
 * the scores, the state; backward one sweep of the state, the chunk again,
 * and its twenty gradient products. */
static double delta_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                               int inner)
{
    (void)inner;
    /* recurrent: 6 D M a row forward; backward's sweeps redo the updates
     * (S^T k and k u^T, 4 D M), then a row back is S' k, S' g, q g^T,
     * dS u, dS^T k, k dw^T, S' dw and <S', dS'>: 16 D M */
    if (attn->kernel == RECURRENT)
        return gated_recurrent_head_flops(shape, n, backward, 6.0, 4.0, 16.0);
    const double D = shape.D, M = shape.M;
    const int C = attn_linear_chunk(shape.D, shape.M);
    double total = 0.0;
    for (int c0 = 0; c0 < n; c0 += C) {
        const double r = n - c0 < C ? n - c0 : C;
        const double prepare = r * r * (4.0 * D + 2.0 * M) + r * r * r / 3.0 + 2.0 * r * D * M;
        if (!backward)
            total += prepare + 4.0 * r * D * M + r * r * (2.0 * D + 2.0 * M);
        else
            total += 2.0 * prepare + 2.0 * r * D * M + 2.0 * r * r * D + 12.0 * r * D * M +
                     r * r * (12.0 * D + 8.0 * M) + 4.0 * r * r * r;
    }
    return total;
}

/* ---- recurrent form ---- */

/* Per head: S (D, M), then qn, kn (D) and u (M) as scratch. */
static size_t head_state_floats(int D, int M) { return (size_t)D * M + 2 * (size_t)D + M; }

static size_t delta_state_payload_bytes(const lt_attn *attn, int B, int H, int D, int M,
                                        int max_steps)
{
    (void)attn, (void)max_steps; /* constant size */
    return (size_t)B * H * head_state_floats(D, M) * sizeof(float);
}

static void delta_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                       int max_steps, int steps, int bh0, int bh1, float *out, const float *q,
                       const float *k, const float *v, const lt_attn_gates *gates)
{
    (void)attn, (void)B, (void)H, (void)max_steps, (void)steps;
    for (int bh = bh0; bh < bh1; bh++) {
        float *S = (float *)payload + (size_t)bh * head_state_floats(D, M);
        float *qn = S + (size_t)D * M, *kn = qn + D, *u = kn + D, norm;
        gated_l2_rows(qn, &norm, q + (size_t)bh * D, 1, D);
        gated_l2_rows(kn, &norm, k + (size_t)bh * D, 1, D);
        const float a = gates->log_alpha != NULL ? gated_exp(gates->log_alpha[bh]) : 1.0f;
        gated_delta_token(S, u, out + (size_t)bh * M, qn, kn, v + (size_t)bh * M, a,
                          gates->beta[bh], D, M);
    }
}

/* ---- variant tables ---- */

static const attn_kernel_info delta_kernels[] = {
    [CHUNKED] = {DELTA_CHUNKED, ATTN_CAUSAL_ONLY, head_forward, head_backward, NULL},
    [RECURRENT] = {DELTA_RECURRENT, ATTN_CAUSAL_ONLY, gated_delta_recurrent_forward,
                   gated_delta_recurrent_backward, NULL},
};

static const attn_kernel_info gated_kernels[] = {
    [CHUNKED] = {GATED_CHUNKED, ATTN_CAUSAL_ONLY, head_forward, head_backward, NULL},
    [RECURRENT] = {GATED_RECURRENT, ATTN_CAUSAL_ONLY, gated_delta_recurrent_forward,
                   gated_delta_recurrent_backward, NULL},
};

#define DELTA_TABLE(variant_name, kernel_table, kernel_names_, gate_flags)                      \
    {                                                                                            \
        .name = variant_name, .kernels = kernel_table, .kernel_count = 2,                       \
        .kernel_names = kernel_names_, .check_config = gated_check_config,                      \
        .param_count = attn_no_params, .init_params = attn_no_init_params,                      \
        .saved_bytes = gated_no_saved, .slice_bytes = delta_slice_bytes, .flops = delta_flops,  \
        .head_flops = delta_head_flops, .forward = attn_kernel_forward,                         \
        .backward = attn_kernel_backward, .no_noncausal_reason = gated_not_noncausal,           \
        .state_payload_bytes = delta_state_payload_bytes, .step = delta_step,                   \
        .step_parallel = gated_step_parallel, .gates = gate_flags,                              \
    }

const lt_attn_variant lt_attn_delta_variant =
    DELTA_TABLE("delta", delta_kernels, DELTA_CHUNKED "|" DELTA_RECURRENT, LT_ATTN_GATE_BETA);
const lt_attn_variant lt_attn_gated_delta_variant =
    DELTA_TABLE("gated-delta", gated_kernels, GATED_CHUNKED "|" GATED_RECURRENT,
                LT_ATTN_GATE_BETA | LT_ATTN_GATE_ALPHA);
