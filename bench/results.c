#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lt_status results_read(results_file *file, const char *path)
{
    file->path = path;
    LT_TRY(lt_csv_read(&file->table, path));
    if (file->table.nrows == 0) {
        lt_csv_table_free(&file->table);
        return lt_fail(LT_E_INPUT, "%s: no data rows, expected a result table", path);
    }
    return LT_OK;
}

void results_free(results_file *file) { lt_csv_table_free(&file->table); }

int results_column(const results_file *file, const char *name)
{
    return lt_csv_table_column(&file->table, name);
}

const char *results_cell(const results_file *file, long long row, int col)
{
    return col < 0 ? "" : lt_csv_table_cell(&file->table, row, col);
}

const char *results_experiment(const results_file *file)
{
    int col = results_column(file, "experiment");
    if (col < 0)
        return NULL;
    const char *first = results_cell(file, 0, col);
    for (long long r = 1; r < file->table.nrows; r++)
        if (strcmp(results_cell(file, r, col), first) != 0)
            return NULL;
    return first;
}

const char *results_missing(const results_file *file, const char *const *columns)
{
    for (; *columns != NULL; columns++)
        if (results_column(file, *columns) < 0)
            return *columns;
    return NULL;
}

lt_status results_number(double *out, const results_file *file, long long row, int col)
{
    const char *text = results_cell(file, row, col);
    char *end;
    *out = strtod(text, &end);
    if (*text == '\0' || *end != '\0')
        return lt_fail(LT_E_INPUT, "%s, row %lld, column %s: expected a number, got '%s'",
                       file->path, row + 1, file->table.names[col], text);
    return LT_OK;
}

int results_is_number(const char *text)
{
    char *end;
    strtol(text, &end, 10);
    return *text != '\0' && *end == '\0';
}

void results_label_append(char *buf, size_t size, const char *name, const char *value)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    const char *space = used > 0 ? " " : "";
    if (results_is_number(value))
        snprintf(buf + used, size - used, "%s%s=%s", space, name, value);
    else
        snprintf(buf + used, size - used, "%s%s", space, value);
}
