#include <criterion/criterion.h>

#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "train/optim.h"
#include "check.h"

/* ---- a double-precision reference written from the papers' formulas ---- */

typedef struct ref_optim {
    int radam;
    double beta1, beta2, eps, weight_decay;
    double m[8], v[8];
} ref_optim;

/* rho_t and the rectification term, straight from Liu et al. 2019. */
static double ref_rho(double beta2, long t)
{
    double rho_inf = 2 / (1 - beta2) - 1;
    return rho_inf - 2 * t * pow(beta2, t) / (1 - pow(beta2, t));
}

static void ref_step(ref_optim *o, double *p, const double *g, int n, long t, double lr)
{
    double rho_inf = 2 / (1 - o->beta2) - 1;
    double rho = ref_rho(o->beta2, t);
    for (int i = 0; i < n; i++) {
        o->m[i] = o->beta1 * o->m[i] + (1 - o->beta1) * g[i];
        o->v[i] = o->beta2 * o->v[i] + (1 - o->beta2) * g[i] * g[i];
        double m_hat = o->m[i] / (1 - pow(o->beta1, t));
        double v_hat = o->v[i] / (1 - pow(o->beta2, t));
        double adaptive = m_hat / (sqrt(v_hat) + o->eps);
        double update;
        if (!o->radam)
            update = adaptive;
        else if (rho > 5)
            update = sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)) *
                     adaptive;
        else
            update = m_hat;
        p[i] = p[i] - lr * o->weight_decay * p[i] - lr * update;
    }
}

/* Gradients of varied sign and magnitude (1e-3 .. 4) that change each step. */
static void test_grads(double *g, int n, long t)
{
    for (int i = 0; i < n; i++)
        g[i] = sin(1.3 * i + 0.7 * t) * pow(10.0, (i % 4) - 3) * (1 + 0.3 * i);
}

/* Runs lt_optim_step and the reference side by side for `steps` updates and
 * returns the worst relative error of the parameter change (p_t - p_0). */
static double compare_with_reference(lt_optim_kind kind, double weight_decay, int steps)
{
    enum { N = 7 };
    lt_optim_config cfg = lt_optim_defaults(kind);
    cfg.weight_decay = weight_decay;
    cr_assert_eq(lt_optim_validate(&cfg), LT_OK);
    ref_optim ref = {.radam = kind == LT_OPTIM_RADAM, .beta1 = cfg.beta1, .beta2 = cfg.beta2,
                     .eps = cfg.eps, .weight_decay = weight_decay};
    float p[N], state[2 * N] = {0}, gf[N];
    double p_ref[N], g[N], p0[N];
    for (int i = 0; i < N; i++)
        p0[i] = p_ref[i] = p[i] = (float)(0.5 - 0.25 * i);
    double worst = 0;
    const double lr = 0.05;
    for (long t = 1; t <= steps; t++) {
        test_grads(g, N, t);
        for (int i = 0; i < N; i++)
            gf[i] = (float)g[i];
        /* The float step sees float gradients; so does the reference. */
        for (int i = 0; i < N; i++)
            g[i] = gf[i];
        lt_optim_step(&cfg, p, gf, state, N, t, lr);
        ref_step(&ref, p_ref, g, N, t, lr);
        double delta_ref[N];
        float delta[N];
        for (int i = 0; i < N; i++) {
            delta_ref[i] = p_ref[i] - p0[i];
            delta[i] = (float)((double)p[i] - p0[i]);
        }
        double err = check_rel_error_f(delta, delta_ref, N, 1e-3);
        if (err > worst)
            worst = err;
    }
    return worst;
}

Test(optim, adam_matches_reference)
{
    double err = compare_with_reference(LT_OPTIM_ADAM, 0, 20);
    cr_assert_lt(err, 5e-6, "Adam vs double reference: relative error %g", err);
}

Test(optim, radam_matches_reference_through_the_switch)
{
    /* 20 updates cover both regimes: momentum for 1..5, rectified after. */
    double err = compare_with_reference(LT_OPTIM_RADAM, 0, 20);
    cr_assert_lt(err, 5e-6, "RAdam vs double reference: relative error %g", err);
}

Test(optim, decoupled_weight_decay_matches_reference)
{
    double err_adam = compare_with_reference(LT_OPTIM_ADAM, 0.3, 12);
    double err_radam = compare_with_reference(LT_OPTIM_RADAM, 0.3, 12);
    cr_assert_lt(err_adam, 5e-6, "AdamW vs reference: %g", err_adam);
    cr_assert_lt(err_radam, 5e-6, "RAdam+wd vs reference: %g", err_radam);
}

Test(optim, radam_rectifies_after_rho_exceeds_five)
{
    /* With beta2 = 0.999, rho_t ~ t - small: rho_5 = 4.996, rho_6 = 5.994. */
    for (long t = 1; t <= 50; t++) {
        int expected = ref_rho(0.999, t) > 5;
        cr_assert_eq(lt_radam_is_rectified(0.999, t), expected, "step %ld", t);
        cr_assert_lt(fabs(lt_radam_rho(0.999, t) - ref_rho(0.999, t)), 1e-9);
    }
    cr_assert(!lt_radam_is_rectified(0.999, 5));
    cr_assert(lt_radam_is_rectified(0.999, 6));
}

Test(optim, radam_first_steps_are_plain_momentum)
{
    /* Step 1: m_hat = g, so an un-adapted step moves by exactly -lr * g,
     * whatever the gradient's scale (Adam would move by about -lr each). */
    lt_optim_config cfg = lt_optim_defaults(LT_OPTIM_RADAM);
    float p[3] = {1, 1, 1}, g[3] = {0.5f, -2.0f, 3e-3f}, state[6] = {0};
    lt_optim_step(&cfg, p, g, state, 3, 1, 0.1);
    for (int i = 0; i < 3; i++) {
        double moved = (double)p[i] - 1.0;
        cr_assert_lt(fabs(moved + 0.1 * g[i]), 1e-6 * fabs(0.1 * g[i]) + 1e-7,
                     "element %d moved %g, expected %g", i, moved, -0.1 * g[i]);
    }
    /* Adam on the same input: about -lr * sign(g) for every element. */
    float q[3] = {1, 1, 1}, state_adam[6] = {0};
    lt_optim_config adam = lt_optim_defaults(LT_OPTIM_ADAM);
    lt_optim_step(&adam, q, g, state_adam, 3, 1, 0.1);
    for (int i = 0; i < 3; i++)
        cr_assert_lt(fabs(fabs((double)q[i] - 1.0) - 0.1), 1e-4);
}

Test(optim, radam_rectified_step_is_scaled_adaptive_step)
{
    /* Constant gradient: m_hat = v_hat^(1/2) = |g| for every t, so the
     * rectified step is exactly -lr * r_t * sign(g) (up to eps). */
    lt_optim_config cfg = lt_optim_defaults(LT_OPTIM_RADAM);
    float p[1] = {0}, g[1] = {0.25f}, state[2] = {0};
    double rho_inf = 2 / (1 - 0.999) - 1;
    for (long t = 1; t <= 8; t++) {
        float before = p[0];
        lt_optim_step(&cfg, p, g, state, 1, t, 1e-2);
        double moved = (double)p[0] - before;
        double rho = ref_rho(0.999, t);
        double expected = rho > 5 ? -1e-2 * sqrt((rho - 4) * (rho - 2) * rho_inf /
                                                 ((rho_inf - 4) * (rho_inf - 2) * rho))
                                  : -1e-2 * 0.25;
        cr_assert_lt(fabs(moved - expected), 1e-4 * fabs(expected),
                     "step %ld moved %g, expected %g", t, moved, expected);
    }
}

/* f(p) = sum a_i (p_i - c_i)^2 / 2 */
static double quadratic_loss(const float *p, float *grad, int n)
{
    double loss = 0;
    for (int i = 0; i < n; i++) {
        double a = 0.1 + i, c = 1.0 - 0.3 * i;
        double diff = (double)p[i] - c;
        loss += 0.5 * a * diff * diff;
        if (grad != NULL)
            grad[i] = (float)(a * diff);
    }
    return loss;
}

static void minimise_quadratic(lt_optim_kind kind)
{
    enum { N = 10 };
    lt_optim_config cfg = lt_optim_defaults(kind);
    lt_schedule sched;
    cr_assert_eq(lt_schedule_init(&sched, 0.05, 0), LT_OK);
    cr_assert_eq(lt_schedule_add_drop(&sched, 1500, 0.1), LT_OK);
    float p[N] = {0}, g[N], state[2 * N] = {0};
    double start = quadratic_loss(p, NULL, N);
    for (long t = 1; t <= 3000; t++) {
        quadratic_loss(p, g, N);
        lt_optim_step(&cfg, p, g, state, N, t, lt_schedule_lr(&sched, t));
    }
    double end = quadratic_loss(p, NULL, N);
    cr_assert_lt(end, 1e-10 * start, "%s: loss %g -> %g", lt_optim_kind_name(kind), start, end);
    for (int i = 0; i < N; i++)
        cr_assert_lt(fabs(p[i] - (1.0 - 0.3 * i)), 1e-2, "p[%d] = %g", i, p[i]);
}

Test(optim, adam_minimises_quadratic) { minimise_quadratic(LT_OPTIM_ADAM); }

Test(optim, radam_minimises_quadratic) { minimise_quadratic(LT_OPTIM_RADAM); }

Test(optim, weight_decay_shrinks_parameters_without_gradient)
{
    /* Zero gradients: m = v = 0, so only the decay acts:
     * p_t = p_0 (1 - lr wd)^t, for both kinds and both RAdam regimes. */
    for (int k = 0; k < 2; k++) {
        lt_optim_kind kind = k == 0 ? LT_OPTIM_ADAM : LT_OPTIM_RADAM;
        lt_optim_config cfg = lt_optim_defaults(kind);
        cfg.weight_decay = 0.5;
        float p[2] = {2.0f, -3.0f}, g[2] = {0, 0}, state[4] = {0};
        for (long t = 1; t <= 10; t++)
            lt_optim_step(&cfg, p, g, state, 2, t, 0.1);
        double factor = pow(1 - 0.1 * 0.5, 10);
        cr_assert_lt(fabs(p[0] - 2.0 * factor), 1e-5, "%s", lt_optim_kind_name(kind));
        cr_assert_lt(fabs(p[1] + 3.0 * factor), 1e-5, "%s", lt_optim_kind_name(kind));

        cfg.weight_decay = 0;
        float q[2] = {2.0f, -3.0f}, state2[4] = {0};
        for (long t = 1; t <= 10; t++)
            lt_optim_step(&cfg, q, g, state2, 2, t, 0.1);
        cr_assert(q[0] == 2.0f && q[1] == -3.0f, "no decay by default");
    }
}

Test(optim, config_parsing_and_validation)
{
    lt_optim_kind kind;
    cr_assert_eq(lt_optim_parse_kind(&kind, "adam", "--optimizer"), LT_OK);
    cr_assert_eq(kind, LT_OPTIM_ADAM);
    cr_assert_eq(lt_optim_parse_kind(&kind, "radam", "--optimizer"), LT_OK);
    cr_assert_eq(kind, LT_OPTIM_RADAM);
    cr_assert_str_eq(lt_optim_kind_name(kind), "radam");
    const char *bad[] = {"sgd", "Adam", "", "radam "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(lt_optim_parse_kind(&kind, bad[i], "--optimizer"), LT_E_USAGE);
        cr_assert(strstr(lt_last_error(), "--optimizer") != NULL, "%s", lt_last_error());
    }
    cr_assert_eq(lt_optim_state_floats(LT_OPTIM_ADAM, 100), 200u);
    cr_assert_eq(lt_optim_state_floats(LT_OPTIM_RADAM, 100), 200u);

    lt_optim_config cfg = lt_optim_defaults(LT_OPTIM_RADAM);
    cr_assert(cfg.lr == 1e-3 && cfg.beta1 == 0.9 && cfg.beta2 == 0.999 && cfg.eps == 1e-8 &&
              cfg.weight_decay == 0);
    cr_assert_eq(lt_optim_validate(&cfg), LT_OK);
    lt_optim_config broken[5] = {cfg, cfg, cfg, cfg, cfg};
    broken[0].beta1 = 1.0;
    broken[1].beta2 = -0.1;
    broken[2].eps = -1;
    broken[3].lr = 0;
    broken[4].weight_decay = NAN;
    const char *field[5] = {"beta1", "beta2", "eps", "lr", "weight_decay"};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(lt_optim_validate(&broken[i]), LT_E_USAGE, "%s", field[i]);
        cr_assert(strstr(lt_last_error(), field[i]) != NULL, "%s", lt_last_error());
    }
}

/* ---- clipping ---- */

static double ref_norm(const float *g, size_t n)
{
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (long double)g[i] * g[i];
    return (double)sqrtl(sum);
}

Test(clip, scales_to_max_norm_and_returns_the_norm)
{
    enum { N = 1000 };
    float g[N];
    lt_rng rng;
    lt_rng_seed(&rng, 7, 0);
    lt_rng_fill_normal(&rng, g, N, 2.0f);
    double before = ref_norm(g, N);
    double norm = lt_clip_grad_norm(g, N, before / 3);
    cr_assert_lt(fabs(norm - before), 1e-12 * before, "norm %.17g vs %.17g", norm, before);
    double after = ref_norm(g, N);
    cr_assert_lt(fabs(after - before / 3), 1e-6 * before / 3, "after %g", after);
}

Test(clip, leaves_small_gradients_untouched)
{
    enum { N = 257 };
    float g[N], copy[N];
    lt_rng rng;
    lt_rng_seed(&rng, 8, 0);
    lt_rng_fill_normal(&rng, g, N, 1.0f);
    memcpy(copy, g, sizeof g);
    double norm = ref_norm(g, N);
    cr_assert_lt(fabs(lt_clip_grad_norm(g, N, 2 * norm) - norm), 1e-12 * norm);
    cr_assert(memcmp(g, copy, sizeof g) == 0, "below max_norm: must not change");
    cr_assert_lt(fabs(lt_clip_grad_norm(g, N, 0) - norm), 1e-12 * norm);
    cr_assert(memcmp(g, copy, sizeof g) == 0, "max_norm 0: measure only");
    cr_assert(lt_clip_grad_norm(g, 0, 1.0) == 0.0);

    g[5] = NAN;
    memcpy(copy, g, sizeof g);
    cr_assert(isnan(lt_clip_grad_norm(g, N, 1e-3)));
    cr_assert(memcmp(g, copy, sizeof g) == 0, "NaN norm: reported, gradients left alone");
}

Test(clip, same_bits_for_one_and_two_threads)
{
    /* Big enough for the parallel path, odd so chunks are uneven. */
    const size_t n = (1u << 20) + 37;
    float *a, *b, *c;
    cr_assert_eq(lt_mem_alloc((void **)&a, n * sizeof *a, "a"), LT_OK);
    cr_assert_eq(lt_mem_alloc((void **)&b, n * sizeof *b, "b"), LT_OK);
    cr_assert_eq(lt_mem_alloc((void **)&c, n * sizeof *c, "c"), LT_OK);
    lt_rng rng;
    lt_rng_seed(&rng, 9, 0);
    lt_rng_fill_normal(&rng, a, (long)n, 1.0f);
    /* Wide dynamic range makes the sum sensitive to its order. */
    for (size_t i = 0; i < n; i += 101)
        a[i] *= 1e4f;
    memcpy(b, a, n * sizeof *a);
    memcpy(c, a, n * sizeof *a);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    double norm1 = lt_clip_grad_norm(a, n, 100.0);
    omp_set_num_threads(2);
    double norm2 = lt_clip_grad_norm(b, n, 100.0);
    omp_set_num_threads(3);
    double norm3 = lt_clip_grad_norm(c, n, 100.0);
    omp_set_num_threads(saved);
    cr_assert(memcmp(&norm1, &norm2, sizeof norm1) == 0, "%.17g vs %.17g", norm1, norm2);
    cr_assert(memcmp(&norm1, &norm3, sizeof norm1) == 0, "%.17g vs %.17g", norm1, norm3);
    cr_assert(memcmp(a, b, n * sizeof *a) == 0);
    cr_assert(memcmp(a, c, n * sizeof *a) == 0);
    lt_mem_free(a);
    lt_mem_free(b);
    lt_mem_free(c);
}

/* ---- schedule ---- */

static void assert_lr(const lt_schedule *s, long step, double expected)
{
    double lr = lt_schedule_lr(s, step);
    cr_assert_lt(fabs(lr - expected), 1e-12 * expected, "step %ld: lr %.17g, expected %.17g",
                 step, lr, expected);
}

Test(schedule, paper_drop_after_3000_updates)
{
    lt_schedule s;
    cr_assert_eq(lt_schedule_init(&s, 1e-3, 0), LT_OK);
    cr_assert_eq(lt_schedule_add_drop(&s, 3000, 0.1), LT_OK);
    assert_lr(&s, 1, 1e-3);
    assert_lr(&s, 3000, 1e-3);
    assert_lr(&s, 3001, 1e-4);
    assert_lr(&s, 1000000, 1e-4);
    /* Drops compound, and can be added while running (halve on plateau). */
    cr_assert_eq(lt_schedule_add_drop(&s, 4500, 0.5), LT_OK);
    assert_lr(&s, 4500, 1e-4);
    assert_lr(&s, 4501, 5e-5);
    cr_assert_eq(lt_schedule_add_drop(&s, 4500, 0.5), LT_E_USAGE, "not increasing");
    cr_assert_eq(lt_schedule_add_drop(&s, 5000, 0), LT_E_USAGE);
    cr_assert_eq(lt_schedule_add_drop(&s, 5000, INFINITY), LT_E_USAGE);
}

Test(schedule, linear_warmup)
{
    lt_schedule s;
    cr_assert_eq(lt_schedule_init(&s, 1e-3, 100), LT_OK);
    cr_assert_eq(lt_schedule_add_drop(&s, 200, 0.1), LT_OK);
    assert_lr(&s, 1, 1e-5);
    assert_lr(&s, 50, 5e-4);
    assert_lr(&s, 99, 9.9e-4);
    assert_lr(&s, 100, 1e-3);
    assert_lr(&s, 101, 1e-3);
    assert_lr(&s, 200, 1e-3);
    assert_lr(&s, 201, 1e-4);
}

Test(schedule, parse_drops_and_refuse_bad_ones)
{
    lt_schedule s;
    cr_assert_eq(lt_schedule_init(&s, 1e-3, 0), LT_OK);
    cr_assert_eq(lt_schedule_parse_drops(&s, "3000:0.1,6000:0.5", "--lr-drops"), LT_OK);
    cr_assert_eq(s.drop_count, 2);
    assert_lr(&s, 6000, 1e-4);
    assert_lr(&s, 6001, 5e-5);
    cr_assert_eq(lt_schedule_init(&s, 1e-3, 0), LT_OK);
    cr_assert_eq(lt_schedule_parse_drops(&s, "", "--lr-drops"), LT_OK);
    cr_assert_eq(s.drop_count, 0);

    const char *bad[] = {"3000", "3000:", ":0.1", "3000:0", "6000:0.1,3000:0.1", "a:b",
                         "3000:0.1,", "3000:0.1;6000:0.5", "0:0.5", "-5:0.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(lt_schedule_init(&s, 1e-3, 0), LT_OK);
        cr_assert_eq(lt_schedule_parse_drops(&s, bad[i], "--lr-drops"), LT_E_USAGE, "'%s'",
                     bad[i]);
        cr_assert(strstr(lt_last_error(), "--lr-drops") != NULL, "%s", lt_last_error());
    }
    cr_assert_eq(lt_schedule_init(&s, 1e-3, 0), LT_OK);
    for (int i = 0; i < LT_SCHEDULE_MAX_DROPS; i++)
        cr_assert_eq(lt_schedule_add_drop(&s, 10 * (i + 1), 0.9), LT_OK);
    cr_assert_eq(lt_schedule_add_drop(&s, 100000, 0.9), LT_E_USAGE, "too many");

    cr_assert_eq(lt_schedule_init(&s, 0, 0), LT_E_USAGE);
    cr_assert_eq(lt_schedule_init(&s, NAN, 0), LT_E_USAGE);
    cr_assert_eq(lt_schedule_init(&s, 1e-3, -1), LT_E_USAGE);
}
