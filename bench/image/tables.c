/* image's result tables: each column declared once, with the figures drawn from them. */
#include "image/image.h"

#include "common/columns.h"

/* dataset: the data's own name ("cifar10-catdog"), set by the program */
#define IMAGE_KEYS                                                                            \
    FROM_EXPERIMENT, LABEL("dataset"), FROM_LABEL("variant", "$model", "variant"),            \
        FROM_LABEL("kernel", "$kernel", "kernel"), FROM_KEY("preset", "--preset"),            \
        FROM_KEY("layers", "--layers"), FROM_KEY("heads", "--heads"),                         \
        FROM_KEY("head_dim", "--head-dim"), FROM_KEY("ffn", "--ffn"),                         \
        FROM_DROPOUT_ADDED, FROM_THREADS,                                                     \
        {.name = "seed", .role = LT_COL_NOTE, .from = "--seed"}

static const lt_column image_curve_columns[] = {
    IMAGE_KEYS,
    LABEL("step"),
    INFO("elapsed_s"),
    EXACT_LOW("loss", "nats"),
    NOTE("bits_per_dim"),
    NOTE("lr"),
    EXACT_LOW("grad_norm", "norm"),
};

const lt_schema bench_image_curves = {"image curves", "image", image_curve_columns,
                                      COUNT(image_curve_columns), NULL, 0};

static const lt_column image_result_columns[] = {
    IMAGE_KEYS,
    {.name = "gen_mode", .role = LT_COL_KEY, .label = 1, SHOWN("mode", NULL, 0)},
    {.name = "gen_batch", .role = LT_COL_KEY, .label = 1, SHOWN("batch", NULL, 0)},
    NOTE("status"),
    NOTE("data"),
    NOTE("train_images"),
    NOTE("test_images"),
    NOTE("trained"),
    NOTE("steps"),
    {.name = "train_s", .role = LT_COL_NOTE, SHOWN("train s", "%.0f", 0)},
    {.name = "step_median_s", .role = LT_COL_TIMING, .unit = "s"},
    COUNT_LOW("peak_train_bytes", "bytes"),
    {.name = "test_bits_per_dim", .role = LT_COL_EXACT, .unit = "bits/dim",
     SHOWN("bits/dim", "%.4f", 0)},
    /* a per-channel histogram of the training pixels: what a model that
     * learned nothing beyond pixel statistics scores */
    {.name = "histogram_bits_per_dim", .role = LT_COL_EXACT, .unit = "bits/dim",
     SHOWN("histogram", "%.4f", 0)},
    {.name = "images_generated", .role = LT_COL_INFO, SHOWN("images", NULL, 0)},
    NOTE("gen_s"),
    {.name = "images_per_s", .role = LT_COL_TIMING, .higher_is_better = 1, .unit = "images/s",
     SHOWN("images/s", "%.4g", 0)},
    {.name = "seconds_per_image", .role = LT_COL_NOTE, SHOWN("s/image", "%.4g", 0)},
    {.name = "linear_speedup", .role = LT_COL_INFO, SHOWN("linear x", "%.4g", 0)},
    COUNT_LOW("peak_gen_bytes", "bytes"),
    {.name = "peak_gen_bytes_per_image", .role = LT_COL_NOTE,
     SHOWN("gen MiB/img", "%.2f", MIB)},
    /* the roofline: what the machine allows at its measured bandwidth and
     * SGEMM rate (lt_generator_bound), and the fraction of it reached */
    NOTE("bandwidth_gb_per_s"),
    NOTE("sgemm_gflop_per_s"),
    NOTE("bytes_per_image"),
    NOTE("flops_per_image"),
    INFO("bound_images_per_s"),
    NOTE("memory_bound_share"),
    {.name = "fraction_of_bound", .role = LT_COL_INFO, SHOWN("roof %", "%.0f", 100)},
    /* the same with the weights from memory every step (a triad's bandwidth):
     * a model whose weights stay in the caches beats it */
    NOTE("dram_bandwidth_gb_per_s"),
    INFO("dram_bound_images_per_s"),
    {.name = "fraction_of_dram_bound", .role = LT_COL_INFO, SHOWN("DRAM %", "%.0f", 100)},
    COUNT_LOW("params", "parameters"),
    NOTE("note"),
};

/* Bits/dim is one number per model: its own figure, one bar per variant
 * (a panel beside the generation modes repeated it per mode and batch). */
static const lt_figure image_figures[] = {
    {"image-bits", "Image modelling: test bits/dim per variant (paper Tables 1-2)",
     LT_FIGURE_BARS, {"variant", "kernel", NULL}, 1, "dataset",
     {{NULL, "test_bits_per_dim", NULL, "test bits/dim (lower is better)", 1, 0, 0}},
     {"dataset", "preset", "layers", "head_dim", "steps", NULL},
     .paper_by = "dataset",
     .paper_files = {"mnist", "table1-mnist.csv", "cifar10", "table2-cifar10.csv",
                     "cifar10-catdog", "table2-cifar10.csv", NULL},
     .paper_y = {"bits_per_dim", NULL},
     .paper_label = "the paper (its full-size models)"},
    {"image", "Image generation speed by mode and batch (paper Tables 1-2)", LT_FIGURE_BARS,
     {"variant", "dataset", "gen_batch", "kernel", NULL}, 1, "gen_mode",
     {{NULL, "images_per_s", NULL, "images/s (generation)", 1, 0, 1}},
     .context = {"dataset", "preset", "threads", NULL}},
};

const lt_schema bench_image_results = {"image", "image", image_result_columns,
                                       COUNT(image_result_columns), image_figures,
                                       COUNT(image_figures)};
