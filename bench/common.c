#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/attn.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/provenance.h"
#include "core/threads.h"

void bench_common_defaults(bench_common *common)
{
    common->threads = 0;
    common->mem_budget = lt_mem_physical() / 10 * 6;
    common->seed = 1;
    common->quiet = 0;
}

void bench_common_flags(lt_flag *flags, bench_common *common)
{
    flags[0] = (lt_flag){"--threads", LT_FLAG_INT, &common->threads, "T",
                         "OpenMP and BLAS threads; 0 = one per core", 0, 4096, NULL, 0};
    flags[1] = (lt_flag){"--mem-budget", LT_FLAG_BYTES, &common->mem_budget, "BYTES",
                         "refuse work whose planned memory exceeds this (e.g. 8G; 0 = no limit)",
                         0, 0, NULL, 0};
    flags[2] = (lt_flag){"--seed", LT_FLAG_INT, &common->seed, "S",
                         "random seed: same seed and threads give the same numbers", 0,
                         2147483647.0, NULL, 0};
    flags[3] = (lt_flag){"--quiet", LT_FLAG_BOOL, &common->quiet, NULL,
                         "no progress on stderr", 0, 0, NULL, 0};
}

lt_status bench_common_apply(const bench_common *common)
{
    LT_TRY(lt_threads_set((int)common->threads));
    lt_mem_set_budget(common->mem_budget);
    return LT_OK;
}

int bench_parse_tool(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                     int *exit_now)
{
    int help = 0;
    *exit_now = 1;
    lt_provenance_mark_start(); /* the load before this program adds its own */
    lt_status status = lt_cli_parse_operands(cli, operands, argc, argv, &help);
    if (status != LT_OK)
        return lt_cli_report(cli->program, status);
    if (help) {
        lt_cli_help_operands(cli, operands, stdout);
        return 0;
    }
    *exit_now = 0;
    return 0;
}

/* OpenMP threads that spin at barriers while another process holds the
 * core make a shared machine collapse (two runs at once took 50x longer);
 * passive waiting degrades in proportion to the load. The runtime reads
 * the policy when it loads, so a program started without one sets it and
 * starts itself again; a policy the user chose is kept. */
static void default_wait_policy(char **argv)
{
    const char *policy = getenv("OMP_WAIT_POLICY");
    if (policy != NULL && *policy != '\0')
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* Could not restart: run on with the runtime's default, which the CSVs
     * then record as "unset" (the runtime read it at load). */
    unsetenv("OMP_WAIT_POLICY");
}

/* Under mpirun: MPI starts here (after the restart above, which must come
 * first); only rank 0 prints results and progress, the others keep stderr
 * for errors. */
static lt_status start_ranks(int *argc, char ***argv, bench_common *common)
{
    LT_TRY(lt_dist_init(argc, argv));
    atexit(lt_dist_finalize);
    if (!lt_dist_is_root()) {
        common->quiet = 1;
        if (freopen("/dev/null", "w", stdout) == NULL)
            return lt_fail(LT_E_IO, "rank %d: cannot silence stdout", lt_dist_rank());
    }
    return LT_OK;
}

int bench_parse(lt_cli *cli, bench_common *common, int argc, char **argv, int *exit_now)
{
    default_wait_policy(argv);
    int code = bench_parse_tool(cli, NULL, argc, argv, exit_now);
    if (*exit_now)
        return code;
    *exit_now = 1;
    lt_status status = start_ranks(&argc, &argv, common);
    if (status == LT_OK)
        status = bench_common_apply(common);
    if (status != LT_OK)
        return lt_cli_report(cli->program, status);
    *exit_now = 0;
    return 0;
}

lt_status bench_parse_variants(char *text, const char **variants, int capacity, int *count)
{
    LT_TRY(lt_cli_split_list(text, variants, capacity, count, "--variants"));
    for (int i = 0; i < *count; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(variants[i], variants[j]) == 0)
                return lt_fail(LT_E_USAGE, "--variants: '%s' is listed twice", variants[i]);
        lt_attn probe;
        lt_attn_config config = lt_attn_default_config(variants[i]);
        if (lt_attn_init(&probe, &config) != LT_OK)
            return lt_fail(LT_E_USAGE, "--variants: expected items from %s, got '%s'",
                           lt_attn_variant_names(), variants[i]);
    }
    return LT_OK;
}
