#include "model/transformer.h"

#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "nn/dropout.h"
#include "nn/elementwise.h"
#include "nn/embedding.h"
#include "nn/layernorm.h"
#include "nn/linear.h"
#include "nn/posenc.h"

/* What forward keeps per layer for backward. Transient values (the fused
 * qkv rows, the attention output before merging heads, branch outputs) live
 * in shared scratch instead. */
struct lt_layer_acts {
    float *ln1, *ln1_mean, *ln1_rstd; /* (R, C), (R), (R) */
    float *heads;                     /* (3, B, H, N, Dh): q, k, v */
    void *attn_saved;                 /* variant-specific */
    float *attn_cat;                  /* (R, C) attention output, heads merged */
    uint8_t *drop1;                   /* (R, C) */
    float *x_mid;                     /* (R, C) after the attention branch */
    float *ln2, *ln2_mean, *ln2_rstd; /* (R, C), (R), (R) */
    float *hidden;                    /* (R, F) before the activation */
    float *hidden_act;                /* (R, F) after it */
    uint8_t *drop2;                   /* (R, C) */
    float *x_out;                     /* (R, C) after the feed-forward branch */
};

/* Scratch shared by all layers (forward only). */
typedef struct forward_scratch {
    float *qkv;      /* (R, 3C) */
    float *attn_out; /* (B, H, N, Dh) */
    float *branch;   /* (R, C) */
} forward_scratch;

/* Hands out 64-byte aligned slices of one block. With base == NULL it only
 * counts, so the same walk both plans and places the buffers. */
typedef struct carver {
    unsigned char *base;
    size_t used;
} carver;

static void *carve(carver *c, size_t bytes)
{
    void *p = c->base ? c->base + c->used : NULL;
    c->used += lt_mem_rounded(bytes);
    return p;
}

static lt_attn_shape attn_shape(const lt_model_config *cfg, int batch)
{
    lt_attn_shape s = {batch, cfg->heads, cfg->seq_len, cfg->head_dim, cfg->head_dim, NULL};
    return s;
}

/* Parameter offsets (in floats); returns the total count. */
static size_t layout_params(lt_model *m, const lt_attn *attn)
{
    const lt_model_config *cfg = &m->config;
    size_t C = (size_t)cfg->heads * cfg->head_dim, F = (size_t)cfg->ffn;
    size_t at = 0;
#define TAKE(field, count) ((field) = at, at += (count))
    TAKE(m->tok_emb, (size_t)cfg->vocab * C);
    for (int l = 0; l < cfg->layers; l++) {
        lt_layer_offsets *o = &m->layer[l];
        TAKE(o->ln1_gamma, C);
        TAKE(o->ln1_beta, C);
        TAKE(o->w_qkv, 3 * C * C);
        TAKE(o->b_qkv, 3 * C);
        TAKE(o->w_o, C * C);
        TAKE(o->b_o, C);
        TAKE(o->attn_params, lt_attn_param_count(attn));
        TAKE(o->ln2_gamma, C);
        TAKE(o->ln2_beta, C);
        TAKE(o->w_ff1, F * C);
        TAKE(o->b_ff1, F);
        TAKE(o->w_ff2, C * F);
        TAKE(o->b_ff2, C);
    }
    TAKE(m->lnf_gamma, C);
    TAKE(m->lnf_beta, C);
    TAKE(m->w_out, (size_t)cfg->classes * C);
    TAKE(m->b_out, (size_t)cfg->classes);
#undef TAKE
    return at;
}

/* Places (or, with c->base == NULL, counts) every activation and gradient
 * scratch buffer. */
static void layout_activations(lt_model *m, lt_layer_acts *acts, forward_scratch *scratch,
                               carver *c)
{
    const lt_model_config *cfg = &m->config;
    size_t R = (size_t)cfg->max_batch * cfg->seq_len;
    size_t C = (size_t)cfg->heads * cfg->head_dim, F = (size_t)cfg->ffn, f = sizeof(float);
    size_t saved = lt_attn_saved_bytes(&m->attn, attn_shape(cfg, cfg->max_batch));

    m->pos_enc = carve(c, (size_t)cfg->seq_len * C * f);
    m->x0 = carve(c, R * C * f);
    for (int l = 0; l < cfg->layers; l++) {
        lt_layer_acts *a = &acts[l];
        a->ln1 = carve(c, R * C * f);
        a->ln1_mean = carve(c, R * f);
        a->ln1_rstd = carve(c, R * f);
        a->heads = carve(c, 3 * R * C * f);
        a->attn_saved = carve(c, saved);
        a->attn_cat = carve(c, R * C * f);
        a->drop1 = carve(c, R * C);
        a->x_mid = carve(c, R * C * f);
        a->ln2 = carve(c, R * C * f);
        a->ln2_mean = carve(c, R * f);
        a->ln2_rstd = carve(c, R * f);
        a->hidden = carve(c, R * F * f);
        a->hidden_act = carve(c, R * F * f);
        a->drop2 = carve(c, R * C);
        a->x_out = carve(c, R * C * f);
    }
    m->final_norm = carve(c, R * C * f);
    m->final_mean = carve(c, R * f);
    m->final_rstd = carve(c, R * f);
    m->logits = carve(c, R * (size_t)cfg->classes * f);
    m->d_logits = carve(c, R * (size_t)cfg->classes * f);
    scratch->qkv = carve(c, 3 * R * C * f);
    scratch->attn_out = carve(c, R * C * f);
    scratch->branch = carve(c, R * C * f);
    m->d_x = carve(c, R * C * f);
    m->d_x2 = carve(c, R * C * f);
    m->d_tmp = carve(c, R * C * f);
    m->d_qkv = carve(c, 3 * R * C * f);
    m->d_heads = carve(c, 3 * R * C * f);
    m->d_attn_out = carve(c, R * C * f);
    m->d_hidden = carve(c, R * F * f);
    m->d_hidden2 = carve(c, R * F * f);
}

lt_status lt_model_check_config(const lt_model_config *cfg)
{
    struct { const char *name; int value; } sizes[] = {
        {"vocabulary", cfg->vocab}, {"classes", cfg->classes}, {"--layers", cfg->layers},
        {"--heads", cfg->heads}, {"--head-dim", cfg->head_dim}, {"--ffn", cfg->ffn},
        {"--batch", cfg->max_batch}, {"--seq", cfg->seq_len}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return lt_fail(LT_E_USAGE, "%s: expected a positive size, got %d", sizes[i].name,
                           sizes[i].value);
    if (!(cfg->dropout >= 0 && cfg->dropout < 1))
        return lt_fail(LT_E_USAGE, "--dropout: expected a probability in [0, 1), got %g",
                       (double)cfg->dropout);
    lt_attn attn;
    LT_TRY(lt_attn_init(&attn, &cfg->attn));
    return lt_attn_check_shape(&attn, attn_shape(cfg, cfg->max_batch));
}

/* The four blocks: parameters, gradients, activations, attention workspace. */
static lt_status block_sizes(const lt_model_config *cfg, int threads, size_t sizes[4],
                             lt_model *m, lt_layer_offsets *offsets, lt_layer_acts *acts,
                             forward_scratch *scratch)
{
    LT_TRY(lt_model_check_config(cfg));
    memset(m, 0, sizeof *m);
    m->config = *cfg;
    m->layer = offsets;
    LT_TRY(lt_attn_init(&m->attn, &cfg->attn));
    m->width = cfg->heads * cfg->head_dim;
    m->param_count = layout_params(m, &m->attn);
    carver counter = {NULL, 0};
    layout_activations(m, acts, scratch, &counter);
    sizes[0] = m->param_count * sizeof(float);
    sizes[1] = sizes[0];
    sizes[2] = counter.used;
    sizes[3] = lt_attn_workspace_bytes(&m->attn, attn_shape(cfg, cfg->max_batch), threads);
    return LT_OK;
}

lt_status lt_model_plan(const lt_model_config *config, int threads, size_t *bytes,
                        size_t *param_count)
{
    if (config->layers < 1 || config->layers > 4096)
        return lt_fail(LT_E_USAGE, "--layers: expected 1 to 4096, got %d", config->layers);
    lt_model probe;
    lt_layer_offsets offsets[config->layers];
    lt_layer_acts acts[config->layers];
    forward_scratch scratch;
    size_t sizes[4];
    LT_TRY(block_sizes(config, threads, sizes, &probe, offsets, acts, &scratch));
    /* The per-layer tables are allocated too; count them. */
    *bytes = lt_mem_rounded(sizes[0]) + lt_mem_rounded(sizes[1]) + lt_mem_rounded(sizes[2]) +
             lt_mem_rounded(sizes[3]) +
             lt_mem_rounded((size_t)config->layers * sizeof(lt_layer_offsets)) +
             lt_mem_rounded((size_t)config->layers * sizeof(lt_layer_acts)) +
             lt_mem_rounded(sizeof(forward_scratch));
    if (param_count)
        *param_count = probe.param_count;
    return LT_OK;
}

/* Uniform in +-1/sqrt(fan_in) for weights (PyTorch's default for linear
 * layers), zero biases, unit layernorm gains, unit-variance embeddings so
 * tokens are as loud as the positional encoding they are added to. */
static void init_params(lt_model *m, uint64_t seed)
{
    const lt_model_config *cfg = &m->config;
    int C = m->width, F = cfg->ffn;
    float *p = m->params;
    memset(p, 0, m->param_count * sizeof(float));
    lt_rng rng;
    uint64_t stream = 0;
#define UNIFORM(offset, count, fan_in)                                                  \
    do {                                                                                \
        float bound = 1.0f / sqrtf((float)(fan_in));                                    \
        lt_rng_seed(&rng, seed, stream++);                                              \
        lt_rng_fill_uniform(&rng, p + (offset), (long)(count), -bound, bound);          \
    } while (0)
    lt_rng_seed(&rng, seed, stream++);
    lt_rng_fill_normal(&rng, p + m->tok_emb, (long)cfg->vocab * C, 1.0f);
    for (int l = 0; l < cfg->layers; l++) {
        const lt_layer_offsets *o = &m->layer[l];
        for (int i = 0; i < C; i++)
            p[o->ln1_gamma + i] = p[o->ln2_gamma + i] = 1.0f;
        UNIFORM(o->w_qkv, 3 * C * C, C);
        UNIFORM(o->w_o, C * C, C);
        UNIFORM(o->w_ff1, F * C, C);
        UNIFORM(o->w_ff2, C * F, F);
        lt_attn_init_params(&m->attn, p + o->attn_params, seed + 1000003ull * (uint64_t)(l + 1));
    }
    for (int i = 0; i < C; i++)
        p[m->lnf_gamma + i] = 1.0f;
    UNIFORM(m->w_out, cfg->classes * C, C);
#undef UNIFORM
}

lt_status lt_model_alloc(lt_model *m, const lt_model_config *config, int threads, uint64_t seed)
{
    size_t planned;
    LT_TRY(lt_model_plan(config, threads, &planned, NULL));
    LT_TRY(lt_mem_plan(planned, "the model (parameters, gradients, activations)"));

    lt_layer_offsets *offsets = NULL;
    lt_layer_acts *acts = NULL;
    forward_scratch *scratch = NULL;
    LT_TRY(lt_mem_alloc((void **)&offsets, (size_t)config->layers * sizeof *offsets,
                        "layer offsets"));
    lt_status status = lt_mem_alloc((void **)&acts, (size_t)config->layers * sizeof *acts,
                                    "layer activation table");
    if (status == LT_OK)
        status = lt_mem_alloc((void **)&scratch, sizeof *scratch, "forward scratch table");
    size_t sizes[4];
    if (status == LT_OK)
        status = block_sizes(config, threads, sizes, m, offsets, acts, scratch);
    if (status != LT_OK) {
        lt_mem_free(offsets);
        lt_mem_free(acts);
        lt_mem_free(scratch);
        return status;
    }
    m->acts = acts;
    static const char *names[4] = {"model parameters", "model gradients", "model activations",
                                   "attention workspace"};
    for (int i = 0; i < 4 && status == LT_OK; i++)
        status = lt_mem_alloc(&m->blocks[i], sizes[i], names[i]);
    if (status != LT_OK) {
        for (int i = 0; i < 4; i++)
            lt_mem_free(m->blocks[i]);
        lt_mem_free(offsets);
        lt_mem_free(acts);
        lt_mem_free(scratch);
        memset(m, 0, sizeof *m);
        return status;
    }
    m->params = m->blocks[0];
    m->grads = m->blocks[1];
    m->attn_workspace = m->blocks[3];
    carver placer = {m->blocks[2], 0};
    layout_activations(m, acts, scratch, &placer);
    m->last_tokens = NULL;
    m->last_batch = 0;
    m->scratch_table = scratch;
    lt_posenc_fill(m->pos_enc, 0, config->seq_len, m->width, m->width, 0);
    init_params(m, seed);
    lt_model_zero_grads(m);
    return LT_OK;
}

void lt_model_free(lt_model *m)
{
    for (int i = 0; i < 4; i++)
        lt_mem_free(m->blocks[i]);
    lt_mem_free(m->layer);
    lt_mem_free(m->acts);
    lt_mem_free(m->scratch_table);
    memset(m, 0, sizeof *m);
}

void lt_model_zero_grads(lt_model *m)
{
    memset(m->grads, 0, m->param_count * sizeof(float));
}

/* (B*N, T*C) rows -> T tensors (B, H, N, Dh): row (b, n), column
 * t*C + h*Dh + d goes to [t][b][h][n][d]. */
static void split_heads(float *dst, const float *src, int T, int B, int H, int N, int Dh)
{
    const int C = H * Dh;
    const size_t tensor = (size_t)B * H * N * Dh;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N; n++) {
            const float *row = src + ((size_t)b * N + n) * (size_t)(T * C);
            for (int t = 0; t < T; t++)
                for (int h = 0; h < H; h++)
                    memcpy(dst + t * tensor + (((size_t)b * H + h) * N + n) * Dh,
                           row + t * C + h * Dh, (size_t)Dh * sizeof(float));
        }
}

/* The inverse of split_heads. */
static void merge_heads(float *dst, const float *src, int T, int B, int H, int N, int Dh)
{
    const int C = H * Dh;
    const size_t tensor = (size_t)B * H * N * Dh;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N; n++) {
            float *row = dst + ((size_t)b * N + n) * (size_t)(T * C);
            for (int t = 0; t < T; t++)
                for (int h = 0; h < H; h++)
                    memcpy(row + t * C + h * Dh,
                           src + t * tensor + (((size_t)b * H + h) * N + n) * Dh,
                           (size_t)Dh * sizeof(float));
        }
}

static int uses_dropout(const lt_model *m) { return m->config.dropout > 0 && m->last_training; }

lt_status lt_model_forward(lt_model *m, const int32_t *tokens, int batch, int training,
                           uint64_t seed, uint64_t step)
{
    const lt_model_config *cfg = &m->config;
    if (batch < 1 || batch > cfg->max_batch)
        return lt_fail(LT_E_INPUT, "model forward: batch %d outside the planned 1..%d", batch,
                       cfg->max_batch);
    const int N = cfg->seq_len, C = m->width, F = cfg->ffn, H = cfg->heads,
              Dh = cfg->head_dim, R = batch * N;
    const size_t head_tensor = (size_t)R * C;
    const float *p = m->params;
    forward_scratch *s = m->scratch_table;
    lt_attn_shape shape = attn_shape(cfg, batch);
    m->last_tokens = tokens;
    m->last_batch = batch;
    m->last_training = training;

    LT_TRY(lt_embedding_forward(m->x0, tokens, p + m->tok_emb, R, cfg->vocab, C));
    lt_posenc_add(m->x0, m->pos_enc, batch, N, C);
    const float *x = m->x0;
    for (int l = 0; l < cfg->layers; l++) {
        const lt_layer_offsets *o = &m->layer[l];
        lt_layer_acts *a = &m->acts[l];
        lt_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x, p + o->ln1_gamma,
                             p + o->ln1_beta, R, C);
        lt_linear_forward(s->qkv, a->ln1, p + o->w_qkv, p + o->b_qkv, R, C, 3 * C);
        split_heads(a->heads, s->qkv, 3, batch, H, N, Dh);
        LT_TRY(lt_attn_forward(&m->attn, shape, s->attn_out, a->attn_saved, m->attn_workspace,
                               a->heads, a->heads + head_tensor, a->heads + 2 * head_tensor,
                               p + o->attn_params));
        merge_heads(a->attn_cat, s->attn_out, 1, batch, H, N, Dh);
        lt_linear_forward(s->branch, a->attn_cat, p + o->w_o, p + o->b_o, R, C, C);
        lt_dropout_key key = {seed, step, 2 * (uint64_t)l};
        if (uses_dropout(m))
            LT_TRY(lt_dropout_forward(s->branch, a->drop1, s->branch, cfg->dropout, key, R, C));
        lt_add(a->x_mid, x, s->branch, head_tensor);

        lt_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->x_mid, p + o->ln2_gamma,
                             p + o->ln2_beta, R, C);
        lt_linear_forward(a->hidden, a->ln2, p + o->w_ff1, p + o->b_ff1, R, C, F);
        if (cfg->activation == LT_ACT_GELU)
            lt_gelu_forward(a->hidden_act, a->hidden, (long)R * F);
        else
            lt_relu_forward(a->hidden_act, a->hidden, (long)R * F);
        lt_linear_forward(s->branch, a->hidden_act, p + o->w_ff2, p + o->b_ff2, R, F, C);
        key.layer++;
        if (uses_dropout(m))
            LT_TRY(lt_dropout_forward(s->branch, a->drop2, s->branch, cfg->dropout, key, R, C));
        lt_add(a->x_out, a->x_mid, s->branch, head_tensor);
        x = a->x_out;
    }
    lt_layernorm_forward(m->final_norm, m->final_mean, m->final_rstd, x, p + m->lnf_gamma,
                         p + m->lnf_beta, R, C);
    lt_linear_forward(m->logits, m->final_norm, p + m->w_out, p + m->b_out, R, C, cfg->classes);
    return LT_OK;
}

/* The gradient entering a dropout site's input: d_out through the mask, or
 * d_out itself when dropout is off. */
static const float *through_dropout(lt_model *m, float *scratch, const float *d_out,
                                    const uint8_t *mask, int R, int C)
{
    if (!uses_dropout(m))
        return d_out;
    memset(scratch, 0, (size_t)R * C * sizeof(float));
    lt_dropout_backward(scratch, d_out, mask, m->config.dropout, R, C);
    return scratch;
}

lt_status lt_model_backward(lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    const int batch = m->last_batch, N = cfg->seq_len, C = m->width, F = cfg->ffn,
              H = cfg->heads, Dh = cfg->head_dim, R = batch * N;
    if (m->last_tokens == NULL)
        return lt_fail(LT_E_INTERNAL, "model backward called before forward");
    const size_t rc = (size_t)R * C, f = sizeof(float);
    const float *p = m->params;
    float *g = m->grads;
    lt_attn_shape shape = attn_shape(cfg, batch);
    const float *x_last = cfg->layers ? m->acts[cfg->layers - 1].x_out : m->x0;

    memset(m->d_tmp, 0, rc * f);
    lt_linear_backward(m->d_tmp, g + m->w_out, g + m->b_out, m->d_logits, m->final_norm,
                       p + m->w_out, R, C, cfg->classes);
    memset(m->d_x, 0, rc * f);
    lt_layernorm_backward(m->d_x, g + m->lnf_gamma, g + m->lnf_beta, m->d_tmp, x_last,
                          m->final_mean, m->final_rstd, p + m->lnf_gamma, R, C);

    for (int l = cfg->layers - 1; l >= 0; l--) {
        const lt_layer_offsets *o = &m->layer[l];
        lt_layer_acts *a = &m->acts[l];
        const float *x_in = l > 0 ? m->acts[l - 1].x_out : m->x0;

        /* Feed-forward branch; m->d_x holds d x_out and becomes d x_mid. */
        const float *d_branch = through_dropout(m, m->d_tmp, m->d_x, a->drop2, R, C);
        memset(m->d_hidden2, 0, (size_t)R * F * f);
        lt_linear_backward(m->d_hidden2, g + o->w_ff2, g + o->b_ff2, d_branch, a->hidden_act,
                           p + o->w_ff2, R, F, C);
        memset(m->d_hidden, 0, (size_t)R * F * f);
        if (cfg->activation == LT_ACT_GELU)
            lt_gelu_backward(m->d_hidden, m->d_hidden2, a->hidden, (long)R * F);
        else
            lt_relu_backward(m->d_hidden, m->d_hidden2, a->hidden, (long)R * F);
        memset(m->d_tmp, 0, rc * f);
        lt_linear_backward(m->d_tmp, g + o->w_ff1, g + o->b_ff1, m->d_hidden, a->ln2,
                           p + o->w_ff1, R, C, F);
        lt_layernorm_backward(m->d_x, g + o->ln2_gamma, g + o->ln2_beta, m->d_tmp, a->x_mid,
                              a->ln2_mean, a->ln2_rstd, p + o->ln2_gamma, R, C);

        /* Attention branch; m->d_x becomes d x_in. */
        d_branch = through_dropout(m, m->d_tmp, m->d_x, a->drop1, R, C);
        memset(m->d_x2, 0, rc * f);
        lt_linear_backward(m->d_x2, g + o->w_o, g + o->b_o, d_branch, a->attn_cat, p + o->w_o,
                           R, C, C);
        split_heads(m->d_attn_out, m->d_x2, 1, batch, H, N, Dh);
        memset(m->d_heads, 0, 3 * rc * f);
        LT_TRY(lt_attn_backward(&m->attn, shape, m->d_heads, m->d_heads + rc,
                                m->d_heads + 2 * rc, g + o->attn_params, m->attn_workspace,
                                m->d_attn_out, a->attn_saved, a->heads, a->heads + rc,
                                a->heads + 2 * rc, p + o->attn_params));
        merge_heads(m->d_qkv, m->d_heads, 3, batch, H, N, Dh);
        memset(m->d_tmp, 0, rc * f);
        lt_linear_backward(m->d_tmp, g + o->w_qkv, g + o->b_qkv, m->d_qkv, a->ln1,
                           p + o->w_qkv, R, C, 3 * C);
        lt_layernorm_backward(m->d_x, g + o->ln1_gamma, g + o->ln1_beta, m->d_tmp, x_in,
                              a->ln1_mean, a->ln1_rstd, p + o->ln1_gamma, R, C);
    }
    return lt_embedding_backward(g + m->tok_emb, m->d_x, m->last_tokens, R, cfg->vocab, C);
}
