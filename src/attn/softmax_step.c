/* The cached softmax step's kernels (attn/softmax_step.h): compiled once
 * per kernel set (core/kernels.h), with multiply-adds fused as BLAS
 * kernels fuse them.
 *
 * The step's two products are written with vectors of the kernel set's
 * width (core/lanes.h; the compiler's own vectorisation of these loops
 * kept the partial sums in memory, reloading and storing them on every
 * term: 3x the instructions). Keys are cached in blocks of
 * LT_SOFTMAX_KEY_BLOCK rows stored transposed (D x KEY_BLOCK): a block's
 * scores are D multiply-adds of a broadcast query element with KEY_BLOCK
 * contiguous floats, into KEY_BLOCK / LT_LANES independent sums, each
 * score one sum in d order. Values stay row-major (rows x M): the output
 * adds weighted value rows, VALUE_LANES rows into separate partial sums so
 * the additions into one output element do not form one serial chain.
 * Every sum's order is fixed by the sizes, not the vector width: the sets
 * with fused multiply-adds give the same bits. */
#include "attn/softmax_step.h"

#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "core/lanes.h"
#include "core/vexp.h"

#define KEY_BLOCK LT_SOFTMAX_KEY_BLOCK
#define VALUE_LANES 2

/* Cached rows a step scores at a time (a multiple of KEY_BLOCK): one stack
 * block of scores between the online-softmax rescalings. */
#define STEP_BLOCK 512

/* s (n, rounded up to KEY_BLOCK) = scale * K q for cached rows [j0, j0 + n),
 * j0 a multiple of KEY_BLOCK; the rounding rows hold unset keys and are not
 * read by the caller. */
static void step_scores(float *restrict s, const float *restrict kt, const float *restrict q,
                        int j0, int n, int D, float scale)
{
    enum { SUMS = KEY_BLOCK / LT_LANES };
    int b0 = 0;
    /* two blocks at a time: twice the independent sums, so the
     * multiply-adds' latency overlaps (each sum's order is unchanged) */
    for (; b0 + 2 * KEY_BLOCK <= n; b0 += 2 * KEY_BLOCK) {
        const float *block = kt + (size_t)(j0 + b0) * D; /* 2 x (D x KEY_BLOCK) */
        const float *next = block + (size_t)D * KEY_BLOCK;
        lt_lanes acc[SUMS] = {{0}}, acc2[SUMS] = {{0}};
        for (int d = 0; d < D; d++)
            for (int i = 0; i < SUMS; i++) {
                acc[i] += q[d] * lt_lanes_load(block + (size_t)d * KEY_BLOCK + i * LT_LANES);
                acc2[i] += q[d] * lt_lanes_load(next + (size_t)d * KEY_BLOCK + i * LT_LANES);
            }
        for (int i = 0; i < SUMS; i++) {
            lt_lanes_store(s + b0 + i * LT_LANES, acc[i] * scale);
            lt_lanes_store(s + b0 + KEY_BLOCK + i * LT_LANES, acc2[i] * scale);
        }
    }
    for (; b0 < n; b0 += KEY_BLOCK) {
        const float *block = kt + (size_t)(j0 + b0) * D; /* D x KEY_BLOCK */
        lt_lanes acc[SUMS] = {{0}};
        for (int d = 0; d < D; d++)
            for (int i = 0; i < SUMS; i++)
                acc[i] += q[d] * lt_lanes_load(block + (size_t)d * KEY_BLOCK + i * LT_LANES);
        for (int i = 0; i < SUMS; i++)
            lt_lanes_store(s + b0 + i * LT_LANES, acc[i] * scale);
    }
}

/* o (M) = shrink * o + sum_j w_j V_j over n value rows: output vectors
 * [m0, m0 + VECS * LT_LANES), each row's weight broadcast once for them
 * all, VALUE_LANES rows at a time into separate sums. */
static inline void step_value_slab(float *restrict o, const float *restrict w,
                                   const float *restrict vc, int n, int M, int m0, float shrink,
                                   const int VECS)
{
    lt_lanes acc[VALUE_LANES][4] = {{{0}}};
    int j = 0;
    for (; j + VALUE_LANES <= n; j += VALUE_LANES)
        for (int l = 0; l < VALUE_LANES; l++)
            for (int i = 0; i < VECS; i++)
                acc[l][i] += w[j + l] * lt_lanes_load(vc + (size_t)(j + l) * M + m0 + i * LT_LANES);
    for (; j < n; j++)
        for (int i = 0; i < VECS; i++)
            acc[0][i] += w[j] * lt_lanes_load(vc + (size_t)j * M + m0 + i * LT_LANES);
    for (int i = 0; i < VECS; i++) {
        lt_lanes sum = acc[0][i];
        for (int l = 1; l < VALUE_LANES; l++)
            sum += acc[l][i];
        float *out = o + m0 + i * LT_LANES;
        lt_lanes_store(out, lt_lanes_load(out) * shrink + sum);
    }
}

static void step_values(float *restrict o, const float *restrict w, const float *restrict vc,
                        int n, int M, float shrink)
{
    int m0 = 0;
    for (; m0 + 4 * LT_LANES <= M; m0 += 4 * LT_LANES)
        step_value_slab(o, w, vc, n, M, m0, shrink, 4);
    for (; m0 + 2 * LT_LANES <= M; m0 += 2 * LT_LANES) /* M = 32: one pass, not two */
        step_value_slab(o, w, vc, n, M, m0, shrink, 2);
    for (; m0 + LT_LANES <= M; m0 += LT_LANES)
        step_value_slab(o, w, vc, n, M, m0, shrink, 1);
    /* the last M % LT_LANES elements: the slab's sums one lane at a time
     * (rows alternately into two sums, an odd last row into the first), so
     * an element's bits do not depend on the width that left it over */
    for (; m0 < M; m0++) {
        float acc[VALUE_LANES] = {0.0f, 0.0f};
        int j = 0;
        for (; j + VALUE_LANES <= n; j += VALUE_LANES)
            for (int l = 0; l < VALUE_LANES; l++)
                acc[l] = lt_madd(w[j + l], vc[(size_t)(j + l) * M + m0], acc[l]);
        for (; j < n; j++)
            acc[0] = lt_madd(w[j], vc[(size_t)j * M + m0], acc[0]);
        float sum = acc[0];
        for (int l = 1; l < VALUE_LANES; l++)
            sum += acc[l];
        o[m0] = lt_madd(o[m0], shrink, sum);
    }
}

/* One head's step over its `rows` cached rows: the online softmax a block
 * of STEP_BLOCK rows at a time (scores, block maximum, one vectorised
 * exponential pass, weighted value rows), the running output rescaled when
 * the maximum grows. */
static void step_head(float *o, const float *q, const float *kt, const float *vc, int rows, int D,
                      int M, float scale)
{
    float s[STEP_BLOCK];
    float max = -INFINITY, sum = 0.0f;
    for (int m = 0; m < M; m++)
        o[m] = 0.0f;
    for (int j0 = 0; j0 < rows; j0 += STEP_BLOCK) {
        int n = rows - j0 < STEP_BLOCK ? rows - j0 : STEP_BLOCK;
        step_scores(s, kt, q, j0, n, D, scale);
        float block_max = max;
#pragma omp simd reduction(max : block_max)
        for (int j = 0; j < n; j++)
            block_max = s[j] > block_max ? s[j] : block_max;
        /* 0 on the first block, where o and sum are still 0 */
        float shrink = lt_exp_nonpositive(max - block_max);
        max = block_max;
        float block_sum = lt_exp_shifted_sum(s, n, max);
        sum = sum * shrink + block_sum;
        step_values(o, s, vc + (size_t)j0 * M, n, M, shrink);
    }
    float inv = 1.0f / sum;
    for (int m = 0; m < M; m++)
        o[m] *= inv;
}

const lt_softmax_step_kernels LT_KERNEL_EXPORT(lt_softmax_step_kernels) = {.step_head = step_head};
