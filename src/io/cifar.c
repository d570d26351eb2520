#include "io/cifar.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io/read.h"

#define PLANE (LT_CIFAR_SIDE * LT_CIFAR_SIDE)

static lt_status size_of(long long *bytes, FILE *f, const char *path)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return lt_fail(LT_E_IO, "cannot read %s: not a regular file (a CIFAR batch's size "
                                "gives its record count)", path);
    *bytes = (long long)st.st_size;
    return LT_OK;
}

static lt_status records_in(int *records, long long bytes, const char *path)
{
    if (bytes == 0)
        return lt_fail(LT_E_INPUT, "%s: empty file, expected CIFAR-10 records of %d bytes",
                       path, LT_CIFAR_RECORD_BYTES);
    if (bytes % LT_CIFAR_RECORD_BYTES != 0)
        return lt_fail(LT_E_INPUT, "%s: %lld bytes is not a whole number of CIFAR-10 records "
                                   "(%d bytes each; a full batch is %lld bytes)",
                       path, bytes, LT_CIFAR_RECORD_BYTES, LT_CIFAR_BATCH_BYTES);
    if (bytes / LT_CIFAR_RECORD_BYTES > LT_CIFAR_MAX_RECORDS)
        return lt_fail(LT_E_INPUT, "%s: %lld CIFAR-10 records, more than the %d one file may "
                                   "hold", path, bytes / LT_CIFAR_RECORD_BYTES,
                       LT_CIFAR_MAX_RECORDS);
    *records = (int)(bytes / LT_CIFAR_RECORD_BYTES);
    return LT_OK;
}

lt_status lt_cifar_records(int *records, const char *path)
{
    *records = 0;
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    long long bytes = 0;
    lt_status status = size_of(&bytes, f, path);
    fclose(f);
    LT_TRY(status);
    return records_in(records, bytes, path);
}

/* One record's planes to interleaved pixels. */
static void interleave(uint8_t *out, const unsigned char *planes)
{
    for (int p = 0; p < PLANE; p++)
        for (int c = 0; c < LT_CIFAR_CHANNELS; c++)
            out[p * LT_CIFAR_CHANNELS + c] = planes[c * PLANE + p];
}

/* Record i's label (checked) and interleaved image. */
static lt_status decode_record(uint8_t *pixels, uint8_t *labels, int i,
                               const unsigned char *record, const char *where)
{
    if (record[0] >= LT_CIFAR_CLASSES)
        return lt_fail(LT_E_INPUT, "%s: CIFAR-10 record %d (byte offset %lld) has label %d, "
                                   "expected 0 to %d", where, i + 1,
                       (long long)i * LT_CIFAR_RECORD_BYTES, record[0], LT_CIFAR_CLASSES - 1);
    labels[i] = record[0];
    interleave(pixels + (size_t)i * LT_CIFAR_PIXELS, record + 1);
    return LT_OK;
}

lt_status lt_cifar_decode(uint8_t *pixels, uint8_t *labels, int records,
                          const unsigned char *bytes, const char *where)
{
    for (int i = 0; i < records; i++)
        LT_TRY(decode_record(pixels, labels, i, bytes + (size_t)i * LT_CIFAR_RECORD_BYTES, where));
    return LT_OK;
}

static lt_status read_records(uint8_t *pixels, uint8_t *labels, int records, FILE *f,
                              const char *path)
{
    long long bytes = 0;
    int have = 0;
    LT_TRY(size_of(&bytes, f, path));
    LT_TRY(records_in(&have, bytes, path));
    if (have != records)
        return lt_fail(LT_E_INPUT, "%s: holds %d CIFAR-10 records, expected %d (did the file "
                                   "change?)", path, have, records);
    unsigned char record[LT_CIFAR_RECORD_BYTES];
    for (int i = 0; i < records; i++) {
        if (fread(record, 1, sizeof record, f) != sizeof record) {
            if (ferror(f))
                return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
            return lt_fail(LT_E_INPUT, "%s: truncated while reading CIFAR-10 record %d of %d",
                           path, i + 1, records);
        }
        LT_TRY(decode_record(pixels, labels, i, record, path));
    }
    if (fgetc(f) != EOF)
        return lt_fail(LT_E_INPUT, "%s: unexpected bytes after %d CIFAR-10 records (did the "
                                   "file change?)", path, records);
    return LT_OK;
}

lt_status lt_cifar_read_into(uint8_t *pixels, uint8_t *labels, int records, const char *path)
{
    LT_ASSERT(records > 0 && pixels != NULL && labels != NULL);
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    lt_status status = read_records(pixels, labels, records, f, path);
    fclose(f);
    return status;
}
