/* Batch sources: what a training run reads, as lt_batch.
 *
 * A source hands out the batch of each update and the evaluation batches of
 * its held-out splits. Every batch is a pure function of (seed, step) and
 * the sequence's place in the update, never of the rank holding it: rank r
 * of R gets sequences [r * B/R, (r + 1) * B/R) of the update's B, padded as
 * the whole update is, so a resumed run, and a run on any number of ranks
 * with the same shards, sees the same sequences.
 *
 * Evaluation splits are ordered lists of sequences, read in chunks of
 * consecutive ones (lt_source_eval): the caller decides the chunk size and
 * which rank takes which chunk.
 *
 *   copy    the copy task (datasets/copy.h): fresh sequences per update,
 *           a held-out split drawn from streams no update uses
 *   images  byte sequences of an image set behind a start token: images
 *           drawn with replacement per update, the test images in order
 *   speech  utterances of a speech corpus, in batches of similar lengths:
 *           an epoch visits every batch once, in an order shuffled by
 *           (seed, epoch); dev and test in length order
 *
 * Buffers are allocated once at init through the tracked allocator
 * (lt_source_bytes of them); batches point into them and stay valid until
 * the next call. */
#ifndef LT_DATASETS_SOURCE_H
#define LT_DATASETS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "datasets/copy.h"
#include "datasets/images.h"
#include "datasets/speech.h"
#include "model/image_model.h"
#include "model/model.h"

typedef enum lt_split { LT_SPLIT_DEV, LT_SPLIT_TEST } lt_split;

typedef struct lt_batch_source lt_batch_source;

typedef struct lt_source_ops {
    lt_status (*train)(lt_batch_source *s, long step, lt_batch *out);
    long (*eval_count)(const lt_batch_source *s, lt_split split);
    lt_status (*eval)(lt_batch_source *s, lt_split split, long first, int count, lt_batch *out);
    void (*free)(lt_batch_source *s);
} lt_source_ops;

struct lt_batch_source {
    const lt_source_ops *ops;
    int batch;              /* sequences per update, all ranks together */
    int rank, ranks;        /* this rank's share: batch / ranks sequences */
    int seq_len;            /* positions of the longest batch */
    long updates_per_epoch; /* updates that visit the training data once; 0: drawn afresh */
    size_t bytes;           /* tracked bytes of the buffers */
    uint64_t seed;
    void *impl;             /* the kind's own state */
};

/* Sequences this rank reads per update. */
int lt_source_local_batch(const lt_batch_source *s);

/* This rank's part of the batch for the update after `step` updates. */
lt_status lt_source_train(lt_batch_source *s, long step, lt_batch *out);

/* Sequences in an evaluation split (0: the source has no such split). */
long lt_source_eval_count(const lt_batch_source *s, lt_split split);

/* Sequences [first, first + count) of a split (clipped to its end) as one
 * batch; count must not exceed the batch the source was made for. */
lt_status lt_source_eval(lt_batch_source *s, lt_split split, long first, int count,
                         lt_batch *out);

/* Releases the buffers and zeroes the source; a zeroed source is ignored. */
void lt_source_free(lt_batch_source *s);

/* ---- the kinds ---- */

/* The copy task at N = task->seq_len, `batch` sequences per update split
 * over `ranks`; the held-out split ("test") is `eval_sequences` sequences
 * from streams no update reaches. LT_E_USAGE when batch does not split
 * over the ranks. */
lt_status lt_copy_source_init(lt_batch_source *s, const lt_copy_task *task, uint64_t seed,
                              int batch, int rank, int ranks, long eval_sequences);

/* Images as byte sequences: inputs are a start token then the bytes but the
 * last, targets the bytes. Each image of an update is drawn with
 * replacement from `train` by its own stream (seed, step * batch + i); the
 * "test" split is `test` in order (the start token: model/image_model.h).
 * The sets must outlive the source. */
lt_status lt_image_source_init(lt_batch_source *s, const lt_image_set *train,
                               const lt_image_set *test, uint64_t seed, int batch, int rank,
                               int ranks);

/* Inputs and targets of one image as the source builds them. */
void lt_image_sequence(int32_t *inputs /* (N) */, int32_t *targets /* (N) */,
                       const uint8_t *pixels /* (N) */, int N);

/* A speech corpus with `stack` frames per position. Training batches hold
 * `batch` utterances of similar lengths (with `whole_batches`, only full
 * ones: sharded updates split every batch evenly, so the longest few
 * utterances are left out); labels are phones + 1 (class 0 is CTC's blank).
 * The corpus must outlive the source. LT_E_USAGE when the training split
 * has fewer than `batch` utterances, or an utterance has too few positions
 * for its phones at this stack (CTC needs one per phone and per repeat). */
lt_status lt_speech_source_init(lt_batch_source *s, const lt_speech_corpus *corpus, int stack,
                                uint64_t seed, int batch, int rank, int ranks,
                                int whole_batches);

/* Positions of the longest utterance and phones of the longest label
 * sequence, over every split. */
void lt_speech_source_limits(const lt_batch_source *s, int *max_positions, int *max_labels);

/* The place of utterance `index` of `split` in that split's evaluation
 * order, for lt_source_eval of that one utterance. */
long lt_speech_source_eval_place(const lt_batch_source *s, lt_split split, int index);

#endif
