/* Tests for src/io: CSV writer and reader, .npy read/write, PNG read/write
 * and grids. Every test works in its own temporary folder; failed writes
 * must leave neither the target nor a temporary file behind, and every
 * failure must release what it allocated. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/kernels.h"
#include "core/mem.h"
#include "core/provenance.h"
#include "core/rng.h"
#include "io/csv.h"
#include "io/npy.h"
#include "io/png.h"
#include "check.h"

/* ---- per-test folder and file helpers ---------------------------------- */

static void make_test_dir(void) { check_scratch_make("io"); }

TestSuite(io, .init = make_test_dir, .fini = check_scratch_remove);

/* Short names for the scratch-folder helpers of check.h. */
#define test_dir check_scratch_dir()
#define in_dir check_path
#define assert_status check_assert_status
#define assert_error_mentions check_assert_mentions
#define assert_memory_released check_assert_mem_released

static int count_temp_files(const char *folder)
{
    DIR *d = opendir(folder);
    if (d == NULL)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* After a failed write: no target, no temporary file beside it or in the
 * test folder, nothing left allocated. */
static void assert_no_output(const char *path)
{
    cr_assert(access(path, F_OK) != 0, "%s exists after a failed write", path);
    char parent[512];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash != NULL)
        *slash = '\0';
    cr_assert_eq(count_temp_files(parent), 0, "temporary file left in %s", parent);
    cr_assert_eq(count_temp_files(test_dir), 0, "temporary file left in %s", test_dir);
    assert_memory_released();
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* The whole file, NUL-terminated, in a malloc'd buffer. */
static char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size + 1);
    cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    buf[size] = '\0';
    if (len != NULL)
        *len = (size_t)size;
    return buf;
}

/* Paths no writer can use: under /proc, below a regular file, a folder;
 * and the part of each that the error message must name. */
static const char *unwritable_paths[3];
static const char *const unwritable_culprits[3] = {"/proc/nonexistent", "plain_file", "a_folder"};

static void make_unwritable_paths(const char *name)
{
    write_bytes(in_dir("plain_file"), "x", 1);
    static char below_file[512], folder[512];
    snprintf(below_file, sizeof below_file, "%s/plain_file/%s", test_dir, name);
    snprintf(folder, sizeof folder, "%s/a_folder", test_dir);
    cr_assert_eq(mkdir(folder, 0777), 0);
    unwritable_paths[0] = "/proc/nonexistent/out.file";
    unwritable_paths[1] = below_file;
    unwritable_paths[2] = folder;
}

/* ---- CSV ---------------------------------------------------------------- */

static const char *const csv_columns[] = {"experiment", "note", "N", "time_s"};
static const char *const tricky[] = {
    "plain", "a,b", "say \"hi\"", "two\nlines", " lead", "trail ", "cr\rin", "", "\ttab",
};
#define N_TRICKY (int)(sizeof tricky / sizeof tricky[0])
static const double numbers[] = {0.1, -2.5, 1e-300, 123456789.125, NAN, INFINITY, -INFINITY, 0.0,
                                 -0.0};

static void write_tricky_table(const char *path)
{
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, csv_columns, 4), LT_OK);
    for (int i = 0; i < N_TRICKY; i++) {
        assert_status(lt_csv_str(&csv, "copy"), LT_OK);
        assert_status(lt_csv_str(&csv, tricky[i]), LT_OK);
        assert_status(lt_csv_int(&csv, -9000000000000LL + i), LT_OK);
        assert_status(lt_csv_num(&csv, numbers[i]), LT_OK);
        assert_status(lt_csv_end_row(&csv), LT_OK);
    }
    assert_status(lt_csv_close(&csv), LT_OK);
}

Test(io, csv_round_trip)
{
    const char *path = in_dir("out/sub/table.csv"); /* parents are created */
    write_tricky_table(path);
    cr_assert_eq(count_temp_files(in_dir("out/sub")), 0);

    lt_csv_table t;
    assert_status(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.ncols, 4 + LT_CSV_PROVENANCE_COLUMNS);
    cr_assert_eq(t.nrows, N_TRICKY);
    const char *header[] = {"experiment", "note", "N", "time_s", "ltbench_version",
                            "git_revision", "cpu_model", "cpu_id", "blas", "kernel_isa", "date", "cores",
                            "load_start", "load_end", "steal_share", "omp_wait_policy",
                            "build", "ranks"};
    for (int c = 0; c < t.ncols; c++)
        cr_assert_str_eq(t.names[c], header[c]);
    lt_provenance prov;
    lt_provenance_get(&prov);
    for (int r = 0; r < N_TRICKY; r++) {
        cr_assert_str_eq(lt_csv_table_cell(&t, r, 1), tricky[r], "row %d", r);
        cr_assert_eq(strtoll(lt_csv_table_cell(&t, r, 2), NULL, 10), -9000000000000LL + r);
        double back = strtod(lt_csv_table_cell(&t, r, 3), NULL);
        if (isnan(numbers[r]))
            cr_assert(isnan(back));
        else
            cr_assert(back == numbers[r] && signbit(back) == signbit(numbers[r]),
                      "row %d: %s read back as %.17g", r, lt_csv_table_cell(&t, r, 3), back);
        cr_assert_str_eq(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "ltbench_version")),
                         prov.version);
        cr_assert_str_eq(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "blas")), prov.blas);
        cr_assert_str_eq(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "cpu_id")),
                         prov.cpu_id);
        const char *isa = lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "kernel_isa"));
        const char *active = lt_kernels_name(lt_kernels_active());
        size_t len = strlen(active); /* the name, alone or before " (LTBENCH_KERNELS)" */
        cr_assert(strncmp(isa, active, len) == 0 && (isa[len] == '\0' || isa[len] == ' '),
                  "kernel_isa %s, active %s", isa, active);
        cr_assert_eq(strlen(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "date"))), 20);
        cr_assert_eq(atoi(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "cores"))),
                     prov.cores);
        /* Loads: the start is the same on every row; both are numbers >= 0. */
        for (int i = 0; i < 2; i++) {
            const char *name = i ? "load_end" : "load_start";
            const char *cell = lt_csv_table_cell(&t, r, lt_csv_table_column(&t, name));
            char *end;
            double load = strtod(cell, &end);
            cr_assert(*end == '\0' && load >= 0, "%s '%s'", name, cell);
        }
        cr_assert_str_eq(lt_csv_table_cell(&t, r, lt_csv_table_column(&t, "load_start")),
                         lt_csv_table_cell(&t, 0, lt_csv_table_column(&t, "load_start")));
    }
    cr_assert_eq(lt_csv_table_column(&t, "time_s"), 3);
    cr_assert_eq(lt_csv_table_column(&t, "threads"), -1);
    lt_csv_table_free(&t);
    cr_assert_null(t.names);
    assert_memory_released();
}

/* cpu_id names the CPU's generation where the model name may not. The
 * parser reads /proc/cpuinfo's own keys: "model" is not "model name"
 * (whichever comes first), a stepping the kernel does not know is left out,
 * Arm has other keys, and lines of any length or without a colon pass. */
Test(io, cpuinfo_names_the_cpu_generation)
{
    char flags[3000] = "flags\t\t: fpu";
    for (int i = 0; i < 400; i++)
        strcat(flags, " avx512");
    char x86[4096];
    snprintf(x86, sizeof x86,
             "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
             "model name\t: AMD EPYC\nmodel\t\t: 17\nstepping\t: 1\n%s\n"
             "no colon here\n\n",
             flags);
    char model[128], id[80];
    lt_cpu_from_cpuinfo(x86, model, sizeof model, id, sizeof id);
    cr_assert_str_eq(model, "AMD EPYC");
    cr_assert_str_eq(id, "family 25 model 17 stepping 1");

    const char *unknown_stepping =
        "cpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel Xeon\nstepping\t: unknown\n";
    lt_cpu_from_cpuinfo(unknown_stepping, model, sizeof model, id, sizeof id);
    cr_assert_str_eq(model, "Intel Xeon");
    cr_assert_str_eq(id, "family 6 model 85");

    const char *arm = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd\n"
                      "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\n"
                      "CPU part\t: 0xd0c\nCPU revision\t: 1";
    lt_cpu_from_cpuinfo(arm, model, sizeof model, id, sizeof id);
    cr_assert_str_eq(model, "unknown");
    cr_assert_str_eq(id, "implementer 0x41 part 0xd0c variant 0x1 revision 1");

    lt_cpu_from_cpuinfo("", model, sizeof model, id, sizeof id);
    cr_assert_str_eq(model, "unknown");
    cr_assert_str_eq(id, "unknown");

    /* this machine's: on x86 its family and model */
    lt_provenance prov;
    lt_provenance_get(&prov);
    char text[4096] = ""; /* /proc files have no size: read, do not seek */
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    if (strstr(text, "cpu family") != NULL)
        cr_assert(strncmp(prov.cpu_id, "family ", 7) == 0, "cpu_id '%s'", prov.cpu_id);
}

/* steal_share comes from /proc/stat's "cpu " line: its eighth number is
 * the time the hypervisor ran other guests; kernels too old to count it
 * (or a line cut short) give no share, not a wrong one. */
Test(io, stat_gives_total_and_steal)
{
    unsigned long long total, steal;
    const char *vm = "cpu  4214080 15747 178161 795157 2942 0 1128 151180 0 0\n"
                     "cpu0 2107040 7873 89080 397578 1471 0 564 75590 0 0\n";
    cr_assert_eq(lt_cpu_times_from_stat(vm, &total, &steal), 1);
    cr_assert_eq(total, 4214080ULL + 15747 + 178161 + 795157 + 2942 + 0 + 1128 + 151180);
    cr_assert_eq(steal, 151180ULL);
    /* after another line, and without the guest fields */
    cr_assert_eq(lt_cpu_times_from_stat("intr 5\ncpu  1 2 3 4 5 6 7 8\n", &total, &steal), 1);
    cr_assert_eq(total, 36ULL);
    cr_assert_eq(steal, 8ULL);
    /* seven fields (no steal), no cpu line, cpu0 only */
    cr_assert_eq(lt_cpu_times_from_stat("cpu  1 2 3 4 5 6 7\n", &total, &steal), 0);
    cr_assert_eq(total, 0ULL);
    cr_assert_eq(lt_cpu_times_from_stat("intr 5\n", &total, &steal), 0);
    cr_assert_eq(lt_cpu_times_from_stat("cpu0 1 2 3 4 5 6 7 8\n", &total, &steal), 0);
    /* this machine: a share in [0, 1] or none */
    double share = lt_provenance_steal_share_now();
    cr_assert(isnan(share) || (share >= 0.0 && share <= 1.0), "steal share %g", share);
}

Test(io, csv_quotes_only_where_needed)
{
    const char *path = in_dir("table.csv");
    write_tricky_table(path);
    char *text = read_bytes(path, NULL);
    const char *header =
        "experiment,note,N,time_s,ltbench_version,git_revision,cpu_model,cpu_id,blas,kernel_isa,"
        "date,cores,load_start,load_end,steal_share,omp_wait_policy,build,ranks\n";
    cr_assert(strncmp(text, header, strlen(header)) == 0, "header: %.120s", text);
    const char *expected[] = {
        "\ncopy,plain,-9000000000000,0.10000000000000001,",
        "\ncopy,\"a,b\",-8999999999999,-2.5,",
        "\ncopy,\"say \"\"hi\"\"\",-8999999999998,1e-300,",
        "\ncopy,\"two\nlines\",",
        "\ncopy,\" lead\",",
        "\ncopy,\"trail \",",
        "\ncopy,\"cr\rin\",",
        "\ncopy,,-8999999999993,0,",
        "\ncopy,\"\ttab\",-8999999999992,-0,",
        ",nan,", ",inf,", ",-inf,",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_assert(strstr(text, expected[i]) != NULL, "missing %s in:\n%s", expected[i], text);
    free(text);
}

Test(io, csv_too_few_cells_is_internal_and_leaves_nothing)
{
    const char *path = in_dir("few.csv");
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, csv_columns, 4), LT_OK);
    assert_status(lt_csv_str(&csv, "copy"), LT_OK);
    assert_status(lt_csv_end_row(&csv), LT_E_INTERNAL);
    assert_error_mentions("row 1 has 1 cells, expected 4");
    /* The failure sticks: later cells and close refuse to commit. */
    assert_status(lt_csv_str(&csv, "more"), LT_E_INTERNAL);
    assert_status(lt_csv_close(&csv), LT_E_INTERNAL);
    lt_csv_abort(&csv); /* harmless after close */
    assert_no_output(path);
}

Test(io, csv_too_many_cells_is_internal)
{
    const char *path = in_dir("many.csv");
    const char *cols[] = {"a", "b"};
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, cols, 2), LT_OK);
    assert_status(lt_csv_int(&csv, 1), LT_OK);
    assert_status(lt_csv_int(&csv, 2), LT_OK);
    assert_status(lt_csv_int(&csv, 3), LT_E_INTERNAL);
    assert_status(lt_csv_end_row(&csv), LT_E_INTERNAL);
    assert_status(lt_csv_close(&csv), LT_E_INTERNAL);
    assert_no_output(path);
}

Test(io, csv_unfinished_row_is_not_committed)
{
    const char *path = in_dir("unfinished.csv");
    const char *cols[] = {"a", "b"};
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, cols, 2), LT_OK);
    assert_status(lt_csv_num(&csv, 1.5), LT_OK);
    assert_status(lt_csv_close(&csv), LT_E_INTERNAL);
    assert_error_mentions("unfinished");
    assert_no_output(path);
}

Test(io, csv_abort_keeps_the_old_file)
{
    const char *path = in_dir("kept.csv");
    write_bytes(path, "old", 3);
    const char *cols[] = {"a"};
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, cols, 1), LT_OK);
    assert_status(lt_csv_str(&csv, "new"), LT_OK);
    assert_status(lt_csv_end_row(&csv), LT_OK);
    lt_csv_abort(&csv);
    char *text = read_bytes(path, NULL);
    cr_assert_str_eq(text, "old");
    free(text);
    cr_assert_eq(count_temp_files(test_dir), 0);
}

Test(io, csv_bad_columns_are_internal)
{
    const char *path = in_dir("cols.csv");
    lt_csv csv;
    const char *twice[] = {"N", "variant", "N"};
    assert_status(lt_csv_open(&csv, path, twice, 3), LT_E_INTERNAL);
    assert_error_mentions("'N'");
    const char *clash[] = {"variant", "date"}; /* date is a provenance column */
    assert_status(lt_csv_open(&csv, path, clash, 2), LT_E_INTERNAL);
    assert_status(lt_csv_open(&csv, path, twice, 0), LT_E_INTERNAL);
    const char *unnamed[] = {"a", ""};
    assert_status(lt_csv_open(&csv, path, unnamed, 2), LT_E_INTERNAL);
    assert_no_output(path);
}

Test(io, csv_unwritable_paths_are_io)
{
    make_unwritable_paths("x.csv");
    const char *cols[] = {"a"};
    for (int i = 0; i < 3; i++) {
        lt_csv csv;
        assert_status(lt_csv_open(&csv, unwritable_paths[i], cols, 1), LT_E_IO);
        assert_error_mentions(unwritable_culprits[i]);
        if (i < 2)
            assert_no_output(unwritable_paths[i]);
    }
    assert_no_output(in_dir("a_folder/x"));
}

Test(io, csv_reader_handles_quotes_crlf_and_blank_lines)
{
    const char *path = in_dir("hand.csv");
    const char *text = "name,\"va,lue\"\r\n"
                       "\r\n"
                       "\"multi\r\nline\",\"q\"\"uote\"\r\n"
                       "\n"
                       ",\"\"\n"
                       "last,row"; /* no final line break */
    write_bytes(path, text, strlen(text));
    lt_csv_table t;
    assert_status(lt_csv_read(&t, path), LT_OK);
    cr_assert_eq(t.ncols, 2);
    cr_assert_eq(t.nrows, 3);
    cr_assert_str_eq(t.names[1], "va,lue");
    cr_assert_str_eq(lt_csv_table_cell(&t, 0, 0), "multi\r\nline");
    cr_assert_str_eq(lt_csv_table_cell(&t, 0, 1), "q\"uote");
    cr_assert_str_eq(lt_csv_table_cell(&t, 1, 0), "");
    cr_assert_str_eq(lt_csv_table_cell(&t, 1, 1), "");
    cr_assert_str_eq(lt_csv_table_cell(&t, 2, 1), "row");
    lt_csv_table_free(&t);
    assert_memory_released();
}

/* Two tables joined: the first's rows then the second's, the columns of
 * both (shared ones once), empty cells where a row's table had no such
 * column; the join outlives both. */
Test(io, csv_tables_join_rows_under_the_union_of_their_columns)
{
    const char *a_path = in_dir("a.csv"), *b_path = in_dir("b.csv");
    const char *a_text = "method,speedup\nsoftmax,1\nlinear,4462\n";
    const char *b_text = "method,seconds,device\nsoftmax,8651,CPU\n";
    write_bytes(a_path, a_text, strlen(a_text));
    write_bytes(b_path, b_text, strlen(b_text));
    lt_csv_table a, b, joined;
    assert_status(lt_csv_read(&a, a_path), LT_OK);
    assert_status(lt_csv_read(&b, b_path), LT_OK);
    assert_status(lt_csv_table_concat(&joined, &a, &b), LT_OK);
    lt_csv_table_free(&a);
    lt_csv_table_free(&b);
    cr_assert_eq(joined.ncols, 4);
    cr_assert_eq(joined.nrows, 3);
    cr_assert_str_eq(joined.names[2], "seconds");
    cr_assert_str_eq(joined.names[3], "device");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 1, 1), "4462");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 1, 3), "");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 2, 0), "softmax");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 2, 1), "");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 2, 2), "8651");
    cr_assert_str_eq(lt_csv_table_cell(&joined, 2, 3), "CPU");
    lt_csv_table_free(&joined);
    assert_memory_released();
}

/* A journal's last line without its line break was torn by a kill: the
 * journal reader leaves it out, the plain reader refuses it. */
Test(io, csv_journal_reader_leaves_out_a_torn_last_row)
{
    const char *path = in_dir("journal.csv.partial");
    const char *text = "step,loss\n1,2.5\n2,2.4\n3,2";
    write_bytes(path, text, strlen(text));
    lt_csv_table t;
    assert_status(lt_csv_read_journal(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 2);
    cr_assert_str_eq(lt_csv_table_cell(&t, 1, 1), "2.4");
    lt_csv_table_free(&t);
    const char *cut = "step,loss\n1,2.5\n2,2.4\n3";
    write_bytes(path, cut, strlen(cut));
    assert_status(lt_csv_read(&t, path), LT_E_INPUT);
    assert_status(lt_csv_read_journal(&t, path), LT_OK);
    cr_assert_eq(t.nrows, 2);
    lt_csv_table_free(&t);
    assert_memory_released();
}

/* Writes `text` as a CSV file and expects LT_E_INPUT whose message names the
 * file and `where`. */
static void expect_bad_csv(const char *name, const char *text, size_t len, const char *where)
{
    const char *path = in_dir(name);
    write_bytes(path, text, len);
    lt_csv_table t;
    assert_status(lt_csv_read(&t, path), LT_E_INPUT);
    assert_error_mentions(path);
    assert_error_mentions(where);
    cr_assert_null(t.names);
    assert_memory_released();
}

Test(io, csv_reader_rejects_bad_tables)
{
    expect_bad_csv("ragged.csv", "a,b\n1,2\n3\n", 10, "line 3");
    /* The line count goes on through a quoted line break. */
    const char *after_multiline = "a,b\n\"x\ny\",2\n1,2,3\n";
    expect_bad_csv("ragged2.csv", after_multiline, strlen(after_multiline), "line 4");
    expect_bad_csv("unterminated.csv", "a,b\n1,\"oops\n2,3\n", 16, "line 2");
    expect_bad_csv("after_quote.csv", "a\n\"x\"y\n", 7, "line 2");
    expect_bad_csv("nul.csv", "a,b\n1,\0\n", 8, "NUL");
    expect_bad_csv("empty.csv", "", 0, "header");
    expect_bad_csv("blank.csv", "\n\r\n\n", 4, "header");
}

Test(io, csv_reader_missing_file_or_folder_is_io)
{
    lt_csv_table t;
    assert_status(lt_csv_read(&t, in_dir("missing.csv")), LT_E_IO);
    assert_error_mentions("missing.csv");
    assert_status(lt_csv_read(&t, test_dir), LT_E_IO);
    assert_memory_released();
}

/* ---- NPY ---------------------------------------------------------------- */

/* Values that exercise sign, exponent range and every mantissa bit. */
static double pattern(long long i)
{
    return (i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / 3.0) * pow(10.0, (double)(i % 7) - 3.0);
}

typedef struct shape_case {
    int ndim;
    long long shape[LT_NPY_MAX_DIMS];
} shape_case;

static const shape_case shape_cases[] = {
    {0, {0}},          {1, {7}},          {2, {3, 5}},
    {3, {2, 3, 4}},    {4, {2, 1, 3, 2}}, {2, {0, 4}},
    {3, {3, 0, 2}},    {8, {1, 2, 1, 2, 1, 2, 1, 3}},
};
#define N_SHAPES (int)(sizeof shape_cases / sizeof shape_cases[0])

static long long shape_count(const shape_case *s)
{
    long long n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->shape[i];
    return n;
}

static void assert_same_shape(const lt_npy *a, const shape_case *s)
{
    cr_assert_eq(a->ndim, s->ndim);
    for (int i = 0; i < s->ndim; i++)
        cr_assert_eq(a->shape[i], s->shape[i], "dim %d", i);
}

Test(io, npy_f32_round_trip)
{
    float values[64];
    for (int i = 0; i < 64; i++)
        values[i] = (float)pattern(i);
    for (int k = 0; k < N_SHAPES; k++) {
        const shape_case *s = &shape_cases[k];
        const char *path = in_dir("f32.npy");
        assert_status(lt_npy_write_f32(path, values, s->ndim, s->shape), LT_OK);
        lt_npy a;
        assert_status(lt_npy_read(&a, path), LT_OK);
        assert_same_shape(&a, s);
        cr_assert_eq(a.is_f64, 0);
        cr_assert_null(a.data_f64);
        cr_assert_eq(lt_npy_count(&a), shape_count(s));
        cr_assert_eq(memcmp(a.data, values, (size_t)shape_count(s) * sizeof(float)), 0,
                     "case %d", k);
        lt_npy_free(&a);
        /* Widening to double is exact. */
        assert_status(lt_npy_read_f64(&a, path), LT_OK);
        assert_same_shape(&a, s);
        cr_assert_null(a.data);
        for (long long i = 0; i < shape_count(s); i++)
            cr_assert(a.data_f64[i] == (double)values[i]);
        lt_npy_free(&a);
    }
    cr_assert_eq(count_temp_files(test_dir), 0);
    assert_memory_released();
}

Test(io, npy_f64_round_trip)
{
    double values[64];
    for (int i = 0; i < 64; i++)
        values[i] = pattern(i) / 7.0;
    values[5] = 1e300; /* beyond float: becomes inf when narrowed */
    for (int k = 0; k < N_SHAPES; k++) {
        const shape_case *s = &shape_cases[k];
        const char *path = in_dir("f64.npy");
        assert_status(lt_npy_write_f64(path, values, s->ndim, s->shape), LT_OK);
        lt_npy a;
        assert_status(lt_npy_read_f64(&a, path), LT_OK);
        assert_same_shape(&a, s);
        cr_assert_eq(a.is_f64, 1);
        cr_assert_eq(memcmp(a.data_f64, values, (size_t)shape_count(s) * sizeof(double)), 0);
        lt_npy_free(&a);
        assert_status(lt_npy_read(&a, path), LT_OK);
        cr_assert_eq(a.is_f64, 1);
        for (long long i = 0; i < shape_count(s); i++)
            cr_assert(a.data[i] == (float)values[i], "element %lld", i);
        lt_npy_free(&a);
    }
    assert_memory_released();
}

/* numpy.save's exact bytes: the dict, spaces, '\n', data on a 64-byte
 * boundary (padding also reserves room for the first axis to grow). */
static void assert_numpy_header(const char *path, const char *dict, size_t header_total,
                                size_t data_bytes)
{
    size_t len;
    char *bytes = read_bytes(path, &len);
    cr_assert_eq(len, header_total + data_bytes);
    char expected[512] = "\x93NUMPY\x01\x00";
    expected[8] = (char)((header_total - 10) & 0xff);
    expected[9] = (char)((header_total - 10) >> 8);
    memset(expected + 10, ' ', header_total - 10);
    memcpy(expected + 10, dict, strlen(dict));
    expected[header_total - 1] = '\n';
    cr_assert_eq(memcmp(bytes, expected, header_total), 0, "header: %.*s", (int)header_total,
                 bytes);
    free(bytes);
}

Test(io, npy_header_matches_numpy)
{
    float v[6] = {0};
    long long s23[] = {2, 3};
    assert_status(lt_npy_write_f32(in_dir("a.npy"), v, 2, s23), LT_OK);
    assert_numpy_header(in_dir("a.npy"),
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 128, 24);
    long long s5[] = {5};
    double d[5] = {0};
    assert_status(lt_npy_write_f64(in_dir("b.npy"), d, 1, s5), LT_OK);
    assert_numpy_header(in_dir("b.npy"),
                        "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", 128, 40);
    assert_status(lt_npy_write_f32(in_dir("c.npy"), v, 0, NULL), LT_OK);
    assert_numpy_header(in_dir("c.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                        128, 4);
    /* Eight axes still fit the first 128 bytes beside the growth room. */
    long long s8[] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_status(lt_npy_write_f32(in_dir("d.npy"), v, 8, s8), LT_OK);
    assert_numpy_header(in_dir("d.npy"),
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, "
                        "1), }",
                        128, 4);
}

/* Writes a .npy file by hand: version major.minor, the given header text
 * padded to a 64-byte boundary, then `data_bytes` bytes of data. */
static const char *write_raw_npy(const char *name, int major, int minor, const char *dict,
                                 size_t data_bytes)
{
    const char *path = in_dir(name);
    char file[1024] = "\x93NUMPY";
    file[6] = (char)major;
    file[7] = (char)minor;
    size_t header_len = strlen(dict) + 1;
    header_len += (64 - (10 + header_len) % 64) % 64;
    file[8] = (char)(header_len & 0xff);
    file[9] = (char)(header_len >> 8);
    memset(file + 10, ' ', header_len);
    memcpy(file + 10, dict, strlen(dict));
    file[10 + header_len - 1] = '\n';
    size_t total = 10 + header_len + data_bytes;
    cr_assert_leq(total, sizeof file);
    memset(file + 10 + header_len, 0x3f, data_bytes);
    write_bytes(path, file, total);
    return path;
}

/* Both readers refuse `path` with `want`, naming the file and `what`. */
static void expect_bad_npy(const char *path, lt_status want, const char *what)
{
    lt_npy a;
    assert_status(lt_npy_read(&a, path), want);
    assert_error_mentions(path);
    assert_error_mentions(what);
    cr_assert_null(a.data);
    assert_status(lt_npy_read_f64(&a, path), want);
    cr_assert_null(a.data_f64);
    assert_memory_released();
}

#define DICT(descr, order, shape) \
    "{'descr': '" descr "', 'fortran_order': " order ", 'shape': " shape ", }"

Test(io, npy_reader_accepts_header_variants)
{
    const char *variants[] = {
        "{\"shape\": (2, 3), \"descr\": \"<f4\", \"fortran_order\": False}",
        "{'descr':'<f4','fortran_order':False,'shape':(2,3)}",
        "{ 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , 'descr' : '<f4' , }",
    };
    for (int i = 0; i < 3; i++) {
        const char *path = write_raw_npy("variant.npy", 1, 0, variants[i], 24);
        lt_npy a;
        assert_status(lt_npy_read(&a, path), LT_OK);
        cr_assert_eq(a.ndim, 2);
        cr_assert_eq(a.shape[0], 2);
        cr_assert_eq(a.shape[1], 3);
        lt_npy_free(&a);
    }
    assert_memory_released();
}

Test(io, npy_reader_rejects_bad_magic_and_versions)
{
    const char *path = in_dir("magic.npy");
    write_bytes(path, "\x93NUMPX\x01\x00\x10\x00{}              ", 26);
    expect_bad_npy(path, LT_E_INPUT, "\\x93NUMPY");
    write_bytes(path, "\x93NU", 3);
    expect_bad_npy(path, LT_E_INPUT, "\\x93NUMPY");
    write_bytes(path, "\x93NUMPY\x01", 7);
    expect_bad_npy(path, LT_E_INPUT, "header");
    expect_bad_npy(write_raw_npy("v2.npy", 2, 0, DICT("<f4", "False", "(2,)"), 8), LT_E_INPUT,
                   "version 2.0, expected 1.0");
    expect_bad_npy(write_raw_npy("v3.npy", 3, 0, DICT("<f4", "False", "(2,)"), 8), LT_E_INPUT,
                   "version 3.0, expected 1.0");
    /* Header length larger than the file. */
    write_bytes(path, "\x93NUMPY\x01\x00\x00\x01{'descr'", 18);
    expect_bad_npy(path, LT_E_INPUT, "ends inside its header");
}

Test(io, npy_reader_rejects_fortran_order_and_other_dtypes)
{
    expect_bad_npy(write_raw_npy("f.npy", 1, 0, DICT("<f4", "True", "(2, 3)"), 24), LT_E_INPUT,
                   "Fortran order, expected C order");
    const char *dtypes[] = {"<i4", ">f4", "|u1", "<f2", ">f8", "<c8"};
    for (int i = 0; i < 6; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, DICT("%s", "False", "(2,)"), dtypes[i]);
        char found[32];
        snprintf(found, sizeof found, "'%s', expected '<f4' or '<f8'", dtypes[i]);
        expect_bad_npy(write_raw_npy("dtype.npy", 1, 0, dict, 16), LT_E_INPUT, found);
    }
}

Test(io, npy_reader_rejects_malformed_headers)
{
    const char *dicts[] = {
        "",                                                        /* nothing */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", /* no '}' */
        "{'descr': '<f4', 'fortran_order': False}",                /* no shape */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
        "{'descr': <f4, 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk",
        "{'descr': '<f4', 'fortran_order': False, 'shape': 2}",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++)
        expect_bad_npy(write_raw_npy("malformed.npy", 1, 0, dicts[i], 8), LT_E_INPUT,
                       "malformed .npy header");
}

Test(io, npy_reader_rejects_bad_sizes)
{
    expect_bad_npy(write_raw_npy("short.npy", 1, 0, DICT("<f4", "False", "(2, 3)"), 20),
                   LT_E_INPUT, "shape (2, 3) of '<f4' needs 24 bytes, found 20");
    expect_bad_npy(write_raw_npy("short64.npy", 1, 0, DICT("<f8", "False", "(3,)"), 23),
                   LT_E_INPUT, "needs 24 bytes, found 23");
    expect_bad_npy(write_raw_npy("long.npy", 1, 0, DICT("<f4", "False", "(2, 3)"), 28),
                   LT_E_INPUT, "4 unexpected bytes after the .npy data");
    expect_bad_npy(write_raw_npy("empty_long.npy", 1, 0, DICT("<f4", "False", "(0,)"), 1),
                   LT_E_INPUT, "unexpected bytes");
    expect_bad_npy(write_raw_npy("nine.npy", 1, 0,
                                 DICT("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4),
                   LT_E_INPUT, "more than 8 dimensions");
    expect_bad_npy(write_raw_npy("negative.npy", 1, 0, DICT("<f4", "False", "(-1, 3)"), 0),
                   LT_E_INPUT, "negative size");
    expect_bad_npy(write_raw_npy("digits.npy", 1, 0,
                                 DICT("<f4", "False", "(99999999999999999999,)"), 0),
                   LT_E_INPUT, "overflows");
    expect_bad_npy(write_raw_npy("product.npy", 1, 0,
                                 DICT("<f8", "False", "(4294967296, 4294967296)"), 0),
                   LT_E_INPUT, "too large");
    /* Huge but addressable: refused from the file size, before allocating. */
    expect_bad_npy(write_raw_npy("huge.npy", 1, 0, DICT("<f4", "False", "(1000000000000,)"), 8),
                   LT_E_INPUT, "needs 4000000000000 bytes, found 8");
}

Test(io, npy_reader_missing_file_or_folder_is_io)
{
    expect_bad_npy(in_dir("missing.npy"), LT_E_IO, "No such file");
    expect_bad_npy(test_dir, LT_E_IO, "folder");
}

Test(io, npy_writer_refuses_bad_shapes_and_paths)
{
    float v[4] = {0};
    long long nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const char *path = in_dir("bad.npy");
    assert_status(lt_npy_write_f32(path, v, 9, nine), LT_E_INPUT);
    assert_status(lt_npy_write_f32(path, v, -1, nine), LT_E_INPUT);
    long long negative[] = {2, -2};
    assert_status(lt_npy_write_f64(path, (const double *)v, 2, negative), LT_E_INPUT);
    long long overflow[] = {1LL << 40, 1LL << 40};
    assert_status(lt_npy_write_f32(path, v, 2, overflow), LT_E_INPUT);
    assert_no_output(path);

    make_unwritable_paths("x.npy");
    long long s[] = {4};
    for (int i = 0; i < 3; i++) {
        assert_status(lt_npy_write_f32(unwritable_paths[i], v, 1, s), LT_E_IO);
        assert_error_mentions(unwritable_culprits[i]);
        if (i < 2)
            assert_no_output(unwritable_paths[i]);
    }
    assert_memory_released();
}

/* ---- PNG ---------------------------------------------------------------- */

static void fill_pattern(uint8_t *pixels, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        pixels[i] = (uint8_t)(i * 37u + seed * 101u + (i >> 8));
}

static void assert_png_round_trip(int width, int height, int channels)
{
    size_t n = (size_t)width * (size_t)height * (size_t)channels;
    uint8_t *pixels = malloc(n);
    fill_pattern(pixels, n, (unsigned)channels);
    const char *path = in_dir("round.png");
    assert_status(lt_png_write(path, pixels, width, height, channels), LT_OK);
    uint8_t *back;
    int w, h, c;
    assert_status(lt_png_read(&back, &w, &h, &c, path), LT_OK);
    cr_assert_eq(w, width);
    cr_assert_eq(h, height);
    cr_assert_eq(c, channels);
    cr_assert_eq(memcmp(back, pixels, n), 0);
    lt_mem_free(back);
    free(pixels);
    cr_assert_eq(count_temp_files(test_dir), 0);
    assert_memory_released();
}

Test(io, png_gray_round_trip) { assert_png_round_trip(37, 11, 1); }

Test(io, png_rgb_round_trip) { assert_png_round_trip(13, 29, 3); }

Test(io, png_single_pixel_round_trip) { assert_png_round_trip(1, 1, 3); }

Test(io, png_grid_places_tiles)
{
    enum { COUNT = 5, TW = 3, TH = 2, C = 3, COLS = 2, PAD = 1, BG = 7 };
    int gw, gh;
    assert_status(lt_png_grid_size(&gw, &gh, COUNT, TW, TH, COLS, PAD), LT_OK);
    cr_assert_eq(gw, COLS * TW + (COLS + 1) * PAD); /* 9 */
    cr_assert_eq(gh, 3 * TH + 4 * PAD);             /* 10 */
    /* Tile i, pixel (x, y), channel k holds 100 + 20 i + 6 y + 2 x + k: never BG. */
    uint8_t tiles[COUNT * TH * TW * C];
    for (int i = 0; i < COUNT; i++)
        for (int y = 0; y < TH; y++)
            for (int x = 0; x < TW; x++)
                for (int k = 0; k < C; k++)
                    tiles[((i * TH + y) * TW + x) * C + k] =
                        (uint8_t)(100 + 20 * i + 6 * y + 2 * x + k);
    uint8_t grid[10 * 9 * C];
    assert_status(lt_png_grid(grid, tiles, COUNT, TW, TH, C, COLS, PAD, BG), LT_OK);
#define AT(x, y, k) grid[((y) * gw + (x)) * C + (k)]
    cr_assert_eq(AT(0, 0, 0), BG);
    cr_assert_eq(AT(1, 1, 0), 100);          /* tile 0, (0, 0) */
    cr_assert_eq(AT(3, 2, 2), 100 + 6 + 4 + 2); /* tile 0, (2, 1), channel 2 */
    cr_assert_eq(AT(4, 1, 0), BG);           /* gap between columns */
    cr_assert_eq(AT(5, 1, 1), 120 + 1);      /* tile 1, (0, 0) */
    cr_assert_eq(AT(7, 2, 0), 120 + 6 + 4);  /* tile 1, (2, 1) */
    cr_assert_eq(AT(8, 1, 0), BG);           /* right edge */
    cr_assert_eq(AT(1, 3, 0), BG);           /* gap between rows */
    cr_assert_eq(AT(1, 4, 0), 140);          /* tile 2 */
    cr_assert_eq(AT(5, 4, 0), 160);          /* tile 3 */
    cr_assert_eq(AT(2, 8, 0), 180 + 6 + 2);  /* tile 4, (1, 1) */
    cr_assert_eq(AT(5, 7, 0), BG);           /* the empty sixth cell */
    cr_assert_eq(AT(7, 8, 2), BG);
    cr_assert_eq(AT(8, 9, 2), BG);           /* bottom-right corner */
#undef AT
    int fg = 0;
    for (size_t i = 0; i < sizeof grid; i++)
        fg += grid[i] != BG;
    cr_assert_eq(fg, COUNT * TH * TW * C, "every tile pixel lands exactly once");

    assert_status(lt_png_write(in_dir("grid.png"), grid, gw, gh, C), LT_OK);
    uint8_t *back;
    int w, h, c;
    assert_status(lt_png_read(&back, &w, &h, &c, in_dir("grid.png")), LT_OK);
    cr_assert(w == gw && h == gh && c == C);
    cr_assert_eq(memcmp(back, grid, sizeof grid), 0);
    lt_mem_free(back);
    assert_memory_released();
}

Test(io, png_grid_narrower_than_cols_and_no_pad)
{
    int gw, gh;
    assert_status(lt_png_grid_size(&gw, &gh, 2, 4, 3, 8, 2), LT_OK);
    cr_assert_eq(gw, 2 * 4 + 3 * 2);
    cr_assert_eq(gh, 3 + 2 * 2);
    assert_status(lt_png_grid_size(&gw, &gh, 4, 2, 2, 2, 0), LT_OK);
    cr_assert(gw == 4 && gh == 4);
    uint8_t tiles[4 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint8_t grid[16];
    assert_status(lt_png_grid(grid, tiles, 4, 2, 2, 1, 2, 0, 0), LT_OK);
    const uint8_t expected[16] = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};
    cr_assert_eq(memcmp(grid, expected, 16), 0);
}

Test(io, png_grid_rejects_bad_sizes)
{
    int gw, gh;
    assert_status(lt_png_grid_size(&gw, &gh, 0, 2, 2, 2, 0), LT_E_INPUT);
    assert_status(lt_png_grid_size(&gw, &gh, 2, 0, 2, 2, 0), LT_E_INPUT);
    assert_status(lt_png_grid_size(&gw, &gh, 2, 2, 2, 0, 0), LT_E_INPUT);
    assert_status(lt_png_grid_size(&gw, &gh, 2, 2, 2, 2, -1), LT_E_INPUT);
    assert_status(lt_png_grid_size(&gw, &gh, 100000, 100000, 1, 100000, 0), LT_E_INPUT);
    assert_error_mentions("too large");
    uint8_t out[4];
    assert_status(lt_png_grid(out, out, 1, 1, 1, 0, 1, 0, 0), LT_E_INPUT);
}

Test(io, png_writer_refuses_bad_arguments_and_paths)
{
    uint8_t pixels[16] = {0};
    const char *path = in_dir("bad.png");
    assert_status(lt_png_write(path, pixels, 2, 2, 2), LT_E_INPUT);
    assert_status(lt_png_write(path, pixels, 2, 2, 4), LT_E_INPUT);
    assert_status(lt_png_write(path, pixels, 0, 2, 1), LT_E_INPUT);
    assert_status(lt_png_write(path, pixels, 2, -1, 1), LT_E_INPUT);
    assert_no_output(path);
    make_unwritable_paths("x.png");
    for (int i = 0; i < 3; i++) {
        assert_status(lt_png_write(unwritable_paths[i], pixels, 2, 2, 1), LT_E_IO);
        if (i < 2)
            assert_no_output(unwritable_paths[i]);
    }
}

Test(io, png_libpng_error_is_io_and_leaves_nothing)
{
    /* libpng's default limit is 1000000 pixels across: it errors out from
     * inside png_set_IHDR, which must come back as LT_E_IO, not a crash. */
    int width = 2000001;
    uint8_t *row = calloc((size_t)width, 1);
    const char *path = in_dir("wide.png");
    assert_status(lt_png_write(path, row, width, 1, 1), LT_E_IO);
    assert_error_mentions("libpng");
    assert_error_mentions(path);
    free(row);
    assert_no_output(path);
}

/* Writes a 4 x 3 gray PNG and returns its bytes (malloc'd). */
static char *small_png(size_t *len)
{
    uint8_t pixels[12];
    fill_pattern(pixels, 12, 3);
    assert_status(lt_png_write(in_dir("small.png"), pixels, 4, 3, 1), LT_OK);
    return read_bytes(in_dir("small.png"), len);
}

/* Rewrites the IHDR bit depth and colour type, with a correct CRC, so
 * libpng reads a consistent header for a format we do not accept. */
static void patch_ihdr(char *png, int depth, int color_type)
{
    /* signature (8), length (4), "IHDR" (4), width (4), height (4), then depth, colour type */
    cr_assert_eq(memcmp(png + 12, "IHDR", 4), 0);
    png[24] = (char)depth;
    png[25] = (char)color_type;
    uLong crc = crc32(0L, (const Bytef *)png + 12, 17);
    for (int i = 0; i < 4; i++)
        png[29 + i] = (char)(crc >> (24 - 8 * i));
}

static void expect_bad_png(const char *name, const char *bytes, size_t len, lt_status want,
                           const char *what)
{
    const char *path = in_dir(name);
    write_bytes(path, bytes, len);
    uint8_t *pixels = (uint8_t *)&pixels;
    int w, h, c;
    assert_status(lt_png_read(&pixels, &w, &h, &c, path), want);
    assert_error_mentions(path);
    assert_error_mentions(what);
    cr_assert_null(pixels);
    assert_memory_released();
}

Test(io, png_reader_rejects_bad_files)
{
    size_t len;
    char *png = small_png(&len);
    expect_bad_png("text.png", "hello, this is not a png", 24, LT_E_INPUT, "not a PNG");
    expect_bad_png("truncated.png", png, len / 2, LT_E_INPUT, "damaged PNG");
    expect_bad_png("sig_only.png", png, 8, LT_E_INPUT, "damaged PNG");

    char *copy = malloc(len);
    memcpy(copy, png, len);
    copy[len - 20] ^= 0x55; /* inside the compressed pixels: a checksum fails */
    expect_bad_png("crc.png", copy, len, LT_E_INPUT, "damaged PNG");

    memcpy(copy, png, len);
    patch_ihdr(copy, 8, 6);
    expect_bad_png("rgba.png", copy, len, LT_E_INPUT, "8-bit RGBA PNG, expected 8-bit gray or RGB");
    memcpy(copy, png, len);
    patch_ihdr(copy, 16, 0);
    expect_bad_png("deep.png", copy, len, LT_E_INPUT, "16-bit gray PNG");
    memcpy(copy, png, len);
    patch_ihdr(copy, 8, 3);
    expect_bad_png("palette.png", copy, len, LT_E_INPUT, "PNG"); /* no PLTE: damaged */
    free(copy);
    free(png);

    uint8_t *pixels;
    int w, h, c;
    assert_status(lt_png_read(&pixels, &w, &h, &c, in_dir("missing.png")), LT_E_IO);
    assert_status(lt_png_read(&pixels, &w, &h, &c, test_dir), LT_E_IO);
    assert_memory_released();
}

/* ---- a machine that fails the writes: LT_E_SYSTEM, exit status 1 ---- */

/* Points an opened output at /dev/full, where every write that reaches the
 * device fails with ENOSPC, as on a full disk. Its temporary file stays, for
 * the failure to remove. */
static void send_to_full_disk(lt_atomic_file *af)
{
    FILE *full = fopen("/dev/full", "wb");
    cr_assert_not_null(full);
    cr_assert_eq(fclose(af->f), 0);
    af->f = full;
}

static void assert_machine_failure(const char *path, const char *reason)
{
    assert_error_mentions(path);
    assert_error_mentions(reason);
    cr_assert_eq(lt_exit_code(LT_E_SYSTEM), 1);
    assert_no_output(path);
}

Test(io, full_disk_is_the_machines_failure)
{
    /* a CSV whose rows stay buffered: the commit's flush meets the full disk */
    const char *path = in_dir("full.csv");
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, csv_columns, 4), LT_OK);
    send_to_full_disk(&csv.file);
    assert_status(lt_csv_str(&csv, "copy"), LT_OK);
    assert_status(lt_csv_str(&csv, "note"), LT_OK);
    assert_status(lt_csv_int(&csv, 1), LT_OK);
    assert_status(lt_csv_num(&csv, 0.5), LT_OK);
    assert_status(lt_csv_end_row(&csv), LT_OK);
    assert_status(lt_csv_close(&csv), LT_E_SYSTEM);
    assert_machine_failure(path, "No space left on device");

    /* an array larger than stdio's buffer: the write itself fails */
    enum { COUNT = 1 << 16 };
    float *data = calloc(COUNT, sizeof(float));
    const long long shape[1] = {COUNT};
    path = in_dir("full.npy");
    lt_atomic_file af;
    assert_status(lt_atomic_open(&af, path), LT_OK);
    send_to_full_disk(&af);
    assert_status(lt_npy_write_f32_into(&af, data, 1, shape), LT_E_SYSTEM);
    lt_atomic_abort(&af);
    assert_machine_failure(path, "No space left on device");
    free(data);
}

/* A file-size limit fails the writes with EFBIG (its signal ignored): each
 * writer reports the machine's failure with the reason, and leaves nothing. */
Test(io, file_size_limit_is_the_machines_failure)
{
    enum { SIDE = 256, COUNT = 1 << 16 };
    uint8_t *noise = malloc((size_t)SIDE * SIDE * 3); /* incompressible */
    lt_rng rng;
    lt_rng_seed(&rng, 7, 0);
    for (size_t i = 0; i < (size_t)SIDE * SIDE * 3; i++)
        noise[i] = (uint8_t)lt_rng_u64(&rng);
    double *data = calloc(COUNT, sizeof(double));
    const long long shape[1] = {COUNT};
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {.rlim_cur = 16 * 1024, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);

    const char *path = in_dir("big.png");
    assert_status(lt_png_write(path, noise, SIDE, SIDE, 3), LT_E_SYSTEM);
    assert_machine_failure(path, "File too large");
    path = in_dir("big.npy");
    assert_status(lt_npy_write_f64(path, data, 1, shape), LT_E_SYSTEM);
    assert_machine_failure(path, "File too large");
    path = in_dir("big.csv");
    lt_csv csv;
    assert_status(lt_csv_open(&csv, path, csv_columns, 4), LT_OK);
    lt_status status = LT_OK;
    for (int row = 0; row < 4000 && status == LT_OK; row++) {
        lt_csv_str(&csv, "copy");
        lt_csv_str(&csv, "a note long enough to fill the limit in a few hundred rows");
        lt_csv_int(&csv, row);
        lt_csv_num(&csv, row * 0.5);
        status = lt_csv_end_row(&csv);
    }
    cr_assert_eq(status, LT_E_SYSTEM, "%s", lt_last_error());
    assert_status(lt_csv_close(&csv), LT_E_SYSTEM);
    assert_machine_failure(path, "File too large");
    free(noise);
    free(data);
}
