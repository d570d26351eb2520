#include "tables.h"

/* Roles: a KEY identifies a case (LABEL: and always names it in compare's
 * report), SETUP must agree between runs compared, TIMING and EXACT are
 * judged (LOW: lower is better), INFO is listed, NOTE only recorded. */
#define KEY(n) {.name = n, .role = LT_COL_KEY}
#define LABEL(n) {.name = n, .role = LT_COL_KEY, .label = 1}
#define SETUP(n) {.name = n, .role = LT_COL_SETUP}
#define INFO(n) {.name = n, .role = LT_COL_INFO}
#define NOTE(n) {.name = n, .role = LT_COL_NOTE}
#define EXACT_LOW(n, u) {.name = n, .role = LT_COL_EXACT, .unit = u}
#define EXACT_HIGH(n, u) {.name = n, .role = LT_COL_EXACT, .higher_is_better = 1, .unit = u}
/* A count (FLOPs, bytes, parameters): the same on every CPU */
#define COUNT_LOW(n, u) {.name = n, .role = LT_COL_EXACT, .unit = u, .cpu_independent = 1}
#define COUNTED .cpu_independent = 1
/* Printed: by the program after a run and in the suite's report. */
#define SHOWN(h, f, s) .header = h, .format = f, .scale = s
#define MIB (1.0 / 1048576.0)

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- copy ---- */

/* Key columns filled from a flag (or the run: $experiment, $model,
 * $kernel, $threads, $dropout) by the driver; SHOWN ones print. */
#define FROM_KEY(n, f) {.name = n, .role = LT_COL_KEY, .from = f}
#define FROM_LABEL(n, f, h) {.name = n, .role = LT_COL_KEY, .label = 1, .from = f, SHOWN(h, NULL, 0)}
#define FROM_THREADS {.name = "threads", .role = LT_COL_SETUP, .from = "$threads"}
#define FROM_EXPERIMENT {.name = "experiment", .role = LT_COL_NOTE, .from = "$experiment"}
/* the dropout the model applies: --dropout's for a transformer, 0 for a Bi-LSTM */
#define FROM_DROPOUT {.name = "dropout", .role = LT_COL_KEY, .from = "$dropout"}
/* the same, in image and speech results, which gained the column later */
#define FROM_DROPOUT_ADDED                                                                     \
    {.name = "dropout", .role = LT_COL_KEY, .from = "$dropout", .older_files_lack = 1}

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

/* ---- scaling ---- */

/* How an attention case ran and its times (lt_attn_time_case): scaling's
 * and crossover's cases. *_samples_s: every timed run's seconds,
 * space-separated, for a statistic over repeats (ltbench ab). */
#define ATTN_CASE_TIMINGS                                                                     \
    SETUP("threads"), NOTE("seed"), NOTE("warmup"), NOTE("repeats"), NOTE("status"),          \
        {.name = "fwd_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "fwd"},        \
        NOTE("fwd_min_s"), NOTE("fwd_max_s"),                                                 \
        {.name = "fwd_bwd_median_s", .role = LT_COL_TIMING, .unit = "s", .spread = "fwd_bwd"}, \
        NOTE("fwd_bwd_min_s"), NOTE("fwd_bwd_max_s"),                                         \
        NOTE("fwd_samples_s"), NOTE("fwd_bwd_samples_s")

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

/* ---- image ---- */

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

/* ---- speech ---- */

#define SPEECH_KEYS                                                                           \
    FROM_EXPERIMENT, FROM_LABEL("model", "$model", "model"),                                  \
        FROM_LABEL("kernel", "$kernel", "kernel"), FROM_KEY("preset", "--preset"),            \
        FROM_KEY("hours", "--hours"), FROM_KEY("utterance_frames", "--utterance-frames"),     \
        {.name = "corpus_seed", .role = LT_COL_NOTE, .from = "--seed"},                       \
        FROM_KEY("stack", "--stack"), FROM_KEY("batch", "--batch"),                           \
        FROM_DROPOUT_ADDED, FROM_THREADS,                                                     \
        {.name = "seed", .role = LT_COL_NOTE, .from = "--seed"}

static const lt_column speech_curve_columns[] = {
    SPEECH_KEYS,
    LABEL("epoch"),
    NOTE("step"),
    INFO("elapsed_s"),
    INFO("epoch_s"),
    EXACT_LOW("train_loss", "nats"),
    NOTE("dev_loss"),
    EXACT_LOW("dev_per", "PER"),
    EXACT_LOW("test_per", "PER"),
    NOTE("lr"),
};

static const lt_figure speech_figures[] = {
    {"speech", "Speech recognition: dev phoneme error rate per epoch (paper Table 3 gives test PER)", LT_FIGURE_LINES,
     {"model", "kernel", NULL}, 1, NULL,
     {{"epoch", "dev_per", "epoch", "dev PER (%, the training speakers)", 0.01, 0, 0},
      {"elapsed_s", "dev_per", "seconds", "dev PER (%, the training speakers)", 0.01, 0, 0}},
     .context = {"threads", NULL}},
};

const lt_schema bench_speech_curves = {"speech curves", "speech", speech_curve_columns,
                                       COUNT(speech_curve_columns), speech_figures,
                                       COUNT(speech_figures)};

static const lt_column speech_result_columns[] = {
    SPEECH_KEYS,
    NOTE("status"),
    {.name = "layers", .role = LT_COL_KEY, SHOWN("layers", NULL, 0)},
    KEY("width"),
    {.name = "params", .role = LT_COL_EXACT, .unit = "parameters", COUNTED, SHOWN("params", NULL, 0)},
    NOTE("train_utterances"),
    NOTE("dev_utterances"),
    NOTE("test_utterances"),
    NOTE("train_hours"),
    /* what reaches attention: positions of the training utterances */
    INFO("mean_positions"),
    INFO("max_positions"),
    {.name = "epochs", .role = LT_COL_INFO, SHOWN("epochs", NULL, 0)},
    NOTE("best_epoch"),
    {.name = "dev_per", .role = LT_COL_EXACT, .unit = "PER", SHOWN("dev PER%", "%.2f", 100)},
    {.name = "test_per", .role = LT_COL_EXACT, .unit = "PER", SHOWN("test PER%", "%.2f", 100)},
    NOTE("final_test_per"),
    INFO("baseline_per"),
    {.name = "seconds_per_epoch", .role = LT_COL_TIMING, .unit = "s",
     SHOWN("s/epoch", "%.2f", 0)},
    NOTE("train_s"),
    {.name = "peak_bytes", .role = LT_COL_EXACT, .unit = "bytes", COUNTED, SHOWN("peak MiB", "%.1f", MIB)},
    COUNT_LOW("planned_bytes", "bytes"),
    NOTE("note"),
};

const lt_schema bench_speech_results = {"speech", "speech", speech_result_columns,
                                        COUNT(speech_result_columns), NULL, 0};

/* ---- beyond the paper: crossover ---- */

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

/* ---- beyond the paper: decode ---- */

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

const lt_schema *const bench_tables[] = {
    &bench_copy_summary,  &bench_copy_curves,   &bench_scaling,       &bench_image_results,
    &bench_image_curves,  &bench_speech_results, &bench_speech_curves, &bench_crossover_cases,
    &bench_crossover,     &bench_decode,
};
const int bench_table_count = COUNT(bench_tables);
