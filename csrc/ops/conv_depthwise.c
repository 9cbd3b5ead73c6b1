/*
 * Depthwise convolutions for conv.c (one input channel per group): direct, not through the
 * GEMM, where they would be a 1-row product wasting all but one row of every tile.
 *
 * 1-d and 2-d ones of any kernel size, dilation and stride up to
 * EMBER_CONV_MAX_PHASE_STRIDE go through the f32_dwconv kernel. Each input plane is laid
 * out as the implicit GEMM lays out a band (conv_implicit.c's ember_conv_lay_out_bands):
 * zero-padded and split into stride phases band_width = out_w + reach wide, so that every
 * tap reads output row r's inputs as consecutive floats from its phase, at its offset
 * plus r·band_width — stride 2 costs no shuffles, padding no border cases. A plane is one
 * kernel run of (out_h − 1)·band_width + out_w outputs, the columns past out_w computed
 * and dropped in the copy out: one call keeps the kernel's accumulators busy where a
 * 7-wide row would not, and pays its set-up once (x86, 3×3 kernel alone, µs per plane,
 * row by row -> whole: 56×56 2.8 -> 1.3, 14×14 0.5 -> 0.1, 7×7 0.16 -> 0.05).
 * 3×3 stride-2 convs (MobileNets' downsampling) go through the family's 3×3 stride-2 run
 * instead, which splits each row's even and odd columns in registers: their plane is laid
 * out in the two row phases only (as a stride-(2, 1) band twice the output width), so the
 * fill is a plain copy of each input row, where column phases would deinterleave every
 * row in memory (96 channels 112² -> 56², column phases -> this: x86 0.63 -> 0.57 ms,
 * aarch64 5.25M -> 4.59M instructions, armv7 11.8M -> 6.5M).
 * 3×3 stride-1 convs padded by 1 (MobileNets' and ShuffleNets' other depthwise convs),
 * 14 wide or more, are not laid out at all: the kernel's runs read the input plane and
 * write the output plane in place (same_plane), so that neither the plane's copy in nor
 * the copy out is paid (x86, in the model: the laid-out planes' copies were 12% of
 * MobileNetV2's time; 192 channels at 28×28 0.85x the time, 144 at 56×56 0.74x); so
 * are 3×3 stride-2 convs whose rows have 48 outputs or more, a stride-2 run a row
 * (stride2_plane: 96 channels 112² -> 56² 0.87x). Small planes, and planes of 5×5 and
 * larger kernels up to 32×32 outputs, go through the ISA's blocked kernel (x86's and
 * NEON's: kernels.h; blocked_pays says which, by ISA); larger 3×3 stride-2 planes padded
 * by 1 on the left through its whole-plane kernel, where it has one: in place at any
 * width, without a call per row (x86, against the paths above: 96 channels 112² -> 56²
 * 0.83x, 64 at 48² -> 24² 0.72x, 64 at 24² -> 12² 0.5x the node's time;
 * MobileNetV3 0.92x, MobileNetV2 0.97-0.99x).
 * Other convs (3-d, larger strides) accumulate one tap at a time over the output range
 * that tap keeps inside the input.
 */
#include <string.h>

#include "core/shape.h"
#include "ops/conv.h"

/* One output plane of a depthwise conv: out = clamp(bias + Σ_taps w·in). Rows are the
 * output positions sharing all coordinates but the last. */
static void depthwise_plane(const conv_prepared *p, const float *in, const float *taps,
                            float bias, float *out)
{
    const int last = p->spatial - 1;
    const int64_t row_length = p->out_dims[last], rows = p->out_pixels / row_length;
    const int64_t s = p->stride[last];
    int64_t kpos[MAX_SPATIAL] = {0};
    for (int64_t j = 0; j < p->out_pixels; j++)
        out[j] = bias;
    for (int64_t t = 0; t < p->depth; t++) {
        const float w = taps[t];
        const int64_t offset = kpos[last] * p->dilation[last] - p->pad_before[last];
        int64_t lo, hi;
        ember_conv_valid_range(offset, s, p->in_dims[last], row_length, &lo, &hi);
        int64_t coord[MAX_SPATIAL] = {0};
        for (int64_t r = 0; r < rows && lo <= hi; r++) {
            int inside = 1;
            int64_t base = offset;
            for (int d = 0; d < last; d++) {
                const int64_t i = coord[d] * p->stride[d] + kpos[d] * p->dilation[d] -
                                  p->pad_before[d];
                inside &= i >= 0 && i < p->in_dims[d];
                base += i * p->in_strides[d];
            }
            /* Pointers start at the first valid position: `in + base` alone may point
             * before the plane, which C does not allow even unread. */
            const int64_t n = hi - lo + 1;
            float *restrict dst = out + r * row_length + lo;
            const float *restrict src = inside ? in + base + lo * s : in;
            if (inside && s == 1) {
                for (int64_t o = 0; o < n; o++)
                    dst[o] += w * src[o];
            } else if (inside) {
                for (int64_t o = 0; o < n; o++)
                    dst[o] += w * src[o * s];
            }
            for (int d = last - 1; d >= 0; d--) { /* next row */
                if (++coord[d] < p->out_dims[d])
                    break;
                coord[d] = 0;
            }
        }
        for (int d = last; d >= 0; d--) { /* next tap */
            if (++kpos[d] < p->kernel_dims[d])
                break;
            kpos[d] = 0;
        }
    }
    for (int64_t j = 0; j < p->out_pixels; j++) {
        const float v = out[j] < p->min ? p->min : out[j];
        out[j] = v > p->max ? p->max : v;
    }
}

/* A 1-d conv as a 2-d one of one row, so that one layout serves both. */
static void as_one_row(conv_prepared *p)
{
    p->in_dims[1] = p->in_dims[0];
    p->out_dims[1] = p->out_dims[0];
    p->kernel_dims[1] = p->kernel_dims[0];
    p->stride[1] = p->stride[0];
    p->dilation[1] = p->dilation[0];
    p->pad_before[1] = p->pad_before[0];
    p->in_dims[0] = p->out_dims[0] = p->kernel_dims[0] = p->stride[0] = p->dilation[0] = 1;
    p->pad_before[0] = 0;
    p->spatial = 2;
    ember_shape_strides(p->in_dims, p->spatial, p->in_strides);
}

/* Floats per row of the wide output: the phase width, or half of it for the 3×3 stride-2
 * run (two input columns per output). */
static int64_t wide_pitch(const conv_prepared *p)
{
    return p->dw_3x3s2 ? p->band_width / 2 : p->band_width;
}

static size_t round_up_64(size_t bytes)
{
    return (bytes + 63) / 64 * 64;
}

static int is_3x3_stride_2(const conv_prepared *p)
{
    return p->spatial == 2 && p->kernel_dims[0] == 3 && p->kernel_dims[1] == 3 &&
           p->stride[0] == 2 && p->stride[1] == 2 && p->dilation[0] == 1 && p->dilation[1] == 1;
}

/* 3×3, stride 1, padded by 1 on every side (the output plane is the input's size), rows
 * of 14 or more: read in place (same_plane). Narrower, its two columns and two rows
 * computed apart are most of the plane, and the laid-out plane's one run costs less
 * (x86, 960 channels at 7×7: in place 1.07–1.10x the time). */
static int is_3x3_same_shaped(const conv_prepared *p)
{
    for (int d = 0; d < 2; d++)
        if (p->kernel_dims[d] != 3 || p->stride[d] != 1 || p->dilation[d] != 1 ||
            p->pad_before[d] != 1 || p->out_dims[d] != p->in_dims[d])
            return 0;
    return 1;
}

/* Scratch of same_plane's side columns: four gathered columns of h + 2 (a zero above and
 * below each) and the two sides' h outputs. */
static size_t side_columns_floats(const conv_prepared *p)
{
    return 4 * ((size_t)p->in_dims[0] + 2) + 2 * (size_t)p->in_dims[0];
}

static int is_3x3_same(const conv_prepared *p)
{
    return is_3x3_same_shaped(p) && p->in_dims[0] >= 2 && p->in_dims[1] >= 14;
}

/* The blocked kernels' description of q's planes (2-d), into p. */
static void set_geometry(conv_prepared *p, const conv_prepared *q)
{
    p->dw_geometry = (ember_f32_dwconv_geometry){
        (size_t)q->in_dims[0],     (size_t)q->in_dims[1],     (size_t)q->out_dims[0],
        (size_t)q->out_dims[1],    (size_t)q->kernel_dims[0], (size_t)q->kernel_dims[1],
        (size_t)q->stride[0],      (size_t)q->stride[1],      (size_t)q->dilation[0],
        (size_t)q->dilation[1],    (size_t)q->pad_before[0],  (size_t)q->pad_before[1]};
}

/* Whether the blocked kernel's planes pay against the other paths (the kernel's cost
 * grows with the input pixels it transposes, theirs with the output rows they run): up
 * to 64 outputs always; 2-d, 3×3 planes padded to their size up to same_3x3 outputs, 3×3
 * stride-2 ones up to stride2_3x3, and planes of 25 taps or more up to wide (wide_s1 at
 * stride 1). A 1-d conv's row is one long run already (x86: 256 channels of 100, 3 taps
 * dilated by 4: blocked 1.27x; 31 taps over 1000: 0.87x) and keeps the bound of 64. */
#define MAX_BLOCKED_PIXELS 64
#define MIN_BLOCKED_WIDE_TAPS 25

typedef struct blocked_bounds {
    int64_t same_3x3, stride2_3x3, wide_s1, wide;
} blocked_bounds;

/* x86 AVX2, times: 3×3 same against in place, 128 channels at 12×12 0.66x, 384 at 14×14
 * 0.92-0.96x, but 16×16 1.04x, 28×28 1.35x; 3×3 stride 2 against the whole-plane kernel,
 * 64 channels 24² -> 12² 0.85x, 576 at 14² -> 7² 0.66x, but 192 at 28² -> 14² 1.03x; 25
 * taps and more against the laid-out plane's run, 5×5 240 channels at 14×14 0.62x, 96 at
 * 24² -> 12² 0.44x, 72 at 48² -> 24² 0.68x, 120 at 28×28 0.83x. */
static const blocked_bounds x86_bounds = {196, 144, 1024, 1024};
/* NEON, instructions (the blocked kernel's / the other path's), aarch64 on an emulated
 * Cortex-A76: 3×3 same 960 channels at 7×7 0.70x, 64 at 12×12 0.94x, but 576 at 14×14
 * 1.20x; 3×3 stride 2 576 at 14² -> 7² 0.62x, 64 at 24² -> 12² 0.79x, 192 at 28² -> 14²
 * 0.84x, but 144 at 56² -> 28² 1.11x; 5×5 672 at 7×7 0.75x, 240 at 14×14 1.00x, but 120
 * at 28×28 1.25x and 32 at 32×32 1.29x; 5×5 stride 2 96 at 24² -> 12² 0.65x, 72 at
 * 48² -> 24² 0.91x (the laid-out plane's copy into column phases). ARMv7 (Cortex-A15),
 * whose scalar loops around the runs cost more: the same 3×3 same bound (576 at 14×14
 * 1.28x), but 3×3 stride 2 144 at 56² -> 28² 0.97x and 5×5 120 at 28×28 0.76x, 32 at
 * 32×32 0.79x. */
static const blocked_bounds aarch64_bounds = {144, 196, 196, 1024};
static const blocked_bounds armv7_bounds = {144, 784, 1024, 1024};

static int blocked_pays(const conv_prepared *p, const ember_f32_dwconv_kernel *kernel)
{
    const blocked_bounds *most = kernel->isa == EMBER_ISA_NEON_AARCH64 ? &aarch64_bounds
                                 : kernel->isa == EMBER_ISA_NEON_ARMV7 ? &armv7_bounds
                                                                       : &x86_bounds;
    if (p->out_pixels <= MAX_BLOCKED_PIXELS)
        return 1;
    if (p->spatial != 2)
        return 0;
    if (is_3x3_same_shaped(p))
        return p->out_pixels <= most->same_3x3;
    if (is_3x3_stride_2(p))
        return p->out_pixels <= most->stride2_3x3;
    const int stride_1 = p->stride[0] == 1 && p->stride[1] == 1;
    return p->depth >= MIN_BLOCKED_WIDE_TAPS &&
           p->out_pixels <= (stride_1 ? most->wide_s1 : most->wide);
}

/* A 1-d or 2-d conv without a channel multiplier whose planes pay (blocked_pays): the
 * ISA's blocked kernel, if it has one, with its scratch in *scratch_bytes. */
static int takes_blocked_kernel(conv_prepared *p, const ember_f32_dwconv_kernel *kernel,
                                size_t *scratch_bytes)
{
    if (kernel->blocked == NULL || p->group_out != 1 ||
        p->depth > EMBER_F32_DWCONV_MAX_TAPS || p->out_pixels < 1 || !blocked_pays(p, kernel))
        return 0;
    conv_prepared q = *p;
    if (q.spatial == 1)
        as_one_row(&q);
    for (int d = 0; d < 2; d++)
        if (q.pad_before[d] < 0)
            return 0;
    p->dw_blocked = kernel->blocked;
    p->dw_block = kernel->block;
    set_geometry(p, &q);
    *scratch_bytes =
        ember_f32_dwconv_blocked_scratch(&p->dw_geometry, p->dw_block) * sizeof(float);
    return 1;
}

/* A 3×3 stride-2 conv padded by 1 on the left, without a channel multiplier: the ISA's
 * whole-plane kernel, if it has one (planes read and written in place; scratch: a zero
 * row). It serves the wide planes too: its rows are stride-2 runs without a call each
 * and without their two ends computed apart (see the top of the file). */
static int takes_plane_kernel(conv_prepared *p, const ember_f32_dwconv_kernel *kernel,
                              size_t *scratch_bytes)
{
    if (kernel->plane_3x3s2 == NULL || p->group_out != 1 || !is_3x3_stride_2(p) ||
        p->pad_before[0] < 0 || p->pad_before[1] != 1)
        return 0;
    p->dw_blocked = kernel->plane_3x3s2;
    p->dw_block = EMBER_F32_DWCONV_BLOCK; /* any count: the block the op hands it */
    p->dw_whole_planes = 1;
    set_geometry(p, p);
    *scratch_bytes = round_up_64((size_t)p->in_dims[1] * sizeof(float)); /* a zero row */
    return 1;
}

/* 3×3 stride 2 padded by at most 1 on top and 1 on the left, rows of 48 outputs or more
 * whose last output's taps end inside the row or one past it: read in place
 * (stride2_plane). Narrower, a run a row costs more than the laid-out plane's one run
 * (x86, 144 channels 56×56 -> 28×28: 1.2x the time). */
static int is_wide_3x3_stride_2(const conv_prepared *p)
{
    return is_3x3_stride_2(p) && p->pad_before[0] >= 0 && p->pad_before[0] <= 1 &&
           p->pad_before[1] == 1 && p->out_dims[1] >= 48 &&
           2 * p->out_dims[1] - 1 <= p->in_dims[1];
}

const char *ember_conv_depthwise_form(const conv_prepared *p)
{
    if (p->dw_whole_planes)
        return "depthwise_planes_3x3s2";
    if (p->dw_blocked != NULL)
        return "depthwise_blocked";
    if (p->dw_in_place == IN_PLACE_SAME)
        return "depthwise_in_place";
    if (p->dw_in_place == IN_PLACE_STRIDE_2)
        return "depthwise_rows_3x3s2";
    if (p->dw_3x3s2 != NULL)
        return "depthwise_phases_3x3s2";
    return p->dw_run != NULL ? "depthwise_phases" : "depthwise_loops";
}

/* Scratch: [the plane's phases][the wide output][the taps' pointers]; read in place, a
 * zero row (stride 2) or the side columns (same_side_columns); the blocked kernel's own. */
ember_status ember_conv_depthwise_prepare(conv_prepared *p, const ember_f32_dwconv_kernel *kernel,
                                          const ember_node *node, size_t *scratch_bytes)
{
    p->dw_run = NULL;
    p->dw_3x3s2 = NULL;
    p->dw_in_place = 0;
    p->dw_blocked = NULL;
    p->dw_whole_planes = 0;
    *scratch_bytes = 0;
    if (p->spatial > 2 || p->depth < 1 || takes_blocked_kernel(p, kernel, scratch_bytes) ||
        takes_plane_kernel(p, kernel, scratch_bytes))
        return EMBER_OK;
    if (p->spatial == 2 && is_3x3_same(p)) {
        p->dw_run = kernel->fn;
        p->dw_in_place = IN_PLACE_SAME;
        *scratch_bytes = round_up_64(side_columns_floats(p) * sizeof(float));
        return EMBER_OK;
    }
    if (p->spatial == 2 && is_wide_3x3_stride_2(p)) {
        p->dw_3x3s2 = kernel->fn_3x3s2;
        p->dw_in_place = IN_PLACE_STRIDE_2;
        *scratch_bytes = round_up_64((size_t)p->in_dims[1] * sizeof(float)); /* a zero row */
        return EMBER_OK;
    }
    for (int d = 0; d < p->spatial; d++)
        if (p->stride[d] > EMBER_CONV_MAX_PHASE_STRIDE || p->pad_before[d] < 0)
            return EMBER_OK;
    conv_prepared q = *p;
    if (q.spatial == 1)
        as_one_row(&q);
    const int rows_only = is_3x3_stride_2(&q);
    const int64_t out_w = q.out_dims[1];
    if (rows_only) { /* row phases of width 2·(out_w + 1): output o reads 2o + column */
        q.stride[1] = 1;
        q.out_dims[1] = 2 * out_w;
    }
    const int laid_out = ember_conv_lay_out_bands(&q, q.out_dims[0]);
    if (rows_only) {
        q.stride[1] = 2;
        q.out_dims[1] = out_w;
    }
    if (laid_out < 0)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    if (laid_out == 0)
        return EMBER_OK;
    *p = q;
    p->dw_run = kernel->fn;
    p->dw_3x3s2 = rows_only ? kernel->fn_3x3s2 : NULL;
    /* one plane at a time */
    p->wide_floats = (size_t)(p->out_dims[0] * wide_pitch(p));
    *scratch_bytes = round_up_64(p->band_floats * sizeof(float)) +
                     round_up_64(p->wide_floats * sizeof(float)) +
                     (size_t)p->depth * sizeof(const float *);
    return EMBER_OK;
}

/* The parts of the plane's phases an input plane fills: each input row inside the phase
 * rows, into each column phase read (one after the other while the row is in L1). They
 * are the same for every plane, so the rest, the padding, stays the zeros the run wrote
 * once. */
static void fill_inside(const conv_prepared *p, const float *in, float *band)
{
    const int64_t sh = p->stride[0], sw = p->dw_3x3s2 ? 1 : p->stride[1]; /* column phases */
    const int64_t width = p->band_width;
    const int64_t rows = p->phase_floats / width, in_w = p->in_dims[1];
    int64_t q_lo[EMBER_CONV_MAX_PHASE_STRIDE], q_hi[EMBER_CONV_MAX_PHASE_STRIDE];
    for (int64_t b = 0; b < sw; b++)
        ember_conv_valid_range(b - p->pad_before[1], sw, in_w, width, &q_lo[b], &q_hi[b]);
    /* input row ih is row r of row phase a: ih + pad_top = r·sh + a (kept by steps: a
     * division per row cost more than the copy of a short row) */
    int64_t a = p->pad_before[0] % sh, r = p->pad_before[0] / sh;
    for (int64_t ih = 0; ih < p->in_dims[0] && r < rows; ih++, in += in_w) {
        for (int64_t b = 0; b < sw; b++) {
            if (!p->phase_used[a * sw + b] || q_lo[b] > q_hi[b])
                continue;
            float *dst = band + (a * sw + b) * p->phase_floats + r * width + q_lo[b];
            ember_conv_copy_strided(dst, in + q_lo[b] * sw + b - p->pad_before[1],
                                    q_hi[b] - q_lo[b] + 1, sw);
        }
        if (++a == sh) {
            a = 0;
            r++;
        }
    }
}

/* One input channel's planes through the f32_dwconv kernel: its phases are laid out
 * once for its group_out output channels. */
static void direct_channel(const conv_prepared *p, const float *in, const float *filter,
                           const float *bias, float *out, float *scratch)
{
    const int64_t out_h = p->out_dims[0], out_w = p->out_dims[1], pitch = wide_pitch(p);
    float *band = scratch;
    float *wide = (float *)((char *)band + round_up_64(p->band_floats * sizeof(float)));
    const float **src =
        (const float **)((char *)wide + round_up_64(p->wide_floats * sizeof(float)));
    const size_t taps = (size_t)p->depth;
    const ember_f32_dwconv_params params = {p->min, p->max};
    fill_inside(p, in, band);
    for (size_t t = 0; t < taps; t++)
        src[t] = band + p->b_offsets[t];
    const size_t n = (size_t)((out_h - 1) * pitch + out_w);
    for (int64_t o = 0; o < p->group_out; o++, filter += p->depth, out += p->out_pixels) {
        if (p->dw_3x3s2) /* the first tap of each kernel row */
            p->dw_3x3s2(n, (const float *const[]){src[0], src[3], src[6]}, filter, bias[o],
                        wide, &params);
        else
            p->dw_run(n, taps, src, filter, bias[o], wide, &params);
        for (int64_t r = 0; r < out_h; r++)
            ember_conv_copy_floats(out + r * out_w, wide + r * pitch, out_w);
    }
}

/*
 * Columns 0 and width − 1 of every row (the only outputs outside the runs), as one kernel
 * run down each side: columns 0, 1, width − 2 and width − 1 are gathered into columns
 * with a zero above and below, and output r of the left side is the six taps of kernel
 * columns 1 and 2 at rows r − 1 .. r + 1 of its two columns, in the kernel's order (the
 * right side's, kernel columns 0 and 1). The zero rows stand for the padding as in the
 * laid-out plane's run, and each output rounds as the runs' do. A scalar loop a row,
 * two outputs of six taps, was most of the conv's own instructions on 14- and 28-wide
 * planes (emulated Cortex-A76 / A15, MobileNetV2: 124.3 -> 124.0M / 178.1 -> 177.2M).
 */
static void same_side_columns(const conv_prepared *p, const float *in, const float *w,
                              float bias, float *out, float *scratch)
{
    const size_t h = (size_t)p->in_dims[0], width = (size_t)p->in_dims[1], stride = h + 2;
    const ember_f32_dwconv_params params = {p->min, p->max};
    float *col = scratch, *left = scratch + 4 * stride, *right = left + h;
    for (size_t c = 0; c < 4; c++)
        col[c * stride] = col[c * stride + h + 1] = 0.0f;
    const float *x = in;
    for (size_t r = 1; r <= h; r++, x += width) {
        col[r] = x[0];
        col[stride + r] = x[1];
        col[2 * stride + r] = x[width - 2];
        col[3 * stride + r] = x[width - 1];
    }
    const float *side[2][6];
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < 3; i++) {
            side[s][2 * i] = col + 2 * s * stride + i;
            side[s][2 * i + 1] = col + (2 * s + 1) * stride + i;
        }
    const float left_w[6] = {w[1], w[2], w[4], w[5], w[7], w[8]};
    const float right_w[6] = {w[0], w[1], w[3], w[4], w[6], w[7]};
    p->dw_run(h, 6, side[0], left_w, bias, left, &params);
    p->dw_run(h, 6, side[1], right_w, bias, right, &params);
    for (size_t r = 0; r < h; r++, out += width) {
        out[0] = left[r];
        out[width - 1] = right[r];
    }
}

/*
 * A 3×3 "same" plane read and written in place, no layout: output m = r·width + c reads
 * tap (i, j) at in[m + (i − 1)·width + j − 1], the same offset for every output, so the
 * rows between the first and the last are one kernel run over the plane from (1, 1) to
 * (h − 2, width − 2), its reads all inside the plane. The run's outputs in columns 0 and
 * width − 1 read the neighbouring row's end or start for the padding: those are computed
 * again, from their taps inside, as are the first and last rows' ends (same_side_columns);
 * the first and last rows between their ends are runs of the six taps of their two
 * kernel rows.
 */
static void same_plane(const conv_prepared *p, const float *in, const float *w, float bias,
                       float *out, float *scratch)
{
    const int64_t h = p->in_dims[0], width = p->in_dims[1];
    const ember_f32_dwconv_params params = {p->min, p->max};
    const float *src[9], *last_row[6];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            src[3 * i + j] = in + i * width + j;
    for (int t = 0; t < 6; t++)
        last_row[t] = src[t] + (h - 2) * width;
    if (h > 2)
        p->dw_run((size_t)((h - 2) * width - 2), 9, src, w, bias, out + width + 1, &params);
    p->dw_run((size_t)(width - 2), 6, src, w + 3, bias, out + 1, &params);
    p->dw_run((size_t)(width - 2), 6, last_row, w, bias, out + (h - 1) * width + 1, &params);
    same_side_columns(p, in, w, bias, out, scratch);
}

/* Outputs 0 and out_w − 1 of an output row of a 3×3 stride-2 conv padded by 1 on the
 * left, from its three input rows (a zero row outside the input): their taps inside the
 * row, in order (straight-line: a loop with a test per tap cost a quarter of the run). */
static void stride2_ends(const conv_prepared *p, const float *const *row, const float *w,
                         float bias, float *out)
{
    const int64_t out_w = p->out_dims[1], c = 2 * out_w - 3; /* the last output's first tap */
    const int third = c + 2 < p->in_dims[1];
    float first = bias, last = bias;
    for (int i = 0; i < 3; i++) {
        first += w[3 * i + 1] * row[i][0];
        first += w[3 * i + 2] * row[i][1];
        last += w[3 * i] * row[i][c];
        last += w[3 * i + 1] * row[i][c + 1];
        if (third)
            last += w[3 * i + 2] * row[i][c + 2];
    }
    first = first < p->min ? p->min : first;
    last = last < p->min ? p->min : last;
    out[0] = first > p->max ? p->max : first;
    out[out_w - 1] = last > p->max ? p->max : last;
}

/*
 * A wide 3×3 stride-2 plane read and written in place: each output row is the 3×3
 * stride-2 run over its three input rows where they are (a zeroed row for one outside
 * the input), for outputs 1 .. out_w − 2, which read columns 1 .. 2·out_w − 2 (the run
 * reads 2n + 2 floats from column 1): inside the row. Outputs 0 and out_w − 1 are
 * computed from their taps inside.
 */
static void stride2_plane(const conv_prepared *p, const float *in, const float *w, float bias,
                          float *out, const float *zeros)
{
    const int64_t in_h = p->in_dims[0], in_w = p->in_dims[1], out_w = p->out_dims[1];
    const ember_f32_dwconv_params params = {p->min, p->max};
    for (int64_t r = 0; r < p->out_dims[0]; r++, out += out_w) {
        const float *row[3], *from_1[3];
        for (int i = 0; i < 3; i++) {
            const int64_t ih = 2 * r + i - p->pad_before[0];
            row[i] = ih >= 0 && ih < in_h ? in + ih * in_w : zeros;
            from_1[i] = row[i] + 1;
        }
        p->dw_3x3s2((size_t)(out_w - 2), from_1, w, bias, out + 1, &params);
        stride2_ends(p, row, w, bias, out);
    }
}

/* Every image's channels through the blocked or whole-plane kernel, dw_block at a time. */
static void blocked_run(const conv_prepared *p, const float *input, const float *filter,
                        const float *bias, float *output, float *scratch)
{
    const ember_f32_dwconv_params params = {p->min, p->max};
    const size_t zeros = p->dw_whole_planes
                             ? p->dw_geometry.in_w
                             : ember_f32_dwconv_padding_floats(&p->dw_geometry, p->dw_block);
    memset(scratch, 0, zeros * sizeof(float));
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t c = 0; c < p->channels; c += (int64_t)p->dw_block) {
            const int64_t left = p->channels - c, most = (int64_t)p->dw_block;
            const size_t block = (size_t)(left < most ? left : most);
            p->dw_blocked(&p->dw_geometry, block,
                          input + (n * p->channels + c) * p->in_pixels, (size_t)p->in_pixels,
                          filter + c * p->depth, bias + c,
                          output + (n * p->out_channels + c) * p->out_pixels,
                          (size_t)p->out_pixels, &params, scratch);
            ember_conv_hard_swish(p, block, (size_t)p->out_pixels,
                                  output + (n * p->out_channels + c) * p->out_pixels,
                                  (size_t)p->out_pixels * sizeof(float));
        }
}

/* One input channel's group_out output planes, by the path prepare chose. */
static void depthwise_channel(const conv_prepared *p, const float *in, const float *filter,
                              const float *bias, float *out, float *scratch)
{
    if (p->dw_run && !p->dw_in_place) {
        direct_channel(p, in, filter, bias, out, scratch);
        return;
    }
    for (int64_t j = 0; j < p->group_out; j++, filter += p->depth, out += p->out_pixels) {
        if (p->dw_in_place == IN_PLACE_SAME)
            same_plane(p, in, filter, bias[j], out, scratch);
        else if (p->dw_in_place == IN_PLACE_STRIDE_2)
            stride2_plane(p, in, filter, bias[j], out, scratch);
        else
            depthwise_plane(p, in, filter, bias[j], out);
    }
}

void ember_conv_depthwise_run(const conv_prepared *p, const float *input, const float *filter,
                              const float *bias, float *output, float *scratch)
{
    if (p->dw_blocked) {
        blocked_run(p, input, filter, bias, output, scratch);
        return;
    }
    if (p->dw_in_place == IN_PLACE_STRIDE_2) /* the zero row */
        memset(scratch, 0, (size_t)p->in_dims[1] * sizeof(float));
    else if (p->dw_run && !p->dw_in_place) /* the band's padding */
        memset(scratch, 0, p->band_floats * sizeof(float));
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t c = 0; c < p->channels; c++) {
            const int64_t o = c * p->group_out;
            float *out = output + (n * p->out_channels + o) * p->out_pixels;
            depthwise_channel(p, input + (n * p->channels + c) * p->in_pixels,
                              filter + o * p->depth, bias + o, out, scratch);
            ember_conv_hard_swish(p, 1, (size_t)(p->group_out * p->out_pixels), out, 0);
        }
}
