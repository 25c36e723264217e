"""The C every generated program starts with: integer helpers, bit readers and
writers, the hash algorithms (the definitions of ``switch.engine.hashes``) and the
exact-match hash index that ``c_tables`` builds through ``ina_build_hash``.

The run-time state the generated code reads is one array of 64-bit slots (``S``):
pointers to numpy arrays and plain numbers, placed by ``c_tables`` and the
architecture; the generated code names each slot by its index.
"""

PRELUDE = r"""
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef int64_t i64;
typedef unsigned __int128 u128;
typedef __int128 i128;

#define MASK(w) ((w) >= 64 ? ~(u64)0 : (((u64)1 << (w)) - 1))
#define PTR(t, i) ((t *)(uintptr_t)S[i])

static inline i64 sext(u64 v, int w) {
    return w >= 64 ? (i64)v : (i64)(v << (64 - w)) >> (64 - w);
}

/* ``w`` (<= 64) bits at bit offset ``bo`` of ``d``, MSB first (the caller checked the
 * length). */
static inline __attribute__((always_inline)) u64 get_bits(const uint8_t *d, u64 bo, int w) {
    if (w == 0) return 0;
    u64 start = bo >> 3;
    int skip = (int)(bo & 7);
    int nbytes = (skip + w + 7) >> 3;
    u128 v = 0;
    for (int i = 0; i < nbytes; i++) v = (v << 8) | d[start + i];
    v >>= (nbytes * 8 - skip - w);
    return (u64)v & MASK(w);
}

/* Write the low ``w`` bits of ``v`` at bit offset ``bo`` of ``d`` (the bytes from
 * ``bo`` on hold zero bits in the part written). */
static inline __attribute__((always_inline)) void put_bits(uint8_t *d, u64 bo, u64 v, int w) {
    if (w == 0) return;
    v &= MASK(w);
    u64 start = bo >> 3;
    int skip = (int)(bo & 7);
    int nbytes = (skip + w + 7) >> 3;
    int tail = nbytes * 8 - skip - w;
    u128 x = (u128)v << tail;
    for (int i = nbytes - 1; i >= 0; i--) {
        d[start + i] |= (uint8_t)x;
        x >>= 8;
    }
}

#define LD_BE(w, swap) \
    static inline u64 ld_be##w(const uint8_t *p) { \
        uint##w##_t v; memcpy(&v, p, w / 8); return swap(v); } \
    static inline void st_be##w(uint8_t *p, u64 v) { \
        uint##w##_t x = swap((uint##w##_t)v); memcpy(p, &x, w / 8); }
#define NOSWAP(v) (v)
LD_BE(8, NOSWAP)
LD_BE(16, __builtin_bswap16)
LD_BE(32, __builtin_bswap32)
LD_BE(64, __builtin_bswap64)

/* Zero the bytes of ``d`` that bits [from, to) start (the byte ``from`` is in, when it
 * starts mid-byte, holds bits written before). */
static inline void zero_from(uint8_t *d, u64 from, u64 to) {
    u64 a = (from + 7) >> 3, b = (to + 7) >> 3;
    if (b > a) memset(d + a, 0, b - a);
}

/* ``nbits`` (a multiple of 8) bits of ``src`` at bit offset ``bo`` of ``d``. */
static inline void put_bytes(uint8_t *d, u64 bo, const uint8_t *src, u64 nbits) {
    if ((bo & 7) == 0) { memcpy(d + (bo >> 3), src, nbits >> 3); return; }
    for (u64 i = 0; i < (nbits >> 3); i++) put_bits(d, bo + 8 * i, src[i], 8);
}

static inline void get_bytes(uint8_t *dst, const uint8_t *d, u64 bo, u64 nbits) {
    if ((bo & 7) == 0) { memcpy(dst, d + (bo >> 3), nbits >> 3); return; }
    for (u64 i = 0; i < (nbits >> 3); i++) dst[i] = (uint8_t)get_bits(d, bo + 8 * i, 8);
}

static uint16_t crc16_table[256];
static uint32_t crc32_table[256];

__attribute__((constructor)) static void ina_init_tables(void) {
    for (int b = 0; b < 256; b++) {
        uint32_t c16 = (uint32_t)b, c32 = (uint32_t)b;
        for (int k = 0; k < 8; k++) {
            c16 = (c16 & 1) ? (c16 >> 1) ^ 0xA001 : c16 >> 1;
            c32 = (c32 & 1) ? (c32 >> 1) ^ 0xEDB88320u : c32 >> 1;
        }
        crc16_table[b] = (uint16_t)c16;
        crc32_table[b] = c32;
    }
}

static u64 hash_crc16(const uint8_t *d, u64 n) {
    uint32_t crc = 0;
    for (u64 i = 0; i < n; i++) crc = (crc >> 8) ^ crc16_table[(crc ^ d[i]) & 0xFF];
    return crc & 0xFFFF;
}

static u64 hash_crc32(const uint8_t *d, u64 n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (u64 i = 0; i < n; i++) crc = (crc >> 8) ^ crc32_table[(crc ^ d[i]) & 0xFF];
    return (u64)(crc ^ 0xFFFFFFFFu);
}

static u64 hash_csum16(const uint8_t *d, u64 n) {
    u64 s = 0;
    u64 i = 0;
    for (; i + 1 < n; i += 2) s += ((u64)d[i] << 8) | d[i + 1];
    if (i < n) s += (u64)d[i] << 8;
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return (~s) & 0xFFFF;
}

static u64 hash_xor16(const uint8_t *d, u64 n) {
    u64 s = 0;
    u64 i = 0;
    for (; i + 1 < n; i += 2) s ^= ((u64)d[i] << 8) | d[i + 1];
    if (i < n) s ^= (u64)d[i] << 8;
    return s;
}

static u64 hash_identity(const uint8_t *d, u64 n) {
    u64 v = 0;
    for (u64 i = 0; i < n && i < 8; i++) v = (v << 8) | d[i];
    return v;
}

static inline u64 key_hash(const u64 *k, int nk) {
    u64 h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < nk; i++) {
        h ^= k[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

/* Slot array ``slots`` (capacity mask + 1 entries) of the exact-match index over the
 * ``n`` entries whose keys (``nk`` each) are ``keys``: linear probing, -1 empty. */
void ina_build_hash(const u64 *keys, int64_t n, int64_t nk, int32_t *slots, u64 capmask) {
    for (u64 i = 0; i <= capmask; i++) slots[i] = -1;
    for (int64_t e = 0; e < n; e++) {
        u64 h = key_hash(keys + e * nk, (int)nk) & capmask;
        while (slots[h] >= 0) h = (h + 1) & capmask;
        slots[h] = (int32_t)e;
    }
}

static inline int32_t exact_find(const u64 *S, int base, const u64 *k, int nk) {
    const u64 *keys = PTR(const u64, base + 1);
    const int32_t *slots = PTR(const int32_t, base + 2);
    u64 capmask = S[base + 3];
    if (S[base] == 0) return -1;
    u64 h = key_hash(k, nk) & capmask;
    for (;;) {
        int32_t e = slots[h];
        if (e < 0) return -1;
        const u64 *ek = keys + (u64)e * nk;
        int same = 1;
        for (int i = 0; i < nk; i++) if (ek[i] != k[i]) { same = 0; break; }
        if (same) return e;
        h = (h + 1) & capmask;
    }
}

static inline i64 now_us(const u64 *S, int t0slot) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    i64 ns = (i64)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return (ns - (i64)S[t0slot]) / 1000;
}
"""
