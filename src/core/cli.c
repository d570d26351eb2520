#include "core/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/provenance.h"

lt_flag *lt_cli_flag(lt_cli *cli, const char *name)
{
    for (int i = 0; i < cli->flag_count; i++)
        if (strcmp(cli->flags[i].name, name) == 0)
            return &cli->flags[i];
    return NULL;
}

static int has_range(const lt_flag *flag) { return flag->min != flag->max; }

static lt_status out_of_range(const lt_flag *flag, const char *text)
{
    return lt_fail(LT_E_USAGE, "%s: expected a value in [%g, %g], got '%s'", flag->name,
                   flag->min, flag->max, text);
}

static int choice_matches(const char *choices, const char *text)
{
    size_t len = strlen(text);
    const char *p = choices;
    while (*p) {
        size_t item = strcspn(p, "|");
        if (item == len && strncmp(p, text, len) == 0)
            return 1;
        p += item;
        if (*p == '|')
            p++;
    }
    return 0;
}

lt_status lt_cli_set(lt_flag *flag, const char *text)
{
    char *end = NULL;
    errno = 0;
    switch (flag->type) {
    case LT_FLAG_BOOL:
        *(int *)flag->target = 1;
        return LT_OK;
    case LT_FLAG_INT: {
        long value = strtol(text, &end, 10);
        if (end == text || *end != '\0' || errno != 0)
            return lt_fail(LT_E_USAGE, "%s: expected an integer, got '%s'", flag->name, text);
        if (has_range(flag) && (value < flag->min || value > flag->max))
            return out_of_range(flag, text);
        *(long *)flag->target = value;
        return LT_OK;
    }
    case LT_FLAG_DOUBLE: {
        double value = strtod(text, &end);
        if (end == text || *end != '\0' || errno != 0 || !isfinite(value))
            return lt_fail(LT_E_USAGE, "%s: expected a finite number, got '%s'", flag->name,
                           text);
        if (has_range(flag) && (value < flag->min || value > flag->max))
            return out_of_range(flag, text);
        *(double *)flag->target = value;
        return LT_OK;
    }
    case LT_FLAG_STRING:
        if (*text == '\0')
            return lt_fail(LT_E_USAGE, "%s: expected a non-empty value", flag->name);
        *(const char **)flag->target = text;
        return LT_OK;
    case LT_FLAG_CHOICE:
        /* "--causal --q x": a flag where its value should be */
        if (!choice_matches(flag->choices, text) && strncmp(text, "--", 2) == 0)
            return lt_fail(LT_E_USAGE, "%s: expected one of %s before %s", flag->name,
                           flag->choices, text);
        if (!choice_matches(flag->choices, text))
            return lt_fail(LT_E_USAGE, "%s: expected one of %s, got '%s'", flag->name,
                           flag->choices, text);
        *(const char **)flag->target = text;
        return LT_OK;
    case LT_FLAG_BYTES:
        return lt_mem_parse_bytes((size_t *)flag->target, text, flag->name);
    }
    return lt_fail(LT_E_INTERNAL, "%s: unknown flag type", flag->name);
}

static lt_status take_operand(lt_cli_operands *operands, const char *arg)
{
    if (operands == NULL)
        return lt_fail(LT_E_USAGE, "unexpected argument '%s' (flags start with --)", arg);
    if (operands->count >= operands->max)
        return lt_fail(LT_E_USAGE, "unexpected argument '%s': expected %s", arg,
                       operands->usage);
    operands->items[operands->count++] = arg;
    return LT_OK;
}

/* Edit distance (insertions, deletions, substitutions) of two short words;
 * anything past 63 characters counts as different. */
static int edit_distance(const char *a, const char *b)
{
    enum { MAX = 64 };
    int la = (int)strlen(a), lb = (int)strlen(b), row[MAX + 1];
    if (la > MAX || lb > MAX)
        return MAX;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diagonal = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int above = row[j];
            int best = diagonal + (a[i - 1] != b[j - 1]);
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}

const char *lt_cli_closest(const char *word, const char *const *candidates, int count)
{
    const char *best = NULL;
    int best_distance = 0, len = (int)strlen(word);
    int allowed = len / 3 < 2 ? len / 3 : 2;
    for (int i = 0; i < count; i++) {
        int d = edit_distance(word, candidates[i]);
        if (d <= (allowed > 0 ? allowed : 1) && (best == NULL || d < best_distance)) {
            best = candidates[i];
            best_distance = d;
        }
    }
    return best;
}

/* Whether the space-separated `words` hold `word`. */
static int has_word(const char *words, const char *word)
{
    size_t len = strlen(word);
    for (const char *at = words; *at != '\0'; at += strspn(at, " ")) {
        size_t n = strcspn(at, " ");
        if (n == len && strncmp(at, word, len) == 0)
            return 1;
        at += n;
    }
    return 0;
}

const lt_retired_flag *lt_cli_retired(const lt_retired_flag *retired, const char *program,
                                      const char *name)
{
    const char *space = strrchr(program, ' ');
    const char *short_name = space != NULL ? space + 1 : program;
    for (int i = 0; retired != NULL && retired[i].name != NULL; i++)
        if (strcmp(retired[i].name, name) == 0 &&
            (retired[i].programs == NULL || has_word(retired[i].programs, short_name)))
            return &retired[i];
    return NULL;
}

/* "unknown flag '--stepz' (did you mean --steps?)"; a name the program
 * once took says what replaced it. */
static lt_status unknown_flag(const lt_cli *cli, const char *name)
{
    const lt_retired_flag *old = lt_cli_retired(cli->retired, cli->program, name);
    if (old != NULL)
        return lt_fail(LT_E_USAGE, "%s is now %s%s%s", name, old->now, old->note ? ": " : "",
                       old->note ? old->note : "");
    const char *names[258];
    int n = 0;
    for (int i = 0; i < cli->flag_count && n < 256; i++)
        names[n++] = cli->flags[i].name;
    names[n++] = "--help";
    names[n++] = "--version";
    const char *near = lt_cli_closest(name, names, n);
    if (near != NULL)
        return lt_fail(LT_E_USAGE, "unknown flag '%s' (did you mean %s?)", name, near);
    return lt_fail(LT_E_USAGE, "unknown flag '%s'", name);
}

lt_status lt_cli_parse(lt_cli *cli, int argc, char **argv, int *help_requested)
{
    return lt_cli_parse_operands(cli, NULL, argc, argv, help_requested);
}

lt_status lt_cli_parse_operands(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                                int *help_requested)
{
    *help_requested = 0;
    if (operands)
        operands->count = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help_requested = 1;
            return LT_OK;
        }
        if (strcmp(arg, "--version") == 0) {
            *help_requested = LT_CLI_VERSION;
            return LT_OK;
        }
        /* Without operands every argument must be a --flag. */
        int is_operand =
            operands ? arg[0] != '-' || arg[1] == '\0' : strncmp(arg, "--", 2) != 0;
        if (is_operand) {
            LT_TRY(take_operand(operands, arg));
            continue;
        }
        char name[64];
        const char *inline_value = strchr(arg, '=');
        size_t name_len = inline_value ? (size_t)(inline_value - arg) : strlen(arg);
        if (name_len >= sizeof name)
            return lt_fail(LT_E_USAGE, "unknown flag '%s'", arg);
        memcpy(name, arg, name_len);
        name[name_len] = '\0';
        lt_flag *flag = lt_cli_flag(cli, name);
        if (flag == NULL)
            return unknown_flag(cli, name);
        const char *value = NULL;
        if (flag->type == LT_FLAG_BOOL) {
            if (inline_value)
                return lt_fail(LT_E_USAGE, "%s takes no value, got '%s'", name, arg);
        } else if (inline_value) {
            value = inline_value + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return lt_fail(LT_E_USAGE, "%s: expected a value (%s)", name,
                           flag->type == LT_FLAG_CHOICE ? flag->choices
                           : flag->value_name           ? flag->value_name
                                                        : "VALUE");
        }
        LT_TRY(lt_cli_set(flag, value));
        flag->seen = 1;
    }
    if (operands && operands->count < operands->min)
        return lt_fail(LT_E_USAGE, "expected %s, got %d file%s", operands->usage,
                       operands->count, operands->count == 1 ? "" : "s");
    return LT_OK;
}

static void format_default(const lt_flag *flag, char *buf, size_t size)
{
    switch (flag->type) {
    case LT_FLAG_BOOL:
        snprintf(buf, size, "%s", *(int *)flag->target ? "on" : "off");
        break;
    case LT_FLAG_INT:
        snprintf(buf, size, "%ld", *(long *)flag->target);
        break;
    case LT_FLAG_DOUBLE:
        snprintf(buf, size, "%g", *(double *)flag->target);
        break;
    case LT_FLAG_STRING:
    case LT_FLAG_CHOICE: {
        const char *s = *(const char **)flag->target;
        snprintf(buf, size, "%s", s ? s : "none");
        break;
    }
    case LT_FLAG_BYTES: {
        size_t bytes = *(size_t *)flag->target;
        if (bytes == 0)
            snprintf(buf, size, "0 (no limit)");
        else
            lt_mem_format(buf, size, bytes);
        break;
    }
    }
}

void lt_cli_help(const lt_cli *cli, FILE *out) { lt_cli_help_operands(cli, NULL, out); }

void lt_cli_help_operands(const lt_cli *cli, const lt_cli_operands *operands, FILE *out)
{
    fprintf(out, "usage: %s [flags]%s%s\n\n%s\n\nflags:\n", cli->program, operands ? " " : "",
            operands ? operands->usage : "", cli->summary);
    for (int i = 0; i < cli->flag_count; i++) {
        const lt_flag *flag = &cli->flags[i];
        char left[96], def[256];
        if (flag->type == LT_FLAG_BOOL)
            snprintf(left, sizeof left, "%s", flag->name);
        else if (flag->type == LT_FLAG_CHOICE)
            snprintf(left, sizeof left, "%s %s", flag->name, flag->choices);
        else
            snprintf(left, sizeof left, "%s %s", flag->name,
                     flag->value_name ? flag->value_name : "VALUE");
        format_default(flag, def, sizeof def);
        if (strlen(left) > 26)
            fprintf(out, "  %s\n  %-26s  %s (default: %s)\n", left, "", flag->help, def);
        else
            fprintf(out, "  %-26s  %s (default: %s)\n", left, flag->help, def);
    }
    fprintf(out, "  %-26s  %s\n", "--help, -h", "print this help and exit");
    if (cli->details)
        fprintf(out, "\n%s\n", cli->details);
}

int lt_cli_report(const char *program, lt_status status)
{
    fprintf(stderr, "%s: error: %s\n", program, lt_last_error());
    if (status == LT_E_USAGE)
        fprintf(stderr, "%s: run '%s --help' for the flags\n", program, program);
    return lt_exit_code(status);
}

lt_status lt_cli_split_list(char *text, const char **items, int capacity, int *count,
                            const char *flag)
{
    *count = 0;
    char *p = text;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0')
            return lt_fail(LT_E_USAGE, "%s: expected a comma-separated list without empty items",
                           flag);
        if (*count == capacity)
            return lt_fail(LT_E_USAGE, "%s: at most %d items", flag, capacity);
        items[(*count)++] = p;
        if (!comma)
            return LT_OK;
        p = comma + 1;
    }
}

int lt_cli_parse_tool(lt_cli *cli, lt_cli_operands *operands, int argc, char **argv,
                      int *exit_now)
{
    int help = 0;
    *exit_now = 1;
    lt_provenance_mark_start(); /* the load before this program adds its own */
    lt_status status = lt_cli_parse_operands(cli, operands, argc, argv, &help);
    if (status != LT_OK)
        return lt_cli_report(cli->program, status);
    if (help == LT_CLI_VERSION) {
        printf("%s: ltbench %s\n", cli->program, lt_version_string());
        *exit_now = LT_CLI_VERSION; /* nothing more to print, not even help's tail */
        return 0;
    }
    if (help) {
        lt_cli_help_operands(cli, operands, stdout);
        return 0;
    }
    *exit_now = 0;
    return 0;
}

lt_status lt_cli_split_unique(char *text, const char **items, int capacity, int *count,
                             const char *flag)
{
    LT_TRY(lt_cli_split_list(text, items, capacity, count, flag));
    for (int i = 0; i < *count; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(items[i], items[j]) == 0)
                return lt_fail(LT_E_USAGE, "%s: '%s' is listed twice", flag, items[i]);
    return LT_OK;
}

lt_status lt_cli_split_increasing(const char *text, long *values, int capacity, int *count,
                                  long min, long max, const char *flag)
{
    char copy[1024];
    if (strlen(text) >= sizeof copy)
        return lt_fail(LT_E_USAGE, "%s: a list of at most %zu characters, got %zu", flag,
                       sizeof copy - 1, strlen(text));
    strcpy(copy, text);
    const char *items[256];
    LT_TRY(lt_cli_split_list(copy, items, capacity < 256 ? capacity : 256, count, flag));
    for (int i = 0; i < *count; i++) {
        char *end;
        errno = 0;
        long v = strtol(items[i], &end, 10);
        if (errno != 0 || end == items[i] || *end != '\0' || v < min || v > max)
            return lt_fail(LT_E_USAGE, "%s: expected whole numbers from %ld to %ld, got '%s'",
                           flag, min, max, items[i]);
        if (i > 0 && v <= values[i - 1])
            return lt_fail(LT_E_USAGE, "%s: expected increasing numbers, got %ld after %ld",
                           flag, v, values[i - 1]);
        values[i] = v;
    }
    return LT_OK;
}

void lt_cli_print_wrapped(FILE *out, int width, int indent, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int column = 0, line_start = 1;
    for (const char *at = text; *at != '\0';) {
        size_t word = strcspn(at, " \n");
        if (!line_start && column + 1 + (int)word > width) {
            fprintf(out, "\n%*s", indent, "");
            column = indent;
            line_start = 1;
        } else if (!line_start) {
            fputc(' ', out);
            column++;
        }
        fprintf(out, "%.*s", (int)word, at);
        column += (int)word;
        line_start = 0;
        at += word;
        if (*at == '\n') { /* a line break of the text's own starts a line */
            fputc('\n', out);
            column = 0;
            line_start = 1;
            at++;
        }
        at += strspn(at, " ");
    }
    if (!line_start || column > 0)
        fputc('\n', out);
}
