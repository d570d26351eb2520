#include "nn/posenc.h"

#include <math.h>
#include <stddef.h>

#include "core/status.h"

/* Below this many floats the encodings are computed on the calling thread,
 * with no parallel region: a generation step fills one row per position,
 * and even an inactive region ends at a barrier that costs a system call. */
#define POSENC_PARALLEL_MIN 16384

/* The C columns of position pos. */
static void fill_row(float *row, double pos, int C)
{
    double log_base = log(10000.0);
    for (int c = 0; c < C; c++) {
        int pair = c / 2;
        double angle = pos * exp(-log_base * (2.0 * pair) / C);
        row[c] = (float)(c % 2 == 0 ? sin(angle) : cos(angle));
    }
}

void lt_posenc_fill(float *pe, int pos0, int N, int C, int ld, int c0)
{
    LT_ASSERT(pos0 >= 0 && N >= 0 && C > 0 && c0 >= 0 && c0 + C <= ld);
    if ((long)N * C <= POSENC_PARALLEL_MIN) {
        for (int n = 0; n < N; n++)
            fill_row(pe + (size_t)n * ld + c0, (double)pos0 + n, C);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        fill_row(pe + (size_t)n * ld + c0, (double)pos0 + n, C);
}

void lt_posenc_add(float *x, const float *pe, int B, int N, int C)
{
    LT_ASSERT(B >= 0 && N >= 0 && C > 0);
    long rows = (long)B * N;
#pragma omp parallel for schedule(static) if (rows * C > 16384)
    for (long r = 0; r < rows; r++) {
        float *dst = x + (size_t)r * C;
        const float *src = pe + (size_t)(r % N) * C;
        for (int c = 0; c < C; c++)
            dst[c] += src[c];
    }
}
