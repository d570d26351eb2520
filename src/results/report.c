#include "results/report.h"

#include "results/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/atomic.h"
#include "io/csv.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static const char *cell(const lt_csv_table *t, long long r, const char *column)
{
    int c = lt_csv_table_column(t, column);
    return c >= 0 && r < t->nrows ? lt_csv_table_cell(t, r, c) : "";
}

/* OUT as the report links to it: relative when the report lies in OUT or
 * above it, absolute otherwise. */
static void out_link(const lt_report *o, char *buf, size_t size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", o->path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    size_t len = strlen(dir);
    if (strcmp(dir, o->out) == 0)
        snprintf(buf, size, ".");
    else if (strncmp(o->out, dir, len) == 0 && o->out[len] == '/')
        snprintf(buf, size, "%s", o->out + len + 1);
    else
        snprintf(buf, size, "%s", o->out);
}

static void figures_link(const lt_report *o, char *buf, size_t size)
{
    char out[4096];
    out_link(o, out, sizeof out);
    if (strcmp(out, ".") == 0)
        snprintf(buf, size, "figures");
    else
        snprintf(buf, size, "%s/figures", out);
}

/* "AMD EPYC (family 25 model 17 stepping 1)" of row r: cpu_id tells
 * generations apart under one model name (a hypervisor's "AMD EPYC");
 * results written before it existed say that they do not name one. */
static void machine_of(char *buf, size_t size, const lt_csv_table *t, long long r)
{
    const char *id = cell(t, r, "cpu_id");
    snprintf(buf, size, "%s (%s)", cell(t, r, "cpu_model"),
             id[0] ? id : "generation not recorded");
}

static void machine_section(FILE *f, const lt_csv_table *t)
{
    fprintf(f, "## Machine and build\n\n");
    char cpu[320];
    machine_of(cpu, sizeof cpu, t, 0);
    fprintf(f, "- CPU: %s\n", cpu);
    const char *fields[][2] = {{"cores", "cores"},
                               {"threads", "threads"},
                               {"MPI ranks", "ranks"},
                               {"BLAS", "blas"},
                               {"ltbench kernel set", "kernel_isa"},
                               {"build", "build"},
                               {"OpenMP wait policy", "omp_wait_policy"},
                               {"ltbench", "ltbench_version"},
                               {"git revision", "git_revision"},
                               {"date", "date"},
                               {"load average at start", "load_start"}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (cell(t, 0, fields[i][1])[0] != '\0') /* kernel_isa: not in older files */
            fprintf(f, "- %s: %s\n", fields[i][0], cell(t, 0, fields[i][1]));
}

/* The paper's CSV as it stands, but for its source column. */
static void paper_table(FILE *f, const lt_report *o, const char *file)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", o->paper, file);
    lt_csv_table t;
    if (!exists(path) || lt_csv_read(&t, path) != LT_OK) {
        fprintf(f, "\n(the paper's numbers, %s, could not be read)\n", path);
        return;
    }
    if (lt_csv_table_column(&t, "device") >= 0)
        fprintf(f, "\nThe paper (%s; times measured on the machine its device column names):\n\n",
                file);
    else
        fprintf(f,
                "\nThe paper (%s; times measured on the authors' GPU, so only ratios compare):\n\n",
                file);
    int first = 1;
    for (int c = 0; c < t.ncols; c++)
        if (strcmp(t.names[c], "source") != 0) {
            fprintf(f, "%s %s", first ? "|" : " |", t.names[c]);
            first = 0;
        }
    fprintf(f, " |\n|");
    for (int c = 0; c < t.ncols; c++)
        if (strcmp(t.names[c], "source") != 0)
            fprintf(f, "---|");
    fputc('\n', f);
    for (long long r = 0; r < t.nrows; r++) {
        for (int c = 0; c < t.ncols; c++)
            if (strcmp(t.names[c], "source") != 0) {
                const char *v = lt_csv_table_cell(&t, r, c);
                fprintf(f, "| %s ", *v ? v : "-");
            }
        fprintf(f, "|\n");
    }
    lt_csv_table_free(&t);
}

/* The figures plot drew from this section's CSV, if any: plot names a
 * figure again in the same run NAME-2. */
static void figure_link(FILE *f, const lt_report *o, const lt_report_section *s, int repeat)
{
    if (s->drawn == NULL)
        return;
    for (int i = 0; i < s->drawn->nfigures; i++) {
        const lt_figure *fig = &s->drawn->figures[i];
        char name[128], path[4400], link[4200];
        if (repeat > 1)
            snprintf(name, sizeof name, "%s-%d", fig->name, repeat);
        else
            snprintf(name, sizeof name, "%s", fig->name);
        snprintf(path, sizeof path, "%s/figures/%s.png", o->out, name);
        figures_link(o, link, sizeof link);
        /* an ablation's figure is captioned by its section, not only by the
         * paper's figure it redraws */
        if (exists(path) && s->part == LT_PART_ABLATION)
            fprintf(f, "\n![%s: %s](%s/%s.png)\n", s->title, fig->title, link, name);
        else if (exists(path) && s->dataset != NULL) /* one figure title, several data sets */
            fprintf(f, "\n![%s, %s](%s/%s.png)\n", fig->title,
                    strcmp(s->dataset, "mnist") == 0 ? "MNIST" : "CIFAR-10", link, name);
        else if (exists(path))
            fprintf(f, "\n![%s](%s/%s.png)\n", fig->title, link, name);
    }
}

int lt_report_seed_paths(const lt_report *o, const lt_report_section *sections, int count,
                         const lt_report_section *s, char paths[][4400])
{
    int n = 0;
    snprintf(paths[n++], 4400, "%s/%s", o->out, s->results);
    for (int i = 0; i < count && n < LT_SEEDS_MAX; i++)
        if (sections[i].seed_of != NULL && strcmp(sections[i].seed_of, s->results) == 0) {
            snprintf(paths[n], 4400, "%s/%s", o->out, sections[i].results);
            n += exists(paths[n]);
        }
    return n;
}

/* The section's claims, each with the numbers and the rule that decide it,
 * over its run and the other seeds' runs that are there. */
static void conclusions(FILE *f, const lt_report *o, const lt_report_section *sections,
                        int count, const lt_report_section *s, const lt_csv_table *t)
{
    if (s->conclude == NULL)
        return;
    lt_csv_table paper;
    int have_paper = 0;
    if (s->paper != NULL) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->paper, s->paper);
        have_paper = exists(path) && lt_csv_read(&paper, path) == LT_OK;
        lt_csv_table also, joined;
        snprintf(path, sizeof path, "%s/%s", o->paper, s->paper_also ? s->paper_also : "");
        if (have_paper && s->paper_also != NULL && exists(path) &&
            lt_csv_read(&also, path) == LT_OK) {
            if (lt_csv_table_concat(&joined, &paper, &also) == LT_OK) {
                lt_csv_table_free(&paper);
                paper = joined;
            }
            lt_csv_table_free(&also);
        }
    }
    static char paths[LT_SEEDS_MAX][4400];
    int n = lt_report_seed_paths(o, sections, count, s, paths), runs = 1;
    lt_csv_table seeds[LT_SEEDS_MAX];
    const lt_csv_table *tables[LT_SEEDS_MAX] = {t};
    for (int i = 1; i < n; i++)
        if (lt_csv_read(&seeds[runs], paths[i]) == LT_OK) {
            tables[runs] = &seeds[runs];
            runs++;
        }
    lt_claim claims[LT_CLAIMS_MAX];
    int made = s->conclude(tables, runs, have_paper ? &paper : NULL, claims);
    if (have_paper)
        lt_csv_table_free(&paper);
    for (int i = 1; i < runs; i++)
        lt_csv_table_free(&seeds[i]);
    if (made == 0)
        return;
    fprintf(f, "\nThe paper's conclusions, judged on the rows above%s:\n",
            runs > 1 ? " and the same run's other seeds" : "");
    if (s->paper != NULL && !have_paper)
        fprintf(f, "(the paper's numbers, %s/%s, could not be read: they show as ?)\n", o->paper,
                s->paper);
    lt_claims_markdown(f, claims, made);
}

/* The distinct values of a provenance field over rows, with their counts:
 * which revisions made a table, on which machines. */
enum { DISTINCT_MAX = 64 }; /* the reference report has over a dozen revisions */
typedef struct distinct {
    char value[DISTINCT_MAX][400];
    long long rows[DISTINCT_MAX];
    int count, more; /* more: values beyond DISTINCT_MAX */
} distinct;

static void distinct_add(distinct *d, const char *value, long long rows)
{
    if (value[0] == '\0')
        return; /* a file written before the column */
    for (int i = 0; i < d->count; i++)
        if (strcmp(d->value[i], value) == 0) {
            d->rows[i] += rows;
            return;
        }
    if (d->count == DISTINCT_MAX) {
        d->more = 1;
        return;
    }
    snprintf(d->value[d->count], sizeof d->value[0], "%s", value);
    d->rows[d->count++] = rows;
}

static void collect(distinct *revisions, distinct *machines, const lt_csv_table *t)
{
    for (long long r = 0; r < t->nrows; r++) {
        char machine[400];
        machine_of(machine, sizeof machine, t, r);
        distinct_add(revisions, cell(t, r, "git_revision"), 1);
        distinct_add(machines, machine, 1);
    }
}

/* "`A` (12 rows), `B+C` (3 rows)", or "`A`" when it is the only one. */
static void distinct_markdown(FILE *f, const distinct *d)
{
    for (int i = 0; i < d->count; i++) {
        fprintf(f, "%s`%s`", i > 0 ? ", " : "", d->value[i]);
        if (d->count > 1)
            fprintf(f, " (%lld row%s)", d->rows[i], d->rows[i] == 1 ? "" : "s");
    }
    if (d->more)
        fprintf(f, " and more");
    if (d->count == 0)
        fprintf(f, "not recorded");
}

/* The training curves beside a result table: DIR/STEM-curves.csv (image,
 * speech) or DIR/curves.csv (copy); 0 when there are none. */
static int curves_beside(char *buf, size_t size, const char *results)
{
    const char *slash = strrchr(results, '/'), *dot = strrchr(results, '.');
    int dir = slash ? (int)(slash - results) : 0;
    const char *stem = slash ? slash + 1 : results;
    int stem_len = dot && dot > stem ? (int)(dot - stem) : (int)strlen(stem);
    snprintf(buf, size, "%.*s%s%.*s-curves.csv", dir, results, slash ? "/" : "", stem_len, stem);
    if (exists(buf))
        return 1;
    snprintf(buf, size, "%.*s%scurves.csv", dir, results, slash ? "/" : "");
    return exists(buf);
}

/* Which revision trained each stretch of a model's updates, from its
 * curves: a run resumed across revisions (before resuming refused it, or
 * with --mixed-revisions) is seen there even where its result rows name
 * only the revision that evaluated it. */
enum { SPANS_MAX = 8, MODELS_MAX = 32 };
typedef struct trained_spans {
    char model[64], evaluated[400]; /* evaluated: the result row's git_revision */
    char revision[SPANS_MAX][400];
    long long last[SPANS_MAX]; /* the last update logged in each stretch */
    int count;
} trained_spans;

static int read_spans(trained_spans *m, const char *results, const lt_csv_table *t)
{
    char path[4400];
    lt_csv_table c;
    if (!curves_beside(path, sizeof path, results) || lt_csv_read(&c, path) != LT_OK)
        return 0;
    const char *key = lt_csv_table_column(&c, "variant") >= 0 ? "variant" : "model";
    int n = 0;
    for (long long r = 0; r < c.nrows; r++) {
        const char *name = cell(&c, r, key), *rev = cell(&c, r, "git_revision");
        int i = 0;
        while (i < n && strcmp(m[i].model, name) != 0)
            i++;
        if (i == n) {
            if (n == MODELS_MAX || rev[0] == '\0')
                continue;
            memset(&m[n], 0, sizeof m[n]);
            snprintf(m[n].model, sizeof m[n].model, "%s", name);
            for (long long k = 0; k < t->nrows; k++)
                if (strcmp(cell(t, k, key), name) == 0) {
                    snprintf(m[n].evaluated, sizeof m[n].evaluated, "%s",
                             cell(t, k, "git_revision"));
                    break;
                }
            n++;
        }
        trained_spans *s = &m[i];
        if (s->count == 0 || strcmp(s->revision[s->count - 1], rev) != 0) {
            if (s->count == SPANS_MAX)
                continue;
            snprintf(s->revision[s->count++], sizeof s->revision[0], "%s", rev);
        }
        s->last[s->count - 1] = atoll(cell(&c, r, "step"));
    }
    lt_csv_table_free(&c);
    return n;
}

static int spans_mixed(const trained_spans *s)
{
    return s->count > 1 || (s->count == 1 && s->evaluated[0] != '\0' &&
                            strcmp(s->revision[0], s->evaluated) != 0);
}

static int spans_equal(const trained_spans *a, const trained_spans *b)
{
    if (a->count != b->count)
        return 0;
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->revision[i], b->revision[i]) != 0 || a->last[i] != b->last[i])
            return 0;
    return 1;
}

/* "Trained across revisions, ...: softmax and linear by `A` to update 4000,
 * then `B` to 14000; ..." where a model's training names another revision
 * than its row, nothing where every model was trained by its row's. */
static void training_note(FILE *f, const char *results, const lt_csv_table *t)
{
    static trained_spans m[MODELS_MAX];
    int n = read_spans(m, results, t), said = 0;
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = !(spans_mixed(&m[j]) && spans_equal(&m[j], &m[i]));
        if (!spans_mixed(&m[i]) || !first)
            continue; /* said with the first model trained the same way */
        fprintf(f, "%s", said++ ? "; " : "Trained across revisions, as its curves record: ");
        for (int j = i, named = 0; j < n; j++)
            if (spans_mixed(&m[j]) && spans_equal(&m[j], &m[i]))
                fprintf(f, "%s%s", named++ ? ", " : "", m[j].model);
        for (int k = 0; k < m[i].count; k++)
            fprintf(f, k ? ", then `%s` to %lld" : " by `%s` to update %lld", m[i].revision[k],
                    m[i].last[k]);
    }
    if (said)
        fprintf(f, ". A row's git revision is the one that evaluated it.\n\n");
}

/* The revisions whose code trained a result table's models, from its
 * curves: for the report's opening count. */
static void collect_training(distinct *revisions, const char *results, const lt_csv_table *t)
{
    static trained_spans m[MODELS_MAX];
    int n = read_spans(m, results, t);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m[i].count; k++)
            distinct_add(revisions, m[i].revision[k], 0);
}

/* The dates of a table's rows: "D", or "D1 to D2" where they differ (a
 * resumed run keeps the rows of models an earlier one finished). */
static void date_span(FILE *f, const lt_csv_table *t)
{
    const char *first = cell(t, 0, "date"), *last = first;
    for (long long r = 0; r < t->nrows; r++) {
        const char *date = cell(t, r, "date"); /* ISO 8601 UTC: in order as text */
        first = strcmp(date, first) < 0 ? date : first;
        last = strcmp(date, last) > 0 ? date : last;
    }
    if (strcmp(first, last) == 0)
        fprintf(f, "%s", first);
    else
        fprintf(f, "%s to %s", first, last);
}

/* The other seeds' runs the claims were judged on: which models each ran,
 * and which revisions on which machines (they are not shown as tables). */
static void seeds_note(FILE *f, const lt_report *o, const lt_report_section *sections, int count,
                       const lt_report_section *s)
{
    if (s->conclude == NULL)
        return;
    static char paths[LT_SEEDS_MAX][4400];
    int n = lt_report_seed_paths(o, sections, count, s, paths), said = 0;
    size_t out_len = strlen(o->out);
    for (int i = 1; i < n; i++) {
        lt_csv_table t;
        if (lt_csv_read(&t, paths[i]) != LT_OK)
            continue;
        distinct revisions = {0}, machines = {0}, models = {0};
        collect(&revisions, &machines, &t);
        const char *key = lt_csv_table_column(&t, "variant") >= 0 ? "variant" : "model";
        for (long long r = 0; r < t.nrows; r++)
            if (strcmp(cell(&t, r, "status"), "ok") == 0 || cell(&t, r, "status")[0] == '\0')
                distinct_add(&models, cell(&t, r, key), 1);
        fprintf(f, "%s- seed %s (`%s`): ", said++ ? "" : "\nThe other seeds' runs:\n\n",
                cell(&t, 0, "seed"), paths[i] + out_len + 1);
        for (int k = 0; k < models.count; k++)
            fprintf(f, "%s%s", k ? ", " : "", models.value[k]);
        fprintf(f, "; git revision%s ", revisions.count > 1 ? "s" : "");
        distinct_markdown(f, &revisions);
        fprintf(f, " on ");
        distinct_markdown(f, &machines);
        fprintf(f, ", ");
        date_span(f, &t);
        fprintf(f, "\n");
        lt_csv_table_free(&t);
    }
}

/* Under each table: the revisions that made its rows (a row trained by
 * several names them all, A+B) and the machines, kernels and BLAS. */
static void provenance_note(FILE *f, const lt_csv_table *t)
{
    distinct revisions = {0}, machines = {0}, kernels = {0}, blas = {0};
    collect(&revisions, &machines, t);
    for (long long r = 0; r < t->nrows; r++) {
        distinct_add(&kernels, cell(t, r, "kernel_isa"), 1);
        distinct_add(&blas, cell(t, r, "blas"), 1);
    }
    fprintf(f, "Measured by git revision%s ", revisions.count > 1 ? "s" : "");
    distinct_markdown(f, &revisions);
    fprintf(f, " on ");
    distinct_markdown(f, &machines);
    fprintf(f, "; kernel set ");
    distinct_markdown(f, &kernels);
    fprintf(f, ", BLAS ");
    distinct_markdown(f, &blas);
    fprintf(f, "; ");
    date_span(f, t);
    fprintf(f, ".");
    double threads, load = lt_claims_busy_load(t, &threads);
    if (load > 0)
        fprintf(f, " Timed beside other work (a load average of %.2f at a row's end, with %.0f "
                   "thread%s of its own): its times do not compare with a run timed alone.",
                load, threads, threads == 1 ? "" : "s");
    fprintf(f, "\n\n");
}

/* A column's value over the table's rows that ran (a row refused, skipped
 * or not applicable has no say): "8", or "1 to 8" where they differ
 * (scaling's batch shrinks as N grows; speech's Bi-LSTM is not its
 * transformers' shape). */
static void config_value(char *buf, size_t size, const lt_csv_table *t, const char *column)
{
    const char *first = NULL;
    double lo = 0, hi = 0;
    int differ = 0;
    for (long long r = 0; r < t->nrows; r++) {
        const char *v = cell(t, r, column), *status = cell(t, r, "status");
        if (v[0] == '\0' || (status[0] && strcmp(status, "ok") != 0))
            continue;
        if (first == NULL) {
            first = v;
            lo = hi = atof(v);
        }
        differ |= strcmp(v, first) != 0;
        lo = atof(v) < lo ? atof(v) : lo;
        hi = atof(v) > hi ? atof(v) : hi;
    }
    if (first == NULL) /* no row ran: the first row's, as asked */
        snprintf(buf, size, "%s", cell(t, 0, column));
    else if (!differ)
        snprintf(buf, size, "%s", first);
    else
        snprintf(buf, size, "%g to %g", lo, hi);
}

/* "2 layers, 4 heads of 32, FFN 512, batch 8, 14000 updates": the model
 * and training of the table's rows, from the columns it has. A table whose
 * every row says trained = 0 (a speed-only run) has no training to give. */
static void config_text(char *buf, size_t size, const lt_csv_table *t)
{
    static const char *const parts[][3] = {
        {"layers", "%s layers", ""},     {"heads", "%s heads", ""},
        {"head_dim", "of %s", ""},       {"width", "width %s", ""},
        {"ffn", "FFN %s", ""},           {"dropout", "dropout %s", "training"},
        {"batch", "batch %s", "training"}, {"steps", "%s updates", "training"},
        {"last_step", "%s updates", "training"}, {"epochs", "%s epochs", "training"}};
    int trained_column = lt_csv_table_column(t, "trained"), untrained = trained_column >= 0;
    for (long long r = 0; untrained && r < t->nrows; r++)
        untrained = strcmp(lt_csv_table_cell(t, r, trained_column), "0") == 0;
    buf[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0] && n < size; i++) {
        if (cell(t, 0, parts[i][0])[0] == '\0' || (untrained && parts[i][2][0] != '\0'))
            continue;
        char v[64], part[96];
        config_value(v, sizeof v, t, parts[i][0]);
        snprintf(part, sizeof part, parts[i][1], v);
        int glued = strcmp(parts[i][0], "head_dim") == 0; /* "4 heads of 32" */
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n == 0 ? "" : glued ? " " : ", ", part);
    }
    if (untrained && n < size)
        snprintf(buf + n, size - n, "%suntrained weights (speed only)", n == 0 ? "" : ", ");
}

/* The configuration here beside the paper's, first thing in a section. */
static void config_line(FILE *f, const lt_report_section *s, const lt_csv_table *t)
{
    if (s->paper_config == NULL)
        return;
    char here[512];
    config_text(here, sizeof here, t);
    fprintf(f, "Configuration here: %s. The paper's: %s.\n\n", here, s->paper_config);
}

/* An image section's sample and completion grids, per variant, as the
 * image program wrote them beside its CSV. */
static void image_grids(FILE *f, const lt_report *o, const lt_report_section *s,
                        const lt_csv_table *t)
{
    if (s->dataset == NULL)
        return;
    if (strcmp(cell(t, 0, "trained"), "0") == 0) { /* a speed-only run */
        fprintf(f, "\nThe weights are untrained (speed only): what they generate is noise, "
                   "written beside the CSV to show the generator ran, and not shown here.\n");
        return;
    }
    int variant = lt_csv_table_column(t, "variant"), said = 0;
    const char *data = cell(t, 0, "dataset");
    char dir[4400], link[4400], figures[4400];
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(s->results, '/') - s->results), s->results);
    out_link(o, link, sizeof link);
    figures_link(o, figures, sizeof figures);
    for (long long r = 0; variant >= 0 && r < t->nrows; r++) {
        const char *name = lt_csv_table_cell(t, r, variant);
        int first = 1; /* each variant once */
        for (long long q = 0; q < r && first; q++)
            first = strcmp(lt_csv_table_cell(t, q, variant), name) != 0;
        static const char *const kinds[] = {"samples", "completions"};
        char completions[4600];
        snprintf(completions, sizeof completions, "%s/%s/%s-%s-completions.png", o->out, dir,
                 data, name);
        for (int k = 0; k < 2 && first; k++) {
            char path[4600], view[4600], shown[14000];
            snprintf(path, sizeof path, "%s/%s/%s-%s-%s.png", o->out, dir, data, name, kinds[k]);
            if (!exists(path))
                continue;
            if (!said++)
                fprintf(f, "\nWhat the models generate: samples from nothing, and completions "
                           "(test images above, below them the same images with the lower half "
                           "generated from the upper; the white ticks at the sides mark where "
                           "the given half ends):\n");
            /* a grid an older revision wrote at actual size is shown as
             * the program draws it now, redrawn under figures/ */
            snprintf(view, sizeof view, "%s/figures", o->out);
            mkdir(view, 0777);
            snprintf(view, sizeof view, "%s/figures/%s-%s-%s-%s.png", o->out, dir, data, name,
                     kinds[k]);
            int redrawn = s->grid_view != NULL && exists(completions)
                              ? s->grid_view(path, completions, view, k == 1)
                              : 0;
            if (redrawn == 1)
                snprintf(shown, sizeof shown, "%s/%s-%s-%s-%s.png", figures, dir, data, name,
                         kinds[k]);
            else if (strcmp(link, ".") == 0) /* the report is in OUT */
                snprintf(shown, sizeof shown, "%s/%s-%s-%s.png", dir, data, name, kinds[k]);
            else
                snprintf(shown, sizeof shown, "%s/%s/%s-%s-%s.png", link, dir, data, name,
                         kinds[k]);
            fprintf(f, "\n%s %s%s:\n\n![%s %s %s](%s)\n", name, kinds[k],
                    redrawn == 1    ? " (drawn at actual size by its run: enlarged here, "
                                      "as the image program now draws it)"
                    : redrawn == -1 ? " (as its run wrote it: it could not be read to be "
                                      "shown enlarged)"
                                    : "",
                    data, name, kinds[k], shown);
        }
    }
}

static void write_section(FILE *f, const lt_report *o, const lt_report_section *sections,
                          int count, const lt_report_section *s, const lt_csv_table *t,
                          int repeat)
{
    char results[4400];
    snprintf(results, sizeof results, "%s/%s", o->out, s->results);
    if (s->part >= LT_PART_SWEEP) {
        fprintf(f, "\n### %s\n\n%s\n\n", s->title, s->says);
        provenance_note(f, t);
        training_note(f, results, t);
        lt_table_markdown(s->schema, t, f);
        if (s->extra != NULL)
            s->extra(f, o->out, s->runs);
        figure_link(f, o, s, repeat);
        return;
    }
    fprintf(f, "\n## %s", s->title);
    if (s->dataset != NULL)
        fprintf(f, ": %s", cell(t, 0, "data"));
    fprintf(f, "\n\n");
    config_line(f, s, t);
    provenance_note(f, t);
    training_note(f, results, t);
    if (lt_csv_table_column(t, "preset") >= 0)
        fprintf(f, "Preset %s", cell(t, 0, "preset"));
    if (s->describe != NULL)
        s->describe(f, t);
    if (lt_csv_table_column(t, "preset") >= 0) /* a sentence only where one was begun */
        fprintf(f, ".\n\n");
    lt_table_markdown(s->schema, t, f);
    if (s->paper != NULL)
        paper_table(f, o, s->paper);
    if (s->paper_also != NULL)
        paper_table(f, o, s->paper_also);
    fprintf(f, "\nThe paper: %s\n", s->says);
    conclusions(f, o, sections, count, s, t);
    seeds_note(f, o, sections, count, s);
    if (s->extra != NULL)
        s->extra(f, o->out, s->runs);
    figure_link(f, o, s, repeat);
    image_grids(f, o, s, t);
}

/* The CSV a section's figure is drawn from, as the suite hands it to plot. */
static const char *drawn_csv(const lt_report *o, const lt_report_section *s, char *buf,
                             size_t size)
{
    snprintf(buf, size, "%s/%s", o->out, s->curves ? s->curves : s->results);
    return buf;
}

/* Every section's CSV that is there, read as compare and plot read it
 * (lt_results_open, its section's table required), before a line is
 * written: a damaged or misplaced CSV is refused by name, and the report
 * standing is kept. How many there are goes to *found. */
static lt_status check_sections(const lt_report *o, const lt_report_section *sections, int count,
                                int *found)
{
    *found = 0;
    for (int i = 0; i < count; i++) {
        const char *files[2] = {sections[i].results, sections[i].curves};
        const lt_schema *schemas[2] = {sections[i].schema, sections[i].drawn};
        for (int k = 0; k < 2; k++) {
            char path[4400];
            if (files[k] == NULL || schemas[k] == NULL)
                continue;
            snprintf(path, sizeof path, "%s/%s", o->out, files[k]);
            if (!exists(path))
                continue;
            lt_results_file file;
            const lt_schema *schema;
            LT_TRY(lt_results_open(&file, &schema, path, &schemas[k], 1));
            lt_results_free(&file);
            *found += k == 0;
        }
    }
    if (*found == 0 && o->rewritten)
        return lt_fail(LT_E_USAGE, "--out %s: no result CSV of the suite there, nothing to report",
                       o->out);
    return LT_OK;
}

/* The revisions and machines of every result table the report shows. */
static void every_table(const lt_report *o, const lt_report_section *sections, int count,
                        distinct *revisions, distinct *machines)
{
    for (int i = 0; i < count; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out, sections[i].results);
        lt_csv_table t;
        if (!exists(path) || lt_csv_read(&t, path) != LT_OK)
            continue;
        collect(revisions, machines, &t);
        collect_training(revisions, path, &t);
        lt_csv_table_free(&t);
    }
}

lt_status lt_report_write(const lt_report *o, const lt_report_section *sections, int count)
{
    int found;
    LT_TRY(check_sections(o, sections, count, &found));
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, o->path));
    FILE *f = af.f;
    distinct revisions = {0}, machines = {0};
    every_table(o, sections, count, &revisions, &machines);
    fprintf(f, "# ltbench report\n\n");
    if (!o->rewritten) /* the presets are the CSVs' own (their preset column) */
        fprintf(f, "Written by `ltbench suite --preset %s`. ", o->preset);
    fprintf(f, "From the CSVs in `%s`; the paper's numbers come from `%s`. ", o->out, o->paper);
    if (revisions.count == 1 && machines.count == 1 && !revisions.more)
        fprintf(f, "Every table below was measured by git revision `%s` on %s.\n\n",
                revisions.value[0], machines.value[0]);
    else {
        /* rows written before the CPU id was recorded name no machine: they
         * may come from one machine or several, so they are not counted */
        int named = 0, unnamed = 0;
        for (int i = 0; i < machines.count; i++) {
            int none = strstr(machines.value[i], "(generation not recorded)") != NULL;
            named += !none;
            unnamed |= none;
        }
        fprintf(f, "The tables below were measured by %d git revision%s%s on %d CPU%s%s "
                   "(named by id)%s: each table names its own, and \"Machine and build\" "
                   "describes the first.\n\n",
                revisions.count, revisions.count == 1 ? "" : "s", revisions.more ? " or more" : "",
                named, named == 1 ? "" : "s", machines.more ? " or more" : "",
                unnamed ? " and on machines whose CPU id was not recorded (older runs: one or "
                          "several, the rows cannot tell)"
                        : "");
    }
    if (o->rewritten) {
        /* the flags of this run say nothing of the runs that wrote them */
        fprintf(f, "This report was rewritten by `ltbench suite --report-only` from the CSVs "
                   "already in `%s`, nothing run: how each was made is in its own columns "
                   "(preset, threads, and the provenance named under each table).\n\n",
                o->out);
    } else {
        fprintf(f, "Commands run:\n\n```\n");
        for (int i = 0; i < o->count; i++)
            fprintf(f, "%s\n", o->commands[i]);
        fprintf(f, "```\n\n");
    }
    int noted = 0;
    for (int i = 0; i < o->count; i++)
        if (o->notes[i][0]) {
            fprintf(f, "- %s: %s\n", o->names[i], o->notes[i]);
            noted = 1;
        }
    if (noted) /* a list runs into the heading after it without one */
        fprintf(f, "\n");
    int described = 0, repeat, beyond = 0;
    for (int i = 0; i < count; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out, sections[i].results);
        lt_csv_table t;
        if (sections[i].seed_of != NULL) /* judged with its section, not shown alone */
            continue;
        if (!exists(path) || lt_csv_read(&t, path) != LT_OK)
            continue;
        if (!described)
            machine_section(f, &t);
        described = 1;
        if (sections[i].part >= LT_PART_SWEEP && !beyond++)
            fprintf(f, "\n## Beyond the paper\n\nSweeps the paper does not run, over the "
                       "same attention core and generator.\n");
        /* plot, given the sections' CSVs that exist in this order, names a
         * figure drawn again NAME-2, NAME-3 */
        repeat = 1;
        for (int j = 0; j < i; j++) {
            char drawn[4400];
            repeat += sections[j].drawn != NULL && sections[j].drawn == sections[i].drawn &&
                      exists(drawn_csv(o, &sections[j], drawn, sizeof drawn));
        }
        write_section(f, o, sections, count, &sections[i], &t, repeat);
        lt_csv_table_free(&t);
    }
    if (!described)
        fprintf(f, "## Machine and build\n\nNo result CSV to read the provenance from.\n");
    return lt_atomic_commit(&af);
}
