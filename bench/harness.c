#include "harness.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/attn.h"
#include "core/dist.h"
#include "io/atomic.h"

/* ---- presets ---- */

int bench_preset_index(const bench_presets *p, const char *name)
{
    for (int i = 0; i < BENCH_PRESETS; i++)
        if (name != NULL && p->names[i] != NULL && strcmp(p->names[i], name) == 0)
            return i;
    return -1;
}

lt_status bench_presets_apply(lt_cli *cli, const bench_presets *p, const char *name)
{
    int which = bench_preset_index(p, name);
    if (which < 0)
        return lt_fail(LT_E_USAGE, "--preset: unknown preset '%s'", name ? name : "(none)");
    for (int i = 0; i < p->count; i++) {
        lt_flag *flag = lt_cli_flag(cli, p->values[i].flag);
        LT_ASSERT(flag != NULL); /* the table names flags of this program */
        const char *value = p->values[i].values[which];
        if (flag->seen || value == NULL)
            continue;
        lt_status status = lt_cli_set(flag, value);
        if (status != LT_OK)
            return lt_fail(LT_E_INTERNAL, "preset %s: %s", p->names[which], lt_last_error());
    }
    return LT_OK;
}

void bench_presets_help(const bench_presets *p, char *buf, size_t size)
{
    size_t at = 0;
#define PUT(...)                                                                   \
    do {                                                                           \
        int n_ = snprintf(buf + at, at < size ? size - at : 0, __VA_ARGS__);       \
        if (n_ > 0)                                                                \
            at += (size_t)n_;                                                      \
    } while (0)
    PUT("Presets (a flag given on the command line overrides its preset value):\n");
    PUT("  %-18s", "");
    for (int i = 0; i < BENCH_PRESETS; i++)
        PUT(" %-12s", p->names[i]);
    PUT("\n");
    for (int v = 0; v < p->count; v++) {
        PUT("  %-18s", p->values[v].flag);
        for (int i = 0; i < BENCH_PRESETS; i++)
            PUT(" %-12s", p->values[v].values[i] ? p->values[v].values[i] : "-");
        PUT("\n");
    }
    for (int i = 0; i < BENCH_PRESETS; i++)
        if (p->about[i] != NULL)
            PUT("  %s: %s\n", p->names[i], p->about[i]);
#undef PUT
    if (at >= size && size > 0)
        buf[size - 1] = '\0';
}

/* ---- tables ---- */

static int column_index(const bench_table *t, const char *column)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->columns[i], column) == 0)
            return i;
    return -1;
}

lt_status bench_table_init(bench_table *t, const char *const *columns, int ncols)
{
    memset(t, 0, sizeof *t);
    t->columns = columns;
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        for (int j = 0; j < i; j++)
            LT_ASSERT(strcmp(columns[i], columns[j]) != 0);
    return LT_OK;
}

void bench_table_free(bench_table *t)
{
    for (long i = 0; i < (t->rows + t->open_row) * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    if (t->journaled)
        lt_csv_detach(&t->journal);
    memset(t, 0, sizeof *t);
}

void bench_row_begin(bench_table *t)
{
    LT_ASSERT(!t->open_row);
    if (t->rows == t->capacity) {
        long capacity = t->capacity ? 2 * t->capacity : 64;
        char **grown = realloc(t->cells, (size_t)capacity * t->ncols * sizeof *grown);
        LT_ASSERT(grown != NULL);
        t->cells = grown;
        t->capacity = capacity;
    }
    memset(t->cells + t->rows * t->ncols, 0, (size_t)t->ncols * sizeof *t->cells);
    t->open_row = 1;
}

void bench_set_str(bench_table *t, const char *column, const char *value)
{
    int c = column_index(t, column);
    if (c < 0 || !t->open_row) {
        fprintf(stderr, "ltbench: internal error: no open row or no column '%s'\n", column);
        abort();
    }
    char **cell = &t->cells[t->rows * t->ncols + c];
    free(*cell);
    *cell = strdup(value != NULL ? value : "");
    LT_ASSERT(*cell != NULL);
}

void bench_set_int(bench_table *t, const char *column, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    bench_set_str(t, column, buf);
}

void bench_set_num(bench_table *t, const char *column, double value)
{
    char buf[40];
    if (isnan(value))
        snprintf(buf, sizeof buf, "nan");
    else if (isinf(value))
        snprintf(buf, sizeof buf, "%s", value > 0 ? "inf" : "-inf");
    else
        snprintf(buf, sizeof buf, "%.17g", value);
    bench_set_str(t, column, buf);
}

static lt_status journal_row(bench_table *t, long row)
{
    for (int c = 0; c < t->ncols; c++)
        lt_csv_str(&t->journal, t->cells[row * t->ncols + c]);
    return lt_csv_end_row(&t->journal);
}

lt_status bench_row_end(bench_table *t)
{
    LT_ASSERT(t->open_row);
    for (int c = 0; c < t->ncols; c++)
        if (t->cells[t->rows * t->ncols + c] == NULL) {
            fprintf(stderr, "ltbench: internal error: row without column '%s'\n",
                    t->columns[c]);
            abort();
        }
    t->open_row = 0;
    t->rows++;
    return t->journaled ? journal_row(t, t->rows - 1) : LT_OK;
}

const char *bench_cell(const bench_table *t, long row, const char *column)
{
    int c = column_index(t, column);
    return c >= 0 && row >= 0 && row < t->rows ? t->cells[row * t->ncols + c] : NULL;
}

double bench_cell_num(const bench_table *t, long row, const char *column)
{
    const char *cell = bench_cell(t, row, column);
    return cell != NULL ? strtod(cell, NULL) : NAN;
}

lt_status bench_row_carry(bench_table *t, const lt_csv_table *from, long long row,
                          const char *from_path)
{
    bench_row_begin(t);
    for (int c = 0; c < t->ncols; c++) {
        int at = lt_csv_table_column(from, t->columns[c]);
        if (at < 0) {
            t->open_row = 0;
            for (int i = 0; i < t->ncols; i++) {
                free(t->cells[t->rows * t->ncols + i]);
                t->cells[t->rows * t->ncols + i] = NULL;
            }
            return lt_fail(LT_E_INPUT,
                           "%s: no column '%s'; it was written by another version of "
                           "ltbench (--overwrite starts over)",
                           from_path, t->columns[c]);
        }
        bench_set_str(t, t->columns[c], lt_csv_table_cell(from, row, at));
    }
    return bench_row_end(t);
}

static void journal_path(char *buf, size_t size, const char *path)
{
    snprintf(buf, size, "%s.partial", path);
}

lt_status bench_table_journal(bench_table *t, const char *path)
{
    if (!lt_dist_is_root())
        return LT_OK; /* rank 0 writes the results */
    char journal[4200];
    journal_path(journal, sizeof journal, path);
    LT_TRY(lt_csv_open_journal(&t->journal, path, journal, t->columns, t->ncols));
    t->journaled = 1;
    for (long r = 0; r < t->rows; r++)
        LT_TRY(journal_row(t, r));
    return lt_csv_sync(&t->journal);
}

lt_status bench_table_sync(bench_table *t)
{
    return t->journaled ? lt_csv_sync(&t->journal) : LT_OK;
}

lt_status bench_table_commit(bench_table *t, const char *path)
{
    if (!lt_dist_is_root())
        return LT_OK;
    if (t->journaled) {
        t->journaled = 0;
        return lt_csv_close(&t->journal);
    }
    lt_csv csv;
    LT_TRY(lt_csv_open(&csv, path, t->columns, t->ncols));
    lt_status status = LT_OK;
    for (long r = 0; r < t->rows && status == LT_OK; r++) {
        for (int c = 0; c < t->ncols; c++)
            lt_csv_str(&csv, t->cells[r * t->ncols + c]);
        status = lt_csv_end_row(&csv);
    }
    if (status != LT_OK) {
        lt_csv_abort(&csv);
        return status;
    }
    return lt_csv_close(&csv);
}

void bench_table_detach(bench_table *t)
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

lt_status bench_table_read_previous(lt_csv_table *prev, int *found, const char *path,
                                    char *read_path, size_t size)
{
    memset(prev, 0, sizeof *prev);
    *found = 0;
    if (!lt_dist_is_root())
        return LT_OK;
    char journal[4200];
    journal_path(journal, sizeof journal, path);
    const char *source = exists(journal) ? journal : exists(path) ? path : NULL;
    if (source == NULL)
        return LT_OK;
    snprintf(read_path, size, "%s", source);
    LT_TRY(source == journal ? lt_csv_read_journal(prev, source) : lt_csv_read(prev, source));
    *found = 1;
    return LT_OK;
}

void bench_table_print(const bench_table *t, const bench_print_col *cols, int count,
                       int key_cols, FILE *out)
{
    for (int i = 0; i < count; i++)
        fprintf(out, "%s%-*s", i ? " " : "", cols[i].width, cols[i].header);
    fputc('\n', out);
    for (long r = 0; r < t->rows; r++) {
        const char *status = bench_cell(t, r, "status");
        int ok = status == NULL || strcmp(status, "ok") == 0;
        for (int i = 0; i < count && (ok || i < key_cols); i++) {
            const char *cell = bench_cell(t, r, cols[i].column);
            if (cell == NULL)
                cell = "-";
            if (cols[i].format != NULL && ok) {
                char num[64];
                double scale = cols[i].scale != 0 ? cols[i].scale : 1.0;
                snprintf(num, sizeof num, cols[i].format, strtod(cell, NULL) * scale);
                fprintf(out, "%s%-*s", i ? " " : "", cols[i].width, num);
            } else {
                fprintf(out, "%s%-*s", i ? " " : "", cols[i].width, cell);
            }
        }
        if (!ok) {
            const char *note = bench_cell(t, r, "note");
            fprintf(out, " %s: %s", status, note != NULL ? note : "");
        }
        fputc('\n', out);
    }
}

/* ---- runs ---- */

const char *bench_run_path(const bench_run *run, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", run->dir, name);
    return buf;
}

/* Proves a file can be written by creating and removing a temporary beside
 * it, before hours of work would end in "cannot write". */
static lt_status probe_writable(const char *path)
{
    lt_atomic_file probe;
    LT_TRY(lt_atomic_open(&probe, path));
    lt_atomic_abort(&probe);
    return LT_OK;
}

lt_status bench_run_open(bench_run *run, const char *dir, int resume, int overwrite,
                         const char *const *files, int file_count,
                         const char *const *checkpoints, int checkpoint_count)
{
    memset(run, 0, sizeof *run);
    if (resume && overwrite)
        return lt_fail(LT_E_USAGE, "--resume and --overwrite: choose one (continue the "
                                   "earlier run, or start over)");
    if (snprintf(run->dir, sizeof run->dir, "%s", dir) >= (int)sizeof run->dir)
        return lt_fail(LT_E_USAGE, "--out: path too long");
    run->resume = resume;
    run->overwrite = overwrite;
    if (!lt_dist_is_root())
        return LT_OK; /* only rank 0 touches the output folder */
    LT_TRY(lt_make_dirs(dir));
    char path[4400];
    int stale = 0;
    for (int i = 0; i < checkpoint_count; i++) {
        bench_run_path(run, checkpoints[i], path, sizeof path);
        stale += lt_atomic_remove_stale(path);
        if (exists(path) && !resume && !overwrite)
            return lt_fail(LT_E_USAGE,
                           "%s holds a checkpoint of an earlier run: --resume continues it, "
                           "--overwrite starts over (replacing its results)",
                           path);
        LT_TRY(probe_writable(path));
    }
    for (int i = 0; i < file_count; i++) {
        bench_run_path(run, files[i], path, sizeof path);
        stale += lt_atomic_remove_stale(path);
        LT_TRY(probe_writable(path));
    }
    if (stale > 0)
        fprintf(stderr, "note: removed %d temporary file%s left in %s by a run that was "
                        "killed\n",
                stale, stale > 1 ? "s" : "", dir);
    return LT_OK;
}

/* ---- signals ---- */

static volatile sig_atomic_t received;

static void on_signal(int sig)
{
    if (received) {
        /* second request: stop now, the default way */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    received = sig;
}

void bench_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int bench_interrupted(void) { return received; }

int bench_interrupt_exit_code(void) { return 128 + received; }

/* ---- kernels ---- */

static int kernel_in(const char *variant, int causal, const char *name)
{
    const char *kernel;
    for (int i = 0; (kernel = lt_attn_kernel_at(variant, causal, i)) != NULL; i++)
        if (strcmp(kernel, name) == 0)
            return 1;
    return 0;
}

lt_status bench_kernel_for(const char *name, const char *const *variants, int count, int causal,
                           const char *variant, const char **kernel)
{
    *kernel = NULL;
    if (name == NULL || strcmp(name, "default") == 0)
        return LT_OK;
    int owner = -1;
    for (int i = 0; i < count && owner < 0; i++)
        if (kernel_in(variants[i], causal, name))
            owner = i;
    if (owner < 0) {
        char list[1024] = "";
        for (int i = 0; i < count; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s: %s",
                     i ? "; " : "", variants[i], lt_attn_kernels_for(variants[i], causal));
        return lt_fail(LT_E_USAGE, "--kernel: '%s' cannot run %s attention here; kernels that "
                                   "can: %s",
                       name, causal ? "causal" : "non-causal", list);
    }
    if (strcmp(variants[owner], variant) == 0)
        *kernel = name;
    return LT_OK;
}

/* ---- errors ---- */

int bench_report(const char *program, lt_status status, const bench_field_flag *map)
{
    /* every rank agreed on this failure: rank 0 says it for all */
    if (!lt_dist_is_root())
        return lt_exit_code(status);
    const char *message = lt_last_error();
    /* "rank N: field: ..." from lt_dist_agree keeps its prefix */
    int prefix = 0;
    if (strncmp(message, "rank ", 5) == 0 && strstr(message, ": ") != NULL)
        prefix = (int)(strstr(message, ": ") - message) + 2;
    for (int i = 0; map != NULL && map[i].field != NULL; i++) {
        size_t len = strlen(map[i].field);
        if (strncmp(message + prefix, map[i].field, len) == 0 && message[prefix + len] == ':') {
            char rewritten[1200];
            snprintf(rewritten, sizeof rewritten, "%.*s%s%s", prefix, message, map[i].flag,
                     message + prefix + len);
            lt_fail(status, "%s", rewritten);
            break;
        }
    }
    return lt_cli_report(program, status);
}

/* ---- the training loop ---- */

static lt_status checkpoint(lt_trainer *t, const bench_train_spec *spec)
{
    if (!lt_dist_is_root())
        return LT_OK;
    /* rows first: a checkpoint never gets ahead of the curve on disk */
    if (spec->curves != NULL)
        LT_TRY(bench_table_sync(spec->curves));
    return lt_trainer_save(t, spec->checkpoint);
}

/* What every rank must agree on after an update: a failure anywhere, a
 * signal anywhere, divergence (the same on all, but checked anyway). */
static lt_status agree_after_update(lt_status status, int *interrupted, int *diverged)
{
    LT_TRY(lt_dist_agree(status));
    double flags[2] = {*interrupted, *diverged}, scratch[2];
    LT_TRY(lt_dist_sum_f64(flags, scratch, 2));
    *interrupted = flags[0] > 0;
    *diverged = flags[1] > 0;
    return LT_OK;
}

lt_status bench_train(lt_trainer *t, const bench_train_spec *spec, double first_loss,
                      double *step_seconds, bench_train_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = "ok";
    r->first_step = t->step;
    lt_divergence divergence;
    /* rank 0 read the curve of a resumed run: its first loss for all */
    LT_TRY(lt_dist_broadcast(&first_loss, sizeof first_loss));
    lt_divergence_start(&divergence, first_loss);
    double comm0 = lt_dist_comm_seconds();
    lt_progress progress;
    lt_progress_resume(&progress, stderr, spec->label, spec->steps, t->step, "updates",
                       spec->quiet);
    long timed = 0;
    lt_status status = LT_OK;
    double start = lt_time_now();
    while (t->step < spec->steps) {
        lt_batch batch;
        status = spec->make_batch(spec->ctx, t->step, &batch);
        if (status != LT_OK)
            break;
        lt_batch_result br;
        double t0 = lt_time_now();
        status = lt_trainer_step(t, &batch, &br);
        int numeric = status == LT_E_NUMERIC, interrupted = bench_interrupted() != 0;
        if (numeric)
            status = LT_OK;
        status = agree_after_update(status, &interrupted, &numeric);
        if (status == LT_OK && numeric) {
            r->status = "diverged";
            snprintf(r->note, sizeof r->note, "%s", lt_last_error());
            break;
        }
        if (status != LT_OK)
            break;
        double seconds = lt_time_now() - t0;
        /* The first update of an invocation pays one-off costs (page faults
         * of fresh buffers, thread start-up): not a sample of the steady
         * state, unless it is the only one. */
        if (t->step > r->first_step + 1 || spec->steps - r->first_step == 1)
            step_seconds[timed++] = seconds;
        status = spec->add_row(spec->ctx, t, &br, lt_time_now() - start);
        if (status != LT_OK)
            break;
        if (lt_divergence_check(&divergence, br.loss)) { /* the same loss on every rank */
            r->status = "diverged";
            snprintf(r->note, sizeof r->note,
                     "loss %g at update %ld stayed above %g x the first loss %g for %d "
                     "updates; try a lower learning rate",
                     br.loss, t->step, LT_DIVERGE_FACTOR, divergence.start, LT_DIVERGE_UPDATES);
            break;
        }
        if (interrupted || t->step % spec->checkpoint_every == 0 || t->step == spec->steps) {
            status = checkpoint(t, spec);
            if (status != LT_OK)
                break;
        }
        if (interrupted) {
            r->status = "interrupted";
            snprintf(r->note, sizeof r->note,
                     "stopped by a signal after update %ld; --resume continues", t->step);
            break;
        }
        char note[128] = "";
        if (spec->note != NULL)
            spec->note(spec->ctx, &br, note, sizeof note);
        lt_progress_update(&progress, t->step, note[0] ? note : NULL);
    }
    r->seconds = lt_time_now() - start;
    r->comm_seconds = lt_dist_comm_seconds() - comm0;
    r->last_step = t->step;
    r->step_time = lt_summarize(step_seconds, (int)timed);
    lt_progress_finish(&progress, status != LT_OK ? "failed" : r->status);
    return status;
}

lt_status bench_carry_rows(bench_table *t, const lt_csv_table *prev, const char *prev_path,
                           const char *column, const char *value, long max_step, long *count)
{
    *count = 0;
    int key = lt_csv_table_column(prev, column), step = lt_csv_table_column(prev, "step");
    if (key < 0 || step < 0)
        return lt_fail(LT_E_INPUT, "%s: no '%s' or 'step' column to resume from", prev_path,
                       column);
    for (long long r = 0; r < prev->nrows; r++) {
        if (strcmp(lt_csv_table_cell(prev, r, key), value) != 0 ||
            strtol(lt_csv_table_cell(prev, r, step), NULL, 10) > max_step)
            continue;
        LT_TRY(bench_row_carry(t, prev, r, prev_path));
        (*count)++;
    }
    return LT_OK;
}

void bench_curve_ends(const bench_table *t, const char *column, const char *value,
                      const char *metric, double *first, double *last_mean)
{
    long n = 0;
    for (long r = 0; r < t->rows; r++)
        n += strcmp(bench_cell(t, r, column), value) == 0;
    *first = *last_mean = NAN;
    if (n == 0)
        return;
    long tail = n / 10 < 1 ? 1 : n / 10 > 50 ? 50 : n / 10, seen = 0;
    double sum = 0;
    for (long r = 0; r < t->rows; r++) {
        if (strcmp(bench_cell(t, r, column), value) != 0)
            continue;
        double x = bench_cell_num(t, r, metric);
        if (seen == 0)
            *first = x;
        if (seen >= n - tail)
            sum += x;
        seen++;
    }
    *last_mean = sum / (double)tail;
}

/* ---- the steps every training program takes ---- */

int bench_parse_presets(lt_cli *cli, const bench_presets *presets, const char *const *preset,
                        bench_common *common, int argc, char **argv, int *exit_now)
{
    lt_status status = bench_presets_apply(cli, presets, *preset);
    LT_ASSERT(status == LT_OK); /* the program's own table */
    int code = bench_parse(cli, common, argc, argv, exit_now);
    if (*exit_now)
        return code;
    status = bench_presets_apply(cli, presets, *preset);
    if (status != LT_OK) {
        *exit_now = 1;
        return lt_cli_report(cli->program, status);
    }
    return 0;
}

lt_status bench_open_curves(bench_table *curves, const char *const *columns, int ncols,
                            const bench_run *run, const char *name, char *path, size_t size,
                            lt_csv_table *prev, int *have_prev, char *prev_path,
                            size_t prev_size)
{
    bench_run_path(run, name, path, size);
    *have_prev = 0;
    prev_path[0] = '\0';
    bench_table_init(curves, columns, ncols);
    if (run->resume)
        LT_TRY(bench_table_read_previous(prev, have_prev, path, prev_path, prev_size));
    return bench_table_journal(curves, path);
}

lt_status bench_resume(lt_trainer *t, const bench_run *run, const char *checkpoint,
                       bench_table *curves, const lt_csv_table *prev, const char *prev_path,
                       const char *key_column, const char *key, long steps_per_row,
                       long *carried)
{
    struct stat st;
    lt_status status = LT_OK;
    *carried = 0;
    if (lt_dist_is_root() && run->resume && stat(checkpoint, &st) == 0) {
        status = lt_trainer_load(t, checkpoint);
        if (status == LT_OK && prev != NULL)
            status = bench_carry_rows(curves, prev, prev_path, key_column, key, t->step,
                                      carried);
        if (status == LT_OK && *carried != t->step / steps_per_row)
            status = lt_fail(LT_E_INPUT,
                             "--resume: %s holds %ld curve rows of %s but its checkpoint is at "
                             "update %ld (%ld update%s a row); --overwrite starts over",
                             prev != NULL ? prev_path : "the output folder", *carried, key,
                             t->step, steps_per_row, steps_per_row > 1 ? "s" : "");
    }
    LT_TRY(lt_dist_agree(status));
    return lt_trainer_broadcast(t);
}
