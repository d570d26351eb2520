/* The table src/nn/rows.c exports once per kernel set (core/kernels.h);
 * nn/linear.c calls the active set's. */
#ifndef LT_NN_ROWS_KERNELS_H
#define LT_NN_ROWS_KERNELS_H

typedef struct lt_rows_kernels {
    void (*rows_forward_team)(float *out, const float *in, const float *weight,
                              const float *bias, int R, int C_in, int C_out);
    void (*panels_pack_team)(float *panels, const float *weight, int C_in, int C_out);
    void (*panels_forward_own)(float *out, const float *in, const float *panels,
                               const float *bias, int R, int C_in, int C_out, int *first,
                               int *end);
} lt_rows_kernels;

/* A panel: 16 outputs, whatever the kernel set's vector width, so the
 * packed layout and its bytes are the same on every set. */
enum { LT_ROWS_PANEL = 16 };

#endif
