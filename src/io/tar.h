/* tar archives (POSIX ustar, as GNU tar writes them) read in order from a
 * stream: the CIFAR-10 binary distribution is one, gzip-compressed. Only
 * what that needs: member names (prefix/name), sizes and types; extended
 * headers (pax, GNU long names) are members like any other, so a member
 * named through one is seen under its truncated ustar name. */
#ifndef LT_IO_TAR_H
#define LT_IO_TAR_H

#include "core/status.h"
#include "io/stream.h"

enum { LT_TAR_NAME_MAX = 256 };

typedef struct lt_tar_member {
    char name[LT_TAR_NAME_MAX]; /* prefix "/" name, as stored */
    long long size;             /* bytes of data that follow the header */
    int regular;                /* a regular file (type '0' or NUL) */
    long long offset;           /* of its header in the archive, for messages */
} lt_tar_member;

typedef struct lt_tar {
    lt_stream *s;
    long long offset;  /* archive bytes consumed so far */
    long long pending; /* data and padding of the current member not yet read */
    char inside[LT_TAR_NAME_MAX + 8]; /* "member NAME", for messages */
} lt_tar;

void lt_tar_start(lt_tar *t, lt_stream *s);

/* The next member's header into *m, after skipping whatever of the
 * previous member was not read; *end = 1 at the end-of-archive block (or a
 * stream that ends between members). LT_E_INPUT naming the archive for a
 * header with a bad checksum, a size that is not a number, or an archive
 * that ends inside a header. */
lt_status lt_tar_next(lt_tar *t, lt_tar_member *m, int *end);

/* The current member's data, all of it (m->size bytes), into dst. */
lt_status lt_tar_read(lt_tar *t, const lt_tar_member *m, void *dst);

#endif
