#include "results/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lt_status lt_results_read(lt_results_file *file, const char *path)
{
    file->path = path;
    LT_TRY(lt_csv_read(&file->table, path));
    if (file->table.nrows == 0) {
        lt_csv_table_free(&file->table);
        return lt_fail(LT_E_INPUT, "%s: no data rows, expected a result table", path);
    }
    return LT_OK;
}

void lt_results_free(lt_results_file *file) { lt_csv_table_free(&file->table); }

int lt_results_column(const lt_results_file *file, const char *name)
{
    return lt_csv_table_column(&file->table, name);
}

const char *lt_results_cell(const lt_results_file *file, long long row, int col)
{
    return col < 0 ? "" : lt_csv_table_cell(&file->table, row, col);
}

const char *lt_results_experiment(const lt_results_file *file)
{
    int col = lt_results_column(file, "experiment");
    if (col < 0)
        return NULL;
    const char *first = lt_results_cell(file, 0, col);
    for (long long r = 1; r < file->table.nrows; r++)
        if (strcmp(lt_results_cell(file, r, col), first) != 0)
            return NULL;
    return first;
}

const char *lt_results_missing(const lt_results_file *file, const char *const *columns)
{
    for (; *columns != NULL; columns++)
        if (lt_results_column(file, *columns) < 0)
            return *columns;
    return NULL;
}

lt_status lt_results_number(double *out, const lt_results_file *file, long long row, int col)
{
    const char *text = lt_results_cell(file, row, col);
    char *end;
    *out = strtod(text, &end);
    if (*text == '\0' || *end != '\0')
        return lt_fail(LT_E_INPUT, "%s, row %lld, column %s: expected a number, got '%s'",
                       file->path, row + 1, file->table.names[col], text);
    return LT_OK;
}

int lt_results_is_number(const char *text)
{
    char *end;
    strtol(text, &end, 10);
    return *text != '\0' && *end == '\0';
}

void lt_results_label_append(char *buf, size_t size, const char *name, const char *value)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    const char *space = used > 0 ? " " : "";
    if (lt_results_is_number(value))
        snprintf(buf + used, size - used, "%s%s=%s", space, name, value);
    else
        snprintf(buf + used, size - used, "%s%s", space, value);
}

/* The key columns of `s` the file has: the most specific table wins. */
static int key_count(const lt_results_file *file, const lt_schema *s)
{
    int n = 0;
    for (int c = 0; c < s->ncols; c++)
        n += s->columns[c].role == LT_COL_KEY && lt_results_column(file, s->columns[c].name) >= 0;
    return n;
}

/* The first key column of `s` the file lacks, other than one flagged
 * older_files_lack, or NULL. */
static const char *missing_key(const lt_results_file *file, const lt_schema *s)
{
    for (int c = 0; c < s->ncols; c++)
        if (s->columns[c].role == LT_COL_KEY && !s->columns[c].older_files_lack &&
            lt_results_column(file, s->columns[c].name) < 0)
            return s->columns[c].name;
    return NULL;
}

lt_status lt_results_recognise(const lt_schema **out, const lt_results_file *file,
                               const lt_schema *const *schemas, int count)
{
    const char *experiment = lt_results_experiment(file);
    const lt_schema *best = NULL;
    const char *missing = NULL;
    for (int k = 0; k < count; k++) {
        const lt_schema *s = schemas[k];
        if (experiment == NULL || strcmp(experiment, s->experiment) != 0)
            continue;
        const char *lacks = missing_key(file, s);
        if (lacks != NULL) {
            missing = missing ? missing : lacks;
            continue;
        }
        if (best == NULL || key_count(file, s) > key_count(file, best))
            best = s;
    }
    *out = best;
    if (best != NULL)
        return LT_OK;
    if (missing != NULL)
        return lt_fail(LT_E_INPUT, "%s: a %s CSV without key column '%s'", file->path,
                       experiment, missing);
    char known[256] = "";
    for (int k = 0; k < count; k++)
        if (strstr(known, schemas[k]->experiment) == NULL)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                     known[0] ? ", " : "", schemas[k]->experiment);
    if (experiment == NULL)
        return lt_fail(LT_E_INPUT,
                       "%s: no 'experiment' column with one value in every row, expected a "
                       "result CSV of ltbench (%s)",
                       file->path, known);
    return lt_fail(LT_E_INPUT, "%s: unknown experiment '%s', expected one of %s", file->path,
                   experiment, known);
}
