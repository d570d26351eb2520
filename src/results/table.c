#include "results/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/cli.h"
#include "core/dist.h"

/* ---- schemas ---- */

int lt_schema_column(const lt_schema *s, const char *name)
{
    for (int i = 0; name != NULL && i < s->ncols; i++)
        if (strcmp(s->columns[i].name, name) == 0)
            return i;
    return -1;
}

int lt_figure_panels(const lt_figure *f) { return f->panels[1].y != NULL ? 2 : 1; }

static lt_status need_column(const lt_schema *s, const char *name, const char *what)
{
    if (name != NULL && lt_schema_column(s, name) < 0)
        return lt_fail(LT_E_INTERNAL, "%s: %s names column '%s', which the table lacks",
                       s->name, what, name);
    return LT_OK;
}

lt_status lt_schema_check(const lt_schema *s)
{
    for (int i = 0; i < s->ncols; i++) {
        const lt_column *c = &s->columns[i];
        if (lt_schema_column(s, c->name) != i)
            return lt_fail(LT_E_INTERNAL, "%s: column '%s' is declared twice", s->name, c->name);
        if (c->spread != NULL) {
            const char *parts[] = {"median", "min", "max"};
            for (int p = 0; p < 3; p++) {
                char name[128];
                snprintf(name, sizeof name, "%s_%s_s", c->spread, parts[p]);
                LT_TRY(need_column(s, name, c->name));
            }
        }
    }
    if (lt_schema_column(s, "experiment") < 0)
        return lt_fail(LT_E_INTERNAL, "%s: no experiment column", s->name);
    for (int f = 0; f < s->nfigures; f++) {
        const lt_figure *fig = &s->figures[f];
        for (int k = 0; fig->series[k] != NULL; k++)
            LT_TRY(need_column(s, fig->series[k], fig->name));
        for (int k = 0; fig->context[k] != NULL; k++)
            LT_TRY(need_column(s, fig->context[k], fig->name));
        LT_TRY(need_column(s, fig->cluster, fig->name));
        for (int p = 0; p < lt_figure_panels(fig); p++) {
            LT_TRY(need_column(s, fig->panels[p].x, fig->name));
            LT_TRY(need_column(s, fig->panels[p].y, fig->name));
        }
    }
    return LT_OK;
}

/* ---- rows ---- */

void lt_table_init(lt_table *t, const lt_schema *schema)
{
    memset(t, 0, sizeof *t);
    t->schema = schema;
    lt_csv_process_provenance(); /* dates this process's rows to now */
}

static int ncols(const lt_table *t) { return t->schema->ncols; }

enum { PROV = LT_CSV_PROVENANCE_COLUMNS };

/* Frees the cells and provenance of rows from .. to - 1. */
static void free_rows(lt_table *t, long from, long to)
{
    for (long i = from * ncols(t); i < to * ncols(t); i++)
        free(t->cells[i]);
    for (long i = from * PROV; i < to * PROV; i++)
        free(t->provenance[i]);
}

void lt_table_free(lt_table *t)
{
    if (t->schema != NULL)
        free_rows(t, 0, t->rows + t->open_row);
    free(t->cells);
    free(t->provenance);
    if (t->journaled)
        lt_csv_detach(&t->journal);
    memset(t, 0, sizeof *t);
}

void lt_row_begin(lt_table *t)
{
    LT_ASSERT(!t->open_row);
    if (t->rows == t->capacity) {
        long capacity = t->capacity ? 2 * t->capacity : 64;
        char **grown = realloc(t->cells, (size_t)capacity * ncols(t) * sizeof *grown);
        LT_ASSERT(grown != NULL);
        t->cells = grown;
        grown = realloc(t->provenance, (size_t)capacity * PROV * sizeof *grown);
        LT_ASSERT(grown != NULL);
        t->provenance = grown;
        t->capacity = capacity;
    }
    memset(t->cells + t->rows * ncols(t), 0, (size_t)ncols(t) * sizeof *t->cells);
    memset(t->provenance + t->rows * PROV, 0, PROV * sizeof *t->provenance);
    t->open_row = 1;
}

void lt_set_str(lt_table *t, const char *column, const char *value)
{
    int c = lt_schema_column(t->schema, column);
    if (c < 0 || !t->open_row) {
        fprintf(stderr, "ltbench: internal error: no open row or no column '%s' in %s\n",
                column, t->schema->name);
        abort();
    }
    char **cell = &t->cells[t->rows * ncols(t) + c];
    free(*cell);
    *cell = strdup(value != NULL ? value : "");
    LT_ASSERT(*cell != NULL);
}

void lt_set_int(lt_table *t, const char *column, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    lt_set_str(t, column, buf);
}

static void format_num(char *buf, size_t size, double value);

void lt_set_num(lt_table *t, const char *column, double value)
{
    char buf[40];
    format_num(buf, sizeof buf, value);
    lt_set_str(t, column, buf);
}

void lt_set_samples(lt_table *t, const char *column, const double *samples, int count)
{
    char text[LT_SAMPLES_MAX * 16 + 1] = "";
    size_t used = 0;
    for (int i = 0; i < count && i < LT_SAMPLES_MAX; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%.6g", i ? " " : "",
                                 samples[i]);
    lt_set_str(t, column, text);
}

/* Row `row` with its own provenance. */
static lt_status write_row(const lt_table *t, lt_csv *csv, long row)
{
    for (int c = 0; c < ncols(t); c++)
        lt_csv_str(csv, t->cells[row * ncols(t) + c]);
    return lt_csv_end_row_as(csv, (const char *const *)t->provenance + row * PROV);
}

static lt_status journal_row(lt_table *t, long row) { return write_row(t, &t->journal, row); }

lt_status lt_row_end(lt_table *t)
{
    LT_ASSERT(t->open_row);
    for (int c = 0; c < ncols(t); c++)
        if (t->cells[t->rows * ncols(t) + c] == NULL) {
            fprintf(stderr, "ltbench: internal error: a row of %s without column '%s'\n",
                    t->schema->name, t->schema->columns[c].name);
            abort();
        }
    char **provenance = t->provenance + t->rows * PROV;
    if (provenance[0] == NULL) {
        lt_csv_provenance_now(provenance);
        if (t->revision != NULL) {
            free(provenance[LT_CSV_REVISION_COLUMN]);
            provenance[LT_CSV_REVISION_COLUMN] = strdup(t->revision);
            LT_ASSERT(provenance[LT_CSV_REVISION_COLUMN] != NULL);
        }
    }
    t->open_row = 0;
    t->rows++;
    return t->journaled && !t->holding ? journal_row(t, t->rows - 1) : LT_OK;
}

static void format_num(char *buf, size_t size, double value)
{
    if (isnan(value))
        snprintf(buf, size, "nan");
    else if (isinf(value))
        snprintf(buf, size, "%s", value > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, "%.17g", value);
}

void lt_table_update_num(lt_table *t, long row, const char *column, double value)
{
    int c = lt_schema_column(t->schema, column);
    LT_ASSERT(c >= 0 && row >= 0 && row < t->rows);
    char buf[40];
    format_num(buf, sizeof buf, value);
    char **cell = &t->cells[row * ncols(t) + c];
    free(*cell);
    *cell = strdup(buf);
    LT_ASSERT(*cell != NULL);
}

const char *lt_cell(const lt_table *t, long row, const char *column)
{
    int c = lt_schema_column(t->schema, column);
    return c >= 0 && row >= 0 && row < t->rows ? t->cells[row * ncols(t) + c] : NULL;
}

double lt_cell_num(const lt_table *t, long row, const char *column)
{
    const char *cell = lt_cell(t, row, column);
    return cell != NULL ? strtod(cell, NULL) : NAN;
}

lt_status lt_row_carry(lt_table *t, const lt_csv_table *from, long long row,
                       const char *from_path)
{
    for (int c = 0; c < ncols(t); c++)
        if (lt_csv_table_column(from, t->schema->columns[c].name) < 0)
            return lt_fail(LT_E_INPUT,
                           "%s: no column '%s'; it was written by another version of "
                           "ltbench (--overwrite starts over)",
                           from_path, t->schema->columns[c].name);
    lt_row_begin(t);
    for (int c = 0; c < ncols(t); c++) {
        const char *name = t->schema->columns[c].name;
        lt_set_str(t, name, lt_csv_table_cell(from, row, lt_csv_table_column(from, name)));
    }
    /* The row keeps who measured it: each provenance column the file has,
     * empty where it was written before the column existed (cpu_id), never
     * this process's. A file with none at all gets this process's. */
    int has_provenance = 0;
    for (int i = 0; i < PROV; i++)
        has_provenance |= lt_csv_table_column(from, lt_csv_provenance_columns[i]) >= 0;
    char **provenance = t->provenance + t->rows * PROV;
    for (int i = 0; i < PROV && has_provenance; i++) {
        int c = lt_csv_table_column(from, lt_csv_provenance_columns[i]);
        const char *cell = c >= 0 ? lt_csv_table_cell(from, row, c) : NULL;
        provenance[i] = strdup(cell != NULL ? cell : "");
        LT_ASSERT(provenance[i] != NULL);
    }
    return lt_row_end(t);
}

static void journal_path(char *buf, size_t size, const char *path)
{
    snprintf(buf, size, "%s.partial", path);
}

static const char **column_names(const lt_schema *s)
{
    const char **names = malloc((size_t)s->ncols * sizeof *names);
    LT_ASSERT(names != NULL);
    for (int c = 0; c < s->ncols; c++)
        names[c] = s->columns[c].name;
    return names;
}

lt_status lt_table_journal(lt_table *t, const char *path, const lt_table_more *more)
{
    if (!lt_dist_is_root())
        return LT_OK; /* rank 0 writes the results */
    lt_table_detach(t);
    char journal[4200];
    journal_path(journal, sizeof journal, path);
    const char **names = column_names(t->schema);
    lt_status status = lt_csv_open(&t->journal, journal, names, ncols(t));
    free(names);
    LT_TRY(status);
    for (long r = 0; r < t->rows && status == LT_OK; r++)
        status = journal_row(t, r);
    /* rows of an earlier journal that this run has not reached, with the
     * provenance they had: through a scratch table, as carried rows */
    lt_table scratch;
    lt_table_init(&scratch, t->schema);
    for (long long r = 0; more != NULL && r < more->rows->nrows && status == LT_OK; r++) {
        if (!more->keep(more->ctx, more->rows, r))
            continue;
        status = lt_row_carry(&scratch, more->rows, r, more->path);
        if (status == LT_OK)
            status = write_row(&scratch, &t->journal, scratch.rows - 1);
    }
    lt_table_free(&scratch);
    if (status == LT_OK)
        status = lt_csv_publish(&t->journal);
    if (status != LT_OK) {
        lt_csv_abort(&t->journal);
        return status;
    }
    t->journaled = 1;
    return LT_OK;
}

void lt_table_hold(lt_table *t)
{
    LT_ASSERT(!t->holding && !t->open_row);
    t->holding = 1;
    t->held_from = t->rows;
}

lt_status lt_table_release(lt_table *t)
{
    LT_ASSERT(t->holding && !t->open_row);
    t->holding = 0;
    for (long r = t->held_from; t->journaled && r < t->rows; r++)
        LT_TRY(journal_row(t, r));
    return LT_OK;
}

void lt_table_drop_held(lt_table *t)
{
    LT_ASSERT(t->holding);
    free_rows(t, t->held_from, t->rows + t->open_row);
    t->rows = t->held_from;
    t->open_row = 0;
    t->holding = 0;
}

lt_status lt_table_sync(lt_table *t)
{
    return t->journaled ? lt_csv_sync(&t->journal) : LT_OK;
}

lt_status lt_table_commit(lt_table *t, const char *path)
{
    if (!lt_dist_is_root())
        return LT_OK;
    LT_ASSERT(!t->holding);
    /* The rows afresh, in the table's order (a resumed run's journal holds
     * rows of models it had not reached before its own); the journal goes
     * once they are committed. */
    lt_table_detach(t);
    lt_csv csv;
    const char **names = column_names(t->schema);
    lt_status status = lt_csv_open(&csv, path, names, ncols(t));
    free(names);
    LT_TRY(status);
    for (long r = 0; r < t->rows && status == LT_OK; r++)
        status = write_row(t, &csv, r);
    if (status != LT_OK) {
        lt_csv_abort(&csv);
        return status;
    }
    LT_TRY(lt_csv_close(&csv));
    char journal[4200];
    journal_path(journal, sizeof journal, path);
    remove(journal);
    return LT_OK;
}

void lt_table_detach(lt_table *t)
{
    if (t->journaled)
        lt_csv_detach(&t->journal);
    t->journaled = 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

lt_status lt_table_read_previous(lt_csv_table *prev, int *found, const char *path, int journal,
                                 char *read_path, size_t size)
{
    memset(prev, 0, sizeof *prev);
    *found = 0;
    if (!lt_dist_is_root())
        return LT_OK;
    char journal_name[4200];
    journal_path(journal_name, sizeof journal_name, path);
    const char *source = journal ? journal_name : path;
    if (!exists(source))
        return LT_OK;
    snprintf(read_path, size, "%s", source);
    LT_TRY(journal ? lt_csv_read_journal(prev, source) : lt_csv_read(prev, source));
    *found = 1;
    return LT_OK;
}

/* ---- printing ---- */

/* A cell as the table prints it: formatted and scaled, or "-". */
static void shown_cell(char *buf, size_t size, const lt_column *c, const char *cell, int ok)
{
    if (cell == NULL || (c->format != NULL && !ok) || (c->format != NULL && *cell == '\0')) {
        snprintf(buf, size, "-");
        return;
    }
    if (c->format == NULL) {
        snprintf(buf, size, "%s", cell);
        return;
    }
    double x = strtod(cell, NULL) * (c->scale != 0 ? c->scale : 1.0);
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, c->format, x);
}

/* The cells of a table, whichever form it has: rows being filled or a CSV
 * read back. */
typedef struct cell_source {
    const lt_table *table;
    const lt_csv_table *csv;
} cell_source;

static long source_rows(const cell_source *s)
{
    return s->table ? s->table->rows : (long)s->csv->nrows;
}

static const char *source_cell(const cell_source *s, long row, const char *column)
{
    if (s->table)
        return lt_cell(s->table, row, column);
    int c = lt_csv_table_column(s->csv, column);
    return c >= 0 ? lt_csv_table_cell(s->csv, row, c) : NULL;
}

static int row_ok(const cell_source *s, long row)
{
    const char *status = source_cell(s, row, "status");
    return status == NULL || strcmp(status, "ok") == 0;
}


enum { MAX_SHOWN = 64, PLAIN_COLUMNS = 100 };

/* The shown columns of a schema and the width each needs over the rows. */
static int shown_columns(const lt_schema *schema, const cell_source *src,
                         const lt_column **shown, int *width)
{
    int count = 0;
    for (int c = 0; c < schema->ncols && count < MAX_SHOWN; c++)
        if (schema->columns[c].header != NULL)
            shown[count++] = &schema->columns[c];
    char buf[128];
    for (int i = 0; i < count; i++) {
        width[i] = (int)strlen(shown[i]->header);
        for (long r = 0; r < source_rows(src); r++) {
            shown_cell(buf, sizeof buf, shown[i], source_cell(src, r, shown[i]->name),
                       row_ok(src, r));
            width[i] = (int)strlen(buf) > width[i] ? (int)strlen(buf) : width[i];
        }
    }
    return count;
}

static void print_markdown(const lt_schema *schema, const cell_source *src, FILE *out)
{
    const lt_column *shown[MAX_SHOWN];
    int width[MAX_SHOWN], count = shown_columns(schema, src, shown, width);
    /* a row not measured says why in a last column: a cell beyond the
     * header's would not be shown at all */
    int noted = 0;
    for (long r = 0; r < source_rows(src) && !noted; r++)
        noted = !row_ok(src, r);
    fputs("| ", out);
    for (int i = 0; i < count; i++)
        fprintf(out, "%s%s", i ? " | " : "", shown[i]->header);
    fputs(noted ? " | note |\n|" : " |\n|", out);
    for (int i = 0; i < count; i++)
        fputs(shown[i]->format != NULL ? "---:|" : "---|", out);
    fputs(noted ? "---|\n" : "\n", out);
    char buf[128];
    for (long r = 0; r < source_rows(src); r++) {
        int ok = row_ok(src, r);
        fputs("| ", out);
        for (int i = 0; i < count; i++) {
            shown_cell(buf, sizeof buf, shown[i], source_cell(src, r, shown[i]->name), ok);
            fprintf(out, "%s%s", i ? " | " : "", buf);
        }
        if (!ok) {
            const char *note = source_cell(src, r, "note");
            fprintf(out, " | %s: %s", source_cell(src, r, "status"), note != NULL ? note : "");
        } else if (noted) {
            fputs(" | ", out);
        }
        fputs(" |\n", out);
    }
}

/* The leading key columns that name a row (at least one; together at most
 * LEAD_COLUMNS wide): repeated at the start of every block. */
enum { LEAD_COLUMNS = 60 };

static int lead_columns(const lt_column *const *shown, const int *width, int count)
{
    int lead = 1, used = width[0];
    while (lead < count && shown[lead]->role == LT_COL_KEY &&
           used + 1 + width[lead] <= LEAD_COLUMNS)
        used += 1 + width[lead++];
    return lead;
}

static void print_cells(FILE *out, const cell_source *src, long r, const lt_column *const *shown,
                        const int *width, int from, int to, int ok)
{
    char buf[128];
    for (int i = from; i < to; i++) {
        if (!ok && shown[i]->role != LT_COL_KEY) /* what it is, then why not */
            break;
        shown_cell(buf, sizeof buf, shown[i], source_cell(src, r, shown[i]->name), ok);
        fprintf(out, "%s%-*s", i > 0 ? " " : "", width[i], buf);
    }
}

/* A terminal's table: at most PLAIN_COLUMNS wide, so columns past that go
 * to further blocks that repeat the columns naming the row; a row that did
 * not run shows its status in the first block and why under the table. */
static void print_plain(const lt_schema *schema, const cell_source *src, FILE *out)
{
    const lt_column *shown[MAX_SHOWN];
    int width[MAX_SHOWN], count = shown_columns(schema, src, shown, width), notes = 0;
    int lead = lead_columns(shown, width, count), lead_width = 0;
    for (int i = 0; i < lead; i++)
        lead_width += width[i] + (i > 0);
    for (int first = lead; first == lead || first < count;) {
        int last = first, used = lead_width;
        while (last < count && (last == first || used + 1 + width[last] <= PLAIN_COLUMNS))
            used += 1 + width[last++];
        if (first > lead)
            fputc('\n', out);
        for (int i = 0; i < lead; i++)
            fprintf(out, "%s%-*s", i > 0 ? " " : "", width[i], shown[i]->header);
        for (int i = first; i < last; i++)
            fprintf(out, " %-*s", width[i], shown[i]->header);
        fputc('\n', out);
        for (long r = 0; r < source_rows(src); r++) {
            int ok = row_ok(src, r);
            if (!ok && first > lead)
                continue;
            print_cells(out, src, r, shown, width, 0, lead, ok);
            if (ok)
                print_cells(out, src, r, shown, width, first, last, ok);
            else
                fprintf(out, " %s (note %d)", source_cell(src, r, "status"), ++notes);
            fputc('\n', out);
        }
        first = last;
    }
    for (long r = 0, n = 0; r < source_rows(src); r++)
        if (!row_ok(src, r)) {
            const char *note = source_cell(src, r, "note");
            lt_cli_print_wrapped(out, PLAIN_COLUMNS, 8, "note %ld: %s %s: %s", ++n,
                                 source_cell(src, r, shown[0]->name),
                                 source_cell(src, r, "status"), note != NULL ? note : "");
        }
}

void lt_table_print(const lt_table *t, FILE *out)
{
    cell_source src = {t, NULL};
    print_plain(t->schema, &src, out);
}

void lt_table_markdown(const lt_schema *schema, const lt_csv_table *rows, FILE *out)
{
    cell_source src = {NULL, rows};
    print_markdown(schema, &src, out);
}

void lt_table_curve_ends(const lt_table *t, const char *column, const char *value,
                         const char *metric, double *first, double *last_mean)
{
    long n = 0;
    for (long r = 0; r < t->rows; r++)
        n += strcmp(lt_cell(t, r, column), value) == 0;
    *first = *last_mean = NAN;
    if (n == 0)
        return;
    long tail = n / 10 < 1 ? 1 : n / 10 > 50 ? 50 : n / 10, seen = 0;
    double sum = 0;
    for (long r = 0; r < t->rows; r++) {
        if (strcmp(lt_cell(t, r, column), value) != 0)
            continue;
        double x = lt_cell_num(t, r, metric);
        if (seen == 0)
            *first = x;
        if (seen >= n - tail)
            sum += x;
        seen++;
    }
    *last_mean = sum / (double)tail;
}
