#include "train/fit.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dist.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/signals.h"
#include "core/timer.h"
#include "io/checkpoint.h"

void lt_fit_state_init(lt_fit_state *s, long steps, double *step_seconds)
{
    memset(s, 0, sizeof *s);
    s->steps = steps;
    s->step_seconds = step_seconds;
    for (long i = 0; i < steps; i++)
        step_seconds[i] = NAN;
    s->first_loss = NAN;
    s->invocations = 1;
}

lt_summary lt_fit_step_time(const lt_fit_state *s, double *scratch)
{
    int count = 0;
    for (long i = 0; i < s->steps; i++)
        if (!isnan(s->step_seconds[i]))
            scratch[count++] = s->step_seconds[i];
    return lt_summarize(scratch, count);
}

void lt_fit_note_peak(lt_fit_state *s, size_t peak)
{
    s->peak_bytes = peak > s->peak_bytes ? peak : s->peak_bytes;
}

/* ---- the state in checkpoints ---- */

/* The scalars of a fit state, as stored: fixed-size fields only. */
typedef struct stored_state {
    int64_t steps, above, window_updates, invocations;
    uint64_t peak_bytes;
    double train_seconds, wall_seconds, comm_seconds, first_loss, window_loss, window_seconds;
} stored_state;

lt_status lt_fit_save(const lt_trainer *t, const lt_fit_state *s, const char *path)
{
    stored_state st = {s->steps,          s->above,          s->window_updates,
                       s->invocations,    s->peak_bytes,     s->train_seconds,
                       s->wall_seconds,   s->comm_seconds,   s->first_loss,
                       s->window_loss,    s->window_seconds};
    lt_ckpt_writer *w;
    LT_TRY(lt_ckpt_writer_open(&w, path));
    lt_status status = lt_trainer_write(t, w);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "fit", &st, sizeof st);
    if (status == LT_OK)
        status = lt_ckpt_writer_add(w, "fit_step_seconds", s->step_seconds,
                                    (size_t)s->steps * sizeof *s->step_seconds);
    if (status == LT_OK && s->trained_by[0] != '\0')
        status = lt_ckpt_writer_add(w, "trained_by", s->trained_by, strlen(s->trained_by));
    if (status != LT_OK) {
        lt_ckpt_writer_abort(w);
        return status;
    }
    return lt_ckpt_writer_commit(w);
}

static lt_status read_state(lt_fit_state *s, const lt_ckpt *ckpt, const char *path, long step)
{
    if (!lt_ckpt_has(ckpt, "fit") || !lt_ckpt_has(ckpt, "fit_step_seconds"))
        return lt_fail(LT_E_INPUT, "%s: a checkpoint without the run's timings and counters "
                                   "(written by an older ltbench); --overwrite starts over",
                       path);
    stored_state st;
    LT_TRY(lt_ckpt_get_exact(ckpt, "fit", &st, sizeof st));
    if (st.steps < step)
        return lt_fail(LT_E_INPUT, "%s: at update %ld of a run of %lld", path, step,
                       (long long)st.steps);
    const void *times;
    size_t bytes;
    LT_TRY(lt_ckpt_find(ckpt, "fit_step_seconds", &times, &bytes));
    if (bytes != (size_t)st.steps * sizeof(double))
        return lt_fail(LT_E_INPUT, "%s: %zu bytes of update timings, expected %lld", path,
                       bytes, (long long)st.steps * (long long)sizeof(double));
    /* A run extended by --steps keeps the timings it has, the rest untimed;
     * one cut short keeps those of its updates. */
    long kept = (long)st.steps < s->steps ? (long)st.steps : s->steps;
    memcpy(s->step_seconds, times, (size_t)kept * sizeof(double));
    s->above = (long)st.above;
    s->window_updates = (long)st.window_updates;
    s->invocations = (long)st.invocations + 1;
    s->peak_bytes = (size_t)st.peak_bytes;
    s->train_seconds = st.train_seconds;
    s->wall_seconds = st.wall_seconds;
    s->window_seconds = st.window_seconds;
    s->comm_seconds = st.comm_seconds;
    s->first_loss = st.first_loss;
    s->window_loss = st.window_loss;
    s->trained_by[0] = '\0';
    if (lt_ckpt_has(ckpt, "trained_by")) {
        const void *text;
        LT_TRY(lt_ckpt_find(ckpt, "trained_by", &text, &bytes));
        if (bytes >= sizeof s->trained_by || memchr(text, '\0', bytes) != NULL)
            return lt_fail(LT_E_INPUT, "%s: a list of the builds that trained it of %zu bytes, "
                                       "expected text of at most %zu", path, bytes,
                           sizeof s->trained_by - 1);
        memcpy(s->trained_by, text, bytes);
        s->trained_by[bytes] = '\0';
    }
    return LT_OK;
}

lt_status lt_fit_broadcast(lt_trainer *t, lt_fit_state *s)
{
    LT_TRY(lt_trainer_broadcast(t));
    if (lt_dist_size() == 1)
        return LT_OK;
    lt_fit_state mine = *s;
    LT_TRY(lt_dist_broadcast(s, sizeof *s));
    double *times = mine.step_seconds;
    long steps = mine.steps;
    s->step_seconds = times;
    s->steps = steps;
    s->track_peak = mine.track_peak;
    s->peak_base = mine.peak_base;
    return lt_dist_broadcast(times, (size_t)steps * sizeof *times);
}

lt_status lt_fit_load(lt_trainer *t, lt_fit_state *s, const char *path)
{
    lt_status status = LT_OK;
    if (lt_dist_is_root()) {
        struct stat st;
        char what[4200];
        snprintf(what, sizeof what, "reading the checkpoint %s", path);
        if (stat(path, &st) == 0)
            status = lt_mem_plan(lt_trainer_read_bytes(t, (size_t)st.st_size) +
                                     lt_mem_rounded((size_t)s->steps * sizeof(double)),
                                 what);
        lt_ckpt *ckpt = NULL;
        if (status == LT_OK)
            status = lt_ckpt_read(&ckpt, path);
        if (status == LT_OK)
            status = lt_trainer_read(t, ckpt, path);
        if (status == LT_OK)
            status = read_state(s, ckpt, path, t->step);
        lt_ckpt_free(ckpt);
    }
    LT_TRY(lt_dist_agree(status));
    return lt_fit_broadcast(t, s);
}

/* ---- the loop ---- */

static lt_status checkpoint(const lt_trainer *t, lt_fit_state *s, const lt_fit_spec *spec)
{
    /* The peak stored counts the writer that stores it: a run resumed from
     * its last checkpoint (only its rows left to write) reports the peak
     * the run itself reached, writer included. */
    if (s->track_peak) {
        size_t writing = lt_mem_current() + lt_ckpt_writer_bytes();
        size_t peak = lt_mem_peak() > writing ? lt_mem_peak() : writing;
        lt_fit_note_peak(s, peak - s->peak_base);
    }
    if (spec->sync != NULL)
        LT_TRY(spec->sync(spec->ctx));
    if (!lt_dist_is_root())
        return LT_OK;
    return lt_fit_save(t, s, spec->checkpoint);
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

/* Divergence: a loss that is not finite, or above the factor times the
 * run's first loss for LT_DIVERGE_UPDATES updates in a row. */
static int diverged(lt_fit_state *s, double loss)
{
    if (!isfinite(loss))
        return 1;
    if (isnan(s->first_loss))
        s->first_loss = loss;
    s->above = loss > LT_DIVERGE_FACTOR * s->first_loss ? s->above + 1 : 0;
    return s->above >= LT_DIVERGE_UPDATES;
}

/* One update: batch, step, the agreement of the ranks; *seconds times the
 * step and the agreement, not the batch's making. */
static lt_status update(lt_trainer *t, const lt_fit_spec *spec, lt_batch_result *br,
                        int *numeric, int *interrupted, double *seconds)
{
    lt_batch batch;
    LT_TRY(lt_source_train(spec->source, t->step, &batch));
    double t0 = lt_time_now();
    lt_status status = lt_trainer_step(t, &batch, br);
    *numeric = status == LT_E_NUMERIC;
    *interrupted = lt_interrupted() != 0;
    if (*numeric)
        status = LT_OK;
    status = agree_after_update(status, interrupted, numeric);
    *seconds = lt_time_now() - t0;
    return status;
}

lt_status lt_fit(lt_trainer *t, lt_fit_state *s, const lt_fit_spec *spec, lt_fit_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = "ok";
    r->first_step = t->step;
    LT_ASSERT(spec->steps <= s->steps);
    lt_progress progress;
    lt_progress_resume(&progress, stderr, spec->label, spec->steps, t->step, "updates",
                       spec->quiet);
    lt_progress_set_later(&progress, spec->later);
    lt_status status = LT_OK;
    double start = lt_time_now();
    while (t->step < spec->steps) {
        lt_batch_result br;
        int numeric, interrupted;
        double seconds, comm0 = lt_dist_comm_seconds();
        status = update(t, spec, &br, &numeric, &interrupted, &seconds);
        if (status == LT_OK && numeric) {
            r->status = "diverged";
            snprintf(r->note, sizeof r->note, "%s", lt_last_error());
            break;
        }
        if (status != LT_OK)
            break;
        s->train_seconds += seconds;
        s->comm_seconds += lt_dist_comm_seconds() - comm0;
        s->window_seconds += seconds;
        /* The first update of an invocation pays one-off costs (page faults
         * of fresh buffers, thread start-up): not a sample of the steady
         * state, unless it is the only one. */
        if (t->step > r->first_step + 1 || spec->steps - r->first_step == 1)
            s->step_seconds[t->step - 1] = seconds;
        s->window_loss += br.loss;
        s->window_updates++;
        if (spec->after_update != NULL)
            status = spec->after_update(spec->ctx, t, &br, s);
        if (status != LT_OK)
            break;
        if (diverged(s, br.loss)) { /* the same loss on every rank */
            r->status = "diverged";
            snprintf(r->note, sizeof r->note,
                     "loss %g at update %ld stayed above %g x the first loss %g for %d "
                     "updates; try a lower learning rate",
                     br.loss, t->step, LT_DIVERGE_FACTOR, s->first_loss, LT_DIVERGE_UPDATES);
            break;
        }
        if (spec->eval_every > 0 && t->step % spec->eval_every == 0) {
            double metric = NAN;
            if (spec->evaluate != NULL)
                status = spec->evaluate(spec->ctx, t, s, &metric);
            if (status != LT_OK)
                break;
            lt_trainer_plateau(t, metric);
            s->window_loss = 0;
            s->window_updates = 0;
            s->window_seconds = 0;
        }
        if (interrupted || t->step % spec->checkpoint_every == 0 || t->step == spec->steps) {
            s->wall_seconds += lt_time_now() - start; /* up to here, in the checkpoint */
            start = lt_time_now();
            status = checkpoint(t, s, spec);
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
            spec->note(spec->ctx, t, &br, note, sizeof note);
        lt_progress_update(&progress, t->step, note[0] ? note : NULL);
    }
    s->wall_seconds += lt_time_now() - start;
    r->last_step = t->step;
    lt_progress_finish(&progress, status != LT_OK ? "failed" : r->status);
    return status;
}

/* ---- evaluation ---- */

size_t lt_eval_scratch_doubles(long sequences, int chunk, int k)
{
    long chunks = (sequences + chunk - 1) / chunk;
    return 2 * (size_t)(chunks > 0 ? chunks : 1) * (size_t)k; /* sums and a gather area */
}

lt_status lt_evaluate(lt_trainer *t, lt_batch_source *source, lt_split split,
                      lt_eval_chunk_fn fn, void *ctx, int k, double *totals, double *scratch,
                      lt_progress *progress)
{
    const int chunk = t->model.config.max_batch;
    const long sequences = lt_source_eval_count(source, split);
    const long chunks = (sequences + chunk - 1) / chunk;
    const size_t n = lt_eval_scratch_doubles(sequences, chunk, k) / 2;
    memset(scratch, 0, n * sizeof *scratch);
    for (long c = lt_dist_rank(); c < chunks; c += lt_dist_size()) {
        lt_batch batch;
        lt_batch_result r;
        LT_TRY(lt_source_eval(source, split, c * chunk, chunk, &batch));
        LT_TRY(lt_trainer_evaluate(t, &batch, &r));
        LT_TRY(fn(ctx, t, &batch, &r, scratch + (size_t)c * k));
        if (progress != NULL)
            lt_progress_update(progress, c * chunk + batch.batch, NULL);
    }
    /* Each chunk's numbers come from one rank (the others hold zeros, and
     * x + 0 is exact), so the sums below see the same bits on any number
     * of ranks. */
    if (lt_dist_size() > 1) {
        double *gathered = scratch + n; /* the second half of the scratch */
        LT_TRY(lt_dist_sum_f64(scratch, gathered, n));
    }
    for (int i = 0; i < k; i++)
        totals[i] = 0;
    for (long c = 0; c < chunks; c++)
        for (int i = 0; i < k; i++)
            totals[i] += scratch[(size_t)c * k + i];
    return LT_OK;
}
