#include "model/generate.h"

#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "core/signals.h"
#include "core/threads.h"
#include "core/timer.h"
#include "model/body.h"
#include "nn/embedding.h"
#include "nn/mol.h"

const char *lt_gen_mode_name(lt_gen_mode mode)
{
    switch (mode) {
    case LT_GEN_RECURRENT: return "recurrent";
    case LT_GEN_CACHED: return "cached";
    case LT_GEN_RECOMPUTE: return "recompute";
    }
    return "unknown";
}

lt_gen_mode lt_gen_stepped_mode(const lt_attn_caps *caps)
{
    return caps->constant_state ? LT_GEN_RECURRENT : LT_GEN_CACHED;
}

static int stepped(lt_gen_mode mode) { return mode != LT_GEN_RECOMPUTE; }

/* Recompute's forward: the model's, planned for batch x max_steps. */
static lt_model_config forward_config(const lt_model *m, int batch, int max_steps)
{
    lt_model_config config = m->config;
    config.max_batch = batch;
    config.seq_len = max_steps;
    return config;
}

/* Recompute's block, laid out (or counted) in one walk. */
static void recompute_layout(lt_generator *g, const lt_model *m, lt_carver *c)
{
    size_t B = (size_t)g->batch;
    g->prefix = lt_carve(c, B * (size_t)g->max_steps * sizeof(int32_t));
    g->packed = lt_carve(c, B * (size_t)g->max_steps * sizeof(int32_t));
    g->logits = lt_carve(c, B * (size_t)m->config.classes * sizeof(float));
}

lt_status lt_generator_plan(const lt_model *m, lt_gen_mode mode, int batch, int max_steps,
                            size_t *state, size_t *forward)
{
    *state = *forward = 0;
    if (mode == LT_GEN_RECURRENT || mode == LT_GEN_CACHED) {
        LT_TRY(lt_model_state_bytes(m, batch, max_steps, state));
        lt_attn_caps caps;
        LT_TRY(lt_attn_variant_caps(m->config.attn.variant, &caps));
        if (mode != lt_gen_stepped_mode(&caps))
            return lt_fail(LT_E_USAGE, "generation: %s attention steps %s (mode %s), not in mode "
                                       "%s",
                           m->config.attn.variant,
                           caps.constant_state ? "a state of constant size"
                                               : "a key/value cache that grows a row a position",
                           lt_gen_mode_name(lt_gen_stepped_mode(&caps)), lt_gen_mode_name(mode));
        return LT_OK;
    }
    if (mode != LT_GEN_RECOMPUTE)
        return lt_fail(LT_E_USAGE, "generation: unknown mode %d", (int)mode);
    LT_TRY(lt_model_check_generative(m));
    if (batch < 1 || max_steps < 1)
        return lt_fail(LT_E_USAGE, "generation: batch %d and max_steps %d must be >= 1", batch,
                       max_steps);
    lt_model_config config = forward_config(m, batch, max_steps);
    LT_TRY(lt_model_plan_reading(&config, LT_MODEL_INFER, lt_threads_get(), forward));
    lt_generator counted = {.batch = batch, .max_steps = max_steps};
    lt_carver counter = {NULL, 0};
    recompute_layout(&counted, m, &counter);
    *state = counter.used;
    return LT_OK;
}

lt_status lt_generator_init(lt_generator *g, const lt_model *m, lt_gen_mode mode, int batch,
                            int max_steps)
{
    size_t state, forward;
    memset(g, 0, sizeof *g);
    LT_TRY(lt_generator_plan(m, mode, batch, max_steps, &state, &forward));
    LT_TRY(lt_mem_plan(state + forward, "the generator's state"));
    LT_TRY(lt_mem_alloc(&g->block, state, "generator state"));
    g->model = m;
    g->mode = mode;
    g->batch = batch;
    g->max_steps = max_steps;
    lt_status status;
    if (stepped(mode)) {
        status = lt_model_state_init(&g->state, m, g->block, batch, max_steps);
        g->logits = g->state.logits;
    } else {
        lt_carver placer = {g->block, 0};
        recompute_layout(g, m, &placer);
        lt_model_config config = forward_config(m, batch, max_steps);
        status = lt_model_alloc_reading(&g->forward, &config, LT_MODEL_INFER, lt_threads_get(),
                                        m);
    }
    if (status != LT_OK)
        lt_generator_free(g);
    return status;
}

lt_status lt_generator_reset(lt_generator *g)
{
    g->steps = 0;
    return stepped(g->mode) ? lt_model_state_reset(&g->state, g->model) : LT_OK;
}

void lt_generator_free(lt_generator *g)
{
    lt_model_free(&g->forward);
    lt_mem_free(g->block);
    memset(g, 0, sizeof *g);
}

static lt_status recompute_step(lt_generator *g, const int32_t *tokens)
{
    lt_model *m = &g->forward;
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
    const float *out;
    LT_TRY(stepped(g->mode) ? lt_model_step(g->model, &g->state, tokens, g->steps, &out)
                            : recompute_step(g, tokens));
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
    if (stepped(g->mode)) {
        LT_TRY(lt_model_state_skip(g->model, &g->state, steps));
    } else {
        LT_TRY(lt_embedding_check_ids(&token, 1, g->model->config.vocab, "skipped token"));
        for (int b = 0; b < g->batch; b++)
            for (int t = g->steps; t < g->steps + steps; t++)
                g->prefix[(size_t)b * g->max_steps + t] = token;
    }
    g->steps += steps;
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
        if (stepped(g->mode)) {
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

lt_status lt_gen_session_plan(const lt_model *weights, lt_gen_mode mode, int B, int N, int output,
                              lt_gen_session_bytes *bytes)
{
    memset(bytes, 0, sizeof *bytes);
    LT_TRY(lt_generator_plan(weights, mode, B, N, &bytes->state, &bytes->forward));
    bytes->buffers = lt_mem_rounded((size_t)B * sizeof(int32_t)) +
                     lt_mem_rounded((size_t)B * 2 * sizeof(double)) +
                     (output ? lt_mem_rounded((size_t)B * N) : 0);
    bytes->total = bytes->state + bytes->forward + bytes->buffers;
    if (mode != LT_GEN_RECOMPUTE)
        LT_TRY(lt_model_attention_state_bytes(weights, B, N, &bytes->attention));
    return LT_OK;
}

lt_status lt_gen_session_init(lt_gen_session *s, const lt_model *weights, uint64_t seed,
                              lt_gen_mode mode, int B, int N, uint64_t stream_base, int output)
{
    memset(s, 0, sizeof *s);
    lt_status status = lt_generator_init(&s->g, weights, mode, B, N);
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&s->column, (size_t)B * sizeof *s->column,
                              "generated column");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&s->uniforms, (size_t)B * 2 * sizeof *s->uniforms,
                              "uniforms");
    if (status == LT_OK && output)
        status = lt_mem_alloc((void **)&s->out, (size_t)B * N, "generated sequences");
    s->mol = (lt_mol_sampler){.mixtures = weights->config.classes / 3, .N = N, .seed = seed,
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
    memset(s, 0, sizeof *s);
}
