/* Fully connected layer: out = in W^T + b.
 *
 * The weight is stored (C_out, C_in), one row per output feature (the
 * layout of PyTorch's nn.Linear), so initialisers and checkpoints see rows
 * of W as output units. Products run through lt_sgemm, so results do not
 * depend on the thread count. (Sizes are not called I and O: <complex.h>,
 * which <cblas.h> pulls in, defines I.) */
#ifndef LT_NN_LINEAR_H
#define LT_NN_LINEAR_H

#include <stddef.h>

/* out = in W^T + bias. `bias` may be NULL (no bias). `out` must not
 * overlap `in`. R >= 0, C_in and C_out >= 1. */
void lt_linear_forward(float *out,          /* (R, C_out) */
                       const float *in,     /* (R, C_in) */
                       const float *weight, /* (C_out, C_in) */
                       const float *bias,   /* (C_out) or NULL */
                       int R, int C_in, int C_out);

/* lt_linear_forward for a few rows (R from 1 to LT_LINEAR_FEW_ROWS:
 * generation steps one position per sequence at batch 1): streams each
 * weight row once, straight into vector accumulators, the output features
 * split over the threads; each output is one fixed-order sum (the same bits
 * for any thread count; not the bits of the BLAS product). Measured on one
 * thread of a Zen 5 core, 256 x 768 weights in cache, at 16 rows: 137-156
 * GFLOP/s against OpenBLAS sgemm's 60 (Haswell kernels) and 75 (SkylakeX);
 * at one row 3.7x the sgemm. */
#define LT_LINEAR_FEW_ROWS 16
void lt_linear_rows_forward(float *out,          /* (R, C_out) */
                            const float *in,     /* (R, C_in) */
                            const float *weight, /* (C_out, C_in) */
                            const float *bias,   /* (C_out) or NULL */
                            int R, int C_in, int C_out);

/* The same, shared by the threads of the enclosing parallel region (every
 * one calls it; work-shared, with a barrier at the end): a step that runs
 * its layers in one region pays no fork and join per product. Called
 * outside a region it runs on the calling thread. Same bits either way. */
void lt_linear_rows_forward_team(float *out, const float *in, const float *weight,
                                 const float *bias, int R, int C_in, int C_out);

/* The few-rows product from packed panels: the weights rearranged once
 * (lt_linear_panels_pack) into blocks of 16 outputs, each a contiguous
 * (C_in, 16) array, read as one prefetched stream per block with no
 * horizontal sums (outer products of a weight vector and each row's input),
 * in tiles sized by the kernel set's registers (two panels by eight rows
 * on AVX-512, one by six on AVX2: src/nn/rows.c). Measured with the
 * AVX-512 tiles over the MNIST model's products (8 layers, 25 MB of
 * weights) at 16 rows on Zen 5, best of 200:
 * 134 GFLOP/s on one core, 256-264 on two (one panel by 16 rows, the
 * earlier tiling: 110-119 and 207-216; lt_linear_rows_forward's 63-69 and
 * 133-157; OpenBLAS sgemm reaches 250-280 on large products). Each output
 * is one sum in input order: the same bits for any thread count and any
 * row count (not lt_linear_rows_forward's bits). The panels cost the weights'
 * size again. */
size_t lt_linear_panels_floats(int C_in, int C_out);
void lt_linear_panels_pack(float *panels, /* lt_linear_panels_floats(C_in, C_out) */
                           const float *weight /* (C_out, C_in) */, int C_in, int C_out);
void lt_linear_panels_forward(float *out,          /* (R, C_out) */
                              const float *in,     /* (R, C_in) */
                              const float *panels, /* packed from (C_out, C_in) weights */
                              const float *bias,   /* (C_out) or NULL */
                              int R, int C_in, int C_out);
/* The same two, shared by the threads of the enclosing parallel region. */
void lt_linear_panels_pack_team(float *panels, const float *weight, int C_in, int C_out);
void lt_linear_panels_forward_team(float *out, const float *in, const float *panels,
                                   const float *bias, int R, int C_in, int C_out);
/* The calling thread's share of lt_linear_panels_forward_team, without
 * the barrier at its end: its outputs are columns [*first, *end) of every
 * row (an empty range: both 0), which it may go on using (a residual add,
 * an activation) before the team meets at a barrier. */
void lt_linear_panels_forward_own(float *out, const float *in, const float *panels,
                                  const float *bias, int R, int C_in, int C_out, int *first,
                                  int *end);

/* Adds the gradients: d_in += d_out W, d_weight += d_out^T in,
 * d_bias += column sums of d_out. Any of d_in, d_weight, d_bias may be NULL
 * to skip it (for example d_in of the first layer, or d_bias of a layer
 * without bias). */
void lt_linear_backward(float *d_in,         /* (R, C_in) or NULL */
                        float *d_weight,     /* (C_out, C_in) or NULL */
                        float *d_bias,       /* (C_out) or NULL */
                        const float *d_out,  /* (R, C_out) */
                        const float *in,     /* (R, C_in) */
                        const float *weight, /* (C_out, C_in) */
                        int R, int C_in, int C_out);

#endif
