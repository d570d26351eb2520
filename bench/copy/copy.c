/* ltbench copy: the paper's synthetic copy task (sec. 4.1.1, Figure 2).
 * Trains a causal transformer per attention variant on sequences "prefix,
 * separator, prefix again", scoring only the copied half, and reports the
 * loss curve, time per update, peak memory and accuracy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/threads.h"
#include "core/timer.h"
#include "datasets/copy.h"
#include "experiment/experiment.h"
#include "copy/copy.h"

enum { MIN_SCALED_STEPS = 20, STATS = 3 };

static const lt_preset_value preset_values[] = {
    {"--seq", {"32", "128", "128", "128"}},
    {"--batch", {"16", "32", "32", "64"}},
    {"--steps", {"1000", "3000", "10000", "10000"}},
    {"--layers", {"2", "2", "2", "4"}},
    {"--heads", {"2", "4", "4", "8"}},
    {"--head-dim", {"16", "16", "32", "32"}},
    {"--ffn", {"64", "256", "512", "1024"}},
    {"--dropout", {"0", "0", "0", "0.1"}},
    {"--lr", {"3e-3", "1e-3", "1e-3", "1e-3"}},
    {"--clip", {"1", "1", "1", "0"}},
    {"--lr-drops", {"none", "2500:0.1", "5000:0.1", "3000:0.1"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: a tiny model that visibly learns; used by the tests",
     "minutes on a 2-core machine (the default)",
     "about an hour on a 2-core machine: the paper's head width (32) on 2 layers of 4 "
     "heads, 10000 updates (learning rate x0.1 after 5000); linear attention converges "
     "like softmax",
     "the paper: 4 layers, 8 heads of 32, FFN 1024, dropout 0.1, RAdam 1e-3 -> 1e-4 after "
     "3000 updates, batch 64, N = 128"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

typedef struct copy_run {
    long seq, steps, eval_batches;
    lt_copy_task task;
    lt_batch_source source;
    char scaling_note[512];
    double *eval_scratch;
} copy_run;

static int copy_flags(void *self, lt_flag *f)
{
    copy_run *c = self;
    f[0] = (lt_flag){"--seq", LT_FLAG_INT, &c->seq, "N",
                     "sequence length (prefix n in [N/4, (N-1)/2))", LT_COPY_MIN_SEQ, 1 << 20,
                     NULL, 0};
    f[1] = (lt_flag){"--steps", LT_FLAG_INT, &c->steps, "S",
                     "updates (a resumed run continues up to S)", 1, 1 << 30, NULL, 0};
    f[2] = (lt_flag){"--eval-batches", LT_FLAG_INT, &c->eval_batches, "K",
                     "held-out batches for the final evaluation", 0, 1 << 20, NULL, 0};
    return 3;
}

static void copy_defaults(void *self, lt_exp_run *run)
{
    copy_run *c = self;
    c->eval_batches = 4;
    snprintf(run->curves_file, sizeof run->curves_file, "curves.csv");
    snprintf(run->results_file, sizeof run->results_file, "summary.csv");
}

/* When --seq exceeds the preset's length, and unless --batch/--steps are
 * given, batch x N stays the preset's tokens per update and the number of
 * updates shrinks by the same factor (at least MIN_SCALED_STEPS). */
static lt_status copy_check(void *self, lt_exp_run *run, lt_cli *cli)
{
    copy_run *c = self;
    lt_exp_options *o = &run->o;
    LT_TRY(lt_copy_task_init(&c->task, (int)c->seq));
    int p = lt_preset_index(run->exp->presets, o->preset);
    long seq0 = atol(preset_values[0].values[p]), batch0 = atol(preset_values[1].values[p]);
    long steps0 = atol(preset_values[2].values[p]);
    double factor = (double)c->seq / (double)seq0;
    int batch_given = lt_cli_flag(cli, "--batch")->seen;
    int steps_given = lt_cli_flag(cli, "--steps")->seen;
    if (factor <= 1 || (batch_given && steps_given))
        return LT_OK;
    if (!batch_given)
        o->batch = (long)fmax(1.0, floor((double)batch0 / factor));
    if (!steps_given)
        c->steps = (long)fmax(MIN_SCALED_STEPS, floor((double)steps0 / factor));
    snprintf(c->scaling_note, sizeof c->scaling_note,
             "preset %s is sized for N=%ld; at N=%ld batch = max(1, %ld/%.0f) = %ld and "
             "updates = max(%d, %ld/%.0f) = %ld (flags given override this)",
             o->preset, seq0, c->seq, batch0, factor, o->batch, MIN_SCALED_STEPS, steps0,
             factor, c->steps);
    return LT_OK;
}

static lt_status copy_setup(void *self, lt_exp_run *run)
{
    copy_run *c = self;
    const lt_exp_options *o = &run->o;
    size_t scratch = lt_eval_scratch_doubles(c->eval_batches * o->batch, lt_exp_shard_batch(run),
                                             STATS);
    LT_TRY(lt_mem_alloc((void **)&c->eval_scratch, scratch * sizeof(double),
                        "evaluation sums"));
    if (!lt_dist_is_root())
        return LT_OK;
    lt_cli_print_wrapped(
        stdout, 100, 4,
        "ltbench copy: preset %s, N=%ld, batch %ld, %ld updates, %ld layers, %ld heads x %ld, "
        "FFN %ld, dropout %g, %s lr %g drops %s, clip %g, %d threads x %d ranks, %d shards, "
        "seed %ld\n",
        o->preset, c->seq, o->batch, c->steps, o->layers, o->heads, o->head_dim, o->ffn, o->dropout,
        o->optimizer, o->lr, o->lr_drops, o->clip, lt_threads_get(), lt_dist_size(),
        lt_exp_shards(run), o->common.seed);
    if (c->scaling_note[0])
        printf("(%s)\n", c->scaling_note);
    fflush(stdout);
    return LT_OK;
}

static lt_status copy_configure(void *self, lt_exp_run *run, lt_exp_model *m)
{
    (void)self;
    (void)run;
    m->config.model.vocab = LT_COPY_VOCAB;
    m->config.model.classes = LT_COPY_VOCAB;
    m->config.loss = (lt_loss){.kind = LT_LOSS_XENT, .classes = LT_COPY_VOCAB};
    return LT_OK;
}

static lt_status copy_source(void *self, lt_exp_run *run, lt_batch_source **out)
{
    copy_run *c = self;
    *out = &c->source;
    return lt_copy_source_init(&c->source, &c->task, (uint64_t)run->o.common.seed,
                               (int)run->o.batch, lt_dist_rank(), lt_dist_size(),
                               c->eval_batches * run->o.batch);
}

static void copy_release(void *self, lt_batch_source *source)
{
    (void)self;
    lt_source_free(source);
}

static long copy_steps(void *self, lt_exp_run *run, const lt_batch_source *source)
{
    (void)run;
    (void)source;
    return ((copy_run *)self)->steps;
}

/* ---- rows ---- */

static double accuracy(const lt_batch_result *r)
{
    return r->counted ? (double)r->correct / (double)r->counted : NAN;
}

static lt_status copy_update_row(void *self, lt_exp_run *run, const lt_exp_model *m,
                                 const lt_trainer *t, const lt_batch_result *r,
                                 const lt_fit_state *state)
{
    lt_table *curves = &run->curves;
    (void)self;
    lt_exp_row_begin(run, curves, m);
    lt_set_int(curves, "step", t->step);
    lt_set_num(curves, "elapsed_s", state->train_seconds);
    lt_set_num(curves, "loss", r->loss);
    lt_set_num(curves, "copy_accuracy", accuracy(r));
    lt_set_num(curves, "lr", r->lr);
    lt_set_num(curves, "grad_norm", r->grad_norm);
    return lt_row_end(curves);
}

static void copy_note(void *self, const lt_trainer *t, const lt_batch_result *r, char *buf,
                      size_t size)
{
    (void)self;
    (void)t;
    snprintf(buf, size, "loss %.4f acc %.3f", r->loss, accuracy(r));
}

/* Per held-out chunk: loss x count, correct and counted positions. */
static lt_status eval_chunk(void *ctx, const lt_trainer *t, const lt_batch *batch,
                            const lt_batch_result *r, double *stats)
{
    (void)ctx;
    (void)t;
    (void)batch;
    stats[0] = r->loss * (double)r->counted;
    stats[1] = (double)r->correct;
    stats[2] = (double)r->counted;
    return LT_OK;
}

static void not_applicable_row(lt_exp_run *run, const lt_exp_model *m,
                               const lt_exp_outcome *out)
{
    lt_table *s = &run->results;
    lt_exp_row_begin(run, s, m);
    lt_set_int(s, "shards", lt_exp_shards(run));
    const char *nan_columns[] = {"step_median_s", "step_min_s", "step_max_s", "tokens_per_s",
                                 "comm_s_per_update", "loss_start", "loss_end",
                                 "copy_accuracy_end", "eval_loss", "eval_copy_accuracy",
                                 "total_s"};
    for (size_t i = 0; i < sizeof nan_columns / sizeof nan_columns[0]; i++)
        lt_set_num(s, nan_columns[i], NAN);
    const char *zero_columns[] = {"first_step", "last_step", "peak_bytes", "planned_bytes",
                                  "infer_planned_bytes", "params", "eval_sequences"};
    for (size_t i = 0; i < sizeof zero_columns / sizeof zero_columns[0]; i++)
        lt_set_int(s, zero_columns[i], 0);
    lt_set_str(s, "status", out->status);
    lt_set_str(s, "config", "");
    lt_set_str(s, "note", out->note);
    lt_row_end(s);
}

static lt_status copy_finish(void *self, lt_exp_run *run, lt_exp_model *m, lt_trainer *t,
                             lt_exp_outcome *out)
{
    copy_run *c = self;
    if (t == NULL) {
        not_applicable_row(run, m, out);
        return LT_OK;
    }
    double totals[STATS] = {NAN, NAN, NAN}, eval_start = lt_time_now();
    long sequences = 0;
    if (strcmp(out->status, "ok") == 0) {
        LT_TRY(lt_evaluate(t, out->source, LT_SPLIT_TEST, eval_chunk, NULL, STATS, totals,
                           c->eval_scratch, NULL));
        sequences = c->eval_batches * run->o.batch;
    }
    double eval_loss = totals[2] > 0 ? totals[0] / totals[2] : NAN;
    double eval_acc = totals[2] > 0 ? totals[1] / totals[2] : NAN;
    lt_fit_note_peak(out->state, lt_mem_peak() - out->state->peak_base);
    size_t infer_bytes = 0;
    LT_TRY(lt_model_plan(&m->config.model, LT_MODEL_INFER, lt_threads_get(), &infer_bytes,
                         NULL));
    lt_summary step = out->step_time;
    lt_table *s = &run->results;
    lt_exp_row_begin(run, s, m);
    lt_set_str(s, "status", out->status);
    lt_set_int(s, "first_step", out->fit.first_step);
    lt_set_int(s, "last_step", out->fit.last_step);
    lt_set_num(s, "step_median_s", step.median);
    lt_set_num(s, "step_min_s", step.min);
    lt_set_num(s, "step_max_s", step.max);
    lt_set_num(s, "tokens_per_s", (double)(run->o.batch * c->seq) / step.median);
    lt_set_num(s, "comm_s_per_update",
               out->fit.last_step > 0 ? out->state->comm_seconds / (double)out->fit.last_step
                                      : NAN);
    lt_set_int(s, "shards", lt_exp_shards(run));
    lt_set_int(s, "peak_bytes", (long long)out->state->peak_bytes);
    lt_set_int(s, "planned_bytes", (long long)(out->planned_bytes + out->source->bytes));
    lt_set_int(s, "infer_planned_bytes", (long long)infer_bytes);
    lt_set_int(s, "params", (long long)out->params);
    double start, end, acc_start, acc_end;
    lt_table_curve_ends(&run->curves, "variant", m->name, "loss", &start, &end);
    lt_table_curve_ends(&run->curves, "variant", m->name, "copy_accuracy", &acc_start, &acc_end);
    lt_set_num(s, "loss_start", start);
    lt_set_num(s, "loss_end", end);
    lt_set_num(s, "copy_accuracy_end", acc_end);
    lt_set_num(s, "eval_loss", eval_loss);
    lt_set_num(s, "eval_copy_accuracy", eval_acc);
    lt_set_int(s, "eval_sequences", sequences);
    lt_set_num(s, "total_s", out->state->wall_seconds + (lt_time_now() - eval_start));
    /* Every setting of the run (its checkpoints store the same line, with
     * the learning-rate drops reached so far). */
    char description[2048];
    lt_train_config_describe(&m->config, description, sizeof description);
    lt_set_str(s, "config", description);
    char note[1400];
    snprintf(note, sizeof note, "%s%s%s", out->note, out->note[0] && c->scaling_note[0] ? "; " : "",
             c->scaling_note);
    lt_set_str(s, "note", note);
    return lt_row_end(s);
}

static void copy_teardown(void *self, lt_exp_run *run)
{
    (void)run;
    lt_mem_free(((copy_run *)self)->eval_scratch);
}

static void copy_footnote(void *self, lt_exp_run *run)
{
    copy_run *c = self;
    printf("(s/update: median, min, max over the updates after the first; loss: first update "
           "and\n mean of the last tenth; copy acc: argmax accuracy on the copied half, "
           "training\n batches; eval acc: %ld held-out sequences, no dropout; chance is 0.1)\n",
           c->eval_batches * run->o.batch);
}

static const char details[] =
    "With --seq above the preset's N, and unless --batch/--steps are given, the batch\n"
    "shrinks so batch x N stays the preset's tokens per update, and the number of\n"
    "updates shrinks by the same factor N grows (at least 20), so `ltbench copy --seq\n"
    "8192` stays within minutes. The model is pre-norm (GELU by default), token\n"
    "embeddings plus sinusoidal positions (added), causal attention; loss and accuracy\n"
    "count only the copied half. A loss that is not finite, or above 4 x the first\n"
    "loss for 20 updates in a row, stops that variant as diverged (exit status 1).\n"
    "Ctrl-C or SIGTERM stops after the current update with a checkpoint and the rows\n"
    "so far (exit status 130 or 143; --resume continues); a second Ctrl-C stops at\n"
    "once. Writes OUT/curves.csv (every update; OUT/curves.csv.partial while running)\n"
    "and OUT/summary.csv.";

int main(int argc, char **argv)
{
    static copy_run c;
    const lt_experiment copy = {
        .name = "copy",
        .summary = "The synthetic copy task of the paper (sec. 4.1.1, Figure 2): train a causal "
                   "transformer per\nattention variant to repeat a random sequence of symbols.",
        .details = details,
        .presets = &presets,
        .default_preset = "small",
        .variants_note = "delta, gated-delta and gla: recurrences with learned per-position "
                         "gates; those that cannot be causal (linformer) are reported as not "
                         "applicable",
        .default_models = "softmax,linear,lsh-1,lsh-4,linformer",
        .sequence = "sequences",
        .causal = 1,
        .curves = &bench_copy_curves,
        .results = &bench_copy_summary,
        .key_column = "variant",
        .flags = copy_flags,
        .defaults = copy_defaults,
        .check = copy_check,
        .setup = copy_setup,
        .configure = copy_configure,
        .source = copy_source,
        .release_source = copy_release,
        .steps = copy_steps,
        .update_row = copy_update_row,
        .note = copy_note,
        .finish = copy_finish,
        .footnote = copy_footnote,
        .teardown = copy_teardown,
    };
    return lt_experiment_main(&copy, &c, argc, argv);
}
