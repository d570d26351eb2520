/* Command-line flags for the ltbench programs: one table per program gives
 * every flag its type, target, range and help text, so parsing, validation
 * and --help can never disagree. Defaults are whatever the targets hold when
 * lt_cli_parse is called, and --help prints exactly those. */
#ifndef LT_CORE_CLI_H
#define LT_CORE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"

typedef enum lt_flag_type {
    LT_FLAG_BOOL,   /* int target; the flag alone sets it to 1 */
    LT_FLAG_INT,    /* long target, checked against [min, max] */
    LT_FLAG_DOUBLE, /* double target, finite, checked against [min, max] */
    LT_FLAG_STRING, /* const char * target (points into argv) */
    LT_FLAG_CHOICE, /* const char * target, one of `choices` ("a|b|c") */
    LT_FLAG_BYTES   /* size_t target: "512M", "8G", a plain count, 0 */
} lt_flag_type;

typedef struct lt_flag {
    const char *name;       /* "--seq" */
    lt_flag_type type;
    void *target;
    const char *value_name; /* "N", "PATH": shown in --help */
    const char *help;
    double min, max;        /* inclusive range for INT and DOUBLE (min == max: no range) */
    const char *choices;    /* for CHOICE: "softmax|linear|linformer" */
    int seen;               /* set by lt_cli_parse when given on the command line */
} lt_flag;

/* A flag name a program no longer takes, and what took its place: given,
 * it is refused with "NAME is now NOW" (and the note) rather than as an
 * unknown flag. */
typedef struct lt_retired_flag {
    const char *name;     /* "--models" */
    const char *now;      /* "--variants" */
    const char *note;     /* what else changed ("bilstm is one of its items"), or NULL */
    const char *programs; /* the programs (by their last word) that had it: "speech image" */
} lt_retired_flag;

typedef struct lt_cli {
    const char *program;    /* "ltbench copy" */
    const char *summary;    /* one line: what it does */
    const char *details;    /* paragraphs after the flag list, or NULL */
    lt_flag *flags;
    int flag_count;
    const lt_retired_flag *retired; /* ended by a NULL name; NULL: none */
} lt_cli;

/* What *help_requested holds for --version (1: --help). */
enum { LT_CLI_VERSION = 2 };

/* Parses argv[1..argc-1]. `--help`/`-h` sets *help_requested and stops;
 * `--version` sets it to LT_CLI_VERSION.
 * Accepts "--flag value" and "--flag=value". Unknown flags, missing values,
 * positional arguments, values of the wrong type or out of range fail with
 * LT_E_USAGE and a message that names the flag and what it expected. */
lt_status lt_cli_parse(lt_cli *cli, int argc, char **argv, int *help_requested);

/* Sets a flag's target from text exactly as the command line would (type,
 * range and choice checks; LT_E_USAGE naming the flag). Does not mark it
 * seen: presets fill unset flags through this. */
lt_status lt_cli_set(lt_flag *flag, const char *text);

/* Operands: the arguments that are not flags, for tools that take files. */
typedef struct lt_cli_operands {
    const char *usage;  /* "BASE.csv NEW.csv": shown in usage and errors */
    const char **items; /* receives up to `max` of them, in order */
    int min, max;
    int count;          /* set by lt_cli_parse_operands */
} lt_cli_operands;

/* lt_cli_parse that also takes operands: an argument not starting with '-'
 * (or a lone "-") is an operand. Fewer than operands->min or more than
 * operands->max is LT_E_USAGE naming operands->usage. Flags may then also be
 * spelled with one dash ("-o"), as the table names them. */
lt_status lt_cli_parse_operands(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                                int *help_requested);

/* The whole command line of a tool: lt_cli_parse_operands, then --help
 * printed (*exit_now = 1, returns 0), --version printed (*exit_now =
 * LT_CLI_VERSION, returns 0) or a bad command line reported (*exit_now =
 * 1, returns its exit code); otherwise *exit_now = 0. */
int lt_cli_parse_tool(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                      int *exit_now);

/* Writes usage, summary, every flag with its default, and details. */
void lt_cli_help(const lt_cli *cli, FILE *out);

/* lt_cli_help with the operands in the usage line (operands may be NULL). */
void lt_cli_help_operands(const lt_cli *cli, const lt_cli_operands *operands, FILE *out);

/* The flag entry by name, or NULL. */
lt_flag *lt_cli_flag(lt_cli *cli, const char *name);

/* The entry of `retired` that `program` ("ltbench speech") once took as
 * `name`, or NULL. */
const lt_retired_flag *lt_cli_retired(const lt_retired_flag *retired, const char *program,
                                      const char *name);

/* The candidate closest to `word` by edit distance, if close enough to be
 * what was meant (a typo: at most a third of its letters, and 2, away);
 * NULL otherwise. */
const char *lt_cli_closest(const char *word, const char *const *candidates, int count);

/* printf, wrapped at `width` columns between words, continuation lines
 * indented by `indent`, ending with a line break: what a program says on a
 * terminal fits it. */
void lt_cli_print_wrapped(FILE *out, int width, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prints "<program>: error: <message>" to stderr with a hint to --help for
 * usage errors, and returns the exit code for `status`. */
int lt_cli_report(const char *program, lt_status status);

/* Splits a comma-separated list in place: items receive pointers into
 * `text`; fails with LT_E_USAGE naming `flag` if there are more than
 * `capacity` items or an empty item. */
lt_status lt_cli_split_list(char *text, const char **items, int capacity, int *count,
                            const char *flag);

/* lt_cli_split_list with each item at most once (LT_E_USAGE naming `flag`
 * and the repeated item otherwise). */
lt_status lt_cli_split_unique(char *text, const char **items, int capacity, int *count,
                              const char *flag);

/* A comma-separated list of whole numbers in [min, max], each larger than
 * the one before ("16,32,64"): values receive them. LT_E_USAGE naming
 * `flag` and the item for text that is not such a list. */
lt_status lt_cli_split_increasing(const char *text, long *values, int capacity, int *count,
                                  long min, long max, const char *flag);

#endif
