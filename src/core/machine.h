/* What this machine can do, measured: the roofs that benchmark rows are
 * held against (matrix products, memory bandwidth) and the BLAS kernels
 * behind them. Used by scaling's kernel rooflines and by image generation's
 * model rooflines alike, so it belongs to no one of them.
 *
 * Each rate is the fastest of a few timed runs after a warm-up (on a shared
 * VM the median of 5 SGEMMs ranged 94-177 GFLOP/s between runs minutes
 * apart: the fastest is what the machine reaches), allocates what it times
 * through the tracked allocator, restores the thread count, and is NaN when
 * an allocation fails. */
#ifndef LT_CORE_MACHINE_H
#define LT_CORE_MACHINE_H

#include <stddef.h>

/* The SGEMM rate in GFLOP/s for an n x n x n product on `threads` threads
 * (< 1: lt_threads_get()), through lt_sgemm as the kernels call it; three
 * n x n matrices. n = 1024 is the usual roofline reference. */
double lt_machine_sgemm_gflops(int n, int threads);

/* Memory bandwidth in GB/s on `threads` threads (< 1: lt_threads_get()):
 * STREAM's triad a = b + 3 c over three arrays of `array_bytes` (choose
 * them well beyond the caches, e.g. 64 MiB), two read and one written per
 * element. The roof of work that reads and writes more than it computes
 * (scaling's memory-bound attention passes). */
double lt_machine_bandwidth_gbs(size_t array_bytes, int threads);

/* The speed of reading `array_bytes` again and again, in GB/s on `threads`
 * threads (< 1: lt_threads_get()): the sum of one array (read as many times
 * as make 64 MiB a run). At the size of what a loop streams (a model's
 * weights) it includes what the caches keep of it between passes, so it is
 * the roof of that loop: generating a token at batch 1 reads every weight
 * once. */
double lt_machine_read_bandwidth_gbs(size_t array_bytes, int threads);

/* The BLAS kernel family those rates come from (OpenBLAS's core name), to
 * record beside them. OpenBLAS 0.3.21 falls back to its generic "Prescott"
 * kernels on CPUs it does not recognise (a KVM Xeon, model 207): 4-8x
 * slower SGEMM than the "SkylakeX" kernels OPENBLAS_CORETYPE=SkylakeX
 * selects on that machine. */
const char *lt_machine_blas_core(void);

#endif
