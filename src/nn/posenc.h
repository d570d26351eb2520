/* Sinusoidal positional encoding (Vaswani et al. 2017, section 3.5):
 *   pe[pos][2i]     = sin(pos / 10000^(2i / C))
 *   pe[pos][2i + 1] = cos(pos / 10000^(2i / C))
 * interleaved, so for odd C the last column is a sine. Values are computed
 * in double and rounded once.
 *
 * There are no parameters. Added to the input (lt_posenc_add) its backward
 * is the identity: the gradient of x flows through unchanged, so there is no
 * backward function. Concatenated (lt_posenc_fill into spare columns of a
 * wider input row) those columns receive a gradient that nothing consumes. */
#ifndef LT_NN_POSENC_H
#define LT_NN_POSENC_H

/* Writes the encodings of positions pos0 .. pos0 + N - 1 into columns
 * [c0, c0 + C) of N rows of width ld; other columns are untouched. For a
 * plain (N, C) table use ld = C, c0 = 0; for one generated token at
 * position t use pos0 = t, N = 1. Requires c0 + C <= ld. */
void lt_posenc_fill(float *pe, /* (N, ld), columns [c0, c0 + C) written */
                    int pos0, int N, int C, int ld, int c0);

/* x[b][n] += pe[n] for every batch entry b. */
void lt_posenc_add(float *x,        /* (B, N, C) */
                   const float *pe, /* (N, C) */
                   int B, int N, int C);

#endif
