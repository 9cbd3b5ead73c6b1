/*
 * f32_softmax_row__scalar — the definition of the family (kernels.h): the max and the sum
 * in eight running lanes (independent lanes the compiler turns into SIMD: aarch64's NEON,
 * x86's SSE2), exp by the CPU's exp kernel over the row in place.
 */
#include "kernels/kernels.h"

#include <math.h>

enum { LANES = 8 };

/* NaN is skipped (x > max is false), and reaches every output through the sum. */
static float row_max(const float *x, size_t n)
{
    float lane[LANES];
    for (int j = 0; j < LANES; j++)
        lane[j] = -INFINITY;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
    float max = -INFINITY;
    for (int j = 0; j < LANES; j++)
        max = lane[j] > max ? lane[j] : max;
    for (; i < n; i++)
        max = x[i] > max ? x[i] : max;
    return max;
}

static float row_sum(const float *x, size_t n)
{
    float lane[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            lane[j] += x[i + j];
    float sum = 0.0f;
    for (int j = 0; j < LANES; j++)
        sum += lane[j];
    for (; i < n; i++)
        sum += x[i];
    return sum;
}

void ember_f32_softmax_row__scalar(size_t n, const float *x, float *y, ember_f32_vunary_fn vexp)
{
    const float max = row_max(x, n);
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] - max;
    vexp(n, y, y);
    const float scale = 1.0f / row_sum(y, n);
    for (size_t i = 0; i < n; i++)
        y[i] *= scale;
}
