/* One direction of an LSTM layer over a padded batch (Hochreiter &
 * Schmidhuber 1997, in the form of PyTorch's nn.LSTM):
 *   z_t = W_ih x_t + W_hh h_{t-1} + bias,  split into gates i, f, g, o
 *   i, f, o = sigmoid(.), g = tanh(.)
 *   c_t = f c_{t-1} + i g,  h_t = o tanh(c_t),  h and c start at zero.
 * A bidirectional layer is two directions (reverse = 0 and 1) writing the
 * two halves of one output row, so forward writes a column range of a wider
 * output and backward reads the same range of its gradient.
 *
 * Parameters of one direction, contiguous: W_ih (4H, In), W_hh (4H, H),
 * bias (4H), rows in gate order i, f, g, o. PyTorch keeps two biases
 * (b_ih + b_hh); one suffices, as only their sum enters.
 *
 * Memory is planned by the caller: `saved` (lt_lstm_saved_floats) keeps the
 * gate activations, cell states and previous hidden states for backward;
 * `workspace` (lt_lstm_workspace_bytes, 64-byte aligned as lt_mem_alloc
 * gives) holds the input projection of all steps and the running state.
 * Forward and backward never allocate. Results do not depend on the thread
 * count. */
#ifndef LT_NN_LSTM_H
#define LT_NN_LSTM_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Floats of one direction's parameters: 4H (In + H + 1). */
size_t lt_lstm_param_count(int In, int H);

/* PyTorch's default: every parameter uniform in [-1/sqrt(H), 1/sqrt(H)),
 * the forget bias included (no +1 offset, as the paper's PyTorch baseline
 * had none). With a single bias vector its spread is that of one of
 * PyTorch's two. Deterministic from `seed`. */
void lt_lstm_init_params(float *params, /* (lt_lstm_param_count) */
                         int In, int H, uint64_t seed);

/* Floats forward keeps for backward: gate activations (B, T, 4H), cell
 * states (B, T, H) and the hidden state each step started from (B, T, H). */
size_t lt_lstm_saved_floats(int B, int T, int H);

/* Scratch bytes of forward and backward (the same for both). */
size_t lt_lstm_workspace_bytes(int B, int T, int In, int H);

/* Runs sequence b over its lengths[b] valid steps (lengths NULL: all T):
 * reverse = 0 visits t = 0 .. len-1, reverse = 1 visits t = len-1 .. 0 from
 * a zero state, so padding never enters either direction. Writes h_t into
 * columns [col0, col0 + H) of the output rows (other columns untouched);
 * rows t >= len get zeros there. `saved` may be NULL for inference.
 * Fails with LT_E_INPUT naming b when a length lies outside [0, T], and
 * with LT_E_USAGE for bad sizes or missing buffers; nothing is written
 * then. */
lt_status lt_lstm_forward(float *out,             /* (B, T, ld_out) */
                          int ld_out, int col0,
                          float *saved,           /* (lt_lstm_saved_floats) or NULL */
                          void *workspace,        /* (lt_lstm_workspace_bytes) */
                          const float *in,        /* (B, T, In) */
                          const int32_t *lengths, /* (B) or NULL */
                          const float *params,    /* (lt_lstm_param_count) */
                          int B, int T, int In, int H, int reverse);

/* Adds into d_in (may be NULL, e.g. for the first layer) and d_params the
 * gradients from d_out's columns [col0, col0 + H) of rows t < len; padded
 * rows of d_out are ignored. `saved`, `in`, `lengths` and `params` are
 * those forward used. Fails as forward does, before adding anything. */
lt_status lt_lstm_backward(float *d_in,            /* (B, T, In) or NULL */
                           float *d_params,        /* (lt_lstm_param_count) */
                           void *workspace,        /* (lt_lstm_workspace_bytes) */
                           const float *d_out,     /* (B, T, ld_out) */
                           int ld_out, int col0,
                           const float *saved,     /* (lt_lstm_saved_floats) */
                           const float *in,        /* (B, T, In) */
                           const int32_t *lengths, /* (B) or NULL */
                           const float *params,    /* (lt_lstm_param_count) */
                           int B, int T, int In, int H, int reverse);

#endif
