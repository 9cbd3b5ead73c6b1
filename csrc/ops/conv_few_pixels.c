/*
 * Convolutions with few output pixels (the 7×7 stages of ResNet, Inception, DenseNet):
 * the GEMM transposed, as for a single pixel (below). Normally the
 * output pixels are the columns of the GEMM, nr to a tile: 49 pixels fill four tiles of
 * 16, 64 columns of multiply-adds for 49 results. Transposed, the pixels are the rows of
 * A, mr to a tile (six tiles of 6: 54), the filter is B (packed once at prepare, as for
 * one_pixel), and the result C^T (pixels × channels) is transposed into the output.
 *
 * The im2col matrix is built whole (K × N, N small) and packed as A; a 1×1 stride-1
 * unpadded conv packs its input directly.
 *
 * One pixel is the degenerate case (the streaming TCN at one frame per pulse): its taps
 * are gathered straight into a one-row A, no im2col.
 */
#include <math.h>
#include <string.h>

#include "ops/conv.h"

/* One or few output pixels: per group, B[p][o] = filter[o][p] (k = depth, n = group_out). */
void ember_conv_pack_filter_as_b(const conv_prepared *p, const float *filter, float *packed)
{
    for (int64_t g = 0; g < p->groups; g++)
        ember_f32_pack_b(p->kernel->nr, (size_t)p->depth, (size_t)p->group_out,
                         filter + g * p->group_out * p->depth, 1, (size_t)p->depth,
                         packed + (size_t)g * p->group_filter_floats);
}

/* One output pixel per image: out[o] = bias[o] + Σ_p taps[p]·filter[o][p] as a GEMM of
 * one row (the taps, gathered straight into A's packed layout: row 0 of each group of
 * mr, the other rows zero) by the filter packed as B, so the micro-kernel's tile holds
 * nr channels (conv.h's one_pixel). */
void ember_conv_one_pixel_run(const conv_prepared *p, const float *input, const float *bias,
                              const float *residual, float *output, float *taps)
{
    if (residual != NULL && residual != output) /* accumulated by the GEMM, before its
                                                   clamp (or the output holds it already) */
        memcpy(output, residual, (size_t)(p->batch * p->out_channels) * sizeof(float));
    const size_t mr = p->kernel->mr;
    const int64_t per_channel = ember_conv_taps(p);
    memset(taps, 0, ember_f32_packed_a_floats(mr, 1, (size_t)p->depth) * sizeof(float));
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t g = 0; g < p->groups; g++) {
            const float *in = input + (n * p->channels + g * p->group_in) * p->in_pixels;
            float *out = output + n * p->out_channels + g * p->group_out;
            float *row = taps;
            for (int64_t c = 0; c < p->group_in; c++, in += p->in_pixels)
                for (int64_t t = 0; t < per_channel; t++, row += mr)
                    *row = p->pixel_taps[t] < 0 ? 0.0f : in[p->pixel_taps[t]];
            const ember_f32_gemm_params params = {.bias_col = bias + g * p->group_out,
                                                  .accumulate = residual != NULL,
                                                  .min = p->min, .max = p->max,
                                                  .hard_swish = ember_conv_gate(p)};
            ember_f32_gemm_packed(p->kernel, 1, (size_t)p->group_out, (size_t)p->depth, taps,
                                  p->packed_filter + (size_t)g * p->group_filter_floats, out,
                                  (size_t)p->group_out * sizeof(float), &params);
        }
}

/* Pixels past which the transposed GEMM stops being worth its extra copies. */
#define MAX_PIXELS 128
/* What the extra copies cost per tap and pixel (the whole im2col, then packing it as A),
 * in multiply-adds: the multiply-adds the smaller tiles save, per tap, must exceed it
 * (x86: 3×3 512 -> 512 at 7×7 4.4 -> 3.9 ms, 1×1 2048 -> 512 1.54 -> 1.31, but
 * 3×3 128 -> 32 at 7×7 0.17 -> 0.30: too few channels share the copies). */
#define COPY_COST 16
/* A pointwise conv packs its input either way (as B straight, as A transposed): its one
 * extra copy is the transpose of C^T into the output, whose cost per output value, in
 * multiply-adds, the saving over all K must exceed. Fitted on a Zen 5 (node times of
 * `ember-run --profile`, medians of 5 alternated runs, transposed / straight): the
 * saving per output value (in brackets) 8.8 for ShuffleNet's grouped 68 -> 68 at 7×7
 * (1.40x the time transposed), 33.6 for its 136 -> 136 (1.03-1.08x); then 49 for
 * MobileNetV2's 160 -> 960 (0.81x), 98 for 320 -> 1280 (0.67x), 157 for DenseNet121's
 * 512 -> 128 (0.85x) and ResNet50's 512 -> 2048 (0.70x), 176 for MobileNetV2's
 * 576 -> 160 (0.79x), 277 for Inception v1's 832 -> 32 at 6×6 (0.66x). */
#define TRANSPOSE_OUT_COST 40

/* The multiply-adds of each form, per tap, counted as the kernels run their tiles
 * (ember_conv_tile_rows / _columns): straight, the channels are the rows and the pixels
 * the columns; transposed, the other way round. 49 pixels are 64 columns straight on
 * AVX-512 (a tile of 32 and one of 17, which takes the whole path) but 49 rows transposed
 * (four of 12 and one alone): counted as five whole tiles of rows, 60, they kept 1×1
 * convs 512 -> 128, 576 -> 160 or 1024 -> 192 at 7×7 straight, which ran 1.2-1.5x the
 * time of the transposed form. */
static double straight_madds(const conv_prepared *p)
{
    return (double)ember_conv_tile_rows(p, p->group_out) *
           (double)ember_conv_tile_columns(p, p->out_pixels) * (double)p->depth;
}

double ember_conv_few_pixels_madds(const conv_prepared *p)
{
    const int64_t n = p->out_pixels, m = p->group_out;
    const double copies = p->pointwise ? (double)TRANSPOSE_OUT_COST * (double)(m * n)
                                       : (double)COPY_COST * (double)n * (double)p->depth;
    return (double)ember_conv_tile_columns(p, m) * (double)ember_conv_tile_rows(p, n) *
               (double)p->depth + copies;
}

int ember_conv_few_pixels_pays(const conv_prepared *p)
{
    if (p->out_pixels <= 1 || p->out_pixels > MAX_PIXELS)
        return 0;
    return straight_madds(p) > ember_conv_few_pixels_madds(p);
}

static size_t round_up_floats(size_t floats)
{
    return (floats + 15) / 16 * 16; /* 64 bytes */
}

/* Floats between C^T's rows: a strip's n rows are read at once (2048 channels, 8 KiB
 * apart, took 7x the time of a padded stride). */
static size_t transposed_stride(const conv_prepared *p)
{
    return ember_conv_padded_stride((size_t)p->group_out);
}

/* [im2col K × N and its build scratch (not for pointwise)][A panels][C^T N × group_out] */
/* Floats between the rows of a pointwise input's scaled copy: n rounded up to 8, whole
 * vectors for the pack_scaled kernels (x86: 49 pixels a row took the scalar loops, and
 * DenseNet121's 7×7 convs 1.02x the time of the unfused scale and conv). */
static size_t scaled_stride(size_t n)
{
    return (n + 7) / 8 * 8;
}

size_t ember_conv_few_pixels_scratch(const conv_prepared *p)
{
    const size_t n = (size_t)p->out_pixels, k = (size_t)p->depth;
    /* pointwise, the input itself, or with a prologue its scaled copy */
    const size_t columns = p->pointwise ? (p->prologue.scale != NULL
                                               ? round_up_floats(k * scaled_stride(n)) : 0)
                                        : round_up_floats(k * n + 8) +
                                              round_up_floats(ember_conv_im2col_rows_floats(p));
    return (columns + round_up_floats(ember_f32_packed_a_floats(p->kernel->mr, n, k)) +
            n * transposed_stride(p)) * sizeof(float);
}

/* out (m channels × n pixels) = hard_swish(clamp(C^T + residual)), C^T's rows `stride`
 * floats apart (residual NULL: none; it may be out itself: each element is read before its
 * output is written). In strips of TRANSPOSE_STRIP channels, an output row at a time: the
 * strip's n cache lines of C stay in L1 while its rows are written, each row in one pass.
 * Channel by channel instead, every read was a line of its own (2048 channels: 8 KB
 * apart), and ResNet's 7×7 stage spent a third of its time here; pixel by pixel within a
 * strip, 16 scattered stores a pixel cost 4x this order (1280 channels × 49 pixels: 2.1 ->
 * 0.5 ns a value).
 */
#define TRANSPOSE_STRIP 16

static void transpose_out(const conv_prepared *p, const float *c, size_t n, size_t m,
                          size_t stride, const float *residual, float *out)
{
    const float min = p->min, max = p->max;
    for (size_t o0 = 0; o0 < m; o0 += TRANSPOSE_STRIP) {
        const size_t end = m - o0 < TRANSPOSE_STRIP ? m : o0 + TRANSPOSE_STRIP;
        for (size_t o = o0; o < end; o++) {
            const float *from = c + o;
            float *row = out + o * n;
            if (residual != NULL) {
                const float *res = residual + o * n;
                for (size_t j = 0; j < n; j++)
                    row[j] = ember_conv_clamp(from[j * stride] + res[j], min, max);
            } else {
                for (size_t j = 0; j < n; j++)
                    row[j] = ember_conv_clamp(from[j * stride], min, max);
            }
            ember_conv_hard_swish(p, 1, n, row, 0);
        }
    }
}

void ember_conv_few_pixels_run(const conv_prepared *p, const float *in, const float *filter,
                               const float *bias, const float *residual, float *out,
                               float *scratch, const ember_f32_scaled_rows *prologue)
{
    const size_t n = (size_t)p->out_pixels, k = (size_t)p->depth, m = (size_t)p->group_out;
    const float *columns = in;
    size_t column_stride = (size_t)p->in_pixels;
    if (prologue != NULL) { /* the scaled input, as one panel of rows whole vectors wide */
        p->pack_scaled(scaled_stride(n), k, n, in, column_stride, prologue, scratch);
        columns = scratch;
        column_stride = scaled_stride(n);
        scratch += round_up_floats(k * scaled_stride(n));
    } else if (!p->pointwise) {
        float *build = scratch + round_up_floats(k * n + 8); /* 8: room the build may use */
        ember_conv_pack_im2col(p, in, p->group_in, 0, (int64_t)n, n, scratch, build);
        columns = scratch;
        column_stride = n;
        scratch = build + round_up_floats(ember_conv_im2col_rows_floats(p));
    }
    float *panels = scratch;
    float *transposed = panels + round_up_floats(ember_f32_packed_a_floats(p->kernel->mr, n, k));
    /* A[j][t] = columns[t][j]: pixel j's taps */
    ember_f32_pack_a(p->kernel->mr, n, k, columns, 1, column_stride, panels);
    /* the residual and the clamp are applied in the transpose */
    const ember_f32_gemm_params params = {.bias_col = bias, .min = -INFINITY, .max = INFINITY};
    const size_t stride = transposed_stride(p);
    ember_f32_gemm_packed(p->kernel, n, m, k, panels, filter, transposed,
                          stride * sizeof(float), &params);
    transpose_out(p, transposed, n, m, stride, residual, out);
}
