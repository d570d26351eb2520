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
 *   LT_MODEL_WEIGHTS parameters only (for stepping through lt_generator,
 *                    which plans its own state)
 * Forward runs any n <= seq_len positions; per-sequence lengths keep padded
 * positions out of attention (see lt_attn_shape.lengths). */
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

#endif
