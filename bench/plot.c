/* ltbench plot: the paper's figures from result CSVs. Each CSV is
 * recognised by its columns through one table (figures[]); per figure a
 * data file (.dat) and the gnuplot script that draws it (.gp) are written
 * beside the PNG, so a figure can be restyled without ltbench. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "core/mem.h"
#include "io/atomic.h"
#include "results.h"

enum { MAX_INPUTS = 32, MAX_SERIES = 64, MAX_CLUSTERS = 8, MAX_SERIES_KEYS = 4 };

typedef enum figure_style {
    LINES, /* one line per series, y against x */
    BARS   /* one group of bars per series, one bar per cluster value */
} figure_style;

typedef struct panel_spec {
    const char *x, *y; /* columns; LINES only use x */
    const char *xlabel, *ylabel;
    double y_scale;    /* the plot shows y / y_scale (bytes as MiB) */
    int log_x, log_y;
} panel_spec;

typedef struct figure_spec {
    const char *name;       /* file names: NAME.png, NAME.gp, NAME.dat */
    const char *experiment; /* the value of the experiment column */
    const char *title;
    figure_style style;
    /* One series per combination of these columns' values; the first
     * `title_keys` always name it, the others only where they tell series
     * apart (a copy run's kernel follows from its variant). */
    const char *series[MAX_SERIES_KEYS + 1];
    int title_keys;
    const char *cluster; /* BARS: the column whose values are the bars of a group */
    panel_spec panels[2];
    /* Columns whose values (in the first row, where the CSV has them) say
     * under the title what was run. */
    const char *context[5];
} figure_spec;

/* Every column a figure reads is named here, and only here. The image and
 * speech figures follow the columns those experiments announce. */
static const figure_spec figures[] = {
    {"scaling", "scaling",
     "Attention forward+backward per sample against sequence length (paper Fig. 1)", LINES,
     {"variant", "causal", "kernel", NULL}, 3, NULL,
     {{"N", "fwd_bwd_per_sample_s", "sequence length N", "time per sample (s)", 1, 1, 1},
      {"N", "peak_bytes_per_sample", "sequence length N", "peak memory per sample (MiB)",
       1 << 20, 1, 1}},
     {"heads", "head_dim", "threads", NULL}},
    {"copy-curves", "copy", "Copy task: training loss (paper Fig. 2)", LINES,
     {"variant", "kernel", "N", NULL}, 1, NULL,
     {{"step", "loss", "update", "loss on the copied half (nats)", 1, 0, 1},
      {"elapsed_s", "loss", "seconds", "loss on the copied half (nats)", 1, 0, 1}},
     {"preset", "N", "batch", "threads", NULL}},
    {"image", "image", "Image generation: test bits/dim and generation speed (paper Tables 1-2)",
     BARS, {"variant", "dataset", "gen_batch", "kernel", NULL}, 1, "gen_mode",
     {{NULL, "test_bits_per_dim", NULL, "test bits/dim", 1, 0, 0},
      {NULL, "images_per_s", NULL, "images/s (generation)", 1, 0, 1}},
     {"threads", NULL}},
    {"speech", "speech", "Speech recognition: phoneme error rate (paper Table 3)", LINES,
     {"model", "kernel", NULL}, 1, NULL,
     {{"epoch", "dev_per", "epoch", "dev PER", 1, 0, 0},
      {"elapsed_s", "dev_per", "seconds", "dev PER", 1, 0, 0}},
     {"threads", NULL}},
};
enum { FIGURE_COUNT = sizeof figures / sizeof figures[0] };

typedef struct series_info {
    long long first_row; /* its key values are this row's */
    long long drawn;     /* rows with status ok */
    char title[256];
    char note[512];      /* its rows not drawn: "skipped-budget at N=32768,65536" */
} series_info;

/* One figure to draw: the CSV, its rows grouped into series. */
typedef struct plan {
    const figure_spec *spec;
    results_file file;
    char name[64];
    int status_col;
    int nseries, nclusters;
    series_info series[MAX_SERIES];
    const char *clusters[MAX_CLUSTERS];
    int *series_of; /* (rows) */
    char not_drawn[1024]; /* a line per series with cases not drawn */
} plan;

typedef struct plot_options {
    const char *out;
    long width, height;
} plot_options;

static int is_ok(const plan *p, long long row)
{
    return p->status_col < 0 || strcmp(results_cell(&p->file, row, p->status_col), "ok") == 0;
}

static int series_key_count(const figure_spec *spec)
{
    int n = 0;
    while (spec->series[n] != NULL)
        n++;
    return n;
}

/* The columns a figure reads, NULL-terminated. */
static void figure_columns(const figure_spec *spec, const char **cols)
{
    int n = 0;
    for (int i = 0; spec->series[i]; i++)
        cols[n++] = spec->series[i];
    if (spec->cluster)
        cols[n++] = spec->cluster;
    for (int i = 0; i < 2; i++) {
        if (spec->panels[i].x)
            cols[n++] = spec->panels[i].x;
        cols[n++] = spec->panels[i].y;
    }
    cols[n] = NULL;
}

static lt_status recognise(plan *p)
{
    const char *experiment = results_experiment(&p->file);
    for (int f = 0; f < FIGURE_COUNT && experiment; f++) {
        const figure_spec *spec = &figures[f];
        if (strcmp(spec->experiment, experiment) != 0)
            continue;
        const char *cols[2 * MAX_SERIES_KEYS + 8];
        figure_columns(spec, cols);
        const char *missing = results_missing(&p->file, cols);
        if (missing != NULL)
            return lt_fail(LT_E_INPUT, "%s: a %s CSV without column '%s', which the %s figure "
                           "needs", p->file.path, experiment, missing, spec->name);
        p->spec = spec;
        return LT_OK;
    }
    char known[128] = "";
    for (int f = 0; f < FIGURE_COUNT; f++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", f ? ", " : "",
                 figures[f].experiment);
    if (experiment == NULL)
        return lt_fail(LT_E_INPUT, "%s: no 'experiment' column with one value in every row, "
                       "expected a result CSV of ltbench (%s)", p->file.path, known);
    return lt_fail(LT_E_INPUT, "%s: no figure for experiment '%s', expected one of %s",
                   p->file.path, experiment, known);
}

static int same_series(const plan *p, long long a, long long b)
{
    for (int k = 0; p->spec->series[k]; k++) {
        int col = results_column(&p->file, p->spec->series[k]);
        if (strcmp(results_cell(&p->file, a, col), results_cell(&p->file, b, col)) != 0)
            return 0;
    }
    return 1;
}

/* Whether series key k tells apart two series that agree on the keys before it. */
static int key_distinguishes(const plan *p, int k)
{
    int col = results_column(&p->file, p->spec->series[k]);
    for (int a = 0; a < p->nseries; a++)
        for (int b = a + 1; b < p->nseries; b++) {
            long long ra = p->series[a].first_row, rb = p->series[b].first_row;
            int agree = 1;
            for (int j = 0; j < k && agree; j++) {
                int cj = results_column(&p->file, p->spec->series[j]);
                agree = strcmp(results_cell(&p->file, ra, cj), results_cell(&p->file, rb, cj)) == 0;
            }
            if (agree && strcmp(results_cell(&p->file, ra, col), results_cell(&p->file, rb, col)))
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
    const char *x = p->spec->style == LINES ? p->spec->panels[0].x : p->spec->cluster;
    int xcol = results_column(&p->file, x);
    for (long long r = 0; r < p->file.table.nrows; r++) {
        if (p->series_of[r] != s || is_ok(p, r))
            continue;
        const char *status = results_cell(&p->file, r, p->status_col);
        long long earlier = 0, others = 0;
        for (long long q = 0; q < p->file.table.nrows; q++)
            if (p->series_of[q] == s) {
                int same = !is_ok(p, q) &&
                           !strcmp(results_cell(&p->file, q, p->status_col), status);
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
                !strcmp(results_cell(&p->file, q, p->status_col), status)) {
                append(si->note, sizeof si->note, first ? "%s" : ",%s",
                       results_cell(&p->file, q, xcol));
                first = 0;
            }
    }
}

/* Groups the rows into series (and bar clusters) and checks that every
 * value to be drawn is a number, before anything is written. */
static lt_status build_plan(plan *p)
{
    const figure_spec *spec = p->spec;
    long long nrows = p->file.table.nrows;
    p->status_col = results_column(&p->file, "status");
    LT_TRY(lt_mem_alloc((void **)&p->series_of, (size_t)nrows * sizeof *p->series_of,
                        "series of rows"));
    int cluster_col = spec->cluster ? results_column(&p->file, spec->cluster) : -1;
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
        for (int i = 0; i < 2; i++) {
            const panel_spec *panel = &spec->panels[i];
            double v;
            if (panel->x)
                LT_TRY(results_number(&v, &p->file, r, results_column(&p->file, panel->x)));
            LT_TRY(results_number(&v, &p->file, r, results_column(&p->file, panel->y)));
        }
        if (cluster_col < 0)
            continue;
        const char *c = results_cell(&p->file, r, cluster_col);
        int k = 0;
        while (k < p->nclusters && strcmp(p->clusters[k], c) != 0)
            k++;
        if (k == MAX_CLUSTERS)
            return lt_fail(LT_E_INPUT, "%s: more than %d values of %s", p->file.path,
                           MAX_CLUSTERS, spec->cluster);
        if (k == p->nclusters)
            p->clusters[p->nclusters++] = c;
    }
    int nkeys = series_key_count(spec), shown[MAX_SERIES_KEYS];
    for (int k = 0; k < nkeys; k++)
        shown[k] = k < spec->title_keys || key_distinguishes(p, k);
    for (int s = 0; s < p->nseries; s++) {
        series_info *si = &p->series[s];
        for (int k = 0; k < nkeys; k++)
            if (shown[k])
                results_label_append(si->title, sizeof si->title, spec->series[k],
                                     results_cell(&p->file, si->first_row,
                                                  results_column(&p->file, spec->series[k])));
        note_not_drawn(p, s);
        if (si->note[0]) {
            append(p->not_drawn, sizeof p->not_drawn, "\nnot drawn: %s", si->title);
            append(p->not_drawn, sizeof p->not_drawn, ": %s", si->note);
        }
    }
    return LT_OK;
}

/* ---- writing ---- */

/* A double-quoted gnuplot string (where \n is a line break). */
static void gp_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\n') {
            fputs("\\n", f);
            continue;
        }
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The data columns of a LINES figure: each panel's x and y, once each. */
static int line_columns(const figure_spec *spec, const char **cols)
{
    int n = 0;
    for (int i = 0; i < 2; i++) {
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
    results_number(&v, &p->file, row, results_column(&p->file, column)); /* checked in plan */
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
    int xcol = results_column(&p->file, p->spec->panels[0].x), blocks = 0;
    for (int s = 0; s < p->nseries; s++) {
        if (p->series[s].drawn == 0)
            continue;
        long long count = 0;
        for (long long r = 0; r < p->file.table.nrows; r++)
            if (p->series_of[r] == s && is_ok(p, r)) {
                results_number(&points[count].x, &p->file, r, xcol);
                points[count++].row = r;
            }
        qsort(points, (size_t)count, sizeof *points, by_x);
        /* Two blank lines end a gnuplot data block. */
        fprintf(f, "%s# %s\n", blocks++ ? "\n\n" : "", p->series[s].title);
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
    int cluster_col = results_column(&p->file, p->spec->cluster);
    fprintf(f, "# columns: group");
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < p->nclusters; c++)
            fprintf(f, " %s:%s", p->spec->panels[i].y, p->clusters[c]);
    fputc('\n', f);
    for (int s = 0; s < p->nseries; s++) {
        if (p->series[s].drawn == 0)
            continue;
        gp_string(f, p->series[s].title);
        for (int i = 0; i < 2; i++)
            for (int c = 0; c < p->nclusters; c++) {
                long long row = -1;
                for (long long r = 0; r < p->file.table.nrows && row < 0; r++)
                    if (p->series_of[r] == s && is_ok(p, r) &&
                        !strcmp(results_cell(&p->file, r, cluster_col), p->clusters[c]))
                        row = r;
                if (row < 0)
                    fprintf(f, " NaN");
                else
                    write_cell(f, p, row, p->spec->panels[i].y, 0);
            }
        fputc('\n', f);
    }
}

static void write_panel_axes(FILE *f, const panel_spec *panel)
{
    fprintf(f, "unset logscale\n");
    if (panel->log_x)
        fprintf(f, "set logscale x 2\n");
    if (panel->log_y)
        fprintf(f, "set logscale y\n");
    if (panel->xlabel) {
        fprintf(f, "set xlabel ");
        gp_string(f, panel->xlabel);
        fputc('\n', f);
    }
    fprintf(f, "set ylabel ");
    gp_string(f, panel->ylabel);
    fputc('\n', f);
}

static void write_y(FILE *f, const panel_spec *panel, int column)
{
    if (panel->y_scale != 1)
        fprintf(f, "($%d/%.17g)", column, panel->y_scale);
    else
        fprintf(f, "%d", column);
}

static void write_script(FILE *f, const plan *p, const plot_options *o)
{
    const figure_spec *spec = p->spec;
    fprintf(f, "# ltbench plot: %s\n# from %s; data in %s.dat.\n"
               "# Redraw with `gnuplot %s.gp` in this folder; restyle freely.\n",
            spec->title, p->file.path, p->name, p->name);
    fprintf(f, "if (!exists(\"output\")) output = \"%s.png\"\n", p->name);
    fprintf(f, "set terminal pngcairo size %ld,%ld noenhanced font \",10\"\n", o->width,
            o->height);
    fprintf(f, "set output output\nset grid\nset key below\n");
    /* What was run, then the cases not run (skipped, refused), under the title. */
    char title[2048], context[256] = "";
    for (int i = 0; spec->context[i]; i++) {
        int col = results_column(&p->file, spec->context[i]);
        if (col >= 0)
            results_label_append(context, sizeof context, spec->context[i],
                                 results_cell(&p->file, 0, col));
    }
    snprintf(title, sizeof title, "%s%s%s%s", spec->title, context[0] ? "\n" : "", context,
             p->not_drawn);
    fprintf(f, "set multiplot layout 1,2 title ");
    gp_string(f, title);
    fputc('\n', f);
    if (spec->style == BARS)
        fprintf(f, "set style data histograms\nset style histogram clustered gap 1\n"
                   "set style fill solid 0.8 border -1\nset xtics nomirror\n");
    const char *cols[4];
    int ncols = spec->style == LINES ? line_columns(spec, cols) : 0;
    for (int i = 0; i < 2; i++) {
        const panel_spec *panel = &spec->panels[i];
        write_panel_axes(f, panel);
        if (spec->style == BARS && !panel->log_y)
            fprintf(f, "set yrange [0:*]\n");
        else
            fprintf(f, "set yrange [*:*]\n");
        fprintf(f, "plot ");
        int first = 1;
        if (spec->style == LINES) {
            int block = 0;
            for (int s = 0; s < p->nseries; s++) {
                const series_info *si = &p->series[s];
                if (si->drawn == 0)
                    continue;
                fprintf(f, "%s\"%s.dat\" index %d using %d:", first ? "" : ", \\\n     ",
                        p->name, block++, column_index(cols, ncols, panel->x) + 1);
                write_y(f, panel, column_index(cols, ncols, panel->y) + 1);
                /* Points help to read a sweep, not a curve of thousands. */
                fprintf(f, " with %s title ", si->drawn > 50 ? "lines" : "linespoints");
                gp_string(f, si->title);
                first = 0;
            }
        } else {
            for (int c = 0; c < p->nclusters; c++) {
                fprintf(f, "%s\"%s.dat\" using ", first ? "" : ", \\\n     ", p->name);
                write_y(f, panel, 2 + i * p->nclusters + c);
                fprintf(f, "%s title ", c == 0 ? ":xtic(1)" : "");
                gp_string(f, p->clusters[c]);
                first = 0;
            }
        }
        fputc('\n', f);
    }
    fprintf(f, "unset multiplot\n");
}

static lt_status write_text(const char *path, const plan *p, const plot_options *o,
                            point *points, int script)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    if (script)
        write_script(af.f, p, o);
    else if (p->spec->style == LINES)
        write_line_data(af.f, p, points);
    else
        write_bar_data(af.f, p);
    return lt_atomic_commit(&af);
}

/* ---- gnuplot ---- */

/* The gnuplot executable on PATH, or 0 if there is none. */
static int find_gnuplot(char *out, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && (size_t)snprintf(out, size, "%.*s/gnuplot", (int)len, path) < size &&
            access(out, X_OK) == 0)
            return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

/* Runs gnuplot on NAME.gp inside the output folder, drawing into a
 * temporary file that is renamed to NAME.png only if gnuplot succeeds. */
static lt_status draw(const char *gnuplot, const plot_options *o, const plan *p)
{
    char png[4096], script[128], output[4200];
    snprintf(png, sizeof png, "%s/%s.png", o->out, p->name);
    snprintf(script, sizeof script, "%s.gp", p->name);
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, png));
    const char *tmp = strrchr(af.tmp_path, '/');
    snprintf(output, sizeof output, "output='%s'", tmp ? tmp + 1 : af.tmp_path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(o->out) == 0)
            execl(gnuplot, "gnuplot", "-e", output, script, (char *)NULL);
        fprintf(stderr, "ltbench plot: cannot run %s: %s\n", gnuplot, strerror(errno));
        _exit(127);
    }
    int wstatus = 0;
    if (pid < 0 || waitpid(pid, &wstatus, 0) < 0 || !WIFEXITED(wstatus) ||
        WEXITSTATUS(wstatus) != 0) {
        lt_atomic_abort(&af);
        return lt_fail(LT_E_INTERNAL, "gnuplot failed on %s/%s (see its message above)", o->out,
                       script);
    }
    return lt_atomic_commit(&af);
}

/* ---- main ---- */

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

static lt_status write_all(plan *plans, int count, const plot_options *o)
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

int main(int argc, char **argv)
{
    plot_options o = {.out = "results/figures", .width = 1200, .height = 560};
    lt_flag flags[] = {
        {"--out", LT_FLAG_STRING, &o.out, "DIR", "folder for the figures, scripts and data", 0,
         0, NULL, 0},
        {"-o", LT_FLAG_STRING, &o.out, "DIR", "same as --out", 0, 0, NULL, 0},
        {"--width", LT_FLAG_INT, &o.width, "PX", "width of each PNG in pixels", 200, 10000,
         NULL, 0},
        {"--height", LT_FLAG_INT, &o.height, "PX", "height of each PNG in pixels", 150, 10000,
         NULL, 0},
    };
    lt_cli cli = {
        "ltbench plot",
        "Draw the paper's figures from result CSVs with gnuplot.",
        "Each CSV is recognised by its experiment column and the columns its figure needs:\n"
        "  scaling.csv        -> scaling.png: time and peak memory per sample against N,\n"
        "                        log-log, a line per variant x causal x kernel; cases not run\n"
        "                        (skipped, refused) are listed under the title\n"
        "  copy curves.csv    -> copy-curves.png: loss against update and against seconds,\n"
        "                        a line per variant (and kernel or N where several)\n"
        "  image CSV          -> image.png: test bits/dim and images/s per variant, a bar per\n"
        "                        generation mode\n"
        "  speech CSV         -> speech.png: dev PER against epoch and against seconds\n"
        "Per figure NAME.dat (whitespace-separated, a header comment names its columns) and\n"
        "NAME.gp (the gnuplot script) are written beside NAME.png; a name already used in\n"
        "this run gets -2, -3. Without gnuplot on PATH the scripts and data are still\n"
        "written (exit 0): install gnuplot (./setup.sh installs Debian's gnuplot-nox) and\n"
        "run `gnuplot NAME.gp` in DIR. An unknown or malformed CSV is an error (exit 2) and\n"
        "nothing is written.",
        flags, (int)(sizeof flags / sizeof flags[0])};
    const char *files[MAX_INPUTS];
    lt_cli_operands operands = {"CSV...", files, 1, MAX_INPUTS, 0};
    int exit_now;
    int code = bench_parse_tool(&cli, &operands, argc, argv, &exit_now);
    if (exit_now)
        return code;

    static plan plans[MAX_INPUTS];
    int count = 0;
    lt_status status = LT_OK;
    for (int i = 0; i < operands.count && status == LT_OK; i++) {
        plan *p = &plans[count++];
        status = results_read(&p->file, files[i]);
        if (status == LT_OK)
            status = recognise(p);
        if (status == LT_OK)
            status = build_plan(p);
        if (status == LT_OK)
            choose_name(plans, count - 1);
    }
    if (status == LT_OK)
        status = write_all(plans, count, &o);
    char gnuplot[PATH_MAX];
    int have_gnuplot = status == LT_OK && find_gnuplot(gnuplot, sizeof gnuplot);
    for (int i = 0; i < count && status == LT_OK; i++) {
        if (have_gnuplot)
            status = draw(gnuplot, &o, &plans[i]);
        if (status == LT_OK)
            printf("%s/%s.%s from %s\n", o.out, plans[i].name, have_gnuplot ? "png" : "gp",
                   plans[i].file.path);
    }
    if (status == LT_OK && !have_gnuplot)
        fprintf(stderr,
                "ltbench plot: gnuplot is not on PATH, so no PNG was drawn: the scripts and data "
                "are in %s.\nInstall gnuplot (./setup.sh installs Debian's gnuplot-nox) and run "
                "`gnuplot NAME.gp` there.\n",
                o.out);
    for (int i = 0; i < count; i++) {
        results_free(&plans[i].file);
        lt_mem_free(plans[i].series_of);
    }
    return status == LT_OK ? 0 : lt_cli_report(cli.program, status);
}
