/* libFuzzer entry point for one reader, chosen at build time with
 * -DFUZZ_TARGET="name" (tests/fuzz/meson.build builds one per target).
 * Inputs go to files in a scratch folder made at start-up and removed at
 * exit; the checks live in targets.c, shared with the corpus replay test. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/targets.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET=\"name\""
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const fuzz_target *target;
static char scratch[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_scratch(void)
{
    nftw(scratch, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    target = fuzz_target_find(FUZZ_TARGET);
    if (target == NULL) {
        fprintf(stderr, "fuzz: no target '%s'\n", FUZZ_TARGET);
        exit(2);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/ltbench_fuzz_XXXXXX",
             tmp != NULL && tmp[0] != '\0' && strlen(tmp) < 32 ? tmp : "/tmp");
    if (mkdtemp(scratch) == NULL) {
        perror("fuzz: cannot make a scratch folder");
        exit(2);
    }
    atexit(remove_scratch);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_run(target, scratch, data, size);
    return 0;
}
