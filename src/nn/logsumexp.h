/* log sum_i exp(z_i) over a row of floats, shared by the softmax-based
 * losses (cross-entropy, mixture weights, CTC frames). */
#ifndef LT_NN_LOGSUMEXP_H
#define LT_NN_LOGSUMEXP_H

/* Shifted by the row maximum so no exp overflows, summed in double; n > 0.
 * A row with +inf or NaN gives a non-finite result. */
double lt_logsumexp(const float *z, /* (n) */
                    int n);

#endif
