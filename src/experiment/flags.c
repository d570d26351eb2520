#include "experiment/flags.h"

#include <stdio.h>
#include <string.h>

#include "attn/attn.h"

/* A help text with a program's own part after the shared one. The flags
 * of a program are built once, so a few buffers in turn are enough. */
static const char *with_note(const char *shared, const char *note)
{
    enum { BUFFERS = 32, SIZE = 640 };
    static char help[BUFFERS][SIZE];
    static int next;
    if (note == NULL || note[0] == '\0')
        return shared;
    char *buf = help[next++ % BUFFERS];
    snprintf(buf, SIZE, "%s; %s", shared, note);
    return buf;
}

static lt_flag flag_of(const char *name, lt_flag_type type, void *target, const char *value_name,
                       const char *help, double min, double max, const char *choices)
{
    return (lt_flag){name, type, target, value_name, help, min, max, choices, 0};
}

lt_flag lt_flag_preset(const char **preset)
{
    return flag_of("--preset", LT_FLAG_CHOICE, preset, NULL,
                   "size of the run (see Presets below); the defaults shown are the default "
                   "preset's",
                   0, 0, LT_PRESET_CHOICES);
}

lt_flag lt_flag_out(const char **dir, const char *contents)
{
    return flag_of("--out", LT_FLAG_STRING, dir, "DIR",
                   with_note("folder of the results (created when missing)", contents), 0, 0,
                   NULL);
}

lt_status lt_flag_check_out(const char *dir, const char *contents)
{
    size_t len = strlen(dir);
    if (len > 4 && (strcmp(dir + len - 4, ".csv") == 0 || strcmp(dir + len - 4, ".npy") == 0))
        return lt_fail(LT_E_USAGE, "--out %s: expected a folder (this program writes %s in it)",
                       dir, contents);
    return LT_OK;
}

lt_flag lt_flag_overwrite(int *overwrite)
{
    return flag_of("--overwrite", LT_FLAG_BOOL, overwrite, NULL,
                   "replace the results (and checkpoints) of an earlier run where this one "
                   "writes (they are kept otherwise)",
                   0, 0, NULL);
}

lt_flag lt_flag_resume(int *resume)
{
    return flag_of("--resume", LT_FLAG_BOOL, resume, NULL,
                   "continue an earlier run in OUT: what it finished is kept, the rest "
                   "continues from its checkpoints (or starts fresh where there are none)",
                   0, 0, NULL);
}

lt_flag lt_flag_mixed_revisions(int *mixed)
{
    return flag_of("--mixed-revisions", LT_FLAG_BOOL, mixed, NULL,
                   "with --resume: continue checkpoints written by another revision or build "
                   "(refused otherwise, as the numbers would come from two); the rows of such "
                   "a model name every revision that trained it (git_revision A+B)",
                   0, 0, NULL);
}

lt_flag lt_flag_variants(const char **list, const char *note)
{
    /* the variants from the attention core, so a new one shows up here */
    static char shared[256];
    snprintf(shared, sizeof shared, "comma-separated attention variants from %s (lsh-R: "
             "Reformer with R hashing rounds, the paper's LSH-R)", lt_attn_variant_names());
    return flag_of("--variants", LT_FLAG_STRING, list, "LIST", with_note(shared, note), 0, 0,
                   NULL);
}

lt_flag lt_flag_causal(const char **mode)
{
    return flag_of("--causal", LT_FLAG_CHOICE, mode, NULL,
                   "masking: causal (position i attends to positions <= i only), noncausal, "
                   "or both, each measured in turn (by the programs that sweep)",
                   0, 0, "causal|noncausal|both");
}

int lt_flag_causal_modes(const char *mode, int modes[2])
{
    int count = 0;
    if (strcmp(mode, "causal") != 0)
        modes[count++] = 0;
    if (strcmp(mode, "noncausal") != 0)
        modes[count++] = 1;
    return count;
}

lt_flag lt_flag_kernel(const char **name)
{
    return flag_of("--kernel", LT_FLAG_STRING, name, "NAME",
                   "attention kernel for the variant that has it; the others keep their "
                   "defaults",
                   0, 0, NULL);
}

lt_flag lt_flag_kernels(const char **list, const char *note)
{
    return flag_of("--kernels", LT_FLAG_STRING, list, "LIST",
                   with_note("kernels measured: default, all (every kernel of each variant), "
                             "or comma-separated kernel names",
                             note),
                   0, 0, NULL);
}

lt_flag lt_flag_feature_map(const char **map)
{
    return flag_of("--feature-map", LT_FLAG_CHOICE, map, NULL,
                   "feature map of linear and decay attention: elu (elu + 1, the paper's), "
                   "relu, favor (FAVOR+ random features), taylor (1 + s + s^2/2)",
                   0, 0, "elu|relu|favor|taylor");
}

lt_flag lt_flag_feature_maps(const char **list)
{
    return flag_of("--feature-maps", LT_FLAG_STRING, list, "LIST",
                   "feature maps of the linear and decay kernels, each measured as a kernel of "
                   "its own: elu, relu, favor, taylor (taylor only where D <= 64)",
                   0, 0, NULL);
}

lt_flag lt_flag_eps(double *eps)
{
    return flag_of("--eps", LT_FLAG_DOUBLE, eps, "EPS",
                   "linear attention normaliser epsilon (> 0 with the relu map)", 0, 1, NULL);
}

lt_flag lt_flag_random_features(long *count)
{
    return flag_of("--random-features", LT_FLAG_INT, count, "M",
                   "features of the favor map, drawn from the run's seed per layer", 1, 65536,
                   NULL);
}

lt_flag lt_flag_proj_k(long *k)
{
    return flag_of("--proj-k", LT_FLAG_INT, k, "K",
                   "Linformer's projected length (at most the sequence length)", 1, 1 << 20,
                   NULL);
}

lt_flag lt_flag_lsh_rounds(long *rounds)
{
    return flag_of("--lsh-rounds", LT_FLAG_INT, rounds, "R",
                   "lsh hashing rounds (an lsh-R variant sets R for itself); the paper compares "
                   "1, 4 and 8",
                   1, 64, NULL);
}

lt_flag lt_flag_lsh_buckets(long *buckets)
{
    return flag_of("--lsh-buckets", LT_FLAG_INT, buckets, "B",
                   "lsh buckets a round: 0 = 2 max(1, N / chunk), as Reformer derives them; "
                   "else 1 or an even count",
                   0, 1 << 20, NULL);
}

lt_flag lt_flag_lsh_chunk(long *chunk)
{
    return flag_of("--lsh-chunk", LT_FLAG_INT, chunk, "C",
                   "lsh chunk: sorted positions attended together, with the chunk before", 1,
                   1 << 20, NULL);
}

lt_flag lt_flag_layers(long *layers)
{
    return flag_of("--layers", LT_FLAG_INT, layers, "L", "transformer layers", 1, 1024, NULL);
}

lt_flag lt_flag_heads(long *heads)
{
    return flag_of("--heads", LT_FLAG_INT, heads, "H", "attention heads", 1, 1024, NULL);
}

lt_flag lt_flag_head_dim(long *dim)
{
    return flag_of("--head-dim", LT_FLAG_INT, dim, "D",
                   "dimension per head (of the queries and keys; the model's width is H x D)",
                   1, 4096, NULL);
}

lt_flag lt_flag_value_dim(long *dim)
{
    return flag_of("--value-dim", LT_FLAG_INT, dim, "M",
                   "value dimension per head; 0 = the head dimension", 0, 4096, NULL);
}

lt_flag lt_flag_ffn(long *width)
{
    return flag_of("--ffn", LT_FLAG_INT, width, "F", "feed-forward hidden width", 1, 1 << 20,
                   NULL);
}

lt_flag lt_flag_pos_dim(long *dim)
{
    return flag_of("--pos-dim", LT_FLAG_INT, dim, "P",
                   "columns of the concatenated position encoding; 0 = a quarter of the width",
                   0, 4096, NULL);
}

lt_flag lt_flag_mixtures(long *count)
{
    return flag_of("--mixtures", LT_FLAG_INT, count, "K",
                   "logistic mixture components per byte", 1, 256, NULL);
}

lt_flag lt_flag_tokens(long *tokens)
{
    return flag_of("--tokens", LT_FLAG_INT, tokens, "T",
                   "batch policy: batch = max(1, T / N), so every case holds about T tokens "
                   "(the batch scaled inversely with N, as in the paper)",
                   1, 1 << 30, NULL);
}

lt_flag lt_flag_warmup(long *warmup)
{
    return flag_of("--warmup", LT_FLAG_INT, warmup, "W", "untimed runs before timing", 0, 100,
                   NULL);
}

lt_flag lt_flag_repeats(long *repeats, long max_repeats)
{
    return flag_of("--repeats", LT_FLAG_INT, repeats, "R",
                   "timed runs (median, min, max reported)", 1, (double)max_repeats, NULL);
}

lt_flag lt_flag_gen_modes(const char **list, const char *items)
{
    return flag_of("--gen-modes", LT_FLAG_STRING, list, "LIST",
                   with_note("generation modes: comma-separated, or a set: default, all, fast "
                             "(default without recompute, which re-runs the prefix per token)",
                             items),
                   0, 0, NULL);
}

const lt_retired_flag lt_retired_flags[] = {
    {"--models", "--variants", "bilstm is one of its items", "speech"},
    {"--models", "--variants", NULL, "copy image"},
    {"--modes", "--gen-modes", NULL, "decode image"},
    {"--rounds", "--lsh-rounds", NULL, "attention"},
    {"--buckets", "--lsh-buckets", NULL, "attention"},
    {"--chunk", "--lsh-chunk", NULL, "attention"},
    {"--dq", "--out", "with --dout every gradient is written in OUT (dq.npy)", "attention"},
    {"--dk", "--out", "with --dout every gradient is written in OUT (dk.npy)", "attention"},
    {"--dv", "--out", "with --dout every gradient is written in OUT (dv.npy)", "attention"},
    {"--de", "--out", "with --dout every gradient is written in OUT (de.npy)", "attention"},
    {"--df", "--out", "with --dout every gradient is written in OUT (df.npy)", "attention"},
    {"--dbeta", "--out", "with --dout every gradient is written in OUT (dbeta.npy)",
     "attention"},
    {"--dlog-alpha", "--out", "with --dout every gradient is written in OUT (dlog_alpha.npy)",
     "attention"},
    {NULL, NULL, NULL, NULL},
};
