#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void lt_rng_seed(lt_rng *rng, uint64_t seed, uint64_t stream)
{
    /* Mix the stream through its own splitmix pass first so that nearby
     * (seed, stream) pairs land far apart. */
    uint64_t mixer = stream;
    uint64_t x = seed ^ splitmix64(&mixer);
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

uint64_t lt_rng_u64(lt_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double lt_rng_uniform(lt_rng *rng)
{
    return (double)(lt_rng_u64(rng) >> 11) * 0x1.0p-53;
}

uint64_t lt_rng_below(lt_rng *rng, uint64_t bound)
{
    /* Rejection sampling on the top of the range removes modulo bias. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
        x = lt_rng_u64(rng);
    } while (x >= limit);
    return x % bound;
}

double lt_rng_normal(lt_rng *rng)
{
    double u1 = 1.0 - lt_rng_uniform(rng); /* in (0, 1], so log is finite */
    double u2 = lt_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void lt_rng_fill_normal(lt_rng *rng, float *out, long n, float stddev)
{
    for (long i = 0; i < n; i++)
        out[i] = (float)(lt_rng_normal(rng) * stddev);
}

void lt_rng_fill_uniform(lt_rng *rng, float *out, long n, float lo, float hi)
{
    for (long i = 0; i < n; i++)
        out[i] = lo + (hi - lo) * (float)lt_rng_uniform(rng);
}
