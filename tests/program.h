/* Running the programs as a user runs them, for the end-to-end tests: the
 * ltbench dispatcher in the build folder (LTBENCH_BUILD), its stdout and
 * stderr captured together. Header-only, as check.h. */
#ifndef LT_TESTS_PROGRAM_H
#define LT_TESTS_PROGRAM_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* What the last run printed. */
static char output[1 << 16];

/* Runs `ENV ltbench ARGS` (ENV: a shell prefix: variable assignments, a
 * launcher such as mpirun, or ""); returns the exit status. */
static inline int ltbench_env(const char *env, const char *args)
{
    const char *build = getenv("LTBENCH_BUILD");
    cr_assert_not_null(build, "LTBENCH_BUILD must name the build folder");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s '%s/ltbench' %s 2>&1", env, build, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static inline int ltbench(const char *args) { return ltbench_env("", args); }

static inline void make_temp_dir(char *dir)
{
    strcpy(dir, "/tmp/lt_programs_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

#define ASSERT_MENTIONS(text) \
    cr_assert(strstr(output, (text)) != NULL, "expected '%s' in:\n%s", (text), output)

#endif
