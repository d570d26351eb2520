/* Result CSVs as the tools over results read them: the whole table with its
 * path, which experiment and schema it holds, and cells as numbers, with
 * every error naming the file, row and column. */
#ifndef LT_RESULTS_FILE_H
#define LT_RESULTS_FILE_H

#include <stdio.h>

#include "core/status.h"
#include "io/csv.h"
#include "results/table.h"

typedef struct lt_results_file {
    const char *path;
    lt_csv_table table;
} lt_results_file;

/* Reads `path`; LT_E_INPUT naming it for a malformed CSV or one without data
 * rows, LT_E_IO if it cannot be read. */
lt_status lt_results_read(lt_results_file *file, const char *path);

void lt_results_free(lt_results_file *file);

/* Index of the column, or -1. */
int lt_results_column(const lt_results_file *file, const char *name);

/* The cell at (row, col), or "" when col is -1 (a column the file lacks). */
const char *lt_results_cell(const lt_results_file *file, long long row, int col);

/* The value of the `experiment` column when every row agrees, else NULL. */
const char *lt_results_experiment(const lt_results_file *file);

/* The first of the NULL-terminated `columns` the file lacks, or NULL. */
const char *lt_results_missing(const lt_results_file *file, const char *const *columns);

/* The cell as a number ("nan" and "inf" allowed); LT_E_INPUT naming the
 * file, row and column for anything else, an empty cell included. */
lt_status lt_results_number(double *out, const lt_results_file *file, long long row, int col);

/* Whether the cell holds a whole number as keys do ("128", "0"): such keys
 * are shown as name=value, names ("softmax") alone. */
int lt_results_is_number(const char *text);

/* Appends `value` (or name=value for numbers) to `buf` after a space when
 * `buf` is not empty; keeps `buf` NUL-terminated if it fills. */
void lt_results_label_append(char *buf, size_t size, const char *name, const char *value);

/* The schema of `schemas` the file holds: its experiment column's value
 * names the experiment, and of that experiment's tables the one whose key
 * columns the file has (the one with the most keys when several fit).
 * LT_E_INPUT naming the file and what does not fit otherwise. */
lt_status lt_results_recognise(const lt_schema **out, const lt_results_file *file,
                               const lt_schema *const *schemas, int count);

/* `s` as a JSON string, quoted and escaped: text from a CSV never breaks
 * the JSON the tools write. */
void lt_results_json_string(FILE *f, const char *s);

/* A file of `schema` checked whole, as every tool over results takes it:
 * no two rows the same case (its keys), and in every measured row (status
 * ok) each timing and exact metric a number, each time positive and finite
 * and inside its own min..max. LT_E_INPUT naming the file, row and column. */
lt_status lt_results_check(const lt_results_file *file, const lt_schema *schema);

/* The one reader of result CSVs (compare, plot, the suite's report):
 * lt_results_read, its table recognised among `schemas` (pass one to
 * require it), then lt_results_check. On failure nothing is kept. */
lt_status lt_results_open(lt_results_file *file, const lt_schema **schema, const char *path,
                          const lt_schema *const *schemas, int count);

#endif
