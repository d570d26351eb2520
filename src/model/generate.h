/* Autoregressive generation: feed one token per sequence, get the logits
 * that predict the next one. Three ways (lt_gen_mode):
 *
 *   LT_GEN_RECURRENT  the model's recurrent form (lt_model_step) over each
 *                     layer's attention state of constant size (linear:
 *                     (S, z); delta, gated-delta, gla: S, stepped with the
 *                     position's gates)
 *   LT_GEN_CACHED     the same over a key/value cache that grows a row per
 *                     position (softmax: the paper's "stateful softmax")
 *   LT_GEN_RECOMPUTE  the whole causal forward re-runs on the prefix for
 *                     every new position (the paper's softmax baseline), in
 *                     a forward planned for batch x max_steps positions
 *
 * The weights are read in place, in every mode: any use of the model will
 * do. The generator plans its own memory (lt_generator_plan equals what
 * lt_generator_init allocates) and never allocates while stepping. Token
 * inputs only. */
#ifndef LT_MODEL_GENERATE_H
#define LT_MODEL_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "model/model.h"

typedef enum lt_gen_mode { LT_GEN_RECURRENT, LT_GEN_CACHED, LT_GEN_RECOMPUTE } lt_gen_mode;

/* "recurrent", "cached" or "recompute". */
const char *lt_gen_mode_name(lt_gen_mode mode);

/* How a variant steps: recurrent with a state of constant size, cached
 * with one that grows (lt_attn_caps.constant_state). */
lt_gen_mode lt_gen_stepped_mode(const lt_attn_caps *caps);

typedef struct lt_generator {
    const lt_model *model; /* whose weights every mode reads */
    lt_gen_mode mode;
    int batch, max_steps, steps;
    void *block;          /* the model's state, or the prefix and logits: one allocation */
    lt_model_state state; /* RECURRENT, CACHED: the model's recurrent state */
    lt_model forward;     /* RECOMPUTE: a model reading the weights, planned for
                           * batch x max_steps positions */
    int32_t *prefix;      /* RECOMPUTE: (batch, max_steps) tokens so far */
    int32_t *packed;      /* RECOMPUTE: (batch, steps) the prefix as the forward reads it */
    float *logits;        /* (batch, classes) */
} lt_generator;

/* Bytes lt_generator_init allocates: *state, the generator's own (the
 * model's recurrent state, or recompute's prefix and logits), and
 * *forward, recompute's forward (its activations, workspace and tables;
 * 0 stepping). LT_E_USAGE for a model that cannot generate this way
 * (feature inputs, non-causal attention, no recurrent form, a mode that is
 * not the variant's: lt_gen_stepped_mode), naming why. */
lt_status lt_generator_plan(const lt_model *model, lt_gen_mode mode, int batch, int max_steps,
                            size_t *state, size_t *forward);

lt_status lt_generator_init(lt_generator *g, const lt_model *model, lt_gen_mode mode, int batch,
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
 * to generate one way at batch B over the weights in place: the generator,
 * the column and sampler buffers and, with `output`, the (B, N) bytes a
 * timed run writes. Allocated in that order, through the tracked
 * allocator: what one measured generation holds besides the weights. */
typedef struct lt_gen_session {
    lt_generator g;
    int32_t *column;
    double *uniforms;
    uint8_t *out;
    lt_mol_sampler mol;
    lt_sampler sampler;
} lt_gen_session;

/* What lt_gen_session_init allocates for the same arguments, worked out
 * without allocating, to hold a generation against a memory budget before
 * any work: the generator's state and recompute's forward
 * (lt_generator_plan) and the session's buffers. LT_E_USAGE where
 * lt_gen_session_init would refuse the mode. `attention` is the part of
 * `state` that is the attention's own (lt_model_attention_state_bytes;
 * 0 for recompute, which keeps none between steps). */
typedef struct lt_gen_session_bytes {
    size_t state, forward, buffers, total, attention;
} lt_gen_session_bytes;

lt_status lt_gen_session_plan(const lt_model *weights, lt_gen_mode mode, int B, int N, int output,
                              lt_gen_session_bytes *bytes);

/* The sampler draws from `seed` (lt_mol_sampler); the weights must outlive
 * the session. */
lt_status lt_gen_session_init(lt_gen_session *s, const lt_model *weights, uint64_t seed,
                              lt_gen_mode mode, int B, int N, uint64_t stream_base, int output);
void lt_gen_session_free(lt_gen_session *s);

#endif
