/* Thread-count tests under every OpenBLAS kernel set this CPU can run.
 *
 * "Same bits for any thread count" must hold whichever kernels OpenBLAS
 * picks for the CPU (Haswell or Zen on AVX2 machines, SkylakeX or
 * Cooperlake on AVX-512 ones), and they round differently where a
 * thread's share of a product begins.
 * OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, so a test runs
 * itself again in a child process per kernel set: a test calls
 * check_every_kernel_set() first, then checks under the kernels its own
 * process loaded. Header-only, as check.h. */
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

char *openblas_get_corename(void);

#define KERNEL_SET_CHILD_ENV "LTBENCH_TEST_KERNEL_SET"
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
static inline void check_every_kernel_set(void)
{
    const char *loaded = openblas_get_corename();
    const char *asked = getenv(KERNEL_SET_CHILD_ENV);
    if (asked != NULL) {
        cr_assert(loaded != NULL && strcasecmp(loaded, asked) == 0,
                  "OPENBLAS_CORETYPE=%s loaded OpenBLAS's %s kernels", asked,
                  loaded != NULL ? loaded : "(unknown)");
        FILE *mark = fopen(getenv(KERNEL_SET_MARK_ENV), "w");
        cr_assert_not_null(mark);
        fputs(asked, mark);
        fclose(mark);
        return;
    }
    static const char *const sets[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake"};
    char filter[512];
    snprintf(filter, sizeof filter, "%s/%s", criterion_current_suite->name,
             criterion_current_test->name);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (!kernel_set_runs_here(sets[i]) || (loaded && strcasecmp(loaded, sets[i]) == 0))
            continue;
        char mark[] = "/tmp/lt_kernel_set_XXXXXX", log[] = "/tmp/lt_kernel_set_log_XXXXXX";
        int mark_fd = mkstemp(mark), log_fd = mkstemp(log);
        cr_assert(mark_fd >= 0 && log_fd >= 0);
        close(mark_fd);
        fflush(NULL);
        pid_t pid = fork();
        cr_assert(pid >= 0, "fork failed");
        if (pid == 0) {
            setenv("OPENBLAS_CORETYPE", sets[i], 1);
            setenv(KERNEL_SET_CHILD_ENV, sets[i], 1);
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
                fprintf(stderr, "[%s] %s", sets[i], line);
        if (f != NULL)
            fclose(f);
        unlink(log);
        cr_expect(ran, "%s did not run under OPENBLAS_CORETYPE=%s", filter, sets[i]);
        cr_expect(passed, "%s fails under OpenBLAS's %s kernels (OPENBLAS_CORETYPE=%s; its "
                  "report is above)", filter, sets[i], sets[i]);
    }
}

#endif
