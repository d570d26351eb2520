/* Every result table ltbench writes, each column declared once (name,
 * role, better direction, unit, how it prints) with the figures drawn from
 * it. The experiments fill these tables; compare, plot and suite read them
 * from here, so they link no experiment and no training code. */
#ifndef LT_BENCH_TABLES_H
#define LT_BENCH_TABLES_H

#include "results/table.h"

extern const lt_schema bench_copy_curves, bench_copy_summary;
extern const lt_schema bench_scaling;
extern const lt_schema bench_image_curves, bench_image_results;
extern const lt_schema bench_speech_curves, bench_speech_results;
extern const lt_schema bench_crossover_cases, bench_crossover; /* beyond the paper */
extern const lt_schema bench_decode;

/* All of them, for the tools. */
extern const lt_schema *const bench_tables[];
extern const int bench_table_count;

#endif
