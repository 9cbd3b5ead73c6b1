/*
 * Implicit-GEMM convolution for conv.c: 2-d, stride 1, k×k (not 1×1 unpadded, which
 * reads its input as B already). No im2col matrix is built: the GEMM's micro-kernel
 * reads each row of B in place (ember_f32_gemm_indirect), from a zero-padded copy of a
 * band of input rows.
 *
 * Why it works. In a padded plane of width pw, output pixel (oh, ow) of tap (kh, kw)
 * reads padded[(oh + kh·dh)·pw + ow + kw·dw]. Number the output pixels with the padded
 * width, j = oh·pw + ow: then tap k reads padded[j + offset_k], so the im2col row of
 * tap k is the padded plane itself, shifted by offset_k, and nr consecutive pixels are
 * nr consecutive floats. The pw − out_w columns past each row's end are computed and
 * dropped (2 of 58 for a 3×3 'same' conv at 56 wide); the GEMM writes this wide output
 * to scratch, and its rows are copied out.
 *
 * The copy this costs is one pass over the input band (plus (kh − 1)·dh overlapping
 * rows per band) instead of K/C = kh·kw passes: a 3×3 conv 128 -> 32 at 56×56 went
 * from 5.1 ms (im2col) to 3.6 ms on x86 (onnxruntime 2.75 ms), at 14×14 0.44 -> 0.25.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"

/* Input band bytes: the rows of every channel one GEMM pass reads, kept near L2. */
#define BAND_BYTES (384 * 1024)
/* The kh − 1 rows each band repeats stay under a quarter of its rows. */
#define MIN_BAND_OVERLAP_SHARE 4

/* Output channels beyond which the in-place form costs more than the im2col it saves, per
 * kernel. x86: none (its B loads cost what the packed panel's do; every 3×3 conv measured
 * gains, 64 -> 64 at 56×56 3.37 -> 2.84 ms). NEON: reading B through the offset table adds
 * a load and an add to a k step of ~18 instructions, and the virtual columns a few percent,
 * which the copy saved outweighs only while few output channels share it (aarch64
 * instructions, Cortex-A76: 64 -> 64 at 56×56 56.6M -> 54.1M, 128 -> 32 at 56×56
 * 77.3M -> 54.4M, but 128 -> 128 at 28×28 52.7M -> 55.3M, 256 -> 256 at 14×14
 * 50.0M -> 58.6M). */
static int64_t max_rows(const ember_f32_gemm_kernel *kernel)
{
    return kernel->isa == EMBER_ISA_NEON_AARCH64 || kernel->isa == EMBER_ISA_NEON_ARMV7
        ? 64 : INT64_MAX;
}

static int64_t extra_rows(const conv_prepared *p)
{
    return (p->kernel_dims[0] - 1) * p->dilation[0];
}

/* Whether the conv runs this way, and then its band geometry, offsets and scratch. */
ember_status ember_conv_implicit_prepare(conv_prepared *p, const ember_node *node,
                                         const int64_t *pad_after, size_t *scratch_bytes)
{
    p->implicit = 0;
    if (p->kernel->indirect == NULL || p->group_out > max_rows(p->kernel) || p->spatial != 2 ||
        p->pointwise || p->one_pixel ||
        p->stride[0] != 1 || p->stride[1] != 1 || p->pad_before[0] < 0 ||
        p->pad_before[1] < 0 || pad_after[0] < 0 || pad_after[1] < 0)
        return EMBER_OK;
    const int64_t pw = p->pad_before[1] + p->in_dims[1] + pad_after[1];
    const int64_t extra = extra_rows(p), out_h = p->out_dims[0];
    /* stride 1: out_w = pw − (kw − 1)·dw; anything else is not this conv */
    if (p->out_dims[1] != pw - (p->kernel_dims[1] - 1) * p->dilation[1] ||
        out_h != p->pad_before[0] + p->in_dims[0] + pad_after[0] - extra)
        return EMBER_OK;
    int64_t rows = BAND_BYTES / (int64_t)sizeof(float) / (p->group_in * pw) - extra;
    if (rows < MIN_BAND_OVERLAP_SHARE * extra)
        rows = MIN_BAND_OVERLAP_SHARE * extra;
    rows = rows < 1 ? 1 : rows > out_h ? out_h : rows;
    const int64_t plane = (rows + extra) * pw, nr = (int64_t)p->kernel->nr;
    /* offsets are int32 (half the bytes of the table the kernel walks per tile); the
     * scratch must be addressable on 32-bit targets too */
    if (plane > INT32_MAX / p->group_in || p->group_in * plane > INT32_MAX - nr ||
        (uint64_t)p->group_out > (uint64_t)(SIZE_MAX / 16) / sizeof(float) / (uint64_t)plane)
        return EMBER_OK;
    p->band_rows = rows;
    p->band_width = pw;
    p->band_floats = (size_t)(p->group_in * plane + nr);
    p->wide_floats = (size_t)(p->group_out * rows * pw);
    p->b_offsets = malloc((size_t)p->depth * sizeof *p->b_offsets + 1);
    if (p->b_offsets == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    int32_t *offset = p->b_offsets;
    for (int64_t c = 0; c < p->group_in; c++)
        for (int64_t kh = 0; kh < p->kernel_dims[0]; kh++)
            for (int64_t kw = 0; kw < p->kernel_dims[1]; kw++)
                *offset++ = (int32_t)(c * plane + kh * p->dilation[0] * pw + kw * p->dilation[1]);
    /* the wide output starts on a cache line */
    *scratch_bytes = ((p->band_floats * sizeof(float) + 63) / 64 * 64) +
                     p->wide_floats * sizeof(float);
    p->implicit = 1;
    return EMBER_OK;
}

/* Input rows [first − pad_top, …) of every channel of the group, zero-padded to the band's
 * width; rows outside the image are zeros, and so are the nr floats a last tile reads
 * past the band. */
static void fill_band(const conv_prepared *p, const float *in, int64_t first, float *band)
{
    const int64_t pw = p->band_width, in_w = p->in_dims[1], left = p->pad_before[1];
    const int64_t right = pw - left - in_w, band_rows = p->band_rows + extra_rows(p);
    float *dst = band;
    for (int64_t c = 0; c < p->group_in; c++, in += p->in_pixels)
        for (int64_t r = 0; r < band_rows; r++, dst += pw) {
            const int64_t ih = first + r - p->pad_before[0];
            if (ih < 0 || ih >= p->in_dims[0]) {
                memset(dst, 0, (size_t)pw * sizeof(float));
                continue;
            }
            memset(dst, 0, (size_t)left * sizeof(float));
            memcpy(dst + left, in + ih * in_w, (size_t)in_w * sizeof(float));
            memset(dst + left + in_w, 0, (size_t)right * sizeof(float));
        }
    memset(dst, 0, p->kernel->nr * sizeof(float));
}

void ember_conv_implicit_run(const conv_prepared *p, const float *in, const float *filter,
                             const ember_f32_gemm_params *params, float *out, float *scratch)
{
    const int64_t pw = p->band_width, out_w = p->out_dims[1], out_h = p->out_dims[0];
    float *band = scratch;
    float *wide = scratch + (p->band_floats * sizeof(float) + 63) / 64 * 64 / sizeof(float);
    const size_t wide_row_bytes = (size_t)(p->band_rows * pw) * sizeof(float);
    for (int64_t first = 0; first < out_h; first += p->band_rows) {
        const int64_t rows = out_h - first < p->band_rows ? out_h - first : p->band_rows;
        fill_band(p, in, first, band);
        ember_f32_gemm_indirect(p->kernel, (size_t)p->group_out,
                                (size_t)((rows - 1) * pw + out_w), (size_t)p->depth, filter,
                                band, p->b_offsets, wide, wide_row_bytes, params);
        for (int64_t o = 0; o < p->group_out; o++)
            for (int64_t r = 0; r < rows; r++)
                memcpy(out + o * p->out_pixels + (first + r) * out_w,
                       wide + (o * p->band_rows + r) * pw, (size_t)out_w * sizeof(float));
    }
}
