/* decode's registry entry: what `ltbench --help` says of it, its result tables,
 * and the suite's runs of it with the report's sections for them. */
#include "decode/decode.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const lt_schema *const tables[] = {&bench_decode};

static const lt_report_section sections[] = {
    {"decode", NULL, "Decoding: time per token and memory against the context",
     "decode/decode.csv", &bench_decode, NULL, &bench_decode, NULL,
     "Per generated token, at each context position: the median time of a window of steps "
     "and the bytes generation holds there (the recurrent state, the key/value cache, or "
     "recompute's forward over the prefix), for every generation mode at each batch size "
     "(`ltbench decode`), the delta rule's and GLA's recurrences among them. Recompute is "
     "measured only where its time budget allows.",
     .part = LT_PART_SWEEP, .conclude = NULL, .args = {"--gen-modes=all", NULL}},
};

const bench_entry bench_decode_entry = {"decode",
    "beyond the paper: time per generated token and state bytes against the context",
    BENCH_BEYOND, tables, COUNT(tables), sections, COUNT(sections)};
