/*
 * ember_f32_gemm_packed / _indirect — the driver: walks a GEMM in mr × nr tiles, over
 * packed operands or with B read in place; and ember_f32_gemv_packed, a GEMV's panels
 * front to back or back to front.
 *
 * Loop order (BLIS's; K split in passes for B in place, or packed and past L2: see below):
 * rows of A are taken in blocks of EMBER_F32_GEMM_A_BLOCK_BYTES (sized to stay in L2);
 * inside a block, columns are the outer loop and rows the inner one, so one packed B
 * panel (k × nr floats) stays hot in L1 while the block's A panels (k × mr each) stream
 * past it from L2. Each B panel is
 * then read once per A block instead of once per A panel, and the A block is read from
 * L2 for every B panel rather than from memory.
 *
 * Edge tiles get partial m / n; the kernels store only those, so C needs no padding.
 * No allocation, no threads: a caller that wants threads splits C into column ranges
 * (nr multiples) or row ranges (mr multiples) and calls this on each.
 */
#include "kernels/kernels.h"

#include <math.h>

/* Bytes of packed A processed per pass over B: a fraction of the smallest L2 we target
 * (Cortex-A53: 128 KiB–1 MiB shared; x86: ≥ 256 KiB), leaving room for B and C; the
 * last block of a walk may take up to a quarter more (walk). */
#define EMBER_F32_GEMM_A_BLOCK_BYTES (96 * 1024)

/* K per pass of the in-place form: EMBER_F32_GEMM_INDIRECT_PASS (kernels.h). */

/* K per pass of the packed form when its B outgrows L2 (a transposed conv's filter, a
 * matmul's weights): with K whole, an A block holds few rows (its panels must fit
 * EMBER_F32_GEMM_A_BLOCK_BYTES) and every block re-reads all of B from L3 or memory;
 * in passes of at most this many rows of K, one block covers more rows and a pass reads
 * its slice of B once per block (ResNet50's 7×7 stage on x86, in the model: 14.6 ->
 * 12.7 ms). Smaller B (a conv's im2col block, ≤ 512 KB) stays in L2 and runs K whole:
 * the extra passes over C cost more there. */
#define EMBER_F32_GEMM_PACKED_KC 384
#define EMBER_F32_GEMM_B_CACHED_BYTES (1024 * 1024)
/* Packed B past this is taken to stream from past L2: its panels are prefetched. (A conv's
 * packed block of im2col columns is at most 512 KiB and meant to stay in L2.) */
#define EMBER_F32_GEMM_STREAMED_BYTES (512 * 1024)

/* Rows per A block in passes of kc: a multiple of mr, at least one panel. */
static size_t rows_per_block(size_t mr, size_t kc, size_t m)
{
    if (kc == 0)
        return m;
    const size_t panels = EMBER_F32_GEMM_A_BLOCK_BYTES / (kc * mr * sizeof(float));
    return panels > 1 ? panels * mr : mr;
}

/* Columns of B per span when K is at most EMBER_F32_GEMM_SHALLOW: each row of tiles of a
 * block of A runs along a span's columns of B (packed or in place, in L1) before the
 * next, so that C is written a few rows at a time along its rows. Column by column, every
 * row of the block took a line of C per panel, a panel lasting a few multiply-adds: with
 * many rows a few sets apart (planes of 112×112 floats are 784 lines apart, 16 sets mod
 * 64: 96 rows share 4 sets) they evicted each other half-written (x86: a 1×1 conv 16 ->
 * 96 at 112×112 0.74x the time; MobileNetV2's stem, 3×3 3 -> 32 stride 2 with B in
 * place, 0.95x). Deeper, the plain order (one panel, its B in L1 for every row) was as
 * fast or faster (96 -> 24 at 56×56 with 5-panel spans: 1.04x). */
#define EMBER_F32_GEMM_SHALLOW 32
#define EMBER_F32_GEMM_SPAN_BYTES (32 * 1024)

static size_t column_span(size_t nr, size_t k)
{
    if (k == 0 || k > EMBER_F32_GEMM_SHALLOW)
        return nr;
    return EMBER_F32_GEMM_SPAN_BYTES / (k * nr * sizeof(float)) * nr;
}

/* One pass over K of the walk: its operands and epilogue. */
typedef struct pass {
    const ember_f32_gemm_kernel *kernel;
    size_t m, n, k, k0, k_pass;
    const float *a_packed, *b;
    const int32_t *offsets;
    float *c;
    size_t c_row_stride;
    const ember_f32_gemm_params *params; /* the caller's: its biases */
    ember_f32_gemm_params tile;          /* this pass's epilogue */
    int last;                            /* the last pass: biases and clamp applied */
    size_t c_next;                       /* params->c_next_bytes on the last pass, else 0 */
    const char *spread; /* the caller's prefetch, shared out over the walk's tiles, or NULL */
    size_t tiles, tiles_done; /* of the whole walk */
} pass;

/* C's rows at least this far apart (half a page) are written in more streams than the
 * hardware prefetcher follows: a conv's output channels, a plane each (ResNet50's 56×56
 * and 28×28 stages), or the transposed GEMMs' channels (its 7×7 stage). Rows nearer,
 * down to a 14×14 plane's 784 bytes, are as far for it, but only passes of at least
 * EMBER_F32_GEMM_DEEP_PASS steps leave a tile time enough for the prefetches to pay:
 * ResNet50's 14×14 stage (K 256 to 1024) took 0.96x the time of the whole model; with
 * any K, MobileNetV2 (K 64 to 96 there) took 1.017x and ShuffleNet up to 1.037x. */
#define EMBER_F32_GEMM_FAR_ROW_BYTES 2048
#define EMBER_F32_GEMM_NEAR_ROW_BYTES 512
#define EMBER_F32_GEMM_DEEP_PASS 256

/* Rows [i, i + mr) of C's column tile j, `ahead` bytes on, prefetched for writing: the
 * lines a tile will write when C's rows are far apart. With ahead 0, the next tile of the
 * walk, while the one before it is multiplied (above): every column tile starts a new
 * line in each of a block's rows, and the lines the previous column left were evicted by
 * the time the walk came back to them. x86, one process alternating runs: ResNet50 0.96x
 * the time, the other models of the zoo within noise; with rows of any stride,
 * ShuffleNet's small planes took 1.02-1.04x. With params->c_next_bytes, the same tile of
 * the caller's next GEMM, a whole GEMM ahead (prefetch_next_call). */
static EMBER_PREFETCH_ONLY void prefetch_c_tile(const pass *w, size_t i, size_t j, size_t ahead)
{
    const size_t mr = w->kernel->mr, nr = w->kernel->nr;
    const size_t rows = w->m - i < mr ? w->m - i : mr, columns = w->n - j < nr ? w->n - j : nr;
    for (size_t r = i; r < i + rows; r++) {
        const float *row =
            (const float *)((const char *)w->c + r * w->c_row_stride + ahead) + j;
        if (ahead == 0) { /* used next: into L1 */
            __builtin_prefetch(row, 1, 3);
            __builtin_prefetch(row + columns - 1, 1, 3);
        } else { /* a whole GEMM on: into L2, past the operands in L1 */
            __builtin_prefetch(row, 1, 2);
            __builtin_prefetch(row + columns - 1, 1, 2);
        }
    }
}

/* The tile at (i, j) of the caller's next GEMM, when it said where that is: a conv written
 * one output row per GEMM (conv_implicit.c) writes a line or two of each of its output
 * channels per call, dozens of planes apart, more streams than the hardware prefetcher
 * follows, and each of those lines was read from memory when first stored. Prefetched a
 * whole GEMM ahead they arrive in time (Cascade Lake, bench_ab: SqueezeNet's stem, 3 -> 64
 * 3×3 stride 2 at 111×111, K = 27, 0.74x the time, below im2col's 0.77x; the whole model
 * 0.968-0.977x). */
static EMBER_PREFETCH_ONLY void prefetch_next_call(const pass *w, size_t i, size_t j)
{
    if (EMBER_PREFETCHES && w->c_next)
        prefetch_c_tile(w, i, j, w->c_next);
}

/* Share `part` of `parts` of [from, from + bytes), as the next tile's prefetch. */
static void share_of(pass *w, const void *from, size_t bytes, size_t part, size_t parts)
{
    w->tile.prefetch = ember_prefetch_share(from, bytes, part, parts, &w->tile.prefetch_bytes);
}

/* The tile at row i, column j. B's column tile j, rows [k0, k0 + k_pass), is the packed
 * panel's rows at b + j·k + k0·nr (offsets NULL) or the in-place rows at
 * b + j + offsets[k0 + p]; with k = 0 the panels are empty (maybe NULL) and the kernel
 * reads none: offsetting them would be undefined. */
static EMBER_ALWAYS_INLINE void tile_at(pass *w, size_t i, size_t j)
{
    const size_t mr = w->kernel->mr, nr = w->kernel->nr;
    const size_t m_tile = w->m - i < mr ? w->m - i : mr, n_tile = w->n - j < nr ? w->n - j : nr;
    const float *a_panel = w->k ? w->a_packed + i * w->k + w->k0 * mr : w->a_packed;
    const float *b_tile = w->offsets ? w->b + j : w->k ? w->b + j * w->k + w->k0 * nr : w->b;
    float *c_tile = (float *)((char *)w->c + i * w->c_row_stride) + j;
    if (EMBER_PREFETCHES && w->spread != NULL) /* (folded away where nothing prefetches) */
        share_of(w, w->spread, w->params->prefetch_bytes, w->tiles_done++, w->tiles);
    w->tile.bias_row = w->last && w->params->bias_row ? w->params->bias_row + i : NULL;
    w->tile.bias_col = w->last && w->params->bias_col ? w->params->bias_col + j : NULL;
    if (w->offsets)
        w->kernel->indirect(m_tile, n_tile, w->k_pass, a_panel, b_tile, w->offsets + w->k0,
                            c_tile, w->c_row_stride, &w->tile);
    else
        w->kernel->fn(m_tile, n_tile, w->k_pass, a_panel, b_tile, c_tile, w->c_row_stride,
                      &w->tile);
    if (EMBER_PREFETCHES)
        w->tile.prefetch = NULL; /* each share is one tile's */
}

/* Rows [i_block, i_end) of a pass: columns outer, each panel down every row of the block
 * (the next panel prefetched a share per row tile when B streams, and each tile's next C
 * tile), or in spans. The next block of A, [a_next, a_next + a_next_bytes) (none: 0), is
 * prefetched a share per tile of this block, unless the tiles prefetch something else:
 * a conv's filter is A, read from memory once per GEMM, and the first column of tiles
 * of a block waited on it while the others found it in L2 (ResNet50's 14×14 1×1 convs,
 * K 256 to 1024, 196 pixels: 7 columns of tiles, 18% of the time past the same conv run
 * alone, warm). Zen 5: those convs 0.84-0.91x the time (`ember-run --profile`, medians
 * of 5 alternated runs); bench_ab, 20 pairs: VGG19 0.960, SqueezeNet 0.966, Inception v2
 * 0.972, AlexNet 0.973, ShuffleNet 0.978, Inception v1 0.978, ResNet50 0.980,
 * DenseNet121 0.984, MobileNetV2 0.996. */
static void block_of_rows(pass *w, size_t i_block, size_t i_end, int stream_b,
                          const float *a_next, size_t a_next_bytes)
{
    const size_t mr = w->kernel->mr, nr = w->kernel->nr, span = column_span(nr, w->k_pass);
    if (span == nr) {
        const size_t tiles = (i_end - i_block + mr - 1) / mr;
        const size_t block_tiles = tiles * ((w->n + nr - 1) / nr);
        size_t block_done = 0;
        const int far_rows = w->c_row_stride >= EMBER_F32_GEMM_FAR_ROW_BYTES ||
                             (w->c_row_stride >= EMBER_F32_GEMM_NEAR_ROW_BYTES &&
                              w->k_pass >= EMBER_F32_GEMM_DEEP_PASS);
        for (size_t j = 0; j < w->n; j += nr)
            for (size_t i = i_block, t = 0; i < i_end; i += mr, t++) {
                if (EMBER_PREFETCHES && j + nr < w->n) {
                    /* B streamed from memory (past L2: the filter of a 7×7 conv with the
                     * pixels as rows): the next panel a share per row tile, so it arrives
                     * while this one is multiplied, not when its first tile stalls on it;
                     * the kernel spreads its share over its k steps */
                    if (stream_b)
                        share_of(w, w->b + (j + nr) * w->k + w->k0 * nr,
                                 w->k_pass * nr * sizeof(float), t, tiles);
                    if (far_rows)
                        prefetch_c_tile(w, i, j + nr, 0);
                }
                prefetch_next_call(w, i, j);
                if (EMBER_PREFETCHES && a_next_bytes && !stream_b && w->spread == NULL)
                    share_of(w, a_next, a_next_bytes, block_done, block_tiles);
                block_done++;
                tile_at(w, i, j);
            }
        return;
    }
    for (size_t j_span = 0; j_span < w->n; j_span += span) {
        const size_t j_end = w->n - j_span < span ? w->n : j_span + span;
        for (size_t i = i_block; i < i_end; i += mr)
            for (size_t j = j_span; j < j_end; j += nr) {
                prefetch_next_call(w, i, j);
                tile_at(w, i, j);
            }
    }
}

/* The end of the block of rows from `start`: block_rows on, or m; a last block of a
 * quarter or less joins the one before it (a block of one row, 49 pixels in blocks of
 * 24, streamed a filter past L2 for as long as a whole one: MobileNetV2's 7×7 1×1 convs,
 * K 960; x86, one process alternating runs: ResNet50 0.977x the time, Inception v2
 * 0.975x, DenseNet121 0.988x). m when start is m. */
static size_t block_end(size_t m, size_t start, size_t block_rows)
{
    const size_t end = m - start < block_rows ? m : start + block_rows;
    return m - end <= block_rows / 4 ? m : end;
}

static size_t passes(size_t k, size_t kc)
{
    return k == 0 ? 1 : (k + kc - 1) / kc;
}

static size_t tiles_of(const ember_f32_gemm_kernel *kernel, size_t m, size_t n)
{
    return (m + kernel->mr - 1) / kernel->mr * ((n + kernel->nr - 1) / kernel->nr);
}

/* The walk of both forms, in passes over K of kc (the last one applies the epilogue; the
 * others accumulate into C, unclamped), in blocks of rows of A. */
static void walk(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k, size_t kc,
                 const float *a_packed, const float *b, const int32_t *offsets, float *c,
                 size_t c_row_stride, const ember_f32_gemm_params *params, int stream_b)
{
    const size_t block_rows = rows_per_block(kernel->mr, kc, m);
    size_t tiles_done = 0;
    /* the caller's prefetch a share a tile; at once where the tiles prefetch B */
    const char *spread = EMBER_PREFETCHES && !stream_b ? (const char *)params->prefetch : NULL;
    if (params->prefetch != NULL && spread == NULL)
        ember_prefetch_l2(params->prefetch, params->prefetch_bytes);
    for (size_t k0 = 0; k0 < k || k0 == 0; k0 += kc) {
        const size_t k_pass = k - k0 < kc ? k - k0 : kc;
        const int last = k0 + k_pass >= k;
        pass w = {.kernel = kernel, .m = m, .n = n, .k = k, .k0 = k0, .k_pass = k_pass,
                  .a_packed = a_packed, .b = b, .offsets = offsets, .c = c,
                  .c_row_stride = c_row_stride, .params = params, .tile = *params,
                  .last = last, .c_next = last ? params->c_next_bytes : 0, .spread = spread,
                  .tiles = spread == NULL ? 0 : passes(k, kc) * tiles_of(kernel, m, n),
                  .tiles_done = tiles_done};
        w.tile.prefetch = NULL; /* the driver's to give, tile by tile */
        if (k0 > 0)
            w.tile.accumulate = 1;
        if (!w.last) {
            w.tile.min = -INFINITY;
            w.tile.max = INFINITY;
            w.tile.hard_swish = NULL;
        }
        for (size_t i_block = 0, i_end; i_block < m; i_block = i_end) {
            i_end = block_end(m, i_block, block_rows);
            const size_t next_rows = block_end(m, i_end, block_rows) - i_end;
            /* the next block's panels, whole: in one pass over K they lie end to end */
            const size_t a_next_bytes =
                k_pass == k ? (next_rows + kernel->mr - 1) / kernel->mr * kernel->mr * k *
                                  sizeof(float)
                            : 0;
            block_of_rows(&w, i_block, i_end, stream_b, a_packed + i_end * k, a_next_bytes);
        }
        tiles_done = w.tiles_done;
        if (k == 0)
            break;
    }
}

void ember_f32_gemm_packed(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k,
                           const float *a_packed, const float *b_packed, float *c,
                           size_t c_row_stride, const ember_f32_gemm_params *params)
{
    const size_t b_bytes = ember_f32_packed_b_floats(kernel->nr, k, n) * sizeof(float);
    size_t kc = k;
    if (k > EMBER_F32_GEMM_PACKED_KC && m > rows_per_block(kernel->mr, k, m) &&
        b_bytes > EMBER_F32_GEMM_B_CACHED_BYTES) {
        const size_t passes = (k + EMBER_F32_GEMM_PACKED_KC - 1) / EMBER_F32_GEMM_PACKED_KC;
        kc = (k + passes - 1) / passes;
    }
    walk(kernel, m, n, k, kc, a_packed, b_packed, NULL, c, c_row_stride, params,
         b_bytes > EMBER_F32_GEMM_STREAMED_BYTES);
}

void ember_f32_gemm_indirect(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k,
                             const float *a_packed, const float *b, const int32_t *offsets,
                             float *c, size_t c_row_stride, const ember_f32_gemm_params *params)
{
    walk(kernel, m, n, k, EMBER_F32_GEMM_INDIRECT_PASS, a_packed, b, offsets, c, c_row_stride,
         params, 0);
}

void ember_f32_gemv_packed(const ember_f32_gemm_kernel *kernel, size_t n, size_t k,
                           const float *x, const float *b_packed, float *y,
                           const ember_f32_gemm_params *params, int backward)
{
    /* a call per chunk of 64 columns (whole panels), the chunks from the last. Chunks
     * of 32 columns (x86, one AVX-512 panel) left a GRU whose R fits L2 at 1.006x a
     * forward walk, 64 at 0.96-0.98x, 128 and 256 at 0.93-1.08x (bench_ab, runs apart). */
    const size_t nr = kernel->nr, chunk = (64 + nr - 1) / nr * nr;
    if (!backward || n <= chunk) {
        kernel->gemv(nr, n, k, x, b_packed, y, params);
        return;
    }
    ember_f32_gemm_params part = *params;
    for (size_t j = (n - 1) / chunk * chunk;; j -= chunk) {
        part.bias_col = params->bias_col ? params->bias_col + j : NULL;
        kernel->gemv(nr, n - j < chunk ? n - j : chunk, k, x, b_packed + j * k, y + j, &part);
        if (j == 0)
            break;
    }
}
