#include "core/mem.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

/* Under AddressSanitizer the block header and the padding up to the 64-byte
 * rounding are poisoned, so a read or write past the bytes asked for is
 * reported like any heap overflow instead of landing silently in slack. */
#if defined(__SANITIZE_ADDRESS__)
#define LT_MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LT_MEM_ASAN 1
#endif
#endif
#ifdef LT_MEM_ASAN
#include <sanitizer/asan_interface.h>
#define poison(addr, size) ASAN_POISON_MEMORY_REGION((addr), (size))
#define unpoison(addr, size) ASAN_UNPOISON_MEMORY_REGION((addr), (size))
#else
#define poison(addr, size) ((void)(addr), (void)(size))
#define unpoison(addr, size) ((void)(addr), (void)(size))
#endif

/* Each block is preceded by one aligned header line that records its charged
 * size, so lt_mem_free needs no size argument. */
typedef struct block_header {
    size_t charged;
    uint64_t magic;
} block_header;

#define HEADER_BYTES LT_MEM_ALIGN
#define BLOCK_MAGIC 0x6c746d656d626c6bull /* "ltmemblk" */

static atomic_size_t current_bytes;
static atomic_size_t peak_bytes;
static atomic_size_t budget_bytes;

size_t lt_mem_rounded(size_t bytes)
{
    return (bytes + LT_MEM_ALIGN - 1) / LT_MEM_ALIGN * LT_MEM_ALIGN;
}

static void raise_peak(size_t now)
{
    size_t seen = atomic_load(&peak_bytes);
    while (now > seen && !atomic_compare_exchange_weak(&peak_bytes, &seen, now)) {
    }
}

/* Blocks from this size on are placed (their header first) on a 2 MiB
 * boundary and ask the kernel for transparent huge pages over their whole
 * 2 MiB pages (where it gives them only on request, as Debian's default
 * does): the kernels stream their large operands (a model's weights, a
 * key/value cache, an attention workspace) or scatter into them, and with
 * 4 KiB pages every page costs a TLB entry and stops the hardware
 * prefetcher at its end. The last, partial 2 MiB stays in small pages, so
 * a block occupies no more memory than it is charged. */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define HUGE_BLOCK_MIN ((size_t)4 << 20)

static unsigned char *allocate(size_t bytes)
{
    if (bytes < HUGE_BLOCK_MIN)
        return aligned_alloc(LT_MEM_ALIGN, bytes);
    void *raw = NULL;
    if (posix_memalign(&raw, HUGE_PAGE_BYTES, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* a hint: refused, the pages stay small */
    (void)madvise(raw, bytes / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES, MADV_HUGEPAGE);
#endif
    return raw;
}

lt_status lt_mem_alloc(void **out, size_t bytes, const char *what)
{
    *out = NULL;
    if (bytes > SIZE_MAX / 2)
        return lt_fail(LT_E_NOMEM, "cannot allocate %zu bytes for %s: size overflows",
                       bytes, what);
    size_t charged = lt_mem_rounded(bytes);
    size_t budget = atomic_load(&budget_bytes);
    size_t after = atomic_fetch_add(&current_bytes, charged) + charged;
    if (budget != 0 && after > budget) {
        atomic_fetch_sub(&current_bytes, charged);
        char need[32], limit[32];
        return lt_fail(LT_E_BUDGET,
                       "allocating %s (%s) would exceed the memory budget of %s "
                       "(raise --mem-budget or choose a smaller shape)",
                       what, lt_mem_format(need, sizeof need, charged),
                       lt_mem_format(limit, sizeof limit, budget));
    }
    unsigned char *raw = allocate(HEADER_BYTES + charged);
    if (raw == NULL) {
        atomic_fetch_sub(&current_bytes, charged);
        char need[32];
        return lt_fail(LT_E_NOMEM, "the system refused %s for %s",
                       lt_mem_format(need, sizeof need, charged), what);
    }
    raise_peak(after);
    block_header *header = (block_header *)raw;
    header->charged = charged;
    header->magic = BLOCK_MAGIC;
    *out = raw + HEADER_BYTES;
    poison(raw, HEADER_BYTES);
    poison(raw + HEADER_BYTES + bytes, charged - bytes);
    return LT_OK;
}

lt_status lt_mem_calloc(void **out, size_t bytes, const char *what)
{
    LT_TRY(lt_mem_alloc(out, bytes, what));
    memset(*out, 0, bytes);
    return LT_OK;
}

void lt_mem_free(void *block)
{
    if (block == NULL)
        return;
    block_header *header = (block_header *)((unsigned char *)block - HEADER_BYTES);
    unpoison(header, sizeof *header);
    LT_ASSERT(header->magic == BLOCK_MAGIC);
    header->magic = 0;
    atomic_fetch_sub(&current_bytes, header->charged);
    free(header);
}

size_t lt_mem_current(void) { return atomic_load(&current_bytes); }
size_t lt_mem_peak(void) { return atomic_load(&peak_bytes); }
void lt_mem_reset_peak(void) { atomic_store(&peak_bytes, atomic_load(&current_bytes)); }
void lt_mem_set_budget(size_t bytes) { atomic_store(&budget_bytes, bytes); }
size_t lt_mem_budget(void) { return atomic_load(&budget_bytes); }

lt_status lt_mem_plan(size_t planned_bytes, const char *what)
{
    size_t budget = atomic_load(&budget_bytes);
    size_t current = atomic_load(&current_bytes);
    if (budget != 0 && (planned_bytes > budget || current > budget - planned_bytes)) {
        char need[32], limit[32];
        return lt_fail(LT_E_BUDGET,
                       "%s needs %s but the memory budget is %s "
                       "(raise --mem-budget or choose a smaller shape)",
                       what, lt_mem_format(need, sizeof need, planned_bytes),
                       lt_mem_format(limit, sizeof limit, budget));
    }
    return LT_OK;
}

size_t lt_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0)
        return 0;
    return (size_t)pages * (size_t)page_size;
}

lt_status lt_mem_parse_bytes(size_t *out, const char *text, const char *flag)
{
    errno = 0;
    char *end = NULL;
    double value = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(value) || value < 0)
        goto bad;
    double scale = 1;
    if (*end != '\0') {
        static const struct { const char *suffix; double scale; } units[] = {
            {"K", 1024.0}, {"KiB", 1024.0}, {"M", 1048576.0}, {"MiB", 1048576.0},
            {"G", 1073741824.0}, {"GiB", 1073741824.0},
            {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"B", 1.0},
        };
        size_t i;
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcasecmp(end, units[i].suffix) == 0)
                break;
        if (i == sizeof units / sizeof units[0])
            goto bad;
        scale = units[i].scale;
    }
    value *= scale;
    if (value >= 18446744073709551615.0)
        goto bad;
    /* A fraction of a byte is a typo, not a budget: "0.5" must not become 0
     * (no limit). With a unit, round to the nearest byte. */
    if (scale == 1 && value != floor(value))
        return lt_fail(LT_E_USAGE,
                       "%s: '%s' is not a whole number of bytes (use a unit: 0.5G, 512M)", flag,
                       text);
    value = floor(value + 0.5);
    if (value == 0 && strtod(text, NULL) != 0)
        return lt_fail(LT_E_USAGE, "%s: '%s' is less than one byte (0 means no limit)", flag,
                       text);
    *out = (size_t)value;
    return LT_OK;
bad:
    return lt_fail(LT_E_USAGE,
                   "%s: expected a byte count such as 512M, 8G or 1000000, got '%s'",
                   flag, text);
}

const char *lt_mem_format(char *buf, size_t buf_size, size_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        unit++;
    }
    if (unit == 0)
        snprintf(buf, buf_size, "%zu B", bytes);
    else
        snprintf(buf, buf_size, "%.2f %s", value, units[unit]);
    return buf;
}

lt_status lt_mem_grow(void **buf, size_t *cap, size_t need, size_t elem, const char *what)
{
    if (need <= *cap)
        return LT_OK;
    size_t next = *cap > 0 ? *cap : 64;
    while (next < need) {
        if (next > SIZE_MAX / 2 / elem)
            return lt_fail(LT_E_NOMEM, "%s: %zu elements do not fit in memory", what, need);
        next *= 2;
    }
    void *bigger;
    LT_TRY(lt_mem_alloc(&bigger, next * elem, what));
    if (*cap > 0)
        memcpy(bigger, *buf, *cap * elem);
    lt_mem_free(*buf);
    *buf = bigger;
    *cap = next;
    return LT_OK;
}
