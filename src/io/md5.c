#include "io/md5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io/read.h"

/* K[i] = floor(2^32 * |sin(i + 1)|) (RFC 1321, section 3.4). */
static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391,
};

/* Left-rotation amounts, four per round. */
static const unsigned md5_shift[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static uint32_t rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static void md5_block(uint32_t state[4], const unsigned char *p)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++) /* words are little-endian whatever the host */
        m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (int i = 0; i < 64; i++) {
        int round = i / 16;
        uint32_t f;
        int g;
        switch (round) {
        case 0: f = (b & c) | (~b & d); g = i; break;
        case 1: f = (b & d) | (c & ~d); g = (5 * i + 1) % 16; break;
        case 2: f = b ^ c ^ d; g = (3 * i + 5) % 16; break;
        default: f = c ^ (b | ~d); g = (7 * i) % 16; break;
        }
        uint32_t next = b + rotl(a + f + md5_k[i] + m[g], md5_shift[round][i % 4]);
        a = d;
        d = c;
        c = b;
        b = next;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
}

void lt_md5_init(lt_md5 *md5)
{
    md5->state[0] = 0x67452301;
    md5->state[1] = 0xefcdab89;
    md5->state[2] = 0x98badcfe;
    md5->state[3] = 0x10325476;
    md5->bytes = 0;
}

void lt_md5_update(lt_md5 *md5, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    size_t fill = (size_t)(md5->bytes % 64);
    md5->bytes += bytes;
    if (fill > 0) {
        size_t take = 64 - fill < bytes ? 64 - fill : bytes;
        memcpy(md5->block + fill, p, take);
        p += take;
        bytes -= take;
        if (fill + take < 64)
            return;
        md5_block(md5->state, md5->block);
    }
    for (; bytes >= 64; p += 64, bytes -= 64)
        md5_block(md5->state, p);
    if (bytes > 0)
        memcpy(md5->block, p, bytes);
}

void lt_md5_final(lt_md5 *md5, unsigned char digest[LT_MD5_BYTES])
{
    uint64_t bits = md5->bytes * 8;
    /* A 1 bit, zeros up to 56 mod 64 bytes, then the bit length. */
    static const unsigned char pad[64] = {0x80};
    size_t fill = (size_t)(md5->bytes % 64);
    lt_md5_update(md5, pad, fill < 56 ? 56 - fill : 120 - fill);
    unsigned char length[8];
    for (int i = 0; i < 8; i++)
        length[i] = (unsigned char)(bits >> (8 * i));
    lt_md5_update(md5, length, 8);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            digest[4 * i + j] = (unsigned char)(md5->state[i] >> (8 * j));
}

char *lt_md5_hex(char hex[LT_MD5_HEX_LEN + 1], const unsigned char digest[LT_MD5_BYTES])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < LT_MD5_BYTES; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[LT_MD5_HEX_LEN] = '\0';
    return hex;
}

void lt_md5_buffer(unsigned char digest[LT_MD5_BYTES], const void *data, size_t bytes)
{
    lt_md5 md5;
    lt_md5_init(&md5);
    lt_md5_update(&md5, data, bytes);
    lt_md5_final(&md5, digest);
}

lt_status lt_md5_file(unsigned char digest[LT_MD5_BYTES], const char *path)
{
    FILE *f;
    LT_TRY(lt_open_read(&f, path));
    lt_md5 md5;
    lt_md5_init(&md5);
    unsigned char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        lt_md5_update(&md5, chunk, got);
    int failed = ferror(f);
    int saved_errno = errno;
    fclose(f);
    if (failed)
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(saved_errno));
    lt_md5_final(&md5, digest);
    return LT_OK;
}
