/* Private to src/attn: what each variant provides to the dispatcher in
 * attn.c, and the helpers the variants share. attn.c validates every
 * argument (shapes, finiteness, NULL buffers) before a variant runs, so the
 * variant functions below assume valid input. */
#ifndef LT_ATTN_INTERNAL_H
#define LT_ATTN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "attn/attn.h"
#include "core/vexp.h"

/* A kernel a variant offers and the `causal` settings it serves. */
typedef enum attn_kernel_use {
    ATTN_NONCAUSAL_ONLY,
    ATTN_CAUSAL_ONLY,
    ATTN_EITHER
} attn_kernel_use;

/* Everything one forward or backward call works on; the unused pointers of
 * the other direction are NULL. Pointers are whole tensors; a per-head
 * function offsets them by its (batch, head) index. */
typedef struct attn_call {
    const lt_attn *attn;
    lt_attn_shape shape;
    float *out;            /* (B,H,N,M) forward */
    void *saved;           /* lt_attn_saved_bytes; may be NULL in forward */
    float *dq, *dk, *dv;   /* backward, shapes of q, k, v */
    float *d_params;       /* backward, lt_attn_param_count floats */
    const float *d_out;    /* (B,H,N,M) backward */
    const float *q, *k, *v, *params;
    lt_attn_gates gates;   /* the variant's gates (all NULL for variants without) */
    char *workspace;       /* threads slices of `slice` bytes each */
    size_t slice;
    char *shared;          /* the variant's shared_bytes, before the slices; NULL if none */
    int threads;
} attn_call;

/* Work on one (batch, head) pair `bh`. `ws` is the calling thread's
 * workspace slice. `inner` is 1 when heads run one at a time: the function
 * may then spread its own element-wise loops over the threads (`omp parallel
 * for if (inner)`), and its BLAS calls, made outside any parallel region,
 * use all threads; 0 when heads run in parallel, where BLAS runs
 * single-threaded inside the region. */
typedef void (*attn_head_fn)(const attn_call *call, int bh, char *ws, int inner);

/* A kernel a variant offers, the `causal` settings it serves, and its
 * per-head functions (run by attn_kernel_forward / attn_kernel_backward;
 * NULL where the variant's own forward and backward run the heads). */
typedef struct attn_kernel_info {
    const char *name;
    attn_kernel_use use;
    attn_head_fn forward, backward;
    /* The kernel of the same variant that computes the same attention
     * where this one's memory does not fit (softmax-gemm materialises
     * N x N scores; softmax-tiled does not), or NULL. */
    const char *continued_by;
} attn_kernel_info;

struct lt_attn_variant {
    const char *name;
    const attn_kernel_info *kernels; /* the first one that fits `causal` is the default */
    int kernel_count;
    const char *kernel_names; /* the names above, "|"-separated */
    /* Variant-specific configuration checks (LT_E_USAGE with the reason). */
    lt_status (*check_config)(const lt_attn_config *config);
    /* Variant-specific shape checks (LT_E_INPUT); NULL: none. Also run on
     * the shape of a recurrent state (N = max_steps). */
    lt_status (*check_shape)(const lt_attn *attn, lt_attn_shape shape);
    size_t (*param_count)(const lt_attn_config *config);
    void (*init_params)(const lt_attn_config *config, float *params, unsigned long long seed);
    size_t (*saved_bytes)(const lt_attn *attn, lt_attn_shape shape);
    /* Of those, the bytes a forward writes and its backward reads (NULL:
     * all; causal softmax-gemm leaves the masked blocks untouched). */
    size_t (*saved_touched_bytes)(const lt_attn *attn, lt_attn_shape shape);
    /* Workspace bytes of one thread (rounded up to whole cache lines by the caller). */
    size_t (*slice_bytes)(const lt_attn *attn, lt_attn_shape shape);
    /* Workspace bytes shared by all threads, whatever their number (NULL:
     * none), e.g. per-head results summed afterwards in a fixed order. */
    size_t (*shared_bytes)(const lt_attn *attn, lt_attn_shape shape);
    double (*flops)(const lt_attn *attn, lt_attn_shape shape, int backward);
    /* FLOPs the configured kernel performs on one head of n valid rows;
     * `inner` as for attn_head_fn (heads sharing threads). */
    double (*head_flops)(const lt_attn *attn, lt_attn_shape shape, int n, int backward,
                         int inner);
    void (*forward)(const attn_call *call);
    void (*backward)(const attn_call *call);
    /* lt_attn_products_gflops for the configured kernel; NULL: none. */
    double (*products_gflops)(const lt_attn *attn, lt_attn_shape shape, int threads);
    /* Why no kernel serves causal (non-causal) attention, when none does. */
    const char *no_causal_reason;
    const char *no_noncausal_reason;
    /* 1: keys come from the queries (shared query-key), k is never read, so
     * forward does not scan it for NaN and Inf either. */
    int ignores_k;
    /* Recurrent form; NULL step when the variant has none, with the reason. */
    const char *no_recurrence_reason;
    size_t (*state_payload_bytes)(const lt_attn *attn, int B, int H, int D, int M,
                                  int max_steps);
    /* Fills a zeroed payload's fixed parts (the favor map's features);
     * NULL: all zeros is the initial state. */
    void (*state_init)(const lt_attn *attn, char *payload, int B, int H, int D, int M,
                       int max_steps, uint64_t seed, int layer);
    /* One position on heads [bh0, bh1) of the B * H: the caller splits the
     * heads over its threads, the step starts none of its own. `steps`
     * counts the tokens already folded into the state; the caller has
     * checked there is room for one more (see step_grows). */
    void (*step)(const lt_attn *attn, char *payload, int B, int H, int D, int M, int max_steps,
                 int steps, int bh0, int bh1, float *out, const float *q, const float *k,
                 const float *v, const lt_attn_gates *gates);
    /* Whether a step of `heads` heads at `steps` is worth a parallel region
     * of its own (a thread team already running splits any step). */
    int (*step_parallel)(const lt_attn *attn, int heads, int D, int M, int steps);
    /* 1: the state is a cache with room for max_steps positions (softmax);
     * 0: constant size, any number of steps (linear, decay). */
    int step_grows;
    /* LT_ATTN_GATE_* the variant reads; attn.c checks them (present,
     * finite, in range) before forward, backward or a step runs. */
    int gates;
};

extern const lt_attn_variant lt_attn_softmax_variant;
extern const lt_attn_variant lt_attn_linear_variant;
extern const lt_attn_variant lt_attn_linformer_variant;
extern const lt_attn_variant lt_attn_lsh_variant;
extern const lt_attn_variant lt_attn_decay_variant;
extern const lt_attn_variant lt_attn_delta_variant;
extern const lt_attn_variant lt_attn_gated_delta_variant;
extern const lt_attn_variant lt_attn_gla_variant;

/* One (batch, head) slice of every tensor of a call; NULL where the call
 * lacks the tensor (forward has no gradients, backward no out). */
typedef struct attn_head {
    const float *q, *k, *v, *d_out; /* (N,D) (N,D) (N,M) (N,M) */
    float *out, *dq, *dk, *dv;       /* (N,M) (N,D) (N,D) (N,M) */
} attn_head;

attn_head attn_view_head(const attn_call *call, int bh);

/* Valid rows of head bh: its sequence's length, or N without lengths.
 * Kernels compute on the first rows only; slices keep the padded stride. */
static inline int attn_head_rows(const attn_call *call, int bh)
{
    return call->shape.lengths != NULL ? call->shape.lengths[bh / call->shape.H] : call->shape.N;
}

/* 1 when heads are spread across threads (at least as many heads as
 * threads), 0 when each head spreads its own work. */
int attn_across_heads(const attn_call *call);

/* Calls fn for every (batch, head) pair, across threads or one at a time as
 * attn_across_heads decides. Heads are handed out statically so a given
 * thread count always gives the same assignment (reproducible sums). */
void attn_for_each_head(const attn_call *call, attn_head_fn fn);

/* Forward and backward of variants whose kernels are per-head functions:
 * the chosen kernel's function over every (batch, head). */
void attn_kernel_forward(const attn_call *call);
void attn_kernel_backward(const attn_call *call);

/* In place over `rows` rows of `cols` scores (row stride ld): subtracts the
 * row maximum, exponentiates and normalises. With `causal`, row r stands for
 * position first_row + r and its columns past that position are set to
 * -INFINITY first, so their probabilities are exactly 0. */
void attn_softmax_rows(float *scores, size_t ld, int rows, int cols, int first_row,
                       int causal, int inner);

/* In place: dp (rows x cols, stride ld_dp) holds dL/dP on entry and
 * dL/dS = P * (dP - rowsum(dP * P)) on return, for probabilities p (stride
 * ld_p). */
void attn_softmax_rows_backward(float *dp, size_t ld_dp, const float *p, size_t ld_p, int rows,
                                int cols, int inner);

/* Tokens per chunk of linear-causal-chunked for F features and value
 * dimension M (F = D for the element-wise feature maps). */
int attn_linear_chunk(int F, int M);

/* ---- feature maps of linear and decayed attention (features.c) ---- */

/* The side of phi(q) . phi(k) a row is on: favor stabilises the two
 * differently. */
typedef enum attn_role { ATTN_QUERY, ATTN_KEY } attn_role;

/* A feature map as kernels apply it: rows of D values to rows of F. */
typedef struct attn_features {
    lt_feature_map map;
    int D, F;
    const float *W; /* favor: (F, D) random features, then the key shift; else NULL */
} attn_features;

/* 1 for elu, relu and identity (F = D, phi applied to each value). */
int attn_features_elementwise(lt_feature_map map);

/* F, the features of one row of D values. */
int attn_feature_dim(const lt_attn_config *config, int D);

/* Floats of the block a map draws (favor: W and its key shift; 0 else),
 * and the drawing: a pure function of (seed, layer) and the configuration. */
size_t attn_features_floats(const lt_attn_config *config, int D);
void attn_features_draw(float *block, const lt_attn_config *config, int D, uint64_t seed,
                        int layer);

/* The map of `config` over the block attn_features_draw filled (NULL when
 * attn_features_floats is 0). */
attn_features attn_features_of(const lt_attn_config *config, int D, const float *block);

/* out[i] = phi(x[i]) for n values of an element-wise map. */
void attn_phi_elementwise(lt_feature_map map, float *restrict out, const float *restrict x,
                          size_t n);

/* dx (rows, D) += the gradient through an element-wise map of the same
 * dphi (D) for every row, given x and phi = phi(x) (rows, D). */
void attn_phi_elementwise_backprop_rows(lt_feature_map map, float *dx, const float *dphi,
                                        const float *x, const float *phi, int rows, int D);

/* out (rows, F) = phi(x (rows, D)). */
void attn_phi(const attn_features *fx, float *out, const float *x, int rows, attn_role role);

/* dx (rows, D) += the gradient through phi of dphi (rows, F), given x and
 * phi = phi(x). dphi may be overwritten (favor uses it as scratch). */
void attn_phi_backprop(const attn_features *fx, float *dx, float *dphi, const float *x,
                       const float *phi, int rows, attn_role role);

/* LSH attention's hashing (lsh.c), open to the tests. A sequence of n
 * positions is hashed into factor[0] x factor[1] buckets by one rotation of
 * `cols` = factor[0]/2 + factor[1]/2 columns (factor[1] = 1 unless the
 * derived count was factorised; a factor of 1 has no columns). */
typedef struct attn_lsh_hash_plan {
    int buckets, factor[2], cols;
} attn_lsh_hash_plan;

attn_lsh_hash_plan attn_lsh_plan(const lt_attn_config *config, int n);

/* R (D x cols, row stride ld): the first cols columns of round `round`'s
 * rotation for the draws of shape.seed, shape.step and shape.layer. */
void attn_lsh_rotations(float *R, size_t ld, int D, int cols, lt_attn_shape shape, int round);

/* The positions of head bh sorted by (bucket, position) in round `round`,
 * as forward saved them (its valid rows only). */
const int32_t *attn_lsh_order(const lt_attn *attn, lt_attn_shape shape, const void *saved, int bh,
                              int round);

/* param_count and init_params of variants without parameters. */
size_t attn_no_params(const lt_attn_config *config);
void attn_no_init_params(const lt_attn_config *config, float *params, unsigned long long seed);

/* Bytes rounded up to whole cache lines, so slices and sub-buffers stay
 * 64-byte aligned. */
size_t attn_round(size_t bytes);

/* Carves `count` floats out of *cursor and advances it (aligned). */
float *attn_take(char **cursor, size_t count);

#endif
