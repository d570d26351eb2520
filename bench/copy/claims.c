/* Figure 2's claims, and the head-width ablation's table. */
#include "copy/copy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/judging.h"

enum { COPY_CONVERGED = 97, COPY_CLOSE = 2 }; /* hundredths of held-out accuracy */
#define COPY_LOSS_CLOSE 0.01                   /* nats of held-out loss */

/* Mean training copy accuracy over this many updates: the ablation's cells. */
enum { ABLATION_WINDOW = 100 };

static int copy_both_converged(double acc_s, double acc_l, const void *arg)
{
    (void)arg;
    return fabs(acc_s - acc_l) <= COPY_CLOSE / 100.0 + 1e-9 &&
           fmin(acc_s, acc_l) >= COPY_CONVERGED / 100.0;
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
    if (bench_preset_unjudged(c, runs[0]))
        return;
    int pairs, loss_pairs;
    double bound = COPY_LOSS_CLOSE;
    lt_verdict acc = lt_seeds_judge(&acc_s, &acc_l, BENCH_SEEDS_SHORT_RUN, copy_both_converged,
                                    NULL, &pairs);
    lt_verdict loss = lt_seeds_judge(&loss_s, &loss_l, BENCH_SEEDS_SHORT_RUN, bench_within, &bound,
                                     &loss_pairs);
    c->verdict = bench_qualified(acc, loss);
    /* The claim names the loss: where it differs in every seed and the
     * accuracies do not carry the claim either, the claim is refuted. */
    if (loss == LT_CLAIM_FAILS && acc != LT_CLAIM_HOLDS && pairs >= BENCH_SEEDS_SHORT_RUN) {
        c->verdict = LT_CLAIM_FAILS;
        int close = lt_seeds_passing(&acc_s, &acc_l, copy_both_converged, NULL, &pairs);
        lt_claim_append(c->rule, "; it does not hold where the losses differ in every seed "
                                 "and the accuracies do not meet it in every seed: here the "
                                 "losses differ in all %d seeds, the accuracies meet it in %d "
                                 "of %d",
                        loss_pairs, close, pairs);
    } else if (c->verdict == LT_CLAIM_UNJUDGED && pairs >= BENCH_SEEDS_SHORT_RUN) {
        /* which part the seeds split on: a reader sees whether "holds"
         * was within reach */
        int close = lt_seeds_passing(&acc_s, &acc_l, copy_both_converged, NULL, &pairs);
        int same = lt_seeds_passing(&loss_s, &loss_l, bench_within, &bound, &loss_pairs);
        lt_claim_append(c->rule, "; the seeds disagree: the accuracies meet it in %d of %d "
                                 "seeds, the losses in %d of %d",
                        close, pairs, same, loss_pairs);
    } else {
        bench_seeds_note(c, pairs, BENCH_SEEDS_SHORT_RUN);
    }
}

/* Whether a seed's Reformer model is worse than both others (1) or not
 * (0): its held-out accuracy below both and its held-out loss above both. */
static void copy_worse_than_both(lt_seeds *worse, const lt_seeds *acc, const lt_seeds *loss,
                                 const lt_seeds *best_acc, const lt_seeds *best_loss)
{
    *worse = *acc;
    for (int i = 0; i < worse->runs; i++)
        worse->value[i] = isnan(acc->value[i]) || isnan(loss->value[i]) ||
                                  isnan(best_acc->value[i]) || isnan(best_loss->value[i])
                              ? NAN
                              : acc->value[i] < best_acc->value[i] &&
                                    loss->value[i] > best_loss->value[i];
    lt_seeds_scale(worse, 1.0);
}

static int copy_is_worse(double worse, double unused, const void *arg)
{
    (void)unused;
    (void)arg;
    return worse > 0.5;
}

/* Every Reformer variant worse than both softmax and linear in held-out
 * loss and accuracy, seed by seed (the claim is about loss; accuracy must
 * agree, as the two can part). */
static void copy_lsh_worse(lt_claim *c, const lt_csv_table *const *runs, int count)
{
    lt_claim_say(c->paper, "Fig. 2: Reformer (LSH-1, LSH-4) converges to a worse loss than "
                           "softmax and linear attention");
    lt_claim_say(c->rule, "holds if every LSH row's held-out loss is above both softmax's and "
                          "linear's and its held-out accuracy below both");
    lt_seeds acc_s, acc_l, loss_s, loss_l, best_acc, best_loss;
    lt_seeds_of(&acc_s, runs, count, "variant", "softmax", "eval_copy_accuracy");
    lt_seeds_of(&acc_l, runs, count, "variant", "linear", "eval_copy_accuracy");
    lt_seeds_of(&loss_s, runs, count, "variant", "softmax", "eval_loss");
    lt_seeds_of(&loss_l, runs, count, "variant", "linear", "eval_loss");
    best_acc = acc_s;
    best_loss = loss_s;
    for (int i = 0; i < best_acc.runs; i++) {
        best_acc.value[i] = fmin(acc_s.value[i], acc_l.value[i]);
        best_loss.value[i] = fmax(loss_s.value[i], loss_l.value[i]);
    }
    lt_seeds_scale(&best_acc, 1.0);
    lt_seeds_scale(&best_loss, 1.0);
    const char *lsh[] = {"lsh-1", "lsh-4"};
    char acc_text[2][128], loss_text[2][128];
    int judged = 0, pairs = 0, shown[2] = {0, 0};
    lt_verdict all = LT_CLAIM_UNTESTED;
    for (int k = 0; k < 2; k++) {
        lt_seeds acc, loss, worse;
        lt_seeds_of(&acc, runs, count, "variant", lsh[k], "eval_copy_accuracy");
        lt_seeds_of(&loss, runs, count, "variant", lsh[k], "eval_loss");
        if (acc.count == 0)
            continue;
        shown[k] = 1;
        judged++;
        lt_seeds_text(acc_text[k], sizeof acc_text[k], &acc, "%.3f");
        lt_seeds_text(loss_text[k], sizeof loss_text[k], &loss, "%.4g");
        copy_worse_than_both(&worse, &acc, &loss, &best_acc, &best_loss);
        lt_verdict v = lt_seeds_judge(&worse, &worse, BENCH_SEEDS_SHORT_RUN, copy_is_worse,
                                      NULL, &pairs);
        if (v == LT_CLAIM_FAILS || all == LT_CLAIM_UNTESTED)
            all = v;
        else if (v == LT_CLAIM_UNJUDGED && all != LT_CLAIM_FAILS)
            all = v;
    }
    char t[4][128];
    lt_seeds_text(t[0], sizeof t[0], &acc_s, "%.3f");
    lt_seeds_text(t[1], sizeof t[1], &acc_l, "%.3f");
    lt_seeds_text(t[2], sizeof t[2], &loss_s, "%.4g");
    lt_seeds_text(t[3], sizeof t[3], &loss_l, "%.4g");
    c->measured[0] = '\0';
    for (int m = 0; m < 2 && judged > 0; m++) {
        int listed = 0;
        lt_claim_append(c->measured, "%s", m ? "; held-out loss (nats): " : "held-out accuracy: ");
        for (int k = 0; k < 2; k++)
            if (shown[k])
                lt_claim_append(c->measured, "%s%s %s", listed++ ? ", " : "", lsh[k],
                                m ? loss_text[k] : acc_text[k]);
        lt_claim_append(c->measured, " (softmax %s, linear %s)", m ? t[2] : t[0],
                        m ? t[3] : t[1]);
    }
    c->verdict = judged == 0 || acc_s.count == 0 || acc_l.count == 0 ? LT_CLAIM_UNTESTED : all;
    if (c->verdict != LT_CLAIM_UNTESTED && !bench_preset_unjudged(c, runs[0]))
        bench_seeds_note(c, pairs, BENCH_SEEDS_SHORT_RUN);
}

int bench_copy_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                      lt_claim *claims)
{
    (void)paper;
    copy_same_loss(&claims[0], runs, count);
    copy_lsh_worse(&claims[1], runs, count);
    return 2;
}

static double accuracy_at(const lt_csv_table *curves, const char *variant, long step)
{
    return bench_window_mean(curves, variant, "copy_accuracy", step, ABLATION_WINDOW);
}

/* An accuracy to three places, or "-" where there is none. */
static void accuracy_text(char *buf, size_t size, double x)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", x);
}

void bench_copy_ablation(FILE *f, const char *out, const char *const *runs)
{
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
        double end = lt_claim_num(&curves[r], bench_last_step_row(&curves[r], NULL, NULL), "step");
        last[r] = isnan(end) ? 0 : (long)end;
        if (last[r] > 0)
            bench_add_step(steps, &step_count, last[r]);
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
               "head widths (`%s/` and `%s/`):\n\n",
            ABLATION_WINDOW, runs[1], runs[0]);
    bench_steps_header(f, "| head dim | variant |", "|---|---|", steps, step_count, " held-out |",
                       1);
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
    const int small = bench_step_column(steps, step_count, SMALL_PRESET);
    const int both = bench_step_column(steps, step_count, shorter);
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

/* The delta-rule run's question, answered from its summary: how much of
 * linear attention's held-out gap to softmax each gated variant closes, in
 * log loss (the losses span orders of magnitude) and in accuracy. One seed:
 * it says so rather than judging differences it cannot bound. */
void bench_copy_delta_answer(FILE *f, const char *out, const char *const *runs)
{
    static const char *const variants[] = {"softmax", "linear", "delta", "gated-delta", "gla"};
    enum { VARIANTS = 5, GATED = 2 };
    char path[4400];
    lt_csv_table t;
    snprintf(path, sizeof path, "%s/%s/summary.csv", out, runs[0]);
    if (lt_csv_read(&t, path) != LT_OK)
        return;
    double loss[VARIANTS], acc[VARIANTS];
    for (int v = 0; v < VARIANTS; v++) {
        long long r = lt_claim_row(&t, "variant", variants[v], "status", "ok", NULL);
        loss[v] = lt_claim_num(&t, r, "eval_loss");
        acc[v] = lt_claim_num(&t, r, "eval_copy_accuracy");
    }
    lt_csv_table_free(&t);
    /* the question needs both ends of the gap, and a gap */
    if (isnan(loss[0]) || isnan(loss[1]) || !(loss[1] > loss[0]) || !(loss[0] > 0.0))
        return;
    fprintf(f, "\nDoes the delta rule close linear attention's gap to softmax? Held-out loss: "
               "softmax %.3g, linear %.3g nats (%.0fx softmax's). Of that gap, measured in log "
               "loss, each gated variant closes:",
            loss[0], loss[1], loss[1] / loss[0]);
    const double gap = log(loss[1]) - log(loss[0]);
    int shown = 0;
    for (int v = GATED; v < VARIANTS; v++) {
        if (isnan(loss[v]))
            continue;
        fprintf(f, "%s %s %.0f%% (loss %.3g, %.1fx below linear's; held-out accuracy %.4f "
                   "against linear's %.4f and softmax's %.4f)",
                shown++ ? ";" : "", variants[v], 100.0 * (log(loss[1]) - log(loss[v])) / gap,
                loss[v], loss[1] / loss[v], acc[v], acc[1], acc[0]);
    }
    fprintf(f, "%s. One seed: differences between the gated variants are not judged against "
               "seed-to-seed noise.\n",
            shown ? "" : " none of them ran");
}
