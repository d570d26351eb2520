/* The model around a body: input adapter (token embedding or projected
 * frames, plus positions), the output head, planning and allocation for
 * training, inference or weights only, and the recurrent step through the
 * same adapter and head. */
#include "model/model.h"

#include <math.h>
#include <string.h>


#include "core/mem.h"
#include "core/rng.h"
#include "core/threads.h"
#include "model/body.h"
#include "nn/colsum.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/posenc.h"

enum { BLOCK_PARAMS, BLOCK_GRADS, BLOCK_ACTS, BLOCK_WORKSPACE, BLOCK_TABLE, BLOCKS };

void *lt_carve(lt_carver *c, size_t bytes)
{
    void *p = c->base ? c->base + c->used : NULL;
    c->used += lt_mem_rounded(bytes);
    return p;
}

void lt_model_init_uniform(float *p, size_t count, size_t fan_in, uint64_t seed,
                           uint64_t *stream)
{
    float bound = 1.0f / sqrtf((float)fan_in);
    lt_rng rng;
    lt_rng_seed(&rng, seed, (*stream)++);
    lt_rng_fill_uniform(&rng, p, (long)count, -bound, bound);
}

lt_model_config lt_model_default_config(const char *variant)
{
    lt_model_config c;
    memset(&c, 0, sizeof c);
    c.input = LT_INPUT_TOKENS;
    c.stack = 1;
    c.pos = LT_POS_ADD;
    c.body = LT_BODY_TRANSFORMER;
    c.activation = LT_ACT_GELU;
    c.attn = lt_attn_default_config(variant);
    return c;
}

static const lt_body_ops *body_of(const lt_model_config *cfg)
{
    switch (cfg->body) {
    case LT_BODY_TRANSFORMER: return &lt_transformer_body;
    case LT_BODY_BILSTM: return &lt_bilstm_body;
    }
    return NULL;
}

int lt_model_input_width(const lt_model_config *cfg)
{
    return cfg->input == LT_INPUT_TOKENS ? 1 : cfg->features * cfg->stack;
}

/* Width of the position encoding inside x0's rows, and where it starts. */
static int pos_columns(const lt_model_config *cfg, int width)
{
    switch (cfg->pos) {
    case LT_POS_ADD: return width;
    case LT_POS_CONCAT: return cfg->pos_dim;
    case LT_POS_NONE: return 0;
    }
    return 0;
}

/* Columns the input itself fills (the rest, with CONCAT, are positions). */
static int input_columns(const lt_model_config *cfg, int width)
{
    return cfg->pos == LT_POS_CONCAT ? width - cfg->pos_dim : width;
}

static int model_width(const lt_model_config *cfg) { return body_of(cfg)->in_width(cfg); }

lt_status lt_model_check_config(const lt_model_config *cfg)
{
    const lt_body_ops *body = body_of(cfg);
    if (body == NULL)
        return lt_fail(LT_E_USAGE, "body: %d is not a body this build has (transformer, bilstm)",
                       (int)cfg->body);
    struct { const char *name; int value; } sizes[] = {
        {"classes", cfg->classes}, {"layers", cfg->layers}, {"max_batch", cfg->max_batch},
        {"seq_len", cfg->seq_len}, {"stack", cfg->stack}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return lt_fail(LT_E_USAGE, "%s: expected a positive size, got %d", sizes[i].name,
                           sizes[i].value);
    if (cfg->layers > 4096)
        return lt_fail(LT_E_USAGE, "layers: expected 1 to 4096, got %d", cfg->layers);
    if (cfg->input == LT_INPUT_TOKENS && cfg->vocab < 1)
        return lt_fail(LT_E_USAGE, "vocab: expected a positive size, got %d", cfg->vocab);
    if (cfg->input == LT_INPUT_FEATURES && cfg->features < 1)
        return lt_fail(LT_E_USAGE, "features: expected a positive size, got %d", cfg->features);
    if (cfg->input != LT_INPUT_TOKENS && cfg->input != LT_INPUT_FEATURES)
        return lt_fail(LT_E_USAGE, "input: expected tokens or features, got %d", (int)cfg->input);
    if (cfg->input == LT_INPUT_TOKENS && cfg->stack != 1)
        return lt_fail(LT_E_USAGE, "stack: token inputs cannot be stacked, got %d", cfg->stack);
    LT_TRY(body->check_config(cfg));
    int width = model_width(cfg);
    if (cfg->pos == LT_POS_CONCAT && !(cfg->pos_dim >= 1 && cfg->pos_dim < width))
        return lt_fail(LT_E_USAGE,
                       "pos_dim: the concatenated position encoding needs 1 to %d of the "
                       "width %d, got %d",
                       width - 1, width, cfg->pos_dim);
    if (cfg->pos != LT_POS_ADD && cfg->pos != LT_POS_CONCAT && cfg->pos != LT_POS_NONE)
        return lt_fail(LT_E_USAGE, "pos: expected add, concat or none, got %d", (int)cfg->pos);
    return LT_OK;
}

/* Parameter offsets: input, body, head (the init order too). */
static size_t layout_params(lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    size_t E = (size_t)input_columns(cfg, m->width), at = 0;
    m->in_table = at;
    if (cfg->input == LT_INPUT_TOKENS) {
        at += (size_t)cfg->vocab * E;
    } else {
        at += E * (size_t)lt_model_input_width(cfg);
        m->in_bias = at;
        at += E;
    }
    at = m->body->layout_params(m, at);
    m->w_out = at;
    at += (size_t)cfg->classes * m->body_width;
    m->b_out = at;
    return at + (size_t)cfg->classes;
}

/* Scratch for the input part of x0 when positions are concatenated: the
 * embedding and projection write whole rows of their own width there. */
static int needs_input_scratch(const lt_model_config *cfg) { return cfg->pos == LT_POS_CONCAT; }

static void layout_acts(lt_model *m, lt_carver *c)
{
    const lt_model_config *cfg = &m->config;
    size_t R = (size_t)cfg->max_batch * cfg->seq_len, f = sizeof(float);
    size_t C = (size_t)m->width, P = (size_t)pos_columns(cfg, m->width);
    if (m->use == LT_MODEL_WEIGHTS)
        return;
    m->pos_enc = P ? lt_carve(c, (size_t)cfg->seq_len * P * f) : NULL;
    m->x0 = lt_carve(c, R * C * f);
    if (needs_input_scratch(cfg))
        m->x_in = lt_carve(c, R * (size_t)input_columns(cfg, m->width) * f);
    m->body->layout_acts(m, c);
    m->logits = lt_carve(c, R * (size_t)cfg->classes * f);
    if (m->use == LT_MODEL_TRAIN)
        m->d_logits = lt_carve(c, R * (size_t)cfg->classes * f);
}

/* Sizes of the blocks; m is filled enough to lay everything out. */
static lt_status block_sizes(lt_model *m, const lt_model_config *cfg, lt_model_use use,
                             int threads, size_t sizes[BLOCKS])
{
    LT_TRY(lt_model_check_config(cfg));
    if (use != LT_MODEL_TRAIN && use != LT_MODEL_INFER && use != LT_MODEL_WEIGHTS)
        return lt_fail(LT_E_USAGE, "use: expected train, infer or weights, got %d", (int)use);
    void *table = m->body_data;
    memset(m, 0, sizeof *m);
    m->config = *cfg;
    m->use = use;
    m->body = body_of(cfg);
    m->body_data = table;
    if (cfg->body == LT_BODY_TRANSFORMER) /* the one body that attends */
        LT_TRY(lt_attn_init(&m->attn, &cfg->attn));
    m->width = model_width(cfg);
    m->body_width = m->body->out_width(cfg);
    sizes[BLOCK_TABLE] = m->body->table_bytes(cfg);
    m->param_count = layout_params(m);
    sizes[BLOCK_PARAMS] = m->param_count * sizeof(float);
    sizes[BLOCK_GRADS] = use == LT_MODEL_TRAIN ? sizes[BLOCK_PARAMS] : 0;
    lt_carver counter = {NULL, 0};
    layout_acts(m, &counter);
    sizes[BLOCK_ACTS] = counter.used;
    sizes[BLOCK_WORKSPACE] = m->body->workspace_bytes(m, threads);
    return LT_OK;
}

/* The body lays out parameters into its table, so planning needs a table
 * of the right size too (layout only writes offsets, never reads them).
 * `reading`: the parameters are another model's, not allocated. */
static lt_status plan(const lt_model_config *config, lt_model_use use, int threads, int reading,
                      size_t *bytes, size_t *param_count)
{
    LT_TRY(lt_model_check_config(config));
    const lt_body_ops *body = body_of(config);
    size_t table_bytes = body->table_bytes(config);
    void *table = NULL;
    LT_TRY(lt_mem_calloc(&table, table_bytes, "model plan table"));
    lt_model probe;
    memset(&probe, 0, sizeof probe);
    probe.body_data = table;
    size_t sizes[BLOCKS];
    lt_status status = block_sizes(&probe, config, use, threads, sizes);
    lt_mem_free(table);
    LT_TRY(status);
    *bytes = 0;
    for (int i = 0; i < BLOCKS; i++)
        *bytes += i == BLOCK_PARAMS && reading ? 0 : lt_mem_rounded(sizes[i]);
    if (param_count)
        *param_count = probe.param_count;
    return LT_OK;
}

lt_status lt_model_plan(const lt_model_config *config, lt_model_use use, int threads,
                        size_t *bytes, size_t *param_count)
{
    return plan(config, use, threads, 0, bytes, param_count);
}

lt_status lt_model_plan_reading(const lt_model_config *config, lt_model_use use, int threads,
                                size_t *bytes)
{
    return plan(config, use, threads, 1, bytes, NULL);
}

/* Normal(0, 1) token embeddings (as loud as the position encoding they are
 * added to), uniform +-1/sqrt(fan_in) weights (PyTorch's default for linear
 * layers), zero biases, unit layernorm gains. */
static void init_params(lt_model *m, uint64_t seed)
{
    const lt_model_config *cfg = &m->config;
    float *p = m->params;
    size_t E = (size_t)input_columns(cfg, m->width);
    uint64_t stream = 0;
    memset(p, 0, m->param_count * sizeof(float));
    if (cfg->input == LT_INPUT_TOKENS) {
        lt_rng rng;
        lt_rng_seed(&rng, seed, stream++);
        lt_rng_fill_normal(&rng, p + m->in_table, (long)((size_t)cfg->vocab * E), 1.0f);
    } else {
        size_t in = (size_t)lt_model_input_width(cfg);
        lt_model_init_uniform(p + m->in_table, E * in, in, seed, &stream);
    }
    m->body->init_params(m, seed, &stream);
    lt_model_init_uniform(p + m->w_out, (size_t)cfg->classes * m->body_width,
                          (size_t)m->body_width, seed, &stream);
}

static const char *const block_names[BLOCKS] = {"model parameters", "model gradients",
                                                "model activations", "attention workspace",
                                                "model layer tables"};

/* Allocates and lays out everything; the parameters are `weights`' when
 * given (not allocated, left as they are), else its own, uninitialised. */
static lt_status allocate(lt_model *m, const lt_model_config *config, lt_model_use use,
                          int threads, const lt_model *weights)
{
    size_t planned;
    memset(m, 0, sizeof *m);
    LT_TRY(plan(config, use, threads, weights != NULL, &planned, NULL));
    LT_TRY(lt_mem_plan(planned, use == LT_MODEL_TRAIN ? "the model (parameters, gradients, "
                                                        "activations)"
                                                      : "the model (parameters, activations)"));
    void *table = NULL;
    LT_TRY(lt_mem_calloc(&table, body_of(config)->table_bytes(config), block_names[BLOCK_TABLE]));
    m->body_data = table;
    size_t sizes[BLOCKS];
    lt_status status = block_sizes(m, config, use, threads, sizes);
    if (status == LT_OK && weights != NULL && m->param_count != weights->param_count)
        status = lt_fail(LT_E_USAGE, "model reading another's weights: its configuration has "
                                     "%zu parameters, the weights %zu (not the same "
                                     "architecture)",
                         m->param_count, weights->param_count);
    void *blocks[BLOCKS] = {NULL};
    blocks[BLOCK_TABLE] = table;
    for (int i = 0; i < BLOCKS && status == LT_OK; i++)
        if (i != BLOCK_TABLE && sizes[i] > 0 && !(i == BLOCK_PARAMS && weights != NULL))
            status = lt_mem_alloc(&blocks[i], sizes[i], block_names[i]);
    if (status != LT_OK) {
        for (int i = 0; i < BLOCKS; i++)
            lt_mem_free(blocks[i]);
        memset(m, 0, sizeof *m);
        return status;
    }
    memcpy(m->blocks, blocks, sizeof blocks);
    m->params = weights != NULL ? weights->params : blocks[BLOCK_PARAMS];
    m->grads = blocks[BLOCK_GRADS];
    m->attn_workspace = blocks[BLOCK_WORKSPACE];
    lt_carver placer = {blocks[BLOCK_ACTS], 0};
    layout_acts(m, &placer);
    int P = pos_columns(config, m->width);
    if (m->pos_enc != NULL)
        lt_posenc_fill(m->pos_enc, 0, config->seq_len, P, P, 0);
    return LT_OK;
}

lt_status lt_model_alloc(lt_model *m, const lt_model_config *config, lt_model_use use,
                         int threads, uint64_t seed)
{
    LT_TRY(allocate(m, config, use, threads, NULL));
    m->seed = seed;
    init_params(m, seed);
    lt_model_zero_grads(m);
    return LT_OK;
}

lt_status lt_model_alloc_reading(lt_model *m, const lt_model_config *config, lt_model_use use,
                                 int threads, const lt_model *weights)
{
    memset(m, 0, sizeof *m);
    if (use == LT_MODEL_TRAIN) /* its updates would change another model's weights */
        return lt_fail(LT_E_USAGE, "a model reading another's weights is for inference only");
    LT_TRY(allocate(m, config, use, threads, weights));
    m->seed = weights->seed;
    return LT_OK;
}

void lt_model_free(lt_model *m)
{
    for (int i = 0; i < BLOCKS; i++)
        lt_mem_free(m->blocks[i]);
    memset(m, 0, sizeof *m);
}

void lt_model_zero_grads(lt_model *m)
{
    if (m->grads != NULL)
        lt_zero_floats(m->grads, m->param_count);
}

static lt_status check_batch(const lt_model *m, const lt_batch *b)
{
    const lt_model_config *cfg = &m->config;
    if (b->batch < 1 || b->batch > cfg->max_batch)
        return lt_fail(LT_E_INPUT, "model forward: batch %d outside the planned 1..%d", b->batch,
                       cfg->max_batch);
    if (b->n < 1 || b->n > cfg->seq_len)
        return lt_fail(LT_E_INPUT, "model forward: %d positions outside the planned 1..%d", b->n,
                       cfg->seq_len);
    if (cfg->input == LT_INPUT_TOKENS ? b->tokens == NULL : b->features == NULL)
        return lt_fail(LT_E_INPUT, "model forward: the batch has no %s",
                       cfg->input == LT_INPUT_TOKENS ? "tokens" : "features");
    for (int i = 0; b->lengths != NULL && i < b->batch; i++)
        if (b->lengths[i] < 0 || b->lengths[i] > b->n)
            return lt_fail(LT_E_INPUT, "model forward: sequence %d has length %d, expected 0..%d",
                           i, (int)b->lengths[i], b->n);
    return LT_OK;
}

/* Below this many floats of x0 the input adapter runs on one thread. */
#define INPUT_PARALLEL_MIN 16384

/* Rows [first, end) of x0 with concatenated positions: the input part
 * (copied from `scratch` when there is one, else already in place) in
 * columns [0, E), the encoding of the row's position in [E, C). */
static void concat_rows(float *x0, const float *scratch, const float *pe, int first, int end,
                        int n, int C, int E, int P)
{
    for (int r = first; r < end; r++) {
        if (scratch != NULL)
            memcpy(x0 + (size_t)r * C, scratch + (size_t)r * E, (size_t)E * sizeof(float));
        memcpy(x0 + (size_t)r * C + E, pe + (size_t)(r % n) * P, (size_t)P * sizeof(float));
    }
}

/* The input adapter: x0's rows (batch x n, width C) from the tokens or
 * frames of n positions of each sequence, whose encodings pe (n, P) are
 * added over them or written beside them, into columns [E, C). The
 * embedding or projection writes rows of its own width E into `scratch`
 * when there is one (the forward's, with concatenated positions), else
 * straight into x0's rows (a step's, tokens only). */
static lt_status input_rows(const lt_model *m, float *x0, float *scratch, const int32_t *tokens,
                            const float *features, int batch, int n, const float *pe)
{
    const lt_model_config *cfg = &m->config;
    const int R = batch * n, C = m->width, E = input_columns(cfg, C);
    const int P = pos_columns(cfg, C);
    const float *p = m->params;
    if (cfg->input == LT_INPUT_TOKENS) {
        LT_TRY(lt_embedding_forward_strided(scratch != NULL ? scratch : x0, scratch != NULL ? E : C,
                                            tokens, p + m->in_table, R, cfg->vocab, E));
    } else {
        LT_ASSERT(scratch != NULL || E == C); /* the projection writes whole rows */
        lt_linear_forward(scratch != NULL ? scratch : x0, features, p + m->in_table,
                          p + m->in_bias, R, lt_model_input_width(cfg), E);
    }
    if (cfg->pos == LT_POS_ADD) {
        lt_posenc_add(x0, pe, batch, n, C);
    } else if (cfg->pos == LT_POS_CONCAT && (long)R * C <= INPUT_PARALLEL_MIN) {
        /* a step's few rows: no parallel region, whose closing barrier
         * alone costs a system call per generated position */
        concat_rows(x0, scratch, pe, 0, R, n, C, E, P);
    } else if (cfg->pos == LT_POS_CONCAT) {
#pragma omp parallel for schedule(static)
        for (int r = 0; r < R; r++)
            concat_rows(x0, scratch, pe, r, r + 1, n, C, E, P);
    }
    return LT_OK;
}

/* The head: logits = W_out body_out + b_out on `rows` rows. A step's few
 * rows (one position per sequence, up to LT_LINEAR_FEW_ROWS) stream the
 * weights once (lt_linear_rows_forward); a forward's rows, and more,
 * through the BLAS product. */
static void head_forward(const lt_model *m, float *logits, const float *body_out, int rows,
                         int step)
{
    const float *w = m->params + m->w_out, *b = m->params + m->b_out;
    if (step && rows <= LT_LINEAR_FEW_ROWS)
        lt_linear_rows_forward(logits, body_out, w, b, rows, m->body_width, m->config.classes);
    else
        lt_linear_forward(logits, body_out, w, b, rows, m->body_width, m->config.classes);
}

lt_status lt_model_forward(lt_model *m, const lt_batch *b, int training, uint64_t seed,
                           uint64_t step)
{
    if (m->use == LT_MODEL_WEIGHTS)
        return lt_fail(LT_E_USAGE, "model forward: the model holds weights only (allocate it "
                                   "for inference or training)");
    if (training && m->use != LT_MODEL_TRAIN)
        return lt_fail(LT_E_USAGE, "model forward: an inference model cannot train");
    LT_TRY(check_batch(m, b));
    m->last = *b;
    m->last_training = training;
    m->last_seed = seed;
    m->last_step = step;
    LT_TRY(input_rows(m, m->x0, m->x_in, b->tokens, b->features, b->batch, b->n, m->pos_enc));
    LT_TRY(m->body->forward(m));
    head_forward(m, m->logits, m->body_out, b->batch * b->n, 0);
    return LT_OK;
}

static lt_status input_backward(lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    const lt_batch *b = &m->last;
    const int R = b->batch * b->n, C = m->width, E = input_columns(cfg, C);
    float *g = m->grads;
    const float *d_in = m->d_x0;
    float *scratch = m->x_in;
    if (scratch != NULL) {
        /* the input's own columns of d x0, as whole rows */
        for (int r = 0; r < R; r++)
            memcpy(scratch + (size_t)r * E, m->d_x0 + (size_t)r * C, (size_t)E * sizeof(float));
        d_in = scratch;
    }
    if (cfg->input == LT_INPUT_TOKENS)
        return lt_embedding_backward(g + m->in_table, d_in, b->tokens, R, cfg->vocab, E);
    lt_linear_backward(NULL, g + m->in_table, g + m->in_bias, d_in, b->features,
                       m->params + m->in_table, R, lt_model_input_width(cfg), E);
    return LT_OK;
}

lt_status lt_model_backward(lt_model *m)
{
    if (m->use != LT_MODEL_TRAIN)
        return lt_fail(LT_E_USAGE, "model backward: the model was not allocated for training");
    if (m->last.batch == 0 || !m->last_training)
        return lt_fail(LT_E_INTERNAL, "model backward called without a training forward");
    const int R = m->last.batch * m->last.n;
    memset(m->d_body_out, 0, (size_t)R * m->body_width * sizeof(float));
    lt_linear_backward(m->d_body_out, m->grads + m->w_out, m->grads + m->b_out, m->d_logits,
                       m->body_out, m->params + m->w_out, R, m->body_width, m->config.classes);
    LT_TRY(m->body->backward(m));
    return input_backward(m);
}

lt_batch lt_batch_slice(const lt_batch *b, const lt_model_config *cfg, int first, int count)
{
    lt_batch s = *b;
    size_t n = (size_t)b->n;
    s.batch = count;
    if (b->tokens)
        s.tokens = b->tokens + (size_t)first * n;
    if (b->features)
        s.features = b->features + (size_t)first * n * cfg->stack * cfg->features;
    if (b->lengths)
        s.lengths = b->lengths + first;
    if (b->targets)
        s.targets = b->targets + (size_t)first * n;
    if (b->mask)
        s.mask = b->mask + (size_t)first * n;
    if (b->labels && b->label_lengths) {
        size_t at = 0;
        for (int i = 0; i < first; i++)
            at += (size_t)b->label_lengths[i];
        s.labels = b->labels + at;
        s.label_lengths = b->label_lengths + first;
    }
    return s;
}

/* ---- the recurrent form ---- */

lt_status lt_model_check_generative(const lt_model *m)
{
    if (m->config.input != LT_INPUT_TOKENS)
        return lt_fail(LT_E_USAGE, "generation: the model reads features, not tokens");
    if (!m->config.attn.causal)
        return lt_fail(LT_E_USAGE, "generation: the model's attention is not causal");
    return LT_OK;
}

/* The state block, laid out (or counted) in one walk. */
static lt_status state_layout(lt_model_state *s, const lt_model *m, lt_carver *c, int batch,
                              int max_steps)
{
    size_t B = (size_t)batch, f = sizeof(float), body_bytes;
    LT_TRY(m->body->step_bytes(m, batch, max_steps, &body_bytes));
    s->body = lt_carve(c, body_bytes);
    s->x = lt_carve(c, B * (size_t)m->width * f);
    s->pos = lt_carve(c, (size_t)m->width * f);
    s->logits = lt_carve(c, B * (size_t)m->config.classes * f);
    return LT_OK;
}

lt_status lt_model_state_bytes(const lt_model *m, int batch, int max_steps, size_t *bytes)
{
    LT_TRY(lt_model_check_generative(m));
    lt_attn_caps caps;
    LT_TRY(lt_attn_variant_caps(m->config.attn.variant, &caps));
    if (!caps.recurrent || m->body->step == NULL)
        return lt_fail(LT_E_USAGE, "generation: %s attention has no recurrent form (%s)",
                       m->config.attn.variant, caps.no_recurrent_reason);
    if (batch < 1 || max_steps < 1)
        return lt_fail(LT_E_USAGE, "generation: batch %d and max_steps %d must be >= 1", batch,
                       max_steps);
    lt_model_state counted;
    lt_carver counter = {NULL, 0};
    LT_TRY(state_layout(&counted, m, &counter, batch, max_steps));
    *bytes = counter.used;
    return LT_OK;
}

lt_status lt_model_attention_state_bytes(const lt_model *m, int batch, int max_steps,
                                         size_t *bytes)
{
    size_t all, one;
    LT_TRY(lt_model_state_bytes(m, batch, max_steps, &all)); /* the same refusals */
    LT_TRY(lt_attn_state_bytes(&m->attn, batch, m->config.heads, m->config.head_dim,
                               m->config.head_dim, max_steps, &one));
    *bytes = one * (size_t)m->config.layers;
    return LT_OK;
}

lt_status lt_model_state_init(lt_model_state *s, const lt_model *m, void *block, int batch,
                              int max_steps)
{
    size_t bytes;
    memset(s, 0, sizeof *s);
    LT_TRY(lt_model_state_bytes(m, batch, max_steps, &bytes));
    lt_carver placer = {block, 0};
    LT_TRY(state_layout(s, m, &placer, batch, max_steps));
    s->batch = batch;
    s->max_steps = max_steps;
    if (m->body->step_prepare != NULL)
        LT_TRY(m->body->step_prepare(m, s->body, batch, max_steps));
    return lt_model_state_reset(s, m);
}

lt_status lt_model_state_reset(lt_model_state *s, const lt_model *m)
{
    s->steps = 0;
    return m->body->step_init(m, s->body, s->batch, s->max_steps);
}

lt_status lt_model_step(const lt_model *m, lt_model_state *s, const int32_t *tokens, int pos,
                        const float **logits)
{
    if (pos != s->steps || pos >= s->max_steps)
        return lt_fail(LT_E_USAGE, "model step: position %d, expected %d (positions go in "
                                   "order, below the %d planned)",
                       pos, s->steps, s->max_steps);
    const int P = pos_columns(&m->config, m->width);
    if (P > 0)
        lt_posenc_fill(s->pos, pos, 1, P, P, 0);
    LT_TRY(input_rows(m, s->x, NULL, tokens, NULL, s->batch, 1, s->pos));
    const float *out;
    LT_TRY(m->body->step(m, s->body, s->x, &out));
    head_forward(m, s->logits, out, s->batch, 1);
    s->steps++;
    *logits = s->logits;
    return LT_OK;
}

lt_status lt_model_state_skip(const lt_model *m, lt_model_state *s, int steps)
{
    if (steps < 0 || steps > s->max_steps - s->steps)
        return lt_fail(LT_E_USAGE, "generation: skipping %d positions after %d goes past the "
                                   "%d planned",
                       steps, s->steps, s->max_steps);
    LT_TRY(m->body->step_skip(m, s->body, steps));
    s->steps += steps;
    return LT_OK;
}
