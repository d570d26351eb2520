/* ltbench plot: the paper's figures from result CSVs, as the registry's tables
 * (each experiment's tables.c) declare them; the drawing is src/results/plot.c. */
#include <stdio.h>
#include <sys/stat.h>

#include "core/cli.h"
#include "experiment/flags.h"
#include "results/plot.h"
#include "registry.h"

enum { MAX_INPUTS = 32 };

static const char details[] =
    "Each CSV is recognised by its experiment column and key columns, and every figure its\n"
    "table declares is drawn:\n"
    "  scaling.csv        -> scaling.png: time and peak memory per sample against N,\n"
    "                        log-log, a line per variant x causal x kernel; cases not run\n"
    "                        (skipped, refused) are listed under the title\n"
    "  copy curves.csv    -> copy-curves.png: loss against update and against seconds,\n"
    "                        a line per variant (and kernel or N where several)\n"
    "  image CSV          -> image-bits.png: test bits/dim, a bar per variant, beside\n"
    "                        the paper's (Tables 1-2, from --paper);\n"
    "                        image.png: images/s per variant and batch, a bar per\n"
    "                        generation mode\n"
    "  speech curves CSV  -> speech.png: dev PER against epoch and against seconds\n"
    "Per figure NAME.dat (whitespace-separated, a header comment names its columns) and\n"
    "NAME.gp (the gnuplot script) are written beside NAME.png; a name already used in\n"
    "this run gets -2, -3. Without gnuplot on PATH the scripts and data are still\n"
    "written (exit 0): install gnuplot (./setup.sh installs Debian's gnuplot-nox) and\n"
    "run `gnuplot NAME.gp` in DIR. An unknown or malformed CSV, or one no figure is\n"
    "drawn from, is an error (exit 2) and nothing is written. So is a file of a figure\n"
    "that exists in DIR (an earlier run's), unless --overwrite, and one that is an\n"
    "input CSV, whatever the flags.";

int main(int argc, char **argv)
{
    const lt_schema *tables[64];
    int table_count = bench_tables_of(bench_registry, bench_registry_count, tables, 64);
    lt_plot_options o = {.out = "results/figures", .width = 1200, .height = 560,
                         .paper = "data/paper"};
    lt_flag flags[] = {
        lt_flag_out(&o.out, "the figures, their gnuplot scripts and data"),
        {"-o", LT_FLAG_STRING, &o.out, "DIR", "same as --out", 0, 0, NULL, 0},
        {"--width", LT_FLAG_INT, &o.width, "PX",
         "width of each PNG in pixels; a line figure whose key (its column of series names on "
         "the right) needs more than 30% of it is widened to fit the key, its panels keeping "
         "the other 70%",
         200, 10000, NULL, 0},
        {"--height", LT_FLAG_INT, &o.height, "PX", "height of each PNG in pixels", 150, 10000,
         NULL, 0},
        {"--paper", LT_FLAG_STRING, &o.paper, "DIR",
         "folder of the paper's CSVs: figures that have the paper's values draw them beside the "
         "measured ones (a missing file draws none)",
         0, 0, NULL, 0},
        lt_flag_overwrite(&o.overwrite),
    };
    lt_cli cli = {"ltbench plot", "Draw the paper's figures from result CSVs with gnuplot.",
                  details, flags, (int)(sizeof flags / sizeof flags[0]), NULL};
    const char *files[MAX_INPUTS];
    lt_cli_operands operands = {"CSV...", files, 1, MAX_INPUTS, 0};
    int exit_now;
    int code = lt_cli_parse_tool(&cli, &operands, argc, argv, &exit_now);
    if (exit_now)
        return code;
    /* the default folder may be absent (plot run elsewhere): no paper bars;
     * a folder named on the command line must exist */
    struct stat st;
    if (lt_cli_flag(&cli, "--paper")->seen && (stat(o.paper, &st) != 0 || !S_ISDIR(st.st_mode)))
        return lt_cli_report(cli.program,
                             lt_fail(LT_E_USAGE, "--paper: expected a folder of the paper's "
                                                 "CSVs, got '%s' (no such folder)",
                                     o.paper));
    int drawn = 0;
    lt_status status = lt_plot(tables, table_count, files, operands.count, &o,
                               stdout, &drawn);
    if (status != LT_OK)
        return lt_cli_report(cli.program, status);
    if (!drawn)
        fprintf(stderr,
                "ltbench plot: gnuplot is not on PATH, so no PNG was drawn: the scripts and data "
                "are in %s.\nInstall gnuplot (./setup.sh installs Debian's gnuplot-nox) and run "
                "`gnuplot NAME.gp` there.\n",
                o.out);
    return 0;
}
