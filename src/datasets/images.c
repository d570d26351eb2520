/* The image datasets (see images.h): MNIST from its IDX files, CIFAR-10
 * from the official batches or from a converted subset, and fixed subsets
 * of a loaded set. One file because the loaders share private helpers
 * (paths, missing-file messages, set_alloc); the converted subsets take
 * about 240 lines, since their manifest decides the name the data is
 * reported under and is checked line by line. */
#include "datasets/images.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "core/rng.h"
#include "io/cifar.h"
#include "io/idx.h"
#include "io/md5.h"
#include "io/read.h"
#include "io/stream.h"
#include "io/tar.h"

#define PATH_LEN 4096
#define MNIST_SIDE 28
#define CIFAR_TRAIN_BATCHES 5

/* ---- small helpers ------------------------------------------------------ */

static lt_status join(char out[PATH_LEN], const char *dir, const char *file)
{
    int n = snprintf(out, PATH_LEN, "%s/%s", dir, file);
    if (n < 0 || n >= PATH_LEN)
        return lt_fail(LT_E_USAGE, "data folder path '%.200s...' is too long", dir);
    return LT_OK;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* `dir` as a shell word: quoted unless it is plainly safe to paste. */
static const char *shell_word(char *buf, size_t size, const char *dir)
{
    if (strspn(dir, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+") ==
            strlen(dir) && dir[0] != '\0')
        snprintf(buf, size, "%s", dir);
    else if (strchr(dir, '\'') == NULL)
        snprintf(buf, size, "'%s'", dir);
    else
        snprintf(buf, size, "DIR"); /* too awkward to quote: the user substitutes it */
    return buf;
}

static void append(char *buf, size_t size, const char *text)
{
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", text);
}

static lt_status set_alloc(lt_image_set *set, const char *name, const char *split, int count,
                           int height, int width, int channels)
{
    memset(set, 0, sizeof *set);
    snprintf(set->name, sizeof set->name, "%s", name);
    snprintf(set->split, sizeof set->split, "%s", split);
    set->count = set->full_count = count;
    set->height = height;
    set->width = width;
    set->channels = channels;
    size_t pixels = (size_t)count * (size_t)height * (size_t)width * (size_t)channels;
    lt_status status = lt_mem_alloc((void **)&set->pixels, pixels, "image pixels");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&set->labels, (size_t)count, "image labels");
    if (status != LT_OK)
        lt_images_free(set);
    return status;
}

void lt_images_free(lt_image_set *set)
{
    lt_mem_free(set->pixels);
    lt_mem_free(set->labels);
    memset(set, 0, sizeof *set);
}

long lt_images_seq_len(const lt_image_set *set)
{
    return (long)set->height * set->width * set->channels;
}

double lt_images_histogram_bits(const lt_image_set *train, const lt_image_set *test)
{
    enum { VALUES = 256, MAX_CHANNELS = 4 };
    const int C = train->channels;
    const size_t train_bytes = (size_t)train->count * lt_images_seq_len(train);
    const size_t test_bytes = (size_t)test->count * lt_images_seq_len(test);
    if (C < 1 || C > MAX_CHANNELS || test->channels != C || train_bytes == 0 || test_bytes == 0)
        return NAN;
    /* counts, then -log2 p per value; bytes are channel-interleaved */
    double bits[MAX_CHANNELS][VALUES];
    for (int c = 0; c < C; c++)
        for (int v = 0; v < VALUES; v++)
            bits[c][v] = 1.0;
    for (size_t i = 0; i < train_bytes; i++)
        bits[i % C][train->pixels[i]] += 1.0;
    const double total = (double)(train_bytes / C) + VALUES;
    for (int c = 0; c < C; c++)
        for (int v = 0; v < VALUES; v++)
            bits[c][v] = -log2(bits[c][v] / total);
    double sum = 0.0;
    for (size_t i = 0; i < test_bytes; i++)
        sum += bits[i % C][test->pixels[i]];
    return sum / (double)test_bytes;
}

const char *lt_images_describe(char *buf, size_t size, const lt_image_set *set)
{
    snprintf(buf, size, "%s %s: %d of %d images, %dx%dx%d", set->name, set->split, set->count,
             set->full_count, set->height, set->width, set->channels);
    return buf;
}

/* ---- IDX pairs and MNIST -------------------------------------------------- */

/* Takes over the buffers of an image file and its label file. */
static lt_status pair_to_set(lt_image_set *out, lt_idx *images, lt_idx *labels,
                             const char *images_path, const char *labels_path, const char *name,
                             const char *split)
{
    if (images->dims[0] != labels->dims[0])
        return lt_fail(LT_E_INPUT, "%s holds %d images but %s holds %d labels, expected one "
                                   "label per image", images_path, images->dims[0], labels_path,
                       labels->dims[0]);
    for (int i = 0; i < labels->dims[0]; i++)
        if (labels->data[i] >= LT_IMAGES_CLASSES)
            return lt_fail(LT_E_INPUT, "%s: label %d of %d is %d, expected 0 to %d", labels_path,
                           i + 1, labels->dims[0], labels->data[i], LT_IMAGES_CLASSES - 1);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->split, sizeof out->split, "%s", split);
    out->count = out->full_count = images->dims[0];
    out->height = images->dims[1];
    out->width = images->dims[2];
    out->channels = 1;
    out->pixels = images->data;
    out->labels = labels->data;
    images->data = labels->data = NULL;
    return LT_OK;
}

lt_status lt_images_load_idx(lt_image_set *out, const char *images_path,
                             const char *labels_path, const char *name, const char *split)
{
    memset(out, 0, sizeof *out);
    lt_idx images, labels = {0};
    lt_status status = lt_idx_read(&images, images_path, LT_IDX_IMAGES);
    if (status == LT_OK)
        status = lt_idx_read(&labels, labels_path, LT_IDX_LABELS);
    if (status == LT_OK)
        status = pair_to_set(out, &images, &labels, images_path, labels_path, name, split);
    lt_idx_free(&images);
    lt_idx_free(&labels);
    return status;
}

typedef struct mnist_file {
    const char *name;
    int ndim;
    int count;
    const char *md5; /* of the uncompressed original */
} mnist_file;

static const mnist_file mnist_files[4] = {
    {"train-images-idx3-ubyte", LT_IDX_IMAGES, 60000, "6bbc9ace898e44ae57da46a324031adb"},
    {"train-labels-idx1-ubyte", LT_IDX_LABELS, 60000, "a25bea736e30d166cdddb491f175f624"},
    {"t10k-images-idx3-ubyte", LT_IDX_IMAGES, 10000, "2646ac647ad5339dbf082846283269ea"},
    {"t10k-labels-idx1-ubyte", LT_IDX_LABELS, 10000, "27ae3e4e09519cfbb04c329615203637"},
};

/* Each file plain or .gz; LT_E_INPUT listing the missing ones with the
 * command that fetches them. */
static lt_status find_mnist_files(char paths[4][PATH_LEN], const char *dir)
{
    char missing[512] = "";
    for (int i = 0; i < 4; i++) {
        char gz[64];
        snprintf(gz, sizeof gz, "%s.gz", mnist_files[i].name);
        LT_TRY(join(paths[i], dir, mnist_files[i].name));
        if (is_file(paths[i]))
            continue;
        LT_TRY(join(paths[i], dir, gz));
        if (!is_file(paths[i]))
            append(missing, sizeof missing, mnist_files[i].name);
    }
    if (missing[0] == '\0')
        return LT_OK;
    char word[PATH_LEN + 8] = "";
    if (strcmp(dir, LT_MNIST_DIR) != 0)
        shell_word(word, sizeof word, dir);
    return lt_fail(LT_E_INPUT, "%s: %s MNIST files (%s, each plain or .gz); fetch them with: "
                               "%s%s%s", dir, is_dir(dir) ? "missing the" : "no such folder, so no",
                   missing, LT_MNIST_FETCH, word[0] != '\0' ? " " : "", word);
}

/* One MNIST file, with the original's dimensions and checksum. */
static lt_status read_mnist_file(lt_idx *idx, const char *path, const mnist_file *want)
{
    LT_TRY(lt_idx_read(idx, path, want->ndim));
    lt_status status = LT_OK;
    int images = want->ndim == LT_IDX_IMAGES;
    if (idx->dims[0] != want->count ||
        (images && (idx->dims[1] != MNIST_SIDE || idx->dims[2] != MNIST_SIDE))) {
        if (images)
            status = lt_fail(LT_E_INPUT, "%s: %d images of %dx%d, expected the original MNIST "
                                         "file's %d of %dx%d", path, idx->dims[0], idx->dims[1],
                             idx->dims[2], want->count, MNIST_SIDE, MNIST_SIDE);
        else
            status = lt_fail(LT_E_INPUT, "%s: %d labels, expected the original MNIST file's %d",
                             path, idx->dims[0], want->count);
    } else {
        char hex[LT_MD5_HEX_LEN + 1];
        lt_md5_hex(hex, idx->md5);
        if (strcmp(hex, want->md5) != 0)
            status = lt_fail(LT_E_INPUT, "%s: MD5 of the %scontents is %s, expected %s: not the "
                                         "original MNIST file (damaged or another data set)",
                             path, idx->gzipped ? "uncompressed " : "", hex, want->md5);
    }
    if (status != LT_OK)
        lt_idx_free(idx);
    return status;
}

static lt_status load_mnist_split(lt_image_set *out, char paths[4][PATH_LEN], int first,
                                  const char *split)
{
    lt_idx images, labels = {0};
    lt_status status = read_mnist_file(&images, paths[first], &mnist_files[first]);
    if (status == LT_OK)
        status = read_mnist_file(&labels, paths[first + 1], &mnist_files[first + 1]);
    if (status == LT_OK)
        status = pair_to_set(out, &images, &labels, paths[first], paths[first + 1], "mnist",
                             split);
    lt_idx_free(&images);
    lt_idx_free(&labels);
    return status;
}

lt_status lt_images_load_mnist(lt_image_set *train, lt_image_set *test, const char *dir)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (dir == NULL)
        dir = LT_MNIST_DIR;
    char paths[4][PATH_LEN];
    LT_TRY(find_mnist_files(paths, dir));
    LT_TRY(load_mnist_split(train, paths, 0, "train"));
    lt_status status = load_mnist_split(test, paths, 2, "test");
    if (status != LT_OK)
        lt_images_free(train);
    return status;
}

/* ---- CIFAR-10 --------------------------------------------------------------- */

static const char *const cifar_files[CIFAR_TRAIN_BATCHES + 1] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};

/* LT_E_INPUT for a folder without usable CIFAR data, with what to run. */
static lt_status cifar_missing(const char *dir, const char *what)
{
    char word[PATH_LEN + 8] = "", then[PATH_LEN + 64] = "";
    if (strcmp(dir, LT_CIFAR10_DIR) == 0)
        snprintf(then, sizeof then, " (it writes %s; then load that folder, e.g. --data %s)",
                 LT_CIFAR10_CATDOG_DIR, LT_CIFAR10_CATDOG_DIR);
    else if (strcmp(dir, LT_CIFAR10_CATDOG_DIR) != 0)
        snprintf(then, sizeof then, " %s", shell_word(word, sizeof word, dir));
    return lt_fail(LT_E_INPUT, "%s: %s. Fetch the CIFAR-10 cats-and-dogs subset (named "
                               "cifar10-catdog) with: %s%s; or put the official archive %s "
                               "(%s) in this folder as it was downloaded",
                   dir, what, LT_CIFAR10_CATDOG_FETCH, then, LT_CIFAR10_ARCHIVE, LT_CIFAR10_URL);
}

/* Member `name` of the official archive: which batch (0..5), or -1. */
static int official_batch(const char *name)
{
    if (strncmp(name, "./", 2) == 0)
        name += 2;
    size_t dir_len = strlen(LT_CIFAR10_ARCHIVE_DIR);
    if (strncmp(name, LT_CIFAR10_ARCHIVE_DIR, dir_len) != 0 || name[dir_len] != '/')
        return -1;
    for (int i = 0; i <= CIFAR_TRAIN_BATCHES; i++)
        if (strcmp(name + dir_len + 1, cifar_files[i]) == 0)
            return i;
    return -1;
}

/* The six batches from the archive's members, in whatever order they come. */
static lt_status read_archive_batches(lt_image_set *train, lt_image_set *test, lt_stream *s,
                                      unsigned char *batch)
{
    lt_tar tar;
    lt_tar_start(&tar, s);
    int seen[CIFAR_TRAIN_BATCHES + 1] = {0}, end = 0;
    for (;;) {
        lt_tar_member m;
        LT_TRY(lt_tar_next(&tar, &m, &end));
        if (end)
            break;
        int i = m.regular ? official_batch(m.name) : -1;
        if (i < 0)
            continue;
        if (seen[i]++)
            return lt_fail(LT_E_INPUT, "%s: member %s appears twice", s->path, m.name);
        if (m.size != LT_CIFAR_BATCH_BYTES)
            return lt_fail(LT_E_INPUT, "%s: member %s holds %lld bytes, expected %lld",
                           s->path, m.name, m.size, LT_CIFAR_BATCH_BYTES);
        LT_TRY(lt_tar_read(&tar, &m, batch));
        lt_image_set *set = i < CIFAR_TRAIN_BATCHES ? train : test;
        size_t first = i < CIFAR_TRAIN_BATCHES ? (size_t)i * LT_CIFAR_BATCH_RECORDS : 0;
        char where[PATH_LEN + LT_TAR_NAME_MAX + 4];
        snprintf(where, sizeof where, "%s: %s", s->path, m.name);
        LT_TRY(lt_cifar_decode(set->pixels + first * LT_CIFAR_PIXELS, set->labels + first,
                               LT_CIFAR_BATCH_RECORDS, batch, where));
    }
    /* to the end of the file: a gzip trailer's CRC is checked there */
    LT_TRY(lt_stream_drain(s));
    char missing[256] = "";
    for (int i = 0; i <= CIFAR_TRAIN_BATCHES; i++)
        if (!seen[i])
            append(missing, sizeof missing, cifar_files[i]);
    if (missing[0] != '\0')
        return lt_fail(LT_E_INPUT, "%s: no member %s/ for %s", s->path, LT_CIFAR10_ARCHIVE_DIR,
                       missing);
    return LT_OK;
}

lt_status lt_images_load_cifar10_archive(lt_image_set *train, lt_image_set *test,
                                         const char *path, const char *md5)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    unsigned char digest[LT_MD5_BYTES];
    char hex[LT_MD5_HEX_LEN + 1];
    LT_TRY(lt_md5_file(digest, path));
    if (strcmp(lt_md5_hex(hex, digest), md5) != 0)
        return lt_fail(LT_E_INPUT, "%s: MD5 %s, expected %s: not the official CIFAR-10 binary "
                                   "archive (%s, %s)", path, hex, md5, LT_CIFAR10_ARCHIVE,
                       LT_CIFAR10_URL);
    lt_status status = set_alloc(train, "cifar10", "train",
                                 CIFAR_TRAIN_BATCHES * LT_CIFAR_BATCH_RECORDS, LT_CIFAR_SIDE,
                                 LT_CIFAR_SIDE, LT_CIFAR_CHANNELS);
    if (status == LT_OK)
        status = set_alloc(test, "cifar10", "test", LT_CIFAR_BATCH_RECORDS, LT_CIFAR_SIDE,
                           LT_CIFAR_SIDE, LT_CIFAR_CHANNELS);
    unsigned char *batch = NULL;
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&batch, (size_t)LT_CIFAR_BATCH_BYTES, "a CIFAR-10 batch");
    lt_stream s;
    if (status == LT_OK) {
        status = lt_stream_open(&s, path);
        if (status == LT_OK)
            status = read_archive_batches(train, test, &s, batch);
        lt_stream_close(&s);
    }
    lt_mem_free(batch);
    if (status != LT_OK) {
        lt_images_free(train);
        lt_images_free(test);
    }
    return status;
}

/* The official data come as the archive the authors publish, whose MD5 is
 * the only official checksum: the loader reads the batches from it. Batches
 * unpacked alone have no checksum to prove them, and are refused. */
static lt_status load_cifar_official(lt_image_set *train, lt_image_set *test, const char *dir)
{
    char archive[PATH_LEN];
    LT_TRY(join(archive, dir, LT_CIFAR10_ARCHIVE));
    if (is_file(archive))
        return lt_images_load_cifar10_archive(train, test, archive, LT_CIFAR10_ARCHIVE_MD5);
    char found[256] = "";
    for (int i = 0; i <= CIFAR_TRAIN_BATCHES; i++) {
        char path[PATH_LEN];
        LT_TRY(join(path, dir, cifar_files[i]));
        if (is_file(path))
            append(found, sizeof found, cifar_files[i]);
    }
    if (found[0] != '\0')
        return lt_fail(LT_E_INPUT, "%s: holds unpacked CIFAR-10 batches (%s) but not %s, and only "
                                   "the archive has an official checksum (MD5 %s): put the "
                                   "archive itself in %s (ltbench reads the batches from it) "
                                   "or give a converted subset its %s manifest",
                       dir, found, LT_CIFAR10_ARCHIVE, LT_CIFAR10_ARCHIVE_MD5, dir,
                       LT_CIFAR_SUBSET_MANIFEST);
    char what[512] = "no such folder";
    if (is_dir(dir))
        snprintf(what, sizeof what, "no %s (and no %s manifest of a converted subset)",
                 LT_CIFAR10_ARCHIVE, LT_CIFAR_SUBSET_MANIFEST);
    return cifar_missing(dir, what);
}

/* ---- converted subsets: the manifest ------------------------------------ */

/* The manifest is a few lines of text:
 *
 *   ltbench-cifar10-subset 1
 *   name cifar10-catdog
 *   classes 3 5
 *   train train.bin 1800 <md5 of the file>
 *   test test.bin 200 <md5 of the file>
 *
 * plus blank lines and '#' comments. Everything is checked: it decides the
 * name the data is reported under. */
#define MANIFEST_MAX_BYTES 4096
#define MANIFEST_MAX_TOKENS 12
#define MANIFEST_FILE_MAX 64
#define MANIFEST_PREFIX "cifar10-"

enum { SPLIT_TRAIN, SPLIT_TEST, SPLITS };
static const char *const split_names[SPLITS] = {"train", "test"};

typedef struct subset_split {
    char file[MANIFEST_FILE_MAX + 1];
    int count;
    char md5[LT_MD5_HEX_LEN + 1];
    int seen;
} subset_split;

typedef struct subset_manifest {
    const char *path;
    int line;
    char name[LT_IMAGES_NAME_MAX];
    unsigned classes; /* bit c set: label c allowed */
    int seen_header, seen_name, seen_classes;
    subset_split split[SPLITS];
} subset_manifest;

static lt_status bad_line(const subset_manifest *m, const char *what)
{
    return lt_fail(LT_E_INPUT, "%s line %d: %s", m->path, m->line, what);
}

static int all_of(const char *text, const char *allowed, size_t min_len, size_t max_len)
{
    size_t len = strlen(text);
    return len >= min_len && len <= max_len && strspn(text, allowed) == len;
}

static lt_status parse_name(subset_manifest *m, const char *name)
{
    size_t prefix = strlen(MANIFEST_PREFIX);
    if (strncmp(name, MANIFEST_PREFIX, prefix) != 0 ||
        !all_of(name + prefix, "abcdefghijklmnopqrstuvwxyz0123456789-", 1,
                LT_IMAGES_NAME_MAX - 1 - prefix))
        return bad_line(m, "the subset name must be 'cifar10-' and 1 or more of a-z 0-9 -, "
                           "at most 31 characters in all (a subset is never reported as "
                           "'cifar10' itself)");
    snprintf(m->name, sizeof m->name, "%s", name);
    return LT_OK;
}

static lt_status parse_classes(subset_manifest *m, char **tokens, int n)
{
    for (int i = 0; i < n; i++) {
        if (strlen(tokens[i]) != 1 || tokens[i][0] < '0' || tokens[i][0] > '9')
            return bad_line(m, "classes must be CIFAR-10 class ids 0 to 9");
        unsigned bit = 1u << (tokens[i][0] - '0');
        if (m->classes & bit)
            return bad_line(m, "a class is listed twice");
        m->classes |= bit;
    }
    return LT_OK;
}

static lt_status parse_split(subset_manifest *m, subset_split *s, char **tokens)
{
    if (!all_of(tokens[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", 1,
                MANIFEST_FILE_MAX) || tokens[0][0] == '.')
        return bad_line(m, "the file must be a plain name in this folder (letters, digits, . _ "
                           "-, not starting with '.', at most 64 characters)");
    if (!all_of(tokens[1], "0123456789", 1, 7) || atol(tokens[1]) < 1 ||
        atol(tokens[1]) > LT_CIFAR_MAX_RECORDS)
        return bad_line(m, "the record count must be a whole number from 1 to 1000000");
    if (!all_of(tokens[2], "0123456789abcdef", LT_MD5_HEX_LEN, LT_MD5_HEX_LEN))
        return bad_line(m, "the checksum must be 32 lowercase hex digits (an MD5)");
    snprintf(s->file, sizeof s->file, "%s", tokens[0]);
    s->count = (int)atol(tokens[1]);
    snprintf(s->md5, sizeof s->md5, "%s", tokens[2]);
    return LT_OK;
}

/* One line, split into tokens in place. */
static lt_status parse_manifest_line(subset_manifest *m, char *line)
{
    if (line[strspn(line, " \t")] == '#')
        return LT_OK; /* a comment, free text */
    char *tokens[MANIFEST_MAX_TOKENS];
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(line, " \t", &save); p != NULL;
         p = strtok_r(NULL, " \t", &save)) {
        if (n == MANIFEST_MAX_TOKENS)
            return bad_line(m, "too many words");
        tokens[n++] = p;
    }
    if (n == 0)
        return LT_OK;
    if (!m->seen_header) {
        if (n != 2 || strcmp(tokens[0], "ltbench-cifar10-subset") != 0 ||
            strcmp(tokens[1], "1") != 0)
            return bad_line(m, "expected the header 'ltbench-cifar10-subset 1'");
        m->seen_header = 1;
        return LT_OK;
    }
    const char *key = tokens[0];
    if (strcmp(key, "name") == 0 && n == 2 && !m->seen_name) {
        m->seen_name = 1;
        return parse_name(m, tokens[1]);
    }
    if (strcmp(key, "classes") == 0 && n >= 2 && n <= 1 + LT_CIFAR_CLASSES && !m->seen_classes) {
        m->seen_classes = 1;
        return parse_classes(m, tokens + 1, n - 1);
    }
    for (int s = 0; s < SPLITS; s++)
        if (strcmp(key, split_names[s]) == 0 && n == 4 && !m->split[s].seen) {
            m->split[s].seen = 1;
            return parse_split(m, &m->split[s], tokens + 1);
        }
    return bad_line(m, "expected 'name NAME', 'classes ID...', 'train FILE COUNT MD5' or 'test "
                       "FILE COUNT MD5', each once");
}

static lt_status read_manifest(subset_manifest *m, const char *path)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    char text[MANIFEST_MAX_BYTES + 2];
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    size_t len = fread(text, 1, MANIFEST_MAX_BYTES + 1, f);
    int failed = ferror(f);
    int saved_errno = errno;
    fclose(f);
    if (failed)
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(saved_errno));
    if (len > MANIFEST_MAX_BYTES)
        return lt_fail(LT_E_INPUT, "%s: larger than %d bytes, expected a short subset manifest",
                       path, MANIFEST_MAX_BYTES);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (!(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)))
            return lt_fail(LT_E_INPUT, "%s: byte %zu is 0x%02x, expected a text manifest "
                                       "(printable ASCII lines)", path, i, c);
    }
    text[len] = '\0';
    for (char *line = text; line != NULL;) {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        m->line++;
        LT_TRY(parse_manifest_line(m, line));
        line = next;
    }
    if (!m->seen_header || !m->seen_name || !m->seen_classes || !m->split[SPLIT_TRAIN].seen ||
        !m->split[SPLIT_TEST].seen)
        return lt_fail(LT_E_INPUT, "%s: incomplete subset manifest: expected the header "
                                   "'ltbench-cifar10-subset 1' and the lines name, classes, "
                                   "train and test", path);
    if (strcmp(m->split[SPLIT_TRAIN].file, m->split[SPLIT_TEST].file) == 0)
        return lt_fail(LT_E_INPUT, "%s: train and test name the same file '%s', expected two "
                                   "disjoint files", path, m->split[SPLIT_TRAIN].file);
    return LT_OK;
}

/* ---- converted subsets: the data --------------------------------------- */

static lt_status load_subset_split(lt_image_set *out, const subset_manifest *m, int s,
                                   const char *dir)
{
    const subset_split *want = &m->split[s];
    char path[PATH_LEN];
    LT_TRY(join(path, dir, want->file));
    if (!is_file(path)) {
        char what[PATH_LEN + 128];
        snprintf(what, sizeof what, "missing %s, which the %s manifest lists", want->file,
                 LT_CIFAR_SUBSET_MANIFEST);
        return cifar_missing(dir, what);
    }
    int records;
    LT_TRY(lt_cifar_records(&records, path));
    if (records != want->count)
        return lt_fail(LT_E_INPUT, "%s: %d CIFAR-10 records, expected %d as %s/%s says", path,
                       records, want->count, dir, LT_CIFAR_SUBSET_MANIFEST);
    unsigned char digest[LT_MD5_BYTES];
    char hex[LT_MD5_HEX_LEN + 1];
    LT_TRY(lt_md5_file(digest, path));
    if (strcmp(lt_md5_hex(hex, digest), want->md5) != 0)
        return lt_fail(LT_E_INPUT, "%s: MD5 %s, expected %s as %s/%s says (damaged or "
                                   "replaced; convert it again)", path, hex, want->md5, dir,
                       LT_CIFAR_SUBSET_MANIFEST);
    LT_TRY(set_alloc(out, m->name, split_names[s], records, LT_CIFAR_SIDE, LT_CIFAR_SIDE,
                     LT_CIFAR_CHANNELS));
    LT_TRY(lt_cifar_read_into(out->pixels, out->labels, records, path));
    for (int i = 0; i < records; i++)
        if (!(m->classes >> out->labels[i] & 1u))
            return lt_fail(LT_E_INPUT, "%s: record %d has label %d, which the %s manifest does "
                                       "not list among its classes", path, i + 1,
                           out->labels[i], LT_CIFAR_SUBSET_MANIFEST);
    return LT_OK;
}

lt_status lt_images_load_cifar10(lt_image_set *train, lt_image_set *test, const char *dir)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (dir == NULL)
        dir = LT_CIFAR10_DIR;
    char manifest_path[PATH_LEN];
    LT_TRY(join(manifest_path, dir, LT_CIFAR_SUBSET_MANIFEST));
    lt_status status;
    if (is_file(manifest_path)) {
        subset_manifest m;
        status = read_manifest(&m, manifest_path);
        if (status == LT_OK)
            status = load_subset_split(train, &m, SPLIT_TRAIN, dir);
        if (status == LT_OK)
            status = load_subset_split(test, &m, SPLIT_TEST, dir);
    } else {
        status = load_cifar_official(train, test, dir);
    }
    if (status != LT_OK) {
        lt_images_free(train);
        lt_images_free(test);
    }
    return status;
}

/* ---- fixed subsets ------------------------------------------------------ */

static lt_status check_take(const lt_image_set *src, int n)
{
    if (n < 1 || n > src->count)
        return lt_fail(LT_E_USAGE, "asked for %d images of %s %s, which holds %d (expected 1 to "
                                   "%d)", n, src->name, src->split, src->count, src->count);
    return LT_OK;
}

/* Copies the images src[index[i]] (or src[i] if index is NULL), i < n. */
static lt_status take(lt_image_set *out, const lt_image_set *src, int n, const int *index)
{
    LT_TRY(set_alloc(out, src->name, src->split, n, src->height, src->width, src->channels));
    out->full_count = src->full_count;
    size_t image = (size_t)lt_images_seq_len(src);
    for (int i = 0; i < n; i++) {
        int from = index != NULL ? index[i] : i;
        memcpy(out->pixels + (size_t)i * image, src->pixels + (size_t)from * image, image);
        out->labels[i] = src->labels[from];
    }
    return LT_OK;
}

lt_status lt_images_first(lt_image_set *out, const lt_image_set *src, int n)
{
    memset(out, 0, sizeof *out);
    LT_TRY(check_take(src, n));
    return take(out, src, n, NULL);
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

lt_status lt_images_sample(lt_image_set *out, const lt_image_set *src, int n, uint64_t seed)
{
    memset(out, 0, sizeof *out);
    LT_TRY(check_take(src, n));
    int *index;
    LT_TRY(lt_mem_alloc((void **)&index, (size_t)src->count * sizeof *index, "sample indices"));
    for (int i = 0; i < src->count; i++)
        index[i] = i;
    /* The first n steps of a Fisher-Yates shuffle: a uniform n-subset. */
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    for (int i = 0; i < n; i++) {
        int j = i + (int)lt_rng_below(&rng, (uint64_t)(src->count - i));
        int t = index[i];
        index[i] = index[j];
        index[j] = t;
    }
    qsort(index, (size_t)n, sizeof *index, compare_int);
    lt_status status = take(out, src, n, index);
    lt_mem_free(index);
    return status;
}

void lt_images_locate(const char *dataset, const char **dir, const char **fetch,
                      int *fallback)
{
    int mnist = strcmp(dataset, "mnist") == 0;
    *fallback = 0;
    *fetch = mnist ? LT_MNIST_FETCH : LT_CIFAR10_CATDOG_FETCH;
    *dir = mnist ? LT_MNIST_DIR : LT_CIFAR10_DIR;
    if (!mnist && !is_dir(*dir) && is_dir(LT_CIFAR10_CATDOG_DIR)) {
        *dir = LT_CIFAR10_CATDOG_DIR;
        *fallback = 1;
    }
    if (!is_dir(*dir))
        *dir = NULL;
}

lt_status lt_images_load(lt_image_set *train, lt_image_set *test, const char *dataset,
                         const char *dir, char *note, size_t size)
{
    int mnist = strcmp(dataset, "mnist") == 0, fallback = 0;
    const char *fetch;
    note[0] = '\0';
    if (dir == NULL) {
        lt_images_locate(dataset, &dir, &fetch, &fallback);
        if (fallback)
            snprintf(note, size, "no %s: using %s", LT_CIFAR10_DIR, LT_CIFAR10_CATDOG_DIR);
    }
    return mnist ? lt_images_load_mnist(train, test, dir)
                 : lt_images_load_cifar10(train, test, dir);
}

lt_status lt_images_data_name(char name[LT_IMAGES_NAME_MAX], const char *dataset,
                              const char *dir)
{
    snprintf(name, LT_IMAGES_NAME_MAX, "%s", dataset);
    if (strcmp(dataset, "mnist") == 0)
        return LT_OK;
    if (dir == NULL) {
        const char *fetch;
        int fallback;
        lt_images_locate(dataset, &dir, &fetch, &fallback);
        if (dir == NULL)
            return LT_OK; /* loading says what is missing */
    }
    char manifest_path[PATH_LEN];
    LT_TRY(join(manifest_path, dir, LT_CIFAR_SUBSET_MANIFEST));
    if (!is_file(manifest_path))
        return LT_OK;
    subset_manifest m;
    LT_TRY(read_manifest(&m, manifest_path));
    snprintf(name, LT_IMAGES_NAME_MAX, "%s", m.name);
    return LT_OK;
}
