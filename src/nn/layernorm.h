/* Layer normalisation over the last dimension:
 * out = (in - mean) / sqrt(var + eps) * gamma + beta, with the biased
 * variance of each row and eps = LT_LAYERNORM_EPS (1e-5, PyTorch's default). */
#ifndef LT_NN_LAYERNORM_H
#define LT_NN_LAYERNORM_H

#define LT_LAYERNORM_EPS 1e-5f

/* Normalises each row. `mean` and `rstd` (1 / sqrt(var + eps)) receive the
 * row statistics backward needs; both may be NULL for inference. Row
 * statistics are accumulated in double. `out` may equal `in`. */
void lt_layernorm_forward(float *out,         /* (R, C) */
                          float *mean,        /* (R) or NULL */
                          float *rstd,        /* (R) or NULL */
                          const float *in,    /* (R, C) */
                          const float *gamma, /* (C) */
                          const float *beta,  /* (C) */
                          int R, int C);

/* The same, shared by the threads of the enclosing parallel region (every
 * one calls it; rows work-shared, a barrier at the end); on the calling
 * thread alone outside a region. */
void lt_layernorm_forward_team(float *out, float *mean, float *rstd, const float *in,
                               const float *gamma, const float *beta, int R, int C);

/* Adds the gradients into d_in, d_gamma and d_beta (each may be NULL to skip
 * it), given the forward input and the saved mean and rstd. */
void lt_layernorm_backward(float *d_in,        /* (R, C) or NULL */
                           float *d_gamma,     /* (C) or NULL */
                           float *d_beta,      /* (C) or NULL */
                           const float *d_out, /* (R, C) */
                           const float *in,    /* (R, C) */
                           const float *mean,  /* (R) */
                           const float *rstd,  /* (R) */
                           const float *gamma, /* (C) */
                           int R, int C);

#endif
