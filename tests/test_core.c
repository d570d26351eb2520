/* Tests of src/core and src/io/atomic: status, tracked allocator, rng,
 * timer, cli parsing, progress, threads, matrix products, atomic files. */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <omp.h>

#include "check.h"
#include "core/cli.h"
#include "core/gemm.h"
#include "core/kernels.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/runtime.h"
#include "core/status.h"
#include "core/threads.h"
#include "core/timer.h"
#include "io/atomic.h"
#include "kernel_sets.h"

/* Uses `set` when usable (1), else leaves the active set (0). */
static int lt_kernels_use_if_usable(lt_kernel_set set)
{
    return lt_kernels_usable(set) && lt_kernels_use(set) == LT_OK;
}

/* ---- status ---- */

Test(status, message_and_exit_codes)
{
    lt_status s = lt_fail(LT_E_INPUT, "%s: expected %d columns", "x.npy", 3);
    cr_assert_eq(s, LT_E_INPUT);
    cr_assert_str_eq(lt_last_error(), "x.npy: expected 3 columns");
    cr_assert_eq(lt_exit_code(LT_OK), 0);
    cr_assert_eq(lt_exit_code(LT_E_USAGE), 2);
    cr_assert_eq(lt_exit_code(LT_E_INPUT), 2);
    cr_assert_eq(lt_exit_code(LT_E_IO), 2);
    cr_assert_eq(lt_exit_code(LT_E_BUDGET), 2);
    cr_assert_eq(lt_exit_code(LT_E_NUMERIC), 1);
    cr_assert_eq(lt_exit_code(LT_E_NOMEM), 1);
    cr_assert_eq(lt_exit_code(LT_E_SYSTEM), 1);
    cr_assert_str_eq(lt_status_name(LT_E_USAGE), "usage");
    cr_assert_str_eq(lt_status_name(LT_E_SYSTEM), "system");
}

/* The machine's failures (exit 1) apart from paths the user can fix (2). */
/* An OPENBLAS_CORETYPE whose kernels use instructions the CPU lacks is
 * refused, naming them and a core the CPU runs; flags match whole words. */
Test(runtime, openblas_core_the_cpu_cannot_run_is_refused)
{
    const char *zen3 = "flags\t\t: fpu sse2 ssse3 sse4_2 avx f16c fma avx2 bmi2 vaes\n";
    const char *avx512 = "flags\t\t: fpu sse2 avx fma avx2 avx512f avx512dq avx512cd avx512bw "
                         "avx512vl avx512_vnni\n";
    cr_assert_eq(lt_openblas_core_check("SkylakeX", zen3), LT_E_USAGE);
    const char *message = lt_last_error();
    cr_assert(strstr(message, "OPENBLAS_CORETYPE=SkylakeX") != NULL, "%s", message);
    cr_assert(strstr(message, "(avx512f avx512dq avx512cd avx512bw avx512vl)") != NULL, "%s",
              message);
    cr_assert(strstr(message, "name a core this CPU runs (Haswell)") != NULL, "%s", message);
    cr_assert_eq(lt_openblas_core_check("skylakex", avx512), LT_OK);
    cr_assert_eq(lt_openblas_core_check("Haswell", zen3), LT_OK);
    cr_assert_eq(lt_openblas_core_check("ZEN", zen3), LT_OK);
    /* Cooperlake needs bfloat16 too: only that one is missing */
    cr_assert_eq(lt_openblas_core_check("Cooperlake", avx512), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "(avx512_bf16)") != NULL, "%s", lt_last_error());
    cr_assert(strstr(lt_last_error(), "(SkylakeX)") != NULL, "%s", lt_last_error());
    /* "avx2" is not "avx", "avx512fp16" not "avx512f" */
    cr_assert_eq(lt_openblas_core_check("Sandybridge", "flags : sse2 avx2\n"), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "(avx)") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_openblas_core_check("SkylakeX", "flags : avx avx2 fma avx512fp16 avx512dq "
                                                    "avx512cd avx512bw avx512vl\n"),
                 LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "(avx512f)") != NULL, "%s", lt_last_error());
    cr_assert(strstr(lt_last_error(), "(Haswell)") != NULL, "%s", lt_last_error());
    /* no core this CPU runs among those known: only "unset it" */
    cr_assert_eq(lt_openblas_core_check("Haswell", "flags : sse2 sse3\n"), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "unset it") != NULL, "%s", lt_last_error());
    cr_assert(strstr(lt_last_error(), "name a core") == NULL, "%s", lt_last_error());
    /* cores not known here are left to OpenBLAS */
    cr_assert_eq(lt_openblas_core_check("Nehalem", "flags : sse2\n"), LT_OK);
}

Test(status, errno_classes)
{
    const int machine[] = {ENOSPC, EDQUOT, EIO, EFBIG, ENOMEM, EMFILE, ENFILE, ENOBUFS};
    const int path[] = {ENOENT, EACCES, EPERM, ENOTDIR, EISDIR, EROFS, ENAMETOOLONG, EEXIST};
    for (size_t i = 0; i < sizeof machine / sizeof machine[0]; i++)
        cr_expect_eq(lt_errno_status(machine[i]), LT_E_SYSTEM, "%s", strerror(machine[i]));
    for (size_t i = 0; i < sizeof path / sizeof path[0]; i++)
        cr_expect_eq(lt_errno_status(path[i]), LT_E_IO, "%s", strerror(path[i]));
}

static lt_status fails_then_not_reached(int *reached)
{
    LT_TRY(lt_fail(LT_E_IO, "first"));
    *reached = 1;
    return LT_OK;
}

/* Context added to the message already held, passed as an argument. */
Test(status, message_can_wrap_the_last_one)
{
    lt_fail(LT_E_IO, "cannot create folder %s", "/proc/x");
    lt_fail(LT_E_IO, "%s: %s", "--dk", lt_last_error());
    cr_assert_str_eq(lt_last_error(), "--dk: cannot create folder /proc/x");
}

Test(status, try_propagates)
{
    int reached = 0;
    cr_assert_eq(fails_then_not_reached(&reached), LT_E_IO);
    cr_assert_eq(reached, 0);
}

/* ---- tracked allocator ---- */

Test(mem, alignment_current_and_peak)
{
    size_t base = lt_mem_current();
    void *a, *b;
    cr_assert_eq(lt_mem_alloc(&a, 100, "a"), LT_OK);
    cr_assert_eq((uintptr_t)a % 64, 0);
    cr_assert_eq(lt_mem_current(), base + 128);
    lt_mem_reset_peak();
    cr_assert_eq(lt_mem_alloc(&b, 1000, "b"), LT_OK);
    cr_assert_eq((uintptr_t)b % 64, 0);
    cr_assert_eq(lt_mem_current(), base + 128 + 1024);
    lt_mem_free(b);
    cr_assert_eq(lt_mem_current(), base + 128);
    cr_assert_eq(lt_mem_peak(), base + 128 + 1024, "peak remembers the freed block");
    lt_mem_reset_peak();
    cr_assert_eq(lt_mem_peak(), base + 128);
    lt_mem_free(a);
    lt_mem_free(NULL);
    cr_assert_eq(lt_mem_current(), base);
}

Test(mem, calloc_zeroes_and_zero_size_is_valid)
{
    unsigned char *p;
    cr_assert_eq(lt_mem_calloc((void **)&p, 200, "zeros"), LT_OK);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(p[i], 0);
    void *empty;
    cr_assert_eq(lt_mem_alloc(&empty, 0, "empty"), LT_OK);
    cr_assert_not_null(empty);
    lt_mem_free(empty);
    lt_mem_free(p);
}

Test(mem, grow_doubles_and_keeps_the_contents)
{
    int *buf = NULL;
    size_t cap = 0;
    cr_assert_eq(lt_mem_grow((void **)&buf, &cap, 10, sizeof(int), "ints"), LT_OK);
    cr_assert_eq(cap, 64, "starts at 64 elements");
    for (int i = 0; i < 64; i++)
        buf[i] = i * 3;
    int *before = buf;
    cr_assert_eq(lt_mem_grow((void **)&buf, &cap, 64, sizeof(int), "ints"), LT_OK);
    cr_assert(buf == before && cap == 64, "room enough: unchanged");
    cr_assert_eq(lt_mem_grow((void **)&buf, &cap, 300, sizeof(int), "ints"), LT_OK);
    cr_assert_eq(cap, 512, "doubled to the first power of two past 300");
    for (int i = 0; i < 64; i++)
        cr_assert_eq(buf[i], i * 3);
    cr_assert_eq(lt_mem_grow((void **)&buf, &cap, SIZE_MAX / 2, 16, "huge"), LT_E_NOMEM);
    cr_assert(strstr(lt_last_error(), "huge") != NULL, "%s", lt_last_error());
    cr_assert_eq(cap, 512, "a refused growth leaves the buffer");
    lt_mem_free(buf);
}

/* In an AddressSanitizer build the slack after the bytes asked for (and the
 * header before them) is poisoned, so overflows into it are reported. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>

Test(mem, asan_sees_the_rounding_padding)
{
    unsigned char *p;
    cr_assert_eq(lt_mem_alloc((void **)&p, 100, "padded"), LT_OK);
    cr_assert_eq(__asan_region_is_poisoned(p, 100), NULL, "the bytes asked for are usable");
    for (int i = 100; i < 128; i++)
        cr_assert(__asan_address_is_poisoned(p + i), "padding byte %d is not poisoned", i);
    cr_assert(__asan_address_is_poisoned(p - 1), "the header is not poisoned");
    lt_mem_free(p);
}
#endif

Test(mem, budget_refuses_allocation_and_plan)
{
    size_t base = lt_mem_current();
    lt_mem_set_budget(base + 4096);
    void *a = NULL, *b = NULL;
    cr_assert_eq(lt_mem_alloc(&a, 2048, "first"), LT_OK);
    cr_assert_eq(lt_mem_alloc(&b, 4096, "scores (N x N)"), LT_E_BUDGET);
    cr_assert_null(b);
    cr_assert(strstr(lt_last_error(), "scores (N x N)") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_mem_current(), base + 2048, "a refused block is not charged");
    cr_assert_eq(lt_mem_plan(2048, "plan"), LT_OK);
    cr_assert_eq(lt_mem_plan(2049, "big plan"), LT_E_BUDGET);
    cr_assert(strstr(lt_last_error(), "big plan") != NULL);
    lt_mem_set_budget(0);
    cr_assert_eq(lt_mem_plan((size_t)1 << 50, "anything"), LT_OK);
    lt_mem_free(a);
}

Test(mem, parse_bytes)
{
    size_t v;
    cr_assert_eq(lt_mem_parse_bytes(&v, "512M", "--mem-budget"), LT_OK);
    cr_assert_eq(v, (size_t)512 << 20);
    cr_assert_eq(lt_mem_parse_bytes(&v, "1.5GiB", "--mem-budget"), LT_OK);
    cr_assert_eq(v, (size_t)3 << 29);
    cr_assert_eq(lt_mem_parse_bytes(&v, "1000", "--mem-budget"), LT_OK);
    cr_assert_eq(v, 1000);
    cr_assert_eq(lt_mem_parse_bytes(&v, "0", "--mem-budget"), LT_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(lt_mem_parse_bytes(&v, "12X", "--mem-budget"), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "--mem-budget") != NULL);
    cr_assert_eq(lt_mem_parse_bytes(&v, "-5G", "--mem-budget"), LT_E_USAGE);
    cr_assert_eq(lt_mem_parse_bytes(&v, "", "--mem-budget"), LT_E_USAGE);
    /* a fraction of a byte is not "no limit" */
    cr_assert_eq(lt_mem_parse_bytes(&v, "0.5", "--mem-budget"), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "whole number") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_mem_parse_bytes(&v, "0.1B", "--mem-budget"), LT_E_USAGE);
    cr_assert_eq(lt_mem_parse_bytes(&v, "0.5K", "--mem-budget"), LT_OK);
    cr_assert_eq(v, 512);
    cr_assert_gt(lt_mem_physical(), (size_t)1 << 20);
}

/* ---- rng ---- */

Test(rng, deterministic_streams)
{
    lt_rng a, b, c;
    lt_rng_seed(&a, 42, 0);
    lt_rng_seed(&b, 42, 0);
    lt_rng_seed(&c, 42, 1);
    int same_as_other_stream = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = lt_rng_u64(&a);
        cr_assert_eq(x, lt_rng_u64(&b));
        same_as_other_stream += x == lt_rng_u64(&c);
    }
    cr_assert_eq(same_as_other_stream, 0);
}

Test(rng, distributions)
{
    lt_rng r;
    lt_rng_seed(&r, 7, 3);
    enum { COUNT = 200000 };
    double sum = 0, sum_sq = 0;
    int below_counts[10] = {0};
    for (int i = 0; i < COUNT; i++) {
        double u = lt_rng_uniform(&r);
        cr_assert(u >= 0 && u < 1);
        double z = lt_rng_normal(&r);
        sum += z;
        sum_sq += z * z;
        uint64_t k = lt_rng_below(&r, 10);
        cr_assert_lt(k, 10);
        below_counts[k]++;
    }
    cr_assert_lt(fabs(sum / COUNT), 0.01);
    cr_assert_lt(fabs(sum_sq / COUNT - 1.0), 0.02);
    for (int k = 0; k < 10; k++)
        cr_assert_lt(fabs(below_counts[k] / (double)COUNT - 0.1), 0.005);
}

/* ---- timer ---- */

Test(timer, summary_median_min_max)
{
    double samples[] = {5, 1, 4, 2, 3};
    lt_summary s = lt_summarize(samples, 5);
    cr_assert_eq(s.median, 3);
    cr_assert_eq(s.min, 1);
    cr_assert_eq(s.max, 5);
    double even[] = {4, 1, 3, 2};
    cr_assert_eq(lt_summarize(even, 4).median, 2.5);
    cr_assert(isnan(lt_summarize(even, 0).median));
}

static lt_status count_calls(void *ctx)
{
    (*(int *)ctx)++;
    return LT_OK;
}

static lt_status failing_body(void *ctx)
{
    (void)ctx;
    return lt_fail(LT_E_NUMERIC, "diverged");
}

Test(timer, repeat_runs_warmup_then_repeats)
{
    int calls = 0;
    double samples[4];
    lt_summary s;
    cr_assert_eq(lt_time_repeat(&s, samples, count_calls, &calls, 2, 4), LT_OK);
    cr_assert_eq(calls, 6);
    cr_assert_eq(s.count, 4);
    cr_assert(s.min >= 0 && s.min <= s.median && s.median <= s.max);
    cr_assert_eq(lt_time_repeat(&s, samples, failing_body, NULL, 1, 4), LT_E_NUMERIC);
    cr_assert_eq(lt_time_repeat(&s, samples, count_calls, &calls, 0, 0), LT_E_USAGE);
    double t0 = lt_time_now();
    usleep(20000);
    cr_assert_gt(lt_time_now() - t0, 0.015);
}

/* ---- cli ---- */

typedef struct cli_fixture {
    long seq;
    double lr;
    int causal;
    const char *variant;
    const char *out;
    size_t budget;
    lt_flag flags[6];
    lt_cli cli;
} cli_fixture;

static void cli_fixture_init(cli_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->seq = 128;
    f->lr = 1e-3;
    f->variant = "linear";
    f->out = "results/x.csv";
    lt_flag flags[] = {
        {"--seq", LT_FLAG_INT, &f->seq, "N", "sequence length", 1, 65536, NULL, 0},
        {"--lr", LT_FLAG_DOUBLE, &f->lr, "LR", "learning rate", 0, 1, NULL, 0},
        {"--causal", LT_FLAG_BOOL, &f->causal, NULL, "causal mask", 0, 0, NULL, 0},
        {"--variant", LT_FLAG_CHOICE, &f->variant, NULL, "attention", 0, 0, "softmax|linear", 0},
        {"--out", LT_FLAG_STRING, &f->out, "PATH", "output CSV", 0, 0, NULL, 0},
        {"--mem-budget", LT_FLAG_BYTES, &f->budget, "BYTES", "memory budget", 0, 0, NULL, 0},
    };
    memcpy(f->flags, flags, sizeof flags);
    f->cli = (lt_cli){"ltbench test", "A test program.", NULL, f->flags, 6, NULL};
}

static lt_status parse(cli_fixture *f, int argc, char **argv, int *help)
{
    return lt_cli_parse(&f->cli, argc, argv, help);
}

Test(cli, parses_every_type)
{
    cli_fixture f;
    cli_fixture_init(&f);
    char *argv[] = {"prog", "--seq", "8192", "--lr=0.5", "--causal", "--variant", "softmax",
                    "--out", "a.csv", "--mem-budget", "2G"};
    int help;
    cr_assert_eq(parse(&f, 11, argv, &help), LT_OK, "%s", lt_last_error());
    cr_assert_eq(help, 0);
    cr_assert_eq(f.seq, 8192);
    cr_assert_eq(f.lr, 0.5);
    cr_assert_eq(f.causal, 1);
    cr_assert_str_eq(f.variant, "softmax");
    cr_assert_str_eq(f.out, "a.csv");
    cr_assert_eq(f.budget, (size_t)2 << 30);
    cr_assert_eq(lt_cli_flag(&f.cli, "--seq")->seen, 1);
}

Test(cli, rejects_bad_input_naming_the_flag)
{
    struct { int argc; char *argv[3]; const char *mention; } cases[] = {
        {2, {"prog", "--nosuch"}, "--nosuch"},
        {3, {"prog", "--seq", "abc"}, "--seq"},
        {3, {"prog", "--seq", "0"}, "--seq"},
        {3, {"prog", "--seq", "70000"}, "--seq"},
        {2, {"prog", "--seq"}, "--seq"},
        {3, {"prog", "--lr", "nan"}, "--lr"},
        {3, {"prog", "--lr", "2"}, "--lr"},
        {3, {"prog", "--variant", "reformer"}, "softmax|linear"},
        {2, {"prog", "--causal=1"}, "--causal"},
        {2, {"prog", "stray"}, "stray"},
        {3, {"prog", "--mem-budget", "lots"}, "--mem-budget"},
        {3, {"prog", "--out", ""}, "--out"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_fixture f;
        cli_fixture_init(&f);
        int help;
        cr_assert_eq(parse(&f, cases[i].argc, cases[i].argv, &help), LT_E_USAGE, "case %zu", i);
        cr_assert(strstr(lt_last_error(), cases[i].mention) != NULL, "case %zu: %s", i,
                  lt_last_error());
    }
}

/* A retired name is refused with what replaced it, in the programs that
 * had it only; a choice's missing value, or a flag in its place, names the
 * choices; --help and --version are names a typo is matched against. */
Test(cli, retired_names_and_choices_say_what_is_meant)
{
    static const lt_retired_flag retired[] = {
        {"--models", "--variants", "bilstm is one of its items", "speech copy"},
        {"--rounds", "--lsh-rounds", NULL, NULL},
        {NULL, NULL, NULL, NULL},
    };
    struct { const char *program; int argc; char *argv[3]; const char *mention; } cases[] = {
        {"ltbench speech", 3, {"prog", "--models", "x"},
         "--models is now --variants: bilstm is one of its items"},
        {"ltbench copy", 2, {"prog", "--models=x"}, "--models is now --variants"},
        {"ltbench image", 2, {"prog", "--models"}, "unknown flag '--models'"},
        {"ltbench image", 2, {"prog", "--rounds"}, "--rounds is now --lsh-rounds"},
        {"ltbench image", 3, {"prog", "--variant", "--seq"},
         "--variant: expected one of softmax|linear before --seq"},
        {"ltbench image", 2, {"prog", "--variant"}, "--variant: expected a value (softmax|linear)"},
        {"ltbench image", 2, {"prog", "--versoin"}, "(did you mean --version?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_fixture f;
        cli_fixture_init(&f);
        f.cli.program = cases[i].program;
        f.cli.retired = retired;
        int help;
        cr_assert_eq(parse(&f, cases[i].argc, cases[i].argv, &help), LT_E_USAGE, "case %zu", i);
        cr_assert(strstr(lt_last_error(), cases[i].mention) != NULL, "case %zu: %s", i,
                  lt_last_error());
    }
    cr_assert_eq(lt_cli_retired(retired, "ltbench copy", "--models"), &retired[0]);
    cr_assert_null(lt_cli_retired(retired, "ltbench copyx", "--models"));
    cr_assert_eq(lt_cli_retired(retired, "plot", "--rounds"), &retired[1]);
}

Test(cli, help_lists_every_flag_with_default)
{
    cli_fixture f;
    cli_fixture_init(&f);
    char *argv[] = {"prog", "--seq", "99", "--help"};
    int help;
    cr_assert_eq(parse(&f, 4, argv, &help), LT_OK);
    cr_assert_eq(help, 1);
    char buf[4096] = {0};
    FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
    lt_cli_help(&f.cli, mem);
    fclose(mem);
    const char *expected[] = {"--seq N", "default: 99", "--lr LR", "default: 0.001", "--causal",
                              "default: off", "softmax|linear", "default: linear",
                              "--mem-budget", "no limit", "--help"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_assert(strstr(buf, expected[i]) != NULL, "missing '%s' in:\n%s", expected[i], buf);
}

Test(cli, operands_and_one_dash_flags)
{
    cli_fixture f;
    cli_fixture_init(&f);
    f.flags[4].name = "-o";
    const char *files[2];
    lt_cli_operands ops = {"BASE.csv NEW.csv", files, 2, 2, 0};
    char *argv[] = {"prog", "a.csv", "-o", "x.csv", "b.csv"};
    int help;
    cr_assert_eq(lt_cli_parse_operands(&f.cli, &ops, 5, argv, &help), LT_OK, "%s",
                 lt_last_error());
    cr_assert_eq(ops.count, 2);
    cr_assert_str_eq(files[0], "a.csv");
    cr_assert_str_eq(files[1], "b.csv");
    cr_assert_str_eq(f.out, "x.csv");
    struct { int argc; char *argv[4]; const char *mention; } bad[] = {
        {2, {"prog", "a.csv"}, "expected BASE.csv NEW.csv, got 1 file"},
        {4, {"prog", "a.csv", "b.csv", "c.csv"}, "'c.csv'"},
        {2, {"prog", "-x"}, "unknown flag '-x'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(lt_cli_parse_operands(&f.cli, &ops, bad[i].argc, bad[i].argv, &help),
                     LT_E_USAGE, "case %zu", i);
        cr_assert(strstr(lt_last_error(), bad[i].mention) != NULL, "case %zu: %s", i,
                  lt_last_error());
    }
    char buf[4096] = {0};
    FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
    lt_cli_help_operands(&f.cli, &ops, mem);
    fclose(mem);
    cr_assert(strstr(buf, "[flags] BASE.csv NEW.csv") != NULL, "%s", buf);
    cr_assert(strstr(buf, "-o PATH") != NULL, "%s", buf);
}

Test(cli, split_list)
{
    char text[] = "softmax,linear,linformer";
    const char *items[4];
    int count;
    cr_assert_eq(lt_cli_split_list(text, items, 4, &count, "--variants"), LT_OK);
    cr_assert_eq(count, 3);
    cr_assert_str_eq(items[2], "linformer");
    char empty_item[] = "softmax,,linear";
    cr_assert_eq(lt_cli_split_list(empty_item, items, 4, &count, "--variants"), LT_E_USAGE);
    char too_many[] = "a,b,c";
    cr_assert_eq(lt_cli_split_list(too_many, items, 2, &count, "--variants"), LT_E_USAGE);
}

Test(cli, split_increasing)
{
    long v[4];
    int count;
    cr_assert_eq(lt_cli_split_increasing("16,32,256", v, 4, &count, 1, 4096, "--head-dims"),
                 LT_OK, "%s", lt_last_error());
    cr_assert_eq(count, 3);
    cr_assert_eq(v[2], 256);
    struct { const char *text, *mention; } bad[] = {
        {"16,8", "increasing"}, {"16,16", "increasing"}, {"0,16", "'0'"},
        {"16,5000", "'5000'"}, {"16,x", "'x'"}, {"16,,32", "--head-dims"}, {"1,2,3,4,5", "--head-dims"},
        {"12abc", "'12abc'"}, {"", "--head-dims"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(lt_cli_split_increasing(bad[i].text, v, 4, &count, 1, 4096, "--head-dims"),
                     LT_E_USAGE, "%s", bad[i].text);
        cr_expect_neq(strstr(lt_last_error(), bad[i].mention), NULL, "%s: %s", bad[i].text,
                      lt_last_error());
    }
}

/* ---- progress ---- */

Test(progress, plain_lines_and_quiet)
{
    char buf[2048] = {0};
    FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
    lt_progress p;
    lt_progress_start(&p, mem, "copy linear", 10, "steps", 0);
    cr_assert_eq(p.is_terminal, 0);
    lt_progress_update(&p, 3, "loss 2.0");
    lt_progress_finish(&p, "done");
    fclose(mem);
    cr_assert(strstr(buf, "copy linear: 3/10 steps (30%)") != NULL, "%s", buf);
    cr_assert(strstr(buf, "loss 2.0") != NULL);
    cr_assert(strstr(buf, "10/10") == NULL && strstr(buf, "done") != NULL, "%s", buf);

    char quiet_buf[256] = {0};
    mem = fmemopen(quiet_buf, sizeof quiet_buf - 1, "w");
    lt_progress_start(&p, mem, "x", 10, "steps", 1);
    lt_progress_update(&p, 5, NULL);
    lt_progress_finish(&p, NULL);
    fclose(mem);
    cr_assert_str_eq(quiet_buf, "");

    char d[32];
    cr_assert_str_eq(lt_progress_duration(d, sizeof d, 12.34), "12.3s");
    cr_assert_str_eq(lt_progress_duration(d, sizeof d, 185), "3m05s");
    cr_assert_str_eq(lt_progress_duration(d, sizeof d, 3720), "1h02m");
}

/* The terminal line never wraps: at 80 columns a long label and note are
 * cut to 79, the bar narrows; with later work the ETA says when all of it
 * ends, in both forms. */
Test(progress, terminal_line_fits_and_overall_eta)
{
    lt_progress p;
    char buf[2048] = {0};
    FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
    lt_progress_start(&p, mem, "speech softmax 3/5", 1000, "updates", 0);
    lt_progress_set_later(&p, 2000);
    p.start -= 10.0; /* ten seconds in */
    p.done = 100;
    char line[1024];
    const char *note = "loss 2.3127 dev PER 0.4213 and a note long enough to need cutting";
    lt_progress_line(&p, note, 0, 80, line, sizeof line);
    cr_assert_leq(strlen(line), 79, "%zu: %s", strlen(line), line);
    cr_assert(strncmp(line, "speech softmax 3/5 [#.........] 100/1000 updates", 48) == 0, "%s",
              line);
    cr_assert(strstr(line, "ETA 1m30s (all 4m50s)") != NULL, "%s", line);
    lt_progress_line(&p, note, 0, 200, line, sizeof line);
    cr_assert(strstr(line, "[##......................]") != NULL, "%s", line);
    cr_assert(strstr(line, "cutting") != NULL, "whole at 200 columns: %s", line);
    lt_progress_line(&p, NULL, 0, 20, line, sizeof line);
    cr_assert_eq(strlen(line), 19);
    lt_progress_update(&p, 100, NULL);
    fclose(mem);
    cr_assert(strstr(buf, ", ETA 1m30s (all 4m50s)") != NULL, "%s", buf);
}

/* ---- threads ---- */

Test(threads, set_and_get)
{
    cr_assert_eq(lt_threads_set(1), LT_OK);
    cr_assert_eq(lt_threads_get(), 1);
    cr_assert_eq(omp_get_max_threads(), 1);
    cr_assert_eq(lt_threads_set(0), LT_OK);
    cr_assert_eq(lt_threads_get(), lt_threads_available());
    cr_assert_eq(lt_threads_set(-1), LT_E_USAGE);
}

/* Every float in range becomes 0 and none past it is touched, whether the
 * count is split over threads or not, and inside a parallel region. */
Test(threads, zero_floats_exactly_the_range)
{
    const size_t lengths[] = {0, 1, 1000, (1 << 16) - 1, (1 << 16) + 3, 300001};
    const int thread_counts[] = {1, 2, 3};
    for (int t = 0; t < 3; t++) {
        cr_assert_eq(lt_threads_set(thread_counts[t]), LT_OK);
        for (int l = 0; l < 6; l++) {
            size_t n = lengths[l];
            float *x = malloc((n + 8) * sizeof *x);
            cr_assert_not_null(x);
            for (size_t i = 0; i < n + 8; i++)
                x[i] = -1.5f;
            if (l % 2 == 0) {
                lt_zero_floats(x, n);
            } else {
#pragma omp parallel num_threads(2)
#pragma omp single
                lt_zero_floats(x, n);
            }
            for (size_t i = 0; i < n; i++)
                cr_assert(x[i] == 0.0f && !signbit(x[i]), "%zu threads %d: x[%zu] = %g", n,
                          thread_counts[t], i, x[i]);
            for (size_t i = n; i < n + 8; i++)
                cr_assert_eq(x[i], -1.5f, "n=%zu: x[%zu] past the range was written", n, i);
            free(x);
        }
    }
    cr_assert_eq(lt_threads_set(0), LT_OK);
}

/* ---- matrix products ---- */

/* One product's operands, stored with leading dimensions wider than their
 * rows so sub-blocks are addressed as the library does. */
typedef struct gemm_case {
    lt_trans ta, tb;
    int M, N, K, lda, ldb, ldc;
    float alpha, beta;
    float *A, *B, *C0; /* C0: C before the product */
} gemm_case;

static gemm_case gemm_case_of(lt_trans ta, lt_trans tb, int M, int N, int K, uint64_t seed)
{
    gemm_case g = {ta, tb, M, N, K, 0, 0, N + 3, 0.75f, 0.5f, NULL, NULL, NULL};
    int a_rows = ta == LT_T ? K : M, a_cols = ta == LT_T ? M : K;
    int b_rows = tb == LT_T ? N : K, b_cols = tb == LT_T ? K : N;
    g.lda = a_cols + 2;
    g.ldb = b_cols + 1;
    g.A = malloc(sizeof(float) * ((size_t)a_rows * g.lda + 1));
    g.B = malloc(sizeof(float) * ((size_t)b_rows * g.ldb + 1));
    g.C0 = malloc(sizeof(float) * ((size_t)M * g.ldc + 1));
    lt_rng rng;
    lt_rng_seed(&rng, seed, 0);
    lt_rng_fill_uniform(&rng, g.A, (long)a_rows * g.lda, -1, 1);
    lt_rng_fill_uniform(&rng, g.B, (long)b_rows * g.ldb, -1, 1);
    lt_rng_fill_uniform(&rng, g.C0, (long)M * g.ldc, -1, 1);
    return g;
}

static void gemm_case_free(gemm_case *g)
{
    free(g->A);
    free(g->B);
    free(g->C0);
}

enum { GEMM_BLOCKED, GEMM_SERIAL, GEMM_SMALL };

/* C after lt_sgemm (GEMM_BLOCKED), lt_sgemm_serial or lt_sgemm_small;
 * caller frees. */
static float *gemm_run(const gemm_case *g, int form)
{
    size_t n = (size_t)g->M * g->ldc;
    float *C = malloc(sizeof(float) * (n + 1));
    memcpy(C, g->C0, sizeof(float) * n);
    void (*product)(lt_trans, lt_trans, int, int, int, float, const float *, int, const float *,
                    int, float, float *, int) =
        form == GEMM_SMALL ? lt_sgemm_small : form == GEMM_SERIAL ? lt_sgemm_serial : lt_sgemm;
    product(g->ta, g->tb, g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, C,
            g->ldc);
    return C;
}

Test(gemm, equals_double_reference)
{
    /* one block, row blocks, column blocks (the last one short), K = 0;
     * for lt_sgemm_small: ragged register tiles of rows, of 64 and 16
     * columns and of K, B^T transposed on the stack in strips (700 columns
     * at K = 100: strips of 64), folded dot products (K > 512) */
    const int shapes[][3] = {{5, 7, 3},   {300, 70, 50}, {20, 700, 100},
                             {9, 4, 0},   {37, 83, 61},  {9, 21, 600}};
    /* under each of ltbench's kernel sets the build has and the CPU runs */
    const lt_kernel_set was = lt_kernels_active();
    for (int set = 0; set < LT_KERNEL_SETS; set++)
    for (int s = 0; s < 6 && lt_kernels_use_if_usable((lt_kernel_set)set); s++)
        for (int t = 0; t < 4; t++)
            for (int form = GEMM_BLOCKED; form <= GEMM_SMALL; form++) {
                if (form == GEMM_SMALL && t == 3)
                    continue; /* A^T B^T: not offered */
                gemm_case g = gemm_case_of(t & 1 ? LT_T : LT_N, t & 2 ? LT_T : LT_N,
                                           shapes[s][0], shapes[s][1], shapes[s][2], 3);
                float *C = gemm_run(&g, form);
                double worst = 0;
                for (int i = 0; i < g.M; i++)
                    for (int j = 0; j < g.ldc; j++) {
                        double ref = g.C0[(size_t)i * g.ldc + j];
                        if (j < g.N) {
                            double dot = 0;
                            for (int k = 0; k < g.K; k++) {
                                double a = g.ta == LT_T ? g.A[(size_t)k * g.lda + i]
                                                        : g.A[(size_t)i * g.lda + k];
                                double b = g.tb == LT_T ? g.B[(size_t)j * g.ldb + k]
                                                        : g.B[(size_t)k * g.ldb + j];
                                dot += a * b;
                            }
                            ref = g.alpha * dot + g.beta * ref;
                        }
                        double err = fabs(C[(size_t)i * g.ldc + j] - ref);
                        worst = err > worst ? err : worst;
                    }
                cr_expect_lt(worst, 1e-5 * (g.K + 1), "%dx%dx%d trans %d form %d (%s): %g", g.M,
                             g.N, g.K, t, form, lt_kernels_name((lt_kernel_set)set), worst);
                free(C);
                gemm_case_free(&g);
            }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}

/* lt_sgemm_small: an entry's bits do not depend on the tile it fell in
 * (a 1 x 1 product of its row and column gives them: K alone decides),
 * with beta 0 (C is not read: NaN there stays out) and 0.5. */
Test(gemm, small_entries_depend_on_K_only)
{
    const int shapes[][5] = {
        /* trans a, trans b, M, N, K */
        {0, 0, 37, 83, 61}, {1, 0, 37, 83, 61}, {0, 1, 37, 83, 61}, {0, 1, 20, 700, 100},
        {0, 1, 9, 21, 600}, {0, 1, 6, 130, 500},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int nan_c = 0; nan_c <= 1; nan_c++) {
            gemm_case g = gemm_case_of(shapes[s][0] ? LT_T : LT_N, shapes[s][1] ? LT_T : LT_N,
                                       shapes[s][2], shapes[s][3], shapes[s][4], 5);
            if (nan_c) {
                g.beta = 0.0f;
                for (size_t e = 0; e < (size_t)g.M * g.ldc; e++)
                    g.C0[e] = NAN;
            }
            float *C = gemm_run(&g, GEMM_SMALL);
            int differ = 0, nonfinite = 0;
            for (int i = 0; i < g.M; i++)
                for (int j = 0; j < g.N; j++) {
                    const float *a = g.ta == LT_T ? g.A + i : g.A + (size_t)i * g.lda;
                    const float *b = g.tb == LT_T ? g.B + (size_t)j * g.ldb : g.B + j;
                    float one = g.C0[(size_t)i * g.ldc + j];
                    lt_sgemm_small(g.ta, g.tb, 1, 1, g.K, g.alpha, a, g.lda, b, g.ldb, g.beta,
                                   &one, 1);
                    float got = C[(size_t)i * g.ldc + j];
                    differ += memcmp(&one, &got, sizeof got) != 0;
                    nonfinite += !isfinite(got);
                }
            cr_expect_eq(differ, 0, "%dx%dx%d trans %d%d beta %g: %d entries differ from 1 x 1",
                         g.M, g.N, g.K, shapes[s][0], shapes[s][1], g.beta, differ);
            cr_expect_eq(nonfinite, 0, "%dx%dx%d beta %g: %d entries not finite", g.M, g.N, g.K,
                         g.beta, nonfinite);
            free(C);
            gemm_case_free(&g);
        }
}

/* lt_sgemm_small under each kernel set: the sets with fused multiply-adds
 * (avx512, avx2), whose tiles and vector widths differ, give the same
 * bits (equals_double_reference holds every set to the double reference).
 * Every form: outer
 * tiles and ragged columns, B^T in strips, dot products (K > 512). */
Test(gemm, small_same_bits_on_every_fused_kernel_set)
{
    const lt_kernel_set was = lt_kernels_active();
    const int shapes[][5] = {{0, 0, 37, 83, 61}, {1, 0, 37, 83, 61}, {0, 1, 37, 83, 61},
                             {0, 1, 20, 700, 100}, {0, 1, 9, 21, 600}, {0, 1, 6, 130, 517}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        gemm_case g = gemm_case_of(shapes[s][0] ? LT_T : LT_N, shapes[s][1] ? LT_T : LT_N,
                                   shapes[s][2], shapes[s][3], shapes[s][4], 7);
        float *first = NULL;
        for (int set = 0; set < LT_KERNEL_SETS; set++) {
            if (!lt_kernels_usable((lt_kernel_set)set) || set == LT_KERNELS_SSE2 ||
                set == LT_KERNELS_AVX || set == LT_KERNELS_GENERIC)
                continue;
            cr_assert_eq(lt_kernels_use((lt_kernel_set)set), LT_OK);
            float *C = gemm_run(&g, GEMM_SMALL);
            if (first == NULL) {
                first = C;
                continue;
            }
            cr_expect(memcmp(C, first, sizeof(float) * (size_t)g.M * g.ldc) == 0,
                      "%dx%dx%d trans %d%d: %s differs from the first fused set", g.M, g.N, g.K,
                      shapes[s][0], shapes[s][1], lt_kernels_name((lt_kernel_set)set));
            free(C);
        }
        free(first);
        gemm_case_free(&g);
    }
    cr_assert_eq(lt_kernels_use(was), LT_OK);
}

Test(gemm, blocks_depend_on_the_shape_only)
{
    cr_expect_eq(lt_sgemm_blocks(0, 5, 5), 0);
    cr_expect_eq(lt_sgemm_blocks(10, 10, 10), 1);
    cr_expect_eq(lt_sgemm_blocks(100, 100, 100000), 1, "pieces of 50 rows are too short");
    cr_expect_eq(lt_sgemm_blocks(128, 64, 4096), 2);
    cr_expect_eq(lt_sgemm_blocks(1024, 1024, 1024), 16, "pieces of 64 rows");
    cr_expect_eq(lt_sgemm_blocks(64, 4096, 16), 8, "pieces of 2^19 multiply-adds");
    cr_expect_eq(lt_sgemm_blocks(64, 8192, 64), 16, "16 pieces at most");
    /* 2 pieces of 150 rows, rounded up to 160: blocks of 160 and 140 */
    cr_expect_eq(lt_sgemm_blocks(300, 70, 50), 2);
    cr_expect_eq(lt_sgemm_blocks(520, 64, 128), 7, "8 pieces of 65 rows, rounded up to 80: 7");
}

/* The same bits from 1, 2 and 3 threads and from inside a parallel region,
 * for products OpenBLAS would split between its threads (several blocks,
 * or one block of more than 65536 x 4 multiply-adds), under every kernel
 * set the CPU runs. */
Test(gemm, same_bits_for_any_thread_count)
{
    check_every_kernel_set();
    const int shapes[][5] = {
        /* trans a, trans b, M, N, K */
        {0, 1, 160, 1024, 32}, {0, 0, 16, 256, 1024}, {1, 0, 1024, 32, 160},
        {1, 0, 256, 256, 640}, {0, 1, 48, 48, 2048},  {0, 0, 333, 77, 64},
    };
    int saved = omp_get_max_threads();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int serial = GEMM_BLOCKED; serial <= GEMM_SERIAL; serial++) {
            gemm_case g = gemm_case_of(shapes[s][0] ? LT_T : LT_N, shapes[s][1] ? LT_T : LT_N,
                                       shapes[s][2], shapes[s][3], shapes[s][4], 11);
            size_t bytes = sizeof(float) * (size_t)g.M * g.ldc;
            omp_set_num_threads(1);
            float *one = gemm_run(&g, serial);
            for (int threads = 2; threads <= 3; threads++) {
                omp_set_num_threads(threads);
                float *more = gemm_run(&g, serial);
                cr_expect(memcmp(one, more, bytes) == 0, "%dx%dx%d, serial %d: %d threads differ",
                          g.M, g.N, g.K, serial, threads);
                free(more);
            }
            float *inside = NULL;
#pragma omp parallel num_threads(2)
            {
#pragma omp single
                inside = gemm_run(&g, serial);
            }
            cr_expect(memcmp(one, inside, bytes) == 0,
                      "%dx%dx%d, serial %d: inside a parallel region differs", g.M, g.N, g.K,
                      serial);
            free(inside);
            free(one);
            gemm_case_free(&g);
        }
    omp_set_num_threads(saved);
}

/* ---- atomic files ---- */

Test(atomic, commit_replaces_abort_leaves_nothing)
{
    char dir[] = "/tmp/lt_atomic_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/sub/deeper/out.txt", dir);

    lt_atomic_file af;
    cr_assert_eq(lt_atomic_open(&af, path), LT_OK);
    fputs("first", af.f);
    cr_assert_eq(access(path, F_OK), -1, "target must not exist before commit");
    cr_assert_eq(lt_atomic_commit(&af), LT_OK);

    cr_assert_eq(lt_atomic_open(&af, path), LT_OK);
    fputs("second, never committed", af.f);
    lt_atomic_abort(&af);

    char sub[256];
    snprintf(sub, sizeof sub, "%s/sub/deeper", dir);
    cr_assert_eq(check_count_entries(sub), 1, "no temporary file may remain");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    cr_assert_eq(st.st_mode & 0777, 0666 & ~mask, "permissions follow the umask");
    FILE *f = fopen(path, "r");
    char text[64] = {0};
    cr_assert_not_null(fgets(text, sizeof text, f));
    fclose(f);
    cr_assert_str_eq(text, "first");
}

Test(atomic, unwritable_paths_fail_cleanly)
{
    char dir[] = "/tmp/lt_atomic_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file_as_parent[256], path[300];
    snprintf(file_as_parent, sizeof file_as_parent, "%s/plain", dir);
    FILE *f = fopen(file_as_parent, "w");
    fclose(f);
    snprintf(path, sizeof path, "%s/out.csv", file_as_parent);
    lt_atomic_file af;
    cr_assert_eq(lt_atomic_open(&af, path), LT_E_IO);
    cr_assert(strstr(lt_last_error(), "plain") != NULL, "%s", lt_last_error());
    cr_assert_eq(lt_atomic_open(&af, dir), LT_E_IO, "a folder is not a file");
    cr_assert_eq(lt_atomic_open(&af, "/proc/no/such/out.csv"), LT_E_IO, "a bad --out: exit 2");
    cr_assert(strstr(lt_last_error(), "cannot create folder /proc/no") != NULL, "%s",
              lt_last_error());
    cr_assert_eq(lt_atomic_open(&af, ""), LT_E_IO);
    cr_assert_eq(check_count_entries(dir), 1);
}
