/* Checkpoints: a file of named, compressed, checksummed sections. The
 * container knows nothing about models; the training engine decides what to
 * store (parameters, optimizer state, step, RNG state, the configuration as
 * text) and how to name it.
 *
 * File format, version 1. Integers are little-endian, written byte by byte.
 *
 *   magic          8 bytes  "LTCKPT" 0x00 0x01
 *   version        u32      1
 *   section count  u32
 *   then per section:
 *     name length  u32      1..LT_CKPT_MAX_NAME
 *     name         bytes    printable ASCII, no spaces, unique in the file
 *     raw length   u64      bytes of the section's data
 *     packed length u64     bytes of the compressed data that follow
 *     data crc     u32      zlib crc32 of the raw data
 *     record crc   u32      crc32 of this section's bytes from "name length"
 *                           through "data crc", continued over the packed
 *                           data: damage anywhere in the section (a length,
 *                           the name, a padding bit of the stream) is caught
 *                           before anything is allocated from its lengths
 *     packed data  bytes    raw DEFLATE (RFC 1951) stream written by zlib
 *                           (no zlib wrapper: the two crcs are the checks)
 *   the file ends right after the last section.
 *
 * Section data are opaque bytes; float arrays are stored in host byte order
 * (little-endian on every platform ltbench targets).
 *
 * Files are written through lt_atomic_file: a checkpoint appears whole or
 * not at all. A reader loads and verifies the whole file; every defect is
 * LT_E_INPUT naming the file and what is wrong. */
#ifndef LT_IO_CHECKPOINT_H
#define LT_IO_CHECKPOINT_H

#include <stddef.h>

#include "core/status.h"

#define LT_CKPT_VERSION 1
#define LT_CKPT_MAX_NAME 255

typedef struct lt_ckpt_writer lt_ckpt_writer;
typedef struct lt_ckpt lt_ckpt;

/* Starts a checkpoint at `path` (a temporary file beside it until commit).
 * LT_E_IO naming the path if it cannot be created. */
lt_status lt_ckpt_writer_open(lt_ckpt_writer **out, const char *path);

/* Tracked bytes a writer holds at most while writing up to 16 sections
 * (its buffers and zlib's work areas), so a run can plan its checkpoints
 * with everything else. */
size_t lt_ckpt_writer_bytes(void);

/* Compresses and appends one section. The name must be 1..LT_CKPT_MAX_NAME
 * printable ASCII characters without spaces and not used before in this
 * file (LT_E_USAGE otherwise). On failure the writer stays open: call
 * lt_ckpt_writer_abort. */
lt_status lt_ckpt_writer_add(lt_ckpt_writer *w, const char *name, const void *data,
                             size_t bytes);

/* Finishes the file and renames it into place; frees the writer whether or
 * not it succeeds (on failure nothing is left behind). */
lt_status lt_ckpt_writer_commit(lt_ckpt_writer *w);

/* Discards the file being written and frees the writer; NULL is ignored. */
void lt_ckpt_writer_abort(lt_ckpt_writer *w);

/* Reads and verifies a whole checkpoint. LT_E_IO if the file cannot be
 * read, LT_E_INPUT for anything malformed: not a checkpoint, unsupported
 * version, truncated, checksum mismatch, lengths beyond the file, trailing
 * bytes, duplicate names. */
lt_status lt_ckpt_read(lt_ckpt **out, const char *path);

/* As lt_ckpt_read, for another file in this container format: its
 * messages call it `what` ("speech cache"), never a checkpoint. `what`
 * must outlive the result. */
lt_status lt_ckpt_read_as(lt_ckpt **out, const char *path, const char *what);

/* Releases a checkpoint; NULL is ignored. */
void lt_ckpt_free(lt_ckpt *ckpt);

/* The path the checkpoint was read from. */
const char *lt_ckpt_path(const lt_ckpt *ckpt);

/* Number of sections and the name of section i (in file order). */
size_t lt_ckpt_count(const lt_ckpt *ckpt);
const char *lt_ckpt_name(const lt_ckpt *ckpt, size_t i);

/* Whether a section of that name exists. */
int lt_ckpt_has(const lt_ckpt *ckpt, const char *name);

/* Points *data at the section's bytes (64-byte aligned, followed by a NUL
 * byte so a text section reads as a C string; valid until lt_ckpt_free).
 * LT_E_INPUT naming the file and section if there is none. */
lt_status lt_ckpt_find(const lt_ckpt *ckpt, const char *name, const void **data, size_t *bytes);

/* Copies a section of exactly `expected_bytes` into dst. LT_E_INPUT naming
 * the file, section, expected and found sizes when they differ (a
 * checkpoint of a differently shaped model) or when it is missing. */
lt_status lt_ckpt_get_exact(const lt_ckpt *ckpt, const char *name, void *dst,
                            size_t expected_bytes);

#endif
