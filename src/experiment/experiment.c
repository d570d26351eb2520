/* The driver under every training experiment (see experiment.h): flags,
 * models, one model's training, then the run, in the order experiment.h
 * lists; what --resume keeps and continues is in resume.c. */
#include "experiment/experiment.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/attn.h"
#include "core/dist.h"
#include "core/mem.h"
#include "core/provenance.h"
#include "core/signals.h"
#include "core/threads.h"
#include "core/timer.h"
#include "experiment/flags.h"
#include "experiment/resume.h"
#include "io/csv.h"

const lt_field_flag lt_exp_fields[] = {
    {"layers", "--layers"},       {"heads", "--heads"},
    {"head_dim", "--head-dim"},   {"ffn", "--ffn"},
    {"dropout", "--dropout"},     {"max_batch", "--batch"},
    {"batch", "--batch"},         {"eps", "--eps"},
    {"feature_map", "--feature-map"}, {"proj_k", "--proj-k"},
    {"attn.proj_k", "--proj-k"},  {"kernel", "--kernel"},
    {"lr", "--lr"},               {"clip_norm", "--clip"},
    {"weight_decay", "--weight-decay"}, {"shards", "--shards"},
    {"stack", "--stack"},         {"hidden", "--hidden"},
    {"pos_dim", "--pos-dim"},     {"loss.mixtures", "--mixtures"},
    {"random_features", "--random-features"}, {"decay_gamma", "--decay-gamma"},
    {"rounds", "--lsh-rounds"},   {"buckets", "--lsh-buckets"}, {"chunk", "--lsh-chunk"},
    {"hours", "--hours"},
    {NULL, NULL}};

int lt_exp_shards(const lt_exp_run *run)
{
    return run->o.shards > 0 ? (int)run->o.shards : lt_dist_size();
}

int lt_exp_shard_batch(const lt_exp_run *run) { return (int)run->o.batch / lt_exp_shards(run); }

/* A flag's value as text: bytes as a count, as a cell holds them. */
static void flag_text(const lt_flag *f, char *buf, size_t size)
{
    switch (f->type) {
    case LT_FLAG_INT: snprintf(buf, size, "%ld", *(const long *)f->target); return;
    case LT_FLAG_DOUBLE: snprintf(buf, size, "%g", *(const double *)f->target); return;
    case LT_FLAG_BOOL: snprintf(buf, size, "%d", *(const int *)f->target); return;
    case LT_FLAG_BYTES: snprintf(buf, size, "%zu", *(const size_t *)f->target); return;
    case LT_FLAG_STRING:
    case LT_FLAG_CHOICE: {
        const char *s = *(const char *const *)f->target;
        snprintf(buf, size, "%s", s != NULL ? s : "");
        return;
    }
    }
}

/* A flag's value as a cell: numbers as the CSV writes them. */
static void set_from_flag(lt_table *t, const char *column, const lt_flag *f)
{
    switch (f->type) {
    case LT_FLAG_INT: lt_set_int(t, column, *(const long *)f->target); return;
    case LT_FLAG_DOUBLE: lt_set_num(t, column, *(const double *)f->target); return;
    case LT_FLAG_BOOL: lt_set_int(t, column, *(const int *)f->target); return;
    case LT_FLAG_BYTES:
    case LT_FLAG_STRING:
    case LT_FLAG_CHOICE: {
        char buf[256];
        flag_text(f, buf, sizeof buf);
        lt_set_str(t, column, buf);
        return;
    }
    }
}

void lt_exp_row_begin(lt_exp_run *run, lt_table *t, const lt_exp_model *m)
{
    lt_row_begin(t);
    for (int c = 0; c < t->schema->ncols; c++) {
        const lt_column *col = &t->schema->columns[c];
        const char *from = col->from;
        if (from == NULL)
            continue;
        if (strcmp(from, "$experiment") == 0)
            lt_set_str(t, col->name, t->schema->experiment);
        else if (strcmp(from, "$model") == 0)
            lt_set_str(t, col->name, m->name);
        else if (strcmp(from, "$kernel") == 0)
            lt_set_str(t, col->name, m->kernel);
        else if (strcmp(from, "$threads") == 0)
            lt_set_int(t, col->name, lt_threads_get());
        else if (strcmp(from, "$dropout") == 0) /* transformers only: a Bi-LSTM has none */
            lt_set_num(t, col->name, m->attention ? run->o.dropout : 0.0);
        else {
            const lt_flag *f = lt_cli_flag(&run->cli, from);
            LT_ASSERT(f != NULL); /* the schema names a flag of this program */
            set_from_flag(t, col->name, f);
        }
    }
}

const lt_exp_model *lt_exp_find_model(const lt_exp_run *run, const char *name)
{
    for (int i = 0; i < run->model_count; i++)
        if (strcmp(run->models[i].name, name) == 0)
            return &run->models[i];
    return NULL;
}

/* ---- flags ---- */

enum { STANDARD_FLAGS = 29 };

static void standard_flags(lt_flag *f, lt_exp_run *run)
{
    const lt_experiment *e = run->exp;
    lt_exp_options *o = &run->o;
    static char batch_help[128], out_contents[320];
    snprintf(batch_help, sizeof batch_help, "%s per update", e->sequence);
    snprintf(out_contents, sizeof out_contents, "%s, %s and checkpoints/", run->curves_file,
             run->results_file);
    int n = 0;
    f[n++] = lt_flag_preset(&o->preset);
    f[n++] = lt_flag_variants(&o->models, e->variants_note);
    f[n++] = lt_flag_kernel(&o->kernel);
    f[n++] = (lt_flag){"--batch", LT_FLAG_INT, &o->batch, "B", batch_help, 1, 1 << 20, NULL, 0};
    f[n++] = lt_flag_layers(&o->layers);
    f[n++] = lt_flag_heads(&o->heads);
    f[n++] = lt_flag_head_dim(&o->head_dim);
    f[n++] = lt_flag_ffn(&o->ffn);
    f[n++] = (lt_flag){"--dropout", LT_FLAG_DOUBLE, &o->dropout, "P",
                       "dropout after each branch", 0, 0.99, NULL, 0};
    f[n++] = (lt_flag){"--activation", LT_FLAG_CHOICE, &o->activation, NULL,
                       "feed-forward activation", 0, 0, "gelu|relu", 0};
    f[n++] = lt_flag_feature_map(&o->feature_map);
    f[n++] = lt_flag_random_features(&o->random_features);
    f[n++] = (lt_flag){"--decay-gamma", LT_FLAG_DOUBLE, &o->decay_gamma, "G",
                       "decay's factor per position for every head; 0 = RetNet's 1 - 2^(-5-h) "
                       "for head h",
                       0, 1, NULL, 0};
    f[n++] = lt_flag_eps(&o->eps);
    f[n++] = lt_flag_lsh_rounds(&o->lsh_rounds);
    f[n++] = lt_flag_lsh_buckets(&o->lsh_buckets);
    f[n++] = lt_flag_lsh_chunk(&o->lsh_chunk);
    f[n++] = lt_flag_proj_k(&o->proj_k);
    f[n++] = (lt_flag){"--optimizer", LT_FLAG_CHOICE, &o->optimizer, NULL,
                       "optimizer (the paper uses RAdam)", 0, 0, "radam|adam", 0};
    f[n++] = (lt_flag){"--lr", LT_FLAG_DOUBLE, &o->lr, "LR", "learning rate", 1e-9, 10, NULL, 0};
    f[n++] = (lt_flag){"--lr-drops", LT_FLAG_STRING, &o->lr_drops, "LIST",
                       "step decay as UPDATE:FACTOR,... (the paper's copy task: 3000:0.1), or "
                       "none",
                       0, 0, NULL, 0};
    f[n++] = (lt_flag){"--weight-decay", LT_FLAG_DOUBLE, &o->weight_decay, "WD",
                       "decoupled weight decay (AdamW style); 0 = off", 0, 1, NULL, 0};
    f[n++] = (lt_flag){"--clip", LT_FLAG_DOUBLE, &o->clip, "NORM",
                       "global gradient-norm clipping; 0 = off", 0, 1e9, NULL, 0};
    f[n++] = (lt_flag){"--shards", LT_FLAG_INT, &o->shards, "S",
                       "split each update's batch into S shards summed in a fixed tree (a power "
                       "of two; 0 = one per MPI rank): the numbers depend on S, not on the rank "
                       "count",
                       0, 1024, NULL, 0};
    f[n++] = (lt_flag){"--checkpoint-every", LT_FLAG_INT, &o->checkpoint_every, "K",
                       "checkpoint (and flush the curves) every K updates and at the end; 0 = "
                       "every tenth of the run (or every evaluation where the run evaluates as "
                       "it trains)",
                       0, 1 << 30, NULL, 0};
    f[n++] = lt_flag_out(&o->out, out_contents);
    f[n++] = lt_flag_resume(&o->resume);
    f[n++] = lt_flag_overwrite(&o->overwrite);
    f[n++] = lt_flag_mixed_revisions(&o->mixed_revisions);
    LT_ASSERT(n == STANDARD_FLAGS);
}

static void default_options(lt_exp_options *o, const lt_experiment *e)
{
    memset(o, 0, sizeof *o);
    o->preset = e->default_preset;
    o->models = e->default_models;
    o->kernel = "default";
    o->optimizer = "radam";
    o->activation = "gelu";
    o->feature_map = "elu";
    o->lr_drops = "none";
    o->eps = 1e-6;
    o->proj_k = 256;
    lt_attn_config lsh = lt_attn_default_config("lsh"); /* fast-transformers' defaults */
    o->lsh_rounds = lsh.rounds;
    o->lsh_buckets = lsh.buckets;
    o->lsh_chunk = lsh.chunk;
    o->random_features = lsh.random_features;
    o->decay_gamma = lsh.decay_gamma;
    o->clip = 1.0;
    /* what --help shows; the run's preset names the folder (default_out) */
    static char out[128];
    snprintf(out, sizeof out, "results/%s-PRESET", e->name);
    o->out = out;
    lt_common_defaults(&o->common);
}

/* ---- models ---- */

/* Whether `name` is one of the experiment's own models (a comma list). */
static int own_model(const lt_experiment *e, const char *name)
{
    size_t len = strlen(name);
    for (const char *at = e->own_models; at != NULL && *at; at += strcspn(at, ",") + (at[strcspn(at, ",")] == ','))
        if (strcspn(at, ",") == len && strncmp(at, name, len) == 0)
            return 1;
    return 0;
}

/* The run's attention settings every listed variant starts from. */
static lt_status attention_base(const lt_exp_run *run, lt_attn_config *base)
{
    const lt_exp_options *o = &run->o;
    *base = lt_attn_default_config(NULL);
    base->causal = run->exp->causal;
    base->eps = (float)o->eps;
    base->rounds = (int)o->lsh_rounds;
    base->buckets = (int)o->lsh_buckets;
    base->chunk = (int)o->lsh_chunk;
    base->random_features = (int)o->random_features;
    base->decay_gamma = (float)o->decay_gamma;
    return lt_attn_parse_feature_map(&base->feature_map, o->feature_map, "--feature-map");
}

/* Every listed model: its config, kernel and whether it can serve. */
static lt_status list_models(lt_exp_run *run)
{
    const lt_experiment *e = run->exp;
    static char text[512];
    snprintf(text, sizeof text, "%s", run->o.models);
    const char *items[LT_EXP_MAX_MODELS], *variants[LT_EXP_MAX_MODELS];
    int count = 0, nvariants = 0;
    lt_attn_config base;
    LT_TRY(attention_base(run, &base));
    LT_TRY(lt_cli_split_unique(text, items, LT_EXP_MAX_MODELS, &count, "--variants"));
    run->model_count = count;
    for (int i = 0; i < count; i++) {
        lt_exp_model *m = &run->models[i];
        memset(m, 0, sizeof *m);
        m->attention = !own_model(e, items[i]);
        m->applicable = 1;
        m->kernel = "none";
        if (m->attention) {
            lt_status status = lt_program_variant(items[i], &base, &m->spec, "--variants");
            if (status != LT_OK && e->own_models != NULL)
                return lt_fail(LT_E_USAGE, "--variants: expected items from %s|%s (lsh-R: R "
                                           "hashing rounds), got '%s'",
                               lt_attn_variant_names(), e->own_models, items[i]);
            LT_TRY(status);
            variants[nvariants++] = m->spec.config.variant;
        } else {
            snprintf(m->spec.label, sizeof m->spec.label, "%s", items[i]);
        }
        m->name = m->spec.label;
        for (int j = 0; j < i; j++)
            if (strcmp(run->models[j].name, m->name) == 0)
                return lt_fail(LT_E_USAGE, "--variants: '%s' and '%s' are both %s", items[j],
                               items[i], m->name);
        snprintf(m->checkpoint, sizeof m->checkpoint, "checkpoints/%s-%s.ckpt",
                 run->checkpoint_prefix, m->name);
    }
    for (int i = 0; i < count; i++) {
        lt_exp_model *m = &run->models[i];
        if (!m->attention)
            continue;
        lt_attn_caps caps;
        LT_TRY(lt_attn_variant_caps(m->spec.config.variant, &caps));
        if (e->causal ? !caps.causal : !caps.noncausal) {
            m->applicable = 0;
            snprintf(m->why_not, sizeof m->why_not, "%s attention cannot be %s: %s", m->name,
                     e->causal ? "causal" : "non-causal",
                     e->causal ? caps.no_causal_reason : caps.no_noncausal_reason);
            continue;
        }
        LT_TRY(lt_attn_choose_kernel(run->o.kernel, variants, nvariants, e->causal,
                                     m->spec.config.variant, &m->kernel));
    }
    return LT_OK;
}

/* The standard part of a model's config; the experiment sets the rest. */
static lt_status build_config(lt_exp_run *run, lt_exp_model *m, const lt_batch_source *source)
{
    const lt_exp_options *o = &run->o;
    if (o->mixed_revisions && !o->resume)
        return lt_fail(LT_E_USAGE, "--mixed-revisions only says what --resume may continue: "
                                   "give both, or neither");
    if (o->batch % lt_exp_shards(run) != 0)
        return lt_fail(LT_E_USAGE, "--batch %ld cannot be split into %d equal shards "
                                   "(--shards, or one per rank)",
                       o->batch, lt_exp_shards(run));
    lt_train_config *tc = &m->config;
    const char *kernel = m->attention ? m->kernel : NULL;
    memset(tc, 0, sizeof *tc);
    lt_model_config *mc = &tc->model;
    *mc = lt_model_default_config(m->attention ? m->spec.config.variant : NULL);
    mc->layers = (int)o->layers;
    mc->heads = (int)o->heads;
    mc->head_dim = (int)o->head_dim;
    mc->ffn = (int)o->ffn;
    mc->dropout = (float)o->dropout;
    mc->activation = strcmp(o->activation, "relu") == 0 ? LT_ACT_RELU : LT_ACT_GELU;
    mc->max_batch = lt_exp_shard_batch(run);
    mc->seq_len = source->seq_len;
    if (m->attention) {
        mc->attn = m->spec.config;
        mc->attn.kernel = kernel;
        mc->attn.n_max = source->seq_len;
        mc->attn.proj_k = (int)o->proj_k;
        /* the kernel that will run, named as every row and checkpoint names it */
        lt_attn attn;
        LT_TRY(lt_attn_init(&attn, &mc->attn));
        m->kernel = mc->attn.kernel = attn.config.kernel;
    }
    tc->shards = lt_exp_shards(run);
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

/* ---- one model ---- */

typedef struct model_ctx {
    lt_exp_run *run;
    void *self;
    lt_exp_model *m;
} model_ctx;

static lt_status on_update(void *ctx, const lt_trainer *t, const lt_batch_result *r,
                           const lt_fit_state *state)
{
    model_ctx *c = ctx;
    return c->run->exp->update_row(c->self, c->run, c->m, t, r, state);
}

static lt_status on_evaluate(void *ctx, lt_trainer *t, const lt_fit_state *state,
                             double *metric)
{
    model_ctx *c = ctx;
    return c->run->exp->evaluate(c->self, c->run, c->m, t, state, metric);
}

static lt_status on_sync(void *ctx)
{
    model_ctx *c = ctx;
    return lt_table_sync(&c->run->curves);
}

static void on_note(void *ctx, const lt_trainer *t, const lt_batch_result *r, char *buf,
                    size_t size)
{
    model_ctx *c = ctx;
    c->run->exp->note(c->self, t, r, buf, size);
}

/* The experiment's finish hook, whose rows reach the journal together once
 * it has run to the end (evaluation, generation, images): a run cut off
 * halfway leaves --resume no row to keep, so it redoes them all rather
 * than keeping some beside images of an older model. A model whose
 * training was cut short (`training_cut`: stopped before its last update)
 * keeps its row saying so; one stopped during its last update has a
 * checkpoint at the end, so its rows are dropped and --resume finishes it. */
static lt_status finish_whole(lt_exp_run *run, void *self, lt_exp_model *m, lt_trainer *t,
                              lt_exp_outcome *out, int training_cut)
{
    lt_table_hold(&run->results);
    lt_status status = run->exp->finish(self, run, m, t, out);
    if (status == LT_OK && (training_cut || !lt_interrupted())) {
        /* final rows: on disk before the next model starts, so a kill
         * then leaves --resume the row as measured, not one rebuilt */
        LT_TRY(lt_table_release(&run->results));
        LT_TRY(lt_table_sync(&run->curves));
        return lt_table_sync(&run->results);
    }
    lt_table_drop_held(&run->results);
    return status;
}

/* A model this run does not train: not applicable, or measured as it is. */
static lt_status finish_untrained(lt_exp_run *run, void *self, lt_exp_model *m,
                                  const lt_exp_previous *prev, lt_exp_outcome *out, int reached)
{
    LT_TRY(lt_exp_rewrite_journals(run, prev, reached));
    if (!m->applicable) {
        out->status = "not-applicable";
        snprintf(out->note, sizeof out->note, "%s", m->why_not);
    }
    return finish_whole(run, self, m, NULL, out, 0);
}

/* "copy linear 2/4": the model and where it stands among those trained. */
static void progress_label(const lt_exp_run *run, const lt_exp_model *m, char *buf, size_t size)
{
    int index = 0, count = 0;
    for (int i = 0; i < run->model_count; i++) {
        count += run->models[i].applicable;
        index += run->models[i].applicable && &run->models[i] <= m;
    }
    snprintf(buf, size, "%s %s %d/%d", run->exp->name, m->name, index, count);
}

/* Updates the models after `m` will train, for the overall ETA: as many as
 * this one's (every model of a run trains the same number). */
static long later_updates(const lt_exp_run *run, const lt_exp_model *m, long steps)
{
    long later = 0;
    for (const lt_exp_model *n = m + 1; n < run->models + run->model_count; n++)
        later += n->applicable ? steps : 0;
    return later;
}

/* Trains (or resumes) one model and writes its rows. */
static lt_status run_model(lt_exp_run *run, void *self, lt_exp_model *m,
                           const lt_exp_previous *prev, double *step_seconds,
                           double *step_scratch, int *diverged)
{
    const lt_experiment *e = run->exp;
    lt_exp_outcome out;
    memset(&out, 0, sizeof out);
    out.status = "ok";
    int reached = (int)(m - run->models) + 1;
    /* rows carried now wait for the rewrite: the journal on disk already
     * holds them, and a copy appended would be counted twice */
    if (run->o.resume) {
        lt_table_detach(&run->curves);
        lt_table_detach(&run->results);
    }
    if (!m->applicable || !run->train)
        return finish_untrained(run, self, m, prev, &out, reached);
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    lt_batch_source *source = NULL;
    lt_trainer t;
    memset(&t, 0, sizeof t);
    lt_fit_state state;
    lt_status status = e->source(self, run, &source);
    long steps = status == LT_OK ? e->steps(self, run, source) : 0;
    long eval_every = status == LT_OK && e->eval_every_epoch ? source->updates_per_epoch : 0;
    if (status == LT_OK) {
        lt_fit_state_init(&state, steps, step_seconds);
        lt_exp_this_build(state.trained_by, sizeof state.trained_by);
        state.track_peak = 1;
        state.peak_base = base;
        out.state = &state;
        out.source = source;
        status = lt_trainer_init(&t, &m->config, lt_threads_get());
    }
    out.params = t.model.param_count;
    int kept = 0;
    if (status == LT_OK)
        status = lt_exp_resume_or_keep(run, prev, m, &t, &state, eval_every, &kept);
    if (status == LT_OK) /* what is carried is on disk before any new work */
        status = lt_exp_rewrite_journals(run, prev, reached);
    char revisions[512]; /* its rows name every revision that trained it */
    if (status == LT_OK)
        lt_exp_name_revisions(run, state.trained_by, revisions, sizeof revisions);
    model_ctx ctx = {run, self, m};
    char label[128], path[4400];
    progress_label(run, m, label, sizeof label);
    lt_fit_spec spec = {
        .label = label, .steps = steps, .later = later_updates(run, m, steps),
        .checkpoint_every = run->o.checkpoint_every > 0 ? run->o.checkpoint_every
                            : eval_every > 0        ? eval_every
                                                    : (steps / 10 > 0 ? steps / 10 : 1),
        .checkpoint = lt_outdir_path(&run->dir, m->checkpoint, path, sizeof path),
        .eval_every = eval_every, .quiet = run->quiet, .source = source,
        .after_update = e->update_row ? on_update : NULL,
        .evaluate = e->evaluate ? on_evaluate : NULL, .sync = on_sync,
        .note = e->note ? on_note : NULL, .ctx = &ctx};
    out.fit.status = "ok";
    if (status == LT_OK && !kept)
        status = lt_fit(&t, &state, &spec, &out.fit);
    if (status == LT_OK && !kept) {
        out.status = out.fit.status;
        snprintf(out.note, sizeof out.note, "%s", out.fit.note);
        *diverged |= strcmp(out.status, "diverged") == 0;
        lt_trainer_plan(&m->config, lt_threads_get(), &out.planned_bytes);
        out.step_time = lt_fit_step_time(&state, step_scratch);
        /* the finish hook notes the peak where its own work ends */
        state.peak_base = base;
        int training_cut = strcmp(out.fit.status, "interrupted") == 0 && t.step < steps;
        status = finish_whole(run, self, m, &t, &out, training_cut);
    }
    run->curves.revision = run->results.revision = NULL;
    lt_trainer_free(&t);
    if (e->release_source != NULL && source != NULL)
        e->release_source(self, source);
    return status;
}

/* ---- the run ---- */

/* The standard options that do not depend on the data, checked before
 * anything is loaded or written. */
static lt_status check_options(const lt_exp_run *run)
{
    const lt_exp_options *o = &run->o;
    if (o->batch % lt_exp_shards(run) != 0)
        return lt_fail(LT_E_USAGE, "--batch %ld cannot be split into %d equal shards "
                                   "(--shards, or one per rank)",
                       o->batch, lt_exp_shards(run));
    lt_optim_kind kind;
    lt_schedule schedule;
    lt_feature_map map;
    LT_TRY(lt_optim_parse_kind(&kind, o->optimizer, "--optimizer"));
    LT_TRY(lt_schedule_init(&schedule, o->lr, 0));
    if (strcmp(o->lr_drops, "none") != 0)
        LT_TRY(lt_schedule_parse_drops(&schedule, o->lr_drops, "--lr-drops"));
    return lt_attn_parse_feature_map(&map, o->feature_map, "--feature-map");
}

/* A flag's value compared with an earlier run's cell: numbers by value
 * (the CSV writes them in its own form), text as text. */
static int flag_matches_cell(const lt_flag *f, const char *cell)
{
    char *end;
    double there = strtod(cell, &end);
    int number = *cell != '\0' && *end == '\0';
    switch (f->type) {
    case LT_FLAG_INT: return number && there == (double)*(const long *)f->target;
    case LT_FLAG_BOOL: return number && there == (double)*(const int *)f->target;
    case LT_FLAG_BYTES: return number && there == (double)*(const size_t *)f->target;
    case LT_FLAG_DOUBLE: {
        double here = *(const double *)f->target;
        return number && fabs(there - here) <= 1e-9 * fmax(fabs(here), 1e-300);
    }
    case LT_FLAG_STRING:
    case LT_FLAG_CHOICE: return strcmp(cell, *(const char *const *)f->target) == 0;
    }
    return 0;
}

/* An OUT that holds an earlier run with other settings cannot be resumed:
 * say which settings differ, and what can be done, before the generic
 * "an earlier run wrote it". Nothing to say (LT_OK) without such a run. */
static lt_status check_earlier_settings(lt_exp_run *run)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", run->o.out, run->results_file);
    lt_csv_table earlier;
    if (run->o.resume || run->o.overwrite || lt_csv_read(&earlier, path) != LT_OK)
        return LT_OK;
    char differ[512] = "";
    size_t n = 0;
    const lt_schema *schema = run->exp->results;
    for (int c = 0; c < schema->ncols && earlier.nrows > 0 && n < sizeof differ; c++) {
        const char *from = schema->columns[c].from;
        int column = lt_csv_table_column(&earlier, schema->columns[c].name);
        const lt_flag *f = from != NULL && from[0] == '-' ? lt_cli_flag(&run->cli, from) : NULL;
        if (f == NULL || column < 0)
            continue;
        const char *cell = lt_csv_table_cell(&earlier, 0, column);
        if (!flag_matches_cell(f, cell)) {
            char here[64];
            flag_text(f, here, sizeof here);
            n += (size_t)snprintf(differ + n, sizeof differ - n, "%s%s %s there, %s here",
                                  n > 0 ? "; " : "", from, cell, here);
        }
    }
    lt_csv_table_free(&earlier);
    if (n == 0)
        return LT_OK;
    return lt_fail(LT_E_USAGE, "--out %s holds an earlier run with other settings (%s), which "
                               "--resume cannot continue: give another --out, or --overwrite "
                               "to replace it",
                   run->o.out, differ);
}

static lt_status open_outputs(lt_exp_run *run)
{
    LT_TRY(lt_dist_agree(check_earlier_settings(run)));
    const char *files[] = {run->curves_file, run->results_file};
    const char *ckpts[LT_EXP_MAX_MODELS];
    for (int i = 0; i < run->model_count; i++)
        ckpts[i] = run->models[i].checkpoint;
    return lt_dist_agree(lt_outdir_open(&run->dir, run->o.out, 1, run->o.resume,
                                        run->o.overwrite, files, 2, ckpts,
                                        run->train ? run->model_count : 0));
}

/* Every model's config and memory plan before the first spends time. */
static lt_status plan_models(lt_exp_run *run, void *self)
{
    const lt_experiment *e = run->exp;
    lt_batch_source *source = NULL;
    lt_status status = LT_OK;
    for (int i = 0; i < run->model_count && status == LT_OK; i++) {
        lt_exp_model *m = &run->models[i];
        if (!m->applicable)
            continue;
        status = e->source(self, run, &source);
        if (status == LT_OK)
            status = build_config(run, m, source);
        if (status == LT_OK)
            status = e->configure(self, run, m);
        if (status == LT_OK) {
            long steps = e->steps(self, run, source);
            run->max_steps = steps > run->max_steps ? steps : run->max_steps;
        }
        size_t bytes;
        char what[160];
        snprintf(what, sizeof what, "training %s at N=%d, batch %ld", m->name,
                 source != NULL ? source->seq_len : 0, run->o.batch);
        /* the source is allocated: the plan adds the trainer to it */
        if (status == LT_OK && run->train)
            status = lt_trainer_plan(&m->config, lt_threads_get(), &bytes);
        if (status == LT_OK && run->train)
            status = lt_mem_plan(bytes, what);
        if (source != NULL && e->release_source != NULL)
            e->release_source(self, source);
        source = NULL;
    }
    return lt_dist_agree(status);
}

/* Without --out, a run writes to results/NAME-PRESET: the presets' runs
 * (and the README's examples) keep out of each other's folders. */
static void default_out(lt_exp_run *run)
{
    static char out[160];
    if (lt_cli_flag(&run->cli, "--out")->seen)
        return;
    snprintf(out, sizeof out, "results/%s-%s", run->exp->name, run->o.preset);
    run->o.out = out;
}

/* Everything checked, loaded and planned; the output folder taken before
 * a slow setup (outputs_first) or else after the plan, so a refused run
 * writes nothing. */
static lt_status prepare(lt_exp_run *run, void *self)
{
    const lt_experiment *e = run->exp;
    default_out(run);
    LT_TRY(lt_dist_agree(e->check(self, run, &run->cli)));
    LT_TRY(lt_dist_agree(list_models(run)));
    LT_TRY(lt_dist_agree(check_options(run)));
    if (e->outputs_first)
        LT_TRY(open_outputs(run));
    LT_TRY(lt_dist_agree(e->setup(self, run)));
    LT_TRY(plan_models(run, self));
    return e->outputs_first ? LT_OK : open_outputs(run);
}

static lt_status open_tables(lt_exp_run *run, lt_exp_previous *prev)
{
    lt_outdir_path(&run->dir, run->curves_file, run->curves_path, sizeof run->curves_path);
    lt_outdir_path(&run->dir, run->results_file, run->results_path, sizeof run->results_path);
    lt_table_init(&run->curves, run->exp->curves);
    lt_table_init(&run->results, run->exp->results);
    lt_status status = lt_exp_read_previous(prev, run);
    /* A fresh run (--overwrite) starts without the checkpoints of an
     * earlier one: killed before it writes its own, it would leave them
     * beside a journal of other rows. */
    for (int i = 0; i < run->model_count && !run->o.resume && lt_dist_is_root(); i++) {
        char path[4400];
        lt_outdir_path(&run->dir, run->models[i].checkpoint, path, sizeof path);
        if (remove(path) != 0 && errno != ENOENT && status == LT_OK)
            status = lt_fail_write(path, errno);
    }
    /* a resume leaves the earlier journals as they are until its first
     * model's rows are carried (rewrite_journals) */
    if (status == LT_OK && !run->o.resume)
        status = lt_table_journal(&run->curves, run->curves_path, NULL);
    if (status == LT_OK && !run->o.resume)
        status = lt_table_journal(&run->results, run->results_path, NULL);
    return lt_dist_agree(status);
}

static void free_run(lt_exp_run *run, void *self)
{
    if (run->exp->teardown != NULL)
        run->exp->teardown(self, run);
    lt_table_free(&run->curves);
    lt_table_free(&run->results);
    lt_outdir_close(&run->dir);
}

static int fail(lt_exp_run *run, void *self, lt_status status)
{
    int code = lt_program_report(run->cli.program, status, lt_exp_fields);
    free_run(run, self);
    return code;
}

/* The run's defaults, its file names and its command line: the flags the
 * experiment declares, then the standard and the common ones. Returns the
 * exit code when the program is done (--help, --version, a bad flag). */
static int parse_run(lt_exp_run *run, const lt_experiment *e, void *self, int argc, char **argv,
                     int *exit_now)
{
    memset(run, 0, sizeof *run);
    run->exp = e;
    run->dir.lock_fd = -1;
    default_options(&run->o, e);
    run->train = 1;
    snprintf(run->curves_file, sizeof run->curves_file, "%s-curves.csv", e->name);
    snprintf(run->results_file, sizeof run->results_file, "%s.csv", e->name);
    snprintf(run->checkpoint_prefix, sizeof run->checkpoint_prefix, "%s", e->name);
    if (e->defaults != NULL)
        e->defaults(self, run);
    static lt_flag flags[STANDARD_FLAGS + LT_EXP_MAX_OWN_FLAGS + LT_COMMON_FLAGS];
    int count = e->flags(self, flags);
    LT_ASSERT(count <= LT_EXP_MAX_OWN_FLAGS);
    standard_flags(flags + count, run);
    count += STANDARD_FLAGS;
    lt_common_flags(flags + count, &run->o.common);
    count += LT_COMMON_FLAGS;
    static char program[64];
    snprintf(program, sizeof program, "ltbench %s", e->name);
    run->cli = (lt_cli){program, e->summary, lt_presets_details(e->presets, e->details), flags,
                        count, NULL};
    int code = lt_program_parse(&run->cli, e->presets, &run->o.preset, &run->o.common, argc,
                                argv, exit_now);
    run->quiet = (int)run->o.common.quiet;
    return code;
}

/* Trains every listed model in turn (until one fails or a signal stops the
 * run), then carries the earlier run's rows of models not listed. The
 * update timings are planned once here, for the longest model. */
static lt_status train_models(lt_exp_run *run, void *self, lt_exp_previous *prev, int *diverged)
{
    double *step_seconds = NULL, *step_scratch = NULL;
    size_t timings = (size_t)(run->max_steps > 0 ? run->max_steps : 1) * sizeof *step_seconds;
    lt_status status = lt_mem_alloc((void **)&step_seconds, timings, "update timings");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&step_scratch, timings, "update timings, sorted");
    int reached = 0;
    for (; reached < run->model_count && status == LT_OK && !lt_interrupted(); reached++)
        status = run_model(run, self, &run->models[reached], prev, step_seconds, step_scratch,
                           diverged);
    if (status == LT_OK && lt_dist_is_root())
        status = lt_exp_carry_unlisted(run, prev, reached);
    lt_mem_free(step_seconds);
    lt_mem_free(step_scratch);
    return status;
}

/* The results table printed, then both files committed together, after
 * all the work. */
static lt_status commit_tables(lt_exp_run *run, void *self)
{
    if (lt_dist_is_root()) {
        printf("\n");
        lt_table_print(&run->results, stdout);
        if (run->exp->footnote != NULL)
            run->exp->footnote(self, run);
    }
    LT_TRY(lt_table_commit(&run->curves, run->curves_path));
    LT_TRY(lt_table_commit(&run->results, run->results_path));
    if (lt_dist_is_root())
        printf("\nwrote %s and %s\n", run->curves_path, run->results_path);
    return LT_OK;
}

int lt_experiment_main(const lt_experiment *e, void *self, int argc, char **argv)
{
    static lt_exp_run run;
    int exit_now;
    int code = parse_run(&run, e, self, argc, argv, &exit_now);
    if (exit_now)
        return code;
    lt_status status = prepare(&run, self);
    lt_exp_previous prev;
    memset(&prev, 0, sizeof prev);
    if (status == LT_OK)
        status = open_tables(&run, &prev);
    if (status != LT_OK) {
        lt_exp_free_previous(&prev);
        return fail(&run, self, status);
    }
    lt_signals_install();
    int diverged = 0;
    status = train_models(&run, self, &prev, &diverged);
    lt_exp_free_previous(&prev);
    if (status == LT_OK && e->complete != NULL)
        e->complete(self, &run);
    /* on failure the journals stay for --resume; finished files are untouched */
    if (status != LT_OK)
        return fail(&run, self, lt_dist_agree(status));
    status = commit_tables(&run, self);
    if (status != LT_OK)
        return fail(&run, self, status);
    free_run(&run, self);
    if (lt_interrupted()) {
        fprintf(stderr, "ltbench %s: interrupted; --resume continues from the checkpoints\n",
                e->name);
        return lt_interrupt_exit_code();
    }
    return diverged ? 1 : 0;
}
