#include "nn/mol.h"

#include <math.h>
#include <stddef.h>

#include "nn/logsumexp.h"

/* Rows are summed in this many fixed chunks, then the chunks in order: the
 * loss is the same number whatever the thread count. */
#define CHUNKS 64

#define HALF_BIN (1.0 / 255.0)
#define LAST_BYTE 255

static int counts(const float *mask, int r) { return mask == NULL || mask[r] != 0.0f; }

static double clamp_log_scale(float raw)
{
    return raw < LT_MOL_MIN_LOG_SCALE ? LT_MOL_MIN_LOG_SCALE : (double)raw;
}

static double sigmoid(double z)
{
    if (z >= 0)
        return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

/* log(1 + exp(z)) without overflow; log sigmoid(z) = -softplus(-z). */
static double softplus(double z) { return fmax(z, 0.0) + log1p(exp(-fabs(z))); }

/* log(1 - exp(-d)) for the interior bin's width d = (2/255) / s > 0. For tiny
 * d (huge scales, where exp(-log_scale) may underflow to 0) it is
 * log(d) - d/2 to within d^2/24, with log(d) taken from log_scale directly. */
static double log_one_minus_exp(double d, double log_scale)
{
    if (d < 1e-8)
        return log(2.0 * HALF_BIN) - log_scale - 0.5 * d;
    return d > M_LN2 ? log1p(-exp(-d)) : log(-expm1(-d));
}

/* d / (exp(d) - 1), which tends to 1 as d -> 0. */
static double d_over_expm1(double d) { return d < 1e-8 ? 1.0 - 0.5 * d : d / expm1(d); }

/* log P(byte x) under one logistic component, and when d_mean is not NULL
 * the derivatives by the mean and by the (clamped) log scale. With
 * a = (y + 1/255 - mean) / s and b = (y - 1/255 - mean) / s, each case's
 * derivative sums are written so that large terms cancel analytically
 * rather than in floating point. */
static double bin_log_prob(int x, double mean, double log_scale, double *d_mean,
                           double *d_log_scale)
{
    double inv_s = exp(-log_scale);
    double centred = x / 127.5 - 1.0 - mean;
    double a = inv_s * (centred + HALF_BIN), b = inv_s * (centred - HALF_BIN);
    double logp, by_a_plus_b, by_log_scale; /* dlogp/da + dlogp/db, a dlogp/da + b dlogp/db */
    if (x == 0) {
        logp = -softplus(-a); /* log sigmoid(a) */
        by_a_plus_b = sigmoid(-a);
        by_log_scale = a * by_a_plus_b;
    } else if (x == LAST_BYTE) {
        logp = -softplus(b); /* log(1 - sigmoid(b)) */
        by_a_plus_b = -sigmoid(b);
        by_log_scale = b * by_a_plus_b;
    } else {
        double d = 2.0 * HALF_BIN * inv_s; /* a - b, without the subtraction */
        logp = -softplus(-a) - softplus(b) + log_one_minus_exp(d, log_scale);
        double sa = sigmoid(-a), sb = sigmoid(b);
        /* the log(1 - exp(-d)) term adds +-1/expm1(d) to the a and b
         * derivatives: it cancels in the sum and leaves d/expm1(d) here */
        by_a_plus_b = sa - sb;
        by_log_scale = a * sa - b * sb + d_over_expm1(d);
    }
    if (d_mean) {
        *d_mean = -inv_s * by_a_plus_b;   /* da/dmean = db/dmean = -1/s */
        *d_log_scale = -by_log_scale;     /* da/dlog_scale = -a, likewise b */
    }
    return logp;
}

/* log p(x) for one position; `mix_lse` is lt_logsumexp of its logits. A
 * running log-sum-exp keeps it to one pass without per-component storage. */
static double row_log_prob(const float *p, int x, int K, double mix_lse)
{
    double m = -INFINITY, sum = 0;
    for (int k = 0; k < K; k++) {
        double q = p[k] - mix_lse + bin_log_prob(x, p[K + k], clamp_log_scale(p[2 * K + k]),
                                                 NULL, NULL);
        if (q > m) {
            sum = sum * exp(m - q) + 1.0;
            m = q;
        } else {
            sum += exp(q - m);
        }
    }
    return m + log(sum);
}

/* Checks the counted rows (targets first, then finiteness) and returns K,
 * the number of counted rows. */
static lt_status check_rows(long *counted, const float *params, const int32_t *targets,
                            const float *mask, int R, int K)
{
    long n = 0;
    for (int r = 0; r < R; r++) {
        if (!counts(mask, r))
            continue;
        if (targets[r] < 0 || targets[r] > LAST_BYTE)
            return lt_fail(LT_E_INPUT,
                           "mixture of logistics targets: byte %d at position %d is outside "
                           "0..255",
                           (int)targets[r], r);
        n++;
    }
    for (int r = 0; r < R; r++) {
        if (!counts(mask, r))
            continue;
        const float *p = params + (size_t)r * LT_MOL_PARAMS(K);
        for (int i = 0; i < LT_MOL_PARAMS(K); i++)
            if (!isfinite(p[i]))
                return lt_fail(LT_E_NUMERIC,
                               "mixture of logistics: parameter %d of position %d is not "
                               "finite",
                               i, r);
    }
    *counted = n;
    return LT_OK;
}

lt_status lt_mol_forward(double *nll_sum, long *counted, const float *params,
                         const int32_t *targets, const float *mask, int R, int K)
{
    LT_ASSERT(R >= 0 && K > 0);
    long n = 0;
    LT_TRY(check_rows(&n, params, targets, mask, R, K));
    double chunk_sum[CHUNKS] = {0};
#pragma omp parallel for schedule(static) if ((long)R * K > 4096)
    for (int chunk = 0; chunk < CHUNKS; chunk++) {
        int r0 = (int)((long)R * chunk / CHUNKS), r1 = (int)((long)R * (chunk + 1) / CHUNKS);
        for (int r = r0; r < r1; r++) {
            if (!counts(mask, r))
                continue;
            const float *p = params + (size_t)r * LT_MOL_PARAMS(K);
            double nll = -row_log_prob(p, targets[r], K, lt_logsumexp(p, K));
            chunk_sum[chunk] += (mask ? mask[r] : 1.0) * nll;
        }
    }
    double total = 0;
    for (int chunk = 0; chunk < CHUNKS; chunk++)
        total += chunk_sum[chunk];
    *nll_sum = total;
    if (counted)
        *counted = n;
    return LT_OK;
}

lt_status lt_mol_backward(float *d_params, const float *params, const int32_t *targets,
                          const float *mask, int R, int K, float scale)
{
    LT_ASSERT(R >= 0 && K > 0);
    long n = 0;
    LT_TRY(check_rows(&n, params, targets, mask, R, K));
#pragma omp parallel for schedule(static) if ((long)R * K > 4096)
    for (int r = 0; r < R; r++) {
        if (!counts(mask, r))
            continue;
        const float *p = params + (size_t)r * LT_MOL_PARAMS(K);
        float *dp = d_params + (size_t)r * LT_MOL_PARAMS(K);
        double weight = (double)scale * (mask ? mask[r] : 1.0);
        int x = targets[r];
        double mix_lse = lt_logsumexp(p, K);
        /* second pass over the components, now that log p(x) is known:
         * responsibility w_k = pi_k p_k(x) / p(x), and
         * d(-log p)/d logit_k = pi_k - w_k, d(-log p)/d theta_k = -w_k dlog p_k/d theta_k */
        double logp = row_log_prob(p, x, K, mix_lse);
        for (int k = 0; k < K; k++) {
            double d_mean, d_log_scale;
            double log_pi = p[k] - mix_lse;
            double lpk = bin_log_prob(x, p[K + k], clamp_log_scale(p[2 * K + k]), &d_mean,
                                      &d_log_scale);
            double w = exp(log_pi + lpk - logp);
            dp[k] += (float)(weight * (exp(log_pi) - w));
            dp[K + k] += (float)(weight * -w * d_mean);
            if (p[2 * K + k] >= LT_MOL_MIN_LOG_SCALE)
                dp[2 * K + k] += (float)(weight * -w * d_log_scale);
        }
    }
    return LT_OK;
}

void lt_mol_log_probs(double *logp, const float *params, int K)
{
    LT_ASSERT(K > 0);
    double mix_lse = lt_logsumexp(params, K);
    for (int x = 0; x <= LAST_BYTE; x++)
        logp[x] = row_log_prob(params, x, K, mix_lse);
}

/* The component whose cumulative softmax weight first exceeds u. Rounding
 * can leave the total just below 1: then the last component with weight. */
static int pick_component(const float *logits, int K, double u)
{
    double mix_lse = lt_logsumexp(logits, K), cumulative = 0;
    int last = 0;
    for (int k = 0; k < K; k++) {
        double w = exp(logits[k] - mix_lse);
        if (w <= 0)
            continue;
        cumulative += w;
        last = k;
        if (u < cumulative)
            return k;
    }
    return last;
}

/* The byte drawn from one position's mixture with uniforms u[0] (the
 * component) and u[1] (the value within it). */
static int32_t sample_row(const float *p, const double *u, int K)
{
    int k = pick_component(p, K, u[0]);
    if (u[1] <= 0) /* logit(0) = -inf: the bottom of the first bin */
        return 0;
    double logit = log(u[1]) - log1p(-u[1]);
    /* logit 0 is the mean itself, even when exp(log scale) overflows */
    double y = logit == 0 ? (double)p[K + k]
                          : p[K + k] + exp(clamp_log_scale(p[2 * K + k])) * logit;
    if (!(y > -1.0))
        return 0;
    if (y >= 1.0)
        return LAST_BYTE;
    return (int32_t)floor((y + 1.0) * 127.5 + 0.5);
}

/* Below this many components a sampling pass runs on the calling thread
 * with no parallel region: a generation step samples a few positions, and
 * even an inactive region ends at a barrier that costs a system call. */
#define SAMPLE_PARALLEL_MIN 4096

void lt_mol_sample(int32_t *out, const float *params, const double *uniforms, int R, int K)
{
    LT_ASSERT(R >= 0 && K > 0);
    if ((long)R * K <= SAMPLE_PARALLEL_MIN) {
        for (int r = 0; r < R; r++)
            out[r] = sample_row(params + (size_t)r * LT_MOL_PARAMS(K), uniforms + 2 * r, K);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int r = 0; r < R; r++)
        out[r] = sample_row(params + (size_t)r * LT_MOL_PARAMS(K), uniforms + 2 * r, K);
}
