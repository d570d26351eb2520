/* A WSJ-style read-speech corpus built locally, because WSJ itself is
 * licensed: English sentences read by espeak-ng voices, turned into the
 * paper's inputs (40 log-mel filterbank energies every 10 ms) and CTC targets
 * (a 39-phone set). Everything follows from (hours, seed) and the installed
 * Debian packages, so a corpus can be rebuilt anywhere.
 *
 * Sentences: the example sentences of WordNet 3 (Debian wordnet-base, the
 *   quoted examples in /usr/share/wordnet/data.{adj,adv,noun,verb}, about
 *   48,000). Kept: 4..20 words of ASCII letters, digits, spaces and
 *   . , ; : ' ! ? - (other characters would be read unpredictably), with
 *   runs of spaces collapsed; duplicates ignoring case removed; sorted
 *   ignoring case. About 34,000 remain.
 * Splits: the pool is shuffled with the seed; the first 5% of sentences
 *   belong to test, the next 5% to dev, the rest to train, so no sentence is
 *   read in two splits. Hours are shared 90/5/5 (train/dev/test): a split
 *   takes utterances until its share of seconds is reached, and never fewer
 *   than LT_SPEECH_MIN_SPLIT_UTTS. Each sentence is read at most once.
 * Speakers: (voice, variant, rate, pitch). Train and dev are read by
 *   LT_SPEECH_TRAIN_SPEAKERS speakers built from six English voices and 14
 *   variants; test by LT_SPEECH_TEST_SPEAKERS speakers from two other voices
 *   and six other variants, so test voices, variants and sentences are all
 *   unseen in training (dev shares speakers with train, not sentences).
 *   Rate is drawn from 140..210 words per minute, pitch from 30..70 (of
 *   espeak's 0..100).
 * Audio: espeak-ng synthesises at 22050 Hz, 16-bit mono, in a helper process
 *   (see speech_synth.c for why), one utterance at a time.
 * Labels: the phonemes espeak-ng reports while speaking, folded to 39 phones
 *   (see lt_speech_phone_fold); pauses and stress are dropped.
 * Features: LT_SPEECH_MELS log-mel energies of a 25 ms Hamming window every
 *   10 ms, normalised per utterance to zero mean and unit variance per
 *   coefficient.
 *
 * Not thread-safe: one lt_speech_load at a time per process. */
#ifndef LT_DATASETS_SPEECH_H
#define LT_DATASETS_SPEECH_H

#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "core/status.h"

#define LT_SPEECH_MELS 40
#define LT_SPEECH_SAMPLE_RATE 22050
#define LT_SPEECH_PHONES 39
/* Bumped whenever the cache layout, the voice tables, the phone fold or the
 * feature recipe changes: a cache of another version is stale. */
#define LT_SPEECH_FORMAT_VERSION 1

/* Size limits. Below the minimum the training split holds only two or three
 * utterances. A split that has read all its sentences (the test and dev
 * shares hold 5% of ~34,000 sentences, about an hour of speech each) reads
 * them again with other speaker draws, as WSJ's speakers share prompts, so
 * the paper's 80 hours fit; the maximum keeps the features (100 frames x 40
 * floats per second) within one machine's memory. */
#define LT_SPEECH_MIN_HOURS 0.002
#define LT_SPEECH_MAX_HOURS 100.0
#define LT_SPEECH_MIN_SPLIT_UTTS 3

#define LT_SPEECH_TRAIN_SPEAKERS 48
#define LT_SPEECH_TEST_SPEAKERS 8

/* Results of lt_speech_phone_fold besides a phone id. */
enum { LT_SPEECH_PHONE_DROP = -1, LT_SPEECH_PHONE_UNKNOWN = -2 };

/* Told, in words, why an existing cache file is not used and gets rebuilt. */
typedef void (*lt_speech_notice_fn)(void *ctx, const char *message);

typedef struct lt_speech_config {
    double hours;             /* audio in all splits together */
    uint64_t seed;
    const char *cache_dir;    /* NULL: build in memory, write no cache */
    const char *wordnet_dir;  /* NULL: /usr/share/wordnet */
    lt_speech_notice_fn notice; /* may be NULL */
    void *notice_ctx;
} lt_speech_config;

typedef struct lt_speech_speaker {
    const char *voice;   /* espeak-ng voice, e.g. "gmw/en-US" */
    const char *variant; /* espeak-ng variant, e.g. "m1" */
    int rate;            /* words per minute */
    int pitch;           /* 0..100 */
} lt_speech_speaker;

typedef struct lt_utterance {
    int frames;
    const float *features;  /* (frames, LT_SPEECH_MELS) */
    int n_phones;
    const int32_t *phones;  /* (n_phones) ids in 0..LT_SPEECH_PHONES-1 */
    int speaker;            /* index into lt_speech_corpus.speakers */
    long samples;           /* audio length at LT_SPEECH_SAMPLE_RATE */
    const char *text;       /* the sentence read */
} lt_utterance;

typedef struct lt_speech_split {
    int count;
    lt_utterance *utts;  /* (count) */
    double seconds;      /* audio */
    long frames;
    long phones;
} lt_speech_split;

typedef struct lt_speech_storage lt_speech_storage;

typedef struct lt_speech_corpus {
    lt_speech_split train, dev, test;
    int n_speakers;                /* train/dev speakers first, then test */
    int n_train_speakers;
    lt_speech_speaker *speakers;   /* (n_speakers) */
    lt_speech_storage *storage;    /* owned buffers */
} lt_speech_corpus;

typedef enum lt_speech_origin {
    LT_SPEECH_SYNTHESISED = 0,  /* no cache file existed (or no cache_dir) */
    LT_SPEECH_FROM_CACHE,       /* read from the cache file */
    LT_SPEECH_REBUILT_STALE,    /* the cache file had other settings or version */
    LT_SPEECH_REBUILT_CORRUPT   /* the cache file was damaged */
} lt_speech_origin;

/* The size checks, before any work: LT_E_USAGE naming `hours` and the range
 * [LT_SPEECH_MIN_HOURS, LT_SPEECH_MAX_HOURS] for a non-finite or impossible
 * size, or naming cache_dir when it is "". */
lt_status lt_speech_check_config(const lt_speech_config *cfg);

/* Loads the corpus of cfg: from its cache file when one is there and valid,
 * otherwise synthesises it (and writes the cache when cfg->cache_dir is
 * set). `progress` (may be NULL) is a bar the caller started; its total is
 * set to the planned seconds of audio and it is finished here. *origin says
 * where the corpus came from; a stale or damaged cache is also reported
 * through cfg->notice. Failures: LT_E_USAGE for impossible settings,
 * LT_E_INPUT for a missing voice or WordNet file (naming the Debian
 * package) or a phoneme outside the fold, LT_E_IO for cache writes. */
lt_status lt_speech_load(lt_speech_corpus *c, const lt_speech_config *cfg, lt_progress *progress,
                         lt_speech_origin *origin);

/* Releases everything; the struct is zeroed. Safe on a zeroed corpus. */
void lt_speech_free(lt_speech_corpus *c);

/* The cache file of cfg: <cache_dir>/speech-v<version>-h<hours>-s<seed>.ltspeech.
 * LT_E_USAGE if cfg has no cache_dir or the name does not fit. */
lt_status lt_speech_cache_path(char *out, size_t size, const lt_speech_config *cfg);

/* What a cache file says it was made from. */
typedef struct lt_speech_cache_info {
    uint32_t format_version;   /* 0 when not even that could be read */
    double hours;
    uint64_t seed;
    uint32_t pool_sentences;   /* sentence pool size and crc32 at build time */
    uint32_t pool_crc;
    char espeak_version[32];
} lt_speech_cache_info;

/* Reads and fully verifies a cache file into c, whatever bytes it holds
 * (the entry point for fuzzing). LT_OK: c and *info are filled. LT_E_INPUT
 * naming the file for anything malformed; then c is zeroed, and
 * info->format_version is non-zero only if the header was readable (a
 * version other than LT_SPEECH_FORMAT_VERSION means an old cache, not a
 * damaged one). LT_E_IO if it cannot be read. */
lt_status lt_speech_cache_read(lt_speech_corpus *c, lt_speech_cache_info *info, const char *path);

/* The phone set: ids 0..LT_SPEECH_PHONES-1, CMU/TIMIT-style names. */
int lt_speech_phone_count(void);
const char *lt_speech_phone_name(int id); /* NULL outside the range */

/* Folds one espeak-ng English phoneme mnemonic (as reported in phoneme
 * events, without stress marks) to a phone id, LT_SPEECH_PHONE_DROP for
 * pauses and silent markers, or LT_SPEECH_PHONE_UNKNOWN. */
int lt_speech_phone_fold(const char *espeak_name);

/* Phone token counts of a split. */
void lt_speech_phone_histogram(long *counts /* (LT_SPEECH_PHONES) */, const lt_speech_split *s);


/* An utterance's figure: its filterbank features (mel bins upward, time to
 * the right) titled with its text, its reference phones and a model's
 * `decoded` phones (ids), as DIR/NAME.dat and the gnuplot script NAME.gp
 * drawn into NAME.png when gnuplot is on PATH; without it the features
 * alone as a plain PNG and the phones in NAME.txt (said on stderr). */
lt_status lt_speech_figure(const char *dir, const char *name, const lt_utterance *u,
                           const char *model, const int32_t *decoded, int n_decoded);

#endif
