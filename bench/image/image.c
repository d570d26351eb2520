/* ltbench image: autoregressive pixel generation on MNIST and CIFAR-10 (the
 * paper's sec. 4.2, Tables 1 and 2). Each image is a byte sequence (CIFAR:
 * r, g, b interleaved) read by a causal transformer through a 256-value
 * embedding with a concatenated sinusoidal position encoding; a discretized
 * mixture of logistics predicts each byte. Reports test bits/dim, then
 * generates whole images in every mode that applies: stepping a constant
 * recurrent state (linear attention as an RNN), stepping a key/value cache
 * (the paper's "stateful softmax"), and recomputing the prefix per byte
 * (the paper's baseline). What is its own here: the data, generation and
 * the sample grids; the driver does the rest. Longer than the other
 * programs because generation is this experiment's own measurement: three
 * modes x batch sizes, each with its roofline row, prompted completions and
 * sample grids, none of which another experiment shares. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "core/cli.h"
#include "core/machine.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/signals.h"
#include "core/threads.h"
#include "experiment/experiment.h"
#include "experiment/flags.h"
#include "io/png.h"
#include "model/generate.h"
#include "model/image_model.h"
#include "image/image.h"

enum { MAX_GEN_BATCHES = 4, STATS = 2 };

/* Streams of the generation draws, far from training's. */
#define GEN_STREAM_BASE (1ull << 44)

static const lt_preset_value preset_values[] = {
    {"--layers", {"1", "2", "2", NULL}}, /* paper: 8 (MNIST) or 16 (CIFAR), set per dataset */
    {"--heads", {"2", "4", "4", "8"}},
    {"--head-dim", {"8", "16", "32", "32"}},
    {"--ffn", {"32", "256", "512", "1024"}},
    {"--batch", {"4", "8", "8", "16"}},
    {"--steps", {"20", NULL, NULL, NULL}}, /* small, medium and paper: per dataset */
    {"--lr", {"1e-3", "1e-3", "1e-3", "1e-4"}},
    {"--lr-drops", {"none", "none", NULL, "none"}}, /* medium: per dataset */
    {"--train-images", {"64", "10000", "0", "0"}},
    {"--test-images", {"16", "500", "500", "0"}},
    {"--gen-images", {"2", "16", "16", "16"}},
    {"--gen-batches", {"2", "16", "16", "1,16"}},
    {"--gen-seconds", {"30", "120", "300", "600"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: a tiny model on a tiny subset; used by the tests",
     "a few minutes per variant on a 2-core machine: 2 layers of width 64 trained on the "
     "first 10000 training images (MNIST: 1000 updates; CIFAR: 300), tested on the first 500",
     "the paper's head width (32): 2 layers of 4 heads, FFN 512, on every training image "
     "(MNIST: 14000 updates, the learning rate x0.1 from 12000; CIFAR: 2000, x0.1 from "
     "1500), tested on the first 500: hours in all",
     "the paper's architecture: MNIST 8 layers, CIFAR 16 layers, 8 heads of 32, FFN 1024, "
     "RAdam 1e-4, the whole data (MNIST: 250 epochs; CIFAR: 100 epochs): days on a CPU"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

/* What --gen-modes names: a set, or the modes listed (lt_gen_mode_name's). */
typedef enum gen_set { GEN_DEFAULT, GEN_ALL, GEN_FAST, GEN_LISTED } gen_set;

typedef struct image_run {
    const char *dataset, *data, *gen_modes, *gen_batches_text;
    gen_set gen_set;
    int gen_listed[3];     /* by lt_gen_mode, when listed */
    char no_gen_mode[160]; /* the note of a variant left no mode */
    long pos_dim, mixtures, train_images, test_images, steps;
    long gen_images, recompute_batch, completions;
    double gen_seconds;
    int gen_only;
    long gen_batches[MAX_GEN_BATCHES + 1];
    int gen_batch_count;
    lt_image_set train, test;
    char data_name[64], data_note[256];
    lt_batch_source source;
    double *eval_scratch;
    /* the roofline, measured before the first generation: reading the
     * weights' size again and again, memory's triad, the SGEMM rate */
    double bandwidth_gbs, dram_gbs, sgemm_gflops;
    double histogram_bits; /* the context-free baseline of these train and test images */
} image_run;

static int image_flags(void *self, lt_flag *f)
{
    image_run *c = self;
    int n = 0;
    f[n++] = (lt_flag){"--dataset", LT_FLAG_CHOICE, &c->dataset, NULL, "data set", 0, 0,
                       "mnist|cifar10", 0};
    f[n++] = (lt_flag){"--data", LT_FLAG_STRING, &c->data, "DIR",
                       "folder of the data (default: data/mnist, or data/cifar10, else the "
                       "converted data/cifar10-catdog subset, named as such)",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--steps", LT_FLAG_INT, &c->steps, "S",
                       "updates (a resumed run continues up to S)", 1, 1 << 30, NULL, 0};
    f[n++] = lt_flag_pos_dim(&c->pos_dim);
    f[n++] = lt_flag_mixtures(&c->mixtures);
    f[n++] = (lt_flag){"--train-images", LT_FLAG_INT, &c->train_images, "N",
                       "train on the first N training images; 0 = all", 0, 1 << 30, NULL, 0};
    f[n++] = (lt_flag){"--test-images", LT_FLAG_INT, &c->test_images, "N",
                       "test bits/dim on the first N test images; 0 = all", 0, 1 << 30, NULL, 0};
    f[n++] = (lt_flag){"--gen-images", LT_FLAG_INT, &c->gen_images, "N",
                       "images to generate per mode and batch size (whole batches; fewer when "
                       "a mode runs out of --gen-seconds, but always at least one batch)",
                       1, 1 << 20, NULL, 0};
    f[n++] = (lt_flag){"--gen-batches", LT_FLAG_STRING, &c->gen_batches_text, "LIST",
                       "batch sizes for recurrent and cached generation, e.g. 1,16; "
                       "--recompute-batch joins the list when it is not in it, so that every "
                       "mode has rows at one batch size for the speed-ups",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--recompute-batch", LT_FLAG_INT, &c->recompute_batch, "B",
                       "batch size for recompute generation (the slow baseline)", 1, 1 << 16,
                       NULL, 0};
    f[n++] = (lt_flag){"--gen-seconds", LT_FLAG_DOUBLE, &c->gen_seconds, "S",
                       "time budget per mode and batch size (a started batch always finishes)",
                       0, 1e7, NULL, 0};
    f[n++] = lt_flag_gen_modes(&c->gen_modes,
                               "modes: recurrent (a state of constant size stepped), cached "
                               "(softmax's key/value cache stepped), recompute (the prefix "
                               "re-run per byte: O(N^2) forwards), each where a variant has "
                               "it; default: each variant's stepped mode, and recompute for "
                               "those with a cache; all: recompute for every variant too");
    f[n++] = (lt_flag){"--gen-only", LT_FLAG_BOOL, &c->gen_only, NULL,
                       "skip training: measure generation speed with untrained weights (speed "
                       "does not depend on them; the CSV says so)",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--completions", LT_FLAG_INT, &c->completions, "N",
                       "test images completed from their upper half in the completion grid; "
                       "0 = none",
                       0, 64, NULL, 0};
    return n;
}

static void image_defaults(void *self, lt_exp_run *run)
{
    image_run *c = self;
    c->dataset = "mnist";
    c->gen_modes = "default";
    c->mixtures = 10;
    c->recompute_batch = 1;
    c->completions = 8;
    /* the small preset's per-dataset values, for --help */
    run->o.layers = 2;
    c->steps = 1000;
    run->o.clip = 0;
    snprintf(run->curves_file, sizeof run->curves_file, "DATASET-curves.csv");
    snprintf(run->results_file, sizeof run->results_file, "DATASET.csv");
}

static lt_status parse_gen_batches(image_run *c)
{
    static char text[128];
    snprintf(text, sizeof text, "%s", c->gen_batches_text);
    const char *items[MAX_GEN_BATCHES];
    LT_TRY(lt_cli_split_unique(text, items, MAX_GEN_BATCHES, &c->gen_batch_count,
                              "--gen-batches"));
    int listed = 0;
    for (int i = 0; i < c->gen_batch_count; i++) {
        char *end;
        c->gen_batches[i] = strtol(items[i], &end, 10);
        if (*end != '\0' || c->gen_batches[i] < 1 || c->gen_batches[i] > 4096)
            return lt_fail(LT_E_USAGE, "--gen-batches: expected sizes 1 to 4096, got '%s'",
                           items[i]);
        listed |= c->gen_batches[i] == c->recompute_batch;
    }
    /* Linear's speed-up over recompute is taken at the same batch. */
    if (!listed)
        c->gen_batches[c->gen_batch_count++] = c->recompute_batch;
    return LT_OK;
}

/* --gen-modes: a set's name, or modes by their lt_gen_mode_name, each once. */
static lt_status parse_gen_modes(image_run *c)
{
    static const char *const sets[] = {"default", "all", "fast"};
    snprintf(c->no_gen_mode, sizeof c->no_gen_mode,
             "no generation mode: --gen-modes %s leaves out every mode it has", c->gen_modes);
    for (int i = 0; i < 3; i++)
        if (strcmp(c->gen_modes, sets[i]) == 0) {
            c->gen_set = (gen_set)i;
            if (c->gen_set == GEN_FAST) /* fast steps wherever a variant can */
                snprintf(c->no_gen_mode, sizeof c->no_gen_mode,
                         "no generation mode: --gen-modes fast leaves out recompute, its only "
                         "one");
            return LT_OK;
        }
    static char text[128];
    snprintf(text, sizeof text, "%s", c->gen_modes);
    const char *items[3];
    int count;
    LT_TRY(lt_cli_split_unique(text, items, 3, &count, "--gen-modes"));
    c->gen_set = GEN_LISTED;
    memset(c->gen_listed, 0, sizeof c->gen_listed);
    for (int i = 0; i < count; i++) {
        int k = 0;
        while (k < 3 && strcmp(items[i], lt_gen_mode_name((lt_gen_mode)k)) != 0)
            k++;
        if (k == 3)
            return lt_fail(LT_E_USAGE, "--gen-modes: expected default, all, fast, or modes from "
                                       "recurrent, cached, recompute, got '%s'",
                           items[i]);
        c->gen_listed[k] = 1;
    }
    return LT_OK;
}

static lt_status image_check(void *self, lt_exp_run *run, lt_cli *cli)
{
    image_run *c = self;
    lt_exp_options *o = &run->o;
    int mnist = strcmp(c->dataset, "mnist") == 0, paper = strcmp(o->preset, "paper") == 0;
    if (!lt_cli_flag(cli, "--layers")->seen && paper)
        o->layers = mnist ? 8 : 16;
    int medium = strcmp(o->preset, "medium") == 0;
    if (!lt_cli_flag(cli, "--steps")->seen && strcmp(o->preset, "quick") != 0)
        c->steps = paper    ? (mnist ? 250L * 60000 / o->batch : 100L * 50000 / o->batch)
                   : medium ? (mnist ? 14000 : 2000)
                            : (mnist ? 1000 : 300);
    /* At medium, constant-rate updates left bits/dim falling and noisy
     * (batch 8: MNIST after 4000, CIFAR after 1000, 0.99 bits/dim below the
     * histogram): more updates, and the last ones at a tenth of the rate */
    if (!lt_cli_flag(cli, "--lr-drops")->seen && medium)
        o->lr_drops = mnist ? "12000:0.1" : "1500:0.1";
    /* outputs carry the data's own name (cifar10-catdog, not cifar10) */
    char name[LT_IMAGES_NAME_MAX];
    LT_TRY(lt_images_data_name(name, c->dataset, c->data));
    snprintf(run->curves_file, sizeof run->curves_file, "%s-curves.csv", name);
    snprintf(run->results_file, sizeof run->results_file, "%s.csv", name);
    snprintf(run->checkpoint_prefix, sizeof run->checkpoint_prefix, "image-%s", name);
    run->train = !c->gen_only;
    LT_TRY(parse_gen_modes(c));
    return parse_gen_batches(c);
}

static lt_status image_setup(void *self, lt_exp_run *run)
{
    image_run *c = self;
    lt_image_set train, test;
    LT_TRY(lt_images_load(&train, &test, c->dataset, c->data, c->data_note,
                          sizeof c->data_note));
    long n_train = c->train_images > 0 && c->train_images < train.count ? c->train_images
                                                                          : train.count;
    long n_test = c->test_images > 0 && c->test_images < test.count ? c->test_images : test.count;
    lt_status status = lt_images_first(&c->train, &train, (int)n_train);
    if (status == LT_OK)
        status = lt_images_first(&c->test, &test, (int)n_test);
    lt_images_free(&train);
    lt_images_free(&test);
    LT_TRY(status);
    snprintf(c->data_name, sizeof c->data_name, "%s", c->train.name);
    c->histogram_bits = lt_images_histogram_bits(&c->train, &c->test);
    size_t scratch = lt_eval_scratch_doubles(c->test.count, lt_exp_shard_batch(run), STATS);
    LT_TRY(lt_mem_alloc((void **)&c->eval_scratch, scratch * sizeof(double), "evaluation sums"));
    if (!lt_dist_is_root())
        return LT_OK;
    const lt_exp_options *o = &run->o;
    char described[128];
    char training[96];
    snprintf(training, sizeof training, "%ld updates of %ld images, lr %g, lr drops %s",
             c->steps, o->batch, o->lr, o->lr_drops);
    lt_cli_print_wrapped(
        stdout, 100, 4,
        "ltbench image: %s (%s), N=%ld, preset %s, %ld layers, %ld heads x %ld, FFN %ld, "
        "%ld mixtures, %s, %d threads, seed %ld%s%s\n",
        c->data_name, lt_images_describe(described, sizeof described, &c->train),
        lt_images_seq_len(&c->train), o->preset, o->layers, o->heads, o->head_dim, o->ffn,
        c->mixtures, c->gen_only ? "generation only (untrained weights)" : training,
        lt_threads_get(), o->common.seed, c->data_note[0] ? "; " : "", c->data_note);
    fflush(stdout);
    return LT_OK;
}

static lt_status image_configure(void *self, lt_exp_run *run, lt_exp_model *m)
{
    (void)run;
    image_run *c = self;
    lt_image_model_config(&m->config.model, &m->config.loss, (int)c->pos_dim, (int)c->mixtures);
    return LT_OK;
}

static lt_status image_source(void *self, lt_exp_run *run, lt_batch_source **out)
{
    image_run *c = self;
    *out = &c->source;
    return lt_image_source_init(&c->source, &c->train, &c->test, (uint64_t)run->o.common.seed,
                                (int)run->o.batch, lt_dist_rank(), lt_dist_size());
}

static void image_release(void *self, lt_batch_source *source)
{
    (void)self;
    lt_source_free(source);
}

static long image_steps(void *self, lt_exp_run *run, const lt_batch_source *source)
{
    (void)run;
    (void)source;
    return ((image_run *)self)->steps;
}

/* ---- rows ---- */

static void row_begin(const image_run *c, lt_exp_run *run, lt_table *t, const lt_exp_model *m)
{
    lt_exp_row_begin(run, t, m);
    lt_set_str(t, "dataset", c->data_name);
}

static lt_status image_update_row(void *self, lt_exp_run *run, const lt_exp_model *m,
                                  const lt_trainer *t, const lt_batch_result *r,
                                  const lt_fit_state *state)
{
    lt_table *curves = &run->curves;
    row_begin(self, run, curves, m);
    lt_set_int(curves, "step", t->step);
    lt_set_num(curves, "elapsed_s", state->train_seconds);
    lt_set_num(curves, "loss", r->loss);
    lt_set_num(curves, "bits_per_dim", r->loss / log(2.0));
    lt_set_num(curves, "lr", r->lr);
    lt_set_num(curves, "grad_norm", r->grad_norm);
    return lt_row_end(curves);
}

static void image_note(void *self, const lt_trainer *t, const lt_batch_result *r, char *buf,
                       size_t size)
{
    (void)self;
    (void)t;
    snprintf(buf, size, "%.4f bits/dim", r->loss / log(2.0));
}

/* What training gave a model's rows. */
typedef struct trained {
    int done; /* trained and evaluated (0 for --gen-only's untrained weights) */
    long steps;
    double seconds, step_median, bits_per_dim;
    size_t peak_bytes, params;
} trained;

typedef struct gen_result {
    long images;
    double seconds;
    size_t peak_bytes;
    lt_gen_bound bound;      /* at this run's measured bandwidth and SGEMM rate */
    lt_gen_bound dram_bound; /* the same with the weights from memory (the triad) */
} gen_result;

static void add_row(image_run *c, lt_exp_run *run, const lt_exp_model *m, const char *mode,
                    int batch, const trained *tr, const gen_result *g,
                    const char *status, const char *note)
{
    lt_table *t = &run->results;
    row_begin(c, run, t, m);
    lt_set_str(t, "gen_mode", mode);
    lt_set_int(t, "gen_batch", batch);
    lt_set_str(t, "status", status);
    lt_set_str(t, "data", c->data_name);
    lt_set_int(t, "train_images", c->train.count);
    lt_set_int(t, "test_images", c->test.count);
    lt_set_int(t, "trained", tr->done);
    lt_set_int(t, "steps", tr->steps);
    lt_set_num(t, "train_s", tr->seconds);
    lt_set_num(t, "step_median_s", tr->step_median);
    lt_set_int(t, "peak_train_bytes", (long long)tr->peak_bytes);
    lt_set_num(t, "test_bits_per_dim", tr->bits_per_dim);
    lt_set_num(t, "histogram_bits_per_dim", c->histogram_bits);
    lt_set_int(t, "images_generated", g ? g->images : 0);
    lt_set_num(t, "gen_s", g ? g->seconds : NAN);
    lt_set_num(t, "images_per_s", g && g->seconds > 0 ? (double)g->images / g->seconds : NAN);
    lt_set_num(t, "seconds_per_image", g && g->images > 0 ? g->seconds / (double)g->images : NAN);
    lt_set_num(t, "linear_speedup", NAN); /* set once every variant has run */
    lt_set_int(t, "peak_gen_bytes", g ? (long long)g->peak_bytes : 0);
    lt_set_num(t, "bandwidth_gb_per_s", g ? c->bandwidth_gbs : NAN);
    lt_set_num(t, "sgemm_gflop_per_s", g ? c->sgemm_gflops : NAN);
    lt_set_num(t, "bytes_per_image", g ? g->bound.bytes : NAN);
    lt_set_num(t, "flops_per_image", g ? g->bound.flops : NAN);
    lt_set_num(t, "bound_images_per_s", g ? 1.0 / g->bound.seconds : NAN);
    lt_set_num(t, "memory_bound_share", g ? g->bound.memory_share : NAN);
    const double seconds_per_image = g && g->images > 0 ? g->seconds / (double)g->images : NAN;
    lt_set_num(t, "fraction_of_bound", g ? g->bound.seconds / seconds_per_image : NAN);
    lt_set_num(t, "dram_bandwidth_gb_per_s", g ? c->dram_gbs : NAN);
    lt_set_num(t, "dram_bound_images_per_s", g ? 1.0 / g->dram_bound.seconds : NAN);
    lt_set_num(t, "fraction_of_dram_bound", g ? g->dram_bound.seconds / seconds_per_image : NAN);
    lt_set_num(t, "peak_gen_bytes_per_image", g && batch > 0 ? (double)g->peak_bytes / batch
                                                             : NAN);
    lt_set_int(t, "params", (long long)tr->params);
    lt_set_str(t, "note", note);
    lt_row_end(t);
}

/* ---- generation ---- */

/* Times whole-image generation in one mode at batch B; `samples` (B x N)
 * receives the first batch. */
static lt_status measure(const image_run *c, const lt_model *weights, const lt_train_config *tc,
                         lt_gen_mode mode, int B, uint8_t *samples, const char *label, int quiet,
                         gen_result *out)
{
    const int N = (int)lt_images_seq_len(&c->train);
    memset(out, 0, sizeof *out);
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_gen_session s;
    lt_status status = lt_gen_session_init(&s, weights, tc->seed, mode, B, N, GEN_STREAM_BASE, 1);
    lt_progress progress;
    lt_progress_start(&progress, stderr, label, c->gen_images, "images", quiet);
    if (status == LT_OK)
        status = lt_generate_timed(&s.g, s.out, samples, c->gen_images, c->gen_seconds,
                                   LT_IMAGE_START_TOKEN, &s.sampler, s.column, &progress,
                                   &out->images, &out->seconds);
    lt_progress_finish(&progress, NULL);
    out->peak_bytes = lt_mem_peak() - base;
    if (status == LT_OK)
        status = lt_generator_bound(&s.g, c->bandwidth_gbs, c->sgemm_gflops, &out->bound);
    if (status == LT_OK)
        status = lt_generator_bound(&s.g, c->dram_gbs, c->sgemm_gflops, &out->dram_bound);
    lt_gen_session_free(&s);
    return status;
}

/* The machine's roofline for generation, measured once per run before the
 * first generation (every model of a run has the same weights' size): the
 * speed of reading an array of the size of the weights a step streams, again
 * and again, as generation reads them (so what the caches keep between
 * passes counts for both), memory's own (a triad over 64 MiB arrays, beyond
 * the caches: the bound if the weights came from memory every step), and
 * the SGEMM rate (1024^3), on the run's threads. */
static void measure_roof(image_run *c, const lt_model *weights)
{
    if (c->bandwidth_gbs > 0)
        return;
    c->bandwidth_gbs = lt_machine_read_bandwidth_gbs(
        (size_t)lt_generator_streamed_bytes(weights), lt_threads_get());
    c->dram_gbs = lt_machine_bandwidth_gbs((size_t)64 << 20, lt_threads_get());
    c->sgemm_gflops = lt_machine_sgemm_gflops(1024, lt_threads_get());
}

/* The completion grid: test images whose lower half is generated from the
 * upper half, beside the originals. */
static lt_status completions(const image_run *c, const lt_model *weights,
                             const lt_train_config *tc, lt_gen_mode mode, int count,
                             uint8_t *out /* (2 * count, N) */)
{
    const int N = (int)lt_images_seq_len(&c->train);
    lt_gen_session s;
    lt_status status = lt_gen_session_init(&s, weights, tc->seed, mode, count, N, GEN_STREAM_BASE,
                                           0);
    if (status == LT_OK)
        status = lt_generate_bytes(&s.g, out + (size_t)count * N, c->test.pixels, N / 2,
                                   LT_IMAGE_START_TOKEN, 1 << 20, &s.sampler, s.column);
    memcpy(out, c->test.pixels, (size_t)count * N);
    lt_gen_session_free(&s);
    return status;
}

static lt_status write_grid(const image_run *c, const lt_exp_run *run, const char *what,
                            const char *variant, const uint8_t *images, int count, int cols)
{
    char name[256], path[4600];
    snprintf(name, sizeof name, "%s-%s-%s.png", c->data_name, variant, what);
    lt_outdir_path(&run->dir, name, path, sizeof path);
    const lt_image_set *d = &c->train;
    LT_ASSERT(d->width == d->height); /* the grids' tiles are square */
    int gw, gh;
    LT_TRY(lt_png_grid_size(&gw, &gh, count, d->width, d->height, cols, GRID_PAD));
    uint8_t *grid, *scaled = NULL;
    LT_TRY(lt_mem_alloc((void **)&grid, (size_t)gw * gh * d->channels, "image grid"));
    lt_status status = lt_png_grid(grid, images, count, d->width, d->height, d->channels, cols,
                                   GRID_PAD, GRID_BACKGROUND);
    if (status == LT_OK)
        status = bench_image_enlarge_grid(&scaled, grid, gw, gh, d->channels, d->width, cols,
                              strcmp(what, "completions") == 0);
    if (status == LT_OK)
        status = lt_png_write(path, scaled, gw * GRID_SCALE, gh * GRID_SCALE, d->channels);
    lt_mem_free(scaled);
    lt_mem_free(grid);
    return status;
}

/* Whether --gen-modes takes mode `kind` of a variant whose state is of
 * constant size (`constant`) or a growing cache. */
static int gen_wanted(const image_run *c, lt_gen_mode kind, int constant)
{
    if (c->gen_set == GEN_LISTED)
        return c->gen_listed[kind];
    if (kind != LT_GEN_RECOMPUTE) /* every set steps where a variant can */
        return 1;
    return c->gen_set == GEN_ALL || (c->gen_set == GEN_DEFAULT && !constant);
}

/* The generation modes of a variant, in the paper's order: its stepped
 * mode (a constant state steps "recurrent", a growing cache "cached"),
 * then recompute where the default takes it (softmax: the paper's
 * baseline) or --gen-modes all asks for it. */
static int modes_for(const image_run *c, const lt_exp_model *m, lt_gen_mode *out)
{
    lt_attn_caps caps;
    int n = 0;
    if (lt_attn_variant_caps(m->spec.config.variant, &caps) != LT_OK)
        return 0;
    if (caps.recurrent && gen_wanted(c, lt_gen_stepped_mode(&caps), caps.constant_state))
        out[n++] = lt_gen_stepped_mode(&caps);
    if (gen_wanted(c, LT_GEN_RECOMPUTE, caps.constant_state))
        out[n++] = LT_GEN_RECOMPUTE;
    return n;
}

static lt_status generate_all(image_run *c, lt_exp_run *run, const lt_exp_model *m,
                              const lt_model *weights, const trained *tr)
{
    lt_gen_mode modes[3];
    int mode_count = modes_for(c, m, modes);
    measure_roof(c, weights);
    long max_batch = c->recompute_batch;
    for (int i = 0; i < c->gen_batch_count; i++)
        max_batch = c->gen_batches[i] > max_batch ? c->gen_batches[i] : max_batch;
    const size_t tile = (size_t)lt_images_seq_len(&c->train);
    uint8_t *samples = NULL, *grid = NULL;
    lt_status status = lt_mem_alloc((void **)&samples, (size_t)max_batch * tile, "samples");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&grid, 2 * (size_t)(c->completions + 1) * tile, "grid");
    char note[512];
    snprintf(note, sizeof note, "%s%s%s", c->gen_only ? "untrained weights (--gen-only)" : "",
             c->gen_only && c->data_note[0] ? "; " : "", c->data_note);
    if (mode_count == 0) /* its bits/dim, with no way of generating asked for */
        add_row(c, run, m, "none", 0, tr, NULL, "ok", c->no_gen_mode);
    int first = 1;
    for (int k = 0; k < mode_count && status == LT_OK && !lt_interrupted(); k++) {
        int batches = modes[k] == LT_GEN_RECOMPUTE ? 1 : c->gen_batch_count;
        for (int b = 0; b < batches && status == LT_OK && !lt_interrupted(); b++) {
            int B = (int)(modes[k] == LT_GEN_RECOMPUTE ? c->recompute_batch : c->gen_batches[b]);
            char label[96];
            snprintf(label, sizeof label, "generate %s %s batch %d", m->name,
                     lt_gen_mode_name(modes[k]), B);
            gen_result g;
            status = measure(c, weights, &m->config, modes[k], B, samples, label, run->quiet,
                             &g);
            if (status == LT_OK)
                add_row(c, run, m, lt_gen_mode_name(modes[k]), B, tr, &g, "ok", note);
            if (status == LT_OK && first)
                status = write_grid(c, run, "samples", m->name, samples, B, B < 8 ? B : 8);
            first = 0;
        }
    }
    if (status == LT_OK && c->completions > 0 && !lt_interrupted() && mode_count > 0) {
        int count = (int)(c->completions < c->test.count ? c->completions : c->test.count);
        status = completions(c, weights, &m->config, modes[0], count, grid);
        if (status == LT_OK)
            status = write_grid(c, run, "completions", m->name, grid, 2 * count, count);
    }
    lt_mem_free(samples);
    lt_mem_free(grid);
    return status;
}

/* Per test chunk: nats and counted bytes. */
static lt_status eval_chunk(void *ctx, const lt_trainer *t, const lt_batch *batch,
                            const lt_batch_result *r, double *stats)
{
    (void)ctx;
    (void)t;
    (void)batch;
    stats[0] = r->sum;
    stats[1] = (double)r->counted;
    return LT_OK;
}

static lt_status image_finish(void *self, lt_exp_run *run, lt_exp_model *m, lt_trainer *t,
                              lt_exp_outcome *out)
{
    image_run *c = self;
    trained tr = {.bits_per_dim = NAN, .step_median = NAN, .seconds = NAN};
    if (strcmp(out->status, "not-applicable") == 0) {
        add_row(c, run, m, "none", 0, &tr, NULL, out->status, out->note);
        return LT_OK;
    }
    lt_model weights;
    memset(&weights, 0, sizeof weights);
    lt_status status = LT_OK;
    if (t == NULL) { /* --gen-only: untrained weights */
        size_t bytes;
        status = lt_model_plan(&m->config.model, LT_MODEL_WEIGHTS, 1, &bytes, &tr.params);
    } else {
        tr.params = out->params;
        tr.steps = t->step;
        tr.seconds = out->state->wall_seconds;
        tr.step_median = out->step_time.median;
        if (strcmp(out->status, "diverged") != 0) {
            double totals[STATS];
            lt_progress progress;
            lt_progress_start(&progress, stderr, "test bits/dim", c->test.count, "images",
                              run->quiet);
            status = lt_evaluate(t, out->source, LT_SPLIT_TEST, eval_chunk, NULL, STATS,
                                 totals, c->eval_scratch, &progress);
            lt_progress_finish(&progress, NULL);
            tr.bits_per_dim = totals[1] > 0 ? totals[0] / totals[1] / log(2.0) : NAN;
        }
        lt_fit_note_peak(out->state, lt_mem_peak() - out->state->peak_base);
        tr.peak_bytes = out->state->peak_bytes;
    }
    tr.done = t != NULL && status == LT_OK; /* --gen-only: untrained weights */
    if (status != LT_OK || strcmp(out->status, "ok") != 0) {
        add_row(c, run, m, "none", 0, &tr, NULL,
                status == LT_OK ? out->status : "failed", out->note);
        return status;
    }
    /* generation runs on rank 0 alone, reading the trained weights in place */
    if (!lt_dist_is_root())
        return LT_OK;
    if (t != NULL)
        return generate_all(c, run, m, &t->model, &tr);
    status = lt_model_alloc(&weights, &m->config.model, LT_MODEL_WEIGHTS, 1, m->config.seed);
    if (status == LT_OK)
        status = generate_all(c, run, m, &weights, &tr);
    lt_model_free(&weights);
    return status;
}

/* linear x: linear's recurrent images/s at each row's batch over the row's. */
static void image_complete(void *self, lt_exp_run *run)
{
    (void)self;
    lt_table *t = &run->results;
    for (long r = 0; r < t->rows; r++) {
        double linear = NAN;
        for (long q = 0; q < t->rows; q++)
            if (strcmp(lt_cell(t, q, "variant"), "linear") == 0 &&
                strcmp(lt_cell(t, q, "gen_mode"), "recurrent") == 0 &&
                strcmp(lt_cell(t, q, "gen_batch"), lt_cell(t, r, "gen_batch")) == 0 &&
                lt_cell_num(t, q, "gen_s") > 0)
                linear = lt_cell_num(t, q, "images_per_s");
        double rate = lt_cell_num(t, r, "images_per_s");
        if (strcmp(lt_cell(t, r, "status"), "ok") == 0)
            lt_table_update_num(t, r, "linear_speedup", linear / rate);
    }
}

static void image_footnote(void *self, lt_exp_run *run)
{
    (void)run;
    image_run *c = self;
    printf("(bits/dim on %d test images; images/s over whole images at the stated batch;\n"
           " linear x: linear recurrent images/s over the row's at the same batch; the paper "
           "reports\n 317x (MNIST) and 4462x (CIFAR-10) over recompute at its architecture)\n",
           c->test.count);
}

static void image_teardown(void *self, lt_exp_run *run)
{
    (void)run;
    image_run *c = self;
    lt_mem_free(c->eval_scratch);
    lt_images_free(&c->train);
    lt_images_free(&c->test);
}

static const char details[] =
    "Images are byte sequences (MNIST N = 784; CIFAR r,g,b interleaved, N = 3072) read\n"
    "behind a start token by a causal pre-norm transformer: 256 byte values (+ start)\n"
    "embedded, a sinusoidal position encoding concatenated (--pos-dim columns, as the\n"
    "paper does), and a discretized mixture of --mixtures logistics per byte\n"
    "(PixelCNN++ style). bits/dim = mean negative log-likelihood in nats / ln 2 over\n"
    "the test images; histogram = the bits/dim of a per-channel histogram of the\n"
    "training pixels (add-one smoothed), the context-free baseline a model must beat.\n"
    "Generation: a variant whose recurrent state has a constant size (linear\n"
    "attention's (S, z)) steps it (recurrent); softmax either keeps a key/value cache\n"
    "(cached, the paper's stateful softmax) or re-runs the whole prefix per byte\n"
    "(recompute, the paper's baseline). images/s counts whole images at the stated\n"
    "batch; linear x is linear recurrent's images/s over that row's at the same batch.\n"
    "Sampling is seeded and deterministic. Writes OUT/DATASET.csv,\n"
    "OUT/DATASET-curves.csv, OUT/DATASET-VARIANT-samples.png and\n"
    "OUT/DATASET-VARIANT-completions.png.";

int main(int argc, char **argv)
{
    static image_run c;
    const lt_experiment image = {
        .name = "image",
        .summary = "Autoregressive image generation on MNIST and CIFAR-10 (the paper's sec. "
                   "4.2,\nTables 1 and 2): bits/dim and images/s per attention variant and "
                   "generation mode.",
        .details = details,
        .presets = &presets,
        .default_preset = "small",
        .variants_note = "delta, gated-delta and gla: recurrences with learned per-position "
                         "gates; those that cannot be causal (linformer) are reported as not "
                         "applicable",
        .default_models = "softmax,linear,lsh-1,lsh-4",
        .sequence = "images",
        .causal = 1,
        .curves = &bench_image_curves,
        .results = &bench_image_results,
        .key_column = "variant",
        .flags = image_flags,
        .defaults = image_defaults,
        .check = image_check,
        .setup = image_setup,
        .configure = image_configure,
        .source = image_source,
        .release_source = image_release,
        .steps = image_steps,
        .update_row = image_update_row,
        .note = image_note,
        .finish = image_finish,
        .complete = image_complete,
        .footnote = image_footnote,
        .teardown = image_teardown,
    };
    return lt_experiment_main(&image, &c, argc, argv);
}
