/* ltbench scaling: the paper's Figure 1. Attention forward and
 * forward+backward time and peak memory against sequence length, for each
 * variant, causal and not, with the batch scaled inversely with N and
 * results reported per sample. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn/attn.h"
#include "common.h"
#include "harness.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/threads.h"
#include "core/timer.h"
#include "io/csv.h"

enum { MAX_VARIANTS = 4, MAX_KERNELS = 8, MAX_REPEATS = 100,
       MAX_CASES = MAX_VARIANTS * 2 * MAX_KERNELS * 25 };

typedef struct scaling_options {
    const char *variants;
    const char *causal_mode;
    long min_log2, max_log2;
    long heads, head_dim, value_dim;
    long tokens, batch;
    long proj_k;
    const char *feature_map;
    double eps;
    long warmup, repeats;
    double max_case_seconds;
    const char *kernel, *kernels;
    const char *out;
    bench_common common;
} scaling_options;

/* One measured (or refused) case: a row of the CSV and of the table. */
typedef struct scaling_case {
    const char *variant;
    const char *kernel;
    const char *status; /* ok, skipped-budget, skipped-time, refused */
    char note[256];
    int causal, N, B, k;
    int is_default;     /* the variant's default kernel for this causal mode */
    size_t planned_bytes, peak_bytes;
    lt_summary fwd, fwd_bwd;
    double flops_fwd, flops_bwd;          /* the paper's model of the method */
    double performed_fwd, performed_bwd;  /* what this kernel actually computes */
} scaling_case;

/* The machine's SGEMM rate, measured once per run: the roof for GFLOP/s. */
static int roof_n = 1024;
static double roof_gflops, roof_gflops_1t;

/* Buffers of one case, all from the tracked allocator. */
typedef struct case_buffers {
    float *q, *k, *v, *out, *d_out, *dq, *dk, *dv, *params, *d_params;
    void *saved, *workspace;
} case_buffers;

typedef struct timed_case {
    const lt_attn *attn;
    lt_attn_shape shape;
    case_buffers *buf;
    size_t q_count, v_count, param_count;
} timed_case;

static size_t case_plan(const lt_attn *attn, lt_attn_shape s, int threads)
{
    size_t qk = (size_t)s.B * s.H * s.N * s.D * sizeof(float);
    size_t vo = (size_t)s.B * s.H * s.N * s.M * sizeof(float);
    size_t params = lt_attn_param_count(attn) * sizeof(float);
    return 4 * lt_mem_rounded(qk) + 5 * lt_mem_rounded(vo) + 2 * lt_mem_rounded(params) +
           lt_mem_rounded(lt_attn_saved_bytes(attn, s)) +
           lt_mem_rounded(lt_attn_workspace_bytes(attn, s, threads));
}

static lt_status case_alloc(case_buffers *b, const lt_attn *attn, lt_attn_shape s, int threads)
{
    size_t qk = (size_t)s.B * s.H * s.N * s.D * sizeof(float);
    size_t vo = (size_t)s.B * s.H * s.N * s.M * sizeof(float);
    size_t params = lt_attn_param_count(attn) * sizeof(float);
    memset(b, 0, sizeof *b);
    LT_TRY(lt_mem_alloc((void **)&b->q, qk, "queries"));
    LT_TRY(lt_mem_alloc((void **)&b->k, qk, "keys"));
    LT_TRY(lt_mem_alloc((void **)&b->v, vo, "values"));
    LT_TRY(lt_mem_alloc((void **)&b->out, vo, "outputs"));
    LT_TRY(lt_mem_alloc((void **)&b->d_out, vo, "output gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dq, qk, "query gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dk, qk, "key gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->dv, vo, "value gradients"));
    LT_TRY(lt_mem_alloc((void **)&b->params, params, "attention parameters"));
    LT_TRY(lt_mem_alloc((void **)&b->d_params, params, "attention parameter gradients"));
    LT_TRY(lt_mem_alloc(&b->saved, lt_attn_saved_bytes(attn, s), "saved activations"));
    LT_TRY(lt_mem_alloc(&b->workspace, lt_attn_workspace_bytes(attn, s, threads), "workspace"));
    return LT_OK;
}

static void case_free(case_buffers *b)
{
    void *all[] = {b->q, b->k, b->v, b->out, b->d_out, b->dq, b->dk, b->dv,
                   b->params, b->d_params, b->saved, b->workspace};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        lt_mem_free(all[i]);
    memset(b, 0, sizeof *b);
}

static lt_status run_forward(void *ctx)
{
    timed_case *c = ctx;
    return lt_attn_forward(c->attn, c->shape, c->buf->out, c->buf->saved, c->buf->workspace,
                           c->buf->q, c->buf->k, c->buf->v, c->buf->params);
}

static lt_status run_forward_backward(void *ctx)
{
    timed_case *c = ctx;
    case_buffers *b = c->buf;
    LT_TRY(run_forward(ctx));
    /* A training step zeroes the gradients once, then backward adds. */
    memset(b->dq, 0, c->q_count * sizeof(float));
    memset(b->dk, 0, c->q_count * sizeof(float));
    memset(b->dv, 0, c->v_count * sizeof(float));
    memset(b->d_params, 0, c->param_count * sizeof(float));
    return lt_attn_backward(c->attn, c->shape, b->dq, b->dk, b->dv, b->d_params, b->workspace,
                            b->d_out, b->saved, b->q, b->k, b->v, b->params);
}

/* Measures one case. Failures of the kernel itself stop the run. */
static lt_status measure_case(scaling_case *row, const lt_attn *attn, lt_attn_shape shape,
                              const scaling_options *opt, uint64_t stream, double *samples)
{
    int threads = lt_threads_get();
    lt_mem_reset_peak();
    size_t base = lt_mem_current();
    case_buffers buf;
    lt_status status = case_alloc(&buf, attn, shape, threads);
    if (status == LT_OK) {
        timed_case c = {attn, shape, &buf,
                        (size_t)shape.B * shape.H * shape.N * shape.D,
                        (size_t)shape.B * shape.H * shape.N * shape.M,
                        lt_attn_param_count(attn)};
        lt_rng rng;
        lt_rng_seed(&rng, (uint64_t)opt->common.seed, stream);
        lt_rng_fill_normal(&rng, buf.q, (long)c.q_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.k, (long)c.q_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.v, (long)c.v_count, 1.0f);
        lt_rng_fill_normal(&rng, buf.d_out, (long)c.v_count, 1.0f);
        lt_attn_init_params(attn, buf.params, (unsigned long long)opt->common.seed);
        status = lt_time_repeat(&row->fwd, samples, run_forward, &c, (int)opt->warmup,
                                (int)opt->repeats);
        if (status == LT_OK)
            status = lt_time_repeat(&row->fwd_bwd, samples, run_forward_backward, &c,
                                    (int)opt->warmup, (int)opt->repeats);
    }
    row->peak_bytes = lt_mem_peak() - base;
    case_free(&buf);
    return status;
}

static void init_row(scaling_case *row, const char *variant, const char *kernel, int causal,
                     lt_attn_shape s, int k)
{
    memset(row, 0, sizeof *row);
    row->variant = variant;
    row->kernel = kernel;
    row->causal = causal;
    row->N = s.N;
    row->B = s.B;
    row->k = k;
    row->fwd = row->fwd_bwd = (lt_summary){NAN, NAN, NAN, 0};
}

static const char *const columns[] = {
    "experiment", "variant", "kernel", "causal", "N", "batch", "heads", "head_dim",
    "value_dim", "proj_k", "feature_map", "threads", "seed", "warmup", "repeats", "status",
    "fwd_median_s", "fwd_min_s", "fwd_max_s", "fwd_bwd_median_s", "fwd_bwd_min_s",
    "fwd_bwd_max_s", "fwd_per_sample_s", "fwd_bwd_per_sample_s", "peak_bytes",
    "peak_bytes_per_sample", "planned_bytes", "fwd_gflop_per_s", "fwd_bwd_gflop_per_s",
    "flop_model_fwd", "flop_model_bwd", "flops_performed_fwd", "flops_performed_bwd",
    "fwd_bwd_performed_gflop_per_s", "sgemm_n", "sgemm_gflop_per_s", "sgemm_1thread_gflop_per_s",
    "fraction_of_sgemm", "note"};

static lt_status add_row(bench_table *t, const scaling_options *opt, const scaling_case *r)
{
    double per = 1.0 / r->B;
    bench_row_begin(t);
    bench_set_str(t, "experiment", "scaling");
    bench_set_str(t, "variant", r->variant);
    bench_set_str(t, "kernel", r->kernel);
    bench_set_int(t, "causal", r->causal);
    bench_set_int(t, "N", r->N);
    bench_set_int(t, "batch", r->B);
    bench_set_int(t, "heads", opt->heads);
    bench_set_int(t, "head_dim", opt->head_dim);
    bench_set_int(t, "value_dim", opt->value_dim);
    bench_set_int(t, "proj_k", r->k);
    bench_set_str(t, "feature_map", opt->feature_map);
    bench_set_int(t, "threads", lt_threads_get());
    bench_set_int(t, "seed", opt->common.seed);
    bench_set_int(t, "warmup", opt->warmup);
    bench_set_int(t, "repeats", opt->repeats);
    bench_set_str(t, "status", r->status);
    bench_set_num(t, "fwd_median_s", r->fwd.median);
    bench_set_num(t, "fwd_min_s", r->fwd.min);
    bench_set_num(t, "fwd_max_s", r->fwd.max);
    bench_set_num(t, "fwd_bwd_median_s", r->fwd_bwd.median);
    bench_set_num(t, "fwd_bwd_min_s", r->fwd_bwd.min);
    bench_set_num(t, "fwd_bwd_max_s", r->fwd_bwd.max);
    bench_set_num(t, "fwd_per_sample_s", r->fwd.median * per);
    bench_set_num(t, "fwd_bwd_per_sample_s", r->fwd_bwd.median * per);
    bench_set_int(t, "peak_bytes", (long long)r->peak_bytes);
    bench_set_num(t, "peak_bytes_per_sample", (double)r->peak_bytes * per);
    bench_set_int(t, "planned_bytes", (long long)r->planned_bytes);
    bench_set_num(t, "fwd_gflop_per_s", r->flops_fwd / r->fwd.median * 1e-9);
    bench_set_num(t, "fwd_bwd_gflop_per_s",
                  (r->flops_fwd + r->flops_bwd) / r->fwd_bwd.median * 1e-9);
    bench_set_num(t, "flop_model_fwd", r->flops_fwd);
    bench_set_num(t, "flop_model_bwd", r->flops_bwd);
    bench_set_num(t, "flops_performed_fwd", r->performed_fwd);
    bench_set_num(t, "flops_performed_bwd", r->performed_bwd);
    double performed = (r->performed_fwd + r->performed_bwd) / r->fwd_bwd.median * 1e-9;
    bench_set_num(t, "fwd_bwd_performed_gflop_per_s", performed);
    bench_set_int(t, "sgemm_n", roof_n);
    bench_set_num(t, "sgemm_gflop_per_s", roof_gflops);
    bench_set_num(t, "sgemm_1thread_gflop_per_s", roof_gflops_1t);
    bench_set_num(t, "fraction_of_sgemm", performed / roof_gflops);
    bench_set_str(t, "note", r->note);
    return bench_row_end(t);
}

static void print_table(const scaling_case *rows, int count)
{
    printf("\n%-9s %-6s %6s %5s  %12s %14s %13s %9s %6s  %s\n", "variant", "causal", "N",
           "batch", "fwd ms/smpl", "fwd+bwd ms/smpl", "peak MiB/smpl", "GFLOP/s", "roof%",
           "kernel / status");
    for (int i = 0; i < count; i++) {
        const scaling_case *r = &rows[i];
        /* A refusal does not depend on N: say it once per variant and mask. */
        if (strcmp(r->status, "refused") == 0) {
            if (i > 0 && strcmp(rows[i - 1].status, "refused") == 0 &&
                rows[i - 1].variant == r->variant && rows[i - 1].causal == r->causal)
                continue;
            printf("%-9s %-6s %6s %5s  refused for every N: %s\n", r->variant,
                   r->causal ? "yes" : "no", "all", "-", r->note);
            continue;
        }
        if (strcmp(r->status, "ok") == 0)
            printf("%-9s %-6s %6d %5d  %12.3f %14.3f %13.2f %9.2f %6.1f  %s\n", r->variant,
                   r->causal ? "yes" : "no", r->N, r->B, 1e3 * r->fwd.median / r->B,
                   1e3 * r->fwd_bwd.median / r->B, (double)r->peak_bytes / r->B / 1048576.0,
                   (r->flops_fwd + r->flops_bwd) / r->fwd_bwd.median * 1e-9,
                   100 * (r->performed_fwd + r->performed_bwd) / r->fwd_bwd.median * 1e-9 /
                       roof_gflops,
                   r->kernel);
        else
            printf("%-9s %-6s %6d %5d  %12s %14s %13s %9s  %s %s: %s\n", r->variant,
                   r->causal ? "yes" : "no", r->N, r->B, "-", "-", "-", "-", r->kernel,
                   r->status, r->note);
    }
}

/* For each causal mode, the smallest N from which linear's fwd+bwd time per
 * sample beats softmax's at every measured larger N (default kernels). */
static void print_crossover(const scaling_case *rows, int count)
{
    for (int causal = 0; causal <= 1; causal++) {
        int crossover = -1;
        for (int i = 0; i < count; i++) {
            const scaling_case *lin = &rows[i];
            if (strcmp(lin->variant, "linear") || lin->causal != causal ||
                strcmp(lin->status, "ok") || !lin->is_default)
                continue;
            for (int j = 0; j < count; j++) {
                const scaling_case *soft = &rows[j];
                if (strcmp(soft->variant, "softmax") || soft->causal != causal ||
                    soft->N != lin->N || strcmp(soft->status, "ok") || !soft->is_default)
                    continue;
                int linear_wins = lin->fwd_bwd.median / lin->B < soft->fwd_bwd.median / soft->B;
                if (linear_wins && crossover < 0)
                    crossover = lin->N;
                else if (!linear_wins)
                    crossover = -1;
            }
        }
        if (crossover > 0)
            printf("%s: linear is faster than softmax (fwd+bwd per sample) from N = %d on\n",
                   causal ? "causal" : "non-causal", crossover);
    }
}

/* The kernels a (variant, causal) pair is measured with: every one that
 * serves it (--kernels all), or the one --kernel picks (else the default). */
static int kernels_to_run(const scaling_options *opt, const char *const *variants, int count,
                          const char *variant, int causal, const char **out, lt_status *status)
{
    *status = LT_OK;
    if (strcmp(opt->kernels, "all") == 0) {
        int n = 0;
        const char *name;
        while (n < MAX_KERNELS && (name = lt_attn_kernel_at(variant, causal, n)) != NULL)
            out[n++] = name;
        return n > 0 ? n : (out[0] = NULL, 1);
    }
    *status = bench_kernel_for(opt->kernel, variants, count, causal, variant, &out[0]);
    /* Where the materialised softmax (the paper's baseline) no longer fits
     * the budget or the time limit, its curve goes on with the tiled kernel,
     * each row naming the kernel that ran. */
    if (*status == LT_OK && out[0] == NULL && strcmp(opt->kernel, "default") == 0 &&
        strcmp(variant, "softmax") == 0) {
        out[1] = "softmax-tiled";
        return 2;
    }
    return 1;
}

/* The kernel that continues a skipped default one (see kernels_to_run). */
static int is_continuation(const char *kernel)
{
    return kernel != NULL && strcmp(kernel, "softmax-tiled") == 0;
}

static const bench_field_flag field_flags[] = {
    {"eps", "--eps"}, {"feature_map", "--feature-map"}, {"proj_k", "--proj-k"},
    {"kernel", "--kernel"}, {NULL, NULL}};

/* Splits --out into its folder and file name for the run checks. */
static void split_path(const char *path, char *dir, size_t dir_size, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, dir_size, ".");
        *name = path;
    } else {
        snprintf(dir, dir_size, "%.*s", (int)(slash - path), path);
        *name = slash + 1;
    }
}

int main(int argc, char **argv)
{
    scaling_options opt = {
        .variants = "softmax,linear,linformer", .causal_mode = "both",
        .min_log2 = 9, .max_log2 = 16, .heads = 8, .head_dim = 64, .value_dim = 0,
        .tokens = 4096, .batch = 0, .proj_k = 256, .feature_map = "elu", .eps = 1e-6,
        .warmup = 1, .repeats = 3, .max_case_seconds = 150, .kernel = "default",
        .kernels = "default", .out = "results/scaling/scaling.csv"};
    bench_common_defaults(&opt.common);
    enum { OWN_FLAGS = 18 };
    lt_flag flags[OWN_FLAGS + BENCH_COMMON_FLAGS] = {
        {"--variants", LT_FLAG_STRING, &opt.variants, "LIST",
         "comma-separated attention variants (softmax, linear, linformer, decay)", 0, 0, NULL, 0},
        {"--causal", LT_FLAG_CHOICE, &opt.causal_mode, NULL,
         "which masking to measure", 0, 0, "both|causal|noncausal", 0},
        {"--kernel", LT_FLAG_STRING, &opt.kernel, "NAME",
         "kernel for the variant that has it (the others keep their defaults); it must serve "
         "every --causal mode measured", 0, 0, NULL, 0},
        {"--kernels", LT_FLAG_CHOICE, &opt.kernels, NULL,
         "all: time every kernel of each variant side by side", 0, 0, "default|all", 0},
        {"--min-log2", LT_FLAG_INT, &opt.min_log2, "E", "smallest N is 2^E", 0, 24, NULL, 0},
        {"--max-log2", LT_FLAG_INT, &opt.max_log2, "E", "largest N is 2^E", 0, 24, NULL, 0},
        {"--heads", LT_FLAG_INT, &opt.heads, "H", "attention heads", 1, 1024, NULL, 0},
        {"--head-dim", LT_FLAG_INT, &opt.head_dim, "D", "query/key dimension per head", 1, 4096,
         NULL, 0},
        {"--value-dim", LT_FLAG_INT, &opt.value_dim, "M",
         "value dimension per head; 0 = same as --head-dim", 0, 4096, NULL, 0},
        {"--tokens", LT_FLAG_INT, &opt.tokens, "T",
         "batch policy: batch = max(1, T / N), inversely with N as in the paper", 1, 1 << 30,
         NULL, 0},
        {"--batch", LT_FLAG_INT, &opt.batch, "B", "fixed batch for every N; 0 = use --tokens", 0,
         1 << 20, NULL, 0},
        {"--proj-k", LT_FLAG_INT, &opt.proj_k, "K", "Linformer projected length (at most N)", 1,
         1 << 20, NULL, 0},
        {"--feature-map", LT_FLAG_CHOICE, &opt.feature_map, NULL,
         "feature map of linear and decay attention (favor: 64 random features)", 0, 0,
         "elu|relu|favor|taylor", 0},
        {"--eps", LT_FLAG_DOUBLE, &opt.eps, "EPS", "linear attention normaliser epsilon", 0, 1,
         NULL, 0},
        {"--warmup", LT_FLAG_INT, &opt.warmup, "W", "untimed runs before timing", 0, 100, NULL,
         0},
        {"--repeats", LT_FLAG_INT, &opt.repeats, "R", "timed runs (median, min, max reported)",
         1, MAX_REPEATS, NULL, 0},
        {"--max-case-seconds", LT_FLAG_DOUBLE, &opt.max_case_seconds, "S",
         "skip a case whose time, extrapolated from the previous N by the FLOP model, "
         "exceeds S seconds in all", 0.001, 1e7, NULL, 0},
        {"--out", LT_FLAG_STRING, &opt.out, "PATH",
         "CSV to write (PATH.partial holds the rows while running)", 0, 0, NULL, 0},
    };
    bench_common_flags(&flags[OWN_FLAGS], &opt.common);
    lt_cli cli = {
        "ltbench scaling",
        "Attention time and peak memory against sequence length (the paper's Figure 1).",
        "For N = 2^min .. 2^max, each variant runs forward and forward+backward on random\n"
        "inputs of shape (batch, heads, N, dim); after --warmup untimed runs, --repeats timed\n"
        "runs give median/min/max seconds. Peak bytes are the tracked allocator's peak over\n"
        "the case's own buffers (inputs, outputs, gradients, saved activations, workspace).\n"
        "Time and bytes are also reported per sample (divided by the batch). A case whose\n"
        "planned bytes exceed --mem-budget is recorded as skipped-budget with the bytes it\n"
        "would need; Linformer is not causal and its causal rows are recorded as refused,\n"
        "as are decay's non-causal rows (decayed linear attention is causal only).\n"
        "From the N at which softmax-gemm (materialised N x N, the paper's baseline) is\n"
        "skipped, softmax goes on with softmax-tiled (O(N) memory) in rows of its own.\n"
        "FLOP model: see lt_attn_flops (src/attn); GFLOP/s = model FLOPs / median time.\n"
        "Roofline: the SGEMM rate of a 1024^3 product (smaller if the budget says so) is\n"
        "measured once per run (on the run's\n"
        "threads and on one); roof% (CSV fraction_of_sgemm) = the FLOPs the kernel actually\n"
        "performs (lt_attn_flops_performed, e.g. the chunked causal kernel's extra\n"
        "intra-chunk products) per second over that rate.\n"
        "Kernels: softmax-gemm (materialised, the default), softmax-tiled (online softmax,\n"
        "O(N) memory), softmax-reference; linear-gemm\n"
        "(non-causal), linear-causal-chunked (causal default), linear-causal-prefix,\n"
        "linear-reference; linformer-gemm; decay-causal-chunked (default),\n"
        "decay-causal-prefix, decay-reference (decay: RetNet's per-head gammas).\n"
        "Feature maps: elu (elu + 1, the paper's), relu, favor (FAVOR+ positive random\n"
        "features, drawn from --seed), taylor (Based's 1 + s + s^2/2, 1 + D + D^2 features,\n"
        "D at most 64). Ctrl-C stops after the current case and writes the rows so far\n"
        "(exit status 130).",
        flags, OWN_FLAGS + BENCH_COMMON_FLAGS};
    int exit_now;
    int code = bench_parse(&cli, &opt.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    lt_status status = LT_OK;
    if (opt.min_log2 > opt.max_log2)
        status = lt_fail(LT_E_USAGE, "--min-log2 (%ld) must not exceed --max-log2 (%ld)",
                         opt.min_log2, opt.max_log2);
    if (strcmp(opt.kernels, "all") == 0 && strcmp(opt.kernel, "default") != 0)
        status = lt_fail(LT_E_USAGE, "--kernel and --kernels all: choose one");
    if (opt.value_dim == 0)
        opt.value_dim = opt.head_dim;

    char variants_text[256];
    snprintf(variants_text, sizeof variants_text, "%s", opt.variants);
    const char *variants[MAX_VARIANTS];
    int variant_count = 0;
    if (status == LT_OK)
        status = bench_parse_variants(variants_text, variants, MAX_VARIANTS, &variant_count);
    lt_feature_map feature_map = LT_FEATURE_ELU;
    if (status == LT_OK)
        status = lt_attn_parse_feature_map(&feature_map, opt.feature_map, "--feature-map");

    int causal_modes[2], mode_count = 0;
    if (strcmp(opt.causal_mode, "causal") != 0)
        causal_modes[mode_count++] = 0;
    if (strcmp(opt.causal_mode, "noncausal") != 0)
        causal_modes[mode_count++] = 1;
    /* Every kernel choice checked before the first case runs. */
    for (int vi = 0; status == LT_OK && vi < variant_count; vi++)
        for (int mi = 0; status == LT_OK && mi < mode_count; mi++) {
            const char *kernels[MAX_KERNELS];
            kernels_to_run(&opt, variants, variant_count, variants[vi], causal_modes[mi],
                           kernels, &status);
        }
    char dir[4096];
    const char *name;
    split_path(opt.out, dir, sizeof dir, &name);
    bench_run run;
    if (status == LT_OK)
        status = bench_run_open(&run, dir, 0, 0, &name, 1, NULL, 0);
    static bench_table table;
    bench_table_init(&table, columns, sizeof columns / sizeof *columns);
    if (status == LT_OK)
        status = bench_table_journal(&table, opt.out);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);

    static scaling_case rows[MAX_CASES];
    double samples[MAX_REPEATS];
    int row_count = 0;
    long total = (long)variant_count * mode_count * (opt.max_log2 - opt.min_log2 + 1);
    if (strcmp(opt.kernels, "all") == 0)
        total *= 3;
    int threads = lt_threads_get();
    /* 1024^3, or the largest square the memory budget holds */
    while (roof_n > 64 && lt_mem_plan(3 * lt_mem_rounded((size_t)roof_n * roof_n * 4),
                                      "the SGEMM roofline") != LT_OK)
        roof_n /= 2;
    roof_gflops = lt_attn_sgemm_gflops(roof_n, threads);
    roof_gflops_1t = lt_attn_sgemm_gflops(roof_n, 1);
    printf("roofline: SGEMM %dx%dx%d reaches %.1f GFLOP/s on %d threads, %.1f on one (%s "
           "kernels)\n",
           roof_n, roof_n, roof_n, roof_gflops, threads, roof_gflops_1t, lt_attn_blas_core());
    fflush(stdout);
    lt_progress progress;
    lt_progress_start(&progress, stderr, "scaling", total, "cases", opt.common.quiet);
    bench_signals_install();

    for (int vi = 0; vi < variant_count && status == LT_OK; vi++) {
        for (int mi = 0; mi < mode_count && status == LT_OK; mi++) {
            const char *kernels[MAX_KERNELS];
            int kernel_count = kernels_to_run(&opt, variants, variant_count, variants[vi],
                                              causal_modes[mi], kernels, &status);
            int first_skipped = 0; /* N from which the default kernel was skipped */
            for (int ki = 0; ki < kernel_count && status == LT_OK; ki++) {
                double last_seconds = NAN, last_flops = NAN;
                int continues = ki > 0 && strcmp(opt.kernels, "all") != 0 &&
                                is_continuation(kernels[ki]);
                for (long e = opt.min_log2; e <= opt.max_log2 && status == LT_OK; e++) {
                    if (bench_interrupted())
                        break;
                    int N = 1 << e;
                    if (continues && (first_skipped == 0 || N < first_skipped))
                        continue;
                    lt_attn_shape shape = {
                        .B = (int)(opt.batch ? opt.batch
                                             : (opt.tokens / N > 1 ? opt.tokens / N : 1)),
                        .H = (int)opt.heads, .N = N, .D = (int)opt.head_dim,
                        .M = (int)opt.value_dim, .seed = (uint64_t)opt.common.seed};
                    lt_attn_config config = lt_attn_default_config(variants[vi]);
                    config.causal = causal_modes[mi];
                    config.feature_map = feature_map;
                    config.eps = (float)opt.eps;
                    config.proj_k = (int)(opt.proj_k < N ? opt.proj_k : N);
                    config.n_max = N;
                    config.kernel = kernels[ki];
                    scaling_case *row = &rows[row_count++];
                    init_row(row, variants[vi], "none", config.causal, shape,
                             strcmp(variants[vi], "linformer") == 0 ? config.proj_k : 0);
                    lt_attn attn;
                    if (lt_attn_init(&attn, &config) != LT_OK) {
                        row->status = "refused";
                        snprintf(row->note, sizeof row->note, "%s", lt_last_error());
                        status = add_row(&table, &opt, row);
                        lt_progress_update(&progress, row_count, NULL);
                        continue;
                    }
                    row->kernel = lt_attn_kernel_name(&attn, shape);
                    row->is_default = row->kernel == lt_attn_kernel_at(variants[vi],
                                                                       config.causal, 0);
                    row->flops_fwd = lt_attn_flops(&attn, shape, 0);
                    row->flops_bwd = lt_attn_flops(&attn, shape, 1);
                    row->performed_fwd = lt_attn_flops_performed(&attn, shape, 0);
                    row->performed_bwd = lt_attn_flops_performed(&attn, shape, 1);
                    row->planned_bytes = case_plan(&attn, shape, threads);
                    double estimate = last_seconds * (row->flops_fwd + row->flops_bwd) /
                                      last_flops * (double)(opt.warmup + opt.repeats) * 1.5;
                    if (lt_mem_plan(row->planned_bytes, "this case") != LT_OK) {
                        row->status = "skipped-budget";
                        char need[32], have[32];
                        snprintf(row->note, sizeof row->note, "needs %s, budget %s",
                                 lt_mem_format(need, sizeof need, row->planned_bytes),
                                 lt_mem_format(have, sizeof have, lt_mem_budget()));
                    } else if (estimate > opt.max_case_seconds) {
                        row->status = "skipped-time";
                        snprintf(row->note, sizeof row->note,
                                 "estimated %.0f s > --max-case-seconds %g", estimate,
                                 opt.max_case_seconds);
                    } else {
                        status = measure_case(row, &attn, shape, &opt, (uint64_t)row_count,
                                              samples);
                        if (status != LT_OK)
                            break;
                        row->status = "ok";
                        last_seconds = row->fwd_bwd.median;
                        last_flops = row->flops_fwd + row->flops_bwd;
                    }
                    if (ki == 0 && first_skipped == 0 && strncmp(row->status, "skipped", 7) == 0)
                        first_skipped = N;
                    status = add_row(&table, &opt, row);
                    char note[128];
                    snprintf(note, sizeof note, "%s %s %s N=%d: %s", row->variant, row->kernel,
                             row->causal ? "causal" : "non-causal", N, row->status);
                    lt_progress_update(&progress, row_count, note);
                }
            }
        }
    }
    lt_progress_finish(&progress, bench_interrupted() ? "interrupted" : NULL);
    if (status != LT_OK) {
        bench_table_detach(&table);
        return bench_report(cli.program, status, field_flags);
    }
    print_table(rows, row_count);
    print_crossover(rows, row_count);
    status = bench_table_commit(&table, opt.out);
    if (status != LT_OK)
        return bench_report(cli.program, status, field_flags);
    printf("\nwrote %s (%d rows, %d threads)\n", opt.out, row_count, threads);
    bench_table_free(&table);
    if (bench_interrupted()) {
        fprintf(stderr, "ltbench scaling: interrupted; the rows measured so far are in %s\n",
                opt.out);
        return bench_interrupt_exit_code();
    }
    return 0;
}
