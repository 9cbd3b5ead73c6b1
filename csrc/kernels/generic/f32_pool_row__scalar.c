/*
 * f32_pool_row__scalar — the reference row of a pool's step-2 windows (kernels.h): each
 * column folded down the rows, then each window's columns folded left to right, then the
 * divide. The per-row path of ops/pool.c computes the same folds in the same order.
 */
#include "kernels/kernels.h"

static inline float fold(float held, float next, int is_max)
{
    return is_max ? (next > held ? next : held) : held + next;
}

static float column(const float *const *rows, size_t kh, size_t j, int is_max)
{
    float v = rows[0][j];
    for (size_t t = 1; t < kh; t++)
        v = fold(v, rows[t][j], is_max);
    return v;
}

void ember_f32_pool_row__scalar(size_t n, const float *const *rows, size_t kh, size_t kw,
                                int is_max, float divisor, float *y)
{
    for (size_t i = 0; i < n; i++) {
        float v = column(rows, kh, 2 * i, is_max);
        for (size_t s = 1; s < kw; s++)
            v = fold(v, column(rows, kh, 2 * i + s, is_max), is_max);
        y[i] = is_max ? v : v / divisor;
    }
}
