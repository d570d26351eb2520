/* What every ltbench program shares: the common flags (--threads,
 * --mem-budget, --seed, --quiet), presets, the runtime a benchmark wants
 * (set before the libraries load), MPI start-up, and error reporting that
 * names the flag a library's config field came from. */
#ifndef LT_BENCH_PROGRAM_H
#define LT_BENCH_PROGRAM_H

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

/* ---- presets ---- */

enum { BENCH_PRESETS = 4 };

typedef struct bench_preset_value {
    const char *flag;                  /* "--seq" */
    const char *values[BENCH_PRESETS]; /* as typed on the command line; NULL: leave */
} bench_preset_value;

typedef struct bench_presets {
    const char *names[BENCH_PRESETS]; /* "quick", "small", "medium", "paper" */
    const char *about[BENCH_PRESETS]; /* one line each, for --help */
    const bench_preset_value *values;
    int count;
} bench_presets;

/* Index of a preset by name, or -1. */
int bench_preset_index(const bench_presets *presets, const char *name);

/* The presets' names as a --preset choice list, "quick|small|medium|paper". */
const char *bench_preset_choices(const bench_presets *presets);

/* The presets as a table for --help: a row per flag, a column per preset,
 * then each preset's line. */
void bench_presets_help(const bench_presets *presets, char *buf, size_t size);

/* ---- parsing ---- */

/* Parses argv for an experiment or an attention tool: restarts once for
 * the runtime (see program.c), prints --help (*exit_now = 1, exit code 0),
 * reports a bad command line (*exit_now = 1 with its exit code), starts
 * the MPI ranks and applies the common flags. With `presets`, the default
 * preset (*preset as given) first fills the flags so --help shows its
 * values, then the preset chosen on the command line fills the flags not
 * given. */
int bench_parse(lt_cli *cli, const bench_presets *presets, const char *const *preset,
                bench_common *common, int argc, char **argv, int *exit_now);

/* ---- errors ---- */

/* A library config field and the flag that sets it. */
typedef struct bench_field_flag {
    const char *field, *flag;
} bench_field_flag;

/* Reports a failure the way lt_cli_report does, with a library message's
 * leading "field:" replaced by the flag that sets it (pairs of `map`,
 * NULL-ended; may be NULL); returns the exit code. Under MPI, rank 0 says
 * it for every rank. */
int bench_report(const char *program, lt_status status, const bench_field_flag *map);

/* Splits a comma-separated list (in place) into at most `capacity` items,
 * each at most once (LT_E_USAGE naming `flag` otherwise). */
lt_status bench_split_unique(char *text, const char **items, int capacity, int *count,
                             const char *flag);

/* bench_split_unique of attention variants, each one the core knows. */
lt_status bench_parse_variants(char *text, const char **variants, int capacity, int *count,
                               const char *flag);

#endif
