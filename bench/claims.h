/* The paper's conclusions per experiment, judged on its result table (and
 * the paper's CSV from data/paper where it has one): the report's
 * "conclusion" column. */
#ifndef LT_BENCH_CLAIMS_H
#define LT_BENCH_CLAIMS_H

#include "results/claims.h"

/* Each is an lt_conclude_fn: runs[0] the run shown, runs[1..] the same
 * run from other seeds. Quality claims judge over the seeds (mean and
 * range quoted; "cannot be judged here" within their spread, with fewer
 * seeds than the rule needs, below the medium preset, or for images that
 * have not learned enough); speed claims on the run shown. */
int bench_copy_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                      lt_claim *claims);
int bench_scaling_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                         lt_claim *claims);
int bench_image_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                       lt_claim *claims);
int bench_speech_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                        lt_claim *claims);

/* The paper's appendix: seconds per CIFAR-10 image at batch 1 on a CPU,
 * per generation mode, against the rows of a --gen-only run at its
 * architecture. */
int bench_image_cpu_claims(const lt_csv_table *const *runs, int count,
                           const lt_csv_table *paper, lt_claim *claims);

/* The copy ablation under its section: training copy accuracy at several
 * update counts and held-out accuracy, for each head width run in the
 * suite's folder `out` (copy/ and copy-h16/). */
void bench_copy_ablation(FILE *f, const char *out);

/* The speech ablation under its section: each model of speech-8h/ beside
 * the same model in speech/ (2 hours of audio): updates, final training and
 * dev loss, dev and test PER, time per epoch. Nothing unless both runs'
 * results and curves are in `out`. */
void bench_speech_ablation(FILE *f, const char *out);

/* The speech dropout ablation under its section: softmax and linear of
 * speech-dropout/ (trained with dropout) beside the same models in speech/
 * (none), as bench_speech_ablation sets them, and each one's test PER
 * against the Bi-LSTM's of speech/. Nothing unless both runs' results and
 * curves are in `out`. */
void bench_speech_dropout_ablation(FILE *f, const char *out);

/* The MNIST ablations under their section: softmax and linear of image-l4/
 * (4 layers), image-long/ (twice the updates), image-seed2/ (another seed)
 * and image-drop7/ (the learning rate dropped after 7000 updates, not
 * 12000) beside those of image/ (the medium preset's): test bits/dim and
 * linear's relative gap, and the gap in training bits/dim at several update
 * counts. The ablations whose results and curves are in `out`; nothing
 * without image/'s or without any. */
void bench_image_ablation(FILE *f, const char *out);

#endif
