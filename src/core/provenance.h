/* How a result was obtained: written beside every measured number. */
#ifndef LT_CORE_PROVENANCE_H
#define LT_CORE_PROVENANCE_H

typedef struct lt_provenance {
    char version[32];      /* ltbench version, e.g. "0.1.0" */
    char git_revision[64]; /* git describe at build time, or "unknown" */
    char cpu_model[128];   /* from /proc/cpuinfo, or "unknown" */
    char date[32];         /* UTC, ISO 8601, when lt_provenance_get ran */
    char blas[64];         /* BLAS library and its threading model */
    int threads;           /* thread count in force */
} lt_provenance;

void lt_provenance_get(lt_provenance *out);

/* "0.1.0 (git abc123)" */
const char *lt_version_string(void);

#endif
