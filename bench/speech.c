/* ltbench speech: WSJ-style phoneme recognition with CTC (the paper's
 * sec. 4.3, Table 3). A read-speech corpus is built locally (WordNet
 * sentences spoken by espeak-ng voices, 40 log-mel filterbank features per
 * 10 ms), then non-causal transformer encoders with each attention variant
 * and the Bi-LSTM baseline are trained with CTC over a 39-phone set, and
 * evaluated by phoneme error rate (greedy decoding) and seconds per epoch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "common.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "datasets/speech.h"
#include "harness.h"
#include "io/atomic.h"
#include "io/png.h"
#include "model/train.h"
#include "nn/ctc.h"

enum { MAX_MODELS = 4, CLASSES = LT_SPEECH_PHONES + 1 /* + the CTC blank, class 0 */ };

static const char *const model_names[MAX_MODELS] = {"softmax", "linear", "linformer", "bilstm"};

static const bench_preset_value preset_values[] = {
    {"--hours", {"0.005", "0.5", "80"}},
    {"--epochs", {"2", "20", "100"}},
    {"--batch", {"4", "16", "16"}},
    {"--layers", {"1", "4", "9"}},
    {"--heads", {"2", "4", "6"}},
    {"--head-dim", {"8", "32", "64"}},
    {"--ffn", {"32", "512", "1536"}},
    {"--lstm-layers", {"1", "2", "3"}},
    {"--hidden", {"16", "128", "320"}},
    {"--lr", {"1e-3", "1e-3", "1e-4"}},
    {"--lstm-lr", {"1e-3", "1e-3", "1e-3"}},
};

static const bench_presets presets = {
    {"quick", "small", "paper"},
    {"seconds: 18 s of audio, tiny models; used by the tests",
     "minutes per model on a 2-core machine: half an hour of audio (the default)",
     "the paper: 80 hours, transformers of 9 layers x 6 heads (RAdam 1e-4, halved on "
     "plateau), Bi-LSTM of 3 layers x 320 (Adam 1e-3): days on a CPU"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

typedef struct speech_options {
    const char *preset, *models, *kernel, *cache, *out;
    double hours, lr, lstm_lr, clip, dropout;
    long epochs, batch, stack, layers, heads, head_dim, ffn, proj_k, lstm_layers, hidden, shards;
    int resume, overwrite;
    bench_common common;
} speech_options;

static const bench_field_flag field_flags[] = {
    {"hours", "--hours"}, {"layers", "--layers"}, {"heads", "--heads"},
    {"head_dim", "--head-dim"}, {"ffn", "--ffn"}, {"hidden", "--hidden"},
    {"proj_k", "--proj-k"}, {"kernel", "--kernel"}, {"stack", "--stack"},
    {"shards", "--shards"}, {"batch", "--batch"}, {NULL, NULL}};

/* ---- the corpus as batches ---- */

/* A split's utterances sorted by length into batches of similar lengths,
 * so little of a batch is padding. */
typedef struct split_batches {
    const lt_speech_split *split;
    int *order;  /* utterance indices by frames */
    int count;   /* batches */
    int size;    /* utterances per batch (the last may hold fewer unless whole) */
} split_batches;

typedef struct corpus_view {
    lt_speech_corpus corpus;
    split_batches train, dev, test;
    int stack, max_positions, max_labels;
    float *features;     /* (batch, max_positions * stack, MELS) */
    int32_t *lengths, *labels, *label_lengths;
    int32_t *decoded, *work;
    double baseline_per; /* always the most frequent training phone */
    int baseline_phone;
} corpus_view;

static int positions(int frames, int stack) { return (frames + stack - 1) / stack; }

static int by_frames(const void *a, const void *b, void *split)
{
    const lt_speech_split *s = split;
    int fa = s->utts[*(const int *)a].frames, fb = s->utts[*(const int *)b].frames;
    return fa != fb ? (fa < fb ? -1 : 1) : (*(const int *)a < *(const int *)b ? -1 : 1);
}

/* With `whole`, only full batches (sharded training splits every batch
 * into equal shards; the longest few utterances are then left out). */
static lt_status make_batches(split_batches *sb, const lt_speech_split *split, int size,
                              int whole)
{
    sb->split = split;
    sb->size = size;
    sb->count = whole ? split->count / size : (split->count + size - 1) / size;
    LT_TRY(lt_mem_alloc((void **)&sb->order, (size_t)split->count * sizeof(int), "batch order"));
    for (int i = 0; i < split->count; i++)
        sb->order[i] = i;
    qsort_r(sb->order, (size_t)split->count, sizeof(int), by_frames, (void *)split);
    return LT_OK;
}

/* Fills the batch buffers with `count` utterances of a split from position
 * `first` of its length order (clipped to the split); labels are phones + 1
 * (class 0 is CTC's blank). */
/* Positions of the longest of `count` utterances from `first`. */
static int longest(const corpus_view *v, const split_batches *sb, int first, int count)
{
    int n_pos = 0;
    for (int b = first; b < first + count && b < sb->split->count; b++) {
        int p = positions(sb->split->utts[sb->order[b]].frames, v->stack);
        n_pos = p > n_pos ? p : n_pos;
    }
    return n_pos;
}

/* `pad_to` positions at least: a rank's share of an update is padded as the
 * whole update's batch is, so its shards are the same whatever the ranks. */
static lt_batch fill_range(corpus_view *v, const split_batches *sb, int first, int count,
                           int pad_to)
{
    int n = sb->split->count - first < count ? sb->split->count - first : count;
    int n_pos = longest(v, sb, first, count), at = 0;
    n_pos = pad_to > n_pos ? pad_to : n_pos;
    const size_t row = (size_t)n_pos * v->stack * LT_SPEECH_MELS;
    memset(v->features, 0, (size_t)n * row * sizeof(float));
    for (int b = 0; b < n; b++) {
        const lt_utterance *u = &sb->split->utts[sb->order[first + b]];
        memcpy(v->features + (size_t)b * row, u->features,
               (size_t)u->frames * LT_SPEECH_MELS * sizeof(float));
        v->lengths[b] = positions(u->frames, v->stack);
        v->label_lengths[b] = u->n_phones;
        for (int i = 0; i < u->n_phones; i++)
            v->labels[at++] = u->phones[i] + 1;
    }
    return (lt_batch){.batch = n, .n = n_pos, .features = v->features, .lengths = v->lengths,
                      .labels = v->labels, .label_lengths = v->label_lengths};
}

/* Every utterance must leave CTC a path: positions >= phones + repeats. */
static lt_status check_alignable(const lt_speech_split *s, const char *name, int stack)
{
    for (int i = 0; i < s->count; i++) {
        const lt_utterance *u = &s->utts[i];
        int need = u->n_phones;
        for (int k = 1; k < u->n_phones; k++)
            need += u->phones[k] == u->phones[k - 1];
        if (positions(u->frames, stack) < need)
            return lt_fail(LT_E_USAGE,
                           "stack: %s utterance %d has %d frames, %d positions at --stack %d, "
                           "fewer than its %d phones need for CTC; use a smaller --stack",
                           name, i, u->frames, positions(u->frames, stack), stack, need);
    }
    return LT_OK;
}

/* PER of always answering the most frequent training phone, as many times
 * as the reference has phones: the floor a useful model must beat. */
static void baseline(corpus_view *v)
{
    long counts[LT_SPEECH_PHONES] = {0}, test[LT_SPEECH_PHONES] = {0};
    lt_speech_phone_histogram(counts, &v->corpus.train);
    lt_speech_phone_histogram(test, &v->corpus.test);
    int best = 0;
    for (int p = 1; p < LT_SPEECH_PHONES; p++)
        best = counts[p] > counts[best] ? p : best;
    v->baseline_phone = best;
    v->baseline_per = 1.0 - (double)test[best] / (double)v->corpus.test.phones;
}

static void notice(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "speech corpus: %s\n", message);
}

static lt_status load_corpus(corpus_view *v, const speech_options *o)
{
    memset(v, 0, sizeof *v);
    lt_speech_config cfg = {.hours = o->hours, .seed = (uint64_t)o->common.seed,
                            .cache_dir = o->cache, .notice = notice};
    LT_TRY(lt_speech_check_config(&cfg));
    lt_progress progress;
    lt_progress_start(&progress, stderr, "speech corpus", (long)(o->hours * 3600), "s of audio",
                      o->common.quiet);
    lt_speech_origin origin;
    LT_TRY(lt_speech_load(&v->corpus, &cfg, &progress, &origin));
    lt_progress_finish(&progress, origin == LT_SPEECH_FROM_CACHE ? "read from the cache"
                                                                  : "synthesised");
    v->stack = (int)o->stack;
    const lt_speech_split *splits[3] = {&v->corpus.train, &v->corpus.dev, &v->corpus.test};
    const char *names[3] = {"train", "dev", "test"};
    for (int s = 0; s < 3; s++) {
        LT_TRY(check_alignable(splits[s], names[s], v->stack));
        for (int i = 0; i < splits[s]->count; i++) {
            int p = positions(splits[s]->utts[i].frames, v->stack);
            v->max_positions = p > v->max_positions ? p : v->max_positions;
            int l = splits[s]->utts[i].n_phones;
            v->max_labels = l > v->max_labels ? l : v->max_labels;
        }
    }
    int sharded = (o->shards > 0 ? o->shards : lt_dist_size()) > 1;
    LT_TRY(make_batches(&v->train, &v->corpus.train, (int)o->batch, sharded));
    if (v->train.count < 1)
        return lt_fail(LT_E_USAGE, "batch: %ld utterances per update, but the training split "
                                   "has %d",
                       o->batch, v->corpus.train.count);
    LT_TRY(make_batches(&v->dev, &v->corpus.dev, (int)o->batch, 0));
    LT_TRY(make_batches(&v->test, &v->corpus.test, (int)o->batch, 0));
    size_t B = (size_t)o->batch;
    LT_TRY(lt_mem_alloc((void **)&v->features,
                        B * v->max_positions * v->stack * LT_SPEECH_MELS * sizeof(float),
                        "batch features"));
    LT_TRY(lt_mem_alloc((void **)&v->lengths, B * sizeof(int32_t), "batch lengths"));
    LT_TRY(lt_mem_alloc((void **)&v->labels, B * v->max_labels * sizeof(int32_t), "labels"));
    LT_TRY(lt_mem_alloc((void **)&v->label_lengths, B * sizeof(int32_t), "label lengths"));
    LT_TRY(lt_mem_alloc((void **)&v->decoded, (size_t)v->max_positions * sizeof(int32_t),
                        "decoded phones"));
    LT_TRY(lt_mem_alloc((void **)&v->work, 2 * ((size_t)v->max_positions + 1) * sizeof(int32_t),
                        "edit distance"));
    baseline(v);
    return LT_OK;
}

static void free_corpus(corpus_view *v)
{
    split_batches *all[3] = {&v->train, &v->dev, &v->test};
    for (int i = 0; i < 3; i++)
        lt_mem_free(all[i]->order);
    void *blocks[] = {v->features, v->lengths, v->labels, v->label_lengths, v->decoded, v->work};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        lt_mem_free(blocks[i]);
    lt_speech_free(&v->corpus);
}

/* ---- models ---- */

static int is_lstm(const char *model) { return strcmp(model, "bilstm") == 0; }

static int shard_count(const speech_options *o)
{
    return o->shards > 0 ? (int)o->shards : lt_dist_size();
}

static lt_status build_config(lt_train_config *tc, const speech_options *o, const corpus_view *v,
                              const char *model, const char *kernel)
{
    memset(tc, 0, sizeof *tc);
    if (o->batch % shard_count(o) != 0)
        return lt_fail(LT_E_USAGE, "--batch %ld cannot be split into %d equal shards "
                                   "(--shards, or one per rank)",
                       o->batch, shard_count(o));
    lt_model_config *m = &tc->model;
    int lstm = is_lstm(model);
    *m = lt_model_default_config(lstm ? "softmax" : model);
    m->input = LT_INPUT_FEATURES;
    m->features = LT_SPEECH_MELS;
    m->stack = v->stack;
    m->classes = CLASSES;
    m->max_batch = (int)o->batch / shard_count(o); /* one shard's utterances */
    m->seq_len = v->max_positions;
    tc->shards = shard_count(o);
    m->dropout = (float)o->dropout;
    if (lstm) {
        m->body = LT_BODY_BILSTM;
        m->pos = LT_POS_NONE;
        m->layers = (int)o->lstm_layers;
        m->hidden = (int)o->hidden;
    } else {
        m->layers = (int)o->layers;
        m->heads = (int)o->heads;
        m->head_dim = (int)o->head_dim;
        m->ffn = (int)o->ffn;
        m->attn.kernel = kernel;
        m->attn.n_max = v->max_positions;
        m->attn.proj_k = (int)(o->proj_k < v->max_positions ? o->proj_k : v->max_positions);
    }
    tc->loss = (lt_loss){.kind = LT_LOSS_CTC, .classes = CLASSES, .max_labels = v->max_labels};
    tc->optim = lt_optim_defaults(lstm ? LT_OPTIM_ADAM : LT_OPTIM_RADAM);
    tc->optim.lr = lstm ? o->lstm_lr : o->lr;
    LT_TRY(lt_schedule_init(&tc->schedule, tc->optim.lr, 0));
    tc->clip_norm = o->clip;
    tc->seed = (uint64_t)o->common.seed;
    tc->threads = lt_threads_get();
    return LT_OK;
}

/* CTC loss per utterance and PER (edit distance / reference phones, greedy
 * best-path decoding) of a split, without dropout: chunks of one shard's
 * size in length order, dealt round the ranks, the counts summed. */
static lt_status evaluate(lt_trainer *t, corpus_view *v, const split_batches *sb, double *loss,
                          double *per)
{
    const int chunk = t->model.config.max_batch;
    double sums[4] = {0, 0, 0, 0}, scratch[4]; /* nats, utterances, edits, phones */
    for (int first = lt_dist_rank() * chunk; first < sb->split->count;
         first += chunk * lt_dist_size()) {
        lt_batch batch = fill_range(v, sb, first, chunk, 0);
        lt_batch_result r;
        LT_TRY(lt_trainer_evaluate(t, &batch, &r));
        sums[0] += r.sum;
        sums[1] += batch.batch;
        int at = 0;
        for (int b = 0; b < batch.batch; b++) {
            const float *logits = t->model.logits + (size_t)b * batch.n * CLASSES;
            int n = lt_ctc_greedy_decode(v->decoded, logits, batch.lengths[b], CLASSES);
            sums[2] += (double)lt_edit_distance(v->labels + at, batch.label_lengths[b],
                                                v->decoded, n, v->work);
            sums[3] += batch.label_lengths[b];
            at += batch.label_lengths[b];
        }
    }
    LT_TRY(lt_dist_sum_f64(sums, scratch, 4));
    *loss = sums[1] > 0 ? sums[0] / sums[1] : NAN;
    *per = sums[3] > 0 ? sums[2] / sums[3] : NAN;
    return LT_OK;
}

/* Greedy decoding of the first test utterance, for the figure. */
static lt_status decode_example(lt_trainer *t, corpus_view *v, int32_t *out, int *len)
{
    const split_batches *sb = &v->test;
    int at = 0;
    while (sb->order[at] != 0)
        at++;
    lt_batch batch = fill_range(v, sb, at, 1, 0);
    lt_batch_result r;
    LT_TRY(lt_trainer_evaluate(t, &batch, &r));
    *len = lt_ctc_greedy_decode(out, t->model.logits, batch.lengths[0], CLASSES);
    return LT_OK;
}

/* ---- tables ---- */

#define KEYS "experiment", "model", "kernel", "preset", "hours", "corpus_seed", "stack", \
             "batch", "threads", "seed"

static const char *const curve_columns[] = {KEYS,        "epoch",   "step",   "elapsed_s",
                                            "epoch_s",   "train_loss", "dev_loss", "dev_per",
                                            "test_per",  "lr"};
static const char *const result_columns[] = {
    KEYS, "status", "layers", "width", "params", "train_utterances", "dev_utterances",
    "test_utterances", "train_hours", "epochs", "best_epoch", "dev_per", "test_per",
    "final_test_per", "baseline_per", "seconds_per_epoch", "train_s", "peak_bytes",
    "planned_bytes", "note"};

static void set_keys(bench_table *t, const speech_options *o, const corpus_view *v,
                     const char *model, const char *kernel)
{
    bench_set_str(t, "experiment", "speech");
    bench_set_str(t, "model", model);
    bench_set_str(t, "kernel", kernel);
    bench_set_str(t, "preset", o->preset);
    bench_set_num(t, "hours", o->hours);
    bench_set_int(t, "corpus_seed", o->common.seed);
    bench_set_int(t, "stack", v->stack);
    bench_set_int(t, "batch", o->batch);
    bench_set_int(t, "threads", lt_threads_get());
    bench_set_int(t, "seed", o->common.seed);
}

/* ---- training ---- */

typedef struct model_run {
    const speech_options *o;
    corpus_view *v;
    const char *model, *kernel;
    lt_trainer *trainer;
    bench_table *curves;
    double loss_sum;       /* this epoch's updates */
    long loss_count;
    double elapsed_offset; /* training seconds of the epochs carried over */
    double last_elapsed, last_eval_s, best_dev;
    double train_seconds;  /* this invocation's epochs, training only */
    double epoch_seconds[4096];
    int epochs_timed;
    int32_t *example;
    int example_len;
} model_run;

static lt_status make_batch(void *ctx, long step, lt_batch *batch)
{
    model_run *r = ctx;
    const split_batches *sb = &r->v->train;
    long epoch = step / sb->count;
    int slot = (int)(step % sb->count);
    /* the epoch's batch order: a shuffle fixed by (seed, epoch) */
    int order[sb->count];
    for (int i = 0; i < sb->count; i++)
        order[i] = i;
    lt_rng rng;
    lt_rng_seed(&rng, (uint64_t)r->o->common.seed, (uint64_t)epoch);
    for (int i = sb->count - 1; i > 0; i--) {
        int k = (int)lt_rng_below(&rng, (uint64_t)i + 1), tmp = order[i];
        order[i] = order[k];
        order[k] = tmp;
    }
    /* this rank's share of the update's utterances */
    int local = sb->size / lt_dist_size(), first = order[slot] * sb->size;
    *batch = fill_range(r->v, sb, first + lt_dist_rank() * local, local,
                        longest(r->v, sb, first, sb->size));
    return LT_OK;
}

/* After each update; at the end of an epoch, the dev and test PER and a
 * curve row. The rate halves when dev PER does not improve (the paper's
 * "halved on plateau"). */
static lt_status after_update(void *ctx, const lt_trainer *trainer, const lt_batch_result *res,
                              double elapsed)
{
    model_run *r = ctx;
    r->loss_sum += res->loss;
    r->loss_count++;
    int nb = r->v->train.count;
    if (trainer->step % nb != 0)
        return LT_OK;
    double epoch_s = elapsed - r->last_elapsed - r->last_eval_s;
    double t0 = lt_time_now();
    double dev_loss, dev_per, test_loss, test_per;
    LT_TRY(evaluate(r->trainer, r->v, &r->v->dev, &dev_loss, &dev_per));
    LT_TRY(evaluate(r->trainer, r->v, &r->v->test, &test_loss, &test_per));
    r->last_eval_s = lt_time_now() - t0;
    r->last_elapsed = elapsed;
    if (r->epochs_timed < 4096)
        r->epoch_seconds[r->epochs_timed++] = epoch_s;
    bench_table *t = r->curves;
    bench_row_begin(t);
    set_keys(t, r->o, r->v, r->model, r->kernel);
    bench_set_int(t, "epoch", trainer->step / nb);
    bench_set_int(t, "step", trainer->step);
    r->train_seconds += epoch_s;
    bench_set_num(t, "elapsed_s", r->elapsed_offset + r->train_seconds);
    bench_set_num(t, "epoch_s", epoch_s);
    bench_set_num(t, "train_loss", r->loss_count ? r->loss_sum / (double)r->loss_count : NAN);
    bench_set_num(t, "dev_loss", dev_loss);
    bench_set_num(t, "dev_per", dev_per);
    bench_set_num(t, "test_per", test_per);
    bench_set_num(t, "lr", res->lr);
    r->loss_sum = 0;
    r->loss_count = 0;
    if (!(dev_per < r->best_dev))
        r->trainer->lr_scale *= 0.5;
    else
        r->best_dev = dev_per;
    return bench_row_end(t);
}

static void progress_note(void *ctx, const lt_batch_result *res, char *buf, size_t size)
{
    model_run *r = ctx;
    snprintf(buf, size, "epoch %ld, loss %.3f", r->trainer->step / r->v->train.count + 1,
             res->loss);
}

typedef struct model_outcome {
    const char *status;
    char note[512];
    size_t peak_bytes, planned_bytes, params;
    double seconds_per_epoch, train_s;
    long epochs;
} model_outcome;

static void checkpoint_name(char *buf, size_t size, const char *model)
{
    snprintf(buf, size, "checkpoints/speech-%s.ckpt", model);
}

static lt_status train_model(model_run *r, const bench_run *run, const lt_csv_table *prev,
                             const char *prev_path, double *step_seconds, model_outcome *out)
{
    const speech_options *o = r->o;
    lt_train_config tc;
    LT_TRY(build_config(&tc, o, r->v, r->model, r->kernel));
    LT_TRY(lt_trainer_plan(&tc, lt_threads_get(), &out->planned_bytes));
    char name[128], ckpt[4400];
    checkpoint_name(name, sizeof name, r->model);
    bench_run_path(run, name, ckpt, sizeof ckpt);
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_trainer t;
    lt_status status = lt_trainer_init(&t, &tc, lt_threads_get());
    if (status != LT_OK)
        return status;
    r->trainer = &t;
    out->params = t.model.param_count;
    r->best_dev = INFINITY;
    const long nb = r->v->train.count;
    long carried = 0;
    status = bench_resume(&t, run, ckpt, r->curves, prev, prev_path, "model", r->model, nb,
                          &carried);
    for (long i = 0; status == LT_OK && carried > 0 && i < r->curves->rows; i++)
        if (strcmp(bench_cell(r->curves, i, "model"), r->model) == 0) {
            double dev = bench_cell_num(r->curves, i, "dev_per");
            r->best_dev = dev < r->best_dev ? dev : r->best_dev;
            r->elapsed_offset = bench_cell_num(r->curves, i, "elapsed_s");
        }
    if (status == LT_OK)
        status = lt_dist_broadcast(&r->best_dev, sizeof r->best_dev);
    char label[64];
    snprintf(label, sizeof label, "speech %s", r->model);
    bench_train_spec spec = {.label = label, .steps = o->epochs * nb, .checkpoint_every = nb,
                             .checkpoint = ckpt, .quiet = o->common.quiet,
                             .make_batch = make_batch, .add_row = after_update,
                             .note = progress_note, .ctx = r, .curves = r->curves};
    bench_train_result tr;
    if (status == LT_OK)
        status = bench_train(&t, &spec, NAN, step_seconds, &tr);
    if (status == LT_OK && lt_dist_is_root())
        status = decode_example(&t, r->v, r->example, &r->example_len);
    if (status == LT_OK) {
        out->status = tr.status;
        snprintf(out->note, sizeof out->note, "%s", tr.note);
        out->epochs = t.step / nb;
        out->seconds_per_epoch = lt_summarize(r->epoch_seconds, r->epochs_timed).median;
        out->train_s = tr.seconds;
    }
    out->peak_bytes = lt_mem_peak() - base;
    lt_trainer_free(&t);
    r->trainer = NULL;
    return status;
}

static void add_result(bench_table *t, const model_run *r, const model_outcome *out,
                       const corpus_view *v)
{
    const speech_options *o = r->o;
    /* model selection: the epoch with the best dev PER */
    long best_row = -1, last_row = -1;
    for (long i = 0; i < r->curves->rows; i++) {
        if (strcmp(bench_cell(r->curves, i, "model"), r->model) != 0)
            continue;
        last_row = i;
        if (best_row < 0 ||
            bench_cell_num(r->curves, i, "dev_per") < bench_cell_num(r->curves, best_row, "dev_per"))
            best_row = i;
    }
    bench_row_begin(t);
    set_keys(t, o, v, r->model, r->kernel);
    bench_set_str(t, "status", out->status);
    int lstm = is_lstm(r->model);
    bench_set_int(t, "layers", lstm ? o->lstm_layers : o->layers);
    bench_set_int(t, "width", lstm ? 2 * o->hidden : o->heads * o->head_dim);
    bench_set_int(t, "params", (long long)out->params);
    bench_set_int(t, "train_utterances", v->corpus.train.count);
    bench_set_int(t, "dev_utterances", v->corpus.dev.count);
    bench_set_int(t, "test_utterances", v->corpus.test.count);
    bench_set_num(t, "train_hours", v->corpus.train.seconds / 3600.0);
    bench_set_int(t, "epochs", out->epochs);
    bench_set_num(t, "best_epoch", best_row >= 0 ? bench_cell_num(r->curves, best_row, "epoch") : NAN);
    bench_set_num(t, "dev_per", best_row >= 0 ? bench_cell_num(r->curves, best_row, "dev_per") : NAN);
    bench_set_num(t, "test_per", best_row >= 0 ? bench_cell_num(r->curves, best_row, "test_per") : NAN);
    bench_set_num(t, "final_test_per",
                  last_row >= 0 ? bench_cell_num(r->curves, last_row, "test_per") : NAN);
    bench_set_num(t, "baseline_per", v->baseline_per);
    bench_set_num(t, "seconds_per_epoch", out->seconds_per_epoch);
    bench_set_num(t, "train_s", out->train_s);
    bench_set_int(t, "peak_bytes", (long long)out->peak_bytes);
    bench_set_int(t, "planned_bytes", (long long)out->planned_bytes);
    bench_set_str(t, "note", out->note);
    bench_row_end(t);
}

/* The first test utterance's filterbank features (mel bins upward, time to
 * the right) with its reference and decoded phones, drawn by gnuplot when it
 * is there; without it, the features alone as a plain PNG and the phones in
 * a text file beside it. */
static lt_status utterance_figure(const bench_run *run, const corpus_view *v, const char *model,
                                  const int32_t *decoded, int n_decoded)
{
    const lt_utterance *u = &v->corpus.test.utts[0];
    char ref[4096] = "", hyp[4096] = "", name[128], path[4400], dat[4500], gp[4500];
    for (int i = 0; i < u->n_phones; i++)
        snprintf(ref + strlen(ref), sizeof ref - strlen(ref), "%s%s", i ? " " : "",
                 lt_speech_phone_name(u->phones[i]));
    for (int i = 0; i < n_decoded; i++)
        snprintf(hyp + strlen(hyp), sizeof hyp - strlen(hyp), "%s%s", i ? " " : "",
                 lt_speech_phone_name(decoded[i] - 1));
    snprintf(name, sizeof name, "speech-%s-utterance", model);
    bench_run_path(run, name, path, sizeof path);
    snprintf(dat, sizeof dat, "%s.dat", path);
    snprintf(gp, sizeof gp, "%s.gp", path);
    lt_atomic_file f;
    LT_TRY(lt_atomic_open(&f, dat));
    for (int m = 0; m < LT_SPEECH_MELS; m++) {
        for (int t = 0; t < u->frames; t++)
            fprintf(f.f, "%s%.4g", t ? " " : "", (double)u->features[(size_t)t * LT_SPEECH_MELS + m]);
        fputc('\n', f.f);
    }
    LT_TRY(lt_atomic_commit(&f));
    LT_TRY(lt_atomic_open(&f, gp));
    fprintf(f.f,
            "# ltbench speech: test utterance 0, %d frames of %d log-mel energies\n"
            "set terminal pngcairo size 1200,420 font ',10'\n"
            "set output '%s.png'\n"
            "set title \"\\\"%s\\\"\\nreference: %s\\n%s: %s\" noenhanced\n"
            "set xlabel 'frame (10 ms)'\nset ylabel 'mel bin'\nunset key\n"
            "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n"
            "plot '%s' matrix with image\n",
            u->frames, LT_SPEECH_MELS, name, u->text, ref, model, hyp, u->frames - 1,
            LT_SPEECH_MELS - 1, strrchr(dat, '/') ? strrchr(dat, '/') + 1 : dat);
    LT_TRY(lt_atomic_commit(&f));
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && command -v gnuplot >/dev/null 2>&1 && gnuplot '%s.gp'",
             run->dir, name);
    if (system(cmd) == 0)
        return LT_OK;
    /* no gnuplot: the features as gray levels, the phones as text */
    uint8_t *img;
    LT_TRY(lt_mem_alloc((void **)&img, (size_t)u->frames * LT_SPEECH_MELS, "utterance image"));
    for (int m = 0; m < LT_SPEECH_MELS; m++)
        for (int t = 0; t < u->frames; t++) {
            double x = u->features[(size_t)t * LT_SPEECH_MELS + m];
            double g = 128 + 40 * x;
            img[(size_t)(LT_SPEECH_MELS - 1 - m) * u->frames + t] =
                (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
        }
    char png[4500];
    snprintf(png, sizeof png, "%s.png", path);
    lt_status status = lt_png_write(png, img, u->frames, LT_SPEECH_MELS, 1);
    lt_mem_free(img);
    LT_TRY(status);
    snprintf(dat, sizeof dat, "%s.txt", path);
    LT_TRY(lt_atomic_open(&f, dat));
    fprintf(f.f, "text: %s\nreference: %s\n%s: %s\n", u->text, ref, model, hyp);
    fprintf(stderr, "note: gnuplot is not installed (Debian: gnuplot-nox); %s.png has no "
                    "labels, the phones are in %s\n", name, dat);
    return lt_atomic_commit(&f);
}

static const bench_print_col result_print[] = {
    {"model", "model", NULL, 0, 9},
    {"layers", "layers", NULL, 0, 6},
    {"params", "params", NULL, 0, 8},
    {"epochs", "epochs", NULL, 0, 6},
    {"dev PER%", "dev_per", "%.2f", 100, 8},
    {"test PER%", "test_per", "%.2f", 100, 9},
    {"s/epoch", "seconds_per_epoch", "%.2f", 0, 8},
    {"peak MiB", "peak_bytes", "%.1f", 1.0 / 1048576.0, 8},
};

int main(int argc, char **argv)
{
    speech_options o = {.preset = "small", .models = "softmax,linear,linformer,bilstm",
                        .kernel = "default", .cache = "results/speech/cache",
                        .out = "results/speech", .stack = 3, .proj_k = 64, .clip = 1.0};
    bench_common_defaults(&o.common);
    enum { OWN_FLAGS = 23 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--preset", LT_FLAG_CHOICE, &o.preset, NULL,
         "size of the run (see Presets below); the defaults shown are the small preset's", 0, 0,
         "quick|small|paper", 0},
        {"--models", LT_FLAG_STRING, &o.models, "LIST",
         "comma-separated: softmax, linear, linformer (transformer encoders) and bilstm", 0, 0,
         NULL, 0},
        {"--kernel", LT_FLAG_STRING, &o.kernel, "NAME",
         "attention kernel for the transformer that has it; the others keep their defaults", 0,
         0, NULL, 0},
        {"--hours", LT_FLAG_DOUBLE, &o.hours, "H", "audio in the corpus (train 90%, dev 5%, test 5%)",
         0, 0, NULL, 0},
        {"--cache", LT_FLAG_STRING, &o.cache, "DIR",
         "folder of the corpus cache (a second run reads it instead of synthesising)", 0, 0,
         NULL, 0},
        {"--stack", LT_FLAG_INT, &o.stack, "K", "frames stacked per position (30 ms at 3)", 1, 16,
         NULL, 0},
        {"--epochs", LT_FLAG_INT, &o.epochs, "E", "passes over the training split", 1, 100000,
         NULL, 0},
        {"--batch", LT_FLAG_INT, &o.batch, "B", "utterances per update (of similar lengths)", 1,
         4096, NULL, 0},
        {"--layers", LT_FLAG_INT, &o.layers, "L", "transformer layers", 1, 1024, NULL, 0},
        {"--heads", LT_FLAG_INT, &o.heads, "H", "attention heads", 1, 1024, NULL, 0},
        {"--head-dim", LT_FLAG_INT, &o.head_dim, "D", "dimension per head (width = H x D)", 1,
         4096, NULL, 0},
        {"--ffn", LT_FLAG_INT, &o.ffn, "F", "feed-forward hidden width", 1, 1 << 20, NULL, 0},
        {"--proj-k", LT_FLAG_INT, &o.proj_k, "K",
         "Linformer's projected length (at most the longest utterance's positions)", 1, 1 << 20,
         NULL, 0},
        {"--dropout", LT_FLAG_DOUBLE, &o.dropout, "P", "dropout (transformers)", 0, 0.99, NULL, 0},
        {"--lstm-layers", LT_FLAG_INT, &o.lstm_layers, "L", "Bi-LSTM layers", 1, 64, NULL, 0},
        {"--hidden", LT_FLAG_INT, &o.hidden, "H", "Bi-LSTM units per direction", 1, 8192, NULL, 0},
        {"--lr", LT_FLAG_DOUBLE, &o.lr, "LR", "transformers' RAdam learning rate", 1e-9, 10, NULL,
         0},
        {"--lstm-lr", LT_FLAG_DOUBLE, &o.lstm_lr, "LR", "Bi-LSTM's Adam learning rate", 1e-9, 10,
         NULL, 0},
        {"--clip", LT_FLAG_DOUBLE, &o.clip, "NORM", "global gradient-norm clipping; 0 = off", 0,
         1e9, NULL, 0},
        {"--shards", LT_FLAG_INT, &o.shards, "S",
         "split each update's batch into S shards summed in a fixed tree (a power of two; "
         "0 = one per MPI rank; above 1, training uses whole batches only)", 0, 1024, NULL, 0},
        {"--resume", LT_FLAG_BOOL, &o.resume, NULL,
         "continue each model from OUT/checkpoints where one exists", 0, 0, NULL, 0},
        {"--overwrite", LT_FLAG_BOOL, &o.overwrite, NULL,
         "start over in an OUT that holds checkpoints of an earlier run", 0, 0, NULL, 0},
        {"--out", LT_FLAG_STRING, &o.out, "DIR",
         "folder for speech.csv, speech-curves.csv, the utterance figures and checkpoints/", 0, 0,
         NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &o.common);
    char preset_help[3072], details[6144];
    bench_presets_help(&presets, preset_help, sizeof preset_help);
    snprintf(details, sizeof details,
             "%s\n"
             "The corpus (WSJ is licensed, so ltbench makes its own): English sentences from\n"
             "WordNet's examples, spoken by espeak-ng with varied voices, rates and pitch\n"
             "(test speakers and sentences never seen in training; a dev split for model\n"
             "selection), labelled with the phonemes espeak-ng reports folded to 39 phones, as\n"
             "40 log-mel filterbank energies per 25 ms window every 10 ms, normalised per\n"
             "utterance. It is built from --seed and cached in --cache.\n"
             "Models: non-causal pre-norm transformer encoders (softmax, linear, linformer) and\n"
             "a Bi-LSTM, on --stack frames per position, with CTC over 39 phones + blank.\n"
             "After every epoch: dev and test PER (greedy best path; edit distance / reference\n"
             "phones); the rate halves when dev PER does not improve. Reported: test PER at the\n"
             "epoch of the best dev PER, seconds per epoch (training only, median), peak bytes,\n"
             "and the PER of always answering the most frequent training phone (baseline).\n"
             "Writes OUT/speech.csv, OUT/speech-curves.csv (per epoch) and\n"
             "OUT/speech-MODEL-utterance.png.",
             preset_help);
    lt_cli cli = {"ltbench speech",
                  "WSJ-style phoneme recognition with CTC (the paper's sec. 4.3, Table 3): "
                  "phoneme error\nrate and time per epoch per model.",
                  details, flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    int exit_now;
    int code = bench_parse_presets(&cli, &presets, &o.preset, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    lt_status status = LT_OK;

    char text[256];
    const char *models[MAX_MODELS], *kernels[MAX_MODELS];
    int model_count = 0;
    snprintf(text, sizeof text, "%s", o.models);
    if (status == LT_OK)
        status = lt_cli_split_list(text, models, MAX_MODELS, &model_count, "--models");
    const char *variants[MAX_MODELS];
    int variant_count = 0;
    for (int i = 0; status == LT_OK && i < model_count; i++) {
        int known = 0;
        for (int k = 0; k < MAX_MODELS; k++)
            known |= strcmp(models[i], model_names[k]) == 0;
        for (int j = 0; j < i; j++)
            if (strcmp(models[i], models[j]) == 0)
                status = lt_fail(LT_E_USAGE, "--models: '%s' is listed twice", models[i]);
        if (!known)
            status = lt_fail(LT_E_USAGE, "--models: expected items from softmax, linear, "
                                         "linformer, bilstm; got '%s'", models[i]);
        if (!is_lstm(models[i]))
            variants[variant_count++] = models[i];
    }
    for (int i = 0; status == LT_OK && i < model_count; i++) {
        kernels[i] = NULL;
        if (!is_lstm(models[i]))
            status = bench_kernel_for(o.kernel, variants, variant_count, 0, models[i],
                                      &kernels[i]);
    }
    /* Outputs checked before the corpus is built (minutes at large sizes). */
    bench_run run;
    const char *files[] = {"speech.csv", "speech-curves.csv"};
    char ckpt_names[MAX_MODELS][128];
    const char *ckpts[MAX_MODELS];
    for (int i = 0; i < model_count; i++) {
        checkpoint_name(ckpt_names[i], sizeof ckpt_names[i], models[i]);
        ckpts[i] = ckpt_names[i];
    }
    if (status == LT_OK) {
        lt_speech_config probe = {.hours = o.hours};
        status = lt_speech_check_config(&probe);
    }
    if (status == LT_OK)
        status = bench_run_open(&run, o.out, o.resume, o.overwrite, files, 2, ckpts, model_count);
    corpus_view v;
    memset(&v, 0, sizeof v);
    /* rank 0 builds the corpus (and its cache) first; the others then read
     * the cache where they share the folder, or build the same bytes */
    if (status == LT_OK && lt_dist_is_root())
        status = load_corpus(&v, &o);
    status = lt_dist_agree(status);
    if (status == LT_OK && !lt_dist_is_root())
        status = load_corpus(&v, &o);
    for (int i = 0; status == LT_OK && i < model_count; i++) {
        lt_train_config tc;
        size_t bytes;
        status = build_config(&tc, &o, &v, models[i], kernels[i]);
        if (status == LT_OK)
            status = lt_trainer_plan(&tc, lt_threads_get(), &bytes);
        if (status == LT_OK)
            status = lt_mem_plan(bytes, "training");
    }
    char csv_path[4400], curves_path[4400], prev_path[4400];
    bench_run_path(&run, "speech.csv", csv_path, sizeof csv_path);
    lt_csv_table prev;
    int have_prev = 0;
    bench_table curves, results;
    bench_table_init(&results, result_columns, sizeof result_columns / sizeof *result_columns);
    if (status == LT_OK)
        status = bench_open_curves(&curves, curve_columns,
                                   sizeof curve_columns / sizeof *curve_columns, &run,
                                   "speech-curves.csv", curves_path, sizeof curves_path, &prev,
                                   &have_prev, prev_path, sizeof prev_path);
    status = lt_dist_agree(status);
    if (status != LT_OK) {
        free_corpus(&v);
        return bench_report(cli.program, status, field_flags);
    }
    printf("ltbench speech: %.3g hours (%d train, %d dev, %d test utterances; %.1f s average), "
           "%d phones + blank, stack %d, %ld epochs, batch %ld, %d threads, seed %ld\n",
           o.hours, v.corpus.train.count, v.corpus.dev.count, v.corpus.test.count,
           v.corpus.train.seconds / (v.corpus.train.count ? v.corpus.train.count : 1),
           LT_SPEECH_PHONES, v.stack, o.epochs, o.batch, lt_threads_get(), o.common.seed);
    printf("baseline: always '%s' (the most frequent training phone) gives a test PER of %.1f%%\n",
           lt_speech_phone_name(v.baseline_phone), 100 * v.baseline_per);
    fflush(stdout);
    bench_signals_install();
    double *step_seconds = NULL;
    status = lt_mem_alloc((void **)&step_seconds,
                          (size_t)(o.epochs * v.train.count) * sizeof *step_seconds, "timings");
    int32_t *example = NULL;
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&example, (size_t)v.max_positions * sizeof(int32_t),
                              "example decoding");
    int diverged = 0;
    for (int i = 0; i < model_count && status == LT_OK && !bench_interrupted(); i++) {
        const char *kernel = "none";
        if (!is_lstm(models[i])) {
            lt_train_config tc;
            lt_attn attn;
            status = build_config(&tc, &o, &v, models[i], kernels[i]);
            if (status == LT_OK)
                status = lt_attn_init(&attn, &tc.model.attn);
            if (status != LT_OK)
                break;
            kernel = attn.config.kernel;
        }
        static model_run r;
        memset(&r, 0, sizeof r);
        r.o = &o;
        r.v = &v;
        r.model = models[i];
        r.kernel = kernel;
        r.curves = &curves;
        r.example = example;
        model_outcome out;
        memset(&out, 0, sizeof out);
        status = train_model(&r, &run, have_prev ? &prev : NULL, prev_path, step_seconds, &out);
        if (status != LT_OK)
            break;
        add_result(&results, &r, &out, &v);
        diverged |= strcmp(out.status, "diverged") == 0;
        if (lt_dist_is_root() && r.example_len > 0)
            status = utterance_figure(&run, &v, models[i], example, r.example_len);
    }
    lt_mem_free(step_seconds);
    lt_mem_free(example);
    if (status != LT_OK) {
        bench_table_detach(&curves);
        free_corpus(&v);
        return bench_report(cli.program, status, field_flags);
    }
    printf("\n");
    bench_table_print(&results, result_print, sizeof result_print / sizeof *result_print, 1,
                      stdout);
    printf("(PER: phoneme error rate of greedy CTC decoding on %d test utterances, at the epoch "
           "of\n the best dev PER; s/epoch: training time per epoch, median; the paper's WSJ "
           "Table 3:\n Bi-LSTM 10.94%%, softmax 5.12%%, linear 8.08%%; baseline here %.1f%%)\n",
           v.corpus.test.count, 100 * v.baseline_per);
    free_corpus(&v);
    status = bench_table_commit(&curves, curves_path);
    if (status == LT_OK)
        status = bench_table_commit(&results, csv_path);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);
    printf("\nwrote %s and %s\n", csv_path, curves_path);
    if (have_prev)
        lt_csv_table_free(&prev);
    bench_table_free(&curves);
    bench_table_free(&results);
    if (bench_interrupted())
        return bench_interrupt_exit_code();
    return diverged ? 1 : 0;
}
