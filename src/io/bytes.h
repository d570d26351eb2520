/* Little-endian integers written byte by byte, so file formats read the
 * same on any host. */
#ifndef LT_IO_BYTES_H
#define LT_IO_BYTES_H

#include <stdint.h>

static inline void lt_put_u32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static inline void lt_put_u64(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static inline uint32_t lt_get_u32(const unsigned char *p)
{
    uint32_t x = 0;
    for (int i = 0; i < 4; i++)
        x |= (uint32_t)p[i] << (8 * i);
    return x;
}

static inline uint64_t lt_get_u64(const unsigned char *p)
{
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

#endif
