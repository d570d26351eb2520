#include "nn/elementwise.h"

#include <math.h>

#include "core/status.h"

/* Below this many elements a parallel region costs more than it saves. */
#define PARALLEL_MIN 32768

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_C 0.044715f

void lt_gelu_forward(float *out, const float *in, long n)
{
    LT_ASSERT(n >= 0);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (long i = 0; i < n; i++) {
        float x = in[i];
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_K * (x + GELU_C * x * x * x)));
    }
}

void lt_gelu_backward(float *d_in, const float *d_out, const float *in, long n)
{
    LT_ASSERT(n >= 0);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (long i = 0; i < n; i++) {
        float x = in[i];
        float t = tanhf(GELU_K * (x + GELU_C * x * x * x));
        float dt = GELU_K * (1.0f + 3.0f * GELU_C * x * x) * (1.0f - t * t);
        d_in[i] += d_out[i] * (0.5f * (1.0f + t) + 0.5f * x * dt);
    }
}

void lt_relu_forward(float *out, const float *in, long n)
{
    LT_ASSERT(n >= 0);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (long i = 0; i < n; i++)
        out[i] = in[i] < 0.0f ? 0.0f : in[i]; /* NaN passes through */
}

void lt_relu_backward(float *d_in, const float *d_out, const float *in_or_out, long n)
{
    LT_ASSERT(n >= 0);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (long i = 0; i < n; i++)
        if (in_or_out[i] > 0.0f)
            d_in[i] += d_out[i];
}

void lt_add(float *out, const float *a, const float *b, long n)
{
    LT_ASSERT(n >= 0);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (long i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}
