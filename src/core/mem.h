/* The tracked allocator: every buffer in ltbench comes from here, so the
 * current and peak bytes in use are known exactly and deterministically (the
 * CPU counterpart of the paper's GPU peak memory).
 *
 * Blocks are 64-byte aligned (a cache line, and enough for any SIMD load).
 * An optional budget makes an allocation that would push the live total past
 * it fail with LT_E_BUDGET instead of letting the machine swap; runs also
 * check their whole plan against the budget before starting (lt_mem_plan). */
#ifndef LT_CORE_MEM_H
#define LT_CORE_MEM_H

#include <stddef.h>

#include "core/status.h"

#define LT_MEM_ALIGN 64

/* Grows the buffer *buf of *cap elements of `elem` bytes to hold at least
 * `need`, doubling (from 64), keeping its contents; LT_E_NOMEM naming
 * `what` when it cannot. */
lt_status lt_mem_grow(void **buf, size_t *cap, size_t need, size_t elem, const char *what);

/* Allocates `bytes` (rounded up to a multiple of 64) into *out; `what` names
 * the buffer for the error message. Zero bytes yields a valid unique block. */
lt_status lt_mem_alloc(void **out, size_t bytes, const char *what);

/* As lt_mem_alloc, and the block is zero-filled. */
lt_status lt_mem_calloc(void **out, size_t bytes, const char *what);

/* Releases a block from lt_mem_alloc; NULL is ignored. */
void lt_mem_free(void *block);

/* Bytes currently allocated through the tracker (rounded sizes). */
size_t lt_mem_current(void);

/* Highest value lt_mem_current reached since the last lt_mem_reset_peak. */
size_t lt_mem_peak(void);

/* Starts a new measured region: the peak becomes the current bytes. */
void lt_mem_reset_peak(void);

/* Sets the budget in bytes; 0 removes it. */
void lt_mem_set_budget(size_t bytes);
size_t lt_mem_budget(void);

/* The size lt_mem_alloc charges for a request of `bytes`, so plans can add up
 * exactly what the allocations will cost. */
size_t lt_mem_rounded(size_t bytes);

/* Refuses a plan before anything is allocated: fails with LT_E_BUDGET, naming
 * `what` and both byte counts, when current + planned bytes exceed the
 * budget. */
lt_status lt_mem_plan(size_t planned_bytes, const char *what);

/* Physical memory of the machine in bytes (0 if unknown). */
size_t lt_mem_physical(void);

/* Parses a byte count such as "512M", "8G", "1.5GiB", "1000000" or "0"
 * (no budget). Fails with LT_E_USAGE naming `flag`. */
lt_status lt_mem_parse_bytes(size_t *out, const char *text, const char *flag);

/* Formats bytes for people: "1.50 GiB". Returns buf. */
const char *lt_mem_format(char *buf, size_t buf_size, size_t bytes);

#endif
