/* End-to-end tests of the tools on result CSVs: `ltbench compare` on
 * crafted pairs of runs, `ltbench plot` on fixture CSVs of every figure. */
#include <criterion/criterion.h>

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "program.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- compare ---- */

/* One case of a copy summary CSV. */
typedef struct summary_row {
    const char *variant;
    double median, min, max; /* seconds per update */
    long long peak_bytes;
    double loss_end;
    const char *status;
    int threads;
    double load;             /* load_start and load_end; NaN: empty cells */
    const char *cpu_id;      /* NULL in the first row: a file from before the column */
    const char *wait_policy; /* omp_wait_policy; NULL in the first row: no such column */
    const char *steal_share; /* NULL in the first row: no such column */
    const char *kernel_isa;  /* NULL in the first row: no such column */
} summary_row;

static const char summary_header[] =
    "experiment,variant,kernel,preset,N,batch,layers,heads,head_dim,ffn,dropout,optimizer,"
    "base_lr,threads,seed,status,step_median_s,step_min_s,step_max_s,tokens_per_s,peak_bytes,"
    "planned_bytes,params,loss_start,loss_end,copy_accuracy_end,eval_loss,eval_copy_accuracy,"
    "last_step,total_s,note,ltbench_version,git_revision,cpu_model,blas,date,cores,load_start,"
    "load_end";

static void write_summary(const char *path, const summary_row *rows, int count)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    int has_cpu_id = count > 0 && rows[0].cpu_id != NULL;
    int has_policy = count > 0 && rows[0].wait_policy != NULL;
    int has_steal = count > 0 && rows[0].steal_share != NULL;
    int has_isa = count > 0 && rows[0].kernel_isa != NULL;
    fprintf(f, "%s%s%s%s%s\n", summary_header, has_cpu_id ? ",cpu_id" : "",
            has_policy ? ",omp_wait_policy" : "", has_steal ? ",steal_share" : "",
            has_isa ? ",kernel_isa" : "");
    for (int i = 0; i < count; i++) {
        const summary_row *r = &rows[i];
        fprintf(f,
                "copy,%s,%s-kernel,quick,32,16,2,2,16,64,0,radam,0.003,%d,1,%s,%.17g,%.17g,%.17g,"
                "%.17g,%lld,1000,17932,2.7,%.17g,0.5,2.1,0.5,100,10,,0.1.0,abc,Test CPU,"
                "OpenBLAS-openmp,2026-01-01T00:00:00Z,2,",
                r->variant, r->variant, r->threads, r->status, r->median, r->min, r->max,
                512 / r->median, r->peak_bytes, r->loss_end);
        if (!isnan(r->load)) /* NaN: both cells empty */
            fprintf(f, "%.2f,%.2f", r->load, r->load);
        else
            fputc(',', f);
        if (has_cpu_id)
            fprintf(f, ",%s", r->cpu_id != NULL ? r->cpu_id : "");
        if (has_policy)
            fprintf(f, ",%s", r->wait_policy != NULL ? r->wait_policy : "");
        if (has_steal)
            fprintf(f, ",%s", r->steal_share != NULL ? r->steal_share : "");
        if (has_isa)
            fprintf(f, ",%s", r->kernel_isa != NULL ? r->kernel_isa : "");
        fputc('\n', f);
    }
    fclose(f);
}

/* A base and a new summary CSV in a fresh folder. */
typedef struct pair {
    char dir[64], base[128], next[128];
} pair;

/* Compares the pair's files with `flags`; returns the exit status. */
static int compare_pair(const pair *p, const char *flags)
{
    char args[512];
    snprintf(args, sizeof args, "compare %s %s %s", p->base, p->next, flags);
    return ltbench(args);
}

/* Writes the pair's rows and compares them with `flags`. */
static int compare_rows(pair *p, const summary_row *base, int nb, const summary_row *next,
                        int nn, const char *flags)
{
    make_temp_dir(p->dir);
    snprintf(p->base, sizeof p->base, "%s/base.csv", p->dir);
    snprintf(p->next, sizeof p->next, "%s/new.csv", p->dir);
    write_summary(p->base, base, nb);
    write_summary(p->next, next, nn);
    return compare_pair(p, flags);
}

#define OK_ROW(variant, median, min, max) \
    {variant, median, min, max, 4096, 0.25, "ok", 2, 0.1, NULL, NULL, NULL, NULL}

/* The table line of `metric` must end with `verdict`. */
static void assert_verdict(const char *metric, const char *verdict)
{
    char needle[128];
    snprintf(needle, sizeof needle, "| %s |", metric);
    const char *line = strstr(output, needle);
    cr_assert_not_null(line, "no line for %s in:\n%s", metric, output);
    const char *end = strchr(line, '\n');
    char want[64];
    snprintf(want, sizeof want, "| %s |", verdict);
    const char *found = strstr(line, want);
    cr_assert(found != NULL && found < end, "%s: expected %s in:\n%s", metric, verdict, output);
}

Test(compare, clear_regression_fails)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.020, 0.019, 0.021)};
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 1, "%s", output);
    assert_verdict("step_median_s", "regressed");
    /* tokens/s is the same time again: listed with --all, counted once */
    cr_assert_null(strstr(output, "tokens_per_s"), "%s", output);
    ASSERT_MENTIONS("+100.0%");
    ASSERT_MENTIONS("**FAIL** (copy summary): 1 regressed");
    cr_assert_eq(compare_pair(&p, "--all"), 1, "%s", output);
    assert_verdict("tokens_per_s", "regressed (derived)");
    ASSERT_MENTIONS("**FAIL** (copy summary): 1 regressed");
    ASSERT_MENTIONS("| case | metric | base | new | change | verdict |");
    /* A looser threshold lets it pass. */
    cr_assert_eq(compare_pair(&p, "--threshold 150"), 0, "%s", output);
}

/* The same run with a slower kernel chosen by --kernel is matched to the
 * base case and judged, under a line that names both kernels. */
Test(compare, a_slower_kernel_is_matched_and_flagged)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.020, 0.019, 0.021)};
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 1, "%s", output);
    char *text = check_read_text(p.next);
    cr_assert_not_null(text);
    char *kernel = strstr(text, "linear-kernel");
    cr_assert_not_null(kernel);
    memcpy(kernel, "linear-slower", strlen("linear-slower"));
    write_file(p.next, text);
    free(text);
    cr_assert_eq(compare_pair(&p, ""), 1, "%s", output);
    assert_verdict("kernel", "other kernel");
    ASSERT_MENTIONS("linear-slower");
    assert_verdict("step_median_s", "regressed");
    ASSERT_MENTIONS("**FAIL**");
}

Test(compare, improvement_passes)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.020, 0.019, 0.021)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 0, "%s", output);
    assert_verdict("step_median_s", "improved");
    ASSERT_MENTIONS("**PASS**");
}

Test(compare, overlapping_ranges_are_noise)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.008, 0.016)};
    summary_row next[] = {OK_ROW("linear", 0.012, 0.009, 0.015)};
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 0, "%s", output);
    assert_verdict("step_median_s", "noise");
    cr_assert_null(strstr(output, "tokens_per_s"), "%s", output); /* derived: --all */
}

Test(compare, any_exact_change_fails_unless_tolerated)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    next[0].peak_bytes = 4100;
    next[0].loss_end = 0.24;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 1, "%s", output);
    assert_verdict("peak_bytes", "regressed");
    assert_verdict("loss_end", "changed"); /* lower loss: still not reproducible */
    cr_assert_eq(compare_pair(&p, "--exact-tolerance 5"), 0, "%s", output);
}

Test(compare, missing_rows_are_listed_and_no_common_row_is_an_error)
{
    pair p;
    summary_row base[] = {OK_ROW("softmax", 0.010, 0.009, 0.011),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011),
                          OK_ROW("linformer", 0.010, 0.009, 0.011)};
    /* the base measured softmax, the new run lacks it: a failure */
    cr_assert_eq(compare_rows(&p, base, 2, next, 2, ""), 1, "%s", output);
    ASSERT_MENTIONS("| softmax softmax-kernel N=32 | - | ok | - | - | missing in new |");
    ASSERT_MENTIONS("| linformer linformer-kernel N=32 | - | - | ok | - | only in new |");
    cr_assert_eq(compare_pair(&p, "--fail-on exact"), 1, "%s", output);
    base[0].status = "refused"; /* one the base did not measure either: listed only */
    cr_assert_eq(compare_rows(&p, base, 2, next, 2, ""), 0, "%s", output);
    ASSERT_MENTIONS("| softmax softmax-kernel N=32 | - | refused | - | - | missing in new |");
    base[0].status = "ok";

    summary_row other[] = {OK_ROW("reformer", 0.010, 0.009, 0.011)};
    cr_assert_eq(compare_rows(&p, base, 2, other, 1, ""), 2, "%s", output);
    ASSERT_MENTIONS("no case in common");
    ASSERT_MENTIONS("new.csv");
}

Test(compare, differing_provenance_is_not_comparable_and_not_run_is_not_judged)
{
    pair p;
    summary_row base[] = {OK_ROW("softmax", 0.010, 0.009, 0.011),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("softmax", 0.050, 0.049, 0.051),
                          OK_ROW("linear", 0.050, 0.049, 0.051)};
    next[0].threads = 4;
    base[1].status = "refused";
    next[1].status = "not-applicable";
    /* nothing could be judged: neither a pass nor a fail */
    cr_assert_eq(compare_rows(&p, base, 2, next, 2, ""), 3, "%s", output);
    ASSERT_MENTIONS("| softmax softmax-kernel N=32 | threads | 2 | 4 | - | not comparable |");
    ASSERT_MENTIONS("| linear linear-kernel N=32 | status | refused | not-applicable | - | not run |");
    ASSERT_MENTIONS("**NOTHING JUDGED**");
    cr_assert_null(strstr(output, "regressed |"), "%s", output);
    cr_assert_null(strstr(output, "PASS"), "%s", output);
    cr_assert_eq(compare_pair(&p, "--fail-on exact"), 3, "%s", output);
}

/* What a run must not pass: a case measured in the base that the new run
 * did not measure, and numbers that are no measured time. */
Test(compare, a_diverged_case_fails_and_damaged_times_are_refused)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    next[0].status = "diverged";
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    ASSERT_MENTIONS("| linear linear-kernel N=32 | status | ok | diverged | - | regressed |");
    next[0].status = "ok";
    next[0].median = INFINITY;
    next[0].max = INFINITY;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 2, "%s", output);
    ASSERT_MENTIONS("new.csv, row 1: step_median_s is inf in a measured case");
    next[0].median = 0.02; /* above its own max */
    next[0].max = 0.011;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 2, "%s", output);
    ASSERT_MENTIONS("min <= median <= max");
    next[0].median = 0.010;
    next[0].min = -1;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 2, "%s", output);
    ASSERT_MENTIONS("not a measured time");
}

/* One model name ("AMD EPYC") can stand for CPUs of several generations:
 * the family, model and stepping tell them apart. They run the same code to
 * the same bits, so only the timings are not comparable; the exact metrics
 * are judged. A file written before cpu_id existed is compared on the rest. */
Test(compare, another_cpu_generation_makes_only_timings_not_comparable)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.050, 0.049, 0.051)};
    base[0].cpu_id = "family 25 model 17 stepping 1";
    next[0].cpu_id = "family 26 model 2 stepping 0";
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--all"), 0, "%s", output);
    assert_verdict("step_median_s (cpu_id)", "not comparable");
    assert_verdict("peak_bytes", "unchanged");
    cr_assert_null(strstr(output, "regressed |"), "%s", output);

    next[0].loss_end = 0.5; /* an exact metric still fails across generations */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("loss_end", "regressed");
    next[0].loss_end = base[0].loss_end;

    base[0].cpu_id = NULL;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 1, "%s", output);
    assert_verdict("step_median_s", "regressed");

    base[0].cpu_id = ""; /* a row kept from a file written before the column */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 1, "%s", output);
    assert_verdict("step_median_s", "regressed");
}

/* Another set of ltbench's kernels (avx2 against avx512) or another BLAS
 * core sums in another order: the timings are not comparable, the counts
 * (bytes) are judged exactly, the losses within the cross-machine
 * tolerance (1% or 0.02); a file written before kernel_isa existed is
 * compared on the rest. */
Test(compare, another_kernel_set_judges_counts_exactly_and_losses_within_tolerance)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.050, 0.049, 0.051)};
    base[0].kernel_isa = "avx512";
    next[0].kernel_isa = "avx2";
    next[0].loss_end = base[0].loss_end + 0.015; /* rounding's reach: within 0.02 */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--all"), 0, "%s", output);
    assert_verdict("step_median_s (kernel_isa)", "not comparable");
    assert_verdict("loss_end (kernel_isa: 1% or 0.02)", "unchanged");
    assert_verdict("peak_bytes", "unchanged");
    ASSERT_MENTIONS("**PASS**");

    next[0].loss_end = 0.5; /* beyond rounding: fails */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("loss_end (kernel_isa: 1% or 0.02)", "regressed");
    cr_assert_eq(compare_pair(&p, "--fail-on exact --cross-absolute 0.3"), 0, "%s", output);

    next[0].loss_end = base[0].loss_end;
    next[0].peak_bytes = base[0].peak_bytes + 64; /* a count: judged exactly anywhere */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("peak_bytes", "regressed");

    next[0].peak_bytes = base[0].peak_bytes;
    next[0].loss_end = 0.5;
    next[0].kernel_isa = "avx512"; /* the same set: bit for bit */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("loss_end", "regressed");

    base[0].kernel_isa = NULL; /* written before the column */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("loss_end", "regressed");
}

/* How threads wait (OMP_WAIT_POLICY, GOMP_SPINCOUNT) changes their speed,
 * never a bit of the results: a baseline taken under another spin count
 * still has its exact metrics judged. */
Test(compare, another_wait_policy_makes_only_timings_not_comparable)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.050, 0.049, 0.051)};
    base[0].wait_policy = "unset spin=5000";
    next[0].wait_policy = "unset spin=2000";
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--all"), 0, "%s", output);
    assert_verdict("step_median_s (omp_wait_policy)", "not comparable");
    assert_verdict("peak_bytes", "unchanged");
    next[0].loss_end = 0.5;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, "--fail-on exact"), 1, "%s", output);
    assert_verdict("loss_end", "regressed");
}

/* Rows kept from a file written before the load columns existed carry them
 * empty: compare reads no load there rather than refusing the file. */
Test(compare, empty_load_cells_are_no_load)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    next[0].load = NAN;
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 0, "%s", output);
    cr_assert_null(strstr(output, "busy machine"), "%s", output);
    ASSERT_MENTIONS("**PASS**");
}

/* On a virtual machine the load average counts only the guest's own tasks:
 * the time the hypervisor gave other guests (steal) tells a contended host.
 * Empty cells (rows kept from a file without the column) and nan are none. */
Test(compare, a_contended_virtual_machine_is_reported)
{
    pair p;
    summary_row base[] = {OK_ROW("softmax", 0.010, 0.009, 0.011),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("softmax", 0.010, 0.009, 0.011),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    base[0].steal_share = "0.010";
    base[1].steal_share = "";
    next[0].steal_share = "nan";
    next[1].steal_share = "0.204";
    cr_assert_eq(compare_rows(&p, base, 2, next, 2, "--fail-on exact"), 0, "%s", output);
    ASSERT_MENTIONS("new run taken on a contended virtual machine");
    ASSERT_MENTIONS("20.4%");
    cr_assert_null(strstr(output, "base run taken on a contended"), "%s", output);
    cr_assert_null(strstr(output, "busy machine"), "%s", output);
    ASSERT_MENTIONS("**PASS**");
}

Test(compare, busy_machine_is_reported)
{
    pair p;
    summary_row base[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    next[0].load = 1.75; /* above half of the 2 cores the CSV records */
    cr_assert_eq(compare_rows(&p, base, 1, next, 1, ""), 0, "%s", output);
    ASSERT_MENTIONS("new run taken on a busy machine");
    ASSERT_MENTIONS("1.75");
    cr_assert_null(strstr(output, "base run taken on a busy machine"), "%s", output);
    cr_assert_eq(compare_pair(&p, "--busy-load 2"), 0, "%s", output);
    cr_assert_null(strstr(output, "busy machine"), "%s", output);
}

/* Replaces the first `from` in `text` (in place, same length or shorter). */
static void replace(char *text, const char *from, const char *to)
{
    char *at = strstr(text, from);
    cr_assert_not_null(at, "'%s' not in the fixture", from);
    size_t from_len = strlen(from), to_len = strlen(to);
    memmove(at + to_len, at + from_len, strlen(at + from_len) + 1);
    memcpy(at, to, to_len);
}

Test(compare, bad_input_exits_2_naming_the_file)
{
    pair p;
    summary_row rows[] = {OK_ROW("linear", 0.010, 0.009, 0.011)};
    cr_assert_eq(compare_rows(&p, rows, 1, rows, 1, ""), 0, "%s", output);
    FILE *f = fopen(p.next, "r");
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);

    char path[160], args[512];
    struct { const char *from, *to, *mention; } bad[] = {
        {",loss_end,", ",loss_final,", "column 'loss_end' is missing"},
        {",linear-kernel,", ",\"linear-kernel,", "quoted field never closed"},
        {",linear-kernel,", ",,linear-kernel,", "row has"},
        {"0.25,0.5", "fast,0.5", "expected a number, got 'fast'"},
        {"experiment,variant,kernel,", "experiment,variant,kernal,", "key column 'kernel'"},
        {"copy,linear", "speech,linear", "key column 'model'"},
        {"copy,linear", "image2,linear", "unknown experiment 'image2'"},
        /* copy results have always had dropout: one without it is refused */
        {",ffn,dropout,", ",ffn,dropout_p,", "a copy CSV without key column 'dropout'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static char changed[8192];
        strcpy(changed, text);
        replace(changed, bad[i].from, bad[i].to);
        snprintf(path, sizeof path, "%s/bad%zu.csv", p.dir, i);
        write_file(path, changed);
        snprintf(args, sizeof args, "compare %s %s --json %s/out", p.base, path, p.dir);
        cr_assert_eq(ltbench(args), 2, "case %zu:\n%s", i, output);
        ASSERT_MENTIONS(bad[i].mention);
        ASSERT_MENTIONS(path);
    }
    /* Different kinds, a header alone, a missing file, one operand. */
    snprintf(path, sizeof path, "%s/speech.csv", p.dir);
    write_file(path, "experiment,model,kernel,epoch,preset,hours,utterance_frames,stack,batch,"
                     "threads,elapsed_s,epoch_s,train_loss,dev_per,test_per\n"
                     "speech,lstm,none,1,quick,0.005,400,3,4,2,2,2,30,0.5,0.5\n");
    snprintf(args, sizeof args, "compare %s %s", p.base, path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("is a copy summary CSV but");
    snprintf(path, sizeof path, "%s/empty.csv", p.dir);
    write_file(path, summary_header);
    snprintf(args, sizeof args, "compare %s %s", p.base, path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("no data rows");
    snprintf(args, sizeof args, "compare %s %s/none.csv", p.base, p.dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("none.csv");
    snprintf(args, sizeof args, "compare %s", p.base);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("BASE.csv NEW.csv");
    /* a failure after reading (the JSON cannot be written) is reported, and
     * no verdict is printed before it */
    snprintf(args, sizeof args, "compare %s %s --json /proc/ltbench/out", p.base, p.base);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("/proc/ltbench");
    cr_assert(strstr(output, "PASS") == NULL && strstr(output, "FAIL") == NULL, "%s", output);
    cr_assert_eq(ltbench("compare a.csv b.csv --threshold -1"), 2, "%s", output);
    ASSERT_MENTIONS("--threshold");
    /* Nothing written by any failure: base, new, the bad files. */
    cr_assert_eq(check_count_entries(p.dir), 2 + 8 + 2, "%s", p.dir);
}

/* Writes speech results of two models into `path`, with a dropout column
 * or, as image and speech results written before it existed, without. */
static void write_speech_results(const char *path, int with_dropout)
{
    char text[1024];
    const char *d = with_dropout ? "0," : "";
    snprintf(text, sizeof text,
             "experiment,model,kernel,preset,hours,utterance_frames,stack,batch,%slayers,"
             "width,status,dev_per,test_per\n"
             "speech,softmax,softmax-gemm,quick,0.005,0,3,4,%s1,16,ok,0.5,0.6\n"
             "speech,bilstm,none,quick,0.005,0,3,4,%s1,32,ok,0.4,0.5\n",
             with_dropout ? "dropout," : "", d, d);
    write_file(path, text);
}

/* Two speech (or image) files written before their dropout key existed still
 * compare, matched on the other keys; one of them against a file with the
 * key is refused, naming the one that lacks it, whichever operand it is. */
Test(compare, results_older_than_the_dropout_key_compare_on_the_others)
{
    char dir[64], base[128], next[128], args[512], mention[256];
    make_temp_dir(dir);
    snprintf(base, sizeof base, "%s/base.csv", dir);
    snprintf(next, sizeof next, "%s/new.csv", dir);
    write_speech_results(base, 0);
    write_speech_results(next, 0);
    snprintf(args, sizeof args, "compare %s %s", base, next);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("PASS");
    ASSERT_MENTIONS("4 unchanged"); /* both models matched, two metrics each */
    write_speech_results(next, 1); /* base.csv still lacks it, as base or as new */
    snprintf(mention, sizeof mention, "%s: key column 'dropout' is missing", base);
    for (int swap = 0; swap < 2; swap++) {
        snprintf(args, sizeof args, "compare %s %s", swap ? next : base, swap ? base : next);
        cr_assert_eq(ltbench(args), 2, "%s", output);
        ASSERT_MENTIONS(mention);
        cr_assert(strstr(output, "PASS") == NULL && strstr(output, "FAIL") == NULL, "%s",
                  output);
    }
}

/* ---- a small JSON reader: enough to check what --json wrote ---- */

typedef struct json_reader {
    const char *s;
    int names;           /* "name" members seen */
    char last_name[256]; /* the value of the last one */
} json_reader;

static void json_space(json_reader *j)
{
    while (isspace((unsigned char)*j->s))
        j->s++;
}

static int json_value(json_reader *j);

static int json_string(json_reader *j, char *out, size_t size)
{
    if (*j->s != '"')
        return 0;
    size_t n = 0;
    for (j->s++; *j->s != '"'; j->s++) {
        if (*j->s == '\0' || (unsigned char)*j->s < 0x20)
            return 0;
        if (*j->s == '\\' && *++j->s == '\0')
            return 0;
        if (out && n + 1 < size)
            out[n++] = *j->s;
    }
    if (out)
        out[n] = '\0';
    j->s++;
    return 1;
}

static int json_members(json_reader *j, int object)
{
    char close = object ? '}' : ']';
    j->s++;
    json_space(j);
    if (*j->s == close) {
        j->s++;
        return 1;
    }
    for (;;) {
        json_space(j);
        if (object) {
            char key[64];
            if (!json_string(j, key, sizeof key))
                return 0;
            json_space(j);
            if (*j->s++ != ':')
                return 0;
            json_space(j);
            if (strcmp(key, "name") == 0) {
                j->names++;
                if (!json_string(j, j->last_name, sizeof j->last_name))
                    return 0;
            } else if (!json_value(j)) {
                return 0;
            }
        } else if (!json_value(j)) {
            return 0;
        }
        json_space(j);
        if (*j->s == ',') {
            j->s++;
            continue;
        }
        return *j->s++ == close;
    }
}

static int json_value(json_reader *j)
{
    json_space(j);
    if (*j->s == '{' || *j->s == '[')
        return json_members(j, *j->s == '{');
    if (*j->s == '"')
        return json_string(j, NULL, 0);
    static const char *const literals[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if (strncmp(j->s, literals[i], strlen(literals[i])) == 0) {
            j->s += strlen(literals[i]);
            return 1;
        }
    char *end;
    strtod(j->s, &end);
    if (end == j->s)
        return 0;
    j->s = end;
    return 1;
}

/* Reads `path` as JSON: the number of "name" members, or -1 if malformed. */
static int json_names(const char *path, char *all, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    snprintf(all, size, "%s", text);
    json_reader j = {text, 0, ""};
    if (!json_value(&j))
        return -1;
    json_space(&j);
    return *j.s == '\0' && text[0] == '[' ? j.names : -1;
}

Test(compare, json_for_github_action_benchmark)
{
    pair p;
    summary_row base[] = {OK_ROW("softmax", 0.010, 0.009, 0.011),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    summary_row next[] = {OK_ROW("softmax", 0.020, 0.019, 0.021),
                          OK_ROW("linear", 0.010, 0.009, 0.011)};
    char dir[64];
    make_temp_dir(dir);
    char flags[128];
    snprintf(flags, sizeof flags, "--json %s/bench.json", dir);
    cr_assert_eq(compare_rows(&p, base, 2, next, 2, flags), 1, "%s", output);
    char path[160];
    static char text[1 << 16];
    /* Smaller is better: per case step_median_s, peak_bytes, planned_bytes,
     * params, loss_start, loss_end, eval_loss. */
    snprintf(path, sizeof path, "%s/bench-smaller.json", dir);
    cr_assert_eq(json_names(path, text, sizeof text), 2 * 7, "%s", text);
    const char *expected[] = {
        "\"name\": \"copy summary: softmax softmax-kernel N=32 step_median_s\"",
        "\"unit\": \"s\"", "\"value\": 0.02", "\"range\": \"0.019..0.021\"", "regressed",
        "\"name\": \"copy summary: linear linear-kernel N=32 peak_bytes\""};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_assert(strstr(text, expected[i]) != NULL, "missing %s in:\n%s", expected[i], text);
    /* Bigger is better: tokens_per_s and the two accuracies. */
    snprintf(path, sizeof path, "%s/bench-bigger.json", dir);
    cr_assert_eq(json_names(path, text, sizeof text), 2 * 3, "%s", text);
    cr_assert(strstr(text, "\"name\": \"copy summary: linear linear-kernel N=32 tokens_per_s\"") !=
                  NULL, "%s", text);
    cr_assert(strstr(text, "\"unit\": \"tokens/s\"") != NULL, "%s", text);
    cr_assert_eq(check_count_entries(dir), 2);
}

Test(compare, reference_runs_compare_with_themselves)
{
    const char *src = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(src);
    /* every kind of the reference runs, and CI's baseline */
    const char *files[] = {"reference/scaling/scaling.csv",   "reference/copy/summary.csv",
                           "reference/copy/curves.csv",       "reference/copy-delta/summary.csv",
                           "reference/image/mnist.csv",       "reference/image/mnist-curves.csv",
                           "reference/image/cifar10-catdog.csv", "reference/speech/speech.csv",
                           "reference/speech/speech-curves.csv", "baseline/copy/summary.csv",
                           "baseline/scaling/scaling.csv",    "baseline/image/mnist.csv",
                           "baseline/speech/speech.csv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, "compare %s/results/%s %s/results/%s", src, files[i], src,
                 files[i]);
        cr_assert_eq(ltbench(args), 0, "%s:\n%s", files[i], output);
        ASSERT_MENTIONS("**PASS**");
        ASSERT_MENTIONS("(every metric unchanged)");
    }
}

/* The report `suite --report-only` writes in a new folder `dir` from
 * reference CSVs copied into it (`files`: paths under results/reference,
 * NULL-terminated), for `experiments`, with `extra` flags. */
static char *report_from_reference_with(char *dir /* [64] */, const char *experiments,
                                        const char *const *files, const char *extra)
{
    const char *src = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(src);
    char cmd[1024], args[512], path[200];
    make_temp_dir(dir);
    for (int i = 0; files[i] != NULL; i++) {
        snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname %s/%s)\" && cp %s/results/reference/%s %s/%s",
                 dir, files[i], src, files[i], dir, files[i]);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
    }
    snprintf(args, sizeof args, "suite --preset medium --experiments %s --report-only --out %s %s",
             experiments, dir, extra);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    char *text = check_read_text(path);
    cr_assert_not_null(text);
    return text;
}

static char *report_from_reference(char *dir /* [64] */, const char *experiments,
                                   const char *const *files)
{
    return report_from_reference_with(dir, experiments, files, "");
}

/* The report of DIR written again (--report-only), after a test changed
 * its CSVs: its text. */
static char *report_again(const char *dir, const char *experiments)
{
    char args[512], path[200];
    snprintf(args, sizeof args, "suite --preset medium --experiments %s --report-only --out %s",
             experiments, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    return check_read_text(path);
}

/* The report of DIR written again after `shell` changed its CSVs (run in
 * DIR): its text. */
static char *report_after(const char *dir, const char *experiments, const char *shell)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, shell);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    return report_again(dir, experiments);
}

/* A configuration that differs between the rows that ran is given as its
 * range (scaling's batch shrinks as N grows), not as the first row's. */
Test(report, configuration_that_varies_by_row_is_a_range, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"scaling/scaling.csv", NULL};
    char *text = report_from_reference(dir, "scaling", files);
    cr_assert(strstr(text, "Configuration here: 8 heads of 64, batch 1 to 8. The paper's") !=
                  NULL,
              "%s", text);
    free(text);
}

/* Generation at the paper's size runs untrained weights: its section
 * judges the speed-ups and says nothing of bits/dim it did not measure. */
Test(report, untrained_image_rows_judge_speed_alone, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"image-paper/mnist.csv", NULL};
    char *text = report_from_reference(dir, "image", files);
    const char *section = strstr(text, "at the paper's size (speed only)");
    cr_assert_not_null(section, "%s", text);
    cr_assert(strstr(section, "faster than softmax recomputing the prefix") != NULL, "%s",
              section);
    cr_assert(strstr(section, "bits/dim is close to softmax's") == NULL, "%s", section);
    cr_assert(strstr(section, "bits/dim: softmax nan") == NULL, "%s", section);
    cr_assert(strstr(section, "What the models generate") == NULL, "%s", section);
    cr_assert(strstr(section, "untrained (speed only)") != NULL, "%s", section);
    free(text);
}

/* Without the paper's tables (--paper elsewhere) the claims show its
 * numbers as "?" and say which file could not be read, never "nan". */
Test(report, missing_paper_numbers_show_as_unknown, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"image-paper/cifar10-catdog.csv", NULL};
    char *text = report_from_reference_with(dir, "image", files, "--paper /nonexistent-paper");
    const char *claims = strstr(text, "The paper's conclusions");
    cr_assert_not_null(claims, "%s", text);
    cr_assert(strstr(text, "(the paper's numbers, /nonexistent-paper/table2-cifar10.csv, "
                           "could not be read: they show as ?)") != NULL,
              "%s", text);
    cr_assert(strstr(claims, "softmax recompute ? s") != NULL, "%s", claims);
    cr_assert(strstr(claims, "(the paper: ?)") != NULL, "%s", claims);
    cr_assert(strstr(claims, "nan") == NULL, "%s", claims);
    free(text);
}

/* The delta-rule run answers its question: the share of linear's held-out
 * gap to softmax each gated variant closes, and that one seed is not judged
 * against noise; its figure's caption names the section. */
Test(report, copy_delta_section_says_how_much_of_the_gap_each_closes, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"copy-delta/summary.csv", "copy-delta/curves.csv", NULL};
    char *text = report_from_reference(dir, "copy", files);
    const char *answer = strstr(text, "Does the delta rule close linear attention's gap");
    cr_assert_not_null(answer, "%s", text);
    const char *gated[] = {"delta ", "gated-delta ", "gla "};
    for (size_t i = 0; i < sizeof gated / sizeof gated[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "; %s", gated[i]);
        cr_assert(strstr(answer, i == 0 ? "closes: delta " : want) != NULL, "%s: %s", gated[i],
                  answer);
    }
    cr_assert(strstr(answer, "One seed: differences between the gated variants are not judged")
                  != NULL, "%s", answer);
    cr_assert(strstr(answer, "nan") == NULL, "%s", answer);
    /* its figure is captioned by the section, not as the paper's Fig. 2 alone */
    if (system("command -v gnuplot >/dev/null 2>&1") == 0)
        cr_assert(strstr(answer, "![Copy task: the delta rule and gating (beyond the paper): "
                                 "Copy task: training loss") != NULL,
                  "%s", answer);
    free(text);
}

/* An image section opens with its configuration beside the paper's and
 * shows every variant's sample and completion grids that are there. */
Test(report, image_section_shows_its_configuration_and_grids, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"image/mnist.csv", "image/mnist-linear-samples.png",
                           "image/mnist-linear-completions.png", NULL};
    char *text = report_from_reference(dir, "image", files);
    cr_assert(strstr(text, "Configuration here: 2 layers, 4 heads of 32, FFN 512, 14000 "
                           "updates. The paper's: 8 layers, 8 heads of 32") != NULL,
              "%s", text);
    /* the reference's grids are at actual size: shown enlarged */
    cr_assert(strstr(text, "![mnist linear samples](figures/image-mnist-linear-samples.png)") !=
                  NULL,
              "%s", text);
    cr_assert(strstr(text, "![mnist linear completions](figures/image-mnist-linear-completions."
                           "png)") != NULL,
              "%s", text);
    cr_assert(strstr(text, "mnist-softmax-samples") == NULL, "not there, not linked: %s", text);
    cr_assert(strstr(text, "the white ticks at the sides mark where the given half ends") != NULL,
              "%s", text);
    free(text);
}

/* The report's speech section, written from the reference CSVs: the
 * corpus line states the positions that reach attention, that test voices
 * are unseen, and the most-frequent-phone baseline as a percentage (not a
 * raw fraction). */
Test(report, speech_section_states_positions_and_baseline_in_percent, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"speech/speech.csv", "speech/speech-curves.csv", NULL};
    char *text = report_from_reference(dir, "speech", files);
    cr_assert(strstr(text, "positions reach attention on average") != NULL, "%s", text);
    cr_assert(strstr(text, "test by voices unseen in training") != NULL, "%s", text);
    const char *at = strstr(text, "gives a PER of ");
    cr_assert_not_null(at, "%s", text);
    double per;
    int used = 0;
    cr_assert_eq(sscanf(at + strlen("gives a PER of "), "%lf%n", &per, &used), 1);
    cr_assert_eq(at[strlen("gives a PER of ") + used], '%', "%.40s", at);
    cr_assert(per > 1 && per <= 100, "%g", per);
    free(text);
}

/* Speed is judged only where it was timed alone. A run whose load average
 * at a row's end exceeds its own threads plus one says so under its table
 * and leaves its speed claims unjudged (its quality claims do not depend on
 * the load); the speed section's run, timed alone, is judged. */
Test(report, speed_timed_beside_other_work_is_not_judged, .timeout = 120)
{
    char dir[64], cmd[1024];
    const char *files[] = {"speech/speech.csv", "speech/speech-curves.csv", NULL};
    char *text = report_from_reference(dir, "speech", files);
    cr_assert(strstr(text, "Timed beside other work") == NULL, "%s", text);
    cr_assert(strstr(text, "faster per epoch than softmax") != NULL, "%s", text);
    cr_assert(strstr(text, "not judged: timed beside other work") == NULL, "%s", text);
    free(text);

    /* the same rows once more as the quiet speed run; the quality run busy:
     * load_end is the fourth column from the end */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/speech-speed && cp %s/speech/speech.csv %s/speech-speed/ && "
             "awk 'BEGIN { FS = OFS = \",\" } NR > 1 { $(NF - 3) = \"5.50\" } 1' "
             "%s/speech/speech.csv > %s/busy.csv && mv %s/busy.csv %s/speech/speech.csv",
             dir, dir, dir, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    text = report_again(dir, "speech");
    const char *speed = strstr(text, "## Speech recognition: time per epoch (speed only)");
    cr_assert_not_null(speed, "%s", text);
    const char *busy = strstr(text, "Timed beside other work (a load average of 5.50 at a row's "
                                    "end, with 2 threads of its own)");
    cr_assert(busy != NULL && busy < speed, "%s", text);
    const char *quality = strstr(text, "| Table 3: linear attention is");
    cr_assert(quality != NULL && quality < speed, "%s", text);
    for (const char *claim = quality; claim < speed && strncmp(claim, "| Table 3", 9) == 0;
         claim = strchr(claim, '\n') + 1) { /* both speed claims (the last two rows) */
        const char *unjudged = strstr(claim, "not judged: timed beside other work");
        cr_assert(unjudged != NULL && unjudged < strchr(claim, '\n'), "%s", claim);
    }
    const char *per = strstr(text, "| Table 3: softmax has a lower PER");
    cr_assert(per != NULL && per < speed, "%s", text);
    /* the speed section: its two claims, judged */
    const char *claim = strstr(speed, "| Table 3: linear attention is");
    cr_assert_not_null(claim, "%s", speed);
    cr_assert(strstr(claim, "**holds") != NULL, "%s", claim);
    cr_assert(strstr(speed, "Timed beside other work") == NULL, "%s", speed);
    cr_assert(strstr(speed, "not judged: timed") == NULL, "%s", speed);
    cr_assert(strstr(speed, "softmax has a lower PER") == NULL, "%s", speed);
    free(text);
}

/* A model trained across revisions (resumed before resuming refused it)
 * is named under its table with the revision of each stretch of updates,
 * from its curves, though its result row names only the last; a run
 * trained by one revision gets no such line. The other seeds' runs are
 * named with the models they ran and their revisions. */
Test(report, training_across_revisions_and_other_seeds_are_named, .timeout = 120)
{
    char dir[64];
    const char *files[] = {"copy/summary.csv", "copy/curves.csv", NULL};
    char *text = report_from_reference(dir, "copy", files);
    cr_assert(strstr(text, "Trained across revisions") == NULL, "%s", text);
    cr_assert(strstr(text, "The other seeds' runs") == NULL, "%s", text);
    free(text);
    /* linear's first 5000 updates by another revision; a seed-3 run of
     * softmax and linear by a third, linear's row kept from a later day
     * (a resumed run keeps its rows as they were) */
    text = report_after(
        dir, "copy",
        "awk 'BEGIN { FS = OFS = \",\" } NR == 1 { for (i = 1; i <= NF; i++) "
        "{ if ($i == \"git_revision\") g = i; if ($i == \"variant\") v = i; "
        "if ($i == \"step\") s = i } } NR > 1 && $v == \"linear\" && $s <= 5000 "
        "{ $g = \"aaaaaaaaaaaa\" } 1' copy/curves.csv > c && mv c copy/curves.csv && "
        "mkdir -p copy-seed3 && awk 'BEGIN { FS = OFS = \",\" } NR == 1 { for (i = 1; "
        "i <= NF; i++) { if ($i == \"git_revision\") g = i; if ($i == \"variant\") v = i; "
        "if ($i == \"seed\") s = i; if ($i == \"date\") d = i } } "
        "NR > 1 { $g = \"bbbbbbbbbbbb\"; $s = 3 } "
        "NR > 1 && $v == \"linear\" { $d = \"2030-01-01T00:00:00Z\" } "
        "NR == 1 || $v == \"softmax\" || $v == \"linear\"' copy/summary.csv > "
        "copy-seed3/summary.csv");
    const char *line = strstr(text, "Trained across revisions, as its curves record: linear by "
                                    "`aaaaaaaaaaaa` to update ");
    cr_assert_not_null(line, "%s", text);
    const char *end = strchr(line, '\n');
    const char *then = strstr(line, ", then `");
    cr_assert(then != NULL && then < end, "%.*s", (int)(end - line), line);
    cr_assert(strstr(then, "` to 10000.") != NULL && strstr(then, "` to 10000.") < end, "%s",
              line);
    const char *softmax = strstr(line, "softmax");
    cr_assert(softmax == NULL || softmax > end, "%.*s", (int)(end - line), line);
    const char *seed3 = strstr(text, "- seed 3 (`copy-seed3/summary.csv`): softmax, linear; git "
                                     "revision `bbbbbbbbbbbb` on ");
    cr_assert_not_null(seed3, "%s", text);
    end = strchr(seed3, '\n');
    cr_assert(end - seed3 > 25 && strncmp(end - 25, "Z to 2030-01-01T00:00:00Z", 25) == 0,
              "%.*s", (int)(end - seed3), seed3);
    free(text);
}

/* OUT/RUN/summary.csv: the reference copy summary with `cpu_id` as its
 * cpu_id (NULL: no such column, as written before it existed). The
 * column, where the reference has it, is found counting from the end: no
 * cell after it holds a comma. */
static void copy_summary_with_cpu_id(const char *dir, const char *run, const char *cpu_id)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/%s && awk -v id='%s' -v add=%d 'BEGIN { FS = OFS = \",\" } "
             "NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"cpu_id\") back = NF - i } "
             "{ cell = NR == 1 ? \"cpu_id\" : id } "
             "back == \"\" { print add ? $0 \",\" cell : $0; next } "
             "{ line = sep = \"\"; drop = NF - back; "
             "  for (i = 1; i <= NF; i++) if (i != drop || add) { "
             "    line = line sep (i == drop ? cell : $i); sep = \",\" } "
             "  print line }' "
             "%s/results/reference/copy/summary.csv > %s/%s/summary.csv",
             dir, run, cpu_id != NULL ? cpu_id : "", cpu_id != NULL, getenv("LTBENCH_SOURCE"),
             dir, run);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The report names the CPU with its generation, and under each table the
 * revisions and machines that made its rows; its opening line says
 * whether one revision on one machine made them all. */
Test(report, the_cpu_generation_tells_runs_apart, .timeout = 120)
{
    const char *src = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(src);
    char dir[64], args[512], path[200];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    snprintf(args, sizeof args, "suite --preset medium --experiments copy --report-only --out %s",
             dir);
    copy_summary_with_cpu_id(dir, "copy", "family 25 model 17 stepping 1");
    copy_summary_with_cpu_id(dir, "copy-h16", "family 25 model 17 stepping 1");
    cr_assert_eq(ltbench(args), 0, "%s", output);
    char *text = check_read_text(path);
    cr_assert(strstr(text, "- CPU: AMD EPYC (family 25 model 17 stepping 1)\n") != NULL, "%s",
              text);
    cr_assert(strstr(text, "Every table below was measured by git revision `") != NULL, "%s",
              text);
    cr_assert(strstr(text, "` on AMD EPYC (family 25 model 17 stepping 1).") != NULL, "%s", text);
    free(text);

    copy_summary_with_cpu_id(dir, "copy-h16", "family 26 model 2 stepping 0");
    cr_assert_eq(ltbench(args), 0, "%s", output);
    text = check_read_text(path);
    cr_assert(strstr(text, "measured by 1 git revision on 2 CPUs (named by id): each table "
                           "names its own") != NULL, "%s", text);
    cr_assert(strstr(text, " on `AMD EPYC (family 26 model 2 stepping 0)`; kernel set") != NULL,
              "%s", text);
    free(text);
    /* a run without a CPU id is no countable machine: the line says so */
    copy_summary_with_cpu_id(dir, "copy-h16", NULL);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    text = check_read_text(path);
    cr_assert(strstr(text, "measured by 1 git revision on 1 CPU (named by id) and on machines "
                           "whose CPU id was not recorded") != NULL,
              "%s", text);
    free(text);
    copy_summary_with_cpu_id(dir, "copy-h16", "family 26 model 2 stepping 0");
    /* rows of one table from two revisions: both named, with their rows */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sed -i '2s/,%s,/,0123456789ab+%s,/' %s/copy/summary.csv",
             "\\([0-9a-f]\\{12\\}\\)", "\\1", dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    text = check_read_text(path);
    cr_assert(strstr(text, "Measured by git revisions `0123456789ab+") != NULL, "%s", text);
    cr_assert(strstr(text, " (1 row), `") != NULL, "%s", text);
    free(text);
    /* a table written before cpu_id existed says it names no generation */
    copy_summary_with_cpu_id(dir, "copy-h16", NULL);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    text = check_read_text(path);
    cr_assert(strstr(text, " on `AMD EPYC (generation not recorded)`; kernel set") != NULL, "%s",
              text);
    free(text);
}

/* CIFAR-10 at the paper's size judges Table 2's GPU ratio there, says the
 * ratio of the appendix's CPU beside it, and judges the appendix too, from
 * both of the paper's tables, each shown. */
Test(report, cifar_at_the_papers_size_judges_table_2_and_its_cpu_appendix, .timeout = 120)
{
    char dir[64], paper[512];
    const char *files[] = {"image-paper/cifar10-catdog.csv", NULL};
    snprintf(paper, sizeof paper, "--paper %s/data/paper", getenv("LTBENCH_SOURCE"));
    char *text = report_from_reference_with(dir, "image", files, paper);
    const char *section = strstr(text, "CIFAR-10 generation at the paper's size");
    cr_assert_not_null(section, "%s", text);
    cr_assert(strstr(section, "The paper (table2-cifar10.csv;") != NULL, "%s", section);
    cr_assert(strstr(section, "The paper (appendix-cpu-cifar10.csv;") != NULL, "%s", section);
    /* untrained weights (speed only): no training to give */
    cr_assert(strstr(section, "Configuration here: 16 layers, 8 heads of 32, FFN 1024, untrained "
                              "weights (speed only). The paper's") != NULL,
              "%s", section);
    cr_assert(strstr(section, "0 updates") == NULL, "%s", section);
    cr_assert(strstr(section, "| linear attention (recurrent) generates 4462x faster than softmax "
                              "recomputing the prefix | 579x at batch 1") != NULL,
              "%s", section);
    cr_assert(strstr(section, "on the paper's CPU the same ratio is 192x (its appendix, judged "
                              "below) | **does not hold** (rule: holds if the same order of "
                              "magnitude or more (at least 1000x))") != NULL,
              "%s", section);
    cr_assert(strstr(section, "softmax recompute 8651 s, softmax cached 71.9 s, linear "
                              "recurrent 45.1 s") != NULL,
              "%s", section);
    cr_assert(strstr(section, "faster than a softmax that caches keys and values (55.8x on the "
                              "authors' GPU) | 2.1x at batch 1 | **holds**") != NULL,
              "%s", section);
    cr_assert(strstr(section, "no Reformer rows in this run | **not measured**") != NULL, "%s",
              section);
    free(text);
}

/* The appendix step (generation speed only) has no figure: the suite draws
 * none for it, where it used to draw a bits/dim chart of NaNs. */
Test(report, a_section_without_a_figure_draws_none, .timeout = 120)
{
    char dir[64], path[200];
    const char *files[] = {"image-paper/cifar10-catdog.csv", NULL};
    char *text = report_from_reference(dir, "image", files);
    cr_assert(strstr(text, "## CIFAR-10 generation at the paper's size") != NULL, "%s", text);
    free(text);
    const char *figures[] = {"image.gp", "image-bits.gp", "image.png", "image-bits.png"};
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        snprintf(path, sizeof path, "%s/figures/%s", dir, figures[i]);
        cr_assert_neq(access(path, F_OK), 0, "%s was drawn", figures[i]);
    }
}

/* ---- plot ---- */

static const char scaling_csv[] =
    "experiment,variant,kernel,causal,N,status,fwd_bwd_per_sample_s,peak_bytes_per_sample,"
    "threads\n"
    "scaling,softmax,softmax-gemm,0,512,ok,0.017,16842752,2\n"
    "scaling,softmax,softmax-gemm,0,1024,ok,0.055,50593792,2\n"
    "scaling,softmax,softmax-gemm,0,2048,skipped-budget,nan,nan,2\n"
    "scaling,softmax,softmax-gemm,1,512,ok,0.012,16842752,2\n"
    "scaling,softmax,softmax-gemm,1,1024,ok,0.040,50593792,2\n"
    "scaling,linear,linear-gemm,0,512,ok,0.005,8421376,2\n"
    "scaling,linear,linear-gemm,0,1024,ok,0.012,16842752,2\n"
    "scaling,linear,linear-gemm,0,2048,ok,0.025,33685504,2\n"
    "scaling,linformer,none,1,512,refused,nan,nan,2\n";

static const char curves_csv[] =
    "experiment,variant,kernel,N,step,elapsed_s,loss\n"
    "copy,softmax,softmax-gemm,32,1,0.1,2.6\n"
    "copy,softmax,softmax-gemm,32,2,0.2,2.1\n"
    "copy,linear,linear-causal-chunked,32,1,0.1,2.6\n"
    "copy,linear,linear-causal-chunked,32,2,0.2,2.3\n";

static const char image_csv[] =
    "experiment,dataset,variant,kernel,gen_mode,gen_batch,test_bits_per_dim,images_per_s\n"
    "image,mnist,softmax,softmax-gemm,recompute,1,0.62,0.45\n"
    "image,mnist,softmax,softmax-gemm,cached,1,0.62,7.5\n"
    "image,mnist,linear,linear-causal-chunked,recurrent,1,0.64,142.8\n";

static const char speech_csv[] =
    "experiment,model,kernel,epoch,elapsed_s,dev_per,test_per\n"
    "speech,bilstm,none,1,100,0.6,nan\n"
    "speech,bilstm,none,2,200,0.4,0.41\n"
    "speech,linear,linear-gemm,1,80,0.58,nan\n"
    "speech,linear,linear-gemm,2,160,0.35,0.36\n";

static const char crossover_csv[] =
    "experiment,head_dim,causal,pass,linear_kernel,feature_map,softmax_kernel,status,"
    "crossover_n,heads,tokens,threads\n"
    "crossover,16,0,fwd,linear-gemm,elu,softmax-gemm,ok,64,2,2048,2\n"
    "crossover,32,0,fwd,linear-gemm,elu,softmax-gemm,ok,128,2,2048,2\n"
    "crossover,64,0,fwd,linear-gemm,elu,softmax-gemm,none,nan,2,2048,2\n"
    "crossover,16,0,fwd+bwd,linear-gemm,elu,softmax-gemm,ok,32,2,2048,2\n"
    "crossover,32,0,fwd+bwd,linear-gemm,elu,softmax-gemm,ok,64,2,2048,2\n";

static const char decode_csv[] =
    "experiment,gen_mode,variant,feature_map,batch,context,status,token_median_s,held_bytes\n"
    "decode,recurrent,linear,elu,1,1,ok,0.0007,1048576\n"
    "decode,recurrent,linear,elu,1,1024,ok,0.0007,1048576\n"
    "decode,cached,softmax,elu,1,1,ok,0.0007,65536\n"
    "decode,cached,softmax,elu,1,1024,ok,0.002,67108864\n"
    "decode,recompute,softmax,elu,1,1024,skipped-time,nan,nan\n";

static const struct fixture {
    const char *file, *text, *figure, *columns;
} fixtures[] = {
    {"scaling.csv", scaling_csv, "scaling",
     "# columns: N fwd_bwd_per_sample_s peak_bytes_per_sample"},
    {"curves.csv", curves_csv, "copy-curves", "# columns: step loss elapsed_s"},
    {"image.csv", image_csv, "image", "# columns: group images_per_s:cached images_per_s:recompute"},
    {"speech.csv", speech_csv, "speech", "# columns: epoch test_per elapsed_s"},
    {"crossover.csv", crossover_csv, "crossover", "# columns: head_dim crossover_n\n"},
    {"decode.csv", decode_csv, "decode", "# columns: context token_median_s held_bytes"},
};
enum { FIXTURES = sizeof fixtures / sizeof fixtures[0] };

/* Writes every fixture into `dir` and the arguments naming them into `args`. */
static void write_fixtures(const char *dir, char *args, size_t size)
{
    args[0] = '\0';
    for (int i = 0; i < FIXTURES; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, fixtures[i].file);
        write_file(path, fixtures[i].text);
        snprintf(args + strlen(args), size - strlen(args), " %s", path);
    }
}

static char *read_text(const char *path)
{
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* --json files are outputs like any other: one that is an input is refused
 * whatever the flags, one that exists unless --overwrite, before anything
 * is written; the input stays as it was. */
Test(compare, json_never_replaces_an_input_or_earlier_files)
{
    pair p;
    make_temp_dir(p.dir);
    snprintf(p.base, sizeof p.base, "%s/base.csv", p.dir);
    summary_row rows[] = {{"softmax", 1.0, 0.9, 1.1, 100, 0.5, "ok", 2, 0.1, NULL, NULL, NULL,
                           NULL}};
    write_summary(p.base, rows, 1);
    char input[200], args[1024];
    snprintf(input, sizeof input, "%s/x-smaller.json", p.dir);
    write_summary(input, rows, 1);
    const char *before = strdup(read_text(input));
    snprintf(args, sizeof args, "compare --overwrite --json %s/x %s %s", p.dir, p.base, input);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--json");
    ASSERT_MENTIONS("the same file as the input");
    cr_assert_str_eq(read_text(input), before, "the input is untouched");
    snprintf(args, sizeof args, "compare --json %s/y %s %s", p.dir, p.base, p.base);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("y-smaller.json");
    ASSERT_MENTIONS("--overwrite");
    snprintf(args, sizeof args, "compare --overwrite --json %s/y %s %s", p.dir, p.base, p.base);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    free((void *)before);
}

/* Width and height from a PNG's IHDR chunk. */
static void png_size(const char *path, uint32_t *width, uint32_t *height)
{
    unsigned char h[24];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fread(h, 1, 24, f), 24);
    fclose(f);
    cr_assert(memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(h + 12, "IHDR", 4) == 0, "%s",
              path);
    *width = (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
    *height = (uint32_t)h[20] << 24 | (uint32_t)h[21] << 16 | (uint32_t)h[22] << 8 | h[23];
}

/* A sample or completion grid an older revision wrote at actual size is
 * shown enlarged (4x) under figures/, the completions' prompt ends marked,
 * and says so; a grid the run drew enlarged itself is linked as it is. */
Test(report, image_grids_are_shown_enlarged, .timeout = 120)
{
    char dir[64], path[200];
    const char *files[] = {"image/mnist.csv", "image/mnist-softmax-samples.png",
                           "image/mnist-softmax-completions.png", NULL};
    char *text = report_from_reference(dir, "image", files);
    uint32_t w0, h0, w, h;
    snprintf(path, sizeof path, "%s/image/mnist-softmax-completions.png", dir);
    png_size(path, &w0, &h0);
    cr_assert(w0 < 400, "the reference grid is at actual size: %u", w0);
    cr_assert(strstr(text, "softmax completions (drawn at actual size by its run: enlarged here") !=
                  NULL,
              "%s", text);
    cr_assert(strstr(text, "](figures/image-mnist-softmax-completions.png)") != NULL, "%s", text);
    cr_assert(strstr(text, "](figures/image-mnist-softmax-samples.png)") != NULL, "%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/figures/image-mnist-softmax-completions.png", dir);
    png_size(path, &w, &h);
    cr_assert(w == 4 * w0 && h == 4 * h0, "%ux%u from %ux%u", w, h, w0, h0);
    /* the enlarged grids as a newer run writes them: shown as they are */
    text = report_after(dir, "image",
                        "mv figures/image-mnist-softmax-completions.png "
                        "image/mnist-softmax-completions.png && mv "
                        "figures/image-mnist-softmax-samples.png image/mnist-softmax-samples.png");
    cr_assert(strstr(text, "drawn at actual size") == NULL, "%s", text);
    cr_assert(strstr(text, "](image/mnist-softmax-completions.png)") != NULL, "%s", text);
    cr_assert(strstr(text, "](image/mnist-softmax-samples.png)") != NULL, "%s", text);
    cr_assert(access(path, F_OK) != 0, "%s was drawn again", path);
    free(text);
}

Test(plot, every_figure_writes_script_data_and_png, .timeout = 120)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot is not installed (./setup.sh installs gnuplot-nox)");
    char dir[64], args[2048], inputs[1024];
    make_temp_dir(dir);
    write_fixtures(dir, inputs, sizeof inputs);
    char paper[160];
    snprintf(paper, sizeof paper, "%s/paper", dir);
    cr_assert_eq(mkdir(paper, 0755), 0);
    snprintf(paper, sizeof paper, "%s/paper/table1-mnist.csv", dir);
    write_file(paper, "source,table,method,bits_per_dim\npaper,Table 1,softmax,0.621\n"
                      "paper,Table 1,LSH-1,0.745\npaper,Table 1,linear,0.644\n");
    snprintf(args, sizeof args, "plot %s -o %s/figs --width 640 --height 360 --paper %s/paper",
             inputs, dir, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    for (int i = 0; i < FIXTURES; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/figs/%s.png", dir, fixtures[i].figure);
        uint32_t width, height;
        png_size(path, &width, &height);
        /* a line figure's long key widens it; its panels keep 70% of --width */
        cr_assert(width >= 640 && width < 2 * 640, "%s: %u pixels wide", path, width);
        cr_assert_eq(height, 360, "%s", path);
        snprintf(path, sizeof path, "%s/figs/%s.dat", dir, fixtures[i].figure);
        cr_assert(strstr(read_text(path), fixtures[i].columns) != NULL, "%s:\n%s", path,
                  read_text(path));
    }
    char path[256];
    snprintf(path, sizeof path, "%s/figs/scaling.gp", dir);
    const char *script = read_text(path);
    /* the scaling fixture's longest key entry, "softmax causal=1 softmax-gemm", needs
     * more than 30% of 640 pixels: the figure widens, its height kept */
    unsigned script_width = 0, script_height = 0;
    const char *terminal = strstr(script, "set terminal pngcairo size ");
    cr_assert(terminal != NULL && sscanf(terminal, "set terminal pngcairo size %u,%u",
                                         &script_width, &script_height) == 2);
    cr_assert(script_width > 640 && script_height == 360, "%u x %u", script_width,
              script_height);
    /* the title's four lines (what ran, two not drawn) get a band above the panels */
    double panel_width = 0, panel_height = 0;
    const char *size = strstr(script, "\nset size ");
    cr_assert(size != NULL && sscanf(size, "\nset size %lf,%lf", &panel_width,
                                     &panel_height) == 2);
    cr_assert((1 - panel_height) * 360 >= 4 * 16, "panels %g of the height", panel_height);
    const char *expected[] = {"\"scaling.dat\" index 1",
                              "softmax causal=0 softmax-gemm: skipped-budget at N=2048",
                              "linformer causal=1 none: refused", "set logscale x 2",
                              "peak memory per sample (MiB)"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_assert(strstr(script, expected[i]) != NULL, "missing %s in:\n%s", expected[i], script);
    /* Softmax's memory is the same causal or not: the line that would hide
     * under the other is thick and its legend says so, in that panel only. */
    const char *hidden = "softmax causal=1 softmax-gemm (= causal=0)";
    const char *at = strstr(script, hidden);
    cr_assert(at != NULL && strstr(at + 1, hidden) == NULL, "once, memory panel:\n%s", script);
    cr_assert(strstr(script, "title \"softmax causal=1 softmax-gemm\"") != NULL, "%s", script);
    /* a colour per variant and kernel, a dash per causal mode; one key, at
     * the right of the panels, never below them */
    cr_assert(strstr(script, "lc rgb \"#1f77b4\" dt 1 pt 1 title \"softmax causal=0") != NULL,
              "%s", script);
    cr_assert(strstr(script, "lc rgb \"#1f77b4\" dt 2 pt 2 title \"softmax causal=1") != NULL,
              "%s", script);
    cr_assert(strstr(script, "unset key\n") != NULL && strstr(script, "set key at screen") != NULL,
              "%s", script);
    /* Bits/dim: one bar per variant, not one per generation mode and batch */
    snprintf(path, sizeof path, "%s/figs/image-bits.dat", dir);
    script = read_text(path);
    cr_assert(strstr(script, "# columns: group test_bits_per_dim:mnist test_bits_per_dim:the "
                             "paper (its full-size models)\n\"softmax\" 0.62 0.621\n"
                             "\"linear\" 0.64") != NULL && strstr(script, "cached") == NULL,
              "the paper's value beside each variant's, matched by name:\n%s", script);
    /* One panel: the crossover N against the head dimension */
    snprintf(path, sizeof path, "%s/figs/crossover.gp", dir);
    script = read_text(path);
    const char *one_panel[] = {"set origin 0.0000,0", "title \"linear-gemm fwd+bwd\"",
                               "linear-gemm fwd: none at head_dim=64"};
    for (size_t i = 0; i < sizeof one_panel / sizeof one_panel[0]; i++)
        cr_assert(strstr(script, one_panel[i]) != NULL, "missing %s in:\n%s", one_panel[i],
                  script);
    snprintf(path, sizeof path, "%s/figs/decode.gp", dir);
    script = read_text(path);
    cr_assert(strstr(script, "not drawn: recompute: skipped-time") != NULL, "%s", script);
    /* images/s spans orders of magnitude: a log axis, so points, not bars */
    snprintf(path, sizeof path, "%s/figs/image.gp", dir);
    script = read_text(path);
    cr_assert(strstr(script, "set logscale y") != NULL && strstr(script, "with points pt") != NULL,
              "%s", script);
    /* Copy's kernel follows from its variant: titles are the variants. */
    snprintf(path, sizeof path, "%s/figs/copy-curves.gp", dir);
    cr_assert(strstr(read_text(path), "title \"softmax\"") != NULL, "%s", read_text(path));
    /* The same figure twice gets a second name. */
    snprintf(args, sizeof args, "plot %s/speech.csv %s/speech.csv -o %s/twice", dir, dir, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/twice/speech-2.png", dir);
    cr_assert(exists(path), "%s", output);
}

/* Paths and labels are text to gnuplot, never commands: a CSV whose name
 * holds line breaks, quotes and a backslash (the script's "# from" line
 * names it) and a label with a backquoted command and a line break draw
 * their figure and run nothing. */
Test(plot, paths_and_labels_are_never_run_by_gnuplot, .timeout = 120)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot is not installed (./setup.sh installs gnuplot-nox)");
    char dir[64], path[256], args[1024];
    make_temp_dir(dir);
    const char *name = "x\nsystem(\"touch PWNED\")\n#\\";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, "experiment,variant,kernel,N,step,elapsed_s,loss\n"
                     "copy,\"a`touch PWNED2`\nb\",softmax-gemm,32,1,0.1,2.6\n"
                     "copy,\"a`touch PWNED2`\nb\",softmax-gemm,32,2,0.2,2.1\n");
    /* single quotes keep the line breaks and the rest for the shell */
    snprintf(args, sizeof args, "plot '%s' -o %s/figs", path, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    const char *ran[] = {"figs/PWNED", "figs/PWNED2", "PWNED", "PWNED2"};
    for (size_t i = 0; i < sizeof ran / sizeof ran[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, ran[i]);
        cr_assert(!exists(path), "gnuplot ran a command from the input: %s", path);
    }
    snprintf(path, sizeof path, "%s/figs/copy-curves.png", dir);
    cr_assert(exists(path), "%s", output);
    snprintf(path, sizeof path, "%s/figs/copy-curves.gp", dir);
    const char *script = read_text(path);
    cr_assert(strstr(script, "x\\nsystem(\\\"touch PWNED\\\")\\n#\\\\\"; data in") != NULL,
              "the path, escaped, on the comment's line:\n%s", script);
    cr_assert(strstr(script, "title \"a\\`touch PWNED2\\`\\nb\"") != NULL, "%s", script);
}

/* A bar figure's groups follow their keys, not the CSV's row order: the
 * reference MNIST table with its rows reversed still groups softmax first,
 * batch 1 before 16, lsh-1 before lsh-4, and its modes by name. */
Test(plot, bar_groups_in_the_order_of_their_keys, .timeout = 120)
{
    const char *src = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(src);
    char dir[64], path[256], args[1024], cmd[1024];
    make_temp_dir(dir);
    snprintf(cmd, sizeof cmd, "f=%s/results/reference/image/mnist.csv; "
             "(head -n 1 $f; tail -n +2 $f | tac) > %s/mnist.csv", src, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(args, sizeof args, "plot %s/mnist.csv -o %s/figs", dir, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/figs/image.dat", dir);
    const char *data = read_text(path);
    const char *order[] = {"\"softmax gen_batch=1\"", "\"softmax gen_batch=16\"",
                           "\"linear gen_batch=1\"", "\"linear gen_batch=16\"",
                           "\"lsh-1 gen_batch=1\"", "\"lsh-4 gen_batch=1\""};
    const char *at = data;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *next = strstr(at, order[i]);
        cr_assert(next != NULL, "%s not after the groups before it in:\n%s", order[i], data);
        at = next;
    }
    /* and the generation modes (clusters) by name, whatever the rows' order */
    cr_assert(strstr(data, "# columns: group images_per_s:cached images_per_s:recompute "
                           "images_per_s:recurrent") != NULL,
              "%s", data);
}

Test(plot, without_gnuplot_writes_scripts_and_says_how_to_draw)
{
    char dir[64], args[2048], inputs[1024];
    make_temp_dir(dir);
    write_fixtures(dir, inputs, sizeof inputs);
    snprintf(args, sizeof args, "plot %s -o %s/figs", inputs, dir);
    cr_assert_eq(ltbench_env("PATH=/nonexistent", args), 0, "%s", output);
    ASSERT_MENTIONS("gnuplot is not on PATH");
    ASSERT_MENTIONS("gnuplot-nox");
    char path[256];
    for (int i = 0; i < FIXTURES; i++) {
        snprintf(path, sizeof path, "%s/figs/%s.gp", dir, fixtures[i].figure);
        cr_assert(exists(path), "%s", path);
    }
    snprintf(path, sizeof path, "%s/figs", dir);
    /* the image table draws two figures (bits/dim, images/s) */
    cr_assert_eq(check_count_entries(path), 2 * (FIXTURES + 1), "scripts and data, no PNG");
}

Test(plot, unknown_or_malformed_csv_exits_2_and_writes_nothing)
{
    char dir[64], args[1024], good[160], path[160];
    make_temp_dir(dir);
    snprintf(good, sizeof good, "%s/speech.csv", dir);
    write_file(good, speech_csv);
    struct { const char *text, *mention; } bad[] = {
        {"a,b\n1,2\n", "no 'experiment' column"},
        {"experiment,x\nweather,1\n", "no figure for experiment 'weather'"},
        {"experiment,model,kernel,epoch,test_per\nspeech,lstm,none,1,0.5\n", "column 'elapsed_s'"},
        {"experiment,model,kernel,epoch,elapsed_s,test_per\nspeech,lstm,none,1,2,high\n",
         "expected a number, got 'high'"},
        {"experiment,model\n\"speech,lstm\n", "quoted field never closed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "%s/bad%zu.csv", dir, i);
        write_file(path, bad[i].text);
        snprintf(args, sizeof args, "plot %s %s -o %s/figs", good, path, dir);
        cr_assert_eq(ltbench(args), 2, "case %zu:\n%s", i, output);
        ASSERT_MENTIONS(bad[i].mention);
        ASSERT_MENTIONS(path);
        snprintf(path, sizeof path, "%s/figs", dir);
        cr_assert(!exists(path), "case %zu wrote %s", i, path);
    }
    cr_assert_eq(ltbench("plot"), 2, "%s", output);
    ASSERT_MENTIONS("CSV...");
    snprintf(args, sizeof args, "plot %s --paper %s/no-such-folder -o %s/figs", good, dir, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--paper: expected a folder");
    snprintf(path, sizeof path, "%s/figs", dir);
    cr_assert(!exists(path), "a bad --paper wrote %s", path);
}

/* The figures of an earlier run are outputs like any other: a second plot
 * into the folder is refused before anything is written (exit 2, naming
 * --out, the file and --overwrite), leaving them byte for byte, and
 * replaces them with --overwrite, whole (no temporary left). */
/* A run stopped before any generation: its one row measured no speed, and
 * the speed figure (a log axis) is an empty frame that says so, not a
 * gnuplot error. */
Test(plot, a_figure_with_nothing_measured_draws_an_empty_frame, .timeout = 120)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot is not installed (./setup.sh installs gnuplot-nox)");
    char dir[64], cmd[1024], args[512], path[256];
    make_temp_dir(dir);
    snprintf(cmd, sizeof cmd,
             "awk -F, -v OFS=, 'NR == 1 { print; next } NR == 2 { $13 = \"none\"; "
             "$15 = \"interrupted\"; $24 = \"nan\"; $28 = \"nan\"; print }' "
             "%s/results/baseline/image/mnist.csv > %s/mnist.csv",
             getenv("LTBENCH_SOURCE"), dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(args, sizeof args, "plot %s/mnist.csv -o %s/figs", dir, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/figs/image.png", dir);
    cr_assert(exists(path), "%s", output);
    snprintf(path, sizeof path, "%s/figs/image.gp", dir);
    cr_assert(strstr(read_text(path), "(no value measured)") != NULL, "%s", read_text(path));
}

Test(plot, earlier_figures_are_replaced_only_with_overwrite, .timeout = 120)
{
    char dir[64], figs[128], first[160], later[160], args[1024], path[200];
    make_temp_dir(dir);
    snprintf(figs, sizeof figs, "%s/figs", dir);
    snprintf(first, sizeof first, "%s/speech.csv", dir);
    snprintf(later, sizeof later, "%s/later.csv", dir);
    write_file(first, speech_csv);
    write_file(later, "experiment,model,kernel,epoch,elapsed_s,dev_per,test_per\n"
                      "speech,linear,linear-gemm,1,80,0.5,nan\n"
                      "speech,linear,linear-gemm,2,160,0.25,0.26\n");
    snprintf(args, sizeof args, "plot %s -o %s", first, figs);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    /* the PNG only where gnuplot draws it */
    const char *kinds[] = {"dat", "gp", "png"};
    unsigned char *before[3];
    size_t sizes[3];
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/speech.%s", figs, kinds[k]);
        before[k] = check_read_file(path, &sizes[k]);
        cr_assert(before[k] != NULL || k == 2, "%s", path);
    }
    int entries = check_count_entries(figs);
    snprintf(args, sizeof args, "plot %s -o %s", later, figs);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    snprintf(path, sizeof path, "--out %s/speech.dat", figs);
    ASSERT_MENTIONS(path);
    ASSERT_MENTIONS("--overwrite");
    for (int k = 0; k < 3; k++) {
        size_t size = 0;
        snprintf(path, sizeof path, "%s/speech.%s", figs, kinds[k]);
        unsigned char *now = check_read_file(path, &size);
        cr_assert((now == NULL && before[k] == NULL) ||
                      (now != NULL && before[k] != NULL && size == sizes[k] &&
                       memcmp(now, before[k], size) == 0),
                  "%s changed", path);
        free(now);
        free(before[k]);
    }
    cr_assert_eq(check_count_entries(figs), entries, "nothing written");
    strcat(args, " --overwrite");
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/speech.dat", figs);
    cr_assert(strstr(read_text(path), " 0.26") != NULL, "the later data:\n%s", read_text(path));
    cr_assert_eq(check_count_entries(figs), entries, "replaced, no temporary left");
}

/* A file plot would write that is one of its input CSVs, however the
 * folder is spelt, is refused whatever the flags and left as it was. */
Test(plot, an_output_that_is_an_input_is_refused)
{
    char dir[64], figs[128], input[160], args[1024];
    make_temp_dir(dir);
    snprintf(figs, sizeof figs, "%s/figs", dir);
    cr_assert_eq(mkdir(figs, 0755), 0);
    snprintf(input, sizeof input, "%s/speech.dat", figs);
    write_file(input, speech_csv);
    for (int overwrite = 0; overwrite <= 1; overwrite++) {
        snprintf(args, sizeof args, "plot %s -o %s/new/../figs%s", input, dir,
                 overwrite ? " --overwrite" : "");
        cr_assert_eq(ltbench(args), 2, "%s:\n%s", args, output);
        ASSERT_MENTIONS("the same file as the input");
        ASSERT_MENTIONS(input);
        cr_assert_str_eq(read_text(input), speech_csv, "the input is untouched: %s", args);
        cr_assert_eq(check_count_entries(figs), 1, "nothing written by: %s", args);
    }
}

Test(dispatcher, lists_the_tools_as_available)
{
    cr_assert_eq(ltbench(""), 0);
    const char *tools[] = {"plot", "compare"};
    for (size_t i = 0; i < 2; i++) {
        const char *line = strstr(output, tools[i]);
        cr_assert_not_null(line, "%s", output);
        const char *end = strchr(line, '\n');
        const char *mark = strstr(line, "not yet available");
        cr_assert(mark == NULL || mark > end, "%s is listed as not available:\n%s", tools[i],
                  output);
    }
    cr_assert_eq(ltbench("compare --help"), 0);
    ASSERT_MENTIONS("customSmallerIsBetter");
    ASSERT_MENTIONS("--exact-tolerance");
    cr_assert_eq(ltbench("plot --help"), 0);
    ASSERT_MENTIONS("gnuplot-nox");
}

/* ---- ab ---- */

/* A stand-in for an ltbench build: a script that answers `scaling ...
 * --out DIR` with DIR/scaling.csv (`folder`; its --help says --out DIR),
 * or else, as builds before that did, `--out PATH` with PATH: a scaling
 * CSV of two cases whose times are `linear` and `softmax` seconds, each
 * times a noise factor drawn per call (the pair's machine state), as a real
 * build's would be. */
static void fake_build(const char *path, double linear, double softmax, int folder)
{
    char text[2048];
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "%s"
             "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
             "%s"
             "noise=$(awk -v s=$$ 'BEGIN { srand(s); printf \"%%.4f\", 1 + 0.02 * rand() }')\n"
             "awk -v n=$noise 'BEGIN {\n"
             "  print \"experiment,variant,kernel,causal,N,batch,status,fwd_min_s,"
             "fwd_bwd_min_s,cpu_model,blas,kernel_isa,build,threads\"\n"
             "  printf \"scaling,linear,linear-gemm,0,512,1,ok,%%.9g,%%.9g,Test CPU,B,k,b,1\\n\", "
             "%g * n, 3 * %g * n\n"
             "  printf \"scaling,softmax,softmax-gemm,0,512,1,ok,%%.9g,%%.9g,Test CPU,B,k,b,1\\n\", "
             "%g * n, 3 * %g * n\n"
             "  printf \"scaling,linformer,none,1,512,1,refused,nan,nan,Test CPU,B,k,b,1\\n\"\n"
             "}' > \"$out\"\n",
             folder ? "[ \"$2\" = --help ] && echo '  --out DIR  folder' && exit 0\n" : "",
             folder ? "mkdir -p \"$out\" && out=\"$out/scaling.csv\"\n" : "", linear, linear,
             softmax, softmax);
    write_file(path, text);
    cr_assert_eq(chmod(path, 0755), 0);
}

/* A build that runs as `slow` for its first `calls` timed runs and as
 * `fast` after them: a machine's slow spell that lasts one set of rounds. */
static void fake_build_slow_at_first(const char *path, const char *slow, const char *fast,
                                     int calls)
{
    char text[2048];
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "[ \"$2\" = --help ] && exec '%s' \"$@\"\n"
             "n=$(cat '%s.calls' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '%s.calls'\n"
             "if [ $n -le %d ]; then exec '%s' \"$@\"; else exec '%s' \"$@\"; fi\n",
             fast, path, path, calls, slow, fast);
    write_file(path, text);
    cr_assert_eq(chmod(path, 0755), 0);
}

/* The same build against itself passes; one whose linear kernel is 10%
 * slower is caught, confirmed by the rounds that time it again, naming
 * that kernel and no other. */
Test(ab, a_slower_kernel_is_caught_and_named)
{
    char dir[64], base[128], same[128], slow[128], args[1024];
    make_temp_dir(dir);
    snprintf(base, sizeof base, "%s/base.sh", dir);
    snprintf(same, sizeof same, "%s/same.sh", dir);
    snprintf(slow, sizeof slow, "%s/slow.sh", dir);
    fake_build(base, 0.001, 0.004, 0); /* a build from before --out DIR */
    fake_build(same, 0.001, 0.004, 1);
    fake_build(slow, 0.0011, 0.004, 1);
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 10 --out %s/aa", base, same, dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("**PASS**: 0 regressed of 4 timings judged");
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 10 --out %s/ab", base, slow, dir);
    cr_assert_eq(ltbench(args), 1, "%s", output);
    ASSERT_MENTIONS("\n- linear linear-gemm causal=0 N=512 batch=1 fwd: ");
    ASSERT_MENTIONS("\n- linear linear-gemm causal=0 N=512 batch=1 fwd_bwd: ");
    ASSERT_MENTIONS("| linear-gemm | 2 | 2 | 0 |");
    ASSERT_MENTIONS("| softmax-gemm | 2 | 0 | 0 |");
    ASSERT_MENTIONS("**FAIL**: 2 regressed of 4 timings judged");
    ASSERT_MENTIONS("timed again in 20 fresh rounds (rounds 11-30");
    ASSERT_MENTIONS("; in the confirming rounds +");
    ASSERT_MENTIONS("## Not confirmed\n\nnone\n");
    char path[256];
    snprintf(path, sizeof path, "%s/ab/ab.json", dir);
    char *json = check_read_text(path);
    cr_assert_not_null(json);
    cr_assert_not_null(strstr(json, "\"kernel\": \"linear-gemm\", \"timing\": \"fwd\", "
                                    "\"verdict\": \"regressed\""), "%s", json);
    const char *confirm = strstr(json, "\"confirm_pairs\": 20, \"confirm_ratio\": ");
    cr_assert_not_null(confirm, "%s", json);
    cr_assert_gt(strtod(strchr(confirm + strlen("\"confirm_pairs\": 20,"), ':') + 1, NULL), 1.05,
                 "%s", json);
    free(json);
    snprintf(path, sizeof path, "%s/ab/new/round-30/scaling.csv", dir);
    cr_assert(exists(path));
    snprintf(path, sizeof path, "%s/ab/new/round-10/scaling.csv", dir);
    cr_assert(exists(path));
    snprintf(path, sizeof path, "%s/ab/base/round-10.csv", dir);
    cr_assert(exists(path));
    /* an earlier comparison is not replaced without --overwrite */
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--overwrite");
    strcat(args, " --overwrite");
    cr_assert_eq(ltbench(args), 1, "%s", output);
}

/* A kernel slower in the first rounds alone, as a machine's slow spell
 * makes it, is timed again and not confirmed: the comparison passes and
 * says what it saw. Without confirming rounds it would have failed. */
Test(ab, a_slowdown_the_confirming_rounds_do_not_find_does_not_fail)
{
    char dir[64], base[128], slow[128], spell[128], args[1024], path[256];
    make_temp_dir(dir);
    snprintf(base, sizeof base, "%s/base.sh", dir);
    snprintf(slow, sizeof slow, "%s/slow.sh", dir);
    snprintf(spell, sizeof spell, "%s/spell.sh", dir);
    fake_build(base, 0.001, 0.004, 1);
    fake_build(slow, 0.0011, 0.004, 1);
    fake_build_slow_at_first(spell, slow, base, 10);
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 10 --out %s/spell", base, spell,
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("the 2 timings that regressed in the first rounds were timed again in 20");
    ASSERT_MENTIONS("## Regressions\n\nnone\n");
    ASSERT_MENTIONS("## Not confirmed\n\n- linear linear-gemm causal=0 N=512 batch=1 ");
    ASSERT_MENTIONS("| not confirmed |");
    ASSERT_MENTIONS("**PASS**: 0 regressed of 4 timings judged");
    snprintf(path, sizeof path, "%s/spell/ab-samples.csv", dir);
    char *samples = check_read_text(path);
    cr_assert_not_null(samples);
    cr_assert_not_null(strstr(samples, ",first\n"), "%s", samples);
    cr_assert_not_null(strstr(samples, ",confirming\n"), "%s", samples);
    free(samples);
    /* the same spell without confirming rounds is a regression */
    snprintf(path, sizeof path, "%s.calls", spell);
    cr_assert_eq(unlink(path), 0);
    snprintf(args, sizeof args,
             "ab --base %s --new %s --rounds 10 --confirm-rounds 0 --out %s/unconfirmed", base,
             spell, dir);
    cr_assert_eq(ltbench(args), 1, "%s", output);
    ASSERT_MENTIONS("- **confirmation**: none (--confirm-rounds 0)");
    ASSERT_MENTIONS("**FAIL**: 2 regressed of 4 timings judged");
    /* the same build against itself needs none */
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 10 --out %s/same", base, base,
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("- **confirmation**: none needed");
}

Test(ab, bad_builds_and_too_few_rounds_are_refused)
{
    char dir[64], base[128], args[512];
    make_temp_dir(dir);
    snprintf(base, sizeof base, "%s/base.sh", dir);
    fake_build(base, 0.001, 0.004, 1);
    cr_assert_eq(ltbench("ab --rounds 10"), 2, "%s", output);
    ASSERT_MENTIONS("--base: required");
    snprintf(args, sizeof args, "ab --base %s/none --out %s/x", dir, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("no such executable");
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 5 --out %s/y", base, base, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--rounds 5");
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 7 --out %s/z", base, base, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output); /* 4 timings jointly need 8 */
    ASSERT_MENTIONS("need at least 8 rounds");
    snprintf(args, sizeof args, "ab --base %s --new %s --confirm-rounds 5 --out %s/c", base, base,
             dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--confirm-rounds 5: at least 6 are needed");
    snprintf(args, sizeof args, "ab --base %s --new %s --rounds 10 --confirm-rounds 7 --out %s/d",
             base, base, dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("--confirm-rounds 7: as many as 4 timings confirmed at 95% confidence "
                    "jointly need at least 8 rounds");
}

/* Instruction counts under valgrind: the same in two runs of one build,
 * and not nothing. Valgrind runs no AVX-512 and no sanitizer: the test runs
 * in the portable build's suite, once (under its avx2 set or none). */
Test(ab, instruction_counts_of_a_case_are_identical_in_two_runs, .timeout = 600)
{
    const char *set = getenv("LTBENCH_KERNELS");
    if (strstr(LT_BUILD_FLAGS, "native=false") == NULL || strstr(LT_BUILD_FLAGS, "sanitize") ||
        (set != NULL && *set != '\0' && strcmp(set, "avx2") != 0) ||
        system("valgrind --version >/dev/null 2>&1") != 0)
        cr_skip_test("needs a portable build without sanitizers, valgrind, and LTBENCH_KERNELS "
                     "unset or avx2");
    char dir[64], args[512];
    make_temp_dir(dir);
    snprintf(args, sizeof args,
             "ab --measure instructions --base '%s/ltbench' --out %s/count --cases '--variants "
             "linear --causal noncausal --min-log2 6 --max-log2 6 --batch 1 --heads 1'",
             getenv("LTBENCH_BUILD"), dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("**PASS**: 0 regressed of 2 timings judged");
    cr_assert_null(strstr(output, "counts differ"), "%s", output);
    char path[256];
    snprintf(path, sizeof path, "%s/count/ab.json", dir);
    char *json = check_read_text(path);
    cr_assert_not_null(json);
    const char *at = strstr(json, "\"base_instructions\": ");
    cr_assert_not_null(at, "%s", json);
    cr_assert_gt(strtod(at + strlen("\"base_instructions\": "), NULL), 1e4, "%s", json);
    free(json);
}
