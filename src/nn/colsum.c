#include "nn/colsum.h"

#include <stddef.h>

#include "core/status.h"

void lt_colsum_add(float *d_sum, const float *m, int R, int C)
{
    LT_ASSERT(R >= 0 && C >= 0);
#pragma omp parallel for schedule(static) if ((long)R * C > 16384)
    for (int b = 0; b < lt_colsum_blocks(C); b++) {
        int c0 = b * LT_COLSUM_BLOCK;
        int width = lt_colsum_width(C, b);
        double acc[LT_COLSUM_BLOCK] = {0};
        for (int r = 0; r < R; r++) {
            const float *row = m + (size_t)r * C + c0;
            for (int c = 0; c < width; c++)
                acc[c] += row[c];
        }
        for (int c = 0; c < width; c++)
            d_sum[c0 + c] += (float)acc[c];
    }
}
