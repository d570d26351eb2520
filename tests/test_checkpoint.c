#include <criterion/criterion.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "core/mem.h"
#include "core/rng.h"
#include "io/checkpoint.h"

/* ---- files and folders ---- */

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lt_ckpt_test_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void cleanup_tmpdir(void) { check_remove_tree(tmpdir); }

TestSuite(ckpt, .init = make_tmpdir, .fini = cleanup_tmpdir);

static const char *in_tmp(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

/* Temporary files lt_atomic_file leaves behind if it fails to clean up. */
static int count_tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        count += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return count;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    unsigned char *buf = check_read_file(path, size);
    cr_assert_not_null(buf, "%s", path);
    return buf;
}

static void spill(const char *path, const void *data, size_t size)
{
    cr_assert_eq(check_write_file(path, data, size), 0, "%s", path);
}

/* Reads `path` expecting failure with `code`; the message must name the file
 * and contain `needle` (if given), and nothing may stay allocated. */
static void expect_read_failure(const char *path, lt_status code, const char *needle)
{
    size_t before = lt_mem_current();
    lt_ckpt *c = (lt_ckpt *)0x1;
    lt_status status = lt_ckpt_read(&c, path);
    cr_assert_eq(status, code, "expected %s, got %s: %s", lt_status_name(code),
                 lt_status_name(status), lt_last_error());
    cr_assert_null(c);
    cr_assert(strstr(lt_last_error(), path) != NULL, "message must name the file: %s",
              lt_last_error());
    if (needle != NULL)
        cr_assert(strstr(lt_last_error(), needle) != NULL, "expected '%s' in: %s", needle,
                  lt_last_error());
    cr_assert_eq(lt_mem_current(), before, "leaked %zu bytes", lt_mem_current() - before);
}

/* n bytes of incompressible noise (malloc'd). */
static unsigned char *random_bytes(size_t n, uint64_t seed)
{
    unsigned char *noise = malloc(n);
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < n; i++)
        noise[i] = (unsigned char)lt_rng_u64(&rng);
    return noise;
}

/* ---- a small checkpoint used by several tests ---- */

static const char sample_config[] = "variant=linear\nlayers=4\nheads=8\n";

static void sample_weights(float *w, int n)
{
    for (int i = 0; i < n; i++)
        w[i] = (float)i * 0.25f - 3.0f;
}

static void write_sample(const char *path)
{
    uint64_t step = 12345;
    float weights[64];
    sample_weights(weights, 64);
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_ckpt_writer_add(w, "step", &step, sizeof step), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "empty", NULL, 0), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "config", sample_config, strlen(sample_config)), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "weights", weights, sizeof weights), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK, "%s", lt_last_error());
}

/* ---- an independent encoder of the documented format, for crafting ---- */

typedef struct bytes {
    unsigned char *p;
    size_t len;
} bytes;

static void put(bytes *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->len + n + 1);
    if (n > 0)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_le(bytes *b, uint64_t x, int width)
{
    unsigned char le[8];
    for (int i = 0; i < width; i++)
        le[i] = (unsigned char)(x >> (8 * i));
    put(b, le, (size_t)width);
}

static void craft_file_header(bytes *b, uint32_t version, uint32_t count)
{
    put(b, "LTCKPT\0\1", 8);
    put_le(b, version, 4);
    put_le(b, count, 4);
}

#define ACTUAL UINT64_MAX

/* A section with the given name and data; claimed_raw, claimed_packed and
 * data_crc replace the true values unless ACTUAL. The record crc is always
 * computed correctly over what is written. */
static void craft_section(bytes *b, const char *name, const void *data, size_t n,
                          uint64_t claimed_raw, uint64_t claimed_packed, uint64_t data_crc)
{
    z_stream zs = {0};
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    uLong cap = deflateBound(&zs, n);
    unsigned char *packed = malloc(cap);
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)n;
    zs.next_out = packed;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t packed_len = zs.total_out;
    deflateEnd(&zs);

    bytes header = {0};
    put_le(&header, strlen(name), 4);
    put(&header, name, strlen(name));
    put_le(&header, claimed_raw == ACTUAL ? n : claimed_raw, 8);
    put_le(&header, claimed_packed == ACTUAL ? packed_len : claimed_packed, 8);
    put_le(&header, data_crc == ACTUAL ? crc32(0, data, (uInt)n) : data_crc, 4);
    uLong record = crc32(crc32(0, header.p, (uInt)header.len), packed, (uInt)packed_len);
    put_le(&header, record, 4);
    put(b, header.p, header.len);
    put(b, packed, packed_len);
    free(header.p);
    free(packed);
}

static void craft_plain(bytes *b, const char *name, const char *text)
{
    craft_section(b, name, text, strlen(text), ACTUAL, ACTUAL, ACTUAL);
}

/* Offset of a section's packed data, found by walking the documented
 * layout (also checks the layout is what the header comment says). */
static size_t packed_offset(const unsigned char *file, size_t size, const char *name)
{
    uint32_t count = file[12] | file[13] << 8 | (uint32_t)file[14] << 16 |
                     (uint32_t)file[15] << 24;
    size_t at = 16;
    for (uint32_t i = 0; i < count; i++) {
        cr_assert_lt(at + 4, size);
        uint32_t name_len = file[at] | file[at + 1] << 8;
        uint64_t packed = 0;
        for (int k = 7; k >= 0; k--)
            packed = packed << 8 | file[at + 4 + name_len + 8 + k];
        size_t data_at = at + 4 + name_len + 24;
        if (name_len == strlen(name) && memcmp(file + at + 4, name, name_len) == 0)
            return data_at;
        at = data_at + packed;
    }
    cr_assert_fail("no section %s", name);
    return 0;
}

/* ---- round trip ---- */

Test(ckpt, round_trip_several_sections)
{
    const char *path = in_tmp("sub/dir/model.ckpt");
    size_t baseline = lt_mem_current();
    enum { BIG = 1 << 20 };
    unsigned char *noise = random_bytes(BIG, 42), *zeros = calloc(BIG, 1);
    lt_rng rng;
    lt_rng_seed(&rng, 1, 2);
    lt_rng saved_rng = rng;
    uint64_t step = 3001;

    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_ckpt_writer_add(w, "step", &step, sizeof step), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "rng", &saved_rng, sizeof saved_rng), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "empty", NULL, 0), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "config", sample_config, strlen(sample_config)), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "params", noise, BIG), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "adam.m", zeros, BIG), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_mem_current(), baseline, "writer leaked");
    cr_assert_eq(count_tmp_files(in_tmp("sub/dir")), 0);

    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, path), LT_OK, "%s", lt_last_error());
    cr_assert_str_eq(lt_ckpt_path(c), path);
    const char *names[] = {"step", "rng", "empty", "config", "params", "adam.m"};
    cr_assert_eq(lt_ckpt_count(c), 6u);
    for (size_t i = 0; i < 6; i++) {
        cr_assert_str_eq(lt_ckpt_name(c, i), names[i]);
        cr_assert(lt_ckpt_has(c, names[i]));
    }
    cr_assert(!lt_ckpt_has(c, "adam.v"));

    uint64_t step_back = 0;
    cr_assert_eq(lt_ckpt_get_exact(c, "step", &step_back, sizeof step_back), LT_OK);
    cr_assert_eq(step_back, 3001u);
    lt_rng rng_back;
    cr_assert_eq(lt_ckpt_get_exact(c, "rng", &rng_back, sizeof rng_back), LT_OK);
    cr_assert_eq(lt_rng_u64(&rng_back), lt_rng_u64(&rng), "restored RNG continues the stream");

    const void *data;
    size_t n;
    cr_assert_eq(lt_ckpt_find(c, "empty", &data, &n), LT_OK);
    cr_assert_eq(n, 0u);
    cr_assert_eq(lt_ckpt_get_exact(c, "empty", NULL, 0), LT_OK);
    cr_assert_eq(lt_ckpt_find(c, "config", &data, &n), LT_OK);
    cr_assert_str_eq((const char *)data, sample_config, "text sections read as C strings");
    cr_assert_eq(lt_ckpt_find(c, "params", &data, &n), LT_OK);
    cr_assert_eq(n, (size_t)BIG);
    cr_assert_eq((uintptr_t)data % 64, 0u, "section data is 64-byte aligned");
    cr_assert(memcmp(data, noise, BIG) == 0);
    cr_assert_eq(lt_ckpt_find(c, "adam.m", &data, &n), LT_OK);
    cr_assert(n == BIG && memcmp(data, zeros, BIG) == 0);
    lt_ckpt_free(c);
    cr_assert_eq(lt_mem_current(), baseline, "reader leaked");

    /* Zeros compress (to about a bit a byte with Huffman coding alone);
     * noise does not: the file is about 1.1 MB, not 2. */
    size_t size;
    free(slurp(path, &size));
    cr_assert(size > BIG && size < BIG + BIG / 4, "file is %zu bytes", size);
    free(noise);
    free(zeros);
}

Test(ckpt, empty_checkpoint_and_overwrite)
{
    const char *path = in_tmp("x.ckpt");
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_ckpt_count(c), 0u);
    lt_ckpt_free(c);
    /* Commit replaces an existing file. */
    write_sample(path);
    cr_assert_eq(lt_ckpt_read(&c, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_ckpt_count(c), 4u);
    lt_ckpt_free(c);
}

Test(ckpt, crafted_file_matches_documented_format)
{
    bytes b = {0};
    craft_file_header(&b, 1, 2);
    craft_plain(&b, "hello", "world");
    craft_section(&b, "nothing", "", 0, ACTUAL, ACTUAL, ACTUAL);
    spill(in_tmp("crafted.ckpt"), b.p, b.len);
    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, in_tmp("crafted.ckpt")), LT_OK, "%s", lt_last_error());
    const void *data;
    size_t n;
    cr_assert_eq(lt_ckpt_find(c, "hello", &data, &n), LT_OK);
    cr_assert(n == 5 && memcmp(data, "world", 5) == 0);
    lt_ckpt_free(c);

    /* And what the writer produces parses with the same walk. */
    write_sample(in_tmp("sample.ckpt"));
    size_t size;
    unsigned char *file = slurp(in_tmp("sample.ckpt"), &size);
    cr_assert(memcmp(file, "LTCKPT\0\1\1\0\0\0\4\0\0\0", 16) == 0);
    size_t at = packed_offset(file, size, "weights");
    cr_assert_lt(at, size);
    free(file);
    free(b.p);
}

/* ---- reading errors ---- */

Test(ckpt, missing_file_or_folder_is_io_error)
{
    expect_read_failure(in_tmp("no-such.ckpt"), LT_E_IO, NULL);
    cr_assert_eq(mkdir(in_tmp("folder"), 0700), 0);
    expect_read_failure(in_tmp("folder"), LT_E_IO, NULL);
}

Test(ckpt, not_a_checkpoint)
{
    const char *path = in_tmp("text.ckpt");
    spill(path, "hello, world: this is not a checkpoint", 38);
    expect_read_failure(path, LT_E_INPUT, "not an ltbench checkpoint");
    spill(path, "", 0);
    expect_read_failure(path, LT_E_INPUT, "not an ltbench checkpoint");
    spill(path, "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    expect_read_failure(path, LT_E_INPUT, "not an ltbench checkpoint");
}

Test(ckpt, unsupported_version)
{
    const char *path = in_tmp("v.ckpt");
    write_sample(path);
    size_t size;
    unsigned char *file = slurp(path, &size);
    file[8] = 2;
    spill(path, file, size);
    expect_read_failure(path, LT_E_INPUT, "version 2");
    free(file);
}

/* Cuts the checkpoint at `path` to every length within `dense` bytes of
 * either end and to a prime stride of lengths between; each must fail. */
static void expect_truncations_fail(const char *path, size_t dense)
{
    size_t size;
    unsigned char *file = slurp(path, &size);
    for (size_t len = 0; len < size; len += len < dense || size - len < dense ? 1 : 7919) {
        spill(path, file, len);
        expect_read_failure(path, LT_E_INPUT, NULL);
    }
    free(file);
}

Test(ckpt, truncated_at_every_length)
{
    const char *path = in_tmp("t.ckpt");
    write_sample(path);
    expect_truncations_fail(path, SIZE_MAX);
}

Test(ckpt, large_file_truncated_at_sampled_lengths)
{
    const char *path = in_tmp("big.ckpt");
    enum { BIG = 1 << 20 };
    unsigned char *noise = random_bytes(BIG, 3);
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "head", "abc", 3), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "params", noise, BIG), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "tail", "xyz", 3), LT_OK);
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    expect_truncations_fail(path, 200);
    free(noise);
}

Test(ckpt, every_flipped_byte_is_detected)
{
    const char *path = in_tmp("f.ckpt");
    write_sample(path);
    size_t size;
    unsigned char *file = slurp(path, &size);
    const unsigned char flips[] = {0x01, 0x80, 0xff};
    for (size_t at = 0; at < size; at++) {
        for (size_t k = 0; k < sizeof flips; k++) {
            file[at] ^= flips[k];
            spill(path, file, size);
            expect_read_failure(path, LT_E_INPUT, NULL);
            file[at] ^= flips[k];
        }
    }
    free(file);
}

Test(ckpt, flipped_data_byte_names_the_section)
{
    const char *path = in_tmp("d.ckpt");
    write_sample(path);
    size_t size;
    unsigned char *file = slurp(path, &size);
    size_t at = packed_offset(file, size, "weights");
    file[at + 5] ^= 0x10;
    spill(path, file, size);
    expect_read_failure(path, LT_E_INPUT, "'weights'");
    cr_assert(strstr(lt_last_error(), "CRC32") != NULL, "%s", lt_last_error());
    free(file);
}

Test(ckpt, data_crc_and_length_mismatch_name_the_section)
{
    /* Consistent record crcs, so only the data checks can catch these. */
    const char *path = in_tmp("c.ckpt");
    const char *text = "some section text";
    bytes b = {0};
    craft_file_header(&b, 1, 1);
    craft_section(&b, "params", text, strlen(text), ACTUAL, ACTUAL, 0x12345678);
    spill(path, b.p, b.len);
    expect_read_failure(path, LT_E_INPUT, "section 'params' is corrupt: CRC32 mismatch");

    b.len = 0;
    craft_file_header(&b, 1, 1);
    craft_section(&b, "params", text, strlen(text), strlen(text) - 1, ACTUAL, ACTUAL);
    spill(path, b.p, b.len);
    expect_read_failure(path, LT_E_INPUT, "section 'params' is corrupt");

    b.len = 0;
    craft_file_header(&b, 1, 1);
    craft_section(&b, "params", text, strlen(text), strlen(text) + 1, ACTUAL, ACTUAL);
    spill(path, b.p, b.len);
    expect_read_failure(path, LT_E_INPUT, "section 'params' is corrupt");

    /* Garbage that is not a DEFLATE stream. */
    b.len = 0;
    craft_file_header(&b, 1, 1);
    unsigned char junk[32];
    memset(junk, 0xff, sizeof junk);
    bytes header = {0};
    put_le(&header, 4, 4);
    put(&header, "junk", 4);
    put_le(&header, 64, 8);
    put_le(&header, sizeof junk, 8);
    put_le(&header, 0, 4);
    put_le(&header, crc32(crc32(0, header.p, (uInt)header.len), junk, sizeof junk), 4);
    put(&b, header.p, header.len);
    put(&b, junk, sizeof junk);
    spill(path, b.p, b.len);
    expect_read_failure(path, LT_E_INPUT, "section 'junk' is corrupt");
    free(header.p);
    free(b.p);
}

/* Reads a crafted file that must fail without allocating more than the file
 * itself plus small tables. */
static void expect_cheap_failure(const bytes *b, const char *needle)
{
    const char *path = in_tmp("absurd.ckpt");
    spill(path, b->p, b->len);
    lt_mem_reset_peak();
    size_t before = lt_mem_current();
    expect_read_failure(path, LT_E_INPUT, needle);
    size_t extra = lt_mem_peak() - before;
    cr_assert_lt(extra, b->len + 64 * 1024, "allocated %zu bytes for a %zu-byte file", extra,
                 b->len);
}

Test(ckpt, absurd_lengths_allocate_nothing_big)
{
    bytes b = {0};
    craft_file_header(&b, 1, 1);
    craft_section(&b, "params", "abcdefgh", 8, (uint64_t)1 << 40, ACTUAL, ACTUAL);
    expect_cheap_failure(&b, "params");

    b.len = 0;
    craft_file_header(&b, 1, 1);
    craft_section(&b, "params", "abcdefgh", 8, ACTUAL, (uint64_t)1 << 62, ACTUAL);
    expect_cheap_failure(&b, "truncated");

    b.len = 0;
    craft_file_header(&b, 1, UINT32_MAX);
    craft_plain(&b, "params", "abcdefgh");
    expect_cheap_failure(&b, "sections");

    b.len = 0;
    craft_file_header(&b, 1, 1);
    put_le(&b, UINT32_MAX, 4);
    put(&b, "params and then some padding to look like a section", 52);
    expect_cheap_failure(&b, "name length");

    /* A flipped high byte of a real length is caught by the record crc. */
    const char *path = in_tmp("sample.ckpt");
    write_sample(path);
    size_t size;
    unsigned char *file = slurp(path, &size);
    size_t at = packed_offset(file, size, "weights");
    file[at - 24 + 5] ^= 0x40; /* byte 5 of the raw length */
    b.len = 0;
    put(&b, file, size);
    expect_cheap_failure(&b, "weights");
    free(file);
    free(b.p);
}

Test(ckpt, trailing_garbage)
{
    const char *path = in_tmp("g.ckpt");
    write_sample(path);
    size_t size;
    unsigned char *file = slurp(path, &size);
    file = realloc(file, size + 100);
    memset(file + size, 0, 100);
    spill(path, file, size + 1);
    expect_read_failure(path, LT_E_INPUT, "1 unexpected bytes");
    spill(path, file, size + 100);
    expect_read_failure(path, LT_E_INPUT, "100 unexpected bytes");
    free(file);
}

Test(ckpt, duplicate_section_names)
{
    bytes b = {0};
    craft_file_header(&b, 1, 3);
    craft_plain(&b, "params", "one");
    craft_plain(&b, "other", "two");
    craft_plain(&b, "params", "three");
    spill(in_tmp("dup.ckpt"), b.p, b.len);
    expect_read_failure(in_tmp("dup.ckpt"), LT_E_INPUT, "'params' appears twice");
    free(b.p);

    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, in_tmp("dup2.ckpt")), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "params", "a", 1), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "params", "b", 1), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "params") != NULL);
    lt_ckpt_writer_abort(w);
    cr_assert_eq(access(in_tmp("dup2.ckpt"), F_OK), -1, "abort leaves no file");
    cr_assert_eq(count_tmp_files(tmpdir), 0);
}

Test(ckpt, invalid_section_names_refused)
{
    char long_name[LT_CKPT_MAX_NAME + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    const char *bad[] = {"", "has space", "tab\there", "caf\xc3\xa9", long_name};
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, in_tmp("n.ckpt")), LT_OK);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(lt_ckpt_writer_add(w, bad[i], "x", 1), LT_E_USAGE, "'%s'", bad[i]);
    long_name[LT_CKPT_MAX_NAME] = '\0';
    cr_assert_eq(lt_ckpt_writer_add(w, long_name, "x", 1), LT_OK, "255 characters are fine");
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_OK);
    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, in_tmp("n.ckpt")), LT_OK, "%s", lt_last_error());
    cr_assert(lt_ckpt_has(c, long_name));
    lt_ckpt_free(c);
}

Test(ckpt, mismatched_or_missing_section)
{
    const char *path = in_tmp("m.ckpt");
    write_sample(path);
    lt_ckpt *c;
    cr_assert_eq(lt_ckpt_read(&c, path), LT_OK);
    float weights[65];
    cr_assert_eq(lt_ckpt_get_exact(c, "weights", weights, sizeof weights), LT_E_INPUT);
    const char *msg = lt_last_error();
    cr_assert(strstr(msg, path) && strstr(msg, "'weights'") && strstr(msg, "256") &&
              strstr(msg, "260"), "%s", msg);
    cr_assert_eq(lt_ckpt_get_exact(c, "weights", weights, 256), LT_OK);
    float expected[64];
    sample_weights(expected, 64);
    cr_assert(memcmp(weights, expected, 256) == 0);

    const void *data;
    size_t n;
    cr_assert_eq(lt_ckpt_find(c, "adam.v", &data, &n), LT_E_INPUT);
    cr_assert(strstr(lt_last_error(), "'adam.v'") && strstr(lt_last_error(), path));
    cr_assert_eq(lt_ckpt_get_exact(c, "adam.v", weights, 256), LT_E_INPUT);
    lt_ckpt_free(c);
}

/* ---- writing errors ---- */

Test(ckpt, unwritable_path_leaves_nothing)
{
    spill(in_tmp("plain-file"), "x", 1);
    lt_ckpt_writer *w = (lt_ckpt_writer *)0x1;
    size_t before = lt_mem_current();
    cr_assert_eq(lt_ckpt_writer_open(&w, in_tmp("plain-file/model.ckpt")), LT_E_IO);
    cr_assert_null(w);
    cr_assert(strstr(lt_last_error(), "plain-file") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_ckpt_writer_open(&w, tmpdir), LT_E_IO, "a folder is not a file");
    cr_assert_eq(lt_mem_current(), before, "failed open leaked");
    cr_assert_eq(count_tmp_files(tmpdir), 0);

    /* A read-only folder (meaningless for root, which may write anyway). */
    if (geteuid() != 0) {
        const char *ro = in_tmp("readonly");
        cr_assert_eq(mkdir(ro, 0500), 0);
        char path[600];
        snprintf(path, sizeof path, "%s/model.ckpt", ro);
        cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_E_IO);
        cr_assert_eq(count_tmp_files(ro), 0);
    }
}

Test(ckpt, abort_keeps_the_old_file)
{
    const char *path = in_tmp("keep.ckpt");
    write_sample(path);
    size_t size_before;
    unsigned char *before = slurp(path, &size_before);
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "other", "data", 4), LT_OK);
    cr_assert_eq(count_tmp_files(tmpdir), 1, "writes go to a temporary file");
    lt_ckpt_writer_abort(w);
    lt_ckpt_writer_abort(NULL);
    cr_assert_eq(count_tmp_files(tmpdir), 0);
    size_t size_after;
    unsigned char *after = slurp(path, &size_after);
    cr_assert(size_before == size_after && memcmp(before, after, size_after) == 0);
    free(before);
    free(after);
}

Test(ckpt, full_disk_mid_write_leaves_nothing)
{
    /* A file-size limit stands in for a full disk: writes past 64 KiB fail
     * with EFBIG (the signal it would raise is ignored). */
    const char *path = in_tmp("full.ckpt");
    enum { BIG = 1 << 20 };
    unsigned char *noise = random_bytes(BIG, 5);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {.rlim_cur = 64 * 1024, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    size_t before = lt_mem_current();
    lt_ckpt_writer *w;
    cr_assert_eq(lt_ckpt_writer_open(&w, path), LT_OK);
    cr_assert_eq(lt_ckpt_writer_add(w, "step", "12345678", 8), LT_OK);
    /* the machine's failure, not the path's: exit status 1 */
    cr_assert_eq(lt_ckpt_writer_add(w, "params", noise, BIG), LT_E_SYSTEM);
    cr_assert(strstr(lt_last_error(), path) != NULL, "%s", lt_last_error());
    cr_assert(strstr(lt_last_error(), "File too large") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_exit_code(LT_E_SYSTEM), 1);
    cr_assert_eq(lt_ckpt_writer_add(w, "more", "x", 1), LT_E_SYSTEM, "the writer stays failed");
    cr_assert_eq(lt_ckpt_writer_commit(w), LT_E_SYSTEM,
                 "commit refuses a half-written section");
    cr_assert_eq(access(path, F_OK), -1);
    cr_assert_eq(count_tmp_files(tmpdir), 0);
    cr_assert_eq(lt_mem_current(), before);
    free(noise);
}
