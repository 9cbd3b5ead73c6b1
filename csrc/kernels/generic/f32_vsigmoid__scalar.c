/*
 * f32_vsigmoid__scalar — the reference: sigmoid(x) = 1 / (1 + e^-x), written per sign so
 * that the exponential never overflows and the result stays accurate relative to itself
 * for x ≪ 0 (e^x / (1 + e^x), down to the subnormals) as for x > 0.
 */
#include "kernels/kernels.h"

#include <math.h>

void ember_f32_vsigmoid__scalar(size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        if (v >= 0.0f) {
            y[i] = 1.0f / (1.0f + expf(-v));
        } else {
            const float e = expf(v); /* NaN lands here too and stays NaN */
            y[i] = e / (1.0f + e);
        }
    }
}
