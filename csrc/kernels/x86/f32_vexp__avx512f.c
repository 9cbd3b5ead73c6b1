/*
 * f32_vexp__avx512f — y = exp(x), 16 lanes at a time, AVX-512F: vmath_exp
 * (f32_vmath__x86_body.h; the recipe in f32_vmath_constants.h). Tail: one masked step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx512f.h"

void ember_f32_vexp__avx512f(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX512(vmath_exp, n, x, y);
}
