#include "core/provenance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "core/dist.h"
#include "core/kernels.h"
#include "core/threads.h"
#include "version.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_parallel(void);

/* The value of the first line of `text` whose key is exactly `key` (keys
 * are padded with tabs before the colon), copied to out; "" where none is. */
static void cpuinfo_value(const char *text, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    size_t key_len = strlen(key);
    for (const char *line = text; *line != '\0';) {
        size_t line_len = strcspn(line, "\n");
        const char *colon = memchr(line, ':', line_len);
        if (colon != NULL) {
            size_t len = (size_t)(colon - line);
            while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
            if (len == key_len && strncmp(line, key, len) == 0) {
                const char *value = colon + 1;
                while (*value == ' ' || *value == '\t')
                    value++;
                int value_len = (int)(line + line_len - value);
                snprintf(out, size, "%.*s", value_len, value);
                return;
            }
        }
        line += line_len + (line[line_len] == '\n');
    }
}

static int all_digits(const char *s) { return s[0] != '\0' && s[strspn(s, "0123456789")] == '\0'; }

void lt_cpu_from_cpuinfo(const char *text, char *model, size_t model_size, char *id,
                         size_t id_size)
{
    cpuinfo_value(text, "model name", model, model_size);
    if (model[0] == '\0')
        snprintf(model, model_size, "unknown");
    char a[32], b[32], c[32], d[32];
    cpuinfo_value(text, "cpu family", a, sizeof a);
    cpuinfo_value(text, "model", b, sizeof b);
    if (a[0] != '\0' && b[0] != '\0') { /* x86; the stepping may read "unknown" */
        cpuinfo_value(text, "stepping", c, sizeof c);
        snprintf(id, id_size, "family %.8s model %.8s%s%.8s", a, b,
                 all_digits(c) ? " stepping " : "", all_digits(c) ? c : "");
        return;
    }
    cpuinfo_value(text, "CPU implementer", a, sizeof a);
    cpuinfo_value(text, "CPU part", b, sizeof b);
    if (a[0] != '\0' && b[0] != '\0') { /* Arm: the core design and its revision */
        cpuinfo_value(text, "CPU variant", c, sizeof c);
        cpuinfo_value(text, "CPU revision", d, sizeof d);
        snprintf(id, id_size, "implementer %.6s part %.6s%s%.6s%s%.6s", a, b,
                 c[0] ? " variant " : "", c, d[0] ? " revision " : "", d);
        return;
    }
    snprintf(id, id_size, "unknown");
}

/* /proc/cpuinfo's first processor, whose lines come before any other's. */
static void read_cpu(lt_provenance *out)
{
    char text[16384];
    size_t n = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
    }
    text[n] = '\0';
    char *end_of_first = strstr(text, "\n\n");
    if (end_of_first != NULL)
        end_of_first[1] = '\0';
    lt_cpu_from_cpuinfo(text, out->cpu_model, sizeof out->cpu_model, out->cpu_id,
                        sizeof out->cpu_id);
}

/* The machine's cores, not the ones this process may run on: an MPI rank
 * bound to one core still shares a machine whose load average counts them
 * all. */
static int machine_cores(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : lt_threads_available();
}

double lt_provenance_load_now(void)
{
    double load;
    return getloadavg(&load, 1) == 1 ? load : NAN;
}

int lt_cpu_times_from_stat(const char *text, unsigned long long *total,
                           unsigned long long *steal)
{
    *total = *steal = 0;
    const char *line = strncmp(text, "cpu ", 4) == 0 ? text : strstr(text, "\ncpu ");
    if (line == NULL)
        return 0;
    line += line[0] == '\n' ? 5 : 4;
    /* user nice system idle iowait irq softirq steal (guest time is counted
     * in user and nice already) */
    unsigned long long field[8];
    int n = 0;
    while (n < 8) {
        char *end;
        while (*line == ' ')
            line++;
        if (*line < '0' || *line > '9')
            break;
        field[n] = strtoull(line, &end, 10);
        line = end;
        n++;
    }
    if (n < 8)
        return 0;
    for (int i = 0; i < 8; i++)
        *total += field[i];
    *steal = field[7];
    return 1;
}

/* /proc/stat's total and steal jiffies now; 0 where unreadable. */
static int cpu_times_now(unsigned long long *total, unsigned long long *steal)
{
    char text[512] = ""; /* the "cpu " line comes first */
    FILE *f = fopen("/proc/stat", "r");
    if (f != NULL) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return lt_cpu_times_from_stat(text, total, steal);
}

/* Once per process: a timing is only as good as the machine's quiet when it
 * began, and later calls would date it to the end of the run instead. */
static int start_marked, start_times_read;
static double start_load;
static unsigned long long start_total, start_steal;

void lt_provenance_mark_start(void)
{
    if (start_marked)
        return;
    start_load = lt_provenance_load_now();
    start_times_read = cpu_times_now(&start_total, &start_steal);
    start_marked = 1;
}

double lt_provenance_steal_share_now(void)
{
    lt_provenance_mark_start();
    unsigned long long total, steal;
    if (!start_times_read || !cpu_times_now(&total, &steal) || total <= start_total ||
        steal < start_steal)
        return NAN;
    return (double)(steal - start_steal) / (double)(total - start_total);
}

void lt_provenance_get(lt_provenance *out)
{
    lt_provenance_mark_start();
    memset(out, 0, sizeof *out);
    snprintf(out->version, sizeof out->version, "%s", LT_VERSION);
    snprintf(out->git_revision, sizeof out->git_revision, "%s", LT_GIT_REVISION);
    read_cpu(out);
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(out->date, sizeof out->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    static const char *parallel[] = {"sequential", "pthreads", "openmp"};
    int p = openblas_get_parallel();
    /* the kernels OpenBLAS picked for this CPU matter as much as its version */
    const char *core = openblas_get_corename();
    snprintf(out->blas, sizeof out->blas, "OpenBLAS-%s %s%s",
             (p >= 0 && p <= 2) ? parallel[p] : "unknown", core != NULL ? core : "unknown-core",
             getenv("OPENBLAS_CORETYPE") != NULL ? " (OPENBLAS_CORETYPE)" : "");
    snprintf(out->kernel_isa, sizeof out->kernel_isa, "%s%s",
             lt_kernels_name(lt_kernels_active()),
             getenv("LTBENCH_KERNELS") != NULL && *getenv("LTBENCH_KERNELS") ? " (LTBENCH_KERNELS)"
                                                                             : "");
    out->threads = lt_threads_get();
    /* libgomp's spin count before a waiting thread sleeps overrides the
     * policy's, so the two together say how threads wait */
    const char *policy = getenv("OMP_WAIT_POLICY");
    const char *spin = getenv("GOMP_SPINCOUNT");
    snprintf(out->wait_policy, sizeof out->wait_policy, "%s%s%.16s",
             policy != NULL && *policy ? policy : "unset", spin != NULL && *spin ? " spin=" : "",
             spin != NULL && *spin ? spin : "");
    snprintf(out->build, sizeof out->build, "%s", LT_BUILD_FLAGS);
    out->ranks = lt_dist_size();
    out->cores = machine_cores();
    out->load_start = start_load;
}

const char *lt_version_string(void)
{
    return LT_VERSION " (git " LT_GIT_REVISION ")";
}
