/* The vocabulary of result columns the experiments' tables are written in:
 * roles, provenance filled from flags, and the timings of an attention case
 * (scaling's and crossover's). Only the tables.c files include it. */
#ifndef LT_BENCH_COLUMNS_H
#define LT_BENCH_COLUMNS_H

#include "results/table.h"

/* Roles: a KEY identifies a case (LABEL: and always names it in compare's
 * report), SETUP must agree between runs compared, TIMING and EXACT are
 * judged (LOW: lower is better), INFO is listed, NOTE only recorded. */
#define KEY(n) {.name = n, .role = LT_COL_KEY}
#define LABEL(n) {.name = n, .role = LT_COL_KEY, .label = 1}
#define SETUP(n) {.name = n, .role = LT_COL_SETUP}
#define INFO(n) {.name = n, .role = LT_COL_INFO}
#define NOTE(n) {.name = n, .role = LT_COL_NOTE}
#define EXACT_LOW(n, u) {.name = n, .role = LT_COL_EXACT, .unit = u}
#define EXACT_HIGH(n, u) {.name = n, .role = LT_COL_EXACT, .higher_is_better = 1, .unit = u}
/* A count (FLOPs, bytes, parameters): the same on every CPU */
#define COUNT_LOW(n, u) {.name = n, .role = LT_COL_EXACT, .unit = u, .cpu_independent = 1}
#define COUNTED .cpu_independent = 1
/* Printed: by the program after a run and in the suite's report. */
#define SHOWN(h, f, s) .header = h, .format = f, .scale = s
#define MIB (1.0 / 1048576.0)

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Key columns filled from a flag (or the run: $experiment, $model,
 * $kernel, $threads, $dropout) by the driver; SHOWN ones print. */
#define FROM_KEY(n, f) {.name = n, .role = LT_COL_KEY, .from = f}
#define FROM_LABEL(n, f, h) {.name = n, .role = LT_COL_KEY, .label = 1, .from = f, SHOWN(h, NULL, 0)}
#define FROM_THREADS {.name = "threads", .role = LT_COL_SETUP, .from = "$threads"}
#define FROM_EXPERIMENT {.name = "experiment", .role = LT_COL_NOTE, .from = "$experiment"}
/* the dropout the model applies: --dropout's for a transformer, 0 for a Bi-LSTM */
#define FROM_DROPOUT {.name = "dropout", .role = LT_COL_KEY, .from = "$dropout"}
/* the same, in image and speech results, which gained the column later */
#define FROM_DROPOUT_ADDED                                                                     \
    {.name = "dropout", .role = LT_COL_KEY, .from = "$dropout", .older_files_lack = 1}


/* How an attention case ran and its times (lt_attn_time_case): scaling's
 * and crossover's cases. *_samples_s: every timed run's seconds,
 * space-separated, for a statistic over repeats (ltbench ab). */
#define ATTN_CASE_TIMINGS                                                                     \
    SETUP("threads"), NOTE("seed"), NOTE("warmup"), NOTE("repeats"), NOTE("status"),          \
        {.name = "fwd_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "fwd"},        \
        NOTE("fwd_min_s"), NOTE("fwd_max_s"),                                                 \
        {.name = "fwd_bwd_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "fwd_bwd"}, \
        NOTE("fwd_bwd_min_s"), NOTE("fwd_bwd_max_s"),                                         \
        NOTE("fwd_samples_s"), NOTE("fwd_bwd_samples_s")

#endif
