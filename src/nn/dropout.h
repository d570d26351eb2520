/* Inverted dropout: each element is kept with probability 1 - p and scaled
 * by 1 / (1 - p), so evaluation needs no rescaling (skip the layer then).
 *
 * The mask is a pure function of (seed, step, layer, row, column): row r
 * draws from its own lt_rng stream, so the mask does not depend on the thread
 * count or on how rows are scheduled, and a resumed run redraws the same
 * masks. Give every dropout site of a model its own `layer` id. */
#ifndef LT_NN_DROPOUT_H
#define LT_NN_DROPOUT_H

#include <stdint.h>

#include "core/status.h"

typedef struct lt_dropout_key {
    uint64_t seed;  /* the run's seed */
    uint64_t step;  /* training step (a new mask every step) */
    uint64_t layer; /* which dropout site in the model */
} lt_dropout_key;

/* out = in * mask / (1 - p); mask[i] = 1 for kept elements, 0 for dropped.
 * p = 0 is the identity (all ones mask). `out` may equal `in`. Fails with
 * LT_E_USAGE unless 0 <= p < 1. */
lt_status lt_dropout_forward(float *out,      /* (R, C) */
                             uint8_t *mask,   /* (R, C) saved for backward */
                             const float *in, /* (R, C) */
                             float p, lt_dropout_key key, int R, int C);

/* d_in += d_out * mask / (1 - p), with the mask and p of the forward. */
void lt_dropout_backward(float *d_in,         /* (R, C) */
                         const float *d_out,  /* (R, C) */
                         const uint8_t *mask, /* (R, C) */
                         float p, int R, int C);

#endif
