#include "io/idx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "io/stream.h"

#define IDX_TYPE_UBYTE 0x08
#define IDX_MAX_HEADER (4 + 4 * LT_IDX_IMAGES)
/* When the data size cannot be checked against the file before reading (a
 * gzip file, a pipe), the buffer starts at this size and doubles as data
 * arrives, so a lying header costs no more memory than the file delivers. */
#define GROW_START ((size_t)1 << 20)

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static const char *kind_of(int ndim) { return ndim == LT_IDX_IMAGES ? "images" : "labels"; }

/* Magic number and dimensions into out; *header_bytes gets their length. */
static lt_status read_header(lt_idx *out, size_t *header_bytes, lt_stream *s, int ndim)
{
    unsigned char h[IDX_MAX_HEADER];
    size_t got;
    LT_TRY(lt_stream_read(s, h, 4, &got));
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
    LT_TRY(lt_stream_read(s, h + 4, dims_bytes, &got));
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
static lt_status check_plain_size(int *known, const lt_stream *s, size_t header_bytes,
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

static lt_status read_data(uint8_t **out, lt_stream *s, size_t bytes, int size_known)
{
    size_t cap = size_known || bytes <= GROW_START ? bytes : GROW_START;
    uint8_t *buf;
    LT_TRY(lt_mem_alloc((void **)&buf, cap, s->path));
    size_t have = 0;
    lt_status status;
    for (;;) {
        size_t got;
        status = lt_stream_read(s, buf + have, cap - have, &got);
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
    lt_stream s;
    lt_status status = lt_stream_open(&s, path);
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
        status = lt_stream_read(&s, &extra, 1, &got);
        if (status == LT_OK && got > 0)
            status = lt_fail(LT_E_INPUT, "%s: unexpected bytes after the IDX data (the header "
                                         "promises %zu data bytes)", path, out->bytes);
    }
    if (status == LT_OK) {
        out->gzipped = s.gz;
        lt_md5_final(&s.delivered, out->md5);
    }
    lt_stream_close(&s);
    if (status != LT_OK)
        lt_idx_free(out);
    return status;
}

void lt_idx_free(lt_idx *idx)
{
    lt_mem_free(idx->data);
    memset(idx, 0, sizeof *idx);
}
