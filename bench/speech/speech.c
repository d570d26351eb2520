/* ltbench speech: WSJ-style phoneme recognition with CTC (the paper's
 * sec. 4.3, Table 3). A read-speech corpus is built locally (WordNet
 * sentences spoken by espeak-ng voices, 40 log-mel filterbank features per
 * 10 ms), then non-causal transformer encoders with each attention variant
 * and the Bi-LSTM baseline are trained with CTC over a 39-phone set, and
 * evaluated every epoch by phoneme error rate (greedy decoding). What is
 * its own here: the corpus, the Bi-LSTM, PER and the utterance figure; the
 * driver does the rest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/threads.h"
#include "datasets/speech.h"
#include "experiment/experiment.h"
#include "nn/ctc.h"
#include "speech/speech.h"

enum { CLASSES = LT_SPEECH_PHONES + 1 /* + the CTC blank, class 0 */, STATS = 4 };

/* The paper halves the transformers' rate when dev PER stops improving. */
#define PLATEAU_FACTOR 0.5

static const lt_preset_value preset_values[] = {
    {"--hours", {"0.005", "0.5", "2", "80"}},
    {"--utterance-frames", {"0", "0", "800", "800"}},
    {"--stack", {"3", "3", "2", "3"}},
    {"--epochs", {"2", "20", "20", "100"}},
    {"--batch", {"4", "16", "8", "16"}},
    {"--layers", {"1", "4", "4", "9"}},
    {"--heads", {"2", "4", "4", "6"}},
    {"--head-dim", {"8", "32", "32", "64"}},
    {"--ffn", {"32", "512", "512", "1536"}},
    {"--lstm-layers", {"1", "2", "2", "3"}},
    {"--hidden", {"16", "128", "128", "320"}},
    {"--lr", {"1e-3", "1e-3", "1e-3", "1e-4"}},
    {"--lstm-lr", {"1e-3", "1e-3", "1e-3", "1e-3"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: 18 s of audio, tiny models; used by the tests",
     "minutes per model on a 2-core machine: half an hour of audio (the default)",
     "two hours of audio in utterances of WSJ's length (800 frames on average, sentences of "
     "one speaker joined), 2 frames per position: about 2 hours on a 2-core machine",
     "the paper: 80 hours, transformers of 9 layers x 6 heads (RAdam 1e-4, halved on "
     "plateau), Bi-LSTM of 3 layers x 320 (Adam 1e-3): days on a CPU"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

typedef struct speech_run {
    const char *cache;
    double hours, lstm_lr;
    long stack, epochs, lstm_layers, hidden, utterance_frames;
    lt_speech_corpus corpus;
    lt_batch_source source;
    int max_positions, max_labels;
    double baseline_per;
    int baseline_phone;
    int32_t *decoded, *work;
    double *eval_scratch;
} speech_run;


static int speech_flags(void *self, lt_flag *f)
{
    speech_run *c = self;
    int n = 0;
    f[n++] = (lt_flag){"--hours", LT_FLAG_DOUBLE, &c->hours, "H",
                       "audio in the corpus (train 90%, dev 5%, test 5%)", 0, 0, NULL, 0};
    f[n++] = (lt_flag){"--cache", LT_FLAG_STRING, &c->cache, "DIR",
                       "folder of the corpus cache (a second run reads it instead of "
                       "synthesising)",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--utterance-frames", LT_FLAG_INT, &c->utterance_frames, "F",
                       "0: an utterance is one sentence (about 2 s); else sentences of one "
                       "speaker joined into utterances of F frames on average, at most 3 F (WSJ: "
                       "800, at most 2400)",
                       0, LT_SPEECH_MAX_UTTERANCE_FRAMES, NULL, 0};
    f[n++] = (lt_flag){"--stack", LT_FLAG_INT, &c->stack, "K",
                       "frames stacked per position (30 ms at 3)", 1, 16, NULL, 0};
    f[n++] = (lt_flag){"--epochs", LT_FLAG_INT, &c->epochs, "E", "passes over the training split",
                       1, 100000, NULL, 0};
    f[n++] = (lt_flag){"--lstm-layers", LT_FLAG_INT, &c->lstm_layers, "L", "Bi-LSTM layers", 1, 64,
                       NULL, 0};
    f[n++] = (lt_flag){"--hidden", LT_FLAG_INT, &c->hidden, "H", "Bi-LSTM units per direction", 1,
                       8192, NULL, 0};
    f[n++] = (lt_flag){"--lstm-lr", LT_FLAG_DOUBLE, &c->lstm_lr, "LR",
                       "Bi-LSTM's Adam learning rate", 1e-9, 10, NULL, 0};
    return n;
}

static void speech_defaults(void *self, lt_exp_run *run)
{
    speech_run *c = self;
    c->cache = "results/speech/cache";
    c->stack = 3;
    run->o.proj_k = 64;
}

static lt_status speech_check(void *self, lt_exp_run *run, lt_cli *cli)
{
    (void)run;
    (void)cli;
    speech_run *c = self;
    lt_speech_config probe = {.hours = c->hours, .utterance_frames = (int)c->utterance_frames};
    return lt_speech_check_config(&probe);
}

static void notice(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "speech corpus: %s\n", message);
}

/* PER of always answering the most frequent training phone, as many times
 * as the reference has phones: the floor a useful model must beat. */
static void baseline(speech_run *c)
{
    long counts[LT_SPEECH_PHONES] = {0}, test[LT_SPEECH_PHONES] = {0};
    lt_speech_phone_histogram(counts, &c->corpus.train);
    lt_speech_phone_histogram(test, &c->corpus.test);
    int best = 0;
    for (int p = 1; p < LT_SPEECH_PHONES; p++)
        best = counts[p] > counts[best] ? p : best;
    c->baseline_phone = best;
    c->baseline_per = 1.0 - (double)test[best] / (double)c->corpus.test.phones;
}

static lt_status load_corpus(speech_run *c, const lt_exp_run *run)
{
    lt_speech_config cfg = {.hours = c->hours, .seed = (uint64_t)run->o.common.seed,
                            .cache_dir = c->cache, .notice = notice,
                            .utterance_frames = (int)c->utterance_frames};
    LT_TRY(lt_speech_check_config(&cfg));
    lt_progress progress;
    lt_progress_start(&progress, stderr, "speech corpus", (long)(c->hours * 3600), "s of audio",
                      run->quiet);
    lt_speech_origin origin;
    LT_TRY(lt_speech_load(&c->corpus, &cfg, &progress, &origin));
    lt_progress_finish(&progress, origin == LT_SPEECH_FROM_CACHE ? "read from the cache"
                                                                  : "synthesised");
    return LT_OK;
}

static lt_status speech_setup(void *self, lt_exp_run *run)
{
    speech_run *c = self;
    /* rank 0 builds the corpus (and its cache) first; the others then read
     * the cache where they share the folder, or build the same bytes */
    lt_status status = lt_dist_is_root() ? load_corpus(c, run) : LT_OK;
    LT_TRY(lt_dist_agree(status));
    if (!lt_dist_is_root())
        LT_TRY(load_corpus(c, run));
    /* Sharded updates split every batch into equal shards: whole batches only. */
    LT_TRY(lt_speech_source_init(&c->source, &c->corpus, (int)c->stack,
                                 (uint64_t)run->o.common.seed, (int)run->o.batch,
                                 lt_dist_rank(), lt_dist_size(), lt_exp_shards(run) > 1));
    lt_speech_source_limits(&c->source, &c->max_positions, &c->max_labels);
    LT_TRY(lt_mem_alloc((void **)&c->decoded, (size_t)c->max_positions * sizeof(int32_t),
                        "decoded phones"));
    LT_TRY(lt_mem_alloc((void **)&c->work, 2 * ((size_t)c->max_positions + 1) * sizeof(int32_t),
                        "edit distance"));
    long most = c->corpus.dev.count > c->corpus.test.count ? c->corpus.dev.count
                                                           : c->corpus.test.count;
    size_t scratch = lt_eval_scratch_doubles(most, lt_exp_shard_batch(run), STATS);
    LT_TRY(lt_mem_alloc((void **)&c->eval_scratch, scratch * sizeof(double), "evaluation sums"));
    baseline(c);
    if (!lt_dist_is_root())
        return LT_OK;
    lt_cli_print_wrapped(
        stdout, 100, 4,
        "ltbench speech: %.3g hours (%d train, %d dev, %d test utterances; %.1f s average), "
        "%d phones + blank, stack %ld, %ld epochs, batch %ld, %d threads, seed %ld\n",
        c->hours, c->corpus.train.count, c->corpus.dev.count, c->corpus.test.count,
        c->corpus.train.seconds / (c->corpus.train.count ? c->corpus.train.count : 1),
        LT_SPEECH_PHONES, c->stack, c->epochs, run->o.batch, lt_threads_get(), run->o.common.seed);
    lt_speech_lengths len = lt_speech_split_lengths(&c->corpus.train, (int)c->stack);
    lt_cli_print_wrapped(stdout, 100, 4,
                         "positions that reach attention (training split, stack %ld): %.0f on "
                         "average, %d at most (%.0f and %d frames; %.2f sentences an utterance)",
           c->stack, len.mean_positions, len.max_positions, len.mean_frames, len.max_frames,
           len.mean_sentences);
    printf("baseline: always '%s' (the most frequent training phone) gives a test PER of %.1f%%\n",
           lt_speech_phone_name(c->baseline_phone), 100 * c->baseline_per);
    fflush(stdout);
    return LT_OK;
}

static lt_status speech_configure(void *self, lt_exp_run *run, lt_exp_model *m)
{
    speech_run *c = self;
    lt_train_config *tc = &m->config;
    lt_model_config *mc = &tc->model;
    mc->input = LT_INPUT_FEATURES;
    mc->features = LT_SPEECH_MELS;
    mc->stack = (int)c->stack;
    mc->classes = CLASSES;
    tc->loss = (lt_loss){.kind = LT_LOSS_CTC, .classes = CLASSES, .max_labels = c->max_labels};
    tc->plateau_factor = PLATEAU_FACTOR;
    if (m->attention) {
        if (mc->attn.proj_k > c->max_positions)
            mc->attn.proj_k = c->max_positions;
        return LT_OK;
    }
    mc->body = LT_BODY_BILSTM;
    mc->pos = LT_POS_NONE;
    mc->layers = (int)c->lstm_layers;
    mc->hidden = (int)c->hidden;
    tc->optim = lt_optim_defaults(LT_OPTIM_ADAM);
    tc->optim.lr = c->lstm_lr;
    tc->optim.weight_decay = run->o.weight_decay;
    return lt_schedule_init(&tc->schedule, c->lstm_lr, 0);
}

static lt_status speech_source(void *self, lt_exp_run *run, lt_batch_source **out)
{
    (void)run;
    *out = &((speech_run *)self)->source; /* made once at setup, outside every peak */
    return LT_OK;
}

static long speech_steps(void *self, lt_exp_run *run, const lt_batch_source *source)
{
    (void)run;
    return ((speech_run *)self)->epochs * source->updates_per_epoch;
}

/* ---- evaluation and rows ---- */

/* Per chunk: CTC nats, utterances, edits of greedy decoding, reference
 * phones. */
static lt_status eval_chunk(void *ctx, const lt_trainer *t, const lt_batch *batch,
                            const lt_batch_result *r, double *stats)
{
    speech_run *c = ctx;
    stats[0] = r->sum;
    stats[1] = batch->batch;
    int at = 0;
    for (int b = 0; b < batch->batch; b++) {
        const float *logits = t->model.logits + (size_t)b * batch->n * CLASSES;
        int n = lt_ctc_greedy_decode(c->decoded, logits, batch->lengths[b], CLASSES);
        stats[2] += (double)lt_edit_distance(batch->labels + at, batch->label_lengths[b],
                                             c->decoded, n, c->work);
        stats[3] += batch->label_lengths[b];
        at += batch->label_lengths[b];
    }
    return LT_OK;
}

/* CTC loss per utterance and PER of a split, without dropout. */
static lt_status evaluate_split(speech_run *c, lt_trainer *t, lt_split split, double *loss,
                                double *per)
{
    double totals[STATS];
    LT_TRY(lt_evaluate(t, &c->source, split, eval_chunk, c, STATS, totals, c->eval_scratch,
                       NULL));
    *loss = totals[1] > 0 ? totals[0] / totals[1] : NAN;
    *per = totals[3] > 0 ? totals[2] / totals[3] : NAN;
    return LT_OK;
}

/* After each epoch: dev and test PER and a curve row; dev PER drives the
 * plateau rule. */
static lt_status speech_evaluate(void *self, lt_exp_run *run, const lt_exp_model *m,
                                 lt_trainer *t, const lt_fit_state *state, double *metric)
{
    speech_run *c = self;
    double dev_loss, dev_per, test_loss, test_per;
    LT_TRY(evaluate_split(c, t, LT_SPLIT_DEV, &dev_loss, &dev_per));
    LT_TRY(evaluate_split(c, t, LT_SPLIT_TEST, &test_loss, &test_per));
    lt_table *curves = &run->curves;
    lt_exp_row_begin(run, curves, m);
    lt_set_int(curves, "epoch", t->step / c->source.updates_per_epoch);
    lt_set_int(curves, "step", t->step);
    lt_set_num(curves, "elapsed_s", state->train_seconds);
    lt_set_num(curves, "epoch_s", state->window_seconds);
    lt_set_num(curves, "train_loss", state->window_updates
                                         ? state->window_loss / (double)state->window_updates
                                         : NAN);
    lt_set_num(curves, "dev_loss", dev_loss);
    lt_set_num(curves, "dev_per", dev_per);
    lt_set_num(curves, "test_per", test_per);
    /* the rate of the epoch's last update */
    lt_set_num(curves, "lr", lt_schedule_lr(&t->config.schedule, t->step) * t->plateau.scale);
    *metric = dev_per;
    return lt_row_end(curves);
}

static void speech_note(void *self, const lt_trainer *t, const lt_batch_result *r, char *buf,
                        size_t size)
{
    speech_run *c = self;
    snprintf(buf, size, "epoch %ld, loss %.3f", t->step / c->source.updates_per_epoch + 1,
             r->loss);
}

/* Greedy decoding of the first test utterance, for the figure. */
static lt_status decode_example(speech_run *c, lt_trainer *t, int *len)
{
    long place = lt_speech_source_eval_place(&c->source, LT_SPLIT_TEST, 0);
    lt_batch batch;
    lt_batch_result r;
    LT_TRY(lt_source_eval(&c->source, LT_SPLIT_TEST, place, 1, &batch));
    LT_TRY(lt_trainer_evaluate(t, &batch, &r));
    *len = lt_ctc_greedy_decode(c->decoded, t->model.logits, batch.lengths[0], CLASSES);
    return LT_OK;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A model's epochs in the curves: the row of the best dev PER and the last
 * (-1: none), and the median time per epoch over every epoch of the run,
 * resumed or not. */
static double epoch_rows(const lt_table *curves, const char *model, long *best_row,
                         long *last_row)
{
    long epochs = 0;
    double epoch_s[4096];
    *best_row = *last_row = -1;
    for (long i = 0; i < curves->rows; i++) {
        if (strcmp(lt_cell(curves, i, "model"), model) != 0)
            continue;
        *last_row = i;
        if (epochs < 4096)
            epoch_s[epochs++] = lt_cell_num(curves, i, "epoch_s");
        if (*best_row < 0 ||
            lt_cell_num(curves, i, "dev_per") < lt_cell_num(curves, *best_row, "dev_per"))
            *best_row = i;
    }
    qsort(epoch_s, (size_t)epochs, sizeof *epoch_s, by_value);
    return epochs == 0       ? NAN
           : epochs % 2 == 1 ? epoch_s[epochs / 2]
                             : 0.5 * (epoch_s[epochs / 2 - 1] + epoch_s[epochs / 2]);
}

/* t and out->state are NULL for a model not applicable (causal-only
 * attention): its row says why, with nothing measured. */
static lt_status speech_finish(void *self, lt_exp_run *run, lt_exp_model *m, lt_trainer *t,
                               lt_exp_outcome *out)
{
    speech_run *c = self;
    int decoded = 0;
    if (lt_dist_is_root() && t != NULL)
        LT_TRY(decode_example(c, t, &decoded));
    if (out->state != NULL)
        lt_fit_note_peak(out->state, lt_mem_peak() - out->state->peak_base);
    /* model selection: the epoch with the best dev PER */
    const lt_table *curves = &run->curves;
    long best_row, last_row;
    double median = epoch_rows(curves, m->name, &best_row, &last_row);
    int lstm = !m->attention;
    lt_table *r = &run->results;
    lt_exp_row_begin(run, r, m);
    lt_set_str(r, "status", out->status);
    lt_set_int(r, "layers", lstm ? c->lstm_layers : run->o.layers);
    lt_set_int(r, "width", lstm ? 2 * c->hidden : run->o.heads * run->o.head_dim);
    lt_set_int(r, "params", (long long)out->params);
    lt_set_int(r, "train_utterances", c->corpus.train.count);
    lt_set_int(r, "dev_utterances", c->corpus.dev.count);
    lt_set_int(r, "test_utterances", c->corpus.test.count);
    lt_set_num(r, "train_hours", c->corpus.train.seconds / 3600.0);
    lt_speech_lengths len = lt_speech_split_lengths(&c->corpus.train, (int)c->stack);
    lt_set_num(r, "mean_positions", len.mean_positions);
    lt_set_int(r, "max_positions", len.max_positions);
    lt_set_int(r, "epochs", t != NULL ? t->step / c->source.updates_per_epoch : 0);
    lt_set_num(r, "best_epoch", best_row >= 0 ? lt_cell_num(curves, best_row, "epoch") : NAN);
    lt_set_num(r, "dev_per", best_row >= 0 ? lt_cell_num(curves, best_row, "dev_per") : NAN);
    lt_set_num(r, "test_per", best_row >= 0 ? lt_cell_num(curves, best_row, "test_per") : NAN);
    lt_set_num(r, "final_test_per", last_row >= 0 ? lt_cell_num(curves, last_row, "test_per")
                                                  : NAN);
    lt_set_num(r, "baseline_per", c->baseline_per);
    lt_set_num(r, "seconds_per_epoch", median);
    lt_set_num(r, "train_s", out->state != NULL ? out->state->wall_seconds : NAN);
    lt_set_int(r, "peak_bytes", out->state != NULL ? (long long)out->state->peak_bytes : 0);
    lt_set_int(r, "planned_bytes", (long long)out->planned_bytes);
    lt_set_str(r, "note", out->note);
    LT_TRY(lt_row_end(r));
    if (!lt_dist_is_root() || decoded == 0)
        return LT_OK;
    /* the first test utterance, its reference and what the model heard */
    for (int i = 0; i < decoded; i++)
        c->decoded[i] -= 1; /* classes to phones: class 0 is the blank */
    char name[128];
    snprintf(name, sizeof name, "speech-%s-utterance", m->name);
    return lt_speech_figure(run->dir.dir, name, &c->corpus.test.utts[0], m->name, c->decoded,
                            decoded);
}

static void speech_footnote(void *self, lt_exp_run *run)
{
    (void)run;
    speech_run *c = self;
    printf("(PER: phoneme error rate of greedy CTC decoding on %d test utterances, at the epoch "
           "of\n the best dev PER; s/epoch: training time per epoch, median; the paper's WSJ "
           "Table 3:\n Bi-LSTM 10.94%%, softmax 5.12%%, linear 8.08%%; baseline here %.1f%%)\n",
           c->corpus.test.count, 100 * c->baseline_per);
}

static void speech_teardown(void *self, lt_exp_run *run)
{
    (void)run;
    speech_run *c = self;
    lt_mem_free(c->decoded);
    lt_mem_free(c->work);
    lt_mem_free(c->eval_scratch);
    lt_source_free(&c->source);
    lt_speech_free(&c->corpus);
}

static const char details[] =
    "The corpus (WSJ is licensed, so ltbench makes its own): English sentences from\n"
    "WordNet's examples, spoken by espeak-ng with varied voices, rates and pitch\n"
    "(test speakers and sentences never seen in training; a dev split for model\n"
    "selection), labelled with the phonemes espeak-ng reports folded to 39 phones, as\n"
    "40 log-mel filterbank energies per 25 ms window every 10 ms, normalised per\n"
    "utterance. It is built from --seed and cached in --cache.\n"
    "Models: non-causal pre-norm transformer encoders (each attention variant) and a\n"
    "Bi-LSTM, on --stack frames per position, with CTC over 39 phones + blank.\n"
    "After every epoch: dev and test PER (greedy best path; edit distance / reference\n"
    "phones); the rate halves when dev PER does not improve (the paper's \"halved on\n"
    "plateau\"). Reported: test PER at the epoch of the best dev PER, seconds per epoch\n"
    "(training only, median), peak bytes, and the PER of always answering the most\n"
    "frequent training phone (baseline). The transformers use --optimizer and --lr, the\n"
    "Bi-LSTM Adam and --lstm-lr, as in the paper. Writes OUT/speech.csv,\n"
    "OUT/speech-curves.csv (per epoch) and OUT/speech-MODEL-utterance.png.";

int main(int argc, char **argv)
{
    static speech_run c;
    const lt_experiment speech = {
        .name = "speech",
        .summary = "WSJ-style phoneme recognition with CTC (the paper's sec. 4.3, Table 3): "
                   "phoneme error\nrate and time per epoch per model.",
        .details = details,
        .presets = &presets,
        .default_preset = "small",
        .variants_note = "or bilstm, the Bi-LSTM baseline; the variants are transformer "
                         "encoders, and the causal-only decay, delta, gated-delta and gla are "
                         "reported as not applicable",
        .default_models = "softmax,linear,lsh-4,linformer,bilstm",
        .own_models = "bilstm",
        .sequence = "utterances (of similar lengths)",
        .causal = 0,
        .curves = &bench_speech_curves,
        .results = &bench_speech_results,
        .key_column = "model",
        .outputs_first = 1, /* before minutes of synthesis */
        .eval_every_epoch = 1,
        .flags = speech_flags,
        .defaults = speech_defaults,
        .check = speech_check,
        .setup = speech_setup,
        .configure = speech_configure,
        .source = speech_source,
        .steps = speech_steps,
        .evaluate = speech_evaluate,
        .note = speech_note,
        .finish = speech_finish,
        .footnote = speech_footnote,
        .teardown = speech_teardown,
    };
    return lt_experiment_main(&speech, &c, argc, argv);
}
