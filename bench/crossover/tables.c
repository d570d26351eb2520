/* crossover's result tables: each column declared once, with the figures drawn from them. */
#include "crossover/crossover.h"

#include "common/columns.h"

/* Every case the crossover sweep measured, as scaling's rows. */
static const lt_column crossover_case_columns[] = {
    NOTE("experiment"),
    {.name = "variant", .role = LT_COL_KEY, .label = 1, SHOWN("variant", NULL, 0)},
    {.name = "kernel", .role = LT_COL_KEY, .label = 1, SHOWN("kernel", NULL, 0)},
    {.name = "feature_map", .role = LT_COL_KEY, .label = 1, SHOWN("map", NULL, 0)},
    {.name = "causal", .role = LT_COL_KEY, .label = 1, SHOWN("causal", NULL, 0)},
    {.name = "head_dim", .role = LT_COL_KEY, .label = 1, SHOWN("D", NULL, 0)},
    {.name = "N", .role = LT_COL_KEY, .label = 1, SHOWN("N", NULL, 0)},
    {.name = "batch", .role = LT_COL_KEY, SHOWN("batch", NULL, 0)},
    KEY("heads"),
    KEY("value_dim"),
    NOTE("tokens"),
    ATTN_CASE_TIMINGS,
    {.name = "fwd_per_sample_s", .role = LT_COL_INFO, SHOWN("fwd ms/sample", "%.4f", 1e3)},
    {.name = "fwd_bwd_per_sample_s", .role = LT_COL_INFO,
     SHOWN("fwd+bwd ms/sample", "%.4f", 1e3)},
    COUNT_LOW("peak_bytes", "bytes"),
    COUNT_LOW("planned_bytes", "bytes"),
    NOTE("note"),
};

const lt_schema bench_crossover_cases = {"crossover cases", "crossover", crossover_case_columns,
                                         COUNT(crossover_case_columns), NULL, 0};

/* One row per head dim x causal mode x pass x pair of kernels: the N from
 * which the first is faster per sample. Two questions (column question):
 * linear-vs-softmax, a linear or decay kernel (linear_kernel) against a
 * softmax kernel (softmax_kernel); and chunked-vs-recurrent, a gated
 * variant's chunked kernel (in linear_kernel, feature map "none") against
 * the same variant's recurrent kernel (in softmax_kernel). The kernel
 * names tell the questions apart, so the keys are those of the tables
 * written before the second question was asked, and compare matches the
 * two. */
static const lt_column crossover_columns[] = {
    NOTE("experiment"),
    {.name = "head_dim", .role = LT_COL_KEY, .label = 1, SHOWN("D", NULL, 0)},
    {.name = "causal", .role = LT_COL_KEY, .label = 1, SHOWN("causal", NULL, 0)},
    {.name = "pass", .role = LT_COL_KEY, .label = 1, SHOWN("pass", NULL, 0)},
    NOTE("question"),
    {.name = "linear_kernel", .role = LT_COL_KEY, .label = 1, SHOWN("kernel", NULL, 0)},
    {.name = "feature_map", .role = LT_COL_KEY, .label = 1, SHOWN("map", NULL, 0)},
    {.name = "softmax_kernel", .role = LT_COL_KEY, .label = 1, SHOWN("against", NULL, 0)},
    KEY("heads"),
    KEY("value_dim"),
    NOTE("tokens"),
    SETUP("threads"),
    NOTE("seed"),
    NOTE("confirm"),
    NOTE("margin"),
    NOTE("n_min"),
    NOTE("n_max"),
    NOTE("status"),
    NOTE("result"),
    INFO("crossover_n"),
    {.name = "crossover", .role = LT_COL_NOTE, SHOWN("crossover N", NULL, 0)},
    {.name = "n_measured", .role = LT_COL_NOTE, SHOWN("N measured", NULL, 0)},
    {.name = "n_last", .role = LT_COL_NOTE, SHOWN("largest N", NULL, 0)},
    {.name = "speedup_last", .role = LT_COL_INFO, SHOWN("x faster there", "%.2f", 0)},
    NOTE("note"),
};

static const lt_figure crossover_figures[] = {
    {"crossover", "Crossover: the sequence length from which a kernel is faster per sample "
                  "(linear vs softmax; chunked vs recurrent)",
     LT_FIGURE_LINES, {"linear_kernel", "feature_map", "softmax_kernel", "pass", NULL}, 1, NULL,
     {{"head_dim", "crossover_n", "head dimension D", "crossover N", 1, 1, 1}, {0}},
     .context = {"heads", "tokens", "threads", NULL}},
};

const lt_schema bench_crossover = {"crossover", "crossover", crossover_columns,
                                   COUNT(crossover_columns), crossover_figures,
                                   COUNT(crossover_figures)};
