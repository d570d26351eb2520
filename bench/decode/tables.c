/* decode's result tables: each column declared once, with the figures drawn from them. */
#include "decode/decode.h"

#include "common/columns.h"

static const lt_column decode_columns[] = {
    NOTE("experiment"),
    {.name = "gen_mode", .role = LT_COL_KEY, .label = 1, SHOWN("mode", NULL, 0)},
    {.name = "variant", .role = LT_COL_KEY, .label = 1, SHOWN("variant", NULL, 0)},
    {.name = "feature_map", .role = LT_COL_KEY, .label = 1, SHOWN("map", NULL, 0)},
    KEY("kernel"),
    {.name = "batch", .role = LT_COL_KEY, .label = 1, SHOWN("batch", NULL, 0)},
    {.name = "context", .role = LT_COL_KEY, .label = 1, SHOWN("context", NULL, 0)},
    KEY("layers"),
    KEY("heads"),
    KEY("head_dim"),
    KEY("ffn"),
    KEY("vocab"),
    KEY("mixtures"),
    SETUP("threads"),
    NOTE("seed"),
    NOTE("window"),
    NOTE("reach"),
    NOTE("status"),
    {.name = "token_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "token",
     SHOWN("ms/token", "%.4g", 1e3)},
    NOTE("token_min_s"),
    NOTE("token_max_s"),
    {.name = "tokens_per_s", .role = LT_COL_TIMING, .higher_is_better = 1, .unit = "tokens/s",
     .spread = "token", .rate = 1, SHOWN("tokens/s", "%.4g", 0)},
    {.name = "state_bytes", .role = LT_COL_EXACT, .unit = "bytes", COUNTED,
     SHOWN("state MiB", "%.4g", MIB)},
    COUNT_LOW("forward_bytes", "bytes"),
    {.name = "held_bytes", .role = LT_COL_EXACT, .unit = "bytes", COUNTED,
     SHOWN("held MiB", "%.4g", MIB)},
    COUNT_LOW("planned_bytes", "bytes"),
    COUNT_LOW("peak_bytes", "bytes"),
    NOTE("note"),
};

static const lt_figure decode_figures[] = {
    {"decode", "Generation: time per token and memory against the context",
     LT_FIGURE_LINES, {"gen_mode", "variant", "feature_map", "batch", NULL}, 1, NULL,
     {{"context", "token_median_s", "context position p", "seconds per token (a step of the "
                                                          "batch)", 1, 1, 1},
      {"context", "held_bytes", "context position p", "state, cache or recompute memory (MiB)",
       1 << 20, 1, 1}},
     .context = {"layers", "heads", "head_dim", "ffn", "threads", NULL}},
};

const lt_schema bench_decode = {"decode", "decode", decode_columns, COUNT(decode_columns),
                                decode_figures, COUNT(decode_figures)};
