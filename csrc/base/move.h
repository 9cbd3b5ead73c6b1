/*
 * move.h — short moves of floats of a size fixed after inlining (a panel row, a block of
 * a copy loop), inlined.
 *
 * Why not memcpy alone: x86 and AArch64 GCC turn a memcpy of a constant 16 or 32 bytes
 * into one or two vector moves, but ARMv7 GCC moves it through core registers, a load
 * and a store per float (16 instructions for 8 floats: ARMv7 packing took 3.5-4.7x
 * AArch64's instructions). There the 4s go through a 16-byte vector type, which NEON
 * loads and stores whole (4 instructions for 8 floats; a 32-byte type goes back to core
 * registers). Moves only: the bits are the source's, NaNs and subnormals included.
 */
#ifndef EMBER_BASE_MOVE_H
#define EMBER_BASE_MOVE_H

#include <stddef.h>
#include <string.h>

#if defined(__arm__) && defined(__ARM_NEON)
typedef float ember_floats4 __attribute__((vector_size(16), aligned(4), may_alias));
#endif

/* dst[i] = src[i], i < count; the ranges do not overlap. */
static inline __attribute__((always_inline)) void ember_move_floats(float *dst, const float *src,
                                                                    size_t count)
{
#if defined(__arm__) && defined(__ARM_NEON)
    size_t i = 0;
    for (; i + 4 <= count; i += 4)
        *(ember_floats4 *)(dst + i) = *(const ember_floats4 *)(src + i);
    if (i < count)
        memcpy(dst + i, src + i, (count - i) * sizeof(float));
#else
    memcpy(dst, src, count * sizeof(float));
#endif
}

#endif /* EMBER_BASE_MOVE_H */
