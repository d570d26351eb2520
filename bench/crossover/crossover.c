/* ltbench crossover: beyond the paper. For each head dimension, the
 * smallest sequence length N from which each linear attention kernel is
 * faster per sample than each softmax kernel, forward and
 * forward+backward, causal and not; and, for the gated variants (delta,
 * gated-delta, gla), the N from which each one's chunked kernel is faster
 * than its recurrent one. Every case is timed as scaling times it
 * (lt_attn_time_case, gates included); the rule is lt_crossover_find's
 * (src/results). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn/attn.h"
#include "attn/measure.h"
#include "core/progress.h"
#include "core/signals.h"
#include "core/threads.h"
#include "experiment/flags.h"
#include "experiment/program.h"
#include "results/crossover.h"
#include "results/table.h"
#include "crossover/crossover.h"

enum { MAX_HEAD_DIMS = 16, MAX_LENGTHS = 24, MAX_KERNELS = 16, MAX_MAPS = 4,
       MAX_ENTRIES = MAX_KERNELS * MAX_MAPS, MAX_REPEATS = 100 };

/* The variants whose kernels the sweep compares. */
static const char *const variants[] = {"softmax", "linear", "decay", "delta", "gated-delta",
                                       "gla"};
enum { VARIANTS = sizeof variants / sizeof variants[0] };

/* --kernels default: the paper's question, linear's kernels against softmax's. */
#define DEFAULT_KERNELS \
    "linear-gemm,linear-causal-chunked,linear-causal-prefix,softmax-gemm,softmax-tiled"

/* The two questions, each a challenger's kernels against an incumbent's:
 * linear's and decay's kernels against softmax's, and a gated variant's
 * chunked kernel against its own recurrent one (the same recurrence a
 * token at a time, as generation runs it; only kernels of one variant are
 * paired). */
typedef enum question { LINEAR_VS_SOFTMAX, CHUNKED_VS_RECURRENT } question;
static const char *const question_names[] = {"linear-vs-softmax", "chunked-vs-recurrent"};

/* What a kernel is to the sweep. */
typedef struct kernel_role {
    const char *variant;
    int serves[2];  /* the masking modes it serves, by causal */
    question q;
    int challenger; /* 1: a linear, decay or chunked kernel; 0: softmax's or a recurrent one */
} kernel_role;

typedef struct options {
    const char *preset, *head_dims, *causal_mode, *kernels, *feature_maps, *out;
    long min_n, max_n, heads, value_dim, tokens, batch, warmup, repeats, confirm;
    double margin, max_case_seconds, eps;
    int overwrite;
    lt_common common;
} options;

/* A kernel (with a feature map, for a challenger) in one group of head
 * dimension and causal mode: its time per sample at each N. */
typedef struct entry {
    lt_attn_config config;
    const char *map; /* feature map's name; "none" for softmax and the gated variants */
    question q;
    int challenger;
    int stopped;     /* skipped for memory or time, or refused: no larger N */
    char why[300];   /* why it stopped */
    double fwd[MAX_LENGTHS], fwd_bwd[MAX_LENGTHS]; /* s per sample; NAN: not measured */
    lt_attn_last_case last; /* the last case it ran, for the time estimate */
} entry;

typedef struct sweep {
    options *opt;
    char paths[2][4400]; /* OUT/crossover.csv, OUT/crossover-table.csv */
    long head_dims[MAX_HEAD_DIMS];
    int head_dim_count;
    int lengths[MAX_LENGTHS], length_count;
    const char *kernels[MAX_KERNELS];
    kernel_role roles[MAX_KERNELS];
    int kernel_count;
    lt_feature_map maps[MAX_MAPS];
    int map_count;
    int modes[2], mode_count;
    lt_table cases, table;
    entry entries[MAX_ENTRIES];
    int entry_count, measured; /* measured: the lengths the group reached */
    int kernels_given;         /* --kernels names its kernels */
    double samples[2 * MAX_REPEATS];
    lt_progress progress;
    long done;
} sweep;

/* ---- options ---- */

static int crossover_flags(options *o, lt_flag *f)
{
    int n = 0;
    f[n++] = lt_flag_preset(&o->preset);
    f[n++] = (lt_flag){"--head-dims", LT_FLAG_STRING, &o->head_dims, "LIST",
                       "head dimensions D (query/key dimension per head), increasing", 0, 0, NULL,
                       0};
    f[n++] = (lt_flag){"--min-n", LT_FLAG_INT, &o->min_n, "N",
                       "smallest sequence length; N doubles from there", 1, 1 << 24, NULL, 0};
    f[n++] = (lt_flag){"--max-n", LT_FLAG_INT, &o->max_n, "N",
                       "largest sequence length measured (N_max)", 1, 1 << 24, NULL, 0};
    f[n++] = lt_flag_causal(&o->causal_mode);
    f[n++] = lt_flag_kernels(&o->kernels,
                             "default: " DEFAULT_KERNELS "; softmax's against linear's (and "
                             "decay's, e.g. decay-causal-chunked,decay-causal-prefix), and a gated "
                             "variant's chunked kernel against its recurrent one (e.g. "
                             "delta-causal-chunked,delta-causal-recurrent; causal only); each runs "
                             "in the masking modes it serves");
    f[n++] = lt_flag_feature_maps(&o->feature_maps);
    f[n++] = lt_flag_heads(&o->heads);
    f[n++] = lt_flag_value_dim(&o->value_dim);
    f[n++] = lt_flag_tokens(&o->tokens);
    f[n++] = (lt_flag){"--batch", LT_FLAG_INT, &o->batch, "B",
                       "fixed batch for every N; 0 = use --tokens", 0, 1 << 20, NULL, 0};
    f[n++] = lt_flag_warmup(&o->warmup);
    f[n++] = lt_flag_repeats(&o->repeats, MAX_REPEATS);
    f[n++] = (lt_flag){"--confirm", LT_FLAG_INT, &o->confirm, "K",
                       "a pair is settled (no larger N measured) once the linear kernel has won "
                       "at K measured N in a row",
                       1, MAX_LENGTHS, NULL, 0};
    f[n++] = (lt_flag){"--margin", LT_FLAG_DOUBLE, &o->margin, "X",
                       "... and at the last of them by at least X (softmax time over linear)", 1,
                       1000, NULL, 0};
    f[n++] = (lt_flag){"--max-case-seconds", LT_FLAG_DOUBLE, &o->max_case_seconds, "S",
                       lt_attn_max_case_seconds_help, 0.001, 1e7, NULL, 0};
    f[n++] = lt_flag_eps(&o->eps);
    f[n++] = lt_flag_out(&o->out, "crossover.csv (every case) and crossover-table.csv (the "
                                  "crossovers; each FILE.partial while running)");
    f[n++] = lt_flag_overwrite(&o->overwrite);
    lt_common_flags(&f[n], &o->common);
    return n + LT_COMMON_FLAGS;
}

/* quick: the suite's and the tests' seconds; crossover is not in the
 * paper, so paper is medium, the defaults. */
static const lt_preset_value preset_values[] = {
    {"--head-dims", {"16,64", "16,32,64,128,256", "16,32,64,128,256", "16,32,64,128,256"}},
    {"--min-n", {"16", "32", "32", "32"}},
    {"--max-n", {"256", "4096", "4096", "4096"}},
    {"--heads", {"2", "4", "4", "4"}},
    {"--tokens", {"512", "2048", "2048", "2048"}},
    {"--warmup", {"0", "1", "1", "1"}},
    {"--repeats", {"1", "3", "3", "3"}},
};

static const lt_presets presets = {
    {"quick", "small", "medium", "paper"},
    {"seconds: two head dimensions, N up to 256", "as medium", "the defaults",
     "as medium (the paper has no such sweep)"},
    preset_values, sizeof preset_values / sizeof preset_values[0]};

static const char details[] =
    "For each head dimension D and masking mode, every kernel runs forward and\n"
    "forward+backward on random inputs of shape (batch, heads, N, D) for N = --min-n,\n"
    "2 --min-n, ... up to --max-n, timed as ltbench scaling times a case (--warmup untimed\n"
    "runs, then --repeats timed; the median per sample is compared). The crossover of a\n"
    "linear kernel over a softmax kernel, for one pass, is the smallest N from which the\n"
    "linear kernel is faster per sample at that N and at every larger N measured; N at\n"
    "which either was not measured do not count. 'none up to N' when it is not faster at\n"
    "the largest N both were measured at; '<= N (from the smallest N)' when it is faster\n"
    "at every N. A pair is settled once the linear kernel has won at --confirm measured N\n"
    "in a row, the last by --margin, in both passes (softmax's cost grows quadratically,\n"
    "linear's linearly: beyond, softmax only falls further behind); a kernel stops being\n"
    "measured when every pair it is in is settled, and a group when all are. A kernel\n"
    "whose planned bytes exceed --mem-budget is recorded as skipped-budget, one whose case\n"
    "would take longer than --max-case-seconds as skipped-time, and neither runs at larger\n"
    "N. Non-causal: linear-gemm against softmax-gemm and softmax-tiled; causal:\n"
    "linear-causal-chunked and linear-causal-prefix against both.\n"
    "The second question, chunked against recurrent: list a gated variant's chunked and\n"
    "recurrent kernels (delta-, gated-delta-, gla-causal-chunked and -causal-recurrent),\n"
    "with --causal causal unless softmax and linear kernels are listed too; each chunked\n"
    "kernel is paired with its own variant's recurrent kernel only (the same recurrence\n"
    "a position at a time, as generation steps), timed with the gates scaling draws.\n"
    "Both cost O(N), so a settled pair is one whose ratio has held. Writes\n"
    "OUT/crossover.csv (every case, as scaling's rows) and OUT/crossover-table.csv (a row\n"
    "per head dimension x masking x pass x pair of kernels; column question:\n"
    "linear-vs-softmax or chunked-vs-recurrent); ltbench plot draws the crossover\n"
    "against D. --kernels all measures every kernel of softmax, linear, decay, delta,\n"
    "gated-delta and gla in the masking modes it serves.\n"
    "Ctrl-C stops after the current case and writes what was measured (exit status 130).";

/* The variant a kernel belongs to, the masking modes it serves, the
 * question it takes part in and its side; NULL variant: none of ours. */
static kernel_role role_of(const char *kernel)
{
    kernel_role r = {0};
    for (int v = 0; v < VARIANTS; v++)
        for (int causal = 0; causal <= 1; causal++) {
            const char *name;
            for (int i = 0; (name = lt_attn_kernel_at(variants[v], causal, i)) != NULL; i++)
                if (strcmp(name, kernel) == 0) {
                    r.variant = variants[v];
                    r.serves[causal] = 1;
                }
        }
    lt_attn_caps caps = {0};
    if (r.variant != NULL)
        lt_attn_variant_caps(r.variant, &caps);
    r.q = caps.gates != 0 ? CHUNKED_VS_RECURRENT : LINEAR_VS_SOFTMAX;
    if (r.q == LINEAR_VS_SOFTMAX)
        r.challenger = r.variant != NULL && strcmp(r.variant, "softmax") != 0;
    else /* the gated variants' kernels: chunked ones, and a -recurrent one */
        r.challenger = strstr(kernel, "-recurrent") == NULL;
    return r;
}

/* Whether entries or kernels a and b make a pair: one question, one of
 * each side, and for chunked against recurrent one variant. */
static int paired(question qa, int ca, const char *va, question qb, int cb, const char *vb)
{
    return qa == qb && ca != cb && (qa == LINEAR_VS_SOFTMAX || strcmp(va, vb) == 0);
}

/* A gated kernel whose partner (its variant's kernel of the other side)
 * is not listed for masking mode `causal`: LT_E_USAGE naming it. */
static lt_status check_partner(const sweep *w, int k, int causal)
{
    const kernel_role *r = &w->roles[k];
    for (int j = 0; j < w->kernel_count; j++)
        if (w->roles[j].serves[causal] &&
            paired(r->q, r->challenger, r->variant, w->roles[j].q, w->roles[j].challenger,
                   w->roles[j].variant))
            return LT_OK;
    const char *name, *partner = "";
    for (int i = 0; (name = lt_attn_kernel_at(r->variant, causal, i)) != NULL; i++)
        if (role_of(name).challenger != r->challenger)
            partner = name;
    return lt_fail(LT_E_USAGE, "--kernels: '%s' is measured against %s's %s kernel: list %s "
                               "too",
                   w->kernels[k], r->variant, r->challenger ? "recurrent" : "chunked", partner);
}

/* Each masking mode measured must ask a question whole: a softmax kernel
 * and a linear or decay one, or a gated variant's chunked and recurrent
 * kernels (each gated kernel listed needs its partner). */
static lt_status check_questions(const sweep *w)
{
    for (int m = 0; m < w->mode_count; m++) {
        int causal = w->modes[m], sides[2] = {0, 0}, gated = 0;
        for (int k = 0; k < w->kernel_count; k++) {
            const kernel_role *r = &w->roles[k];
            if (!r->serves[causal])
                continue;
            if (r->q == LINEAR_VS_SOFTMAX)
                sides[r->challenger]++;
            else
                gated = 1;
            if (r->q == CHUNKED_VS_RECURRENT)
                LT_TRY(check_partner(w, k, causal));
        }
        int half = (sides[0] > 0) != (sides[1] > 0), any_gated = 0;
        for (int k = 0; k < w->kernel_count; k++)
            any_gated |= w->roles[k].q == CHUNKED_VS_RECURRENT;
        if (half || (!gated && !(sides[0] && sides[1])))
            return lt_fail(LT_E_USAGE, "--kernels: %s attention needs a softmax kernel and a "
                                       "linear or decay kernel that serve it%s (--causal %s)%s",
                           causal ? "causal" : "non-causal",
                           causal && !half ? ", or a gated variant's chunked and recurrent "
                                             "kernels"
                                           : "",
                           w->opt->causal_mode,
                           !causal && any_gated ? "; the gated variants' kernels serve causal "
                                                  "attention only: --causal causal"
                                                : "");
    }
    return LT_OK;
}

/* --kernels all: every kernel of the variants the sweep compares. */
static void all_kernels(char *text, size_t size)
{
    text[0] = '\0';
    for (int v = 0; v < VARIANTS; v++)
        snprintf(text + strlen(text), size - strlen(text), "%s%s", v ? "," : "",
                 lt_attn_kernel_names(variants[v]));
    for (char *bar = strchr(text, '|'); bar != NULL; bar = strchr(bar, '|'))
        *bar = ',';
}

static lt_status parse_kernels(sweep *w)
{
    static char text[512];
    if (strcmp(w->opt->kernels, "all") == 0)
        all_kernels(text, sizeof text);
    else
        snprintf(text, sizeof text, "%s",
                 strcmp(w->opt->kernels, "default") == 0 ? DEFAULT_KERNELS : w->opt->kernels);
    LT_TRY(lt_cli_split_unique(text, w->kernels, MAX_KERNELS, &w->kernel_count, "--kernels"));
    for (int k = 0; k < w->kernel_count; k++) {
        w->roles[k] = role_of(w->kernels[k]);
        const kernel_role *r = &w->roles[k];
        if (lt_attn_kernel_variant(w->kernels[k]) == NULL)
            return lt_fail(LT_E_USAGE, "--kernels: unknown kernel '%s'; expected default, all or "
                                       "kernels from %s",
                           w->kernels[k], lt_attn_all_kernels());
        if (r->variant == NULL)
            return lt_fail(LT_E_USAGE, "--kernels: '%s' is not a kernel of softmax, linear, "
                                       "decay, delta, gated-delta or gla attention (softmax: "
                                       "%s; linear: %s; decay: %s; delta: %s; gated-delta: %s; "
                                       "gla: %s)",
                           w->kernels[k], lt_attn_kernel_names("softmax"),
                           lt_attn_kernel_names("linear"), lt_attn_kernel_names("decay"),
                           lt_attn_kernel_names("delta"), lt_attn_kernel_names("gated-delta"),
                           lt_attn_kernel_names("gla"));
        int used = 0;
        for (int m = 0; m < w->mode_count; m++)
            used |= r->serves[w->modes[m]];
        if (!used && w->kernels_given)
            return lt_fail(LT_E_USAGE, "--kernels: '%s' serves none of the masking modes "
                                       "measured (--causal %s)",
                           w->kernels[k], w->opt->causal_mode);
    }
    return check_questions(w);
}

static lt_status parse_maps(sweep *w)
{
    static char text[256];
    const char *items[MAX_MAPS];
    snprintf(text, sizeof text, "%s", w->opt->feature_maps);
    LT_TRY(lt_cli_split_unique(text, items, MAX_MAPS, &w->map_count, "--feature-maps"));
    for (int i = 0; i < w->map_count; i++) {
        LT_TRY(lt_attn_parse_feature_map(&w->maps[i], items[i], "--feature-maps"));
        if (w->maps[i] == LT_FEATURE_IDENTITY)
            return lt_fail(LT_E_USAGE, "--feature-maps: identity is for tests only; expected "
                                       "elu, relu, favor or taylor");
    }
    return LT_OK;
}

static lt_status check_options(sweep *w, options *o)
{
    w->opt = o;
    LT_TRY(lt_cli_split_increasing(o->head_dims, w->head_dims, MAX_HEAD_DIMS, &w->head_dim_count,
                                   1, 4096, "--head-dims"));
    if (o->min_n > o->max_n)
        return lt_fail(LT_E_USAGE, "--min-n (%ld) must not exceed --max-n (%ld)", o->min_n,
                       o->max_n);
    for (long n = o->min_n; n <= o->max_n; n *= 2) {
        if (w->length_count == MAX_LENGTHS)
            return lt_fail(LT_E_USAGE, "--max-n: at most %d doublings from --min-n",
                           MAX_LENGTHS - 1);
        w->lengths[w->length_count++] = (int)n;
    }
    w->mode_count = lt_flag_causal_modes(o->causal_mode, w->modes);
    LT_TRY(parse_kernels(w));
    return parse_maps(w);
}

static const lt_field_flag field_flags[] = {{"eps", "--eps"}, {NULL, NULL}};

/* ---- one group: a head dimension and a masking mode ---- */

static void add_entry(sweep *w, const kernel_role *role, const char *kernel, int causal,
                      lt_feature_map map)
{
    const char *variant = role->variant;
    const int challenger = role->challenger;
    entry *e = &w->entries[w->entry_count++];
    memset(e, 0, sizeof *e);
    e->config = lt_attn_default_config(variant);
    e->config.causal = causal;
    e->config.kernel = kernel;
    e->config.feature_map = map;
    e->config.eps = (float)w->opt->eps;
    e->q = role->q;
    e->challenger = challenger;
    /* the gated variants have no feature map */
    e->map = challenger && role->q == LINEAR_VS_SOFTMAX ? lt_attn_feature_map_name(map) : "none";
    for (int i = 0; i < MAX_LENGTHS; i++)
        e->fwd[i] = e->fwd_bwd[i] = NAN;
    e->last = lt_attn_no_case_yet();
}

static void build_group(sweep *w, int causal)
{
    w->entry_count = 0;
    w->measured = 0;
    for (int k = 0; k < w->kernel_count; k++) {
        const kernel_role *r = &w->roles[k];
        if (!r->serves[causal])
            continue;
        /* a linear or decay kernel once per feature map */
        const int mapped = r->challenger && r->q == LINEAR_VS_SOFTMAX;
        for (int m = 0; m < (mapped ? w->map_count : 1); m++)
            add_entry(w, r, w->kernels[k], causal, mapped ? w->maps[m] : LT_FEATURE_ELU);
    }
}

static int entries_paired(const entry *a, const entry *b)
{
    return paired(a->q, a->challenger, a->config.variant, b->q, b->challenger,
                  b->config.variant);
}

static lt_crossover pair_result(const sweep *w, const entry *ch, const entry *inc, int pass)
{
    return lt_crossover_find(w->lengths, pass ? ch->fwd_bwd : ch->fwd,
                             pass ? inc->fwd_bwd : inc->fwd, w->measured,
                             (int)w->opt->confirm, w->opt->margin);
}

/* A pair goes on while both can run and either pass is unsettled. */
static int pair_open(const sweep *w, const entry *a, const entry *b)
{
    const entry *ch = a->challenger ? a : b, *inc = a->challenger ? b : a;
    return !ch->stopped && !inc->stopped &&
           !(pair_result(w, ch, inc, 0).settled && pair_result(w, ch, inc, 1).settled);
}

static int entry_needed(const sweep *w, const entry *e)
{
    for (int i = 0; i < w->entry_count; i++)
        if (entries_paired(e, &w->entries[i]) && pair_open(w, e, &w->entries[i]))
            return 1;
    return 0;
}

static lt_status add_case_row(sweep *w, const entry *e, lt_attn_shape s, const char *status,
                              const lt_attn_timing *t, size_t planned, const char *note)
{
    lt_table *c = &w->cases;
    lt_row_begin(c);
    lt_set_str(c, "experiment", "crossover");
    lt_set_str(c, "variant", e->config.variant);
    lt_set_str(c, "kernel", e->config.kernel);
    lt_set_str(c, "feature_map", e->map);
    lt_set_int(c, "causal", e->config.causal);
    lt_set_int(c, "head_dim", s.D);
    lt_set_int(c, "N", s.N);
    lt_set_int(c, "batch", s.B);
    lt_set_int(c, "heads", s.H);
    lt_set_int(c, "value_dim", s.M);
    lt_set_int(c, "tokens", w->opt->batch ? 0 : w->opt->tokens);
    lt_set_int(c, "threads", lt_threads_get());
    lt_set_int(c, "seed", w->opt->common.seed);
    lt_set_int(c, "warmup", w->opt->warmup);
    lt_set_int(c, "repeats", w->opt->repeats);
    lt_set_str(c, "status", status);
    lt_set_num(c, "fwd_median_s", t->fwd.median);
    lt_set_num(c, "fwd_min_s", t->fwd.min);
    lt_set_num(c, "fwd_max_s", t->fwd.max);
    lt_set_num(c, "fwd_bwd_median_s", t->fwd_bwd.median);
    lt_set_num(c, "fwd_bwd_min_s", t->fwd_bwd.min);
    lt_set_num(c, "fwd_bwd_max_s", t->fwd_bwd.max);
    lt_set_samples(c, "fwd_samples_s", t->fwd_samples, t->fwd.count);
    lt_set_samples(c, "fwd_bwd_samples_s", t->fwd_bwd_samples, t->fwd_bwd.count);
    lt_set_num(c, "fwd_per_sample_s", t->fwd.median / s.B);
    lt_set_num(c, "fwd_bwd_per_sample_s", t->fwd_bwd.median / s.B);
    lt_set_int(c, "peak_bytes", (long long)t->peak_bytes);
    lt_set_int(c, "planned_bytes", (long long)planned);
    lt_set_str(c, "note", note);
    LT_TRY(lt_row_end(c));
    return lt_table_sync(c); /* on disk as measured */
}

/* Measures one kernel at length index li, or records why it cannot run
 * there (it then stops). */
static lt_status measure(sweep *w, entry *e, int D, int li)
{
    const options *o = w->opt;
    int N = w->lengths[li];
    lt_attn_shape shape = {.B = (int)(o->batch ? o->batch : (o->tokens / N > 1 ? o->tokens / N : 1)),
                           .H = (int)o->heads, .N = N, .D = D,
                           .M = (int)(o->value_dim ? o->value_dim : D),
                           .seed = (uint64_t)o->common.seed};
    lt_attn_timing timing = {.fwd = {NAN, NAN, NAN, 0}, .fwd_bwd = {NAN, NAN, NAN, 0}};
    lt_attn attn;
    const char *status = "ok";
    size_t planned = 0;
    LT_TRY(lt_attn_init(&attn, &e->config)); /* checked before the sweep */
    if (lt_attn_check_shape(&attn, shape) != LT_OK) {
        status = "refused";
        snprintf(e->why, sizeof e->why, "%s", lt_last_error());
    } else {
        planned = lt_attn_case_bytes(&attn, shape, lt_threads_get());
        double flops = lt_attn_flops(&attn, shape, 0) + lt_attn_flops(&attn, shape, 1);
        lt_attn_admission admission;
        lt_attn_admit_case(&e->last, planned, flops, o->max_case_seconds, &admission);
        status = admission.status;
        snprintf(e->why, sizeof e->why, "%s", admission.why);
        if (strcmp(status, "ok") == 0) {
            LT_TRY(lt_attn_time_case(&attn, shape, (uint64_t)o->common.seed,
                                     (uint64_t)(D * 64 + li), (int)o->warmup, (int)o->repeats,
                                     w->samples, &timing));
            lt_attn_case_ran(&e->last, &timing, flops);
            e->fwd[li] = timing.fwd.median / shape.B;
            e->fwd_bwd[li] = timing.fwd_bwd.median / shape.B;
        }
    }
    e->stopped = strcmp(status, "ok") != 0;
    char note[128];
    snprintf(note, sizeof note, "D=%d %s %s %s N=%d: %s", D,
             e->config.causal ? "causal" : "non-causal", e->config.kernel, e->map, N, status);
    lt_progress_update(&w->progress, ++w->done, note);
    return add_case_row(w, e, shape, status, &timing, planned, e->stopped ? e->why : "");
}

static const char *pass_name(int pass) { return pass ? "fwd+bwd" : "fwd"; }

/* Why a pair's sweep ended, for the table's note. */
static void pair_note(const sweep *w, const entry *ch, const entry *inc, const lt_crossover *c,
                      int settled, char *buf, size_t size)
{
    buf[0] = '\0';
    if (c->kind == LT_CROSSOVER_NONE)
        snprintf(buf, size, "not faster at N=%d, the largest N both ran", c->n_last);
    const entry *sides[] = {ch, inc};
    for (int i = 0; i < 2; i++)
        if (sides[i]->stopped)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s stopped: %s",
                     buf[0] ? "; " : "", sides[i]->config.kernel, sides[i]->why);
    if (lt_interrupted() && !settled)
        snprintf(buf + strlen(buf), size - strlen(buf), "%sinterrupted", buf[0] ? "; " : "");
    else if (settled && c->n_last < w->lengths[w->length_count - 1])
        snprintf(buf + strlen(buf), size - strlen(buf), "%ssettled at N=%d", buf[0] ? "; " : "",
                 c->n_last);
}

static lt_status table_rows(sweep *w, int D, int causal)
{
    const options *o = w->opt;
    lt_table *t = &w->table;
    for (int a = 0; a < w->entry_count; a++)
        for (int b = 0; b < w->entry_count; b++) {
            const entry *ch = &w->entries[a], *inc = &w->entries[b];
            if (!ch->challenger || !entries_paired(ch, inc))
                continue;
            int settled = pair_result(w, ch, inc, 0).settled &&
                          pair_result(w, ch, inc, 1).settled;
            for (int pass = 0; pass <= 1; pass++) {
                lt_crossover c = pair_result(w, ch, inc, pass);
                char text[64], note[700];
                pair_note(w, ch, inc, &c, settled, note, sizeof note);
                int found = c.kind == LT_CROSSOVER_AT || c.kind == LT_CROSSOVER_FROM_SMALLEST;
                lt_row_begin(t);
                lt_set_str(t, "experiment", "crossover");
                lt_set_int(t, "head_dim", D);
                lt_set_int(t, "causal", causal);
                lt_set_str(t, "pass", pass_name(pass));
                lt_set_str(t, "question", question_names[ch->q]);
                lt_set_str(t, "linear_kernel", ch->config.kernel);
                lt_set_str(t, "feature_map", ch->map);
                lt_set_str(t, "softmax_kernel", inc->config.kernel);
                lt_set_int(t, "heads", o->heads);
                lt_set_int(t, "value_dim", o->value_dim ? o->value_dim : D);
                lt_set_int(t, "tokens", o->batch ? 0 : o->tokens);
                lt_set_int(t, "threads", lt_threads_get());
                lt_set_int(t, "seed", o->common.seed);
                lt_set_int(t, "confirm", o->confirm);
                lt_set_num(t, "margin", o->margin);
                lt_set_int(t, "n_min", w->lengths[0]);
                lt_set_int(t, "n_max", w->lengths[w->length_count - 1]);
                /* a pair a signal cut off says so, whatever it found so far */
                lt_set_str(t, "status", lt_interrupted() && !settled    ? "interrupted"
                                        : found                         ? "ok"
                                        : c.kind == LT_CROSSOVER_NONE ? "no-crossover"
                                                                      : "unmeasured");
                lt_set_str(t, "result", lt_crossover_kind_name(c.kind));
                lt_set_num(t, "crossover_n", found ? c.n : NAN);
                lt_set_str(t, "crossover", lt_crossover_describe(&c, text, sizeof text));
                lt_set_int(t, "n_measured", c.measured);
                lt_set_int(t, "n_last", c.n_last);
                lt_set_num(t, "speedup_last", c.ratio_last);
                lt_set_str(t, "note", note);
                LT_TRY(lt_row_end(t));
            }
        }
    return lt_table_sync(t);
}

static lt_status run_group(sweep *w, int D, int causal)
{
    build_group(w, causal);
    for (int li = 0; li < w->length_count && !lt_interrupted(); li++) {
        int any = 0;
        for (int i = 0; i < w->entry_count && !lt_interrupted(); i++) {
            entry *e = &w->entries[i];
            if (e->stopped || (li > 0 && !entry_needed(w, e)))
                continue;
            any = 1;
            LT_TRY(measure(w, e, D, li));
        }
        if (!any)
            break;
        w->measured = li + 1;
    }
    return table_rows(w, D, causal);
}

static lt_status sweep_all(sweep *w)
{
    long total = 0;
    for (int m = 0; m < w->mode_count; m++) {
        build_group(w, w->modes[m]);
        total += (long)w->entry_count * w->length_count * w->head_dim_count;
    }
    printf("ltbench crossover: D = %s, N = %d .. %d, %ld heads, batch %s, %d threads, seed "
           "%ld\n(the progress counts every case; a settled pair stops early)\n",
           w->opt->head_dims, w->lengths[0], w->lengths[w->length_count - 1], w->opt->heads,
           w->opt->batch ? "fixed" : "max(1, tokens / N)", lt_threads_get(),
           w->opt->common.seed);
    fflush(stdout);
    lt_progress_start(&w->progress, stderr, "crossover", total, "cases", w->opt->common.quiet);
    lt_signals_install();
    lt_status status = LT_OK;
    /* after a signal the groups left measure nothing, but their rows say
     * they were cut off: the table is never silently short */
    for (int d = 0; d < w->head_dim_count && status == LT_OK; d++)
        for (int m = 0; m < w->mode_count && status == LT_OK; m++)
            status = run_group(w, (int)w->head_dims[d], w->modes[m]);
    lt_progress_finish(&w->progress, lt_interrupted() ? "interrupted" : NULL);
    return status;
}

/* Every linear and decay configuration and every feature map the sweep
 * will run, validated before the first case. */
static lt_status check_configs(sweep *w)
{
    for (int m = 0; m < w->mode_count; m++) {
        build_group(w, w->modes[m]);
        for (int i = 0; i < w->entry_count; i++) {
            lt_attn attn;
            LT_TRY(lt_attn_init(&attn, &w->entries[i].config));
        }
    }
    return LT_OK;
}

int main(int argc, char **argv)
{
    static options o = {
        .preset = "medium", .head_dims = "16,32,64,128,256", .causal_mode = "both",
        .kernels = "default", .feature_maps = "elu", .min_n = 32, .max_n = 4096, .heads = 4,
        .tokens = 2048, .warmup = 1, .repeats = 3, .confirm = 2, .margin = 1.2,
        .max_case_seconds = 20, .eps = 1e-6, .out = "results/crossover"};
    lt_common_defaults(&o.common);
    static lt_flag flags[32];
    lt_cli cli = {"ltbench crossover",
                  "Beyond the paper: the sequence length from which linear attention is faster "
                  "than softmax, per head dimension.",
                  lt_presets_details(&presets, details), flags, crossover_flags(&o, flags),
                  NULL};
    int exit_now;
    int code = lt_program_parse(&cli, &presets, &o.preset, &o.common, argc, argv, &exit_now);
    if (exit_now)
        return code;
    static sweep w;
    /* kernels named one by one must each serve a masking mode measured */
    w.kernels_given = strcmp(o.kernels, "default") != 0 && strcmp(o.kernels, "all") != 0;
    lt_table_init(&w.cases, &bench_crossover_cases);
    lt_table_init(&w.table, &bench_crossover);
    lt_outdir dir;
    lt_status status = check_options(&w, &o);
    if (status == LT_OK)
        status = check_configs(&w);
    const char *names[] = {"crossover.csv", "crossover-table.csv"};
    if (status == LT_OK)
        status = lt_program_open_csvs(&dir, o.out, names, 2, o.overwrite, w.paths);
    if (status == LT_OK)
        status = lt_table_journal(&w.cases, w.paths[0], NULL);
    if (status == LT_OK)
        status = lt_table_journal(&w.table, w.paths[1], NULL);
    if (status == LT_OK)
        status = sweep_all(&w);
    if (status == LT_OK) {
        printf("\n");
        lt_table_print(&w.table, stdout);
        printf("(crossover N: the smallest N from which the kernel is faster per sample than "
               "the one it is against\n (a linear kernel against softmax, a chunked one against "
               "its recurrent form) at every larger N measured;\n x faster there: the other's "
               "time over the kernel's at the largest N both ran)\n");
    }
    lt_table *tables[] = {&w.cases, &w.table};
    const char *written[] = {w.paths[0], w.paths[1]};
    return lt_program_end_tables(cli.program, status, tables, written, 2, field_flags);
}
