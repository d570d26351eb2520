/* Result tables: each table's columns declared once, with what they are
 * (the role compare judges them by, the better direction, the unit, how
 * they print), and the rows a run fills cell by cell.
 *
 * A schema is the one place a column is named. The experiments set cells by
 * it, `ltbench compare` judges the metrics it declares, `ltbench plot` draws
 * the figures declared beside it, and `ltbench suite` prints the columns it
 * marks as shown: adding a column is one line in a schema.
 *
 * Rows are streamed to a journal (NAME.partial) as they end, so a killed run
 * leaves them for --resume, and committed whole at the end (atomic rename).
 * Tables are bookkeeping, not measured work: they live on the C heap so that
 * growing them never shows in a run's tracked peak bytes. */
#ifndef LT_RESULTS_TABLE_H
#define LT_RESULTS_TABLE_H

#include <stdio.h>

#include "core/status.h"
#include "io/csv.h"

typedef enum lt_col_role {
    LT_COL_KEY,    /* identifies a case: compare matches rows on the keys */
    LT_COL_SETUP,  /* how it ran (threads): must agree for numbers to compare */
    LT_COL_TIMING, /* noisy: judged against a threshold and the runs' spread */
    LT_COL_EXACT,  /* deterministic for the same seed and threads: any change counts */
    LT_COL_INFO,   /* listed by compare --all, never judged */
    LT_COL_NOTE    /* recorded only: status, notes, settings, bookkeeping */
} lt_col_role;

typedef struct lt_column {
    const char *name;
    lt_col_role role;
    int higher_is_better; /* TIMING, EXACT */
    const char *unit;     /* base unit, for --json ("s", "bytes", "nats") */
    /* TIMING: the time whose median/min/max columns (SPREAD_median_s,
     * SPREAD_min_s, SPREAD_max_s) give this metric's spread; `rate` when
     * the metric is a rate of that time. NULL: a point. */
    const char *spread;
    int rate;
    int label;            /* KEY: always names the case in compare's report */
    /* KEY: added after results were written without it; a file that lacks
     * it still is of the table, and compare matches two such files on the
     * other keys (a file that has it against one that lacks it is an
     * error: their cases may differ in it) */
    int older_files_lack;
    /* EXACT: the same on any CPU, BLAS and kernel set (FLOP counts, planned
     * and peak bytes, parameters), so judged exactly across machines too;
     * other exact metrics (losses) follow the arithmetic's order and are
     * judged bit for bit only where BLAS and kernel set agree */
    int cpu_independent;
    /* Printed by the program and in the suite's report when `header` is
     * set: printf `format` of the value times `scale` (0 = 1); text when
     * format is NULL. */
    const char *header, *format;
    double scale;
    /* Where a program takes the value from without code of its own: the
     * flag whose value it is ("--layers"), or "$model", "$kernel",
     * "$threads", "$experiment" (see the driver). NULL: set by the program. */
    const char *from;
} lt_column;

/* A figure of `ltbench plot`, drawn from one table: a panel or two of
 * y against x (LINES), or bars of y per cluster value (BARS). */
typedef enum lt_figure_style { LT_FIGURE_LINES, LT_FIGURE_BARS } lt_figure_style;

enum { LT_FIGURE_SERIES_KEYS = 4, LT_FIGURE_CONTEXT = 5 };

typedef struct lt_panel {
    const char *x, *y; /* columns; BARS use no x */
    const char *xlabel, *ylabel;
    double y_scale;    /* the plot shows y / y_scale (bytes as MiB) */
    int log_x, log_y;
} lt_panel;

typedef struct lt_figure {
    const char *name;  /* NAME.png, NAME.gp, NAME.dat */
    const char *title;
    lt_figure_style style;
    /* One series per combination of these columns' values; the first
     * `title_keys` always name it, the others where they tell series
     * apart. */
    const char *series[LT_FIGURE_SERIES_KEYS + 1];
    int title_keys;
    const char *cluster; /* BARS: the column whose values are a group's bars */
    lt_panel panels[2];  /* a second panel with no y: one panel */
    /* Columns whose first-row values say under the title what was run. */
    const char *context[LT_FIGURE_CONTEXT + 1];
    /* BARS: a last bar cluster with the paper's values, from the CSV of
     * the paper folder that paper_files names (pairs of a value of column
     * paper_by in the first row, and a file name; NULL-ended). A series
     * takes the value of the paper's row whose "method" equals its first
     * key (case aside), column paper_y[panel] (NULL: none in that panel). */
    const char *paper_by;
    const char *paper_files[8];
    const char *paper_y[2];
    const char *paper_label;
} lt_figure;

typedef struct lt_schema {
    const char *name;       /* "copy summary" */
    const char *experiment; /* the value of its experiment column */
    const lt_column *columns;
    int ncols;
    const lt_figure *figures; /* drawn by ltbench plot; may be NULL */
    int nfigures;
} lt_schema;

/* Panels a figure draws: 1 or 2. */
int lt_figure_panels(const lt_figure *figure);

/* Index of a column by name, or -1. */
int lt_schema_column(const lt_schema *schema, const char *name);

/* LT_E_INTERNAL naming the first problem: a repeated column, a figure or a
 * spread that names a column the table lacks. The tests check every
 * schema with it. */
lt_status lt_schema_check(const lt_schema *schema);

/* ---- rows ---- */

typedef struct lt_table {
    const lt_schema *schema;
    long rows, capacity;
    char **cells;      /* (capacity, ncols) owned strings */
    /* (capacity, LT_CSV_PROVENANCE_COLUMNS) owned strings: who measured each
     * row, set when it ends (this process) or carried with it (an earlier
     * run's row keeps its revision, date and loads) */
    char **provenance;
    int open_row;      /* a row is being filled */
    lt_csv journal;    /* rows streamed here as they end, when journaled */
    int journaled;
    int holding;       /* rows from held_from on wait for lt_table_release */
    long held_from;
    /* When set, rows that end get this git_revision instead of this
     * process's: a model trained by several revisions names them all. */
    const char *revision;
} lt_table;

void lt_table_init(lt_table *t, const lt_schema *schema);
void lt_table_free(lt_table *t);

void lt_row_begin(lt_table *t);
void lt_set_str(lt_table *t, const char *column, const char *value);
void lt_set_int(lt_table *t, const char *column, long long value);
/* "%.17g", nan, inf, -inf: exactly what the CSV will hold. */
void lt_set_num(lt_table *t, const char *column, double value);
/* A timing's samples (seconds), space-separated in one cell, 6 significant
 * digits each: what a statistic over repeats reads back. At most
 * LT_SAMPLES_MAX. */
enum { LT_SAMPLES_MAX = 100 };
void lt_set_samples(lt_table *t, const char *column, const double *samples, int count);
/* Every cell must be set (an unset or unknown column aborts: a program
 * bug); the row then goes to the journal, if any. */
lt_status lt_row_end(lt_table *t);

/* Replaces a cell of a finished row (a value that needs later rows, such
 * as a speed-up over another variant). The committed file holds it; the
 * journal keeps what the row had when it ended. */
void lt_table_update_num(lt_table *t, long row, const char *column, double value);

/* The cell of a row by column name (NULL for an unknown column). */
const char *lt_cell(const lt_table *t, long row, const char *column);
double lt_cell_num(const lt_table *t, long row, const char *column);

/* Appends row `row` of a table read from an earlier run, cell by cell by
 * name, with its provenance cells when the file has them; LT_E_INPUT naming
 * the file and column if it lacks one of the schema's. */
lt_status lt_row_carry(lt_table *t, const lt_csv_table *from, long long row,
                       const char *from_path);

/* Rows of a table an earlier run left that a journal keeps: those `keep`
 * accepts. */
typedef struct lt_table_more {
    const lt_csv_table *rows;
    const char *path; /* where they were read, for messages */
    int (*keep)(void *ctx, const lt_csv_table *rows, long long row);
    void *ctx;
} lt_table_more;

/* Streams rows to "<path>.partial" from now on. The journal is written
 * whole beside any old one (the table's rows, then `more`'s kept rows;
 * `more` may be NULL), synced and renamed into place: a journal on disk
 * never holds fewer rows than a resume needs, even when the run is killed
 * while writing it. Called again, it rewrites the journal the same way.
 * Rank 0 only; elsewhere a no-op. */
lt_status lt_table_journal(lt_table *t, const char *path, const lt_table_more *more);
/* Holds the rows ended from now on back from the journal: rows that only
 * mean something together (a model's evaluation and generation rows)
 * reach it whole or not at all, so a run killed halfway through them
 * leaves --resume nothing that looks finished. */
void lt_table_hold(lt_table *t);
/* Journals the held rows: the work they belong to is done. */
lt_status lt_table_release(lt_table *t);
/* Drops the held rows from the table: the work they belong to was cut off. */
void lt_table_drop_held(lt_table *t);
/* Flushes the journal to disk. */
lt_status lt_table_sync(lt_table *t);
/* Writes the table's rows to `path` (atomically), then removes the
 * journal. Rank 0 only. */
lt_status lt_table_commit(lt_table *t, const char *path);
/* Leaves the journal on disk for a resume, `path` untouched. */
void lt_table_detach(lt_table *t);

/* What an earlier run left for `path`: its journal (journal = 1: the rows
 * of a run that did not finish) or the file (journal = 0: of one that did).
 * *found = 0 when it does not exist; the path read goes to `read_path`. */
lt_status lt_table_read_previous(lt_csv_table *prev, int *found, const char *path, int journal,
                                 char *read_path, size_t size);

/* Prints the shown columns (lt_column.header) of every row, aligned. Rows
 * whose "status" is not "ok" print their shown key columns, then the
 * status and "note". */
void lt_table_print(const lt_table *t, FILE *out);

/* The same columns of a CSV read back, as a Markdown table. */
void lt_table_markdown(const lt_schema *schema, const lt_csv_table *rows, FILE *out);

/* Over t's rows whose `column` equals `value`: the first row's `metric`,
 * and the mean over the last tenth of them (1 to 50 rows). NAN if none. */
void lt_table_curve_ends(const lt_table *t, const char *column, const char *value,
                         const char *metric, double *first, double *last_mean);

#endif
