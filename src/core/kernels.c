#include "core/kernels.h"

#include <stdlib.h>
#include <string.h>

static const char *const set_names[LT_KERNEL_SETS] = {"sse2", "avx",  "avx2",
                                                      "avx512", "neon", "generic"};

/* Best first: the order a CPU's sets are preferred in. */
static const lt_kernel_set preference[] = {LT_KERNELS_AVX512, LT_KERNELS_AVX2, LT_KERNELS_AVX,
                                           LT_KERNELS_NEON,   LT_KERNELS_SSE2, LT_KERNELS_GENERIC};
enum { PREFERENCES = sizeof preference / sizeof preference[0] };

static int built_with(lt_kernel_set set)
{
    switch (set) {
#ifdef LT_HAVE_KERNELS_SSE2
    case LT_KERNELS_SSE2: return 1;
#endif
#ifdef LT_HAVE_KERNELS_AVX
    case LT_KERNELS_AVX: return 1;
#endif
#ifdef LT_HAVE_KERNELS_AVX2
    case LT_KERNELS_AVX2: return 1;
#endif
#ifdef LT_HAVE_KERNELS_AVX512
    case LT_KERNELS_AVX512: return 1;
#endif
#ifdef LT_HAVE_KERNELS_NEON
    case LT_KERNELS_NEON: return 1;
#endif
#ifdef LT_HAVE_KERNELS_GENERIC
    case LT_KERNELS_GENERIC: return 1;
#endif
    default: return 0;
    }
}

/* The CPU runs the instructions a set was compiled for (the x86-64 levels
 * as GCC's -march=x86-64-vN: cpuid's features and the OS's saved
 * registers). */
static int cpu_runs(lt_kernel_set set)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (set) {
    case LT_KERNELS_SSE2: return 1;
    case LT_KERNELS_AVX: return __builtin_cpu_supports("avx");
#if defined(__clang__) /* clang 14 does not know the level names */
    case LT_KERNELS_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    case LT_KERNELS_AVX512:
        return cpu_runs(LT_KERNELS_AVX2) && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    case LT_KERNELS_AVX2: return __builtin_cpu_supports("x86-64-v3");
    case LT_KERNELS_AVX512: return __builtin_cpu_supports("x86-64-v4");
#endif
    case LT_KERNELS_GENERIC: return 1;
    default: return 0;
    }
#else
    return set == LT_KERNELS_GENERIC || set == LT_KERNELS_NEON;
#endif
}

int lt_kernels_fused(lt_kernel_set set)
{
    switch (set) { /* as meson.build found each set's target (__FP_FAST_FMAF) */
#ifdef LT_KERNELS_FUSED_SSE2
    case LT_KERNELS_SSE2: return 1;
#endif
#ifdef LT_KERNELS_FUSED_AVX
    case LT_KERNELS_AVX: return 1;
#endif
#ifdef LT_KERNELS_FUSED_AVX2
    case LT_KERNELS_AVX2: return 1;
#endif
#ifdef LT_KERNELS_FUSED_AVX512
    case LT_KERNELS_AVX512: return 1;
#endif
#ifdef LT_KERNELS_FUSED_NEON
    case LT_KERNELS_NEON: return 1;
#endif
#ifdef LT_KERNELS_FUSED_GENERIC
    case LT_KERNELS_GENERIC: return 1;
#endif
    default: return 0;
    }
}

int lt_kernels_usable(lt_kernel_set set)
{
    return set >= 0 && set < LT_KERNEL_SETS && built_with(set) && cpu_runs(set);
}

const char *lt_kernels_name(lt_kernel_set set)
{
    return set >= 0 && set < LT_KERNEL_SETS ? set_names[set] : "unknown";
}

static lt_kernel_set best(void)
{
    for (int i = 0; i < PREFERENCES; i++)
        if (lt_kernels_usable(preference[i]))
            return preference[i];
    LT_ASSERT(!"the build has a kernel set its own CPU runs");
    return LT_KERNELS_GENERIC;
}

/* LTBENCH_KERNELS's set, -1 when unset or empty, -2 when it names none. */
static int env_set(void)
{
    const char *name = getenv("LTBENCH_KERNELS");
    if (name == NULL || *name == '\0')
        return -1;
    for (int s = 0; s < LT_KERNEL_SETS; s++)
        if (strcmp(name, set_names[s]) == 0)
            return s;
    return -2;
}

static lt_kernel_set active = LT_KERNEL_SETS; /* not chosen yet */

/* Chosen before main, so no kernel call races the choice. */
__attribute__((constructor)) static void choose(void)
{
    int wanted = env_set();
    active = wanted >= 0 && lt_kernels_usable((lt_kernel_set)wanted) ? (lt_kernel_set)wanted
                                                                      : best();
}

lt_kernel_set lt_kernels_active(void)
{
    if (active == LT_KERNEL_SETS)
        choose();
    return active;
}

lt_status lt_kernels_use(lt_kernel_set set)
{
    if (!lt_kernels_usable(set))
        return lt_fail(LT_E_USAGE, "kernel set %s: not usable here (usable: %s)",
                       lt_kernels_name(set), lt_kernels_usable_list());
    active = set;
    return LT_OK;
}

const char *lt_kernels_usable_list(void)
{
    static char list[64];
    list[0] = '\0';
    for (int i = 0; i < PREFERENCES; i++)
        if (lt_kernels_usable(preference[i])) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                     set_names[preference[i]]);
        }
    return list;
}

lt_status lt_kernels_check_env(void)
{
    int wanted = env_set();
    if (wanted == -1)
        return LT_OK;
    if (wanted >= 0 && lt_kernels_usable((lt_kernel_set)wanted))
        return lt_kernels_use((lt_kernel_set)wanted);
    const char *name = getenv("LTBENCH_KERNELS");
    if (wanted >= 0)
        return lt_fail(LT_E_USAGE,
                       "LTBENCH_KERNELS=%s: %s; expected one of the kernel sets "
                       "this build has and this CPU runs: %s",
                       name, built_with((lt_kernel_set)wanted) ? "this CPU cannot run it"
                                                                : "this build does not have it",
                       lt_kernels_usable_list());
    return lt_fail(LT_E_USAGE,
                   "LTBENCH_KERNELS=%.40s: no such kernel set; expected one of the sets this "
                   "build has and this CPU runs: %s",
                   name, lt_kernels_usable_list());
}
