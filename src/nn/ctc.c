#include "nn/ctc.h"

#include <math.h>
#include <omp.h>

#include "core/threads.h"
#include "nn/logsumexp.h"

/* Workspace layout: a header of B losses and B label offsets, then one slice
 * per thread holding
 *   alpha  (T_max, S_max)   forward log-probabilities, S_max = 2 L_max + 1
 *   beta   (2, S_max)       two rows: backward runs frame by frame
 *   lse    (T_max)          each frame's log-softmax normaliser
 *   by_class (C)            a frame's log occupancy summed per class
 * Slices are whole cache lines so threads do not share one. */

static size_t round_line(size_t bytes) { return (bytes + 63) / 64 * 64; }

static size_t header_bytes(int B)
{
    return round_line((size_t)B * (sizeof(double) + sizeof(long)));
}

static size_t slice_bytes(int T_max, int L_max, int C)
{
    size_t S = 2 * (size_t)L_max + 1;
    return round_line(sizeof(double) * ((size_t)T_max * S + 2 * S + (size_t)T_max + (size_t)C));
}

size_t lt_ctc_workspace_bytes(int B, int T_max, int L_max, int C, int threads)
{
    LT_ASSERT(B >= 0 && T_max >= 0 && L_max >= 0 && C > 1);
    if (threads < 1)
        threads = lt_threads_get();
    int slices = threads < B ? threads : B;
    return header_bytes(B) + (size_t)slices * slice_bytes(T_max, L_max, C);
}

/* log(exp(a) + exp(b)), exact for -inf operands. */
static double log_add(double a, double b)
{
    if (a < b) {
        double t = a;
        a = b;
        b = t;
    }
    if (b == -INFINITY)
        return a;
    return a + log1p(exp(b - a));
}

/* The class of augmented state s: blanks at even states, labels between. */
static int state_class(const int32_t *labels, int s) { return s % 2 ? labels[s / 2] : 0; }

/* A label state may also be entered from two states back, skipping the
 * blank, unless it repeats the label before it. */
static int can_skip(const int32_t *labels, int s)
{
    return s % 2 == 1 && s >= 3 && labels[s / 2] != labels[s / 2 - 1];
}

/* Adjacent repeated labels: each needs a blank frame between the two. */
static int repeats(const int32_t *labels, int L)
{
    int n = 0;
    for (int i = 1; i < L; i++)
        n += labels[i] == labels[i - 1];
    return n;
}

static lt_status check_batch(long *offsets, const float *logits, const int32_t *input_lengths,
                             const int32_t *labels, const int32_t *label_lengths, int B,
                             int T_max, int C, int L_max)
{
    long offset = 0;
    for (int b = 0; b < B; b++) {
        int T = input_lengths[b], L = label_lengths[b];
        if (T < 0 || T > T_max)
            return lt_fail(LT_E_INPUT, "CTC utterance %d: input length %d is outside 0..%d", b,
                           T, T_max);
        if (L < 0 || L > L_max)
            return lt_fail(LT_E_INPUT, "CTC utterance %d: label length %d is outside 0..%d", b,
                           L, L_max);
        const int32_t *lab = labels + offset;
        for (int i = 0; i < L; i++)
            if (lab[i] < 1 || lab[i] >= C)
                return lt_fail(LT_E_INPUT,
                               "CTC utterance %d: label %d at index %d is outside 1..%d (0 is "
                               "the blank)",
                               b, (int)lab[i], i, C - 1);
        int rep = repeats(lab, L);
        if (T < L + rep)
            return lt_fail(LT_E_INPUT,
                           "CTC utterance %d: input length %d cannot align label length %d "
                           "(%d adjacent repeats need a blank between them: at least %d "
                           "frames)",
                           b, T, L, rep, L + rep);
        const float *x = logits + (size_t)b * T_max * C;
        for (long i = 0; i < (long)T * C; i++)
            if (!isfinite(x[i]))
                return lt_fail(LT_E_NUMERIC,
                               "CTC utterance %d: logit of class %d at frame %d is not finite", b,
                               (int)(i % C), (int)(i / C));
        offsets[b] = offset;
        offset += L;
    }
    return LT_OK;
}

/* -log p(labels | x) for one utterance of T >= 1 frames, and the gradient
 * added into d (T, C) scaled by `scale` when d is not NULL. */
static double utterance(float *d, double scale, double *slice, const float *x,
                        const int32_t *labels, int T, int L, int C, int L_max, int T_max)
{
    int S = 2 * L + 1, S_max = 2 * L_max + 1;
    double *alpha = slice, *beta = alpha + (size_t)T_max * S_max, *lse = beta + 2 * S_max;
    double *by_class = lse + T_max;
#define LOGP(t, c) ((double)x[(size_t)(t) * C + (c)] - lse[t])
    for (int t = 0; t < T; t++)
        lse[t] = lt_logsumexp(x + (size_t)t * C, C);

    for (int s = 0; s < S; s++)
        alpha[s] = s < 2 ? LOGP(0, state_class(labels, s)) : -INFINITY;
    for (int t = 1; t < T; t++) {
        const double *prev = alpha + (size_t)(t - 1) * S;
        double *cur = alpha + (size_t)t * S;
        for (int s = 0; s < S; s++) {
            double in = prev[s];
            if (s >= 1)
                in = log_add(in, prev[s - 1]);
            if (can_skip(labels, s))
                in = log_add(in, prev[s - 2]);
            cur[s] = in + LOGP(t, state_class(labels, s));
        }
    }
    const double *last = alpha + (size_t)(T - 1) * S;
    double logp = S > 1 ? log_add(last[S - 1], last[S - 2]) : last[0];
    if (d == NULL)
        return -logp;

    /* beta[t][s] includes frame t's emission, as alpha does, so the paths
     * through (t, s) have log-probability alpha + beta - log y_t(s). */
    double *next = beta, *cur = beta + S_max;
    for (int t = T - 1; t >= 0; t--) {
        for (int s = 0; s < S; s++) {
            double in;
            if (t == T - 1) {
                in = s >= S - 2 ? 0.0 : -INFINITY;
            } else {
                in = next[s];
                if (s + 1 < S)
                    in = log_add(in, next[s + 1]);
                if (s + 2 < S && can_skip(labels, s + 2))
                    in = log_add(in, next[s + 2]);
            }
            cur[s] = in + LOGP(t, state_class(labels, s));
        }
        for (int c = 0; c < C; c++)
            by_class[c] = -INFINITY;
        const double *a = alpha + (size_t)t * S;
        for (int s = 0; s < S; s++) {
            int c = state_class(labels, s);
            by_class[c] = log_add(by_class[c], a[s] + cur[s] - LOGP(t, c));
        }
        /* d(-log p)/dx_t(c) = softmax_t(c) - occupancy_t(c) / p */
        float *dt = d + (size_t)t * C;
        for (int c = 0; c < C; c++)
            dt[c] += (float)(scale * (exp(LOGP(t, c)) - exp(by_class[c] - logp)));
        double *swap = next;
        next = cur;
        cur = swap;
    }
#undef LOGP
    return -logp;
}

lt_status lt_ctc_loss(double *loss_sum, double *per_utt, float *d_logits, float scale,
                      void *workspace, const float *logits, const int32_t *input_lengths,
                      const int32_t *labels, const int32_t *label_lengths, int B, int T_max,
                      int C, int L_max)
{
    LT_ASSERT(B >= 0 && T_max >= 0 && L_max >= 0 && C > 1);
    double *losses = workspace;
    long *offsets = (long *)(losses + B);
    LT_TRY(check_batch(offsets, logits, input_lengths, labels, label_lengths, B, T_max, C,
                       L_max));
    char *slices = (char *)workspace + header_bytes(B);
    size_t slice = slice_bytes(T_max, L_max, C);
    int threads = lt_threads_get() < B ? lt_threads_get() : B;
    if (threads < 1)
        threads = 1;
    /* Utterances differ in length, so they are handed out one at a time;
     * each is computed whole by one thread, in that thread's slice. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int b = 0; b < B; b++) {
        size_t at = (size_t)b * T_max * C;
        if (input_lengths[b] == 0) { /* no frames, no labels: p = 1 */
            losses[b] = 0;
            continue;
        }
        losses[b] = utterance(d_logits ? d_logits + at : NULL, scale,
                              (double *)(slices + (size_t)omp_get_thread_num() * slice),
                              logits + at, labels + offsets[b], input_lengths[b],
                              label_lengths[b], C, L_max, T_max);
    }
    double total = 0;
    for (int b = 0; b < B; b++) {
        total += losses[b];
        if (per_utt)
            per_utt[b] = losses[b];
    }
    *loss_sum = total;
    return LT_OK;
}

int lt_ctc_greedy_decode(int32_t *out, const float *logits, int T, int C)
{
    LT_ASSERT(T >= 0 && C > 0);
    int n = 0, previous = 0; /* a leading label is kept: the path starts "after a blank" */
    for (int t = 0; t < T; t++) {
        const float *z = logits + (size_t)t * C;
        int best = 0;
        for (int c = 1; c < C; c++)
            if (z[c] > z[best])
                best = c;
        if (best != 0 && best != previous)
            out[n++] = best;
        previous = best;
    }
    return n;
}

long lt_edit_distance(const int32_t *ref, int n_ref, const int32_t *hyp, int n_hyp,
                      int32_t *work)
{
    LT_ASSERT(n_ref >= 0 && n_hyp >= 0);
    /* Two rows of the DP table over hyp prefixes: prev for ref[0..i), cur
     * for ref[0..i]. */
    int32_t *prev = work, *cur = work + n_hyp + 1;
    for (int j = 0; j <= n_hyp; j++)
        prev[j] = j;
    for (int i = 1; i <= n_ref; i++) {
        cur[0] = i;
        for (int j = 1; j <= n_hyp; j++) {
            int32_t best = prev[j - 1] + (ref[i - 1] != hyp[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        int32_t *swap = prev;
        prev = cur;
        cur = swap;
    }
    return prev[n_hyp];
}
