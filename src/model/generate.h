/* Autoregressive generation: feed one token per sequence, get the logits
 * that predict the next one.
 *
 *   LT_GEN_RECURRENT  the model's layers run on the new position only, over
 *                     each layer's attention state (linear: the constant
 *                     (S, z); delta, gated-delta, gla: the constant S,
 *                     stepped with the position's gates; softmax: a
 *                     key/value cache, the paper's "stateful softmax"). Any
 *                     model use works: only the weights are read.
 *   LT_GEN_RECOMPUTE  the whole causal forward re-runs on the prefix for
 *                     every new position (the paper's softmax baseline); the
 *                     model must be allocated for inference (or training)
 *                     with max_batch >= batch and seq_len >= max_steps, and
 *                     uses no more than that one forward's memory.
 *
 * The generator plans its own state (lt_generator_plan equals what
 * lt_generator_init allocates) and never allocates while stepping. Token
 * inputs only. */
#ifndef LT_MODEL_GENERATE_H
#define LT_MODEL_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "model/model.h"

typedef enum lt_gen_mode { LT_GEN_RECURRENT, LT_GEN_RECOMPUTE } lt_gen_mode;

typedef struct lt_generator {
    lt_model *model;
    lt_gen_mode mode;
    int batch, max_steps, steps;
    void *block;       /* everything below, one allocation */
    void *body_state;  /* RECURRENT: the body's per-layer states and rows */
    float *x;          /* RECURRENT: (batch, C) the new position's input row */
    float *pos;        /* RECURRENT: (pos columns) its position encoding */
    int32_t *prefix;   /* RECOMPUTE: (batch, max_steps) tokens so far */
    int32_t *packed;   /* RECOMPUTE: (batch, steps) the prefix as the forward reads it */
    float *logits;     /* (batch, classes) */
} lt_generator;

/* "recurrent" or "recompute". */
const char *lt_gen_mode_name(lt_gen_mode mode);

/* Bytes lt_generator_init allocates. LT_E_USAGE for a model that cannot
 * generate this way (feature inputs, non-causal attention, no recurrent
 * form, a model not planned for the recompute forward), naming why. */
lt_status lt_generator_plan(const lt_model *model, lt_gen_mode mode, int batch, int max_steps,
                            size_t *bytes);

lt_status lt_generator_init(lt_generator *g, lt_model *model, lt_gen_mode mode, int batch,
                            int max_steps);

/* Feeds tokens (batch) at position g->steps; *logits (batch, classes)
 * then predict position g->steps + 1. LT_E_USAGE past max_steps. */
lt_status lt_generator_step(lt_generator *g, const int32_t *tokens, const float **logits);

/* Moves to position g->steps + steps without computing the positions
 * between, to time a step at a long context without the O(p^2) work of
 * stepping a key/value cache (or recomputing) up to it: recompute's prefix
 * gets `token` there; a recurrent state counts them (a key/value cache as
 * zero rows, a constant-size state unchanged: lt_attn_state_skip). The
 * steps after it do the work of steps at those positions, on a state no
 * real sequence gives: for timing only. LT_E_USAGE past max_steps. */
lt_status lt_generator_skip(lt_generator *g, int steps, int32_t token);

/* Starts again at position 0 with fresh state, keeping the memory and
 * what the generator took of the model's weights when it was created (a
 * recurrent transformer step packs them once): after changing the weights,
 * create a new generator. */
lt_status lt_generator_reset(lt_generator *g);

void lt_generator_free(lt_generator *g);

/* Copies the parameters of `src` into `dst` (same configuration apart from
 * batch and length), e.g. a trained model into one planned for generation. */
lt_status lt_model_copy_params(lt_model *dst, const lt_model *src);

/* The roofline of generating one sequence of g->max_steps tokens at
 * batch g->batch: per step, the weights streamed once for the batch (the
 * embedding table excepted: a row of it is gathered) and each sequence's
 * attention state or cache (lt_attn_step_cost), or, recomputing, the whole
 * prefix's forward; its FLOPs (two per weight per sequence, plus the
 * attention's). A step takes at least max(bytes / bandwidth, FLOPs /
 * peak): *seconds is their sum over the steps, per sequence, and
 * *memory_share the fraction of it in steps bound by memory. */
typedef struct lt_gen_bound {
    double seconds;       /* per sequence, at the roofline */
    double memory_share;  /* of those seconds, in memory-bound steps */
    double bytes, flops;  /* per sequence, summed over the steps */
} lt_gen_bound;

lt_status lt_generator_bound(const lt_generator *g, double bandwidth_gbs, double peak_gflops,
                             lt_gen_bound *out);

/* Bytes of the weights a step streams (every parameter but the embedding
 * table): the size at which to measure the bandwidth for the bound. */
double lt_generator_streamed_bytes(const lt_model *m);

/* ---- generating whole sequences ---- */

/* How a generated position's token is chosen from the logits that predict
 * it: tokens (B) for `position` of sequences first .. first + B - 1 of a
 * run, from logits (B, classes). A sampler that depends only on those
 * (not on the batch) gives the same sequences at any batch size. */
typedef struct lt_sampler {
    void (*sample)(void *ctx, int32_t *tokens, const float *logits, int B, long first,
                   int position);
    void *ctx;
} lt_sampler;

/* Sampling a discretized mixture of logistics (nn/mol.h) with two uniforms
 * per (sequence, position), drawn from stream stream_base + sequence * N +
 * position of `seed`, so samples do not depend on batching. */
typedef struct lt_mol_sampler {
    int mixtures, N;
    uint64_t seed, stream_base;
    double *uniforms; /* (batch, 2), the caller's */
} lt_mol_sampler;

lt_sampler lt_mol_sampler_of(lt_mol_sampler *s);

/* Generates g->batch byte sequences (tokens below 256: image pixels) of
 * g->max_steps positions into out (B, N): position 0 is fed start_token;
 * the first `given` tokens of each sequence are the prompt's (B, N; NULL
 * when given is 0), the others the sampler's. The sequences are
 * first .. first + B - 1 of the run (for the sampler). `column` is (B)
 * scratch. */
lt_status lt_generate_bytes(lt_generator *g, uint8_t *out, const uint8_t *prompt, int given,
                            int32_t start_token, long first, const lt_sampler *sampler,
                            int32_t *column);

/* Timed generation: whole batches into `out` (B, N) until `count`
 * sequences are done or `budget` seconds have passed, at least one batch,
 * never a partial one, stopping early on Ctrl-C; the first batch is copied
 * to first_batch (B, N; may be NULL). *sequences and *seconds say what
 * was done. */
lt_status lt_generate_timed(lt_generator *g, uint8_t *out, uint8_t *first_batch, long count,
                            double budget, int32_t start_token, const lt_sampler *sampler,
                            int32_t *column, lt_progress *progress, long *sequences,
                            double *seconds);


/* A byte model with a mixture-of-logistics head (the image models) set up
 * to generate one way at batch B: its own copy of the weights planned for
 * that way, the generator, the column and sampler buffers and, with
 * `output`, the (B, N) bytes a timed run writes. Allocated in that order,
 * through the tracked allocator: what one measured generation holds. */
typedef struct lt_gen_session {
    lt_model model;
    lt_generator g;
    int32_t *column;
    double *uniforms;
    uint8_t *out;
    lt_mol_sampler mol;
    lt_sampler sampler;
} lt_gen_session;

/* What lt_gen_session_init allocates for the same arguments, worked out
 * without allocating, to hold a generation against a memory budget before
 * any work: the model (weights; RECOMPUTE: and one inference forward of
 * B x N positions), the generator (lt_generator_plan) and the session's
 * buffers. LT_E_USAGE where lt_gen_session_init would refuse the mode. */
typedef struct lt_gen_session_bytes {
    size_t model, generator, buffers, total;
} lt_gen_session_bytes;

lt_status lt_gen_session_plan(const lt_model *weights, const lt_model_config *config,
                              lt_gen_mode mode, int B, int N, int output,
                              lt_gen_session_bytes *bytes);

lt_status lt_gen_session_init(lt_gen_session *s, const lt_model *weights,
                              const lt_model_config *config, uint64_t seed, lt_gen_mode mode,
                              int B, int N, uint64_t stream_base, int output);
void lt_gen_session_free(lt_gen_session *s);

#endif
