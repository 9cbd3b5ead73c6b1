/*
 * f32_vexp__avx512f — y = exp(x), 16 lanes at a time: the AVX2 kernel's recipe lane for
 * lane (f32_vmath__avx512f.h, exp_avx512). Tail: one masked step.
 */
#include "kernels/kernels.h"
#include "kernels/x86/f32_vmath__avx512f.h"

void ember_f32_vexp__avx512f(size_t n, const float *x, float *y)
{
    EMBER_F32_VUNARY_LOOP_AVX512(exp_avx512, n, x, y);
}
