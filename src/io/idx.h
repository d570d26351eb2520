/* IDX files, the format of the MNIST distribution: a big-endian header (two
 * zero bytes, a type byte, the number of dimensions, then one uint32 per
 * dimension) followed by the values. Only the two uint8 layouts MNIST uses
 * are read: images (magic 0x00000803, count x rows x cols) and labels
 * (magic 0x00000801, count). Files may be plain or gzip-compressed; gzip is
 * recognised by its magic bytes, not by the file name. */
#ifndef LT_IO_IDX_H
#define LT_IO_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "io/md5.h"

enum {
    LT_IDX_LABELS = 1, /* dimensions of a label file: count */
    LT_IDX_IMAGES = 3  /* dimensions of an image file: count, rows, cols */
};

/* Largest data an IDX file may declare (1 GiB); MNIST's biggest file holds
 * 47 MB. Keeps every dimension within int. */
#define LT_IDX_MAX_BYTES ((size_t)1 << 30)

typedef struct lt_idx {
    int ndim;                 /* LT_IDX_LABELS or LT_IDX_IMAGES */
    int dims[LT_IDX_IMAGES];  /* outermost first; unused entries 0 */
    size_t bytes;             /* product of dims: the length of data */
    uint8_t *data;            /* (dims...) lt_mem_alloc'd; release with lt_idx_free */
    int gzipped;              /* the file was gzip-compressed */
    unsigned char md5[LT_MD5_BYTES]; /* of the uncompressed contents, header included */
} lt_idx;

/* Reads `path`, which must hold `ndim` dimensions (LT_IDX_LABELS or
 * LT_IDX_IMAGES). LT_E_IO if it cannot be opened or read; LT_E_INPUT for a
 * wrong magic number (another type or dimension count), a dimension of 0 or
 * data beyond LT_IDX_MAX_BYTES, a file that ends early, bytes after the
 * data, or damaged gzip data. Memory grows only as data actually arrives,
 * so a header promising more than a file holds allocates little. On failure
 * *out is zeroed and nothing is left allocated. */
lt_status lt_idx_read(lt_idx *out, const char *path, int ndim);

/* Releases the data and zeroes the struct; a zeroed struct is ignored. */
void lt_idx_free(lt_idx *idx);

#endif
