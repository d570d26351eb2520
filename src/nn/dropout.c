#include "nn/dropout.h"

#include <math.h>
#include <stddef.h>

#include "core/rng.h"

/* splitmix64's finaliser: spreads nearby keys (step 7 vs 8) far apart. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One generator seed per (seed, step, layer); rows are its streams. */
static uint64_t key_seed(lt_dropout_key key)
{
    uint64_t h = mix64(key.seed + 0x9e3779b97f4a7c15ull);
    h = mix64(h ^ (key.step + 0x632be59bd9b4e019ull));
    return mix64(h ^ (key.layer + 0x85ebca6b27d4eb4full));
}

lt_status lt_dropout_forward(float *out, uint8_t *mask, const float *in, float p,
                             lt_dropout_key key, int R, int C)
{
    LT_ASSERT(R >= 0 && C >= 0);
    if (!(p >= 0.0f && p < 1.0f))
        return lt_fail(LT_E_USAGE, "dropout: probability %g is outside [0, 1)", (double)p);
    float scale = 1.0f / (1.0f - p);
    uint64_t seed = key_seed(key);
    /* Each 64-bit draw gives two 32-bit uniforms; an element is kept when
     * its uniform is at least p 2^32 (probability 1 - p to within 2^-32). */
    uint64_t threshold = (uint64_t)ldexp((double)p, 32);
#pragma omp parallel for schedule(static) if ((long)R * C > 16384)
    for (int r = 0; r < R; r++) {
        lt_rng rng;
        lt_rng_seed(&rng, seed, (uint64_t)r);
        size_t base = (size_t)r * C;
        uint64_t bits = 0;
        for (int c = 0; c < C; c++) {
            if (c % 2 == 0)
                bits = lt_rng_u64(&rng);
            uint64_t draw = c % 2 == 0 ? bits & 0xffffffffu : bits >> 32;
            int keep = draw >= threshold;
            mask[base + c] = (uint8_t)keep;
            out[base + c] = keep ? in[base + c] * scale : 0.0f;
        }
    }
    return LT_OK;
}

void lt_dropout_backward(float *d_in, const float *d_out, const uint8_t *mask, float p, int R,
                         int C)
{
    LT_ASSERT(R >= 0 && C >= 0 && p >= 0.0f && p < 1.0f);
    float scale = 1.0f / (1.0f - p);
    long n = (long)R * C;
#pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++)
        if (mask[i])
            d_in[i] += d_out[i] * scale;
}
