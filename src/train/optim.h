/* Optimizers, gradient clipping and learning-rate schedules for the training
 * engine. Everything works on flat float32 arrays that the caller planned:
 * parameters, their gradients and the optimizer state (sized by
 * lt_optim_state_floats and zero-filled before the first step).
 *
 * Adam: Kingma & Ba 2015, with bias correction.
 * RAdam: Liu et al. 2019, "On the Variance of the Adaptive Learning Rate and
 * Beyond": Adam's adaptive step multiplied by a rectification term r_t once
 * the variance of the adaptive rate is tractable, plain momentum before.
 * Both optionally apply decoupled weight decay (AdamW style). */
#ifndef LT_MODEL_OPTIM_H
#define LT_MODEL_OPTIM_H

#include <stddef.h>

#include "core/status.h"

typedef enum lt_optim_kind {
    LT_OPTIM_ADAM,
    LT_OPTIM_RADAM
} lt_optim_kind;

typedef struct lt_optim_config {
    lt_optim_kind kind;
    double lr;           /* base learning rate (a schedule scales it per step) */
    double beta1;        /* first-moment decay, 0.9 */
    double beta2;        /* second-moment decay, 0.999 */
    double eps;          /* added to sqrt(v_hat), 1e-8 */
    double weight_decay; /* decoupled: p -= lr * weight_decay * p; 0 = off */
} lt_optim_config;

/* The defaults above for `kind` with learning rate 1e-3. */
lt_optim_config lt_optim_defaults(lt_optim_kind kind);

/* "adam" or "radam"; anything else fails with LT_E_USAGE naming `flag`. */
lt_status lt_optim_parse_kind(lt_optim_kind *out, const char *text, const char *flag);

/* "adam" or "radam". */
const char *lt_optim_kind_name(lt_optim_kind kind);

/* Checks lr > 0, 0 <= beta1 < 1, 0 <= beta2 < 1, eps >= 0 and
 * weight_decay >= 0 (all finite); LT_E_USAGE naming the field otherwise. */
lt_status lt_optim_validate(const lt_optim_config *cfg);

/* Floats of optimizer state for n parameters (2n: first moments m, then
 * second moments v). The state must be zero before step 1. */
size_t lt_optim_state_floats(lt_optim_kind kind, size_t n);

/* One update of every parameter, in place. `step` is the 1-based update
 * count (it drives bias correction and RAdam's rectification); `lr` is the
 * learning rate for this step (from lt_schedule_lr). Element-wise, so the
 * result does not depend on the thread count. */
void lt_optim_step(const lt_optim_config *cfg,
                   float *params,      /* (n) updated in place */
                   const float *grads, /* (n) */
                   float *state,       /* (lt_optim_state_floats(kind, n)) */
                   size_t n, long step, double lr);

/* RAdam's rho_t: the length of the approximated simple moving average,
 * rho_inf - 2 t beta2^t / (1 - beta2^t). */
double lt_radam_rho(double beta2, long step);

/* Whether RAdam takes the rectified adaptive step at `step` (rho_t > 5). */
int lt_radam_is_rectified(double beta2, long step);

/* Global-norm clipping: computes the L2 norm of all n gradients (in double,
 * with a fixed summation order, so the result is the same for any thread
 * count) and, when it exceeds max_norm > 0, scales the gradients so their
 * norm becomes max_norm. Returns the norm before clipping. max_norm <= 0
 * only measures. A NaN or infinite norm is returned without scaling, so
 * the caller can refuse the step. */
double lt_clip_grad_norm(float *grads /* (n) */, size_t n, double max_norm);

/* Step-decay learning-rate schedule with optional linear warm-up. */
#define LT_SCHEDULE_MAX_DROPS 16

typedef struct lt_schedule_drop {
    long after_step; /* applies to updates after this many */
    double factor;   /* multiplies the rate in force, e.g. 0.1 */
} lt_schedule_drop;

typedef struct lt_schedule {
    double base_lr;
    long warmup_steps; /* 0: none; else steps 1..W ramp from base/W to base */
    int drop_count;
    lt_schedule_drop drops[LT_SCHEDULE_MAX_DROPS]; /* after_step increasing */
} lt_schedule;

/* Halving on plateau (the paper's speech schedule): after an evaluation
 * whose metric (lower is better) does not improve on the best so far, the
 * rate in force is multiplied by the factor. The state travels with the
 * trainer and its checkpoints. */
typedef struct lt_plateau {
    double factor; /* 0: off */
    double best;   /* best metric so far; +inf before the first */
    double scale;  /* multiplies the schedule's rate; 1 until the first plateau */
} lt_plateau;

/* Off, or on with `factor` in (0, 1); LT_E_USAGE otherwise. */
lt_status lt_plateau_init(lt_plateau *p, double factor);

/* Takes an evaluation's metric: a metric that is not below the best (NaN
 * included) scales the rate by the factor, a better one becomes the best.
 * Nothing happens when the rule is off. */
void lt_plateau_update(lt_plateau *p, double metric);

/* A schedule with no drops. Fails with LT_E_USAGE for a base rate that is
 * not finite and positive, or negative warm-up. */
lt_status lt_schedule_init(lt_schedule *sched, double base_lr, long warmup_steps);

/* Appends a drop: the rate is multiplied by `factor` for every update after
 * `after_step` (so the paper's 1e-3 -> 1e-4 after 3000 updates is
 * (3000, 0.1)). Drops must come in increasing order, which also lets a
 * trainer add one while running ("halve on plateau"). LT_E_USAGE for a
 * non-positive or non-finite factor, an out-of-order step or too many. */
lt_status lt_schedule_add_drop(lt_schedule *sched, long after_step, double factor);

/* Adds drops from text such as "3000:0.1,6000:0.5"; LT_E_USAGE naming
 * `flag` for malformed items. An empty string adds none. */
lt_status lt_schedule_parse_drops(lt_schedule *sched, const char *text, const char *flag);

/* The learning rate for the 1-based update `step`. */
double lt_schedule_lr(const lt_schedule *sched, long step);

#endif
