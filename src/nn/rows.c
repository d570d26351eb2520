/* The fully connected layer for a few rows: generation steps one position
 * per sequence, so its products are 1 to 16 rows against a whole weight
 * matrix. A BLAS sgemm pays for packing and blocking sized for large
 * products there; this kernel streams each weight row once per block of
 * rows, straight from memory into vector accumulators, with the output
 * features split over the threads so both stream. Each output is one
 * fixed-order sum, so the result does not depend on the thread count. */
#include <stddef.h>
#include <string.h>

#include "core/status.h"
#include "nn/linear.h"

enum { LANES = 16, OUT_BLOCK = 4, ROW_BLOCK = 4 };

typedef float lanes __attribute__((vector_size(LANES * sizeof(float))));

static lanes load(const float *p)
{
    lanes v;
    memcpy(&v, p, sizeof v); /* unaligned: rows are contiguous, not 64-byte aligned */
    return v;
}

typedef int lane_index __attribute__((vector_size(LANES * sizeof(int))));

/* The lanes' sum in a fixed order (a balanced tree, halves folded onto
 * each other), in vector registers. */
static inline float hsum(lanes v)
{
    v += __builtin_shuffle(v, (lane_index){8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7});
    v += __builtin_shuffle(v, (lane_index){4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15});
    v += __builtin_shuffle(v, (lane_index){2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    v += __builtin_shuffle(v, (lane_index){1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    return v[0];
}

/* out[r][o0 + i] for rows r0 .. r0 + nr and outputs o0 .. o0 + no; inlined
 * with constant no and nr, so the accumulators live in registers. */
static inline __attribute__((always_inline)) void block(float *out, const float *in,
                                                        const float *W, const float *bias,
                                                        int r0, const int nr, int o0,
                                                        const int no, int C_in, int C_out)
{
    lanes acc[OUT_BLOCK][ROW_BLOCK];
    for (int i = 0; i < no; i++)
        for (int j = 0; j < nr; j++)
            acc[i][j] = (lanes){0};
    const int whole = C_in / LANES * LANES;
    for (int k = 0; k < whole; k += LANES) {
        lanes w[OUT_BLOCK], x[ROW_BLOCK];
        for (int i = 0; i < no; i++)
            w[i] = load(W + (size_t)(o0 + i) * C_in + k);
        for (int j = 0; j < nr; j++)
            x[j] = load(in + (size_t)(r0 + j) * C_in + k);
        for (int i = 0; i < no; i++)
            for (int j = 0; j < nr; j++)
                acc[i][j] += w[i] * x[j];
    }
    for (int i = 0; i < no; i++)
        for (int j = 0; j < nr; j++) {
            float sum = hsum(acc[i][j]);
            const float *w = W + (size_t)(o0 + i) * C_in;
            const float *x = in + (size_t)(r0 + j) * C_in;
            for (int k = whole; k < C_in; k++)
                sum += w[k] * x[k];
            out[(size_t)(r0 + j) * C_out + o0 + i] = (bias ? bias[o0 + i] : 0.0f) + sum;
        }
}

/* A block of outputs over every row, four rows at a time. */
static void outputs(float *out, const float *in, const float *W, const float *bias, int R,
                    int o0, int no, int C_in, int C_out)
{
    for (int r0 = 0; r0 < R; r0 += ROW_BLOCK) {
        int nr = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
        if (no == OUT_BLOCK && nr == 4)
            block(out, in, W, bias, r0, 4, o0, OUT_BLOCK, C_in, C_out);
        else if (no == OUT_BLOCK && nr == 1)
            block(out, in, W, bias, r0, 1, o0, OUT_BLOCK, C_in, C_out);
        else if (no == OUT_BLOCK && nr == 2)
            block(out, in, W, bias, r0, 2, o0, OUT_BLOCK, C_in, C_out);
        else if (no == OUT_BLOCK && nr == 3)
            block(out, in, W, bias, r0, 3, o0, OUT_BLOCK, C_in, C_out);
        else /* the last outputs: one at a time */
            for (int i = 0; i < no; i++)
                for (int j = 0; j < nr; j++)
                    block(out, in, W, bias, r0 + j, 1, o0 + i, 1, C_in, C_out);
    }
}

void lt_linear_rows_forward(float *out, const float *in, const float *weight, const float *bias,
                            int R, int C_in, int C_out)
{
    LT_ASSERT(R >= 0 && R <= LT_LINEAR_FEW_ROWS && C_in > 0 && C_out > 0);
    const int blocks = (C_out + OUT_BLOCK - 1) / OUT_BLOCK;
    /* A weight matrix worth spreading: both threads stream half of it. */
#pragma omp parallel for schedule(static) if ((long)C_out * C_in >= 16384)
    for (int b = 0; b < blocks; b++) {
        int o0 = b * OUT_BLOCK, no = C_out - o0 < OUT_BLOCK ? C_out - o0 : OUT_BLOCK;
        outputs(out, in, weight, bias, R, o0, no, C_in, C_out);
    }
}
