/* Tests of the layers in src/nn: every gradient against finite differences
 * of a double-precision reference written here, accumulation (+=), thread
 * count independence, and bad inputs. */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pool.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "core/vexp.h"
#include "nn/dropout.h"
#include "nn/elementwise.h"
#include "nn/embedding.h"
#include "nn/layernorm.h"
#include "nn/linear.h"
#include "nn/posenc.h"
#include "nn/xent.h"
#include "kernel_sets.h"

/* float gradients against double finite differences: float rounding leaves
 * about 1e-7 here; a wrong term shows up as order 1. */
#define GRAD_BOUND 1e-5
#define FORWARD_BOUND 1e-5

TestSuite(nn, .fini = release_pool);

/* ---- double-precision references ----
 *
 * A reference computes out = f(inputs) in double; its scalar loss is
 * sum(upstream * out), whose gradient is what backward returns for
 * d_out = upstream. Finite differences perturb one input array in place, so
 * the loss reads every input from the struct. */

typedef struct ref_layer ref_layer;
struct ref_layer {
    void (*forward)(double *out, const ref_layer *ref);
    size_t n_out;
    double *out;            /* (n_out) scratch */
    const double *upstream; /* (n_out) */
    int R, C, K, V;
    double *in, *weight, *bias, *gamma, *beta, *table;
    const int32_t *ids;
    const uint8_t *keep;
    const double *mask;
    double scale;
};

static double ref_loss(const double *x, void *ctx)
{
    (void)x; /* x is one of the struct's arrays */
    ref_layer *ref = ctx;
    ref->forward(ref->out, ref);
    double loss = 0;
    for (size_t i = 0; i < ref->n_out; i++)
        loss += ref->upstream[i] * ref->out[i];
    return loss;
}

/* Sets up the reference's output scratch and a random upstream gradient,
 * returned in float for backward's d_out. */
static float *ref_prepare(ref_layer *ref, size_t n_out, uint64_t stream)
{
    float *d_out = random_f(n_out, -1.0f, 1.0f, stream);
    ref->n_out = n_out;
    ref->out = take_d(n_out);
    ref->upstream = widen(d_out, n_out);
    return d_out;
}

static void expect_forward(const float *got, ref_layer *ref, const char *what)
{
    ref->forward(ref->out, ref);
    double err = check_rel_error_f(got, ref->out, ref->n_out, 1e-6);
    cr_expect(err < FORWARD_BOUND, "%s: relative error %.3g against the double reference", what,
              err);
}

static void expect_gradient(const float *got, double *var, size_t n, ref_layer *ref,
                            const char *what)
{
    double *fd = take_d(n);
    check_fd_gradient(fd, var, n, ref_loss, ref);
    double err = check_rel_error_f(got, fd, n, 1e-6);
    cr_expect(err < GRAD_BOUND, "%s: relative error %.3g against finite differences", what, err);
}

/* ---- linear ---- */

static void ref_linear(double *out, const ref_layer *ref)
{
    for (int r = 0; r < ref->R; r++)
        for (int o = 0; o < ref->K; o++) {
            double sum = ref->bias ? ref->bias[o] : 0.0;
            for (int i = 0; i < ref->C; i++)
                sum += ref->in[r * ref->C + i] * ref->weight[o * ref->C + i];
            out[r * ref->K + o] = sum;
        }
}

Test(nn, linear_gradients)
{
    enum { R = 5, I = 7, O = 4 };
    float *in = random_f(R * I, -1, 1, 1), *w = random_f(O * I, -1, 1, 2);
    float *b = random_f(O, -1, 1, 3);
    ref_layer ref = {.forward = ref_linear, .R = R, .C = I, .K = O,
                     .in = widen(in, R * I), .weight = widen(w, O * I), .bias = widen(b, O)};
    float *d_out = ref_prepare(&ref, R * O, 4);

    float *out = take_f(R * O);
    lt_linear_forward(out, in, w, b, R, I, O);
    expect_forward(out, &ref, "linear forward");

    float *d_in = take_f(R * I), *d_w = take_f(O * I), *d_b = take_f(O);
    lt_linear_backward(d_in, d_w, d_b, d_out, in, w, R, I, O);
    expect_gradient(d_in, ref.in, R * I, &ref, "linear d_in");
    expect_gradient(d_w, ref.weight, O * I, &ref, "linear d_weight");
    expect_gradient(d_b, ref.bias, O, &ref, "linear d_bias");
}

Test(nn, linear_without_bias_and_accumulation)
{
    enum { R = 6, I = 3, O = 5 };
    float *in = random_f(R * I, -1, 1, 1), *w = random_f(O * I, -1, 1, 2);
    ref_layer ref = {.forward = ref_linear, .R = R, .C = I, .K = O,
                     .in = widen(in, R * I), .weight = widen(w, O * I)};
    float *d_out = ref_prepare(&ref, R * O, 4);
    float *out = random_f(R * O, 5, 6, 9); /* stale contents must be overwritten */
    lt_linear_forward(out, in, w, NULL, R, I, O);
    expect_forward(out, &ref, "linear forward without bias");

    float *d_in = take_f(R * I), *d_w = take_f(O * I), *d_b = take_f(O);
    lt_linear_backward(d_in, d_w, d_b, d_out, in, w, R, I, O);
    float *once_in = take_f(R * I), *once_w = take_f(O * I), *once_b = take_f(O);
    memcpy(once_in, d_in, sizeof(float) * R * I);
    memcpy(once_w, d_w, sizeof(float) * O * I);
    memcpy(once_b, d_b, sizeof(float) * O);
    lt_linear_backward(d_in, d_w, d_b, d_out, in, w, R, I, O);
    expect_doubled(d_in, once_in, R * I, "linear d_in");
    expect_doubled(d_w, once_w, O * I, "linear d_weight");
    expect_doubled(d_b, once_b, O, "linear d_bias");
}

/* ---- layer norm ---- */

static void ref_layernorm(double *out, const ref_layer *ref)
{
    int C = ref->C;
    for (int r = 0; r < ref->R; r++) {
        const double *x = ref->in + r * C;
        double mean = 0, var = 0;
        for (int c = 0; c < C; c++)
            mean += x[c] / C;
        for (int c = 0; c < C; c++)
            var += (x[c] - mean) * (x[c] - mean) / C;
        for (int c = 0; c < C; c++)
            out[r * C + c] = (x[c] - mean) / sqrt(var + LT_LAYERNORM_EPS) * ref->gamma[c] +
                             ref->beta[c];
    }
}

Test(nn, layernorm_gradients)
{
    enum { R = 4, C = 9 };
    /* An offset mean checks that the variance does not cancel. */
    float *in = random_f(R * C, 2, 5, 1), *gamma = random_f(C, 0.5f, 1.5f, 2);
    float *beta = random_f(C, -1, 1, 3);
    ref_layer ref = {.forward = ref_layernorm, .R = R, .C = C, .in = widen(in, R * C),
                     .gamma = widen(gamma, C), .beta = widen(beta, C)};
    float *d_out = ref_prepare(&ref, R * C, 4);

    float *out = take_f(R * C), *mean = take_f(R), *rstd = take_f(R);
    lt_layernorm_forward(out, mean, rstd, in, gamma, beta, R, C);
    expect_forward(out, &ref, "layernorm forward");

    float *d_in = take_f(R * C), *d_gamma = take_f(C), *d_beta = take_f(C);
    lt_layernorm_backward(d_in, d_gamma, d_beta, d_out, in, mean, rstd, gamma, R, C);
    expect_gradient(d_in, ref.in, R * C, &ref, "layernorm d_in");
    expect_gradient(d_gamma, ref.gamma, C, &ref, "layernorm d_gamma");
    expect_gradient(d_beta, ref.beta, C, &ref, "layernorm d_beta");

    float *once_in = take_f(R * C), *once_gamma = take_f(C), *once_beta = take_f(C);
    memcpy(once_in, d_in, sizeof(float) * R * C);
    memcpy(once_gamma, d_gamma, sizeof(float) * C);
    memcpy(once_beta, d_beta, sizeof(float) * C);
    lt_layernorm_backward(d_in, d_gamma, d_beta, d_out, in, mean, rstd, gamma, R, C);
    expect_doubled(d_in, once_in, R * C, "layernorm d_in");
    expect_doubled(d_gamma, once_gamma, C, "layernorm d_gamma");
    expect_doubled(d_beta, once_beta, C, "layernorm d_beta");
}

Test(nn, layernorm_in_place_and_without_statistics)
{
    enum { R = 3, C = 70 }; /* more than one column block */
    float *in = random_f(R * C, -3, 3, 1), *gamma = random_f(C, 0.5f, 1.5f, 2);
    float *beta = random_f(C, -1, 1, 3);
    float *out = take_f(R * C);
    lt_layernorm_forward(out, NULL, NULL, in, gamma, beta, R, C);
    lt_layernorm_forward(in, NULL, NULL, in, gamma, beta, R, C);
    cr_expect(memcmp(out, in, sizeof(float) * R * C) == 0,
              "in-place layernorm differs from out-of-place");
}

/* ---- embedding ---- */

static void ref_embedding(double *out, const ref_layer *ref)
{
    for (int r = 0; r < ref->R; r++)
        for (int c = 0; c < ref->C; c++)
            out[r * ref->C + c] = ref->table[ref->ids[r] * ref->C + c];
}

Test(nn, embedding_gradients)
{
    enum { R = 7, V = 5, C = 6 };
    const int32_t tokens[R] = {3, 0, 3, 4, 3, 1, 0}; /* repeats must accumulate */
    float *table = random_f(V * C, -1, 1, 1);
    ref_layer ref = {.forward = ref_embedding, .R = R, .C = C, .V = V,
                     .table = widen(table, V * C), .ids = tokens};
    float *d_out = ref_prepare(&ref, R * C, 2);

    float *out = take_f(R * C);
    cr_assert(lt_embedding_forward(out, tokens, table, R, V, C) == LT_OK);
    expect_forward(out, &ref, "embedding forward");

    float *d_table = take_f(V * C);
    cr_assert(lt_embedding_backward(d_table, d_out, tokens, R, V, C) == LT_OK);
    expect_gradient(d_table, ref.table, V * C, &ref, "embedding d_table");
    for (int c = 0; c < C; c++)
        cr_expect(d_table[2 * C + c] == 0.0f, "unused row 2 got a gradient");

    float *once = take_f(V * C);
    memcpy(once, d_table, sizeof(float) * V * C);
    cr_assert(lt_embedding_backward(d_table, d_out, tokens, R, V, C) == LT_OK);
    expect_doubled(d_table, once, V * C, "embedding d_table");
}

/* Into wider rows: the embedding's columns, the rest untouched; a step's
 * few rows (no parallel region) and a forward's many (split over threads). */
Test(nn, embedding_forward_strided_writes_its_columns_only)
{
    enum { V = 4, C = 40, LD = 48 };
    const int row_counts[] = {3, 600}; /* 600 x 40 floats: past the parallel threshold */
    for (int i = 0; i < 2; i++) {
        const int R = row_counts[i];
        int32_t *tokens = take((size_t)R * sizeof *tokens);
        for (int r = 0; r < R; r++)
            tokens[r] = (r * 3 + 2) % V;
        float *table = random_f(V * C, -1, 1, 1);
        float *out = random_f(R * LD, 7, 8, 2), *saved = take_f(R * LD);
        memcpy(saved, out, sizeof(float) * R * LD);
        cr_assert(lt_embedding_forward_strided(out, LD, tokens, table, R, V, C) == LT_OK);
        for (int r = 0; r < R; r++) {
            cr_expect(memcmp(out + r * LD, table + tokens[r] * C, sizeof(float) * C) == 0,
                      "%d rows: row %d", R, r);
            cr_expect(memcmp(out + r * LD + C, saved + r * LD + C, sizeof(float) * (LD - C)) == 0,
                      "%d rows: row %d beyond the embedding", R, r);
        }
    }
}

Test(nn, embedding_backward_same_for_any_thread_count)
{
    enum { R = 200, V = 3, C = 150 }; /* several column blocks, parallel size */
    int32_t tokens[R];
    for (int r = 0; r < R; r++)
        tokens[r] = (r * 7) % V;
    float *d_out = random_f(R * C, -1, 1, 1);
    float *one = take_f(V * C), *two = take_f(V * C);
    omp_set_num_threads(1);
    cr_assert(lt_embedding_backward(one, d_out, tokens, R, V, C) == LT_OK);
    omp_set_num_threads(2);
    cr_assert(lt_embedding_backward(two, d_out, tokens, R, V, C) == LT_OK);
    cr_expect(memcmp(one, two, sizeof(float) * V * C) == 0, "gradients differ across threads");
}

Test(nn, embedding_rejects_bad_ids)
{
    enum { R = 4, V = 5, C = 3 };
    float *table = random_f(V * C, -1, 1, 1);
    float *out = random_f(R * C, 7, 8, 2), *saved = take_f(R * C);
    memcpy(saved, out, sizeof(float) * R * C);

    const int32_t too_big[R] = {0, 4, 5, -1};
    cr_expect(lt_embedding_forward(out, too_big, table, R, V, C) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "id 5 at position 2") != NULL, "message: %s",
              lt_last_error());
    cr_expect(memcmp(out, saved, sizeof(float) * R * C) == 0, "failed forward wrote output");

    const int32_t negative[R] = {0, -3, 1, 1};
    cr_expect(lt_embedding_forward(out, negative, table, R, V, C) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "id -3 at position 1") != NULL, "message: %s",
              lt_last_error());

    float *d_table = take_f(V * C);
    cr_expect(lt_embedding_backward(d_table, out, negative, R, V, C) == LT_E_INPUT);
    for (int i = 0; i < V * C; i++)
        cr_expect(d_table[i] == 0.0f, "failed backward wrote the gradient");
}

/* ---- positional encoding ---- */

static double ref_posenc(int pos, int c, int C)
{
    double angle = pos / pow(10000.0, 2.0 * (c / 2) / C);
    return c % 2 == 0 ? sin(angle) : cos(angle);
}

Test(nn, posenc_values)
{
    for (int C = 7; C <= 8; C++) { /* odd and even widths */
        enum { N = 50 };
        float *pe = take_f(N * C);
        double *expected = take_d(N * C);
        lt_posenc_fill(pe, 0, N, C, C, 0);
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                expected[n * C + c] = ref_posenc(n, c, C);
        double err = check_rel_error_f(pe, expected, N * C, 1.0);
        cr_expect(err < 1e-6, "C = %d: error %.3g", C, err);
        cr_expect(pe[0] == 0.0f && pe[1] == 1.0f, "position 0 is sin 0, cos 0");
    }
}

Test(nn, posenc_offset_and_concatenation)
{
    enum { N = 6, C = 4, LD = 10, C0 = 5 };
    float *table = take_f(N * C);
    lt_posenc_fill(table, 0, N, C, C, 0);

    /* Positions 3 .. 5 alone equal rows 3 .. 5 of the table. */
    float *tail = take_f(3 * C);
    lt_posenc_fill(tail, 3, 3, C, C, 0);
    cr_expect(memcmp(tail, table + 3 * C, sizeof(float) * 3 * C) == 0, "pos0 offset differs");

    /* Written into columns [5, 9) of rows of width 10, the rest untouched. */
    float *wide = take_f(N * LD);
    for (int i = 0; i < N * LD; i++)
        wide[i] = -7.0f;
    lt_posenc_fill(wide, 0, N, C, LD, C0);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < LD; c++) {
            float want = c >= C0 && c < C0 + C ? table[n * C + c - C0] : -7.0f;
            cr_expect(wide[n * LD + c] == want, "row %d column %d: %g, expected %g", n, c,
                      wide[n * LD + c], want);
        }
}

/* A table past the parallel threshold (a forward's) and single rows (a
 * generation step's, no parallel region): the same bits. */
Test(nn, posenc_rows_alone_equal_the_table)
{
    enum { N = 2100, C = 8 }; /* 16800 floats */
    float *table = take_f(N * C), *row = take_f(C);
    lt_posenc_fill(table, 0, N, C, C, 0);
    const int positions[] = {0, 1, 1000, N - 1};
    for (int i = 0; i < 4; i++) {
        lt_posenc_fill(row, positions[i], 1, C, C, 0);
        cr_expect(memcmp(row, table + (size_t)positions[i] * C, sizeof(float) * C) == 0,
                  "position %d", positions[i]);
    }
}

Test(nn, posenc_add_broadcasts_over_batch)
{
    enum { B = 3, N = 5, C = 4 };
    float *pe = take_f(N * C), *x = random_f(B * N * C, -1, 1, 1), *x0 = take_f(B * N * C);
    memcpy(x0, x, sizeof(float) * B * N * C);
    lt_posenc_fill(pe, 0, N, C, C, 0);
    lt_posenc_add(x, pe, B, N, C);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < N * C; i++)
            cr_expect(x[b * N * C + i] == x0[b * N * C + i] + pe[i]);
}

/* ---- activations and add ---- */

static double gelu_d(double x)
{
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

static void ref_gelu(double *out, const ref_layer *ref)
{
    for (size_t i = 0; i < ref->n_out; i++)
        out[i] = gelu_d(ref->in[i]);
}

static void ref_relu(double *out, const ref_layer *ref)
{
    for (size_t i = 0; i < ref->n_out; i++)
        out[i] = ref->in[i] > 0 ? ref->in[i] : 0;
}

/* Worst error in ulp of f against ref over `samples` + 1 points spread
 * over [lo, hi], skipping references below the normal floats. */
static double worst_ulp(float (*f)(float), double (*ref)(double), float lo, float hi, int samples)
{
    double worst = 0;
    for (int i = 0; i <= samples; i++) {
        float v = lo + (hi - lo) * (float)i / (float)samples;
        double r = ref(v);
        if (fabs(r) < 1e-37)
            continue;
        float below = (float)r, above = nextafterf(below, r > 0 ? INFINITY : -INFINITY);
        double err = fabs((double)f(v) - r) / fabs((double)above - (double)below);
        worst = err > worst ? err : worst;
    }
    return worst;
}

static double sigmoid_d(double v) { return 1.0 / (1.0 + exp(-v)); }
static float sigmoid_f(float v) { return lt_sigmoid(v); }
static float tanh_f(float v) { return lt_tanh(v); }

/* The sigmoid behind the GELU and the LSTM's gates, and the LSTM's tanh:
 * accurate in both tails and near 0 (tanh keeps its relative accuracy
 * there), NaN passes through. */
Test(nn, sigmoid_and_tanh_within_three_ulp)
{
    double s = worst_ulp(sigmoid_f, sigmoid_d, -100.0f, 100.0f, 200000);
    cr_expect_lt(s, 3.0, "sigmoid: worst error %g ulp", s);
    double t = worst_ulp(tanh_f, tanh, -20.0f, 20.0f, 200000);
    cr_expect_lt(t, 3.0, "tanh: worst error %g ulp", t);
    double near0 = worst_ulp(tanh_f, tanh, -1e-3f, 1e-3f, 20000);
    cr_expect_lt(near0, 3.0, "tanh near 0: worst error %g ulp", near0);
    cr_expect_eq(lt_sigmoid(0.0f), 0.5f);
    cr_expect_eq(lt_sigmoid(-0.0f), 0.5f);
    cr_expect_eq(lt_sigmoid(INFINITY), 1.0f);
    cr_expect_eq(lt_sigmoid(-INFINITY), 0.0f);
    cr_expect_eq(lt_tanh(INFINITY), 1.0f);
    cr_expect_eq(lt_tanh(-INFINITY), -1.0f);
    cr_expect_eq(lt_tanh(1e-30f), 1e-30f);
    cr_expect(signbit(lt_tanh(-0.0f)) && lt_tanh(-0.0f) == 0.0f, "tanh(-0) = -0");
    cr_expect(!signbit(lt_tanh(0.0f)) && lt_tanh(0.0f) == 0.0f, "tanh(+0) = +0");
    cr_expect(isnan(lt_sigmoid(NAN)) && isnan(lt_sigmoid(-NAN)), "sigmoid: NaN passes");
    cr_expect(isnan(lt_tanh(NAN)) && isnan(lt_tanh(-NAN)), "tanh: NaN passes");
    float in[3] = {NAN, -200.0f, 200.0f}, out[3], d_in[3] = {0}, d_out[3] = {1, 1, 1};
    lt_gelu_forward(out, in, 3);
    lt_gelu_backward(d_in, d_out, in, 3);
    cr_expect(isnan(out[0]) && isnan(d_in[0]), "GELU: NaN in, NaN out: %g %g", out[0], d_in[0]);
    cr_expect(out[1] == 0.0f && out[2] == 200.0f, "GELU tails: %g %g", out[1], out[2]);
    cr_expect(d_in[1] == 0.0f && d_in[2] == 1.0f, "GELU tail slopes: %g %g", d_in[1], d_in[2]);
}

Test(nn, gelu_gradients)
{
    enum { N = 41 };
    float *in = random_f(N, -4, 4, 1);
    ref_layer ref = {.forward = ref_gelu, .in = widen(in, N)};
    float *d_out = ref_prepare(&ref, N, 2);

    float *out = take_f(N);
    lt_gelu_forward(out, in, N);
    expect_forward(out, &ref, "gelu forward");
    cr_expect(fabs(out[0] - gelu_d(in[0])) < 1e-6);

    float *d_in = take_f(N);
    lt_gelu_backward(d_in, d_out, in, N);
    expect_gradient(d_in, ref.in, N, &ref, "gelu d_in");
    float *once = take_f(N);
    memcpy(once, d_in, sizeof(float) * N);
    lt_gelu_backward(d_in, d_out, in, N);
    expect_doubled(d_in, once, N, "gelu d_in");

    lt_gelu_forward(in, in, N);
    cr_expect(memcmp(in, out, sizeof(float) * N) == 0, "in-place gelu differs");
}

Test(nn, gelu_tails_stay_finite)
{
    float in[4] = {-90.0f, -30.0f, 30.0f, 90.0f}, out[4], d_in[4] = {0}, d_out[4] = {1, 1, 1, 1};
    lt_gelu_forward(out, in, 4);
    lt_gelu_backward(d_in, d_out, in, 4);
    cr_expect(out[0] == 0.0f && out[1] == 0.0f && out[2] == 30.0f && out[3] == 90.0f,
              "gelu tails: %g %g %g %g", out[0], out[1], out[2], out[3]);
    cr_expect(d_in[0] == 0.0f && d_in[1] == 0.0f && d_in[2] == 1.0f && d_in[3] == 1.0f,
              "gelu' tails: %g %g %g %g", d_in[0], d_in[1], d_in[2], d_in[3]);
}

static void ref_sigmoid(double *out, const ref_layer *ref)
{
    for (size_t i = 0; i < ref->n_out; i++)
        out[i] = sigmoid_d(ref->in[i]);
}

static void ref_log_sigmoid(double *out, const ref_layer *ref)
{
    for (size_t i = 0; i < ref->n_out; i++) /* -softplus(-x) */
        out[i] = fmin(ref->in[i], 0.0) - log1p(exp(-fabs(ref->in[i])));
}

typedef struct unary {
    const char *name;
    void (*forward)(float *out, const float *in, long n);
    void (*forward_own)(float *out, const float *in, long n);
    void (*backward)(float *d_in, const float *d_out, const float *in, long n);
    void (*ref)(double *out, const ref_layer *ref);
} unary;

/* The gates' functions (attention's beta and log decay): forward against
 * the double reference, backward against its finite differences and
 * adding, the calling thread's version the same bits. */
static void check_gate_function(const unary *f)
{
    enum { N = 43 };
    float *in = random_f(N, -6, 6, 1);
    ref_layer ref = {.forward = f->ref, .in = widen(in, N)};
    float *d_out = ref_prepare(&ref, N, 2);
    float *out = take_f(N), *own = take_f(N);
    f->forward(out, in, N);
    expect_forward(out, &ref, f->name);
    f->forward_own(own, in, N);
    cr_expect(memcmp(out, own, sizeof(float) * N) == 0, "%s: own pass differs", f->name);
    float *d_in = take_f(N), *once = take_f(N);
    f->backward(d_in, d_out, in, N);
    expect_gradient(d_in, ref.in, N, &ref, f->name);
    memcpy(once, d_in, sizeof(float) * N);
    f->backward(d_in, d_out, in, N);
    expect_doubled(d_in, once, N, f->name);
}

Test(nn, gate_functions_gradients_and_tails)
{
    const unary fs[] = {
        {"sigmoid", lt_sigmoid_forward, lt_sigmoid_forward_own, lt_sigmoid_backward, ref_sigmoid},
        {"log_sigmoid", lt_log_sigmoid_forward, lt_log_sigmoid_forward_own,
         lt_log_sigmoid_backward, ref_log_sigmoid}};
    for (int i = 0; i < 2; i++)
        check_gate_function(&fs[i]);
    /* log sigmoid stays finite and <= 0 where sigmoid underflows, and keeps
     * its relative accuracy near 0 (a decay of almost 1) */
    float in[4] = {-200.0f, -30.0f, 30.0f, 200.0f}, out[4], d_in[4] = {0}, d_out[4] = {1, 1, 1, 1};
    lt_log_sigmoid_forward(out, in, 4);
    lt_log_sigmoid_backward(d_in, d_out, in, 4);
    cr_expect(out[0] == -200.0f && out[1] == -30.0f, "log sigmoid tails: %g %g", out[0], out[1]);
    cr_expect(out[2] < 0 && fabs(out[2] + exp(-30.0)) < 1e-3 * exp(-30.0) && out[3] <= 0.0f,
              "log sigmoid near 0: %g %g", out[2], out[3]);
    cr_expect(d_in[0] == 1.0f && d_in[3] == 0.0f, "log sigmoid' tails: %g %g", d_in[0], d_in[3]);
    float s[4], ds[4] = {0};
    lt_sigmoid_forward(s, in, 4);
    lt_sigmoid_backward(ds, d_out, in, 4);
    cr_expect(s[0] == 0.0f && s[3] == 1.0f && ds[0] == 0.0f && ds[3] == 0.0f,
              "sigmoid tails: %g %g, slopes %g %g", s[0], s[3], ds[0], ds[3]);
}

Test(nn, relu_gradients)
{
    enum { N = 40 };
    float *in = random_f(N, -1, 1, 1);
    for (int i = 0; i < N; i++) /* keep finite differences off the kink */
        in[i] += in[i] < 0 ? -0.1f : 0.1f;
    ref_layer ref = {.forward = ref_relu, .in = widen(in, N)};
    float *d_out = ref_prepare(&ref, N, 2);

    float *out = take_f(N);
    lt_relu_forward(out, in, N);
    expect_forward(out, &ref, "relu forward");

    float *d_in = take_f(N), *d_in_from_out = take_f(N);
    lt_relu_backward(d_in, d_out, in, N);
    expect_gradient(d_in, ref.in, N, &ref, "relu d_in");
    lt_relu_backward(d_in_from_out, d_out, out, N);
    cr_expect(memcmp(d_in, d_in_from_out, sizeof(float) * N) == 0,
              "backward from the output differs from backward from the input");
    lt_relu_backward(d_in, d_out, in, N);
    expect_doubled(d_in, d_in_from_out, N, "relu d_in");
}

Test(nn, add)
{
    float a[3] = {1, 2, 3}, b[3] = {0.5f, -2, 4}, out[3];
    lt_add(out, a, b, 3);
    cr_expect(out[0] == 1.5f && out[1] == 0.0f && out[2] == 7.0f);
    lt_add(a, a, b, 3);
    cr_expect(memcmp(a, out, sizeof out) == 0, "in-place add differs");
}

/* ---- dropout ---- */

static void ref_dropout(double *out, const ref_layer *ref)
{
    for (size_t i = 0; i < ref->n_out; i++)
        out[i] = ref->keep[i] ? ref->in[i] * ref->scale : 0.0;
}

Test(nn, dropout_gradients)
{
    enum { R = 6, C = 10 };
    const float p = 0.3f;
    float *in = random_f(R * C, -1, 1, 1), *out = take_f(R * C);
    uint8_t *mask = take(R * C);
    lt_dropout_key key = {.seed = 1, .step = 2, .layer = 3};
    cr_assert(lt_dropout_forward(out, mask, in, p, key, R, C) == LT_OK);
    ref_layer ref = {.forward = ref_dropout, .in = widen(in, R * C), .keep = mask,
                     .scale = 1.0 / (1.0 - (double)p)};
    float *d_out = ref_prepare(&ref, R * C, 2);
    expect_forward(out, &ref, "dropout forward");

    float *d_in = take_f(R * C);
    lt_dropout_backward(d_in, d_out, mask, p, R, C);
    expect_gradient(d_in, ref.in, R * C, &ref, "dropout d_in");
    float *once = take_f(R * C);
    memcpy(once, d_in, sizeof(float) * R * C);
    lt_dropout_backward(d_in, d_out, mask, p, R, C);
    expect_doubled(d_in, once, R * C, "dropout d_in");
}

Test(nn, dropout_keep_rate_and_thread_independence)
{
    enum { R = 256, C = 1024 };
    const float p = 0.1f;
    float *in = random_f((size_t)R * C, -1, 1, 1);
    float *out1 = take_f((size_t)R * C), *out2 = take_f((size_t)R * C);
    uint8_t *mask1 = take((size_t)R * C), *mask2 = take((size_t)R * C);
    lt_dropout_key key = {.seed = 42, .step = 7, .layer = 1};
    omp_set_num_threads(1);
    cr_assert(lt_dropout_forward(out1, mask1, in, p, key, R, C) == LT_OK);
    omp_set_num_threads(2);
    cr_assert(lt_dropout_forward(out2, mask2, in, p, key, R, C) == LT_OK);
    cr_expect(memcmp(mask1, mask2, (size_t)R * C) == 0, "masks differ across thread counts");
    cr_expect(memcmp(out1, out2, sizeof(float) * R * C) == 0, "outputs differ across threads");

    long kept = 0;
    for (long i = 0; i < (long)R * C; i++)
        kept += mask1[i];
    /* 262144 Bernoulli(0.9) draws: standard deviation 154, allow 6. */
    double expected = 0.9 * R * C;
    cr_expect(fabs(kept - expected) < 6 * sqrt(R * C * 0.09), "kept %ld of %d, expected %.0f",
              kept, R * C, expected);

    /* Rows are keyed by index: the first 10 rows alone draw the same mask. */
    cr_assert(lt_dropout_forward(out2, mask2, in, p, key, 10, C) == LT_OK);
    cr_expect(memcmp(mask1, mask2, 10 * C) == 0, "mask depends on the number of rows");

    /* Another step or another layer draws another mask. */
    lt_dropout_key next_step = {.seed = 42, .step = 8, .layer = 1};
    lt_dropout_key next_layer = {.seed = 42, .step = 7, .layer = 2};
    cr_assert(lt_dropout_forward(out2, mask2, in, p, next_step, R, C) == LT_OK);
    cr_expect(memcmp(mask1, mask2, (size_t)R * C) != 0, "step does not change the mask");
    cr_assert(lt_dropout_forward(out2, mask2, in, p, next_layer, R, C) == LT_OK);
    cr_expect(memcmp(mask1, mask2, (size_t)R * C) != 0, "layer does not change the mask");
}

Test(nn, dropout_zero_is_identity_and_bad_p_refused)
{
    enum { R = 3, C = 5 };
    float *in = random_f(R * C, -1, 1, 1), *out = take_f(R * C);
    uint8_t *mask = take(R * C);
    lt_dropout_key key = {.seed = 1};
    cr_assert(lt_dropout_forward(out, mask, in, 0.0f, key, R, C) == LT_OK);
    cr_expect(memcmp(out, in, sizeof(float) * R * C) == 0, "p = 0 changed the input");
    for (int i = 0; i < R * C; i++)
        cr_expect(mask[i] == 1);

    const float bad[] = {-0.1f, 1.0f, 1.5f, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect(lt_dropout_forward(out, mask, in, bad[i], key, R, C) == LT_E_USAGE,
                  "p = %g accepted", (double)bad[i]);
}

/* ---- cross-entropy ---- */

/* The loss itself as the "output": n_out = 1 and upstream = 1. */
static void ref_xent(double *out, const ref_layer *ref)
{
    double total = 0;
    long counted = 0;
    for (int r = 0; r < ref->R; r++) {
        if (ref->mask[r] == 0)
            continue;
        const double *z = ref->in + r * ref->V;
        double sum = 0;
        for (int v = 0; v < ref->V; v++)
            sum += exp(z[v]);
        total += ref->mask[r] * (log(sum) - z[ref->ids[r]]);
        counted++;
    }
    out[0] = counted ? total / counted : 0;
}

Test(nn, xent_gradients)
{
    enum { R = 6, V = 11 };
    const int32_t targets[R] = {3, -1, 10, 0, 5, 99}; /* masked rows carry junk */
    const float mask[R] = {1, 0, 1, 0.5f, 1, 0};
    float *logits = random_f(R * V, -3, 3, 1);
    ref_layer ref = {.forward = ref_xent, .R = R, .V = V, .in = widen(logits, R * V),
                     .ids = targets, .mask = widen(mask, R)};
    double one = 1.0, ref_out;
    ref.n_out = 1;
    ref.out = &ref_out;
    ref.upstream = &one;

    double loss;
    long correct, counted;
    cr_assert(lt_xent_forward(&loss, &correct, &counted, logits, targets, mask, R, V) == LT_OK);
    ref_xent(&ref_out, &ref);
    cr_expect(fabs(loss - ref_out) < 1e-6 * ref_out, "loss %.9g, reference %.9g", loss, ref_out);
    cr_expect(counted == 4, "counted %ld positions, expected 4", counted);

    float *d_logits = take_f(R * V);
    cr_assert(lt_xent_backward(d_logits, logits, targets, mask, R, V) == LT_OK);
    expect_gradient(d_logits, ref.in, R * V, &ref, "xent d_logits");
    for (int v = 0; v < V; v++)
        cr_expect(d_logits[V + v] == 0.0f && d_logits[5 * V + v] == 0.0f,
                  "masked rows got a gradient");

    float *once = take_f(R * V);
    memcpy(once, d_logits, sizeof(float) * R * V);
    cr_assert(lt_xent_backward(d_logits, logits, targets, mask, R, V) == LT_OK);
    expect_doubled(d_logits, once, R * V, "xent d_logits");
}

Test(nn, xent_accuracy_and_no_mask)
{
    enum { R = 4, V = 3 };
    const float logits[R * V] = {
        0, 5, 1,   /* argmax 1 */
        2, 2, 1,   /* tie: first maximum, 0 */
        -1, -3, 4, /* argmax 2 */
        1, 0, 0,   /* argmax 0 */
    };
    const int32_t targets[R] = {1, 1, 2, 2};
    double loss;
    long correct, counted;
    cr_assert(lt_xent_forward(&loss, &correct, &counted, logits, targets, NULL, R, V) == LT_OK);
    cr_expect(correct == 2 && counted == 4, "correct %ld of %ld, expected 2 of 4", correct,
              counted);
    const float mask[R] = {1, 0, 0, 1};
    cr_assert(lt_xent_forward(&loss, &correct, &counted, logits, targets, mask, R, V) == LT_OK);
    cr_expect(correct == 1 && counted == 2);
    double expected = (log(exp(0) + exp(5) + exp(1)) - 5 + log(exp(1) + 2) - 0) / 2;
    cr_expect(fabs(loss - expected) < 1e-9, "loss %.12g, expected %.12g", loss, expected);
}

Test(nn, xent_nothing_counted)
{
    enum { R = 3, V = 4 };
    float *logits = random_f(R * V, -1, 1, 1), *d_logits = take_f(R * V);
    const int32_t targets[R] = {0, 1, 2};
    const float mask[R] = {0, 0, 0};
    double loss = -1;
    long correct = -1, counted = -1;
    cr_assert(lt_xent_forward(&loss, &correct, &counted, logits, targets, mask, R, V) == LT_OK);
    cr_expect(loss == 0.0 && correct == 0 && counted == 0);
    cr_assert(lt_xent_backward(d_logits, logits, targets, mask, R, V) == LT_OK);
    for (int i = 0; i < R * V; i++)
        cr_expect(d_logits[i] == 0.0f);
}

Test(nn, xent_rejects_bad_targets_and_nonfinite_logits)
{
    enum { R = 3, V = 11 };
    float *logits = random_f(R * V, -1, 1, 1), *d_logits = take_f(R * V);
    double loss;
    const int32_t too_big[R] = {0, 10, 11};
    cr_expect(lt_xent_forward(&loss, NULL, NULL, logits, too_big, NULL, R, V) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "id 11 at position 2") != NULL, "message: %s",
              lt_last_error());
    const int32_t negative[R] = {-1, 0, 0};
    cr_expect(lt_xent_backward(d_logits, logits, negative, NULL, R, V) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "id -1 at position 0") != NULL, "message: %s",
              lt_last_error());
    for (int i = 0; i < R * V; i++)
        cr_expect(d_logits[i] == 0.0f, "failed backward wrote the gradient");

    const int32_t fine[R] = {0, 1, 2};
    logits[V + 4] = NAN;
    cr_expect(lt_xent_forward(&loss, NULL, NULL, logits, fine, NULL, R, V) == LT_E_NUMERIC);
    cr_expect(strstr(lt_last_error(), "position 1") != NULL, "message: %s", lt_last_error());
    logits[V + 4] = INFINITY;
    cr_expect(lt_xent_forward(&loss, NULL, NULL, logits, fine, NULL, R, V) == LT_E_NUMERIC);
}

Test(nn, xent_loss_same_for_any_thread_count)
{
    enum { R = 3000, V = 11 };
    float *logits = random_f(R * V, -4, 4, 1);
    int32_t *targets = take(R * sizeof(int32_t));
    for (int r = 0; r < R; r++)
        targets[r] = r % V;
    double loss1, loss2;
    long correct1, correct2;
    omp_set_num_threads(1);
    cr_assert(lt_xent_forward(&loss1, &correct1, NULL, logits, targets, NULL, R, V) == LT_OK);
    omp_set_num_threads(2);
    cr_assert(lt_xent_forward(&loss2, &correct2, NULL, logits, targets, NULL, R, V) == LT_OK);
    cr_expect(memcmp(&loss1, &loss2, sizeof loss1) == 0 && correct1 == correct2,
              "loss %.17g vs %.17g", loss1, loss2);
}

/* ---- thread count independence ---- */

/* The products OpenBLAS would share between threads (several hundred
 * thousand multiply-adds each), under every kernel set the CPU runs. */
Test(nn, linear_same_for_any_thread_count)
{
    check_every_kernel_set();
    enum { R = 520, C_in = 96, C_out = 200 };
    float *in = random_f(R * C_in, -1, 1, 1), *w = random_f(C_out * C_in, -1, 1, 2);
    float *b = random_f(C_out, -1, 1, 3), *d_out = random_f(R * C_out, -1, 1, 4);
    const size_t sizes[4] = {R * C_out, R * C_in, C_out * C_in, C_out};
    float *got[2][4]; /* out, d_in, d_weight, d_bias */
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        for (int g = 0; g < 4; g++)
            got[t][g] = take_f(sizes[g]);
        lt_linear_forward(got[t][0], in, w, b, R, C_in, C_out);
        lt_linear_backward(got[t][1], got[t][2], got[t][3], d_out, in, w, R, C_in, C_out);
    }
    const char *names[4] = {"out", "d_in", "d_weight", "d_bias"};
    for (int g = 0; g < 4; g++)
        cr_expect(memcmp(got[0][g], got[1][g], sizeof(float) * sizes[g]) == 0, "%s differs",
                  names[g]);
}

/* ---- column reductions under threads ---- */

Test(nn, parameter_gradients_same_for_any_thread_count)
{
    enum { R = 300, C = 130 }; /* three column blocks, a parallel size */
    float *in = random_f(R * C, -2, 2, 1), *gamma = random_f(C, 0.5f, 1.5f, 2);
    float *beta = random_f(C, -1, 1, 3), *d_out = random_f(R * C, -1, 1, 4);
    float *out = take_f(R * C), *mean = take_f(R), *rstd = take_f(R);
    lt_layernorm_forward(out, mean, rstd, in, gamma, beta, R, C);
    float *grads[2][3];
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        for (int g = 0; g < 3; g++)
            grads[t][g] = take_f(g == 0 ? R * C : C);
        lt_layernorm_backward(grads[t][0], grads[t][1], grads[t][2], d_out, in, mean, rstd,
                              gamma, R, C);
    }
    cr_expect(memcmp(grads[0][0], grads[1][0], sizeof(float) * R * C) == 0, "d_in differs");
    cr_expect(memcmp(grads[0][1], grads[1][1], sizeof(float) * C) == 0, "d_gamma differs");
    cr_expect(memcmp(grads[0][2], grads[1][2], sizeof(float) * C) == 0, "d_beta differs");
}

/* A few-rows product at 1, 2 and 3 threads: the rows kernel, or the
 * packed panels when `panels` is given. lt_linear_forward's values (1e-5)
 * and the same bits for each thread count; returns the one-thread output. */
static float *few_rows_product(const float *x, const float *W, const float *panels,
                               const float *b, int R, int C_in, int C_out)
{
    float *want = take_f((size_t)R * C_out), *got[3];
    lt_linear_forward(want, x, W, b, R, C_in, C_out);
    for (int threads = 1; threads <= 3; threads++) {
        cr_assert_eq(lt_threads_set(threads), LT_OK);
        got[threads - 1] = take_f((size_t)R * C_out);
        if (panels != NULL)
            lt_linear_panels_forward(got[threads - 1], x, panels, b, R, C_in, C_out);
        else
            lt_linear_rows_forward(got[threads - 1], x, W, b, R, C_in, C_out);
    }
    cr_assert_eq(lt_threads_set(2), LT_OK);
    double err = check_rel_error_ff(got[0], want, (size_t)R * C_out, 1.0);
    cr_assert_lt(err, 1e-5, "%d x %d, %d rows: %g", C_in, C_out, R, err);
    for (int t = 1; t < 3; t++)
        cr_assert_arr_eq(got[t], got[0], (size_t)R * C_out * sizeof(float),
                         "%d x %d, %d rows: %d threads differ", C_in, C_out, R, t + 1);
    return got[0];
}

/* The few-rows kernel of generation: lt_linear_forward's values, and the
 * same bits for any thread count. */
Test(nn, linear_for_a_few_rows)
{
    const int shapes[][2] = {{256, 768}, {37, 45}, {16, 3}, {1, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int R = 1; R <= LT_LINEAR_FEW_ROWS; R++) {
            int C_in = shapes[s][0], C_out = shapes[s][1];
            float *W = take_f((size_t)C_in * C_out), *x = take_f((size_t)R * C_in);
            float *b = take_f((size_t)C_out);
            lt_rng rng;
            lt_rng_seed(&rng, 5, (uint64_t)(s * 10 + R));
            lt_rng_fill_normal(&rng, W, (long)C_in * C_out, 1.0f);
            lt_rng_fill_normal(&rng, x, (long)R * C_in, 1.0f);
            lt_rng_fill_normal(&rng, b, C_out, 1.0f);
            few_rows_product(x, W, NULL, b, R, C_in, C_out);
            release_pool();
        }
}

/* The packed panels of generation: the bits of the plain in-order fused
 * sum, lt_linear_forward's values; the same bits for any thread count, and
 * a row's outputs the same bits whatever the other rows (any row count);
 * outputs past a multiple of 16 kept. */
Test(nn, linear_from_packed_panels)
{
    const int shapes[][2] = {{256, 768}, {37, 45}, {16, 3}, {1, 1}, {1024, 17}, {5, 32}};
    /* under each of ltbench's kernel sets the build has and the CPU runs */
    const lt_kernel_set was = lt_kernels_active();
    for (int set = 0; set < LT_KERNEL_SETS; set++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && lt_kernels_usable((lt_kernel_set)set); s++) {
        cr_assert_eq(lt_kernels_use((lt_kernel_set)set), LT_OK);
        const int fused = lt_kernels_fused((lt_kernel_set)set);
        const int C_in = shapes[s][0], C_out = shapes[s][1], R_MAX = LT_LINEAR_FEW_ROWS;
        float *W = take_f((size_t)C_in * C_out), *x = take_f((size_t)R_MAX * C_in);
        float *b = take_f((size_t)C_out), *panels = take_f(lt_linear_panels_floats(C_in, C_out));
        float *all = take_f((size_t)R_MAX * C_out);
        lt_rng rng;
        lt_rng_seed(&rng, 6, (uint64_t)s);
        lt_rng_fill_normal(&rng, W, (long)C_in * C_out, 1.0f);
        lt_rng_fill_normal(&rng, x, (long)R_MAX * C_in, 1.0f);
        lt_rng_fill_normal(&rng, b, C_out, 1.0f);
        lt_linear_panels_pack(panels, W, C_in, C_out);
        lt_linear_panels_forward(all, x, panels, b, R_MAX, C_in, C_out);
        /* the plain sum it claims: each output adds its inputs' products in
         * input order into one accumulator, then adds the bias; fused where
         * the kernel set has the instruction (rows.c contracts
         * multiply-adds, this file does not), rounded twice where not */
        for (int r = 0; r < R_MAX; r++)
            for (int o = 0; o < C_out; o++) {
                float sum = 0.0f;
                for (int k = 0; k < C_in; k++) {
                    float w = W[(size_t)o * C_in + k], v = x[(size_t)r * C_in + k];
                    sum = fused ? fmaf(w, v, sum) : sum + w * v;
                }
                float want = b[o] + sum, got = all[(size_t)r * C_out + o];
                cr_assert(memcmp(&want, &got, sizeof want) == 0,
                          "%d x %d (%s): row %d output %d is %.9g, the in-order sum %.9g",
                          C_in, C_out, lt_kernels_name((lt_kernel_set)set), r, o, (double)got,
                          (double)want);
            }
        for (int R = 1; R <= R_MAX; R++) {
            float *got = few_rows_product(x, W, panels, b, R, C_in, C_out);
            cr_assert_arr_eq(got, all, (size_t)R * C_out * sizeof(float),
                             "%d x %d: %d rows differ from the first %d of %d", C_in, C_out, R,
                             R, R_MAX);
        }
        /* no bias */
        float *plain = take_f((size_t)C_out), *want = take_f((size_t)C_out);
        lt_linear_panels_forward(plain, x, panels, NULL, 1, C_in, C_out);
        lt_linear_forward(want, x, W, NULL, 1, C_in, C_out);
        cr_assert_lt(check_rel_error_ff(plain, want, (size_t)C_out, 1.0), 1e-5);
        release_pool();
    }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}
