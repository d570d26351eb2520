/* Reformer's LSH attention (Kitaev, Kaiser, Levskaya 2020), the baseline
 * that "Transformers are RNNs" compares with as LSH-1, LSH-4 and LSH-8.
 *
 * Shared query-key: the keys are the queries scaled to unit length,
 * k_i = q_i / sqrt(|q_i|^2 + D 1e-6) (trax's length_normalized, whose
 * epsilon keeps a zero query finite); the k input is never read and dk gets
 * nothing. Scores are q_i . k_j / sqrt(D), as fast-transformers computes
 * them (trax leaves out the 1/sqrt(D)).
 *
 * Each round r hashes the positions with a random rotation R (D x b/2,
 * standard normal entries): bucket = argmax [k R, -k R], the same for q as
 * for k since a positive scale does not move an argmax, so the queries are
 * hashed as they come. Positions are sorted by (bucket, position), the
 * sorted sequence is cut into chunks of C, and each chunk attends to itself
 * and to the chunk before it (the first chunk to itself only, as
 * fast-transformers does; trax wraps it around to the last chunk). Other
 * buckets in the window are not masked (neither implementation does). A
 * query never attends to itself unless nothing else is left in its window;
 * causal masking compares original positions, so query i sees keys j <= i.
 *
 * Rounds are combined by their log-sum-exp weights (Reformer sec. 2.3, as
 * trax's LSHSelfAttention does): out_i = sum_r exp(z_ri - Z_i) o_ri with
 * z_ri the log-sum-exp of query i's scores in round r and Z_i = logsumexp_r
 * z_ri. Like both implementations this leaves out the paper's log N_ij term
 * for a key met in several rounds. A round in which query i saw only itself
 * gets weight 0 when another round gave it other keys: trax's self-mask
 * (-1e5 added to the score) in the limit.
 *
 * The rotations are a pure function of (shape.seed, shape.step,
 * shape.layer, round, column), shared by the batch and the heads as in
 * fast-transformers: each column of R has its own random stream, so
 * forward and backward, a resumed run and any thread count see the same
 * hashes. Hashes are constants: gradients flow through the attention within
 * the chunks only. Forward keeps, per round, the sorted order, each query's
 * round weight and the window probabilities (N x min(2C, N)): O(N C) per
 * round, so backward never hashes again.
 *
 * Defaults: 4 rounds and chunks of 32 as fast-transformers'
 * ReformerAttention (the paper's own code: rounds=4, chunk_size=32; trax's
 * LSHSelfAttention has n_hashes=1, chunk_len=128); buckets derived from the
 * length as trax's LSHSelfAttention does when n_buckets is None: b = 2
 * max(1, n / C), and above 128 two hashes of b1 and b2 buckets (b1 the
 * smallest power of two >= sqrt(b), b2 = 2 floor(b / 2 b1)) from one
 * rotation of (b1 + b2) / 2 columns, bucket = h1 + b1 h2. A bucket count
 * given in the configuration is hashed with one rotation of b/2 columns
 * (trax's integer n_buckets); 1 puts every position in one bucket.
 *
 * Kernels:
 *   lsh-chunked    places each round's queries and values (and the keys'
 *                  inverse norms) in sorted order, walking the positions in
 *                  order, so a chunk's window is a contiguous block: per
 *                  chunk, the C x 2C scores (queries against queries,
 *                  scaled by column) and dP are two sgemm calls each (a
 *                  half window each), the values, dQ, dK and dV one each;
 *                  backward sums into sorted rows and takes each position's
 *                  row back once a round. Chunks spread over threads when
 *                  heads are fewer than threads.
 *   lsh-reference  the same hashes (same hashing code), then plain loops
 *                  over each sorted query's window, rounds combined after
 *                  the last one; kept to test the chunked kernel against.
 *
 * No recurrent form: a new token can move every bucket and chunk, so
 * generation recomputes the prefix. The same holds within one causal
 * forward: changing a later query can move chunk boundaries and so change
 * which earlier keys an earlier query sees (never a later key's score or
 * value).
 *
 * Longer than most files, 60 lines of it this comment: both kernels share
 * the hashing, the carving of a head's workspace and the saved rounds
 * (order, weights, window probabilities) that backward reads, and splitting
 * them would move all three into a header. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <omp.h>

#include "attn/attn_internal.h"
#include "core/gemm.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/timer.h"

static const char KERNEL_CHUNKED[] = "lsh-chunked";
static const char KERNEL_REFERENCE[] = "lsh-reference";

/* Indexes lsh_kernels below (resolved once by lt_attn_init). */
typedef enum lsh_kernel { CHUNKED, REFERENCE } lsh_kernel;

static const char NO_RECURRENCE_REASON[] =
    "LSH attention re-hashes the whole sequence, so a new token can move every bucket and "
    "chunk; generation recomputes the prefix";

/* Positions per hashing product: big enough for an efficient sgemm, and
 * fixed, so a row's hash never depends on how the rows were split. */
#define HASH_ROWS 256
/* trax hashes up to this many derived buckets with one rotation. */
#define SINGLE_HASH_MAX_BUCKETS 128
/* trax's length_normalized: x / sqrt(mean(x^2) + 1e-6). */
#define KEY_EPS 1e-6f

static int min_int(int a, int b) { return a < b ? a : b; }
static int max_int(int a, int b) { return a > b ? a : b; }

static lsh_kernel kernel_of(const lt_attn *attn) { return (lsh_kernel)attn->kernel; }

static float score_scale(int D) { return 1.0f / sqrtf((float)D); }

/* ---- hashing ---- */

attn_lsh_hash_plan attn_lsh_plan(const lt_attn_config *config, int n)
{
    attn_lsh_hash_plan plan = {.factor = {config->buckets, 1}};
    if (config->buckets == 0) {
        int b = 2 * max_int(1, n / config->chunk);
        plan.factor[0] = b;
        if (b > SINGLE_HASH_MAX_BUCKETS) {
            int b1 = 1;
            while ((long)b1 * b1 < b)
                b1 *= 2;
            plan.factor[0] = b1;
            plan.factor[1] = 2 * (b / (2 * b1));
        }
    }
    plan.buckets = plan.factor[0] * plan.factor[1];
    plan.cols = plan.factor[0] / 2 + plan.factor[1] / 2;
    return plan;
}

/* The most rotation columns and buckets any length up to N asks for (the
 * derived plan is not monotonic in n: factorising shrinks it). */
static void plan_bounds(const lt_attn_config *config, int N, int *cols, int *buckets)
{
    *cols = 0;
    *buckets = 1;
    int lengths = config->buckets != 0 ? 1 : max_int(1, N / config->chunk);
    for (int q = 1; q <= lengths; q++) {
        int n = config->buckets != 0 ? N : q * config->chunk;
        attn_lsh_hash_plan plan = attn_lsh_plan(config, n);
        *cols = max_int(*cols, plan.cols);
        *buckets = max_int(*buckets, plan.buckets);
    }
}

static uint64_t mix(uint64_t a, uint64_t b)
{
    lt_rng rng;
    lt_rng_seed(&rng, a, b);
    return lt_rng_u64(&rng);
}

static uint64_t rotation_key(lt_attn_shape shape)
{
    return mix(mix(shape.seed, shape.step), (uint64_t)(uint32_t)shape.layer);
}

/* Column `column` of round `round`'s rotation: its own stream, so it is the
 * same whatever the number of columns drawn and whichever thread draws it. */
static void draw_column(float *R, size_t ld, int D, uint64_t key, int round, int column)
{
    lt_rng rng;
    lt_rng_seed(&rng, key, ((uint64_t)(uint32_t)round << 32) | (uint32_t)column);
    for (int d = 0; d < D; d++)
        R[(size_t)d * ld] = (float)lt_rng_normal(&rng);
}

void attn_lsh_rotations(float *R, size_t ld, int D, int cols, lt_attn_shape shape, int round)
{
    uint64_t key = rotation_key(shape);
    for (int c = 0; c < cols; c++)
        draw_column(R + c, ld, D, key, round, c);
}

/* argmax over [x, -x] (2 half entries), the first of equal maxima as
 * numpy's argmax (so x's half wins a tie with -x's); 0 when half is 0 (a
 * factor of one bucket). One pass for the largest and the smallest. */
static inline int argmax_signed(const float *x, int half)
{
    if (half == 0)
        return 0;
    float hi = x[0], lo = x[0];
    int at_hi = 0, at_lo = 0;
    for (int j = 1; j < half; j++) {
        if (x[j] > hi) {
            hi = x[j];
            at_hi = j;
        }
        if (x[j] < lo) {
            lo = x[j];
            at_lo = j;
        }
    }
    return -lo > hi ? half + at_lo : at_hi;
}

/* Buckets of `rows` positions: rot (rows x cols) = q R, then the argmax of
 * each factor's columns. */
static void hash_block(int32_t *bucket, const float *q, int rows, int D, const float *R, int ldr,
                       attn_lsh_hash_plan plan, float *rot)
{
    const int half0 = plan.factor[0] / 2, half1 = plan.factor[1] / 2;
    if (plan.cols == 0) {
        memset(bucket, 0, sizeof(int32_t) * (size_t)rows);
        return;
    }
    lt_sgemm_serial(LT_N, LT_N, rows, plan.cols, D, 1.0f, q, D, R, ldr,
                0.0f, rot, plan.cols);
    for (int r = 0; r < rows; r++) {
        const float *x = rot + (size_t)r * plan.cols;
        bucket[r] = argmax_signed(x, half0) + plan.factor[0] * argmax_signed(x + half0, half1);
    }
}

/* order (n) = positions sorted by (bucket, position): a counting sort, which
 * keeps positions in order within a bucket; rank (n) its inverse, position
 * i's place in order. count has buckets + 1 slots. */
static void sort_by_bucket(int32_t *order, int32_t *rank, const int32_t *bucket, int n,
                           int buckets, int32_t *count)
{
    memset(count, 0, sizeof(int32_t) * ((size_t)buckets + 1));
    for (int i = 0; i < n; i++)
        count[bucket[i] + 1]++;
    for (int b = 0; b < buckets; b++)
        count[b + 1] += count[b];
    for (int i = 0; i < n; i++) {
        rank[i] = count[bucket[i]]++;
        order[rank[i]] = i;
    }
}

/* ---- sizes, saved tensors and workspace ---- */

typedef struct lsh_sizes {
    int N, D, M, C, W;      /* padded length, dimensions, chunk, window stride min(2C, N) */
    int chunk_rows;         /* min(C, N): rows of one chunk's scratch */
    int rounds, cols, buckets; /* rotation columns and buckets, the most any length asks */
} lsh_sizes;

/* Keys a query's window holds at most: its chunk and the one before. */
static int window_stride(const lt_attn_config *config, int N)
{
    return (int)(2L * config->chunk < N ? 2L * config->chunk : N);
}

static lsh_sizes sizes_of(const lt_attn *attn, lt_attn_shape shape)
{
    const lt_attn_config *c = &attn->config;
    lsh_sizes z = {.N = shape.N, .D = shape.D, .M = shape.M, .C = c->chunk,
                   .rounds = c->rounds};
    z.W = window_stride(c, shape.N);
    z.chunk_rows = min_int(c->chunk, shape.N);
    plan_bounds(c, shape.N, &z.cols, &z.buckets);
    return z;
}

/* Carves aligned blocks from a base, or only counts bytes when base is NULL. */
typedef struct carver {
    char *base;
    size_t at;
} carver;

static void *take(carver *c, size_t bytes)
{
    void *p = c->base != NULL ? c->base + c->at : NULL;
    c->at += attn_round(bytes);
    return p;
}

static float *take_floats(carver *c, size_t n) { return take(c, n * sizeof(float)); }
static int32_t *take_ints(carver *c, size_t n) { return take(c, n * sizeof(int32_t)); }

/* Saved, whole tensors one after another: order (B,H,rounds,N) int32, round
 * weights w (B,H,rounds,N) in sorted order, window probabilities P
 * (B,H,rounds,N,W) in sorted order (a chunk's rows use its window's
 * columns), and, with several rounds, the output (B,H,N,M) for backward's
 * delta_i = g_i . out_i. One round needs no output: there delta_i = sum_j
 * P_ij (g_i . v_j), the row sum of the products backward computes anyway. */
typedef struct saved_round {
    int32_t *order;
    float *w, *P, *out;
} saved_round;

static saved_round saved_of(const attn_call *call, int bh, int round)
{
    saved_round s = {NULL, NULL, NULL, NULL};
    if (call->saved == NULL)
        return s;
    const lt_attn_shape *shape = &call->shape;
    const size_t BH = (size_t)shape->B * shape->H, N = (size_t)shape->N;
    const size_t R = (size_t)call->attn->config.rounds;
    const size_t W = (size_t)window_stride(&call->attn->config, shape->N);
    const size_t head_round = (size_t)bh * R + (size_t)round;
    s.order = (int32_t *)call->saved + head_round * N;
    float *w = (float *)call->saved + BH * R * N;
    s.w = w + head_round * N;
    float *P = w + BH * R * N;
    s.P = P + head_round * N * W;
    if (R > 1)
        s.out = P + BH * R * N * W + (size_t)bh * N * (size_t)shape->M;
    return s;
}

static size_t lsh_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    lsh_sizes z = sizes_of(attn, shape);
    size_t BH = (size_t)shape.B * shape.H, N = (size_t)z.N;
    const size_t out = z.rounds > 1 ? N * (size_t)z.M : 0;
    return BH * ((size_t)z.rounds * N * (2 + (size_t)z.W) + out) * sizeof(float);
}

const int32_t *attn_lsh_order(const lt_attn *attn, lt_attn_shape shape, const void *saved, int bh,
                              int round)
{
    attn_call call = {.attn = attn, .shape = shape, .saved = (void *)saved};
    return saved_of(&call, bh, round).order;
}

/* One head's buffers (in the thread's slice; in slice 0 when threads share
 * the head). NULL where a kernel or direction does not use one. */
typedef struct lsh_buffers {
    float *inv;               /* reference: (N) 1 / sqrt(|q_i|^2 + D eps) */
    int32_t *bucket, *count;  /* (N) (buckets + 1) */
    int32_t *order;           /* (N) when forward saves nothing */
    int32_t *rank;            /* (N) position i's place in the round's order */
    unsigned char *alone;     /* (rounds, N) 1: the round showed the query only itself */
    float *m, *l;             /* (N) running maximum and sum of round weights */
    unsigned char *other;     /* (N) 1 once a round gave the query other keys */
    float *qs, *vs, *invs;    /* (N,D) (N,M) (N) sorted queries, values, inverse norms */
    float *delta, *dscale;    /* (N) g_i . out_i; w times it, sorted */
    float *gs;                /* (N,M) sorted w g */
    float *dqs, *dks, *dvs;   /* (N,D) (N,D) (N,M) a round's gradients in sorted rows
                               * (dks: dL/dk_s scaled by the key's inverse norm) */
    float *dkacc;             /* reference: (N,D) dL/dk over the rounds */
    float *outs, *zs;         /* reference: (rounds,N,M) (rounds,N) each round's output, lse */
    float *row;               /* reference: (W) one query's window */
} lsh_buffers;

static lsh_buffers carve_head(carver *c, const lsh_sizes *z, lsh_kernel kernel, int backward)
{
    const size_t N = (size_t)z->N, D = (size_t)z->D, M = (size_t)z->M, R = (size_t)z->rounds;
    lsh_buffers b;
    memset(&b, 0, sizeof b);
    if (kernel == REFERENCE) /* the chunked kernel computes them as it places rows */
        b.inv = take_floats(c, N);
    if (backward) {
        b.delta = take_floats(c, N);
        if (kernel == REFERENCE) {
            b.dkacc = take_floats(c, N * D);
            return b;
        }
        b.dscale = take_floats(c, N);
        b.rank = take_ints(c, N);
        b.qs = take_floats(c, N * D);
        b.vs = take_floats(c, N * M);
        b.invs = take_floats(c, N);
        b.gs = take_floats(c, N * M);
        b.dqs = take_floats(c, N * D);
        b.dks = take_floats(c, N * D);
        b.dvs = take_floats(c, N * M);
        return b;
    }
    b.bucket = take_ints(c, N);
    b.count = take_ints(c, (size_t)z->buckets + 1);
    b.order = take_ints(c, N);
    b.rank = take_ints(c, N);
    b.alone = take(c, R * N);
    b.m = take_floats(c, N);
    b.l = take_floats(c, N);
    b.other = take(c, N);
    if (kernel == REFERENCE) {
        b.outs = take_floats(c, R * N * M);
        b.zs = take_floats(c, R * N);
        b.row = take_floats(c, (size_t)z->W);
        return b;
    }
    b.qs = take_floats(c, N * D);
    b.vs = take_floats(c, N * M);
    b.invs = take_floats(c, N);
    return b;
}

/* A thread's scratch: one hashing block and one chunk's scores (or dS), its
 * outputs and log-sum-exps. */
typedef struct lsh_scratch {
    float *rot;    /* (HASH_ROWS, cols) */
    float *block;  /* (chunk_rows, W) */
    float *small;  /* (chunk_rows, M) */
    float *z;      /* (chunk_rows) */
} lsh_scratch;

static lsh_scratch carve_scratch(carver *c, const lsh_sizes *z)
{
    const size_t rows = (size_t)z->chunk_rows;
    lsh_scratch s;
    s.rot = take_floats(c, (size_t)HASH_ROWS * z->cols);
    s.block = take_floats(c, rows * z->W);
    s.small = take_floats(c, rows * (size_t)z->M);
    s.z = take_floats(c, rows);
    return s;
}

/* A slice: [rotations | the head's buffers | scratch]. Every forward's
 * rotations are drawn once into slice 0 and read by all threads; the
 * region is reserved in every slice so slices stay alike. */
static size_t rotations_bytes(const lsh_sizes *z)
{
    return attn_round((size_t)z->rounds * z->D * z->cols * sizeof(float));
}

static size_t head_bytes(const lsh_sizes *z, lsh_kernel kernel)
{
    carver fwd = {NULL, 0}, bwd = {NULL, 0};
    carve_head(&fwd, z, kernel, 0);
    carve_head(&bwd, z, kernel, 1);
    return fwd.at > bwd.at ? fwd.at : bwd.at;
}

static size_t lsh_slice_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    lsh_sizes z = sizes_of(attn, shape);
    carver scratch = {NULL, 0};
    carve_scratch(&scratch, &z);
    return rotations_bytes(&z) + head_bytes(&z, kernel_of(attn)) + scratch.at;
}

/* ---- one head ---- */

typedef struct lsh_head {
    attn_head h;
    lsh_sizes z;
    int n, causal, chunks;
    float scale;
    attn_lsh_hash_plan plan;
    const float *rotations; /* (rounds, D, z.cols), drawn by lsh_forward */
    lsh_buffers b;
    const attn_call *call;
    char *ws;
    size_t scratch_at; /* offset of the scratch in a slice */
    int inner;
} lsh_head;

static lsh_head head_of(const attn_call *call, int bh, char *ws, int inner, int backward)
{
    lsh_head t;
    t.call = call;
    t.ws = ws;
    t.inner = inner;
    t.h = attn_view_head(call, bh);
    t.z = sizes_of(call->attn, call->shape);
    t.n = attn_head_rows(call, bh);
    t.causal = call->attn->config.causal;
    t.chunks = (int)(((long)t.n + t.z.C - 1) / t.z.C);
    t.scale = score_scale(t.z.D);
    t.plan = attn_lsh_plan(&call->attn->config, t.n);
    t.rotations = (const float *)call->workspace;
    carver c = {ws + rotations_bytes(&t.z), 0};
    t.b = carve_head(&c, &t.z, kernel_of(call->attn), backward);
    t.scratch_at = rotations_bytes(&t.z) + head_bytes(&t.z, kernel_of(call->attn));
    return t;
}

/* The calling thread's scratch: its own slice's, also when threads share a
 * head (whose buffers are then slice 0's). */
static lsh_scratch scratch_of(const lsh_head *t)
{
    char *slice = t->inner ? t->call->workspace + (size_t)omp_get_thread_num() * t->call->slice
                           : t->ws;
    carver c = {slice + t->scratch_at, 0};
    return carve_scratch(&c, &t->z);
}

/* Chunk c of the sorted sequence: query rows [s0, s0 + rows) and its window
 * [w0, w0 + wid): the chunk before it and itself. */
typedef struct chunk {
    int s0, rows, w0, wid;
} chunk;

static chunk chunk_at(const lsh_head *t, int c)
{
    chunk ch;
    ch.s0 = c * t->z.C;
    ch.rows = min_int(t->z.C, t->n - ch.s0);
    ch.w0 = c > 0 ? ch.s0 - t->z.C : 0;
    ch.wid = ch.s0 + ch.rows - ch.w0;
    return ch;
}

/* 1 / sqrt(|q|^2 + D eps): turns query q into its unit key. */
static inline float inverse_norm(const float *q, int D)
{
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (int d = 0; d < D; d++)
        sq += q[d] * q[d];
    return 1.0f / sqrtf(sq + KEY_EPS * (float)D);
}

/* order (n) of round r: hash every position, then sort. */
static void hash_round(const lsh_head *t, int r, int32_t *order)
{
    const int D = t->z.D, ldr = t->z.cols;
    const float *R = t->rotations + (size_t)r * D * ldr;
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int r0 = 0; r0 < t->n; r0 += HASH_ROWS) {
        lsh_scratch w = scratch_of(t);
        hash_block(t->b.bucket + r0, t->h.q + (size_t)r0 * D, min_int(HASH_ROWS, t->n - r0), D, R,
                   ldr, t->plan, w.rot);
    }
    sort_by_bucket(order, t->b.rank, t->b.bucket, t->n, t->plan.buckets, t->b.count);
}

/* Positions ahead of the one placed whose sorted rows are started: far
 * enough to hide an access, near enough to stay in L1. */
enum { PLACE_AHEAD = 16 };

/* Starts loading a row of n floats (its cache lines), for writing when
 * `write`. */
static inline void prefetch_row(const float *row, int n, int write)
{
    const char *at = (const char *)row, *end = (const char *)(row + n);
    for (; at < end; at += 64) {
        if (write)
            __builtin_prefetch(at, 1);
        else
            __builtin_prefetch(at, 0);
    }
}

/* A function of position i (rank: each position's sorted row; w: round
 * weights in sorted order, where used). */
typedef void (*position_fn)(const lsh_head *t, const int32_t *rank, const float *w, int i);

/* fn over every position in order, spread over the threads when they share
 * the head. Inlined, so fn is a direct call there. */
static inline void for_positions(const lsh_head *t, position_fn fn, const int32_t *rank,
                                 const float *w)
{
    if (t->inner) {
#pragma omp parallel for schedule(static) num_threads(t->call->threads)
        for (int i = 0; i < t->n; i++)
            fn(t, rank, w, i);
        return;
    }
    for (int i = 0; i < t->n; i++)
        fn(t, rank, w, i);
}

/* Position i's query, value and inverse norm into its sorted row. Walking
 * the positions in order and writing the sorted rows, rather than reading
 * positions in bucket order, streams the inputs (which have left the cache
 * since the previous layer or pass) and scatters only into the sorted
 * buffers, which the head reuses and so stay cached while they fit (N (D +
 * M) floats: 2 MB at N = 4096, D = M = 64). The unit keys are not
 * stored: a score q_s . k_j is (q_s . q_j) invs_j, the product of the sorted
 * queries with themselves, scaled by column. */
static void place_row(const lsh_head *t, const int32_t *rank, const float *w, int i)
{
    (void)w;
    const int D = t->z.D, M = t->z.M;
    const size_t s = (size_t)rank[i];
    if (i + PLACE_AHEAD < t->n) {
        const size_t ahead = (size_t)rank[i + PLACE_AHEAD];
        prefetch_row(t->b.qs + ahead * D, D, 1);
        prefetch_row(t->b.vs + ahead * M, M, 1);
    }
    /* loops, not memcpy: a call per short row cost more than the copy */
    const float *q = t->h.q + (size_t)i * D;
    float *qs = t->b.qs + s * D;
    for (int d = 0; d < D; d++)
        qs[d] = q[d];
    const float *v = t->h.v + (size_t)i * M;
    float *vs = t->b.vs + s * M;
    for (int m = 0; m < M; m++)
        vs[m] = v[m];
    /* the norm of the row just loaded: cheaper than a pass of its own */
    t->b.invs[s] = inverse_norm(q, D);
}

static void place(const lsh_head *t, const int32_t *rank)
{
    for_positions(t, place_row, rank, NULL);
}

/* ---- lsh-chunked ---- */

/* S (rows x wid, row stride ldc) = alpha A_rows B_window^T for sorted rows
 * A and B of `width` columns: one product per chunk of the window (the one
 * before and the chunk itself). OpenBLAS serves a product with B
 * transposed from its small-matrix kernels only below a size that the whole
 * window (C x 2C) exceeds, and by its packing path otherwise; half of it
 * each stays on the fast path (measured: 2.4 -> 2.0 us a chunk of 32 with
 * the SkylakeX and Cooperlake kernels, 3.4 -> 3.6 with Haswell's, which
 * have no small-matrix path). */
static void window_product(chunk ch, float alpha, const float *A, const float *B, int width,
                           float *S, int ldc)
{
    const float *rows = A + (size_t)ch.s0 * width;
    if (ch.w0 < ch.s0) /* the chunk before */
        lt_sgemm_serial(LT_N, LT_T, ch.rows, ch.s0 - ch.w0, width, alpha, rows, width,
                        B + (size_t)ch.w0 * width, width, 0.0f, S, ldc);
    lt_sgemm_serial(LT_N, LT_T, ch.rows, ch.rows, width, alpha, rows, width,
                    B + (size_t)ch.s0 * width, width, 0.0f, S + (ch.s0 - ch.w0), ldc);
}

/* In place over a chunk's query-query products (rows x wid, row stride
 * ld): scales column j by key j's inverse norm (key_inv, the window's),
 * which makes them the scores, masks the query's own key and, when causal,
 * keys at later positions, then the softmax; z[r] = the row's log-sum-exp.
 * A row with nothing left attends to itself only (alone[r] = 1, z = its own
 * score). */
static void chunk_softmax(float *S, size_t ld, chunk ch, const int32_t *order,
                          const float *key_inv, int causal, float *z, unsigned char *alone)
{
    const int32_t *keys = order + ch.w0;
    for (int r = 0; r < ch.rows; r++) {
        float *row = S + (size_t)r * ld;
        const int i = order[ch.s0 + r], self = ch.s0 + r - ch.w0;
        const float self_score = row[self] * key_inv[self];
        /* a causal row sees keys at positions <= i, never its own */
        const int last = causal ? i : INT32_MAX;
        float max = -INFINITY;
#pragma omp simd reduction(max : max)
        for (int j = 0; j < ch.wid; j++) {
            const float x = keys[j] > last || j == self ? -INFINITY : row[j] * key_inv[j];
            row[j] = x;
            max = x > max ? x : max;
        }
        if (max == -INFINITY) {
            memset(row, 0, sizeof(float) * (size_t)ch.wid);
            row[self] = 1.0f;
            z[r] = self_score;
            alone[r] = 1;
            continue;
        }
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < ch.wid; j++) {
            row[j] = lt_exp_nonpositive(row[j] - max);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j < ch.wid; j++)
            row[j] *= inv;
        z[r] = max + logf(sum);
        alone[r] = 0;
    }
}

/* Folds round output o (M) with log-sum-exp z into query i's running
 * combination (out_i unnormalised, max m_i, sum l_i): an online softmax over
 * the rounds, in which a round where the query saw only itself loses to any
 * round that gave it other keys. */
static void merge_round(const lsh_head *t, int i, float z, int alone, const float *o)
{
    const int M = t->z.M;
    float *out = t->h.out + (size_t)i * M;
    lsh_buffers b = t->b;
    if (alone && b.other[i])
        return;
    if (b.m[i] == -INFINITY) { /* its first round: the same bits as the general path */
        for (int m = 0; m < M; m++)
            out[m] = o[m];
        b.m[i] = z;
        b.l[i] = 1.0f;
        b.other[i] = (unsigned char)!alone;
        return;
    }
    if (!alone && !b.other[i]) { /* drop the rounds that showed only itself */
        b.other[i] = 1;
        b.m[i] = -INFINITY;
        b.l[i] = 0.0f;
        memset(out, 0, sizeof(float) * (size_t)M);
    }
    if (z > b.m[i]) {
        float shrink = lt_exp_nonpositive(b.m[i] - z); /* 0 on the first round */
        for (int m = 0; m < M; m++)
            out[m] *= shrink;
        b.l[i] *= shrink;
        b.m[i] = z;
    }
    float e = lt_exp_nonpositive(z - b.m[i]);
    for (int m = 0; m < M; m++)
        out[m] += e * o[m];
    b.l[i] += e;
}

static void start_rounds(const lsh_head *t)
{
    for (int i = 0; i < t->n; i++) {
        t->b.m[i] = -INFINITY;
        t->b.l[i] = 0.0f;
        t->b.other[i] = 0;
    }
    /* no zeroing of out: each query's first round stores its row (merge_round) */
}

/* out_i /= l_i; with saved, each round's log-sum-exp (stored as w) becomes
 * its weight exp(z - m_i) / l_i (0 for a dropped round), and out is kept. */
static void finish_rounds(const lsh_head *t, int bh)
{
    const int M = t->z.M, n = t->n;
    /* one round: every l_i is 1, out is final (a pass saved where it shows most) */
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int i = 0; i < (t->z.rounds > 1 ? n : 0); i++) {
        float inv = 1.0f / t->b.l[i], *out = t->h.out + (size_t)i * M;
        for (int m = 0; m < M; m++)
            out[m] *= inv;
    }
    if (t->call->saved == NULL)
        return;
    for (int r = 0; r < t->z.rounds; r++) {
        saved_round s = saved_of(t->call, bh, r);
        const unsigned char *alone = t->b.alone + (size_t)r * t->z.N;
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
        for (int q = 0; q < n; q++) {
            int i = s.order[q];
            s.w[q] = alone[q] && t->b.other[i]
                         ? 0.0f
                         : lt_exp_nonpositive(s.w[q] - t->b.m[i]) / t->b.l[i];
        }
    }
    float *saved_out = saved_of(t->call, bh, 0).out;
    if (saved_out != NULL)
        memcpy(saved_out, t->h.out, sizeof(float) * (size_t)n * M);
}

/* Round r's chunks: scores into the saved probabilities (or scratch), the
 * masked softmax, values, and each query's merge. */
static void chunked_round_forward(const lsh_head *t, int r, saved_round s, const int32_t *order)
{
    const int D = t->z.D, M = t->z.M, W = t->z.W;
    place(t, t->b.rank);
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int c = 0; c < t->chunks; c++) {
        lsh_scratch w = scratch_of(t);
        chunk ch = chunk_at(t, c);
        float *S = s.P != NULL ? s.P + (size_t)ch.s0 * W : w.block;
        float *z = s.w != NULL ? s.w + ch.s0 : w.z;
        unsigned char *alone = t->b.alone + (size_t)r * t->z.N + ch.s0;
        /* the rows merge_round updates lie scattered: their loads overlap the products */
        for (int q = 0; q < ch.rows; q++)
            prefetch_row(t->h.out + (size_t)order[ch.s0 + q] * M, M, 1);
        window_product(ch, t->scale, t->b.qs, t->b.qs, D, S, W);
        chunk_softmax(S, (size_t)W, ch, order, t->b.invs + ch.w0, t->causal, z, alone);
        lt_sgemm_serial(LT_N, LT_N, ch.rows, M, ch.wid, 1.0f, S, W,
                    t->b.vs + (size_t)ch.w0 * M, M, 0.0f, w.small, M);
        for (int q = 0; q < ch.rows; q++)
            merge_round(t, order[ch.s0 + q], z[q], alone[q], w.small + (size_t)q * M);
    }
}

static void chunked_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    lsh_head t = head_of(call, bh, ws, inner, 0);
    if (t.n == 0)
        return;
    start_rounds(&t);
    for (int r = 0; r < t.z.rounds; r++) {
        saved_round s = saved_of(call, bh, r);
        int32_t *order = s.order != NULL ? s.order : t.b.order;
        hash_round(&t, r, order);
        chunked_round_forward(&t, r, s, order);
    }
    finish_rounds(&t, bh);
}

/* delta_i = g_i . out_i for the n valid rows. */
static void output_dots(const lsh_head *t, const float *out)
{
    const int M = t->z.M;
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int i = 0; i < t->n; i++) {
        const float *g = t->h.d_out + (size_t)i * M, *o = out + (size_t)i * M;
        float dot = 0.0f;
        for (int m = 0; m < M; m++)
            dot += g[m] * o[m];
        t->b.delta[i] = dot;
    }
}

/* Position i's sorted rows for round r's backward: its query, value and
 * inverse norm (place_row) and its weighted gradients gs_s = w_s g_i,
 * dscale_s = w_s delta_i (dS = P (w g.v - w delta): the round's softmax and
 * its weight in one). */
static void place_backward_row(const lsh_head *t, const int32_t *rank, const float *w, int i)
{
    place_row(t, rank, NULL, i);
    const int M = t->z.M;
    const size_t s = (size_t)rank[i];
    if (i + PLACE_AHEAD < t->n)
        prefetch_row(t->b.gs + (size_t)rank[i + PLACE_AHEAD] * M, M, 1);
    const float *g = t->h.d_out + (size_t)i * M;
    float *gs = t->b.gs + s * M;
    for (int m = 0; m < M; m++)
        gs[m] = w[s] * g[m];
    if (t->z.rounds > 1) /* one round: chunk_backward sums it from the products */
        t->b.dscale[s] = w[s] * t->b.delta[i];
}

/* One chunk's gradients in sorted rows: dS = P (Gs V^T - dscale), scaled
 * by column with the keys' inverse norms (the scores' own scaling), in
 * scratch; dQ of its rows into dqs, dK (times the key's inverse norm) and
 * dV of its window added into dks and dvs. A window overlaps the previous
 * chunk's, so the even chunks run first and store (beta 0: their windows
 * tile the rows, but for an odd last chunk), then the odd ones add: every
 * row sums its two chunks in one fixed order whatever the threads. */
static void chunk_backward(const lsh_head *t, const float *P, chunk ch, float beta)
{
    const int D = t->z.D, M = t->z.M, W = t->z.W;
    lsh_scratch w = scratch_of(t);
    const float *p = P + (size_t)ch.s0 * W, *key_inv = t->b.invs + ch.w0;
    window_product(ch, 1.0f, t->b.gs, t->b.vs, M, w.block, W);
    for (int r = 0; r < ch.rows; r++) {
        float *ds = w.block + (size_t)r * W;
        const float *pr = p + (size_t)r * W;
        float scale = 0.0f;
        if (t->z.rounds > 1) {
            scale = t->b.dscale[ch.s0 + r];
        } else { /* w delta = w g . out = sum_j P_j (w g . v_j), the row just computed */
#pragma omp simd reduction(+ : scale)
            for (int j = 0; j < ch.wid; j++)
                scale += pr[j] * ds[j];
        }
#pragma omp simd
        for (int j = 0; j < ch.wid; j++)
            ds[j] = pr[j] * (ds[j] - scale) * key_inv[j];
    }
    lt_sgemm_serial(LT_N, LT_N, ch.rows, D, ch.wid, t->scale, w.block, W,
                t->b.qs + (size_t)ch.w0 * D, D, 0.0f, t->b.dqs + (size_t)ch.s0 * D, D);
    lt_sgemm_serial(LT_T, LT_N, ch.wid, D, ch.rows, t->scale, w.block, W,
                t->b.qs + (size_t)ch.s0 * D, D, beta, t->b.dks + (size_t)ch.w0 * D, D);
    lt_sgemm_serial(LT_T, LT_N, ch.wid, M, ch.rows, 1.0f, p, W,
                t->b.gs + (size_t)ch.s0 * M, M, beta, t->b.dvs + (size_t)ch.w0 * M, M);
}

/* A round's sorted gradients into position i: dv_i += dvs_s and dq_i +=
 * dqs_s + J^T dk, where the unit-length normalisation's Jacobian J^T dk =
 * (dk - k (k . dk)) inv with k = q inv, which is dks_s - k (k . dks_s) as
 * dks_s holds inv dk. Positions in order, as place_row walks them. */
static void unplace_row(const lsh_head *t, const int32_t *rank, const float *w, int i)
{
    (void)w;
    const int D = t->z.D, M = t->z.M;
    if (i + PLACE_AHEAD < t->n) { /* the sorted rows lie scattered: fetch ahead */
        const size_t ahead = (size_t)rank[i + PLACE_AHEAD];
        prefetch_row(t->b.dqs + ahead * D, D, 0);
        prefetch_row(t->b.dks + ahead * D, D, 0);
        prefetch_row(t->b.dvs + ahead * M, M, 0);
        prefetch_row(t->b.qs + ahead * D, D, 0);
    }
    const size_t s = (size_t)rank[i];
    const float *qs = t->b.qs + s * D, *dks = t->b.dks + s * D;
    const float *dqs = t->b.dqs + s * D, inv = t->b.invs[s];
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int d = 0; d < D; d++)
        dot += qs[d] * dks[d];
    const float along = dot * inv * inv; /* (k . dks) inv: k = qs inv */
    float *dq = t->h.dq + (size_t)i * D;
    for (int d = 0; d < D; d++)
        dq[d] += dqs[d] + dks[d] - qs[d] * along;
    const float *dvs = t->b.dvs + s * M;
    float *dv = t->h.dv + (size_t)i * M;
    for (int m = 0; m < M; m++)
        dv[m] += dvs[m];
}

/* Rows of the last chunk when it lies in no even chunk's window (an even
 * count of chunks): zero, so that its odd chunk can add. */
static void clear_uncovered_last(const lsh_head *t)
{
    if (t->chunks % 2 != 0)
        return;
    chunk last = chunk_at(t, t->chunks - 1);
    memset(t->b.dks + (size_t)last.s0 * t->z.D, 0, sizeof(float) * (size_t)last.rows * t->z.D);
    memset(t->b.dvs + (size_t)last.s0 * t->z.M, 0, sizeof(float) * (size_t)last.rows * t->z.M);
}

/* Round s: every position placed in its sorted rows, the even chunks, the
 * odd ones (so every row sums its two chunks in one order whatever the
 * threads), every position's gradients taken back; chunks spread over the
 * threads when they share the head. */
static void round_backward(const lsh_head *t, saved_round s)
{
    for (int q = 0; q < t->n; q++)
        t->b.rank[s.order[q]] = q;
    for_positions(t, place_backward_row, t->b.rank, s.w);
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int c = 0; c < t->chunks; c += 2)
        chunk_backward(t, s.P, chunk_at(t, c), 0.0f);
    clear_uncovered_last(t);
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int c = 1; c < t->chunks; c += 2)
        chunk_backward(t, s.P, chunk_at(t, c), 1.0f);
    for_positions(t, unplace_row, t->b.rank, NULL);
}

static void chunked_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    lsh_head t = head_of(call, bh, ws, inner, 1);
    if (t.n == 0)
        return;
    if (t.z.rounds > 1)
        output_dots(&t, saved_of(call, bh, 0).out);
    for (int r = 0; r < t.z.rounds; r++)
        round_backward(&t, saved_of(call, bh, r));
}

/* dq_i += J_i^T dk_i, the unit-length normalisation's Jacobian:
 * (dk - k (k . dk)) / sqrt(|q|^2 + D eps) with k = q inv. */
static void normalisation_backward(const lsh_head *t)
{
    const int D = t->z.D;
#pragma omp parallel for schedule(static) if (t->inner) num_threads(t->call->threads)
    for (int i = 0; i < t->n; i++) {
        const float *q = t->h.q + (size_t)i * D, *dk = t->b.dkacc + (size_t)i * D;
        const float inv = t->b.inv[i];
        float dot = 0.0f;
        for (int d = 0; d < D; d++)
            dot += q[d] * inv * dk[d];
        float *dq = t->h.dq + (size_t)i * D;
        for (int d = 0; d < D; d++)
            dq[d] += (dk[d] - q[d] * inv * dot) * inv;
    }
}

/* ---- lsh-reference: plain loops over each sorted query's window ---- */

static void reference_norms(const lsh_head *t)
{
    for (int i = 0; i < t->n; i++) {
        float sq = 0.0f;
        for (int d = 0; d < t->z.D; d++)
            sq += t->h.q[(size_t)i * t->z.D + d] * t->h.q[(size_t)i * t->z.D + d];
        t->b.inv[i] = 1.0f / sqrtf(sq + KEY_EPS * (float)t->z.D);
    }
}

/* Round r, sorted query s (position i): probabilities into p (window
 * width), output into o (M); returns the log-sum-exp and sets *alone. */
static float reference_query(const lsh_head *t, const int32_t *order, int s, float *p, float *o,
                             int *alone)
{
    const int D = t->z.D, M = t->z.M, C = t->z.C, i = order[s];
    const int w0 = s / C > 0 ? (s / C - 1) * C : 0, w1 = min_int((s / C + 1) * C, t->n);
    const float *qi = t->h.q + (size_t)i * D;
    float max = -INFINITY, self_score = 0.0f;
    for (int a = w0; a < w1; a++) {
        const int j = order[a];
        float dot = 0.0f;
        for (int d = 0; d < D; d++)
            dot += qi[d] * t->h.q[(size_t)j * D + d];
        float score = dot * t->b.inv[j] * t->scale;
        if (j == i)
            self_score = score;
        p[a - w0] = j == i || (t->causal && j > i) ? -INFINITY : score;
        if (p[a - w0] > max)
            max = p[a - w0];
    }
    *alone = max == -INFINITY;
    float sum = 0.0f;
    for (int a = w0; a < w1; a++) {
        p[a - w0] = *alone ? (float)(order[a] == i) : expf(p[a - w0] - max);
        sum += p[a - w0];
    }
    for (int a = w0; a < w1; a++)
        p[a - w0] /= sum;
    for (int m = 0; m < M; m++) {
        float acc = 0.0f;
        for (int a = w0; a < w1; a++)
            acc += p[a - w0] * t->h.v[(size_t)order[a] * M + m];
        o[m] = acc;
    }
    return *alone ? self_score : max + logf(sum);
}

/* Every round's output and log-sum-exp first; then per query the weights
 * over the rounds that count (those with other keys, if any has them). */
static void reference_head_forward(const attn_call *call, int bh, char *ws, int inner)
{
    lsh_head t = head_of(call, bh, ws, inner, 0);
    const int N = t.z.N, M = t.z.M, W = t.z.W, rounds = t.z.rounds;
    lsh_buffers b = t.b;
    if (t.n == 0)
        return;
    reference_norms(&t);
    for (int r = 0; r < rounds; r++) {
        saved_round s = saved_of(call, bh, r);
        int32_t *order = s.order != NULL ? s.order : b.order;
        hash_round(&t, r, order);
        for (int q = 0; q < t.n; q++) {
            const int i = order[q];
            int alone;
            float *p = s.P != NULL ? s.P + (size_t)q * W : b.row;
            b.zs[(size_t)r * N + i] =
                reference_query(&t, order, q, p, b.outs + ((size_t)r * N + i) * M, &alone);
            b.alone[(size_t)r * N + i] = (unsigned char)alone;
        }
    }
    for (int i = 0; i < t.n; i++) {
        int other = 0;
        for (int r = 0; r < rounds; r++)
            other |= !b.alone[(size_t)r * N + i];
        float max = -INFINITY, sum = 0.0f;
        for (int r = 0; r < rounds; r++)
            if (!(other && b.alone[(size_t)r * N + i]) && b.zs[(size_t)r * N + i] > max)
                max = b.zs[(size_t)r * N + i];
        for (int r = 0; r < rounds; r++) {
            float *z = &b.zs[(size_t)r * N + i]; /* becomes the round's unnormalised weight */
            *z = other && b.alone[(size_t)r * N + i] ? 0.0f : expf(*z - max);
            sum += *z;
        }
        for (int m = 0; m < M; m++) {
            float acc = 0.0f;
            for (int r = 0; r < rounds; r++)
                acc += b.zs[(size_t)r * N + i] * b.outs[((size_t)r * N + i) * M + m];
            t.h.out[(size_t)i * M + m] = acc / sum;
        }
        b.l[i] = sum;
    }
    if (call->saved == NULL)
        return;
    for (int r = 0; r < rounds; r++) {
        saved_round s = saved_of(call, bh, r);
        for (int q = 0; q < t.n; q++)
            s.w[q] = b.zs[(size_t)r * N + s.order[q]] / b.l[s.order[q]];
    }
    float *saved_out = saved_of(call, bh, 0).out;
    if (saved_out != NULL)
        memcpy(saved_out, t.h.out, sizeof(float) * (size_t)t.n * M);
}

/* delta_i = g_i . out_i from the saved rounds alone (the saved output is
 * the chunked kernel's shortcut): sum over rounds r of w_ri sum_j P_rij
 * (g_i . v_j). */
static void reference_output_dots(const lsh_head *t, int bh)
{
    const int M = t->z.M, C = t->z.C, W = t->z.W;
    memset(t->b.delta, 0, sizeof(float) * (size_t)t->n);
    for (int r = 0; r < t->z.rounds; r++) {
        saved_round s = saved_of(t->call, bh, r);
        for (int q = 0; q < t->n; q++) {
            const int i = s.order[q], w0 = q / C > 0 ? (q / C - 1) * C : 0;
            const int w1 = min_int((q / C + 1) * C, t->n);
            const float *g = t->h.d_out + (size_t)i * M;
            float dot = 0.0f;
            for (int a = w0; a < w1; a++) {
                const float *v = t->h.v + (size_t)s.order[a] * M;
                float gv = 0.0f;
                for (int m = 0; m < M; m++)
                    gv += g[m] * v[m];
                dot += s.P[(size_t)q * W + a - w0] * gv;
            }
            t->b.delta[i] += s.w[q] * dot;
        }
    }
}

/* Per round and sorted query: dS_ij = w P_ij (g_i . v_j - g_i . out_i). */
static void reference_head_backward(const attn_call *call, int bh, char *ws, int inner)
{
    lsh_head t = head_of(call, bh, ws, inner, 1);
    const int D = t.z.D, M = t.z.M, C = t.z.C, W = t.z.W;
    reference_norms(&t);
    reference_output_dots(&t, bh);
    memset(t.b.dkacc, 0, sizeof(float) * (size_t)t.n * D);
    for (int r = 0; r < t.z.rounds; r++) {
        saved_round s = saved_of(call, bh, r);
        for (int q = 0; q < t.n; q++) {
            const int i = s.order[q], w0 = q / C > 0 ? (q / C - 1) * C : 0;
            const int w1 = min_int((q / C + 1) * C, t.n);
            const float *g = t.h.d_out + (size_t)i * M, *qi = t.h.q + (size_t)i * D;
            for (int a = w0; a < w1; a++) {
                const int j = s.order[a];
                const float p = s.P[(size_t)q * W + a - w0] * s.w[q];
                float gv = 0.0f;
                for (int m = 0; m < M; m++) {
                    gv += g[m] * t.h.v[(size_t)j * M + m];
                    t.h.dv[(size_t)j * M + m] += p * g[m];
                }
                const float ds = p * (gv - t.b.delta[i]) * t.scale, inv = t.b.inv[j];
                for (int d = 0; d < D; d++) {
                    t.h.dq[(size_t)i * D + d] += ds * t.h.q[(size_t)j * D + d] * inv;
                    t.b.dkacc[(size_t)j * D + d] += ds * qi[d];
                }
            }
        }
    }
    normalisation_backward(&t);
}

/* ---- variant interface ---- */

/* Draws every round's rotation once (columns spread over the threads), as
 * many columns as the call's longest plan needs, then runs the heads. */
static void lsh_forward(const attn_call *call)
{
    lsh_sizes z = sizes_of(call->attn, call->shape);
    float *R = (float *)call->workspace;
    const uint64_t key = rotation_key(call->shape);
    int cols = 0;
    for (int b = 0; b < call->shape.B; b++) {
        int n = attn_head_rows(call, b * call->shape.H);
        cols = max_int(cols, attn_lsh_plan(&call->attn->config, n).cols);
    }
    const int total = z.rounds * cols;
#pragma omp parallel for schedule(static) num_threads(call->threads)
    for (int rc = 0; rc < total; rc++) {
        int round = rc / cols, column = rc % cols;
        draw_column(R + (size_t)round * z.D * z.cols + column, (size_t)z.cols, z.D, key, round,
                    column);
    }
    attn_kernel_forward(call);
}

static lt_status lsh_check_config(const lt_attn_config *config)
{
    if (config->rounds < 1)
        return lt_fail(LT_E_USAGE, "rounds: LSH attention needs at least 1 hashing round, got %d",
                       config->rounds);
    if (config->chunk < 1)
        return lt_fail(LT_E_USAGE, "chunk: LSH attention's chunk size must be >= 1, got %d",
                       config->chunk);
    if (config->buckets < 0 || (config->buckets > 1 && config->buckets % 2 != 0))
        return lt_fail(LT_E_USAGE,
                       "buckets: expected 0 (derived from the length), 1 or an even count "
                       "(argmax over [xR, -xR] gives two buckets a rotation column), got %d",
                       config->buckets);
    return LT_OK;
}

/* Sum over chunks of rows x window width: the score entries a head of n
 * positions computes per round. */
static double window_area(int n, int C)
{
    if (n == 0)
        return 0.0;
    const double chunks = (double)(((long)n + C - 1) / C), last = n - (chunks - 1) * C;
    const double first = min_int(n, C);
    return (chunks - 1) * (double)C * C + last * last + (double)C * (n - first);
}

/* Model, per head and round (multiply-add = 2): hashing 2 N D b/2 (the
 * rotation's columns), the scores and values 2 N W (D + M) with W =
 * min(2C, N) keys a query (its chunk and the one before), as the published
 * method computes them (causality masks, it skips nothing). Backward's four
 * products (dP, dQ, dK, dV) are twice the attention part; hashes have no
 * backward. */
static double lsh_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    const lsh_sizes z = sizes_of(attn, shape);
    const double N = shape.N, attend = 2.0 * N * z.W * (shape.D + shape.M);
    const double hash = 2.0 * N * shape.D * attn_lsh_plan(&attn->config, shape.N).cols;
    const double per_round = backward ? 2.0 * attend : hash + attend;
    return per_round * z.rounds * shape.B * shape.H;
}

/* Both kernels compute each chunk's window (the first chunk has no look-back,
 * the last may be short) over the head's own n, and hash with sgemm. */
static double lsh_head_flops(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                             int inner)
{
    (void)inner;
    const double attend = 2.0 * window_area(n, attn->config.chunk) * (shape.D + shape.M);
    const double hash = 2.0 * n * shape.D * attn_lsh_plan(&attn->config, n).cols;
    return (backward ? 2.0 * attend : hash + attend) * attn->config.rounds;
}

/* ---- the roof: lsh-chunked's products alone ---- */

/* Rows a thread's products run over: enough chunks to leave the caches as
 * the kernel's long rows do, few enough to measure in milliseconds. */
enum { PRODUCT_ROWS_MAX = 8192, PRODUCT_BLOCKS = 11 };

/* A thread's sorted rows, as the kernel holds them for a round, and its
 * hashing block. */
typedef struct product_rows {
    float *qs, *vs, *gs, *P, *out, *dqs, *dks, *dvs, *block, *rot, *hashed;
} product_rows;

typedef struct products_case {
    int n, C, D, M, W, cols, threads;
    int team; /* threads that ran */
    float scale;
    product_rows *rows; /* one per thread */
} products_case;

/* Chunk c of a thread's rows (chunk_at without a head). */
static chunk product_chunk(const products_case *p, int c)
{
    chunk ch = {.s0 = c * p->C};
    ch.rows = min_int(p->C, p->n - ch.s0);
    ch.w0 = c > 0 ? ch.s0 - p->C : 0;
    ch.wid = ch.s0 + ch.rows - ch.w0;
    return ch;
}

/* A round's products in the kernel's calls and order: the hashing product
 * per block of rows; forward, every chunk's scores (the window in two
 * halves) and values; backward, dP (two halves), dQ, dK and dV, the chunks
 * in round_backward's order with its betas: the even ones, then the odd. */
static void round_products(const products_case *p, const product_rows *r)
{
    const int C = p->C, D = p->D, M = p->M, W = p->W, chunks = (p->n + C - 1) / C;
    for (int r0 = 0; r0 < p->n; r0 += HASH_ROWS)
        lt_sgemm_serial(LT_N, LT_N, min_int(HASH_ROWS, p->n - r0), p->cols, D, 1.0f,
                        r->qs + (size_t)r0 * D, D, r->rot, p->cols, 0.0f, r->hashed, p->cols);
    for (int c = 0; c < chunks; c++) {
        chunk ch = product_chunk(p, c);
        float *P = r->P + (size_t)ch.s0 * W;
        window_product(ch, p->scale, r->qs, r->qs, D, P, W);
        lt_sgemm_serial(LT_N, LT_N, ch.rows, M, ch.wid, 1.0f, P, W, r->vs + (size_t)ch.w0 * M,
                        M, 0.0f, r->out + (size_t)ch.s0 * M, M);
    }
    /* evens store, then odds add */
    for (int k = 0; k < chunks; k++) {
        const int c = k < (chunks + 1) / 2 ? 2 * k : 2 * (k - (chunks + 1) / 2) + 1;
        chunk ch = product_chunk(p, c);
        const float *P = r->P + (size_t)ch.s0 * W;
        const float beta = c % 2 == 1 ? 1.0f : 0.0f;
        window_product(ch, 1.0f, r->gs, r->vs, M, r->block, W);
        lt_sgemm_serial(LT_N, LT_N, ch.rows, D, ch.wid, p->scale, r->block, W,
                        r->qs + (size_t)ch.w0 * D, D, 0.0f, r->dqs + (size_t)ch.s0 * D, D);
        lt_sgemm_serial(LT_T, LT_N, ch.wid, D, ch.rows, p->scale, r->block, W,
                        r->qs + (size_t)ch.s0 * D, D, beta, r->dks + (size_t)ch.w0 * D, D);
        lt_sgemm_serial(LT_T, LT_N, ch.wid, M, ch.rows, 1.0f, P, W,
                        r->gs + (size_t)ch.s0 * M, M, beta, r->dvs + (size_t)ch.w0 * M, M);
    }
}

/* Every thread its own rows; the team that really ran is counted. */
static lt_status run_products(void *ctx)
{
    products_case *p = ctx;
#pragma omp parallel num_threads(p->threads)
    {
#pragma omp single
        p->team = omp_get_num_threads();
        round_products(p, &p->rows[omp_get_thread_num()]);
    }
    return LT_OK;
}

/* A thread's blocks: where each goes and how many floats it holds. */
static void product_blocks(product_rows *r, const products_case *p, float ***slots,
                           size_t *counts)
{
    const size_t n = (size_t)p->n;
    float **at[PRODUCT_BLOCKS] = {&r->qs, &r->vs, &r->gs, &r->P, &r->out, &r->dqs,
                                  &r->dks, &r->dvs, &r->block, &r->rot, &r->hashed};
    const size_t sizes[PRODUCT_BLOCKS] = {
        n * p->D, n * p->M, n * p->M, n * p->W, n * p->M, n * p->D, n * p->D, n * p->M,
        (size_t)p->C * p->W, (size_t)p->D * p->cols, (size_t)HASH_ROWS * p->cols};
    for (int i = 0; i < PRODUCT_BLOCKS; i++) {
        slots[i] = at[i];
        counts[i] = sizes[i];
    }
}

static double lsh_products_gflops(const lt_attn *attn, lt_attn_shape shape, int threads)
{
    if (kernel_of(attn) != CHUNKED)
        return NAN;
    enum { REPEATS = 5 };
    products_case p = {.n = min_int(shape.N, PRODUCT_ROWS_MAX), .C = attn->config.chunk,
                       .D = shape.D, .M = shape.M, .threads = threads,
                       .scale = score_scale(shape.D)};
    p.W = window_stride(&attn->config, p.n);
    p.cols = attn_lsh_plan(&attn->config, p.n).cols;
    float **slots[PRODUCT_BLOCKS];
    size_t counts[PRODUCT_BLOCKS], bytes = lt_mem_rounded(sizeof(product_rows) * threads);
    product_rows probe;
    product_blocks(&probe, &p, slots, counts);
    for (int i = 0; i < PRODUCT_BLOCKS; i++)
        bytes += (size_t)threads * lt_mem_rounded(counts[i] * sizeof(float));
    product_rows *rows = NULL;
    if (lt_mem_plan(bytes, "the LSH products roof") != LT_OK ||
        lt_mem_calloc((void **)&rows, sizeof *rows * (size_t)threads, "LSH products roof") !=
            LT_OK)
        return NAN;
    p.rows = rows;
    lt_status status = LT_OK;
    for (int t = 0; t < threads; t++) { /* zeroed: the values do not change the time */
        product_blocks(&rows[t], &p, slots, counts);
        for (int i = 0; i < PRODUCT_BLOCKS && status == LT_OK; i++)
            status = lt_mem_calloc((void **)slots[i], counts[i] * sizeof(float),
                                   "LSH products roof");
    }
    /* a round's FLOPs as lsh_head_flops counts them: the hashing product,
     * then three times the forward's attention (backward's four are two) */
    const double per_round =
        2.0 * p.n * p.D * p.cols + 3.0 * 2.0 * window_area(p.n, p.C) * (p.D + p.M);
    double samples[REPEATS], gflops = NAN;
    lt_summary summary;
    if (status == LT_OK &&
        lt_time_repeat(&summary, samples, run_products, &p, 1, REPEATS) == LT_OK &&
        summary.median > 0.0)
        gflops = p.team * per_round / summary.median * 1e-9;
    for (int t = 0; t < threads; t++) {
        product_blocks(&rows[t], &p, slots, counts);
        for (int i = 0; i < PRODUCT_BLOCKS; i++)
            lt_mem_free(*slots[i]);
    }
    lt_mem_free(rows);
    return gflops;
}

static const attn_kernel_info lsh_kernels[] = {
    [CHUNKED] = {KERNEL_CHUNKED, ATTN_EITHER, chunked_head_forward, chunked_head_backward, NULL},
    [REFERENCE] = {KERNEL_REFERENCE, ATTN_EITHER, reference_head_forward,
                   reference_head_backward, NULL},
};

const lt_attn_variant lt_attn_lsh_variant = {
    .name = "lsh",
    .kernels = lsh_kernels,
    .kernel_count = 2,
    .kernel_names = "lsh-chunked|lsh-reference",
    .check_config = lsh_check_config,
    .param_count = attn_no_params,
    .init_params = attn_no_init_params,
    .saved_bytes = lsh_saved_bytes,
    .slice_bytes = lsh_slice_bytes,
    .flops = lsh_flops,
    .head_flops = lsh_head_flops,
    .forward = lsh_forward,
    .backward = attn_kernel_backward,
    .products_gflops = lsh_products_gflops,
    .ignores_k = 1,
    .no_recurrence_reason = NO_RECURRENCE_REASON,
};
