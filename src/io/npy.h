/* NumPy .npy arrays: format version 1.0, C order, little-endian float32
 * ('<f4') or float64 ('<f8'). Anything else is refused with LT_E_INPUT naming
 * the file and what was expected, rather than guessed at. The writer's bytes
 * match numpy.save's for the same array. */
#ifndef LT_IO_NPY_H
#define LT_IO_NPY_H

#include "core/status.h"
#include "io/atomic.h"

#define LT_NPY_MAX_DIMS 8

typedef struct lt_npy {
    int ndim;                         /* 0 (a scalar) to LT_NPY_MAX_DIMS */
    long long shape[LT_NPY_MAX_DIMS]; /* outermost first; unused entries 0 */
    int is_f64;                       /* the file held '<f8' (else '<f4') */
    float *data;                      /* (shape...) from lt_npy_read, else NULL */
    double *data_f64;                 /* (shape...) from lt_npy_read_f64, else NULL */
} lt_npy;

/* Reads `path`, converting float64 files to float32, into out->data
 * (lt_mem_alloc'd; release with lt_npy_free). LT_E_IO if the file cannot be
 * opened or read, LT_E_INPUT for any content it does not accept: bad magic,
 * versions other than 1.0, fortran_order True, a dtype other than '<f4' or
 * '<f8', a malformed header, more than LT_NPY_MAX_DIMS dimensions, negative or
 * overflowing sizes, fewer data bytes than the shape needs or bytes after
 * them. On failure *out is zeroed and nothing is left allocated. */
lt_status lt_npy_read(lt_npy *out, const char *path);

/* As lt_npy_read, but keeps double precision: out->data_f64 holds the values
 * (float32 files are widened exactly) and out->data is NULL. */
lt_status lt_npy_read_f64(lt_npy *out, const char *path);

/* Number of elements: the product of the shape (1 for ndim 0). */
long long lt_npy_count(const lt_npy *npy);

/* Releases the data and zeroes the struct; a zeroed struct is ignored. */
void lt_npy_free(lt_npy *npy);

/* Writes `data` with the given shape atomically (temporary file, then
 * rename). LT_E_INPUT for ndim outside 0..LT_NPY_MAX_DIMS or a negative
 * size, LT_E_IO if the file cannot be written. */
lt_status lt_npy_write_f32(const char *path, const float *data /* (shape...) */, int ndim,
                           const long long *shape /* (ndim) */);
/* Writes a float32 .npy into a file opened with lt_atomic_open, without
 * committing it: a program that writes several outputs commits them all
 * after the last one is written, or none. */
lt_status lt_npy_write_f32_into(lt_atomic_file *af, const float *data /* (shape...) */, int ndim,
                                const long long *shape);

lt_status lt_npy_write_f64(const char *path, const double *data /* (shape...) */, int ndim,
                           const long long *shape /* (ndim) */);

#endif
