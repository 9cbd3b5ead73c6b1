/*
 * f32_vexp__avx2_fma — y = exp(x), 8 lanes at a time, AVX2 + FMA3 (compiled with -mavx2
 * -mfma from the file name; called only when dispatch saw both).
 *
 * Recipe (f32_vmath_constants.h): clamp, Cody–Waite reduction by ln2, degree-6
 * polynomial by Horner in FMAs, scale by 2^n in two exponent-bit factors so subnormal
 * results round once. Tail: one masked load / store.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx2_fma.h"

void ember_f32_vexp__avx2_fma(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX2(exp_avx2, n, x, y);
}
