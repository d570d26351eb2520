/* ltbench compare: two result CSVs of the same table -> a Markdown report
 * and pass/fail for regression tracking. The tables and the role of each
 * column come from the registry (each experiment's tables.c); the judging is
 * src/results/compare.c. */
#include <stdio.h>

#include "core/cli.h"
#include "experiment/flags.h"
#include "results/compare.h"
#include "registry.h"

/* How far an exact metric other than a count (a loss) may move between runs
 * of another BLAS core or kernel set, whose sums go in another order: 1%, or
 * 0.02 in its own unit (nats, bits/dim, a fraction), whichever is larger.
 * Measured on the quick suite against results/baseline (OpenBLAS Haswell):
 * with SkylakeX kernels every loss moved by under 1e-4% but softmax's copy
 * run, which converges within its 1000 updates, where rounding moves the
 * last losses by 14-25% of themselves and at most 0.017 nats; the portable
 * build's avx2 kernel set moved losses by under 1e-4%. */
#define CROSS_TOLERANCE 1.0
#define CROSS_ABSOLUTE 0.02

static const char details[] =
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
    "A case the base measured (status ok) that the new file lacks, or did not measure\n"
    "(diverged, failed, skipped), fails; cases neither measured are 'not run'. A measured\n"
    "time that is not positive and finite, or a median outside its own min..max, is a\n"
    "damaged file (exit 2). Cases whose threads (or other setup\n"
    "column of the table) or ranks differ are 'not comparable'. Across machines, what\n"
    "can be judged is judged:\n"
    "  another CPU (cpu_model, cpu_id) or omp_wait_policy: the timings are 'not\n"
    "          comparable', every other metric is judged as above (the same code gives\n"
    "          the same bits);\n"
    "  another blas core, kernel_isa or build: the counts (FLOPs, planned and peak\n"
    "          bytes, parameters) are judged exactly, the other exact metrics (losses,\n"
    "          bits/dim, PER, accuracies: another summation order) within\n"
    "          --cross-tolerance percent or --cross-absolute, whichever is larger, the\n"
    "          timings are 'not comparable'.\n"
    "A provenance column one file lacks is not checked, nor an empty provenance cell (a\n"
    "row kept by --resume from a file written before the column).\n"
    "A rate of a time judged beside it (GFLOP/s, tokens/s) is listed with --all but not\n"
    "counted a second time.\n"
    "Cases in one file only are listed.\n"
    "A metric column one file lacks is an error naming that file; one that neither\n"
    "has (both written before it existed) is left out. Likewise the dropout key of\n"
    "image and speech results, added later: two files without it are matched on the\n"
    "other keys. Every other key column must be present.\n"
    "A run whose load average (load_start, load_end) exceeds --busy-load is reported\n"
    "as taken on a busy machine; one whose steal_share (CPU time a virtual machine's\n"
    "hypervisor gave other guests) exceeds 5% as taken on a contended virtual machine.\n"
    "Prints a Markdown table (case, metric, base, new, change, verdict: only what is not\n"
    "unchanged unless --all; worst first) and a summary line.\n"
    "--json PATH writes github-action-benchmark's custom format, one array of\n"
    "{\"name\", \"unit\", \"value\", \"range\", \"extra\", \"verdict\", \"change\"} per file,\n"
    "with the new run's values:\n"
    "PATH-smaller.json holds the metrics where lower is better (times, bytes, losses: use\n"
    "tool customSmallerIsBetter), PATH-bigger.json those where higher is better (rates,\n"
    "accuracies: tool customBiggerIsBetter).\n"
    "Exit status: 0 no regression, 1 a regression or an exact change, 2 bad input\n"
    "(unreadable or malformed CSV, unknown table, missing columns, different tables, no\n"
    "case in common; nothing is judged or written then), 3 nothing judged (every case\n"
    "not run or not comparable): neither a pass nor a fail.\n"
    "For timings on a noisy machine, `ltbench ab` runs two builds alternately and judges\n"
    "their ratio with a confidence interval.";

int main(int argc, char **argv)
{
    const lt_schema *tables[64];
    int table_count = bench_tables_of(bench_registry, bench_registry_count, tables, 64);
    lt_compare_options o = {.threshold = 5, .cross_tolerance = CROSS_TOLERANCE,
                            .cross_absolute = CROSS_ABSOLUTE};
    const char *fail_on = "all";
    lt_flag flags[] = {
        {"--threshold", LT_FLAG_DOUBLE, &o.threshold, "PCT",
         "a timing regresses when worse by more than PCT percent (and the min..max ranges of "
         "the two runs do not overlap)", 0, 1e6, NULL, 0},
        {"--exact-tolerance", LT_FLAG_DOUBLE, &o.exact_tolerance, "PCT",
         "relative change, in percent, allowed in exact metrics (bytes, FLOPs, losses)", 0, 1e6,
         NULL, 0},
        {"--cross-tolerance", LT_FLAG_DOUBLE, &o.cross_tolerance, "PCT",
         "relative change, in percent, allowed in exact metrics other than counts (losses, "
         "bits/dim, PER, accuracies) between runs of another BLAS core, kernel set or build",
         0, 1e6, NULL, 0},
        {"--cross-absolute", LT_FLAG_DOUBLE, &o.cross_absolute, "X",
         "... or by up to X in the metric's own unit (nats, bits/dim, a fraction), whichever is "
         "larger", 0, 1e6, NULL, 0},
        {"--busy-load", LT_FLAG_DOUBLE, &o.busy_load, "LOAD",
         "call a run busy above this load average; 0 = half the cores its CSV records", 0, 1e6,
         NULL, 0},
        {"--json", LT_FLAG_STRING, &o.json, "PATH",
         "also write PATH-smaller.json and PATH-bigger.json for github-action-benchmark", 0, 0,
         NULL, 0},
        lt_flag_overwrite(&o.overwrite),
        {"--all", LT_FLAG_BOOL, &o.all, NULL, "list every metric, unchanged and info ones too", 0,
         0, NULL, 0},
        {"--fail-on", LT_FLAG_CHOICE, &fail_on, NULL,
         "exact: only deterministic metrics fail (timings are reported): for CI machines "
         "whose timings are noisy", 0, 0, "all|exact", 0},
    };
    lt_cli cli = {"ltbench compare",
                  "Compare two result CSVs of the same table: pass/fail for "
                  "performance-regression tracking.",
                  details, flags, (int)(sizeof flags / sizeof flags[0]), NULL};
    const char *files[2];
    lt_cli_operands operands = {"BASE.csv NEW.csv", files, 2, 2, 0};
    int exit_now;
    int code = lt_cli_parse_tool(&cli, &operands, argc, argv, &exit_now);
    if (exit_now) {
        if (code == 0 && exit_now != LT_CLI_VERSION) /* --help: the tables it knows */
            lt_compare_describe(tables, table_count, stdout);
        return code;
    }
    o.exact_only = fail_on[0] == 'e';
    int failed = 0;
    lt_status status = lt_compare(tables, table_count, files[0], files[1], &o,
                                  stdout, &failed);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    return failed;
}
