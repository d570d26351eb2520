/* The training engine around a model: one call per update (forward, the
 * configured loss, backward, global-norm clipping, optimizer step with the
 * scheduled learning rate), evaluation without dropout, and checkpoints
 * that let a resumed run continue the identical loss curve. The trainer
 * knows nothing about the task: inputs, targets and labels come in an
 * lt_batch, and the loss is an lt_loss.
 *
 * The batch for an update is the caller's (data generators are fixed by
 * seed and step), dropout masks are drawn from (seed, step), and every
 * reduction has a fixed order that does not follow the thread count (matrix
 * products included: lt_sgemm), so the same seed gives the same numbers on
 * any thread count, resumed or not. */
#ifndef LT_MODEL_TRAIN_H
#define LT_MODEL_TRAIN_H

#include <stdint.h>

#include "io/checkpoint.h"
#include "model/loss.h"
#include "model/model.h"
#include "train/optim.h"

typedef struct lt_train_config {
    lt_model_config model;
    lt_loss loss;     /* its outputs must equal model.classes */
    lt_optim_config optim;
    lt_schedule schedule;
    double clip_norm; /* global gradient-norm limit; 0 = off */
    uint64_t seed;
    int threads;      /* recorded (memory and speed follow it; the numbers do not) */
    /* Data parallelism: each update's batch is split into `shards` equal
     * shards (1 or 0: none); each shard's gradient is computed alone and
     * the shards are summed in a fixed binary tree, across the ranks of an
     * MPI run (each holds shards/ranks of them) and within a process. So a
     * run's numbers depend on the shard count, never on the rank count:
     * one process with --shards 2 gives the bits of two ranks. model.max_batch
     * is one shard's sequences. */
    int shards;
    double plateau_factor; /* halve-on-plateau factor (lt_plateau); 0: off */
} lt_train_config;

typedef struct lt_trainer {
    lt_train_config config;
    lt_model model;
    float *optim_state;
    void *loss_workspace;
    float *shard_grads; /* (local shards, param_count) when sharded */
    void *reduce_scratch; /* param_count floats for the sums across ranks */
    long step;          /* updates done so far */
    lt_plateau plateau; /* scales the schedule's rate (kept in checkpoints) */
} lt_trainer;

/* One batch's loss (see lt_loss_result) and, for an update, the gradient
 * norm and learning rate. */
typedef struct lt_batch_result {
    double loss;      /* the minimised value */
    double sum;       /* summed over what the loss counts */
    long correct, counted;
    double grad_norm; /* before clipping; 0 for evaluation */
    double lr;        /* learning rate used; 0 for evaluation */
} lt_batch_result;

/* Divergence (model/fit.h): a loss that is not finite, or above
 * LT_DIVERGE_FACTOR times the run's first loss for LT_DIVERGE_UPDATES
 * updates in a row, stops the run (status "diverged"). */
#define LT_DIVERGE_FACTOR 4.0
#define LT_DIVERGE_UPDATES 20

/* Checks model, loss and optimizer settings together (LT_E_USAGE naming the
 * field). */
lt_status lt_train_check_config(const lt_train_config *config);

/* Bytes lt_trainer_init allocates (model, optimizer state, loss
 * workspace) plus the most a checkpoint write holds at once. */
lt_status lt_trainer_plan(const lt_train_config *config, int threads, size_t *bytes);

/* Checks the configuration, refuses a plan over the memory budget before
 * allocating, then allocates and initialises from config->seed. */
lt_status lt_trainer_init(lt_trainer *t, const lt_train_config *config, int threads);
void lt_trainer_free(lt_trainer *t);

/* One update on a batch: this rank's share of the update's sequences
 * (shards / ranks shards of model.max_batch each). A loss or gradient that
 * is not finite fails with LT_E_NUMERIC before the parameters change. */
lt_status lt_trainer_step(lt_trainer *t, const lt_batch *batch, lt_batch_result *result);

/* The loss without dropout and without changing anything; model->logits
 * hold the outputs afterwards. */
lt_status lt_trainer_evaluate(lt_trainer *t, const lt_batch *batch, lt_batch_result *result);

/* Shards this rank computes: shards / ranks (1 when unsharded). */
int lt_trainer_local_shards(const lt_train_config *config);

/* Gives the plateau rule an evaluation's metric (lower is better): the rate
 * of the following updates follows (see lt_plateau_update). */
void lt_trainer_plateau(lt_trainer *t, double metric);

/* Copies rank 0's parameters, optimizer state, step and plateau state to
 * every rank (after init, and after rank 0 loaded a checkpoint). */
lt_status lt_trainer_broadcast(lt_trainer *t);

/* Writes parameters, optimizer state, step, plateau state and the
 * configuration. */
lt_status lt_trainer_save(const lt_trainer *t, const char *path);

/* Loads a checkpoint into a trainer initialised with the same
 * configuration; a checkpoint of another configuration fails with
 * LT_E_INPUT saying which setting differs. */
lt_status lt_trainer_load(lt_trainer *t, const char *path);

/* The trainer's sections, into a checkpoint being written or from one read
 * (`path` names it in messages), for callers that store more beside. */
lt_status lt_trainer_write(const lt_trainer *t, lt_ckpt_writer *w);
lt_status lt_trainer_read(lt_trainer *t, const lt_ckpt *ckpt, const char *path);

/* Bytes reading a checkpoint of `file_bytes` holds at most, beside the
 * trainer (refused against the budget before reading). */
size_t lt_trainer_read_bytes(const lt_trainer *t, size_t file_bytes);

/* The configuration as one line of "key=value" pairs (stored in
 * checkpoints and compared on resume). */
void lt_train_config_describe(const lt_train_config *config, char *buf, size_t size);

/* The same, listing only the learning-rate drops that have acted on a
 * trainer after `step` updates (what a checkpoint at that step records). */
void lt_train_config_describe_until(const lt_train_config *config, long step, char *buf,
                                    size_t size);

#endif
