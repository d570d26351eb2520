/* The speech corpus: settings, the cache and loading. Assembly is in
 * speech_corpus.c, the build (the plan and the synthesis) in
 * speech_build.c, both below this file (neither calls it); audio comes from
 * speech_synth.c, features from speech_features.c, sentences from
 * speech_text.c.
 *
 * Still over 600 lines after that split: the cache file's writer and reader
 * (about 380 lines) share its private header offsets and section names, and
 * the reader checks every section against the others before it assembles a
 * corpus, so the cache stays whole here beside the loader that uses it. */
#include "datasets/speech.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "datasets/speech_internal.h"
#include "io/bytes.h"
#include "io/checkpoint.h"

enum { SPLIT_TEST = LT_SPEECH_SPLIT_TEST };
#define split_names lt_speech_split_names

/* A cache claiming more utterances than this is damaged: even
 * LT_SPEECH_MAX_HOURS of a few seconds each stay far below it. */
#define MAX_CACHE_UTTS 1000000

const char *const lt_speech_split_names[LT_SPEECH_N_SPLITS] = {"train", "dev", "test"};

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
    if (cfg->utterance_frames != 0 &&
        (cfg->utterance_frames < LT_SPEECH_MIN_UTTERANCE_FRAMES ||
         cfg->utterance_frames > LT_SPEECH_MAX_UTTERANCE_FRAMES))
        return lt_fail(LT_E_USAGE,
                       "utterance_frames: %d is neither 0 (one sentence per utterance) nor a "
                       "mean length in [%d, %d] frames (WSJ: about 800): below, most "
                       "utterances would be one sentence of about 210 frames anyway; above, "
                       "the longest (%d times the mean) would pass %d frames",
                       cfg->utterance_frames, LT_SPEECH_MIN_UTTERANCE_FRAMES,
                       LT_SPEECH_MAX_UTTERANCE_FRAMES, LT_SPEECH_JOIN_MAX_RATIO,
                       LT_SPEECH_JOIN_MAX_RATIO * LT_SPEECH_MAX_UTTERANCE_FRAMES);
    if (cfg->workers < 0 || cfg->workers > LT_SPEECH_MAX_WORKERS)
        return lt_fail(LT_E_USAGE,
                       "workers: %d is outside [0, %d] (0: one per thread in force)",
                       cfg->workers, LT_SPEECH_MAX_WORKERS);
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
    /* One sentence per utterance keeps the name it had before joined
     * utterances existed, so those caches are still found. */
    char join[32] = "";
    if (cfg->utterance_frames != 0)
        snprintf(join, sizeof join, "-u%d", cfg->utterance_frames);
    int n = snprintf(out, size, "%s/speech-v%d-h%s-s%llu%s.ltspeech", cfg->cache_dir,
                     LT_SPEECH_FORMAT_VERSION, hours, (unsigned long long)cfg->seed, join);
    if (n < 0 || (size_t)n >= size)
        return lt_fail(LT_E_USAGE, "cache_dir: %s makes a path longer than %zu bytes",
                       cfg->cache_dir, size - 1);
    return LT_OK;
}

int lt_speech_positions(int frames, int stack)
{
    LT_ASSERT(stack >= 1 && frames >= 0);
    return (frames + stack - 1) / stack;
}

lt_speech_lengths lt_speech_split_lengths(const lt_speech_split *s, int stack)
{
    lt_speech_lengths l = {.utterances = s->count};
    if (s->count == 0)
        return l;
    long frames = 0, positions = 0, phones = 0, sentences = 0;
    for (int u = 0; u < s->count; u++) {
        const lt_utterance *ut = &s->utts[u];
        const int p = lt_speech_positions(ut->frames, stack);
        frames += ut->frames;
        positions += p;
        phones += ut->n_phones;
        sentences += ut->n_pieces;
        l.max_frames = ut->frames > l.max_frames ? ut->frames : l.max_frames;
        l.max_positions = p > l.max_positions ? p : l.max_positions;
        l.max_phones = ut->n_phones > l.max_phones ? ut->n_phones : l.max_phones;
    }
    l.mean_frames = (double)frames / s->count;
    l.mean_positions = (double)positions / s->count;
    l.mean_phones = (double)phones / s->count;
    l.mean_sentences = (double)sentences / s->count;
    return l;
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
 *   speech.phones    int32 (total phones)
 * and, for joined utterances only (one sentence per utterance writes the
 * six above exactly as before they existed), three more:
 *   speech.join         int32 utterance_frames, total pieces
 *   speech.piece_counts int32 (utterances) sentences in each
 *   speech.pieces       int32 (total pieces, LT_SPEECH_PIECE_FIELDS)
 * where each utterance's text is its sentences separated by one space. */

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
    if (status == LT_OK && st->piece_counts != NULL) {
        const long pieces = lt_speech_total_pieces(st, n);
        const int32_t join[2] = {info->utterance_frames, (int32_t)pieces};
        status = lt_ckpt_writer_add(w, "speech.join", join, sizeof join);
        if (status == LT_OK)
            status = lt_ckpt_writer_add(w, "speech.piece_counts", st->piece_counts,
                                        sizeof(int32_t) * (size_t)n);
        if (status == LT_OK)
            status = lt_ckpt_writer_add(w, "speech.pieces", st->piece_recs,
                                        sizeof(int32_t) * (size_t)pieces * PIECE_FIELDS);
    }
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
        const lt_speech_voice_table *t = lt_speech_voices(lt_speech_speaker_set(i));
        if (r[SPK_VOICE] < 0 || r[SPK_VOICE] >= t->n_voices || r[SPK_VARIANT] < 0 ||
            r[SPK_VARIANT] >= t->n_variants || r[SPK_RATE] < LT_SPEECH_RATE_MIN ||
            r[SPK_RATE] > LT_SPEECH_RATE_MAX || r[SPK_PITCH] < LT_SPEECH_PITCH_MIN ||
            r[SPK_PITCH] > LT_SPEECH_PITCH_MAX)
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

/* The sentences of a joined corpus: per utterance a count, per sentence
 * sizes that add up to the utterance's, pauses in the drawn range between
 * sentences and none after the last, and no utterance longer than the
 * longest the mean allows. */
static lt_status check_pieces(const char *path, const int32_t join[2], const int32_t *piece_counts,
                              const int32_t *piece_recs, const int32_t *recs, int n)
{
    const int mean = join[0];
    if (mean < LT_SPEECH_MIN_UTTERANCE_FRAMES || mean > LT_SPEECH_MAX_UTTERANCE_FRAMES)
        return lt_fail(LT_E_INPUT, "%s: utterance_frames %d outside [%d, %d]", path, mean,
                       LT_SPEECH_MIN_UTTERANCE_FRAMES, LT_SPEECH_MAX_UTTERANCE_FRAMES);
    const long total = join[1];
    long at = 0;
    for (int u = 0; u < n; u++) {
        const int32_t *r = recs + (size_t)u * REC_FIELDS;
        const int count = piece_counts[u];
        if (count < 1 || count > total - at)
            return lt_fail(LT_E_INPUT, "%s: utterance %d claims %d sentences, %ld are left", path,
                           u, count, total - at);
        int64_t samples = 0, phones = 0;
        for (int p = 0; p < count; p++, at++) {
            const int32_t *pr = piece_recs + (size_t)at * PIECE_FIELDS;
            const int last = p == count - 1;
            const int pause_ok = last ? pr[P_PAUSE] == 0
                                      : pr[P_PAUSE] >= LT_SPEECH_PAUSE_MIN_SAMPLES &&
                                            pr[P_PAUSE] <= LT_SPEECH_PAUSE_MAX_SAMPLES;
            if (pr[P_SAMPLES] < 0 || pr[P_PHONES] < 1 || pr[P_TEXT] < 1 || pr[P_SEED] < 0 ||
                !pause_ok)
                return lt_fail(LT_E_INPUT,
                               "%s: sentence %d of utterance %d has impossible sizes (%d samples, "
                               "%d pause, %d phones, %d text bytes, seed %d)", path, p, u,
                               pr[P_SAMPLES], pr[P_PAUSE], pr[P_PHONES], pr[P_TEXT], pr[P_SEED]);
            samples += (int64_t)pr[P_SAMPLES] + pr[P_PAUSE];
            phones += pr[P_PHONES];
        }
        if (samples != r[REC_SAMPLES] || phones != r[REC_PHONES])
            return lt_fail(LT_E_INPUT,
                           "%s: the sentences of utterance %d add up to %lld samples and %lld "
                           "phones, the utterance has %d and %d", path, u, (long long)samples,
                           (long long)phones, r[REC_SAMPLES], r[REC_PHONES]);
        if (r[REC_FRAMES] > LT_SPEECH_JOIN_MAX_RATIO * mean)
            return lt_fail(LT_E_INPUT, "%s: utterance %d has %d frames, more than the %d of "
                           "utterance_frames %d", path, u, r[REC_FRAMES],
                           LT_SPEECH_JOIN_MAX_RATIO * mean, mean);
    }
    if (at != total)
        return lt_fail(LT_E_INPUT, "%s: %ld sentences listed, the utterances hold %ld", path,
                       total, at);
    return LT_OK;
}

/* n NUL-terminated texts filling exactly `bytes`. Each is one sentence
 * passing the sentence filter, or for joined corpora (piece_counts set) its
 * sentences of the recorded lengths separated by single spaces. */
static lt_status check_text(const char *path, const char *text, uint64_t bytes, int n,
                            const int32_t *piece_counts, const int32_t *piece_recs)
{
    uint64_t at = 0;
    char sentence[LT_SPEECH_MAX_SENTENCE_BYTES + 1];
    for (int u = 0; u < n; u++) {
        const char *end = at < bytes ? memchr(text + at, '\0', (size_t)(bytes - at)) : NULL;
        if (end == NULL)
            return lt_fail(LT_E_INPUT, "%s: text %d is missing", path, u);
        const uint64_t len = (uint64_t)(end - text) - at;
        const int count = piece_counts != NULL ? piece_counts[u] : 1;
        uint64_t pos = 0;
        for (int p = 0; p < count; p++) {
            uint64_t part = piece_counts != NULL ? (uint64_t)piece_recs[P_TEXT] : len;
            piece_recs += piece_counts != NULL ? PIECE_FIELDS : 0;
            const int last = p == count - 1;
            if (part > LT_SPEECH_MAX_SENTENCE_BYTES || part > len - pos ||
                (last ? pos + part != len : text[at + pos + part] != ' '))
                return lt_fail(LT_E_INPUT, "%s: sentence %d of text %d does not fit its text",
                               path, p, u);
            memcpy(sentence, text + at + pos, (size_t)part);
            sentence[part] = '\0';
            if (!lt_speech_sentence_ok(sentence))
                return lt_fail(LT_E_INPUT, "%s: sentence %d of text %d is not a valid sentence",
                               path, p, u);
            pos += part + 1;
        }
        at += len + 1;
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
    const int32_t *join = NULL, *piece_counts = NULL, *piece_recs = NULL;
    const int joined = lt_ckpt_has(ck, "speech.join");
    if (joined) {
        LT_TRY(section(ck, "speech.join", sizeof(int32_t) * 2, (const void **)&join));
        /* The section sizes bound the count from above. */
        if (join[1] < 1)
            return lt_fail(LT_E_INPUT, "%s: %d sentences, expected at least 1", path, join[1]);
        LT_TRY(section(ck, "speech.piece_counts", sizeof(int32_t) * (uint64_t)n,
                       (const void **)&piece_counts));
        LT_TRY(section(ck, "speech.pieces", sizeof(int32_t) * (uint64_t)join[1] * PIECE_FIELDS,
                       (const void **)&piece_recs));
        info->utterance_frames = join[0];
    }
    const size_t want_sections = joined ? 9 : 6;
    if (lt_ckpt_count(ck) != want_sections)
        return lt_fail(LT_E_INPUT, "%s: %zu sections, expected %zu", path, lt_ckpt_count(ck),
                       want_sections);
    LT_TRY(check_speakers(path, speaker_recs));
    LT_TRY(check_utterances(path, recs, counts, frames, phones));
    if (joined)
        LT_TRY(check_pieces(path, join, piece_counts, piece_recs, recs, n));
    LT_TRY(check_text(path, text, text_bytes, n, piece_counts, piece_recs));
    for (uint64_t i = 0; i < phones; i++)
        if (phone_ids[i] < 0 || phone_ids[i] >= LT_SPEECH_PHONES)
            return lt_fail(LT_E_INPUT, "%s: phone %llu is %d, expected 0..%d", path,
                           (unsigned long long)i, (int)phone_ids[i], LT_SPEECH_PHONES - 1);
    for (uint64_t i = 0; i < frames * LT_SPEECH_MELS; i++)
        if (!isfinite(features[i]))
            return lt_fail(LT_E_INPUT, "%s: feature %llu is not finite", path,
                           (unsigned long long)i);
    /* Pointers into the checkpoint, which the storage does not free. */
    st->recs = (int32_t *)recs;
    st->features = (float *)features;
    st->phones = (int32_t *)phone_ids;
    st->text = (char *)text;
    st->speaker_recs = (int32_t *)speaker_recs;
    st->piece_counts = (int32_t *)piece_counts;
    st->piece_recs = (int32_t *)piece_recs;
    lt_speech_layout layout = {.counts = {counts[0], counts[1], counts[2]},
                               .utterance_frames = info->utterance_frames, .seed = info->seed};
    return lt_speech_assemble(c, st, &layout);
}

lt_status lt_speech_cache_read(lt_speech_corpus *c, lt_speech_cache_info *info, const char *path)
{
    memset(c, 0, sizeof *c);
    memset(info, 0, sizeof *info);
    lt_speech_storage *st;
    LT_TRY(lt_mem_calloc((void **)&st, sizeof *st, "speech corpus"));
    lt_status status = lt_ckpt_read_as(&st->ckpt, path, "speech cache");
    if (status == LT_OK)
        status = read_cache(c, info, st->ckpt, st);
    if (status != LT_OK) {
        lt_speech_storage_free(st);
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
    else if (got->utterance_frames != want->utterance_frames)
        snprintf(buf, size, "made with utterance_frames %d, not %d", got->utterance_frames,
                 want->utterance_frames);
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
        .utterance_frames = cfg->utterance_frames,
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
    lt_status status = lt_speech_build(c, cfg, &pool, progress);
    lt_speech_pool_free(&pool);
    if (status == LT_OK && path[0] != '\0') {
        status = write_cache(c, &want, path);
        if (status != LT_OK)
            lt_speech_free(c);
    }
    return status;
}
