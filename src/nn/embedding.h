/* Token embedding: row r of the output is row tokens[r] of the table. */
#ifndef LT_NN_EMBEDDING_H
#define LT_NN_EMBEDDING_H

#include <stdint.h>

#include "core/status.h"

/* Checks that every token id lies in [0, V); LT_E_INPUT naming the first bad
 * id and its position otherwise. `what` names the tensor in the message
 * (e.g. "embedding tokens"). */
lt_status lt_embedding_check_ids(const int32_t *tokens, /* (R) */
                                 int R, int V, const char *what);

/* out[r] = table[tokens[r]]. Ids are checked first, so on LT_E_INPUT `out`
 * is untouched. */
lt_status lt_embedding_forward(float *out,            /* (R, C) */
                               const int32_t *tokens, /* (R) */
                               const float *table,    /* (V, C) */
                               int R, int V, int C);

/* The same into rows of width ld >= C: columns [0, C) of each row written,
 * the others untouched (an input beside its position encoding). */
lt_status lt_embedding_forward_strided(float *out, /* (R, ld) */
                                       int ld, const int32_t *tokens, const float *table, int R,
                                       int V, int C);

/* d_table[tokens[r]] += d_out[r] for every r (a scatter-add; repeated ids
 * accumulate). Threads own blocks of columns, so there are no races and the
 * sums are the same for any thread count. Ids are checked as in forward. */
lt_status lt_embedding_backward(float *d_table,        /* (V, C) */
                                const float *d_out,    /* (R, C) */
                                const int32_t *tokens, /* (R) */
                                int R, int V, int C);

#endif
