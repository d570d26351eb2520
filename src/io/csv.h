/* Tidy result tables as CSV: a writer that appends provenance to every row
 * and commits the file whole (atomic rename), and a reader that loads a whole
 * table of string cells for `ltbench compare` and `plot`.
 *
 * Cells are quoted as RFC 4180 says when they hold a comma, a quote, CR or LF,
 * or start or end with a space or tab. Rows end with LF; the reader accepts
 * LF and CRLF. */
#ifndef LT_IO_CSV_H
#define LT_IO_CSV_H

#include "core/provenance.h"
#include "core/status.h"
#include "io/atomic.h"

/* The provenance columns lt_csv_open appends after the caller's columns:
 * ltbench_version, git_revision, cpu_model, cpu_id, blas, kernel_isa, date,
 * cores, load_start, load_end, steal_share, omp_wait_policy, build, ranks. The loads
 * are 1-minute load averages at the start of the run and when the row was
 * written, steal_share the share of CPU time the hypervisor took for other
 * guests between the two (so `ltbench compare` can tell a busy machine).
 * cpu_id, steal_share and kernel_isa came after the others: older results
 * lack them. */
#define LT_CSV_PROVENANCE_COLUMNS 14
extern const char *const lt_csv_provenance_columns[LT_CSV_PROVENANCE_COLUMNS];
/* Where git_revision is among them. */
#define LT_CSV_REVISION_COLUMN 1

typedef struct lt_csv {
    lt_atomic_file file;
    int ncols;           /* the caller's columns, provenance not counted */
    int cells;           /* cells written in the current row */
    long long rows;      /* rows ended so far */
    lt_status failure;   /* first failure; once set, close refuses to commit */
    lt_provenance prov;  /* taken once at open, so every row agrees */
} lt_csv;

/* Opens a temporary file beside `path` and writes the header: `columns`
 * (ncols names) then the provenance columns.
 * LT_E_IO if the file cannot be created; LT_E_INTERNAL for no columns or a
 * column name that repeats (including one of the provenance names). */
lt_status lt_csv_open(lt_csv *csv, const char *path, const char *const *columns, int ncols);

/* Syncs the rows so far and renames the file into place, leaving it open
 * for more rows: a journal (NAME.partial) that a killed run leaves for a
 * resume is written whole beside the old one, then only ever extended. */
lt_status lt_csv_publish(lt_csv *csv);

/* Flushes the rows ended so far to disk (journals: at every checkpoint). */
lt_status lt_csv_sync(lt_csv *csv);

/* Closes a published journal: it stays for a later resume. */
void lt_csv_detach(lt_csv *csv);

/* Cell writers, in column order. Writing more than ncols cells in a row is
 * LT_E_INTERNAL. */
lt_status lt_csv_str(lt_csv *csv, const char *value);
lt_status lt_csv_int(lt_csv *csv, long long value);
/* "%.17g" (round-trips every double), `nan`, `inf`, `-inf`. */
lt_status lt_csv_num(lt_csv *csv, double value);

/* Appends the provenance cells and ends the row; LT_E_INTERNAL unless the row
 * had exactly ncols cells. */
lt_status lt_csv_end_row(lt_csv *csv);

/* As lt_csv_end_row, with given provenance cells: a row kept from an
 * earlier run keeps the provenance of the process that measured it. */
lt_status lt_csv_end_row_as(lt_csv *csv, const char *const provenance[LT_CSV_PROVENANCE_COLUMNS]);

/* This process's provenance, taken at the first call (a program's tables
 * call it when they start, which dates the run), so every row a process
 * measures agrees. */
const lt_provenance *lt_csv_process_provenance(void);

/* Its cells as a row ending now gets them (load_end and steal_share now), in
 * lt_csv_provenance_columns order, as strings the caller frees. */
void lt_csv_provenance_now(char *cells[LT_CSV_PROVENANCE_COLUMNS]);

/* Commits the file (rename over `path`). If any earlier call failed or a row
 * is left unfinished, removes the temporary file instead and returns that
 * failure (LT_E_INTERNAL for the unfinished row). */
lt_status lt_csv_close(lt_csv *csv);

/* Drops the temporary file; `path` is untouched. Safe after close. */
void lt_csv_abort(lt_csv *csv);

/* A whole table read into memory: every cell a NUL-terminated string. */
typedef struct lt_csv_table {
    int ncols;
    long long nrows;     /* data rows, header not counted */
    char **names;        /* (ncols) header cells */
    char **cells;        /* (nrows, ncols) row-major */
    char *text;          /* storage the strings point into */
} lt_csv_table;

/* Reads `path`. LT_E_IO if it cannot be read; LT_E_INPUT naming the file and
 * line for a row whose cell count differs from the header's, an unterminated
 * quote, text after a closing quote, a NUL byte, or no header. Empty lines
 * are skipped. */
lt_status lt_csv_read(lt_csv_table *table, const char *path);

/* As lt_csv_read, for a journal a killed run may have left: a last line
 * without its line break was torn by the kill (a row is written whole, then
 * its break) and is left out. */
lt_status lt_csv_read_journal(lt_csv_table *table, const char *path);

/* The cell at (row, col); both must be in range. */
const char *lt_csv_table_cell(const lt_csv_table *table, long long row, int col);

/* Index of the first column called `name`, or -1. */
int lt_csv_table_column(const lt_csv_table *table, const char *name);

/* The rows of `a` then those of `b` in one table: a's columns, then b's
 * that a lacks; a row's cells of the other table's columns are empty. The
 * result owns copies of every string (free it, a and b, independently). */
lt_status lt_csv_table_concat(lt_csv_table *out, const lt_csv_table *a, const lt_csv_table *b);

/* Releases the table's memory and zeroes it; a zeroed table is ignored. */
void lt_csv_table_free(lt_csv_table *table);

#endif
