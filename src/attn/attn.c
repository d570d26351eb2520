/* Dispatch and validation for the attention variants, the recurrent-state
 * header, and the helpers the variants share (thread plan, row softmax).
 * Longer than most files because it holds all of attn.h's thirty-odd entry
 * points: each is short, a check written once for every variant and then a
 * call through the variant's table. */
#include "attn/attn.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "attn/attn_internal.h"
#include "core/kernels.h"
#include "core/lanes.h"
#include "core/threads.h"

static const lt_attn_variant *const variants[] = {
    &lt_attn_softmax_variant,
    &lt_attn_linear_variant,
    &lt_attn_linformer_variant,
    &lt_attn_lsh_variant,
    &lt_attn_decay_variant,
    &lt_attn_delta_variant,
    &lt_attn_gated_delta_variant,
    &lt_attn_gla_variant,
};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))

static const lt_attn_variant *find_variant(const char *name)
{
    if (name == NULL)
        return NULL;
    for (int i = 0; i < VARIANT_COUNT; i++)
        if (strcmp(variants[i]->name, name) == 0)
            return variants[i];
    return NULL;
}

static int any_kernel_fits(const lt_attn_variant *impl, int causal);

lt_attn_config lt_attn_default_config(const char *variant)
{
    const lt_attn_variant *impl = find_variant(variant);
    lt_attn_config config = {
        .variant = variant,
        .causal = impl != NULL && !any_kernel_fits(impl, 0), /* a causal-only variant's one mode */
        .feature_map = LT_FEATURE_ELU,
        .eps = 1e-6f,
        .random_features = 64,
        .decay_gamma = 0.0f,
        .proj_k = 256,
        .n_max = 4096,
        /* fast-transformers' ReformerAttention (the paper's code): rounds=4,
         * chunk_size=32; buckets as trax's LSHSelfAttention derives them */
        .rounds = 4,
        .buckets = 0,
        .chunk = 32,
        .kernel = NULL,
    };
    return config;
}

static int kernel_fits(const attn_kernel_info *kernel, int causal)
{
    switch (kernel->use) {
    case ATTN_NONCAUSAL_ONLY: return !causal;
    case ATTN_CAUSAL_ONLY: return causal;
    case ATTN_EITHER: return 1;
    }
    return 0;
}

const char *lt_attn_variant_names(void)
{
    return "softmax|linear|linformer|lsh|decay|delta|gated-delta|gla";
}

lt_status lt_attn_parse_variant(const char *spec, lt_attn_config *config)
{
    static const char lsh_prefix[] = "lsh-";
    const size_t prefix = sizeof lsh_prefix - 1;
    const lt_attn_variant *impl = find_variant(spec);
    if (impl != NULL) {
        config->variant = impl->name;
        return LT_OK;
    }
    if (spec != NULL && strncmp(spec, lsh_prefix, prefix) == 0) {
        const char *digits = spec + prefix;
        long rounds = 0;
        int valid = *digits != '\0';
        for (const char *c = digits; valid && *c != '\0'; c++) {
            valid = *c >= '0' && *c <= '9';
            rounds = rounds * 10 + (*c - '0');
            valid = valid && rounds <= INT_MAX;
        }
        if (valid && rounds >= 1) {
            config->variant = lt_attn_lsh_variant.name;
            config->rounds = (int)rounds;
            return LT_OK;
        }
    }
    return lt_fail(LT_E_USAGE,
                   "variant: expected one of %s, or lsh-R for R >= 1 hashing rounds, got '%s'",
                   lt_attn_variant_names(), spec != NULL ? spec : "(null)");
}

const char *lt_attn_variant_label(const lt_attn_config *config, char *buf, size_t size)
{
    const lt_attn_variant *impl = find_variant(config->variant);
    if (impl == &lt_attn_lsh_variant)
        snprintf(buf, size, "%s-%d", impl->name, config->rounds);
    else
        snprintf(buf, size, "%s", config->variant != NULL ? config->variant : "(null)");
    return buf;
}

const char *lt_attn_config_extra(const lt_attn_config *config, char *buf, size_t size)
{
    const lt_attn_variant *impl = find_variant(config->variant);
    int n = 0;
    buf[0] = '\0';
    if (impl == &lt_attn_lsh_variant)
        n = snprintf(buf, size, " rounds=%d buckets=%d chunk=%d", config->rounds,
                     config->buckets, config->chunk);
    if (impl == &lt_attn_decay_variant && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " decay_gamma=%.9g",
                      (double)config->decay_gamma);
    if (config->feature_map == LT_FEATURE_FAVOR && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " random_features=%d", config->random_features);
    return buf;
}

const char *lt_attn_kernel_names(const char *variant)
{
    const lt_attn_variant *impl = find_variant(variant);
    return impl != NULL ? impl->kernel_names : NULL;
}

const char *lt_attn_kernel_at(const char *variant, int causal, int index)
{
    const lt_attn_variant *impl = find_variant(variant);
    for (int i = 0; impl != NULL && i < impl->kernel_count; i++)
        if (kernel_fits(&impl->kernels[i], causal) && index-- == 0)
            return impl->kernels[i].name;
    return NULL;
}

const char *lt_attn_kernels_for(const char *variant, int causal)
{
    /* One buffer per thread: only for messages and --help. */
    static _Thread_local char list[512];
    list[0] = '\0';
    const char *name;
    for (int i = 0; (name = lt_attn_kernel_at(variant, causal, i)) != NULL; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", name);
    if (list[0] == '\0')
        snprintf(list, sizeof list, "none");
    return list;
}

static int serves(const char *variant, int causal, const char *name)
{
    const char *kernel;
    for (int i = 0; (kernel = lt_attn_kernel_at(variant, causal, i)) != NULL; i++)
        if (strcmp(kernel, name) == 0)
            return 1;
    return 0;
}

const char *lt_attn_kernel_variant(const char *name)
{
    for (int v = 0; v < VARIANT_COUNT; v++)
        for (int i = 0; name != NULL && i < variants[v]->kernel_count; i++)
            if (strcmp(variants[v]->kernels[i].name, name) == 0)
                return variants[v]->name;
    return NULL;
}

const char *lt_attn_all_kernels(void)
{
    static char list[1024];
    list[0] = '\0';
    for (int v = 0; v < VARIANT_COUNT; v++)
        for (int i = 0; i < variants[v]->kernel_count; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     list[0] ? ", " : "", variants[v]->kernels[i].name);
    return list;
}

lt_status lt_attn_choose_kernel(const char *name, const char *const *variants, int count,
                                int causal, const char *variant, const char **kernel)
{
    *kernel = NULL;
    if (name == NULL || strcmp(name, "default") == 0)
        return LT_OK;
    if (lt_attn_kernel_variant(name) == NULL)
        return lt_fail(LT_E_USAGE, "--kernel: unknown kernel '%s'; the kernels: %s", name,
                       lt_attn_all_kernels());
    int owner = -1;
    for (int i = 0; i < count && owner < 0; i++)
        if (serves(variants[i], causal, name))
            owner = i;
    if (owner < 0) {
        char list[1024] = "";
        for (int i = 0; i < count; i++) {
            int listed = 0; /* lsh-1 and lsh-4 are one variant */
            for (int j = 0; j < i; j++)
                listed |= strcmp(variants[j], variants[i]) == 0;
            if (!listed)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s: %s",
                         list[0] ? "; " : "", variants[i],
                         lt_attn_kernels_for(variants[i], causal));
        }
        const char *of = lt_attn_kernel_variant(name);
        int measured = 0;
        for (int i = 0; i < count; i++)
            measured |= strcmp(variants[i], of) == 0;
        if (!measured)
            return lt_fail(LT_E_USAGE, "--kernel: %s is a kernel of %s, which this run does not "
                                       "measure; the kernels of those it does: %s",
                           name, of, list);
        return lt_fail(LT_E_USAGE, "--kernel: %s cannot run %s attention; kernels that can: %s",
                       name, causal ? "causal" : "non-causal", list);
    }
    if (strcmp(variants[owner], variant) == 0)
        *kernel = name;
    return LT_OK;
}

const char *lt_attn_kernel_continuation(const char *variant, const char *kernel)
{
    const lt_attn_variant *impl = find_variant(variant);
    for (int i = 0; impl != NULL && kernel != NULL && i < impl->kernel_count; i++)
        if (strcmp(impl->kernels[i].name, kernel) == 0)
            return impl->kernels[i].continued_by;
    return NULL;
}

/* Indexed by lt_feature_map. */
static const char *const feature_map_names[] = {"elu", "relu", "identity", "favor", "taylor"};
#define FEATURE_MAP_COUNT ((int)(sizeof feature_map_names / sizeof feature_map_names[0]))

lt_status lt_attn_parse_feature_map(lt_feature_map *out, const char *text, const char *flag)
{
    for (int i = 0; i < FEATURE_MAP_COUNT; i++) {
        if (text != NULL && strcmp(text, feature_map_names[i]) == 0) {
            *out = (lt_feature_map)i;
            return LT_OK;
        }
    }
    return lt_fail(LT_E_USAGE, "%s: expected elu, relu, favor, taylor or identity, got '%s'", flag,
                   text != NULL ? text : "(null)");
}

const char *lt_attn_feature_map_name(lt_feature_map map)
{
    if ((int)map < 0 || (int)map >= FEATURE_MAP_COUNT)
        return "unknown";
    return feature_map_names[map];
}

static int any_kernel_fits(const lt_attn_variant *impl, int causal)
{
    for (int i = 0; i < impl->kernel_count; i++)
        if (kernel_fits(&impl->kernels[i], causal))
            return 1;
    return 0;
}

lt_status lt_attn_variant_caps(const char *variant, lt_attn_caps *caps)
{
    const lt_attn_variant *impl = find_variant(variant);
    if (impl == NULL)
        return lt_fail(LT_E_USAGE, "variant: expected one of %s, got '%s'",
                       lt_attn_variant_names(), variant != NULL ? variant : "(null)");
    lt_attn_config config = lt_attn_default_config(impl->name);
    *caps = (lt_attn_caps){
        .causal = any_kernel_fits(impl, 1),
        .noncausal = any_kernel_fits(impl, 0),
        .params = impl->param_count(&config) > 0,
        .recurrent = impl->step != NULL,
        .constant_state = impl->step != NULL && !impl->step_grows,
        .gates = impl->gates,
        .no_causal_reason = impl->no_causal_reason,
        .no_noncausal_reason = impl->no_noncausal_reason,
        .no_recurrent_reason = impl->no_recurrence_reason,
    };
    return LT_OK;
}

lt_status lt_attn_init(lt_attn *attn, const lt_attn_config *config)
{
    LT_ASSERT(attn != NULL && config != NULL);
    const lt_attn_variant *impl = find_variant(config->variant);
    if (impl == NULL)
        return lt_fail(LT_E_USAGE, "variant: expected one of %s, got '%s'",
                       lt_attn_variant_names(),
                       config->variant != NULL ? config->variant : "(null)");
    if (config->causal != 0 && config->causal != 1)
        return lt_fail(LT_E_USAGE, "causal: expected 0 or 1, got %d", config->causal);
    LT_TRY(impl->check_config(config));

    int chosen = -1;
    for (int i = 0; i < impl->kernel_count && chosen < 0; i++) {
        const attn_kernel_info *kernel = &impl->kernels[i];
        int named = config->kernel == NULL || strcmp(config->kernel, kernel->name) == 0;
        if (named && kernel_fits(kernel, config->causal))
            chosen = i;
    }
    if (chosen < 0)
        return lt_fail(LT_E_USAGE, "kernel: '%s' is not a %s kernel for %s attention (%s)",
                       config->kernel, impl->name, config->causal ? "causal" : "non-causal",
                       lt_attn_kernels_for(impl->name, config->causal));
    attn->impl = impl;
    attn->kernel = chosen;
    attn->config = *config;
    attn->config.variant = impl->name;
    attn->config.kernel = impl->kernels[chosen].name;
    return LT_OK;
}

lt_status lt_attn_check_shape(const lt_attn *attn, lt_attn_shape shape)
{
    const struct {
        const char *name;
        int value, min;
    } sizes[] = {
        {"batch B", shape.B, 1},      {"heads H", shape.H, 1},
        {"sequence length N", shape.N, 0}, {"key dimension D", shape.D, 1},
        {"value dimension M", shape.M, 1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < sizes[i].min)
            return lt_fail(LT_E_INPUT, "%s attention: %s = %d, expected at least %d",
                           attn->impl->name, sizes[i].name, sizes[i].value, sizes[i].min);
    if (attn->impl == &lt_attn_linformer_variant && shape.N > attn->config.n_max)
        return lt_fail(LT_E_INPUT,
                       "linformer attention: sequence length N = %d exceeds n_max = %d "
                       "(the columns of E and F); raise n_max",
                       shape.N, attn->config.n_max);
    for (int b = 0; shape.lengths != NULL && b < shape.B; b++)
        if (shape.lengths[b] < 0 || shape.lengths[b] > shape.N)
            return lt_fail(LT_E_INPUT, "%s attention: length of sequence %d is %d, expected 0 to N = %d",
                           attn->impl->name, b, (int)shape.lengths[b], shape.N);
    return attn->impl->check_shape != NULL ? attn->impl->check_shape(attn, shape) : LT_OK;
}

const char *lt_attn_kernel_name(const lt_attn *attn, lt_attn_shape shape)
{
    (void)shape; /* every variant runs one kernel per configuration, whatever the shape */
    return attn->config.kernel;
}

size_t lt_attn_param_count(const lt_attn *attn) { return attn->impl->param_count(&attn->config); }

void lt_attn_init_params(const lt_attn *attn, float *params, unsigned long long seed)
{
    attn->impl->init_params(&attn->config, params, seed);
}

size_t lt_attn_saved_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    return attn->impl->saved_bytes(attn, shape);
}

static int threads_or_default(int threads) { return threads >= 1 ? threads : lt_threads_get(); }

static size_t shared_bytes(const lt_attn *attn, lt_attn_shape shape)
{
    return attn->impl->shared_bytes != NULL ? attn_round(attn->impl->shared_bytes(attn, shape)) : 0;
}

size_t lt_attn_workspace_bytes(const lt_attn *attn, lt_attn_shape shape, int threads)
{
    return shared_bytes(attn, shape) +
           (size_t)threads_or_default(threads) * attn_round(attn->impl->slice_bytes(attn, shape));
}

double lt_attn_flops(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    return attn->impl->flops(attn, shape, backward);
}

double lt_attn_interface_bytes(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    double rows = (double)shape.B * shape.H * shape.N;
    double q = rows * shape.D, k = attn->impl->ignores_k ? 0.0 : q, v = rows * shape.M;
    int wb, wa;
    lt_attn_gate_widths(attn, shape.D, &wb, &wa);
    /* the gates are read like parameters and get gradients like them */
    double params = (double)lt_attn_param_count(attn) + rows * (wb + wa);
    double saved = attn->impl->saved_touched_bytes != NULL
                       ? (double)attn->impl->saved_touched_bytes(attn, shape)
                       : (double)lt_attn_saved_bytes(attn, shape);
    if (!backward) /* q, k, v and the parameters in; out and the saved activations out */
        return 4.0 * (q + k + v + params + v) + saved;
    /* q, k, v, d_out, the parameters and the saved activations in; dq, dk,
     * dv and the parameters' gradients out (dk too where k is unread: a
     * training step zeroes it) */
    return 4.0 * (q + k + v + v + params) + saved + 4.0 * (2 * q + v + params);
}

double lt_attn_products_gflops(const lt_attn *attn, lt_attn_shape shape, int threads)
{
    if (attn->impl->products_gflops == NULL)
        return NAN;
    return attn->impl->products_gflops(attn, shape, threads >= 1 ? threads : lt_threads_get());
}

double lt_attn_flops_performed(const lt_attn *attn, lt_attn_shape shape, int backward)
{
    int inner = shape.B * shape.H < lt_threads_get(); /* as attn_across_heads decides */
    double total = 0.0;
    for (int b = 0; b < shape.B; b++) {
        int n = shape.lengths != NULL ? shape.lengths[b] : shape.N;
        total += shape.H * attn->impl->head_flops(attn, shape, n, backward, inner);
    }
    return total;
}

/* Below this many elements a finiteness scan stays on one thread: a
 * parallel region would cost more than it saves (recurrent steps). */
#define FINITE_SCAN_PARALLEL_MIN 65536

/* Cheap finiteness test on the bit patterns: a float is Inf or NaN when its
 * exponent bits are all ones, i.e. |bits| >= 0x7f800000, which is when
 * adding 0x00800000 carries into the top bit. An OR of those top bits is a
 * reduction of integer operations only: it vectorises without a chain of
 * floating-point additions (which IEEE rules keep in order) and runs at
 * load speed. */
static uint32_t nonfinite_bits(const float *x, size_t n)
{
    uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, x + i, sizeof bits);
        bad |= ((bits & 0x7fffffffu) + 0x00800000u) >> 31;
    }
    return bad;
}

/* The scan in blocks, each one vector loop: a `parallel for simd` over the
 * elements compiled (GCC 12) to a scalar loop inside the parallel region,
 * 20x slower, and its region was entered even for a step's few thousand
 * elements. */
enum { FINITE_SCAN_BLOCK = 16384 };

static int all_finite(const float *x, size_t n)
{
    if (n < FINITE_SCAN_PARALLEL_MIN)
        return nonfinite_bits(x, n) == 0;
    const long blocks = (long)((n + FINITE_SCAN_BLOCK - 1) / FINITE_SCAN_BLOCK);
    uint32_t bad = 0;
#pragma omp parallel for reduction(| : bad) schedule(static)
    for (long b = 0; b < blocks; b++) {
        size_t first = (size_t)b * FINITE_SCAN_BLOCK;
        bad |= nonfinite_bits(x + first, n - first < FINITE_SCAN_BLOCK ? n - first
                                                                       : FINITE_SCAN_BLOCK);
    }
    return bad == 0;
}

static lt_status check_finite(const lt_attn *attn, const float *x, size_t n, const char *name)
{
    if (!all_finite(x, n))
        return lt_fail(LT_E_NUMERIC, "%s attention: input %s holds NaN or Inf", attn->impl->name,
                       name);
    return LT_OK;
}

static lt_status check_buffer(const lt_attn *attn, const void *buffer, size_t needed_bytes,
                              const char *name)
{
    if (buffer == NULL && needed_bytes > 0)
        return lt_fail(LT_E_USAGE, "%s attention: %s is NULL but %zu bytes are needed",
                       attn->impl->name, name, needed_bytes);
    return LT_OK;
}

/* check_buffer for a float tensor of `count` elements */
static lt_status check_tensor(const lt_attn *attn, const float *tensor, size_t count,
                              const char *name)
{
    return check_buffer(attn, tensor, count * sizeof(float), name);
}

static size_t tensor_size(lt_attn_shape shape, int last)
{
    return (size_t)shape.B * shape.H * shape.N * last;
}

/* Everything forward and backward share: shape, inputs present, and with
 * `scan` finite. Backward passes 0: it takes the inputs forward already
 * scanned (its contract), and each scan is a pass over memory as long as a
 * linear attention kernel's own work on it. */
static lt_status check_call(const lt_attn *attn, lt_attn_shape shape, const void *workspace,
                            const float *q, const float *k, const float *v, const float *params,
                            int scan)
{
    size_t qk = tensor_size(shape, shape.D), vo = tensor_size(shape, shape.M);
    size_t n_params = lt_attn_param_count(attn);
    LT_TRY(check_buffer(attn, workspace, lt_attn_workspace_bytes(attn, shape, 1), "workspace"));
    LT_TRY(check_tensor(attn, q, qk, "q"));
    LT_TRY(check_tensor(attn, k, qk, "k"));
    LT_TRY(check_tensor(attn, v, vo, "v"));
    LT_TRY(check_tensor(attn, params, n_params, "params"));
    if (!scan)
        return LT_OK;
    LT_TRY(check_finite(attn, q, qk, "q"));
    if (!attn->impl->ignores_k)
        LT_TRY(check_finite(attn, k, qk, "k"));
    LT_TRY(check_finite(attn, v, vo, "v"));
    LT_TRY(check_finite(attn, params, n_params, "params"));
    return LT_OK;
}

static attn_call make_call(const lt_attn *attn, lt_attn_shape shape, void *workspace,
                           const float *q, const float *k, const float *v, const float *params)
{
    attn_call call = {
        .attn = attn,
        .shape = shape,
        .q = q,
        .k = k,
        .v = v,
        .params = params,
        .workspace = (char *)workspace + shared_bytes(attn, shape),
        .slice = attn_round(attn->impl->slice_bytes(attn, shape)),
        .shared = attn->impl->shared_bytes != NULL ? workspace : NULL,
        .threads = lt_threads_get(),
    };
    return call;
}

/* Output rows past each sequence's length are 0, so what follows the
 * attention sees the same values whatever the kernel. */
static void zero_padded_rows(float *out, lt_attn_shape shape)
{
    if (shape.lengths == NULL)
        return;
    for (int bh = 0; bh < shape.B * shape.H; bh++) {
        size_t rows = (size_t)(shape.N - shape.lengths[bh / shape.H]);
        float *pad = out + ((size_t)bh * shape.N + (size_t)shape.lengths[bh / shape.H]) * shape.M;
        memset(pad, 0, rows * (size_t)shape.M * sizeof(float));
    }
}

void lt_attn_gate_widths(const lt_attn *attn, int D, int *beta, int *log_alpha)
{
    const int gates = attn->impl->gates;
    *beta = (gates & LT_ATTN_GATE_BETA) != 0;
    *log_alpha = gates & LT_ATTN_GATE_ALPHA_KEYS ? D : (gates & LT_ATTN_GATE_ALPHA) != 0;
}

/* How a call uses its gates: forward scans them, backward also needs
 * their gradients, a step scans one position's. */
typedef enum gate_use { GATES_FORWARD, GATES_BACKWARD, GATES_STEP } gate_use;

/* One gate of `count` floats (0: the variant does not read it), which must
 * lie in [lo, hi] when scanned. */
static lt_status check_gate(const lt_attn *attn, const float *x, size_t count, const char *name,
                            int scan, float lo, float hi)
{
    if (count == 0 && x != NULL)
        return lt_fail(LT_E_USAGE, "%s attention reads no %s: pass NULL", attn->impl->name, name);
    if (count > 0 && x == NULL)
        return lt_fail(LT_E_USAGE,
                       "%s attention needs %s (%zu floats) in lt_attn_gates: call "
                       "lt_attn_forward_gated, lt_attn_backward_gated or lt_attn_step_gated",
                       attn->impl->name, name, count);
    if (count == 0 || !scan)
        return LT_OK;
    LT_TRY(check_finite(attn, x, count, name));
    for (size_t i = 0; i < count; i++)
        if (!(x[i] >= lo && x[i] <= hi))
            return lt_fail(LT_E_INPUT, "%s attention: %s[%zu] = %g, expected a value in [%g, %g]",
                           attn->impl->name, name, i, (double)x[i], (double)lo, (double)hi);
    return LT_OK;
}

/* The gates of `pairs` (position, head) pairs of head dimension D. */
static lt_status check_gates(const lt_attn *attn, const lt_attn_gates *gates, size_t pairs, int D,
                             gate_use use)
{
    int wb, wa;
    lt_attn_gate_widths(attn, D, &wb, &wa);
    const size_t nb = pairs * (size_t)wb, na = pairs * (size_t)wa;
    const int scan = use != GATES_BACKWARD;
    LT_TRY(check_gate(attn, gates->beta, nb, "beta", scan, 0.0f, 1.0f));
    LT_TRY(check_gate(attn, gates->log_alpha, na, "log_alpha", scan, -INFINITY, 0.0f));
    if (use != GATES_BACKWARD) /* the gradients' pointers are backward's alone */
        return LT_OK;
    LT_TRY(check_gate(attn, gates->d_beta, nb, "d_beta", 0, 0.0f, 0.0f));
    return check_gate(attn, gates->d_log_alpha, na, "d_log_alpha", 0, 0.0f, 0.0f);
}

static const lt_attn_gates no_gates;

lt_status lt_attn_forward(const lt_attn *attn, lt_attn_shape shape, float *out, void *saved,
                          void *workspace, const float *q, const float *k, const float *v,
                          const float *params)
{
    return lt_attn_forward_gated(attn, shape, NULL, out, saved, workspace, q, k, v, params);
}

lt_status lt_attn_forward_gated(const lt_attn *attn, lt_attn_shape shape,
                                const lt_attn_gates *gates, float *out, void *saved,
                                void *workspace, const float *q, const float *k, const float *v,
                                const float *params)
{
    LT_TRY(lt_attn_check_shape(attn, shape));
    if (shape.N == 0)
        return LT_OK; /* nothing to attend over; no buffer is read or written */
    LT_TRY(check_call(attn, shape, workspace, q, k, v, params, 1));
    LT_TRY(check_tensor(attn, out, tensor_size(shape, shape.M), "out"));
    gates = gates != NULL ? gates : &no_gates;
    LT_TRY(check_gates(attn, gates, tensor_size(shape, 1), shape.D, GATES_FORWARD));
    attn_call call = make_call(attn, shape, workspace, q, k, v, params);
    call.gates = *gates;
    call.out = out;
    call.saved = saved;
    attn->impl->forward(&call);
    zero_padded_rows(out, shape);
    return LT_OK;
}

lt_status lt_attn_backward(const lt_attn *attn, lt_attn_shape shape, float *dq, float *dk,
                           float *dv, float *d_params, void *workspace, const float *d_out,
                           const void *saved, const float *q, const float *k, const float *v,
                           const float *params)
{
    return lt_attn_backward_gated(attn, shape, NULL, dq, dk, dv, d_params, workspace, d_out,
                                  saved, q, k, v, params);
}

lt_status lt_attn_backward_gated(const lt_attn *attn, lt_attn_shape shape,
                                 const lt_attn_gates *gates, float *dq, float *dk, float *dv,
                                 float *d_params, void *workspace, const float *d_out,
                                 const void *saved, const float *q, const float *k,
                                 const float *v, const float *params)
{
    LT_TRY(lt_attn_check_shape(attn, shape));
    if (shape.N == 0)
        return LT_OK;
    LT_TRY(check_call(attn, shape, workspace, q, k, v, params, 0));
    size_t qk = tensor_size(shape, shape.D), vo = tensor_size(shape, shape.M);
    LT_TRY(check_buffer(attn, saved, lt_attn_saved_bytes(attn, shape), "saved"));
    LT_TRY(check_tensor(attn, dq, qk, "dq"));
    LT_TRY(check_tensor(attn, dk, qk, "dk"));
    LT_TRY(check_tensor(attn, dv, vo, "dv"));
    LT_TRY(check_tensor(attn, d_params, lt_attn_param_count(attn), "d_params"));
    LT_TRY(check_tensor(attn, d_out, vo, "d_out"));
    LT_TRY(check_finite(attn, d_out, vo, "d_out"));
    gates = gates != NULL ? gates : &no_gates;
    LT_TRY(check_gates(attn, gates, tensor_size(shape, 1), shape.D, GATES_BACKWARD));
    attn_call call = make_call(attn, shape, workspace, q, k, v, params);
    call.gates = *gates;
    call.dq = dq;
    call.dk = dk;
    call.dv = dv;
    call.d_params = d_params;
    call.d_out = d_out;
    call.saved = (void *)saved; /* backward only reads it */
    attn->impl->backward(&call);
    return LT_OK;
}

/* ---- recurrent form ---- */

/* The state starts with this header (one cache line), then the variant's
 * payload. The header lets lt_attn_step check the state belongs to attn. */
typedef struct state_header {
    const lt_attn_variant *impl;
    int B, H, D, M, max_steps, steps;
} state_header;
#define STATE_HEADER_BYTES 64
_Static_assert(sizeof(state_header) <= STATE_HEADER_BYTES, "state header fits one cache line");

static lt_status check_recurrent(const lt_attn *attn, int B, int H, int D, int M, int max_steps)
{
    const lt_attn_variant *impl = attn->impl;
    if (impl->step == NULL)
        return lt_fail(LT_E_USAGE, "%s attention has no recurrent form: %s", impl->name,
                       impl->no_recurrence_reason);
    if (!attn->config.causal)
        return lt_fail(LT_E_USAGE,
                       "%s attention: the recurrent form (one token at a time) exists only "
                       "for causal attention; set causal = 1",
                       impl->name);
    if (B < 1 || H < 1 || D < 1 || M < 1 || max_steps < 1)
        return lt_fail(LT_E_INPUT,
                       "%s attention state: B = %d, H = %d, D = %d, M = %d, max_steps = %d; "
                       "expected all at least 1",
                       impl->name, B, H, D, M, max_steps);
    lt_attn_shape shape = {.B = B, .H = H, .N = max_steps, .D = D, .M = M};
    return impl->check_shape != NULL ? impl->check_shape(attn, shape) : LT_OK;
}

lt_status lt_attn_state_bytes(const lt_attn *attn, int B, int H, int D, int M, int max_steps,
                              size_t *bytes)
{
    *bytes = 0;
    LT_TRY(check_recurrent(attn, B, H, D, M, max_steps));
    *bytes = STATE_HEADER_BYTES + attn->impl->state_payload_bytes(attn, B, H, D, M, max_steps);
    return LT_OK;
}

lt_status lt_attn_step_cost(const lt_attn *attn, int H, int D, int M, int position,
                            double *bytes, double *flops)
{
    /* a cache's growth over many steps: one more step can fall inside a
     * block of rows allocated ahead (softmax's keys, 32 at a time) */
    enum { SPAN = 4096 };
    size_t one, many;
    LT_TRY(lt_attn_state_bytes(attn, 1, H, D, M, 1, &one));
    if (!attn->impl->step_grows) { /* constant: every float read and written, one FMA each way */
        double payload = (double)(one - STATE_HEADER_BYTES);
        *bytes = 2.0 * payload;
        *flops = 4.0 * payload / sizeof(float);
    } else { /* a cache of (many - one) / SPAN bytes a step: one FMA a float read */
        LT_TRY(lt_attn_state_bytes(attn, 1, H, D, M, 1 + SPAN, &many));
        *bytes = (double)(many - one) / SPAN * (position + 1);
        *flops = 2.0 * *bytes / sizeof(float);
    }
    return LT_OK;
}

lt_status lt_attn_state_init(const lt_attn *attn, void *state, int B, int H, int D, int M,
                             int max_steps, uint64_t seed, int layer)
{
    size_t bytes;
    LT_TRY(lt_attn_state_bytes(attn, B, H, D, M, max_steps, &bytes));
    LT_TRY(check_buffer(attn, state, bytes, "state"));
    memset(state, 0, bytes);
    state_header *header = state;
    *header = (state_header){attn->impl, B, H, D, M, max_steps, 0};
    if (attn->impl->state_init != NULL)
        attn->impl->state_init(attn, (char *)state + STATE_HEADER_BYTES, B, H, D, M, max_steps,
                               seed, layer);
    return LT_OK;
}

/* What a step checks before it runs: the state is this variant's, the
 * tensors are there and finite, a cache has room. Every thread of a team
 * checks the same data and comes to the same verdict; the messages go to
 * each thread's own last error. */
static lt_status step_checks(const lt_attn *attn, const state_header *header, const float *out,
                             const float *q, const float *k, const float *v,
                             const lt_attn_gates *gates)
{
    if (header == NULL || header->impl != attn->impl)
        return lt_fail(LT_E_USAGE, "%s attention step: the state was not initialised by "
                                   "lt_attn_state_init for this variant",
                       attn->impl->name);
    size_t heads = (size_t)header->B * header->H;
    LT_TRY(check_tensor(attn, out, heads * header->M, "out"));
    LT_TRY(check_tensor(attn, q, heads * header->D, "q"));
    LT_TRY(check_tensor(attn, k, heads * header->D, "k"));
    LT_TRY(check_tensor(attn, v, heads * header->M, "v"));
    LT_TRY(check_finite(attn, q, heads * header->D, "q"));
    LT_TRY(check_finite(attn, k, heads * header->D, "k"));
    LT_TRY(check_finite(attn, v, heads * header->M, "v"));
    LT_TRY(check_gates(attn, gates, heads, header->D, GATES_STEP));
    if (attn->impl->step_grows && header->steps >= header->max_steps)
        return lt_fail(LT_E_USAGE,
                       "%s attention step: the key/value cache is full (max_steps = %d); "
                       "initialise the state with a larger max_steps",
                       attn->impl->name, header->max_steps);
    return LT_OK;
}

/* This thread's static share of the step's heads. */
static void step_own_heads(const lt_attn *attn, state_header *header, float *out, const float *q,
                           const float *k, const float *v, const lt_attn_gates *gates)
{
    const int heads = header->B * header->H;
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    const int bh0 = (int)((long)heads * me / threads), bh1 = (int)((long)heads * (me + 1) / threads);
    if (bh0 < bh1)
        attn->impl->step(attn, (char *)header + STATE_HEADER_BYTES, header->B, header->H,
                         header->D, header->M, header->max_steps, header->steps, bh0, bh1, out,
                         q, k, v, gates);
}

lt_status lt_attn_step(const lt_attn *attn, void *state, float *out, const float *q,
                       const float *k, const float *v)
{
    return lt_attn_step_gated(attn, state, out, q, k, v, NULL);
}

lt_status lt_attn_step_gated(const lt_attn *attn, void *state, float *out, const float *q,
                             const float *k, const float *v, const lt_attn_gates *gates)
{
    state_header *header = state;
    gates = gates != NULL ? gates : &no_gates;
    LT_TRY(step_checks(attn, header, out, q, k, v, gates));
    const int parallel = attn->impl->step_parallel(attn, header->B * header->H, header->D,
                                                   header->M, header->steps);
#pragma omp parallel if (parallel)
    step_own_heads(attn, header, out, q, k, v, gates);
    header->steps++;
    return LT_OK;
}

lt_status lt_attn_step_team(const lt_attn *attn, void *state, float *out, const float *q,
                            const float *k, const float *v)
{
    return lt_attn_step_team_gated(attn, state, out, q, k, v, NULL);
}

lt_status lt_attn_step_team_gated(const lt_attn *attn, void *state, float *out,
                                  const float *q, const float *k, const float *v,
                                  const lt_attn_gates *gates)
{
    state_header *header = state;
    gates = gates != NULL ? gates : &no_gates;
    LT_TRY(step_checks(attn, header, out, q, k, v, gates));
    step_own_heads(attn, header, out, q, k, v, gates);
    /* every thread has read header->steps: one may count the step */
#pragma omp barrier
#pragma omp master
    header->steps++;
    return LT_OK;
}

lt_status lt_attn_state_skip(const lt_attn *attn, void *state, int steps)
{
    state_header *header = state;
    if (header == NULL || header->impl != attn->impl)
        return lt_fail(LT_E_USAGE, "%s attention skip: the state was not initialised by "
                                   "lt_attn_state_init for this variant",
                       attn->impl->name);
    if (steps < 0)
        return lt_fail(LT_E_INPUT, "%s attention skip: %d steps, expected at least 0",
                       attn->impl->name, steps);
    if (steps > header->max_steps - header->steps)
        return lt_fail(LT_E_USAGE, "%s attention skip: %d positions after %d go past "
                                   "max_steps = %d",
                       attn->impl->name, steps, header->steps, header->max_steps);
    header->steps += steps;
    return LT_OK;
}

/* ---- helpers shared by the variants ---- */

size_t attn_no_params(const lt_attn_config *config)
{
    (void)config;
    return 0;
}

void attn_no_init_params(const lt_attn_config *config, float *params, unsigned long long seed)
{
    (void)config, (void)params, (void)seed;
}

size_t attn_round(size_t bytes) { return (bytes + 63) / 64 * 64; }

float *attn_take(char **cursor, size_t count)
{
    float *block = (float *)*cursor;
    *cursor += attn_round(count * sizeof(float));
    return block;
}

static const float *offset_const(const float *x, size_t at) { return x != NULL ? x + at : NULL; }
static float *offset(float *x, size_t at) { return x != NULL ? x + at : NULL; }

attn_head attn_view_head(const attn_call *call, int bh)
{
    size_t N = call->shape.N, D = call->shape.D, M = call->shape.M;
    size_t qk = (size_t)bh * N * D, vo = (size_t)bh * N * M;
    attn_head h = {
        .q = call->q + qk,
        .k = call->k + qk,
        .v = call->v + vo,
        .d_out = offset_const(call->d_out, vo),
        .out = offset(call->out, vo),
        .dq = offset(call->dq, qk),
        .dk = offset(call->dk, qk),
        .dv = offset(call->dv, vo),
    };
    return h;
}

int attn_across_heads(const attn_call *call)
{
    return call->shape.B * call->shape.H >= call->threads;
}

void attn_for_each_head(const attn_call *call, attn_head_fn fn)
{
    int heads = call->shape.B * call->shape.H;
    if (attn_across_heads(call)) {
#pragma omp parallel for schedule(static) num_threads(call->threads)
        for (int bh = 0; bh < heads; bh++)
            fn(call, bh, call->workspace + (size_t)omp_get_thread_num() * call->slice, 0);
    } else {
        for (int bh = 0; bh < heads; bh++)
            fn(call, bh, call->workspace, 1);
    }
}

void attn_kernel_forward(const attn_call *call)
{
    attn_for_each_head(call, call->attn->impl->kernels[call->attn->kernel].forward);
}

void attn_kernel_backward(const attn_call *call)
{
    attn_for_each_head(call, call->attn->impl->kernels[call->attn->kernel].backward);
}

/* One row of scores: its maximum (exact in any order), then the
 * exponentials and their sum in lanes.h's 16 partial sums, so the row's
 * bits do not depend on the vector width it runs at. */
static inline __attribute__((always_inline)) void softmax_row_body(float *row, int cols)
{
    float max = -INFINITY;
#pragma omp simd reduction(max : max)
    for (int j = 0; j < cols; j++)
        max = row[j] > max ? row[j] : max;
    float inv = 1.0f / lt_exp_shifted_sum(row, cols, max);
    for (int j = 0; j < cols; j++)
        row[j] *= inv;
}
LT_PER_KERNEL_SET(static, softmax_row, (float *row, int cols), (row, cols))

void attn_softmax_rows(float *scores, size_t ld, int rows, int cols, int first_row, int causal,
                       int inner)
{
#pragma omp parallel for schedule(static) if (inner)
    for (int r = 0; r < rows; r++) {
        float *row = scores + (size_t)r * ld;
        if (causal)
            for (int j = first_row + r + 1; j < cols; j++)
                row[j] = -INFINITY;
        softmax_row(row, cols);
    }
}

/* d = p (d - d . p) for one row, the dot product in 16 partial sums. */
static inline __attribute__((always_inline)) void softmax_row_backward_body(float *d,
                                                                             const float *p,
                                                                             int cols)
{
    float part[LT_WIDE] = {0};
    int j0 = 0;
    for (; j0 + LT_WIDE <= cols; j0 += LT_WIDE)
        for (int l = 0; l < LT_WIDE; l++)
            part[l] += d[j0 + l] * p[j0 + l];
    for (int l = 0; j0 + l < cols; l++)
        part[l] += d[j0 + l] * p[j0 + l];
    const float dot = lt_wide_total(part);
    for (int j = 0; j < cols; j++)
        d[j] = p[j] * (d[j] - dot);
}
LT_PER_KERNEL_SET(static, softmax_row_backward, (float *d, const float *p, int cols),
                  (d, p, cols))

void attn_softmax_rows_backward(float *dp, size_t ld_dp, const float *p, size_t ld_p, int rows,
                                int cols, int inner)
{
#pragma omp parallel for schedule(static) if (inner)
    for (int r = 0; r < rows; r++)
        softmax_row_backward(dp + (size_t)r * ld_dp, p + (size_t)r * ld_p, cols);
}
