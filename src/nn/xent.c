#include "nn/xent.h"

#include <math.h>
#include <stddef.h>

#include "nn/logsumexp.h"

/* Rows are summed in this many fixed chunks, then the chunks in order: the
 * loss is the same number whatever the thread count. */
#define CHUNKS 64

static int counts(const float *mask, int r) { return mask == NULL || mask[r] != 0.0f; }

/* Checks counted targets and returns K, the number of counted positions. */
static lt_status check_targets(long *counted, const int32_t *targets, const float *mask, int R,
                               int V)
{
    long k = 0;
    for (int r = 0; r < R; r++) {
        if (!counts(mask, r))
            continue;
        if (targets[r] < 0 || targets[r] >= V)
            return lt_fail(LT_E_INPUT,
                           "cross-entropy targets: id %d at position %d is outside [0, %d)",
                           (int)targets[r], r, V);
        k++;
    }
    *counted = k;
    return LT_OK;
}

lt_status lt_xent_forward(double *loss, long *correct, long *counted, const float *logits,
                          const int32_t *targets, const float *mask, int R, int V)
{
    LT_ASSERT(R >= 0 && V > 0);
    long k = 0;
    LT_TRY(check_targets(&k, targets, mask, R, V));
    double chunk_loss[CHUNKS] = {0};
    long chunk_correct[CHUNKS] = {0};
    int chunk_bad[CHUNKS]; /* first row with a non-finite loss, or -1 */
#pragma omp parallel for schedule(static) if ((long)R * V > 16384)
    for (int chunk = 0; chunk < CHUNKS; chunk++) {
        int r0 = (int)((long)R * chunk / CHUNKS), r1 = (int)((long)R * (chunk + 1) / CHUNKS);
        chunk_bad[chunk] = -1;
        for (int r = r0; r < r1; r++) {
            if (!counts(mask, r))
                continue;
            const float *z = logits + (size_t)r * V;
            double row_loss = lt_logsumexp(z, V) - z[targets[r]];
            if (!isfinite(row_loss) && chunk_bad[chunk] < 0)
                chunk_bad[chunk] = r;
            chunk_loss[chunk] += (mask ? mask[r] : 1.0) * row_loss;
            int argmax = 0; /* the first maximum on ties */
            for (int v = 1; v < V; v++)
                if (z[v] > z[argmax])
                    argmax = v;
            chunk_correct[chunk] += argmax == targets[r];
        }
    }
    double total = 0;
    long right = 0;
    for (int chunk = 0; chunk < CHUNKS; chunk++) {
        if (chunk_bad[chunk] >= 0)
            return lt_fail(LT_E_NUMERIC,
                           "cross-entropy: loss at position %d is not finite (NaN or infinite "
                           "logits)",
                           chunk_bad[chunk]);
        total += chunk_loss[chunk];
        right += chunk_correct[chunk];
    }
    *loss = k > 0 ? total / k : 0.0;
    if (correct)
        *correct = right;
    if (counted)
        *counted = k;
    return LT_OK;
}

lt_status lt_xent_backward(float *d_logits, const float *logits, const int32_t *targets,
                           const float *mask, int R, int V)
{
    LT_ASSERT(R >= 0 && V > 0);
    long k = 0;
    LT_TRY(check_targets(&k, targets, mask, R, V));
    if (k == 0)
        return LT_OK;
#pragma omp parallel for schedule(static) if ((long)R * V > 16384)
    for (int r = 0; r < R; r++) {
        if (!counts(mask, r))
            continue;
        const float *z = logits + (size_t)r * V;
        float *dz = d_logits + (size_t)r * V;
        double weight = (mask ? mask[r] : 1.0) / k;
        double lse = lt_logsumexp(z, V);
        for (int v = 0; v < V; v++)
            dz[v] += (float)((exp((double)z[v] - lse) - (v == targets[r])) * weight);
    }
    return LT_OK;
}
