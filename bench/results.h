/* Result CSVs as `ltbench compare` and `ltbench plot` read them: the whole
 * table with its path, which experiment it holds, and cells as numbers, with
 * every error naming the file, row and column. */
#ifndef LT_BENCH_RESULTS_H
#define LT_BENCH_RESULTS_H

#include "core/status.h"
#include "io/csv.h"

typedef struct results_file {
    const char *path;
    lt_csv_table table;
} results_file;

/* Reads `path`; LT_E_INPUT naming it for a malformed CSV or one without data
 * rows, LT_E_IO if it cannot be read. */
lt_status results_read(results_file *file, const char *path);

void results_free(results_file *file);

/* Index of the column, or -1. */
int results_column(const results_file *file, const char *name);

/* The cell at (row, col), or "" when col is -1 (a column the file lacks). */
const char *results_cell(const results_file *file, long long row, int col);

/* The value of the `experiment` column when every row agrees, else NULL. */
const char *results_experiment(const results_file *file);

/* The first of the NULL-terminated `columns` the file lacks, or NULL. */
const char *results_missing(const results_file *file, const char *const *columns);

/* The cell as a number ("nan" and "inf" allowed); LT_E_INPUT naming the
 * file, row and column for anything else, an empty cell included. */
lt_status results_number(double *out, const results_file *file, long long row, int col);

/* Whether the cell holds a whole number as keys do ("128", "0"): such keys
 * are shown as name=value, names ("softmax") alone. */
int results_is_number(const char *text);

/* Appends `value` (or name=value for numbers) to `buf` after a space when
 * `buf` is not empty; keeps `buf` NUL-terminated if it fills. */
void results_label_append(char *buf, size_t size, const char *name, const char *value);

#endif
