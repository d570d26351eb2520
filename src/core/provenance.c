#include "core/provenance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "core/dist.h"
#include "core/threads.h"
#include "version.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_parallel(void);

/* The value of the first /proc/cpuinfo line whose key is exactly `key`
 * (keys are padded with tabs before the colon), or "" where none is. */
static void cpuinfo_value(char *out, size_t size, const char *key)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        size_t len = (size_t)(colon - line);
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
            len--;
        if (len != strlen(key) || strncmp(line, key, len) != 0)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(out, size, "%s", colon);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static void read_cpu_model(char *out, size_t size)
{
    cpuinfo_value(out, size, "model name");
    if (out[0] == '\0')
        snprintf(out, size, "unknown");
}

/* x86's family, model and stepping: what tells one CPU generation from
 * another where the model name does not. */
static void read_cpu_id(char *out, size_t size)
{
    char family[32], model[32], stepping[32];
    cpuinfo_value(family, sizeof family, "cpu family");
    cpuinfo_value(model, sizeof model, "model");
    cpuinfo_value(stepping, sizeof stepping, "stepping");
    if (family[0] == '\0' || model[0] == '\0')
        snprintf(out, size, "unknown");
    else
        snprintf(out, size, "family %.8s model %.8s%s%.8s", family, model,
                 stepping[0] != '\0' ? " stepping " : "", stepping);
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

/* Once per process: a timing is only as good as the machine's quiet when it
 * began, and later calls would date it to the end of the run instead. */
static int start_marked;
static double start_load;

void lt_provenance_mark_start(void)
{
    if (start_marked)
        return;
    start_load = lt_provenance_load_now();
    start_marked = 1;
}

void lt_provenance_get(lt_provenance *out)
{
    lt_provenance_mark_start();
    memset(out, 0, sizeof *out);
    snprintf(out->version, sizeof out->version, "%s", LT_VERSION);
    snprintf(out->git_revision, sizeof out->git_revision, "%s", LT_GIT_REVISION);
    read_cpu_model(out->cpu_model, sizeof out->cpu_model);
    read_cpu_id(out->cpu_id, sizeof out->cpu_id);
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
