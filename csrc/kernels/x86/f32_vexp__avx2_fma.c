/*
 * f32_vexp__avx2_fma — y = exp(x), 8 lanes at a time, AVX2 + FMA3: vmath_exp
 * (f32_vmath__x86_body.h; the recipe in f32_vmath_constants.h). Tail: one masked step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx2_fma.h"

void ember_f32_vexp__avx2_fma(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX2(vmath_exp, n, x, y);
}
