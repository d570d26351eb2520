/* espeak-ng, run in helper processes.
 *
 * Why processes: espeak-ng keeps state between utterances in static
 * variables (the flutter phase, resonator memories, the echo buffer, the
 * Klatt noise generator) and draws noise from rand(), so the same sentence
 * spoken twice in one process gives different samples, and no API call
 * resets that state. A helper process initialises espeak-ng once and then
 * forks a fresh copy of itself for every utterance: each utterance starts
 * from the same freshly initialised state, with rand() seeded from the
 * corpus seed, and so depends only on (sentence, speaker, seed), not on
 * what was said before. It also keeps espeak-ng's global state, and any
 * crash of it, away from the caller's (possibly multi-threaded) process.
 *
 * Protocol over a socket pair (both ends on this machine, native byte
 * order): the parent sends a request (struct request, then the voice,
 * variant and text bytes); the utterance's process answers with messages,
 * each a tag byte and its body:
 *   'A' u32 n, n int16 samples      audio as espeak delivers it
 *   'P' 8 bytes                      a phoneme event's mnemonic
 *   'E' i32 espeak status           end of the utterance
 *   'X' u32 n, n bytes              a failure, in words
 * The helper first says 'H' i32 sample rate once initialised (or 'X'). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>

#include "core/mem.h"
#include "datasets/speech_internal.h"

#define VOICE_PACKAGE "espeak-ng-data"
#define REQUEST_MAGIC 0x4c545351u /* "LTSQ" */
#define MAX_TEXT LT_SPEECH_MAX_SENTENCE_BYTES
#define MAX_NAME 64
/* A reply that stalls this long means espeak-ng hangs. */
#define REPLY_TIMEOUT_MS 60000
/* No sentence of at most 20 words lasts ten minutes. */
#define MAX_SAMPLES ((long)LT_SPEECH_SAMPLE_RATE * 600)

/* Changing these lists changes every corpus: bump LT_SPEECH_FORMAT_VERSION. */
static const char *const train_voices[] = {
    "gmw/en",          "gmw/en-US",          "gmw/en-GB-scotland",
    "gmw/en-GB-x-gbclan", "gmw/en-GB-x-gbcwmd", "gmw/en-029",
};
static const char *const train_variants[] = {
    "m1", "m2", "m3", "m4", "m5", "m8", "f1", "f2", "f3", "klatt", "klatt3", "paul", "robert", "linda",
};
static const char *const test_voices[] = {"gmw/en-GB-x-rp", "gmw/en-US-nyc"};
static const char *const test_variants[] = {"m6", "m7", "f4", "f5", "klatt2", "steph"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_speech_voice_table voice_tables[2] = {
    {train_voices, COUNT(train_voices), train_variants, COUNT(train_variants)},
    {test_voices, COUNT(test_voices), test_variants, COUNT(test_variants)},
};

const lt_speech_voice_table *lt_speech_voices(int set)
{
    return &voice_tables[set != 0];
}

const char *lt_speech_espeak_version(void)
{
    return espeak_Info(NULL);
}

static lt_status check_file(const char *data, const char *folder, const char *name,
                            const char *what)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", data, folder, name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return lt_fail(LT_E_INPUT,
                       "espeak-ng %s %s is not installed (no %s): install the Debian package "
                       "%s (./setup.sh does)", what, name, path, VOICE_PACKAGE);
    return LT_OK;
}

lt_status lt_speech_check_voices(void)
{
    /* Finds the data folder the way espeak_Initialize will (ESPEAK_DATA_PATH,
     * ~/espeak-ng-data, then the built-in path) without initialising. */
    espeak_ng_InitializePath(NULL);
    const char *data = NULL;
    espeak_Info(&data);
    LT_TRY(check_file(data, ".", "phontab", "data file"));
    for (int set = 0; set < 2; set++) {
        const lt_speech_voice_table *t = &voice_tables[set];
        for (int i = 0; i < t->n_voices; i++)
            LT_TRY(check_file(data, "lang", t->voices[i], "voice"));
        for (int i = 0; i < t->n_variants; i++)
            LT_TRY(check_file(data, "voices/!v", t->variants[i], "voice variant"));
    }
    return LT_OK;
}

/* ---- helper side (never returns to the caller's code: it ends in _exit) ---- */

struct request {
    uint32_t magic;
    uint32_t voice_len, variant_len, text_len;
    int32_t rate, pitch;
    uint32_t rand_seed;
};

static int helper_fd = -1;

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *data, size_t n)
{
    char *p = data;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void send_or_die(const void *data, size_t n)
{
    if (write_all(helper_fd, data, n) != 0)
        _exit(3);
}

/* A tag, a u32 count and a body in one system call: audio arrives in many
 * small pieces. */
static void send_counted(char tag, const void *body, uint32_t n, size_t elem)
{
    unsigned char head[5];
    head[0] = (unsigned char)tag;
    memcpy(head + 1, &n, sizeof n);
    struct iovec iov[2] = {{head, sizeof head}, {(void *)body, n * elem}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    size_t left = sizeof head + n * elem;
    while (left > 0) {
        ssize_t w = sendmsg(helper_fd, &msg, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        left -= (size_t)w;
        /* Skip what went out; a partial send is rare but possible. */
        while (w > 0 && msg.msg_iovlen > 0) {
            size_t part = (size_t)w < msg.msg_iov->iov_len ? (size_t)w : msg.msg_iov->iov_len;
            msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + part;
            msg.msg_iov->iov_len -= part;
            w -= (ssize_t)part;
            if (msg.msg_iov->iov_len == 0) {
                msg.msg_iov++;
                msg.msg_iovlen--;
            }
        }
    }
}

static void send_failure(const char *message)
{
    send_counted('X', message, (uint32_t)strlen(message), 1);
}

static int on_audio(short *wav, int count, espeak_EVENT *events)
{
    if (count > 0)
        send_counted('A', wav, (uint32_t)count, sizeof(short));
    for (espeak_EVENT *e = events; e != NULL && e->type != espeakEVENT_LIST_TERMINATED; e++)
        if (e->type == espeakEVENT_PHONEME) {
            send_or_die("P", 1);
            send_or_die(e->id.string, 8);
        }
    return 0;
}

static void speak_one(const struct request *rq, const char *voice, const char *variant,
                      const char *text)
{
    char name[2 * MAX_NAME + 2];
    snprintf(name, sizeof name, "%s+%s", voice, variant);
    if (espeak_SetVoiceByName(name) != EE_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "espeak-ng could not select the voice %s", name);
        send_failure(msg);
        _exit(0);
    }
    espeak_SetParameter(espeakRATE, rq->rate, 0);
    espeak_SetParameter(espeakPITCH, rq->pitch, 0);
    srand(rq->rand_seed);
    int32_t status = espeak_Synth(text, strlen(text) + 1, 0, POS_CHARACTER, 0,
                                  espeakCHARS_UTF8, NULL, NULL);
    send_or_die("E", 1);
    send_or_die(&status, sizeof status);
    _exit(0);
}

static void helper_main(int fd)
{
    helper_fd = fd;
    int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL,
                                 espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_DONT_EXIT);
    if (rate <= 0) {
        send_failure("espeak-ng failed to initialise (is the Debian package " VOICE_PACKAGE
                     " installed?)");
        _exit(0);
    }
    espeak_SetSynthCallback(on_audio);
    /* Selecting a voice scans every voice file once per process to build
     * this list; built here, each utterance's process inherits it. */
    espeak_ListVoices(NULL);
    int32_t hello = rate;
    send_or_die("H", 1);
    send_or_die(&hello, sizeof hello);
    static char voice[MAX_NAME + 1], variant[MAX_NAME + 1], text[MAX_TEXT + 1];
    for (;;) {
        struct request rq;
        if (read_all(fd, &rq, sizeof rq) != 0)
            _exit(0); /* the parent is done */
        if (rq.magic != REQUEST_MAGIC || rq.voice_len > MAX_NAME || rq.variant_len > MAX_NAME ||
            rq.text_len > MAX_TEXT)
            _exit(4);
        if (read_all(fd, voice, rq.voice_len) != 0 || read_all(fd, variant, rq.variant_len) != 0 ||
            read_all(fd, text, rq.text_len) != 0)
            _exit(0);
        voice[rq.voice_len] = variant[rq.variant_len] = text[rq.text_len] = '\0';
        pid_t child = fork();
        if (child < 0)
            _exit(5);
        if (child == 0)
            speak_one(&rq, voice, variant, text);
        int status;
        while (waitpid(child, &status, 0) < 0)
            if (errno != EINTR)
                _exit(6);
        /* Ending here closes the last writer, so the parent sees end of
         * input instead of waiting for a reply that cannot come. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
}

/* ---- parent side ---- */

static int stop_helper(lt_speech_synth *s, int kill_now);

static lt_status helper_gone(lt_speech_synth *s, const char *doing)
{
    pid_t pid = s->pid;
    int status = stop_helper(s, 1);
    char how[64] = "";
    if (WIFEXITED(status))
        snprintf(how, sizeof how, " (exit status %d)", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, sizeof how, " (signal %d)", WTERMSIG(status));
    return lt_fail(LT_E_INTERNAL, "the espeak-ng helper process %ld stopped%s while %s",
                   (long)pid, how, doing);
}

/* Reads exactly n bytes through the read-ahead buffer, waiting at most
 * REPLY_TIMEOUT_MS for each refill: 0 on success, -1 at end of input or on
 * an error, -2 on a timeout. */
static int receive(lt_speech_synth *s, void *data, size_t n)
{
    unsigned char *p = data;
    while (n > 0) {
        if (s->begin == s->end) {
            struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
            int ready = poll(&pfd, 1, REPLY_TIMEOUT_MS);
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready == 0)
                return -2;
            if (ready < 0)
                return -1;
            ssize_t r = read(s->fd, s->buf, LT_SPEECH_SYNTH_BUF);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            s->begin = 0;
            s->end = (size_t)r;
        }
        size_t part = s->end - s->begin < n ? s->end - s->begin : n;
        memcpy(p, s->buf + s->begin, part);
        s->begin += part;
        p += part;
        n -= part;
    }
    return 0;
}

static lt_status receive_or_fail(lt_speech_synth *s, void *data, size_t n, const char *doing)
{
    int r = receive(s, data, n);
    if (r == -2) {
        lt_speech_synth_stop(s, 1);
        return lt_fail(LT_E_INTERNAL, "espeak-ng sent nothing for %d s while %s",
                       REPLY_TIMEOUT_MS / 1000, doing);
    }
    if (r != 0)
        return helper_gone(s, doing);
    return LT_OK;
}

/* Reads an 'X' message's text and fails with it. */
static lt_status receive_failure(lt_speech_synth *s, const char *doing)
{
    uint32_t n;
    LT_TRY(receive_or_fail(s, &n, sizeof n, doing));
    char msg[512];
    if (n >= sizeof msg)
        return helper_gone(s, doing);
    LT_TRY(receive_or_fail(s, msg, n, doing));
    msg[n] = '\0';
    lt_speech_synth_stop(s, 1);
    return lt_fail(LT_E_INPUT, "%s (while %s)", msg, doing);
}

lt_status lt_speech_synth_start(lt_speech_synth *s)
{
    s->pid = -1;
    s->fd = -1;
    s->begin = s->end = 0;
    LT_TRY(lt_mem_alloc((void **)&s->buf, LT_SPEECH_SYNTH_BUF, "espeak-ng replies"));
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        int err = errno;
        stop_helper(s, 0);
        return lt_fail(LT_E_INTERNAL, "cannot create a socket pair for espeak-ng: %s",
                       strerror(err));
    }
    /* Unwritten stdio buffers would otherwise be copied into the helper. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        stop_helper(s, 0);
        return lt_fail(LT_E_INTERNAL, "cannot start the espeak-ng helper process: %s",
                       strerror(err));
    }
    if (pid == 0) {
        /* Only its own end: a copy of another helper's parent end kept here
         * would hide that parent's close from that helper, which would then
         * wait for requests forever. */
        close_range(3, (unsigned)fds[1] - 1, 0);
        close_range((unsigned)fds[1] + 1, ~0u, 0);
        /* Its own process group, so an error path can end it together with
         * the utterance process it may be waiting for. */
        setpgid(0, 0);
        helper_main(fds[1]);
        _exit(0);
    }
    setpgid(pid, pid); /* also here: whichever runs first */
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    const char *doing = "starting espeak-ng";
    char tag;
    LT_TRY(receive_or_fail(s, &tag, 1, doing));
    if (tag == 'X')
        return receive_failure(s, doing);
    int32_t rate;
    if (tag != 'H')
        return helper_gone(s, doing);
    LT_TRY(receive_or_fail(s, &rate, sizeof rate, doing));
    if (rate != LT_SPEECH_SAMPLE_RATE) {
        lt_speech_synth_stop(s, 1);
        return lt_fail(LT_E_INPUT, "espeak-ng synthesises at %d Hz, expected %d Hz", (int)rate,
                       LT_SPEECH_SAMPLE_RATE);
    }
    return LT_OK;
}

/* What a reply is for, in failure messages. */
static void describe(char *doing, size_t size, const lt_speech_speaker *speaker, const char *text)
{
    snprintf(doing, size, "reading \"%s\" with voice %s+%s", text, speaker->voice,
             speaker->variant);
}

lt_status lt_speech_synth_send(lt_speech_synth *s, const lt_speech_speaker *speaker,
                               unsigned rand_seed, const char *text)
{
    char doing[MAX_TEXT + 256];
    describe(doing, sizeof doing, speaker, text);
    struct request rq = {
        .magic = REQUEST_MAGIC,
        .voice_len = (uint32_t)strlen(speaker->voice),
        .variant_len = (uint32_t)strlen(speaker->variant),
        .text_len = (uint32_t)strlen(text),
        .rate = speaker->rate,
        .pitch = speaker->pitch,
        .rand_seed = rand_seed,
    };
    LT_ASSERT(rq.voice_len <= MAX_NAME && rq.variant_len <= MAX_NAME);
    if (rq.text_len > MAX_TEXT)
        return lt_fail(LT_E_INPUT, "a sentence of %u bytes is longer than %d", rq.text_len,
                       MAX_TEXT);
    if (write_all(s->fd, &rq, sizeof rq) != 0 ||
        write_all(s->fd, speaker->voice, rq.voice_len) != 0 ||
        write_all(s->fd, speaker->variant, rq.variant_len) != 0 ||
        write_all(s->fd, text, rq.text_len) != 0)
        return helper_gone(s, doing);
    return LT_OK;
}

lt_status lt_speech_synth_receive(lt_speech_synth *s, lt_speech_audio *audio,
                                  const lt_speech_speaker *speaker, const char *text)
{
    char doing[MAX_TEXT + 256];
    describe(doing, sizeof doing, speaker, text);
    audio->n_samples = 0;
    audio->n_phones = 0;
    for (;;) {
        char tag;
        LT_TRY(receive_or_fail(s, &tag, 1, doing));
        if (tag == 'A') {
            uint32_t n;
            LT_TRY(receive_or_fail(s, &n, sizeof n, doing));
            if ((long)n > MAX_SAMPLES - audio->n_samples) {
                lt_speech_synth_stop(s, 1);
                return lt_fail(LT_E_INTERNAL, "espeak-ng produced over %ld samples while %s",
                               MAX_SAMPLES, doing);
            }
            LT_TRY(lt_mem_grow((void **)&audio->samples, &audio->samples_cap,
                                  (size_t)audio->n_samples + n, sizeof(int16_t), "audio"));
            LT_TRY(receive_or_fail(s, audio->samples + audio->n_samples, sizeof(int16_t) * n,
                                   doing));
            audio->n_samples += n;
        } else if (tag == 'P') {
            char name[9];
            LT_TRY(receive_or_fail(s, name, 8, doing));
            name[8] = '\0'; /* an 8-byte mnemonic comes without a terminator */
            int id = lt_speech_phone_fold(name);
            if (id == LT_SPEECH_PHONE_UNKNOWN) {
                lt_speech_synth_stop(s, 1);
                return lt_fail(LT_E_INPUT,
                               "espeak-ng phoneme \"%s\" is not in the phone fold table "
                               "(src/datasets/speech_phones.c), met while %s", name, doing);
            }
            if (id != LT_SPEECH_PHONE_DROP) {
                LT_TRY(lt_mem_grow((void **)&audio->phones, &audio->phones_cap,
                                      (size_t)audio->n_phones + 1, sizeof(int32_t), "phones"));
                audio->phones[audio->n_phones++] = id;
            }
        } else if (tag == 'E') {
            int32_t status;
            LT_TRY(receive_or_fail(s, &status, sizeof status, doing));
            if (status != EE_OK) {
                lt_speech_synth_stop(s, 1);
                return lt_fail(LT_E_INTERNAL, "espeak-ng failed (status %d) while %s",
                               (int)status, doing);
            }
            return LT_OK;
        } else if (tag == 'X') {
            return receive_failure(s, doing);
        } else {
            return helper_gone(s, doing);
        }
    }
}

lt_status lt_speech_synth_say(lt_speech_synth *s, lt_speech_audio *audio,
                              const lt_speech_speaker *speaker, unsigned rand_seed,
                              const char *text)
{
    LT_TRY(lt_speech_synth_send(s, speaker, rand_seed, text));
    return lt_speech_synth_receive(s, audio, speaker, text);
}

/* Ends the helper and returns its wait status (0 if there was none). An
 * exit it made on its own before a kill keeps its own status. */
static int stop_helper(lt_speech_synth *s, int kill_now)
{
    int status = 0;
    if (s->pid > 0 && kill_now)
        kill(-s->pid, SIGKILL);
    if (s->fd >= 0)
        close(s->fd); /* the helper reads end of input and exits */
    if (s->pid > 0)
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
        }
    lt_mem_free(s->buf);
    s->buf = NULL;
    s->pid = -1;
    s->fd = -1;
    return status;
}

void lt_speech_synth_stop(lt_speech_synth *s, int kill_now)
{
    stop_helper(s, kill_now);
}
