/* Softmax attention: out = softmax(Q K^T / sqrt(D)) V, the paper's baseline.
 *
 * softmax-gemm computes the scores a block of query rows at a time with
 * sgemm, straight into the saved probabilities P (B,H,N,N) when training or
 * into a per-thread block when only the output is wanted. Causal blocks stop
 * at their last row's position, skipping the masked triangle except inside
 * the diagonal block (masked there with -INFINITY).
 *
 * softmax-tiled never holds an N x N buffer: an online softmax over key
 * tiles (FlashAttention's loop) saves only each row's log-sum-exp, and
 * backward recomputes the probabilities a query block at a time. Selectable,
 * not the default: the paper's baseline materialises P.
 *
 * softmax-reference is the same computation in plain loops, kept to test the
 * fast kernels against.
 *
 * The key/value cache that steps softmax during generation is here too.
 * Longer than most files because each attention variant is one file: the
 * three kernels, their flop counts and the cache are what its table at the
 * bottom points to. No part of it passes 250 lines. */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "attn/attn_internal.h"
#include "attn/softmax_step.h"
#include "core/gemm.h"
#include "core/kernels.h"

/* Query rows per score block: enough rows for efficient GEMMs while the
 * inference-only scratch stays BLOCK_ROWS x N per thread. Between the two
 * GEMMs the softmax runs row by row, its max, exp-and-sum and scale passes
 * on one row (16 KiB at N = 4096, in L1). Measured at N = 4096 (one
 * thread, D = M = 64): 64 to 256 rows ran alike, 32 was 15-20% slower (K
 * and V are packed again for every block). */
#define BLOCK_ROWS 128

static const char KERNEL_GEMM[] = "softmax-gemm";
static const char KERNEL_TILED[] = "softmax-tiled";
static const char KERNEL_REFERENCE[] = "softmax-reference";

/* Indexes softmax_kernels below (resolved once by lt_attn_init). */
typedef enum softmax_kernel { GEMM, TILED, REFERENCE } softmax_kernel;

static softmax_kernel kernel_of(const lt_attn *attn) { return (softmax_kernel)attn->kernel; }

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
        lt_sgemm(LT_N, LT_T, rows, cols, D, score_scale(D), h.q + (size_t)r0 * D, D, h.k, D, 0.0f,
                 p, ld);
        attn_softmax_rows(p, ld, rows, cols, r0, causal, inner);
        lt_sgemm(LT_N, LT_N, rows, M, cols, 1.0f, p, ld, h.v, M, 0.0f, h.out + (size_t)r0 * M, M);
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
        lt_sgemm(LT_T, LT_N, cols, M, rows, 1.0f, p, stride, g, M, 1.0f, h.dv, M);
        /* dP = dOut V^T, then dS = P * (dP - rowsum(dP * P)) */
        lt_sgemm(LT_N, LT_T, rows, cols, M, 1.0f, g, M, h.v, M, 0.0f, ds, cols);
        attn_softmax_rows_backward(ds, cols, p, stride, rows, cols, inner);
        /* dQ += dS K / sqrt(D), dK[:cols] += dS^T Q / sqrt(D) */
        lt_sgemm(LT_N, LT_N, rows, D, cols, scale, ds, cols, h.k, D, 1.0f, h.dq + (size_t)r0 * D,
                 D);
        lt_sgemm(LT_T, LT_N, cols, D, rows, scale, ds, cols, h.q + (size_t)r0 * D, D, 1.0f, h.dk,
                 D);
    }
}

/* ---- softmax-tiled: online softmax over key tiles ---- */

/* Forward walks the keys a tile at a time for each block of TILE_ROWS
 * queries, keeping a running row maximum m and sum l and rescaling the
 * output rows when the maximum grows (Milakov and Gimelshein's online
 * softmax; FlashAttention's loop). Only lse = m + log l is saved per row.
 * Backward recomputes a query block's probabilities P = exp(S - lse) and
 * dP = dO V^T tile by tile into two row buffers (TILE_ROWS x N), takes the
 * row term D_i = sum_j P_ij dP_ij from them (the output, which would give
 * it as dO_i . O_i, is not saved), then forms dS = P (dP - D) and the three
 * gradient products: five products a tile. Scratch is two row buffers a
 * thread and D (N floats) a head: O(N), no N x N buffer anywhere.
 *
 * Tiles of 64 queries x 256 keys give GEMMs with sides 64, 256 and D and a
 * 64 KiB score tile in the forward. */
#define TILE_ROWS 64
#define TILE_COLS 256

static int min_int(int a, int b) { return a < b ? a : b; }

/* Columns of a thread's row buffers: all keys, and at least one tile. */
static size_t tile_buffer_cols(int N) { return N > TILE_COLS ? (size_t)N : TILE_COLS; }

typedef struct tile_scratch {
    float *P;     /* (TILE_ROWS, tile_buffer_cols): scores, then probabilities */
    float *dP;    /* (TILE_ROWS, tile_buffer_cols): dL/dP, then dL/dS */
    float *m, *l; /* (TILE_ROWS): running max and sum */
} tile_scratch;

/* Per-thread scratch bytes of the tiled kernel, beside tile_scratch_of. */
static size_t tile_scratch_bytes(int N)
{
    return 2 * attn_round(sizeof(float) * TILE_ROWS * tile_buffer_cols(N)) +
           2 * attn_round(sizeof(float) * TILE_ROWS);
}

/* Scratch `slot` of a head's workspace, after its D (N floats): slot 0
 * when the head has one thread, the thread's number when several share it.
 * N is the padded length, which sizes the workspace. */
static tile_scratch tile_scratch_of(char *ws, int N, int slot)
{
    char *cursor = ws + attn_round(sizeof(float) * (size_t)N) + (size_t)slot * tile_scratch_bytes(N);
    tile_scratch t;
    t.P = attn_take(&cursor, (size_t)TILE_ROWS * tile_buffer_cols(N));
    t.dP = attn_take(&cursor, (size_t)TILE_ROWS * tile_buffer_cols(N));
    t.m = attn_take(&cursor, TILE_ROWS);
    t.l = attn_take(&cursor, TILE_ROWS);
    return t;
}

/* What the tile loops of one head share. */
typedef struct tile_head {
    attn_head h;
    int N, D, M, causal;
    float scale;
    float *lse;   /* (N) saved, or NULL (inference) */
    float *delta; /* (N) D_i, backward */
} tile_head;

/* Keys that query block [i0, i0 + rows) sees: all, or up to its last row. */
static int tile_key_end(const tile_head *t, int i0, int rows)
{
    return t->causal ? i0 + rows : t->N;
}

/* S (rows x cols, row stride ld) = Q_i K_j^T / sqrt(D), entries of keys
 * after their query's position set to -INFINITY when causal. */
static void tile_scores(const tile_head *t, float *S, size_t ld, int i0, int rows, int j0,
                        int cols)
{
    const int D = t->D;
    lt_sgemm_serial(LT_N, LT_T, rows, cols, D, t->scale, t->h.q + (size_t)i0 * D, D,
                    t->h.k + (size_t)j0 * D, D, 0.0f, S, ld);
    if (t->causal && j0 + cols > i0 + 1)
        for (int r = 0; r < rows; r++)
            for (int j = i0 + r + 1 - j0 < 0 ? 0 : i0 + r + 1 - j0; j < cols; j++)
                S[(size_t)r * ld + j] = -INFINITY;
}

/* A tile's probabilities P = exp(S - lse) in place and dP = dO_i V_j^T. */
static void tile_probs(const tile_head *t, float *P, float *dP, size_t ld, int i0, int rows,
                       int j0, int cols)
{
    tile_scores(t, P, ld, i0, rows, j0, cols);
    for (int r = 0; r < rows; r++) {
        float *row = P + (size_t)r * ld, lse = t->lse[i0 + r];
        for (int j = 0; j < cols; j++)
            row[j] = lt_exp_nonpositive(row[j] - lse);
    }
    lt_sgemm_serial(LT_N, LT_T, rows, cols, t->M, 1.0f, t->h.d_out + (size_t)i0 * t->M, t->M,
                    t->h.v + (size_t)j0 * t->M, t->M, 0.0f, dP, ld);
}

/* Gradients through tile (i0, j0) given its P and dP: dP becomes dS = P
 * (dP - D_i); then dQ_i += dS K_j / sqrt(D) with `dq`, dV_j += P^T dO_i and
 * dK_j += dS^T Q_i / sqrt(D) with `dkv`. */
static void tile_grads(const tile_head *t, const float *P, float *dP, size_t ld, int i0, int rows,
                       int j0, int cols, int dq, int dkv)
{
    const int D = t->D, M = t->M;
    for (int r = 0; r < rows; r++) {
        const float *p = P + (size_t)r * ld;
        float *d = dP + (size_t)r * ld, delta = t->delta[i0 + r];
        for (int j = 0; j < cols; j++)
            d[j] = p[j] * (d[j] - delta);
    }
    if (dq)
        lt_sgemm_serial(LT_N, LT_N, rows, D, cols, t->scale, dP, ld, t->h.k + (size_t)j0 * D, D,
                        1.0f, t->h.dq + (size_t)i0 * D, D);
    if (dkv) {
        lt_sgemm_serial(LT_T, LT_N, cols, M, rows, 1.0f, P, ld, t->h.d_out + (size_t)i0 * M, M,
                        1.0f, t->h.dv + (size_t)j0 * M, M);
        lt_sgemm_serial(LT_T, LT_N, cols, D, rows, t->scale, dP, ld, t->h.q + (size_t)i0 * D, D,
                        1.0f, t->h.dk + (size_t)j0 * D, D);
    }
}

static void tiled_block_forward(const tile_head *t, const tile_scratch *w, int i0)
{
    const int M = t->M, rows = min_int(TILE_ROWS, t->N - i0);
    const int end = tile_key_end(t, i0, rows);
    float *out = t->h.out + (size_t)i0 * M, *S = w->P;
    for (int r = 0; r < rows; r++) {
        w->m[r] = -INFINITY;
        w->l[r] = 0.0f;
    }
    memset(out, 0, sizeof(float) * (size_t)rows * M);
    for (int j0 = 0; j0 < end; j0 += TILE_COLS) {
        int cols = min_int(TILE_COLS, end - j0);
        tile_scores(t, S, TILE_COLS, i0, rows, j0, cols);
        for (int r = 0; r < rows; r++) {
            float *row = S + (size_t)r * TILE_COLS;
            float max = w->m[r];
#pragma omp simd reduction(max : max)
            for (int j = 0; j < cols; j++)
                max = row[j] > max ? row[j] : max;
            /* exp(-inf) = 0 on the first tile; max is finite: key 0 is always seen */
            float shrink = lt_exp_nonpositive(w->m[r] - max), sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int j = 0; j < cols; j++) {
                row[j] = lt_exp_nonpositive(row[j] - max);
                sum += row[j];
            }
            w->m[r] = max;
            w->l[r] = w->l[r] * shrink + sum;
            if (shrink != 1.0f)
                for (int m = 0; m < M; m++)
                    out[(size_t)r * M + m] *= shrink;
        }
        lt_sgemm_serial(LT_N, LT_N, rows, M, cols, 1.0f, S, TILE_COLS, t->h.v + (size_t)j0 * M, M,
                        1.0f, out, M);
    }
    for (int r = 0; r < rows; r++) {
        float inv = 1.0f / w->l[r];
        for (int m = 0; m < M; m++)
            out[(size_t)r * M + m] *= inv;
        if (t->lse != NULL)
            t->lse[i0 + r] = w->m[r] + logf(w->l[r]);
    }
}

/* Backward of query block i0 through all its tiles, P and dP kept for the
 * whole block (row stride ld): D_i, then dQ (and dK, dV with `dkv`). */
static void tiled_block_backward(const tile_head *t, const tile_scratch *w, size_t ld, int i0,
                                 int dkv)
{
    const int rows = min_int(TILE_ROWS, t->N - i0), end = tile_key_end(t, i0, rows);
    for (int j0 = 0; j0 < end; j0 += TILE_COLS)
        tile_probs(t, w->P + j0, w->dP + j0, ld, i0, rows, j0, min_int(TILE_COLS, end - j0));
    for (int r = 0; r < rows; r++) {
        const float *p = w->P + (size_t)r * ld, *d = w->dP + (size_t)r * ld;
        float dot = 0.0f;
        for (int j = 0; j < end; j++)
            dot += p[j] * d[j];
        t->delta[i0 + r] = dot;
    }
    for (int j0 = 0; j0 < end; j0 += TILE_COLS)
        tile_grads(t, w->P + j0, w->dP + j0, ld, i0, rows, j0, min_int(TILE_COLS, end - j0), 1,
                   dkv);
}

static tile_head tile_head_of(const attn_call *call, int bh, char *ws)
{
    tile_head t;
    t.h = attn_view_head(call, bh);
    t.N = attn_head_rows(call, bh);
    t.D = call->shape.D;
    t.M = call->shape.M;
    t.causal = call->attn->config.causal;
    t.scale = score_scale(t.D);
    t.lse = call->saved != NULL ? (float *)call->saved + (size_t)bh * call->shape.N : NULL;
    t.delta = (float *)ws;
    return t;
}

static void tiled_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const tile_head t = tile_head_of(call, bh, ws);
#pragma omp parallel for schedule(static) if (inner) num_threads(call->threads)
    for (int i0 = 0; i0 < t.N; i0 += TILE_ROWS) {
        tile_scratch w = tile_scratch_of(ws, call->shape.N, omp_get_thread_num());
        tiled_block_forward(&t, &w, i0);
    }
}

/* One thread per head: one sweep over the query blocks, each tile adding to
 * dQ, dK and dV. Threads sharing a head: query blocks in parallel for D and
 * dQ, then key tiles in parallel for dK and dV, recomputing each tile's P,
 * dP (two more products). Every tile's values are the same either way, dQ_i
 * sums its tiles in key order and dK_j, dV_j in query order, so both plans
 * give the same bits. */
static void tiled_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const tile_head t = tile_head_of(call, bh, ws);
    const size_t ld = tile_buffer_cols(call->shape.N);
    if (!inner) {
        tile_scratch w = tile_scratch_of(ws, call->shape.N, 0);
        for (int i0 = 0; i0 < t.N; i0 += TILE_ROWS)
            tiled_block_backward(&t, &w, ld, i0, 1);
        return;
    }
#pragma omp parallel num_threads(call->threads)
    {
        tile_scratch w = tile_scratch_of(ws, call->shape.N, omp_get_thread_num());
#pragma omp for schedule(static)
        for (int i0 = 0; i0 < t.N; i0 += TILE_ROWS)
            tiled_block_backward(&t, &w, ld, i0, 0);
#pragma omp for schedule(static)
        for (int j0 = 0; j0 < t.N; j0 += TILE_COLS) {
            /* causal: from the first query block whose last row reaches key j0 */
            for (int i0 = t.causal ? j0 / TILE_ROWS * TILE_ROWS : 0; i0 < t.N; i0 += TILE_ROWS) {
                int rows = min_int(TILE_ROWS, t.N - i0);
                int cols = min_int(TILE_COLS, tile_key_end(&t, i0, rows) - j0);
                tile_probs(&t, w.P, w.dP, TILE_COLS, i0, rows, j0, cols);
                tile_grads(&t, w.P, w.dP, TILE_COLS, i0, rows, j0, cols, 0, 1);
            }
        }
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

/* Probabilities P (B,H,N,N), or for softmax-tiled the row log-sum-exp
 * (B,H,N). */
static size_t softmax_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t rows = (size_t)shape.B * shape.H * shape.N;
    return rows * (kernel_of(attn) == TILED ? 1 : (size_t)shape.N) * sizeof(float);
}

/* Causal softmax-gemm computes and keeps only the blocks of P left of the
 * diagonal: rows x (r0 + rows) for each block of rows from r0. */
static size_t softmax_saved_touched_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    if (kernel_of(attn) != GEMM || !attn->config.causal)
        return softmax_saved_bytes(attn, shape);
    size_t per_head = 0;
    for (int r0 = 0; r0 < shape.N; r0 += BLOCK_ROWS) {
        size_t rows = (size_t)(shape.N - r0 < BLOCK_ROWS ? shape.N - r0 : BLOCK_ROWS);
        per_head += rows * ((size_t)r0 + rows);
    }
    return (size_t)shape.B * shape.H * per_head * sizeof(float);
}

static size_t softmax_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    switch (kernel_of(attn)) {
    case GEMM: return (size_t)block_rows(shape.N) * shape.N * sizeof(float);
    case TILED: return attn_round(sizeof(float) * (size_t)shape.N) + tile_scratch_bytes(shape.N);
    case REFERENCE: break;
    }
    return (size_t)shape.N * sizeof(float);
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

/* Score entries (rows x keys) a kernel computes for one head of n rows,
 * blocks or tiles as its loops walk them, diagonal blocks whole. */
static double score_area(softmax_kernel kernel, int n, int causal)
{
    double area = 0.0;
    if (kernel == REFERENCE)
        return causal ? 0.5 * n * (n + 1.0) : (double)n * n;
    int block = kernel == GEMM ? BLOCK_ROWS : TILE_ROWS;
    for (int r0 = 0; r0 < n; r0 += block) {
        int rows = min_int(block, n - r0);
        area += (double)rows * (causal ? r0 + rows : n);
    }
    return area;
}

/* Products as each kernel issues them: softmax-gemm runs the model's two
 * (forward) and four (backward) products over its blocks; softmax-tiled's
 * backward runs five a tile (Q K^T, dO V^T, dS K, P^T dO, dS^T Q), plus
 * Q K^T and dO V^T again when threads share a head (dQ, then dK and dV, in
 * two sweeps); the reference's backward runs every row over all n keys. */
static double softmax_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                                 int inner)
{
    const double D = shape.D, M = shape.M;
    const softmax_kernel kernel = kernel_of(attn);
    const double area = score_area(kernel, n, attn->config.causal);
    if (!backward)
        return 2.0 * area * (D + M);
    switch (kernel) {
    case GEMM: return 4.0 * area * (D + M);
    case TILED: return 2.0 * area * (3.0 * D + 2.0 * M + (inner ? D + M : 0.0));
    case REFERENCE: break;
    }
    return 4.0 * (double)n * n * (D + M);
}

/* ---- recurrent form: a key/value cache ---- */

/* The step's products and online softmax are attn/softmax_step.c's, one
 * copy per kernel set (attn/softmax_step.h); here: the cache's layout and
 * the heads. */
#define KEY_BLOCK LT_SOFTMAX_KEY_BLOCK
LT_KERNEL_TABLE(lt_softmax_step_kernels, lt_softmax_step_kernels, step_kernels)

/* Below this many multiply-adds a step stays on one thread: a parallel
 * region costs more than it saves. */
#define STEP_PARALLEL_MIN 32768

static size_t cache_rows(int max_steps)
{
    return ((size_t)max_steps + KEY_BLOCK - 1) / KEY_BLOCK * KEY_BLOCK;
}

/* Payload: keys (B,H, cache_rows / KEY_BLOCK, D, KEY_BLOCK), then values
 * (B,H, max_steps, M). */
static size_t softmax_state_payload_bytes(const lt_attn *attn, int B, int H, int D, int M,
                                          int max_steps)
{
    (void)attn;
    return (size_t)B * H * (cache_rows(max_steps) * D + (size_t)max_steps * M) * sizeof(float);
}

/* Appends (k, v) to each head's cache and attends over all cached rows
 * (step_head). */
static void softmax_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                         int max_steps, int steps, int bh0, int bh1, float *out, const float *q,
                         const float *k, const float *v, const lt_attn_gates *gates)
{
    (void)attn, (void)gates;
    const int heads = B * H;
    const float scale = score_scale(D);
    const size_t key_floats = cache_rows(max_steps) * D;
    float *keys = (float *)payload;
    float *values = keys + (size_t)heads * key_floats;
    for (int bh = bh0; bh < bh1; bh++) {
        float *kt = keys + (size_t)bh * key_floats;
        float *vc = values + (size_t)bh * max_steps * M;
        /* the new key is column steps % KEY_BLOCK of its transposed block */
        float *block = kt + (size_t)(steps / KEY_BLOCK * KEY_BLOCK) * D;
        for (int d = 0; d < D; d++)
            block[(size_t)d * KEY_BLOCK + steps % KEY_BLOCK] = k[(size_t)bh * D + d];
        memcpy(vc + (size_t)steps * M, v + (size_t)bh * M, (size_t)M * sizeof(float));
        step_kernels()->step_head(out + (size_t)bh * M, q + (size_t)bh * D, kt, vc, steps + 1, D, M,
                                  scale);
    }
}

/* Heads spread over threads once the cached rows are enough work. */
static int softmax_step_parallel(const lt_attn *attn, int heads, int D, int M, int steps)
{
    (void)attn;
    return (double)heads * (steps + 1) * (D + M) >= STEP_PARALLEL_MIN;
}

static const attn_kernel_info softmax_kernels[] = {
    [GEMM] = {KERNEL_GEMM, ATTN_EITHER, gemm_head_forward, gemm_head_backward, KERNEL_TILED},
    [TILED] = {KERNEL_TILED, ATTN_EITHER, tiled_head_forward, tiled_head_backward},
    [REFERENCE] = {KERNEL_REFERENCE, ATTN_EITHER, reference_head_forward, reference_head_backward},
};

const lt_attn_variant lt_attn_softmax_variant = {
    .name = "softmax",
    .kernels = softmax_kernels,
    .kernel_count = 3,
    .kernel_names = "softmax-gemm|softmax-tiled|softmax-reference",
    .check_config = softmax_check_config,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = softmax_saved_bytes,
    .saved_touched_bytes = softmax_saved_touched_bytes,
    .slice_bytes = softmax_slice_bytes,
    .flops = softmax_flops,
    .head_flops = softmax_head_flops,
    .forward = attn_kernel_forward,
    .backward = attn_kernel_backward,
    .state_payload_bytes = softmax_state_payload_bytes,
    .step = softmax_step,
    .step_parallel = softmax_step_parallel,
    .step_grows = 1,
};
