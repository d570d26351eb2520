/* The registry: every experiment and tool ltbench has, one entry each. An
 * experiment's entry (in its folder, bench/<name>/) carries its result
 * tables and the suite's sections for it (its seeds, sweeps and ablations,
 * each with its claims); the dispatcher, suite, compare, plot and the
 * report iterate over the registry and name no experiment themselves. A
 * new experiment is a folder with its entry, a line in registry.c and its
 * folder in bench/meson.build. */
#ifndef LT_BENCH_REGISTRY_H
#define LT_BENCH_REGISTRY_H

#include "common/entry.h"



extern const bench_entry *const bench_registry[];
extern const int bench_registry_count;

/* The entry named `name` among `entries`, or NULL. */
const bench_entry *bench_find(const bench_entry *const *entries, int count, const char *name);

/* Every result table of `entries`, in their order: how many (at most
 * `capacity`). */
int bench_tables_of(const bench_entry *const *entries, int count, const lt_schema **out,
                    int capacity);

/* Every suite section of `entries`, by part (the paper's experiments, then
 * seeds, sweeps, ablations) and within a part in registry order: how many
 * (at most `capacity`). */
int bench_sections_of(const bench_entry *const *entries, int count, lt_report_section *out,
                      int capacity);

/* The names of the entries with suite sections, `separator` between them
 * ("copy, scaling, ..." or "copy,scaling,..."). */
void bench_suite_names(const bench_entry *const *entries, int count, const char *separator,
                       char *buf, size_t size);

#endif
