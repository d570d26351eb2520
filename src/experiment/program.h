/* What every ltbench program shares: the common flags (--threads,
 * --mem-budget, --seed, --quiet), presets, the runtime a benchmark wants
 * (set before the libraries load), MPI start-up, and error reporting that
 * names the flag a library's config field came from. */
#ifndef LT_EXPERIMENT_PROGRAM_H
#define LT_EXPERIMENT_PROGRAM_H

#include <stddef.h>

#include "attn/attn.h"
#include "core/cli.h"
#include "core/status.h"
#include "io/outdir.h"
#include "results/table.h"

typedef struct lt_common {
    long threads;      /* 0: one per core */
    size_t mem_budget; /* bytes; 0: none */
    long seed;
    int quiet;
    /* runs no matrix product itself (the suite starts programs that do):
     * an OPENBLAS_CORETYPE this CPU cannot run is left to them */
    int no_blas;
} lt_common;

enum { LT_COMMON_FLAGS = 4 };

/* Defaults: all cores, a budget of 60% of physical memory, seed 1. */
void lt_common_defaults(lt_common *common);

/* Writes the LT_COMMON_FLAGS flag entries for `common` into `flags`. */
void lt_common_flags(lt_flag *flags, lt_common *common);

/* ---- presets ---- */

enum { LT_PRESETS = 4 };

typedef struct lt_preset_value {
    const char *flag;                  /* "--seq" */
    const char *values[LT_PRESETS]; /* as typed on the command line; NULL: leave */
} lt_preset_value;

typedef struct lt_presets {
    const char *names[LT_PRESETS]; /* "quick", "small", "medium", "paper" */
    const char *about[LT_PRESETS]; /* one line each, for --help */
    const lt_preset_value *values;
    int count;
} lt_presets;

/* Index of a preset by name, or -1. */
int lt_preset_index(const lt_presets *presets, const char *name);

/* The presets' names as a --preset choice list, "quick|small|medium|paper". */
const char *lt_preset_choices(const lt_presets *presets);

/* The presets as a table for --help: a row per flag, a column per preset,
 * then each preset's line. */
void lt_presets_help(const lt_presets *presets, char *buf, size_t size);

/* A program's --help details: its presets' table, then `details`. */
const char *lt_presets_details(const lt_presets *presets, const char *details);

/* ---- parsing ---- */

/* Parses argv for an experiment or an attention tool: restarts once for
 * the runtime (see program.c), prints --help (*exit_now = 1, exit code 0),
 * reports a bad command line (*exit_now = 1 with its exit code; a flag
 * retired from the vocabulary named with what replaced it), starts the MPI
 * ranks and applies the common flags. With `presets`, the default preset
 * (*preset as given) first fills the flags so --help shows its values,
 * then the preset chosen on the command line fills the flags not given. */
int lt_program_parse(lt_cli *cli, const lt_presets *presets, const char *const *preset,
                lt_common *common, int argc, char **argv, int *exit_now);

/* ---- errors ---- */

/* A library config field and the flag that sets it. */
typedef struct lt_field_flag {
    const char *field, *flag;
} lt_field_flag;

/* Reports a failure the way lt_cli_report does, with a library message's
 * leading "field:" replaced by the flag that sets it (pairs of `map`,
 * NULL-ended; may be NULL); returns the exit code. Under MPI, rank 0 says
 * it for every rank. */
int lt_program_report(const char *program, lt_status status, const lt_field_flag *map);

/* ---- outputs ---- */

/* Takes the folder a program writes its CSVs in (--out DIR) for this run:
 * lt_flag_check_out, then lt_outdir_open on it (one writer at a time, each
 * file probed, an existing one refused unless `overwrite`); paths receive
 * DIR/NAME of each of `names`. */
lt_status lt_program_open_csvs(lt_outdir *dir, const char *folder, const char *const *names,
                               int count, int overwrite, char (*paths)[4400]);

/* How a program that fills result tables ends. With `status` LT_OK, each
 * table is committed to its path and freed and "wrote PATH" said on
 * stdout; otherwise the journals stay on disk and the failure is reported
 * (lt_program_report with `map`). Returns the exit status: the failure's,
 * 130 or 143 after Ctrl-C or SIGTERM (the rows measured are written), or 0. */
int lt_program_end_tables(const char *program, lt_status status, lt_table *const *tables,
                          const char *const *paths, int count, const lt_field_flag *map);

/* ---- attention variants ---- */

enum { LT_VARIANT_LABEL = 32 };

typedef struct lt_variant_spec {
    lt_attn_config config;        /* the variant, and what its spec sets (lsh-R: rounds) */
    char label[LT_VARIANT_LABEL]; /* its rows' name: "lsh-4", "linear" */
} lt_variant_spec;

/* Reads one --variants item: a variant name or spec (lt_attn_parse_variant)
 * over `base` (the run's attention settings), labelled as its rows are
 * (lt_attn_variant_label). LT_E_USAGE naming `flag` for an unknown item. */
lt_status lt_program_variant(const char *item, const lt_attn_config *base, lt_variant_spec *out,
                             const char *flag);

/* A whole --variants list, each label at most once. */
lt_status lt_program_parse_variants(char *text, const lt_attn_config *base,
                                    lt_variant_spec *out, int capacity, int *count,
                                    const char *flag);

#endif
