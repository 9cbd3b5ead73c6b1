/*
 * Implicit-GEMM convolution for conv.c: 2-d k×k convs of any stride (not 1×1 unpadded
 * stride 1, which reads its input as B already). No im2col matrix is built: the GEMM's
 * micro-kernel reads each row of B in place (ember_f32_gemm_indirect), from a zero-padded
 * copy of a band of input rows split into stride phases.
 *
 * Why it works. Output pixel (oh, ow) of tap (kh, kw) reads the padded input at row
 * oh·sh + y, column ow·sw + x (y = kh·dh, x = kw·dw). Split the padded input into sh·sw
 * phase planes, phase (a, b) holding rows ≡ a (mod sh) and columns ≡ b (mod sw): the
 * tap then reads phase (y mod sh, x mod sw) at row oh + y / sh, column ow + x / sw. With
 * the phases W wide and the output pixels numbered j = oh·W + ow, tap k reads
 * phase[j + offset_k]: the im2col row of tap k is a phase plane shifted by offset_k, and
 * nr consecutive pixels are nr consecutive floats. W is out_w plus the taps' reach
 * ((kw − 1)·dw / sw); the columns past each row's end are computed and dropped (2 of 58
 * for a 3×3 'same' conv at 56 wide). The GEMM writes this wide output to scratch and its
 * rows are copied out; or, when the rows' tiles are no more than the wide output's (out_w
 * just under a multiple of nr: a stem's 111 or 48 of 16) and no residual is added in the
 * copy, one GEMM a row writes the output in place (x86: SqueezeNet's stem, 3 -> 64 at
 * 111×111, 0.90x the time: with K = 27 the copy was a large share). Stride 1 has one
 * phase: the padded band itself.
 *
 * The copy this costs is one pass over the input band (plus the rows a band repeats)
 * instead of kh·kw passes: a 3×3 conv 128 -> 32 at 56×56 went from 5.1 ms (im2col) to
 * 3.6 ms on x86 (onnxruntime 2.75 ms), at 14×14 0.44 -> 0.25.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"

/* Input band bytes: the rows of every channel one GEMM pass reads, kept near L2. */
#define BAND_BYTES (384 * 1024)
/* The kh − 1 rows each band repeats stay under a quarter of its rows. */
#define MIN_BAND_OVERLAP_SHARE 4
/* The wide output of a band (the GEMM's C before its rows are copied out). */
#define WIDE_BYTES (512 * 1024)

/*
 * Whether the in-place form beats im2col for this conv, by a cost per tap, in
 * multiply-adds. im2col copies every tap's row: COPY per column; in place, the band copies
 * each input value once per phase instead of once per tap, but the GEMM runs over the
 * wide columns (the W − out_w past each row, rounded to whole tiles) and each multiply-add
 * costs a share more (the offset table): so with M rows, N columns (both counted as the
 * kernel multiplies them: whole tiles, the last one narrow where the kernel has a narrow
 * path, ember_conv_tile_columns):
 *
 *   in place pays  ⇔  M·(N_wide·(1 + overhead) − N) < COPY·N·(1 − phases / taps)
 *
 * Fitted to x86 timings (3×3 convs, ms, im2col -> in place): 128 -> 32 at 56×56 5.1 -> 3.6,
 * 64 -> 64 at 56×56 3.37 -> 2.84, 128 -> 128 at 28×28 3.03 -> 2.82, 256 -> 256 at 14×14
 * 2.96 -> 2.94 (even), 64 -> 256 at 13×13 0.63 -> 0.69 (15 of 13 columns wide); a 1×1
 * stride-2 conv saves no copy at all (0.68 -> 0.78 for 256 -> 512); and to aarch64
 * instruction counts (Cortex-A76): 128 -> 128 at 28×28 44.5M -> 44.3M (even), 256 -> 256
 * at 14×14 41.7M -> 46.7M, 128 -> 32 at 56×56 77.3M -> 54.4M. Since im2col builds its rows
 * from a padded band and packs them whole (conv_im2col.c) it copies for a third of the
 * instructions on aarch64, and NEON has its own cost, fitted to Cortex-A76 counts (3×3,
 * im2col vs in place, millions): 128 -> 128 at 28×28 39.2 vs 41.3, 32 -> 128 at 27×27
 * 9.0 vs 10.0, 64 -> 96 at 28×28 14.7 vs 15.7, but 192 -> 64 at 28×28 33.5 vs 31.2 and
 * 128 -> 32 at 56×56 53.9 vs 41.0. x86, refitted after the same im2col change (node
 * times from `ember-run --profile`, medians of 10-16 interleaved rounds, im2col vs in
 * place, ms; the break-even COPY in brackets): 128 -> 32 at 56×56 4.9 vs 6.0 for in
 * place [3.5], 16 -> 64 at 55×55 1.11 vs 1.17 and 64 -> 64 at 56×56 4.6 vs 4.8, even
 * [6.2, 6.5], then im2col ahead: 128 -> 128 at 112×112 60 vs 74 [10.2], 32 -> 128 at
 * 27×27 0.94-1.03 vs 1.10-1.19 [17.6], 64 -> 192 at 56×56 11.2 vs 13.6 [18.9], 128 -> 128
 * at 28×28 3.7-3.9 vs 4.3-4.7 and 96 -> 128 3.1 vs 3.5 [20.2], 256 -> 256 at 56×56 60 vs
 * 68 [25.4]. (The first fit, 32, predates im2col's padded bands and whole-panel packing.)
 */
/* With narrow tiles counted (AVX-512, 96196d5), a 3×3 conv 64 -> 96 at 14×14 (Inception
 * v2) went to im2col, which ran it in 0.85x the time (bench_ab, Cascade Lake): its 196
 * pixels are 6 tiles and a narrow one, its wide output 7 whole tiles. The convs that
 * stay in place there ran slower through im2col: 128 -> 32 at 28×28 1.39x, the 7×7 stem
 * 1.15x, 16 -> 64 at 55×55 1.03x, VGG's 3 -> 64 at 224×224 1.02x. */
#define COPY_COST_X86 8.0
/* Refitted with AVX-512 on a Cascade Lake (node times of `ember-run --profile`, im2col vs
 * in place, medians of 5 alternated runs): the copy weighs more the more taps a window
 * has, COPY + taps / 2 (12.5 for 3×3, 20.5 for 5×5, 32.5 for 7×7). In place now:
 * 3×3 64 -> 64 at 28×28 (Inception v2) 0.76x the time, 5×5 16 -> 48 at 13×13 (Inception
 * v1) 0.78x, AlexNet's 11×11 stride-4 stem 0.78x, ZFNet's 7×7 stride-2 stem 0.87x; still
 * im2col, as measured: 3×3 64 -> 96 at 14×14 (in place 1.34x), 96 -> 128 at 27×27
 * (1.10x), 48 -> 192 and 64 -> 256 at 13×13 (1.30x, 1.51x), the stride-2 3×3 convs of
 * ResNet50 and Inception v2 (1.27-1.80x), ZFNet's 5×5 stride-2 96 -> 256 (1.11x). With
 * AVX2 (EMBER_ISA=avx2_fma) the 3×3 64 -> 64 at 28×28 ran 1.06x in place: AVX2 keeps
 * the plain COPY. */
#define COPY_COST_X86_PER_TAP 0.5
#define COPY_COST_NEON 15.0

int64_t ember_conv_tile_columns(const conv_prepared *p, int64_t n)
{
    const int64_t nr = (int64_t)p->kernel->nr, narrow = (int64_t)p->kernel->narrow_nr;
    const int64_t rest = n % nr;
    return n - rest + (rest == 0 ? 0 : rest <= narrow ? narrow : nr);
}

/* The rows a kernel multiplies for m rows of A, as its loops take a last tile: a single
 * row alone (every kernel's one_row loop), up to four rows as four (the x86 kernels' short
 * loop), up to eight as eight (AVX-512's 12-row kernel); otherwise the tile whole. */
int64_t ember_conv_tile_rows(const conv_prepared *p, int64_t m)
{
    const int64_t mr = (int64_t)p->kernel->mr, rest = m % mr;
    const ember_isa isa = p->kernel->isa;
    const int x86 = isa == EMBER_ISA_AVX2_FMA || isa == EMBER_ISA_AVX512F;
    int64_t last = rest == 0 ? 0 : rest == 1 ? 1 : mr;
    if (x86 && rest > 1 && rest <= 4)
        last = 4;
    else if (isa == EMBER_ISA_AVX512F && rest > 4 && rest <= 8)
        last = 8;
    return m - rest + (last < mr ? last : mr);
}

static int in_place_pays(const conv_prepared *p, int64_t width, int phases_used)
{
    const int64_t mr = (int64_t)p->kernel->mr;
    const int64_t rows = (p->group_out + mr - 1) / mr * mr;
    const int64_t columns = ember_conv_tile_columns(p, p->out_pixels);
    const int64_t wide =
        ember_conv_tile_columns(p, (p->out_dims[0] - 1) * width + p->out_dims[1]);
    const int64_t taps = p->kernel_dims[0] * p->kernel_dims[1];
    /* the offset load and address add: ~1/20 of x86's k step, ~1/12 of NEON's (80
     * instructions per 4 steps against 74) */
    const int neon = p->kernel->isa == EMBER_ISA_NEON_AARCH64 ||
                     p->kernel->isa == EMBER_ISA_NEON_ARMV7;
    const double overhead = neon ? 0.08 : 0.05;
    const double copy = neon ? COPY_COST_NEON
                        : p->kernel->isa == EMBER_ISA_AVX512F
                            ? COPY_COST_X86 + COPY_COST_X86_PER_TAP * (double)taps
                            : COPY_COST_X86;
    return (double)rows * ((double)wide * (1.0 + overhead) - (double)columns) <
           copy * (double)columns * (1.0 - (double)phases_used / (double)taps);
}

/* Rows and columns a tap reaches past its output pixel, in phase-plane units. */
static int64_t reach(const conv_prepared *p, int d)
{
    return (p->kernel_dims[d] - 1) * p->dilation[d] / p->stride[d];
}

/* Marks the phases some tap reads (a 1×1 stride-2 conv reads one of four). */
static void used_phases(conv_prepared *p)
{
    memset(p->phase_used, 0, sizeof p->phase_used);
    for (int64_t kh = 0; kh < p->kernel_dims[0]; kh++)
        for (int64_t kw = 0; kw < p->kernel_dims[1]; kw++)
            p->phase_used[(kh * p->dilation[0] % p->stride[0]) * p->stride[1] +
                          kw * p->dilation[1] % p->stride[1]] = 1;
}

/* Output rows per band: the band's input near BAND_BYTES and its wide output near
 * WIDE_BYTES (both are arena scratch), the rows it repeats a minority. */
static int64_t band_rows(const conv_prepared *p, int64_t width)
{
    const int64_t phases = p->stride[0] * p->stride[1], extra = reach(p, 0);
    int64_t rows = BAND_BYTES / (int64_t)sizeof(float) / (p->group_in * phases * width) - extra;
    const int64_t wide_rows = WIDE_BYTES / (int64_t)sizeof(float) / (p->group_out * width);
    rows = rows < wide_rows ? rows : wide_rows;
    if (rows < MIN_BAND_OVERLAP_SHARE * extra)
        rows = MIN_BAND_OVERLAP_SHARE * extra;
    return rows < 1 ? 1 : rows > p->out_dims[0] ? p->out_dims[0] : rows;
}

/* Lays out bands of `rows` output rows (conv.h). */
int ember_conv_lay_out_bands(conv_prepared *p, int64_t rows)
{
    const int64_t width = p->out_dims[1] + reach(p, 1);
    used_phases(p);
    const int64_t phases = p->stride[0] * p->stride[1];
    const int64_t plane = (rows + reach(p, 0)) * width, nr = (int64_t)p->kernel->nr;
    /* offsets are int32 (half the bytes of the table the kernel walks per tile); the
     * scratch must be addressable on 32-bit targets too */
    if (plane > INT32_MAX / phases / p->group_in ||
        p->group_in * phases * plane > INT32_MAX - nr ||
        (uint64_t)p->group_out > (uint64_t)(SIZE_MAX / 16) / sizeof(float) / (uint64_t)plane)
        return 0;
    p->band_rows = rows;
    p->band_width = width;
    p->phase_floats = plane;
    p->band_floats = (size_t)(p->group_in * phases * plane + nr);
    p->wide_floats = (size_t)(p->group_out * rows * width);
    p->b_offsets = malloc((size_t)p->depth * sizeof *p->b_offsets + 1);
    if (p->b_offsets == NULL)
        return -1;
    int32_t *offset = p->b_offsets;
    for (int64_t c = 0; c < p->group_in; c++)
        for (int64_t y = 0; y < p->kernel_dims[0] * p->dilation[0]; y += p->dilation[0])
            for (int64_t x = 0; x < p->kernel_dims[1] * p->dilation[1]; x += p->dilation[1]) {
                const int64_t phase = (y % p->stride[0]) * p->stride[1] + x % p->stride[1];
                *offset++ = (int32_t)((c * phases + phase) * plane + y / p->stride[0] * width +
                                      x / p->stride[1]);
            }
    return 1;
}

/* Whether one GEMM per output row (n = out_w) multiplies no more columns than one over the
 * band's wide output: then its rows are written in place, with no copy out. */
static int rows_direct_pays(const conv_prepared *p)
{
    const int64_t rows = p->band_rows, out_w = p->out_dims[1];
    return rows * ember_conv_tile_columns(p, out_w) <=
           ember_conv_tile_columns(p, (rows - 1) * p->band_width + out_w);
}

/* Whether the conv runs this way, and then its band geometry, offsets and scratch (with a
 * residual, added as the rows are copied out, always through the wide output). */
ember_status ember_conv_implicit_prepare(conv_prepared *p, const ember_node *node,
                                         int residual, size_t *scratch_bytes)
{
    p->implicit = 0;
    if (p->kernel->indirect == NULL || p->spatial != 2 || p->pointwise || p->one_pixel ||
        p->group_in == 0 || /* no band to lay out (its sizing divides by the channels) */
        p->stride[0] > EMBER_CONV_MAX_PHASE_STRIDE || p->stride[1] > EMBER_CONV_MAX_PHASE_STRIDE)
        return EMBER_OK;
    const int64_t width = p->out_dims[1] + reach(p, 1), rows = band_rows(p, width);
    used_phases(p);
    int phases_used = 0;
    for (int i = 0; i < EMBER_CONV_MAX_PHASE_STRIDE * EMBER_CONV_MAX_PHASE_STRIDE; i++)
        phases_used += p->phase_used[i];
    if (!in_place_pays(p, width, phases_used))
        return EMBER_OK;
    const int laid_out = ember_conv_lay_out_bands(p, rows);
    if (laid_out < 0)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    if (laid_out == 0)
        return EMBER_OK;
    p->rows_direct = !residual && rows_direct_pays(p);
    /* the wide output starts on a cache line */
    *scratch_bytes = ((p->band_floats * sizeof(float) + 63) / 64 * 64) +
                     (p->rows_direct ? 0 : p->wide_floats * sizeof(float));
    p->implicit = 1;
    return EMBER_OK;
}

/* The columns q of phase column b that land inside an input row: q·sw + b − pad_left in
 * [0, in_w) for q in [*lo, *hi), *hi ≤ the band's width. */
static void phase_columns(const conv_prepared *p, int64_t b, int64_t *lo, int64_t *hi)
{
    const int64_t sw = p->stride[1], in_w = p->in_dims[1];
    const int64_t first_col = b - p->pad_before[1]; /* input column of q = 0 */
    *lo = first_col >= 0 ? 0 : (-first_col + sw - 1) / sw;
    *hi = in_w - first_col <= 0 ? 0 : (in_w - first_col + sw - 1) / sw;
    *hi = *hi > p->band_width ? p->band_width : *hi;
}

/* One row of phase column b: dst[q] = input row `row` at column q·sw + b − pad_left for q
 * in [lo, hi) (phase_columns), zero elsewhere and for a row outside the image (NULL). */
static void fill_phase_row(const conv_prepared *p, const float *row, int64_t b, int64_t lo,
                           int64_t hi, float *dst)
{
    const int64_t width = p->band_width, sw = p->stride[1];
    if (row == NULL || lo >= hi) {
        memset(dst, 0, (size_t)width * sizeof(float));
        return;
    }
    memset(dst, 0, (size_t)lo * sizeof(float));
    ember_conv_copy_strided(dst + lo, row + lo * sw + b - p->pad_before[1], hi - lo, sw);
    memset(dst + hi, 0, (size_t)(width - hi) * sizeof(float));
}

/* The phase planes of output rows [first, first + band_rows) for every channel of the
 * group; planes no tap reads are skipped, and the nr floats a last tile reads past the
 * band are zeros. Each phase column's bounds are found once, not per row (two 64-bit
 * divisions a row were half this copy's time: x86, a 3×3 conv 16 -> 64 at 55×55). */
static void fill_band(const conv_prepared *p, const float *in, int64_t first, float *band)
{
    const int64_t sh = p->stride[0], sw = p->stride[1], width = p->band_width;
    const int64_t rows = p->band_rows + reach(p, 0);
    int64_t lo[EMBER_CONV_MAX_PHASE_STRIDE], hi[EMBER_CONV_MAX_PHASE_STRIDE];
    for (int64_t b = 0; b < sw; b++)
        phase_columns(p, b, &lo[b], &hi[b]);
    for (int64_t c = 0; c < p->group_in; c++, in += p->in_pixels)
        for (int64_t a = 0; a < sh; a++)
            for (int64_t b = 0; b < sw; b++, band += p->phase_floats) {
                if (!p->phase_used[a * sw + b])
                    continue;
                for (int64_t r = 0; r < rows; r++) {
                    const int64_t ih = (first + r) * sh + a - p->pad_before[0];
                    const int inside = ih >= 0 && ih < p->in_dims[0];
                    fill_phase_row(p, inside ? in + ih * p->in_dims[1] : NULL, b, lo[b], hi[b],
                                   band + r * width);
                }
            }
    memset(band, 0, p->kernel->nr * sizeof(float));
}

void ember_conv_implicit_run(const conv_prepared *p, const float *in, const float *filter,
                             const ember_f32_gemm_params *params, const float *residual,
                             float *out, float *scratch)
{
    const int64_t width = p->band_width, out_w = p->out_dims[1], out_h = p->out_dims[0];
    float *band = scratch;
    float *wide = scratch + (p->band_floats * sizeof(float) + 63) / 64 * 64 / sizeof(float);
    const size_t wide_row_bytes = (size_t)(p->band_rows * width) * sizeof(float);
    ember_f32_gemm_params gemm = *params;
    if (residual != NULL) { /* added in the copy out, before the clamp and hard swish */
        gemm.min = -INFINITY;
        gemm.max = INFINITY;
        gemm.hard_swish = NULL;
    }
    for (int64_t first = 0; first < out_h; first += p->band_rows) {
        const int64_t rows = out_h - first < p->band_rows ? out_h - first : p->band_rows;
        fill_band(p, in, first, band);
        if (p->rows_direct) {
            for (int64_t r = 0; r < rows; r++) {
                /* the next output row's lines are fetched while this one is computed */
                gemm.c_next_bytes = first + r + 1 < out_h ? (size_t)out_w * sizeof(float) : 0;
                ember_f32_gemm_indirect(p->kernel, (size_t)p->group_out, (size_t)out_w,
                                        (size_t)p->depth, filter, band + r * width,
                                        p->b_offsets, out + (first + r) * out_w,
                                        (size_t)p->out_pixels * sizeof(float), &gemm);
            }
            continue;
        }
        ember_f32_gemm_indirect(p->kernel, (size_t)p->group_out,
                                (size_t)((rows - 1) * width + out_w), (size_t)p->depth, filter,
                                band, p->b_offsets, wide, wide_row_bytes, &gemm);
        for (int64_t o = 0; o < p->group_out; o++)
            for (int64_t r = 0; r < rows; r++) {
                const int64_t at = o * p->out_pixels + (first + r) * out_w;
                const float *row = wide + (o * p->band_rows + r) * width;
                if (residual != NULL) {
                    ember_conv_add_clamp(out + at, row, residual + at, (size_t)out_w,
                                         params->min, params->max);
                    ember_conv_hard_swish(p, 1, (size_t)out_w, out + at, 0);
                } else
                    memcpy(out + at, row, (size_t)out_w * sizeof(float));
            }
    }
}
