/* Resuming a training run (--resume): the rows earlier runs left, each
 * model continued from its checkpoint or its finished rows kept, journals
 * rewritten so a kill at any instant leaves every row for the next resume,
 * and the builds that trained each checkpoint. The driver's bookkeeping,
 * apart from the driver (experiment.c) that calls it. */
#ifndef LT_EXPERIMENT_RESUME_H
#define LT_EXPERIMENT_RESUME_H

#include "experiment/experiment.h"

/* One table as earlier runs left it: [0] the journal of a run that did not
 * end, [1] the file of one that did; either, both or neither. */
typedef struct lt_exp_previous_table {
    lt_csv_table rows[2];
    int have[2];
    char path[2][4400];
} lt_exp_previous_table;

/* What earlier runs left. A model's rows come from the journal where it
 * holds any of them, else from the finished file: a --resume run reaches
 * the models an earlier run finished only after those it trains, and
 * carries the ones it does not list at its end, so a journal cut off
 * before then holds none of theirs while the file still does. */
typedef struct previous {
    lt_exp_previous_table curves, results;
} lt_exp_previous;

/* The rows of the earlier run's journals and finished files; nothing
 * without --resume. */
lt_status lt_exp_read_previous(lt_exp_previous *p, const lt_exp_run *run);
void lt_exp_free_previous(lt_exp_previous *p);

/* A model's checkpoint, where --resume finds one: continued (its curve rows
 * carried, a checkpoint of another build refused unless
 * --mixed-revisions), or its rows kept as they are when it is finished
 * (*kept). */
lt_status lt_exp_resume_or_keep(lt_exp_run *run, const lt_exp_previous *prev, lt_exp_model *m,
                                lt_trainer *t, lt_fit_state *state, long eval_every, int *kept);

/* A resumed run's journals written whole once `reached` models' rows are
 * carried: those rows, then the earlier journal's rows of models not
 * reached yet. Nothing for a fresh run (its journals only grow). */
lt_status lt_exp_rewrite_journals(lt_exp_run *run, const lt_exp_previous *prev, int reached);

/* The rows of the models this run leaves to earlier runs, carried to the
 * tables for the commit. */
lt_status lt_exp_carry_unlisted(lt_exp_run *run, const lt_exp_previous *prev, int reached);

/* This build as a checkpoint records who trained it (revision, build
 * flags, kernel set, BLAS kernels). */
void lt_exp_this_build(char *buf, size_t size);

/* Rows that end from now on name the revisions of `trained_by` ("A+B"). */
void lt_exp_name_revisions(lt_exp_run *run, const char *trained_by, char *buf, size_t size);

#endif
