/* Building the speech corpus: the plan (speakers, each split's sentences,
 * which sentences make an utterance) and the synthesis, spread over
 * several espeak-ng helper processes.
 *
 * A split is read as a stream of sentences, position 0, 1, 2 ... of its
 * shuffled share of the pool (cycling past its end). Every utterance is
 * decided from the lengths of the sentences already read, never from timing:
 * a small state machine (split_state, decide) says which sentence to read
 * next and with which speaker, and what to do with it once its length is
 * known. The helpers read ahead: the same machine, run on length estimates,
 * guesses the next sentences and speakers, and the helpers synthesise those
 * while the parent waits for the oldest. Replies are used strictly in
 * order; a guess that turns out wrong (a joined utterance ended sooner or
 * later than estimated, or the split ended) is read and thrown away. So the
 * corpus is the same for any number of helpers, and one helper reads exactly
 * the sentences used. */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "core/threads.h"
#include "datasets/speech_internal.h"


/* Shares of the hours; dev and test take the rest of 1 - TRAIN_SHARE. */
#define TRAIN_SHARE 0.90
#define DEV_SHARE 0.05
#define TEST_SHARE 0.05
/* Sentences of the shuffled pool: the first 1/20 for test, the next for dev. */
#define HELD_OUT_DIVISOR 20

static const double split_shares[N_SPLITS] = {TRAIN_SHARE, DEV_SHARE, TEST_SHARE};

/* Samples per text byte at one word per minute, the starting guess of the
 * read-ahead (a 28-byte sentence lasts about 2 s at 140 words per minute);
 * it only decides what is read ahead, never what is used. */
#define GUESS_SAMPLES_PER_BYTE_WPM 2.2e5

/* ---- the plan ---- */

/* Speakers 0..TRAIN-1 read train and dev, the rest test; no two alike. */
static void draw_speakers(int32_t *recs /* (N_SPEAKERS, SPK_FIELDS) */, uint64_t seed)
{
    lt_rng rng;
    lt_rng_seed(&rng, seed, STREAM_SPEAKERS);
    for (int i = 0; i < N_SPEAKERS; i++) {
        const lt_speech_voice_table *t = lt_speech_voices(i >= LT_SPEECH_TRAIN_SPEAKERS);
        int32_t *r = recs + i * SPK_FIELDS;
        for (int again = 1; again;) {
            r[LT_SPEECH_SPK_VOICE] = (int32_t)lt_rng_below(&rng, (uint64_t)t->n_voices);
            r[LT_SPEECH_SPK_VARIANT] = (int32_t)lt_rng_below(&rng, (uint64_t)t->n_variants);
            r[LT_SPEECH_SPK_RATE] =
                LT_SPEECH_RATE_MIN +
                (int32_t)lt_rng_below(&rng, LT_SPEECH_RATE_MAX - LT_SPEECH_RATE_MIN + 1);
            r[LT_SPEECH_SPK_PITCH] =
                LT_SPEECH_PITCH_MIN +
                (int32_t)lt_rng_below(&rng, LT_SPEECH_PITCH_MAX - LT_SPEECH_PITCH_MIN + 1);
            again = 0;
            for (int j = 0; j < i; j++)
                again |= memcmp(recs + j * SPK_FIELDS, r, sizeof(int32_t) * SPK_FIELDS) == 0;
        }
    }
}

/* Fisher-Yates over the pool's sentence indices. */
static void shuffle(int *order, int n, uint64_t seed)
{
    lt_rng rng;
    lt_rng_seed(&rng, seed, STREAM_POOL);
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)lt_rng_below(&rng, (uint64_t)i + 1);
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

double lt_speech_join_target(lt_rng *rng, int mean)
{
    /* A Gamma of integer shape is a sum of that many exponentials. */
    for (;;) {
        double sum = 0;
        for (int i = 0; i < LT_SPEECH_JOIN_SHAPE; i++)
            sum -= log(1.0 - lt_rng_uniform(rng)); /* 1 - u is in (0, 1] */
        double target = sum * mean / LT_SPEECH_JOIN_SHAPE;
        if (target <= (double)LT_SPEECH_JOIN_MAX_RATIO * mean)
            return target;
    }
}

/* ---- one split as a state machine ---- */

/* What stays fixed while a split is read. */
typedef struct split_plan {
    uint64_t seed;
    int split;
    int join_mean;   /* 0: one sentence per utterance */
    int max_frames;  /* joined: the longest utterance allowed */
    const lt_speech_pool *pool;
    const int *sentences; /* (n_sentences) the split's share, in reading order */
    int n_sentences;
    double target_seconds;
} split_plan;

/* Where reading a split stands. */
typedef struct split_state {
    int utt;          /* the utterance being read, counted within the split */
    long next;        /* the next stream position */
    int speaker;      /* of utt */
    unsigned single_seed; /* one sentence per utterance: its noise seed */
    double target;    /* joined: frames utt aims at */
    int pieces;       /* sentences in utt so far */
    long samples;     /* audio of utt so far, pauses included */
    double seconds;   /* audio of the split's finished utterances */
    int passed_over;  /* sentences passed over in a row, too long alone */
    int done;         /* the split has its share */
} split_state;

/* One sentence to synthesise. */
typedef struct job {
    long pos;          /* stream position */
    int speaker;
    unsigned rand_seed;
    int32_t pause;     /* silence before it when it is not first in its utterance */
    const char *text;
} job;

/* What to do with a job's sentence once its length is known. */
typedef struct action {
    int take;   /* append it to the utterance */
    int close;  /* then (or instead) finish the utterance */
} action;

static void open_utterance(const split_plan *p, split_state *s)
{
    s->pieces = 0;
    s->samples = 0;
    if (p->join_mean == 0) {
        lt_speech_single_draw(&s->speaker, &s->single_seed, p->seed, p->split, s->utt);
        return;
    }
    lt_rng rng;
    lt_rng_seed(&rng, p->seed, STREAM_JOINED_UTTS + ((uint64_t)p->split << 32) + (uint64_t)s->utt);
    s->speaker = lt_speech_first_speaker(p->split) +
                 (int)lt_rng_below(&rng, (uint64_t)lt_speech_split_speakers(p->split));
    s->target = lt_speech_join_target(&rng, p->join_mean);
}

static void start_split(const split_plan *p, split_state *s)
{
    memset(s, 0, sizeof *s);
    open_utterance(p, s);
}

static job next_job(const split_plan *p, const split_state *s)
{
    job j = {.pos = s->next, .speaker = s->speaker, .rand_seed = s->single_seed,
             .text = p->pool->sentences[p->sentences[s->next % p->n_sentences]]};
    if (p->join_mean != 0) {
        lt_rng rng;
        lt_rng_seed(&rng, p->seed,
                    STREAM_JOINED_SENTENCES + ((uint64_t)p->split << 32) + (uint64_t)s->next);
        j.rand_seed = (unsigned)(lt_rng_u64(&rng) >> 33);
        j.pause = LT_SPEECH_PAUSE_MIN_SAMPLES +
                  (int32_t)lt_rng_below(
                      &rng, LT_SPEECH_PAUSE_MAX_SAMPLES - LT_SPEECH_PAUSE_MIN_SAMPLES + 1);
    }
    return j;
}

static int same_job(const job *a, const job *b)
{
    return a->pos == b->pos && a->speaker == b->speaker;
}

/* The rule, given the length of the sentence of job j (from next_job(s)):
 * one sentence per utterance takes it and closes; a joined utterance takes
 * it unless that passes the maximum (then it closes without it, and the
 * sentence opens the next utterance; alone it is passed over), and closes
 * once its length plus the look-ahead reaches its target. s moves on. */
static action decide(const split_plan *p, split_state *s, const job *j, long samples)
{
    action a = {1, 1};
    if (p->join_mean != 0) {
        const long with = s->pieces == 0 ? samples : s->samples + j->pause + samples;
        if (lt_speech_frame_count(with) > p->max_frames) {
            a.take = 0;
            a.close = s->pieces > 0;
        } else {
            a.close = lt_speech_frame_count(with) + LT_SPEECH_JOIN_LOOKAHEAD >= s->target;
        }
        s->passed_over = s->pieces == 0 && !a.take ? s->passed_over + 1 : 0;
        if (a.take)
            s->samples = with;
    } else {
        s->samples = samples;
    }
    if (a.take) {
        s->pieces++;
        s->next++;
    } else if (!a.close) {
        s->next++; /* passed over */
    }
    if (a.close) {
        s->seconds += (double)s->samples / LT_SPEECH_SAMPLE_RATE;
        s->utt++;
        s->done = s->seconds >= p->target_seconds && s->utt >= LT_SPEECH_MIN_SPLIT_UTTS;
        if (!s->done)
            open_utterance(p, s);
    }
    return a;
}

/* ---- helpers reading ahead ---- */

typedef struct worker_pool {
    int n;                       /* helpers */
    lt_speech_synth *helpers;    /* (n) */
    int *idle;                   /* (n) */
    job *flight;                 /* (n) sent, oldest first, a ring from head */
    int *flight_helper;          /* (n) */
    int head, count;
    const lt_speech_speaker *speakers;
    lt_speech_audio scratch;     /* replies nobody uses */
    double guess_num, guess_den; /* samples x rate, text bytes: the read-ahead's estimate */
} worker_pool;

static lt_status pool_start(worker_pool *w, int n, const lt_speech_speaker *speakers)
{
    memset(w, 0, sizeof *w);
    w->speakers = speakers;
    w->guess_num = GUESS_SAMPLES_PER_BYTE_WPM;
    w->guess_den = 1;
    LT_TRY(lt_mem_calloc((void **)&w->helpers, sizeof(lt_speech_synth) * (size_t)n, "helpers"));
    for (int i = 0; i < n; i++)
        w->helpers[i] = (lt_speech_synth){.pid = -1, .fd = -1};
    LT_TRY(lt_mem_alloc((void **)&w->idle, sizeof(int) * (size_t)n, "helpers"));
    LT_TRY(lt_mem_alloc((void **)&w->flight, sizeof(job) * (size_t)n, "read-ahead"));
    LT_TRY(lt_mem_alloc((void **)&w->flight_helper, sizeof(int) * (size_t)n, "read-ahead"));
    for (int i = 0; i < n; i++) {
        LT_TRY(lt_speech_synth_start(&w->helpers[i]));
        w->idle[i] = 1;
        w->n = i + 1;
    }
    return LT_OK;
}

static void pool_stop(worker_pool *w, int kill_now)
{
    /* Unread replies would keep a helper writing: on a clean stop nothing is
     * in flight, otherwise the helpers are killed. */
    for (int i = 0; i < w->n; i++)
        lt_speech_synth_stop(&w->helpers[i], kill_now || w->count > 0);
    lt_mem_free(w->helpers);
    lt_mem_free(w->idle);
    lt_mem_free(w->flight);
    lt_mem_free(w->flight_helper);
    lt_mem_free(w->scratch.samples);
    lt_mem_free(w->scratch.phones);
    memset(w, 0, sizeof *w);
}

static lt_status pool_send(worker_pool *w, const job *j)
{
    LT_ASSERT(w->count < w->n);
    int h = 0;
    while (!w->idle[h])
        h++;
    LT_TRY(lt_speech_synth_send(&w->helpers[h], &w->speakers[j->speaker], j->rand_seed,
                                j->text));
    const int slot = (w->head + w->count) % w->n;
    w->flight[slot] = *j;
    w->flight_helper[slot] = h;
    w->idle[h] = 0;
    w->count++;
    return LT_OK;
}

/* The reply to the oldest job sent, into `audio`. */
static lt_status pool_receive(worker_pool *w, lt_speech_audio *audio, job *j)
{
    LT_ASSERT(w->count > 0);
    *j = w->flight[w->head];
    const int h = w->flight_helper[w->head];
    w->head = (w->head + 1) % w->n;
    w->count--;
    w->idle[h] = 1;
    lt_status status = lt_speech_synth_receive(&w->helpers[h], audio, &w->speakers[j->speaker],
                                               j->text);
    if (status == LT_OK) {
        w->guess_num += (double)audio->n_samples * w->speakers[j->speaker].rate;
        w->guess_den += (double)strlen(j->text);
    }
    return status;
}

/* Reads and throws away the oldest job's reply. Its failure does not
 * matter, as the sentence is not used: the helper is started again. */
static lt_status pool_discard(worker_pool *w)
{
    const int h = w->flight_helper[w->head];
    job j;
    if (pool_receive(w, &w->scratch, &j) == LT_OK)
        return LT_OK;
    lt_speech_synth_stop(&w->helpers[h], 1);
    return lt_speech_synth_start(&w->helpers[h]);
}

static long guess_samples(const worker_pool *w, const job *j)
{
    return (long)(w->guess_num / w->guess_den * (double)strlen(j->text) /
                  w->speakers[j->speaker].rate);
}

/* Keeps the idle helpers busy with the jobs that follow `want` (the next job
 * of state s) if the sentences sent so far have the lengths guessed, as long
 * as the jobs already sent are still the ones guessed. */
static lt_status pool_read_ahead(worker_pool *w, const split_plan *p, const split_state *s,
                                 const job *want)
{
    split_state guess = *s;
    job j = *want;
    for (int i = 0; i < w->n; i++) {
        if (i >= w->count) {
            LT_TRY(pool_send(w, &j));
        } else if (!same_job(&w->flight[(w->head + i) % w->n], &j)) {
            return LT_OK; /* an older guess went another way: wait for it */
        }
        decide(p, &guess, &j, guess_samples(w, &j));
        if (guess.done)
            return LT_OK;
        j = next_job(p, &guess);
    }
    return LT_OK;
}

/* The reply to `want` (the next job of state s) into audio, with the
 * helpers reading ahead meanwhile. */
static lt_status pool_fetch(worker_pool *w, const split_plan *p, const split_state *s,
                            const job *want, lt_speech_audio *audio)
{
    while (w->count > 0 && !same_job(&w->flight[w->head], want))
        LT_TRY(pool_discard(w));
    LT_TRY(pool_read_ahead(w, p, s, want));
    job got;
    LT_TRY(pool_receive(w, audio, &got));
    LT_ASSERT(same_job(&got, want));
    return LT_OK;
}

/* ---- building ---- */

typedef struct builder {
    lt_speech_storage *st;
    size_t features_cap, phones_cap, text_cap, recs_cap, counts_cap, pieces_cap; /* elements */
    long total_frames, total_phones, total_pieces;
    size_t text_len;
    int n_utts;
    int joined;
    lt_speech_fbank *fbank;
    worker_pool workers;
    lt_speech_audio audio;     /* the sentence just read */
    int16_t *utt_samples;      /* (utt_len) the utterance being read */
    size_t utt_samples_cap;
    long utt_len;
    int utt_phones;
} builder;

/* Appends the sentence just read (of job j) to the utterance that has
 * `pieces` sentences so far. */
static lt_status take_sentence(builder *b, const job *j, int pieces)
{
    lt_speech_storage *st = b->st;
    const lt_speech_audio *a = &b->audio;
    const lt_speech_speaker *speaker = &b->workers.speakers[j->speaker];
    /* CTC needs at least one frame per label. */
    const long frames = lt_speech_frame_count(a->n_samples);
    if (a->n_phones < 1 || frames < a->n_phones)
        return lt_fail(LT_E_INTERNAL,
                       "espeak-ng read \"%s\" (voice %s+%s) as %d phones in %ld frames; "
                       "expected at least one phone and no more phones than frames",
                       j->text, speaker->voice, speaker->variant, a->n_phones, frames);
    const long pause = pieces > 0 ? j->pause : 0;
    LT_TRY(lt_mem_grow((void **)&b->utt_samples, &b->utt_samples_cap,
                          (size_t)(b->utt_len + pause + a->n_samples), sizeof(int16_t),
                          "utterance audio"));
    memset(b->utt_samples + b->utt_len, 0, sizeof(int16_t) * (size_t)pause);
    memcpy(b->utt_samples + b->utt_len + pause, a->samples,
           sizeof(int16_t) * (size_t)a->n_samples);
    b->utt_len += pause + a->n_samples;
    LT_TRY(lt_mem_grow((void **)&st->phones, &b->phones_cap,
                          (size_t)(b->total_phones + b->utt_phones + a->n_phones),
                          sizeof(int32_t), "speech phones"));
    memcpy(st->phones + b->total_phones + b->utt_phones, a->phones,
           sizeof(int32_t) * (size_t)a->n_phones);
    b->utt_phones += a->n_phones;
    const size_t len = strlen(j->text);
    LT_TRY(lt_mem_grow((void **)&st->text, &b->text_cap, b->text_len + len + 1, 1,
                          "speech text"));
    if (pieces > 0)
        st->text[b->text_len++] = ' ';
    memcpy(st->text + b->text_len, j->text, len);
    b->text_len += len;
    if (!b->joined)
        return LT_OK;
    LT_TRY(lt_mem_grow((void **)&st->piece_recs, &b->pieces_cap,
                          (size_t)(b->total_pieces + 1) * PIECE_FIELDS, sizeof(int32_t),
                          "utterance sentences"));
    int32_t *r = st->piece_recs + (size_t)b->total_pieces * PIECE_FIELDS;
    if (pieces > 0)
        (r - PIECE_FIELDS)[LT_SPEECH_PIECE_PAUSE] = j->pause; /* after the previous one */
    r[LT_SPEECH_PIECE_SAMPLES] = (int32_t)a->n_samples;
    r[LT_SPEECH_PIECE_PAUSE] = 0;
    r[LT_SPEECH_PIECE_PHONES] = a->n_phones;
    r[LT_SPEECH_PIECE_TEXT] = (int32_t)len;
    r[LT_SPEECH_PIECE_SEED] = (int32_t)j->rand_seed;
    b->total_pieces++;
    return LT_OK;
}

/* Finishes the utterance read so far, of `pieces` sentences: its features,
 * record and text terminator. */
static lt_status close_utterance(builder *b, int speaker, int pieces)
{
    lt_speech_storage *st = b->st;
    const long samples = b->utt_len;
    const long frames = lt_speech_frame_count(samples);
    LT_ASSERT(pieces >= 1 && frames >= b->utt_phones);
    LT_TRY(lt_mem_grow((void **)&st->features, &b->features_cap,
                          (size_t)(b->total_frames + frames) * LT_SPEECH_MELS, sizeof(float),
                          "speech features"));
    LT_TRY(lt_mem_grow((void **)&st->recs, &b->recs_cap, (size_t)(b->n_utts + 1) * REC_FIELDS,
                          sizeof(int32_t), "utterance records"));
    if (b->joined) {
        LT_TRY(lt_mem_grow((void **)&st->piece_counts, &b->counts_cap,
                              (size_t)b->n_utts + 1, sizeof(int32_t), "utterance sentences"));
        st->piece_counts[b->n_utts] = pieces;
    }
    lt_speech_fbank_compute(b->fbank, st->features + b->total_frames * LT_SPEECH_MELS,
                            b->utt_samples, samples);
    st->text[b->text_len++] = '\0';
    int32_t *r = st->recs + (size_t)b->n_utts * REC_FIELDS;
    r[LT_SPEECH_REC_FRAMES] = (int32_t)frames;
    r[LT_SPEECH_REC_PHONES] = b->utt_phones;
    r[LT_SPEECH_REC_SPEAKER] = speaker;
    r[LT_SPEECH_REC_SAMPLES] = (int32_t)samples;
    b->total_frames += frames;
    b->total_phones += b->utt_phones;
    b->utt_phones = 0;
    b->utt_len = 0;
    b->n_utts++;
    return LT_OK;
}

/* Reads one split until its share of the hours is spoken (and at least
 * LT_SPEECH_MIN_SPLIT_UTTS utterances). */
static lt_status build_split(builder *b, int *count, const split_plan *p, double *spoken,
                             lt_progress *progress)
{
    if (p->n_sentences < 1)
        return lt_fail(LT_E_USAGE, "hours: the %s split has no sentences",
                       lt_speech_split_names[p->split]);
    split_state s;
    start_split(p, &s);
    while (!s.done) {
        const job j = next_job(p, &s);
        LT_TRY(pool_fetch(&b->workers, p, &s, &j, &b->audio));
        const int pieces = s.pieces, speaker = s.speaker;
        const action a = decide(p, &s, &j, b->audio.n_samples);
        if (!s.done) {
            /* The helper just heard from starts on what follows before the
             * features are computed. */
            const job next = next_job(p, &s);
            LT_TRY(pool_read_ahead(&b->workers, p, &s, &next));
        }
        if (a.take)
            LT_TRY(take_sentence(b, &j, pieces));
        if (s.passed_over > p->n_sentences)
            return lt_fail(LT_E_USAGE,
                           "utterance_frames: no sentence of the %s split is as short as the "
                           "longest utterance allowed (%d frames)",
                           lt_speech_split_names[p->split], p->max_frames);
        if (!a.close)
            continue;
        *spoken += (double)b->utt_len / LT_SPEECH_SAMPLE_RATE;
        LT_TRY(close_utterance(b, speaker, a.take ? pieces + 1 : pieces));
        if (progress != NULL) {
            /* Splits round up to whole utterances and a minimum count. */
            if ((long)*spoken > progress->total)
                progress->total = (long)*spoken;
            lt_progress_update(progress, (long)*spoken, lt_speech_split_names[p->split]);
        }
    }
    *count = s.utt;
    return LT_OK;
}

lt_status lt_speech_build(lt_speech_corpus *c, const lt_speech_config *cfg,
                          const lt_speech_pool *pool, lt_progress *progress)
{
    LT_TRY(lt_speech_check_voices());
    builder b = {.joined = cfg->utterance_frames != 0};
    int *order = NULL;
    lt_speech_speaker speakers[N_SPEAKERS];
    lt_status status = lt_mem_calloc((void **)&b.st, sizeof *b.st, "speech corpus");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&b.st->speaker_recs,
                              sizeof(int32_t) * N_SPEAKERS * SPK_FIELDS, "speakers");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&order, sizeof(int) * (size_t)pool->count,
                              "sentence order");
    if (status == LT_OK)
        status = lt_speech_fbank_create(&b.fbank);
    if (status == LT_OK) {
        draw_speakers(b.st->speaker_recs, cfg->seed);
        for (int i = 0; i < N_SPEAKERS; i++)
            speakers[i] = lt_speech_speaker_of(b.st->speaker_recs, i);
        status = pool_start(&b.workers, cfg->workers > 0 ? cfg->workers : lt_threads_get(),
                            speakers);
    }
    lt_speech_layout layout = {.utterance_frames = cfg->utterance_frames, .seed = cfg->seed};
    if (status == LT_OK) {
        shuffle(order, pool->count, cfg->seed);
        const int held = pool->count / HELD_OUT_DIVISOR;
        /* Where each split's sentences start in the shuffled order. */
        const int start[N_SPLITS] = {2 * held, held, 0};
        const int size[N_SPLITS] = {pool->count - 2 * held, held, held};
        if (progress != NULL)
            progress->total = (long)ceil(cfg->hours * 3600.0);
        double spoken = 0;
        for (int s = 0; s < N_SPLITS && status == LT_OK; s++) {
            const split_plan plan = {
                .seed = cfg->seed,
                .split = s,
                .join_mean = cfg->utterance_frames,
                .max_frames = LT_SPEECH_JOIN_MAX_RATIO * cfg->utterance_frames,
                .pool = pool,
                .sentences = order + start[s],
                .n_sentences = size[s],
                .target_seconds = split_shares[s] * cfg->hours * 3600.0,
            };
            status = build_split(&b, &layout.counts[s], &plan, &spoken, progress);
        }
        if (progress != NULL)
            lt_progress_finish(progress, status == LT_OK ? "done" : "failed");
    }
    pool_stop(&b.workers, status != LT_OK);
    lt_speech_fbank_free(b.fbank);
    lt_mem_free(b.audio.samples);
    lt_mem_free(b.audio.phones);
    lt_mem_free(b.utt_samples);
    lt_mem_free(order);
    if (status == LT_OK)
        status = lt_speech_assemble(c, b.st, &layout);
    if (status != LT_OK) {
        lt_speech_storage_free(b.st);
        memset(c, 0, sizeof *c);
    }
    return status;
}
