#include "io/npy.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "io/atomic.h"
#include "io/read.h"

/* "\x93NUMPY", major, minor, then the header length (uint16, little-endian). */
#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREFIX_LEN 10
/* numpy aligns the data start to 64 bytes and leaves room after the header
 * so the first axis can grow to 21 digits; we do the same to match it. */
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21
/* Elements converted per chunk when the file's and the caller's types differ. */
#define NPY_CHUNK 4096

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static void swap_bytes(void *data, size_t count, size_t elem_size)
{
    unsigned char *p = data;
    for (size_t i = 0; i < count; i++, p += elem_size)
        for (size_t a = 0, b = elem_size - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* "(2, 3)", "(5,)" or "()", as Python writes a tuple. */
static void format_shape(char *buf, size_t size, int ndim, const long long *shape)
{
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i > 0 ? ", %lld" : "%lld", shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, ndim == 1 ? ",)" : ")");
}

/* Elements in the shape, or -1 if they or their bytes overflow. */
static long long checked_count(int ndim, const long long *shape, size_t elem_size)
{
    long long limit = (long long)((SIZE_MAX < (size_t)LLONG_MAX ? SIZE_MAX : (size_t)LLONG_MAX) /
                                  elem_size);
    long long count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return -1;
        if (shape[i] > 0 && count > limit / shape[i])
            return -1;
        count *= shape[i];
    }
    return count;
}

long long lt_npy_count(const lt_npy *npy)
{
    long long count = 1;
    for (int i = 0; i < npy->ndim; i++)
        count *= npy->shape[i];
    return count;
}

void lt_npy_free(lt_npy *npy)
{
    lt_mem_free(npy->data);
    lt_mem_free(npy->data_f64);
    memset(npy, 0, sizeof *npy);
}

/* ---- header dict parsing --------------------------------------------- */

typedef struct npy_header {
    const char *path;
    const char *text;
    size_t len;
    size_t pos;
} npy_header;

static lt_status malformed(const npy_header *h, const char *expected)
{
    char found[16];
    if (h->pos >= h->len)
        snprintf(found, sizeof found, "the end");
    else if (isprint((unsigned char)h->text[h->pos]))
        snprintf(found, sizeof found, "'%c'", h->text[h->pos]);
    else
        snprintf(found, sizeof found, "byte 0x%02x", (unsigned char)h->text[h->pos]);
    return lt_fail(LT_E_INPUT, "%s: malformed .npy header at offset %zu: expected %s, found %s",
                   h->path, NPY_PREFIX_LEN + h->pos, expected, found);
}

static void skip_space(npy_header *h)
{
    while (h->pos < h->len && (h->text[h->pos] == ' ' || h->text[h->pos] == '\t'))
        h->pos++;
}

/* Consumes `c` after optional spaces; returns 1 if it was there. */
static int accept(npy_header *h, char c)
{
    skip_space(h);
    if (h->pos < h->len && h->text[h->pos] == c) {
        h->pos++;
        return 1;
    }
    return 0;
}

static lt_status expect(npy_header *h, char c)
{
    if (accept(h, c))
        return LT_OK;
    char what[8];
    snprintf(what, sizeof what, "'%c'", c);
    return malformed(h, what);
}

/* A Python string literal in single or double quotes, without escapes. */
static lt_status parse_string(npy_header *h, char *out, size_t size)
{
    skip_space(h);
    if (h->pos >= h->len || (h->text[h->pos] != '\'' && h->text[h->pos] != '"'))
        return malformed(h, "a quoted string");
    char quote = h->text[h->pos++];
    size_t n = 0;
    while (h->pos < h->len && h->text[h->pos] != quote) {
        if (n + 1 >= size)
            return malformed(h, "a short string");
        out[n++] = h->text[h->pos++];
    }
    out[n] = '\0';
    return expect(h, quote);
}

static lt_status parse_bool(npy_header *h, int *value)
{
    skip_space(h);
    const char *rest = h->text + h->pos;
    size_t left = h->len - h->pos;
    if (left >= 4 && memcmp(rest, "True", 4) == 0) {
        *value = 1;
        h->pos += 4;
    } else if (left >= 5 && memcmp(rest, "False", 5) == 0) {
        *value = 0;
        h->pos += 5;
    } else {
        return malformed(h, "True or False");
    }
    return LT_OK;
}

static lt_status parse_size(npy_header *h, long long *value)
{
    skip_space(h);
    if (h->pos < h->len && h->text[h->pos] == '-')
        return lt_fail(LT_E_INPUT, "%s: negative size in the .npy shape, expected sizes >= 0",
                       h->path);
    if (h->pos >= h->len || !isdigit((unsigned char)h->text[h->pos]))
        return malformed(h, "a size");
    long long v = 0;
    while (h->pos < h->len && isdigit((unsigned char)h->text[h->pos])) {
        int digit = h->text[h->pos++] - '0';
        if (v > (LLONG_MAX - digit) / 10)
            return lt_fail(LT_E_INPUT, "%s: a size in the .npy shape overflows 64 bits", h->path);
        v = v * 10 + digit;
    }
    *value = v;
    return LT_OK;
}

static lt_status parse_shape(npy_header *h, lt_npy *out)
{
    LT_TRY(expect(h, '('));
    out->ndim = 0;
    while (!accept(h, ')')) {
        if (out->ndim == LT_NPY_MAX_DIMS)
            return lt_fail(LT_E_INPUT, "%s: .npy shape has more than %d dimensions", h->path,
                           LT_NPY_MAX_DIMS);
        LT_TRY(parse_size(h, &out->shape[out->ndim++]));
        if (!accept(h, ',')) {
            LT_TRY(expect(h, ')'));
            break;
        }
    }
    return LT_OK;
}

/* The header dict: 'descr', 'fortran_order' and 'shape', each exactly once,
 * in any order, then only padding. */
static lt_status parse_dict(npy_header *h, lt_npy *out)
{
    char descr[16] = "";
    int fortran_order = 0;
    int seen_descr = 0, seen_order = 0, seen_shape = 0;
    LT_TRY(expect(h, '{'));
    while (!accept(h, '}')) {
        char key[32];
        LT_TRY(parse_string(h, key, sizeof key));
        LT_TRY(expect(h, ':'));
        if (strcmp(key, "descr") == 0 && !seen_descr) {
            LT_TRY(parse_string(h, descr, sizeof descr));
            seen_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !seen_order) {
            LT_TRY(parse_bool(h, &fortran_order));
            seen_order = 1;
        } else if (strcmp(key, "shape") == 0 && !seen_shape) {
            LT_TRY(parse_shape(h, out));
            seen_shape = 1;
        } else {
            return lt_fail(LT_E_INPUT,
                           "%s: malformed .npy header: key '%s' repeated or unknown, expected "
                           "'descr', 'fortran_order' and 'shape' once each",
                           h->path, key);
        }
        if (!accept(h, ',')) {
            LT_TRY(expect(h, '}'));
            break;
        }
    }
    while (h->pos < h->len && isspace((unsigned char)h->text[h->pos]))
        h->pos++;
    if (h->pos < h->len)
        return malformed(h, "only padding after the header dict");
    if (!seen_descr || !seen_order || !seen_shape)
        return lt_fail(LT_E_INPUT,
                       "%s: malformed .npy header: expected keys 'descr', 'fortran_order' and "
                       "'shape', found %s%s%s",
                       h->path, seen_descr ? "'descr' " : "", seen_order ? "'fortran_order' " : "",
                       seen_shape ? "'shape'" : "");
    if (fortran_order)
        return lt_fail(LT_E_INPUT, "%s: .npy array is in Fortran order, expected C order "
                                   "(fortran_order False)", h->path);
    if (strcmp(descr, "<f4") == 0)
        out->is_f64 = 0;
    else if (strcmp(descr, "<f8") == 0)
        out->is_f64 = 1;
    else
        return lt_fail(LT_E_INPUT, "%s: .npy dtype '%s', expected '<f4' or '<f8'", h->path, descr);
    return LT_OK;
}

/* ---- reading --------------------------------------------------------- */

/* Reads magic, version and header of an open file into `out` (shape and
 * dtype) and returns the header's total length in *data_offset. */
static lt_status read_header(lt_npy *out, size_t *data_offset, FILE *f, const char *path)
{
    unsigned char prefix[NPY_PREFIX_LEN];
    size_t got = fread(prefix, 1, sizeof prefix, f);
    if (got < NPY_MAGIC_LEN || memcmp(prefix, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return lt_fail(LT_E_INPUT, "%s: not a .npy file, expected it to start with \\x93NUMPY",
                       path);
    if (got < NPY_PREFIX_LEN)
        return lt_fail(LT_E_INPUT, "%s: .npy file ends inside its header", path);
    if (prefix[6] != 1 || prefix[7] != 0)
        return lt_fail(LT_E_INPUT, "%s: .npy format version %d.%d, expected 1.0", path,
                       prefix[6], prefix[7]);
    size_t header_len = (size_t)prefix[8] | (size_t)prefix[9] << 8;
    char *text;
    LT_TRY(lt_mem_alloc((void **)&text, header_len, path));
    lt_status status = LT_OK;
    if (fread(text, 1, header_len, f) != header_len) {
        status = lt_fail(LT_E_INPUT, "%s: .npy file ends inside its header (%zu bytes promised)",
                         path, header_len);
    } else {
        npy_header h = {.path = path, .text = text, .len = header_len};
        status = parse_dict(&h, out);
    }
    lt_mem_free(text);
    *data_offset = NPY_PREFIX_LEN + header_len;
    return status;
}

/* Reads `count` little-endian elements of `file_size` bytes into `dest`,
 * whose elements are `dest_size` bytes (4: float, 8: double). */
static lt_status read_values(void *dest, size_t dest_size, size_t count, size_t file_size,
                             FILE *f, const char *path)
{
    int swap = !host_is_little_endian();
    if (dest_size == file_size) {
        if (fread(dest, file_size, count, f) != count)
            return lt_fail(LT_E_INPUT, "%s: .npy data truncated", path);
        if (swap)
            swap_bytes(dest, count, file_size);
        return LT_OK;
    }
    unsigned char chunk[NPY_CHUNK * 8];
    for (size_t done = 0; done < count;) {
        size_t n = count - done < NPY_CHUNK ? count - done : NPY_CHUNK;
        if (fread(chunk, file_size, n, f) != n)
            return lt_fail(LT_E_INPUT, "%s: .npy data truncated", path);
        if (swap)
            swap_bytes(chunk, n, file_size);
        for (size_t i = 0; i < n; i++, done++) {
            if (file_size == 8) { /* narrowing: rounds to nearest, out of range -> inf */
                double v;
                memcpy(&v, chunk + 8 * i, 8);
                ((float *)dest)[done] = (float)v;
            } else { /* widening is exact */
                float v;
                memcpy(&v, chunk + 4 * i, 4);
                ((double *)dest)[done] = (double)v;
            }
        }
    }
    return LT_OK;
}

/* Checks the file holds exactly the bytes the shape needs, before anything
 * large is allocated. */
static lt_status check_data_size(const lt_npy *npy, long long count, size_t data_offset, FILE *f,
                                 const char *path)
{
    char shape[256];
    format_shape(shape, sizeof shape, npy->ndim, npy->shape);
    const char *dtype = npy->is_f64 ? "<f8" : "<f4";
    if (count < 0)
        return lt_fail(LT_E_INPUT, "%s: .npy shape %s of '%s' is too large to address", path,
                       shape, dtype);
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return LT_OK; /* not seekable: the reads themselves will tell */
    unsigned long long need = (unsigned long long)count * (npy->is_f64 ? 8u : 4u);
    unsigned long long have =
        (unsigned long long)st.st_size > data_offset ? (unsigned long long)st.st_size - data_offset
                                                     : 0;
    if (have < need)
        return lt_fail(LT_E_INPUT, "%s: .npy data truncated: shape %s of '%s' needs %llu bytes, "
                                   "found %llu", path, shape, dtype, need, have);
    if (have > need)
        return lt_fail(LT_E_INPUT, "%s: %llu unexpected bytes after the .npy data (shape %s of "
                                   "'%s' needs %llu)", path, have - need, shape, dtype, need);
    return LT_OK;
}

static lt_status read_npy(lt_npy *out, const char *path, int keep_f64)
{
    memset(out, 0, sizeof *out);
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    size_t data_offset = 0;
    lt_status status = read_header(out, &data_offset, f, path);
    size_t file_size = out->is_f64 ? 8 : 4;
    size_t dest_size = keep_f64 ? 8 : 4;
    long long count = checked_count(out->ndim, out->shape, file_size > dest_size ? file_size
                                                                                 : dest_size);
    if (status == LT_OK)
        status = check_data_size(out, count, data_offset, f, path);
    void *dest = NULL;
    if (status == LT_OK)
        status = lt_mem_alloc(&dest, (size_t)count * dest_size, path);
    if (status == LT_OK)
        status = read_values(dest, dest_size, (size_t)count, file_size, f, path);
    if (status == LT_OK && fgetc(f) != EOF)
        status = lt_fail(LT_E_INPUT, "%s: unexpected bytes after the .npy data", path);
    if (status == LT_OK && ferror(f))
        status = lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (status != LT_OK) {
        lt_mem_free(dest);
        memset(out, 0, sizeof *out);
        return status;
    }
    if (keep_f64)
        out->data_f64 = dest;
    else
        out->data = dest;
    return LT_OK;
}

lt_status lt_npy_read(lt_npy *out, const char *path) { return read_npy(out, path, 0); }

lt_status lt_npy_read_f64(lt_npy *out, const char *path) { return read_npy(out, path, 1); }

/* ---- writing --------------------------------------------------------- */

/* Writes a whole .npy into an open file; the caller commits it. */
static lt_status write_npy_into(lt_atomic_file *opened, const char *path, const void *data,
                                size_t elem_size, int ndim, const long long *shape)
{
    if (ndim < 0 || ndim > LT_NPY_MAX_DIMS || (ndim > 0 && shape == NULL))
        return lt_fail(LT_E_INPUT, "%s: .npy arrays have 0 to %d dimensions, got %d", path,
                       LT_NPY_MAX_DIMS, ndim);
    long long count = checked_count(ndim, shape, elem_size);
    if (count < 0)
        return lt_fail(LT_E_INPUT, "%s: .npy shape has a negative or overflowing size", path);
    if (count > 0 && data == NULL)
        return lt_fail(LT_E_INPUT, "%s: no data for %lld elements", path, count);

    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, ndim, shape);
    char header[512];
    int n = snprintf(header, sizeof header,
                     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     elem_size == 8 ? "<f8" : "<f4", shape_text);
    if (ndim > 0) {
        char first[24];
        int digits = snprintf(first, sizeof first, "%lld", shape[0]);
        n += snprintf(header + n, sizeof header - (size_t)n, "%*s", NPY_GROWTH_DIGITS - digits, "");
    }
    /* Spaces then '\n' so the data starts on a 64-byte boundary. */
    int pad = NPY_ALIGN - (NPY_PREFIX_LEN + n + 1) % NPY_ALIGN;
    n += snprintf(header + n, sizeof header - (size_t)n, "%*s\n", pad, "");
    unsigned char prefix[NPY_PREFIX_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                            (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};

    FILE *f = opened->f;
    if (fwrite(prefix, 1, sizeof prefix, f) != sizeof prefix ||
        fwrite(header, 1, (size_t)n, f) != (size_t)n)
        return lt_fail_write(path, errno);
    if (host_is_little_endian()) {
        if (fwrite(data, elem_size, (size_t)count, f) != (size_t)count)
            return lt_fail_write(path, errno);
    } else {
        unsigned char chunk[NPY_CHUNK * 8];
        for (size_t done = 0; done < (size_t)count;) {
            size_t m = (size_t)count - done < NPY_CHUNK ? (size_t)count - done : NPY_CHUNK;
            memcpy(chunk, (const unsigned char *)data + done * elem_size, m * elem_size);
            swap_bytes(chunk, m, elem_size);
            if (fwrite(chunk, elem_size, m, f) != m)
                return lt_fail_write(path, errno);
            done += m;
        }
    }
    return LT_OK; /* what stays buffered is checked by the commit */
}

static lt_status write_npy(const char *path, const void *data, size_t elem_size, int ndim,
                           const long long *shape)
{
    lt_atomic_file af;
    LT_TRY(lt_atomic_open(&af, path));
    lt_status status = write_npy_into(&af, path, data, elem_size, ndim, shape);
    if (status != LT_OK) {
        lt_atomic_abort(&af);
        return status;
    }
    return lt_atomic_commit(&af);
}

lt_status lt_npy_write_f32_into(lt_atomic_file *af, const float *data, int ndim,
                                const long long *shape)
{
    return write_npy_into(af, af->path, data, sizeof(float), ndim, shape);
}

lt_status lt_npy_write_f32(const char *path, const float *data, int ndim, const long long *shape)
{
    return write_npy(path, data, sizeof(float), ndim, shape);
}

lt_status lt_npy_write_f64(const char *path, const double *data, int ndim, const long long *shape)
{
    return write_npy(path, data, sizeof(double), ndim, shape);
}
