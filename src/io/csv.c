#include "io/csv.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/mem.h"
#include "io/read.h"

const char *const lt_csv_provenance_columns[LT_CSV_PROVENANCE_COLUMNS] = {
    "ltbench_version", "git_revision", "cpu_model", "cpu_id", "blas", "kernel_isa", "date",
    "cores",
    "load_start", "load_end", "steal_share", "omp_wait_policy", "build", "ranks",
};
_Static_assert(LT_CSV_REVISION_COLUMN == 1, "git_revision is the second provenance column");

/* ---- writer ---------------------------------------------------------- */

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static int needs_quotes(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return 0;
    /* Readers commonly trim unquoted edges, so quoting keeps the spaces. */
    if (is_blank(s[0]) || is_blank(s[n - 1]))
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

static void put_field(FILE *f, const char *s)
{
    if (!needs_quotes(s)) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Remembers the first failure so close will not commit a damaged table. */
static lt_status record(lt_csv *csv, lt_status status)
{
    if (csv->failure == LT_OK)
        csv->failure = status;
    return status;
}

static lt_status check_header(const char *path, const char *const *columns, int ncols)
{
    if (columns == NULL || ncols <= 0)
        return lt_fail(LT_E_INTERNAL, "%s: a CSV table needs at least one column, got %d", path,
                       ncols);
    int total = ncols + LT_CSV_PROVENANCE_COLUMNS;
    for (int i = 0; i < total; i++) {
        const char *a = i < ncols ? columns[i] : lt_csv_provenance_columns[i - ncols];
        if (a == NULL || *a == '\0')
            return lt_fail(LT_E_INTERNAL, "%s: column %d has no name", path, i + 1);
        for (int j = 0; j < i && j < ncols; j++)
            if (strcmp(a, columns[j]) == 0)
                return lt_fail(LT_E_INTERNAL, "%s: column name '%s' appears twice", path, a);
    }
    return LT_OK;
}

static void write_header(lt_csv *csv, const char *const *columns, int ncols)
{
    csv->ncols = ncols;
    FILE *f = csv->file.f;
    for (int i = 0; i < ncols; i++) {
        if (i > 0)
            fputc(',', f);
        put_field(f, columns[i]);
    }
    for (int i = 0; i < LT_CSV_PROVENANCE_COLUMNS; i++) {
        fputc(',', f);
        put_field(f, lt_csv_provenance_columns[i]);
    }
    fputc('\n', f);
}

lt_status lt_csv_open(lt_csv *csv, const char *path, const char *const *columns, int ncols)
{
    memset(csv, 0, sizeof *csv);
    LT_TRY(check_header(path, columns, ncols));
    lt_provenance_get(&csv->prov);
    LT_TRY(lt_atomic_open(&csv->file, path));
    write_header(csv, columns, ncols);
    return LT_OK;
}

lt_status lt_csv_publish(lt_csv *csv)
{
    if (csv->failure != LT_OK)
        return csv->failure;
    return record(csv, lt_atomic_publish(&csv->file));
}

lt_status lt_csv_sync(lt_csv *csv)
{
    if (csv->failure != LT_OK)
        return csv->failure;
    return record(csv, lt_atomic_sync(&csv->file));
}

void lt_csv_detach(lt_csv *csv) { lt_atomic_detach(&csv->file); }

static lt_status put_cell(lt_csv *csv, const char *text)
{
    if (csv->failure != LT_OK)
        return csv->failure;
    if (csv->file.f == NULL)
        return lt_fail(LT_E_INTERNAL, "%s: CSV cell written after close", csv->file.path);
    if (csv->cells >= csv->ncols)
        return record(csv, lt_fail(LT_E_INTERNAL, "%s: row %lld has more than %d cells",
                                   csv->file.path, csv->rows + 1, csv->ncols));
    if (csv->cells > 0)
        fputc(',', csv->file.f);
    put_field(csv->file.f, text);
    csv->cells++;
    return LT_OK;
}

lt_status lt_csv_str(lt_csv *csv, const char *value)
{
    return put_cell(csv, value != NULL ? value : "");
}

lt_status lt_csv_int(lt_csv *csv, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    return put_cell(csv, buf);
}

lt_status lt_csv_num(lt_csv *csv, double value)
{
    char buf[40];
    if (isnan(value))
        snprintf(buf, sizeof buf, "nan"); /* never "-nan": the sign of a NaN means nothing */
    else if (isinf(value))
        snprintf(buf, sizeof buf, "%s", value > 0 ? "inf" : "-inf");
    else
        snprintf(buf, sizeof buf, "%.17g", value);
    return put_cell(csv, buf);
}

/* The kernel reports loads to two decimals; more digits would be noise. */
static void format_load(char *buf, size_t size, double load)
{
    if (isnan(load))
        snprintf(buf, size, "nan");
    else
        snprintf(buf, size, "%.2f", load);
}

/* The provenance cells of `p` as a row ending now gets them (load_end
 * and steal_share now), in column order; the buffers live in `text`. */
typedef struct provenance_text {
    char cores[16], load_start[32], load_end[32], steal[32], ranks[16];
} provenance_text;

static void provenance_cells(const lt_provenance *p, provenance_text *text,
                             const char *cells[LT_CSV_PROVENANCE_COLUMNS])
{
    snprintf(text->cores, sizeof text->cores, "%d", p->cores);
    snprintf(text->ranks, sizeof text->ranks, "%d", p->ranks);
    format_load(text->load_start, sizeof text->load_start, p->load_start);
    format_load(text->load_end, sizeof text->load_end, lt_provenance_load_now());
    double steal = lt_provenance_steal_share_now();
    if (isnan(steal)) /* jiffies are 10 ms: three decimals say what they can */
        snprintf(text->steal, sizeof text->steal, "nan");
    else
        snprintf(text->steal, sizeof text->steal, "%.3f", steal);
    const char *all[LT_CSV_PROVENANCE_COLUMNS] = {
        p->version,  p->git_revision,   p->cpu_model,      p->cpu_id,
        p->blas,     p->kernel_isa,     p->date,           text->cores,       text->load_start,
        text->load_end, text->steal,    p->wait_policy,    p->build,
        text->ranks,
    };
    memcpy(cells, all, sizeof all);
}

lt_status lt_csv_end_row_as(lt_csv *csv, const char *const provenance[LT_CSV_PROVENANCE_COLUMNS])
{
    if (csv->failure != LT_OK)
        return csv->failure;
    if (csv->file.f == NULL)
        return lt_fail(LT_E_INTERNAL, "%s: CSV row ended after close", csv->file.path);
    if (csv->cells != csv->ncols)
        return record(csv, lt_fail(LT_E_INTERNAL, "%s: row %lld has %d cells, expected %d",
                                   csv->file.path, csv->rows + 1, csv->cells, csv->ncols));
    FILE *f = csv->file.f;
    for (int i = 0; i < LT_CSV_PROVENANCE_COLUMNS; i++) {
        fputc(',', f);
        put_field(f, provenance[i]);
    }
    fputc('\n', f);
    csv->cells = 0;
    csv->rows++;
    if (ferror(f))
        return record(csv, lt_fail_write(csv->file.path, errno));
    return LT_OK;
}

lt_status lt_csv_end_row(lt_csv *csv)
{
    provenance_text text;
    const char *cells[LT_CSV_PROVENANCE_COLUMNS];
    provenance_cells(&csv->prov, &text, cells);
    return lt_csv_end_row_as(csv, cells);
}

const lt_provenance *lt_csv_process_provenance(void)
{
    static lt_provenance process;
    static int taken;
    if (!taken) {
        lt_provenance_get(&process);
        taken = 1;
    }
    return &process;
}

void lt_csv_provenance_now(char *cells[LT_CSV_PROVENANCE_COLUMNS])
{
    provenance_text text;
    const char *shared[LT_CSV_PROVENANCE_COLUMNS];
    provenance_cells(lt_csv_process_provenance(), &text, shared);
    for (int i = 0; i < LT_CSV_PROVENANCE_COLUMNS; i++) {
        cells[i] = strdup(shared[i]);
        LT_ASSERT(cells[i] != NULL);
    }
}

lt_status lt_csv_close(lt_csv *csv)
{
    if (csv->file.f == NULL)
        return lt_fail(LT_E_INTERNAL, "%s: CSV closed twice or never opened", csv->file.path);
    if (csv->failure == LT_OK && csv->cells != 0)
        record(csv, lt_fail(LT_E_INTERNAL, "%s: row %lld left unfinished (%d of %d cells)",
                            csv->file.path, csv->rows + 1, csv->cells, csv->ncols));
    if (csv->failure != LT_OK) {
        lt_atomic_abort(&csv->file);
        return csv->failure;
    }
    return lt_atomic_commit(&csv->file);
}

void lt_csv_abort(lt_csv *csv) { lt_atomic_abort(&csv->file); }

/* ---- reader ---------------------------------------------------------- */

/* Reads the whole file into a tracked buffer with one spare byte. */
static lt_status read_whole_file(char **data, size_t *size, const char *path)
{
    *data = NULL;
    *size = 0;
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return lt_fail(LT_E_IO, "cannot read %s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    lt_status status = lt_mem_alloc((void **)data, len + 1, path);
    if (status == LT_OK && fread(*data, 1, len, f) != len) {
        status = lt_fail(LT_E_IO, "cannot read %s: %s", path,
                         ferror(f) ? strerror(errno) : "file shrank while reading");
        lt_mem_free(*data);
        *data = NULL;
    }
    fclose(f);
    *size = len;
    return status;
}

typedef struct csv_parser {
    const char *path;
    const char *in;
    size_t len;
    size_t pos;
    long long line; /* physical line of in[pos], from 1 */
    char *out;      /* cells, each NUL-terminated, back to back */
    size_t out_len;
} csv_parser;

/* Length of the line break at pos (LF, CRLF, or a CR ending the file), or 0. */
static size_t line_break_at(const csv_parser *p)
{
    if (p->pos >= p->len)
        return 0;
    if (p->in[p->pos] == '\n')
        return 1;
    if (p->in[p->pos] == '\r') {
        if (p->pos + 1 == p->len)
            return 1;
        if (p->in[p->pos + 1] == '\n')
            return 2;
    }
    return 0;
}

static int at_field_end(const csv_parser *p)
{
    return p->pos >= p->len || p->in[p->pos] == ',' || line_break_at(p) > 0;
}

static lt_status put_char(csv_parser *p, char c)
{
    if (c == '\0')
        return lt_fail(LT_E_INPUT, "%s, line %lld: NUL byte, expected text", p->path, p->line);
    p->out[p->out_len++] = c;
    return LT_OK;
}

static lt_status parse_field(csv_parser *p)
{
    if (p->pos < p->len && p->in[p->pos] == '"') {
        long long open_line = p->line;
        p->pos++;
        for (;;) {
            if (p->pos >= p->len)
                return lt_fail(LT_E_INPUT, "%s, line %lld: quoted field never closed", p->path,
                               open_line);
            char c = p->in[p->pos++];
            if (c == '"') {
                if (p->pos < p->len && p->in[p->pos] == '"')
                    p->pos++; /* "" stands for one quote */
                else
                    break;
            }
            if (c == '\n')
                p->line++;
            LT_TRY(put_char(p, c));
        }
        if (!at_field_end(p))
            return lt_fail(LT_E_INPUT,
                           "%s, line %lld: '%c' after a closing quote, expected ',' or end of line",
                           p->path, p->line, p->in[p->pos]);
    } else {
        while (!at_field_end(p))
            LT_TRY(put_char(p, p->in[p->pos++]));
    }
    p->out[p->out_len++] = '\0';
    return LT_OK;
}

/* Parses one record into p->out and counts its cells (0 for an empty line or
 * the end of input). */
static lt_status parse_record(csv_parser *p, int *cells)
{
    *cells = 0;
    if (p->pos >= p->len)
        return LT_OK;
    for (;;) {
        size_t brk = line_break_at(p);
        if (brk > 0 && *cells == 0) { /* empty line */
            p->pos += brk;
            p->line++;
            return LT_OK;
        }
        LT_TRY(parse_field(p));
        (*cells)++;
        if (p->pos >= p->len)
            return LT_OK;
        if (p->in[p->pos] == ',') {
            p->pos++;
            continue;
        }
        p->pos += line_break_at(p);
        p->line++;
        return LT_OK;
    }
}

static lt_status parse_table(lt_csv_table *t, csv_parser *p)
{
    while (p->pos < p->len) {
        long long start_line = p->line;
        int cells;
        LT_TRY(parse_record(p, &cells));
        if (cells == 0)
            continue;
        if (t->ncols == 0)
            t->ncols = cells;
        else if (cells != t->ncols)
            return lt_fail(LT_E_INPUT,
                           "%s, line %lld: row has %d cells, expected %d as in the header",
                           p->path, start_line, cells, t->ncols);
        else
            t->nrows++;
    }
    if (t->ncols == 0)
        return lt_fail(LT_E_INPUT, "%s: no header row, expected column names", p->path);
    return LT_OK;
}

static lt_status read_table(lt_csv_table *table, const char *path, int drop_torn_line)
{
    memset(table, 0, sizeof *table);
    char *raw;
    size_t len;
    LT_TRY(read_whole_file(&raw, &len, path));
    if (drop_torn_line)
        while (len > 0 && raw[len - 1] != '\n')
            len--;
    /* Each cell's NUL takes the place of the comma or line break after it, so
     * only a last cell at the end of input needs the one spare byte. */
    csv_parser p = {.path = path, .in = raw, .len = len, .line = 1};
    lt_status status = lt_mem_alloc((void **)&p.out, len + 1, path);
    if (status == LT_OK)
        status = parse_table(table, &p);
    lt_mem_free(raw);
    if (status == LT_OK) {
        size_t count = (size_t)table->ncols * (size_t)(table->nrows + 1);
        status = lt_mem_alloc((void **)&table->names, count * sizeof(char *), path);
    }
    if (status != LT_OK) {
        lt_mem_free(p.out);
        memset(table, 0, sizeof *table);
        return status;
    }
    table->text = p.out;
    table->cells = table->names + table->ncols;
    char *s = p.out;
    for (size_t i = 0; i < (size_t)table->ncols * (size_t)(table->nrows + 1); i++) {
        table->names[i] = s;
        s += strlen(s) + 1;
    }
    return LT_OK;
}

lt_status lt_csv_read(lt_csv_table *table, const char *path)
{
    return read_table(table, path, 0);
}

lt_status lt_csv_read_journal(lt_csv_table *table, const char *path)
{
    return read_table(table, path, 1);
}

const char *lt_csv_table_cell(const lt_csv_table *table, long long row, int col)
{
    LT_ASSERT(row >= 0 && row < table->nrows && col >= 0 && col < table->ncols);
    return table->cells[row * table->ncols + col];
}

int lt_csv_table_column(const lt_csv_table *table, const char *name)
{
    for (int i = 0; i < table->ncols; i++)
        if (strcmp(table->names[i], name) == 0)
            return i;
    return -1;
}

lt_status lt_csv_table_concat(lt_csv_table *out, const lt_csv_table *a, const lt_csv_table *b)
{
    memset(out, 0, sizeof *out);
    /* b's column for each of out's, or -1; a's are out's first ncols */
    enum { MAX_COLUMNS = 256 };
    int ncols = a->ncols, b_at[MAX_COLUMNS];
    if (a->ncols + b->ncols > MAX_COLUMNS)
        return lt_fail(LT_E_INPUT, "tables to join: more than %d columns", MAX_COLUMNS);
    for (int c = 0; c < b->ncols; c++)
        ncols += lt_csv_table_column(a, b->names[c]) < 0;
    long long nrows = a->nrows + b->nrows;
    size_t text = 1; /* the empty string every missing cell points at */
    for (int c = 0; c < a->ncols; c++)
        text += strlen(a->names[c]) + 1;
    for (int c = 0; c < b->ncols; c++)
        text += strlen(b->names[c]) + 1;
    for (long long i = 0; i < a->nrows * a->ncols; i++)
        text += strlen(a->cells[i]) + 1;
    for (long long i = 0; i < b->nrows * b->ncols; i++)
        text += strlen(b->cells[i]) + 1;
    char **names = NULL, *store = NULL;
    LT_TRY(lt_mem_alloc((void **)&names, (size_t)(ncols * (1 + nrows)) * sizeof(char *),
                        "joined table"));
    lt_status status = lt_mem_alloc((void **)&store, text, "joined table");
    if (status != LT_OK) {
        lt_mem_free(names);
        return status;
    }
    char *at = store, *empty = at;
    *at++ = '\0';
#define KEEP(dst, src)                                                                        \
    do {                                                                                      \
        size_t n_ = strlen(src) + 1;                                                          \
        memcpy(at, (src), n_);                                                                \
        (dst) = at;                                                                           \
        at += n_;                                                                             \
    } while (0)
    int n = 0;
    for (int c = 0; c < a->ncols; c++, n++) {
        KEEP(names[n], a->names[c]);
        b_at[n] = lt_csv_table_column(b, a->names[c]);
    }
    for (int c = 0; c < b->ncols; c++)
        if (lt_csv_table_column(a, b->names[c]) < 0) {
            KEEP(names[n], b->names[c]);
            b_at[n++] = c;
        }
    char **cells = names + ncols;
    for (long long r = 0; r < a->nrows; r++)
        for (int c = 0; c < ncols; c++) {
            if (c < a->ncols)
                KEEP(cells[r * ncols + c], a->cells[r * a->ncols + c]);
            else
                cells[r * ncols + c] = empty;
        }
    for (long long r = 0; r < b->nrows; r++)
        for (int c = 0; c < ncols; c++) {
            if (b_at[c] >= 0)
                KEEP(cells[(a->nrows + r) * ncols + c], b->cells[r * b->ncols + b_at[c]]);
            else
                cells[(a->nrows + r) * ncols + c] = empty;
        }
#undef KEEP
    out->ncols = ncols;
    out->nrows = nrows;
    out->names = names;
    out->cells = cells;
    out->text = store;
    return LT_OK;
}

void lt_csv_table_free(lt_csv_table *table)
{
    lt_mem_free(table->names);
    lt_mem_free(table->text);
    memset(table, 0, sizeof *table);
}
