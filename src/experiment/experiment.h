/* The one driver under every training experiment (copy, image, speech).
 *
 * An experiment is a descriptor: its name and summary, presets, its own
 * flags beside the standard ones below, its two tables (a curve and the
 * results), and hooks for what is truly its own: loading data, the parts of
 * the model config that depend on the task, the batch source, the rows.
 * The driver runs the same steps for all:
 *
 *   flags    standard flags (variants, kernel, sizes, optimizer, run) plus the
 *            experiment's, presets, --help
 *   config   the models: each listed variant (or model) as a training
 *            config, its kernel chosen in src/attn; variants that cannot
 *            serve the experiment get a "not applicable" row
 *   plan     every model's memory against the budget before any work
 *   run      the output folder locked and checked, tables journaled, the
 *            rows of an earlier run read when resuming
 *   train    per model: a checkpoint resumed (its curve rows carried), the
 *            fit loop (src/model/fit.h), the result rows; a model already
 *            finished by an earlier run keeps its rows
 *   end      rows of models this run did not list carried, the table
 *            printed, both files committed together; exit 0, 1 (diverged),
 *            130/143 (interrupted, --resume continues) */
#ifndef LT_EXPERIMENT_EXPERIMENT_H
#define LT_EXPERIMENT_EXPERIMENT_H

#include "core/cli.h"
#include "train/source.h"
#include "io/outdir.h"
#include "train/fit.h"
#include "experiment/program.h"
#include "results/table.h"

enum { LT_EXP_MAX_MODELS = 8, LT_EXP_MAX_OWN_FLAGS = 32 };

/* The standard options every training experiment has. */
typedef struct lt_exp_options {
    const char *preset, *models, *kernel, *optimizer, *activation, *feature_map, *lr_drops;
    const char *out;
    long batch, layers, heads, head_dim, ffn, proj_k, shards, checkpoint_every;
    long lsh_rounds, lsh_buckets, lsh_chunk, random_features;
    double decay_gamma;
    double dropout, lr, clip, eps, weight_decay;
    int resume, overwrite, mixed_revisions;
    lt_common common;
} lt_exp_options;

/* One model a run trains: an attention variant, or a model of the
 * experiment's own (speech's Bi-LSTM). */
typedef struct lt_exp_model {
    const char *name;      /* the rows' variant or model: "lsh-4", "bilstm" */
    lt_variant_spec spec;  /* attention: the variant as listed, its label the name */
    int attention;         /* an attention variant (else the experiment's own model) */
    const char *kernel;    /* the kernel that runs; "none" where none does */
    int applicable;
    char why_not[512];     /* when not applicable */
    lt_train_config config;
    char checkpoint[256];  /* relative to the output folder */
} lt_exp_model;

/* What training a model came to, for its rows. */
typedef struct lt_exp_outcome {
    const char *status;    /* ok, interrupted, diverged, not-applicable */
    char note[768];
    lt_fit_result fit;
    lt_fit_state *state;   /* the run's timings, counters and peak */
    lt_summary step_time;  /* of the run's timed updates */
    lt_batch_source *source;
    size_t planned_bytes, params;
} lt_exp_outcome;

typedef struct lt_exp_run lt_exp_run;
typedef struct lt_experiment lt_experiment;

struct lt_experiment {
    const char *name;         /* "copy": the program is ltbench-NAME */
    const char *summary;      /* one line for --help */
    const char *details;      /* paragraphs after the presets in --help */
    const lt_presets *presets;
    const char *default_preset;
    const char *variants_note; /* what --variants' help adds (NULL: nothing) */
    const char *default_models;
    const char *own_models;   /* models of its own beside the attention variants, "a,b" */
    const char *sequence;     /* what a sequence is: "sequences", "images" */
    int causal;               /* the experiment's attention is causal */
    const lt_schema *curves, *results;
    const char *key_column;   /* "variant" or "model" */
    int outputs_first;        /* check the output folder before a slow setup */

    /* The experiment's own flags, bound to its options. */
    int (*flags)(void *self, lt_flag *out);
    /* Defaults of the standard options and the file names, before the
     * presets (may be NULL). */
    void (*defaults)(void *self, lt_exp_run *run);
    /* After parsing: resolves its own settings (LT_E_USAGE naming flags). */
    lt_status (*check)(void *self, lt_exp_run *run, lt_cli *cli);
    /* Loads what every model reads (data, corpus); prints its header. */
    lt_status (*setup)(void *self, lt_exp_run *run);
    /* Sets what is the experiment's in a model's config (inputs, loss,
     * classes, its own model's body). */
    lt_status (*configure)(void *self, lt_exp_run *run, lt_exp_model *m);
    /* The batch source a model trains on (made inside the model's
     * measured peak, unless the experiment keeps one from setup), and its
     * release (may be NULL). */
    lt_status (*source)(void *self, lt_exp_run *run, lt_batch_source **out);
    void (*release_source)(void *self, lt_batch_source *source);
    /* Updates of a run and, where the experiment evaluates as it trains,
     * updates between evaluations. */
    long (*steps)(void *self, lt_exp_run *run, const lt_batch_source *source);
    long eval_every_epoch;    /* 1: evaluate each epoch of the source */
    /* Per update (may be NULL): its curve row. */
    lt_status (*update_row)(void *self, lt_exp_run *run, const lt_exp_model *m,
                            const lt_trainer *t, const lt_batch_result *r,
                            const lt_fit_state *state);
    /* Per evaluation (may be NULL): evaluate, write its curve row, give the
     * plateau metric. */
    lt_status (*evaluate)(void *self, lt_exp_run *run, const lt_exp_model *m, lt_trainer *t,
                          const lt_fit_state *state, double *metric);
    /* Progress note after an update (may be NULL). */
    void (*note)(void *self, const lt_trainer *t, const lt_batch_result *r, char *buf,
                 size_t size);
    /* After training (t is NULL for a model not applicable or not run):
     * final evaluation, its own work (generation), the result rows. */
    lt_status (*finish)(void *self, lt_exp_run *run, lt_exp_model *m, lt_trainer *t,
                        lt_exp_outcome *out);
    /* After every model, before the table is printed (may be NULL): cells
     * that depend on several models (speed-ups). */
    void (*complete)(void *self, lt_exp_run *run);
    /* A footnote under the printed table (may be NULL). */
    void (*footnote)(void *self, lt_exp_run *run);
    void (*teardown)(void *self, lt_exp_run *run);
};

/* A run in progress: what the hooks read. */
struct lt_exp_run {
    const lt_experiment *exp;
    lt_exp_options o;
    lt_cli cli;
    lt_outdir dir;
    lt_exp_model models[LT_EXP_MAX_MODELS];
    int model_count;
    lt_table curves, results;
    char curves_path[4400], results_path[4400];
    char curves_file[128], results_file[128];
    char checkpoint_prefix[128]; /* checkpoints/PREFIX-MODEL.ckpt */
    int train;                   /* 0: the experiment only measures untrained models */
    long max_steps;              /* the most updates of any model */
    int quiet;
};

/* Runs an experiment: returns the exit code. `self` is the experiment's
 * own state, handed to every hook. */
int lt_experiment_main(const lt_experiment *exp, void *self, int argc, char **argv);

/* Shards of an update: --shards, or one per rank. */
int lt_exp_shards(const lt_exp_run *run);

/* Sequences per update of one shard. */
int lt_exp_shard_batch(const lt_exp_run *run);

/* Begins a row of one of the run's tables with every column the schema
 * says where to take from (lt_column.from: a flag's value, or $experiment,
 * $model, $kernel, $threads, $dropout: what the model applies) filled for
 * model m; the experiment sets the rest and ends the row. */
void lt_exp_row_begin(lt_exp_run *run, lt_table *t, const lt_exp_model *m);

/* A model by row name (NULL if the run has none). */
const lt_exp_model *lt_exp_find_model(const lt_exp_run *run, const char *name);

/* Maps "field: ..." errors of the library to the flags; NULL-ended. */
extern const lt_field_flag lt_exp_fields[];

#endif
