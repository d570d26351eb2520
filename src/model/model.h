/* A model is an input adapter, a body and an output head:
 *
 *   inputs   token ids through an embedding (copy; image bytes), or F
 *            continuous values per frame (speech), k frames stacked per
 *            position, through a learned projection; a sinusoidal position
 *            encoding is added to that, or concatenated to it (pos_dim of
 *            the width; the paper concatenates for images), or left out
 *   body     the pre-norm transformer stack (src/model/transformer.c),
 *            causal or not, any attention variant; a Bi-LSTM body plugs in
 *            behind the same interface (src/model/body.h)
 *   head     logits = W_out body_out + b_out, `classes` per position; the
 *            loss that reads them is the trainer's (src/model/loss.h)
 *
 * A model is planned for one of three uses, and allocates exactly what it
 * planned (lt_model_plan equals the tracked bytes lt_model_alloc takes):
 *   LT_MODEL_TRAIN   parameters, gradients, every activation backward needs,
 *                    attention workspace
 *   LT_MODEL_INFER   parameters and one forward's activations, shared by the
 *                    layers: no gradients, no saved-for-backward buffers
 *   LT_MODEL_WEIGHTS parameters only (for stepping: lt_model_step, whose
 *                    state is planned apart)
 * Forward runs any n <= seq_len positions; per-sequence lengths keep padded
 * positions out of attention (see lt_attn_shape.lengths). A model can also
 * read another's parameters in place (lt_model_alloc_reading): a forward
 * planned for other sizes over the same weights. */
#ifndef LT_MODEL_MODEL_H
#define LT_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "attn/attn.h"
#include "core/status.h"

typedef enum lt_input_kind { LT_INPUT_TOKENS, LT_INPUT_FEATURES } lt_input_kind;

typedef enum lt_pos_mode {
    LT_POS_ADD,    /* x0 = input + pe (width columns) */
    LT_POS_CONCAT, /* x0 = [input (width - pos_dim) | pe (pos_dim)] */
    LT_POS_NONE
} lt_pos_mode;

typedef enum lt_body_kind { LT_BODY_TRANSFORMER, LT_BODY_BILSTM } lt_body_kind;

typedef enum lt_activation { LT_ACT_GELU, LT_ACT_RELU } lt_activation;

typedef enum lt_model_use { LT_MODEL_TRAIN, LT_MODEL_INFER, LT_MODEL_WEIGHTS } lt_model_use;

typedef struct lt_model_config {
    /* input */
    lt_input_kind input;
    int vocab;        /* tokens: ids in [0, vocab) */
    int features;     /* features: values per frame */
    int stack;        /* features: frames per position (1 = none) */
    lt_pos_mode pos;
    int pos_dim;      /* concat: columns of the position encoding */
    /* body */
    lt_body_kind body;
    int layers;
    int heads;
    int head_dim;     /* transformer width C = heads * head_dim */
    int ffn;          /* hidden width of the feed-forward block */
    float dropout;    /* after the attention and feed-forward branches */
    lt_activation activation;
    lt_attn_config attn; /* variant, causal, feature map, eps, Linformer k */
    int hidden;       /* bilstm: units per direction */
    /* head */
    int classes;      /* logits per position */
    /* plan */
    int max_batch;    /* activations are planned for max_batch x seq_len */
    int seq_len;      /* positions (after stacking) */
} lt_model_config;

/* The defaults of a token-input transformer: added positions, GELU, no
 * dropout, stack 1, the given attention variant (non-causal; NULL for a
 * body that does not attend, which then leaves attn alone). Sizes are 0
 * and must be set. */
lt_model_config lt_model_default_config(const char *variant);

/* One batch as the engine takes it. Inputs are (batch, n) tokens or
 * (batch, n * stack, features) frames; lengths count valid positions (after
 * stacking). The loss reads targets/mask or labels (src/model/loss.h). */
typedef struct lt_batch {
    int batch;                    /* sequences */
    int n;                        /* positions, <= the planned seq_len */
    const int32_t *tokens;        /* (batch, n) or NULL */
    const float *features;        /* (batch, n * stack, features) or NULL */
    const int32_t *lengths;       /* (batch) valid positions, or NULL: all n */
    const int32_t *targets;       /* (batch, n) per-position targets, or NULL */
    const float *mask;            /* (batch, n) per-position loss weights, or NULL */
    const int32_t *labels;        /* label sequences, concatenated (CTC), or NULL */
    const int32_t *label_lengths; /* (batch) */
} lt_batch;

/* Sequences [first, first + count) of a batch, as a batch of their own
 * (label sequences included). */
lt_batch lt_batch_slice(const lt_batch *batch, const lt_model_config *config, int first,
                        int count);

typedef struct lt_body_ops lt_body_ops; /* private: src/model/body.h */

typedef struct lt_model {
    lt_model_config config;
    lt_model_use use;
    lt_attn attn;             /* resolved once; the body's layers share it */
    const lt_body_ops *body;
    int width;                /* C: what the input adapter hands the body */
    int body_width;           /* what the body hands the head */
    size_t param_count;
    size_t in_table;          /* tokens: embedding (vocab, C - pos columns); features: W_in */
    size_t in_bias;           /* features: b_in */
    size_t w_out, b_out;      /* head */

    float *params;            /* (param_count) */
    float *grads;             /* (param_count); NULL unless TRAIN */

    float *pos_enc;           /* (seq_len, pos columns) */
    float *x0;                /* (R, C) the body's input */
    float *x_in;              /* (R, C - pos_dim) the input part, with CONCAT only */
    float *body_out;          /* (R, body_width): set by the body's forward */
    float *logits;            /* (R, classes) */
    float *d_logits;          /* (R, classes); NULL unless TRAIN */
    float *d_body_out;        /* (R, body_width) */
    float *d_x0;              /* (R, C) */
    void *body_data;          /* the body's tables (offsets, activations) */
    void *attn_workspace;

    lt_batch last;            /* the inputs of the last forward */
    int last_training;        /* dropout was on in the last forward */
    uint64_t last_seed, last_step;
    /* The seed its parameters were drawn from, the run's: attention that
     * draws random numbers takes them from it (lt_attn_shape.seed) with the
     * update, so every shard, evaluation and generation of a run sees its
     * draws, whatever seed dropout gets. */
    uint64_t seed;
    void *blocks[5];          /* what lt_model_free releases */
} lt_model;

/* Checks the configuration with LT_E_USAGE naming the config field
 * ("layers", "attn.proj_k", ...) and the value; programs map fields to
 * their flags (bench_report). */
lt_status lt_model_check_config(const lt_model_config *config);

/* Bytes lt_model_alloc takes for this configuration and use with `threads`
 * threads, and the number of parameters (param_count may be NULL). */
lt_status lt_model_plan(const lt_model_config *config, lt_model_use use, int threads,
                        size_t *bytes, size_t *param_count);

/* Allocates everything (refusing with LT_E_BUDGET before allocating if the
 * plan exceeds the budget) and initialises parameters from `seed`. */
lt_status lt_model_alloc(lt_model *model, const lt_model_config *config, lt_model_use use,
                         int threads, uint64_t seed);
void lt_model_free(lt_model *model);

/* What lt_model_alloc_reading takes: lt_model_plan's bytes but the
 * parameters'. */
lt_status lt_model_plan_reading(const lt_model_config *config, lt_model_use use, int threads,
                                size_t *bytes);

/* A model for inference (or weights only) over `weights`' parameters, read
 * in place: its own activations, workspace and tables, planned for
 * config's max_batch and seq_len; the architecture must be the weights'
 * (LT_E_USAGE otherwise: its parameters would not line up). It draws what
 * its attention draws from the weights' seed, and lt_model_free leaves
 * their parameters alone; the weights must outlive it. */
lt_status lt_model_alloc_reading(lt_model *model, const lt_model_config *config, lt_model_use use,
                                 int threads, const lt_model *weights);

/* Forward on batch->batch x batch->n inputs -> model->logits
 * (batch * n, classes). `training` turns dropout on, with masks drawn from
 * (seed, step); only a TRAIN model may train. */
lt_status lt_model_forward(lt_model *model, const lt_batch *batch, int training, uint64_t seed,
                           uint64_t step);

/* Backward from model->d_logits (filled by the loss) into model->grads
 * (added), using the activations of the last forward. TRAIN models only. */
lt_status lt_model_backward(lt_model *model);

/* Sets every gradient to zero. */
void lt_model_zero_grads(lt_model *model);

/* Where layer `layer`'s gate projections (W_beta, b_beta, W_alpha,
 * b_alpha: those the attention variant reads, one after another) sit in
 * the parameters: [*first, *first + *count); *count is 0 for a model
 * without gates (other variants, the Bi-LSTM body). For tests and tools
 * that look at them apart. */
void lt_model_gate_params(const lt_model *model, int layer, size_t *first, size_t *count);

/* Input values per position and the input's name, for messages. */
int lt_model_input_width(const lt_model_config *config);

/* ---- the recurrent form: one position at a time ----
 *
 * A causal token model also runs as an RNN (llama2.c's forward(token,
 * pos)): lt_model_step takes one token per sequence at position pos and
 * gives the logits that predict position pos + 1, through the forward's
 * own input adapter and head and, between them, every layer's attention
 * step over that layer's state (a state of constant size, or a key/value
 * cache: lt_attn_caps.constant_state). Its logits are the causal forward's
 * at that position, to rounding (a row's products summed in another
 * order). The weights are read in place, so any use of the model will do
 * (LT_MODEL_WEIGHTS suffices); up to LT_LINEAR_FEW_ROWS sequences, the
 * layers' weight matrices are also packed once into panels, the layout
 * the few-rows product streams (lt_linear_panels_pack): the one copy. The
 * state of `batch` sequences of up to max_steps positions lives in one
 * block the caller plans and holds; a step allocates nothing. */
typedef struct lt_model_state {
    int batch, max_steps;
    int steps;     /* positions taken so far (stepped or skipped) */
    void *body;    /* the body's per-layer states, rows and packed panels */
    float *x;      /* (batch, width) the position's input rows */
    float *pos;    /* (width) its position encoding */
    float *logits; /* (batch, classes) */
} lt_model_state;

/* LT_E_USAGE naming why, unless the model predicts each position from the
 * ones before it alone (token inputs, causal attention), as generating
 * does in any way. */
lt_status lt_model_check_generative(const lt_model *model);

/* Bytes of the state block; LT_E_USAGE naming why for a model that cannot
 * step (lt_model_check_generative, or attention without a recurrent
 * form). */
lt_status lt_model_state_bytes(const lt_model *model, int batch, int max_steps, size_t *bytes);

/* Of those, the attention's own: every layer's recurrent state or
 * key/value cache (lt_attn_state_bytes), what a mode's memory grows or
 * stays constant by; the rest is the step's scratch and its packed
 * copies of the weights, the same at every context. */
lt_status lt_model_attention_state_bytes(const lt_model *model, int batch, int max_steps,
                                         size_t *bytes);

/* Lays the state out in `block` (lt_model_state_bytes of it), packs the
 * panels and starts at position 0. After changing the weights, init again
 * (a reset keeps the panels). */
lt_status lt_model_state_init(lt_model_state *state, const lt_model *model, void *block,
                              int batch, int max_steps);
lt_status lt_model_state_reset(lt_model_state *state, const lt_model *model);

/* tokens (batch) at position pos -> *logits (batch, classes), in
 * state->logits. Positions go in order: pos must be state->steps, below
 * max_steps (LT_E_USAGE otherwise). */
lt_status lt_model_step(const lt_model *model, lt_model_state *state, const int32_t *tokens,
                        int pos, const float **logits);

/* Counts `steps` positions as taken without computing them (a key/value
 * cache holds them as zero rows, a constant state is left as it is: see
 * lt_generator_skip). LT_E_USAGE past max_steps. */
lt_status lt_model_state_skip(const lt_model *model, lt_model_state *state, int steps);

#endif
