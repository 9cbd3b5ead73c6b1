/*
 * ember_f32_gemm_packed — the driver: walks a GEMM over packed operands in mr × nr tiles.
 *
 * Loop order (BLIS's, without the kc split): rows of A are taken in blocks of
 * EMBER_F32_GEMM_A_BLOCK_BYTES (sized to stay in L2); inside a block, columns are the
 * outer loop and rows the inner one, so one packed B panel (k × nr floats) stays hot in
 * L1 while the block's A panels (k × mr each) stream past it from L2. Each B panel is
 * then read once per A block instead of once per A panel, and the A block is read from
 * L2 for every B panel rather than from memory.
 *
 * Edge tiles get partial m / n; the kernels store only those, so C needs no padding.
 * No allocation, no threads: a caller that wants threads splits C into column ranges
 * (nr multiples) or row ranges (mr multiples) and calls this on each.
 */
#include "kernels/kernels.h"

/* Bytes of packed A processed per pass over B: a fraction of the smallest L2 we target
 * (Cortex-A53: 128 KiB–1 MiB shared; x86: ≥ 256 KiB), leaving room for B and C. */
#define EMBER_F32_GEMM_A_BLOCK_BYTES (96 * 1024)

void ember_f32_gemm_packed(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k,
                           const float *a_packed, const float *b_packed, float *c,
                           size_t c_row_stride, const ember_f32_gemm_params *params)
{
    const size_t mr = kernel->mr, nr = kernel->nr;
    const ember_f32_gemm_ukernel_fn fn = kernel->fn;

    /* Rows per A block: a multiple of mr, at least one panel. */
    size_t block_rows = mr;
    if (k > 0) {
        const size_t panels = EMBER_F32_GEMM_A_BLOCK_BYTES / (k * mr * sizeof(float));
        if (panels > 1) {
            block_rows = panels * mr;
        }
    } else {
        block_rows = m;
    }

    ember_f32_gemm_params tile = *params;
    for (size_t i_block = 0; i_block < m; i_block += block_rows) {
        const size_t i_end = m - i_block < block_rows ? m : i_block + block_rows;
        for (size_t j = 0; j < n; j += nr) {
            const size_t n_tile = n - j < nr ? n - j : nr;
            /* Panel j/nr starts at (j/nr)*nr*k. With k = 0 the panels are empty (maybe
             * NULL) and the kernel reads none: offsetting them would be undefined. */
            const float *b_panel = k ? b_packed + j * k : b_packed;
            tile.bias_col = params->bias_col ? params->bias_col + j : NULL;
            for (size_t i = i_block; i < i_end; i += mr) {
                const size_t m_tile = m - i < mr ? m - i : mr;
                tile.bias_row = params->bias_row ? params->bias_row + i : NULL;
                fn(m_tile, n_tile, k, k ? a_packed + i * k : a_packed, b_panel,
                   (float *)((char *)c + i * c_row_stride) + j, c_row_stride, &tile);
            }
        }
    }
}
