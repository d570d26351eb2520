/* The paper's claims checked against measured rows: each claim is said in
 * words, the numbers it was judged on are quoted, and the verdict follows
 * from a rule stated beside it, so the report's "conclusion" column can
 * never disagree with the table above it. The rules for each experiment
 * live with its tables (bench/<experiment>/claims.c); this is the vocabulary and the
 * lookups they share. */
#ifndef LT_RESULTS_CLAIMS_H
#define LT_RESULTS_CLAIMS_H

#include <stdio.h>

#include "io/csv.h"

typedef enum lt_verdict {
    LT_CLAIM_HOLDS,
    LT_CLAIM_CAVEAT,  /* holds at this scale, with the caveat said */
    LT_CLAIM_FAILS,
    LT_CLAIM_UNJUDGED, /* measured, but the numbers cannot decide it here: within the
                          seeds' spread, too few seeds, models that learned too little,
                          or a preset below medium (the rule says which) */
    LT_CLAIM_UNTESTED  /* the rows it needs were not run (or did not finish) */
} lt_verdict;

enum { LT_CLAIM_TEXT = 640, LT_CLAIMS_MAX = 8, LT_SEEDS_MAX = 8 };

typedef struct lt_claim {
    char paper[LT_CLAIM_TEXT];    /* the paper's claim, with its numbers */
    char measured[LT_CLAIM_TEXT]; /* the numbers here that decide it */
    char rule[LT_CLAIM_TEXT];     /* what "holds" means, and the caveat if any */
    lt_verdict verdict;
} lt_claim;

/* Fills up to LT_CLAIMS_MAX claims from an experiment's result tables and
 * the paper's (NULL when it has none or it could not be read); returns how
 * many. runs[0] is the run the section shows; runs[1..count-1] the same
 * run from other seeds (at most LT_SEEDS_MAX in all). */
typedef int (*lt_conclude_fn)(const lt_csv_table *const *runs, int count,
                              const lt_csv_table *paper, lt_claim *claims);

/* One metric of one model over the seeds: value[i] of runs[i] (NAN where
 * that run lacks the model or the metric), and over the values there: how
 * many, their mean and range. */
typedef struct lt_seeds {
    double value[LT_SEEDS_MAX];
    int runs, count;
    double mean, lo, hi;
} lt_seeds;

/* `column` of the first "ok" row whose `key_column` is `key`, in each run. */
void lt_seeds_of(lt_seeds *s, const lt_csv_table *const *runs, int count,
                 const char *key_column, const char *key, const char *column);

/* The same, of a value computed per run (scaled: x 100 for percent). */
void lt_seeds_scale(lt_seeds *s, double factor);

/* "0.1234" for one seed; "0.1234 (3 seeds: 0.1200 to 0.1300)" for more,
 * with printf format `fmt` for each number. */
void lt_seeds_text(char *buf, size_t size, const lt_seeds *s, const char *fmt);

/* In how many seeds where both a and b are measured test(a_i, b_i) holds;
 * *pairs gets how many seeds have both. */
int lt_seeds_passing(const lt_seeds *a, const lt_seeds *b,
                     int (*test)(double a, double b, const void *arg), const void *arg,
                     int *pairs);

/* How a paired comparison of a and b (same runs) comes out over the seeds
 * where both are measured: LT_CLAIM_HOLDS if test(a_i, b_i) holds for
 * every seed, LT_CLAIM_FAILS if for none, LT_CLAIM_UNJUDGED if the seeds
 * disagree or fewer than `need` seeds have both (LT_CLAIM_UNTESTED: none).
 * *pairs gets how many seeds were compared. */
lt_verdict lt_seeds_judge(const lt_seeds *a, const lt_seeds *b, int need,
                          int (*test)(double a, double b, const void *arg), const void *arg,
                          int *pairs);

/* Whether a run's quality can be judged at its preset: NULL if so, else
 * the reason (a preset below medium trains models too small to say). */
const char *lt_claims_quality_unjudged(const lt_csv_table *t);

/* The highest load average recorded at the end of a row above that row's
 * threads plus one: another process had a core while the row was timed, so
 * its times do not compare with a run timed alone. 0 when every row ran
 * alone or the table records no load; *threads gets that row's threads. */
double lt_claims_busy_load(const lt_csv_table *t, double *threads);

/* "holds", "holds at this scale, with a caveat", "does not hold", "not
 * measured". */
const char *lt_verdict_name(lt_verdict v);

/* The claims as a Markdown table: the paper says | measured here |
 * conclusion. */
void lt_claims_markdown(FILE *f, const lt_claim *claims, int count);

/* printf into a claim's field. */
void lt_claim_say(char *field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to a claim's field (truncating at its size). */
void lt_claim_append(char *field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first row whose status is "ok" (or that has no status column) and
 * whose cells equal each (column, value) pair of the NULL-terminated list;
 * -1 if none. */
long long lt_claim_row(const lt_csv_table *t, ...) __attribute__((sentinel));

/* A row's cell as a number; NAN when the row is -1, the column missing or
 * the cell empty. */
double lt_claim_num(const lt_csv_table *t, long long row, const char *column);

#endif
