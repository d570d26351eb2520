#include "model/generate.h"

#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "core/signals.h"
#include "core/threads.h"
#include "core/timer.h"
#include "model/body.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/mol.h"
#include "nn/posenc.h"

const char *lt_gen_mode_name(lt_gen_mode mode)
{
    return mode == LT_GEN_RECURRENT ? "recurrent" : "recompute";
}

/* The generator's block, laid out (or counted) in one walk. */
static lt_status layout(lt_generator *g, const lt_model *m, lt_carver *c)
{
    const lt_model_config *cfg = &m->config;
    size_t B = (size_t)g->batch, f = sizeof(float);
    if (g->mode == LT_GEN_RECURRENT) {
        size_t body_bytes;
        LT_TRY(m->body->step_bytes(m, g->batch, g->max_steps, &body_bytes));
        g->body_state = lt_carve(c, body_bytes);
        g->x = lt_carve(c, B * (size_t)m->width * f);
        g->pos = lt_carve(c, (size_t)m->width * f);
    } else {
        g->prefix = lt_carve(c, B * (size_t)g->max_steps * sizeof(int32_t));
        g->packed = lt_carve(c, B * (size_t)g->max_steps * sizeof(int32_t));
    }
    g->logits = lt_carve(c, B * (size_t)cfg->classes * f);
    return LT_OK;
}

static lt_status check(const lt_model *m, lt_gen_mode mode, int batch, int max_steps)
{
    const lt_model_config *cfg = &m->config;
    if (cfg->input != LT_INPUT_TOKENS)
        return lt_fail(LT_E_USAGE, "generation: the model reads features, not tokens");
    if (!cfg->attn.causal)
        return lt_fail(LT_E_USAGE, "generation: the model's attention is not causal");
    if (batch < 1 || max_steps < 1)
        return lt_fail(LT_E_USAGE, "generation: batch %d and max_steps %d must be >= 1", batch,
                       max_steps);
    if (mode == LT_GEN_RECURRENT) {
        lt_attn_caps caps;
        LT_TRY(lt_attn_variant_caps(cfg->attn.variant, &caps));
        if (!caps.recurrent || m->body->step == NULL)
            return lt_fail(LT_E_USAGE, "generation: %s attention has no recurrent form (%s)",
                           cfg->attn.variant, caps.no_recurrent_reason);
    } else if (mode == LT_GEN_RECOMPUTE) {
        if (m->use == LT_MODEL_WEIGHTS || batch > cfg->max_batch || max_steps > cfg->seq_len)
            return lt_fail(LT_E_USAGE,
                           "generation: recomputing needs a model planned for a forward of "
                           "%d x %d positions (it has %s %d x %d)",
                           batch, max_steps,
                           m->use == LT_MODEL_WEIGHTS ? "weights only," : "", cfg->max_batch,
                           cfg->seq_len);
    } else {
        return lt_fail(LT_E_USAGE, "generation: unknown mode %d", (int)mode);
    }
    return LT_OK;
}

lt_status lt_generator_plan(const lt_model *m, lt_gen_mode mode, int batch, int max_steps,
                            size_t *bytes)
{
    LT_TRY(check(m, mode, batch, max_steps));
    lt_generator g = {.mode = mode, .batch = batch, .max_steps = max_steps};
    lt_carver counter = {NULL, 0};
    LT_TRY(layout(&g, m, &counter));
    *bytes = counter.used;
    return LT_OK;
}

lt_status lt_generator_init(lt_generator *g, lt_model *m, lt_gen_mode mode, int batch,
                            int max_steps)
{
    size_t bytes;
    memset(g, 0, sizeof *g);
    LT_TRY(lt_generator_plan(m, mode, batch, max_steps, &bytes));
    LT_TRY(lt_mem_plan(bytes, "the generator's state"));
    LT_TRY(lt_mem_alloc(&g->block, bytes, "generator state"));
    g->model = m;
    g->mode = mode;
    g->batch = batch;
    g->max_steps = max_steps;
    lt_carver placer = {g->block, 0};
    lt_status status = layout(g, m, &placer);
    if (status == LT_OK && mode == LT_GEN_RECURRENT && m->body->step_prepare != NULL)
        status = m->body->step_prepare(m, g->body_state, batch, max_steps);
    if (status == LT_OK)
        status = lt_generator_reset(g);
    if (status != LT_OK)
        lt_generator_free(g);
    return status;
}

lt_status lt_generator_reset(lt_generator *g)
{
    g->steps = 0;
    if (g->mode == LT_GEN_RECURRENT)
        return g->model->body->step_init(g->model, g->body_state, g->batch, g->max_steps);
    return LT_OK;
}

void lt_generator_free(lt_generator *g)
{
    lt_mem_free(g->block);
    memset(g, 0, sizeof *g);
}

/* The input row of one position: as the model's input adapter builds x0. */
static lt_status input_row(lt_generator *g, const int32_t *tokens)
{
    const lt_model *m = g->model;
    const lt_model_config *cfg = &m->config;
    const int C = m->width, B = g->batch;
    const int P = cfg->pos == LT_POS_ADD ? C : cfg->pos == LT_POS_CONCAT ? cfg->pos_dim : 0;
    const int E = cfg->pos == LT_POS_CONCAT ? C - P : C;
    LT_TRY(lt_embedding_check_ids(tokens, B, cfg->vocab, "generated tokens"));
    if (P > 0)
        lt_posenc_fill(g->pos, g->steps, 1, P, P, 0);
    for (int b = 0; b < B; b++) {
        float *row = g->x + (size_t)b * C;
        memcpy(row, m->params + m->in_table + (size_t)tokens[b] * E, (size_t)E * sizeof(float));
        if (cfg->pos == LT_POS_ADD)
            for (int c = 0; c < C; c++)
                row[c] += g->pos[c];
        else if (cfg->pos == LT_POS_CONCAT)
            memcpy(row + E, g->pos, (size_t)P * sizeof(float));
    }
    return LT_OK;
}

static lt_status recurrent_step(lt_generator *g, const int32_t *tokens)
{
    const lt_model *m = g->model;
    LT_TRY(input_row(g, tokens));
    const float *out;
    LT_TRY(m->body->step(m, g->body_state, g->x, &out));
    if (g->batch <= LT_LINEAR_FEW_ROWS)
        lt_linear_rows_forward(g->logits, out, m->params + m->w_out, m->params + m->b_out,
                               g->batch, m->body_width, m->config.classes);
    else
        lt_linear_forward(g->logits, out, m->params + m->w_out, m->params + m->b_out, g->batch,
                          m->body_width, m->config.classes);
    return LT_OK;
}

static lt_status recompute_step(lt_generator *g, const int32_t *tokens)
{
    lt_model *m = g->model;
    const int B = g->batch, n = g->steps + 1, classes = m->config.classes;
    for (int b = 0; b < B; b++)
        g->prefix[(size_t)b * g->max_steps + g->steps] = tokens[b];
    for (int b = 0; b < B; b++)
        memcpy(g->packed + (size_t)b * n, g->prefix + (size_t)b * g->max_steps,
               (size_t)n * sizeof(int32_t));
    lt_batch batch = {.batch = B, .n = n, .tokens = g->packed};
    LT_TRY(lt_model_forward(m, &batch, 0, 0, 0));
    for (int b = 0; b < B; b++)
        memcpy(g->logits + (size_t)b * classes, m->logits + ((size_t)b * n + n - 1) * classes,
               (size_t)classes * sizeof(float));
    return LT_OK;
}

lt_status lt_generator_step(lt_generator *g, const int32_t *tokens, const float **logits)
{
    if (g->steps >= g->max_steps)
        return lt_fail(LT_E_USAGE, "generation: all %d planned positions are used",
                       g->max_steps);
    LT_TRY(g->mode == LT_GEN_RECURRENT ? recurrent_step(g, tokens) : recompute_step(g, tokens));
    g->steps++;
    *logits = g->logits;
    return LT_OK;
}

lt_status lt_generator_skip(lt_generator *g, int steps, int32_t token)
{
    if (steps < 0 || steps > g->max_steps - g->steps)
        return lt_fail(LT_E_USAGE, "generation: skipping %d positions after %d goes past the "
                                   "%d planned",
                       steps, g->steps, g->max_steps);
    if (g->mode == LT_GEN_RECURRENT) {
        LT_TRY(g->model->body->step_skip(g->model, g->body_state, steps));
    } else {
        LT_TRY(lt_embedding_check_ids(&token, 1, g->model->config.vocab, "skipped token"));
        for (int b = 0; b < g->batch; b++)
            for (int t = g->steps; t < g->steps + steps; t++)
                g->prefix[(size_t)b * g->max_steps + t] = token;
    }
    g->steps += steps;
    return LT_OK;
}

lt_status lt_model_copy_params(lt_model *dst, const lt_model *src)
{
    if (dst->param_count != src->param_count)
        return lt_fail(LT_E_INTERNAL, "copying parameters: %zu into %zu", src->param_count,
                       dst->param_count);
    memcpy(dst->params, src->params, src->param_count * sizeof(float));
    return LT_OK;
}

/* ---- the roofline ---- */

/* Floats of the weights a step streams: all but the embedding table. */
static double streamed_floats(const lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    double table = 0;
    if (cfg->input == LT_INPUT_TOKENS) {
        int P = cfg->pos == LT_POS_CONCAT ? cfg->pos_dim : 0;
        table = (double)cfg->vocab * (m->width - P);
    }
    return (double)m->param_count - table;
}

double lt_generator_streamed_bytes(const lt_model *m) { return 4.0 * streamed_floats(m); }

lt_status lt_generator_bound(const lt_generator *g, double bandwidth_gbs, double peak_gflops,
                             lt_gen_bound *out)
{
    const lt_model *m = g->model;
    const lt_model_config *cfg = &m->config;
    const double W = streamed_floats(m), B = g->batch;
    const int H = cfg->heads, D = cfg->head_dim;
    memset(out, 0, sizeof *out);
    for (int p = 0; p < g->max_steps; p++) {
        double bytes = 4.0 * W, flops = 2.0 * W * B, ab, af;
        if (g->mode == LT_GEN_RECURRENT) {
            LT_TRY(lt_attn_step_cost(&m->attn, H, D, D, p, &ab, &af));
            bytes += B * cfg->layers * ab;
            flops += B * cfg->layers * af;
        } else { /* the prefix's forward: every position's products again */
            lt_attn_shape shape = {.B = 1, .H = H, .N = p + 1, .D = D, .M = D};
            flops = 2.0 * W * B * (p + 1) + B * cfg->layers * lt_attn_flops(&m->attn, shape, 0);
        }
        double memory = bytes / (bandwidth_gbs * 1e9), compute = flops / (peak_gflops * 1e9);
        out->seconds += memory > compute ? memory : compute;
        out->memory_share += memory > compute ? memory : 0;
        out->bytes += bytes / B;
        out->flops += flops / B;
    }
    out->memory_share /= out->seconds > 0 ? out->seconds : 1;
    out->seconds /= B;
    return LT_OK;
}

/* ---- generating whole sequences ---- */

static void mol_sample(void *ctx, int32_t *tokens, const float *logits, int B, long first,
                       int position)
{
    lt_mol_sampler *s = ctx;
    for (int b = 0; b < B; b++) {
        lt_rng rng;
        lt_rng_seed(&rng, s->seed, s->stream_base + (uint64_t)(first + b) * (uint64_t)s->N +
                                       (uint64_t)position);
        s->uniforms[2 * b] = lt_rng_uniform(&rng);
        s->uniforms[2 * b + 1] = lt_rng_uniform(&rng);
    }
    lt_mol_sample(tokens, logits, s->uniforms, B, s->mixtures);
}

lt_sampler lt_mol_sampler_of(lt_mol_sampler *s) { return (lt_sampler){mol_sample, s}; }

lt_status lt_generate_bytes(lt_generator *g, uint8_t *out, const uint8_t *prompt, int given,
                            int32_t start_token, long first, const lt_sampler *sampler,
                            int32_t *column)
{
    const int B = g->batch, N = g->max_steps;
    LT_TRY(lt_generator_reset(g));
    for (int b = 0; b < B; b++)
        column[b] = start_token;
    for (int t = 0; t < N; t++) {
        const float *logits;
        LT_TRY(lt_generator_step(g, column, &logits));
        if (t < given)
            for (int b = 0; b < B; b++)
                column[b] = prompt[(size_t)b * N + t];
        else
            sampler->sample(sampler->ctx, column, logits, B, first, t);
        for (int b = 0; b < B; b++)
            out[(size_t)b * N + t] = (uint8_t)column[b];
    }
    return LT_OK;
}

lt_status lt_generate_timed(lt_generator *g, uint8_t *out, uint8_t *first_batch, long count,
                            double budget, int32_t start_token, const lt_sampler *sampler,
                            int32_t *column, lt_progress *progress, long *sequences,
                            double *seconds)
{
    *sequences = 0;
    lt_status status = LT_OK;
    double start = lt_time_now();
    while (status == LT_OK &&
           (*sequences == 0 || (*sequences < count && lt_time_now() - start < budget))) {
        status = lt_generate_bytes(g, out, NULL, 0, start_token, *sequences, sampler, column);
        if (status == LT_OK && *sequences == 0 && first_batch != NULL)
            memcpy(first_batch, out, (size_t)g->batch * g->max_steps);
        *sequences += g->batch;
        if (progress != NULL)
            lt_progress_update(progress, *sequences, NULL);
        if (lt_interrupted())
            break;
    }
    *seconds = lt_time_now() - start;
    return status;
}

lt_status lt_gen_session_plan(const lt_model *weights, const lt_model_config *config,
                              lt_gen_mode mode, int B, int N, int output,
                              lt_gen_session_bytes *bytes)
{
    memset(bytes, 0, sizeof *bytes);
    lt_model_config mc = *config;
    mc.max_batch = B;
    mc.seq_len = N;
    lt_model_use use = mode == LT_GEN_RECOMPUTE ? LT_MODEL_INFER : LT_MODEL_WEIGHTS;
    LT_TRY(lt_model_plan(&mc, use, lt_threads_get(), &bytes->model, NULL));
    /* the session's model as lt_generator_plan sees it: planned for that use */
    lt_model planned = *weights;
    planned.config = mc;
    planned.use = use;
    LT_TRY(lt_generator_plan(&planned, mode, B, N, &bytes->generator));
    bytes->buffers = lt_mem_rounded((size_t)B * sizeof(int32_t)) +
                     lt_mem_rounded((size_t)B * 2 * sizeof(double)) +
                     (output ? lt_mem_rounded((size_t)B * N) : 0);
    bytes->total = bytes->model + bytes->generator + bytes->buffers;
    return LT_OK;
}

lt_status lt_gen_session_init(lt_gen_session *s, const lt_model *weights,
                              const lt_model_config *config, uint64_t seed, lt_gen_mode mode,
                              int B, int N, uint64_t stream_base, int output)
{
    memset(s, 0, sizeof *s);
    lt_model_config mc = *config;
    mc.max_batch = B;
    mc.seq_len = N;
    lt_status status = lt_model_alloc(&s->model, &mc,
                                      mode == LT_GEN_RECOMPUTE ? LT_MODEL_INFER : LT_MODEL_WEIGHTS,
                                      lt_threads_get(), seed);
    if (status == LT_OK)
        status = lt_model_copy_params(&s->model, weights);
    if (status == LT_OK)
        status = lt_generator_init(&s->g, &s->model, mode, B, N);
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&s->column, (size_t)B * sizeof *s->column,
                              "generated column");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&s->uniforms, (size_t)B * 2 * sizeof *s->uniforms,
                              "uniforms");
    if (status == LT_OK && output)
        status = lt_mem_alloc((void **)&s->out, (size_t)B * N, "generated sequences");
    s->mol = (lt_mol_sampler){.mixtures = mc.classes / 3, .N = N, .seed = seed,
                              .stream_base = stream_base, .uniforms = s->uniforms};
    s->sampler = lt_mol_sampler_of(&s->mol);
    if (status != LT_OK)
        lt_gen_session_free(s);
    return status;
}

void lt_gen_session_free(lt_gen_session *s)
{
    lt_mem_free(s->column);
    lt_mem_free(s->uniforms);
    lt_mem_free(s->out);
    lt_generator_free(&s->g);
    lt_model_free(&s->model);
    memset(s, 0, sizeof *s);
}
