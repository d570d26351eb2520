/* What the registry holds of each experiment and tool (bench/registry.h
 * lists them): below the experiments, so each declares its own entry. */
#ifndef LT_BENCH_ENTRY_H
#define LT_BENCH_ENTRY_H

#include "results/report.h"
#include "results/table.h"

typedef enum bench_kind {
    BENCH_PAPER,  /* one of the paper's experiments */
    BENCH_BEYOND, /* a sweep the paper does not run */
    BENCH_TOOL,   /* works on others' results or inputs */
} bench_kind;

typedef struct bench_entry {
    const char *name;    /* `ltbench NAME` runs ltbench-NAME */
    const char *summary; /* one line, for ltbench --help */
    bench_kind kind;
    const lt_schema *const *tables; /* the result tables it writes */
    int table_count;
    const lt_report_section *sections; /* the suite's runs of it, in order */
    int section_count;
} bench_entry;

#endif
