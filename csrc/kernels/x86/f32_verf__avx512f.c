/*
 * f32_verf__avx512f — y = erf(x), 16 lanes at a time, AVX-512F: vmath_erf
 * (f32_vmath__x86_body.h; the recipe in f32_vmath_constants.h). Tail: one masked step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx512f.h"

void ember_f32_verf__avx512f(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX512(vmath_erf, n, x, y);
}
