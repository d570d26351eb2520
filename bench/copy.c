/* ltbench copy: the paper's synthetic copy task (sec. 4.1.1, Figure 2).
 * Trains a causal transformer per attention variant on sequences "prefix,
 * separator, prefix again", scoring only the copied half, and reports the
 * loss curve, time per update, peak memory and accuracy. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/attn.h"
#include "common.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/threads.h"
#include "core/timer.h"
#include "datasets/copy.h"
#include "io/csv.h"
#include "model/train.h"

enum { MAX_VARIANTS = 3, MIN_SCALED_STEPS = 20 };

/* Eval batches use streams far above any training stream. */
#define EVAL_STREAM_BASE (1ull << 40)

typedef struct preset {
    const char *name;
    long seq, batch, steps, layers, heads, head_dim, ffn;
    double dropout, lr, clip;
    const char *lr_drops;
} preset;

static const preset presets[] = {
    /* seconds: a tiny model that visibly learns; used by the tests */
    {"quick", 32, 16, 1000, 2, 2, 16, 64, 0.0, 3e-3, 1.0, "none"},
    /* minutes on a 2-core machine */
    {"small", 128, 32, 3000, 2, 4, 16, 256, 0.0, 1e-3, 1.0, "2500:0.1"},
    /* the paper: 4 layers, 8 heads of 32, FFN 1024, dropout 0.1, RAdam
     * 1e-3 -> 1e-4 after 3000 updates, batch 64, N = 128 */
    {"paper", 128, 64, 10000, 4, 8, 32, 1024, 0.1, 1e-3, 0.0, "3000:0.1"},
};

typedef struct copy_options {
    const char *preset;
    const char *variants;
    long seq, batch, steps, layers, heads, head_dim, ffn;
    double dropout, lr, clip, eps;
    const char *lr_drops;
    const char *optimizer;
    const char *activation;
    double weight_decay;
    const char *feature_map;
    long eval_batches, checkpoint_every;
    int resume;
    const char *out;
    bench_common common;
} copy_options;

/* One point of a loss curve. */
typedef struct curve_point {
    long step;
    double elapsed, loss, accuracy, lr, grad_norm;
} curve_point;

typedef struct variant_result {
    const char *variant;
    const char *kernel;
    const char *status; /* ok, not-applicable */
    char note[256];
    long first_step, last_step;
    size_t peak_bytes, planned_bytes, param_count;
    lt_summary step_time;
    double loss_start, loss_end, acc_end, eval_loss, eval_acc, total_seconds;
    long eval_sequences;
    curve_point *curve; /* (last_step - first_step) points */
    long curve_count;
} variant_result;

static const preset *find_preset(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

/* Fills every flag the user did not give from the preset. When --seq
 * differs from the preset's length, batch and updates are scaled so the run
 * keeps its size: batch x N stays the preset's tokens per update, and the
 * number of updates shrinks by the same factor N grows (at least 20). */
static void apply_preset(copy_options *o, lt_cli *cli, const preset *p, char *scaling_note,
                         size_t note_size)
{
#define FROM_PRESET(flag, field)                  \
    if (!lt_cli_flag(cli, flag)->seen)            \
        o->field = p->field;
    FROM_PRESET("--seq", seq);
    FROM_PRESET("--layers", layers);
    FROM_PRESET("--heads", heads);
    FROM_PRESET("--head-dim", head_dim);
    FROM_PRESET("--ffn", ffn);
    FROM_PRESET("--dropout", dropout);
    FROM_PRESET("--lr", lr);
    FROM_PRESET("--clip", clip);
    FROM_PRESET("--lr-drops", lr_drops);
#undef FROM_PRESET
    double factor = (double)o->seq / (double)p->seq;
    scaling_note[0] = '\0';
    if (!lt_cli_flag(cli, "--batch")->seen) {
        o->batch = factor > 1 ? (long)fmax(1.0, floor((double)p->batch / factor)) : p->batch;
    }
    if (!lt_cli_flag(cli, "--steps")->seen) {
        o->steps = factor > 1 ? (long)fmax(MIN_SCALED_STEPS, floor((double)p->steps / factor))
                              : p->steps;
    }
    if (factor > 1 && (!lt_cli_flag(cli, "--batch")->seen || !lt_cli_flag(cli, "--steps")->seen))
        snprintf(scaling_note, note_size,
                 "preset %s is sized for N=%ld; at N=%ld batch = max(1, %ld/%.0f) = %ld and "
                 "updates = max(%d, %ld/%.0f) = %ld (flags given override this)",
                 p->name, p->seq, o->seq, p->batch, factor, o->batch, MIN_SCALED_STEPS,
                 p->steps, factor, o->steps);
}

static lt_status build_config(lt_train_config *tc, const copy_options *o, const char *variant)
{
    memset(tc, 0, sizeof *tc);
    lt_model_config *m = &tc->model;
    m->vocab = LT_COPY_VOCAB;
    m->classes = LT_COPY_VOCAB;
    m->layers = (int)o->layers;
    m->heads = (int)o->heads;
    m->head_dim = (int)o->head_dim;
    m->ffn = (int)o->ffn;
    m->dropout = (float)o->dropout;
    m->activation = strcmp(o->activation, "relu") == 0 ? LT_ACT_RELU : LT_ACT_GELU;
    m->attn = lt_attn_default_config(variant);
    m->attn.causal = 1;
    m->attn.eps = (float)o->eps;
    m->attn.n_max = (int)o->seq;
    LT_TRY(lt_attn_parse_feature_map(&m->attn.feature_map, o->feature_map, "--feature-map"));
    m->max_batch = (int)o->batch;
    m->seq_len = (int)o->seq;
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
    return LT_OK;
}

static void checkpoint_path(char *buf, size_t size, const copy_options *o, const char *variant)
{
    snprintf(buf, size, "%s/checkpoints/copy-%s.ckpt", o->out, variant);
}

/* Mean loss and accuracy over eval_batches fresh batches, without dropout. */
static lt_status evaluate(lt_trainer *t, const lt_copy_task *task, const copy_options *o,
                          int32_t *inputs, int32_t *targets, float *mask, variant_result *r)
{
    double loss_sum = 0;
    long correct = 0, counted = 0;
    for (long i = 0; i < o->eval_batches; i++) {
        lt_copy_batch(task, (uint64_t)o->common.seed, EVAL_STREAM_BASE + (uint64_t)(i * o->batch),
                      (int)o->batch, inputs, targets, mask);
        lt_batch_result br;
        LT_TRY(lt_trainer_evaluate(t, inputs, targets, mask, (int)o->batch, &br));
        loss_sum += br.loss * (double)br.counted;
        correct += br.correct;
        counted += br.counted;
    }
    r->eval_loss = counted ? loss_sum / (double)counted : NAN;
    r->eval_acc = counted ? (double)correct / (double)counted : NAN;
    r->eval_sequences = o->eval_batches * o->batch;
    return LT_OK;
}

/* Trains one variant; r->curve must hold o->steps points. */
static lt_status train_variant(const copy_options *o, const char *variant, variant_result *r,
                               double *step_seconds)
{
    lt_train_config tc;
    LT_TRY(build_config(&tc, o, variant));
    lt_copy_task task;
    LT_TRY(lt_copy_task_init(&task, (int)o->seq));
    const int threads = lt_threads_get(), B = (int)o->batch, N = (int)o->seq;
    lt_attn_shape shape = {B, (int)o->heads, N, (int)o->head_dim, (int)o->head_dim, NULL};
    lt_attn attn;
    LT_TRY(lt_attn_init(&attn, &tc.model.attn));
    r->kernel = lt_attn_kernel_name(&attn, shape);
    LT_TRY(lt_trainer_plan(&tc, threads, &r->planned_bytes));

    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    int32_t *inputs = NULL, *targets = NULL;
    float *mask = NULL;
    lt_trainer t;
    memset(&t, 0, sizeof t);
    size_t tokens = (size_t)B * N;
    lt_status status = lt_mem_alloc((void **)&inputs, tokens * sizeof *inputs, "input tokens");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&targets, tokens * sizeof *targets, "target tokens");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&mask, tokens * sizeof *mask, "loss mask");
    if (status == LT_OK)
        status = lt_trainer_init(&t, &tc, threads);
    r->param_count = t.model.param_count;

    char ckpt[4096];
    checkpoint_path(ckpt, sizeof ckpt, o, variant);
    if (status == LT_OK && o->resume) {
        struct stat st;
        if (stat(ckpt, &st) != 0)
            status = lt_fail(LT_E_IO, "--resume: no checkpoint for %s at %s", variant, ckpt);
        else
            status = lt_trainer_load(&t, ckpt);
    }
    r->first_step = t.step;
    r->curve_count = 0;
    lt_progress progress;
    char label[64];
    snprintf(label, sizeof label, "copy %s N=%d", variant, N);
    lt_progress_start(&progress, stderr, label, o->steps, "updates", o->common.quiet);
    lt_progress_update(&progress, t.step, NULL);
    double start = lt_time_now();
    long timed = 0;
    while (status == LT_OK && t.step < o->steps) {
        lt_copy_batch(&task, (uint64_t)o->common.seed, (uint64_t)t.step * (uint64_t)B, B, inputs,
                      targets, mask);
        lt_batch_result br;
        double t0 = lt_time_now();
        status = lt_trainer_step(&t, inputs, targets, mask, B, &br);
        if (status != LT_OK)
            break;
        double seconds = lt_time_now() - t0;
        /* The first update of a run pays one-off costs (page faults of fresh
         * buffers, thread start-up): it is not a sample of the steady state. */
        if (t.step > r->first_step + 1 || o->steps - r->first_step == 1)
            step_seconds[timed++] = seconds;
        curve_point *pt = &r->curve[r->curve_count++];
        *pt = (curve_point){t.step, lt_time_now() - start, br.loss,
                            br.counted ? (double)br.correct / (double)br.counted : NAN, br.lr,
                            br.grad_norm};
        if (o->checkpoint_every > 0 && t.step % o->checkpoint_every == 0)
            status = lt_trainer_save(&t, ckpt);
        char note[64];
        snprintf(note, sizeof note, "loss %.4f acc %.3f", br.loss, pt->accuracy);
        lt_progress_update(&progress, t.step, note);
    }
    r->total_seconds = lt_time_now() - start;
    r->last_step = t.step;
    if (status == LT_OK)
        status = lt_trainer_save(&t, ckpt);
    if (status == LT_OK)
        status = evaluate(&t, &task, o, inputs, targets, mask, r);
    lt_progress_finish(&progress, status == LT_OK ? "done" : "failed");
    r->peak_bytes = lt_mem_peak() - base;
    r->step_time = lt_summarize(step_seconds, (int)timed);
    if (r->curve_count > 0) {
        /* Start: the first update's loss; end: the mean over the last tenth
         * of the updates (at most 50), which smooths batch noise. */
        r->loss_start = r->curve[0].loss;
        long tail = r->curve_count / 10;
        tail = tail < 1 ? 1 : tail > 50 ? 50 : tail;
        double loss = 0, acc = 0;
        for (long i = r->curve_count - tail; i < r->curve_count; i++) {
            loss += r->curve[i].loss;
            acc += r->curve[i].accuracy;
        }
        r->loss_end = loss / (double)tail;
        r->acc_end = acc / (double)tail;
    } else {
        r->loss_start = r->loss_end = r->acc_end = NAN;
    }
    lt_trainer_free(&t);
    lt_mem_free(inputs);
    lt_mem_free(targets);
    lt_mem_free(mask);
    return status;
}

/* Key columns shared by both CSVs. */
static const char *const key_columns[] = {"experiment", "variant", "kernel", "preset", "N",
                                          "batch", "layers", "heads", "head_dim", "ffn",
                                          "dropout", "optimizer", "base_lr", "threads", "seed"};
enum { KEY_COLUMNS = sizeof key_columns / sizeof key_columns[0] };

static void write_keys(lt_csv *csv, const copy_options *o, const variant_result *r)
{
    lt_csv_str(csv, "copy");
    lt_csv_str(csv, r->variant);
    lt_csv_str(csv, r->kernel);
    lt_csv_str(csv, o->preset);
    lt_csv_int(csv, o->seq);
    lt_csv_int(csv, o->batch);
    lt_csv_int(csv, o->layers);
    lt_csv_int(csv, o->heads);
    lt_csv_int(csv, o->head_dim);
    lt_csv_int(csv, o->ffn);
    lt_csv_num(csv, o->dropout);
    lt_csv_str(csv, o->optimizer);
    lt_csv_num(csv, o->lr);
    lt_csv_int(csv, lt_threads_get());
    lt_csv_int(csv, o->common.seed);
}

static lt_status open_with_keys(lt_csv *csv, const char *path, const char *const *metrics,
                                int metric_count)
{
    const char *columns[KEY_COLUMNS + 32];
    LT_ASSERT(metric_count <= 32);
    memcpy(columns, key_columns, sizeof key_columns);
    memcpy(columns + KEY_COLUMNS, metrics, (size_t)metric_count * sizeof *metrics);
    return lt_csv_open(csv, path, columns, KEY_COLUMNS + metric_count);
}

static lt_status finish_csv(lt_csv *csv, lt_status status)
{
    if (status != LT_OK) {
        lt_csv_abort(csv);
        return status;
    }
    return lt_csv_close(csv);
}

static lt_status write_curves(const copy_options *o, const variant_result *results, int count,
                              const char *path)
{
    static const char *const metrics[] = {"step", "elapsed_s", "loss", "copy_accuracy", "lr",
                                          "grad_norm"};
    lt_csv csv;
    LT_TRY(open_with_keys(&csv, path, metrics, 6));
    lt_status status = LT_OK;
    for (int v = 0; v < count && status == LT_OK; v++)
        for (long i = 0; i < results[v].curve_count && status == LT_OK; i++) {
            const curve_point *p = &results[v].curve[i];
            write_keys(&csv, o, &results[v]);
            lt_csv_int(&csv, p->step);
            lt_csv_num(&csv, p->elapsed);
            lt_csv_num(&csv, p->loss);
            lt_csv_num(&csv, p->accuracy);
            lt_csv_num(&csv, p->lr);
            lt_csv_num(&csv, p->grad_norm);
            status = lt_csv_end_row(&csv);
        }
    return finish_csv(&csv, status);
}

static lt_status write_summary(const copy_options *o, const variant_result *results, int count,
                               const char *path)
{
    static const char *const metrics[] = {
        "status", "first_step", "last_step", "step_median_s", "step_min_s", "step_max_s",
        "tokens_per_s", "peak_bytes", "planned_bytes", "params", "loss_start", "loss_end",
        "copy_accuracy_end", "eval_loss", "eval_copy_accuracy", "eval_sequences", "total_s",
        "config", "note"};
    const int metric_count = (int)(sizeof metrics / sizeof metrics[0]);
    lt_csv csv;
    LT_TRY(open_with_keys(&csv, path, metrics, metric_count));
    lt_status status = LT_OK;
    for (int v = 0; v < count && status == LT_OK; v++) {
        const variant_result *r = &results[v];
        write_keys(&csv, o, r);
        lt_csv_str(&csv, r->status);
        lt_csv_int(&csv, r->first_step);
        lt_csv_int(&csv, r->last_step);
        lt_csv_num(&csv, r->step_time.median);
        lt_csv_num(&csv, r->step_time.min);
        lt_csv_num(&csv, r->step_time.max);
        lt_csv_num(&csv, (double)(o->batch * o->seq) / r->step_time.median);
        lt_csv_int(&csv, (long long)r->peak_bytes);
        lt_csv_int(&csv, (long long)r->planned_bytes);
        lt_csv_int(&csv, (long long)r->param_count);
        lt_csv_num(&csv, r->loss_start);
        lt_csv_num(&csv, r->loss_end);
        lt_csv_num(&csv, r->acc_end);
        lt_csv_num(&csv, r->eval_loss);
        lt_csv_num(&csv, r->eval_acc);
        lt_csv_int(&csv, r->eval_sequences);
        lt_csv_num(&csv, r->total_seconds);
        /* Every setting of the run, as stored in its checkpoints. */
        lt_train_config tc;
        char description[2048] = "";
        if (build_config(&tc, o, r->variant) == LT_OK)
            lt_train_config_describe(&tc, description, sizeof description);
        lt_csv_str(&csv, description);
        lt_csv_str(&csv, r->note);
        status = lt_csv_end_row(&csv);
    }
    return finish_csv(&csv, status);
}

static void print_summary(const copy_options *o, const variant_result *results, int count)
{
    printf("\n%-9s %6s %5s %8s  %10s %10s %10s %11s %10s  %8s %8s %8s %9s\n", "variant", "N",
           "batch", "updates", "s/update", "min", "max", "tokens/s", "peak MiB", "loss0",
           "loss", "copy acc", "eval acc");
    for (int v = 0; v < count; v++) {
        const variant_result *r = &results[v];
        if (strcmp(r->status, "ok") != 0) {
            printf("%-9s %6ld %5ld  %s: %s\n", r->variant, o->seq, o->batch, r->status, r->note);
            continue;
        }
        printf("%-9s %6ld %5ld %8ld  %10.4f %10.4f %10.4f %11.0f %10.1f  %8.4f %8.4f %8.3f %9.3f\n",
               r->variant, o->seq, o->batch, r->last_step, r->step_time.median, r->step_time.min,
               r->step_time.max, (double)(o->batch * o->seq) / r->step_time.median,
               (double)r->peak_bytes / 1048576.0, r->loss_start, r->loss_end, r->acc_end,
               r->eval_acc);
    }
    printf("(s/update: median, min, max over the updates after the first; loss: first update and\n"
           " mean of the last tenth; copy acc: argmax accuracy on the copied half, training\n"
           " batches; eval acc: %ld held-out sequences, no dropout; chance is 0.1)\n",
           o->eval_batches * o->batch);
}

int main(int argc, char **argv)
{
    copy_options o = {.preset = "small", .variants = "softmax,linear,linformer",
                      .eps = 1e-6, .lr_drops = "none", .optimizer = "radam", .activation = "gelu",
                      .feature_map = "elu",
                      .eval_batches = 4, .checkpoint_every = 0, .out = "results/copy"};
    bench_common_defaults(&o.common);
    const preset *defaults = find_preset(o.preset);
    o.seq = defaults->seq;
    o.batch = defaults->batch;
    o.steps = defaults->steps;
    o.layers = defaults->layers;
    o.heads = defaults->heads;
    o.head_dim = defaults->head_dim;
    o.ffn = defaults->ffn;
    o.dropout = defaults->dropout;
    o.lr = defaults->lr;
    o.clip = defaults->clip;
    o.lr_drops = defaults->lr_drops;
    enum { OWN_FLAGS = 22 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--preset", LT_FLAG_CHOICE, &o.preset, NULL,
         "size of the run; the defaults below are the small preset's", 0, 0,
         "quick|small|paper", 0},
        {"--variants", LT_FLAG_STRING, &o.variants, "LIST",
         "comma-separated attention variants; linformer is reported as not applicable "
         "(it cannot be causal)", 0, 0, NULL, 0},
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
        {"--eps", LT_FLAG_DOUBLE, &o.eps, "EPS", "linear attention normaliser epsilon", 0, 1,
         NULL, 0},
        {"--eval-batches", LT_FLAG_INT, &o.eval_batches, "K",
         "held-out batches for the final evaluation", 0, 1 << 20, NULL, 0},
        {"--checkpoint-every", LT_FLAG_INT, &o.checkpoint_every, "K",
         "also checkpoint every K updates (one is always written at the end); 0 = end only", 0,
         1 << 30, NULL, 0},
        {"--resume", LT_FLAG_BOOL, &o.resume, NULL,
         "continue each variant from OUT/checkpoints/copy-VARIANT.ckpt", 0, 0, NULL, 0},
        {"--out", LT_FLAG_STRING, &o.out, "DIR",
         "folder for curves.csv, summary.csv and checkpoints/", 0, 0, NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &o.common);
    lt_cli cli = {
        "ltbench copy",
        "The synthetic copy task of the paper (sec. 4.1.1, Figure 2): train a causal "
        "transformer per\nattention variant to repeat a random sequence of symbols.",
        "Presets (any flag overrides its value):\n"
        "  quick  N=32,  batch 16, 1000 updates, 2 layers, 2 heads x 16, FFN 64, lr 3e-3\n"
        "  small  N=128, batch 32, 3000 updates, 2 layers, 4 heads x 16, FFN 256, lr 1e-3,\n"
        "         x0.1 after 2500 updates (the default)\n"
        "  paper  N=128, batch 64, 10000 updates, 4 layers, 8 heads x 32, FFN 1024,\n"
        "         dropout 0.1, RAdam lr 1e-3 -> 1e-4 after 3000 updates, no clipping\n"
        "With --seq above the preset's N, and unless --batch/--steps are given, the batch\n"
        "shrinks so batch x N stays the preset's tokens per update, and the number of updates\n"
        "shrinks by the same factor N grows (at least 20), so `ltbench copy --seq 8192`\n"
        "stays within minutes. The model is pre-norm (GELU by default), token embeddings plus\n"
        "sinusoidal positions (added), causal attention; loss and accuracy count only the\n"
        "copied half. Writes OUT/curves.csv (every update) and OUT/summary.csv.",
        flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    int exit_now;
    int code = bench_parse(&cli, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    char scaling_note[512];
    apply_preset(&o, &cli, find_preset(o.preset), scaling_note, sizeof scaling_note);

    char variants_text[256];
    snprintf(variants_text, sizeof variants_text, "%s", o.variants);
    const char *variants[MAX_VARIANTS];
    int variant_count;
    lt_status status =
        bench_parse_variants(variants_text, variants, MAX_VARIANTS, &variant_count);
    lt_train_config probe;
    /* Validate every setting, and every variant's memory plan against the
     * budget, before the first variant spends minutes. */
    if (status == LT_OK)
        status = build_config(&probe, &o, "linear");
    if (status == LT_OK)
        status = lt_model_check_config(&probe.model);
    for (int i = 0; status == LT_OK && i < variant_count; i++) {
        if (strcmp(variants[i], "linformer") == 0)
            continue;
        size_t planned;
        char what[96];
        snprintf(what, sizeof what, "training %s at N=%ld, batch %ld", variants[i], o.seq,
                 o.batch);
        status = build_config(&probe, &o, variants[i]);
        if (status == LT_OK)
            status = lt_trainer_plan(&probe, lt_threads_get(), &planned);
        if (status == LT_OK)
            status = lt_mem_plan(planned, what);
    }
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);

    printf("ltbench copy: preset %s, N=%ld, batch %ld, %ld updates, %ld layers, %ld heads x %ld, "
           "FFN %ld, dropout %g, %s lr %g%s%s, clip %g, %d threads, seed %ld\n",
           o.preset, o.seq, o.batch, o.steps, o.layers, o.heads, o.head_dim, o.ffn, o.dropout,
           o.optimizer, o.lr, " drops ", o.lr_drops, o.clip,
           lt_threads_get(), o.common.seed);
    if (scaling_note[0])
        printf("(%s)\n", scaling_note);
    fflush(stdout);

    variant_result results[MAX_VARIANTS];
    memset(results, 0, sizeof results);
    double *step_seconds = NULL;
    curve_point *curves = NULL;
    status = lt_mem_alloc((void **)&step_seconds, (size_t)o.steps * sizeof *step_seconds,
                          "update timings");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&curves,
                              (size_t)variant_count * (size_t)o.steps * sizeof *curves,
                              "loss curves");
    for (int v = 0; v < variant_count && status == LT_OK; v++) {
        variant_result *r = &results[v];
        r->variant = variants[v];
        r->kernel = "none";
        r->status = "ok";
        r->curve = curves + (size_t)v * (size_t)o.steps;
        r->step_time = (lt_summary){NAN, NAN, NAN, 0};
        r->loss_start = r->loss_end = r->acc_end = r->eval_loss = r->eval_acc = NAN;
        lt_attn_config config = lt_attn_default_config(variants[v]);
        config.causal = 1;
        lt_attn attn;
        if (lt_attn_init(&attn, &config) != LT_OK) {
            r->status = "not-applicable";
            snprintf(r->note, sizeof r->note, "%s", lt_last_error());
            continue;
        }
        status = train_variant(&o, variants[v], r, step_seconds);
        if (scaling_note[0])
            snprintf(r->note, sizeof r->note, "%s", scaling_note);
    }
    if (status == LT_OK) {
        print_summary(&o, results, variant_count);
        char curves_path[4096], summary_path[4096];
        snprintf(curves_path, sizeof curves_path, "%s/curves.csv", o.out);
        snprintf(summary_path, sizeof summary_path, "%s/summary.csv", o.out);
        status = write_curves(&o, results, variant_count, curves_path);
        if (status == LT_OK)
            status = write_summary(&o, results, variant_count, summary_path);
        if (status == LT_OK)
            printf("\nwrote %s and %s\n", curves_path, summary_path);
    }
    lt_mem_free(step_seconds);
    lt_mem_free(curves);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    return 0;
}
