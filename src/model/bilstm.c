/* The Bi-LSTM body (the paper's speech baseline): `layers` bidirectional
 * LSTM layers of `hidden` units per direction; each layer's two directions
 * write the two halves of its output rows, which the next layer reads. The
 * input adapter projects the (stacked) frames to 2 x hidden, so every layer
 * has the same input width. Padded positions never enter the recurrence:
 * the backward direction starts from each sequence's own last frame.
 *
 * No recurrent generation: the backward direction needs the whole
 * sequence. */
#include <string.h>

#include "core/mem.h"
#include "model/body.h"
#include "nn/lstm.h"

typedef struct lstm_layer {
    size_t params[2];  /* offsets of the forward and backward direction */
    float *out;        /* (R, 2H) this layer's output */
    float *saved[2];   /* per direction; NULL for INFER */
} lstm_layer;

typedef struct lstm_table {
    void *workspace;   /* one direction at a time */
    float *d_a, *d_b;  /* (R, 2H) gradient ping-pong, TRAIN only */
    lstm_layer *layer; /* (layers) */
} lstm_table;

static int lstm_width(const lt_model_config *cfg) { return 2 * cfg->hidden; }

static lt_status lstm_check(const lt_model_config *cfg)
{
    if (cfg->hidden < 1)
        return lt_fail(LT_E_USAGE, "hidden: expected a positive size, got %d", cfg->hidden);
    return LT_OK;
}

static size_t lstm_table_bytes(const lt_model_config *cfg)
{
    return lt_mem_rounded(sizeof(lstm_table)) +
           lt_mem_rounded((size_t)cfg->layers * sizeof(lstm_layer));
}

static lstm_table *place_table(lt_model *m)
{
    lstm_table *t = m->body_data;
    t->layer = (lstm_layer *)((unsigned char *)t + lt_mem_rounded(sizeof *t));
    return t;
}

static size_t lstm_layout_params(lt_model *m, size_t at)
{
    lstm_table *t = place_table(m);
    const int H = m->config.hidden;
    for (int l = 0; l < m->config.layers; l++)
        for (int d = 0; d < 2; d++) {
            t->layer[l].params[d] = at;
            at += lt_lstm_param_count(2 * H, H);
        }
    return at;
}

static void lstm_layout_acts(lt_model *m, lt_carver *c)
{
    const lt_model_config *cfg = &m->config;
    lstm_table *t = place_table(m);
    const int B = cfg->max_batch, T = cfg->seq_len, H = cfg->hidden;
    const size_t R = (size_t)B * T, f = sizeof(float);
    const int train = m->use == LT_MODEL_TRAIN;
    if (m->use == LT_MODEL_WEIGHTS)
        return;
    /* INFER: two outputs alternate between the layers */
    float *ping = NULL, *pong = NULL;
    for (int l = 0; l < cfg->layers; l++) {
        lstm_layer *L = &t->layer[l];
        if (train || l < 2)
            L->out = lt_carve(c, R * 2 * H * f);
        else
            L->out = l % 2 ? pong : ping;
        if (l == 0)
            ping = L->out;
        if (l == 1)
            pong = L->out;
        for (int d = 0; d < 2; d++)
            L->saved[d] = train ? lt_carve(c, lt_lstm_saved_floats(B, T, H) * f) : NULL;
    }
    t->workspace = lt_carve(c, lt_lstm_workspace_bytes(B, T, 2 * H, H));
    m->body_out = t->layer[cfg->layers - 1].out;
    if (train) {
        t->d_a = lt_carve(c, R * 2 * H * f);
        t->d_b = lt_carve(c, R * 2 * H * f);
        m->d_body_out = lt_carve(c, R * 2 * H * f);
    }
}

static size_t lstm_workspace_bytes(const lt_model *m, int threads)
{
    (void)m, (void)threads; /* the LSTM's scratch is planned with the activations */
    return 0;
}

static void lstm_init_params(lt_model *m, uint64_t seed, uint64_t *stream)
{
    const lstm_table *t = m->body_data;
    const int H = m->config.hidden;
    for (int l = 0; l < m->config.layers; l++)
        for (int d = 0; d < 2; d++)
            lt_lstm_init_params(m->params + t->layer[l].params[d], 2 * H, H,
                                seed + 7919ull * (*stream)++);
}

static lt_status lstm_forward(lt_model *m)
{
    const lstm_table *t = m->body_data;
    const int B = m->last.batch, T = m->last.n, H = m->config.hidden;
    const float *in = m->x0;
    for (int l = 0; l < m->config.layers; l++) {
        const lstm_layer *L = &t->layer[l];
        for (int d = 0; d < 2; d++)
            LT_TRY(lt_lstm_forward(L->out, 2 * H, d * H, L->saved[d], t->workspace, in,
                                   m->last.lengths, m->params + L->params[d], B, T, 2 * H, H,
                                   d));
        in = L->out;
    }
    m->body_out = t->layer[m->config.layers - 1].out;
    return LT_OK;
}

static lt_status lstm_backward(lt_model *m)
{
    const lstm_table *t = m->body_data;
    const int B = m->last.batch, T = m->last.n, H = m->config.hidden;
    const size_t rows = (size_t)B * T * 2 * H;
    const float *d_out = m->d_body_out;
    float *d_in = t->d_a;
    for (int l = m->config.layers - 1; l >= 0; l--) {
        const lstm_layer *L = &t->layer[l];
        const float *in = l > 0 ? t->layer[l - 1].out : m->x0;
        memset(d_in, 0, rows * sizeof(float));
        for (int d = 0; d < 2; d++)
            LT_TRY(lt_lstm_backward(d_in, m->grads + L->params[d], t->workspace, d_out, 2 * H,
                                    d * H, L->saved[d], in, m->last.lengths,
                                    m->params + L->params[d], B, T, 2 * H, H, d));
        d_out = d_in;
        d_in = d_in == t->d_a ? t->d_b : t->d_a;
    }
    m->d_x0 = (float *)d_out;
    return LT_OK;
}

const lt_body_ops lt_bilstm_body = {
    .in_width = lstm_width,
    .out_width = lstm_width,
    .check_config = lstm_check,
    .table_bytes = lstm_table_bytes,
    .layout_params = lstm_layout_params,
    .layout_acts = lstm_layout_acts,
    .workspace_bytes = lstm_workspace_bytes,
    .init_params = lstm_init_params,
    .forward = lstm_forward,
    .backward = lstm_backward,
};
