/* image's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "image/image.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_image_results, &bench_image_curves};

static const lt_report_section sections[] = {
    {"image", "mnist", "Image generation (the paper's Table 1)", "image/mnist.csv",
     &bench_image_results, NULL, &bench_image_results, "table1-mnist.csv",
     "linear attention's bits/dim is close to softmax's, and it generates hundreds of times "
     "faster than softmax recomputing the prefix.", .part = LT_PART_PAPER,
     .conclude = bench_image_claims,
     .paper_config = "8 layers, 8 heads of 32, FFN 1024, RAdam 1e-4, 250 epochs of 60000 "
                     "images",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "cifar10", "Image generation (the paper's Table 2)", "image/cifar10.csv",
     &bench_image_results, NULL, &bench_image_results, "table2-cifar10.csv",
     "linear attention matches softmax's bits/dim and generates thousands of times faster "
     "than softmax recomputing the prefix.", .part = LT_PART_PAPER, .conclude = bench_image_claims,
     .paper_config = "16 layers, 8 heads of 32, FFN 1024, RAdam 1e-4, about 7 days on one GPU "
                     "over the 50000 CIFAR-10 training images",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "mnist", "MNIST generation at the paper's size (speed only)",
     "image-paper/mnist.csv", &bench_image_results, NULL, NULL, "table1-mnist.csv",
     "linear attention generates 317x faster than softmax recomputing the prefix, LSH-1 1.5x "
     "and LSH-4 0.6x, measured on the paper's MNIST architecture (8 layers, 8 heads of 32, "
     "FFN 1024). Here that architecture generates with untrained weights (speed does not "
     "depend on them; medium preset only), so the speed-ups are judged where the paper "
     "measured them.",
     .part = LT_PART_PAPER, .conclude = bench_image_claims, .only_preset = "medium",
     .args = {"--layers=8", "--heads=8", "--head-dim=32", "--ffn=1024", "--gen-only",
      "--gen-batches=1", "--gen-images=1", "--completions=0", NULL},
     .paper_config = "8 layers, 8 heads of 32, FFN 1024, trained 250 epochs; images/s on one "
                     "GPU",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "cifar10", "CIFAR-10 generation at the paper's size (speed only; its CPU appendix)",
     "image-paper/cifar10.csv", &bench_image_results, NULL, NULL, "table2-cifar10.csv",
     "linear attention generates 4462x faster than softmax recomputing the prefix on the "
     "authors' GPU (Table 2); on a CPU, one CIFAR-10 image at batch 1 takes softmax "
     "recomputing the prefix 8651 s, softmax with a key/value cache (stateful) 71.9 s and "
     "linear attention 45.1 s (the appendix). Here the paper's CIFAR-10 architecture (16 "
     "layers, 8 heads of 32, FFN 1024) generates with untrained weights (speed does not "
     "depend on them; medium preset only). Reformer is not run at this size (recomputing its "
     "prefix costs about what softmax's does, as at MNIST's 8 layers), so Table 2's LSH "
     "speed-ups are not measured.",
     .part = LT_PART_PAPER, .conclude = bench_image_paper_cifar_claims, .only_preset = "medium",
     .args = {"--layers=16", "--heads=8", "--head-dim=32", "--ffn=1024", "--gen-only",
      "--gen-batches=1", "--gen-images=1", "--variants=softmax,linear", "--completions=0",
      NULL},
     .paper_config = "16 layers, 8 heads of 32, FFN 1024, trained 100 epochs; images/s on one "
                     "GPU (Table 2), seconds per image on a CPU (the appendix)",
     .paper_also = "appendix-cpu-cifar10.csv",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "mnist", "MNIST, seed 2", "image-seed2/mnist.csv", &bench_image_results, NULL,
     NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=2", "--gen-modes=fast", NULL},
     .seed_of = "image/mnist.csv",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "cifar10", "CIFAR-10, seed 2", "image-seed2/cifar10.csv", &bench_image_results,
     NULL, NULL, NULL, "", .part = LT_PART_SEED, .conclude = NULL, .only_preset = "medium",
     .args = {"--seed=2", "--gen-modes=fast", NULL}, .seed_of = "image/cifar10.csv",
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "mnist", "Image generation: twice the depth (an ablation)", "image-l4/mnist.csv",
     &bench_image_results, NULL, NULL, NULL,
     "The medium preset's MNIST models again with 4 layers instead of 2, softmax and linear "
     "only, the same updates, to tell whether depth closes linear attention's gap to softmax "
     "in bits/dim (the paper's models have 8 layers; medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--layers=4", "--variants=softmax,linear", NULL},
     .runs = {"image", "image-l4", "image-long", "image-seed2", "image-drop7", NULL},
     .extra = bench_image_ablation,
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "mnist", "Image generation: twice the updates (an ablation)",
     "image-long/mnist.csv", &bench_image_results, NULL, NULL, NULL,
     "The medium preset's MNIST models again for twice its updates, the learning rate dropped "
     "tenfold for the last 4000 as the preset drops it for its last 2000, softmax and linear "
     "only, to tell whether more training closes linear attention's gap to softmax in "
     "bits/dim; the depth ablation's section above sets both beside the preset's models "
     "(medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--steps=28000", "--lr-drops=24000:0.1", "--variants=softmax,linear", NULL},
     .extra = NULL,
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
    {"image", "mnist", "Image generation: an earlier learning-rate drop (an ablation)",
     "image-drop7/mnist.csv", &bench_image_results, NULL, NULL, NULL,
     "The medium preset's MNIST models again with the learning rate dropped tenfold after "
     "7000 updates instead of 12000, the same updates, softmax and linear only, to tell "
     "whether the schedule, at no cost in time, closes linear attention's gap to softmax in "
     "bits/dim; the depth ablation's section above sets both beside the preset's models "
     "(medium preset only).",
     .part = LT_PART_ABLATION, .conclude = NULL, .only_preset = "medium",
     .args = {"--lr-drops=7000:0.1", "--variants=softmax,linear", NULL}, .extra = NULL,
     .describe = bench_image_describe, .grid_view = bench_image_grid_view},
};

const bench_entry bench_image_entry = {"image",
    "MNIST / CIFAR-10 autoregressive pixel generation: bits/dim, images/s",
    BENCH_PAPER, tables, COUNT(tables), sections, COUNT(sections)};
