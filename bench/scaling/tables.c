/* scaling's result tables: each column declared once, with the figures drawn from them. */
#include "scaling/scaling.h"

#include "common/columns.h"

static const lt_column scaling_columns[] = {
    NOTE("experiment"),
    {.name = "variant", .role = LT_COL_KEY, .label = 1, SHOWN("variant", NULL, 0)},
    {.name = "kernel", .role = LT_COL_KEY, .label = 1, SHOWN("kernel", NULL, 0)},
    {.name = "causal", .role = LT_COL_KEY, .label = 1, SHOWN("causal", NULL, 0)},
    {.name = "N", .role = LT_COL_KEY, .label = 1, SHOWN("N", NULL, 0)},
    {.name = "batch", .role = LT_COL_KEY, SHOWN("batch", NULL, 0)},
    KEY("heads"),
    KEY("head_dim"),
    KEY("value_dim"),
    KEY("proj_k"),
    KEY("feature_map"),
    ATTN_CASE_TIMINGS,
    {.name = "fwd_per_sample_s", .role = LT_COL_INFO, SHOWN("fwd ms/sample", "%.3f", 1e3)},
    {.name = "fwd_bwd_per_sample_s", .role = LT_COL_INFO,
     SHOWN("fwd+bwd ms/sample", "%.3f", 1e3)},
    COUNT_LOW("peak_bytes", "bytes"),
    {.name = "peak_bytes_per_sample", .role = LT_COL_INFO,
     SHOWN("peak MiB/sample", "%.2f", MIB)},
    COUNT_LOW("planned_bytes", "bytes"),
    {.name = "fwd_gflop_per_s", .role = LT_COL_TIMING, .higher_is_better = 1,
     .unit = "GFLOP/s", .spread = "fwd", .rate = 1},
    {.name = "fwd_bwd_gflop_per_s", .role = LT_COL_TIMING, .higher_is_better = 1,
     .unit = "GFLOP/s", .spread = "fwd_bwd", .rate = 1, SHOWN("GFLOP/s", "%.1f", 0)},
    COUNT_LOW("flop_model_fwd", "FLOP"),
    COUNT_LOW("flop_model_bwd", "FLOP"),
    NOTE("flops_performed_fwd"),
    NOTE("flops_performed_bwd"),
    NOTE("fwd_bwd_performed_gflop_per_s"),
    NOTE("sgemm_n"),
    NOTE("sgemm_gflop_per_s"),
    NOTE("sgemm_1thread_gflop_per_s"),
    {.name = "fraction_of_sgemm", .role = LT_COL_NOTE, SHOWN("roof %", "%.1f", 100)},
    NOTE("products_gflop_per_s"),
    {.name = "fraction_of_products", .role = LT_COL_NOTE, SHOWN("products roof %", "%.1f", 100)},
    NOTE("bytes_model_fwd_bwd"),
    NOTE("bandwidth_gb_per_s"),
    NOTE("memory_bound_s"),
    NOTE("compute_bound_s"),
    {.name = "roofline_bound", .role = LT_COL_NOTE, SHOWN("bound", NULL, 0)},
    {.name = "fraction_of_roofline", .role = LT_COL_NOTE, SHOWN("roofline %", "%.1f", 100)},
    NOTE("note"),
};

static const lt_figure scaling_figures[] = {
    {"scaling", "Attention forward+backward per sample against sequence length (paper Fig. 1)",
     LT_FIGURE_LINES, {"variant", "causal", "kernel", NULL}, 3, NULL,
     {{"N", "fwd_bwd_per_sample_s", "sequence length N", "time per sample (s)", 1, 1, 1},
      {"N", "peak_bytes_per_sample", "sequence length N", "peak memory per sample (MiB)",
       1 << 20, 1, 1}},
     .context = {"heads", "head_dim", "threads", NULL}},
};

const lt_schema bench_scaling = {"scaling", "scaling", scaling_columns, COUNT(scaling_columns),
                                 scaling_figures, COUNT(scaling_figures)};
