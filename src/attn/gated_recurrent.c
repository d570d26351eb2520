/* The recurrent full-sequence kernels of the gated variants:
 * delta-causal-recurrent, gated-delta-causal-recurrent and
 * gla-causal-recurrent, the token-by-token form the chunked kernels are
 * measured against.
 *
 * Forward walks a head's positions one at a time through its D x M state
 * with the token update lt_attn_step_gated runs (gated_delta_token,
 * gated_gla_token), so a forward and N steps agree to the bit: O(N D M)
 * multiply-adds, no chunk algebra, nothing saved.
 *
 * Backward walks the positions back, carrying dL/dS. It needs the state
 * entering every position, and that cannot be recovered from the state
 * after it: I - b k k^T is singular at b = 1, and undoing a decay of 1e-12
 * would multiply rounding errors by 1e12. So it stores states at
 * checkpoints within its planned workspace: a first sweep keeps the state
 * entering every K-th position (K = ceil(sqrt(N))), then segment by
 * segment, the last first, it rebuilds the K states of the segment from
 * its checkpoint and walks them back. Workspace: ceil(N / K) + K states,
 * about 2 sqrt(N) D M floats a thread; the price is two forward sweeps of
 * state updates. The rebuilt states are those forward had (the same
 * updates in the same order), whatever K is. A head runs on one thread:
 * the same bits on any thread count. */
#include <math.h>
#include <string.h>

#include "attn/attn_internal.h"
#include "attn/gated.h"

/* One head's plan: n rows in segments of K. */
typedef struct rec_plan {
    int n, D, M, K, segments;
} rec_plan;

/* K from the padded N, so the plan of every head fits the planned slice. */
static int segment_rows(int N)
{
    const int K = (int)ceil(sqrt((double)N));
    return K > 1 ? K : 1;
}

static rec_plan plan_of(lt_attn_shape shape, int n)
{
    rec_plan p = {n, shape.D, shape.M, segment_rows(shape.N), 0};
    p.segments = (n + p.K - 1) / p.K;
    return p;
}

/* A thread's buffers; the backward ones NULL in forward. */
typedef struct rec_space {
    float *S;             /* forward (D, M); backward (segments, D, M) checkpoints */
    float *seg;           /* backward (K, D, M): the states entering a segment's rows */
    float *dS;            /* backward (D, M): dL/dS of the state after the row */
    float *qn, *kn, *u;   /* (D), (D), (M) */
    float *w, *du;        /* backward (M) */
    float *dqn, *dkn;     /* backward (D) */
} rec_space;

static rec_space space_of(char *ws, const rec_plan *p, int backward, size_t *bytes)
{
    rec_space s = {0};
    gated_cursor c = {ws, 0};
    const size_t D = p->D, M = p->M, DM = D * M;
    /* at least one state: a sequence of length 0 still clears it */
    s.S = gated_take(&c, (backward && p->segments > 1 ? (size_t)p->segments : 1) * DM);
    s.qn = gated_take(&c, D), s.kn = gated_take(&c, D), s.u = gated_take(&c, M);
    if (backward) {
        s.seg = gated_take(&c, (size_t)p->K * DM), s.dS = gated_take(&c, DM);
        s.w = gated_take(&c, M), s.du = gated_take(&c, M);
        s.dqn = gated_take(&c, D), s.dkn = gated_take(&c, D);
    }
    if (bytes != NULL)
        *bytes = c.bytes;
    return s;
}

size_t gated_recurrent_slice_bytes(lt_attn_shape shape)
{
    const rec_plan p = plan_of(shape, shape.N);
    size_t bytes;
    space_of(NULL, &p, 1, &bytes); /* backward's space holds forward's */
    return bytes;
}

/* Position t of head bh as a row index of the (B,H,N) gates. */
static size_t row_of(const attn_call *call, int bh, int t)
{
    return (size_t)bh * call->shape.N + (size_t)t;
}

/* ---- forward: a row at a time ---- */

/* Moves S over one row of the gates' layout and writes its output row;
 * out NULL: the state alone (backward's sweeps), the same bits. */
typedef void (*row_fn)(const attn_call *call, size_t row, float *S, float *out,
                       const rec_space *s);

static float delta_decay(const attn_call *call, size_t row)
{
    return call->gates.log_alpha != NULL ? gated_exp(call->gates.log_alpha[row]) : 1.0f;
}

static void delta_row(const attn_call *call, size_t row, float *S, float *out,
                      const rec_space *s)
{
    const int D = call->shape.D, M = call->shape.M;
    float norm;
    if (out != NULL)
        gated_l2_rows(s->qn, &norm, call->q + row * D, 1, D);
    gated_l2_rows(s->kn, &norm, call->k + row * D, 1, D);
    gated_delta_token(S, s->u, out, s->qn, s->kn, call->v + row * M, delta_decay(call, row),
                      call->gates.beta[row], D, M);
}

static void gla_row(const attn_call *call, size_t row, float *S, float *out, const rec_space *s)
{
    (void)s;
    const int D = call->shape.D, M = call->shape.M;
    gated_gla_token(S, out, call->q + row * D, call->k + row * D, call->v + row * M,
                    call->gates.log_alpha + row * D, D, M);
}

static void walk_forward(const attn_call *call, int bh, char *ws, row_fn advance)
{
    const rec_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const rec_space s = space_of(ws, &p, 0, NULL);
    memset(s.S, 0, (size_t)p.D * p.M * sizeof(float));
    for (int t = 0; t < p.n; t++) {
        const size_t row = row_of(call, bh, t);
        advance(call, row, s.S, call->out + row * p.M, &s);
    }
}

void gated_delta_recurrent_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner; /* positions follow each other through the state */
    walk_forward(call, bh, ws, delta_row);
}

void gated_gla_recurrent_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    walk_forward(call, bh, ws, gla_row);
}

/* ---- backward: checkpoints, segments rebuilt, rows walked back ---- */

/* The state entering each segment, into s->S (segments x D x M). */
static void sweep_checkpoints(const attn_call *call, int bh, const rec_plan *p,
                              const rec_space *s, row_fn advance)
{
    const size_t DM = (size_t)p->D * p->M;
    memset(s->S, 0, DM * sizeof(float));
    for (int c = 1; c < p->segments; c++) {
        float *S = s->S + (size_t)c * DM;
        memcpy(S, S - DM, DM * sizeof(float));
        for (int t = (c - 1) * p->K; t < c * p->K; t++)
            advance(call, row_of(call, bh, t), S, NULL, s);
    }
}

/* s->seg row j: the state entering row t0 + j of segment c (len rows). */
static void rebuild_segment(const attn_call *call, int bh, const rec_plan *p, const rec_space *s,
                            row_fn advance, int c, int len)
{
    const size_t DM = (size_t)p->D * p->M;
    const int t0 = c * p->K;
    memcpy(s->seg, s->S + (size_t)c * DM, DM * sizeof(float));
    for (int j = 1; j < len; j++) {
        float *S = s->seg + (size_t)j * DM;
        memcpy(S, S - DM, DM * sizeof(float));
        advance(call, row_of(call, bh, t0 + j - 1), S, NULL, s);
    }
}

/* Walks one row back (S the state entering it). */
typedef void (*back_fn)(const attn_call *call, size_t row, const float *S, const rec_space *s);

static void walk_back(const attn_call *call, int bh, char *ws, row_fn advance, back_fn back)
{
    const rec_plan p = plan_of(call->shape, attn_head_rows(call, bh));
    const rec_space s = space_of(ws, &p, 1, NULL);
    const size_t DM = (size_t)p.D * p.M;
    sweep_checkpoints(call, bh, &p, &s, advance);
    memset(s.dS, 0, DM * sizeof(float));
    for (int c = p.segments - 1; c >= 0; c--) {
        const int t0 = c * p.K, len = p.n - t0 < p.K ? p.n - t0 : p.K;
        rebuild_segment(call, bh, &p, &s, advance, c, len);
        for (int j = len - 1; j >= 0; j--)
            back(call, row_of(call, bh, t0 + j), s.seg + (size_t)j * DM, &s);
    }
}

/* First pass of a delta row: with S' = a S, w = S'^T k and dqn = S' g,
 * both into s (w, dqn). */
static void delta_back_read(const rec_space *s, const float *S, const float *g, float a, int D,
                            int M)
{
    for (int m = 0; m < M; m++)
        s->w[m] = 0.0f;
    for (int f = 0; f < D; f++) {
        const float *row = S + (size_t)f * M;
        float dq = 0.0f;
        for (int m = 0; m < M; m++) {
            const float sp = a * row[m];
            s->w[m] += s->kn[f] * sp;
            dq += sp * g[m];
        }
        s->dqn[f] = dq;
    }
}

/* Through out = S_t^T q and S_t = S' + k u^T: dS (of S_t) += q g^T, then
 * dkn = dS u and du = dS^T k. */
static void delta_back_output(const rec_space *s, const float *g, int D, int M)
{
    for (int m = 0; m < M; m++)
        s->du[m] = 0.0f;
    for (int f = 0; f < D; f++) {
        float *drow = s->dS + (size_t)f * M, dk = 0.0f;
        for (int m = 0; m < M; m++) {
            drow[m] += s->qn[f] * g[m];
            dk += drow[m] * s->u[m];
            s->du[m] += drow[m] * s->kn[f];
        }
        s->dkn[f] = dk;
    }
}

/* Through w = S'^T k and S' = a S, given dw in s->du: dS becomes dS' and
 * then a dS' (the gradient of S), dkn += S' dw; returns dL/dlog a =
 * <S', dS'>. */
static float delta_back_state(const rec_space *s, const float *S, float a, int D, int M)
{
    float dla = 0.0f;
    for (int f = 0; f < D; f++) {
        const float *row = S + (size_t)f * M;
        float *drow = s->dS + (size_t)f * M, dk = 0.0f;
        for (int m = 0; m < M; m++) {
            const float sp = a * row[m];
            drow[m] += s->kn[f] * s->du[m];
            dk += sp * s->du[m];
            dla += sp * drow[m];
            drow[m] *= a;
        }
        s->dkn[f] += dk;
    }
    return dla;
}

/* One delta row back: S' = a S, w = S'^T k, u = b (v - w), S_t = S' + k u^T,
 * out = S_t^T q (so dqn = S_t g = S' g + k (u . g)). */
static void delta_back(const attn_call *call, size_t row, const float *S, const rec_space *s)
{
    const int D = call->shape.D, M = call->shape.M;
    const float *g = call->d_out + row * M, *v = call->v + row * M;
    const float a = delta_decay(call, row), b = call->gates.beta[row];
    float qnorm, knorm, ug = 0.0f, db = 0.0f;
    gated_l2_rows(s->qn, &qnorm, call->q + row * D, 1, D);
    gated_l2_rows(s->kn, &knorm, call->k + row * D, 1, D);
    delta_back_read(s, S, g, a, D, M);
    for (int m = 0; m < M; m++) {
        s->u[m] = b * (v[m] - s->w[m]);
        ug += s->u[m] * g[m];
    }
    for (int f = 0; f < D; f++)
        s->dqn[f] += s->kn[f] * ug;
    delta_back_output(s, g, D, M);
    float *dv = call->dv + row * M;
    for (int m = 0; m < M; m++) { /* through u: dv, db, and dw = -b du in du */
        dv[m] += b * s->du[m];
        db += s->du[m] * (v[m] - s->w[m]);
        s->du[m] *= -b;
    }
    const float dla = delta_back_state(s, S, a, D, M);
    gated_l2_rows_backward(call->dq + row * D, s->dqn, s->qn, &qnorm, 1, D);
    gated_l2_rows_backward(call->dk + row * D, s->dkn, s->kn, &knorm, 1, D);
    call->gates.d_beta[row] += db;
    if (call->gates.d_log_alpha != NULL)
        call->gates.d_log_alpha[row] += dla;
}

/* One gla row back: S_t = diag(a) S + k v^T, out = S_t^T q. Per channel
 * f: dq_f = S_t[f] . g, dS[f] += q_f g, dk_f = dS[f] . v, dv += k_f dS[f],
 * dlog a_f = a_f (S[f] . dS[f]), then dS[f] *= a_f. */
static void gla_back(const attn_call *call, size_t row, const float *S, const rec_space *s)
{
    const int D = call->shape.D, M = call->shape.M;
    const float *g = call->d_out + row * M, *v = call->v + row * M;
    const float *q = call->q + row * D, *k = call->k + row * D;
    const float *la = call->gates.log_alpha + row * D;
    float *dq = call->dq + row * D, *dk = call->dk + row * D, *dv = call->dv + row * M;
    float *dla = call->gates.d_log_alpha + row * D;
    for (int f = 0; f < D; f++) {
        const float a = gated_exp(la[f]), *srow = S + (size_t)f * M;
        float *drow = s->dS + (size_t)f * M, dqf = 0.0f, dkf = 0.0f, daf = 0.0f;
        for (int m = 0; m < M; m++) {
            dqf += (a * srow[m] + k[f] * v[m]) * g[m];
            drow[m] += q[f] * g[m];
            dkf += drow[m] * v[m];
            dv[m] += k[f] * drow[m];
            daf += srow[m] * drow[m];
            drow[m] *= a;
        }
        dq[f] += dqf;
        dk[f] += dkf;
        dla[f] += a * daf;
    }
}

void gated_delta_recurrent_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    walk_back(call, bh, ws, delta_row, delta_back);
}

void gated_gla_recurrent_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    walk_back(call, bh, ws, gla_row, gla_back);
}

double gated_recurrent_head_flops(lt_attn_shape shape, int n, int backward, double token,
                                  double advance, double back)
{
    const double DM = (double)shape.D * shape.M;
    if (!backward || n == 0)
        return backward ? 0.0 : n * token * DM;
    const rec_plan p = plan_of(shape, n);
    /* the checkpoint sweep stops before the last segment; each segment
     * rebuilds all its states but the first */
    const double advances = (double)(p.segments - 1) * p.K + (double)(n - p.segments);
    return (advances * advance + n * back) * DM;
}
