#include "io/stream.h"

#include <errno.h>
#include <string.h>

#include "core/mem.h"
#include "io/read.h"

/* Bytes read from the file at a time. */
#define IN_CHUNK ((size_t)64 * 1024)
/* zlib counts in uInt; longer requests are served in pieces. */
#define ZLIB_PIECE ((size_t)1 << 30)

static voidpf zlib_alloc(voidpf opaque, uInt items, uInt size)
{
    void *block = NULL;
    (void)opaque;
    return lt_mem_alloc(&block, (size_t)items * size, "gzip decoder") == LT_OK ? block : Z_NULL;
}

static void zlib_free(voidpf opaque, voidpf block)
{
    (void)opaque;
    lt_mem_free(block);
}

static lt_status fill(lt_stream *s)
{
    s->in_pos = 0;
    s->in_len = fread(s->in, 1, IN_CHUNK, s->f);
    lt_md5_update(&s->stored, s->in, s->in_len);
    if (s->in_len < IN_CHUNK) {
        if (ferror(s->f))
            return lt_fail(LT_E_IO, "cannot read %s: %s", s->path, strerror(errno));
        s->eof = 1;
    }
    return LT_OK;
}

static lt_status read_plain(lt_stream *s, unsigned char *dst, size_t want, size_t *got)
{
    while (*got < want) {
        if (s->in_pos == s->in_len) {
            if (s->eof)
                break;
            LT_TRY(fill(s));
            continue;
        }
        size_t n = s->in_len - s->in_pos;
        if (n > want - *got)
            n = want - *got;
        memcpy(dst + *got, s->in + s->in_pos, n);
        s->in_pos += n;
        *got += n;
    }
    return LT_OK;
}

static lt_status read_gz(lt_stream *s, unsigned char *dst, size_t want, size_t *got)
{
    while (*got < want) {
        if (s->in_pos == s->in_len && !s->eof)
            LT_TRY(fill(s));
        if (s->member_done) {
            if (s->in_pos == s->in_len)
                break; /* the end of the file, after a complete member */
            /* More bytes: another member may follow (as `cat a.gz b.gz`
             * makes); anything else fails in inflate's header check. */
            if (inflateReset(&s->zs) != Z_OK)
                return lt_fail(LT_E_INTERNAL, "%s: zlib reset failed", s->path);
            s->member_done = 0;
        }
        size_t room = want - *got < ZLIB_PIECE ? want - *got : ZLIB_PIECE;
        size_t avail = s->in_len - s->in_pos;
        s->zs.next_in = s->in + s->in_pos;
        s->zs.avail_in = (uInt)avail;
        s->zs.next_out = dst + *got;
        s->zs.avail_out = (uInt)room;
        int ret = inflate(&s->zs, Z_NO_FLUSH);
        s->in_pos += avail - s->zs.avail_in;
        *got += room - s->zs.avail_out;
        switch (ret) {
        case Z_STREAM_END:
            s->member_done = 1;
            break;
        case Z_OK:
            break;
        case Z_BUF_ERROR: /* no progress: fine only if more input is coming */
            if (s->in_pos == s->in_len && s->eof)
                return lt_fail(LT_E_INPUT, "%s: truncated gzip data: the file ends inside the "
                                           "compressed stream", s->path);
            break;
        case Z_MEM_ERROR:
            return lt_fail(LT_E_NOMEM, "%s: no memory for the gzip decoder", s->path);
        default:
            return lt_fail(LT_E_INPUT, "%s: damaged gzip data (%s)", s->path,
                           s->zs.msg != NULL ? s->zs.msg : "zlib error");
        }
    }
    return LT_OK;
}

lt_status lt_stream_read(lt_stream *s, void *dst, size_t want, size_t *got)
{
    *got = 0;
    lt_status status = s->gz ? read_gz(s, dst, want, got) : read_plain(s, dst, want, got);
    lt_md5_update(&s->delivered, dst, *got);
    return status;
}

lt_status lt_stream_drain(lt_stream *s)
{
    unsigned char sink[4096];
    size_t got;
    do
        LT_TRY(lt_stream_read(s, sink, sizeof sink, &got));
    while (got == sizeof sink);
    return LT_OK;
}

lt_status lt_stream_open(lt_stream *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    lt_md5_init(&s->delivered);
    lt_md5_init(&s->stored);
    LT_TRY(lt_open_read(&s->f, path));
    LT_TRY(lt_mem_alloc((void **)&s->in, IN_CHUNK, "read buffer"));
    LT_TRY(fill(s));
    s->gz = s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b;
    if (s->gz) {
        s->zs.zalloc = zlib_alloc;
        s->zs.zfree = zlib_free;
        /* 16 + 15: a gzip wrapper (header and CRC checked) around DEFLATE. */
        int ret = inflateInit2(&s->zs, 16 + MAX_WBITS);
        if (ret != Z_OK)
            return lt_fail(ret == Z_MEM_ERROR ? LT_E_NOMEM : LT_E_INTERNAL,
                           "%s: cannot start the gzip decoder", path);
        s->zs_ready = 1;
    }
    return LT_OK;
}

void lt_stream_close(lt_stream *s)
{
    if (s->zs_ready)
        inflateEnd(&s->zs);
    if (s->f != NULL)
        fclose(s->f);
    lt_mem_free(s->in);
    memset(s, 0, sizeof *s);
}
