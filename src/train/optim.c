#include "train/optim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many elements a parallel region costs more than it saves. */
#define PARALLEL_MIN_ELEMENTS 65536

/* RAdam rectifies once rho_t > 5. The paper's Algorithm 2 says rho_t > 4,
 * but just above 4 the first-order variance approximation behind r_t is
 * poor (r_t ~ 0.02, a sudden switch from a full momentum step to a nearly
 * zero adaptive one). The authors' released code (N_sma >= 5) and PyTorch's
 * RAdam both use 5, and the paper we reproduce trained with that code, so we
 * match it: with beta2 = 0.999 updates 1..5 are momentum steps. */
#define RADAM_RHO_THRESHOLD 5.0

lt_optim_config lt_optim_defaults(lt_optim_kind kind)
{
    lt_optim_config cfg = {
        .kind = kind, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0,
    };
    return cfg;
}

const char *lt_optim_kind_name(lt_optim_kind kind)
{
    return kind == LT_OPTIM_RADAM ? "radam" : "adam";
}

lt_status lt_optim_parse_kind(lt_optim_kind *out, const char *text, const char *flag)
{
    if (text != NULL && strcmp(text, "adam") == 0)
        *out = LT_OPTIM_ADAM;
    else if (text != NULL && strcmp(text, "radam") == 0)
        *out = LT_OPTIM_RADAM;
    else
        return lt_fail(LT_E_USAGE, "%s: expected adam or radam, got '%s'", flag,
                       text != NULL ? text : "");
    return LT_OK;
}

static lt_status check_range(double value, double lo, double hi, int hi_open, const char *name)
{
    int ok = isfinite(value) && value >= lo && (hi_open ? value < hi : value <= hi);
    if (!ok)
        return lt_fail(LT_E_USAGE, "optimizer %s: expected a value in [%g, %g%s, got %g", name,
                       lo, hi, hi_open ? ")" : "]", value);
    return LT_OK;
}

lt_status lt_optim_validate(const lt_optim_config *cfg)
{
    if (cfg->kind != LT_OPTIM_ADAM && cfg->kind != LT_OPTIM_RADAM)
        return lt_fail(LT_E_USAGE, "optimizer kind: expected adam or radam, got %d",
                       (int)cfg->kind);
    if (!(isfinite(cfg->lr) && cfg->lr > 0))
        return lt_fail(LT_E_USAGE, "optimizer lr: expected a positive finite value, got %g",
                       cfg->lr);
    LT_TRY(check_range(cfg->beta1, 0, 1, 1, "beta1"));
    LT_TRY(check_range(cfg->beta2, 0, 1, 1, "beta2"));
    LT_TRY(check_range(cfg->eps, 0, HUGE_VAL, 1, "eps"));
    LT_TRY(check_range(cfg->weight_decay, 0, HUGE_VAL, 1, "weight_decay"));
    return LT_OK;
}

size_t lt_optim_state_floats(lt_optim_kind kind, size_t n)
{
    (void)kind; /* both keep m and v */
    return 2 * n;
}

double lt_radam_rho(double beta2, long step)
{
    double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    double beta2_t = pow(beta2, (double)step);
    return rho_inf - 2.0 * (double)step * beta2_t / (1.0 - beta2_t);
}

int lt_radam_is_rectified(double beta2, long step)
{
    return lt_radam_rho(beta2, step) > RADAM_RHO_THRESHOLD;
}

/* r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)) */
static double radam_rectification(double beta2, long step)
{
    double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    double rho_t = lt_radam_rho(beta2, step);
    return sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf /
                ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
}

void lt_optim_step(const lt_optim_config *cfg, float *params, const float *grads, float *state,
                   size_t n, long step, double lr)
{
    LT_ASSERT(step >= 1);
    float *m = state;
    float *v = state + n;
    /* Per-step scalars in double; the element loop runs in float. */
    const float beta1 = (float)cfg->beta1, one_minus_beta1 = (float)(1.0 - cfg->beta1);
    const float beta2 = (float)cfg->beta2, one_minus_beta2 = (float)(1.0 - cfg->beta2);
    const float inv_bc1 = (float)(1.0 / (1.0 - pow(cfg->beta1, (double)step)));
    const float inv_bc2 = (float)(1.0 / (1.0 - pow(cfg->beta2, (double)step)));
    const float eps = (float)cfg->eps;
    const float keep = (float)(1.0 - lr * cfg->weight_decay);

    int adaptive = 1;
    double rate = lr;
    if (cfg->kind == LT_OPTIM_RADAM) {
        adaptive = lt_radam_is_rectified(cfg->beta2, step);
        if (adaptive)
            rate = lr * radam_rectification(cfg->beta2, step);
    }
    const float step_size = (float)rate;

    if (adaptive) {
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ELEMENTS)
        for (size_t i = 0; i < n; i++) {
            float g = grads[i];
            m[i] = beta1 * m[i] + one_minus_beta1 * g;
            v[i] = beta2 * v[i] + one_minus_beta2 * g * g;
            float m_hat = m[i] * inv_bc1;
            float v_hat = v[i] * inv_bc2;
            params[i] = keep * params[i] - step_size * m_hat / (sqrtf(v_hat) + eps);
        }
    } else {
        /* RAdam's early updates: the variance of the adaptive rate is
         * intractable, so take a plain bias-corrected momentum step (v is
         * still accumulated for later). */
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ELEMENTS)
        for (size_t i = 0; i < n; i++) {
            float g = grads[i];
            m[i] = beta1 * m[i] + one_minus_beta1 * g;
            v[i] = beta2 * v[i] + one_minus_beta2 * g * g;
            params[i] = keep * params[i] - step_size * (m[i] * inv_bc1);
        }
    }
}

/* The sum of squares is split into a fixed number of contiguous chunks, each
 * summed in a fixed order, and the chunk sums are added in order: the result
 * depends on n only, never on how many threads ran the chunks. */
#define CLIP_CHUNKS 256

double lt_clip_grad_norm(float *grads, size_t n, double max_norm)
{
    double partial[CLIP_CHUNKS];
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ELEMENTS)
    for (int c = 0; c < CLIP_CHUNKS; c++) {
        size_t begin = n / CLIP_CHUNKS * (size_t)c + (n % CLIP_CHUNKS) * (size_t)c / CLIP_CHUNKS;
        size_t end = n / CLIP_CHUNKS * (size_t)(c + 1) +
                     (n % CLIP_CHUNKS) * (size_t)(c + 1) / CLIP_CHUNKS;
        /* Four accumulators break the add latency chain; still a fixed order. */
        double acc[4] = {0, 0, 0, 0};
        size_t i = begin;
        for (; i + 4 <= end; i += 4)
            for (int k = 0; k < 4; k++)
                acc[k] += (double)grads[i + k] * (double)grads[i + k];
        for (; i < end; i++)
            acc[0] += (double)grads[i] * (double)grads[i];
        partial[c] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    double sum = 0;
    for (int c = 0; c < CLIP_CHUNKS; c++)
        sum += partial[c];
    double norm = sqrt(sum);

    if (max_norm > 0 && isfinite(norm) && norm > max_norm) {
        const float scale = (float)(max_norm / norm);
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ELEMENTS)
        for (size_t i = 0; i < n; i++)
            grads[i] *= scale;
    }
    return norm;
}

lt_status lt_schedule_init(lt_schedule *sched, double base_lr, long warmup_steps)
{
    memset(sched, 0, sizeof *sched);
    if (!(isfinite(base_lr) && base_lr > 0))
        return lt_fail(LT_E_USAGE, "learning rate: expected a positive finite value, got %g",
                       base_lr);
    if (warmup_steps < 0)
        return lt_fail(LT_E_USAGE, "warm-up steps: expected 0 or more, got %ld", warmup_steps);
    sched->base_lr = base_lr;
    sched->warmup_steps = warmup_steps;
    return LT_OK;
}

lt_status lt_schedule_add_drop(lt_schedule *sched, long after_step, double factor)
{
    if (sched->drop_count == LT_SCHEDULE_MAX_DROPS)
        return lt_fail(LT_E_USAGE, "learning-rate schedule: at most %d drops",
                       LT_SCHEDULE_MAX_DROPS);
    if (!(isfinite(factor) && factor > 0))
        return lt_fail(LT_E_USAGE,
                       "learning-rate drop after step %ld: expected a positive factor, got %g",
                       after_step, factor);
    long previous = sched->drop_count > 0 ? sched->drops[sched->drop_count - 1].after_step : 0;
    if (after_step < 1 || (sched->drop_count > 0 && after_step <= previous))
        return lt_fail(LT_E_USAGE,
                       "learning-rate drop after step %ld: steps must be positive and increasing"
                       " (previous drop after %ld)",
                       after_step, previous);
    sched->drops[sched->drop_count].after_step = after_step;
    sched->drops[sched->drop_count].factor = factor;
    sched->drop_count++;
    return LT_OK;
}

lt_status lt_schedule_parse_drops(lt_schedule *sched, const char *text, const char *flag)
{
    const char *p = text;
    while (*p != '\0') {
        char *end;
        errno = 0;
        long after_step = strtol(p, &end, 10);
        if (end == p || *end != ':' || errno != 0)
            return lt_fail(LT_E_USAGE, "%s: expected STEP:FACTOR[,STEP:FACTOR...], got '%s'",
                           flag, text);
        p = end + 1;
        double factor = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || errno != 0)
            return lt_fail(LT_E_USAGE, "%s: expected STEP:FACTOR[,STEP:FACTOR...], got '%s'",
                           flag, text);
        lt_status status = lt_schedule_add_drop(sched, after_step, factor);
        if (status != LT_OK) {
            char reason[512];
            snprintf(reason, sizeof reason, "%s", lt_last_error());
            return lt_fail(status, "%s: %s", flag, reason);
        }
        p = *end == ',' ? end + 1 : end;
        if (*end == ',' && *p == '\0')
            return lt_fail(LT_E_USAGE, "%s: trailing comma in '%s'", flag, text);
    }
    return LT_OK;
}

double lt_schedule_lr(const lt_schedule *sched, long step)
{
    double lr = sched->base_lr;
    for (int d = 0; d < sched->drop_count; d++)
        if (step > sched->drops[d].after_step)
            lr *= sched->drops[d].factor;
    if (sched->warmup_steps > 0 && step < sched->warmup_steps)
        lr *= (double)step / (double)sched->warmup_steps;
    return lr;
}

lt_status lt_plateau_init(lt_plateau *p, double factor)
{
    if (!(factor >= 0 && factor < 1))
        return lt_fail(LT_E_USAGE, "plateau factor: expected 0 (off) or a factor in (0, 1), "
                                   "got %g",
                       factor);
    *p = (lt_plateau){factor, INFINITY, 1.0};
    return LT_OK;
}

void lt_plateau_update(lt_plateau *p, double metric)
{
    if (p->factor == 0)
        return;
    if (metric < p->best)
        p->best = metric;
    else
        p->scale *= p->factor;
}
