/* crossover's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "crossover/crossover.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_crossover_cases, &bench_crossover};

static const lt_report_section sections[] = {
    {"crossover", NULL, "Crossover: where linear attention overtakes softmax",
     "crossover/crossover-table.csv", &bench_crossover, NULL, &bench_crossover, NULL,
     "For each head dimension D, the smallest sequence length N from which each linear "
     "kernel is faster per sample than each softmax kernel at every larger N measured, "
     "forward and forward+backward; and for the delta rule (delta, gated-delta) and GLA, the "
     "N from which each one's chunked kernel is faster than its recurrent one (`ltbench "
     "crossover`; every case is in `crossover/crossover.csv`).",
     .part = LT_PART_SWEEP, .conclude = NULL,
     /* the default kernels, and each gated variant's chunked against recurrent */
     .args = {"--kernels=linear-gemm,linear-causal-chunked,linear-causal-prefix,softmax-gemm,"
              "softmax-tiled,delta-causal-chunked,delta-causal-recurrent,"
              "gated-delta-causal-chunked,gated-delta-causal-recurrent,gla-causal-chunked,"
              "gla-causal-recurrent",
              NULL}},
};

const bench_entry bench_crossover_entry = {"crossover",
    "beyond the paper: the N from which linear attention beats softmax, per head dim",
    BENCH_BEYOND, tables, COUNT(tables), sections, COUNT(sections)};
