/* The paper's conclusions, judged on ltbench's own rows. Each rule is
 * written into the claim it decides, so a reader can check the verdict
 * against the table it sits under. */
#include "claims.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number of the paper's table by its method column; NAN without it. */
static double paper_num(const lt_csv_table *paper, const char *method, const char *column)
{
    return paper ? lt_claim_num(paper, lt_claim_row(paper, "method", method, NULL), column)
                 : NAN;
}

/* ---- seeds and presets: what every quality claim shares ---- */

/* Seeds a quality verdict rests on: three where a run takes under an hour
 * (copy, speech), two elsewhere (image). */
enum { SEEDS_SHORT_RUN = 3, SEEDS_LONG_RUN = 2 };

/* A quality claim that cannot be judged at this preset says so. */
static int preset_unjudged(lt_claim *c, const lt_csv_table *t)
{
    const char *why = lt_claims_quality_unjudged(t);
    if (why == NULL)
        return 0;
    c->verdict = LT_CLAIM_UNJUDGED;
    lt_claim_append(c->rule, "; not judged: %s (preset %s)", why,
                    lt_csv_table_cell(t, 0, lt_csv_table_column(t, "preset")));
    return 1;
}

/* The rule's note on seeds: how many were compared of how many it needs. */
static void seeds_note(lt_claim *c, int pairs, int need)
{
    if (c->verdict == LT_CLAIM_UNJUDGED && pairs < need)
        lt_claim_append(c->rule, "; %d seed%s here, the rule needs %d", pairs,
                        pairs == 1 ? "" : "s", need);
    else if (c->verdict == LT_CLAIM_UNJUDGED)
        lt_claim_append(c->rule, "; the seeds disagree");
    else
        lt_claim_append(c->rule, " (in each of %d seeds)", pairs);
}

/* The two verdicts of one claim made one: the second only qualifies the
 * first (it turns "holds" into "holds with a caveat"). */
static lt_verdict qualified(lt_verdict main, lt_verdict qualifier)
{
    if (main != LT_CLAIM_HOLDS)
        return main;
    if (qualifier == LT_CLAIM_UNJUDGED)
        return LT_CLAIM_UNJUDGED;
    return qualifier == LT_CLAIM_FAILS ? LT_CLAIM_CAVEAT : LT_CLAIM_HOLDS;
}

/* ---- copy (Figure 2) ---- */

enum { COPY_CONVERGED = 97, COPY_CLOSE = 2 }; /* hundredths of held-out accuracy */
#define COPY_LOSS_CLOSE 0.01                   /* nats of held-out loss */

static int copy_both_converged(double acc_s, double acc_l, const void *arg)
{
    (void)arg;
    return fabs(acc_s - acc_l) <= COPY_CLOSE / 100.0 + 1e-9 &&
           fmin(acc_s, acc_l) >= COPY_CONVERGED / 100.0;
}

static int within(double a, double b, const void *bound)
{
    return fabs(a - b) <= *(const double *)bound;
}

static int below(double a, double b, const void *arg)
{
    (void)arg;
    return a < b;
}

static void copy_same_loss(lt_claim *c, const lt_csv_table *const *runs, int count)
{
    lt_seeds acc_s, acc_l, loss_s, loss_l;
    lt_seeds_of(&acc_s, runs, count, "variant", "softmax", "eval_copy_accuracy");
    lt_seeds_of(&acc_l, runs, count, "variant", "linear", "eval_copy_accuracy");
    lt_seeds_of(&loss_s, runs, count, "variant", "softmax", "eval_loss");
    lt_seeds_of(&loss_l, runs, count, "variant", "linear", "eval_loss");
    char t[4][128];
    lt_seeds_text(t[0], sizeof t[0], &acc_s, "%.3f");
    lt_seeds_text(t[1], sizeof t[1], &acc_l, "%.3f");
    lt_seeds_text(t[2], sizeof t[2], &loss_s, "%.4g");
    lt_seeds_text(t[3], sizeof t[3], &loss_l, "%.4g");
    lt_claim_say(c->paper, "Fig. 2: linear attention converges smoothly to the same loss as "
                           "softmax");
    lt_claim_say(c->measured, "held-out copy accuracy: softmax %s, linear %s; held-out loss "
                              "(nats): softmax %s, linear %s",
                 t[0], t[1], t[2], t[3]);
    lt_claim_say(c->rule, "holds if both accuracies at least 0.%d and within 0.%02d of each "
                          "other and the losses within %g nats; with a caveat if the "
                          "accuracies are but the losses are not",
                 COPY_CONVERGED, COPY_CLOSE, COPY_LOSS_CLOSE);
    if (preset_unjudged(c, runs[0]))
        return;
    int pairs, loss_pairs;
    double bound = COPY_LOSS_CLOSE;
    lt_verdict acc = lt_seeds_judge(&acc_s, &acc_l, SEEDS_SHORT_RUN, copy_both_converged, NULL,
                                    &pairs);
    lt_verdict loss = lt_seeds_judge(&loss_s, &loss_l, SEEDS_SHORT_RUN, within, &bound,
                                     &loss_pairs);
    c->verdict = qualified(acc, loss);
    seeds_note(c, pairs, SEEDS_SHORT_RUN);
}

/* Every Reformer variant below both softmax and linear in held-out
 * accuracy, seed by seed. */
static void copy_lsh_worse(lt_claim *c, const lt_csv_table *const *runs, int count)
{
    lt_claim_say(c->paper, "Fig. 2: Reformer (LSH-1, LSH-4) converges to a worse loss than "
                           "softmax and linear attention");
    lt_claim_say(c->rule, "holds if every LSH row's held-out accuracy below both softmax's "
                          "and linear's");
    c->measured[0] = '\0';
    lt_seeds soft, lin, best;
    lt_seeds_of(&soft, runs, count, "variant", "softmax", "eval_copy_accuracy");
    lt_seeds_of(&lin, runs, count, "variant", "linear", "eval_copy_accuracy");
    best = soft;
    for (int i = 0; i < best.runs; i++)
        best.value[i] = fmin(soft.value[i], lin.value[i]);
    lt_seeds_scale(&best, 1.0);
    const char *lsh[] = {"lsh-1", "lsh-4"};
    int judged = 0, pairs = 0;
    lt_verdict all = LT_CLAIM_UNTESTED;
    for (int k = 0; k < 2; k++) {
        lt_seeds acc;
        lt_seeds_of(&acc, runs, count, "variant", lsh[k], "eval_copy_accuracy");
        if (acc.count == 0)
            continue;
        char text[128];
        lt_seeds_text(text, sizeof text, &acc, "%.3f");
        lt_claim_append(c->measured, "%s%s %s", judged++ ? ", " : "held-out accuracy: ",
                        lsh[k], text);
        lt_verdict v = lt_seeds_judge(&acc, &best, SEEDS_SHORT_RUN, below, NULL, &pairs);
        if (v == LT_CLAIM_FAILS || all == LT_CLAIM_UNTESTED)
            all = v;
        else if (v == LT_CLAIM_UNJUDGED && all != LT_CLAIM_FAILS)
            all = v;
    }
    char t[2][128];
    lt_seeds_text(t[0], sizeof t[0], &soft, "%.3f");
    lt_seeds_text(t[1], sizeof t[1], &lin, "%.3f");
    if (judged > 0)
        lt_claim_append(c->measured, " (softmax %s, linear %s)", t[0], t[1]);
    c->verdict = judged == 0 || soft.count == 0 || lin.count == 0 ? LT_CLAIM_UNTESTED : all;
    if (c->verdict != LT_CLAIM_UNTESTED && !preset_unjudged(c, runs[0]))
        seeds_note(c, pairs, SEEDS_SHORT_RUN);
}

int bench_copy_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                      lt_claim *claims)
{
    (void)paper;
    copy_same_loss(&claims[0], runs, count);
    copy_lsh_worse(&claims[1], runs, count);
    return 2;
}

/* Mean of `column` of `variant`'s curve over the `window` updates ending
 * at `step`; NAN when the curve does not cover them all. */
static double window_mean(const lt_csv_table *curves, const char *variant, const char *column,
                          long step, long window)
{
    int v = lt_csv_table_column(curves, "variant"), s = lt_csv_table_column(curves, "step");
    int a = lt_csv_table_column(curves, column);
    if (v < 0 || s < 0 || a < 0)
        return NAN;
    double sum = 0.0;
    long n = 0;
    for (long long r = 0; r < curves->nrows; r++) {
        long at = atol(lt_csv_table_cell(curves, r, s));
        if (at > step - window && at <= step &&
            strcmp(lt_csv_table_cell(curves, r, v), variant) == 0) {
            sum += atof(lt_csv_table_cell(curves, r, a));
            n++;
        }
    }
    return n == window ? sum / n : NAN;
}

/* Mean training copy accuracy of `variant` over the ABLATION_WINDOW updates
 * ending at `step`; NAN when the curve does not reach it. */
enum { ABLATION_WINDOW = 100 };

static double accuracy_at(const lt_csv_table *curves, const char *variant, long step)
{
    return window_mean(curves, variant, "copy_accuracy", step, ABLATION_WINDOW);
}

/* The row of curves with the largest step among those whose `column`
 * equals `value` (every row when column is NULL); -1 if none. */
static long long last_step_row(const lt_csv_table *curves, const char *column, const char *value)
{
    int s = lt_csv_table_column(curves, "step");
    int c = column != NULL ? lt_csv_table_column(curves, column) : -1;
    long long last = -1;
    long last_step = -1;
    for (long long r = 0; s >= 0 && (column == NULL || c >= 0) && r < curves->nrows; r++) {
        long at = atol(lt_csv_table_cell(curves, r, s));
        if ((column == NULL || strcmp(lt_csv_table_cell(curves, r, c), value) == 0) &&
            at > last_step) {
            last_step = at;
            last = r;
        }
    }
    return last;
}

/* The index of `step` among the columns; -1 if it is not one. */
static int column_of(const long *steps, int count, long step)
{
    for (int k = 0; k < count; k++)
        if (steps[k] == step)
            return k;
    return -1;
}

/* Adds `step` to the sorted columns unless it is there already. */
static void add_column(long *steps, int *count, long step)
{
    int at = *count;
    if (column_of(steps, *count, step) >= 0)
        return;
    for (; at > 0 && steps[at - 1] > step; at--)
        steps[at] = steps[at - 1];
    steps[at] = step;
    (*count)++;
}

/* A table's header with a column per update count: `lead` ("| run |"),
 * then "@count" cells and `tail` (" held-out |", or ""), then the rule:
 * `lead_rule` and a right-aligned rule for each count and `tail_cells`. */
static void steps_header(FILE *f, const char *lead, const char *lead_rule, const long *steps,
                         int count, const char *tail, int tail_cells)
{
    fprintf(f, "%s", lead);
    for (int k = 0; k < count; k++)
        fprintf(f, " @%ld |", steps[k]);
    fprintf(f, "%s\n%s", tail, lead_rule);
    for (int k = 0; k < count + tail_cells; k++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
}

/* An accuracy to three places, or "-" where there is none. */
static void accuracy_text(char *buf, size_t size, double x)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", x);
}

void bench_copy_ablation(FILE *f, const char *out)
{
    static const char *const runs[] = {"copy-h16", "copy"};
    static const char *const variants[] = {"softmax", "linear"};
    /* Fixed counts every run passes (3000: the small preset's length; 5000:
     * the medium preset's learning-rate drop), then each run's last. */
    enum { RUNS = 2, VARIANTS = 2, FIXED = 4, STEPS = FIXED + RUNS, SMALL_PRESET = 3000 };
    long steps[STEPS] = {1000, SMALL_PRESET, 5000, 6000}, last[RUNS] = {0, 0};
    int step_count = FIXED;
    double held_out[RUNS][VARIANTS], at[RUNS][VARIANTS][STEPS];
    lt_csv_table curves[RUNS];
    char head_dim[RUNS][16];
    int read = 0;
    for (int r = 0; r < RUNS; r++) {
        char path[4400];
        lt_csv_table summary;
        snprintf(path, sizeof path, "%s/%s/summary.csv", out, runs[r]);
        if (lt_csv_read(&summary, path) != LT_OK)
            break;
        snprintf(path, sizeof path, "%s/%s/curves.csv", out, runs[r]);
        if (lt_csv_read(&curves[r], path) != LT_OK) {
            lt_csv_table_free(&summary);
            break;
        }
        read++;
        snprintf(head_dim[r], sizeof head_dim[r], "%.0f", lt_claim_num(&summary, 0, "head_dim"));
        for (int v = 0; v < VARIANTS; v++)
            held_out[r][v] = lt_claim_num(
                &summary, lt_claim_row(&summary, "variant", variants[v], NULL),
                "eval_copy_accuracy");
        lt_csv_table_free(&summary);
        double end = lt_claim_num(&curves[r], last_step_row(&curves[r], NULL, NULL), "step");
        last[r] = isnan(end) ? 0 : (long)end;
        if (last[r] > 0)
            add_column(steps, &step_count, last[r]);
    }
    for (int r = 0; r < read; r++) {
        for (int v = 0; v < VARIANTS && read == RUNS; v++)
            for (int k = 0; k < step_count; k++)
                at[r][v][k] = accuracy_at(&curves[r], variants[v], steps[k]);
        lt_csv_table_free(&curves[r]);
    }
    if (read < RUNS)
        return;
    fprintf(f, "\nTraining copy accuracy (mean of the %d updates ending at each count; - where "
               "a run has no such count) and held-out accuracy at the end of each run, at both "
               "head widths (`copy/` and `copy-h16/`):\n\n",
            ABLATION_WINDOW);
    steps_header(f, "| head dim | variant |", "|---|---|", steps, step_count, " held-out |", 1);
    for (int r = 0; r < RUNS; r++)
        for (int v = 0; v < VARIANTS; v++) {
            fprintf(f, "| %s | %s |", head_dim[r], variants[v]);
            for (int k = 0; k < step_count; k++) {
                char cell[16];
                accuracy_text(cell, sizeof cell, at[r][v][k]);
                fprintf(f, " %s |", cell);
            }
            fprintf(f, " %.3f |\n", held_out[r][v]);
        }
    /* held-out accuracy is at each run's end; equal counts are compared on
     * the curves: the small preset's length and the shorter run's end */
    const long shorter = last[0] < last[1] ? last[0] : last[1];
    const int small = column_of(steps, step_count, SMALL_PRESET);
    const int both = column_of(steps, step_count, shorter);
    char acc[4][16];
    for (int r = 0; r < RUNS; r++) {
        accuracy_text(acc[r], sizeof acc[r], small < 0 ? NAN : at[r][1][small]);
        accuracy_text(acc[2 + r], sizeof acc[2 + r], both < 0 ? NAN : at[r][1][both]);
    }
    fprintf(f, "\nLinear attention's held-out gap to softmax: %.3f at head dim %s after %ld "
               "updates, %.3f at head dim %s after %ld. At equal counts, linear's training "
               "accuracy at head dim %s and %s is %s and %s after %d updates (the small "
               "preset's length) and %s and %s after %ld.\n",
            held_out[0][0] - held_out[0][1], head_dim[0], last[0],
            held_out[1][0] - held_out[1][1], head_dim[1], last[1], head_dim[0], head_dim[1],
            acc[0], acc[1], SMALL_PRESET, acc[2], acc[3], shorter);
}

/* ---- scaling (Figure 1) ---- */

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
        double s = best_at(t, "softmax", causal, n, column), l = best_at(t, "linear", causal, n, column);
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
                        const char *unit, double scale, lt_claim *c)
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
        lt_claim_append(c->measured, "%s%s at N = %.0f: softmax %.4g %s, linear %.4g %s%s",
                        c->measured[0] ? "; " : "", modes[m][1], ns[last], soft[last] * scale,
                        unit, lin[last] * scale, unit, at);
    }
    c->verdict = any ? worst : LT_CLAIM_UNTESTED;
    lt_claim_say(c->rule, "holds if linear's %s below softmax's (its fastest kernel) at every N "
                          "measured; with a caveat if only from some N on",
                 what);
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
    below_claim(t, "fwd_bwd_per_sample_s", "forward+backward time per sample", "ms", 1e3,
                &claims[0]);
    lt_claim_say(claims[1].paper, "Fig. 1: linear attention needs less memory than softmax for "
                                  "every N");
    below_claim(t, "peak_bytes_per_sample", "peak memory per sample", "MiB", 1.0 / 1048576.0,
                &claims[1]);

    lt_claim *c = &claims[2];
    lt_claim_say(c->paper, "Fig. 1: linear attention's time grows linearly with N, softmax's "
                           "quadratically");
    lt_claim_say(c->rule, "holds if time ~ N^a fitted over the three largest N, a <= 1.3 for "
                          "linear and a >= 1.6 for softmax, in both modes");
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
    return 3;
}

/* ---- image (Tables 1 and 2) ---- */

enum { BITS_CLOSE = 5 }; /* percent */
/* Models have learned enough to compare when they are at least this share
 * of the paper's distance below the histogram baseline (the paper's
 * softmax against the histogram of the data here). */
#define LEARNED_SHARE 0.5
/* Without the paper's table: bits/dim below the histogram. */
#define LEARNED_MARGIN 0.5

static int bits_close(double b_s, double b_l, const void *arg)
{
    (void)arg;
    return fabs(b_l - b_s) <= BITS_CLOSE / 100.0 * b_s;
}

/* Whether the models learned enough to compare; the rule says the bar. */
static int image_learned(lt_claim *c, double hist, double worst, const lt_csv_table *paper)
{
    double p_soft = paper_num(paper, "softmax", "bits_per_dim");
    double need = isnan(p_soft) ? LEARNED_MARGIN : LEARNED_SHARE * (hist - p_soft);
    lt_claim_append(c->rule, "; models that are not %.2f bits/dim below the histogram (%s) "
                             "have learned too little to judge",
                    need, isnan(p_soft) ? "a fixed bar" : "half the paper's distance");
    return hist - worst >= need;
}

static void image_bits_close(lt_claim *c, const lt_csv_table *const *runs, int count,
                             const lt_csv_table *paper)
{
    lt_seeds b_s, b_l, hist;
    lt_seeds_of(&b_s, runs, count, "variant", "softmax", "test_bits_per_dim");
    lt_seeds_of(&b_l, runs, count, "variant", "linear", "test_bits_per_dim");
    lt_seeds_of(&hist, runs, count, "variant", "softmax", "histogram_bits_per_dim");
    char t[2][128];
    lt_seeds_text(t[0], sizeof t[0], &b_s, "%.4f");
    lt_seeds_text(t[1], sizeof t[1], &b_l, "%.4f");
    lt_claim_say(c->paper, "linear attention's bits/dim is close to softmax's (%.3f against "
                           "%.3f)",
                 paper_num(paper, "linear", "bits_per_dim"),
                 paper_num(paper, "softmax", "bits_per_dim"));
    lt_claim_say(c->measured, "test bits/dim: softmax %s, linear %s (%+.1f%%); the per-channel "
                              "histogram of the training pixels %.4f",
                 t[0], t[1], 100.0 * (b_l.mean - b_s.mean) / b_s.mean, hist.mean);
    lt_claim_say(c->rule, "holds if linear within %d%% of softmax", BITS_CLOSE);
    int pairs;
    c->verdict = lt_seeds_judge(&b_s, &b_l, SEEDS_LONG_RUN, bits_close, NULL, &pairs);
    if (c->verdict == LT_CLAIM_UNTESTED || preset_unjudged(c, runs[0]))
        return;
    if (!image_learned(c, hist.mean, fmax(b_s.mean, b_l.mean), paper)) {
        c->verdict = LT_CLAIM_UNJUDGED;
        return;
    }
    seeds_note(c, pairs, SEEDS_LONG_RUN);
}

/* The paper's bits/dim order of its methods, as variant names here
 * ("LSH-1" is lsh-1), best first; how many. */
static int paper_order(const lt_csv_table *paper, char names[][16], double *bits)
{
    int n = 0, method = paper ? lt_csv_table_column(paper, "method") : -1;
    for (long long r = 0; method >= 0 && r < paper->nrows && n < 4; r++) {
        bits[n] = lt_claim_num(paper, r, "bits_per_dim");
        if (isnan(bits[n]))
            continue;
        const char *m = lt_csv_table_cell(paper, r, method);
        int i = 0;
        for (; m[i] && i < 15; i++)
            names[n][i] = (char)(m[i] >= 'A' && m[i] <= 'Z' ? m[i] - 'A' + 'a' : m[i]);
        names[n++][i] = '\0';
    }
    for (int i = 0; i < n; i++) /* a handful: sorted by selection */
        for (int j = i + 1; j < n; j++)
            if (bits[j] < bits[i]) {
                double b = bits[i];
                char name[16];
                bits[i] = bits[j];
                bits[j] = b;
                memcpy(name, names[i], 16);
                memcpy(names[i], names[j], 16);
                memcpy(names[j], name, 16);
            }
    return n;
}

/* Table 1's order of bits/dim (softmax, linear, LSH-4, LSH-1 on MNIST),
 * seed by seed. */
static void image_order(lt_claim *c, const lt_csv_table *const *runs, int count,
                        const lt_csv_table *paper)
{
    char names[4][16];
    double bits[4];
    int n = paper_order(paper, names, bits);
    lt_claim_say(c->paper, "bits/dim from best to worst:");
    for (int i = 0; i < n; i++)
        lt_claim_append(c->paper, "%s %s %.3f", i ? "," : "", names[i], bits[i]);
    lt_claim_say(c->rule, "holds if the same order here");
    c->measured[0] = '\0';
    int same = 0, other = 0;
    for (int r = 0; r < count; r++) {
        int measured = 1, ordered = 1;
        double last = -INFINITY;
        for (int i = 0; i < n; i++) {
            double b = lt_claim_num(runs[r], lt_claim_row(runs[r], "variant", names[i], NULL),
                                    "test_bits_per_dim");
            measured &= !isnan(b);
            ordered &= b >= last;
            last = b;
            if (r == 0)
                lt_claim_append(c->measured, "%s%s %.4f", i ? ", " : "", names[i], b);
        }
        same += measured && ordered;
        other += measured && !ordered;
    }
    int pairs = same + other;
    c->verdict = n < 2 || pairs == 0      ? LT_CLAIM_UNTESTED
                 : pairs < SEEDS_LONG_RUN ? LT_CLAIM_UNJUDGED
                 : same && other          ? LT_CLAIM_UNJUDGED
                 : same                   ? LT_CLAIM_HOLDS
                                          : LT_CLAIM_FAILS;
    if (c->verdict != LT_CLAIM_UNTESTED && !preset_unjudged(c, runs[0]))
        seeds_note(c, pairs, SEEDS_LONG_RUN);
}

/* The paper's architecture for a dataset's table: 8 layers for MNIST, 16
 * for CIFAR-10, where its generation speeds were measured. */
static double paper_layers(const lt_csv_table *t)
{
    const char *data = lt_csv_table_cell(t, 0, lt_csv_table_column(t, "dataset"));
    return strcmp(data, "mnist") == 0 ? 8 : 16;
}

/* A speed-up judged only where the model is the paper's size. */
static int speed_comparable(lt_claim *c, const lt_csv_table *t)
{
    double layers = lt_claim_num(t, 0, "layers"), want = paper_layers(t);
    if (layers == want)
        return 1;
    c->verdict = LT_CLAIM_UNJUDGED;
    lt_claim_append(c->rule, "; judged at the paper's architecture (%.0f layers) in its own "
                             "section: the ratio grows with depth, and this model has %.0f",
                    want, layers);
    return 0;
}

static void image_recompute_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    double p_speedup = paper_num(paper, "linear", "speedup");
    double order = isnan(p_speedup) ? 100.0 : pow(10.0, floor(log10(p_speedup)));
    long long rec = lt_claim_row(t, "variant", "softmax", "gen_mode", "recompute", NULL);
    double speedup = lt_claim_num(t, rec, "linear_speedup");
    lt_claim_say(c->paper, "linear attention (recurrent) generates %.0fx faster than softmax "
                           "recomputing the prefix",
                 p_speedup);
    if (isnan(speedup))
        lt_claim_say(c->measured, "softmax recomputing the prefix was not timed (run with "
                                  "--gen-modes all)");
    else
        lt_claim_say(c->measured, "%.0fx at batch %.0f (%.4g against %.4g images/s), %.0f "
                                  "layers",
                     speedup, lt_claim_num(t, rec, "gen_batch"),
                     speedup * lt_claim_num(t, rec, "images_per_s"),
                     lt_claim_num(t, rec, "images_per_s"), lt_claim_num(t, 0, "layers"));
    lt_claim_say(c->rule, "holds if the same order of magnitude or more (at least %.0fx)", order);
    c->verdict = isnan(speedup) ? LT_CLAIM_UNTESTED
                 : speedup >= order ? LT_CLAIM_HOLDS
                                    : LT_CLAIM_FAILS;
    if (c->verdict != LT_CLAIM_UNTESTED)
        speed_comparable(c, t);
}

static void image_cached_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    lt_claim_say(c->paper, "the appendix: linear attention generates faster than a softmax "
                           "that caches keys and values (%.1fx on the authors' GPU)",
                 paper_num(paper, "linear", "images_per_s") /
                     paper_num(paper, "stateful softmax", "images_per_s"));
    lt_claim_say(c->rule, "holds if linear recurrent faster than softmax cached at every batch "
                          "measured");
    int batch = lt_csv_table_column(t, "gen_batch"), rows = 0, faster = 1;
    c->measured[0] = '\0';
    for (long long r = 0; batch >= 0 && r < t->nrows; r++) {
        if (r != lt_claim_row(t, "variant", "softmax", "gen_mode", "cached", "gen_batch",
                               lt_csv_table_cell(t, r, batch), NULL))
            continue;
        double x = lt_claim_num(t, r, "linear_speedup");
        faster &= x > 1.0;
        lt_claim_append(c->measured, "%s%.1fx at batch %.0f", rows ? ", " : "", x,
                        lt_claim_num(t, r, "gen_batch"));
        rows++;
    }
    c->verdict = rows == 0 ? LT_CLAIM_UNTESTED : faster ? LT_CLAIM_HOLDS : LT_CLAIM_FAILS;
}

/* Tables 1-2's Reformer speed-ups: LSH recomputing its prefix against
 * softmax recomputing, faster or slower as in the paper. */
static void image_lsh_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    long long soft = lt_claim_row(t, "variant", "softmax", "gen_mode", "recompute", NULL);
    double base = lt_claim_num(t, soft, "images_per_s");
    lt_claim_say(c->paper, "Reformer generates (recomputing) at");
    lt_claim_say(c->rule, "holds if each LSH variant is faster than softmax where the paper's "
                          "is, slower where it is slower");
    c->measured[0] = '\0';
    const char *lsh[][2] = {{"lsh-1", "LSH-1"}, {"lsh-4", "LSH-4"}};
    int rows = 0, agree = 1;
    for (int k = 0; k < 2; k++) {
        double p = paper_num(paper, lsh[k][1], "speedup");
        double x = lt_claim_num(t, lt_claim_row(t, "variant", lsh[k][0], "gen_mode", "recompute",
                                                NULL),
                                "images_per_s") / base;
        lt_claim_append(c->paper, "%s %.1fx", k ? "," : "", p);
        lt_claim_append(c->paper, " (%s)", lsh[k][1]);
        if (isnan(x))
            continue;
        lt_claim_append(c->measured, "%s%s %.2fx", rows++ ? ", " : "", lsh[k][0], x);
        agree &= isnan(p) || (x > 1.0) == (p > 1.0);
    }
    lt_claim_append(c->paper, " the speed of softmax recomputing");
    lt_claim_append(c->measured, " the speed of softmax recomputing");
    c->verdict = rows == 0 || isnan(base) ? LT_CLAIM_UNTESTED
                 : agree                 ? LT_CLAIM_HOLDS
                                         : LT_CLAIM_FAILS;
}

int bench_image_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                       lt_claim *claims)
{
    image_bits_close(&claims[0], runs, count, paper);
    image_order(&claims[1], runs, count, paper);
    image_recompute_speedup(&claims[2], runs[0], paper);
    image_cached_speedup(&claims[3], runs[0], paper);
    image_lsh_speedup(&claims[4], runs[0], paper);
    return 5;
}

/* Seconds per image at batch 1 of a variant's generation mode. */
static double seconds_per_image(const lt_csv_table *t, const char *variant, const char *mode)
{
    return lt_claim_num(
        t, lt_claim_row(t, "variant", variant, "gen_mode", mode, "gen_batch", "1", NULL),
        "seconds_per_image");
}

int bench_image_cpu_claims(const lt_csv_table *const *runs, int count,
                           const lt_csv_table *paper, lt_claim *claims)
{
    (void)count; /* speed: the run shown */
    const lt_csv_table *t = runs[0];
    static const char *const rows[3][3] = {{"softmax", "recompute", "softmax"},
                                           {"softmax", "cached", "stateful softmax"},
                                           {"linear", "recurrent", "linear"}};
    double here[3], there[3];
    lt_claim *c = &claims[0];
    c->paper[0] = c->measured[0] = '\0';
    for (int i = 0; i < 3; i++) {
        here[i] = seconds_per_image(t, rows[i][0], rows[i][1]);
        there[i] = paper ? lt_claim_num(paper, lt_claim_row(paper, "method", rows[i][2],
                                                            NULL),
                                        "seconds_per_image")
                         : NAN;
        lt_claim_append(c->paper, "%s%s %s %.4g s", i ? ", " : "Appendix: one image on a CPU: ",
                        rows[i][0], rows[i][1], there[i]);
        lt_claim_append(c->measured, "%s%s %s %.4g s", i ? ", " : "", rows[i][0], rows[i][1],
                        here[i]);
    }
    lt_claim_append(c->measured, "; linear is %.0fx faster than recompute (the paper: %.0fx) "
                                 "and %.1fx than cached softmax (the paper: %.1fx)",
                    here[0] / here[2], there[0] / there[2], here[1] / here[2],
                    there[1] / there[2]);
    lt_claim_say(c->rule, "holds if linear recurrent faster than cached softmax, and cached "
                          "faster than recompute, as on the paper's CPU");
    c->verdict = isnan(here[0]) || isnan(here[1]) || isnan(here[2]) ? LT_CLAIM_UNTESTED
                 : here[2] < here[1] && here[1] < here[0]        ? LT_CLAIM_HOLDS
                                                                  : LT_CLAIM_FAILS;
    return 1;
}

/* ---- speech (Table 3) ---- */

static int at_most(double a, double b, const void *arg)
{
    (void)arg;
    return a <= b;
}

/* Test PER (%) of a model over the seeds. */
static void per_of(lt_seeds *s, const lt_csv_table *const *runs, int count, const char *model)
{
    lt_seeds_of(s, runs, count, "model", model, "test_per");
    lt_seeds_scale(s, 100.0);
}

/* A PER order of two models, seed by seed: a below b (or at most b). */
static void speech_order(lt_claim *c, const lt_csv_table *const *runs, const lt_seeds *a,
                         const lt_seeds *b,
                         int (*test)(double, double, const void *))
{
    int pairs;
    c->verdict = lt_seeds_judge(a, b, SEEDS_SHORT_RUN, test, NULL, &pairs);
    if (c->verdict != LT_CLAIM_UNTESTED && !preset_unjudged(c, runs[0]))
        seeds_note(c, pairs, SEEDS_SHORT_RUN);
}

static void speech_quality(lt_claim *claims, const lt_csv_table *const *runs, int count,
                           const lt_csv_table *paper)
{
    double p_soft = paper_num(paper, "softmax", "per_percent");
    double p_lin = paper_num(paper, "linear", "per_percent");
    lt_seeds soft, lin, lstm, lsh, worst;
    per_of(&soft, runs, count, "softmax");
    per_of(&lin, runs, count, "linear");
    per_of(&lstm, runs, count, "bilstm");
    per_of(&lsh, runs, count, "lsh-4");
    worst = soft;
    for (int i = 0; i < worst.runs; i++)
        worst.value[i] = fmax(soft.value[i], lin.value[i]);
    lt_seeds_scale(&worst, 1.0);
    char t[4][128];
    lt_seeds_text(t[0], sizeof t[0], &soft, "%.2f%%");
    lt_seeds_text(t[1], sizeof t[1], &lin, "%.2f%%");
    lt_seeds_text(t[2], sizeof t[2], &lstm, "%.2f%%");
    lt_seeds_text(t[3], sizeof t[3], &lsh, "%.2f%%");

    lt_claim *c = &claims[0];
    lt_claim_say(c->paper, "Table 3: both transformers beat the Bi-LSTM (PER softmax %.2f%%, "
                           "linear %.2f%%, Bi-LSTM %.2f%%)",
                 p_soft, p_lin, paper_num(paper, "Bi-LSTM", "per_percent"));
    lt_claim_say(c->measured, "test PER: softmax %s, linear %s, Bi-LSTM %s", t[0], t[1], t[2]);
    /* where the gap lies: the speakers heard in training too, or only new voices */
    lt_seeds dev[3];
    const char *models[3] = {"softmax", "linear", "bilstm"};
    for (int i = 0; i < 3; i++) {
        lt_seeds_of(&dev[i], runs, count, "model", models[i], "dev_per");
        lt_seeds_scale(&dev[i], 100.0);
    }
    if (!isnan(dev[0].mean + dev[1].mean + dev[2].mean))
        lt_claim_append(c->measured, "; dev PER (the training speakers): softmax %.2f%%, "
                                     "linear %.2f%%, Bi-LSTM %.2f%%",
                        dev[0].mean, dev[1].mean, dev[2].mean);
    lt_claim_say(c->rule, "holds if softmax's and linear's PER below the Bi-LSTM's");
    speech_order(c, runs, &worst, &lstm, below);

    c = &claims[1];
    lt_claim_say(c->paper, "Table 3: softmax has a lower PER than linear attention (%.2f%% "
                           "against %.2f%%)",
                 p_soft, p_lin);
    lt_claim_say(c->measured, "test PER: softmax %s, linear %s", t[0], t[1]);
    lt_claim_say(c->rule, "holds if softmax's PER at most linear's");
    speech_order(c, runs, &soft, &lin, at_most);

    c = &claims[2];
    lt_claim_say(c->paper, "Table 3: Reformer LSH-4 has a higher PER than linear attention "
                           "(%.2f%% against %.2f%%)",
                 paper_num(paper, "LSH-4", "per_percent"), p_lin);
    lt_claim_say(c->measured, "test PER: LSH-4 %s, linear %s", t[3], t[1]);
    lt_claim_say(c->rule, "holds if LSH-4's PER above linear's");
    speech_order(c, runs, &lin, &lsh, below);
}

static void speech_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    long long soft = lt_claim_row(t, "model", "softmax", NULL);
    long long lin = lt_claim_row(t, "model", "linear", NULL);
    double s_s = lt_claim_num(t, soft, "seconds_per_epoch");
    double s_l = lt_claim_num(t, lin, "seconds_per_epoch");
    double e_soft = paper_num(paper, "softmax", "seconds_per_epoch");
    double e_lin = paper_num(paper, "linear", "seconds_per_epoch");
    lt_claim_say(c->paper, "Table 3: linear attention is %.1fx faster per epoch than softmax "
                           "(%.0f s against %.0f s)",
                 e_soft / e_lin, e_lin, e_soft);
    lt_claim_say(c->measured, "%.2fx (softmax %.4g s/epoch, linear %.4g) on utterances of %.0f "
                              "positions on average",
                 s_s / s_l, s_s, s_l, lt_claim_num(t, lin, "mean_positions"));
    lt_claim_say(c->rule, "holds if at least 2x; with a caveat if faster, but less than 2x");
    c->verdict = isnan(s_s) || isnan(s_l) ? LT_CLAIM_UNTESTED
                 : s_s >= 2 * s_l         ? LT_CLAIM_HOLDS
                 : s_s > s_l              ? LT_CLAIM_CAVEAT
                                          : LT_CLAIM_FAILS;
}

/* Table 3's time per epoch of all four models, in its order. */
static void speech_epoch_order(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    static const char *const models[][2] = {
        {"linear", "linear"}, {"bilstm", "Bi-LSTM"}, {"lsh-4", "LSH-4"}, {"softmax", "softmax"}};
    double here[4], there[4];
    c->paper[0] = c->measured[0] = '\0';
    int measured = 1;
    for (int i = 0; i < 4; i++) {
        there[i] = paper_num(paper, models[i][1], "seconds_per_epoch");
        here[i] = lt_claim_num(t, lt_claim_row(t, "model", models[i][0], NULL),
                               "seconds_per_epoch");
        measured &= !isnan(here[i]);
        lt_claim_append(c->paper, "%s%s %.0f s", i ? ", " : "Table 3, time per epoch: ",
                        models[i][1], there[i]);
        lt_claim_append(c->measured, "%s%s %.4g s", i ? ", " : "", models[i][0], here[i]);
    }
    int same = 1;
    for (int i = 1; i < 4; i++)
        same &= (here[i] > here[i - 1]) == (isnan(there[i]) || there[i] > there[i - 1]);
    lt_claim_say(c->rule, "holds if the same order of time per epoch here (the paper's GPU "
                          "times themselves do not compare)");
    c->verdict = !measured ? LT_CLAIM_UNTESTED : same ? LT_CLAIM_HOLDS : LT_CLAIM_FAILS;
}

int bench_speech_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                        lt_claim *claims)
{
    speech_quality(claims, runs, count, paper);
    speech_speedup(&claims[3], runs[0], paper);
    speech_epoch_order(&claims[4], runs[0], paper);
    return 5;
}

/* Reads each run's results and curves (DIR/run/results_file and
 * curves_file) until one is missing; returns how many runs were read (both
 * tables each), for free_runs. */
static int read_runs(const char *out, const char *const *runs, int count,
                     const char *results_file, const char *curves_file, lt_csv_table *results,
                     lt_csv_table *curves)
{
    int read = 0;
    for (; read < count; read++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s/%s", out, runs[read], results_file);
        if (lt_csv_read(&results[read], path) != LT_OK)
            break;
        snprintf(path, sizeof path, "%s/%s/%s", out, runs[read], curves_file);
        if (lt_csv_read(&curves[read], path) != LT_OK) {
            lt_csv_table_free(&results[read]);
            break;
        }
    }
    return read;
}

static void free_runs(lt_csv_table *results, lt_csv_table *curves, int read)
{
    for (int r = 0; r < read; r++) {
        lt_csv_table_free(&results[r]);
        lt_csv_table_free(&curves[r]);
    }
}

/* A model's test PER (%) in a run's results; NaN where it has none. */
static double test_per_of(const lt_csv_table *results, const char *model)
{
    return 100 * lt_claim_num(results, lt_claim_row(results, "model", model, NULL), "test_per");
}

/* "7.00 points behind", "level with" or "3.00 points ahead of": a PER
 * against another (a higher PER is behind). */
static void standing_text(char *buf, size_t size, double per, double other)
{
    double behind = per - other;
    if (fabs(behind) < 0.005)
        snprintf(buf, size, "level with");
    else
        snprintf(buf, size, "%.2f points %s", fabs(behind), behind > 0 ? "behind" : "ahead of");
}

/* A speech ablation's table: each model of the changed run (runs[1]) beside
 * the same model in the medium run (runs[0]), `setting` (a results column:
 * what the ablation changes) first. */
static void speech_ablation_table(FILE *f, const char *const *runs, const char *setting,
                                  const lt_csv_table *results, const lt_csv_table *curves)
{
    const lt_csv_table *changed = &results[1];
    int model = lt_csv_table_column(changed, "model");
    /* no s/epoch: the runs' tables above give it with their provenance, and
     * runs made on other days may have had another machine or load */
    fprintf(f, "\nThe same models in `%s/` and `%s/`: updates, the training loss (the mean "
               "CTC loss per utterance over the last epoch's updates) and the dev loss at the "
               "end of training; dev and test PER at the epoch of best dev PER, as in the "
               "table above.\n\n"
               "| %s | model | train utterances | updates | train loss | dev loss | "
               "dev PER%% | test PER%% |\n"
               "|---:|---|---:|---:|---:|---:|---:|---:|\n",
            runs[0], runs[1], setting);
    for (long long i = 0; model >= 0 && i < changed->nrows; i++) {
        const char *name = lt_csv_table_cell(changed, i, model);
        for (int r = 0; r < 2; r++) {
            long long row = lt_claim_row(&results[r], "model", name, NULL);
            long long last = last_step_row(&curves[r], "model", name);
            if (row < 0 || last < 0)
                continue;
            /* a run written before the column existed shows - */
            char value[32] = "-";
            double v = lt_claim_num(&results[r], row, setting);
            if (!isnan(v))
                snprintf(value, sizeof value, "%.4g", v);
            fprintf(f, "| %s | %s | %.0f | %.0f | %.3f | %.3f | %.2f | %.2f |\n", value, name,
                    lt_claim_num(&results[r], row, "train_utterances"),
                    lt_claim_num(&curves[r], last, "step"),
                    lt_claim_num(&curves[r], last, "train_loss"),
                    lt_claim_num(&curves[r], last, "dev_loss"),
                    100 * lt_claim_num(&results[r], row, "dev_per"),
                    100 * lt_claim_num(&results[r], row, "test_per"));
        }
    }
}

void bench_speech_ablation(FILE *f, const char *out)
{
    static const char *const runs[] = {"speech", "speech-8h"};
    enum { RUNS = 2 };
    lt_csv_table results[RUNS], curves[RUNS];
    int read = read_runs(out, runs, RUNS, "speech.csv", "speech-curves.csv", results, curves);
    if (read == RUNS) {
        speech_ablation_table(f, runs, "hours", results, curves);
        double per[RUNS][2], hours[RUNS];
        char standing[RUNS][48];
        for (int r = 0; r < RUNS; r++) {
            hours[r] = lt_claim_num(&results[r], 0, "hours");
            per[r][0] = test_per_of(&results[r], "softmax");
            per[r][1] = test_per_of(&results[r], "bilstm");
            standing_text(standing[r], sizeof standing[r], per[r][0], per[r][1]);
        }
        if (!isnan(per[0][0] + per[0][1] + per[1][0] + per[1][1]))
            fprintf(f, "\nFrom %g to %g hours of audio, softmax's test PER goes from %.2f%% to "
                       "%.2f%% and the Bi-LSTM's from %.2f%% to %.2f%%: softmax is %s the "
                       "Bi-LSTM at %g hours and %s it at %g (the test split grows with the "
                       "corpus, so the two test sets are not the same utterances).\n",
                    hours[0], hours[1], per[0][0], per[1][0], per[0][1], per[1][1],
                    standing[0], hours[0], standing[1], hours[1]);
    }
    free_runs(results, curves, read);
}

void bench_speech_dropout_ablation(FILE *f, const char *out)
{
    static const char *const runs[] = {"speech", "speech-dropout"};
    static const char *const transformers[] = {"softmax", "linear"};
    enum { RUNS = 2, MODELS = 2 };
    lt_csv_table results[RUNS], curves[RUNS];
    int read = read_runs(out, runs, RUNS, "speech.csv", "speech-curves.csv", results, curves);
    if (read == RUNS) {
        speech_ablation_table(f, runs, "dropout", results, curves);
        const double bilstm = test_per_of(&results[0], "bilstm");
        const double dropout = lt_claim_num(&results[1], 0, "dropout");
        double per[RUNS][MODELS], sum = bilstm + dropout;
        for (int r = 0; r < RUNS; r++)
            for (int m = 0; m < MODELS; m++) {
                per[r][m] = test_per_of(&results[r], transformers[m]);
                sum += per[r][m];
            }
        if (!isnan(sum)) {
            char before[MODELS][48], after[MODELS][48];
            for (int m = 0; m < MODELS; m++) {
                standing_text(before[m], sizeof before[m], per[0][m], bilstm);
                standing_text(after[m], sizeof after[m], per[1][m], bilstm);
            }
            fprintf(f, "\nWith dropout %g after each branch, softmax's test PER goes from "
                       "%.2f%% to %.2f%% and linear attention's from %.2f%% to %.2f%% (the "
                       "same corpus and test utterances). Against the Bi-LSTM's %.2f%% (it "
                       "has no dropout), softmax goes from %s it to %s it, linear attention "
                       "from %s it to %s it.\n",
                    dropout, per[0][0], per[1][0], per[0][1], per[1][1], bilstm, before[0],
                    after[0], before[1], after[1]);
        }
    }
    free_runs(results, curves, read);
}

/* ---- image: the depth ablation ---- */

/* x as a signed percentage ("+8.1%"), or "-" where there is none. */
static void percent_text(char *buf, size_t size, double x)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%+.1f%%", x);
}

/* "8.1% above" or "0.2% below": `value` against `base`. */
static void print_relative(FILE *f, double value, double base)
{
    double percent = 100 * (value / base - 1);
    fprintf(f, "%.1f%% %s", fabs(percent), percent >= 0 ? "above" : "below");
}

/* A run's learning-rate drops as its curves recorded them (the first
 * variant's rows, one an update): "x0.1 after 12000" for each update after
 * which the rate fell, "none" when it never did, "" when the curves carry no
 * rate. Read from the curves so that runs written before the schedule was
 * recorded anywhere else still say it. */
static void lr_drops_text(char *buf, size_t size, const lt_csv_table *curves)
{
    int v = lt_csv_table_column(curves, "variant"), s = lt_csv_table_column(curves, "step");
    int c = lt_csv_table_column(curves, "lr");
    buf[0] = '\0';
    if (v < 0 || s < 0 || c < 0 || curves->nrows == 0)
        return;
    const char *first = lt_csv_table_cell(curves, 0, v);
    size_t used = 0;
    double before = NAN;
    for (long long r = 0; r < curves->nrows; r++) {
        const char *cell = lt_csv_table_cell(curves, r, c);
        if (strcmp(lt_csv_table_cell(curves, r, v), first) != 0 || cell[0] == '\0')
            continue; /* another variant's row, or a rate not recorded */
        double lr = atof(cell);
        if (lr < before && used < size) {
            int n = snprintf(buf + used, size - used, "%sx%.2g after %ld", used ? ", " : "",
                             lr / before, atol(lt_csv_table_cell(curves, r, s)) - 1);
            used += n > 0 ? (size_t)n : 0;
        }
        before = lr;
    }
    if (used == 0)
        snprintf(buf, size, "none");
}

/* "2 layers, 14000 updates, lr drops x0.1 after 12000, seed 1": what an
 * MNIST run was (the drops left out of curves without the rate, the seed
 * out of a results file without it). */
static void image_run_text(char *buf, size_t size, double layers, double updates,
                           const char *drops, double seed)
{
    int n = snprintf(buf, size, "%.0f layers, %.0f updates", layers, updates);
    if (drops[0] != '\0' && n > 0 && (size_t)n < size)
        n += strcmp(drops, "none") == 0
                 ? snprintf(buf + n, size - (size_t)n, ", constant lr")
                 : snprintf(buf + n, size - (size_t)n, ", lr drops %s", drops);
    if (!isnan(seed) && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", seed %.0f", seed);
}

void bench_image_ablation(FILE *f, const char *out)
{
    /* the medium preset's run, then each ablation the folder holds */
    static const char *const runs[] = {"image", "image-l4", "image-long", "image-seed2",
                                       "image-drop7"};
    static const char *const variants[] = {"softmax", "linear"};
    /* fixed counts every medium run passes, then each run's last */
    enum { RUNS = 5, VARIANTS = 2, FIXED = 3, STEPS = FIXED + RUNS, GAP_WINDOW = 1000 };
    long steps[STEPS] = {2000, 6000, 10000};
    int step_count = FIXED, count = 0, which[RUNS];
    lt_csv_table results[RUNS], curves[RUNS];
    for (int r = 0; r < RUNS; r++)
        if (read_runs(out, runs + r, 1, "mnist.csv", "mnist-curves.csv", results + count,
                      curves + count) == 1)
            which[count++] = r;
        else if (r == 0)
            return; /* nothing to set an ablation beside */
    if (count < 2) {
        free_runs(results, curves, count);
        return;
    }
    double layers[RUNS], updates[RUNS], seeds[RUNS], bits[RUNS][VARIANTS];
    char what[RUNS][128], drops[RUNS][64];
    for (int r = 0; r < count; r++) {
        int rows = results[r].nrows > 0;
        layers[r] = rows ? lt_claim_num(&results[r], 0, "layers") : NAN;
        updates[r] = rows ? lt_claim_num(&results[r], 0, "steps") : NAN;
        seeds[r] = rows ? lt_claim_num(&results[r], 0, "seed") : NAN;
        lr_drops_text(drops[r], sizeof drops[r], &curves[r]);
        image_run_text(what[r], sizeof what[r], layers[r], updates[r], drops[r], seeds[r]);
        double end = lt_claim_num(&curves[r], last_step_row(&curves[r], NULL, NULL), "step");
        if (!isnan(end))
            add_column(steps, &step_count, (long)end);
    }
    fprintf(f, "\nThe MNIST ablations beside the medium preset's models (`image/`: %s):", what[0]);
    for (int r = 1; r < count; r++)
        fprintf(f, "%s `%s/`: %s", r > 1 ? ";" : "", runs[which[r]], what[r]);
    fprintf(f, ". Test bits/dim, and linear attention's above softmax's.\n\n"
               "| run | layers | seed | lr drops | variant | updates | train s | "
               "test bits/dim | over softmax |\n"
               "|---|---:|---:|---|---|---:|---:|---:|---:|\n");
    for (int r = 0; r < count; r++)
        for (int v = 0; v < VARIANTS; v++) {
            long long row = lt_claim_row(&results[r], "variant", variants[v], NULL);
            bits[r][v] = lt_claim_num(&results[r], row, "test_bits_per_dim");
            if (isnan(bits[r][v])) /* not trained to the end (yet) */
                continue;
            char over[16], seed[16] = "-";
            percent_text(over, sizeof over, v == 0 ? NAN : 100 * (bits[r][v] / bits[r][0] - 1));
            if (!isnan(seeds[r]))
                snprintf(seed, sizeof seed, "%.0f", seeds[r]);
            fprintf(f, "| %s | %.0f | %s | %s | %s | %.0f | %.0f | %.4f | %s |\n",
                    runs[which[r]], layers[r], seed, drops[r][0] ? drops[r] : "-", variants[v],
                    lt_claim_num(&results[r], row, "steps"),
                    lt_claim_num(&results[r], row, "train_s"), bits[r][v], v == 0 ? "" : over);
        }
    fprintf(f, "\nLinear attention's training bits/dim above softmax's through training "
               "(each the mean of the %d updates ending at the count; - where a run has "
               "none):\n\n",
            GAP_WINDOW);
    steps_header(f, "| run |", "|---|", steps, step_count, "", 0);
    for (int r = 0; r < count; r++) {
        fprintf(f, "| %s |", runs[which[r]]);
        for (int k = 0; k < step_count; k++) {
            double s = window_mean(&curves[r], variants[0], "bits_per_dim", steps[k], GAP_WINDOW);
            double l = window_mean(&curves[r], variants[1], "bits_per_dim", steps[k], GAP_WINDOW);
            char cell[16];
            percent_text(cell, sizeof cell, 100 * (l / s - 1));
            fprintf(f, " %s |", cell);
        }
        fprintf(f, "\n");
    }
    /* the runs with both models trained, in one sentence */
    int said = 0;
    for (int r = 0; r < count; r++) {
        if (isnan(bits[r][0] + bits[r][1]) || isnan(updates[r]))
            continue;
        fprintf(f, "%s", said == 0 ? "\nLinear attention's test bits/dim is " : ", ");
        print_relative(f, bits[r][1], bits[r][0]);
        fprintf(f, "%s in `%s/` (%s)", said == 0 ? " softmax's" : "", runs[which[r]], what[r]);
        said++;
    }
    if (said > 0)
        fprintf(f, " (Table 1's claim allows %d%% either way).\n", BITS_CLOSE);
    /* a gap narrows as much when softmax gets worse as when linear gets better */
    said = 0;
    for (int r = 1; r < count && !isnan(bits[0][0]); r++) {
        if (isnan(bits[r][0]))
            continue;
        fprintf(f, "%s", said == 0 ? "\nSoftmax's own test bits/dim against `image/`'s: " : ", ");
        print_relative(f, bits[r][0], bits[0][0]);
        fprintf(f, " in `%s/`", runs[which[r]]);
        said++;
    }
    if (said > 0)
        fprintf(f, " (a gap narrows as much when softmax gets worse as when linear gets "
                   "better).\n");
    free_runs(results, curves, count);
}
