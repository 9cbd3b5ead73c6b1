/*
 * Winograd F(2×2, 3×3) for conv_winograd.c: how a conv's work is blocked (tiles per block
 * of the input transform, output channels per filter transform) and whether the form
 * pays against the conv's other forms, by a cost model fitted per ISA and core class.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"

/* Bytes of one block's transformed input and GEMM results (16 of each), kept near L2:
 * 512 KiB and 1 or 4 MiB ran alike on x86 (ResNet50 0.99x / 1.01x, VGG19 1.00x, one
 * process alternating), and the smaller takes less arena (Inception v2 4.9 -> 4.5 MB). */
#define BLOCK_BYTES (512 * 1024)
/* Tiles per block at least, past BLOCK_BYTES if need be: each block transforms the whole
 * filter again (about 20 aarch64 instructions per channel pair, against 16 · tiles
 * multiply-adds), so a 3×3 256 -> 256 conv at 14×14 in blocks of 24 tiles counted 27.0M
 * instructions on a Cortex-A76 against 23.6M in one block of 49 (and ran 0.87x the time
 * on x86 in one block; ResNet50 0.99x, Inception v2 0.99x). */
#define MIN_BLOCK_TILES 64
/* Bytes of the 16 transformed filter rows of one block of output channels (at least one
 * panel of the GEMM's rows): read by its 16 GEMMs from L2. */
#define FILTER_BLOCK_BYTES (128 * 1024)

size_t ember_conv_winograd_tiles(const conv_prepared *p)
{
    return (size_t)((p->out_dims[0] + 1) / 2 * ((p->out_dims[1] + 1) / 2));
}

/* Output channels per filter transform: whole panels of the GEMM's rows, their 16 U_ξ
 * near FILTER_BLOCK_BYTES, no more than the group has. */
int64_t ember_conv_winograd_filter_rows(const conv_prepared *p)
{
    const int64_t mr = (int64_t)p->kernel->mr;
    const int64_t all = (p->group_out + mr - 1) / mr * mr;
    int64_t rows = FILTER_BLOCK_BYTES / (16 * (int64_t)sizeof(float) * p->group_in) / mr * mr;
    rows = rows < mr ? mr : rows;
    return rows < all ? rows : all;
}

/* Tiles per block: their 16 V_ξ and a filter block's 16 results near BLOCK_BYTES, at
 * least MIN_BLOCK_TILES, whole panels of the GEMM's columns, no more than there are. */
size_t ember_conv_winograd_block_tiles(const conv_prepared *p, int64_t rows)
{
    const size_t nr = p->kernel->nr, all = (ember_conv_winograd_tiles(p) + nr - 1) / nr * nr;
    const size_t per_tile = 16 * (size_t)(p->group_in + rows) * sizeof(float);
    const size_t least = (MIN_BLOCK_TILES + nr - 1) / nr * nr;
    size_t block = BLOCK_BYTES / per_tile / nr * nr;
    block = block < least ? least : block;
    return block < all ? block : all;
}

/*
 * Whether it pays, by a cost per tile (2×2 outputs, tiles rounded to nr) against the
 * im2col or implicit GEMM's 9 · ci multiply-adds per output pixel (pixels rounded to
 * nr), ci and co the channels in and out of a group:
 *
 *   16 · tiles · (ci + FIXED + 20 · ci / co) + FILTER · ci · blocks  ≤  RATIO · 9 · pixels · ci
 *
 * and, where the few-pixel form would run instead (7×7 and 6×6 planes), no more than
 * that form's multiply-adds per output channel as its tiles run them, its copies
 * included (ember_conv_few_pixels_madds; no RATIO: with one, ARMv7 left Inception v2's
 * four 3×3 convs at 7×7 to the few-pixel form, 686.5 -> 694.8M instructions). 6×6 is 9
 * tiles rounded to 16 columns, but 36 pixels are six whole row tiles of 6 transposed: on
 * a Zen 3, Inception v1's 160 -> 320 and 192 -> 384 at 6×6 ran the few-pixel form in
 * 0.79x and 0.81x Winograd's time, which the im2col cost alone (1.4x the few-pixel one
 * there) had kept; the 7×7 convs stay Winograd on AVX2 and NEON (on a Zen 3 Inception
 * v2's in 0.86x the few-pixel form's time, ResNet50's 512 -> 512 0.80x).
 *
 * FIXED and the ci / co term are the transforms and the round trip of the 16 GEMMs'
 * results through memory, per tile and output channel (an input transform serves co
 * GEMM rows: with few output channels it weighs more); FILTER the filter's transform,
 * per channel pair and block of tiles (about 20 instructions on aarch64, 4.5 cycles on
 * x86: some 64 multiply-adds; twice that on armv7; it tips no conv of the model zoo).
 * Fitted on aarch64 instruction counts (Cortex-A76, Winograd / GEMM): 3×3 64 -> 64 at 56×56 0.69, 64 -> 192 at 56×56
 * 0.64, 128 -> 128 at 14×14 0.70, 128 -> 32 at 56×56 0.79 and at 28×28 0.86, 64 -> 256
 * at 13×13 0.86, 32 -> 128 at 27×27 0.91, 16 -> 64 at 55×55 1.14 (not taken); and on x86
 * times with the AVX2 transforms (one process preparing both, alternating runs, medians
 * of 40 pairs): 128 -> 32 at 56×56 0.75, 128 -> 128 at 14×14 0.85, 64 -> 64 at 56×56
 * 0.88, 96 -> 128 at 28×28 0.88, 128 -> 32 at 28×28 0.90, 64 -> 192 at 56×56 0.93, but
 * 64 -> 256 at 13×13 1.27 and 32 -> 128 at 27×27 1.40 (not taken), and with the
 * baseline's transforms 512 -> 512 at 28×28 0.62, 256 -> 256 at 56×56 0.66.
 */
/* FILTER in multiply-adds: x86 and aarch64, and armv7, whose transform takes about 50
 * instructions a channel pair (16 q registers: its nine taps and six halved sums spill)
 * against its GEMM's ~0.4 instructions a multiply-add */
#define FILTER_COST 64.0
#define FILTER_COST_ARMV7 128.0

/*
 * On a Zen 5 (EPYC 9005, family 1Ah model 2) both x86 transforms cost far less against
 * the direct conv than on the cores above: forced on, with FIXED 40 it would not take,
 * SqueezeNet's 3×3 convs ran in 0.76-0.88x the time with AVX-512 (16 -> 64 at 55×55
 * 0.88, 32 -> 128 at 27×27 0.78, 48 -> 192 and 64 -> 256 at 13×13 0.84 and 0.76) and in
 * 0.58-0.67x with AVX2; Inception v2's 64 -> 64 at 28×28 0.71 and 64 -> 96 at 14×14 0.67,
 * DenseNet121's 128 -> 32 at 14×14 0.85 and at 28×28 0.91; but the 7×7 and 6×6 stages
 * lost (512 -> 512 at 7×7 1.06, 224 -> 224 and 192 -> 320 1.06, 128 -> 32 1.25, 192 ->
 * 384 at 6×6 1.39), per-node medians of 5 alternated `ember-run --profile` runs. FIXED 8
 * with the ratio 1 (fit_of) parts all fourteen shapes as measured (and with AVX2's tiles
 * of 16, DenseNet's 128 -> 32 at 7×7 goes to Winograd, 0.70x there).
 *
 * A Zen 4 (EPYC 9004, family 19h model 11h: AVX-512 on 256-bit pipes) takes the same fit:
 * with AVX-512, what it adds to the generic choice ran in 0.69-0.79x the time (Inception
 * v2's 64 -> 64 at 28×28 and 64 -> 96 at 14×14, DenseNet121's 128 -> 32 at 28×28,
 * SqueezeNet's 32 -> 128 at 27×27), 0.86-0.95x (SqueezeNet's 55×55 and 13×13 ones, DenseNet's 128 ->
 * 32 at 14×14), the nodes untouched 0.93-1.0x (medians of 6 alternated `--profile` runs);
 * forced, Inception v1's 6×6 convs lost (160 -> 320 1.19, 192 -> 384 1.23) and DenseNet's
 * 128 -> 32 at 7×7 (1.16-1.27), as this fit has it, while Inception v2's 7×7 ones won
 * (0.85-0.92), which it cannot tell from the 6×6 ones (both are one block of nr pixels).
 *
 * So does a Sapphire Rapids Xeon (AVX-512 on two 512-bit pipes, 2 MiB of L2), where
 * Cascade Lake, of the same pipes, chose as the generic fit has it: with AVX-512, what
 * this fit adds ran in 0.72-0.80x the time (Inception v2's 64 -> 64 at 28×28 and 64 ->
 * 96 at 14×14), 0.83-0.93x (DenseNet121's 128 -> 32 at 28×28), 0.86-0.88x (SqueezeNet's
 * 16 -> 64 at 55×55 and 32 -> 128 at 27×27), 0.95-0.96x (its 64 -> 256 at 13×13); even
 * (0.90-1.14, median 0.99: DenseNet's 128 -> 32 at 14×14; 1.00: SqueezeNet's 48 -> 192
 * at 13×13); per-node medians of 6 alternated `ember-run --profile` runs. An Emerald
 * Rapids (model CFh, AMX hidden by its virtual machine) likewise: SqueezeNet 0.94x,
 * DenseNet121 0.97-0.99x (bench_ab, 30 pairs each way).
 */
/*
 * A Zen 3 (EPYC 7003, family 19h model 1, AVX2) since the AVX2 transforms store whole
 * vectors unmasked (AMD microcodes masked stores): FIXED 8 as above, RATIO 0.856. Per
 * node, Winograd / the direct form (medians of 8 `ember-run --profile 10` runs, the
 * settings alternated in ABBA order, one build: EMBER_WINOGRAD forcing the form on and
 * off, the untouched nodes 0.98-1.02): taken, SqueezeNet's 16 -> 64 at 55×55 0.90 and
 * 32 -> 128 at 27×27 0.84 and 64 -> 256 at 13×13 0.96, Inception v1's 96 -> 208 and
 * 112 -> 224 at 13×13 0.90 and 0.87, Inception v2's 64 -> 96 at 14×14 0.91, DenseNet121's
 * 128 -> 32 at 28×28 0.94-0.98, with every conv the generic fit took (0.63-0.86);
 * left, SqueezeNet's 48 -> 192 at 13×13 (1.04), DenseNet121's 128 -> 32 at 14×14
 * (1.09-1.17) and 7×7 (1.28-1.40). The fit parts them by 1%: 16 -> 64 at 55×55 weighs
 * 0.852 of the direct cost, 128 -> 32 at 7×7 0.861 and 48 -> 192 at 13×13 0.862.
 */
typedef struct cost_fit {
    double fixed, ratio;
} cost_fit;

static cost_fit fit_of(const conv_prepared *p)
{
    if (p->kernel->isa == EMBER_ISA_NEON_AARCH64 || p->kernel->isa == EMBER_ISA_NEON_ARMV7)
        return (cost_fit){20.0, 0.9};
    if (p->core == EMBER_CORE_ZEN3)
        return (cost_fit){8.0, 0.856};
    if (p->core != EMBER_CORE_GENERIC) /* Zen 5, Zen 4, SPR */
        return (cost_fit){8.0, 1.0};
    return (cost_fit){40.0, 0.95};
}

/* Winograd's cost per output channel, in multiply-adds (above). */
static double winograd_cost(const conv_prepared *p, double tiles)
{
    const cost_fit fit = fit_of(p);
    const double ci = (double)p->group_in, co = (double)p->group_out;
    const size_t block = ember_conv_winograd_block_tiles(p, ember_conv_winograd_filter_rows(p));
    const double blocks = ceil(tiles / (double)block);
    const double filter = p->kernel->isa == EMBER_ISA_NEON_ARMV7 ? FILTER_COST_ARMV7
                                                                 : FILTER_COST;
    return 16.0 * tiles * (ci + fit.fixed + 20.0 * ci / co) + filter * ci * blocks;
}

/* EMBER_WINOGRAD=0 turns the form off: the direct sums' rounding, or a comparison. */
static int turned_off(void)
{
    const char *value = getenv("EMBER_WINOGRAD");
    return value != NULL && strcmp(value, "0") == 0;
}

int ember_conv_winograd_pays(const conv_prepared *p, int few_pixels)
{
    if (turned_off() || p->spatial != 2 || p->kernel_dims[0] != 3 || p->kernel_dims[1] != 3 ||
        p->stride[0] != 1 || p->stride[1] != 1 || p->dilation[0] != 1 || p->dilation[1] != 1 ||
        p->group_out < 1 || p->group_in < 1 || p->out_pixels < 4)
        return 0;
    const double nr = (double)p->kernel->nr;
    const double cost = winograd_cost(p, ceil((double)ember_conv_winograd_tiles(p) / nr) * nr);
    const double im2col = 9.0 * ceil((double)p->out_pixels / nr) * nr * (double)p->group_in;
    return cost <= fit_of(p).ratio * im2col &&
           (!few_pixels || cost <= ember_conv_few_pixels_madds(p) / (double)p->group_out);
}
