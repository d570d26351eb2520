/* Column reductions shared by the layers' parameter gradients.
 *
 * A gradient such as d_bias sums over rows; threads split the columns into
 * blocks of LT_COLSUM_BLOCK and each walks all rows of its block in order,
 * so no two threads write the same column and the sums are identical for
 * any thread count. */
#ifndef LT_NN_COLSUM_H
#define LT_NN_COLSUM_H

/* Columns per block: four cache lines of floats, wide enough to vectorise,
 * narrow enough to give several threads work at C = 256. */
#define LT_COLSUM_BLOCK 64

/* Number of column blocks for C columns. */
static inline int lt_colsum_blocks(int C) { return (C + LT_COLSUM_BLOCK - 1) / LT_COLSUM_BLOCK; }

/* Width of column block b (the last one may be narrower). */
static inline int lt_colsum_width(int C, int b)
{
    int left = C - b * LT_COLSUM_BLOCK;
    return left < LT_COLSUM_BLOCK ? left : LT_COLSUM_BLOCK;
}

/* d_sum += sum over rows of m (double accumulators). */
void lt_colsum_add(float *d_sum,   /* (C) */
                   const float *m, /* (R, C) */
                   int R, int C);

/* d_sum[c] += sum_r m[r][c] * (x[r][c] - shift[r]) * scale[r]: the gain
 * gradient of a normalisation (shift = mean, scale = 1 / std). */
void lt_colsum_add_normalized(float *d_sum,       /* (C) */
                              const float *m,     /* (R, C) */
                              const float *x,     /* (R, C) */
                              const float *shift, /* (R) */
                              const float *scale, /* (R) */
                              int R, int C);

#endif
