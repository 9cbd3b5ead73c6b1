/*
 * csrc/core/half.h — IEEE binary16 (f16, stored as uint16_t) to and from f32, exactly:
 * subnormals, infinities and NaNs included, f32 → f16 rounding to nearest, ties to even.
 * Portable bit manipulation (no _Float16, no F16C): the ops that take f16 load it to f32,
 * compute, and round back through these two.
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
    if (exponent == 0) {
        /* Zero or subnormal: mantissa × 2^-24, exact in f32. */
        float magnitude = (float)mantissa * 5.9604644775390625e-8f;
        memcpy(&bits, &magnitude, sizeof bits);
        bits |= sign;
    } else if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13); /* inf, NaN (payload kept) */
    } else {
        bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
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
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) /* inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | (magnitude > 0x7f800000u ? 0x7e00u | ((magnitude >> 13) & 0x3ffu)
                                                          : 0x7c00u));
    if (magnitude >= 0x477ff000u) /* ≥ 65520: rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    uint32_t result, remainder, halfway;
    if (magnitude < 0x38800000u) {
        /* Below 2^-14: a subnormal f16, in units of 2^-24. */
        const uint32_t exponent = magnitude >> 23;
        if (exponent < 102) /* below 2^-25: rounds to zero */
            return sign;
        const uint32_t m = (magnitude & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - exponent; /* 14 … 24 */
        result = m >> shift;
        remainder = m & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1u);
    } else {
        result = (magnitude - 0x38000000u) >> 13; /* rebias 127 → 15 */
        remainder = magnitude & 0x1fffu;
        halfway = 0x1000u;
    }
    if (remainder > halfway || (remainder == halfway && (result & 1u)))
        result++; /* may carry into the exponent: still the right encoding */
    return (uint16_t)(sign | result);
}

#endif /* EMBER_CORE_HALF_H */
