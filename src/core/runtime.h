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

void lt_runtime_prepare(char **argv);

#endif
