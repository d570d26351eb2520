/* Attention core: gradients against finite differences of a double-precision
 * reference, fast kernels against reference kernels, recurrent forms against
 * the all-at-once forward, causality, and refusal of bad configurations,
 * shapes and inputs. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "attn/attn_internal.h"
#include "check.h"
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
    case LT_FEATURE_IDENTITY: return x;
    }
    return x;
}

/* out (B,H,N,M) from x = [q | k | v | params]. Per (batch, head) and query
 * row i, the row attends over "slots" (the keys and values, or Linformer's
 * projections of them): softmax of scaled dot products, or for linear
 * attention the quadratic form a_j = phi(q_i) . phi(k_j), out_i = sum_j a_j
 * v_j / (sum_j a_j + eps). Causal rows see slots j <= i. */
static void ref_attention(double *out, const double *x, const lt_attn_config *c, lt_attn_shape s)
{
    const int N = s.N, D = s.D, M = s.M;
    const int linformer = strcmp(c->variant, "linformer") == 0;
    const int linear = strcmp(c->variant, "linear") == 0;
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
        for (int i = 0; i < N; i++) {
            int cols = c->causal ? i + 1 : slots;
            double max = -INFINITY, sum = 0;
            for (int j = 0; j < cols; j++) {
                double a = 0;
                for (int d = 0; d < D; d++)
                    a += linear ? phi_d(c->feature_map, q[(size_t)i * D + d]) *
                                      phi_d(c->feature_map, keys[(size_t)j * D + d])
                                : q[(size_t)i * D + d] * keys[(size_t)j * D + d] / sqrt(D);
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
        cr_expect_lt(err, bound, "%s %s N=%d: %s relative error %g", r.attn.config.kernel,
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

Test(attn_kernels, forward_without_saved_matches)
{
    /* inference only (saved = NULL) takes another path through the workspace */
    const char *variants[] = {"softmax", "linear", "linear", "linformer"};
    int causal[] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
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
    cr_assert_eq(lt_attn_state_init(attn, state, B, H, D, M, max_steps), LT_OK, "%s",
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

Test(attn_recurrent, refused_without_causal_or_for_linformer)
{
    const char *variants[] = {"softmax", "linear", "linformer"};
    const char *reason[] = {"causal", "causal", "mixes all positions"};
    for (int i = 0; i < 3; i++) {
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
    const char *variants[] = {"softmax", "linear", "linformer"};
    for (int i = 0; i < 3; i++) {
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
    const char *variants[] = {"softmax", "linear", "linformer"};
    lt_attn_shape bad[] = {shape_of(1, 1, 4, 0, 4), shape_of(1, 1, 4, 4, 0), shape_of(0, 1, 4, 4, 4),
                           shape_of(1, 0, 4, 4, 4), shape_of(1, 1, -1, 4, 4)};
    float x[64] = {0};
    for (int i = 0; i < 3; i++) {
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
    const char *variants[] = {"softmax", "linear", "linformer"};
    for (int i = 0; i < 3; i++) {
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
            cr_expect_eq(lt_attn_forward(&r.attn, r.shape, r.out, r.saved, r.ws, r.q, r.k, r.v,
                                         r.params),
                         LT_E_NUMERIC);
            cr_expect_neq(strstr(lt_last_error(), names[t]), NULL, "%s", lt_last_error());
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

Test(attn_usage, empty_sequence_is_a_no_op)
{
    const char *variants[] = {"softmax", "linear", "linear", "linformer"};
    int causal[] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
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
        double err = fabs((double)attn_exp_nonpositive(x) - ref) / ulp;
        worst = err > worst ? err : worst;
    }
    cr_expect_lt(worst, 2.0, "worst error %g ulp", worst);
    cr_expect_eq(attn_exp_nonpositive(0.0f), 1.0f);
    cr_expect_eq(attn_exp_nonpositive(-0.0f), 1.0f);
    cr_expect_eq(attn_exp_nonpositive(-INFINITY), 0.0f);
    cr_expect_eq(attn_exp_nonpositive(-88.0f), 0.0f);
    /* between -87.5 and ln(FLT_MIN) the results are denormals, still close */
    cr_expect_lt(fabs(attn_exp_nonpositive(-87.4f) - exp((double)-87.4f)), 3e-45);
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
                             "linear-gemm"};
    int causal[] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        run r;
        const char *variant = strncmp(kernels[i], "softmax", 7) == 0 ? "softmax" : "linear";
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
    double one = lt_attn_sgemm_gflops(96, 1);
    cr_expect(isfinite(one) && one > 0, "rate %g", one);
    cr_expect_eq(lt_threads_get(), 2);
    cr_expect(isnan(lt_attn_sgemm_gflops(0, 1)));
    cr_expect(lt_attn_blas_core() != NULL && lt_attn_blas_core()[0] != '\0');
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
    const char *variants[] = {"softmax", "linear", "linformer"};
    for (int v = 0; v < 3; v++)
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
