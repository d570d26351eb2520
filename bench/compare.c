/* ltbench compare: pass/fail between two result CSVs, for performance-
 * regression tracking in CI. What a CSV holds is read from one table
 * (kinds[]): the key columns that identify a case, and each metric's
 * direction and class. Supporting a new experiment is a new entry there. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "core/mem.h"
#include "core/threads.h"
#include "io/atomic.h"
#include "results.h"

enum { MAX_KEYS = 16, MAX_METRICS = 16 };

typedef enum metric_class {
    TIMING, /* noisy: judged against --threshold and the runs' min..max spread */
    EXACT,  /* deterministic for the same seed and threads: any change counts */
    INFO    /* shown with --all, never judged */
} metric_class;

typedef struct metric_spec {
    const char *column;
    metric_class cls;
    int higher_is_better;
    const char *unit; /* for --json */
    /* A timing's spread comes from the median, min and max columns of the
     * time it measures (a rate measures its reciprocal), where the CSV has
     * them; without them a timing is a point. */
    const char *median, *min, *max;
    int rate;
} metric_spec;

typedef struct kind_spec {
    const char *name;
    const char *experiment;     /* the value of the experiment column */
    const char *keys[MAX_KEYS]; /* identify a case; NULL-terminated */
    int label_keys;             /* the first ones name it in the report */
    metric_spec metrics[MAX_METRICS];
} kind_spec;

#define SPREAD(time) time "_median_s", time "_min_s", time "_max_s"
#define TIME(column, time) {column, TIMING, 0, "s", SPREAD(time), 0}
#define RATE(column, unit, time) {column, TIMING, 1, unit, SPREAD(time), 1}
#define TIME_ALONE(column) {column, TIMING, 0, "s", NULL, NULL, NULL, 0}
#define RATE_ALONE(column, unit) {column, TIMING, 1, unit, NULL, NULL, NULL, 0}
#define EXACT_LOW(column, unit) {column, EXACT, 0, unit, NULL, NULL, NULL, 0}
#define EXACT_HIGH(column, unit) {column, EXACT, 1, unit, NULL, NULL, NULL, 0}
#define SHOWN(column) {column, INFO, 0, "", NULL, NULL, NULL, 0}

/* Threads are not a key: runs with other thread counts are "not comparable"
 * (see setup_columns) rather than different cases. */
#define COPY_KEYS                                                                        \
    "batch", "preset", "layers", "heads", "head_dim", "ffn", "dropout", "optimizer", \
        "base_lr", "seed"

static const kind_spec kinds[] = {
    {"copy summary", "copy", {"variant", "kernel", "N", COPY_KEYS, NULL}, 3,
     {TIME("step_median_s", "step"), RATE("tokens_per_s", "tokens/s", "step"),
      EXACT_LOW("peak_bytes", "bytes"), EXACT_LOW("planned_bytes", "bytes"),
      EXACT_LOW("params", "parameters"), EXACT_LOW("loss_start", "nats"),
      EXACT_LOW("loss_end", "nats"), EXACT_HIGH("copy_accuracy_end", "fraction"),
      EXACT_LOW("eval_loss", "nats"), EXACT_HIGH("eval_copy_accuracy", "fraction"),
      SHOWN("last_step"), SHOWN("total_s")}},
    /* Time per update is judged in the summary, with its spread; a curve's
     * running total would repeat one slowdown at every later update. */
    {"copy curves", "copy", {"variant", "kernel", "N", "step", COPY_KEYS, NULL}, 4,
     {SHOWN("elapsed_s"), EXACT_LOW("loss", "nats"), EXACT_HIGH("copy_accuracy", "fraction"),
      EXACT_LOW("grad_norm", "norm"), SHOWN("lr")}},
    {"scaling", "scaling",
     {"variant", "kernel", "causal", "N", "batch", "heads", "head_dim", "value_dim", "proj_k",
      "feature_map", NULL}, 4,
     {TIME("fwd_median_s", "fwd"), TIME("fwd_bwd_median_s", "fwd_bwd"),
      RATE("fwd_gflop_per_s", "GFLOP/s", "fwd"), RATE("fwd_bwd_gflop_per_s", "GFLOP/s", "fwd_bwd"),
      EXACT_LOW("peak_bytes", "bytes"), EXACT_LOW("planned_bytes", "bytes"),
      EXACT_LOW("flop_model_fwd", "FLOP"), EXACT_LOW("flop_model_bwd", "FLOP"),
      SHOWN("fwd_per_sample_s"), SHOWN("fwd_bwd_per_sample_s"), SHOWN("peak_bytes_per_sample")}},
    {"image", "image",
     {"dataset", "variant", "kernel", "gen_mode", "gen_batch", "preset", "layers", "heads",
      "head_dim", "ffn", NULL}, 5,
     {EXACT_LOW("test_bits_per_dim", "bits/dim"), RATE_ALONE("images_per_s", "images/s"),
      TIME_ALONE("step_median_s"), EXACT_LOW("peak_train_bytes", "bytes"),
      EXACT_LOW("peak_gen_bytes", "bytes"), EXACT_LOW("params", "parameters"),
      SHOWN("images_generated"), SHOWN("linear_speedup")}},
    {"image curves", "image",
     {"dataset", "variant", "kernel", "step", "preset", "layers", "heads", "head_dim", "ffn",
      NULL}, 4,
     {SHOWN("elapsed_s"), EXACT_LOW("loss", "nats"), EXACT_LOW("grad_norm", "norm")}},
    {"speech", "speech",
     {"model", "kernel", "preset", "hours", "stack", "batch", "layers", "width", NULL}, 2,
     {EXACT_LOW("test_per", "PER"), EXACT_LOW("dev_per", "PER"),
      TIME_ALONE("seconds_per_epoch"), EXACT_LOW("peak_bytes", "bytes"),
      EXACT_LOW("planned_bytes", "bytes"), EXACT_LOW("params", "parameters"),
      SHOWN("epochs"), SHOWN("baseline_per")}},
    {"speech curves", "speech",
     {"model", "kernel", "epoch", "preset", "hours", "stack", "batch", NULL}, 3,
     {SHOWN("elapsed_s"), SHOWN("epoch_s"), EXACT_LOW("train_loss", "nats"),
      EXACT_LOW("dev_per", "PER"), EXACT_LOW("test_per", "PER")}},
};
enum { KIND_COUNT = sizeof kinds / sizeof kinds[0] };

/* Provenance that must agree for numbers to be comparable. */
static const char *const setup_columns[] = {"cpu_model", "blas", "threads", "ranks",
                                            "omp_wait_policy", "build"};
enum { SETUP_COUNT = sizeof setup_columns / sizeof setup_columns[0] };

typedef enum verdict {
    V_REGRESSED, V_CHANGED, V_IMPROVED, V_NOISE, V_UNCHANGED, V_INFO,
    V_NOT_COMPARABLE, V_NOT_RUN, V_MISSING, V_ONLY_NEW, V_OTHER_KERNEL, V_COUNT
} verdict;

static const char *const verdict_names[V_COUNT] = {
    "regressed", "changed", "improved", "noise", "unchanged", "info",
    "not comparable", "not run", "missing in new", "only in new", "other kernel"};

/* One file, with its columns resolved against its kind. */
typedef struct side {
    results_file file;
    const char *role; /* "base" or "new" */
    const kind_spec *kind;
    int nkeys, nmetrics;
    int keys[MAX_KEYS];
    int value[MAX_METRICS], median[MAX_METRICS], min[MAX_METRICS], max[MAX_METRICS];
    int status;
    int setup[SETUP_COUNT];
} side;

/* One line of the report: a metric of a matched case, or a whole case. */
typedef struct line {
    long long base_row, new_row; /* -1: not in that file */
    int metric;                  /* -1: the whole case */
    verdict v;
    double change;               /* relative, NaN where none */
    char what[32], base_text[64], new_text[64];
} line;

typedef struct compare_options {
    double threshold, exact_tolerance; /* percent */
    double busy_load;
    const char *json;
    int all;
    const char *fail_on; /* "all" or "exact": which regressions fail */
} compare_options;

static int count_until_null(const char *const *items, int cap)
{
    int n = 0;
    while (n < cap && items[n] != NULL)
        n++;
    return n;
}

static int metric_count(const kind_spec *kind)
{
    int n = 0;
    while (n < MAX_METRICS && kind->metrics[n].column != NULL)
        n++;
    return n;
}

/* The kind whose key columns the file has, the most specific one when
 * several fit (copy curves has every key of copy summary, and step). */
static lt_status recognise(side *s)
{
    const char *experiment = results_experiment(&s->file);
    const kind_spec *best = NULL;
    const char *missing = NULL;
    for (int k = 0; k < KIND_COUNT; k++) {
        const kind_spec *kind = &kinds[k];
        if (experiment == NULL || strcmp(experiment, kind->experiment) != 0)
            continue;
        const char *lacks = results_missing(&s->file, kind->keys);
        if (lacks != NULL) {
            missing = missing ? missing : lacks;
            continue;
        }
        if (best == NULL || count_until_null(kind->keys, MAX_KEYS) >
                                count_until_null(best->keys, MAX_KEYS))
            best = kind;
    }
    if (best == NULL && missing != NULL)
        return lt_fail(LT_E_INPUT, "%s: a %s CSV without key column '%s'", s->file.path,
                       experiment, missing);
    if (best == NULL) {
        char known[256] = "";
        for (int k = 0; k < KIND_COUNT; k++)
            if (strstr(known, kinds[k].experiment) == NULL)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                         known[0] ? ", " : "", kinds[k].experiment);
        if (experiment == NULL)
            return lt_fail(LT_E_INPUT,
                           "%s: no 'experiment' column with one value in every row, expected a "
                           "result CSV of ltbench (%s)", s->file.path, known);
        return lt_fail(LT_E_INPUT, "%s: unknown experiment '%s', expected one of %s",
                       s->file.path, experiment, known);
    }
    s->kind = best;
    return LT_OK;
}

static lt_status resolve(side *s)
{
    const kind_spec *kind = s->kind;
    s->nkeys = count_until_null(kind->keys, MAX_KEYS);
    s->nmetrics = metric_count(kind);
    for (int k = 0; k < s->nkeys; k++)
        s->keys[k] = results_column(&s->file, kind->keys[k]);
    for (int m = 0; m < s->nmetrics; m++) {
        const metric_spec *spec = &kind->metrics[m];
        s->value[m] = results_column(&s->file, spec->column);
        if (s->value[m] < 0)
            return lt_fail(LT_E_INPUT, "%s: column '%s' is missing, expected it in a %s CSV",
                           s->file.path, spec->column, kind->name);
        s->median[m] = s->min[m] = s->max[m] = -1;
        if (spec->median != NULL) {
            const char *spread[] = {spec->median, spec->min, spec->max, NULL};
            if (results_missing(&s->file, spread) == NULL) {
                s->median[m] = results_column(&s->file, spec->median);
                s->min[m] = results_column(&s->file, spec->min);
                s->max[m] = results_column(&s->file, spec->max);
            }
        }
    }
    s->status = results_column(&s->file, "status");
    for (int i = 0; i < SETUP_COUNT; i++)
        s->setup[i] = results_column(&s->file, setup_columns[i]);
    return LT_OK;
}

static const char *status_of(const side *s, long long row)
{
    return s->status < 0 ? "ok" : results_cell(&s->file, row, s->status);
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

static int same_case(const side *a, long long ra, const side *b, long long rb)
{
    for (int k = 0; k < a->nkeys; k++)
        if (!cells_equal(results_cell(&a->file, ra, a->keys[k]),
                         results_cell(&b->file, rb, b->keys[k])))
            return 0;
    return 1;
}

static void describe_case(char *buf, size_t size, const side *s, long long row,
                          const int *shown)
{
    buf[0] = '\0';
    for (int k = 0; k < s->nkeys; k++)
        if (shown[k])
            results_label_append(buf, size, s->kind->keys[k],
                                 results_cell(&s->file, row, s->keys[k]));
}

static lt_status check_unique(const side *s)
{
    for (long long i = 0; i < s->file.table.nrows; i++)
        for (long long j = i + 1; j < s->file.table.nrows; j++)
            if (same_case(s, i, s, j)) {
                char label[256];
                int all[MAX_KEYS];
                for (int k = 0; k < MAX_KEYS; k++)
                    all[k] = 1;
                describe_case(label, sizeof label, s, i, all);
                return lt_fail(LT_E_INPUT, "%s: rows %lld and %lld are the same case (%s)",
                               s->file.path, i + 1, j + 1, label);
            }
    return LT_OK;
}

/* A case is named by its label keys and by every other key that varies
 * between the rows of either file. */
static void choose_shown_keys(int *shown, const side *base, const side *next)
{
    for (int k = 0; k < base->nkeys; k++) {
        shown[k] = k < base->kind->label_keys;
        const side *sides[] = {base, next};
        const char *first = results_cell(&base->file, 0, base->keys[k]);
        for (int s = 0; s < 2 && !shown[k]; s++)
            for (long long r = 0; r < sides[s]->file.table.nrows && !shown[k]; r++)
                shown[k] = !cells_equal(first, results_cell(&sides[s]->file, r, sides[s]->keys[k]));
    }
}

typedef struct range {
    double lo, hi;
} range;

static lt_status metric_value(double *value, range *spread, const side *s, long long row, int m)
{
    LT_TRY(results_number(value, &s->file, row, s->value[m]));
    *spread = (range){*value, *value};
    if (s->median[m] < 0)
        return LT_OK;
    double median, lo, hi;
    LT_TRY(results_number(&median, &s->file, row, s->median[m]));
    LT_TRY(results_number(&lo, &s->file, row, s->min[m]));
    LT_TRY(results_number(&hi, &s->file, row, s->max[m]));
    if (!(median > 0) || !isfinite(lo) || !isfinite(hi))
        return LT_OK;
    /* The metric scales with the time (a per-sample time) or with its
     * reciprocal (a rate), so the time's spread carries over. */
    if (s->kind->metrics[m].rate)
        *spread = (range){*value * median / hi, *value * median / lo};
    else
        *spread = (range){*value * lo / median, *value * hi / median};
    return LT_OK;
}

/* Every measured case's metrics must be numbers, compared or not, so a
 * damaged file is refused whole rather than judged in part. */
static lt_status check_numbers(const side *s)
{
    for (long long row = 0; row < s->file.table.nrows; row++)
        for (int m = 0; m < s->nmetrics && strcmp(status_of(s, row), "ok") == 0; m++) {
            double value;
            range spread;
            LT_TRY(metric_value(&value, &spread, s, row, m));
        }
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

static verdict judge(const metric_spec *spec, double base, double next, range rb, range rn,
                     const compare_options *o, double *change)
{
    *change = relative_change(base, next);
    if (spec->cls == INFO)
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
        return spec->cls == EXACT ? V_CHANGED : V_IMPROVED;
    }
    double worse = spec->higher_is_better ? -*change : *change;
    if (spec->cls == EXACT) {
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

static void format_value(char *buf, size_t size, double value, metric_class cls)
{
    snprintf(buf, size, cls == TIMING ? "%.6g" : "%.10g", value);
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
    **out = (line){-1, -1, -1, V_INFO, NAN, "", "", ""};
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

/* Judges one matched case: its status, its setup, then each metric. */
static lt_status compare_case(report *r, const side *base, long long rb, const side *next,
                              long long rn, const compare_options *o)
{
    const char *sb = status_of(base, rb), *sn = status_of(next, rn);
    if (strcmp(sb, "ok") != 0 || strcmp(sn, "ok") != 0)
        return case_line(r, rb, rn, V_NOT_RUN, "status", sb, sn);
    for (int i = 0; i < SETUP_COUNT; i++) {
        if (base->setup[i] < 0 || next->setup[i] < 0)
            continue;
        const char *a = results_cell(&base->file, rb, base->setup[i]);
        const char *b = results_cell(&next->file, rn, next->setup[i]);
        if (!cells_equal(a, b))
            return case_line(r, rb, rn, V_NOT_COMPARABLE, setup_columns[i], a, b);
    }
    r->judged[rn] = r->count;
    for (int m = 0; m < base->nmetrics; m++) {
        const metric_spec *spec = &base->kind->metrics[m];
        double vb, vn;
        range gb, gn;
        LT_TRY(metric_value(&vb, &gb, base, rb, m));
        LT_TRY(metric_value(&vn, &gn, next, rn, m));
        line *l;
        LT_TRY(add_line(r, &l));
        l->base_row = rb;
        l->new_row = rn;
        l->metric = m;
        l->v = judge(spec, vb, vn, gb, gn, o, &l->change);
        snprintf(l->what, sizeof l->what, "%s", spec->column);
        format_value(l->base_text, sizeof l->base_text, vb, spec->cls);
        format_value(l->new_text, sizeof l->new_text, vn, spec->cls);
    }
    return LT_OK;
}

/* The key index of `kernel`, or -1. */
static int kernel_key(const side *s)
{
    for (int k = 0; k < s->nkeys; k++)
        if (strcmp(s->kind->keys[k], "kernel") == 0)
            return k;
    return -1;
}

/* The same case run with another kernel: every key equal but the kernel
 * (key index kk, -1 when the kind has none). */
static int same_case_but_kernel(const side *a, long long ra, const side *b, long long rb,
                                int kk)
{
    if (kk < 0)
        return 0;
    for (int k = 0; k < a->nkeys; k++)
        if (k != kk && !cells_equal(results_cell(&a->file, ra, a->keys[k]),
                                    results_cell(&b->file, rb, b->keys[k])))
            return 0;
    return 1;
}

/* Matches the rows of both files on their keys and judges every case. A
 * case left unmatched that the other file has once with another kernel (a
 * kernel chosen by --kernel, or a new default) is matched to it: its
 * numbers are judged, under a line that names both kernels. */
static lt_status build_report(report *r, const side *base, const side *next,
                              const compare_options *o, long long *matched)
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
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        partner[rb] = -1;
        /* Runs of one program list cases in the same order: try that first. */
        if (rb < nn && same_case(base, rb, next, rb))
            partner[rb] = rb;
        for (long long j = 0; j < nn && partner[rb] < 0; j++)
            if (same_case(base, rb, next, j))
                partner[rb] = j;
        if (partner[rb] >= 0)
            seen[partner[rb]] = 1;
    }
    int kk = kernel_key(base);
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        if (partner[rb] >= 0)
            continue;
        long long only = -1, candidates = 0;
        for (long long j = 0; j < nn; j++)
            if (!seen[j] && same_case_but_kernel(base, rb, next, j, kk)) {
                only = j;
                candidates++;
            }
        if (candidates == 1) {
            partner[rb] = only;
            seen[only] = 1;
        }
    }
    *matched = 0;
    for (long long rb = 0; rb < nb && status == LT_OK; rb++) {
        long long rn = partner[rb];
        if (rn < 0) {
            status = case_line(r, rb, -1, V_MISSING, "-", status_of(base, rb), "-");
            continue;
        }
        (*matched)++;
        if (kk >= 0) {
            const char *a = results_cell(&base->file, rb, base->keys[kk]);
            const char *b = results_cell(&next->file, rn, next->keys[kk]);
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
    if (l->v == V_UNCHANGED || l->v == V_INFO)
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
    else if (change != 0 && fabs(change) < 5e-4)
        snprintf(buf, size, "%+.2g%%", 100 * change);
    else
        snprintf(buf, size, "%+.1f%%", 100 * change);
}

static void print_table(const report *r, const side *base, const side *next, const int *shown,
                        int all)
{
    printf("| case | metric | base | new | change | verdict |\n|---|---|---|---|---|---|\n");
    long long printed = 0;
    for (long long i = 0; i < r->count; i++) {
        const line *l = &r->lines[i];
        if (!line_shown(l, all))
            continue;
        char label[256], change[32];
        if (l->base_row >= 0)
            describe_case(label, sizeof label, base, l->base_row, shown);
        else
            describe_case(label, sizeof label, next, l->new_row, shown);
        format_change(change, sizeof change, l->change);
        printf("| %s | %s | %s | %s | %s | %s |\n", label, l->what, l->base_text, l->new_text,
               change, verdict_names[l->v]);
        printed++;
    }
    if (printed == 0)
        printf("| (every metric unchanged) | | | | | |\n");
}

/* Says (into `note`, empty if not) when a run was taken on a busy machine:
 * its load average, at the start or at any row, above --busy-load or half
 * the cores it recorded. */
static lt_status busy_note(char *note, size_t size, const side *s, const compare_options *o)
{
    note[0] = '\0';
    int cols[2] = {results_column(&s->file, "load_start"), results_column(&s->file, "load_end")};
    int cores_col = results_column(&s->file, "cores");
    double peak = NAN;
    for (long long r = 0; r < s->file.table.nrows; r++)
        for (int i = 0; i < 2; i++) {
            double load;
            if (cols[i] < 0)
                continue;
            LT_TRY(results_number(&load, &s->file, r, cols[i]));
            if (!isnan(load) && !(load <= peak))
                peak = load;
        }
    if (isnan(peak))
        return LT_OK; /* no load recorded */
    double cores = lt_threads_available();
    if (cores_col >= 0)
        LT_TRY(results_number(&cores, &s->file, 0, cores_col));
    double limit = o->busy_load > 0 ? o->busy_load : 0.5 * cores;
    if (peak <= limit)
        return LT_OK;
    char why[64];
    if (o->busy_load > 0)
        snprintf(why, sizeof why, "--busy-load");
    else
        snprintf(why, sizeof why, "half of %g cores", cores);
    snprintf(note, size,
             "\n> **%s run taken on a busy machine**: %s has a load average of %.2f, above %.2f "
             "(%s); its timings may be slow.\n",
             s->role, s->file.path, peak, limit, why);
    return LT_OK;
}

/* ---- --json: github-action-benchmark's custom format ---- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* One entry: a metric of a case of the new run, with its verdict. */
static void json_entry(FILE *f, int first, const side *next, long long row, int m,
                       const int *shown, const line *judged)
{
    const metric_spec *spec = &next->kind->metrics[m];
    double value;
    range spread;
    metric_value(&value, &spread, next, row, m); /* check_numbers passed it */
    char label[256], name[512], text[128], change[32];
    describe_case(label, sizeof label, next, row, shown);
    snprintf(name, sizeof name, "%s: %s %s", next->kind->name, label, spec->column);
    fprintf(f, "%s\n  {\"name\": ", first ? "" : ",");
    json_string(f, name);
    fprintf(f, ", \"unit\": ");
    json_string(f, spec->unit);
    fprintf(f, ", \"value\": %.17g", value);
    if (next->median[m] >= 0) {
        snprintf(text, sizeof text, "%.6g..%.6g", spread.lo, spread.hi);
        fprintf(f, ", \"range\": ");
        json_string(f, text);
    }
    if (judged != NULL) {
        format_change(change, sizeof change, judged->change);
        snprintf(text, sizeof text, "base %s, change %s: %s", judged->base_text, change,
                 verdict_names[judged->v]);
    } else {
        snprintf(text, sizeof text, "not compared with a base");
    }
    fprintf(f, ", \"extra\": ");
    json_string(f, text);
    fputc('}', f);
}

/* Writes one file: the metrics of every case the new run measured (status
 * ok) whose better direction is `higher` (customBiggerIsBetter) or not
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
            const metric_spec *spec = &next->kind->metrics[m];
            double value;
            if (spec->cls == INFO || spec->higher_is_better != higher ||
                results_number(&value, &next->file, row, next->value[m]) != LT_OK ||
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
static lt_status write_json_files(const char *prefix, const report *r, const side *next,
                                  const int *shown)
{
    char stem[4096], path[4200];
    snprintf(stem, sizeof stem, "%s", prefix);
    size_t len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".json") == 0)
        stem[len - 5] = '\0';
    snprintf(path, sizeof path, "%s-smaller.json", stem);
    LT_TRY(write_json(path, 0, r, next, shown));
    printf("wrote %s", path);
    snprintf(path, sizeof path, "%s-bigger.json", stem);
    LT_TRY(write_json(path, 1, r, next, shown));
    printf(" and %s\n", path);
    return LT_OK;
}

/* Writes `word` after the line so far, wrapping at 90 columns. */
static void print_word(int *column, const char *word, const char *indent)
{
    int len = (int)strlen(word);
    if (*column + 1 + len > 90) {
        printf("\n%s", indent);
        *column = (int)strlen(indent);
    }
    *column += printf(" %s", word);
}

/* The kinds table, for --help: it is the documentation of what is judged. */
static void print_kinds(void)
{
    printf("\nKinds of CSV (recognised by the experiment column and the key columns):\n");
    static const char *const classes[] = {"timing:", "exact: ", "info:  "};
    const char *indent = "           "; /* under the first word after "timing:" */
    for (int k = 0; k < KIND_COUNT; k++) {
        const kind_spec *kind = &kinds[k];
        printf("  %s (experiment=%s)\n    keys:  ", kind->name, kind->experiment);
        int column = 11;
        for (int i = 0; kind->keys[i]; i++)
            print_word(&column, kind->keys[i], indent);
        for (int c = TIMING; c <= INFO; c++) {
            printf("\n    %s", classes[c]);
            column = 11;
            int listed = 0;
            for (int m = 0; m < metric_count(kind); m++) {
                const metric_spec *spec = &kind->metrics[m];
                char word[96];
                snprintf(word, sizeof word, "%s%s", spec->column,
                         c == INFO ? "" : spec->higher_is_better ? " (higher)" : " (lower)");
                if ((int)spec->cls == c) {
                    print_word(&column, word, indent);
                    listed++;
                }
            }
            if (!listed)
                printf(" -");
        }
        printf("\n");
    }
}

static int summarise(const report *r, const side *base, const compare_options *o)
{
    long long counts[V_COUNT] = {0}, failing = 0;
    int exact_only = strcmp(o->fail_on, "exact") == 0;
    for (long long i = 0; i < r->count; i++) {
        const line *l = &r->lines[i];
        counts[l->v]++;
        if (l->v != V_REGRESSED && l->v != V_CHANGED)
            continue;
        /* with --fail-on exact a timing is reported, not failed */
        int timing = l->metric >= 0 && base->kind->metrics[l->metric].cls == TIMING;
        failing += !(exact_only && timing);
    }
    int failed = failing > 0;
    printf("\n**%s** (%s): ", failed ? "FAIL" : "PASS", base->kind->name);
    int first = 1;
    for (int v = 0; v < V_COUNT; v++) {
        if (counts[v] == 0 && v != V_REGRESSED)
            continue;
        printf("%s%lld %s", first ? "" : ", ", counts[v], verdict_names[v]);
        first = 0;
    }
    printf("; threshold %g%%, exact tolerance %g%%\n", o->threshold, o->exact_tolerance);
    return failed;
}

static int run(side *base, side *next, const compare_options *o, const char *program)
{
    report r = {0};
    int shown[MAX_KEYS];
    long long matched = 0;
    lt_status status = LT_OK;
    side *sides[] = {base, next};
    for (int i = 0; i < 2 && status == LT_OK; i++) {
        status = recognise(sides[i]);
        if (status == LT_OK)
            status = resolve(sides[i]);
        if (status == LT_OK)
            status = check_unique(sides[i]);
        if (status == LT_OK)
            status = check_numbers(sides[i]);
    }
    if (status == LT_OK && base->kind != next->kind)
        status = lt_fail(LT_E_INPUT, "%s is a %s CSV but %s is a %s CSV: compare like with like",
                         base->file.path, base->kind->name, next->file.path, next->kind->name);
    if (status == LT_OK) {
        choose_shown_keys(shown, base, next);
        status = build_report(&r, base, next, o, &matched);
    }
    if (status == LT_OK && matched == 0) {
        char keys[512] = "";
        for (int k = 0; k < base->nkeys; k++)
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", k ? ", " : "",
                     base->kind->keys[k]);
        status = lt_fail(LT_E_INPUT, "%s and %s have no case in common (matched on %s)",
                         base->file.path, next->file.path, keys);
    }
    char busy[2][1024];
    for (int i = 0; i < 2 && status == LT_OK; i++)
        status = busy_note(busy[i], sizeof busy[i], sides[i], o);
    int failed = 0;
    if (status == LT_OK) {
        print_table(&r, base, next, shown, o->all);
        printf("%s%s", busy[0], busy[1]);
        failed = summarise(&r, base, o);
    }
    if (status == LT_OK && o->json != NULL)
        status = write_json_files(o->json, &r, next, shown);
    lt_mem_free(r.lines);
    lt_mem_free(r.judged);
    if (status != LT_OK)
        return lt_cli_report(program, status);
    return failed;
}

int main(int argc, char **argv)
{
    compare_options o = {.threshold = 5, .exact_tolerance = 0, .busy_load = 0, .json = NULL,
                         .fail_on = "all"};
    lt_flag flags[] = {
        {"--threshold", LT_FLAG_DOUBLE, &o.threshold, "PCT",
         "a timing regresses when worse by more than PCT percent (and the min..max ranges of "
         "the two runs do not overlap)", 0, 1e6, NULL, 0},
        {"--exact-tolerance", LT_FLAG_DOUBLE, &o.exact_tolerance, "PCT",
         "relative change, in percent, allowed in exact metrics (bytes, FLOPs, losses)", 0, 1e6,
         NULL, 0},
        {"--busy-load", LT_FLAG_DOUBLE, &o.busy_load, "LOAD",
         "call a run busy above this load average; 0 = half the cores its CSV records", 0, 1e6,
         NULL, 0},
        {"--json", LT_FLAG_STRING, &o.json, "PATH",
         "also write PATH-smaller.json and PATH-bigger.json for github-action-benchmark", 0, 0,
         NULL, 0},
        {"--all", LT_FLAG_BOOL, &o.all, NULL,
         "list every metric, unchanged and info ones too", 0, 0, NULL, 0},
        {"--fail-on", LT_FLAG_CHOICE, &o.fail_on, NULL,
         "exact: only deterministic metrics fail (timings are reported): for CI machines "
         "whose timings are noisy", 0, 0, "all|exact", 0},
    };
    lt_cli cli = {
        "ltbench compare",
        "Compare two result CSVs of the same kind: pass/fail for performance-regression "
        "tracking.",
        "Rows are matched on their key columns; a case that one file has only with another\n"
        "kernel (one chosen by --kernel) is matched to it once, under an 'other kernel' line.\n"
        "Verdicts, per metric of a matched case:\n"
        "  timing  regressed: worse than base by more than --threshold AND the runs' min..max\n"
        "          ranges do not overlap; improved: better by as much, ranges disjoint;\n"
        "          noise: beyond the threshold but the ranges overlap; else unchanged.\n"
        "  exact   deterministic for the same seed and threads: any relative change beyond\n"
        "          --exact-tolerance fails, as 'regressed' in the worse direction and\n"
        "          'changed' in the better one (the numbers are not reproducible either\n"
        "          way: update the baseline on purpose).\n"
        "  info    listed with --all, never judged.\n"
        "Cases whose status is not ok are 'not run'; cases whose cpu_model, blas, threads,\n"
        "ranks, omp_wait_policy or build differ are 'not comparable'; neither is judged.\n"
        "Cases in one file only are listed.\n"
        "A run whose load average (load_start, load_end) exceeds --busy-load is reported\n"
        "as taken on a busy machine.\n"
        "Prints a Markdown table (case, metric, base, new, change, verdict: only what is not\n"
        "unchanged unless --all) and a summary line.\n"
        "--json PATH writes github-action-benchmark's custom format, one array of\n"
        "{\"name\", \"unit\", \"value\", \"range\", \"extra\"} per file, with the new run's\n"
        "values:\n"
        "PATH-smaller.json holds the metrics where lower is better (times, bytes, losses: use\n"
        "tool customSmallerIsBetter), PATH-bigger.json those where higher is better (rates,\n"
        "accuracies: tool customBiggerIsBetter).\n"
        "Exit status: 0 no regression, 1 a regression or an exact change, 2 bad input\n"
        "(unreadable or malformed CSV, unknown kind, missing columns, different kinds, no case\n"
        "in common).",
        flags, (int)(sizeof flags / sizeof flags[0])};
    const char *files[2];
    lt_cli_operands operands = {"BASE.csv NEW.csv", files, 2, 2, 0};
    int exit_now;
    int code = bench_parse_tool(&cli, &operands, argc, argv, &exit_now);
    if (exit_now) {
        if (code == 0)
            print_kinds();
        return code;
    }
    side base = {.role = "base"}, next = {.role = "new"};
    lt_status status = results_read(&base.file, files[0]);
    if (status == LT_OK)
        status = results_read(&next.file, files[1]);
    code = status == LT_OK ? run(&base, &next, &o, cli.program)
                           : lt_cli_report(cli.program, status);
    results_free(&base.file);
    results_free(&next.file);
    return code;
}
