#include "results/file.h"

#include <math.h>
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

/* ---- the whole file checked against its table ---- */

typedef struct keyed_row {
    const lt_results_file *file;
    const int *keys;
    int nkeys;
    long long row;
} keyed_row;

/* Key cells compared as compare matches them: numbers by value. */
static int key_cells_order(const char *a, const char *b)
{
    char *end_a, *end_b;
    double x = strtod(a, &end_a), y = strtod(b, &end_b);
    if (*a && *b && *end_a == '\0' && *end_b == '\0')
        return (x > y) - (x < y);
    return strcmp(a, b);
}

static int by_keys(const void *pa, const void *pb)
{
    const keyed_row *a = pa, *b = pb;
    for (int k = 0; k < a->nkeys; k++) {
        int order = key_cells_order(lt_results_cell(a->file, a->row, a->keys[k]),
                                    lt_results_cell(b->file, b->row, b->keys[k]));
        if (order != 0)
            return order;
    }
    return (a->row > b->row) - (a->row < b->row);
}

static lt_status check_unique_keys(const lt_results_file *file, const lt_schema *schema)
{
    int keys[64], nkeys = 0;
    for (int c = 0; c < schema->ncols && nkeys < 64; c++)
        if (schema->columns[c].role == LT_COL_KEY &&
            (keys[nkeys] = lt_results_column(file, schema->columns[c].name)) >= 0)
            nkeys++;
    long long n = file->table.nrows;
    keyed_row *rows = malloc((size_t)n * sizeof *rows);
    if (rows == NULL)
        return lt_fail(LT_E_NOMEM, "%s: no memory to check its %lld rows", file->path, n);
    for (long long r = 0; r < n; r++)
        rows[r] = (keyed_row){file, keys, nkeys, r};
    qsort(rows, (size_t)n, sizeof *rows, by_keys);
    lt_status status = LT_OK;
    for (long long i = 1; i < n && status == LT_OK; i++) {
        keyed_row x = rows[i - 1], y = rows[i];
        int same = 1;
        for (int k = 0; k < nkeys && same; k++)
            same = key_cells_order(lt_results_cell(file, x.row, keys[k]),
                                   lt_results_cell(file, y.row, keys[k])) == 0;
        if (same) {
            char label[256] = "";
            for (int k = 0; k < nkeys; k++)
                lt_results_label_append(label, sizeof label, file->table.names[keys[k]],
                                        lt_results_cell(file, x.row, keys[k]));
            status = lt_fail(LT_E_INPUT, "%s: rows %lld and %lld are the same case (%s)",
                             file->path, x.row + 1, y.row + 1, label);
        }
    }
    free(rows);
    return status;
}

/* A measured time: positive, finite, inside its own min..max. */
static lt_status check_time(const lt_results_file *file, long long row, const char *spread)
{
    char name[3][128];
    snprintf(name[0], sizeof name[0], "%s_median_s", spread);
    snprintf(name[1], sizeof name[1], "%s_min_s", spread);
    snprintf(name[2], sizeof name[2], "%s_max_s", spread);
    double v[3];
    for (int i = 0; i < 3; i++) {
        int col = lt_results_column(file, name[i]);
        if (col < 0)
            return LT_OK; /* a point, not a spread */
        LT_TRY(lt_results_number(&v[i], file, row, col));
    }
    if (isnan(v[0]) && isnan(v[1]) && isnan(v[2]))
        return LT_OK; /* not timed (a row whose status says why) */
    if (!(v[1] > 0 && isfinite(v[2]) && v[1] <= v[0] && v[0] <= v[2]))
        return lt_fail(LT_E_INPUT,
                       "%s, row %lld: %s's median %g, min %g and max %g are not a measured "
                       "time (positive, finite, min <= median <= max)",
                       file->path, row + 1, spread, v[0], v[1], v[2]);
    return LT_OK;
}

lt_status lt_results_check(const lt_results_file *file, const lt_schema *schema)
{
    LT_TRY(check_unique_keys(file, schema));
    int status_col = lt_results_column(file, "status");
    for (long long row = 0; row < file->table.nrows; row++) {
        if (status_col >= 0 && strcmp(lt_results_cell(file, row, status_col), "ok") != 0)
            continue; /* not measured: its numbers may be nan or empty */
        for (int c = 0; c < schema->ncols; c++) {
            const lt_column *spec = &schema->columns[c];
            int col = lt_results_column(file, spec->name);
            if (col < 0 || (spec->role != LT_COL_TIMING && spec->role != LT_COL_EXACT))
                continue;
            double value;
            LT_TRY(lt_results_number(&value, file, row, col));
            /* nan: not timed in this run (a generation-only run's steps) */
            if (spec->role == LT_COL_TIMING && !isnan(value) && !(value > 0 && isfinite(value)))
                return lt_fail(LT_E_INPUT,
                               "%s, row %lld: %s is %g in a measured case, expected a positive "
                               "finite number (or nan: not timed)",
                               file->path, row + 1, spec->name, value);
            if (spec->role == LT_COL_TIMING && spec->spread != NULL)
                LT_TRY(check_time(file, row, spec->spread));
        }
    }
    return LT_OK;
}

lt_status lt_results_open(lt_results_file *file, const lt_schema **schema, const char *path,
                          const lt_schema *const *schemas, int count)
{
    LT_TRY(lt_results_read(file, path));
    lt_status status = lt_results_recognise(schema, file, schemas, count);
    if (status == LT_OK)
        status = lt_results_check(file, *schema);
    if (status != LT_OK)
        lt_results_free(file);
    return status;
}

void lt_results_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
