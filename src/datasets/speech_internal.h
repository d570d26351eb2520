/* Pieces of the speech corpus shared between its files; not public. */
#ifndef LT_DATASETS_SPEECH_INTERNAL_H
#define LT_DATASETS_SPEECH_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "datasets/speech.h"

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

/* ---- small shared helper ---- */

/* Makes room for `need` elements of `elem` bytes in a tracked buffer,
 * doubling its capacity (in elements) as needed. */
lt_status lt_speech_grow(void **buf, size_t *cap, size_t need, size_t elem, const char *what);

#endif
