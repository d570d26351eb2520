/* The machine's matrix-product speed, measured through the products the
 * kernels call (lt_sgemm: OpenBLAS in fixed blocks), as the roof for their
 * GFLOP/s. */
#include <math.h>
#include <string.h>

#include "attn/attn.h"
#include "core/gemm.h"
#include "core/mem.h"
#include "core/threads.h"
#include "core/timer.h"

/* Declared by OpenBLAS's cblas.h on most builds; repeated so the code does
 * not depend on which header variant is installed. */
char *openblas_get_corename(void);

enum { ROOFLINE_REPEATS = 5 };

typedef struct sgemm_case {
    int n;
    const float *a, *b;
    float *c;
} sgemm_case;

static lt_status run_sgemm(void *ctx)
{
    const sgemm_case *s = ctx;
    lt_sgemm(LT_N, LT_N, s->n, s->n, s->n, 1.0f, s->a, s->n, s->b, s->n, 0.0f, s->c, s->n);
    return LT_OK;
}

double lt_attn_sgemm_gflops(int n, int threads)
{
    if (n < 1)
        return NAN;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a = NULL, *b = NULL, *c = NULL;
    double gflops = NAN;
    if (lt_mem_alloc((void **)&a, bytes, "roofline A") == LT_OK &&
        lt_mem_alloc((void **)&b, bytes, "roofline B") == LT_OK &&
        lt_mem_alloc((void **)&c, bytes, "roofline C") == LT_OK) {
        /* small exact values: the timing does not depend on the data */
        for (size_t i = 0; i < (size_t)n * n; i++) {
            a[i] = (float)(i % 7) * 0.125f;
            b[i] = (float)(i % 5) * 0.25f;
        }
        int before = lt_threads_get();
        if (lt_threads_set(threads >= 1 ? threads : before) == LT_OK) {
            sgemm_case s = {n, a, b, c};
            double samples[ROOFLINE_REPEATS];
            lt_summary summary;
            if (lt_time_repeat(&summary, samples, run_sgemm, &s, 1, ROOFLINE_REPEATS) == LT_OK &&
                summary.median > 0.0)
                gflops = 2.0 * n * (double)n * n / summary.median * 1e-9;
            lt_threads_set(before);
        }
    }
    lt_mem_free(a);
    lt_mem_free(b);
    lt_mem_free(c);
    return gflops;
}

const char *lt_attn_blas_core(void) { return openblas_get_corename(); }

/* a[i] = b[i] + 3 c[i] over three arrays: STREAM's triad. */
typedef struct triad_case {
    size_t n;
    float *a;
    const float *b, *c;
} triad_case;

static lt_status run_triad(void *ctx)
{
    const triad_case *t = ctx;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < t->n; i++)
        t->a[i] = t->b[i] + 3.0f * t->c[i];
    return LT_OK;
}

double lt_attn_bandwidth_gbs(size_t array_bytes, int threads)
{
    size_t n = array_bytes / sizeof(float);
    float *a = NULL, *b = NULL, *c = NULL;
    double gbs = NAN;
    if (n > 0 && lt_mem_alloc((void **)&a, n * sizeof(float), "bandwidth A") == LT_OK &&
        lt_mem_alloc((void **)&b, n * sizeof(float), "bandwidth B") == LT_OK &&
        lt_mem_alloc((void **)&c, n * sizeof(float), "bandwidth C") == LT_OK) {
        int before = lt_threads_get();
        if (lt_threads_set(threads >= 1 ? threads : before) == LT_OK) {
            /* first touch by the threads that stream them */
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; i++) {
                a[i] = 0.0f;
                b[i] = (float)(i % 7);
                c[i] = (float)(i % 5);
            }
            triad_case t = {n, a, b, c};
            double samples[ROOFLINE_REPEATS];
            lt_summary summary;
            /* STREAM counts two arrays read and one written */
            if (lt_time_repeat(&summary, samples, run_triad, &t, 1, ROOFLINE_REPEATS) == LT_OK &&
                summary.median > 0.0)
                gbs = 3.0 * (double)(n * sizeof(float)) / summary.median * 1e-9;
            lt_threads_set(before);
        }
    }
    lt_mem_free(a);
    lt_mem_free(b);
    lt_mem_free(c);
    return gbs;
}
