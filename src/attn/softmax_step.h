/* The cached softmax step's kernels, one copy per kernel set
 * (core/kernels.h): src/attn/softmax_step.c exports the table,
 * src/attn/softmax.c keeps the cache and calls the active set's. */
#ifndef LT_ATTN_SOFTMAX_STEP_H
#define LT_ATTN_SOFTMAX_STEP_H

/* Keys are cached transposed in blocks of this many rows (D x block). */
#define LT_SOFTMAX_KEY_BLOCK 32

typedef struct lt_softmax_step_kernels {
    /* o (M) = softmax(scale K q) V over one head's `rows` cached rows: kt
     * the transposed key blocks, vc the value rows (rows x M) */
    void (*step_head)(float *o, const float *q, const float *kt, const float *vc, int rows,
                      int D, int M, float scale);
} lt_softmax_step_kernels;

#endif
