/* Kernel sets: the hand-tiled kernels (small products, few-row products,
 * panels) compiled once per instruction set the build targets, and the one
 * this process uses.
 *
 * A native build (-Dnative=true, or -march= in the build's c_args) has one
 * set, for the CPU it was built for. A portable x86-64 build has three,
 * picked at run time from cpuid, as OpenBLAS's dynamic-arch builds pick
 * theirs: avx512 (x86-64-v4), avx2 (x86-64-v3: AVX2 and FMA), sse2 (any
 * x86-64). LTBENCH_KERNELS=NAME asks for another set the build has and the
 * CPU runs (to compare them, or to test each). Every result records the
 * set (provenance column kernel_isa). */
#ifndef LT_CORE_KERNELS_H
#define LT_CORE_KERNELS_H

#include "core/status.h"

typedef enum lt_kernel_set {
    LT_KERNELS_SSE2,   /* 4 floats, no fused multiply-add: any x86-64 */
    LT_KERNELS_AVX,    /* 8 floats, no fused multiply-add (a native build only) */
    LT_KERNELS_AVX2,   /* 8 floats, FMA: x86-64-v3 */
    LT_KERNELS_AVX512, /* 16 floats, FMA, 32 registers: x86-64-v4 */
    LT_KERNELS_NEON,   /* 4 floats, FMA, 32 registers: aarch64 */
    LT_KERNELS_GENERIC,/* 4 floats as GCC's generic vectors: any other CPU */
    LT_KERNEL_SETS
} lt_kernel_set;

/* The set in use: the best the build has and the CPU runs, or the one
 * LTBENCH_KERNELS named when it is valid. */
lt_kernel_set lt_kernels_active(void);

/* "avx512", "avx2", "sse2", ... */
const char *lt_kernels_name(lt_kernel_set set);

/* 1 when `set` fuses multiply-adds (one rounding for a b + c): its sums
 * differ from the others' in their last bits. */
int lt_kernels_fused(lt_kernel_set set);

/* 1 when this build has `set` and this CPU runs it. */
int lt_kernels_usable(lt_kernel_set set);

/* Uses `set` from now on (tests); LT_E_USAGE naming it when it is not
 * usable. Not while kernels run on other threads. */
lt_status lt_kernels_use(lt_kernel_set set);

/* Checks LTBENCH_KERNELS: unset or empty is the default; a set the build
 * lacks or the CPU cannot run is LT_E_USAGE naming the variable and the
 * usable sets. Programs call it once at start. */
lt_status lt_kernels_check_env(void);

/* The usable sets' names, best first, joined by ", " (messages, --help). */
const char *lt_kernels_usable_list(void);

/* The table of `T` the active set's copy of a kernel source exports as
 * NAME_<set> (see LT_KERNEL_EXPORT). Builds pass -DLT_HAVE_KERNELS_<SET>
 * for each set they compile. */
#define LT_KERNEL_CASE_(T, NAME, SET, set)                                                     \
    case LT_KERNELS_##SET: {                                                                   \
        extern const T NAME##_##set;                                                          \
        return &NAME##_##set;                                                                  \
    }
#ifdef LT_HAVE_KERNELS_SSE2
#define LT_KERNEL_CASE_SSE2_(T, NAME) LT_KERNEL_CASE_(T, NAME, SSE2, sse2)
#else
#define LT_KERNEL_CASE_SSE2_(T, NAME)
#endif
#ifdef LT_HAVE_KERNELS_AVX
#define LT_KERNEL_CASE_AVX_(T, NAME) LT_KERNEL_CASE_(T, NAME, AVX, avx)
#else
#define LT_KERNEL_CASE_AVX_(T, NAME)
#endif
#ifdef LT_HAVE_KERNELS_AVX2
#define LT_KERNEL_CASE_AVX2_(T, NAME) LT_KERNEL_CASE_(T, NAME, AVX2, avx2)
#else
#define LT_KERNEL_CASE_AVX2_(T, NAME)
#endif
#ifdef LT_HAVE_KERNELS_AVX512
#define LT_KERNEL_CASE_AVX512_(T, NAME) LT_KERNEL_CASE_(T, NAME, AVX512, avx512)
#else
#define LT_KERNEL_CASE_AVX512_(T, NAME)
#endif
#ifdef LT_HAVE_KERNELS_NEON
#define LT_KERNEL_CASE_NEON_(T, NAME) LT_KERNEL_CASE_(T, NAME, NEON, neon)
#else
#define LT_KERNEL_CASE_NEON_(T, NAME)
#endif
#ifdef LT_HAVE_KERNELS_GENERIC
#define LT_KERNEL_CASE_GENERIC_(T, NAME) LT_KERNEL_CASE_(T, NAME, GENERIC, generic)
#else
#define LT_KERNEL_CASE_GENERIC_(T, NAME)
#endif

/* Defines `static const T *FN(void)`, returning the active set's table. */
#define LT_KERNEL_TABLE(T, NAME, FN)                                                           \
    static const T *FN(void)                                                                   \
    {                                                                                          \
        switch (lt_kernels_active()) {                                                         \
            LT_KERNEL_CASE_SSE2_(T, NAME)                                                      \
            LT_KERNEL_CASE_AVX_(T, NAME)                                                       \
            LT_KERNEL_CASE_AVX2_(T, NAME)                                                      \
            LT_KERNEL_CASE_AVX512_(T, NAME)                                                    \
            LT_KERNEL_CASE_NEON_(T, NAME)                                                      \
            LT_KERNEL_CASE_GENERIC_(T, NAME)                                                   \
        default: break;                                                                        \
        }                                                                                      \
        LT_ASSERT(!"the active kernel set is one the build has");                              \
        return NULL;                                                                           \
    }

/* Element-wise passes (exponentials, feature maps, softmax rows), written
 * as plain loops the compiler vectorises: in a portable x86-64 build
 * (LT_KERNELS_PORTABLE) compiled also for x86-64-v4 and -v3 from one body,
 * the active kernel set choosing, so a portable binary runs them at the
 * CPU's width as the native build does. LT_PER_KERNEL_SET(linkage, name,
 * params, args) defines `linkage void name params`, calling name##_body
 * args (a static inline always_inline function: inlined into each copy).
 * Without fused multiply-adds (this code is not built with
 * -ffp-contract=fast) each copy computes the same bits, provided its sums
 * do not follow the vector width (lanes.h's lt_wide_total). An OpenMP
 * region in the body would be outlined before it is copied, at the build's
 * base width: the copies go inside the regions. */
#ifdef LT_KERNELS_PORTABLE
#define LT_PER_KERNEL_SET(linkage, name, params, args)                                          \
    __attribute__((target("arch=x86-64-v4"))) static void name##_avx512 params                 \
    {                                                                                          \
        name##_body args;                                                                      \
    }                                                                                          \
    __attribute__((target("arch=x86-64-v3"))) static void name##_avx2 params                   \
    {                                                                                          \
        name##_body args;                                                                      \
    }                                                                                          \
    linkage void name params                                                                   \
    {                                                                                          \
        switch (lt_kernels_active()) {                                                         \
        case LT_KERNELS_AVX512: name##_avx512 args; break;                                     \
        case LT_KERNELS_AVX2: name##_avx2 args; break;                                         \
        default: name##_body args; break;                                                      \
        }                                                                                      \
    }
#else
#define LT_PER_KERNEL_SET(linkage, name, params, args)                                          \
    linkage void name params { name##_body args; }
#endif

/* In a kernel source (compiled once per set with -DLT_KERNEL_SET=<set>):
 * the name of its exported table, NAME_<set>. */
#define LT_KERNEL_PASTE2_(a, b) a##_##b
#define LT_KERNEL_PASTE_(a, b) LT_KERNEL_PASTE2_(a, b)
#define LT_KERNEL_EXPORT(NAME) LT_KERNEL_PASTE_(NAME, LT_KERNEL_SET)

#endif
