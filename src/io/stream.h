/* A file's contents as a byte stream, plain or gzip-compressed (recognised
 * by its magic bytes, not its name; concatenated gzip members read as one),
 * with MD5s of the bytes as stored and as delivered. The readers of MNIST's
 * IDX files and of the CIFAR-10 archive share it. */
#ifndef LT_IO_STREAM_H
#define LT_IO_STREAM_H

#include <stddef.h>
#include <stdio.h>
#include <zlib.h>

#include "core/status.h"
#include "io/md5.h"

typedef struct lt_stream {
    FILE *f;
    const char *path;
    unsigned char *in; /* bytes as stored in the file, a chunk at a time */
    size_t in_pos, in_len;
    int eof;           /* the file has nothing beyond in[in_len] */
    int gz;            /* the file is gzip-compressed */
    z_stream zs;
    int zs_ready;
    int member_done;   /* inflate finished a gzip member, trailer checked */
    lt_md5 delivered;  /* of every byte handed out so far */
    lt_md5 stored;     /* of every byte read from the file so far */
} lt_stream;

/* Opens `path` (kept by pointer: it must outlive the stream). LT_E_IO if it
 * cannot be opened or read. Close it whatever this returns. */
lt_status lt_stream_open(lt_stream *s, const char *path);

/* Up to `want` bytes of contents into dst; *got < want only at the end.
 * LT_E_INPUT for damaged or truncated gzip data, LT_E_IO for a read error. */
lt_status lt_stream_read(lt_stream *s, void *dst, size_t want, size_t *got);

/* Reads to the end, discarding, so that `stored` covers the whole file and
 * a gzip trailer is checked. */
lt_status lt_stream_drain(lt_stream *s);

/* Releases everything and zeroes the struct; a zeroed struct is ignored. */
void lt_stream_close(lt_stream *s);

#endif
