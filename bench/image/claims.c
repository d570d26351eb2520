/* Tables 1 and 2's claims, the paper's CPU appendix, and the MNIST ablations'
 * tables. */
#include "image/image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/judging.h"

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
    double p_soft = bench_paper_num(paper, "softmax", "bits_per_dim");
    double need = isnan(p_soft) ? LEARNED_MARGIN : LEARNED_SHARE * (hist - p_soft);
    lt_claim_append(c->rule, "; models that are not %.2f bits/dim below the histogram (%s) "
                             "have learned too little to judge",
                    need, isnan(p_soft) ? "a fixed bar" : "half the paper's distance");
    if (hist - worst >= need)
        return 1;
    lt_claim_append(c->rule, "; the worse of them is %.2f below here", hist - worst);
    return 0;
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
                 bench_paper_num(paper, "linear", "bits_per_dim"),
                 bench_paper_num(paper, "softmax", "bits_per_dim"));
    lt_claim_say(c->measured, "test bits/dim: softmax %s, linear %s (%+.1f%%); the per-channel "
                              "histogram of the training pixels %.4f",
                 t[0], t[1], 100.0 * (b_l.mean - b_s.mean) / b_s.mean, hist.mean);
    lt_claim_say(c->rule, "holds if linear within %d%% of softmax", BITS_CLOSE);
    int pairs;
    c->verdict = lt_seeds_judge(&b_s, &b_l, BENCH_SEEDS_LONG_RUN, bits_close, NULL, &pairs);
    if (c->verdict == LT_CLAIM_UNTESTED || bench_preset_unjudged(c, runs[0]))
        return;
    if (!image_learned(c, hist.mean, fmax(b_s.mean, b_l.mean), paper)) {
        c->verdict = LT_CLAIM_UNJUDGED;
        return;
    }
    bench_seeds_note(c, pairs, BENCH_SEEDS_LONG_RUN);
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
                 : pairs < BENCH_SEEDS_LONG_RUN ? LT_CLAIM_UNJUDGED
                 : same && other          ? LT_CLAIM_UNJUDGED
                 : same                   ? LT_CLAIM_HOLDS
                                          : LT_CLAIM_FAILS;
    if (c->verdict == LT_CLAIM_UNTESTED || bench_preset_unjudged(c, runs[0]))
        return;
    /* an order among models that learned too little says nothing */
    double worst = -INFINITY;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, lt_claim_num(runs[0], lt_claim_row(runs[0], "variant", names[i], NULL),
                                         "test_bits_per_dim"));
    double hist = lt_claim_num(runs[0], lt_claim_row(runs[0], "variant", "softmax", NULL),
                               "histogram_bits_per_dim");
    if (!isnan(hist) && !image_learned(c, hist, worst, paper)) {
        c->verdict = LT_CLAIM_UNJUDGED;
        if (pairs < BENCH_SEEDS_LONG_RUN)
            bench_seeds_note(c, pairs, BENCH_SEEDS_LONG_RUN);
        return;
    }
    bench_seeds_note(c, pairs, BENCH_SEEDS_LONG_RUN);
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
    double p_speedup = bench_paper_num(paper, "linear", "speedup");
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
    if (c->verdict != LT_CLAIM_UNTESTED && speed_comparable(c, t))
        bench_busy_unjudged(c, t);
}

static void image_cached_speedup(lt_claim *c, const lt_csv_table *t, const lt_csv_table *paper)
{
    lt_claim_say(c->paper, "the appendix: linear attention generates faster than a softmax "
                           "that caches keys and values (%.1fx on the authors' GPU)",
                 bench_paper_num(paper, "linear", "images_per_s") /
                     bench_paper_num(paper, "stateful softmax", "images_per_s"));
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
    if (c->verdict != LT_CLAIM_UNTESTED && speed_comparable(c, t))
        bench_busy_unjudged(c, t);
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
        double p = bench_paper_num(paper, lsh[k][1], "speedup");
        double x = lt_claim_num(t, lt_claim_row(t, "variant", lsh[k][0], "gen_mode", "recompute",
                                                NULL),
                                "images_per_s") / base;
        lt_claim_append(c->paper, "%s %.3gx", k ? "," : "", p);
        lt_claim_append(c->paper, " (%s)", lsh[k][1]);
        if (isnan(x))
            continue;
        lt_claim_append(c->measured, "%s%s %.2fx", rows++ ? ", " : "", lsh[k][0], x);
        agree &= isnan(p) || (x > 1.0) == (p > 1.0);
    }
    lt_claim_append(c->paper, " the speed of softmax recomputing");
    if (rows == 0)
        lt_claim_say(c->measured, "no Reformer rows in this run");
    else
        lt_claim_append(c->measured, " the speed of softmax recomputing");
    c->verdict = rows == 0 || isnan(base) ? LT_CLAIM_UNTESTED
                 : agree                 ? LT_CLAIM_HOLDS
                                         : LT_CLAIM_FAILS;
    if (c->verdict != LT_CLAIM_UNTESTED && speed_comparable(c, t))
        bench_busy_unjudged(c, t);
}

int bench_image_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                       lt_claim *claims)
{
    /* untrained weights (--gen-only) measure speed alone: no bits/dim rows */
    int trained = runs[0]->nrows == 0 || strcmp(bench_cell(runs[0], 0, "trained"), "0") != 0;
    int n = 0;
    if (trained) {
        image_bits_close(&claims[n++], runs, count, paper);
        image_order(&claims[n++], runs, count, paper);
    }
    image_recompute_speedup(&claims[n++], runs[0], paper);
    image_cached_speedup(&claims[n++], runs[0], paper);
    image_lsh_speedup(&claims[n++], runs[0], paper);
    return n;
}

/* Seconds per image at batch 1 of a variant's generation mode. */
static double seconds_per_image(const lt_csv_table *t, const char *variant, const char *mode)
{
    return lt_claim_num(
        t, lt_claim_row(t, "variant", variant, "gen_mode", mode, "gen_batch", "1", NULL),
        "seconds_per_image");
}

/* The appendix's CPU seconds per image of a method; the device column
 * tells its rows from Table 2's where the two are joined. NAN without. */
static double paper_cpu_seconds(const lt_csv_table *paper, const char *method)
{
    if (paper == NULL)
        return NAN;
    long long r = lt_csv_table_column(paper, "device") >= 0
                      ? lt_claim_row(paper, "method", method, "device", "CPU", NULL)
                      : lt_claim_row(paper, "method", method, NULL);
    return lt_claim_num(paper, r, "seconds_per_image");
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
        there[i] = paper_cpu_seconds(paper, rows[i][2]);
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
    bench_busy_unjudged(c, t);
    return 1;
}

int bench_image_paper_cifar_claims(const lt_csv_table *const *runs, int count,
                                   const lt_csv_table *paper, lt_claim *claims)
{
    int n = bench_image_claims(runs, count, paper, claims);
    /* Table 2's ratio is the GPU's: the appendix gives the same ratio on a
     * CPU, said beside it (the recompute claim is the first of the three
     * speed claims) */
    lt_claim *recompute = &claims[n - 3];
    double cpu_ratio = paper_cpu_seconds(paper, "softmax") / paper_cpu_seconds(paper, "linear");
    if (!isnan(cpu_ratio))
        lt_claim_append(recompute->measured, "; on the paper's CPU the same ratio is %.0fx (its "
                                             "appendix, judged below)",
                        cpu_ratio);
    n += bench_image_cpu_claims(runs, count, paper, &claims[n]);
    return n;
}

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

/* The MNIST ablation runs an ablation section compares, read once: each
 * run's results and curves, what it was, and the update counts its gap is
 * shown at (fixed counts every medium run passes, then each run's last). */
enum { ABLATION_RUNS = 7, ABLATION_VARIANTS = 2, ABLATION_FIXED = 3,
       ABLATION_STEPS = ABLATION_FIXED + ABLATION_RUNS, GAP_WINDOW = 1000 };
static const char *const ablation_variants[ABLATION_VARIANTS] = {"softmax", "linear"};

typedef struct {
    int count, which[ABLATION_RUNS], step_count;
    lt_csv_table results[ABLATION_RUNS], curves[ABLATION_RUNS];
    double layers[ABLATION_RUNS], updates[ABLATION_RUNS], seeds[ABLATION_RUNS];
    double bits[ABLATION_RUNS][ABLATION_VARIANTS];
    char what[ABLATION_RUNS][128], drops[ABLATION_RUNS][64];
    long steps[ABLATION_STEPS];
} image_ablation;

/* Returns how many of `runs` were read; fewer than two (or the first
 * missing) leave nothing to compare, and nothing held. */
static int read_ablation(image_ablation *a, const char *out, const char *const *runs)
{
    a->count = 0;
    for (int r = 0; r < ABLATION_RUNS && runs[r] != NULL; r++)
        if (bench_read_runs(out, runs + r, 1, "mnist.csv", "mnist-curves.csv",
                            a->results + a->count, a->curves + a->count) == 1)
            a->which[a->count++] = r;
        else if (r == 0)
            return 0; /* nothing to set an ablation beside */
    if (a->count < 2) {
        bench_free_runs(a->results, a->curves, a->count);
        return 0;
    }
    a->step_count = ABLATION_FIXED;
    a->steps[0] = 2000, a->steps[1] = 6000, a->steps[2] = 10000;
    for (int r = 0; r < a->count; r++) {
        int rows = a->results[r].nrows > 0;
        a->layers[r] = rows ? lt_claim_num(&a->results[r], 0, "layers") : NAN;
        a->updates[r] = rows ? lt_claim_num(&a->results[r], 0, "steps") : NAN;
        a->seeds[r] = rows ? lt_claim_num(&a->results[r], 0, "seed") : NAN;
        lr_drops_text(a->drops[r], sizeof a->drops[r], &a->curves[r]);
        image_run_text(a->what[r], sizeof a->what[r], a->layers[r], a->updates[r], a->drops[r],
                       a->seeds[r]);
        double end = lt_claim_num(&a->curves[r], bench_last_step_row(&a->curves[r], NULL, NULL),
                                  "step");
        if (!isnan(end))
            bench_add_step(a->steps, &a->step_count, (long)end);
    }
    return a->count;
}

/* Each run's test bits/dim per variant (kept in a->bits for the summary). */
static void ablation_bits_table(FILE *f, image_ablation *a, const char *const *runs)
{
    fprintf(f, "\nThe MNIST ablations beside the medium preset's models (`%s/`: %s):",
            runs[a->which[0]], a->what[0]);
    for (int r = 1; r < a->count; r++)
        fprintf(f, "%s `%s/`: %s", r > 1 ? ";" : "", runs[a->which[r]], a->what[r]);
    fprintf(f, ". Test bits/dim, and linear attention's above softmax's.\n\n"
               "| run | layers | seed | lr drops | variant | updates | train s | "
               "test bits/dim | over softmax |\n"
               "|---|---:|---:|---|---|---:|---:|---:|---:|\n");
    for (int r = 0; r < a->count; r++)
        for (int v = 0; v < ABLATION_VARIANTS; v++) {
            const lt_csv_table *t = &a->results[r];
            long long row = lt_claim_row(t, "variant", ablation_variants[v], NULL);
            a->bits[r][v] = lt_claim_num(t, row, "test_bits_per_dim");
            if (isnan(a->bits[r][v])) /* not trained to the end (yet) */
                continue;
            char over[16], seed[16] = "-";
            percent_text(over, sizeof over,
                         v == 0 ? NAN : 100 * (a->bits[r][v] / a->bits[r][0] - 1));
            if (!isnan(a->seeds[r]))
                snprintf(seed, sizeof seed, "%.0f", a->seeds[r]);
            fprintf(f, "| %s | %.0f | %s | %s | %s | %.0f | %.0f | %.4f | %s |\n",
                    runs[a->which[r]], a->layers[r], seed, a->drops[r][0] ? a->drops[r] : "-",
                    ablation_variants[v], lt_claim_num(t, row, "steps"),
                    lt_claim_num(t, row, "train_s"), a->bits[r][v], v == 0 ? "" : over);
        }
}

/* Linear's training bits/dim above softmax's at each update count. */
static void ablation_gap_table(FILE *f, const image_ablation *a, const char *const *runs)
{
    fprintf(f, "\nLinear attention's training bits/dim above softmax's through training "
               "(each the mean of the %d updates ending at the count; - where a run has "
               "none):\n\n",
            GAP_WINDOW);
    bench_steps_header(f, "| run |", "|---|", a->steps, a->step_count, "", 0);
    for (int r = 0; r < a->count; r++) {
        fprintf(f, "| %s |", runs[a->which[r]]);
        for (int k = 0; k < a->step_count; k++) {
            double s = bench_window_mean(&a->curves[r], ablation_variants[0], "bits_per_dim",
                                         a->steps[k], GAP_WINDOW);
            double l = bench_window_mean(&a->curves[r], ablation_variants[1], "bits_per_dim",
                                         a->steps[k], GAP_WINDOW);
            char cell[16];
            percent_text(cell, sizeof cell, 100 * (l / s - 1));
            fprintf(f, " %s |", cell);
        }
        fprintf(f, "\n");
    }
}

/* The runs with both models trained, in one sentence; then softmax's own
 * change, since a gap narrows as much when softmax gets worse as when
 * linear gets better. */
static void ablation_summary(FILE *f, const image_ablation *a, const char *const *runs)
{
    int said = 0;
    for (int r = 0; r < a->count; r++) {
        if (isnan(a->bits[r][0] + a->bits[r][1]) || isnan(a->updates[r]))
            continue;
        fprintf(f, "%s", said == 0 ? "\nLinear attention's test bits/dim is " : ", ");
        print_relative(f, a->bits[r][1], a->bits[r][0]);
        fprintf(f, "%s in `%s/` (%s)", said == 0 ? " softmax's" : "", runs[a->which[r]],
                a->what[r]);
        said++;
    }
    if (said > 0)
        fprintf(f, " (Table 1's claim allows %d%% either way).\n", BITS_CLOSE);
    said = 0;
    for (int r = 1; r < a->count && !isnan(a->bits[0][0]); r++) {
        if (isnan(a->bits[r][0]))
            continue;
        if (said == 0)
            fprintf(f, "\nSoftmax's own test bits/dim against `%s/`'s: ", runs[a->which[0]]);
        else
            fprintf(f, ", ");
        print_relative(f, a->bits[r][0], a->bits[0][0]);
        fprintf(f, " in `%s/`", runs[a->which[r]]);
        said++;
    }
    if (said > 0)
        fprintf(f, " (a gap narrows as much when softmax gets worse as when linear gets "
                   "better).\n");
}

void bench_image_ablation(FILE *f, const char *out, const char *const *runs)
{
    static image_ablation a;
    if (read_ablation(&a, out, runs) == 0)
        return;
    ablation_bits_table(f, &a, runs);
    ablation_gap_table(f, &a, runs);
    ablation_summary(f, &a, runs);
    bench_free_runs(a.results, a.curves, a.count);
}

void bench_image_describe(FILE *f, const lt_csv_table *t)
{
    fprintf(f, "; %s training and %s test images; %s", bench_cell(t, 0, "train_images"),
            bench_cell(t, 0, "test_images"),
            strcmp(bench_cell(t, 0, "trained"), "1") == 0 ? "trained"
                                                          : "untrained weights (speed only)");
}
