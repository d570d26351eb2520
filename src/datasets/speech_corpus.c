/* The speech corpus assembled from its stored arrays, as the build makes
 * them and the cache reader reads them back: storage, speakers, the random
 * draw of a one-sentence utterance, and the utterances and splits over
 * them. The build and the loader call this file; it calls neither. */
#include <string.h>

#include "core/mem.h"
#include "datasets/speech_internal.h"


/* ---- speakers and the one-sentence draw ---- */

int lt_speech_first_speaker(int split)
{
    return split == LT_SPEECH_SPLIT_TEST ? LT_SPEECH_TRAIN_SPEAKERS : 0;
}

int lt_speech_split_speakers(int split)
{
    return split == LT_SPEECH_SPLIT_TEST ? LT_SPEECH_TEST_SPEAKERS : LT_SPEECH_TRAIN_SPEAKERS;
}

void lt_speech_single_draw(int *speaker, unsigned *rand_seed, uint64_t seed, int split, long i)
{
    lt_rng rng;
    lt_rng_seed(&rng, seed, STREAM_UTTS + ((uint64_t)split << 32) + (uint64_t)i);
    *speaker = lt_speech_first_speaker(split) + (int)lt_rng_below(&rng, (uint64_t)lt_speech_split_speakers(split));
    *rand_seed = (unsigned)(lt_rng_u64(&rng) >> 33);
}

/* ---- corpus assembly, shared by the build and the cache reader ---- */

void lt_speech_storage_free(lt_speech_storage *st)
{
    if (st == NULL)
        return;
    if (st->ckpt == NULL) {
        lt_mem_free(st->features);
        lt_mem_free(st->phones);
        lt_mem_free(st->text);
        lt_mem_free(st->recs);
        lt_mem_free(st->speaker_recs);
        lt_mem_free(st->piece_counts);
        lt_mem_free(st->piece_recs);
    }
    lt_ckpt_free(st->ckpt);
    lt_mem_free(st->pieces);
    lt_mem_free(st->utts);
    lt_mem_free(st->speakers);
    lt_mem_free(st);
}

void lt_speech_free(lt_speech_corpus *c)
{
    lt_speech_storage_free(c->storage);
    memset(c, 0, sizeof *c);
}

int lt_speech_speaker_set(int speaker)
{
    return speaker >= LT_SPEECH_TRAIN_SPEAKERS;
}

lt_speech_speaker lt_speech_speaker_of(const int32_t *speaker_recs, int i)
{
    const int32_t *r = speaker_recs + i * SPK_FIELDS;
    const lt_speech_voice_table *t = lt_speech_voices(lt_speech_speaker_set(i));
    return (lt_speech_speaker){t->voices[r[SPK_VOICE]], t->variants[r[SPK_VARIANT]],
                               r[SPK_RATE], r[SPK_PITCH]};
}

long lt_speech_total_pieces(const lt_speech_storage *st, int n_utts)
{
    if (st->piece_counts == NULL)
        return n_utts;
    long n = 0;
    for (int u = 0; u < n_utts; u++)
        n += st->piece_counts[u];
    return n;
}

/* The pieces of utterance u (the i-th of its split s), from the piece
 * records of a joined corpus or, for one sentence per utterance, from the
 * utterance's record, text and seed. */
static void fill_pieces(lt_speech_piece *out, const lt_speech_storage *st,
                        const lt_speech_layout *layout, const int32_t **piece_rec, int u, int s,
                        int i, const char *text)
{
    const int32_t *r = st->recs + (size_t)u * REC_FIELDS;
    if (st->piece_counts == NULL) {
        int speaker;
        unsigned rand_seed;
        lt_speech_single_draw(&speaker, &rand_seed, layout->seed, s, i);
        out[0] = (lt_speech_piece){.samples = r[REC_SAMPLES], .n_phones = r[REC_PHONES],
                                   .text_bytes = (int32_t)strlen(text), .rand_seed = rand_seed};
        return;
    }
    for (int p = 0; p < st->piece_counts[u]; p++, *piece_rec += PIECE_FIELDS) {
        const int32_t *pr = *piece_rec;
        out[p] = (lt_speech_piece){.samples = pr[P_SAMPLES], .pause = pr[P_PAUSE],
                                   .n_phones = pr[P_PHONES], .text_bytes = pr[P_TEXT],
                                   .rand_seed = (uint32_t)pr[P_SEED]};
    }
}

lt_status lt_speech_assemble(lt_speech_corpus *c, lt_speech_storage *st,
                             const lt_speech_layout *layout)
{
    const int *counts = layout->counts;
    const int n = counts[0] + counts[1] + counts[2];
    const long n_pieces = lt_speech_total_pieces(st, n);
    LT_TRY(lt_mem_alloc((void **)&st->utts, sizeof(lt_utterance) * (size_t)n, "utterances"));
    LT_TRY(lt_mem_alloc((void **)&st->pieces, sizeof(lt_speech_piece) * (size_t)n_pieces,
                        "utterance sentences"));
    LT_TRY(lt_mem_alloc((void **)&st->speakers, sizeof(lt_speech_speaker) * N_SPEAKERS,
                        "speakers"));
    for (int i = 0; i < N_SPEAKERS; i++)
        st->speakers[i] = lt_speech_speaker_of(st->speaker_recs, i);
    long frame_at = 0, phone_at = 0;
    const char *text = st->text;
    const int32_t *piece_rec = st->piece_recs;
    lt_speech_piece *piece = st->pieces;
    for (int s = 0, u = 0; s < N_SPLITS; s++)
        for (int i = 0; i < counts[s]; i++, u++) {
            const int32_t *r = st->recs + (size_t)u * REC_FIELDS;
            const int pieces = st->piece_counts != NULL ? st->piece_counts[u] : 1;
            fill_pieces(piece, st, layout, &piece_rec, u, s, i, text);
            st->utts[u] = (lt_utterance){
                .frames = r[REC_FRAMES],
                .features = st->features + frame_at * LT_SPEECH_MELS,
                .n_phones = r[REC_PHONES],
                .phones = st->phones + phone_at,
                .speaker = r[REC_SPEAKER],
                .samples = r[REC_SAMPLES],
                .text = text,
                .n_pieces = pieces,
                .pieces = piece,
            };
            frame_at += r[REC_FRAMES];
            phone_at += r[REC_PHONES];
            text += strlen(text) + 1;
            piece += pieces;
        }
    lt_speech_split *splits[N_SPLITS] = {&c->train, &c->dev, &c->test};
    lt_utterance *next = st->utts;
    for (int s = 0; s < N_SPLITS; s++) {
        lt_speech_split *sp = splits[s];
        *sp = (lt_speech_split){.count = counts[s], .utts = next};
        long samples = 0;
        for (int u = 0; u < counts[s]; u++) {
            samples += next[u].samples;
            sp->frames += next[u].frames;
            sp->phones += next[u].n_phones;
        }
        sp->seconds = (double)samples / LT_SPEECH_SAMPLE_RATE;
        next += counts[s];
    }
    c->n_speakers = N_SPEAKERS;
    c->n_train_speakers = LT_SPEECH_TRAIN_SPEAKERS;
    c->speakers = st->speakers;
    c->storage = st;
    return LT_OK;
}

