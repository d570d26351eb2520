/* Beyond the paper: time per generated token against the context: its result
 * tables, the paper's claims judged on them, and its registry entry (the
 * suite's sections, ablations included). */
#ifndef LT_BENCH_DECODE_H
#define LT_BENCH_DECODE_H

#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_decode;

extern const bench_entry bench_decode_entry;

#endif
