/* The sentence pool: WordNet's example sentences.
 *
 * In WordNet's data.<pos> files each synset line ends with its gloss after
 * " | "; the examples are the double-quoted parts of the gloss, e.g.
 *   ... | the destruction of an enemy plane; "the pilot reported two kills"
 * Lines starting with a space are the licence header. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/mem.h"
#include "datasets/speech_internal.h"

#define DEFAULT_WORDNET_DIR "/usr/share/wordnet"
#define MIN_WORDS 4
#define MAX_WORDS 20
/* Each split's share (5%) must hold a handful of sentences. */
#define MIN_POOL 200

static const char *const wordnet_files[] = {"data.adj", "data.adv", "data.noun", "data.verb"};

static int allowed_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == ' ' || strchr(".,;:'!?-", ch) != NULL;
}

int lt_speech_sentence_ok(const char *s)
{
    int words = 0;
    if (s[0] == ' ' || s[0] == '\0')
        return 0;
    for (const char *p = s; *p; p++) {
        if (!allowed_char(*p))
            return 0;
        if (*p == ' ' && (p[1] == ' ' || p[1] == '\0'))
            return 0; /* runs of spaces are collapsed before this */
        if (*p != ' ' && (p == s || p[-1] == ' '))
            words++;
    }
    return words >= MIN_WORDS && words <= MAX_WORDS;
}

/* Sentences collected so far: text at offsets into a growing arena. */
typedef struct collector {
    char *arena;
    size_t arena_cap, arena_len;
    size_t *offsets;
    size_t offsets_cap, count;
} collector;

/* Copies [begin, end) with whitespace runs collapsed and trimmed; keeps it
 * if it passes the filter. */
static lt_status add_example(collector *c, const char *begin, const char *end)
{
    size_t room = (size_t)(end - begin) + 1;
    LT_TRY(lt_mem_grow((void **)&c->arena, &c->arena_cap, c->arena_len + room, 1,
                          "sentence text"));
    char *out = c->arena + c->arena_len;
    size_t n = 0;
    for (const char *p = begin; p < end; p++) {
        char ch = *p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p;
        if (ch == ' ' && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = ch;
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    if (!lt_speech_sentence_ok(out))
        return LT_OK;
    LT_TRY(lt_mem_grow((void **)&c->offsets, &c->offsets_cap, c->count + 1, sizeof(size_t),
                          "sentence list"));
    c->offsets[c->count++] = c->arena_len;
    c->arena_len += n + 1;
    return LT_OK;
}

static lt_status scan_line(collector *c, const char *line, const char *end)
{
    if (line == end || line[0] == ' ')
        return LT_OK;
    const char *gloss = NULL;
    for (const char *p = line; p + 2 < end; p++)
        if (p[0] == ' ' && p[1] == '|' && p[2] == ' ') {
            gloss = p + 3;
            break;
        }
    if (gloss == NULL)
        return LT_OK;
    for (const char *p = gloss; p < end; p++) {
        if (*p != '"')
            continue;
        const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
        if (close == NULL)
            break; /* an unmatched quote: no example */
        LT_TRY(add_example(c, p + 1, close));
        p = close;
    }
    return LT_OK;
}

static lt_status read_whole(char **out, size_t *len, const char *path)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT)
            return lt_fail(LT_E_INPUT,
                           "WordNet file %s is missing: install the Debian package wordnet-base "
                           "(./setup.sh does)", path);
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return lt_fail(LT_E_IO, "cannot read %s: not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    char *buf;
    lt_status status = lt_mem_alloc((void **)&buf, n + 1, "WordNet file");
    if (status == LT_OK && fread(buf, 1, n, f) != n) {
        status = lt_fail(LT_E_IO, "cannot read %s: %s", path,
                         ferror(f) ? strerror(errno) : "shorter than its size");
        lt_mem_free(buf);
    }
    fclose(f);
    if (status != LT_OK)
        return status;
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return LT_OK;
}

static int lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* ASCII-only, so the order cannot depend on the locale. */
static int compare_nocase(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = lower((unsigned char)*a), y = lower((unsigned char)*b);
        if (x != y || x == 0)
            return x - y;
    }
}

static int compare_sentences(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    int c = compare_nocase(a, b);
    return c != 0 ? c : strcmp(a, b);
}

lt_status lt_speech_pool_load(lt_speech_pool *pool, const char *dir)
{
    memset(pool, 0, sizeof *pool);
    if (dir == NULL)
        dir = DEFAULT_WORDNET_DIR;
    collector c = {0};
    lt_status status = LT_OK;
    for (size_t i = 0; i < sizeof wordnet_files / sizeof wordnet_files[0] && status == LT_OK;
         i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, wordnet_files[i]) >= sizeof path) {
            status = lt_fail(LT_E_USAGE, "wordnet_dir: %s is too long", dir);
            break;
        }
        char *data = NULL;
        size_t len = 0;
        status = read_whole(&data, &len, path);
        for (size_t at = 0; status == LT_OK && at < len;) {
            const char *line = data + at;
            const char *nl = memchr(line, '\n', len - at);
            const char *end = nl != NULL ? nl : data + len;
            status = scan_line(&c, line, end);
            at = (size_t)(end - data) + 1;
        }
        if (data != NULL)
            lt_mem_free(data);
    }
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&pool->sentences, sizeof(char *) * (c.count + 1),
                              "sentence pool");
    if (status != LT_OK) {
        lt_mem_free(c.arena);
        lt_mem_free(c.offsets);
        lt_mem_free(pool->sentences);
        memset(pool, 0, sizeof *pool);
        return status;
    }
    pool->text = c.arena;
    for (size_t i = 0; i < c.count; i++)
        pool->sentences[i] = c.arena + c.offsets[i];
    lt_mem_free(c.offsets);
    qsort(pool->sentences, c.count, sizeof(char *), compare_sentences);
    /* Sentences differing only in case count as one; the first is kept. */
    size_t kept = 0;
    for (size_t i = 0; i < c.count; i++)
        if (kept == 0 || compare_nocase(pool->sentences[kept - 1], pool->sentences[i]) != 0)
            pool->sentences[kept++] = pool->sentences[i];
    pool->count = (int)kept;
    uLong crc = crc32(0, Z_NULL, 0);
    for (size_t i = 0; i < kept; i++)
        crc = crc32_z(crc, (const Bytef *)pool->sentences[i], strlen(pool->sentences[i]) + 1);
    pool->crc = (uint32_t)crc;
    if (kept < MIN_POOL) {
        lt_speech_pool_free(pool);
        return lt_fail(LT_E_INPUT,
                       "%s: only %zu example sentences of %d..%d words, expected at least %d "
                       "(is it WordNet 3 from the Debian package wordnet-base?)",
                       dir, kept, MIN_WORDS, MAX_WORDS, MIN_POOL);
    }
    return LT_OK;
}

void lt_speech_pool_free(lt_speech_pool *pool)
{
    lt_mem_free(pool->sentences);
    lt_mem_free(pool->text);
    memset(pool, 0, sizeof *pool);
}
