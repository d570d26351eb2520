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

/* OUT/figures as the report sees it: relative when the report lies in OUT
 * or above it, absolute otherwise. */
static void figures_link(const lt_report *o, char *buf, size_t size)
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
        snprintf(buf, size, "figures");
    else if (strcmp(dir, ".") == 0 && o->out[0] != '/')
        snprintf(buf, size, "%s/figures", o->out);
    else if (strncmp(o->out, dir, len) == 0 && o->out[len] == '/')
        snprintf(buf, size, "%s/figures", o->out + len + 1);
    else
        snprintf(buf, size, "%s/figures", o->out);
}

/* "AMD EPYC (family 25 model 17 stepping 1)": the model name, and the
 * generation where the CSV records it (results written before cpu_id
 * existed do not). */
static void cpu_text(char *buf, size_t size, const lt_csv_table *t)
{
    const char *id = cell(t, 0, "cpu_id");
    snprintf(buf, size, "%s%s%s%s", cell(t, 0, "cpu_model"), id[0] ? " (" : "", id,
             id[0] ? ")" : "");
}

static void machine_section(FILE *f, const lt_csv_table *t)
{
    fprintf(f, "## Machine and build\n\n");
    char cpu[320];
    cpu_text(cpu, sizeof cpu, t);
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
        if (exists(path))
            fprintf(f, "\n![%s](%s/%s.png)\n", fig->title, link, name);
    }
}

/* The section's claims, each with the numbers and the rule that decide it. */
static void conclusions(FILE *f, const lt_report *o, const lt_report_section *s,
                        const lt_csv_table *t)
{
    if (s->conclude == NULL)
        return;
    lt_csv_table paper;
    int have_paper = 0;
    if (s->paper != NULL) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->paper, s->paper);
        have_paper = exists(path) && lt_csv_read(&paper, path) == LT_OK;
    }
    lt_claim claims[LT_CLAIMS_MAX];
    int count = s->conclude(t, have_paper ? &paper : NULL, claims);
    if (have_paper)
        lt_csv_table_free(&paper);
    if (count == 0)
        return;
    fprintf(f, "\nThe paper's conclusions, judged on the rows above:\n");
    lt_claims_markdown(f, claims, count);
}

/* Where the machine section's table was measured: a table measured
 * elsewhere (a report rewritten from CSVs of several runs) says where,
 * under its heading. */
static const char *const provenance_fields[] = {"cpu_model",    "cpu_id", "blas", "kernel_isa",
                                                "git_revision", "build"};
enum { PROVENANCE_FIELDS = sizeof provenance_fields / sizeof provenance_fields[0] };
typedef struct provenance {
    char value[PROVENANCE_FIELDS][256];
} provenance;

static void provenance_of(provenance *p, const lt_csv_table *t)
{
    for (int i = 0; i < PROVENANCE_FIELDS; i++)
        snprintf(p->value[i], sizeof p->value[i], "%s", cell(t, 0, provenance_fields[i]));
}

static void provenance_note(FILE *f, const provenance *machine, const lt_csv_table *t)
{
    int differs = 0;
    for (int i = 0; i < PROVENANCE_FIELDS; i++) {
        const char *mine = machine->value[i], *its = cell(t, 0, provenance_fields[i]);
        /* a field a file does not record (written before its column) is no difference */
        if (mine[0] == '\0' || its[0] == '\0')
            continue;
        differs |= strcmp(mine, its) != 0;
    }
    char cpu[320];
    cpu_text(cpu, sizeof cpu, t);
    if (differs)
        fprintf(f, "Measured by another run than the one under \"Machine and build\": CPU %s, "
                   "BLAS %s%s%s, git revision %s, build %s, on %s.\n\n",
                cpu, cell(t, 0, "blas"), cell(t, 0, "kernel_isa")[0] ? ", kernel set " : "",
                cell(t, 0, "kernel_isa"), cell(t, 0, "git_revision"), cell(t, 0, "build"),
                cell(t, 0, "date"));
}

static void write_section(FILE *f, const lt_report *o, const lt_report_section *s,
                          const lt_csv_table *t, const provenance *machine, int repeat)
{
    if (s->beyond) {
        fprintf(f, "\n### %s\n\n%s\n\n", s->title, s->says);
        provenance_note(f, machine, t);
        lt_table_markdown(s->schema, t, f);
        if (s->extra != NULL)
            s->extra(f, o->out);
        figure_link(f, o, s, repeat);
        return;
    }
    fprintf(f, "\n## %s", s->title);
    if (s->dataset != NULL)
        fprintf(f, ": %s", cell(t, 0, "data"));
    fprintf(f, "\n\n");
    provenance_note(f, machine, t);
    if (lt_csv_table_column(t, "preset") >= 0)
        fprintf(f, "Preset %s", cell(t, 0, "preset"));
    if (s->dataset != NULL)
        fprintf(f, "; %s training and %s test images; %s", cell(t, 0, "train_images"),
                cell(t, 0, "test_images"),
                strcmp(cell(t, 0, "trained"), "1") == 0 ? "trained"
                                                        : "untrained weights (speed only)");
    if (strcmp(s->experiment, "speech") == 0)
        fprintf(f, "; %s hours of WSJ-style synthetic speech (%s training, %s test "
                   "utterances; %.0f positions reach attention on average, %s at most; dev "
                   "is read by the training speakers, test by voices unseen in training, as "
                   "WSJ's test speakers are); always answering the most frequent phone gives "
                   "a PER of %.1f%%",
                cell(t, 0, "hours"), cell(t, 0, "train_utterances"),
                cell(t, 0, "test_utterances"), strtod(cell(t, 0, "mean_positions"), NULL),
                cell(t, 0, "max_positions"), 100.0 * strtod(cell(t, 0, "baseline_per"), NULL));
    fprintf(f, ".\n\n");
    lt_table_markdown(s->schema, t, f);
    if (s->paper != NULL)
        paper_table(f, o, s->paper);
    fprintf(f, "\nThe paper: %s\n", s->says);
    conclusions(f, o, s, t);
    if (s->extra != NULL)
        s->extra(f, o->out);
    figure_link(f, o, s, repeat);
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

lt_status lt_report_write(const lt_report *o, const lt_report_section *sections, int count)
{
    int found;
    LT_TRY(check_sections(o, sections, count, &found));
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, o->path));
    FILE *f = af.f;
    if (o->rewritten) /* the presets are the CSVs' own (their preset column) */
        fprintf(f, "# ltbench report\n\nEvery number below was measured on the machine named "
                   "here, from the CSVs in `%s`. The paper's numbers come from `%s`.\n\n",
                o->out, o->paper);
    else
        fprintf(f, "# ltbench report\n\nWritten by `ltbench suite --preset %s`; every number "
                   "below was measured on the machine named here, from the CSVs in `%s`. The "
                   "paper's numbers come from `%s`.\n\n",
                o->preset, o->out, o->paper);
    if (o->rewritten) {
        /* the flags of this run say nothing of the runs that wrote them */
        fprintf(f, "This report was rewritten by `ltbench suite --report-only` from the CSVs "
                   "already in `%s`, nothing run: how each was made is in its own columns "
                   "(preset, threads, the provenance under each table's machine section).\n\n",
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
    provenance machine;
    for (int i = 0; i < count; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out, sections[i].results);
        lt_csv_table t;
        if (!exists(path) || lt_csv_read(&t, path) != LT_OK)
            continue;
        if (!described) {
            machine_section(f, &t);
            provenance_of(&machine, &t);
        }
        described = 1;
        if (sections[i].beyond && !beyond++)
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
        write_section(f, o, &sections[i], &t, &machine, repeat);
        lt_csv_table_free(&t);
    }
    if (!described)
        fprintf(f, "## Machine and build\n\nNo result CSV to read the provenance from.\n");
    return lt_atomic_commit(&af);
}
