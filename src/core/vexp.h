/* Exponentials that vectorise: libm's expf does not without -ffast-math
 * (which ltbench does not use), and it dominated the softmax forward and
 * the GELU. */
#ifndef LT_CORE_VEXP_H
#define LT_CORE_VEXP_H

#include <stdint.h>

#include "core/lanes.h"

/* exp(x) for x <= 0, written so loops over it vectorise (libm's expf does
 * not without -ffast-math, and it dominated the softmax forward): range
 * reduction x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so n ln2 is
 * exact), the degree-7 Taylor polynomial of e^r (truncation below 1e-8
 * relative), scaled by 2^n through the exponent bits. Every choice is made
 * on integer bit patterns: a floating-point select would keep the loop
 * scalar under the default -ftrapping-math. Measured over every float in
 * [-87.3, 0]: within 1.3 ulp of exp. Below LT_EXP_MIN (where exp(x) <
 * 1.1e-38), including -INFINITY, it returns exactly 0. */
#define LT_EXP_MIN (-87.5f)

typedef union lt_float_bits {
    float value;
    int32_t bits;
} lt_float_bits;

/* x <= 0 clamped at LT_EXP_MIN and split as x = n ln2 + r: 2^n, and
 * e^r - 1 as a polynomial in r without its constant term (so expm1 keeps
 * its relative accuracy near 0); below: all ones where x < LT_EXP_MIN. */
typedef struct lt_exp_parts {
    float scale, em1; /* 2^n, e^r - 1 */
    int32_t below;
} lt_exp_parts;

static inline lt_exp_parts lt_exp_split(float x)
{
    const float log2e = 1.44269504f;
    const float ln2_hi = 0.693359375f;    /* few mantissa bits: n * ln2_hi is exact */
    const float ln2_lo = -2.12194440e-4f; /* ln2 - ln2_hi */
    const float round_shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    lt_float_bits in = {.value = x}, lowest = {.value = LT_EXP_MIN};
    /* negative floats order backwards as integers: all ones when x < lowest */
    int32_t below = -((in.bits < 0) & (in.bits > lowest.bits));
    in.bits = (in.bits & ~below) | (lowest.bits & below);
    /* n = round(x / ln2) >= -126 (a normal 2^n), read from the bits of the
     * shifted sum: no float-to-int conversion, which a NaN or an x past the
     * domain would make undefined */
    lt_float_bits shifted = {.value = in.value * log2e + round_shift};
    int32_t n_int = shifted.bits - 0x4b400000; /* the bits of round_shift */
    float n = shifted.value - round_shift;
    float r = (in.value - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    lt_float_bits scale = {.bits = (int32_t)((uint32_t)(n_int + 127) << 23)};
    return (lt_exp_parts){scale.value, p * r, below};
}

static inline float lt_exp_nonpositive(float x)
{
    lt_exp_parts e = lt_exp_split(x);
    lt_float_bits out = {.value = (e.em1 + 1.0f) * e.scale};
    out.bits &= ~e.below;
    return out.value;
}

/* exp(x) - 1 for x <= 0, accurate near 0 where exp(x) - 1 cancels:
 * 2^n (e^r - 1) + (2^n - 1); -1 below LT_EXP_MIN. */
static inline float lt_expm1_nonpositive(float x)
{
    lt_exp_parts e = lt_exp_split(x);
    lt_float_bits out = {.value = e.scale * e.em1 + (e.scale - 1.0f)}, minus_one = {.value = -1.0f};
    out.bits = (out.bits & ~e.below) | (minus_one.bits & e.below);
    return out.value;
}

/* 1 / (1 + exp(-v)) from exp(-|v|) alone (no overflow; full relative
 * accuracy in both tails down to exp(LT_EXP_MIN), 0 below), choices on bit
 * patterns as above; NaN passes through. */
static inline float lt_sigmoid(float v)
{
    lt_float_bits in = {.value = v}, one = {.value = 1.0f}, num;
    int32_t nan = -((in.bits & INT32_MAX) > 0x7f800000);
    int32_t negative = in.bits >> 31; /* all ones when the sign bit is set */
    lt_float_bits magnitude = {.bits = in.bits & INT32_MAX & ~nan}; /* NaN: work on 0 */
    lt_float_bits e = {.value = lt_exp_nonpositive(-magnitude.value)};
    num.bits = (e.bits & negative) | (one.bits & ~negative);
    lt_float_bits out = {.value = num.value / (1.0f + e.value)};
    out.bits = (out.bits & ~nan) | (in.bits & nan);
    return out.value;
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|), written with
 * expm1 so that it keeps its relative accuracy near 0; NaN passes through. */
static inline float lt_tanh(float x)
{
    lt_float_bits in = {.value = x};
    int32_t nan = -((in.bits & INT32_MAX) > 0x7f800000);
    lt_float_bits magnitude = {.bits = in.bits & INT32_MAX & ~nan}; /* NaN: work on 0 */
    float m = lt_expm1_nonpositive(-2.0f * magnitude.value);
    lt_float_bits out = {.value = -m / (2.0f + m)};
    out.bits = (out.bits & INT32_MAX) | (in.bits & INT32_MIN); /* the sign of x, +0 too */
    out.bits = (out.bits & ~nan) | (in.bits & nan);
    return out.value;
}

/* x[j] = exp(x[j] - max) for j < n (every x[j] <= max), returning their
 * sum in lanes.h's 16 partial sums: the same bits at any vector width.
 * Inlined, so it runs at the width of the code it is inlined into. */
static inline __attribute__((always_inline)) float lt_exp_shifted_sum(float *x, int n, float max)
{
    float part[LT_WIDE] = {0};
    int j = 0;
    for (; j + LT_WIDE <= n; j += LT_WIDE)
        for (int l = 0; l < LT_WIDE; l++) {
            x[j + l] = lt_exp_nonpositive(x[j + l] - max);
            part[l] += x[j + l];
        }
    for (int l = 0; j + l < n; l++) {
        x[j + l] = lt_exp_nonpositive(x[j + l] - max);
        part[l] += x[j + l];
    }
    return lt_wide_total(part);
}

#endif
