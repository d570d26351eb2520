/* Progress of long runs, on stderr only (stdout carries results). On a
 * terminal: one line redrawn in place, cut to the terminal's width so it
 * never wraps (a wrapped line would be redrawn below itself), with rate,
 * ETA and, when more work follows this bar's, the ETA of all of it.
 * Otherwise: a plain line at most every `interval` seconds, so logs stay
 * readable. Silent when quiet. Updates are cheap and never allocate, so
 * they may sit in loops. */
#ifndef LT_CORE_PROGRESS_H
#define LT_CORE_PROGRESS_H

#include <stdio.h>

typedef struct lt_progress {
    FILE *out;
    char label[64];
    char unit[16];
    long total;
    long done;
    long first;     /* done at start: rates count only what this run did */
    double start;
    double last_print;
    double interval;
    int is_terminal;
    int quiet;
    long later;     /* items of the work after this bar's: the overall ETA */
} lt_progress;

/* total <= 0 means unknown. `unit` names what is counted ("steps"). */
void lt_progress_start(lt_progress *p, FILE *out, const char *label, long total,
                       const char *unit, int quiet);

/* As lt_progress_start for a run that resumes with `done` items already
 * finished: the bar starts there, and rate and ETA count only new items. */
void lt_progress_resume(lt_progress *p, FILE *out, const char *label, long total, long done,
                        const char *unit, int quiet);

/* Records `done` items finished; `note` (may be NULL) is appended, e.g.
 * "loss 2.31". Prints if due. */
void lt_progress_update(lt_progress *p, long done, const char *note);

/* `later` items of the same kind follow this bar's (the next models of a
 * run): the ETA then also says when all of it ends. */
void lt_progress_set_later(lt_progress *p, long later);

/* The terminal form of the line into buf, at most `columns` - 1
 * characters: the bar narrows and the note is cut to fit. */
void lt_progress_line(const lt_progress *p, const char *note, int final, int columns, char *buf,
                      size_t size);

/* Prints the final state and ends the line. */
void lt_progress_finish(lt_progress *p, const char *note);

/* Formats an ETA or duration as "1h02m", "3m05s" or "12.3s". */
const char *lt_progress_duration(char *buf, size_t size, double seconds);

#endif
