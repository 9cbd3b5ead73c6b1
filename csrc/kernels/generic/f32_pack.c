/*
 * Packing of GEMM operands into the panels the micro-kernels read (see kernels.h).
 *
 * One implementation serves every kernel: only the tile sizes mr / nr differ. Inputs are
 * addressed by element strides, so a transposed or sliced operand packs without a copy.
 * Padding rows (A) and columns (B) are zero-filled: the kernels compute them but never
 * store them, and zeros keep the padded lanes finite.
 */
#include "kernels/kernels.h"

size_t ember_f32_packed_a_floats(size_t mr, size_t m, size_t k)
{
    return (m + mr - 1) / mr * mr * k;
}

size_t ember_f32_packed_b_floats(size_t nr, size_t k, size_t n)
{
    return (n + nr - 1) / nr * nr * k;
}

void ember_f32_pack_a(size_t mr, size_t m, size_t k, const float *a, size_t rs, size_t cs,
                      float *packed)
{
    for (size_t i0 = 0; i0 < m; i0 += mr) {
        const size_t rows = m - i0 < mr ? m - i0 : mr;
        for (size_t p = 0; p < k; p++) {
            const float *src = a + i0 * rs + p * cs;
            size_t r = 0;
            for (; r < rows; r++) {
                packed[r] = src[r * rs];
            }
            for (; r < mr; r++) {
                packed[r] = 0.0f;
            }
            packed += mr;
        }
    }
}

void ember_f32_pack_b(size_t nr, size_t k, size_t n, const float *b, size_t rs, size_t cs,
                      float *packed)
{
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const size_t cols = n - j0 < nr ? n - j0 : nr;
        for (size_t p = 0; p < k; p++) {
            const float *src = b + p * rs + j0 * cs;
            size_t j = 0;
            if (cs == 1) {
                /* Blocks of 8 through a local: fixed-size copies the compiler inlines as
                 * vector moves (a memcpy call per short row cost more than the copy). */
                for (; j + 8 <= cols; j += 8) {
                    float block[8];
                    for (size_t t = 0; t < 8; t++) {
                        block[t] = src[j + t];
                    }
                    for (size_t t = 0; t < 8; t++) {
                        packed[j + t] = block[t];
                    }
                }
                for (; j < cols; j++) {
                    packed[j] = src[j];
                }
            } else {
                for (; j < cols; j++) {
                    packed[j] = src[j * cs];
                }
            }
            for (; j < nr; j++) {
                packed[j] = 0.0f;
            }
            packed += nr;
        }
    }
}
