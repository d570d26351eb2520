/* copy's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "copy/copy.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_copy_summary, &bench_copy_curves};

static const lt_report_section sections[] = {
    {"copy", NULL, "Copy task (the paper's Figure 2)", "copy/summary.csv", &bench_copy_summary,
     "copy/curves.csv", &bench_copy_curves, NULL,
     "linear attention converges smoothly to the same loss as softmax; Reformer LSH does "
     "worse; chance accuracy is 0.1.", .part = LT_PART_PAPER, .conclude = bench_copy_claims,
     .paper_config = "4 layers, 8 heads of 32, FFN 1024, dropout 0.1, batch 64, RAdam 1e-3 "
                     "dropped to 1e-4 after 3000 updates, sequences of at most 128"},
    {"copy", NULL, "Copy task, seed 2", "copy-seed2/summary.csv", &bench_copy_summary, NULL,
     NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=2", NULL},
     .seed_of = "copy/summary.csv"},
    {"copy", NULL, "Copy task, seed 3", "copy-seed3/summary.csv", &bench_copy_summary, NULL,
     NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=3", NULL},
     .seed_of = "copy/summary.csv"},
    {"copy", NULL, "Copy task: what drives convergence (an ablation)", "copy-h16/summary.csv",
     &bench_copy_summary, "copy-h16/curves.csv", &bench_copy_curves, NULL,
     "The medium preset's copy task again with heads of 16 dimensions instead of 32 (the "
     "small preset's), softmax and linear only, for the first 6000 of its updates (the "
     "learning rate drops at 5000 in both), to tell the head width's part in linear "
     "attention's convergence from the number of updates' (medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--head-dim=16", "--variants=softmax,linear", "--steps=6000", NULL},
     .runs = {"copy-h16", "copy", NULL},
     .extra = bench_copy_ablation},
    {"copy", NULL, "Copy task: the delta rule and gating (beyond the paper)",
     "copy-delta/summary.csv", &bench_copy_summary, "copy-delta/curves.csv", &bench_copy_curves,
     NULL,
     "The medium preset's copy task with the linear attention deployed today beside softmax "
     "and the paper's linear attention, all trained in one run: DeltaNet's error-correcting "
     "state update (delta), its gated form (gated-delta, Gated DeltaNet's) and per-channel "
     "data-dependent decay (gla, GLA's), to tell whether overwriting the state, rather than "
     "only adding to it, closes linear attention's gap to softmax (medium preset only).",
     .part = LT_PART_ABLATION, .only_preset = "medium",
     .args = {"--variants=softmax,linear,delta,gated-delta,gla", NULL},
     .runs = {"copy-delta", NULL}, .extra = bench_copy_delta_answer},
};

const bench_entry bench_copy_entry = {"copy",
    "synthetic copy task: convergence, time per step and memory (paper Fig. 2)",
    BENCH_PAPER, tables, COUNT(tables), sections, COUNT(sections)};
