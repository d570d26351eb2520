/* Fuzz targets for the file readers, shared by the libFuzzer harnesses
 * (fuzz_main.c, built with -Dfuzz=true) and the corpus replay test in the
 * default suite (tests/test_fuzz_corpus.c), so both run the same checks.
 *
 * A target writes its input where the reader looks, under a scratch folder
 * `dir`, reads it back, checks what a success returned (and touches every
 * byte of it, so a short buffer shows under AddressSanitizer), and releases
 * everything. A failure must be clean: LT_E_INPUT or LT_E_IO with a message
 * naming the file. Anything else - another status, a message that does not
 * name the file, tracked memory left allocated - aborts with a description:
 * a crash for libFuzzer, a crashed test for Criterion. */
#ifndef LT_TESTS_FUZZ_TARGETS_H
#define LT_TESTS_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Returns the reader's status (for a target that reads twice, LT_OK if
 * either read accepted the input). */
typedef lt_status (*fuzz_target_fn)(const char *dir, const uint8_t *data, size_t size);

typedef struct fuzz_target {
    const char *name; /* also the folder of its seeds: tests/fuzz/corpus/<name>/ */
    fuzz_target_fn run;
} fuzz_target;

extern const fuzz_target fuzz_targets[];
extern const int fuzz_target_count;

/* The target called `name`, or NULL. */
const fuzz_target *fuzz_target_find(const char *name);

/* Runs a target and aborts if tracked memory is not back where it started. */
lt_status fuzz_run(const fuzz_target *target, const char *dir, const uint8_t *data,
                   size_t size);

/* Named in every abort message when set: the replay test points it at the
 * corpus file being replayed. */
extern const char *fuzz_input_name;

/* The fixed CIFAR-10 batches the subset manifest target's input refers to:
 * writes them into `dir` if missing and gives their MD5s in hex, so the
 * corpus generator can write manifests that match them. */
void fuzz_subset_batches(const char *dir, char train_md5[33], char test_md5[33]);

/* Writes `data` as one gzip member into out (`room` bytes, enough for
 * 2 * compressBound(size)) and returns the bytes written. */
size_t fuzz_gzip(unsigned char *out, size_t room, const uint8_t *data, size_t size);

#endif
