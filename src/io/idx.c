#include "io/idx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/mem.h"
#include "io/read.h"

#define IDX_TYPE_UBYTE 0x08
#define IDX_MAX_HEADER (4 + 4 * LT_IDX_IMAGES)
/* Compressed bytes read from the file at a time. */
#define IN_CHUNK ((size_t)64 * 1024)
/* When the data size cannot be checked against the file before reading (a
 * gzip file, a pipe), the buffer starts at this size and doubles as data
 * arrives, so a lying header costs no more memory than the file delivers. */
#define GROW_START ((size_t)1 << 20)
/* zlib counts in uInt; longer requests are served in pieces. */
#define ZLIB_PIECE ((size_t)1 << 30)

/* The file's uncompressed contents as a byte stream, whatever its encoding,
 * with the MD5 of everything delivered so far. */
typedef struct idx_stream {
    FILE *f;
    const char *path;
    unsigned char *in; /* (IN_CHUNK) bytes as stored in the file */
    size_t in_pos, in_len;
    int eof;           /* the file has nothing beyond in[in_len] */
    int gz;
    z_stream zs;
    int zs_ready;
    int member_done;   /* inflate finished a gzip member, trailer checked */
    lt_md5 md5;
} idx_stream;

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

static lt_status fill(idx_stream *s)
{
    s->in_pos = 0;
    s->in_len = fread(s->in, 1, IN_CHUNK, s->f);
    if (s->in_len < IN_CHUNK) {
        if (ferror(s->f))
            return lt_fail(LT_E_IO, "cannot read %s: %s", s->path, strerror(errno));
        s->eof = 1;
    }
    return LT_OK;
}

static lt_status read_plain(idx_stream *s, unsigned char *dst, size_t want, size_t *got)
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

static lt_status read_gz(idx_stream *s, unsigned char *dst, size_t want, size_t *got)
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

/* Up to `want` uncompressed bytes into dst; *got < want only at the end. */
static lt_status stream_read(idx_stream *s, void *dst, size_t want, size_t *got)
{
    *got = 0;
    lt_status status = s->gz ? read_gz(s, dst, want, got) : read_plain(s, dst, want, got);
    lt_md5_update(&s->md5, dst, *got);
    return status;
}

static lt_status stream_open(idx_stream *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    lt_md5_init(&s->md5);
    LT_TRY(lt_open_read(&s->f, path));
    LT_TRY(lt_mem_alloc((void **)&s->in, IN_CHUNK, "IDX read buffer"));
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

static void stream_close(idx_stream *s)
{
    if (s->zs_ready)
        inflateEnd(&s->zs);
    if (s->f != NULL)
        fclose(s->f);
    lt_mem_free(s->in);
    memset(s, 0, sizeof *s);
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static const char *kind_of(int ndim) { return ndim == LT_IDX_IMAGES ? "images" : "labels"; }

/* Magic number and dimensions into out; *header_bytes gets their length. */
static lt_status read_header(lt_idx *out, size_t *header_bytes, idx_stream *s, int ndim)
{
    unsigned char h[IDX_MAX_HEADER];
    size_t got;
    LT_TRY(stream_read(s, h, 4, &got));
    uint32_t want_magic = (uint32_t)IDX_TYPE_UBYTE << 8 | (uint32_t)ndim;
    if (got < 4)
        return lt_fail(LT_E_INPUT, "%s: not an IDX file: %zu bytes, shorter than the magic "
                                   "number 0x%08x (uint8 %s)", s->path, got, want_magic,
                       kind_of(ndim));
    uint32_t magic = get_be32(h);
    if (magic != want_magic) {
        const char *what = "";
        if (magic == (want_magic ^ (LT_IDX_LABELS ^ LT_IDX_IMAGES)))
            what = ndim == LT_IDX_IMAGES ? ": that is a label file" : ": that is an image file";
        return lt_fail(LT_E_INPUT, "%s: IDX magic number 0x%08x, expected 0x%08x (uint8 %s)%s",
                       s->path, magic, want_magic, kind_of(ndim), what);
    }
    size_t dims_bytes = 4 * (size_t)ndim;
    LT_TRY(stream_read(s, h + 4, dims_bytes, &got));
    if (got < dims_bytes)
        return lt_fail(LT_E_INPUT, "%s: truncated IDX file: it ends inside the header (%zu of "
                                   "%zu bytes)", s->path, 4 + got, 4 + dims_bytes);
    size_t bytes = 1;
    for (int i = 0; i < ndim; i++) {
        uint32_t d = get_be32(h + 4 + 4 * i);
        if (d == 0)
            return lt_fail(LT_E_INPUT, "%s: IDX dimension %d is 0, expected at least 1",
                           s->path, i + 1);
        if (d > LT_IDX_MAX_BYTES / bytes)
            return lt_fail(LT_E_INPUT, "%s: IDX dimensions declare more than %zu bytes of data",
                           s->path, LT_IDX_MAX_BYTES);
        bytes *= d;
        out->dims[i] = (int)d; /* d <= LT_IDX_MAX_BYTES < INT_MAX */
    }
    out->ndim = ndim;
    out->bytes = bytes;
    *header_bytes = 4 + dims_bytes;
    return LT_OK;
}

/* For a plain regular file the size is known: refuse a mismatch before
 * allocating, with exact numbers. *known is 0 where it cannot be checked. */
static lt_status check_plain_size(int *known, const idx_stream *s, size_t header_bytes,
                                  size_t bytes)
{
    struct stat st;
    *known = 0;
    if (s->gz || fstat(fileno(s->f), &st) != 0 || !S_ISREG(st.st_mode))
        return LT_OK;
    unsigned long long need = (unsigned long long)header_bytes + bytes;
    unsigned long long have = (unsigned long long)st.st_size;
    if (have < need)
        return lt_fail(LT_E_INPUT, "%s: truncated IDX file: the header promises %zu data bytes "
                                   "(%llu in all), the file has %llu", s->path, bytes, need, have);
    if (have > need)
        return lt_fail(LT_E_INPUT, "%s: %llu unexpected bytes after the IDX data (the header "
                                   "promises %zu data bytes)", s->path, have - need, bytes);
    *known = 1;
    return LT_OK;
}

static lt_status read_data(uint8_t **out, idx_stream *s, size_t bytes, int size_known)
{
    size_t cap = size_known || bytes <= GROW_START ? bytes : GROW_START;
    uint8_t *buf;
    LT_TRY(lt_mem_alloc((void **)&buf, cap, s->path));
    size_t have = 0;
    lt_status status;
    for (;;) {
        size_t got;
        status = stream_read(s, buf + have, cap - have, &got);
        have += got;
        if (status != LT_OK)
            break;
        if (have < cap) {
            status = lt_fail(LT_E_INPUT, "%s: truncated IDX file: the header promises %zu data "
                                         "bytes, the %sfile holds %zu", s->path, bytes,
                             s->gz ? "uncompressed " : "", have);
            break;
        }
        if (cap == bytes)
            break;
        size_t grown_cap = cap > bytes / 2 ? bytes : 2 * cap;
        uint8_t *grown;
        status = lt_mem_alloc((void **)&grown, grown_cap, s->path);
        if (status != LT_OK)
            break;
        memcpy(grown, buf, have);
        lt_mem_free(buf);
        buf = grown;
        cap = grown_cap;
    }
    if (status != LT_OK) {
        lt_mem_free(buf);
        return status;
    }
    *out = buf;
    return LT_OK;
}

lt_status lt_idx_read(lt_idx *out, const char *path, int ndim)
{
    LT_ASSERT(ndim == LT_IDX_LABELS || ndim == LT_IDX_IMAGES);
    memset(out, 0, sizeof *out);
    idx_stream s;
    lt_status status = stream_open(&s, path);
    size_t header_bytes = 0;
    int size_known = 0;
    if (status == LT_OK)
        status = read_header(out, &header_bytes, &s, ndim);
    if (status == LT_OK)
        status = check_plain_size(&size_known, &s, header_bytes, out->bytes);
    if (status == LT_OK)
        status = read_data(&out->data, &s, out->bytes, size_known);
    if (status == LT_OK) {
        /* One byte more must find the end (for gzip this also checks the
         * trailer's CRC and length). */
        unsigned char extra;
        size_t got;
        status = stream_read(&s, &extra, 1, &got);
        if (status == LT_OK && got > 0)
            status = lt_fail(LT_E_INPUT, "%s: unexpected bytes after the IDX data (the header "
                                         "promises %zu data bytes)", path, out->bytes);
    }
    if (status == LT_OK) {
        out->gzipped = s.gz;
        lt_md5_final(&s.md5, out->md5);
    }
    stream_close(&s);
    if (status != LT_OK)
        lt_idx_free(out);
    return status;
}

void lt_idx_free(lt_idx *idx)
{
    lt_mem_free(idx->data);
    memset(idx, 0, sizeof *idx);
}
