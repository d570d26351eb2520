/* ltbench copy: the paper's synthetic copy task (sec. 4.1.1, Figure 2).
 * Trains a causal transformer per attention variant on sequences "prefix,
 * separator, prefix again", scoring only the copied half, and reports the
 * loss curve, time per update, peak memory and accuracy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "common.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/threads.h"
#include "datasets/copy.h"
#include "harness.h"
#include "model/train.h"

enum { MAX_VARIANTS = 3, MIN_SCALED_STEPS = 20 };

/* Eval batches use streams far above any training stream. */
#define EVAL_STREAM_BASE (1ull << 40)

static const bench_preset_value preset_values[] = {
    {"--seq", {"32", "128", "128"}},
    {"--batch", {"16", "32", "64"}},
    {"--steps", {"1000", "3000", "10000"}},
    {"--layers", {"2", "2", "4"}},
    {"--heads", {"2", "4", "8"}},
    {"--head-dim", {"16", "16", "32"}},
    {"--ffn", {"64", "256", "1024"}},
    {"--dropout", {"0", "0", "0.1"}},
    {"--lr", {"3e-3", "1e-3", "1e-3"}},
    {"--clip", {"1", "1", "0"}},
    {"--lr-drops", {"none", "2500:0.1", "3000:0.1"}},
};

static const bench_presets presets = {
    {"quick", "small", "paper"},
    {"seconds: a tiny model that visibly learns; used by the tests",
     "minutes on a 2-core machine (the default)",
     "the paper: 4 layers, 8 heads of 32, FFN 1024, dropout 0.1, RAdam 1e-3 -> 1e-4 after "
     "3000 updates, batch 64, N = 128"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

typedef struct copy_options {
    const char *preset;
    const char *variants;
    const char *kernel;
    long seq, batch, steps, layers, heads, head_dim, ffn;
    double dropout, lr, clip, eps;
    const char *lr_drops;
    const char *optimizer;
    const char *activation;
    double weight_decay;
    const char *feature_map;
    long eval_batches, checkpoint_every, shards;
    int resume, overwrite;
    const char *out;
    bench_common common;
} copy_options;

/* Library config fields and the flags that set them, for error messages. */
static const bench_field_flag field_flags[] = {
    {"layers", "--layers"}, {"heads", "--heads"},     {"head_dim", "--head-dim"},
    {"ffn", "--ffn"},       {"dropout", "--dropout"}, {"seq_len", "--seq"},
    {"max_batch", "--batch"}, {"eps", "--eps"},       {"feature_map", "--feature-map"},
    {"kernel", "--kernel"}, {"lr", "--lr"},           {"clip_norm", "--clip"},
    {"weight_decay", "--weight-decay"}, {"shards", "--shards"}, {NULL, NULL}};

/* When --seq exceeds the preset's length, and unless --batch/--steps are
 * given, batch x N stays the preset's tokens per update and the number of
 * updates shrinks by the same factor (at least MIN_SCALED_STEPS). */
static void scale_to_length(copy_options *o, lt_cli *cli, char *note, size_t size)
{
    int p = bench_preset_index(&presets, o->preset);
    long seq0 = atol(preset_values[0].values[p]), batch0 = atol(preset_values[1].values[p]);
    long steps0 = atol(preset_values[2].values[p]);
    double factor = (double)o->seq / (double)seq0;
    note[0] = '\0';
    int batch_given = lt_cli_flag(cli, "--batch")->seen, steps_given = lt_cli_flag(cli, "--steps")->seen;
    if (factor <= 1 || (batch_given && steps_given))
        return;
    if (!batch_given)
        o->batch = (long)fmax(1.0, floor((double)batch0 / factor));
    if (!steps_given)
        o->steps = (long)fmax(MIN_SCALED_STEPS, floor((double)steps0 / factor));
    snprintf(note, size,
             "preset %s is sized for N=%ld; at N=%ld batch = max(1, %ld/%.0f) = %ld and "
             "updates = max(%d, %ld/%.0f) = %ld (flags given override this)",
             o->preset, seq0, o->seq, batch0, factor, o->batch, MIN_SCALED_STEPS, steps0, factor,
             o->steps);
}

/* Shards of an update: --shards, or one per rank. */
static int shard_count(const copy_options *o)
{
    return o->shards > 0 ? (int)o->shards : lt_dist_size();
}

/* Sequences this rank draws per update: its share of the global batch. */
static int local_batch(const copy_options *o) { return (int)o->batch / lt_dist_size(); }

static lt_status build_config(lt_train_config *tc, const copy_options *o, const char *variant,
                              const char *kernel)
{
    if (o->batch % shard_count(o) != 0)
        return lt_fail(LT_E_USAGE, "--batch %ld cannot be split into %d equal shards "
                                   "(--shards, or one per rank)",
                       o->batch, shard_count(o));
    memset(tc, 0, sizeof *tc);
    lt_model_config *m = &tc->model;
    *m = lt_model_default_config(variant);
    m->vocab = LT_COPY_VOCAB;
    m->classes = LT_COPY_VOCAB;
    m->layers = (int)o->layers;
    m->heads = (int)o->heads;
    m->head_dim = (int)o->head_dim;
    m->ffn = (int)o->ffn;
    m->dropout = (float)o->dropout;
    m->activation = strcmp(o->activation, "relu") == 0 ? LT_ACT_RELU : LT_ACT_GELU;
    m->attn.causal = 1;
    m->attn.kernel = kernel;
    m->attn.eps = (float)o->eps;
    m->attn.n_max = (int)o->seq;
    LT_TRY(lt_attn_parse_feature_map(&m->attn.feature_map, o->feature_map, "--feature-map"));
    m->max_batch = (int)o->batch / shard_count(o); /* one shard's sequences */
    m->seq_len = (int)o->seq;
    tc->shards = shard_count(o);
    tc->loss = (lt_loss){.kind = LT_LOSS_XENT, .classes = LT_COPY_VOCAB};
    lt_optim_kind kind;
    LT_TRY(lt_optim_parse_kind(&kind, o->optimizer, "--optimizer"));
    tc->optim = lt_optim_defaults(kind);
    tc->optim.lr = o->lr;
    tc->optim.weight_decay = o->weight_decay;
    LT_TRY(lt_schedule_init(&tc->schedule, o->lr, 0));
    /* "none" switches off a preset's drops (an empty value is not a flag value). */
    if (strcmp(o->lr_drops, "none") != 0)
        LT_TRY(lt_schedule_parse_drops(&tc->schedule, o->lr_drops, "--lr-drops"));
    tc->clip_norm = o->clip;
    tc->seed = (uint64_t)o->common.seed;
    tc->threads = lt_threads_get();
    return LT_OK;
}

/* ---- result tables ---- */

#define KEY_COLUMNS                                                                         \
    "experiment", "variant", "kernel", "preset", "N", "batch", "layers", "heads", "head_dim", \
        "ffn", "dropout", "optimizer", "base_lr", "threads", "seed"
enum { KEYS = 15 };

static const char *const curve_columns[] = {KEY_COLUMNS, "step", "elapsed_s", "loss",
                                            "copy_accuracy", "lr", "grad_norm"};
static const char *const summary_columns[] = {
    KEY_COLUMNS, "status", "first_step", "last_step", "step_median_s", "step_min_s",
    "step_max_s", "tokens_per_s", "comm_s_per_update", "shards", "peak_bytes", "planned_bytes",
    "infer_planned_bytes", "params",
    "loss_start", "loss_end", "copy_accuracy_end", "eval_loss", "eval_copy_accuracy",
    "eval_sequences", "total_s", "config", "note"};

static void set_keys(bench_table *t, const copy_options *o, const char *variant,
                     const char *kernel)
{
    bench_set_str(t, "experiment", "copy");
    bench_set_str(t, "variant", variant);
    bench_set_str(t, "kernel", kernel);
    bench_set_str(t, "preset", o->preset);
    bench_set_int(t, "N", o->seq);
    bench_set_int(t, "batch", o->batch);
    bench_set_int(t, "layers", o->layers);
    bench_set_int(t, "heads", o->heads);
    bench_set_int(t, "head_dim", o->head_dim);
    bench_set_int(t, "ffn", o->ffn);
    bench_set_num(t, "dropout", o->dropout);
    bench_set_str(t, "optimizer", o->optimizer);
    bench_set_num(t, "base_lr", o->lr);
    bench_set_int(t, "threads", lt_threads_get());
    bench_set_int(t, "seed", o->common.seed);
}

/* ---- one variant ---- */

typedef struct variant_run {
    const copy_options *o;
    const char *variant, *kernel;
    lt_copy_task task;
    int32_t *inputs, *targets;
    float *mask;
    bench_table *curves;
} variant_run;

static lt_status make_batch(void *ctx, long step, lt_batch *batch)
{
    variant_run *v = ctx;
    /* this rank's sequences of the update: the same draws as that slice of
     * one process's batch (sequence i draws from stream step * B + i) */
    int B = (int)v->o->batch, local = local_batch(v->o);
    lt_copy_batch(&v->task, (uint64_t)v->o->common.seed,
                  (uint64_t)step * (uint64_t)B + (uint64_t)(lt_dist_rank() * local), local,
                  v->inputs, v->targets, v->mask);
    *batch = (lt_batch){.batch = local, .n = (int)v->o->seq, .tokens = v->inputs,
                        .targets = v->targets, .mask = v->mask};
    return LT_OK;
}

static lt_status add_row(void *ctx, const lt_trainer *t, const lt_batch_result *r,
                         double elapsed)
{
    variant_run *v = ctx;
    bench_row_begin(v->curves);
    set_keys(v->curves, v->o, v->variant, v->kernel);
    bench_set_int(v->curves, "step", t->step);
    bench_set_num(v->curves, "elapsed_s", elapsed);
    bench_set_num(v->curves, "loss", r->loss);
    bench_set_num(v->curves, "copy_accuracy",
                  r->counted ? (double)r->correct / (double)r->counted : NAN);
    bench_set_num(v->curves, "lr", r->lr);
    bench_set_num(v->curves, "grad_norm", r->grad_norm);
    return bench_row_end(v->curves);
}

static void progress_note(void *ctx, const lt_batch_result *r, char *buf, size_t size)
{
    (void)ctx;
    snprintf(buf, size, "loss %.4f acc %.3f", r->loss,
             r->counted ? (double)r->correct / (double)r->counted : NAN);
}

/* Mean loss and accuracy over eval_batches fresh batches, without dropout. */
static lt_status evaluate(lt_trainer *t, variant_run *v, double *loss, double *accuracy,
                          long *sequences)
{
    const copy_options *o = v->o;
    const int local = local_batch(o), chunk = t->model.config.max_batch;
    double sums[3] = {0, 0, 0}, scratch[3]; /* loss x count, correct, counted */
    for (long i = 0; i < o->eval_batches; i++) {
        /* each rank its slice of every held-out batch, a shard at a time */
        lt_copy_batch(&v->task, (uint64_t)o->common.seed,
                      EVAL_STREAM_BASE + (uint64_t)(i * o->batch + lt_dist_rank() * local),
                      local, v->inputs, v->targets, v->mask);
        for (int first = 0; first < local; first += chunk) {
            int n = local - first < chunk ? local - first : chunk;
            size_t at = (size_t)first * o->seq;
            lt_batch batch = {.batch = n, .n = (int)o->seq, .tokens = v->inputs + at,
                              .targets = v->targets + at, .mask = v->mask + at};
            lt_batch_result br;
            LT_TRY(lt_trainer_evaluate(t, &batch, &br));
            sums[0] += br.loss * (double)br.counted;
            sums[1] += (double)br.correct;
            sums[2] += (double)br.counted;
        }
    }
    LT_TRY(lt_dist_sum_f64(sums, scratch, 3));
    *loss = sums[2] > 0 ? sums[0] / sums[2] : NAN;
    *accuracy = sums[2] > 0 ? sums[1] / sums[2] : NAN;
    *sequences = o->eval_batches * o->batch;
    return LT_OK;
}

/* The batch buffers a variant's run holds beside its trainer. */
static size_t batch_bytes(const copy_options *o)
{
    size_t tokens = (size_t)local_batch(o) * (size_t)o->seq;
    return 2 * lt_mem_rounded(tokens * sizeof(int32_t)) + lt_mem_rounded(tokens * sizeof(float));
}

/* Everything a variant's run allocates at its peak: trainer, checkpoint
 * writer and batch buffers. */
static lt_status plan_variant(const lt_train_config *tc, const copy_options *o, size_t *bytes)
{
    LT_TRY(lt_trainer_plan(tc, lt_threads_get(), bytes));
    *bytes += batch_bytes(o);
    return LT_OK;
}

static void checkpoint_name(char *buf, size_t size, const char *variant)
{
    snprintf(buf, size, "checkpoints/copy-%s.ckpt", variant);
}

/* What a variant's run ends with, for its summary row. */
typedef struct variant_outcome {
    int complete;             /* resumed at or past --steps: nothing to train */
    const char *status;
    char note[768];
    bench_train_result train;
    size_t peak_bytes, planned_bytes, infer_bytes, params;
    double eval_loss, eval_acc, total_s;
    long eval_sequences;
} variant_outcome;

/* Trains (or resumes) one variant; curve rows of an earlier run are carried
 * over up to its checkpoint. */
static lt_status train_variant(const copy_options *o, const bench_run *run, variant_run *v,
                               const lt_csv_table *prev, const char *prev_path,
                               double *step_seconds, variant_outcome *out)
{
    lt_train_config tc;
    LT_TRY(build_config(&tc, o, v->variant, v->kernel));
    LT_TRY(lt_copy_task_init(&v->task, (int)o->seq));
    const int threads = lt_threads_get(), B = local_batch(o), N = (int)o->seq;
    LT_TRY(plan_variant(&tc, o, &out->planned_bytes));
    LT_TRY(lt_model_plan(&tc.model, LT_MODEL_INFER, threads, &out->infer_bytes, NULL));

    char name[256], ckpt[4400];
    checkpoint_name(name, sizeof name, v->variant);
    bench_run_path(run, name, ckpt, sizeof ckpt);
    double start = lt_time_now();
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_trainer t;
    memset(&t, 0, sizeof t);
    size_t tokens = (size_t)B * N;
    v->inputs = NULL, v->targets = NULL, v->mask = NULL;
    lt_status status = lt_mem_alloc((void **)&v->inputs, tokens * sizeof(int32_t), "inputs");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&v->targets, tokens * sizeof(int32_t), "targets");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&v->mask, tokens * sizeof(float), "loss mask");
    if (status == LT_OK)
        status = lt_trainer_init(&t, &tc, threads);
    out->params = t.model.param_count;

    /* every rank starts from rank 0's parameters, or from the checkpoint
     * rank 0 read */
    double first_loss = NAN, ignored;
    long carried = 0;
    if (status == LT_OK)
        status = bench_resume(&t, run, ckpt, v->curves, prev, prev_path, "variant", v->variant,
                              1, &carried);
    if (carried > 0)
        bench_curve_ends(v->curves, "variant", v->variant, "loss", &first_loss, &ignored);
    out->complete = status == LT_OK && t.step >= o->steps && run->resume;
    char label[64];
    snprintf(label, sizeof label, "copy %s N=%d", v->variant, N);
    bench_train_spec spec = {
        .label = label, .steps = o->steps,
        .checkpoint_every = o->checkpoint_every > 0 ? o->checkpoint_every
                                                    : (o->steps / 10 > 0 ? o->steps / 10 : 1),
        .checkpoint = ckpt, .quiet = o->common.quiet, .make_batch = make_batch,
        .add_row = add_row, .note = progress_note, .ctx = v, .curves = v->curves};
    if (status == LT_OK)
        status = bench_train(&t, &spec, first_loss, step_seconds, &out->train);
    out->status = out->train.status;
    snprintf(out->note, sizeof out->note, "%s", out->train.note);
    out->eval_loss = out->eval_acc = NAN;
    out->eval_sequences = 0;
    if (status == LT_OK && strcmp(out->status, "ok") == 0)
        status = evaluate(&t, v, &out->eval_loss, &out->eval_acc, &out->eval_sequences);
    out->peak_bytes = lt_mem_peak() - base;
    out->total_s = lt_time_now() - start;
    lt_trainer_free(&t);
    lt_mem_free(v->inputs);
    lt_mem_free(v->targets);
    lt_mem_free(v->mask);
    return status;
}

static void add_summary(bench_table *s, const copy_options *o, const variant_run *v,
                        const variant_outcome *r, const char *scaling_note)
{
    bench_row_begin(s);
    set_keys(s, o, v->variant, v->kernel);
    bench_set_str(s, "status", r->status);
    bench_set_int(s, "first_step", r->train.first_step);
    bench_set_int(s, "last_step", r->train.last_step);
    bench_set_num(s, "step_median_s", r->train.step_time.median);
    bench_set_num(s, "step_min_s", r->train.step_time.min);
    bench_set_num(s, "step_max_s", r->train.step_time.max);
    bench_set_num(s, "tokens_per_s", (double)(o->batch * o->seq) / r->train.step_time.median);
    long updates = r->train.last_step - r->train.first_step;
    bench_set_num(s, "comm_s_per_update", updates > 0 ? r->train.comm_seconds / updates : NAN);
    bench_set_int(s, "shards", shard_count(o));
    bench_set_int(s, "peak_bytes", (long long)r->peak_bytes);
    bench_set_int(s, "planned_bytes", (long long)r->planned_bytes);
    bench_set_int(s, "infer_planned_bytes", (long long)r->infer_bytes);
    bench_set_int(s, "params", (long long)r->params);
    double start, end, acc_start, acc_end;
    bench_curve_ends(v->curves, "variant", v->variant, "loss", &start, &end);
    bench_curve_ends(v->curves, "variant", v->variant, "copy_accuracy", &acc_start, &acc_end);
    bench_set_num(s, "loss_start", start);
    bench_set_num(s, "loss_end", end);
    bench_set_num(s, "copy_accuracy_end", acc_end);
    bench_set_num(s, "eval_loss", r->eval_loss);
    bench_set_num(s, "eval_copy_accuracy", r->eval_acc);
    bench_set_int(s, "eval_sequences", r->eval_sequences);
    bench_set_num(s, "total_s", r->total_s);
    /* Every setting of the run, as stored in its checkpoints. */
    lt_train_config tc;
    char description[2048] = "";
    if (build_config(&tc, o, v->variant, v->kernel) == LT_OK)
        lt_train_config_describe(&tc, description, sizeof description);
    bench_set_str(s, "config", description);
    char note[1400];
    snprintf(note, sizeof note, "%s%s%s", r->note, r->note[0] && scaling_note[0] ? "; " : "",
             scaling_note);
    bench_set_str(s, "note", note);
    bench_row_end(s);
}

static void add_not_applicable(bench_table *s, const copy_options *o, const char *variant,
                               const char *reason)
{
    bench_row_begin(s);
    set_keys(s, o, variant, "none");
    bench_set_int(s, "shards", shard_count(o));
    const char *nan_columns[] = {"step_median_s", "step_min_s", "step_max_s", "tokens_per_s",
                                 "comm_s_per_update",
                                 "loss_start", "loss_end", "copy_accuracy_end", "eval_loss",
                                 "eval_copy_accuracy", "total_s"};
    for (size_t i = 0; i < sizeof nan_columns / sizeof nan_columns[0]; i++)
        bench_set_num(s, nan_columns[i], NAN);
    const char *zero_columns[] = {"first_step", "last_step", "peak_bytes", "planned_bytes",
                                  "infer_planned_bytes", "params", "eval_sequences"};
    for (size_t i = 0; i < sizeof zero_columns / sizeof zero_columns[0]; i++)
        bench_set_int(s, zero_columns[i], 0);
    bench_set_str(s, "status", "not-applicable");
    bench_set_str(s, "config", "");
    char note[600];
    snprintf(note, sizeof note, "%s attention cannot be causal: %s", variant, reason);
    bench_set_str(s, "note", note);
    bench_row_end(s);
}

/* The first row of a table whose `column` is `value`, or -1. */
static long long find_row(const lt_csv_table *t, const char *column, const char *value)
{
    int col = lt_csv_table_column(t, column);
    for (long long r = 0; col >= 0 && r < t->nrows; r++)
        if (strcmp(lt_csv_table_cell(t, r, col), value) == 0)
            return r;
    return -1;
}

static const bench_print_col summary_print[] = {
    {"variant", "variant", NULL, 0, 9},        {"N", "N", NULL, 0, 6},
    {"batch", "batch", NULL, 0, 5},            {"updates", "last_step", NULL, 0, 7},
    {"s/update", "step_median_s", "%.4f", 0, 9}, {"min", "step_min_s", "%.4f", 0, 8},
    {"max", "step_max_s", "%.4f", 0, 8},       {"tokens/s", "tokens_per_s", "%.0f", 0, 9},
    {"peak MiB", "peak_bytes", "%.1f", 1.0 / 1048576.0, 9},
    {"loss0", "loss_start", "%.4f", 0, 7},     {"loss", "loss_end", "%.4f", 0, 7},
    {"copy acc", "copy_accuracy_end", "%.3f", 0, 8},
    {"eval acc", "eval_copy_accuracy", "%.3f", 0, 8},
};

/* The earlier run's tables and this run's, released on every way out of main
 * so a failed run leaks nothing (the sanitizer build checks). Zeroed tables
 * are ignored. */
static void free_tables(lt_csv_table *prev, lt_csv_table *prev_summary, bench_table *curves,
                        bench_table *summary)
{
    lt_csv_table_free(prev);
    lt_csv_table_free(prev_summary);
    bench_table_free(curves);
    bench_table_free(summary);
}

int main(int argc, char **argv)
{
    copy_options o = {.preset = "small", .variants = "softmax,linear,linformer",
                      .kernel = "default", .eps = 1e-6, .optimizer = "radam",
                      .activation = "gelu", .feature_map = "elu", .eval_batches = 4,
                      .checkpoint_every = 0, .out = "results/copy"};
    bench_common_defaults(&o.common);
    enum { OWN_FLAGS = 25 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--preset", LT_FLAG_CHOICE, &o.preset, NULL,
         "size of the run (see Presets below); the defaults shown are the small preset's", 0, 0,
         "quick|small|paper", 0},
        {"--variants", LT_FLAG_STRING, &o.variants, "LIST",
         "comma-separated attention variants; linformer is reported as not applicable "
         "(it cannot be causal)", 0, 0, NULL, 0},
        {"--kernel", LT_FLAG_STRING, &o.kernel, "NAME",
         "attention kernel for the variant that has it, e.g. linear-causal-prefix; the "
         "others keep their defaults (causal kernels: softmax-gemm, softmax-tiled, "
         "softmax-reference, linear-causal-chunked, linear-causal-prefix, linear-reference)", 0, 0, NULL, 0},
        {"--seq", LT_FLAG_INT, &o.seq, "N", "sequence length (prefix n in [N/4, (N-1)/2))",
         LT_COPY_MIN_SEQ, 1 << 20, NULL, 0},
        {"--batch", LT_FLAG_INT, &o.batch, "B", "sequences per update", 1, 1 << 20, NULL, 0},
        {"--steps", LT_FLAG_INT, &o.steps, "S", "updates (a resumed run continues up to S)", 1,
         1 << 30, NULL, 0},
        {"--layers", LT_FLAG_INT, &o.layers, "L", "transformer layers", 1, 1024, NULL, 0},
        {"--heads", LT_FLAG_INT, &o.heads, "H", "attention heads", 1, 1024, NULL, 0},
        {"--head-dim", LT_FLAG_INT, &o.head_dim, "D", "dimension per head (width = H x D)", 1,
         4096, NULL, 0},
        {"--ffn", LT_FLAG_INT, &o.ffn, "F", "feed-forward hidden width", 1, 1 << 20, NULL, 0},
        {"--dropout", LT_FLAG_DOUBLE, &o.dropout, "P", "dropout after each branch", 0, 0.99,
         NULL, 0},
        {"--optimizer", LT_FLAG_CHOICE, &o.optimizer, NULL, "optimizer (the paper uses RAdam)",
         0, 0, "radam|adam", 0},
        {"--lr", LT_FLAG_DOUBLE, &o.lr, "LR", "learning rate", 1e-9, 10, NULL, 0},
        {"--lr-drops", LT_FLAG_STRING, &o.lr_drops, "LIST",
         "step decay as STEP:FACTOR,... (the paper: 3000:0.1), or none", 0, 0, NULL, 0},
        {"--weight-decay", LT_FLAG_DOUBLE, &o.weight_decay, "WD",
         "decoupled weight decay (AdamW style); 0 = off", 0, 1, NULL, 0},
        {"--activation", LT_FLAG_CHOICE, &o.activation, NULL, "feed-forward activation", 0, 0,
         "gelu|relu", 0},
        {"--clip", LT_FLAG_DOUBLE, &o.clip, "NORM", "global gradient-norm clipping; 0 = off",
         0, 1e9, NULL, 0},
        {"--feature-map", LT_FLAG_CHOICE, &o.feature_map, NULL, "linear attention feature map",
         0, 0, "elu|relu", 0},
        {"--eps", LT_FLAG_DOUBLE, &o.eps, "EPS",
         "linear attention normaliser epsilon (> 0 with the relu map)", 0, 1, NULL, 0},
        {"--eval-batches", LT_FLAG_INT, &o.eval_batches, "K",
         "held-out batches for the final evaluation", 0, 1 << 20, NULL, 0},
        {"--shards", LT_FLAG_INT, &o.shards, "S",
         "split each update's batch into S shards summed in a fixed tree (a power of two; "
         "0 = one per MPI rank): the numbers depend on S, not on the rank count", 0, 1024,
         NULL, 0},
        {"--checkpoint-every", LT_FLAG_INT, &o.checkpoint_every, "K",
         "checkpoint (and flush the curve) every K updates and at the end; 0 = every tenth "
         "of the run", 0, 1 << 30, NULL, 0},
        {"--resume", LT_FLAG_BOOL, &o.resume, NULL,
         "continue each variant from OUT/checkpoints/copy-VARIANT.ckpt where one exists (the "
         "others start fresh), appending to the same curves", 0, 0, NULL, 0},
        {"--overwrite", LT_FLAG_BOOL, &o.overwrite, NULL,
         "start over in an OUT that holds checkpoints of an earlier run, replacing them", 0, 0,
         NULL, 0},
        {"--out", LT_FLAG_STRING, &o.out, "DIR",
         "folder for curves.csv, summary.csv and checkpoints/", 0, 0, NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &o.common);
    char details[4096], preset_help[2048];
    bench_presets_help(&presets, preset_help, sizeof preset_help);
    snprintf(details, sizeof details,
             "%s\n"
             "With --seq above the preset's N, and unless --batch/--steps are given, the batch\n"
             "shrinks so batch x N stays the preset's tokens per update, and the number of\n"
             "updates shrinks by the same factor N grows (at least %d), so `ltbench copy --seq\n"
             "8192` stays within minutes. The model is pre-norm (GELU by default), token\n"
             "embeddings plus sinusoidal positions (added), causal attention; loss and accuracy\n"
             "count only the copied half. A loss that is not finite, or above %g x the first\n"
             "loss for %d updates in a row, stops that variant as diverged (exit status 1).\n"
             "Ctrl-C or SIGTERM stops after the current update with a checkpoint and the rows\n"
             "so far (exit status 130 or 143; --resume continues); a second Ctrl-C stops at\n"
             "once. Writes OUT/curves.csv (every update; OUT/curves.csv.partial while running)\n"
             "and OUT/summary.csv.",
             preset_help, MIN_SCALED_STEPS, LT_DIVERGE_FACTOR, LT_DIVERGE_UPDATES);
    lt_cli cli = {
        "ltbench copy",
        "The synthetic copy task of the paper (sec. 4.1.1, Figure 2): train a causal "
        "transformer per\nattention variant to repeat a random sequence of symbols.",
        details, flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    int exit_now;
    int code = bench_parse_presets(&cli, &presets, &o.preset, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    lt_status status = LT_OK;
    char scaling_note[512];
    scale_to_length(&o, &cli, scaling_note, sizeof scaling_note);

    char variants_text[256];
    snprintf(variants_text, sizeof variants_text, "%s", o.variants);
    const char *variants[MAX_VARIANTS], *kernels[MAX_VARIANTS];
    int variant_count = 0;
    if (status == LT_OK)
        status = bench_parse_variants(variants_text, variants, MAX_VARIANTS, &variant_count);
    /* Validate every setting, kernel and memory plan before the first
     * variant spends minutes. */
    lt_attn_caps caps[MAX_VARIANTS];
    for (int i = 0; status == LT_OK && i < variant_count; i++) {
        status = lt_attn_variant_caps(variants[i], &caps[i]);
        if (status == LT_OK)
            status = bench_kernel_for(o.kernel, variants, variant_count, 1, variants[i],
                                      &kernels[i]);
        if (status != LT_OK || !caps[i].causal)
            continue;
        lt_train_config probe;
        size_t planned;
        char what[96];
        snprintf(what, sizeof what, "training %s at N=%ld, batch %ld", variants[i], o.seq,
                 o.batch);
        status = build_config(&probe, &o, variants[i], kernels[i]);
        if (status == LT_OK)
            status = plan_variant(&probe, &o, &planned);
        if (status == LT_OK)
            status = lt_mem_plan(planned, what);
    }
    bench_run run;
    const char *files[] = {"curves.csv", "summary.csv"};
    char ckpt_names[MAX_VARIANTS][256];
    const char *ckpts[MAX_VARIANTS];
    for (int i = 0; i < variant_count; i++) {
        checkpoint_name(ckpt_names[i], sizeof ckpt_names[i], variants[i]);
        ckpts[i] = ckpt_names[i];
    }
    if (status == LT_OK)
        status = bench_run_open(&run, o.out, o.resume, o.overwrite, files, 2, ckpts,
                                variant_count);
    status = lt_dist_agree(status);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);

    char curves_path[4400], summary_path[4400], prev_path[4400], prev_summary_path[4400];
    bench_run_path(&run, "summary.csv", summary_path, sizeof summary_path);
    /* A resumed run reads what the earlier one left: its rows continue. */
    lt_csv_table prev, prev_summary;
    memset(&prev, 0, sizeof prev);
    memset(&prev_summary, 0, sizeof prev_summary);
    int have_prev = 0, have_prev_summary = 0;
    bench_table curves, summary;
    bench_table_init(&summary, summary_columns, sizeof summary_columns / sizeof *summary_columns);
    status = bench_open_curves(&curves, curve_columns, sizeof curve_columns / sizeof *curve_columns,
                               &run, "curves.csv", curves_path, sizeof curves_path, &prev,
                               &have_prev, prev_path, sizeof prev_path);
    if (status == LT_OK && o.resume)
        status = bench_table_read_previous(&prev_summary, &have_prev_summary, summary_path,
                                           prev_summary_path, sizeof prev_summary_path);
    status = lt_dist_agree(status);
    if (status != LT_OK) {
        free_tables(&prev, &prev_summary, &curves, &summary);
        return bench_report(cli.program, status, field_flags);
    }

    printf("ltbench copy: preset %s, N=%ld, batch %ld, %ld updates, %ld layers, %ld heads x %ld, "
           "FFN %ld, dropout %g, %s lr %g drops %s, clip %g, %d threads x %d ranks, %d shards, "
           "seed %ld\n",
           o.preset, o.seq, o.batch, o.steps, o.layers, o.heads, o.head_dim, o.ffn, o.dropout,
           o.optimizer, o.lr, o.lr_drops, o.clip, lt_threads_get(), lt_dist_size(),
           shard_count(&o), o.common.seed);
    if (scaling_note[0])
        printf("(%s)\n", scaling_note);
    fflush(stdout);

    bench_signals_install();
    double *step_seconds = NULL;
    status = lt_mem_alloc((void **)&step_seconds, (size_t)o.steps * sizeof *step_seconds,
                          "update timings");
    int diverged = 0;
    for (int i = 0; i < variant_count && status == LT_OK && !bench_interrupted(); i++) {
        if (!caps[i].causal) {
            add_not_applicable(&summary, &o, variants[i], caps[i].no_causal_reason);
            continue;
        }
        lt_attn attn;
        lt_train_config tc;
        status = build_config(&tc, &o, variants[i], kernels[i]);
        if (status == LT_OK)
            status = lt_attn_init(&attn, &tc.model.attn);
        if (status != LT_OK)
            break;
        variant_run v = {.o = &o, .variant = variants[i], .kernel = attn.config.kernel,
                         .curves = &curves};
        variant_outcome outcome;
        memset(&outcome, 0, sizeof outcome);
        status = train_variant(&o, &run, &v, have_prev ? &prev : NULL, prev_path, step_seconds,
                               &outcome);
        long long earlier = -1;
        if (status == LT_OK && outcome.complete && have_prev_summary)
            earlier = find_row(&prev_summary, "variant", variants[i]);
        if (status == LT_OK && earlier >= 0) {
            /* A finished run resumed again keeps its results as they were. */
            fprintf(stderr, "copy %s: already trained to update %ld (--steps %ld); its results "
                            "are kept\n",
                    variants[i], outcome.train.last_step, o.steps);
            status = bench_row_carry(&summary, &prev_summary, earlier, prev_summary_path);
        } else if (status == LT_OK) {
            add_summary(&summary, &o, &v, &outcome, scaling_note);
            diverged |= strcmp(outcome.status, "diverged") == 0;
        }
    }
    /* A resumed run keeps the summary rows of variants it did not run. */
    int curve_variant_col = have_prev ? lt_csv_table_column(&prev, "variant") : -1;
    for (long long r = 0; status == LT_OK && curve_variant_col >= 0 && r < prev.nrows; r++) {
        int listed = 0;
        for (int i = 0; i < variant_count; i++)
            listed |= strcmp(lt_csv_table_cell(&prev, r, curve_variant_col), variants[i]) == 0;
        if (!listed)
            status = bench_row_carry(&curves, &prev, r, prev_path);
    }
    int variant_col = have_prev_summary ? lt_csv_table_column(&prev_summary, "variant") : -1;
    for (long long r = 0; status == LT_OK && variant_col >= 0 && r < prev_summary.nrows; r++) {
        int listed = 0;
        for (int i = 0; i < variant_count; i++)
            listed |= strcmp(lt_csv_table_cell(&prev_summary, r, variant_col), variants[i]) == 0;
        if (!listed)
            status = bench_row_carry(&summary, &prev_summary, r, prev_summary_path);
    }
    lt_mem_free(step_seconds);
    if (status != LT_OK) {
        /* the journal stays for --resume (freeing a table detaches it);
         * finished files are untouched */
        free_tables(&prev, &prev_summary, &curves, &summary);
        return bench_report(cli.program, status, field_flags);
    }
    printf("\n");
    bench_table_print(&summary, summary_print, sizeof summary_print / sizeof *summary_print, 3,
                      stdout);
    printf("(s/update: median, min, max over the updates after the first; loss: first update "
           "and\n mean of the last tenth; copy acc: argmax accuracy on the copied half, "
           "training\n batches; eval acc: %ld held-out sequences, no dropout; chance is 0.1)\n",
           o.eval_batches * o.batch);
    /* Both files are committed together, after all the work. */
    status = bench_table_commit(&curves, curves_path);
    if (status == LT_OK)
        status = bench_table_commit(&summary, summary_path);
    free_tables(&prev, &prev_summary, &curves, &summary);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);
    printf("\nwrote %s and %s\n", curves_path, summary_path);
    if (bench_interrupted()) {
        fprintf(stderr, "ltbench copy: interrupted; --resume continues from the checkpoints\n");
        return bench_interrupt_exit_code();
    }
    return diverged ? 1 : 0;
}
