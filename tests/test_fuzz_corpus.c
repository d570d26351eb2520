/* Replays every file of the fuzz corpora (tests/fuzz/corpus/<target>/: seeds
 * and every input a fuzzer ever crashed on) through the same targets the
 * libFuzzer harnesses run, in the default suite: each must be accepted or
 * refused cleanly (LT_E_INPUT or LT_E_IO naming the file), leave no tracked
 * memory behind, and each corpus must hold both kinds. Seeds say which they
 * are (seed_ok_*, seed_bad_*); crash inputs (crash_*) may be either. A target
 * that finds anything else aborts, naming the corpus file. */
#include "check.h"

#include <dirent.h>

#include "fuzz/targets.h"

static void setup(void) { check_scratch_make("fuzz_corpus"); }

TestSuite(corpus, .init = setup, .fini = check_scratch_remove);

static void corpus_dir(char *buf, size_t size, const char *target)
{
    const char *source = getenv("LTBENCH_SOURCE");
    cr_assert_not_null(source, "LTBENCH_SOURCE must name the source folder");
    snprintf(buf, size, "%s/tests/fuzz/corpus/%s", source, target);
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    unsigned char *data = malloc((size_t)len + 1); /* +1: a valid pointer when empty */
    cr_assert_not_null(data);
    cr_assert_eq(fread(data, 1, (size_t)len, f), (size_t)len, "cannot read %s", path);
    fclose(f);
    *size = (size_t)len;
    return data;
}

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

static void replay(const char *name)
{
    const fuzz_target *target = fuzz_target_find(name);
    cr_assert_not_null(target, "no fuzz target '%s'", name);
    char dir[4096];
    corpus_dir(dir, sizeof dir, name);
    struct dirent **entries;
    int n = scandir(dir, &entries, not_hidden, alphasort);
    cr_assert_geq(n, 0, "cannot list %s", dir);
    int accepted = 0, refused = 0;
    for (int i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, entries[i]->d_name);
        int want_ok = strncmp(entries[i]->d_name, "seed_ok_", 8) == 0;
        int want_bad = strncmp(entries[i]->d_name, "seed_bad_", 9) == 0;
        free(entries[i]);
        size_t size;
        unsigned char *data = slurp(path, &size);
        fuzz_input_name = path;
        lt_status status = fuzz_run(target, check_scratch_dir(), data, size);
        fuzz_input_name = NULL;
        free(data);
        cr_expect(!want_ok || status == LT_OK, "%s: refused: %s", path, lt_last_error());
        cr_expect(!want_bad || status != LT_OK, "%s: accepted", path);
        if (status == LT_OK)
            accepted++;
        else
            refused++;
    }
    free(entries);
    cr_assert_gt(accepted, 0, "%s: no input the reader accepts", dir);
    cr_assert_gt(refused, 0, "%s: no input the reader refuses", dir);
    check_assert_mem_released();
}

Test(corpus, npy) { replay("npy"); }
Test(corpus, checkpoint) { replay("checkpoint"); }
Test(corpus, checkpoint_crc) { replay("checkpoint_crc"); }
Test(corpus, csv) { replay("csv"); }
Test(corpus, idx) { replay("idx"); }
Test(corpus, idx_gz) { replay("idx_gz"); }
Test(corpus, cifar) { replay("cifar"); }
Test(corpus, cifar_subset) { replay("cifar_subset"); }
Test(corpus, speech_cache) { replay("speech_cache"); }

/* Every target has a corpus replayed above, and every corpus a target. */
Test(corpus, folders_match_targets)
{
    cr_assert_eq(fuzz_target_count, 9, "a new target needs its Test() above");
    char dir[4096];
    corpus_dir(dir, sizeof dir, "");
    struct dirent **entries;
    int n = scandir(dir, &entries, not_hidden, alphasort);
    cr_assert_geq(n, 0, "cannot list %s", dir);
    for (int i = 0; i < n; i++) {
        cr_expect_not_null(fuzz_target_find(entries[i]->d_name), "%s%s has no fuzz target", dir,
                           entries[i]->d_name);
        free(entries[i]);
    }
    free(entries);
    cr_assert_eq(n, fuzz_target_count);
}
