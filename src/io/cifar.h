/* CIFAR-10 binary batches (the "binary version" of the distribution): a
 * sequence of 3073-byte records, each a label byte (0..9) and a 32x32
 * colour image stored as three planes, 1024 red bytes, 1024 green, 1024
 * blue, each row-major. An official batch file holds 10,000 records
 * (30,730,000 bytes); converted subsets use the same records in other
 * numbers, so the reader accepts any whole, non-zero number of records.
 *
 * The reader hands images back interleaved (height, width, channels):
 * r g b of pixel (0,0), then of (0,1), ... - the byte order in which the
 * paper feeds an image to the model as a sequence. */
#ifndef LT_IO_CIFAR_H
#define LT_IO_CIFAR_H

#include <stdint.h>

#include "core/status.h"

enum {
    LT_CIFAR_SIDE = 32,
    LT_CIFAR_CHANNELS = 3,
    LT_CIFAR_PIXELS = LT_CIFAR_SIDE * LT_CIFAR_SIDE * LT_CIFAR_CHANNELS, /* 3072 */
    LT_CIFAR_RECORD_BYTES = 1 + LT_CIFAR_PIXELS,                          /* 3073 */
    LT_CIFAR_CLASSES = 10,
    LT_CIFAR_BATCH_RECORDS = 10000
};

#define LT_CIFAR_BATCH_BYTES ((long long)LT_CIFAR_BATCH_RECORDS * LT_CIFAR_RECORD_BYTES)

/* Largest number of records one file may hold (CIFAR-10 has 60,000 images
 * in all); caps what a caller allocates from a file's size. */
#define LT_CIFAR_MAX_RECORDS 1000000

/* Records in the batch file `path`, from its size. LT_E_IO if it cannot be
 * opened or is not a regular file; LT_E_INPUT if it is empty, not a whole
 * number of records, or holds more than LT_CIFAR_MAX_RECORDS. */
lt_status lt_cifar_records(int *records, const char *path);

/* Reads exactly `records` records from `path` (the count lt_cifar_records
 * gave), writing images interleaved into pixels and labels into labels.
 * LT_E_INPUT if the file no longer has that size or a label is above 9
 * (naming the record); LT_E_IO if it cannot be read. */
lt_status lt_cifar_read_into(uint8_t *pixels /* (records, 32, 32, 3) */,
                             uint8_t *labels /* (records) */, int records, const char *path);

/* Decodes `records` records held in memory (a batch read from an archive);
 * `where` names them in the error for a label above 9. */
lt_status lt_cifar_decode(uint8_t *pixels /* (records, 32, 32, 3) */,
                          uint8_t *labels /* (records) */, int records,
                          const unsigned char *bytes, const char *where);

#endif
