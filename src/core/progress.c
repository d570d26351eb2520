#include "core/progress.h"

#include <string.h>
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

static void print_state(lt_progress *p, const char *note, int final)
{
    double elapsed = lt_time_now() - p->start;
    double rate = elapsed > 0 ? (double)(p->done - p->first) / elapsed : 0;
    char eta[32] = "", spent[32];
    lt_progress_duration(spent, sizeof spent, elapsed);
    if (p->total > 0 && rate > 0 && !final)
        lt_progress_duration(eta, sizeof eta, (double)(p->total - p->done) / rate);

    if (p->is_terminal) {
        enum { WIDTH = 24 };
        char bar[WIDTH + 1];
        int filled = p->total > 0 ? (int)((double)WIDTH * (double)p->done / (double)p->total) : 0;
        if (filled > WIDTH)
            filled = WIDTH;
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(p->out, "\r\033[K%s [%s] %ld/%ld %s  %.3g %s/s  %s%s%s%s%s", p->label, bar,
                p->done, p->total, p->unit, rate, p->unit, spent, eta[0] ? " ETA " : "", eta,
                note ? "  " : "", note ? note : "");
        if (final)
            fputc('\n', p->out);
    } else {
        if (p->total > 0)
            fprintf(p->out, "%s: %ld/%ld %s (%.0f%%), %.3g %s/s, %s elapsed%s%s%s%s\n",
                    p->label, p->done, p->total, p->unit,
                    100.0 * (double)p->done / (double)p->total, rate, p->unit, spent,
                    eta[0] ? ", ETA " : "", eta, note ? ", " : "", note ? note : "");
        else
            fprintf(p->out, "%s: %ld %s, %.3g %s/s, %s elapsed%s%s\n", p->label, p->done,
                    p->unit, rate, p->unit, spent, note ? ", " : "", note ? note : "");
    }
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
