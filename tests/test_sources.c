/* Batch sources (src/datasets/source.h): every batch a pure function of
 * (seed, step) and the sequence's place in the update, ranks holding
 * slices of the one update, speech padded as the whole update is, epochs
 * that visit every batch once in an order fixed by (seed, epoch). */
#include <criterion/criterion.h>

#include <string.h>

#include "check.h"
#include "train/source.h"

/* The batch's token rows (or feature rows) as bytes, for comparing. */
static size_t row_ints(const lt_batch *b) { return (size_t)b->n; }

static void assert_same_tokens(const lt_batch *a, int a_first, const lt_batch *b, int b_first,
                               int count)
{
    cr_assert_eq(a->n, b->n);
    size_t n = row_ints(a);
    cr_assert_arr_eq(a->tokens + a_first * n, b->tokens + b_first * n,
                     (size_t)count * n * sizeof(int32_t));
    cr_assert_arr_eq(a->targets + a_first * n, b->targets + b_first * n,
                     (size_t)count * n * sizeof(int32_t));
}

/* ---- copy ---- */

Test(sources, copy_batches_are_pure_functions_of_seed_and_step)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 32), LT_OK);
    lt_batch_source a, b;
    cr_assert_eq(lt_copy_source_init(&a, &task, 7, 8, 0, 1, 16), LT_OK);
    cr_assert_eq(lt_copy_source_init(&b, &task, 7, 8, 0, 1, 16), LT_OK);
    cr_assert_eq(a.seq_len, 32);
    cr_assert_eq(a.updates_per_epoch, 0, "drawn afresh, no epochs");
    lt_batch x, y;
    cr_assert_eq(lt_source_train(&a, 5, &x), LT_OK);
    static int32_t saved[8 * 32];
    memcpy(saved, x.tokens, sizeof saved);
    cr_assert_eq(lt_source_train(&a, 6, &x), LT_OK);
    cr_assert_eq(lt_source_train(&b, 5, &y), LT_OK);
    cr_assert_arr_eq(saved, y.tokens, sizeof saved, "step 5 is step 5, whatever came before");
    cr_assert(memcmp(saved, x.tokens, sizeof saved) != 0, "another step, other sequences");
    /* the held-out split: fixed, and not any update's */
    cr_assert_eq(lt_source_eval_count(&a, LT_SPLIT_TEST), 16);
    cr_assert_eq(lt_source_eval_count(&a, LT_SPLIT_DEV), 0);
    cr_assert_eq(lt_source_eval(&a, LT_SPLIT_TEST, 8, 8, &x), LT_OK);
    memcpy(saved, x.tokens, sizeof saved);
    cr_assert_eq(lt_source_eval(&b, LT_SPLIT_TEST, 8, 8, &y), LT_OK);
    cr_assert_arr_eq(saved, y.tokens, sizeof saved);
    cr_assert_eq(lt_source_train(&b, 1, &y), LT_OK);
    cr_assert(memcmp(saved, y.tokens, sizeof saved) != 0);
    lt_source_free(&a);
    lt_source_free(&b);
    cr_assert_eq(lt_mem_current(), 0, "buffers released");
}

Test(sources, copy_ranks_hold_slices_of_one_update)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 16), LT_OK);
    lt_batch_source whole, half[2];
    cr_assert_eq(lt_copy_source_init(&whole, &task, 3, 8, 0, 1, 8), LT_OK);
    for (int r = 0; r < 2; r++)
        cr_assert_eq(lt_copy_source_init(&half[r], &task, 3, 8, r, 2, 8), LT_OK);
    cr_assert_eq(lt_source_local_batch(&half[1]), 4);
    lt_batch w, h;
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(lt_source_train(&whole, 9, &w), LT_OK);
        cr_assert_eq(lt_source_train(&half[r], 9, &h), LT_OK);
        cr_assert_eq(h.batch, 4);
        assert_same_tokens(&w, 4 * r, &h, 0, 4);
        cr_assert_arr_eq(w.mask + 4 * r * 16, h.mask, 4 * 16 * sizeof(float));
    }
    lt_source_free(&whole);
    for (int r = 0; r < 2; r++)
        lt_source_free(&half[r]);
    lt_batch_source bad;
    cr_assert_eq(lt_copy_source_init(&bad, &task, 3, 7, 0, 2, 8), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "batch") != NULL, "%s", lt_last_error());
}

/* ---- images ---- */

/* n images of 2x3 gray pixels whose bytes tell them apart. */
static void tiny_images(lt_image_set *s, int n, int offset)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "tiny");
    s->count = s->full_count = n;
    s->height = 2;
    s->width = 3;
    s->channels = 1;
    cr_assert_eq(lt_mem_alloc((void **)&s->pixels, (size_t)n * 6, "pixels"), LT_OK);
    cr_assert_eq(lt_mem_calloc((void **)&s->labels, (size_t)n, "labels"), LT_OK);
    for (int i = 0; i < n * 6; i++)
        s->pixels[i] = (uint8_t)(offset + i);
}

Test(sources, image_sequences_sit_behind_a_start_token)
{
    lt_image_set train, test;
    tiny_images(&train, 10, 0);
    tiny_images(&test, 5, 100);
    lt_batch_source s, r1;
    cr_assert_eq(lt_image_source_init(&s, &train, &test, 11, 4, 0, 1), LT_OK);
    cr_assert_eq(lt_image_source_init(&r1, &train, &test, 11, 4, 1, 2), LT_OK);
    cr_assert_eq(s.seq_len, 6);
    lt_batch b, h;
    cr_assert_eq(lt_source_train(&s, 3, &b), LT_OK);
    for (int i = 0; i < b.batch; i++) {
        const int32_t *in = b.tokens + i * 6, *out = b.targets + i * 6;
        cr_assert_eq(in[0], LT_IMAGE_START_TOKEN);
        for (int t = 1; t < 6; t++)
            cr_assert_eq(in[t], out[t - 1], "inputs are the bytes shifted right");
        cr_assert_eq(out[0] % 6, 0, "whole images of the training set");
    }
    cr_assert_eq(lt_source_train(&r1, 3, &h), LT_OK);
    assert_same_tokens(&b, 2, &h, 0, 2); /* rank 1 of 2: the second half */
    cr_assert_eq(lt_source_eval_count(&s, LT_SPLIT_TEST), 5);
    cr_assert_eq(lt_source_eval(&s, LT_SPLIT_TEST, 3, 4, &b), LT_OK);
    cr_assert_eq(b.batch, 2, "clipped to the split's end");
    cr_assert_eq(b.targets[0], 100 + 3 * 6, "the test images in order");
    lt_source_free(&s);
    lt_source_free(&r1);
    lt_images_free(&train);
    lt_images_free(&test);
}

/* ---- speech ---- */

enum { UTTS = 10 };

/* A corpus held in the test: utterance i of a split has 3 + i * 3 frames
 * (shuffled into the split out of length order) and 1 + i % 3 phones. */
typedef struct tiny_corpus {
    lt_speech_corpus corpus;
    lt_utterance utts[3][UTTS];
    float features[3][UTTS][40 * LT_SPEECH_MELS];
    int32_t phones[3][UTTS][3];
} tiny_corpus;

static void tiny_speech(tiny_corpus *t)
{
    memset(t, 0, sizeof *t);
    lt_speech_split *splits[3] = {&t->corpus.train, &t->corpus.dev, &t->corpus.test};
    for (int s = 0; s < 3; s++) {
        splits[s]->count = UTTS;
        splits[s]->utts = t->utts[s];
        for (int i = 0; i < UTTS; i++) {
            int shuffled = (i * 7) % UTTS; /* stored out of length order */
            lt_utterance *u = &t->utts[s][i];
            u->frames = 3 + shuffled * 3;
            u->n_phones = 1 + shuffled % 3;
            for (int f = 0; f < u->frames * LT_SPEECH_MELS; f++)
                t->features[s][i][f] = (float)(1000 * s + 10 * i) + (float)f / 1000.0f;
            for (int p = 0; p < u->n_phones; p++)
                t->phones[s][i][p] = (i + p) % LT_SPEECH_PHONES;
            u->features = t->features[s][i];
            u->phones = t->phones[s][i];
        }
    }
}

Test(sources, speech_epochs_visit_every_batch_once_in_a_seeded_order)
{
    static tiny_corpus t;
    tiny_speech(&t);
    lt_batch_source s;
    cr_assert_eq(lt_speech_source_init(&s, &t.corpus, 1, 5, 2, 0, 1, 0), LT_OK);
    cr_assert_eq(s.updates_per_epoch, 5);
    cr_assert_eq(s.seq_len, 30, "the longest utterance, in positions");
    /* an epoch's batches are the length-sorted pairs, each once */
    for (int epoch = 0; epoch < 3; epoch++) {
        int seen[5] = {0};
        for (int slot = 0; slot < 5; slot++) {
            lt_batch b;
            cr_assert_eq(lt_source_train(&s, epoch * 5 + slot, &b), LT_OK);
            cr_assert_eq(b.batch, 2);
            int pair = (b.lengths[0] - 3) / 6; /* frames 3+6p and 6+6p at stack 1 */
            cr_assert_eq(b.lengths[1], b.lengths[0] + 3, "similar lengths together");
            cr_assert_eq(b.n, b.lengths[1], "padded to the longest");
            seen[pair]++;
        }
        for (int p = 0; p < 5; p++)
            cr_assert_eq(seen[p], 1, "epoch %d visits batch %d once", epoch, p);
    }
    /* the order is the seed's and the epoch's */
    int first[5], again[5], next[5];
    lt_batch b;
    for (int slot = 0; slot < 5; slot++) {
        cr_assert_eq(lt_source_train(&s, slot, &b), LT_OK);
        first[slot] = b.lengths[0];
        cr_assert_eq(lt_source_train(&s, 5 + slot, &b), LT_OK);
        next[slot] = b.lengths[0];
    }
    for (int slot = 0; slot < 5; slot++) {
        cr_assert_eq(lt_source_train(&s, slot, &b), LT_OK);
        again[slot] = b.lengths[0];
    }
    cr_assert_arr_eq(first, again, sizeof first);
    cr_assert(memcmp(first, next, sizeof first) != 0, "another epoch, another order");
    lt_source_free(&s);
}

Test(sources, speech_ranks_are_padded_as_the_whole_update)
{
    static tiny_corpus t;
    tiny_speech(&t);
    lt_batch_source whole, half[2];
    cr_assert_eq(lt_speech_source_init(&whole, &t.corpus, 2, 5, 4, 0, 1, 1), LT_OK);
    for (int r = 0; r < 2; r++)
        cr_assert_eq(lt_speech_source_init(&half[r], &t.corpus, 2, 5, 4, r, 2, 1), LT_OK);
    cr_assert_eq(whole.updates_per_epoch, 2, "whole batches only: the last two are left out");
    for (int step = 0; step < 4; step++)
        for (int r = 0; r < 2; r++) {
            lt_batch w, h;
            cr_assert_eq(lt_source_train(&whole, step, &w), LT_OK);
            int n = w.n;
            static float saved[4 * 30 * LT_SPEECH_MELS];
            int32_t lengths[4];
            memcpy(saved, w.features, (size_t)4 * n * 2 * LT_SPEECH_MELS * sizeof(float));
            memcpy(lengths, w.lengths, sizeof lengths);
            cr_assert_eq(lt_source_train(&half[r], step, &h), LT_OK);
            cr_assert_eq(h.n, n, "rank %d pads to the update's longest, not its own", r);
            cr_assert_arr_eq(h.lengths, lengths + 2 * r, 2 * sizeof(int32_t));
            cr_assert_arr_eq(h.features, saved + (size_t)2 * r * n * 2 * LT_SPEECH_MELS,
                             (size_t)2 * n * 2 * LT_SPEECH_MELS * sizeof(float));
        }
    /* evaluation in length order; labels are phones + 1 (0 is the blank) */
    lt_batch e;
    cr_assert_eq(lt_source_eval(&whole, LT_SPLIT_DEV, 0, 3, &e), LT_OK);
    cr_assert(e.lengths[0] <= e.lengths[1] && e.lengths[1] <= e.lengths[2]);
    cr_assert_geq(e.labels[0], 1);
    long place = lt_speech_source_eval_place(&whole, LT_SPLIT_TEST, 0);
    cr_assert_eq(lt_source_eval(&whole, LT_SPLIT_TEST, place, 1, &e), LT_OK);
    cr_assert_eq(e.lengths[0], 2, "utterance 0: 3 frames, 2 positions at stack 2");
    lt_source_free(&whole);
    for (int r = 0; r < 2; r++)
        lt_source_free(&half[r]);
}

Test(sources, speech_refuses_utterances_too_short_for_their_phones)
{
    static tiny_corpus t;
    tiny_speech(&t);
    lt_batch_source s;
    cr_assert_eq(lt_speech_source_init(&s, &t.corpus, 16, 5, 2, 0, 1, 0), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "stack") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_speech_source_init(&s, &t.corpus, 1, 5, 11, 0, 1, 1), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "batch") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_mem_current(), 0, "nothing left allocated");
}
