#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "copy/copy.h"
#include "crossover/crossover.h"
#include "decode/decode.h"
#include "image/image.h"
#include "scaling/scaling.h"
#include "speech/speech.h"

/* The tools: programs over others' results or inputs, with no tables or
 * suite sections of their own. */
static const bench_entry bench_attention_entry = {
    "attention", "run one attention kernel on .npy inputs (check against your framework)",
    BENCH_TOOL, NULL, 0, NULL, 0};
static const bench_entry bench_plot_entry = {
    "plot", "redraw the paper's figures from result CSVs (gnuplot)", BENCH_TOOL, NULL, 0, NULL,
    0};
static const bench_entry bench_compare_entry = {
    "compare", "compare two result CSVs: pass/fail for performance-regression tracking",
    BENCH_TOOL, NULL, 0, NULL, 0};
static const bench_entry bench_ab_entry = {
    "ab", "time two builds alternately on one machine: which kernels got slower, surely",
    BENCH_TOOL, NULL, 0, NULL, 0};
static const bench_entry bench_suite_entry = {
    "suite", "every experiment at one preset, every figure, and a report beside the paper",
    BENCH_TOOL, NULL, 0, NULL, 0};

/* In the order ltbench --help lists them and the suite runs them. */
const bench_entry *const bench_registry[] = {
    &bench_copy_entry,      &bench_scaling_entry, &bench_image_entry,   &bench_speech_entry,
    &bench_crossover_entry, &bench_decode_entry,  &bench_attention_entry, &bench_plot_entry,
    &bench_compare_entry,   &bench_ab_entry,      &bench_suite_entry,
};
const int bench_registry_count = sizeof bench_registry / sizeof bench_registry[0];

const bench_entry *bench_find(const bench_entry *const *entries, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (strcmp(entries[i]->name, name) == 0)
            return entries[i];
    return NULL;
}

int bench_tables_of(const bench_entry *const *entries, int count, const lt_schema **out,
                    int capacity)
{
    int n = 0;
    for (int i = 0; i < count; i++)
        for (int t = 0; t < entries[i]->table_count && n < capacity; t++)
            out[n++] = entries[i]->tables[t];
    return n;
}

int bench_sections_of(const bench_entry *const *entries, int count, lt_report_section *out,
                      int capacity)
{
    int n = 0;
    for (int part = LT_PART_PAPER; part <= LT_PART_ABLATION; part++)
        for (int i = 0; i < count; i++)
            for (int s = 0; s < entries[i]->section_count && n < capacity; s++)
                if ((int)entries[i]->sections[s].part == part)
                    out[n++] = entries[i]->sections[s];
    return n;
}

void bench_suite_names(const bench_entry *const *entries, int count, const char *separator,
                       char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && n < size; i++)
        if (entries[i]->section_count > 0)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n > 0 ? separator : "",
                                  entries[i]->name);
}
