/*
 * csrc/kernels/f32_dwconv.h — the depthwise-convolution families of kernels.h (runs, the
 * 3×3 stride-2 run, the blocked and whole-plane kernels): part of that header, which
 * includes it where the family sits; include kernels/kernels.h, not this.
 */
#ifndef EMBER_KERNELS_F32_DWCONV_H
#define EMBER_KERNELS_F32_DWCONV_H

#ifndef EMBER_KERNELS_H
#error "include kernels/kernels.h, which includes this"
#endif

/* X(t) for each of the nine taps of a 3×3 kernel, for kernels that write their 3×3 pass
 * out tap by tap (a loop over arrays of vectors is not unrolled at -O2 and would keep
 * them in memory). */
#define EMBER_EACH_OF_NINE(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)

typedef struct ember_f32_dwconv_params {
    float min, max; /* clamp of the result: -INFINITY/INFINITY for none */
} ember_f32_dwconv_params;

/*
 * A run of n outputs of one depthwise-convolution channel, its taps read in place:
 *
 *   out[o] = clamp(bias + Σ_{t < taps} w[t] · src[t][o], min, max),   o < n
 *
 * src[t] is tap t's input under output 0, and output o's under it is src[t][o]: the
 * caller lays the input out so that a whole run of outputs reads every tap's input as
 * consecutive floats (conv_depthwise.c: zero-padded stride-phase planes, where a run is
 * one output row or a whole plane in rows padded to the phase width). Any tap count and
 * geometry: the kernel knows none. Each output adds its taps to the bias in order
 * t = 0, 1, …; reads exactly src[t][0..n) (nothing when n = 0), writes exactly out[0..n);
 * out overlaps no src. No alignment required; params is never NULL. Pure, thread-safe.
 */
typedef void (*ember_f32_dwconv_fn)(size_t n, size_t taps, const float *const *src,
                                    const float *w, float bias, float *out,
                                    const ember_f32_dwconv_params *params);

/*
 * A run of n outputs of a 3×3 stride-2 depthwise convolution, its three kernel rows read
 * in place, every other float:
 *
 *   out[o] = clamp(bias + Σ_{r < 3} Σ_{c < 3} w[3r + c] · row[r][2o + c], min, max),   o < n
 *
 * (conv_depthwise.c lays the input out in the two row phases of a zero-padded plane, so
 * that a whole plane is one run.) Stride 2 along a row makes the generic run's layout
 * copy every input row into two column phases; here the kernel splits each row's even
 * and odd columns in registers instead, once for the row's three taps. Taps are added to
 * the bias in order 3r + c, as by the generic run. Reads row[r][0 .. 2n + 2) (the last
 * float unused; nothing when n = 0), writes exactly out[0..n); out overlaps no row. No
 * alignment required; params is never NULL. Pure, thread-safe.
 */
typedef void (*ember_f32_dwconv_3x3s2_fn)(size_t n, const float *const *row, const float *w,
                                          float bias, float *out,
                                          const ember_f32_dwconv_params *params);

/* The 2-d geometry of a depthwise convolution's planes, for the blocked kernel. */
typedef struct ember_f32_dwconv_geometry {
    size_t in_h, in_w, out_h, out_w;
    size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
    size_t pad_top, pad_left; /* the bottom and right padding follow from the output size */
} ember_f32_dwconv_geometry;

/* Channels per blocked call: the block of the scalar, AVX2 and NEON kernels, the most of
 * any (AVX-512's, a vector of 16), and taps per channel, at most. */
#define EMBER_F32_DWCONV_BLOCK 8
#define EMBER_F32_DWCONV_MAX_BLOCK 16
#define EMBER_F32_DWCONV_MAX_TAPS 64

/* The zero-padded input block's rows and columns: every row and column a tap reads. */
static inline size_t ember_f32_dwconv_padded(size_t in, size_t pad, size_t out, size_t kernel,
                                             size_t stride, size_t dilation)
{
    const size_t reach = (out - 1) * stride + (kernel - 1) * dilation + 1;
    return in + pad > reach ? in + pad : reach;
}

/* The padded block's width, in pixels. */
static inline size_t ember_f32_dwconv_block_width(const ember_f32_dwconv_geometry *g)
{
    return ember_f32_dwconv_padded(g->in_w, g->pad_left, g->out_w, g->kernel_w, g->stride_w,
                                   g->dilation_w);
}

/* Floats of the scratch of a blocked kernel of `block` channels (out_h, out_w ≥ 1): the
 * padded input block (its first ember_f32_dwconv_padding_floats), the output block, the
 * weights, the bias. */
static inline size_t ember_f32_dwconv_padding_floats(const ember_f32_dwconv_geometry *g,
                                                     size_t block)
{
    return ember_f32_dwconv_padded(g->in_h, g->pad_top, g->out_h, g->kernel_h, g->stride_h,
                                   g->dilation_h) *
           ember_f32_dwconv_block_width(g) * block;
}

static inline size_t ember_f32_dwconv_blocked_scratch(const ember_f32_dwconv_geometry *g,
                                                      size_t block)
{
    return ember_f32_dwconv_padding_floats(g, block) +
           (g->out_h * g->out_w + g->kernel_h * g->kernel_w + 1) * block;
}

/* A blocked kernel's operands: the block's `block` planes (lanes past
 * `channels` repeat the last channel), the weights as [tap][channel of the block], the
 * biases, and each tap's offset from an output's first input pixel, in floats of the
 * padded block (`width` pixels wide, `pixel` floats a pixel). */
static inline void ember_f32_dwconv_block_operands(const ember_f32_dwconv_geometry *g,
                                                   size_t channels, const float *in,
                                                   size_t in_stride, const float *w,
                                                   const float *bias, size_t width,
                                                   size_t block, size_t pixel,
                                                   const float **plane,
                                                   float *weights, float *biases,
                                                   ptrdiff_t *offset)
{
    const size_t taps = g->kernel_h * g->kernel_w;
    for (size_t c = 0; c < block; c++) {
        const size_t from = c < channels ? c : channels - 1;
        plane[c] = in + from * in_stride;
        for (size_t t = 0; t < taps; t++)
            weights[t * block + c] = w[from * taps + t];
        biases[c] = bias[from];
    }
    for (size_t i = 0, t = 0; i < g->kernel_h; i++)
        for (size_t j = 0; j < g->kernel_w; j++, t++)
            offset[t] = (ptrdiff_t)((i * g->dilation_h * width + j * g->dilation_w) * pixel);
}

/* A blocked kernel's outputs in raster order (across rows), as where each one's first
 * input pixel lies in the padded block, in floats: `pixel` floats a pixel, the block
 * `width` pixels wide. ember_f32_dwconv_walk_next gives the next `count` (the outputs
 * past the last repeat the last one's). */
typedef struct ember_f32_dwconv_walk {
    size_t left, column, x;              /* outputs after the current one; its column, place */
    size_t out_w, column_step, row_skip; /* floats between outputs; more at a row's end */
} ember_f32_dwconv_walk;

static inline ember_f32_dwconv_walk ember_f32_dwconv_walk_of(const ember_f32_dwconv_geometry *g,
                                                              size_t width, size_t pixel)
{
    const size_t column_step = g->stride_w * pixel;
    return (ember_f32_dwconv_walk){g->out_h * g->out_w - 1, 0, 0, g->out_w, column_step,
                                   g->stride_h * width * pixel - g->out_w * column_step};
}

static inline void ember_f32_dwconv_walk_next(ember_f32_dwconv_walk *w, size_t count,
                                              size_t *at)
{
    for (size_t k = 0; k < count; k++) {
        at[k] = w->x;
        if (w->left > 0) { /* step to the next output, past the row's end */
            w->left--;
            w->x += w->column_step;
            if (++w->column == w->out_w) {
                w->column = 0;
                w->x += w->row_skip;
            }
        }
    }
}

/*
 * `channels` (1 .. the kernel's block) planes of a depthwise convolution at once:
 * channel c's input plane at in + c·in_stride (in_h × in_w floats), its taps at
 * w + c·taps (taps = kernel_h·kernel_w, row-major), its bias bias[c], its output plane at
 * out + c·out_stride (out_h × out_w):
 *
 *   out_c[r][o] = clamp(bias[c] + Σ_{i,j} w_c[i·kernel_w + j] · x_c(ih, iw)),
 *   ih = r·stride_h + i·dilation_h − pad_top,  iw = o·stride_w + j·dilation_w − pad_left
 *
 * x_c 0 outside the input, as ONNX pads (a non-finite weight times the padding is NaN).
 * Taps are added to the bias in order. Vector kernels transpose the planes into scratch
 * with the channels innermost (a pixel's channels one vector), zero-padded, so that
 * each tap of each output is one multiply-add for the whole block, at a fixed offset: no
 * edge, stride or narrow-row case, and the rows' ends cost nothing (NCHW planes of a
 * few pixels a row are mostly edges). scratch holds ember_f32_dwconv_blocked_scratch
 * floats (of the kernel's block), its first ember_f32_dwconv_padding_floats zero on the
 * first call for a geometry (the kernel writes only the input's pixels there: zero them
 * once per conv, not per call); 32-byte aligned. Reads only the planes' floats, writes only the output
 * planes' and scratch; out overlaps no input. kernel_h·kernel_w ≤
 * EMBER_F32_DWCONV_MAX_TAPS, all sizes ≥ 1. Pure but for scratch, thread-safe.
 */
typedef void (*ember_f32_dwconv_blocked_fn)(const ember_f32_dwconv_geometry *g, size_t channels,
                                            const float *in, size_t in_stride, const float *w,
                                            const float *bias, float *out, size_t out_stride,
                                            const ember_f32_dwconv_params *params,
                                            float *scratch);

/*
 * Whole planes of a 3×3 stride-2 depthwise convolution padded by one column on the left
 * (MobileNets' downsampling: g->kernel 3×3, stride 2, dilation 1, pad_left 1, any
 * pad_top), read and written in place: the blocked kernel's definition, arguments and
 * guarantees for that geometry, any channel count and plane size; scratch holds g->in_w
 * zeros, read as the rows above and below the plane, never written. Where a plane's rows
 * are too narrow for one 3×3 stride-2 run a row to pay, it spares the copy of each plane
 * into row phases; where they are wide, the run's call and the two ends computed apart.
 */
typedef ember_f32_dwconv_blocked_fn ember_f32_dwconv_plane_fn;

typedef struct ember_f32_dwconv_kernel {
    const char *name; /* "f32_dwconv__avx2_fma" */
    ember_isa isa;
    ember_f32_dwconv_fn fn;
    ember_f32_dwconv_3x3s2_fn fn_3x3s2;
    ember_f32_dwconv_blocked_fn blocked; /* NULL: this ISA runs every plane through fn */
    ember_f32_dwconv_plane_fn plane_3x3s2; /* NULL: through fn_3x3s2 */
    size_t block; /* the blocked kernel's channels a call, at most */
} ember_f32_dwconv_kernel;

/* X(isa_suffix, isa, blocked, plane_3x3s2, block): each entry is
 * ember_f32_dwconv__<isa_suffix> and ember_f32_dwconv_3x3s2__<isa_suffix>, in the file
 * f32_dwconv__<isa_suffix>.c, its blocked and whole-plane kernels (declared below) or
 * NULL, and the blocked kernel's channels a call (a block's channels are one vector on
 * x86; two on NEON). The NEON ones have a blocked kernel and no whole-plane one; the
 * scalar one's blocked kernel is the reference of all. */
#define EMBER_F32_DWCONV_KERNELS_GENERIC(X)                                                \
    X(scalar, EMBER_ISA_SCALAR, ember_f32_dwconv_blocked__scalar, NULL,                    \
      EMBER_F32_DWCONV_BLOCK)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_DWCONV_KERNELS(X)                                                        \
    EMBER_F32_DWCONV_KERNELS_GENERIC(X)                                                    \
    X(avx2_fma, EMBER_ISA_AVX2_FMA, ember_f32_dwconv_blocked__avx2_fma,                     \
      ember_f32_dwconv_plane_3x3s2__avx2_fma, EMBER_F32_DWCONV_BLOCK)                      \
    X(avx512f, EMBER_ISA_AVX512F, ember_f32_dwconv_blocked__avx512f,                        \
      ember_f32_dwconv_plane_3x3s2__avx512f, EMBER_F32_DWCONV_MAX_BLOCK)
#elif defined(__aarch64__)
#define EMBER_F32_DWCONV_KERNELS(X)                                                        \
    EMBER_F32_DWCONV_KERNELS_GENERIC(X)                                                    \
    X(neon_aarch64, EMBER_ISA_NEON_AARCH64, ember_f32_dwconv_blocked__neon_aarch64, NULL,     \
      EMBER_F32_DWCONV_BLOCK)
#elif defined(__arm__) && defined(__ARM_NEON)
#define EMBER_F32_DWCONV_KERNELS(X)                                                        \
    EMBER_F32_DWCONV_KERNELS_GENERIC(X)                                                    \
    X(neon_armv7, EMBER_ISA_NEON_ARMV7, ember_f32_dwconv_blocked__neon_armv7, NULL,         \
      EMBER_F32_DWCONV_BLOCK)
#else
#define EMBER_F32_DWCONV_KERNELS(X) EMBER_F32_DWCONV_KERNELS_GENERIC(X)
#endif

/* A blocked or whole-plane kernel (ember_f32_dwconv_blocked_fn) of this name. */
#define EMBER_DECLARE_F32_DWCONV_PLANES(name)                                              \
    void name(const ember_f32_dwconv_geometry *g, size_t channels, const float *in,        \
              size_t in_stride, const float *w, const float *bias, float *out,             \
              size_t out_stride, const ember_f32_dwconv_params *params, float *scratch);
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_blocked__scalar)
#if defined(__x86_64__) || defined(_M_X64)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_blocked__avx2_fma)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_blocked__avx512f)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_plane_3x3s2__avx2_fma)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_plane_3x3s2__avx512f)
#elif defined(__aarch64__)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_blocked__neon_aarch64)
#elif defined(__arm__) && defined(__ARM_NEON)
EMBER_DECLARE_F32_DWCONV_PLANES(ember_f32_dwconv_blocked__neon_armv7)
#endif
#undef EMBER_DECLARE_F32_DWCONV_PLANES

#define EMBER_DECLARE_F32_DWCONV(suffix, isa, blocked, plane, block)                       \
    void ember_f32_dwconv__##suffix(size_t n, size_t taps, const float *const *src,        \
                                    const float *w, float bias, float *out,                \
                                    const ember_f32_dwconv_params *params);                \
    void ember_f32_dwconv_3x3s2__##suffix(size_t n, const float *const *row,              \
                                          const float *w, float bias, float *out,          \
                                          const ember_f32_dwconv_params *params);
EMBER_F32_DWCONV_KERNELS(EMBER_DECLARE_F32_DWCONV)
#undef EMBER_DECLARE_F32_DWCONV

extern const ember_f32_dwconv_kernel ember_f32_dwconv_kernels[];
extern const size_t ember_f32_dwconv_kernel_count;

#endif /* EMBER_KERNELS_F32_DWCONV_H */
