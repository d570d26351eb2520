/* `ltbench plot`'s engine (see plot.h): a plan per figure groups a CSV's
 * rows into series, then the data, the gnuplot script and the PNG are
 * written from it. One file because every stage reads the private plan
 * struct behind the one entry, lt_plot; splitting it would put the plan in
 * a header. */
#include "results/plot.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "attn/attn.h"
#include "core/mem.h"
#include "core/process.h"
#include "io/atomic.h"
#include "io/outdir.h"
#include "results/file.h"

enum { MAX_SERIES = 64, MAX_CLUSTERS = 8, MAX_PLANS = 64 };

typedef struct series_info {
    long long first_row; /* its key values are this row's */
    long long drawn;     /* rows with status ok */
    char title[256];
    char note[512];      /* its rows not drawn: "skipped-budget at N=32768,65536" */
} series_info;

/* One figure to draw: the CSV, its rows grouped into series. */
typedef struct plan {
    const lt_figure *spec;
    lt_results_file file;
    char name[64];
    int status_col;
    int nseries, nclusters;
    series_info series[MAX_SERIES];
    const char *clusters[MAX_CLUSTERS];
    int *series_of; /* (rows) */
    char not_drawn[1024]; /* a line per series with cases not drawn */
    lt_csv_table paper;   /* the paper's table for the paper cluster */
    int paper_cluster;    /* its index in clusters, or -1 */
} plan;

static int is_ok(const plan *p, long long row)
{
    return p->status_col < 0 || strcmp(lt_results_cell(&p->file, row, p->status_col), "ok") == 0;
}

static int series_key_count(const lt_figure *spec)
{
    int n = 0;
    while (spec->series[n] != NULL)
        n++;
    return n;
}

static int same_series(const plan *p, long long a, long long b)
{
    for (int k = 0; p->spec->series[k]; k++) {
        int col = lt_results_column(&p->file, p->spec->series[k]);
        if (strcmp(lt_results_cell(&p->file, a, col), lt_results_cell(&p->file, b, col)) != 0)
            return 0;
    }
    return 1;
}

/* Whether series key k tells apart two series that agree on the keys before it. */
static int key_distinguishes(const plan *p, int k)
{
    int col = lt_results_column(&p->file, p->spec->series[k]);
    for (int a = 0; a < p->nseries; a++)
        for (int b = a + 1; b < p->nseries; b++) {
            long long ra = p->series[a].first_row, rb = p->series[b].first_row;
            int agree = 1;
            for (int j = 0; j < k && agree; j++) {
                int cj = lt_results_column(&p->file, p->spec->series[j]);
                agree = strcmp(lt_results_cell(&p->file, ra, cj), lt_results_cell(&p->file, rb, cj)) == 0;
            }
            if (agree && strcmp(lt_results_cell(&p->file, ra, col), lt_results_cell(&p->file, rb, col)))
                return 1;
        }
    return 0;
}

static void append(char *buf, size_t size, const char *fmt, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, fmt, text);
}

/* "skipped-budget at N=32768,65536" for each status of a series' rows not
 * drawn; a status that every row of the series has needs no positions. */
static void note_not_drawn(plan *p, int s)
{
    series_info *si = &p->series[s];
    const char *x = p->spec->style == LT_FIGURE_LINES ? p->spec->panels[0].x : p->spec->cluster;
    int xcol = lt_results_column(&p->file, x);
    for (long long r = 0; r < p->file.table.nrows; r++) {
        if (p->series_of[r] != s || is_ok(p, r))
            continue;
        const char *status = lt_results_cell(&p->file, r, p->status_col);
        long long earlier = 0, others = 0;
        for (long long q = 0; q < p->file.table.nrows; q++)
            if (p->series_of[q] == s) {
                int same = !is_ok(p, q) &&
                           !strcmp(lt_results_cell(&p->file, q, p->status_col), status);
                earlier += same && q < r;
                others += !same;
            }
        if (earlier)
            continue; /* this status is listed already */
        append(si->note, sizeof si->note, "%s", si->note[0] ? "; " : "");
        append(si->note, sizeof si->note, "%s", status);
        if (others == 0)
            continue;
        append(si->note, sizeof si->note, " at %s=", x);
        int first = 1;
        for (long long q = r; q < p->file.table.nrows; q++)
            if (p->series_of[q] == s && !is_ok(p, q) &&
                !strcmp(lt_results_cell(&p->file, q, p->status_col), status)) {
                append(si->note, sizeof si->note, first ? "%s" : ",%s",
                       lt_results_cell(&p->file, q, xcol));
                first = 0;
            }
    }
}

/* Where a variant name stands in the attention registry's order (lsh-4
 * as lsh), past the end for a name it does not list (speech's bilstm). */
static int variant_rank(const char *name)
{
    const char *names = lt_attn_variant_names(); /* "softmax|linear|..." */
    int rank = 0;
    for (const char *at = names; *at; rank++) {
        size_t len = strcspn(at, "|");
        if (strncmp(name, at, len) == 0 && (name[len] == '\0' || name[len] == '-'))
            return rank;
        at += len + (at[len] == '|');
    }
    return rank;
}

/* Two series' values of one key: numbers by value, variants in the
 * registry's order (then by their number: lsh-1, lsh-4), other text by
 * first appearance in the CSV (row order). */
static int compare_key_values(const plan *p, int col, int variant, long long ra, long long rb)
{
    const char *a = lt_results_cell(&p->file, ra, col), *b = lt_results_cell(&p->file, rb, col);
    if (strcmp(a, b) == 0)
        return 0;
    char *end_a, *end_b;
    double x = strtod(a, &end_a), y = strtod(b, &end_b);
    if (end_a != a && *end_a == '\0' && end_b != b && *end_b == '\0' && x != y)
        return x < y ? -1 : 1;
    if (variant && variant_rank(a) != variant_rank(b))
        return variant_rank(a) < variant_rank(b) ? -1 : 1;
    const char *dash_a = strrchr(a, '-'), *dash_b = strrchr(b, '-'); /* lsh-1 before lsh-4 */
    if (variant && dash_a != NULL && dash_b != NULL) {
        x = strtod(dash_a + 1, &end_a), y = strtod(dash_b + 1, &end_b);
        if (*end_a == '\0' && *end_b == '\0' && end_a != dash_a + 1 && end_b != dash_b + 1 &&
            x != y)
            return x < y ? -1 : 1;
    }
    return ra < rb ? -1 : 1;
}

/* A BARS figure's groups in the order of their keys (softmax before linear,
 * batch 1 before 16) and its clusters by name, not in the order a run
 * happened to write its rows. */
static void order_bar_series(plan *p, long long nrows)
{
    int order[MAX_SERIES], rank_of[MAX_SERIES];
    for (int s = 0; s < p->nseries; s++)
        order[s] = s;
    for (int i = 1; i < p->nseries; i++) /* insertion sort: a handful of series */
        for (int j = i; j > 0; j--) {
            int c = 0;
            for (int k = 0; p->spec->series[k] != NULL && c == 0; k++)
                c = compare_key_values(p, lt_results_column(&p->file, p->spec->series[k]),
                                       strcmp(p->spec->series[k], "variant") == 0,
                                       p->series[order[j - 1]].first_row,
                                       p->series[order[j]].first_row);
            if (c <= 0)
                break;
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    /* the clusters (image's generation modes) by name: each keeps its colour
     * from one figure to the next */
    for (int i = 1; i < p->nclusters; i++)
        for (int j = i; j > 0 && strcmp(p->clusters[j - 1], p->clusters[j]) > 0; j--) {
            const char *t = p->clusters[j];
            p->clusters[j] = p->clusters[j - 1], p->clusters[j - 1] = t;
        }
    series_info sorted[MAX_SERIES];
    for (int s = 0; s < p->nseries; s++)
        sorted[s] = p->series[order[s]], rank_of[order[s]] = s;
    memcpy(p->series, sorted, (size_t)p->nseries * sizeof *sorted);
    for (long long r = 0; r < nrows; r++)
        p->series_of[r] = rank_of[p->series_of[r]];
}

/* Groups the rows into series (and bar clusters) and checks that every
 * value to be drawn is a number, before anything is written. */
static lt_status build_plan(plan *p)
{
    const lt_figure *spec = p->spec;
    long long nrows = p->file.table.nrows;
    p->status_col = lt_results_column(&p->file, "status");
    LT_TRY(lt_mem_alloc((void **)&p->series_of, (size_t)nrows * sizeof *p->series_of,
                        "series of rows"));
    int cluster_col = spec->cluster ? lt_results_column(&p->file, spec->cluster) : -1;
    for (long long r = 0; r < nrows; r++) {
        int s = 0;
        while (s < p->nseries && !same_series(p, p->series[s].first_row, r))
            s++;
        if (s == p->nseries) {
            if (s == MAX_SERIES)
                return lt_fail(LT_E_INPUT, "%s: more than %d series for the %s figure",
                               p->file.path, MAX_SERIES, spec->name);
            p->series[p->nseries++] = (series_info){.first_row = r};
        }
        p->series_of[r] = s;
        if (!is_ok(p, r))
            continue;
        p->series[s].drawn++;
        for (int i = 0; i < lt_figure_panels(spec); i++) {
            const lt_panel *panel = &spec->panels[i];
            double v;
            if (panel->x)
                LT_TRY(lt_results_number(&v, &p->file, r, lt_results_column(&p->file, panel->x)));
            LT_TRY(lt_results_number(&v, &p->file, r, lt_results_column(&p->file, panel->y)));
        }
        if (cluster_col < 0)
            continue;
        const char *c = lt_results_cell(&p->file, r, cluster_col);
        int k = 0;
        while (k < p->nclusters && strcmp(p->clusters[k], c) != 0)
            k++;
        if (k == MAX_CLUSTERS)
            return lt_fail(LT_E_INPUT, "%s: more than %d values of %s", p->file.path,
                           MAX_CLUSTERS, spec->cluster);
        if (k == p->nclusters)
            p->clusters[p->nclusters++] = c;
    }
    if (spec->style == LT_FIGURE_BARS)
        order_bar_series(p, nrows);
    int nkeys = series_key_count(spec), shown[LT_FIGURE_SERIES_KEYS];
    for (int k = 0; k < nkeys; k++)
        shown[k] = k < spec->title_keys || key_distinguishes(p, k);
    for (int s = 0; s < p->nseries; s++) {
        series_info *si = &p->series[s];
        for (int k = 0; k < nkeys; k++)
            if (shown[k])
                lt_results_label_append(si->title, sizeof si->title, spec->series[k],
                                     lt_results_cell(&p->file, si->first_row,
                                                  lt_results_column(&p->file, spec->series[k])));
        note_not_drawn(p, s);
        if (si->note[0]) {
            append(p->not_drawn, sizeof p->not_drawn, "\nnot drawn: %s", si->title);
            append(p->not_drawn, sizeof p->not_drawn, ": %s", si->note);
        }
    }
    return LT_OK;
}

/* The paper's CSV for this figure, when the spec names one for the CSV's
 * `paper_by` value and the paper folder holds it: a last cluster. A
 * paper folder without the file draws no paper bars (not an error: the
 * data may come from elsewhere). */
static lt_status add_paper_cluster(plan *p, const lt_plot_options *o)
{
    const lt_figure *spec = p->spec;
    if (spec->style != LT_FIGURE_BARS || spec->paper_by == NULL || o->paper == NULL ||
        p->file.table.nrows == 0)
        return LT_OK;
    int by = lt_results_column(&p->file, spec->paper_by);
    const char *value = by >= 0 ? lt_results_cell(&p->file, 0, by) : "";
    for (int i = 0; spec->paper_files[i] != NULL; i += 2) {
        if (strcmp(spec->paper_files[i], value) != 0)
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", o->paper, spec->paper_files[i + 1]);
        if (access(path, R_OK) != 0)
            return LT_OK;
        LT_TRY(lt_csv_read(&p->paper, path));
        if (p->nclusters == MAX_CLUSTERS)
            return lt_fail(LT_E_INPUT, "%s: more than %d bar clusters with the paper's",
                           p->file.path, MAX_CLUSTERS);
        p->paper_cluster = p->nclusters;
        p->clusters[p->nclusters++] = spec->paper_label;
        return LT_OK;
    }
    return LT_OK;
}

/* The paper's value for series s in panel i, as its CSV writes it: the
 * row whose method is the series' first key, case aside; NULL when there
 * is none or it is not a finite number. */
static const char *paper_cell(const plan *p, int s, int i)
{
    const char *column = p->spec->paper_y[i];
    int method = lt_csv_table_column(&p->paper, "method");
    int y = column ? lt_csv_table_column(&p->paper, column) : -1;
    if (method < 0 || y < 0)
        return NULL;
    const char *key = lt_results_cell(&p->file, p->series[s].first_row,
                                      lt_results_column(&p->file, p->spec->series[0]));
    for (long long r = 0; r < p->paper.nrows; r++)
        if (strcasecmp(lt_csv_table_cell(&p->paper, r, method), key) == 0) {
            const char *cell = lt_csv_table_cell(&p->paper, r, y);
            char *end;
            double v = strtod(cell, &end);
            return end != cell && *end == '\0' && isfinite(v) ? cell : NULL;
        }
    return NULL;
}

/* ---- writing ---- */

/* A double-quoted gnuplot string holding `s` as text, whatever it holds
 * (labels and paths come from the CSV and its name): quotes, backslashes
 * and backquotes (gnuplot runs `...` as a shell command even inside double
 * quotes) escaped, control bytes as octal escapes, so the string stays on
 * its line. */
static void gp_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\%03o", c);
        else {
            if (c == '"' || c == '\\' || c == '`')
                fputc('\\', f);
            fputc(c, f);
        }
    }
    fputc('"', f);
}

/* The data columns of a LINES figure: each panel's x and y, once each. */
static int line_columns(const lt_figure *spec, const char **cols)
{
    int n = 0;
    for (int i = 0; i < lt_figure_panels(spec); i++) {
        const char *pair[2] = {spec->panels[i].x, spec->panels[i].y};
        for (int j = 0; j < 2; j++) {
            int k = 0;
            while (k < n && strcmp(cols[k], pair[j]) != 0)
                k++;
            if (k == n)
                cols[n++] = pair[j];
        }
    }
    return n;
}

static int column_index(const char **cols, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return i;
    return -1;
}

typedef struct point {
    double x;
    long long row;
} point;

static int by_x(const void *a, const void *b)
{
    double x = ((const point *)a)->x, y = ((const point *)b)->x;
    return (x > y) - (x < y);
}

static void write_cell(FILE *f, const plan *p, long long row, const char *column, int first)
{
    double v;
    lt_results_number(&v, &p->file, row, lt_results_column(&p->file, column)); /* checked in plan */
    fprintf(f, "%s%.17g", first ? "" : " ", v);
}

/* LINES: one block per drawn series (gnuplot `index`), rows sorted by x. */
static void write_line_data(FILE *f, const plan *p, point *points)
{
    const char *cols[4];
    int n = line_columns(p->spec, cols);
    fprintf(f, "# columns:");
    for (int i = 0; i < n; i++)
        fprintf(f, " %s", cols[i]);
    fprintf(f, "\n# one block per line of the figure, in the order of the script's plot\n");
    int xcol = lt_results_column(&p->file, p->spec->panels[0].x), blocks = 0;
    for (int s = 0; s < p->nseries; s++) {
        if (p->series[s].drawn == 0)
            continue;
        long long count = 0;
        for (long long r = 0; r < p->file.table.nrows; r++)
            if (p->series_of[r] == s && is_ok(p, r)) {
                lt_results_number(&points[count].x, &p->file, r, xcol);
                points[count++].row = r;
            }
        qsort(points, (size_t)count, sizeof *points, by_x);
        /* Two blank lines end a gnuplot data block. */
        fprintf(f, "%s# ", blocks++ ? "\n\n" : ""); /* a title, on its one line */
        gp_string(f, p->series[s].title);
        fputc('\n', f);
        for (long long i = 0; i < count; i++) {
            for (int c = 0; c < n; c++)
                write_cell(f, p, points[i].row, cols[c], c == 0);
            fputc('\n', f);
        }
    }
}

/* BARS: one row per series, one column per (panel, cluster); NaN where a
 * bar is missing. */
static void write_bar_data(FILE *f, const plan *p)
{
    int cluster_col = lt_results_column(&p->file, p->spec->cluster);
    fprintf(f, "# columns: group");
    for (int i = 0; i < lt_figure_panels(p->spec); i++)
        for (int c = 0; c < p->nclusters; c++)
            fprintf(f, " %s:%s", p->spec->panels[i].y, p->clusters[c]);
    fputc('\n', f);
    for (int s = 0; s < p->nseries; s++) {
        if (p->series[s].drawn == 0)
            continue;
        gp_string(f, p->series[s].title);
        for (int i = 0; i < lt_figure_panels(p->spec); i++)
            for (int c = 0; c < p->nclusters; c++) {
                if (c == p->paper_cluster) {
                    const char *cell = paper_cell(p, s, i);
                    fprintf(f, " %s", cell != NULL ? cell : "NaN");
                    continue;
                }
                long long row = -1;
                for (long long r = 0; r < p->file.table.nrows && row < 0; r++)
                    if (p->series_of[r] == s && is_ok(p, r) &&
                        !strcmp(lt_results_cell(&p->file, r, cluster_col), p->clusters[c]))
                        row = r;
                if (row < 0)
                    fprintf(f, " NaN");
                else
                    write_cell(f, p, row, p->spec->panels[i].y, 0);
            }
        fputc('\n', f);
    }
}

/* Whether any drawn bar of cluster c has a finite value in the panel: a
 * cluster with none (recompute not timed, say) is left out of that panel,
 * as gnuplot refuses a log axis without a valid point. */
static int cluster_has_values(const plan *p, const lt_panel *panel, int c)
{
    if (c == p->paper_cluster) {
        int i = panel == &p->spec->panels[0] ? 0 : 1;
        for (int s = 0; s < p->nseries; s++) {
            const char *cell = paper_cell(p, s, i);
            if (p->series[s].drawn > 0 && cell != NULL && (!panel->log_y || strtod(cell, NULL) > 0))
                return 1;
        }
        return 0;
    }
    int cluster_col = lt_results_column(&p->file, p->spec->cluster);
    int y_col = lt_results_column(&p->file, panel->y);
    for (long long r = 0; r < p->file.table.nrows; r++) {
        double v;
        if (p->series_of[r] >= 0 && p->series[p->series_of[r]].drawn > 0 && is_ok(p, r) &&
            strcmp(lt_results_cell(&p->file, r, cluster_col), p->clusters[c]) == 0 &&
            lt_results_number(&v, &p->file, r, y_col) == LT_OK && isfinite(v) &&
            (!panel->log_y || v > 0))
            return 1;
    }
    return 0;
}

static void write_panel_axes(FILE *f, const lt_panel *panel)
{
    fprintf(f, "unset logscale\n");
    if (panel->log_x)
        fprintf(f, "set logscale x 2\n");
    if (panel->log_y)
        fprintf(f, "set logscale y\n");
    /* powers of ten as 0.0001 or 1e-05, not gnuplot's 10.000000 (its
     * default pads every tick to the smallest one's decimals on a log axis) */
    fputs(panel->log_y ? "set format y \"%g\"\n" : "set format y \"% h\"\n", f);
    if (panel->xlabel) {
        fprintf(f, "set xlabel ");
        gp_string(f, panel->xlabel);
        fputc('\n', f);
    }
    fprintf(f, "set ylabel ");
    gp_string(f, panel->ylabel);
    fputc('\n', f);
}

static void write_y(FILE *f, const lt_panel *panel, int column)
{
    if (panel->y_scale != 1)
        fprintf(f, "($%d/%.17g)", column, panel->y_scale);
    else
        fprintf(f, "%d", column);
}

/* A number of a row known to be one (build_plan checked every drawn cell). */
static double drawn_value(const plan *p, long long row, const char *column)
{
    double v = NAN;
    lt_results_number(&v, &p->file, row, lt_results_column(&p->file, column));
    return v;
}

/* Whether series a draws the same points as series b in a panel (every x
 * of each with a y within 0.1% in the other): a's line would hide under
 * b's, so the legend must say so (softmax's memory is the same causal or
 * not). */
static int same_curve(const plan *p, const lt_panel *panel, int a, int b)
{
    long long rows_a = 0, rows_b = 0;
    for (long long r = 0; r < p->file.table.nrows; r++) {
        if (!is_ok(p, r) || (p->series_of[r] != a && p->series_of[r] != b))
            continue;
        if (p->series_of[r] == b) {
            rows_b++;
            continue;
        }
        rows_a++;
        double x = drawn_value(p, r, panel->x), y = drawn_value(p, r, panel->y);
        int matched = 0;
        for (long long q = 0; q < p->file.table.nrows && !matched; q++)
            if (p->series_of[q] == b && is_ok(p, q) && drawn_value(p, q, panel->x) == x) {
                double yb = drawn_value(p, q, panel->y);
                matched = fabs(yb - y) <= 1e-3 * fmax(fabs(y), fabs(yb));
            }
        if (!matched)
            return 0;
    }
    return rows_a > 0 && rows_a == rows_b;
}

/* " (dashed: as causal=0)": the series keys in which series a, drawn
 * under b, differs from it, with b's values; short enough for the key. */
static void same_as_label(char *title, size_t size, const plan *p, int a, int b)
{
    char keys[256] = "";
    for (int k = 0; p->spec->series[k]; k++) {
        int col = lt_results_column(&p->file, p->spec->series[k]);
        const char *va = lt_results_cell(&p->file, p->series[a].first_row, col);
        const char *vb = lt_results_cell(&p->file, p->series[b].first_row, col);
        if (strcmp(va, vb) != 0)
            lt_results_label_append(keys, sizeof keys, p->spec->series[k], vb);
    }
    size_t used = strlen(title);
    snprintf(title + used, size - used, " (= %s)", keys);
}

/* Series s's entry in panel's key; returns the earlier series its curve is
 * drawn under (the same values), or -1. */
static int series_label(const plan *p, const lt_panel *panel, int s, char *title, size_t size)
{
    int under = -1;
    for (int t = 0; t < s && under < 0; t++)
        if (p->series[t].drawn > 0 && same_curve(p, panel, s, t))
            under = t;
    snprintf(title, size, "%s", p->series[s].title);
    if (under >= 0)
        same_as_label(title, size, p, s, under);
    return under;
}

/* ---- styles: a distinct colour and dash per series ---- */

/* Ten colours told apart in print and by most colour-blind readers. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
enum { PALETTE = sizeof palette / sizeof palette[0], DASHES = 5 };

/* Distinct values of series key k among the drawn series. */
static int key_values(const plan *p, int k)
{
    int col = lt_results_column(&p->file, p->spec->series[k]), n = 0;
    for (int s = 0; s < p->nseries; s++) {
        const char *v = lt_results_cell(&p->file, p->series[s].first_row, col);
        int seen = 0;
        for (int t = 0; t < s && !seen; t++)
            seen = strcmp(v, lt_results_cell(&p->file, p->series[t].first_row, col)) == 0;
        n += !seen;
    }
    return n;
}

/* The key drawn as dashes: of the keys after the first, the one with the
 * fewest values above one (the last of equals: batch, causal); -1 if no
 * key but the first tells series apart. The other keys choose colours. */
static int dash_key(const plan *p)
{
    int best = -1, fewest = 0;
    for (int k = 1; k < series_key_count(p->spec); k++) {
        int n = key_values(p, k);
        if (n > 1 && n <= DASHES && (best < 0 || n <= fewest)) {
            best = k;
            fewest = n;
        }
    }
    return best;
}

/* Whether series t and u have the same values of the keys in (or, with
 * `except`, not in) key `which`. */
static int same_keys(const plan *p, int t, int u, int which, int except)
{
    for (int k = 0; k < series_key_count(p->spec); k++) {
        if ((k == which) == except)
            continue;
        int col = lt_results_column(&p->file, p->spec->series[k]);
        if (strcmp(lt_results_cell(&p->file, p->series[t].first_row, col),
                   lt_results_cell(&p->file, p->series[u].first_row, col)) != 0)
            return 0;
    }
    return 1;
}

/* Series s's index among the distinct values of those keys, in order of
 * first appearance. */
static int style_index(const plan *p, int s, int which, int except)
{
    int index = 0;
    for (int t = 0; t <= s; t++) {
        if (same_keys(p, t, s, which, except))
            return index;
        int new_value = 1;
        for (int u = 0; u < t && new_value; u++)
            new_value = !same_keys(p, t, u, which, except);
        index += new_value;
    }
    return index;
}

/* " lc rgb "#..." dt D pt P": colour by every key but the dash key, dash
 * by that key, a point type per series (gnuplot refuses one on a line
 * without points). */
static void write_style(FILE *f, const plan *p, int s, int dashes, int points)
{
    int colour = style_index(p, s, dashes, 1) % PALETTE;
    int dash = dashes >= 0 ? style_index(p, s, dashes, 0) % DASHES + 1 : 1;
    fprintf(f, " lc rgb \"%s\" dt %d", palette[colour], dash);
    if (points)
        fprintf(f, " pt %d", s % 13 + 1);
}

/* Line figures: the panels side by side on the left, one key for all of
 * them in a column on the right, as wide as its longest entry, so it never
 * shrinks a plot's height. A key wider than KEY_SHARE of the asked width
 * widens the figure instead, so the panels keep the rest and no entry is
 * cut. The title (what was run, then a line per series not drawn) has a
 * band of its own above the panels, as tall as its lines. */
#define KEY_SHARE 0.3
#define TITLE_SHARE 0.12
#define KEY_CHAR_PX 6.0   /* a character of the key's 9-point font */
#define TITLE_LINE_PX 16.0 /* a line of the title's 10-point font */

typedef struct {
    long width;        /* pixels of the figure */
    double key, title; /* shares of its width and height */
} line_layout;

static line_layout plan_layout(const plan *p, const lt_plot_options *o, const char *title)
{
    size_t longest = 0;
    for (int i = 0; i < lt_figure_panels(p->spec); i++)
        for (int s = 0; s < p->nseries; s++) {
            char entry[600];
            if (p->series[s].drawn == 0)
                continue;
            series_label(p, &p->spec->panels[i], s, entry, sizeof entry);
            longest = strlen(entry) > longest ? strlen(entry) : longest;
        }
    double key_px = ((double)longest + 14) * KEY_CHAR_PX + 0.02 * (double)o->width;
    line_layout l = {o->width, key_px / (double)o->width, TITLE_SHARE};
    if (l.key > KEY_SHARE) {
        l.width = (long)ceil((1.0 - KEY_SHARE) * (double)o->width + key_px);
        l.key = key_px / (double)l.width;
    }
    int lines = 1;
    for (const char *c = title; *c; c++)
        lines += *c == '\n';
    double title_share = (lines * TITLE_LINE_PX + 12.0) / (double)o->height;
    l.title = title_share > TITLE_SHARE ? (title_share < 0.5 ? title_share : 0.5) : TITLE_SHARE;
    return l;
}

static void place_panel(FILE *f, const lt_figure *spec, int i, const line_layout *l)
{
    int n = lt_figure_panels(spec);
    double width = (1.0 - l->key) / n;
    fprintf(f, "set origin %.4f,0\nset size %.4f,%.4f\n", i * width, width, 1.0 - l->title);
    if (i < n - 1)
        fprintf(f, "unset key\n");
    else
        fprintf(f, "set key at screen %.4f,%.4f left top vertical Left reverse samplen 3 "
                   "font \",9\"\n",
                1.0 - l->key + 0.01, 1.0 - l->title);
}

/* Bars on a log axis would start from an arbitrary floor: those panels
 * draw each value as a point, the clusters side by side. */
static void write_cluster_points(FILE *f, const plan *p, const lt_panel *panel, int i, int c,
                                 int first)
{
    double offset = (c - (p->nclusters - 1) / 2.0) * 0.8 / p->nclusters;
    if (first) /* the group labels once, at the groups' centres */
        fprintf(f, "\"%s.dat\" using 0:(NaN):xtic(1) with points notitle", p->name);
    fprintf(f, ", \\\n     \"%s.dat\" using ($0%+.4f):", p->name, offset);
    write_y(f, panel, 2 + i * p->nclusters + c);
    fprintf(f, " with points pt %d ps 1.8 lc rgb \"%s\" title ", c % 13 + 5,
            palette[c % PALETTE]);
    gp_string(f, p->clusters[c]);
}

/* A panel's line series, each with its style; a series drawn exactly under
 * an earlier one is drawn thicker and its title says so. */
static void write_line_plot(FILE *f, const plan *p, const lt_panel *panel, const char **cols,
                            int ncols, int dashes)
{
    int first = 1, block = 0;
    for (int s = 0; s < p->nseries; s++) {
        const series_info *si = &p->series[s];
        if (si->drawn == 0)
            continue;
        fprintf(f, "%s\"%s.dat\" index %d using %d:", first ? "" : ", \\\n     ", p->name,
                block++, column_index(cols, ncols, panel->x) + 1);
        write_y(f, panel, column_index(cols, ncols, panel->y) + 1);
        char title[600];
        int under = series_label(p, panel, s, title, sizeof title);
        /* Points help to read a sweep, not a curve of thousands. */
        int points = si->drawn <= 50;
        fprintf(f, " with %s", points ? "linespoints" : "lines");
        write_style(f, p, s, dashes, points);
        fprintf(f, "%s title ", under >= 0 ? " lw 3 ps 1.5" : "");
        gp_string(f, title);
        first = 0;
    }
}

/* A panel's clusters: bars, or points on a log axis; an empty frame that
 * says so when nothing was measured. */
static void write_bar_plot(FILE *f, const plan *p, const lt_panel *panel, int i)
{
    int first = 1;
    for (int c = 0; c < p->nclusters; c++) {
        if (!cluster_has_values(p, panel, c))
            continue;
        if (panel->log_y) {
            write_cluster_points(f, p, panel, i, c, first);
            first = 0;
            continue;
        }
        fprintf(f, "%s\"%s.dat\" using ", first ? "" : ", \\\n     ", p->name);
        write_y(f, panel, 2 + i * p->nclusters + c);
        fprintf(f, "%s title ", first ? ":xtic(1)" : "");
        gp_string(f, p->clusters[c]);
        first = 0;
    }
    if (first)
        fprintf(f, "[0:1] [0:1] NaN title \"(no value measured)\"");
}

static void write_script(FILE *f, const plan *p, const lt_plot_options *o)
{
    const lt_figure *spec = p->spec;
    /* the path as a string: a comment ends at a line break, or goes on
     * past one after a backslash, and the next line would run */
    fprintf(f, "# ltbench plot: %s\n# from ", spec->title);
    gp_string(f, p->file.path);
    fprintf(f, "; data in %s.dat.\n"
               "# Redraw with `gnuplot %s.gp` in this folder; restyle freely.\n",
            p->name, p->name);
    fprintf(f, "if (!exists(\"output\")) output = \"%s.png\"\n", p->name);
    int lines = spec->style == LT_FIGURE_LINES, dashes = lines ? dash_key(p) : -1;
    /* What was run, then the cases not run (skipped, refused), under the title. */
    char title[2048], context[256] = "";
    for (int i = 0; spec->context[i]; i++) {
        int col = lt_results_column(&p->file, spec->context[i]);
        if (col >= 0)
            lt_results_label_append(context, sizeof context, spec->context[i],
                                 lt_results_cell(&p->file, 0, col));
    }
    /* which run: its folder names the ablation or seed, its file the data */
    const char *path = p->file.path, *base = strrchr(path, '/'), *dir = base;
    while (dir != NULL && dir > path && dir[-1] != '/')
        dir--;
    snprintf(title, sizeof title, "%s (%s)%s%s%s", spec->title, dir != NULL ? dir : path,
             context[0] ? "\n" : "", context, p->not_drawn);
    /* bars are laid out by gnuplot's own multiplot layout */
    line_layout layout = lines ? plan_layout(p, o, title) : (line_layout){o->width, 0, 0};
    fprintf(f, "set terminal pngcairo size %ld,%ld noenhanced font \",10\"\n",
            lines ? layout.width : o->width, o->height);
    fprintf(f, "set output output\nset grid\nset key below\n");
    if (lines)
        fprintf(f, "set multiplot title ");
    else
        fprintf(f, "set multiplot layout 1,%d title ", lt_figure_panels(spec));
    gp_string(f, title);
    fputc('\n', f);
    if (spec->style == LT_FIGURE_BARS)
        fprintf(f, "set style data histograms\nset style histogram clustered gap 1\n"
                   "set style fill solid 0.8 border -1\nset xtics nomirror rotate by 30 right\n");
    const char *cols[4];
    int ncols = spec->style == LT_FIGURE_LINES ? line_columns(spec, cols) : 0;
    for (int i = 0; i < lt_figure_panels(spec); i++) {
        const lt_panel *panel = &spec->panels[i];
        if (lines)
            place_panel(f, spec, i, &layout);
        write_panel_axes(f, panel);
        if (spec->style == LT_FIGURE_BARS && panel->log_y)
            fprintf(f, "set offsets 0.5,0.5,0,0\n");
        else
            fprintf(f, "set offsets 0,0,0,0\n");
        if (spec->style == LT_FIGURE_BARS && !panel->log_y)
            fprintf(f, "set yrange [0:*]\n");
        else
            fprintf(f, "set yrange [*:*]\n");
        int measured = spec->style == LT_FIGURE_LINES;
        for (int c = 0; !measured && c < p->nclusters; c++)
            measured = cluster_has_values(p, panel, c);
        if (!measured) /* the empty frame below has no positive range to log */
            fprintf(f, "unset logscale\n");
        fprintf(f, "plot ");
        if (spec->style == LT_FIGURE_LINES)
            write_line_plot(f, p, panel, cols, ncols, dashes);
        else
            write_bar_plot(f, p, panel, i);
        fputc('\n', f);
    }
    fprintf(f, "unset multiplot\n");
}

static lt_status write_text(const char *path, const plan *p, const lt_plot_options *o,
                            point *points, int script)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    if (script)
        write_script(af.f, p, o);
    else if (p->spec->style == LT_FIGURE_LINES)
        write_line_data(af.f, p, points);
    else
        write_bar_data(af.f, p);
    return lt_atomic_commit(&af);
}

/* ---- gnuplot ---- */

/* Runs gnuplot on NAME.gp inside the output folder, drawing into a
 * temporary file that is renamed to NAME.png only if gnuplot succeeds. */
static lt_status draw(const char *gnuplot, const lt_plot_options *o, const plan *p)
{
    char png[4096], script[128], output[4200];
    snprintf(png, sizeof png, "%s/%s.png", o->out, p->name);
    snprintf(script, sizeof script, "%s.gp", p->name);
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, png));
    const char *tmp = strrchr(af.tmp_path, '/');
    snprintf(output, sizeof output, "output='%s'", tmp ? tmp + 1 : af.tmp_path);
    const char *argv[] = {gnuplot, "-e", output, script, NULL};
    if (lt_process_run(argv, o->out) != 0) {
        lt_atomic_abort(&af);
        return lt_fail(LT_E_INTERNAL, "gnuplot failed on %s/%s (see its message above)", o->out,
                       script);
    }
    return lt_atomic_commit(&af);
}

/* ---- the figures of a run ---- */

/* NAME, or NAME-2, NAME-3, ... when an earlier figure of this run took it. */
static void choose_name(plan *plans, int index)
{
    const char *base = plans[index].spec->name;
    for (int n = 1;; n++) {
        if (n == 1)
            snprintf(plans[index].name, sizeof plans[index].name, "%s", base);
        else
            snprintf(plans[index].name, sizeof plans[index].name, "%s-%d", base, n);
        int taken = 0;
        for (int i = 0; i < index; i++)
            taken |= strcmp(plans[i].name, plans[index].name) == 0;
        if (!taken)
            return;
    }
}

/* ---- the outputs ---- */

enum { OUTPUT_KINDS = 3 };
static const char *const output_kinds[OUTPUT_KINDS] = {"dat", "gp", "png"};

/* "NAME.dat", "NAME.gp", "NAME.png" of every figure, the names the run
 * writes in o->out. */
static int output_names(const plan *plans, int count, char (*names)[80], const char **ptrs)
{
    int n = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < OUTPUT_KINDS; k++, n++) {
            snprintf(names[n], sizeof names[n], "%s.%s", plans[i].name, output_kinds[k]);
            ptrs[n] = names[n];
        }
    return n;
}

/* Every file the run writes, checked before the folder is touched: an
 * earlier run's figure is replaced only with --overwrite, and a CSV read
 * here never (the paper's CSVs end in .csv, which no output does). */
static lt_status check_outputs(const char *const *names, int count, const lt_plot_options *o,
                               const char *const *inputs, int ninputs)
{
    for (int i = 0; i < count; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", o->out, names[i]);
        LT_TRY(lt_output_check("--out", path, o->overwrite, 0, inputs, ninputs));
    }
    return LT_OK;
}

static lt_status write_all(plan *plans, int count, const lt_plot_options *o)
{
    long long most = 0;
    for (int i = 0; i < count; i++)
        most = plans[i].file.table.nrows > most ? plans[i].file.table.nrows : most;
    point *points;
    LT_TRY(lt_mem_alloc((void **)&points, (size_t)most * sizeof *points, "plot points"));
    lt_status status = lt_make_dirs(o->out);
    for (int i = 0; i < count && status == LT_OK; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.dat", o->out, plans[i].name);
        status = write_text(path, &plans[i], o, points, 0);
        snprintf(path, sizeof path, "%s/%s.gp", o->out, plans[i].name);
        if (status == LT_OK)
            status = write_text(path, &plans[i], o, points, 1);
    }
    lt_mem_free(points);
    return status;
}


static void free_plans(plan *plans, int count)
{
    for (int i = 0; i < count; i++) {
        lt_results_free(&plans[i].file);
        lt_mem_free(plans[i].series_of);
        lt_csv_table_free(&plans[i].paper);
    }
}

/* The columns a figure reads, NULL-terminated. */
static void figure_columns(const lt_figure *f, const char **cols)
{
    int n = 0;
    for (int i = 0; f->series[i]; i++)
        cols[n++] = f->series[i];
    if (f->cluster)
        cols[n++] = f->cluster;
    for (int i = 0; i < lt_figure_panels(f); i++) {
        if (f->panels[i].x)
            cols[n++] = f->panels[i].x;
        cols[n++] = f->panels[i].y;
    }
    cols[n] = NULL;
}

/* The table a CSV's figures come from: of the tables of its experiment that
 * declare figures, the first whose figures' columns the file has (a file
 * cut down to those columns is drawn too). */
static lt_status recognise(const lt_schema **out, const lt_results_file *file,
                           const lt_schema *const *schemas, int count)
{
    const char *experiment = lt_results_experiment(file), *missing = NULL, *figure = NULL;
    char known[256] = "";
    for (int k = 0; k < count; k++) {
        const lt_schema *s = schemas[k];
        if (s->nfigures == 0)
            continue;
        if (strstr(known, s->experiment) == NULL)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                     known[0] ? ", " : "", s->experiment);
        if (experiment == NULL || strcmp(s->experiment, experiment) != 0)
            continue;
        const char *lacks = NULL;
        for (int f = 0; f < s->nfigures && lacks == NULL; f++) {
            const char *cols[2 * LT_FIGURE_SERIES_KEYS + 8];
            figure_columns(&s->figures[f], cols);
            lacks = lt_results_missing(file, cols);
            figure = s->figures[f].name;
        }
        if (lacks == NULL) {
            *out = s;
            return LT_OK;
        }
        missing = missing ? missing : lacks;
    }
    if (missing != NULL)
        return lt_fail(LT_E_INPUT, "%s: a %s CSV without column '%s', which the %s figure needs",
                       file->path, experiment, missing, figure);
    if (experiment == NULL)
        return lt_fail(LT_E_INPUT, "%s: no 'experiment' column with one value in every row, "
                                   "expected a result CSV of ltbench (%s)",
                       file->path, known);
    return lt_fail(LT_E_INPUT, "%s: no figure for experiment '%s'; figures come from %s CSVs",
                   file->path, experiment, known);
}

lt_status lt_plot(const lt_schema *const *schemas, int count, const char *const *paths,
                  int npaths, const lt_plot_options *o, FILE *out, int *drawn)
{
    static plan plans[MAX_PLANS];
    int nplans = 0;
    lt_outdir dir = {.lock_fd = -1};
    lt_status status = LT_OK;
    *drawn = 0;
    for (int i = 0; i < npaths && status == LT_OK; i++) {
        lt_results_file file;
        const lt_schema *schema = NULL;
        status = lt_results_read(&file, paths[i]);
        if (status == LT_OK)
            status = recognise(&schema, &file, schemas, count);
        if (status == LT_OK) /* what compare and the report refuse is not drawn */
            status = lt_results_check(&file, schema);
        for (int f = 0; status == LT_OK && f < schema->nfigures; f++) {
            if (nplans == MAX_PLANS) {
                status = lt_fail(LT_E_USAGE, "more than %d figures in one run", MAX_PLANS);
                break;
            }
            plan *p = &plans[nplans++];
            memset(p, 0, sizeof *p);
            p->spec = &schema->figures[f];
            p->paper_cluster = -1;
            status = lt_results_read(&p->file, paths[i]); /* each figure its own copy */
            if (status == LT_OK)
                status = build_plan(p);
            if (status == LT_OK)
                status = add_paper_cluster(p, o);
            if (status == LT_OK)
                choose_name(plans, nplans - 1);
        }
        lt_results_free(&file);
    }
    /* everything read and checked: the outputs, then the folder, one
     * writer at a time (its lock checks them again, as another plot may
     * have written there since, and probes each) */
    static char names[MAX_PLANS * OUTPUT_KINDS][80];
    const char *name_ptrs[MAX_PLANS * OUTPUT_KINDS];
    int nnames = output_names(plans, nplans, names, name_ptrs);
    if (status == LT_OK)
        status = check_outputs(name_ptrs, nnames, o, paths, npaths);
    if (status == LT_OK)
        status = lt_outdir_open(&dir, o->out, 0, 0, o->overwrite, name_ptrs, nnames, NULL, 0);
    if (status == LT_OK)
        status = write_all(plans, nplans, o);
    char gnuplot[PATH_MAX];
    int have_gnuplot = status == LT_OK && lt_process_find("gnuplot", gnuplot, sizeof gnuplot);
    for (int i = 0; i < nplans && status == LT_OK; i++) {
        if (have_gnuplot)
            status = draw(gnuplot, o, &plans[i]);
        if (status == LT_OK)
            fprintf(out, "%s/%s.%s from %s\n", o->out, plans[i].name, have_gnuplot ? "png" : "gp",
                    plans[i].file.path);
    }
    *drawn = have_gnuplot;
    lt_outdir_close(&dir);
    free_plans(plans, nplans);
    return status;
}
