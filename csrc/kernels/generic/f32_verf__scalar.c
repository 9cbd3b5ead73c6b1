/*
 * f32_verf__scalar — the reference: libm's erff, element by element.
 */
#include "kernels/kernels.h"

#include <math.h>

void ember_f32_verf__scalar(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = erff(x[i]);
    }
}
