/* Data-parallel runs over MPI (Open MPI from Debian). A program started
 * under mpirun runs as one of `size` ranks; started alone it is rank 0 of 1
 * and nothing here communicates. A build without MPI refuses to run under
 * mpirun (it would silently run the whole job N times).
 *
 * Sums are reduced in a fixed tree, by recursive doubling over ranks (a
 * power of two): rank pairs (0,1), (2,3), ... add first, then pairs of
 * pairs. A single process that adds the same shards in the same tree gets
 * the same bits, whatever the rank count (see lt_train_config.shards). */
#ifndef LT_CORE_DIST_H
#define LT_CORE_DIST_H

#include <stddef.h>

#include "core/status.h"

/* Starts MPI when built with it (MPI_Init_thread, funneled). Fails with
 * LT_E_USAGE when launched by mpirun with more than one process but built
 * without MPI, or when the rank count is not a power of two. */
lt_status lt_dist_init(int *argc, char ***argv);

/* Ends MPI (a no-op for one process). */
void lt_dist_finalize(void);

int lt_dist_rank(void);
int lt_dist_size(void);
int lt_dist_is_root(void); /* rank 0: prints, writes files and checkpoints */

/* 1 when this build has MPI. */
int lt_dist_available(void);

/* In place, every rank ends with the sum over ranks of x, added in the
 * fixed tree. `scratch` holds n floats (or doubles). */
lt_status lt_dist_sum_f32(float *x, float *scratch, size_t n);
lt_status lt_dist_sum_f64(double *x, double *scratch, size_t n);

/* Copies root's `bytes` at data to every rank. */
lt_status lt_dist_broadcast(void *data, size_t bytes);

/* Every rank passes its own status; all return the first failure of the
 * lowest failing rank, with its message (prefixed by the rank when there
 * are several), so every rank stops the same way and none hangs waiting. */
lt_status lt_dist_agree(lt_status mine);

/* Seconds spent in communication so far (sums and broadcasts). */
double lt_dist_comm_seconds(void);

#endif
