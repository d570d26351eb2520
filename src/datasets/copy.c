#include "datasets/copy.h"

lt_status lt_copy_task_init(lt_copy_task *task, int seq_len)
{
    if (seq_len < LT_COPY_MIN_SEQ)
        return lt_fail(LT_E_USAGE, "--seq: the copy task needs a length of at least %d, got %d",
                       LT_COPY_MIN_SEQ, seq_len);
    task->seq_len = seq_len;
    task->n_lo = seq_len / 4;
    task->n_hi = (seq_len - 1) / 2;
    return LT_OK;
}

void lt_copy_batch(const lt_copy_task *task, uint64_t seed, uint64_t first_stream, int batch,
                   int32_t *inputs, int32_t *targets, float *mask)
{
    const int N = task->seq_len;
    for (int b = 0; b < batch; b++) {
        lt_rng rng;
        lt_rng_seed(&rng, seed, first_stream + (uint64_t)b);
        int n = task->n_lo + (int)lt_rng_below(&rng, (uint64_t)(task->n_hi - task->n_lo));
        int32_t *x = inputs + (long)b * N;
        for (int i = 0; i < n; i++)
            x[i] = LT_COPY_FIRST_SYMBOL + (int32_t)lt_rng_below(&rng, LT_COPY_SYMBOLS);
        x[n] = LT_COPY_SEPARATOR;
        for (int i = 0; i < n; i++)
            x[n + 1 + i] = x[i];
        for (int i = 2 * n + 1; i < N; i++)
            x[i] = LT_COPY_PAD;
        int32_t *y = targets + (long)b * N;
        float *m = mask + (long)b * N;
        for (int i = 0; i < N; i++) {
            y[i] = i + 1 < N ? x[i + 1] : LT_COPY_PAD;
            /* The copy occupies positions n+1 .. 2n, predicted from i = n .. 2n-1. */
            m[i] = (i >= n && i <= 2 * n - 1) ? 1.0f : 0.0f;
        }
    }
}
