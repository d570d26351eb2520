/* Figure 1's claims. */
#include "scaling/scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/judging.h"

/* The fastest (or smallest) of a variant's kernels at one N and mode. */
static double best_at(const lt_csv_table *t, const char *variant, const char *causal,
                      const char *n, const char *column)
{
    int v = lt_csv_table_column(t, "variant"), k = lt_csv_table_column(t, "causal");
    int nc = lt_csv_table_column(t, "N"), s = lt_csv_table_column(t, "status");
    double best = NAN;
    for (long long r = 0; v >= 0 && k >= 0 && nc >= 0 && r < t->nrows; r++) {
        if (strcmp(lt_csv_table_cell(t, r, v), variant) != 0 ||
            strcmp(lt_csv_table_cell(t, r, k), causal) != 0 ||
            strcmp(lt_csv_table_cell(t, r, nc), n) != 0 ||
            (s >= 0 && strcmp(lt_csv_table_cell(t, r, s), "ok") != 0))
            continue;
        double x = lt_claim_num(t, r, column);
        if (!isnan(x) && !(x >= best))
            best = x;
    }
    return best;
}

/* The sequence lengths with both softmax and linear rows in a mode, sorted. */
/* The most sequence lengths a claim reads. */
enum { MAX_N = 64 };

/* The sequence lengths with both softmax and linear rows in a mode, sorted. */
static int lengths_of(const lt_csv_table *t, const char *causal, const char *column,
                      double *ns, double *soft, double *lin)
{
    int nc = lt_csv_table_column(t, "N"), count = 0;
    for (long long r = 0; nc >= 0 && r < t->nrows; r++) {
        const char *n = lt_csv_table_cell(t, r, nc);
        double x = lt_claim_num(t, r, "N");
        int seen = 0;
        for (int i = 0; i < count; i++)
            seen |= ns[i] == x;
        double s = best_at(t, "softmax", causal, n, column);
        double l = best_at(t, "linear", causal, n, column);
        if (seen || isnan(s) || isnan(l) || count == MAX_N)
            continue;
        int at = count++;
        for (; at > 0 && ns[at - 1] > x; at--) {
            ns[at] = ns[at - 1];
            soft[at] = soft[at - 1];
            lin[at] = lin[at - 1];
        }
        ns[at] = x;
        soft[at] = s;
        lin[at] = l;
    }
    return count;
}

/* Linear below softmax at every N (holds), from some N on (caveat), or not
 * at the largest N (fails). */
static void below_claim(const lt_csv_table *t, const char *column, const char *what,
                        const char *kernel, const char *unit, double scale, lt_claim *c)
{
    static const char *const modes[2][2] = {{"0", "non-causal"}, {"1", "causal"}};
    lt_verdict worst = LT_CLAIM_HOLDS;
    int any = 0;
    c->measured[0] = '\0';
    for (int m = 0; m < 2; m++) {
        double ns[MAX_N], soft[MAX_N], lin[MAX_N];
        int count = lengths_of(t, modes[m][0], column, ns, soft, lin);
        if (count == 0)
            continue;
        any = 1;
        int from = count; /* the first N from which linear stays below */
        while (from > 0 && lin[from - 1] < soft[from - 1])
            from--;
        lt_verdict v = from == 0 ? LT_CLAIM_HOLDS : from < count ? LT_CLAIM_CAVEAT : LT_CLAIM_FAILS;
        worst = v > worst ? v : worst;
        const int last = count - 1;
        char at[96] = "";
        if (v == LT_CLAIM_CAVEAT)
            snprintf(at, sizeof at, " (below from N = %.0f on)", ns[from]);
        else if (v == LT_CLAIM_HOLDS)
            snprintf(at, sizeof at, " (below at all %d lengths)", count);
        else { /* where it was below, so a reader sees how far it fails */
            int below = 0;
            for (int i = 0; i < count; i++)
                below += lin[i] < soft[i];
            snprintf(at, sizeof at, " (below at %d of %d lengths)", below, count);
        }
        lt_claim_append(c->measured, "%s%s at N = %.0f: softmax %.4g %s, linear %.4g %s%s",
                        c->measured[0] ? "; " : "", modes[m][1], ns[last], soft[last] * scale,
                        unit, lin[last] * scale, unit, at);
    }
    c->verdict = any ? worst : LT_CLAIM_UNTESTED;
    lt_claim_say(c->rule, "holds if linear's %s below softmax's (%s) at every N measured; with "
                          "a caveat if only from some N on",
                 what, kernel);
}

/* The exponent a in time ~ N^a over the (up to) three largest lengths. */
static double growth(const double *ns, const double *y, int count)
{
    int from = count > 3 ? count - 3 : 0, k = count - from;
    if (k < 2)
        return NAN;
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    for (int i = from; i < count; i++) {
        mx += log(ns[i]) / k;
        my += log(y[i]) / k;
    }
    for (int i = from; i < count; i++) {
        sxy += (log(ns[i]) - mx) * (log(y[i]) - my);
        sxx += (log(ns[i]) - mx) * (log(ns[i]) - mx);
    }
    return sxy / sxx;
}

int bench_scaling_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                         lt_claim *claims)
{
    (void)paper;
    (void)count; /* speed: the run shown, timed in one sitting */
    const lt_csv_table *t = runs[0];
    lt_claim_say(claims[0].paper, "Fig. 1: linear attention is faster than softmax for every "
                                  "sequence length N");
    below_claim(t, "fwd_bwd_per_sample_s", "forward+backward time per sample",
                "its fastest kernel at each N", "ms", 1e3,
                &claims[0]);
    bench_busy_unjudged(&claims[0], t);
    lt_claim_say(claims[1].paper, "Fig. 1: linear attention needs less memory than softmax for "
                                  "every N");
    below_claim(t, "peak_bytes_per_sample", "peak memory per sample",
                "its smallest kernel at each N", "MiB", 1.0 / 1048576.0,
                &claims[1]);

    lt_claim *c = &claims[2];
    lt_claim_say(c->paper, "Fig. 1: linear attention's time grows linearly with N, softmax's "
                           "quadratically");
    lt_claim_say(c->rule, "holds if time ~ N^a fitted over the three largest N (each N's fastest "
                          "kernel), a <= 1.3 for linear and a >= 1.6 for softmax, in both "
                          "modes");
    c->verdict = LT_CLAIM_HOLDS;
    int any = 0;
    c->measured[0] = '\0';
    for (int m = 0; m < 2; m++) {
        double ns[MAX_N], soft[MAX_N], lin[MAX_N];
        int count = lengths_of(t, m ? "1" : "0", "fwd_bwd_per_sample_s", ns, soft, lin);
        double a_soft = growth(ns, soft, count), a_lin = growth(ns, lin, count);
        if (isnan(a_soft) || isnan(a_lin))
            continue;
        any = 1;
        if (!(a_lin <= 1.3 && a_soft >= 1.6))
            c->verdict = LT_CLAIM_FAILS;
        lt_claim_append(c->measured, "%s%s, N = %.0f to %.0f: linear N^%.2f, softmax N^%.2f",
                        c->measured[0] ? "; " : "", m ? "causal" : "non-causal",
                        ns[count > 3 ? count - 3 : 0], ns[count - 1], a_lin, a_soft);
    }
    if (!any)
        c->verdict = LT_CLAIM_UNTESTED;
    bench_busy_unjudged(c, t);
    return 3;
}
