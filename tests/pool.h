/* Test buffers from the tracked allocator, freed together after each test
 * (register release_pool as the suite's .fini), and seeded random inputs.
 * Header-only, included by one test file per executable. */
#ifndef LT_TESTS_POOL_H
#define LT_TESTS_POOL_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "core/rng.h"

#define POOL_SIZE 128

static void *pool[POOL_SIZE];
static int pool_used;

static inline void *take(size_t bytes)
{
    cr_assert(pool_used < POOL_SIZE, "test pool exhausted");
    void *block;
    cr_assert(lt_mem_calloc(&block, bytes, "test buffer") == LT_OK);
    pool[pool_used++] = block;
    return block;
}

static inline float *take_f(size_t n) { return take(n * sizeof(float)); }
static inline double *take_d(size_t n) { return take(n * sizeof(double)); }

static inline void release_pool(void)
{
    while (pool_used > 0)
        lt_mem_free(pool[--pool_used]);
}

/* Uniform floats in [lo, hi) from stream `stream`. */
static inline float *random_f(size_t n, float lo, float hi, uint64_t stream)
{
    float *x = take_f(n);
    lt_rng rng;
    lt_rng_seed(&rng, 2020, stream);
    lt_rng_fill_uniform(&rng, x, (long)n, lo, hi);
    return x;
}

static inline double *widen(const float *x, size_t n)
{
    double *d = take_d(n);
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

#endif
