/* Beyond the paper: the N from which linear attention beats softmax: its
 * result tables, the paper's claims judged on them, and its registry entry
 * (the suite's sections, ablations included). */
#ifndef LT_BENCH_CROSSOVER_H
#define LT_BENCH_CROSSOVER_H

#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_crossover_cases, bench_crossover;

extern const bench_entry bench_crossover_entry;

#endif
