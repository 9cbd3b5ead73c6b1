/*
 * f32_vtanh__scalar — the reference: libm's tanhf, element by element.
 */
#include "kernels/kernels.h"

#include <math.h>

void ember_f32_vtanh__scalar(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = tanhf(x[i]);
    }
}
