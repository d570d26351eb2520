/* Exponentials that vectorise: libm's expf does not without -ffast-math
 * (which ltbench does not use), and it dominated the softmax forward and
 * the GELU. */
#ifndef LT_CORE_VEXP_H
#define LT_CORE_VEXP_H

#include <stdint.h>

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

static inline float lt_exp_nonpositive(float x)
{
    const float log2e = 1.44269504f;
    const float ln2_hi = 0.693359375f;    /* few mantissa bits: n * ln2_hi is exact */
    const float ln2_lo = -2.12194440e-4f; /* ln2 - ln2_hi */
    const float round_shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    lt_float_bits in = {.value = x}, lowest = {.value = LT_EXP_MIN};
    /* negative floats order backwards as integers: all ones when x < lowest */
    int32_t below = -((in.bits < 0) & (in.bits > lowest.bits));
    in.bits = (in.bits & ~below) | (lowest.bits & below);
    float n = (in.value * log2e + round_shift) - round_shift; /* >= -126: a normal 2^n */
    float r = (in.value - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    lt_float_bits scale = {.bits = ((int32_t)n + 127) * (1 << 23)};
    lt_float_bits out = {.value = p * scale.value};
    out.bits &= ~below;
    return out.value;
}

/* 1 / (1 + exp(-v)) from exp(-|v|) alone (no overflow, full relative
 * accuracy in both tails), choices on bit patterns as above; a NaN gives a
 * number, so callers that must pass NaN through multiply by v's input. */
static inline float lt_sigmoid(float v)
{
    lt_float_bits in = {.value = v}, one = {.value = 1.0f}, num;
    int32_t negative = in.bits >> 31; /* all ones when the sign bit is set */
    lt_float_bits magnitude = {.bits = in.bits & INT32_MAX};
    lt_float_bits e = {.value = lt_exp_nonpositive(-magnitude.value)};
    num.bits = (e.bits & negative) | (one.bits & ~negative);
    return num.value / (1.0f + e.value);
}

#endif
