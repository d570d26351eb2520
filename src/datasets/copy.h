/* The synthetic copy task of the paper (sec. 4.1.1): a random prefix of n
 * symbols from 1..10, the separator 0, then the same n symbols again, padded
 * to the sequence length N. n is drawn from [N/4, (N-1)/2), which for N = 128
 * is the paper's [32, 63). A causal model reads the sequence and is scored
 * only on predicting the copied half. */
#ifndef LT_DATASETS_COPY_H
#define LT_DATASETS_COPY_H

#include <stdint.h>

#include "core/rng.h"
#include "core/status.h"

enum {
    LT_COPY_SEPARATOR = 0,
    LT_COPY_FIRST_SYMBOL = 1,
    LT_COPY_SYMBOLS = 10,
    LT_COPY_PAD = 11,
    LT_COPY_VOCAB = 12,
    LT_COPY_MIN_SEQ = 8 /* shortest N with a non-empty range of n */
};

typedef struct lt_copy_task {
    int seq_len;   /* N */
    int n_lo;      /* smallest prefix length, N/4 */
    int n_hi;      /* one past the largest, (N-1)/2 */
} lt_copy_task;

/* LT_E_USAGE naming --seq when N < LT_COPY_MIN_SEQ. */
lt_status lt_copy_task_init(lt_copy_task *task, int seq_len);

/* Fills one batch. inputs[i] is token i; targets[i] is token i+1 (PAD past
 * the end); mask[i] is 1 exactly where targets[i] belongs to the copied
 * half, else 0. Sequence b of a batch draws from stream `first_stream + b`
 * of `seed`, so a batch is fixed by (seed, step) alone. */
void lt_copy_batch(const lt_copy_task *task, uint64_t seed, uint64_t first_stream, int batch,
                   int32_t *inputs /* (batch, N) */, int32_t *targets /* (batch, N) */,
                   float *mask /* (batch, N) */);

#endif
