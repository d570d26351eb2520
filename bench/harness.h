/* The harness every experiment program shares:
 *
 *   presets   one table of flag values per preset fills the flags the user
 *             did not give and writes the preset part of --help
 *   tables    result rows set cell by cell by column name (one column list
 *             per table; a row with a cell missing or unknown is a bug),
 *             streamed to a journal as they end, committed whole at the end,
 *             printed on stdout
 *   runs      the output folder checked before any work (created, writable,
 *             stale temporaries of killed runs removed, earlier checkpoints
 *             protected unless --resume or --overwrite), journals a resumed
 *             run continues, and every output committed together
 *   signals   Ctrl-C / SIGTERM ask the run to stop after the current unit
 *             of work; a second one stops at once
 *   kernels   --kernel NAME resolved per variant, refused with the list of
 *             kernels that can run the case */
#ifndef LT_BENCH_HARNESS_H
#define LT_BENCH_HARNESS_H

#include <stdio.h>

#include "common.h"
#include "core/cli.h"
#include "core/progress.h"
#include "core/status.h"
#include "core/timer.h"
#include "io/csv.h"
#include "model/train.h"

/* ---- presets ---- */

enum { BENCH_PRESETS = 3 };

typedef struct bench_preset_value {
    const char *flag;                   /* "--seq" */
    const char *values[BENCH_PRESETS];  /* as typed on the command line; NULL: leave */
} bench_preset_value;

typedef struct bench_presets {
    const char *names[BENCH_PRESETS];   /* "quick", "small", "paper" */
    const char *about[BENCH_PRESETS];   /* one line each, for --help */
    const bench_preset_value *values;
    int count;
} bench_presets;

/* Index of a preset by name, or -1. */
int bench_preset_index(const bench_presets *presets, const char *name);

/* Sets every flag of the table that the command line did not give to the
 * preset's value, through the flag parser (so a bad table value is caught
 * like a bad flag). */
lt_status bench_presets_apply(lt_cli *cli, const bench_presets *presets, const char *name);

/* The presets as a table for --help: a row per flag, a column per preset,
 * then each preset's line. */
void bench_presets_help(const bench_presets *presets, char *buf, size_t size);

/* ---- tables ---- */

typedef struct bench_table {
    int ncols;
    const char *const *columns;
    long rows, capacity;
    char **cells;      /* (capacity, ncols) owned strings */
    int open_row;      /* a row is being filled */
    lt_csv journal;    /* rows streamed here as they end, when journaled */
    int journaled;
} bench_table;

/* Result tables are bookkeeping, not measured work: they live on the C heap
 * so that growing them never shows in a run's tracked peak bytes. */
lt_status bench_table_init(bench_table *t, const char *const *columns, int ncols);
void bench_table_free(bench_table *t);

void bench_row_begin(bench_table *t);
void bench_set_str(bench_table *t, const char *column, const char *value);
void bench_set_int(bench_table *t, const char *column, long long value);
/* "%.17g", nan, inf, -inf: exactly what the CSV will hold. */
void bench_set_num(bench_table *t, const char *column, double value);
/* Every cell must be set (an unset or unknown column aborts: a program
 * bug); the row then goes to the journal, if any. */
lt_status bench_row_end(bench_table *t);

/* The cell of a row by column name (NULL for an unknown column). */
const char *bench_cell(const bench_table *t, long row, const char *column);
double bench_cell_num(const bench_table *t, long row, const char *column);

/* Appends row `row` of a table read from an earlier run, cell by cell by
 * name; LT_E_INPUT naming the file and column if it lacks one. */
lt_status bench_row_carry(bench_table *t, const lt_csv_table *from, long long row,
                          const char *from_path);

/* Streams rows to `path`'s journal "<path>.partial" from now on (rows
 * already in the table are written first). */
lt_status bench_table_journal(bench_table *t, const char *path);
/* Flushes the journal to disk. */
lt_status bench_table_sync(bench_table *t);
/* Writes the table to `path` (the journal is renamed there, or a fresh
 * atomic file written). */
lt_status bench_table_commit(bench_table *t, const char *path);
/* Leaves the journal on disk for a resume, `path` untouched. */
void bench_table_detach(bench_table *t);

/* Reads what an earlier run left for `path`: its journal if one exists (a
 * run that did not finish), else the file itself. *found = 0 when neither
 * exists. The path read is written to `read_path`. */
lt_status bench_table_read_previous(lt_csv_table *prev, int *found, const char *path,
                                    char *read_path, size_t size);

/* A column of the stdout summary: header, table column, printf format for
 * the number (scaled), or NULL to print the cell as text. */
typedef struct bench_print_col {
    const char *header;
    const char *column;
    const char *format; /* e.g. "%.4f"; NULL: text */
    double scale;       /* multiplies the number; 0 means 1 */
    int width;
} bench_print_col;

/* Prints a header line and a line per row. Rows whose "status" is not "ok"
 * print their first `key_cols` columns, then the status and "note". */
void bench_table_print(const bench_table *t, const bench_print_col *cols, int count,
                       int key_cols, FILE *out);

/* ---- runs ---- */

typedef struct bench_run {
    char dir[4096];
    int resume, overwrite;
} bench_run;

/* Prepares the output folder before any work: creates it, removes stale
 * temporaries of `files` and `checkpoints` (paths relative to dir) left by
 * killed runs, refuses (LT_E_USAGE naming --resume and --overwrite) when a
 * checkpoint exists and neither was given, and checks that every file can
 * be written (LT_E_IO naming the path). */
lt_status bench_run_open(bench_run *run, const char *dir, int resume, int overwrite,
                         const char *const *files, int file_count,
                         const char *const *checkpoints, int checkpoint_count);

/* dir/name into buf. */
const char *bench_run_path(const bench_run *run, const char *name, char *buf, size_t size);

/* ---- signals ---- */

/* SIGINT and SIGTERM set a flag the run polls; a second one stops at once. */
void bench_signals_install(void);
/* The signal received (0 if none). */
int bench_interrupted(void);
/* 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM. */
int bench_interrupt_exit_code(void);

/* ---- variants and kernels ---- */

/* --kernel: "default" leaves each variant's default kernel. Otherwise the
 * name must be a kernel of one of `variants` that serves `causal`; that
 * variant runs it and the others their defaults. *kernel receives the
 * kernel for `variant` (NULL: default). LT_E_USAGE listing the kernels
 * that can run the case. */
lt_status bench_kernel_for(const char *name, const char *const *variants, int count, int causal,
                           const char *variant, const char **kernel);

/* Library errors name config fields ("layers: ..."); programs print them
 * with their flag ("--layers: ..."). Pairs of {field, flag}, NULL-ended. */
typedef struct bench_field_flag {
    const char *field, *flag;
} bench_field_flag;

/* lt_cli_report with the message's leading "field:" replaced by its flag. */
int bench_report(const char *program, lt_status status, const bench_field_flag *map);

/* ---- the steps every training program takes ---- */

/* Parses argv with the preset table: the default preset (*preset as given)
 * first fills the flags so --help shows its values, then the preset chosen
 * on the command line fills the flags not given. As bench_parse. */
int bench_parse_presets(lt_cli *cli, const bench_presets *presets, const char *const *preset,
                        bench_common *common, int argc, char **argv, int *exit_now);

/* A run's per-update (or per-epoch) curve: reads what an earlier run left
 * for OUT/name when resuming (*prev, *have_prev, prev_path), starts the
 * table and its journal (rank 0). */
lt_status bench_open_curves(bench_table *curves, const char *const *columns, int ncols,
                            const bench_run *run, const char *name, char *path, size_t size,
                            lt_csv_table *prev, int *have_prev, char *prev_path,
                            size_t prev_size);

/* Continues a model from its checkpoint where --resume finds one (rank 0
 * reads it and the earlier curve, carrying the rows of `key_column` = key
 * up to the checkpoint; there must be step / steps_per_row of them), then
 * every rank gets rank 0's state. *carried receives the rows carried. */
lt_status bench_resume(lt_trainer *trainer, const bench_run *run, const char *checkpoint,
                       bench_table *curves, const lt_csv_table *prev, const char *prev_path,
                       const char *key_column, const char *key, long steps_per_row,
                       long *carried);

/* ---- the training loop ---- */

/* What one training run of one model needs from its program. */
typedef struct bench_train_spec {
    const char *label;        /* progress label, e.g. "copy linear N=128" */
    long steps;               /* train until the trainer's step reaches this */
    long checkpoint_every;    /* updates between checkpoints (>= 1) */
    const char *checkpoint;   /* path; written every checkpoint_every updates and at the end */
    int quiet;
    /* Fills the batch for the update after `step` updates (data are a pure
     * function of the step, so a resumed run sees the same batches). */
    lt_status (*make_batch)(void *ctx, long step, lt_batch *batch);
    /* Adds the curve row for the update just done (trainer->step). */
    lt_status (*add_row)(void *ctx, const lt_trainer *trainer, const lt_batch_result *result,
                         double elapsed);
    /* Optional: called after every update; returns a progress note. */
    void (*note)(void *ctx, const lt_batch_result *result, char *buf, size_t size);
    void *ctx;
    bench_table *curves;      /* synced before every checkpoint */
} bench_train_spec;

typedef struct bench_train_result {
    const char *status;       /* ok, interrupted, diverged */
    char note[512];
    long first_step, last_step;
    lt_summary step_time;     /* over this invocation's updates, the first excluded */
    double seconds;           /* this invocation's training time */
    double comm_seconds;      /* of which in communication between ranks */
} bench_train_result;

/* Trains from the trainer's step to spec->steps: one update per batch,
 * a curve row each, checkpoints (after syncing the curves), divergence
 * (lt_divergence: status "diverged", the last checkpoint kept), Ctrl-C /
 * SIGTERM (status "interrupted" after a checkpoint of the update just
 * done). `first_loss` is the run's first loss (NAN when starting). Timing
 * samples go to `step_seconds` (spec->steps doubles). Returns LT_OK for
 * ok, interrupted and diverged; other failures stop the run. */
lt_status bench_train(lt_trainer *trainer, const bench_train_spec *spec, double first_loss,
                      double *step_seconds, bench_train_result *result);

/* Carries rows of `prev` (read from prev_path) into t: those whose
 * `column` equals `value` and whose "step" is at most max_step. *count
 * receives how many. */
lt_status bench_carry_rows(bench_table *t, const lt_csv_table *prev, const char *prev_path,
                           const char *column, const char *value, long max_step, long *count);

/* Over t's rows whose `column` equals `value`: the first row's `metric`,
 * and the mean over the last tenth of them (1 to 50 rows). NAN if none. */
void bench_curve_ends(const bench_table *t, const char *column, const char *value,
                      const char *metric, double *first, double *last_mean);

#endif
