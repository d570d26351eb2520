/* Deterministic random numbers (xoshiro256**, seeded through splitmix64).
 *
 * Reproducibility across thread counts comes from streams: work item i draws
 * from lt_rng_seed(&r, seed, i) whichever thread runs it, so results never
 * depend on OpenMP scheduling. The state is plain data and can be saved in a
 * checkpoint by copying the struct. */
#ifndef LT_CORE_RNG_H
#define LT_CORE_RNG_H

#include <stdint.h>

typedef struct lt_rng {
    uint64_t s[4];
} lt_rng;

/* Independent stream `stream` of generator `seed`. */
void lt_rng_seed(lt_rng *rng, uint64_t seed, uint64_t stream);

uint64_t lt_rng_u64(lt_rng *rng);

/* Uniform in [0, 1) with 53 random bits. */
double lt_rng_uniform(lt_rng *rng);

/* Uniform integer in [0, bound), without modulo bias; bound > 0. */
uint64_t lt_rng_below(lt_rng *rng, uint64_t bound);

/* Standard normal (Box-Muller; no cached second value, so the state alone
 * determines the sequence). */
double lt_rng_normal(lt_rng *rng);

/* Fills n floats with normal(0, stddev) draws. */
void lt_rng_fill_normal(lt_rng *rng, float *out, long n, float stddev);

/* Fills n floats with uniform draws in [lo, hi). */
void lt_rng_fill_uniform(lt_rng *rng, float *out, long n, float lo, float hi);

#endif
