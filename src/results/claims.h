/* The paper's claims checked against measured rows: each claim is said in
 * words, the numbers it was judged on are quoted, and the verdict follows
 * from a rule stated beside it, so the report's "conclusion" column can
 * never disagree with the table above it. The rules for each experiment
 * live with its tables (bench/claims.c); this is the vocabulary and the
 * lookups they share. */
#ifndef LT_RESULTS_CLAIMS_H
#define LT_RESULTS_CLAIMS_H

#include <stdio.h>

#include "io/csv.h"

typedef enum lt_verdict {
    LT_CLAIM_HOLDS,
    LT_CLAIM_CAVEAT,  /* holds at this scale, with the caveat said */
    LT_CLAIM_FAILS,
    LT_CLAIM_UNTESTED /* the rows it needs were not run (or did not finish) */
} lt_verdict;

enum { LT_CLAIM_TEXT = 512, LT_CLAIMS_MAX = 8 };

typedef struct lt_claim {
    char paper[LT_CLAIM_TEXT];    /* the paper's claim, with its numbers */
    char measured[LT_CLAIM_TEXT]; /* the numbers here that decide it */
    char rule[LT_CLAIM_TEXT];     /* what "holds" means, and the caveat if any */
    lt_verdict verdict;
} lt_claim;

/* Fills up to LT_CLAIMS_MAX claims from an experiment's result table and
 * the paper's (NULL when it has none or it could not be read); returns how
 * many. */
typedef int (*lt_conclude_fn)(const lt_csv_table *results, const lt_csv_table *paper,
                              lt_claim *claims);

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
