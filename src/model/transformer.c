/* The pre-norm transformer body:
 *
 *   per layer:  x = x + dropout(W_o attention(split(W_qkv layernorm(x))))
 *               x = x + dropout(W_2 act(W_1 layernorm(x)))
 *   out = layernorm(x)
 *
 * Pre-norm (layernorm inside each residual branch) instead of the original
 * post-norm trains without learning-rate warm-up, which keeps the copy
 * task's short schedules stable.
 *
 * Gated variants (delta, gated-delta, gla) read per-position gates, which
 * each layer projects from the same layernormed rows as q, k and v, with
 * its own parameters (one gate a head, or a head's D key channels for
 * gla's decay):
 *               beta      = sigmoid(W_beta layernorm(x) + b_beta)
 *               log_alpha = log_sigmoid(W_alpha layernorm(x) + b_alpha)
 *
 * TRAIN keeps every layer's activations for backward; INFER points every
 * layer at one shared set (two residual buffers ping-pong), so its memory
 * does not grow with depth and nothing is saved for backward. The recurrent
 * step runs the same layers on one position per sequence over each layer's
 * attention state (linear (S, z), softmax key/value cache, the gated
 * variants' S with the position's gates projected from its own row). */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "core/threads.h"
#include "model/body.h"
#include "nn/dropout.h"
#include "nn/elementwise.h"
#include "nn/layernorm.h"
#include "nn/linear.h"

/* The gates a layer can compute (lt_attn_gates' beta and log_alpha), each
 * with `width` floats a head (lt_attn_gate_widths; 0: the variant reads no
 * such gate, and the layer has no parameters for it). */
enum { GATE_BETA, GATE_ALPHA, GATES };

/* Where each parameter tensor of a layer lives in the flat parameter array;
 * the same offsets index the gradient array. */
typedef struct layer_offsets {
    size_t ln1_gamma, ln1_beta, w_qkv, b_qkv, w_o, b_o, attn_params;
    size_t w_gate[GATES], b_gate[GATES]; /* (H width, C), (H width); 0 floats without */
    size_t ln2_gamma, ln2_beta, w_ff1, b_ff1, w_ff2, b_ff2;
} layer_offsets;

typedef struct gate_kind {
    void (*forward)(float *out, const float *in, long n);
    void (*forward_own)(float *out, const float *in, long n);
    void (*backward)(float *d_in, const float *d_out, const float *in, long n);
} gate_kind;

/* beta in [0, 1]; the decay as its logarithm, log_sigmoid(z) = -softplus(-z),
 * which stays finite where sigmoid(z) underflows. */
static const gate_kind gate_kinds[GATES] = {
    {lt_sigmoid_forward, lt_sigmoid_forward_own, lt_sigmoid_backward},
    {lt_log_sigmoid_forward, lt_log_sigmoid_forward_own, lt_log_sigmoid_backward}};

/* A layer's activations. TRAIN: its own, kept for backward. INFER: shared
 * by every layer (statistics and masks NULL). */
typedef struct layer_acts {
    float *ln1, *ln1_mean, *ln1_rstd; /* (R, C), (R), (R) */
    float *heads;                     /* (3, B, H, N, Dh): q, k, v */
    float *gate_pre[GATES];           /* (B, H, N, width) before the gate's function (INFER:
                                         gate itself, activated in place); NULL without */
    float *gate[GATES];               /* (B, H, N, width) beta, log_alpha */
    void *attn_saved;                 /* variant-specific; NULL for INFER */
    float *attn_cat;                  /* (R, C) attention output, heads merged */
    uint8_t *drop1;                   /* (R, C) */
    float *x_mid;                     /* (R, C) after the attention branch */
    float *ln2, *ln2_mean, *ln2_rstd; /* (R, C), (R), (R) */
    float *hidden;                    /* (R, F) before the activation */
    float *hidden_act;                /* (R, F) after it */
    uint8_t *drop2;                   /* (R, C) */
    float *x_out;                     /* (R, C) after the feed-forward branch */
} layer_acts;

/* The body's table: offsets, activations and shared scratch. */
typedef struct body_table {
    size_t lnf_gamma, lnf_beta;
    int gate_width[GATES];          /* floats a head and position */
    float *gate_rows;               /* (R, H max width) a gate's rows: forward and backward */
    float *d_gate[GATES];           /* (B, H, N, width) TRAIN only */
    float *d_gate_pre;              /* (B, H, N, max width) TRAIN only */
    float *final_mean, *final_rstd; /* (R) */
    float *qkv;                     /* (R, 3C) forward scratch */
    float *attn_out;                /* (B, H, N, Dh) forward scratch */
    float *branch;                  /* (R, C) forward scratch */
    float *d_x, *d_x2, *d_tmp;      /* (R, C) TRAIN only */
    float *d_qkv, *d_heads;         /* (R, 3C) */
    float *d_attn_out;              /* (R, C) */
    float *d_hidden, *d_hidden2;    /* (R, F) */
    layer_offsets *layer;           /* (layers), in this table's block */
    layer_acts *acts;               /* (layers) */
} body_table;

static body_table *table_of(const lt_model *m) { return m->body_data; }

static int transformer_width(const lt_model_config *cfg) { return cfg->heads * cfg->head_dim; }

/* The largest attention call, for plans. */
static lt_attn_shape planned_shape(const lt_model_config *cfg)
{
    return (lt_attn_shape){.B = cfg->max_batch, .H = cfg->heads, .N = cfg->seq_len,
                           .D = cfg->head_dim, .M = cfg->head_dim};
}

static lt_status transformer_check(const lt_model_config *cfg)
{
    struct { const char *name; int value; } sizes[] = {
        {"heads", cfg->heads}, {"head_dim", cfg->head_dim}, {"ffn", cfg->ffn}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return lt_fail(LT_E_USAGE, "%s: expected a positive size, got %d", sizes[i].name,
                           sizes[i].value);
    if (!(cfg->dropout >= 0 && cfg->dropout < 1))
        return lt_fail(LT_E_USAGE, "dropout: expected a probability in [0, 1), got %g",
                       (double)cfg->dropout);
    if (cfg->activation != LT_ACT_GELU && cfg->activation != LT_ACT_RELU)
        return lt_fail(LT_E_USAGE, "activation: expected gelu or relu, got %d",
                       (int)cfg->activation);
    lt_attn attn;
    LT_TRY(lt_attn_init(&attn, &cfg->attn));
    return lt_attn_check_shape(&attn, planned_shape(cfg));
}

static size_t transformer_table_bytes(const lt_model_config *cfg)
{
    return lt_mem_rounded(sizeof(body_table)) +
           lt_mem_rounded((size_t)cfg->layers * sizeof(layer_offsets)) +
           lt_mem_rounded((size_t)cfg->layers * sizeof(layer_acts));
}

/* Points the table's arrays into its own block (m->body_data). */
static body_table *place_table(lt_model *m)
{
    body_table *t = m->body_data;
    unsigned char *p = (unsigned char *)t + lt_mem_rounded(sizeof *t);
    t->layer = (layer_offsets *)p;
    t->acts = (layer_acts *)(p + lt_mem_rounded((size_t)m->config.layers * sizeof(layer_offsets)));
    return t;
}

static size_t transformer_layout_params(lt_model *m, size_t at)
{
    const lt_model_config *cfg = &m->config;
    body_table *t = place_table(m);
    size_t C = (size_t)transformer_width(cfg), F = (size_t)cfg->ffn;
    lt_attn_gate_widths(&m->attn, cfg->head_dim, &t->gate_width[GATE_BETA],
                        &t->gate_width[GATE_ALPHA]);
#define TAKE(field, count) ((field) = at, at += (count))
    for (int l = 0; l < cfg->layers; l++) {
        layer_offsets *o = &t->layer[l];
        TAKE(o->ln1_gamma, C);
        TAKE(o->ln1_beta, C);
        TAKE(o->w_qkv, 3 * C * C);
        TAKE(o->b_qkv, 3 * C);
        TAKE(o->w_o, C * C);
        TAKE(o->b_o, C);
        TAKE(o->attn_params, lt_attn_param_count(&m->attn));
        for (int g = 0; g < GATES; g++) {
            size_t outputs = (size_t)cfg->heads * t->gate_width[g];
            TAKE(o->w_gate[g], outputs * C);
            TAKE(o->b_gate[g], outputs);
        }
        TAKE(o->ln2_gamma, C);
        TAKE(o->ln2_beta, C);
        TAKE(o->w_ff1, F * C);
        TAKE(o->b_ff1, F);
        TAKE(o->w_ff2, C * F);
        TAKE(o->b_ff2, C);
    }
    TAKE(t->lnf_gamma, C);
    TAKE(t->lnf_beta, C);
#undef TAKE
    return at;
}

/* The attention call of the last forward (the layer is set per layer). */
static lt_attn_shape call_shape(const lt_model *m)
{
    lt_attn_shape s = planned_shape(&m->config);
    s.B = m->last.batch;
    s.N = m->last.n;
    s.lengths = m->last.lengths;
    s.seed = m->seed;
    s.step = m->last_step;
    return s;
}

/* Floats of gate g over `rows` positions (H x width a position). */
static size_t gate_floats(const lt_model *m, int g, size_t rows)
{
    return rows * (size_t)m->config.heads * (size_t)table_of(m)->gate_width[g];
}

/* A layer's gates (NULL for a gate the variant does not read); TRAIN
 * keeps the projections before the gate functions for backward, INFER
 * activates them in place. */
static void carve_gates(const lt_model *m, lt_carver *c, layer_acts *a, size_t R, int train)
{
    for (int g = 0; g < GATES; g++) {
        size_t bytes = gate_floats(m, g, R) * sizeof(float);
        a->gate[g] = bytes ? lt_carve(c, bytes) : NULL;
        a->gate_pre[g] = bytes && train ? lt_carve(c, bytes) : a->gate[g];
    }
}

/* The body's gate scratch: a gate's rows, and in TRAIN the gradients. */
static void carve_gate_scratch(lt_model *m, lt_carver *c, size_t R, int train)
{
    body_table *t = table_of(m);
    size_t widest = gate_floats(m, GATE_BETA, R);
    if (gate_floats(m, GATE_ALPHA, R) > widest)
        widest = gate_floats(m, GATE_ALPHA, R);
    t->gate_rows = lt_carve(c, widest * sizeof(float));
    if (!train)
        return;
    for (int g = 0; g < GATES; g++)
        t->d_gate[g] = lt_carve(c, gate_floats(m, g, R) * sizeof(float));
    t->d_gate_pre = lt_carve(c, widest * sizeof(float));
}

/* TRAIN: every layer keeps its own activations. INFER: one shared set;
 * x_mid and x_out alternate between two buffers, and x0 (the model's) is
 * the first of them, since nothing needs it after layer 0 reads it. */
static void transformer_layout_acts(lt_model *m, lt_carver *c)
{
    const lt_model_config *cfg = &m->config;
    body_table *t = place_table(m);
    const int train = m->use == LT_MODEL_TRAIN;
    size_t R = (size_t)cfg->max_batch * cfg->seq_len;
    size_t C = (size_t)transformer_width(cfg), F = (size_t)cfg->ffn, f = sizeof(float);
    size_t saved = train ? lt_attn_saved_bytes(&m->attn, planned_shape(cfg))
                         : 0;
    if (m->use == LT_MODEL_WEIGHTS)
        return;
    layer_acts shared;
    memset(&shared, 0, sizeof shared);
    for (int l = 0; l < cfg->layers; l++) {
        layer_acts *a = &t->acts[l];
        if (!train && l > 0) {
            *a = shared;
            continue;
        }
        memset(a, 0, sizeof *a);
        a->ln1 = lt_carve(c, R * C * f);
        a->heads = lt_carve(c, 3 * R * C * f);
        carve_gates(m, c, a, R, train);
        a->attn_cat = lt_carve(c, R * C * f);
        a->x_mid = lt_carve(c, R * C * f);
        a->hidden = lt_carve(c, R * F * f);
        a->hidden_act = lt_carve(c, R * F * f);
        if (train) {
            a->ln1_mean = lt_carve(c, R * f);
            a->ln1_rstd = lt_carve(c, R * f);
            a->attn_saved = lt_carve(c, saved);
            a->drop1 = lt_carve(c, R * C);
            a->ln2 = lt_carve(c, R * C * f);
            a->ln2_mean = lt_carve(c, R * f);
            a->ln2_rstd = lt_carve(c, R * f);
            a->drop2 = lt_carve(c, R * C);
            a->x_out = lt_carve(c, R * C * f);
        } else {
            a->ln2 = a->ln1;
            a->x_out = m->x0; /* ping-pong with x_mid */
        }
        shared = *a;
    }
    m->body_out = lt_carve(c, R * C * f);
    t->qkv = lt_carve(c, 3 * R * C * f);
    t->attn_out = lt_carve(c, R * C * f);
    t->branch = lt_carve(c, R * C * f);
    carve_gate_scratch(m, c, R, train);
    if (train) {
        t->final_mean = lt_carve(c, R * f);
        t->final_rstd = lt_carve(c, R * f);
        t->d_x = lt_carve(c, R * C * f);
        t->d_x2 = lt_carve(c, R * C * f);
        t->d_tmp = lt_carve(c, R * C * f);
        t->d_qkv = lt_carve(c, 3 * R * C * f);
        t->d_heads = lt_carve(c, 3 * R * C * f);
        t->d_attn_out = lt_carve(c, R * C * f);
        t->d_hidden = lt_carve(c, R * F * f);
        t->d_hidden2 = lt_carve(c, R * F * f);
        m->d_body_out = t->d_tmp;
        m->d_x0 = t->d_x;
    }
}

static size_t transformer_workspace_bytes(const lt_model *m, int threads)
{
    if (m->use == LT_MODEL_WEIGHTS)
        return 0;
    const lt_model_config *cfg = &m->config;
    return lt_attn_workspace_bytes(&m->attn, planned_shape(cfg), threads);
}

void lt_model_gate_params(const lt_model *m, int layer, size_t *first, size_t *count)
{
    *first = *count = 0;
    if (m->config.body != LT_BODY_TRANSFORMER || layer < 0 || layer >= m->config.layers)
        return;
    const layer_offsets *o = &table_of(m)->layer[layer];
    *first = o->w_gate[GATE_BETA]; /* the four follow one another (layout_params) */
    *count = o->b_gate[GATE_ALPHA] + gate_floats(m, GATE_ALPHA, 1) - *first;
}

/* The decay's bias: alpha starts at sigmoid(4) = 0.982 (log_alpha -0.018,
 * spread by W_alpha's uniform init around it), a memory of about 1 /
 * (1 - alpha) = 55 positions, so the state first keeps what a short
 * sequence wrote (the copy task's first half) and gradients reach back
 * through it; training then learns where to forget. A bias near 0 would
 * halve the state at every position, forgetting before anything is
 * learned. beta's bias stays 0: beta starts near 1/2, a half-strength
 * delta-rule correction, as DeltaNet's sigmoid gate without bias. */
#define GATE_ALPHA_BIAS 4.0f

/* Uniform weights (as the other projections), the biases above; no rng
 * stream is drawn for an absent gate, so the other variants' draws stay
 * as they were. */
static void init_gates(lt_model *m, const layer_offsets *o, uint64_t seed, uint64_t *stream)
{
    size_t C = (size_t)m->width;
    for (int g = 0; g < GATES; g++) {
        size_t outputs = gate_floats(m, g, 1);
        if (outputs == 0)
            continue;
        lt_model_init_uniform(m->params + o->w_gate[g], outputs * C, C, seed, stream);
        for (size_t i = 0; i < outputs; i++)
            m->params[o->b_gate[g] + i] = g == GATE_ALPHA ? GATE_ALPHA_BIAS : 0.0f;
    }
}

static void transformer_init_params(lt_model *m, uint64_t seed, uint64_t *stream)
{
    const lt_model_config *cfg = &m->config;
    body_table *t = table_of(m);
    size_t C = (size_t)transformer_width(cfg), F = (size_t)cfg->ffn;
    float *p = m->params;
    for (int l = 0; l < cfg->layers; l++) {
        const layer_offsets *o = &t->layer[l];
        for (size_t i = 0; i < C; i++)
            p[o->ln1_gamma + i] = p[o->ln2_gamma + i] = 1.0f;
        lt_model_init_uniform(p + o->w_qkv, 3 * C * C, C, seed, stream);
        lt_model_init_uniform(p + o->w_o, C * C, C, seed, stream);
        lt_model_init_uniform(p + o->w_ff1, F * C, C, seed, stream);
        lt_model_init_uniform(p + o->w_ff2, C * F, F, seed, stream);
        init_gates(m, o, seed, stream);
        lt_attn_init_params(&m->attn, p + o->attn_params, seed + 1000003ull * (uint64_t)(l + 1));
    }
    for (size_t i = 0; i < C; i++)
        p[t->lnf_gamma + i] = 1.0f;
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

static void activation_forward(const lt_model_config *cfg, float *out, const float *in, long n)
{
    if (cfg->activation == LT_ACT_GELU)
        lt_gelu_forward(out, in, n);
    else
        lt_relu_forward(out, in, n);
}

/* Layer l's gates for its attention call (NULL where the variant reads
 * none); with `grads`, their gradients' buffers too, zeroed, since the
 * attention backward adds into them. */
static lt_attn_gates layer_gates(const lt_model *m, int l, int grads)
{
    const body_table *t = table_of(m);
    const layer_acts *a = &t->acts[l];
    lt_attn_gates gates = {.beta = a->gate[GATE_BETA], .log_alpha = a->gate[GATE_ALPHA]};
    if (grads) {
        const size_t R = (size_t)m->last.batch * m->last.n;
        for (int g = 0; g < GATES; g++)
            if (a->gate[g] != NULL)
                lt_zero_floats(t->d_gate[g], gate_floats(m, g, R));
        gates.d_beta = a->gate[GATE_BETA] ? t->d_gate[GATE_BETA] : NULL;
        gates.d_log_alpha = a->gate[GATE_ALPHA] ? t->d_gate[GATE_ALPHA] : NULL;
    }
    return gates;
}

/* Forward: layer l's gates from its ln1 rows, z = ln1 W^T + b (R, H
 * width), the heads apart as q's are (B, H, N, width), then the gate's
 * function. Backward: back through that from the gradients the attention
 * left in t->d_gate, into the projections' gradients and d ln1 (added into
 * t->d_tmp). */
static void gates_pass(lt_model *m, int l, int backward)
{
    const body_table *t = table_of(m);
    const layer_offsets *o = &t->layer[l];
    const layer_acts *a = &t->acts[l];
    const int batch = m->last.batch, N = m->last.n, H = m->config.heads, R = batch * N;
    for (int g = 0; g < GATES; g++) {
        const int w = t->gate_width[g];
        const size_t n = gate_floats(m, g, (size_t)R);
        const float *weight = m->params + o->w_gate[g];
        if (w == 0)
            continue;
        if (!backward) {
            lt_linear_forward(t->gate_rows, a->ln1, weight, m->params + o->b_gate[g], R,
                              m->width, H * w);
            split_heads(a->gate_pre[g], t->gate_rows, 1, batch, H, N, w);
            gate_kinds[g].forward(a->gate[g], a->gate_pre[g], (long)n);
            continue;
        }
        lt_zero_floats(t->d_gate_pre, n);
        gate_kinds[g].backward(t->d_gate_pre, t->d_gate[g], a->gate_pre[g], (long)n);
        merge_heads(t->gate_rows, t->d_gate_pre, 1, batch, H, N, w);
        lt_linear_backward(t->d_tmp, m->grads + o->w_gate[g], m->grads + o->b_gate[g],
                           t->gate_rows, a->ln1, weight, R, m->width, H * w);
    }
}

static lt_status transformer_forward(lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    body_table *t = table_of(m);
    const int batch = m->last.batch, N = m->last.n, C = m->width, F = cfg->ffn,
              H = cfg->heads, Dh = cfg->head_dim, R = batch * N;
    const size_t rc = (size_t)R * C;
    const float *p = m->params;
    lt_attn_shape shape = call_shape(m);
    const float *x = m->x0;
    for (int l = 0; l < cfg->layers; l++) {
        const layer_offsets *o = &t->layer[l];
        layer_acts *a = &t->acts[l];
        lt_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x, p + o->ln1_gamma,
                             p + o->ln1_beta, R, C);
        lt_linear_forward(t->qkv, a->ln1, p + o->w_qkv, p + o->b_qkv, R, C, 3 * C);
        split_heads(a->heads, t->qkv, 3, batch, H, N, Dh);
        gates_pass(m, l, 0);
        const lt_attn_gates gates = layer_gates(m, l, 0);
        shape.layer = l;
        LT_TRY(lt_attn_forward_gated(&m->attn, shape, &gates, t->attn_out, a->attn_saved,
                                     m->attn_workspace, a->heads, a->heads + rc,
                                     a->heads + 2 * rc, p + o->attn_params));
        merge_heads(a->attn_cat, t->attn_out, 1, batch, H, N, Dh);
        lt_linear_forward(t->branch, a->attn_cat, p + o->w_o, p + o->b_o, R, C, C);
        lt_dropout_key key = {m->last_seed, m->last_step, 2 * (uint64_t)l};
        if (uses_dropout(m))
            LT_TRY(lt_dropout_forward(t->branch, a->drop1, t->branch, cfg->dropout, key, R, C));
        lt_add(a->x_mid, x, t->branch, (long)rc);

        lt_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->x_mid, p + o->ln2_gamma,
                             p + o->ln2_beta, R, C);
        lt_linear_forward(a->hidden, a->ln2, p + o->w_ff1, p + o->b_ff1, R, C, F);
        activation_forward(cfg, a->hidden_act, a->hidden, (long)R * F);
        lt_linear_forward(t->branch, a->hidden_act, p + o->w_ff2, p + o->b_ff2, R, F, C);
        key.layer++;
        if (uses_dropout(m))
            LT_TRY(lt_dropout_forward(t->branch, a->drop2, t->branch, cfg->dropout, key, R, C));
        lt_add(a->x_out, a->x_mid, t->branch, (long)rc);
        x = a->x_out;
    }
    lt_layernorm_forward(m->body_out, t->final_mean, t->final_rstd, x, p + t->lnf_gamma,
                         p + t->lnf_beta, R, C);
    return LT_OK;
}

/* The gradient entering a dropout site's input: d_out through the mask, or
 * d_out itself when dropout is off. */
static const float *through_dropout(const lt_model *m, float *scratch, const float *d_out,
                                    const uint8_t *mask, int R, int C)
{
    if (!uses_dropout(m))
        return d_out;
    lt_zero_floats(scratch, (size_t)R * C);
    lt_dropout_backward(scratch, d_out, mask, m->config.dropout, R, C);
    return scratch;
}

static lt_status transformer_backward(lt_model *m)
{
    const lt_model_config *cfg = &m->config;
    body_table *t = table_of(m);
    const int batch = m->last.batch, N = m->last.n, C = m->width, F = cfg->ffn,
              H = cfg->heads, Dh = cfg->head_dim, R = batch * N;
    const size_t rc = (size_t)R * C;
    const float *p = m->params;
    float *g = m->grads;
    lt_attn_shape shape = call_shape(m);
    const float *x_last = cfg->layers ? t->acts[cfg->layers - 1].x_out : m->x0;

    /* m->d_body_out is t->d_tmp: read it before d_tmp is reused. */
    lt_zero_floats(t->d_x, rc);
    lt_layernorm_backward(t->d_x, g + t->lnf_gamma, g + t->lnf_beta, m->d_body_out, x_last,
                          t->final_mean, t->final_rstd, p + t->lnf_gamma, R, C);

    for (int l = cfg->layers - 1; l >= 0; l--) {
        const layer_offsets *o = &t->layer[l];
        layer_acts *a = &t->acts[l];
        const float *x_in = l > 0 ? t->acts[l - 1].x_out : m->x0;

        /* Feed-forward branch; t->d_x holds d x_out and becomes d x_mid. */
        const float *d_branch = through_dropout(m, t->d_tmp, t->d_x, a->drop2, R, C);
        lt_zero_floats(t->d_hidden2, (size_t)R * F);
        lt_linear_backward(t->d_hidden2, g + o->w_ff2, g + o->b_ff2, d_branch, a->hidden_act,
                           p + o->w_ff2, R, F, C);
        lt_zero_floats(t->d_hidden, (size_t)R * F);
        if (cfg->activation == LT_ACT_GELU)
            lt_gelu_backward(t->d_hidden, t->d_hidden2, a->hidden, (long)R * F);
        else
            lt_relu_backward(t->d_hidden, t->d_hidden2, a->hidden, (long)R * F);
        lt_zero_floats(t->d_tmp, rc);
        lt_linear_backward(t->d_tmp, g + o->w_ff1, g + o->b_ff1, t->d_hidden, a->ln2,
                           p + o->w_ff1, R, C, F);
        lt_layernorm_backward(t->d_x, g + o->ln2_gamma, g + o->ln2_beta, t->d_tmp, a->x_mid,
                              a->ln2_mean, a->ln2_rstd, p + o->ln2_gamma, R, C);

        /* Attention branch; t->d_x becomes d x_in. */
        d_branch = through_dropout(m, t->d_tmp, t->d_x, a->drop1, R, C);
        lt_zero_floats(t->d_x2, rc);
        lt_linear_backward(t->d_x2, g + o->w_o, g + o->b_o, d_branch, a->attn_cat, p + o->w_o,
                           R, C, C);
        split_heads(t->d_attn_out, t->d_x2, 1, batch, H, N, Dh);
        lt_zero_floats(t->d_heads, 3 * rc);
        const lt_attn_gates gates = layer_gates(m, l, 1);
        shape.layer = l;
        LT_TRY(lt_attn_backward_gated(&m->attn, shape, &gates, t->d_heads, t->d_heads + rc,
                                      t->d_heads + 2 * rc, g + o->attn_params,
                                      m->attn_workspace, t->d_attn_out, a->attn_saved, a->heads,
                                      a->heads + rc, a->heads + 2 * rc, p + o->attn_params));
        merge_heads(t->d_qkv, t->d_heads, 3, batch, H, N, Dh);
        lt_zero_floats(t->d_tmp, rc);
        lt_linear_backward(t->d_tmp, g + o->w_qkv, g + o->b_qkv, t->d_qkv, a->ln1,
                           p + o->w_qkv, R, C, 3 * C);
        gates_pass(m, l, 1);
        lt_layernorm_backward(t->d_x, g + o->ln1_gamma, g + o->ln1_beta, t->d_tmp, x_in,
                              a->ln1_mean, a->ln1_rstd, p + o->ln1_gamma, R, C);
    }
    return LT_OK;
}

/* ---- recurrent step: one position per sequence ---- */

/* The step block: a header, per-layer attention states, then row buffers
 * for `batch` rows. */
typedef struct step_block {
    int batch, max_steps;
    size_t state_bytes;      /* one layer's attention state */
    unsigned char *states;   /* (layers) states */
    float *x, *ln;           /* (batch, C) */
    float *qkv;              /* (batch, 3C) */
    float *q, *k, *v;        /* (batch, C) each: (batch, H, Dh) for the attention */
    float *gate[GATES];      /* (batch, H, width): beta, log_alpha; NULL without */
    float *att, *branch;     /* (batch, C) */
    float *hidden, *hidden_act; /* (batch, F) */
    float *out;              /* (batch, C) */
    /* up to LT_LINEAR_FEW_ROWS rows: every layer's weight matrices as
     * packed panels (lt_linear_panels_pack), in the order qkv, o, ff1, ff2
     * and the gates'; NULL for larger batches (the BLAS product) */
    float *panels;
} step_block;

/* Floats of one product's panels within a layer's, and of a layer's. */
typedef struct layer_panels {
    size_t qkv, o, ff1, ff2, gate[GATES], layer;
} layer_panels;

static layer_panels panel_sizes(const lt_model *m)
{
    const int C = m->width, F = m->config.ffn;
    layer_panels p = {lt_linear_panels_floats(C, 3 * C), lt_linear_panels_floats(C, C),
                      lt_linear_panels_floats(C, F), lt_linear_panels_floats(F, C), {0}, 0};
    p.layer = p.qkv + p.o + p.ff1 + p.ff2;
    for (int g = 0; g < GATES; g++) {
        p.gate[g] = lt_linear_panels_floats(C, (int)gate_floats(m, g, 1));
        p.layer += p.gate[g];
    }
    return p;
}

/* Where gate g's panels start within a layer's. */
static size_t gate_panel(const layer_panels *n, int g)
{
    return n->qkv + n->o + n->ff1 + n->ff2 + (g == GATE_ALPHA ? n->gate[GATE_BETA] : 0);
}

static void step_layout(const lt_model *m, lt_carver *c, step_block *s, int batch,
                        size_t state_bytes)
{
    size_t C = (size_t)m->width, F = (size_t)m->config.ffn, B = (size_t)batch, f = sizeof(float);
    lt_carve(c, sizeof(step_block));
    s->states = lt_carve(c, state_bytes * (size_t)m->config.layers);
    s->x = lt_carve(c, B * C * f);
    s->ln = lt_carve(c, B * C * f);
    s->qkv = lt_carve(c, 3 * B * C * f);
    s->q = lt_carve(c, B * C * f);
    s->k = lt_carve(c, B * C * f);
    s->v = lt_carve(c, B * C * f);
    for (int g = 0; g < GATES; g++) {
        size_t bytes = gate_floats(m, g, B) * f;
        s->gate[g] = bytes ? lt_carve(c, bytes) : NULL;
    }
    s->att = lt_carve(c, B * C * f);
    s->branch = lt_carve(c, B * C * f);
    s->hidden = lt_carve(c, B * F * f);
    s->hidden_act = lt_carve(c, B * F * f);
    s->out = lt_carve(c, B * C * f);
    s->panels = batch <= LT_LINEAR_FEW_ROWS
                    ? lt_carve(c, panel_sizes(m).layer * (size_t)m->config.layers * f)
                    : NULL;
}

/* The panels of every layer's products, from the model's weights: packed
 * once, when the generator is created (step_prepare), not at every
 * sequence: the packing is a pass over all the weights. */
static void pack_panels(const lt_model *m, const step_block *s)
{
    const int C = m->width, F = m->config.ffn;
    const layer_panels n = panel_sizes(m);
    const float *p = m->params;
#pragma omp parallel
    for (int l = 0; l < m->config.layers; l++) {
        const layer_offsets *o = &table_of(m)->layer[l];
        float *at = s->panels + (size_t)l * n.layer;
        lt_linear_panels_pack_team(at, p + o->w_qkv, C, 3 * C);
        lt_linear_panels_pack_team(at + n.qkv, p + o->w_o, C, C);
        lt_linear_panels_pack_team(at + n.qkv + n.o, p + o->w_ff1, C, F);
        lt_linear_panels_pack_team(at + n.qkv + n.o + n.ff1, p + o->w_ff2, F, C);
        for (int g = 0; g < GATES; g++)
            if (n.gate[g] > 0)
                lt_linear_panels_pack_team(at + gate_panel(&n, g), p + o->w_gate[g], C,
                                           (int)gate_floats(m, g, 1));
    }
}

static lt_status one_state_bytes(const lt_model *m, int batch, int max_steps, size_t *bytes)
{
    LT_TRY(lt_attn_state_bytes(&m->attn, batch, m->config.heads, m->config.head_dim,
                               m->config.head_dim, max_steps, bytes));
    *bytes = lt_mem_rounded(*bytes);
    return LT_OK;
}

static lt_status transformer_step_bytes(const lt_model *m, int batch, int max_steps,
                                        size_t *bytes)
{
    size_t state;
    LT_TRY(one_state_bytes(m, batch, max_steps, &state));
    step_block s;
    lt_carver counter = {NULL, 0};
    step_layout(m, &counter, &s, batch, state);
    *bytes = counter.used;
    return LT_OK;
}

static lt_status transformer_step_init(const lt_model *m, void *block, int batch, int max_steps)
{
    size_t state;
    LT_TRY(one_state_bytes(m, batch, max_steps, &state));
    step_block s = {.batch = batch, .max_steps = max_steps, .state_bytes = state};
    lt_carver placer = {block, 0};
    step_layout(m, &placer, &s, batch, state);
    /* Variants that draw from (seed, layer) (the favor feature map) draw
     * what the model's last forward drew: the seed it was given. */
    for (int l = 0; l < m->config.layers; l++)
        LT_TRY(lt_attn_state_init(&m->attn, s.states + (size_t)l * state, batch, m->config.heads,
                                  m->config.head_dim, m->config.head_dim, max_steps,
                                  m->seed, l));
    memcpy(block, &s, sizeof s);
    return LT_OK;
}

static lt_status transformer_step_prepare(const lt_model *m, void *block, int batch,
                                          int max_steps)
{
    size_t state;
    LT_TRY(one_state_bytes(m, batch, max_steps, &state));
    step_block s;
    lt_carver placer = {block, 0};
    step_layout(m, &placer, &s, batch, state);
    if (s.panels != NULL)
        pack_panels(m, &s);
    return LT_OK;
}

/* A step's layers on one row per sequence; the attention reads and extends
 * each layer's state instead of the whole sequence. Up to
 * LT_LINEAR_FEW_ROWS rows ("team" steps) the products stream each weight
 * matrix once, from the panels packed when the step sequence started
 * (lt_linear_panels_forward), and the whole position runs in one
 * parallel region, work-shared, the attention steps too (their heads split
 * over the team): a position pays one fork and join instead of one per
 * layer (one per product and pass before that), and no pass runs on one
 * thread while the other waits. Each thread adds the residual to,
 * activates or splits the columns its share of a product computed, so the
 * team meets at one barrier per product, layer norm and attention step: 7
 * a layer, where a barrier per pass made 10 and a fork besides. More rows: the BLAS
 * product, each pass with its own threads. Either way the same bits for
 * any thread count: each output is one fixed-order sum. */
typedef struct step_pass {
    const lt_model *m;
    step_block *s;
    int team; /* inside a parallel region: *_team and *_own functions */
} step_pass;

static void pass_norm(const step_pass *t, float *out, const float *in, size_t gamma, size_t beta)
{
    const float *p = t->m->params;
    const int B = t->s->batch, C = t->m->width;
    if (t->team)
        lt_layernorm_forward_team(out, NULL, NULL, in, p + gamma, p + beta, B, C);
    else
        lt_layernorm_forward(out, NULL, NULL, in, p + gamma, p + beta, B, C);
}

/* Steps of more rows: a product through BLAS, its own threads. */
static void pass_product(const step_pass *t, float *out, const float *in, size_t weight,
                         size_t bias, int C_in, int C_out)
{
    const float *p = t->m->params;
    lt_linear_forward(out, in, p + weight, p + bias, t->s->batch, C_in, C_out);
}

/* Team steps: this thread's share of a product of layer l (`panel`: its
 * offset in the layer's panels), no barrier after it; its outputs are
 * columns [*first, *end) of every row. */
static void pass_product_own(const step_pass *t, float *out, const float *in, int l,
                             size_t panel, size_t bias, int C_in, int C_out, int *first,
                             int *end)
{
    lt_linear_panels_forward_own(out, in,
                                 t->s->panels + (size_t)l * panel_sizes(t->m).layer + panel,
                                 t->m->params + bias, t->s->batch, C_in, C_out, first, end);
}

/* Team steps: x += branch over columns [first, end) of every row (width
 * C): the residual add of the columns this thread computed. */
static void add_own_columns(const step_pass *t, float *x, const float *branch, int first,
                            int end)
{
    const int C = t->m->width;
    for (int b = 0; b < t->s->batch; b++)
        lt_add_own(x + (size_t)b * C + first, x + (size_t)b * C + first,
                   branch + (size_t)b * C + first, end - first);
}

/* Layer l's gates of the position from s->ln: (batch, H width) rows are
 * already (B, H, width), the layout a step reads. Team steps: each thread
 * applies the gate's function to the columns it computed (the caller's
 * barrier follows). */
static void step_gates(const step_pass *t, int l)
{
    const layer_offsets *o = &table_of(t->m)->layer[l];
    const layer_panels n = panel_sizes(t->m);
    step_block *s = t->s;
    const int C = t->m->width;
    for (int g = 0; g < GATES; g++) {
        const int width = (int)gate_floats(t->m, g, 1);
        int first = 0, end = width;
        if (width == 0)
            continue;
        if (t->team)
            pass_product_own(t, s->gate[g], s->ln, l, gate_panel(&n, g), o->b_gate[g], C,
                             width, &first, &end);
        else
            pass_product(t, s->gate[g], s->ln, o->w_gate[g], o->b_gate[g], C, width);
        for (int b = 0; b < s->batch; b++) {
            float *row = s->gate[g] + (size_t)b * width + first;
            gate_kinds[g].forward_own(row, row, end - first);
        }
    }
}

/* Layer l up to its attention: ln1, the qkv product, q, k, v apart, the
 * gates. */
static void step_before_attention(const step_pass *t, int l)
{
    const layer_offsets *o = &table_of(t->m)->layer[l];
    step_block *s = t->s;
    const int B = s->batch, C = t->m->width;
    pass_norm(t, s->ln, s->x, o->ln1_gamma, o->ln1_beta);
    if (t->team) { /* each thread splits the columns it computed */
        int first, end;
        pass_product_own(t, s->qkv, s->ln, l, 0, o->b_qkv, C, 3 * C, &first, &end);
        float *part[3] = {s->q, s->k, s->v};
        for (int b = 0; b < B; b++)
            for (int p = 0; p < 3; p++) {
                int lo = first > p * C ? first : p * C, hi = end < (p + 1) * C ? end : (p + 1) * C;
                if (lo < hi)
                    memcpy(part[p] + (size_t)b * C + lo - p * C, s->qkv + (size_t)b * 3 * C + lo,
                           (size_t)(hi - lo) * sizeof(float));
            }
        step_gates(t, l);
        return; /* the caller's barrier follows: the attention step reads every head */
    }
    pass_product(t, s->qkv, s->ln, o->w_qkv, o->b_qkv, C, 3 * C);
    /* one position: (B, 3C) rows split into q, k, v of (B, H, Dh) */
#pragma omp for schedule(static)
    for (int b = 0; b < B; b++) {
        const float *row = s->qkv + (size_t)b * 3 * C;
        memcpy(s->q + (size_t)b * C, row, (size_t)C * sizeof(float));
        memcpy(s->k + (size_t)b * C, row + C, (size_t)C * sizeof(float));
        memcpy(s->v + (size_t)b * C, row + 2 * C, (size_t)C * sizeof(float));
    }
    step_gates(t, l);
}

/* Layer l after its attention: the output product, the residual, ln2, the
 * feed-forward, the residual; then layer l + 1 up to its attention, or the
 * final layer norm. */
static void step_after_attention(const step_pass *t, int l)
{
    const body_table *table = table_of(t->m);
    const layer_offsets *o = &table->layer[l];
    step_block *s = t->s;
    const int C = t->m->width, F = t->m->config.ffn;
    const layer_panels n = panel_sizes(t->m);
    if (t->team) {
        /* each thread adds and activates the columns it computed: a barrier
         * per product, none for the passes after them */
        int first, end;
        pass_product_own(t, s->branch, s->att, l, n.qkv, o->b_o, C, C, &first, &end);
        add_own_columns(t, s->x, s->branch, first, end);
#pragma omp barrier
        pass_norm(t, s->ln, s->x, o->ln2_gamma, o->ln2_beta);
        pass_product_own(t, s->hidden, s->ln, l, n.qkv + n.o, o->b_ff1, C, F, &first, &end);
        void (*activate)(float *, const float *, long) =
            t->m->config.activation == LT_ACT_GELU ? lt_gelu_forward_own : lt_relu_forward_own;
        for (int b = 0; b < s->batch; b++)
            activate(s->hidden_act + (size_t)b * F + first, s->hidden + (size_t)b * F + first,
                     end - first);
#pragma omp barrier
        pass_product_own(t, s->branch, s->hidden_act, l, n.qkv + n.o + n.ff1, o->b_ff2, F, C,
                         &first, &end);
        add_own_columns(t, s->x, s->branch, first, end);
#pragma omp barrier
    } else {
        const long width = (long)s->batch * C, hidden = (long)s->batch * F;
        pass_product(t, s->branch, s->att, o->w_o, o->b_o, C, C);
        lt_add(s->x, s->x, s->branch, width);
        pass_norm(t, s->ln, s->x, o->ln2_gamma, o->ln2_beta);
        pass_product(t, s->hidden, s->ln, o->w_ff1, o->b_ff1, C, F);
        activation_forward(&t->m->config, s->hidden_act, s->hidden, hidden);
        pass_product(t, s->branch, s->hidden_act, o->w_ff2, o->b_ff2, F, C);
        lt_add(s->x, s->x, s->branch, width);
    }
    if (l + 1 < t->m->config.layers)
        step_before_attention(t, l + 1);
    else
        pass_norm(t, s->out, s->x, table->lnf_gamma, table->lnf_beta);
}

static lt_status transformer_step(const lt_model *m, void *block, const float *x_in,
                                  const float **out)
{
    step_block *s = block;
    step_pass t = {m, s, s->batch <= LT_LINEAR_FEW_ROWS};
    memcpy(s->x, x_in, (size_t)s->batch * m->width * sizeof(float));
    lt_status status = LT_OK;
    const lt_attn_gates gates = {.beta = s->gate[GATE_BETA], .log_alpha = s->gate[GATE_ALPHA]};
    /* team steps: one region for the whole position, the attention steps
     * split by heads; more rows: an inactive region, each pass with its own
     * threads */
#pragma omp parallel if (t.team)
    {
        lt_status mine = LT_OK;
        step_before_attention(&t, 0);
        for (int l = 0; l < m->config.layers && mine == LT_OK; l++) {
            void *state = s->states + (size_t)l * s->state_bytes;
#pragma omp barrier
            mine = t.team ? lt_attn_step_team_gated(&m->attn, state, s->att, s->q, s->k, s->v,
                                                    &gates)
                          : lt_attn_step_gated(&m->attn, state, s->att, s->q, s->k, s->v,
                                               &gates);
            if (mine == LT_OK) /* every thread has the same verdict */
                step_after_attention(&t, l);
        }
#pragma omp master
        status = mine;
    }
    *out = s->out;
    return status;
}

static lt_status transformer_step_skip(const lt_model *m, void *block, int steps)
{
    step_block *s = block;
    for (int l = 0; l < m->config.layers; l++)
        LT_TRY(lt_attn_state_skip(&m->attn, s->states + (size_t)l * s->state_bytes, steps));
    return LT_OK;
}

const lt_body_ops lt_transformer_body = {
    .in_width = transformer_width,
    .out_width = transformer_width,
    .check_config = transformer_check,
    .table_bytes = transformer_table_bytes,
    .layout_params = transformer_layout_params,
    .layout_acts = transformer_layout_acts,
    .workspace_bytes = transformer_workspace_bytes,
    .init_params = transformer_init_params,
    .forward = transformer_forward,
    .backward = transformer_backward,
    .step_bytes = transformer_step_bytes,
    .step_init = transformer_step_init,
    .step_prepare = transformer_step_prepare,
    .step = transformer_step,
    .step_skip = transformer_step_skip,
};
