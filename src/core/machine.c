/* The machine's matrix-product speed, measured through the products the
 * kernels call (lt_sgemm: OpenBLAS in fixed blocks), and its memory
 * bandwidth: the roofs of every benchmark's GFLOP/s and GB/s. */
#include "core/machine.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/gemm.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/threads.h"
#include "core/timer.h"

/* Declared by OpenBLAS's cblas.h on most builds; repeated so the code does
 * not depend on which header variant is installed. */
char *openblas_get_corename(void);

/* A roof is the fastest of its repetitions: what the machine reaches. On
 * the shared 2-vCPU development VM the median of 5 SGEMMs ranged 94-177
 * GFLOP/s between runs minutes apart, and every fraction with it. */
enum { ROOFLINE_REPEATS = 9 };

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

double lt_machine_sgemm_gflops(int n, int threads)
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
                summary.min > 0.0)
                gflops = 2.0 * n * (double)n * n / summary.min * 1e-9;
            lt_threads_set(before);
        }
    }
    lt_mem_free(a);
    lt_mem_free(b);
    lt_mem_free(c);
    return gflops;
}

const char *lt_machine_blas_core(void) { return openblas_get_corename(); }

/* The sum of an array: a read-only stream, READ_LANES floats an
 * iteration into as many partial sums (independent chains, in vector
 * registers of the kernel set's width: core/kernels.h; a fixed 64-byte
 * vector type went through the stack without AVX-512 and measured a third
 * of the bandwidth), each thread over its own range, so the loop waits on
 * the loads alone. */
typedef struct read_case {
    size_t n, passes;
    const float *a;
    volatile float sink;
} read_case;

enum { READ_LANES = 64 };
#define READ_TIMED_BYTES ((size_t)64 << 20) /* at least, per timed run */

/* *total = the sum of blocks [b0, b1) of READ_LANES floats, `passes` times */
static inline __attribute__((always_inline)) void read_blocks_body(const float *a, size_t b0,
                                                                   size_t b1, size_t passes,
                                                                   float *total)
{
    float acc[READ_LANES] = {0};
    for (size_t pass = 0; pass < passes; pass++)
        for (size_t b = b0; b < b1; b++)
            for (int l = 0; l < READ_LANES; l++)
                acc[l] += a[b * READ_LANES + l];
    float sum = 0.0f;
    for (int l = 0; l < READ_LANES; l++)
        sum += acc[l];
    *total = sum;
}
LT_PER_KERNEL_SET(static, read_blocks,
                  (const float *a, size_t b0, size_t b1, size_t passes, float *total),
                  (a, b0, b1, passes, total))

static lt_status run_read(void *ctx)
{
    read_case *r = ctx;
    const size_t blocks = r->n / READ_LANES;
    float total = 0.0f;
#pragma omp parallel reduction(+ : total)
    {
        size_t parts = (size_t)omp_get_num_threads(), part = (size_t)omp_get_thread_num();
        float mine;
        read_blocks(r->a, blocks * part / parts, blocks * (part + 1) / parts, r->passes, &mine);
        total += mine;
    }
    r->sink = total; /* the sum is used: the loads stay */
    return LT_OK;
}

double lt_machine_read_bandwidth_gbs(size_t array_bytes, int threads)
{
    size_t n = array_bytes / sizeof(float) / READ_LANES * READ_LANES;
    float *a = NULL;
    double gbs = NAN;
    if (n > 0 && lt_mem_alloc((void **)&a, n * sizeof(float), "read bandwidth") == LT_OK) {
        int before = lt_threads_get();
        if (lt_threads_set(threads >= 1 ? threads : before) == LT_OK) {
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; i++) /* first touch by the threads that read it */
                a[i] = (float)(i % 7);
            /* a small array read often enough that the timing is of the
             * reads, not of starting the threads */
            size_t bytes = n * sizeof(float);
            read_case r = {n, (READ_TIMED_BYTES + bytes - 1) / bytes, a, 0.0f};
            double samples[ROOFLINE_REPEATS];
            lt_summary summary;
            if (lt_time_repeat(&summary, samples, run_read, &r, 1, ROOFLINE_REPEATS) == LT_OK &&
                summary.min > 0.0)
                gbs = (double)r.passes * (double)bytes / summary.min * 1e-9;
            lt_threads_set(before);
        }
    }
    lt_mem_free(a);
    return gbs;
}

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

double lt_machine_bandwidth_gbs(size_t array_bytes, int threads)
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
                summary.min > 0.0)
                gbs = 3.0 * (double)(n * sizeof(float)) / summary.min * 1e-9;
            lt_threads_set(before);
        }
    }
    lt_mem_free(a);
    lt_mem_free(b);
    lt_mem_free(c);
    return gbs;
}
