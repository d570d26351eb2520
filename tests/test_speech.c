#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <espeak-ng/speak_lib.h>
#include <zlib.h>

#include "check.h"
#include "core/mem.h"
#include "core/rng.h"
#include "datasets/speech.h"
#include "datasets/speech_internal.h"
#include "io/checkpoint.h"

/* A few seconds of audio per split: builds take a fraction of a second. */
#define TINY_HOURS 0.005

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lt_speech_test_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void cleanup_tmpdir(void) { check_remove_tree(tmpdir); }

TestSuite(speech, .init = make_tmpdir, .fini = cleanup_tmpdir);

typedef struct notices {
    int count;
    char last[1024];
} notices;

static void collect_notice(void *ctx, const char *message)
{
    notices *n = ctx;
    n->count++;
    snprintf(n->last, sizeof n->last, "%s", message);
}

static lt_speech_config tiny_config(uint64_t seed, notices *n)
{
    return (lt_speech_config){.hours = TINY_HOURS, .seed = seed, .cache_dir = tmpdir,
                              .notice = collect_notice, .notice_ctx = n};
}

static const char *cache_file(const lt_speech_config *cfg)
{
    static char path[4096];
    cr_assert_eq(lt_speech_cache_path(path, sizeof path, cfg), LT_OK, "%s", lt_last_error());
    return path;
}

static void load_expecting(lt_speech_corpus *c, const lt_speech_config *cfg,
                           lt_speech_origin expected)
{
    lt_speech_origin origin = (lt_speech_origin)-1;
    lt_status st = lt_speech_load(c, cfg, NULL, &origin);
    cr_assert_eq(st, LT_OK, "load: %s", lt_last_error());
    cr_assert_eq(origin, expected, "origin %d, expected %d", origin, expected);
}

static unsigned char *read_file(const char *path, size_t *size)
{
    unsigned char *buf = check_read_file(path, size);
    cr_assert_not_null(buf, "%s", path);
    return buf;
}

static void write_file(const char *path, const void *data, size_t size)
{
    cr_assert_eq(check_write_file(path, data, size), 0, "%s", path);
}

static void assert_same_file(const char *path, const unsigned char *want, size_t want_size)
{
    size_t size;
    unsigned char *got = read_file(path, &size);
    cr_assert_eq(size, want_size, "%s: %zu bytes, expected %zu", path, size, want_size);
    cr_assert(memcmp(got, want, size) == 0, "%s differs from the first build", path);
    free(got);
}

static int all_utterances(const lt_speech_corpus *c, const lt_utterance **out)
{
    int n = 0;
    const lt_speech_split *splits[3] = {&c->train, &c->dev, &c->test};
    for (int s = 0; s < 3; s++)
        for (int u = 0; u < splits[s]->count; u++)
            out[n++] = &splits[s]->utts[u];
    return n;
}

static void assert_same_corpus(const lt_speech_corpus *a, const lt_speech_corpus *b)
{
    const lt_utterance *ua[4096], *ub[4096];
    int n = all_utterances(a, ua);
    cr_assert_eq(all_utterances(b, ub), n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(ua[i]->frames, ub[i]->frames);
        cr_assert_eq(ua[i]->n_phones, ub[i]->n_phones);
        cr_assert_eq(ua[i]->speaker, ub[i]->speaker);
        cr_assert_str_eq(ua[i]->text, ub[i]->text);
        cr_assert(memcmp(ua[i]->features, ub[i]->features,
                         sizeof(float) * (size_t)ua[i]->frames * LT_SPEECH_MELS) == 0);
        cr_assert(memcmp(ua[i]->phones, ub[i]->phones, sizeof(int32_t) * (size_t)ua[i]->n_phones) ==
                  0);
    }
}

/* crc32 of everything a corpus holds, in split order: sizes, speakers,
 * text, phones and the feature bytes. */
static uint32_t corpus_crc(const lt_speech_corpus *c)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    const lt_speech_split *splits[3] = {&c->train, &c->dev, &c->test};
    for (int s = 0; s < 3; s++) {
        crc = crc32(crc, (const Bytef *)&splits[s]->count, sizeof(int));
        for (int u = 0; u < splits[s]->count; u++) {
            const lt_utterance *ut = &splits[s]->utts[u];
            const int32_t sizes[4] = {ut->frames, ut->n_phones, ut->speaker, (int32_t)ut->samples};
            crc = crc32(crc, (const Bytef *)sizes, sizeof sizes);
            crc = crc32(crc, (const Bytef *)ut->text, (uInt)strlen(ut->text) + 1);
            crc = crc32(crc, (const Bytef *)ut->phones, (uInt)(sizeof(int32_t) * ut->n_phones));
            crc = crc32(crc, (const Bytef *)ut->features,
                        (uInt)(sizeof(float) * ut->frames * LT_SPEECH_MELS));
        }
    }
    for (int i = 0; i < c->n_speakers; i++) {
        const lt_speech_speaker *sp = &c->speakers[i];
        crc = crc32(crc, (const Bytef *)sp->voice, (uInt)strlen(sp->voice) + 1);
        crc = crc32(crc, (const Bytef *)sp->variant, (uInt)strlen(sp->variant) + 1);
        const int32_t rp[2] = {sp->rate, sp->pitch};
        crc = crc32(crc, (const Bytef *)rp, sizeof rp);
    }
    return (uint32_t)crc;
}

/* The default corpus (one sentence per utterance) of two seeds, as built
 * before joined utterances existed (commit 1e3748c, espeak-ng 1.51, FFTW
 * 3.3.10 on x86-64): any change to these bytes changes every published
 * `small` result. */
Test(speech, default_corpus_is_unchanged)
{
    const uint64_t seeds[] = {7, 1};
    const uint32_t want[] = {0x6b0471cfu, 0x25ba8651u};
    cr_assert_str_eq(lt_speech_espeak_version(), "1.51",
                     "the checksums were recorded with espeak-ng 1.51");
    for (int i = 0; i < 2; i++) {
        lt_speech_config cfg = {.hours = TINY_HOURS, .seed = seeds[i]};
        lt_speech_corpus c;
        load_expecting(&c, &cfg, LT_SPEECH_SYNTHESISED);
        cr_assert_eq(corpus_crc(&c), want[i], "seed %llu: crc 0x%08x, recorded 0x%08x",
                     (unsigned long long)seeds[i], corpus_crc(&c), want[i]);
        lt_speech_free(&c);
    }
}

/* A cache written before joined utterances existed (the fuzz corpus's
 * seed, hours LT_SPEECH_MIN_HOURS, seed 3) is read as it is, and a rebuild
 * writes the same bytes. */
Test(speech, old_cache_is_read_and_rebuilt_byte_for_byte)
{
    const char *source = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(source, "LTBENCH_SOURCE must name the source folder");
    char old[4096];
    snprintf(old, sizeof old, "%s/tests/fuzz/corpus/speech_cache/seed_ok_tiny.ltspeech", source);
    size_t size;
    unsigned char *bytes = read_file(old, &size);
    notices n = {0};
    lt_speech_config cfg = {.hours = LT_SPEECH_MIN_HOURS, .seed = 3, .cache_dir = tmpdir,
                            .notice = collect_notice, .notice_ctx = &n};
    const char *path = cache_file(&cfg);
    write_file(path, bytes, size);
    lt_speech_corpus from_cache, built;
    load_expecting(&from_cache, &cfg, LT_SPEECH_FROM_CACHE);
    cr_assert_eq(unlink(path), 0);
    load_expecting(&built, &cfg, LT_SPEECH_SYNTHESISED);
    assert_same_file(path, bytes, size);
    assert_same_corpus(&from_cache, &built);
    cr_assert_eq(n.count, 0, "%s", n.last);
    lt_speech_free(&from_cache);
    lt_speech_free(&built);
    free(bytes);
}

/* ---- settings ---- */

Test(speech, impossible_sizes_are_refused_before_any_work)
{
    const double bad[] = {0, -1, 0.001, LT_SPEECH_MAX_HOURS * 1.01, 1e9, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lt_speech_config cfg = {.hours = bad[i], .seed = 1};
        cr_assert_eq(lt_speech_check_config(&cfg), LT_E_USAGE, "hours %g accepted", bad[i]);
        cr_assert(strstr(lt_last_error(), "hours") != NULL, "%s", lt_last_error());
        cr_assert(strstr(lt_last_error(), "[0.002, 100]") != NULL, "%s", lt_last_error());
        size_t before = lt_mem_current();
        lt_speech_corpus c;
        lt_speech_origin origin;
        cr_assert_eq(lt_speech_load(&c, &cfg, NULL, &origin), LT_E_USAGE);
        cr_assert_eq(lt_mem_current(), before);
    }
    const double good[] = {LT_SPEECH_MIN_HOURS, TINY_HOURS, 1, LT_SPEECH_MAX_HOURS};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        lt_speech_config cfg = {.hours = good[i], .seed = 1};
        cr_assert_eq(lt_speech_check_config(&cfg), LT_OK, "%s", lt_last_error());
    }
    lt_speech_config empty_dir = {.hours = 1, .cache_dir = ""};
    cr_assert_eq(lt_speech_check_config(&empty_dir), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "cache_dir") != NULL);
}

Test(speech, cache_file_names_carry_hours_seed_and_version)
{
    lt_speech_config cfg = {.hours = 0.005, .seed = 42, .cache_dir = "/c"};
    char path[256];
    cr_assert_eq(lt_speech_cache_path(path, sizeof path, &cfg), LT_OK);
    cr_assert_str_eq(path, "/c/speech-v1-h0.005-s42.ltspeech");
    cfg.hours = 1.0 / 3;
    cr_assert_eq(lt_speech_cache_path(path, sizeof path, &cfg), LT_OK);
    cr_assert_str_eq(path, "/c/speech-v1-h0.3333333333333333-s42.ltspeech");
    cr_assert_eq(lt_speech_cache_path(path, 10, &cfg), LT_E_USAGE);
}

/* ---- pieces ---- */

Test(speech, sentence_filter)
{
    cr_assert(lt_speech_sentence_ok("the cat sat down"));
    cr_assert(lt_speech_sentence_ok("he didn't know; it was 1990, sadly!"));
    cr_assert(!lt_speech_sentence_ok("too few words"));
    cr_assert(!lt_speech_sentence_ok("one two three four five six seven eight nine ten eleven "
                                     "twelve thirteen fourteen fifteen sixteen seventeen "
                                     "eighteen nineteen twenty twentyone"));
    cr_assert(!lt_speech_sentence_ok("the cat (a tabby) sat down"));
    cr_assert(!lt_speech_sentence_ok("the  cat sat down"));
    cr_assert(!lt_speech_sentence_ok(" the cat sat down"));
    cr_assert(!lt_speech_sentence_ok("the caf\xc3\xa9 was open late"));
    cr_assert(!lt_speech_sentence_ok(""));
}

Test(speech, sentence_pool_is_sorted_unique_and_large)
{
    lt_speech_pool pool;
    cr_assert_eq(lt_speech_pool_load(&pool, NULL), LT_OK, "%s", lt_last_error());
    cr_assert_gt(pool.count, 30000, "%d sentences", pool.count);
    for (int i = 0; i < pool.count; i++) {
        cr_assert(lt_speech_sentence_ok(pool.sentences[i]), "%s", pool.sentences[i]);
        if (i > 0)
            cr_assert_lt(strcasecmp(pool.sentences[i - 1], pool.sentences[i]), 0,
                         "not sorted or duplicated: %s", pool.sentences[i]);
    }
    uint32_t crc = pool.crc;
    lt_speech_pool_free(&pool);
    cr_assert_eq(lt_speech_pool_load(&pool, NULL), LT_OK);
    cr_assert_eq(pool.crc, crc);
    lt_speech_pool_free(&pool);
    cr_assert_eq(lt_speech_pool_load(&pool, tmpdir), LT_E_INPUT);
    cr_assert(strstr(lt_last_error(), "wordnet-base") != NULL, "%s", lt_last_error());
}

Test(speech, phone_set_and_fold)
{
    cr_assert_eq(lt_speech_phone_count(), 39);
    cr_assert_null(lt_speech_phone_name(-1));
    cr_assert_null(lt_speech_phone_name(39));
    for (int i = 0; i < 39; i++)
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(lt_speech_phone_name(i), lt_speech_phone_name(j));
    /* Every mnemonic of espeak-ng's English phoneme tables (ph_english and
     * its accents) plus the base consonants English words use. */
    const char *english[] = {
        "p", "b", "t", "d", "k", "g", "f", "v", "T", "D", "s", "z", "S", "Z", "h", "tS",
        "dZ", "m", "n", "N", "l", "r", "w", "j", "x", "t2", "t#", "t[", "d#", "z#", "z/2",
        "l/2", "r-", "w#", "n-", "@", "3", "@2", "@5", "@L", "a", "a2", "a#", "aa", "E",
        "E#", "E2", "I", "I2", "I#", "I2#", "i", "0", "0#", "02", "O2", "V", "U", "A:",
        "A@", "A#", "3:", "i:", "O:", "O", "O@", "o@", "u:", "aU", "oU", "oU#", "aI", "eI",
        "OI", "e@", "i@", "i@3", "U@", "aI@", "aI3", "aU@", "IR", "VR", "o:", "A~", "O~",
        "e:", "e#", "a#2", "@#", "@-", "aI2", "a/", "u",
    };
    int used[39] = {0};
    for (size_t i = 0; i < sizeof english / sizeof english[0]; i++) {
        int id = lt_speech_phone_fold(english[i]);
        cr_assert(id >= 0 && id < 39, "%s folds to %d", english[i], id);
        used[id] = 1;
    }
    for (int i = 0; i < 39; i++)
        cr_assert(used[i], "no mnemonic reaches %s", lt_speech_phone_name(i));
    cr_assert_str_eq(lt_speech_phone_name(lt_speech_phone_fold("T")), "th");
    cr_assert_str_eq(lt_speech_phone_name(lt_speech_phone_fold("@L")), "l");
    const char *dropped[] = {"_", "_:", "_!", "_!w", "?", ";"};
    for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++)
        cr_assert_eq(lt_speech_phone_fold(dropped[i]), LT_SPEECH_PHONE_DROP, "%s", dropped[i]);
    cr_assert_eq(lt_speech_phone_fold("Q!"), LT_SPEECH_PHONE_UNKNOWN);
    cr_assert_eq(lt_speech_phone_fold("y"), LT_SPEECH_PHONE_UNKNOWN); /* a French vowel */
}

Test(speech, frames_every_10ms_and_filters_in_mel_order)
{
    /* floor(441 t / 2) + 551 <= n, counted by brute force. */
    for (long n = 0; n < 5000; n += 7) {
        long want = 0;
        while (want * 441 / 2 + LT_SPEECH_WINDOW <= n)
            want++;
        cr_assert_eq(lt_speech_frame_count(n), want, "n = %ld", n);
    }
    cr_assert_eq(lt_speech_frame_count(LT_SPEECH_SAMPLE_RATE), 98); /* 1 s, 25 ms window */

    lt_speech_fbank *fb;
    cr_assert_eq(lt_speech_fbank_create(&fb), LT_OK);
    int16_t x[LT_SPEECH_WINDOW];
    float mel[LT_SPEECH_MELS];
    memset(x, 0, sizeof x);
    lt_speech_fbank_log_mel(fb, mel, x);
    for (int m = 0; m < LT_SPEECH_MELS; m++)
        cr_assert_float_eq(mel[m], logf(1e-6f), 1e-4, "silence sits at the floor");
    /* A tone lands in the filter whose centre is nearest; higher tones in
     * higher filters. */
    const double tones[] = {300, 1000, 3000, 8000};
    int last = -1;
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < LT_SPEECH_WINDOW; i++)
            x[i] = (int16_t)(8000 * sin(2 * M_PI * tones[k] * i / LT_SPEECH_SAMPLE_RATE));
        lt_speech_fbank_log_mel(fb, mel, x);
        int best = 0;
        for (int m = 1; m < LT_SPEECH_MELS; m++)
            if (mel[m] > mel[best])
                best = m;
        double lo = 1127 * log(1 + 20 / 700.0), hi = 1127 * log(1 + 11025 / 700.0);
        double center_mel = lo + (best + 1) * (hi - lo) / (LT_SPEECH_MELS + 1);
        double center = 700 * (exp(center_mel / 1127) - 1);
        double step_hz = 700 * (exp((center_mel + (hi - lo) / 41) / 1127) - 1) - center;
        cr_assert(fabs(center - tones[k]) < step_hz, "%g Hz peaks in filter %d (%g Hz)",
                  tones[k], best, center);
        cr_assert_gt(best, last);
        last = best;
    }
    lt_speech_fbank_free(fb);
}

/* ---- the corpus ---- */

Test(speech, tiny_corpus_is_deterministic_and_cached)
{
    size_t before = lt_mem_current();
    notices n = {0};
    lt_speech_config cfg = tiny_config(7, &n);
    const char *path = cache_file(&cfg);
    lt_speech_corpus a, b;
    load_expecting(&a, &cfg, LT_SPEECH_SYNTHESISED);
    size_t size;
    unsigned char *first = read_file(path, &size);
    cr_assert_eq(unlink(path), 0);
    load_expecting(&b, &cfg, LT_SPEECH_SYNTHESISED);
    assert_same_file(path, first, size);
    assert_same_corpus(&a, &b);
    lt_speech_free(&b);
    load_expecting(&b, &cfg, LT_SPEECH_FROM_CACHE);
    assert_same_corpus(&a, &b);
    cr_assert_eq(a.train.seconds, b.train.seconds);
    cr_assert_eq(a.test.frames, b.test.frames);
    cr_assert_eq(n.count, 0, "nothing to report: %s", n.last);
    lt_speech_free(&a);
    lt_speech_free(&b);
    cr_assert_eq(lt_mem_current(), before, "everything is freed");

    /* Another seed gives another corpus. */
    lt_speech_config other = tiny_config(8, &n);
    load_expecting(&b, &other, LT_SPEECH_SYNTHESISED);
    size_t other_size;
    unsigned char *second = read_file(cache_file(&other), &other_size);
    cr_assert(other_size != size || memcmp(first, second, size) != 0);
    lt_speech_free(&b);
    free(first);
    free(second);
}

Test(speech, corpus_is_well_formed)
{
    lt_speech_config cfg = {.hours = TINY_HOURS, .seed = 3}; /* in memory, no cache */
    lt_speech_corpus c;
    load_expecting(&c, &cfg, LT_SPEECH_SYNTHESISED);
    const lt_speech_split *splits[3] = {&c.train, &c.dev, &c.test};
    const double shares[3] = {0.90, 0.05, 0.05};
    int phones_seen[LT_SPEECH_PHONES] = {0};
    for (int s = 0; s < 3; s++) {
        const lt_speech_split *sp = splits[s];
        cr_assert_geq(sp->count, LT_SPEECH_MIN_SPLIT_UTTS);
        cr_assert_geq(sp->seconds, shares[s] * TINY_HOURS * 3600);
        long frames = 0;
        for (int u = 0; u < sp->count; u++) {
            const lt_utterance *ut = &sp->utts[u];
            cr_assert_eq(ut->frames, lt_speech_frame_count(ut->samples));
            cr_assert(ut->n_phones >= 1 && ut->n_phones <= ut->frames);
            frames += ut->frames;
            for (int i = 0; i < ut->n_phones; i++) {
                cr_assert(ut->phones[i] >= 0 && ut->phones[i] < LT_SPEECH_PHONES);
                phones_seen[ut->phones[i]] = 1;
            }
            /* Normalised per utterance: each coefficient has mean 0 and
             * variance 1 (or is 0 throughout if it never left the floor). */
            for (int m = 0; m < LT_SPEECH_MELS; m++) {
                double sum = 0, sq = 0;
                for (int t = 0; t < ut->frames; t++) {
                    float v = ut->features[t * LT_SPEECH_MELS + m];
                    cr_assert(isfinite(v));
                    sum += v;
                    sq += (double)v * v;
                }
                double mean = sum / ut->frames, var = sq / ut->frames - mean * mean;
                cr_assert(fabs(mean) < 1e-4, "mean %g", mean);
                cr_assert(fabs(var - 1) < 1e-3 || sq == 0, "variance %g", var);
            }
            if (s == 2)
                cr_assert(ut->speaker >= c.n_train_speakers && ut->speaker < c.n_speakers);
            else
                cr_assert(ut->speaker >= 0 && ut->speaker < c.n_train_speakers);
        }
        cr_assert_eq(sp->frames, frames);
    }
    int distinct = 0;
    for (int i = 0; i < LT_SPEECH_PHONES; i++)
        distinct += phones_seen[i];
    cr_assert_geq(distinct, 25, "only %d phones in the tiny corpus", distinct);
    /* Sentences are never shared between splits. */
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < s; r++)
            for (int u = 0; u < splits[s]->count; u++)
                for (int v = 0; v < splits[r]->count; v++)
                    cr_assert(strcasecmp(splits[s]->utts[u].text, splits[r]->utts[v].text) != 0);
    /* No test voice or variant reads anything in train or dev. */
    for (int i = c.n_train_speakers; i < c.n_speakers; i++)
        for (int j = 0; j < c.n_train_speakers; j++) {
            cr_assert_str_neq(c.speakers[i].voice, c.speakers[j].voice);
            cr_assert_str_neq(c.speakers[i].variant, c.speakers[j].variant);
        }
    lt_speech_free(&c);
}

Test(speech, damaged_cache_is_detected_and_rebuilt)
{
    notices n = {0};
    lt_speech_config cfg = tiny_config(5, &n);
    const char *path = cache_file(&cfg);
    lt_speech_corpus c;
    load_expecting(&c, &cfg, LT_SPEECH_SYNTHESISED);
    lt_speech_free(&c);
    size_t size;
    unsigned char *good = read_file(path, &size);

    unsigned char *bad = malloc(size);
    memcpy(bad, good, size);
    bad[size / 2] ^= 0x10;
    write_file(path, bad, size);
    load_expecting(&c, &cfg, LT_SPEECH_REBUILT_CORRUPT);
    lt_speech_free(&c);
    cr_assert_eq(n.count, 1);
    cr_assert(strstr(n.last, "damaged") != NULL && strstr(n.last, path) != NULL, "%s", n.last);
    assert_same_file(path, good, size);

    write_file(path, good, size * 2 / 3); /* truncated */
    load_expecting(&c, &cfg, LT_SPEECH_REBUILT_CORRUPT);
    lt_speech_free(&c);
    cr_assert_eq(n.count, 2);
    assert_same_file(path, good, size);

    write_file(path, "not a cache", 11);
    load_expecting(&c, &cfg, LT_SPEECH_REBUILT_CORRUPT);
    lt_speech_free(&c);
    assert_same_file(path, good, size);
    load_expecting(&c, &cfg, LT_SPEECH_FROM_CACHE);
    lt_speech_free(&c);
    free(good);
    free(bad);
}

Test(speech, stale_cache_is_detected_and_rebuilt)
{
    notices n = {0};
    lt_speech_config made = tiny_config(11, &n), wanted = tiny_config(12, &n);
    lt_speech_corpus c;
    load_expecting(&c, &made, LT_SPEECH_SYNTHESISED);
    lt_speech_free(&c);
    char made_path[4096];
    snprintf(made_path, sizeof made_path, "%s", cache_file(&made));
    /* A valid cache under the wrong name: its header says seed 11. */
    cr_assert_eq(rename(made_path, cache_file(&wanted)), 0);
    load_expecting(&c, &wanted, LT_SPEECH_REBUILT_STALE);
    lt_speech_free(&c);
    cr_assert_eq(n.count, 1);
    cr_assert(strstr(n.last, "stale") != NULL && strstr(n.last, "seed 11") != NULL, "%s",
              n.last);
    load_expecting(&c, &wanted, LT_SPEECH_FROM_CACHE);
    lt_speech_free(&c);

    /* A cache of another format version is stale too, not damaged. */
    unsigned char header[128] = {'L', 'T', 'S', 'P', 'E', 'E', 'C', 'H', 99};
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, cache_file(&wanted)), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "speech.header", header, sizeof header), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    lt_speech_cache_info info;
    cr_assert_eq(lt_speech_cache_read(&c, &info, cache_file(&wanted)), LT_E_INPUT);
    cr_assert_eq(info.format_version, 99);
    load_expecting(&c, &wanted, LT_SPEECH_REBUILT_STALE);
    lt_speech_free(&c);
    cr_assert(strstr(n.last, "version 99") != NULL, "%s", n.last);
}

/* Rewrites a valid cache with one byte of one section changed, keeping the
 * checksums right, so the corpus-level checks (not the container's) see it. */
static void rewrite_mutated(const char *src, const char *dst, lt_rng *rng)
{
    lt_ckpt *ck;
    cr_assert_eq(lt_ckpt_read(&ck, src), LT_OK);
    size_t n = lt_ckpt_count(ck), victim = lt_rng_below(rng, n);
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, dst), LT_OK);
    for (size_t i = 0; i < n; i++) {
        const void *data;
        size_t bytes;
        cr_assert_eq(lt_ckpt_find(ck, lt_ckpt_name(ck, i), &data, &bytes), LT_OK);
        unsigned char *copy = malloc(bytes + 1);
        memcpy(copy, data, bytes);
        size_t len = bytes;
        if (i == victim && bytes > 0) {
            switch (lt_rng_below(rng, 3)) {
            case 0: /* one byte changed; in the small sections most matter */
                copy[lt_rng_below(rng, bytes < 256 ? bytes : 256)] ^=
                    (unsigned char)(1 + lt_rng_below(rng, 255));
                break;
            case 1:
                copy[lt_rng_below(rng, bytes)] = 0xff;
                break;
            default: /* cut short */
                len = lt_rng_below(rng, bytes);
            }
        }
        cr_assert_eq(lt_ckpt_writer_add(w, lt_ckpt_name(ck, i), copy, len), LT_OK);
        free(copy);
    }
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    lt_ckpt_free(ck);
}

Test(speech, cache_reader_survives_damaged_contents)
{
    notices n = {0};
    lt_speech_config cfg = tiny_config(9, &n);
    lt_speech_corpus c;
    load_expecting(&c, &cfg, LT_SPEECH_SYNTHESISED);
    lt_speech_free(&c);
    const char *path = cache_file(&cfg);
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s", path);
    snprintf(dst, sizeof dst, "%s/mutated.ltspeech", tmpdir);
    size_t before = lt_mem_current();
    lt_rng rng;
    lt_rng_seed(&rng, 1, 0);
    int refused = 0;
    for (int round = 0; round < 80; round++) {
        rewrite_mutated(src, dst, &rng);
        lt_speech_cache_info info;
        lt_status st = lt_speech_cache_read(&c, &info, dst);
        cr_assert(st == LT_OK || st == LT_E_INPUT, "round %d: %s", round, lt_last_error());
        if (st == LT_E_INPUT) {
            refused++;
            cr_assert(strstr(lt_last_error(), dst) != NULL, "%s", lt_last_error());
            cr_assert_null(c.storage);
        }
        lt_speech_free(&c);
        cr_assert_eq(lt_mem_current(), before, "round %d leaks", round);
    }
    cr_assert_gt(refused, 30, "only %d of 80 damaged caches refused", refused);

    /* Raw damage at any byte is caught by the container or the reader. */
    size_t size;
    unsigned char *file = read_file(src, &size);
    for (int round = 0; round < 60; round++) {
        size_t at = lt_rng_below(&rng, size);
        unsigned char saved = file[at];
        file[at] ^= (unsigned char)(1 + lt_rng_below(&rng, 255));
        write_file(dst, file, round % 2 ? size : at);
        lt_speech_cache_info info;
        cr_assert_eq(lt_speech_cache_read(&c, &info, dst), LT_E_INPUT, "byte %zu", at);
        file[at] = saved;
    }
    cr_assert_eq(lt_mem_current(), before);
    free(file);
}

/* A copy of a folder made of links, leaving out the file at the relative
 * path `skip` (its folders are copied level by level). */
static void mirror_without(const char *real, const char *copy, const char *skip)
{
    cr_assert_eq(mkdir(copy, 0700), 0, "%s", copy);
    const char *slash = strchr(skip, '/');
    size_t head = slash != NULL ? (size_t)(slash - skip) : strlen(skip);
    DIR *d = opendir(real);
    cr_assert_not_null(d, "%s", real);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char from[4096], to[4096];
        snprintf(from, sizeof from, "%s/%s", real, e->d_name);
        snprintf(to, sizeof to, "%s/%s", copy, e->d_name);
        int on_path = strlen(e->d_name) == head && strncmp(e->d_name, skip, head) == 0;
        if (on_path && slash == NULL)
            continue;
        if (on_path)
            mirror_without(from, to, slash + 1);
        else
            cr_assert_eq(symlink(from, to), 0, "%s", to);
    }
    closedir(d);
}

Test(speech, missing_voice_is_named_with_its_package)
{
    unsetenv("ESPEAK_DATA_PATH");
    cr_assert_eq(lt_speech_check_voices(), LT_OK, "%s", lt_last_error());
    /* The data folder espeak-ng found, now that the check has looked. */
    const char *real = NULL;
    espeak_Info(&real);
    char copy[512];
    snprintf(copy, sizeof copy, "%s/espeak-ng-data", tmpdir);
    mirror_without(real, copy, "lang/gmw/en-US-nyc");
    setenv("ESPEAK_DATA_PATH", tmpdir, 1);
    lt_speech_config cfg = {.hours = TINY_HOURS, .seed = 1};
    lt_speech_corpus c;
    lt_speech_origin origin;
    size_t before = lt_mem_current();
    cr_assert_eq(lt_speech_load(&c, &cfg, NULL, &origin), LT_E_INPUT);
    cr_assert(strstr(lt_last_error(), "gmw/en-US-nyc") != NULL, "%s", lt_last_error());
    cr_assert(strstr(lt_last_error(), "espeak-ng-data") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_mem_current(), before);
    unsetenv("ESPEAK_DATA_PATH");
}
