/* Matrix products whose bits do not depend on the thread count.
 *
 * OpenBLAS splits a product's output between its threads. With its Haswell
 * and Zen kernels an element's value depends on where the tile boundaries
 * fall, so the same cblas_sgemm gives other bits on 1 and on 2 threads; its
 * SkylakeX and Cooperlake kernels do too when the reduction is cut into
 * other pieces on several threads (a length between one and two of their
 * K blocks). These wrappers never let BLAS pick
 * the split: the output is cut into blocks that depend only on the product's
 * sizes, each block is one single-threaded BLAS call over the whole
 * reduction, and threads only decide who computes which block. So a product
 * gives the same bits for any thread count, whichever kernels OpenBLAS
 * loaded, inside or outside a parallel region.
 *
 * Row-major throughout, arguments as cblas_sgemm's:
 *   C (M, N) = alpha op(A) op(B) + beta C,  op(A) (M, K), op(B) (K, N). */
#ifndef LT_CORE_GEMM_H
#define LT_CORE_GEMM_H

typedef enum lt_trans { LT_N = 0, LT_T = 1 } lt_trans;

/* The product in blocks fixed by (M, N, K): the longer of M and N is cut
 * into up to 16 pieces (a power of two, each at least 64 long and 2^19
 * multiply-adds), spread over the OpenMP threads when called outside a
 * parallel region, one after another inside one. For products a caller
 * may make at the top level. */
void lt_sgemm(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
              const float *A, int lda, /* op(A): (M, K) */
              const float *B, int ldb, /* op(B): (K, N) */
              float beta,
              float *C, int ldc);      /* (M, N) */

/* The product as one single-threaded BLAS call, for callers that spread
 * their own fixed pieces over threads (chunks, heads) and would gain
 * nothing from splitting further. Not the same bits as lt_sgemm for the
 * same arguments: a call site uses one or the other, always. */
void lt_sgemm_serial(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                     const float *A, int lda, /* op(A): (M, K) */
                     const float *B, int ldb, /* op(B): (K, N) */
                     float beta,
                     float *C, int ldc);      /* (M, N) */

/* The product in this thread's own register tiles, no BLAS call: for the
 * small products (every side up to a few hundred) a caller makes many of,
 * where a BLAS call's packing and set-up cost as much as the arithmetic.
 * Each entry of C is one fixed-order sum (k in order, or in vector lanes
 * folded in a fixed order when op(B) is B^T), so its bits depend on K and
 * on trans_b only: not on the tile, the thread count or the BLAS kernels.
 * A^T B^T is not offered. */
void lt_sgemm_small(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                    const float *A, int lda, /* op(A): (M, K) */
                    const float *B, int ldb, /* op(B): (K, N) */
                    float beta,
                    float *C, int ldc);      /* (M, N) */

/* Number of blocks lt_sgemm cuts an (M, N, K) product into (for tests). */
int lt_sgemm_blocks(int M, int N, int K);

#endif
