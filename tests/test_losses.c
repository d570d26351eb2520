/* Tests of the output losses: the discretized mixture of logistics and CTC.
 * Gradients are checked against finite differences of double-precision
 * references written here in a different form from the library's (other
 * log-sigmoid identities for the mixture, probability space for CTC), and
 * CTC also against brute-force enumeration of alignments. */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pool.h"
#include "nn/ctc.h"
#include "nn/mol.h"

/* float gradients against double finite differences: float rounding leaves
 * about 1e-7 of the largest entry; a wrong term shows up as order 1. */
#define GRAD_BOUND 1e-5
/* Losses are computed in double from the same float inputs on both sides;
 * only the formulas differ. */
#define LOSS_BOUND 1e-9

TestSuite(losses, .fini = release_pool);

/* ---- discretized mixture of logistics: reference ---- */

static double ref_log_sigmoid(double z) { return z < 0 ? z - log1p(exp(z)) : -log1p(exp(-z)); }

/* log(sigmoid(u) - sigmoid(v)) for u > v, both on the side where the
 * sigmoids are small (u + v <= 0), as log sigmoid(u) + log(1 - ratio). */
static double ref_log_sigmoid_diff(double u, double v)
{
    if (u + v > 0) { /* sigmoid(u) - sigmoid(v) = sigmoid(-v) - sigmoid(-u) */
        double t = -v;
        v = -u;
        u = t;
    }
    double lu = ref_log_sigmoid(u), lv = ref_log_sigmoid(v);
    return lu + log1p(-exp(lv - lu));
}

static double ref_mol_log_prob(const double *p, int x, int K)
{
    double m = p[0];
    for (int k = 1; k < K; k++)
        m = fmax(m, p[k]);
    double z = 0;
    for (int k = 0; k < K; k++)
        z += exp(p[k] - m);
    double log_z = m + log(z), q[8], q_max = -INFINITY;
    cr_assert(K <= 8);
    for (int k = 0; k < K; k++) {
        double s = exp(fmax(p[2 * K + k], -7.0));
        double lo = (x / 127.5 - 1 - 1 / 255.0 - p[K + k]) / s;
        double hi = (x / 127.5 - 1 + 1 / 255.0 - p[K + k]) / s;
        double lp = x == 0 ? ref_log_sigmoid(hi)
                    : x == 255 ? ref_log_sigmoid(-lo)
                               : ref_log_sigmoid_diff(hi, lo);
        q[k] = p[k] - log_z + lp;
        q_max = fmax(q_max, q[k]);
    }
    double sum = 0;
    for (int k = 0; k < K; k++)
        sum += exp(q[k] - q_max);
    return q_max + log(sum);
}

typedef struct mol_case {
    double *params; /* (R, 3K) */
    const int32_t *targets;
    const double *mask; /* (R) or NULL */
    int R, K;
} mol_case;

static double ref_mol_nll(const double *x, void *ctx)
{
    (void)x; /* x is the case's params */
    const mol_case *c = ctx;
    double sum = 0;
    for (int r = 0; r < c->R; r++)
        if (!c->mask || c->mask[r] != 0)
            sum -= (c->mask ? c->mask[r] : 1.0) *
                   ref_mol_log_prob(c->params + r * 3 * c->K, c->targets[r], c->K);
    return sum;
}

/* Forward against the reference, backward (scaled) against finite
 * differences of each row's loss alone, so neither the rounding of a large
 * loss elsewhere nor a row with large gradients hides a row's error. */
static void expect_mol_matches(const float *params, const int32_t *targets, const float *mask,
                               int R, int K, const char *what)
{
    int P = LT_MOL_PARAMS(K);
    mol_case ref = {.params = widen(params, (size_t)R * P), .targets = targets,
                    .mask = mask ? widen(mask, R) : NULL, .R = R, .K = K};
    double nll, expected = ref_mol_nll(NULL, &ref);
    long counted;
    cr_assert(lt_mol_forward(&nll, &counted, params, targets, mask, R, K) == LT_OK, "%s: %s",
              what, lt_last_error());
    cr_expect(fabs(nll - expected) <= LOSS_BOUND * fabs(expected), "%s: nll %.15g, reference %.15g",
              what, nll, expected);

    const float scale = 0.75f;
    float *grad = take_f((size_t)R * P);
    cr_assert(lt_mol_backward(grad, params, targets, mask, R, K, scale) == LT_OK);
    double *fd = take_d(P);
    for (int r = 0; r < R; r++) {
        mol_case row = {.params = ref.params + r * P, .targets = targets + r,
                        .mask = ref.mask ? ref.mask + r : NULL, .R = 1, .K = K};
        check_fd_gradient(fd, row.params, P, ref_mol_nll, &row);
        for (int i = 0; i < P; i++)
            fd[i] *= scale;
        double err = check_rel_error_f(grad + r * P, fd, P, 1e-6);
        cr_expect(err < GRAD_BOUND, "%s: row %d: relative error %.3g against finite differences",
                  what, r, err);
        if (mask && mask[r] == 0)
            for (int i = 0; i < P; i++)
                cr_expect(grad[r * P + i] == 0.0f, "%s: masked row %d got a gradient", what, r);
    }
}

/* ---- discretized mixture of logistics: tests ---- */

Test(losses, mol_gradients)
{
    enum { R = 8, K = 3, P = 3 * K };
    float *params = take_f(R * P);
    for (int r = 0; r < R; r++) {
        lt_rng rng;
        lt_rng_seed(&rng, 7, r);
        lt_rng_fill_uniform(&rng, params + r * P, K, -2, 2);
        lt_rng_fill_uniform(&rng, params + r * P + K, K, -1.2f, 1.2f);
        lt_rng_fill_uniform(&rng, params + r * P + 2 * K, K, -4, 0);
    }
    const int32_t targets[R] = {0, 255, 1, 999, 254, 128, 37, 200}; /* row 3 is masked */
    const float mask[R] = {1, 0.5f, 1, 0, 1, 2, 1, 1};
    expect_mol_matches(params, targets, mask, R, K, "mol");
    expect_mol_matches(params, (const int32_t[R]){0, 255, 1, 2, 254, 128, 37, 200}, NULL, R, K,
                       "mol without mask");

    double nll;
    long counted;
    cr_assert(lt_mol_forward(&nll, &counted, params, targets, mask, R, K) == LT_OK);
    cr_expect(counted == 7, "counted %ld positions, expected 7", counted);
}

Test(losses, mol_gradients_extreme_parameters)
{
    enum { R = 8, K = 2, P = 3 * K };
    /* per row: logits | means | log scales */
    const float params[R * P] = {
        0, 0.5f, 4, 3, -6.9f, -6.5f,      /* sharp, means far right of byte 0 */
        1, -1, -4, -50, -6.9f, -6.9f,     /* sharp, far left of byte 255 */
        0, 2, 3, 5, -6.9f, -5,            /* interior byte far from both */
        -1, 1, -3, 2.5f, -6.9f, -6,       /* interior, far on both sides */
        0, 0, 0.203f, -0.3f, -9, -6.95f,  /* one log scale below the clamp */
        0, 3, 0.1f, -0.4f, 6, 4,          /* huge scales: bins nearly flat */
        0, 3, 0.1f, -0.4f, 6, 5,          /* huge scales at an edge byte */
        8, -8, 30, -30, -6.9f, 3,         /* a dominant component and a far one */
    };
    const int32_t targets[R] = {0, 255, 1, 128, 153, 77, 255, 0};
    expect_mol_matches(params, targets, NULL, R, K, "mol extreme");
    /* a log scale below the clamp has no gradient */
    float *grad = take_f(R * P);
    cr_assert(lt_mol_backward(grad, params, targets, NULL, R, K, 1.0f) == LT_OK);
    cr_expect(grad[4 * P + 2 * K] == 0.0f, "gradient %g below the clamp", grad[4 * P + 2 * K]);
}

/* Parameter sets for the distribution tests: ordinary, then extreme but
 * finite ones. */
enum { DIST_K = 3, DIST_SETS = 7 };
static const float dist_params[DIST_SETS][3 * DIST_K] = {
    {0.5f, -0.3f, 1, -0.97f, 0.1f, 0.6f, -3, -2, -4},
    {0, 1, 2, -0.5f, 0.5f, 1.5f, -7, -7, -7},
    {0, 0, 0, 1e30f, -1e30f, 0, -7, -100, -7},
    {80, -80, 0, 0.2f, -0.2f, 0, 80, 80, 80},
    {0, 0, 0, 0.3f, 40, -40, 1e30f, -1e30f, 3e38f},
    {-80, 80, 10, 3e38f, -3e38f, 0.5f, 0, -7, 10},
    {0, 0, 0, 1.5f, -1.5f, 0.999f, -6, -6, -6},
};

Test(losses, mol_log_probs_sum_to_one_and_stay_finite)
{
    double logp[256];
    for (int set = 0; set < DIST_SETS; set++) {
        lt_mol_log_probs(logp, dist_params[set], DIST_K);
        double total = 0;
        for (int x = 0; x < 256; x++) {
            cr_expect(isfinite(logp[x]) && logp[x] <= 1e-12, "set %d: log p(%d) = %g", set, x,
                      logp[x]);
            total += exp(logp[x]);
        }
        cr_expect(fabs(total - 1) < 1e-9, "set %d: probabilities sum to %.15g", set, total);
        /* forward and backward are finite too */
        int32_t targets[4] = {0, 1, 128, 255};
        float rows[4 * 3 * DIST_K], grad[4 * 3 * DIST_K] = {0};
        for (int r = 0; r < 4; r++)
            memcpy(rows + r * 3 * DIST_K, dist_params[set], sizeof dist_params[set]);
        double nll;
        cr_assert(lt_mol_forward(&nll, NULL, rows, targets, NULL, 4, DIST_K) == LT_OK);
        cr_expect(isfinite(nll), "set %d: nll %g", set, nll);
        cr_assert(lt_mol_backward(grad, rows, targets, NULL, 4, DIST_K, 1.0f) == LT_OK);
        for (int i = 0; i < 4 * 3 * DIST_K; i++)
            cr_expect(isfinite(grad[i]), "set %d: gradient %d is %g", set, i, grad[i]);
    }
    /* where the reference's formulas hold, the values agree */
    for (int set = 0; set < 2; set++) {
        lt_mol_log_probs(logp, dist_params[set], DIST_K);
        double *wide = widen(dist_params[set], 3 * DIST_K);
        for (int x = 0; x < 256; x++) {
            double expected = ref_mol_log_prob(wide, x, DIST_K);
            cr_expect(fabs(logp[x] - expected) <= LOSS_BOUND * fmax(1, fabs(expected)),
                      "set %d: log p(%d) = %.15g, reference %.15g", set, x, logp[x], expected);
        }
    }
}

Test(losses, mol_sampling_matches_probabilities)
{
    enum { R = 20000, P = 3 * DIST_K, GROUP = 8 };
    float *params = take_f((size_t)R * P);
    double *uniforms = take_d(2 * R);
    lt_rng rng;
    lt_rng_seed(&rng, 11, 0);
    for (int r = 0; r < R; r++) {
        memcpy(params + (size_t)r * P, dist_params[0], sizeof dist_params[0]);
        uniforms[2 * r] = lt_rng_uniform(&rng);
        uniforms[2 * r + 1] = lt_rng_uniform(&rng);
    }
    int32_t *bytes = take(R * sizeof(int32_t));
    lt_mol_sample(bytes, params, uniforms, R, DIST_K);
    double freq[256] = {0}, logp[256];
    for (int r = 0; r < R; r++) {
        cr_assert(bytes[r] >= 0 && bytes[r] <= 255, "byte %d", bytes[r]);
        freq[bytes[r]] += 1.0 / R;
    }
    lt_mol_log_probs(logp, dist_params[0], DIST_K);
    /* groups of 8 bytes, and the edge bins alone (they hold the tails): a
     * frequency's standard deviation is at most 0.0035 here, so 0.015 is
     * over 4 of them, while a wrong bin mapping moves whole groups */
    for (int g = 0; g < 256; g += GROUP) {
        double f = 0, p = 0;
        for (int x = g; x < g + GROUP; x++) {
            f += freq[x];
            p += exp(logp[x]);
        }
        cr_expect(fabs(f - p) < 0.015, "bytes %d..%d: frequency %.4f, probability %.4f", g,
                  g + GROUP - 1, f, p);
    }
    cr_expect(fabs(freq[0] - exp(logp[0])) < 0.01 && fabs(freq[255] - exp(logp[255])) < 0.01,
              "edge bins: %.4f vs %.4f, %.4f vs %.4f", freq[0], exp(logp[0]), freq[255],
              exp(logp[255]));
}

Test(losses, mol_sampling_hand_cases)
{
    enum { K = 2 };
    /* equal weights; component 0 at 0.1 (byte 140.25 -> 140), component 1
     * at -0.6 (byte 51) */
    const float p[3 * K] = {0, 0, 0.1f, -0.6f, -3, -3};
    float params[4 * 3 * K];
    for (int r = 0; r < 4; r++)
        memcpy(params + r * 3 * K, p, sizeof p);
    const double uniforms[4 * 2] = {0.2, 0.5, 0.7, 0.5, 0.2, 0.0, 0.7, 1 - 1e-16};
    int32_t out[4];
    lt_mol_sample(out, params, uniforms, 4, K);
    cr_expect(out[0] == 140 && out[1] == 51, "the means: %d %d", out[0], out[1]);
    cr_expect(out[2] == 0 && out[3] == 255, "the extreme uniforms: %d %d", out[2], out[3]);
}

Test(losses, mol_rejects_bad_targets_and_nonfinite_parameters)
{
    enum { R = 3, K = 2, P = 3 * K };
    float *params = random_f(R * P, -1, 1, 1), *grad = take_f(R * P);
    double nll;
    const int32_t too_big[R] = {0, 255, 256};
    cr_expect(lt_mol_forward(&nll, NULL, params, too_big, NULL, R, K) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "byte 256 at position 2") != NULL, "message: %s",
              lt_last_error());
    const int32_t negative[R] = {3, -1, 7};
    cr_expect(lt_mol_backward(grad, params, negative, NULL, R, K, 1.0f) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "byte -1 at position 1") != NULL, "message: %s",
              lt_last_error());
    for (int i = 0; i < R * P; i++)
        cr_expect(grad[i] == 0.0f, "failed backward wrote the gradient");
    const float mask[R] = {1, 0, 1}; /* an uncounted position's target is not looked at */
    cr_expect(lt_mol_forward(&nll, NULL, params, negative, mask, R, K) == LT_OK);

    params[P + 4] = NAN;
    cr_expect(lt_mol_forward(&nll, NULL, params, too_big, mask, R, K) == LT_E_INPUT,
              "a bad target is reported before a bad parameter");
    const int32_t fine[R] = {0, 1, 2};
    cr_expect(lt_mol_forward(&nll, NULL, params, fine, NULL, R, K) == LT_E_NUMERIC);
    cr_expect(strstr(lt_last_error(), "position 1") != NULL, "message: %s", lt_last_error());
    params[P + 4] = INFINITY;
    cr_expect(lt_mol_backward(grad, params, fine, NULL, R, K, 1.0f) == LT_E_NUMERIC);
    cr_expect(lt_mol_forward(&nll, NULL, params, fine, mask, R, K) == LT_OK);
}

Test(losses, mol_same_for_any_thread_count)
{
    enum { R = 3000, K = 5, P = 3 * K };
    float *params = random_f((size_t)R * P, -3, 3, 1);
    double *uniforms = take_d(2 * R);
    int32_t *targets = take(R * sizeof(int32_t));
    lt_rng rng;
    lt_rng_seed(&rng, 5, 0);
    for (int r = 0; r < R; r++) {
        targets[r] = (int32_t)((r * 37) % 256);
        uniforms[2 * r] = lt_rng_uniform(&rng);
        uniforms[2 * r + 1] = lt_rng_uniform(&rng);
    }
    double nll[2];
    float *grad[2];
    int32_t *bytes[2];
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        grad[t] = take_f((size_t)R * P);
        bytes[t] = take(R * sizeof(int32_t));
        cr_assert(lt_mol_forward(&nll[t], NULL, params, targets, NULL, R, K) == LT_OK);
        cr_assert(lt_mol_backward(grad[t], params, targets, NULL, R, K, 1.0f) == LT_OK);
        lt_mol_sample(bytes[t], params, uniforms, R, K);
    }
    cr_expect(memcmp(&nll[0], &nll[1], sizeof nll[0]) == 0, "nll %.17g vs %.17g", nll[0],
              nll[1]);
    cr_expect(memcmp(grad[0], grad[1], sizeof(float) * R * P) == 0, "gradients differ");
    cr_expect(memcmp(bytes[0], bytes[1], sizeof(int32_t) * R) == 0, "samples differ");
    /* a generation step's few rows (no parallel region) draw the same bytes */
    int32_t few[4];
    lt_mol_sample(few, params + (size_t)(R - 4) * P, uniforms + 2 * (R - 4), 4, K);
    cr_expect(memcmp(few, bytes[0] + R - 4, sizeof few) == 0, "a few rows alone differ");
}

/* ---- CTC: references ---- */

enum { REF_MAX_C = 16, REF_MAX_S = 63 };

static void ref_softmax(double *y, const double *x, int C)
{
    double m = x[0], sum = 0;
    for (int c = 1; c < C; c++)
        m = fmax(m, x[c]);
    for (int c = 0; c < C; c++)
        sum += y[c] = exp(x[c] - m);
    for (int c = 0; c < C; c++)
        y[c] /= sum;
}

/* p(labels | x) by the forward recursion in probability space (fine for the
 * short utterances here), over the states blank, l1, blank, l2, ... blank. */
static double ref_ctc_prob(const double *x, int T, const int32_t *labels, int L, int C)
{
    int S = 2 * L + 1, ext[REF_MAX_S];
    cr_assert(S <= REF_MAX_S && C <= REF_MAX_C);
    if (T == 0)
        return L == 0;
    for (int s = 0; s < S; s++)
        ext[s] = s % 2 ? labels[s / 2] : 0;
    double alpha[REF_MAX_S] = {0}, next[REF_MAX_S], y[REF_MAX_C];
    ref_softmax(y, x, C);
    alpha[0] = y[0];
    if (S > 1)
        alpha[1] = y[ext[1]];
    for (int t = 1; t < T; t++) {
        ref_softmax(y, x + t * C, C);
        for (int s = 0; s < S; s++) {
            double sum = alpha[s] + (s > 0 ? alpha[s - 1] : 0);
            if (s > 1 && ext[s] != 0 && ext[s] != ext[s - 2])
                sum += alpha[s - 2];
            next[s] = sum * y[ext[s]];
        }
        memcpy(alpha, next, sizeof(double) * S);
    }
    return alpha[S - 1] + (S > 1 ? alpha[S - 2] : 0);
}

/* p(labels | x) by enumerating all C^T frame paths and collapsing each. */
static double brute_ctc_prob(const double *x, int T, const int32_t *labels, int L, int C)
{
    long paths = 1;
    for (int t = 0; t < T; t++)
        paths *= C;
    double y[8][REF_MAX_C], total = 0;
    cr_assert(T <= 8 && C <= REF_MAX_C);
    for (int t = 0; t < T; t++)
        ref_softmax(y[t], x + t * C, C);
    for (long path = 0; path < paths; path++) {
        int collapsed[8], n = 0, previous = 0;
        double p = 1;
        long rest = path;
        for (int t = 0; t < T; t++) {
            int c = (int)(rest % C);
            rest /= C;
            p *= y[t][c];
            if (c != 0 && c != previous)
                collapsed[n++] = c;
            previous = c;
        }
        int same = n == L;
        for (int i = 0; same && i < L; i++)
            same = collapsed[i] == labels[i];
        if (same)
            total += p;
    }
    return total;
}

typedef struct ctc_case {
    double *logits; /* (B, T_max, C) */
    const int32_t *input_lengths, *labels, *label_lengths;
    int B, T_max, C, L_max;
} ctc_case;

static double ref_ctc_loss(const double *x, void *ctx)
{
    (void)x; /* x is the case's logits */
    const ctc_case *c = ctx;
    double loss = 0;
    for (int b = 0, offset = 0; b < c->B; offset += c->label_lengths[b++])
        loss -= log(ref_ctc_prob(c->logits + b * c->T_max * c->C, c->input_lengths[b],
                                 c->labels + offset, c->label_lengths[b], c->C));
    return loss;
}

/* lt_ctc_loss with a workspace from the pool, planned for `threads`. */
static lt_status run_ctc(double *loss, double *per_utt, float *d_logits, float scale,
                         const float *logits, const ctc_case *c, int threads)
{
    void *ws = take(lt_ctc_workspace_bytes(c->B, c->T_max, c->L_max, c->C, threads));
    return lt_ctc_loss(loss, per_utt, d_logits, scale, ws, logits, c->input_lengths, c->labels,
                       c->label_lengths, c->B, c->T_max, c->C, c->L_max);
}

/* ---- CTC: tests ---- */

Test(losses, ctc_matches_brute_force)
{
    enum { B = 9, T_max = 5, C = 3, L_max = 3 };
    const int32_t input_lengths[B] = {5, 4, 3, 1, 5, 0, 5, 2, 4};
    const int32_t label_lengths[B] = {2, 2, 0, 1, 3, 0, 3, 2, 1};
    const int32_t labels[] = {1, 2, /**/ 1, 1, /**/ /**/ 2, /**/ 2, 1, 2, /**/ /**/ 1, 1, 1,
                              /**/ 1, 2, /**/ 2};
    float *logits = random_f(B * T_max * C, -2, 2, 1);
    ctc_case c = {.logits = widen(logits, B * T_max * C), .input_lengths = input_lengths,
                  .labels = labels, .label_lengths = label_lengths, .B = B, .T_max = T_max,
                  .C = C, .L_max = L_max};
    double loss, per_utt[B], sum = 0;
    cr_assert(run_ctc(&loss, per_utt, NULL, 1, logits, &c, 0) == LT_OK, "%s", lt_last_error());
    for (int b = 0, offset = 0; b < B; offset += label_lengths[b++]) {
        double p = brute_ctc_prob(c.logits + b * T_max * C, input_lengths[b], labels + offset,
                                  label_lengths[b], C);
        cr_expect(p > 0 && fabs(exp(-per_utt[b]) - p) <= 1e-9 * p,
                  "utterance %d: exp(-loss) %.15g, brute force %.15g", b, exp(-per_utt[b]), p);
        sum += per_utt[b];
    }
    cr_expect(per_utt[5] == 0, "no frames and no labels: loss %g", per_utt[5]);
    cr_expect(loss == sum, "loss_sum %.17g, sum of the terms %.17g", loss, sum);
    double alone;
    cr_assert(run_ctc(&alone, NULL, NULL, 1, logits, &c, 0) == LT_OK);
    cr_expect(alone == loss, "without per_utt: %.17g vs %.17g", alone, loss);
}

/* Three utterances of 7, 5 and 6 of 7 frames (two padded) with repeats. */
enum { G_B = 3, G_T = 7, G_C = 5, G_L = 3 };
static const int32_t g_input_lengths[G_B] = {7, 5, 6}, g_label_lengths[G_B] = {3, 1, 3};
static const int32_t g_labels[] = {1, 2, 2, 3, 4, 1, 4};

static ctc_case gradient_case(const float *logits)
{
    return (ctc_case){.logits = widen(logits, G_B * G_T * G_C), .input_lengths = g_input_lengths,
                      .labels = g_labels, .label_lengths = g_label_lengths, .B = G_B,
                      .T_max = G_T, .C = G_C, .L_max = G_L};
}

Test(losses, ctc_gradients)
{
    enum { N = G_B * G_T * G_C };
    float *logits = random_f(N, -3, 3, 2);
    ctc_case c = gradient_case(logits);
    const float scale = 0.5f;
    float *grad = take_f(N);
    double loss, expected = ref_ctc_loss(NULL, &c);
    cr_assert(run_ctc(&loss, NULL, grad, scale, logits, &c, 0) == LT_OK, "%s", lt_last_error());
    cr_expect(fabs(loss - expected) <= LOSS_BOUND * expected, "loss %.15g, reference %.15g",
              loss, expected);
    double *fd = take_d(N);
    check_fd_gradient(fd, c.logits, N, ref_ctc_loss, &c);
    for (int i = 0; i < N; i++)
        fd[i] *= scale;
    double err = check_rel_error_f(grad, fd, N, 1e-6);
    cr_expect(err < GRAD_BOUND, "d_logits: relative error %.3g against finite differences", err);
    for (int b = 0; b < G_B; b++)
        for (int i = g_input_lengths[b] * G_C; i < G_T * G_C; i++)
            cr_expect(grad[b * G_T * G_C + i] == 0.0f, "padded frame of utterance %d got %g", b,
                      grad[b * G_T * G_C + i]);

    float *twice = take_f(N), *expected_twice = take_f(N);
    memcpy(twice, grad, sizeof(float) * N);
    for (int i = 0; i < N; i++)
        expected_twice[i] = 2 * grad[i];
    cr_assert(run_ctc(&loss, NULL, twice, scale, logits, &c, 0) == LT_OK);
    cr_expect(check_rel_error_ff(twice, expected_twice, N, 1e-6) < 1e-6,
              "a second call did not add into d_logits");
}

Test(losses, ctc_padding_is_ignored)
{
    enum { N = G_B * G_T * G_C };
    float *logits = random_f(N, -3, 3, 2), *padded = take_f(N);
    memcpy(padded, logits, sizeof(float) * N);
    for (int b = 0; b < G_B; b++)
        for (int i = g_input_lengths[b] * G_C; i < G_T * G_C; i++)
            padded[b * G_T * G_C + i] = i % 2 ? NAN : 1e30f;
    ctc_case c = gradient_case(logits);
    double loss[2], per_utt[2][G_B];
    float *grad[2] = {take_f(N), take_f(N)};
    cr_assert(run_ctc(&loss[0], per_utt[0], grad[0], 1, logits, &c, 0) == LT_OK);
    cr_assert(run_ctc(&loss[1], per_utt[1], grad[1], 1, padded, &c, 0) == LT_OK, "%s",
              lt_last_error());
    cr_expect(memcmp(per_utt[0], per_utt[1], sizeof per_utt[0]) == 0 && loss[0] == loss[1],
              "padding changed the loss");
    cr_expect(memcmp(grad[0], grad[1], sizeof(float) * N) == 0, "padding changed the gradient");
}

Test(losses, ctc_refuses_bad_input)
{
    enum { B = 2, T_max = 4, C = 4, L_max = 3, N = B * T_max * C };
    float *logits = random_f(N, -1, 1, 3), *grad = take_f(N);
    double loss;
    int32_t input_lengths[B] = {4, 3}, label_lengths[B] = {2, 3};
    int32_t labels[5] = {1, 2, 2, 2, 1}; /* utterance 1: 3 labels, 1 repeat: 4 frames */
    ctc_case c = {.input_lengths = input_lengths, .labels = labels,
                  .label_lengths = label_lengths, .B = B, .T_max = T_max, .C = C,
                  .L_max = L_max};
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_INPUT);
    const char *msg = lt_last_error();
    cr_expect(strstr(msg, "utterance 1") && strstr(msg, "input length 3") &&
                  strstr(msg, "label length 3"),
              "message: %s", msg);
    input_lengths[1] = 4; /* exactly enough */
    cr_expect(run_ctc(&loss, NULL, NULL, 1, logits, &c, 0) == LT_OK, "%s", lt_last_error());

    labels[4] = C;
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "utterance 1: label 4 at index 2") != NULL, "message: %s",
              lt_last_error());
    labels[4] = 1;
    labels[0] = 0; /* the blank is not a label */
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_INPUT);
    cr_expect(strstr(lt_last_error(), "utterance 0: label 0 at index 0") != NULL, "message: %s",
              lt_last_error());
    labels[0] = 1;
    input_lengths[0] = T_max + 1;
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_INPUT);
    input_lengths[0] = 4;
    label_lengths[1] = L_max + 1;
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_INPUT);
    label_lengths[1] = 3;

    logits[T_max * C + 2 * C + 1] = INFINITY; /* utterance 1, frame 2 */
    cr_expect(run_ctc(&loss, NULL, grad, 1, logits, &c, 0) == LT_E_NUMERIC);
    cr_expect(strstr(lt_last_error(), "utterance 1") && strstr(lt_last_error(), "frame 2"),
              "message: %s", lt_last_error());
    for (int i = 0; i < N; i++)
        cr_expect(grad[i] == 0.0f, "a refused call wrote d_logits");
}

Test(losses, ctc_same_for_any_thread_count)
{
    enum { B = 12, T_max = 30, C = 6, L_max = 8, N = B * T_max * C };
    int32_t input_lengths[B], label_lengths[B], labels[B * L_max];
    int n = 0;
    for (int b = 0; b < B; b++) {
        input_lengths[b] = 10 + (b * 7) % 21;
        label_lengths[b] = (b * 5) % (L_max + 1);
        for (int i = 0; i < label_lengths[b]; i++)
            labels[n++] = 1 + (b + i) % (C - 1); /* no repeats: 10 frames suffice */
    }
    ctc_case c = {.input_lengths = input_lengths, .labels = labels,
                  .label_lengths = label_lengths, .B = B, .T_max = T_max, .C = C,
                  .L_max = L_max};
    float *logits = random_f(N, -3, 3, 4);
    double loss[2], per_utt[2][B];
    float *grad[2];
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        grad[t] = take_f(N);
        cr_assert(run_ctc(&loss[t], per_utt[t], grad[t], 1, logits, &c, 2) == LT_OK, "%s",
                  lt_last_error());
    }
    cr_expect(memcmp(&loss[0], &loss[1], sizeof loss[0]) == 0, "loss %.17g vs %.17g", loss[0],
              loss[1]);
    cr_expect(memcmp(per_utt[0], per_utt[1], sizeof per_utt[0]) == 0, "per_utt differs");
    cr_expect(memcmp(grad[0], grad[1], sizeof(float) * N) == 0, "gradients differ");
}

Test(losses, ctc_greedy_decode)
{
    enum { C = 3 };
    const int argmax[] = {0, 1, 1, 0, 1, 2, 2, 0, 0};
    float logits[9 * C] = {0};
    for (int t = 0; t < 9; t++)
        logits[t * C + argmax[t]] = 2;
    int32_t out[9];
    int n = lt_ctc_greedy_decode(out, logits, 9, C);
    cr_expect(n == 3 && out[0] == 1 && out[1] == 1 && out[2] == 2, "decoded %d labels", n);

    const float leading_and_ties[3 * C] = {0, 0, 1, /* 2 */ 0, 0, 1, /* 2 again: merged */
                                           1, 1, 0 /* tie: the first, the blank */};
    n = lt_ctc_greedy_decode(out, leading_and_ties, 3, C);
    cr_expect(n == 1 && out[0] == 2, "decoded %d labels", n);
    const float blanks[2 * C] = {5, 0, 0, 5, 1, 1};
    cr_expect(lt_ctc_greedy_decode(out, blanks, 2, C) == 0);
    cr_expect(lt_ctc_greedy_decode(out, blanks, 0, C) == 0);
}

static long distance(const char *ref, const char *hyp)
{
    int32_t a[16], b[16], work[2 * 17];
    int n_ref = (int)strlen(ref), n_hyp = (int)strlen(hyp);
    cr_assert(n_ref <= 16 && n_hyp <= 16);
    for (int i = 0; i < n_ref; i++)
        a[i] = ref[i];
    for (int i = 0; i < n_hyp; i++)
        b[i] = hyp[i];
    return lt_edit_distance(a, n_ref, b, n_hyp, work);
}

Test(losses, edit_distance)
{
    cr_expect(distance("kitten", "sitting") == 3);
    cr_expect(distance("sitting", "kitten") == 3);
    cr_expect(distance("flaw", "lawn") == 2);
    cr_expect(distance("abc", "cba") == 2);
    cr_expect(distance("same", "same") == 0);
    cr_expect(distance("", "abc") == 3);
    cr_expect(distance("abcd", "") == 4);
    cr_expect(distance("", "") == 0);
}
