#include "experiment/resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dist.h"
#include "core/mem.h"
#include "core/provenance.h"

static lt_status read_previous_table(lt_exp_previous_table *p, const char *path)
{
    for (int i = 0; i < 2; i++)
        LT_TRY(lt_table_read_previous(&p->rows[i], &p->have[i], path, i == 0, p->path[i],
                                      sizeof p->path[i]));
    return LT_OK;
}

lt_status lt_exp_read_previous(lt_exp_previous *p, const lt_exp_run *run)
{
    memset(p, 0, sizeof *p);
    if (!run->o.resume)
        return LT_OK;
    LT_TRY(read_previous_table(&p->curves, run->curves_path));
    return read_previous_table(&p->results, run->results_path);
}

void lt_exp_free_previous(lt_exp_previous *p)
{
    for (int i = 0; i < 2; i++) {
        lt_csv_table_free(&p->curves.rows[i]);
        lt_csv_table_free(&p->results.rows[i]);
    }
}

/* Whether table `i` of `p` holds a row whose key column names `model`. */
static int holds_model(const lt_exp_previous_table *p, int i, const char *key, const char *model)
{
    int k = p->have[i] ? lt_csv_table_column(&p->rows[i], key) : -1;
    for (long long r = 0; k >= 0 && r < p->rows[i].nrows; r++)
        if (strcmp(lt_csv_table_cell(&p->rows[i], r, k), model) == 0)
            return 1;
    return 0;
}

/* Where `model`'s earlier rows come from: 0, the journals, where they hold
 * any row of it; else 1, the finished files. */
static int source_of(const lt_exp_previous *p, const char *key, const char *model)
{
    return holds_model(&p->curves, 0, key, model) || holds_model(&p->results, 0, key, model)
               ? 0
               : 1;
}

/* Carries the rows of `from` whose key column names `model` (all of them,
 * or those at most `max_step` by their step column when max_step >= 0). */
static lt_status carry_rows(lt_table *to, const lt_csv_table *from, const char *from_path,
                            const char *key, const char *model, long max_step, long *count)
{
    *count = 0;
    int k = lt_csv_table_column(from, key), step = lt_csv_table_column(from, "step");
    if (k < 0 || (max_step >= 0 && step < 0))
        return lt_fail(LT_E_INPUT, "%s: no '%s' or 'step' column to resume from", from_path,
                       key);
    for (long long r = 0; r < from->nrows; r++) {
        if (strcmp(lt_csv_table_cell(from, r, k), model) != 0)
            continue;
        if (max_step >= 0 && strtol(lt_csv_table_cell(from, r, step), NULL, 10) > max_step)
            continue;
        LT_TRY(lt_row_carry(to, from, r, from_path));
        (*count)++;
    }
    return LT_OK;
}

/* This build as a checkpoint records who trained it: the revision and what
 * else decides the numbers (compiler and flags, kernel set, BLAS kernels). */
void lt_exp_this_build(char *buf, size_t size)
{
    lt_provenance p;
    lt_provenance_get(&p);
    snprintf(buf, size, "revision %s; build %s; kernels %s; BLAS %s", p.git_revision, p.build,
             p.kernel_isa, p.blas);
}

/* The revisions that trained a model, in order, each once: "A" or "A+B". */
static void revisions_of(const char *trained_by, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t n = 0;
    for (const char *line = trained_by; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        char rev[128] = "";
        if (sscanf(line, "revision %127[^;\n]", rev) == 1 && strstr(buf, rev) == NULL &&
            n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n > 0 ? "+" : "", rev);
        line += len + (end != NULL);
    }
}

/* Rows that end from now on name the revisions of `trained_by`. */
void lt_exp_name_revisions(lt_exp_run *run, const char *trained_by, char *buf, size_t size)
{
    revisions_of(trained_by, buf, size);
    run->curves.revision = run->results.revision = buf;
}

/* A checkpoint continues only under the build that wrote it, unless
 * --mixed-revisions says otherwise; then this build joins its list. */
static lt_status check_trained_by(const lt_exp_run *run, lt_fit_state *state, const char *path)
{
    char mine[LT_FIT_TRAINED_BY_MAX / 4];
    lt_exp_this_build(mine, sizeof mine);
    const char *last = strrchr(state->trained_by, '\n');
    last = last != NULL ? last + 1 : state->trained_by;
    if (strcmp(last, mine) == 0)
        return LT_OK;
    if (!run->o.mixed_revisions)
        return lt_fail(LT_E_USAGE, "--resume: %s was written by %s; this is %s. Continuing "
                                   "would make one run's numbers with two builds: resume it "
                                   "with the build that wrote it, start over with "
                                   "--overwrite, or add --mixed-revisions to continue and "
                                   "name both in its rows",
                       path, last[0] ? last : "an ltbench that did not record its build", mine);
    size_t used = strlen(state->trained_by);
    if (used + strlen(mine) + 2 > sizeof state->trained_by)
        return lt_fail(LT_E_USAGE, "--resume: %s was trained by more builds than a checkpoint "
                                   "lists (%zu bytes of them): --overwrite starts over",
                       path, used);
    snprintf(state->trained_by + used, sizeof state->trained_by - used, "%s%s",
             used > 0 ? "\n" : "", mine);
    return LT_OK;
}

/* Continues a model from its checkpoint where --resume finds one, carrying
 * its curve rows up to the checkpoint. */
static lt_status resume_model(lt_exp_run *run, const lt_exp_previous *prev, lt_exp_model *m,
                              lt_trainer *t, lt_fit_state *state, long eval_every, int *resumed)
{
    char path[4400];
    lt_outdir_path(&run->dir, m->checkpoint, path, sizeof path);
    struct stat st;
    int found = lt_dist_is_root() && run->o.resume && stat(path, &st) == 0;
    LT_TRY(lt_dist_broadcast(&found, sizeof found));
    *resumed = found;
    if (!found)
        return lt_fit_broadcast(t, state); /* every rank starts from rank 0's parameters */
    LT_TRY(lt_fit_load(t, state, path));
    long carried = 0;
    lt_status status = LT_OK;
    const lt_exp_previous_table *curves = &prev->curves;
    int from = source_of(prev, run->exp->key_column, m->name);
    if (lt_dist_is_root() && curves->have[from])
        status = carry_rows(&run->curves, &curves->rows[from], curves->path[from],
                            run->exp->key_column, m->name, t->step, &carried);
    long expected = eval_every > 0 ? t->step / eval_every : t->step;
    if (status == LT_OK && lt_dist_is_root() && carried != expected)
        status = lt_fail(LT_E_INPUT,
                         "--resume: %s holds %ld curve rows of %s but its checkpoint is at "
                         "update %ld (%ld expected); a run that did not end keeps its rows "
                         "in %s.partial until it does, so that journal must stay beside the "
                         "checkpoints; --overwrite starts over",
                         curves->have[from] ? curves->path[from] : "the output folder", carried,
                         m->name, t->step, expected, run->curves_path);
    return lt_dist_agree(status);
}

/* Whether `model`'s results rows in `rows` are final: none says its
 * training was interrupted. */
static int rows_final(const lt_csv_table *rows, const char *key, const char *model)
{
    int k = lt_csv_table_column(rows, key), status = lt_csv_table_column(rows, "status");
    for (long long r = 0; k >= 0 && status >= 0 && r < rows->nrows; r++)
        if (strcmp(lt_csv_table_cell(rows, r, k), model) == 0 &&
            strcmp(lt_csv_table_cell(rows, r, status), "interrupted") == 0)
            return 0;
    return 1;
}

/* The rows an earlier run wrote for a model it finished, carried as they
 * are; 0 when it wrote none. A checkpoint beyond --steps whose run did not
 * finish is refused: its rows would say "interrupted" beside finished
 * ones, and no run of --steps updates ever reached it. */
static lt_status keep_finished(lt_exp_run *run, const lt_exp_previous *prev, const lt_exp_model *m,
                               const lt_trainer *t, long steps, int *kept)
{
    long carried = 0;
    *kept = 0;
    const lt_exp_previous_table *results = &prev->results;
    const char *key = run->exp->key_column;
    int from = source_of(prev, key, m->name);
    int final = !results->have[from] || rows_final(&results->rows[from], key, m->name);
    if (lt_dist_is_root() && results->have[from] && final)
        LT_TRY(carry_rows(&run->results, &results->rows[from], results->path[from], key,
                          m->name, -1, &carried));
    *kept = carried > 0;
    LT_TRY(lt_dist_broadcast(kept, sizeof *kept));
    lt_status status = LT_OK;
    if (!*kept && t->step > steps && lt_dist_is_root())
        status = lt_fail(LT_E_USAGE,
                         "--resume --steps %ld: the checkpoint of %s is at update %ld of a run "
                         "that did not finish; give --steps %ld or more to finish it, or "
                         "--overwrite to start over",
                         steps, m->name, t->step, t->step);
    LT_TRY(lt_dist_agree(status));
    if (*kept && lt_dist_is_root())
        fprintf(stderr, "%s %s: already trained to update %ld (%ld asked); its results are "
                        "kept\n",
                run->exp->name, m->name, t->step, steps);
    return LT_OK;
}

/* Whether this run leaves `model`'s rows to earlier runs: it does not list
 * it, or it was stopped (Ctrl-C) before reaching it (`reached` models ran). */
static int left_to_earlier(const lt_exp_run *run, const char *model, int reached)
{
    const lt_exp_model *m = lt_exp_find_model(run, model);
    return m == NULL || m - run->models >= reached;
}

typedef struct pending_rows {
    const lt_exp_run *run;
    int reached;
} pending_rows;

static int is_pending(void *ctx, const lt_csv_table *rows, long long row)
{
    const pending_rows *p = ctx;
    int k = lt_csv_table_column(rows, p->run->exp->key_column);
    return k >= 0 && left_to_earlier(p->run, lt_csv_table_cell(rows, row, k), p->reached);
}

/* A resumed run's journals, written whole once a model's rows are carried
 * (`reached` models so far): the rows of the table, then those of the
 * earlier journal whose models this run has not reached, so a kill at any
 * instant leaves every model's rows for the next --resume. */
lt_status lt_exp_rewrite_journals(lt_exp_run *run, const lt_exp_previous *prev, int reached)
{
    if (!run->o.resume)
        return LT_OK; /* a fresh run's journals only grow */
    pending_rows pending = {run, reached};
    const lt_exp_previous_table *tables[2] = {&prev->curves, &prev->results};
    lt_table *to[2] = {&run->curves, &run->results};
    const char *paths[2] = {run->curves_path, run->results_path};
    lt_status status = LT_OK;
    for (int i = 0; i < 2 && status == LT_OK; i++) {
        lt_table_more more = {&tables[i]->rows[0], tables[i]->path[0], is_pending, &pending};
        status = lt_table_journal(to[i], paths[i], tables[i]->have[0] ? &more : NULL);
    }
    return lt_dist_agree(status);
}

/* A model's checkpoint, where --resume finds one: continued, or its rows
 * kept as they are when it is finished (*kept). */
lt_status lt_exp_resume_or_keep(lt_exp_run *run, const lt_exp_previous *prev, lt_exp_model *m,
                                lt_trainer *t, lt_fit_state *state, long eval_every, int *kept)
{
    int resumed = 0;
    *kept = 0;
    LT_TRY(resume_model(run, prev, m, t, state, eval_every, &resumed));
    if (!resumed)
        return LT_OK;
    lt_mem_reset_peak(); /* reading the checkpoint is not the run's work */
    if (t->step >= state->steps)
        LT_TRY(keep_finished(run, prev, m, t, state->steps, kept));
    /* rows kept as they were name who made them; anything more is made
     * now, from this checkpoint */
    if (*kept)
        return LT_OK;
    char path[4400];
    lt_outdir_path(&run->dir, m->checkpoint, path, sizeof path);
    return lt_dist_agree(check_trained_by(run, state, path));
}

/* Rows of the models this run leaves to earlier runs, kept as they were:
 * a run stopped before a model an earlier run finished must not drop it. */
lt_status lt_exp_carry_unlisted(lt_exp_run *run, const lt_exp_previous *prev, int reached)
{
    const lt_exp_previous_table *tables[2] = {&prev->curves, &prev->results};
    lt_table *to[2] = {&run->curves, &run->results};
    const char *key = run->exp->key_column;
    /* the journals hold these rows already (rewrite_journals) or the
     * finished files do: carried to the table only, for the commit */
    lt_table_detach(&run->curves);
    lt_table_detach(&run->results);
    for (int i = 0; i < 2; i++)
        for (int from = 0; from < 2; from++) {
            const lt_exp_previous_table *p = tables[i];
            int k = p->have[from] ? lt_csv_table_column(&p->rows[from], key) : -1;
            const char *model = NULL; /* rows come grouped by model: decide once a group */
            int carry = 0;
            for (long long r = 0; k >= 0 && r < p->rows[from].nrows; r++) {
                const char *cell = lt_csv_table_cell(&p->rows[from], r, k);
                if (model == NULL || strcmp(model, cell) != 0) {
                    model = cell;
                    carry = left_to_earlier(run, cell, reached) &&
                            source_of(prev, key, cell) == from;
                }
                if (carry)
                    LT_TRY(lt_row_carry(to[i], &p->rows[from], r, p->path[from]));
            }
        }
    return LT_OK;
}

