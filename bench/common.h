/* What every ltbench program shares: the common flags (--threads,
 * --mem-budget, --seed, --quiet), their application, and error reporting. */
#ifndef LT_BENCH_COMMON_H
#define LT_BENCH_COMMON_H

#include <stddef.h>

#include "core/cli.h"
#include "core/status.h"

typedef struct bench_common {
    long threads;      /* 0: one per core */
    size_t mem_budget; /* bytes; 0: none */
    long seed;
    int quiet;
} bench_common;

enum { BENCH_COMMON_FLAGS = 4 };

/* Defaults: all cores, a budget of 60% of physical memory, seed 1. */
void bench_common_defaults(bench_common *common);

/* Writes the BENCH_COMMON_FLAGS flag entries for `common` into `flags`. */
void bench_common_flags(lt_flag *flags, bench_common *common);

/* Applies threads and budget after parsing. */
lt_status bench_common_apply(const bench_common *common);

/* Parses argv with `cli`; prints help and sets *exit_now = 1 (exit code 0)
 * on --help; on failure reports the error and returns its exit code with
 * *exit_now = 1. Otherwise applies the common flags. */
int bench_parse(lt_cli *cli, bench_common *common, int argc, char **argv, int *exit_now);

/* bench_parse for the tools that read result files (compare, plot): they
 * take operands and have none of the common flags. */
int bench_parse_tool(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                     int *exit_now);

/* Splits a --variants list (in place in `text`) into at most `capacity`
 * names and checks each is a known attention variant (LT_E_USAGE naming the
 * bad one otherwise). */
lt_status bench_parse_variants(char *text, const char **variants, int capacity, int *count);

#endif
