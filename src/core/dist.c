#include "core/dist.h"

#include <stdlib.h>
#include <string.h>

#include "core/timer.h"

#ifdef LT_HAVE_MPI
#include <mpi.h>
#endif

static int rank_, size_ = 1, started;
static double comm_seconds;

int lt_dist_available(void)
{
#ifdef LT_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

/* The process count mpirun (Open MPI, or a PMI launcher) announces. */
static int launched_size(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && atoi(v) > 0)
            return atoi(v);
    }
    return 1;
}

lt_status lt_dist_init(int *argc, char ***argv)
{
#ifdef LT_HAVE_MPI
    if (launched_size() > 1) {
        int provided;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return lt_fail(LT_E_INTERNAL, "MPI could not start");
        started = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        if (size_ & (size_ - 1))
            return lt_fail(LT_E_USAGE,
                           "mpirun -np %d: ltbench needs a power of two of ranks (1, 2, 4, "
                           "...), so that its sums follow one fixed tree",
                           size_);
    }
    return LT_OK;
#else
    (void)argc, (void)argv;
    if (launched_size() > 1)
        return lt_fail(LT_E_USAGE,
                       "started by mpirun with %d processes, but this ltbench was built "
                       "without MPI: each would run the whole job alone. Install Open MPI "
                       "(./setup.sh does) and rebuild, or run one process",
                       launched_size());
    return LT_OK;
#endif
}

void lt_dist_finalize(void)
{
#ifdef LT_HAVE_MPI
    if (started)
        MPI_Finalize();
    started = 0;
#endif
}

int lt_dist_rank(void) { return rank_; }
int lt_dist_size(void) { return size_; }
int lt_dist_is_root(void) { return rank_ == 0; }
double lt_dist_comm_seconds(void) { return comm_seconds; }

#ifdef LT_HAVE_MPI
/* Recursive doubling: at each level a rank swaps its partial sum with the
 * rank `mask` away and adds. IEEE addition is commutative, so both ends of
 * a pair get the same bits; the tree is fixed by the rank order. */
static lt_status tree_sum(void *x, void *scratch, size_t n, MPI_Datatype type, int is_double)
{
    double t0 = lt_time_now();
    for (int mask = 1; mask < size_; mask <<= 1) {
        int partner = rank_ ^ mask;
        size_t done = 0;
        while (done < n) {
            /* MPI counts are ints: large arrays go in pieces */
            int count = n - done > (size_t)1 << 30 ? 1 << 30 : (int)(n - done);
            size_t offset = done * (is_double ? sizeof(double) : sizeof(float));
            if (MPI_Sendrecv((char *)x + offset, count, type, partner, 17, (char *)scratch + offset,
                             count, type, partner, 17, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return lt_fail(LT_E_INTERNAL, "MPI exchange with rank %d failed", partner);
            done += (size_t)count;
        }
        if (is_double) {
            double *a = x;
            const double *b = scratch;
            for (size_t i = 0; i < n; i++)
                a[i] = rank_ < partner ? a[i] + b[i] : b[i] + a[i];
        } else {
            float *a = x;
            const float *b = scratch;
#pragma omp parallel for schedule(static) if (n > 65536)
            for (size_t i = 0; i < n; i++)
                a[i] = rank_ < partner ? a[i] + b[i] : b[i] + a[i];
        }
    }
    comm_seconds += lt_time_now() - t0;
    return LT_OK;
}
#endif

lt_status lt_dist_sum_f32(float *x, float *scratch, size_t n)
{
#ifdef LT_HAVE_MPI
    if (size_ > 1)
        return tree_sum(x, scratch, n, MPI_FLOAT, 0);
#endif
    (void)x, (void)scratch, (void)n;
    return LT_OK;
}

lt_status lt_dist_sum_f64(double *x, double *scratch, size_t n)
{
#ifdef LT_HAVE_MPI
    if (size_ > 1)
        return tree_sum(x, scratch, n, MPI_DOUBLE, 1);
#endif
    (void)x, (void)scratch, (void)n;
    return LT_OK;
}

lt_status lt_dist_broadcast(void *data, size_t bytes)
{
#ifdef LT_HAVE_MPI
    if (size_ > 1) {
        double t0 = lt_time_now();
        for (size_t done = 0; done < bytes;) {
            int count = bytes - done > (size_t)1 << 30 ? 1 << 30 : (int)(bytes - done);
            if (MPI_Bcast((char *)data + done, count, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
                return lt_fail(LT_E_INTERNAL, "MPI broadcast failed");
            done += (size_t)count;
        }
        comm_seconds += lt_time_now() - t0;
    }
#endif
    (void)data, (void)bytes;
    return LT_OK;
}

lt_status lt_dist_agree(lt_status mine)
{
#ifdef LT_HAVE_MPI
    if (size_ > 1) {
        int failing = mine != LT_OK ? rank_ : size_, first;
        MPI_Allreduce(&failing, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first == size_)
            return LT_OK;
        struct {
            int status;
            char message[1024];
        } report = {0, ""};
        if (rank_ == first) {
            report.status = (int)mine;
            snprintf(report.message, sizeof report.message, "%s", lt_last_error());
        }
        MPI_Bcast(&report, sizeof report, MPI_BYTE, first, MPI_COMM_WORLD);
        return lt_fail((lt_status)report.status, "rank %d: %s", first, report.message);
    }
#endif
    return mine;
}
