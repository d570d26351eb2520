/* copy's result tables: each column declared once, with the figures drawn from them. */
#include "copy/copy.h"

#include "common/columns.h"

#define COPY_KEYS                                                                              \
    FROM_EXPERIMENT, FROM_LABEL("variant", "$model", "variant"),                               \
        FROM_LABEL("kernel", "$kernel", "kernel"), FROM_KEY("preset", "--preset"),             \
        FROM_LABEL("N", "--seq", "N"),                                                         \
        {.name = "batch", .role = LT_COL_KEY, .from = "--batch", SHOWN("batch", NULL, 0)},     \
        FROM_KEY("layers", "--layers"), FROM_KEY("heads", "--heads"),                          \
        FROM_KEY("head_dim", "--head-dim"), FROM_KEY("ffn", "--ffn"),                          \
        FROM_DROPOUT, FROM_KEY("optimizer", "--optimizer"),                                    \
        FROM_KEY("base_lr", "--lr"), FROM_THREADS, FROM_KEY("seed", "--seed")

static const lt_column copy_curve_columns[] = {
    COPY_KEYS,
    LABEL("step"),
    INFO("elapsed_s"),
    EXACT_LOW("loss", "nats"),
    EXACT_HIGH("copy_accuracy", "fraction"),
    INFO("lr"),
    EXACT_LOW("grad_norm", "norm"),
};

static const lt_figure copy_figures[] = {
    {"copy-curves", "Copy task: training loss (paper Fig. 2)", LT_FIGURE_LINES,
     {"variant", "kernel", "N", NULL}, 1, NULL,
     {{"step", "loss", "update", "loss on the copied half (nats)", 1, 0, 1},
      {"elapsed_s", "loss", "seconds", "loss on the copied half (nats)", 1, 0, 1}},
     .context = {"preset", "N", "batch", "threads", NULL}},
};

const lt_schema bench_copy_curves = {"copy curves", "copy", copy_curve_columns,
                                     COUNT(copy_curve_columns), copy_figures,
                                     COUNT(copy_figures)};

static const lt_column copy_summary_columns[] = {
    COPY_KEYS,
    NOTE("status"),
    NOTE("first_step"),
    {.name = "last_step", .role = LT_COL_INFO, SHOWN("updates", NULL, 0)},
    {.name = "step_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "step",
     SHOWN("s/update", "%.4f", 0)},
    {.name = "step_min_s", .role = LT_COL_NOTE, SHOWN("min", "%.4f", 0)},
    {.name = "step_max_s", .role = LT_COL_NOTE, SHOWN("max", "%.4f", 0)},
    {.name = "tokens_per_s", .role = LT_COL_TIMING, .higher_is_better = 1, .unit = "tokens/s",
     .spread = "step", .rate = 1, SHOWN("tokens/s", "%.0f", 0)},
    NOTE("comm_s_per_update"),
    NOTE("shards"),
    {.name = "peak_bytes", .role = LT_COL_EXACT, .unit = "bytes", COUNTED, SHOWN("peak MiB", "%.1f", MIB)},
    COUNT_LOW("planned_bytes", "bytes"),
    NOTE("infer_planned_bytes"),
    COUNT_LOW("params", "parameters"),
    {.name = "loss_start", .role = LT_COL_EXACT, .unit = "nats", SHOWN("loss0", "%.4f", 0)},
    {.name = "loss_end", .role = LT_COL_EXACT, .unit = "nats", SHOWN("loss", "%.4f", 0)},
    {.name = "copy_accuracy_end", .role = LT_COL_EXACT, .higher_is_better = 1,
     .unit = "fraction", SHOWN("copy acc", "%.3f", 0)},
    EXACT_LOW("eval_loss", "nats"),
    {.name = "eval_copy_accuracy", .role = LT_COL_EXACT, .higher_is_better = 1,
     .unit = "fraction", SHOWN("eval acc", "%.3f", 0)},
    NOTE("eval_sequences"),
    INFO("total_s"),
    NOTE("config"),
    NOTE("note"),
};

const lt_schema bench_copy_summary = {"copy summary", "copy", copy_summary_columns,
                                      COUNT(copy_summary_columns), NULL, 0};
