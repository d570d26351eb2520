/* ltbench image: autoregressive pixel generation on MNIST and CIFAR-10 (the
 * paper's sec. 4.2, Tables 1 and 2). Each image is a byte sequence (CIFAR:
 * r, g, b interleaved) read by a causal transformer through a 256-value
 * embedding with a concatenated sinusoidal position encoding; a discretized
 * mixture of logistics predicts each byte. Reports test bits/dim, then
 * generates whole images in every mode that applies: linear attention as an
 * RNN (constant state), softmax recomputing the prefix (the paper's
 * baseline) and softmax with a key/value cache ("stateful softmax"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/attn.h"
#include "common.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "datasets/images.h"
#include "harness.h"
#include "io/png.h"
#include "model/generate.h"
#include "model/train.h"
#include "nn/mol.h"

enum { MAX_VARIANTS = 3, MAX_GEN_BATCHES = 4, START_TOKEN = 256, VOCAB = 257 };

/* Streams of the evaluation and generation draws, far from training's. */
#define GEN_STREAM_BASE (1ull << 44)

static const bench_preset_value preset_values[] = {
    {"--layers", {"1", "2", NULL}}, /* paper: 8 (MNIST) or 16 (CIFAR), set per dataset */
    {"--heads", {"2", "4", "8"}},
    {"--head-dim", {"8", "16", "32"}},
    {"--ffn", {"32", "256", "1024"}},
    {"--batch", {"4", "8", "16"}},
    {"--steps", {"20", NULL, NULL}}, /* small and paper: per dataset */
    {"--lr", {"1e-3", "1e-3", "1e-4"}},
    {"--train-images", {"64", "10000", "0"}},
    {"--test-images", {"16", "500", "0"}},
    {"--gen-images", {"2", "16", "16"}},
    {"--gen-batches", {"2", "16", "1,16"}},
    {"--gen-seconds", {"30", "120", "600"}},
};

static const bench_presets presets = {
    {"quick", "small", "paper"},
    {"seconds: a tiny model on a tiny subset; used by the tests",
     "a few minutes per variant on a 2-core machine: 2 layers of width 64 trained on the "
     "first 10000 training images (MNIST: 1000 updates; CIFAR: 300), tested on the first 500",
     "the paper's architecture: MNIST 8 layers, CIFAR 16 layers, 8 heads of 32, FFN 1024, "
     "RAdam 1e-4, the whole data (MNIST: 250 epochs; CIFAR: 100 epochs): days on a CPU"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

typedef struct image_options {
    const char *dataset, *data, *preset, *variants, *kernel, *gen_modes, *gen_batches;
    long layers, heads, head_dim, ffn, pos_dim, mixtures;
    long train_images, test_images, batch, steps, eval_batch, shards;
    double lr, clip, dropout;
    const char *optimizer;
    long gen_images, recompute_batch, completions;
    double gen_seconds;
    int gen_only;
    long checkpoint_every;
    int resume, overwrite;
    const char *out;
    bench_common common;
} image_options;

static const bench_field_flag field_flags[] = {
    {"layers", "--layers"}, {"heads", "--heads"},   {"head_dim", "--head-dim"},
    {"ffn", "--ffn"},       {"pos_dim", "--pos-dim"}, {"kernel", "--kernel"},
    {"loss.mixtures", "--mixtures"}, {"max_batch", "--batch"}, {"shards", "--shards"},
    {NULL, NULL}};

/* What a run works on: the data and its sizes. */
typedef struct image_data {
    lt_image_set train, test;
    int N;            /* bytes per image */
    char name[64];
} image_data;

static int width_of(const image_options *o) { return (int)(o->heads * o->head_dim); }

/* Shards of an update (--shards, or one per rank) and this rank's share. */
static int shard_count(const image_options *o)
{
    return o->shards > 0 ? (int)o->shards : lt_dist_size();
}

static int local_batch(const image_options *o) { return (int)o->batch / lt_dist_size(); }

static lt_status build_config(lt_train_config *tc, const image_options *o, const image_data *d,
                              const char *variant, const char *kernel, int batch, int seq)
{
    memset(tc, 0, sizeof *tc);
    if (o->batch % shard_count(o) != 0)
        return lt_fail(LT_E_USAGE, "--batch %ld cannot be split into %d equal shards "
                                   "(--shards, or one per rank)",
                       o->batch, shard_count(o));
    lt_model_config *m = &tc->model;
    *m = lt_model_default_config(variant);
    m->vocab = VOCAB;
    m->pos = LT_POS_CONCAT;
    m->pos_dim = (int)(o->pos_dim > 0 ? o->pos_dim : width_of(o) / 4);
    m->layers = (int)o->layers;
    m->heads = (int)o->heads;
    m->head_dim = (int)o->head_dim;
    m->ffn = (int)o->ffn;
    m->dropout = (float)o->dropout;
    m->attn.causal = 1;
    m->attn.kernel = kernel;
    m->attn.n_max = d->N;
    m->max_batch = batch;
    m->seq_len = seq;
    tc->shards = shard_count(o);
    tc->loss = (lt_loss){.kind = LT_LOSS_MOL, .mixtures = (int)o->mixtures};
    m->classes = lt_loss_outputs(&tc->loss);
    lt_optim_kind kind;
    LT_TRY(lt_optim_parse_kind(&kind, o->optimizer, "--optimizer"));
    tc->optim = lt_optim_defaults(kind);
    tc->optim.lr = o->lr;
    LT_TRY(lt_schedule_init(&tc->schedule, o->lr, 0));
    tc->clip_norm = o->clip;
    tc->seed = (uint64_t)o->common.seed;
    tc->threads = lt_threads_get();
    return LT_OK;
}

/* Inputs are the bytes shifted right behind a start token; targets are the
 * bytes. */
static void fill_sequence(int32_t *inputs, int32_t *targets, const uint8_t *pixels, int N)
{
    inputs[0] = START_TOKEN;
    for (int i = 0; i < N; i++) {
        if (i + 1 < N)
            inputs[i + 1] = pixels[i];
        targets[i] = pixels[i];
    }
}

/* ---- tables ---- */

#define KEYS "experiment", "dataset", "variant", "kernel", "preset", "layers", "heads", \
             "head_dim", "ffn", "threads", "seed"

static const char *const curve_columns[] = {KEYS, "step", "elapsed_s", "loss",
                                            "bits_per_dim", "lr", "grad_norm"};
static const char *const result_columns[] = {
    KEYS, "gen_mode", "gen_batch", "status", "data", "train_images", "test_images", "trained",
    "steps", "train_s", "step_median_s", "peak_train_bytes", "test_bits_per_dim",
    "images_generated", "gen_s", "images_per_s", "seconds_per_image", "linear_speedup",
    "peak_gen_bytes", "peak_gen_bytes_per_image", "params", "note"};

static void set_keys(bench_table *t, const image_options *o, const image_data *d,
                     const char *variant, const char *kernel)
{
    bench_set_str(t, "experiment", "image");
    bench_set_str(t, "dataset", d->name);
    bench_set_str(t, "variant", variant);
    bench_set_str(t, "kernel", kernel);
    bench_set_str(t, "preset", o->preset);
    bench_set_int(t, "layers", o->layers);
    bench_set_int(t, "heads", o->heads);
    bench_set_int(t, "head_dim", o->head_dim);
    bench_set_int(t, "ffn", o->ffn);
    bench_set_int(t, "threads", lt_threads_get());
    bench_set_int(t, "seed", o->common.seed);
}

/* ---- training ---- */

typedef struct train_ctx {
    const image_options *o;
    const image_data *d;
    const char *variant, *kernel;
    int32_t *inputs, *targets;
    bench_table *curves;
} train_ctx;

static lt_status make_batch(void *ctx, long step, lt_batch *batch)
{
    train_ctx *c = ctx;
    /* this rank's images of the update: image i of the global batch draws
     * from stream step * B + i, whichever rank holds it */
    const int B = local_batch(c->o), N = c->d->N;
    const uint64_t first = (uint64_t)step * (uint64_t)c->o->batch + (uint64_t)(lt_dist_rank() * B);
    for (int b = 0; b < B; b++) {
        lt_rng rng;
        lt_rng_seed(&rng, (uint64_t)c->o->common.seed, first + (uint64_t)b);
        uint64_t image = lt_rng_below(&rng, (uint64_t)c->d->train.count);
        fill_sequence(c->inputs + (size_t)b * N, c->targets + (size_t)b * N,
                      c->d->train.pixels + image * (size_t)N, N);
    }
    *batch = (lt_batch){.batch = B, .n = N, .tokens = c->inputs, .targets = c->targets};
    return LT_OK;
}

static lt_status add_curve_row(void *ctx, const lt_trainer *t, const lt_batch_result *r,
                               double elapsed)
{
    train_ctx *c = ctx;
    bench_row_begin(c->curves);
    set_keys(c->curves, c->o, c->d, c->variant, c->kernel);
    bench_set_int(c->curves, "step", t->step);
    bench_set_num(c->curves, "elapsed_s", elapsed);
    bench_set_num(c->curves, "loss", r->loss);
    bench_set_num(c->curves, "bits_per_dim", r->loss / log(2.0));
    bench_set_num(c->curves, "lr", r->lr);
    bench_set_num(c->curves, "grad_norm", r->grad_norm);
    return bench_row_end(c->curves);
}

static void progress_note(void *ctx, const lt_batch_result *r, char *buf, size_t size)
{
    (void)ctx;
    snprintf(buf, size, "%.4f bits/dim", r->loss / log(2.0));
}

/* Test bits/dim over the test images, in batches, without dropout. */
static lt_status evaluate(lt_trainer *t, train_ctx *c, double *bits_per_dim)
{
    const int N = c->d->N, B = t->model.config.max_batch;
    double sums[2] = {0, 0}, scratch[2]; /* nats, counted bytes */
    lt_progress progress;
    lt_progress_start(&progress, stderr, "test bits/dim", c->d->test.count, "images",
                      c->o->common.quiet);
    /* batches of one shard's size, dealt round the ranks */
    for (int first = lt_dist_rank() * B; first < c->d->test.count;
         first += B * lt_dist_size()) {
        int n = c->d->test.count - first < B ? c->d->test.count - first : B;
        for (int b = 0; b < n; b++)
            fill_sequence(c->inputs + (size_t)b * N, c->targets + (size_t)b * N,
                          c->d->test.pixels + (size_t)(first + b) * N, N);
        lt_batch batch = {.batch = n, .n = N, .tokens = c->inputs, .targets = c->targets};
        lt_batch_result r;
        LT_TRY(lt_trainer_evaluate(t, &batch, &r));
        sums[0] += r.sum;
        sums[1] += (double)r.counted;
        lt_progress_update(&progress, first + n, NULL);
    }
    lt_progress_finish(&progress, NULL);
    LT_TRY(lt_dist_sum_f64(sums, scratch, 2));
    *bits_per_dim = sums[1] > 0 ? sums[0] / sums[1] / log(2.0) : NAN;
    return LT_OK;
}

/* What training a variant gives the result rows. */
typedef struct trained {
    int done;
    long steps;
    double seconds, step_median, bits_per_dim;
    size_t peak_bytes, params;
    const char *status;
    char note[512];
} trained;

static void checkpoint_name(char *buf, size_t size, const image_data *d, const char *variant)
{
    snprintf(buf, size, "checkpoints/image-%s-%s.ckpt", d->name, variant);
}

/* Trains (or resumes) a variant and evaluates it; leaves the weights in
 * `weights` (allocated here) for generation. */
static lt_status train_variant(const image_options *o, const image_data *d, const bench_run *run,
                               train_ctx *c, const lt_csv_table *prev, const char *prev_path,
                               double *step_seconds, lt_model *weights, trained *out)
{
    lt_train_config tc;
    const int B = local_batch(o), N = d->N;
    LT_TRY(build_config(&tc, o, d, c->variant, c->kernel, (int)o->batch / shard_count(o), N));
    char name[256], ckpt[4400];
    checkpoint_name(name, sizeof name, d, c->variant);
    bench_run_path(run, name, ckpt, sizeof ckpt);
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_trainer t;
    memset(&t, 0, sizeof t);
    c->inputs = c->targets = NULL;
    lt_status status = lt_mem_alloc((void **)&c->inputs, (size_t)B * N * 4, "inputs");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&c->targets, (size_t)B * N * 4, "targets");
    if (status == LT_OK)
        status = lt_trainer_init(&t, &tc, lt_threads_get());
    out->params = t.model.param_count;
    double first_loss = NAN, ignored;
    long carried = 0;
    if (status == LT_OK)
        status = bench_resume(&t, run, ckpt, c->curves, prev, prev_path, "variant", c->variant,
                              1, &carried);
    if (carried > 0)
        bench_curve_ends(c->curves, "variant", c->variant, "loss", &first_loss, &ignored);
    char label[96];
    snprintf(label, sizeof label, "image %s %s", d->name, c->variant);
    bench_train_spec spec = {
        .label = label, .steps = o->steps,
        .checkpoint_every = o->checkpoint_every > 0 ? o->checkpoint_every
                                                    : (o->steps / 10 > 0 ? o->steps / 10 : 1),
        .checkpoint = ckpt, .quiet = o->common.quiet, .make_batch = make_batch,
        .add_row = add_curve_row, .note = progress_note, .ctx = c, .curves = c->curves};
    bench_train_result tr;
    memset(&tr, 0, sizeof tr);
    tr.status = "ok";
    if (status == LT_OK)
        status = bench_train(&t, &spec, first_loss, step_seconds, &tr);
    out->status = tr.status;
    snprintf(out->note, sizeof out->note, "%s", tr.note);
    out->steps = t.step;
    out->seconds = tr.seconds;
    out->step_median = tr.step_time.median;
    out->bits_per_dim = NAN;
    if (status == LT_OK && strcmp(tr.status, "diverged") != 0)
        status = evaluate(&t, c, &out->bits_per_dim);
    out->peak_bytes = lt_mem_peak() - base;
    /* generation runs on rank 0 alone */
    if (status == LT_OK && lt_dist_is_root())
        status = lt_model_alloc(weights, &tc.model, LT_MODEL_WEIGHTS, 1, tc.seed);
    if (status == LT_OK && lt_dist_is_root())
        status = lt_model_copy_params(weights, &t.model);
    out->done = status == LT_OK;
    lt_trainer_free(&t);
    lt_mem_free(c->inputs);
    lt_mem_free(c->targets);
    return status;
}

/* ---- generation ---- */

typedef enum gen_kind { GEN_RECURRENT, GEN_CACHED, GEN_RECOMPUTE } gen_kind;
static const char *const gen_names[] = {"recurrent", "cached", "recompute"};

/* Samples the next byte of each sequence from the mixture, with uniforms
 * drawn per (image, position) so the samples do not depend on batching. */
static void sample_bytes(int32_t *out, const float *logits, int B, int K, long first_image,
                         int position, int N, uint64_t seed, double *uniforms)
{
    for (int b = 0; b < B; b++) {
        lt_rng rng;
        lt_rng_seed(&rng, seed, GEN_STREAM_BASE + (uint64_t)(first_image + b) * (uint64_t)N +
                                    (uint64_t)position);
        uniforms[2 * b] = lt_rng_uniform(&rng);
        uniforms[2 * b + 1] = lt_rng_uniform(&rng);
    }
    lt_mol_sample(out, logits, uniforms, B, K);
}

/* Generates B whole images (the first `given` bytes of each taken from
 * `prompt`, B x N, when not NULL) into pixels (B, N). */
static lt_status generate_batch(lt_generator *g, uint8_t *pixels, const uint8_t *prompt,
                                int given, int B, int N, int K, long first_image, uint64_t seed,
                                int32_t *column, double *uniforms)
{
    LT_TRY(lt_generator_reset(g));
    for (int b = 0; b < B; b++)
        column[b] = START_TOKEN;
    for (int t = 0; t < N; t++) {
        const float *logits;
        LT_TRY(lt_generator_step(g, column, &logits));
        if (t < given) {
            for (int b = 0; b < B; b++)
                column[b] = prompt[(size_t)b * N + t];
        } else {
            sample_bytes(column, logits, B, K, first_image, t, N, seed, uniforms);
        }
        for (int b = 0; b < B; b++)
            pixels[(size_t)b * N + t] = (uint8_t)column[b];
    }
    return LT_OK;
}

typedef struct gen_result {
    long images;
    double seconds;
    size_t peak_bytes;
} gen_result;

/* Times whole-image generation in one mode at batch B: batches until
 * `count` images or `budget` seconds, at least one batch, never a partial
 * image. `samples` (>= B x N bytes) receives the first batch. */
static lt_status measure_generation(const lt_model *weights, const lt_train_config *tc,
                                    gen_kind kind, int B, long count, double budget,
                                    uint64_t seed, int N, uint8_t *samples, const char *label,
                                    int quiet, gen_result *out)
{
    memset(out, 0, sizeof *out);
    lt_model_config mc = tc->model;
    mc.max_batch = B;
    mc.seq_len = N;
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_model model;
    lt_generator g;
    memset(&g, 0, sizeof g);
    int32_t *column = NULL;
    double *uniforms = NULL;
    uint8_t *pixels = NULL;
    lt_status status = lt_model_alloc(&model, &mc,
                                      kind == GEN_RECOMPUTE ? LT_MODEL_INFER : LT_MODEL_WEIGHTS,
                                      lt_threads_get(), tc->seed);
    if (status == LT_OK)
        status = lt_model_copy_params(&model, weights);
    if (status == LT_OK)
        status = lt_generator_init(&g, &model,
                                   kind == GEN_RECOMPUTE ? LT_GEN_RECOMPUTE : LT_GEN_RECURRENT, B,
                                   N);
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&column, (size_t)B * sizeof *column, "generated column");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&uniforms, (size_t)B * 2 * sizeof *uniforms, "uniforms");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&pixels, (size_t)B * N, "generated images");
    lt_progress progress;
    lt_progress_start(&progress, stderr, label, count, "images", quiet);
    double start = lt_time_now();
    while (status == LT_OK && (out->images == 0 ||
                               (out->images < count && lt_time_now() - start < budget))) {
        status = generate_batch(&g, pixels, NULL, 0, B, N, (int)(mc.classes / 3), out->images,
                                seed, column, uniforms);
        if (status == LT_OK && out->images == 0)
            memcpy(samples, pixels, (size_t)B * N);
        out->images += B;
        lt_progress_update(&progress, out->images, NULL);
        if (bench_interrupted())
            break;
    }
    out->seconds = lt_time_now() - start;
    lt_progress_finish(&progress, NULL);
    out->peak_bytes = lt_mem_peak() - base;
    lt_mem_free(column);
    lt_mem_free(uniforms);
    lt_mem_free(pixels);
    lt_generator_free(&g);
    lt_model_free(&model);
    return status;
}

/* The completion grid: test images whose lower half is generated from the
 * upper half, beside the originals. */
static lt_status completions(const lt_model *weights, const lt_train_config *tc,
                             const image_data *d, gen_kind kind, int count, uint64_t seed,
                             uint8_t *out /* (2 * count, N) */)
{
    const int N = d->N;
    lt_model_config mc = tc->model;
    mc.max_batch = count;
    lt_model model;
    lt_generator g;
    memset(&g, 0, sizeof g);
    int32_t *column = NULL;
    double *uniforms = NULL;
    LT_TRY(lt_model_alloc(&model, &mc, kind == GEN_RECOMPUTE ? LT_MODEL_INFER : LT_MODEL_WEIGHTS,
                          lt_threads_get(), tc->seed));
    lt_status status = lt_model_copy_params(&model, weights);
    if (status == LT_OK)
        status = lt_generator_init(&g, &model,
                                   kind == GEN_RECOMPUTE ? LT_GEN_RECOMPUTE : LT_GEN_RECURRENT,
                                   count, N);
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&column, (size_t)count * sizeof *column, "column");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&uniforms, (size_t)count * 2 * sizeof *uniforms, "u");
    if (status == LT_OK)
        status = generate_batch(&g, out + (size_t)count * N, d->test.pixels, N / 2, count, N,
                                (int)(mc.classes / 3), 1 << 20, seed, column, uniforms);
    memcpy(out, d->test.pixels, (size_t)count * N);
    lt_mem_free(column);
    lt_mem_free(uniforms);
    lt_generator_free(&g);
    lt_model_free(&model);
    return status;
}

static lt_status write_grid(const char *path, const uint8_t *images, int count, int cols,
                            const image_data *d)
{
    int gw, gh, C = d->train.channels;
    LT_TRY(lt_png_grid_size(&gw, &gh, count, d->train.width, d->train.height, cols, 2));
    uint8_t *grid;
    LT_TRY(lt_mem_alloc((void **)&grid, (size_t)gw * gh * C, "image grid"));
    lt_status status = lt_png_grid(grid, images, count, d->train.width, d->train.height, C, cols,
                                   2, 128);
    if (status == LT_OK)
        status = lt_png_write(path, grid, gw, gh, C);
    lt_mem_free(grid);
    return status;
}

/* ---- data ---- */

static lt_status load_data(const image_options *o, image_data *d, char *note, size_t size)
{
    memset(d, 0, sizeof *d);
    note[0] = '\0';
    lt_image_set train, test;
    int mnist = strcmp(o->dataset, "mnist") == 0;
    const char *dir = o->data;
    struct stat st;
    /* Without --data, CIFAR falls back to the converted subset when the
     * official batches are absent, and says so: it is never called CIFAR-10. */
    if (!mnist && dir == NULL && stat(LT_CIFAR10_DIR, &st) != 0 &&
        stat(LT_CIFAR10_CATDOG_DIR, &st) == 0) {
        dir = LT_CIFAR10_CATDOG_DIR;
        snprintf(note, size, "no %s: using %s", LT_CIFAR10_DIR, LT_CIFAR10_CATDOG_DIR);
    }
    LT_TRY(mnist ? lt_images_load_mnist(&train, &test, dir)
                 : lt_images_load_cifar10(&train, &test, dir));
    lt_status status = LT_OK;
    long n_train = o->train_images > 0 && o->train_images < train.count ? o->train_images
                                                                          : train.count;
    long n_test = o->test_images > 0 && o->test_images < test.count ? o->test_images : test.count;
    status = lt_images_first(&d->train, &train, (int)n_train);
    if (status == LT_OK)
        status = lt_images_first(&d->test, &test, (int)n_test);
    lt_images_free(&train);
    lt_images_free(&test);
    if (status != LT_OK)
        return status;
    d->N = (int)lt_images_seq_len(&d->train);
    snprintf(d->name, sizeof d->name, "%s", d->train.name);
    return LT_OK;
}

/* ---- results ---- */

typedef struct gen_row {
    const char *variant, *kernel;
    gen_kind kind;
    int batch;
    gen_result r;
} gen_row;

static void add_result(bench_table *t, const image_options *o, const image_data *d,
                       const char *variant, const char *kernel, const char *mode, int batch,
                       const trained *tr, const gen_result *g, double speedup,
                       const char *status, const char *note)
{
    bench_row_begin(t);
    set_keys(t, o, d, variant, kernel);
    bench_set_str(t, "gen_mode", mode);
    bench_set_int(t, "gen_batch", batch);
    bench_set_str(t, "status", status);
    bench_set_str(t, "data", d->name);
    bench_set_int(t, "train_images", d->train.count);
    bench_set_int(t, "test_images", d->test.count);
    bench_set_int(t, "trained", tr->done);
    bench_set_int(t, "steps", tr->steps);
    bench_set_num(t, "train_s", tr->seconds);
    bench_set_num(t, "step_median_s", tr->step_median);
    bench_set_int(t, "peak_train_bytes", (long long)tr->peak_bytes);
    bench_set_num(t, "test_bits_per_dim", tr->bits_per_dim);
    bench_set_int(t, "images_generated", g ? g->images : 0);
    bench_set_num(t, "gen_s", g ? g->seconds : NAN);
    bench_set_num(t, "images_per_s", g && g->seconds > 0 ? (double)g->images / g->seconds : NAN);
    bench_set_num(t, "seconds_per_image",
                  g && g->images > 0 ? g->seconds / (double)g->images : NAN);
    bench_set_num(t, "linear_speedup", speedup);
    bench_set_int(t, "peak_gen_bytes", g ? (long long)g->peak_bytes : 0);
    bench_set_num(t, "peak_gen_bytes_per_image",
                  g && batch > 0 ? (double)g->peak_bytes / batch : NAN);
    bench_set_int(t, "params", (long long)tr->params);
    bench_set_str(t, "note", note);
    bench_row_end(t);
}

/* images/s of linear's recurrent mode at batch B, or NAN. */
static double linear_rate(const gen_row *rows, int count, int B)
{
    for (int i = 0; i < count; i++)
        if (rows[i].kind == GEN_RECURRENT && strcmp(rows[i].variant, "linear") == 0 &&
            rows[i].batch == B && rows[i].r.seconds > 0)
            return (double)rows[i].r.images / rows[i].r.seconds;
    return NAN;
}

static const bench_print_col result_print[] = {
    {"variant", "variant", NULL, 0, 9},
    {"mode", "gen_mode", NULL, 0, 9},
    {"batch", "gen_batch", NULL, 0, 5},
    {"bits/dim", "test_bits_per_dim", "%.4f", 0, 8},
    {"images", "images_generated", NULL, 0, 6},
    {"images/s", "images_per_s", "%.4g", 0, 9},
    {"s/image", "seconds_per_image", "%.4g", 0, 9},
    {"linear x", "linear_speedup", "%.4g", 0, 9},
    {"gen MiB/img", "peak_gen_bytes_per_image", "%.2f", 1.0 / 1048576.0, 11},
    {"train s", "train_s", "%.0f", 0, 8},
};

/* The generation modes of a variant, in the paper's order. */
static int modes_for(const image_options *o, const lt_attn_caps *caps, const char *variant,
                     gen_kind *out)
{
    int n = 0, all = strcmp(o->gen_modes, "all") == 0, fast = strcmp(o->gen_modes, "fast") == 0;
    int linear = strcmp(variant, "linear") == 0;
    if (caps->recurrent)
        out[n++] = linear ? GEN_RECURRENT : GEN_CACHED;
    if ((!linear || all) && !fast)
        out[n++] = GEN_RECOMPUTE;
    return n;
}

int main(int argc, char **argv)
{
    image_options o = {.dataset = "mnist", .preset = "small", .variants = "softmax,linear",
                       .kernel = "default", .gen_modes = "default", .optimizer = "radam",
                       .mixtures = 10, .eval_batch = 0, .recompute_batch = 1, .completions = 8,
                       .out = "results/image"};
    bench_common_defaults(&o.common);
    enum { OWN_FLAGS = 31 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--dataset", LT_FLAG_CHOICE, &o.dataset, NULL, "data set", 0, 0, "mnist|cifar10", 0},
        {"--data", LT_FLAG_STRING, &o.data, "DIR",
         "folder of the data (default: data/mnist, or data/cifar10, else the converted "
         "data/cifar10-catdog subset, named as such)", 0, 0, NULL, 0},
        {"--preset", LT_FLAG_CHOICE, &o.preset, NULL,
         "size of the run (see Presets below); the defaults shown are the small preset's", 0, 0,
         "quick|small|paper", 0},
        {"--variants", LT_FLAG_STRING, &o.variants, "LIST",
         "comma-separated attention variants (linformer is not causal: not applicable)", 0, 0,
         NULL, 0},
        {"--kernel", LT_FLAG_STRING, &o.kernel, "NAME",
         "attention kernel for the variant that has it; the others keep their defaults", 0, 0,
         NULL, 0},
        {"--layers", LT_FLAG_INT, &o.layers, "L", "transformer layers", 1, 1024, NULL, 0},
        {"--heads", LT_FLAG_INT, &o.heads, "H", "attention heads", 1, 1024, NULL, 0},
        {"--head-dim", LT_FLAG_INT, &o.head_dim, "D", "dimension per head (width = H x D)", 1,
         4096, NULL, 0},
        {"--ffn", LT_FLAG_INT, &o.ffn, "F", "feed-forward hidden width", 1, 1 << 20, NULL, 0},
        {"--pos-dim", LT_FLAG_INT, &o.pos_dim, "P",
         "columns of the concatenated position encoding; 0 = a quarter of the width", 0, 4096,
         NULL, 0},
        {"--mixtures", LT_FLAG_INT, &o.mixtures, "K", "logistic mixture components per byte",
         1, 256, NULL, 0},
        {"--train-images", LT_FLAG_INT, &o.train_images, "N",
         "train on the first N training images; 0 = all", 0, 1 << 30, NULL, 0},
        {"--test-images", LT_FLAG_INT, &o.test_images, "N",
         "test bits/dim on the first N test images; 0 = all", 0, 1 << 30, NULL, 0},
        {"--batch", LT_FLAG_INT, &o.batch, "B", "images per update (and per test batch)", 1,
         1 << 16, NULL, 0},
        {"--steps", LT_FLAG_INT, &o.steps, "S", "updates (a resumed run continues up to S)", 1,
         1 << 30, NULL, 0},
        {"--optimizer", LT_FLAG_CHOICE, &o.optimizer, NULL, "optimizer (the paper uses RAdam)",
         0, 0, "radam|adam", 0},
        {"--lr", LT_FLAG_DOUBLE, &o.lr, "LR", "learning rate", 1e-9, 10, NULL, 0},
        {"--clip", LT_FLAG_DOUBLE, &o.clip, "NORM", "global gradient-norm clipping; 0 = off",
         0, 1e9, NULL, 0},
        {"--dropout", LT_FLAG_DOUBLE, &o.dropout, "P", "dropout after each branch", 0, 0.99,
         NULL, 0},
        {"--gen-images", LT_FLAG_INT, &o.gen_images, "N",
         "images to generate per mode and batch size (whole batches; fewer when a mode runs "
         "out of --gen-seconds, but always at least one batch)", 1, 1 << 20, NULL, 0},
        {"--gen-batches", LT_FLAG_STRING, &o.gen_batches, "LIST",
         "batch sizes for recurrent and cached generation, e.g. 1,16", 0, 0, NULL, 0},
        {"--recompute-batch", LT_FLAG_INT, &o.recompute_batch, "B",
         "batch size for softmax recompute generation (the slow baseline)", 1, 1 << 16, NULL,
         0},
        {"--gen-seconds", LT_FLAG_DOUBLE, &o.gen_seconds, "S",
         "time budget per mode and batch size (a started batch always finishes)", 0, 1e7, NULL,
         0},
        {"--gen-modes", LT_FLAG_CHOICE, &o.gen_modes, NULL,
         "default: linear recurrent, softmax cached and recompute; all: also linear "
         "recompute; fast: no recompute (it re-runs the prefix per byte: O(N^2) forwards)",
         0, 0, "default|all|fast", 0},
        {"--gen-only", LT_FLAG_BOOL, &o.gen_only, NULL,
         "skip training: measure generation speed with untrained weights (speed does not "
         "depend on them; the CSV says so)", 0, 0, NULL, 0},
        {"--shards", LT_FLAG_INT, &o.shards, "S",
         "split each update's batch into S shards summed in a fixed tree (a power of two; "
         "0 = one per MPI rank)", 0, 1024, NULL, 0},
        {"--completions", LT_FLAG_INT, &o.completions, "N",
         "test images completed from their upper half in the completion grid; 0 = none", 0, 64,
         NULL, 0},
        {"--checkpoint-every", LT_FLAG_INT, &o.checkpoint_every, "K",
         "checkpoint (and flush the curve) every K updates; 0 = every tenth of the run", 0,
         1 << 30, NULL, 0},
        {"--resume", LT_FLAG_BOOL, &o.resume, NULL,
         "continue training from OUT/checkpoints where they exist", 0, 0, NULL, 0},
        {"--overwrite", LT_FLAG_BOOL, &o.overwrite, NULL,
         "start over in an OUT that holds checkpoints of an earlier run", 0, 0, NULL, 0},
        {"--out", LT_FLAG_STRING, &o.out, "DIR",
         "folder for DATASET.csv, DATASET-curves.csv, PNGs and checkpoints/", 0, 0, NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &o.common);
    char preset_help[3072], details[6144];
    bench_presets_help(&presets, preset_help, sizeof preset_help);
    snprintf(details, sizeof details,
             "%s\n"
             "Images are byte sequences (MNIST N = 784; CIFAR r,g,b interleaved, N = 3072) read\n"
             "behind a start token by a causal pre-norm transformer: 256 byte values (+ start)\n"
             "embedded, a sinusoidal position encoding concatenated (--pos-dim columns, as the\n"
             "paper does), and a discretized mixture of --mixtures logistics per byte (PixelCNN++\n"
             "style). bits/dim = mean negative log-likelihood in nats / ln 2 over the test\n"
             "images. Generation: linear attention steps its constant (S, z) state\n"
             "(recurrent); softmax either re-runs the whole prefix per byte (recompute, the\n"
             "paper's baseline) or keeps a key/value cache (cached, the paper's stateful\n"
             "softmax). images/s counts whole images at the stated batch; linear x is linear\n"
             "recurrent's images/s over that row's at the same batch. Sampling is seeded and\n"
             "deterministic. Writes OUT/DATASET.csv, OUT/DATASET-curves.csv,\n"
             "OUT/DATASET-VARIANT-samples.png and OUT/DATASET-VARIANT-completions.png.",
             preset_help);
    lt_cli cli = {"ltbench image",
                  "Autoregressive image generation on MNIST and CIFAR-10 (the paper's sec. 4.2,\n"
                  "Tables 1 and 2): bits/dim and images/s per attention variant and generation "
                  "mode.",
                  details, flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    o.layers = 2, o.steps = 1000; /* the small preset's per-dataset values, for --help */
    int exit_now;
    int code = bench_parse_presets(&cli, &presets, &o.preset, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    lt_status status = LT_OK;
    int mnist = strcmp(o.dataset, "mnist") == 0, paper = strcmp(o.preset, "paper") == 0;
    if (!lt_cli_flag(&cli, "--layers")->seen && paper)
        o.layers = mnist ? 8 : 16;
    if (!lt_cli_flag(&cli, "--steps")->seen && strcmp(o.preset, "quick") != 0)
        o.steps = paper ? (mnist ? 250L * 60000 / o.batch : 100L * 50000 / o.batch)
                        : (mnist ? 1000 : 300);
    if (o.eval_batch == 0)
        o.eval_batch = o.batch;

    char text[256];
    const char *variants[MAX_VARIANTS], *kernels[MAX_VARIANTS];
    int variant_count = 0;
    snprintf(text, sizeof text, "%s", o.variants);
    if (status == LT_OK)
        status = bench_parse_variants(text, variants, MAX_VARIANTS, &variant_count);
    long gen_batches[MAX_GEN_BATCHES + 1];
    int gen_batch_count = 0;
    char batches_text[128];
    snprintf(batches_text, sizeof batches_text, "%s", o.gen_batches);
    const char *items[MAX_GEN_BATCHES];
    if (status == LT_OK)
        status = lt_cli_split_list(batches_text, items, MAX_GEN_BATCHES, &gen_batch_count,
                                   "--gen-batches");
    for (int i = 0; status == LT_OK && i < gen_batch_count; i++) {
        char *end;
        gen_batches[i] = strtol(items[i], &end, 10);
        if (*end != '\0' || gen_batches[i] < 1 || gen_batches[i] > 4096)
            status = lt_fail(LT_E_USAGE, "--gen-batches: expected sizes 1 to 4096, got '%s'",
                             items[i]);
        for (int j = 0; status == LT_OK && j < i; j++)
            if (gen_batches[j] == gen_batches[i])
                status = lt_fail(LT_E_USAGE, "--gen-batches: %ld is listed twice",
                                 gen_batches[i]);
    }
    /* Linear's speed-up over recompute is taken at the same batch. */
    int listed = 0;
    for (int i = 0; i < gen_batch_count; i++)
        listed |= gen_batches[i] == o.recompute_batch;
    if (status == LT_OK && !listed && gen_batch_count < MAX_GEN_BATCHES + 1)
        gen_batches[gen_batch_count++] = o.recompute_batch;
    lt_attn_caps caps[MAX_VARIANTS];
    for (int i = 0; status == LT_OK && i < variant_count; i++) {
        status = lt_attn_variant_caps(variants[i], &caps[i]);
        if (status == LT_OK)
            status = bench_kernel_for(o.kernel, variants, variant_count, 1, variants[i],
                                      &kernels[i]);
    }
    image_data d;
    char data_note[256] = "";
    if (status == LT_OK)
        status = load_data(&o, &d, data_note, sizeof data_note);
    /* Every model's plan against the budget before the first spends time. */
    for (int i = 0; status == LT_OK && i < variant_count; i++) {
        if (!caps[i].causal)
            continue;
        lt_train_config tc;
        size_t bytes;
        status = build_config(&tc, &o, &d, variants[i], kernels[i],
                              (int)o.batch / shard_count(&o), d.N);
        if (status == LT_OK && !o.gen_only)
            status = lt_trainer_plan(&tc, lt_threads_get(), &bytes);
        if (status == LT_OK && !o.gen_only)
            status = lt_mem_plan(bytes, "training");
    }
    bench_run run;
    char csv_name[96], curves_name[96];
    snprintf(csv_name, sizeof csv_name, "%s.csv", o.dataset);
    snprintf(curves_name, sizeof curves_name, "%s-curves.csv", o.dataset);
    const char *files[] = {csv_name, curves_name};
    char ckpt_names[MAX_VARIANTS][256];
    const char *ckpts[MAX_VARIANTS];
    for (int i = 0; i < variant_count; i++) {
        checkpoint_name(ckpt_names[i], sizeof ckpt_names[i], &d, variants[i]);
        ckpts[i] = ckpt_names[i];
    }
    if (status == LT_OK)
        status = bench_run_open(&run, o.out, o.resume, o.overwrite, files, 2, ckpts,
                                o.gen_only ? 0 : variant_count);
    char csv_path[4400], curves_path[4400], prev_path[4400];
    bench_run_path(&run, csv_name, csv_path, sizeof csv_path);
    lt_csv_table prev;
    int have_prev = 0;
    bench_table curves, results;
    bench_table_init(&results, result_columns, sizeof result_columns / sizeof *result_columns);
    if (status == LT_OK)
        status = bench_open_curves(&curves, curve_columns,
                                   sizeof curve_columns / sizeof *curve_columns, &run,
                                   curves_name, curves_path, sizeof curves_path, &prev,
                                   &have_prev, prev_path, sizeof prev_path);
    status = lt_dist_agree(status);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);

    char described[128];
    printf("ltbench image: %s (%s), N=%d, preset %s, %ld layers, %ld heads x %ld, FFN %ld, "
           "%ld mixtures, %s, %d threads, seed %ld%s%s\n",
           d.name, lt_images_describe(described, sizeof described, &d.train), d.N, o.preset,
           o.layers, o.heads, o.head_dim, o.ffn, o.mixtures,
           o.gen_only ? "generation only (untrained weights)" : "training", lt_threads_get(),
           o.common.seed, data_note[0] ? "; " : "", data_note);
    fflush(stdout);
    bench_signals_install();

    double *step_seconds = NULL;
    status = lt_mem_alloc((void **)&step_seconds, (size_t)o.steps * sizeof *step_seconds,
                          "update timings");
    static gen_row gen_rows[MAX_VARIANTS * 3 * (MAX_GEN_BATCHES + 1)];
    static trained train_of[MAX_VARIANTS];
    int gen_count = 0, diverged = 0;
    size_t tile = (size_t)d.N;
    uint8_t *samples = NULL, *grid = NULL;
    long max_batch = o.recompute_batch;
    for (int i = 0; i < gen_batch_count; i++)
        max_batch = gen_batches[i] > max_batch ? gen_batches[i] : max_batch;
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&samples, (size_t)max_batch * tile, "samples");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&grid, 2 * (size_t)(o.completions + 1) * tile, "grid");
    for (int v = 0; v < variant_count && status == LT_OK && !bench_interrupted(); v++) {
        trained *tr = &train_of[v];
        memset(tr, 0, sizeof *tr);
        tr->bits_per_dim = tr->step_median = tr->seconds = NAN;
        tr->status = "ok";
        if (!caps[v].causal) {
            char note[512];
            snprintf(note, sizeof note, "%s attention cannot be causal: %s", variants[v],
                     caps[v].no_causal_reason);
            add_result(&results, &o, &d, variants[v], "none", "none", 0, tr, NULL, NAN,
                       "not-applicable", note);
            continue;
        }
        lt_train_config tc;
        lt_attn attn;
        status = build_config(&tc, &o, &d, variants[v], kernels[v],
                              (int)o.batch / shard_count(&o), d.N);
        if (status == LT_OK)
            status = lt_attn_init(&attn, &tc.model.attn);
        if (status != LT_OK)
            break;
        const char *kernel = attn.config.kernel;
        lt_model weights;
        memset(&weights, 0, sizeof weights);
        if (o.gen_only) {
            status = lt_model_alloc(&weights, &tc.model, LT_MODEL_WEIGHTS, 1, tc.seed);
            size_t bytes;
            if (status == LT_OK)
                status = lt_model_plan(&tc.model, LT_MODEL_WEIGHTS, 1, &bytes, &tr->params);
        } else {
            train_ctx c = {.o = &o, .d = &d, .variant = variants[v], .kernel = kernel,
                           .curves = &curves};
            status = train_variant(&o, &d, &run, &c, have_prev ? &prev : NULL, prev_path,
                                   step_seconds, &weights, tr);
            diverged |= status == LT_OK && strcmp(tr->status, "diverged") == 0;
        }
        if (status != LT_OK || strcmp(tr->status, "ok") != 0) {
            add_result(&results, &o, &d, variants[v], kernel, "none", 0, tr, NULL, NAN,
                       status == LT_OK ? tr->status : "failed", tr->note);
            lt_model_free(&weights);
            continue;
        }
        gen_kind kinds[3];
        /* generation stays on rank 0 */
        int kind_count = lt_dist_is_root() ? modes_for(&o, &caps[v], variants[v], kinds) : 0;
        int first_of_variant = gen_count;
        for (int k = 0; k < kind_count && status == LT_OK && !bench_interrupted(); k++) {
            int batches = kinds[k] == GEN_RECOMPUTE ? 1 : gen_batch_count;
            for (int b = 0; b < batches && status == LT_OK && !bench_interrupted(); b++) {
                int B = (int)(kinds[k] == GEN_RECOMPUTE ? o.recompute_batch : gen_batches[b]);
                char label[96];
                snprintf(label, sizeof label, "generate %s %s batch %d", variants[v],
                         gen_names[kinds[k]], B);
                gen_row *row = &gen_rows[gen_count++];
                *row = (gen_row){variants[v], kernel, kinds[k], B, {0, 0, 0}};
                status = measure_generation(&weights, &tc, kinds[k], B, o.gen_images,
                                            o.gen_seconds, (uint64_t)o.common.seed, d.N, samples,
                                            label, o.common.quiet, &row->r);
                if (status == LT_OK && gen_count - 1 == first_of_variant) {
                    char name[256], path[4600];
                    snprintf(name, sizeof name, "%s-%s-samples.png", o.dataset, variants[v]);
                    status = write_grid(bench_run_path(&run, name, path, sizeof path), samples,
                                        B, B < 8 ? B : 8, &d);
                }
            }
        }
        if (status == LT_OK && o.completions > 0 && !bench_interrupted() && kind_count > 0) {
            int count = (int)(o.completions < d.test.count ? o.completions : d.test.count);
            status = completions(&weights, &tc, &d, kinds[0], count, (uint64_t)o.common.seed,
                                 grid);
            char name[256], path[4600];
            snprintf(name, sizeof name, "%s-%s-completions.png", o.dataset, variants[v]);
            if (status == LT_OK)
                status = write_grid(bench_run_path(&run, name, path, sizeof path), grid,
                                    2 * count, count, &d);
        }
        lt_model_free(&weights);
    }
    /* Rows once every mode has run: the speed-ups need linear's rate. */
    for (int i = 0; i < gen_count && status == LT_OK; i++) {
        gen_row *g = &gen_rows[i];
        int v = 0;
        while (strcmp(variants[v], g->variant) != 0)
            v++;
        double rate = g->r.seconds > 0 ? (double)g->r.images / g->r.seconds : NAN;
        char note[512];
        snprintf(note, sizeof note, "%s%s%s", o.gen_only ? "untrained weights (--gen-only)" : "",
                 o.gen_only && data_note[0] ? "; " : "", data_note);
        add_result(&results, &o, &d, g->variant, g->kernel, gen_names[g->kind], g->batch,
                   &train_of[v], &g->r, linear_rate(gen_rows, gen_count, g->batch) / rate,
                   "ok", note);
    }
    const int test_count = d.test.count;
    lt_mem_free(step_seconds);
    lt_mem_free(samples);
    lt_mem_free(grid);
    lt_images_free(&d.train);
    lt_images_free(&d.test);
    if (status != LT_OK) {
        bench_table_detach(&curves);
        return bench_report(cli.program, status, field_flags);
    }
    printf("\n");
    bench_table_print(&results, result_print, sizeof result_print / sizeof *result_print, 3,
                      stdout);
    printf("(bits/dim on %d test images; images/s over whole images at the stated batch;\n"
           " linear x: linear recurrent images/s over the row's at the same batch; the paper "
           "reports\n 317x (MNIST) and 4462x (CIFAR-10) over recompute at its architecture)\n",
           test_count);
    status = bench_table_commit(&curves, curves_path);
    if (status == LT_OK)
        status = bench_table_commit(&results, csv_path);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);
    printf("\nwrote %s, %s and the sample grids in %s\n", csv_path, curves_path, o.out);
    if (have_prev)
        lt_csv_table_free(&prev);
    bench_table_free(&curves);
    bench_table_free(&results);
    if (bench_interrupted())
        return bench_interrupt_exit_code();
    return diverged ? 1 : 0;
}
