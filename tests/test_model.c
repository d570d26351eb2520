/* Tests of the transformer stack and the training engine: whole-model
 * gradients for every attention variant, determinism, a golden run, resume,
 * and bad checkpoints. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "datasets/copy.h"
#include "model/train.h"
#include "nn/xent.h"

static lt_train_config small_config(const char *variant, int causal, float dropout)
{
    lt_train_config c;
    memset(&c, 0, sizeof c);
    c.model.vocab = LT_COPY_VOCAB;
    c.model.classes = LT_COPY_VOCAB;
    c.model.layers = 2;
    c.model.heads = 2;
    c.model.head_dim = 4;
    c.model.ffn = 12;
    c.model.dropout = dropout;
    c.model.activation = LT_ACT_GELU;
    c.model.attn = lt_attn_default_config(variant);
    c.model.attn.causal = causal;
    c.model.attn.proj_k = 5;
    c.model.attn.n_max = 16;
    c.model.max_batch = 3;
    c.model.seq_len = 11;
    c.optim = lt_optim_defaults(LT_OPTIM_RADAM);
    c.optim.lr = 3e-3;
    cr_assert_eq(lt_schedule_init(&c.schedule, 3e-3, 0), LT_OK);
    c.clip_norm = 1.0;
    c.seed = 17;
    return c;
}

typedef struct batch {
    int32_t inputs[3 * 11], targets[3 * 11];
    float mask[3 * 11];
} batch;

static void make_batch(batch *b, uint64_t step)
{
    lt_copy_task task;
    cr_assert_eq(lt_copy_task_init(&task, 11), LT_OK);
    lt_copy_batch(&task, 5, step * 3, 3, b->inputs, b->targets, b->mask);
}

/* Loss of a training forward (dropout masks fixed by seed and step). */
static double model_loss(lt_model *m, const batch *b)
{
    double loss;
    cr_assert_eq(lt_model_forward(m, b->inputs, 3, 1, 99, 1), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_xent_forward(&loss, NULL, NULL, m->logits, b->targets, b->mask, 33,
                                 LT_COPY_VOCAB),
                 LT_OK);
    return loss;
}

/* For random directions u confined to one parameter tensor at a time, the
 * central difference of the loss along u must match grad . u. The loss is
 * summed in double, so float32 forward noise stays far below the signal at
 * h = 1e-2. */
static void check_model_gradient(const char *variant, int causal)
{
    lt_train_config c = small_config(variant, causal, 0.2f);
    lt_model m;
    cr_assert_eq(lt_model_alloc(&m, &c.model, lt_threads_get(), c.seed), LT_OK, "%s",
                 lt_last_error());
    batch b;
    make_batch(&b, 0);
    model_loss(&m, &b);
    memset(m.d_logits, 0, 33 * LT_COPY_VOCAB * sizeof(float));
    cr_assert_eq(lt_xent_backward(m.d_logits, m.logits, b.targets, b.mask, 33, LT_COPY_VOCAB),
                 LT_OK);
    lt_model_zero_grads(&m);
    cr_assert_eq(lt_model_backward(&m), LT_OK, "%s", lt_last_error());

    /* Tensor boundaries: every offset of the layout, in order. */
    size_t bounds[64];
    int nb = 0;
    bounds[nb++] = m.tok_emb;
    for (int l = 0; l < c.model.layers; l++) {
        const lt_layer_offsets *o = &m.layer[l];
        size_t offs[] = {o->ln1_gamma, o->ln1_beta, o->w_qkv, o->b_qkv, o->w_o, o->b_o,
                         o->attn_params, o->ln2_gamma, o->ln2_beta, o->w_ff1, o->b_ff1,
                         o->w_ff2, o->b_ff2};
        for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
            bounds[nb++] = offs[i];
    }
    bounds[nb++] = m.lnf_gamma;
    bounds[nb++] = m.lnf_beta;
    bounds[nb++] = m.w_out;
    bounds[nb++] = m.b_out;
    bounds[nb++] = m.param_count;

    float *u;
    cr_assert_eq(lt_mem_alloc((void **)&u, m.param_count * sizeof(float), "direction"), LT_OK);
    float *saved;
    cr_assert_eq(lt_mem_alloc((void **)&saved, m.param_count * sizeof(float), "saved"), LT_OK);
    memcpy(saved, m.params, m.param_count * sizeof(float));
    lt_rng rng;
    lt_rng_seed(&rng, 3, 0);
    int checked = 0;
    for (int t = 0; t + 1 < nb; t++) {
        size_t lo = bounds[t], hi = bounds[t + 1];
        if (hi == lo)
            continue; /* e.g. no attention parameters */
        memset(u, 0, m.param_count * sizeof(float));
        lt_rng_fill_normal(&rng, u + lo, (long)(hi - lo), 1.0f);
        double analytic = 0, norm_g = 0;
        for (size_t i = lo; i < hi; i++) {
            analytic += (double)m.grads[i] * u[i];
            norm_g += (double)m.grads[i] * m.grads[i];
        }
        const double h = 1e-2;
        for (size_t i = lo; i < hi; i++)
            m.params[i] = (float)(saved[i] + h * u[i]);
        double plus = model_loss(&m, &b);
        for (size_t i = lo; i < hi; i++)
            m.params[i] = (float)(saved[i] - h * u[i]);
        double minus = model_loss(&m, &b);
        memcpy(m.params, saved, m.param_count * sizeof(float));
        double numeric = (plus - minus) / (2 * h);
        /* Error relative to the tensor's gradient norm times sqrt(size):
         * the typical size of grad . u for a random u. */
        double scale = sqrt(norm_g) + 1e-3;
        cr_assert_lt(fabs(numeric - analytic) / scale, 2e-2,
                     "%s causal=%d tensor %d: numeric %g analytic %g", variant, causal, t,
                     numeric, analytic);
        checked++;
    }
    cr_assert_gt(checked, 20);
    lt_mem_free(u);
    lt_mem_free(saved);
    lt_model_free(&m);
}

Test(model, gradient_softmax_causal) { check_model_gradient("softmax", 1); }
Test(model, gradient_softmax_noncausal) { check_model_gradient("softmax", 0); }
Test(model, gradient_linear_causal) { check_model_gradient("linear", 1); }
Test(model, gradient_linear_noncausal) { check_model_gradient("linear", 0); }
Test(model, gradient_linformer) { check_model_gradient("linformer", 0); }

Test(model, plan_matches_allocation_and_budget_refuses)
{
    lt_train_config c = small_config("softmax", 1, 0.0f);
    size_t planned;
    cr_assert_eq(lt_trainer_plan(&c, lt_threads_get(), &planned), LT_OK);
    size_t before = lt_mem_current();
    lt_trainer t;
    cr_assert_eq(lt_trainer_init(&t, &c, lt_threads_get()), LT_OK, "%s", lt_last_error());
    cr_assert_eq(lt_mem_current() - before, planned, "the plan is exact");
    lt_trainer_free(&t);
    cr_assert_eq(lt_mem_current(), before);
    lt_mem_set_budget(before + planned - 1);
    cr_assert_eq(lt_trainer_init(&t, &c, lt_threads_get()), LT_E_BUDGET);
    cr_assert_eq(lt_mem_current(), before, "nothing allocated when refused");
    lt_mem_set_budget(0);
}

Test(model, bad_configurations)
{
    lt_train_config c = small_config("linformer", 1, 0.0f);
    lt_trainer t;
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_E_USAGE, "causal linformer");
    c = small_config("linear", 1, 1.0f);
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_E_USAGE, "dropout 1");
    c = small_config("linear", 1, 0.0f);
    c.model.heads = 0;
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_E_USAGE);
    cr_assert(strstr(lt_last_error(), "--heads") != NULL, "%s", lt_last_error());
}

/* Losses of `steps` updates starting from the trainer's current step. */
static void run_updates(lt_trainer *t, int steps, double *losses)
{
    for (int i = 0; i < steps; i++) {
        batch b;
        make_batch(&b, (uint64_t)t->step);
        lt_batch_result r;
        cr_assert_eq(lt_trainer_step(t, b.inputs, b.targets, b.mask, 3, &r), LT_OK, "%s",
                     lt_last_error());
        losses[i] = r.loss;
    }
}

Test(train, golden_first_losses_and_learning)
{
    lt_threads_set(1);
    lt_train_config c = small_config("linear", 1, 0.1f);
    lt_trainer t;
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_OK, "%s", lt_last_error());
    enum { UPDATES = 200 };
    double losses[UPDATES];
    run_updates(&t, UPDATES, losses);
    /* Recorded from this implementation with seed 17, 1 thread: a change in
     * any layer, initialisation or the optimizer moves these. */
    const double golden[3] = {2.782328256, 2.602427124, 2.717394756};
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(losses[i], golden[i], 1e-5, "update %d: %.9f %.9f %.9f", i + 1,
                           losses[0], losses[1], losses[2]);
    /* Initial loss near ln(12) (uniform over the vocabulary), then falling. */
    cr_assert_lt(fabs(losses[0] - log(12.0)), 0.7, "%f", losses[0]);
    double late = 0;
    for (int i = UPDATES - 20; i < UPDATES; i++)
        late += losses[i] / 20;
    cr_assert_lt(late, losses[0] - 0.3, "first %f, late %f", losses[0], late);
    lt_trainer_free(&t);
}

Test(train, same_numbers_for_one_and_two_threads)
{
    double losses[2][5];
    for (int threads = 1; threads <= 2; threads++) {
        lt_threads_set(threads);
        lt_train_config c = small_config("softmax", 1, 0.1f);
        lt_trainer t;
        cr_assert_eq(lt_trainer_init(&t, &c, threads), LT_OK);
        run_updates(&t, 5, losses[threads - 1]);
        lt_trainer_free(&t);
    }
    for (int i = 0; i < 5; i++)
        cr_assert_float_eq(losses[0][i], losses[1][i], 1e-5, "update %d", i + 1);
}

static void temp_path(char *buf, size_t size, char *dir, const char *name)
{
    strcpy(dir, "/tmp/lt_train_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(buf, size, "%s/%s", dir, name);
}

Test(train, resume_continues_the_identical_curve)
{
    lt_threads_set(2);
    lt_train_config c = small_config("linear", 1, 0.1f);
    lt_trainer t;
    double straight[12], resumed[12];
    cr_assert_eq(lt_trainer_init(&t, &c, 2), LT_OK);
    run_updates(&t, 12, straight);
    lt_trainer_free(&t);

    char dir[64], path[128];
    temp_path(path, sizeof path, dir, "run.ckpt");
    cr_assert_eq(lt_trainer_init(&t, &c, 2), LT_OK);
    run_updates(&t, 5, resumed);
    cr_assert_eq(lt_trainer_save(&t, path), LT_OK, "%s", lt_last_error());
    lt_trainer_free(&t);

    cr_assert_eq(lt_trainer_init(&t, &c, 2), LT_OK);
    cr_assert_eq(lt_trainer_load(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.step, 5);
    run_updates(&t, 7, resumed + 5);
    lt_trainer_free(&t);
    for (int i = 0; i < 12; i++)
        cr_assert_eq(resumed[i], straight[i], "update %d: %.17g vs %.17g", i + 1, resumed[i],
                     straight[i]);
}

Test(train, bad_checkpoints_are_refused_clearly)
{
    lt_train_config c = small_config("linear", 1, 0.0f);
    lt_trainer t;
    char dir[64], path[128];
    temp_path(path, sizeof path, dir, "a.ckpt");
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_OK);
    cr_assert_eq(lt_trainer_save(&t, path), LT_OK);
    lt_trainer_free(&t);

    /* Another configuration: the message names the first setting that differs. */
    lt_train_config other = small_config("linear", 1, 0.0f);
    other.model.ffn = 13;
    cr_assert_eq(lt_trainer_init(&t, &other, 1), LT_OK);
    cr_assert_eq(lt_trainer_load(&t, path), LT_E_INPUT);
    cr_assert(strstr(lt_last_error(), "ffn=12") && strstr(lt_last_error(), "ffn=13"), "%s",
              lt_last_error());
    lt_trainer_free(&t);

    /* A truncated file and a missing one. */
    FILE *f = fopen(path, "r+b");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(path, size / 2), 0);
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_OK);
    cr_assert_eq(lt_trainer_load(&t, path), LT_E_INPUT);
    cr_assert(strstr(lt_last_error(), path) != NULL, "%s", lt_last_error());
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.ckpt", dir);
    cr_assert_eq(lt_trainer_load(&t, missing), LT_E_IO);
    lt_trainer_free(&t);

    /* An unwritable path leaves nothing behind. */
    char blocked[160];
    snprintf(blocked, sizeof blocked, "%s/a.ckpt/inside.ckpt", dir);
    cr_assert_eq(lt_trainer_init(&t, &c, 1), LT_OK);
    cr_assert_eq(lt_trainer_save(&t, blocked), LT_E_IO);
    lt_trainer_free(&t);
    DIR *d = opendir(dir);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        entries += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(entries, 1);
}
