/* Drawing the figures a result table declares (lt_schema.figures) with
 * gnuplot: the engine of `ltbench plot`. Per figure NAME.dat (the data,
 * whitespace-separated, a header comment naming its columns) and NAME.gp
 * (the script that draws it) are written beside NAME.png, so a figure can
 * be restyled without ltbench; a name already used in the run gets -2, -3.
 * Cases not run (status other than ok) are listed under the title. */
#ifndef LT_RESULTS_PLOT_H
#define LT_RESULTS_PLOT_H

#include <stdio.h>

#include "results/table.h"

typedef struct lt_plot_options {
    const char *out;    /* folder */
    long width, height; /* pixels of each PNG */
    const char *paper;  /* folder of the paper's CSVs (NULL: draw none) */
    int overwrite;      /* replace files of an earlier run in `out` */
} lt_plot_options;

/* Recognises each CSV among `schemas` and draws its figures; a line per
 * figure goes to `out`. Without gnuplot on PATH the scripts and data are
 * still written and *drawn is 0. LT_E_INPUT, before anything is written,
 * for an unknown or malformed CSV or one no figure is drawn from;
 * LT_E_USAGE (lt_output_check, naming --out) for a file it would write
 * that exists, unless o->overwrite, or that is one of `paths`. */
lt_status lt_plot(const lt_schema *const *schemas, int count, const char *const *paths,
                  int npaths, const lt_plot_options *o, FILE *out, int *drawn);

#endif
