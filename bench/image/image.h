/* Autoregressive image generation (the paper's Tables 1 and 2): its result
 * tables, the paper's claims judged on them, and its registry entry (the
 * suite's sections, ablations included). */
#ifndef LT_BENCH_IMAGE_H
#define LT_BENCH_IMAGE_H

#include <stdint.h>
#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_image_curves, bench_image_results;

/* Tables 1 and 2's claims (an lt_conclude_fn). */
int bench_image_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                       lt_claim *claims);

/* The paper's appendix: seconds per CIFAR-10 image at batch 1 on a CPU,
 * per generation mode, against the rows of a --gen-only run at its
 * architecture. */
int bench_image_cpu_claims(const lt_csv_table *const *runs, int count,
                           const lt_csv_table *paper, lt_claim *claims);

/* CIFAR-10 at the paper's size: Table 2's speed-ups and the appendix's CPU
 * times, from the paper's Table 2 joined with its appendix's CPU rows. */
int bench_image_paper_cifar_claims(const lt_csv_table *const *runs, int count,
                                   const lt_csv_table *paper, lt_claim *claims);

/* The MNIST ablations under their section: softmax and linear of each run
 * folder of `runs` after the first (the preset's) beside the first's: test
 * bits/dim and linear's relative gap, and the gap in training bits/dim at
 * several update counts. The runs whose results and curves are in `out`;
 * nothing without the first's or without any other. */
void bench_image_ablation(FILE *f, const char *out, const char *const *runs);

/* The run in the report's words: its training and test images, trained
 * or not (an lt_section_describe_fn). */
void bench_image_describe(FILE *f, const lt_csv_table *t);

/* Grids are drawn GRID_SCALE times their pixels' size, readable as they
 * are; GRID_PAD pixels (before scaling) between the tiles. */
enum { GRID_SCALE = 4, GRID_PAD = 2, GRID_BACKGROUND = 128, GRID_MARK = 255 };

/* A grid of tiles `tile` pixels square, drawn GRID_SCALE times larger into
 * *out (lt_mem_alloc'd), the prompt ends marked where `mark` (a completions
 * grid of `cols` tiles a row: originals above, completions below). */
lt_status bench_image_enlarge_grid(uint8_t **out, const uint8_t *grid, int width, int height,
                                   int channels, int tile, int cols, int mark);

/* A run's sample or completion grid as the report shows it (an
 * lt_section_grid_fn): grids written at actual size by earlier revisions
 * are drawn as the program draws them now, enlarged, prompt ends marked. */
int bench_image_grid_view(const char *grid, const char *completions, const char *view, int mark);

extern const bench_entry bench_image_entry;

#endif
