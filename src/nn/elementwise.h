/* Elementwise layers over n floats of any shape: activations and the
 * residual add. Forwards may run in place (out == in); backwards add into
 * d_in, which must not overlap d_out. */
#ifndef LT_NN_ELEMENTWISE_H
#define LT_NN_ELEMENTWISE_H

/* GELU, tanh approximation (Hendrycks & Gimpel 2016, as in BERT and GPT-2):
 * gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as
 * the equal x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))). */
void lt_gelu_forward(float *out,      /* (n) */
                     const float *in, /* (n) */
                     long n);

/* d_in += d_out * gelu'(in). Needs the forward INPUT, so a caller that
 * trains must not run the forward in place over it. */
void lt_gelu_backward(float *d_in,        /* (n) */
                      const float *d_out, /* (n) */
                      const float *in,    /* (n) forward input */
                      long n);

/* relu(x) = max(x, 0). */
void lt_relu_forward(float *out,      /* (n) */
                     const float *in, /* (n) */
                     long n);

/* d_in += d_out where the unit was active. `in_or_out` may be the forward
 * input or its output (x > 0 exactly when relu(x) > 0), so an in-place
 * forward still leaves what backward needs. The derivative at 0 is 0. */
void lt_relu_backward(float *d_in,            /* (n) */
                      const float *d_out,     /* (n) */
                      const float *in_or_out, /* (n) */
                      long n);

/* sigmoid(x) = 1 / (1 + exp(-x)), in [0, 1] (a gate). */
void lt_sigmoid_forward(float *out, const float *in, long n);

/* d_in += d_out * sigmoid(x) sigmoid(-x): from the forward INPUT, since
 * 1 - sigmoid(x) cancels for large x. */
void lt_sigmoid_backward(float *d_in, const float *d_out, const float *in, long n);

/* log sigmoid(x) = -softplus(-x) = min(x, 0) - log1p(exp(-|x|)), <= 0 and
 * finite for every finite x (a decay given as its logarithm; log of the
 * sigmoid would give -inf once sigmoid underflows). */
void lt_log_sigmoid_forward(float *out, const float *in, long n);

/* d_in += d_out * sigmoid(-x), from the forward input. */
void lt_log_sigmoid_backward(float *d_in, const float *d_out, const float *in, long n);

/* out = a + b (a residual connection); out may equal a or b. Its backward
 * is adding d_out into both d_a and d_b, for which lt_add serves again. */
void lt_add(float *out,     /* (n) */
            const float *a, /* (n) */
            const float *b, /* (n) */
            long n);

/* lt_gelu_forward, lt_relu_forward and lt_add shared by the threads of the
 * enclosing parallel region (every one calls them; elements work-shared, a
 * barrier at the end); on the calling thread alone outside a region. */
void lt_gelu_forward_team(float *out, const float *in, long n);
void lt_relu_forward_team(float *out, const float *in, long n);
void lt_add_team(float *out, const float *a, const float *b, long n);

/* The same three, and the two gates' forwards, on the calling thread
 * alone, inside a parallel region or not, with no barrier: a thread's pass
 * over the part of a team's output it computed itself. The same bits as
 * the others, element by element. */
void lt_gelu_forward_own(float *out, const float *in, long n);
void lt_relu_forward_own(float *out, const float *in, long n);
void lt_add_own(float *out, const float *a, const float *b, long n);
void lt_sigmoid_forward_own(float *out, const float *in, long n);
void lt_log_sigmoid_forward_own(float *out, const float *in, long n);

#endif
