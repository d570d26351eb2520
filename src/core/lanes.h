/* Sixteen floats as one vector (a zmm register under AVX-512, two ymm or
 * four xmm elsewhere) for the hand-tiled kernels: unaligned loads and
 * horizontal sums in a fixed order, so a kernel's bits depend only on its
 * sizes. Lanes fuse `acc += a * b` only in sources built with
 * -ffp-contract=fast; lt_madd matches them there. */
#ifndef LT_CORE_LANES_H
#define LT_CORE_LANES_H

#include <math.h>
#include <string.h>

enum { LT_LANES = 16 };

/* Without AVX-512 (a portable build) GCC notes that returning these 64-byte
 * vectors has another calling convention there; every function returning
 * them is static inline within one build, so no call crosses an ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float lt_lanes __attribute__((vector_size(LT_LANES * sizeof(float))));
typedef int lt_lane_index __attribute__((vector_size(LT_LANES * sizeof(int))));

static inline lt_lanes lt_lanes_load(const float *p)
{
    lt_lanes v;
    memcpy(&v, p, sizeof v); /* unaligned: rows are contiguous, not 64-byte aligned */
    return v;
}

static inline void lt_lanes_store(float *p, lt_lanes v) { memcpy(p, &v, sizeof v); }

/* a b + c rounded as a lane's `acc += a * b` is: one fused multiply-add
 * where the CPU has it. A scalar loop's `sum += a * b` is not enough: GCC
 * vectorises it as products, then in-order adds, two roundings. */
static inline float lt_madd(float a, float b, float c)
{
#if defined(__FMA__)
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}

/* The lanes' sum in a fixed order (a balanced tree, halves folded onto
 * each other), in vector registers. */
static inline float lt_lanes_sum(lt_lanes v)
{
    v += __builtin_shuffle(v, (lt_lane_index){8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7});
    v += __builtin_shuffle(v, (lt_lane_index){4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15});
    v += __builtin_shuffle(v, (lt_lane_index){2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    v += __builtin_shuffle(v, (lt_lane_index){1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    return v[0];
}

/* Sixteen sums at once: lane t of the result is the sum of v[t]'s lanes,
 * folded in a fixed order (halves, quarters, eighths, pairs) with two-source
 * shuffles, 45 operations where sixteen lt_lanes_sum calls take 128. */
static inline lt_lanes lt_lanes_sum16(const lt_lanes *v)
{
    const lt_lane_index lo8 = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
    const lt_lane_index hi8 = {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
    const lt_lane_index lo4 = {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
    const lt_lane_index hi4 = {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31};
    const lt_lane_index lo2 = {0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29};
    const lt_lane_index hi2 = {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31};
    const lt_lane_index even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
    const lt_lane_index odd = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
    lt_lanes h[8], q[4], e[2];
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) /* h[p]: v[2p]'s 8 partial sums, then v[2p+1]'s */
        h[p] = __builtin_shuffle(v[2 * p], v[2 * p + 1], lo8) +
               __builtin_shuffle(v[2 * p], v[2 * p + 1], hi8);
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) /* q[p]: 4 partial sums of v[4p] .. v[4p+3] */
        q[p] = __builtin_shuffle(h[2 * p], h[2 * p + 1], lo4) +
               __builtin_shuffle(h[2 * p], h[2 * p + 1], hi4);
#pragma GCC unroll 2
    for (int p = 0; p < 2; p++) /* e[p]: 2 partial sums of v[8p] .. v[8p+7] */
        e[p] = __builtin_shuffle(q[2 * p], q[2 * p + 1], lo2) +
               __builtin_shuffle(q[2 * p], q[2 * p + 1], hi2);
    return __builtin_shuffle(e[0], e[1], even) + __builtin_shuffle(e[0], e[1], odd);
}

#endif
