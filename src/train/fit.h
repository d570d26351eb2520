/* The fit loop: a trainer taken from its step to a number of updates over a
 * batch source, with everything a long run needs, so every experiment
 * trains the same way.
 *
 *   updates      one lt_trainer_step per batch of the source
 *   evaluation   every `eval_every` updates (an epoch, say) a hook
 *                evaluates; the metric it returns drives the schedule's
 *                plateau rule (lt_trainer_plateau)
 *   checkpoints  every `checkpoint_every` updates, at the end and when
 *                interrupted, after the caller's rows are synced: the
 *                trainer and the fit state, so a resumed run continues the
 *                same numbers, its timings and counters included
 *   divergence   a loss that is not finite, or above LT_DIVERGE_FACTOR x
 *                the run's first for LT_DIVERGE_UPDATES updates: status
 *                "diverged", the last checkpoint kept
 *   signals      Ctrl-C / SIGTERM (lt_interrupted): status "interrupted"
 *                after a checkpoint of the update just done
 *   ranks        every rank takes the same decisions (failures, signals,
 *                divergence are agreed after each update)
 *
 * The fit state lives in the checkpoint beside the trainer. */
#ifndef LT_MODEL_FIT_H
#define LT_MODEL_FIT_H

#include "core/progress.h"
#include "core/timer.h"
#include "train/source.h"
#include "train/trainer.h"

enum { LT_FIT_TRAINED_BY_MAX = 2048 };

/* What a run has done so far, over every invocation (kept in checkpoints). */
typedef struct lt_fit_state {
    long steps;             /* the run's planned updates: step_seconds holds this many */
    double *step_seconds;   /* (steps) time of update i + 1, NaN where not timed: the
                               first update of each invocation pays one-off costs */
    double train_seconds;   /* in updates, evaluations not counted */
    double wall_seconds;    /* in lt_fit, evaluations and checkpoints included */
    double comm_seconds;    /* of which in communication between ranks */
    double first_loss;      /* the run's first loss, NaN before it */
    long above;             /* updates in a row above the divergence factor */
    double window_loss;     /* losses summed since the last evaluation */
    long window_updates;    /* and how many */
    double window_seconds;  /* and their time in updates */
    size_t peak_bytes;      /* the caller's peak so far (lt_fit_note_peak) */
    /* Not stored: with track_peak, lt_fit notes lt_mem_peak() - peak_base
     * before every checkpoint, so the stored peak covers the run so far. */
    int track_peak;
    size_t peak_base;
    long invocations;       /* 1 for a run never resumed */
    /* Who trained it: one line per build that ran its updates, oldest
     * first, as the caller describes them ("" in checkpoints written before
     * this was kept). Stored as it is; the caller decides what may follow. */
    char trained_by[LT_FIT_TRAINED_BY_MAX];
} lt_fit_state;

/* A fresh state for a run of `steps` updates over a caller's buffer of
 * `steps` doubles (so nothing is allocated while training). */
void lt_fit_state_init(lt_fit_state *s, long steps, double *step_seconds);

/* Median, min and max of the timed updates. */
lt_summary lt_fit_step_time(const lt_fit_state *s, double *scratch /* (steps) */);

typedef struct lt_fit_spec {
    const char *label;      /* progress label, e.g. "copy linear 2/4" */
    long steps;             /* train until the trainer's step reaches this */
    long later;             /* updates of the models after this one: the overall ETA */
    long checkpoint_every;  /* >= 1 */
    const char *checkpoint; /* path */
    long eval_every;        /* 0: no evaluation hook calls */
    int quiet;
    lt_batch_source *source;
    /* After every update (may be NULL): the caller's per-update row. */
    lt_status (*after_update)(void *ctx, const lt_trainer *t, const lt_batch_result *r,
                              const lt_fit_state *state);
    /* Every eval_every updates (may be NULL): evaluates, writes its rows,
     * and sets *metric for the plateau rule (lower is better; NaN: none).
     * The state's window holds the updates since the last evaluation. */
    lt_status (*evaluate)(void *ctx, lt_trainer *t, const lt_fit_state *state, double *metric);
    /* Before every checkpoint (may be NULL): flush the rows to disk, so a
     * checkpoint never gets ahead of them. */
    lt_status (*sync)(void *ctx);
    /* Progress note after an update (may be NULL). */
    void (*note)(void *ctx, const lt_trainer *t, const lt_batch_result *r, char *buf,
                 size_t size);
    void *ctx;
} lt_fit_spec;

typedef struct lt_fit_result {
    const char *status; /* "ok", "interrupted", "diverged" */
    char note[512];
    long first_step, last_step; /* of this invocation */
} lt_fit_result;

/* Trains from t->step to spec->steps. Returns LT_OK for ok, interrupted and
 * diverged (see result->status); other failures stop the run. */
lt_status lt_fit(lt_trainer *t, lt_fit_state *state, const lt_fit_spec *spec,
                 lt_fit_result *result);

/* Records the caller's peak bytes (it keeps the larger): call before
 * checkpoints and at the end, so a resumed run reports the whole run's. */
void lt_fit_note_peak(lt_fit_state *s, size_t peak);

/* Writes the trainer and the fit state to `path`. */
lt_status lt_fit_save(const lt_trainer *t, const lt_fit_state *s, const char *path);

/* Loads both from `path` (rank 0), then gives every rank rank 0's trainer
 * and state. A checkpoint without a fit state (an older ltbench) is
 * refused with LT_E_INPUT saying so. */
lt_status lt_fit_load(lt_trainer *t, lt_fit_state *s, const char *path);

/* Gives every rank rank 0's trainer and fit state. */
lt_status lt_fit_broadcast(lt_trainer *t, lt_fit_state *s);

/* ---- evaluation ---- */

/* Per-chunk statistics of an evaluation: `stats` (k doubles, zeroed) for
 * one chunk of the split, after the trainer evaluated it. */
typedef lt_status (*lt_eval_chunk_fn)(void *ctx, const lt_trainer *t, const lt_batch *batch,
                                      const lt_batch_result *r, double *stats);

/* Evaluates a split of the source in chunks of the model's max_batch
 * sequences: chunk c runs on rank c % ranks, `fn` fills its k statistics,
 * and totals[k] are their sums in chunk order, so the totals are the same
 * bits on any number of ranks. `scratch` holds lt_eval_scratch_doubles;
 * `progress` (may be NULL) counts the sequences done. */
lt_status lt_evaluate(lt_trainer *t, lt_batch_source *source, lt_split split,
                      lt_eval_chunk_fn fn, void *ctx, int k, double *totals, double *scratch,
                      lt_progress *progress);

/* Doubles lt_evaluate needs for a split of `sequences` in chunks of
 * `chunk`, k statistics each. */
size_t lt_eval_scratch_doubles(long sequences, int chunk, int k);

#endif
