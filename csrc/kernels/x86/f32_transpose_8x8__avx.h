/*
 * 8 × 8 transposes of floats in AVX registers (unpacks, in-lane shuffles, lane swaps: 24
 * shuffles), for the blocked depthwise kernels of AVX2 and AVX-512
 * (f32_dwconv_blocked__x86.h). Included by files built with AVX2 or AVX-512F.
 */
#ifndef EMBER_F32_TRANSPOSE_8X8_AVX_H
#define EMBER_F32_TRANSPOSE_8X8_AVX_H

#include <immintrin.h>
#include <stddef.h>

/* r0..r7 (8 vectors, named: an array was kept on the stack, every step a store and a
 * load) transposed in place: unpacks, in-lane shuffles, lane swaps. */
#define EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7)                                \
    do {                                                                                   \
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);     \
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);     \
        const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);     \
        const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);     \
        const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44);                                 \
        const __m256 u1 = _mm256_shuffle_ps(t0, t2, 0xEE);                                 \
        const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44);                                 \
        const __m256 u3 = _mm256_shuffle_ps(t1, t3, 0xEE);                                 \
        const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44);                                 \
        const __m256 u5 = _mm256_shuffle_ps(t4, t6, 0xEE);                                 \
        const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44);                                 \
        const __m256 u7 = _mm256_shuffle_ps(t5, t7, 0xEE);                                 \
        r0 = _mm256_permute2f128_ps(u0, u4, 0x20);                                         \
        r1 = _mm256_permute2f128_ps(u1, u5, 0x20);                                         \
        r2 = _mm256_permute2f128_ps(u2, u6, 0x20);                                         \
        r3 = _mm256_permute2f128_ps(u3, u7, 0x20);                                         \
        r4 = _mm256_permute2f128_ps(u0, u4, 0x31);                                         \
        r5 = _mm256_permute2f128_ps(u1, u5, 0x31);                                         \
        r6 = _mm256_permute2f128_ps(u2, u6, 0x31);                                         \
        r7 = _mm256_permute2f128_ps(u3, u7, 0x31);                                         \
    } while (0)

/* Rows row[0..7] + at, 8 floats each, transposed: float k of every row to
 * to[k] + to_offset (32-byte aligned). */
static inline __attribute__((always_inline)) void
ember_transpose_8x8_rows(const float *const *row, size_t at, float *const *to, size_t to_offset)
{
    __m256 r0 = _mm256_loadu_ps(row[0] + at), r1 = _mm256_loadu_ps(row[1] + at);
    __m256 r2 = _mm256_loadu_ps(row[2] + at), r3 = _mm256_loadu_ps(row[3] + at);
    __m256 r4 = _mm256_loadu_ps(row[4] + at), r5 = _mm256_loadu_ps(row[5] + at);
    __m256 r6 = _mm256_loadu_ps(row[6] + at), r7 = _mm256_loadu_ps(row[7] + at);
    EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7);
    _mm256_store_ps(to[0] + to_offset, r0);
    _mm256_store_ps(to[1] + to_offset, r1);
    _mm256_store_ps(to[2] + to_offset, r2);
    _mm256_store_ps(to[3] + to_offset, r3);
    _mm256_store_ps(to[4] + to_offset, r4);
    _mm256_store_ps(to[5] + to_offset, r5);
    _mm256_store_ps(to[6] + to_offset, r6);
    _mm256_store_ps(to[7] + to_offset, r7);
}

/* The 8 vectors at from + k·from_stride (32-byte aligned), transposed: the first `rows`
 * (1 to 8) of the result to to + r·out_stride. */
static inline __attribute__((always_inline)) void
ember_transpose_8x8_out(const float *from, size_t from_stride, size_t rows, float *to,
                        size_t out_stride)
{
    __m256 r0 = _mm256_load_ps(from), r1 = _mm256_load_ps(from + from_stride);
    __m256 r2 = _mm256_load_ps(from + 2 * from_stride);
    __m256 r3 = _mm256_load_ps(from + 3 * from_stride);
    __m256 r4 = _mm256_load_ps(from + 4 * from_stride);
    __m256 r5 = _mm256_load_ps(from + 5 * from_stride);
    __m256 r6 = _mm256_load_ps(from + 6 * from_stride);
    __m256 r7 = _mm256_load_ps(from + 7 * from_stride);
    EMBER_TRANSPOSE_8X8(r0, r1, r2, r3, r4, r5, r6, r7);
    if (rows == 8) {
        _mm256_storeu_ps(to, r0);
        _mm256_storeu_ps(to + out_stride, r1);
        _mm256_storeu_ps(to + 2 * out_stride, r2);
        _mm256_storeu_ps(to + 3 * out_stride, r3);
        _mm256_storeu_ps(to + 4 * out_stride, r4);
        _mm256_storeu_ps(to + 5 * out_stride, r5);
        _mm256_storeu_ps(to + 6 * out_stride, r6);
        _mm256_storeu_ps(to + 7 * out_stride, r7);
        return;
    }
    const __m256 result[8] = {r0, r1, r2, r3, r4, r5, r6, r7};
    for (size_t r = 0; r < rows; r++)
        _mm256_storeu_ps(to + r * out_stride, result[r]);
}

#endif /* EMBER_F32_TRANSPOSE_8X8_AVX_H */
