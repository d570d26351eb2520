/* Pieces of the speech corpus shared between its files; not public. */
#ifndef LT_DATASETS_SPEECH_INTERNAL_H
#define LT_DATASETS_SPEECH_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "core/progress.h"
#include "core/rng.h"
#include "datasets/speech.h"
#include "io/checkpoint.h"

/* ---- features (speech_features.c) ---- */

#define LT_SPEECH_WINDOW 551 /* 25 ms at 22050 Hz */
#define LT_SPEECH_FFT 1024

typedef struct lt_speech_fbank lt_speech_fbank;

lt_status lt_speech_fbank_create(lt_speech_fbank **out);
void lt_speech_fbank_free(lt_speech_fbank *fb);

/* Frames of an utterance of n samples: every window that fits whole. */
long lt_speech_frame_count(long n);

/* Log-mel energies of one window, before normalisation. */
void lt_speech_fbank_log_mel(lt_speech_fbank *fb, float *out /* (LT_SPEECH_MELS) */,
                             const int16_t *x /* (LT_SPEECH_WINDOW) */);

/* Normalised log-mel features of n samples. */
void lt_speech_fbank_compute(lt_speech_fbank *fb, float *out /* (frames, LT_SPEECH_MELS) */,
                             const int16_t *samples /* (n) */, long n);

/* ---- sentence pool (speech_text.c) ---- */

typedef struct lt_speech_pool {
    int count;
    const char **sentences; /* (count), sorted, into `text` */
    char *text;
    uint32_t crc;           /* crc32 of the sentences in order, NULs included */
} lt_speech_pool;

/* Reads the WordNet example sentences from `dir` (NULL: /usr/share/wordnet). */
lt_status lt_speech_pool_load(lt_speech_pool *pool, const char *dir);
void lt_speech_pool_free(lt_speech_pool *pool);

/* Whether a sentence passes the filter (exposed for the tests). */
int lt_speech_sentence_ok(const char *s);

/* ---- voices (speech_synth.c) ---- */

typedef struct lt_speech_voice_table {
    const char *const *voices;
    int n_voices;
    const char *const *variants;
    int n_variants;
} lt_speech_voice_table;

/* The voices and variants of train/dev (set 0) and test (set 1). */
const lt_speech_voice_table *lt_speech_voices(int set);

/* espeak-ng's version string, e.g. "1.51". */
const char *lt_speech_espeak_version(void);

/* LT_E_INPUT naming the first listed voice or variant that is not
 * installed, and the Debian package that provides it. */
lt_status lt_speech_check_voices(void);

/* The helper process that runs espeak-ng. */
typedef struct lt_speech_synth {
    pid_t pid;
    int fd;
    unsigned char *buf; /* (LT_SPEECH_SYNTH_BUF) replies read ahead */
    size_t begin, end;  /* unread bytes of buf */
} lt_speech_synth;

#define LT_SPEECH_SYNTH_BUF ((size_t)64 * 1024)

/* Starts the helper; on failure nothing is left running or allocated. */
lt_status lt_speech_synth_start(lt_speech_synth *s);

/* Reads one sentence: the samples and the folded phones grow the given
 * tracked buffers (capacities in elements). */
typedef struct lt_speech_audio {
    int16_t *samples;
    size_t samples_cap;
    long n_samples;
    int32_t *phones;
    size_t phones_cap;
    int n_phones;
} lt_speech_audio;

lt_status lt_speech_synth_say(lt_speech_synth *s, lt_speech_audio *audio,
                              const lt_speech_speaker *speaker, unsigned rand_seed,
                              const char *text);

/* lt_speech_synth_say in two halves, so several helpers can work at once:
 * requests sent to one helper are answered in order, each by one receive
 * (given the same speaker and text, which name it in failure messages). On
 * a failure the helper is stopped. */
lt_status lt_speech_synth_send(lt_speech_synth *s, const lt_speech_speaker *speaker,
                               unsigned rand_seed, const char *text);
lt_status lt_speech_synth_receive(lt_speech_synth *s, lt_speech_audio *audio,
                                  const lt_speech_speaker *speaker, const char *text);

/* Ends the helper and frees its buffer; `kill_now` for an error path.
 * Safe to call again. */
void lt_speech_synth_stop(lt_speech_synth *s, int kill_now);

/* ---- corpus layout (speech.c assembles and caches, speech_build.c builds) ---- */

enum { LT_SPEECH_SPLIT_TRAIN, LT_SPEECH_SPLIT_DEV, LT_SPEECH_SPLIT_TEST, LT_SPEECH_N_SPLITS };
extern const char *const lt_speech_split_names[LT_SPEECH_N_SPLITS];

#define LT_SPEECH_N_SPEAKERS (LT_SPEECH_TRAIN_SPEAKERS + LT_SPEECH_TEST_SPEAKERS)
#define LT_SPEECH_RATE_MIN 140
#define LT_SPEECH_RATE_MAX 210
#define LT_SPEECH_PITCH_MIN 30
#define LT_SPEECH_PITCH_MAX 70
#define LT_SPEECH_PAUSE_MIN_SAMPLES (LT_SPEECH_PAUSE_MIN_MS * LT_SPEECH_SAMPLE_RATE / 1000)
#define LT_SPEECH_PAUSE_MAX_SAMPLES (LT_SPEECH_PAUSE_MAX_MS * LT_SPEECH_SAMPLE_RATE / 1000)
/* A sentence longer than this is never read (espeak-ng's requests carry at
 * most this much text). */
#define LT_SPEECH_MAX_SENTENCE_BYTES 4096

/* One utterance as stored: int32 frames, phones, speaker, samples. */
enum { LT_SPEECH_REC_FRAMES, LT_SPEECH_REC_PHONES, LT_SPEECH_REC_SPEAKER, LT_SPEECH_REC_SAMPLES,
       LT_SPEECH_REC_FIELDS };
/* One speaker as stored: int32 voice, variant (indices into the tables of
 * its set), rate, pitch. */
enum { LT_SPEECH_SPK_VOICE, LT_SPEECH_SPK_VARIANT, LT_SPEECH_SPK_RATE, LT_SPEECH_SPK_PITCH,
       LT_SPEECH_SPK_FIELDS };
/* One sentence of an utterance as stored (joined corpora only): int32
 * samples, pause, phones, text bytes, espeak-ng's noise seed (the fields of
 * lt_speech_piece). */
enum { LT_SPEECH_PIECE_SAMPLES, LT_SPEECH_PIECE_PAUSE, LT_SPEECH_PIECE_PHONES,
       LT_SPEECH_PIECE_TEXT, LT_SPEECH_PIECE_SEED, LT_SPEECH_PIECE_FIELDS };

/* Every utterance of a corpus, train then dev then test. Built corpora own
 * the arrays; read ones point them into ckpt. */
struct lt_speech_storage {
    lt_ckpt *ckpt;            /* the arrays below live in it when read from a cache */
    float *features;          /* built: owned (total_frames, LT_SPEECH_MELS) */
    int32_t *phones;          /* built: owned (total_phones) */
    char *text;               /* built: owned, n_utts NUL-terminated texts */
    int32_t *recs;            /* built: owned (n_utts, LT_SPEECH_REC_FIELDS) */
    int32_t *speaker_recs;    /* built: owned (LT_SPEECH_N_SPEAKERS, LT_SPEECH_SPK_FIELDS) */
    int32_t *piece_counts;    /* built joined: owned (n_utts); NULL: one sentence each */
    int32_t *piece_recs;      /* built joined: owned (total pieces, LT_SPEECH_PIECE_FIELDS) */
    lt_speech_piece *pieces;  /* (total pieces) */
    lt_utterance *utts;       /* (n_utts) train, then dev, then test */
    lt_speech_speaker *speakers; /* (LT_SPEECH_N_SPEAKERS) */
};

/* How the arrays of a storage were made: utterance_frames 0 for one
 * sentence per utterance, whose pieces follow from the records and seed. */
typedef struct lt_speech_layout {
    int counts[LT_SPEECH_N_SPLITS];
    int utterance_frames;
    uint64_t seed;
} lt_speech_layout;

/* Points c at st's verified arrays (as listed in lt_speech_storage; for
 * joined corpora piece_counts and piece_recs are set). */
lt_status lt_speech_assemble(lt_speech_corpus *c, lt_speech_storage *st,
                             const lt_speech_layout *layout);
void lt_speech_storage_free(lt_speech_storage *st);

/* Which voice table speaker i draws from: 0 the training speakers', 1 the
 * test speakers'. */
int lt_speech_speaker_set(int speaker);

/* Sentences over the first n_utts utterances of a storage (one each
 * without piece counts). */
long lt_speech_total_pieces(const lt_speech_storage *st, int n_utts);

/* Speaker i of a corpus from its stored record (indices already checked). */
lt_speech_speaker lt_speech_speaker_of(const int32_t *speaker_recs, int i);

/* The speaker and espeak-ng noise seed of utterance i of a split in a
 * corpus of one sentence per utterance. */
void lt_speech_single_draw(int *speaker, unsigned *rand_seed, uint64_t seed, int split, long i);

/* The first speaker of a split's speakers, and how many it has: train and
 * dev share speakers 0..TRAIN-1, test has the rest. */
int lt_speech_first_speaker(int split);
int lt_speech_split_speakers(int split);

/* The corpus seed's random streams (speech_build.c, speech_corpus.c). */
#define STREAM_SPEAKERS 1
#define STREAM_POOL 2
/* + (split << 32) + utterance: speaker, noise seed (one sentence each) */
#define STREAM_UTTS ((uint64_t)1 << 40)
/* + (split << 32) + utterance: speaker, target length (joined) */
#define STREAM_JOINED_UTTS ((uint64_t)2 << 40)
/* + (split << 32) + stream position: noise seed, pause before it (joined) */
#define STREAM_JOINED_SENTENCES ((uint64_t)3 << 40)



/* Synthesises the corpus of cfg from the sentence pool into c. */
lt_status lt_speech_build(lt_speech_corpus *c, const lt_speech_config *cfg,
                          const lt_speech_pool *pool, lt_progress *progress);

/* The target length of joined utterances: Gamma(LT_SPEECH_JOIN_SHAPE) with
 * mean `mean` frames, drawn again above LT_SPEECH_JOIN_MAX_RATIO x mean. */
double lt_speech_join_target(lt_rng *rng, int mean);


/* Short names of the record layouts, for the files that read and write
 * them (the build, the corpus, the cache). */
#define N_SPLITS LT_SPEECH_N_SPLITS
#define N_SPEAKERS LT_SPEECH_N_SPEAKERS
#define REC_FIELDS LT_SPEECH_REC_FIELDS
#define SPK_FIELDS LT_SPEECH_SPK_FIELDS
#define PIECE_FIELDS LT_SPEECH_PIECE_FIELDS
enum { REC_FRAMES = LT_SPEECH_REC_FRAMES, REC_PHONES = LT_SPEECH_REC_PHONES,
       REC_SPEAKER = LT_SPEECH_REC_SPEAKER, REC_SAMPLES = LT_SPEECH_REC_SAMPLES };
enum { SPK_VOICE = LT_SPEECH_SPK_VOICE, SPK_VARIANT = LT_SPEECH_SPK_VARIANT,
       SPK_RATE = LT_SPEECH_SPK_RATE, SPK_PITCH = LT_SPEECH_SPK_PITCH };
enum { P_SAMPLES = LT_SPEECH_PIECE_SAMPLES, P_PAUSE = LT_SPEECH_PIECE_PAUSE,
       P_PHONES = LT_SPEECH_PIECE_PHONES, P_TEXT = LT_SPEECH_PIECE_TEXT,
       P_SEED = LT_SPEECH_PIECE_SEED };

#endif
