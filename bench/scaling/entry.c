/* scaling's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "scaling/scaling.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_scaling};

static const lt_report_section sections[] = {
    {"scaling", NULL, "Scaling (the paper's Figure 1)", "scaling/scaling.csv", &bench_scaling,
     NULL, &bench_scaling, NULL,
     "linear attention is faster and needs less memory for every N; its time and memory grow "
     "linearly with N, softmax's quadratically (softmax ran out of its 11 GB GPU above N = "
     "4096).", .part = LT_PART_PAPER, .conclude = bench_scaling_claims,
     .paper_config = "attention alone, forward and backward on random inputs, N = 2^9 to 2^16, "
                     "the batch scaled inversely with N, on an 11 GB GPU"},
};

const bench_entry bench_scaling_entry = {"scaling",
    "attention time and peak memory against sequence length (paper Fig. 1)",
    BENCH_PAPER, tables, COUNT(tables), sections, COUNT(sections)};
