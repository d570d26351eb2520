/* Attention core: gradients against finite differences of a double-precision
 * reference, fast kernels against reference kernels, recurrent forms against
 * the all-at-once forward, causality, and refusal of bad configurations,
 * shapes and inputs. */
#include <criterion/criterion.h>

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "attn/attn_internal.h"
#include "attn/measure.h"
#include "check.h"
#include "core/machine.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "kernel_sets.h"

/* ---- a forward/backward run with every buffer it needs ---- */

/* Bytes past the end of workspace and saved buffers that must stay
 * untouched: catches kernels that outgrow their planned sizes. */
#define GUARD_BYTES 256
#define GUARD_BYTE 0xA5

typedef struct run {
    lt_attn attn;
    lt_attn_shape shape;
    size_t nq, nv, np; /* floats in q (= k), v (= out), params */
    float *q, *k, *v, *params, *d_out;
    float *out, *dq, *dk, *dv, *d_params;
    unsigned char *saved, *ws;
    size_t saved_bytes, ws_bytes;
} run;

static float *alloc_floats(size_t n)
{
    void *p = NULL;
    cr_assert_eq(lt_mem_calloc(&p, n * sizeof(float) + 1, "test tensor"), LT_OK);
    return p;
}

static unsigned char *alloc_guarded(size_t bytes)
{
    void *p = NULL;
    cr_assert_eq(lt_mem_alloc(&p, bytes + GUARD_BYTES, "test guarded"), LT_OK);
    memset(p, GUARD_BYTE, bytes + GUARD_BYTES);
    return p;
}

static void assert_guard(const unsigned char *p, size_t bytes, const char *what)
{
    for (size_t i = 0; i < GUARD_BYTES; i++)
        cr_assert_eq(p[bytes + i], GUARD_BYTE, "%s written past its planned %zu bytes", what,
                     bytes);
}

static lt_attn_config config_of(const char *variant, int causal, const char *kernel)
{
    lt_attn_config c = lt_attn_default_config(variant);
    c.causal = causal;
    c.kernel = kernel;
    c.proj_k = 4;
    c.n_max = 23;
    /* lsh: several chunks and rounds even in short test sequences */
    c.chunk = 4;
    c.rounds = 3;
    return c;
}

static lt_attn_shape shape_of(int B, int H, int N, int D, int M)
{
    return (lt_attn_shape){.B = B, .H = H, .N = N, .D = D, .M = M};
}

/* Sets up buffers and random inputs: q, k, v ~ uniform [lo, hi), d_out ~
 * normal(0, 1), params as lt_attn_init_params draws them. */
static void run_setup(run *r, lt_attn_config config, lt_attn_shape shape, unsigned seed, float lo,
                      float hi)
{
    memset(r, 0, sizeof *r);
    cr_assert_eq(lt_attn_init(&r->attn, &config), LT_OK, "%s", lt_last_error());
    r->shape = shape;
    r->nq = (size_t)shape.B * shape.H * shape.N * shape.D;
    r->nv = (size_t)shape.B * shape.H * shape.N * shape.M;
    r->np = lt_attn_param_count(&r->attn);
    r->q = alloc_floats(r->nq);
    r->k = alloc_floats(r->nq);
    r->v = alloc_floats(r->nv);
    r->params = alloc_floats(r->np);
    r->d_out = alloc_floats(r->nv);
    r->out = alloc_floats(r->nv);
    r->dq = alloc_floats(r->nq);
    r->dk = alloc_floats(r->nq);
    r->dv = alloc_floats(r->nv);
    r->d_params = alloc_floats(r->np);
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    lt_rng_fill_uniform(&rng, r->q, (long)r->nq, lo, hi);
    lt_rng_fill_uniform(&rng, r->k, (long)r->nq, lo, hi);
    lt_rng_fill_uniform(&rng, r->v, (long)r->nv, -1.0f, 1.0f);
    lt_rng_fill_normal(&rng, r->d_out, (long)r->nv, 1.0f);
    lt_attn_init_params(&r->attn, r->params, seed);
    r->saved_bytes = lt_attn_saved_bytes(&r->attn, shape);
    r->ws_bytes = lt_attn_workspace_bytes(&r->attn, shape, lt_threads_get());
    r->saved = alloc_guarded(r->saved_bytes);
    r->ws = alloc_guarded(r->ws_bytes);
}

/* Same inputs, another kernel (or configuration of the same variant). */
static void run_setup_like(run *r, const run *like, lt_attn_config config)
{
    run_setup(r, config, like->shape, 1, 0.0f, 1.0f);
    memcpy(r->q, like->q, r->nq * sizeof(float));
    memcpy(r->k, like->k, r->nq * sizeof(float));
    memcpy(r->v, like->v, r->nv * sizeof(float));
    memcpy(r->d_out, like->d_out, r->nv * sizeof(float));
    memcpy(r->params, like->params, r->np * sizeof(float));
}

static void run_forward(run *r)
{
    cr_assert_eq(lt_attn_forward(&r->attn, r->shape, r->out, r->saved, r->ws, r->q, r->k, r->v,
                                 r->params),
                 LT_OK, "%s", lt_last_error());
    assert_guard(r->saved, r->saved_bytes, "saved");
    assert_guard(r->ws, r->ws_bytes, "workspace");
}

/* Backward into gradients pre-filled with 0.25, which is then taken off
 * again: checks that backward adds rather than overwrites. */
#define GRAD_PREFILL 0.25f

static void prefill(float *x, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

static void unfill(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] -= GRAD_PREFILL;
}

static void run_backward(run *r)
{
    prefill(r->dq, r->nq, GRAD_PREFILL);
    prefill(r->dk, r->nq, GRAD_PREFILL);
    prefill(r->dv, r->nv, GRAD_PREFILL);
    prefill(r->d_params, r->np, GRAD_PREFILL);
    cr_assert_eq(lt_attn_backward(&r->attn, r->shape, r->dq, r->dk, r->dv, r->d_params, r->ws,
                                  r->d_out, r->saved, r->q, r->k, r->v, r->params),
                 LT_OK, "%s", lt_last_error());
    assert_guard(r->ws, r->ws_bytes, "workspace");
    unfill(r->dq, r->nq);
    unfill(r->dk, r->nq);
    unfill(r->dv, r->nv);
    unfill(r->d_params, r->np);
}

static void run_free(run *r)
{
    float *tensors[] = {r->q,  r->k,  r->v,  r->params, r->d_out,
                        r->out, r->dq, r->dk, r->dv,     r->d_params};
    for (size_t i = 0; i < sizeof tensors / sizeof tensors[0]; i++)
        lt_mem_free(tensors[i]);
    lt_mem_free(r->saved);
    lt_mem_free(r->ws);
}

/* ---- double-precision reference ---- */

static double phi_d(lt_feature_map map, double x)
{
    switch (map) {
    case LT_FEATURE_ELU: return x > 0 ? x + 1 : exp(x);
    case LT_FEATURE_RELU: return x > 0 ? x : 0;
    default: return x;
    }
}

/* FAVOR+ features of one row in double, from the library's draw of W
 * (m x D, then the key shift): exp(W u - max W u) / sqrt(m) for a query,
 * exp(W u - |u|^2 / 2 - shift) / sqrt(m) for a key, u = x / D^(1/4). */
static void ref_favor(double *out, const double *x, const float *W, int m, int D, int query)
{
    double u[64], top = -INFINITY, half_sq = 0;
    cr_assert_leq(D, 64);
    for (int d = 0; d < D; d++) {
        u[d] = x[d] / pow(D, 0.25);
        half_sq += u[d] * u[d] / 2;
    }
    for (int r = 0; r < m; r++) {
        out[r] = 0;
        for (int d = 0; d < D; d++)
            out[r] += (double)W[(size_t)r * D + d] * u[d];
        top = out[r] > top ? out[r] : top;
    }
    for (int r = 0; r < m; r++)
        out[r] = exp(out[r] - (query ? top : half_sq + W[(size_t)m * D])) / sqrt(m);
}

/* phi(q) . phi(k) of linear and decayed attention; the taylor map by its
 * closed form 1 + s + s^2 / 2, s = q . k / sqrt(D); favor from the rows'
 * features fq, fk (ref_favor). */
static double ref_linear_score(const lt_attn_config *c, const double *q, const double *k,
                               const double *fq, const double *fk, int D)
{
    double a = 0;
    if (c->feature_map == LT_FEATURE_TAYLOR) {
        for (int d = 0; d < D; d++)
            a += q[d] * k[d] / sqrt(D);
        return 1 + a + a * a / 2;
    }
    if (c->feature_map == LT_FEATURE_FAVOR) {
        for (int r = 0; r < c->random_features; r++)
            a += fq[r] * fk[r];
        return a;
    }
    for (int d = 0; d < D; d++)
        a += phi_d(c->feature_map, q[d]) * phi_d(c->feature_map, k[d]);
    return a;
}

/* The decay of head h: RetNet's 1 - 2^(-5 - h) unless decay_gamma is set. */
static double ref_gamma(const lt_attn_config *c, int h)
{
    return c->decay_gamma > 0 ? c->decay_gamma : 1 - pow(2, -5 - h);
}

/* out (B,H,N,M) from x = [q | k | v | params]. Per (batch, head) and query
 * row i, the row attends over "slots" (the keys and values, or Linformer's
 * projections of them): softmax of scaled dot products, or for linear
 * attention the quadratic form a_j = phi(q_i) . phi(k_j) (times
 * gamma^(i - j) with decay), out_i = sum_j a_j v_j / (sum_j a_j + eps).
 * Causal rows see slots j <= i. */
static void ref_attention(double *out, const double *x, const lt_attn_config *c, lt_attn_shape s)
{
    const int N = s.N, D = s.D, M = s.M;
    const int linformer = strcmp(c->variant, "linformer") == 0;
    const int decay = strcmp(c->variant, "decay") == 0;
    const int linear = strcmp(c->variant, "linear") == 0 || decay;
    const int favor = linear && c->feature_map == LT_FEATURE_FAVOR, m = c->random_features;
    float *W = malloc(sizeof(float) * (attn_features_floats(c, D) + 1));
    attn_features_draw(W, c, D, s.seed, s.layer);
    double *fq = malloc(sizeof(double) * ((size_t)N * m + 1));
    double *fk = malloc(sizeof(double) * ((size_t)N * m + 1));
    const int slots = linformer ? c->proj_k : N;
    const size_t nq = (size_t)s.B * s.H * N * D, nv = (size_t)s.B * s.H * N * M;
    const double *E = x + 2 * nq + nv, *F = E + (size_t)c->proj_k * c->n_max;
    double *keys = malloc(sizeof(double) * (size_t)slots * D);
    double *vals = malloc(sizeof(double) * (size_t)slots * M);
    double *w = malloc(sizeof(double) * (size_t)slots);
    for (int bh = 0; bh < s.B * s.H; bh++) {
        const double *q = x + (size_t)bh * N * D, *k = x + nq + (size_t)bh * N * D;
        const double *v = x + 2 * nq + (size_t)bh * N * M;
        for (int j = 0; j < slots; j++) {
            for (int d = 0; d < D; d++) {
                double acc = 0;
                for (int n = 0; linformer && n < N; n++)
                    acc += E[(size_t)j * c->n_max + n] * k[(size_t)n * D + d];
                keys[(size_t)j * D + d] = linformer ? acc : k[(size_t)j * D + d];
            }
            for (int m = 0; m < M; m++) {
                double acc = 0;
                for (int n = 0; linformer && n < N; n++)
                    acc += F[(size_t)j * c->n_max + n] * v[(size_t)n * M + m];
                vals[(size_t)j * M + m] = linformer ? acc : v[(size_t)j * M + m];
            }
        }
        for (int i = 0; favor && i < N; i++) {
            ref_favor(fq + (size_t)i * m, q + (size_t)i * D, W, m, D, 1);
            ref_favor(fk + (size_t)i * m, k + (size_t)i * D, W, m, D, 0);
        }
        for (int i = 0; i < N; i++) {
            int cols = c->causal ? i + 1 : slots;
            double max = -INFINITY, sum = 0;
            for (int j = 0; j < cols; j++) {
                double a = 0;
                for (int d = 0; !linear && d < D; d++)
                    a += q[(size_t)i * D + d] * keys[(size_t)j * D + d] / sqrt(D);
                if (linear)
                    a = ref_linear_score(c, q + (size_t)i * D, keys + (size_t)j * D,
                                         fq + (size_t)i * m, fk + (size_t)j * m, D);
                if (decay)
                    a *= pow(ref_gamma(c, bh % s.H), i - j);
                w[j] = a;
                max = a > max ? a : max;
            }
            for (int j = 0; j < cols; j++) {
                if (!linear)
                    w[j] = exp(w[j] - max);
                sum += w[j];
            }
            if (linear)
                sum += c->eps;
            for (int m = 0; m < M; m++) {
                double acc = 0;
                for (int j = 0; j < cols; j++)
                    acc += w[j] * vals[(size_t)j * M + m];
                out[((size_t)bh * N + i) * M + m] = acc / sum;
            }
        }
    }
    free(keys);
    free(vals);
    free(w);
    free(W);
    free(fq);
    free(fk);
}

typedef struct ref_loss_ctx {
    const lt_attn_config *config;
    lt_attn_shape shape;
    const double *weights; /* d_out */
    double *out;
} ref_loss_ctx;

/* loss = sum out * d_out, so its gradient is what backward gets from d_out. */
static double ref_loss(const double *x, void *ctx_)
{
    ref_loss_ctx *ctx = ctx_;
    ref_attention(ctx->out, x, ctx->config, ctx->shape);
    size_t n = (size_t)ctx->shape.B * ctx->shape.H * ctx->shape.N * ctx->shape.M;
    double loss = 0;
    for (size_t i = 0; i < n; i++)
        loss += ctx->out[i] * ctx->weights[i];
    return loss;
}

static double *to_double(const float *x, size_t n)
{
    double *d = malloc(sizeof(double) * (n + 1));
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* Gradient errors are measured against max(max |reference|, GRAD_FLOOR):
 * with O(1) inputs this only matters where a gradient is ~0 throughout,
 * e.g. dq of linear attention over one token (out = v a / (a + eps)), whose
 * float32 value is pure rounding of cancelling O(1) terms. */
#define GRAD_FLOOR 1e-3

/* Forward against the double reference, then every gradient against
 * central differences of the reference loss. */
static void check_against_reference(lt_attn_config config, lt_attn_shape shape, float lo, float hi,
                                    double bound)
{
    run r;
    run_setup(&r, config, shape, 7, lo, hi);
    run_forward(&r);
    run_backward(&r);

    size_t n = 2 * r.nq + r.nv + r.np;
    double *x = malloc(sizeof(double) * n), *grad = malloc(sizeof(double) * n);
    const float *parts[] = {r.q, r.k, r.v, r.params};
    size_t sizes[] = {r.nq, r.nq, r.nv, r.np}, at = 0;
    for (int p = 0; p < 4; p++)
        for (size_t i = 0; i < sizes[p]; i++)
            x[at++] = parts[p][i];
    double *weights = to_double(r.d_out, r.nv), *out = malloc(sizeof(double) * (r.nv + 1));
    ref_loss_ctx ctx = {&r.attn.config, shape, weights, out};

    ref_attention(out, x, &r.attn.config, shape);
    double out_err = check_rel_error_f(r.out, out, r.nv, 1e-6);
    cr_expect_lt(out_err, 1e-5, "%s: forward relative error %g", r.attn.config.kernel, out_err);

    check_fd_gradient(grad, x, n, ref_loss, &ctx);
    const char *names[] = {"dq", "dk", "dv", "dE", "dF"};
    const float *analytic[] = {r.dq, r.dk, r.dv, r.d_params, r.d_params + r.np / 2};
    size_t offsets[] = {0, r.nq, 2 * r.nq, 2 * r.nq + r.nv, 2 * r.nq + r.nv + r.np / 2};
    size_t counts[] = {r.nq, r.nq, r.nv, r.np / 2, r.np / 2};
    for (int t = 0; t < 5; t++) {
        if (counts[t] == 0)
            continue;
        double err = check_rel_error_f(analytic[t], grad + offsets[t], counts[t], GRAD_FLOOR);
        cr_expect_lt(err, bound, "%s %s %s N=%d: %s relative error %g", r.attn.config.kernel,
                     lt_attn_feature_map_name(r.attn.config.feature_map),
                     r.attn.config.causal ? "causal" : "non-causal", shape.N, names[t], err);
    }
    free(x);
    free(grad);
    free(weights);
    free(out);
    run_free(&r);
}

/* float32 analytic gradients against double central differences */
#define GRAD_BOUND 1e-4

static void check_all_lengths(lt_attn_config config, int max_n)
{
    /* N = 1, a length that is no power of two, and one past a block or chunk */
    int lengths[] = {1, 11, max_n};
    for (int i = 0; i < 3; i++)
        check_against_reference(config, shape_of(2, 2, lengths[i], 5, 3), -1.0f, 1.0f,
                                GRAD_BOUND);
}

Test(attn_grad, softmax_noncausal) { check_all_lengths(config_of("softmax", 0, NULL), 19); }
Test(attn_grad, softmax_causal) { check_all_lengths(config_of("softmax", 1, NULL), 19); }
Test(attn_grad, softmax_tiled)
{
    check_all_lengths(config_of("softmax", 0, "softmax-tiled"), 19);
    check_all_lengths(config_of("softmax", 1, "softmax-tiled"), 19);
}
Test(attn_grad, softmax_reference_kernel)
{
    check_all_lengths(config_of("softmax", 0, "softmax-reference"), 13);
    check_all_lengths(config_of("softmax", 1, "softmax-reference"), 13);
}
Test(attn_grad, linear_noncausal) { check_all_lengths(config_of("linear", 0, NULL), 19); }
Test(attn_grad, linear_causal_chunked)
{
    /* two full chunks plus a partial one */
    int n = 2 * attn_linear_chunk(3, 2) + 6;
    check_against_reference(config_of("linear", 1, "linear-causal-chunked"), shape_of(1, 1, n, 3, 2),
                            -1.0f, 1.0f, GRAD_BOUND);
    check_all_lengths(config_of("linear", 1, "linear-causal-chunked"), 11);
}
Test(attn_grad, linear_causal_prefix)
{
    check_all_lengths(config_of("linear", 1, "linear-causal-prefix"), 17);
}
Test(attn_grad, linear_reference_kernel)
{
    check_all_lengths(config_of("linear", 0, "linear-reference"), 13);
    check_all_lengths(config_of("linear", 1, "linear-reference"), 13);
}
Test(attn_grad, linear_other_feature_maps)
{
    /* positive-leaning inputs keep relu's normaliser away from 0 */
    lt_feature_map maps[] = {LT_FEATURE_RELU, LT_FEATURE_IDENTITY};
    const char *kernels[] = {"linear-causal-chunked", "linear-causal-prefix"};
    for (int m = 0; m < 2; m++) {
        lt_attn_config c = config_of("linear", 0, NULL);
        c.feature_map = maps[m];
        check_against_reference(c, shape_of(1, 2, 13, 5, 3), 0.05f, 1.0f, GRAD_BOUND);
        for (int k = 0; k < 2; k++) {
            c = config_of("linear", 1, kernels[k]);
            c.feature_map = maps[m];
            check_against_reference(c, shape_of(1, 2, 13, 5, 3), 0.05f, 1.0f, GRAD_BOUND);
        }
    }
}
Test(attn_grad, linformer)
{
    /* dE and dF sum over 2 x 2 heads; N < n_max uses the first columns */
    check_all_lengths(config_of("linformer", 0, NULL), 23);
}

/* ---- fast kernels against reference kernels ---- */

static void expect_close(const float *a, const float *b, size_t n, double bound, const char *what)
{
    double err = check_rel_error_ff(a, b, n, 1e-6);
    cr_expect_lt(err, bound, "%s: relative difference %g", what, err);
}

/* Runs `fast` and `reference` on the same inputs, forward and backward, and
 * holds them equal. */
static void compare_kernels(lt_attn_config fast, lt_attn_config reference, lt_attn_shape shape,
                            double bound)
{
    run a, b;
    run_setup(&a, fast, shape, 11, -1.0f, 1.0f);
    run_setup_like(&b, &a, reference);
    run_forward(&a);
    run_forward(&b);
    run_backward(&a);
    run_backward(&b);
    char what[160];
    const char *names[] = {"out", "dq", "dk", "dv"};
    const float *xa[] = {a.out, a.dq, a.dk, a.dv}, *xb[] = {b.out, b.dq, b.dk, b.dv};
    size_t counts[] = {a.nv, a.nq, a.nq, a.nv};
    for (int t = 0; t < 4; t++) {
        snprintf(what, sizeof what, "%s vs %s, N=%d, %d threads: %s", a.attn.config.kernel,
                 b.attn.config.kernel, shape.N, lt_threads_get(), names[t]);
        expect_close(xa[t], xb[t], counts[t], bound, what);
    }
    run_free(&a);
    run_free(&b);
}

/* Heads across threads (B*H = 4 >= 2 threads) and heads one at a time with
 * their own loops threaded (B*H = 1 < 3 threads). */
static void compare_kernels_both_plans(lt_attn_config fast, lt_attn_config reference, int N,
                                       double bound)
{
    cr_assert_eq(lt_threads_set(2), LT_OK);
    compare_kernels(fast, reference, shape_of(2, 2, N, 6, 5), bound);
    cr_assert_eq(lt_threads_set(3), LT_OK);
    compare_kernels(fast, reference, shape_of(1, 1, N, 6, 5), bound);
}

/* Between two blocked kernels, and against the plain-loop references: the
 * linear reference sums N cancelling float terms per gradient entry
 * directly, which costs about 1e-5 relative at N = 300 (against a double
 * reference the GEMM kernel is within 1e-6 there, the plain loops 1e-5). */
#define SAME_BOUND 1e-5
#define LINEAR_REFERENCE_BOUND 1e-4

Test(attn_kernels, softmax_gemm_equals_reference)
{
    for (int causal = 0; causal <= 1; causal++)
        compare_kernels_both_plans(config_of("softmax", causal, "softmax-gemm"),
                                   config_of("softmax", causal, "softmax-reference"), 300,
                                   SAME_BOUND);
}

Test(attn_kernels, softmax_tiled_equals_reference_and_gemm)
{
    /* 300 rows: partial query blocks and key tiles; 1 row: one of each */
    for (int causal = 0; causal <= 1; causal++) {
        lt_attn_config tiled = config_of("softmax", causal, "softmax-tiled");
        compare_kernels_both_plans(tiled, config_of("softmax", causal, "softmax-reference"), 300,
                                   SAME_BOUND);
        compare_kernels_both_plans(tiled, config_of("softmax", causal, "softmax-gemm"), 300,
                                   SAME_BOUND);
        compare_kernels_both_plans(tiled, config_of("softmax", causal, "softmax-gemm"), 1,
                                   SAME_BOUND);
    }
}

Test(attn_kernels, linear_gemm_equals_reference)
{
    compare_kernels_both_plans(config_of("linear", 0, "linear-gemm"),
                               config_of("linear", 0, "linear-reference"), 300,
                               LINEAR_REFERENCE_BOUND);
}

Test(attn_kernels, linear_causal_kernels_equal_masked_reference)
{
    compare_kernels_both_plans(config_of("linear", 1, "linear-causal-prefix"),
                               config_of("linear", 1, "linear-reference"), 200,
                               LINEAR_REFERENCE_BOUND);
    compare_kernels_both_plans(config_of("linear", 1, "linear-causal-chunked"),
                               config_of("linear", 1, "linear-reference"), 200,
                               LINEAR_REFERENCE_BOUND);
}

Test(attn_kernels, linear_chunked_equals_prefix)
{
    /* several chunks, the last one partial */
    compare_kernels_both_plans(config_of("linear", 1, "linear-causal-chunked"),
                               config_of("linear", 1, "linear-causal-prefix"), 333, SAME_BOUND);
}

/* The same bits from 1, 2 and 3 threads, with heads across threads and
 * heads sharing threads, parameter gradients included. */
static void check_same_bits_for_any_threads(lt_attn_config config, lt_attn_shape shape)
{
    run first;
    memset(&first, 0, sizeof first); /* set at threads == 1; gcc cannot see that */
    for (int threads = 1; threads <= 3; threads++) {
        cr_assert_eq(lt_threads_set(threads), LT_OK);
        run r;
        run_setup(&r, config, shape, 23, -1.0f, 1.0f);
        run_forward(&r);
        run_backward(&r);
        if (threads == 1) {
            first = r;
            continue;
        }
        const float *a[] = {r.out, r.dq, r.dk, r.dv, r.d_params};
        const float *b[] = {first.out, first.dq, first.dk, first.dv, first.d_params};
        const char *names[] = {"out", "dq", "dk", "dv", "d_params"};
        size_t counts[] = {r.nv, r.nq, r.nq, r.nv, r.np};
        for (int t = 0; t < 5; t++)
            cr_expect(memcmp(a[t], b[t], counts[t] * sizeof(float)) == 0,
                      "%s, B=%d H=%d N=%d D=%d: %s from %d threads differs from 1 thread's",
                      r.attn.config.kernel, shape.B, shape.H, shape.N, shape.D, names[t],
                      threads);
        run_free(&r);
    }
    run_free(&first);
}

/* Every kernel but the references, on narrow heads and on heads wide
 * enough that OpenBLAS would share a product between threads, under every
 * kernel set the CPU runs. B*H = 1 shares each head between threads; B*H = 2
 * spreads heads over 1 and 2 threads and shares them among 3. */
Test(attn_kernels, kernels_same_for_any_threads)
{
    check_every_kernel_set();
    lt_attn_config configs[] = {config_of("softmax", 0, "softmax-gemm"),
                                config_of("softmax", 1, "softmax-gemm"),
                                config_of("softmax", 0, "softmax-tiled"),
                                config_of("softmax", 1, "softmax-tiled"),
                                config_of("linear", 0, "linear-gemm"),
                                config_of("linear", 1, "linear-causal-chunked"),
                                config_of("linear", 1, "linear-causal-prefix"),
                                config_of("linformer", 0, NULL)};
    const lt_attn_shape shapes[] = {shape_of(1, 1, 333, 6, 5), shape_of(1, 2, 333, 6, 5),
                                    shape_of(1, 1, 300, 48, 40), shape_of(1, 2, 300, 48, 40)};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        configs[i].proj_k = 32; /* linformer's */
        configs[i].n_max = 333;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            check_same_bits_for_any_threads(configs[i], shapes[s]);
    }
}

/* ltbench's kernel sets with fused multiply-adds (avx512, avx2: their
 * tiles and vector widths differ, their sums' order does not) give the
 * kernels the same bits, forward and backward; SSE2's, without fused
 * multiply-adds, is held to the others' values. A build with one set
 * checks nothing across sets: its other tests hold that set to the
 * references. */
Test(attn_kernels, kernels_same_bits_on_every_fused_kernel_set)
{
    const lt_kernel_set was = lt_kernels_active();
    const lt_attn_config configs[] = {config_of("linear", 0, "linear-gemm"),
                                      config_of("linear", 1, "linear-causal-chunked"),
                                      config_of("linear", 1, "linear-causal-prefix"),
                                      config_of("decay", 1, "decay-causal-chunked"),
                                      config_of("softmax", 0, "softmax-gemm"),
                                      config_of("softmax", 1, "softmax-gemm")};
    const lt_attn_shape shapes[] = {shape_of(1, 2, 333, 6, 5), shape_of(1, 2, 300, 64, 64),
                                    shape_of(1, 1, 100, 48, 40)};
    cr_assert_eq(lt_threads_set(2), LT_OK);
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            run first;
            memset(&first, 0, sizeof first); /* set by the first fused set; gcc cannot see that */
            int have_first = 0;
            for (int order = 0; order < 2 * LT_KERNEL_SETS; order++) {
                int fused;
                if (!check_use_kernel_set_in_order(order, &fused))
                    continue;
                run r;
                lt_attn_config config = configs[c];
                config.n_max = shapes[sh].N;
                run_setup(&r, config, shapes[sh], 29, -1.0f, 1.0f);
                run_forward(&r);
                run_backward(&r);
                if (!have_first && fused) {
                    first = r;
                    have_first = 1;
                    continue;
                }
                if (!have_first) { /* a build without fused sets: nothing to compare with */
                    run_free(&r);
                    continue;
                }
                const float *a[] = {r.out, r.dq, r.dk, r.dv};
                const float *b[] = {first.out, first.dq, first.dk, first.dv};
                const char *names[] = {"out", "dq", "dk", "dv"};
                size_t counts[] = {r.nv, r.nq, r.nq, r.nv};
                for (int t = 0; t < 4; t++) {
                    if (fused)
                        cr_expect(memcmp(a[t], b[t], counts[t] * sizeof(float)) == 0,
                                  "%s N=%d D=%d: %s under %s differs from the first fused set's",
                                  config.kernel, shapes[sh].N, shapes[sh].D, names[t],
                                  lt_kernels_name(lt_kernels_active()));
                    else {
                        double worst = 0;
                        for (size_t e = 0; e < counts[t]; e++) {
                            double d = fabs((double)a[t][e] - b[t][e]) / (fabs(b[t][e]) + 1e-3);
                            worst = d > worst ? d : worst;
                        }
                        cr_expect_lt(worst, 1e-4, "%s N=%d D=%d: %s under %s: %g off", config.kernel,
                                     shapes[sh].N, shapes[sh].D, names[t],
                                     lt_kernels_name(lt_kernels_active()), worst);
                    }
                }
                run_free(&r);
            }
            if (have_first)
                run_free(&first);
        }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}

/* linear-gemm cuts a head into chunks of 1024 rows and sums their records:
 * 2085 rows are three chunks, the last partial, spread over threads or
 * shared by them. Shorter tests never leave the first chunk. The forward is
 * held to the double reference; the gradients to the plain float loops,
 * whose own rounding grows with N (1.6e-4 measured here, 1e-5 at N = 300),
 * while a chunk dropped or counted twice is an O(1) error. */
#define LONG_LINEAR_REFERENCE_BOUND 1e-3

Test(attn_kernels, linear_gemm_several_chunks)
{
    const int N = 2 * 1024 + 37;
    lt_attn_config gemm = config_of("linear", 0, "linear-gemm");
    compare_kernels_both_plans(gemm, config_of("linear", 0, "linear-reference"), N,
                               LONG_LINEAR_REFERENCE_BOUND);

    cr_assert_eq(lt_threads_set(2), LT_OK);
    run r;
    run_setup(&r, gemm, shape_of(1, 2, N, 6, 5), 5, -1.0f, 1.0f);
    run_forward(&r);
    double *x = malloc(sizeof(double) * (2 * r.nq + r.nv + r.np + 1));
    double *out = malloc(sizeof(double) * (r.nv + 1));
    size_t at = 0;
    for (size_t i = 0; i < r.nq; i++)
        x[at++] = r.q[i];
    for (size_t i = 0; i < r.nq; i++)
        x[at++] = r.k[i];
    for (size_t i = 0; i < r.nv; i++)
        x[at++] = r.v[i];
    ref_attention(out, x, &r.attn.config, r.shape);
    double err = check_rel_error_f(r.out, out, r.nv, 1e-6);
    cr_expect_lt(err, 1e-5, "linear-gemm N=%d: forward relative error %g", N, err);
    free(x);
    free(out);
    run_free(&r);

    check_same_bits_for_any_threads(gemm, shape_of(1, 1, N, 6, 5));
    check_same_bits_for_any_threads(gemm, shape_of(1, 2, N, 6, 5));
}

Test(attn_kernels, forward_without_saved_matches)
{
    /* inference only (saved = NULL) takes another path through the workspace */
    const char *variants[] = {"softmax", "linear", "linear", "linformer", "lsh", "lsh"};
    int causal[] = {1, 0, 1, 0, 1, 0};
    for (int i = 0; i < 6; i++) {
        run r;
        run_setup(&r, config_of(variants[i], causal[i], NULL), shape_of(1, 3, 21, 4, 6), 3,
                  -1.0f, 1.0f);
        run_forward(&r);
        float *with_saved = malloc(sizeof(float) * r.nv);
        memcpy(with_saved, r.out, sizeof(float) * r.nv);
        cr_assert_eq(lt_attn_forward(&r.attn, r.shape, r.out, NULL, r.ws, r.q, r.k, r.v, r.params),
                     LT_OK, "%s", lt_last_error());
        assert_guard(r.ws, r.ws_bytes, "workspace");
        cr_expect_arr_eq(r.out, with_saved, sizeof(float) * r.nv, "%s", r.attn.config.kernel);
        free(with_saved);
        run_free(&r);
    }
}

Test(attn_kernels, identity_map_equals_quadratic_form)
{
    /* non-causal linear attention with phi(x) = x is (Q K^T) V normalised by
     * the row sums of Q K^T; positive inputs keep those sums away from 0 */
    lt_attn_config c = config_of("linear", 0, NULL);
    c.feature_map = LT_FEATURE_IDENTITY;
    lt_attn_shape s = shape_of(1, 2, 37, 5, 4);
    run r;
    run_setup(&r, c, s, 9, 0.1f, 1.0f);
    run_forward(&r);
    double *ref = malloc(sizeof(double) * r.nv);
    for (int bh = 0; bh < 2; bh++)
        for (int i = 0; i < s.N; i++) {
            double row_sum = 0, acc[4] = {0};
            for (int j = 0; j < s.N; j++) {
                double a = 0;
                for (int d = 0; d < s.D; d++)
                    a += (double)r.q[((size_t)bh * s.N + i) * s.D + d] *
                         r.k[((size_t)bh * s.N + j) * s.D + d];
                row_sum += a;
                for (int m = 0; m < s.M; m++)
                    acc[m] += a * r.v[((size_t)bh * s.N + j) * s.M + m];
            }
            for (int m = 0; m < s.M; m++)
                ref[((size_t)bh * s.N + i) * s.M + m] = acc[m] / row_sum;
        }
    double err = check_rel_error_f(r.out, ref, r.nv, 1e-6);
    cr_expect_lt(err, 1e-5, "identity feature map vs (QK^T)V / rowsum: %g", err);
    free(ref);
    run_free(&r);
}

/* ---- recurrent form ---- */

/* A fresh recurrent state for `attn` (freed by the caller). */
static void *new_state(const lt_attn *attn, int B, int H, int D, int M, int max_steps)
{
    size_t bytes;
    cr_assert_eq(lt_attn_state_bytes(attn, B, H, D, M, max_steps, &bytes), LT_OK, "%s",
                 lt_last_error());
    void *state;
    cr_assert_eq(lt_mem_alloc(&state, bytes, "state"), LT_OK);
    cr_assert_eq(lt_attn_state_init(attn, state, B, H, D, M, max_steps, 0, 0), LT_OK, "%s",
                 lt_last_error());
    return state;
}

/* Causal forward all at once, then the same tokens one step at a time. */
static void check_steps_match_forward_shape(lt_attn_config config, lt_attn_shape s, double bound)
{
    run r;
    run_setup(&r, config, s, 13, -1.0f, 1.0f);
    run_forward(&r);
    int heads = s.B * s.H;
    void *state = new_state(&r.attn, s.B, s.H, s.D, s.M, s.N);
    float *q = alloc_floats((size_t)heads * s.D), *k = alloc_floats((size_t)heads * s.D);
    float *v = alloc_floats((size_t)heads * s.M), *out = alloc_floats((size_t)heads * s.M);
    float *stepped = alloc_floats(r.nv);
    for (int i = 0; i < s.N; i++) {
        for (int bh = 0; bh < heads; bh++) {
            memcpy(q + bh * s.D, r.q + ((size_t)bh * s.N + i) * s.D, sizeof(float) * s.D);
            memcpy(k + bh * s.D, r.k + ((size_t)bh * s.N + i) * s.D, sizeof(float) * s.D);
            memcpy(v + bh * s.M, r.v + ((size_t)bh * s.N + i) * s.M, sizeof(float) * s.M);
        }
        cr_assert_eq(lt_attn_step(&r.attn, state, out, q, k, v), LT_OK, "%s", lt_last_error());
        for (int bh = 0; bh < heads; bh++)
            memcpy(stepped + ((size_t)bh * s.N + i) * s.M, out + bh * s.M, sizeof(float) * s.M);
    }
    double err = check_rel_error_ff(stepped, r.out, r.nv, 1e-6);
    cr_expect_leq(err, bound, "%s: %d steps vs forward, relative difference %g",
                 r.attn.config.kernel, s.N, err);
    lt_mem_free(state);
    lt_mem_free(q);
    lt_mem_free(k);
    lt_mem_free(v);
    lt_mem_free(out);
    lt_mem_free(stepped);
    run_free(&r);
}

/* Odd sizes (vector tails), and the image experiment's D = M = 32 over more
 * rows than a step scores at once. */
static void check_steps_match_forward(lt_attn_config config, double bound)
{
    check_steps_match_forward_shape(config, shape_of(2, 3, 75, 5, 4), bound);
    check_steps_match_forward_shape(config, shape_of(1, 2, 700, 32, 32), bound);
}

Test(attn_recurrent, linear_prefix_steps_equal_forward_exactly)
{
    /* the step and the prefix kernel share one token update */
    check_steps_match_forward(config_of("linear", 1, "linear-causal-prefix"), 0.0);
}

Test(attn_recurrent, linear_chunked_steps_equal_forward)
{
    check_steps_match_forward(config_of("linear", 1, "linear-causal-chunked"), 1e-5);
}

Test(attn_recurrent, softmax_cache_steps_equal_forward)
{
    check_steps_match_forward(config_of("softmax", 1, NULL), 1e-5);
}

Test(attn_recurrent, linear_state_is_constant_size)
{
    lt_attn a;
    lt_attn_config c = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    size_t small, large;
    cr_assert_eq(lt_attn_state_bytes(&a, 1, 8, 32, 32, 10, &small), LT_OK);
    cr_assert_eq(lt_attn_state_bytes(&a, 1, 8, 32, 32, 100000, &large), LT_OK);
    cr_expect_eq(small, large);
}

/* constant_state says what the state's size does: the same at 1 and at
 * 100000 steps exactly for the variants that claim it. */
Test(attn_recurrent, constant_state_cap_matches_the_state_size)
{
    char names[256];
    snprintf(names, sizeof names, "%s", lt_attn_variant_names());
    int constant = 0, growing = 0;
    for (char *save = NULL, *name = strtok_r(names, "|", &save); name != NULL;
         name = strtok_r(NULL, "|", &save)) {
        lt_attn_caps caps;
        cr_assert_eq(lt_attn_variant_caps(name, &caps), LT_OK);
        if (!caps.recurrent) {
            cr_expect(!caps.constant_state, "%s: no recurrent form, no state", name);
            continue;
        }
        lt_attn a;
        lt_attn_config c = config_of(name, 1, NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK, "%s", lt_last_error());
        size_t small, large;
        cr_assert_eq(lt_attn_state_bytes(&a, 1, 2, 8, 8, 1, &small), LT_OK);
        cr_assert_eq(lt_attn_state_bytes(&a, 1, 2, 8, 8, 100000, &large), LT_OK);
        cr_expect_eq(caps.constant_state, small == large, "%s: %zu bytes at 1 step, %zu at "
                                                          "100000",
                     name, small, large);
        constant += caps.constant_state;
        growing += !caps.constant_state;
    }
    cr_expect_eq(growing, 1, "softmax's cache");
    cr_expect_geq(constant, 5, "linear, decay, delta, gated-delta, gla");
}

Test(attn_recurrent, full_softmax_cache_refused)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    void *state = new_state(&a, 1, 1, 2, 2, 3);
    float x[2] = {0.5f, -0.25f}, out[2];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(lt_attn_step(&a, state, out, x, x, x), LT_OK);
    cr_expect_eq(lt_attn_step(&a, state, out, x, x, x), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "full"), NULL, "%s", lt_last_error());
    lt_mem_free(state);
}

/* Skipped positions of a key/value cache are zero rows: the next step
 * weighs them as keys of score 0 with zero values. */
Test(attn_recurrent, skipped_cache_rows_are_zero_keys_and_values)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    void *state = new_state(&a, 1, 1, 2, 2, 6);
    float k0[2] = {0.5f, -1.0f}, v0[2] = {2.0f, 1.0f}, q[2] = {1.5f, 0.5f};
    float k[2] = {-0.25f, 0.75f}, v[2] = {-1.0f, 3.0f}, out[2];
    cr_assert_eq(lt_attn_step(&a, state, out, k0, k0, v0), LT_OK);
    cr_assert_eq(lt_attn_state_skip(&a, state, 3), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_attn_step(&a, state, out, q, k, v), LT_OK);
    double scale = 1 / sqrt(2.0), s0 = (q[0] * k0[0] + q[1] * k0[1]) * scale;
    double s1 = (q[0] * k[0] + q[1] * k[1]) * scale;
    double total = exp(s0) + 3 + exp(s1);
    for (int m = 0; m < 2; m++)
        cr_expect_float_eq(out[m], (exp(s0) * v0[m] + exp(s1) * v[m]) / total, 1e-6,
                           "column %d: %g", m, out[m]);
    /* 5 of 6 positions used: one more fits, two do not */
    cr_expect_eq(lt_attn_state_skip(&a, state, 2), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "max_steps"), NULL, "%s", lt_last_error());
    cr_expect_eq(lt_attn_state_skip(&a, state, -1), LT_E_INPUT);
    cr_assert_eq(lt_attn_state_skip(&a, state, 1), LT_OK);
    cr_expect_eq(lt_attn_step(&a, state, out, q, k, v), LT_E_USAGE, "the cache is full");
    lt_attn l;
    lt_attn_config cl = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&l, &cl), LT_OK);
    cr_expect_eq(lt_attn_state_skip(&l, state, 0), LT_E_USAGE, "another variant's state");
    lt_mem_free(state);
}

/* A constant-size state is left as it is: the steps after a skip give the
 * bits they give without it. */
Test(attn_recurrent, skipping_leaves_a_constant_state_alone)
{
    const char *variants[] = {"linear", "decay"};
    for (int i = 0; i < 2; i++) {
        lt_attn a;
        lt_attn_config c = config_of(variants[i], 1, NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        void *plain = new_state(&a, 2, 2, 3, 3, 300), *skipped = new_state(&a, 2, 2, 3, 3, 300);
        cr_assert_eq(lt_attn_state_skip(&a, skipped, 250), LT_OK, "%s", lt_last_error());
        lt_rng rng;
        lt_rng_seed(&rng, 5, 0);
        for (int t = 0; t < 5; t++) {
            float q[12], k[12], v[12], a_out[12], b_out[12];
            lt_rng_fill_normal(&rng, q, 12, 1.0f);
            lt_rng_fill_normal(&rng, k, 12, 1.0f);
            lt_rng_fill_normal(&rng, v, 12, 1.0f);
            cr_assert_eq(lt_attn_step(&a, plain, a_out, q, k, v), LT_OK);
            cr_assert_eq(lt_attn_step(&a, skipped, b_out, q, k, v), LT_OK);
            cr_expect_arr_eq(a_out, b_out, sizeof a_out, "%s step %d", variants[i], t);
        }
        cr_expect_eq(lt_attn_state_skip(&a, skipped, 46), LT_E_USAGE, "255 + 46 > 300");
        lt_mem_free(plain);
        lt_mem_free(skipped);
    }
}

Test(attn_recurrent, refused_without_causal_or_a_recurrent_form)
{
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    const char *reason[] = {"causal", "causal", "mixes all positions", "recomputes the prefix"};
    for (int i = 0; i < 4; i++) {
        lt_attn a;
        lt_attn_config c = config_of(variants[i], 0, NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        size_t bytes = 1;
        cr_expect_eq(lt_attn_state_bytes(&a, 1, 1, 4, 4, 8, &bytes), LT_E_USAGE, "%s",
                     variants[i]);
        cr_expect_eq(bytes, 0);
        cr_expect_neq(strstr(lt_last_error(), reason[i]), NULL, "%s", lt_last_error());
    }
}

Test(attn_recurrent, state_of_another_variant_refused)
{
    lt_attn soft, lin;
    lt_attn_config cs = config_of("softmax", 1, NULL), cl = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&soft, &cs), LT_OK);
    cr_assert_eq(lt_attn_init(&lin, &cl), LT_OK);
    void *state = new_state(&soft, 1, 1, 2, 2, 4);
    float x[2] = {0.5f, 0.25f}, out[2];
    cr_expect_eq(lt_attn_step(&lin, state, out, x, x, x), LT_E_USAGE);
    x[1] = NAN;
    cr_expect_eq(lt_attn_step(&soft, state, out, x, x, x), LT_E_NUMERIC);
    lt_mem_free(state);
}

/* ---- causality ---- */

/* Changing token j's query, key and value leaves every output before j
 * bit-for-bit unchanged, and changes output j. */
static void check_causal(lt_attn_config config, int N, int j)
{
    lt_attn_shape s = shape_of(1, 2, N, 4, 3);
    run r;
    run_setup(&r, config, s, 17, -1.0f, 1.0f);
    run_forward(&r);
    float *before = malloc(sizeof(float) * r.nv);
    memcpy(before, r.out, sizeof(float) * r.nv);
    for (int bh = 0; bh < 2; bh++) {
        for (int d = 0; d < s.D; d++) {
            r.q[((size_t)bh * N + j) * s.D + d] += 0.7f;
            r.k[((size_t)bh * N + j) * s.D + d] -= 0.9f;
        }
        for (int m = 0; m < s.M; m++)
            r.v[((size_t)bh * N + j) * s.M + m] += 2.0f;
    }
    run_forward(&r);
    for (int bh = 0; bh < 2; bh++) {
        size_t head = (size_t)bh * N * s.M;
        cr_expect_arr_eq(r.out + head, before + head, sizeof(float) * j * s.M,
                         "%s: outputs before position %d changed", r.attn.config.kernel, j);
        cr_expect_arr_neq(r.out + head + (size_t)j * s.M, before + head + (size_t)j * s.M,
                          sizeof(float) * s.M, "%s: output %d did not change",
                          r.attn.config.kernel, j);
    }
    free(before);
    run_free(&r);
}

Test(attn_causal, later_tokens_never_change_earlier_outputs)
{
    /* j inside a score block / chunk, so the masked part of that block is hit */
    const char *kernels[] = {"softmax-gemm", "softmax-tiled", "softmax-reference",
                             "linear-causal-chunked", "linear-causal-prefix", "linear-reference"};
    for (int i = 0; i < 6; i++) {
        const char *variant = strncmp(kernels[i], "softmax", 7) == 0 ? "softmax" : "linear";
        check_causal(config_of(variant, 1, kernels[i]), 150, 100);
        check_causal(config_of(variant, 1, kernels[i]), 150, 0);
    }
}

/* ---- refusals and edge cases ---- */

Test(attn_usage, bad_configurations_refused)
{
    lt_attn a;
    lt_attn_config c = config_of("linformer", 1, NULL);
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "cannot be causal"), NULL, "%s", lt_last_error());
    c = config_of("sofmax", 0, NULL);
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "softmax|linear|linformer"), NULL);
    c = config_of("linear", 0, "linear-causal-prefix"); /* causal kernel, non-causal config */
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c = config_of("linear", 1, "linear-gemm");
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c = config_of("softmax", 0, "linear-gemm");
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c = config_of("linear", 0, NULL);
    c.eps = -1e-3f;
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c.eps = NAN;
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c = config_of("linformer", 0, NULL);
    c.proj_k = 0;
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    c = config_of("softmax", 2, NULL);
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    lt_feature_map map;
    cr_expect_eq(lt_attn_parse_feature_map(&map, "relu", "--feature-map"), LT_OK);
    cr_expect_eq(map, LT_FEATURE_RELU);
    cr_expect_eq(lt_attn_parse_feature_map(&map, "tanh", "--feature-map"), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "--feature-map"), NULL);
}

Test(attn_usage, every_listed_kernel_is_accepted_and_named)
{
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    for (int i = 0; i < 4; i++) {
        char names[256];
        snprintf(names, sizeof names, "%s", lt_attn_kernel_names(variants[i]));
        for (char *name = strtok(names, "|"); name != NULL; name = strtok(NULL, "|")) {
            int accepted = 0;
            for (int causal = 0; causal <= 1; causal++) {
                lt_attn a;
                lt_attn_config c = config_of(variants[i], causal, name);
                if (lt_attn_init(&a, &c) == LT_OK) {
                    accepted++;
                    cr_expect_str_eq(lt_attn_kernel_name(&a, shape_of(1, 1, 8, 4, 4)), name);
                }
            }
            cr_expect_gt(accepted, 0, "kernel %s accepted by no configuration", name);
        }
    }
    lt_attn a;
    lt_attn_config c = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    cr_expect_str_eq(lt_attn_kernel_name(&a, shape_of(1, 1, 8, 4, 4)), "linear-causal-chunked");
    cr_expect_eq(lt_attn_kernel_names("nope"), NULL);
}

Test(attn_usage, bad_shapes_refused)
{
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    lt_attn_shape bad[] = {shape_of(1, 1, 4, 0, 4), shape_of(1, 1, 4, 4, 0), shape_of(0, 1, 4, 4, 4),
                           shape_of(1, 0, 4, 4, 4), shape_of(1, 1, -1, 4, 4)};
    float x[64] = {0};
    for (int i = 0; i < 4; i++) {
        lt_attn a;
        lt_attn_config c = config_of(variants[i], 0, NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            cr_expect_eq(lt_attn_check_shape(&a, bad[b]), LT_E_INPUT);
            cr_expect_eq(lt_attn_forward(&a, bad[b], x, x, x, x, x, x, x), LT_E_INPUT);
            cr_expect_eq(lt_attn_backward(&a, bad[b], x, x, x, x, x, x, x, x, x, x, x),
                         LT_E_INPUT);
        }
    }
    lt_attn a;
    lt_attn_config c = config_of("linformer", 0, NULL); /* n_max 23 */
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    cr_expect_eq(lt_attn_check_shape(&a, shape_of(1, 1, 23, 4, 4)), LT_OK);
    cr_expect_eq(lt_attn_check_shape(&a, shape_of(1, 1, 24, 4, 4)), LT_E_INPUT);
    cr_expect_neq(strstr(lt_last_error(), "n_max"), NULL, "%s", lt_last_error());
}

Test(attn_usage, non_finite_inputs_refused)
{
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    for (int i = 0; i < 4; i++) {
        run r;
        run_setup(&r, config_of(variants[i], 0, NULL), shape_of(1, 2, 6, 3, 2), 1, -1.0f, 1.0f);
        float *tensors[] = {r.q, r.k, r.v, r.params};
        const char *names[] = {"input q ", "input k ", "input v ", "input params "};
        size_t sizes[] = {r.nq, r.nq, r.nv, r.np};
        float bad_values[] = {NAN, INFINITY, -INFINITY, NAN};
        for (int t = 0; t < 4; t++) {
            if (sizes[t] == 0)
                continue;
            float *slot = &tensors[t][sizes[t] - 1], keep = *slot;
            *slot = bad_values[t];
            lt_status status = lt_attn_forward(&r.attn, r.shape, r.out, r.saved, r.ws, r.q, r.k,
                                               r.v, r.params);
            if (t == 1 && strcmp(variants[i], "lsh") == 0) {
                /* shared query-key: k is never read, so neither scanned nor harmful */
                cr_expect_eq(status, LT_OK, "%s", lt_last_error());
                for (size_t j = 0; j < r.nv; j++)
                    cr_expect(isfinite(r.out[j]), "lsh out[%zu] = %g with a NaN in k", j,
                              r.out[j]);
            } else {
                cr_expect_eq(status, LT_E_NUMERIC);
                cr_expect_neq(strstr(lt_last_error(), names[t]), NULL, "%s", lt_last_error());
            }
            *slot = keep;
        }
        run_forward(&r);
        r.d_out[3] = NAN;
        cr_expect_eq(lt_attn_backward(&r.attn, r.shape, r.dq, r.dk, r.dv, r.d_params, r.ws,
                                      r.d_out, r.saved, r.q, r.k, r.v, r.params),
                     LT_E_NUMERIC);
        cr_expect_neq(strstr(lt_last_error(), "d_out"), NULL, "%s", lt_last_error());
        run_free(&r);
    }
}

/* Inputs large enough that the finiteness scan splits into blocks over the
 * threads: a NaN or Inf anywhere (first, inside a later block, at a block's
 * edge, last) is found, at any thread count. */
Test(attn_usage, non_finite_found_anywhere_in_large_inputs)
{
    run r;
    run_setup(&r, config_of("linear", 0, NULL), shape_of(1, 2, 2100, 32, 4), 1, -1.0f, 1.0f);
    cr_assert_geq(r.nq, (size_t)100000, "large enough for the blocked scan");
    const size_t where[] = {0, 16383, 16384, 70001, r.nq - 1};
    for (int threads = 1; threads <= 3; threads++) {
        cr_assert_eq(lt_threads_set(threads), LT_OK);
        for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
            float keep = r.q[where[w]];
            r.q[where[w]] = w % 2 ? INFINITY : NAN;
            cr_expect_eq(lt_attn_forward(&r.attn, r.shape, r.out, r.saved, r.ws, r.q, r.k, r.v,
                                         r.params),
                         LT_E_NUMERIC, "q[%zu] not finite, %d threads", where[w], threads);
            r.q[where[w]] = keep;
        }
        cr_expect_eq(lt_attn_forward(&r.attn, r.shape, r.out, r.saved, r.ws, r.q, r.k, r.v,
                                     r.params),
                     LT_OK, "%s", lt_last_error());
    }
    cr_assert_eq(lt_threads_set(2), LT_OK);
    run_free(&r);
}

Test(attn_usage, empty_sequence_is_a_no_op)
{
    const char *variants[] = {"softmax", "linear", "linear", "linformer", "lsh"};
    int causal[] = {1, 0, 1, 0, 1};
    for (int i = 0; i < 5; i++) {
        lt_attn a;
        lt_attn_config c = config_of(variants[i], causal[i], NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        lt_attn_shape s = shape_of(2, 2, 0, 4, 4);
        float *params = alloc_floats(lt_attn_param_count(&a));
        float sentinel = 3.0f;
        cr_expect_eq(lt_attn_forward(&a, s, &sentinel, NULL, NULL, NULL, NULL, NULL, params),
                     LT_OK, "%s", lt_last_error());
        cr_expect_eq(lt_attn_backward(&a, s, &sentinel, &sentinel, &sentinel, params, NULL, NULL,
                                      NULL, NULL, NULL, NULL, params),
                     LT_OK, "%s", lt_last_error());
        cr_expect_eq(sentinel, 3.0f);
        lt_mem_free(params);
    }
}

Test(attn_usage, missing_buffers_refused)
{
    run r;
    run_setup(&r, config_of("softmax", 0, NULL), shape_of(1, 1, 5, 3, 3), 1, -1.0f, 1.0f);
    cr_expect_eq(lt_attn_forward(&r.attn, r.shape, r.out, r.saved, NULL, r.q, r.k, r.v, NULL),
                 LT_E_USAGE);
    run_forward(&r);
    cr_expect_eq(lt_attn_backward(&r.attn, r.shape, r.dq, r.dk, r.dv, NULL, r.ws, r.d_out, NULL,
                                  r.q, r.k, r.v, NULL),
                 LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "saved"), NULL, "%s", lt_last_error());
    run_free(&r);
}

/* ---- the vectorisable exp behind softmax and elu ---- */

Test(attn_exp, matches_exp_within_two_ulp)
{
    /* 300k points spread over the normal range [-87.3, 0] */
    const int samples = 300000;
    double worst = 0;
    for (int i = 0; i <= samples; i++) {
        float x = -87.3f * (float)i / (float)samples;
        double ref = exp((double)x);
        float below = (float)ref, above = nextafterf(below, INFINITY);
        double ulp = (double)above - (double)below;
        double err = fabs((double)lt_exp_nonpositive(x) - ref) / ulp;
        worst = err > worst ? err : worst;
    }
    cr_expect_lt(worst, 2.0, "worst error %g ulp", worst);
    cr_expect_eq(lt_exp_nonpositive(0.0f), 1.0f);
    cr_expect_eq(lt_exp_nonpositive(-0.0f), 1.0f);
    cr_expect_eq(lt_exp_nonpositive(-INFINITY), 0.0f);
    cr_expect_eq(lt_exp_nonpositive(-88.0f), 0.0f);
    /* between -87.5 and ln(FLT_MIN) the results are denormals, still close */
    cr_expect_lt(fabs(lt_exp_nonpositive(-87.4f) - exp((double)-87.4f)), 3e-45);
}

/* ---- planning numbers ---- */

Test(attn_plan, memory_grows_as_the_method_says)
{
    lt_attn soft, lin, lform;
    lt_attn_config cs = config_of("softmax", 1, NULL), cl = config_of("linear", 1, NULL);
    lt_attn_config cf = lt_attn_default_config("linformer");
    cr_assert_eq(lt_attn_init(&soft, &cs), LT_OK);
    cr_assert_eq(lt_attn_init(&lin, &cl), LT_OK);
    cr_assert_eq(lt_attn_init(&lform, &cf), LT_OK);
    lt_attn_shape s1 = shape_of(1, 8, 1024, 64, 64), s2 = shape_of(1, 8, 2048, 64, 64);
    /* softmax keeps P: quadruples when N doubles */
    cr_expect_eq(lt_attn_saved_bytes(&soft, s2), 4 * lt_attn_saved_bytes(&soft, s1));
    /* causal linear keeps one normaliser per position; its scratch grows
     * linearly: features phi(Q), phi(K) (2 D floats a token) and a state
     * record (D M + D floats) per chunk, two records in backward */
    cr_expect_eq(lt_attn_saved_bytes(&lin, s1), (size_t)8 * 1024 * sizeof(float));
    lt_attn_shape s3 = shape_of(1, 8, 3072, 64, 64);
    size_t grow = lt_attn_workspace_bytes(&lin, s2, 1) - lt_attn_workspace_bytes(&lin, s1, 1);
    cr_expect_eq(lt_attn_workspace_bytes(&lin, s3, 1) - lt_attn_workspace_bytes(&lin, s2, 1), grow);
    cr_expect_leq(grow, 1024 * (2 * 64 + 2 * (64 * 64 + 64) / 16) * sizeof(float));
    cr_expect_eq(lt_attn_workspace_bytes(&lin, s1, 4), 4 * lt_attn_workspace_bytes(&lin, s1, 1));
    /* linformer keeps N x k probabilities: doubles with N */
    cr_expect_lt(lt_attn_saved_bytes(&lform, s2), 2 * lt_attn_saved_bytes(&lform, s1) + 1);
    cr_expect_gt(lt_attn_saved_bytes(&lform, s2), lt_attn_saved_bytes(&lform, s1));
}

Test(attn_plan, tiled_softmax_memory_is_linear_in_n)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 0, "softmax-tiled");
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    lt_attn_shape s1 = shape_of(1, 8, 4096, 64, 64), s2 = shape_of(1, 8, 8192, 64, 64);
    lt_attn_shape big = shape_of(1, 8, 16384, 64, 64);
    /* saved: one log-sum-exp per row */
    cr_expect_eq(lt_attn_saved_bytes(&a, s1), (size_t)8 * 4096 * sizeof(float));
    /* scratch: D (N floats) a head and two 64-row buffers a thread: N more
     * rows add (1 + 2 x 64) N floats a thread */
    for (int threads = 1; threads <= 4; threads *= 2)
        cr_expect_eq(lt_attn_workspace_bytes(&a, s2, threads) -
                         lt_attn_workspace_bytes(&a, s1, threads),
                     (size_t)threads * 4096 * (1 + 2 * 64) * sizeof(float));
    cr_expect_leq(lt_attn_workspace_bytes(&a, big, 2), (size_t)64 << 20);
}

Test(attn_plan, kernels_allocate_nothing)
{
    /* forward and backward use only the planned buffers: the tracked
     * allocator sees no allocation while they run */
    const char *kernels[] = {"softmax-gemm", "softmax-tiled", "linear-causal-chunked",
                             "linear-gemm", "lsh-chunked"};
    const char *variants[] = {"softmax", "softmax", "linear", "linear", "lsh"};
    int causal[] = {1, 1, 1, 0, 1};
    for (int i = 0; i < 5; i++) {
        run r;
        const char *variant = variants[i];
        run_setup(&r, config_of(variant, causal[i], kernels[i]), shape_of(1, 1, 300, 6, 5), 3,
                  -1.0f, 1.0f);
        size_t before = lt_mem_current();
        lt_mem_reset_peak();
        run_forward(&r);
        run_backward(&r);
        cr_expect_eq(lt_mem_peak(), before, "%s allocated while running", kernels[i]);
        run_free(&r);
    }
}

Test(attn_plan, flop_model)
{
    lt_attn soft, soft_causal, lin;
    lt_attn_config c0 = config_of("softmax", 0, NULL), c1 = config_of("softmax", 1, NULL);
    lt_attn_config cl = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&soft, &c0), LT_OK);
    cr_assert_eq(lt_attn_init(&soft_causal, &c1), LT_OK);
    cr_assert_eq(lt_attn_init(&lin, &cl), LT_OK);
    lt_attn_shape s = shape_of(2, 4, 1000, 32, 16);
    double fwd = lt_attn_flops(&soft, s, 0);
    cr_expect_float_eq(fwd, 2.0 * 1000 * 1000 * (32 + 16) * 8, 1e-9 * fwd);
    cr_expect_float_eq(lt_attn_flops(&soft_causal, s, 0), fwd / 2, 1e-9 * fwd);
    cr_expect_float_eq(lt_attn_flops(&soft, s, 1), 2 * fwd, 1e-9 * fwd);
    double lin_fwd = lt_attn_flops(&lin, s, 0);
    cr_expect_float_eq(lin_fwd, (4.0 * 1000 * 32 * 16 + 3.0 * 1000 * 32) * 8, 1e-9 * lin_fwd);
}

Test(attn_plan, flops_performed)
{
    lt_attn a;
    lt_attn_shape s = shape_of(2, 4, 1000, 32, 16);
    /* kernels that run exactly the model's products */
    const char *variants[] = {"softmax", "linear"}, *kernels[] = {"softmax-gemm", "linear-gemm"};
    for (int i = 0; i < 2; i++) {
        lt_attn_config c = config_of(variants[i], 0, kernels[i]);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        double model = lt_attn_flops(&a, s, 0);
        cr_expect_float_eq(lt_attn_flops_performed(&a, s, 0), model, 1e-9 * model, "%s", kernels[i]);
    }
    /* the chunked kernel adds each chunk's quadratic form to the state products */
    lt_attn_config c = config_of("linear", 1, "linear-causal-chunked");
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    const int C = attn_linear_chunk(32, 16);
    double expect = 0;
    for (int c0 = 0; c0 < 1000; c0 += C) {
        double r = 1000 - c0 < C ? 1000 - c0 : C;
        expect += r * (4.0 * 32 * 16 + 3.0 * 32) + 2.0 * r * r * (32 + 16);
    }
    double performed = lt_attn_flops_performed(&a, s, 0);
    cr_expect_float_eq(performed, 8 * expect, 1e-9 * performed);
    cr_expect_gt(performed, lt_attn_flops(&a, s, 0));
    cr_expect_gt(lt_attn_flops_performed(&a, s, 1), lt_attn_flops(&a, s, 1));
    /* padded sequences add nothing: sequence 1 of length 0 halves the work */
    int32_t lengths[2] = {1000, 0};
    lt_attn_shape padded = s;
    padded.lengths = lengths;
    cr_expect_float_eq(lt_attn_flops_performed(&a, padded, 1),
                       lt_attn_flops_performed(&a, s, 1) / 2, 1e-9 * performed);
    /* tiled softmax: the same forward products as softmax-gemm, more in backward */
    lt_attn gemm, tiled;
    lt_attn_config cg = config_of("softmax", 0, "softmax-gemm"), ct = config_of("softmax", 0, "softmax-tiled");
    cr_assert_eq(lt_attn_init(&gemm, &cg), LT_OK);
    cr_assert_eq(lt_attn_init(&tiled, &ct), LT_OK);
    double fwd = lt_attn_flops_performed(&gemm, s, 0);
    cr_expect_float_eq(lt_attn_flops_performed(&tiled, s, 0), fwd, 1e-9 * fwd);
    cr_expect_gt(lt_attn_flops_performed(&tiled, s, 1), lt_attn_flops_performed(&gemm, s, 1));
}

Test(attn_plan, sgemm_rate_measured)
{
    /* a rate, not a threshold: finite and positive, thread count restored */
    cr_assert_eq(lt_threads_set(2), LT_OK);
    double one = lt_machine_sgemm_gflops(96, 1);
    cr_expect(isfinite(one) && one > 0, "rate %g", one);
    cr_expect_eq(lt_threads_get(), 2);
    cr_expect(isnan(lt_machine_sgemm_gflops(0, 1)));
    cr_expect(lt_machine_blas_core() != NULL && lt_machine_blas_core()[0] != '\0');
}

Test(attn_plan, read_bandwidth_measured)
{
    /* a speed, not a threshold: finite and positive for an array in cache
     * and one of huge pages, the thread count restored, nothing kept */
    cr_assert_eq(lt_threads_set(2), LT_OK);
    size_t before = lt_mem_current();
    const size_t sizes[] = {(size_t)64 << 10, (size_t)5 << 20};
    for (int i = 0; i < 2; i++) {
        double gbs = lt_machine_read_bandwidth_gbs(sizes[i], i + 1);
        cr_expect(isfinite(gbs) && gbs > 0, "%zu bytes: %g GB/s", sizes[i], gbs);
        cr_expect_eq(lt_threads_get(), 2);
    }
    cr_expect_eq(lt_mem_current(), before);
    cr_expect(isnan(lt_machine_read_bandwidth_gbs(0, 1)));
    cr_expect(isnan(lt_machine_read_bandwidth_gbs(100, 1)), "less than one block of floats");
}

Test(attn_plan, linformer_params_initialised)
{
    lt_attn a;
    lt_attn_config c = config_of("linformer", 0, NULL);
    c.proj_k = 16;
    c.n_max = 200;
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    size_t n = lt_attn_param_count(&a);
    cr_assert_eq(n, 2 * 16 * 200);
    float *p = alloc_floats(n), *again = alloc_floats(n);
    lt_attn_init_params(&a, p, 42);
    lt_attn_init_params(&a, again, 42);
    cr_expect_arr_eq(p, again, n * sizeof(float));
    double sq = 0;
    for (size_t i = 0; i < n; i++)
        sq += (double)p[i] * p[i];
    double stddev = sqrt(sq / n);
    cr_expect(fabs(stddev - 0.25) < 0.02, "stddev %g, expected 1/sqrt(16)", stddev);
    lt_mem_free(p);
    lt_mem_free(again);
}

/* ---- per-sequence lengths ---- */

/* Rows [0, rows) of head bh of a (B, H, N, last) tensor. */
static float *head_rows(float *x, int bh, int N, int last) { return x + (size_t)bh * N * last; }

/* A padded batch computes each sequence as if it ran alone: outputs and
 * dq, dk, dv of the valid rows match a run of that sequence by itself,
 * padded output rows are 0 and padded gradient rows get nothing; Linformer's
 * parameter gradient is the sum of the sequences' own. */
static void check_lengths_match_alone(lt_attn_config config)
{
    const int B = 4, H = 2, N = 21, D = 5, M = 3;
    const int32_t lengths[4] = {21, 0, 13, 1};
    run batch;
    run_setup(&batch, config, shape_of(B, H, N, D, M), 11, -1.0f, 1.0f);
    batch.shape.lengths = lengths;
    run_forward(&batch);
    run_backward(&batch);
    float *param_sum = alloc_floats(batch.np);
    for (int b = 0; b < B; b++) {
        const int n = lengths[b];
        for (int h = 0; h < H; h++) {
            int bh = b * H + h;
            for (size_t i = (size_t)n * M; i < (size_t)N * M; i++) {
                cr_expect_eq(head_rows(batch.out, bh, N, M)[i], 0.0f, "padded out row");
                cr_expect_eq(head_rows(batch.dv, bh, N, M)[i], 0.0f, "padded dv row");
            }
            for (size_t i = (size_t)n * D; i < (size_t)N * D; i++)
                cr_expect(head_rows(batch.dq, bh, N, D)[i] == 0.0f &&
                              head_rows(batch.dk, bh, N, D)[i] == 0.0f,
                          "padded dq/dk row");
        }
        if (n == 0)
            continue;
        run alone;
        run_setup(&alone, config, shape_of(1, H, n, D, M), 1, 0.0f, 1.0f);
        for (int h = 0; h < H; h++) {
            int bh = b * H + h;
            memcpy(head_rows(alone.q, h, n, D), head_rows(batch.q, bh, N, D), (size_t)n * D * 4);
            memcpy(head_rows(alone.k, h, n, D), head_rows(batch.k, bh, N, D), (size_t)n * D * 4);
            memcpy(head_rows(alone.v, h, n, M), head_rows(batch.v, bh, N, M), (size_t)n * M * 4);
            memcpy(head_rows(alone.d_out, h, n, M), head_rows(batch.d_out, bh, N, M),
                   (size_t)n * M * 4);
        }
        memcpy(alone.params, batch.params, batch.np * sizeof(float));
        run_forward(&alone);
        run_backward(&alone);
        for (int h = 0; h < H; h++) {
            int bh = b * H + h;
            expect_close(head_rows(batch.out, bh, N, M), head_rows(alone.out, h, n, M),
                         (size_t)n * M, 1e-5, "out");
            expect_close(head_rows(batch.dq, bh, N, D), head_rows(alone.dq, h, n, D),
                         (size_t)n * D, 1e-5, "dq");
            expect_close(head_rows(batch.dk, bh, N, D), head_rows(alone.dk, h, n, D),
                         (size_t)n * D, 1e-5, "dk");
            expect_close(head_rows(batch.dv, bh, N, M), head_rows(alone.dv, h, n, M),
                         (size_t)n * M, 1e-5, "dv");
        }
        for (size_t i = 0; i < batch.np; i++)
            param_sum[i] += alone.d_params[i];
        run_free(&alone);
    }
    expect_close(batch.d_params, param_sum, batch.np, 1e-5, "d_params");
    lt_mem_free(param_sum);
    run_free(&batch);
}

Test(attn_lengths, padded_batch_equals_each_sequence_alone)
{
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    for (int v = 0; v < 4; v++)
        for (int causal = 0; causal <= 1; causal++) {
            const char *kernel;
            for (int i = 0; (kernel = lt_attn_kernel_at(variants[v], causal, i)) != NULL; i++)
                check_lengths_match_alone(config_of(variants[v], causal, kernel));
        }
}

Test(attn_lengths, out_of_range_length_refused)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 0, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    int32_t lengths[2] = {4, 9};
    lt_attn_shape s = shape_of(2, 1, 8, 4, 4);
    s.lengths = lengths;
    cr_expect_eq(lt_attn_check_shape(&a, s), LT_E_INPUT);
    cr_expect_neq(strstr(lt_last_error(), "sequence 1"), NULL, "%s", lt_last_error());
    lengths[1] = -1;
    cr_expect_eq(lt_attn_check_shape(&a, s), LT_E_INPUT);
    lengths[1] = 8;
    cr_expect_eq(lt_attn_check_shape(&a, s), LT_OK);
}

/* ---- what variants say they can do ---- */

Test(attn_caps, variants_describe_themselves)
{
    lt_attn_caps caps;
    cr_assert_eq(lt_attn_variant_caps("softmax", &caps), LT_OK);
    cr_expect(caps.causal && caps.noncausal && !caps.params && caps.recurrent);
    cr_assert_eq(lt_attn_variant_caps("linear", &caps), LT_OK);
    cr_expect(caps.causal && caps.noncausal && !caps.params && caps.recurrent);
    cr_assert_eq(lt_attn_variant_caps("linformer", &caps), LT_OK);
    cr_expect(!caps.causal && caps.noncausal && caps.params && !caps.recurrent);
    cr_expect_neq(strstr(caps.no_causal_reason, "projected"), NULL);
    cr_assert_eq(lt_attn_variant_caps("lsh", &caps), LT_OK);
    cr_expect(caps.causal && caps.noncausal && !caps.params && !caps.recurrent);
    cr_expect_neq(strstr(caps.no_recurrent_reason, "recomputes the prefix"), NULL);
    cr_expect_str_eq(lt_attn_kernel_at("lsh", 1, 0), "lsh-chunked");
    cr_expect_str_eq(lt_attn_kernel_at("lsh", 0, 1), "lsh-reference");
    cr_expect_eq(lt_attn_variant_caps("reformer", &caps), LT_E_USAGE);
    cr_expect_str_eq(lt_attn_kernel_at("linear", 1, 0), "linear-causal-chunked");
    cr_expect_eq(lt_attn_kernel_at("linformer", 1, 0), NULL);
    cr_expect_str_eq(lt_attn_kernels_for("linformer", 1), "none");
}

Test(attn_caps, zero_normaliser_refused)
{
    lt_attn a;
    lt_attn_config c = config_of("linear", 0, NULL);
    c.feature_map = LT_FEATURE_RELU;
    c.eps = 0.0f;
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "eps"), NULL, "%s", lt_last_error());
    c.eps = 1e-6f;
    cr_expect_eq(lt_attn_init(&a, &c), LT_OK);
    c = config_of("linear", 1, "softmax-gemm");
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "linear-causal-chunked, linear-causal-prefix"), NULL,
                  "%s", lt_last_error());
}

/* ---- LSH attention ---- */

static lt_attn_config lsh_config(int causal, const char *kernel, int rounds, int chunk,
                                 int buckets)
{
    lt_attn_config c = config_of("lsh", causal, kernel);
    c.rounds = rounds;
    c.chunk = chunk;
    c.buckets = buckets;
    return c;
}

/* Every head's saved order of every round, (B*H, rounds, N), of a run
 * forward has been through: the hashes the double reference is given. */
static int32_t *saved_orders(const run *r)
{
    const int heads = r->shape.B * r->shape.H, R = r->attn.config.rounds, N = r->shape.N;
    int32_t *orders = malloc(sizeof(int32_t) * ((size_t)heads * R * N + 1));
    for (int bh = 0; bh < heads; bh++)
        for (int round = 0; round < R; round++)
            memcpy(orders + ((size_t)bh * R + round) * N,
                   attn_lsh_order(&r->attn, r->shape, r->saved, bh, round),
                   sizeof(int32_t) * (size_t)N);
    return orders;
}

/* LSH attention in double from x = [q | k | v] (k unused) given the sorted
 * orders: keys q / sqrt(|q|^2 + D 1e-6), each sorted query over its chunk
 * and the chunk before, without itself unless nothing else is left, later
 * positions masked when causal; rounds weighted by the softmax of their
 * log-sum-exps over the rounds that gave the query other keys (all rounds
 * when none did). */
static void lsh_ref_attention(double *out, const double *x, const lt_attn_config *c,
                              lt_attn_shape s, const int32_t *orders)
{
    const int N = s.N, D = s.D, M = s.M, R = c->rounds, C = c->chunk;
    const size_t nq = (size_t)s.B * s.H * N * D;
    double *keys = malloc(sizeof(double) * (size_t)N * D + 1);
    double *z = malloc(sizeof(double) * (size_t)R * N + 1);
    double *o = malloc(sizeof(double) * (size_t)R * N * M + 1);
    int *alone = malloc(sizeof(int) * (size_t)R * N + 1);
    double *w = malloc(sizeof(double) * (size_t)N + 1);
    for (int bh = 0; bh < s.B * s.H; bh++) {
        const double *q = x + (size_t)bh * N * D, *v = x + 2 * nq + (size_t)bh * N * M;
        for (int i = 0; i < N; i++) {
            double sq = 0;
            for (int d = 0; d < D; d++)
                sq += q[(size_t)i * D + d] * q[(size_t)i * D + d];
            for (int d = 0; d < D; d++)
                keys[(size_t)i * D + d] = q[(size_t)i * D + d] / sqrt(sq + D * 1e-6);
        }
        for (int r = 0; r < R; r++) {
            const int32_t *order = orders + ((size_t)bh * R + r) * N;
            for (int pos = 0; pos < N; pos++) {
                const int i = order[pos], chunk = pos / C;
                const int lo = chunk > 0 ? (chunk - 1) * C : 0;
                const int hi = (chunk + 1) * C < N ? (chunk + 1) * C : N;
                double max = -INFINITY, sum = 0;
                for (int a = lo; a < hi; a++) {
                    const int j = order[a];
                    double dot = 0;
                    for (int d = 0; d < D; d++)
                        dot += q[(size_t)i * D + d] * keys[(size_t)j * D + d];
                    w[a - lo] = j == i || (c->causal && j > i) ? -INFINITY : dot / sqrt(D);
                    if (j == i)
                        z[(size_t)r * N + i] = dot / sqrt(D);
                    max = w[a - lo] > max ? w[a - lo] : max;
                }
                alone[(size_t)r * N + i] = max == -INFINITY;
                for (int a = lo; a < hi; a++) {
                    w[a - lo] = max == -INFINITY ? (double)(order[a] == i) : exp(w[a - lo] - max);
                    sum += w[a - lo];
                }
                if (max > -INFINITY)
                    z[(size_t)r * N + i] = max + log(sum);
                for (int m = 0; m < M; m++) {
                    double acc = 0;
                    for (int a = lo; a < hi; a++)
                        acc += w[a - lo] * v[(size_t)order[a] * M + m];
                    o[((size_t)r * N + i) * M + m] = acc / sum;
                }
            }
        }
        for (int i = 0; i < N; i++) {
            int other = 0;
            for (int r = 0; r < R; r++)
                other |= !alone[(size_t)r * N + i];
            double max = -INFINITY, sum = 0;
            for (int r = 0; r < R; r++)
                if (!(other && alone[(size_t)r * N + i]))
                    max = z[(size_t)r * N + i] > max ? z[(size_t)r * N + i] : max;
            for (int m = 0; m < M; m++)
                out[((size_t)bh * N + i) * M + m] = 0;
            for (int r = 0; r < R; r++) {
                if (other && alone[(size_t)r * N + i])
                    continue;
                double weight = exp(z[(size_t)r * N + i] - max);
                sum += weight;
                for (int m = 0; m < M; m++)
                    out[((size_t)bh * N + i) * M + m] += weight * o[((size_t)r * N + i) * M + m];
            }
            for (int m = 0; m < M; m++)
                out[((size_t)bh * N + i) * M + m] /= sum;
        }
    }
    free(keys);
    free(z);
    free(o);
    free(alone);
    free(w);
}

typedef struct lsh_loss_ctx {
    const lt_attn_config *config;
    lt_attn_shape shape;
    const int32_t *orders;
    const double *weights; /* d_out */
    double *out;
} lsh_loss_ctx;

static double lsh_ref_loss(const double *x, void *ctx_)
{
    lsh_loss_ctx *ctx = ctx_;
    lsh_ref_attention(ctx->out, x, ctx->config, ctx->shape, ctx->orders);
    size_t n = (size_t)ctx->shape.B * ctx->shape.H * ctx->shape.N * ctx->shape.M;
    double loss = 0;
    for (size_t i = 0; i < n; i++)
        loss += ctx->out[i] * ctx->weights[i];
    return loss;
}

/* Forward against the double reference given the kernel's own hashes, then
 * dq, dk (nothing) and dv against central differences of it (the hashes
 * held fixed). */
static void check_lsh_against_reference(lt_attn_config config, lt_attn_shape shape)
{
    run r;
    run_setup(&r, config, shape, 7, -1.0f, 1.0f);
    run_forward(&r);
    run_backward(&r);
    int32_t *orders = saved_orders(&r);
    size_t n = 2 * r.nq + r.nv;
    double *x = malloc(sizeof(double) * n), *grad = malloc(sizeof(double) * n);
    const float *parts[] = {r.q, r.k, r.v};
    size_t sizes[] = {r.nq, r.nq, r.nv}, at = 0;
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < sizes[p]; i++)
            x[at++] = parts[p][i];
    double *weights = to_double(r.d_out, r.nv), *out = malloc(sizeof(double) * (r.nv + 1));
    lsh_loss_ctx ctx = {&r.attn.config, shape, orders, weights, out};
    lsh_ref_attention(out, x, &r.attn.config, shape, orders);
    double out_err = check_rel_error_f(r.out, out, r.nv, 1e-6);
    cr_expect_lt(out_err, 1e-5, "%s %s N=%d: forward relative error %g", r.attn.config.kernel,
                 config.causal ? "causal" : "non-causal", shape.N, out_err);
    check_fd_gradient(grad, x, n, lsh_ref_loss, &ctx);
    const char *names[] = {"dq", "dk", "dv"};
    const float *analytic[] = {r.dq, r.dk, r.dv};
    size_t offsets[] = {0, r.nq, 2 * r.nq};
    for (int t = 0; t < 3; t++) {
        double err = check_rel_error_f(analytic[t], grad + offsets[t], sizes[t], GRAD_FLOOR);
        cr_expect_lt(err, GRAD_BOUND, "%s %s N=%d rounds=%d: %s relative error %g",
                     r.attn.config.kernel, config.causal ? "causal" : "non-causal", shape.N,
                     config.rounds, names[t], err);
    }
    for (size_t i = 0; i < r.nq; i++)
        cr_assert_eq(r.dk[i], 0.0f, "dk must stay untouched: lsh never reads k");
    free(orders);
    free(x);
    free(grad);
    free(weights);
    free(out);
    run_free(&r);
}

Test(attn_grad, lsh_against_float64_reference)
{
    /* N = 1 (a lone query), several chunks with a partial last one; derived
     * buckets, one bucket, and a given even count */
    const char *kernels[] = {"lsh-chunked", "lsh-reference"};
    const int lengths[] = {1, 11, 19};
    for (int k = 0; k < 2; k++)
        for (int causal = 0; causal <= 1; causal++) {
            for (int i = 0; i < 3; i++)
                check_lsh_against_reference(lsh_config(causal, kernels[k], 3, 4, 0),
                                            shape_of(2, 2, lengths[i], 5, 3));
            check_lsh_against_reference(lsh_config(causal, kernels[k], 1, 3, 1),
                                        shape_of(1, 2, 13, 5, 3));
            check_lsh_against_reference(lsh_config(causal, kernels[k], 2, 5, 6),
                                        shape_of(1, 2, 17, 4, 6));
        }
}

Test(attn_kernels, lsh_chunked_equals_reference)
{
    for (int causal = 0; causal <= 1; causal++) {
        /* many chunks and a partial one; and the default chunk of 32 */
        compare_kernels_both_plans(lsh_config(causal, "lsh-chunked", 3, 8, 0),
                                   lsh_config(causal, "lsh-reference", 3, 8, 0), 300, SAME_BOUND);
        /* one round: backward takes g . out from the chunk's products, not saved */
        compare_kernels_both_plans(lsh_config(causal, "lsh-chunked", 1, 8, 0),
                                   lsh_config(causal, "lsh-reference", 1, 8, 0), 300, SAME_BOUND);
        compare_kernels_both_plans(config_of("lsh", causal, "lsh-chunked"),
                                   config_of("lsh", causal, "lsh-reference"), 300, SAME_BOUND);
        lt_attn_config fast = lt_attn_default_config("lsh"), plain = fast;
        fast.causal = plain.causal = causal;
        fast.kernel = "lsh-chunked";
        plain.kernel = "lsh-reference";
        compare_kernels_both_plans(fast, plain, 300, SAME_BOUND);
    }
}

Test(attn_kernels, lsh_same_bits_for_any_threads)
{
    for (int causal = 0; causal <= 1; causal++) {
        lt_attn_config configs[] = {lsh_config(causal, "lsh-chunked", 4, 8, 0),
                                    lsh_config(causal, "lsh-chunked", 1, 8, 0),
                                    lsh_config(causal, "lsh-reference", 2, 8, 0)};
        for (int i = 0; i < 3; i++) {
            check_same_bits_for_any_threads(configs[i], shape_of(1, 1, 333, 6, 5));
            check_same_bits_for_any_threads(configs[i], shape_of(1, 2, 333, 6, 5));
            /* 41 chunks: an odd count, whose last chunk no even window leaves bare */
            check_same_bits_for_any_threads(configs[i], shape_of(1, 1, 325, 6, 5));
        }
    }
}

Test(attn_lsh, hash_plan_derived_as_reformer)
{
    lt_attn_config c = lsh_config(0, NULL, 1, 32, 0);
    /* b = 2 max(1, n / C) up to 128 buckets, one rotation of b/2 columns */
    attn_lsh_hash_plan p = attn_lsh_plan(&c, 20);
    cr_expect(p.buckets == 2 && p.cols == 1 && p.factor[1] == 1);
    p = attn_lsh_plan(&c, 512);
    cr_expect(p.buckets == 32 && p.cols == 16, "%d %d", p.buckets, p.cols);
    p = attn_lsh_plan(&c, 2048 + 31);
    cr_expect(p.buckets == 128 && p.cols == 64, "%d %d", p.buckets, p.cols);
    /* above 128: 2^ceil(log2 sqrt(b)) x 2 floor(b / 2 b1), as trax */
    p = attn_lsh_plan(&c, 8192);
    cr_expect(p.factor[0] == 32 && p.factor[1] == 16 && p.buckets == 512 && p.cols == 24,
              "%d x %d, %d cols", p.factor[0], p.factor[1], p.cols);
    p = attn_lsh_plan(&c, 65536);
    cr_expect(p.factor[0] == 64 && p.factor[1] == 64 && p.cols == 64);
    c.buckets = 6;
    p = attn_lsh_plan(&c, 65536);
    cr_expect(p.buckets == 6 && p.cols == 3);
    c.buckets = 1;
    p = attn_lsh_plan(&c, 100);
    cr_expect(p.buckets == 1 && p.cols == 0);
}

/* Bucket of x (D) under rotation R (D x cols) in double, and how far the
 * winner is ahead of the runner-up (0 in a tie). */
static int double_bucket(const float *x, const float *R, int D, attn_lsh_hash_plan p,
                         double *margin)
{
    int bucket = 0, stride = 1, col = 0;
    *margin = INFINITY;
    for (int f = 0; f < 2; f++) {
        int half = p.factor[f] / 2, best = 0;
        double top = -INFINITY, second = -INFINITY;
        for (int j = 0; j < 2 * half; j++) {
            double dot = 0;
            for (int d = 0; d < D; d++)
                dot += (double)x[d] * R[(size_t)d * p.cols + col + j % half];
            dot = j < half ? dot : -dot;
            if (dot > top) {
                second = top;
                top = dot;
                best = j;
            } else if (dot > second) {
                second = dot;
            }
        }
        if (half > 0 && top - second < *margin)
            *margin = top - second;
        bucket += stride * best;
        stride *= p.factor[f];
        col += half;
    }
    return bucket;
}

Test(attn_lsh, positions_sorted_by_rotation_bucket)
{
    /* 300 positions over 2 chunks of 8: 74 buckets; and 1100 over chunks
     * of 4: 550 buckets as 32 x 16 */
    const int lengths[] = {300, 1100}, chunks[] = {8, 4};
    for (int t = 0; t < 2; t++) {
        run r;
        lt_attn_config c = lsh_config(0, NULL, 3, chunks[t], 0);
        lt_attn_shape s = shape_of(1, 2, lengths[t], 6, 5);
        s.seed = 5;
        s.step = 9;
        s.layer = 2;
        run_setup(&r, c, s, 3, -1.0f, 1.0f);
        run_forward(&r);
        attn_lsh_hash_plan p = attn_lsh_plan(&c, s.N);
        float *R = malloc(sizeof(float) * ((size_t)s.D * p.cols + 1));
        int32_t *bucket = malloc(sizeof(int32_t) * (size_t)s.N);
        int near_ties = 0;
        for (int round = 0; round < c.rounds; round++) {
            attn_lsh_rotations(R, (size_t)p.cols, s.D, p.cols, s, round);
            for (int bh = 0; bh < 2; bh++) {
                const int32_t *order = attn_lsh_order(&r.attn, s, r.saved, bh, round);
                int seen[2048] = {0};
                for (int i = 0; i < s.N; i++) {
                    double margin;
                    bucket[i] = double_bucket(r.q + ((size_t)bh * s.N + i) * s.D, R, s.D, p,
                                              &margin);
                    if (margin < 1e-5) {
                        bucket[i] = -1; /* a float rounding may break this tie either way */
                        near_ties++;
                    }
                }
                int last_bucket = -1, last_pos = -1, buckets_seen = 0;
                for (int k = 0; k < s.N; k++) {
                    const int i = order[k];
                    cr_assert(i >= 0 && i < s.N && !seen[i], "order is no permutation");
                    seen[i] = 1;
                    if (bucket[i] < 0)
                        continue;
                    cr_expect(bucket[i] > last_bucket ||
                                  (bucket[i] == last_bucket && i > last_pos),
                              "round %d head %d: (%d, %d) sorted after (%d, %d)", round, bh,
                              bucket[i], i, last_bucket, last_pos);
                    buckets_seen += bucket[i] != last_bucket;
                    last_bucket = bucket[i];
                    last_pos = i;
                }
                cr_expect_gt(buckets_seen, p.buckets / 4, "only %d of %d buckets used",
                             buckets_seen, p.buckets);
            }
        }
        cr_expect_lt(near_ties, 2 * c.rounds * s.N / 100, "%d near-ties", near_ties);
        free(R);
        free(bucket);
        run_free(&r);
    }
}

/* Orders of every head and round after one forward of `shape`. */
static int32_t *orders_for(lt_attn_config c, lt_attn_shape shape)
{
    run r;
    run_setup(&r, c, shape, 3, -1.0f, 1.0f);
    run_forward(&r);
    int32_t *orders = saved_orders(&r);
    run_free(&r);
    return orders;
}

Test(attn_lsh, draws_depend_on_seed_step_and_layer)
{
    lt_attn_config c = lsh_config(1, NULL, 2, 4, 0);
    lt_attn_shape base = shape_of(1, 2, 64, 6, 5);
    base.seed = 11;
    base.step = 3;
    base.layer = 1;
    size_t bytes = sizeof(int32_t) * 2 * 2 * 64;
    int32_t *first = orders_for(c, base), *again = orders_for(c, base);
    cr_expect_arr_eq(first, again, bytes, "same (seed, step, layer), other hashes");
    lt_attn_shape changed[3] = {base, base, base};
    changed[0].seed = 12;
    changed[1].step = 4;
    changed[2].layer = 0;
    const char *what[] = {"seed", "step", "layer"};
    for (int i = 0; i < 3; i++) {
        int32_t *other = orders_for(c, changed[i]);
        cr_expect_arr_neq(other, first, bytes, "another %s, the same hashes", what[i]);
        free(other);
    }
    /* rounds draw their own rotations */
    cr_expect_arr_neq(first, first + 64, sizeof(int32_t) * 64, "rounds 0 and 1 hash alike");
    free(first);
    free(again);
}

Test(attn_lsh, causal_never_looks_ahead)
{
    /* Position j's value, and its query by a nudge that keeps every hash,
     * change no output before j, bit for bit. (A query that moves to
     * another bucket can shift chunk boundaries, and with them which
     * earlier keys an earlier query sees: LSH sorts the whole sequence.)
     * The k input is never read at all. */
    const char *kernels[] = {"lsh-chunked", "lsh-reference"};
    const int N = 150, positions[] = {100, 0, 149};
    for (int kk = 0; kk < 2; kk++)
        for (int p = 0; p < 3; p++) {
            const int j = positions[p];
            lt_attn_shape s = shape_of(1, 2, N, 4, 3);
            run r;
            run_setup(&r, lsh_config(1, kernels[kk], 3, 8, 0), s, 17, -1.0f, 1.0f);
            run_forward(&r);
            float *before = malloc(sizeof(float) * r.nv);
            memcpy(before, r.out, sizeof(float) * r.nv);
            int32_t *orders = saved_orders(&r);
            for (int bh = 0; bh < 2; bh++) {
                for (int d = 0; d < s.D; d++)
                    r.q[((size_t)bh * N + j) * s.D + d] *= 1.001f;
                for (int m = 0; m < s.M; m++)
                    r.v[((size_t)bh * N + j) * s.M + m] += 2.0f;
            }
            for (size_t i = 0; i < r.nq; i++)
                r.k[i] = -r.k[i] * 3.0f;
            run_forward(&r);
            int32_t *after = saved_orders(&r);
            cr_assert_arr_eq(after, orders, sizeof(int32_t) * 2 * 3 * N,
                             "the nudge moved a bucket");
            for (int bh = 0; bh < 2; bh++) {
                size_t head = (size_t)bh * N * s.M;
                cr_expect_arr_eq(r.out + head, before + head, sizeof(float) * j * s.M,
                                 "%s: outputs before position %d changed", kernels[kk], j);
                cr_expect_arr_neq(r.out + head + (size_t)j * s.M, before + head + (size_t)j * s.M,
                                  sizeof(float) * s.M, "%s: output %d did not change",
                                  kernels[kk], j);
            }
            free(before);
            free(orders);
            free(after);
            run_free(&r);
        }
}

/* One chunk holding the whole sequence: every round sees every key, so LSH
 * attention is exact softmax attention with k = q / |q| and the diagonal
 * masked (a query attends to itself only when causal masking leaves it
 * nothing else: position 0), whatever the rounds and buckets. */
Test(attn_lsh, one_chunk_equals_softmax_with_self_mask)
{
    const int N = 37;
    const int rounds[] = {1, 4}, buckets[] = {0, 8};
    for (int causal = 0; causal <= 1; causal++)
        for (int t = 0; t < 2; t++) {
            lt_attn_shape s = shape_of(1, 2, N, 5, 4);
            run r;
            run_setup(&r, lsh_config(causal, NULL, rounds[t], N, buckets[t]), s, 19, -1.0f, 1.0f);
            run_forward(&r);
            double *expect = malloc(sizeof(double) * r.nv), w[64];
            for (int bh = 0; bh < 2; bh++)
                for (int i = 0; i < N; i++) {
                    const float *q = r.q + (size_t)bh * N * s.D;
                    int last = causal ? i : N - 1;
                    double max = -INFINITY, sum = 0;
                    for (int j = 0; j <= last; j++) {
                        double dot = 0, sq = 0;
                        for (int d = 0; d < s.D; d++) {
                            dot += (double)q[i * s.D + d] * q[j * s.D + d];
                            sq += (double)q[j * s.D + d] * q[j * s.D + d];
                        }
                        int masked = j == i && last > 0;
                        w[j] = masked ? -INFINITY : dot / sqrt(sq + s.D * 1e-6) / sqrt(s.D);
                        max = w[j] > max ? w[j] : max;
                    }
                    for (int j = 0; j <= last; j++)
                        sum += (w[j] = exp(w[j] - max));
                    for (int m = 0; m < s.M; m++) {
                        double acc = 0;
                        for (int j = 0; j <= last; j++)
                            acc += w[j] * r.v[((size_t)bh * N + j) * s.M + m];
                        expect[((size_t)bh * N + i) * s.M + m] = acc / sum;
                    }
                }
            double err = check_rel_error_f(r.out, expect, r.nv, 1e-6);
            cr_expect_lt(err, 1e-5, "%s, %d rounds: relative error %g against softmax",
                         causal ? "causal" : "non-causal", rounds[t], err);
            free(expect);
            run_free(&r);
        }
}

Test(attn_lsh, bad_configurations_refused)
{
    lt_attn a;
    struct {
        int rounds, chunk, buckets;
        const char *field;
    } bad[] = {{0, 4, 0, "rounds"},   {-2, 4, 0, "rounds"}, {1, 0, 0, "chunk"},
               {1, -1, 0, "chunk"},   {1, 4, 3, "buckets"}, {1, 4, -2, "buckets"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lt_attn_config c = lsh_config(1, NULL, bad[i].rounds, bad[i].chunk, bad[i].buckets);
        cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE, "%s accepted", bad[i].field);
        cr_expect_eq(strncmp(lt_last_error(), bad[i].field, strlen(bad[i].field)), 0, "%s",
                     lt_last_error());
    }
    lt_attn_config c = lsh_config(1, "linear-gemm", 1, 4, 0);
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "lsh-chunked, lsh-reference"), NULL, "%s",
                  lt_last_error());
    c = lsh_config(0, NULL, 1, 4, 2);
    cr_expect_eq(lt_attn_init(&a, &c), LT_OK, "%s", lt_last_error());
}

Test(attn_lsh, variant_specs_parsed_and_labelled)
{
    lt_attn_config c = lt_attn_default_config(NULL);
    char label[32];
    cr_assert_eq(lt_attn_parse_variant("lsh-8", &c), LT_OK, "%s", lt_last_error());
    cr_expect_str_eq(c.variant, "lsh");
    cr_expect_eq(c.rounds, 8);
    cr_expect_str_eq(lt_attn_variant_label(&c, label, sizeof label), "lsh-8");
    cr_assert_eq(lt_attn_parse_variant("lsh", &c), LT_OK);
    cr_expect_eq(c.rounds, 8, "a plain name leaves rounds as they were");
    c = lt_attn_default_config(NULL);
    cr_assert_eq(lt_attn_parse_variant("lsh", &c), LT_OK);
    cr_expect_str_eq(lt_attn_variant_label(&c, label, sizeof label), "lsh-4");
    const char *names[] = {"softmax", "linear", "linformer"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(lt_attn_parse_variant(names[i], &c), LT_OK);
        cr_expect_str_eq(lt_attn_variant_label(&c, label, sizeof label), names[i]);
    }
    const char *bad[] = {"lsh-0", "lsh-", "lsh4", "lsh-4x", "lsh--4", "lsh-+4", "lsh- 4",
                         "softmax-2", "", "LSH-4", "lsh-99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(lt_attn_parse_variant(bad[i], &c), LT_E_USAGE, "'%s' accepted", bad[i]);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        cr_expect_neq(strstr(lt_last_error(), quoted), NULL, "%s", lt_last_error());
    }
    cr_expect_eq(lt_attn_parse_variant(NULL, &c), LT_E_USAGE);
}

Test(attn_lsh, memory_and_flops)
{
    lt_attn a;
    lt_attn_config c = config_of("lsh", 1, NULL);
    c.rounds = 4;
    c.chunk = 32;
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    lt_attn_shape s1 = shape_of(1, 8, 4096, 64, 64), s4 = shape_of(1, 8, 16384, 64, 64);
    /* saved: per round an order, a weight and 2C probabilities a position,
     * and the output: linear in N */
    cr_expect_eq(lt_attn_saved_bytes(&a, s1),
                 (size_t)8 * (4 * 4096 * (2 + 64) + 4096 * 64) * sizeof(float));
    cr_expect_eq(lt_attn_saved_bytes(&a, s4), 4 * lt_attn_saved_bytes(&a, s1));
    /* scratch: buffers of N rows and a few of fixed size: about linear */
    double grow = (double)lt_attn_workspace_bytes(&a, s4, 1) / lt_attn_workspace_bytes(&a, s1, 1);
    cr_expect(grow > 3.9 && grow < 4.1, "workspace grew %gx for 4x N", grow);
    cr_expect_leq(lt_attn_workspace_bytes(&a, s4, 2), (size_t)64 << 20);

    /* model: per head and round, hashing 2 N D b/2 and 2 N 2C (D + M) */
    lt_attn_shape s = shape_of(2, 4, 1000, 32, 16);
    double cols = attn_lsh_plan(&c, 1000).cols;
    double attend = 2.0 * 1000 * 64 * (32 + 16), hash = 2.0 * 1000 * 32 * cols;
    double fwd = lt_attn_flops(&a, s, 0), bwd = lt_attn_flops(&a, s, 1);
    cr_expect_float_eq(fwd, 4 * 8 * (hash + attend), 1e-9 * fwd);
    cr_expect_float_eq(bwd, 4 * 8 * 2 * attend, 1e-9 * bwd);
    /* performed: the first chunk has no look-back, the last is short */
    double area = 0;
    for (int s0 = 0; s0 < 1000; s0 += 32) {
        int rows = 1000 - s0 < 32 ? 1000 - s0 : 32;
        area += (double)rows * (rows + (s0 > 0 ? 32 : 0));
    }
    double performed = lt_attn_flops_performed(&a, s, 0);
    cr_expect_float_eq(performed, 4 * 8 * (hash + 2 * area * 48), 1e-9 * performed);
    cr_expect_float_eq(lt_attn_flops_performed(&a, s, 1), 4 * 8 * 4 * area * 48, 1e-9 * performed);
    /* causal masking skips nothing: the same model */
    lt_attn_config nc = c;
    nc.causal = 0;
    lt_attn b;
    cr_assert_eq(lt_attn_init(&b, &nc), LT_OK);
    cr_expect_float_eq(lt_attn_flops(&b, s, 0), fwd, 1e-9 * fwd);
}

Test(attn_lsh, products_roof_only_for_the_chunked_kernel)
{
    lt_attn_shape shape = shape_of(1, 2, 300, 16, 8);
    const size_t before = lt_mem_current();
    lt_attn chunked, reference, linear;
    lt_attn_config c = lsh_config(0, "lsh-chunked", 2, 8, 0);
    cr_assert_eq(lt_attn_init(&chunked, &c), LT_OK);
    c.kernel = "lsh-reference";
    cr_assert_eq(lt_attn_init(&reference, &c), LT_OK);
    lt_attn_config lc = config_of("linear", 0, NULL);
    cr_assert_eq(lt_attn_init(&linear, &lc), LT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        double rate = lt_attn_products_gflops(&chunked, shape, threads);
        cr_expect(isfinite(rate) && rate > 0.0, "lsh-chunked products: %g GFLOP/s", rate);
    }
    cr_expect(isnan(lt_attn_products_gflops(&reference, shape, 1)),
              "the reference kernel's loops are no products");
    cr_expect(isnan(lt_attn_products_gflops(&linear, shape, 1)), "linear declares no roof");
    cr_expect_eq(lt_mem_current(), before, "the measurement frees what it took");
}

/* The roofline's memory half: each operand once, whatever the kernel. */
Test(attn, interface_bytes_count_each_operand_once)
{
    lt_attn_shape s = shape_of(2, 3, 20, 8, 4);
    const double rows = 2 * 3 * 20, qk = rows * 8 * 4, vo = rows * 4 * 4;
    const char *variants[] = {"softmax", "linear", "linformer", "lsh"};
    for (int i = 0; i < 4; i++) {
        lt_attn a;
        lt_attn_config c = config_of(variants[i], 0, NULL);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK, "%s", lt_last_error());
        double saved = (double)lt_attn_saved_bytes(&a, s);
        double params = 4.0 * (double)lt_attn_param_count(&a);
        /* LSH's keys are its queries: k is never read, dk still written */
        double k = i == 3 ? 0.0 : qk;
        double fwd = qk + k + vo + params + vo + saved;
        double bwd = qk + k + vo + vo + params + saved + 2 * qk + vo + params;
        cr_expect_float_eq(lt_attn_interface_bytes(&a, s, 0), fwd, 1e-9 * fwd, "%s forward",
                           variants[i]);
        cr_expect_float_eq(lt_attn_interface_bytes(&a, s, 1), bwd, 1e-9 * bwd, "%s backward",
                           variants[i]);
        if (i == 2)
            cr_expect_gt(params, 0.0, "linformer's projections are read");
    }
    /* causal softmax-gemm keeps P's blocks left of the diagonal only: less
     * than the whole N x N, at least its lower triangle */
    lt_attn_shape big = shape_of(1, 2, 512, 8, 4);
    lt_attn full, causal;
    lt_attn_config c = config_of("softmax", 0, "softmax-gemm");
    cr_assert_eq(lt_attn_init(&full, &c), LT_OK);
    c.causal = 1;
    cr_assert_eq(lt_attn_init(&causal, &c), LT_OK);
    double operands = 4.0 * 2 * 512 * (8 + 8 + 4 + 4);
    double p_full = lt_attn_interface_bytes(&full, big, 0) - operands;
    double p_causal = lt_attn_interface_bytes(&causal, big, 0) - operands;
    cr_expect_float_eq(p_full, 4.0 * 2 * 512 * 512, 1.0, "non-causal: all of P");
    cr_expect(p_causal < p_full && p_causal >= 4.0 * 2 * 512 * 513 / 2, "causal: %g of %g",
              p_causal, p_full);
}

/* ---- feature maps beyond elu: FAVOR+ and Taylor ---- */

/* A linear or decay configuration with another feature map; favor with 12
 * random features: two orthogonal blocks of D = 5 and a partial one. */
static lt_attn_config map_config(const char *variant, int causal, const char *kernel,
                                 lt_feature_map map)
{
    lt_attn_config c = config_of(variant, causal, kernel);
    c.feature_map = map;
    c.random_features = 12;
    return c;
}

static const lt_feature_map new_maps[] = {LT_FEATURE_FAVOR, LT_FEATURE_TAYLOR};

Test(attn_maps, gradients_of_every_kernel)
{
    const char *kernels[] = {"linear-gemm", "linear-causal-chunked", "linear-causal-prefix",
                             "linear-reference", "linear-reference"};
    int causal[] = {0, 1, 1, 0, 1}, lengths[] = {2, 11, 13};
    /* Not N = 1 (unlike check_all_lengths): there dq and dk are exactly
     * eps-sized, and their float value is the rounding of cancelling O(1)
     * terms, which these maps' Jacobians (favor: W's rows summed over the
     * features; taylor: D + D^2 features) carry to 1.0e-7 to 1.3e-7, just
     * past GRAD_FLOOR * GRAD_BOUND (seen in the plain reference kernel too,
     * and with either map depending on the build's vectorisation). */
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 5; k++)
            for (int i = 0; i < 3; i++)
                check_against_reference(map_config("linear", causal[k], kernels[k], new_maps[m]),
                                        shape_of(2, 2, lengths[i], 5, 3), -1.0f, 1.0f,
                                        GRAD_BOUND);
}

Test(attn_maps, favor_gradients_with_a_seed_and_layer)
{
    lt_attn_shape s = shape_of(1, 2, 11, 5, 3);
    s.seed = 77;
    s.layer = 3;
    check_against_reference(map_config("linear", 1, NULL, LT_FEATURE_FAVOR), s, -1.0f, 1.0f,
                            GRAD_BOUND);
    /* more features than a block, at the image experiment's D */
    lt_attn_config c = map_config("linear", 0, NULL, LT_FEATURE_FAVOR);
    c.random_features = 40;
    check_against_reference(c, shape_of(1, 1, 9, 32, 4), -0.5f, 0.5f, GRAD_BOUND);
}

Test(attn_maps, kernels_equal_reference)
{
    for (int m = 0; m < 2; m++) {
        compare_kernels_both_plans(map_config("linear", 0, "linear-gemm", new_maps[m]),
                                   map_config("linear", 0, "linear-reference", new_maps[m]), 150,
                                   LINEAR_REFERENCE_BOUND);
        const char *causal[] = {"linear-causal-chunked", "linear-causal-prefix"};
        for (int k = 0; k < 2; k++)
            compare_kernels_both_plans(map_config("linear", 1, causal[k], new_maps[m]),
                                       map_config("linear", 1, "linear-reference", new_maps[m]),
                                       150, LINEAR_REFERENCE_BOUND);
    }
}

/* Chunked against prefix around chunk boundaries: one short of a chunk, one
 * chunk, one over, several with a partial last one. */
static void check_chunk_boundaries(lt_attn_config chunked, lt_attn_config prefix)
{
    const int C = attn_linear_chunk(attn_feature_dim(&chunked, 6), 5);
    int lengths[] = {C - 1, C, C + 1, 5 * C + 3};
    for (int i = 0; i < 4; i++)
        compare_kernels_both_plans(chunked, prefix, lengths[i], SAME_BOUND);
}

Test(attn_maps, chunked_equals_prefix_at_chunk_boundaries)
{
    for (int m = 0; m < 2; m++)
        check_chunk_boundaries(map_config("linear", 1, "linear-causal-chunked", new_maps[m]),
                               map_config("linear", 1, "linear-causal-prefix", new_maps[m]));
}

Test(attn_maps, same_bits_for_any_threads)
{
    for (int m = 0; m < 2; m++) {
        lt_attn_config configs[] = {map_config("linear", 0, "linear-gemm", new_maps[m]),
                                    map_config("linear", 1, "linear-causal-chunked", new_maps[m]),
                                    map_config("linear", 1, "linear-causal-prefix", new_maps[m])};
        for (int i = 0; i < 3; i++) {
            check_same_bits_for_any_threads(configs[i], shape_of(1, 1, 333, 6, 5));
            check_same_bits_for_any_threads(configs[i], shape_of(1, 2, 333, 6, 5));
            /* 41 chunks: an odd count, whose last chunk no even window leaves bare */
            check_same_bits_for_any_threads(configs[i], shape_of(1, 1, 325, 6, 5));
        }
    }
}

Test(attn_maps, steps_equal_forward)
{
    /* the prefix kernel and the step share features and token update */
    lt_attn_config favor = map_config("linear", 1, "linear-causal-prefix", LT_FEATURE_FAVOR);
    check_steps_match_forward(favor, 0.0);
    favor.kernel = "linear-causal-chunked";
    check_steps_match_forward(favor, 1e-5);
    /* taylor's 1 + D + D^2 features: a smaller D than the image's 32 */
    lt_attn_config taylor = map_config("linear", 1, "linear-causal-prefix", LT_FEATURE_TAYLOR);
    lt_attn_shape shapes[] = {shape_of(2, 3, 75, 5, 4), shape_of(1, 2, 150, 12, 8)};
    for (int i = 0; i < 2; i++) {
        taylor.kernel = "linear-causal-prefix";
        check_steps_match_forward_shape(taylor, shapes[i], 0.0);
        taylor.kernel = "linear-causal-chunked";
        check_steps_match_forward_shape(taylor, shapes[i], 1e-5);
    }
}

Test(attn_maps, favor_steps_draw_the_forward_features)
{
    /* a state initialised with the forward's seed and layer steps through
     * the same features; another seed gives other outputs */
    lt_attn_config c = map_config("linear", 1, "linear-causal-prefix", LT_FEATURE_FAVOR);
    lt_attn_shape s = shape_of(1, 2, 20, 5, 3);
    s.seed = 1234;
    s.layer = 5;
    run r;
    run_setup(&r, c, s, 13, -1.0f, 1.0f);
    run_forward(&r);
    for (int seed_off = 0; seed_off <= 1; seed_off++) {
        size_t bytes;
        void *state;
        cr_assert_eq(lt_attn_state_bytes(&r.attn, 1, 2, 5, 3, 20, &bytes), LT_OK);
        cr_assert_eq(lt_mem_alloc(&state, bytes, "state"), LT_OK);
        cr_assert_eq(lt_attn_state_init(&r.attn, state, 1, 2, 5, 3, 20, s.seed + seed_off, 5),
                     LT_OK);
        float q[10], k[10], v[6], out[6];
        int same = 1;
        for (int i = 0; i < s.N; i++) {
            for (int h = 0; h < 2; h++) {
                memcpy(q + h * 5, r.q + ((size_t)h * s.N + i) * 5, 5 * sizeof(float));
                memcpy(k + h * 5, r.k + ((size_t)h * s.N + i) * 5, 5 * sizeof(float));
                memcpy(v + h * 3, r.v + ((size_t)h * s.N + i) * 3, 3 * sizeof(float));
            }
            cr_assert_eq(lt_attn_step(&r.attn, state, out, q, k, v), LT_OK);
            for (int h = 0; h < 2; h++)
                same &= memcmp(out + h * 3, r.out + ((size_t)h * s.N + i) * 3,
                               3 * sizeof(float)) == 0;
        }
        cr_expect_eq(same, !seed_off, "seed offset %d: steps %s the forward", seed_off,
                     same ? "equal" : "differ from");
        lt_mem_free(state);
    }
    run_free(&r);
}

Test(attn_maps, padded_batch_equals_each_sequence_alone)
{
    for (int m = 0; m < 2; m++)
        for (int causal = 0; causal <= 1; causal++) {
            const char *kernel;
            for (int i = 0; (kernel = lt_attn_kernel_at("linear", causal, i)) != NULL; i++)
                check_lengths_match_alone(map_config("linear", causal, kernel, new_maps[m]));
        }
}

Test(attn_maps, later_tokens_never_change_earlier_outputs)
{
    const char *kernels[] = {"linear-causal-chunked", "linear-causal-prefix", "linear-reference"};
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 3; i++) {
            check_causal(map_config("linear", 1, kernels[i], new_maps[m]), 150, 100);
            check_causal(map_config("linear", 1, kernels[i], new_maps[m]), 150, 0);
        }
}

Test(attn_maps, taylor_features_give_the_second_order_expansion)
{
    int dims[] = {1, 7, LT_ATTN_TAYLOR_MAX_D};
    for (int t = 0; t < 3; t++) {
        const int D = dims[t];
        lt_attn_config c = map_config("linear", 0, NULL, LT_FEATURE_TAYLOR);
        cr_assert_eq(attn_feature_dim(&c, D), 1 + D + D * D);
        attn_features fx = attn_features_of(&c, D, NULL);
        float *x = alloc_floats(2 * (size_t)D), *f = alloc_floats(2 * (size_t)fx.F);
        lt_rng rng;
        lt_rng_seed(&rng, 4, (uint64_t)D);
        for (int trial = 0; trial < 20; trial++) {
            lt_rng_fill_uniform(&rng, x, 2 * D, -2.0f, 2.0f);
            attn_phi(&fx, f, x, 2, ATTN_QUERY);
            double dot = 0, s = 0;
            for (int i = 0; i < fx.F; i++)
                dot += (double)f[i] * f[fx.F + i];
            for (int d = 0; d < D; d++)
                s += (double)x[d] * x[D + d] / sqrt(D);
            double expect = 1 + s + s * s / 2;
            cr_expect(fabs(dot - expect) <= 1e-5 * expect, "D = %d: %g, expected %g", D, dot,
                      expect);
        }
        lt_mem_free(x);
        lt_mem_free(f);
    }
}

/* out of one forward of favor attention for a shape's seed, step and layer */
static float *favor_out(lt_attn_shape s)
{
    run r;
    run_setup(&r, map_config("linear", 0, NULL, LT_FEATURE_FAVOR), s, 3, -1.0f, 1.0f);
    run_forward(&r);
    float *out = malloc(sizeof(float) * r.nv);
    memcpy(out, r.out, sizeof(float) * r.nv);
    run_free(&r);
    return out;
}

Test(attn_maps, favor_draws_depend_on_seed_and_layer_only)
{
    lt_attn_shape s = shape_of(1, 2, 30, 5, 4);
    s.seed = 11;
    s.layer = 2;
    s.step = 1;
    size_t n = 2 * 30 * 4 * sizeof(float);
    float *base = favor_out(s);
    s.step = 999; /* another update: the same features */
    float *other_step = favor_out(s);
    cr_expect_arr_eq(other_step, base, n);
    s.seed = 12;
    float *other_seed = favor_out(s);
    cr_expect_arr_neq(other_seed, base, n);
    s.seed = 11;
    s.layer = 3;
    float *other_layer = favor_out(s);
    cr_expect_arr_neq(other_layer, base, n);
    free(base);
    free(other_step);
    free(other_seed);
    free(other_layer);

    /* the draw itself: orthogonal within blocks of D rows, Gaussian-length rows */
    lt_attn_config c = map_config("linear", 0, NULL, LT_FEATURE_FAVOR);
    const int D = 16, m = 2048;
    c.random_features = m;
    float *W = alloc_floats(attn_features_floats(&c, D)), *again = alloc_floats(m * D + 1);
    attn_features_draw(W, &c, D, 5, 1);
    attn_features_draw(again, &c, D, 5, 1);
    cr_expect_arr_eq(W, again, (m * D + 1) * sizeof(float));
    double worst = 0, mean_sq = 0;
    for (int r = 0; r < m; r++) {
        const float *a = W + (size_t)r * D;
        double na = 0;
        for (int d = 0; d < D; d++)
            na += (double)a[d] * a[d];
        mean_sq += na / m;
        for (int p = r / D * D; p < r; p++) {
            const float *b = W + (size_t)p * D;
            double ab = 0, nb = 0;
            for (int d = 0; d < D; d++) {
                ab += (double)a[d] * b[d];
                nb += (double)b[d] * b[d];
            }
            worst = fmax(worst, fabs(ab) / sqrt(na * nb));
        }
    }
    cr_expect_lt(worst, 1e-5, "rows of a block are not orthogonal: cosine %g", worst);
    /* |w|^2 ~ chi-square(D): mean D, standard error sqrt(2 D / m) = 0.125 */
    cr_expect(fabs(mean_sq - D) < 0.6, "mean squared row length %g, expected %d", mean_sq, D);
    cr_expect_eq(W[(size_t)m * D], 0.0f, "no key shift needed at D = 16");
    lt_mem_free(W);
    lt_mem_free(again);
}

/* sum |a - b| / sum |b|: an average relative error over n values */
static double l1_relative(const float *a, const float *b, size_t n)
{
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        diff += fabs((double)a[i] - b[i]);
        norm += fabs((double)b[i]);
    }
    return diff / norm;
}

Test(attn_maps, favor_with_many_features_approaches_softmax)
{
    /* A statistical check that can fail. Values are the identity, so each
     * output row is that query's attention weights. FAVOR+ estimates each
     * exp(q . k / sqrt(D)) with a relative error of about sqrt((e^|u_q +
     * u_k|^2 - 1) / m): at these inputs about 4% with 4096 features, 80%
     * with 8 (seen on this seed, on average over the weights: 0.028 and
     * 0.29). */
    const int N = 40;
    lt_attn_config c = map_config("linear", 0, NULL, LT_FEATURE_FAVOR);
    c.random_features = 4096;
    lt_attn_shape s = shape_of(1, 2, N, 8, N);
    s.seed = 21;
    run fav, soft, few;
    run_setup(&fav, c, s, 5, -1.0f, 1.0f);
    memset(fav.v, 0, fav.nv * sizeof(float));
    for (int bh = 0; bh < 2; bh++)
        for (int j = 0; j < N; j++)
            fav.v[((size_t)bh * N + j) * N + j] = 1.0f;
    run_setup_like(&soft, &fav, config_of("softmax", 0, NULL));
    c.random_features = 8;
    run_setup_like(&few, &fav, c);
    run_forward(&fav);
    run_forward(&soft);
    run_forward(&few);
    double err = l1_relative(fav.out, soft.out, fav.nv);
    double err_few = l1_relative(few.out, soft.out, few.nv);
    cr_expect_lt(err, 0.1, "favor with 4096 features vs softmax weights: relative error %g", err);
    cr_expect_gt(err_few, 2 * err, "8 features (%g) not clearly worse than 4096 (%g)", err_few,
                 err);
    run_free(&fav);
    run_free(&soft);
    run_free(&few);
}

/* ---- decayed linear attention ---- */

static lt_attn_config decay_config(const char *kernel, lt_feature_map map, float gamma)
{
    lt_attn_config c = map_config("decay", 1, kernel, map);
    c.decay_gamma = gamma;
    return c;
}

static const char *const decay_kernels[] = {"decay-causal-chunked", "decay-causal-prefix",
                                            "decay-reference"};

Test(attn_decay, gradients_of_every_kernel)
{
    /* RetNet's per-head gammas, and a strong decay; two full chunks and a
     * partial one of the chunked kernel (chunks of 16 at F = 5) */
    const lt_feature_map maps[] = {LT_FEATURE_ELU, LT_FEATURE_FAVOR, LT_FEATURE_TAYLOR};
    const float gammas[] = {0.0f, 0.5f};
    for (int k = 0; k < 3; k++) {
        for (int g = 0; g < 2; g++)
            check_against_reference(decay_config(decay_kernels[k], LT_FEATURE_ELU, gammas[g]),
                                    shape_of(1, 2, 38, 5, 3), -1.0f, 1.0f, GRAD_BOUND);
        check_all_lengths(decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f), 11);
    }
    for (int m = 1; m < 3; m++)
        for (int k = 0; k < 3; k++)
            check_against_reference(decay_config(decay_kernels[k], maps[m], 0.8f),
                                    shape_of(1, 2, 38, 5, 3), -1.0f, 1.0f, GRAD_BOUND);
}

Test(attn_decay, kernels_equal_reference)
{
    for (int k = 0; k < 2; k++) {
        compare_kernels_both_plans(decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f),
                                   decay_config("decay-reference", LT_FEATURE_ELU, 0.0f), 200,
                                   LINEAR_REFERENCE_BOUND);
        compare_kernels_both_plans(decay_config(decay_kernels[k], LT_FEATURE_TAYLOR, 0.9f),
                                   decay_config("decay-reference", LT_FEATURE_TAYLOR, 0.9f), 150,
                                   LINEAR_REFERENCE_BOUND);
    }
}

Test(attn_decay, chunked_equals_prefix_at_chunk_boundaries)
{
    const lt_feature_map maps[] = {LT_FEATURE_ELU, LT_FEATURE_FAVOR};
    for (int m = 0; m < 2; m++) {
        check_chunk_boundaries(decay_config("decay-causal-chunked", maps[m], 0.0f),
                               decay_config("decay-causal-prefix", maps[m], 0.0f));
        check_chunk_boundaries(decay_config("decay-causal-chunked", maps[m], 0.7f),
                               decay_config("decay-causal-prefix", maps[m], 0.7f));
    }
}

Test(attn_decay, same_bits_for_any_threads)
{
    for (int k = 0; k < 2; k++) {
        lt_attn_config c = decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f);
        check_same_bits_for_any_threads(c, shape_of(1, 1, 333, 6, 5));
        check_same_bits_for_any_threads(c, shape_of(1, 3, 333, 6, 5));
    }
    check_same_bits_for_any_threads(decay_config("decay-causal-chunked", LT_FEATURE_FAVOR, 0.9f),
                                    shape_of(1, 2, 333, 6, 5));
}

Test(attn_decay, steps_equal_forward)
{
    check_steps_match_forward(decay_config("decay-causal-prefix", LT_FEATURE_ELU, 0.0f), 0.0);
    check_steps_match_forward(decay_config("decay-causal-chunked", LT_FEATURE_ELU, 0.0f), 1e-5);
    check_steps_match_forward(decay_config("decay-causal-chunked", LT_FEATURE_FAVOR, 0.9f), 1e-5);
}

Test(attn_decay, padded_batch_equals_each_sequence_alone)
{
    for (int k = 0; k < 3; k++)
        check_lengths_match_alone(decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f));
}

Test(attn_decay, later_tokens_never_change_earlier_outputs)
{
    for (int k = 0; k < 3; k++) {
        check_causal(decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f), 150, 100);
        check_causal(decay_config(decay_kernels[k], LT_FEATURE_ELU, 0.0f), 150, 0);
    }
}

Test(attn_decay, gamma_one_equals_causal_linear)
{
    const char *linear[] = {"linear-causal-chunked", "linear-causal-prefix", "linear-reference"};
    for (int k = 0; k < 3; k++) {
        lt_attn_config d = decay_config(decay_kernels[k], LT_FEATURE_ELU, 1.0f);
        compare_kernels_both_plans(d, config_of("linear", 1, linear[k]), k == 2 ? 100 : 333, 1e-6);
    }
}

Test(attn_decay, decay_forgets_the_past)
{
    /* out_i with gamma = 0.5: a key 40 positions back weighs 2^-40 of the
     * newest, so outputs equal those of the last 20 tokens alone */
    lt_attn_config c = decay_config(NULL, LT_FEATURE_ELU, 0.5f);
    run full, tail;
    run_setup(&full, c, shape_of(1, 1, 60, 4, 3), 8, -1.0f, 1.0f);
    run_setup(&tail, c, shape_of(1, 1, 20, 4, 3), 1, -1.0f, 1.0f);
    memcpy(tail.q, full.q + 40 * 4, 20 * 4 * sizeof(float));
    memcpy(tail.k, full.k + 40 * 4, 20 * 4 * sizeof(float));
    memcpy(tail.v, full.v + 40 * 3, 20 * 3 * sizeof(float));
    run_forward(&full);
    run_forward(&tail);
    /* the last row: its 20-token window differs by keys weighing < 2^-20 */
    expect_close(full.out + 59 * 3, tail.out + 19 * 3, 3, 1e-5, "last row vs its window");
    run_free(&full);
    run_free(&tail);
}

/* ---- what the new maps and the decay variant say and refuse ---- */

Test(attn_decay, caps_and_defaults)
{
    lt_attn_caps caps;
    cr_assert_eq(lt_attn_variant_caps("decay", &caps), LT_OK);
    cr_expect(caps.causal && !caps.noncausal && !caps.params && caps.recurrent);
    cr_expect_neq(strstr(caps.no_noncausal_reason, "recurrence"), NULL);
    lt_attn_config c = lt_attn_default_config("decay");
    cr_expect_eq(c.causal, 1, "a causal-only variant's default is causal");
    cr_expect_eq(c.decay_gamma, 0.0f);
    cr_expect_eq(lt_attn_default_config("linear").random_features, 64);
    cr_expect_str_eq(lt_attn_kernel_at("decay", 1, 0), "decay-causal-chunked");
    cr_expect_eq(lt_attn_kernel_at("decay", 0, 0), NULL);
    cr_expect_neq(strstr(lt_attn_variant_names(), "decay"), NULL);
    char names[256];
    snprintf(names, sizeof names, "%s", lt_attn_kernel_names("decay"));
    for (char *name = strtok(names, "|"); name != NULL; name = strtok(NULL, "|")) {
        lt_attn a;
        lt_attn_config k = config_of("decay", 1, name);
        cr_expect_eq(lt_attn_init(&a, &k), LT_OK, "%s: %s", name, lt_last_error());
        cr_expect_str_eq(lt_attn_kernel_name(&a, shape_of(1, 1, 8, 4, 4)), name);
    }
}

/* lt_attn_init fails with LT_E_USAGE and a message naming `field`. */
static void expect_refused(lt_attn_config c, const char *field)
{
    lt_attn a;
    cr_expect_eq(lt_attn_init(&a, &c), LT_E_USAGE, "%s accepted", field);
    cr_expect_neq(strstr(lt_last_error(), field), NULL, "%s", lt_last_error());
}

Test(attn_decay, bad_configurations_refused)
{
    expect_refused(config_of("decay", 0, NULL), "causal: ");
    lt_attn_config c = decay_config(NULL, LT_FEATURE_ELU, 1.5f);
    expect_refused(c, "decay_gamma");
    c.decay_gamma = -0.25f;
    expect_refused(c, "decay_gamma");
    c.decay_gamma = NAN;
    expect_refused(c, "decay_gamma");
    c = decay_config("linear-causal-chunked", LT_FEATURE_ELU, 0.0f);
    expect_refused(c, "kernel");
    c = decay_config(NULL, LT_FEATURE_FAVOR, 0.0f);
    c.eps = 0.0f;
    expect_refused(c, "eps");
}

Test(attn_maps, bad_configurations_refused)
{
    lt_attn_config c = map_config("linear", 0, NULL, LT_FEATURE_FAVOR);
    c.random_features = 0;
    expect_refused(c, "random_features");
    c.random_features = 65537;
    expect_refused(c, "random_features");
    c.random_features = 64;
    c.eps = 0.0f;
    expect_refused(c, "eps");
    c = map_config("linear", 0, NULL, LT_FEATURE_TAYLOR);
    c.eps = 0.0f; /* 1 + s + s^2 / 2 >= 1/2: no zero normaliser */
    lt_attn a;
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK, "%s", lt_last_error());
    cr_expect_eq(lt_attn_check_shape(&a, shape_of(1, 1, 8, LT_ATTN_TAYLOR_MAX_D, 4)), LT_OK);
    cr_expect_eq(lt_attn_check_shape(&a, shape_of(1, 1, 8, LT_ATTN_TAYLOR_MAX_D + 1, 4)),
                 LT_E_INPUT);
    cr_expect_neq(strstr(lt_last_error(), "key dimension D = 65"), NULL, "%s", lt_last_error());
    c.causal = 1;
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    size_t bytes = 1;
    cr_expect_eq(lt_attn_state_bytes(&a, 1, 1, LT_ATTN_TAYLOR_MAX_D + 1, 4, 8, &bytes), LT_E_INPUT);
    cr_expect_eq(bytes, 0);
    lt_feature_map map;
    cr_expect_eq(lt_attn_parse_feature_map(&map, "favor", "--feature-map"), LT_OK);
    cr_expect_eq(map, LT_FEATURE_FAVOR);
    cr_expect_str_eq(lt_attn_feature_map_name(map), "favor");
    cr_expect_eq(lt_attn_parse_feature_map(&map, "taylor", "--feature-map"), LT_OK);
    cr_expect_eq(map, LT_FEATURE_TAYLOR);
    cr_expect_str_eq(lt_attn_feature_map_name(map), "taylor");
    cr_expect_eq(lt_attn_parse_feature_map(&map, "performer", "--feature-map"), LT_E_USAGE);
    cr_expect_neq(strstr(lt_last_error(), "favor, taylor"), NULL, "%s", lt_last_error());
}

/* ---- plans of the new maps and of decay ---- */

Test(attn_maps, state_holds_f_by_m_and_f_floats_a_head)
{
    /* taylor at D = 8: F = 73; favor: m = 12 features plus W (12 x 8 + 1 floats) */
    const lt_feature_map maps[] = {LT_FEATURE_TAYLOR, LT_FEATURE_FAVOR};
    const size_t F[] = {73, 12}, block[] = {0, 448}; /* W in whole cache lines */
    for (int m = 0; m < 2; m++) {
        lt_attn a;
        lt_attn_config c = map_config("linear", 1, NULL, maps[m]);
        cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
        size_t small, large;
        cr_assert_eq(lt_attn_state_bytes(&a, 2, 3, 8, 4, 10, &small), LT_OK);
        cr_assert_eq(lt_attn_state_bytes(&a, 2, 3, 8, 4, 100000, &large), LT_OK);
        cr_expect_eq(small, large);
        cr_expect_eq(small, 64 + block[m] + 6 * (F[m] * 4 + 3 * F[m]) * sizeof(float));
    }
}

Test(attn_maps, kernels_allocate_nothing)
{
    lt_attn_config configs[] = {
        map_config("linear", 0, "linear-gemm", LT_FEATURE_FAVOR),
        map_config("linear", 1, "linear-causal-chunked", LT_FEATURE_TAYLOR),
        decay_config("decay-causal-chunked", LT_FEATURE_FAVOR, 0.0f),
        decay_config("decay-causal-prefix", LT_FEATURE_ELU, 0.0f),
    };
    for (int i = 0; i < 4; i++) {
        run r;
        run_setup(&r, configs[i], shape_of(1, 1, 300, 6, 5), 3, -1.0f, 1.0f);
        size_t before = lt_mem_current();
        lt_mem_reset_peak();
        run_forward(&r);
        run_backward(&r);
        cr_expect_eq(lt_mem_peak(), before, "%s allocated while running", r.attn.config.kernel);
        run_free(&r);
    }
}

Test(attn_maps, flop_model)
{
    /* F replaces D in the products; favor adds its projections, 2 N D m for
     * the queries and again for the keys; decay counts as linear */
    lt_attn_shape s = shape_of(2, 4, 1000, 32, 16);
    lt_attn fav, tay, dec, lin;
    lt_attn_config cf = map_config("linear", 0, NULL, LT_FEATURE_FAVOR);
    lt_attn_config ct = map_config("linear", 1, NULL, LT_FEATURE_TAYLOR);
    lt_attn_config cd = decay_config(NULL, LT_FEATURE_ELU, 0.0f), cl = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&fav, &cf), LT_OK);
    cr_assert_eq(lt_attn_init(&tay, &ct), LT_OK);
    cr_assert_eq(lt_attn_init(&dec, &cd), LT_OK);
    cr_assert_eq(lt_attn_init(&lin, &cl), LT_OK);
    double expect = (4.0 * 1000 * 12 * 16 + 3.0 * 1000 * 12 + 4.0 * 1000 * 32 * 12) * 8;
    cr_expect_float_eq(lt_attn_flops(&fav, s, 0), expect, 1e-9 * expect);
    double f = 1 + 32 + 32 * 32;
    expect = (4.0 * 1000 * f * 16 + 3.0 * 1000 * f) * 8;
    cr_expect_float_eq(lt_attn_flops(&tay, s, 0), expect, 1e-9 * expect);
    cr_expect_float_eq(lt_attn_flops(&dec, s, 1), lt_attn_flops(&lin, s, 1), 1.0);
    cr_expect_float_eq(lt_attn_flops_performed(&dec, s, 1), lt_attn_flops_performed(&lin, s, 1),
                       1.0);
    /* the gemm kernel performs exactly the model's products */
    double model = lt_attn_flops(&fav, s, 0);
    cr_expect_float_eq(lt_attn_flops_performed(&fav, s, 0), model, 1e-9 * model);
}

/* ---- recurrent steps inside a running thread team ---- */

/* The same positions stepped by lt_attn_step and, on a second state, by
 * every thread of a team of `threads` calling lt_attn_step_team: the same
 * bits at every position, for teams with fewer, as many and more threads
 * than heads. */
static void check_team_steps_same_bits(lt_attn_config config, int threads)
{
    lt_attn a;
    cr_assert_eq(lt_attn_init(&a, &config), LT_OK, "%s", lt_last_error());
    const int B = 2, H = 3, D = 5, M = 4, N = 40, heads = B * H;
    void *alone = new_state(&a, B, H, D, M, N), *team = new_state(&a, B, H, D, M, N);
    float *q = alloc_floats((size_t)heads * D), *k = alloc_floats((size_t)heads * D);
    float *v = alloc_floats((size_t)heads * M), *want = alloc_floats((size_t)heads * M);
    float *got = alloc_floats((size_t)heads * M);
    lt_rng rng;
    lt_rng_seed(&rng, 29, 0);
    for (int i = 0; i < N; i++) {
        lt_rng_fill_uniform(&rng, q, (size_t)heads * D, -1.0f, 1.0f);
        lt_rng_fill_uniform(&rng, k, (size_t)heads * D, -1.0f, 1.0f);
        lt_rng_fill_uniform(&rng, v, (size_t)heads * M, -1.0f, 1.0f);
        cr_assert_eq(lt_attn_step(&a, alone, want, q, k, v), LT_OK, "%s", lt_last_error());
        int failures = 0;
#pragma omp parallel num_threads(threads) reduction(+ : failures)
        failures += lt_attn_step_team(&a, team, got, q, k, v) != LT_OK;
        cr_assert_eq(failures, 0, "%s, %d threads, position %d", config.variant, threads, i);
        cr_assert_eq(memcmp(got, want, (size_t)heads * M * sizeof(float)), 0,
                     "%s, %d threads, position %d: other bits", config.variant, threads, i);
    }
    lt_mem_free(alone);
    lt_mem_free(team);
    lt_mem_free(q);
    lt_mem_free(k);
    lt_mem_free(v);
    lt_mem_free(want);
    lt_mem_free(got);
}

/* The recurrent steps (softmax's cache over more rows than one block of
 * its online softmax, linear attention's state) give the same bits on
 * every kernel set with fused multiply-adds. */
Test(attn_recurrent, steps_same_bits_on_every_fused_kernel_set)
{
    const lt_kernel_set was = lt_kernels_active();
    const lt_attn_config configs[] = {config_of("softmax", 1, NULL), config_of("linear", 1, NULL)};
    const int B = 1, H = 2, D = 64, N = 560, heads = B * H;
    /* M = 24: 8 columns left over by 16-float vectors, none by 8-float ones */
    for (int M = 24; M <= 64; M += 40)
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        lt_attn a;
        cr_assert_eq(lt_attn_init(&a, &configs[c]), LT_OK, "%s", lt_last_error());
        float *first = NULL;
        for (int set = 0; set < LT_KERNEL_SETS; set++) {
            if (!lt_kernels_usable((lt_kernel_set)set) || !lt_kernels_fused((lt_kernel_set)set))
                continue;
            cr_assert_eq(lt_kernels_use((lt_kernel_set)set), LT_OK);
            void *state = new_state(&a, B, H, D, M, N);
            float *q = alloc_floats((size_t)heads * D), *k = alloc_floats((size_t)heads * D);
            float *v = alloc_floats((size_t)heads * M);
            float *outs = alloc_floats((size_t)N * heads * M);
            lt_rng rng;
            lt_rng_seed(&rng, 31, 0);
            for (int i = 0; i < N; i++) {
                lt_rng_fill_uniform(&rng, q, (size_t)heads * D, -1.0f, 1.0f);
                lt_rng_fill_uniform(&rng, k, (size_t)heads * D, -1.0f, 1.0f);
                lt_rng_fill_uniform(&rng, v, (size_t)heads * M, -1.0f, 1.0f);
                cr_assert_eq(lt_attn_step(&a, state, outs + (size_t)i * heads * M, q, k, v),
                             LT_OK, "%s", lt_last_error());
            }
            if (first == NULL)
                first = outs;
            else {
                cr_expect_eq(memcmp(outs, first, (size_t)N * heads * M * sizeof(float)), 0,
                             "%s steps (M = %d) under %s differ from the first fused set's",
                             configs[c].variant, M, lt_kernels_name((lt_kernel_set)set));
                lt_mem_free(outs);
            }
            lt_mem_free(state);
            lt_mem_free(q);
            lt_mem_free(k);
            lt_mem_free(v);
        }
        if (first != NULL)
            lt_mem_free(first);
    }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}

Test(attn_recurrent, team_steps_give_the_same_bits_as_steps)
{
    const int teams[] = {1, 2, 4, 7};
    for (int t = 0; t < 4; t++) {
        check_team_steps_same_bits(config_of("linear", 1, NULL), teams[t]);
        check_team_steps_same_bits(config_of("softmax", 1, NULL), teams[t]);
        check_team_steps_same_bits(decay_config("decay-causal-prefix", LT_FEATURE_FAVOR, 0.9f),
                                   teams[t]);
    }
}

/* A bad step fails in every thread of the team, each with the message, and
 * counts no position: a NaN query, then a full cache. */
Test(attn_recurrent, a_team_step_fails_in_every_thread)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    void *state = new_state(&a, 1, 2, 2, 2, 2);
    float x[4] = {0.5f, -0.25f, 1.0f, 2.0f}, bad[4] = {0.5f, NAN, 1.0f, 2.0f}, out[4];
    for (int round = 0; round < 4; round++) {
        const float *q = round == 0 ? bad : x;
        int numeric = 0, full = 0, ok = 0, named = 0;
#pragma omp parallel num_threads(3) reduction(+ : numeric, full, ok, named)
        {
            lt_status status = lt_attn_step_team(&a, state, out, q, x, x);
            ok += status == LT_OK;
            numeric += status == LT_E_NUMERIC;
            full += status == LT_E_USAGE;
            named += status != LT_OK &&
                     strstr(lt_last_error(), status == LT_E_NUMERIC ? "input q" : "full") != NULL;
        }
        /* the NaN counts no position: two more fit, then the cache is full */
        int want_ok = round == 1 || round == 2;
        cr_expect_eq(ok, want_ok ? 3 : 0, "round %d", round);
        cr_expect_eq(numeric, round == 0 ? 3 : 0, "round %d", round);
        cr_expect_eq(full, round == 3 ? 3 : 0, "round %d", round);
        cr_expect_eq(named, want_ok ? 0 : 3, "round %d", round);
    }
    lt_mem_free(state);
}

/* Generation's roofline: a softmax step at position p reads p + 1 keys and
 * values of every head, at any p (the key cache is allocated 32 rows at a
 * time, which a difference of one step hides); a linear step reads and
 * writes its constant state. */
Test(attn_recurrent, step_cost_counts_every_cached_key_and_value)
{
    const int H = 3, D = 5, M = 4;
    lt_attn a;
    lt_attn_config c = config_of("softmax", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    const int positions[] = {0, 1, 31, 32, 100};
    for (int i = 0; i < 5; i++) {
        double bytes, flops, want = (double)(positions[i] + 1) * H * (D + M) * sizeof(float);
        cr_assert_eq(lt_attn_step_cost(&a, H, D, M, positions[i], &bytes, &flops), LT_OK);
        cr_expect_float_eq(bytes, want, 1e-9 * want, "position %d: %g bytes", positions[i], bytes);
        cr_expect_float_eq(flops, 2.0 * want / sizeof(float), 1e-9 * want, "position %d",
                           positions[i]);
    }
    lt_attn l;
    lt_attn_config cl = config_of("linear", 1, NULL);
    cr_assert_eq(lt_attn_init(&l, &cl), LT_OK);
    double first, later, flops;
    cr_assert_eq(lt_attn_step_cost(&l, H, D, M, 0, &first, &flops), LT_OK);
    cr_assert_eq(lt_attn_step_cost(&l, H, D, M, 500, &later, &flops), LT_OK);
    cr_expect_eq(first, later, "a constant state costs the same at every position");
    cr_expect_geq(first, 2.0 * H * (D * M + D) * sizeof(float), "S and z, read and written");
}

/* ---- the sweeps' rule for running or skipping a case ---- */

/* A kernel's first case runs whatever its time would be; later ones are
 * estimated from the last case run, in proportion to the FLOPs. */
Test(attn_admit, first_case_runs_and_later_ones_are_extrapolated_by_flops)
{
    lt_attn_admission a;
    lt_attn_last_case none = lt_attn_no_case_yet();
    lt_attn_admit_case(&none, 4096, 1e12, 0.001, &a);
    cr_expect_str_eq(a.status, "ok", "nothing to extrapolate from");
    cr_expect(isnan(a.estimate_seconds));
    cr_expect_str_eq(a.why, "");
    lt_attn_last_case last = {.seconds = 2.0, .flops = 1e9};
    lt_attn_admit_case(&last, 4096, 2e9, 5.0, &a);
    cr_expect_str_eq(a.status, "ok");
    cr_expect_float_eq(a.estimate_seconds, 4.0, 1e-12);
    cr_expect_str_eq(a.why, "");
    lt_attn_admit_case(&last, 4096, 2e9, 4.0, &a);
    cr_expect_str_eq(a.status, "ok", "an estimate equal to the limit is within it");
}

Test(attn_admit, skipped_for_time_says_the_estimate_and_the_limit)
{
    lt_attn_admission a;
    lt_attn_last_case last = {.seconds = 2.0, .flops = 1e9};
    lt_attn_admit_case(&last, 4096, 2e9, 3.0, &a);
    cr_expect_str_eq(a.status, "skipped-time");
    cr_expect_float_eq(a.estimate_seconds, 4.0, 1e-12);
    cr_expect(strstr(a.why, "estimated 4 s") != NULL, "%s", a.why);
    cr_expect(strstr(a.why, "--max-case-seconds 3") != NULL, "%s", a.why);
}

/* Memory is checked first: a case over the budget is skipped for it even
 * when its time is over the limit too. */
Test(attn_admit, skipped_for_the_budget_before_the_time)
{
    lt_mem_set_budget(lt_mem_current() + 8192);
    lt_attn_admission a;
    lt_attn_last_case last = {.seconds = 2.0, .flops = 1e9};
    lt_attn_admit_case(&last, 8192, 2e9, 5.0, &a);
    cr_expect_str_eq(a.status, "ok", "exactly the budget fits");
    lt_attn_admit_case(&last, 8193, 2e9, 5.0, &a);
    cr_expect_str_eq(a.status, "skipped-budget");
    cr_expect(strstr(a.why, "needs") != NULL && strstr(a.why, "budget") != NULL, "%s", a.why);
    lt_attn_last_case none = lt_attn_no_case_yet();
    lt_attn_admit_case(&none, 1 << 20, 1e9, 5.0, &a);
    cr_expect_str_eq(a.status, "skipped-budget", "a first case is limited by its memory");
    lt_attn_admit_case(&last, 1 << 20, 2e9, 3.0, &a);
    cr_expect_str_eq(a.status, "skipped-budget");
    lt_mem_set_budget(0);
}

/* What the estimate extrapolates is the whole call: every warmup and timed
 * run of both passes, so at least the sum of the timed runs. */
Test(attn_admit, a_case_ran_records_the_whole_call)
{
    lt_attn a;
    lt_attn_config c = config_of("softmax", 1, NULL);
    cr_assert_eq(lt_attn_init(&a, &c), LT_OK);
    const lt_attn_shape s = shape_of(2, 2, 128, 16, 16);
    enum { REPEATS = 3 };
    double samples[2 * REPEATS];
    lt_attn_timing t;
    cr_assert_eq(lt_attn_time_case(&a, s, 7, 0, 2, REPEATS, samples, &t), LT_OK, "%s",
                 lt_last_error());
    double timed = 0;
    for (int i = 0; i < 2 * REPEATS; i++)
        timed += samples[i];
    cr_expect_geq(t.case_seconds, timed, "whole call %g s, timed runs %g s", t.case_seconds,
                  timed);
    double flops = lt_attn_flops(&a, s, 0) + lt_attn_flops(&a, s, 1);
    lt_attn_last_case last = lt_attn_no_case_yet();
    lt_attn_case_ran(&last, &t, flops);
    cr_expect_eq(last.seconds, t.case_seconds);
    cr_expect_eq(last.flops, flops);
    lt_attn_admission next;
    lt_attn_admit_case(&last, 4096, 4 * flops, 1e7, &next);
    cr_expect_float_eq(next.estimate_seconds, 4 * t.case_seconds, 1e-9 * t.case_seconds);
}
