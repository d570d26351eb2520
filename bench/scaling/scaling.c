/* ltbench scaling: the paper's Figure 1. Attention forward and
 * forward+backward time and peak memory against sequence length, for each
 * variant, causal and not, with the batch scaled inversely with N and
 * results reported per sample. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn/attn.h"
#include "attn/measure.h"
#include "core/machine.h"
#include "core/mem.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/threads.h"
#include "core/timer.h"
#include "core/signals.h"
#include "io/outdir.h"
#include "experiment/flags.h"
#include "experiment/program.h"
#include "results/table.h"
#include "scaling/scaling.h"

enum { MAX_VARIANTS = 8, MAX_KERNELS = 8, MAX_REPEATS = 100,
       MAX_CASES = MAX_VARIANTS * 2 * MAX_KERNELS * 25 };

typedef struct scaling_options {
    const char *preset;
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
    const char *roofline; /* "on", "off" */
    const char *out;
    int overwrite;
    lt_common common;
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
    double fwd_samples[MAX_REPEATS], fwd_bwd_samples[MAX_REPEATS]; /* ascending */
    double flops_fwd, flops_bwd;          /* the paper's model of the method */
    double performed_fwd, performed_bwd;  /* what this kernel actually computes */
    double products_gflops; /* its own products' rate, measured after it (NaN: none) */
    double bytes_fwd_bwd;   /* lt_attn_interface_bytes of a forward and a backward */
} scaling_case;

/* The machine's SGEMM rate and memory bandwidth, measured once per run:
 * the roofs for FLOPs and for bytes. */
static int roof_n = 1024;
static double roof_gflops, roof_gflops_1t, roof_bandwidth_gbs = NAN;

/* Measures one case. Failures of the kernel itself stop the run. */
static lt_status measure_case(scaling_case *row, const lt_attn *attn, lt_attn_shape shape,
                              const scaling_options *opt, uint64_t stream, double *samples,
                              lt_attn_timing *timing)
{
    LT_TRY(lt_attn_time_case(attn, shape, (uint64_t)opt->common.seed, stream, (int)opt->warmup,
                             (int)opt->repeats, samples, timing));
    row->fwd = timing->fwd;
    row->fwd_bwd = timing->fwd_bwd;
    memcpy(row->fwd_samples, timing->fwd_samples, (size_t)timing->fwd.count * sizeof(double));
    memcpy(row->fwd_bwd_samples, timing->fwd_bwd_samples,
           (size_t)timing->fwd_bwd.count * sizeof(double));
    row->peak_bytes = timing->peak_bytes;
    return LT_OK;
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
    row->products_gflops = NAN;
    row->bytes_fwd_bwd = NAN;
}

static lt_status add_row(lt_table *t, const scaling_options *opt, const scaling_case *r)
{
    double per = 1.0 / r->B;
    lt_row_begin(t);
    lt_set_str(t, "experiment", "scaling");
    lt_set_str(t, "variant", r->variant);
    lt_set_str(t, "kernel", r->kernel);
    lt_set_int(t, "causal", r->causal);
    lt_set_int(t, "N", r->N);
    lt_set_int(t, "batch", r->B);
    lt_set_int(t, "heads", opt->heads);
    lt_set_int(t, "head_dim", opt->head_dim);
    lt_set_int(t, "value_dim", opt->value_dim);
    lt_set_int(t, "proj_k", r->k);
    lt_set_str(t, "feature_map", opt->feature_map);
    lt_set_int(t, "threads", lt_threads_get());
    lt_set_int(t, "seed", opt->common.seed);
    lt_set_int(t, "warmup", opt->warmup);
    lt_set_int(t, "repeats", opt->repeats);
    lt_set_str(t, "status", r->status);
    lt_set_num(t, "fwd_median_s", r->fwd.median);
    lt_set_num(t, "fwd_min_s", r->fwd.min);
    lt_set_num(t, "fwd_max_s", r->fwd.max);
    lt_set_num(t, "fwd_bwd_median_s", r->fwd_bwd.median);
    lt_set_num(t, "fwd_bwd_min_s", r->fwd_bwd.min);
    lt_set_num(t, "fwd_bwd_max_s", r->fwd_bwd.max);
    lt_set_samples(t, "fwd_samples_s", r->fwd_samples, r->fwd.count);
    lt_set_samples(t, "fwd_bwd_samples_s", r->fwd_bwd_samples, r->fwd_bwd.count);
    lt_set_num(t, "fwd_per_sample_s", r->fwd.median * per);
    lt_set_num(t, "fwd_bwd_per_sample_s", r->fwd_bwd.median * per);
    lt_set_int(t, "peak_bytes", (long long)r->peak_bytes);
    lt_set_num(t, "peak_bytes_per_sample", (double)r->peak_bytes * per);
    lt_set_int(t, "planned_bytes", (long long)r->planned_bytes);
    lt_set_num(t, "fwd_gflop_per_s", r->flops_fwd / r->fwd.median * 1e-9);
    lt_set_num(t, "fwd_bwd_gflop_per_s",
                  (r->flops_fwd + r->flops_bwd) / r->fwd_bwd.median * 1e-9);
    lt_set_num(t, "flop_model_fwd", r->flops_fwd);
    lt_set_num(t, "flop_model_bwd", r->flops_bwd);
    lt_set_num(t, "flops_performed_fwd", r->performed_fwd);
    lt_set_num(t, "flops_performed_bwd", r->performed_bwd);
    double performed = (r->performed_fwd + r->performed_bwd) / r->fwd_bwd.median * 1e-9;
    lt_set_num(t, "fwd_bwd_performed_gflop_per_s", performed);
    lt_set_int(t, "sgemm_n", roof_n);
    lt_set_num(t, "sgemm_gflop_per_s", roof_gflops);
    lt_set_num(t, "sgemm_1thread_gflop_per_s", roof_gflops_1t);
    lt_set_num(t, "fraction_of_sgemm", performed / roof_gflops);
    lt_set_num(t, "products_gflop_per_s", r->products_gflops);
    lt_set_num(t, "fraction_of_products", performed / r->products_gflops);
    /* the roofline: the longer of moving the interface's bytes at the
     * measured bandwidth and performing the FLOPs at the SGEMM rate */
    double memory_s = r->bytes_fwd_bwd / (roof_bandwidth_gbs * 1e9);
    double compute_s = (r->performed_fwd + r->performed_bwd) / (roof_gflops * 1e9);
    lt_set_num(t, "bytes_model_fwd_bwd", r->bytes_fwd_bwd);
    lt_set_num(t, "bandwidth_gb_per_s", roof_bandwidth_gbs);
    lt_set_num(t, "memory_bound_s", memory_s);
    lt_set_num(t, "compute_bound_s", compute_s);
    /* no bound without both halves and a time */
    int bounded = !isnan(memory_s) && !isnan(compute_s) && !isnan(r->fwd_bwd.median);
    double bound_s = memory_s > compute_s ? memory_s : compute_s;
    lt_set_str(t, "roofline_bound", !bounded ? "" : memory_s > compute_s ? "memory" : "compute");
    lt_set_num(t, "fraction_of_roofline", bounded ? bound_s / r->fwd_bwd.median : NAN);
    lt_set_str(t, "note", r->note);
    return lt_row_end(t);
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

/* A run: what every case reads and where its rows go. */
typedef struct sweep {
    const scaling_options *opt;
    lt_variant_spec specs[MAX_VARIANTS];
    const char *variants[MAX_VARIANTS]; /* the specs' variants, for the kernel tables */
    int variant_count, causal_modes[2], mode_count;
    const char *listed[MAX_KERNELS];    /* --kernels as a list of names */
    int listed_count;
    lt_feature_map feature_map;
    lt_table table;
    scaling_case rows[MAX_CASES];
    int row_count;
    double samples[2 * MAX_REPEATS];
    lt_progress progress;
} sweep;

/* The kernels of `variant` listed in --kernels that serve `causal`; -1
 * when none of its kernels is listed, or it has none for `causal` (its
 * rows then say it cannot run so, as without --kernels). */
static int listed_kernels(const sweep *w, const char *variant, int causal, const char **out,
                          lt_status *status)
{
    int n = 0, own = 0;
    for (int i = 0; i < w->listed_count; i++) {
        if (strcmp(lt_attn_kernel_variant(w->listed[i]), variant) != 0)
            continue;
        own++;
        const char *name;
        for (int k = 0; (name = lt_attn_kernel_at(variant, causal, k)) != NULL; k++)
            if (strcmp(name, w->listed[i]) == 0)
                out[n++] = name;
    }
    if (own > 0 && n == 0 && lt_attn_kernel_at(variant, causal, 0) == NULL)
        return -1;
    if (own > 0 && n == 0)
        *status = lt_fail(LT_E_USAGE, "--kernels: none of %s's kernels listed runs %s attention "
                                      "(%s do): list one, or measure --causal %s only",
                          variant, causal ? "causal" : "non-causal",
                          lt_attn_kernels_for(variant, causal), causal ? "noncausal" : "causal");
    return own > 0 ? n : -1;
}

/* The kernels a (variant, causal) pair is measured with: every one that
 * serves it (--kernels all), those of its own listed (--kernels as a
 * list), or else the one --kernel picks (else the default) followed by
 * the kernel the variant declares to continue it where its memory does
 * not fit (softmax-gemm, the paper's baseline: softmax-tiled), which
 * *continued then says. */
static int kernels_to_run(const sweep *w, const char *variant, int causal, const char **out,
                          int *continued, lt_status *status)
{
    const scaling_options *opt = w->opt;
    *status = LT_OK;
    *continued = 0;
    if (strcmp(opt->kernels, "all") == 0) {
        int n = 0;
        const char *name;
        while (n < MAX_KERNELS && (name = lt_attn_kernel_at(variant, causal, n)) != NULL)
            out[n++] = name;
        return n > 0 ? n : (out[0] = NULL, 1);
    }
    int listed = listed_kernels(w, variant, causal, out, status);
    if (listed >= 0)
        return listed;
    *status = lt_attn_choose_kernel(opt->kernel, w->variants, w->variant_count, causal, variant,
                                    &out[0]);
    const char *chosen = out[0] != NULL ? out[0] : lt_attn_kernel_at(variant, causal, 0);
    const char *next = lt_attn_kernel_continuation(variant, chosen);
    if (*status == LT_OK && next != NULL && strcmp(opt->kernel, "default") == 0) {
        out[1] = next;
        *continued = 1;
        return 2;
    }
    return 1;
}

/* --kernels as a list: each a kernel of one of the --variants, once. */
static lt_status parse_kernel_list(sweep *w)
{
    static char text[512];
    const scaling_options *opt = w->opt;
    if (strcmp(opt->kernels, "default") == 0 || strcmp(opt->kernels, "all") == 0)
        return LT_OK;
    if (strcmp(opt->kernel, "default") != 0)
        return lt_fail(LT_E_USAGE, "--kernel and --kernels: choose one");
    snprintf(text, sizeof text, "%s", opt->kernels);
    LT_TRY(lt_cli_split_unique(text, w->listed, MAX_KERNELS, &w->listed_count, "--kernels"));
    for (int i = 0; i < w->listed_count; i++) {
        const char *of = lt_attn_kernel_variant(w->listed[i]);
        if (of == NULL)
            return lt_fail(LT_E_USAGE, "--kernels: unknown kernel '%s'; expected default, all or "
                                       "kernels from %s",
                           w->listed[i], lt_attn_all_kernels());
        int measured = 0;
        for (int v = 0; v < w->variant_count; v++)
            measured |= strcmp(w->variants[v], of) == 0;
        if (!measured)
            return lt_fail(LT_E_USAGE, "--kernels: %s is a kernel of %s, which --variants does "
                                       "not list",
                           w->listed[i], of);
    }
    return LT_OK;
}

static const lt_field_flag field_flags[] = {
    {"eps", "--eps"}, {"feature_map", "--feature-map"}, {"proj_k", "--proj-k"},
    {"kernel", "--kernel"}, {NULL, NULL}};

static int scaling_flags(scaling_options *opt, lt_flag *f)
{
    int n = 0;
    f[n++] = lt_flag_preset(&opt->preset);
    f[n++] = lt_flag_variants(&opt->variants, NULL);
    f[n++] = lt_flag_causal(&opt->causal_mode);
    f[n++] = lt_flag_kernel(&opt->kernel);
    f[n++] = lt_flag_kernels(&opt->kernels,
                             "default: each variant's default kernel, or the one --kernel picks; "
                             "a variant none of whose kernels is listed keeps its default");
    f[n++] = (lt_flag){"--min-log2", LT_FLAG_INT, &opt->min_log2, "E", "smallest N is 2^E", 0,
                       24, NULL, 0};
    f[n++] = (lt_flag){"--max-log2", LT_FLAG_INT, &opt->max_log2, "E", "largest N is 2^E", 0, 24,
                       NULL, 0};
    f[n++] = lt_flag_heads(&opt->heads);
    f[n++] = lt_flag_head_dim(&opt->head_dim);
    f[n++] = lt_flag_value_dim(&opt->value_dim);
    f[n++] = lt_flag_tokens(&opt->tokens);
    f[n++] = (lt_flag){"--batch", LT_FLAG_INT, &opt->batch, "B",
                       "fixed batch for every N; 0 = use --tokens", 0, 1 << 20, NULL, 0};
    f[n++] = lt_flag_proj_k(&opt->proj_k);
    f[n++] = lt_flag_feature_map(&opt->feature_map);
    f[n++] = lt_flag_eps(&opt->eps);
    f[n++] = lt_flag_warmup(&opt->warmup);
    f[n++] = lt_flag_repeats(&opt->repeats, MAX_REPEATS);
    f[n++] = (lt_flag){"--max-case-seconds", LT_FLAG_DOUBLE, &opt->max_case_seconds, "S",
                       lt_attn_max_case_seconds_help, 0.001, 1e7, NULL, 0};
    f[n++] = (lt_flag){"--roofline", LT_FLAG_CHOICE, &opt->roofline, NULL,
                       "off: skip measuring the machine's SGEMM rate, bandwidth and each "
                       "kernel's products (about a second a run, far more under valgrind); the "
                       "roof columns are then nan", 0, 0, "on|off", 0};
    f[n++] = lt_flag_out(&opt->out, "scaling.csv (scaling.csv.partial holds the rows while "
                                    "running)");
    f[n++] = lt_flag_overwrite(&opt->overwrite);
    lt_common_flags(&f[n], &opt->common);
    return n + LT_COMMON_FLAGS;
}

/* quick: the suite's and the tests' seconds; small: up to N = 16384;
 * medium: the whole of Figure 1's range, as the paper measured it. */
static const lt_preset_value preset_values[] = {
    {"--min-log2", {"6", "9", "9", "9"}},
    {"--max-log2", {"10", "14", "16", "16"}},
    {"--repeats", {"2", "3", "3", "3"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: N = 64 .. 1024", "minutes: N up to 16384",
     "Figure 1's whole range, N = 512 .. 65536 (the default; softmax's cases that do not fit "
     "--mem-budget are refused by their memory plan, as on the paper's GPU)",
     "as medium: the range the paper measured"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

static const char details[] =
    "For N = 2^min .. 2^max, each variant runs forward and forward+backward on random\n"
    "inputs of shape (batch, heads, N, dim); after --warmup untimed runs, --repeats timed\n"
    "runs give median/min/max seconds. Peak bytes are the tracked allocator's peak over\n"
    "the case's own buffers (inputs, outputs, gradients, saved activations, workspace).\n"
    "Time and bytes are also reported per sample (divided by the batch). A case whose\n"
    "planned bytes exceed --mem-budget is recorded as skipped-budget with the bytes it\n"
    "would need, one whose estimated time exceeds --max-case-seconds as skipped-time\n"
    "with the estimate; Linformer is not causal and its causal rows are recorded as refused,\n"
    "as are the non-causal rows of decay, delta, gated-delta and gla (causal only).\n"
    "delta, gated-delta and gla run with gates drawn from the case's seed after the\n"
    "other inputs (beta uniform in [0.1, 0.9], alpha uniform in [0.9, 1), given as\n"
    "log_alpha), planned and allocated with the case, not timed.\n"
    "Where a kernel is skipped for its memory, the kernel its variant declares to\n"
    "continue it goes on in rows of its own (softmax-gemm, materialised N x N and the\n"
    "paper's baseline, is continued by softmax-tiled, O(N) memory).\n"
    "FLOP model: see lt_attn_flops (src/attn); GFLOP/s = model FLOPs / median time.\n"
    "Roofline: the SGEMM rate of a 1024^3 product (smaller if the budget says so) is\n"
    "measured once per run (on the run's threads and on one); roof% (CSV\n"
    "fraction_of_sgemm) = the FLOPs the kernel actually performs (lt_attn_flops_performed,\n"
    "e.g. the chunked causal kernel's extra intra-chunk products) per second over that\n"
    "rate. A kernel whose products are too small for that rate to be its roof\n"
    "(lsh-chunked: C x 2C windows) also gets products% (CSV fraction_of_products): the\n"
    "same FLOPs per second over the rate its own products reach when run alone as it\n"
    "calls them (CSV products_gflop_per_s, measured right after the case).\n"
    "Memory: the bytes a forward and a backward cannot avoid moving (each input read\n"
    "once, each output written once, the saved activations written and read back; CSV\n"
    "bytes_model_fwd_bwd, see lt_attn_interface_bytes) over the bandwidth a triad over\n"
    "64 MiB arrays reaches, measured once per run (bandwidth_gb_per_s): memory_bound_s.\n"
    "compute_bound_s = the performed FLOPs at the SGEMM rate; roofline% (CSV\n"
    "fraction_of_roofline) = the larger of the two over the measured time, and\n"
    "roofline_bound names which one it is.\n"
    "Kernels: softmax-gemm (materialised, the default), softmax-tiled (online\n"
    "softmax, O(N) memory), softmax-reference; linear-gemm (non-causal),\n"
    "linear-causal-chunked (causal default), linear-causal-prefix, linear-reference;\n"
    "linformer-gemm; lsh-chunked (default), lsh-reference; decay-causal-chunked\n"
    "(default), decay-causal-prefix, decay-reference (decay: RetNet's per-head gammas);\n"
    "delta-, gated-delta- and gla-causal-chunked (the defaults) and -causal-recurrent\n"
    "(a position at a time, as generation steps).\n"
    "LSH (Reformer) rows are labelled lsh-R for R rounds (lsh alone: 4), with chunks of\n"
    "32 and the bucket count Reformer derives from N. Feature maps: elu (elu + 1, the\n"
    "paper's), relu, favor (FAVOR+ positive random features, drawn from --seed), taylor\n"
    "(Based's 1 + s + s^2/2, 1 + D + D^2 features, D at most 64). Ctrl-C stops after the\n"
    "current case and writes the rows so far (exit status 130).";

static lt_status check_options(sweep *w, scaling_options *opt)
{
    w->opt = opt;
    if (opt->min_log2 > opt->max_log2)
        return lt_fail(LT_E_USAGE, "--min-log2 (%ld) must not exceed --max-log2 (%ld)",
                       opt->min_log2, opt->max_log2);
    if (strcmp(opt->kernels, "all") == 0 && strcmp(opt->kernel, "default") != 0)
        return lt_fail(LT_E_USAGE, "--kernel and --kernels all: choose one");
    LT_TRY(lt_flag_check_out(opt->out, "scaling.csv"));
    if (opt->value_dim == 0)
        opt->value_dim = opt->head_dim;
    LT_TRY(lt_attn_parse_feature_map(&w->feature_map, opt->feature_map, "--feature-map"));
    static char text[256];
    snprintf(text, sizeof text, "%s", opt->variants);
    lt_attn_config base = lt_attn_default_config(NULL);
    base.feature_map = w->feature_map;
    base.eps = (float)opt->eps;
    LT_TRY(lt_program_parse_variants(text, &base, w->specs, MAX_VARIANTS, &w->variant_count,
                                     "--variants"));
    for (int i = 0; i < w->variant_count; i++)
        w->variants[i] = w->specs[i].config.variant;
    w->mode_count = lt_flag_causal_modes(opt->causal_mode, w->causal_modes);
    LT_TRY(parse_kernel_list(w));
    /* Every kernel choice checked before the first case runs. */
    lt_status status = LT_OK;
    for (int vi = 0; status == LT_OK && vi < w->variant_count; vi++)
        for (int mi = 0; status == LT_OK && mi < w->mode_count; mi++) {
            const char *kernels[MAX_KERNELS];
            int continued;
            kernels_to_run(w, w->variants[vi], w->causal_modes[mi], kernels, &continued,
                           &status);
        }
    return status;
}

/* Measures (or skips, or records the refusal of) the case of one variant,
 * causal mode, kernel and N; *last is the kernel's last case run, for the
 * time estimate. */
static lt_status run_case(sweep *w, int vi, int causal, const char *kernel, int N,
                          lt_attn_last_case *last, scaling_case **out)
{
    const char *variant = w->variants[vi];
    const scaling_options *opt = w->opt;
    lt_attn_shape shape = {.B = (int)(opt->batch ? opt->batch
                                                 : (opt->tokens / N > 1 ? opt->tokens / N : 1)),
                           .H = (int)opt->heads, .N = N, .D = (int)opt->head_dim,
                           .M = (int)opt->value_dim, .seed = (uint64_t)opt->common.seed};
    lt_attn_config config = w->specs[vi].config;
    config.causal = causal;
    config.proj_k = (int)(opt->proj_k < N ? opt->proj_k : N);
    config.n_max = N;
    config.kernel = kernel;
    scaling_case *row = *out = &w->rows[w->row_count++];
    lt_attn_caps caps;
    LT_TRY(lt_attn_variant_caps(variant, &caps));
    init_row(row, w->specs[vi].label, "none", causal, shape, caps.params ? config.proj_k : 0);
    lt_attn attn;
    if (lt_attn_init(&attn, &config) != LT_OK) {
        row->status = "refused";
        snprintf(row->note, sizeof row->note, "%s", lt_last_error());
        return add_row(&w->table, opt, row);
    }
    row->kernel = lt_attn_kernel_name(&attn, shape);
    row->is_default = row->kernel == lt_attn_kernel_at(variant, causal, 0);
    row->flops_fwd = lt_attn_flops(&attn, shape, 0);
    row->flops_bwd = lt_attn_flops(&attn, shape, 1);
    row->performed_fwd = lt_attn_flops_performed(&attn, shape, 0);
    row->performed_bwd = lt_attn_flops_performed(&attn, shape, 1);
    row->bytes_fwd_bwd =
        lt_attn_interface_bytes(&attn, shape, 0) + lt_attn_interface_bytes(&attn, shape, 1);
    row->planned_bytes = lt_attn_case_bytes(&attn, shape, lt_threads_get());
    lt_attn_admission admission;
    lt_attn_admit_case(last, row->planned_bytes, row->flops_fwd + row->flops_bwd,
                       opt->max_case_seconds, &admission);
    row->status = admission.status;
    snprintf(row->note, sizeof row->note, "%s", admission.why);
    if (strcmp(admission.status, "ok") == 0) {
        lt_attn_timing timing;
        LT_TRY(measure_case(row, &attn, shape, opt, (uint64_t)w->row_count, w->samples,
                            &timing));
        /* right after the case: the machine's speed drifts over minutes */
        if (strcmp(opt->roofline, "on") == 0)
            row->products_gflops = lt_attn_products_gflops(&attn, shape, lt_threads_get());
        lt_attn_case_ran(last, &timing, row->flops_fwd + row->flops_bwd);
    }
    return add_row(&w->table, opt, row);
}

/* Every N of every kernel of one variant and causal mode; a continuing
 * kernel starts at the N its predecessor was skipped from. */
static lt_status run_variant(sweep *w, int vi, int causal)
{
    const char *variant = w->variants[vi];
    const scaling_options *opt = w->opt;
    const char *kernels[MAX_KERNELS];
    lt_status status;
    int continued;
    int kernel_count = kernels_to_run(w, variant, causal, kernels, &continued, &status);
    int first_skipped = 0; /* N from which the first kernel was skipped */
    for (int ki = 0; ki < kernel_count && status == LT_OK; ki++) {
        lt_attn_last_case last = lt_attn_no_case_yet();
        int continues = ki > 0 && continued;
        for (long e = opt->min_log2; e <= opt->max_log2 && status == LT_OK; e++) {
            int N = 1 << e;
            if (lt_interrupted() || (continues && (first_skipped == 0 || N < first_skipped)))
                continue;
            scaling_case *row;
            status = run_case(w, vi, causal, kernels[ki], N, &last, &row);
            if (ki == 0 && first_skipped == 0 && strncmp(row->status, "skipped", 7) == 0)
                first_skipped = N;
            char note[128];
            snprintf(note, sizeof note, "%s %s %s N=%d: %s", row->variant, row->kernel,
                     row->causal ? "causal" : "non-causal", N, row->status);
            lt_progress_update(&w->progress, w->row_count, note);
        }
    }
    return status;
}

/* The machine's SGEMM rate at 1024^3, or the largest square the budget
 * holds, on the run's threads and on one; and its memory bandwidth over
 * arrays of 64 MiB, well beyond the caches (NaN when the budget refuses). */
static void measure_roof(const scaling_options *opt)
{
    enum { TRIAD_ARRAY = 64 << 20 };
    int threads = lt_threads_get();
    if (strcmp(opt->roofline, "on") != 0) {
        roof_gflops = roof_gflops_1t = NAN;
        return;
    }
    while (roof_n > 64 && lt_mem_plan(3 * lt_mem_rounded((size_t)roof_n * roof_n * 4),
                                      "the SGEMM roofline") != LT_OK)
        roof_n /= 2;
    roof_gflops = lt_machine_sgemm_gflops(roof_n, threads);
    roof_gflops_1t = lt_machine_sgemm_gflops(roof_n, 1);
    if (lt_mem_plan(3 * lt_mem_rounded(TRIAD_ARRAY), "the bandwidth roofline") == LT_OK)
        roof_bandwidth_gbs = lt_machine_bandwidth_gbs(TRIAD_ARRAY, threads);
    printf("roofline: SGEMM %dx%dx%d reaches %.1f GFLOP/s on %d threads, %.1f on one (%s "
           "kernels); memory bandwidth %.1f GB/s (triad)\n",
           roof_n, roof_n, roof_n, roof_gflops, threads, roof_gflops_1t, lt_machine_blas_core(),
           roof_bandwidth_gbs);
    fflush(stdout);
}

static lt_status sweep_all(sweep *w)
{
    const scaling_options *opt = w->opt;
    long total = (long)w->variant_count * w->mode_count * (opt->max_log2 - opt->min_log2 + 1);
    measure_roof(opt);
    lt_progress_start(&w->progress, stderr, "scaling",
                      strcmp(opt->kernels, "default") != 0 ? 3 * total : total, "cases",
                      opt->common.quiet);
    lt_signals_install();
    lt_status status = LT_OK;
    for (int vi = 0; vi < w->variant_count && status == LT_OK; vi++)
        for (int mi = 0; mi < w->mode_count && status == LT_OK; mi++)
            status = run_variant(w, vi, w->causal_modes[mi]);
    lt_progress_finish(&w->progress, lt_interrupted() ? "interrupted" : NULL);
    return status;
}

int main(int argc, char **argv)
{
    static scaling_options opt = {
        .preset = "medium",
        .variants = "softmax,linear,linformer,lsh-1,lsh-4,lsh-8", .causal_mode = "both",
        .min_log2 = 9, .max_log2 = 16, .heads = 8, .head_dim = 64, .tokens = 4096, .proj_k = 256,
        .feature_map = "elu", .eps = 1e-6, .warmup = 1, .repeats = 3, .max_case_seconds = 150,
        .kernel = "default", .kernels = "default", .roofline = "on",
        .out = "results/scaling"};
    lt_common_defaults(&opt.common);
    static lt_flag flags[32];
    lt_cli cli = {"ltbench scaling",
                  "Attention time and peak memory against sequence length (the paper's "
                  "Figure 1).",
                  lt_presets_details(&presets, details), flags, scaling_flags(&opt, flags),
                  NULL};
    int exit_now;
    int code = lt_program_parse(&cli, &presets, &opt.preset, &opt.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    static sweep w;
    lt_outdir run;
    lt_table_init(&w.table, &bench_scaling);
    lt_status status = check_options(&w, &opt);
    const char *names[] = {"scaling.csv"};
    static char paths[1][4400];
    if (status == LT_OK)
        status = lt_program_open_csvs(&run, opt.out, names, 1, opt.overwrite, paths);
    if (status == LT_OK)
        status = lt_table_journal(&w.table, paths[0], NULL);
    if (status == LT_OK)
        status = sweep_all(&w);
    if (status == LT_OK) {
        printf("\n");
        lt_table_print(&w.table, stdout);
        print_crossover(w.rows, w.row_count);
    }
    lt_table *tables[] = {&w.table};
    const char *written[] = {paths[0]};
    return lt_program_end_tables(cli.program, status, tables, written, 1, field_flags);
}
