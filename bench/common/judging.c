#include "common/judging.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double bench_paper_num(const lt_csv_table *paper, const char *method, const char *column)
{
    return paper ? lt_claim_num(paper, lt_claim_row(paper, "method", method, NULL), column)
                 : NAN;
}

int bench_preset_unjudged(lt_claim *c, const lt_csv_table *t)
{
    const char *why = lt_claims_quality_unjudged(t);
    if (why == NULL)
        return 0;
    c->verdict = LT_CLAIM_UNJUDGED;
    lt_claim_append(c->rule, "; not judged: %s (preset %s)", why,
                    lt_csv_table_cell(t, 0, lt_csv_table_column(t, "preset")));
    return 1;
}

int bench_busy_unjudged(lt_claim *c, const lt_csv_table *t)
{
    double threads, load = lt_claims_busy_load(t, &threads);
    if (load == 0 || c->verdict == LT_CLAIM_UNTESTED)
        return 0;
    c->verdict = LT_CLAIM_UNJUDGED;
    lt_claim_append(c->rule, "; not judged: timed beside other work (a load average of %.2f "
                             "with %.0f thread%s of its own), so its times do not compare",
                    load, threads, threads == 1 ? "" : "s");
    return 1;
}

void bench_seeds_note(lt_claim *c, int pairs, int need)
{
    if (c->verdict == LT_CLAIM_UNJUDGED && pairs < need)
        lt_claim_append(c->rule, "; %d seed%s here, the rule needs %d", pairs,
                        pairs == 1 ? "" : "s", need);
    else if (c->verdict == LT_CLAIM_UNJUDGED)
        lt_claim_append(c->rule, "; the seeds disagree");
    else
        lt_claim_append(c->rule, " (in each of %d seeds)", pairs);
}

lt_verdict bench_qualified(lt_verdict main, lt_verdict qualifier)
{
    if (main != LT_CLAIM_HOLDS)
        return main;
    if (qualifier == LT_CLAIM_UNJUDGED)
        return LT_CLAIM_UNJUDGED;
    return qualifier == LT_CLAIM_FAILS ? LT_CLAIM_CAVEAT : LT_CLAIM_HOLDS;
}

int bench_within(double a, double b, const void *bound)
{
    return fabs(a - b) <= *(const double *)bound;
}

int bench_below(double a, double b, const void *arg)
{
    (void)arg;
    return a < b;
}

double bench_window_mean(const lt_csv_table *curves, const char *variant, const char *column,
                          long step, long window)
{
    int v = lt_csv_table_column(curves, "variant"), s = lt_csv_table_column(curves, "step");
    int a = lt_csv_table_column(curves, column);
    if (v < 0 || s < 0 || a < 0)
        return NAN;
    double sum = 0.0;
    long n = 0;
    for (long long r = 0; r < curves->nrows; r++) {
        long at = atol(lt_csv_table_cell(curves, r, s));
        if (at > step - window && at <= step &&
            strcmp(lt_csv_table_cell(curves, r, v), variant) == 0) {
            sum += atof(lt_csv_table_cell(curves, r, a));
            n++;
        }
    }
    return n == window ? sum / n : NAN;
}

long long bench_last_step_row(const lt_csv_table *curves, const char *column, const char *value)
{
    int s = lt_csv_table_column(curves, "step");
    int c = column != NULL ? lt_csv_table_column(curves, column) : -1;
    long long last = -1;
    long last_step = -1;
    for (long long r = 0; s >= 0 && (column == NULL || c >= 0) && r < curves->nrows; r++) {
        long at = atol(lt_csv_table_cell(curves, r, s));
        if ((column == NULL || strcmp(lt_csv_table_cell(curves, r, c), value) == 0) &&
            at > last_step) {
            last_step = at;
            last = r;
        }
    }
    return last;
}

int bench_step_column(const long *steps, int count, long step)
{
    for (int k = 0; k < count; k++)
        if (steps[k] == step)
            return k;
    return -1;
}

void bench_add_step(long *steps, int *count, long step)
{
    int at = *count;
    if (bench_step_column(steps, *count, step) >= 0)
        return;
    for (; at > 0 && steps[at - 1] > step; at--)
        steps[at] = steps[at - 1];
    steps[at] = step;
    (*count)++;
}

void bench_steps_header(FILE *f, const char *lead, const char *lead_rule, const long *steps,
                         int count, const char *tail, int tail_cells)
{
    fprintf(f, "%s", lead);
    for (int k = 0; k < count; k++)
        fprintf(f, " @%ld |", steps[k]);
    fprintf(f, "%s\n%s", tail, lead_rule);
    for (int k = 0; k < count + tail_cells; k++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
}

int bench_read_runs(const char *out, const char *const *runs, int count,
                     const char *results_file, const char *curves_file, lt_csv_table *results,
                     lt_csv_table *curves)
{
    int read = 0;
    for (; read < count; read++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s/%s", out, runs[read], results_file);
        if (lt_csv_read(&results[read], path) != LT_OK)
            break;
        snprintf(path, sizeof path, "%s/%s/%s", out, runs[read], curves_file);
        if (lt_csv_read(&curves[read], path) != LT_OK) {
            lt_csv_table_free(&results[read]);
            break;
        }
    }
    return read;
}

void bench_free_runs(lt_csv_table *results, lt_csv_table *curves, int read)
{
    for (int r = 0; r < read; r++) {
        lt_csv_table_free(&results[r]);
        lt_csv_table_free(&curves[r]);
    }
}

const char *bench_cell(const lt_csv_table *t, long long r, const char *column)
{
    int c = lt_csv_table_column(t, column);
    return c >= 0 && r < t->nrows ? lt_csv_table_cell(t, r, c) : "";
}
