/* A pre-norm transformer stack for token sequences, with the attention core
 * chosen by variant name:
 *
 *   x0 = embed(tokens) + sinusoidal positions (added, not concatenated)
 *   per layer:  x = x + dropout(W_o attention(split(W_qkv layernorm(x))))
 *               x = x + dropout(W_2 act(W_1 layernorm(x)))
 *   logits = W_out layernorm(x)
 *
 * Pre-norm (layernorm inside each residual branch) instead of the original
 * post-norm trains without learning-rate warm-up, which keeps the copy task's
 * short schedules stable.
 *
 * Memory is planned: lt_model_plan adds up parameters, gradients and every
 * activation for a (batch, N) before anything is allocated, and
 * lt_model_alloc then takes them as a few blocks. Forward and backward never
 * allocate. */
#ifndef LT_MODEL_TRANSFORMER_H
#define LT_MODEL_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "attn/attn.h"
#include "core/status.h"

typedef enum lt_activation { LT_ACT_GELU, LT_ACT_RELU } lt_activation;

typedef struct lt_model_config {
    int vocab;        /* input token ids in [0, vocab) */
    int classes;      /* logits per position */
    int layers;
    int heads;
    int head_dim;     /* width C = heads * head_dim */
    int ffn;          /* hidden width of the feed-forward block */
    float dropout;    /* after the attention and feed-forward branches */
    lt_activation activation;
    lt_attn_config attn; /* variant, causal, feature map, eps, Linformer k */
    int max_batch;    /* activations are planned for batch x seq_len */
    int seq_len;
} lt_model_config;

/* Where each parameter tensor lives in the flat parameter array; the same
 * offsets index the gradient array. */
typedef struct lt_layer_offsets {
    size_t ln1_gamma, ln1_beta, w_qkv, b_qkv, w_o, b_o, attn_params;
    size_t ln2_gamma, ln2_beta, w_ff1, b_ff1, w_ff2, b_ff2;
} lt_layer_offsets;

typedef struct lt_layer_acts lt_layer_acts; /* private: saved per layer */

typedef struct lt_model {
    lt_model_config config;
    lt_attn attn;
    int width;                /* C */
    size_t param_count;
    size_t tok_emb, lnf_gamma, lnf_beta, w_out, b_out;
    lt_layer_offsets *layer;  /* (layers) */

    float *params;            /* (param_count) */
    float *grads;             /* (param_count) */

    /* activations and scratch, planned for max_batch x seq_len */
    float *pos_enc;           /* (N, C) */
    float *x0;                /* (R, C) embedded input */
    lt_layer_acts *acts;      /* (layers) */
    float *final_norm;        /* (R, C) */
    float *final_mean, *final_rstd; /* (R) */
    float *logits;            /* (R, classes) */
    float *d_logits;          /* (R, classes) */
    float *d_x, *d_x2;        /* (R, C) gradient of the residual stream */
    float *d_tmp;             /* (R, C) */
    float *d_qkv;             /* (R, 3C) */
    float *d_heads;           /* (3, B, H, N, Dh): dq, dk, dv */
    float *d_attn_out;        /* (B, H, N, Dh) */
    float *d_hidden;          /* (R, F) */
    float *d_hidden2;         /* (R, F) */
    void *attn_workspace;
    const int32_t *last_tokens; /* inputs of the last forward */
    int last_batch;
    int last_training;        /* dropout was on in the last forward */
    void *scratch_table;      /* private: forward scratch pointers */
    void *blocks[4];          /* what lt_model_free releases */
} lt_model;

/* Checks the configuration (sizes >= 1, dropout in [0, 1), attention
 * configuration valid) with LT_E_USAGE naming the setting. */
lt_status lt_model_check_config(const lt_model_config *config);

/* Bytes lt_model_alloc will take for this configuration with `threads`
 * threads (parameters, gradients, activations, attention workspace), and
 * the number of parameters (param_count may be NULL). */
lt_status lt_model_plan(const lt_model_config *config, int threads, size_t *bytes,
                        size_t *param_count);

/* Allocates everything (refusing with LT_E_BUDGET before allocating if the
 * plan exceeds the budget) and initialises parameters from `seed`. */
lt_status lt_model_alloc(lt_model *model, const lt_model_config *config, int threads,
                         uint64_t seed);
void lt_model_free(lt_model *model);

/* Forward pass on tokens (batch, N) -> model->logits (batch * N, classes).
 * `training` turns dropout on, with masks drawn from (seed, step). */
lt_status lt_model_forward(lt_model *model, const int32_t *tokens /* (batch, N) */, int batch,
                           int training, uint64_t seed, uint64_t step);

/* Backward pass from model->d_logits (filled by the caller's loss) into
 * model->grads (added). Uses the activations of the last forward, which
 * must have been a training forward. */
lt_status lt_model_backward(lt_model *model);

/* Sets every gradient to zero. */
void lt_model_zero_grads(lt_model *model);

#endif
