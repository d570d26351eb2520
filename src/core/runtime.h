/* The runtime environment a benchmark wants, set before the libraries that
 * read it at load time: a program started without it sets it and starts
 * itself again (what the user set is kept; the CSVs record both).
 *
 *   GOMP_SPINCOUNT     a bounded spin of OpenMP threads at barriers, unless
 *                      OMP_WAIT_POLICY or GOMP_SPINCOUNT is set
 *   OPENBLAS_CORETYPE  the kernels of the CPU's vector width where OpenBLAS
 *                      falls back to its generic ones, unless it is set
 *
 * Call first thing in main, before MPI starts. */
#ifndef LT_CORE_RUNTIME_H
#define LT_CORE_RUNTIME_H

#include "core/status.h"

void lt_runtime_prepare(char **argv);

/* An OPENBLAS_CORETYPE this CPU cannot run (SkylakeX without AVX-512, ...)
 * stops a run with an illegal instruction at its first matrix product:
 * LT_E_USAGE naming the variable, the missing instructions and a core this
 * CPU runs. `cpu_flags` is a /proc/cpuinfo flags line; a core not known
 * here is left to OpenBLAS. */
lt_status lt_openblas_core_check(const char *core, const char *cpu_flags);
/* lt_openblas_core_check on the environment's OPENBLAS_CORETYPE and this
 * CPU; LT_OK when it is unset. */
lt_status lt_openblas_check_env(void);

#endif
