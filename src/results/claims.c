#include "results/claims.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *lt_verdict_name(lt_verdict v)
{
    switch (v) {
    case LT_CLAIM_HOLDS: return "holds";
    case LT_CLAIM_CAVEAT: return "holds at this scale, with a caveat";
    case LT_CLAIM_FAILS: return "does not hold";
    case LT_CLAIM_UNJUDGED: return "cannot be judged here";
    default: return "not measured";
    }
}

/* A table cell holds no '|' or line break. */
static void markdown_cell(FILE *f, const char *text)
{
    fputc(' ', f);
    for (const char *c = text; *c; c++)
        if (*c == '|')
            fputs("\\|", f);
        else
            fputc(*c == '\n' ? ' ' : *c, f);
    fputs(" |", f);
}

void lt_claims_markdown(FILE *f, const lt_claim *claims, int count)
{
    if (count == 0)
        return;
    fprintf(f, "\n| the paper says | measured here | conclusion |\n|---|---|---|\n");
    for (int i = 0; i < count; i++) {
        char verdict[2 * LT_CLAIM_TEXT];
        snprintf(verdict, sizeof verdict, "**%s** (rule: %s)", lt_verdict_name(claims[i].verdict),
                 claims[i].rule);
        fputc('|', f);
        markdown_cell(f, claims[i].paper);
        markdown_cell(f, claims[i].measured);
        markdown_cell(f, verdict);
        fputc('\n', f);
    }
}

/* Each number a claim's text was given as NaN (the paper's table, or a
 * run, does not have it: printed "nan", "nanx" for a ratio) as "?". */
static void unknown_for_nan(char *text)
{
    for (char *at = strstr(text, "nan"); at != NULL; at = strstr(at + 1, "nan")) {
        const int starts = at == text || !isalpha((unsigned char)at[-1]);
        const char *after = at[3] == 'x' ? at + 4 : at + 3; /* "nanx": a ratio */
        if (starts && !isalpha((unsigned char)*after)) {
            at[0] = '?';
            memmove(at + 1, after, strlen(after) + 1);
        }
    }
}

void lt_claim_say(char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(field, LT_CLAIM_TEXT, fmt, ap);
    va_end(ap);
    unknown_for_nan(field);
}

void lt_claim_append(char *field, const char *fmt, ...)
{
    size_t used = strlen(field);
    if (used + 1 >= LT_CLAIM_TEXT)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(field + used, LT_CLAIM_TEXT - used, fmt, ap);
    va_end(ap);
    unknown_for_nan(field);
}

static int cell_is(const lt_csv_table *t, long long row, const char *column, const char *value)
{
    int c = lt_csv_table_column(t, column);
    return c >= 0 && strcmp(lt_csv_table_cell(t, row, c), value) == 0;
}

long long lt_claim_row(const lt_csv_table *t, ...)
{
    int status = lt_csv_table_column(t, "status");
    for (long long r = 0; r < t->nrows; r++) {
        if (status >= 0 && strcmp(lt_csv_table_cell(t, r, status), "ok") != 0)
            continue;
        va_list ap;
        va_start(ap, t);
        int match = 1;
        for (const char *column; match && (column = va_arg(ap, const char *)) != NULL;)
            match = cell_is(t, r, column, va_arg(ap, const char *));
        va_end(ap);
        if (match)
            return r;
    }
    return -1;
}

double lt_claim_num(const lt_csv_table *t, long long row, const char *column)
{
    int c = lt_csv_table_column(t, column);
    if (row < 0 || c < 0)
        return NAN;
    const char *text = lt_csv_table_cell(t, row, c);
    char *end;
    double v = strtod(text, &end);
    return end == text ? NAN : v;
}

void lt_seeds_of(lt_seeds *s, const lt_csv_table *const *runs, int count,
                 const char *key_column, const char *key, const char *column)
{
    memset(s, 0, sizeof *s);
    s->runs = count < LT_SEEDS_MAX ? count : LT_SEEDS_MAX;
    for (int i = 0; i < s->runs; i++)
        s->value[i] = lt_claim_num(runs[i], lt_claim_row(runs[i], key_column, key, NULL), column);
    lt_seeds_scale(s, 1.0);
}

void lt_seeds_scale(lt_seeds *s, double factor)
{
    s->count = 0;
    s->mean = s->lo = s->hi = NAN;
    double sum = 0.0;
    for (int i = 0; i < s->runs; i++) {
        s->value[i] *= factor;
        double v = s->value[i];
        if (isnan(v))
            continue;
        sum += v;
        s->lo = s->count == 0 || v < s->lo ? v : s->lo;
        s->hi = s->count == 0 || v > s->hi ? v : s->hi;
        s->count++;
    }
    if (s->count > 0)
        s->mean = sum / s->count;
}

void lt_seeds_text(char *buf, size_t size, const lt_seeds *s, const char *fmt)
{
    char mean[64], lo[64], hi[64];
    snprintf(mean, sizeof mean, fmt, s->mean);
    if (s->count <= 1) {
        snprintf(buf, size, "%s", mean);
        return;
    }
    snprintf(lo, sizeof lo, fmt, s->lo);
    snprintf(hi, sizeof hi, fmt, s->hi);
    snprintf(buf, size, "%s (%d seeds: %s to %s)", mean, s->count, lo, hi);
}

int lt_seeds_passing(const lt_seeds *a, const lt_seeds *b,
                     int (*test)(double a, double b, const void *arg), const void *arg,
                     int *pairs)
{
    int yes = 0;
    *pairs = 0;
    for (int i = 0; i < a->runs && i < b->runs; i++) {
        if (isnan(a->value[i]) || isnan(b->value[i]))
            continue;
        yes += test(a->value[i], b->value[i], arg) != 0;
        ++*pairs;
    }
    return yes;
}

lt_verdict lt_seeds_judge(const lt_seeds *a, const lt_seeds *b, int need,
                          int (*test)(double a, double b, const void *arg), const void *arg,
                          int *pairs)
{
    int yes = lt_seeds_passing(a, b, test, arg, pairs), no = *pairs - yes;
    if (*pairs == 0)
        return LT_CLAIM_UNTESTED;
    if (*pairs < need || (yes > 0 && no > 0))
        return LT_CLAIM_UNJUDGED;
    return yes > 0 ? LT_CLAIM_HOLDS : LT_CLAIM_FAILS;
}

double lt_claims_busy_load(const lt_csv_table *t, double *threads)
{
    double busiest = 0;
    *threads = 0;
    for (long long r = 0; r < t->nrows; r++) {
        double load = lt_claim_num(t, r, "load_end"), used = lt_claim_num(t, r, "threads");
        if (isnan(load) || isnan(used))
            continue; /* written before the columns, or a row that never ran */
        if (load > used + 1.0 && load > busiest) {
            busiest = load;
            *threads = used;
        }
    }
    return busiest;
}

const char *lt_claims_quality_unjudged(const lt_csv_table *t)
{
    int c = lt_csv_table_column(t, "preset");
    const char *preset = c >= 0 && t->nrows > 0 ? lt_csv_table_cell(t, 0, c) : "";
    if (strcmp(preset, "quick") == 0 || strcmp(preset, "small") == 0)
        return "a preset below medium trains models too small for the paper's quality claims";
    return NULL;
}
