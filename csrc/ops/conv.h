/*
 * csrc/ops/conv.h — what conv.c, its run (conv_run.c) and its paths (conv_im2col.c,
 * conv_implicit.c, conv_pointwise.c, conv_few_pixels.c, conv_depthwise.c,
 * conv_winograd.c, conv_winograd_cost.c) share, private
 * to csrc/ops: the prepared geometry of a convolution, the band layout, im2col packing,
 * the epilogue's clamp and hard swish.
 */
#ifndef EMBER_OPS_CONV_H
#define EMBER_OPS_CONV_H

#include <string.h>

#include "base/move.h"
#include "core/op.h"
#include "kernels/kernels.h"

#define MAX_SPATIAL (EMBER_MAX_RANK - 2)
enum { IN_PLACE_SAME = 1, IN_PLACE_STRIDE_2 = 2 };
enum { CONV_INPUT, CONV_FILTER, CONV_BIAS }; /* the op's tensor operands */

/* Strides past this (phase planes per channel: stride²) are not laid out in phases. */
#define EMBER_CONV_MAX_PHASE_STRIDE 4

typedef struct conv_prepared {
    const ember_f32_gemm_kernel *kernel;
    ember_core_class core; /* for the cost models fitted per core class */
    int spatial;
    int64_t batch, channels, out_channels, groups;
    int64_t group_in, group_out;      /* channels per group, in and out */
    int64_t in_dims[MAX_SPATIAL], out_dims[MAX_SPATIAL], kernel_dims[MAX_SPATIAL];
    int64_t in_strides[MAX_SPATIAL];  /* within one channel plane */
    int64_t stride[MAX_SPATIAL], dilation[MAX_SPATIAL], pad_before[MAX_SPATIAL];
    int64_t depth;                    /* K = group_in × prod(kernel) */
    int64_t in_pixels, out_pixels;
    int pointwise;                    /* 1×1, stride 1, no padding: B is the input itself */
    int64_t shuffle;                  /* 0, or the fused channel shuffle's groups (= groups):
                                         group G's channel i stored as channel i·shuffle + G,
                                         by the im2col / pointwise GEMMs only */
    int pointwise_in_place;           /* pointwise, B read in place by the indirect kernel
                                         (b_offsets: channel c at c · in_pixels), not packed */
    int depthwise;                    /* one input channel per group: direct, no GEMM */
    int one_pixel;                    /* one output pixel, constant filter: the GEMM is
                                         transposed (the pixel's taps as the one row of A,
                                         the filter packed as B), so the tile is 1 × nr
                                         channels, not mr channels × 1 useful pixel */
    int few_pixels;                   /* a few output pixels, constant filter: transposed too
                                         (pixels as A's rows, packed filter as B), so the
                                         tile's rows are mr pixels, not nr (conv_few_pixels.c) */
    int64_t *pixel_taps;              /* one_pixel: per kernel position, the input offset
                                         in a channel plane it reads, -1 in the padding */
    ember_f32_dwconv_fn dw_run;       /* depthwise through the f32_dwconv kernel, reading one
                                         plane's phases (laid out as the implicit band of
                                         the whole plane), or NULL: the generic loops */
    ember_f32_dwconv_3x3s2_fn dw_3x3s2; /* with dw_run, a 3×3 stride-2 conv: this run, over a
                                         plane laid out in row phases only */
    int dw_in_place;                  /* 0, or the planes read and written in place by the
                                         runs: IN_PLACE_SAME, a 3×3 stride-1 conv padded by 1
                                         (dw_run), IN_PLACE_STRIDE_2, a wide 3×3 stride-2
                                         one (dw_3x3s2) */
    ember_f32_dwconv_blocked_fn dw_blocked; /* or small planes, one input channel per output
                                         channel: this kernel, a block of channels a call;
                                         or 3×3 stride-2 planes: the whole-plane kernel
                                         (dw_whole_planes) */
    size_t dw_block;                  /* dw_blocked's channels a call */
    int dw_whole_planes;              /* dw_blocked is the ISA's plane_3x3s2 (no scratch) */
    ember_f32_dwconv_geometry dw_geometry; /* its planes */
    int64_t block;                    /* output pixels per packed B block, multiple of nr */
    int64_t slice_channels;           /* im2col and pointwise: input channels per K slice (the
                                         filter is packed slice by slice; group_in: one) */
    int64_t *tap_range;               /* per kernel position along the last dim: the outputs
                                         [lo, hi] whose input is inside (valid_range, whose
                                         divisions cost more than a small conv's copies) */
    int winograd;                     /* 3×3 stride 1, constant filter: F(2×2, 3×3)
                                         (conv_winograd.c), the filter packed as 9 A
                                         operands, one per tap */
    int64_t winograd_block;           /* tiles (2×2 output blocks) per pass, multiple of nr */
    int64_t winograd_rows;            /* output channels per filter transform, multiple of mr */
    int winograd_filter_kept;         /* the filter transformed once a run for every block
                                         of tiles, not once per block */
    const ember_f32_winograd_kernel *winograd_kernel; /* its transforms */
    int implicit;                     /* 2-d k×k: B read in place from a padded band of input
                                         rows in stride phases (conv_implicit.c), no im2col */
    int rows_direct;                  /* implicit: a GEMM per output row, written in place */
    /* The band layout (ember_conv_lay_out_bands), for the implicit GEMM and the
     * depthwise kernel path (one band of the whole plane): */
    int64_t band_rows, band_width;    /* output rows per band, phase row width */
    int64_t phase_floats;             /* one phase plane of one channel */
    unsigned char phase_used[EMBER_CONV_MAX_PHASE_STRIDE * EMBER_CONV_MAX_PHASE_STRIDE];
                                      /* the phases (row phase · sw + column) read */
    size_t band_floats, wide_floats;  /* scratch floats of the band, of the wide output */
    int32_t *b_offsets;               /* per tap, where its input starts in the band */
    size_t group_filter_floats;       /* packed A floats of one group */
    float *packed_filter;             /* groups × group_filter_floats, in the runnable's
                                         packed store; NULL if computed */
    size_t filter_scratch_offset;     /* a computed filter: where it is packed in scratch */
    float *bias;                      /* out_channels: constant bias + fused adds */
    float *run_bias;                  /* out_channels, refreshed per run when the bias is computed */
    int bias_computed;
    float min, max;
    ember_f32_hard_swish gate;        /* a fused hard swish, after the clamp (conv.c); its
                                         apply NULL when there is none */
    ember_f32_scaled_rows prologue;   /* pointwise: the scale fused before the conv (op.h),
                                         per input channel, applied as B is packed; its
                                         scale NULL: none */
    float *prologue_items;            /* its scale, then its shift: channels floats each */
    ember_f32_pack_scaled_fn pack_scaled; /* the kernel config's, packing with it */
} conv_prepared;

/* The fused hard swish, or NULL. */
static inline const ember_f32_hard_swish *ember_conv_gate(const conv_prepared *p)
{
    return p->gate.apply != NULL ? &p->gate : NULL;
}

/* The fused hard swish, in place, over `rows` rows of n output floats just written (row r
 * at (char *)y + r · row_stride), while they are in cache. */
static inline void ember_conv_hard_swish(const conv_prepared *p, size_t rows, size_t n,
                                         float *y, size_t row_stride)
{
    if (p->gate.apply != NULL)
        p->gate.apply(rows, n, y, row_stride, &p->gate);
}

/* Taps per input channel (kernel positions): K = group_in × this; not depth / group_in,
 * which a conv of zero channels would divide by zero. */
static inline int64_t ember_conv_taps(const conv_prepared *p)
{
    int64_t taps = 1;
    for (int d = 0; d < p->spatial; d++)
        taps *= p->kernel_dims[d];
    return taps;
}

/* K of a whole slice (the last may be shallower). */
static inline int64_t ember_conv_slice_depth(const conv_prepared *p)
{
    return p->slice_channels * ember_conv_taps(p);
}

/* Output range [*lo, *hi] along one spatial dim whose input index o·s + offset falls
 * inside [0, extent). Empty when *lo > *hi. */
static inline void ember_conv_valid_range(int64_t offset, int64_t s, int64_t extent,
                                          int64_t out_extent, int64_t *lo, int64_t *hi)
{
    *lo = offset >= 0 ? 0 : (-offset + s - 1) / s;
    *hi = extent - 1 - offset < 0 ? -1 : (extent - 1 - offset) / s;
    if (*hi > out_extent - 1)
        *hi = out_extent - 1;
}

/* dst[q] = src[q], q < n, for rows of a few to a few hundred floats: moves of fixed
 * sizes (inlined as vector moves), the last one overlapping the one before, instead of a
 * memcpy call, which cost more than the copy on 7-wide rows (a 3×3 depthwise conv of 960
 * channels at 7×7 spent 30% of its time in memcpy). Never reads or writes outside [0, n). */
static inline void ember_conv_copy_floats(float *restrict dst, const float *restrict src,
                                          int64_t n)
{
    if (n >= 8) {
        int64_t q = 0;
        for (; q + 8 <= n; q += 8)
            ember_move_floats(dst + q, src + q, 8);
        if (q < n)
            ember_move_floats(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        ember_move_floats(dst, src, 4);
        ember_move_floats(dst + n - 4, src + n - 4, 4);
    } else if (n >= 2) {
        memcpy(dst, src, 2 * sizeof(float));
        memcpy(dst + n - 2, src + n - 2, 2 * sizeof(float));
    } else if (n == 1) {
        dst[0] = src[0];
    }
}

/* dst[q] = src[q·s], q < n, for the phase planes of conv_implicit.c and
 * conv_depthwise.c: a branch per stride the compiler vectorises (stride 2 is a
 * deinterleave). */
static inline void ember_conv_copy_strided(float *restrict dst, const float *restrict src,
                                           int64_t n, int64_t s)
{
    if (s == 1)
        ember_conv_copy_floats(dst, src, n);
    else if (s == 2)
        for (int64_t q = 0; q < n; q++)
            dst[q] = src[2 * q];
    else
        for (int64_t q = 0; q < n; q++)
            dst[q] = src[q * s];
}

/* Floats between the rows of a scratch matrix whose rows are read or written many at a
 * time (16 Winograd filter runs, the n pixel rows of a transpose): an odd number of
 * 64-byte lines, so that consecutive rows fall in every L1 set in turn. At an even
 * number they share a few sets (1280 floats: 4 of 64) and evict each other (a transpose
 * of 1280 channels × 49 pixels: 0.8 -> 0.5 ns a value). */
static inline size_t ember_conv_padded_stride(size_t floats)
{
    const size_t lines = (floats + 15) / 16;
    return (lines % 2 == 0 ? lines + 1 : lines) * 16;
}

/* The epilogue's clamp for paths whose GEMM writes a scratch layout (comparisons, so a
 * NaN passes as in the kernels). */
static inline float ember_conv_clamp(float v, float min, float max)
{
    const float low = v < min ? min : v;
    return low > max ? max : low;
}

/* dst[i] = clamp(src[i] + residual[i], min, max): the epilogue's last part for those
 * paths. dst may be src or residual. */
static inline void ember_conv_add_clamp(float *dst, const float *src, const float *residual,
                                        size_t n, float min, float max)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ember_conv_clamp(src[i] + residual[i], min, max);
}

/* At prepare: p->tap_range (every conv through the GEMM), p->pixel_taps (one_pixel). */
ember_status ember_conv_tap_ranges(conv_prepared *p, const ember_node *node);
ember_status ember_conv_pixel_taps(conv_prepared *p, const ember_node *node);

/* Columns [first, first + count) of the im2col matrix of `channels` input channels from
 * `input` (a group's, or a K slice of it), in packed-B layout of panels nr wide
 * (conv_im2col.c); nr = count gives the plain row-major matrix.
 * `rows` is scratch of ember_conv_im2col_rows_floats(p) floats (count ≤ p->block). The
 * plain matrix needs 8 floats of room after it (its rows are moved in blocks of 8). */
/* Input channels of the K slice starting at channel c0: slice_channels, fewer in the last. */
static inline int64_t ember_conv_slice_width(const conv_prepared *p, int64_t c0)
{
    return p->group_in - c0 < p->slice_channels ? p->group_in - c0 : p->slice_channels;
}

/* Where the packed A of the slice starting at input channel c0 begins in a group's: the
 * slices are packed one after another, each as a matrix of its own depth. */
static inline size_t ember_conv_slice_offset(const conv_prepared *p, int64_t c0)
{
    return ember_f32_packed_a_floats(p->kernel->mr, (size_t)p->group_out,
                                     (size_t)(c0 * ember_conv_taps(p)));
}

/* The filter in its run's forms (conv_filter.c): packed as A, slice by slice (per run when
 * the filter is computed), and a constant filter made the conv's own at prepare. */
void ember_conv_pack_filter(const conv_prepared *p, const float *filter, float *packed);
ember_status ember_conv_own_filter(conv_prepared *p, ember_prepare_context *ctx,
                                   const ember_node *node, const ember_value *w,
                                   int64_t kind, int64_t panel, size_t bytes);

size_t ember_conv_im2col_rows_floats(const conv_prepared *p);
void ember_conv_pack_im2col(const conv_prepared *p, const float *input, int64_t channels,
                            int64_t first, int64_t count, size_t nr, float *packed, float *rows);

/* Depthwise (conv_depthwise.c): at prepare, chooses the kernel path (p->dw_run) and sets
 * *scratch_bytes; the run covers every image and channel. */
ember_status ember_conv_depthwise_prepare(conv_prepared *p, const ember_f32_dwconv_kernel *kernel,
                                          const ember_node *node, size_t *scratch_bytes);
void ember_conv_depthwise_run(const conv_prepared *p, const float *input, const float *filter,
                              const float *bias, float *output, float *scratch);
/* The path prepare chose, as profiles name it. */
const char *ember_conv_depthwise_form(const conv_prepared *p);

/* One or few output pixels (conv_few_pixels.c): the transposed GEMMs' filter packing
 * (as B, per group), the one-pixel run (every image and group); whether the few-pixel
 * form pays, its scratch, and its run of one group of one image. */
void ember_conv_pack_filter_as_b(const conv_prepared *p, const float *filter, float *packed);
void ember_conv_one_pixel_run(const conv_prepared *p, const float *input, const float *bias,
                              const float *residual, float *output, float *taps);
int ember_conv_few_pixels_pays(const conv_prepared *p);
/* Its work in multiply-adds for one group, as its tiles run them, its copies counted in
 * multiply-adds too (what it is weighed by, against the straight GEMM and Winograd). */
double ember_conv_few_pixels_madds(const conv_prepared *p);
/* The columns the kernel multiplies for n columns: whole tiles, the last one narrow when
 * it fits the kernel's narrow path (AVX-512: 112 pixels cost 3 tiles and a half). */
int64_t ember_conv_tile_columns(const conv_prepared *p, int64_t n);
/* The rows it multiplies for m rows: whole tiles, a last tile of one row as one row, and
 * of a few rows as the kernel's short loops take them (x86: 4, AVX-512 also 8). */
int64_t ember_conv_tile_rows(const conv_prepared *p, int64_t m);
size_t ember_conv_few_pixels_scratch(const conv_prepared *p);
/* `prologue`: the group's rows of p->prologue (pointwise only), or NULL. */
void ember_conv_few_pixels_run(const conv_prepared *p, const float *in, const float *filter,
                               const float *bias, const float *residual, float *out,
                               float *scratch, const ember_f32_scaled_rows *prologue);

/* The op's run (conv_run.c), over the state conv.c's prepare made. */
void ember_conv_run(const ember_node *node, void *prepared, const ember_op_io *io);

/* Pointwise with B in place (conv_pointwise.c): at prepare, sets p->pointwise_in_place
 * (and p->b_offsets) where it pays; the run of one block of pixels of one K slice
 * (`channels` planes from `in`, `count` columns), its epilogue `slice`. */
ember_status ember_conv_pointwise_prepare(conv_prepared *p, const ember_node *node);
/* The fused prologue (op.h), if any, as p->prologue: its items copied for every input
 * channel (conv.c keeps a conv with one on the packed pointwise path). */
ember_status ember_conv_prologue_prepare(conv_prepared *p, const ember_prepare_context *ctx);
void ember_conv_pointwise_run(const conv_prepared *p, int64_t channels, const float *in,
                              int64_t count, const float *filter, float *columns, float *out,
                              size_t row_bytes, const ember_f32_gemm_params *slice);

/* Winograd F(2×2, 3×3): whether the conv qualifies and pays against the form it would
 * otherwise take (the few-pixel one when `few_pixels`, else the im2col or implicit GEMM:
 * conv_winograd_cost.c); at prepare (conv_winograd.c), its blocks and *scratch_bytes; the packed
 * filter's floats per group and its packing; the run of one group of one image
 * (residual: that group's part, or NULL). */
int ember_conv_winograd_pays(const conv_prepared *p, int few_pixels);
/* Its 2×2 tiles per image, output channels per filter transform, and tiles per block of
 * the input transform given that many channels (conv_winograd_cost.c). */
size_t ember_conv_winograd_tiles(const conv_prepared *p);
int64_t ember_conv_winograd_filter_rows(const conv_prepared *p);
size_t ember_conv_winograd_block_tiles(const conv_prepared *p, int64_t rows);
void ember_conv_winograd_prepare(conv_prepared *p, const ember_f32_winograd_kernel *kernel,
                                 size_t *scratch_bytes);
size_t ember_conv_winograd_filter_floats(const conv_prepared *p);
void ember_conv_winograd_pack_filter(const conv_prepared *p, const float *filter, float *packed);
void ember_conv_winograd_run(const conv_prepared *p, const float *in, const float *filter,
                             const float *bias, const float *residual, float *out,
                             float *scratch);

/* Implicit GEMM (conv_implicit.c): at prepare, sets p->implicit when the conv runs so,
 * with its tables and *scratch_bytes; the run covers one group of one image (residual:
 * that group's part of the fused residual, or NULL). */
ember_status ember_conv_implicit_prepare(conv_prepared *p, const ember_node *node,
                                         int residual, size_t *scratch_bytes);
/* The band layout for `rows` output rows at a time (2-d, strides ≤
 * EMBER_CONV_MAX_PHASE_STRIDE): p->band_*, phase_*, b_offsets (per tap of each channel
 * of the group: where its input under output (0, 0) is in the band). 1 when laid out,
 * 0 when the band would not be addressable (take another path), -1 out of memory. */
int ember_conv_lay_out_bands(conv_prepared *p, int64_t rows);
void ember_conv_implicit_run(const conv_prepared *p, const float *in, const float *filter,
                             const ember_f32_gemm_params *params, const float *residual,
                             float *out, float *scratch);

#endif /* EMBER_OPS_CONV_H */
