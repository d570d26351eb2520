/* Linear attention (Katharopoulos et al. 2020): with a positive feature map
 * phi (features.c: F features a row), out_i = phi(Q_i)^T S / (phi(Q_i) . z +
 * eps) where S = sum_j phi(K_j) V_j^T (F x M) and z = sum_j phi(K_j);
 * causal attention sums only j <= i.
 *
 * Decayed linear attention (the `decay` variant, RetNet's recurrence) runs
 * on the same kernels: the causal state decays by gamma_h of head h each
 * position, S_i = gamma S_{i-1} + phi(K_i) V_i^T, z_i likewise, so key j
 * weighs gamma^(i - j) at position i.
 *
 * Kernels (decay's are named decay-...):
 *   linear-gemm            non-causal: S and z for the whole sequence, two
 *                          GEMMs per head.
 *   linear-causal-prefix   causal: the running (S_i, z_i), one token at a
 *                          time (the RNN form). Backward follows the paper's
 *                          sec. 3.3.1: a forward sweep rebuilds the prefix
 *                          state for dQ, a reverse sweep accumulates the
 *                          suffix sums for dK and dV, so no per-position
 *                          state is stored: O(N F M) time, O(N + F M) memory.
 *   linear-causal-chunked  causal, chunkwise parallel: within a chunk the
 *                          masked quadratic form, across chunks the state
 *                          of the earlier chunks (a prefix over per-chunk
 *                          sums), everything as GEMMs. Same sums as the
 *                          prefix kernel in another order. With decay the
 *                          mask holds gamma^(i - j), queries read the
 *                          chunk's incoming state times gamma^(r + 1) at
 *                          row r, and each chunk's own sums weigh its keys
 *                          to the chunk's end.
 *   linear-reference       the O(N^2) form in plain loops: A_ij = phi(Q_i) .
 *                          phi(K_j) (times gamma^(i - j) with decay), masked
 *                          to j <= i when causal, out_i = sum_j A_ij V_j /
 *                          (sum_j A_ij + eps).
 *
 * Gradients include the normaliser: with num_i = phi(Q_i)^T S_i and den_i,
 * d num_i = g_i / den_i and d den_i = -g_i . out_i / den_i, and pass through
 * phi to q and k (attn_phi_backprop).
 *
 * The longest file in src: linear and decay are two variant tables over the
 * same kernels, which share the chunk plan (linear-gemm and the chunked
 * kernel), the saved layout and the token update (the prefix kernel and the
 * recurrent step); splitting the kernels apart would export all of those. */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "attn/attn_internal.h"
#include "core/gemm.h"
#include "core/lanes.h"

static const char KERNEL_GEMM[] = "linear-gemm";
static const char KERNEL_CHUNKED[] = "linear-causal-chunked";
static const char KERNEL_PREFIX[] = "linear-causal-prefix";
static const char KERNEL_REFERENCE[] = "linear-reference";
static const char DECAY_CHUNKED[] = "decay-causal-chunked";
static const char DECAY_PREFIX[] = "decay-causal-prefix";
static const char DECAY_REFERENCE[] = "decay-reference";

/* Indexes linear_kernels below: lt_attn_init resolved the name once. */
typedef enum linear_kernel { GEMM, CHUNKED, PREFIX, REFERENCE } linear_kernel;

static int is_decay(const lt_attn *attn) { return attn->impl == &lt_attn_decay_variant; }

/* decay_kernels is linear_kernels without GEMM, in the same order. */
static linear_kernel kernel_of(const lt_attn *attn)
{
    return (linear_kernel)(attn->kernel + is_decay(attn));
}

/* ---- decay ---- */

/* gamma of head h: 1 for linear attention; decay_gamma when set, else
 * RetNet's 1 - 2^(-5 - h). */
static float head_gamma(const lt_attn *attn, int h)
{
    if (!is_decay(attn))
        return 1.0f;
    if (attn->config.decay_gamma > 0.0f)
        return attn->config.decay_gamma;
    return (float)(1.0 - ldexp(1.0, -5 - h));
}

/* pw[i] = gamma^i for i in [0, n], each rounded once from double. */
static void decay_powers(float *pw, float gamma, int n)
{
    for (int i = 0; i <= n; i++)
        pw[i] = (float)pow((double)gamma, (double)i);
}

static float dot(const float *restrict a, const float *restrict b, int n)
{
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

/* acc (cols) += sum_r w_r x_r over the rows of x (rows x cols); w NULL
 * means all weights 1 (plain column sums). */
static void add_column_sums(float *restrict acc, const float *restrict w, const float *restrict x,
                            int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        float weight = w != NULL ? w[r] : 1.0f;
        for (int c = 0; c < cols; c++)
            acc[c] += weight * x[(size_t)r * cols + c];
    }
}

/* rows of x (rows x cols) scaled by w[r] */
static void scale_rows(float *x, const float *w, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            x[(size_t)r * cols + c] *= w[r];
}

/* Sum of attn_take sizes, so slices match what the kernels carve. */
static size_t floats(size_t count) { return attn_round(count * sizeof(float)); }

/* ---- the feature map's drawn block ---- */

/* Every thread's workspace slice starts with the block the feature map
 * draws (favor's W; nothing for the other maps): drawn once per call into
 * the first slice, copied to the others, so heads read it from their own. */
static size_t block_bytes(const lt_attn *attn, int D)
{
    return floats(attn_features_floats(&attn->config, D));
}

/* The call's feature map, and *ws moved past its block. */
static attn_features features_in(const attn_call *call, char **ws)
{
    attn_features fx = attn_features_of(&call->attn->config, call->shape.D, (const float *)*ws);
    *ws += block_bytes(call->attn, call->shape.D);
    return fx;
}

static void draw_features(const attn_call *call)
{
    size_t n = attn_features_floats(&call->attn->config, call->shape.D);
    if (n == 0)
        return;
    attn_features_draw((float *)call->workspace, &call->attn->config, call->shape.D,
                       call->shape.seed, call->shape.layer);
    int slices = attn_across_heads(call) ? call->threads : 1;
    for (int t = 1; t < slices; t++)
        memcpy(call->workspace + (size_t)t * call->slice, call->workspace, n * sizeof(float));
}

static void linear_forward(const attn_call *call)
{
    draw_features(call);
    attn_kernel_forward(call);
}

static void linear_backward(const attn_call *call)
{
    draw_features(call);
    attn_kernel_backward(call);
}

/* ---- saved layout ---- */

/* Saved for backward: every kernel but the reference keeps the normalisers
 * den (B,H,N); linear-gemm also keeps the whole-sequence S (B,H,F,M) and z
 * (B,H,F), laid out [den | S | z]. */
typedef struct saved_view {
    float *den, *S, *z; /* one head's; S and z NULL for causal kernels */
} saved_view;

static saved_view view_saved(const attn_call *call, int bh)
{
    saved_view s = {NULL, NULL, NULL};
    if (call->saved == NULL)
        return s;
    size_t BH = (size_t)call->shape.B * call->shape.H;
    size_t N = call->shape.N, F = attn_feature_dim(&call->attn->config, call->shape.D);
    size_t M = call->shape.M;
    float *base = call->saved;
    s.den = base + bh * N;
    if (kernel_of(call->attn) == GEMM) {
        s.S = base + BH * N + bh * F * M;
        s.z = base + BH * N + BH * F * M + bh * F;
    }
    return s;
}

/* ---- rows in chunks, and sums over chunks ---- */

/* Both GEMM kernels walk a head's rows a chunk at a time and keep one
 * record of sums per chunk (an F x M matrix and an F vector, e.g. phi(K_c)^T
 * V_c and the column sums of phi(K_c)); whole-sequence sums are then added
 * up over the records in chunk order. Chunks are independent, so threads
 * that share a head split them, and every float is summed in the same
 * order whatever the threads: results do not depend on the thread count. */

typedef struct chunk_plan {
    int N, D, F, M, C, chunks;
    int decayed;   /* decay's weights apply */
    size_t stride; /* floats per chunk record: an F x M matrix, then an F vector, padded */
} chunk_plan;

/* Floats of a record's S, and of S and z together. */
static size_t record_S(const chunk_plan *p) { return (size_t)p->F * p->M; }
static size_t record_Sz(const chunk_plan *p) { return record_S(p) + (size_t)p->F; }

/* Chunks of C rows over the first N rows of a call's head. */
static chunk_plan chunk_plan_of(const lt_attn *attn, lt_attn_shape shape, int N, int C)
{
    chunk_plan p = {N, shape.D, attn_feature_dim(&attn->config, shape.D), shape.M, C, 0,
                    is_decay(attn), 0};
    p.chunks = (N + p.C - 1) / p.C;
    p.stride = attn_round(record_Sz(&p) * sizeof(float)) / sizeof(float);
    return p;
}

/* Rows of chunk c. */
static int chunk_rows(const chunk_plan *p, int c)
{
    int c0 = c * p->C;
    return p->N - c0 < p->C ? p->N - c0 : p->C;
}

/* Floats a scan walks at a time: one stack block, contiguous in a record. */
#define SCAN_BLOCK 256

/* Replaces floats [first, first + count) of every chunk record by the sum of
 * the records before it (after it, with `reverse`): an exclusive scan, a
 * worksharing loop over the floats, each float summed in chunk order. With
 * decay powers pw (NULL: none), passing chunk c multiplies the running sum
 * by gamma^rows(c) first: the state that reaches the next chunk. */
static void chunk_scan(float *records, const chunk_plan *p, size_t first, size_t count,
                       int reverse, const float *pw)
{
#pragma omp for schedule(static)
    for (size_t e0 = first; e0 < first + count; e0 += SCAN_BLOCK) {
        size_t n = first + count - e0 < SCAN_BLOCK ? first + count - e0 : SCAN_BLOCK;
        float run[SCAN_BLOCK];
        for (size_t e = 0; e < n; e++)
            run[e] = 0.0f;
        for (int i = 0; i < p->chunks; i++) {
            int c = reverse ? p->chunks - 1 - i : i;
            float *restrict x = records + (size_t)c * p->stride + e0;
            if (pw == NULL) {
                for (size_t e = 0; e < n; e++) {
                    float own = x[e];
                    x[e] = run[e];
                    run[e] += own;
                }
            } else {
                float decay = pw[chunk_rows(p, c)];
                for (size_t e = 0; e < n; e++) {
                    float own = x[e];
                    x[e] = run[e];
                    run[e] = decay * run[e] + own;
                }
            }
        }
    }
}

/* out = the sum, in chunk order, of floats [0, count) of every record: a
 * worksharing loop over the floats. */
static void chunk_total(float *restrict out, const float *restrict records, const chunk_plan *p,
                        size_t count)
{
#pragma omp for schedule(static)
    for (size_t e0 = 0; e0 < count; e0 += SCAN_BLOCK) {
        size_t n = count - e0 < SCAN_BLOCK ? count - e0 : SCAN_BLOCK;
        for (size_t e = 0; e < n; e++)
            out[e0 + e] = 0.0f;
        for (int c = 0; c < p->chunks; c++)
            for (size_t e = 0; e < n; e++)
                out[e0 + e] += records[(size_t)c * p->stride + e0 + e];
    }
}

/* record = (phi(K_c)^T V_c, column sums of phi(K_c)): the chunk's own sums
 * (with decay, pk holds the keys' features weighed to the chunk's end). */
static void chunk_own_state(float *record, const chunk_plan *p, const float *pk, const float *v,
                            int rows)
{
    const int F = p->F, M = p->M;
    lt_sgemm_small(LT_T, LT_N, F, M, rows, 1.0f, pk, F, v, M, 0.0f,
                record, M);
    memset(record + record_S(p), 0, (size_t)F * sizeof(float));
    add_column_sums(record + record_S(p), NULL, pk, rows, F);
}

/* ---- linear-gemm (non-causal) ---- */

/* Rows per chunk of linear-gemm: a chunk's features (256 KiB at F = 64)
 * stay in L2 between their computation and the GEMMs that read them.
 * Measured (B=1, H=8, N=4096, 2 threads): 1024 beat 128 to 512 by 10-15%
 * with OpenBLAS's SkylakeX kernels and by 5-15% with its generic ones. */
#define GEMM_CHUNK 1024

/* Workspace of one head: the chunk records and their total (S, z forward
 * without saved; dS, dz backward), then one scratch block per thread. */
static size_t gemm_shared_bytes(const chunk_plan *p)
{
    return floats((size_t)p->chunks * p->stride) + floats(p->stride);
}

static size_t gemm_scratch_bytes(const chunk_plan *p, int backward)
{
    size_t C = p->C;
    if (!backward)
        return floats(C * p->F) + floats(C); /* features, den */
    return 2 * floats(C * p->F) + floats(C * p->M) + floats(C);
}

/* Per-thread scratch of one chunk. */
typedef struct gemm_scratch {
    float *phi;  /* (C, F): phi(K_c) or phi(Q_c) */
    float *t;    /* (C, F): S dO rows, then d phi; backward */
    float *dnum; /* (C, M): backward */
    float *vec;  /* (C): den without saved, or dden */
} gemm_scratch;

static gemm_scratch gemm_scratch_of(char *scratch, const chunk_plan *p, int backward)
{
    gemm_scratch t = {0};
    char *cursor = scratch + (size_t)omp_get_thread_num() * gemm_scratch_bytes(p, backward);
    t.phi = attn_take(&cursor, (size_t)p->C * p->F);
    if (backward) {
        t.t = attn_take(&cursor, (size_t)p->C * p->F);
        t.dnum = attn_take(&cursor, (size_t)p->C * p->M);
    }
    t.vec = attn_take(&cursor, (size_t)p->C);
    return t;
}

/* Forward: S = sum_c phi(K_c)^T V_c and z from per-chunk records, then per
 * chunk out_c = phi(Q_c) S / (phi(Q_c) z + eps); each chunk's features are
 * computed once and used while in cache. */
static void gemm_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const attn_features fx = features_in(call, &ws);
    const chunk_plan p = chunk_plan_of(call->attn, call->shape, attn_head_rows(call, bh),
                                       GEMM_CHUNK);
    const int D = p.D, F = p.F, M = p.M, C = p.C;
    const float eps = call->attn->config.eps;
    const attn_head h = attn_view_head(call, bh);
    const saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *records = attn_take(&cursor, (size_t)p.chunks * p.stride);
    float *total = attn_take(&cursor, p.stride);
    float *S = s.S != NULL ? s.S : total, *z = s.z != NULL ? s.z : total + record_S(&p);
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const gemm_scratch t = gemm_scratch_of(cursor, &p, 0);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int rows = chunk_rows(&p, c);
            attn_phi(&fx, t.phi, h.k + (size_t)c * C * D, rows, ATTN_KEY);
            chunk_own_state(records + (size_t)c * p.stride, &p, t.phi, h.v + (size_t)c * C * M,
                            rows);
        }
        chunk_total(S, records, &p, record_S(&p));
        chunk_total(z, records + record_S(&p), &p, (size_t)F);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            float *out = h.out + (size_t)c0 * M, *den = s.den != NULL ? s.den + c0 : t.vec;
            attn_phi(&fx, t.phi, h.q + (size_t)c0 * D, rows, ATTN_QUERY);
            lt_sgemm_small(LT_N, LT_N, rows, M, F, 1.0f, t.phi, F, S,
                        M, 0.0f, out, M);
            for (int r = 0; r < rows; r++) {
                den[r] = eps + dot(t.phi + (size_t)r * F, z, F);
                for (int m = 0; m < M; m++)
                    out[(size_t)r * M + m] /= den[r];
            }
        }
    }
}

/* Backward: per chunk, d phi(Q) from S and z and the records of dS =
 * sum phi(Q_c)^T dnum_c and dz = sum dden_i phi(Q_i); then per chunk
 * dV_c += phi(K_c) dS and d phi(K_c) = V_c dS^T + dz. */
static void gemm_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const attn_features fx = features_in(call, &ws);
    const chunk_plan p = chunk_plan_of(call->attn, call->shape, attn_head_rows(call, bh),
                                       GEMM_CHUNK);
    const int D = p.D, F = p.F, M = p.M, C = p.C;
    const attn_head h = attn_view_head(call, bh);
    const saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *records = attn_take(&cursor, (size_t)p.chunks * p.stride);
    float *dS = attn_take(&cursor, p.stride), *dz = dS + record_S(&p);
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const gemm_scratch t = gemm_scratch_of(cursor, &p, 1);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            const float *g = h.d_out + (size_t)c0 * M, *den = s.den + c0;
            float *record = records + (size_t)c * p.stride;
            attn_phi(&fx, t.phi, h.q + (size_t)c0 * D, rows, ATTN_QUERY);
            /* t_i = S g_i, so g_i . num_i = phi(Q_i) . t_i without rebuilding out */
            lt_sgemm_small(LT_N, LT_T, rows, F, M, 1.0f, g, M, s.S, M,
                        0.0f, t.t, F);
            for (int r = 0; r < rows; r++) {
                float *tr = t.t + (size_t)r * F, inv = 1.0f / den[r];
                t.vec[r] = -dot(t.phi + (size_t)r * F, tr, F) * inv * inv;
                for (int f = 0; f < F; f++)
                    tr[f] = tr[f] * inv + t.vec[r] * s.z[f]; /* d phi(Q_i) */
                for (int m = 0; m < M; m++)
                    t.dnum[(size_t)r * M + m] = g[(size_t)r * M + m] * inv;
            }
            attn_phi_backprop(&fx, h.dq + (size_t)c0 * D, t.t, h.q + (size_t)c0 * D, t.phi, rows,
                              ATTN_QUERY);
            lt_sgemm_small(LT_T, LT_N, F, M, rows, 1.0f, t.phi, F,
                        t.dnum, M, 0.0f, record, M);
            memset(record + record_S(&p), 0, (size_t)F * sizeof(float));
            add_column_sums(record + record_S(&p), t.vec, t.phi, rows, F);
        }
        chunk_total(dS, records, &p, record_Sz(&p));
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            attn_phi(&fx, t.phi, h.k + (size_t)c0 * D, rows, ATTN_KEY);
            lt_sgemm_small(LT_N, LT_N, rows, M, F, 1.0f, t.phi, F, dS,
                        M, 1.0f, h.dv + (size_t)c0 * M, M);
            /* d phi(K_j) = dS V_j + dz */
            lt_sgemm_small(LT_N, LT_T, rows, F, M, 1.0f,
                        h.v + (size_t)c0 * M, M, dS, M, 0.0f, t.t, F);
            for (int r = 0; r < rows; r++)
                for (int f = 0; f < F; f++)
                    t.t[(size_t)r * F + f] += dz[f];
            attn_phi_backprop(&fx, h.dk + (size_t)c0 * D, t.t, h.k + (size_t)c0 * D, t.phi, rows,
                              ATTN_KEY);
        }
    }
}

/* ---- linear-causal-prefix ---- */

/* One causal step: decays the state S (F x M), z (F) by gamma (decayed:
 * a constant, so the loops are compiled with and without it), folds in key
 * features pk (F) and value v (M), then reads it out for query features pq
 * into out (M). Returns the normaliser. */
static inline float causal_token_body(float *restrict out, float *restrict S, float *restrict z,
                                      const float *restrict pq, const float *restrict pk,
                                      const float *restrict v, int F, int M, float eps,
                                      float gamma, const int decayed)
{
    for (int m = 0; m < M; m++)
        out[m] = 0.0f;
    for (int f = 0; f < F; f++) {
        float *restrict row = S + (size_t)f * M;
        z[f] = (decayed ? gamma * z[f] : z[f]) + pk[f];
        for (int m = 0; m < M; m++) {
            row[m] = (decayed ? gamma * row[m] : row[m]) + pk[f] * v[m];
            out[m] += pq[f] * row[m];
        }
    }
    float den = eps + dot(pq, z, F);
    for (int m = 0; m < M; m++)
        out[m] /= den;
    return den;
}

/* causal_token_body for M a small multiple of 16 known when compiled: the
 * output row and v stay in vector registers through the sweep over S,
 * where the plain loop (M known only at run time) goes through memory and
 * loop overheads for every row of S. Measured on Zen 5, a generation
 * step's attention at the MNIST paper model (8 layers, batch 16 x 8 heads,
 * F = M = 32): 0.12-0.16 ms against 0.18-0.25 with the plain loop. The
 * same operations on each lane, in the same order: the same bits. */
enum { TOKEN_LANES = LT_LANES, TOKEN_MAX_VECTORS = 64 / LT_LANES };
typedef lt_lanes token_lanes;

static inline __attribute__((always_inline)) float
causal_token_lanes(float *restrict out, float *restrict S, float *restrict z,
                   const float *restrict pq, const float *restrict pk, const float *restrict v,
                   int F, const int M, float eps, float gamma, const int decayed)
{
    const int vectors = M / TOKEN_LANES;
    token_lanes acc[TOKEN_MAX_VECTORS], value[TOKEN_MAX_VECTORS];
#pragma GCC unroll 16
    for (int j = 0; j < vectors; j++) {
        acc[j] = (token_lanes){0};
        value[j] = lt_lanes_load(v + j * TOKEN_LANES);
    }
    for (int f = 0; f < F; f++) {
        float *restrict row = S + (size_t)f * M;
        z[f] = (decayed ? gamma * z[f] : z[f]) + pk[f];
#pragma GCC unroll 16
        for (int j = 0; j < vectors; j++) {
            token_lanes r = lt_lanes_load(row + j * TOKEN_LANES);
            r = (decayed ? gamma * r : r) + pk[f] * value[j];
            memcpy(row + j * TOKEN_LANES, &r, sizeof r);
            acc[j] += pq[f] * r;
        }
    }
    float den = eps + dot(pq, z, F);
#pragma GCC unroll 16
    for (int j = 0; j < vectors; j++) {
        token_lanes o = acc[j] / den;
        memcpy(out + j * TOKEN_LANES, &o, sizeof o);
    }
    return den;
}

/* Shared by the prefix kernel and lt_attn_step, so the two agree to the bit. */
static float causal_token(float *out, float *S, float *z, const float *pq, const float *pk,
                          const float *v, int F, int M, float eps, float gamma)
{
    const int decayed = gamma != 1.0f;
    switch (M) {
#define TOKEN_CASE(m)                                                                          \
    case m:                                                                                    \
        return decayed ? causal_token_lanes(out, S, z, pq, pk, v, F, m, eps, gamma, 1)         \
                       : causal_token_lanes(out, S, z, pq, pk, v, F, m, eps, 1.0f, 0);
        TOKEN_CASE(16) TOKEN_CASE(32) TOKEN_CASE(48) TOKEN_CASE(64)
#undef TOKEN_CASE
    default:
        return decayed ? causal_token_body(out, S, z, pq, pk, v, F, M, eps, gamma, 1)
                       : causal_token_body(out, S, z, pq, pk, v, F, M, eps, 1.0f, 0);
    }
}

/* pq, pk (F) = phi(Q_i), phi(K_i) of one head */
static void token_features(float *pq, float *pk, const attn_head *h, const attn_features *fx,
                           int i)
{
    attn_phi(fx, pq, h->q + (size_t)i * fx->D, 1, ATTN_QUERY);
    attn_phi(fx, pk, h->k + (size_t)i * fx->D, 1, ATTN_KEY);
}

static void prefix_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const attn_features fx = features_in(call, &ws);
    const int N = attn_head_rows(call, bh), F = fx.F, M = call->shape.M;
    const float gamma = head_gamma(call->attn, bh % call->shape.H);
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *S = attn_take(&cursor, (size_t)F * M);
    float *z = attn_take(&cursor, (size_t)F);
    float *pq = attn_take(&cursor, (size_t)F);
    float *pk = attn_take(&cursor, (size_t)F);
    float *den = s.den != NULL ? s.den : attn_take(&cursor, (size_t)N);
    (void)inner; /* one token after another: nothing to spread */

    memset(S, 0, (size_t)F * M * sizeof(float));
    memset(z, 0, (size_t)F * sizeof(float));
    for (int i = 0; i < N; i++) {
        token_features(pq, pk, &h, &fx, i);
        den[i] = causal_token(h.out + (size_t)i * M, S, z, pq, pk, h.v + (size_t)i * M, F, M,
                              call->attn->config.eps, gamma);
    }
}

/* The prefix backward, compiled with and without decay (as causal_token). */
static inline void prefix_backward_body(const attn_call *call, int bh, char *ws, float gamma,
                                        const int decayed)
{
    const attn_features fx = features_in(call, &ws);
    const int N = attn_head_rows(call, bh), D = fx.D, F = fx.F, M = call->shape.M;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *S = attn_take(&cursor, (size_t)F * M); /* prefix S_i, then suffix U_i */
    float *z = attn_take(&cursor, (size_t)F);     /* prefix z_i, then suffix u_i */
    float *pq = attn_take(&cursor, (size_t)F);
    float *pk = attn_take(&cursor, (size_t)F);
    float *t = attn_take(&cursor, (size_t)F); /* S_i g_i, then d phi(Q_i) or d phi(K_i) */
    float *dnum = attn_take(&cursor, (size_t)M);
    float *dden = attn_take(&cursor, (size_t)N);

    /* Forward sweep: rebuild (S_i, z_i) to get dQ_i and every d den_i. */
    memset(S, 0, (size_t)F * M * sizeof(float));
    memset(z, 0, (size_t)F * sizeof(float));
    for (int i = 0; i < N; i++) {
        const float *g = h.d_out + (size_t)i * M, *vi = h.v + (size_t)i * M;
        token_features(pq, pk, &h, &fx, i);
        for (int f = 0; f < F; f++) {
            float *restrict row = S + (size_t)f * M;
            float sg = 0.0f;
            z[f] = (decayed ? gamma * z[f] : z[f]) + pk[f];
#pragma omp simd reduction(+ : sg)
            for (int m = 0; m < M; m++) {
                row[m] = (decayed ? gamma * row[m] : row[m]) + pk[f] * vi[m];
                sg += row[m] * g[m];
            }
            t[f] = sg;
        }
        float den = s.den[i];
        dden[i] = -dot(pq, t, F) / (den * den);
        for (int f = 0; f < F; f++)
            t[f] = t[f] / den + dden[i] * z[f];
        attn_phi_backprop(&fx, h.dq + (size_t)i * D, t, h.q + (size_t)i * D, pq, 1, ATTN_QUERY);
    }

    /* Reverse sweep: U_i = sum_{i' >= i} gamma^(i' - i) phi(Q_i') dnum_i'^T
     * and u_i = sum gamma^(i' - i) dden_i' phi(Q_i') are what S_i and z_i
     * feed, so d phi(K_i) = U_i V_i + u_i and dV_i = U_i^T phi(K_i). */
    memset(S, 0, (size_t)F * M * sizeof(float));
    memset(z, 0, (size_t)F * sizeof(float));
    for (int i = N - 1; i >= 0; i--) {
        const float *g = h.d_out + (size_t)i * M, *vi = h.v + (size_t)i * M;
        float *restrict dvi = h.dv + (size_t)i * M;
        float den = s.den[i];
        token_features(pq, pk, &h, &fx, i);
        for (int m = 0; m < M; m++)
            dnum[m] = g[m] / den;
        for (int f = 0; f < F; f++) {
            float *restrict row = S + (size_t)f * M;
            float uv = 0.0f;
            z[f] = (decayed ? gamma * z[f] : z[f]) + dden[i] * pq[f];
#pragma omp simd reduction(+ : uv)
            for (int m = 0; m < M; m++) {
                row[m] = (decayed ? gamma * row[m] : row[m]) + pq[f] * dnum[m];
                uv += row[m] * vi[m];
                dvi[m] += pk[f] * row[m];
            }
            t[f] = uv + z[f];
        }
        attn_phi_backprop(&fx, h.dk + (size_t)i * D, t, h.k + (size_t)i * D, pk, 1, ATTN_KEY);
    }
}

static void prefix_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const float gamma = head_gamma(call->attn, bh % call->shape.H);
    if (gamma == 1.0f)
        prefix_backward_body(call, bh, ws, 1.0f, 0);
    else
        prefix_backward_body(call, bh, ws, gamma, 1);
}

/* ---- linear-causal-chunked ---- */

/* Chunkwise-parallel form. Chunk c (tokens [c0, c0 + rows)) sees the state
 * of the chunks before it, (S_c, z_c) = sums of phi(K_j) V_j^T and phi(K_j)
 * over j < c0, plus the masked quadratic form inside the chunk:
 *   num_i = phi(Q_i) S_c + sum_{c0 <= j <= i} A_ij V_j,  A = phi(Q_c) phi(K_c)^T,
 *   den_i = eps + phi(Q_i) . z_c + sum_{c0 <= j <= i} A_ij.
 * The states come in two steps so chunks never wait for each other: every
 * chunk's own sums (one GEMM each), then an exclusive prefix over the chunks
 * (F M + F additions a chunk). Backward does the same with the suffix sums of
 * the later chunks, U_c = sum phi(Q_i) dnum_i^T and u_c = sum dden_i phi(Q_i).
 * A head's workspace holds phi(Q), phi(K) and one (S, z) record per chunk
 * (two in backward): O(N) memory, no state per position. When heads are
 * fewer than threads every phase splits its chunks over the threads; each
 * sum runs in the same order either way, so results do not depend on the
 * thread count.
 *
 * With decay (row r of a chunk at position c0 + r, R rows): A_rj is
 * weighed by gamma^(r - j), the state term by gamma^(r + 1) (phi(Q) read
 * as Q~ = diag(gamma^(r + 1)) phi(Q_c)), a chunk's own sums by keys weighed
 * to its end, K~ = diag(gamma^(R - 1 - j)) phi(K_c), and the scans decay the
 * running state by gamma^R a chunk. Backward mirrors each weight: U_c and
 * u_c sum Q~ terms and reach key j through gamma^(R - 1 - j). */

/* Tokens per chunk. A chunk adds 2 C (F + M) flops a token of quadratic form
 * to the 4 F M of the state products (forward; backward 2 C (3 F + 2 M) to
 * 10 F M), while GEMMs with a side of C run faster as C grows (OpenBLAS's
 * small-matrix kernels on one Xeon core: 50-105 GFLOP/s with sides of 32,
 * 75-130 with sides of 64, the slower figure for B transposed).
 * C = max(F, M) / 2, rounded up to a power of two and kept in [16, 64],
 * holds the quadratic part to about half the state products.
 * Measured (B=1, H=8, N=4096, one thread, F = D): at D = M = 64 chunks of 16
 * to 64 ran within noise of each other and 128 was 15-25% slower; at D = M =
 * 32, 16 to 48 tied and 128 was 45% slower. */
#define CHUNK_MIN 16
#define CHUNK_MAX 64

int attn_linear_chunk(int F, int M)
{
    int half = (F > M ? F : M) / 2, C = CHUNK_MIN;
    while (C < half && C < CHUNK_MAX)
        C *= 2;
    return C;
}

static chunk_plan chunked_plan(const lt_attn *attn, lt_attn_shape shape, int N)
{
    const int F = attn_feature_dim(&attn->config, shape.D);
    return chunk_plan_of(attn, shape, N, attn_linear_chunk(F, shape.M));
}

/* Rows a thread maps at a time when threads share a head's row-wise
 * feature maps (favor, taylor); element-wise maps take PHI_BLOCK values. */
#define FEATURE_ROWS 64
#define PHI_BLOCK 4096

/* Workspace of one head: what its threads share (features, records, decay
 * powers), then one scratch block per thread. Kept beside the carving in
 * chunk_space_of. */
static size_t chunk_shared_bytes(const chunk_plan *p, int backward)
{
    return 2 * floats((size_t)p->N * p->F) +
           (size_t)(backward ? 2 : 1) * floats((size_t)p->chunks * p->stride) +
           (p->decayed ? floats((size_t)p->C + 1) : 0);
}

static size_t chunk_scratch_bytes(const chunk_plan *p, int backward)
{
    size_t C = p->C;
    size_t decay = p->decayed ? floats(C * p->F) + floats(C) : 0; /* K~, weights */
    if (!backward)
        return floats(C * C) + floats(C) + decay; /* A, den */
    return 2 * floats(C * C) + 2 * floats(C * p->F) + floats(C * p->M) + floats(C) + decay;
}

typedef struct chunk_space {
    float *pq, *pk; /* (N, F): phi(Q), phi(K) of the whole head */
    float *S;       /* (chunks, stride): own sums, then prefix (S_c, z_c) */
    float *U;       /* backward: own sums, then suffix (U_c, u_c) */
    float *pw;      /* (C + 1): gamma^0 .. gamma^C with decay, else NULL */
    char *scratch;  /* chunk_scratch_bytes per thread */
} chunk_space;

/* Per-thread scratch of one chunk step. */
typedef struct chunk_scratch {
    float *A, *W;      /* (C, C): masked scores; backward dnum V^T, then dA */
    float *T, *dphi;   /* (C, F): S_c dO rows, then d phi(Q); d phi(K) */
    float *dnum;       /* (C, M) */
    float *vec;        /* (C): den (forward without saved) or dden */
    float *kt;         /* decay: (C, F) K~ */
    float *w;          /* decay: (C) weights */
} chunk_scratch;

/* Carves a head's space; with decay also fills its powers of gamma. */
static chunk_space chunk_space_of(char *ws, const chunk_plan *p, int backward, float gamma)
{
    chunk_space s;
    char *cursor = ws;
    s.pq = attn_take(&cursor, (size_t)p->N * p->F);
    s.pk = attn_take(&cursor, (size_t)p->N * p->F);
    s.S = attn_take(&cursor, (size_t)p->chunks * p->stride);
    s.U = backward ? attn_take(&cursor, (size_t)p->chunks * p->stride) : NULL;
    s.pw = p->decayed ? attn_take(&cursor, (size_t)p->C + 1) : NULL;
    if (s.pw != NULL)
        decay_powers(s.pw, gamma, p->C);
    s.scratch = cursor;
    return s;
}

/* The calling thread's scratch; inside the head's parallel region. */
static chunk_scratch chunk_scratch_of(const chunk_space *s, const chunk_plan *p, int backward)
{
    chunk_scratch t = {0};
    char *cursor = s->scratch + (size_t)omp_get_thread_num() * chunk_scratch_bytes(p, backward);
    size_t C = p->C;
    t.A = attn_take(&cursor, C * C);
    if (backward) {
        t.W = attn_take(&cursor, C * C);
        t.T = attn_take(&cursor, C * p->F);
        t.dphi = attn_take(&cursor, C * p->F);
        t.dnum = attn_take(&cursor, C * p->M);
    }
    t.vec = attn_take(&cursor, C);
    if (p->decayed) {
        t.kt = attn_take(&cursor, C * p->F);
        t.w = attn_take(&cursor, C);
    }
    return t;
}

/* phi(Q), phi(K) of the whole head; a worksharing loop of the head's region. */
static void chunk_features(const chunk_space *s, const chunk_plan *p, const attn_head *h,
                           const attn_features *fx)
{
    if (attn_features_elementwise(fx->map)) {
        size_t n = (size_t)p->N * p->D;
#pragma omp for schedule(static)
        for (size_t start = 0; start < n; start += PHI_BLOCK) {
            size_t len = n - start < PHI_BLOCK ? n - start : PHI_BLOCK;
            attn_phi_elementwise(fx->map, s->pq + start, h->q + start, len);
            attn_phi_elementwise(fx->map, s->pk + start, h->k + start, len);
        }
        return;
    }
#pragma omp for schedule(static)
    for (int r0 = 0; r0 < p->N; r0 += FEATURE_ROWS) {
        int rows = p->N - r0 < FEATURE_ROWS ? p->N - r0 : FEATURE_ROWS;
        attn_phi(fx, s->pq + (size_t)r0 * p->F, h->q + (size_t)r0 * p->D, rows, ATTN_QUERY);
        attn_phi(fx, s->pk + (size_t)r0 * p->F, h->k + (size_t)r0 * p->D, rows, ATTN_KEY);
    }
}

/* A (rows x rows, stride C) = phi(Q_c) phi(K_c)^T with the entries of later
 * keys (j > i) zeroed: the causal quadratic form inside one chunk; with
 * decay powers pw, entry (i, j) weighed by gamma^(i - j). */
static void chunk_scores(float *A, const float *pq, const float *pk, int rows, int F, int C,
                         const float *pw)
{
    lt_sgemm_small(LT_N, LT_T, rows, rows, F, 1.0f, pq, F, pk, F, 0.0f,
                A, C);
    for (int r = 0; r < rows; r++) {
        for (int j = r + 1; j < rows; j++)
            A[(size_t)r * C + j] = 0.0f;
        for (int j = 0; pw != NULL && j <= r; j++)
            A[(size_t)r * C + j] *= pw[r - j];
    }
}

/* With decay: kt (rows x F) = K~, the keys' features weighed to the
 * chunk's end, gamma^(rows - 1 - j). */
static void chunk_keys_to_end(float *kt, const float *pk, const float *pw, int rows, int F)
{
    for (int j = 0; j < rows; j++)
        for (int f = 0; f < F; f++)
            kt[(size_t)j * F + f] = pw[rows - 1 - j] * pk[(size_t)j * F + f];
}

/* Chunk c's own (S, z) record: from phi(K_c), or K~ with decay. */
static void chunk_own_keys(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                           const attn_head *h, int c)
{
    const int c0 = c * p->C, rows = chunk_rows(p, c);
    const float *pk = s->pk + (size_t)c0 * p->F;
    if (p->decayed) {
        chunk_keys_to_end(t->kt, pk, s->pw, rows, p->F);
        pk = t->kt;
    }
    chunk_own_state(s->S + (size_t)c * p->stride, p, pk, h->v + (size_t)c0 * p->M, rows);
}

/* Outputs and normalisers of chunk c from its prefix record. */
static void chunk_forward(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                          const attn_head *h, float *den_saved, int c, float eps)
{
    const int F = p->F, M = p->M, C = p->C, c0 = c * C, rows = chunk_rows(p, c);
    const float *pq = s->pq + (size_t)c0 * F, *pk = s->pk + (size_t)c0 * F;
    const float *record = s->S + (size_t)c * p->stride, *z = record + record_S(p);
    const float *pw = s->pw;
    float *out = h->out + (size_t)c0 * M;
    float *den = den_saved != NULL ? den_saved + c0 : t->vec;
    chunk_scores(t->A, pq, pk, rows, F, C, pw);
    lt_sgemm_small(LT_N, LT_N, rows, M, F, 1.0f, pq, F, record, M,
                0.0f, out, M);
    if (pw != NULL)
        scale_rows(out, pw + 1, rows, M); /* Q~ S_c */
    lt_sgemm_small(LT_N, LT_N, rows, M, rows, 1.0f, t->A, C,
                h->v + (size_t)c0 * M, M, 1.0f, out, M);
    for (int r = 0; r < rows; r++) {
        const float *a = t->A + (size_t)r * C;
        float within = 0.0f;
        for (int j = 0; j <= r; j++)
            within += a[j];
        float carried = dot(pq + (size_t)r * F, z, F);
        den[r] = eps + (pw != NULL ? pw[r + 1] * carried : carried) + within;
        for (int m = 0; m < M; m++)
            out[(size_t)r * M + m] /= den[r];
    }
}

/* dnum (rows x M) = dO_c / den: the gradient reaching the numerators. */
static void chunk_dnum(float *dnum, const float *g, const float *den, int rows, int M)
{
    for (int r = 0; r < rows; r++)
        for (int m = 0; m < M; m++)
            dnum[(size_t)r * M + m] = g[(size_t)r * M + m] / den[r];
}

/* Backward of chunk c given its prefix (S_c, z_c) and suffix U_c: adds its
 * dQ and dV rows, dK rows but for the u_c term (chunk_suffix_u), and leaves
 * sum_i dden_i phi(Q_i) (Q~ with decay) in the record's u slot for the
 * suffix scan. */
static void chunk_backward(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                           const attn_head *h, const float *den_saved, const attn_features *fx,
                           int c)
{
    const int D = p->D, F = p->F, M = p->M, C = p->C, c0 = c * C, rows = chunk_rows(p, c);
    const float *pq = s->pq + (size_t)c0 * F, *pk = s->pk + (size_t)c0 * F;
    const float *v = h->v + (size_t)c0 * M, *g = h->d_out + (size_t)c0 * M;
    const float *den = den_saved + c0, *pw = s->pw;
    const float *S = s->S + (size_t)c * p->stride, *z = S + record_S(p);
    float *U = s->U + (size_t)c * p->stride, *u = U + record_S(p);
    float *A = t->A, *W = t->W, *T = t->T, *dden = t->vec;

    chunk_scores(A, pq, pk, rows, F, C, pw);
    /* W = dO_c V_c^T, T = dO_c S_c^T (row i: S_c g_i) */
    lt_sgemm_small(LT_N, LT_T, rows, rows, M, 1.0f, g, M, v, M, 0.0f, W,
                C);
    lt_sgemm_small(LT_N, LT_T, rows, F, M, 1.0f, g, M, S, M, 0.0f, T, F);
    for (int r = 0; r < rows; r++) {
        /* g_i . num_i = phi(Q_i) . S_c g_i + sum_j A_ij (g_i . V_j) */
        float *w = W + (size_t)r * C, *tr = T + (size_t)r * F;
        const float *a = A + (size_t)r * C;
        float within = 0.0f;
        for (int j = 0; j <= r; j++)
            within += a[j] * w[j];
        float inv = 1.0f / den[r];
        float carried = dot(pq + (size_t)r * F, tr, F);
        dden[r] = -((pw != NULL ? pw[r + 1] * carried : carried) + within) * inv * inv;
        if (pw == NULL) {
            for (int j = 0; j < rows; j++) /* dA = dnum V^T + dden, masked */
                w[j] = j <= r ? w[j] * inv + dden[r] : 0.0f;
        } else {
            for (int j = 0; j < rows; j++) /* ... and decayed */
                w[j] = j <= r ? (w[j] * inv + dden[r]) * pw[r - j] : 0.0f;
        }
        /* d phi(Q_i) = S_c dnum_i + dden_i z_c (times gamma^(r + 1)) + (dA phi(K_c))_i */
        for (int f = 0; f < F; f++)
            tr[f] = tr[f] * inv + dden[r] * z[f];
        if (pw != NULL)
            for (int f = 0; f < F; f++)
                tr[f] *= pw[r + 1];
    }
    lt_sgemm_small(LT_N, LT_N, rows, F, rows, 1.0f, W, C, pk, F, 1.0f,
                T, F);
    attn_phi_backprop(fx, h->dq + (size_t)c0 * D, T, h->q + (size_t)c0 * D, pq, rows, ATTN_QUERY);
    /* d phi(K_c) = V_c U_c^T (weighed to the chunk's end) + dA^T phi(Q_c) (+ u_c later) */
    lt_sgemm_small(LT_N, LT_T, rows, F, M, 1.0f, v, M, U, M, 0.0f,
                t->dphi, F);
    if (pw != NULL) {
        for (int j = 0; j < rows; j++)
            t->w[j] = pw[rows - 1 - j];
        scale_rows(t->dphi, t->w, rows, F);
    }
    lt_sgemm_small(LT_T, LT_N, rows, F, rows, 1.0f, W, C, pq, F, 1.0f,
                t->dphi, F);
    attn_phi_backprop(fx, h->dk + (size_t)c0 * D, t->dphi, h->k + (size_t)c0 * D, pk, rows,
                      ATTN_KEY);
    /* dV_c += phi(K_c) U_c (K~ with decay) + A^T dnum */
    chunk_dnum(t->dnum, g, den, rows, M);
    float *dv = h->dv + (size_t)c0 * M;
    const float *keys = pk;
    if (pw != NULL) {
        chunk_keys_to_end(t->kt, pk, pw, rows, F);
        keys = t->kt;
    }
    lt_sgemm_small(LT_N, LT_N, rows, M, F, 1.0f, keys, F, U, M, 1.0f,
                dv, M);
    lt_sgemm_small(LT_T, LT_N, rows, M, rows, 1.0f, A, C, t->dnum, M,
                1.0f, dv, M);
    memset(u, 0, (size_t)F * sizeof(float));
    if (pw != NULL) {
        for (int r = 0; r < rows; r++)
            t->w[r] = dden[r] * pw[r + 1];
        add_column_sums(u, t->w, pq, rows, F);
    } else {
        add_column_sums(u, dden, pq, rows, F);
    }
}

/* dK rows of chunk c from the suffix u_c: each key's features get u_c
 * (times gamma^(rows - 1 - j) with decay). */
static void chunk_suffix_u(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                           const attn_head *h, const attn_features *fx, int c)
{
    const int D = p->D, F = p->F, c0 = c * p->C, rows = chunk_rows(p, c);
    const float *u = s->U + (size_t)c * p->stride + record_S(p);
    if (attn_features_elementwise(fx->map) && !p->decayed) {
        attn_phi_elementwise_backprop_rows(fx->map, h->dk + (size_t)c0 * D, u,
                                           h->k + (size_t)c0 * D, s->pk + (size_t)c0 * F, rows, D);
        return;
    }
    for (int j = 0; j < rows; j++) {
        float weight = p->decayed ? s->pw[rows - 1 - j] : 1.0f;
        for (int f = 0; f < F; f++)
            t->dphi[(size_t)j * F + f] = weight * u[f];
    }
    attn_phi_backprop(fx, h->dk + (size_t)c0 * D, t->dphi, h->k + (size_t)c0 * D,
                      s->pk + (size_t)c0 * F, rows, ATTN_KEY);
}

static void chunked_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const attn_features fx = features_in(call, &ws);
    const chunk_plan p = chunked_plan(call->attn, call->shape, attn_head_rows(call, bh));
    const float eps = call->attn->config.eps;
    const attn_head h = attn_view_head(call, bh);
    const chunk_space s = chunk_space_of(ws, &p, 0, head_gamma(call->attn, bh % call->shape.H));
    float *den = view_saved(call, bh).den;
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const chunk_scratch t = chunk_scratch_of(&s, &p, 0);
        chunk_features(&s, &p, &h, &fx);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_own_keys(&p, &s, &t, &h, c);
        chunk_scan(s.S, &p, 0, record_Sz(&p), 0, s.pw);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_forward(&p, &s, &t, &h, den, c, eps);
    }
}

static void chunked_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const attn_features fx = features_in(call, &ws);
    const chunk_plan p = chunked_plan(call->attn, call->shape, attn_head_rows(call, bh));
    const attn_head h = attn_view_head(call, bh);
    const chunk_space s = chunk_space_of(ws, &p, 1, head_gamma(call->attn, bh % call->shape.H));
    const float *den = view_saved(call, bh).den;
    const int F = p.F, M = p.M, C = p.C;
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const chunk_scratch t = chunk_scratch_of(&s, &p, 1);
        chunk_features(&s, &p, &h, &fx);
        /* own sums: (S, z) of the keys, U = phi(Q_c)^T dnum_c (Q~ with decay) */
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            chunk_own_keys(&p, &s, &t, &h, c);
            chunk_dnum(t.dnum, h.d_out + (size_t)c0 * M, den + c0, rows, M);
            if (s.pw != NULL)
                scale_rows(t.dnum, s.pw + 1, rows, M);
            lt_sgemm_small(LT_T, LT_N, F, M, rows, 1.0f,
                        s.pq + (size_t)c0 * F, F, t.dnum, M, 0.0f, s.U + (size_t)c * p.stride, M);
        }
        chunk_scan(s.S, &p, 0, record_Sz(&p), 0, s.pw);
        chunk_scan(s.U, &p, 0, record_S(&p), 1, s.pw);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_backward(&p, &s, &t, &h, den, &fx, c);
        /* u_c needs every later chunk's dden: scan, then add u_c's share */
        chunk_scan(s.U, &p, record_S(&p), (size_t)F, 1, s.pw);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_suffix_u(&p, &s, &t, &h, &fx, c);
    }
}

/* ---- linear-reference: the quadratic form in plain loops ---- */

/* Scratch of the reference: the features of one query and one key, the
 * gradient of a feature row, and a numerator. */
typedef struct reference_scratch {
    float *pq, *pk, *dphi; /* (F) */
    float *num;            /* (M) */
} reference_scratch;

static reference_scratch reference_scratch_of(char *ws, int F, int M)
{
    reference_scratch r;
    r.pq = attn_take(&ws, (size_t)F);
    r.pk = attn_take(&ws, (size_t)F);
    r.dphi = attn_take(&ws, (size_t)F);
    r.num = attn_take(&ws, (size_t)M);
    return r;
}

/* A_ij without decay, phi(Q_i) . phi(K_j) summed in order; key j's
 * features into r->pk (r->pq holds query i's). */
static float reference_score(const attn_features *fx, reference_scratch *r, const float *kj)
{
    attn_phi(fx, r->pk, kj, 1, ATTN_KEY);
    float a = 0.0f;
    for (int f = 0; f < fx->F; f++)
        a += r->pq[f] * r->pk[f];
    return a;
}

/* Columns row i of a length-N sequence sees. */
static int reference_cols(const attn_call *call, int i, int N)
{
    return call->attn->config.causal ? i + 1 : N;
}

/* r->num (M) = sum_j A_ij V_j over the keys row i sees (A_ij times
 * gamma^(i - j) with decay); query i's features into r->pq. Returns den_i. */
static float reference_row(reference_scratch *r, const attn_call *call, const attn_head *h,
                           const attn_features *fx, int i, int N, float gamma)
{
    const int D = call->shape.D, M = call->shape.M;
    float den = 0.0f;
    attn_phi(fx, r->pq, h->q + (size_t)i * D, 1, ATTN_QUERY);
    for (int m = 0; m < M; m++)
        r->num[m] = 0.0f;
    for (int j = 0; j < reference_cols(call, i, N); j++) {
        float a = reference_score(fx, r, h->k + (size_t)j * D);
        if (is_decay(call->attn))
            a *= (float)pow((double)gamma, (double)(i - j));
        den += a;
        for (int m = 0; m < M; m++)
            r->num[m] += a * h->v[(size_t)j * M + m];
    }
    return den + call->attn->config.eps;
}

static void reference_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const attn_features fx = features_in(call, &ws);
    const int N = attn_head_rows(call, bh), M = call->shape.M;
    const float gamma = head_gamma(call->attn, bh % call->shape.H);
    reference_scratch r = reference_scratch_of(ws, fx.F, M);
    attn_head h = attn_view_head(call, bh);
    for (int i = 0; i < N; i++) {
        float den = reference_row(&r, call, &h, &fx, i, N, gamma);
        for (int m = 0; m < M; m++)
            h.out[(size_t)i * M + m] = r.num[m] / den;
    }
}

static void reference_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const attn_features fx = features_in(call, &ws);
    const int N = attn_head_rows(call, bh), D = call->shape.D, F = fx.F, M = call->shape.M;
    const float gamma = head_gamma(call->attn, bh % call->shape.H);
    reference_scratch r = reference_scratch_of(ws, F, M);
    attn_head h = attn_view_head(call, bh);
    for (int i = 0; i < N; i++) {
        const float *g = h.d_out + (size_t)i * M, *qi = h.q + (size_t)i * D;
        float den = reference_row(&r, call, &h, &fx, i, N, gamma);
        float g_out = 0.0f;
        for (int m = 0; m < M; m++)
            g_out += g[m] * r.num[m] / den;
        float dden = -g_out / den;
        for (int j = 0; j < reference_cols(call, i, N); j++) {
            const float *kj = h.k + (size_t)j * D, *vj = h.v + (size_t)j * M;
            float a = reference_score(&fx, &r, kj), weight = 1.0f;
            if (is_decay(call->attn))
                weight = (float)pow((double)gamma, (double)(i - j));
            float da = dden;
            for (int m = 0; m < M; m++) {
                da += g[m] / den * vj[m];
                h.dv[(size_t)j * M + m] += weight * a * g[m] / den;
            }
            da *= weight; /* the gradient of phi(Q_i) . phi(K_j) */
            for (int f = 0; f < F; f++)
                r.dphi[f] = da * r.pk[f];
            attn_phi_backprop(&fx, h.dq + (size_t)i * D, r.dphi, qi, r.pq, 1, ATTN_QUERY);
            for (int f = 0; f < F; f++)
                r.dphi[f] = da * r.pq[f];
            attn_phi_backprop(&fx, h.dk + (size_t)j * D, r.dphi, kj, r.pk, 1, ATTN_KEY);
        }
    }
}

/* ---- variant interface ---- */

/* The feature map, eps and random_features: shared by linear and decay. */
static lt_status feature_check_config(const lt_attn_config *config, const char *variant)
{
    if (!(config->eps >= 0.0f) || !isfinite(config->eps))
        return lt_fail(LT_E_USAGE,
                       "eps: expected a finite value >= 0 for %s attention (1e-6 is usual), "
                       "got %g",
                       variant, (double)config->eps);
    if ((int)config->feature_map < LT_FEATURE_ELU || (int)config->feature_map > LT_FEATURE_TAYLOR)
        return lt_fail(LT_E_USAGE,
                       "feature_map: unknown feature map %d (elu, relu, favor, taylor, identity)",
                       (int)config->feature_map);
    /* relu features are all 0 for a query with no positive entry, favor's
     * key features underflow to 0 for long keys: the normaliser is then eps
     * alone, and 0/0 without it. */
    if ((config->feature_map == LT_FEATURE_RELU || config->feature_map == LT_FEATURE_FAVOR) &&
        config->eps == 0.0f)
        return lt_fail(LT_E_USAGE,
                       "eps: must be > 0 with the %s feature map (a query whose features meet "
                       "only zeros has normaliser eps; 0 would divide 0 by 0); 1e-6 is usual",
                       config->feature_map == LT_FEATURE_RELU ? "relu" : "favor");
    if (config->feature_map == LT_FEATURE_FAVOR &&
        (config->random_features < 1 || config->random_features > 65536))
        return lt_fail(LT_E_USAGE,
                       "random_features: expected 1 to 65536 random features for the favor "
                       "feature map (64 is the default), got %d",
                       config->random_features);
    return LT_OK;
}

static lt_status linear_check_config(const lt_attn_config *config)
{
    return feature_check_config(config, "linear");
}

static lt_status linear_check_shape(const lt_attn *attn, lt_attn_shape shape)
{
    if (attn->config.feature_map == LT_FEATURE_TAYLOR && shape.D > LT_ATTN_TAYLOR_MAX_D)
        return lt_fail(LT_E_INPUT,
                       "%s attention: key dimension D = %d is too large for the taylor feature "
                       "map: it has 1 + D + D^2 = %.0f features a row, so a state of that many "
                       "times M floats a head and twice that many floats a position in the "
                       "chunked kernel; expected D at most %d (4161 features)",
                       attn->impl->name, shape.D, 1.0 + shape.D + (double)shape.D * shape.D,
                       LT_ATTN_TAYLOR_MAX_D);
    return LT_OK;
}

static size_t linear_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t BH = (size_t)shape.B * shape.H, F = attn_feature_dim(&attn->config, shape.D);
    switch (kernel_of(attn)) {
    case GEMM: return BH * ((size_t)shape.N + F * shape.M + F) * sizeof(float);
    case CHUNKED:
    case PREFIX: return BH * shape.N * sizeof(float);
    case REFERENCE: return 0;
    }
    return 0;
}

static size_t linear_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t N = shape.N, F = attn_feature_dim(&attn->config, shape.D), M = shape.M;
    size_t forward, backward;
    switch (kernel_of(attn)) {
    case GEMM: {
        chunk_plan p = chunk_plan_of(attn, shape, shape.N, GEMM_CHUNK);
        forward = gemm_shared_bytes(&p) + gemm_scratch_bytes(&p, 0);
        backward = gemm_shared_bytes(&p) + gemm_scratch_bytes(&p, 1);
        break;
    }
    case PREFIX:
        forward = floats(F * M) + 3 * floats(F) + floats(N);
        backward = floats(F * M) + 4 * floats(F) + floats(M) + floats(N);
        break;
    case CHUNKED: {
        chunk_plan p = chunked_plan(attn, shape, shape.N);
        forward = chunk_shared_bytes(&p, 0) + chunk_scratch_bytes(&p, 0);
        backward = chunk_shared_bytes(&p, 1) + chunk_scratch_bytes(&p, 1);
        break;
    }
    case REFERENCE:
    default: forward = backward = 3 * floats(F) + floats(M); break;
    }
    return block_bytes(attn, shape.D) + (forward > backward ? forward : backward);
}

/* FLOPs of favor's projections, W u for one row each way: 2 D F. */
static double projection_flops(const lt_attn *attn, double D, double F)
{
    return attn->config.feature_map == LT_FEATURE_FAVOR ? 2.0 * D * F : 0.0;
}

/* Model (per head, multiply-add = 2): the two F x M products a forward
 * needs, S = phi(K)^T V and phi(Q)^T S, are 2 N F M each; z and the
 * normaliser dots add 3 N F: 4 N F M + 3 N F, causal or not (prefix sums do
 * the same multiply-adds in another order), plus favor's projections of
 * every query and key (2 N D F each). Feature maps and divisions are not
 * counted, nor the chunked kernel's extra intra-chunk products: the model
 * counts the method, not a kernel. Backward is modelled as twice the
 * forward (four products of the same sizes: dS, dV, d phi(Q), d phi(K); and
 * favor's projections again, forward and back). Decay's weights are
 * element-wise: the same count. */
static double linear_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    double n = shape.N, d = shape.D, m = shape.M, f = attn_feature_dim(&attn->config, shape.D);
    double forward = (4.0 * n * f * m + 3.0 * n * f + 2.0 * n * projection_flops(attn, d, f)) *
                     shape.B * shape.H;
    return backward ? 2.0 * forward : forward;
}

/* Products and dot products as each kernel issues them on one head of n
 * rows. linear-causal-chunked adds to the model's state products (4 F M a
 * token forward, 8 backward) the chunk's quadratic form, 2 C (F + M) a
 * token forward and 2 C (3 F + 2 M) backward for full chunks of C, and
 * backward rebuilds the chunk sums and U (2 F M more); the prefix kernel's
 * backward rebuilds S_i (2 F M) and its reverse sweep also forms U_i V_i.
 * favor adds its projections (2 D F a row) wherever a kernel maps a row,
 * and their transposes (2 D F) wherever it takes a gradient through them. */
static double linear_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                                int inner)
{
    const double D = shape.D, M = shape.M, N = n, F = attn_feature_dim(&attn->config, shape.D);
    const double P = projection_flops(attn, D, F);
    (void)inner; /* no kernel recomputes when threads share a head */
    switch (kernel_of(attn)) {
    case GEMM:
        return backward ? N * (8.0 * F * M + 5.0 * F + 4.0 * P) : N * (4.0 * F * M + 3.0 * F + 2.0 * P);
    case CHUNKED: {
        const int C = attn_linear_chunk((int)F, shape.M);
        double total = 0.0;
        for (int c0 = 0; c0 < n; c0 += C) {
            double r = n - c0 < C ? n - c0 : C;
            total += backward ? r * (10.0 * F * M + 5.0 * F + 4.0 * P) +
                                    2.0 * r * r * (3.0 * F + 2.0 * M)
                              : r * (4.0 * F * M + 3.0 * F + 2.0 * P) + 2.0 * r * r * (F + M);
        }
        return total;
    }
    case PREFIX:
        /* backward maps every row twice, once per sweep */
        return backward ? N * (10.0 * F * M + 7.0 * F + 6.0 * P)
                        : N * (4.0 * F * M + 3.0 * F + 2.0 * P);
    case REFERENCE: break;
    }
    /* the reference: a score (2 F, and a key's features) and a value row
     * (2 M) per pair seen, a query's features per row; backward rebuilds
     * them, then per pair 4 M for dA and dV, 4 F for the feature gradients
     * and favor's two transposed projections */
    double pairs = attn->config.causal ? 0.5 * N * (N + 1.0) : N * N;
    double forward = pairs * (2.0 * F + 2.0 * M + P) + N * P;
    return backward ? forward + pairs * (4.0 * F + 4.0 * M + P + 2.0 * P) : forward;
}

/* ---- recurrent form: the (S, z) state ---- */

/* Below this many state elements a step stays on one thread. */
#define STEP_PARALLEL_MIN 16384

/* Per head: S (F, M), z (F), then two rows of features (pq, pk) as scratch;
 * the heads follow the feature map's block. */
static size_t head_state_floats(int F, int M) { return (size_t)F * M + 3 * (size_t)F; }

static size_t linear_state_payload_bytes(const lt_attn *attn, int B, int H, int D, int M,
                                         int max_steps)
{
    (void)max_steps; /* constant size: the point of the RNN form */
    int F = attn_feature_dim(&attn->config, D);
    return block_bytes(attn, D) + (size_t)B * H * head_state_floats(F, M) * sizeof(float);
}

static void linear_state_init(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                              int max_steps, uint64_t seed, int layer)
{
    (void)B, (void)H, (void)M, (void)max_steps;
    attn_features_draw((float *)payload, &attn->config, D, seed, layer);
}

static void linear_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                        int max_steps, int steps, int bh0, int bh1, float *out, const float *q,
                        const float *k, const float *v, const lt_attn_gates *gates)
{
    (void)B, (void)M, (void)max_steps, (void)steps, (void)gates;
    const attn_features fx = attn_features_of(&attn->config, D, (const float *)payload);
    const int F = fx.F;
    float *states = (float *)(payload + block_bytes(attn, D));
    for (int bh = bh0; bh < bh1; bh++) {
        float *S = states + (size_t)bh * head_state_floats(F, M);
        float *z = S + (size_t)F * M, *pq = z + F, *pk = pq + F;
        attn_phi(&fx, pq, q + (size_t)bh * D, 1, ATTN_QUERY);
        attn_phi(&fx, pk, k + (size_t)bh * D, 1, ATTN_KEY);
        causal_token(out + (size_t)bh * M, S, z, pq, pk, v + (size_t)bh * M, F, M,
                     attn->config.eps, head_gamma(attn, bh % H));
    }
}

/* A head's update is only 2 F M multiply-adds: small batches stay on one
 * thread, where a parallel region would cost more than it saves. */
static int linear_step_parallel(const lt_attn *attn, int heads, int D, int M, int steps)
{
    (void)steps;
    return (double)heads * attn_feature_dim(&attn->config, D) * M >= STEP_PARALLEL_MIN;
}

static const attn_kernel_info linear_kernels[] = {
    [GEMM] = {KERNEL_GEMM, ATTN_NONCAUSAL_ONLY, gemm_head_forward, gemm_head_backward, NULL},
    [CHUNKED] = {KERNEL_CHUNKED, ATTN_CAUSAL_ONLY, chunked_head_forward,
                 chunked_head_backward, NULL},
    [PREFIX] = {KERNEL_PREFIX, ATTN_CAUSAL_ONLY, prefix_head_forward, prefix_head_backward, NULL},
    [REFERENCE] = {KERNEL_REFERENCE, ATTN_EITHER, reference_head_forward,
                   reference_head_backward, NULL},
};

const lt_attn_variant lt_attn_linear_variant = {
    .name = "linear",
    .kernels = linear_kernels,
    .kernel_count = 4,
    .kernel_names = "linear-gemm|linear-causal-chunked|linear-causal-prefix|linear-reference",
    .check_config = linear_check_config,
    .check_shape = linear_check_shape,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = linear_saved_bytes,
    .slice_bytes = linear_slice_bytes,
    .flops = linear_flops,
    .head_flops = linear_head_flops,
    .forward = linear_forward,
    .backward = linear_backward,
    .state_payload_bytes = linear_state_payload_bytes,
    .state_init = linear_state_init,
    .step = linear_step,
    .step_parallel = linear_step_parallel,
};

/* ---- decay: the same kernels, causal only ---- */

#define DECAY_NOT_NONCAUSAL                                                                       \
    "decay is a recurrence over positions (each step forgets the past by gamma); its "           \
    "bidirectional counterpart, weights gamma^|i - j| from a forward and a reverse scan, is "   \
    "another model and not implemented"

static lt_status decay_check_config(const lt_attn_config *config)
{
    if (!config->causal)
        return lt_fail(LT_E_USAGE, "causal: decay attention is causal only: %s; set causal = 1, "
                                   "or use linear attention for non-causal models",
                       DECAY_NOT_NONCAUSAL);
    LT_TRY(feature_check_config(config, "decay"));
    if (!(config->decay_gamma == 0.0f ||
          (config->decay_gamma > 0.0f && config->decay_gamma <= 1.0f)))
        return lt_fail(LT_E_USAGE,
                       "decay_gamma: expected a factor in (0, 1], or 0 for RetNet's per-head "
                       "1 - 2^(-5 - h), got %g",
                       (double)config->decay_gamma);
    return LT_OK;
}

static const attn_kernel_info decay_kernels[] = {
    {DECAY_CHUNKED, ATTN_CAUSAL_ONLY, chunked_head_forward, chunked_head_backward, NULL},
    {DECAY_PREFIX, ATTN_CAUSAL_ONLY, prefix_head_forward, prefix_head_backward, NULL},
    {DECAY_REFERENCE, ATTN_CAUSAL_ONLY, reference_head_forward, reference_head_backward, NULL},
};

const lt_attn_variant lt_attn_decay_variant = {
    .name = "decay",
    .kernels = decay_kernels,
    .kernel_count = 3,
    .kernel_names = "decay-causal-chunked|decay-causal-prefix|decay-reference",
    .check_config = decay_check_config,
    .check_shape = linear_check_shape,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = linear_saved_bytes,
    .slice_bytes = linear_slice_bytes,
    .flops = linear_flops,
    .head_flops = linear_head_flops,
    .forward = linear_forward,
    .backward = linear_backward,
    .no_noncausal_reason = DECAY_NOT_NONCAUSAL,
    .state_payload_bytes = linear_state_payload_bytes,
    .state_init = linear_state_init,
    .step = linear_step,
    .step_parallel = linear_step_parallel,
};
