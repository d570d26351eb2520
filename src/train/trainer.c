#include "train/trainer.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dist.h"
#include "core/mem.h"
#include "core/threads.h"
#include "io/checkpoint.h"

static int sharded(const lt_train_config *config) { return config->shards > 1; }

int lt_trainer_local_shards(const lt_train_config *config)
{
    return sharded(config) ? config->shards / lt_dist_size() : 1;
}

lt_status lt_train_check_config(const lt_train_config *config)
{
    int shards = config->shards > 1 ? config->shards : 1, ranks = lt_dist_size();
    if (shards & (shards - 1))
        return lt_fail(LT_E_USAGE, "shards: expected a power of two, got %d", shards);
    if (shards % ranks != 0)
        return lt_fail(LT_E_USAGE,
                       "shards: %d shards cannot be spread over %d ranks; use a multiple of "
                       "the rank count (each rank computes whole shards)",
                       shards, ranks);
    LT_TRY(lt_model_check_config(&config->model));
    LT_TRY(lt_loss_check(&config->loss));
    if (lt_loss_outputs(&config->loss) != config->model.classes)
        return lt_fail(LT_E_USAGE, "classes: the %s loss reads %d outputs per position, the "
                                   "model has %d",
                       lt_loss_name(config->loss.kind), lt_loss_outputs(&config->loss),
                       config->model.classes);
    LT_TRY(lt_optim_validate(&config->optim));
    if (!(config->clip_norm >= 0) || !isfinite(config->clip_norm))
        return lt_fail(LT_E_USAGE, "clip_norm: expected a finite norm >= 0, got %g",
                       config->clip_norm);
    return LT_OK;
}

static size_t loss_workspace_bytes(const lt_train_config *config, int threads)
{
    return lt_loss_workspace_bytes(&config->loss, config->model.max_batch, config->model.seq_len,
                                   threads);
}

lt_status lt_trainer_plan(const lt_train_config *config, int threads, size_t *bytes)
{
    size_t param_count;
    LT_TRY(lt_train_check_config(config));
    LT_TRY(lt_model_plan(&config->model, LT_MODEL_TRAIN, threads, bytes, &param_count));
    *bytes += lt_mem_rounded(lt_optim_state_floats(config->optim.kind, param_count) *
                             sizeof(float));
    size_t loss_bytes = loss_workspace_bytes(config, threads);
    if (loss_bytes > 0)
        *bytes += lt_mem_rounded(loss_bytes);
    *bytes += lt_ckpt_writer_bytes();
    if (sharded(config) || lt_dist_size() > 1) {
        int local = sharded(config) ? lt_trainer_local_shards(config) : 0;
        *bytes += (size_t)local * lt_mem_rounded(param_count * sizeof(float)) +
                  lt_mem_rounded(param_count * sizeof(float));
    }
    return LT_OK;
}

static size_t state_bytes(const lt_trainer *t)
{
    return lt_optim_state_floats(t->config.optim.kind, t->model.param_count) * sizeof(float);
}

lt_status lt_trainer_init(lt_trainer *t, const lt_train_config *config, int threads)
{
    memset(t, 0, sizeof *t);
    size_t planned;
    LT_TRY(lt_trainer_plan(config, threads, &planned));
    LT_TRY(lt_mem_plan(planned, "training (model, gradients, activations, optimizer state, "
                                "checkpoint buffers)"));
    t->config = *config;
    LT_TRY(lt_plateau_init(&t->plateau, config->plateau_factor));
    LT_TRY(lt_model_alloc(&t->model, &config->model, LT_MODEL_TRAIN, threads, config->seed));
    lt_status status = lt_mem_calloc((void **)&t->optim_state, state_bytes(t), "optimizer state");
    size_t loss_bytes = loss_workspace_bytes(config, threads);
    if (status == LT_OK && loss_bytes > 0)
        status = lt_mem_alloc(&t->loss_workspace, loss_bytes, "loss workspace");
    size_t params = t->model.param_count * sizeof(float);
    if (status == LT_OK && sharded(config))
        status = lt_mem_alloc((void **)&t->shard_grads,
                              (size_t)lt_trainer_local_shards(config) * lt_mem_rounded(params),
                              "shard gradients");
    if (status == LT_OK && (sharded(config) || lt_dist_size() > 1))
        status = lt_mem_alloc(&t->reduce_scratch, params, "reduction scratch");
    if (status != LT_OK)
        lt_trainer_free(t);
    return status;
}

void lt_trainer_free(lt_trainer *t)
{
    lt_model_free(&t->model);
    lt_mem_free(t->optim_state);
    lt_mem_free(t->loss_workspace);
    lt_mem_free(t->shard_grads);
    lt_mem_free(t->reduce_scratch);
    memset(t, 0, sizeof *t);
}

/* Forward and loss; fills d_logits when `training`. */
static lt_status forward_loss(lt_trainer *t, const lt_batch *batch, int training,
                              uint64_t seed, lt_batch_result *result)
{
    lt_model *m = &t->model;
    memset(result, 0, sizeof *result);
    LT_TRY(lt_model_forward(m, batch, training, seed, (uint64_t)t->step + 1));
    if (training)
        lt_zero_floats(m->d_logits, (size_t)batch->batch * batch->n * m->config.classes);
    lt_loss_result r;
    LT_TRY(lt_loss_eval(&t->config.loss, &r, training ? m->d_logits : NULL, t->loss_workspace,
                        m->logits, batch));
    result->loss = r.loss;
    result->sum = r.sum;
    result->counted = r.counted;
    result->correct = r.correct;
    return LT_OK;
}

/* Stride between shards in the shard buffer. */
static size_t shard_stride(const lt_trainer *t)
{
    return lt_mem_rounded(t->model.param_count * sizeof(float)) / sizeof(float);
}

/* Sums `count` (a power of two) arrays of n floats, `stride` apart, into
 * the first, in the balanced binary tree the ranks continue. */
static void tree_sum_local(float *arrays, size_t stride, int count, size_t n)
{
    for (int width = 1; width < count; width *= 2)
        for (int i = 0; i + width < count; i += 2 * width) {
            float *a = arrays + (size_t)i * stride;
            const float *b = arrays + (size_t)(i + width) * stride;
#pragma omp parallel for schedule(static) if (n > 65536)
            for (size_t k = 0; k < n; k++)
                a[k] = a[k] + b[k];
        }
}

/* The sharded update's gradient: each local shard alone, as a sum over its
 * counted units (so shards add), summed in the fixed tree within this rank
 * and across ranks, then divided by the global count. Loss statistics go
 * through the same tree. */
static lt_status sharded_gradient(lt_trainer *t, const lt_batch *batch, lt_batch_result *result)
{
    lt_model *m = &t->model;
    const int local = lt_trainer_local_shards(&t->config), per = m->config.max_batch;
    const size_t n = m->param_count, stride = shard_stride(t);
    if (batch->batch != local * per)
        return lt_fail(LT_E_INPUT, "sharded update: %d sequences, expected %d shards of %d",
                       batch->batch, local, per);
    double stats[64][3]; /* sum, counted, correct per local shard */
    LT_ASSERT(local <= 64);
    for (int i = 0; i < local; i++) {
        lt_batch shard = lt_batch_slice(batch, &m->config, i * per, per);
        int global = lt_dist_rank() * local + i;
        /* each shard draws its own dropout masks */
        uint64_t seed = t->config.seed + 0x9E3779B97F4A7C15ull * (uint64_t)(global + 1);
        lt_batch_result r;
        LT_TRY(forward_loss(t, &shard, 1, seed, &r));
        /* the mean's gradient, times the count: the sum's gradient */
        size_t logits = (size_t)shard.batch * shard.n * m->config.classes;
        float count = (float)r.counted;
        for (size_t k = 0; k < logits; k++)
            m->d_logits[k] *= count;
        lt_model_zero_grads(m);
        LT_TRY(lt_model_backward(m));
        memcpy(t->shard_grads + (size_t)i * stride, m->grads, n * sizeof(float));
        stats[i][0] = r.sum;
        stats[i][1] = (double)r.counted;
        stats[i][2] = (double)r.correct;
    }
    for (int width = 1; width < local; width *= 2)
        for (int i = 0; i + width < local; i += 2 * width)
            for (int k = 0; k < 3; k++)
                stats[i][k] = stats[i][k] + stats[i + width][k];
    double scratch[3];
    LT_TRY(lt_dist_sum_f64(stats[0], scratch, 3));
    tree_sum_local(t->shard_grads, stride, local, n);
    LT_TRY(lt_dist_sum_f32(t->shard_grads, t->reduce_scratch, n));
    const float inv = stats[0][1] > 0 ? (float)(1.0 / stats[0][1]) : 0.0f;
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t k = 0; k < n; k++)
        m->grads[k] = t->shard_grads[k] * inv;
    result->sum = stats[0][0];
    result->counted = (long)stats[0][1];
    result->correct = (long)stats[0][2];
    result->loss = stats[0][1] > 0 ? stats[0][0] / stats[0][1] : 0.0;
    return LT_OK;
}

lt_status lt_trainer_step(lt_trainer *t, const lt_batch *batch, lt_batch_result *result)
{
    lt_model *m = &t->model;
    if (sharded(&t->config)) {
        memset(result, 0, sizeof *result);
        LT_TRY(sharded_gradient(t, batch, result));
    } else {
        LT_TRY(forward_loss(t, batch, 1, t->config.seed, result));
        lt_model_zero_grads(m);
        LT_TRY(lt_model_backward(m));
    }
    result->grad_norm = lt_clip_grad_norm(m->grads, m->param_count, t->config.clip_norm);
    if (!isfinite(result->grad_norm))
        return lt_fail(LT_E_NUMERIC,
                       "the gradient norm became %g at update %ld (loss %g): the run diverged; "
                       "try a lower learning rate",
                       result->grad_norm, t->step + 1, result->loss);
    long next = t->step + 1;
    result->lr = lt_schedule_lr(&t->config.schedule, next) * t->plateau.scale;
    lt_optim_step(&t->config.optim, m->params, m->grads, t->optim_state, m->param_count, next,
                  result->lr);
    t->step = next;
    return LT_OK;
}

lt_status lt_trainer_evaluate(lt_trainer *t, const lt_batch *batch, lt_batch_result *result)
{
    return forward_loss(t, batch, 0, t->config.seed, result);
}

void lt_trainer_plateau(lt_trainer *t, double metric) { lt_plateau_update(&t->plateau, metric); }

lt_status lt_trainer_broadcast(lt_trainer *t)
{
    if (lt_dist_size() == 1)
        return LT_OK;
    int64_t step = t->step;
    LT_TRY(lt_dist_broadcast(t->model.params, t->model.param_count * sizeof(float)));
    LT_TRY(lt_dist_broadcast(t->optim_state, state_bytes(t)));
    LT_TRY(lt_dist_broadcast(&step, sizeof step));
    LT_TRY(lt_dist_broadcast(&t->plateau, sizeof t->plateau));
    t->step = (long)step;
    return LT_OK;
}

void lt_train_config_describe(const lt_train_config *c, char *buf, size_t size)
{
    lt_train_config_describe_until(c, LONG_MAX, buf, size);
}

void lt_train_config_describe_until(const lt_train_config *c, long step, char *buf, size_t size)
{
    const lt_model_config *m = &c->model;
    const lt_attn_config *a = &m->attn;
    static const char *const inputs[] = {"tokens", "features"};
    static const char *const positions[] = {"add", "concat", "none"};
    static const char *const bodies[] = {"transformer", "bilstm"};
    int n = snprintf(buf, size,
                     "input=%s vocab=%d features=%d stack=%d pos=%s pos_dim=%d body=%s "
                     "classes=%d layers=%d heads=%d head_dim=%d ffn=%d hidden=%d dropout=%.9g "
                     "activation=%s variant=%s kernel=%s causal=%d feature_map=%s eps=%.9g "
                     "proj_k=%d n_max=%d batch=%d seq=%d loss=%s mixtures=%d max_labels=%d "
                     "optimizer=%s lr=%.17g beta1=%.17g beta2=%.17g adam_eps=%.17g "
                     "weight_decay=%.17g warmup=%ld clip=%.17g seed=%llu threads=%d shards=%d",
                     inputs[m->input == LT_INPUT_FEATURES], m->vocab, m->features, m->stack,
                     positions[m->pos % 3], m->pos_dim, bodies[m->body == LT_BODY_BILSTM],
                     m->classes, m->layers, m->heads, m->head_dim, m->ffn, m->hidden,
                     (double)m->dropout, m->activation == LT_ACT_GELU ? "gelu" : "relu",
                     a->variant != NULL ? a->variant : "none",
                     a->kernel != NULL ? a->kernel : "default", a->causal,
                     lt_attn_feature_map_name(a->feature_map), (double)a->eps, a->proj_k,
                     a->n_max, m->max_batch, m->seq_len, lt_loss_name(c->loss.kind),
                     c->loss.mixtures, c->loss.max_labels, lt_optim_kind_name(c->optim.kind),
                     c->schedule.base_lr, c->optim.beta1, c->optim.beta2, c->optim.eps,
                     c->optim.weight_decay, c->schedule.warmup_steps, c->clip_norm,
                     (unsigned long long)c->seed, c->threads, c->shards > 1 ? c->shards : 1);
    /* Update u runs at the rate of the drops with after_step < u: only
     * those have acted on a trainer at `step`. */
    for (int i = 0; i < c->schedule.drop_count && c->schedule.drops[i].after_step < step &&
                    n > 0 && (size_t)n < size;
         i++)
        n += snprintf(buf + n, size - (size_t)n, " drop%d=%ld:%.17g", i,
                      c->schedule.drops[i].after_step, c->schedule.drops[i].factor);
    char extra[128];
    if (n > 0 && (size_t)n < size && m->body == LT_BODY_TRANSFORMER)
        n += snprintf(buf + n, size - (size_t)n, "%s", lt_attn_config_extra(a, extra, sizeof extra));
    if (c->plateau_factor > 0 && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " plateau=%.17g", c->plateau_factor);
}

enum { DESCRIPTION_BYTES = 2048 };

lt_status lt_trainer_write(const lt_trainer *t, lt_ckpt_writer *w)
{
    char description[DESCRIPTION_BYTES];
    lt_train_config_describe_until(&t->config, t->step, description, sizeof description);
    int64_t step = t->step;
    LT_TRY(lt_ckpt_writer_add(w, "config", description, strlen(description)));
    LT_TRY(lt_ckpt_writer_add(w, "step", &step, sizeof step));
    LT_TRY(lt_ckpt_writer_add(w, "params", t->model.params,
                              t->model.param_count * sizeof(float)));
    LT_TRY(lt_ckpt_writer_add(w, "optimizer", t->optim_state, state_bytes(t)));
    LT_TRY(lt_ckpt_writer_add(w, "lr_scale", &t->plateau.scale, sizeof t->plateau.scale));
    return lt_ckpt_writer_add(w, "plateau_best", &t->plateau.best, sizeof t->plateau.best);
}

lt_status lt_trainer_save(const lt_trainer *t, const char *path)
{
    lt_ckpt_writer *w;
    LT_TRY(lt_ckpt_writer_open(&w, path));
    lt_status status = lt_trainer_write(t, w);
    if (status != LT_OK) {
        lt_ckpt_writer_abort(w);
        return status;
    }
    return lt_ckpt_writer_commit(w);
}

/* The token "key=value" of `key` (key_len bytes) in a description, or
 * NULL; *len receives its length. */
static const char *token_of(const char *text, const char *key, size_t key_len, size_t *len)
{
    for (const char *t = text; *t;) {
        size_t n = strcspn(t, " ");
        if (n > key_len && strncmp(t, key, key_len) == 0 && t[key_len] == '=') {
            *len = n;
            return t;
        }
        t += n + (t[n] == ' ');
    }
    return NULL;
}

/* Names the first setting where two descriptions differ, matched by key so
 * that a setting only one side has (a learning-rate drop) is named as such. */
static lt_status describe_mismatch(const char *path, const char *stored, const char *current)
{
    static const char advice[] = "resume with the settings of the run that wrote it";
    const char *sides[2] = {stored, current};
    for (int side = 0; side < 2; side++)
        for (const char *t = sides[side]; *t;) {
            size_t n = strcspn(t, " "), key = strcspn(t, "="), other_len = 0;
            const char *other = token_of(sides[1 - side], t, key < n ? key : n, &other_len);
            if (other == NULL)
                return lt_fail(LT_E_INPUT, "%s: %s %.*s, %s (%s)", path,
                               side == 0 ? "checkpoint was written with" : "this run has",
                               (int)n, t,
                               side == 0 ? "which this run lacks" : "which the checkpoint lacks",
                               advice);
            if (side == 0 && (other_len != n || strncmp(other, t, n) != 0))
                return lt_fail(LT_E_INPUT, "%s: checkpoint was written with %.*s but this run "
                                           "has %.*s (%s)",
                               path, (int)n, t, (int)other_len, other, advice);
            t += n + (t[n] == ' ');
        }
    return lt_fail(LT_E_INPUT, "%s: checkpoint configuration differs from this run's", path);
}

size_t lt_trainer_read_bytes(const lt_trainer *t, size_t file_bytes)
{
    return lt_mem_rounded(file_bytes) + lt_mem_rounded(t->model.param_count * sizeof(float)) +
           lt_mem_rounded(state_bytes(t));
}

lt_status lt_trainer_read(lt_trainer *t, const lt_ckpt *ckpt, const char *path)
{
    const void *stored;
    size_t stored_bytes;
    int64_t step = 0;
    LT_TRY(lt_ckpt_find(ckpt, "config", &stored, &stored_bytes));
    LT_TRY(lt_ckpt_get_exact(ckpt, "step", &step, sizeof step));
    if (step < 0)
        return lt_fail(LT_E_INPUT, "%s: negative step %lld", path, (long long)step);
    /* A run may go on with learning-rate drops the checkpoint's updates
     * never reached (a longer schedule); the drops that did act must agree.
     * Checkpoints written before this rule list every drop: accept that too. */
    char description[DESCRIPTION_BYTES], every_drop[DESCRIPTION_BYTES];
    lt_train_config_describe_until(&t->config, (long)step, description, sizeof description);
    lt_train_config_describe(&t->config, every_drop, sizeof every_drop);
    int same = stored_bytes == strlen(description) &&
               memcmp(stored, description, stored_bytes) == 0;
    int same_listing_every_drop = stored_bytes == strlen(every_drop) &&
                                  memcmp(stored, every_drop, stored_bytes) == 0;
    if (!same && !same_listing_every_drop) {
        char copy[DESCRIPTION_BYTES];
        int shown = stored_bytes < sizeof copy ? (int)stored_bytes : (int)sizeof copy - 1;
        snprintf(copy, sizeof copy, "%.*s", shown, (const char *)stored);
        return describe_mismatch(path, copy, description);
    }
    LT_TRY(lt_ckpt_get_exact(ckpt, "params", t->model.params,
                             t->model.param_count * sizeof(float)));
    LT_TRY(lt_ckpt_get_exact(ckpt, "optimizer", t->optim_state, state_bytes(t)));
    lt_plateau plateau = t->plateau;
    if (lt_ckpt_has(ckpt, "lr_scale"))
        LT_TRY(lt_ckpt_get_exact(ckpt, "lr_scale", &plateau.scale, sizeof plateau.scale));
    if (lt_ckpt_has(ckpt, "plateau_best"))
        LT_TRY(lt_ckpt_get_exact(ckpt, "plateau_best", &plateau.best, sizeof plateau.best));
    if (!(plateau.scale > 0 && isfinite(plateau.scale)))
        return lt_fail(LT_E_INPUT, "%s: learning-rate scale %g is not a positive number", path,
                       plateau.scale);
    if (isnan(plateau.best))
        return lt_fail(LT_E_INPUT, "%s: the plateau's best metric is not a number", path);
    t->step = (long)step;
    t->plateau = plateau;
    return LT_OK;
}

lt_status lt_trainer_load(lt_trainer *t, const char *path)
{
    /* Reading holds the file and its unpacked sections at once: refuse that
     * against the budget before reading rather than midway. */
    struct stat st;
    if (stat(path, &st) == 0) {
        char what[4200];
        snprintf(what, sizeof what, "reading the checkpoint %s", path);
        LT_TRY(lt_mem_plan(lt_trainer_read_bytes(t, (size_t)st.st_size), what));
    }
    lt_ckpt *ckpt;
    LT_TRY(lt_ckpt_read(&ckpt, path));
    lt_status status = lt_trainer_read(t, ckpt, path);
    lt_ckpt_free(ckpt);
    return status;
}
