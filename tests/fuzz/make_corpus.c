/* Writes the seed corpora of the fuzz targets: small valid files made with
 * ltbench's own writers (or by hand where there is none) and invalid ones
 * that each break one rule, named for what they are.
 *
 *   build/tests/fuzz/make_corpus tests/fuzz/corpus
 *
 * writes tests/fuzz/corpus/<target>/seed_*; the output is committed, and so
 * are the crash_* inputs added by hand (this program never touches them).
 * The replay test (tests/test_fuzz_corpus.c) runs them all. */
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "fuzz/targets.h"
#include "io/checkpoint.h"
#include "datasets/speech.h"
#include "io/cifar.h"
#include "io/npy.h"

#define PATH_LEN 4096

static const char *root;
static char scratch[64];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "make_corpus: ");
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

static void seed(const char *target, const char *name, const void *data, size_t size)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s", root, target);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/seed_%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fail("cannot write %s", path);
}

static void seed_text(const char *target, const char *name, const char *text)
{
    seed(target, name, text, strlen(text));
}

/* A file written by one of ltbench's writers into the scratch folder, read
 * back into a malloc'd buffer. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char *data = malloc((size_t)len + 1);
    if (data == NULL || fread(data, 1, (size_t)len, f) != (size_t)len)
        fail("cannot read %s", path);
    fclose(f);
    *size = (size_t)len;
    return data;
}

static const char *scratch_path(const char *name)
{
    static char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    return path;
}

/* ---- .npy ---------------------------------------------------------------- */

/* A version 1.0 file with this header dict (padded as numpy pads it) and
 * `data_bytes` bytes of data (a counting pattern). */
static void npy_raw(const char *name, const char *dict, size_t data_bytes)
{
    unsigned char buf[1024];
    size_t dict_len = strlen(dict);
    size_t header = dict_len + 1;
    header += (64 - (10 + header) % 64) % 64;
    if (10 + header + data_bytes > sizeof buf)
        fail("npy seed %s too large", name);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(header & 0xff);
    buf[9] = (unsigned char)(header >> 8);
    memcpy(buf + 10, dict, dict_len);
    memset(buf + 10 + dict_len, ' ', header - dict_len - 1);
    buf[10 + header - 1] = '\n';
    for (size_t i = 0; i < data_bytes; i++)
        buf[10 + header + i] = (unsigned char)(i * 37);
    seed("npy", name, buf, 10 + header + data_bytes);
}

static void npy_seeds(void)
{
    const float f32[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-3f, -7.0f};
    const double f64[5] = {1.0, -0.5, 1e300, -1e-300, 2.0};
    const long long shape_2x3[2] = {2, 3}, shape_5[1] = {5}, shape_0x4[2] = {0, 4};
    struct {
        const char *name;
        lt_status status;
    } written[4];
    written[0].name = "ok_f32_2x3.npy";
    written[0].status = lt_npy_write_f32(scratch_path("a.npy"), f32, 2, shape_2x3);
    written[1].name = "ok_f64_5.npy";
    written[1].status = lt_npy_write_f64(scratch_path("b.npy"), f64, 1, shape_5);
    written[2].name = "ok_scalar.npy";
    written[2].status = lt_npy_write_f32(scratch_path("c.npy"), f32, 0, NULL);
    written[3].name = "ok_empty_0x4.npy";
    written[3].status = lt_npy_write_f32(scratch_path("d.npy"), f32, 2, shape_0x4);
    const char *files[4] = {"a.npy", "b.npy", "c.npy", "d.npy"};
    for (int i = 0; i < 4; i++) {
        if (written[i].status != LT_OK)
            fail("%s", lt_last_error());
        size_t size;
        unsigned char *data = slurp(scratch_path(files[i]), &size);
        seed("npy", written[i].name, data, size);
        if (i == 0) {
            /* The same file cut short and with a byte too many. */
            seed("npy", "bad_truncated.npy", data, size - 3);
            unsigned char *longer = malloc(size + 1);
            memcpy(longer, data, size);
            longer[size] = 0;
            seed("npy", "bad_trailing_byte.npy", longer, size + 1);
            free(longer);
            data[6] = 2; /* version 2.0 */
            seed("npy", "bad_version.npy", data, size);
            data[0] = 'N';
            seed("npy", "bad_magic.npy", data, size);
            seed("npy", "bad_header_cut.npy", data, 9);
        }
        free(data);
    }
    npy_raw("ok_f32_2x2x2_double_quotes.npy",
            "{\"descr\": \"<f4\", \"shape\": (2, 2, 2), \"fortran_order\": False}", 32);
    npy_raw("bad_fortran_order.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
            8);
    npy_raw("bad_dtype_i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8);
    npy_raw("bad_big_endian.npy", "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
            8);
    npy_raw("bad_negative_size.npy",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0);
    npy_raw("bad_nine_dims.npy",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4);
    npy_raw("bad_overflowing_shape.npy",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0);
    npy_raw("bad_missing_key.npy", "{'descr': '<f4', 'shape': (1,), }", 4);
    npy_raw("bad_repeated_key.npy",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
    npy_raw("bad_unclosed_dict.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4);
    npy_raw("bad_shape_beyond_data.npy",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 1000), }", 16);
    /* The header length promises more than the file holds. */
    static const char cut[] = "\x93NUMPY\x01\x00\xff\xff{'descr'";
    seed("npy", "bad_header_len.npy", cut, sizeof cut - 1);
    seed("npy", "bad_empty.npy", "", 0);
}

/* ---- checkpoints --------------------------------------------------------- */

/* Both checkpoint targets start from the same seeds. */
static void ckpt_seed(const char *name, const void *data, size_t size)
{
    seed("checkpoint", name, data, size);
    seed("checkpoint_crc", name, data, size);
}

static void checkpoint_seeds(void)
{
    const char *path = scratch_path("c.ckpt");
    lt_ckpt_writer *w;
    float params[64];
    for (int i = 0; i < 64; i++)
        params[i] = (float)i / 8.0f - 2.0f;
    const char *config = "layers=2 heads=2 ffn=64";
    if (lt_ckpt_writer_open(&w, path) != LT_OK ||
        lt_ckpt_writer_add(w, "config", config, strlen(config)) != LT_OK ||
        lt_ckpt_writer_add(w, "params", params, sizeof params) != LT_OK ||
        lt_ckpt_writer_add(w, "empty", "", 0) != LT_OK || lt_ckpt_writer_commit(w) != LT_OK)
        fail("%s", lt_last_error());
    size_t size;
    unsigned char *data = slurp(path, &size);
    ckpt_seed("ok_three_sections.ckpt", data, size);
    ckpt_seed("bad_truncated.ckpt", data, size / 2);
    ckpt_seed("bad_header_only.ckpt", data, 16);
    unsigned char *longer = malloc(size + 4);
    memcpy(longer, data, size);
    memset(longer + size, 0, 4);
    ckpt_seed("bad_trailing_bytes.ckpt", longer, size + 4);
    free(longer);
    /* checkpoint_crc rewrites record CRCs, so this one is only "checkpoint"'s. */
    data[size - 5] ^= 0x10; /* the last section's record CRC */
    seed("checkpoint", "bad_record_crc.ckpt", data, size);
    data[size - 5] ^= 0x10;
    data[size / 2] ^= 0x40; /* inside the params section's packed data */
    ckpt_seed("bad_packed_data.ckpt", data, size);
    data[size / 2] ^= 0x40;
    data[26] += 1; /* the config section's raw length (23 -> 24) */
    ckpt_seed("bad_raw_length.ckpt", data, size);
    data[26] -= 1;
    data[12] = 200; /* section count */
    ckpt_seed("bad_section_count.ckpt", data, size);
    data[12] = 3;
    data[8] = 2; /* version */
    ckpt_seed("bad_version.ckpt", data, size);
    data[0] = 'X';
    ckpt_seed("bad_magic.ckpt", data, size);
    free(data);

    if (lt_ckpt_writer_open(&w, path) != LT_OK || lt_ckpt_writer_commit(w) != LT_OK)
        fail("%s", lt_last_error());
    data = slurp(path, &size);
    ckpt_seed("ok_no_sections.ckpt", data, size);
    free(data);
    ckpt_seed("bad_empty.ckpt", "", 0);
}

/* ---- CSV ----------------------------------------------------------------- */

static void csv_seeds(void)
{
    seed_text("csv", "ok_table.csv",
              "variant,N,time_s,note\n"
              "linear,128,0.5,\"a, quoted \"\"cell\"\"\"\n"
              "softmax,128,1.25,\" padded \"\n");
    seed_text("csv", "ok_crlf_blank_lines.csv", "a,b\r\n\r\n1,2\r\n\n3,\"multi\nline\"\r\n");
    seed_text("csv", "ok_header_only_no_newline.csv", "only,a,header");
    seed_text("csv", "ok_empty_cells.csv", ",,\n,,\n");
    seed_text("csv", "bad_cell_count.csv", "a,b,c\n1,2\n");
    seed_text("csv", "bad_unclosed_quote.csv", "a,b\n1,\"never closed\n");
    seed_text("csv", "bad_text_after_quote.csv", "a,b\n\"x\"y,2\n");
    seed("csv", "bad_nul_byte.csv", "a,b\n1,\0\n", 8);
    seed_text("csv", "bad_blank_only.csv", "\n\r\n\n");
    seed("csv", "bad_empty.csv", "", 0);
}

/* ---- IDX ----------------------------------------------------------------- */

static size_t idx_file(unsigned char *buf, int ndim, const unsigned *dims, size_t data_bytes)
{
    buf[0] = buf[1] = 0;
    buf[2] = 0x08;
    buf[3] = (unsigned char)ndim;
    for (int i = 0; i < ndim; i++)
        for (int b = 0; b < 4; b++)
            buf[4 + 4 * i + b] = (unsigned char)(dims[i] >> (24 - 8 * b));
    size_t at = 4 + 4 * (size_t)ndim;
    for (size_t i = 0; i < data_bytes; i++)
        buf[at + i] = (unsigned char)(i % 10);
    return at + data_bytes;
}

/* Each IDX seed, plain for both targets and gzip-compressed for "idx". */
static void idx_seed(const char *name, const unsigned char *data, size_t size, int with_gz)
{
    char gz_name[128];
    seed("idx", name, data, size);
    seed("idx_gz", name, data, size);
    if (with_gz) {
        unsigned char gz[1024];
        snprintf(gz_name, sizeof gz_name, "%s.gz", name);
        seed("idx", gz_name, gz, fuzz_gzip(gz, sizeof gz, data, size));
    }
}

static void idx_seeds(void)
{
    unsigned char buf[512], gz[1024];
    const unsigned labels[1] = {6}, images[3] = {3, 4, 5}, zero[3] = {2, 0, 3},
                   huge[3] = {60000, 28, 28}, big_labels[1] = {100000};
    size_t n = idx_file(buf, 1, labels, 6);
    idx_seed("ok_labels_6", buf, n, 1);
    idx_seed("bad_labels_truncated", buf, n - 2, 1);
    buf[n] = 9;
    idx_seed("bad_labels_trailing_byte", buf, n + 1, 0);
    n = idx_file(buf, 3, images, 60);
    idx_seed("ok_images_3x4x5", buf, n, 1);
    /* Two gzip members, as `cat a.gz b.gz` makes. */
    size_t len = fuzz_gzip(gz, sizeof gz, buf, 20);
    len += fuzz_gzip(gz + len, sizeof gz - len, buf + 20, n - 20);
    seed("idx", "ok_images_two_members.gz", gz, len);
    seed("idx", "bad_gz_truncated.gz", gz, len - 6);
    len = fuzz_gzip(gz, sizeof gz, buf, n);
    gz[len - 6] ^= 1; /* the trailer's CRC */
    seed("idx", "bad_gz_crc.gz", gz, len);
    len = fuzz_gzip(gz, sizeof gz, buf, n);
    gz[len] = 0x42;
    seed("idx", "bad_gz_trailing_garbage.gz", gz, len + 1);
    idx_seed("bad_images_header_cut", buf, 9, 0);
    n = idx_file(buf, 3, zero, 0);
    idx_seed("bad_dimension_zero", buf, n, 0);
    /* Headers promising far more than the file holds: refused before (plain)
     * or while (gzip) reading, without allocating what they promise. */
    n = idx_file(buf, 3, huge, 100);
    idx_seed("bad_images_promise_47MB", buf, n, 1);
    n = idx_file(buf, 1, big_labels, 50);
    idx_seed("bad_labels_promise_100k", buf, n, 1);
    buf[2] = 0x0d; /* float data */
    idx_seed("bad_type_float", buf, n, 0);
    idx_seed("bad_empty", buf, 0, 0);
}

/* ---- CIFAR-10 batches ------------------------------------------------------ */

static void cifar_seeds(void)
{
    static unsigned char records[2 * LT_CIFAR_RECORD_BYTES];
    for (size_t i = 0; i < sizeof records; i++)
        records[i] = (unsigned char)(i * 13);
    records[0] = 3;
    records[LT_CIFAR_RECORD_BYTES] = 9;
    seed("cifar", "ok_one_record.bin", records, LT_CIFAR_RECORD_BYTES);
    seed("cifar", "ok_two_records.bin", records, sizeof records);
    seed("cifar", "bad_partial_record.bin", records, LT_CIFAR_RECORD_BYTES + 100);
    seed("cifar", "bad_pixels_only.bin", records + 1, LT_CIFAR_PIXELS);
    records[LT_CIFAR_RECORD_BYTES] = 10;
    seed("cifar", "bad_label_10.bin", records, sizeof records);
    seed("cifar", "bad_empty.bin", "", 0);
}

/* ---- CIFAR-10 subset manifests --------------------------------------------- */

static void manifest(const char *name, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void manifest(const char *name, const char *format, ...)
{
    char text[8192];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    seed_text("cifar_subset", name, text);
}

static void cifar_subset_seeds(void)
{
    char train[33], test[33];
    fuzz_subset_batches(scratch, train, test);
    manifest("ok_catdog", "ltbench-cifar10-subset 1\n# cats and dogs\nname cifar10-catdog\n"
                          "classes 3 5\n\ntrain train.bin 2 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("ok_any_order_tabs", "\tltbench-cifar10-subset 1\ntest\ttest.bin 1 %s\n"
                                  "classes 5 3 0\ntrain train.bin 2 %s\nname cifar10-x-1",
             test, train);
    manifest("bad_md5", "ltbench-cifar10-subset 1\nname cifar10-catdog\nclasses 3 5\n"
                        "train train.bin 2 %s\ntest test.bin 1 %s\n",
             test, test);
    manifest("bad_count", "ltbench-cifar10-subset 1\nname cifar10-catdog\nclasses 3 5\n"
                          "train train.bin 3 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("bad_class_missing", "ltbench-cifar10-subset 1\nname cifar10-cats\nclasses 3\n"
                                  "train train.bin 2 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("bad_missing_file", "ltbench-cifar10-subset 1\nname cifar10-catdog\nclasses 3 5\n"
                                 "train nothing.bin 2 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("bad_same_file", "ltbench-cifar10-subset 1\nname cifar10-catdog\nclasses 3 5\n"
                              "train test.bin 1 %s\ntest test.bin 1 %s\n",
             test, test);
    manifest("bad_plain_name", "ltbench-cifar10-subset 1\nname cifar10\nclasses 3 5\n"
                               "train train.bin 2 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("bad_path_in_name", "ltbench-cifar10-subset 1\nname cifar10-catdog\nclasses 3 5\n"
                                 "train ../train.bin 2 %s\ntest test.bin 1 %s\n",
             train, test);
    manifest("bad_header", "ltbench-cifar10-subset 2\nname cifar10-catdog\n");
    manifest("bad_class_twice", "ltbench-cifar10-subset 1\nclasses 3 3\n");
    manifest("bad_incomplete", "ltbench-cifar10-subset 1\nname cifar10-catdog\n");
    static const char binary[] = "ltbench-cifar10-subset 1\n\x01\n";
    seed("cifar_subset", "bad_binary_byte", binary, sizeof binary - 1);
    char big[4200];
    memset(big, '#', sizeof big);
    seed("cifar_subset", "bad_too_long", big, sizeof big);
    seed("cifar_subset", "bad_empty", "", 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A real cache of the smallest corpus (espeak-ng speaks it), and damaged
 * copies: truncated, a flipped byte, garbage. */
static void speech_cache_seeds(void)
{
    lt_speech_config cfg = {.hours = LT_SPEECH_MIN_HOURS, .seed = 3, .cache_dir = scratch};
    lt_speech_corpus c;
    lt_speech_origin origin;
    if (lt_speech_load(&c, &cfg, NULL, &origin) != LT_OK)
        fail("speech corpus: %s", lt_last_error());
    lt_speech_free(&c);
    char path[PATH_LEN];
    if (lt_speech_cache_path(path, sizeof path, &cfg) != LT_OK)
        fail("speech cache path: %s", lt_last_error());
    size_t size;
    unsigned char *data = slurp(path, &size);
    seed("speech_cache", "ok_tiny.ltspeech", data, size);
    seed("speech_cache", "bad_truncated.ltspeech", data, size / 2);
    data[size / 3] ^= 0x5a;
    seed("speech_cache", "bad_flipped.ltspeech", data, size);
    seed("speech_cache", "bad_header_only.ltspeech", data, 64);
    seed_text("speech_cache", "bad_text.ltspeech", "not a speech corpus\n");
    free(data);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR (the corpus folder, tests/fuzz/corpus)\n");
        return 2;
    }
    root = argv[1];
    mkdir(root, 0777);
    snprintf(scratch, sizeof scratch, "/tmp/ltbench_corpus_XXXXXX");
    if (mkdtemp(scratch) == NULL)
        fail("cannot make a scratch folder");
    npy_seeds();
    checkpoint_seeds();
    csv_seeds();
    idx_seeds();
    cifar_seeds();
    cifar_subset_seeds();
    speech_cache_seeds();
    nftw(scratch, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    if (lt_mem_current() != 0)
        fail("%zu tracked bytes left allocated", lt_mem_current());
    printf("make_corpus: seeds written under %s\n", root);
    return 0;
}
