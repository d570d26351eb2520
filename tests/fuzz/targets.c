#include "fuzz/targets.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/mem.h"
#include "datasets/images.h"
#include "io/checkpoint.h"
#include "datasets/speech.h"
#include "io/cifar.h"
#include "io/csv.h"
#include "io/idx.h"
#include "io/md5.h"
#include "io/npy.h"

#define PATH_LEN 4096

const char *fuzz_input_name;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    fprintf(stderr, "fuzz target failure%s%s: ", fuzz_input_name != NULL ? " on " : "",
            fuzz_input_name != NULL ? fuzz_input_name : "");
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    abort();
}

/* A reader's failure is clean when it is about the input (LT_E_INPUT) or the
 * file (LT_E_IO) and its message names what was read. */
static void check_clean(lt_status status, const char *named)
{
    if (status == LT_OK)
        return;
    if (status != LT_E_INPUT && status != LT_E_IO)
        die("status %s, expected ok, input or io: %s", lt_status_name(status), lt_last_error());
    if (strstr(lt_last_error(), named) == NULL)
        die("the message does not name %s: %s", named, lt_last_error());
}

/* Reads every byte, so a buffer shorter than it claims shows under ASan. */
static volatile unsigned char touched;

static void touch(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    unsigned char x = 0;
    for (size_t i = 0; i < bytes; i++)
        x ^= p[i];
    touched = x;
}

static void join(char path[PATH_LEN], const char *dir, const char *name)
{
    if (snprintf(path, PATH_LEN, "%s/%s", dir, name) >= PATH_LEN)
        die("scratch path %s/%s too long", dir, name);
}

/* Writes one buffer as dir/name; returns its path in `path`. A failure here
 * is the harness's, not the reader's, so it aborts. */
static void put_file(char path[PATH_LEN], const char *dir, const char *name, const void *data,
                     size_t size)
{
    join(path, dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        die("cannot write the scratch file %s", path);
}

/* ---- .npy ---------------------------------------------------------------- */

static lt_status target_npy(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file(path, dir, "input.npy", data, size);
    lt_npy f32, f64;
    lt_status status = lt_npy_read(&f32, path);
    check_clean(status, path);
    lt_status status64 = lt_npy_read_f64(&f64, path);
    check_clean(status64, path);
    if ((status == LT_OK) != (status64 == LT_OK))
        die("lt_npy_read gave %s but lt_npy_read_f64 %s", lt_status_name(status),
            lt_status_name(status64));
    if (status == LT_OK) {
        long long count = lt_npy_count(&f32);
        if (f32.ndim < 0 || f32.ndim > LT_NPY_MAX_DIMS || count < 0 || f32.data == NULL ||
            f32.data_f64 != NULL || f64.data_f64 == NULL || f64.data != NULL ||
            lt_npy_count(&f64) != count || f64.is_f64 != f32.is_f64)
            die("lt_npy_read accepted the file but its result is inconsistent");
        touch(f32.data, (size_t)count * sizeof(float));
        touch(f64.data_f64, (size_t)count * sizeof(double));
        /* Both readers convert the same file the same way. */
        for (long long i = 0; i < count; i++) {
            float narrowed = (float)f64.data_f64[i];
            if (!(isnan(narrowed) && isnan(f32.data[i])) &&
                memcmp(&narrowed, &f32.data[i], sizeof narrowed) != 0)
                die("element %lld differs between lt_npy_read and lt_npy_read_f64", i);
        }
    }
    lt_npy_free(&f32);
    lt_npy_free(&f64);
    return status;
}

/* ---- checkpoints --------------------------------------------------------- */

static lt_status read_checkpoint(const char *path)
{
    lt_ckpt *ckpt;
    lt_status status = lt_ckpt_read(&ckpt, path);
    check_clean(status, path);
    if (status != LT_OK) {
        if (ckpt != NULL)
            die("lt_ckpt_read failed but returned a checkpoint");
        return status;
    }
    if (strcmp(lt_ckpt_path(ckpt), path) != 0)
        die("the checkpoint's path is '%s'", lt_ckpt_path(ckpt));
    for (size_t i = 0; i < lt_ckpt_count(ckpt); i++) {
        const char *name = lt_ckpt_name(ckpt, i);
        const void *section;
        size_t bytes;
        if (!lt_ckpt_has(ckpt, name) || lt_ckpt_find(ckpt, name, &section, &bytes) != LT_OK)
            die("section '%s' is listed but cannot be found", name);
        touch(section, bytes + 1);
        if ((uintptr_t)section % LT_MEM_ALIGN != 0 || ((const char *)section)[bytes] != '\0')
            die("section '%s' is not aligned or not NUL-terminated", name);
    }
    lt_ckpt_free(ckpt);
    return status;
}

static lt_status target_checkpoint(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file(path, dir, "input.ckpt", data, size);
    return read_checkpoint(path);
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Rewrites the record CRC of every section whose layout stays inside the
 * buffer (the format of io/checkpoint.h), stopping at the first that does
 * not. */
static void fix_record_crcs(unsigned char *file, size_t size)
{
    enum { FILE_HEADER = 16, FIXED = 4 + 8 + 8 + 4 + 4 };
    for (size_t pos = FILE_HEADER; size >= pos && size - pos >= 4;) {
        uint32_t name_len = get_le32(file + pos);
        if (name_len == 0 || name_len > LT_CKPT_MAX_NAME || size - pos < FIXED + name_len)
            return;
        const unsigned char *fields = file + pos + 4 + name_len;
        uint64_t packed = (uint64_t)get_le32(fields + 8) | (uint64_t)get_le32(fields + 12) << 32;
        size_t data_at = pos + FIXED + name_len;
        if (packed > size - data_at)
            return;
        uLong crc = crc32_z(0, file + pos, FIXED + name_len - 4);
        crc = crc32_z(crc, file + data_at, (size_t)packed);
        for (int b = 0; b < 4; b++)
            file[data_at - 4 + b] = (unsigned char)(crc >> (8 * b));
        pos = data_at + (size_t)packed;
    }
}

/* As "checkpoint", but with the record CRCs made right first: random bytes
 * almost never pass them, and the lengths, names and DEFLATE data behind
 * them deserve fuzzing too. */
/* Writes the input, with its checkpoint record CRCs made right, to
 * dir/name. */
static void put_file_fixing_crcs(char *path, const char *dir, const char *name,
                                 const uint8_t *data, size_t size)
{
    unsigned char *fixed = malloc(size + 1);
    if (fixed == NULL)
        die("out of memory");
    if (size > 0)
        memcpy(fixed, data, size);
    fix_record_crcs(fixed, size);
    put_file(path, dir, name, fixed, size);
    free(fixed);
}

static lt_status target_checkpoint_crc(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file_fixing_crcs(path, dir, "input.ckpt", data, size);
    return read_checkpoint(path);
}

/* ---- CSV ----------------------------------------------------------------- */

static lt_status target_csv(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file(path, dir, "input.csv", data, size);
    lt_csv_table table;
    lt_status status = lt_csv_read(&table, path);
    check_clean(status, path);
    if (status != LT_OK)
        return status;
    if (table.ncols < 1 || table.nrows < 0)
        die("lt_csv_read accepted %d columns and %lld rows", table.ncols, table.nrows);
    for (int c = 0; c < table.ncols; c++) {
        touch(table.names[c], strlen(table.names[c]) + 1);
        int found = lt_csv_table_column(&table, table.names[c]);
        if (found < 0 || found > c)
            die("column %d is found at %d", c, found);
    }
    for (long long r = 0; r < table.nrows; r++)
        for (int c = 0; c < table.ncols; c++) {
            const char *cell = lt_csv_table_cell(&table, r, c);
            touch(cell, strlen(cell) + 1);
        }
    lt_csv_table_free(&table);
    return status;
}

/* ---- IDX ----------------------------------------------------------------- */

/* Reads the file as labels and as images; LT_OK if either accepts it. */
static lt_status read_idx_both(const char *path, int gzipped)
{
    lt_status result = LT_E_INPUT;
    const int kinds[2] = {LT_IDX_LABELS, LT_IDX_IMAGES};
    for (int k = 0; k < 2; k++) {
        lt_idx idx;
        lt_status status = lt_idx_read(&idx, path, kinds[k]);
        check_clean(status, path);
        if (status != LT_OK)
            continue;
        size_t bytes = 1;
        for (int i = 0; i < idx.ndim; i++) {
            if (idx.dims[i] < 1)
                die("dimension %d is %d", i + 1, idx.dims[i]);
            bytes *= (size_t)idx.dims[i];
        }
        if (idx.ndim != kinds[k] || bytes != idx.bytes || bytes > LT_IDX_MAX_BYTES ||
            idx.data == NULL || idx.gzipped != gzipped)
            die("lt_idx_read accepted the file but its result is inconsistent");
        touch(idx.data, idx.bytes);
        lt_idx_free(&idx);
        result = LT_OK;
    }
    return result;
}

static lt_status target_idx(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file(path, dir, "input.idx", data, size);
    return read_idx_both(path, size >= 2 && data[0] == 0x1f && data[1] == 0x8b);
}

size_t fuzz_gzip(unsigned char *out, size_t room, const uint8_t *data, size_t size)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* 16 + 15: a gzip wrapper; the fastest level keeps the fuzzer fast. */
    if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        die("zlib could not start");
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)size;
    zs.next_out = out;
    zs.avail_out = (uInt)room;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
        die("zlib could not compress %zu bytes", size);
    size_t written = room - zs.avail_out;
    deflateEnd(&zs);
    return written;
}

/* The input is the uncompressed IDX file: it is gzip-compressed here, so the
 * fuzzer explores the IDX layout behind a valid gzip stream. Inputs of odd
 * length are split into two members (as `cat a.gz b.gz` makes). */
static lt_status target_idx_gz(const char *dir, const uint8_t *data, size_t size)
{
    size_t first = size % 2 == 1 ? size / 2 : size;
    size_t room = 2 * (size_t)compressBound((uLong)size) + 64;
    unsigned char *gz = malloc(room);
    if (gz == NULL)
        die("out of memory");
    size_t len = fuzz_gzip(gz, room, data, first);
    if (first < size)
        len += fuzz_gzip(gz + len, room - len, data + first, size - first);
    char path[PATH_LEN];
    put_file(path, dir, "input.idx.gz", gz, len);
    free(gz);
    return read_idx_both(path, 1);
}

/* ---- CIFAR-10 batches ------------------------------------------------------ */

static lt_status target_cifar(const char *dir, const uint8_t *data, size_t size)
{
    char path[PATH_LEN];
    put_file(path, dir, "input.bin", data, size);
    int records;
    lt_status status = lt_cifar_records(&records, path);
    check_clean(status, path);
    if (status != LT_OK)
        return status;
    if (records < 1 || records > LT_CIFAR_MAX_RECORDS)
        die("lt_cifar_records accepted %d records", records);
    uint8_t *pixels, *labels;
    if (lt_mem_alloc((void **)&pixels, (size_t)records * LT_CIFAR_PIXELS, "pixels") != LT_OK ||
        lt_mem_alloc((void **)&labels, (size_t)records, "labels") != LT_OK)
        die("cannot allocate %d records: %s", records, lt_last_error());
    status = lt_cifar_read_into(pixels, labels, records, path);
    check_clean(status, path);
    if (status == LT_OK) {
        for (int i = 0; i < records; i++)
            if (labels[i] >= LT_CIFAR_CLASSES)
                die("record %d has label %d", i, labels[i]);
        touch(pixels, (size_t)records * LT_CIFAR_PIXELS);
    }
    lt_mem_free(pixels);
    lt_mem_free(labels);
    return status;
}

/* ---- CIFAR-10 subset manifest ---------------------------------------------- */

/* train.bin: two records, labels 3 and 5; test.bin: one record, label 5 (the
 * classes of the cats-and-dogs subset). */
static void write_batch(const char *dir, const char *name, const int *labels, int records,
                        char md5_hex[33])
{
    char path[PATH_LEN];
    join(path, dir, name);
    struct stat st;
    if (stat(path, &st) != 0) {
        unsigned char batch[3 * LT_CIFAR_RECORD_BYTES];
        for (int r = 0; r < records; r++) {
            unsigned char *record = batch + (size_t)r * LT_CIFAR_RECORD_BYTES;
            record[0] = (unsigned char)labels[r];
            for (int i = 0; i < LT_CIFAR_PIXELS; i++)
                record[1 + i] = (unsigned char)(7 * i + 31 * r);
        }
        put_file(path, dir, name, batch, (size_t)records * LT_CIFAR_RECORD_BYTES);
    }
    if (md5_hex != NULL) {
        unsigned char digest[LT_MD5_BYTES];
        if (lt_md5_file(digest, path) != LT_OK)
            die("%s", lt_last_error());
        lt_md5_hex(md5_hex, digest);
    }
}

void fuzz_subset_batches(const char *dir, char train_md5[33], char test_md5[33])
{
    static const int train_labels[] = {3, 5}, test_labels[] = {5};
    write_batch(dir, "train.bin", train_labels, 2, train_md5);
    write_batch(dir, "test.bin", test_labels, 1, test_md5);
}

static void check_subset_split(const lt_image_set *set, const char *split)
{
    if (strncmp(set->name, "cifar10-", 8) != 0 || strcmp(set->split, split) != 0 ||
        set->count < 1 || set->height != LT_CIFAR_SIDE || set->width != LT_CIFAR_SIDE ||
        set->channels != LT_CIFAR_CHANNELS)
        die("the %s split is '%s' '%s' with %d images of %dx%dx%d", split, set->name,
            set->split, set->count, set->height, set->width, set->channels);
    for (int i = 0; i < set->count; i++)
        if (set->labels[i] >= LT_CIFAR_CLASSES)
            die("%s image %d has label %d", split, i, set->labels[i]);
    touch(set->pixels, (size_t)set->count * LT_CIFAR_PIXELS);
}

/* The input is the folder's SUBSET manifest; the batches it may name are the
 * fixed train.bin and test.bin beside it. */
static lt_status target_cifar_subset(const char *dir, const uint8_t *data, size_t size)
{
    fuzz_subset_batches(dir, NULL, NULL);
    char path[PATH_LEN];
    put_file(path, dir, LT_CIFAR_SUBSET_MANIFEST, data, size);
    lt_image_set train, test;
    lt_status status = lt_images_load_cifar10(&train, &test, dir);
    check_clean(status, dir);
    if (status == LT_OK) {
        check_subset_split(&train, "train");
        check_subset_split(&test, "test");
        if (strcmp(train.name, test.name) != 0)
            die("the splits are named '%s' and '%s'", train.name, test.name);
    }
    lt_images_free(&train);
    lt_images_free(&test);
    return status;
}

/* ---- the table ------------------------------------------------------------- */

/* The speech corpus cache (src/datasets/speech.c): every utterance's
 * features, phones and text are touched. */
static lt_status target_speech_cache(const char *dir, const uint8_t *data, size_t size)
{
    /* The cache is a checkpoint container: its record CRCs are made right
     * first, as for checkpoint_crc, so mutations reach the corpus parser. */
    char path[PATH_LEN];
    put_file_fixing_crcs(path, dir, "corpus.ltspeech", data, size);
    lt_speech_corpus c;
    lt_speech_cache_info info;
    lt_status status = lt_speech_cache_read(&c, &info, path);
    check_clean(status, path);
    if (status != LT_OK)
        return status;
    const lt_speech_split *splits[3] = {&c.train, &c.dev, &c.test};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < splits[s]->count; i++) {
            const lt_utterance *u = &splits[s]->utts[i];
            touch(u->features, (size_t)u->frames * LT_SPEECH_MELS * sizeof(float));
            touch(u->phones, (size_t)u->n_phones * sizeof(int32_t));
            touch(u->text, strlen(u->text));
            touch(u->pieces, (size_t)u->n_pieces * sizeof *u->pieces);
            if (u->speaker < 0 || u->speaker >= c.n_speakers)
                die("%s: speaker %d of %d accepted", path, u->speaker, c.n_speakers);
        }
    lt_speech_free(&c);
    return LT_OK;
}

const fuzz_target fuzz_targets[] = {
    {"npy", target_npy},
    {"checkpoint", target_checkpoint},
    {"checkpoint_crc", target_checkpoint_crc},
    {"csv", target_csv},
    {"idx", target_idx},
    {"idx_gz", target_idx_gz},
    {"cifar", target_cifar},
    {"cifar_subset", target_cifar_subset},
    {"speech_cache", target_speech_cache},
};
const int fuzz_target_count = (int)(sizeof fuzz_targets / sizeof fuzz_targets[0]);

const fuzz_target *fuzz_target_find(const char *name)
{
    for (int i = 0; i < fuzz_target_count; i++)
        if (strcmp(fuzz_targets[i].name, name) == 0)
            return &fuzz_targets[i];
    return NULL;
}

lt_status fuzz_run(const fuzz_target *target, const char *dir, const uint8_t *data, size_t size)
{
    size_t before = lt_mem_current();
    lt_status status = target->run(dir, data, size);
    if (lt_mem_current() != before)
        die("%s: %zu tracked bytes left allocated", target->name, lt_mem_current() - before);
    return status;
}
