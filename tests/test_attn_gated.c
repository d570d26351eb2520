/* The gated recurrences (delta, gated-delta, gla): their chunked and
 * recurrent kernels against float64 recurrences written from the formulas
 * in attn.h and against each other, steps against both forwards (the
 * recurrent one to the bit), every gradient (q, k, v, beta, log_alpha)
 * against finite differences of the float64 recurrence, the same bits on
 * 1, 2 and 3 threads and on every kernel set with fused multiply-adds,
 * extreme gates over long sequences, and refusals. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "attn/measure.h"
#include "check.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"

static const char *const variants[] = {"delta", "gated-delta", "gla"};
#define VARIANTS 3

/* Each variant's kernels: the chunked one (its default), then the
 * recurrent one. */
#define KERNELS 2
static const char *const kernels[VARIANTS][KERNELS] = {
    {"delta-causal-chunked", "delta-causal-recurrent"},
    {"gated-delta-causal-chunked", "gated-delta-causal-recurrent"},
    {"gla-causal-chunked", "gla-causal-recurrent"},
};

#define GUARD_BYTES 256
#define GUARD_BYTE 0xA5

/* One case and every buffer it needs; gates a variant does not read stay
 * NULL. */
typedef struct gcase {
    lt_attn attn;
    lt_attn_shape shape;
    size_t nq, nv, nb, na; /* floats of q (= k), v (= out), beta, log_alpha */
    float *q, *k, *v, *beta, *la, *d_out;
    float *out, *dq, *dk, *dv, *d_beta, *d_la;
    unsigned char *ws;
    size_t ws_bytes;
} gcase;

static float *floats(size_t n)
{
    void *p = NULL;
    cr_assert_eq(lt_mem_calloc(&p, n * sizeof(float) + 1, "test tensor"), LT_OK);
    return p;
}

static lt_attn_shape shape_of(int B, int H, int N, int D, int M)
{
    return (lt_attn_shape){.B = B, .H = H, .N = N, .D = D, .M = M};
}

/* Random inputs: q, k, v uniform in [-1, 1), beta in [0.05, 0.95),
 * log_alpha in [-2, 0), d_out normal; `kernel` NULL: the default. */
static void setup(gcase *c, const char *variant, const char *kernel, lt_attn_shape s,
                  unsigned seed)
{
    memset(c, 0, sizeof *c);
    lt_attn_config config = lt_attn_default_config(variant);
    cr_assert_eq(config.causal, 1, "%s is causal only, so causal by default", variant);
    config.kernel = kernel;
    cr_assert_eq(lt_attn_init(&c->attn, &config), LT_OK, "%s", lt_last_error());
    cr_assert(kernel == NULL || strcmp(c->attn.config.kernel, kernel) == 0);
    int wb, wa;
    lt_attn_gate_widths(&c->attn, s.D, &wb, &wa);
    const size_t pairs = (size_t)s.B * s.H * s.N;
    c->shape = s;
    c->nq = pairs * s.D, c->nv = pairs * s.M, c->nb = pairs * wb, c->na = pairs * wa;
    float **all[] = {&c->q, &c->k, &c->dq, &c->dk};
    for (int i = 0; i < 4; i++)
        *all[i] = floats(c->nq);
    float **vo[] = {&c->v, &c->d_out, &c->out, &c->dv};
    for (int i = 0; i < 4; i++)
        *vo[i] = floats(c->nv);
    if (c->nb > 0)
        c->beta = floats(c->nb), c->d_beta = floats(c->nb);
    if (c->na > 0)
        c->la = floats(c->na), c->d_la = floats(c->na);
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    lt_rng_fill_uniform(&rng, c->q, (long)c->nq, -1.0f, 1.0f);
    lt_rng_fill_uniform(&rng, c->k, (long)c->nq, -1.0f, 1.0f);
    lt_rng_fill_uniform(&rng, c->v, (long)c->nv, -1.0f, 1.0f);
    lt_rng_fill_normal(&rng, c->d_out, (long)c->nv, 1.0f);
    if (c->beta != NULL)
        lt_rng_fill_uniform(&rng, c->beta, (long)c->nb, 0.05f, 0.95f);
    if (c->la != NULL)
        lt_rng_fill_uniform(&rng, c->la, (long)c->na, -2.0f, 0.0f);
    c->ws_bytes = lt_attn_workspace_bytes(&c->attn, s, lt_threads_get());
    void *ws = NULL;
    cr_assert_eq(lt_mem_alloc(&ws, c->ws_bytes + GUARD_BYTES, "workspace"), LT_OK);
    c->ws = ws;
    memset(c->ws, GUARD_BYTE, c->ws_bytes + GUARD_BYTES);
    cr_assert_eq(lt_attn_saved_bytes(&c->attn, s), 0, "backward recomputes: nothing saved");
}

static lt_attn_gates gates_of(const gcase *c)
{
    return (lt_attn_gates){c->beta, c->la, c->d_beta, c->d_la};
}

static void check_guard(const gcase *c)
{
    for (size_t i = 0; i < GUARD_BYTES; i++)
        cr_assert_eq(c->ws[c->ws_bytes + i], GUARD_BYTE, "%s: workspace written past its plan",
                     c->attn.config.variant);
}

static void forward(gcase *c)
{
    lt_attn_gates g = gates_of(c);
    cr_assert_eq(lt_attn_forward_gated(&c->attn, c->shape, &g, c->out, NULL, c->ws, c->q, c->k,
                                       c->v, NULL),
                 LT_OK, "%s", lt_last_error());
    check_guard(c);
}

/* Gradients from zero (backward adds). */
static void backward(gcase *c)
{
    float *grads[] = {c->dq, c->dk, c->dv, c->d_beta, c->d_la};
    size_t counts[] = {c->nq, c->nq, c->nv, c->nb, c->na};
    for (int i = 0; i < 5; i++)
        if (grads[i] != NULL)
            memset(grads[i], 0, counts[i] * sizeof(float));
    lt_attn_gates g = gates_of(c);
    cr_assert_eq(lt_attn_backward_gated(&c->attn, c->shape, &g, c->dq, c->dk, c->dv, NULL, c->ws,
                                        c->d_out, NULL, c->q, c->k, c->v, NULL),
                 LT_OK, "%s", lt_last_error());
    check_guard(c);
}

static void release(gcase *c)
{
    float *all[] = {c->q,  c->k,  c->v,  c->beta, c->la,     c->d_out,
                    c->out, c->dq, c->dk, c->dv,  c->d_beta, c->d_la};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        lt_mem_free(all[i]);
    lt_mem_free(c->ws);
}

/* ---- float64 recurrences, straight from attn.h's formulas ---- */

/* x / sqrt(|x|^2 + 1e-6), as DeltaNet's l2norm */
static void ref_l2(double *out, const double *x, int D)
{
    double sq = 0;
    for (int f = 0; f < D; f++)
        sq += x[f] * x[f];
    for (int f = 0; f < D; f++)
        out[f] = x[f] / sqrt(sq + 1e-6);
}

/* The inputs as one vector x = [q | k | v | beta | log_alpha]. */
typedef struct ref_view {
    const double *q, *k, *v, *beta, *la;
} ref_view;

static ref_view view_of(const double *x, const gcase *c)
{
    ref_view r = {x, x + c->nq, x + 2 * c->nq, x + 2 * c->nq + c->nv,
                  x + 2 * c->nq + c->nv + c->nb};
    return r;
}

/* One head of delta or gated-delta: S (M x D), S = a S; S += b (v - S k) k^T;
 * out = S q. */
static void ref_delta_head(double *out, const ref_view *x, const gcase *c, int bh, double *S)
{
    const int N = c->shape.N, D = c->shape.D, M = c->shape.M;
    double qn[64], kn[64], Sk[64];
    memset(S, 0, sizeof(double) * D * M);
    for (int t = 0; t < N; t++) {
        const size_t row = (size_t)bh * N + t;
        ref_l2(qn, x->q + row * D, D);
        ref_l2(kn, x->k + row * D, D);
        const double a = c->na > 0 ? exp(x->la[row]) : 1.0, b = x->beta[row];
        for (int m = 0; m < M; m++) {
            Sk[m] = 0;
            for (int f = 0; f < D; f++)
                Sk[m] += (S[m * D + f] *= a) * kn[f];
        }
        for (int m = 0; m < M; m++) {
            double o = 0, u = b * (x->v[row * M + m] - Sk[m]);
            for (int f = 0; f < D; f++)
                o += (S[m * D + f] += u * kn[f]) * qn[f];
            out[row * M + m] = o;
        }
    }
}

/* One head of gla: S (D x M), S = diag(a) S + k v^T, out = S^T q. */
static void ref_gla_head(double *out, const ref_view *x, const gcase *c, int bh, double *S)
{
    const int N = c->shape.N, D = c->shape.D, M = c->shape.M;
    memset(S, 0, sizeof(double) * D * M);
    for (int t = 0; t < N; t++) {
        const size_t row = (size_t)bh * N + t;
        for (int m = 0; m < M; m++)
            out[row * M + m] = 0;
        for (int f = 0; f < D; f++) {
            const double a = exp(x->la[row * D + f]), kf = x->k[row * D + f];
            for (int m = 0; m < M; m++) {
                S[f * M + m] = a * S[f * M + m] + kf * x->v[row * M + m];
                out[row * M + m] += x->q[row * D + f] * S[f * M + m];
            }
        }
    }
}

static void ref_forward(double *out, const double *x, const gcase *c)
{
    const ref_view r = view_of(x, c);
    double *S = malloc(sizeof(double) * c->shape.D * c->shape.M);
    for (int bh = 0; bh < c->shape.B * c->shape.H; bh++) {
        if (c->nb == 0)
            ref_gla_head(out, &r, c, bh, S);
        else
            ref_delta_head(out, &r, c, bh, S);
    }
    free(S);
}

static size_t inputs_of(const gcase *c) { return 2 * c->nq + c->nv + c->nb + c->na; }

static double *to_x(const gcase *c)
{
    double *x = malloc(sizeof(double) * (inputs_of(c) + 1));
    const float *parts[] = {c->q, c->k, c->v, c->beta, c->la};
    const size_t sizes[] = {c->nq, c->nq, c->nv, c->nb, c->na};
    size_t at = 0;
    for (int p = 0; p < 5; p++)
        for (size_t i = 0; i < sizes[p]; i++)
            x[at++] = parts[p][i];
    return x;
}

/* The chunked output's relative error against the float64 recurrence. */
static double forward_error(const gcase *c)
{
    double *x = to_x(c), *ref = malloc(sizeof(double) * c->nv);
    ref_forward(ref, x, c);
    double err = check_rel_error_f(c->out, ref, c->nv, 1e-6);
    free(x);
    free(ref);
    return err;
}

/* ---- forward ---- */

/* float32 chunked sums against the float64 recurrence */
#define FORWARD_BOUND 2e-5

Test(attn_gated, forward_equals_float64_recurrence)
{
    /* several chunks (and recurrent segments) and a partial last one; D = M
     * = 32 uses chunks of 16 */
    const lt_attn_shape shapes[] = {shape_of(2, 2, 70, 8, 6), shape_of(1, 2, 150, 32, 32),
                                    shape_of(1, 1, 1, 3, 2)};
    for (int i = 0; i < VARIANTS; i++)
        for (int kn = 0; kn < KERNELS; kn++)
            for (int s = 0; s < 3; s++) {
                gcase c;
                setup(&c, variants[i], kernels[i][kn], shapes[s], 5 + s);
                forward(&c);
                double err = forward_error(&c);
                cr_expect_lt(err, FORWARD_BOUND, "%s N=%d D=%d: relative error %g",
                             kernels[i][kn], shapes[s].N, shapes[s].D, err);
                release(&c);
            }
}

/* ---- gradients ---- */

typedef struct loss_ctx {
    const gcase *c;
    double *out;
} loss_ctx;

/* loss = sum out . d_out, whose gradient is what backward gets */
static double ref_loss(const double *x, void *ctx_)
{
    loss_ctx *ctx = ctx_;
    ref_forward(ctx->out, x, ctx->c);
    double loss = 0;
    for (size_t i = 0; i < ctx->c->nv; i++)
        loss += ctx->out[i] * ctx->c->d_out[i];
    return loss;
}

/* float32 analytic gradients against double central differences, as
 * test_attn.c measures them */
#define GRAD_BOUND 1e-4
#define GRAD_FLOOR 1e-3

static void check_gradients(const char *variant, const char *kernel, lt_attn_shape s)
{
    gcase c;
    setup(&c, variant, kernel, s, 11);
    forward(&c);
    backward(&c);
    const size_t n = inputs_of(&c);
    double *x = to_x(&c), *grad = malloc(sizeof(double) * (n + 1));
    loss_ctx ctx = {&c, malloc(sizeof(double) * c.nv)};
    check_fd_gradient(grad, x, n, ref_loss, &ctx);
    const char *names[] = {"dq", "dk", "dv", "d_beta", "d_log_alpha"};
    const float *analytic[] = {c.dq, c.dk, c.dv, c.d_beta, c.d_la};
    const size_t counts[] = {c.nq, c.nq, c.nv, c.nb, c.na};
    size_t at = 0;
    for (int t = 0; t < 5; at += counts[t], t++) {
        if (counts[t] == 0)
            continue;
        double err = check_rel_error_f(analytic[t], grad + at, counts[t], GRAD_FLOOR);
        cr_expect_lt(err, GRAD_BOUND, "%s N=%d: %s relative error %g", c.attn.config.kernel, s.N,
                     names[t], err);
    }
    free(x);
    free(grad);
    free(ctx.out);
    release(&c);
}

Test(attn_gated, gradients_against_float64_finite_differences)
{
    /* one position, and three chunks of 16 (seven recurrent segments of 6)
     * with a partial last one */
    for (int i = 0; i < VARIANTS; i++)
        for (int kn = 0; kn < KERNELS; kn++) {
            check_gradients(variants[i], kernels[i][kn], shape_of(1, 2, 1, 5, 3));
            check_gradients(variants[i], kernels[i][kn], shape_of(1, 2, 37, 5, 3));
        }
}

/* ---- recurrent steps ---- */

/* Row i of every head of x (B,H,N,width) into row (B,H,width). */
static void take_position(float *row, const float *x, int heads, int N, int width, int i)
{
    for (int bh = 0; bh < heads; bh++)
        memcpy(row + (size_t)bh * width, x + ((size_t)bh * N + i) * width,
               sizeof(float) * width);
}

/* Steps against the forward of `kernel`: the recurrent kernel runs the
 * step's own token update, so it must agree to the bit. */
static void check_steps(const char *variant, const char *kernel, lt_attn_shape s)
{
    gcase c;
    setup(&c, variant, kernel, s, 17);
    forward(&c);
    const int heads = s.B * s.H;
    size_t bytes;
    cr_assert_eq(lt_attn_state_bytes(&c.attn, s.B, s.H, s.D, s.M, 1, &bytes), LT_OK);
    void *state = NULL;
    cr_assert_eq(lt_mem_alloc(&state, bytes, "state"), LT_OK);
    cr_assert_eq(lt_attn_state_init(&c.attn, state, s.B, s.H, s.D, s.M, 1, 0, 0), LT_OK);
    float *q = floats((size_t)heads * s.D), *k = floats((size_t)heads * s.D);
    float *v = floats((size_t)heads * s.M), *out = floats((size_t)heads * s.M);
    float *beta = c.beta != NULL ? floats(heads) : NULL;
    int wb, wa;
    lt_attn_gate_widths(&c.attn, s.D, &wb, &wa);
    float *la = c.la != NULL ? floats((size_t)heads * wa) : NULL;
    float *stepped = floats(c.nv);
    lt_attn_gates g = {beta, la, NULL, NULL};
    for (int i = 0; i < s.N; i++) {
        take_position(q, c.q, heads, s.N, s.D, i);
        take_position(k, c.k, heads, s.N, s.D, i);
        take_position(v, c.v, heads, s.N, s.M, i);
        if (beta != NULL)
            take_position(beta, c.beta, heads, s.N, 1, i);
        if (la != NULL)
            take_position(la, c.la, heads, s.N, wa, i);
        cr_assert_eq(lt_attn_step_gated(&c.attn, state, out, q, k, v, &g), LT_OK, "%s",
                     lt_last_error());
        for (int bh = 0; bh < heads; bh++)
            memcpy(stepped + ((size_t)bh * s.N + i) * s.M, out + (size_t)bh * s.M,
                   sizeof(float) * s.M);
    }
    double err = check_rel_error_ff(stepped, c.out, c.nv, 1e-6);
    cr_expect_lt(err, FORWARD_BOUND, "%s: %d steps against its forward: %g", kernel, s.N, err);
    if (strstr(kernel, "recurrent") != NULL)
        cr_expect(memcmp(stepped, c.out, c.nv * sizeof(float)) == 0,
                  "%s: the steps' bits differ from the forward's", kernel);
    float *all[] = {q, k, v, out, beta, la, stepped};
    for (int i = 0; i < 7; i++)
        lt_mem_free(all[i]);
    lt_mem_free(state);
    release(&c);
}

Test(attn_gated, steps_equal_both_forwards)
{
    for (int i = 0; i < VARIANTS; i++)
        for (int kn = 0; kn < KERNELS; kn++) {
            check_steps(variants[i], kernels[i][kn], shape_of(2, 3, 75, 5, 4));
            check_steps(variants[i], kernels[i][kn], shape_of(1, 2, 100, 32, 32));
        }
}

/* ---- the recurrent kernels against the chunked ones ---- */

/* Relative error of every output and gradient of `b` against `a`. */
static void expect_same_results(const gcase *a, const gcase *b, double bound, const char *what)
{
    const char *names[] = {"out", "dq", "dk", "dv", "d_beta", "d_log_alpha"};
    const float *x[] = {a->out, a->dq, a->dk, a->dv, a->d_beta, a->d_la};
    const float *y[] = {b->out, b->dq, b->dk, b->dv, b->d_beta, b->d_la};
    const size_t n[] = {a->nv, a->nq, a->nq, a->nv, a->nb, a->na};
    for (int t = 0; t < 6; t++) {
        if (n[t] == 0)
            continue;
        double err = check_rel_error_ff(y[t], x[t], n[t], 1e-3);
        cr_expect_lt(err, bound, "%s %s: %s relative error %g", b->attn.config.kernel, what,
                     names[t], err);
    }
}

Test(attn_gated, recurrent_equals_chunked_forward_and_every_gradient)
{
    /* many chunks and segments with partial last ones, several heads, and
     * one sequence shorter than the padded length */
    const int32_t lengths[] = {150, 61};
    const lt_attn_shape shapes[] = {shape_of(2, 2, 150, 12, 10), shape_of(1, 2, 200, 32, 32)};
    for (int i = 0; i < VARIANTS; i++)
        for (int s = 0; s < 2; s++) {
            gcase c[KERNELS];
            for (int kn = 0; kn < KERNELS; kn++) {
                setup(&c[kn], variants[i], kernels[i][kn], shapes[s], 23);
                if (s == 0)
                    c[kn].shape.lengths = lengths;
                forward(&c[kn]);
                backward(&c[kn]);
            }
            expect_same_results(&c[0], &c[1], FORWARD_BOUND, "against the chunked kernel");
            for (int kn = 0; kn < KERNELS; kn++)
                release(&c[kn]);
        }
}

/* ---- threads ---- */

Test(attn_gated, same_bits_for_1_2_and_3_threads)
{
    /* one head (threads idle), and three heads over 1, 2 and 3 threads */
    const lt_attn_shape shapes[] = {shape_of(1, 1, 90, 12, 10), shape_of(1, 3, 90, 12, 10)};
    const int before = lt_threads_get();
    for (int i = 0; i < VARIANTS * KERNELS; i++)
        for (int s = 0; s < 2; s++) {
            const char *kernel = kernels[i / KERNELS][i % KERNELS];
            gcase first;
            memset(&first, 0, sizeof first);
            for (int threads = 1; threads <= 3; threads++) {
                cr_assert_eq(lt_threads_set(threads), LT_OK);
                gcase c;
                setup(&c, variants[i / KERNELS], kernel, shapes[s], 29);
                forward(&c);
                backward(&c);
                if (threads == 1) {
                    first = c;
                    continue;
                }
                const float *a[] = {c.out, c.dq, c.dk, c.dv, c.d_beta, c.d_la};
                const float *b[] = {first.out, first.dq, first.dk, first.dv, first.d_beta,
                                    first.d_la};
                const size_t n[] = {c.nv, c.nq, c.nq, c.nv, c.nb, c.na};
                for (int t = 0; t < 6; t++)
                    cr_expect(n[t] == 0 || memcmp(a[t], b[t], n[t] * sizeof(float)) == 0,
                              "%s H=%d: tensor %d differs on %d threads", kernel,
                              shapes[s].H, t, threads);
                release(&c);
            }
            release(&first);
        }
    cr_assert_eq(lt_threads_set(before), LT_OK);
}

/* Every kernel, forward and backward, gives the same bits on each kernel
 * set with fused multiply-adds (their vector widths differ, their sums'
 * order does not: the small products' tiles and gla's pairwise scores in
 * 16 partial sums), D = 64 (whole vectors) and D = 40 (a ragged end); SSE2's
 * set, without fused multiply-adds, is held to the first within 1e-4. A
 * build with one kernel set has nothing to compare. */
Test(attn_gated, same_bits_on_every_fused_kernel_set)
{
    const lt_kernel_set was = lt_kernels_active();
    const lt_attn_shape shapes[] = {shape_of(1, 2, 100, 64, 64), shape_of(1, 1, 70, 40, 24)};
    for (int i = 0; i < VARIANTS * KERNELS; i++)
        for (int sh = 0; sh < 2; sh++) {
            const char *kernel = kernels[i / KERNELS][i % KERNELS];
            gcase first;
            memset(&first, 0, sizeof first); /* set by the first fused set; gcc cannot see that */
            int have_first = 0;
            for (int order = 0; order < 2 * LT_KERNEL_SETS; order++) {
                int fused;
                if (!check_use_kernel_set_in_order(order, &fused))
                    continue;
                gcase c;
                setup(&c, variants[i / KERNELS], kernel, shapes[sh], 37);
                forward(&c);
                backward(&c);
                if (!have_first) {
                    first = c;
                    have_first = 1;
                    continue;
                }
                const float *a[] = {c.out, c.dq, c.dk, c.dv, c.d_beta, c.d_la};
                const float *b[] = {first.out, first.dq, first.dk, first.dv, first.d_beta,
                                    first.d_la};
                const size_t n[] = {c.nv, c.nq, c.nq, c.nv, c.nb, c.na};
                const char *set = lt_kernels_name(lt_kernels_active());
                for (int t = 0; t < 6; t++) {
                    if (n[t] == 0)
                        continue;
                    if (fused)
                        cr_expect(memcmp(a[t], b[t], n[t] * sizeof(float)) == 0,
                                  "%s D=%d: tensor %d under %s differs from the first fused set's",
                                  kernel, shapes[sh].D, t, set);
                    else {
                        double err = check_rel_error_ff(a[t], b[t], n[t], 1e-3);
                        cr_expect_lt(err, 1e-4, "%s D=%d: tensor %d under %s: %g off", kernel,
                                     shapes[sh].D, t, set, err);
                    }
                }
                release(&c);
            }
            if (have_first)
                release(&first);
        }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}

/* ---- extreme gates ---- */

static int all_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* beta 0, 1 and between; decays of 1e-12 alone, in runs, and between runs
 * of alpha = 1 (gla: by channel too). */
static void extreme_gates(gcase *c)
{
    const float tiny = logf(1e-12f);
    const int N = c->shape.N, D = c->shape.D;
    for (size_t i = 0; i < c->nb; i++)
        c->beta[i] = i % 5 == 0 ? 0.0f : i % 5 == 1 || i % 7 == 3 ? 1.0f : c->beta[i];
    for (size_t i = 0; c->la != NULL && i < c->na; i++) {
        const size_t t = c->nb > 0 ? i % (size_t)N : i / D % (size_t)N, f = c->nb > 0 ? 0 : i % D;
        const size_t run = t / 64 % 4;
        c->la[i] = run == 0 ? tiny : run == 1 ? 0.0f : run == 2 ? ((t + f) % 3 == 0 ? tiny : 0.0f)
                                                               : c->la[i];
    }
}

Test(attn_gated, stable_with_decays_of_1e_12_and_beta_0_and_1)
{
    for (int i = 0; i < VARIANTS; i++) {
        gcase c[KERNELS];
        for (int kn = 0; kn < KERNELS; kn++) {
            const char *kernel = kernels[i][kn];
            setup(&c[kn], variants[i], kernel, shape_of(1, 2, 4096, 16, 16), 41);
            extreme_gates(&c[kn]);
            forward(&c[kn]);
            backward(&c[kn]);
            cr_expect(all_finite(c[kn].out, c[kn].nv), "%s: non-finite output", kernel);
            const float *grads[] = {c[kn].dq, c[kn].dk, c[kn].dv, c[kn].d_beta, c[kn].d_la};
            const size_t counts[] = {c[kn].nq, c[kn].nq, c[kn].nv, c[kn].nb, c[kn].na};
            for (int t = 0; t < 5; t++)
                cr_expect(all_finite(grads[t], counts[t]), "%s: non-finite gradient %d", kernel,
                          t);
            double err = forward_error(&c[kn]);
            cr_expect_lt(err, 1e-4, "%s over 4096 positions: relative error %g", kernel, err);
        }
        expect_same_results(&c[0], &c[1], FORWARD_BOUND, "with extreme gates");
        for (int kn = 0; kn < KERNELS; kn++)
            release(&c[kn]);
    }
}

/* ---- padding ---- */

Test(attn_gated, padded_rows_are_zero_and_get_no_gradient)
{
    const int32_t lengths[] = {40, 23};
    for (int ik = 0; ik < VARIANTS * KERNELS; ik++) {
        const int i = ik / KERNELS;
        const char *kernel = kernels[i][ik % KERNELS];
        gcase full, padded;
        setup(&full, variants[i], kernel, shape_of(2, 2, 40, 6, 5), 3);
        setup(&padded, variants[i], kernel, shape_of(2, 2, 40, 6, 5), 3);
        padded.shape.lengths = lengths;
        for (int bh = 2; bh < 4; bh++) /* the gradient of the padded rows reaches nothing */
            memset(full.d_out + ((size_t)bh * 40 + 23) * 5, 0, sizeof(float) * 17 * 5);
        forward(&full);
        backward(&full);
        forward(&padded);
        backward(&padded);
        for (int bh = 2; bh < 4; bh++)
            for (int m = 0; m < 17 * 5; m++)
                cr_expect_eq(padded.out[((size_t)bh * 40 + 23) * 5 + m], 0.0f);
        const float *a[] = {padded.dq, padded.dk, padded.dv, padded.d_beta, padded.d_la};
        const float *b[] = {full.dq, full.dk, full.dv, full.d_beta, full.d_la};
        const size_t n[] = {full.nq, full.nq, full.nv, full.nb, full.na};
        for (int t = 0; t < 5; t++) {
            const size_t per_row = n[t] / (4 * 40); /* padded rows get 0, as full's do */
            for (size_t j = (size_t)2 * 40 * per_row; j < n[t]; j++)
                if ((j / per_row) % 40 >= 23)
                    cr_expect_eq(a[t][j], 0.0f, "%s: gradient %d on a padded row", kernel, t);
            if (n[t] > 0)
                cr_expect_lt(check_rel_error_ff(a[t], b[t], (size_t)2 * 40 * per_row +
                                                                23 * per_row, 1e-6),
                             1e-6, "%s: gradient %d", kernel, t);
        }
        cr_expect_lt(check_rel_error_ff(padded.out, full.out, (size_t)2 * 40 * 5 + 23 * 5, 1e-6),
                     1e-6, "%s: outputs of the valid rows", kernel);
        release(&full);
        release(&padded);
    }
}

/* ---- interface ---- */

static void expect_refused(lt_status got, lt_status want, const char *what, const char *needle)
{
    cr_expect_eq(got, want, "%s: status %d", what, (int)got);
    cr_expect_neq(strstr(lt_last_error(), needle), NULL, "%s: '%s' lacks '%s'", what,
                  lt_last_error(), needle);
}

static lt_status forward_with(gcase *c, const lt_attn_gates *g)
{
    return lt_attn_forward_gated(&c->attn, c->shape, g, c->out, NULL, c->ws, c->q, c->k, c->v,
                                 NULL);
}

Test(attn_gated, refusals)
{
    lt_attn a;
    lt_attn_config config = lt_attn_default_config("gated-delta");
    config.causal = 0;
    expect_refused(lt_attn_init(&a, &config), LT_E_USAGE, "non-causal", "causal only");
    gcase c;
    setup(&c, "gated-delta", NULL, shape_of(1, 1, 8, 4, 3), 1);
    expect_refused(lt_attn_forward(&c.attn, c.shape, c.out, NULL, c.ws, c.q, c.k, c.v, NULL),
                   LT_E_USAGE, "plain forward", "lt_attn_forward_gated");
    lt_attn_gates g = gates_of(&c);
    c.beta[3] = 1.5f;
    expect_refused(forward_with(&c, &g), LT_E_INPUT, "beta > 1", "beta[3]");
    c.beta[3] = NAN;
    expect_refused(forward_with(&c, &g), LT_E_NUMERIC, "NaN beta", "beta");
    c.beta[3] = 0.5f;
    c.la[2] = 0.25f;
    expect_refused(forward_with(&c, &g), LT_E_INPUT, "log_alpha > 0", "log_alpha[2]");
    c.la[2] = -0.25f;
    g.d_beta = NULL;
    expect_refused(lt_attn_backward_gated(&c.attn, c.shape, &g, c.dq, c.dk, c.dv, NULL, c.ws,
                                          c.d_out, NULL, c.q, c.k, c.v, NULL),
                   LT_E_USAGE, "backward without d_beta", "d_beta");
    size_t bytes;
    cr_assert_eq(lt_attn_state_bytes(&c.attn, 1, 1, 4, 3, 1, &bytes), LT_OK);
    void *state = NULL;
    cr_assert_eq(lt_mem_alloc(&state, bytes, "state"), LT_OK);
    cr_assert_eq(lt_attn_state_init(&c.attn, state, 1, 1, 4, 3, 1, 0, 0), LT_OK);
    expect_refused(lt_attn_step(&c.attn, state, c.out, c.q, c.k, c.v), LT_E_USAGE, "plain step",
                   "beta");
    lt_mem_free(state);
    release(&c);
    setup(&c, "gla", NULL, shape_of(1, 1, 8, 4, 3), 1);
    g = gates_of(&c);
    g.beta = c.q; /* gla reads no beta */
    expect_refused(forward_with(&c, &g), LT_E_USAGE, "beta to gla", "reads no beta");
    release(&c);
}

Test(attn_gated, caps_kernels_and_plans)
{
    const int flags[] = {LT_ATTN_GATE_BETA, LT_ATTN_GATE_BETA | LT_ATTN_GATE_ALPHA,
                         LT_ATTN_GATE_ALPHA_KEYS};
    const int widths[][2] = {{1, 0}, {1, 1}, {0, 7}};
    for (int i = 0; i < VARIANTS; i++) {
        lt_attn_caps caps;
        cr_assert_eq(lt_attn_variant_caps(variants[i], &caps), LT_OK);
        cr_expect(caps.causal && !caps.noncausal && caps.recurrent && !caps.params);
        cr_expect_eq(caps.gates, flags[i]);
        cr_expect_neq(caps.no_noncausal_reason, NULL);
        cr_expect_str_eq(lt_attn_kernel_at(variants[i], 1, 0), kernels[i][0]);
        cr_expect_str_eq(lt_attn_kernel_at(variants[i], 1, 1), kernels[i][1]);
        cr_expect_eq(lt_attn_kernel_at(variants[i], 1, 2), NULL);
        cr_expect_eq(lt_attn_kernel_at(variants[i], 0, 0), NULL);
        char names[128];
        snprintf(names, sizeof names, "%s|%s", kernels[i][0], kernels[i][1]);
        cr_expect_str_eq(lt_attn_kernel_names(variants[i]), names);
        lt_attn_config config = lt_attn_default_config("linear");
        cr_assert_eq(lt_attn_parse_variant(variants[i], &config), LT_OK);
        cr_expect_str_eq(config.variant, variants[i]);
        lt_attn a;
        config.causal = 1;
        cr_assert_eq(lt_attn_init(&a, &config), LT_OK, "%s", lt_last_error());
        int wb, wa;
        lt_attn_gate_widths(&a, 7, &wb, &wa);
        cr_expect(wb == widths[i][0] && wa == widths[i][1], "%s widths %d %d", variants[i], wb,
                  wa);
        size_t one, many;
        cr_assert_eq(lt_attn_state_bytes(&a, 2, 3, 8, 8, 1, &one), LT_OK);
        cr_assert_eq(lt_attn_state_bytes(&a, 2, 3, 8, 8, 5000, &many), LT_OK);
        cr_expect_eq(one, many, "%s: the state does not grow", variants[i]);
        lt_attn_shape s = shape_of(2, 2, 300, 16, 16);
        cr_expect_gt(lt_attn_flops(&a, s, 1), lt_attn_flops(&a, s, 0));
        cr_expect_gt(lt_attn_flops_performed(&a, s, 1), lt_attn_flops_performed(&a, s, 0));
        cr_expect_gt(lt_attn_interface_bytes(&a, s, 0), 0.0);
        /* workspace per thread, linear in N: the chunk starts' states */
        size_t w1 = lt_attn_workspace_bytes(&a, s, 1), w2 = lt_attn_workspace_bytes(&a, s, 2);
        cr_expect_eq(w2, 2 * w1);
        /* the recurrent kernel: 6 D M a row forward (gla 4), backward more;
         * about 2 sqrt(N) states a thread, so 16 times N is 4 times the bytes */
        config.kernel = kernels[i][1];
        cr_assert_eq(lt_attn_init(&a, &config), LT_OK, "%s", lt_last_error());
        const double per_row = i == 2 ? 4.0 : 6.0;
        cr_expect_float_eq(lt_attn_flops_performed(&a, s, 0), per_row * 2 * 2 * 300 * 16 * 16,
                           1e-9, "%s", kernels[i][1]);
        cr_expect_gt(lt_attn_flops_performed(&a, s, 1), 2 * lt_attn_flops_performed(&a, s, 0));
        cr_expect_eq(lt_attn_flops(&a, s, 0), per_row * 2 * 2 * 300 * 16 * 16,
                     "the model counts the method, whichever kernel");
        lt_attn_shape longer = shape_of(2, 2, 16 * 300, 16, 16);
        const double ratio = (double)lt_attn_workspace_bytes(&a, longer, 1) /
                             (double)lt_attn_workspace_bytes(&a, s, 1);
        cr_expect(ratio > 3.5 && ratio < 4.5, "%s: workspace ratio %g", kernels[i][1], ratio);
    }
    cr_expect_neq(strstr(lt_attn_variant_names(), "gated-delta"), NULL);
}

Test(attn_gated, kernels_allocate_nothing)
{
    /* forward, backward and steps use only the planned buffers: the
     * tracked allocator sees no allocation while they run */
    for (int i = 0; i < VARIANTS * KERNELS; i++) {
        gcase c;
        setup(&c, variants[i / KERNELS], kernels[i / KERNELS][i % KERNELS],
              shape_of(1, 2, 100, 8, 6), 2);
        const size_t before = lt_mem_current();
        lt_mem_reset_peak();
        forward(&c);
        backward(&c);
        cr_expect_eq(lt_mem_peak(), before, "%s allocated while running", c.attn.config.kernel);
        release(&c);
    }
}

Test(attn_gated, empty_sequence_in_a_batch)
{
    const int32_t lengths[] = {0, 5};
    for (int i = 0; i < VARIANTS * KERNELS; i++) {
        gcase c;
        setup(&c, variants[i / KERNELS], kernels[i / KERNELS][i % KERNELS],
              shape_of(2, 1, 40, 6, 5), 4);
        const char *kernel = c.attn.config.kernel;
        c.shape.lengths = lengths;
        forward(&c);
        backward(&c);
        for (size_t j = 0; j < (size_t)40 * 5; j++)
            cr_expect_eq(c.out[j], 0.0f, "%s: output of an empty sequence", kernel);
        for (size_t j = 0; j < (size_t)40 * 6; j++)
            cr_expect(c.dq[j] == 0.0f && c.dk[j] == 0.0f, "%s: gradient of an empty sequence",
                      kernel);
        release(&c);
    }
}

/* The sweeps' timing (lt_attn_time_case) gives every kernel its gates:
 * both passes run, within the case's plan, which holds the gates and
 * their gradients beside the other tensors. */
Test(attn_gated, timed_with_gates_within_the_plan)
{
    const lt_attn_shape s = shape_of(2, 2, 64, 8, 6);
    for (int i = 0; i < VARIANTS * KERNELS; i++) {
        lt_attn_config config = lt_attn_default_config(variants[i / KERNELS]);
        config.kernel = kernels[i / KERNELS][i % KERNELS];
        lt_attn a;
        cr_assert_eq(lt_attn_init(&a, &config), LT_OK);
        double samples[2];
        lt_attn_timing t;
        cr_assert_eq(lt_attn_time_case(&a, s, 7, 0, 0, 1, samples, &t), LT_OK, "%s: %s",
                     config.kernel, lt_last_error());
        cr_expect(t.fwd.median > 0 && t.fwd_bwd.median > 0, "%s", config.kernel);
        cr_expect_leq(t.peak_bytes, t.planned_bytes, "%s", config.kernel);
        int wb, wa;
        lt_attn_gate_widths(&a, s.D, &wb, &wa);
        const size_t gates = 2 * (size_t)2 * 2 * 64 * (wb + wa) * sizeof(float);
        const size_t tensors = (4 * (size_t)2 * 2 * 64 * 8 + 5 * (size_t)2 * 2 * 64 * 6) *
                               sizeof(float);
        cr_expect_geq(t.peak_bytes, tensors + gates, "%s: the gates are allocated",
                      config.kernel);
    }
}
