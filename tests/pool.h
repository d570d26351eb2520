/* A pool of test buffers from the tracked allocator, freed after each test
 * (register release_pool as the suite's .fini), random fills for them, and
 * the accumulation check of backward functions. Header-only, for Criterion
 * tests. */
#ifndef LT_TESTS_POOL_H
#define LT_TESTS_POOL_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "core/mem.h"
#include "core/rng.h"

#define POOL_BLOCKS 128

static void *pool[POOL_BLOCKS];
static int pool_used;

/* Zero-filled bytes that live until the end of the test. */
static inline void *take(size_t bytes)
{
    cr_assert(pool_used < POOL_BLOCKS, "test pool exhausted");
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

/* A double copy of n floats. */
static inline double *widen(const float *x, size_t n)
{
    double *d = take_d(n);
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* A second identical backward must double a gradient that started at 0
 * (up to rounding where BLAS adds a product in pieces). */
static inline void expect_doubled(const float *twice, const float *once, size_t n,
                                  const char *what)
{
    float *expected = take_f(n);
    for (size_t i = 0; i < n; i++)
        expected[i] = 2.0f * once[i];
    double err = check_rel_error_ff(twice, expected, n, 1e-6);
    cr_expect(err < 1e-6, "%s: second backward did not add (relative error %.3g)", what, err);
}

#endif
