/*
 * csrc/kernels/f32_winograd.h — the Winograd F(2×2, 3×3) transform family of kernels.h
 * (input, output, x86 store, filter; ops/conv_winograd.c calls them): part of that header,
 * which includes it where the family sits; include kernels/kernels.h, not this.
 */
#ifndef EMBER_KERNELS_F32_WINOGRAD_H
#define EMBER_KERNELS_F32_WINOGRAD_H

#ifndef EMBER_KERNELS_H
#error "include kernels/kernels.h, which includes this"
#endif

/*
 * The transforms of Winograd's F(2×2, 3×3) (ops/conv_winograd.c), over a run of n tiles
 * (2×2 output blocks) side by side in one row of tiles.
 *
 * Input: V = Bᵀ d B per tile, d its 4×4 input patch: d[i][j] = rows[i][x0 + 2t + j] for
 * tile t, a column outside [0, width) or a NULL row reading as zero (the padding: rows
 * are read over [0, width) only); V's element (a, b) goes to v[(4a + b) · v_stride + t] —
 * 16 runs of n floats (lanes of packed B panels).
 *   Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *
 * Output: Y = Aᵀ M A + bias per tile, M's element (a, b) at m[(4a + b) · m_stride + t];
 * Y's (r, c) goes to y[(2r + c) · n + t].
 *   Aᵀ = [1 1 1 0; 0 1 -1 -1]
 * Store (x86 only; NULL elsewhere): the output's Y straight into the image's rows, as
 * ember_f32_winograd_rows says: Y(r, c) of tile t is column 2t + c of rows[r], plus that
 * column of residual[r] (unless NULL), clamped to [min, max] (NaN kept) — the output's
 * y and ops/conv_winograd.c's store_row in one pass.
 *
 * Filter: U = G g Gᵀ per element e < n, g's 9 taps interleaved in runs of
 * EMBER_F32_WINOGRAD_FILTER_RUN elements (tap (r, c) of element e at g[(e / RUN) · 9 ·
 * RUN + (3r + c) · RUN + e % RUN], the last run readable whole), U's element (a, b) to
 * u[(4a + b) · u_stride + e]. One stream to read: nine taps a megabyte apart (a 512 ×
 * 512 filter) fell in the same L1 sets and took twice the GEMMs' time.
 *   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *
 * Adds, subtracts and halvings in one fixed order: every kernel gives the scalar one's
 * bits. No alignment required; outputs overlap no input. Pure, thread-safe.
 */
typedef void (*ember_f32_winograd_input_fn)(size_t n, const float *const rows[4],
                                            ptrdiff_t x0, ptrdiff_t width, float *v,
                                            size_t v_stride);
typedef void (*ember_f32_winograd_output_fn)(size_t n, const float *m, size_t m_stride,
                                             float bias, float *y);
/* A run's output rows, each from the run's first column: `columns` of them stored (2n,
 * or fewer at the image's right edge); rows[1] NULL past the image's bottom. A residual
 * row may be its output row (each column is read before it is written). */
typedef struct {
    float *rows[2];
    const float *residual[2];
    size_t columns;
    float bias, min, max;
} ember_f32_winograd_rows;
typedef void (*ember_f32_winograd_store_fn)(size_t n, const float *m, size_t m_stride,
                                            const ember_f32_winograd_rows *out);
#define EMBER_F32_WINOGRAD_FILTER_RUN 32
typedef void (*ember_f32_winograd_filter_fn)(size_t n, const float *g, float *u,
                                             size_t u_stride);

typedef struct ember_f32_winograd_kernel {
    const char *name; /* "f32_winograd__avx2_fma" */
    ember_isa isa;
    /* 1: the input transform pads in place (masked loads) and is best given the planes'
     * rows, and `store` writes the image's rows; 0: the input transform copies an edge's
     * rows into padded lines (the body's loops), and is best given padded lines, which
     * the caller keeps across runs (x0 ≥ 0, width the line's), and `store` is NULL */
    int in_place;
    ember_f32_winograd_input_fn input;
    ember_f32_winograd_output_fn output;
    ember_f32_winograd_store_fn store; /* NULL: output, then the caller stores */
    ember_f32_winograd_filter_fn filter;
} ember_f32_winograd_kernel;

/* X(isa_suffix, isa, in_place, store): ember_f32_winograd_{input,output,filter}__<isa_suffix>
 * and `store` (NULL, or ember_f32_winograd_store__<isa_suffix> where in_place), in the file
 * f32_winograd__<isa_suffix>.c. The NEON kernels share their intrinsics
 * (f32_winograd__neon.h): on armv7 GCC leaves the body's loops scalar (its NEON is not
 * IEEE: it flushes subnormals), on aarch64 it vectorises them but with the input's row
 * transforms through a stack buffer. */
#define EMBER_F32_WINOGRAD_KERNELS_GENERIC(X) X(scalar, EMBER_ISA_SCALAR, 0, NULL)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_WINOGRAD_KERNELS(X)                                                      \
    EMBER_F32_WINOGRAD_KERNELS_GENERIC(X)                                                  \
    X(avx2_fma, EMBER_ISA_AVX2_FMA, 1, ember_f32_winograd_store__avx2_fma)                   \
    X(avx512f, EMBER_ISA_AVX512F, 1, ember_f32_winograd_store__avx512f)
#elif defined(__arm__) && defined(__ARM_NEON)
#define EMBER_F32_WINOGRAD_KERNELS(X)                                                      \
    EMBER_F32_WINOGRAD_KERNELS_GENERIC(X) X(neon_armv7, EMBER_ISA_NEON_ARMV7, 0, NULL)
#elif defined(__aarch64__)
#define EMBER_F32_WINOGRAD_KERNELS(X)                                                      \
    EMBER_F32_WINOGRAD_KERNELS_GENERIC(X) X(neon_aarch64, EMBER_ISA_NEON_AARCH64, 0, NULL)
#else
#define EMBER_F32_WINOGRAD_KERNELS(X) EMBER_F32_WINOGRAD_KERNELS_GENERIC(X)
#endif

#define EMBER_DECLARE_F32_WINOGRAD(suffix, isa, in_place, store)                           \
    void ember_f32_winograd_input__##suffix(size_t n, const float *const rows[4],         \
                                            ptrdiff_t x0, ptrdiff_t width, float *v,       \
                                            size_t v_stride);                              \
    void ember_f32_winograd_output__##suffix(size_t n, const float *m, size_t m_stride,   \
                                             float bias, float *y);                        \
    void ember_f32_winograd_filter__##suffix(size_t n, const float *g, float *u,          \
                                             size_t u_stride);
EMBER_F32_WINOGRAD_KERNELS(EMBER_DECLARE_F32_WINOGRAD)
#undef EMBER_DECLARE_F32_WINOGRAD
#if defined(__x86_64__) || defined(_M_X64)
void ember_f32_winograd_store__avx2_fma(size_t n, const float *m, size_t m_stride,
                                        const ember_f32_winograd_rows *out);
void ember_f32_winograd_store__avx512f(size_t n, const float *m, size_t m_stride,
                                       const ember_f32_winograd_rows *out);
#endif

extern const ember_f32_winograd_kernel ember_f32_winograd_kernels[];
extern const size_t ember_f32_winograd_kernel_count;

#endif /* EMBER_KERNELS_F32_WINOGRAD_H */
