/* ltbench attention: run one attention kernel on the user's own .npy
 * tensors, so its outputs and gradients can be checked against another
 * framework. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/attn.h"
#include "core/mem.h"
#include "core/threads.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "experiment/flags.h"
#include "experiment/program.h"

typedef struct attention_options {
    const char *variant, *causal_mode;
    const char *q, *k, *v, *e, *f, *out, *dout;
    const char *beta, *log_alpha; /* delta, gated-delta, gla */
    double eps;
    const char *feature_map;
    long rounds, buckets, chunk;
    int overwrite;
    lt_common common;
} attention_options;

static void format_shape(char *buf, size_t size, const lt_npy *a)
{
    int n = snprintf(buf, size, "(");
    for (int i = 0; i < a->ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? ", " : "", a->shape[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ")");
}

/* Reads a tensor and refuses non-finite values, naming the file and flag. */
static lt_status read_tensor(lt_npy *a, const char *path, const char *flag, int ndim,
                             const char *layout)
{
    LT_TRY(lt_npy_read(a, path));
    char shape[128];
    format_shape(shape, sizeof shape, a);
    if (a->ndim != ndim)
        return lt_fail(LT_E_INPUT, "%s %s: expected a %d-d array %s, got shape %s", flag, path,
                       ndim, layout, shape);
    for (long long i = 0; i < lt_npy_count(a); i++)
        if (!isfinite(a->data[i]))
            return lt_fail(LT_E_INPUT,
                           "%s %s: element %lld is %g; expected finite values (no NaN or Inf)",
                           flag, path, i, (double)a->data[i]);
    return LT_OK;
}

/* Checks that dims [0, count) of `a` equal those of `ref`. */
static lt_status same_dims(const lt_npy *a, const char *a_flag, const lt_npy *ref,
                           const char *ref_flag, int count, const char *what)
{
    for (int i = 0; i < count; i++)
        if (a->shape[i] != ref->shape[i]) {
            char sa[128], sr[128];
            format_shape(sa, sizeof sa, a);
            format_shape(sr, sizeof sr, ref);
            return lt_fail(LT_E_INPUT, "%s has shape %s but %s has shape %s: %s", a_flag, sa,
                           ref_flag, sr, what);
        }
    return LT_OK;
}

static lt_status check_int_dims(const lt_npy *a, const char *flag)
{
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] > 1 << 30)
            return lt_fail(LT_E_INPUT, "%s: dimension %d is %lld, more than ltbench supports",
                           flag, i, a->shape[i]);
    return LT_OK;
}

/* An output file in OUT, opened before any work (so an unwritable path is
 * found first) and committed with all the others at the end, or none. */
typedef struct output {
    const char *name; /* "dq.npy" */
    char path[4400];
    lt_atomic_file file;
    const float *data;
    int ndim;
    long long shape[4];
} output;

enum { MAX_OUTPUTS = 8 };

typedef struct tensors {
    lt_outdir dir; /* OUT, held from the check of its files to the end */
    lt_npy q, k, v, e, f, dout, beta, log_alpha;
    float *out, *params, *dq, *dk, *dv, *d_params, *d_beta, *d_log_alpha;
    void *saved, *workspace;
    output outputs[MAX_OUTPUTS];
    int output_count;
} tensors;

static void abort_outputs(tensors *t)
{
    for (int i = 0; i < t->output_count; i++)
        lt_atomic_abort(&t->outputs[i].file);
    t->output_count = 0;
}

static lt_status open_output(tensors *t, const char *name)
{
    output *o = &t->outputs[t->output_count];
    memset(o, 0, sizeof *o);
    o->name = name;
    lt_outdir_path(&t->dir, name, o->path, sizeof o->path);
    LT_TRY(lt_atomic_open(&o->file, o->path));
    t->output_count++;
    return LT_OK;
}

static void set_output(tensors *t, const char *name, const float *data, int ndim,
                       const long long *shape)
{
    for (int i = 0; i < t->output_count; i++)
        if (strcmp(t->outputs[i].name, name) == 0) {
            t->outputs[i].data = data;
            t->outputs[i].ndim = ndim;
            memcpy(t->outputs[i].shape, shape, (size_t)ndim * sizeof *shape);
        }
}

/* A result that is not finite is never written as a success. `relu_map`:
 * the variant ran the relu feature map, whose normaliser can be eps alone
 * (the hint is about that map, so no other run gets it). */
static lt_status check_finite(const output *o, int relu_map)
{
    size_t n = 1;
    for (int d = 0; d < o->ndim; d++)
        n *= (size_t)o->shape[d];
    for (size_t i = 0; i < n; i++)
        if (!isfinite(o->data[i]))
            return lt_fail(LT_E_NUMERIC, "%s: element %zu of the result is %g; nothing was "
                                         "written%s",
                           o->path, i, (double)o->data[i],
                           relu_map ? " (with --feature-map relu, a query with no positive "
                                      "entry has a normaliser of eps alone)"
                                    : "");
    return LT_OK;
}

/* Checks every result, writes every file, then commits them all. */
static lt_status commit_outputs(tensors *t, const lt_attn_config *config)
{
    int relu_map = (strcmp(config->variant, "linear") == 0 ||
                    strcmp(config->variant, "decay") == 0) &&
                   config->feature_map == LT_FEATURE_RELU;
    for (int i = 0; i < t->output_count; i++)
        LT_TRY(check_finite(&t->outputs[i], relu_map));
    for (int i = 0; i < t->output_count; i++) {
        output *o = &t->outputs[i];
        LT_TRY(lt_npy_write_f32_into(&o->file, o->data, o->ndim, o->shape));
    }
    for (int i = 0; i < t->output_count; i++) {
        lt_status status = lt_atomic_commit(&t->outputs[i].file);
        if (status != LT_OK) {
            for (int j = i + 1; j < t->output_count; j++)
                lt_atomic_abort(&t->outputs[j].file);
            t->output_count = 0;
            return status;
        }
    }
    t->output_count = 0;
    return LT_OK;
}

static void release(tensors *t)
{
    abort_outputs(t);
    lt_outdir_close(&t->dir);
    lt_npy *arrays[] = {&t->q, &t->k, &t->v, &t->e, &t->f, &t->dout, &t->beta, &t->log_alpha};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        lt_npy_free(arrays[i]);
    void *blocks[] = {t->out, t->params,  t->dq,          t->dk,    t->dv,
                      t->d_params, t->d_beta, t->d_log_alpha, t->saved, t->workspace};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        lt_mem_free(blocks[i]);
}

/* The gates a variant reads (lt_attn_caps.gates) and their gradients:
 * required where it reads them, refused where it does not. */
static lt_status check_gate_flags(const attention_options *o, int gates)
{
    const int beta = (gates & LT_ATTN_GATE_BETA) != 0;
    const int alpha = (gates & (LT_ATTN_GATE_ALPHA | LT_ATTN_GATE_ALPHA_KEYS)) != 0;
    const struct {
        const char *flag, *path;
        int read;
        const char *readers;
    } g[] = {
        {"--beta", o->beta, beta, "delta and gated-delta"},
        {"--log-alpha", o->log_alpha, alpha, "gated-delta and gla"},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (g[i].path != NULL && !g[i].read)
            return lt_fail(LT_E_USAGE, "%s belongs to --variant %s only (%s reads no such gate)",
                           g[i].flag, g[i].readers, o->variant);
    if (beta && o->beta == NULL)
        return lt_fail(LT_E_USAGE, "--variant %s needs --beta: the delta rule's step size per "
                                   "position and head, (B, H, N) in [0, 1]",
                       o->variant);
    if (alpha && o->log_alpha == NULL)
        return lt_fail(LT_E_USAGE, "--variant %s needs --log-alpha: the logarithm of the decay "
                                   "per position and head, %s, each <= 0",
                       o->variant, gates & LT_ATTN_GATE_ALPHA_KEYS ? "(B, H, N, D)" : "(B, H, N)");
    return LT_OK;
}

static lt_status check_flags(const attention_options *o, int linformer, int lsh, int gates)
{
    if (strcmp(o->causal_mode, "both") == 0)
        return lt_fail(LT_E_USAGE, "--causal both: attention runs one masking per call; give "
                                   "--causal causal or --causal noncausal");
    if (!o->q || !o->v)
        return lt_fail(LT_E_USAGE, "--q and --v are required");
    if (!o->k && !lsh)
        return lt_fail(LT_E_USAGE, "--k is required (only --variant lsh, whose keys are its "
                                   "normalised queries, runs without it)");
    if (linformer && (!o->e || !o->f))
        return lt_fail(LT_E_USAGE, "--variant linformer needs --e and --f (shape (k, N_max))");
    if (!linformer && (o->e || o->f))
        return lt_fail(LT_E_USAGE, "--e and --f belong to --variant linformer only");
    return check_gate_flags(o, gates);
}

/* ---- the files in OUT ---- */

enum { INPUTS = 8 };

/* The files a run writes in OUT: the output, and with --dout the gradient
 * of every input the variant reads (lsh's dk, of keys it does not read, is
 * 0). */
static int output_names(const attention_options *o, int linformer, int gates,
                        const char **names)
{
    int n = 0;
    names[n++] = "out.npy";
    if (o->dout == NULL)
        return n;
    names[n++] = "dq.npy";
    names[n++] = "dk.npy";
    names[n++] = "dv.npy";
    if (linformer) {
        names[n++] = "de.npy";
        names[n++] = "df.npy";
    }
    if (gates & LT_ATTN_GATE_BETA)
        names[n++] = "dbeta.npy";
    if (gates & (LT_ATTN_GATE_ALPHA | LT_ATTN_GATE_ALPHA_KEYS))
        names[n++] = "dlog_alpha.npy";
    return n;
}

/* Before anything is read or written: a file of OUT that is an input
 * (naming the input's flag) is refused whatever the flags, one an earlier
 * run wrote unless --overwrite (lt_output_check, the rule of every
 * program's outputs). OUT is taken (lt_outdir_open) once the inputs are
 * read. */
static lt_status check_out(const attention_options *o, const char *const *names, int count)
{
    const char *const in_flags[INPUTS] = {"--q", "--k", "--v", "--e", "--f", "--dout", "--beta",
                                          "--log-alpha"};
    const char *const in_paths[INPUTS] = {o->q, o->k, o->v, o->e, o->f, o->dout, o->beta,
                                          o->log_alpha};
    LT_TRY(lt_flag_check_out(o->out, "out.npy and, with --dout, the gradients"));
    for (int i = 0; i < count; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", o->out, names[i]);
        for (int j = 0; j < INPUTS; j++)
            if (in_paths[j] != NULL && lt_same_file(path, in_paths[j]))
                return lt_fail(LT_E_USAGE, "--out %s: its %s is the input %s %s; it would be "
                                           "overwritten, so write outputs elsewhere",
                               o->out, names[i], in_flags[j], in_paths[j]);
        LT_TRY(lt_output_check("--out", path, o->overwrite, 0, NULL, 0));
        struct stat st; /* a folder in the way would fail the commit, after the others */
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return lt_fail(LT_E_USAGE, "--out %s: %s is a folder; expected none, or a file to "
                                       "replace",
                           o->out, path);
    }
    return LT_OK;
}

/* What a run computes on, once its inputs are read. */
typedef struct job {
    lt_attn_config config;
    lt_attn attn;
    lt_attn_shape shape;
    lt_attn_gates gates; /* the gates the variant reads; the others NULL */
    const float *keys;   /* k, or q where lsh runs without --k */
    int linformer;
} job;

/* q, k and v (and linformer's E and F) read and checked; the shape, and
 * the configuration's projection sizes, from them. */
static lt_status read_inputs(const attention_options *o, tensors *t, job *j)
{
    LT_TRY(read_tensor(&t->q, o->q, "--q", 4, "(B, H, N, D)"));
    if (o->k)
        LT_TRY(read_tensor(&t->k, o->k, "--k", 4, "(B, H, N, D)"));
    LT_TRY(read_tensor(&t->v, o->v, "--v", 4, "(B, H, N, M)"));
    LT_TRY(check_int_dims(&t->q, "--q"));
    LT_TRY(check_int_dims(&t->v, "--v"));
    if (o->k)
        LT_TRY(same_dims(&t->k, "--k", &t->q, "--q", 4, "keys must match queries (B, H, N, D)"));
    /* lsh never reads k: without --k the queries stand in for the buffer */
    j->keys = o->k ? t->k.data : t->q.data;
    LT_TRY(same_dims(&t->v, "--v", &t->q, "--q", 3,
                     "values must share (B, H, N) with the queries"));
    j->shape = (lt_attn_shape){.B = (int)t->q.shape[0], .H = (int)t->q.shape[1],
                               .N = (int)t->q.shape[2], .D = (int)t->q.shape[3],
                               .M = (int)t->v.shape[3], .seed = (uint64_t)o->common.seed};
    if (!j->linformer)
        return LT_OK;
    LT_TRY(read_tensor(&t->e, o->e, "--e", 2, "(k, N_max)"));
    LT_TRY(read_tensor(&t->f, o->f, "--f", 2, "(k, N_max)"));
    LT_TRY(check_int_dims(&t->e, "--e"));
    LT_TRY(same_dims(&t->f, "--f", &t->e, "--e", 2, "E and F must have the same shape"));
    j->config.proj_k = (int)t->e.shape[0];
    j->config.n_max = (int)t->e.shape[1];
    if (j->config.n_max < j->shape.N)
        return lt_fail(LT_E_INPUT, "--e %s: has %d columns but the sequence length is %d; "
                                   "expected (k, N_max) with N_max >= N",
                       o->e, j->config.n_max, j->shape.N);
    return LT_OK;
}

/* Every element of a gate in [lo, hi], or LT_E_INPUT naming the flag, the
 * file and the element (before the attention core would refuse it with
 * neither). */
static lt_status check_range(const lt_npy *a, const char *flag, const char *path, float lo,
                             float hi, const char *expected)
{
    for (long long i = 0; i < lt_npy_count(a); i++)
        if (!(a->data[i] >= lo && a->data[i] <= hi))
            return lt_fail(LT_E_INPUT, "%s %s: element %lld is %g; expected %s", flag, path, i,
                           (double)a->data[i], expected);
    return LT_OK;
}

/* The gates the variant reads, one per position and head as q's (B, H, N)
 * (gla's log_alpha one per key channel too, q's shape), read and checked
 * into j->gates. */
static lt_status read_gates(const attention_options *o, tensors *t, job *j)
{
    lt_attn_caps caps;
    LT_TRY(lt_attn_variant_caps(j->config.variant, &caps));
    memset(&j->gates, 0, sizeof j->gates);
    if (caps.gates & LT_ATTN_GATE_BETA) {
        LT_TRY(read_tensor(&t->beta, o->beta, "--beta", 3, "(B, H, N)"));
        LT_TRY(same_dims(&t->beta, "--beta", &t->q, "--q", 3,
                         "beta has one value per position and head (B, H, N)"));
        LT_TRY(check_range(&t->beta, "--beta", o->beta, 0.0f, 1.0f, "values in [0, 1]"));
        j->gates.beta = t->beta.data;
    }
    if (caps.gates & (LT_ATTN_GATE_ALPHA | LT_ATTN_GATE_ALPHA_KEYS)) {
        const int keys = (caps.gates & LT_ATTN_GATE_ALPHA_KEYS) != 0;
        LT_TRY(read_tensor(&t->log_alpha, o->log_alpha, "--log-alpha", keys ? 4 : 3,
                           keys ? "(B, H, N, D)" : "(B, H, N)"));
        LT_TRY(same_dims(&t->log_alpha, "--log-alpha", &t->q, "--q", keys ? 4 : 3,
                         keys ? "gla's log_alpha has one value per position, head and key "
                                "channel (B, H, N, D)"
                              : "log_alpha has one value per position and head (B, H, N)"));
        LT_TRY(check_range(&t->log_alpha, "--log-alpha", o->log_alpha, -INFINITY, 0.0f,
                           "values <= 0 (the logarithm of a decay in (0, 1])"));
        j->gates.log_alpha = t->log_alpha.data;
    }
    return LT_OK;
}

/* Backward into zeroed gradients, which become the outputs. */
static lt_status run_backward(tensors *t, job *j)
{
    const lt_attn_shape s = j->shape;
    size_t qk = (size_t)lt_npy_count(&t->q), vo = (size_t)lt_npy_count(&t->v);
    size_t pc = lt_attn_param_count(&j->attn), f = sizeof(float);
    LT_TRY(lt_mem_calloc((void **)&t->dq, qk * f, "query gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->dk, qk * f, "key gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->dv, vo * f, "value gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->d_params, pc * f, "projection gradients"));
    if (j->gates.beta != NULL) {
        LT_TRY(lt_mem_calloc((void **)&t->d_beta, lt_npy_count(&t->beta) * f, "beta gradient"));
        j->gates.d_beta = t->d_beta;
    }
    if (j->gates.log_alpha != NULL) {
        LT_TRY(lt_mem_calloc((void **)&t->d_log_alpha, lt_npy_count(&t->log_alpha) * f,
                             "log_alpha gradient"));
        j->gates.d_log_alpha = t->d_log_alpha;
    }
    LT_TRY(lt_attn_backward_gated(&j->attn, s, &j->gates, t->dq, t->dk, t->dv, t->d_params,
                                  t->workspace, t->dout.data, t->saved, t->q.data, j->keys,
                                  t->v.data, t->params));
    const long long qk_shape[4] = {s.B, s.H, s.N, s.D}, vo_shape[4] = {s.B, s.H, s.N, s.M};
    const long long ef_shape[2] = {j->config.proj_k, j->config.n_max};
    set_output(t, "dq.npy", t->dq, 4, qk_shape);
    set_output(t, "dk.npy", t->dk, 4, qk_shape);
    set_output(t, "dv.npy", t->dv, 4, vo_shape);
    set_output(t, "de.npy", t->d_params, 2, ef_shape);
    set_output(t, "df.npy", t->d_params + pc / 2, 2, ef_shape);
    set_output(t, "dbeta.npy", t->d_beta, t->beta.ndim, t->beta.shape);
    set_output(t, "dlog_alpha.npy", t->d_log_alpha, t->log_alpha.ndim, t->log_alpha.shape);
    return commit_outputs(t, &j->config);
}

/* The output, the parameters (linformer's E and F), saved activations and
 * workspace. */
static lt_status alloc_forward(tensors *t, const job *j)
{
    size_t vo = (size_t)lt_npy_count(&t->v), f = sizeof(float);
    size_t pc = lt_attn_param_count(&j->attn);
    LT_TRY(lt_mem_alloc((void **)&t->out, vo * f, "output"));
    LT_TRY(lt_mem_alloc((void **)&t->params, pc * f, "projections"));
    if (j->linformer) {
        memcpy(t->params, t->e.data, pc / 2 * f);
        memcpy(t->params + pc / 2, t->f.data, pc / 2 * f);
    }
    LT_TRY(lt_mem_alloc(&t->saved, lt_attn_saved_bytes(&j->attn, j->shape),
                        "saved activations"));
    return lt_mem_alloc(&t->workspace,
                        lt_attn_workspace_bytes(&j->attn, j->shape, lt_threads_get()),
                        "workspace");
}

static lt_status run(const attention_options *o, tensors *t)
{
    job j;
    memset(&j, 0, sizeof j);
    j.linformer = strcmp(o->variant, "linformer") == 0;
    lt_attn_caps caps;
    LT_TRY(lt_attn_variant_caps(o->variant, &caps));
    LT_TRY(check_flags(o, j.linformer, strcmp(o->variant, "lsh") == 0, caps.gates));
    const char *names[MAX_OUTPUTS];
    int output_count = output_names(o, j.linformer, caps.gates, names);
    LT_TRY(check_out(o, names, output_count));
    j.config = lt_attn_default_config(o->variant);
    j.config.causal = strcmp(o->causal_mode, "causal") == 0;
    j.config.eps = (float)o->eps;
    j.config.rounds = (int)o->rounds;
    j.config.buckets = (int)o->buckets;
    j.config.chunk = (int)o->chunk;
    LT_TRY(lt_attn_parse_feature_map(&j.config.feature_map, o->feature_map, "--feature-map"));
    LT_TRY(read_inputs(o, t, &j));
    LT_TRY(lt_attn_init(&j.attn, &j.config));
    LT_TRY(lt_attn_check_shape(&j.attn, j.shape));
    LT_TRY(read_gates(o, t, &j));
    LT_TRY(alloc_forward(t, &j));
    /* Every input is read and checked, and every output opened, before
     * anything is computed. */
    if (o->dout) {
        LT_TRY(read_tensor(&t->dout, o->dout, "--dout", 4, "(B, H, N, M)"));
        LT_TRY(same_dims(&t->dout, "--dout", &t->v, "--v", 4,
                         "the output gradient must have the output's shape (B, H, N, M)"));
    }
    LT_TRY(lt_outdir_open(&t->dir, o->out, 0, 0, o->overwrite, names, output_count, NULL, 0));
    for (int i = 0; i < output_count; i++)
        LT_TRY(open_output(t, names[i]));
    LT_TRY(lt_attn_forward_gated(&j.attn, j.shape, &j.gates, t->out, t->saved, t->workspace,
                                 t->q.data, j.keys, t->v.data, t->params));
    const long long out_shape[4] = {j.shape.B, j.shape.H, j.shape.N, j.shape.M};
    set_output(t, "out.npy", t->out, 4, out_shape);
    return o->dout ? run_backward(t, &j) : commit_outputs(t, &j.config);
}

static const char details[] =
    "Inputs may be float32 or float64 (C order, .npy version 1.0); outputs are float32.\n"
    "softmax: softmax(Q K^T / sqrt(D)) V. linear: phi(Q) (phi(K)^T V) / (phi(Q) . sum_j\n"
    "phi(K_j) + eps) with phi(x) = elu(x) + 1 (or relu; favor: FAVOR+ with 64 random\n"
    "features drawn from seed 0, layer 0; taylor: 1 + D + D^2 features, phi(q) . phi(k)\n"
    "= 1 + s + s^2/2 with s = q . k / sqrt(D)), prefix sums when causal. decay: causal\n"
    "linear attention whose state decays by RetNet's 1 - 2^(-5-h) per position in head h.\n"
    "linformer: softmax(Q (E K)^T / sqrt(D)) (F V) using the first N columns of E and F;\n"
    "it cannot be causal. lsh: Reformer's LSH attention, keys = Q scaled to unit length,\n"
    "--lsh-rounds hashings by random rotations drawn from --seed, softmax within chunks\n"
    "of --lsh-chunk sorted positions and the chunk before, without a query's own key unless\n"
    "it has no other; it does not read --k and its dk.npy is 0. delta: DeltaNet, the state\n"
    "S_t = S_{t-1} + beta_t (v_t - S_{t-1} k_t) k_t^T, out_t = S_t q_t, with q and k\n"
    "normalised to unit length inside; gated-delta: S_t = alpha_t S_{t-1} (I - beta_t k_t\n"
    "k_t^T) + beta_t v_t k_t^T, alpha_t = exp(log_alpha_t); gla: S_t = diag(alpha_t)\n"
    "S_{t-1} + k_t v_t^T, out_t = S_t^T q_t, alpha per key channel. The three are causal\n"
    "only (--causal causal) and read their gates from --beta and --log-alpha, which the\n"
    "others refuse. Writes OUT/out.npy; with --dout (dL/dout) backward runs too and\n"
    "writes OUT/dq.npy, dk.npy, dv.npy (dL/dQ, dL/dK, dL/dV), and where the variant has\n"
    "them de.npy, df.npy (linformer's E and F), dbeta.npy, dlog_alpha.npy (the gates).\n"
    "OUT is created when missing; a file of an earlier run there is refused (exit 2)\n"
    "before anything is read unless --overwrite, and an input there whatever the flags.";

static const lt_field_flag field_flags[] = {
    {"eps", "--eps"},           {"feature_map", "--feature-map"}, {"causal", "--causal"},
    {"rounds", "--lsh-rounds"}, {"buckets", "--lsh-buckets"},     {"chunk", "--lsh-chunk"},
    {NULL, NULL}};

int main(int argc, char **argv)
{
    lt_attn_config defaults = lt_attn_default_config("lsh");
    attention_options o = {.variant = "linear", .causal_mode = "noncausal", .eps = 1e-6,
                           .feature_map = "elu", .rounds = defaults.rounds,
                           .buckets = defaults.buckets, .chunk = defaults.chunk,
                           .out = "results/attention"};
    lt_common_defaults(&o.common);
    enum { OWN_FLAGS = 17 };
    lt_flag flags[OWN_FLAGS + LT_COMMON_FLAGS] = {
        {"--variant", LT_FLAG_CHOICE, &o.variant, NULL, "attention variant", 0, 0,
         "softmax|linear|linformer|lsh|decay|delta|gated-delta|gla", 0},
        lt_flag_causal(&o.causal_mode),
        {"--q", LT_FLAG_STRING, &o.q, "PATH", "queries .npy, (B, H, N, D)", 0, 0, NULL, 0},
        {"--k", LT_FLAG_STRING, &o.k, "PATH", "keys .npy, (B, H, N, D); lsh does not read it",
         0, 0, NULL, 0},
        {"--v", LT_FLAG_STRING, &o.v, "PATH", "values .npy, (B, H, N, M)", 0, 0, NULL, 0},
        {"--e", LT_FLAG_STRING, &o.e, "PATH", "Linformer key projection .npy, (k, N_max)", 0, 0,
         NULL, 0},
        {"--f", LT_FLAG_STRING, &o.f, "PATH", "Linformer value projection .npy, (k, N_max)", 0,
         0, NULL, 0},
        {"--dout", LT_FLAG_STRING, &o.dout, "PATH",
         "gradient of the loss w.r.t. the output, (B, H, N, M): runs backward and writes every "
         "gradient",
         0, 0, NULL, 0},
        {"--beta", LT_FLAG_STRING, &o.beta, "PATH",
         "delta and gated-delta: the step size per position and head .npy, (B, H, N) in [0, 1]",
         0, 0, NULL, 0},
        {"--log-alpha", LT_FLAG_STRING, &o.log_alpha, "PATH",
         "gated-delta: the log decay per position and head .npy, (B, H, N); gla: per key "
         "channel too, (B, H, N, D); each <= 0",
         0, 0, NULL, 0},
        lt_flag_out(&o.out, "out.npy, (B, H, N, M) float32, and with --dout the gradients "
                            "(dq.npy, dk.npy, dv.npy ...)"),
        lt_flag_overwrite(&o.overwrite),
        lt_flag_eps(&o.eps),
        lt_flag_feature_map(&o.feature_map),
        lt_flag_lsh_rounds(&o.rounds),
        lt_flag_lsh_buckets(&o.buckets),
        lt_flag_lsh_chunk(&o.chunk),
    };
    lt_common_flags(&flags[OWN_FLAGS], &o.common);
    lt_cli cli = {
        "ltbench attention",
        "Run one attention kernel on .npy inputs and write its output (and, with --dout, its\n"
        "gradients), to check it against NumPy, PyTorch or JAX.",
        details,
        /* threads, memory budget and seed (lsh's rotations): quiet means nothing here */
        flags, OWN_FLAGS + 3, NULL};
    int exit_now;
    int code = lt_program_parse(&cli, NULL, NULL, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    tensors t;
    memset(&t, 0, sizeof t);
    t.dir.lock_fd = -1; /* not held */
    lt_status status = run(&o, &t);
    release(&t);
    if (status != LT_OK)
        return lt_program_report(cli.program, status, field_flags);
    return 0;
}
