/* ltbench attention: run one attention kernel on the user's own .npy
 * tensors, so its outputs and gradients can be checked against another
 * framework. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn.h"
#include "core/mem.h"
#include "core/threads.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "experiment/program.h"

typedef struct attention_options {
    const char *variant;
    int causal;
    const char *q, *k, *v, *e, *f, *out, *dout, *dq, *dk, *dv, *de, *df;
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

/* An output file, opened before any work (so an unwritable path is found
 * first) and committed with all the others at the end, or none. */
typedef struct output {
    const char *flag, *path;
    lt_atomic_file file;
    const float *data;
    int ndim;
    long long shape[4];
} output;

enum { MAX_OUTPUTS = 6 };

typedef struct tensors {
    lt_npy q, k, v, e, f, dout;
    float *out, *params, *dq, *dk, *dv, *d_params;
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

static lt_status open_output(tensors *t, const char *flag, const char *path)
{
    if (path == NULL)
        return LT_OK;
    output *o = &t->outputs[t->output_count];
    memset(o, 0, sizeof *o);
    o->flag = flag;
    o->path = path;
    lt_status status = lt_atomic_open(&o->file, path);
    if (status != LT_OK)
        return lt_fail(status, "%s: %s", flag, lt_last_error());
    t->output_count++;
    return LT_OK;
}

static void set_output(tensors *t, const char *flag, const float *data, int ndim,
                       const long long *shape)
{
    for (int i = 0; i < t->output_count; i++)
        if (strcmp(t->outputs[i].flag, flag) == 0) {
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
                           o->flag, i, (double)o->data[i],
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
    lt_npy *arrays[] = {&t->q, &t->k, &t->v, &t->e, &t->f, &t->dout};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        lt_npy_free(arrays[i]);
    void *blocks[] = {t->out, t->params, t->dq, t->dk, t->dv, t->d_params, t->saved,
                      t->workspace};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        lt_mem_free(blocks[i]);
}

static lt_status check_flags(const attention_options *o, int linformer, int lsh)
{
    if (!o->q || !o->v || !o->out)
        return lt_fail(LT_E_USAGE, "--q, --v and --out are required");
    if (!o->k && !lsh)
        return lt_fail(LT_E_USAGE, "--k is required (only --variant lsh, whose keys are its "
                                   "normalised queries, runs without it)");
    if (linformer && (!o->e || !o->f))
        return lt_fail(LT_E_USAGE, "--variant linformer needs --e and --f (shape (k, N_max))");
    if (!linformer && (o->e || o->f || o->de || o->df))
        return lt_fail(LT_E_USAGE, "--e, --f, --de and --df belong to --variant linformer only");
    if (!o->dout && (o->dq || o->dk || o->dv || o->de || o->df))
        return lt_fail(LT_E_USAGE, "gradient outputs (--dq, --dk, --dv, --de, --df) need --dout");
    if (o->dout && !(o->dq || o->dk || o->dv || o->de || o->df))
        return lt_fail(LT_E_USAGE, "--dout given but no gradient to write (--dq, --dk, --dv...)");
    return LT_OK;
}

/* ---- outputs that would replace an input, each other or an earlier file ---- */

/* Refuses, before anything is read or written, an output path that names
 * an input's file (naming the input's flag) or another output's, then one
 * that exists unless --overwrite (lt_output_check, the rule of every
 * program's outputs). */
static lt_status check_output_paths(const attention_options *o)
{
    const char *const in_flags[] = {"--q", "--k", "--v", "--e", "--f", "--dout"};
    const char *const in_paths[] = {o->q, o->k, o->v, o->e, o->f, o->dout};
    const char *const out_flags[] = {"--out", "--dq", "--dk", "--dv", "--de", "--df"};
    const char *const out_paths[] = {o->out, o->dq, o->dk, o->dv, o->de, o->df};
    enum { INPUTS = 6, OUTPUTS = 6 };
    for (int i = 0; i < OUTPUTS; i++) {
        if (out_paths[i] == NULL)
            continue;
        for (int j = 0; j < INPUTS; j++)
            if (in_paths[j] != NULL && lt_same_file(out_paths[i], in_paths[j]))
                return lt_fail(LT_E_USAGE, "%s %s: the same file as the input %s %s; it would "
                                           "be overwritten, so write outputs elsewhere",
                               out_flags[i], out_paths[i], in_flags[j], in_paths[j]);
        for (int j = 0; j < i; j++)
            if (out_paths[j] != NULL && lt_same_file(out_paths[i], out_paths[j]))
                return lt_fail(LT_E_USAGE, "%s %s: the same file as %s %s; give each output "
                                           "its own path",
                               out_flags[i], out_paths[i], out_flags[j], out_paths[j]);
        LT_TRY(lt_output_check(out_flags[i], out_paths[i], o->overwrite, 0, in_paths, INPUTS));
    }
    return LT_OK;
}

static lt_status run(const attention_options *o, tensors *t)
{
    int linformer = strcmp(o->variant, "linformer") == 0, lsh = strcmp(o->variant, "lsh") == 0;
    LT_TRY(check_flags(o, linformer, lsh));
    LT_TRY(check_output_paths(o));
    lt_attn_config config = lt_attn_default_config(o->variant);
    config.causal = o->causal;
    config.eps = (float)o->eps;
    config.rounds = (int)o->rounds;
    config.buckets = (int)o->buckets;
    config.chunk = (int)o->chunk;
    LT_TRY(lt_attn_parse_feature_map(&config.feature_map, o->feature_map, "--feature-map"));

    LT_TRY(read_tensor(&t->q, o->q, "--q", 4, "(B, H, N, D)"));
    if (o->k)
        LT_TRY(read_tensor(&t->k, o->k, "--k", 4, "(B, H, N, D)"));
    LT_TRY(read_tensor(&t->v, o->v, "--v", 4, "(B, H, N, M)"));
    LT_TRY(check_int_dims(&t->q, "--q"));
    LT_TRY(check_int_dims(&t->v, "--v"));
    if (o->k)
        LT_TRY(same_dims(&t->k, "--k", &t->q, "--q", 4, "keys must match queries (B, H, N, D)"));
    /* lsh never reads k: without --k the queries stand in for the buffer */
    const float *keys = o->k ? t->k.data : t->q.data;
    LT_TRY(same_dims(&t->v, "--v", &t->q, "--q", 3,
                     "values must share (B, H, N) with the queries"));
    lt_attn_shape shape = {.B = (int)t->q.shape[0], .H = (int)t->q.shape[1],
                           .N = (int)t->q.shape[2], .D = (int)t->q.shape[3],
                           .M = (int)t->v.shape[3], .seed = (uint64_t)o->common.seed};
    if (linformer) {
        LT_TRY(read_tensor(&t->e, o->e, "--e", 2, "(k, N_max)"));
        LT_TRY(read_tensor(&t->f, o->f, "--f", 2, "(k, N_max)"));
        LT_TRY(check_int_dims(&t->e, "--e"));
        LT_TRY(same_dims(&t->f, "--f", &t->e, "--e", 2, "E and F must have the same shape"));
        config.proj_k = (int)t->e.shape[0];
        config.n_max = (int)t->e.shape[1];
        if (config.n_max < shape.N)
            return lt_fail(LT_E_INPUT, "--e %s: has %d columns but the sequence length is %d; "
                                       "expected (k, N_max) with N_max >= N",
                           o->e, config.n_max, shape.N);
    }
    lt_attn attn;
    LT_TRY(lt_attn_init(&attn, &config));
    LT_TRY(lt_attn_check_shape(&attn, shape));

    size_t qk = (size_t)lt_npy_count(&t->q), vo = (size_t)lt_npy_count(&t->v);
    size_t pc = lt_attn_param_count(&attn), f = sizeof(float);
    int threads = lt_threads_get();
    LT_TRY(lt_mem_alloc((void **)&t->out, vo * f, "output"));
    LT_TRY(lt_mem_alloc((void **)&t->params, pc * f, "projections"));
    if (linformer) {
        size_t half = pc / 2;
        memcpy(t->params, t->e.data, half * f);
        memcpy(t->params + half, t->f.data, half * f);
    }
    LT_TRY(lt_mem_alloc(&t->saved, lt_attn_saved_bytes(&attn, shape), "saved activations"));
    LT_TRY(lt_mem_alloc(&t->workspace, lt_attn_workspace_bytes(&attn, shape, threads),
                        "workspace"));
    /* Every input is read and checked, and every output opened, before
     * anything is computed. */
    if (o->dout) {
        LT_TRY(read_tensor(&t->dout, o->dout, "--dout", 4, "(B, H, N, M)"));
        LT_TRY(same_dims(&t->dout, "--dout", &t->v, "--v", 4,
                         "the output gradient must have the output's shape (B, H, N, M)"));
    }
    const char *const out_flags[MAX_OUTPUTS] = {"--out", "--dq", "--dk", "--dv", "--de", "--df"};
    const char *const out_paths[MAX_OUTPUTS] = {o->out, o->dq, o->dk, o->dv, o->de, o->df};
    for (int i = 0; i < MAX_OUTPUTS; i++)
        LT_TRY(open_output(t, out_flags[i], out_paths[i]));
    LT_TRY(lt_attn_forward(&attn, shape, t->out, t->saved, t->workspace, t->q.data, keys,
                           t->v.data, t->params));
    const long long out_shape[4] = {shape.B, shape.H, shape.N, shape.M};
    set_output(t, "--out", t->out, 4, out_shape);
    if (!o->dout)
        return commit_outputs(t, &config);

    LT_TRY(lt_mem_calloc((void **)&t->dq, qk * f, "query gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->dk, qk * f, "key gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->dv, vo * f, "value gradients"));
    LT_TRY(lt_mem_calloc((void **)&t->d_params, pc * f, "projection gradients"));
    LT_TRY(lt_attn_backward(&attn, shape, t->dq, t->dk, t->dv, t->d_params, t->workspace,
                            t->dout.data, t->saved, t->q.data, keys, t->v.data, t->params));
    const long long qk_shape[4] = {shape.B, shape.H, shape.N, shape.D};
    const long long ef_shape[2] = {config.proj_k, config.n_max};
    set_output(t, "--dq", t->dq, 4, qk_shape);
    set_output(t, "--dk", t->dk, 4, qk_shape);
    set_output(t, "--dv", t->dv, 4, out_shape);
    set_output(t, "--de", t->d_params, 2, ef_shape);
    set_output(t, "--df", t->d_params + pc / 2, 2, ef_shape);
    return commit_outputs(t, &config);
}

static const lt_field_flag field_flags[] = {
    {"eps", "--eps"},       {"feature_map", "--feature-map"}, {"causal", "--causal"},
    {"rounds", "--rounds"}, {"buckets", "--buckets"},         {"chunk", "--chunk"},
    {NULL, NULL}};

int main(int argc, char **argv)
{
    lt_attn_config defaults = lt_attn_default_config("lsh");
    attention_options o = {.variant = "linear", .eps = 1e-6, .feature_map = "elu",
                           .rounds = defaults.rounds, .buckets = defaults.buckets,
                           .chunk = defaults.chunk};
    lt_common_defaults(&o.common);
    enum { OWN_FLAGS = 20 };
    lt_flag flags[OWN_FLAGS + LT_COMMON_FLAGS] = {
        {"--variant", LT_FLAG_CHOICE, &o.variant, NULL, "attention variant", 0, 0,
         "softmax|linear|linformer|lsh|decay", 0},
        {"--causal", LT_FLAG_BOOL, &o.causal, NULL, "position i attends to positions <= i only",
         0, 0, NULL, 0},
        {"--q", LT_FLAG_STRING, &o.q, "PATH", "queries .npy, (B, H, N, D)", 0, 0, NULL, 0},
        {"--k", LT_FLAG_STRING, &o.k, "PATH", "keys .npy, (B, H, N, D); lsh does not read it",
         0, 0, NULL, 0},
        {"--v", LT_FLAG_STRING, &o.v, "PATH", "values .npy, (B, H, N, M)", 0, 0, NULL, 0},
        {"--e", LT_FLAG_STRING, &o.e, "PATH", "Linformer key projection .npy, (k, N_max)", 0, 0,
         NULL, 0},
        {"--f", LT_FLAG_STRING, &o.f, "PATH", "Linformer value projection .npy, (k, N_max)", 0,
         0, NULL, 0},
        {"--out", LT_FLAG_STRING, &o.out, "PATH", "output .npy to write, (B, H, N, M) float32",
         0, 0, NULL, 0},
        {"--dout", LT_FLAG_STRING, &o.dout, "PATH",
         "gradient of the loss w.r.t. the output, (B, H, N, M); runs backward", 0, 0, NULL, 0},
        {"--dq", LT_FLAG_STRING, &o.dq, "PATH", "write the query gradient here", 0, 0, NULL, 0},
        {"--dk", LT_FLAG_STRING, &o.dk, "PATH", "write the key gradient here", 0, 0, NULL, 0},
        {"--dv", LT_FLAG_STRING, &o.dv, "PATH", "write the value gradient here", 0, 0, NULL, 0},
        {"--de", LT_FLAG_STRING, &o.de, "PATH", "write the gradient of E here (linformer)", 0, 0,
         NULL, 0},
        {"--df", LT_FLAG_STRING, &o.df, "PATH", "write the gradient of F here (linformer)", 0, 0,
         NULL, 0},
        {"--overwrite", LT_FLAG_BOOL, &o.overwrite, NULL,
         "replace the output files if they exist (an earlier run's are kept otherwise)", 0, 0,
         NULL, 0},
        {"--eps", LT_FLAG_DOUBLE, &o.eps, "EPS", "linear attention normaliser epsilon", 0, 1,
         NULL, 0},
        {"--feature-map", LT_FLAG_CHOICE, &o.feature_map, NULL,
         "feature map phi of linear and decay attention", 0, 0, "elu|relu|favor|taylor", 0},
        {"--rounds", LT_FLAG_INT, &o.rounds, "R", "lsh hashing rounds", 1, 1 << 20, NULL, 0},
        {"--buckets", LT_FLAG_INT, &o.buckets, "B",
         "lsh buckets a round: 0 = 2 max(1, N / chunk) as Reformer derives them, 1, or even", 0,
         1 << 30, NULL, 0},
        {"--chunk", LT_FLAG_INT, &o.chunk, "C", "lsh sorted positions a chunk", 1, 1 << 30, NULL,
         0},
    };
    lt_common_flags(&flags[OWN_FLAGS], &o.common);
    lt_cli cli = {
        "ltbench attention",
        "Run one attention kernel on .npy inputs and write its output (and, with --dout, its\n"
        "gradients), to check it against NumPy, PyTorch or JAX.",
        "Inputs may be float32 or float64 (C order, .npy version 1.0); outputs are float32.\n"
        "softmax: softmax(Q K^T / sqrt(D)) V. linear: phi(Q) (phi(K)^T V) / (phi(Q) . sum_j\n"
        "phi(K_j) + eps) with phi(x) = elu(x) + 1 (or relu; favor: FAVOR+ with 64 random\n"
        "features drawn from seed 0, layer 0; taylor: 1 + D + D^2 features, phi(q) . phi(k)\n"
        "= 1 + s + s^2/2 with s = q . k / sqrt(D)), prefix sums when causal. decay: causal\n"
        "linear attention whose state decays by RetNet's 1 - 2^(-5-h) per position in head h.\n"
        "linformer: softmax(Q (E K)^T / sqrt(D)) (F V) using the first N columns of E and F;\n"
        "it cannot be causal. lsh: Reformer's LSH attention, keys = Q scaled to unit length,\n"
        "--rounds hashings by random rotations drawn from --seed, softmax within chunks of\n"
        "--chunk sorted positions and the chunk before, without a query's own key unless\n"
        "it has no other; it does not read --k and its --dk is 0. Backward gives dL/dQ,\n"
        "dL/dK, dL/dV (and dL/dE, dL/dF) for dL/dout = --dout. Missing folders of output\n"
        "paths are created. An output that exists is refused (exit 2) before anything is\n"
        "read unless --overwrite, and one that is an input or another output whatever\n"
        "the flags.",
        /* threads, memory budget and seed (lsh's rotations): quiet means nothing here */
        flags, OWN_FLAGS + 3};
    int exit_now;
    int code = lt_program_parse(&cli, NULL, NULL, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    tensors t;
    memset(&t, 0, sizeof t);
    lt_status status = run(&o, &t);
    release(&t);
    if (status != LT_OK)
        return lt_program_report(cli.program, status, field_flags);
    return 0;
}
