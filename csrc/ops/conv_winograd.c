/*
 * 3×3 stride-1 convolutions by Winograd's minimal filtering F(2×2, 3×3) (Lavin & Gray,
 * "Fast Algorithms for Convolutional Neural Networks", 2015): each 2×2 block of output
 * pixels ("tile") comes from the 4×4 input patch under it, in 16 multiply-adds per input
 * and output channel instead of 36, so 2.25× fewer multiply-adds than any im2col or
 * implicit GEMM.
 *
 *   Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A       per channel pair, d a 4×4 patch, g the 3×3 taps
 *
 *   Bᵀ = | 1  0 -1  0 |    G = | 1    0    0   |    Aᵀ = | 1  1  1  0 |
 *        | 0  1  1  0 |        | 1/2  1/2  1/2 |         | 0  1 -1 -1 |
 *        | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
 *        | 0  1  0 -1 |        | 0    0    1   |
 *
 * Summed over input channels, each of the 16 positions ξ of the transformed 4×4 is a GEMM:
 * M_ξ (out channels × tiles) = U_ξ (out × in channels) · V_ξ (in channels × tiles). So a
 * run, per block of tiles: transform the input straight into 16 packed B operands; then,
 * per block of output channels, transform their filter rows into 16 packed A operands
 * (U = G g Gᵀ, from the 3×3 filter packed at prepare as 9 A operands, one per tap), run
 * the 16 GEMMs on the kernel of this build, and transform their results back into 2×2
 * outputs with the bias, a residual and the clamp. The transforms are adds and exact
 * halvings, so the result differs from the direct sum by rounding alone (about 1e-6 of
 * the largest output against onnxruntime on 3×3 convs of 64 to 256 channels; the tests
 * hold it to the direct paths' tolerance).
 *
 * Cost: the input and output transforms are O(channels × tiles × 16) adds beside the
 * GEMMs' O(in × out × tiles × 16) multiply-adds, so the form pays from a few tens of
 * channels on (see ember_conv_winograd_pays, conv_winograd_cost.c). The filter's transform, O(in × out × 16), is
 * redone each run rather than kept with the packed weights: kept, the transformed filter
 * took 16/9 the 3×3 one's memory (ResNet50's peak 113 -> 145 MB), and it costs little
 * beside the GEMMs (their rows of A are read from memory either way: 9 floats per
 * channel pair now instead of 16). Within a run, a transformed filter of at most
 * FILTER_KEPT_BYTES is made once, into scratch, for every block of tiles; a larger one
 * is made per block, a block of output channels at a time.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/conv.h"

/* A transformed filter up to this size is made once a run, into scratch, for all the
 * blocks of tiles, instead of once per block (x86, bench_ab, outputs identical: Inception
 * v2 0.972x the time at 1 MiB, ResNet50 0.987x at 1 MiB and 0.987x again at 2 MiB, where
 * its 128 -> 128 convs at 28×28 join; arena unchanged but Inception v2's, 4.1 -> 4.9 MB). */
#define FILTER_KEPT_BYTES (2048 * 1024)

/* Packed A floats of `rows` output channels' filter rows (one U_ξ of a block of them). */
static size_t a_floats(const conv_prepared *p, size_t rows)
{
    return ember_f32_packed_a_floats(p->kernel->mr, rows, (size_t)p->group_in);
}

/* One packed A panel's elements (mr rows × the input channels), and the floats of its 9
 * taps as prepared: interleaved in runs of EMBER_F32_WINOGRAD_FILTER_RUN, the last run
 * padded (kernels.h). */
static size_t panel_elements(const conv_prepared *p)
{
    return p->kernel->mr * (size_t)p->group_in;
}

static size_t panel_floats(const conv_prepared *p)
{
    const size_t run = EMBER_F32_WINOGRAD_FILTER_RUN;
    return (panel_elements(p) + run - 1) / run * 9 * run;
}

static size_t panels_of(const conv_prepared *p)
{
    return ((size_t)p->group_out + p->kernel->mr - 1) / p->kernel->mr;
}

size_t ember_conv_winograd_filter_floats(const conv_prepared *p)
{
    return panels_of(p) * panel_floats(p);
}

/* Packed B floats of one V_ξ of a block of `tiles`. */
static size_t v_floats(const conv_prepared *p, size_t tiles)
{
    return ember_f32_packed_b_floats(p->kernel->nr, (size_t)p->group_in, tiles);
}

/* A row of padded input: 2 · tiles_w + 2 floats. */
static size_t line_floats(const conv_prepared *p)
{
    return (size_t)((p->out_dims[1] + 1) / 2 * 2 + 2);
}

/* The transforms' work space: the input's padded lines (for a kernel that does not pad
 * in place) or the output's four results per tile of a block. */
static size_t work_floats(const conv_prepared *p)
{
    const size_t input = 4 * line_floats(p);
    const size_t output = 4 * (size_t)p->winograd_block;
    return input > output ? input : output;
}

/* Floats between the V_ξ of a block and between the M_ξ of `rows` channels × `count`
 * tiles: an odd number of cache lines, as between the U_ξ. The transforms walk all 16 at
 * once, and whole panels made the strides multiples of 4 KiB (AVX-512's 8 × 32 tiles:
 * 64 rows × 224 tiles is 14 × 4 KiB), so the 16 streams fell in one set of L1: a 3×3
 * 64 -> 192 conv at 56×56 spent 29% of its time in the output transform. */
static size_t v_xi_stride(const conv_prepared *p)
{
    return ember_conv_padded_stride(v_floats(p, (size_t)p->winograd_block));
}

static size_t m_xi_stride(int64_t rows, size_t count)
{
    return ember_conv_padded_stride((size_t)rows * count);
}

/* Floats between the U_ξ (the filter transform writes all 16 at once). */
static size_t u_stride(const conv_prepared *p)
{
    return ember_conv_padded_stride(a_floats(p, (size_t)p->winograd_rows));
}

/* Blocks of output channels (winograd_rows each) and the floats of one's 16 U_ξ. */
static size_t filter_blocks(const conv_prepared *p)
{
    return (size_t)((p->group_out + p->winograd_rows - 1) / p->winograd_rows);
}

static size_t u_block_floats(const conv_prepared *p)
{
    return 16 * u_stride(p);
}

/* The output channels of the block starting at o0 (0 past the last). */
static int64_t block_rows(const conv_prepared *p, int64_t o0)
{
    const int64_t left = p->group_out - o0;
    return left < p->winograd_rows ? left : p->winograd_rows;
}

/* The 16 U_ξ of the block starting at o0 in a kept filter's U region. */
static float *kept_block_u(const conv_prepared *p, float *u, int64_t o0)
{
    return u + (size_t)(o0 / p->winograd_rows) * u_block_floats(p);
}

/* Floats of the U region: one block's 16 U_ξ, or every block's when the filter is kept. */
static size_t u_region_floats(const conv_prepared *p)
{
    return (p->winograd_filter_kept ? filter_blocks(p) : 1) * u_block_floats(p);
}

/* Scratch: [V: 16 packed B of a block of tiles][M: 16 results of a block of output
 * channels × tiles][U: 16 packed A of a block of output channels, or of every block when
 * the filter is kept][work]. */
void ember_conv_winograd_prepare(conv_prepared *p, const ember_f32_winograd_kernel *kernel,
                                 size_t *scratch_bytes)
{
    p->winograd_kernel = kernel;
    p->winograd_rows = ember_conv_winograd_filter_rows(p);
    p->winograd_block = (int64_t)ember_conv_winograd_block_tiles(p, p->winograd_rows);
    p->winograd_filter_kept =
        ember_conv_winograd_tiles(p) > (size_t)p->winograd_block &&
        filter_blocks(p) * u_block_floats(p) * sizeof(float) <= FILTER_KEPT_BYTES;
    *scratch_bytes = (16 * v_xi_stride(p) +
                      16 * m_xi_stride(p->winograd_rows, (size_t)p->winograd_block) +
                      u_region_floats(p) + work_floats(p)) *
                     sizeof(float);
}

/* The 3×3 filter of each group as 9 packed A operands, one per tap, panel by panel and
 * within a panel interleaved in runs (the filter transform's input, kernels.h): a block
 * of output channels' taps is then one stream. */
void ember_conv_winograd_pack_filter(const conv_prepared *p, const float *filter, float *packed)
{
    const size_t run = EMBER_F32_WINOGRAD_FILTER_RUN, mr = p->kernel->mr;
    const size_t ci = (size_t)p->group_in, co = (size_t)p->group_out;
    for (int64_t g = 0; g < p->groups; g++, filter += co * ci * 9)
        for (size_t o0 = 0; o0 < co; o0 += mr, packed += panel_floats(p)) {
            /* zeros for a last panel's missing rows and the last run's padding */
            memset(packed, 0, panel_floats(p) * sizeof(float));
            const size_t rows = co - o0 < mr ? co - o0 : mr;
            for (size_t c = 0; c < ci; c++)
                for (size_t r = 0; r < rows; r++) {
                    const size_t e = c * mr + r; /* the element in the packed A panel */
                    const float *taps = filter + ((o0 + r) * ci + c) * 9;
                    float *to = packed + e / run * 9 * run + e % run;
                    for (size_t t = 0; t < 9; t++)
                        to[t * run] = taps[t];
                }
        }
}

/* The transforms go a run of tiles at a time within one row of tiles (their inputs and
 * outputs are rows of the planes), the run's tile row and column counted along, not
 * divided out: three 64-bit divisions per run and channel were 4% of a 3×3 128 -> 32 conv
 * at 56×56 (perf, AVX-512). The run from column tx, at most `left` tiles: */
static size_t row_run(size_t tx, size_t tiles_w, size_t left)
{
    return tiles_w - tx < left ? tiles_w - tx : left;
}

/* Past a run: the next tile's row and column. */
static void row_step(size_t run, size_t tiles_w, size_t *ty, size_t *tx)
{
    *tx += run;
    if (*tx == tiles_w) {
        *tx = 0;
        ++*ty;
    }
}

/* Input row `y` of a channel plane into `line`, shifted by the left padding, zeros
 * outside the image (and for a row outside it). */
static void fill_line(const conv_prepared *p, const float *plane, int64_t y, float *line)
{
    const int64_t width = (int64_t)line_floats(p), in_w = p->in_dims[1];
    const int64_t left = p->pad_before[1];
    memset(line, 0, (size_t)width * sizeof(float));
    if (y < 0 || y >= p->in_dims[0])
        return;
    const int64_t from = left > 0 ? 0 : -left;              /* first input column used */
    const int64_t to = in_w < width - left ? in_w : width - left; /* past the last */
    if (to > from)
        memcpy(line + from + left, plane + y * in_w + from, (size_t)(to - from) * sizeof(float));
}

/* Where a channel's input rows are read from: the plane itself, for a kernel that pads in
 * place, or four padded lines kept by input row (a tile row's last two are the next
 * one's first two, so each row is copied once per channel and block). */
typedef struct {
    const conv_prepared *p;
    const float *plane;
    float *lines; /* NULL: read the plane in place */
    int64_t held[4]; /* the input row in each line */
} input_rows;

static void input_rows_start(input_rows *r, const conv_prepared *p, const float *plane,
                             float *lines)
{
    *r = (input_rows){.p = p, .plane = plane, .lines = lines,
                      .held = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN}};
}

/* The four rows under tile row ty and the kernel's x0 and width for the run from tile
 * column tx0 (kernels.h's input form). */
static void input_rows_at(input_rows *r, int64_t ty, int64_t tx0, const float *rows[4],
                          ptrdiff_t *x0, ptrdiff_t *width)
{
    const conv_prepared *p = r->p;
    for (int i = 0; i < 4; i++) {
        const int64_t y = 2 * ty + i - p->pad_before[0];
        if (r->lines == NULL) {
            rows[i] = y >= 0 && y < p->in_dims[0] ? r->plane + y * p->in_dims[1] : NULL;
            continue;
        }
        const size_t slot = (size_t)((y % 4 + 4) % 4);
        if (r->held[slot] != y)
            fill_line(p, r->plane, y, r->lines + slot * line_floats(p));
        r->held[slot] = y;
        rows[i] = r->lines + slot * line_floats(p);
    }
    *x0 = r->lines == NULL ? (ptrdiff_t)(2 * tx0 - p->pad_before[1]) : (ptrdiff_t)(2 * tx0);
    *width = r->lines == NULL ? (ptrdiff_t)p->in_dims[1] : (ptrdiff_t)line_floats(p);
}

/*
 * Bᵀ d B of tiles [first, first + count) of every input channel, into the 16 packed V_ξ
 * (each `v_stride` floats; tile j of the block is column j: panel j / nr, lane j % nr),
 * by runs of tiles within one tile row and one panel (the lane counted along too).
 */
static void transform_input(const conv_prepared *p, const float *in, size_t first,
                            size_t count, float *v, size_t v_stride, float *lines)
{
    const size_t nr = p->kernel->nr, k = (size_t)p->group_in;
    const size_t tiles_w = (size_t)(p->out_dims[1] + 1) / 2;
    for (size_t c = 0; c < k; c++, in += p->in_pixels) {
        input_rows r;
        input_rows_start(&r, p, in, p->winograd_kernel->in_place ? NULL : lines);
        size_t ty = first / tiles_w, tx = first % tiles_w, lane = 0;
        for (size_t j = 0; j < count;) {
            size_t run = row_run(tx, tiles_w, count - j);
            run = nr - lane < run ? nr - lane : run;
            const float *rows[4];
            ptrdiff_t x0, width;
            input_rows_at(&r, (int64_t)ty, (int64_t)tx, rows, &x0, &width);
            p->winograd_kernel->input(run, rows, x0, width, v + (j - lane) * k + c * nr + lane,
                                      v_stride);
            j += run;
            row_step(run, tiles_w, &ty, &tx);
            lane = lane + run == nr ? 0 : lane + run;
        }
    }
}

/* The lanes past `count` in the last panel of each V_ξ: the GEMM multiplies them (and
 * drops the results), so they hold zeros rather than a previous node's bytes. */
static void zero_last_lanes(const conv_prepared *p, size_t count, float *v, size_t v_stride)
{
    const size_t nr = p->kernel->nr, k = (size_t)p->group_in, used = count % nr;
    if (used == 0)
        return;
    for (size_t xi = 0; xi < 16; xi++)
        for (size_t c = 0; c < k; c++)
            memset(v + xi * v_stride + count / nr * nr * k + c * nr + used, 0,
                   (nr - used) * sizeof(float));
}

/* Output columns [0, n) of a row from its even and odd columns' results (+ residual,
 * which may be the row itself: each element is read before it is written), clamped. */
static void store_row(const float *restrict even, const float *restrict odd, size_t n,
                      const float *residual, float min, float max, float *row)
{
    const size_t pairs = n / 2;
    if (residual != NULL) {
        for (size_t t = 0; t < pairs; t++) {
            row[2 * t] = ember_conv_clamp(even[t] + residual[2 * t], min, max);
            row[2 * t + 1] = ember_conv_clamp(odd[t] + residual[2 * t + 1], min, max);
        }
        if (n % 2)
            row[n - 1] = ember_conv_clamp(even[pairs] + residual[n - 1], min, max);
        return;
    }
    for (size_t t = 0; t < pairs; t++) {
        row[2 * t] = ember_conv_clamp(even[t], min, max);
        row[2 * t + 1] = ember_conv_clamp(odd[t], min, max);
    }
    if (n % 2)
        row[n - 1] = ember_conv_clamp(even[pairs], min, max);
}

/* Aᵀ M A of tiles [first, first + count) of output channels [o0, o0 + rows) (M_ξ: rows ×
 * count, each m_stride floats), plus bias and residual, clamped, into the output planes;
 * a tile's second row or column past the image's edge is dropped. A run (part of a row
 * of tiles) at a time: the kernel's store writes its two output rows, or, for a kernel
 * without one, the output transform's four results per tile (`y`, 4 · count floats) are
 * stored by store_row. */
static void transform_output(const conv_prepared *p, const float *m, size_t m_stride,
                             int64_t o0, int64_t rows, size_t first, size_t count,
                             const float *bias, const float *residual, float *out, float *y)
{
    const ember_f32_winograd_store_fn store = p->winograd_kernel->store;
    const size_t tiles_w = (size_t)(p->out_dims[1] + 1) / 2;
    const size_t out_h = (size_t)p->out_dims[0], out_w = (size_t)p->out_dims[1];
    for (int64_t o = o0; o < o0 + rows; o++) {
        const float *mo = m + (size_t)(o - o0) * count;
        float *plane = out + o * p->out_pixels;
        const float *res = residual ? residual + o * p->out_pixels : NULL;
        if (store == NULL)
            p->winograd_kernel->output(count, mo, m_stride, bias[o], y);
        size_t ty = first / tiles_w, tx = first % tiles_w;
        for (size_t j = 0; j < count;) {
            const size_t run = row_run(tx, tiles_w, count - j);
            const size_t x0 = 2 * tx, columns = x0 + 2 * run < out_w ? 2 * run : out_w - x0;
            ember_f32_winograd_rows to = {.columns = columns, .bias = bias[o], .min = p->min,
                                          .max = p->max};
            for (size_t dy = 0; dy < 2 && 2 * ty + dy < out_h; dy++) {
                const size_t at = (2 * ty + dy) * out_w + x0;
                to.rows[dy] = plane + at;
                to.residual[dy] = res ? res + at : NULL;
            }
            if (store != NULL)
                store(run, mo + j, m_stride, &to);
            for (size_t dy = 0; dy < 2 && to.rows[dy] != NULL; dy++) {
                if (store == NULL)
                    store_row(y + 2 * dy * count + j, y + (2 * dy + 1) * count + j, columns,
                              to.residual[dy], p->min, p->max, to.rows[dy]);
                ember_conv_hard_swish(p, 1, columns, to.rows[dy], 0);
            }
            j += run;
            row_step(run, tiles_w, &ty, &tx);
        }
    }
}

/* Output channels [o0, o0 + rows)'s 3×3 filter rows into the 16 U_ξ: a panel at a time
 * (each panel's 9 taps are one stream, kernels.h). */
static void transform_filter(const conv_prepared *p, const float *filter, int64_t o0,
                             int64_t rows, float *u)
{
    const size_t mr = p->kernel->mr, panels = ((size_t)rows + mr - 1) / mr;
    for (size_t panel = 0; panel < panels; panel++)
        p->winograd_kernel->filter(panel_elements(p),
                                   filter + ((size_t)o0 / mr + panel) * panel_floats(p),
                                   u + panel * panel_elements(p), u_stride(p));
}

/*
 * One block of tiles, its input transformed into v: per block of output channels, their
 * filter rows transformed into u, the 16 GEMMs into m, the outputs transformed back.
 * While the GEMMs run, the next block's filter rows are prefetched, a sixteenth by each
 * GEMM, spread over its tiles (ember_f32_gemm_params.prefetch; asked for at once before
 * each GEMM, they stalled the core: Inception v2 0.98x the time): the transform streams
 * them from memory, where the 16 GEMMs cannot hide the
 * misses as they did when they streamed a transformed filter kept whole (a 3×3 512 ->
 * 512 conv at 7×7, whose 16 tiles use each filter row 16 times: 0.87x the time with it).
 */
static void run_block(const conv_prepared *p, const float *filter, const float *v,
                      size_t v_stride, size_t first, size_t count, const float *bias,
                      const float *residual, float *out, float *m, float *u_all, float *work)
{
    const size_t k = (size_t)p->group_in, mr = p->kernel->mr;
    const int64_t step = p->winograd_rows;
    for (int64_t o0 = 0; o0 < p->group_out; o0 += step) {
        const int64_t rows = block_rows(p, o0), next_rows = block_rows(p, o0 + rows);
        const float *next = filter + (size_t)(o0 + rows) / mr * panel_floats(p);
        /* a kept filter is in scratch already: nothing to fetch */
        const size_t next_bytes = p->winograd_filter_kept ? 0
                                  : ((size_t)next_rows + mr - 1) / mr * panel_floats(p) *
                                        sizeof(float);
        const size_t m_step = m_xi_stride(rows, count);
        float *u = p->winograd_filter_kept ? kept_block_u(p, u_all, o0) : u_all;
        if (!p->winograd_filter_kept)
            transform_filter(p, filter, o0, rows, u);
        for (size_t xi = 0; xi < 16; xi++) {
            /* a sixteenth of the next rows, spread over the GEMM's tiles (x86 only) */
            size_t bytes;
            const char *share = ember_prefetch_share(next, next_bytes, xi, 16, &bytes);
            const ember_f32_gemm_params params = {.min = -INFINITY, .max = INFINITY,
                                                  .prefetch = bytes > 0 ? share : NULL,
                                                  .prefetch_bytes = bytes};
            ember_f32_gemm_packed(p->kernel, (size_t)rows, count, k, u + xi * u_stride(p),
                                  v + xi * v_stride, m + xi * m_step, count * sizeof(float),
                                  &params);
        }
        transform_output(p, m, m_step, o0, rows, first, count, bias, residual, out, work);
    }
}

void ember_conv_winograd_run(const conv_prepared *p, const float *in, const float *filter,
                             const float *bias, const float *residual, float *out,
                             float *scratch)
{
    const size_t block = (size_t)p->winograd_block, tiles = ember_conv_winograd_tiles(p);
    const size_t v_stride = v_xi_stride(p);
    float *v = scratch, *m = v + 16 * v_stride;
    float *u = m + 16 * m_xi_stride(p->winograd_rows, block);
    float *work = u + u_region_floats(p);
    if (p->winograd_filter_kept)
        for (int64_t o0 = 0; o0 < p->group_out; o0 += p->winograd_rows)
            transform_filter(p, filter, o0, block_rows(p, o0), kept_block_u(p, u, o0));
    for (size_t first = 0; first < tiles; first += block) {
        const size_t count = tiles - first < block ? tiles - first : block;
        transform_input(p, in, first, count, v, v_stride, work);
        zero_last_lanes(p, count, v, v_stride);
        run_block(p, filter, v, v_stride, first, count, bias, residual, out, m, u, work);
    }
}
