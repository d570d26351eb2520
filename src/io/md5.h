/* MD5 (RFC 1321), used only to recognise known data files (the original
 * MNIST files, converted subsets) by their published checksums. It is not a
 * security check: MD5 collisions are easy to make on purpose. */
#ifndef LT_IO_MD5_H
#define LT_IO_MD5_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LT_MD5_BYTES 16
#define LT_MD5_HEX_LEN 32 /* characters, without the terminating NUL */

typedef struct lt_md5 {
    uint32_t state[4];
    uint64_t bytes;          /* message length so far */
    unsigned char block[64]; /* a partial block waiting for more bytes */
} lt_md5;

void lt_md5_init(lt_md5 *md5);
void lt_md5_update(lt_md5 *md5, const void *data, size_t bytes);
/* Pads, finishes and writes the digest; the state must be re-initialised
 * before further use. */
void lt_md5_final(lt_md5 *md5, unsigned char digest[LT_MD5_BYTES]);

/* The digest in lowercase hex, as md5sum prints it. Returns hex. */
char *lt_md5_hex(char hex[LT_MD5_HEX_LEN + 1], const unsigned char digest[LT_MD5_BYTES]);

/* MD5 of a buffer in one call. */
void lt_md5_buffer(unsigned char digest[LT_MD5_BYTES], const void *data, size_t bytes);

/* MD5 of a file's bytes as stored (a .gz file is not decompressed).
 * LT_E_IO naming the path if it cannot be opened or read. */
lt_status lt_md5_file(unsigned char digest[LT_MD5_BYTES], const char *path);

#endif
