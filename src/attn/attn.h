/* The attention core: one interface, variants chosen by name at run time.
 *
 * Tensors are row-major (B, H, N, D) for queries and keys and (B, H, N, M)
 * for values and outputs, so each (batch, head) slice is a contiguous N x D
 * matrix ready for GEMM.
 *
 * Memory is planned by the caller: lt_attn_saved_bytes and
 * lt_attn_workspace_bytes say how much a shape needs, the caller allocates
 * it (through the tracked allocator) before any timed loop, and forward and
 * backward never allocate.
 *
 * Variants:
 *   softmax    exact softmax(Q K^T / sqrt(D)) V; materialises N x N scores
 *              per (batch, head), as the paper's baseline does (kernel
 *              softmax-tiled instead keeps O(N): online softmax over key
 *              tiles, saving one log-sum-exp per row).
 *   linear     phi(Q) (phi(K)^T V) / (phi(Q) . sum phi(K) + eps); causal
 *              through prefix sums (an RNN with state (S, z)).
 *   linformer  K and V projected along the sequence by learned E, F of shape
 *              (k, n_max), shared by the heads; softmax over k slots.
 *              Non-causal only.
 *   lsh        Reformer's LSH attention (Kitaev et al. 2020): shared
 *              query-key (the keys are the queries scaled to unit length:
 *              the k input is not read and dk gets nothing), positions
 *              sorted by random-rotation hash buckets, softmax within
 *              chunks of the sorted sequence and the chunk before, `rounds`
 *              hashings combined by their log-sum-exp weights. The
 *              rotations are drawn from shape.seed, .step and .layer. Memory
 *              O(N chunk) per round; no recurrent form.
 *   decay      decayed linear attention (RetNet's recurrence, linear
 *              attention with a scalar gate): the state decays by a factor
 *              gamma_h of head h at every position, S_i = gamma S_{i-1} +
 *              phi(K_i) V_i^T, z_i = gamma z_{i-1} + phi(K_i), out_i =
 *              phi(Q_i)^T S_i / (phi(Q_i) . z_i + eps), any feature map.
 *              Causal only: the decay is a recurrence over positions, the
 *              point being a state that forgets the past. Its bidirectional
 *              counterpart, weights gamma^|i - j|, is another model (a
 *              forward and a reverse scan, as in vision retention
 *              networks), not implemented here, so non-causal attention is
 *              refused rather than silently given the causal form.
 *   delta      DeltaNet (Schlag et al. 2021; Yang et al. 2024): the state
 *              S (M x D) is corrected towards each value by the delta
 *              rule, S_t = S_{t-1} + beta_t (v_t - S_{t-1} k_t) k_t^T,
 *              out_t = S_t q_t, with beta_t in [0, 1] a gate per position
 *              and head. As DeltaNet does, q and k are L2-normalised per
 *              head inside the call (x / sqrt(|x|^2 + 1e-6), gradients
 *              through it), so I - beta k k^T never expands the state; no
 *              1/sqrt(D) scale (the model scales q if it wants one).
 *   gated-delta  Gated DeltaNet (Yang et al. 2025): delta with a decay
 *              alpha_t in (0, 1] per position and head, S_t = alpha_t
 *              S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T; q, k
 *              normalised as in delta.
 *   gla        gated linear attention (Yang et al. 2024): a decay per key
 *              channel, S_t = diag(alpha_t) S_{t-1} + k_t v_t^T with S
 *              D x M and alpha_t in (0, 1]^D per position and head, out_t
 *              = S_t^T q_t; q and k as given (no normalisation, no scale,
 *              no normaliser).
 *              These three read per-position gates (lt_attn_gates: beta,
 *              and alpha as its logarithm) through lt_attn_forward_gated,
 *              lt_attn_backward_gated and lt_attn_step_gated; the plain
 *              entry points refuse them. Causal only, as decay (a
 *              recurrence over positions); recurrent steps of constant
 *              size (the state S, D x M floats a head). Their chunked
 *              kernels (the defaults) save nothing for backward, which
 *              rebuilds the state at each chunk start in its workspace (N /
 *              C x D x M floats per thread, not per head). Their recurrent
 *              kernels (delta-causal-recurrent, gated-delta-causal-recurrent,
 *              gla-causal-recurrent) walk the positions one at a time with
 *              the step's own update, O(N D M); they save nothing either,
 *              and backward keeps the state every ceil(sqrt(N)) positions
 *              and rebuilds each segment's states from it (about 2 sqrt(N)
 *              x D x M floats per thread).
 *
 * Feature maps of linear and decay (lt_feature_map), each with the size F
 * of phi(x) for head dimension D, which sizes the state (S is F x M, z F):
 *   elu       elu(x) + 1, the paper's; F = D
 *   relu      max(x, 0); F = D
 *   favor     FAVOR+ positive random features (Performer): phi(x) =
 *             exp(W u - |u|^2 / 2) / sqrt(m), u = x D^(-1/4), W (m x D)
 *             orthogonal Gaussian rows drawn from (shape.seed,
 *             shape.layer), so phi(q) . phi(k) estimates softmax's
 *             exp(q . k / sqrt(D)); F = m = random_features. Queries and
 *             keys are stabilised by shifts that cancel in out_i (see
 *             src/attn/features.c). W (m x D floats) is drawn at every
 *             forward and backward (O(m D^2), the same draw each time) into
 *             each thread's workspace, and once into a recurrent state.
 *   taylor    second-order Taylor map (Based): phi(x) = [1, u, vec(x x^T) /
 *             (sqrt(2) sqrt(D))], phi(q) . phi(k) = 1 + s + s^2 / 2 with s =
 *             q . k / sqrt(D); F = 1 + D + D^2 (4161 at D = 64: a 1 MiB
 *             state per head at M = 64), so D is limited to
 *             LT_ATTN_TAYLOR_MAX_D. */
#ifndef LT_ATTN_ATTN_H
#define LT_ATTN_ATTN_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef enum lt_feature_map {
    LT_FEATURE_ELU,      /* elu(x) + 1: the paper's choice, always positive */
    LT_FEATURE_RELU,     /* max(x, 0) */
    LT_FEATURE_IDENTITY, /* x itself: only for tests against the quadratic form */
    LT_FEATURE_FAVOR,    /* FAVOR+ positive random features */
    LT_FEATURE_TAYLOR    /* second-order Taylor expansion of exp */
} lt_feature_map;

/* Largest head dimension D the taylor map takes (F = 1 + D + D^2 = 4161). */
#define LT_ATTN_TAYLOR_MAX_D 64

typedef struct lt_attn_shape {
    int B; /* batch */
    int H; /* heads */
    int N; /* sequence length (padded: the stride of each (batch, head) slice) */
    int D; /* query/key head dimension */
    int M; /* value/output head dimension */
    /* (B) valid positions of each sequence, each in [0, N], or NULL: all N.
     * Sequence b is computed exactly as if it were run alone with length
     * lengths[b]: padded keys are never attended, padded output rows are
     * set to 0, and backward ignores d_out there and adds nothing to the
     * padded rows of dq, dk, dv. Buffers are still sized for N. */
    const int32_t *lengths;
    /* Where a variant draws random numbers (LSH's rotations), they are a
     * pure function of these: the model passes its forward's seed and
     * update and the calling layer, so backward sees the forward's draws,
     * and a resumed run or another thread count the same ones. Variants
     * without randomness ignore them; zero is a valid value. The favor
     * feature map uses seed and layer only: its features stay fixed
     * through a run, as lt_attn_state_init's are. */
    uint64_t seed, step;
    int layer;
} lt_attn_shape;

typedef struct lt_attn_config {
    const char *variant;       /* "softmax", "linear", "linformer", "lsh", "decay",
                                  "delta", "gated-delta" or "gla" */
    int causal;                /* 1: position i sees only positions <= i */
    lt_feature_map feature_map;/* linear and decay */
    float eps;                 /* linear and decay: added to the normaliser (1e-6) */
    int random_features;       /* favor feature map: m, the features per head (64) */
    float decay_gamma;         /* decay only: every head's factor, in (0, 1]; 0 (the
                                  default): RetNet's 1 - 2^(-5 - h) for head h */
    int proj_k;                /* linformer only: projected length k */
    int n_max;                 /* linformer only: columns of E and F */
    int rounds;                /* lsh only: hashing rounds (4) */
    int buckets;               /* lsh only: buckets a round; 0 (default): 2 max(1, n / chunk)
                                  for a sequence of n, factorised above 128 (as Reformer);
                                  1: all positions in one bucket; otherwise even */
    int chunk;                 /* lsh only: sorted positions a chunk (32) */
    const char *kernel;        /* NULL: the variant's default kernel; otherwise a
                                  name from lt_attn_kernel_names, e.g.
                                  "linear-causal-prefix" or "softmax-reference" */
} lt_attn_config;

typedef struct lt_attn_variant lt_attn_variant; /* private: one per variant */

typedef struct lt_attn {
    const lt_attn_variant *impl;
    int kernel; /* index into the variant's kernel table, resolved once by lt_attn_init */
    lt_attn_config config;
} lt_attn;

/* The gates a variant reads (lt_attn_caps.gates, a sum of these). */
enum {
    LT_ATTN_GATE_BETA = 1,       /* beta, one per position and head */
    LT_ATTN_GATE_ALPHA = 2,      /* log_alpha, one per position and head */
    LT_ATTN_GATE_ALPHA_KEYS = 4  /* log_alpha, one per position, head and key channel (D) */
};

/* Per-position gates of delta, gated-delta and gla, beside q, k and v.
 * Layouts follow q's: (B,H,N) for one value per position and head,
 * (B,H,N,D) for one per key channel; a recurrent step takes (B,H) and
 * (B,H,D). The decay is given as its logarithm, log_alpha in (-inf, 0]
 * (finite; alpha = 1 is 0), which the model gets without rounding from a
 * log-sigmoid and which the kernels need anyway: they only ever
 * exponentiate differences of its running sums that are <= 0, relative to
 * a chunk's start, so a decay of 1e-12 a position cannot overflow. beta
 * must lie in [0, 1]. Backward adds dL/dbeta and dL/dlog_alpha into
 * d_beta and d_log_alpha (shapes of beta and log_alpha), which it needs
 * for every gate the variant reads (forward and steps ignore them, so one
 * struct serves both calls). A gate a variant does not read must be NULL
 * (lt_attn_caps.gates says which it reads). */
typedef struct lt_attn_gates {
    const float *beta;      /* delta, gated-delta: (B,H,N) in [0, 1] */
    const float *log_alpha; /* gated-delta: (B,H,N); gla: (B,H,N,D); each <= 0 */
    float *d_beta, *d_log_alpha;
} lt_attn_gates;

/* What a variant can do, so programs ask instead of naming variants. */
typedef struct lt_attn_caps {
    int causal;     /* has a causal form */
    int noncausal;  /* has a non-causal form */
    int params;     /* has learned parameters (linformer's E, F) */
    int recurrent;  /* has a recurrent step for generation (causal only) */
    int constant_state; /* recurrent, its state of one size at any position (linear's
                         * (S, z)); 0: a cache that grows a row a position (softmax's
                         * keys and values), or no recurrent form */
    int gates;      /* LT_ATTN_GATE_* it reads (0: none; its calls take no gates) */
    const char *no_causal_reason;    /* why not, when causal == 0 */
    const char *no_noncausal_reason; /* why not, when noncausal == 0 */
    const char *no_recurrent_reason; /* why not, when recurrent == 0 */
} lt_attn_caps;

/* Capabilities of a variant by name; LT_E_USAGE for an unknown name. */
lt_status lt_attn_variant_caps(const char *variant, lt_attn_caps *caps);

/* Default configuration of a variant: eps 1e-6, elu feature map, 64 random
 * features, RetNet's decay factors, k = 256, n_max = 4096, 4 LSH rounds,
 * derived bucket count, chunks of 32, non-causal (causal for a causal-only
 * variant), default kernel. */
lt_attn_config lt_attn_default_config(const char *variant);

/* Names of all variants, "softmax|linear|linformer|lsh|decay|delta|gated-delta|gla"
 * (for --help). */
const char *lt_attn_variant_names(void);

/* Reads a variant spec as programs list them (--variants): a variant name,
 * or "lsh-R" (R >= 1) for lsh with R rounds. Sets config->variant (a static
 * string) and, for lsh-R, config->rounds; other fields are left as they
 * are (start from lt_attn_default_config). LT_E_USAGE naming the spec
 * otherwise. */
lt_status lt_attn_parse_variant(const char *spec, lt_attn_config *config);

/* The settings only this configuration's variant reads, as " key=value"
 * pairs (lsh: rounds, buckets, chunk; "" for the others), for descriptions
 * that must tell two configurations apart (checkpoints). */
const char *lt_attn_config_extra(const lt_attn_config *config, char *buf, size_t size);

/* A row label for the configuration: "lsh-4" for lsh with 4 rounds, the
 * variant name for the others. Written into buf (truncated to size), which
 * is returned. */
const char *lt_attn_variant_label(const lt_attn_config *config, char *buf, size_t size);

/* Kernels a variant offers, "|"-separated (for --help); NULL for an unknown
 * variant. Each fast kernel has a plain reference kernel beside it. */
const char *lt_attn_kernel_names(const char *variant);

/* The index-th kernel (0 = the default) of `variant` that serves `causal`,
 * or NULL past the last: to list or loop over kernels (--kernels all). */
const char *lt_attn_kernel_at(const char *variant, int causal, int index);

/* "a, b, c": the kernels of `variant` that serve `causal`, or "none" (for
 * messages; the text lives until the thread's next call). */
const char *lt_attn_kernels_for(const char *variant, int causal);

/* The variant that has the kernel `name`, or NULL when none has. */
const char *lt_attn_kernel_variant(const char *name);

/* "a, b, c": every kernel of every variant, each once (for messages). */
const char *lt_attn_all_kernels(void);

/* The one place a run's kernels are chosen. `name` is --kernel: NULL or
 * "default" leaves every variant its default kernel; otherwise it must be a
 * kernel of one of `variants` that serves `causal`, which that variant then
 * runs while the others keep their defaults. *kernel receives the choice
 * for `variant` (NULL: its default). LT_E_USAGE naming --kernel otherwise:
 * an unknown kernel with every kernel listed once, a known one with the
 * kernels of `variants` that can run the case. */
lt_status lt_attn_choose_kernel(const char *name, const char *const *variants, int count,
                                int causal, const char *variant, const char **kernel);

/* The kernel a variant declares to continue `kernel` where that one's
 * memory does not fit (softmax-gemm: softmax-tiled), or NULL. */
const char *lt_attn_kernel_continuation(const char *variant, const char *kernel);

/* Parses "elu", "relu", "favor", "taylor" or "identity"; LT_E_USAGE naming
 * `flag` otherwise. */
lt_status lt_attn_parse_feature_map(lt_feature_map *out, const char *text, const char *flag);
const char *lt_attn_feature_map_name(lt_feature_map map);

/* Validates the configuration: unknown variant, causal linformer (refused:
 * every projected slot mixes all positions, so it cannot be causal),
 * non-causal decay, eps < 0, eps = 0 with a feature map that can be 0
 * (relu, favor: the normaliser of a query whose features meet only zeros
 * would be 0/0), random_features outside [1, 65536] with favor, decay_gamma
 * outside (0, 1] and not 0, k < 1, lsh rounds < 1, chunk < 1 or an odd
 * bucket count above 1, a kernel the variant lacks or that does not fit
 * `causal`... all fail with LT_E_USAGE and say why, naming the
 * configuration field (variant, causal, eps, feature_map, random_features,
 * decay_gamma, proj_k, n_max, rounds, buckets, chunk, kernel). On success
 * attn->config.kernel names
 * the kernel that will run (a static string) and attn->kernel indexes it, so
 * no call compares names again. */
lt_status lt_attn_init(lt_attn *attn, const lt_attn_config *config);

/* Checks a shape against the configuration: all sizes >= 1 except N >= 0,
 * N <= n_max for linformer, D <= LT_ATTN_TAYLOR_MAX_D for the taylor map,
 * every length in [0, N]. LT_E_INPUT naming the offending size. */
lt_status lt_attn_check_shape(const lt_attn *attn, lt_attn_shape shape);

/* Which kernel runs for this shape, e.g. "softmax-gemm" or
 * "linear-causal-prefix": written into every result CSV. */
const char *lt_attn_kernel_name(const lt_attn *attn, lt_attn_shape shape);

/* Learned parameters of the variant (linformer: E then F, each k x n_max,
 * row-major); 0 for softmax and linear. */
size_t lt_attn_param_count(const lt_attn *attn);

/* Initialises the parameters (linformer: normal(0, 1/sqrt(k))). */
void lt_attn_init_params(const lt_attn *attn, float *params, unsigned long long seed);

/* Bytes forward keeps for backward (e.g. softmax probabilities). */
size_t lt_attn_saved_bytes(const lt_attn *attn, lt_attn_shape shape);

/* Scratch bytes forward and backward need for `threads` OpenMP threads
 * (threads < 1: lt_threads_get()). Forward and backward run on
 * lt_threads_get() threads, so size for at least that many. */
size_t lt_attn_workspace_bytes(const lt_attn *attn, lt_attn_shape shape, int threads);

/* Model FLOP count of one forward (backward = 0) or one backward
 * (backward = 1) pass, multiply-add counted as 2, for GFLOP/s columns: the
 * method's products (for linear attention the paper's RNN form), whichever
 * kernel runs, over the padded N. */
double lt_attn_flops(const lt_attn *attn, lt_attn_shape shape, int backward);

/* FLOPs the configured kernel actually performs for one pass on
 * lt_threads_get() threads, counted the same way: its matrix products
 * (including intra-chunk quadratic forms, recomputed tiles, and the masked
 * halves of diagonal blocks that GEMMs compute anyway) and dot products;
 * feature maps, exponentials and divisions are not counted. Honours
 * lengths. Against a measured SGEMM rate (lt_machine_sgemm_gflops, core/machine.h) it gives a
 * kernel's fraction of the machine's matrix-product speed. */
double lt_attn_flops_performed(const lt_attn *attn, lt_attn_shape shape, int backward);


/* The GFLOP/s this machine's BLAS reaches on the configured kernel's own
 * matrix products, called as the kernel calls them (shapes, transposes,
 * single-threaded per piece, threads on their own pieces) on `threads`
 * threads (< 1: lt_threads_get()), with nothing else between them: the
 * kernel's roof when its other passes (placing rows, softmax, merges) would cost
 * nothing. Median of 5 timed runs after a warm-up. Each thread runs one
 * head of shape.N rows (at most 8192), as many as a call of that length
 * makes, in the mix of products a round performs (for lsh-chunked:
 * hashing, scores and values, the four backward products). NaN for a
 * kernel that declares none (only lsh-chunked does: its chunk products are
 * too small for the 1024^3 SGEMM rate to be their roof) or when memory
 * fails or is over budget. */
double lt_attn_products_gflops(const lt_attn *attn, lt_attn_shape shape, int threads);

/* Bytes a forward (backward = 0) or backward (backward = 1) as a training
 * step runs it cannot avoid moving, whatever the kernel: each input read
 * once (q, k unless the variant never reads it, v, d_out, the parameters
 * and gates, and in backward the saved activations the kernel uses), each
 * output written once (out and those saved activations; dq, dk, dv and the
 * parameters' and gates' gradients, which the step zeroes first, so dk
 * counts also where the variant leaves it). Over the measured bandwidth
 * (lt_machine_bandwidth_gbs) it is the memory half of a roofline: with the
 * operands in memory rather than cache, no call takes less time. */
double lt_attn_interface_bytes(const lt_attn *attn, lt_attn_shape shape, int backward);



/* Memory traffic and FLOPs (a multiply-add counts 2) of one lt_attn_step
 * of one sequence at `position` (the steps before it): a state of constant
 * size (linear, decay) is read and written whole; a key/value cache
 * (softmax) reads its position + 1 keys and values. For generation's
 * roofline. LT_E_USAGE for a variant with no recurrent form. */
lt_status lt_attn_step_cost(const lt_attn *attn, int H, int D, int M, int position,
                            double *bytes, double *flops);


/* Floats per position and head of the gates `attn` reads for head
 * dimension D: *beta 1 or 0, *log_alpha 0, 1 or D (gla). */
void lt_attn_gate_widths(const lt_attn *attn, int D, int *beta, int *log_alpha);

/* out (B,H,N,M) = attention(q (B,H,N,D), k (B,H,N,D), v (B,H,N,M)).
 * `saved` (lt_attn_saved_bytes) receives what backward needs; NULL for
 * inference only. `params` may be NULL when lt_attn_param_count is 0.
 * Non-finite inputs fail with LT_E_NUMERIC naming the tensor (an input the
 * variant never reads is not scanned: LSH's k). A variant that reads gates
 * (delta, gated-delta, gla) is refused with LT_E_USAGE here: it runs
 * through lt_attn_forward_gated. */
lt_status lt_attn_forward(const lt_attn *attn, lt_attn_shape shape,
                          float *out, void *saved, void *workspace,
                          const float *q, const float *k, const float *v,
                          const float *params);

/* Adds the gradients of a scalar loss into dq, dk, dv (shapes of q, k, v;
 * lsh adds nothing to dk, as it never reads k) and d_params
 * (lt_attn_param_count floats; may be NULL when 0), given
 * d_out (B,H,N,M) and the same inputs and `saved` that forward used (so
 * only d_out is scanned for NaN and Inf here). */
lt_status lt_attn_backward(const lt_attn *attn, lt_attn_shape shape,
                           float *dq, float *dk, float *dv, float *d_params,
                           void *workspace, const float *d_out, const void *saved,
                           const float *q, const float *k, const float *v,
                           const float *params);

/* lt_attn_forward and lt_attn_backward with the variant's gates
 * (lt_attn_gates; NULL or all-NULL for a variant without gates, where
 * they equal the plain calls). Missing gates the variant reads, or ones
 * it does not read, fail with LT_E_USAGE; forward fails with LT_E_NUMERIC
 * for non-finite gates and LT_E_INPUT for beta outside [0, 1] or
 * log_alpha > 0. Backward adds into gates->d_beta and ->d_log_alpha. */
lt_status lt_attn_forward_gated(const lt_attn *attn, lt_attn_shape shape,
                                const lt_attn_gates *gates, float *out, void *saved,
                                void *workspace, const float *q, const float *k, const float *v,
                                const float *params);
lt_status lt_attn_backward_gated(const lt_attn *attn, lt_attn_shape shape,
                                 const lt_attn_gates *gates, float *dq, float *dk, float *dv,
                                 float *d_params, void *workspace, const float *d_out,
                                 const void *saved, const float *q, const float *k,
                                 const float *v, const float *params);

/* Recurrent form for generation (causal only): one token in, one out.
 * Linear and decay: the (S, z) state, constant size (F x M + F floats a
 * head). Delta, gated-delta and gla: the state S, D x M floats a head.
 * Softmax: a key/value cache that grows by one row a step up to
 * `max_steps`. Linformer and LSH: refused with LT_E_USAGE. `seed` and `layer` are
 * what lt_attn_shape.seed and .layer are to forward: the favor map draws
 * its features from them once, here, so steps use the same features as a
 * forward with that seed and layer. */
lt_status lt_attn_state_bytes(const lt_attn *attn, int B, int H, int D, int M,
                              int max_steps, size_t *bytes);
lt_status lt_attn_state_init(const lt_attn *attn, void *state, int B, int H, int D, int M,
                             int max_steps, uint64_t seed, int layer);
/* out (B,H,M) for q, k (B,H,D) and v (B,H,M) of the next position. Fails
 * with LT_E_USAGE when a softmax cache is full. */
lt_status lt_attn_step(const lt_attn *attn, void *state, float *out,
                       const float *q, const float *k, const float *v);
/* lt_attn_step called by every thread of a running parallel region (its
 * team): the heads split over the team, the same bits as lt_attn_step.
 * q, k and v must be complete before the call (a barrier after whatever
 * wrote them); out is complete when it returns (it ends with a barrier).
 * Every thread returns the same status, and on failure each has the
 * message as its own lt_last_error. */
lt_status lt_attn_step_team(const lt_attn *attn, void *state, float *out,
                            const float *q, const float *k, const float *v);
/* The two with the next position's gates ((B,H) beta, (B,H) or (B,H,D)
 * log_alpha; d_beta, d_log_alpha unused), which delta, gated-delta and gla
 * need and the plain steps refuse for them. */
lt_status lt_attn_step_gated(const lt_attn *attn, void *state, float *out, const float *q,
                             const float *k, const float *v, const lt_attn_gates *gates);
lt_status lt_attn_step_team_gated(const lt_attn *attn, void *state, float *out,
                                  const float *q, const float *k, const float *v,
                                  const lt_attn_gates *gates);

/* Counts `steps` more positions as folded into the state without computing
 * them, for timing a step at a long context without stepping through it: a
 * key/value cache then holds zero rows there (what lt_attn_state_init
 * wrote), a constant-size state stays as it is. The next step does the work
 * of a step at that position (no step's cost depends on the values), on a
 * state no real sequence gives. LT_E_USAGE past max_steps or for a state
 * another variant initialised; steps < 0 is LT_E_INPUT. */
lt_status lt_attn_state_skip(const lt_attn *attn, void *state, int steps);

#endif
