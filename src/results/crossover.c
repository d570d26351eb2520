#include "results/crossover.h"

#include <math.h>
#include <stdio.h>

lt_crossover lt_crossover_find(const int *n, const double *challenger, const double *incumbent,
                               int count, int confirm, double margin)
{
    lt_crossover c = {.kind = LT_CROSSOVER_UNMEASURED, .ratio_last = NAN};
    int wins = 0; /* the challenger's wins in a row, up to the last N measured */
    for (int i = 0; i < count; i++) {
        if (isnan(challenger[i]) || isnan(incumbent[i]))
            continue;
        int faster = challenger[i] < incumbent[i];
        if (c.measured++ == 0)
            c.n_first = n[i];
        c.n_last = n[i];
        c.ratio_last = incumbent[i] / challenger[i];
        wins = faster ? wins + 1 : 0;
        if (faster && wins == 1)
            c.n = n[i];
    }
    if (c.measured == 0)
        return c;
    if (wins == 0) {
        c.kind = LT_CROSSOVER_NONE;
        c.n = 0;
    } else {
        c.kind = wins == c.measured ? LT_CROSSOVER_FROM_SMALLEST : LT_CROSSOVER_AT;
        c.settled = wins >= confirm && c.ratio_last >= margin;
    }
    return c;
}

const char *lt_crossover_kind_name(lt_crossover_kind kind)
{
    switch (kind) {
    case LT_CROSSOVER_AT:
        return "crossover";
    case LT_CROSSOVER_FROM_SMALLEST:
        return "from-smallest";
    case LT_CROSSOVER_NONE:
        return "none";
    default:
        return "unmeasured";
    }
}

const char *lt_crossover_describe(const lt_crossover *c, char *buf, size_t size)
{
    switch (c->kind) {
    case LT_CROSSOVER_AT:
        snprintf(buf, size, "%d", c->n);
        break;
    case LT_CROSSOVER_FROM_SMALLEST:
        snprintf(buf, size, "<= %d (from the smallest N)", c->n);
        break;
    case LT_CROSSOVER_NONE:
        snprintf(buf, size, "none up to %d", c->n_last);
        break;
    default:
        snprintf(buf, size, "not measured");
    }
    return buf;
}
