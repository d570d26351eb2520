/* The training engine around a transformer: one call per update (forward,
 * masked cross-entropy, backward, global-norm clipping, optimizer step with
 * the scheduled learning rate), evaluation without dropout, and checkpoints
 * that let a resumed run continue the identical loss curve.
 *
 * The batch for an update is the caller's (data generators are fixed by
 * seed and step), dropout masks are drawn from (seed, step), and every
 * reduction has a fixed order, so the same seed and thread count give the
 * same numbers, resumed or not. */
#ifndef LT_MODEL_TRAIN_H
#define LT_MODEL_TRAIN_H

#include <stdint.h>

#include "model/optim.h"
#include "model/transformer.h"

typedef struct lt_train_config {
    lt_model_config model;
    lt_optim_config optim;
    lt_schedule schedule;
    double clip_norm; /* global gradient-norm limit; 0 = off */
    uint64_t seed;
} lt_train_config;

typedef struct lt_trainer {
    lt_train_config config;
    lt_model model;
    float *optim_state;
    long step; /* updates done so far */
} lt_trainer;

/* Loss and accuracy of one batch on the positions its mask counts. */
typedef struct lt_batch_result {
    double loss;
    long correct, counted;
    double grad_norm; /* before clipping; 0 for evaluation */
    double lr;        /* learning rate used; 0 for evaluation */
} lt_batch_result;

/* Bytes lt_trainer_init allocates (model plus optimizer state). */
lt_status lt_trainer_plan(const lt_train_config *config, int threads, size_t *bytes);

/* Checks the configuration, refuses a plan over the memory budget before
 * allocating, then allocates and initialises from config->seed. */
lt_status lt_trainer_init(lt_trainer *t, const lt_train_config *config, int threads);
void lt_trainer_free(lt_trainer *t);

/* One update on (batch, N) inputs, targets and loss mask. A loss or gradient
 * that is not finite fails with LT_E_NUMERIC before the parameters change. */
lt_status lt_trainer_step(lt_trainer *t, const int32_t *inputs, const int32_t *targets,
                          const float *mask, int batch, lt_batch_result *result);

/* Loss and accuracy without dropout and without changing anything. */
lt_status lt_trainer_evaluate(lt_trainer *t, const int32_t *inputs, const int32_t *targets,
                              const float *mask, int batch, lt_batch_result *result);

/* Writes parameters, optimizer state, step, seed and the configuration. */
lt_status lt_trainer_save(const lt_trainer *t, const char *path);

/* Loads a checkpoint into a trainer initialised with the same
 * configuration; a checkpoint of another configuration fails with
 * LT_E_INPUT saying which setting differs. */
lt_status lt_trainer_load(lt_trainer *t, const char *path);

/* The configuration as one line of "key=value" pairs (stored in
 * checkpoints and compared on resume). */
void lt_train_config_describe(const lt_train_config *config, char *buf, size_t size);

#endif
