/* ltbench suite: every experiment at one preset into one folder, every
 * figure, and a Markdown report that sets each table beside the paper's
 * (the CSVs in data/paper), with the commands that made them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "core/mem.h"
#include "harness.h"
#include "io/atomic.h"
#include "io/csv.h"

enum { MAX_ARGS = 32, MAX_STEPS = 8 };

typedef struct suite_options {
    const char *preset, *out, *report, *experiments, *paper;
    int report_only;
    bench_common common;
} suite_options;

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
    snprintf(s->args[s->argc++], sizeof s->args[0], fmt, value);
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
    char *argv[MAX_ARGS + 2];
    argv[0] = path;
    for (int i = 0; i < s->argc; i++)
        argv[i + 1] = s->args[i];
    argv[s->argc + 1] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return s->exit_code = 1;
    if (pid == 0) {
        execv(path, argv);
        fprintf(stderr, "ltbench suite: cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return s->exit_code;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the report ---- */

typedef struct report {
    FILE *f;
    const suite_options *o;
} report;

static lt_status read_csv(lt_csv_table *t, const char *dir, const char *name, int *found)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    *found = exists(path);
    memset(t, 0, sizeof *t);
    return *found ? lt_csv_read(t, path) : LT_OK;
}

static const char *cell(const lt_csv_table *t, long long r, const char *column)
{
    int c = lt_csv_table_column(t, column);
    return c >= 0 ? lt_csv_table_cell(t, r, c) : "";
}

static double num(const lt_csv_table *t, long long r, const char *column)
{
    const char *s = cell(t, r, column);
    return *s ? strtod(s, NULL) : NAN;
}

/* A number for a table cell: "-" when not a number. */
static const char *fmt(char *buf, size_t size, const char *format, double x)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else if (snprintf(buf, size, format, x) >= (int)size)
        snprintf(buf, size, "(wide)");
    return buf;
}

/* OUT/figures as the report sees it: relative when the report lies in OUT
 * or above it, absolute otherwise. */
static void figures_link(const suite_options *o, char *buf, size_t size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", o->report);
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

static void figure(report *r, const char *name, const char *caption)
{
    char path[4400], link[4200];
    snprintf(path, sizeof path, "%s/figures/%s.png", r->o->out, name);
    figures_link(r->o, link, sizeof link);
    if (exists(path))
        fprintf(r->f, "\n![%s](%s/%s.png)\n", caption, link, name);
}

static void machine_section(report *r, const lt_csv_table *t)
{
    fprintf(r->f, "## Machine and build\n\n");
    if (t == NULL || t->nrows == 0) {
        fprintf(r->f, "No result CSV to read the provenance from.\n");
        return;
    }
    const char *fields[][2] = {{"CPU", "cpu_model"},       {"cores", "cores"},
                               {"threads", "threads"},     {"MPI ranks", "ranks"},
                               {"BLAS", "blas"},           {"build", "build"},
                               {"OpenMP wait policy", "omp_wait_policy"},
                               {"ltbench", "ltbench_version"}, {"git revision", "git_revision"},
                               {"date", "date"},           {"load average at start", "load_start"}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        fprintf(r->f, "- %s: %s\n", fields[i][0], cell(t, 0, fields[i][1]));
}

static void copy_section(report *r, const lt_csv_table *t)
{
    fprintf(r->f, "\n## Copy task (the paper's Figure 2)\n\n");
    fprintf(r->f, "| variant | kernel | N | updates | s/update | tokens/s | peak MiB | loss "
                  "start -> end | copy accuracy | held-out accuracy |\n|---|---|---:|---:|---:|"
                  "---:|---:|---|---:|---:|\n");
    for (long long i = 0; i < t->nrows; i++) {
        char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
        if (strcmp(cell(t, i, "status"), "ok") != 0) {
            fprintf(r->f, "| %s | - | %s | - | - | - | - | %s | - | - |\n", cell(t, i, "variant"),
                    cell(t, i, "N"), cell(t, i, "status"));
            continue;
        }
        fprintf(r->f, "| %s | %s | %s | %s | %s | %s | %s | %s -> %s | %s | %s |\n",
                cell(t, i, "variant"), cell(t, i, "kernel"), cell(t, i, "N"),
                cell(t, i, "last_step"), fmt(a, sizeof a, "%.4f", num(t, i, "step_median_s")),
                fmt(b, sizeof b, "%.0f", num(t, i, "tokens_per_s")),
                fmt(c, sizeof c, "%.1f", num(t, i, "peak_bytes") / 1048576.0),
                fmt(d, sizeof d, "%.3f", num(t, i, "loss_start")),
                fmt(e, sizeof e, "%.3f", num(t, i, "loss_end")),
                fmt(f, sizeof f, "%.3f", num(t, i, "copy_accuracy_end")),
                fmt(g, sizeof g, "%.3f", num(t, i, "eval_copy_accuracy")));
    }
    fprintf(r->f, "\nThe paper (words only): linear attention converges smoothly to the same "
                  "loss as softmax; chance accuracy is 0.1.\n");
    figure(r, "copy-curves", "copy task loss against update and seconds");
}

static void scaling_section(report *r, const lt_csv_table *t)
{
    fprintf(r->f, "\n## Scaling (the paper's Figure 1)\n\nForward+backward per sample "
                  "(median) and peak memory per sample, default kernels:\n\n"
                  "| variant | causal | N | kernel | ms per sample | MiB per sample | GFLOP/s | "
                  "status |\n|---|---|---:|---|---:|---:|---:|---|\n");
    for (long long i = 0; i < t->nrows; i++) {
        char a[32], b[32], c[32];
        fprintf(r->f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(t, i, "variant"),
                strcmp(cell(t, i, "causal"), "1") == 0 ? "yes" : "no", cell(t, i, "N"),
                cell(t, i, "kernel"), fmt(a, sizeof a, "%.3f", 1e3 * num(t, i, "fwd_bwd_per_sample_s")),
                fmt(b, sizeof b, "%.2f", num(t, i, "peak_bytes_per_sample") / 1048576.0),
                fmt(c, sizeof c, "%.1f", num(t, i, "fwd_bwd_gflop_per_s")),
                cell(t, i, "status"));
    }
    fprintf(r->f, "\nThe paper: linear attention is faster and needs less memory for every N; "
                  "its time and memory grow linearly with N, softmax's quadratically (softmax "
                  "ran out of its 11 GB GPU above N = 4096).\n");
    figure(r, "scaling", "time and memory per sample against N");
}

static void paper_rows(report *r, const char *file, int per)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", r->o->paper, file);
    lt_csv_table t;
    if (!exists(path) || lt_csv_read(&t, path) != LT_OK) {
        fprintf(r->f, "\n(the paper's numbers, %s, could not be read)\n", path);
        return;
    }
    fprintf(r->f, "\nThe paper (%s; images/s on the authors' GPU):\n\n", cell(&t, 0, "table"));
    if (per)
        fprintf(r->f, "| model | PER %% | seconds/epoch |\n|---|---:|---:|\n");
    else
        fprintf(r->f, "| method | bits/dim | images/s | speed-up |\n|---|---:|---:|---:|\n");
    for (long long i = 0; i < t.nrows; i++)
        if (per)
            fprintf(r->f, "| %s | %s | %s |\n", cell(&t, i, "method"), cell(&t, i, "per_percent"),
                    cell(&t, i, "seconds_per_epoch"));
        else
            fprintf(r->f, "| %s (%s) | %s | %s | %s |\n", cell(&t, i, "method"),
                    cell(&t, i, "table"), *cell(&t, i, "bits_per_dim") ? cell(&t, i, "bits_per_dim") : "-",
                    cell(&t, i, "images_per_s"),
                    *cell(&t, i, "speedup") ? cell(&t, i, "speedup") : "-");
    lt_csv_table_free(&t);
}

static void image_section(report *r, const lt_csv_table *t, const char *dataset,
                          const char *paper_file, const char *figure_name)
{
    fprintf(r->f, "\n## Image generation: %s (the paper's Table %s)\n\n", dataset,
            strcmp(dataset, "mnist") == 0 ? "1" : "2");
    if (t->nrows > 0)
        fprintf(r->f, "Data: %s, %s training and %s test images; preset %s; %s.\n\n",
                cell(t, 0, "data"), cell(t, 0, "train_images"), cell(t, 0, "test_images"),
                cell(t, 0, "preset"),
                strcmp(cell(t, 0, "trained"), "1") == 0 ? "trained" : "untrained weights "
                                                                     "(generation speed only)");
    fprintf(r->f, "| variant | mode | batch | bits/dim | images | images/s | s/image | linear "
                  "speed-up | generation MiB/image |\n|---|---|---:|---:|---:|---:|---:|---:|"
                  "---:|\n");
    for (long long i = 0; i < t->nrows; i++) {
        char a[32], b[32], c[32], d[32], e[32];
        fprintf(r->f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(t, i, "variant"),
                cell(t, i, "gen_mode"), cell(t, i, "gen_batch"),
                fmt(a, sizeof a, "%.3f", num(t, i, "test_bits_per_dim")),
                cell(t, i, "images_generated"), fmt(b, sizeof b, "%.4g", num(t, i, "images_per_s")),
                fmt(c, sizeof c, "%.4g", num(t, i, "seconds_per_image")),
                fmt(d, sizeof d, "%.3g", num(t, i, "linear_speedup")),
                fmt(e, sizeof e, "%.2f", num(t, i, "peak_gen_bytes_per_image") / 1048576.0));
    }
    paper_rows(r, paper_file, 0);
    figure(r, figure_name, "bits/dim and images/s per variant and mode");
}

static void speech_section(report *r, const lt_csv_table *t)
{
    fprintf(r->f, "\n## Speech recognition (the paper's Table 3)\n\n");
    if (t->nrows > 0)
        fprintf(r->f, "Corpus: %s hours of WSJ-style synthetic speech (%s training, %s test "
                      "utterances); always answering the most frequent phone gives a PER of "
                      "%.1f%%.\n\n",
                cell(t, 0, "hours"), cell(t, 0, "train_utterances"), cell(t, 0, "test_utterances"),
                100 * num(t, 0, "baseline_per"));
    fprintf(r->f, "| model | kernel | layers | epochs | test PER %% | dev PER %% | s/epoch | peak "
                  "MiB |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (long long i = 0; i < t->nrows; i++) {
        char a[32], b[32], c[32], d[32];
        fprintf(r->f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(t, i, "model"),
                cell(t, i, "kernel"), cell(t, i, "layers"), cell(t, i, "epochs"),
                fmt(a, sizeof a, "%.2f", 100 * num(t, i, "test_per")),
                fmt(b, sizeof b, "%.2f", 100 * num(t, i, "dev_per")),
                fmt(c, sizeof c, "%.2f", num(t, i, "seconds_per_epoch")),
                fmt(d, sizeof d, "%.1f", num(t, i, "peak_bytes") / 1048576.0));
    }
    paper_rows(r, "table3-wsj.csv", 1);
    figure(r, "speech", "dev PER against epoch and seconds");
}

static lt_status write_report(const suite_options *o, const suite_step *steps, int count)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, o->report));
    report r = {af.f, o};
    fprintf(r.f, "# ltbench report\n\nWritten by `ltbench suite --preset %s`; every number "
                 "below was measured on the machine named here, from the CSVs in `%s`. The "
                 "paper's numbers come from `%s`.\n\n",
            o->preset, o->out, o->paper);
    fprintf(r.f, "%s:\n\n```\n", o->report_only ? "The commands that wrote the CSVs (this "
                                                  "report was rewritten from them)"
                                                : "Commands run");
    for (int i = 0; i < count; i++) {
        char line[8192];
        command_line(&steps[i], line, sizeof line);
        fprintf(r.f, "%s%s\n", line,
                o->report_only          ? ""
                : steps[i].exit_code < 0 ? "    # not run"
                : steps[i].exit_code     ? "    # failed"
                                         : "");
    }
    fprintf(r.f, "```\n\n");
    for (int i = 0; i < count; i++)
        if (steps[i].note[0])
            fprintf(r.f, "- %s: %s\n", steps[i].name, steps[i].note);
    lt_csv_table t;
    int found, described = 0;
    const char *first_csvs[][2] = {{"copy", "summary.csv"}, {"scaling", "scaling.csv"},
                                   {"image", "mnist.csv"}, {"speech", "speech.csv"}};
    for (size_t i = 0; i < 4 && !described; i++) {
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/%s", o->out, first_csvs[i][0]);
        if (read_csv(&t, dir, first_csvs[i][1], &found) == LT_OK && found) {
            machine_section(&r, &t);
            lt_csv_table_free(&t);
            described = 1;
        }
    }
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/copy", o->out);
    if (read_csv(&t, dir, "summary.csv", &found) == LT_OK && found) {
        copy_section(&r, &t);
        lt_csv_table_free(&t);
    }
    snprintf(dir, sizeof dir, "%s/scaling", o->out);
    if (read_csv(&t, dir, "scaling.csv", &found) == LT_OK && found) {
        scaling_section(&r, &t);
        lt_csv_table_free(&t);
    }
    snprintf(dir, sizeof dir, "%s/image", o->out);
    int mnist = 0;
    if (read_csv(&t, dir, "mnist.csv", &mnist) == LT_OK && mnist) {
        image_section(&r, &t, "mnist", "table1-mnist.csv", "image");
        lt_csv_table_free(&t);
    }
    /* `ltbench plot` names the second image figure of a run image-2 */
    if (read_csv(&t, dir, "cifar10.csv", &found) == LT_OK && found) {
        image_section(&r, &t, "cifar10", "table2-cifar10.csv", mnist ? "image-2" : "image");
        lt_csv_table_free(&t);
    }
    snprintf(dir, sizeof dir, "%s/speech", o->out);
    if (read_csv(&t, dir, "speech.csv", &found) == LT_OK && found) {
        speech_section(&r, &t);
        lt_csv_table_free(&t);
    }
    return lt_atomic_commit(&af);
}

/* ---- the runs ---- */

static int wanted(const suite_options *o, const char *name)
{
    char list[256];
    snprintf(list, sizeof list, ",%s,", o->experiments);
    char item[64];
    snprintf(item, sizeof item, ",%s,", name);
    return strstr(list, item) != NULL;
}

/* Every --experiments item is an experiment the suite knows, named once. */
static lt_status check_experiments(const char *text)
{
    static const char *const known[] = {"copy", "scaling", "image", "speech"};
    enum { KNOWN = sizeof known / sizeof known[0] };
    char copy[256];
    if (strlen(text) >= sizeof copy)
        return lt_fail(LT_E_USAGE, "--experiments: too long, expected items from copy, "
                                   "scaling, image, speech");
    strcpy(copy, text);
    const char *items[KNOWN];
    int count;
    LT_TRY(lt_cli_split_list(copy, items, KNOWN, &count, "--experiments"));
    for (int i = 0; i < count; i++) {
        int found = 0;
        for (int k = 0; k < KNOWN; k++)
            found |= strcmp(items[i], known[k]) == 0;
        if (!found)
            return lt_fail(LT_E_USAGE,
                           "--experiments: expected items from copy, scaling, image, speech, "
                           "got '%s'",
                           items[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(items[i], items[j]) == 0)
                return lt_fail(LT_E_USAGE, "--experiments: '%s' is listed twice", items[i]);
    }
    return LT_OK;
}

/* The steps of a preset: program, arguments, and why one is left out. */
static int plan_steps(const suite_options *o, suite_step *steps)
{
    int n = 0, quick = strcmp(o->preset, "quick") == 0, paper = strcmp(o->preset, "paper") == 0;
    char threads[32];
    snprintf(threads, sizeof threads, "%ld", o->common.threads);
    suite_step *s;
#define STEP(program)                                                     \
    do {                                                                  \
        s = &steps[n++];                                                  \
        memset(s, 0, sizeof *s);                                          \
        s->name = (program);                                              \
        s->exit_code = -1;                                                \
    } while (0)
    if (wanted(o, "copy")) {
        STEP("copy");
        add_arg(s, "--preset=%s", o->preset);
        add_arg(s, "--out=%s/copy", o->out);
    }
    if (wanted(o, "scaling")) {
        STEP("scaling");
        add_arg(s, "--out=%s/scaling/scaling.csv", o->out);
        if (quick) {
            add_arg(s, "%s", "--min-log2=6");
            add_arg(s, "%s", "--max-log2=10");
            add_arg(s, "%s", "--repeats=2");
        } else if (!paper) {
            add_arg(s, "%s", "--max-log2=14");
        }
    }
    if (wanted(o, "image")) {
        const char *datasets[2] = {"mnist", "cifar10"};
        for (int d = 0; d < 2; d++) {
            STEP("image");
            add_arg(s, "--dataset=%s", datasets[d]);
            add_arg(s, "--preset=%s", o->preset);
            add_arg(s, "--out=%s/image", o->out);
            /* recomputing 3072-byte images takes minutes even for tiny models */
            if (d == 1 && quick)
                add_arg(s, "%s", "--gen-modes=fast");
            const char *need = d == 0 ? "data/mnist" : "data/cifar10";
            if (d == 1 && !exists(need) && exists("data/cifar10-catdog"))
                need = "data/cifar10-catdog";
            if (!exists(need))
                snprintf(s->note, sizeof s->note, "skipped: no %s (fetch it with %s)", need,
                         d == 0 ? "data/fetch-mnist.sh" : "data/fetch-cifar10-catdog.sh");
        }
    }
    if (wanted(o, "speech")) {
        STEP("speech");
        add_arg(s, "--preset=%s", o->preset);
        add_arg(s, "--out=%s/speech", o->out);
    }
    for (int i = 0; i < n; i++) {
        add_arg(&steps[i], "--threads=%s", threads);
        add_arg(&steps[i], "%s", "--quiet");
        if (strcmp(steps[i].name, "scaling") != 0)
            add_arg(&steps[i], "%s", "--overwrite");
    }
#undef STEP
    return n;
}

int main(int argc, char **argv)
{
    suite_options o = {.preset = "quick", .out = NULL, .report = NULL,
                       .experiments = "copy,scaling,image,speech", .paper = "data/paper"};
    bench_common_defaults(&o.common);
    enum { OWN_FLAGS = 6 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--preset", LT_FLAG_CHOICE, &o.preset, NULL,
         "preset of every experiment (quick: minutes in all; small: about an hour; paper: "
         "days)", 0, 0, "quick|small|paper", 0},
        {"--out", LT_FLAG_STRING, &o.out, "DIR",
         "folder for every experiment's results, figures/ and REPORT.md (default "
         "results/suite-PRESET)", 0, 0, NULL, 0},
        {"--report", LT_FLAG_STRING, &o.report, "PATH", "the report (default OUT/REPORT.md)", 0,
         0, NULL, 0},
        {"--experiments", LT_FLAG_STRING, &o.experiments, "LIST",
         "which to run: copy, scaling, image, speech", 0, 0, NULL, 0},
        {"--paper", LT_FLAG_STRING, &o.paper, "DIR", "the paper's numbers as CSV", 0, 0, NULL,
         0},
        {"--report-only", LT_FLAG_BOOL, &o.report_only, NULL,
         "run nothing: draw the figures and write the report from the CSVs already in OUT", 0,
         0, NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &o.common);
    lt_cli cli = {"ltbench suite",
                  "Run every experiment at one preset, draw every figure and write a report "
                  "beside the paper's tables.",
                  "Runs copy, scaling, image (MNIST, and CIFAR-10 or the converted cats-and-dogs\n"
                  "subset, when the data are there; otherwise the report says how to fetch them)\n"
                  "and speech into OUT/<experiment>/, then `ltbench plot` into OUT/figures/, then\n"
                  "the Markdown report. An experiment that fails is reported and the others go on;\n"
                  "the exit status is then 1. `ltbench suite --preset small --out results/reference\n"
                  "--report results/REPORT.md` regenerates the repository's reference report.",
                  flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    int exit_now;
    int code = bench_parse(&cli, &o.common, argc, argv, &exit_now);
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
    lt_status status = check_experiments(o.experiments);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    /* the report's folder must be writable before hours of work */
    lt_atomic_file probe;
    status = lt_make_dirs(o.out);
    if (status == LT_OK)
        status = lt_atomic_open(&probe, o.report);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    lt_atomic_abort(&probe);

    static suite_step steps[MAX_STEPS];
    int count = plan_steps(&o, steps), failed = 0;
    bench_signals_install();
    for (int i = 0; i < count && !o.report_only && !bench_interrupted(); i++) {
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
    /* every CSV the runs left, drawn */
    suite_step plot = {.name = "plot", .exit_code = -1};
    const char *csvs[] = {"copy/curves.csv", "scaling/scaling.csv", "image/mnist.csv",
                          "image/cifar10.csv", "speech/speech-curves.csv"};
    for (size_t i = 0; i < sizeof csvs / sizeof csvs[0]; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o.out, csvs[i]);
        if (exists(path))
            add_arg(&plot, "%s", path);
    }
    add_arg(&plot, "--out=%s/figures", o.out);
    if (plot.argc > 1 && run_step(&plot) != 0)
        failed = 1;
    status = write_report(&o, steps, count);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    printf("wrote %s and the figures in %s/figures\n", o.report, o.out);
    if (bench_interrupted())
        return bench_interrupt_exit_code();
    return failed;
}
