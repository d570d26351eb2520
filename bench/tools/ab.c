/* ltbench ab: two builds timed on the same attention cases, alternately, in
 * one job on one machine; the ratio of each timing with its confidence
 * interval (src/results/paired.h) and a verdict that holds on a noisy VM.
 * A build is an ltbench executable or a git revision, built here in a
 * temporary worktree. Each round runs `ltbench scaling` once per build, in
 * an order drawn per round, so a slow minute of the machine falls on both
 * sides of a pair. A timing found slower is timed again in fresh rounds and
 * stays a regression only when they find it too. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cli.h"
#include "experiment/flags.h"
#include "core/process.h"
#include "core/rng.h"
#include "core/timer.h"
#include "io/atomic.h"
#include "results/file.h"
#include "results/paired.h"

/* MAX_ROUNDS per set of rounds: the first set, then the confirming one */
enum {
    MAX_ROUNDS = 60,
    STORED_ROUNDS = 2 * MAX_ROUNDS,
    MAX_CASES = 64,
    MAX_ARGS = 48,
    SIDES = 2
};

/* The CI case set: each kernel family of the paper at a length where every
 * variant runs in milliseconds, on one thread (the quietest timings a
 * 2-core VM gives), 7 timed runs per case and round. */
static const char default_cases[] =
    "--variants softmax,linear,linformer --causal both --min-log2 9 --max-log2 9 --batch 1 "
    "--threads 1 --warmup 1 --repeats 7";

/* The timings judged (their rates, GFLOP/s, are the same numbers again),
 * each round's value the fastest of its runs (SPREAD_min_s): on a shared
 * machine the run least disturbed, where a burst of another program's work
 * moves the median of a round's runs but seldom all of them. */
static const char *const timing_columns[] = {"fwd", "fwd_bwd"};
enum { TIMINGS = sizeof timing_columns / sizeof timing_columns[0] };

typedef struct ab_options {
    const char *side_spec[SIDES]; /* --base, --new: executable or revision */
    const char *out, *cases, *measure; /* measure: "time", "instructions" */
    long rounds, confirm_rounds, seed;
    double threshold, confidence, count_tolerance;
    int overwrite;
} ab_options;

static int counting(const ab_options *o) { return strcmp(o->measure, "instructions") == 0; }

typedef struct ab_side {
    const char *role;     /* "base", "new" */
    char program[4400];   /* the ltbench executable run */
    char described[4600]; /* what it is, for the report */
    char worktree[4200];  /* a revision's worktree, removed at the end ("" none) */
    char provenance[512]; /* cpu, blas, kernel set and build of its first round */
    int roofline_flag;    /* its scaling takes --roofline (builds before it do not) */
    int out_folder;       /* its scaling's --out is a folder (earlier builds take a CSV path) */
} ab_side;

typedef struct ab_case {
    char label[256], kernel[64];
    int timing;                               /* index into timing_columns */
    double seconds[SIDES][STORED_ROUNDS]; /* each round's fastest run; the confirming
                                           * rounds follow the first ones */
    int seen[SIDES][STORED_ROUNDS];
    lt_paired paired;  /* the first rounds */
    lt_paired confirm; /* the confirming rounds, when `confirmed` */
    int judged, confirmed;
    const char *verdict;
} ab_case;

typedef struct ab_run {
    ab_options o;
    ab_side side[SIDES];
    ab_case cases[MAX_CASES];
    int case_count;
    int base_first[STORED_ROUNDS];
    int confirming; /* timings the confirming rounds judged (0: none ran) */
} ab_run;

/* ---- the builds ---- */

static int is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* This build's ltbench: beside this program. */
static void own_ltbench(char *out, size_t size)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    snprintf(out, size, "%s/ltbench", self);
}

static int run_quietly(const char *const *argv)
{
    fflush(stdout);
    return lt_process_run(argv, NULL);
}

/* A revision of the checkout in the current folder, built into a worktree
 * under the output folder with this build's native setting. */
static lt_status build_revision(ab_side *s, const char *revision, const char *out,
                                int portable)
{
    const char *verify[] = {"git", "rev-parse", "--verify", "--quiet", NULL, NULL};
    char commit[300];
    snprintf(commit, sizeof commit, "%s^{commit}", revision);
    verify[4] = commit;
    if (run_quietly(verify) != 0)
        return lt_fail(LT_E_USAGE,
                       "--%s %s: not an executable, nor a revision of a git checkout here "
                       "(run from the ltbench checkout, or give the path of an ltbench "
                       "executable)",
                       s->role, revision);
    snprintf(s->worktree, sizeof s->worktree, "%s/%s-worktree", out, s->role);
    fprintf(stderr, "ltbench ab: building %s (%s) in %s\n", s->role, revision, s->worktree);
    const char *add[] = {"git", "worktree", "add", "--detach", "--force", s->worktree, revision,
                         NULL};
    if (run_quietly(add) != 0) {
        s->worktree[0] = '\0';
        return lt_fail(LT_E_SYSTEM, "--%s %s: git worktree add failed", s->role, revision);
    }
    char build[4300], native[32];
    snprintf(build, sizeof build, "%s/build", s->worktree);
    /* valgrind runs no AVX-512: a portable build, whose kernel set it picks */
    snprintf(native, sizeof native, "-Dnative=%s",
             !portable && strstr(LT_BUILD_FLAGS, "native=true") != NULL ? "true" : "false");
    const char *setup[] = {"meson", "setup", build, "--buildtype=release", native, NULL};
    const char *compile[] = {"meson", "compile", "-C", build, "ltbench", "ltbench-scaling",
                             NULL};
    if (run_quietly(setup) != 0 || run_quietly(compile) != 0)
        return lt_fail(LT_E_SYSTEM, "--%s %s: the build in %s failed (see above)", s->role,
                       revision, build);
    snprintf(s->program, sizeof s->program, "%s/ltbench", build);
    snprintf(s->described, sizeof s->described, "revision %s, built with %s", revision, native);
    return LT_OK;
}

static void remove_worktree(ab_side *s)
{
    if (s->worktree[0] == '\0')
        return;
    const char *remove[] = {"git", "worktree", "remove", "--force", s->worktree, NULL};
    if (run_quietly(remove) != 0)
        fprintf(stderr, "ltbench ab: warning: could not remove the worktree %s\n", s->worktree);
    s->worktree[0] = '\0';
}

/* Whether `program scaling --help` lists `flag`. */
static int takes_flag(const char *program, const char *flag)
{
    char command[4600], line[512];
    snprintf(command, sizeof command, "'%s' scaling --help 2>/dev/null", program);
    FILE *p = popen(command, "r");
    int found = 0;
    while (p != NULL && fgets(line, sizeof line, p) != NULL)
        found |= strstr(line, flag) != NULL;
    if (p != NULL)
        pclose(p);
    return found;
}

static lt_status prepare_side(ab_side *s, const char *spec, const ab_options *o)
{
    lt_status status = LT_OK;
    if (spec == NULL) {
        own_ltbench(s->program, sizeof s->program);
        snprintf(s->described, sizeof s->described, "this build (%s)", s->program);
    } else if (strchr(spec, '/') != NULL || is_executable(spec)) {
        if (!is_executable(spec))
            return lt_fail(LT_E_USAGE, "--%s %s: no such executable", s->role, spec);
        snprintf(s->program, sizeof s->program, "%s", spec);
        snprintf(s->described, sizeof s->described, "executable %s", spec);
    } else {
        status = build_revision(s, spec, o->out, counting(o));
    }
    if (status == LT_OK) {
        s->roofline_flag = takes_flag(s->program, "--roofline");
        s->out_folder = takes_flag(s->program, "--out DIR");
    }
    return status;
}

/* ---- the rounds ---- */

/* The CSV of a side's round: round-NN/scaling.csv in the side's folder,
 * or round-NN.csv from a build whose scaling writes where --out says. */
static void round_path(char *buf, size_t size, const ab_options *o, const ab_side *s, int round)
{
    snprintf(buf, size, s->out_folder ? "%s/%s/round-%02d/scaling.csv" : "%s/%s/round-%02d.csv",
             o->out, s->role, round + 1);
}

/* callgrind's dump files of a side's round: one per timed call. */
static void dump_prefix(char *buf, size_t size, const ab_options *o, const ab_side *s, int round)
{
    snprintf(buf, size, "%s/%s/round-%02d.callgrind", o->out, s->role, round + 1);
}

static lt_status run_side(const ab_run *r, int which, int round, char *cases_text)
{
    const ab_side *s = &r->side[which];
    char path[4400], dump[4500];
    round_path(path, sizeof path, &r->o, s, round);
    const char *argv[MAX_ARGS + 24];
    int n = 0;
    if (counting(&r->o)) {
        /* the timed calls alone, one dump file each; the program run
         * directly, as valgrind cannot follow the dispatcher's exec */
        static char out_file[4600];
        dump_prefix(dump, sizeof dump, &r->o, s, round);
        snprintf(out_file, sizeof out_file, "--callgrind-out-file=%s", dump);
        static const char *const valgrind[] = {
            "valgrind", "--tool=callgrind", "--quiet", "--trace-children=yes",
            /* one toggle pattern for both: callgrind 3.19 drops the counts
             * of dumps when two toggle patterns are given */
            "--collect-atstart=no", "--toggle-collect=run_forward_*",
            "--dump-after=run_forward_only", "--dump-after=run_forward_backward"};
        for (size_t i = 0; i < sizeof valgrind / sizeof valgrind[0]; i++)
            argv[n++] = valgrind[i];
        argv[n++] = out_file;
    }
    argv[n++] = s->program;
    argv[n++] = "scaling";
    for (char *at = strtok(cases_text, " \t\n"); at != NULL; at = strtok(NULL, " \t\n")) {
        if (n >= MAX_ARGS)
            return lt_fail(LT_E_USAGE, "--cases: more than %d words", MAX_ARGS - 2);
        argv[n++] = at;
    }
    /* the machine's roofline is not what is compared: skipped where both
     * builds can (a build from before --roofline measures it on both sides) */
    if (r->side[0].roofline_flag && r->side[1].roofline_flag) {
        argv[n++] = "--roofline";
        argv[n++] = "off";
    }
    if (counting(&r->o)) { /* one call of each: the count is the same every time */
        static const char *const once[] = {"--warmup", "0", "--repeats", "1", "--threads", "1"};
        for (size_t i = 0; i < sizeof once / sizeof once[0]; i++)
            argv[n++] = once[i];
    }
    argv[n++] = "--out";
    if (s->out_folder) /* the round's folder */
        *strrchr(path, '/') = '\0';
    argv[n++] = path;
    argv[n++] = "--quiet";
    argv[n] = NULL;
    int code = lt_process_run(argv, NULL);
    if (code != 0)
        return lt_fail(code == 2 ? LT_E_USAGE : LT_E_SYSTEM,
                       "round %d: %s's `%sltbench scaling %s` exited with %d%s", round + 1,
                       s->role, counting(&r->o) ? "valgrind " : "", r->o.cases, code,
                       counting(&r->o) ? " (valgrind runs no AVX-512: give builds made with "
                                         "-Dnative=false, or -march=x86-64-v3)"
                                       : "");
    return LT_OK;
}

/* The instructions of the `call`-th timed call (1-based) of a counted
 * round: the "totals:" line of callgrind's dump file PREFIX.call. */
static lt_status read_count(double *out, const char *prefix, int call)
{
    char command[4700];
    snprintf(command, sizeof command, "ls '%s'.%d 2>/dev/null", prefix, call);
    FILE *p = popen(command, "r");
    char path[4700] = "";
    if (p == NULL || fgets(path, sizeof path, p) == NULL) {
        if (p != NULL)
            pclose(p);
        return lt_fail(LT_E_INPUT, "%s: no callgrind dump of timed call %d", prefix, call);
    }
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = sscanf(line, "totals: %lf", out) == 1;
    fclose(f);
    if (!found)
        return lt_fail(LT_E_INPUT, "%s: no 'totals:' line", path);
    return LT_OK;
}

/* The case a row is: its label keys (variant, kernel, causal, N) and batch. */
static void row_label(char *buf, size_t size, const lt_results_file *f, long long row)
{
    static const char *const keys[] = {"variant", "kernel", "causal", "N", "batch"};
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        lt_results_label_append(buf, size, keys[k],
                                lt_results_cell(f, row, lt_results_column(f, keys[k])));
}

static ab_case *find_case(ab_run *r, const char *label, int timing, int create)
{
    for (int c = 0; c < r->case_count; c++)
        if (r->cases[c].timing == timing && strcmp(r->cases[c].label, label) == 0)
            return &r->cases[c];
    if (!create || r->case_count == MAX_CASES)
        return NULL;
    ab_case *c = &r->cases[r->case_count++];
    memset(c, 0, sizeof *c);
    snprintf(c->label, sizeof c->label, "%s", label);
    c->timing = timing;
    return c;
}

/* Reads one round's CSV of one side into the cases. */
static lt_status read_round(ab_run *r, int which, int round)
{
    ab_side *s = &r->side[which];
    char path[4400];
    round_path(path, sizeof path, &r->o, s, round);
    lt_results_file f;
    LT_TRY(lt_results_read(&f, path));
    int status_col = lt_results_column(&f, "status"), kernel_col = lt_results_column(&f, "kernel");
    lt_status status = LT_OK;
    if (round == 0) {
        static const char *const prov[] = {"cpu_model", "blas", "kernel_isa", "build", "threads"};
        s->provenance[0] = '\0';
        for (size_t p = 0; p < sizeof prov / sizeof prov[0]; p++)
            snprintf(s->provenance + strlen(s->provenance),
                     sizeof s->provenance - strlen(s->provenance), "%s%s %s", p ? "; " : "",
                     prov[p], lt_results_cell(&f, 0, lt_results_column(&f, prov[p])));
    }
    int measured = 0; /* rows measured before this one: their calls come first */
    for (long long row = 0; row < f.table.nrows && status == LT_OK; row++, measured++) {
        if (strcmp(lt_results_cell(&f, row, status_col), "ok") != 0) {
            measured--;
            continue;
        }
        char label[256];
        row_label(label, sizeof label, &f, row);
        for (int t = 0; t < TIMINGS && status == LT_OK; t++) {
            ab_case *c = find_case(r, label, t, 1);
            if (c == NULL) {
                status = lt_fail(LT_E_USAGE, "--cases: more than %d timings", MAX_CASES);
                break;
            }
            if (c->seen[which][round]) {
                status = lt_fail(LT_E_INPUT, "%s: two rows are case %s", path, label);
                break;
            }
            snprintf(c->kernel, sizeof c->kernel, "%s", lt_results_cell(&f, row, kernel_col));
            if (counting(&r->o)) { /* the forward's call, then the forward+backward's */
                char prefix[4500];
                dump_prefix(prefix, sizeof prefix, &r->o, s, round);
                status = read_count(&c->seconds[which][round], prefix, 2 * measured + t + 1);
            } else {
                char column[64];
                snprintf(column, sizeof column, "%s_min_s", timing_columns[t]);
                status = lt_results_number(&c->seconds[which][round], &f, row,
                                           lt_results_column(&f, column));
            }
            c->seen[which][round] = 1;
        }
    }
    lt_results_free(&f);
    return status;
}

/* ---- the verdicts ---- */

/* Instruction counts: the same in every round of a build, or the program
 * is not deterministic and its counts are not judged; then within the
 * tolerance, exactly. */
static lt_status judge_counts(ab_run *r)
{
    const double up = 1 + r->o.count_tolerance / 100, down = 1 / up;
    for (int c = 0; c < r->case_count; c++) {
        ab_case *k = &r->cases[c];
        if (!k->judged)
            continue;
        for (int s = 0; s < SIDES; s++)
            for (int i = 1; i < r->o.rounds; i++)
                if (k->seconds[s][i] != k->seconds[s][0]) {
                    k->judged = 0;
                    k->verdict = "not judged (counts differ between rounds)";
                }
        if (k->judged && !(k->seconds[0][0] > 0 && k->seconds[1][0] > 0)) {
            k->judged = 0; /* a build whose timed calls have other names */
            k->verdict = "not judged (no instructions counted: a build from before the timed "
                         "calls were named run_forward_only and run_forward_backward)";
        }
        if (!k->judged)
            continue;
        double ratio = k->seconds[1][0] / k->seconds[0][0];
        k->paired = (lt_paired){(int)r->o.rounds, ratio, ratio, ratio};
        k->verdict = ratio > up ? "regressed" : ratio < down ? "improved" : "unchanged";
    }
    return LT_OK;
}

/* Whether both sides measured a timing in each of `count` rounds from `first`. */
static int measured_in(const ab_case *k, int first, int count)
{
    int all = 1;
    for (int i = first; i < first + count; i++)
        all &= k->seen[0][i] && k->seen[1][i];
    return all;
}

/* The ratio of a timing over `count` rounds from `first`, its interval at
 * `each` confidence, and the rule's verdict on them. */
static lt_status judge_pairs(const ab_run *r, const ab_case *k, int first, int count,
                             double each, lt_paired *out, const char **verdict)
{
    double scratch[LT_PAIRED_SCRATCH(MAX_ROUNDS)];
    LT_TRY(lt_paired_ratio(k->seconds[0] + first, k->seconds[1] + first, count, each, scratch,
                           out));
    const double up = 1 + r->o.threshold / 100, down = 1 / up;
    if (out->ratio > up && out->lo > 1)
        *verdict = "regressed";
    else if (out->ratio < down && out->hi < 1)
        *verdict = "improved";
    else if (out->ratio > up || out->ratio < down)
        *verdict = "uncertain";
    else
        *verdict = "unchanged";
    return LT_OK;
}

/* Judges every timing both sides measured in every first round, at a
 * confidence that holds jointly over them all (Bonferroni). Returns how
 * many. */
static lt_status judge(ab_run *r, int *judged_count, double *each_confidence)
{
    int rounds = (int)r->o.rounds, m = 0;
    for (int c = 0; c < r->case_count; c++) {
        ab_case *k = &r->cases[c];
        k->judged = measured_in(k, 0, rounds);
        m += k->judged;
        k->verdict = k->judged ? NULL : "not judged (not measured in every round)";
    }
    *judged_count = m;
    *each_confidence = 1 - (1 - r->o.confidence / 100) / (m > 0 ? m : 1);
    if (counting(&r->o)) {
        LT_TRY(judge_counts(r));
        *judged_count = 0;
        for (int c = 0; c < r->case_count; c++)
            *judged_count += r->cases[c].judged;
        return LT_OK;
    }
    for (int c = 0; c < r->case_count; c++)
        if (r->cases[c].judged)
            LT_TRY(judge_pairs(r, &r->cases[c], 0, rounds, *each_confidence,
                               &r->cases[c].paired, &r->cases[c].verdict));
    return LT_OK;
}

/* How many timings the first rounds found slower: those the confirming
 * rounds time again. */
static int regressed_count(const ab_run *r)
{
    int n = 0;
    for (int c = 0; c < r->case_count; c++)
        n += r->cases[c].judged && strcmp(r->cases[c].verdict, "regressed") == 0;
    return n;
}

/* The confirming rounds judge the timings the first ones found slower,
 * jointly over those: a noisy machine sometimes puts one timing's interval
 * above 1 by chance, seldom the same one in two independent sets of
 * rounds, while a kernel that is slower is slower in both. A timing the
 * confirming rounds did not measure every time stays regressed. */
static lt_status judge_confirmation(ab_run *r, double *each_confidence)
{
    const int first = (int)r->o.rounds, count = (int)r->o.confirm_rounds;
    *each_confidence = 1 - (1 - r->o.confidence / 100) / r->confirming;
    for (int c = 0; c < r->case_count; c++) {
        ab_case *k = &r->cases[c];
        if (!k->judged || strcmp(k->verdict, "regressed") != 0 || !measured_in(k, first, count))
            continue;
        const char *again;
        LT_TRY(judge_pairs(r, k, first, count, *each_confidence, &k->confirm, &again));
        k->confirmed = 1;
        if (strcmp(again, "regressed") != 0)
            k->verdict = "not confirmed";
    }
    return LT_OK;
}

static double median_of(const double *x, int n)
{
    double sorted[MAX_ROUNDS];
    memcpy(sorted, x, (size_t)n * sizeof *x);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* Worst first: regressions by ratio, then the rest by ratio. */
static int verdict_rank(const ab_case *c)
{
    const char *v = c->verdict;
    return strcmp(v, "regressed") == 0       ? 0
           : strcmp(v, "not confirmed") == 0 ? 1
           : strcmp(v, "uncertain") == 0     ? 2
           : strcmp(v, "unchanged") == 0     ? 3
           : strcmp(v, "improved") == 0      ? 4
                                             : 5;
}

static int worst_first(const void *pa, const void *pb)
{
    const ab_case *a = *(const ab_case *const *)pa, *b = *(const ab_case *const *)pb;
    int ra = verdict_rank(a), rb = verdict_rank(b);
    if (ra != rb)
        return ra - rb;
    double xa = a->judged ? a->paired.ratio : 0, xb = b->judged ? b->paired.ratio : 0;
    return (xa < xb) - (xa > xb);
}

static void case_row(FILE *f, const ab_case *c, int rounds)
{
    fprintf(f, "| %s | %s | ", c->label, timing_columns[c->timing]);
    if (!c->judged) {
        fprintf(f, "- | - | - | - | %s |\n", c->verdict);
        return;
    }
    if (c->paired.lo == c->paired.hi) { /* a count */
        fprintf(f, "%.0f | %.0f | %.5f | - | %s |\n", c->seconds[0][0], c->seconds[1][0],
                c->paired.ratio, c->verdict);
        return;
    }
    fprintf(f, "%.4g | %.4g | %.3f | %.3f..%.3f | ", median_of(c->seconds[0], rounds) * 1e3,
            median_of(c->seconds[1], rounds) * 1e3, c->paired.ratio, c->paired.lo,
            isinf(c->paired.hi) ? INFINITY : c->paired.hi);
    if (c->confirmed)
        fprintf(f, "%.3f (%.3f..%.3f) | ", c->confirm.ratio, c->confirm.lo,
                isinf(c->confirm.hi) ? INFINITY : c->confirm.hi);
    else
        fprintf(f, "- | ");
    fprintf(f, "%s |\n", c->verdict);
}

/* What was compared, how, and the rule: the report's opening and the
 * cases table's header. */
static void report_method(FILE *f, const ab_run *r, int judged, double each,
                          double confirm_each)
{
    const int rounds = (int)r->o.rounds;
    int base_first = 0;
    for (int i = 0; i < rounds; i++)
        base_first += r->base_first[i];
    fprintf(f, "# ltbench ab: new against base\n\n");
    for (int s = 0; s < SIDES; s++)
        fprintf(f, "- **%s**: %s\n  (%s)\n", r->side[s].role, r->side[s].described,
                r->side[s].provenance);
    if (counting(&r->o)) {
        fprintf(f,
                "- **cases**: `ltbench scaling %s`, one thread, each timed call once under "
                "`valgrind --tool=callgrind`, instructions of the timed calls alone\n"
                "- **rounds**: %d per build; a count that differs between rounds is not "
                "judged\n"
                "- **rule**: a count regressed when new/base exceeds %.4g (tolerance %g%%), "
                "improved below %.4g\n\n"
                "| case | call | base instructions | new instructions | new/base | - | verdict "
                "|\n|---|---|---:|---:|---:|---|---|\n",
                r->o.cases, rounds, 1 + r->o.count_tolerance / 100, r->o.count_tolerance,
                1 / (1 + r->o.count_tolerance / 100));
        return;
    }
    fprintf(f,
            "- **cases**: `ltbench scaling %s`\n"
            "- **rounds**: %d pairs, each build once per round, the order drawn per round "
            "(seed %ld, reversed every second round: base first in %d)\n"
            "- **statistic**: per timing, the ratio new/base is the Hodges-Lehmann estimate over "
            "the rounds' paired log ratios (each round's value is the fastest of its runs), with "
            "the exact Wilcoxon signed-rank interval at %g%% confidence jointly over the %d "
            "timings judged (%.4g%% each, Bonferroni). A timing regressed when its ratio exceeds "
            "%.4g (threshold %g%%) and its interval lies above 1; improved likewise below; "
            "uncertain when the ratio is beyond the threshold but its interval holds 1.\n",
            r->o.cases, rounds, r->o.seed, base_first, r->o.confidence, judged, 100 * each,
            1 + r->o.threshold / 100, r->o.threshold);
    if (r->o.confirm_rounds == 0)
        fprintf(f, "- **confirmation**: none (--confirm-rounds 0): a regression in the first "
                   "rounds stands\n\n");
    else if (r->confirming == 0)
        fprintf(f, "- **confirmation**: none needed: no timing regressed in the first rounds "
                   "(one that does is timed again in %ld fresh rounds)\n\n",
                r->o.confirm_rounds);
    else
        fprintf(f,
                "- **confirmation**: the %d timings that regressed in the first rounds were timed "
                "again in %ld fresh rounds (rounds %ld-%ld, the order drawn on), judged by the "
                "same rule at %g%% jointly over them (%.4g%% each); a timing stays regressed "
                "only when these find it again, else \"not confirmed\"\n\n",
                r->confirming, r->o.confirm_rounds, r->o.rounds + 1,
                r->o.rounds + r->o.confirm_rounds, r->o.confidence, 100 * confirm_each);
    fprintf(f, "| case | timing | base ms | new ms | new/base | interval | confirming rounds | "
               "verdict |\n|---|---|---:|---:|---:|---|---|---|\n");
}

/* Per kernel: what a reader asks first. */
static void report_kernels(FILE *f, const ab_run *r)
{
    fprintf(f, "\n## Per kernel\n\n| kernel | timings | regressed | improved | largest new/base "
               "|\n|---|---:|---:|---:|---:|\n");
    for (int c = 0; c < r->case_count; c++) {
        const char *kernel = r->cases[c].kernel;
        int first = 1;
        for (int d = 0; d < c; d++)
            first &= strcmp(r->cases[d].kernel, kernel) != 0;
        if (!first)
            continue;
        int count = 0, worse = 0, better = 0;
        double largest = 0;
        for (int d = c; d < r->case_count; d++) {
            const ab_case *k = &r->cases[d];
            if (strcmp(k->kernel, kernel) != 0 || !k->judged)
                continue;
            count++;
            worse += strcmp(k->verdict, "regressed") == 0;
            better += strcmp(k->verdict, "improved") == 0;
            largest = k->paired.ratio > largest ? k->paired.ratio : largest;
        }
        fprintf(f, "| %s | %d | %d | %d | %.3f |\n", kernel, count, worse, better, largest);
    }
}

/* Each regressed timing, in the cases' order, then those the confirming
 * rounds did not find again; returns how many regressed. */
static int report_regressions(FILE *f, const ab_run *r, const ab_case *const *order)
{
    int regressed = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *wanted = pass ? "not confirmed" : "regressed";
        int listed = 0;
        fprintf(f, pass ? "\n## Not confirmed\n\n" : "\n## Regressions\n\n");
        for (int c = 0; c < r->case_count; c++) {
            const ab_case *k = order[c];
            if (!k->judged || strcmp(k->verdict, wanted) != 0)
                continue;
            listed++;
            if (counting(&r->o)) {
                fprintf(f, "- %s %s: %.2f%% more instructions\n", k->label,
                        timing_columns[k->timing], 100 * (k->paired.ratio - 1));
                continue;
            }
            fprintf(f, "- %s %s: %.1f%% slower (interval %+.1f%% to %+.1f%%)", k->label,
                    timing_columns[k->timing], 100 * (k->paired.ratio - 1),
                    100 * (k->paired.lo - 1), 100 * (k->paired.hi - 1));
            if (k->confirmed)
                fprintf(f, "; in the confirming rounds %+.1f%% (interval %+.1f%% to %+.1f%%)",
                        100 * (k->confirm.ratio - 1), 100 * (k->confirm.lo - 1),
                        isinf(k->confirm.hi) ? INFINITY : 100 * (k->confirm.hi - 1));
            else if (pass == 0 && r->confirming > 0)
                fprintf(f, "; not measured in every confirming round");
            fprintf(f, "\n");
        }
        if (listed == 0)
            fprintf(f, "none\n");
        if (pass == 0)
            regressed = listed;
        if (counting(&r->o) || r->confirming == 0)
            break; /* nothing was timed again */
    }
    return regressed;
}

static lt_status write_report(const ab_run *r, const ab_case *const *order, int judged,
                              double each, double confirm_each, const char *path,
                              int *regressed)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    FILE *f = af.f;
    report_method(f, r, judged, each, confirm_each);
    for (int c = 0; c < r->case_count; c++)
        case_row(f, order[c], (int)r->o.rounds);
    report_kernels(f, r);
    *regressed = report_regressions(f, r, order);
    fprintf(f, "\n**%s**: %d regressed of %d timings judged\n",
            judged == 0 ? "NOTHING JUDGED" : *regressed ? "FAIL" : "PASS", *regressed, judged);
    return lt_atomic_commit(&af);
}

static lt_status write_json(const ab_run *r, const ab_case *const *order, const char *path)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    FILE *f = af.f;
    const int rounds = (int)r->o.rounds;
    fputs("[", f);
    for (int c = 0; c < r->case_count; c++) {
        const ab_case *k = order[c];
        fprintf(f, "%s\n  {\"case\": ", c ? "," : "");
        lt_results_json_string(f, k->label);
        fprintf(f, ", \"kernel\": ");
        lt_results_json_string(f, k->kernel);
        fprintf(f, ", \"timing\": \"%s\", \"verdict\": ", timing_columns[k->timing]);
        lt_results_json_string(f, k->verdict);
        fprintf(f, ", \"pairs\": %d", rounds);
        if (k->judged) {
            fprintf(f, ", \"base_%s\": %.9g, \"new_%s\": %.9g, \"ratio\": %.6g, "
                       "\"ratio_lo\": %.6g",
                    counting(&r->o) ? "instructions" : "s", median_of(k->seconds[0], rounds),
                    counting(&r->o) ? "instructions" : "s",
                    median_of(k->seconds[1], rounds), k->paired.ratio, k->paired.lo);
            if (isfinite(k->paired.hi))
                fprintf(f, ", \"ratio_hi\": %.6g", k->paired.hi);
        }
        if (k->confirmed) {
            fprintf(f, ", \"confirm_pairs\": %ld, \"confirm_ratio\": %.6g, "
                       "\"confirm_ratio_lo\": %.6g",
                    r->o.confirm_rounds, k->confirm.ratio, k->confirm.lo);
            if (isfinite(k->confirm.hi))
                fprintf(f, ", \"confirm_ratio_hi\": %.6g", k->confirm.hi);
        }
        fputc('}', f);
    }
    fputs(r->case_count ? "\n]\n" : "]\n", f);
    return lt_atomic_commit(&af);
}

/* Every pair's two values: what the verdicts were drawn from. */
static lt_status write_samples(const ab_run *r, const char *path)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    FILE *f = af.f;
    fprintf(f, "case,kernel,timing,round,first,%s,rounds\n",
            counting(&r->o) ? "base_instructions,new_instructions" : "base_s,new_s");
    const int stored = (int)(r->o.rounds + (r->confirming ? r->o.confirm_rounds : 0));
    for (int c = 0; c < r->case_count; c++) {
        const ab_case *k = &r->cases[c];
        for (int i = 0; i < stored; i++)
            if (k->seen[0][i] && k->seen[1][i])
                fprintf(f, "%s,%s,%s,%d,%s,%.9g,%.9g,%s\n", k->label, k->kernel,
                        timing_columns[k->timing], i + 1, r->base_first[i] ? "base" : "new",
                        k->seconds[0][i], k->seconds[1][i],
                        i < r->o.rounds ? "first" : "confirming");
    }
    return lt_atomic_commit(&af);
}

/* ---- main ---- */

static lt_status check_out(const ab_options *o)
{
    char report[4200];
    snprintf(report, sizeof report, "%s/ab.md", o->out);
    struct stat st;
    if (!o->overwrite && stat(report, &st) == 0)
        return lt_fail(LT_E_USAGE,
                       "--out %s: holds an earlier comparison (%s); pass --overwrite to replace "
                       "it, or another --out",
                       o->out, report);
    char dir[4300];
    for (int s = 0; s < SIDES; s++) {
        snprintf(dir, sizeof dir, "%s/%s", o->out, s ? "new" : "base");
        LT_TRY(lt_make_dirs(dir));
        for (int i = 0; i < STORED_ROUNDS; i++) /* an earlier comparison's rounds */
            for (int folder = 0; folder <= 1; folder++) {
                char path[4400];
                snprintf(path, sizeof path,
                         folder ? "%s/round-%02d/scaling.csv" : "%s/round-%02d.csv", dir, i + 1);
                if (unlink(path) != 0 && errno != ENOENT)
                    return lt_fail_write(path, errno);
            }
    }
    return LT_OK;
}

/* After the first round, when the timings are known: enough rounds for an
 * interval at the joint confidence, or an error now rather than a verdict
 * that could never be reached. */
static lt_status check_rounds(const ab_run *r)
{
    if (counting(&r->o))
        return LT_OK; /* a count needs no interval */
    int m = r->case_count > 0 ? r->case_count : 1;
    double each = 1 - (1 - r->o.confidence / 100) / m;
    int needed = lt_paired_min_pairs(each);
    if (r->o.rounds < needed)
        return lt_fail(LT_E_USAGE,
                       "--rounds %ld: %d timings judged at %g%% confidence jointly need at least "
                       "%d rounds",
                       r->o.rounds, m, r->o.confidence, needed);
    if (r->o.confirm_rounds > 0 && r->o.confirm_rounds < needed)
        return lt_fail(LT_E_USAGE,
                       "--confirm-rounds %ld: as many as %d timings confirmed at %g%% confidence "
                       "jointly need at least %d rounds (or 0: no confirmation)",
                       r->o.confirm_rounds, m, r->o.confidence, needed);
    return LT_OK;
}

/* Runs rounds first..first+count-1 and reads them; the first round of all
 * checks that the rounds asked for can reach a verdict. */
static lt_status run_rounds(ab_run *r, lt_rng *rng, int first, int count, double start)
{
    for (int i = first; i < first + count; i++) {
        /* drawn per two rounds, the second the other way round: whichever
         * run of a pair the machine favours (caches, clocks), each build is
         * first equally often */
        r->base_first[i] = (i - first) % 2 ? !r->base_first[i - 1] : (int)lt_rng_below(rng, 2);
        for (int k = 0; k < SIDES; k++) {
            int which = r->base_first[i] ? k : 1 - k;
            char cases[2048];
            snprintf(cases, sizeof cases, "%s", r->o.cases);
            LT_TRY(run_side(r, which, i, cases));
            LT_TRY(read_round(r, which, i));
        }
        fprintf(stderr, "ltbench ab: %sround %d/%d done, %.0f s elapsed\n",
                first ? "confirming " : "", i + 1 - first, count, lt_time_now() - start);
        if (i == 0)
            LT_TRY(check_rounds(r));
    }
    return LT_OK;
}

static lt_status run(ab_run *r, int *result)
{
    const int rounds = (int)r->o.rounds;
    LT_TRY(check_out(&r->o));
    for (int s = 0; s < SIDES; s++)
        LT_TRY(prepare_side(&r->side[s], r->o.side_spec[s], &r->o));
    if (counting(&r->o)) {
        /* what the programs would restart themselves to set (runtime.c),
         * set beforehand: valgrind cannot follow a program's exec of itself.
         * Valgrind's CPU has AVX2 and no AVX-512. */
        setenv("GOMP_SPINCOUNT", "1500", 0);
        setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    }
    lt_rng rng;
    lt_rng_seed(&rng, (uint64_t)r->o.seed, 0);
    double start = lt_time_now();
    LT_TRY(run_rounds(r, &rng, 0, rounds, start));
    int judged;
    double each, confirm_each = 0;
    LT_TRY(judge(r, &judged, &each));
    if (!counting(&r->o) && r->o.confirm_rounds > 0 && regressed_count(r) > 0) {
        r->confirming = regressed_count(r);
        fprintf(stderr, "ltbench ab: %d timing%s slower in the first rounds: timing again in %ld "
                        "fresh rounds to confirm\n",
                r->confirming, r->confirming > 1 ? "s" : "", r->o.confirm_rounds);
        LT_TRY(run_rounds(r, &rng, rounds, (int)r->o.confirm_rounds, start));
        LT_TRY(judge_confirmation(r, &confirm_each));
    }
    const ab_case *order[MAX_CASES];
    for (int c = 0; c < r->case_count; c++)
        order[c] = &r->cases[c];
    qsort(order, (size_t)r->case_count, sizeof order[0], worst_first);
    char path[4300];
    int regressed;
    snprintf(path, sizeof path, "%s/ab-samples.csv", r->o.out);
    LT_TRY(write_samples(r, path));
    snprintf(path, sizeof path, "%s/ab.json", r->o.out);
    LT_TRY(write_json(r, order, path));
    snprintf(path, sizeof path, "%s/ab.md", r->o.out);
    LT_TRY(write_report(r, order, judged, each, confirm_each, path, &regressed));
    /* the report on stdout too: CI logs show it */
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            fwrite(buf, 1, n, stdout);
        fclose(f);
    }
    printf("\nwrote %s, %s/ab.json and %s/ab-samples.csv\n", path, r->o.out, r->o.out);
    *result = judged == 0 ? 3 : regressed > 0;
    return LT_OK;
}

static const char details[] =
    "Each round runs `ltbench scaling CASES` once with each build, in an order drawn from\n"
    "--seed, and keeps each run's CSV (OUT/base/round-NN/scaling.csv, OUT/new/...; a\n"
    "build from before scaling's --out was a folder: OUT/base/round-NN.csv). Per case and\n"
    "timing (forward, forward+backward: their GFLOP/s are the same numbers), the rounds\n"
    "give pairs (each the fastest of the round's runs: on a shared machine the least\n"
    "disturbed); the ratio new/base is the Hodges-Lehmann estimate of the pairs' log\n"
    "ratios, with the exact Wilcoxon signed-rank interval at --confidence jointly over\n"
    "every timing judged (Bonferroni). A timing\n"
    "regressed when its ratio exceeds 1 + --threshold and the interval lies above 1;\n"
    "improved likewise below; uncertain when the ratio is beyond the threshold but its\n"
    "interval holds 1; else unchanged. Pairing cancels the machine's drift between\n"
    "rounds; the interval assumes only that the noise of a pair's log ratio is symmetric.\n"
    "The order is drawn for every two rounds and reversed in the second, so each build\n"
    "runs first equally often. At least enough rounds for a finite interval are needed:\n"
    "10 for up to 20 timings at 95%, 12 for up to 100.\n"
    "A timing that regressed is timed again: --confirm-rounds fresh rounds of every case\n"
    "(rounds R+1 on), judged by the same rule jointly over the timings that regressed. It\n"
    "stays regressed only when these find it again, else it is \"not confirmed\" and does\n"
    "not fail: on a shared VM a pair of runs can differ by 30%, and one timing's interval\n"
    "then lies above 1 by chance now and then, seldom the same one twice.\n"
    "--base and --new take an ltbench executable (a path) or a git revision of the\n"
    "checkout in the current folder (HEAD~1, a tag, a commit), which is built with this\n"
    "build's native setting in a worktree under --out and removed afterwards.\n"
    "Writes OUT/ab.md (the table worst first, a per-kernel summary, the regressions and\n"
    "those not confirmed), OUT/ab.json (per timing: case, kernel, verdict, ratio,\n"
    "ratio_lo, ratio_hi, base_s, new_s: the median over the first rounds; confirm_ratio,\n"
    "confirm_ratio_lo, confirm_ratio_hi where it was timed again)\n"
    "and OUT/ab-samples.csv (every pair, its rounds first or confirming), and prints the\n"
    "report.\n"
    "--measure instructions counts, under valgrind's callgrind, the instructions of each\n"
    "timed call alone (one thread, each call once): the same in every run of a build, so\n"
    "judged exactly within --count-tolerance, where timers on a shared machine cannot be\n"
    "trusted. Valgrind runs no AVX-512 (revisions are then built with -Dnative=false,\n"
    "and their kernel set is avx2); it is about 50 times slower than the program.\n"
    "Exit status: 0 no regression, 1 a regression, 2 bad usage or a build or run that\n"
    "failed, 3 nothing judged (no timing measured in every round by both builds).";

/* The defaults that depend on other flags, then what no run could judge. */
static lt_status check_options(ab_options *o, lt_cli *cli)
{
    if (o->side_spec[0] == NULL)
        return lt_fail(LT_E_USAGE, "--base: required (an ltbench executable or a revision)");
    if (counting(o) && !lt_cli_flag(cli, "--rounds")->seen)
        o->rounds = 2;
    /* twice the first rounds: a narrower interval for the timing at stake,
     * whose time is spent only when a regression is */
    if (!lt_cli_flag(cli, "--confirm-rounds")->seen)
        o->confirm_rounds = 2 * o->rounds < MAX_ROUNDS ? 2 * o->rounds : MAX_ROUNDS;
    int rounds_needed = counting(o) ? 1 : lt_paired_min_pairs(o->confidence / 100);
    if (o->rounds < rounds_needed)
        return lt_fail(LT_E_USAGE,
                       "--rounds %ld: at least %d are needed for an interval at %g%% "
                       "confidence (more when many timings are judged jointly)",
                       o->rounds, rounds_needed, o->confidence);
    if (!counting(o) && o->confirm_rounds > 0 && o->confirm_rounds < rounds_needed)
        return lt_fail(LT_E_USAGE,
                       "--confirm-rounds %ld: at least %d are needed for an interval at %g%% "
                       "confidence (or 0: no confirmation)",
                       o->confirm_rounds, rounds_needed, o->confidence);
    return LT_OK;
}

int main(int argc, char **argv)
{
    static ab_run r;
    ab_options *o = &r.o;
    /* 20 rounds: on a 2-vCPU VM, 12 caught a forward 11% slower in 2 runs of 4 and once
     * called the same build slower; 20 caught it in 10 of 10, a forward 5.7% slower in 9
     * of 10, and the same build in 0 of 20 (docs/regression.md) */
    *o = (ab_options){.out = "results/ab", .cases = default_cases, .measure = "time",
                      .rounds = 20, .confirm_rounds = 40, .seed = 1, .threshold = 3,
                      .confidence = 95,
                      .count_tolerance = 0.5};
    lt_flag flags[] = {
        {"--base", LT_FLAG_STRING, &o->side_spec[0], "BUILD",
         "required: the build compared against, an ltbench executable (a path) or a git "
         "revision (built here)", 0, 0, NULL, 0},
        {"--new", LT_FLAG_STRING, &o->side_spec[1], "BUILD",
         "the build judged; none given: this ltbench", 0, 0, NULL, 0},
        {"--cases", LT_FLAG_STRING, &o->cases, "FLAGS",
         "the `ltbench scaling` flags that choose the cases, one string", 0, 0, NULL, 0},
        {"--measure", LT_FLAG_CHOICE, &o->measure, NULL,
         "instructions: count the timed calls' instructions under valgrind (deterministic; "
         "portable builds only) instead of timing them", 0, 0, "time|instructions", 0},
        {"--rounds", LT_FLAG_INT, &o->rounds, "R",
         "pairs of runs (one per build each round); with --measure instructions: 2 unless given",
         1, MAX_ROUNDS, NULL, 0},
        {"--confirm-rounds", LT_FLAG_INT, &o->confirm_rounds, "C",
         "rounds that time again the timings the first ones found slower (a regression stands "
         "only when they find it too); 0: none; not given: twice --rounds, at most 60", 0,
         MAX_ROUNDS, NULL, 0},
        {"--count-tolerance", LT_FLAG_DOUBLE, &o->count_tolerance, "PCT",
         "--measure instructions: a count regresses when larger by more than PCT percent", 0,
         1000, NULL, 0},
        {"--threshold", LT_FLAG_DOUBLE, &o->threshold, "PCT",
         "a timing regresses when slower by more than PCT percent (and surely slower)", 0, 1000,
         NULL, 0},
        {"--confidence", LT_FLAG_DOUBLE, &o->confidence, "PCT",
         "confidence of the intervals, jointly over every timing judged", 50, 99.99, NULL, 0},
        {"--seed", LT_FLAG_INT, &o->seed, "S", "seed of the order within the rounds", 0, 1e9,
         NULL, 0},
        lt_flag_out(&o->out, "the rounds' CSVs and the report"),
        lt_flag_overwrite(&o->overwrite),
    };
    lt_cli cli = {"ltbench ab",
                  "Paired A/B timing of two builds on one machine: which kernels got slower, by "
                  "how much, with what confidence.",
                  details, flags, (int)(sizeof flags / sizeof flags[0]), NULL};
    lt_cli_operands operands = {"", NULL, 0, 0, 0};
    int exit_now;
    int code = lt_cli_parse_tool(&cli, &operands, argc, argv, &exit_now);
    if (exit_now)
        return code;
    r.side[0].role = "base";
    r.side[1].role = "new";
    lt_status status = check_options(o, &cli);
    int result = 0;
    if (status == LT_OK)
        status = run(&r, &result);
    for (int s = 0; s < SIDES; s++)
        remove_worktree(&r.side[s]);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    return result;
}
