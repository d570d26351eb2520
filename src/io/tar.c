#include "io/tar.h"

#include <stdio.h>
#include <string.h>

#define BLOCK 512
#define SIZE_AT 124
#define SIZE_LEN 12
#define SUM_AT 148
#define SUM_LEN 8
#define TYPE_AT 156
#define MAGIC_AT 257
#define PREFIX_AT 345
#define PREFIX_LEN 155
#define NAME_LEN 100

void lt_tar_start(lt_tar *t, lt_stream *s)
{
    memset(t, 0, sizeof *t);
    t->s = s;
}

/* Reads exactly n bytes, or says where the archive ended. */
static lt_status read_exactly(lt_tar *t, void *dst, size_t n, const char *inside)
{
    size_t got;
    LT_TRY(lt_stream_read(t->s, dst, n, &got));
    t->offset += (long long)got;
    if (got < n)
        return lt_fail(LT_E_INPUT, "%s: truncated tar archive: it ends inside %s (at byte %lld)",
                       t->s->path, inside, t->offset);
    return LT_OK;
}

/* An octal field (NUL or space terminated); -1 if it is not one. GNU tar's
 * base-256 form (sizes of 8 GiB and more) is not needed here. */
static long long octal(const unsigned char *field, int len)
{
    long long value = 0;
    int i = 0, digits = 0;
    while (i < len && field[i] == ' ')
        i++;
    for (; i < len && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
        if (value > (1LL << 50))
            return -1;
        value = value * 8 + (field[i] - '0');
    }
    if (digits == 0 || (i < len && field[i] != ' ' && field[i] != '\0'))
        return -1;
    return value;
}

static int all_zero(const unsigned char *block)
{
    for (int i = 0; i < BLOCK; i++)
        if (block[i] != 0)
            return 0;
    return 1;
}

static lt_status skip_pending(lt_tar *t)
{
    unsigned char sink[16 * BLOCK];
    while (t->pending > 0) {
        size_t n = t->pending < (long long)sizeof sink ? (size_t)t->pending : sizeof sink;
        LT_TRY(read_exactly(t, sink, n, t->inside));
        t->pending -= (long long)n;
    }
    return LT_OK;
}

static long long padded(long long size) { return (size + BLOCK - 1) / BLOCK * BLOCK; }

static lt_status parse_header(lt_tar *t, lt_tar_member *m, const unsigned char *h)
{
    long long stored_sum = octal(h + SUM_AT, SUM_LEN), sum = 0;
    for (int i = 0; i < BLOCK; i++)
        sum += i >= SUM_AT && i < SUM_AT + SUM_LEN ? ' ' : h[i];
    if (stored_sum != sum)
        return lt_fail(LT_E_INPUT, "%s: not a tar archive, or a damaged one: the header at byte "
                                   "%lld has checksum %lld, its bytes sum to %lld",
                       t->s->path, m->offset, stored_sum, sum);
    m->size = octal(h + SIZE_AT, SIZE_LEN);
    if (m->size < 0)
        return lt_fail(LT_E_INPUT, "%s: the tar header at byte %lld has a size that is not an "
                                   "octal number", t->s->path, m->offset);
    char name[NAME_LEN + 1], prefix[PREFIX_LEN + 1] = "";
    memcpy(name, h, NAME_LEN);
    name[NAME_LEN] = '\0';
    if (memcmp(h + MAGIC_AT, "ustar", 5) == 0) {
        memcpy(prefix, h + PREFIX_AT, PREFIX_LEN);
        prefix[PREFIX_LEN] = '\0';
    }
    snprintf(m->name, sizeof m->name, "%s%s%s", prefix, prefix[0] ? "/" : "", name);
    m->regular = h[TYPE_AT] == '0' || h[TYPE_AT] == '\0';
    return LT_OK;
}

lt_status lt_tar_next(lt_tar *t, lt_tar_member *m, int *end)
{
    memset(m, 0, sizeof *m);
    *end = 0;
    LT_TRY(skip_pending(t));
    m->offset = t->offset;
    unsigned char h[BLOCK];
    size_t got;
    LT_TRY(lt_stream_read(t->s, h, 1, &got));
    if (got == 0) { /* no end blocks: GNU tar accepts this too */
        *end = 1;
        return LT_OK;
    }
    t->offset += 1;
    LT_TRY(read_exactly(t, h + 1, BLOCK - 1, "a member's header"));
    if (all_zero(h)) {
        *end = 1;
        return LT_OK;
    }
    LT_TRY(parse_header(t, m, h));
    t->pending = padded(m->size);
    snprintf(t->inside, sizeof t->inside, "member %s", m->name);
    return LT_OK;
}

lt_status lt_tar_read(lt_tar *t, const lt_tar_member *m, void *dst)
{
    LT_ASSERT(t->pending == padded(m->size));
    LT_TRY(read_exactly(t, dst, (size_t)m->size, t->inside));
    t->pending -= m->size;
    return skip_pending(t);
}
