/* lt_sgemm_small: products too small for a BLAS call to pay. The chunked
 * causal linear attention makes about a dozen products per chunk of 32
 * rows, each 32 x 64 x 64 or smaller (a few microseconds of work): with
 * OpenBLAS's Haswell kernels a fifth of its time went to packing the
 * operands, and the result depended on which kernel set OpenBLAS loaded.
 * Here nothing is packed: register tiles read the operands where they lie.
 *
 * The form: per k, a register tile of rows of C adds op(A)(i, k) (one
 * float, broadcast) times vectors of op(B)'s row k (lt_outer_tile,
 * core/lanes.h, the tile generation's few-row products use too), so op(B)'s
 * rows must be contiguous. With trans_b T they are B's columns: B is first transposed
 * into the stack, a strip of columns at a time, in square blocks of vector
 * shuffles (measured at 32 x 64 x 64, one thread, AVX-512: 3.1 us with the
 * transposition, 4.4 us folding dot products, 2.3 us for the same product
 * with B's rows contiguous). Each entry of C is one sum in k order (for
 * trans_b T and K > TRANSPOSED_K: 16 partial sums folded in a fixed
 * order, core/lanes.h), so its bits depend on K alone: not on the tile it
 * fell in, the vector width, the thread count or the BLAS. Tiles are sized
 * by the register file the file is compiled for (core/lanes.h). Built
 * with multiply-adds fused (src/core/meson.build), as BLAS kernels are. */
#include "core/gemm_kernels.h"

#include <stddef.h>
#include <string.h>

#include "core/kernels.h"
#include "core/lanes.h"
#include "core/status.h"

/* The register tile of the outer form: TILE_ROWS x TILE_VECS accumulators,
 * TILE_VECS loaded vectors of op(B) and the broadcast op(A) entry (and a
 * product, without fused multiply-adds) within the register file: 6 x 4
 * vectors on AVX-512's 32 registers (and NEON's), 6 x 2 on AVX2's and
 * SSE2's 16. */
enum {
    TILE_VECS = LT_VECTOR_REGISTERS >= 32 ? 4 : 2,
    TILE_ROWS_FIT = (LT_VECTOR_REGISTERS - TILE_VECS - 1 - !LT_FUSED_MADD) / TILE_VECS,
    TILE_ROWS = TILE_ROWS_FIT < 6 ? TILE_ROWS_FIT : 6,
};
/* The stack strip of B^T (32 KiB): at least 16 columns for K up to
 * TRANSPOSED_K, whichever the vector width, so that which form makes a
 * product (and so its bits) does not depend on the kernel set. */
enum { TRANSPOSED = 8192, TRANSPOSED_K = TRANSPOSED / 16 };

/* op(A)(i, k) */
static inline float a_at(const float *A, int lda, int i, int k, const int trans_a)
{
    return trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
}

/* alpha sum + beta c, reading c only when beta is not 0 (C may hold
 * anything then, NaN included). */
static inline float scaled(float sum, float alpha, float beta, const float *c)
{
    return beta == 0.0f ? alpha * sum : lt_madd(beta, *c, alpha * sum); /* as the tiles */
}

/* C(i, j) for one entry, k in order: the outer form's ragged columns. */
static float outer_entry(const int trans_a, int i, int j, int K, const float *A, int lda,
                         const float *B, int ldb)
{
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum = lt_madd(a_at(A, lda, i, k, trans_a), B[(size_t)k * ldb + j], sum);
    return sum;
}

/* Rows i0 .. i0 + NR of C, columns j0 .. j0 + NV vectors; inlined with
 * constant NR, NV and trans_a, so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void
outer_tile(const int trans_a, const int NR, const int NV, int i0, int j0, int K, float alpha,
           const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    lt_lanes acc[TILE_ROWS * TILE_VECS];
    /* op(A)(i0 + r, k): A's column i0 + r with trans_a, else its row */
    const float *a = trans_a ? A + i0 : A + (size_t)i0 * lda;
    lt_outer_tile(NR, NV, NV, K, a, trans_a ? 1 : lda, trans_a ? lda : 1, B + j0, ldb, 0, 0,
                  acc);
    /* each entry as the ragged entries take it (scaled): an expression
     * of vectors left for the compiler to contract was fused in one build
     * and not in another (-O2 with sanitizers) */
#pragma GCC unroll 6
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            float *c = C + (size_t)(i0 + r) * ldc + j0 + v * LT_LANES;
            float sums[LT_LANES];
            memcpy(sums, &acc[r * NV + v], sizeof sums);
            if (beta == 0.0f) /* two loops that vectorise, as scaled() for each entry */
                for (int l = 0; l < LT_LANES; l++)
                    c[l] = alpha * sums[l];
            else
                for (int l = 0; l < LT_LANES; l++)
                    c[l] = lt_madd(beta, c[l], alpha * sums[l]);
        }
}

/* Every row of C over NV vectors of columns from j0. */
static inline __attribute__((always_inline)) void
outer_strip(const int trans_a, const int NV, int M, int j0, int K, float alpha, const float *A,
            int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    int i0 = 0;
    for (; M - i0 >= TILE_ROWS; i0 += TILE_ROWS)
        outer_tile(trans_a, TILE_ROWS, NV, i0, j0, K, alpha, A, lda, B, ldb, beta, C, ldc);
    switch (M - i0) {
#define ROWS_CASE(n)                                                                           \
    case n:                                                                                    \
        outer_tile(trans_a, n, NV, i0, j0, K, alpha, A, lda, B, ldb, beta, C, ldc);           \
        break;
        ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5)
#undef ROWS_CASE
    default: break; /* none left */
    }
}

/* The outer form, compiled once per trans_a. */
static inline __attribute__((always_inline)) void
outer(const int trans_a, int M, int N, int K, float alpha, const float *A, int lda,
      const float *B, int ldb, float beta, float *C, int ldc)
{
    const int wide = TILE_VECS * LT_LANES;
    int j0 = 0;
    for (; N - j0 >= wide; j0 += wide)
        outer_strip(trans_a, TILE_VECS, M, j0, K, alpha, A, lda, B, ldb, beta, C, ldc);
    for (; N - j0 >= LT_LANES; j0 += LT_LANES)
        outer_strip(trans_a, 1, M, j0, K, alpha, A, lda, B, ldb, beta, C, ldc);
    for (int i = 0; i < M; i++)
        for (int j = j0; j < N; j++) {
            float *c = C + (size_t)i * ldc + j;
            *c = scaled(outer_entry(trans_a, i, j, K, A, lda, B, ldb), alpha, beta, c);
        }
}

static void outer_a(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float beta, float *C, int ldc)
{
    outer(0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static void outer_at(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                     int ldb, float beta, float *C, int ldc)
{
    outer(1, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Entries (i0 .. i0 + NI) x (j0 .. j0 + NJ) of A B^T as dot products
 * (core/lanes.h). */
static inline __attribute__((always_inline)) void
dot_tile(const int NI, const int NJ, int i0, int j0, int K, float alpha, const float *A,
         int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    float sums[LT_DOT_TILE * LT_DOT_TILE];
    lt_wide_dots(NI, NJ, A + (size_t)i0 * lda, lda, B + (size_t)j0 * ldb, ldb, K, sums);
#pragma GCC unroll 4
    for (int i = 0; i < NI; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NJ; j++) {
            float *c = C + (size_t)(i0 + i) * ldc + j0 + j;
            *c = scaled(sums[i * NJ + j], alpha, beta, c);
        }
}

/* The dot form: whole tiles, then the ragged edges one entry at a time. */
static void dot(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc)
{
    const int Mt = M / LT_DOT_TILE * LT_DOT_TILE, Nt = N / LT_DOT_TILE * LT_DOT_TILE;
    for (int i0 = 0; i0 < Mt; i0 += LT_DOT_TILE)
        for (int j0 = 0; j0 < Nt; j0 += LT_DOT_TILE)
            dot_tile(LT_DOT_TILE, LT_DOT_TILE, i0, j0, K, alpha, A, lda, B, ldb, beta, C, ldc);
    for (int i = 0; i < M; i++)
        for (int j = i < Mt ? Nt : 0; j < N; j++)
            dot_tile(1, 1, i, j, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Interleaving vector i with vector i + LT_LANES / 2 of a block of LT_LANES
 * rows: the lower halves' lanes alternately, then the upper halves'. */
#if LT_LANES == 16
#define INTERLEAVE_LO {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23}
#define INTERLEAVE_HI {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31}
#elif LT_LANES == 8
#define INTERLEAVE_LO {0, 8, 1, 9, 2, 10, 3, 11}
#define INTERLEAVE_HI {4, 12, 5, 13, 6, 14, 7, 15}
#else
#define INTERLEAVE_LO {0, 4, 1, 5}
#define INTERLEAVE_HI {2, 6, 3, 7}
#endif

/* Bt (K, N) = B^T for B (N, K): LT_LANES x LT_LANES blocks as log2
 * LT_LANES rounds of interleaving row i with row i + LT_LANES / 2 (each
 * round rotates an entry's (row, column) address bits by one, so the last
 * round has swapped row and column), then the ragged edges one float at a
 * time. */
static void transpose(float *Bt, const float *B, int ldb, int N, int K)
{
    const lt_lane_index lo = INTERLEAVE_LO, hi = INTERLEAVE_HI;
    const int Nv = N / LT_LANES * LT_LANES, Kv = K / LT_LANES * LT_LANES;
    for (int j0 = 0; j0 < Nv; j0 += LT_LANES)
        for (int k0 = 0; k0 < Kv; k0 += LT_LANES) {
            lt_lanes v[LT_LANES], w[LT_LANES];
#pragma GCC unroll 16
            for (int r = 0; r < LT_LANES; r++)
                v[r] = lt_lanes_load(B + (size_t)(j0 + r) * ldb + k0);
#pragma GCC unroll 4
            for (int round = 0; round < LT_FOLD_LEVELS; round++) {
#pragma GCC unroll 8
                for (int i = 0; i < LT_LANES / 2; i++) {
                    w[2 * i] = __builtin_shuffle(v[i], v[i + LT_LANES / 2], lo);
                    w[2 * i + 1] = __builtin_shuffle(v[i], v[i + LT_LANES / 2], hi);
                }
#pragma GCC unroll 16
                for (int r = 0; r < LT_LANES; r++)
                    v[r] = w[r];
            }
#pragma GCC unroll 16
            for (int r = 0; r < LT_LANES; r++)
                lt_lanes_store(Bt + (size_t)(k0 + r) * N + j0, v[r]);
        }
    for (int k = 0; k < K; k++)
        for (int j = k < Kv ? Nv : 0; j < N; j++)
            Bt[(size_t)k * N + j] = B[(size_t)j * ldb + k];
}

static void sgemm_small(lt_trans trans_a, lt_trans trans_b, int M, int N, int K, float alpha,
                        const float *A, int lda, const float *B, int ldb, float beta, float *C,
                        int ldc)
{
    LT_ASSERT(M >= 0 && N >= 0 && K >= 0);
    LT_ASSERT(!(trans_a == LT_T && trans_b == LT_T)); /* no caller needs A^T B^T */
    if (M == 0 || N == 0)
        return;
    if (trans_b == LT_N) {
        if (trans_a == LT_T)
            outer_at(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        else
            outer_a(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (K > TRANSPOSED_K) {
        dot(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    /* strips of whole register tiles where K leaves room, else of vectors */
    const int wide = TILE_VECS * LT_LANES;
    int strip = K > 0 ? TRANSPOSED / K : N; /* at least 16, as K <= TRANSPOSED_K */
    if (strip >= wide)
        strip = strip / wide * wide;
    else if (strip >= LT_LANES)
        strip = strip / LT_LANES * LT_LANES;
    float Bt[TRANSPOSED];
    for (int j0 = 0; j0 < N; j0 += strip) {
        int cols = N - j0 < strip ? N - j0 : strip;
        transpose(Bt, B + (size_t)j0 * ldb, ldb, cols, K);
        outer_a(M, cols, K, alpha, A, lda, Bt, cols, beta, C + j0, ldc);
    }
}

const lt_gemm_kernels LT_KERNEL_EXPORT(lt_gemm_kernels) = {.sgemm_small = sgemm_small};
