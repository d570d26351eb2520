/* ltbench decode: beyond the paper. Time per generated token and the
 * memory generation holds, against the context position, for each way a
 * causal transformer can generate: stepping linear attention's constant
 * state (each feature map, and the decayed variant), stepping softmax's
 * key/value cache, and softmax re-running the whole prefix for every token
 * (the paper's baseline). The model is the paper's MNIST shape by default,
 * with untrained weights: speed does not depend on them.
 *
 * Just under 600 lines as one program: the flag table and --help text take
 * about 85 of them, and the two ways of scheduling the measurement (stepped
 * modes by what fits --mem-budget, recompute by an estimate against
 * --recompute-seconds) belong to this experiment alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/signals.h"
#include "core/threads.h"
#include "core/timer.h"
#include "train/source.h"
#include "experiment/flags.h"
#include "experiment/program.h"
#include "model/generate.h"
#include "model/image_model.h"
#include "model/loss.h"
#include "results/table.h"
#include "decode/decode.h"

enum { MAX_MODES = 12, MAX_POSITIONS = 24, MAX_BATCHES = 8, MAX_WINDOW = 1000 };

/* --gen-modes fast: the linear and decay states and softmax's cache;
 * default adds recompute (softmax re-running the prefix per token), all
 * the gated recurrences too. */
#define FAST_MODES "linear-elu,linear-relu,linear-favor,linear-taylor,decay,cached"
#define DEFAULT_MODES FAST_MODES ",recompute"

typedef struct decode_options {
    const char *preset, *modes, *positions, *batches, *reach, *out;
    long layers, heads, head_dim, ffn, pos_dim, mixtures, random_features;
    long window, recompute_window;
    double recompute_seconds, eps;
    int overwrite;
    lt_common common;
} decode_options;

/* One --gen-modes item. */
typedef struct gen_spec {
    const char *item;
    lt_gen_mode kind;
    lt_attn_config attn;
    char refused[400]; /* why this model cannot generate this way ("": it can) */
} gen_spec;

typedef struct decode_run {
    decode_options *opt;
    gen_spec specs[MAX_MODES];
    int spec_count;
    long positions[MAX_POSITIONS], batches[MAX_BATCHES];
    int position_count, batch_count;
    int reach_by_stepping;
    lt_table table;
    double samples[MAX_WINDOW];
    lt_progress progress;
    long done;
} decode_run;

/* ---- options ---- */

static int decode_flags(decode_options *o, lt_flag *f)
{
    int n = 0;
    f[n++] = lt_flag_preset(&o->preset);
    f[n++] = lt_flag_gen_modes(&o->modes,
                               "modes: linear-MAP (linear attention's recurrent state with "
                               "feature map elu, relu, favor or taylor), decay or decay-MAP "
                               "(decayed linear attention), delta, gated-delta, gla (the gated "
                               "recurrences' D x M state, stepped with each position's gates), "
                               "cached (softmax's key/value cache), recompute (softmax re-running "
                               "the prefix); default: " DEFAULT_MODES "; all: those and delta, "
                               "gated-delta, gla");
    f[n++] = (lt_flag){"--positions", LT_FLAG_STRING, &o->positions, "LIST",
                       "context positions p at which a token's time is measured, increasing", 0,
                       0, NULL, 0};
    f[n++] = (lt_flag){"--batches", LT_FLAG_STRING, &o->batches, "LIST",
                       "batch sizes (sequences generated side by side)", 0, 0, NULL, 0};
    f[n++] = (lt_flag){"--window", LT_FLAG_INT, &o->window, "W",
                       "timed steps per position: the tokens at p .. p+W-1 (median, min, max "
                       "reported), after one untimed step at p-1; a step takes well under a "
                       "millisecond for a small model, and the median of a few moves by tens of "
                       "percent from run to run",
                       1, MAX_WINDOW, NULL, 0};
    f[n++] = (lt_flag){"--recompute-window", LT_FLAG_INT, &o->recompute_window, "W",
                       "timed steps per position for recompute", 1, MAX_WINDOW, NULL, 0};
    f[n++] = (lt_flag){"--recompute-seconds", LT_FLAG_DOUBLE, &o->recompute_seconds, "S",
                       "time budget of recompute per batch size: a position whose steps are "
                       "estimated (from the previous position, growing as p^k, k in [1, 2] as "
                       "last seen) to overrun what is left is skipped, with every larger one",
                       0, 1e7, NULL, 0};
    f[n++] = (lt_flag){"--reach", LT_FLAG_CHOICE, &o->reach, NULL,
                       "how a stepped mode gets to p: skip (the positions before p counted "
                       "without computing them: lt_generator_skip) or step (every position "
                       "generated: O(p^2) for the cache)",
                       0, 0, "skip|step", 0};
    f[n++] = lt_flag_layers(&o->layers);
    f[n++] = lt_flag_heads(&o->heads);
    f[n++] = lt_flag_head_dim(&o->head_dim);
    f[n++] = lt_flag_ffn(&o->ffn);
    f[n++] = lt_flag_pos_dim(&o->pos_dim);
    f[n++] = lt_flag_mixtures(&o->mixtures);
    f[n++] = lt_flag_random_features(&o->random_features);
    f[n++] = lt_flag_eps(&o->eps);
    f[n++] = lt_flag_out(&o->out, "decode.csv (decode.csv.partial holds the rows while running)");
    f[n++] = lt_flag_overwrite(&o->overwrite);
    lt_common_flags(&f[n], &o->common);
    return n + LT_COMMON_FLAGS;
}

/* quick: the suite's and the tests' seconds; decoding is not in the
 * paper, so paper is medium, the defaults (the paper's MNIST model). */
static const lt_preset_value preset_values[] = {
    {"--layers", {"2", "8", "8", "8"}},
    {"--heads", {"2", "8", "8", "8"}},
    {"--head-dim", {"16", "32", "32", "32"}},
    {"--ffn", {"64", "1024", "1024", "1024"}},
    {"--positions", {"1,16,256", "1,16,256,1024,4096,16384", "1,16,256,1024,4096,16384",
                     "1,16,256,1024,4096,16384"}},
    {"--batches", {"1,4", "1,16", "1,16", "1,16"}},
    {"--window", {"2", "64", "64", "64"}},
    {"--recompute-seconds", {"5", "60", "60", "60"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: a small model, contexts up to 256", "as medium",
     "the defaults: the paper's MNIST model, contexts up to 16384",
     "as medium (the paper has no such sweep)"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

static const char details[] =
    "The model reads bytes behind a start token (a 257-token vocabulary, a concatenated\n"
    "position encoding) and predicts each with a discretized mixture of logistics: the\n"
    "image experiment's model, the paper's MNIST shape by default, untrained (speed does\n"
    "not depend on the weights). Each generated token is one step of the generator\n"
    "(lt_generator_step) and the sampling of the next byte from its logits.\n"
    "Per-token time at context p: one untimed step at position p-1, then the steps of\n"
    "positions p .. p+W-1 each timed (the first attends to p earlier positions); the\n"
    "median, min and max of those W steps. tokens/s = batch / median. A stepped mode\n"
    "runs one session per batch size for every position (W untimed steps first, then a\n"
    "reset); recompute a session per position.\n"
    "Reaching p: recompute re-runs the whole prefix at every step, so its prefix is\n"
    "filled with a byte and the steps do the real work; the stepped modes (recurrent,\n"
    "cached) skip to p by default (lt_generator_skip: the cache counts the skipped\n"
    "positions as zero rows, a constant state is left as it is), since no step's cost\n"
    "depends on the values in its state, while stepping a cache to p costs O(p^2);\n"
    "--reach step generates every position instead.\n"
    "Bytes at context p: state_bytes is what the mode keeps between tokens for p\n"
    "positions: every layer's attention state ((S, z), or a gated variant's D x M) or\n"
    "key/value cache (lt_attn_state_bytes), or recompute's prefix; forward_bytes is\n"
    "recompute's inference forward over p positions (0 otherwise); held_bytes, drawn\n"
    "against p, is their sum. planned_bytes is all a timed run allocates (besides\n"
    "those, the step's scratch and, at small batches, its packed copy of the weights,\n"
    "the same at any context; the weights themselves are read in place), checked against\n"
    "--mem-budget first (skipped-budget otherwise); peak_bytes is the tracked peak.\n"
    "Recompute costs O(p) per token (O(p^2) attention): it is measured at a position\n"
    "only while its estimated time fits in what is left of --recompute-seconds for that\n"
    "batch size; the others are recorded as skipped-time. taylor needs D <= 64.\n"
    "Ctrl-C stops after the current position and writes the rows so far (exit 130).";

static lt_status parse_mode(gen_spec *g, const char *item, const decode_options *o)
{
    const char *variant = NULL, *map = "elu";
    g->item = item;
    if (strcmp(item, "cached") == 0 || strcmp(item, "recompute") == 0) {
        variant = "softmax";
        g->kind = item[0] == 'c' ? LT_GEN_CACHED : LT_GEN_RECOMPUTE;
    } else if (strncmp(item, "linear-", 7) == 0) {
        variant = "linear";
        map = item + 7;
    } else if (strcmp(item, "decay") == 0 || strncmp(item, "decay-", 6) == 0) {
        variant = "decay";
        map = item[5] == '-' ? item + 6 : "elu";
    } else if (strcmp(item, "delta") == 0 || strcmp(item, "gated-delta") == 0 ||
               strcmp(item, "gla") == 0) {
        variant = item; /* gated: no feature map, a D x M state stepped with its gates */
    }
    lt_feature_map fm;
    if (variant == NULL || lt_attn_parse_feature_map(&fm, map, "--gen-modes") != LT_OK ||
        fm == LT_FEATURE_IDENTITY)
        return lt_fail(LT_E_USAGE, "--gen-modes: expected default, all, fast, or modes from "
                                   "linear-MAP, decay, decay-MAP, delta, gated-delta, gla, cached, "
                                   "recompute (MAP: elu, relu, favor, taylor), got '%s'",
                       item);
    lt_attn_caps caps;
    LT_TRY(lt_attn_variant_caps(variant, &caps));
    if (strcmp(item, "recompute") != 0) /* the variant's stepped mode */
        g->kind = lt_gen_stepped_mode(&caps);
    g->attn = lt_attn_default_config(variant);
    g->attn.causal = 1;
    g->attn.feature_map = fm;
    g->attn.eps = (float)o->eps;
    g->attn.random_features = (int)o->random_features;
    return LT_OK;
}

static lt_status check_options(decode_run *d, decode_options *o)
{
    d->opt = o;
    static char text[512];
    const char *items[MAX_MODES];
    /* the sets: default, all (the gated recurrences too), fast (no recompute) */
    const char *modes = strcmp(o->modes, "default") == 0 ? DEFAULT_MODES
                        : strcmp(o->modes, "all") == 0   ? DEFAULT_MODES ",delta,gated-delta,gla"
                        : strcmp(o->modes, "fast") == 0  ? FAST_MODES
                                                         : o->modes;
    snprintf(text, sizeof text, "%s", modes);
    LT_TRY(lt_cli_split_unique(text, items, MAX_MODES, &d->spec_count, "--gen-modes"));
    for (int i = 0; i < d->spec_count; i++)
        LT_TRY(parse_mode(&d->specs[i], items[i], o));
    LT_TRY(lt_cli_split_increasing(o->positions, d->positions, MAX_POSITIONS, &d->position_count,
                                   1, 1 << 24, "--positions"));
    LT_TRY(lt_cli_split_increasing(o->batches, d->batches, MAX_BATCHES, &d->batch_count, 1, 4096,
                                   "--batches"));
    d->reach_by_stepping = strcmp(o->reach, "step") == 0;
    return LT_OK;
}

static const lt_field_flag field_flags[] = {
    {"layers", "--layers"}, {"heads", "--heads"}, {"head_dim", "--head-dim"},
    {"ffn", "--ffn"}, {"pos_dim", "--pos-dim"}, {"eps", "--eps"},
    {"random_features", "--random-features"}, {NULL, NULL}};

static lt_model_config model_config(const decode_run *d, const gen_spec *g)
{
    const decode_options *o = d->opt;
    lt_model_config mc = lt_model_default_config(g->attn.variant);
    mc.attn = g->attn;
    mc.layers = (int)o->layers;
    mc.heads = (int)o->heads;
    mc.head_dim = (int)o->head_dim;
    mc.ffn = (int)o->ffn;
    lt_loss loss;
    lt_image_model_config(&mc, &loss, (int)o->pos_dim, (int)o->mixtures);
    mc.max_batch = 1;
    mc.seq_len = 1;
    return mc;
}

/* ---- rows ---- */

/* What a row says beyond its keys. */
typedef struct measured {
    const char *status;
    lt_summary token;
    lt_gen_session_bytes at_p; /* the plan for p positions */
    size_t planned, peak;
    char note[300];
} measured;

static lt_status add_row(decode_run *d, const gen_spec *g, const lt_model_config *mc, int B,
                         long p, const measured *m)
{
    const decode_options *o = d->opt;
    lt_table *t = &d->table;
    lt_attn attn;
    LT_TRY(lt_attn_init(&attn, &mc->attn));
    char kernel[64];
    if (g->kind == LT_GEN_RECOMPUTE)
        snprintf(kernel, sizeof kernel, "%s", attn.config.kernel);
    else
        snprintf(kernel, sizeof kernel, "%s-step", g->attn.variant);
    int planned_at_p = m->at_p.total > 0;
    lt_row_begin(t);
    lt_set_str(t, "experiment", "decode");
    lt_set_str(t, "gen_mode", lt_gen_mode_name(g->kind));
    lt_set_str(t, "variant", g->attn.variant);
    lt_attn_caps caps;
    int mapped = lt_attn_variant_caps(g->attn.variant, &caps) == LT_OK && !caps.gates;
    lt_set_str(t, "feature_map", g->kind == LT_GEN_RECURRENT && mapped
                                     ? lt_attn_feature_map_name(g->attn.feature_map)
                                     : "none");
    lt_set_str(t, "kernel", kernel);
    lt_set_int(t, "batch", B);
    lt_set_int(t, "context", p);
    lt_set_int(t, "layers", o->layers);
    lt_set_int(t, "heads", o->heads);
    lt_set_int(t, "head_dim", o->head_dim);
    lt_set_int(t, "ffn", o->ffn);
    lt_set_int(t, "vocab", LT_IMAGE_VOCAB);
    lt_set_int(t, "mixtures", o->mixtures);
    lt_set_int(t, "threads", lt_threads_get());
    lt_set_int(t, "seed", o->common.seed);
    lt_set_int(t, "window", g->kind == LT_GEN_RECOMPUTE ? o->recompute_window : o->window);
    lt_set_str(t, "reach", g->kind == LT_GEN_RECOMPUTE ? "prefix" : o->reach);
    lt_set_str(t, "status", m->status);
    lt_set_num(t, "token_median_s", m->token.median);
    lt_set_num(t, "token_min_s", m->token.min);
    lt_set_num(t, "token_max_s", m->token.max);
    lt_set_num(t, "tokens_per_s", B / m->token.median);
    /* a stepped mode's state is its attention's; the step's scratch and
     * packed weights, the same at any context, are in planned_bytes */
    double state = g->kind == LT_GEN_RECOMPUTE ? (double)m->at_p.state
                                                : (double)m->at_p.attention;
    lt_set_num(t, "state_bytes", planned_at_p ? state : NAN);
    lt_set_num(t, "forward_bytes", planned_at_p ? (double)m->at_p.forward : NAN);
    lt_set_num(t, "held_bytes", planned_at_p ? state + (double)m->at_p.forward : NAN);
    lt_set_int(t, "planned_bytes", (long long)m->planned);
    lt_set_int(t, "peak_bytes", (long long)m->peak);
    lt_set_str(t, "note", m->note);
    LT_TRY(lt_row_end(t));
    LT_TRY(lt_table_sync(t)); /* on disk as measured */
    char line[160];
    snprintf(line, sizeof line, "%s batch %d context %ld: %s", g->item, B, p, m->status);
    lt_progress_update(&d->progress, ++d->done, line);
    return LT_OK;
}

/* ---- measuring ---- */

/* One step: the generator, then the next tokens sampled from its logits. */
static lt_status step(lt_gen_session *s)
{
    const float *logits;
    int position = s->g.steps;
    LT_TRY(lt_generator_step(&s->g, s->column, &logits));
    s->sampler.sample(s->sampler.ctx, s->column, logits, s->g.batch, 0, position);
    return LT_OK;
}

/* Moves the session to position p - 1 (skipping, or stepping where asked),
 * steps once untimed, then times `window` steps (out->count = 0 when Ctrl-C
 * came on the way). */
static lt_status time_window(decode_run *d, lt_gen_session *s, const gen_spec *g, long p,
                             int window, lt_summary *out)
{
    long to = p - 1;
    *out = lt_summarize(d->samples, 0); /* not timed: interrupted on the way */
    /* the previous position's window ran past this one: start afresh */
    if (s->g.steps > to)
        LT_TRY(lt_generator_reset(&s->g));
    if (d->reach_by_stepping && g->kind != LT_GEN_RECOMPUTE)
        while (s->g.steps < to && !lt_interrupted())
            LT_TRY(step(s));
    if (lt_interrupted())
        return LT_OK;
    if (s->g.steps < to)
        LT_TRY(lt_generator_skip(&s->g, (int)(to - s->g.steps), 0));
    LT_TRY(step(s));
    for (int i = 0; i < window; i++) {
        double start = lt_time_now();
        LT_TRY(step(s));
        d->samples[i] = lt_time_now() - start;
    }
    *out = lt_summarize(d->samples, window);
    return LT_OK;
}

/* Plan for p positions; status "refused" with the reason when the mode
 * cannot generate with this model. */
static int plan_at(const lt_model *weights, lt_gen_mode mode, int B, long steps,
                   lt_gen_session_bytes *bytes, measured *m)
{
    if (lt_gen_session_plan(weights, mode, B, (int)steps, 0, bytes) == LT_OK)
        return 1;
    m->status = "refused";
    snprintf(m->note, sizeof m->note, "%s", lt_last_error());
    return 0;
}

static void skipped_budget(measured *m, size_t planned)
{
    char need[32], have[32];
    m->status = "skipped-budget";
    m->planned = planned;
    snprintf(m->note, sizeof m->note, "needs %s beyond what is held, budget %s",
             lt_mem_format(need, sizeof need, planned),
             lt_mem_format(have, sizeof have, lt_mem_budget()));
}

/* A row for a position not measured: its bytes, and why. */
static lt_status not_measured(decode_run *d, const gen_spec *g, const lt_model *weights,
                              const lt_model_config *mc, int B, long p, int window,
                              const char *status, const char *note)
{
    measured m = {.status = status, .token = {NAN, NAN, NAN, 0}};
    lt_gen_session_bytes run;
    if (plan_at(weights, g->kind, B, p + window, &run, &m))
        m.planned = run.total;
    plan_at(weights, g->kind, B, p, &m.at_p, &m);
    if (strcmp(status, "skipped-budget") == 0)
        skipped_budget(&m, m.planned);
    else
        snprintf(m.note, sizeof m.note, "%s", note);
    return add_row(d, g, mc, B, p, &m);
}

/* Times positions first .. last - 1 in one session planned for the last of
 * them (plus the window); the stepped modes run every position in one. */
static lt_status run_session(decode_run *d, const gen_spec *g, const lt_model *weights,
                             const lt_model_config *mc, int B, int first, int last, int window,
                             double *seconds, double *median)
{
    measured m = {.status = "ok"};
    lt_gen_session_bytes run, at_p[MAX_POSITIONS];
    LT_TRY(lt_gen_session_plan(weights, g->kind, B,
                               (int)(d->positions[last - 1] + window), 0, &run));
    /* before the measured region: planning takes a little memory of its own */
    for (int i = first; i < last; i++)
        LT_TRY(lt_gen_session_plan(weights, g->kind, B, (int)d->positions[i],
                                   0, &at_p[i]));
    m.planned = run.total;
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    double start = lt_time_now();
    lt_gen_session s;
    lt_status status = lt_gen_session_init(&s, weights, (uint64_t)d->opt->common.seed, g->kind, B,
                                           (int)(d->positions[last - 1] + window), 0, 0);
    /* a stepped session warms up over a window of steps, then starts afresh */
    for (int round = g->kind == LT_GEN_RECOMPUTE; round < 2 && status == LT_OK; round++) {
        for (int b = 0; b < B; b++)
            s.column[b] = LT_IMAGE_START_TOKEN;
        for (int k = 0; k < window && status == LT_OK && round == 0; k++)
            status = step(&s);
        if (status == LT_OK && round == 0)
            status = lt_generator_reset(&s.g);
    }
    for (int i = first; i < last && status == LT_OK && !lt_interrupted(); i++) {
        long p = d->positions[i];
        status = time_window(d, &s, g, p, window, &m.token);
        m.peak = lt_mem_peak() - base;
        m.at_p = at_p[i];
        if (status == LT_OK && m.token.count > 0) /* a whole window: a row, Ctrl-C or not */
            status = add_row(d, g, mc, B, p, &m);
        *median = m.token.median;
    }
    lt_gen_session_free(&s);
    *seconds = lt_time_now() - start;
    return status;
}

/* A stepped mode (recurrent, cached) at batch B: one session for every
 * position whose run fits the budget. */
static lt_status run_stepped(decode_run *d, const gen_spec *g, const lt_model *weights,
                             const lt_model_config *mc, int B)
{
    const int window = (int)d->opt->window;
    measured m = {.status = "ok"};
    lt_gen_session_bytes run;
    int fit = 0;
    while (fit < d->position_count &&
           plan_at(weights, g->kind, B, d->positions[fit] + window, &run, &m) &&
           lt_mem_plan(run.total, "generation") == LT_OK)
        fit++;
    if (strcmp(m.status, "refused") == 0) /* the mode cannot run this model */
        return not_measured(d, g, weights, mc, B, d->positions[0], window, m.status, m.note);
    double seconds, median;
    lt_status status =
        fit > 0 ? run_session(d, g, weights, mc, B, 0, fit, window, &seconds, &median) : LT_OK;
    for (int i = fit; i < d->position_count && status == LT_OK && !lt_interrupted(); i++)
        status = not_measured(d, g, weights, mc, B, d->positions[i], window, "skipped-budget",
                              NULL);
    return status;
}

/* Recompute at batch B: a session per position (its forward is planned for
 * that length), within the time budget. */
static lt_status run_recompute(decode_run *d, const gen_spec *g, const lt_model *weights,
                               const lt_model_config *mc, int B)
{
    const decode_options *o = d->opt;
    const int window = (int)o->recompute_window;
    double spent = 0, last_step = NAN, exponent = 2; /* no growth seen yet: quadratic */
    long last_p = 0;
    const char *stop = NULL; /* why the positions from here on are not measured */
    char why[200];
    lt_status status = LT_OK;
    for (int i = 0; i < d->position_count && status == LT_OK && !lt_interrupted(); i++) {
        long p = d->positions[i];
        measured m = {.status = "ok"};
        lt_gen_session_bytes run;
        if (!plan_at(weights, g->kind, B, p + window, &run, &m))
            return not_measured(d, g, weights, mc, B, p, window, m.status, m.note);
        /* A step's time grows as (p + window)^k, k between 1 (the layers around the
         * attention) and 2 (the attention): k as seen between the last two positions. */
        double grow = (double)(p + window) / (double)(last_p + window);
        double estimate = last_step * pow(grow, exponent) * (window + 1);
        if (stop == NULL && lt_mem_plan(run.total, "generation") != LT_OK)
            stop = "skipped-budget";
        if (stop == NULL && estimate > o->recompute_seconds - spent) {
            stop = "skipped-time";
            snprintf(why, sizeof why, "estimated %.3g s for its %d steps, %.3g s left of "
                                      "--recompute-seconds %g",
                     estimate, window + 1, o->recompute_seconds - spent, o->recompute_seconds);
        } else if (stop != NULL) {
            snprintf(why, sizeof why, "as the positions before it");
        }
        if (stop != NULL) {
            status = not_measured(d, g, weights, mc, B, p, window, stop, why);
            continue;
        }
        double seconds, median = NAN;
        status = run_session(d, g, weights, mc, B, i, i + 1, window, &seconds, &median);
        if (last_p > 0) {
            double seen = log(median / last_step) / log(grow);
            exponent = seen < 1 ? 1 : seen > 2 ? 2 : seen;
        }
        spent += seconds;
        last_p = p;
        last_step = median;
    }
    return status;
}

static lt_status run_mode(decode_run *d, const gen_spec *g)
{
    lt_model_config mc = model_config(d, g);
    if (g->refused[0]) {
        for (int b = 0; b < d->batch_count; b++) {
            measured m = {.status = "refused", .token = {NAN, NAN, NAN, 0}};
            snprintf(m.note, sizeof m.note, "%s", g->refused);
            LT_TRY(add_row(d, g, &mc, (int)d->batches[b], d->positions[0], &m));
        }
        return LT_OK;
    }
    lt_model weights;
    LT_TRY(lt_model_alloc(&weights, &mc, LT_MODEL_WEIGHTS, lt_threads_get(),
                          (uint64_t)d->opt->common.seed));
    lt_status status = LT_OK;
    for (int b = 0; b < d->batch_count && status == LT_OK && !lt_interrupted(); b++) {
        int B = (int)d->batches[b];
        status = g->kind == LT_GEN_RECOMPUTE
                     ? run_recompute(d, g, &weights, &mc, B)
                     : run_stepped(d, g, &weights, &mc, B);
    }
    lt_model_free(&weights);
    return status;
}

/* Every mode's model checked before any work: a flag no mode can take
 * fails the run; a mode this model shape does not allow (taylor beyond its
 * D) gets rows that say so. */
static lt_status check_models(decode_run *d)
{
    gen_spec plain = {.item = "cached", .kind = LT_GEN_CACHED};
    plain.attn = lt_attn_default_config("softmax");
    plain.attn.causal = 1;
    lt_model_config mc = model_config(d, &plain);
    LT_TRY(lt_model_check_config(&mc));
    for (int i = 0; i < d->spec_count; i++) {
        gen_spec *g = &d->specs[i];
        lt_attn attn;
        LT_TRY(lt_attn_init(&attn, &g->attn));
        mc = model_config(d, g);
        if (lt_model_check_config(&mc) != LT_OK)
            snprintf(g->refused, sizeof g->refused, "%s", lt_last_error());
    }
    return LT_OK;
}

static lt_status decode_all(decode_run *d)
{
    const decode_options *o = d->opt;
    printf("ltbench decode: %ld layers, %ld heads x %ld, FFN %ld, %ld mixtures, vocabulary %d; "
           "untrained weights; batches %s; positions %s; %d threads, seed %ld\n",
           o->layers, o->heads, o->head_dim, o->ffn, o->mixtures, LT_IMAGE_VOCAB, o->batches,
           o->positions, lt_threads_get(), o->common.seed);
    fflush(stdout);
    lt_progress_start(&d->progress, stderr, "decode",
                      (long)d->spec_count * d->batch_count * d->position_count, "positions",
                      o->common.quiet);
    lt_signals_install();
    lt_status status = LT_OK;
    for (int i = 0; i < d->spec_count && status == LT_OK && !lt_interrupted(); i++)
        status = run_mode(d, &d->specs[i]);
    lt_progress_finish(&d->progress, lt_interrupted() ? "interrupted" : NULL);
    return status;
}

int main(int argc, char **argv)
{
    static decode_options o = {
        .preset = "medium", .modes = "default",
        .positions = "1,16,256,1024,4096,16384", .batches = "1,16", .reach = "skip",
        .layers = 8, .heads = 8, .head_dim = 32, .ffn = 1024, .mixtures = 10,
        .random_features = 64, .window = 8, .recompute_window = 2, .recompute_seconds = 60,
        .eps = 1e-6, .out = "results/decode"};
    lt_common_defaults(&o.common);
    static lt_flag flags[32];
    lt_cli cli = {"ltbench decode",
                  "Beyond the paper: time per generated token and the memory generation holds, "
                  "against the context, per generation mode.",
                  lt_presets_details(&presets, details), flags, decode_flags(&o, flags), NULL};
    int exit_now;
    int code = lt_program_parse(&cli, &presets, &o.preset, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    static decode_run d;
    lt_table_init(&d.table, &bench_decode);
    lt_outdir dir;
    lt_status status = check_options(&d, &o);
    if (status == LT_OK)
        status = check_models(&d);
    const char *names[] = {"decode.csv"};
    static char paths[1][4400];
    if (status == LT_OK)
        status = lt_program_open_csvs(&dir, o.out, names, 1, o.overwrite, paths);
    if (status == LT_OK)
        status = lt_table_journal(&d.table, paths[0], NULL);
    if (status == LT_OK)
        status = decode_all(&d);
    if (status == LT_OK) {
        printf("\n");
        lt_table_print(&d.table, stdout);
        printf("(ms/token: median over the window of steps from the context position, one step "
               "of the whole batch;\n held MiB: state, cache or recompute's forward at that "
               "context)\n");
    }
    lt_table *tables[] = {&d.table};
    const char *written[] = {paths[0]};
    return lt_program_end_tables(cli.program, status, tables, written, 1, field_flags);
}
