#include "train/source.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"

/* Evaluation sequences of the copy task draw from streams far above any
 * update's (an update draws steps * batch of them). */
#define COPY_EVAL_STREAM_BASE (1ull << 40)

int lt_source_local_batch(const lt_batch_source *s) { return s->batch / s->ranks; }

lt_status lt_source_train(lt_batch_source *s, long step, lt_batch *out)
{
    return s->ops->train(s, step, out);
}

long lt_source_eval_count(const lt_batch_source *s, lt_split split)
{
    return s->ops->eval_count(s, split);
}

lt_status lt_source_eval(lt_batch_source *s, lt_split split, long first, int count,
                         lt_batch *out)
{
    long total = lt_source_eval_count(s, split);
    if (first < 0 || first >= total || count < 1)
        return lt_fail(LT_E_INTERNAL, "evaluation sequences %ld..%ld of %ld", first,
                       first + count, total);
    if (count > total - first)
        count = (int)(total - first);
    return s->ops->eval(s, split, first, count, out);
}

void lt_source_free(lt_batch_source *s)
{
    if (s->ops != NULL)
        s->ops->free(s);
    memset(s, 0, sizeof *s);
}

static lt_status check_split(int batch, int ranks)
{
    if (batch < 1 || ranks < 1 || batch % ranks != 0)
        return lt_fail(LT_E_USAGE, "batch: %d sequences per update cannot be split over %d "
                                   "ranks",
                       batch, ranks);
    return LT_OK;
}

static void init_common(lt_batch_source *s, const lt_source_ops *ops, uint64_t seed, int batch,
                        int rank, int ranks, int seq_len)
{
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->seed = seed;
    s->batch = batch;
    s->rank = rank;
    s->ranks = ranks;
    s->seq_len = seq_len;
}

/* Allocates a buffer and counts it in s->bytes. */
static lt_status take(lt_batch_source *s, void **out, size_t bytes, const char *what)
{
    LT_TRY(lt_mem_alloc(out, bytes, what));
    s->bytes += lt_mem_rounded(bytes);
    return LT_OK;
}

/* ---- copy ---- */

typedef struct copy_impl {
    lt_copy_task task;
    long eval_sequences;
    int32_t *inputs, *targets;
    float *mask;
} copy_impl;

static lt_batch copy_fill(lt_batch_source *s, uint64_t first_stream, int count)
{
    copy_impl *c = s->impl;
    lt_copy_batch(&c->task, s->seed, first_stream, count, c->inputs, c->targets, c->mask);
    return (lt_batch){.batch = count, .n = s->seq_len, .tokens = c->inputs,
                      .targets = c->targets, .mask = c->mask};
}

static lt_status copy_train(lt_batch_source *s, long step, lt_batch *out)
{
    /* sequence i of the update draws from stream step * B + i */
    int local = lt_source_local_batch(s);
    *out = copy_fill(s, (uint64_t)step * (uint64_t)s->batch + (uint64_t)(s->rank * local),
                     local);
    return LT_OK;
}

static long copy_eval_count(const lt_batch_source *s, lt_split split)
{
    const copy_impl *c = s->impl;
    return split == LT_SPLIT_TEST ? c->eval_sequences : 0;
}

static lt_status copy_eval(lt_batch_source *s, lt_split split, long first, int count,
                           lt_batch *out)
{
    (void)split;
    *out = copy_fill(s, COPY_EVAL_STREAM_BASE + (uint64_t)first, count);
    return LT_OK;
}

static void copy_free(lt_batch_source *s)
{
    copy_impl *c = s->impl;
    if (c == NULL)
        return;
    lt_mem_free(c->inputs);
    lt_mem_free(c->targets);
    lt_mem_free(c->mask);
    free(c);
}

static const lt_source_ops copy_ops = {copy_train, copy_eval_count, copy_eval, copy_free};

lt_status lt_copy_source_init(lt_batch_source *s, const lt_copy_task *task, uint64_t seed,
                              int batch, int rank, int ranks, long eval_sequences)
{
    LT_TRY(check_split(batch, ranks));
    init_common(s, &copy_ops, seed, batch, rank, ranks, task->seq_len);
    copy_impl *c = calloc(1, sizeof *c);
    LT_ASSERT(c != NULL);
    s->impl = c;
    c->task = *task;
    c->eval_sequences = eval_sequences;
    size_t tokens = (size_t)lt_source_local_batch(s) * (size_t)task->seq_len;
    lt_status status = take(s, (void **)&c->inputs, tokens * sizeof(int32_t), "inputs");
    if (status == LT_OK)
        status = take(s, (void **)&c->targets, tokens * sizeof(int32_t), "targets");
    if (status == LT_OK)
        status = take(s, (void **)&c->mask, tokens * sizeof(float), "loss mask");
    if (status != LT_OK)
        lt_source_free(s);
    return status;
}

/* ---- images ---- */

typedef struct image_impl {
    const lt_image_set *train, *test;
    int32_t *inputs, *targets;
} image_impl;

void lt_image_sequence(int32_t *inputs, int32_t *targets, const uint8_t *pixels, int N)
{
    inputs[0] = LT_IMAGE_START_TOKEN;
    for (int i = 0; i < N; i++) {
        if (i + 1 < N)
            inputs[i + 1] = pixels[i];
        targets[i] = pixels[i];
    }
}

static lt_status image_train(lt_batch_source *s, long step, lt_batch *out)
{
    image_impl *im = s->impl;
    /* image i of the update draws from stream step * B + i, whichever rank
     * holds it */
    const int local = lt_source_local_batch(s), N = s->seq_len;
    const uint64_t first = (uint64_t)step * (uint64_t)s->batch + (uint64_t)(s->rank * local);
    for (int b = 0; b < local; b++) {
        lt_rng rng;
        lt_rng_seed(&rng, s->seed, first + (uint64_t)b);
        uint64_t image = lt_rng_below(&rng, (uint64_t)im->train->count);
        lt_image_sequence(im->inputs + (size_t)b * N, im->targets + (size_t)b * N,
                          im->train->pixels + image * (size_t)N, N);
    }
    *out = (lt_batch){.batch = local, .n = N, .tokens = im->inputs, .targets = im->targets};
    return LT_OK;
}

static long image_eval_count(const lt_batch_source *s, lt_split split)
{
    const image_impl *im = s->impl;
    return split == LT_SPLIT_TEST ? im->test->count : 0;
}

static lt_status image_eval(lt_batch_source *s, lt_split split, long first, int count,
                            lt_batch *out)
{
    (void)split;
    image_impl *im = s->impl;
    const int N = s->seq_len;
    for (int b = 0; b < count; b++)
        lt_image_sequence(im->inputs + (size_t)b * N, im->targets + (size_t)b * N,
                          im->test->pixels + (size_t)(first + b) * N, N);
    *out = (lt_batch){.batch = count, .n = N, .tokens = im->inputs, .targets = im->targets};
    return LT_OK;
}

static void image_free(lt_batch_source *s)
{
    image_impl *im = s->impl;
    if (im == NULL)
        return;
    lt_mem_free(im->inputs);
    lt_mem_free(im->targets);
    free(im);
}

static const lt_source_ops image_ops = {image_train, image_eval_count, image_eval, image_free};

lt_status lt_image_source_init(lt_batch_source *s, const lt_image_set *train,
                               const lt_image_set *test, uint64_t seed, int batch, int rank,
                               int ranks)
{
    LT_TRY(check_split(batch, ranks));
    init_common(s, &image_ops, seed, batch, rank, ranks, (int)lt_images_seq_len(train));
    image_impl *im = calloc(1, sizeof *im);
    LT_ASSERT(im != NULL);
    s->impl = im;
    im->train = train;
    im->test = test;
    size_t bytes = (size_t)lt_source_local_batch(s) * (size_t)s->seq_len * sizeof(int32_t);
    lt_status status = take(s, (void **)&im->inputs, bytes, "inputs");
    if (status == LT_OK)
        status = take(s, (void **)&im->targets, bytes, "targets");
    if (status != LT_OK)
        lt_source_free(s);
    return status;
}

/* ---- speech ---- */

/* A split's utterances by length, so the batches cut from it hold
 * utterances of similar lengths and little padding. */
typedef struct split_order {
    const lt_speech_split *split;
    int *order; /* (split->count) utterance indices by frames */
} split_order;

typedef struct speech_impl {
    int stack, max_positions, max_labels;
    split_order train, dev, test;
    int train_batches;
    int *epoch_order; /* (train_batches) */
    float *features;  /* (batch, max_positions * stack, MELS) */
    int32_t *lengths, *labels, *label_lengths;
} speech_impl;

static int by_frames(const void *a, const void *b, void *split)
{
    const lt_speech_split *s = split;
    int fa = s->utts[*(const int *)a].frames, fb = s->utts[*(const int *)b].frames;
    return fa != fb ? (fa < fb ? -1 : 1) : (*(const int *)a < *(const int *)b ? -1 : 1);
}

static lt_status order_split(lt_batch_source *s, split_order *o, const lt_speech_split *split)
{
    o->split = split;
    LT_TRY(take(s, (void **)&o->order, (size_t)(split->count > 0 ? split->count : 1) * sizeof(int),
                "batch order"));
    for (int i = 0; i < split->count; i++)
        o->order[i] = i;
    qsort_r(o->order, (size_t)split->count, sizeof(int), by_frames, (void *)split);
    return LT_OK;
}

/* Positions of the longest of `count` utterances from place `first`. */
static int longest(const speech_impl *sp, const split_order *o, int first, int count)
{
    int n_pos = 0;
    for (int b = first; b < first + count && b < o->split->count; b++) {
        int p = lt_speech_positions(o->split->utts[o->order[b]].frames, sp->stack);
        n_pos = p > n_pos ? p : n_pos;
    }
    return n_pos;
}

/* `count` utterances from place `first` of a split's length order, padded
 * to `pad_to` positions at least. */
static lt_batch speech_fill(speech_impl *sp, const split_order *o, int first, int count,
                            int pad_to)
{
    int n = o->split->count - first < count ? o->split->count - first : count;
    int n_pos = longest(sp, o, first, count), at = 0;
    n_pos = pad_to > n_pos ? pad_to : n_pos;
    const size_t row = (size_t)n_pos * sp->stack * LT_SPEECH_MELS;
    memset(sp->features, 0, (size_t)n * row * sizeof(float));
    for (int b = 0; b < n; b++) {
        const lt_utterance *u = &o->split->utts[o->order[first + b]];
        memcpy(sp->features + (size_t)b * row, u->features,
               (size_t)u->frames * LT_SPEECH_MELS * sizeof(float));
        sp->lengths[b] = lt_speech_positions(u->frames, sp->stack);
        sp->label_lengths[b] = u->n_phones;
        for (int i = 0; i < u->n_phones; i++)
            sp->labels[at++] = u->phones[i] + 1;
    }
    return (lt_batch){.batch = n, .n = n_pos, .features = sp->features, .lengths = sp->lengths,
                      .labels = sp->labels, .label_lengths = sp->label_lengths};
}

static lt_status speech_train(lt_batch_source *s, long step, lt_batch *out)
{
    speech_impl *sp = s->impl;
    const int nb = sp->train_batches;
    long epoch = step / nb;
    int slot = (int)(step % nb);
    /* the epoch's batch order: a shuffle fixed by (seed, epoch) */
    int *order = sp->epoch_order;
    for (int i = 0; i < nb; i++)
        order[i] = i;
    lt_rng rng;
    lt_rng_seed(&rng, s->seed, (uint64_t)epoch);
    for (int i = nb - 1; i > 0; i--) {
        int k = (int)lt_rng_below(&rng, (uint64_t)i + 1), tmp = order[i];
        order[i] = order[k];
        order[k] = tmp;
    }
    /* this rank's share of the update, padded as the whole update is */
    int local = lt_source_local_batch(s), first = order[slot] * s->batch;
    *out = speech_fill(sp, &sp->train, first + s->rank * local, local,
                       longest(sp, &sp->train, first, s->batch));
    return LT_OK;
}

static const split_order *eval_order(const speech_impl *sp, lt_split split)
{
    return split == LT_SPLIT_DEV ? &sp->dev : &sp->test;
}

static long speech_eval_count(const lt_batch_source *s, lt_split split)
{
    return eval_order(s->impl, split)->split->count;
}

static lt_status speech_eval(lt_batch_source *s, lt_split split, long first, int count,
                             lt_batch *out)
{
    speech_impl *sp = s->impl;
    *out = speech_fill(sp, eval_order(sp, split), (int)first, count, 0);
    return LT_OK;
}

static void speech_free(lt_batch_source *s)
{
    speech_impl *sp = s->impl;
    if (sp == NULL)
        return;
    void *blocks[] = {sp->train.order, sp->dev.order, sp->test.order, sp->epoch_order,
                      sp->features, sp->lengths, sp->labels, sp->label_lengths};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        lt_mem_free(blocks[i]);
    free(sp);
}

static const lt_source_ops speech_ops = {speech_train, speech_eval_count, speech_eval,
                                         speech_free};

/* Every utterance must leave CTC a path: positions >= phones + repeats. */
static lt_status check_alignable(const lt_speech_split *s, const char *name, int stack)
{
    for (int i = 0; i < s->count; i++) {
        const lt_utterance *u = &s->utts[i];
        int need = u->n_phones;
        for (int k = 1; k < u->n_phones; k++)
            need += u->phones[k] == u->phones[k - 1];
        if (lt_speech_positions(u->frames, stack) < need)
            return lt_fail(LT_E_USAGE,
                           "stack: %s utterance %d has %d frames, %d positions at stack %d, "
                           "fewer than its %d phones need for CTC; use a smaller stack",
                           name, i, u->frames, lt_speech_positions(u->frames, stack), stack, need);
    }
    return LT_OK;
}

static lt_status speech_buffers(lt_batch_source *s, const lt_speech_corpus *c, int whole)
{
    speech_impl *sp = s->impl;
    const lt_speech_split *splits[3] = {&c->train, &c->dev, &c->test};
    const char *names[3] = {"train", "dev", "test"};
    for (int i = 0; i < 3; i++) {
        LT_TRY(check_alignable(splits[i], names[i], sp->stack));
        for (int u = 0; u < splits[i]->count; u++) {
            int p = lt_speech_positions(splits[i]->utts[u].frames, sp->stack);
            sp->max_positions = p > sp->max_positions ? p : sp->max_positions;
            int l = splits[i]->utts[u].n_phones;
            sp->max_labels = l > sp->max_labels ? l : sp->max_labels;
        }
    }
    s->seq_len = sp->max_positions;
    sp->train_batches = whole ? c->train.count / s->batch
                              : (c->train.count + s->batch - 1) / s->batch;
    if (sp->train_batches < 1)
        return lt_fail(LT_E_USAGE, "batch: %d utterances per update, but the training split "
                                   "has %d",
                       s->batch, c->train.count);
    s->updates_per_epoch = sp->train_batches;
    LT_TRY(order_split(s, &sp->train, &c->train));
    LT_TRY(order_split(s, &sp->dev, &c->dev));
    LT_TRY(order_split(s, &sp->test, &c->test));
    LT_TRY(take(s, (void **)&sp->epoch_order, (size_t)sp->train_batches * sizeof(int),
                "epoch order"));
    size_t B = (size_t)s->batch;
    LT_TRY(take(s, (void **)&sp->features,
                B * sp->max_positions * sp->stack * LT_SPEECH_MELS * sizeof(float),
                "batch features"));
    LT_TRY(take(s, (void **)&sp->lengths, B * sizeof(int32_t), "batch lengths"));
    LT_TRY(take(s, (void **)&sp->labels, B * sp->max_labels * sizeof(int32_t), "labels"));
    LT_TRY(take(s, (void **)&sp->label_lengths, B * sizeof(int32_t), "label lengths"));
    return LT_OK;
}

lt_status lt_speech_source_init(lt_batch_source *s, const lt_speech_corpus *corpus, int stack,
                                uint64_t seed, int batch, int rank, int ranks,
                                int whole_batches)
{
    LT_TRY(check_split(batch, ranks));
    if (stack < 1)
        return lt_fail(LT_E_USAGE, "stack: expected >= 1 frames per position, got %d", stack);
    init_common(s, &speech_ops, seed, batch, rank, ranks, 0);
    speech_impl *sp = calloc(1, sizeof *sp);
    LT_ASSERT(sp != NULL);
    s->impl = sp;
    sp->stack = stack;
    lt_status status = speech_buffers(s, corpus, whole_batches);
    if (status != LT_OK)
        lt_source_free(s);
    return status;
}

void lt_speech_source_limits(const lt_batch_source *s, int *max_positions, int *max_labels)
{
    const speech_impl *sp = s->impl;
    *max_positions = sp->max_positions;
    *max_labels = sp->max_labels;
}

long lt_speech_source_eval_place(const lt_batch_source *s, lt_split split, int index)
{
    const split_order *o = eval_order(s->impl, split);
    for (int i = 0; i < o->split->count; i++)
        if (o->order[i] == index)
            return i;
    return -1;
}
