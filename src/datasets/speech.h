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
 * Utterances: by default one sentence each (about 2 s, 210 frames). With
 *   utterance_frames set, WSJ-like ones instead (WSJ's average about 800
 *   frames, at most about 2400): each utterance draws a speaker and a target
 *   length, Gamma-distributed (shape LT_SPEECH_JOIN_SHAPE) with mean
 *   utterance_frames and drawn again above LT_SPEECH_JOIN_MAX_RATIO times
 *   it, then reads its split's next sentences in that one voice, rate and
 *   pitch, with LT_SPEECH_PAUSE_MIN_MS..LT_SPEECH_PAUSE_MAX_MS of silence
 *   between them. It takes another sentence while its length plus
 *   LT_SPEECH_JOIN_LOOKAHEAD frames (about half a sentence) is below the
 *   target, so it ends nearest the target on average; a sentence that would
 *   take it past the maximum starts the next utterance instead, and one
 *   longer than the maximum on its own is passed over. Splits, speakers and
 *   sentences are held out exactly as for single sentences.
 * Audio: espeak-ng synthesises at 22050 Hz, 16-bit mono, in helper
 *   processes (see speech_synth.c for why), each sentence on its own, so a
 *   sentence's audio depends only on (sentence, speaker, seed). `workers`
 *   helpers synthesise ahead side by side; what they make is used in order,
 *   so the corpus does not depend on their number.
 * Labels: the phonemes espeak-ng reports while speaking, folded to 39 phones
 *   (see lt_speech_phone_fold); pauses and stress are dropped. A joined
 *   utterance's labels are its sentences' labels one after another: the
 *   pause between sentences adds none, as no pause (a comma's, a sentence
 *   end's) has a label; CTC's blank covers silence, and a label for it would
 *   be one the silence gives away, diluting the phone error rate.
 * Features: LT_SPEECH_MELS log-mel energies of a 25 ms Hamming window every
 *   10 ms, normalised per utterance to zero mean and unit variance per
 *   coefficient.
 *
 * Not thread-safe: one lt_speech_load at a time per process (the helpers
 *   are processes, not threads). */
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

/* Joined utterances (utterance_frames): the allowed means, the longest
 * utterance as a multiple of the mean (WSJ: about 2400 / 800), the shape of
 * the length distribution (a spread of about 38% of the mean), the look-ahead
 * of the stopping rule and the pause between sentences. Below the smallest
 * mean most utterances would be one sentence of about 2 s anyway; the
 * largest allows utterances of 90 s (9000 frames), beyond any experiment. */
#define LT_SPEECH_MIN_UTTERANCE_FRAMES 300
#define LT_SPEECH_MAX_UTTERANCE_FRAMES 3000
#define LT_SPEECH_JOIN_MAX_RATIO 3
#define LT_SPEECH_JOIN_SHAPE 7
#define LT_SPEECH_JOIN_LOOKAHEAD 120
#define LT_SPEECH_PAUSE_MIN_MS 150
#define LT_SPEECH_PAUSE_MAX_MS 400

/* Helper processes synthesising side by side, at most. */
#define LT_SPEECH_MAX_WORKERS 64

#define LT_SPEECH_TRAIN_SPEAKERS 48
#define LT_SPEECH_TEST_SPEAKERS 8

/* Results of lt_speech_phone_fold besides a phone id. */
enum { LT_SPEECH_PHONE_DROP = -1, LT_SPEECH_PHONE_UNKNOWN = -2 };

/* Told, in words, why an existing cache file is not used and gets rebuilt. */
typedef void (*lt_speech_notice_fn)(void *ctx, const char *message);

typedef struct lt_speech_config {
    double hours;             /* audio in all splits together */
    uint64_t seed;
    /* 0: one sentence per utterance (the default). Otherwise joined
     * utterances of this mean length in frames, in
     * [LT_SPEECH_MIN_UTTERANCE_FRAMES, LT_SPEECH_MAX_UTTERANCE_FRAMES]; 800
     * is WSJ's. A corpus of each kind has its own cache file. */
    int utterance_frames;
    /* Helper processes synthesising at once; 0: lt_threads_get(). The
     * corpus is the same for any number. At most LT_SPEECH_MAX_WORKERS. */
    int workers;
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

/* One sentence of an utterance, in order: its audio is followed by `pause`
 * samples of silence (0 after the last), its phones and text are the next
 * ones of the utterance's (texts are separated by one space). */
typedef struct lt_speech_piece {
    int32_t samples;    /* its audio at LT_SPEECH_SAMPLE_RATE */
    int32_t pause;      /* silence after it */
    int32_t n_phones;
    int32_t text_bytes;
    uint32_t rand_seed; /* espeak-ng's noise seed: the sentence can be read again */
} lt_speech_piece;

typedef struct lt_utterance {
    int frames;
    const float *features;  /* (frames, LT_SPEECH_MELS) */
    int n_phones;
    const int32_t *phones;  /* (n_phones) ids in 0..LT_SPEECH_PHONES-1 */
    int speaker;            /* index into lt_speech_corpus.speakers */
    long samples;           /* audio length at LT_SPEECH_SAMPLE_RATE */
    const char *text;       /* the sentences read, separated by one space */
    int n_pieces;           /* sentences: 1 unless joined */
    const lt_speech_piece *pieces; /* (n_pieces) */
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
 * size, naming utterance_frames or workers outside their ranges, or naming
 * cache_dir when it is "". */
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

/* The cache file of cfg: <cache_dir>/speech-v<version>-h<hours>-s<seed>.ltspeech,
 * or ...-s<seed>-u<utterance_frames>.ltspeech for joined utterances.
 * LT_E_USAGE if cfg has no cache_dir or the name does not fit. */
lt_status lt_speech_cache_path(char *out, size_t size, const lt_speech_config *cfg);

/* What a cache file says it was made from. */
typedef struct lt_speech_cache_info {
    uint32_t format_version;   /* 0 when not even that could be read */
    double hours;
    uint64_t seed;
    int utterance_frames;      /* 0: one sentence per utterance */
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

/* Positions an utterance of `frames` frames gives the encoder when `stack`
 * consecutive frames are stacked into one (the last group may be short):
 * ceil(frames / stack). stack >= 1. */
int lt_speech_positions(int frames, int stack);

/* Utterance lengths of a split: what reaches attention at a stack factor. */
typedef struct lt_speech_lengths {
    int utterances;
    double mean_frames;
    int max_frames;
    double mean_positions;  /* lt_speech_positions at the stack given */
    int max_positions;
    double mean_phones;
    int max_phones;
    double mean_sentences;  /* sentences per utterance */
} lt_speech_lengths;

/* All zero for an empty split. stack >= 1. */
lt_speech_lengths lt_speech_split_lengths(const lt_speech_split *s, int stack);

#endif
