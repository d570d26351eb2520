/* Table 3's claims, and the speech ablations' tables. */
#include "speech/speech.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/judging.h"

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
    c->verdict = lt_seeds_judge(a, b, BENCH_SEEDS_SHORT_RUN, test, NULL, &pairs);
    if (c->verdict != LT_CLAIM_UNTESTED && !bench_preset_unjudged(c, runs[0]))
        bench_seeds_note(c, pairs, BENCH_SEEDS_SHORT_RUN);
}

static void speech_quality(lt_claim *claims, const lt_csv_table *const *runs, int count,
                           const lt_csv_table *paper)
{
    double p_soft = bench_paper_num(paper, "softmax", "per_percent");
    double p_lin = bench_paper_num(paper, "linear", "per_percent");
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
                 p_soft, p_lin, bench_paper_num(paper, "Bi-LSTM", "per_percent"));
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
    speech_order(c, runs, &worst, &lstm, bench_below);

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
                 bench_paper_num(paper, "LSH-4", "per_percent"), p_lin);
    lt_claim_say(c->measured, "test PER: LSH-4 %s, linear %s", t[3], t[1]);
    lt_claim_say(c->rule, "holds if LSH-4's PER above linear's");
    speech_order(c, runs, &lin, &lsh, bench_below);
}

static void speech_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    long long soft = lt_claim_row(t, "model", "softmax", NULL);
    long long lin = lt_claim_row(t, "model", "linear", NULL);
    double s_s = lt_claim_num(t, soft, "seconds_per_epoch");
    double s_l = lt_claim_num(t, lin, "seconds_per_epoch");
    double e_soft = bench_paper_num(paper, "softmax", "seconds_per_epoch");
    double e_lin = bench_paper_num(paper, "linear", "seconds_per_epoch");
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
    bench_busy_unjudged(c, t);
}

/* Percent apart below which two epoch times do not order two models. */
enum { EPOCH_TIME_CLOSE = 5 };

/* Table 3's time per epoch of all four models, in its order. */
static void speech_epoch_order(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    static const char *const models[][2] = {
        {"linear", "linear"}, {"bilstm", "Bi-LSTM"}, {"lsh-4", "LSH-4"}, {"softmax", "softmax"}};
    double here[4], there[4];
    c->paper[0] = c->measured[0] = '\0';
    int measured = 1;
    for (int i = 0; i < 4; i++) {
        there[i] = bench_paper_num(paper, models[i][1], "seconds_per_epoch");
        here[i] = lt_claim_num(t, lt_claim_row(t, "model", models[i][0], NULL),
                               "seconds_per_epoch");
        measured &= !isnan(here[i]);
        lt_claim_append(c->paper, "%s%s %.0f s", i ? ", " : "Table 3, time per epoch: ",
                        models[i][1], there[i]);
        lt_claim_append(c->measured, "%s%s %.4g s", i ? ", " : "", models[i][0], here[i]);
    }
    /* A neighbouring pair whose times are this close is not ordered by one
     * timing each: it neither confirms nor refutes. */
    const double close = EPOCH_TIME_CLOSE / 100.0;
    int apart_wrong = 0, close_pairs = 0;
    char pairs_text[256] = "";
    for (int i = 1; i < 4; i++) {
        int right = (here[i] > here[i - 1]) == (isnan(there[i]) || there[i] > there[i - 1]);
        if (fabs(here[i] - here[i - 1]) < close * fmin(here[i], here[i - 1])) {
            size_t used = strlen(pairs_text);
            snprintf(pairs_text + used, sizeof pairs_text - used, "%s%s and %s (%.1f%%)",
                     close_pairs++ ? ", " : "", models[i - 1][0], models[i][0],
                     100.0 * fabs(here[i] - here[i - 1]) / fmin(here[i], here[i - 1]));
        } else if (!right) {
            apart_wrong++;
        }
    }
    lt_claim_say(c->rule, "holds if the same order of time per epoch here (the paper's GPU "
                          "times themselves do not compare); neighbours less than %d%% apart "
                          "are not taken as ordered (one timing each, no repeats to bound its "
                          "noise): with a caveat if the order holds only through them, not "
                          "judged if it breaks only there",
                 EPOCH_TIME_CLOSE);
    c->verdict = !measured         ? LT_CLAIM_UNTESTED
                 : apart_wrong > 0 ? LT_CLAIM_FAILS
                 : close_pairs > 0 ? LT_CLAIM_CAVEAT
                                   : LT_CLAIM_HOLDS;
    if (c->verdict == LT_CLAIM_CAVEAT) {
        int broken = 0;
        for (int i = 1; i < 4; i++)
            broken |= (here[i] > here[i - 1]) != (isnan(there[i]) || there[i] > there[i - 1]);
        if (broken)
            c->verdict = LT_CLAIM_UNJUDGED;
        lt_claim_append(c->rule, "; within it here: %s", pairs_text);
    }
    bench_busy_unjudged(c, t);
}

int bench_speech_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                        lt_claim *claims)
{
    speech_quality(claims, runs, count, paper);
    speech_speedup(&claims[3], runs[0], paper);
    speech_epoch_order(&claims[4], runs[0], paper);
    return 5;
}

int bench_speech_speed_claims(const lt_csv_table *const *runs, int count,
                              const lt_csv_table *paper, lt_claim *claims)
{
    (void)count; /* speed: the run shown, timed in one sitting */
    speech_speedup(&claims[0], runs[0], paper);
    speech_epoch_order(&claims[1], runs[0], paper);
    return 2;
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
            long long last = bench_last_step_row(&curves[r], "model", name);
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

void bench_speech_ablation(FILE *f, const char *out, const char *const *runs)
{
    enum { RUNS = 2 };
    lt_csv_table results[RUNS], curves[RUNS];
    int read = bench_read_runs(out, runs, RUNS, "speech.csv", "speech-curves.csv", results, curves);
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
    bench_free_runs(results, curves, read);
}

void bench_speech_dropout_ablation(FILE *f, const char *out, const char *const *runs)
{
    static const char *const transformers[] = {"softmax", "linear"};
    enum { RUNS = 2, MODELS = 2 };
    lt_csv_table results[RUNS], curves[RUNS];
    int read = bench_read_runs(out, runs, RUNS, "speech.csv", "speech-curves.csv", results, curves);
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
    bench_free_runs(results, curves, read);
}

void bench_speech_describe(FILE *f, const lt_csv_table *t)
{
    fprintf(f, "; %s hours of WSJ-style synthetic speech (%s training, %s test "
               "utterances; %.0f positions reach attention on average, %s at most; dev "
               "is read by the training speakers, test by voices unseen in training, as "
               "WSJ's test speakers are); always answering the most frequent phone gives "
               "a PER of %.1f%%",
            bench_cell(t, 0, "hours"), bench_cell(t, 0, "train_utterances"),
            bench_cell(t, 0, "test_utterances"), strtod(bench_cell(t, 0, "mean_positions"), NULL),
            bench_cell(t, 0, "max_positions"),
            100.0 * strtod(bench_cell(t, 0, "baseline_per"), NULL));
}
