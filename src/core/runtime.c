#include "core/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *openblas_get_corename(void);

/* 1 when /proc/cpuinfo lists every flag in `flags` (space-separated). */
static int cpu_has(const char *flags)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            found = 1;
            char want[256];
            snprintf(want, sizeof want, "%s", flags);
            for (char *w = strtok(want, " "); w != NULL && found; w = strtok(NULL, " ")) {
                char padded[64];
                snprintf(padded, sizeof padded, " %s", w);
                char *at = strstr(line, padded);
                found = at != NULL && (at[strlen(padded)] == ' ' || at[strlen(padded)] == '\n');
            }
        }
    fclose(f);
    return found;
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
 *   newer than its release knows, 5x slower here; when the CPU has AVX-512
 *   or AVX2 it is told which kernels to use. */
#define LT_DEFAULT_SPINCOUNT "1500"

static int env_unset(const char *name)
{
    const char *value = getenv(name);
    return value == NULL || *value == '\0';
}

void lt_runtime_prepare(char **argv)
{
    int set_spin = 0, set_core = 0;
    if (env_unset("OMP_WAIT_POLICY") && env_unset("GOMP_SPINCOUNT") &&
        setenv("GOMP_SPINCOUNT", LT_DEFAULT_SPINCOUNT, 1) == 0)
        set_spin = 1;
    const char *core = openblas_get_corename();
    if (env_unset("OPENBLAS_CORETYPE") && core != NULL && strcmp(core, "Prescott") == 0) {
        const char *better = cpu_has("avx512f avx512dq avx512cd avx512bw avx512vl") ? "SkylakeX"
                             : cpu_has("avx2 fma")                                 ? "Haswell"
                                                                                   : NULL;
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

