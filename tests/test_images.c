/* Tests for the image data layer: MD5, IDX (plain and gzip) and CIFAR-10
 * binary readers, and the MNIST / CIFAR-10 dataset loaders. Every file is
 * tiny and written by the test itself in its own temporary folder; nothing
 * needs the real data sets. Every failure must release what it allocated. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/mem.h"
#include "datasets/images.h"
#include "io/cifar.h"
#include "io/idx.h"
#include "io/md5.h"
#include "check.h"

/* ---- per-test folder and helpers ------------------------------------------ */

static void make_test_dir(void) { check_scratch_make("images"); }

TestSuite(images, .init = make_test_dir, .fini = check_scratch_remove);

/* Short names for the scratch-folder helpers of check.h. */
#define test_dir check_scratch_dir()
#define in_dir check_path
#define assert_status check_assert_status
#define assert_error_mentions check_assert_mentions
#define assert_memory_released check_assert_mem_released

/* Writes bytes to a file, gzip-compressed if gz. */
static void write_file(const char *path, const void *data, size_t len, int gz)
{
    if (gz) {
        gzFile g = gzopen(path, "wb6");
        cr_assert_not_null(g, "cannot create %s", path);
        if (len > 0)
            cr_assert_eq(gzwrite(g, data, (unsigned)len), (int)len);
        cr_assert_eq(gzclose(g), Z_OK);
        return;
    }
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* The whole file in a malloc'd buffer. */
static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static void put_be32(unsigned char *p, uint32_t x)
{
    p[0] = (unsigned char)(x >> 24);
    p[1] = (unsigned char)(x >> 16);
    p[2] = (unsigned char)(x >> 8);
    p[3] = (unsigned char)x;
}

/* An IDX file image in memory: header for `ndim` dims, then data with the
 * byte pattern (i * 7 + 3) % 256, or `data` if given. Caller frees. */
static unsigned char *idx_bytes(size_t *len, int ndim, const uint32_t *dims,
                                const unsigned char *data)
{
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= dims[i];
    size_t header = 4 + 4 * (size_t)ndim;
    unsigned char *buf = malloc(header + count);
    put_be32(buf, 0x0800u | (uint32_t)ndim);
    for (int i = 0; i < ndim; i++)
        put_be32(buf + 4 + 4 * i, dims[i]);
    for (size_t i = 0; i < count; i++)
        buf[header + i] = data != NULL ? data[i] : (unsigned char)((i * 7 + 3) % 256);
    *len = header + count;
    return buf;
}

static void write_idx(const char *path, int ndim, const uint32_t *dims,
                      const unsigned char *data, int gz)
{
    size_t len;
    unsigned char *buf = idx_bytes(&len, ndim, dims, data);
    write_file(path, buf, len, gz);
    free(buf);
}

static void write_images(const char *path, uint32_t count, uint32_t rows, uint32_t cols, int gz)
{
    uint32_t dims[3] = {count, rows, cols};
    write_idx(path, LT_IDX_IMAGES, dims, NULL, gz);
}

static void write_labels(const char *path, uint32_t count, int gz)
{
    unsigned char labels[256];
    for (uint32_t i = 0; i < count && i < 256; i++)
        labels[i] = (unsigned char)(i % 10);
    write_idx(path, LT_IDX_LABELS, &count, labels, gz);
}

/* The planar value CIFAR test records hold at plane c, position p of
 * record r: distinct enough per channel that a wrong interleave shows. */
static unsigned char cifar_value(int r, int c, int p)
{
    return (unsigned char)((r * 31 + c * 85 + p * 3) % 256);
}

static void write_cifar(const char *path, int records, const unsigned char *labels)
{
    size_t len = (size_t)records * LT_CIFAR_RECORD_BYTES;
    unsigned char *buf = malloc(len);
    for (int r = 0; r < records; r++) {
        unsigned char *rec = buf + (size_t)r * LT_CIFAR_RECORD_BYTES;
        rec[0] = labels[r];
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < 1024; p++)
                rec[1 + c * 1024 + p] = cifar_value(r, c, p);
    }
    write_file(path, buf, len, 0);
    free(buf);
}

static void md5_hex_of_file(char hex[LT_MD5_HEX_LEN + 1], const char *path)
{
    unsigned char digest[LT_MD5_BYTES];
    assert_status(lt_md5_file(digest, path), LT_OK);
    lt_md5_hex(hex, digest);
}

/* A converted subset in dir: train.bin (labels 3 5 3), test.bin (5 3) and a
 * manifest with `name` and the files' true checksums. */
static void write_subset(const char *dir, const char *name)
{
    char train[512], test[512], manifest[512];
    snprintf(train, sizeof train, "%s/train.bin", dir);
    snprintf(test, sizeof test, "%s/test.bin", dir);
    snprintf(manifest, sizeof manifest, "%s/SUBSET", dir);
    mkdir(dir, 0755);
    write_cifar(train, 3, (const unsigned char[]){3, 5, 3});
    write_cifar(test, 2, (const unsigned char[]){5, 3});
    char train_md5[33], test_md5[33], text[1024];
    md5_hex_of_file(train_md5, train);
    md5_hex_of_file(test_md5, test);
    int n = snprintf(text, sizeof text,
                     "ltbench-cifar10-subset 1\n"
                     "# made by a test, with more words than a line may hold\n"
                     "  \n   # an indented comment\nname %s\nclasses 3 5\n"
                     "train train.bin 3 %s\ntest\ttest.bin 2 %s\n",
                     name, train_md5, test_md5);
    write_file(manifest, text, (size_t)n, 0);
}

static void write_manifest(const char *dir, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/SUBSET", dir);
    write_file(path, text, strlen(text), 0);
}

/* ---- MD5 ----------------------------------------------------------------------- */

Test(images, md5_rfc1321_test_suite)
{
    /* RFC 1321, appendix A.5. */
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"1234567890" "1234567890" "1234567890" "1234567890"
         "1234567890" "1234567890" "1234567890" "1234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char digest[LT_MD5_BYTES];
        char hex[LT_MD5_HEX_LEN + 1];
        lt_md5_buffer(digest, cases[i][0], strlen(cases[i][0]));
        cr_assert_str_eq(lt_md5_hex(hex, digest), cases[i][1], "MD5(\"%s\")", cases[i][0]);
        /* Fed one byte, then pieces of 5: the same digest. */
        lt_md5 md5;
        lt_md5_init(&md5);
        size_t len = strlen(cases[i][0]);
        for (size_t at = 0; at < len;) {
            size_t piece = at == 0 ? 1 : (len - at < 5 ? len - at : 5);
            lt_md5_update(&md5, cases[i][0] + at, piece);
            at += piece;
        }
        lt_md5_final(&md5, digest);
        cr_assert_str_eq(lt_md5_hex(hex, digest), cases[i][1], "piecewise MD5(\"%s\")",
                         cases[i][0]);
    }
}

Test(images, md5_of_a_file_and_lengths_around_the_padding)
{
    /* Lengths 55, 56 and 64 put the length field in or past the block. */
    static const char *const sums[] = {"ef1772b6dff9a122358552954ad0df65",
                                       "3b0c8ac703f828b04c6c197006d17218",
                                       "014842d480b571495a4a0363793f7367"};
    static const size_t lens[] = {55, 56, 64};
    for (int i = 0; i < 3; i++) {
        char text[64];
        memset(text, 'a', sizeof text);
        write_file(in_dir("f"), text, lens[i], 0);
        char hex[LT_MD5_HEX_LEN + 1];
        md5_hex_of_file(hex, in_dir("f"));
        cr_assert_str_eq(hex, sums[i], "MD5 of %zu 'a's", lens[i]);
    }
    unsigned char digest[LT_MD5_BYTES];
    assert_status(lt_md5_file(digest, in_dir("absent")), LT_E_IO);
    assert_error_mentions("absent");
    assert_status(lt_md5_file(digest, test_dir), LT_E_IO);
}

/* ---- IDX reader -------------------------------------------------------------- */

static void assert_idx_round_trip(int gz)
{
    size_t len;
    uint32_t dims[3] = {3, 4, 5};
    unsigned char *want = idx_bytes(&len, 3, dims, NULL);
    write_file(in_dir("img"), want, len, gz);
    lt_idx idx;
    assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_OK);
    cr_assert_eq(idx.ndim, 3);
    cr_assert_eq(idx.dims[0], 3);
    cr_assert_eq(idx.dims[1], 4);
    cr_assert_eq(idx.dims[2], 5);
    cr_assert_eq(idx.bytes, 60);
    cr_assert_eq(idx.gzipped, gz);
    cr_assert_arr_eq(idx.data, want + 16, 60);
    unsigned char digest[LT_MD5_BYTES];
    lt_md5_buffer(digest, want, len); /* of the uncompressed contents */
    cr_assert_arr_eq(idx.md5, digest, LT_MD5_BYTES);
    lt_idx_free(&idx);
    free(want);

    write_labels(in_dir("lbl"), 7, gz);
    assert_status(lt_idx_read(&idx, in_dir("lbl"), LT_IDX_LABELS), LT_OK);
    cr_assert_eq(idx.ndim, 1);
    cr_assert_eq(idx.dims[0], 7);
    cr_assert_eq(idx.dims[1], 0);
    for (int i = 0; i < 7; i++)
        cr_assert_eq(idx.data[i], i % 10);
    lt_idx_free(&idx);
    assert_memory_released();
}

Test(images, idx_plain_round_trip) { assert_idx_round_trip(0); }

Test(images, idx_gzip_round_trip) { assert_idx_round_trip(1); }

Test(images, idx_gzip_concatenated_members_read_as_one)
{
    size_t len;
    uint32_t dims[3] = {2, 3, 3};
    unsigned char *whole = idx_bytes(&len, 3, dims, NULL);
    write_file(in_dir("a.gz"), whole, 10, 1);
    write_file(in_dir("b.gz"), whole + 10, len - 10, 1);
    size_t la, lb;
    unsigned char *a = read_file(in_dir("a.gz"), &la), *b = read_file(in_dir("b.gz"), &lb);
    unsigned char *both = malloc(la + lb);
    memcpy(both, a, la);
    memcpy(both + la, b, lb);
    write_file(in_dir("ab.gz"), both, la + lb, 0);
    lt_idx idx;
    assert_status(lt_idx_read(&idx, in_dir("ab.gz"), LT_IDX_IMAGES), LT_OK);
    cr_assert_arr_eq(idx.data, whole + 16, 18);
    lt_idx_free(&idx);
    free(a), free(b), free(both), free(whole);
    assert_memory_released();
}

Test(images, idx_rejects_truncated_files)
{
    size_t len;
    uint32_t dims[3] = {4, 6, 6};
    unsigned char *bytes = idx_bytes(&len, 3, dims, NULL);
    lt_idx idx;
    /* Inside the magic, inside the dimensions, inside the data. */
    static const size_t cuts[] = {0, 3, 9, 16, 100};
    for (int gz = 0; gz <= 1; gz++)
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            write_file(in_dir("img"), bytes, cuts[i], gz);
            assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_E_INPUT);
            assert_error_mentions(in_dir("img"));
            cr_assert_null(idx.data);
            assert_memory_released();
        }
    write_file(in_dir("img"), bytes, 100, 0);
    assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("truncated");
    assert_error_mentions("144 data bytes");

    /* A gzip file cut short: its compressed stream ends early. */
    write_file(in_dir("full.gz"), bytes, len, 1);
    size_t glen;
    unsigned char *g = read_file(in_dir("full.gz"), &glen);
    for (size_t cut = 1; cut < glen; cut += 3) {
        write_file(in_dir("cut.gz"), g, cut, 0);
        assert_status(lt_idx_read(&idx, in_dir("cut.gz"), LT_IDX_IMAGES), LT_E_INPUT);
        assert_memory_released();
    }
    write_file(in_dir("cut.gz"), g, glen - 4, 0); /* only the length trailer missing */
    assert_status(lt_idx_read(&idx, in_dir("cut.gz"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("truncated gzip");
    g[glen - 6] ^= 0x55; /* the CRC: the data decode but do not check */
    write_file(in_dir("bad.gz"), g, glen, 0);
    assert_status(lt_idx_read(&idx, in_dir("bad.gz"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("damaged gzip");
    free(g);
    free(bytes);
    assert_memory_released();
}

Test(images, idx_rejects_trailing_bytes)
{
    size_t len;
    uint32_t dims[3] = {2, 2, 2};
    unsigned char *bytes = idx_bytes(&len, 3, dims, NULL);
    unsigned char longer[64];
    memcpy(longer, bytes, len);
    memset(longer + len, 0, 5);
    lt_idx idx;
    for (int gz = 0; gz <= 1; gz++) {
        write_file(in_dir("img"), longer, len + 5, gz);
        assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_E_INPUT);
        assert_error_mentions("unexpected bytes after the IDX data");
        assert_memory_released();
    }
    /* Garbage after a complete gzip member. */
    write_file(in_dir("ok.gz"), bytes, len, 1);
    size_t glen;
    unsigned char *g = read_file(in_dir("ok.gz"), &glen);
    unsigned char *more = malloc(glen + 3);
    memcpy(more, g, glen);
    memcpy(more + glen, "xyz", 3);
    write_file(in_dir("more.gz"), more, glen + 3, 0);
    assert_status(lt_idx_read(&idx, in_dir("more.gz"), LT_IDX_IMAGES), LT_E_INPUT);
    free(g), free(more), free(bytes);
    assert_memory_released();
}

Test(images, idx_rejects_wrong_magic)
{
    lt_idx idx;
    write_labels(in_dir("lbl"), 5, 0);
    assert_status(lt_idx_read(&idx, in_dir("lbl"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("0x00000801");
    assert_error_mentions("expected 0x00000803");
    assert_error_mentions("that is a label file");
    write_images(in_dir("img"), 1, 2, 2, 1);
    assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_LABELS), LT_E_INPUT);
    assert_error_mentions("that is an image file");

    unsigned char floats[] = {0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    write_file(in_dir("f"), floats, sizeof floats, 0);
    assert_status(lt_idx_read(&idx, in_dir("f"), LT_IDX_LABELS), LT_E_INPUT);
    assert_error_mentions("0x00000d01");
    write_file(in_dir("png"), "\x89PNG\r\n\x1a\n", 8, 0);
    assert_status(lt_idx_read(&idx, in_dir("png"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions(in_dir("png"));
    assert_memory_released();
}

Test(images, idx_rejects_bad_dimensions_without_allocating_them)
{
    lt_idx idx;
    write_images(in_dir("img"), 0, 28, 28, 0);
    assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("dimension 1 is 0");
    write_images(in_dir("img"), 2, 28, 0, 1);
    assert_status(lt_idx_read(&idx, in_dir("img"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("dimension 3 is 0");

    /* Headers alone, declaring 4 GiB and then just under 1 GiB. */
    unsigned char header[16];
    put_be32(header, 0x803);
    put_be32(header + 4, 0xffffffffu);
    put_be32(header + 8, 0xffffffffu);
    put_be32(header + 12, 0xffffffffu);
    write_file(in_dir("huge"), header, 16, 0);
    assert_status(lt_idx_read(&idx, in_dir("huge"), LT_IDX_IMAGES), LT_E_INPUT);
    assert_error_mentions("more than");
    put_be32(header + 4, 1 << 14);
    put_be32(header + 8, 1 << 8);
    put_be32(header + 12, 1 << 8);
    lt_mem_reset_peak();
    for (int gz = 0; gz <= 1; gz++) {
        write_file(in_dir("lie"), header, 16, gz);
        assert_status(lt_idx_read(&idx, in_dir("lie"), LT_IDX_IMAGES), LT_E_INPUT);
        assert_error_mentions("truncated");
    }
    cr_assert_lt(lt_mem_peak() - *check_mem_baseline(), (size_t)4 << 20,
                 "a header's promise was allocated before the data arrived");
    assert_memory_released();
}

Test(images, idx_missing_file_or_folder_is_io)
{
    lt_idx idx;
    assert_status(lt_idx_read(&idx, in_dir("absent"), LT_IDX_IMAGES), LT_E_IO);
    assert_error_mentions("absent");
    assert_status(lt_idx_read(&idx, test_dir, LT_IDX_IMAGES), LT_E_IO);
    assert_memory_released();
}

Test(images, idx_survives_mutated_files)
{
    /* Random byte flips, cuts and extensions of valid plain and gzip files:
     * every outcome is OK or a clean refusal, never a crash or a leak. */
    size_t len;
    uint32_t dims[3] = {5, 7, 9};
    unsigned char *plain = idx_bytes(&len, 3, dims, NULL);
    write_file(in_dir("ref.gz"), plain, len, 1);
    size_t glen;
    unsigned char *gz = read_file(in_dir("ref.gz"), &glen);
    srand(12345);
    for (int trial = 0; trial < 400; trial++) {
        const unsigned char *src = trial % 2 ? gz : plain;
        size_t n = trial % 2 ? glen : len;
        unsigned char buf[512];
        cr_assert_leq(n + 8, sizeof buf);
        memcpy(buf, src, n);
        for (int flips = 1 + rand() % 3; flips > 0; flips--)
            buf[rand() % n] ^= (unsigned char)(1 + rand() % 255);
        size_t out_len = rand() % 4 == 0 ? (size_t)rand() % (n + 8) : n;
        write_file(in_dir("m"), buf, out_len, 0);
        lt_idx idx;
        lt_status s = lt_idx_read(&idx, in_dir("m"), LT_IDX_IMAGES);
        cr_assert(s == LT_OK || s == LT_E_INPUT, "trial %d: %s (%s)", trial, lt_status_name(s),
                  lt_last_error());
        if (s == LT_OK)
            cr_assert_eq(idx.bytes, (size_t)idx.dims[0] * idx.dims[1] * idx.dims[2]);
        lt_idx_free(&idx);
        assert_memory_released();
    }
    free(plain);
    free(gz);
}

/* ---- CIFAR-10 reader -------------------------------------------------------- */

Test(images, cifar_interleaves_planes_into_hwc)
{
    write_cifar(in_dir("b.bin"), 2, (const unsigned char[]){7, 0});
    int records;
    assert_status(lt_cifar_records(&records, in_dir("b.bin")), LT_OK);
    cr_assert_eq(records, 2);
    uint8_t pixels[2 * 3072], labels[2];
    assert_status(lt_cifar_read_into(pixels, labels, 2, in_dir("b.bin")), LT_OK);
    cr_assert_eq(labels[0], 7);
    cr_assert_eq(labels[1], 0);
    /* Record 1, row 5, column 7: r g b side by side. */
    int p = 5 * 32 + 7;
    const uint8_t *px = pixels + 3072 + 3 * p;
    cr_assert_eq(px[0], cifar_value(1, 0, p));
    cr_assert_eq(px[1], cifar_value(1, 1, p));
    cr_assert_eq(px[2], cifar_value(1, 2, p));
    /* The first bytes of the sequence: r1 g1 b1 r2 g2 b2. */
    uint8_t want[6] = {cifar_value(0, 0, 0), cifar_value(0, 1, 0), cifar_value(0, 2, 0),
                       cifar_value(0, 0, 1), cifar_value(0, 1, 1), cifar_value(0, 2, 1)};
    cr_assert_arr_eq(pixels, want, 6);
    for (int r = 0; r < 2; r++)
        for (int q = 0; q < 1024; q++)
            for (int c = 0; c < 3; c++)
                cr_assert_eq(pixels[r * 3072 + 3 * q + c], cifar_value(r, c, q));
}

Test(images, cifar_rejects_sizes_that_are_not_whole_records)
{
    int records = -1;
    write_file(in_dir("empty.bin"), "", 0, 0);
    assert_status(lt_cifar_records(&records, in_dir("empty.bin")), LT_E_INPUT);
    assert_error_mentions("empty");
    static unsigned char junk[3073 * 2 + 1];
    write_file(in_dir("odd.bin"), junk, sizeof junk, 0);
    assert_status(lt_cifar_records(&records, in_dir("odd.bin")), LT_E_INPUT);
    assert_error_mentions("6147 bytes is not a whole number of CIFAR-10 records");
    assert_error_mentions(in_dir("odd.bin"));
    write_file(in_dir("short.bin"), junk, 3000, 0);
    assert_status(lt_cifar_records(&records, in_dir("short.bin")), LT_E_INPUT);
    assert_status(lt_cifar_records(&records, in_dir("absent.bin")), LT_E_IO);
    assert_status(lt_cifar_records(&records, test_dir), LT_E_IO);
    cr_assert_eq(records, 0);
    /* The file changed size after it was counted. */
    uint8_t pixels[3 * 3072], labels[3];
    write_cifar(in_dir("b.bin"), 2, (const unsigned char[]){1, 2});
    assert_status(lt_cifar_read_into(pixels, labels, 3, in_dir("b.bin")), LT_E_INPUT);
    assert_error_mentions("expected 3");
}

Test(images, cifar_rejects_labels_above_nine)
{
    write_cifar(in_dir("b.bin"), 3, (const unsigned char[]){9, 10, 0});
    uint8_t pixels[3 * 3072], labels[3];
    assert_status(lt_cifar_read_into(pixels, labels, 3, in_dir("b.bin")), LT_E_INPUT);
    assert_error_mentions("record 2");
    assert_error_mentions("label 10");
    assert_error_mentions("byte offset 3073");
}

/* ---- dataset loaders ------------------------------------------------------- */

Test(images, load_idx_pair_checks_counts_and_labels)
{
    lt_image_set set;
    write_images(in_dir("img"), 3, 4, 5, 0);
    write_labels(in_dir("lbl"), 3, 1);
    assert_status(lt_images_load_idx(&set, in_dir("img"), in_dir("lbl"), "tiny", "train"), LT_OK);
    cr_assert_str_eq(set.name, "tiny");
    cr_assert_str_eq(set.split, "train");
    cr_assert_eq(set.count, 3);
    cr_assert_eq(set.full_count, 3);
    cr_assert_eq(set.height, 4);
    cr_assert_eq(set.width, 5);
    cr_assert_eq(set.channels, 1);
    cr_assert_eq(lt_images_seq_len(&set), 20);
    cr_assert_eq(set.pixels[21], (21 * 7 + 3) % 256);
    cr_assert_eq(set.labels[2], 2);
    lt_images_free(&set);

    write_labels(in_dir("lbl2"), 2, 0);
    assert_status(lt_images_load_idx(&set, in_dir("img"), in_dir("lbl2"), "tiny", "train"),
                  LT_E_INPUT);
    assert_error_mentions("holds 3 images");
    assert_error_mentions("holds 2 labels");
    cr_assert_null(set.pixels);

    uint32_t three = 3;
    write_idx(in_dir("lbl3"), LT_IDX_LABELS, &three, (const unsigned char[]){1, 12, 3}, 0);
    assert_status(lt_images_load_idx(&set, in_dir("img"), in_dir("lbl3"), "tiny", "test"),
                  LT_E_INPUT);
    assert_error_mentions("label 2 of 3 is 12");
    assert_memory_released();
}

Test(images, mnist_missing_files_name_the_fetch_script)
{
    lt_image_set train, test;
    assert_status(lt_images_load_mnist(&train, &test, in_dir("nowhere")), LT_E_INPUT);
    assert_error_mentions(in_dir("nowhere"));
    assert_error_mentions("no such folder");
    assert_error_mentions("data/fetch-mnist.sh");
    assert_error_mentions(in_dir("nowhere")); /* the command fetches into that folder */

    /* Three of four present (one compressed): the fourth is named. */
    const char *dir = in_dir("mnist");
    mkdir(dir, 0755);
    char path[512];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", dir);
    write_images(path, 1, 28, 28, 1);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    write_labels(path, 1, 0);
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", dir);
    write_images(path, 1, 28, 28, 0);
    assert_status(lt_images_load_mnist(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("missing the MNIST files (t10k-labels-idx1-ubyte,");
    assert_error_mentions("data/fetch-mnist.sh");
    cr_assert(strstr(lt_last_error(), "train-images") == NULL, "%s", lt_last_error());
    cr_assert_null(train.pixels);
    cr_assert_null(test.pixels);
    assert_memory_released();
}

Test(images, mnist_refuses_files_that_are_not_the_originals)
{
    const char *dir = in_dir("mnist");
    mkdir(dir, 0755);
    char path[512];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    write_images(path, 2, 27, 28, 0);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    write_labels(path, 2, 0);
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", dir);
    write_images(path, 2, 28, 28, 0);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", dir);
    write_labels(path, 2, 0);
    lt_image_set train, test;
    assert_status(lt_images_load_mnist(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("train-images-idx3-ubyte: 2 images of 27x28");
    assert_error_mentions("60000 of 28x28");

    /* The original dimensions but other contents (zeros, compressed to a
     * few KB): refused by checksum. */
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    remove(path);
    uint32_t dims[3] = {60000, 28, 28};
    size_t len;
    unsigned char *zeros = idx_bytes(&len, 3, dims, NULL);
    memset(zeros + 16, 0, len - 16);
    strcat(path, ".gz");
    write_file(path, zeros, len, 1);
    free(zeros);
    assert_status(lt_images_load_mnist(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("MD5 of the uncompressed contents is");
    assert_error_mentions("expected 6bbc9ace898e44ae57da46a324031adb");
    cr_assert_null(train.pixels);
    assert_memory_released();
}

Test(images, cifar_missing_folder_names_the_fetch_script)
{
    lt_image_set train, test;
    assert_status(lt_images_load_cifar10(&train, &test, in_dir("nowhere")), LT_E_INPUT);
    assert_error_mentions(in_dir("nowhere"));
    assert_error_mentions("data/fetch-cifar10-catdog.sh");
    assert_error_mentions("cifar10-catdog");
    assert_error_mentions("cifar-10-binary.tar.gz");

    const char *dir = in_dir("empty");
    mkdir(dir, 0755);
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("no cifar-10-binary.tar.gz");
    assert_error_mentions("data/fetch-cifar10-catdog.sh");
    assert_memory_released();
}

/* Unpacked batches have no official checksum, whatever their size or
 * contents (six zero-filled files of the official size among them): they
 * are refused, naming the archive that does. */
Test(images, cifar_unpacked_batches_are_refused_for_want_of_a_checksum)
{
    const char *dir = in_dir("unpacked");
    mkdir(dir, 0755);
    static const char *const names[] = {"data_batch_1.bin", "data_batch_2.bin",
                                        "data_batch_3.bin", "data_batch_4.bin",
                                        "data_batch_5.bin", "test_batch.bin"};
    char path[512];
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(ftruncate(fileno(f), (off_t)LT_CIFAR_BATCH_BYTES), 0);
        fclose(f);
    }
    lt_image_set train, test;
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("holds unpacked CIFAR-10 batches");
    assert_error_mentions("c32a1d4ab5d03f1284b67883e8d87530");
    assert_error_mentions("cifar-10-binary.tar.gz");
    cr_assert_null(train.pixels);
    /* one batch alone is named as what is there */
    for (int i = 1; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("(data_batch_1.bin)");
    assert_memory_released();
}

/* ---- the official archive, as tests build it ---------------------------- */

typedef struct tar_entry {
    const char *name;
    char type;                  /* '0' a file, '5' a folder */
    long long size;             /* bytes of data */
    int batch;                  /* records from make_batch(batch), or -1: zeros */
} tar_entry;

/* Batch b's bytes: every class a tenth, planar values that show the
 * batch, the record and the channel. */
static unsigned char *make_batch(int b)
{
    unsigned char *buf = malloc((size_t)LT_CIFAR_BATCH_BYTES);
    cr_assert_not_null(buf);
    for (int r = 0; r < LT_CIFAR_BATCH_RECORDS; r++) {
        unsigned char *rec = buf + (size_t)r * LT_CIFAR_RECORD_BYTES;
        rec[0] = (unsigned char)((r + b) % 10);
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < 1024; p++)
                rec[1 + c * 1024 + p] = cifar_value(r + 7 * b, c, p);
    }
    return buf;
}

static void tar_header(unsigned char h[512], const tar_entry *e)
{
    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", e->name);
    snprintf((char *)h + 100, 8, "%07o", 0644);
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)e->size);
    memcpy(h + 148, "        ", 8);
    h[156] = (unsigned char)e->type;
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

/* A gzip'd ustar archive of the entries, ended by two zero blocks unless
 * `cut` > 0, which drops that many bytes from the end of the tar. */
static void write_tar_gz(const char *path, const tar_entry *entries, int n, long long cut)
{
    gzFile g = gzopen(path, "wb1");
    cr_assert_not_null(g);
    long long total = 0, limit = -1;
    for (int pass = 0; pass < 2; pass++) {
        long long at = 0;
        unsigned char block[512];
        for (int i = 0; i < n; i++) {
            const tar_entry *e = &entries[i];
            tar_header(block, e);
            unsigned char *data = e->batch >= 0 ? make_batch(e->batch) : calloc(1, (size_t)e->size + 1);
            long long padded = (e->size + 511) / 512 * 512;
            unsigned char *chunk = calloc(1, (size_t)padded + 512);
            memcpy(chunk, block, 512);
            memcpy(chunk + 512, data, (size_t)e->size);
            long long len = 512 + padded;
            if (pass == 1) {
                long long keep = limit - at < len ? limit - at : len;
                if (keep > 0)
                    cr_assert_eq(gzwrite(g, chunk, (unsigned)keep), (int)keep);
            }
            at += len;
            free(chunk);
            free(data);
        }
        memset(block, 0, sizeof block);
        for (int z = 0; z < 2; z++) {
            if (pass == 1 && at + 512 <= limit)
                cr_assert_eq(gzwrite(g, block, 512), 512);
            at += 512;
        }
        total = at;
        limit = total - cut;
    }
    cr_assert_eq(gzclose(g), Z_OK);
}

static const tar_entry official[] = {
    {"cifar-10-batches-bin/", '5', 0, -1},
    {"cifar-10-batches-bin/data_batch_1.bin", '0', LT_CIFAR_BATCH_BYTES, 0},
    {"cifar-10-batches-bin/batches.meta.txt", '0', 61, -1},
    {"cifar-10-batches-bin/data_batch_2.bin", '0', LT_CIFAR_BATCH_BYTES, 1},
    {"cifar-10-batches-bin/data_batch_3.bin", '0', LT_CIFAR_BATCH_BYTES, 2},
    {"cifar-10-batches-bin/data_batch_4.bin", '0', LT_CIFAR_BATCH_BYTES, 3},
    {"cifar-10-batches-bin/readme.html", '0', 88, -1},
    {"cifar-10-batches-bin/test_batch.bin", '0', LT_CIFAR_BATCH_BYTES, 5},
    {"cifar-10-batches-bin/data_batch_5.bin", '0', LT_CIFAR_BATCH_BYTES, 4},
};
enum { OFFICIAL_ENTRIES = sizeof official / sizeof official[0] };

static lt_status load_archive(const char *path)
{
    char md5[LT_MD5_HEX_LEN + 1];
    md5_hex_of_file(md5, path);
    lt_image_set train, test;
    lt_status status = lt_images_load_cifar10_archive(&train, &test, path, md5);
    if (status != LT_OK) {
        cr_assert_null(train.pixels);
        cr_assert_null(test.pixels);
    }
    lt_images_free(&train);
    lt_images_free(&test);
    return status;
}

/* The batches come out of the archive in batch order whatever the member
 * order, interleaved, under the name cifar10; other members are ignored. */
Test(images, cifar_archive_is_read_by_member_name, .timeout = 120)
{
    const char *path = in_dir("a.tar.gz");
    write_tar_gz(path, official, OFFICIAL_ENTRIES, 0);
    char md5[LT_MD5_HEX_LEN + 1];
    md5_hex_of_file(md5, path);
    lt_image_set train, test;
    assert_status(lt_images_load_cifar10_archive(&train, &test, path, md5), LT_OK);
    cr_assert_str_eq(train.name, "cifar10");
    cr_assert_eq(train.count, 50000);
    cr_assert_eq(test.count, 10000);
    for (int b = 0; b < 6; b++) {
        const lt_image_set *set = b < 5 ? &train : &test;
        int first = b < 5 ? b * LT_CIFAR_BATCH_RECORDS : 0;
        for (int r = 0; r < LT_CIFAR_BATCH_RECORDS; r += 4999) {
            const uint8_t *img = set->pixels + (size_t)(first + r) * LT_CIFAR_PIXELS;
            cr_assert_eq(set->labels[first + r], (r + b) % 10, "batch %d record %d", b, r);
            cr_assert_eq(img[0], cifar_value(r + 7 * b, 0, 0));
            cr_assert_eq(img[1], cifar_value(r + 7 * b, 1, 0));
            cr_assert_eq(img[3 * 1023 + 2], cifar_value(r + 7 * b, 2, 1023));
        }
    }
    lt_images_free(&train);
    lt_images_free(&test);
    /* the official checksum is not this archive's */
    assert_status(lt_images_load_cifar10_archive(&train, &test, path, LT_CIFAR10_ARCHIVE_MD5),
                  LT_E_INPUT);
    assert_error_mentions("not the official CIFAR-10 binary archive");
    assert_error_mentions(md5);
    /* in a data folder the official checksum is the one asked for */
    const char *dir = in_dir("official");
    mkdir(dir, 0755);
    char in_folder[512];
    snprintf(in_folder, sizeof in_folder, "%s/cifar-10-binary.tar.gz", dir);
    cr_assert_eq(rename(path, in_folder), 0);
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("expected c32a1d4ab5d03f1284b67883e8d87530");
    assert_memory_released();
}

/* An archive whose MD5 is right (as a test may ask) but whose batches are
 * not what CIFAR-10's are is still refused, naming the member. */
Test(images, cifar_archive_members_are_checked, .timeout = 300)
{
    tar_entry e[OFFICIAL_ENTRIES];
    const char *path = in_dir("b.tar.gz");
    /* a batch missing */
    memcpy(e, official, sizeof e);
    write_tar_gz(path, e, OFFICIAL_ENTRIES - 1, 0);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("no member cifar-10-batches-bin/ for data_batch_5.bin");
    /* a batch twice, one of another size, one under another folder */
    memcpy(e, official, sizeof e);
    e[3].name = "cifar-10-batches-bin/data_batch_1.bin";
    write_tar_gz(path, e, OFFICIAL_ENTRIES, 0);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("member cifar-10-batches-bin/data_batch_1.bin appears twice");
    memcpy(e, official, sizeof e);
    e[4].size = LT_CIFAR_BATCH_BYTES - LT_CIFAR_RECORD_BYTES;
    write_tar_gz(path, e, OFFICIAL_ENTRIES, 0);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("data_batch_3.bin holds 30726927 bytes, expected 30730000");
    memcpy(e, official, sizeof e);
    e[7].name = "other/test_batch.bin";
    write_tar_gz(path, e, OFFICIAL_ENTRIES, 0);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("for test_batch.bin");
    /* cut inside a member's data, and inside the end blocks (fine for tar) */
    write_tar_gz(path, official, OFFICIAL_ENTRIES, 1024 + 3);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("truncated tar archive: it ends inside member "
                          "cifar-10-batches-bin/data_batch_5.bin");
    write_tar_gz(path, official, OFFICIAL_ENTRIES, 1024);
    assert_status(load_archive(path), LT_OK);
    assert_memory_released();
}

/* Damage that the MD5 would catch is also caught by the reader itself. */
Test(images, cifar_archive_damage_is_refused)
{
    const char *path = in_dir("c.tar.gz");
    tar_entry tiny[] = {{"cifar-10-batches-bin/readme.html", '0', 700, -1}};
    write_tar_gz(path, tiny, 1, 0);
    size_t len;
    unsigned char *gz = read_file(path, &len);
    /* the gzip trailer's CRC changed */
    gz[len - 8] ^= 0x55;
    write_file(path, gz, len, 0);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("gzip");
    free(gz);
    /* a header whose checksum is wrong: not a tar archive */
    unsigned char block[1024] = {0};
    memcpy(block, "hello", 5);
    write_file(path, block, sizeof block, 1);
    assert_status(load_archive(path), LT_E_INPUT);
    assert_error_mentions("not a tar archive, or a damaged one");
    assert_memory_released();
}

Test(images, cifar_subset_is_named_by_its_manifest)
{
    const char *dir = in_dir("catdog");
    write_subset(dir, "cifar10-catdog");
    lt_image_set train, test;
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_OK);
    cr_assert_str_eq(train.name, "cifar10-catdog");
    cr_assert_str_eq(test.name, "cifar10-catdog");
    cr_assert_str_eq(train.split, "train");
    cr_assert_str_eq(test.split, "test");
    cr_assert_eq(train.count, 3);
    cr_assert_eq(test.count, 2);
    cr_assert_eq(train.height, 32);
    cr_assert_eq(train.width, 32);
    cr_assert_eq(train.channels, 3);
    cr_assert_eq(lt_images_seq_len(&train), 3072);
    cr_assert_eq(train.labels[1], 5);
    cr_assert_eq(test.labels[1], 3);
    int p = 31 * 32 + 2; /* last row, third column, of test image 1 */
    for (int c = 0; c < 3; c++)
        cr_assert_eq(test.pixels[3072 + 3 * p + c], cifar_value(1, c, p));
    char text[128];
    cr_assert_str_eq(lt_images_describe(text, sizeof text, &train),
                     "cifar10-catdog train: 3 of 3 images, 32x32x3");
    lt_images_free(&train);
    lt_images_free(&test);
    assert_memory_released();
}

Test(images, cifar_subset_manifest_is_checked)
{
    const char *dir = in_dir("s");
    lt_image_set train, test;
    char text[1024], train_md5[33], test_md5[33], path[512];
    write_subset(dir, "cifar10-catdog");
    snprintf(path, sizeof path, "%s/train.bin", dir);
    md5_hex_of_file(train_md5, path);
    snprintf(path, sizeof path, "%s/test.bin", dir);
    md5_hex_of_file(test_md5, path);

    /* Each case: a manifest body (after the header) and words the refusal
     * must contain. */
    struct {
        const char *body;
        const char *mentions;
    } cases[] = {
        {"name cifar10\nclasses 3 5\ntrain train.bin 3 %s\ntest test.bin 2 %s\n",
         "never reported as 'cifar10'"},
        {"name CIFAR10-x\nclasses 3 5\ntrain train.bin 3 %s\ntest test.bin 2 %s\n",
         "line 2"},
        {"name cifar10-catdog a b c d e f g h i j k l\nclasses 3 5\ntrain train.bin 3 %s\n"
         "test test.bin 2 %s\n",
         "too many words"},
        {"name cifar10-catdog\nclasses 3\ntrain train.bin 3 %s\ntest test.bin 2 %s\n",
         "label 5"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 4 %s\ntest test.bin 2 %s\n",
         "expected 4"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 3 %s\n"
         "test test.bin 2 00000000000000000000000000000000\n",
         "MD5"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 3 %s\ntest train.bin 2 %s\n",
         "same file"},
        {"name cifar10-catdog\nclasses 3 5\ntrain ../train.bin 3 %s\ntest test.bin 2 %s\n",
         "plain name"},
        {"name cifar10-catdog\nclasses 3 5 5\ntrain train.bin 3 %s\ntest test.bin 2 %s\n",
         "twice"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 3 %s\n%s\n", "line 5"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 3 %s\n# %s\n", "incomplete"},
        {"name cifar10-catdog\nclasses 3 5\ntrain train.bin 3 %s\ntest other.bin 2 %s\n",
         "data/fetch-cifar10-catdog.sh"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = snprintf(text, sizeof text, "ltbench-cifar10-subset 1\n");
        snprintf(text + n, sizeof text - (size_t)n, cases[i].body, train_md5, test_md5);
        write_manifest(dir, text);
        assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
        assert_error_mentions(cases[i].mentions);
        cr_assert_null(train.pixels, "case %zu", i);
        assert_memory_released();
    }
    write_manifest(dir, "ltbench-cifar10-subset 2\n");
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("header");
    write_manifest(dir, "ltbench-cifar10-subset 1\nname cifar10-\x01\n");
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("0x01");
    static char big[5000];
    memset(big, '#', sizeof big - 1);
    write_manifest(dir, big);
    assert_status(lt_images_load_cifar10(&train, &test, dir), LT_E_INPUT);
    assert_error_mentions("larger than");
    assert_memory_released();
}

Test(images, cifar_subset_manifest_survives_mutations)
{
    const char *dir = in_dir("s");
    write_subset(dir, "cifar10-catdog");
    char path[512];
    snprintf(path, sizeof path, "%s/SUBSET", dir);
    size_t len;
    unsigned char *ref = read_file(path, &len);
    srand(777);
    for (int trial = 0; trial < 300; trial++) {
        unsigned char buf[1024];
        memcpy(buf, ref, len);
        for (int flips = 1 + rand() % 2; flips > 0; flips--)
            buf[rand() % len] = (unsigned char)(rand() % 256);
        write_file(path, buf, rand() % 4 == 0 ? (size_t)rand() % len : len, 0);
        lt_image_set train, test;
        lt_status s = lt_images_load_cifar10(&train, &test, dir);
        cr_assert(s == LT_OK || s == LT_E_INPUT, "trial %d: %s (%s)", trial,
                  lt_status_name(s), lt_last_error());
        if (s == LT_OK)
            cr_assert(strncmp(train.name, "cifar10-", 8) == 0, "named '%s'", train.name);
        lt_images_free(&train);
        lt_images_free(&test);
        assert_memory_released();
    }
    free(ref);
}

Test(images, fixed_subsets_are_deterministic)
{
    write_images(in_dir("img"), 50, 2, 3, 0);
    write_labels(in_dir("lbl"), 50, 0);
    lt_image_set all, first, a, b, c;
    assert_status(lt_images_load_idx(&all, in_dir("img"), in_dir("lbl"), "tiny", "train"), LT_OK);

    assert_status(lt_images_first(&first, &all, 4), LT_OK);
    cr_assert_eq(first.count, 4);
    cr_assert_eq(first.full_count, 50);
    cr_assert_str_eq(first.name, "tiny");
    cr_assert_arr_eq(first.pixels, all.pixels, 4 * 6);
    cr_assert_arr_eq(first.labels, all.labels, 4);

    assert_status(lt_images_sample(&a, &all, 10, 42), LT_OK);
    assert_status(lt_images_sample(&b, &all, 10, 42), LT_OK);
    assert_status(lt_images_sample(&c, &all, 10, 43), LT_OK);
    cr_assert_arr_eq(a.pixels, b.pixels, 10 * 6, "same seed, same images");
    cr_assert(memcmp(a.pixels, c.pixels, 10 * 6) != 0, "another seed, other images");
    cr_assert_eq(a.full_count, 50);
    /* Each drawn image is one of the source's, distinct, in source order;
     * the first pixel (i * 6 * 7 + 3) % 256 identifies image i. */
    int last = -1;
    for (int i = 0; i < 10; i++) {
        int from = -1;
        for (int j = 0; j < 50; j++)
            if (memcmp(a.pixels + 6 * i, all.pixels + 6 * j, 6) == 0)
                from = j;
        cr_assert_gt(from, last, "image %d: source %d after %d", i, from, last);
        cr_assert_eq(a.labels[i], all.labels[from]);
        last = from;
    }
    lt_image_set whole;
    assert_status(lt_images_sample(&whole, &all, 50, 1), LT_OK);
    cr_assert_arr_eq(whole.pixels, all.pixels, 50 * 6, "all of them, in order");

    lt_image_set bad;
    assert_status(lt_images_first(&bad, &all, 0), LT_E_USAGE);
    assert_status(lt_images_sample(&bad, &all, 51, 1), LT_E_USAGE);
    assert_error_mentions("51 images of tiny train, which holds 50");
    lt_images_free(&all);
    lt_images_free(&first);
    lt_images_free(&a);
    lt_images_free(&b);
    lt_images_free(&c);
    lt_images_free(&whole);
    assert_memory_released();
}

/* Sets that live on the stack: pixels only, no allocation. */
static lt_image_set pixels_only(uint8_t *pixels, int count, int height, int channels)
{
    lt_image_set s = {.count = count, .full_count = count, .height = height, .width = 1,
                      .channels = channels, .pixels = pixels};
    return s;
}

Test(images, histogram_baseline_is_the_add_one_histogram_per_channel)
{
    /* 512 training images of 2 channels: channel 0 is always 7, channel 1
     * runs through every byte value twice */
    enum { COUNT = 512 };
    static uint8_t train_px[COUNT * 2], test_px[4 * 2];
    for (int i = 0; i < COUNT; i++) {
        train_px[2 * i] = 7;
        train_px[2 * i + 1] = (uint8_t)(i % 256);
    }
    const uint8_t test_values[] = {7, 0, 7, 255, 9, 3, 7, 200};
    memcpy(test_px, test_values, sizeof test_values);
    lt_image_set train = pixels_only(train_px, COUNT, 1, 2), test = pixels_only(test_px, 4, 1, 2);
    const double total = COUNT + 256.0;
    double seen7 = -log2((COUNT + 1) / total), unseen = -log2(1 / total);
    double each = -log2(3 / total); /* channel 1: every value twice, plus one */
    double want = (3 * seen7 + unseen + 4 * each) / 8;
    double got = lt_images_histogram_bits(&train, &test);
    cr_assert(fabs(got - want) < 1e-12 * want, "got %.15g, want %.15g", got, want);
    /* the uniform channel alone costs about 8 bits */
    cr_assert(fabs(each - 8.0) < 0.02);

    /* the channel count is the image's: as 1 channel, 7 and the ramp share
     * one histogram and the result changes */
    lt_image_set train1 = pixels_only(train_px, COUNT, 2, 1), test1 = pixels_only(test_px, 4, 2, 1);
    cr_assert(fabs(lt_images_histogram_bits(&train1, &test1) - want) > 0.1);
    /* mismatched channels, or nothing to count, is not a number */
    cr_assert(isnan(lt_images_histogram_bits(&train, &test1)));
    lt_image_set empty = pixels_only(train_px, 0, 1, 2);
    cr_assert(isnan(lt_images_histogram_bits(&empty, &test)));
}
