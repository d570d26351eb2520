/* One vector register of floats for the hand-tiled kernels, sized by the
 * instruction set the file is compiled for: 16 floats under AVX-512 (zmm,
 * 32 registers), 8 under AVX2 (ymm, 16 registers), 4 elsewhere (SSE2's 16
 * xmm registers, Arm NEON's 32). GCC splits a vector wider than the
 * hardware's through the stack, so kernels take their tile shapes from
 * LT_LANES and LT_VECTOR_REGISTERS, never from a fixed width.
 * Unaligned loads and horizontal sums in a fixed order, so a kernel's bits
 * depend only on its sizes. Lanes fuse `acc += a * b` only in sources
 * built with -ffp-contract=fast; lt_madd matches them there. */
#ifndef LT_CORE_LANES_H
#define LT_CORE_LANES_H

#include <math.h>
#include <string.h>

#if defined(__AVX512F__)
#define LT_LANES 16
#define LT_VECTOR_REGISTERS 32
#elif defined(__AVX__)
#define LT_LANES 8
#define LT_VECTOR_REGISTERS 16
#elif defined(__aarch64__)
#define LT_LANES 4
#define LT_VECTOR_REGISTERS 32
#else
#define LT_LANES 4
#define LT_VECTOR_REGISTERS 16
#endif

/* A multiply-add is one instruction where the target fuses them (GCC
 * says so with __FP_FAST_FMAF: FMA3 on x86, every aarch64); elsewhere the
 * product needs a register of its own, which tiles leave room for.
 * meson.build asks the same question per kernel set (lt_kernels_fused). */
#if defined(__FP_FAST_FMAF)
#define LT_FUSED_MADD 1
#else
#define LT_FUSED_MADD 0
#endif

/* Dot products keep LT_WIDE = 16 partial sums whatever the vector width
 * (LT_WIDE_VECTORS vectors of LT_LANES) and fold them in one tree:
 * halves, quarters, eighths, pairs. So a dot product gives the same bits
 * on every kernel set with fused multiply-adds (AVX2 and AVX-512 alike). */
#define LT_WIDE 16
#define LT_WIDE_VECTORS (LT_WIDE / LT_LANES)

/* GCC notes that returning vectors wider than the baseline ABI's has
 * another calling convention there; every function returning them is
 * static inline within one build, so no call crosses an ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float lt_lanes __attribute__((vector_size(LT_LANES * sizeof(float))));
typedef int lt_lane_index __attribute__((vector_size(LT_LANES * sizeof(int))));

static inline lt_lanes lt_lanes_load(const float *p)
{
    lt_lanes v;
    memcpy(&v, p, sizeof v); /* unaligned: rows are contiguous, not vector aligned */
    return v;
}

static inline void lt_lanes_store(float *p, lt_lanes v) { memcpy(p, &v, sizeof v); }

/* a b + c rounded as a lane's `acc += a * b` is: one fused multiply-add
 * where the CPU has it. A scalar loop's `sum += a * b` is not enough: GCC
 * vectorises it as products, then in-order adds, two roundings. */
static inline float lt_madd(float a, float b, float c)
{
#if LT_FUSED_MADD
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}

/* The folding tree's levels, as two-source shuffles of a pair of vectors:
 * at each level every block of lanes (a whole vector first) adds its upper
 * half onto its lower half, for both vectors at once (the first's halved
 * blocks, then the second's). One vector's lanes folded alone
 * (lt_lanes_sum) take the same additions. */
#if LT_LANES == 16
#define LT_FOLD_LEVELS 4
#define LT_FOLD_MASKS                                                                          \
    {{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},                                 \
     {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},                               \
     {0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29},                               \
     {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}},                             \
    {{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31},                           \
     {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31},                             \
     {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31},                             \
     {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}}
#elif LT_LANES == 8
#define LT_FOLD_LEVELS 3
#define LT_FOLD_MASKS                                                                          \
    {{0, 1, 2, 3, 8, 9, 10, 11}, {0, 1, 4, 5, 8, 9, 12, 13}, {0, 2, 4, 6, 8, 10, 12, 14}},     \
    {{4, 5, 6, 7, 12, 13, 14, 15}, {2, 3, 6, 7, 10, 11, 14, 15}, {1, 3, 5, 7, 9, 11, 13, 15}}
#else
#define LT_FOLD_LEVELS 2
#define LT_FOLD_MASKS {{0, 1, 4, 5}, {0, 2, 4, 6}}, {{2, 3, 6, 7}, {1, 3, 5, 7}}
#endif

typedef struct lt_fold_masks {
    lt_lane_index lo[LT_FOLD_LEVELS], hi[LT_FOLD_LEVELS];
} lt_fold_masks;

/* The lanes' sum in a fixed order (the balanced tree above), in vector
 * registers. */
static inline float lt_lanes_sum(lt_lanes v)
{
    const lt_fold_masks m = {LT_FOLD_MASKS};
#pragma GCC unroll 4
    for (int level = 0; level < LT_FOLD_LEVELS; level++)
        v = __builtin_shuffle(v, v, m.lo[level]) + __builtin_shuffle(v, v, m.hi[level]);
    return v[0];
}

/* LT_LANES sums at once: lane t of the result is the sum of v[t]'s lanes,
 * folded by the same tree with two-source shuffles (2 (LT_LANES - 1)
 * shuffles and LT_LANES - 1 adds, where LT_LANES lt_lanes_sum calls take
 * LT_LANES times as many). */
static inline lt_lanes lt_lanes_sum_each(const lt_lanes *v)
{
    const lt_fold_masks m = {LT_FOLD_MASKS};
    lt_lanes x[LT_LANES];
#pragma GCC unroll 16
    for (int i = 0; i < LT_LANES; i++)
        x[i] = v[i];
    int n = LT_LANES;
#pragma GCC unroll 4
    for (int level = 0; level < LT_FOLD_LEVELS; level++, n /= 2)
#pragma GCC unroll 8
        for (int p = 0; p < n / 2; p++)
            x[p] = __builtin_shuffle(x[2 * p], x[2 * p + 1], m.lo[level]) +
                   __builtin_shuffle(x[2 * p], x[2 * p + 1], m.hi[level]);
    return x[0];
}

/* The sum of LT_WIDE partial sums by the tree lt_lanes_sum folds (lane
 * i + 8 onto lane i, then i + 4, ...): plain loops keep their sums in
 * part[l] for the elements l, l + 16, l + 32, ... and end here, so that
 * the vectorised sum is the same bits at any vector width. `part` is
 * overwritten. */
static inline float lt_wide_total(float *part)
{
    for (int s = LT_WIDE / 2; s >= 1; s /= 2)
        for (int i = 0; i < s; i++)
            part[i] += part[i + s];
    return part[0];
}

/* A wide sum's LT_WIDE_VECTORS vectors folded into one vector by the
 * 16-lane tree's first levels (lane i + 8 onto lane i, then i + 4), so
 * that lt_lanes_sum finishes the same tree. */
static inline lt_lanes lt_wide_fold(const lt_lanes *w)
{
#if LT_WIDE_VECTORS == 1
    return w[0];
#elif LT_WIDE_VECTORS == 2
    return w[0] + w[1];
#else
    return (w[0] + w[2]) + (w[1] + w[3]);
#endif
}

/* The outer form's register tile, shared by the small products
 * (core/small_gemm.c) and the few-row products from packed panels
 * (nn/rows.c): acc[r NV + v] = the sum over k < K of A(r, k) (one float,
 * broadcast) times vector v of B's row k, k in order into one accumulator,
 * so each entry's bits depend on K alone. A(r, k) is A[r a_row + k a_k]
 * (either layout of A). B's row k holds the tile's NV vectors in groups of
 * G contiguous ones, group g at B + g b_group + k b_k: one group is a row
 * of a matrix, several are panels packed side by side. prefetch > 0 asks
 * for each group's row k + prefetch ahead (a stream from memory, across
 * pages; a prefetch never faults). Inlined with constant NR, NV, G, a_k and
 * prefetch, so the NR x NV accumulators stay in registers: the caller sizes
 * the tile to its register file. */
#define LT_OUTER_MAX_VECS 4 /* NV of lt_outer_tile, at most */

static inline __attribute__((always_inline)) void
lt_outer_tile(const int NR, const int NV, const int G, int K, const float *A, long a_row,
              const long a_k, const float *B, long b_k, long b_group, const int prefetch,
              lt_lanes *acc)
{
#pragma GCC unroll 8
    for (int r = 0; r < NR; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            acc[r * NV + v] = (lt_lanes){0};
    for (int k = 0; k < K; k++) {
        lt_lanes b[LT_OUTER_MAX_VECS];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            b[v] = lt_lanes_load(B + (v / G) * b_group + k * b_k + (v % G) * LT_LANES);
        if (prefetch > 0)
#pragma GCC unroll 4
            for (int g = 0; g < NV / G; g++)
                __builtin_prefetch(B + g * b_group + (k + prefetch) * b_k, 0, 0);
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            const float a = A[r * a_row + k * a_k];
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                acc[r * NV + v] += a * b[v];
        }
    }
}

/* The dot form's register tile: LT_DOT_TILE x LT_DOT_TILE dot products of
 * LT_WIDE_VECTORS accumulators each, with a vector of each row loaded: 4 x 4
 * on 32 registers of 16 floats, 2 x 2 on AVX2's 16 of 8 (and SSE2's). */
#define LT_DOT_TILE (LT_VECTOR_REGISTERS >= 32 && LT_WIDE_VECTORS == 1 ? 4 : 2)

/* sums[i NJ + j] = the dot product of A's row i and B's row j over K (rows
 * lda and ldb apart), i < NI, j < NJ (at most LT_DOT_TILE each): 16
 * partial sums of k per product in registers, folded by the tree above
 * (LT_LANES products at a time where the tile has them), then the ragged
 * end of k in order. Inlined with constant NI and NJ, so the accumulators
 * stay in registers. */
static inline __attribute__((always_inline)) void lt_wide_dots(const int NI, const int NJ,
                                                               const float *A, long lda,
                                                               const float *B, long ldb, int K,
                                                               float *sums)
{
    lt_lanes acc[LT_DOT_TILE * LT_DOT_TILE][LT_WIDE_VECTORS];
#pragma GCC unroll 16
    for (int e = 0; e < NI * NJ; e++)
#pragma GCC unroll 4
        for (int u = 0; u < LT_WIDE_VECTORS; u++)
            acc[e][u] = (lt_lanes){0};
    const int whole = K / LT_WIDE * LT_WIDE;
    for (int k = 0; k < whole; k += LT_WIDE) {
        lt_lanes a[LT_DOT_TILE][LT_WIDE_VECTORS], b[LT_DOT_TILE][LT_WIDE_VECTORS];
#pragma GCC unroll 4
        for (int i = 0; i < NI; i++)
#pragma GCC unroll 4
            for (int u = 0; u < LT_WIDE_VECTORS; u++)
                a[i][u] = lt_lanes_load(A + i * lda + k + u * LT_LANES);
#pragma GCC unroll 4
        for (int j = 0; j < NJ; j++)
#pragma GCC unroll 4
            for (int u = 0; u < LT_WIDE_VECTORS; u++)
                b[j][u] = lt_lanes_load(B + j * ldb + k + u * LT_LANES);
#pragma GCC unroll 4
        for (int i = 0; i < NI; i++)
#pragma GCC unroll 4
            for (int j = 0; j < NJ; j++)
#pragma GCC unroll 4
                for (int u = 0; u < LT_WIDE_VECTORS; u++)
                    acc[i * NJ + j][u] += a[i][u] * b[j][u];
    }
    lt_lanes folded[LT_DOT_TILE * LT_DOT_TILE];
#pragma GCC unroll 16
    for (int e = 0; e < NI * NJ; e++)
        folded[e] = lt_wide_fold(acc[e]);
    int e0 = 0;
    for (; NI * NJ - e0 >= LT_LANES; e0 += LT_LANES) {
        lt_lanes each = lt_lanes_sum_each(folded + e0);
        memcpy(sums + e0, &each, sizeof each);
    }
    for (int e = e0; e < NI * NJ; e++)
        sums[e] = lt_lanes_sum(folded[e]);
#pragma GCC unroll 4
    for (int i = 0; i < NI; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NJ; j++)
            for (int k = whole; k < K; k++)
                sums[i * NJ + j] = lt_madd(A[i * lda + k], B[j * ldb + k], sums[i * NJ + j]);
}

#endif
