/* Linear attention (Katharopoulos et al. 2020): with a positive feature map
 * phi, out_i = phi(Q_i)^T S / (phi(Q_i) . z + eps) where S = sum_j phi(K_j)
 * V_j^T (D x M) and z = sum_j phi(K_j); causal attention sums only j <= i.
 *
 * Kernels:
 *   linear-gemm            non-causal: S and z for the whole sequence, two
 *                          GEMMs per head.
 *   linear-causal-prefix   causal: the running (S_i, z_i), one token at a
 *                          time (the RNN form). Backward follows the paper's
 *                          sec. 3.3.1: a forward sweep rebuilds the prefix
 *                          state for dQ, a reverse sweep accumulates the
 *                          suffix sums for dK and dV, so no per-position
 *                          state is stored: O(N D M) time, O(N + D M) memory.
 *   linear-causal-chunked  causal, blocked: within a chunk of CHUNK tokens
 *                          the masked quadratic form, across chunks the
 *                          carried state, everything as GEMMs. Same sums as
 *                          the prefix kernel in another order.
 *   linear-reference       the O(N^2) form in plain loops: A_ij = phi(Q_i) .
 *                          phi(K_j), masked to j <= i when causal, out_i =
 *                          sum_j A_ij V_j / (sum_j A_ij + eps).
 *
 * Gradients include the normaliser: with num_i = phi(Q_i)^T S_i and den_i,
 * d num_i = g_i / den_i and d den_i = -g_i . out_i / den_i, and pass through
 * phi'(x) to q and k. */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "attn/attn_internal.h"

/* Tokens per chunk of linear-causal-chunked: the intra-chunk quadratic part
 * costs 2 CHUNK (D + M) flops per token on top of the state part's 4 D M,
 * while larger chunks make larger GEMMs. On a 2-core EPYC (B=1, H=8,
 * N=16384) 32 beat 64 and 128 by 10-30% for D=M=64 and tied 16. */
#define CHUNK 32

static const char KERNEL_GEMM[] = "linear-gemm";
static const char KERNEL_CHUNKED[] = "linear-causal-chunked";
static const char KERNEL_PREFIX[] = "linear-causal-prefix";
static const char KERNEL_REFERENCE[] = "linear-reference";

/* Indexes linear_kernels below: lt_attn_init resolved the name once. */
typedef enum linear_kernel { GEMM, CHUNKED, PREFIX, REFERENCE } linear_kernel;

static linear_kernel kernel_of(const lt_attn *attn) { return (linear_kernel)attn->kernel; }

/* ---- feature maps ---- */

/* The feature maps and their slopes, branch-free (choices on bit patterns,
 * see attn_exp_nonpositive) so that loops over them vectorise. */

/* all ones when x > 0, else 0 */
static inline int32_t positive_mask(float x)
{
    attn_float_bits b = {.value = x};
    return -(b.bits > 0);
}

/* mask ? a : b, with mask all ones or all zeros */
static inline float select_float(int32_t mask, float a, float b)
{
    attn_float_bits fa = {.value = a}, fb = {.value = b}, out;
    out.bits = (fa.bits & mask) | (fb.bits & ~mask);
    return out.value;
}

/* elu(x) + 1 = x + 1 for x > 0, e^x otherwise; its slope 1 or e^x */
static inline float exp_of_nonpositive_part(float x)
{
    return attn_exp_nonpositive(select_float(positive_mask(x), 0.0f, x));
}

static inline float elu_plus_one(float x)
{
    return select_float(positive_mask(x), x + 1.0f, exp_of_nonpositive_part(x));
}
static inline float elu_slope(float x)
{
    return select_float(positive_mask(x), 1.0f, exp_of_nonpositive_part(x));
}
static inline float relu(float x) { return select_float(positive_mask(x), x, 0.0f); }
static inline float relu_slope(float x) { return select_float(positive_mask(x), 1.0f, 0.0f); }

static inline float phi_of(lt_feature_map map, float x)
{
    switch (map) {
    case LT_FEATURE_ELU: return elu_plus_one(x);
    case LT_FEATURE_RELU: return relu(x);
    case LT_FEATURE_IDENTITY: return x;
    }
    return x;
}

static inline float phi_slope(lt_feature_map map, float x)
{
    switch (map) {
    case LT_FEATURE_ELU: return elu_slope(x);
    case LT_FEATURE_RELU: return relu_slope(x);
    case LT_FEATURE_IDENTITY: return 1.0f;
    }
    return 1.0f;
}

/* out[i] = phi(x[i]) for n elements; one plain loop per map, so each
 * vectorises. */
static void phi_apply(lt_feature_map map, float *restrict out, const float *restrict x, size_t n)
{
    switch (map) {
    case LT_FEATURE_ELU:
        for (size_t i = 0; i < n; i++)
            out[i] = elu_plus_one(x[i]);
        break;
    case LT_FEATURE_RELU:
        for (size_t i = 0; i < n; i++)
            out[i] = relu(x[i]);
        break;
    case LT_FEATURE_IDENTITY: memcpy(out, x, n * sizeof(float)); break;
    }
}

/* Elements a thread takes at a time when a head's feature maps are threaded. */
#define PHI_BLOCK 4096

/* phi_apply spread over the threads when `inner` (see attn_head_fn). */
static void phi_apply_threaded(lt_feature_map map, float *out, const float *x, size_t n, int inner)
{
#pragma omp parallel for schedule(static) if (inner)
    for (size_t start = 0; start < n; start += PHI_BLOCK)
        phi_apply(map, out + start, x + start, n - start < PHI_BLOCK ? n - start : PHI_BLOCK);
}

/* dx[i] += dphi[i] * phi'(x[i]): the gradient through the feature map. */
static void phi_backprop(lt_feature_map map, float *restrict dx, const float *restrict dphi,
                         const float *restrict x, size_t n)
{
    switch (map) {
    case LT_FEATURE_ELU:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i] * elu_slope(x[i]);
        break;
    case LT_FEATURE_RELU:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i] * relu_slope(x[i]);
        break;
    case LT_FEATURE_IDENTITY:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i];
        break;
    }
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

/* ---- saved layout ---- */

/* Saved for backward: every kernel but the reference keeps the normalisers
 * den (B,H,N); linear-gemm also keeps the whole-sequence S (B,H,D,M) and z
 * (B,H,D), laid out [den | S | z]. */
typedef struct saved_view {
    float *den, *S, *z; /* one head's; S and z NULL for causal kernels */
} saved_view;

static saved_view view_saved(const attn_call *call, int bh)
{
    saved_view s = {NULL, NULL, NULL};
    if (call->saved == NULL)
        return s;
    size_t BH = (size_t)call->shape.B * call->shape.H;
    size_t N = call->shape.N, D = call->shape.D, M = call->shape.M;
    float *base = call->saved;
    s.den = base + bh * N;
    if (kernel_of(call->attn) == GEMM) {
        s.S = base + BH * N + bh * D * M;
        s.z = base + BH * N + BH * D * M + bh * D;
    }
    return s;
}

/* ---- linear-gemm (non-causal) ---- */

static void gemm_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    const float eps = call->attn->config.eps;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *features = attn_take(&cursor, (size_t)N * D); /* phi(K), then phi(Q) */
    float *S = s.S != NULL ? s.S : attn_take(&cursor, (size_t)D * M);
    float *z = s.z != NULL ? s.z : attn_take(&cursor, (size_t)D);
    float *den = s.den != NULL ? s.den : attn_take(&cursor, (size_t)N);

    phi_apply_threaded(map, features, h.k, (size_t)N * D, inner);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, M, N, 1.0f, features, D, h.v, M, 0.0f,
                S, M);
    memset(z, 0, (size_t)D * sizeof(float));
    add_column_sums(z, NULL, features, N, D);

    phi_apply_threaded(map, features, h.q, (size_t)N * D, inner);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, M, D, 1.0f, features, D, S, M, 0.0f,
                h.out, M);
#pragma omp parallel for schedule(static) if (inner)
    for (int i = 0; i < N; i++) {
        den[i] = eps + dot(features + (size_t)i * D, z, D);
        for (int m = 0; m < M; m++)
            h.out[(size_t)i * M + m] /= den[i];
    }
}

static void gemm_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *pq = attn_take(&cursor, (size_t)N * D);
    float *pk = attn_take(&cursor, (size_t)N * D);
    float *t = attn_take(&cursor, (size_t)N * D); /* S g_i, later d phi(K) */
    float *dnum = attn_take(&cursor, (size_t)N * M);
    float *dden = attn_take(&cursor, (size_t)N);
    float *dS = attn_take(&cursor, (size_t)D * M);
    float *dz = attn_take(&cursor, (size_t)D);

    phi_apply_threaded(map, pq, h.q, (size_t)N * D, inner);
    phi_apply_threaded(map, pk, h.k, (size_t)N * D, inner);
    /* t_i = S g_i, so g_i . num_i = phi(Q_i) . t_i without rebuilding out */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, D, M, 1.0f, h.d_out, M, s.S, M, 0.0f,
                t, D);
#pragma omp parallel for schedule(static) if (inner)
    for (int i = 0; i < N; i++) {
        float den = s.den[i];
        float *ti = t + (size_t)i * D;
        dden[i] = -dot(pq + (size_t)i * D, ti, D) / (den * den);
        for (int d = 0; d < D; d++)
            ti[d] = ti[d] / den + dden[i] * s.z[d]; /* d phi(Q_i) */
        phi_backprop(map, h.dq + (size_t)i * D, ti, h.q + (size_t)i * D, D);
        for (int m = 0; m < M; m++)
            dnum[(size_t)i * M + m] = h.d_out[(size_t)i * M + m] / den;
    }
    memset(dz, 0, (size_t)D * sizeof(float));
    add_column_sums(dz, dden, pq, N, D);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, M, N, 1.0f, pq, D, dnum, M, 0.0f, dS,
                M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, M, D, 1.0f, pk, D, dS, M, 1.0f, h.dv,
                M);
    /* d phi(K_j) = dS V_j + dz */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, D, M, 1.0f, h.v, M, dS, M, 0.0f, t, D);
#pragma omp parallel for schedule(static) if (inner)
    for (int j = 0; j < N; j++) {
        float *tj = t + (size_t)j * D;
        for (int d = 0; d < D; d++)
            tj[d] += dz[d];
        phi_backprop(map, h.dk + (size_t)j * D, tj, h.k + (size_t)j * D, D);
    }
}

/* ---- linear-causal-prefix ---- */

/* One causal step: folds key features pk (D) and value v (M) into the state
 * S (D x M), z (D), then reads it out for query features pq into out (M).
 * Returns the normaliser. Shared by the prefix kernel and lt_attn_step, so
 * the two agree to the bit. */
static float causal_token(float *restrict out, float *restrict S, float *restrict z,
                          const float *restrict pq, const float *restrict pk,
                          const float *restrict v, int D, int M, float eps)
{
    for (int m = 0; m < M; m++)
        out[m] = 0.0f;
    for (int d = 0; d < D; d++) {
        float *restrict row = S + (size_t)d * M;
        z[d] += pk[d];
        for (int m = 0; m < M; m++) {
            row[m] += pk[d] * v[m];
            out[m] += pq[d] * row[m];
        }
    }
    float den = eps + dot(pq, z, D);
    for (int m = 0; m < M; m++)
        out[m] /= den;
    return den;
}

/* pq, pk (D) = phi(Q_i), phi(K_i) of one head */
static void token_features(float *pq, float *pk, const attn_head *h, lt_feature_map map, int i,
                           int D)
{
    phi_apply(map, pq, h->q + (size_t)i * D, D);
    phi_apply(map, pk, h->k + (size_t)i * D, D);
}

static void prefix_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *S = attn_take(&cursor, (size_t)D * M);
    float *z = attn_take(&cursor, (size_t)D);
    float *pq = attn_take(&cursor, (size_t)D);
    float *pk = attn_take(&cursor, (size_t)D);
    float *den = s.den != NULL ? s.den : attn_take(&cursor, (size_t)N);
    (void)inner; /* one token after another: nothing to spread */

    memset(S, 0, (size_t)D * M * sizeof(float));
    memset(z, 0, (size_t)D * sizeof(float));
    for (int i = 0; i < N; i++) {
        token_features(pq, pk, &h, map, i, D);
        den[i] = causal_token(h.out + (size_t)i * M, S, z, pq, pk, h.v + (size_t)i * M, D, M,
                              call->attn->config.eps);
    }
}

static void prefix_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    float *S = attn_take(&cursor, (size_t)D * M); /* prefix S_i, then suffix U_i */
    float *z = attn_take(&cursor, (size_t)D);     /* prefix z_i, then suffix u_i */
    float *pq = attn_take(&cursor, (size_t)D);
    float *pk = attn_take(&cursor, (size_t)D);
    float *t = attn_take(&cursor, (size_t)D); /* S_i g_i, then d phi(Q_i) or d phi(K_i) */
    float *dnum = attn_take(&cursor, (size_t)M);
    float *dden = attn_take(&cursor, (size_t)N);
    (void)inner;

    /* Forward sweep: rebuild (S_i, z_i) to get dQ_i and every d den_i. */
    memset(S, 0, (size_t)D * M * sizeof(float));
    memset(z, 0, (size_t)D * sizeof(float));
    for (int i = 0; i < N; i++) {
        const float *g = h.d_out + (size_t)i * M, *vi = h.v + (size_t)i * M;
        token_features(pq, pk, &h, map, i, D);
        for (int d = 0; d < D; d++) {
            float *restrict row = S + (size_t)d * M;
            float sg = 0.0f;
            z[d] += pk[d];
#pragma omp simd reduction(+ : sg)
            for (int m = 0; m < M; m++) {
                row[m] += pk[d] * vi[m];
                sg += row[m] * g[m];
            }
            t[d] = sg;
        }
        float den = s.den[i];
        dden[i] = -dot(pq, t, D) / (den * den);
        for (int d = 0; d < D; d++)
            t[d] = t[d] / den + dden[i] * z[d];
        phi_backprop(map, h.dq + (size_t)i * D, t, h.q + (size_t)i * D, D);
    }

    /* Reverse sweep: U_i = sum_{i' >= i} phi(Q_i') dnum_i'^T and u_i = sum
     * dden_i' phi(Q_i') are what S_i and z_i feed, so d phi(K_i) = U_i V_i +
     * u_i and dV_i = U_i^T phi(K_i). */
    memset(S, 0, (size_t)D * M * sizeof(float));
    memset(z, 0, (size_t)D * sizeof(float));
    for (int i = N - 1; i >= 0; i--) {
        const float *g = h.d_out + (size_t)i * M, *vi = h.v + (size_t)i * M;
        float *restrict dvi = h.dv + (size_t)i * M;
        float den = s.den[i];
        token_features(pq, pk, &h, map, i, D);
        for (int m = 0; m < M; m++)
            dnum[m] = g[m] / den;
        for (int d = 0; d < D; d++) {
            float *restrict row = S + (size_t)d * M;
            float uv = 0.0f;
            z[d] += dden[i] * pq[d];
#pragma omp simd reduction(+ : uv)
            for (int m = 0; m < M; m++) {
                row[m] += pq[d] * dnum[m];
                uv += row[m] * vi[m];
                dvi[m] += pk[d] * row[m];
            }
            t[d] = uv + z[d];
        }
        phi_backprop(map, h.dk + (size_t)i * D, t, h.k + (size_t)i * D, D);
    }
}

/* ---- linear-causal-chunked ---- */

/* A (rows x rows, stride CHUNK) = phi(Q_c) phi(K_c)^T with the entries of
 * later keys (j > i) zeroed: the causal quadratic form inside one chunk. */
static void chunk_scores(float *A, const float *pq, const float *pk, int rows, int D)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, rows, D, 1.0f, pq, D, pk, D, 0.0f, A,
                CHUNK);
    for (int r = 0; r < rows; r++)
        for (int j = r + 1; j < rows; j++)
            A[(size_t)r * CHUNK + j] = 0.0f;
}

/* num (rows x M) = phi(Q_c) S + A V_c: the carried state plus the chunk. */
static void chunk_numerator(float *num, float *A, const float *pq, const float *pk,
                            const float *v, const float *S, int rows, int D, int M)
{
    chunk_scores(A, pq, pk, rows, D);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, M, D, 1.0f, pq, D, S, M, 0.0f, num,
                M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, M, rows, 1.0f, A, CHUNK, v, M, 1.0f,
                num, M);
}

/* dA (rows x rows, stride CHUNK) = dnum V_c^T + dden 1^T on j <= i, 0 above:
 * the gradient of the chunk's masked scores (each A_ij feeds num_i and
 * den_i). */
static void chunk_score_grad(float *dA, const float *dnum, const float *v, const float *dden,
                             int rows, int M)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, rows, M, 1.0f, dnum, M, v, M, 0.0f,
                dA, CHUNK);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < rows; j++)
            dA[(size_t)r * CHUNK + j] = j <= r ? dA[(size_t)r * CHUNK + j] + dden[r] : 0.0f;
}

/* S += phi(K_c)^T V_c, z += column sums of phi(K_c). */
static void chunk_fold(float *S, float *z, const float *pk, const float *v, int rows, int D, int M)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, M, rows, 1.0f, pk, D, v, M, 1.0f, S, M);
    add_column_sums(z, NULL, pk, rows, D);
}

typedef struct chunk_buffers {
    float *pq, *pk, *dphi; /* (CHUNK, D) */
    float *A, *dA;         /* (CHUNK, CHUNK) */
    float *num;            /* (CHUNK, M): num, then dnum */
    float *S, *z;          /* (D, M), (D): carried prefix, or suffix in the reverse sweep */
} chunk_buffers;

static chunk_buffers take_chunk_buffers(char **cursor, int D, int M)
{
    chunk_buffers b;
    b.pq = attn_take(cursor, (size_t)CHUNK * D);
    b.pk = attn_take(cursor, (size_t)CHUNK * D);
    b.dphi = attn_take(cursor, (size_t)CHUNK * D);
    b.A = attn_take(cursor, (size_t)CHUNK * CHUNK);
    b.dA = attn_take(cursor, (size_t)CHUNK * CHUNK);
    b.num = attn_take(cursor, (size_t)CHUNK * M);
    b.S = attn_take(cursor, (size_t)D * M);
    b.z = attn_take(cursor, (size_t)D);
    memset(b.S, 0, (size_t)D * M * sizeof(float));
    memset(b.z, 0, (size_t)D * sizeof(float));
    return b;
}

static void chunk_features(chunk_buffers *b, const attn_head *h, lt_feature_map map, int c0,
                           int rows, int D)
{
    phi_apply(map, b->pq, h->q + (size_t)c0 * D, (size_t)rows * D);
    phi_apply(map, b->pk, h->k + (size_t)c0 * D, (size_t)rows * D);
}

static void chunked_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const float eps = call->attn->config.eps;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    chunk_buffers b = take_chunk_buffers(&cursor, D, M);
    float *den = s.den != NULL ? s.den : attn_take(&cursor, (size_t)N);
    (void)inner; /* chunks run in order; their GEMMs are too small to split */

    for (int c0 = 0; c0 < N; c0 += CHUNK) {
        int rows = N - c0 < CHUNK ? N - c0 : CHUNK;
        const float *vc = h.v + (size_t)c0 * M;
        float *out = h.out + (size_t)c0 * M;
        chunk_features(&b, &h, call->attn->config.feature_map, c0, rows, D);
        chunk_numerator(out, b.A, b.pq, b.pk, vc, b.S, rows, D, M);
        for (int r = 0; r < rows; r++) {
            float within = 0.0f;
            for (int j = 0; j <= r; j++)
                within += b.A[(size_t)r * CHUNK + j];
            den[c0 + r] = eps + dot(b.pq + (size_t)r * D, b.z, D) + within;
            for (int m = 0; m < M; m++)
                out[(size_t)r * M + m] /= den[c0 + r];
        }
        chunk_fold(b.S, b.z, b.pk, vc, rows, D, M);
    }
}

static void chunked_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    attn_head h = attn_view_head(call, bh);
    saved_view s = view_saved(call, bh);
    char *cursor = ws;
    chunk_buffers b = take_chunk_buffers(&cursor, D, M);
    float *dden = attn_take(&cursor, (size_t)N);
    (void)inner;

    /* Forward sweep over chunks: the carried prefix (S, z) gives dQ and
     * d den for every position. */
    for (int c0 = 0; c0 < N; c0 += CHUNK) {
        int rows = N - c0 < CHUNK ? N - c0 : CHUNK;
        const float *vc = h.v + (size_t)c0 * M;
        chunk_features(&b, &h, map, c0, rows, D);
        chunk_numerator(b.num, b.A, b.pq, b.pk, vc, b.S, rows, D, M);
        for (int r = 0; r < rows; r++) {
            const float *g = h.d_out + (size_t)(c0 + r) * M;
            float *num = b.num + (size_t)r * M, den = s.den[c0 + r];
            dden[c0 + r] = -dot(g, num, M) / (den * den);
            for (int m = 0; m < M; m++)
                num[m] = g[m] / den; /* now d num */
        }
        chunk_score_grad(b.dA, b.num, vc, dden + c0, rows, M);
        /* d phi(Q_c) = dnum S^T + dA phi(K_c) + dden z^T */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, D, M, 1.0f, b.num, M, b.S, M,
                    0.0f, b.dphi, D);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, rows, 1.0f, b.dA, CHUNK,
                    b.pk, D, 1.0f, b.dphi, D);
        for (int r = 0; r < rows; r++)
            for (int d = 0; d < D; d++)
                b.dphi[(size_t)r * D + d] += dden[c0 + r] * b.z[d];
        phi_backprop(map, h.dq + (size_t)c0 * D, b.dphi, h.q + (size_t)c0 * D, (size_t)rows * D);
        chunk_fold(b.S, b.z, b.pk, vc, rows, D, M);
    }

    /* Reverse sweep: (S, z) now carry the suffix sums (U, u) of the chunks
     * after the current one. */
    memset(b.S, 0, (size_t)D * M * sizeof(float));
    memset(b.z, 0, (size_t)D * sizeof(float));
    for (int c0 = (N - 1) / CHUNK * CHUNK; c0 >= 0; c0 -= CHUNK) {
        int rows = N - c0 < CHUNK ? N - c0 : CHUNK;
        const float *vc = h.v + (size_t)c0 * M;
        float *dvc = h.dv + (size_t)c0 * M;
        chunk_features(&b, &h, map, c0, rows, D);
        chunk_scores(b.A, b.pq, b.pk, rows, D);
        for (int r = 0; r < rows; r++)
            for (int m = 0; m < M; m++)
                b.num[(size_t)r * M + m] = h.d_out[(size_t)(c0 + r) * M + m] / s.den[c0 + r];
        chunk_score_grad(b.dA, b.num, vc, dden + c0, rows, M);
        /* d phi(K_c) = V_c U^T + dA^T phi(Q_c) + 1 u^T */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, D, M, 1.0f, vc, M, b.S, M, 0.0f,
                    b.dphi, D);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, rows, D, rows, 1.0f, b.dA, CHUNK, b.pq,
                    D, 1.0f, b.dphi, D);
        for (int r = 0; r < rows; r++)
            for (int d = 0; d < D; d++)
                b.dphi[(size_t)r * D + d] += b.z[d];
        phi_backprop(map, h.dk + (size_t)c0 * D, b.dphi, h.k + (size_t)c0 * D, (size_t)rows * D);
        /* dV_c += phi(K_c) U + A^T dnum */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, M, D, 1.0f, b.pk, D, b.S, M,
                    1.0f, dvc, M);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, rows, M, rows, 1.0f, b.A, CHUNK, b.num,
                    M, 1.0f, dvc, M);
        /* U += phi(Q_c)^T dnum, u += phi(Q_c)^T dden */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, M, rows, 1.0f, b.pq, D, b.num, M,
                    1.0f, b.S, M);
        add_column_sums(b.z, dden + c0, b.pq, rows, D);
    }
}

/* ---- linear-reference: the quadratic form in plain loops ---- */

/* phi(Q_i) . phi(K_j) */
static float reference_score(lt_feature_map map, const float *qi, const float *kj, int D)
{
    float a = 0.0f;
    for (int d = 0; d < D; d++)
        a += phi_of(map, qi[d]) * phi_of(map, kj[d]);
    return a;
}

/* num (M) = sum_j A_ij V_j over the keys row i of a length-N sequence
 * sees; returns den_i. */
static float reference_row(float *num, const attn_call *call, const attn_head *h, int i, int N)
{
    const int D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    int cols = call->attn->config.causal ? i + 1 : N;
    float den = 0.0f;
    for (int m = 0; m < M; m++)
        num[m] = 0.0f;
    for (int j = 0; j < cols; j++) {
        float a = reference_score(map, h->q + (size_t)i * D, h->k + (size_t)j * D, D);
        den += a;
        for (int m = 0; m < M; m++)
            num[m] += a * h->v[(size_t)j * M + m];
    }
    return den + call->attn->config.eps;
}

static void reference_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)ws, (void)inner;
    const int N = attn_head_rows(call, bh), M = call->shape.M;
    attn_head h = attn_view_head(call, bh);
    for (int i = 0; i < N; i++) {
        float *out = h.out + (size_t)i * M;
        float den = reference_row(out, call, &h, i, N);
        for (int m = 0; m < M; m++)
            out[m] /= den;
    }
}

static void reference_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    (void)inner;
    const int N = attn_head_rows(call, bh), D = call->shape.D, M = call->shape.M;
    const lt_feature_map map = call->attn->config.feature_map;
    attn_head h = attn_view_head(call, bh);
    float *num = (float *)ws;
    for (int i = 0; i < N; i++) {
        const float *g = h.d_out + (size_t)i * M, *qi = h.q + (size_t)i * D;
        float den = reference_row(num, call, &h, i, N);
        float g_out = 0.0f;
        for (int m = 0; m < M; m++)
            g_out += g[m] * num[m] / den;
        float dden = -g_out / den;
        int cols = call->attn->config.causal ? i + 1 : N;
        for (int j = 0; j < cols; j++) {
            const float *kj = h.k + (size_t)j * D, *vj = h.v + (size_t)j * M;
            float a = reference_score(map, qi, kj, D);
            float da = dden;
            for (int m = 0; m < M; m++) {
                da += g[m] / den * vj[m];
                h.dv[(size_t)j * M + m] += a * g[m] / den;
            }
            for (int d = 0; d < D; d++) {
                h.dq[(size_t)i * D + d] += da * phi_of(map, kj[d]) * phi_slope(map, qi[d]);
                h.dk[(size_t)j * D + d] += da * phi_of(map, qi[d]) * phi_slope(map, kj[d]);
            }
        }
    }
}

/* ---- variant interface ---- */

static lt_status linear_check_config(const lt_attn_config *config)
{
    if (!(config->eps >= 0.0f) || !isfinite(config->eps))
        return lt_fail(LT_E_USAGE,
                       "eps: expected a finite value >= 0 for linear attention (1e-6 is usual), "
                       "got %g",
                       (double)config->eps);
    if ((int)config->feature_map < LT_FEATURE_ELU || (int)config->feature_map > LT_FEATURE_IDENTITY)
        return lt_fail(LT_E_USAGE, "feature_map: unknown feature map %d (elu, relu, identity)",
                       (int)config->feature_map);
    /* relu features are all 0 for a query with no positive entry: its
     * normaliser is then eps alone, and 0/0 without it. */
    if (config->feature_map == LT_FEATURE_RELU && config->eps == 0.0f)
        return lt_fail(LT_E_USAGE,
                       "eps: must be > 0 with the relu feature map (a query with no positive "
                       "entry has normaliser eps; 0 would divide 0 by 0); 1e-6 is usual");
    return LT_OK;
}

static size_t linear_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t BH = (size_t)shape.B * shape.H;
    switch (kernel_of(attn)) {
    case GEMM: return BH * ((size_t)shape.N + (size_t)shape.D * shape.M + shape.D) * sizeof(float);
    case CHUNKED:
    case PREFIX: return BH * shape.N * sizeof(float);
    case REFERENCE: return 0;
    }
    return 0;
}

/* Sum of attn_take sizes, so slices match what the kernels carve. */
static size_t floats(size_t count) { return attn_round(count * sizeof(float)); }

static size_t linear_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t N = shape.N, D = shape.D, M = shape.M;
    size_t forward, backward;
    switch (kernel_of(attn)) {
    case GEMM:
        forward = floats(N * D) + floats(D * M) + floats(D) + floats(N);
        backward = 3 * floats(N * D) + floats(N * M) + floats(N) + floats(D * M) + floats(D);
        break;
    case PREFIX:
        forward = floats(D * M) + 3 * floats(D) + floats(N);
        backward = floats(D * M) + 4 * floats(D) + floats(M) + floats(N);
        break;
    case CHUNKED:
        forward = 3 * floats(CHUNK * D) + 2 * floats(CHUNK * CHUNK) + floats(CHUNK * M) +
                  floats(D * M) + floats(D) + floats(N);
        backward = forward;
        break;
    case REFERENCE:
    default: forward = backward = floats(M); break;
    }
    return forward > backward ? forward : backward;
}

/* Model (per head, multiply-add = 2): the two D x M products a forward
 * needs, S = phi(K)^T V and phi(Q)^T S, are 2 N D M each; z and the
 * normaliser dots add 3 N D: 4 N D M + 3 N D, causal or not (prefix sums do
 * the same multiply-adds in another order). Feature maps and divisions are
 * not counted, nor the chunked kernel's extra intra-chunk products: the
 * model counts the method, not a kernel. Backward is modelled as twice the
 * forward (four products of the same sizes: dS, dV, d phi(Q), d phi(K)). */
static double linear_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    (void)attn;
    double n = shape.N, d = shape.D, m = shape.M;
    double forward = (4.0 * n * d * m + 3.0 * n * d) * shape.B * shape.H;
    return backward ? 2.0 * forward : forward;
}

/* Per-head functions of each kernel, indexed by linear_kernel. */
static const struct {
    attn_head_fn forward, backward;
} kernel_fns[] = {
    [GEMM] = {gemm_head_forward, gemm_head_backward},
    [CHUNKED] = {chunked_head_forward, chunked_head_backward},
    [PREFIX] = {prefix_head_forward, prefix_head_backward},
    [REFERENCE] = {reference_head_forward, reference_head_backward},
};

static void linear_forward(const attn_call *call)
{
    attn_for_each_head(call, kernel_fns[kernel_of(call->attn)].forward);
}

static void linear_backward(const attn_call *call)
{
    attn_for_each_head(call, kernel_fns[kernel_of(call->attn)].backward);
}

/* ---- recurrent form: the (S, z) state ---- */

/* Per head: S (D, M), z (D), then two rows of features (pq, pk) as scratch. */
static size_t head_state_floats(int D, int M) { return (size_t)D * M + 3 * (size_t)D; }

static size_t linear_state_payload_bytes(int B, int H, int D, int M, int max_steps)
{
    (void)max_steps; /* constant size: the point of the RNN form */
    return (size_t)B * H * head_state_floats(D, M) * sizeof(float);
}

static lt_status linear_step(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                             int max_steps, int steps, float *out, const float *q, const float *k,
                             const float *v)
{
    (void)max_steps, (void)steps;
    const lt_feature_map map = attn->config.feature_map;
    const int heads = B * H;
#pragma omp parallel for schedule(static)
    for (int bh = 0; bh < heads; bh++) {
        float *S = (float *)payload + (size_t)bh * head_state_floats(D, M);
        float *z = S + (size_t)D * M, *pq = z + D, *pk = pq + D;
        phi_apply(map, pq, q + (size_t)bh * D, D);
        phi_apply(map, pk, k + (size_t)bh * D, D);
        causal_token(out + (size_t)bh * M, S, z, pq, pk, v + (size_t)bh * M, D, M,
                     attn->config.eps);
    }
    return LT_OK;
}

static const attn_kernel_info linear_kernels[] = {
    {KERNEL_GEMM, ATTN_NONCAUSAL_ONLY},
    {KERNEL_CHUNKED, ATTN_CAUSAL_ONLY},
    {KERNEL_PREFIX, ATTN_CAUSAL_ONLY},
    {KERNEL_REFERENCE, ATTN_EITHER},
};

const lt_attn_variant lt_attn_linear_variant = {
    .name = "linear",
    .kernels = linear_kernels,
    .kernel_count = 4,
    .kernel_names = "linear-gemm|linear-causal-chunked|linear-causal-prefix|linear-reference",
    .check_config = linear_check_config,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = linear_saved_bytes,
    .slice_bytes = linear_slice_bytes,
    .flops = linear_flops,
    .forward = linear_forward,
    .backward = linear_backward,
    .state_payload_bytes = linear_state_payload_bytes,
    .step = linear_step,
};
