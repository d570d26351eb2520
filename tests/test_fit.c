/* The fit loop (src/model/fit.h) on a tiny copy-task model: a resumed run
 * continues the same numbers, a signal stops it with a checkpoint of the
 * update done, a run that blows up is "diverged", the plateau rule scales
 * the rate, and evaluation sums its chunks in order. */
#include <criterion/criterion.h>

#include <math.h>
#include <signal.h>
#include <string.h>

#include "check.h"
#include "core/signals.h"
#include "core/threads.h"
#include "train/fit.h"

enum { N = 16, BATCH = 4, STEPS = 12 };

static lt_train_config tiny_config(double lr, double clip, double plateau)
{
    lt_train_config tc;
    memset(&tc, 0, sizeof tc);
    tc.model = lt_model_default_config("linear");
    tc.model.vocab = tc.model.classes = LT_COPY_VOCAB;
    tc.model.layers = 1;
    tc.model.heads = 2;
    tc.model.head_dim = 4;
    tc.model.ffn = 8;
    tc.model.max_batch = BATCH;
    tc.model.seq_len = N;
    tc.model.attn.causal = 1;
    tc.model.attn.n_max = N;
    tc.loss = (lt_loss){.kind = LT_LOSS_XENT, .classes = LT_COPY_VOCAB};
    tc.optim = lt_optim_defaults(LT_OPTIM_RADAM);
    tc.optim.lr = lr;
    cr_assert_eq(lt_schedule_init(&tc.schedule, lr, 0), LT_OK);
    tc.clip_norm = clip;
    tc.seed = 3;
    tc.threads = lt_threads_get();
    tc.plateau_factor = plateau;
    return tc;
}

/* What the hooks saw. */
typedef struct record {
    double loss[64], lr[64];
    long updates;
    int raise_at;          /* raise SIGINT after this update (0: never) */
    const double *metrics; /* the evaluation hook's answers */
    int evaluations;
} record;

static lt_status after_update(void *ctx, const lt_trainer *t, const lt_batch_result *r,
                              const lt_fit_state *state)
{
    (void)state;
    record *rec = ctx;
    rec->loss[t->step - 1] = r->loss;
    rec->lr[t->step - 1] = r->lr;
    rec->updates++;
    if (rec->raise_at == t->step)
        raise(SIGINT);
    return LT_OK;
}

static lt_status evaluate(void *ctx, lt_trainer *t, const lt_fit_state *state, double *metric)
{
    (void)t;
    (void)state;
    record *rec = ctx;
    *metric = rec->metrics[rec->evaluations++];
    return LT_OK;
}

typedef struct setup {
    lt_copy_task task;
    lt_batch_source source;
    lt_trainer trainer;
    lt_fit_state state;
    double times[64];
    lt_fit_spec spec;
    record rec;
    char path[200];
} setup;

static void start(setup *s, const lt_train_config *tc, const char *dir, const char *name,
                  long steps)
{
    memset(s, 0, sizeof *s);
    cr_assert_eq(lt_copy_task_init(&s->task, N), LT_OK);
    cr_assert_eq(lt_copy_source_init(&s->source, &s->task, 3, BATCH, 0, 1, 8), LT_OK);
    cr_assert_eq(lt_trainer_init(&s->trainer, tc, lt_threads_get()), LT_OK);
    lt_fit_state_init(&s->state, STEPS, s->times);
    snprintf(s->path, sizeof s->path, "%s/%s", dir, name);
    s->spec = (lt_fit_spec){.label = "test", .steps = steps, .checkpoint_every = 4,
                            .checkpoint = s->path, .quiet = 1, .source = &s->source,
                            .after_update = after_update, .ctx = &s->rec};
}

static void finish(setup *s)
{
    lt_trainer_free(&s->trainer);
    lt_source_free(&s->source);
}

Test(fit, a_resumed_run_continues_the_same_numbers)
{
    check_scratch_make("fit");
    const char *dir = check_scratch_dir();
    lt_train_config tc = tiny_config(3e-3, 1, 0);
    static setup straight, part, rest;
    lt_fit_result r;
    start(&straight, &tc, dir, "straight.ckpt", STEPS);
    cr_assert_eq(lt_fit(&straight.trainer, &straight.state, &straight.spec, &r), LT_OK);
    cr_assert_str_eq(r.status, "ok");
    cr_assert_eq(r.last_step, STEPS);

    start(&part, &tc, dir, "part.ckpt", 5);
    cr_assert_eq(lt_fit(&part.trainer, &part.state, &part.spec, &r), LT_OK);
    cr_assert_eq(r.last_step, 5);
    start(&rest, &tc, dir, "rest.ckpt", STEPS);
    cr_assert_eq(lt_fit_load(&rest.trainer, &rest.state, part.path), LT_OK);
    cr_assert_eq(rest.trainer.step, 5);
    cr_assert_eq(lt_fit(&rest.trainer, &rest.state, &rest.spec, &r), LT_OK);
    cr_assert_eq(r.first_step, 5);

    cr_assert_arr_eq(straight.trainer.model.params, rest.trainer.model.params,
                     straight.trainer.model.param_count * sizeof(float));
    cr_assert_arr_eq(straight.rec.loss + 5, rest.rec.loss + 5, (STEPS - 5) * sizeof(double));
    cr_assert_arr_eq(straight.rec.loss, part.rec.loss, 5 * sizeof(double));
    cr_assert_eq(rest.state.first_loss, straight.state.first_loss, "kept across the resume");
    cr_assert_eq(rest.state.window_loss, straight.state.window_loss);
    cr_assert_eq(rest.state.window_updates, STEPS);
    cr_assert_eq(rest.state.invocations, 2);
    /* timings of both invocations, the first update of each left untimed */
    cr_assert(isnan(rest.state.step_seconds[0]) && !isnan(rest.state.step_seconds[1]));
    cr_assert(isnan(rest.state.step_seconds[5]) && !isnan(rest.state.step_seconds[6]));
    cr_assert_gt(rest.state.train_seconds, part.state.train_seconds);
    finish(&straight);
    finish(&part);
    finish(&rest);
    check_scratch_remove();
}

Test(fit, a_signal_stops_after_the_update_with_a_checkpoint)
{
    check_scratch_make("fit");
    const char *dir = check_scratch_dir();
    lt_signals_install();
    lt_train_config tc = tiny_config(3e-3, 1, 0);
    static setup s, again;
    lt_fit_result r;
    start(&s, &tc, dir, "run.ckpt", STEPS);
    s.rec.raise_at = 3; /* seen by the agreement after the next update */
    cr_assert_eq(lt_fit(&s.trainer, &s.state, &s.spec, &r), LT_OK);
    cr_assert_str_eq(r.status, "interrupted");
    cr_assert_eq(r.last_step, 4);
    cr_assert(strstr(r.note, "--resume") != NULL);
    start(&again, &tc, dir, "other.ckpt", STEPS);
    cr_assert_eq(lt_fit_load(&again.trainer, &again.state, s.path), LT_OK);
    cr_assert_eq(again.trainer.step, 4, "the checkpoint holds the update done");
    finish(&s);
    finish(&again);
    check_scratch_remove();
}

Test(fit, a_run_that_blows_up_is_diverged_with_its_last_checkpoint_kept)
{
    check_scratch_make("fit");
    const char *dir = check_scratch_dir();
    lt_train_config tc = tiny_config(1e3, 0, 0);
    static setup s;
    lt_fit_result r;
    start(&s, &tc, dir, "run.ckpt", STEPS);
    cr_assert_eq(lt_fit(&s.trainer, &s.state, &s.spec, &r), LT_OK);
    cr_assert_str_eq(r.status, "diverged");
    cr_assert_lt(r.last_step, STEPS);
    cr_assert(r.note[0] != '\0');
    finish(&s);
    check_scratch_remove();
}

Test(fit, the_plateau_rule_scales_the_rate_after_evaluations)
{
    check_scratch_make("fit");
    const char *dir = check_scratch_dir();
    lt_train_config tc = tiny_config(1e-3, 1, 0.5);
    static setup s;
    lt_fit_result r;
    start(&s, &tc, dir, "run.ckpt", 8);
    static const double metrics[] = {1.0, 2.0, 0.5, 0.7};
    s.rec.metrics = metrics;
    s.spec.eval_every = 2;
    s.spec.evaluate = evaluate;
    cr_assert_eq(lt_fit(&s.trainer, &s.state, &s.spec, &r), LT_OK);
    cr_assert_eq(s.rec.evaluations, 4);
    /* evaluations after updates 2, 4, 6, 8: best, worse (halve), best, worse */
    const double scale[8] = {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5};
    for (int i = 0; i < 8; i++)
        cr_assert_eq(s.rec.lr[i], lt_schedule_lr(&tc.schedule, i + 1) * scale[i], "update %d",
                     i + 1);
    cr_assert_eq(s.trainer.plateau.scale, 0.25);
    cr_assert_eq(s.trainer.plateau.best, 0.5);
    cr_assert_eq(s.state.window_updates, 0, "the window restarts at each evaluation");
    finish(&s);
    check_scratch_remove();
}

static lt_status sum_chunk(void *ctx, const lt_trainer *t, const lt_batch *batch,
                           const lt_batch_result *r, double *stats)
{
    (void)ctx;
    (void)t;
    stats[0] = r->sum;
    stats[1] = batch->batch;
    return LT_OK;
}

Test(fit, evaluation_sums_its_chunks_in_order)
{
    lt_train_config tc = tiny_config(1e-3, 1, 0);
    static setup s;
    start(&s, &tc, "/tmp", "unused.ckpt", STEPS);
    double totals[2], scratch[64];
    cr_assert_leq(lt_eval_scratch_doubles(8, BATCH, 2), 64);
    cr_assert_eq(lt_evaluate(&s.trainer, &s.source, LT_SPLIT_TEST, sum_chunk, NULL, 2, totals,
                             scratch, NULL),
                 LT_OK);
    double expected = 0;
    for (int c = 0; c < 2; c++) {
        lt_batch b;
        lt_batch_result r;
        cr_assert_eq(lt_source_eval(&s.source, LT_SPLIT_TEST, c * BATCH, BATCH, &b), LT_OK);
        cr_assert_eq(lt_trainer_evaluate(&s.trainer, &b, &r), LT_OK);
        expected += r.sum;
    }
    cr_assert_eq(totals[0], expected, "the same sums in the same order");
    cr_assert_eq(totals[1], 8);
    finish(&s);
}
