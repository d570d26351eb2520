/* `ltbench compare`'s engine (see compare.h): the two files read and their
 * metrics aligned, rows matched through a hash index, each metric judged,
 * then the Markdown report and the optional JSON files written. One file
 * because every stage works on the private side and report structs behind
 * lt_compare; splitting it would put them in a header. */
#include "results/compare.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/threads.h"
#include "io/atomic.h"
#include "io/outdir.h"
#include "results/file.h"

enum { MAX_KEYS = 32, MAX_METRICS = 48 };

typedef enum verdict {
    V_REGRESSED, V_CHANGED, V_IMPROVED, V_NOISE, V_UNCHANGED, V_INFO,
    V_NOT_COMPARABLE, V_NOT_RUN, V_MISSING, V_ONLY_NEW, V_OTHER_KERNEL, V_COUNT
} verdict;

static const char *const verdict_names[V_COUNT] = {
    "regressed", "changed", "improved", "noise", "unchanged", "info",
    "not comparable", "not run", "missing in new", "only in new", "other kernel"};

/* Provenance beside the schema's own setup columns, and what a difference
 * in each leaves comparable:
 *   ranks            nothing (another amount of work per process)
 *   cpu_model, cpu_id, omp_wait_policy
 *                    the same code to the same bits at another speed: all
 *                    but the timings
 *   blas, kernel_isa, build
 *                    other arithmetic (another summation order): the
 *                    counts exactly, the other exact metrics within the
 *                    cross-machine tolerance, no timings */
typedef enum setup_kind { SETUP_WHOLE, SETUP_SPEED, SETUP_ARITHMETIC } setup_kind;

static const struct {
    const char *name;
    setup_kind kind;
} provenance_setup[] = {{"cpu_model", SETUP_SPEED},     {"cpu_id", SETUP_SPEED},
                        {"blas", SETUP_ARITHMETIC},     {"kernel_isa", SETUP_ARITHMETIC},
                        {"ranks", SETUP_WHOLE},         {"omp_wait_policy", SETUP_SPEED},
                        {"build", SETUP_ARITHMETIC}};
enum { PROVENANCE_SETUP = sizeof provenance_setup / sizeof provenance_setup[0],
       MAX_SETUP = PROVENANCE_SETUP + 8 };

/* One file, with its columns resolved against its schema. */
typedef struct side {
    lt_results_file file;
    const char *role; /* "base" or "new" */
    const lt_schema *schema;
    int nkeys, nmetrics, nsetup;
    const lt_column *key_spec[MAX_KEYS], *metric_spec[MAX_METRICS];
    const char *setup_name[MAX_SETUP];
    int keys[MAX_KEYS];
    int value[MAX_METRICS], median[MAX_METRICS], min[MAX_METRICS], max[MAX_METRICS];
    int status;
    setup_kind setup_kind[MAX_SETUP];
    int setup[MAX_SETUP];
    /* per metric: a rate of a time another metric judges (GFLOP/s of the
     * forward's seconds): listed, not counted a second time */
    int derived[MAX_METRICS];
    uint64_t *hash; /* (rows) of the key cells */
} side;

/* One line of the report: a metric of a matched case, or a whole case. */
typedef struct line {
    long long base_row, new_row; /* -1: not in that file */
    int metric;                  /* -1: the whole case */
    int derived;                 /* the metric is a rate of a time judged beside it */
    verdict v;
    double change;               /* relative, NaN where none */
    char what[48], base_text[64], new_text[64];
} line;

static int is_metric(const lt_column *c)
{
    return c->role == LT_COL_TIMING || c->role == LT_COL_EXACT || c->role == LT_COL_INFO;
}

static lt_status resolve(side *s)
{
    const lt_schema *schema = s->schema;
    s->nkeys = s->nmetrics = s->nsetup = 0;
    for (int c = 0; c < schema->ncols; c++) {
        const lt_column *col = &schema->columns[c];
        if (col->role == LT_COL_KEY && s->nkeys < MAX_KEYS) {
            int at = lt_results_column(&s->file, col->name);
            if (at < 0) /* only a key older files lack is missing here: align_keys */
                continue;
            s->key_spec[s->nkeys] = col;
            s->keys[s->nkeys++] = at;
        } else if (col->role == LT_COL_SETUP && s->nsetup < MAX_SETUP - (int)PROVENANCE_SETUP) {
            s->setup_kind[s->nsetup] = SETUP_WHOLE;
            s->setup_name[s->nsetup++] = col->name;
        } else if (is_metric(col) && s->nmetrics < MAX_METRICS) {
            int m = s->nmetrics++;
            s->metric_spec[m] = col;
            /* -1 when missing: align_metrics decides once both files are read */
            s->value[m] = lt_results_column(&s->file, col->name);
            s->median[m] = s->min[m] = s->max[m] = -1;
            if (col->spread != NULL) {
                char name[3][128];
                snprintf(name[0], sizeof name[0], "%s_median_s", col->spread);
                snprintf(name[1], sizeof name[1], "%s_min_s", col->spread);
                snprintf(name[2], sizeof name[2], "%s_max_s", col->spread);
                const char *spread[] = {name[0], name[1], name[2], NULL};
                if (lt_results_missing(&s->file, spread) == NULL) {
                    s->median[m] = lt_results_column(&s->file, name[0]);
                    s->min[m] = lt_results_column(&s->file, name[1]);
                    s->max[m] = lt_results_column(&s->file, name[2]);
                }
            }
        }
    }
    for (int i = 0; i < (int)PROVENANCE_SETUP; i++) {
        s->setup_kind[s->nsetup] = provenance_setup[i].kind;
        s->setup_name[s->nsetup++] = provenance_setup[i].name;
    }
    for (int i = 0; i < s->nsetup; i++)
        s->setup[i] = lt_results_column(&s->file, s->setup_name[i]);
    s->status = lt_results_column(&s->file, "status");
    return LT_OK;
}

static const char *status_of(const side *s, long long row)
{
    return s->status < 0 ? "ok" : lt_results_cell(&s->file, row, s->status);
}

/* Keys written by another version may spell a number differently. */
static int cells_equal(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return 1;
    char *end_a, *end_b;
    double x = strtod(a, &end_a), y = strtod(b, &end_b);
    return *a && *b && *end_a == '\0' && *end_b == '\0' && x == y;
}

/* A key cell's hash: numbers by value (as cells_equal compares them). */
static uint64_t cell_hash(const char *cell)
{
    char *end;
    double x = strtod(cell, &end);
    if (*cell && *end == '\0') {
        if (x == 0)
            x = 0; /* -0 and 0 are equal */
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        return bits * 0x9E3779B97F4A7C15ull;
    }
    uint64_t h = 1469598103934665603ull;
    for (; *cell; cell++)
        h = (h ^ (unsigned char)*cell) * 1099511628211ull;
    return h;
}

/* The hash of a row's keys, all of them or all but key `skip`. */
static uint64_t keys_hash(const side *s, long long row, int skip)
{
    uint64_t h = 0;
    for (int k = 0; k < s->nkeys; k++)
        if (k != skip)
            h = (h ^ cell_hash(lt_results_cell(&s->file, row, s->keys[k]))) *
                    0x100000001B3ull + (uint64_t)k;
    return h;
}

static int same_case_but(const side *a, long long ra, const side *b, long long rb, int skip)
{
    for (int k = 0; k < a->nkeys; k++)
        if (k != skip && !cells_equal(lt_results_cell(&a->file, ra, a->keys[k]),
                                      lt_results_cell(&b->file, rb, b->keys[k])))
            return 0;
    return 1;
}

/* Rows grouped by a hash of their keys: an open-addressing table of row
 * indices, so matching is linear in the rows rather than quadratic. */
typedef struct row_index {
    long long *slots; /* row + 1, 0: empty */
    uint64_t *hashes;
    size_t mask;
} row_index;

static lt_status index_build(row_index *ix, const side *s, int skip)
{
    long long n = s->file.table.nrows;
    size_t size = 16;
    while (size < (size_t)n * 2)
        size *= 2;
    ix->mask = size - 1;
    ix->slots = NULL;
    ix->hashes = NULL;
    LT_TRY(lt_mem_calloc((void **)&ix->slots, size * sizeof *ix->slots, "key index"));
    LT_TRY(lt_mem_alloc((void **)&ix->hashes, (size_t)(n > 0 ? n : 1) * sizeof *ix->hashes,
                        "key hashes"));
    for (long long r = 0; r < n; r++) {
        uint64_t h = keys_hash(s, r, skip);
        ix->hashes[r] = h;
        size_t at = (size_t)h & ix->mask;
        while (ix->slots[at] != 0)
            at = (at + 1) & ix->mask;
        ix->slots[at] = r + 1;
    }
    return LT_OK;
}

static void index_free(row_index *ix)
{
    lt_mem_free(ix->slots);
    lt_mem_free(ix->hashes);
}

/* Calls back every row of `ix` (over side `in`) that is the same case as
 * row `row` of `s`, but for key `skip`; stops when fn returns 1. */
static long long index_find(const row_index *ix, const side *in, const side *s, long long row,
                            int skip, const char *taken)
{
    uint64_t h = keys_hash(s, row, skip);
    for (size_t at = (size_t)h & ix->mask; ix->slots[at] != 0; at = (at + 1) & ix->mask) {
        long long r = ix->slots[at] - 1;
        if (ix->hashes[r] == h && (taken == NULL || !taken[r]) &&
            same_case_but(s, row, in, r, skip))
            return r;
    }
    return -1;
}

static void describe_case(char *buf, size_t size, const side *s, long long row,
                          const int *shown)
{
    buf[0] = '\0';
    for (int k = 0; k < s->nkeys; k++)
        if (shown[k])
            lt_results_label_append(buf, size, s->key_spec[k]->name,
                                    lt_results_cell(&s->file, row, s->keys[k]));
}

/* A case is named by its label keys and by every other key that varies
 * between the rows of either file. */
static void choose_shown_keys(int *shown, const side *base, const side *next)
{
    for (int k = 0; k < base->nkeys; k++) {
        shown[k] = base->key_spec[k]->label;
        const side *sides[] = {base, next};
        const char *first = lt_results_cell(&base->file, 0, base->keys[k]);
        for (int s = 0; s < 2 && !shown[k]; s++)
            for (long long r = 0; r < sides[s]->file.table.nrows && !shown[k]; r++)
                shown[k] = !cells_equal(first,
                                        lt_results_cell(&sides[s]->file, r, sides[s]->keys[k]));
    }
}

typedef struct range {
    double lo, hi;
} range;

static lt_status metric_value(double *value, range *spread, const side *s, long long row, int m)
{
    LT_TRY(lt_results_number(value, &s->file, row, s->value[m]));
    *spread = (range){*value, *value};
    if (s->median[m] < 0)
        return LT_OK;
    double median, lo, hi;
    LT_TRY(lt_results_number(&median, &s->file, row, s->median[m]));
    LT_TRY(lt_results_number(&lo, &s->file, row, s->min[m]));
    LT_TRY(lt_results_number(&hi, &s->file, row, s->max[m]));
    if (!(median > 0) || !isfinite(lo) || !isfinite(hi))
        return LT_OK; /* not timed: lt_results_check holds measured rows to more */
    /* The metric scales with the time (a per-sample time) or with its
     * reciprocal (a rate), so the time's spread carries over. */
    if (s->metric_spec[m]->rate)
        *spread = (range){*value * median / hi, *value * median / lo};
    else
        *spread = (range){*value * lo / median, *value * hi / median};
    return LT_OK;
}

static double relative_change(double base, double next)
{
    if (base == next)
        return 0;
    if (base == 0)
        return copysign(INFINITY, next);
    return (next - base) / fabs(base);
}

static verdict judge(const lt_column *spec, double base, double next, range rb, range rn,
                     const lt_compare_options *o, double *change)
{
    *change = relative_change(base, next);
    if (spec->role == LT_COL_INFO)
        return V_INFO;
    if (isnan(base) || isnan(next)) {
        /* NaN is the worst value there is: a diverged loss, a failed time. */
        if (isnan(base) && isnan(next)) {
            *change = 0;
            return V_UNCHANGED;
        }
        *change = NAN;
        if (isnan(next))
            return V_REGRESSED;
        return spec->role == LT_COL_EXACT ? V_CHANGED : V_IMPROVED;
    }
    double worse = spec->higher_is_better ? -*change : *change;
    if (spec->role == LT_COL_EXACT) {
        if (fabs(*change) <= o->exact_tolerance / 100)
            return V_UNCHANGED;
        return worse > 0 ? V_REGRESSED : V_CHANGED;
    }
    if (fabs(*change) <= o->threshold / 100)
        return V_UNCHANGED;
    int disjoint = rn.lo > rb.hi || rn.hi < rb.lo;
    if (!disjoint)
        return V_NOISE;
    return worse > 0 ? V_REGRESSED : V_IMPROVED;
}

static void format_value(char *buf, size_t size, double value, lt_col_role role)
{
    snprintf(buf, size, role == LT_COL_TIMING ? "%.6g" : "%.10g", value);
}

/* The report's lines, grown as needed. */
typedef struct report {
    line *lines;
    long long count, capacity;
    long long *judged; /* per new row: its first metric line, or -1 */
} report;

static lt_status add_line(report *r, line **out)
{
    if (r->count == r->capacity) {
        long long capacity = r->capacity ? 2 * r->capacity : 256;
        line *grown;
        LT_TRY(lt_mem_alloc((void **)&grown, (size_t)capacity * sizeof *grown, "report lines"));
        if (r->count)
            memcpy(grown, r->lines, (size_t)r->count * sizeof *grown);
        lt_mem_free(r->lines);
        r->lines = grown;
        r->capacity = capacity;
    }
    *out = &r->lines[r->count++];
    **out = (line){-1, -1, -1, 0, V_INFO, NAN, "", "", ""};
    return LT_OK;
}

static lt_status case_line(report *r, long long base_row, long long new_row, verdict v,
                           const char *what, const char *base_text, const char *new_text)
{
    line *l;
    LT_TRY(add_line(r, &l));
    l->base_row = base_row;
    l->new_row = new_row;
    l->v = v;
    snprintf(l->what, sizeof l->what, "%s", what);
    snprintf(l->base_text, sizeof l->base_text, "%s", base_text);
    snprintf(l->new_text, sizeof l->new_text, "%s", new_text);
    return LT_OK;
}

/* Judges one matched case: its status, its setup, then each metric. A
 * setup that differs in speed only leaves the timings out; one that
 * differs in arithmetic also holds the exact metrics that are not counts to
 * the cross-machine tolerance (o->cross_tolerance) instead of bit for bit. */
static lt_status compare_case(report *r, const side *base, long long rb, const side *next,
                              long long rn, const lt_compare_options *o)
{
    const char *sb = status_of(base, rb), *sn = status_of(next, rn);
    if (strcmp(sb, "ok") != 0 || strcmp(sn, "ok") != 0)
        /* a case the base measured that the new run did not (diverged,
         * failed, skipped) is a regression, not a case left out */
        return case_line(r, rb, rn,
                         strcmp(sb, "ok") == 0 ? V_REGRESSED : V_NOT_RUN, "status", sb, sn);
    const char *speed_differs = NULL, *arithmetic_differs = NULL;
    for (int i = 0; i < base->nsetup; i++) {
        if (base->setup[i] < 0 || next->setup[i] < 0)
            continue;
        const char *a = lt_results_cell(&base->file, rb, base->setup[i]);
        const char *b = lt_results_cell(&next->file, rn, next->setup[i]);
        /* an empty provenance cell was not recorded: a row kept by --resume
         * from a file written before the column */
        int provenance = i >= base->nsetup - (int)PROVENANCE_SETUP;
        if (cells_equal(a, b) || (provenance && (a[0] == '\0' || b[0] == '\0')))
            continue;
        if (base->setup_kind[i] == SETUP_WHOLE)
            return case_line(r, rb, rn, V_NOT_COMPARABLE, base->setup_name[i], a, b);
        if (speed_differs == NULL)
            speed_differs = base->setup_name[i];
        if (base->setup_kind[i] == SETUP_ARITHMETIC && arithmetic_differs == NULL)
            arithmetic_differs = base->setup_name[i];
    }
    r->judged[rn] = r->count;
    for (int m = 0; m < base->nmetrics; m++) {
        const lt_column *spec = base->metric_spec[m];
        double vb, vn;
        range gb, gn;
        LT_TRY(metric_value(&vb, &gb, base, rb, m));
        LT_TRY(metric_value(&vn, &gn, next, rn, m));
        line *l;
        LT_TRY(add_line(r, &l));
        l->base_row = rb;
        l->new_row = rn;
        l->metric = m;
        l->derived = base->derived[m];
        snprintf(l->what, sizeof l->what, "%s", spec->name);
        if (spec->role == LT_COL_TIMING && speed_differs != NULL) {
            l->v = V_NOT_COMPARABLE;
            snprintf(l->what, sizeof l->what, "%s (%s)", spec->name, speed_differs);
        } else if (spec->role == LT_COL_EXACT && !spec->cpu_independent &&
                   arithmetic_differs != NULL) {
            lt_compare_options across = *o;
            across.exact_tolerance = o->cross_tolerance;
            l->v = judge(spec, vb, vn, gb, gn, &across, &l->change);
            if ((l->v == V_REGRESSED || l->v == V_CHANGED) && fabs(vn - vb) <= o->cross_absolute)
                l->v = V_UNCHANGED;
            snprintf(l->what, sizeof l->what, "%s (%s: %g%% or %g)", spec->name,
                     arithmetic_differs, o->cross_tolerance, o->cross_absolute);
        } else {
            l->v = judge(spec, vb, vn, gb, gn, o, &l->change);
        }
        format_value(l->base_text, sizeof l->base_text, vb, spec->role);
        format_value(l->new_text, sizeof l->new_text, vn, spec->role);
    }
    return LT_OK;
}

/* The key index of the kernel column, or -1. */
static int kernel_key(const side *s)
{
    for (int k = 0; k < s->nkeys; k++)
        if (strcmp(s->key_spec[k]->name, "kernel") == 0)
            return k;
    return -1;
}

/* Pairs each base row with the new row of the same case, then each base
 * row left over with the one new row left over that differs only in its
 * kernel (a kernel chosen by --kernel, or a new default). */
static lt_status match_rows(long long *partner, char *seen, const side *base, const side *next)
{
    long long nb = base->file.table.nrows;
    row_index ix;
    lt_status status = index_build(&ix, next, -1);
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        partner[rb] = index_find(&ix, next, base, rb, -1, seen);
        if (partner[rb] >= 0)
            seen[partner[rb]] = 1;
    }
    index_free(&ix);
    int kk = kernel_key(base);
    if (kk < 0 || status != LT_OK)
        return status;
    status = index_build(&ix, next, kk);
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        if (partner[rb] >= 0)
            continue;
        long long only = index_find(&ix, next, base, rb, kk, seen);
        if (only < 0)
            continue;
        seen[only] = 1; /* a second candidate makes the match ambiguous */
        if (index_find(&ix, next, base, rb, kk, seen) >= 0) {
            seen[only] = 0;
            continue;
        }
        partner[rb] = only;
    }
    index_free(&ix);
    return status;
}

/* Matches the rows of both files on their keys and judges every case. */
static lt_status build_report(report *r, const side *base, const side *next,
                              const lt_compare_options *o, long long *matched)
{
    long long nb = base->file.table.nrows, nn = next->file.table.nrows;
    char *seen = NULL;
    long long *partner = NULL;
    lt_status status = lt_mem_calloc((void **)&seen, (size_t)nn, "matched rows");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&partner, (size_t)(nb > 0 ? nb : 1) * sizeof *partner,
                              "matched rows");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&r->judged, (size_t)nn * sizeof *r->judged,
                              "judged rows");
    for (long long rn = 0; rn < nn && status == LT_OK; rn++)
        r->judged[rn] = -1;
    if (status == LT_OK)
        status = match_rows(partner, seen, base, next);
    int kk = kernel_key(base);
    *matched = 0;
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        long long rn = partner[rb];
        if (rn < 0) {
            status = case_line(r, rb, -1, V_MISSING, "-", status_of(base, rb), "-");
            continue;
        }
        (*matched)++;
        if (kk >= 0) {
            const char *a = lt_results_cell(&base->file, rb, base->keys[kk]);
            const char *b = lt_results_cell(&next->file, rn, next->keys[kk]);
            if (strcmp(a, b) != 0)
                status = case_line(r, rb, rn, V_OTHER_KERNEL, "kernel", a, b);
        }
        if (status == LT_OK)
            status = compare_case(r, base, rb, next, rn, o);
    }
    for (long long rn = 0; rn < nn && status == LT_OK; rn++)
        if (!seen[rn])
            status = case_line(r, -1, rn, V_ONLY_NEW, "-", "-", status_of(next, rn));
    lt_mem_free(partner);
    lt_mem_free(seen);
    return status;
}

static int line_shown(const line *l, int all)
{
    if (all)
        return 1;
    if (l->v == V_UNCHANGED || l->v == V_INFO || l->derived)
        return 0;
    /* A case that is never run (a causal Linformer) is not news. */
    return l->v != V_NOT_RUN || strcmp(l->base_text, l->new_text) != 0;
}

static void format_change(char *buf, size_t size, double change)
{
    if (isnan(change))
        snprintf(buf, size, "-");
    else if (change == 0)
        snprintf(buf, size, "0%%");
    else if (isinf(change))
        snprintf(buf, size, "%sinf%%", change > 0 ? "+" : "-");
    else if (fabs(change) < 5e-4)
        snprintf(buf, size, "%+.2g%%", 100 * change);
    else
        snprintf(buf, size, "%+.1f%%", 100 * change);
}

/* The report's order: what fails first, the largest change first within a
 * verdict, then what was not judged; lines of one rank keep their order. */
static int verdict_rank(verdict v)
{
    static const int rank[V_COUNT] = {
        [V_REGRESSED] = 0, [V_CHANGED] = 1, [V_MISSING] = 2,      [V_NOT_RUN] = 3,
        [V_NOISE] = 4,     [V_IMPROVED] = 5, [V_NOT_COMPARABLE] = 6, [V_OTHER_KERNEL] = 7,
        [V_ONLY_NEW] = 8,  [V_UNCHANGED] = 9, [V_INFO] = 10};
    return rank[v];
}

typedef struct ordered_line {
    int rank;
    double size; /* |change|, NaN as the largest */
    long long index;
} ordered_line;

static int by_severity(const void *pa, const void *pb)
{
    const ordered_line *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static lt_status print_table(FILE *out, const report *r, const side *base, const side *next,
                             const int *shown, int all)
{
    ordered_line *order = NULL;
    LT_TRY(lt_mem_alloc((void **)&order, (size_t)(r->count > 0 ? r->count : 1) * sizeof *order,
                        "report order"));
    for (long long i = 0; i < r->count; i++) {
        double change = fabs(r->lines[i].change);
        order[i] = (ordered_line){verdict_rank(r->lines[i].v), isnan(change) ? INFINITY : change,
                                  i};
    }
    qsort(order, (size_t)r->count, sizeof *order, by_severity);
    fprintf(out, "| case | metric | base | new | change | verdict |\n"
                 "|---|---|---|---|---|---|\n");
    long long printed = 0;
    for (long long i = 0; i < r->count; i++) {
        const line *l = &r->lines[order[i].index];
        if (!line_shown(l, all))
            continue;
        char label[256], change[32];
        if (l->base_row >= 0)
            describe_case(label, sizeof label, base, l->base_row, shown);
        else
            describe_case(label, sizeof label, next, l->new_row, shown);
        format_change(change, sizeof change, l->change);
        fprintf(out, "| %s | %s | %s | %s | %s | %s%s |\n", label, l->what, l->base_text,
                l->new_text, change, verdict_names[l->v], l->derived ? " (derived)" : "");
        printed++;
    }
    if (printed == 0)
        fprintf(out, "| (every metric unchanged) | | | | | |\n");
    lt_mem_free(order);
    return LT_OK;
}

/* A share of CPU time the hypervisor may give other guests before a run's
 * timings are in doubt: a few percent is what an idle host takes. */
#define BUSY_STEAL 0.05

/* The largest number in columns `cols` (-1: absent) over every row; NaN
 * where none is recorded (empty: a row kept from a file written before the
 * column). */
static lt_status column_peak(double *peak, const side *s, const int *cols, int ncols)
{
    *peak = NAN;
    for (long long r = 0; r < s->file.table.nrows; r++)
        for (int i = 0; i < ncols; i++) {
            double value;
            if (cols[i] < 0 || lt_results_cell(&s->file, r, cols[i])[0] == '\0')
                continue;
            LT_TRY(lt_results_number(&value, &s->file, r, cols[i]));
            if (!isnan(value) && !(value <= *peak))
                *peak = value;
        }
    return LT_OK;
}

/* Says (into `note`, empty if not) when a virtual machine's hypervisor took
 * more than BUSY_STEAL of its CPU time at any row. */
static lt_status steal_note(char *note, size_t size, const side *s)
{
    note[0] = '\0';
    int col = lt_results_column(&s->file, "steal_share");
    double peak;
    LT_TRY(column_peak(&peak, s, &col, 1));
    if (!isnan(peak) && peak > BUSY_STEAL)
        snprintf(note, size,
                 "\n> **%s run taken on a contended virtual machine**: %s has a steal share of "
                 "%.1f%% (CPU time the hypervisor gave other guests), above %.0f%%; its timings "
                 "may be slow.\n",
                 s->role, s->file.path, 100 * peak, 100 * BUSY_STEAL);
    return LT_OK;
}

/* Says (into `note`, empty if not) when a run was taken on a busy machine:
 * its load average, at the start or at any row, above busy_load or half
 * the cores it recorded; then steal_note's. */
static lt_status busy_note(char *note, size_t size, const side *s, const lt_compare_options *o)
{
    note[0] = '\0';
    char steal[320];
    LT_TRY(steal_note(steal, sizeof steal, s));
    int cols[2] = {lt_results_column(&s->file, "load_start"),
                   lt_results_column(&s->file, "load_end")};
    int cores_col = lt_results_column(&s->file, "cores");
    double peak;
    LT_TRY(column_peak(&peak, s, cols, 2));
    if (isnan(peak)) { /* no load recorded */
        snprintf(note, size, "%s", steal);
        return LT_OK;
    }
    double cores = lt_threads_available();
    if (cores_col >= 0 && lt_results_cell(&s->file, 0, cores_col)[0] != '\0')
        LT_TRY(lt_results_number(&cores, &s->file, 0, cores_col));
    double limit = o->busy_load > 0 ? o->busy_load : 0.5 * cores;
    if (peak <= limit) {
        snprintf(note, size, "%s", steal);
        return LT_OK;
    }
    char why[64];
    if (o->busy_load > 0)
        snprintf(why, sizeof why, "--busy-load");
    else
        snprintf(why, sizeof why, "half of %g cores", cores);
    snprintf(note, size,
             "\n> **%s run taken on a busy machine**: %s has a load average of %.2f, above %.2f "
             "(%s); its timings may be slow.\n%s",
             s->role, s->file.path, peak, limit, why, steal);
    return LT_OK;
}

/* ---- json: github-action-benchmark's custom format ---- */

/* One entry: a metric of a case of the new run, with its verdict. */
static void json_entry(FILE *f, int first, const side *next, long long row, int m,
                       const int *shown, const line *judged)
{
    const lt_column *spec = next->metric_spec[m];
    double value;
    range spread;
    metric_value(&value, &spread, next, row, m); /* check_numbers passed it */
    char label[256], name[512], text[128], change[32];
    describe_case(label, sizeof label, next, row, shown);
    snprintf(name, sizeof name, "%s: %s %s", next->schema->name, label, spec->name);
    fprintf(f, "%s\n  {\"name\": ", first ? "" : ",");
    lt_results_json_string(f, name);
    fprintf(f, ", \"unit\": ");
    lt_results_json_string(f, spec->unit != NULL ? spec->unit : "");
    fprintf(f, ", \"value\": %.17g", value);
    if (next->median[m] >= 0) {
        snprintf(text, sizeof text, "%.6g..%.6g", spread.lo, spread.hi);
        fprintf(f, ", \"range\": ");
        lt_results_json_string(f, text);
    }
    if (judged != NULL) {
        format_change(change, sizeof change, judged->change);
        snprintf(text, sizeof text, "base %s, change %s: %s", judged->base_text, change,
                 verdict_names[judged->v]);
    } else {
        snprintf(text, sizeof text, "not compared with a base");
    }
    fprintf(f, ", \"extra\": ");
    lt_results_json_string(f, text);
    /* the same as fields, for tools that read them */
    fprintf(f, ", \"verdict\": ");
    lt_results_json_string(f, judged != NULL ? verdict_names[judged->v] : "not compared");
    if (judged != NULL && isfinite(judged->change))
        fprintf(f, ", \"change\": %.6g", judged->change);
    if (judged != NULL && judged->derived)
        fprintf(f, ", \"derived\": true");
    fputc('}', f);
}

/* One file: the metrics of every case the new run measured (status ok)
 * whose better direction is `higher` (customBiggerIsBetter) or not
 * (customSmallerIsBetter). Info metrics and values JSON cannot hold (NaN)
 * are left out. */
static lt_status write_json(const char *path, int higher, const report *r, const side *next,
                            const int *shown)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    FILE *f = af.f;
    fputs("[", f);
    int first = 1;
    for (long long row = 0; row < next->file.table.nrows; row++) {
        if (strcmp(status_of(next, row), "ok") != 0)
            continue;
        for (int m = 0; m < next->nmetrics; m++) {
            const lt_column *spec = next->metric_spec[m];
            double value;
            if (spec->role == LT_COL_INFO || spec->higher_is_better != higher ||
                lt_results_number(&value, &next->file, row, next->value[m]) != LT_OK ||
                !isfinite(value))
                continue;
            const line *judged = r->judged[row] >= 0 ? &r->lines[r->judged[row] + m] : NULL;
            json_entry(f, first, next, row, m, shown, judged);
            first = 0;
        }
    }
    fputs(first ? "]\n" : "\n]\n", f);
    return lt_atomic_commit(&af);
}

/* PATH-smaller.json and PATH-bigger.json; a trailing .json in PATH goes. */
static void json_paths(const char *prefix, char small[4200], char big[4200])
{
    char stem[4096];
    snprintf(stem, sizeof stem, "%s", prefix);
    size_t len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".json") == 0)
        stem[len - 5] = '\0';
    snprintf(small, 4200, "%s-smaller.json", stem);
    snprintf(big, 4200, "%s-bigger.json", stem);
}

/* The --json files, checked as every output is before any work. */
static lt_status check_json_paths(const lt_compare_options *o, const char *base_path,
                                  const char *new_path)
{
    if (o->json == NULL)
        return LT_OK;
    char paths[2][4200];
    json_paths(o->json, paths[0], paths[1]);
    const char *inputs[] = {base_path, new_path};
    for (int i = 0; i < 2; i++)
        LT_TRY(lt_output_check("--json", paths[i], o->overwrite, 0, inputs, 2));
    return LT_OK;
}

/* The --json files; the names written go to `done`. */
static lt_status write_json_files(const char *prefix, const report *r, const side *next,
                                  const int *shown, char *done, size_t size)
{
    char small[4200], big[4200];
    json_paths(prefix, small, big);
    LT_TRY(write_json(small, 0, r, next, shown));
    LT_TRY(write_json(big, 1, r, next, shown));
    snprintf(done, size, "wrote %s and %s\n", small, big);
    return LT_OK;
}

/* A verdict that judged something: a metric compared, whatever came of it. */
static int judged_verdict(verdict v)
{
    return v == V_REGRESSED || v == V_CHANGED || v == V_IMPROVED || v == V_NOISE ||
           v == V_UNCHANGED;
}

/* The summary line; returns LT_COMPARE_PASS, _FAIL or _NOTHING_JUDGED. A
 * rate of a time judged beside it (GFLOP/s) is not counted again. */
static int summarise(FILE *out, const report *r, const side *base, const lt_compare_options *o)
{
    long long counts[V_COUNT] = {0}, failing = 0, judged = 0;
    for (long long i = 0; i < r->count; i++) {
        const line *l = &r->lines[i];
        if (l->derived)
            continue;
        counts[l->v]++;
        judged += l->metric >= 0 && judged_verdict(l->v);
        /* a case the base measured that the new file lacks fails: a
         * variant dropped is not a speed-up */
        failing += l->v == V_MISSING && strcmp(l->base_text, "ok") == 0;
        if (l->v != V_REGRESSED && l->v != V_CHANGED)
            continue;
        /* with exact_only a timing is reported, not failed */
        int timing = l->metric >= 0 && base->metric_spec[l->metric]->role == LT_COL_TIMING;
        failing += !(o->exact_only && timing);
    }
    int result = failing > 0 ? LT_COMPARE_FAIL : judged == 0 ? LT_COMPARE_NOTHING_JUDGED
                                                              : LT_COMPARE_PASS;
    static const char *const words[] = {"PASS", "FAIL", "", "NOTHING JUDGED"};
    fprintf(out, "\n**%s** (%s): ", words[result], base->schema->name);
    int first = 1;
    for (int v = 0; v < V_COUNT; v++) {
        if (counts[v] == 0 && v != V_REGRESSED)
            continue;
        fprintf(out, "%s%lld %s", first ? "" : ", ", counts[v], verdict_names[v]);
        first = 0;
    }
    fprintf(out, "; threshold %g%%, exact tolerance %g%% (across BLAS, kernel sets or builds "
                 "%g%% or %g)\n",
            o->threshold, o->exact_tolerance, o->cross_tolerance, o->cross_absolute);
    if (result == LT_COMPARE_NOTHING_JUDGED)
        fprintf(out, "No metric of any case could be judged: the runs differ in what the "
                     "lines above say, so this is neither a pass nor a fail.\n");
    return result;
}

/* A key that older files lack: an error naming the file when only one of
 * the two lacks it (its cases may differ in it); left out of the matching
 * when both do, like a metric neither has. */
static lt_status align_keys(const side *base, const side *next)
{
    const lt_schema *schema = base->schema;
    for (int c = 0; c < schema->ncols; c++) {
        const lt_column *col = &schema->columns[c];
        if (col->role != LT_COL_KEY)
            continue;
        int in_base = lt_results_column(&base->file, col->name) >= 0;
        int in_next = lt_results_column(&next->file, col->name) >= 0;
        if (in_base != in_next)
            return lt_fail(LT_E_INPUT,
                           "%s: key column '%s' is missing, expected it in a %s CSV as %s has "
                           "it (regenerate the older file to compare them)",
                           (in_base ? next : base)->file.path, col->name, schema->name,
                           (in_base ? base : next)->file.path);
    }
    return LT_OK;
}

/* A metric one file lacks is an error naming that file; one that neither
 * has (both written before the column existed) is left out of the
 * comparison, so a version's reference runs still compare with
 * themselves. */
static lt_status align_metrics(side *base, side *next)
{
    int kept = 0;
    for (int m = 0; m < base->nmetrics; m++) {
        const side *lacking = base->value[m] < 0 ? base : next->value[m] < 0 ? next : NULL;
        if (lacking != NULL && (base->value[m] >= 0 || next->value[m] >= 0))
            return lt_fail(LT_E_INPUT, "%s: column '%s' is missing, expected it in a %s CSV",
                           lacking->file.path, base->metric_spec[m]->name, base->schema->name);
        if (lacking != NULL)
            continue;
        side *sides[] = {base, next};
        for (int i = 0; i < 2; i++) {
            side *s = sides[i];
            s->metric_spec[kept] = s->metric_spec[m];
            s->value[kept] = s->value[m];
            s->median[kept] = s->median[m];
            s->min[kept] = s->min[m];
            s->max[kept] = s->max[m];
        }
        kept++;
    }
    base->nmetrics = next->nmetrics = kept;
    for (int m = 0; m < kept; m++) {
        const lt_column *spec = base->metric_spec[m];
        int derived = 0;
        for (int other = 0; other < kept && spec->role == LT_COL_TIMING && spec->rate; other++) {
            const lt_column *time = base->metric_spec[other];
            derived |= time->role == LT_COL_TIMING && !time->rate && time->spread != NULL &&
                       spec->spread != NULL && strcmp(time->spread, spec->spread) == 0;
        }
        base->derived[m] = next->derived[m] = derived;
    }
    return LT_OK;
}

static lt_status open_side(side *s, const char *path, const char *role,
                           const lt_schema *const *schemas, int count)
{
    memset(s, 0, sizeof *s);
    s->role = role;
    /* the file refused whole rather than judged in part */
    LT_TRY(lt_results_open(&s->file, &s->schema, path, schemas, count));
    return resolve(s);
}

lt_status lt_compare(const lt_schema *const *schemas, int count, const char *base_path,
                     const char *new_path, const lt_compare_options *o, FILE *out, int *failed)
{
    *failed = 0;
    side base, next;
    memset(&base, 0, sizeof base); /* freed below whichever step failed */
    memset(&next, 0, sizeof next);
    report r = {0};
    int shown[MAX_KEYS];
    long long matched = 0;
    char busy[2][1024], json_done[8600] = "";
    lt_status status = check_json_paths(o, base_path, new_path);
    if (status == LT_OK)
        status = open_side(&base, base_path, "base", schemas, count);
    if (status == LT_OK)
        status = open_side(&next, new_path, "new", schemas, count);
    if (status == LT_OK && base.schema != next.schema)
        status = lt_fail(LT_E_INPUT, "%s is a %s CSV but %s is a %s CSV: compare like with like",
                         base.file.path, base.schema->name, next.file.path, next.schema->name);
    if (status == LT_OK)
        status = align_keys(&base, &next);
    if (status == LT_OK)
        status = align_metrics(&base, &next);
    if (status == LT_OK) {
        choose_shown_keys(shown, &base, &next);
        status = build_report(&r, &base, &next, o, &matched);
    }
    if (status == LT_OK && matched == 0) {
        char keys[512] = "";
        for (int k = 0; k < base.nkeys; k++)
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", k ? ", " : "",
                     base.key_spec[k]->name);
        status = lt_fail(LT_E_INPUT, "%s and %s have no case in common (matched on %s)",
                         base.file.path, next.file.path, keys);
    }
    side *sides[] = {&base, &next};
    for (int i = 0; i < 2 && status == LT_OK; i++)
        status = busy_note(busy[i], sizeof busy[i], sides[i], o);
    /* Everything that can fail comes before the verdict is printed. */
    if (status == LT_OK && o->json != NULL)
        status = write_json_files(o->json, &r, &next, shown, json_done, sizeof json_done);
    if (status == LT_OK)
        status = print_table(out, &r, &base, &next, shown, o->all);
    if (status == LT_OK) {
        fprintf(out, "%s%s", busy[0], busy[1]);
        *failed = summarise(out, &r, &base, o);
        fputs(json_done, out);
    }
    lt_mem_free(r.lines);
    lt_mem_free(r.judged);
    lt_results_free(&base.file);
    lt_results_free(&next.file);
    return status;
}

/* Writes `word` after the line so far, wrapping at 90 columns. */
static void print_word(FILE *out, int *column, const char *word, const char *indent)
{
    int len = (int)strlen(word);
    if (*column + 1 + len > 90) {
        fprintf(out, "\n%s", indent);
        *column = (int)strlen(indent);
    }
    *column += fprintf(out, " %s", word);
}

void lt_compare_describe(const lt_schema *const *schemas, int count, FILE *out)
{
    fprintf(out, "\nTables (recognised by the experiment column and the key columns):\n");
    static const struct {
        lt_col_role role;
        const char *title;
    } roles[] = {{LT_COL_KEY, "keys:  "}, {LT_COL_TIMING, "timing:"}, {LT_COL_EXACT, "exact: "},
                 {LT_COL_INFO, "info:  "}};
    const char *indent = "           ";
    for (int k = 0; k < count; k++) {
        const lt_schema *s = schemas[k];
        fprintf(out, "  %s (experiment=%s)", s->name, s->experiment);
        for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
            fprintf(out, "\n    %s", roles[r].title);
            int column = 11, listed = 0;
            for (int c = 0; c < s->ncols; c++) {
                const lt_column *col = &s->columns[c];
                if (col->role != roles[r].role)
                    continue;
                char word[96];
                int judged = col->role == LT_COL_TIMING || col->role == LT_COL_EXACT;
                snprintf(word, sizeof word, "%s%s", col->name,
                         !judged ? "" : col->higher_is_better ? " (higher)" : " (lower)");
                print_word(out, &column, word, indent);
                listed++;
            }
            if (!listed)
                fprintf(out, " -");
        }
        fprintf(out, "\n");
    }
}
