/* How a result was obtained: written beside every measured number. */
#ifndef LT_CORE_PROVENANCE_H
#define LT_CORE_PROVENANCE_H

#include <stddef.h>

typedef struct lt_provenance {
    char version[32];      /* ltbench version, e.g. "0.1.0" */
    char git_revision[64]; /* git describe at build time, or "unknown" */
    char cpu_model[128];   /* from /proc/cpuinfo, or "unknown" */
    char cpu_id[80];       /* "family 25 model 17 stepping 1": under a hypervisor the
                              model name ("AMD EPYC") can be one string for CPUs
                              of different generations; "unknown" where not said */
    char date[32];         /* UTC, ISO 8601, when lt_provenance_get ran */
    char blas[64];         /* BLAS library and its threading model */
    char kernel_isa[48];   /* ltbench's kernel set in use (core/kernels.h), e.g. "avx2";
                              " (LTBENCH_KERNELS)" when the variable chose it */
    int threads;           /* thread count in force */
    int cores;             /* cores of the machine (online CPUs), also where this
                              process is bound to fewer (an MPI rank): the load
                              average counts them all */
    double load_start;     /* 1-minute load average when the run started */
    char wait_policy[48];  /* OMP_WAIT_POLICY ("unset" if none), then " spin=N" if GOMP_SPINCOUNT */
    int ranks;             /* MPI ranks of the run (1 alone); threads are per rank */
    char build[160];       /* compiler, build type and flags of this binary */
} lt_provenance;

/* Fills `out`; load_start is the one lt_provenance_mark_start recorded. */
void lt_provenance_get(lt_provenance *out);

/* cpu_model and cpu_id from the text of /proc/cpuinfo's first processor:
 * the model name ("unknown" where none); x86's "family F model M stepping S"
 * (no stepping where the kernel does not know it), Arm's "implementer I part
 * P variant V revision R", else "unknown". */
void lt_cpu_from_cpuinfo(const char *text, char *model, size_t model_size, char *id,
                         size_t id_size);

/* Records the 1-minute load average as the run's start load, and the CPU
 * time counters steal shares are taken from. Only the first
 * call in a process counts; lt_provenance_get makes it if nobody did, so a
 * program calls it first thing to date the load to its start. */
void lt_provenance_mark_start(void);

/* The 1-minute load average now, or NaN where the system does not say. */
double lt_provenance_load_now(void);

/* The share of the machine's CPU time since lt_provenance_mark_start that
 * the hypervisor gave to other guests ("steal" in /proc/stat): what tells a
 * contended virtual machine, where the load average counts only this
 * guest's own tasks. NaN where the kernel does not count steal or no time
 * has passed. */
double lt_provenance_steal_share_now(void);

/* Total and steal jiffies from the text of /proc/stat (its "cpu " line:
 * user nice system idle iowait irq softirq steal ...); 0 where the line or
 * its steal field is missing. */
int lt_cpu_times_from_stat(const char *text, unsigned long long *total,
                           unsigned long long *steal);

/* "0.1.0 (git abc123)" */
const char *lt_version_string(void);

#endif
