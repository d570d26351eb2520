/* The speech corpus: settings, the plan (speakers, sentence shares), the
 * build loop and the cache. Audio comes from speech_synth.c, features from
 * speech_features.c, sentences from speech_text.c. */
#include "datasets/speech.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "core/rng.h"
#include "datasets/speech_internal.h"
#include "io/bytes.h"
#include "io/checkpoint.h"

/* Shares of the hours; dev and test take the rest of 1 - TRAIN_SHARE. */
#define TRAIN_SHARE 0.90
#define DEV_SHARE 0.05
#define TEST_SHARE 0.05
/* Sentences of the shuffled pool: the first 1/20 for test, the next for dev. */
#define HELD_OUT_DIVISOR 20

#define RATE_MIN 140
#define RATE_MAX 210
#define PITCH_MIN 30
#define PITCH_MAX 70

#define N_SPEAKERS (LT_SPEECH_TRAIN_SPEAKERS + LT_SPEECH_TEST_SPEAKERS)
/* A cache claiming more utterances than this is damaged: even
 * LT_SPEECH_MAX_HOURS of a few seconds each stay far below it. */
#define MAX_CACHE_UTTS 1000000

enum { SPLIT_TRAIN, SPLIT_DEV, SPLIT_TEST, N_SPLITS };
static const char *const split_names[N_SPLITS] = {"train", "dev", "test"};
static const double split_shares[N_SPLITS] = {TRAIN_SHARE, DEV_SHARE, TEST_SHARE};

/* Random streams of the seed. */
#define STREAM_SPEAKERS 1
#define STREAM_POOL 2
#define STREAM_UTTS ((uint64_t)1 << 40) /* + (split << 32) + utterance */

/* One utterance as stored: int32 frames, phones, speaker, samples. */
enum { REC_FRAMES, REC_PHONES, REC_SPEAKER, REC_SAMPLES, REC_FIELDS };
/* One speaker as stored: int32 voice, variant (indices into the tables of its
 * set), rate, pitch. */
enum { SPK_VOICE, SPK_VARIANT, SPK_RATE, SPK_PITCH, SPK_FIELDS };

struct lt_speech_storage {
    lt_ckpt *ckpt;            /* the arrays below live in it when read from a cache */
    float *features;          /* built: owned (total_frames, LT_SPEECH_MELS) */
    int32_t *phones;          /* built: owned (total_phones) */
    char *text;               /* built: owned, n_utts NUL-terminated sentences */
    int32_t *recs;            /* built: owned (n_utts, REC_FIELDS) */
    int32_t *speaker_recs;    /* built: owned (N_SPEAKERS, SPK_FIELDS) */
    lt_utterance *utts;       /* (n_utts) train, then dev, then test */
    lt_speech_speaker *speakers; /* (N_SPEAKERS) */
};

/* ---- settings ---- */

lt_status lt_speech_check_config(const lt_speech_config *cfg)
{
    if (!isfinite(cfg->hours) || cfg->hours < LT_SPEECH_MIN_HOURS ||
        cfg->hours > LT_SPEECH_MAX_HOURS)
        return lt_fail(LT_E_USAGE,
                       "hours: %g is outside [%g, %g]: below, the training split would hold "
                       "only two or three utterances; above, the corpus would outgrow what "
                       "one machine's memory holds of features (%g hours: about %.0f GiB)",
                       cfg->hours, LT_SPEECH_MIN_HOURS, LT_SPEECH_MAX_HOURS, LT_SPEECH_MAX_HOURS,
                       LT_SPEECH_MAX_HOURS * 3600 * 100 * LT_SPEECH_MELS * 4 / 1073741824.0);
    if (cfg->cache_dir != NULL && cfg->cache_dir[0] == '\0')
        return lt_fail(LT_E_USAGE, "cache_dir: empty; give a folder, or NULL for no cache");
    return LT_OK;
}

/* The shortest decimal form of x that reads back as x, for file names. */
static void format_hours(char *out, size_t size, double x)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

lt_status lt_speech_cache_path(char *out, size_t size, const lt_speech_config *cfg)
{
    if (cfg->cache_dir == NULL)
        return lt_fail(LT_E_USAGE, "cache_dir: not set, so there is no cache file");
    char hours[32];
    format_hours(hours, sizeof hours, cfg->hours);
    int n = snprintf(out, size, "%s/speech-v%d-h%s-s%llu.ltspeech", cfg->cache_dir,
                     LT_SPEECH_FORMAT_VERSION, hours, (unsigned long long)cfg->seed);
    if (n < 0 || (size_t)n >= size)
        return lt_fail(LT_E_USAGE, "cache_dir: %s makes a path longer than %zu bytes",
                       cfg->cache_dir, size - 1);
    return LT_OK;
}

/* ---- corpus assembly, shared by the build and the cache reader ---- */

static void free_storage(lt_speech_storage *st)
{
    if (st == NULL)
        return;
    lt_ckpt_free(st->ckpt);
    lt_mem_free(st->features);
    lt_mem_free(st->phones);
    lt_mem_free(st->text);
    lt_mem_free(st->recs);
    lt_mem_free(st->speaker_recs);
    lt_mem_free(st->utts);
    lt_mem_free(st->speakers);
    lt_mem_free(st);
}

void lt_speech_free(lt_speech_corpus *c)
{
    free_storage(c->storage);
    memset(c, 0, sizeof *c);
}

static int speaker_set(int speaker)
{
    return speaker >= LT_SPEECH_TRAIN_SPEAKERS;
}

/* Speaker i from its stored record (indices already checked). */
static lt_speech_speaker speaker_of(const int32_t *speaker_recs, int i)
{
    const int32_t *r = speaker_recs + i * SPK_FIELDS;
    const lt_speech_voice_table *t = lt_speech_voices(speaker_set(i));
    return (lt_speech_speaker){t->voices[r[SPK_VOICE]], t->variants[r[SPK_VARIANT]],
                               r[SPK_RATE], r[SPK_PITCH]};
}

/* Points the corpus at verified arrays: utterance records in split order,
 * their features, phones and text, and the speaker records. */
static lt_status assemble(lt_speech_corpus *c, lt_speech_storage *st, const int counts[N_SPLITS],
                          const int32_t *recs, const float *features, const int32_t *phones,
                          const char *text, const int32_t *speaker_recs)
{
    const int n = counts[0] + counts[1] + counts[2];
    LT_TRY(lt_mem_alloc((void **)&st->utts, sizeof(lt_utterance) * (size_t)n, "utterances"));
    LT_TRY(lt_mem_alloc((void **)&st->speakers, sizeof(lt_speech_speaker) * N_SPEAKERS,
                        "speakers"));
    for (int i = 0; i < N_SPEAKERS; i++)
        st->speakers[i] = speaker_of(speaker_recs, i);
    long frame_at = 0, phone_at = 0;
    for (int u = 0; u < n; u++) {
        const int32_t *r = recs + (size_t)u * REC_FIELDS;
        st->utts[u] = (lt_utterance){
            .frames = r[REC_FRAMES],
            .features = features + frame_at * LT_SPEECH_MELS,
            .n_phones = r[REC_PHONES],
            .phones = phones + phone_at,
            .speaker = r[REC_SPEAKER],
            .samples = r[REC_SAMPLES],
            .text = text,
        };
        frame_at += r[REC_FRAMES];
        phone_at += r[REC_PHONES];
        text += strlen(text) + 1;
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

/* ---- the plan ---- */

/* Speakers 0..TRAIN-1 read train and dev, the rest test; no two alike. */
static void draw_speakers(int32_t *recs /* (N_SPEAKERS, SPK_FIELDS) */, uint64_t seed)
{
    lt_rng rng;
    lt_rng_seed(&rng, seed, STREAM_SPEAKERS);
    for (int i = 0; i < N_SPEAKERS; i++) {
        const lt_speech_voice_table *t = lt_speech_voices(speaker_set(i));
        int32_t *r = recs + i * SPK_FIELDS;
        for (int again = 1; again;) {
            r[SPK_VOICE] = (int32_t)lt_rng_below(&rng, (uint64_t)t->n_voices);
            r[SPK_VARIANT] = (int32_t)lt_rng_below(&rng, (uint64_t)t->n_variants);
            r[SPK_RATE] = RATE_MIN + (int32_t)lt_rng_below(&rng, RATE_MAX - RATE_MIN + 1);
            r[SPK_PITCH] = PITCH_MIN + (int32_t)lt_rng_below(&rng, PITCH_MAX - PITCH_MIN + 1);
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

/* ---- building ---- */

typedef struct builder {
    lt_speech_storage *st;
    size_t features_cap, phones_cap, text_cap, recs_cap; /* in elements */
    long total_frames, total_phones;
    size_t text_len;
    int n_utts;
    lt_speech_fbank *fbank;
    lt_speech_synth synth;
    lt_speech_audio audio;
} builder;

static lt_status add_utterance(builder *b, const lt_speech_speaker *speaker, int speaker_id,
                               unsigned rand_seed, const char *text)
{
    lt_speech_storage *st = b->st;
    lt_speech_audio *a = &b->audio;
    LT_TRY(lt_speech_synth_say(&b->synth, a, speaker, rand_seed, text));
    long frames = lt_speech_frame_count(a->n_samples);
    /* CTC needs at least one frame per label. */
    if (a->n_phones < 1 || frames < a->n_phones)
        return lt_fail(LT_E_INTERNAL,
                       "espeak-ng read \"%s\" (voice %s+%s) as %d phones in %ld frames; "
                       "expected at least one phone and no more phones than frames",
                       text, speaker->voice, speaker->variant, a->n_phones, frames);
    LT_TRY(lt_speech_grow((void **)&st->features, &b->features_cap,
                          (size_t)(b->total_frames + frames) * LT_SPEECH_MELS, sizeof(float),
                          "speech features"));
    LT_TRY(lt_speech_grow((void **)&st->phones, &b->phones_cap,
                          (size_t)(b->total_phones + a->n_phones), sizeof(int32_t),
                          "speech phones"));
    size_t len = strlen(text) + 1;
    LT_TRY(lt_speech_grow((void **)&st->text, &b->text_cap, b->text_len + len, 1,
                          "speech text"));
    LT_TRY(lt_speech_grow((void **)&st->recs, &b->recs_cap, (size_t)(b->n_utts + 1) * REC_FIELDS,
                          sizeof(int32_t), "utterance records"));
    lt_speech_fbank_compute(b->fbank, st->features + b->total_frames * LT_SPEECH_MELS,
                            a->samples, a->n_samples);
    memcpy(st->phones + b->total_phones, a->phones, sizeof(int32_t) * (size_t)a->n_phones);
    memcpy(st->text + b->text_len, text, len);
    int32_t *r = st->recs + (size_t)b->n_utts * REC_FIELDS;
    r[REC_FRAMES] = (int32_t)frames;
    r[REC_PHONES] = a->n_phones;
    r[REC_SPEAKER] = speaker_id;
    r[REC_SAMPLES] = (int32_t)a->n_samples;
    b->total_frames += frames;
    b->total_phones += a->n_phones;
    b->text_len += len;
    b->n_utts++;
    return LT_OK;
}

/* Reads the sentences of one split until its share of the hours is spoken
 * (and at least LT_SPEECH_MIN_SPLIT_UTTS of them). */
static lt_status build_split(builder *b, int *count, int split, const lt_speech_config *cfg,
                             const lt_speech_pool *pool, const int *sentences, int n_sentences,
                             const lt_speech_speaker *speakers, double *spoken,
                             lt_progress *progress)
{
    const double target = split_shares[split] * cfg->hours * 3600.0;
    const int first_speaker = split == SPLIT_TEST ? LT_SPEECH_TRAIN_SPEAKERS : 0;
    const int n_speakers =
        split == SPLIT_TEST ? LT_SPEECH_TEST_SPEAKERS : LT_SPEECH_TRAIN_SPEAKERS;
    double seconds = 0;
    int i = 0;
    for (; seconds < target || i < LT_SPEECH_MIN_SPLIT_UTTS; i++) {
        /* Past the split's sentences, they are read again by other draws of
         * speakers (as WSJ's speakers share prompts); splits never share
         * sentences. */
        if (n_sentences < 1)
            return lt_fail(LT_E_USAGE, "hours: the %s split has no sentences",
                           split_names[split]);
        lt_rng rng;
        lt_rng_seed(&rng, cfg->seed, STREAM_UTTS + ((uint64_t)split << 32) + (uint64_t)i);
        int speaker = first_speaker + (int)lt_rng_below(&rng, (uint64_t)n_speakers);
        unsigned rand_seed = (unsigned)(lt_rng_u64(&rng) >> 33);
        LT_TRY(add_utterance(b, &speakers[speaker], speaker, rand_seed,
                             pool->sentences[sentences[i % n_sentences]]));
        double s = (double)b->audio.n_samples / LT_SPEECH_SAMPLE_RATE;
        seconds += s;
        *spoken += s;
        if (progress != NULL) {
            /* Splits round up to whole utterances and a minimum count. */
            if ((long)*spoken > progress->total)
                progress->total = (long)*spoken;
            lt_progress_update(progress, (long)*spoken, split_names[split]);
        }
    }
    *count = i;
    return LT_OK;
}

static lt_status build(lt_speech_corpus *c, const lt_speech_config *cfg,
                       const lt_speech_pool *pool, lt_progress *progress)
{
    LT_TRY(lt_speech_check_voices());
    builder b = {0};
    b.synth.pid = -1;
    b.synth.fd = -1;
    int *order = NULL;
    lt_status status = lt_mem_calloc((void **)&b.st, sizeof *b.st, "speech corpus");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&b.st->speaker_recs,
                              sizeof(int32_t) * N_SPEAKERS * SPK_FIELDS, "speakers");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&order, sizeof(int) * (size_t)pool->count,
                              "sentence order");
    if (status == LT_OK)
        status = lt_speech_fbank_create(&b.fbank);
    if (status == LT_OK)
        status = lt_speech_synth_start(&b.synth);
    lt_speech_speaker speakers[N_SPEAKERS];
    int counts[N_SPLITS] = {0};
    if (status == LT_OK) {
        draw_speakers(b.st->speaker_recs, cfg->seed);
        for (int i = 0; i < N_SPEAKERS; i++)
            speakers[i] = speaker_of(b.st->speaker_recs, i);
        shuffle(order, pool->count, cfg->seed);
        const int held = pool->count / HELD_OUT_DIVISOR;
        /* Where each split's sentences start in the shuffled order. */
        const int start[N_SPLITS] = {2 * held, held, 0};
        const int size[N_SPLITS] = {pool->count - 2 * held, held, held};
        if (progress != NULL)
            progress->total = (long)ceil(cfg->hours * 3600.0);
        double spoken = 0;
        for (int s = 0; s < N_SPLITS && status == LT_OK; s++)
            status = build_split(&b, &counts[s], s, cfg, pool, order + start[s], size[s],
                                 speakers, &spoken, progress);
        if (progress != NULL)
            lt_progress_finish(progress, status == LT_OK ? "done" : "failed");
    }
    lt_speech_synth_stop(&b.synth, status != LT_OK);
    lt_speech_fbank_free(b.fbank);
    lt_mem_free(b.audio.samples);
    lt_mem_free(b.audio.phones);
    lt_mem_free(order);
    if (status == LT_OK)
        status = assemble(c, b.st, counts, b.st->recs, b.st->features, b.st->phones, b.st->text,
                          b.st->speaker_recs);
    if (status != LT_OK) {
        free_storage(b.st);
        memset(c, 0, sizeof *c);
    }
    return status;
}

/* ---- the cache file ----
 *
 * A checkpoint container (io/checkpoint.h: checksummed, written atomically)
 * with these sections, arrays in host byte order:
 *   speech.header    HEADER_BYTES, little-endian fields at the offsets below
 *   speech.speakers  int32 (N_SPEAKERS, SPK_FIELDS)
 *   speech.utts      int32 (utterances, REC_FIELDS), train then dev then test
 *   speech.text      the sentences, each NUL-terminated, in utterance order
 *   speech.features  float32 (total frames, LT_SPEECH_MELS)
 *   speech.phones    int32 (total phones) */

static const unsigned char header_magic[8] = {'L', 'T', 'S', 'P', 'E', 'E', 'C', 'H'};

enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_RATE = 12,
    H_MELS = 16,
    H_PHONES = 20,
    H_HOURS = 24,
    H_SEED = 32,
    H_POOL_COUNT = 40,
    H_POOL_CRC = 44,
    H_ESPEAK = 48, /* 32 bytes, NUL-padded */
    H_SPEAKERS = 80,
    H_TRAIN_SPEAKERS = 84,
    H_COUNTS = 88, /* 3 x u32 */
    H_TOTAL_FRAMES = 104,
    H_TOTAL_PHONES = 112,
    H_TEXT_BYTES = 120,
    HEADER_BYTES = 128
};

static lt_status write_cache(const lt_speech_corpus *c, const lt_speech_cache_info *info,
                             const char *path)
{
    const lt_speech_storage *st = c->storage;
    const int n = c->train.count + c->dev.count + c->test.count;
    const long frames = c->train.frames + c->dev.frames + c->test.frames;
    const long phones = c->train.phones + c->dev.phones + c->test.phones;
    size_t text_bytes = 0;
    for (int u = 0; u < n; u++)
        text_bytes += strlen(st->utts[u].text) + 1;
    unsigned char h[HEADER_BYTES] = {0};
    memcpy(h + H_MAGIC, header_magic, sizeof header_magic);
    lt_put_u32(h + H_VERSION, LT_SPEECH_FORMAT_VERSION);
    lt_put_u32(h + H_RATE, LT_SPEECH_SAMPLE_RATE);
    lt_put_u32(h + H_MELS, LT_SPEECH_MELS);
    lt_put_u32(h + H_PHONES, LT_SPEECH_PHONES);
    uint64_t hours_bits;
    memcpy(&hours_bits, &info->hours, sizeof hours_bits);
    lt_put_u64(h + H_HOURS, hours_bits);
    lt_put_u64(h + H_SEED, info->seed);
    lt_put_u32(h + H_POOL_COUNT, info->pool_sentences);
    lt_put_u32(h + H_POOL_CRC, info->pool_crc);
    memcpy(h + H_ESPEAK, info->espeak_version, sizeof info->espeak_version);
    lt_put_u32(h + H_SPEAKERS, N_SPEAKERS);
    lt_put_u32(h + H_TRAIN_SPEAKERS, LT_SPEECH_TRAIN_SPEAKERS);
    lt_put_u32(h + H_COUNTS, (uint32_t)c->train.count);
    lt_put_u32(h + H_COUNTS + 4, (uint32_t)c->dev.count);
    lt_put_u32(h + H_COUNTS + 8, (uint32_t)c->test.count);
    lt_put_u64(h + H_TOTAL_FRAMES, (uint64_t)frames);
    lt_put_u64(h + H_TOTAL_PHONES, (uint64_t)phones);
    lt_put_u64(h + H_TEXT_BYTES, text_bytes);
    lt_ckpt_writer *w;
    LT_TRY(lt_ckpt_writer_open(&w, path));
    lt_status status = lt_ckpt_writer_add(w, "speech.header", h, sizeof h);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "speech.speakers", st->speaker_recs,
                                    sizeof(int32_t) * N_SPEAKERS * SPK_FIELDS);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "speech.utts", st->recs,
                                    sizeof(int32_t) * (size_t)n * REC_FIELDS);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "speech.text", st->text, text_bytes);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "speech.features", st->features,
                                    sizeof(float) * (size_t)frames * LT_SPEECH_MELS);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "speech.phones", st->phones,
                                    sizeof(int32_t) * (size_t)phones);
    if (status != LT_OK) {
        lt_ckpt_writer_abort(w);
        return status;
    }
    return lt_ckpt_writer_commit(w);
}

/* Finds a section of exactly `bytes` bytes. */
static lt_status section(const lt_ckpt *ck, const char *name, uint64_t bytes, const void **data)
{
    size_t found;
    LT_TRY(lt_ckpt_find(ck, name, data, &found));
    if ((uint64_t)found != bytes)
        return lt_fail(LT_E_INPUT, "%s: section %s holds %zu bytes, expected %llu",
                       lt_ckpt_path(ck), name, found, (unsigned long long)bytes);
    return LT_OK;
}

static lt_status check_speakers(const char *path, const int32_t *recs)
{
    for (int i = 0; i < N_SPEAKERS; i++) {
        const int32_t *r = recs + i * SPK_FIELDS;
        const lt_speech_voice_table *t = lt_speech_voices(speaker_set(i));
        if (r[SPK_VOICE] < 0 || r[SPK_VOICE] >= t->n_voices || r[SPK_VARIANT] < 0 ||
            r[SPK_VARIANT] >= t->n_variants || r[SPK_RATE] < RATE_MIN ||
            r[SPK_RATE] > RATE_MAX || r[SPK_PITCH] < PITCH_MIN || r[SPK_PITCH] > PITCH_MAX)
            return lt_fail(LT_E_INPUT, "%s: speaker %d is not a valid (voice, variant, rate, "
                           "pitch)", path, i);
    }
    return LT_OK;
}

static lt_status check_utterances(const char *path, const int32_t *recs, const int counts[N_SPLITS],
                                  uint64_t total_frames, uint64_t total_phones)
{
    uint64_t frames = 0, phones = 0;
    int u = 0;
    for (int s = 0; s < N_SPLITS; s++)
        for (int i = 0; i < counts[s]; i++, u++) {
            const int32_t *r = recs + (size_t)u * REC_FIELDS;
            int speaker = r[REC_SPEAKER];
            int speaker_ok = s == SPLIT_TEST
                                 ? speaker >= LT_SPEECH_TRAIN_SPEAKERS && speaker < N_SPEAKERS
                                 : speaker >= 0 && speaker < LT_SPEECH_TRAIN_SPEAKERS;
            if (r[REC_SAMPLES] < 0 || r[REC_PHONES] < 1 || r[REC_FRAMES] < r[REC_PHONES] ||
                r[REC_FRAMES] != lt_speech_frame_count(r[REC_SAMPLES]) || !speaker_ok)
                return lt_fail(LT_E_INPUT,
                               "%s: %s utterance %d has inconsistent sizes or speaker "
                               "(%d frames, %d phones, %d samples, speaker %d)",
                               path, split_names[s], i, r[REC_FRAMES], r[REC_PHONES],
                               r[REC_SAMPLES], speaker);
            frames += (uint64_t)r[REC_FRAMES];
            phones += (uint64_t)r[REC_PHONES];
        }
    if (frames != total_frames || phones != total_phones)
        return lt_fail(LT_E_INPUT,
                       "%s: utterances add up to %llu frames and %llu phones, the header says "
                       "%llu and %llu", path, (unsigned long long)frames,
                       (unsigned long long)phones, (unsigned long long)total_frames,
                       (unsigned long long)total_phones);
    return LT_OK;
}

/* n NUL-terminated sentences filling exactly `bytes`, each passing the
 * sentence filter. */
static lt_status check_text(const char *path, const char *text, uint64_t bytes, int n)
{
    uint64_t at = 0;
    for (int u = 0; u < n; u++) {
        const char *end = at < bytes ? memchr(text + at, '\0', (size_t)(bytes - at)) : NULL;
        if (end == NULL || !lt_speech_sentence_ok(text + at))
            return lt_fail(LT_E_INPUT, "%s: sentence %d is missing or not a valid sentence",
                           path, u);
        at = (uint64_t)(end - text) + 1;
    }
    if (at != bytes)
        return lt_fail(LT_E_INPUT, "%s: %llu bytes of text follow the last sentence", path,
                       (unsigned long long)(bytes - at));
    return LT_OK;
}

/* Reads the header into info; fails for anything but this format version
 * with this build's constants. */
static lt_status read_header(lt_speech_cache_info *info, const lt_ckpt *ck, int counts[N_SPLITS],
                             uint64_t *frames, uint64_t *phones, uint64_t *text_bytes)
{
    const char *path = lt_ckpt_path(ck);
    const unsigned char *h;
    size_t bytes;
    LT_TRY(lt_ckpt_find(ck, "speech.header", (const void **)&h, &bytes));
    if (bytes < H_VERSION + 4 || memcmp(h, header_magic, sizeof header_magic) != 0)
        return lt_fail(LT_E_INPUT, "%s: not a speech corpus cache (bad header)", path);
    info->format_version = lt_get_u32(h + H_VERSION);
    if (info->format_version != LT_SPEECH_FORMAT_VERSION)
        return lt_fail(LT_E_INPUT, "%s: cache format version %u, expected %d", path,
                       (unsigned)info->format_version, LT_SPEECH_FORMAT_VERSION);
    if (bytes != HEADER_BYTES)
        return lt_fail(LT_E_INPUT, "%s: header of %zu bytes, expected %d", path, bytes,
                       HEADER_BYTES);
    if (lt_get_u32(h + H_RATE) != LT_SPEECH_SAMPLE_RATE || lt_get_u32(h + H_MELS) != LT_SPEECH_MELS ||
        lt_get_u32(h + H_PHONES) != LT_SPEECH_PHONES || lt_get_u32(h + H_SPEAKERS) != N_SPEAKERS ||
        lt_get_u32(h + H_TRAIN_SPEAKERS) != LT_SPEECH_TRAIN_SPEAKERS)
        return lt_fail(LT_E_INPUT,
                       "%s: header constants (sample rate, mels, phones, speakers) differ from "
                       "format version %d's", path, LT_SPEECH_FORMAT_VERSION);
    uint64_t hours_bits = lt_get_u64(h + H_HOURS);
    memcpy(&info->hours, &hours_bits, sizeof info->hours);
    info->seed = lt_get_u64(h + H_SEED);
    info->pool_sentences = lt_get_u32(h + H_POOL_COUNT);
    info->pool_crc = lt_get_u32(h + H_POOL_CRC);
    memcpy(info->espeak_version, h + H_ESPEAK, sizeof info->espeak_version);
    if (info->espeak_version[sizeof info->espeak_version - 1] != '\0')
        return lt_fail(LT_E_INPUT, "%s: unterminated espeak-ng version in the header", path);
    uint64_t total = 0;
    for (int s = 0; s < N_SPLITS; s++) {
        uint32_t n = lt_get_u32(h + H_COUNTS + 4 * s);
        if (n < 1 || n > MAX_CACHE_UTTS)
            return lt_fail(LT_E_INPUT, "%s: %s split of %u utterances, expected 1..%d", path,
                           split_names[s], (unsigned)n, MAX_CACHE_UTTS);
        counts[s] = (int)n;
        total += n;
    }
    if (total > MAX_CACHE_UTTS)
        return lt_fail(LT_E_INPUT, "%s: %llu utterances, expected at most %d", path,
                       (unsigned long long)total, MAX_CACHE_UTTS);
    *frames = lt_get_u64(h + H_TOTAL_FRAMES);
    *phones = lt_get_u64(h + H_TOTAL_PHONES);
    *text_bytes = lt_get_u64(h + H_TEXT_BYTES);
    /* Bounds that keep the byte counts below from overflowing; the exact
     * sizes are checked against the sections. */
    const uint64_t limit = (uint64_t)1 << 40;
    if (*frames > limit || *phones > limit || *text_bytes > limit)
        return lt_fail(LT_E_INPUT, "%s: implausible totals in the header", path);
    return LT_OK;
}

static lt_status read_cache(lt_speech_corpus *c, lt_speech_cache_info *info, lt_ckpt *ck,
                            lt_speech_storage *st)
{
    const char *path = lt_ckpt_path(ck);
    int counts[N_SPLITS];
    uint64_t frames = 0, phones = 0, text_bytes = 0;
    LT_TRY(read_header(info, ck, counts, &frames, &phones, &text_bytes));
    const int n = counts[0] + counts[1] + counts[2];
    const int32_t *speaker_recs, *recs, *phone_ids;
    const float *features;
    const char *text;
    LT_TRY(section(ck, "speech.speakers", sizeof(int32_t) * N_SPEAKERS * SPK_FIELDS,
                   (const void **)&speaker_recs));
    LT_TRY(section(ck, "speech.utts", sizeof(int32_t) * (uint64_t)n * REC_FIELDS,
                   (const void **)&recs));
    LT_TRY(section(ck, "speech.text", text_bytes, (const void **)&text));
    LT_TRY(section(ck, "speech.features", sizeof(float) * frames * LT_SPEECH_MELS,
                   (const void **)&features));
    LT_TRY(section(ck, "speech.phones", sizeof(int32_t) * phones, (const void **)&phone_ids));
    if (lt_ckpt_count(ck) != 6)
        return lt_fail(LT_E_INPUT, "%s: %zu sections, expected 6", path, lt_ckpt_count(ck));
    LT_TRY(check_speakers(path, speaker_recs));
    LT_TRY(check_utterances(path, recs, counts, frames, phones));
    LT_TRY(check_text(path, text, text_bytes, n));
    for (uint64_t i = 0; i < phones; i++)
        if (phone_ids[i] < 0 || phone_ids[i] >= LT_SPEECH_PHONES)
            return lt_fail(LT_E_INPUT, "%s: phone %llu is %d, expected 0..%d", path,
                           (unsigned long long)i, (int)phone_ids[i], LT_SPEECH_PHONES - 1);
    for (uint64_t i = 0; i < frames * LT_SPEECH_MELS; i++)
        if (!isfinite(features[i]))
            return lt_fail(LT_E_INPUT, "%s: feature %llu is not finite", path,
                           (unsigned long long)i);
    return assemble(c, st, counts, recs, features, phone_ids, text, speaker_recs);
}

lt_status lt_speech_cache_read(lt_speech_corpus *c, lt_speech_cache_info *info, const char *path)
{
    memset(c, 0, sizeof *c);
    memset(info, 0, sizeof *info);
    lt_speech_storage *st;
    LT_TRY(lt_mem_calloc((void **)&st, sizeof *st, "speech corpus"));
    lt_status status = lt_ckpt_read(&st->ckpt, path);
    if (status == LT_OK)
        status = read_cache(c, info, st->ckpt, st);
    if (status != LT_OK) {
        free_storage(st);
        memset(c, 0, sizeof *c);
    }
    return status;
}

/* ---- loading ---- */

static void notify(const lt_speech_config *cfg, const char *fmt, const char *path,
                   const char *why)
{
    if (cfg->notice == NULL)
        return;
    char msg[1024];
    snprintf(msg, sizeof msg, fmt, path, why);
    cfg->notice(cfg->notice_ctx, msg);
}

/* Why a readable cache of the current format does not match, or NULL. */
static const char *mismatch(char *buf, size_t size, const lt_speech_cache_info *got,
                            const lt_speech_cache_info *want)
{
    if (got->hours != want->hours)
        snprintf(buf, size, "made for %g hours, not %g", got->hours, want->hours);
    else if (got->seed != want->seed)
        snprintf(buf, size, "made with seed %llu, not %llu", (unsigned long long)got->seed,
                 (unsigned long long)want->seed);
    else if (got->pool_sentences != want->pool_sentences || got->pool_crc != want->pool_crc)
        snprintf(buf, size, "made from another WordNet sentence pool (%u sentences, now %u)",
                 (unsigned)got->pool_sentences, (unsigned)want->pool_sentences);
    else if (strcmp(got->espeak_version, want->espeak_version) != 0)
        snprintf(buf, size, "made with espeak-ng %s, not %s", got->espeak_version,
                 want->espeak_version);
    else
        return NULL;
    return buf;
}

lt_status lt_speech_load(lt_speech_corpus *c, const lt_speech_config *cfg, lt_progress *progress,
                         lt_speech_origin *origin)
{
    memset(c, 0, sizeof *c);
    *origin = LT_SPEECH_SYNTHESISED;
    LT_TRY(lt_speech_check_config(cfg));
    char path[4096] = "";
    if (cfg->cache_dir != NULL)
        LT_TRY(lt_speech_cache_path(path, sizeof path, cfg));
    lt_speech_pool pool;
    LT_TRY(lt_speech_pool_load(&pool, cfg->wordnet_dir));
    lt_speech_cache_info want = {
        .format_version = LT_SPEECH_FORMAT_VERSION,
        .hours = cfg->hours,
        .seed = cfg->seed,
        .pool_sentences = (uint32_t)pool.count,
        .pool_crc = pool.crc,
    };
    snprintf(want.espeak_version, sizeof want.espeak_version, "%s", lt_speech_espeak_version());
    struct stat sb;
    if (path[0] != '\0' && stat(path, &sb) == 0) {
        lt_speech_cache_info got;
        lt_status st = lt_speech_cache_read(c, &got, path);
        char why[256];
        if (st == LT_OK && mismatch(why, sizeof why, &got, &want) == NULL) {
            lt_speech_pool_free(&pool);
            *origin = LT_SPEECH_FROM_CACHE;
            return LT_OK;
        }
        if (st == LT_OK) {
            lt_speech_free(c);
            *origin = LT_SPEECH_REBUILT_STALE;
            notify(cfg, "speech cache %s is stale (%s); rebuilding it", path, why);
        } else if (st == LT_E_INPUT && got.format_version != 0 &&
                   got.format_version != LT_SPEECH_FORMAT_VERSION) {
            *origin = LT_SPEECH_REBUILT_STALE;
            notify(cfg, "speech cache %s is stale (%s); rebuilding it", path, lt_last_error());
        } else if (st == LT_E_INPUT) {
            *origin = LT_SPEECH_REBUILT_CORRUPT;
            notify(cfg, "speech cache %s is damaged (%s); rebuilding it", path, lt_last_error());
        } else {
            lt_speech_pool_free(&pool);
            return st;
        }
    }
    lt_status status = build(c, cfg, &pool, progress);
    lt_speech_pool_free(&pool);
    if (status == LT_OK && path[0] != '\0') {
        status = write_cache(c, &want, path);
        if (status != LT_OK)
            lt_speech_free(c);
    }
    return status;
}
