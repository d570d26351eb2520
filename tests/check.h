/* Helpers shared by the Criterion tests: finite differences against a
 * double-precision reference, error measures, and scratch folders with
 * status and memory checks for the file tests. Header-only so each test
 * executable stays self-contained. */
#ifndef LT_TESTS_CHECK_H
#define LT_TESTS_CHECK_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/kernels.h"
#include "core/mem.h"
#include "core/runtime.h"
#include "core/status.h"
#include <unistd.h>

/* The kernel sets in the order the same-bits tests compare them: those
 * with fused multiply-adds first (the first of them the model the others
 * must equal to the bit), then those without (held to it within a bound).
 * For order index 0 .. 2 LT_KERNEL_SETS - 1: 0 when that set is not usable
 * in that place, else 1 with the set in use and *fused saying which pass. */
static inline int check_use_kernel_set_in_order(int index, int *fused)
{
    const lt_kernel_set set = (lt_kernel_set)(index % LT_KERNEL_SETS);
    *fused = index < LT_KERNEL_SETS;
    if (!lt_kernels_usable(set) || lt_kernels_fused(set) != *fused)
        return 0;
    cr_assert_eq(lt_kernels_use(set), LT_OK);
    return 1;
}

/* A scalar function of n doubles (the loss of a double-precision reference
 * implementation). */
typedef double (*check_scalar_fn)(const double *x, void *ctx);

/* Central differences: grad[i] = (f(x + h e_i) - f(x - h e_i)) / 2h, with
 * h scaled to |x_i|. x is restored before returning. */
static inline void check_fd_gradient(double *grad, double *x, size_t n, check_scalar_fn f,
                                     void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        double saved = x[i];
        double h = 1e-6 * (fabs(saved) > 1.0 ? fabs(saved) : 1.0);
        x[i] = saved + h;
        double plus = f(x, ctx);
        x[i] = saved - h;
        double minus = f(x, ctx);
        x[i] = saved;
        grad[i] = (plus - minus) / (2.0 * h);
    }
}

/* max_i |a_i - b_i| / max(max_i |b_i|, floor): a relative error that does not
 * blow up on entries near zero. */
static inline double check_rel_error_f(const float *a, const double *b, size_t n, double floor)
{
    double max_diff = 0, max_ref = floor;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= max_diff))
            max_diff = isnan(d) ? INFINITY : d;
        if (fabs(b[i]) > max_ref)
            max_ref = fabs(b[i]);
    }
    return max_diff / max_ref;
}

static inline double check_rel_error_ff(const float *a, const float *b, size_t n, double floor)
{
    double max_diff = 0, max_ref = floor;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= max_diff))
            max_diff = isnan(d) ? INFINITY : d;
        if (fabs((double)b[i]) > max_ref)
            max_ref = fabs((double)b[i]);
    }
    return max_diff / max_ref;
}

/* Entries of a folder, not counting dot files; -1 if it cannot be read.
 * Tests use it to prove that a failed write left nothing behind. */
static inline int check_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* ---- scratch folders, status and memory checks ---------------------------
 * check_scratch_make(name), from a suite's .init, makes the folder
 * /tmp/lt_test_<name>_XXXXXX for the test and notes the tracked memory in
 * use; check_scratch_remove, from .fini, deletes the folder and all in it.
 * (State lives in function statics: one test file per executable.) */

static inline char *check_scratch_dir(void)
{
    static char dir[96];
    return dir;
}

static inline size_t *check_mem_baseline(void)
{
    static size_t bytes;
    return &bytes;
}

static inline void check_scratch_make(const char *name)
{
    snprintf(check_scratch_dir(), 96, "/tmp/lt_test_%s_XXXXXX", name);
    cr_assert_not_null(mkdtemp(check_scratch_dir()), "mkdtemp failed");
    *check_mem_baseline() = lt_mem_current();
}

static inline int check_remove_entry(const char *path, const struct stat *st, int flag,
                                     struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline void check_scratch_remove(void)
{
    nftw(check_scratch_dir(), check_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path inside the scratch folder; four live at once. */
static inline const char *check_path(const char *name)
{
    static char ring[4][512];
    static int next;
    char *buf = ring[next++ % 4];
    snprintf(buf, sizeof ring[0], "%s/%s", check_scratch_dir(), name);
    return buf;
}

/* Everything allocated since check_scratch_make has been released. */
static inline void check_assert_mem_released(void)
{
    size_t baseline = *check_mem_baseline();
    cr_assert_eq(lt_mem_current(), baseline, "%zu bytes still allocated",
                 lt_mem_current() - baseline);
}

#define check_assert_status(expr, want)                                                \
    do {                                                                               \
        lt_status got_ = (expr);                                                       \
        cr_assert_eq(got_, (want), "%s: got %s (%s), expected %s", #expr,              \
                     lt_status_name(got_), lt_last_error(), lt_status_name(want));     \
    } while (0)

/* The calling thread's last error message contains `text`. */
#define check_assert_mentions(text)                                                   \
    cr_assert(strstr(lt_last_error(), (text)) != NULL, "message '%s' lacks '%s'",     \
              lt_last_error(), (text))

/* Removes a folder and everything below it (like rm -rf), making
 * read-only subfolders writable first. Tests use it to clean up. */
static inline void check_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(path, 0700);
            check_remove_tree(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* The whole file in a malloc'd block (one spare byte after it) and its size
 * in *size; NULL if it cannot be read. */
static inline unsigned char *check_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = buf != NULL ? (size_t)n : 0;
    return buf;
}

/* The whole file as a NUL-terminated string (malloc'd); NULL if it cannot
 * be read. */
static inline char *check_read_text(const char *path)
{
    size_t size;
    unsigned char *buf = check_read_file(path, &size);
    if (buf != NULL)
        buf[size] = '\0';
    return (char *)buf;
}

/* Writes `size` bytes as the whole file; 0 on success, -1 on failure. */
static inline int check_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Under an OPENBLAS_CORETYPE whose kernels this CPU cannot run (SkylakeX
 * without AVX-512), every OpenBLAS product stops its test with an illegal
 * instruction. The programs refuse such a run; the tests run it, and say
 * first why the tests that multiply matrices crash. */
ReportHook(PRE_ALL)(struct criterion_test_set *tests)
{
    (void)tests;
    if (lt_openblas_check_env() != LT_OK)
        fprintf(stderr, "tests: warning: %s: the tests whose products go to OpenBLAS will crash\n",
                lt_last_error());
}

#endif
