/* End-to-end tests: the programs run as a user runs them, through the
 * ltbench dispatcher in the build folder (program.h). They check exit
 * statuses, messages, what is written and what is not. */
#include <criterion/criterion.h>

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attn/attn.h"
#include "check.h"
#include "core/rng.h"
#include "io/checkpoint.h"
#include "experiment/flags.h"
#include "io/csv.h"
#include "io/md5.h"
#include "io/npy.h"
#include "io/png.h"
#include "results/crossover.h"
#include "core/mem.h"
#include "kernel_sets.h"
#include "program.h"
#include "results/file.h"
#include "registry.h"

Test(dispatcher, lists_versions_and_refuses_unknown)
{
    cr_assert_eq(ltbench(""), 0);
    ASSERT_MENTIONS("copy");
    ASSERT_MENTIONS("scaling");
    ASSERT_MENTIONS("image");
    cr_assert_eq(ltbench("--version"), 0);
    ASSERT_MENTIONS("ltbench 0.");
    ASSERT_MENTIONS("git");
    cr_assert_eq(ltbench("nosuch"), 2);
    ASSERT_MENTIONS("unknown experiment or tool 'nosuch'");
    cr_assert_eq(ltbench(""), 0);
    const char *listed[] = {"speech", "attention", "plot", "compare", "suite"};
    for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++)
        ASSERT_MENTIONS(listed[i]);
    cr_assert(strstr(output, "not yet available") == NULL, "every program is built:\n%s",
              output);
}

/* Every program answers --version with one line; a typo in a program's
 * or a flag's name is answered with the name meant, a word far from every
 * name with none. */
Test(dispatcher, every_program_has_version_and_typos_get_suggestions)
{
    /* every program of the registry is built, listed and answers */
    for (int i = 0; i < bench_registry_count; i++) {
        const char *name = bench_registry[i]->name;
        cr_assert_eq(ltbench(""), 0);
        char listed[160], args[64], want[96];
        snprintf(listed, sizeof listed, "\n  %-10s %s\n", name, bench_registry[i]->summary);
        ASSERT_MENTIONS(listed);
        snprintf(args, sizeof args, "%s --version", name);
        cr_assert_eq(ltbench(args), 0, "%s: %s", args, output);
        snprintf(want, sizeof want, "ltbench %s: ltbench 0.", name);
        cr_assert_eq(strncmp(output, want, strlen(want)), 0, "%s", output);
        cr_assert_eq(strchr(output, '\n'), output + strlen(output) - 1, "one line: %s", output);
    }
    cr_assert_eq(ltbench("coppy"), 2);
    ASSERT_MENTIONS("unknown experiment or tool 'coppy' (did you mean 'copy'?)");
    cr_assert_eq(ltbench("copy --stepz 5"), 2);
    ASSERT_MENTIONS("unknown flag '--stepz' (did you mean --steps?)");
    cr_assert_eq(ltbench("copy --variant softmax"), 2);
    ASSERT_MENTIONS("(did you mean --variants?)");
    cr_assert_eq(ltbench("compare --jsn x a.csv b.csv"), 2);
    ASSERT_MENTIONS("(did you mean --json?)");
    cr_assert_eq(ltbench("copy --zzzzzz"), 2);
    cr_assert(strstr(output, "did you mean") == NULL, "%s", output);
    cr_assert_eq(ltbench("xyzzy"), 2);
    cr_assert(strstr(output, "did you mean") == NULL, "%s", output);
}

/* The kernel sets: --version names the one in use, --kernel-sets lists the
 * usable ones (it among them; the best first, which is it unless
 * LTBENCH_KERNELS chose), LTBENCH_KERNELS picks one and a set the build
 * lacks or that names none is refused (exit 2, naming the variable). */
Test(dispatcher, kernel_sets_listed_chosen_and_refused)
{
    cr_assert_eq(ltbench("--version"), 0);
    char active[64];
    const char *at = strstr(output, "kernel set: ");
    cr_assert_not_null(at, "%s", output);
    cr_assert_eq(sscanf(at, "kernel set: %63[a-z0-9]", active), 1, "%s", output);
    cr_assert_eq(ltbench("--kernel-sets"), 0);
    char line[80];
    snprintf(line, sizeof line, "%s\n", active);
    const char *chosen = getenv("LTBENCH_KERNELS");
    if (chosen == NULL || *chosen == '\0')
        cr_assert_eq(strncmp(output, line, strlen(line)), 0, "%s first in:\n%s", active, output);
    else
        ASSERT_MENTIONS(line);
    char sets[256];
    snprintf(sets, sizeof sets, "%.200s", output);
    for (char *name = strtok(sets, "\n"); name != NULL; name = strtok(NULL, "\n")) {
        char env[96];
        snprintf(env, sizeof env, "LTBENCH_KERNELS=%s", name);
        cr_assert_eq(ltbench_env(env, "--version"), 0);
        char want[96];
        snprintf(want, sizeof want, "kernel set: %s ", name);
        ASSERT_MENTIONS(want);
    }
    cr_assert_eq(ltbench_env("LTBENCH_KERNELS=avx9", "copy --preset quick --steps 1"), 2);
    ASSERT_MENTIONS("LTBENCH_KERNELS=avx9: no such kernel set");
    ASSERT_MENTIONS(active);
    /* a set that is not usable here: the build lacks it or the CPU cannot run it */
    const char *candidates[] = {"neon", "generic", "sse2", "avx2", "avx512"};
    const char *lacking = NULL;
    cr_assert_eq(ltbench("--kernel-sets"), 0);
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && lacking == NULL; i++) {
        snprintf(line, sizeof line, "%s\n", candidates[i]);
        if (strstr(output, line) == NULL)
            lacking = candidates[i];
    }
    cr_assert_not_null(lacking, "every set usable:\n%s", output);
    char env[64];
    snprintf(env, sizeof env, "LTBENCH_KERNELS=%s", lacking);
    cr_assert_eq(ltbench_env(env, "copy --preset quick --steps 1"), 2);
    cr_assert(strstr(output, "this build does not have it") != NULL ||
                  strstr(output, "this CPU cannot run it") != NULL,
              "%s", output);
}

Test(copy, help_documents_flags_and_bad_flags_exit_2)
{
    cr_assert_eq(ltbench("copy --help"), 0);
    const char *flags[] = {"--preset", "--seq", "--variants", "--steps", "--batch", "--layers",
                           "--heads", "--head-dim", "--ffn", "--lr", "--seed", "--threads",
                           "--mem-budget", "--out", "--resume", "default:"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ASSERT_MENTIONS(flags[i]);
    struct { const char *args, *mention; } bad[] = {
        {"copy --bogus", "unknown flag '--bogus'"},
        {"copy --seq 4", "--seq"},
        {"copy --seq abc", "--seq"},
        {"copy --dropout 1", "--dropout"},
        {"copy --variants softmax,reformer", "reformer"},
        {"copy --lr-drops 100", "--lr-drops"},
        {"copy --preset huge", "quick|small|medium|paper"},
        {"copy --threads -1", "--threads"},
        {"copy --mem-budget 12Q", "--mem-budget"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(ltbench(bad[i].args), 2, "%s:\n%s", bad[i].args, output);
        ASSERT_MENTIONS(bad[i].mention);
    }
}

/* Column `name` of row `row` as a number. */
static double cell_num(const lt_csv_table *t, long long row, const char *name)
{
    int col = lt_csv_table_column(t, name);
    cr_assert_geq(col, 0, "column %s", name);
    return strtod(lt_csv_table_cell(t, row, col), NULL);
}

static const char *cell_str(const lt_csv_table *t, long long row, const char *name)
{
    int col = lt_csv_table_column(t, name);
    cr_assert_geq(col, 0, "column %s", name);
    return lt_csv_table_cell(t, row, col);
}

Test(copy, quick_preset_learns_and_writes_results, .timeout = 300)
{
    char dir[64], args[256], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "copy --preset quick --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    /* the table fits 100 columns; a refusal says why under it */
    ASSERT_MENTIONS("linformer none");
    ASSERT_MENTIONS("not-applicable (note 1)");
    ASSERT_MENTIONS("note 1: linformer not-applicable: linformer attention cannot be causal");
    for (const char *line = output; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        cr_assert_leq(len, 100, "a line of %zu columns: %.*s", len, (int)len, line);
        line += len + (line[len] == '\n');
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 5, "softmax, linear, lsh-1, lsh-4, linformer");
    for (int r = 0; r < 4; r++) {
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok");
        double start = cell_num(&t, r, "loss_start"), end = cell_num(&t, r, "loss_end");
        cr_assert_lt(end, start - 0.5, "%s: loss %f -> %f", cell_str(&t, r, "variant"), start,
                     end);
        cr_assert_gt(cell_num(&t, r, "eval_copy_accuracy"), 0.2, "%s: above chance (0.1)",
                     cell_str(&t, r, "variant"));
        cr_assert_gt(cell_num(&t, r, "peak_bytes"), 0);
        cr_assert_gt(cell_num(&t, r, "threads"), 0);
    }
    /* the kernel that ran, by name: the causal defaults */
    cr_assert_str_eq(cell_str(&t, 0, "kernel"), "softmax-gemm");
    cr_assert_str_eq(cell_str(&t, 1, "kernel"), "linear-causal-chunked");
    cr_assert_str_eq(cell_str(&t, 2, "variant"), "lsh-1", "LSH rows named as the paper's");
    cr_assert_str_eq(cell_str(&t, 3, "variant"), "lsh-4");
    cr_assert_str_eq(cell_str(&t, 3, "kernel"), "lsh-chunked");
    cr_assert(strstr(cell_str(&t, 3, "config"), "rounds=4") != NULL);
    cr_assert_str_eq(cell_str(&t, 4, "kernel"), "none");
    cr_assert_str_eq(cell_str(&t, 4, "status"), "not-applicable");
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/curves.csv", dir);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 4 * 1000, "one row per update and variant");
    lt_csv_table_free(&t);
}

/* Runs `copy FLAGS --quiet --out DIR` in a new temporary folder and reads
 * its summary.csv into *t. */
static void copy_summary(const char *flags, lt_csv_table *t)
{
    char dir[64], args[384], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "copy %s --quiet --out %s", flags, dir);
    cr_assert_eq(ltbench(args), 0, "%s\n%s", args, output);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    cr_assert_eq(lt_csv_read(t, path), LT_OK, "%s", lt_last_error());
}

/* Row r of a copy summary learned: its loss fell by more than 0.5 nats and
 * its held-out accuracy is above 0.2 (chance is 0.1). */
static void expect_learned(const lt_csv_table *t, long long r, const char *what)
{
    cr_assert_str_eq(cell_str(t, r, "status"), "ok", "%s", what);
    double start = cell_num(t, r, "loss_start"), end = cell_num(t, r, "loss_end");
    cr_expect_gt(start - end, 0.5, "%s: loss %f -> %f", what, start, end);
    cr_expect_gt(cell_num(t, r, "eval_copy_accuracy"), 0.2, "%s: above chance (0.1)", what);
}

/* The medium preset sets its sizes (the paper's head width) in every
 * program that has presets; a flag given still overrides it. Each of them
 * lists the attention variants it takes in its --help. */
Test(copy, medium_preset_sets_its_sizes_and_flags_override_them, .timeout = 300)
{
    lt_csv_table t;
    copy_summary("--preset medium --steps 2 --eval-batches 1 --variants linear", &t);
    cr_assert_str_eq(cell_str(&t, 0, "preset"), "medium");
    cr_assert_eq(cell_num(&t, 0, "head_dim"), 32);
    cr_assert_eq(cell_num(&t, 0, "ffn"), 512);
    cr_assert_eq(cell_num(&t, 0, "heads"), 4);
    cr_assert_eq(cell_num(&t, 0, "last_step"), 2, "--steps overrides the preset's 10000");
    lt_csv_table_free(&t);
    const char *programs[] = {"copy", "image", "speech"};
    for (int i = 0; i < 3; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", programs[i]);
        cr_assert_eq(ltbench(args), 0);
        ASSERT_MENTIONS("quick|small|medium|paper");
        ASSERT_MENTIONS("medium: ");
        ASSERT_MENTIONS("|delta|gated-delta|gla");
    }
    cr_assert_eq(ltbench("suite --help"), 0);
    ASSERT_MENTIONS("quick|small|medium|paper");
}

/* Beyond the paper: linear attention with the FAVOR+ and Taylor feature
 * maps, and decayed linear attention, each learn the copy task at the quick
 * preset as elu+1 does. */
Test(copy, new_feature_maps_and_decay_learn, .timeout = 300)
{
    const char *runs[][2] = {{"linear", "favor"}, {"linear", "taylor"}, {"decay", "elu"}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char flags[128];
        snprintf(flags, sizeof flags, "--preset quick --variants %s --feature-map %s",
                 runs[i][0], runs[i][1]);
        lt_csv_table t;
        copy_summary(flags, &t);
        cr_assert_eq(t.nrows, 1);
        char variant[64], map[64];
        snprintf(variant, sizeof variant, " variant=%s ", runs[i][0]);
        snprintf(map, sizeof map, " feature_map=%s ", runs[i][1]);
        const char *config = cell_str(&t, 0, "config");
        cr_assert(strstr(config, variant) && strstr(config, map), "%s: config %s", flags, config);
        expect_learned(&t, 0, flags);
        lt_csv_table_free(&t);
    }
}

/* The gated recurrences (DeltaNet, Gated DeltaNet, GLA), whose gates the
 * model projects from each layer's input, learn the copy task at the
 * quick preset's sizes in 400 updates (seen: losses falling by 1.1 to 1.4
 * nats, held-out accuracy 0.51 to 0.61). */
Test(copy, gated_variants_learn, .timeout = 300)
{
    lt_csv_table t;
    copy_summary("--preset quick --steps 400 --variants delta,gated-delta,gla", &t);
    cr_assert_eq(t.nrows, 3);
    for (long long r = 0; r < t.nrows; r++)
        expect_learned(&t, r, cell_str(&t, r, "variant"));
    lt_csv_table_free(&t);
}

/* Cells of `columns` in every row of DIR_A/name and DIR_B/name, compared
 * as written (full precision, so equal text is equal bits). */
static void expect_same_cells(const char *dir_a, const char *dir_b, const char *name,
                              const char *const *columns, size_t count, const char *what)
{
    char path[2][256];
    lt_csv_table t[2];
    snprintf(path[0], sizeof path[0], "%s/%s", dir_a, name);
    snprintf(path[1], sizeof path[1], "%s/%s", dir_b, name);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(lt_csv_read(&t[i], path[i]), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t[0].nrows, t[1].nrows, "%s: %s rows", what, name);
    cr_assert_gt(t[0].nrows, 0);
    for (long long r = 0; r < t[0].nrows; r++)
        for (size_t c = 0; c < count; c++)
            cr_expect_str_eq(cell_str(&t[0], r, columns[c]), cell_str(&t[1], r, columns[c]),
                             "%s: %s row %lld, %s differs between 1 and 2 threads", what, name,
                             r, columns[c]);
    for (int i = 0; i < 2; i++)
        lt_csv_table_free(&t[i]);
}

/* The exact columns (losses, accuracies: what compare holds bit for bit)
 * of copy on 1 and 2 threads, under the kernels OpenBLAS picks for this
 * CPU and under each kernel set it can run. */
Test(copy, same_exact_results_for_one_and_two_threads, .timeout = 300)
{
    static const char *const curves[] = {"loss", "copy_accuracy", "grad_norm", "lr"};
    static const char *const summary[] = {"status",    "loss_start", "loss_end",
                                          "copy_accuracy_end", "eval_loss",
                                          "eval_copy_accuracy", "params"};
    static const char *const sets[] = {NULL, "Haswell", "Zen", "SkylakeX", "Cooperlake"};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        if (sets[s] != NULL && !kernel_set_runs_here(sets[s]))
            continue;
        char dirs[2][64], env[64], args[256], what[64];
        snprintf(env, sizeof env, sets[s] ? "OPENBLAS_CORETYPE=%s" : "", sets[s]);
        snprintf(what, sizeof what, "kernels %s", sets[s] ? sets[s] : "as picked");
        for (int t = 0; t < 2; t++) {
            make_temp_dir(dirs[t]);
            snprintf(args, sizeof args, "copy --preset quick --steps 40 --quiet --threads %d "
                     "--out %s", t + 1, dirs[t]);
            cr_assert_eq(ltbench_env(env, args), 0, "%s: %s", what, output);
        }
        expect_same_cells(dirs[0], dirs[1], "curves.csv", curves, 4, what);
        expect_same_cells(dirs[0], dirs[1], "summary.csv", summary, 7, what);
        for (int t = 0; t < 2; t++)
            check_remove_tree(dirs[t]);
    }
}

/* ---- runs that never lose results (each finding of the robustness audit) ---- */

/* Rows of a CSV, -1 if it cannot be read. */
static long long csv_rows(const char *path)
{
    lt_csv_table t;
    if (lt_csv_read(&t, path) != LT_OK)
        return -1;
    long long n = t.nrows;
    lt_csv_table_free(&t);
    return n;
}

static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

#define QUICK_LINEAR "copy --preset quick --variants linear --quiet"

Test(robust, resume_continues_and_a_finished_run_is_never_wiped, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 30 --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 40 --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(csv_rows(path), 40, "the resumed run continues the same curve");
    path_in(path, sizeof path, dir, "summary.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(cell_num(&t, 0, "first_step"), 30);
    cr_assert_eq(cell_num(&t, 0, "last_step"), 40);
    double loss_start = cell_num(&t, 0, "loss_start");
    lt_csv_table_free(&t);

    /* Finding 1: resuming a finished run with fewer --steps keeps it whole. */
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 10 --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("already trained");
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(csv_rows(path), 40);
    path_in(path, sizeof path, dir, "summary.csv");
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "ok");
    cr_assert_eq(cell_num(&t, 0, "loss_start"), loss_start);
    cr_assert(isfinite(cell_num(&t, 0, "step_median_s")));
    lt_csv_table_free(&t);

    /* Resuming with another model is refused, naming the difference. */
    snprintf(args, sizeof args, QUICK_LINEAR " --ffn 32 --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("ffn=64");
    /* Finding 11: and with other threads, whose numbers differ. */
    snprintf(args, sizeof args, QUICK_LINEAR " --threads 1 --steps 50 --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("threads=");
    /* Finding 13: a fresh run does not overwrite the checkpoints. */
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 5 --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--resume");
    ASSERT_MENTIONS("--overwrite");
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 5 --overwrite --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(csv_rows(path), 5);
}

/* Starts `ltbench ARGS` in the background; returns its pid. */
static pid_t start_ltbench(const char *args)
{
    const char *build = getenv("LTBENCH_BUILD");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "exec '%s/ltbench' %s >/dev/null 2>&1", build, args);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits until `path` has at least `rows` data rows (a journal being
 * written); 0 if the process ended first. */
static int wait_for_rows(pid_t pid, const char *path, long long rows)
{
    for (int i = 0; i < 150000; i++) { /* 5 minutes: the machine may be busy */
        if (csv_rows(path) >= rows)
            return 1;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return 0;
        usleep(2000);
    }
    return 0;
}

static int wait_exit(pid_t pid)
{
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The loss column of a curves file, for comparing runs. */
static void losses_of(const char *path, double *out, long long n)
{
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, n, "%s has %lld rows", path, t.nrows);
    for (long long r = 0; r < n; r++)
        out[r] = cell_num(&t, r, "loss");
    lt_csv_table_free(&t);
}

/* Findings 3, 4 and 8: killed (-9) during the first of two variants, with a
 * torn last row in the journal and a stale temporary beside the checkpoints;
 * --resume ends with the same loss curve, update for update, as a run that
 * was never stopped. */
Test(robust, killed_run_resumes_to_the_uninterrupted_curve, .timeout = 600)
{
    enum { STEPS = 400 };
    char straight[64], killed[64], args[512], path[160], journal[200];
    make_temp_dir(straight);
    make_temp_dir(killed);
    const char *run = "copy --preset quick --variants softmax,linear --checkpoint-every 50 "
                      "--steps 400 --quiet --threads 2";
    snprintf(args, sizeof args, "%s --out %s", run, straight);
    cr_assert_eq(ltbench(args), 0, "%s", output);

    snprintf(args, sizeof args, "%s --out %s", run, killed);
    pid_t pid = start_ltbench(args);
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", killed);
    cr_assert(wait_for_rows(pid, journal, 120), "the run ended before it could be killed");
    kill(pid, SIGKILL);
    wait_exit(pid);
    path_in(path, sizeof path, killed, "curves.csv");
    cr_assert_eq(csv_rows(path), -1, "a killed run commits nothing");
    char stale[200];
    snprintf(stale, sizeof stale, "%s/checkpoints/copy-softmax.ckpt.tmp.AbC123", killed);
    fclose(fopen(stale, "w"));
    /* A kill can tear the row being written: its start reached the file,
     * its line break did not. */
    FILE *torn = fopen(journal, "a");
    cr_assert_not_null(torn);
    fputs("copy,softmax,softmax-gemm,32,1", torn);
    fclose(torn);

    snprintf(args, sizeof args, "%s --resume --out %s", run, killed);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(access(stale, F_OK), -1, "the stale temporary was removed");
    static double a[2 * STEPS], b[2 * STEPS];
    path_in(path, sizeof path, straight, "curves.csv");
    losses_of(path, a, 2 * STEPS);
    path_in(path, sizeof path, killed, "curves.csv");
    losses_of(path, b, 2 * STEPS);
    for (int i = 0; i < 2 * STEPS; i++)
        cr_assert_eq(a[i], b[i], "row %d: %.17g vs %.17g", i, a[i], b[i]);
    path_in(path, sizeof path, killed, "summary.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    path_in(path, sizeof path, straight, "summary.csv");
    lt_csv_table u;
    cr_assert_eq(lt_csv_read(&u, path), LT_OK);
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(cell_num(&t, r, "loss_start"), cell_num(&u, r, "loss_start"));
        cr_assert_eq(cell_num(&t, r, "eval_loss"), cell_num(&u, r, "eval_loss"));
    }
    lt_csv_table_free(&t);
    lt_csv_table_free(&u);
}

/* One writer per output folder: a second run into a folder another run is
 * writing is refused at once, naming it, and the first run's files stay
 * whole. */
Test(robust, a_second_writer_is_refused_while_the_first_runs, .timeout = 300)
{
    char dir[64], args[512], path[200], journal[220];
    make_temp_dir(dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 3000 --out %s", dir);
    pid_t pid = start_ltbench(args);
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", dir);
    cr_assert(wait_for_rows(pid, journal, 5), "the first run writes");
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 5 --overwrite --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("another ltbench run");
    ASSERT_MENTIONS(dir);
    cr_assert_eq(ltbench("scaling --min-log2 4 --max-log2 4 --quiet --out /proc/x"), 2);
    kill(pid, SIGTERM);
    cr_assert_eq(wait_exit(pid), 143);
    path_in(path, sizeof path, dir, "curves.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "the first run's file is whole: %s",
                 lt_last_error());
    lt_csv_table_free(&t);
    /* the lock goes with the run: the folder is free again */
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 5 --overwrite --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
}

/* A signal inherited as ignored (a background job of a non-interactive
 * shell) stays ignored for the whole run. */
Test(robust, an_inherited_ignored_sigint_stays_ignored, .timeout = 300)
{
    char dir[64], cmd[1024], journal[220];
    make_temp_dir(dir);
    const char *build = getenv("LTBENCH_BUILD");
    snprintf(cmd, sizeof cmd,
             "trap '' INT; exec '%s/ltbench' " QUICK_LINEAR " --steps 400 --out %s >/dev/null 2>&1",
             build, dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", dir);
    cr_assert(wait_for_rows(pid, journal, 5));
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0, "ran to the end");
    char path[200];
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(csv_rows(path), 400);
}

/* ---- a run interrupted during its second model, then resumed ---- */

/* Every deterministic cell of two result files equal, row for row: the
 * columns the file's schema declares as keys, setup or exact metrics (times,
 * rates, the machine's measured bandwidth, notes and provenance may differ
 * between two runs of the same numbers). */
static void assert_same_numbers(const char *a_path, const char *b_path)
{
    lt_results_file a, b;
    cr_assert_eq(lt_results_read(&a, a_path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_results_read(&b, b_path), LT_OK, "%s", lt_last_error());
    const lt_schema *schema, *tables[64];
    int count = bench_tables_of(bench_registry, bench_registry_count, tables, 64);
    cr_assert_eq(lt_results_recognise(&schema, &a, tables, count), LT_OK, "%s",
                 lt_last_error());
    cr_assert_eq(a.table.nrows, b.table.nrows, "%s has %lld rows, %s %lld", a_path,
                 a.table.nrows, b_path, b.table.nrows);
    int compared = 0;
    for (int k = 0; k < schema->ncols; k++) {
        const lt_column *column = &schema->columns[k];
        if (column->role != LT_COL_KEY && column->role != LT_COL_SETUP &&
            column->role != LT_COL_EXACT)
            continue;
        int ca = lt_results_column(&a, column->name), cb = lt_results_column(&b, column->name);
        cr_assert(ca >= 0 && cb >= 0, "column %s missing from %s or %s", column->name, a_path,
                  b_path);
        for (long long r = 0; r < a.table.nrows; r++)
            cr_assert_str_eq(lt_results_cell(&a, r, ca), lt_results_cell(&b, r, cb),
                             "%s row %lld column %s", b_path, r + 1, column->name);
        compared++;
    }
    cr_assert_gt(compared, 0, "%s: no deterministic column to compare", a_path);
    lt_results_free(&a);
    lt_results_free(&b);
}

/* Starts `cmd` and stops it with `signal` once `journal` holds `rows` rows. */
static void stop_at_rows(const char *cmd, const char *journal, long long rows, int signal)
{
    pid_t pid = start_ltbench(cmd);
    cr_assert(wait_for_rows(pid, journal, rows), "the run ended before it could be stopped");
    kill(pid, signal);
    cr_assert_eq(wait_exit(pid), 128 + signal, "stopped by signal %d", signal);
}

/* Runs `args` straight into one folder; into another it is stopped by
 * Ctrl-C once its curve journal holds `rows` rows (the second model
 * training), then resumed. Both end with the same rows, timings aside. */
static void check_resume_in_second_model(const char *args, const char *curves,
                                         const char *results, long long rows)
{
    char straight[64], stopped[64], cmd[1024], path[200], other[200], journal[220];
    make_temp_dir(straight);
    make_temp_dir(stopped);
    snprintf(cmd, sizeof cmd, "%s --out %s", args, straight);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    snprintf(cmd, sizeof cmd, "%s --out %s", args, stopped);
    snprintf(journal, sizeof journal, "%s/%s.partial", stopped, curves);
    stop_at_rows(cmd, journal, rows, SIGINT);
    snprintf(cmd, sizeof cmd, "%s --resume --out %s", args, stopped);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    const char *files[] = {curves, results};
    for (int i = 0; i < 2; i++) {
        path_in(path, sizeof path, straight, files[i]);
        path_in(other, sizeof other, stopped, files[i]);
        assert_same_numbers(path, other);
    }
}

Test(resume, copy_interrupted_in_its_second_variant, .timeout = 600)
{
    check_resume_in_second_model("copy --preset quick --variants softmax,linear --steps 400 "
                                 "--quiet --threads 2",
                                 "curves.csv", "summary.csv", 400 + 60);
}

/* A --resume run into a folder that a finished run left (linear and lsh-1
 * trained there), stopped by `signal` before it reaches linear, then
 * resumed again. Ctrl-C commits what the stopped run has, which must
 * include linear's and lsh-1's rows (it never reached the one, does not
 * list the other); a kill leaves its journal, which holds neither, so they
 * come from the finished files. The end holds every model's rows, as one
 * run of all three would (`straight`). */
static void check_stopped_resume_keeps_finished(const char *straight, int signal)
{
    const char *args = "copy --preset quick --steps 400 --quiet --threads 2";
    char dir[64], cmd[1024], path[200], other[200], journal[220];
    make_temp_dir(dir);
    snprintf(cmd, sizeof cmd, "%s --variants linear,lsh-1 --out %s", args, dir);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    snprintf(cmd, sizeof cmd, "%s --variants softmax,linear --resume --out %s", args, dir);
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", dir);
    stop_at_rows(cmd, journal, 60, signal);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    const char *files[] = {"curves.csv", "summary.csv"};
    for (int i = 0; i < 2; i++) {
        path_in(path, sizeof path, straight, files[i]);
        path_in(other, sizeof other, dir, files[i]);
        assert_same_numbers(path, other);
    }
}

Test(resume, a_stopped_resume_keeps_what_a_finished_run_left, .timeout = 600)
{
    char straight[64], cmd[512];
    make_temp_dir(straight);
    snprintf(cmd, sizeof cmd,
             "copy --preset quick --steps 400 --quiet --threads 2 --variants softmax,linear,lsh-1 "
             "--out %s",
             straight);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    check_stopped_resume_keeps_finished(straight, SIGINT);
    check_stopped_resume_keeps_finished(straight, SIGKILL);
}

/* Rewrites checkpoint `path` as if `trained_by` had trained it ("": a
 * checkpoint from before builds were recorded). */
static void forge_trained_by(const char *path, const char *trained_by)
{
    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, path), LT_OK, "%s", lt_last_error());
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK);
    for (size_t i = 0; i < lt_ckpt_count(c); i++) {
        const void *data;
        size_t bytes;
        if (strcmp(lt_ckpt_name(c, i), "trained_by") == 0)
            continue;
        cr_assert_eq(lt_ckpt_find(c, lt_ckpt_name(c, i), &data, &bytes), LT_OK);
        cr_assert_eq(lt_ckpt_writer_add(w, lt_ckpt_name(c, i), data, bytes), LT_OK);
    }
    if (trained_by[0] != '\0')
        cr_assert_eq(lt_ckpt_writer_add(w, "trained_by", trained_by, strlen(trained_by)), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    lt_ckpt_free(c);
}

/* The file's text with every `from` replaced by `to`. */
static void replace_in_file(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char text[1 << 20], out[1 << 21];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t o = 0;
    for (const char *p = text; *p != '\0';) {
        const char *hit = strstr(p, from);
        size_t keep = hit != NULL ? (size_t)(hit - p) : strlen(p);
        memcpy(out + o, p, keep);
        o += keep;
        p += keep;
        if (hit != NULL) {
            memcpy(out + o, to, strlen(to));
            o += strlen(to);
            p += strlen(from);
        }
    }
    f = fopen(path, "wb");
    cr_assert_eq(fwrite(out, 1, o, f), o);
    fclose(f);
}

/* One run, one build: a checkpoint written by another revision (or by an
 * ltbench that did not say) is not continued unless --mixed-revisions asks
 * for it, and the refusal changes nothing. Asked, the model's new rows name
 * both revisions and the rows kept from before keep their own. */
Test(resume, a_checkpoint_of_another_revision_is_refused, .timeout = 300)
{
    char dir[64], cmd[512], ckpt[200], summary[200], curves[200], before[LT_MD5_HEX_LEN + 1];
    make_temp_dir(dir);
    const char *args = "copy --preset quick --variants linear --quiet --threads 2";
    snprintf(cmd, sizeof cmd, "%s --steps 20 --out %s", args, dir);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    path_in(ckpt, sizeof ckpt, dir, "checkpoints/copy-linear.ckpt");
    path_in(summary, sizeof summary, dir, "summary.csv");
    path_in(curves, sizeof curves, dir, "curves.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, summary), LT_OK);
    char mine[64];
    snprintf(mine, sizeof mine, "%s", cell_str(&t, 0, "git_revision"));
    lt_csv_table_free(&t);
    /* the earlier rows as the other revision wrote them */
    replace_in_file(curves, mine, "0123456789ab");
    replace_in_file(summary, mine, "0123456789ab");
    const char *checked[] = {"", "revision 0123456789ab; build gcc -O2; kernels avx2; BLAS x"};
    for (int i = 0; i < 2; i++) {
        forge_trained_by(ckpt, checked[i]);
        unsigned char digest[LT_MD5_BYTES];
        cr_assert_eq(lt_md5_file(digest, summary), LT_OK);
        lt_md5_hex(before, digest);
        snprintf(cmd, sizeof cmd, "%s --steps 40 --resume --out %s", args, dir);
        cr_assert_eq(ltbench(cmd), 2, "%s", output);
        ASSERT_MENTIONS(i == 0 ? "an ltbench that did not record its build"
                               : "written by revision 0123456789ab; build gcc -O2");
        ASSERT_MENTIONS(mine);
        ASSERT_MENTIONS("--mixed-revisions");
        char after[LT_MD5_HEX_LEN + 1];
        cr_assert_eq(lt_md5_file(digest, summary), LT_OK);
        cr_assert_str_eq(lt_md5_hex(after, digest), before, "the refusal changed nothing");
    }
    snprintf(cmd, sizeof cmd, "%s --steps 40 --resume --mixed-revisions --out %s", args, dir);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
    char both[160];
    snprintf(both, sizeof both, "0123456789ab+%s", mine);
    cr_assert_eq(lt_csv_read(&t, summary), LT_OK);
    cr_assert_eq(t.nrows, 1);
    cr_assert_str_eq(cell_str(&t, 0, "git_revision"), both);
    cr_assert_eq(cell_num(&t, 0, "last_step"), 40);
    lt_csv_table_free(&t);
    cr_assert_eq(lt_csv_read(&t, curves), LT_OK);
    for (long long r = 0; r < t.nrows; r++)
        cr_assert_str_eq(cell_str(&t, r, "git_revision"),
                         cell_num(&t, r, "step") <= 20 ? "0123456789ab" : both, "row %lld",
                         r + 1);
    lt_csv_table_free(&t);
    /* the build that continued it is now the last: a resume by it goes on */
    snprintf(cmd, sizeof cmd, "%s --steps 50 --resume --out %s", args, dir);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);
}

static void write_tiny_cifar(const char *dir, int train, int test);

Test(resume, image_interrupted_in_its_second_variant, .timeout = 600)
{
    char data[64], args[512];
    make_temp_dir(data);
    write_tiny_cifar(data, 12, 4);
    snprintf(args, sizeof args,
             "image --dataset cifar10 --data %s --preset quick --variants softmax,linear "
             "--steps 40 --gen-modes fast --gen-batches 1 --gen-images 1 --completions 0 --quiet "
             "--threads 2",
             data);
    /* 40 updates a model: each is a whole 3072-pixel sequence, and this
     * test trains four models, also under the sanitizers */
    check_resume_in_second_model(args, "cifar10-tiny-curves.csv", "cifar10-tiny.csv", 40 + 10);
}

/* Waits until `path` exists; 0 if the process ended first. */
static int wait_for_file(pid_t pid, const char *path)
{
    for (int i = 0; i < 150000; i++) { /* 5 minutes: the machine may be busy */
        if (access(path, F_OK) == 0)
            return 1;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return 0;
        usleep(2000);
    }
    return 0;
}

/* Stopped while generating, its training done: the model's rows are not
 * kept as finished (neither in the table the stopped run commits nor in its
 * journal), so --resume measures them all and draws its images rather than
 * keeping a row cut short beside a missing completion grid. The samples
 * grid is drawn after the first generation row ends; the second row then
 * generates for --gen-seconds, and the signal lands there. */
Test(resume, image_stopped_while_generating_is_generated_again, .timeout = 600)
{
    char data[64], dir[64], args[640], path[200], base[512];
    make_temp_dir(data);
    make_temp_dir(dir);
    write_tiny_cifar(data, 12, 4);
    snprintf(base, sizeof base,
             "image --dataset cifar10 --data %s --preset quick --variants linear --steps 4 "
             "--gen-modes fast --completions 2 --quiet --threads 2 --out %s",
             data, dir);
    snprintf(args, sizeof args, "%s --gen-batches 1,2 --gen-images 1000000 --gen-seconds 10",
             base);
    pid_t pid = start_ltbench(args);
    path_in(path, sizeof path, dir, "cifar10-tiny-linear-samples.png");
    cr_assert(wait_for_file(pid, path), "the run generated its first row");
    kill(pid, SIGTERM);
    cr_assert_eq(wait_exit(pid), 143);
    path_in(path, sizeof path, dir, "cifar10-tiny.csv");
    cr_assert_eq(csv_rows(path), 0, "no row of a model cut off in its generation");
    path_in(path, sizeof path, dir, "cifar10-tiny-linear-completions.png");
    cr_assert_neq(access(path, F_OK), 0);

    snprintf(args, sizeof args, "%s --gen-batches 1 --gen-images 1 --resume", base);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(access(path, F_OK), 0, "the completion grid is drawn");
    path_in(path, sizeof path, dir, "cifar10-tiny.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 1);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "ok");
    cr_assert_eq(cell_num(&t, 0, "steps"), 4);
    cr_assert_eq(cell_num(&t, 0, "images_generated"), 1);
    lt_csv_table_free(&t);
}

Test(resume, speech_interrupted_in_its_second_model, .timeout = 600)
{
    char args[512], cache[64];
    make_temp_dir(cache);
    snprintf(args, sizeof args, "speech --preset quick --variants softmax,bilstm --epochs 30 "
                                "--quiet --threads 2 --cache %s", cache);
    check_resume_in_second_model(args, "speech-curves.csv", "speech.csv", 30 + 5);
}

/* Kill -9 at random instants, of a fresh run and then of each --resume in
 * turn: a journal is never cut back (a resume writes the rows it carries
 * beside the old journal and renames it into place before any new work),
 * and a finished model's row is on disk while the next model trains (kept
 * by the resume, not rebuilt), so the last --resume reaches the numbers of a
 * run never stopped, exact metrics included. One checkpoint per model at
 * its end: a row rebuilt from it would show a peak without the checkpoint
 * writer. The instants are random (their seed is in every message); the
 * first kill lands while linear trains, to find softmax's row on disk. */
Test(resume, killed_at_random_instants_resumes_to_the_same_numbers, .timeout = 600)
{
    const char *args = "copy --preset quick --variants softmax,linear --steps 60 "
                       "--checkpoint-every 60 --quiet --threads 1";
    char straight[64], killed[64], cmd[512], path[200], other[200], journal[220];
    make_temp_dir(straight);
    make_temp_dir(killed);
    snprintf(cmd, sizeof cmd, "%s --out %s", args, straight);
    cr_assert_eq(ltbench(cmd), 0, "%s", output);

    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    snprintf(cmd, sizeof cmd, "%s --out %s", args, killed);
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", killed);
    pid_t pid = start_ltbench(cmd);
    cr_assert(wait_for_rows(pid, journal, 60 + 5), "the run ended before linear trained");
    kill(pid, SIGKILL);
    wait_exit(pid);
    snprintf(path, sizeof path, "%s/summary.csv.partial", killed);
    cr_assert_eq(csv_rows(path), 1, "softmax's row is on disk while linear trains");

    char fresh[512];
    snprintf(fresh, sizeof fresh, "%s --overwrite --out %s", args, killed);
    snprintf(cmd, sizeof cmd, "%s --resume --out %s", args, killed);
    for (int round = 0; round < 8; round++) {
        /* resumes killed in their first 0.3 s (about half a run); halfway,
         * a fresh start killed anywhere in its 0.6 s */
        int start_over = round == 4;
        pid = start_ltbench(start_over ? fresh : cmd);
        usleep((useconds_t)(rand_r(&seed) % (start_over ? 600000 : 300000)));
        kill(pid, SIGKILL);
        int code = wait_exit(pid);
        cr_assert(code == 0 || code == 128 + SIGKILL, "round %d (seed %u): exit %d", round,
                  seed, code);
    }
    cr_assert_eq(ltbench(cmd), 0, "seed %u: %s", seed, output);
    const char *files[] = {"curves.csv", "summary.csv"};
    for (int i = 0; i < 2; i++) {
        path_in(path, sizeof path, straight, files[i]);
        path_in(other, sizeof other, killed, files[i]);
        assert_same_numbers(path, other);
    }
    check_remove_tree(straight);
    check_remove_tree(killed);
}

/* Ctrl-C / SIGTERM: the current update finishes, a checkpoint and the rows
 * so far are written with status "interrupted", exit 128 + signal. */
Test(robust, sigterm_writes_rows_and_a_checkpoint, .timeout = 300)
{
    char dir[64], args[512], path[160], journal[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 100000 --out %s", dir);
    pid_t pid = start_ltbench(args);
    snprintf(journal, sizeof journal, "%s/curves.csv.partial", dir);
    cr_assert(wait_for_rows(pid, journal, 20));
    kill(pid, SIGTERM);
    cr_assert_eq(wait_exit(pid), 143);
    path_in(path, sizeof path, dir, "summary.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_str_eq(cell_str(&t, 0, "status"), "interrupted");
    long long last = (long long)cell_num(&t, 0, "last_step");
    lt_csv_table_free(&t);
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(csv_rows(path), last);
    path_in(path, sizeof path, dir, "checkpoints/copy-linear.ckpt");
    cr_assert_eq(access(path, F_OK), 0);
    /* --steps below the unfinished run's checkpoint: refused, the rows kept */
    snprintf(args, sizeof args, QUICK_LINEAR " --steps %lld --resume --out %s", last - 1, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--steps");
    ASSERT_MENTIONS("did not finish");
    path_in(path, sizeof path, dir, "summary.csv");
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_str_eq(cell_str(&t, 0, "status"), "interrupted");
    lt_csv_table_free(&t);
    /* --steps at it: the run finishes there, its row ok, not kept as interrupted */
    snprintf(args, sizeof args, QUICK_LINEAR " --steps %lld --resume --out %s", last, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 1);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "ok");
    cr_assert_eq(cell_num(&t, 0, "last_step"), last);
    lt_csv_table_free(&t);
}

/* Finding 12: a diverging run stops as diverged, exit 1. */
/* A disk that fills up is the machine's failure, not the user's: the
 * message names the file and the reason, and the exit status is 1 (2 would
 * blame the flags). The run writes into a 64 KiB tmpfs of its own mount
 * namespace (unshare -m, so nothing stays mounted), which needs root; the
 * test is skipped where that is refused. */
Test(robust, full_disk_is_a_failed_run, .timeout = 120)
{
    if (system("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs /mnt' >/dev/null 2>&1") != 0)
        cr_skip_test("cannot mount a private tmpfs here (unshare -m and mount need root)");
    char dir[64], env[256], args[256];
    make_temp_dir(dir);
    snprintf(env, sizeof env,
             "unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs %s && exec \"$0\" \"$@\"'",
             dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 20 --out %s/run", dir);
    cr_assert_eq(ltbench_env(env, args), 1, "%s", output);
    ASSERT_MENTIONS("No space left on device");
    ASSERT_MENTIONS("cannot write");
    check_remove_tree(dir);
}

/* An --out through a loop of links is named as such, not as a file in the
 * way. */
Test(robust, a_loop_of_links_is_named_as_one, .timeout = 60)
{
    char dir[64], path[160], args[512];
    make_temp_dir(dir);
    path_in(path, sizeof path, dir, "loop");
    cr_assert_eq(symlink(path, path), 0);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --out %s/run", path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("symbolic links");
    cr_assert(strstr(output, "a file of that name exists") == NULL, "%s", output);
    check_remove_tree(dir);
}

Test(robust, divergence_is_a_failed_run, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --lr 10 --clip 0 --steps 400 --out %s", dir);
    cr_assert_eq(ltbench(args), 1, "%s", output);
    path_in(path, sizeof path, dir, "summary.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "diverged");
    cr_assert_lt(cell_num(&t, 0, "last_step"), 400);
    lt_csv_table_free(&t);
}

/* Findings 5, 9, 10: bad outputs and flags are refused before any work
 * (an endless run would time the test out if they were not). */
Test(robust, refused_before_any_work, .timeout = 120)
{
    cr_assert_eq(ltbench(QUICK_LINEAR " --steps 100000000 --out /proc/ltbench"), 2, "%s",
                 output);
    ASSERT_MENTIONS("/proc/ltbench");
    cr_assert_eq(ltbench("scaling --min-log2 4 --max-log2 24 --out /proc/ltbench"), 2,
                 "%s", output);
    ASSERT_MENTIONS("/proc/ltbench");
    cr_assert_eq(ltbench(QUICK_LINEAR " --mem-budget 0.5"), 2, "%s", output);
    ASSERT_MENTIONS("--mem-budget");
    cr_assert_eq(ltbench("copy --preset quick --variants linear,linear"), 2, "%s", output);
    ASSERT_MENTIONS("twice");
    char dir[64], path[160], args[512];
    make_temp_dir(dir);
    path_in(path, sizeof path, dir, "plain");
    fclose(fopen(path, "w"));
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --out %s", path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    cr_assert_eq(check_count_entries(dir), 1, "nothing written beside it");
}

/* An OUT holding an earlier run of other settings names the settings that
 * differ and offers another --out or --overwrite, not a --resume that
 * cannot continue it (the README's second copy after its first); the same
 * settings are offered --resume, which continues. */
Test(robust, an_earlier_run_of_other_settings_is_named_not_resumed, .timeout = 120)
{
    char dir[64], args[512];
    make_temp_dir(dir);
    snprintf(args, sizeof args, QUICK_LINEAR " --seq 48 --steps 2 --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --heads 1 --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("holds an earlier run with other settings (--seq 48 there, 32 here; ");
    ASSERT_MENTIONS("; --heads 2 there, 1 here)");
    ASSERT_MENTIONS("give another --out, or --overwrite");
    cr_assert(strstr(output, "--resume continues") == NULL, "%s", output);
    snprintf(args, sizeof args, QUICK_LINEAR " --seq 48 --steps 2 --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--resume continues that run");
    snprintf(args, sizeof args, QUICK_LINEAR " --seq 48 --steps 3 --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    check_remove_tree(dir);
}

/* An earlier run's results are never replaced without --overwrite: a
 * folder of finished CSVs without checkpoints, another experiment's CSV
 * where scaling writes its own, a journal of a killed run; each refused
 * before any work (exit 2, naming the path), the file as it was. */
Test(robust, earlier_results_are_replaced_only_with_overwrite, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "copy --preset quick --variants softmax,linear --steps 2 "
                                "--quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/checkpoints", dir);
    check_remove_tree(path);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--overwrite");
    path_in(path, sizeof path, dir, "summary.csv");
    cr_assert_eq(csv_rows(path), 2, "the two-row summary is kept");
    char scaling[512], theirs[200];
    path_in(theirs, sizeof theirs, dir, "scaling.csv");
    char *summary = check_read_text(path);
    cr_assert_not_null(summary);
    cr_assert_eq(check_write_file(theirs, summary, strlen(summary)), 0);
    free(summary);
    snprintf(scaling, sizeof scaling,
             "scaling --variants linear --min-log2 5 --max-log2 5 --heads 1 --head-dim 8 "
             "--value-dim 4 --warmup 0 --repeats 1 --quiet --out %s", dir);
    cr_assert_eq(ltbench(scaling), 2, "%s", output);
    ASSERT_MENTIONS(theirs);
    ASSERT_MENTIONS("--overwrite");
    cr_assert_eq(csv_rows(theirs), 2, "another experiment's summary is kept");
    /* a journal left by a killed run is results too */
    char journal[200];
    path_in(path, sizeof path, dir, "summary.csv");
    path_in(journal, sizeof journal, dir, "summary.csv.partial");
    cr_assert_eq(rename(path, journal), 0);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --out %s", dir);
    path_in(path, sizeof path, dir, "curves.csv");
    cr_assert_eq(remove(path), 0);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("summary.csv.partial");
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 2 --overwrite --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    path_in(path, sizeof path, dir, "summary.csv");
    cr_assert_eq(csv_rows(path), 1);
    strcat(scaling, " --overwrite");
    cr_assert_eq(ltbench(scaling), 0, "%s", output);
    check_remove_tree(dir);
}

/* Finding 6: the plan covers everything up to the checkpoint writes, so the
 * tracked peak equals it and a budget between the two cannot start a run
 * that then fails. */
Test(robust, memory_plan_equals_the_peak, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "copy --preset quick --steps 20 --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    path_in(path, sizeof path, dir, "summary.csv");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    for (int r = 0; r < 2; r++)
        cr_assert_eq(cell_num(&t, r, "peak_bytes"), cell_num(&t, r, "planned_bytes"));
    long long planned = (long long)cell_num(&t, 1, "planned_bytes");
    lt_csv_table_free(&t);
    char other[64];
    make_temp_dir(other);
    snprintf(args, sizeof args, QUICK_LINEAR " --steps 20 --mem-budget %lld --out %s",
             planned - 64, other);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("budget");
    cr_assert_eq(check_count_entries(other), 0, "refused before writing anything");
}

Test(scaling, small_range_writes_every_case, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(args, sizeof args,
             "scaling --min-log2 4 --max-log2 6 --heads 2 --head-dim 8 --value-dim 4 "
             "--warmup 0 --repeats 2 --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 6 * 2 * 3, "variants (softmax, linear, linformer, lsh-1, lsh-4, lsh-8) "
                                     "x masks x lengths");
    int refused = 0, ok = 0;
    for (long long r = 0; r < t.nrows; r++) {
        const char *status = cell_str(&t, r, "status");
        if (strcmp(status, "ok") == 0) {
            ok++;
            cr_assert_gt(cell_num(&t, r, "fwd_bwd_median_s"), 0);
            cr_assert_leq(cell_num(&t, r, "fwd_bwd_min_s"), cell_num(&t, r, "fwd_bwd_median_s"));
            cr_assert_gt(cell_num(&t, r, "peak_bytes"), 0);
        } else {
            refused++;
            cr_assert_str_eq(status, "refused");
            cr_assert_str_eq(cell_str(&t, r, "variant"), "linformer");
        }
    }
    cr_assert_eq(refused, 3, "causal linformer rows");
    cr_assert_eq(ok, 33);
    lt_csv_table_free(&t);
}

Test(scaling, lsh_rounds_listed_as_specs)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(args, sizeof args,
             "scaling --variants lsh-1,lsh-3,linear --causal causal --min-log2 6 --max-log2 7 "
             "--heads 2 --head-dim 8 --warmup 0 --repeats 1 --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 3 * 2);
    const char *labels[] = {"lsh-1", "lsh-1", "lsh-3", "lsh-3", "linear", "linear"};
    for (long long r = 0; r < t.nrows; r++) {
        cr_assert_str_eq(cell_str(&t, r, "variant"), labels[r]);
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok");
    }
    /* three rounds: three times the first round's modelled FLOPs */
    cr_assert_float_eq(cell_num(&t, 2, "flop_model_fwd"), 3 * cell_num(&t, 0, "flop_model_fwd"),
                       1e-6 * cell_num(&t, 2, "flop_model_fwd"));
    cr_assert_str_eq(cell_str(&t, 0, "kernel"), "lsh-chunked");
    /* LSH rows get the roof of their own products; the fraction is the
     * performed rate over it; other variants have none */
    for (long long r = 0; r < t.nrows; r++) {
        double roof = cell_num(&t, r, "products_gflop_per_s");
        double fraction = cell_num(&t, r, "fraction_of_products");
        if (r < 4) {
            cr_expect(roof > 0.0, "row %lld: products roof %g", r, roof);
            cr_expect_float_eq(fraction, cell_num(&t, r, "fwd_bwd_performed_gflop_per_s") / roof,
                               1e-9 * fraction);
        } else {
            cr_expect(isnan(roof) && isnan(fraction), "linear row %lld: %g %g", r, roof,
                      fraction);
        }
    }
    /* the roofline: the longer of the memory and the compute bound, over the time */
    for (long long r = 0; r < t.nrows; r++) {
        double memory = cell_num(&t, r, "memory_bound_s");
        double compute = cell_num(&t, r, "compute_bound_s");
        cr_expect(cell_num(&t, r, "bandwidth_gb_per_s") > 0.0, "row %lld", r);
        cr_expect_float_eq(memory, cell_num(&t, r, "bytes_model_fwd_bwd") /
                                       (cell_num(&t, r, "bandwidth_gb_per_s") * 1e9),
                           1e-9 * memory, "row %lld", r);
        cr_expect_str_eq(cell_str(&t, r, "roofline_bound"), memory > compute ? "memory" : "compute");
        double bound = memory > compute ? memory : compute;
        cr_expect_float_eq(cell_num(&t, r, "fraction_of_roofline"),
                           bound / cell_num(&t, r, "fwd_bwd_median_s"), 1e-9, "row %lld", r);
    }
    lt_csv_table_free(&t);
    cr_assert_eq(ltbench("scaling --variants lsh-2,lsh-2"), 2);
    ASSERT_MENTIONS("listed twice");
    cr_assert_eq(ltbench("scaling --variants lsh-0"), 2);
    ASSERT_MENTIONS("--variants");
    ASSERT_MENTIONS("'lsh-0'");
}

Test(scaling, decay_and_the_new_feature_maps)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    const char *maps[] = {"favor", "taylor"};
    for (int m = 0; m < 2; m++) {
        snprintf(args, sizeof args,
                 "scaling --variants linear,decay --feature-map %s --min-log2 5 --max-log2 5 "
                 "--heads 2 --head-dim 8 --value-dim 4 --warmup 0 --repeats 1 --quiet "
                 "--overwrite --out %s",
                 maps[m], dir);
        cr_assert_eq(ltbench(args), 0, "%s", output);
        lt_csv_table t;
        cr_assert_eq(lt_csv_read(&t, path), LT_OK);
        cr_assert_eq(t.nrows, 4, "variants x masks");
        for (long long r = 0; r < t.nrows; r++) {
            int noncausal_decay = strcmp(cell_str(&t, r, "variant"), "decay") == 0 &&
                                  cell_num(&t, r, "causal") == 0;
            cr_expect_str_eq(cell_str(&t, r, "status"), noncausal_decay ? "refused" : "ok");
            cr_expect_str_eq(cell_str(&t, r, "feature_map"), maps[m]);
        }
        lt_csv_table_free(&t);
    }
}

/* delta, gated-delta and gla are timed with gates (planned with the case),
 * both kernels of each side by side; their non-causal rows are refused as
 * decay's are. */
Test(scaling, gated_variants_both_kernels_causal_only)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(args, sizeof args,
             "scaling --variants delta,gated-delta,gla --kernels all --min-log2 5 --max-log2 6 "
             "--heads 2 --head-dim 8 --value-dim 4 --warmup 0 --repeats 1 --roofline off "
             "--quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 3 * (1 + 2) * 2, "variants x (refused non-causal, two kernels) x N");
    int recurrent = 0;
    for (long long r = 0; r < t.nrows; r++) {
        const char *kernel = cell_str(&t, r, "kernel"), *status = cell_str(&t, r, "status");
        if (cell_num(&t, r, "causal") == 0) {
            cr_expect_str_eq(status, "refused");
            cr_expect(strstr(cell_str(&t, r, "note"), "causal only") != NULL, "%s",
                      cell_str(&t, r, "note"));
            continue;
        }
        cr_expect_str_eq(status, "ok", "%s: %s", kernel, cell_str(&t, r, "note"));
        cr_expect_gt(cell_num(&t, r, "fwd_bwd_median_s"), 0);
        cr_expect_gt(cell_num(&t, r, "peak_bytes"), 0);
        cr_expect_leq(cell_num(&t, r, "peak_bytes"), cell_num(&t, r, "planned_bytes"),
                      "the gates are in the plan");
        if (strstr(kernel, "-causal-recurrent") == NULL)
            continue;
        recurrent++;
        /* the recurrent kernel performs the method's products, no more */
        cr_expect_float_eq(cell_num(&t, r, "flops_performed_fwd"),
                           cell_num(&t, r, "flop_model_fwd"), 1e-6);
    }
    cr_expect_eq(recurrent, 3 * 2);
    lt_csv_table_free(&t);
}

Test(scaling, budget_skips_instead_of_running)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    snprintf(args, sizeof args,
             "scaling --variants softmax --causal causal --min-log2 10 --max-log2 10 "
             "--heads 4 --head-dim 8 --mem-budget 8M --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    /* the materialised softmax does not fit; the tiled kernel goes on */
    cr_assert_eq(t.nrows, 2);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "skipped-budget");
    cr_assert_str_eq(cell_str(&t, 0, "kernel"), "softmax-gemm");
    cr_assert_gt(cell_num(&t, 0, "planned_bytes"), 1 << 20);
    cr_assert_str_eq(cell_str(&t, 1, "kernel"), "softmax-tiled");
    cr_assert_str_eq(cell_str(&t, 1, "status"), "ok");
    cr_assert_lt(cell_num(&t, 1, "peak_bytes"), 8 << 20, "tiled within the budget");
    cr_assert_gt(cell_num(&t, 1, "sgemm_gflop_per_s"), 0, "the roofline is measured");
    lt_csv_table_free(&t);
    cr_assert_eq(ltbench("scaling --min-log2 9 --max-log2 8"), 2);
    ASSERT_MENTIONS("--min-log2");
    cr_assert_eq(ltbench("scaling --variants linear,bogus"), 2);
    ASSERT_MENTIONS("bogus");
}

/* The rows of one kernel, in the order run, under --max-case-seconds
 * 0.001: its first case runs (nothing to extrapolate from), and from its
 * first skipped-time case on none runs, each saying why in the rule's
 * words. Returns how many were skipped for time. */
static int check_skipped_for_time(const lt_csv_table *t, const char *kernel)
{
    int seen = 0, skipped = 0;
    for (long long r = 0; r < t->nrows; r++) {
        if (strcmp(cell_str(t, r, "kernel"), kernel) != 0)
            continue;
        const char *status = cell_str(t, r, "status"), *note = cell_str(t, r, "note");
        if (seen++ == 0)
            cr_expect_str_eq(status, "ok", "%s: the first case runs", kernel);
        if (strcmp(status, "skipped-time") == 0) {
            skipped++;
            cr_expect(strstr(note, "estimated") != NULL &&
                          strstr(note, "--max-case-seconds 0.001") != NULL,
                      "%s: %s", kernel, note);
        } else {
            cr_expect_str_eq(status, "ok", "%s", kernel);
            cr_expect_eq(skipped, 0, "%s ran after a case skipped for time", kernel);
            cr_expect_str_eq(note, "");
        }
    }
    cr_expect_gt(seen, 0, "%s has rows", kernel);
    return skipped;
}

/* --max-case-seconds: one rule and one help text for scaling and crossover. */
Test(scaling, time_limit_skips_larger_cases_as_crossover_does, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    /* softmax-gemm's FLOPs double with each N (tokens fixed): 1 ms is soon overrun */
    snprintf(args, sizeof args,
             "scaling --variants softmax --causal noncausal --min-log2 8 --max-log2 11 "
             "--heads 2 --head-dim 16 --warmup 0 --repeats 1 --roofline off "
             "--max-case-seconds 0.001 --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_expect_gt(check_skipped_for_time(&t, "softmax-gemm"), 0);
    /* the tiled kernel continues from the first N skipped, its first case run */
    check_skipped_for_time(&t, "softmax-tiled");
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/crossover.csv", dir);
    snprintf(args, sizeof args,
             "crossover --head-dims 16 --causal noncausal --kernels linear-gemm,softmax-gemm "
             "--min-n 256 --max-n 2048 --heads 2 --tokens 4096 --warmup 0 --repeats 1 "
             "--confirm 9 --max-case-seconds 0.001 --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_expect_gt(check_skipped_for_time(&t, "softmax-gemm") +
                     check_skipped_for_time(&t, "linear-gemm"),
                 0);
    lt_csv_table_free(&t);
    char help[2][4096];
    const char *programs[] = {"scaling --help", "crossover --help"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(ltbench(programs[i]), 0);
        /* up to its default, which is each program's own */
        const char *line = strstr(output, "--max-case-seconds S");
        const char *end = line != NULL ? strstr(line, "(default:") : NULL;
        cr_assert(end != NULL, "%s", output);
        snprintf(help[i], sizeof help[i], "%.*s", (int)(end - line), line);
    }
    cr_expect_str_eq(help[0], help[1], "the same help in both programs");
    cr_expect(strstr(help[0], "forward+backward") != NULL, "%s", help[0]);
    check_remove_tree(dir);
}

/* ---- one vocabulary of flags (src/experiment/flags.h) ---- */

static const char *const every_program[] = {"copy",      "scaling", "image",   "speech",
                                            "crossover", "decode",  "attention", "plot",
                                            "compare",   "ab",      "suite"};
enum { PROGRAMS = sizeof every_program / sizeof every_program[0] };

/* A flag as --help lists it: its name and what stands after it, the value
 * it takes ("N", "a|b|c"; "" for a switch). */
typedef struct listed_flag {
    char name[48], value[160];
} listed_flag;

/* The flags of `program`'s --help: every line of the list that starts
 * "  --" (--help itself left out). */
static int listed_flags(const char *program, listed_flag *out, int capacity)
{
    char args[64];
    snprintf(args, sizeof args, "%s --help", program);
    cr_assert_eq(ltbench(args), 0, "%s: %s", args, output);
    const char *line = strstr(output, "\nflags:\n");
    cr_assert_not_null(line, "%s: no flag list in:\n%s", program, output);
    int n = 0;
    for (line += 8; *line != '\0' && *line != '\n'; line = strchr(line, '\n') + 1) {
        if (strncmp(line, "  --", 4) == 0 && strncmp(line, "  --help", 8) != 0) {
            cr_assert_lt(n, capacity);
            size_t left = strcspn(line + 2, "\n");
            const char *gap = strstr(line + 2, "  ");
            if (gap != NULL && gap < line + 2 + left)
                left = (size_t)(gap - (line + 2));
            size_t name = strcspn(line + 2, " \n");
            name = name < left ? name : left;
            snprintf(out[n].name, sizeof out[n].name, "%.*s", (int)name, line + 2);
            snprintf(out[n].value, sizeof out[n].value, "%.*s",
                     (int)(left > name ? left - name - 1 : 0), line + 2 + name + 1);
            n++;
        }
        if (strchr(line, '\n') == NULL)
            break;
    }
    return n;
}

/* Whether `text` holds `name` as a word of its own ("--modes", not in
 * "--gen-modes" or "--modes-x"). */
static int holds_flag(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *at = strstr(text, name); at != NULL; at = strstr(at + 1, name)) {
        char before = at == text ? ' ' : at[-1], after = at[len];
        if (!(isalnum((unsigned char)before) || before == '-') &&
            !(isalnum((unsigned char)after) || after == '-' || after == '_'))
            return 1;
    }
    return 0;
}

/* Whether `program` once took the retired name `r`. */
static int retired_from(const lt_retired_flag *r, const char *program)
{
    char name[64];
    snprintf(name, sizeof name, "ltbench %s", program);
    return lt_cli_retired(lt_retired_flags, name, r->name) == r;
}

/* One name means one thing: a flag listed by several programs takes the
 * same kind of value under the same value name in each (a switch in all,
 * or the same choices, or the same value name), and no program lists, or
 * mentions, a name retired from it. */
Test(flags, one_vocabulary_across_programs)
{
    enum { MAX_FLAGS = 96 };
    static listed_flag seen[PROGRAMS * MAX_FLAGS];
    static const char *seen_in[PROGRAMS * MAX_FLAGS];
    int seen_count = 0, compared = 0;
    for (int p = 0; p < PROGRAMS; p++) {
        listed_flag flags[MAX_FLAGS];
        int count = listed_flags(every_program[p], flags, MAX_FLAGS);
        cr_assert_gt(count, 3, "%s lists its flags", every_program[p]);
        for (int r = 0; lt_retired_flags[r].name != NULL; r++)
            if (retired_from(&lt_retired_flags[r], every_program[p]))
                cr_expect(!holds_flag(output, lt_retired_flags[r].name),
                          "%s --help names %s, retired for %s", every_program[p],
                          lt_retired_flags[r].name, lt_retired_flags[r].now);
        for (int f = 0; f < count; f++) {
            int known = 0;
            for (int s = 0; s < seen_count && !known; s++)
                if (strcmp(seen[s].name, flags[f].name) == 0) {
                    known = 1;
                    compared++;
                    cr_expect_str_eq(flags[f].value, seen[s].value,
                                     "%s: '%s %s' in %s but '%s %s' in %s", flags[f].name,
                                     flags[f].name, flags[f].value, every_program[p],
                                     seen[s].name, seen[s].value, seen_in[s]);
                }
            if (!known) {
                seen[seen_count] = flags[f];
                seen_in[seen_count++] = every_program[p];
            }
        }
    }
    cr_assert_gt(compared, 100, "the programs share flags: %d compared", compared);
    /* the shared ones, as the vocabulary names them */
    const char *expected[][2] = {
        {"--preset", "quick|small|medium|paper"}, {"--out", "DIR"},
        {"--variants", "LIST"},                   {"--causal", "causal|noncausal|both"},
        {"--kernels", "LIST"},                    {"--gen-modes", "LIST"},
        {"--lsh-rounds", "R"},                    {"--overwrite", ""},
    };
    for (size_t e = 0; e < sizeof expected / sizeof expected[0]; e++) {
        int found = 0;
        for (int s = 0; s < seen_count; s++)
            if (strcmp(seen[s].name, expected[e][0]) == 0) {
                found = 1;
                cr_expect_str_eq(seen[s].value, expected[e][1], "%s", expected[e][0]);
            }
        cr_expect(found, "no program lists %s", expected[e][0]);
    }
}

/* A retired name is refused with the name that replaced it (exit 2), in
 * every program that had it. */
Test(flags, retired_names_say_what_replaced_them)
{
    int checked = 0;
    for (int r = 0; lt_retired_flags[r].name != NULL; r++)
        for (int p = 0; p < PROGRAMS; p++) {
            const lt_retired_flag *old = &lt_retired_flags[r];
            if (old->programs == NULL || !retired_from(old, every_program[p]))
                continue;
            char args[128], want[128];
            snprintf(args, sizeof args, "%s %s x", every_program[p], old->name);
            cr_assert_eq(ltbench(args), 2, "%s: %s", args, output);
            snprintf(want, sizeof want, "%s is now %s", old->name, old->now);
            ASSERT_MENTIONS(want);
            checked++;
        }
    cr_assert_geq(checked, 12);
    cr_assert_eq(ltbench("speech --models softmax,bilstm"), 2, "%s", output);
    ASSERT_MENTIONS("--models is now --variants: bilstm is one of its items");
}

/* An unknown kernel is named as unknown, with every kernel listed once;
 * a known one that cannot serve says which can. */
/* An OPENBLAS_CORETYPE this CPU cannot run is refused before any work (it
 * would end the run with an illegal instruction), and one it runs is taken.
 * test_core checks the rule on CPUs of every kind. */
Test(flags, an_openblas_core_this_cpu_cannot_run_is_refused, .timeout = 120)
{
    static const char *const cores[] = {"Haswell", "SkylakeX", "Cooperlake"};
    const char *refused = NULL;
    for (size_t i = 0; i < sizeof cores / sizeof cores[0] && refused == NULL; i++)
        if (!kernel_set_runs_here(cores[i]))
            refused = cores[i];
    char dir[64], env[64], args[160];
    make_temp_dir(dir);
    if (refused != NULL) {
        snprintf(env, sizeof env, "OPENBLAS_CORETYPE=%s", refused);
        snprintf(args, sizeof args, "copy --preset quick --steps 1 --out %s/run", dir);
        cr_assert_eq(ltbench_env(env, args), 2, "%s", output);
        ASSERT_MENTIONS(env);
        ASSERT_MENTIONS("this CPU does not have");
        snprintf(args, sizeof args, "%s/run", dir);
        cr_assert_neq(access(args, F_OK), 0, "nothing written");
        cr_assert_eq(ltbench_env(env, "scaling --help"), 0, "help still shows");
        /* the suite refuses before any experiment; its plan and its report
         * from results already there run no product and are not refused */
        snprintf(args, sizeof args, "suite --preset quick --out %s/suite", dir);
        cr_assert_eq(ltbench_env(env, args), 2, "%s", output);
        ASSERT_MENTIONS("ltbench suite: error: OPENBLAS_CORETYPE=");
        snprintf(args, sizeof args, "%s/suite", dir);
        cr_assert_neq(access(args, F_OK), 0, "nothing written");
        snprintf(args, sizeof args, "suite --preset quick --plan --out %s/suite", dir);
        cr_assert_eq(ltbench_env(env, args), 0, "%s", output);
    }
    const char *runs = kernel_set_runs_here("Haswell") ? "Haswell" : "Nehalem";
    snprintf(env, sizeof env, "OPENBLAS_CORETYPE=%s", runs);
    snprintf(args, sizeof args, "copy --preset quick --variants linear --steps 1 --out %s/ok",
             dir);
    cr_assert_eq(ltbench_env(env, args), 0, "%s", output);
    check_remove_tree(dir);
}

Test(flags, unknown_kernels_are_named_and_the_known_listed_once)
{
    cr_assert_eq(ltbench("scaling --kernel nonsense"), 2, "%s", output);
    ASSERT_MENTIONS("--kernel: unknown kernel 'nonsense'");
    const char *kernels[] = {"softmax-gemm", "lsh-chunked", "gla-causal-recurrent"};
    for (int i = 0; i < 3; i++) {
        const char *at = strstr(output, kernels[i]);
        cr_assert_not_null(at, "%s in:\n%s", kernels[i], output);
        cr_assert_null(strstr(at + 1, kernels[i]), "%s listed twice:\n%s", kernels[i], output);
    }
    cr_assert(strstr(output, "non-causal") == NULL, "not about masking:\n%s", output);
    cr_assert_eq(ltbench("scaling --kernel linear-causal-prefix --causal noncausal"), 2);
    ASSERT_MENTIONS("linear-causal-prefix cannot run non-causal attention");
    const char *at = strstr(output, "lsh: ");
    cr_assert_not_null(at, "%s", output);
    cr_assert_null(strstr(at + 1, "lsh: "), "lsh-1, lsh-4 and lsh-8 are one variant:\n%s",
                   output);
    cr_assert_eq(ltbench("scaling --kernels linear-gemm,nonsense"), 2);
    ASSERT_MENTIONS("--kernels: unknown kernel 'nonsense'");
    cr_assert_eq(ltbench("scaling --variants softmax --kernels lsh-chunked"), 2);
    ASSERT_MENTIONS("lsh-chunked is a kernel of lsh, which --variants does not list");
    cr_assert_eq(ltbench("scaling --variants linear --kernels linear-causal-prefix"), 2);
    ASSERT_MENTIONS("none of linear's kernels listed runs non-causal attention");
    cr_assert_eq(ltbench("copy --kernel nonsense --preset quick"), 2);
    ASSERT_MENTIONS("unknown kernel 'nonsense'");
}

/* Runs `ltbench ARGS` (exit 0) and reads the table it wrote at `path`. */
static void run_and_read(const char *args, const char *path, lt_csv_table *t)
{
    cr_assert_eq(ltbench(args), 0, "%s: %s", args, output);
    cr_assert_eq(lt_csv_read(t, path), LT_OK, "%s", lt_last_error());
}

/* scaling, crossover and decode take --preset as the training experiments
 * do (a flag given beats its preset value) and write in the folder --out
 * names: scaling.csv, crossover.csv and crossover-table.csv, decode.csv. */
Test(flags, presets_and_out_folders_of_the_sweeps, .timeout = 300)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args,
             "scaling --preset quick --variants linear --causal noncausal --heads 1 "
             "--head-dim 8 --roofline off --quiet --out %s/s", dir);
    snprintf(path, sizeof path, "%s/s/scaling.csv", dir);
    lt_csv_table t;
    run_and_read(args, path, &t);
    cr_assert_eq(t.nrows, 5, "N = 64 .. 1024");
    cr_assert_eq(cell_num(&t, 0, "N"), 64);
    cr_assert_eq(cell_num(&t, 4, "N"), 1024);
    cr_assert_eq(cell_num(&t, 0, "repeats"), 2);
    lt_csv_table_free(&t);
    snprintf(args, sizeof args,
             "scaling --preset quick --max-log2 7 --variants linear --causal noncausal "
             "--heads 1 --head-dim 8 --roofline off --quiet --out %s/s --overwrite", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(csv_rows(path), 2, "--max-log2 given beats the preset's");

    snprintf(args, sizeof args,
             "crossover --preset quick --head-dims 8 --max-n 32 --causal noncausal "
             "--kernels linear-gemm,softmax-gemm --quiet --out %s/c", dir);
    snprintf(path, sizeof path, "%s/c/crossover.csv", dir);
    run_and_read(args, path, &t);
    cr_assert_eq(t.nrows, 2 * 2, "two kernels at N = 16, 32");
    cr_assert_eq(cell_num(&t, 0, "heads"), 2);
    cr_assert_eq(cell_num(&t, 0, "tokens"), 512);
    cr_assert_eq(cell_num(&t, 0, "repeats"), 1);
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/c/crossover-table.csv", dir);
    cr_assert_eq(csv_rows(path), 2, "one pair, both passes");

    snprintf(args, sizeof args,
             "decode --preset quick --gen-modes linear-elu --positions 1 --batches 1 --quiet "
             "--out %s/d", dir);
    snprintf(path, sizeof path, "%s/d/decode.csv", dir);
    run_and_read(args, path, &t);
    cr_assert_eq(t.nrows, 1);
    cr_assert_eq(cell_num(&t, 0, "layers"), 2);
    cr_assert_eq(cell_num(&t, 0, "head_dim"), 16);
    cr_assert_eq(cell_num(&t, 0, "window"), 2);
    lt_csv_table_free(&t);

    /* --out names a folder: a CSV's name is refused, and nothing written */
    const char *programs[] = {"scaling", "crossover", "decode",
                              "attention --q q.npy --k q.npy --v v.npy"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "%s --out %s/x.%s", programs[i], dir,
                 i == 3 ? "npy" : "csv");
        cr_assert_eq(ltbench(args), 2, "%s: %s", args, output);
        ASSERT_MENTIONS("expected a folder");
    }
    cr_assert_eq(check_count_entries(dir), 3, "s, c and d alone");
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "%s --help", programs[i]);
        cr_assert_eq(ltbench(args), 0);
        ASSERT_MENTIONS("Presets");
        ASSERT_MENTIONS("--preset quick|small|medium|paper");
    }
}

/* --gen-modes: a set or a list of modes in decode and image alike. */
Test(flags, gen_modes_sets_and_lists)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args,
             "decode --preset quick --gen-modes fast --layers 1 --positions 1 --batches 1 "
             "--quiet --out %s", dir);
    snprintf(path, sizeof path, "%s/decode.csv", dir);
    lt_csv_table t;
    run_and_read(args, path, &t);
    cr_assert_eq(t.nrows, 6, "four linear maps, decay and the cache; no recompute");
    for (long long r = 0; r < t.nrows; r++)
        cr_expect_str_neq(cell_str(&t, r, "gen_mode"), "recompute");
    lt_csv_table_free(&t);
    cr_assert_eq(ltbench("image --gen-modes recurrent,bogus --out /tmp/never"), 2);
    ASSERT_MENTIONS("--gen-modes: expected default, all, fast, or modes from recurrent, cached, "
                    "recompute, got 'bogus'");
    cr_assert_eq(ltbench("image --gen-modes cached,cached --out /tmp/never"), 2);
    ASSERT_MENTIONS("listed twice");
    cr_assert_eq(ltbench("decode --gen-modes default,bogus --out /tmp/never"), 2);
    ASSERT_MENTIONS("'default'");
}

/* ---- beyond the paper: crossover and decode ---- */

#define TINY_CROSSOVER                                                                       \
    "crossover --min-n 16 --max-n 64 --heads 2 --tokens 128 --warmup 0 --repeats 1 --quiet "

/* Per-sample medians of one kernel's cases, at N = 16, 32, 64 (NAN where
 * not measured). */
static void case_times(const lt_csv_table *t, const char *kernel, const char *map, int causal,
                       int D, const char *column, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = NAN;
    for (long long r = 0; r < t->nrows; r++)
        if (strcmp(cell_str(t, r, "kernel"), kernel) == 0 &&
            strcmp(cell_str(t, r, "feature_map"), map) == 0 &&
            (int)cell_num(t, r, "causal") == causal && (int)cell_num(t, r, "head_dim") == D &&
            strcmp(cell_str(t, r, "status"), "ok") == 0) {
            int n = (int)cell_num(t, r, "N");
            out[n == 16 ? 0 : n == 32 ? 1 : 2] = cell_num(t, r, column);
        }
}

/* Every case is a row; every pair of kernels a row per pass, whose
 * crossover is what the rule gives on the cases' own times. */
Test(sweeps, crossover_writes_every_case_and_the_crossover_table, .timeout = 120)
{
    char dir[64], args[512], path[160], table_path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/crossover.csv", dir);
    snprintf(table_path, sizeof table_path, "%s/crossover-table.csv", dir);
    /* --confirm 4: no pair settles within three lengths, so every case runs */
    snprintf(args, sizeof args, TINY_CROSSOVER "--head-dims 8,16 --confirm 4 --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("crossover N");
    lt_csv_table cases, table;
    cr_assert_eq(lt_csv_read(&cases, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(cases.nrows, 2 * (3 + 4) * 3, "D x kernels of both maskings x N");
    for (long long r = 0; r < cases.nrows; r++) {
        cr_assert_str_eq(cell_str(&cases, r, "status"), "ok");
        cr_assert_gt(cell_num(&cases, r, "fwd_bwd_median_s"), 0);
        cr_assert_eq(cell_num(&cases, r, "batch"), 128 / cell_num(&cases, r, "N"));
        cr_assert_gt(cell_num(&cases, r, "peak_bytes"), 0);
    }
    cr_assert_eq(lt_csv_read(&table, table_path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(table.nrows, 2 * (1 * 2 + 2 * 2) * 2, "D x kernel pairs x passes");
    const int n[] = {16, 32, 64};
    for (long long r = 0; r < table.nrows; r++) {
        int D = (int)cell_num(&table, r, "head_dim"), causal = (int)cell_num(&table, r, "causal");
        int fb = strcmp(cell_str(&table, r, "pass"), "fwd+bwd") == 0;
        const char *column = fb ? "fwd_bwd_per_sample_s" : "fwd_per_sample_s";
        double lin[3], soft[3];
        case_times(&cases, cell_str(&table, r, "linear_kernel"), "elu", causal, D, column, lin);
        case_times(&cases, cell_str(&table, r, "softmax_kernel"), "none", causal, D, column,
                   soft);
        lt_crossover c = lt_crossover_find(n, lin, soft, 3, 4, 1.2);
        cr_expect_eq(c.measured, 3);
        cr_expect_str_eq(cell_str(&table, r, "result"), lt_crossover_kind_name(c.kind));
        char text[64];
        cr_expect_str_eq(cell_str(&table, r, "crossover"),
                         lt_crossover_describe(&c, text, sizeof text));
        if (c.kind == LT_CROSSOVER_AT || c.kind == LT_CROSSOVER_FROM_SMALLEST)
            cr_expect_eq(cell_num(&table, r, "crossover_n"), c.n);
        cr_expect_str_eq(cell_str(&table, r, "status"),
                         c.kind == LT_CROSSOVER_NONE ? "no-crossover" : "ok");
    }
    lt_csv_table_free(&cases);
    lt_csv_table_free(&table);
}

/* The second question beside the first in one run: each gated variant's
 * chunked kernel against its own recurrent kernel (never another
 * variant's, never softmax's), each pair's crossover what the rule gives
 * on the cases' own times; a gated kernel without its partner, or gated
 * kernels alone where non-causal attention is measured, are refused. */
Test(sweeps, crossover_chunked_against_recurrent, .timeout = 120)
{
    char dir[64], args[640], path[160], table_path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/crossover.csv", dir);
    snprintf(table_path, sizeof table_path, "%s/crossover-table.csv", dir);
    snprintf(args, sizeof args,
             TINY_CROSSOVER "--head-dims 8 --causal causal --confirm 4 --kernels "
                            "delta-causal-chunked,delta-causal-recurrent,gla-causal-chunked,"
                            "gla-causal-recurrent,linear-causal-chunked,softmax-gemm --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table cases, table;
    cr_assert_eq(lt_csv_read(&cases, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(cases.nrows, 6 * 3, "kernels x N");
    for (long long r = 0; r < cases.nrows; r++)
        cr_expect_str_eq(cell_str(&cases, r, "status"), "ok", "%s", cell_str(&cases, r, "note"));
    cr_assert_eq(lt_csv_read(&table, table_path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(table.nrows, 3 * 2, "(delta, gla, linear against softmax) x passes");
    const int n[] = {16, 32, 64};
    int gated = 0;
    for (long long r = 0; r < table.nrows; r++) {
        const char *kernel = cell_str(&table, r, "linear_kernel");
        const char *against = cell_str(&table, r, "softmax_kernel");
        int softmax = strncmp(against, "softmax", 7) == 0;
        cr_expect_str_eq(cell_str(&table, r, "question"),
                         softmax ? "linear-vs-softmax" : "chunked-vs-recurrent");
        const char *map = softmax ? "elu" : "none";
        if (!softmax) { /* one variant: the names agree up to "-causal-" */
            gated++;
            size_t stem = (size_t)(strstr(kernel, "-causal-") - kernel);
            cr_expect(strstr(kernel, "-chunked") != NULL && strstr(against, "-recurrent"));
            cr_expect(strncmp(kernel, against, stem + 8) == 0, "%s against %s", kernel, against);
            cr_expect_str_eq(cell_str(&table, r, "feature_map"), "none");
        }
        int fb = strcmp(cell_str(&table, r, "pass"), "fwd+bwd") == 0;
        const char *column = fb ? "fwd_bwd_per_sample_s" : "fwd_per_sample_s";
        double a[3], b[3];
        case_times(&cases, kernel, map, 1, 8, column, a);
        case_times(&cases, against, "none", 1, 8, column, b);
        lt_crossover c = lt_crossover_find(n, a, b, 3, 4, 1.2);
        cr_expect_eq(c.measured, 3);
        cr_expect_str_eq(cell_str(&table, r, "result"), lt_crossover_kind_name(c.kind));
    }
    cr_expect_eq(gated, 2 * 2);
    lt_csv_table_free(&cases);
    lt_csv_table_free(&table);
    char other[64];
    make_temp_dir(other);
    struct { const char *args, *mention; } bad[] = {
        {"--causal causal --kernels delta-causal-chunked,gla-causal-recurrent",
         "list delta-causal-recurrent too"},
        {"--kernels gla-causal-chunked,gla-causal-recurrent", "--causal causal"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "crossover %s --out %s/c", bad[i].args, other);
        cr_assert_eq(ltbench(args), 2, "%s:\n%s", bad[i].args, output);
        ASSERT_MENTIONS(bad[i].mention);
    }
    cr_assert_eq(check_count_entries(other), 0, "nothing written");
}

/* A feature map that cannot serve the head dimension, and a kernel over the
 * budget, stop with a row that says why; their pairs say so. */
Test(sweeps, crossover_refusals_and_budget, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/crossover.csv", dir);
    snprintf(args, sizeof args,
             TINY_CROSSOVER "--head-dims 128 --causal noncausal --feature-maps taylor --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 3, "taylor refused at the first N; softmax needed no further");
    cr_assert_str_eq(cell_str(&t, 0, "status"), "refused");
    cr_assert(strstr(cell_str(&t, 0, "note"), "64") != NULL, "%s", cell_str(&t, 0, "note"));
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/crossover-table.csv", dir);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 4);
    for (long long r = 0; r < t.nrows; r++) {
        cr_expect_str_eq(cell_str(&t, r, "status"), "unmeasured");
        cr_expect(strstr(cell_str(&t, r, "note"), "linear-gemm stopped") != NULL, "%s",
                  cell_str(&t, r, "note"));
    }
    lt_csv_table_free(&t);
    /* softmax-gemm's scores: 4 x 2 x 256^2 floats fit 8M, 512^2 do not */
    snprintf(path, sizeof path, "%s/b/crossover.csv", dir);
    snprintf(args, sizeof args,
             "crossover --head-dims 8 --min-n 256 --max-n 1024 --heads 2 --batch 4 --warmup 0 "
             "--repeats 1 --causal noncausal --kernels linear-gemm,softmax-gemm --confirm 9 "
             "--mem-budget 8M --quiet --out %s/b",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    int skipped = 0, after = 0;
    for (long long r = 0; r < t.nrows; r++)
        if (strcmp(cell_str(&t, r, "kernel"), "softmax-gemm") == 0) {
            after += skipped;
            skipped += strcmp(cell_str(&t, r, "status"), "skipped-budget") == 0;
            if (skipped)
                cr_expect(strstr(cell_str(&t, r, "note"), "budget") != NULL);
        }
    cr_expect_eq(skipped, 1, "skipped once, at 512");
    cr_expect_eq(after, 0, "not tried at larger N");
    lt_csv_table_free(&t);
}

Test(sweeps, crossover_bad_flags_exit_2_naming_the_flag)
{
    cr_assert_eq(ltbench("crossover --help"), 0);
    const char *flags[] = {"--head-dims", "--min-n", "--max-n", "--causal", "--kernels",
                           "--feature-maps", "--heads", "--tokens", "--batch", "--warmup",
                           "--repeats", "--confirm", "--margin", "--max-case-seconds", "--out",
                           "--threads", "--seed", "--quiet", "--mem-budget",
                           "default: 16,32,64,128,256"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ASSERT_MENTIONS(flags[i]);
    char dir[64];
    make_temp_dir(dir);
    struct { const char *args, *mention; } bad[] = {
        {"--head-dims 32,16", "--head-dims"},
        {"--head-dims 16,abc", "--head-dims"},
        {"--min-n 64 --max-n 32", "--min-n"},
        {"--kernels linear-gemm,bogus", "'bogus'"},
        {"--kernels lsh-chunked,softmax-gemm", "--kernels"},
        {"--kernels softmax-gemm,softmax-tiled", "--kernels"},
        {"--causal causal --kernels linear-gemm,softmax-gemm,linear-causal-chunked",
         "'linear-gemm'"},
        {"--feature-maps elu,cosine", "--feature-maps"},
        {"--feature-maps elu,elu", "--feature-maps"},
        {"--margin 0.5", "--margin"},
        {"--confirm 0", "--confirm"},
        {"--out x.csv", "expected a folder"},
        {"--kernels nonsense", "unknown kernel 'nonsense'"},
        {"--feature-maps relu --eps 0", "--eps"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "crossover %s --out %s/c", bad[i].args, dir);
        if (strstr(bad[i].args, "--out") != NULL)
            snprintf(args, sizeof args, "crossover %s", bad[i].args);
        cr_assert_eq(ltbench(args), 2, "%s:\n%s", bad[i].args, output);
        ASSERT_MENTIONS(bad[i].mention);
    }
    cr_assert_eq(check_count_entries(dir), 0, "nothing written");
}

/* Starts `ltbench PROGRAM ARGS --out DIR`, sends Ctrl-C once `rows` rows
 * are in PATH (in DIR), expects exit 130 and returns the rows PATH then
 * holds (at least `rows`: what was measured is written). */
static long long interrupt_after_rows(const char *program, const char *args, const char *dir,
                                      const char *path, long long rows)
{
    char line[1024], journal[200];
    snprintf(line, sizeof line, "%s %s --out %s", program, args, dir);
    pid_t pid = start_ltbench(line);
    snprintf(journal, sizeof journal, "%s.partial", path);
    cr_assert(wait_for_rows(pid, journal, rows), "%s", line);
    kill(pid, SIGINT);
    int code = wait_exit(pid);
    cr_assert_eq(code, 130, "%s: exit status %d", program, code);
    long long written = csv_rows(path);
    cr_assert_geq(written, rows, "the rows measured");
    return written;
}

/* Ctrl-C stops after the current case; both CSVs hold what was measured. */
Test(sweeps, crossover_interrupted_writes_what_was_measured, .timeout = 300)
{
    char dir[64], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/crossover.csv", dir);
    long long cases = interrupt_after_rows(
        "crossover",
        "--head-dims 8,16,32,64 --min-n 16 --max-n 65536 --heads 2 --tokens 16384 --confirm 20",
        dir, path, 3);
    cr_assert_lt(cases, 4 * 2 * 13 * 5, "stopped early");
    snprintf(path, sizeof path, "%s/crossover-table.csv", dir);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    /* per head dimension 2 pairs without a mask and 4 with, both passes */
    cr_assert_eq(t.nrows, 4 * 12, "every group's pairs, reached or not");
    cr_assert(strstr(cell_str(&t, 0, "note"), "interrupted") != NULL, "%s",
              cell_str(&t, 0, "note"));
    /* a pair cut off is marked so in its status, not only in its note */
    for (long long r = 0; r < t.nrows; r++)
        cr_assert_str_eq(cell_str(&t, r, "status"), "interrupted", "row %lld", r + 1);
    lt_csv_table_free(&t);
}

#define TINY_DECODE                                                                           \
    "decode --layers 1 --heads 2 --head-dim 8 --ffn 16 --positions 1,8,32 --batches 1,2 "     \
    "--window 2 --quiet "

static long long row_of(const lt_csv_table *t, const char *mode, const char *map, int batch,
                        int context)
{
    for (long long r = 0; r < t->nrows; r++)
        if (strcmp(cell_str(t, r, "gen_mode"), mode) == 0 &&
            strcmp(cell_str(t, r, "feature_map"), map) == 0 &&
            (int)cell_num(t, r, "batch") == batch && (int)cell_num(t, r, "context") == context)
            return r;
    cr_assert_fail("no %s %s batch %d context %d row", mode, map, batch, context);
    return -1;
}

/* Every mode, batch and position is a row; a constant state keeps its
 * bytes, a cache grows by one row per position, recompute holds its
 * forward, and a timed run's tracked peak is its plan. */
Test(sweeps, decode_writes_every_mode_batch_and_position, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/decode.csv", dir);
    snprintf(args, sizeof args, TINY_DECODE "--recompute-seconds 30 --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("ms/token");
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 7 * 2 * 3, "modes x batches x positions");
    for (long long r = 0; r < t.nrows; r++) {
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok", "row %lld: %s", r,
                         cell_str(&t, r, "note"));
        cr_assert_gt(cell_num(&t, r, "token_median_s"), 0);
        cr_assert_leq(cell_num(&t, r, "token_min_s"), cell_num(&t, r, "token_median_s"));
        cr_assert_eq(cell_num(&t, r, "peak_bytes"), cell_num(&t, r, "planned_bytes"),
                     "row %lld: the plan is what the run holds", r);
    }
    const char *maps[] = {"elu", "relu", "favor", "taylor"};
    for (int m = 0; m < 4; m++) {
        double one = cell_num(&t, row_of(&t, "recurrent", maps[m], 2, 1), "state_bytes");
        cr_expect_eq(cell_num(&t, row_of(&t, "recurrent", maps[m], 2, 32), "state_bytes"), one,
                     "%s: a constant state", maps[m]);
    }
    /* a stepped mode's state is its attention's alone: a sequence more adds
     * 2 heads of (S 8x8, z 8, two feature rows of 8) floats, not the
     * step's scratch nor its packed weights */
    double elu1 = cell_num(&t, row_of(&t, "recurrent", "elu", 1, 8), "state_bytes");
    double elu2 = cell_num(&t, row_of(&t, "recurrent", "elu", 2, 8), "state_bytes");
    cr_expect_eq(elu2 - elu1, 2.0 * (8 * 8 + 3 * 8) * 4, "%g then %g bytes", elu1, elu2);
    cr_expect_lt(elu1, 4096, "%g bytes for two heads' 8x8 state", elu1);
    /* the cache: at least 8 value floats a position, batch 2 x 2 heads x 1 layer */
    double c8 = cell_num(&t, row_of(&t, "cached", "none", 2, 8), "state_bytes");
    double c32 = cell_num(&t, row_of(&t, "cached", "none", 2, 32), "state_bytes");
    cr_expect_geq(c32 - c8, 2.0 * 2 * 1 * 24 * 8 * 4, "at least the value rows added");
    long long r32 = row_of(&t, "recompute", "none", 1, 32);
    cr_expect_gt(cell_num(&t, r32, "forward_bytes"),
                 cell_num(&t, row_of(&t, "recompute", "none", 1, 8), "forward_bytes"));
    cr_expect_eq(cell_num(&t, r32, "held_bytes"),
                 cell_num(&t, r32, "forward_bytes") + cell_num(&t, r32, "state_bytes"));
    cr_expect_str_eq(cell_str(&t, r32, "kernel"), "softmax-gemm");
    lt_csv_table_free(&t);
}

/* The gated recurrences step in decode: a constant state, no feature map,
 * their own step kernel; the plan is what the run holds. */
Test(sweeps, decode_steps_the_gated_variants, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/decode.csv", dir);
    snprintf(args, sizeof args,
             "decode --layers 1 --heads 2 --head-dim 8 --ffn 16 --positions 1,32 --batches 2 "
             "--window 2 --gen-modes delta,gated-delta,gla --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 3 * 2);
    for (long long r = 0; r < t.nrows; r++) {
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok", "%s", cell_str(&t, r, "note"));
        cr_assert_str_eq(cell_str(&t, r, "gen_mode"), "recurrent");
        cr_assert_str_eq(cell_str(&t, r, "feature_map"), "none");
        cr_assert_eq(cell_num(&t, r, "peak_bytes"), cell_num(&t, r, "planned_bytes"));
        if (r % 2 == 1)
            cr_assert_eq(cell_num(&t, r, "state_bytes"), cell_num(&t, r - 1, "state_bytes"),
                         "%s: a constant state", cell_str(&t, r, "variant"));
    }
    lt_csv_table_free(&t);
    cr_assert_eq(ltbench("decode --gen-modes delta-elu --out /tmp/never"), 2);
    ASSERT_MENTIONS("delta, gated-delta, gla");
}

/* Recompute within its time budget (none: the first position only, as
 * nothing is known before it), a state over the budget, taylor beyond its
 * D, and every position stepped. */
Test(sweeps, decode_budgets_refusals_and_stepping, .timeout = 120)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/r/decode.csv", dir);
    snprintf(args, sizeof args,
             TINY_DECODE "--gen-modes recompute --recompute-seconds 0 --out %s/r", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 6);
    for (long long r = 0; r < t.nrows; r++)
        cr_expect_str_eq(cell_str(&t, r, "status"),
                         cell_num(&t, r, "context") == 1 ? "ok" : "skipped-time");
    cr_expect(strstr(cell_str(&t, 1, "note"), "--recompute-seconds") != NULL);
    cr_expect_gt(cell_num(&t, 2, "held_bytes"), 0, "the bytes are known without running");
    lt_csv_table_free(&t);
    /* a cache of 100000 positions of 128 keys and values is 100 MB */
    snprintf(path, sizeof path, "%s/s/decode.csv", dir);
    snprintf(args, sizeof args,
             "decode --layers 1 --heads 1 --head-dim 128 --ffn 16 "
             "--gen-modes cached,linear-taylor --positions 1,20,100000 --batches 1 --window 2 "
             "--reach step --mem-budget 50M --quiet --out %s/s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 4, "cached at every position, taylor refused once");
    cr_expect_str_eq(cell_str(&t, 1, "status"), "ok", "stepped to 20");
    cr_expect_str_eq(cell_str(&t, 1, "reach"), "step");
    cr_expect_str_eq(cell_str(&t, 2, "status"), "skipped-budget");
    cr_expect(strstr(cell_str(&t, 2, "note"), "budget") != NULL);
    cr_expect_gt(cell_num(&t, 2, "planned_bytes"), 100e6);
    cr_expect_str_eq(cell_str(&t, 3, "status"), "refused");
    cr_expect(strstr(cell_str(&t, 3, "note"), "64") != NULL, "%s", cell_str(&t, 3, "note"));
    lt_csv_table_free(&t);
}

Test(sweeps, decode_bad_flags_exit_2_naming_the_flag)
{
    cr_assert_eq(ltbench("decode --help"), 0);
    const char *flags[] = {"--gen-modes", "--positions", "--batches", "--window",
                           "--recompute-window", "--recompute-seconds", "--reach", "--layers",
                           "--heads", "--head-dim", "--ffn", "--mixtures", "--out", "--threads",
                           "--seed", "--quiet", "--mem-budget", "default: 1,16,256,1024,4096,16384"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ASSERT_MENTIONS(flags[i]);
    char dir[64];
    make_temp_dir(dir);
    struct { const char *args, *mention; } bad[] = {
        {"--gen-modes linear-cosine", "'linear-cosine'"},
        {"--gen-modes bogus", "--gen-modes"},
        {"--gen-modes cached,cached", "--gen-modes"},
        {"--positions 16,1", "--positions"},
        {"--positions 0", "--positions"},
        {"--batches 0", "--batches"},
        {"--window 0", "--window"},
        {"--reach jump", "--reach"},
        {"--pos-dim 300", "--pos-dim"},
        {"--gen-modes linear-relu --eps 0", "--eps"},
        {"--modes cached", "--modes is now --gen-modes"},
        {"--out x.csv", "expected a folder"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "decode %s --out %s/d", bad[i].args, dir);
        if (strstr(bad[i].args, "--out") != NULL)
            snprintf(args, sizeof args, "decode %s", bad[i].args);
        cr_assert_eq(ltbench(args), 2, "%s:\n%s", bad[i].args, output);
        ASSERT_MENTIONS(bad[i].mention);
    }
    cr_assert_eq(check_count_entries(dir), 0, "nothing written");
}

/* Positions closer together than the window: each is timed from its own
 * context (the session starts afresh when the last window ran past it). */
Test(sweeps, decode_positions_closer_than_the_window, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    const char *reach[] = {"skip", "step"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args,
                 "decode --layers 1 --heads 2 --head-dim 8 --ffn 16 "
                 "--gen-modes linear-elu,cached --batches 1 --positions 1,2,3 --window 40 "
                 "--reach %s --out %s/%s",
                 reach[i], dir, reach[i]);
        snprintf(path, sizeof path, "%s/%s/decode.csv", dir, reach[i]);
        cr_assert_eq(ltbench(args), 0, "%s:\n%s", args, output);
        cr_assert_eq(csv_rows(path), 6, "three positions in each of two modes");
    }
}

Test(sweeps, decode_interrupted_writes_what_was_measured, .timeout = 300)
{
    char dir[64], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/decode.csv", dir);
    long long rows = interrupt_after_rows(
        "decode",
        "--layers 4 --heads 4 --head-dim 32 --ffn 256 --gen-modes linear-elu "
        "--batches 1,2,4,8 --positions 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 "
        "--window 1000",
        dir, path, 1);
    cr_assert_lt(rows, 4 * 20, "stopped early");
}

/* ---- ltbench attention against a double-precision reference ---- */

enum { B = 2, H = 3, N = 7, D = 5, M = 4, K = 3 };

static double phi(double x) { return x > 0 ? x + 1 : exp(x); }

/* out[b,h,i,:] for softmax (linear = 0) or elu+1 linear attention. */
static void reference(double *out, const double *q, const double *k, const double *v,
                      int linear, int causal)
{
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < N; i++) {
            const double *qi = q + (bh * N + i) * D;
            double w[N], total = 0, max_s = -INFINITY;
            int last = causal ? i : N - 1;
            for (int j = 0; j <= last; j++) {
                const double *kj = k + (bh * N + j) * D;
                double s = 0;
                for (int d = 0; d < D; d++)
                    s += linear == 1 || linear == 3 ? phi(qi[d]) * phi(kj[d]) : qi[d] * kj[d];
                if (linear == 2) /* taylor: 1 + s + s^2 / 2 of the scaled product */
                    s = 1 + s / sqrt(D) + s * s / (2.0 * D);
                if (linear == 3) /* decay: RetNet's gamma of head h, to the distance */
                    s *= pow(1 - pow(2, -5 - bh % H), i - j);
                w[j] = linear ? s : s / sqrt(D);
                if (w[j] > max_s)
                    max_s = w[j];
            }
            for (int j = 0; j <= last; j++) {
                if (!linear)
                    w[j] = exp(w[j] - max_s);
                total += w[j];
            }
            for (int m = 0; m < M; m++) {
                double acc = 0;
                for (int j = 0; j <= last; j++)
                    acc += w[j] * v[(bh * N + j) * M + m];
                out[(bh * N + i) * M + m] = acc / (total + (linear ? 1e-6 : 0));
            }
        }
}

static long long count_of(int ndim, const long long *shape)
{
    long long count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    return count;
}

static void write_random(const char *path, double *data, int ndim, const long long *shape,
                         uint64_t stream)
{
    lt_rng rng;
    lt_rng_seed(&rng, 11, stream);
    for (long long i = 0; i < count_of(ndim, shape); i++)
        data[i] = lt_rng_normal(&rng);
    cr_assert_eq(lt_npy_write_f64(path, data, ndim, shape), LT_OK);
}

/* Copies `template` into `out`, replacing each names[i] with paths[i]. */
static void expand(char *out, size_t size, const char *template, const char **names,
                   const char **paths, int count)
{
    size_t n = 0;
    while (*template && n + 1 < size) {
        int matched = -1;
        size_t len = 0;
        for (int i = 0; i < count; i++) {
            size_t l = strlen(names[i]);
            if (strncmp(template, names[i], l) == 0 && l > len) {
                matched = i;
                len = l;
            }
        }
        if (matched < 0) {
            out[n++] = *template++;
            continue;
        }
        n += (size_t)snprintf(out + n, size - n, "%s", paths[matched]);
        template += len;
    }
    out[n < size ? n : size - 1] = '\0';
}

/* linear: 0 softmax, 1 elu features, 2 taylor features, 3 elu with decay */
static void check_attention_tool(const char *variant, int linear, int causal)
{
    char dir[64], args[2048];
    make_temp_dir(dir);
    static double q[B * H * N * D], k[B * H * N * D], v[B * H * N * M], ref[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    char pq[128], pk[128], pv[128], pout[128];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pk, sizeof pk, "%s/k.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pout, sizeof pout, "%s/o/out.npy", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pk, k, 4, qk_shape, 2);
    write_random(pv, v, 4, v_shape, 3);
    snprintf(args, sizeof args, "attention --variant %s %s %s --q %s --k %s --v %s --out %s/o",
             variant, causal ? "--causal causal" : "", linear == 2 ? "--feature-map taylor" : "",
             pq, pk, pv, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_npy out;
    cr_assert_eq(lt_npy_read_f64(&out, pout), LT_OK);
    cr_assert_eq(out.ndim, 4);
    cr_assert_eq(out.shape[3], M);
    reference(ref, q, k, v, linear, causal);
    for (int i = 0; i < B * H * N * M; i++)
        cr_assert_lt(fabs(out.data_f64[i] - ref[i]), 1e-5 * (1 + fabs(ref[i])),
                     "%s causal=%d element %d: %g vs %g", variant, causal, i, out.data_f64[i],
                     ref[i]);
    lt_npy_free(&out);
}

Test(attention_tool, softmax_matches_reference) { check_attention_tool("softmax", 0, 0); }
Test(attention_tool, causal_softmax_matches_reference) { check_attention_tool("softmax", 0, 1); }
Test(attention_tool, linear_matches_reference) { check_attention_tool("linear", 1, 0); }
Test(attention_tool, causal_linear_matches_reference) { check_attention_tool("linear", 1, 1); }
Test(attention_tool, taylor_matches_reference)
{
    check_attention_tool("linear", 2, 0);
    check_attention_tool("linear", 2, 1);
}
Test(attention_tool, decay_matches_reference) { check_attention_tool("decay", 3, 1); }

/* lsh with one chunk over the whole sequence is softmax over the other
 * positions with keys q / |q| (the query's own key only when causal leaves
 * nothing else); it reads no --k. Its rotations follow --seed. */
Test(attention_tool, lsh_one_chunk_matches_self_masked_softmax)
{
    char dir[64], args[2048];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M], unit[B * H * N * D], ref[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    char pq[128], pv[128], pout[128], pout2[128];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pout, sizeof pout, "%s/o/out.npy", dir);
    snprintf(pout2, sizeof pout2, "%s/o2/out.npy", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pv, v, 4, v_shape, 3);
    for (int r = 0; r < B * H * N; r++) {
        double sq = 0;
        for (int d = 0; d < D; d++)
            sq += q[r * D + d] * q[r * D + d];
        for (int d = 0; d < D; d++)
            unit[r * D + d] = q[r * D + d] / sqrt(sq + D * 1e-6);
    }
    for (int causal = 0; causal <= 1; causal++) {
        snprintf(args, sizeof args,
                 "attention --variant lsh --lsh-rounds 2 --lsh-chunk %d %s --q %s --v %s "
                 "--out %s/o --overwrite",
                 N, causal ? "--causal causal" : "", pq, pv, dir);
        cr_assert_eq(ltbench(args), 0, "%s", output);
        lt_npy out;
        cr_assert_eq(lt_npy_read_f64(&out, pout), LT_OK);
        for (int bh = 0; bh < B * H; bh++)
            for (int i = 0; i < N; i++) {
                double w[N], total = 0, max_s = -INFINITY;
                int last = causal ? i : N - 1;
                for (int j = 0; j <= last; j++) {
                    double s = 0;
                    for (int d = 0; d < D; d++)
                        s += q[(bh * N + i) * D + d] * unit[(bh * N + j) * D + d];
                    w[j] = j == i && last > 0 ? -INFINITY : s / sqrt(D);
                    max_s = w[j] > max_s ? w[j] : max_s;
                }
                for (int j = 0; j <= last; j++)
                    total += (w[j] = exp(w[j] - max_s));
                for (int m = 0; m < M; m++) {
                    double acc = 0;
                    for (int j = 0; j <= last; j++)
                        acc += w[j] * v[(bh * N + j) * M + m];
                    ref[(bh * N + i) * M + m] = acc / total;
                }
            }
        for (int i = 0; i < B * H * N * M; i++)
            cr_assert_lt(fabs(out.data_f64[i] - ref[i]), 1e-5 * (1 + fabs(ref[i])),
                         "lsh causal=%d element %d: %g vs %g", causal, i, out.data_f64[i], ref[i]);
        lt_npy_free(&out);
    }
    /* chunks of 2: the hashes matter, and follow --seed */
    double first[B * H * N * M];
    for (int seed = 1; seed <= 2; seed++)
        for (int again = 0; again < 2; again++) {
            snprintf(args, sizeof args,
                     "attention --variant lsh --lsh-chunk 2 --seed %d --q %s --v %s --out %s/o2 "
                     "--overwrite",
                     seed, pq, pv, dir);
            cr_assert_eq(ltbench(args), 0, "%s", output);
            lt_npy out;
            cr_assert_eq(lt_npy_read_f64(&out, pout2), LT_OK);
            if (seed == 1 && !again)
                memcpy(first, out.data_f64, sizeof first);
            int same = memcmp(first, out.data_f64, sizeof first) == 0;
            cr_expect_eq(same, seed == 1, "seed %d run %d", seed, again);
            lt_npy_free(&out);
        }
    cr_assert_eq(ltbench("attention --variant lsh --lsh-rounds 0 --q x --v x --out x"), 2);
    ASSERT_MENTIONS("--lsh-rounds");
    snprintf(args, sizeof args,
             "attention --variant lsh --lsh-buckets 3 --q %s --v %s --out %s/o --overwrite", pq,
             pv, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--lsh-buckets");
    snprintf(args, sizeof args, "attention --variant softmax --q %s --v %s --out %s/o", pq, pv,
             dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--k is required");
}

Test(attention_tool, bad_inputs_exit_2_and_write_nothing)
{
    char dir[64];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M], e[K * N];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    const long long short_shape[4] = {B, H, N - 1, D}, e_shape[2] = {K, N};
    char pq[128], pk_short[128], pv[128], pe[128], pnan[128], pout[128];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pk_short, sizeof pk_short, "%s/kshort.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pe, sizeof pe, "%s/e.npy", dir);
    snprintf(pnan, sizeof pnan, "%s/nan.npy", dir);
    snprintf(pout, sizeof pout, "%s/o", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pk_short, q, 4, short_shape, 2);
    write_random(pv, v, 4, v_shape, 3);
    write_random(pe, e, 2, e_shape, 4);
    write_random(pnan, q, 4, qk_shape, 5);
    q[7] = NAN;
    cr_assert_eq(lt_npy_write_f64(pnan, q, 4, qk_shape), LT_OK);
    int files = check_count_entries(dir);

    struct { const char *fmt, *mention; } bad[] = {
        {"attention --variant softmax --q @Q --k @KS --v @V --out @OUT", "--k has shape"},
        {"attention --variant linear --q @NAN --k @Q --v @V --out @OUT", "NaN"},
        {"attention --variant decay --q @Q --k @Q --v @V --out @OUT", "--causal: decay"},
        {"attention --variant linformer --causal causal --q @Q --k @Q --v @V --e @E --f @E "
         "--out @OUT", "causal"},
        {"attention --variant linformer --q @Q --k @Q --v @V --out @OUT", "--e"},
        {"attention --variant softmax --q @Q --k @Q --v @V --e @E --out @OUT",
         "linformer only"},
        {"attention --variant softmax --q @Q --k @Q --v @V --dq @OUT --out @OUT",
         "--dq is now --out"},
        {"attention --variant softmax --causal both --q @Q --k @Q --v @V --out @OUT",
         "--causal both: attention runs one masking per call"},
        {"attention --variant softmax --causal --q @Q --k @Q --v @V --out @OUT",
         "--causal: expected one of causal|noncausal|both before --q"},
        {"attention --variant lsh --rounds 2 --q @Q --v @V --out @OUT",
         "--rounds is now --lsh-rounds"},
        {"attention --variant softmax --q @Q --k @Q --v @V --out @OUT/out.npy",
         "expected a folder"},
        {"attention --variant softmax --q @Q --k @Q --v @Q/none.npy --out @OUT",
         "none.npy"},
        {"attention --variant softmax --q @E --k @Q --v @V --out @OUT", "4-d"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[] = {"@Q", "@KS", "@V", "@E", "@NAN", "@OUT"};
        const char *paths[] = {pq, pk_short, pv, pe, pnan, pout};
        char cmd[1024];
        expand(cmd, sizeof cmd, bad[i].fmt, names, paths, 6);
        cr_assert_eq(ltbench(cmd), 2, "%s:\n%s", cmd, output);
        ASSERT_MENTIONS(bad[i].mention);
        cr_assert_eq(check_count_entries(dir), files, "nothing written by: %s", cmd);
    }
}

/* A file of OUT that is an input's file, however OUT is spelt (another
 * relative form) and whatever links the input (a symbolic or hard one), is
 * refused before anything is read or written, with --overwrite too. */
Test(attention_tool, outputs_never_overwrite_inputs)
{
    char dir[64];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    char pq[128], pv[128], pd[128], path[160];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pd, sizeof pd, "%s/d/dv.npy", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pv, v, 4, v_shape, 2);
    const char *folders[] = {"s", "h", "d"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, folders[i]);
        cr_assert_eq(mkdir(path, 0755), 0);
    }
    write_random(pd, v, 4, v_shape, 3);
    snprintf(path, sizeof path, "%s/s/out.npy", dir);
    cr_assert_eq(symlink(pq, path), 0);
    snprintf(path, sizeof path, "%s/h/dq.npy", dir);
    cr_assert_eq(link(pv, path), 0);
    size_t q_bytes = 0;
    unsigned char *q_before = check_read_file(pq, &q_bytes);
    int files = check_count_entries(dir);

    struct { const char *fmt, *mention; } bad[] = {
        {"--out @D/s", "--out @D/s: its out.npy is the input --q"},
        {"--out @D/s --overwrite", "is the input --q"},
        {"--out @D/h/../s", "is the input --q"},
        {"--out @D/h --dout @D/d/dv.npy", "its dq.npy is the input --v"},
        {"--out @D/d --dout @D/d/dv.npy --overwrite", "its dv.npy is the input --dout"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[] = {"@D"};
        const char *paths[] = {dir};
        char tail[1024], mention[512], cmd[2048];
        expand(tail, sizeof tail, bad[i].fmt, names, paths, 1);
        expand(mention, sizeof mention, bad[i].mention, names, paths, 1);
        snprintf(cmd, sizeof cmd, "attention --variant softmax --q %s --k %s --v %s %s", pq, pq,
                 pv, tail);
        cr_assert_eq(ltbench(cmd), 2, "%s:\n%s", cmd, output);
        ASSERT_MENTIONS(mention);
        cr_assert_eq(check_count_entries(dir), files, "nothing written by: %s", cmd);
        size_t bytes = 0;
        unsigned char *q_now = check_read_file(pq, &bytes);
        cr_assert(bytes == q_bytes && memcmp(q_now, q_before, bytes) == 0, "q.npy changed: %s",
                  cmd);
        free(q_now);
    }
    free(q_before);
    /* outputs in the inputs' own folder are fine */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "attention --variant softmax --q %s --k %s --v %s --out %s "
             "--dout %s", pq, pq, pv, dir, pd);
    cr_assert_eq(ltbench(cmd), 0, "%s:\n%s", cmd, output);
    const char *written[] = {"out.npy", "dq.npy", "dk.npy", "dv.npy"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, written[i]);
        cr_assert_eq(access(path, F_OK), 0, "%s written", path);
    }
    snprintf(path, sizeof path, "%s/de.npy", dir);
    cr_assert_eq(access(path, F_OK), -1, "softmax has no E to differentiate");
    check_remove_tree(dir);
}

/* q, k, v, dout, OUT, more flags */
#define OUTPUTS_RUN "attention --variant softmax --q %s --k %s --v %s --dout %s --out %s%s"

/* An earlier run's .npy outputs are kept: a run that would write over any
 * of them is refused before anything is read or written (exit 2, naming
 * the file and --overwrite), and replaces them with --overwrite. */
Test(attention_tool, earlier_outputs_are_replaced_only_with_overwrite)
{
    char dir[64], args[2048], pq[128], pv[128], pd[128], po[128], pn[128];
    char pout[160], pdq[160], pnew_dq[160];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pd, sizeof pd, "%s/dout.npy", dir);
    snprintf(po, sizeof po, "%s/o", dir);
    snprintf(pn, sizeof pn, "%s/n", dir);
    snprintf(pout, sizeof pout, "%s/out.npy", po);
    snprintf(pdq, sizeof pdq, "%s/dq.npy", po);
    snprintf(pnew_dq, sizeof pnew_dq, "%s/dq.npy", pn);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pv, v, 4, v_shape, 2);
    write_random(pd, v, 4, v_shape, 3);
    snprintf(args, sizeof args, OUTPUTS_RUN, pq, pq, pv, pd, po, "");
    cr_assert_eq(ltbench(args), 0, "%s", output);
    size_t out_bytes = 0, dq_bytes = 0;
    unsigned char *out_before = check_read_file(pout, &out_bytes);
    unsigned char *dq_before = check_read_file(pdq, &dq_bytes);
    cr_assert(out_before != NULL && dq_before != NULL);
    /* a folder where only the gradient is: out.npy is not written either */
    cr_assert_eq(mkdir(pn, 0755), 0);
    cr_assert_eq(check_write_file(pnew_dq, dq_before, dq_bytes), 0);
    write_random(pq, q, 4, qk_shape, 4); /* other inputs: a replacement would show */
    int files = check_count_entries(dir), in_o = check_count_entries(po);
    struct { const char *out, *mention; } refused[] = {
        {po, pout},     /* all exist: the first named */
        {pn, pnew_dq},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(args, sizeof args, OUTPUTS_RUN, pq, pq, pv, pd, refused[i].out, "");
        cr_assert_eq(ltbench(args), 2, "%s:\n%s", args, output);
        char mention[200];
        snprintf(mention, sizeof mention, "--out %s", refused[i].mention);
        ASSERT_MENTIONS(mention);
        ASSERT_MENTIONS("--overwrite");
        cr_assert_eq(check_count_entries(dir), files, "nothing written by: %s", args);
        cr_assert_eq(check_count_entries(po), in_o, "nothing written by: %s", args);
        cr_assert_eq(check_count_entries(pn), 1, "nothing written by: %s", args);
        size_t bytes = 0;
        unsigned char *now = check_read_file(pout, &bytes);
        cr_assert(bytes == out_bytes && memcmp(now, out_before, bytes) == 0, "out.npy changed");
        free(now);
        now = check_read_file(pdq, &bytes);
        cr_assert(bytes == dq_bytes && memcmp(now, dq_before, bytes) == 0, "dq.npy changed");
        free(now);
    }
    snprintf(args, sizeof args, OUTPUTS_RUN, pq, pq, pv, pd, po, " --overwrite");
    cr_assert_eq(ltbench(args), 0, "%s", output);
    size_t bytes = 0;
    unsigned char *now = check_read_file(pout, &bytes);
    cr_assert(bytes == out_bytes && memcmp(now, out_before, bytes) != 0, "out.npy replaced");
    free(now);
    cr_assert_eq(check_count_entries(po), in_o, "replaced whole, no temporary left");
    free(out_before);
    free(dq_before);
    cr_assert_eq(ltbench("attention --help"), 0);
    ASSERT_MENTIONS("--overwrite");
}

/* Finding 2: a normaliser that can be 0 is refused. Finding 7: a run that
 * fails writes none of its outputs over earlier ones. */
Test(attention_tool, zero_normaliser_and_failed_outputs_leave_files_alone)
{
    char dir[64];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    char pq[128], pv[128], po[128], pout[160], pdq[160], pdk[160], args[1024];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(po, sizeof po, "%s/o", dir);
    snprintf(pout, sizeof pout, "%s/out.npy", po);
    snprintf(pdq, sizeof pdq, "%s/dq.npy", po);
    snprintf(pdk, sizeof pdk, "%s/dk.npy", po);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pv, v, 4, v_shape, 3);
    snprintf(args, sizeof args,
             "attention --variant linear --feature-map relu --eps 0 --q %s --k %s --v %s "
             "--out %s",
             pq, pq, pv, po);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--eps");
    cr_assert_eq(access(pout, F_OK), -1, "nothing written");
    /* softmax overflowing to NaN is told no hint about another variant's map */
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        q[i] = 1e20;
    cr_assert_eq(lt_npy_write_f64(pq, q, 4, qk_shape), LT_OK);
    snprintf(args, sizeof args, "attention --variant softmax --q %s --k %s --v %s --out %s", pq,
             pq, pv, po);
    cr_assert_neq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("nothing was written");
    cr_assert(strstr(output, "relu") == NULL, "a hint about relu for softmax:\n%s", output);
    cr_assert_eq(access(pout, F_OK), -1, "nothing written");
    write_random(pq, q, 4, qk_shape, 1);

    /* Earlier outputs, then a run whose dk.npy cannot be written: a folder
     * has its name. */
    cr_assert_eq(mkdir(pdk, 0755), 0);
    FILE *f = fopen(pout, "w");
    fputs("earlier", f);
    fclose(f);
    f = fopen(pdq, "w");
    fputs("earlier", f);
    fclose(f);
    snprintf(args, sizeof args,
             "attention --variant linear --q %s --k %s --v %s --out %s --dout %s --overwrite",
             pq, pq, pv, po, pv);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS(pdk);
    char text[16] = "";
    f = fopen(pout, "r");
    cr_assert(fgets(text, sizeof text, f) != NULL);
    fclose(f);
    cr_assert_str_eq(text, "earlier", "out.npy kept");
    f = fopen(pdq, "r");
    cr_assert(fgets(text, sizeof text, f) != NULL);
    fclose(f);
    cr_assert_str_eq(text, "earlier", "dq.npy kept");
}

/* ---- ltbench attention with gates (delta, gated-delta, gla) ---- */

/* Gate files as a model gives them: beta uniform in [0, 1]; log_alpha the
 * logarithm of alpha uniform in [0.5, 1). */
static void write_gate(const char *path, double *data, int ndim, const long long *shape,
                       int log_alpha, uint64_t stream)
{
    lt_rng rng;
    lt_rng_seed(&rng, 13, stream);
    for (long long i = 0; i < count_of(ndim, shape); i++)
        data[i] = log_alpha ? log(0.5 + 0.5 * lt_rng_uniform(&rng)) : lt_rng_uniform(&rng);
    cr_assert_eq(lt_npy_write_f64(path, data, ndim, shape), LT_OK);
}

/* The inputs of a gated run in dir (q, k, v, dout, beta, log_alpha, gla's
 * (B,H,N,D)), as float for the library. */
typedef struct gated_files {
    char q[128], k[128], v[128], dout[128], beta[128], la[128], la_keys[128];
    float fq[B * H * N * D], fk[B * H * N * D], fv[B * H * N * M], fdout[B * H * N * M];
    float fbeta[B * H * N], fla[B * H * N], fla_keys[B * H * N * D];
} gated_files;

static void to_floats(float *out, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)x[i];
}

static void write_gated_files(gated_files *g, const char *dir)
{
    static double x[B * H * N * D];
    const long long qk[4] = {B, H, N, D}, vo[4] = {B, H, N, M}, pairs[3] = {B, H, N};
    struct { char *path; const char *name; float *f; int ndim, gate; const long long *shape; }
        files[] = {{g->q, "q", g->fq, 4, -1, qk},         {g->k, "k", g->fk, 4, -1, qk},
                   {g->v, "v", g->fv, 4, -1, vo},         {g->dout, "dout", g->fdout, 4, -1, vo},
                   {g->beta, "beta", g->fbeta, 3, 0, pairs},
                   {g->la, "la", g->fla, 3, 1, pairs},
                   {g->la_keys, "lak", g->fla_keys, 4, 1, qk}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(files[i].path, 128, "%s/%s.npy", dir, files[i].name);
        if (files[i].gate < 0)
            write_random(files[i].path, x, files[i].ndim, files[i].shape, 20 + i);
        else
            write_gate(files[i].path, x, files[i].ndim, files[i].shape, files[i].gate, 20 + i);
        to_floats(files[i].f, x, (size_t)count_of(files[i].ndim, files[i].shape));
    }
}

/* The file's floats equal `want` bit for bit (the kernels' bits do not
 * depend on the thread count), with the shape given. */
static void expect_file_equals(const char *path, const float *want, int ndim,
                               const long long *shape)
{
    lt_npy a;
    cr_assert_eq(lt_npy_read(&a, path), LT_OK, "%s", lt_last_error());
    cr_expect_eq(a.ndim, ndim, "%s", path);
    for (int d = 0; d < ndim; d++)
        cr_expect_eq(a.shape[d], shape[d], "%s dimension %d", path, d);
    cr_expect(memcmp(a.data, want, (size_t)count_of(ndim, shape) * sizeof(float)) == 0,
              "%s differs", path);
    lt_npy_free(&a);
}

/* The tool's output and every gradient equal the library's, called here
 * on the same inputs. */
static void check_gated_tool(const char *variant)
{
    char dir[64], args[2048];
    make_temp_dir(dir);
    static gated_files g;
    write_gated_files(&g, dir);
    lt_attn_config config = lt_attn_default_config(variant);
    lt_attn attn;
    cr_assert_eq(lt_attn_init(&attn, &config), LT_OK);
    int wb, wa;
    lt_attn_gate_widths(&attn, D, &wb, &wa);
    const char *la_path = wa == D ? g.la_keys : g.la;
    snprintf(args, sizeof args,
             "attention --variant %s --causal causal --q %s --k %s --v %s --dout %s%s%s%s%s "
             "--out %s/o",
             variant, g.q, g.k, g.v, g.dout, wb ? " --beta " : "", wb ? g.beta : "",
             wa ? " --log-alpha " : "", wa ? la_path : "", dir);
    cr_assert_eq(ltbench(args), 0, "%s:\n%s", args, output);

    const lt_attn_shape s = {.B = B, .H = H, .N = N, .D = D, .M = M};
    static float out[B * H * N * M], dq[B * H * N * D], dk[B * H * N * D], dv[B * H * N * M];
    static float dbeta[B * H * N], dla[B * H * N * D];
    memset(dq, 0, sizeof dq), memset(dk, 0, sizeof dk), memset(dv, 0, sizeof dv);
    memset(dbeta, 0, sizeof dbeta), memset(dla, 0, sizeof dla);
    lt_attn_gates gates = {wb ? g.fbeta : NULL, wa ? (wa == D ? g.fla_keys : g.fla) : NULL,
                           wb ? dbeta : NULL, wa ? dla : NULL};
    void *ws = NULL;
    cr_assert_eq(lt_mem_alloc(&ws, lt_attn_workspace_bytes(&attn, s, 0), "workspace"), LT_OK);
    cr_assert_eq(lt_attn_forward_gated(&attn, s, &gates, out, NULL, ws, g.fq, g.fk, g.fv, NULL),
                 LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_attn_backward_gated(&attn, s, &gates, dq, dk, dv, NULL, ws, g.fdout, NULL,
                                        g.fq, g.fk, g.fv, NULL),
                 LT_OK, "%s", lt_last_error());
    lt_mem_free(ws);
    const long long qk[4] = {B, H, N, D}, vo[4] = {B, H, N, M}, pairs[3] = {B, H, N};
    const char *files[] = {"out", "dq", "dk", "dv", "dbeta", "dlog_alpha"};
    const float *want[] = {out, dq, dk, dv, dbeta, dla};
    const long long *shapes[] = {vo, qk, qk, vo, pairs, wa == D ? qk : pairs};
    const int ndims[] = {4, 4, 4, 4, 3, wa == D ? 4 : 3};
    for (int i = 0; i < 6; i++) {
        if ((i == 4 && !wb) || (i == 5 && !wa))
            continue;
        char path[160];
        snprintf(path, sizeof path, "%s/o/%s.npy", dir, files[i]);
        expect_file_equals(path, want[i], ndims[i], shapes[i]);
    }
    char unread[160]; /* a gate the variant does not read has no gradient */
    snprintf(unread, sizeof unread, "%s/o/%s.npy", dir, wb ? "dlog_alpha" : "dbeta");
    if (!wa || !wb)
        cr_expect_eq(access(unread, F_OK), -1, "%s: %s", variant, unread);
    check_remove_tree(dir);
}

Test(attention_tool, gated_variants_match_the_library)
{
    check_gated_tool("delta");
    check_gated_tool("gated-delta");
    check_gated_tool("gla");
}

/* Gates are required where the variant reads them and refused where it
 * does not, shaped and in range, never an output's path; their gradient
 * files follow --overwrite as the others do. Nothing is written by a
 * refused run. */
Test(attention_tool, gates_required_refused_and_checked)
{
    char dir[64];
    make_temp_dir(dir);
    static gated_files g;
    write_gated_files(&g, dir);
    static double x[B * H * N * D];
    const long long pairs[3] = {B, H, N}, longer[3] = {B, H, N + 1};
    char big[128], positive[128], pshort[128];
    snprintf(big, sizeof big, "%s/big.npy", dir);
    snprintf(positive, sizeof positive, "%s/positive.npy", dir);
    snprintf(pshort, sizeof pshort, "%s/long.npy", dir);
    write_gate(big, x, 3, pairs, 0, 1);
    x[5] = 1.5;
    cr_assert_eq(lt_npy_write_f64(big, x, 3, pairs), LT_OK);
    write_gate(positive, x, 3, pairs, 1, 2);
    x[4] = 0.25;
    cr_assert_eq(lt_npy_write_f64(positive, x, 3, pairs), LT_OK);
    write_gate(pshort, x, 3, longer, 0, 3);
    int files = check_count_entries(dir);
    struct { const char *fmt, *mention; } bad[] = {
        {"--variant delta --causal causal", "needs --beta"},
        {"--variant gated-delta --causal causal --beta @BETA", "needs --log-alpha"},
        {"--variant gla --causal causal --log-alpha @LA",
         "--log-alpha @LA: expected a 4-d array"},
        {"--variant gla --causal causal --log-alpha @LAK --beta @BETA", "--beta belongs to"},
        {"--variant linear --log-alpha @LA", "--log-alpha belongs to"},
        {"--variant delta --causal causal --beta @BETA --dbeta @D/db.npy",
         "--dbeta is now --out"},
        {"--variant delta --causal causal --beta @BIG", "--beta @BIG: element 5 is 1.5"},
        {"--variant gated-delta --causal causal --beta @BETA --log-alpha @POS",
         "element 4 is 0.25"},
        {"--variant delta --causal causal --beta @LONG", "--beta has shape"},
        {"--variant delta --beta @BETA", "causal only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[] = {"@BETA", "@LAK", "@LA", "@BIG", "@POS", "@LONG", "@DOUT", "@D"};
        const char *paths[] = {g.beta, g.la_keys, g.la, big, positive, pshort, g.dout, dir};
        char tail[1024], mention[512], cmd[2048];
        expand(tail, sizeof tail, bad[i].fmt, names, paths, 8);
        expand(mention, sizeof mention, bad[i].mention, names, paths, 8);
        snprintf(cmd, sizeof cmd, "attention --q %s --k %s --v %s --out %s/o %s", g.q, g.k,
                 g.v, dir, tail);
        cr_assert_eq(ltbench(cmd), 2, "%s:\n%s", cmd, output);
        ASSERT_MENTIONS(mention);
        cr_assert_eq(check_count_entries(dir), files, "nothing written by: %s", cmd);
    }
    /* an earlier dbeta.npy is kept without --overwrite, replaced with it */
    char cmd[2048], dbeta[160];
    snprintf(cmd, sizeof cmd,
             "attention --variant delta --causal causal --q %s --k %s --v %s --beta %s "
             "--dout %s --out %s/g",
             g.q, g.k, g.v, g.beta, g.dout, dir);
    cr_assert_eq(ltbench(cmd), 0, "%s:\n%s", cmd, output);
    snprintf(dbeta, sizeof dbeta, "%s/g/out.npy", dir);
    cr_assert_eq(remove(dbeta), 0);
    snprintf(dbeta, sizeof dbeta, "%s/g/dbeta.npy", dir);
    cr_assert_eq(ltbench(cmd), 2, "%s:\n%s", cmd, output);
    ASSERT_MENTIONS("--overwrite");
    cr_assert_eq(access(dbeta, F_OK), 0);
    strcat(cmd, " --overwrite");
    cr_assert_eq(ltbench(cmd), 0, "%s:\n%s", cmd, output);
    cr_assert_eq(ltbench("attention --help"), 0);
    ASSERT_MENTIONS("softmax|linear|linformer|lsh|decay|delta|gated-delta|gla");
    ASSERT_MENTIONS("dlog_alpha.npy");
    check_remove_tree(dir);
}

/* ---- image ---- */

/* A tiny CIFAR-format subset (named cifar10-tiny by its manifest): smooth
 * gradients so there is something to learn. */
static void write_tiny_cifar(const char *dir, int train, int test)
{
    const char *names[2] = {"train.bin", "test.bin"};
    int counts[2] = {train, test};
    char md5s[2][LT_MD5_HEX_LEN + 1], path[256];
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[s]);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        for (int i = 0; i < counts[s]; i++) {
            unsigned char record[3073];
            record[0] = i % 2 ? 5 : 3;
            for (int c = 0; c < 3; c++)
                for (int p = 0; p < 1024; p++)
                    record[1 + c * 1024 + p] = (unsigned char)((p / 32 * 8 + c * 40 + i) % 256);
            fwrite(record, 1, sizeof record, f);
        }
        fclose(f);
        unsigned char digest[LT_MD5_BYTES];
        cr_assert_eq(lt_md5_file(digest, path), LT_OK);
        lt_md5_hex(md5s[s], digest);
    }
    snprintf(path, sizeof path, "%s/SUBSET", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "ltbench-cifar10-subset 1\nname cifar10-tiny\nclasses 3 5\n"
               "train train.bin %d %s\ntest test.bin %d %s\n",
            train, md5s[0], test, md5s[1]);
    fclose(f);
}

/* Runs `image` on a tiny CIFAR subset (12 training, 4 test images) at the
 * quick preset with `flags`, into a new folder `dir`; reads its table. */
static void image_on_tiny_cifar(const char *flags, char *dir /* [64] */, lt_csv_table *t)
{
    char data[64], args[768], path[200];
    make_temp_dir(data);
    make_temp_dir(dir);
    write_tiny_cifar(data, 12, 4);
    snprintf(args, sizeof args, "image --dataset cifar10 --data %s --preset quick %s --quiet "
                                "--out %s", data, flags, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/cifar10-tiny.csv", dir);
    cr_assert_eq(lt_csv_read(t, path), LT_OK, "%s", lt_last_error());
}

/* --gen-only measures generation with untrained weights: its rows say so
 * (trained 0, no bits/dim), so the report does not call them trained. */
Test(image, gen_only_rows_say_untrained, .timeout = 300)
{
    char dir[64];
    lt_csv_table t;
    image_on_tiny_cifar("--gen-only --gen-modes recurrent,cached --gen-batches 1 "
                        "--gen-images 1 --completions 0 --variants linear", dir, &t);
    cr_assert_eq(t.nrows, 1);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "ok");
    cr_assert_str_eq(cell_str(&t, 0, "trained"), "0");
    cr_assert(isnan(cell_num(&t, 0, "test_bits_per_dim")));
    lt_csv_table_free(&t);
}

Test(image, quick_preset_trains_evaluates_and_generates, .timeout = 600)
{
    char dir[64], path[200];
    lt_csv_table t;
    image_on_tiny_cifar("--steps 6 --gen-batches 2 --gen-modes fast --completions 2 "
                        "--variants softmax,linear,lsh-1", dir, &t);
    /* softmax cached and linear recurrent at batches 2 and 1 (the recompute
     * batch, for the speed-up); recompute itself is left out here: at
     * N = 3072 it takes minutes (tests/test_model.c checks it equals the
     * forward) */
    int modes[3] = {0, 0, 0}, lsh = 0;
    for (long long r = 0; r < t.nrows; r++) {
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok");
        cr_assert_str_eq(cell_str(&t, r, "dataset"), "cifar10-tiny", "named as it is");
        double bits = cell_num(&t, r, "test_bits_per_dim");
        cr_assert(bits > 0 && bits < 16, "bits/dim %g", bits);
        /* the context-free baseline of the same pixels, the same on every row */
        double histogram = cell_num(&t, r, "histogram_bits_per_dim");
        cr_assert(histogram > 0 && histogram <= 8.0, "histogram %g", histogram);
        cr_assert_eq(histogram, cell_num(&t, 0, "histogram_bits_per_dim"));
        if (strcmp(cell_str(&t, r, "variant"), "lsh-1") == 0) {
            /* no stepped form, and recompute left out by --gen-modes fast */
            cr_assert_str_eq(cell_str(&t, r, "gen_mode"), "none");
            lsh++;
            continue;
        }
        cr_assert_gt(cell_num(&t, r, "images_per_s"), 0);
        cr_assert_geq(cell_num(&t, r, "images_generated"), cell_num(&t, r, "gen_batch"));
        const char *mode = cell_str(&t, r, "gen_mode");
        modes[strcmp(mode, "recurrent") == 0 ? 0 : strcmp(mode, "cached") == 0 ? 1 : 2]++;
        cr_assert(isfinite(cell_num(&t, r, "linear_speedup")));
    }
    cr_assert_eq(modes[0], 2);
    cr_assert_eq(modes[1], 2);
    cr_assert_eq(modes[2], 0);
    cr_assert_eq(lsh, 1, "a row with its bits/dim all the same");
    lt_csv_table_free(&t);
    const char *pngs[] = {"cifar10-tiny-softmax-samples.png", "cifar10-tiny-linear-samples.png",
                          "cifar10-tiny-softmax-completions.png", "cifar10-tiny-linear-completions.png"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, pngs[i]);
        uint8_t *pixels;
        int w, h, c;
        cr_assert_eq(lt_png_read(&pixels, &w, &h, &c, path), LT_OK, "%s", lt_last_error());
        cr_assert_eq(c, 3);
        if (i >= 2) {
            /* 2 completions of 32 x 32 with 2 pixels between, 4 times
             * enlarged: (2 * 34 + 2) x (2 * 34 + 2) pixels x 4 */
            cr_assert_eq(w, 4 * 70);
            cr_assert_eq(h, 4 * 70);
            /* white ticks in the padding where the prompt ends: row 2 + 34
             * + 16 of the grid, grey (128) elsewhere in the padding */
            const uint8_t *tick = pixels + ((size_t)(4 * 52) * w + 2) * 3;
            const uint8_t *plain = pixels + ((size_t)(4 * 45) * w + 2) * 3;
            cr_assert(tick[0] == 255 && tick[1] == 255 && tick[2] == 255, "%d", tick[0]);
            cr_assert_eq(plain[0], 128);
        }
        lt_mem_free(pixels);
    }
    snprintf(path, sizeof path, "%s/cifar10-tiny-curves.csv", dir);
    cr_assert_eq(csv_rows(path), 3 * 6);
}

Test(image, missing_or_bad_data_exit_2)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "image --dataset mnist --data %s/none --preset quick --quiet", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("fetch-mnist.sh");
    write_tiny_cifar(dir, 4, 2);
    snprintf(path, sizeof path, "%s/train.bin", dir);
    cr_assert_eq(truncate(path, 3073 * 3 + 100), 0);
    snprintf(args, sizeof args, "image --dataset cifar10 --data %s --preset quick --quiet", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("train.bin");
    cr_assert_eq(ltbench("image --gen-batches 0"), 2, "%s", output);
    ASSERT_MENTIONS("--gen-batches");
    cr_assert_eq(ltbench("image --gen-batches 16,16 --out /proc/ltbench"), 2, "%s", output);
    ASSERT_MENTIONS("listed twice");
}

/* ---- speech ---- */

Test(speech, quick_preset_builds_trains_and_evaluates_every_model, .timeout = 600)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "speech --preset quick --quiet --cache %s/cache --out %s", dir,
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("baseline");
    snprintf(path, sizeof path, "%s/speech.csv", dir);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 5);
    const char *models[5] = {"softmax", "linear", "lsh-4", "linformer", "bilstm"};
    for (int r = 0; r < 5; r++) {
        cr_assert_str_eq(cell_str(&t, r, "model"), models[r]);
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok");
        cr_assert(isfinite(cell_num(&t, r, "test_per")));
        cr_assert_gt(cell_num(&t, r, "seconds_per_epoch"), 0);
        cr_assert_gt(cell_num(&t, r, "peak_bytes"), 0);
        cr_assert_gt(cell_num(&t, r, "baseline_per"), 0.5);
        snprintf(path, sizeof path, "%s/speech-%s-utterance.png", dir, models[r]);
        cr_assert_eq(access(path, F_OK), 0, "%s", path);
    }
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/speech-curves.csv", dir);
    cr_assert_eq(csv_rows(path), 5 * 2, "a row per model and epoch");

    /* A damaged cache is noticed and rebuilt; the run goes on, and a
     * causal-only variant (gla) gets a row saying it does not apply. */
    char cache[200];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    DIR *d = opendir(cache);
    struct dirent *e;
    char file[512] = "";
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".ltspeech"))
            snprintf(file, sizeof file, "%s/%.255s", cache, e->d_name);
    closedir(d);
    cr_assert_neq(file[0], '\0', "the cache file exists");
    FILE *f = fopen(file, "r+b");
    fseek(f, 200, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    snprintf(args, sizeof args,
             "speech --preset quick --variants linear,gla --epochs 1 --overwrite --cache %s "
             "--out %s",
             cache, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("speech corpus:");
    snprintf(path, sizeof path, "%s/speech.csv", dir);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 2);
    cr_expect_str_eq(cell_str(&t, 0, "status"), "ok");
    cr_expect_str_eq(cell_str(&t, 1, "status"), "not-applicable");
    cr_expect(strstr(cell_str(&t, 1, "note"), "gla attention cannot be non-causal") != NULL,
              "%s", cell_str(&t, 1, "note"));
    lt_csv_table_free(&t);
}

Test(speech, impossible_sizes_and_missing_voices_exit_2)
{
    cr_assert_eq(ltbench("speech --hours 0 --quiet"), 2, "%s", output);
    ASSERT_MENTIONS("--hours");
    cr_assert_eq(ltbench("speech --hours 1e6 --quiet"), 2, "%s", output);
    ASSERT_MENTIONS("--hours");
    cr_assert_eq(ltbench("speech --variants softmax,gru --quiet"), 2, "%s", output);
    ASSERT_MENTIONS("gru");
    cr_assert_eq(ltbench("speech --models softmax --quiet"), 2, "%s", output);
    ASSERT_MENTIONS("--models is now --variants: bilstm is one of its items");
    /* espeak-ng's data mirrored without one of the voices the corpus uses */
    char dir[64], args[512], cmd[1024], env[200];
    make_temp_dir(dir);
    snprintf(cmd, sizeof cmd,
             "real=$(ls -d /usr/lib/*/espeak-ng-data /usr/share/espeak-ng-data 2>/dev/null | "
             "head -n 1) && cp -rs \"$real\" '%s/espeak-ng-data' && "
             "rm '%s/espeak-ng-data/lang/gmw/en-US-nyc'",
             dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(env, sizeof env, "ESPEAK_DATA_PATH=%s", dir);
    snprintf(args, sizeof args, "speech --preset quick --quiet --cache %s/cache --out %s/out",
             dir, dir);
    cr_assert_eq(ltbench_env(env, args), 2, "%s", output);
    ASSERT_MENTIONS("en-US-nyc");
    ASSERT_MENTIONS("espeak-ng-data");
}

/* ---- data-parallel runs over MPI ---- */

/* mpirun as root needs Open MPI's consent; one OpenMP thread per rank. */
#define MPIRUN_ENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1"

static int have_mpirun(void) { return system("command -v mpirun >/dev/null 2>&1") == 0; }

/* Runs `mpirun -np 2 ltbench ARGS`; returns the exit status. */
static int mpirun2(const char *args)
{
    /* In a sanitizer build, Open MPI's own exit-time leaks are suppressed
     * (tests/lsan.supp), which needs whole stacks and its components still
     * loaded at exit. */
    const char *asan = getenv("ASAN_OPTIONS");
    char launcher[2048];
    if (asan != NULL)
        snprintf(launcher, sizeof launcher,
                 "%s ASAN_OPTIONS='%s:fast_unwind_on_malloc=0' "
                 "OMPI_MCA_mca_base_component_disable_dlclose=1 mpirun --oversubscribe -np 2",
                 MPIRUN_ENV, asan);
    else
        snprintf(launcher, sizeof launcher, "%s mpirun --oversubscribe -np 2", MPIRUN_ENV);
    return ltbench_env(launcher, args);
}

static void loss_column(const char *dir, double *out, long long n)
{
    char path[200];
    snprintf(path, sizeof path, "%s/curves.csv", dir);
    losses_of(path, out, n);
}

/* Two ranks give the bits of one process with the same two shards; a
 * checkpoint written by two ranks resumes in one process to the same
 * curve. */
Test(mpi, two_ranks_equal_one_process_and_checkpoints_move_between_them, .timeout = 600)
{
    if (!have_mpirun())
        cr_skip_test("mpirun is not installed (Debian: openmpi-bin)");
    char two[64], one[64], moved[64], args[512];
    make_temp_dir(two);
    make_temp_dir(one);
    make_temp_dir(moved);
    const char *run = "copy --preset quick --variants linear --threads 1 --quiet";
    snprintf(args, sizeof args, "%s --steps 100 --out %s", run, two);
    cr_assert_eq(mpirun2(args), 0, "%s", output);
    snprintf(args, sizeof args, "%s --steps 100 --shards 2 --out %s", run, one);
    cr_assert_eq(ltbench_env(MPIRUN_ENV, args), 0, "%s", output);
    snprintf(args, sizeof args, "%s --steps 50 --checkpoint-every 25 --out %s", run, moved);
    cr_assert_eq(mpirun2(args), 0, "%s", output);
    snprintf(args, sizeof args, "%s --steps 100 --shards 2 --resume --out %s", run, moved);
    cr_assert_eq(ltbench_env(MPIRUN_ENV, args), 0, "%s", output);
    static double a[100], b[100], c[100];
    loss_column(two, a, 100);
    loss_column(one, b, 100);
    loss_column(moved, c, 100);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(a[i], b[i], "update %d: %.17g (2 ranks) vs %.17g (1)", i + 1, a[i], b[i]);
        cr_assert_eq(c[i], b[i], "update %d after moving: %.17g vs %.17g", i + 1, c[i], b[i]);
    }
    char path[200], other[200];
    snprintf(path, sizeof path, "%s/summary.csv", two);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_str_eq(cell_str(&t, 0, "ranks"), "2");
    cr_assert(cell_num(&t, 0, "comm_s_per_update") > 0);
    /* the machine's cores, though mpirun binds each rank to one */
    cr_assert_eq(cell_num(&t, 0, "cores"), (double)sysconf(_SC_NPROCESSORS_ONLN));
    lt_csv_table_free(&t);
    /* the held-out evaluation too, to the last bit: its chunks are summed
     * in one order whatever rank computed them */
    snprintf(other, sizeof other, "%s/summary.csv", one);
    lt_csv_table u;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(lt_csv_read(&u, other), LT_OK);
    cr_assert_str_eq(cell_str(&t, 0, "eval_loss"), cell_str(&u, 0, "eval_loss"));
    cr_assert_str_eq(cell_str(&t, 0, "eval_copy_accuracy"), cell_str(&u, 0, "eval_copy_accuracy"));
    lt_csv_table_free(&t);
    lt_csv_table_free(&u);
}

/* A rank that fails stops them all with its message and status. */
Test(mpi, a_failing_rank_stops_every_rank, .timeout = 120)
{
    if (!have_mpirun())
        cr_skip_test("mpirun is not installed (Debian: openmpi-bin)");
    cr_assert_eq(mpirun2("copy --preset quick --threads 1 --quiet --out /proc/ltbench"), 2, "%s",
                 output);
    ASSERT_MENTIONS("/proc/ltbench");
    cr_assert_eq(mpirun2("copy --preset quick --threads 1 --quiet --shards 1"), 2, "%s", output);
    ASSERT_MENTIONS("--shards");
}

/* ---- suite ---- */

Test(suite, runs_experiments_and_writes_the_report, .timeout = 300)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "suite --preset quick --experiments copy --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    char *text = check_read_text(path);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "## Copy task") != NULL, "%s", text);
    cr_assert(strstr(text, "ltbench copy --preset=quick") != NULL, "%s", text);
    cr_assert(strstr(text, "linear-causal-chunked") != NULL);
    /* the paper's claims under the table, each with its rule and verdict */
    cr_assert(strstr(text, "The paper's conclusions, judged on the rows above") != NULL,
              "%s", text);
    cr_assert(strstr(text, "Fig. 2: linear attention converges smoothly") != NULL, "%s",
              text);
    free(text);
    snprintf(path, sizeof path, "%s/figures/copy-curves.gp", dir);
    cr_assert_eq(access(path, F_OK), 0, "the figure's script is written");
    /* the report again from the same CSVs, nothing run */
    snprintf(args, sizeof args, "suite --preset quick --experiments copy --report-only --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    /* --report replaces a report, not a file that only has its name */
    snprintf(path, sizeof path, "%s/notes.md", dir);
    FILE *notes = fopen(path, "w");
    fputs("my notes\n", notes);
    fclose(notes);
    snprintf(args, sizeof args,
             "suite --preset quick --experiments copy --report-only --out %s --report %s", dir,
             path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("is not an ltbench report");
    text = check_read_text(path);
    cr_assert_str_eq(text, "my notes\n");
    free(text);
    cr_assert_eq(ltbench("suite --out /proc/ltbench"), 2, "%s", output);
    /* an earlier suite's results are neither replaced nor mixed unasked */
    snprintf(args, sizeof args, "suite --preset quick --experiments copy --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--resume");
    ASSERT_MENTIONS("--overwrite");
    snprintf(args, sizeof args, "suite --preset quick --experiments copy --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("already trained");
}

/* The sweeps beyond the paper at the quick sizes: their tables and figures
 * under a section of their own. */
Test(suite, sweeps_beyond_the_paper_in_the_report, .timeout = 300)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "suite --preset quick --experiments crossover,decode --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    char *text = check_read_text(path);
    cr_assert_not_null(text);
    const char *expected[] = {"## Beyond the paper", "### Crossover", "### Decoding",
                              "ltbench crossover --preset=quick --out=",
                              "ltbench decode --preset=quick --out=", "linear-causal-prefix",
                              "recompute",
                              "crossover N", "ms/token"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_expect(strstr(text, expected[i]) != NULL, "missing %s in:\n%s", expected[i],
                  text);
    cr_expect(strstr(text, "The paper: For each") == NULL, "not the paper's claim");
    free(text);
    const char *files[] = {"crossover/crossover.csv", "crossover/crossover-table.csv",
                           "decode/decode.csv", "figures/crossover.gp", "figures/decode.gp"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        cr_expect_eq(access(path, F_OK), 0, "%s", path);
    }
    /* --resume keeps what they wrote */
    snprintf(args, sizeof args,
             "suite --preset quick --experiments crossover,decode --resume --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("kept: the earlier run's crossover-table.csv");
    ASSERT_MENTIONS("kept: the earlier run's decode.csv");
    /* a CSV that a killed run left unfinished (its journal alone) is
     * measured again, not refused as an earlier run's results */
    char journal[220];
    snprintf(path, sizeof path, "%s/decode/decode.csv", dir);
    snprintf(journal, sizeof journal, "%s.partial", path);
    cr_assert_eq(rename(path, journal), 0);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(access(path, F_OK), 0, "decode.csv measured again");
    cr_assert_neq(access(journal, F_OK), 0, "its journal gone");
}

/* An unknown or repeated experiment is refused before anything runs or is
 * written. */
/* The medium preset's plan has a step for every section (the ablation and
 * the appendix's CPU run besides the experiments), each with its own
 * arguments; --plan prints it and runs and writes nothing. */
Test(suite, medium_plan_lists_every_step_with_its_arguments, .timeout = 120)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "suite --preset medium --plan --out %s/out", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    const char *expected[] = {"ltbench copy --preset=medium",
                              "copy-h16 --head-dim=16 --variants=softmax,linear --steps=6000",
                              "speech-8h --hours=8 --variants=softmax,bilstm",
                              "speech-dropout --dropout=0.1 --variants=softmax,linear",
                              "image-l4 --layers=4 --variants=softmax,linear",
                              "image-long --steps=28000 --lr-drops=24000:0.1 "
                              "--variants=softmax,linear",
                              "image-drop7 --lr-drops=7000:0.1 --variants=softmax,linear",
                              "image-paper --layers=16", "--gen-only --gen-batches=1",
                              "image-paper --layers=8 --heads=8", "copy-seed2 --seed=2",
                              "copy-seed3 --seed=3", "speech-seed2 --seed=2",
                              "speech-seed3 --seed=3", "image-seed2 --seed=2 --gen-modes=fast",
                              "ltbench scaling --preset=medium --out=",
                              "ltbench speech --preset=medium", "ltbench decode"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        ASSERT_MENTIONS(expected[i]);
    snprintf(path, sizeof path, "%s/out", dir);
    cr_assert_neq(access(path, F_OK), 0, "--plan wrote %s", path);
    /* at other presets the medium-only steps are left out */
    snprintf(args, sizeof args, "suite --preset small --plan --out %s/small", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert(strstr(output, "copy-h16") == NULL && strstr(output, "image-paper") == NULL &&
                  strstr(output, "speech-8h") == NULL && strstr(output, "image-l4") == NULL &&
                  strstr(output, "image-long") == NULL && strstr(output, "image-seed2") == NULL &&
                  strstr(output, "image-drop7") == NULL &&
                  strstr(output, "speech-dropout") == NULL && strstr(output, "-seed") == NULL,
              "%s", output);
    ASSERT_MENTIONS("ltbench scaling --preset=small --out=");
}

/* A report rewritten from CSVs: each is read as compare reads it, so a
 * damaged or misplaced one is refused by name and the report standing
 * kept; one that passes lists the runs it has no results of, and says the
 * commands that wrote the CSVs are theirs, not this run's flags. */
Test(suite, report_only_refuses_what_it_cannot_trust, .timeout = 120)
{
    char dir[64], args[1536], path[256], copy_csv[256], source[512];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "suite --preset medium --report-only --out %s/none", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("no such folder");
    snprintf(path, sizeof path, "%s/out/copy", dir);
    snprintf(args, sizeof args, "mkdir -p %s", path);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "suite --preset medium --report-only --out %s/out", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output); /* an empty folder: nothing to report */
    ASSERT_MENTIONS("no result CSV of the suite there");

    snprintf(source, sizeof source, "%s/results/baseline/copy/summary.csv",
             getenv("LTBENCH_SOURCE"));
    snprintf(copy_csv, sizeof copy_csv, "%s/out/copy/summary.csv", dir);
    char *good = check_read_text(source);
    cr_assert_not_null(good, "%s", source);
    FILE *f = fopen(copy_csv, "w");
    fputs(good, f);
    fclose(f);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/out/REPORT.md", dir);
    char *report = check_read_text(path);
    cr_assert_not_null(report);
    cr_assert_not_null(strstr(report, "rewritten by `ltbench suite --report-only`"), "%s", report);
    cr_assert_null(strstr(report, "--preset=medium"), "%s", report);
    cr_assert_not_null(strstr(report, "- image: not in this report (Image generation: twice the "
                                      "depth (an ablation)): no image-l4/mnist.csv in the folder "
                                      "yet"),
                       "%s", report);

    /* damaged copies of it: each refused, the report above kept */
    char *header_end = strchr(good, '\n');
    const char *second_row = strchr(strchr(header_end + 1, '\n') + 1, '\n');
    struct {
        const char *what, *expect;
    } damages[] = {{"header only", "no data rows"},
                   {"duplicate row", "are the same case"},
                   {"text loss", "expected a number"}};
    for (size_t d = 0; d < sizeof damages / sizeof damages[0]; d++) {
        f = fopen(copy_csv, "w");
        if (d == 0) {
            fwrite(good, 1, (size_t)(header_end + 1 - good), f);
        } else if (d == 1) {
            fputs(good, f);
            fwrite(header_end + 1, 1, (size_t)(second_row - header_end), f); /* row 1 again */
        } else {
            /* the first data row's loss_end cell (column 24 of the copy summary) */
            fputs(good, f);
            fclose(f);
            snprintf(args, sizeof args,
                     "awk -F, 'BEGIN{OFS=\",\"} NR==1{for(i=1;i<=NF;i++) if($i==\"loss_end\") "
                     "c=i} NR==2{$c=\"abc\"} {print}' %s > %s.x && mv %s.x %s",
                     copy_csv, copy_csv, copy_csv, copy_csv);
            cr_assert_eq(system(args), 0);
            f = NULL;
        }
        if (f != NULL)
            fclose(f);
        snprintf(args, sizeof args, "suite --preset medium --report-only --out %s/out", dir);
        cr_assert_eq(ltbench(args), 2, "%s: %s", damages[d].what, output);
        ASSERT_MENTIONS(damages[d].expect);
        ASSERT_MENTIONS("copy/summary.csv");
        char *kept = check_read_text(path);
        cr_assert_not_null(kept);
        cr_assert_str_eq(kept, report, "%s: the report was rewritten", damages[d].what);
        free(kept);
    }
    /* another experiment's table where the copy summary belongs */
    snprintf(source, sizeof source, "%s/results/baseline/scaling/scaling.csv",
             getenv("LTBENCH_SOURCE"));
    char *scaling = check_read_text(source);
    cr_assert_not_null(scaling);
    f = fopen(copy_csv, "w");
    fputs(scaling, f);
    fclose(f);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("copy/summary.csv");
    free(scaling);
    free(report);
    free(good);
}

Test(suite, bad_experiment_lists_exit_2_and_write_nothing)
{
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/out", dir);
    const char *lists[] = {"copy,bogus", "copy,copy", "copy,,scaling", ""};
    const char *mention[] = {"'bogus'", "listed twice", "--experiments", "--experiments"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "suite --experiments '%s' --out %s", lists[i], path);
        cr_assert_eq(ltbench(args), 2, "%s: %s", lists[i], output);
        ASSERT_MENTIONS(mention[i]);
        cr_assert_eq(access(path, F_OK), -1, "%s: nothing written", lists[i]);
    }
}
