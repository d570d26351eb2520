/* speech's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "speech/speech.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_speech_results, &bench_speech_curves};

static const lt_report_section sections[] = {
    {"speech", NULL, "Speech recognition (the paper's Table 3)", "speech/speech.csv",
     &bench_speech_results, "speech/speech-curves.csv", &bench_speech_curves, "table3-wsj.csv",
     "softmax has the lowest PER, then linear, then the Bi-LSTM; linear attention is about "
     "3.3x faster per epoch than softmax.", .part = LT_PART_PAPER, .conclude = bench_speech_claims,
     .paper_config = "80 hours of WSJ; transformers of 9 layers and 6 heads, RAdam 1e-4 halved "
                     "on plateau; a Bi-LSTM of 3 layers of 320, Adam 1e-3",
     .describe = bench_speech_describe},
    {"speech", NULL, "Speech recognition: time per epoch (speed only)",
     "speech-speed/speech.csv", &bench_speech_results, NULL, NULL, "table3-wsj.csv",
     "linear attention trains about 3.3x faster per epoch than softmax, and the four models "
     "take time per epoch in the order linear, Bi-LSTM, LSH-4, softmax. Here the medium "
     "preset's models train for 3 epochs alone on the machine, so that their times compare "
     "even when the quality runs above were trained beside other work (their PER after 3 "
     "epochs says nothing; medium preset only).",
     .part = LT_PART_PAPER, .conclude = bench_speech_speed_claims, .only_preset = "medium",
     .args = {"--epochs=3", NULL},
     .paper_config = "80 hours of WSJ; transformers of 9 layers and 6 heads; a Bi-LSTM of 3 "
                     "layers of 320; times per epoch on one GPU",
     .describe = bench_speech_describe},
    /* other seeds of the quality runs: judged with their sections */
    {"speech", NULL, "Speech, seed 2", "speech-seed2/speech.csv", &bench_speech_results, NULL,
     NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=2", NULL},
     .seed_of = "speech/speech.csv",
     .describe = bench_speech_describe},
    {"speech", NULL, "Speech, seed 3", "speech-seed3/speech.csv", &bench_speech_results, NULL,
     NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=3", NULL},
     .seed_of = "speech/speech.csv",
     .describe = bench_speech_describe},
    {"speech", NULL, "Speech recognition: four times the audio (an ablation)",
     "speech-8h/speech.csv", &bench_speech_results, NULL, NULL, NULL,
     "The medium preset's speech task again on 8 hours of audio instead of 2 (the same "
     "utterance lengths, so four times the updates over the same 20 epochs), softmax and the "
     "Bi-LSTM only, to tell whether the transformers trail the Bi-LSTM for want of data "
     "(medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--hours=8", "--variants=softmax,bilstm", NULL},
     .runs = {"speech", "speech-8h", NULL},
     .extra = bench_speech_ablation,
     .describe = bench_speech_describe},
    {"speech", NULL, "Speech recognition: dropout (an ablation)", "speech-dropout/speech.csv",
     &bench_speech_results, NULL, NULL, NULL,
     "The medium preset's speech task again with dropout 0.1 after each branch of the "
     "transformers (the preset trains without; the paper's copy task uses 0.1), softmax and "
     "linear only, to tell whether the transformers trail the Bi-LSTM for want of "
     "regularisation: their dev PER (speakers heard in training) is far below their test PER "
     "(unseen voices) (medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--dropout=0.1", "--variants=softmax,linear", NULL},
     .runs = {"speech", "speech-dropout", NULL},
     .extra = bench_speech_dropout_ablation,
     .describe = bench_speech_describe},
};

const bench_entry bench_speech_entry = {"speech",
    "WSJ-style CTC speech recognition: phoneme error rate, time per epoch",
    BENCH_PAPER, tables, COUNT(tables), sections, COUNT(sections)};
