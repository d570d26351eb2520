/* The fully connected layer for a few rows: generation steps one position
 * per sequence, so its products are 1 to 16 rows against a whole weight
 * matrix. A BLAS sgemm pays there for packing the whole weight matrix on
 * every call (as much time as the products at 16 rows) and for blocking
 * sized for large products; this kernel streams each weight row once per
 * block of four rows, straight from memory into vector accumulators, with
 * the output features split over the threads so both stream. Each output
 * is one fixed-order sum, so the result does not depend on the thread
 * count. Compiled with multiply-adds fused (src/nn/meson.build), as BLAS
 * kernels are. */
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "core/kernels.h"
#include "core/lanes.h"
#include "core/status.h"
#include "nn/linear.h"
#include "nn/rows_kernels.h"

/* Blocks of outputs x rows as lanes.h's dot tile: 4 x 4 on AVX-512, 2 x 2
 * on 16 vector registers. */
enum { OUT_BLOCK = LT_DOT_TILE, ROW_BLOCK = LT_DOT_TILE };

typedef lt_lanes lanes;

/* out[r][o0 + i] for rows r0 .. r0 + nr and outputs o0 .. o0 + no; inlined
 * with constant no and nr, so the accumulators live in registers. */
static inline __attribute__((always_inline)) void block(float *out, const float *in,
                                                        const float *W, const float *bias,
                                                        int r0, const int nr, int o0,
                                                        const int no, int C_in, int C_out)
{
    float sums[OUT_BLOCK * ROW_BLOCK];
    lt_wide_dots(no, nr, W + (size_t)o0 * C_in, C_in, in + (size_t)r0 * C_in, C_in, C_in, sums);
#pragma GCC unroll 4
    for (int i = 0; i < no; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nr; j++)
            out[(size_t)(r0 + j) * C_out + o0 + i] = (bias ? bias[o0 + i] : 0.0f) + sums[i * nr + j];
}

/* A block of outputs over every row, four rows at a time. */
static void outputs(float *out, const float *in, const float *W, const float *bias, int R,
                    int o0, int no, int C_in, int C_out)
{
    for (int r0 = 0; r0 < R; r0 += ROW_BLOCK) {
        int nr = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
        if (no == OUT_BLOCK && nr == ROW_BLOCK)
            block(out, in, W, bias, r0, ROW_BLOCK, o0, OUT_BLOCK, C_in, C_out);
        else if (no == OUT_BLOCK && nr == 1)
            block(out, in, W, bias, r0, 1, o0, OUT_BLOCK, C_in, C_out);
#if LT_DOT_TILE > 2
        else if (no == OUT_BLOCK && nr == 2)
            block(out, in, W, bias, r0, 2, o0, OUT_BLOCK, C_in, C_out);
        else if (no == OUT_BLOCK && nr == 3)
            block(out, in, W, bias, r0, 3, o0, OUT_BLOCK, C_in, C_out);
#endif
        else /* the last outputs: one at a time */
            for (int i = 0; i < no; i++)
                for (int j = 0; j < nr; j++)
                    block(out, in, W, bias, r0 + j, 1, o0 + i, 1, C_in, C_out);
    }
}

static void rows_forward_team(float *out, const float *in, const float *weight,
                              const float *bias, int R, int C_in, int C_out)
{
    LT_ASSERT(R >= 0 && R <= LT_LINEAR_FEW_ROWS && C_in > 0 && C_out > 0);
    const int blocks = (C_out + OUT_BLOCK - 1) / OUT_BLOCK;
#pragma omp for schedule(static)
    for (int b = 0; b < blocks; b++) {
        int o0 = b * OUT_BLOCK, no = C_out - o0 < OUT_BLOCK ? C_out - o0 : OUT_BLOCK;
        outputs(out, in, weight, bias, R, o0, no, C_in, C_out);
    }
}

/* ---- packed panels: the outer-product form for a few rows ----
 *
 * The kernel above reduces each output along the input (a dot product per
 * output and row): at 16 rows it ends every block of 4 outputs x 4 rows
 * with a horizontal sum, re-reads each weight row once per block of rows,
 * and its four weight streams cross a 4 KiB page every 1024 inputs, where
 * the hardware prefetcher stops. Measured on this machine's weights of the
 * MNIST model (25 MB, more than the cache holds), it reached about 65
 * GFLOP/s on one core. The panels hold each block of 16 outputs as one
 * contiguous (C_in, 16) array, so a block is one sequential stream,
 * prefetched ahead in software across pages: per input, one vector of 16
 * weights times each row's input value (broadcast) adds into one
 * accumulator per row. No horizontal sums; every output is one sum in
 * input order, the same for any row count and thread count. */

/* A panel is 16 outputs whatever the vector width (PANEL_VECS vectors), so
 * its layout and bytes do not depend on the kernel set. */
enum { PANEL = LT_ROWS_PANEL, PANEL_VECS = PANEL / LT_LANES, PREFETCH_INPUTS = 64 /* 4 KiB ahead: a page */ };

static void panels_pack_team(float *panels, const float *weight, int C_in, int C_out)
{
    const int blocks = (C_out + PANEL - 1) / PANEL;
#pragma omp for schedule(static)
    for (int b = 0; b < blocks; b++) {
        float *panel = panels + (size_t)b * PANEL * C_in;
        for (int i = 0; i < PANEL; i++) {
            int o = b * PANEL + i;
            const float *row = weight + (size_t)o * C_in;
            for (int k = 0; k < C_in; k++) /* the padding outputs are zero weights */
                panel[(size_t)k * PANEL + i] = o < C_out ? row[k] : 0.0f;
        }
    }
}

/* A tile: NP panels (16 outputs each, from panel b) over NR rows (from r0);
 * inlined with constant NP and NR so the NP x NR accumulators live in
 * registers. Per input it loads NP weight vectors and NR input values
 * (broadcast) for NP x NR multiply-adds: a tile of 2 panels x 8 rows
 * needs 10 loads for 16 multiply-adds where one panel x 16 rows needs 17,
 * and runs 1.15-1.2x faster (means of 200 passes; best of 200: 1.2-1.3x)
 * over the MNIST model's products at 16 rows on two Zen 5 cores (the
 * loads, not the multiply-adds, were the limit). With 16 vector registers
 * (AVX2, SSE2) a panel is several vectors and the tile one panel over as
 * many rows as leave room for the loaded weights and the broadcast input
 * (and a product without fused multiply-adds): 6 rows on AVX2, 2 on SSE2.
 * The same sums as any other tiling: each output adds its inputs in order
 * into one accumulator. The tile is the small products' outer form
 * (lt_outer_tile, core/lanes.h) over the panels, with a prefetch. */
enum {
    TILE_PANELS = PANEL_VECS == 1 && LT_VECTOR_REGISTERS >= 32 ? 2 : 1,
    TILE_VECS = TILE_PANELS * PANEL_VECS,
    TILE_ROWS_FIT = (LT_VECTOR_REGISTERS - TILE_VECS - 1 - !LT_FUSED_MADD) / TILE_VECS,
    TILE_ROWS = TILE_ROWS_FIT < 8 ? TILE_ROWS_FIT : 8,
};

static inline __attribute__((always_inline)) void tile(float *out, const float *in,
                                                       const float *panels, const float *bias,
                                                       const int NP, const int NR, int b, int r0,
                                                       int C_in, int C_out)
{
    lanes acc[TILE_ROWS * TILE_VECS];
    /* the rows' inputs broadcast, the NP panels' rows of 16 weights side by side */
    lt_outer_tile(NR, NP * PANEL_VECS, PANEL_VECS, C_in, in + (size_t)r0 * C_in, C_in, 1,
                  panels + (size_t)b * PANEL * C_in, PANEL, (long)PANEL * C_in, PREFETCH_INPUTS,
                  acc);
    for (int p = 0; p < NP; p++) {
        const int o0 = (b + p) * PANEL, valid = C_out - o0 < PANEL ? C_out - o0 : PANEL;
        for (int r = 0; r < NR; r++) {
            float lane[PANEL];
            memcpy(lane, &acc[r * NP * PANEL_VECS + p * PANEL_VECS], sizeof lane);
            float *row = out + (size_t)(r0 + r) * C_out + o0;
            for (int i = 0; i < valid; i++)
                row[i] = (bias ? bias[o0 + i] : 0.0f) + lane[i];
        }
    }
}

/* NP panels from b over all R rows: tiles of TILE_ROWS rows, then one
 * tile of the rows left. */
static inline __attribute__((always_inline)) void panels_over_rows(
    float *out, const float *in, const float *panels, const float *bias, const int NP, int R,
    int b, int C_in, int C_out)
{
    int r0 = 0;
    for (; R - r0 >= TILE_ROWS; r0 += TILE_ROWS)
        tile(out, in, panels, bias, NP, TILE_ROWS, b, r0, C_in, C_out);
    switch (R - r0) {
#define ROWS_CASE(n)                                                                           \
    case n: /* only n < TILE_ROWS is left */                                                \
        if (n < TILE_ROWS)                                                                     \
            tile(out, in, panels, bias, NP, n, b, r0, C_in, C_out);                            \
        break;
        ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6)
        ROWS_CASE(7)
#undef ROWS_CASE
    default: break; /* none left */
    }
}

static void panels_forward_own(float *out, const float *in, const float *panels,
                              const float *bias, int R, int C_in, int C_out, int *first, int *end)
{
    LT_ASSERT(R >= 0 && R <= LT_LINEAR_FEW_ROWS && C_in > 0 && C_out > 0);
    const int blocks = (C_out + PANEL - 1) / PANEL, groups = (blocks + TILE_PANELS - 1) / TILE_PANELS;
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    const int t0 = (int)((long)groups * me / threads), t1 = (int)((long)groups * (me + 1) / threads);
    *first = t0 * TILE_PANELS * PANEL;
    *end = t1 * TILE_PANELS * PANEL < C_out ? t1 * TILE_PANELS * PANEL : C_out;
    if (R == 0 || *first >= *end) {
        *end = *first = 0;
        return;
    }
    for (int t = t0; t < t1; t++) {
        const int b = t * TILE_PANELS;
        if (blocks - b >= TILE_PANELS)
            panels_over_rows(out, in, panels, bias, TILE_PANELS, R, b, C_in, C_out);
        else /* an odd panel at the end */
            panels_over_rows(out, in, panels, bias, 1, R, b, C_in, C_out);
    }
}

const lt_rows_kernels LT_KERNEL_EXPORT(lt_rows_kernels) = {
    .rows_forward_team = rows_forward_team,
    .panels_pack_team = panels_pack_team,
    .panels_forward_own = panels_forward_own,
};
