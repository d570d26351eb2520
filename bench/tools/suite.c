/* ltbench suite: every experiment at one preset into one folder, every
 * figure, and a Markdown report that sets each result table (its shown
 * columns, from the registry's tables) beside the paper's (the CSVs in data/paper),
 * with the commands that made them. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/process.h"
#include "core/runtime.h"
#include "core/signals.h"
#include "datasets/images.h"
#include "io/atomic.h"
#include "io/outdir.h"
#include "experiment/flags.h"
#include "experiment/program.h"
#include "results/report.h"
#include "registry.h"

enum { MAX_ARGS = 32, MAX_STEPS = 32 };

/* The programs that measure without training: no checkpoints, so no
 * --resume (the suite keeps a finished CSV of theirs instead). Every
 * program takes --preset and writes in --out DIR. */
static const char *const csv_programs[] = {"scaling", "crossover", "decode"};
enum { CSV_PROGRAMS = sizeof csv_programs / sizeof csv_programs[0] };

static int csv_program(const char *name)
{
    for (int i = 0; i < CSV_PROGRAMS; i++)
        if (strcmp(csv_programs[i], name) == 0)
            return 1;
    return 0;
}

typedef struct suite_options {
    const char *preset, *out, *report, *experiments, *paper;
    int report_only, resume, overwrite, plan, mixed_revisions;
    lt_common common;
} suite_options;

/* Every experiment's sections from the registry, by part (bench_sections_of). */
enum { SECTIONS_MAX = MAX_STEPS };
static lt_report_section declared[SECTIONS_MAX];
static int SECTIONS;

/* The sections with each image section's CSV named after the data it
 * reads (image/cifar10-catdog.csv when the cats-and-dogs subset stands in
 * for CIFAR-10), as the image program names it. */
static lt_report_section sections[SECTIONS_MAX];
static int exists(const char *path);
static char resolved_paths[SECTIONS_MAX][256];

/* A report rewritten from OUT takes the one result CSV of that data set
 * found there (DATASET.csv or DATASET-SUBSET.csv), whatever data is here. */
static void found_in_out(char *name, size_t size, const char *out, const char *results,
                         const char *dataset)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/%.*s", out, (int)(strrchr(results, '/') - results), results);
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    int found = 0;
    char only[256] = "";
    size_t len = strlen(dataset);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, dataset, len) != 0 || n < len + 4 ||
            strcmp(e->d_name + n - 4, ".csv") != 0 ||
            (e->d_name[len] != '.' && e->d_name[len] != '-') ||
            (n >= 11 && strcmp(e->d_name + n - 11, "-curves.csv") == 0))
            continue;
        snprintf(only, sizeof only, "%.*s", (int)(n - 4), e->d_name);
        found++;
    }
    closedir(d);
    if (found == 1)
        snprintf(name, size, "%s", only);
}

static void resolve_sections(const suite_options *o)
{
    SECTIONS = bench_sections_of(bench_registry, bench_registry_count, declared, SECTIONS_MAX);
    for (int i = 0; i < SECTIONS; i++) {
        sections[i] = declared[i];
        const char *dataset = declared[i].dataset;
        if (dataset == NULL)
            continue;
        char name[LT_IMAGES_NAME_MAX + 8];
        if (lt_images_data_name(name, dataset, NULL) != LT_OK)
            snprintf(name, sizeof name, "%s", dataset); /* the run says what is wrong */
        const char *results = declared[i].results, *slash = strrchr(results, '/');
        char path[4400];
        snprintf(path, sizeof path, "%s/%.*s/%s.csv", o->out, (int)(slash - results), results,
                 name);
        if (o->report_only && !exists(path))
            found_in_out(name, sizeof name, o->out, results, dataset);
        snprintf(resolved_paths[i], sizeof resolved_paths[i], "%.*s/%s.csv",
                 (int)(slash - results), results, name);
        sections[i].results = resolved_paths[i];
    }
    /* a seed names its section by the declared path: now the resolved one */
    for (int i = 0; i < SECTIONS; i++)
        for (int j = 0; j < SECTIONS && sections[i].seed_of != NULL; j++)
            if (strcmp(declared[i].seed_of, declared[j].results) == 0)
                sections[i].seed_of = sections[j].results;
}
_Static_assert((int)SECTIONS_MAX <= (int)MAX_STEPS, "a step per section");

/* One program run by the suite, and what became of it. */
typedef struct suite_step {
    const char *name;
    char args[MAX_ARGS][512];
    int argc;
    int exit_code; /* -1: not run */
    char note[512];
} suite_step;

static void add_arg(suite_step *s, const char *fmt, const char *value)
{
    LT_ASSERT(s->argc < MAX_ARGS);
    int n = snprintf(s->args[s->argc++], sizeof s->args[0], fmt, value);
    LT_ASSERT(n >= 0 && (size_t)n < sizeof s->args[0]); /* --out is checked shorter */
}

/* The folder of this executable: the programs live beside it. */
static void program_path(char *buf, size_t size, const char *name)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    snprintf(buf, size, "%s/ltbench-%s", self, name);
}

static void command_line(const suite_step *s, char *buf, size_t size)
{
    snprintf(buf, size, "ltbench %s", s->name);
    for (int i = 0; i < s->argc; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), " %s", s->args[i]);
}

static int run_step(suite_step *s)
{
    char path[4200], line[8192];
    program_path(path, sizeof path, s->name);
    command_line(s, line, sizeof line);
    fprintf(stderr, "\n== %s\n", line);
    const char *argv[MAX_ARGS + 2];
    argv[0] = path;
    for (int i = 0; i < s->argc; i++)
        argv[i + 1] = s->args[i];
    argv[s->argc + 1] = NULL;
    return s->exit_code = lt_process_run(argv, NULL);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the report ---- */

static lt_status write_report(const suite_options *o, const suite_step *steps, int count)
{
    static char lines[MAX_STEPS][8192];
    const char *commands[MAX_STEPS], *notes[MAX_STEPS];
    for (int i = 0; i < count; i++) {
        command_line(&steps[i], lines[i], sizeof lines[i] - 32);
        if (!o->report_only && steps[i].exit_code != 0)
            strcat(lines[i], steps[i].exit_code < 0 ? "    # not run" : "    # failed");
        commands[i] = lines[i];
        notes[i] = steps[i].note;
    }
    const char *names[MAX_STEPS];
    for (int i = 0; i < count; i++)
        names[i] = steps[i].name;
    lt_report report = {o->preset, o->out, o->report, o->paper, o->report_only,
                        commands, names, notes, count};
    return lt_report_write(&report, sections, SECTIONS);
}

/* ---- the runs ---- */

static int wanted(const suite_options *o, const char *name)
{
    char list[256], item[64];
    snprintf(list, sizeof list, ",%s,", o->experiments);
    snprintf(item, sizeof item, ",%s,", name);
    return strstr(list, item) != NULL;
}

/* Every --experiments item is an experiment the suite knows (an entry of
 * the registry with sections), named once. */
static lt_status check_experiments(const char *text)
{
    enum { KNOWN = 32 };
    char copy[256], known[512];
    bench_suite_names(bench_registry, bench_registry_count, ", ", known, sizeof known);
    if (strlen(text) >= sizeof copy)
        return lt_fail(LT_E_USAGE, "--experiments: too long, expected items from %s", known);
    strcpy(copy, text);
    const char *items[KNOWN];
    int count;
    LT_TRY(lt_cli_split_unique(copy, items, KNOWN, &count, "--experiments"));
    for (int i = 0; i < count; i++) {
        const bench_entry *e = bench_find(bench_registry, bench_registry_count, items[i]);
        if (e == NULL || e->section_count == 0)
            return lt_fail(LT_E_USAGE, "--experiments: expected items from %s, got '%s'", known,
                           items[i]);
    }
    return LT_OK;
}

/* The steps of a preset: program, arguments, and why one is left out. */
static int plan_steps(const suite_options *o, suite_step *steps)
{
    int n = 0, quick = strcmp(o->preset, "quick") == 0;
    char threads[32];
    snprintf(threads, sizeof threads, "%ld", o->common.threads);
    for (int i = 0; i < SECTIONS; i++) {
        const lt_report_section *sec = &sections[i];
        if (!wanted(o, sec->experiment) ||
            (sec->only_preset != NULL && strcmp(sec->only_preset, o->preset) != 0))
            continue;
        suite_step *s = &steps[n++];
        memset(s, 0, sizeof *s);
        s->name = sec->experiment;
        s->exit_code = -1;
        if (sec->dataset != NULL)
            add_arg(s, "--dataset=%s", sec->dataset);
        char out[4400];
        snprintf(out, sizeof out, "%s/%s", o->out, sec->results);
        if (csv_program(sec->experiment) && o->resume && exists(out))
            snprintf(s->note, sizeof s->note, "kept: the earlier run's %s",
                     strrchr(sec->results, '/') + 1);
        add_arg(s, "--preset=%s", o->preset);
        *strrchr(out, '/') = '\0';
        add_arg(s, "--out=%s", out);
        for (size_t a = 0; a < sizeof sec->args / sizeof sec->args[0] && sec->args[a] != NULL;
             a++)
            add_arg(s, "%s", sec->args[a]);
        /* recomputing 3072-byte images takes minutes even for tiny models */
        if (sec->dataset != NULL && strcmp(sec->dataset, "cifar10") == 0 && quick)
            add_arg(s, "%s", "--gen-modes=fast");
        /* a report rewritten from OUT says which listed run it has no results
         * of (whether the data are here no longer matters) */
        char results[4400];
        snprintf(results, sizeof results, "%s/%s", o->out, sec->results);
        if (o->report_only) {
            if (!exists(results))
                snprintf(s->note, sizeof s->note,
                         "not in this report (%s): no %s in the folder yet", sec->title,
                         sec->results);
        } else if (sec->dataset != NULL) {
            const char *dir, *fetch;
            int fallback;
            lt_images_locate(sec->dataset, &dir, &fetch, &fallback);
            if (dir == NULL)
                snprintf(s->note, sizeof s->note, "skipped: no %s data (fetch it with %s)",
                         sec->dataset, fetch);
        }
    }
    for (int i = 0; i < n; i++) {
        add_arg(&steps[i], "--threads=%s", threads);
        add_arg(&steps[i], "%s", "--quiet");
        /* A CSV program has no --resume: the suite keeps its finished CSV
         * (the step is skipped), and one a killed run left unfinished (its
         * journal) is measured again. */
        if (!csv_program(steps[i].name) && (o->resume || o->overwrite))
            add_arg(&steps[i], "%s", o->resume ? "--resume" : "--overwrite");
        else if (o->resume || o->overwrite)
            add_arg(&steps[i], "%s", "--overwrite");
        if (!csv_program(steps[i].name) && o->resume && o->mixed_revisions)
            add_arg(&steps[i], "%s", "--mixed-revisions");
    }
    return n;
}

/* --plan: the commands the preset runs, one a line, each with why it would
 * be skipped; nothing run or written. */
static int print_plan(const suite_options *o)
{
    static suite_step planned[MAX_STEPS];
    int count = plan_steps(o, planned);
    for (int i = 0; i < count; i++) {
        char line[8192];
        command_line(&planned[i], line, sizeof line);
        printf("%s%s%s\n", line, planned[i].note[0] ? "    # " : "", planned[i].note);
    }
    return 0;
}

/* What the suite's work needs before it starts: results to report, or an
 * OpenBLAS core every experiment it runs would accept. */
static lt_status check_can_start(const suite_options *o)
{
    if (!o->report_only)
        return lt_openblas_check_env();
    if (!exists(o->out))
        return lt_fail(LT_E_USAGE, "--out %s: no such folder, so no results to report (run the "
                                   "suite into it first)",
                       o->out);
    return LT_OK;
}

/* An earlier suite's results in OUT are kept unless --resume or
 * --overwrite says what to do with them, as every experiment does. */
static lt_status check_earlier(const suite_options *o)
{
    if (o->resume && o->overwrite)
        return lt_fail(LT_E_USAGE, "--resume and --overwrite: choose one (continue the earlier "
                                   "run, or start over)");
    if (o->mixed_revisions && !o->resume)
        return lt_fail(LT_E_USAGE, "--mixed-revisions only says what --resume may continue: "
                                   "give both, or neither");
    if (o->resume || o->overwrite || o->report_only)
        return LT_OK;
    for (int i = 0; i < SECTIONS; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out, sections[i].results);
        if (wanted(o, sections[i].experiment) && exists(path))
            return lt_fail(LT_E_USAGE,
                           "%s holds the results of an earlier run: --resume continues it "
                           "(keeping what is finished), --overwrite starts over",
                           o->out);
    }
    return LT_OK;
}

/* The report replaces an earlier report, never another file that happens
 * to have its name (a README, a CSV) unless --overwrite says so. */
static lt_status check_report_path(const suite_options *o)
{
    FILE *f = fopen(o->report, "rb");
    if (f == NULL || o->overwrite) {
        if (f != NULL)
            fclose(f);
        return LT_OK;
    }
    char first[32] = "";
    size_t n = fread(first, 1, sizeof first - 1, f);
    fclose(f);
    first[n] = '\0';
    if (strncmp(first, "# ltbench report\n", 17) == 0)
        return LT_OK;
    return lt_fail(LT_E_USAGE, "--report %s: the file exists and is not an ltbench report: "
                               "--overwrite replaces it, or give another path",
                   o->report);
}

static void plot_all(const suite_options *o, int *failed)
{
    suite_step plot = {.name = "plot", .exit_code = -1};
    int csvs = 0;
    for (int i = 0; i < SECTIONS; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out,
                 sections[i].curves ? sections[i].curves : sections[i].results);
        if (sections[i].drawn != NULL && exists(path)) { /* a section with no figure draws none */
            add_arg(&plot, "%s", path);
            csvs++;
        }
    }
    add_arg(&plot, "--out=%s/figures", o->out);
    /* figures/ is the suite's own, redrawn each run from every CSV in OUT
     * (whose earlier results check_earlier let through) */
    add_arg(&plot, "%s", "--overwrite");
    if (exists(o->paper)) /* else plot draws the figures without the paper's bars */
        add_arg(&plot, "--paper=%s", o->paper);
    if (csvs > 0 && run_step(&plot) != 0)
        *failed = 1;
}

static int suite_flags(suite_options *o, lt_flag *f)
{
    int n = 0;
    f[n++] = lt_flag_preset(&o->preset);
    f[n++] = lt_flag_out(&o->out, "every experiment's results in a folder of its own, figures/ "
                                  "and REPORT.md (default results/suite-PRESET)");
    f[n++] = (lt_flag){"--report", LT_FLAG_STRING, &o->report, "PATH",
                       "the report (default OUT/REPORT.md)", 0, 0, NULL, 0};
    static char which[600];
    char names[512];
    bench_suite_names(bench_registry, bench_registry_count, ", ", names, sizeof names);
    snprintf(which, sizeof which, "which to run: %s", names);
    f[n++] = (lt_flag){"--experiments", LT_FLAG_STRING, &o->experiments, "LIST", which, 0, 0,
                       NULL, 0};
    f[n++] = (lt_flag){"--paper", LT_FLAG_STRING, &o->paper, "DIR", "the paper's numbers as CSV",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--report-only", LT_FLAG_BOOL, &o->report_only, NULL,
                       "run nothing: draw the figures and write the report from the CSVs already "
                       "in OUT (each checked as compare checks it: a damaged one is refused and "
                       "the report standing kept)",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--plan", LT_FLAG_BOOL, &o->plan, NULL,
                       "print the commands this preset runs, one a line, and exit: nothing is "
                       "run or written",
                       0, 0, NULL, 0};
    f[n++] = lt_flag_resume(&o->resume);
    f[n++] = lt_flag_mixed_revisions(&o->mixed_revisions);
    f[n++] = lt_flag_overwrite(&o->overwrite);
    lt_common_flags(&f[n], &o->common);
    return n + LT_COMMON_FLAGS;
}

static const char details[] =
    "Presets: every experiment runs at --preset (each one's --help lists its values):\n"
    "quick: minutes in all; small: about an hour; medium: hours per experiment; paper:\n"
    "days.\n"
    "Runs copy, scaling, image (MNIST, and CIFAR-10 or the converted cats-and-dogs\n"
    "subset, when the data are there; otherwise the report says how to fetch them),\n"
    "speech, and the sweeps beyond the paper, crossover and decode, into\n"
    "OUT/<experiment>/, then `ltbench plot` into OUT/figures/ (redrawn each run from\n"
    "every CSV in OUT), then the Markdown report. An experiment that fails is reported\n"
    "and the others go on; the exit status is then 1. An OUT that holds an earlier\n"
    "suite's results is refused unless --resume (each experiment resumes from its\n"
    "checkpoints; a finished CSV of scaling, crossover or decode is kept) or\n"
    "--overwrite says what to do with them. `ltbench suite --preset medium --out\n"
    "results/reference --report results/REPORT.md --overwrite` regenerates the\n"
    "repository's reference report.";

int main(int argc, char **argv)
{
    static char every[512];
    bench_suite_names(bench_registry, bench_registry_count, ",", every, sizeof every);
    static suite_options o = {.preset = "quick", .paper = "data/paper"};
    o.experiments = every;
    lt_common_defaults(&o.common);
    o.common.no_blas = 1; /* checked below when it runs experiments */
    static lt_flag flags[24];
    lt_cli cli = {"ltbench suite",
                  "Run every experiment at one preset, draw every figure and write a report "
                  "beside the paper's tables.",
                  details, flags, suite_flags(&o, flags), NULL};
    int exit_now;
    int code = lt_program_parse(&cli, NULL, NULL, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    char out[4096], report_path[4400];
    if (o.out == NULL) {
        snprintf(out, sizeof out, "results/suite-%s", o.preset);
        o.out = out;
    }
    if (o.report == NULL) {
        snprintf(report_path, sizeof report_path, "%s/REPORT.md", o.out);
        o.report = report_path;
    }
    resolve_sections(&o);
    /* every argument the suite passes names a file under OUT */
    lt_status status = strlen(o.out) > 400
                           ? lt_fail(LT_E_USAGE, "--out: at most 400 characters, got %zu",
                                     strlen(o.out))
                           : check_experiments(o.experiments);
    if (status == LT_OK)
        status = check_earlier(&o);
    if (status == LT_OK && o.plan)
        return print_plan(&o);
    if (status == LT_OK)
        status = check_can_start(&o);
    /* one suite at a time in OUT; the report writable before hours of work */
    lt_outdir dir;
    const char *report[] = {o.report};
    if (status == LT_OK)
        status = lt_outdir_open(&dir, o.out, 0, 0, 0, NULL, 0, NULL, 0);
    if (status == LT_OK)
        status = check_report_path(&o);
    lt_atomic_file probe;
    if (status == LT_OK)
        status = lt_atomic_open(&probe, report[0]);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    lt_atomic_abort(&probe);

    static suite_step steps[MAX_STEPS];
    int count = plan_steps(&o, steps), failed = 0;
    lt_signals_install();
    for (int i = 0; i < count && !o.report_only && !lt_interrupted(); i++) {
        if (steps[i].note[0]) {
            fprintf(stderr, "\n== ltbench %s: %s\n", steps[i].name, steps[i].note);
            continue;
        }
        if (run_step(&steps[i]) != 0) {
            failed = 1;
            snprintf(steps[i].note, sizeof steps[i].note, "failed with exit status %d",
                     steps[i].exit_code);
        }
    }
    plot_all(&o, &failed);
    status = write_report(&o, steps, count);
    lt_outdir_close(&dir);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    printf("wrote %s and the figures in %s/figures\n", o.report, o.out);
    if (lt_interrupted())
        return lt_interrupt_exit_code();
    return failed;
}
