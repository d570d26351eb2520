#include "core/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

char *openblas_get_corename(void);

static int env_unset(const char *name)
{
    const char *value = getenv(name);
    return value == NULL || *value == '\0';
}

/* The "flags" line of /proc/cpuinfo (its first CPU) into `line`; 0 when
 * there is none to read. */
static int cpu_flags_line(char *line, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0;
    int found = 0;
    while (!found && fgets(line, (int)size, f))
        found = strncmp(line, "flags", 5) == 0;
    fclose(f);
    return found;
}

/* The flags of `needed` (space-separated) that `cpu_flags` (a cpuinfo flags
 * line) lacks, written space-separated into `missing`: how many. */
static int flags_missing(char *missing, size_t size, const char *needed, const char *cpu_flags)
{
    char want[256];
    snprintf(want, sizeof want, "%s", needed);
    int count = 0;
    size_t n = 0;
    missing[0] = '\0';
    char *save = NULL;
    for (char *w = strtok_r(want, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
        size_t len = strlen(w);
        const char *at = cpu_flags;
        int has = 0;
        while (!has && (at = strstr(at, w)) != NULL) {
            has = (at == cpu_flags || at[-1] == ' ' || at[-1] == '\t' || at[-1] == ':') &&
                  (at[len] == ' ' || at[len] == '\n' || at[len] == '\0');
            at += len;
        }
        if (!has) {
            count++;
            if (n < size)
                n += (size_t)snprintf(missing + n, size - n, "%s%s", n == 0 ? "" : " ", w);
        }
    }
    return count;
}

#define LT_AVX512_FLAGS "avx512f avx512dq avx512cd avx512bw avx512vl"

/* What OpenBLAS's kernels for a core (an OPENBLAS_CORETYPE name, matched
 * as OpenBLAS matches it, ignoring case) execute: NULL for a core not
 * listed here, which is left to OpenBLAS. */
static const char *core_needs(const char *core)
{
    static const char *const cores[][2] = {
        {"SkylakeX", LT_AVX512_FLAGS},
        {"Cooperlake", LT_AVX512_FLAGS " avx512_bf16"},
        {"Haswell", "avx2 fma"},
        {"Zen", "avx2 fma"},
        {"Sandybridge", "avx"},
    };
    for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
        if (strcasecmp(core, cores[i][0]) == 0)
            return cores[i][1];
    return NULL;
}

/* The widest of OpenBLAS's x86-64 kernel sets a CPU with `cpu_flags` runs:
 * "SkylakeX", "Haswell" or "Sandybridge"; NULL when none of them. */
static const char *core_this_cpu_runs(const char *cpu_flags)
{
    static const char *const widest_first[] = {"SkylakeX", "Haswell", "Sandybridge"};
    char missing[256];
    for (size_t i = 0; i < sizeof widest_first / sizeof widest_first[0]; i++)
        if (flags_missing(missing, sizeof missing, core_needs(widest_first[i]), cpu_flags) == 0)
            return widest_first[i];
    return NULL;
}

lt_status lt_openblas_core_check(const char *core, const char *cpu_flags)
{
    const char *needs = core_needs(core);
    char missing[256];
    if (needs == NULL || flags_missing(missing, sizeof missing, needs, cpu_flags) == 0)
        return LT_OK;
    const char *runs = core_this_cpu_runs(cpu_flags);
    return lt_fail(LT_E_USAGE,
                   "OPENBLAS_CORETYPE=%.40s: OpenBLAS's kernels for that core use instructions "
                   "this CPU does not have (%s), and would stop the run with an illegal "
                   "instruction; unset it%s%s%s",
                   core, missing, runs != NULL ? " or name a core this CPU runs (" : "",
                   runs != NULL ? runs : "", runs != NULL ? ")" : "");
}

lt_status lt_openblas_check_env(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE");
    char line[8192];
    if (env_unset("OPENBLAS_CORETYPE") || !cpu_flags_line(line, sizeof line))
        return LT_OK;
    return lt_openblas_core_check(core, line);
}

/* Why these settings:
 * - OpenMP threads spin at barriers before they sleep. Spinning without a
 *   bound (OMP_WAIT_POLICY=active) made two runs at once on a shared machine
 *   take 50x longer; sleeping at once (passive) halved the speed of the
 *   fine-grained work alone (batch-16 generation, small training steps).
 *   A bounded spin (GOMP_SPINCOUNT=LT_DEFAULT_SPINCOUNT) keeps most of
 *   the speed alone and lets a second run in. Measured on 2 Zen 4 vCPUs,
 *   copy --preset quick (2 ms updates, the most barriers per second), one
 *   alone / each of two at once: spin 3000 7.1-9.4 s / 30 s (3.6x), 2000
 *   7.4-7.5 / 23.4 (3.2x), 1500 7.5-7.6 / 20.1 (2.7x), 1000 7.8-7.9 / 17.1
 *   (2.2x), 500 9.8 / 13.7. Generation at batch 1 and 16 (MNIST at the
 *   paper's size, linear and cached softmax) ran within the noise at 1500
 *   and 2000, four interleaved rounds each; at 1000 batch-16 steps were
 *   slower in two rounds of three.
 * - OpenBLAS falls back to its generic x86-64 kernels ("Prescott") on CPUs
 *   newer than its release knows, 5x slower here; when the CPU has AVX-512,
 *   AVX2 or AVX it is told which kernels to use. */
#define LT_DEFAULT_SPINCOUNT "1500"

void lt_runtime_prepare(char **argv)
{
    int set_spin = 0, set_core = 0;
    if (env_unset("OMP_WAIT_POLICY") && env_unset("GOMP_SPINCOUNT") &&
        setenv("GOMP_SPINCOUNT", LT_DEFAULT_SPINCOUNT, 1) == 0)
        set_spin = 1;
    const char *core = openblas_get_corename();
    char flags[8192];
    if (env_unset("OPENBLAS_CORETYPE") && core != NULL && strcmp(core, "Prescott") == 0 &&
        cpu_flags_line(flags, sizeof flags)) {
        const char *better = core_this_cpu_runs(flags);
        if (better != NULL && setenv("OPENBLAS_CORETYPE", better, 1) == 0)
            set_core = 1;
    }
    if (!set_spin && !set_core)
        return;
    execv("/proc/self/exe", argv);
    /* Could not restart: run on as loaded, which the CSVs then record. */
    if (set_spin)
        unsetenv("GOMP_SPINCOUNT");
    if (set_core)
        unsetenv("OPENBLAS_CORETYPE");
}

