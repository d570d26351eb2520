/* Ctrl-C and SIGTERM as requests: a long run polls lt_interrupted() and
 * stops after its current unit of work (an update, a case) with its results
 * written; a second request stops at once, the default way.
 *
 * A signal the process inherited as ignored (a background job of a
 * non-interactive shell ignores SIGINT) stays ignored for the whole run:
 * the convention is to leave an inherited "ignore" alone. */
#ifndef LT_CORE_SIGNALS_H
#define LT_CORE_SIGNALS_H

/* Installs the handlers for SIGINT and SIGTERM (each unless inherited as
 * ignored). Safe to call more than once. */
void lt_signals_install(void);

/* The signal received (0 if none). */
int lt_interrupted(void);

/* 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM. */
int lt_interrupt_exit_code(void);

#endif
