/* speech's result tables: each column declared once, with the figures drawn from them. */
#include "speech/speech.h"

#include "common/columns.h"

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
    /* test PER, as Table 3 and the verdicts give it (dev PER is of the
     * training speakers' voices) */
    {"speech", "Speech recognition: test phoneme error rate per epoch (paper Table 3)",
     LT_FIGURE_LINES, {"model", "kernel", NULL}, 1, NULL,
     {{"epoch", "test_per", "epoch", "test PER (%, voices unseen in training)", 0.01, 0, 0},
      {"elapsed_s", "test_per", "seconds", "test PER (%, voices unseen in training)", 0.01, 0,
       0}},
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
