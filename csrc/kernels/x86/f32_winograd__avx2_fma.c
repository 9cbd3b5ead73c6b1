/*
 * f32_winograd__avx2_fma — the Winograd F(2×2, 3×3) transforms (kernels.h) for AVX2: the
 * input transform over vectors of eight tiles (f32_winograd__x86_body.h), the
 * output and filter transforms the body's loops (f32_winograd__body.h) at eight floats a
 * vector where the baseline build has four (the input and output transforms took a
 * quarter of a 3×3 256 -> 256 conv at 14×14 with SSE2). Adds and subtracts only, so its
 * bits are the reference's (tests/c/test_winograd.c).
 */
#include <immintrin.h>

#include "kernels/f32_winograd__body.h"

typedef __m256 vf;
typedef __m256i vmask;
enum { LANES = 8 };
#define vf_loadu _mm256_loadu_ps
#define vf_storeu _mm256_storeu_ps
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_zero _mm256_setzero_ps
#define vf_set1 _mm256_set1_ps
#define vf_max _mm256_max_ps
#define vf_min _mm256_min_ps
#define vf_load_lanes(p, m) _mm256_maskload_ps((p), (m))
#define vf_store_lanes(p, m, x) _mm256_maskstore_ps((p), (m), (x))

/* Lanes [from, to): all ones where from ≤ lane index < to (bounds clamped to [−1, 8]). */
static inline vmask vmask_range(ptrdiff_t from, ptrdiff_t to)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int lo = from < 0 ? -1 : from > LANES ? LANES : (int)from - 1;
    const int hi = to < 0 ? 0 : to > LANES ? LANES : (int)to;
    return _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
}

static inline vmask vmask_first(ptrdiff_t count)
{
    return vmask_range(0, count);
}

static inline vf vf_columns(const float *row, ptrdiff_t c, ptrdiff_t width)
{
    /* the lanes l with 0 ≤ c + l < width; the others, left or right of the row, are
     * masked off, and vmaskmovps never faults on a masked-off lane's address */
    return _mm256_maskload_ps(winograd_column_address(row, c), vmask_range(-c, width - c));
}

/* vshufps takes lanes 0, 2 (1, 3) of each source per 128-bit half; vpermpd puts the
 * halves' pairs in order. */
static inline vf vf_evens(vf a, vf b)
{
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
}

static inline vf vf_odds(vf a, vf b)
{
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
}

/* vunpck{l,h}ps interleave within each 128-bit half; vperm2f128 puts the halves in order */
static inline void vf_interleave(vf e, vf o, vf *lo, vf *hi)
{
    const vf a = _mm256_unpacklo_ps(e, o), b = _mm256_unpackhi_ps(e, o);
    *lo = _mm256_permute2f128_ps(a, b, 0x20);
    *hi = _mm256_permute2f128_ps(a, b, 0x31);
}

#include "kernels/x86/f32_winograd__x86_body.h"

EMBER_F32_WINOGRAD_X86_DEFINE(avx2_fma)
