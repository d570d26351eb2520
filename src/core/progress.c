#include "core/progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/timer.h"

const char *lt_progress_duration(char *buf, size_t size, double seconds)
{
    if (!(seconds >= 0) || seconds > 1e8)
        snprintf(buf, size, "?");
    else if (seconds >= 3600)
        snprintf(buf, size, "%dh%02dm", (int)(seconds / 3600), (int)(seconds / 60) % 60);
    else if (seconds >= 60)
        snprintf(buf, size, "%dm%02ds", (int)(seconds / 60), (int)seconds % 60);
    else
        snprintf(buf, size, "%.1fs", seconds);
    return buf;
}

void lt_progress_start(lt_progress *p, FILE *out, const char *label, long total,
                       const char *unit, int quiet)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    snprintf(p->label, sizeof p->label, "%s", label);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->total = total;
    p->quiet = quiet;
    p->is_terminal = isatty(fileno(out));
    p->interval = p->is_terminal ? 0.1 : 10.0;
    p->start = lt_time_now();
    p->last_print = -1e30;
}

void lt_progress_resume(lt_progress *p, FILE *out, const char *label, long total, long done,
                        const char *unit, int quiet)
{
    lt_progress_start(p, out, label, total, unit, quiet);
    p->done = p->first = done;
}

void lt_progress_set_later(lt_progress *p, long later) { p->later = later > 0 ? later : 0; }

/* Columns of the terminal `fd` is (COLUMNS, else 80, when it cannot say). */
static int terminal_columns(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    int columns = env != NULL ? atoi(env) : 0;
    return columns > 0 ? columns : 80;
}

static double rate_of(const lt_progress *p, double elapsed)
{
    return elapsed > 0 ? (double)(p->done - p->first) / elapsed : 0;
}

/* "<lead>ETA 3m05s (all 12m40s)", or "" when it cannot be said. */
static void eta_text(const lt_progress *p, double rate, int final, const char *lead, char *buf,
                     size_t size)
{
    char left[32], all[32];
    buf[0] = '\0';
    if (p->total <= 0 || !(rate > 0) || final)
        return;
    lt_progress_duration(left, sizeof left, (double)(p->total - p->done) / rate);
    if (p->later > 0)
        snprintf(buf, size, "%sETA %s (all %s)", lead, left,
                 lt_progress_duration(all, sizeof all,
                                      (double)(p->total - p->done + p->later) / rate));
    else
        snprintf(buf, size, "%sETA %s", lead, left);
}

void lt_progress_line(const lt_progress *p, const char *note, int final, int columns, char *buf,
                      size_t size)
{
    double elapsed = lt_time_now() - p->start, rate = rate_of(p, elapsed);
    char eta[80], spent[32];
    lt_progress_duration(spent, sizeof spent, elapsed);
    eta_text(p, rate, final, " ", eta, sizeof eta);
    int width = columns >= 100 ? 24 : 10;
    char bar[32];
    int filled = p->total > 0 ? (int)((double)width * (double)p->done / (double)p->total) : 0;
    for (int i = 0; i < width; i++)
        bar[i] = i < (filled < width ? filled : width) ? '#' : '.';
    bar[width] = '\0';
    /* what must show first (which bar, how far, when it ends), then the
     * rate, then the note, each only where it fits */
    size_t fit = columns > 1 ? (size_t)columns - 1 : 1;
    fit = fit < size ? fit : size - 1;
    char rate_text[32], must[512];
    snprintf(rate_text, sizeof rate_text, " %.3g/s", rate);
    snprintf(must, sizeof must, "%s [%s] %ld/%ld %s", p->label, bar, p->done, p->total, p->unit);
    size_t tail = strlen(spent) + 1 + strlen(eta);
    int with_rate = strlen(must) + strlen(rate_text) + tail <= fit;
    snprintf(buf, size, "%s%s %s%s%s%s", must, with_rate ? rate_text : "", spent, eta,
             note ? "  " : "", note ? note : "");
    if (strlen(buf) > fit)
        buf[fit] = '\0'; /* ASCII: a byte is a column */
}

static void print_state(lt_progress *p, const char *note, int final)
{
    if (p->is_terminal) {
        char line[1024];
        lt_progress_line(p, note, final, terminal_columns(fileno(p->out)), line, sizeof line);
        fprintf(p->out, "\r\033[K%s%s", line, final ? "\n" : "");
        fflush(p->out);
        return;
    }
    double elapsed = lt_time_now() - p->start, rate = rate_of(p, elapsed);
    char eta[80], spent[32];
    lt_progress_duration(spent, sizeof spent, elapsed);
    eta_text(p, rate, final, ", ", eta, sizeof eta);
    if (p->total > 0)
        fprintf(p->out, "%s: %ld/%ld %s (%.0f%%), %.3g %s/s, %s elapsed%s%s%s\n", p->label,
                p->done, p->total, p->unit, 100.0 * (double)p->done / (double)p->total, rate,
                p->unit, spent, eta, note ? ", " : "", note ? note : "");
    else
        fprintf(p->out, "%s: %ld %s, %.3g %s/s, %s elapsed%s%s\n", p->label, p->done, p->unit,
                rate, p->unit, spent, note ? ", " : "", note ? note : "");
    fflush(p->out);
}

void lt_progress_update(lt_progress *p, long done, const char *note)
{
    p->done = done;
    if (p->quiet)
        return;
    double now = lt_time_now();
    if (now - p->last_print < p->interval)
        return;
    p->last_print = now;
    print_state(p, note, 0);
}

void lt_progress_finish(lt_progress *p, const char *note)
{
    if (p->quiet)
        return;
    print_state(p, note, 1);
}
