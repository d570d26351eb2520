#include "nn/colsum.h"

#include <stddef.h>

#include "core/status.h"

/* Both public sums; x == NULL selects the plain one. The test on x is loop
 * invariant, so the compiler lifts it out of the inner loop. */
static void column_sums(float *d_sum, const float *m, const float *x, const float *shift,
                        const float *scale, int R, int C)
{
    LT_ASSERT(R >= 0 && C >= 0);
#pragma omp parallel for schedule(static) if ((long)R * C > 16384)
    for (int b = 0; b < lt_colsum_blocks(C); b++) {
        int c0 = b * LT_COLSUM_BLOCK;
        int width = lt_colsum_width(C, b);
        double acc[LT_COLSUM_BLOCK] = {0};
        for (int r = 0; r < R; r++) {
            const float *row = m + (size_t)r * C + c0;
            if (x) {
                const float *x_row = x + (size_t)r * C + c0;
                float mu = shift[r], s = scale[r];
                for (int c = 0; c < width; c++)
                    acc[c] += row[c] * ((x_row[c] - mu) * s);
            } else {
                for (int c = 0; c < width; c++)
                    acc[c] += row[c];
            }
        }
        for (int c = 0; c < width; c++)
            d_sum[c0 + c] += (float)acc[c];
    }
}

void lt_colsum_add(float *d_sum, const float *m, int R, int C)
{
    column_sums(d_sum, m, NULL, NULL, NULL, R, C);
}

void lt_colsum_add_normalized(float *d_sum, const float *m, const float *x, const float *shift,
                              const float *scale, int R, int C)
{
    column_sums(d_sum, m, x, shift, scale, R, C);
}
