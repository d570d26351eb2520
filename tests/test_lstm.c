/* Tests of one LSTM direction (src/nn/lstm.h): values and gradients against
 * finite differences of a double-precision LSTM written here, padding,
 * a bidirectional composition, accumulation, thread count independence and
 * refused lengths. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "kernel_sets.h"
#include "nn/lstm.h"
#include "pool.h"

/* float against double: measured errors are about 2e-7 relative over these
 * few steps; a wrong term shows up as order 1e-2 or more. */
#define FORWARD_BOUND 1e-5
#define GRAD_BOUND 1e-5
/* The same float computation with another batch around it: BLAS may pick
 * another kernel for another row count, so only rounding may differ. */
#define ALONE_BOUND 1e-5

TestSuite(lstm, .fini = release_pool);

/* ---- double-precision reference ---- */

#define REF_H_MAX 16

/* A layer of one or two directions: direction d reads params p[d], runs
 * reverse = rev[d] and writes columns [col0[d], col0[d] + H) of rows of
 * width ld. The loss is sum(upstream * out) over the whole output. */
typedef struct ref_lstm {
    int B, T, In, H, ld, dirs;
    int col0[2], rev[2];
    const int32_t *lengths;
    double *x;    /* (B, T, In) */
    double *p[2]; /* (lt_lstm_param_count) */
    double *out;  /* (B, T, ld) scratch */
    const double *upstream;
} ref_lstm;

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

static void ref_direction(const ref_lstm *r, int d)
{
    int H = r->H, In = r->In, G = 4 * H;
    const double *w_ih = r->p[d], *w_hh = w_ih + G * In, *bias = w_hh + G * H;
    for (int b = 0; b < r->B; b++) {
        int len = r->lengths[b];
        double h[REF_H_MAX] = {0}, c[REF_H_MAX] = {0}, z[4 * REF_H_MAX];
        for (int t = 0; t < r->T; t++)
            for (int j = 0; j < H; j++)
                r->out[(b * r->T + t) * r->ld + r->col0[d] + j] = 0;
        for (int s = 0; s < len; s++) {
            int t = r->rev[d] ? len - 1 - s : s;
            const double *x = r->x + (b * r->T + t) * In;
            for (int k = 0; k < G; k++) {
                z[k] = bias[k];
                for (int m = 0; m < In; m++)
                    z[k] += w_ih[k * In + m] * x[m];
                for (int m = 0; m < H; m++)
                    z[k] += w_hh[k * H + m] * h[m];
            }
            for (int j = 0; j < H; j++) {
                double i = sigmoid_d(z[j]), f = sigmoid_d(z[H + j]), g = tanh(z[2 * H + j]);
                double o = sigmoid_d(z[3 * H + j]);
                c[j] = f * c[j] + i * g;
                h[j] = o * tanh(c[j]);
            }
            for (int j = 0; j < H; j++)
                r->out[(b * r->T + t) * r->ld + r->col0[d] + j] = h[j];
        }
    }
}

static void ref_forward(const ref_lstm *r)
{
    memset(r->out, 0, sizeof(double) * r->B * r->T * r->ld);
    for (int d = 0; d < r->dirs; d++)
        ref_direction(r, d);
}

static double ref_loss(const double *x, void *ctx)
{
    (void)x; /* one of the struct's arrays, perturbed in place */
    ref_lstm *r = ctx;
    ref_forward(r);
    double loss = 0;
    for (int i = 0; i < r->B * r->T * r->ld; i++)
        loss += r->upstream[i] * r->out[i];
    return loss;
}

/* ---- the float layer under test ---- */

/* One direction's buffers: inputs, saved state and gradients. */
typedef struct run {
    int B, T, In, H;
    const int32_t *lengths;
    const float *in, *params;
    float *saved, *d_in, *d_params;
    void *workspace;
} run;

static run make_run(const float *in, const float *params, const int32_t *lengths, int B, int T,
                    int In, int H)
{
    run r = {.B = B, .T = T, .In = In, .H = H, .lengths = lengths, .in = in, .params = params};
    r.saved = take_f(lt_lstm_saved_floats(B, T, H));
    r.d_in = take_f((size_t)B * T * In);
    r.d_params = take_f(lt_lstm_param_count(In, H));
    size_t ws_bytes = lt_lstm_workspace_bytes(B, T, In, H);
    r.workspace = take(ws_bytes);
    /* NaN bytes: the layer must neither read scratch nor saved before
     * writing it. */
    memset(r.workspace, 0xff, ws_bytes);
    memset(r.saved, 0xff, sizeof(float) * lt_lstm_saved_floats(B, T, H));
    return r;
}

static void forward(float *out, int ld, int col0, run *r, int reverse)
{
    cr_assert(lt_lstm_forward(out, ld, col0, r->saved, r->workspace, r->in, r->lengths,
                              r->params, r->B, r->T, r->In, r->H, reverse) == LT_OK,
              "forward: %s", lt_last_error());
}

static void backward(float *d_in, const float *d_out, int ld, int col0, run *r, int reverse)
{
    cr_assert(lt_lstm_backward(d_in, r->d_params, r->workspace, d_out, ld, col0, r->saved, r->in,
                               r->lengths, r->params, r->B, r->T, r->In, r->H, reverse) == LT_OK,
              "backward: %s", lt_last_error());
}

static void expect_close(const float *got, const double *want, size_t n, double bound,
                         const char *what)
{
    double err = check_rel_error_f(got, want, n, 1e-6);
    cr_expect(err < bound, "%s: relative error %.3g (bound %.0e)", what, err, bound);
}

static void expect_gradient(const float *got, double *var, size_t n, ref_lstm *ref,
                            const char *what)
{
    double *fd = take_d(n);
    check_fd_gradient(fd, var, n, ref_loss, ref);
    expect_close(got, fd, n, GRAD_BOUND, what);
}

/* ---- tests ---- */

Test(lstm, gradients_of_both_directions_over_a_padded_batch)
{
    /* Lengths 0 and T among them; output in columns [2, 6) of rows of 7. */
    enum { B = 4, T = 5, In = 3, H = 4, LD = H + 3, C0 = 2 };
    const int32_t lengths[B] = {5, 0, 3, 1};
    size_t n_in = B * T * In, n_p = lt_lstm_param_count(In, H), n_out = B * T * LD;
    for (int reverse = 0; reverse <= 1; reverse++) {
        float *in = random_f(n_in, -1, 1, 1), *params = random_f(n_p, -1, 1, 2);
        float *d_out = random_f(n_out, -1, 1, 3); /* padded rows too: they must be ignored */
        ref_lstm ref = {.B = B, .T = T, .In = In, .H = H, .ld = LD, .dirs = 1,
                        .col0 = {C0}, .rev = {reverse}, .lengths = lengths,
                        .x = widen(in, n_in), .p = {widen(params, n_p)},
                        .out = take_d(n_out), .upstream = widen(d_out, n_out)};
        run r = make_run(in, params, lengths, B, T, In, H);
        float *out = take_f(n_out);
        forward(out, LD, C0, &r, reverse);
        ref_forward(&ref);
        expect_close(out, ref.out, n_out, FORWARD_BOUND, reverse ? "reverse out" : "out");

        backward(r.d_in, d_out, LD, C0, &r, reverse);
        expect_gradient(r.d_in, ref.x, n_in, &ref, reverse ? "reverse d_in" : "d_in");
        expect_gradient(r.d_params, ref.p[0], n_p, &ref,
                        reverse ? "reverse d_params" : "d_params");

        /* Backward adds: a second call doubles both gradients. */
        float *once_in = take_f(n_in), *once_p = take_f(n_p);
        memcpy(once_in, r.d_in, sizeof(float) * n_in);
        memcpy(once_p, r.d_params, sizeof(float) * n_p);
        backward(r.d_in, d_out, LD, C0, &r, reverse);
        expect_doubled(r.d_in, once_in, n_in, "d_in");
        expect_doubled(r.d_params, once_p, n_p, "d_params");
    }
}

Test(lstm, padded_batch_matches_each_sequence_alone)
{
    enum { B = 4, T = 6, In = 5, H = 8, LD = 2 * H + 1, C0 = H };
    const int32_t lengths[B] = {6, 0, 2, 4};
    const float sentinel = 7.0f;
    size_t n_p = lt_lstm_param_count(In, H), n_out = B * T * LD;
    float *in = random_f(B * T * In, -1, 1, 1), *params = take_f(n_p);
    lt_lstm_init_params(params, In, H, 11);
    float *d_out = random_f(n_out, -1, 1, 3);
    for (int reverse = 0; reverse <= 1; reverse++) {
        run all = make_run(in, params, lengths, B, T, In, H);
        float *out = take_f(n_out);
        for (size_t i = 0; i < n_out; i++)
            out[i] = sentinel;
        forward(out, LD, C0, &all, reverse);
        backward(all.d_in, d_out, LD, C0, &all, reverse);

        float *d_params_sum = take_f(n_p);
        double *d_params_alone = take_d(n_p);
        for (int b = 0; b < B; b++) {
            int len = lengths[b];
            size_t row0 = (size_t)b * T; /* first row of sequence b in the batch */
            /* Alone: a batch of one with no padding at all (T = len). */
            run one = make_run(in + row0 * In, params, &lengths[b], 1, len, In, H);
            float *out1 = take_f((size_t)len * H);
            forward(out1, H, 0, &one, reverse);
            float *d_out1 = take_f((size_t)len * H);
            for (int t = 0; t < len; t++)
                memcpy(d_out1 + t * H, d_out + (row0 + t) * LD + C0, sizeof(float) * H);
            backward(one.d_in, d_out1, H, 0, &one, reverse);
            for (size_t i = 0; i < n_p; i++)
                d_params_sum[i] += one.d_params[i];

            for (int t = 0; t < T; t++)
                for (int c = 0; c < LD; c++) {
                    float got = out[(row0 + t) * LD + c];
                    if (c < C0 || c >= C0 + H)
                        cr_expect(got == sentinel, "b %d t %d: column %d outside the range "
                                  "was written", b, t, c);
                    else if (t >= len)
                        cr_expect(got == 0.0f, "b %d t %d: padded output %g", b, t, got);
                    else
                        cr_expect(fabsf(got - out1[t * H + c - C0]) <= ALONE_BOUND,
                                  "b %d t %d col %d: %g in the batch, %g alone", b, t, c, got,
                                  out1[t * H + c - C0]);
                }
            double *d_in1 = widen(one.d_in, (size_t)len * In);
            expect_close(all.d_in + row0 * In, d_in1, (size_t)len * In, ALONE_BOUND,
                         "d_in of valid rows against the sequence alone");
            for (size_t i = (size_t)len * In; i < (size_t)T * In; i++)
                cr_expect(all.d_in[row0 * In + i] == 0.0f, "b %d: padded d_in nonzero", b);
        }
        for (size_t i = 0; i < n_p; i++)
            d_params_alone[i] = d_params_sum[i];
        expect_close(all.d_params, d_params_alone, n_p, ALONE_BOUND,
                     "d_params against the sum over sequences alone");
    }
}

Test(lstm, bidirectional_composition)
{
    /* Forward into columns [0, H), reverse into [H, 2H) of one output; both
     * add into one d_in. */
    enum { B = 3, T = 4, In = 3, H = 3, LD = 2 * H };
    const int32_t lengths[B] = {2, 4, 0};
    size_t n_in = B * T * In, n_p = lt_lstm_param_count(In, H), n_out = B * T * LD;
    float *in = random_f(n_in, -1, 1, 1), *d_out = random_f(n_out, -1, 1, 4);
    float *p_fwd = random_f(n_p, -1, 1, 2), *p_rev = random_f(n_p, -1, 1, 3);
    ref_lstm ref = {.B = B, .T = T, .In = In, .H = H, .ld = LD, .dirs = 2, .col0 = {0, H},
                    .rev = {0, 1}, .lengths = lengths, .x = widen(in, n_in),
                    .p = {widen(p_fwd, n_p), widen(p_rev, n_p)}, .out = take_d(n_out),
                    .upstream = widen(d_out, n_out)};
    run fwd = make_run(in, p_fwd, lengths, B, T, In, H);
    run rev = make_run(in, p_rev, lengths, B, T, In, H);
    float *out = take_f(n_out), *d_in = take_f(n_in);
    forward(out, LD, 0, &fwd, 0);
    forward(out, LD, H, &rev, 1);
    ref_forward(&ref);
    expect_close(out, ref.out, n_out, FORWARD_BOUND, "bidirectional out");

    backward(d_in, d_out, LD, 0, &fwd, 0);
    backward(d_in, d_out, LD, H, &rev, 1);
    expect_gradient(d_in, ref.x, n_in, &ref, "bidirectional d_in");
    expect_gradient(fwd.d_params, ref.p[0], n_p, &ref, "bidirectional forward d_params");
    expect_gradient(rev.d_params, ref.p[1], n_p, &ref, "bidirectional reverse d_params");
}

Test(lstm, no_lengths_means_all_steps_and_inference_needs_no_saved)
{
    enum { B = 2, T = 5, In = 4, H = 6 };
    const int32_t full[B] = {T, T};
    size_t n_p = lt_lstm_param_count(In, H), n_out = B * T * H;
    float *in = random_f(B * T * In, -1, 1, 1), *params = random_f(n_p, -1, 1, 2);
    run with = make_run(in, params, full, B, T, In, H);
    run without = make_run(in, params, NULL, B, T, In, H);
    float *out1 = take_f(n_out), *out2 = take_f(n_out), *out3 = take_f(n_out);
    forward(out1, H, 0, &with, 1);
    forward(out2, H, 0, &without, 1);
    cr_expect(memcmp(out1, out2, sizeof(float) * n_out) == 0, "NULL lengths differ from all T");
    cr_assert(lt_lstm_forward(out3, H, 0, NULL, with.workspace, in, full, params, B, T, In, H,
                              1) == LT_OK);
    cr_expect(memcmp(out1, out3, sizeof(float) * n_out) == 0, "inference output differs");
}

Test(lstm, same_for_any_thread_count)
{
    check_every_kernel_set();
    /* B * H at the parallel threshold, so the gate loops run threaded. */
    enum { B = 16, T = 10, In = 32, H = 256 };
    int32_t lengths[B];
    for (int b = 0; b < B; b++)
        lengths[b] = (b * 7) % (T + 1);
    size_t n_in = B * T * In, n_p = lt_lstm_param_count(In, H), n_out = B * T * H;
    size_t n_saved = lt_lstm_saved_floats(B, T, H);
    float *in = random_f(n_in, -1, 1, 1), *params = take_f(n_p);
    float *d_out = random_f(n_out, -1, 1, 3);
    lt_lstm_init_params(params, In, H, 5);
    for (int reverse = 0; reverse <= 1; reverse++) {
        run r[2];
        float *out[2];
        for (int k = 0; k < 2; k++) {
            omp_set_num_threads(k + 1);
            r[k] = make_run(in, params, lengths, B, T, In, H);
            out[k] = take_f(n_out);
            forward(out[k], H, 0, &r[k], reverse);
            backward(r[k].d_in, d_out, H, 0, &r[k], reverse);
        }
        cr_expect(memcmp(out[0], out[1], sizeof(float) * n_out) == 0, "out differs");
        cr_expect(memcmp(r[0].saved, r[1].saved, sizeof(float) * n_saved) == 0,
                  "saved differs");
        cr_expect(memcmp(r[0].d_in, r[1].d_in, sizeof(float) * n_in) == 0, "d_in differs");
        cr_expect(memcmp(r[0].d_params, r[1].d_params, sizeof(float) * n_p) == 0,
                  "d_params differs");
    }
}

Test(lstm, bad_lengths_refused)
{
    enum { B = 3, T = 4, In = 2, H = 3 };
    size_t n_in = B * T * In, n_p = lt_lstm_param_count(In, H), n_out = B * T * H;
    float *in = random_f(n_in, -1, 1, 1), *params = random_f(n_p, -1, 1, 2);
    float *d_out = random_f(n_out, -1, 1, 3), *out = random_f(n_out, 5, 6, 4);
    float *out0 = take_f(n_out);
    memcpy(out0, out, sizeof(float) * n_out);
    const int32_t negative[B] = {4, 2, -1}, too_long[B] = {4, 5, 0};
    const int32_t *bad[2] = {negative, too_long};
    const char *named[2] = {"lengths[2] = -1", "lengths[1] = 5"};
    for (int k = 0; k < 2; k++) {
        run r = make_run(in, params, bad[k], B, T, In, H);
        cr_expect(lt_lstm_forward(out, H, 0, r.saved, r.workspace, in, bad[k], params, B, T, In,
                                  H, 0) == LT_E_INPUT);
        cr_expect(strstr(lt_last_error(), named[k]) != NULL, "message: %s", lt_last_error());
        cr_expect(memcmp(out, out0, sizeof(float) * n_out) == 0, "refused forward wrote out");
        cr_expect(lt_lstm_backward(r.d_in, r.d_params, r.workspace, d_out, H, 0, r.saved, in,
                                   bad[k], params, B, T, In, H, 1) == LT_E_INPUT);
        cr_expect(strstr(lt_last_error(), named[k]) != NULL, "message: %s", lt_last_error());
        for (size_t i = 0; i < n_in; i++)
            cr_expect(r.d_in[i] == 0.0f, "refused backward wrote d_in");
        for (size_t i = 0; i < n_p; i++)
            cr_expect(r.d_params[i] == 0.0f, "refused backward wrote d_params");
    }
    /* A column range past the row is a usage error. */
    run r = make_run(in, params, NULL, B, T, In, H);
    cr_expect(lt_lstm_forward(out, H, 1, r.saved, r.workspace, in, NULL, params, B, T, In, H,
                              0) == LT_E_USAGE);
    cr_expect(strstr(lt_last_error(), "columns [1, 4)") != NULL, "message: %s", lt_last_error());
}

Test(lstm, init_is_deterministic_and_bounded)
{
    enum { In = 5, H = 16 };
    size_t n = lt_lstm_param_count(In, H);
    cr_expect(n == 4 * H * (In + H + 1));
    float *a = take_f(n), *b = take_f(n), *c = take_f(n);
    lt_lstm_init_params(a, In, H, 1);
    lt_lstm_init_params(b, In, H, 1);
    lt_lstm_init_params(c, In, H, 2);
    cr_expect(memcmp(a, b, sizeof(float) * n) == 0, "same seed, different parameters");
    cr_expect(memcmp(a, c, sizeof(float) * n) != 0, "seed does not change the parameters");
    float lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fminf(lo, a[i]);
        hi = fmaxf(hi, a[i]);
    }
    /* 1/sqrt(16) = 0.25; 1344 draws come close to both ends. */
    cr_expect(lo >= -0.25f && hi <= 0.25f && lo < -0.24f && hi > 0.24f, "range [%g, %g]",
              (double)lo, (double)hi);
}
