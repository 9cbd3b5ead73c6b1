/*
 * csrc/core/half.h — IEEE binary16 <-> binary32, exact: f16 tensors are stored as such
 * and computed in f32 where there is no f16 kernel.
 *
 * Widening is exact for every half (subnormals, infinities, NaN payloads' top bits).
 * Narrowing rounds to nearest, ties to even; overflow gives ±inf, NaN stays NaN.
 */
#ifndef EMBER_CORE_HALF_H
#define EMBER_CORE_HALF_H

#include <stdint.h>
#include <string.h>

static inline float ember_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);            /* inf, NaN */
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13); /* normal */
    } else if (mantissa == 0) {
        bits = sign;                                                /* ±0 */
    } else {                                                        /* subnormal */
        int shift = 0;
        uint32_t m = mantissa;
        while (!(m & 0x400u)) {
            m <<= 1;
            shift++;
        }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t ember_f32_to_f16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    const uint32_t exponent = (bits >> 23) & 0xffu;
    uint32_t mantissa = bits & 0x7fffffu;
    if (exponent == 0xff)                                           /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0));
    const int e = (int)exponent - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);                         /* overflow: inf */
    if (e <= 0) {                                                   /* subnormal or 0 */
        if (e < -10)
            return sign;
        mantissa |= 0x800000u;
        const int shift = 14 - e;
        const uint32_t half = 1u << (shift - 1), rest = mantissa & ((1u << shift) - 1);
        uint32_t m = mantissa >> shift;
        if (rest > half || (rest == half && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t h = ((uint32_t)e << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;                                                        /* may carry into inf */
    return (uint16_t)(sign | h);
}

#endif /* EMBER_CORE_HALF_H */
