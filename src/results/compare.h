/* Comparing two result CSVs of the same table for regression tracking: the
 * engine of `ltbench compare`. Rows are matched on the schema's key
 * columns, and each metric is judged by its declared role (lt_col_role):
 *
 *   timing  regressed: worse than base by more than the threshold AND the
 *           runs' min..max ranges do not overlap; improved: better by as
 *           much, ranges disjoint; noise: beyond the threshold but the
 *           ranges overlap; else unchanged
 *   exact   any relative change beyond the exact tolerance fails, as
 *           "regressed" in the worse direction and "changed" in the better
 *   info    listed with `all`, never judged
 *
 * Cases whose status is not ok are "not run"; cases whose schema SETUP
 * columns or ranks differ are "not comparable". Runs on another CPU (or
 * wait policy) are judged on everything but their timings; runs of other
 * arithmetic (BLAS core, kernel set, build) on their counts (FLOPs, bytes,
 * parameters: lt_column.cpu_independent) exactly and their other exact
 * metrics within the cross-machine tolerance. A case one file has only with
 * another kernel is matched to it once, under an "other kernel" line. A
 * rate of a time judged beside it is listed with `all`, not counted. A
 * comparison that judged no metric is neither a pass nor a fail. */
#ifndef LT_RESULTS_COMPARE_H
#define LT_RESULTS_COMPARE_H

#include <stdio.h>

#include "results/table.h"

typedef struct lt_compare_options {
    double threshold;       /* percent, timings */
    double exact_tolerance; /* percent, exact metrics */
    /* percent, exact metrics other than counts between runs of other
     * arithmetic (BLAS, kernel set or build) */
    double cross_tolerance;
    double cross_absolute; /* ... or this much in the metric's own unit */
    double busy_load;       /* 0: half the cores the CSV records */
    const char *json;       /* PATH: also PATH-smaller.json and PATH-bigger.json */
    int overwrite;          /* replace existing --json files */
    int all;                /* list every metric */
    int exact_only;         /* only exact metrics fail (timings are reported) */
} lt_compare_options;

/* What a comparison concluded (and `ltbench compare`'s exit status). */
enum { LT_COMPARE_PASS = 0, LT_COMPARE_FAIL = 1, LT_COMPARE_NOTHING_JUDGED = 3 };

/* Compares `base_path` with `new_path`, recognising their table among
 * `schemas`, and prints the Markdown report and its summary line to `out`;
 * *failed = LT_COMPARE_FAIL when a judged metric regressed or changed,
 * LT_COMPARE_NOTHING_JUDGED when no metric could be judged. LT_E_INPUT for bad
 * input (unreadable or malformed CSV, unknown table, missing columns,
 * different tables, no case in common), before anything is printed;
 * LT_E_USAGE for a --json file that is an input or exists (unless
 * overwrite), before anything is read. */
lt_status lt_compare(const lt_schema *const *schemas, int count, const char *base_path,
                     const char *new_path, const lt_compare_options *o, FILE *out,
                     int *failed);

/* What each table's keys and metrics are, for --help. */
void lt_compare_describe(const lt_schema *const *schemas, int count, FILE *out);

#endif
