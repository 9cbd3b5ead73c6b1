/*
 * f32_vexp__scalar — the reference: libm's expf, element by element.
 */
#include "kernels/kernels.h"

#include <math.h>

void ember_f32_vexp__scalar(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = expf(x[i]);
    }
}
