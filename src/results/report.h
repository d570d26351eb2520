/* The Markdown report of `ltbench suite`: the commands run, the machine,
 * and per experiment its result table (the columns its schema shows) beside
 * the paper's table (a CSV of data/paper) and the paper's claim in words,
 * with the figure drawn from it; then, under "Beyond the paper", the sweeps
 * the paper does not run, each with what it measures. */
#ifndef LT_RESULTS_REPORT_H
#define LT_RESULTS_REPORT_H

#include "core/status.h"
#include "results/claims.h"
#include "results/table.h"

/* Writes more under a section's tables from the CSVs in the suite's output
 * folder `out`, read from the run folders `runs` (the section's `runs`,
 * NULL-ended): an ablation that sets two or more side by side, or one
 * run's answer to the question its section asks. */
typedef void (*lt_section_extra_fn)(FILE *f, const char *out, const char *const *runs);

/* Says more of the run after "Preset P" in a section's opening sentence,
 * from its result table: "; ..." clauses (what data, how much of it). */
typedef void (*lt_section_describe_fn)(FILE *f, const lt_csv_table *t);

/* The picture of a run's image grid the report shows: writes `view` from
 * `grid` (its completions grid, `completions`, tells the tile size; `mark`:
 * `grid` is that completions grid, whose prompt ends are marked) and
 * returns 1 where the run wrote it in an older, unreadable form (actual
 * size, unmarked); 0 where the grid is shown as written, -1 where it could
 * not be read or the view not written. */
typedef int (*lt_section_grid_fn)(const char *grid, const char *completions, const char *view,
                                  int mark);

/* Where a section stands in the report, in this order: the paper's
 * experiments, other seeds of them (judged with them, not shown alone),
 * then under "Beyond the paper" the sweeps the paper does not run and the
 * ablations. */
typedef enum lt_section_part {
    LT_PART_PAPER,
    LT_PART_SEED,
    LT_PART_SWEEP,
    LT_PART_ABLATION,
} lt_section_part;

typedef struct lt_report_section {
    const char *experiment; /* the program */
    const char *dataset;    /* image: the --dataset it ran with, else NULL */
    const char *title;
    const char *results;    /* its result CSV, relative to the output folder */
    const lt_schema *schema;
    const char *curves;     /* the CSV its figure is drawn from, when not the results */
    const lt_schema *drawn; /* the table of that figure (NULL: none) */
    const char *paper;      /* the paper's CSV in the paper folder, or NULL */
    const char *says;       /* the paper's claim, in words; beyond: what the sweep shows */
    lt_section_part part;
    /* The paper's claims judged on the results (and the paper's CSV),
     * printed as a table under them; NULL: none. */
    lt_conclude_fn conclude;
    /* For the suite: the one preset this section runs at (NULL: every
     * preset) and arguments added to its command line. */
    const char *only_preset;
    const char *args[12];
    lt_section_extra_fn extra; /* NULL: nothing more */
    const char *runs[8];       /* the run folders `extra` reads, NULL-ended */
    /* Another seed of the section whose results are `seed_of` (NULL: none):
     * the suite runs it; the report shows no section for it, and gives its
     * rows to that section's claims, which judge over the seeds. */
    const char *seed_of;
    /* The paper's configuration for this table, in words (NULL: none),
     * said at the section's start beside the one measured here. */
    const char *paper_config;
    lt_section_describe_fn describe; /* NULL: the preset alone */
    lt_section_grid_fn grid_view;    /* NULL: image grids shown as written */
    /* A second CSV of the paper folder (NULL: none), shown under `paper`;
     * its rows join the paper's (lt_csv_table_concat) for the claims. */
    const char *paper_also;
} lt_report_section;

typedef struct lt_report {
    const char *preset, *out, *path, *paper;
    int rewritten;            /* written again from earlier CSVs, nothing run */
    const char *const *commands; /* the command lines, with what became of them */
    const char *const *names;    /* each command's program */
    const char *const *notes;    /* and why it was not run ("" when it was) */
    int count;
} lt_report;

/* Writes the report to r->path (atomically); sections whose CSV is not in
 * r->out are left out. */
lt_status lt_report_write(const lt_report *r, const lt_report_section *sections, int count);

/* How many result CSVs of `s` and its seeds (sections whose seed_of names
 * its results) are in OUT; their paths into paths (LT_SEEDS_MAX). */
int lt_report_seed_paths(const lt_report *o, const lt_report_section *sections, int count,
                         const lt_report_section *s, char paths[][4400]);

#endif
