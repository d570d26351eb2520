/* Thread-count tests under every OpenBLAS kernel set this CPU can run, and
 * every one of ltbench's own kernel sets the build has (core/kernels.h).
 *
 * "Same bits for any thread count" must hold whichever kernels OpenBLAS
 * picks for the CPU (Haswell or Zen on AVX2 machines, SkylakeX or
 * Cooperlake on AVX-512 ones), and they round differently where a
 * thread's share of a product begins; and whichever set of ltbench's
 * register tiles the process picked (avx512, avx2, sse2 in a portable
 * build), whose tiles differ.
 * OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, and ltbench
 * LTBENCH_KERNELS before main, so a test runs itself again in a child
 * process per kernel set: a test calls check_every_kernel_set() first,
 * then checks under the kernels its own process loaded. Header-only, as
 * check.h. */
#ifndef LT_TESTS_KERNEL_SETS_H
#define LT_TESTS_KERNEL_SETS_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kernels.h"

char *openblas_get_corename(void);

#define KERNEL_SET_CHILD_ENV "LTBENCH_TEST_KERNEL_SET"
/* Which variable the child was started with: OPENBLAS_CORETYPE or LTBENCH_KERNELS. */
#define KERNEL_SET_VARIABLE_ENV "LTBENCH_TEST_KERNEL_SET_VARIABLE"
/* A file the child writes to, so a filter that matched no test cannot pass. */
#define KERNEL_SET_MARK_ENV "LTBENCH_TEST_KERNEL_SET_MARK"

/* 1 when this CPU has the instructions kernel set `name` uses. */
static inline int kernel_set_runs_here(const char *name)
{
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512cd");
    if (strcmp(name, "Haswell") == 0 || strcmp(name, "Zen") == 0)
        return avx2;
    if (strcmp(name, "SkylakeX") == 0)
        return avx512;
    if (strcmp(name, "Cooperlake") == 0)
        return avx512 && __builtin_cpu_supports("avx512bf16");
    return 0;
}

/* Runs the calling test again under each other kernel set the CPU can run,
 * each in its own process with OPENBLAS_CORETYPE set, and fails naming the
 * set where it failed. In such a child it checks that OpenBLAS loaded the
 * set asked for, and returns: the test goes on under those kernels. */
/* A kernel set to run a test under: the variable that picks it, its value. */
typedef struct kernel_set_choice {
    const char *variable, *value;
} kernel_set_choice;

/* The kernel sets besides this process's own: OpenBLAS's the CPU runs, with
 * ltbench's default set, and ltbench's other usable sets, with OpenBLAS's
 * default. Returns how many (at most 16). */
static inline int other_kernel_sets(kernel_set_choice *out)
{
    static const char *const blas_sets[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake"};
    const char *loaded = openblas_get_corename();
    int n = 0;
    for (size_t i = 0; i < sizeof blas_sets / sizeof blas_sets[0]; i++)
        if (kernel_set_runs_here(blas_sets[i]) && !(loaded && strcasecmp(loaded, blas_sets[i]) == 0))
            out[n++] = (kernel_set_choice){"OPENBLAS_CORETYPE", blas_sets[i]};
    for (int set = 0; set < LT_KERNEL_SETS; set++)
        if (lt_kernels_usable((lt_kernel_set)set) && (lt_kernel_set)set != lt_kernels_active())
            out[n++] = (kernel_set_choice){"LTBENCH_KERNELS", lt_kernels_name((lt_kernel_set)set)};
    return n;
}

/* Runs the calling test again under each other kernel set (above), each in
 * its own process with the variable set, and fails naming the set where it
 * failed. In such a child it checks that the set asked for was loaded, and
 * returns: the test goes on under those kernels. */
static inline void check_every_kernel_set(void)
{
    const char *asked = getenv(KERNEL_SET_CHILD_ENV);
    if (asked != NULL) {
        const char *variable = getenv(KERNEL_SET_VARIABLE_ENV);
        const char *loaded = variable != NULL && strcmp(variable, "LTBENCH_KERNELS") == 0
                                 ? lt_kernels_name(lt_kernels_active())
                                 : openblas_get_corename();
        cr_assert(loaded != NULL && strcasecmp(loaded, asked) == 0, "%s=%s loaded the %s kernels",
                  variable, asked, loaded != NULL ? loaded : "(unknown)");
        FILE *mark = fopen(getenv(KERNEL_SET_MARK_ENV), "w");
        cr_assert_not_null(mark);
        fputs(asked, mark);
        fclose(mark);
        return;
    }
    kernel_set_choice sets[16];
    const int nsets = other_kernel_sets(sets);
    char filter[512];
    snprintf(filter, sizeof filter, "%s/%s", criterion_current_suite->name,
             criterion_current_test->name);
    for (int i = 0; i < nsets; i++) {
        char mark[] = "/tmp/lt_kernel_set_XXXXXX", log[] = "/tmp/lt_kernel_set_log_XXXXXX";
        int mark_fd = mkstemp(mark), log_fd = mkstemp(log);
        cr_assert(mark_fd >= 0 && log_fd >= 0);
        close(mark_fd);
        fflush(NULL);
        pid_t pid = fork();
        cr_assert(pid >= 0, "fork failed");
        if (pid == 0) {
            setenv(sets[i].variable, sets[i].value, 1);
            setenv(KERNEL_SET_CHILD_ENV, sets[i].value, 1);
            setenv(KERNEL_SET_VARIABLE_ENV, sets[i].variable, 1);
            setenv(KERNEL_SET_MARK_ENV, mark, 1);
            unsetenv("BXFI_MAP"); /* else the new process takes itself for a test worker */
            dup2(log_fd, 1);
            dup2(log_fd, 2);
            execl("/proc/self/exe", "kernel-set-child", "--filter", filter, "--jobs", "1",
                  (char *)NULL);
            _exit(127);
        }
        close(log_fd);
        int status;
        cr_assert(waitpid(pid, &status, 0) == pid);
        struct stat st;
        int ran = stat(mark, &st) == 0 && st.st_size > 0;
        int passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        unlink(mark);
        /* The child's report, without its summary line: the suite's total
         * counts each test once. */
        FILE *f = passed ? NULL : fopen(log, "r");
        char line[1024];
        while (f != NULL && fgets(line, sizeof line, f))
            if (strstr(line, "Synthesis:") == NULL)
                fprintf(stderr, "[%s] %s", sets[i].value, line);
        if (f != NULL)
            fclose(f);
        unlink(log);
        cr_expect(ran, "%s did not run under %s=%s", filter, sets[i].variable, sets[i].value);
        cr_expect(passed, "%s fails under the %s kernels (%s=%s; its report is above)", filter,
                  sets[i].value, sets[i].variable, sets[i].value);
    }
}

#endif
