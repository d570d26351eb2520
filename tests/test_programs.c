/* End-to-end tests: the programs run as a user runs them, through the
 * ltbench dispatcher in the build folder (program.h). They check exit
 * statuses, messages, what is written and what is not. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/rng.h"
#include "io/csv.h"
#include "io/npy.h"
#include "program.h"

Test(dispatcher, lists_versions_and_refuses_unknown)
{
    cr_assert_eq(ltbench(""), 0);
    ASSERT_MENTIONS("copy");
    ASSERT_MENTIONS("scaling");
    ASSERT_MENTIONS("image");
    cr_assert_eq(ltbench("--version"), 0);
    ASSERT_MENTIONS("ltbench 0.");
    ASSERT_MENTIONS("git");
    cr_assert_eq(ltbench("nosuch"), 2);
    ASSERT_MENTIONS("unknown experiment or tool 'nosuch'");
    cr_assert_eq(ltbench("speech"), 2);
    ASSERT_MENTIONS("not available");
}

Test(copy, help_documents_flags_and_bad_flags_exit_2)
{
    cr_assert_eq(ltbench("copy --help"), 0);
    const char *flags[] = {"--preset", "--seq", "--variants", "--steps", "--batch", "--layers",
                           "--heads", "--head-dim", "--ffn", "--lr", "--seed", "--threads",
                           "--mem-budget", "--out", "--resume", "default:"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ASSERT_MENTIONS(flags[i]);
    struct { const char *args, *mention; } bad[] = {
        {"copy --bogus", "unknown flag '--bogus'"},
        {"copy --seq 4", "--seq"},
        {"copy --seq abc", "--seq"},
        {"copy --dropout 1", "--dropout"},
        {"copy --variants softmax,reformer", "reformer"},
        {"copy --lr-drops 100", "--lr-drops"},
        {"copy --preset huge", "quick|small|paper"},
        {"copy --threads -1", "--threads"},
        {"copy --mem-budget 12Q", "--mem-budget"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(ltbench(bad[i].args), 2, "%s:\n%s", bad[i].args, output);
        ASSERT_MENTIONS(bad[i].mention);
    }
}

/* Column `name` of row `row` as a number. */
static double cell_num(const lt_csv_table *t, long long row, const char *name)
{
    int col = lt_csv_table_column(t, name);
    cr_assert_geq(col, 0, "column %s", name);
    return strtod(lt_csv_table_cell(t, row, col), NULL);
}

static const char *cell_str(const lt_csv_table *t, long long row, const char *name)
{
    int col = lt_csv_table_column(t, name);
    cr_assert_geq(col, 0, "column %s", name);
    return lt_csv_table_cell(t, row, col);
}

Test(copy, quick_preset_learns_and_writes_results, .timeout = 300)
{
    char dir[64], args[256], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args, "copy --preset quick --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    ASSERT_MENTIONS("not-applicable");
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK, "%s", lt_last_error());
    cr_assert_eq(t.nrows, 3);
    for (int r = 0; r < 2; r++) {
        cr_assert_str_eq(cell_str(&t, r, "status"), "ok");
        double start = cell_num(&t, r, "loss_start"), end = cell_num(&t, r, "loss_end");
        cr_assert_lt(end, start - 0.5, "%s: loss %f -> %f", cell_str(&t, r, "variant"), start,
                     end);
        cr_assert_gt(cell_num(&t, r, "eval_copy_accuracy"), 0.2, "%s: above chance (0.1)",
                     cell_str(&t, r, "variant"));
        cr_assert_gt(cell_num(&t, r, "peak_bytes"), 0);
        cr_assert_gt(cell_num(&t, r, "threads"), 0);
    }
    cr_assert_str_eq(cell_str(&t, 0, "kernel") + 0, cell_str(&t, 0, "kernel"));
    cr_assert_str_eq(cell_str(&t, 2, "status"), "not-applicable");
    lt_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/curves.csv", dir);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 2 * 1000, "one row per update and variant");
    lt_csv_table_free(&t);
}

Test(copy, resume_continues_and_unwritable_output_fails_cleanly, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(args, sizeof args,
             "copy --variants linear --seq 16 --batch 2 --steps 4 --lr-drops none --quiet --out %s",
             dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    /* A fresh run over an earlier run's checkpoints must say so. */
    snprintf(args, sizeof args,
             "copy --preset quick --variants linear --steps 4 --overwrite --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(args, sizeof args,
             "copy --preset quick --variants linear --steps 7 --resume --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(cell_num(&t, 0, "first_step"), 4);
    cr_assert_eq(cell_num(&t, 0, "last_step"), 7);
    lt_csv_table_free(&t);

    /* Resuming with another model is refused, naming the difference. */
    snprintf(args, sizeof args,
             "copy --preset quick --variants linear --ffn 32 --resume --quiet --out %s", dir);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    ASSERT_MENTIONS("ffn=64");

    /* With nothing to resume, --resume starts fresh (as --help says). */
    char fresh[64];
    make_temp_dir(fresh);
    snprintf(args, sizeof args,
             "copy --preset quick --variants linear --steps 2 --resume --quiet --out %s", fresh);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    snprintf(path, sizeof path, "%s/summary.csv", fresh);
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(cell_num(&t, 0, "first_step"), 0);
    lt_csv_table_free(&t);

    char empty[64];
    make_temp_dir(empty);

    /* An output folder below a regular file: exit 2 and nothing written. */
    snprintf(path, sizeof path, "%s/plain", empty);
    fclose(fopen(path, "w"));
    snprintf(args, sizeof args, "copy --preset quick --variants linear --steps 2 --quiet --out %s",
             path);
    cr_assert_eq(ltbench(args), 2, "%s", output);
    cr_assert_eq(check_count_entries(empty), 1);
}

Test(scaling, small_range_writes_every_case, .timeout = 300)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/s.csv", dir);
    snprintf(args, sizeof args,
             "scaling --min-log2 4 --max-log2 6 --heads 2 --head-dim 8 --value-dim 4 "
             "--warmup 0 --repeats 2 --quiet --out %s",
             path);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 3 * 2 * 3, "variants x masks x lengths");
    int refused = 0, ok = 0;
    for (long long r = 0; r < t.nrows; r++) {
        const char *status = cell_str(&t, r, "status");
        if (strcmp(status, "ok") == 0) {
            ok++;
            cr_assert_gt(cell_num(&t, r, "fwd_bwd_median_s"), 0);
            cr_assert_leq(cell_num(&t, r, "fwd_bwd_min_s"), cell_num(&t, r, "fwd_bwd_median_s"));
            cr_assert_gt(cell_num(&t, r, "peak_bytes"), 0);
        } else {
            refused++;
            cr_assert_str_eq(status, "refused");
            cr_assert_str_eq(cell_str(&t, r, "variant"), "linformer");
        }
    }
    cr_assert_eq(refused, 3, "causal linformer rows");
    cr_assert_eq(ok, 15);
    lt_csv_table_free(&t);
}

Test(scaling, budget_skips_instead_of_running)
{
    char dir[64], args[512], path[160];
    make_temp_dir(dir);
    snprintf(path, sizeof path, "%s/s.csv", dir);
    snprintf(args, sizeof args,
             "scaling --variants softmax --causal causal --min-log2 10 --max-log2 10 "
             "--heads 4 --head-dim 8 --mem-budget 1M --quiet --out %s",
             path);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_csv_table t;
    cr_assert_eq(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 1);
    cr_assert_str_eq(cell_str(&t, 0, "status"), "skipped-budget");
    cr_assert_gt(cell_num(&t, 0, "planned_bytes"), 1 << 20);
    lt_csv_table_free(&t);
    cr_assert_eq(ltbench("scaling --min-log2 9 --max-log2 8"), 2);
    ASSERT_MENTIONS("--min-log2");
    cr_assert_eq(ltbench("scaling --variants linear,bogus"), 2);
    ASSERT_MENTIONS("bogus");
}

/* ---- ltbench attention against a double-precision reference ---- */

enum { B = 2, H = 3, N = 7, D = 5, M = 4, K = 3 };

static double phi(double x) { return x > 0 ? x + 1 : exp(x); }

/* out[b,h,i,:] for softmax (linear = 0) or elu+1 linear attention. */
static void reference(double *out, const double *q, const double *k, const double *v,
                      int linear, int causal)
{
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < N; i++) {
            const double *qi = q + (bh * N + i) * D;
            double w[N], total = 0, max_s = -INFINITY;
            int last = causal ? i : N - 1;
            for (int j = 0; j <= last; j++) {
                const double *kj = k + (bh * N + j) * D;
                double s = 0;
                for (int d = 0; d < D; d++)
                    s += linear ? phi(qi[d]) * phi(kj[d]) : qi[d] * kj[d];
                w[j] = linear ? s : s / sqrt(D);
                if (w[j] > max_s)
                    max_s = w[j];
            }
            for (int j = 0; j <= last; j++) {
                if (!linear)
                    w[j] = exp(w[j] - max_s);
                total += w[j];
            }
            for (int m = 0; m < M; m++) {
                double acc = 0;
                for (int j = 0; j <= last; j++)
                    acc += w[j] * v[(bh * N + j) * M + m];
                out[(bh * N + i) * M + m] = acc / (total + (linear ? 1e-6 : 0));
            }
        }
}

static void write_random(const char *path, double *data, int ndim, const long long *shape,
                         uint64_t stream)
{
    long long count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    lt_rng rng;
    lt_rng_seed(&rng, 11, stream);
    for (long long i = 0; i < count; i++)
        data[i] = lt_rng_normal(&rng);
    cr_assert_eq(lt_npy_write_f64(path, data, ndim, shape), LT_OK);
}

/* Copies `template` into `out`, replacing each names[i] with paths[i]. */
static void expand(char *out, size_t size, const char *template, const char **names,
                   const char **paths, int count)
{
    size_t n = 0;
    while (*template && n + 1 < size) {
        int matched = -1;
        size_t len = 0;
        for (int i = 0; i < count; i++) {
            size_t l = strlen(names[i]);
            if (strncmp(template, names[i], l) == 0 && l > len) {
                matched = i;
                len = l;
            }
        }
        if (matched < 0) {
            out[n++] = *template++;
            continue;
        }
        n += (size_t)snprintf(out + n, size - n, "%s", paths[matched]);
        template += len;
    }
    out[n < size ? n : size - 1] = '\0';
}

static void check_attention_tool(const char *variant, int linear, int causal)
{
    char dir[64], args[2048];
    make_temp_dir(dir);
    static double q[B * H * N * D], k[B * H * N * D], v[B * H * N * M], ref[B * H * N * M];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    char pq[128], pk[128], pv[128], pout[128];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pk, sizeof pk, "%s/k.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pout, sizeof pout, "%s/out.npy", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pk, k, 4, qk_shape, 2);
    write_random(pv, v, 4, v_shape, 3);
    snprintf(args, sizeof args, "attention --variant %s %s --q %s --k %s --v %s --out %s",
             variant, causal ? "--causal" : "", pq, pk, pv, pout);
    cr_assert_eq(ltbench(args), 0, "%s", output);
    lt_npy out;
    cr_assert_eq(lt_npy_read_f64(&out, pout), LT_OK);
    cr_assert_eq(out.ndim, 4);
    cr_assert_eq(out.shape[3], M);
    reference(ref, q, k, v, linear, causal);
    for (int i = 0; i < B * H * N * M; i++)
        cr_assert_lt(fabs(out.data_f64[i] - ref[i]), 1e-5 * (1 + fabs(ref[i])),
                     "%s causal=%d element %d: %g vs %g", variant, causal, i, out.data_f64[i],
                     ref[i]);
    lt_npy_free(&out);
}

Test(attention_tool, softmax_matches_reference) { check_attention_tool("softmax", 0, 0); }
Test(attention_tool, causal_softmax_matches_reference) { check_attention_tool("softmax", 0, 1); }
Test(attention_tool, linear_matches_reference) { check_attention_tool("linear", 1, 0); }
Test(attention_tool, causal_linear_matches_reference) { check_attention_tool("linear", 1, 1); }

Test(attention_tool, bad_inputs_exit_2_and_write_nothing)
{
    char dir[64];
    make_temp_dir(dir);
    static double q[B * H * N * D], v[B * H * N * M], e[K * N];
    const long long qk_shape[4] = {B, H, N, D}, v_shape[4] = {B, H, N, M};
    const long long short_shape[4] = {B, H, N - 1, D}, e_shape[2] = {K, N};
    char pq[128], pk_short[128], pv[128], pe[128], pnan[128], pout[128];
    snprintf(pq, sizeof pq, "%s/q.npy", dir);
    snprintf(pk_short, sizeof pk_short, "%s/kshort.npy", dir);
    snprintf(pv, sizeof pv, "%s/v.npy", dir);
    snprintf(pe, sizeof pe, "%s/e.npy", dir);
    snprintf(pnan, sizeof pnan, "%s/nan.npy", dir);
    snprintf(pout, sizeof pout, "%s/out.npy", dir);
    write_random(pq, q, 4, qk_shape, 1);
    write_random(pk_short, q, 4, short_shape, 2);
    write_random(pv, v, 4, v_shape, 3);
    write_random(pe, e, 2, e_shape, 4);
    write_random(pnan, q, 4, qk_shape, 5);
    q[7] = NAN;
    cr_assert_eq(lt_npy_write_f64(pnan, q, 4, qk_shape), LT_OK);
    int files = check_count_entries(dir);

    struct { const char *fmt, *mention; } bad[] = {
        {"attention --variant softmax --q @Q --k @KS --v @V --out @OUT", "--k has shape"},
        {"attention --variant linear --q @NAN --k @Q --v @V --out @OUT", "NaN"},
        {"attention --variant linformer --causal --q @Q --k @Q --v @V --e @E --f @E "
         "--out @OUT", "causal"},
        {"attention --variant linformer --q @Q --k @Q --v @V --out @OUT", "--e"},
        {"attention --variant softmax --q @Q --k @Q --v @V --e @E --out @OUT",
         "linformer only"},
        {"attention --variant softmax --q @Q --k @Q --v @V --dq @OUT --out @OUT",
         "need --dout"},
        {"attention --variant softmax --q @Q --k @Q --v @Q/none.npy --out @OUT",
         "none.npy"},
        {"attention --variant softmax --q @E --k @Q --v @V --out @OUT", "4-d"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[] = {"@Q", "@KS", "@V", "@E", "@NAN", "@OUT"};
        const char *paths[] = {pq, pk_short, pv, pe, pnan, pout};
        char cmd[1024];
        expand(cmd, sizeof cmd, bad[i].fmt, names, paths, 6);
        cr_assert_eq(ltbench(cmd), 2, "%s:\n%s", cmd, output);
        ASSERT_MENTIONS(bad[i].mention);
        cr_assert_eq(check_count_entries(dir), files, "nothing written by: %s", cmd);
    }
}
