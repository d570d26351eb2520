/* Checkpoint files (the format is in checkpoint.h): the writer, then the
 * reader that verifies a whole file. One file because both sides share the
 * format's sizes, the name rule, the crc and the zlib plumbing (tracked work
 * areas, buffers fed in pieces): together they define the format once. */
#include "io/checkpoint.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/mem.h"
#include "io/atomic.h"
#include "io/bytes.h"

static const unsigned char ckpt_magic[8] = {'L', 'T', 'C', 'K', 'P', 'T', 0x00, 0x01};

#define FILE_HEADER_BYTES 16 /* magic, version, section count */
/* name length, raw length, packed length, data crc, record crc */
#define SECTION_FIXED_BYTES (4 + 8 + 8 + 4 + 4)
#define SECTION_MAX_HEADER (SECTION_FIXED_BYTES + LT_CKPT_MAX_NAME)
/* The smallest possible section: a one-character name and no packed data. */
#define SECTION_MIN_BYTES (SECTION_FIXED_BYTES + 1)
/* DEFLATE cannot expand data by more than 1032:1, so a raw length beyond
 * that is a corrupt field and must not be allocated. */
#define DEFLATE_MAX_RATIO 1032
/* zlib counts in uInt; large buffers are fed in pieces of this size. */
#define ZLIB_PIECE ((size_t)1 << 30)
/* Compressed bytes staged per fwrite. */
#define WRITE_CHUNK ((size_t)256 * 1024)

static uint32_t crc_of(const void *data, size_t bytes)
{
    return (uint32_t)crc32_z(0, data, bytes);
}

/* zlib's work areas come from the tracked allocator too. */
static voidpf tracked_zalloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    void *block;
    if (lt_mem_alloc(&block, (size_t)items * size, "zlib work area") != LT_OK)
        return Z_NULL;
    return block;
}

static void tracked_zfree(voidpf opaque, voidpf block)
{
    (void)opaque;
    lt_mem_free(block);
}

/* Hands zlib the next piece of a buffer once it has used up the last one. */
static void refill(uInt *avail, size_t *left)
{
    if (*avail == 0 && *left > 0) {
        size_t piece = *left < ZLIB_PIECE ? *left : ZLIB_PIECE;
        *avail = (uInt)piece;
        *left -= piece;
    }
}

static void use_tracked_memory(z_stream *zs)
{
    memset(zs, 0, sizeof *zs);
    zs->zalloc = tracked_zalloc;
    zs->zfree = tracked_zfree;
}

/* Printable ASCII without spaces keeps names safe to show in messages. */
static int valid_name(const char *name, size_t len)
{
    if (len == 0 || len > LT_CKPT_MAX_NAME)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (name[i] <= ' ' || name[i] > '~')
            return 0;
    return 1;
}

/* Writes the section header (name length through record crc) into buf and
 * returns its length. The record crc covers the header bytes before it and
 * then the packed data, whose own crc is `packed_crc`. */
static size_t encode_section_header(unsigned char *buf, const char *name, uint64_t raw_bytes,
                                    uint64_t packed_bytes, uint32_t data_crc, uint32_t packed_crc)
{
    size_t len = strlen(name);
    lt_put_u32(buf, (uint32_t)len);
    memcpy(buf + 4, name, len);
    unsigned char *p = buf + 4 + len;
    lt_put_u64(p, raw_bytes);
    lt_put_u64(p + 8, packed_bytes);
    lt_put_u32(p + 16, data_crc);
    uint32_t record_crc = (uint32_t)crc32_combine(crc_of(buf, 4 + len + 20), packed_crc,
                                                  (z_off_t)packed_bytes);
    lt_put_u32(p + 20, record_crc);
    return 4 + len + 24;
}

/* ---- writer ---- */

typedef char section_name[LT_CKPT_MAX_NAME + 1];

struct lt_ckpt_writer {
    lt_atomic_file file;
    z_stream zs;
    int zs_ready;
    unsigned char *chunk;   /* (WRITE_CHUNK) */
    section_name *names;    /* (names_capacity) names added so far */
    size_t names_capacity;
    uint32_t count;
    lt_status broken;       /* a section failed half-written: commit refuses, as this */
};

static lt_status write_bytes(lt_ckpt_writer *w, const void *data, size_t bytes)
{
    if (bytes > 0 && fwrite(data, 1, bytes, w->file.f) != bytes)
        return lt_fail_write(w->file.path, errno);
    return LT_OK;
}

static lt_status seek_to(lt_ckpt_writer *w, off_t offset, int whence)
{
    if (fseeko(w->file.f, offset, whence) != 0)
        return lt_fail_write(w->file.path, errno);
    return LT_OK;
}

static void writer_release(lt_ckpt_writer *w)
{
    if (w->zs_ready)
        deflateEnd(&w->zs);
    lt_mem_free(w->chunk);
    lt_mem_free(w->names);
    lt_mem_free(w);
}

lt_status lt_ckpt_writer_open(lt_ckpt_writer **out, const char *path)
{
    *out = NULL;
    lt_ckpt_writer *w;
    LT_TRY(lt_mem_calloc((void **)&w, sizeof *w, "checkpoint writer"));
    lt_status status = lt_mem_alloc((void **)&w->chunk, WRITE_CHUNK, "checkpoint write buffer");
    if (status != LT_OK) {
        writer_release(w);
        return status;
    }
    use_tracked_memory(&w->zs);
    /* Huffman coding only: on float parameters string matching finds almost
     * nothing, and it ran 2.4x faster than level 1 (82 vs 34 MB/s on normal
     * floats) for the same size (93% of raw, the exponent bytes' entropy).
     * Negative window bits: raw DEFLATE. */
    int zstatus = deflateInit2(&w->zs, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_HUFFMAN_ONLY);
    if (zstatus != Z_OK) {
        writer_release(w);
        /* zlib's allocation goes through the tracker: a refusal there is the
         * budget's (or the system's), and lt_last_error says which. */
        if (zstatus == Z_MEM_ERROR)
            return lt_fail(LT_E_BUDGET, "cannot write %s: %s", path, lt_last_error());
        return lt_fail(LT_E_INTERNAL, "cannot write %s: zlib could not start (%d)", path,
                       zstatus);
    }
    w->zs_ready = 1;
    status = lt_atomic_open(&w->file, path);
    if (status != LT_OK) {
        writer_release(w);
        return status;
    }
    unsigned char header[FILE_HEADER_BYTES];
    memcpy(header, ckpt_magic, 8);
    lt_put_u32(header + 8, LT_CKPT_VERSION);
    lt_put_u32(header + 12, 0); /* section count, patched by commit */
    status = write_bytes(w, header, sizeof header);
    if (status != LT_OK) {
        lt_ckpt_writer_abort(w);
        return status;
    }
    *out = w;
    return LT_OK;
}

/* Names a writer holds before it must grow (planned by
 * lt_ckpt_writer_bytes). */
#define FIRST_NAMES 16

/* zlib's work areas for the writer's settings, measured by starting it
 * once through the tracked allocator (they depend on zlib's version). */
static size_t deflate_bytes(void)
{
    static size_t measured;
    if (measured == 0) {
        z_stream zs;
        use_tracked_memory(&zs);
        size_t before = lt_mem_current();
        if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_HUFFMAN_ONLY) == Z_OK) {
            measured = lt_mem_current() - before;
            deflateEnd(&zs);
        }
    }
    return measured;
}

size_t lt_ckpt_writer_bytes(void)
{
    return lt_mem_rounded(sizeof(lt_ckpt_writer)) + lt_mem_rounded(WRITE_CHUNK) +
           lt_mem_rounded(FIRST_NAMES * sizeof(section_name)) + deflate_bytes();
}

static lt_status remember_name(lt_ckpt_writer *w, const char *name)
{
    size_t len = strlen(name);
    if (!valid_name(name, len))
        return lt_fail(LT_E_USAGE,
                       "checkpoint %s: section name '%.300s' must be 1 to %d printable characters "
                       "without spaces",
                       w->file.path, name, LT_CKPT_MAX_NAME);
    for (uint32_t i = 0; i < w->count; i++)
        if (strcmp(w->names[i], name) == 0)
            return lt_fail(LT_E_USAGE, "checkpoint %s: section '%s' added twice", w->file.path,
                           name);
    if (w->count == UINT32_MAX)
        return lt_fail(LT_E_USAGE, "checkpoint %s: too many sections", w->file.path);
    if (w->count == w->names_capacity) {
        size_t capacity = w->names_capacity > 0 ? 2 * w->names_capacity : FIRST_NAMES;
        section_name *grown;
        LT_TRY(lt_mem_alloc((void **)&grown, capacity * sizeof *grown, "checkpoint names"));
        if (w->count > 0)
            memcpy(grown, w->names, w->count * sizeof *grown);
        lt_mem_free(w->names);
        w->names = grown;
        w->names_capacity = capacity;
    }
    memcpy(w->names[w->count], name, len + 1);
    return LT_OK;
}

/* Streams `bytes` of data through DEFLATE into the file; *packed and
 * *packed_crc receive the compressed size and its crc32. */
static lt_status deflate_to_file(lt_ckpt_writer *w, const unsigned char *data, size_t bytes,
                                 uint64_t *packed, uint32_t *packed_crc)
{
    z_stream *zs = &w->zs;
    *packed = 0;
    *packed_crc = crc_of(NULL, 0);
    if (deflateReset(zs) != Z_OK)
        return lt_fail(LT_E_INTERNAL, "cannot write %s: zlib reset failed", w->file.path);
    size_t left = bytes;
    zs->next_in = (Bytef *)data;
    zs->avail_in = 0;
    int ret;
    do {
        refill(&zs->avail_in, &left);
        int flush = (left == 0) ? Z_FINISH : Z_NO_FLUSH;
        zs->next_out = w->chunk;
        zs->avail_out = (uInt)WRITE_CHUNK;
        ret = deflate(zs, flush);
        if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
            return lt_fail(LT_E_INTERNAL, "cannot write %s: zlib deflate failed (%d)",
                           w->file.path, ret);
        size_t produced = WRITE_CHUNK - zs->avail_out;
        LT_TRY(write_bytes(w, w->chunk, produced));
        *packed += produced;
        *packed_crc = (uint32_t)crc32_z(*packed_crc, w->chunk, produced);
    } while (ret != Z_STREAM_END);
    return LT_OK;
}

/* Writes one section whose name was accepted by remember_name. */
static lt_status write_section(lt_ckpt_writer *w, const char *name, const void *data,
                               size_t bytes)
{
    uint32_t data_crc = crc_of(data, bytes);
    /* The header goes first with a placeholder packed length, and is
     * rewritten once the compressed size is known. */
    off_t header_at = ftello(w->file.f);
    if (header_at < 0)
        return lt_fail_write(w->file.path, errno);
    unsigned char header[SECTION_MAX_HEADER];
    size_t header_bytes = encode_section_header(header, name, bytes, 0, data_crc, 0);
    LT_TRY(write_bytes(w, header, header_bytes));

    uint64_t packed;
    uint32_t packed_crc;
    LT_TRY(deflate_to_file(w, data, bytes, &packed, &packed_crc));

    encode_section_header(header, name, bytes, packed, data_crc, packed_crc);
    LT_TRY(seek_to(w, header_at, SEEK_SET));
    LT_TRY(write_bytes(w, header, header_bytes));
    return seek_to(w, 0, SEEK_END);
}

lt_status lt_ckpt_writer_add(lt_ckpt_writer *w, const char *name, const void *data, size_t bytes)
{
    LT_ASSERT(w != NULL && w->file.f != NULL && (data != NULL || bytes == 0));
    if (w->broken != LT_OK)
        return lt_fail(w->broken, "cannot write %s: an earlier section failed", w->file.path);
    LT_TRY(remember_name(w, name));
    lt_status status = write_section(w, name, data, bytes);
    if (status != LT_OK) {
        /* Half a section is in the file: only abort is left. */
        w->broken = status;
        return status;
    }
    w->count++;
    return LT_OK;
}

lt_status lt_ckpt_writer_commit(lt_ckpt_writer *w)
{
    LT_ASSERT(w != NULL && w->file.f != NULL);
    if (w->broken != LT_OK) {
        lt_status status = lt_fail(w->broken, "cannot write %s: an earlier section failed",
                                   w->file.path);
        lt_ckpt_writer_abort(w);
        return status;
    }
    unsigned char count[4];
    lt_put_u32(count, w->count);
    lt_status status = seek_to(w, 12, SEEK_SET);
    if (status == LT_OK)
        status = write_bytes(w, count, sizeof count);
    if (status != LT_OK) {
        lt_ckpt_writer_abort(w);
        return status;
    }
    status = lt_atomic_commit(&w->file);
    writer_release(w);
    return status;
}

void lt_ckpt_writer_abort(lt_ckpt_writer *w)
{
    if (w == NULL)
        return;
    lt_atomic_abort(&w->file);
    writer_release(w);
}

/* ---- reader ---- */

typedef struct ckpt_section {
    section_name name;
    size_t raw_bytes;
    size_t packed_at;    /* offset of the packed data in the file */
    size_t packed_bytes;
    uint32_t data_crc;
    size_t block_at;     /* offset of the raw data in the data block */
} ckpt_section;

struct lt_ckpt {
    char path[4096];
    const char *what;       /* "checkpoint", "speech cache": for messages */
    size_t count;
    ckpt_section *sections; /* (count) */
    unsigned char *block;   /* every section's raw data, each 64-byte aligned */
};

void lt_ckpt_free(lt_ckpt *ckpt)
{
    if (ckpt == NULL)
        return;
    lt_mem_free(ckpt->sections);
    lt_mem_free(ckpt->block);
    lt_mem_free(ckpt);
}

/* Reads the whole regular file at `path` into a tracked buffer. */
static lt_status load_file(unsigned char **out, size_t *size, const char *path,
                           const char *what)
{
    *out = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return lt_fail(LT_E_IO, "cannot read %s %s: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return lt_fail(LT_E_IO, "cannot read %s %s: not a regular file", what, path);
    }
    *size = (size_t)st.st_size;
    lt_status status = lt_mem_alloc((void **)out, *size, "checkpoint file");
    if (status == LT_OK && fread(*out, 1, *size, f) != *size) {
        status = lt_fail(LT_E_IO, "cannot read %s %s: %s", what, path,
                         ferror(f) ? strerror(errno) : "file shrank while reading");
        lt_mem_free(*out);
        *out = NULL;
    }
    fclose(f);
    return status;
}

/* Magic, version and a section count that fits in the file. */
static lt_status parse_file_header(size_t *count, const unsigned char *file, size_t size,
                                   const char *path, const char *what)
{
    size_t magic_seen = size < 8 ? size : 8;
    if (size == 0 || memcmp(file, ckpt_magic, magic_seen) != 0)
        return lt_fail(LT_E_INPUT, "%s: not an ltbench %s (%s)", path, what,
                       size == 0 ? "empty file" : "bad magic bytes");
    if (size < FILE_HEADER_BYTES)
        return lt_fail(LT_E_INPUT, "%s: truncated %s (%zu bytes, the header alone needs %d)",
                       path, what, size, FILE_HEADER_BYTES);
    uint32_t version = lt_get_u32(file + 8);
    if (version != LT_CKPT_VERSION)
        return lt_fail(LT_E_INPUT, "%s: unsupported %s format version %u (this ltbench "
                       "reads version %d)", path, what, version, LT_CKPT_VERSION);
    *count = lt_get_u32(file + 12);
    size_t room = (size - FILE_HEADER_BYTES) / SECTION_MIN_BYTES;
    if (*count > room)
        return lt_fail(LT_E_INPUT, "%s: truncated or corrupt %s: it declares %zu sections "
                       "but its %zu bytes hold at most %zu", path, what, *count, size, room);
    return LT_OK;
}

/* Parses section i's header at *pos and moves *pos past its packed data.
 * Every length is checked against the file before it is trusted. */
static lt_status parse_section(ckpt_section *s, size_t i, size_t *pos, const unsigned char *file,
                               size_t size, const char *path, const char *what)
{
    size_t at = *pos;
    if (size - at < 4)
        return lt_fail(LT_E_INPUT, "%s: truncated %s: it ends inside section #%zu's header",
                       path, what, i + 1);
    uint32_t name_len = lt_get_u32(file + at);
    if (name_len == 0 || name_len > LT_CKPT_MAX_NAME)
        return lt_fail(LT_E_INPUT, "%s: corrupt %s: section #%zu has a name length of %u "
                       "(expected 1 to %d)", path, what, i + 1, name_len, LT_CKPT_MAX_NAME);
    size_t header_bytes = SECTION_FIXED_BYTES + name_len;
    if (size - at < header_bytes)
        return lt_fail(LT_E_INPUT, "%s: truncated %s: it ends inside section #%zu's header",
                       path, what, i + 1);
    const unsigned char *fields = file + at + 4 + name_len;
    memcpy(s->name, file + at + 4, name_len);
    s->name[name_len] = '\0';
    if (!valid_name(s->name, name_len))
        return lt_fail(LT_E_INPUT, "%s: corrupt %s: section #%zu has an invalid name",
                       path, what, i + 1);
    uint64_t raw_bytes = lt_get_u64(fields);
    uint64_t packed_bytes = lt_get_u64(fields + 8);
    s->data_crc = lt_get_u32(fields + 16);
    size_t packed_at = at + header_bytes;
    if (packed_bytes > size - packed_at)
        return lt_fail(LT_E_INPUT, "%s: truncated %s: section #%zu ('%s') needs %llu "
                       "bytes of data but only %zu remain", path, what, i + 1, s->name,
                       (unsigned long long)packed_bytes, size - packed_at);
    /* One checksum over the header and the packed bytes catches damage
     * anywhere in the section, padding bits of the DEFLATE stream included,
     * before any length is used for more than staying inside the file. */
    uint32_t record_crc = crc_of(file + at, header_bytes - 4);
    record_crc = (uint32_t)crc32_z(record_crc, file + packed_at, (size_t)packed_bytes);
    if (record_crc != lt_get_u32(fields + 20))
        return lt_fail(LT_E_INPUT, "%s: corrupt %s: section #%zu ('%s') fails its CRC32 "
                       "check", path, what, i + 1, s->name);
    if (raw_bytes / DEFLATE_MAX_RATIO > packed_bytes)
        return lt_fail(LT_E_INPUT, "%s: corrupt %s: section '%s' claims %llu bytes from "
                       "%llu compressed bytes, beyond what DEFLATE can produce", path, what,
                       s->name, (unsigned long long)raw_bytes, (unsigned long long)packed_bytes);
    s->raw_bytes = (size_t)raw_bytes;
    s->packed_at = packed_at;
    s->packed_bytes = (size_t)packed_bytes;
    *pos = packed_at + s->packed_bytes;
    return LT_OK;
}

/* Inflates one section into dst, which has room for raw_bytes + 1: the
 * spare byte reveals data that decompresses to more than the header says. */
static lt_status inflate_section(z_stream *zs, unsigned char *dst, const ckpt_section *s,
                                 const unsigned char *file, const char *path)
{
    if (inflateReset(zs) != Z_OK)
        return lt_fail(LT_E_INTERNAL, "%s: zlib reset failed", path);
    size_t in_left = s->packed_bytes, out_left = s->raw_bytes + 1;
    zs->next_in = (Bytef *)(file + s->packed_at);
    zs->avail_in = 0;
    zs->next_out = dst;
    zs->avail_out = 0;
    int ret;
    do {
        refill(&zs->avail_in, &in_left);
        refill(&zs->avail_out, &out_left);
        ret = inflate(zs, Z_NO_FLUSH);
    } while (ret == Z_OK);

    size_t produced = s->raw_bytes + 1 - out_left - zs->avail_out;
    size_t unused = in_left + zs->avail_in;
    if (ret == Z_MEM_ERROR)
        return lt_fail(LT_E_NOMEM, "%s: out of memory decompressing section '%s'", path, s->name);
    if (ret == Z_DATA_ERROR)
        return lt_fail(LT_E_INPUT, "%s: section '%s' is corrupt: invalid compressed data (%s)",
                       path, s->name, zs->msg != NULL ? zs->msg : "zlib data error");
    if (ret != Z_STREAM_END)
        return lt_fail(LT_E_INPUT, "%s: section '%s' is corrupt: %s", path, s->name,
                       produced > s->raw_bytes ? "its data decompresses to more bytes than its "
                                                 "header says"
                                               : "its compressed data ends early");
    if (produced != s->raw_bytes)
        return lt_fail(LT_E_INPUT, "%s: section '%s' is corrupt: its data decompresses to %zu "
                       "bytes, its header says %zu", path, s->name, produced, s->raw_bytes);
    if (unused != 0)
        return lt_fail(LT_E_INPUT, "%s: section '%s' is corrupt: %zu stray bytes after its "
                       "compressed data", path, s->name, unused);
    uint32_t crc = crc_of(dst, s->raw_bytes);
    if (crc != s->data_crc)
        return lt_fail(LT_E_INPUT, "%s: section '%s' is corrupt: CRC32 mismatch (stored %08x, "
                       "data gives %08x)", path, s->name, (unsigned)s->data_crc, (unsigned)crc);
    dst[s->raw_bytes] = '\0';
    return LT_OK;
}

/* Structure first (no allocation trusts a length before the whole layout
 * checks out), then one block for all data, then decompression. */
static lt_status parse_checkpoint(lt_ckpt *c, const unsigned char *file, size_t size)
{
    LT_TRY(parse_file_header(&c->count, file, size, c->path, c->what));
    LT_TRY(lt_mem_alloc((void **)&c->sections, c->count * sizeof *c->sections,
                        "checkpoint section table"));
    size_t pos = FILE_HEADER_BYTES, block_bytes = 0;
    for (size_t i = 0; i < c->count; i++) {
        ckpt_section *s = &c->sections[i];
        LT_TRY(parse_section(s, i, &pos, file, size, c->path, c->what));
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->sections[j].name, s->name) == 0)
                return lt_fail(LT_E_INPUT, "%s: corrupt %s: section '%s' appears twice",
                               c->path, c->what, s->name);
        s->block_at = lt_mem_rounded(block_bytes);
        if (s->raw_bytes >= SIZE_MAX / 2 - s->block_at)
            return lt_fail(LT_E_INPUT, "%s: corrupt %s: section sizes overflow", c->path,
                           c->what);
        block_bytes = s->block_at + s->raw_bytes + 1;
    }
    if (pos != size)
        return lt_fail(LT_E_INPUT, "%s: corrupt %s: %zu unexpected bytes after the last "
                       "section", c->path, c->what, size - pos);

    LT_TRY(lt_mem_alloc((void **)&c->block, block_bytes, "checkpoint data"));
    z_stream zs;
    use_tracked_memory(&zs);
    if (inflateInit2(&zs, -15) != Z_OK)
        return lt_fail(LT_E_NOMEM, "%s: zlib could not start", c->path);
    lt_status status = LT_OK;
    for (size_t i = 0; i < c->count && status == LT_OK; i++)
        status = inflate_section(&zs, c->block + c->sections[i].block_at, &c->sections[i], file,
                                 c->path);
    inflateEnd(&zs);
    return status;
}

lt_status lt_ckpt_read_as(lt_ckpt **out, const char *path, const char *what)
{
    *out = NULL;
    lt_ckpt *c;
    LT_TRY(lt_mem_calloc((void **)&c, sizeof *c, what));
    snprintf(c->path, sizeof c->path, "%s", path);
    c->what = what;
    unsigned char *file;
    size_t size;
    lt_status status = load_file(&file, &size, path, what);
    if (status == LT_OK) {
        status = parse_checkpoint(c, file, size);
        lt_mem_free(file);
    }
    if (status != LT_OK) {
        lt_ckpt_free(c);
        return status;
    }
    *out = c;
    return LT_OK;
}

lt_status lt_ckpt_read(lt_ckpt **out, const char *path)
{
    return lt_ckpt_read_as(out, path, "checkpoint");
}

const char *lt_ckpt_path(const lt_ckpt *ckpt) { return ckpt->path; }

size_t lt_ckpt_count(const lt_ckpt *ckpt) { return ckpt->count; }

const char *lt_ckpt_name(const lt_ckpt *ckpt, size_t i)
{
    LT_ASSERT(i < ckpt->count);
    return ckpt->sections[i].name;
}

static const ckpt_section *find_section(const lt_ckpt *ckpt, const char *name)
{
    for (size_t i = 0; i < ckpt->count; i++)
        if (strcmp(ckpt->sections[i].name, name) == 0)
            return &ckpt->sections[i];
    return NULL;
}

int lt_ckpt_has(const lt_ckpt *ckpt, const char *name) { return find_section(ckpt, name) != NULL; }

lt_status lt_ckpt_find(const lt_ckpt *ckpt, const char *name, const void **data, size_t *bytes)
{
    const ckpt_section *s = find_section(ckpt, name);
    if (s == NULL)
        return lt_fail(LT_E_INPUT, "%s: %s has no section '%s'", ckpt->path, ckpt->what, name);
    *data = ckpt->block + s->block_at;
    *bytes = s->raw_bytes;
    return LT_OK;
}

lt_status lt_ckpt_get_exact(const lt_ckpt *ckpt, const char *name, void *dst,
                            size_t expected_bytes)
{
    const void *data;
    size_t bytes;
    LT_TRY(lt_ckpt_find(ckpt, name, &data, &bytes));
    if (bytes != expected_bytes)
        return lt_fail(LT_E_INPUT, "%s: section '%s' holds %zu bytes, expected %zu (was the "
                       "%s written for a different model or configuration?)",
                       ckpt->path, name, bytes, expected_bytes, ckpt->what);
    if (bytes > 0)
        memcpy(dst, data, bytes);
    return LT_OK;
}
