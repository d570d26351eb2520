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
 *   linear-causal-chunked  causal, chunkwise parallel: within a chunk the
 *                          masked quadratic form, across chunks the state
 *                          of the earlier chunks (a prefix over per-chunk
 *                          sums), everything as GEMMs. Same sums as the
 *                          prefix kernel in another order.
 *   linear-reference       the O(N^2) form in plain loops: A_ij = phi(Q_i) .
 *                          phi(K_j), masked to j <= i when causal, out_i =
 *                          sum_j A_ij V_j / (sum_j A_ij + eps).
 *
 * Gradients include the normaliser: with num_i = phi(Q_i)^T S_i and den_i,
 * d num_i = g_i / den_i and d den_i = -g_i . out_i / den_i, and pass through
 * phi'(x) to q and k. */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "attn/attn_internal.h"
#include "core/gemm.h"

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

/* Elements a thread takes at a time when threads share a head's feature maps. */
#define PHI_BLOCK 4096

/* dx[i] += dphi[i] * phi'(x[i]): the gradient through the feature map,
 * given the features f[i] = phi(x[i]) already computed: elu's slope is 1 or
 * e^x = f, so no exponential is taken again. */
static void phi_backprop(lt_feature_map map, float *restrict dx, const float *restrict dphi,
                         const float *restrict x, const float *restrict f, size_t n)
{
    switch (map) {
    case LT_FEATURE_ELU:
        for (size_t i = 0; i < n; i++)
            dx[i] += dphi[i] * select_float(positive_mask(x[i]), 1.0f, f[i]);
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

/* ---- rows in chunks, and sums over chunks ---- */

/* Both GEMM kernels walk a head's rows a chunk at a time and keep one
 * record of sums per chunk (a D x M matrix and a D vector, e.g. phi(K_c)^T
 * V_c and the column sums of phi(K_c)); whole-sequence sums are then added
 * up over the records in chunk order. Chunks are independent, so threads
 * that share a head split them, and every float is summed in the same
 * order whatever the threads: results do not depend on the thread count. */

typedef struct chunk_plan {
    int N, D, M, C, chunks;
    size_t stride; /* floats per chunk record: a D x M matrix, then a D vector, padded */
} chunk_plan;

/* Floats of a record's S, and of S and z together. */
static size_t record_S(const chunk_plan *p) { return (size_t)p->D * p->M; }
static size_t record_Sz(const chunk_plan *p) { return record_S(p) + (size_t)p->D; }

static chunk_plan chunk_plan_of(int N, int D, int M, int C)
{
    chunk_plan p = {N, D, M, C, 0, 0};
    p.chunks = (N + p.C - 1) / p.C;
    p.stride = attn_round(record_Sz(&p) * sizeof(float)) / sizeof(float);
    return p;
}

/* Sum of attn_take sizes, so slices match what the kernels carve. */
static size_t floats(size_t count) { return attn_round(count * sizeof(float)); }

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
 * worksharing loop over the floats, each float summed in chunk order. */
static void chunk_scan(float *records, const chunk_plan *p, size_t first, size_t count,
                       int reverse)
{
#pragma omp for schedule(static)
    for (size_t e0 = first; e0 < first + count; e0 += SCAN_BLOCK) {
        size_t n = first + count - e0 < SCAN_BLOCK ? first + count - e0 : SCAN_BLOCK;
        float run[SCAN_BLOCK];
        for (size_t e = 0; e < n; e++)
            run[e] = 0.0f;
        for (int i = 0; i < p->chunks; i++) {
            float *restrict x = records + (size_t)(reverse ? p->chunks - 1 - i : i) * p->stride + e0;
            for (size_t e = 0; e < n; e++) {
                float own = x[e];
                x[e] = run[e];
                run[e] += own;
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

/* record = (phi(K_c)^T V_c, column sums of phi(K_c)): the chunk's own sums. */
static void chunk_own_state(float *record, const chunk_plan *p, const float *pk, const float *v,
                            int rows)
{
    const int D = p->D, M = p->M;
    lt_sgemm_serial(LT_T, LT_N, D, M, rows, 1.0f, pk, D, v, M, 0.0f, record, M);
    memset(record + record_S(p), 0, (size_t)D * sizeof(float));
    add_column_sums(record + record_S(p), NULL, pk, rows, D);
}

/* ---- linear-gemm (non-causal) ---- */

/* Rows per chunk of linear-gemm: a chunk's features (256 KiB at D = 64)
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
        return floats(C * p->D) + floats(C); /* features, den */
    return 2 * floats(C * p->D) + floats(C * p->M) + floats(C);
}

/* Per-thread scratch of one chunk. */
typedef struct gemm_scratch {
    float *phi;  /* (C, D): phi(K_c) or phi(Q_c) */
    float *t;    /* (C, D): S dO rows, then d phi; backward */
    float *dnum; /* (C, M): backward */
    float *vec;  /* (C): den without saved, or dden */
} gemm_scratch;

static gemm_scratch gemm_scratch_of(char *scratch, const chunk_plan *p, int backward)
{
    gemm_scratch t = {0};
    char *cursor = scratch + (size_t)omp_get_thread_num() * gemm_scratch_bytes(p, backward);
    t.phi = attn_take(&cursor, (size_t)p->C * p->D);
    if (backward) {
        t.t = attn_take(&cursor, (size_t)p->C * p->D);
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
    const chunk_plan p = chunk_plan_of(attn_head_rows(call, bh), call->shape.D, call->shape.M,
                                       GEMM_CHUNK);
    const int D = p.D, M = p.M, C = p.C;
    const lt_feature_map map = call->attn->config.feature_map;
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
            phi_apply(map, t.phi, h.k + (size_t)c * C * D, (size_t)rows * D);
            chunk_own_state(records + (size_t)c * p.stride, &p, t.phi, h.v + (size_t)c * C * M,
                            rows);
        }
        chunk_total(S, records, &p, record_S(&p));
        chunk_total(z, records + record_S(&p), &p, (size_t)D);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            float *out = h.out + (size_t)c0 * M, *den = s.den != NULL ? s.den + c0 : t.vec;
            phi_apply(map, t.phi, h.q + (size_t)c0 * D, (size_t)rows * D);
            lt_sgemm_serial(LT_N, LT_N, rows, M, D, 1.0f, t.phi, D, S, M, 0.0f, out, M);
            for (int r = 0; r < rows; r++) {
                den[r] = eps + dot(t.phi + (size_t)r * D, z, D);
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
    const chunk_plan p = chunk_plan_of(attn_head_rows(call, bh), call->shape.D, call->shape.M,
                                       GEMM_CHUNK);
    const int D = p.D, M = p.M, C = p.C;
    const lt_feature_map map = call->attn->config.feature_map;
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
            phi_apply(map, t.phi, h.q + (size_t)c0 * D, (size_t)rows * D);
            /* t_i = S g_i, so g_i . num_i = phi(Q_i) . t_i without rebuilding out */
            lt_sgemm_serial(LT_N, LT_T, rows, D, M, 1.0f, g, M, s.S, M, 0.0f, t.t, D);
            for (int r = 0; r < rows; r++) {
                float *tr = t.t + (size_t)r * D, inv = 1.0f / den[r];
                t.vec[r] = -dot(t.phi + (size_t)r * D, tr, D) * inv * inv;
                for (int d = 0; d < D; d++)
                    tr[d] = tr[d] * inv + t.vec[r] * s.z[d]; /* d phi(Q_i) */
                for (int m = 0; m < M; m++)
                    t.dnum[(size_t)r * M + m] = g[(size_t)r * M + m] * inv;
            }
            phi_backprop(map, h.dq + (size_t)c0 * D, t.t, h.q + (size_t)c0 * D, t.phi,
                         (size_t)rows * D);
            lt_sgemm_serial(LT_T, LT_N, D, M, rows, 1.0f, t.phi, D, t.dnum, M, 0.0f, record, M);
            memset(record + record_S(&p), 0, (size_t)D * sizeof(float));
            add_column_sums(record + record_S(&p), t.vec, t.phi, rows, D);
        }
        chunk_total(dS, records, &p, record_Sz(&p));
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            phi_apply(map, t.phi, h.k + (size_t)c0 * D, (size_t)rows * D);
            lt_sgemm_serial(LT_N, LT_N, rows, M, D, 1.0f, t.phi, D, dS, M, 1.0f,
                            h.dv + (size_t)c0 * M, M);
            /* d phi(K_j) = dS V_j + dz */
            lt_sgemm_serial(LT_N, LT_T, rows, D, M, 1.0f, h.v + (size_t)c0 * M, M, dS, M, 0.0f, t.t,
                            D);
            for (int r = 0; r < rows; r++)
                for (int d = 0; d < D; d++)
                    t.t[(size_t)r * D + d] += dz[d];
            phi_backprop(map, h.dk + (size_t)c0 * D, t.t, h.k + (size_t)c0 * D, t.phi,
                         (size_t)rows * D);
        }
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
        phi_backprop(map, h.dq + (size_t)i * D, t, h.q + (size_t)i * D, pq, D);
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
        phi_backprop(map, h.dk + (size_t)i * D, t, h.k + (size_t)i * D, pk, D);
    }
}

/* ---- linear-causal-chunked ---- */

/* Chunkwise-parallel form. Chunk c (tokens [c0, c0 + rows)) sees the state
 * of the chunks before it, (S_c, z_c) = sums of phi(K_j) V_j^T and phi(K_j)
 * over j < c0, plus the masked quadratic form inside the chunk:
 *   num_i = phi(Q_i) S_c + sum_{c0 <= j <= i} A_ij V_j,  A = phi(Q_c) phi(K_c)^T,
 *   den_i = eps + phi(Q_i) . z_c + sum_{c0 <= j <= i} A_ij.
 * The states come in two steps so chunks never wait for each other: every
 * chunk's own sums (one GEMM each), then an exclusive prefix over the chunks
 * (D M + D additions a chunk). Backward does the same with the suffix sums of
 * the later chunks, U_c = sum phi(Q_i) dnum_i^T and u_c = sum dden_i phi(Q_i).
 * A head's workspace holds phi(Q), phi(K) and one (S, z) record per chunk
 * (two in backward): O(N) memory, no state per position. When heads are
 * fewer than threads every phase splits its chunks over the threads; each
 * sum runs in the same order either way, so results do not depend on the
 * thread count. */

/* Tokens per chunk. A chunk adds 2 C (D + M) flops a token of quadratic form
 * to the 4 D M of the state products (forward; backward 2 C (3 D + 2 M) to
 * 10 D M), while GEMMs with a side of C run faster as C grows (OpenBLAS's
 * small-matrix kernels on one Xeon core: 50-105 GFLOP/s with sides of 32,
 * 75-130 with sides of 64, the slower figure for B transposed).
 * C = max(D, M) / 2, rounded up to a power of two and kept in [16, 64],
 * holds the quadratic part to about half the state products.
 * Measured (B=1, H=8, N=4096, one thread): at D = M = 64 chunks of 16 to 64
 * ran within noise of each other and 128 was 15-25% slower; at D = M = 32,
 * 16 to 48 tied and 128 was 45% slower. */
#define CHUNK_MIN 16
#define CHUNK_MAX 64

int attn_linear_chunk(int D, int M)
{
    int half = (D > M ? D : M) / 2, C = CHUNK_MIN;
    while (C < half && C < CHUNK_MAX)
        C *= 2;
    return C;
}

/* Workspace of one head: what its threads share (features, records), then
 * one scratch block per thread. Kept beside the carving in chunk_space_of. */
static size_t chunk_shared_bytes(const chunk_plan *p, int backward)
{
    return 2 * floats((size_t)p->N * p->D) +
           (size_t)(backward ? 2 : 1) * floats((size_t)p->chunks * p->stride);
}

static size_t chunk_scratch_bytes(const chunk_plan *p, int backward)
{
    size_t C = p->C;
    if (!backward)
        return floats(C * C) + floats(C); /* A, den */
    return 2 * floats(C * C) + 2 * floats(C * p->D) + floats(C * p->M) + floats(C);
}

typedef struct chunk_space {
    float *pq, *pk; /* (N, D): phi(Q), phi(K) of the whole head */
    float *S;       /* (chunks, stride): own sums, then prefix (S_c, z_c) */
    float *U;       /* backward: own sums, then suffix (U_c, u_c) */
    char *scratch;  /* chunk_scratch_bytes per thread */
} chunk_space;

/* Per-thread scratch of one chunk step. */
typedef struct chunk_scratch {
    float *A, *W;      /* (C, C): masked scores; backward dnum V^T, then dA */
    float *T, *dphi;   /* (C, D): S_c dO rows, then d phi(Q); d phi(K) */
    float *dnum;       /* (C, M) */
    float *vec;        /* (C): den (forward without saved) or dden */
} chunk_scratch;

static chunk_space chunk_space_of(char *ws, const chunk_plan *p, int backward)
{
    chunk_space s;
    char *cursor = ws;
    s.pq = attn_take(&cursor, (size_t)p->N * p->D);
    s.pk = attn_take(&cursor, (size_t)p->N * p->D);
    s.S = attn_take(&cursor, (size_t)p->chunks * p->stride);
    s.U = backward ? attn_take(&cursor, (size_t)p->chunks * p->stride) : NULL;
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
        t.T = attn_take(&cursor, C * p->D);
        t.dphi = attn_take(&cursor, C * p->D);
        t.dnum = attn_take(&cursor, C * p->M);
    }
    t.vec = attn_take(&cursor, C);
    return t;
}

/* phi(Q), phi(K) of the whole head; a worksharing loop of the head's region. */
static void chunk_features(const chunk_space *s, const chunk_plan *p, const attn_head *h,
                           lt_feature_map map)
{
    size_t n = (size_t)p->N * p->D;
#pragma omp for schedule(static)
    for (size_t start = 0; start < n; start += PHI_BLOCK) {
        size_t len = n - start < PHI_BLOCK ? n - start : PHI_BLOCK;
        phi_apply(map, s->pq + start, h->q + start, len);
        phi_apply(map, s->pk + start, h->k + start, len);
    }
}

/* A (rows x rows, stride C) = phi(Q_c) phi(K_c)^T with the entries of later
 * keys (j > i) zeroed: the causal quadratic form inside one chunk. */
static void chunk_scores(float *A, const float *pq, const float *pk, int rows, int D, int C)
{
    lt_sgemm_serial(LT_N, LT_T, rows, rows, D, 1.0f, pq, D, pk, D, 0.0f, A, C);
    for (int r = 0; r < rows; r++)
        for (int j = r + 1; j < rows; j++)
            A[(size_t)r * C + j] = 0.0f;
}

/* Outputs and normalisers of chunk c from its prefix record. */
static void chunk_forward(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                          const attn_head *h, float *den_saved, int c, float eps)
{
    const int D = p->D, M = p->M, C = p->C, c0 = c * C, rows = chunk_rows(p, c);
    const float *pq = s->pq + (size_t)c0 * D, *pk = s->pk + (size_t)c0 * D;
    const float *record = s->S + (size_t)c * p->stride, *z = record + record_S(p);
    float *out = h->out + (size_t)c0 * M;
    float *den = den_saved != NULL ? den_saved + c0 : t->vec;
    chunk_scores(t->A, pq, pk, rows, D, C);
    lt_sgemm_serial(LT_N, LT_N, rows, M, D, 1.0f, pq, D, record, M, 0.0f, out, M);
    lt_sgemm_serial(LT_N, LT_N, rows, M, rows, 1.0f, t->A, C, h->v + (size_t)c0 * M, M, 1.0f, out,
                    M);
    for (int r = 0; r < rows; r++) {
        const float *a = t->A + (size_t)r * C;
        float within = 0.0f;
        for (int j = 0; j <= r; j++)
            within += a[j];
        den[r] = eps + dot(pq + (size_t)r * D, z, D) + within;
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
 * sum_i dden_i phi(Q_i) in the record's u slot for the suffix scan. */
static void chunk_backward(const chunk_plan *p, const chunk_space *s, const chunk_scratch *t,
                           const attn_head *h, const float *den_saved, lt_feature_map map, int c)
{
    const int D = p->D, M = p->M, C = p->C, c0 = c * C, rows = chunk_rows(p, c);
    const float *pq = s->pq + (size_t)c0 * D, *pk = s->pk + (size_t)c0 * D;
    const float *v = h->v + (size_t)c0 * M, *g = h->d_out + (size_t)c0 * M;
    const float *den = den_saved + c0;
    const float *S = s->S + (size_t)c * p->stride, *z = S + record_S(p);
    float *U = s->U + (size_t)c * p->stride, *u = U + record_S(p);
    float *A = t->A, *W = t->W, *T = t->T, *dden = t->vec;

    chunk_scores(A, pq, pk, rows, D, C);
    /* W = dO_c V_c^T, T = dO_c S_c^T (row i: S_c g_i) */
    lt_sgemm_serial(LT_N, LT_T, rows, rows, M, 1.0f, g, M, v, M, 0.0f, W, C);
    lt_sgemm_serial(LT_N, LT_T, rows, D, M, 1.0f, g, M, S, M, 0.0f, T, D);
    for (int r = 0; r < rows; r++) {
        /* g_i . num_i = phi(Q_i) . S_c g_i + sum_j A_ij (g_i . V_j) */
        float *w = W + (size_t)r * C, *tr = T + (size_t)r * D;
        const float *a = A + (size_t)r * C;
        float within = 0.0f;
        for (int j = 0; j <= r; j++)
            within += a[j] * w[j];
        float inv = 1.0f / den[r];
        dden[r] = -(dot(pq + (size_t)r * D, tr, D) + within) * inv * inv;
        for (int j = 0; j < rows; j++) /* dA = dnum V^T + dden, masked */
            w[j] = j <= r ? w[j] * inv + dden[r] : 0.0f;
        for (int d = 0; d < D; d++) /* d phi(Q_i) = S_c dnum_i + dden_i z_c + (dA phi(K_c))_i */
            tr[d] = tr[d] * inv + dden[r] * z[d];
    }
    lt_sgemm_serial(LT_N, LT_N, rows, D, rows, 1.0f, W, C, pk, D, 1.0f, T, D);
    phi_backprop(map, h->dq + (size_t)c0 * D, T, h->q + (size_t)c0 * D, pq, (size_t)rows * D);
    /* d phi(K_c) = V_c U_c^T + dA^T phi(Q_c) (+ u_c later) */
    lt_sgemm_serial(LT_N, LT_T, rows, D, M, 1.0f, v, M, U, M, 0.0f, t->dphi, D);
    lt_sgemm_serial(LT_T, LT_N, rows, D, rows, 1.0f, W, C, pq, D, 1.0f, t->dphi, D);
    phi_backprop(map, h->dk + (size_t)c0 * D, t->dphi, h->k + (size_t)c0 * D, pk,
                 (size_t)rows * D);
    /* dV_c += phi(K_c) U_c + A^T dnum */
    chunk_dnum(t->dnum, g, den, rows, M);
    float *dv = h->dv + (size_t)c0 * M;
    lt_sgemm_serial(LT_N, LT_N, rows, M, D, 1.0f, pk, D, U, M, 1.0f, dv, M);
    lt_sgemm_serial(LT_T, LT_N, rows, M, rows, 1.0f, A, C, t->dnum, M, 1.0f, dv, M);
    memset(u, 0, (size_t)D * sizeof(float));
    add_column_sums(u, dden, pq, rows, D);
}

static void chunked_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    const chunk_plan p = chunk_plan_of(attn_head_rows(call, bh), call->shape.D, call->shape.M,
                                       attn_linear_chunk(call->shape.D, call->shape.M));
    const lt_feature_map map = call->attn->config.feature_map;
    const float eps = call->attn->config.eps;
    const attn_head h = attn_view_head(call, bh);
    const chunk_space s = chunk_space_of(ws, &p, 0);
    float *den = view_saved(call, bh).den;
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const chunk_scratch t = chunk_scratch_of(&s, &p, 0);
        chunk_features(&s, &p, &h, map);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_own_state(s.S + (size_t)c * p.stride, &p, s.pk + (size_t)c * p.C * p.D,
                            h.v + (size_t)c * p.C * p.M, chunk_rows(&p, c));
        chunk_scan(s.S, &p, 0, record_Sz(&p), 0);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_forward(&p, &s, &t, &h, den, c, eps);
    }
}

static void chunked_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    const chunk_plan p = chunk_plan_of(attn_head_rows(call, bh), call->shape.D, call->shape.M,
                                       attn_linear_chunk(call->shape.D, call->shape.M));
    const lt_feature_map map = call->attn->config.feature_map;
    const attn_head h = attn_view_head(call, bh);
    const chunk_space s = chunk_space_of(ws, &p, 1);
    const float *den = view_saved(call, bh).den;
    const int D = p.D, M = p.M, C = p.C;
#pragma omp parallel if (inner) num_threads(call->threads)
    {
        const chunk_scratch t = chunk_scratch_of(&s, &p, 1);
        chunk_features(&s, &p, &h, map);
        /* own sums: (S, z) of the keys, U = phi(Q_c)^T dnum_c */
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            int c0 = c * C, rows = chunk_rows(&p, c);
            chunk_own_state(s.S + (size_t)c * p.stride, &p, s.pk + (size_t)c0 * D,
                            h.v + (size_t)c0 * M, rows);
            chunk_dnum(t.dnum, h.d_out + (size_t)c0 * M, den + c0, rows, M);
            lt_sgemm_serial(LT_T, LT_N, D, M, rows, 1.0f, s.pq + (size_t)c0 * D, D, t.dnum, M, 0.0f,
                            s.U + (size_t)c * p.stride, M);
        }
        chunk_scan(s.S, &p, 0, record_Sz(&p), 0);
        chunk_scan(s.U, &p, 0, record_S(&p), 1);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++)
            chunk_backward(&p, &s, &t, &h, den, map, c);
        /* u_c needs every later chunk's dden: scan, then add u_c phi'(K_i) */
        chunk_scan(s.U, &p, record_S(&p), (size_t)D, 1);
#pragma omp for schedule(static)
        for (int c = 0; c < p.chunks; c++) {
            const float *u = s.U + (size_t)c * p.stride + record_S(&p);
            for (int i = c * C; i < c * C + chunk_rows(&p, c); i++)
                phi_backprop(map, h.dk + (size_t)i * D, u, h.k + (size_t)i * D,
                             s.pk + (size_t)i * D, (size_t)D);
        }
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

static size_t linear_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    size_t N = shape.N, D = shape.D, M = shape.M;
    size_t forward, backward;
    switch (kernel_of(attn)) {
    case GEMM: {
        chunk_plan p = chunk_plan_of(shape.N, shape.D, shape.M, GEMM_CHUNK);
        forward = gemm_shared_bytes(&p) + gemm_scratch_bytes(&p, 0);
        backward = gemm_shared_bytes(&p) + gemm_scratch_bytes(&p, 1);
        break;
    }
    case PREFIX:
        forward = floats(D * M) + 3 * floats(D) + floats(N);
        backward = floats(D * M) + 4 * floats(D) + floats(M) + floats(N);
        break;
    case CHUNKED: {
        chunk_plan p = chunk_plan_of(shape.N, shape.D, shape.M, attn_linear_chunk(shape.D, shape.M));
        forward = chunk_shared_bytes(&p, 0) + chunk_scratch_bytes(&p, 0);
        backward = chunk_shared_bytes(&p, 1) + chunk_scratch_bytes(&p, 1);
        break;
    }
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

/* Products and dot products as each kernel issues them on one head of n
 * rows. linear-causal-chunked adds to the model's state products (4 D M a
 * token forward, 8 backward) the chunk's quadratic form, 2 C (D + M) a
 * token forward and 2 C (3 D + 2 M) backward for full chunks of C, and
 * backward rebuilds the chunk sums and U (2 D M more); the prefix kernel's
 * backward rebuilds S_i (2 D M) and its reverse sweep also forms U_i V_i. */
static double linear_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                                int inner)
{
    const double D = shape.D, M = shape.M, N = n;
    (void)inner; /* no kernel recomputes when threads share a head */
    switch (kernel_of(attn)) {
    case GEMM: return backward ? N * (8.0 * D * M + 5.0 * D) : N * (4.0 * D * M + 3.0 * D);
    case CHUNKED: {
        const int C = attn_linear_chunk(shape.D, shape.M);
        double total = 0.0;
        for (int c0 = 0; c0 < n; c0 += C) {
            double r = n - c0 < C ? n - c0 : C;
            total += backward ? r * (10.0 * D * M + 5.0 * D) + 2.0 * r * r * (3.0 * D + 2.0 * M)
                              : r * (4.0 * D * M + 3.0 * D) + 2.0 * r * r * (D + M);
        }
        return total;
    }
    case PREFIX: return backward ? N * (10.0 * D * M + 7.0 * D) : N * (4.0 * D * M + 3.0 * D);
    case REFERENCE: break;
    }
    /* the reference: a score (2 D) and a value row (2 M) per pair seen;
     * backward rebuilds them, then per pair 4 M for dA and dV, 4 D for dQ, dK */
    double pairs = attn->config.causal ? 0.5 * N * (N + 1.0) : N * N;
    return backward ? pairs * (6.0 * D + 6.0 * M) : pairs * (2.0 * D + 2.0 * M);
}

/* ---- recurrent form: the (S, z) state ---- */

/* Below this many state elements a step stays on one thread. */
#define STEP_PARALLEL_MIN 16384

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
    /* a head's update is only 2 D M multiply-adds: small batches stay on
     * one thread, where a parallel region would cost more than it saves */
#pragma omp parallel for schedule(static) if ((double)heads * D * M >= STEP_PARALLEL_MIN)
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
    [GEMM] = {KERNEL_GEMM, ATTN_NONCAUSAL_ONLY, gemm_head_forward, gemm_head_backward},
    [CHUNKED] = {KERNEL_CHUNKED, ATTN_CAUSAL_ONLY, chunked_head_forward, chunked_head_backward},
    [PREFIX] = {KERNEL_PREFIX, ATTN_CAUSAL_ONLY, prefix_head_forward, prefix_head_backward},
    [REFERENCE] = {KERNEL_REFERENCE, ATTN_EITHER, reference_head_forward, reference_head_backward},
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
    .head_flops = linear_head_flops,
    .forward = attn_kernel_forward,
    .backward = attn_kernel_backward,
    .state_payload_bytes = linear_state_payload_bytes,
    .step = linear_step,
};
