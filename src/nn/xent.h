/* Softmax cross-entropy over class logits with integer targets and a
 * per-position mask (the copy task's loss: only some positions count).
 *
 * With w_r = mask[r] and K = the number of positions where mask[r] != 0:
 *   loss = sum_r w_r * (logsumexp(logits[r]) - logits[r][targets[r]]) / K
 * For a 0/1 mask this is the mean over the counted positions. When K = 0 the
 * loss is 0 and the gradient is 0 (nothing to learn from). Targets of
 * positions with mask 0 are ignored, so padding may carry any id (e.g. -1).
 * The softmax subtracts the row maximum and sums in double.
 *
 * Backward recomputes the softmax from the logits, so forward saves
 * nothing. */
#ifndef LT_NN_XENT_H
#define LT_NN_XENT_H

#include <stdint.h>

#include "core/status.h"

/* Computes the loss and, when `correct` is not NULL, the number of counted
 * positions whose argmax (first on ties) equals the target, and when
 * `counted` is not NULL, K, so accuracy = correct / counted. `mask` may be
 * NULL (every position counts with weight 1). Fails with LT_E_INPUT naming
 * the first counted position whose target is outside [0, V), and with
 * LT_E_NUMERIC naming the first counted row whose loss is not finite (NaN or
 * infinite logits). The result does not depend on the thread count. */
lt_status lt_xent_forward(double *loss,           /* scalar */
                          long *correct,          /* scalar or NULL */
                          long *counted,          /* scalar or NULL */
                          const float *logits,    /* (R, V) */
                          const int32_t *targets, /* (R) */
                          const float *mask,      /* (R) or NULL */
                          int R, int V);

/* d_logits += (softmax(logits) - onehot(targets)) * mask / K; rows with
 * mask 0 are left as they are. Targets are checked as in forward. */
lt_status lt_xent_backward(float *d_logits,        /* (R, V) */
                           const float *logits,    /* (R, V) */
                           const int32_t *targets, /* (R) */
                           const float *mask,      /* (R) or NULL */
                           int R, int V);

#endif
