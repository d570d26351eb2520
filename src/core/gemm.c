#include "core/gemm.h"

#include <cblas.h>
#include <omp.h>

#include "core/gemm_kernels.h"
#include "core/kernels.h"
#include "core/status.h"

/* A block's work must outweigh a parallel hand-off (a few microseconds),
 * and every block packs the other operand again: about 1/length of its
 * multiply-adds. Measured on 2 cores (one thread, CPU time): blocks of 32
 * rows and 2^17 multiply-adds cost 10-25% on softmax heads of 1024 x 32,
 * where heads run in parallel and their blocks one after another; these
 * limits keep that within a few percent, and a 8192 x 1024 x 256 product
 * in 16 blocks within 1% of one call (64 blocks: 6%), while products made
 * at the top level still find work for every thread of a small machine. */
#define MIN_BLOCK_WORK (1L << 19)
#define MIN_BLOCK_LENGTH 64
#define MAX_BLOCKS 16
/* Block lengths are whole multiples of this: full register tiles. */
#define BLOCK_ROUND 16

typedef struct block_plan {
    int cut_rows; /* 1: blocks are row ranges of C; 0: column ranges */
    int length;   /* rows or columns per block (the last may be shorter) */
    int count;
} block_plan;

static block_plan plan_of(int M, int N, int K)
{
    block_plan p = {M >= N, M >= N ? M : N, 1};
    const long dim = p.length;
    const double work = (double)M * N * K;
    int blocks = 1;
    while (blocks * 2 <= MAX_BLOCKS && dim / (blocks * 2) >= MIN_BLOCK_LENGTH &&
           work / (blocks * 2) >= MIN_BLOCK_WORK)
        blocks *= 2;
    if (blocks == 1)
        return p;
    long length = (dim + blocks - 1) / blocks;
    length = (length + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
    p.length = (int)length;
    p.count = (int)((dim + length - 1) / length);
    return p;
}

int lt_sgemm_blocks(int M, int N, int K) { return M > 0 && N > 0 ? plan_of(M, N, K).count : 0; }

static enum CBLAS_TRANSPOSE cblas_trans(lt_trans t) { return t == LT_T ? CblasTrans : CblasNoTrans; }

void lt_sgemm_serial(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                     const float *A, int lda, const float *B, int ldb, float beta, float *C,
                     int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    /* OpenBLAS's OpenMP build runs single-threaded inside an active parallel
     * region and otherwise uses omp_get_max_threads() threads, read at each
     * call: lowered to 1 around the call, it cannot split the work. */
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (threads > 1)
        omp_set_num_threads(1);
    cblas_sgemm(CblasRowMajor, cblas_trans(trans_a), cblas_trans(trans_b), M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
    if (threads > 1)
        omp_set_num_threads(threads);
}

/* Block b of the plan as its own product. */
static void run_block(const block_plan *p, int b, lt_trans trans_a, lt_trans trans_b, int M,
                      int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                      float beta, float *C, int ldc)
{
    size_t first = (size_t)b * p->length;
    if (p->cut_rows) {
        int rows = M - (int)first < p->length ? M - (int)first : p->length;
        const float *a = trans_a == LT_T ? A + first : A + first * (size_t)lda;
        lt_sgemm_serial(trans_a, trans_b, rows, N, K, alpha, a, lda, B, ldb, beta,
                        C + first * (size_t)ldc, ldc);
    } else {
        int cols = N - (int)first < p->length ? N - (int)first : p->length;
        const float *bb = trans_b == LT_T ? B + first * (size_t)ldb : B + first;
        lt_sgemm_serial(trans_a, trans_b, M, cols, K, alpha, A, lda, bb, ldb, beta, C + first,
                        ldc);
    }
}

void lt_sgemm(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
              const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    LT_ASSERT(M >= 0 && N >= 0 && K >= 0);
    if (M == 0 || N == 0)
        return;
    const block_plan p = plan_of(M, N, K);
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (threads > p.count)
        threads = p.count;
    if (threads <= 1) {
        for (int b = 0; b < p.count; b++)
            run_block(&p, b, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int b = 0; b < p.count; b++)
        run_block(&p, b, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The active kernel set's register tiles (core/small_gemm.c). */
LT_KERNEL_TABLE(lt_gemm_kernels, lt_gemm_kernels, gemm_kernels)

void lt_sgemm_small(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                    const float *A, int lda, const float *B, int ldb, float beta, float *C,
                    int ldc)
{
    gemm_kernels()->sgemm_small(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
