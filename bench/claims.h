/* The paper's conclusions per experiment, judged on its result table (and
 * the paper's CSV from data/paper where it has one): the report's
 * "conclusion" column. */
#ifndef LT_BENCH_CLAIMS_H
#define LT_BENCH_CLAIMS_H

#include "results/claims.h"

int bench_copy_claims(const lt_csv_table *results, const lt_csv_table *paper, lt_claim *claims);
int bench_scaling_claims(const lt_csv_table *results, const lt_csv_table *paper,
                         lt_claim *claims);
int bench_image_claims(const lt_csv_table *results, const lt_csv_table *paper, lt_claim *claims);
int bench_speech_claims(const lt_csv_table *results, const lt_csv_table *paper,
                        lt_claim *claims);

#endif
