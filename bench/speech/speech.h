/* CTC speech recognition (the paper's Table 3): its result tables, the
 * paper's claims judged on them, and its registry entry (the suite's
 * sections, ablations included). */
#ifndef LT_BENCH_SPEECH_H
#define LT_BENCH_SPEECH_H

#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_speech_curves, bench_speech_results;

/* Table 3's claims (an lt_conclude_fn): PER over the seeds, and the times
 * per epoch where the run was timed alone. */
int bench_speech_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                        lt_claim *claims);

/* Table 3's time-per-epoch claims alone: a short run timed in a quiet
 * sitting, for quality runs trained beside other work. */
int bench_speech_speed_claims(const lt_csv_table *const *runs, int count,
                              const lt_csv_table *paper, lt_claim *claims);

/* The audio ablation under its section: each model of runs[1] (more hours
 * of audio) beside the same model in runs[0] (the preset's): updates,
 * final training and dev loss, dev and test PER. Nothing unless both runs'
 * results and curves are in `out`. */
void bench_speech_ablation(FILE *f, const char *out, const char *const *runs);

/* The dropout ablation under its section: softmax and linear of runs[1]
 * (trained with dropout) beside the same models in runs[0] (none), as
 * bench_speech_ablation sets them, and each one's test PER against runs[0]'s
 * Bi-LSTM. Nothing unless both runs' results and curves are in `out`. */
void bench_speech_dropout_ablation(FILE *f, const char *out, const char *const *runs);

/* The run in the report's words: hours of speech, utterances, positions,
 * the most-frequent-phone baseline (an lt_section_describe_fn). */
void bench_speech_describe(FILE *f, const lt_csv_table *t);

extern const bench_entry bench_speech_entry;

#endif
