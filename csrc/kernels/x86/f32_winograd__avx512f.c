/*
 * f32_winograd__avx512f — the Winograd F(2×2, 3×3) transforms (kernels.h) for AVX-512F:
 * the input transform over vectors of sixteen tiles (f32_winograd__x86_body.h),
 * the output and filter transforms the body's loops (f32_winograd__body.h) built for
 * AVX-512. Same bits as the scalar kernel (tests/c/test_winograd.c).
 */
#include <immintrin.h>

#include "kernels/f32_winograd__body.h"

typedef __m512 vf;
typedef __mmask16 vmask;
enum { LANES = 16 };
#define vf_loadu _mm512_loadu_ps
#define vf_storeu _mm512_storeu_ps
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_zero _mm512_setzero_ps
#define vf_set1 _mm512_set1_ps
#define vf_max _mm512_max_ps
#define vf_min _mm512_min_ps
#define vf_load_lanes(p, m) _mm512_maskz_loadu_ps((m), (p))
#define vf_store_lanes(p, m, x) _mm512_mask_storeu_ps((p), (m), (x))

/* Lanes [0, count), count clamped to [0, 16] (branch-free: the edges' counts vary). */
static inline vmask vmask_first(ptrdiff_t count)
{
    const unsigned clamped = count < 0 ? 0u : count > LANES ? (unsigned)LANES : (unsigned)count;
    return (vmask)((1u << clamped) - 1u);
}

static inline vf vf_columns(const float *row, ptrdiff_t c, ptrdiff_t width)
{
    /* the lanes l with 0 ≤ c + l < width; the others, left or right of the row, are
     * masked off, and a masked-off lane's address never faults */
    const vmask inside = (vmask)(vmask_first(width - c) & ~vmask_first(-c));
    return _mm512_maskz_loadu_ps(inside, winograd_column_address(row, c));
}

static inline vf vf_evens(vf a, vf b)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                           26, 28, 30);
    return _mm512_permutex2var_ps(a, even, b);
}

static inline vf vf_odds(vf a, vf b)
{
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                                          27, 29, 31);
    return _mm512_permutex2var_ps(a, odd, b);
}

static inline void vf_interleave(vf e, vf o, vf *lo, vf *hi)
{
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22,
                                            7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29,
                                             14, 30, 15, 31);
    *lo = _mm512_permutex2var_ps(e, first, o);
    *hi = _mm512_permutex2var_ps(e, second, o);
}

#include "kernels/x86/f32_winograd__x86_body.h"

EMBER_F32_WINOGRAD_X86_DEFINE(avx512f)
