/* What the experiments' claims and ablations share: reading the paper's
 * tables and the runs' curves, judging over seeds, and the report tables
 * with a column per update count. Each experiment's claims.c holds its own
 * rules; a rule is written into the claim it decides, so a reader can check
 * the verdict against the table it sits under. */
#ifndef LT_BENCH_JUDGING_H
#define LT_BENCH_JUDGING_H

#include <stdio.h>

#include "results/claims.h"

/* Seeds a quality verdict rests on: three where a run takes under an hour
 * (copy, speech), two elsewhere (image). */
enum { BENCH_SEEDS_SHORT_RUN = 3, BENCH_SEEDS_LONG_RUN = 2 };

/* A number of the paper's table by its method column; NAN without it. */
double bench_paper_num(const lt_csv_table *paper, const char *method, const char *column);

/* A quality claim that cannot be judged at this preset says so (returns 1). */
int bench_preset_unjudged(lt_claim *c, const lt_csv_table *t);

/* A speed claim on a run timed beside other work cannot be judged: says
 * so in its rule (returns 1). Quality claims do not depend on the load. */
int bench_busy_unjudged(lt_claim *c, const lt_csv_table *t);

/* The rule's note on seeds: how many were compared of how many it needs. */
void bench_seeds_note(lt_claim *c, int pairs, int need);

/* The two verdicts of one claim made one: the second only qualifies the
 * first (it turns "holds" into "holds with a caveat"). */
lt_verdict bench_qualified(lt_verdict main, lt_verdict qualifier);

/* Row r's text in `column`; "" without it. */
const char *bench_cell(const lt_csv_table *t, long long r, const char *column);

/* Pair tests for lt_seeds_judge: |a - b| <= *(double *)bound; a < b. */
int bench_within(double a, double b, const void *bound);
int bench_below(double a, double b, const void *arg);

/* Mean of `column` of `variant`'s curve over the `window` updates ending
 * at `step`; NAN when the curve does not cover them all. */
double bench_window_mean(const lt_csv_table *curves, const char *variant, const char *column,
                         long step, long window);

/* The row of curves with the largest step among those whose `column`
 * equals `value` (every row when column is NULL); -1 if none. */
long long bench_last_step_row(const lt_csv_table *curves, const char *column, const char *value);

/* The index of `step` among the update-count columns; -1 if it is not one. */
int bench_step_column(const long *steps, int count, long step);

/* Adds `step` to the sorted update-count columns unless it is there. */
void bench_add_step(long *steps, int *count, long step);

/* A table's header with a column per update count: `lead` ("| run |"),
 * then "@count" cells and `tail` (" held-out |", or ""), then the rule:
 * `lead_rule` and a right-aligned rule for each count and `tail_cells`. */
void bench_steps_header(FILE *f, const char *lead, const char *lead_rule, const long *steps,
                        int count, const char *tail, int tail_cells);

/* Reads each run's results and curves (OUT/run/results_file and
 * curves_file) until one is missing; returns how many runs were read (both
 * tables each), for bench_free_runs. */
int bench_read_runs(const char *out, const char *const *runs, int count,
                    const char *results_file, const char *curves_file, lt_csv_table *results,
                    lt_csv_table *curves);
void bench_free_runs(lt_csv_table *results, lt_csv_table *curves, int read);

#endif
