/* Private to src/model: the interface between the model (input adapter and
 * head, model.c) and its body (the transformer stack, or a Bi-LSTM). A body
 * lays out its parameters and activations through the same carver walk that
 * plans them, so plans equal allocations by construction. */
#ifndef LT_MODEL_BODY_H
#define LT_MODEL_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Hands out 64-byte aligned slices of one block. With base == NULL it only
 * counts, so the same walk both plans and places the buffers. */
typedef struct lt_carver {
    unsigned char *base;
    size_t used;
} lt_carver;

void *lt_carve(lt_carver *c, size_t bytes);

struct lt_body_ops {
    /* Width of the rows the body reads (the input adapter's output). */
    int (*in_width)(const lt_model_config *config);
    /* Width of the body's output rows (the head's input). */
    int (*out_width)(const lt_model_config *config);
    /* Checks the body's own fields (LT_E_USAGE naming the field). */
    lt_status (*check_config)(const lt_model_config *config);
    /* Bytes of the body's private table (parameter offsets and activation
     * pointers), which model.c allocates and hands over as m->body_data. */
    size_t (*table_bytes)(const lt_model_config *config);
    /* Parameter offsets from `at` (floats) into m->body_data; returns the
     * end. */
    size_t (*layout_params)(lt_model *m, size_t at);
    /* Places (or counts) the activations of m->use for max_batch x seq_len
     * rows; sets m->body_out and, for TRAIN, m->d_body_out and m->d_x0. */
    void (*layout_acts)(lt_model *m, lt_carver *c);
    /* Scratch bytes (attention workspace) for `threads` threads; 0 for
     * WEIGHTS. */
    size_t (*workspace_bytes)(const lt_model *m, int threads);
    /* Initialises the body's parameters; *stream counts the rng streams
     * used so far (the model's init order: input, body, head). */
    void (*init_params)(lt_model *m, uint64_t seed, uint64_t *stream);
    /* m->x0 (R, C) -> m->body_out (R, body_width), for m->last. */
    lt_status (*forward)(lt_model *m);
    /* m->d_body_out -> m->d_x0, adding parameter gradients. */
    lt_status (*backward)(lt_model *m);

    /* Recurrent generation; NULL step when the body has none. State and
     * scratch for `batch` sequences of up to max_steps positions live in
     * one caller-planned block of step_bytes. */
    lt_status (*step_bytes)(const lt_model *m, int batch, int max_steps, size_t *bytes);
    lt_status (*step_init)(const lt_model *m, void *block, int batch, int max_steps);
    /* Copies what the steps read of the weights into the block, once, before
     * the first step_init (packed panels); NULL: the steps read the weights
     * themselves. step_init starts a sequence again without it. */
    lt_status (*step_prepare)(const lt_model *m, void *block, int batch, int max_steps);
    /* x (batch, C) at the next position -> *out (batch, body_width). */
    lt_status (*step)(const lt_model *m, void *block, const float *x, const float **out);
    /* Counts `steps` positions as stepped without computing them (see
     * lt_generator_skip); NULL with step. */
    lt_status (*step_skip)(const lt_model *m, void *block, int steps);
};

extern const lt_body_ops lt_transformer_body;
extern const lt_body_ops lt_bilstm_body;

/* Uniform in +-1/sqrt(fan_in) from the next rng stream (PyTorch's default
 * for linear layers). */
void lt_model_init_uniform(float *p, size_t count, size_t fan_in, uint64_t seed,
                           uint64_t *stream);

#endif
