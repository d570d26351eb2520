/* Discretized mixture of logistics over byte values (the PixelCNN++ output
 * distribution, one byte per position, no coupling between channels).
 *
 * A position has K components and 3K parameters laid out
 *   [K mixture logits | K means | K log scales].
 * Byte x in 0..255 maps to y = x / 127.5 - 1 in [-1, 1] and owns the bin
 * [y - 1/255, y + 1/255]; the bin of 0 extends to -inf and the bin of 255 to
 * +inf, so the 256 probabilities sum to 1:
 *   p(x) = sum_k softmax(logits)_k
 *          * (sigmoid((y + 1/255 - mu_k) / s_k) - sigmoid((y - 1/255 - mu_k) / s_k))
 * with s_k = exp(max(log_scale_k, LT_MOL_MIN_LOG_SCALE)). The clamp keeps
 * bins from becoming infinitely sharp; below it the gradient of a log scale
 * is 0.
 *
 * All arithmetic is in double, in log-sigmoid / softplus form, and the
 * interior bin uses log(sigmoid(a) - sigmoid(b)) = log sigmoid(a)
 * + log sigmoid(-b) + log(1 - exp(b - a)), so finite parameters, however
 * extreme (means far outside [-1, 1], huge log scales), give finite
 * log-probabilities and gradients. Backward recomputes from the parameters:
 * forward saves nothing and nothing is allocated. */
#ifndef LT_NN_MOL_H
#define LT_NN_MOL_H

#include <stdint.h>

#include "core/status.h"

#define LT_MOL_PARAMS(K) (3 * (K))

/* Log scales below this are treated as this value (gradient 0 there). */
#define LT_MOL_MIN_LOG_SCALE (-7.0)

/* nll_sum = sum over positions r with mask[r] != 0 of mask[r] * -log p(targets[r])
 * in nats; counted (may be NULL) = the number of such positions. `mask` may
 * be NULL (every position counts with weight 1); targets of uncounted
 * positions are ignored. Fails with LT_E_INPUT naming the first counted
 * position whose target is outside 0..255, then with LT_E_NUMERIC naming the
 * first counted position with a non-finite parameter. The result does not
 * depend on the thread count. */
lt_status lt_mol_forward(double *nll_sum,         /* scalar */
                         long *counted,           /* scalar or NULL */
                         const float *params,     /* (R, 3K) */
                         const int32_t *targets,  /* (R) */
                         const float *mask,       /* (R) or NULL */
                         int R, int K);

/* d_params += scale * d(sum_r mask[r] * nll_r) / d params; rows with mask 0
 * are left as they are. Checks as forward does, before writing anything. */
lt_status lt_mol_backward(float *d_params,        /* (R, 3K) */
                          const float *params,    /* (R, 3K) */
                          const int32_t *targets, /* (R) */
                          const float *mask,      /* (R) or NULL */
                          int R, int K, float scale);

/* Natural-log probabilities of all 256 byte values for one position (they
 * sum to 1 as probabilities). */
void lt_mol_log_probs(double *logp,        /* (256) */
                      const float *params, /* (3K) */
                      int K);

/* One byte per row, a deterministic function of two uniforms in [0, 1) per
 * row: the first picks the component by the inverse CDF of the softmax
 * weights, the second draws from that component's logistic, which is clamped
 * to [-1, 1] and rounded to the nearest byte. Each bin receives exactly the
 * logistic mass over it, so this samples the discretized mixture exactly. */
void lt_mol_sample(int32_t *out,            /* (R) */
                   const float *params,     /* (R, 3K) */
                   const double *uniforms,  /* (R, 2) */
                   int R, int K);

#endif
