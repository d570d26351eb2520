#include "nn/embedding.h"

#include <stddef.h>
#include <string.h>

#include "nn/colsum.h"

/* Below this many floats a parallel region costs more than it saves. */
#define EMBEDDING_PARALLEL_MIN 16384

/* Rows [first, end) of the output: the table rows their tokens name. */
static void gather_rows(float *out, int ld, const int32_t *tokens, const float *table, int first,
                        int end, int C)
{
    for (int r = first; r < end; r++)
        memcpy(out + (size_t)r * ld, table + (size_t)tokens[r] * C, (size_t)C * sizeof(float));
}

lt_status lt_embedding_check_ids(const int32_t *tokens, int R, int V, const char *what)
{
    for (int r = 0; r < R; r++)
        if (tokens[r] < 0 || tokens[r] >= V)
            return lt_fail(LT_E_INPUT, "%s: id %d at position %d is outside the vocabulary [0, %d)",
                           what, (int)tokens[r], r, V);
    return LT_OK;
}

lt_status lt_embedding_forward(float *out, const int32_t *tokens, const float *table, int R,
                               int V, int C)
{
    return lt_embedding_forward_strided(out, C, tokens, table, R, V, C);
}

lt_status lt_embedding_forward_strided(float *out, int ld, const int32_t *tokens,
                                       const float *table, int R, int V, int C)
{
    LT_ASSERT(R >= 0 && V > 0 && C > 0 && ld >= C);
    LT_TRY(lt_embedding_check_ids(tokens, R, V, "embedding tokens"));
    /* A generation step's few rows take no parallel region at all: even an
     * inactive one (an if clause that is false) ends at a barrier that
     * costs a system call, once per generated position. */
    if ((long)R * C <= EMBEDDING_PARALLEL_MIN) {
        gather_rows(out, ld, tokens, table, 0, R, C);
        return LT_OK;
    }
#pragma omp parallel for schedule(static)
    for (int r = 0; r < R; r++)
        gather_rows(out, ld, tokens, table, r, r + 1, C);
    return LT_OK;
}

lt_status lt_embedding_backward(float *d_table, const float *d_out, const int32_t *tokens, int R,
                                int V, int C)
{
    LT_ASSERT(R >= 0 && V > 0 && C > 0);
    LT_TRY(lt_embedding_check_ids(tokens, R, V, "embedding tokens"));
    /* Two rows with the same id write the same table row, so threads split
     * the columns instead of the rows. */
#pragma omp parallel for schedule(static) if ((long)R * C > 16384)
    for (int b = 0; b < lt_colsum_blocks(C); b++) {
        int c0 = b * LT_COLSUM_BLOCK;
        int width = lt_colsum_width(C, b);
        for (int r = 0; r < R; r++) {
            float *dst = d_table + (size_t)tokens[r] * C + c0;
            const float *src = d_out + (size_t)r * C + c0;
            for (int c = 0; c < width; c++)
                dst[c] += src[c];
        }
    }
    return LT_OK;
}
