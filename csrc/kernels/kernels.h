/*
 * csrc/kernels — leaf compute functions. No allocation, no threads, no knowledge of
 * graphs or ops: callers (csrc/ops) own memory and blocking decisions.
 *
 * Families. A family is a contract (this header) served by several kernels, one per
 * (tile, ISA), each in its own file named after what it is, e.g.
 * x86/f32_gemm_6x16__avx2_fma.c. Every family has a portable scalar kernel under
 * generic/ that reads like the definition; every other kernel is tested against it.
 *
 * One list drives everything: EMBER_F32_GEMM_KERNELS (and EMBER_F32_V<OP>_KERNELS for
 * the elementwise families) below declares the kernels this build compiles. Dispatch
 * (dispatch.c), the kernel tests and the benchmarks expand it, so adding a kernel is one
 * line here plus its file.
 */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- CPU features */

typedef enum ember_isa {
    EMBER_ISA_SCALAR = 0,
    EMBER_ISA_SSE2,
    EMBER_ISA_AVX2_FMA,
    EMBER_ISA_AVX512F,
    EMBER_ISA_NEON_AARCH64,
    EMBER_ISA_NEON_ARMV7
} ember_isa;

/* Whether this CPU can execute code of `isa` (CPUID on x86, HWCAP on armv7). */
int ember_cpu_has(ember_isa isa);
const char *ember_isa_name(ember_isa isa);

/* The core's class, for the ops' cost models where a choice between two forms of an op
 * turned on the microarchitecture, not on the ISA: the same AVX2 Winograd transforms lost
 * to the direct conv on a Cascade Lake and won by a third on a Zen 5. GENERIC is every
 * core whose measurements the models were fitted to first (Cascade Lake, a Zen 3 before
 * its masked stores left the transforms, the Cortex-A counts); a class of its own is a
 * core measured to choose otherwise. */
typedef enum ember_core_class {
    EMBER_CORE_GENERIC = 0,
    EMBER_CORE_ZEN5, /* AMD family 1Ah (measured: EPYC 9005, model 2) */
    EMBER_CORE_ZEN4, /* AMD family 19h with AVX-512 (measured: EPYC 9004, model 11h);
                        the family's Zen 3 models have none */
    EMBER_CORE_SAPPHIRE_RAPIDS, /* Intel with AVX-512 and AMX or a Sapphire, Emerald or
                                   Granite Rapids model number (measured: a Xeon with
                                   AVX512-FP16 and AMX-BF16/INT8, no AMX-FP16; an Emerald
                                   Rapids, model CFh, AMX hidden); Cascade Lake has no AMX */
    EMBER_CORE_ZEN3 /* AMD family 19h without AVX-512 (measured: EPYC 7003, model 1) */
} ember_core_class;

const char *ember_core_class_name(ember_core_class core);

/* ---------------------------------------------------------------- software prefetch */

/* Prefetches are issued on x86 only, where they were measured (the GEMM driver's,
 * Winograd's filter): under QEMU a prefetch is instructions and nothing else, and no ARM
 * board was at hand to time one. */
#if defined(__x86_64__) || defined(__i386__)
#define EMBER_PREFETCHES 1
#else
#define EMBER_PREFETCHES 0
#endif

/* For a function that only prefetches: inlined where it is called. Left a function of its
 * own, GCC finds it has no effect (it writes nothing) and deletes every call, silently:
 * the GEMM driver's were compiled away so from cb9c2e0 to 8f4765e. */
#define EMBER_ALWAYS_INLINE inline __attribute__((always_inline))
#define EMBER_PREFETCH_ONLY EMBER_ALWAYS_INLINE

/* Share `part` of `parts` of the 64-byte lines of [from, from + bytes): where it starts,
 * and in *share_bytes its length (whole lines; the parts cover the range once). A range
 * is prefetched a share at a time, each ahead of the work that reads it. */
static inline const char *ember_prefetch_share(const void *from, size_t bytes, size_t part,
                                               size_t parts, size_t *share_bytes)
{
    const size_t lines = (bytes + 63) / 64;
    const size_t first = part * lines / parts, end = (part + 1) * lines / parts;
    *share_bytes = (end - first) * 64;
    return (const char *)from + first * 64;
}

/* Every line of [from, from + bytes), prefetched into L2 for reading at once (x86 only). */
static EMBER_PREFETCH_ONLY void ember_prefetch_l2(const void *from, size_t bytes)
{
    if (EMBER_PREFETCHES)
        for (size_t at = 0; at < bytes; at += 64)
            __builtin_prefetch((const char *)from + at, 0, 2);
}

/* ---------------------------------------------------------------- f32 pool row */

/*
 * A row of a 2-d pool's interior windows at horizontal step 2 (ops/pool.c): the kh input
 * rows of the window that lie inside the plane, each pointer at the first window's left
 * column, and n outputs of kw-wide windows (kw 2 or 3):
 *
 *   col_j  = rows[0][j] ⊕ rows[1][j] ⊕ … ⊕ rows[kh-1][j]     (left to right)
 *   y[i]   = (col_2i ⊕ col_2i+1 [⊕ col_2i+2]) / divisor       (divisor: sums only)
 *
 * ⊕ is max (a ⊕ b = b > a ? b : a: a NaN already held stays, a new one is dropped) or +,
 * in exactly that order, so every kernel gives the scalar one's bits, and those of the
 * per-row path (vertical combine, then the window). kh is 1 to EMBER_F32_POOL_ROW_MAX_KH.
 * Reads rows[t][0 .. 2n - 2 + kw) and nothing else; writes y[0 .. n). No alignment
 * required. Pure, thread-safe.
 */
#define EMBER_F32_POOL_ROW_MAX_KH 16
typedef void (*ember_f32_pool_row_fn)(size_t n, const float *const *rows, size_t kh, size_t kw,
                                      int is_max, float divisor, float *y);

typedef struct ember_f32_pool_row_kernel {
    const char *name; /* "f32_pool_row__avx2_fma" */
    ember_isa isa;
    ember_f32_pool_row_fn fn;
} ember_f32_pool_row_kernel;

/* X(name, isa): the kernels of this build, best last. The scalar one is the reference;
 * where it is the best a CPU has, the pools keep their per-row path, which the scalar
 * kernel does not beat. (GCC vectorises that path's flat loops for AArch64's NEON, not
 * for ARMv7's, which flushes subnormals: ARMv7 SqueezeNet's pools took 4x AArch64's
 * instructions.) */
#define EMBER_F32_POOL_ROW_KERNELS_GENERIC(X) X(f32_pool_row__scalar, EMBER_ISA_SCALAR)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_POOL_ROW_KERNELS(X)                                                      \
    EMBER_F32_POOL_ROW_KERNELS_GENERIC(X)                                                  \
    X(f32_pool_row__avx2_fma, EMBER_ISA_AVX2_FMA) X(f32_pool_row__avx512f, EMBER_ISA_AVX512F)
#elif defined(__arm__) && defined(__ARM_NEON)
#define EMBER_F32_POOL_ROW_KERNELS(X)                                                      \
    EMBER_F32_POOL_ROW_KERNELS_GENERIC(X) X(f32_pool_row__neon_armv7, EMBER_ISA_NEON_ARMV7)
#else
#define EMBER_F32_POOL_ROW_KERNELS(X) EMBER_F32_POOL_ROW_KERNELS_GENERIC(X)
#endif

/* A vector kernel's body: its row loop (a function of n, rows, kh, kw, is_max, divisor,
 * y, always inlined) called with is_max and kw constant, four copies without a branch on
 * them inside. */
#define EMBER_F32_POOL_ROW_SPECIALISED(row, n, rows, kh, kw, is_max, divisor, y)             \
    do {                                                                                     \
        if ((is_max) && (kw) == 3)                                                           \
            row(n, rows, kh, 3, 1, divisor, y);                                              \
        else if (is_max)                                                                     \
            row(n, rows, kh, 2, 1, divisor, y);                                              \
        else if ((kw) == 3)                                                                  \
            row(n, rows, kh, 3, 0, divisor, y);                                              \
        else                                                                                 \
            row(n, rows, kh, 2, 0, divisor, y);                                              \
    } while (0)

#define EMBER_DECLARE_F32_POOL_ROW(name, isa)                                              \
    void ember_##name(size_t n, const float *const *rows, size_t kh, size_t kw, int is_max, \
                      float divisor, float *y);
EMBER_F32_POOL_ROW_KERNELS(EMBER_DECLARE_F32_POOL_ROW)
#undef EMBER_DECLARE_F32_POOL_ROW

extern const ember_f32_pool_row_kernel ember_f32_pool_row_kernels[];
extern const size_t ember_f32_pool_row_kernel_count;

/* ---------------------------------------------------------------- f32 hard swish */

/*
 * The last step of a conv's fused epilogue, a gate by the result itself (the plan's
 * hardswish, y · clamp(y/6 + 1/2, 0, 1), written as mul, add, clamp and mul), applied in
 * place to rows of a result just written, while they are in cache:
 *
 *   y[r][j] = y[r][j] · clamp(y[r][j] · alpha + beta, lo, hi),   r < rows, j < n
 *
 * row r at (char *)y + r · row_stride. Each step rounds on its own (a multiply, an add,
 * the clamp by comparisons, so a NaN stays NaN, then the multiply), as the unfused ops
 * round: every kernel gives the scalar one's bits, and those of the plan's four ops.
 * Reads and writes exactly those floats; no alignment required. Pure, thread-safe.
 */
typedef struct ember_f32_hard_swish ember_f32_hard_swish;
typedef void (*ember_f32_hard_swish_fn)(size_t rows, size_t n, float *y, size_t row_stride,
                                        const ember_f32_hard_swish *gate);
struct ember_f32_hard_swish {
    float alpha, beta, lo, hi;
    ember_f32_hard_swish_fn apply; /* the kernel this CPU runs it with (the kernel config's) */
};

/* One value through it, the scalar kernels' definition. The clamp by comparisons a NaN
 * fails, so it stays NaN; -std=c11 contracts nothing into an FMA. */
static inline float ember_f32_hard_swish_of(float v, const ember_f32_hard_swish *gate)
{
    float t = v * gate->alpha + gate->beta;
    t = t < gate->lo ? gate->lo : t;
    t = t > gate->hi ? gate->hi : t;
    return v * t;
}

typedef struct ember_f32_hard_swish_kernel {
    const char *name; /* "f32_hard_swish__avx2_fma" */
    ember_isa isa;
    ember_f32_hard_swish_fn fn;
} ember_f32_hard_swish_kernel;

/* X(name, isa): the kernels of this build, best last. The scalar one is vectorised by the
 * compiler for aarch64's NEON; armv7's NEON is not IEEE (it flushes subnormals), so armv7
 * keeps the scalar loop, whose bits are the unfused ops'. (The GEMM micro-kernels apply
 * their hard swish in registers: these serve the conv paths that store otherwise.) */
#define EMBER_F32_HARD_SWISH_KERNELS_GENERIC(X) X(f32_hard_swish__scalar, EMBER_ISA_SCALAR)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_HARD_SWISH_KERNELS(X)                                                    \
    EMBER_F32_HARD_SWISH_KERNELS_GENERIC(X) X(f32_hard_swish__avx2_fma, EMBER_ISA_AVX2_FMA)
#else
#define EMBER_F32_HARD_SWISH_KERNELS(X) EMBER_F32_HARD_SWISH_KERNELS_GENERIC(X)
#endif

#define EMBER_DECLARE_F32_HARD_SWISH(name, isa)                                            \
    void ember_##name(size_t rows, size_t n, float *y, size_t row_stride,                  \
                      const ember_f32_hard_swish *gate);
EMBER_F32_HARD_SWISH_KERNELS(EMBER_DECLARE_F32_HARD_SWISH)
#undef EMBER_DECLARE_F32_HARD_SWISH

extern const ember_f32_hard_swish_kernel ember_f32_hard_swish_kernels[];
extern const size_t ember_f32_hard_swish_kernel_count;

/* ---------------------------------------------------------------- f32 GEMM */

/* Fused epilogue of a GEMM tile. */
typedef struct ember_f32_gemm_params {
    const float *bias_row; /* bias_row[i] added to row i of the tile, or NULL */
    const float *bias_col; /* bias_col[j] added to column j of the tile, or NULL */
    int accumulate;        /* nonzero: add the product to what C holds */
    float min, max;        /* clamp of the result: -INFINITY/INFINITY for none, 0/6 for ReLU6 */
    const ember_f32_hard_swish *hard_swish; /* after the clamp, or NULL (GEMV: ignored) */
    /* Driver only, 0 for none: bytes from C to the C of the caller's next GEMM of the same
     * shape (a conv's next output row), whose tiles the driver prefetches for writing as
     * it multiplies these (ember_f32_gemm_packed / _indirect). Kernels ignore it. */
    size_t c_next_bytes;
    /* NULL for none: bytes to prefetch into L2 while the call runs. Given to the driver
     * (say, the next block's filter rows), shared out over the call's tiles; given to a
     * kernel (a tile's share, or of the next panel of a B streamed from memory), spread
     * over its k steps, a line a step or so (ember_f32_gemm_prefetch_start). Prefetched
     * a few hundred lines at once between tiles, they filled the core's line fill
     * buffers and stalled it: x86, ResNet50's 3x3 512 -> 512 at 7x7 spent a fifth of
     * its time on those prefetch instructions. Kernels that do not prefetch ignore it. */
    const void *prefetch;
    size_t prefetch_bytes;
} ember_f32_gemm_params;

/* A kernel's start of params->prefetch: the bytes its k loop moves the prefetch address
 * on each step (rounded up: the last steps may ask for up to k bytes past the range, a
 * hint for lines nothing reads), or 0 when there is none, or the range was prefetched
 * at once here (more than a line a k step, or `spread` 0: a loop that does not spread it). */
static inline size_t ember_f32_gemm_prefetch_start(const ember_f32_gemm_params *params,
                                                   size_t k, int spread)
{
    if (!EMBER_PREFETCHES || params->prefetch == NULL || params->prefetch_bytes == 0)
        return 0;
    if (spread && params->prefetch_bytes <= 64 * k)
        return (params->prefetch_bytes + k - 1) / k;
    ember_prefetch_l2(params->prefetch, params->prefetch_bytes);
    return 0;
}

/*
 * Micro-kernel: one tile of at most MR rows × NR columns.
 *
 *   for i < m, j < n:
 *     C[i][j] = clamp((accumulate ? C[i][j] : 0) + bias_row[i] + bias_col[j]
 *                     + Σ_{p<k} A[i][p] · B[p][j], min, max)
 *     then, with params->hard_swish, C[i][j] · clamp(C[i][j] · alpha + beta, lo, hi)
 *     (rounded step by step, as the f32_hard_swish kernels: on the registers, where a
 *     pass over the stored tile cost MobileNetV3 as much as a pass of its own)
 *
 * `a` is a packed A panel: k groups of MR floats (A[0][p] … A[MR-1][p]), rows ≥ m
 * zero-filled by the packer. `b` is a packed B panel: k groups of NR floats, columns ≥ n
 * zero-filled. C is row-major: row i starts at (char *)c + i * c_row_stride, columns
 * contiguous. The kernel writes only C[i][j] for i < m, j < n (partial tiles are
 * stored partially), and reads bias_row[0..m) / bias_col[0..n) only, and exactly k*MR /
 * k*NR floats of the panels (nothing when k = 0). 1 ≤ m ≤ MR, 1 ≤ n ≤ NR, k ≥ 0.
 * No alignment is required of any pointer; params is never NULL.
 */
typedef void (*ember_f32_gemm_ukernel_fn)(size_t m, size_t n, size_t k, const float *a,
                                          const float *b, float *c, size_t c_row_stride,
                                          const ember_f32_gemm_params *params);

/*
 * The same tile with B read in place rather than from a packed panel (an implicit GEMM:
 * a convolution's B rows are runs of its input, so no im2col copy is made): row p of
 * the tile's B is the NR floats at b + offsets[p]. All NR floats of every row are read,
 * whatever n (the caller keeps them readable); columns ≥ n are computed but not stored.
 * Everything else as the packed micro-kernel.
 */
typedef void (*ember_f32_gemm_indirect_fn)(size_t m, size_t n, size_t k, const float *a,
                                           const float *b, const int32_t *offsets, float *c,
                                           size_t c_row_stride,
                                           const ember_f32_gemm_params *params);

/*
 * A row vector by a packed B (m = 1 with A read in place: a recurrent step, a one-frame
 * dense layer), every column at once:
 *
 *   for j < n:
 *     y[j] = clamp((accumulate ? y[j] : 0) + bias_row[0] + bias_col[j]
 *                  + Σ_{p<k} x[p] · B[p][j], min, max)
 *
 * b is B packed by ember_f32_pack_b with panel width `nr` (the GEMM kernel's nr, which
 * the GEMV kernel paired with it supports: see the list below); x holds k floats, y n
 * floats, both contiguous. Reads exactly x[0..k), the ceil(n/nr) panels and the biases'
 * used entries; writes exactly y[0..n). n = 0 does nothing. No alignment required;
 * params is never NULL. The same result as the GEMM with m = 1 up to the order of the
 * sums, without packing x or walking tiles (whose overhead a vector would pay per panel).
 */
typedef void (*ember_f32_gemv_fn)(size_t nr, size_t n, size_t k, const float *x,
                                  const float *b, float *y, const ember_f32_gemm_params *params);

typedef struct ember_f32_gemm_kernel {
    const char *name; /* "f32_gemm_6x16__avx2_fma" */
    size_t mr, nr;
    size_t narrow_nr; /* the paths' cost models count a tile of at most this many
                         columns as narrow_nr / nr of a whole one (AVX-512's narrow path,
                         16 of 32); else nr: AVX2's narrow path (8 of 16 columns) is paced
                         by the FMA latency and saves less, so it counts whole */
    ember_isa isa;
    ember_f32_gemm_ukernel_fn fn;
    ember_f32_gemm_indirect_fn indirect; /* NULL: this kernel has no in-place B form */
    const char *gemv_name;               /* "f32_gemv__avx2_fma" */
    ember_f32_gemv_fn gemv;              /* over this kernel's packed B (never NULL) */
} ember_f32_gemm_kernel;

/* X(name, mr, nr, narrow_nr, isa, indirect, gemv): the kernels of this build, best last
 * within each ISA family (a taller kernel listed before an ISA's best serves the GEMMs
 * whose rows fill its tiles: ember_f32_gemm_for_rows); `narrow_nr` the widest tile the
 * cost models count as narrow (nr: none, or a narrow path that saves too little);
 * `indirect` is INDIRECT(name) or NONE; `gemv` names the GEMV kernel for
 * this kernel's panels (f32_gemv__scalar serves any nr, f32_gemv__avx2_fma nr % 16 = 0,
 * f32_gemv__avx512f nr % 32 = 0, the NEON ones nr = 8). */
#define EMBER_F32_GEMM_KERNELS_GENERIC(X)                                                  \
    X(f32_gemm_4x4__scalar, 4, 4, 4, EMBER_ISA_SCALAR, INDIRECT, f32_gemv__scalar)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_GEMM_KERNELS(X)                                                          \
    EMBER_F32_GEMM_KERNELS_GENERIC(X)                                                      \
    X(f32_gemm_6x16__avx2_fma, 6, 16, 16, EMBER_ISA_AVX2_FMA, INDIRECT,                    \
      f32_gemv__avx2_fma)                                                                  \
    X(f32_gemm_12x32__avx512f, 12, 32, 16, EMBER_ISA_AVX512F, INDIRECT, f32_gemv__avx512f) \
    X(f32_gemm_8x32__avx512f, 8, 32, 16, EMBER_ISA_AVX512F, INDIRECT, f32_gemv__avx512f)
#elif defined(__aarch64__)
#define EMBER_F32_GEMM_KERNELS(X)                                                          \
    EMBER_F32_GEMM_KERNELS_GENERIC(X)                                                      \
    X(f32_gemm_8x8__neon_aarch64, 8, 8, 8, EMBER_ISA_NEON_AARCH64, INDIRECT,               \
      f32_gemv__neon_aarch64)
#elif defined(__arm__) && defined(__ARM_NEON)
#define EMBER_F32_GEMM_KERNELS(X)                                                          \
    EMBER_F32_GEMM_KERNELS_GENERIC(X)                                                      \
    X(f32_gemm_4x8__neon_armv7, 4, 8, 8, EMBER_ISA_NEON_ARMV7, INDIRECT,                   \
      f32_gemv__neon_armv7)
#else
#define EMBER_F32_GEMM_KERNELS(X) EMBER_F32_GEMM_KERNELS_GENERIC(X)
#endif

/* A kernel without an in-place form declares one it does not define: never referenced.
 * A GEMV kernel shared by two GEMM kernels is declared twice, which C allows. */
#define EMBER_DECLARE_F32_GEMM(name, mr, nr, narrow_nr, isa, indirect, gemv)               \
    void ember_##name(size_t m, size_t n, size_t k, const float *a, const float *b, float *c, \
                      size_t c_row_stride, const ember_f32_gemm_params *params);           \
    void ember_##name##_indirect(size_t m, size_t n, size_t k, const float *a,             \
                                 const float *b, const int32_t *offsets, float *c,         \
                                 size_t c_row_stride, const ember_f32_gemm_params *params);  \
    void ember_##gemv(size_t nr_, size_t n, size_t k, const float *x, const float *b,       \
                      float *y, const ember_f32_gemm_params *params);
EMBER_F32_GEMM_KERNELS(EMBER_DECLARE_F32_GEMM)
#undef EMBER_DECLARE_F32_GEMM

/* Every kernel of the list, in list order, and how many there are. */
extern const ember_f32_gemm_kernel ember_f32_gemm_kernels[];
extern const size_t ember_f32_gemm_kernel_count;

/* The kernel for a GEMM of m rows: `kernel`, or a taller one of the same ISA and nr whose
 * last tile leaves at most 1/20 of m empty (x86 AVX-512: the 12-row kernel for 12, 24,
 * 96, 128, 256, 512 … rows, not 16, 32 or 64; bench_ab on Cascade Lake, every conv so
 * chosen: ResNet50 0.968x the time, Inception v2 0.973x, SqueezeNet 0.983x, DenseNet121
 * 0.989x; with 64 too, ResNet50 0.951x but SqueezeNet 0.995x and DenseNet121 1.008x), or
 * whose rows leave `kernel` a partial last tile too (m not a multiple of its mr: then the
 * taller's whole tiles are the cheaper ones; ShuffleNet's convs of 28, 34 and 68 rows,
 * 0.98x the time). Every conv with m a multiple of 8 keeps its kernel: all 12 rows for
 * every m of 12 or more took SqueezeNet 1.01-1.03x, MobileNetV2 1.015x. */
const ember_f32_gemm_kernel *ember_f32_gemm_for_rows(const ember_f32_gemm_kernel *kernel,
                                                     size_t m);

/* Packing the operands (ember_f32_pack_a / pack_b and their sizes), and B packed with its
 * rows scaled (the f32_pack_scaled kernels). */
#include "kernels/f32_pack.h"

/*
 * Whole GEMM over packed operands: C (m × n, row stride c_row_stride bytes) =
 * epilogue(A · B), tiles walked by the kernel's mr × nr. params->bias_row has m entries
 * and bias_col n entries when not NULL (the driver offsets them per tile). a_packed and
 * b_packed come from ember_f32_pack_a / pack_b with this kernel's mr / nr. m = 0 or n = 0
 * does nothing. No allocation, single-threaded; concurrent calls on disjoint C are safe.
 */
void ember_f32_gemm_packed(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k,
                           const float *a_packed, const float *b_packed, float *c,
                           size_t c_row_stride, const ember_f32_gemm_params *params);

/*
 * The same GEMM with B read in place: B[p][j] = b[offsets[p] + j] (see
 * ember_f32_gemm_indirect_fn); kernel->indirect must not be NULL. Column tile j reads
 * b + j + offsets[p] over whole tiles: b[offsets[p] + j] must be readable for every
 * j < ceil(n / nr) · nr.
 */
/* K per pass of the in-place form: its B rows are spread over the input (a tap's row is
 * a run of one channel plane), so a whole K's rows miss L1 and the TLB; a pass's rows
 * stay in both while every A panel of the block reads them (a 3x3 conv 128 -> 32 at
 * 56x56: 3.9 -> 3.6 ms on x86). Packed B is contiguous and runs K whole, so up to this
 * K both forms sum in the same order. */
#define EMBER_F32_GEMM_INDIRECT_PASS 256
void ember_f32_gemm_indirect(const ember_f32_gemm_kernel *kernel, size_t m, size_t n, size_t k,
                             const float *a_packed, const float *b, const int32_t *offsets,
                             float *c, size_t c_row_stride, const ember_f32_gemm_params *params);

/*
 * The GEMV over packed operands (kernel->gemv over b_packed, from ember_f32_pack_b with
 * this kernel's nr), its panels walked front to back, or with `backward` from the last
 * to the first: the same bits either way, each y[j] being one panel's sum. Why backward:
 * a GEMV repeated on a B larger than a cache level (a recurrent layer's R, read every
 * step) evicts each line front to back before its next use, so every pass misses; a
 * caller alternating the direction call by call starts each pass on the lines the last
 * one left cached.
 */
void ember_f32_gemv_packed(const ember_f32_gemm_kernel *kernel, size_t n, size_t k,
                           const float *x, const float *b_packed, float *y,
                           const ember_f32_gemm_params *params, int backward);

/* ---------------------------------------------------------------- f32 elementwise math */

/*
 * Elementwise transcendental families: vexp, vsigmoid, vtanh, verf.
 *
 *   y[i] = f(x[i]) for i < n
 *
 * n = 0 does nothing. y may equal x (in place); otherwise the ranges must not overlap.
 * Exactly x[0..n) is read and y[0..n) written (tails are masked or go through a stack
 * copy). No alignment is required. NaN in gives NaN out; exp(+inf) = +inf,
 * exp(-inf) = +0, sigmoid / tanh / erf saturate to their limits. The error bounds,
 * measured against double-precision libm over a dense sweep, are in README.md and
 * asserted by tests/c/test_vmath.c. The armv7 NEON kernels flush subnormal inputs and
 * results to zero (the ARMv7 Advanced SIMD unit has no subnormals). The scalar kernels
 * call libm. Pure functions: no state, thread-safe.
 */
typedef void (*ember_f32_vunary_fn)(size_t n, const float *x, float *y);

typedef struct ember_f32_vunary_kernel {
    const char *name; /* "f32_vexp__avx2_fma" */
    ember_isa isa;
    ember_f32_vunary_fn fn;
} ember_f32_vunary_kernel;

/* X(name, isa) per family: the kernels of this build, best last within each family. */
#define EMBER_F32_VEXP_KERNELS_GENERIC(X) X(f32_vexp__scalar, EMBER_ISA_SCALAR)
#define EMBER_F32_VSIGMOID_KERNELS_GENERIC(X) X(f32_vsigmoid__scalar, EMBER_ISA_SCALAR)
#define EMBER_F32_VTANH_KERNELS_GENERIC(X) X(f32_vtanh__scalar, EMBER_ISA_SCALAR)
#define EMBER_F32_VERF_KERNELS_GENERIC(X) X(f32_verf__scalar, EMBER_ISA_SCALAR)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_VEXP_KERNELS(X)                                                          \
    EMBER_F32_VEXP_KERNELS_GENERIC(X) X(f32_vexp__avx2_fma, EMBER_ISA_AVX2_FMA)             \
    X(f32_vexp__avx512f, EMBER_ISA_AVX512F)
#define EMBER_F32_VSIGMOID_KERNELS(X)                                                      \
    EMBER_F32_VSIGMOID_KERNELS_GENERIC(X) X(f32_vsigmoid__avx2_fma, EMBER_ISA_AVX2_FMA)     \
    X(f32_vsigmoid__avx512f, EMBER_ISA_AVX512F)
#define EMBER_F32_VTANH_KERNELS(X)                                                         \
    EMBER_F32_VTANH_KERNELS_GENERIC(X) X(f32_vtanh__avx2_fma, EMBER_ISA_AVX2_FMA)           \
    X(f32_vtanh__avx512f, EMBER_ISA_AVX512F)
#define EMBER_F32_VERF_KERNELS(X)                                                          \
    EMBER_F32_VERF_KERNELS_GENERIC(X) X(f32_verf__avx2_fma, EMBER_ISA_AVX2_FMA)             \
    X(f32_verf__avx512f, EMBER_ISA_AVX512F)
#elif defined(__aarch64__)
#define EMBER_F32_VEXP_KERNELS(X)                                                          \
    EMBER_F32_VEXP_KERNELS_GENERIC(X) X(f32_vexp__neon_aarch64, EMBER_ISA_NEON_AARCH64)
#define EMBER_F32_VSIGMOID_KERNELS(X)                                                      \
    EMBER_F32_VSIGMOID_KERNELS_GENERIC(X)                                                  \
    X(f32_vsigmoid__neon_aarch64, EMBER_ISA_NEON_AARCH64)
#define EMBER_F32_VTANH_KERNELS(X)                                                         \
    EMBER_F32_VTANH_KERNELS_GENERIC(X) X(f32_vtanh__neon_aarch64, EMBER_ISA_NEON_AARCH64)
#define EMBER_F32_VERF_KERNELS(X)                                                          \
    EMBER_F32_VERF_KERNELS_GENERIC(X) X(f32_verf__neon_aarch64, EMBER_ISA_NEON_AARCH64)
#elif defined(__arm__) && defined(__ARM_NEON)
#define EMBER_F32_VEXP_KERNELS(X)                                                          \
    EMBER_F32_VEXP_KERNELS_GENERIC(X) X(f32_vexp__neon_armv7, EMBER_ISA_NEON_ARMV7)
#define EMBER_F32_VSIGMOID_KERNELS(X)                                                      \
    EMBER_F32_VSIGMOID_KERNELS_GENERIC(X)                                                  \
    X(f32_vsigmoid__neon_armv7, EMBER_ISA_NEON_ARMV7)
#define EMBER_F32_VTANH_KERNELS(X)                                                         \
    EMBER_F32_VTANH_KERNELS_GENERIC(X) X(f32_vtanh__neon_armv7, EMBER_ISA_NEON_ARMV7)
#define EMBER_F32_VERF_KERNELS(X)                                                          \
    EMBER_F32_VERF_KERNELS_GENERIC(X) X(f32_verf__neon_armv7, EMBER_ISA_NEON_ARMV7)
#else
#define EMBER_F32_VEXP_KERNELS(X) EMBER_F32_VEXP_KERNELS_GENERIC(X)
#define EMBER_F32_VSIGMOID_KERNELS(X) EMBER_F32_VSIGMOID_KERNELS_GENERIC(X)
#define EMBER_F32_VTANH_KERNELS(X) EMBER_F32_VTANH_KERNELS_GENERIC(X)
#define EMBER_F32_VERF_KERNELS(X) EMBER_F32_VERF_KERNELS_GENERIC(X)
#endif

#define EMBER_DECLARE_F32_VUNARY(name, isa)                                                \
    void ember_##name(size_t n, const float *x, float *y);
EMBER_F32_VEXP_KERNELS(EMBER_DECLARE_F32_VUNARY)
EMBER_F32_VSIGMOID_KERNELS(EMBER_DECLARE_F32_VUNARY)
EMBER_F32_VTANH_KERNELS(EMBER_DECLARE_F32_VUNARY)
EMBER_F32_VERF_KERNELS(EMBER_DECLARE_F32_VUNARY)
#undef EMBER_DECLARE_F32_VUNARY

/* Every kernel of each family's list, in list order, and how many there are. */
extern const ember_f32_vunary_kernel ember_f32_vexp_kernels[];
extern const size_t ember_f32_vexp_kernel_count;
extern const ember_f32_vunary_kernel ember_f32_vsigmoid_kernels[];
extern const size_t ember_f32_vsigmoid_kernel_count;
extern const ember_f32_vunary_kernel ember_f32_vtanh_kernels[];
extern const size_t ember_f32_vtanh_kernel_count;
extern const ember_f32_vunary_kernel ember_f32_verf_kernels[];
extern const size_t ember_f32_verf_kernel_count;

/* ---------------------------------------------------------------- f32 depthwise conv */

#include "kernels/f32_dwconv.h"

/* ---------------------------------------------------------------- f32 Winograd transforms */

#include "kernels/f32_winograd.h"

/* ---------------------------------------------------------------- f32 softmax row */

/*
 * A softmax over one contiguous row of n floats (ops/softmax.c, the innermost axes):
 *
 *   m = max_i x[i] (a NaN skipped: x > m ? x : m),  e[i] = exp(x[i] − m),
 *   s = Σ_i e[i],  y[i] = e[i] · (1 / s)
 *
 * exp is `vexp` (the CPU's exp kernel: the scalar kernel calls it, the vector ones run
 * its recipe inline, the same bits); the max in 8 running lanes and the sum in 8 running
 * lanes (lane j over the i ≡ j mod 8 of whole groups of 8, then the lanes in order, then
 * the last n mod 8 in order), so every kernel gives the scalar one's bits. Reads
 * x[0 .. n), writes y[0 .. n); y may be x. n ≥ 1. Pure, thread-safe.
 */
typedef void (*ember_f32_softmax_row_fn)(size_t n, const float *x, float *y,
                                         ember_f32_vunary_fn vexp);

typedef struct ember_f32_softmax_row_kernel {
    const char *name; /* "f32_softmax_row__avx2_fma" */
    ember_isa isa;
    ember_f32_softmax_row_fn fn;
} ember_f32_softmax_row_kernel;

/* X(name, isa): the kernels of this build, best last (AVX2's serves AVX-512 too: its
 * lanes are the definition's 8). */
#define EMBER_F32_SOFTMAX_ROW_KERNELS_GENERIC(X) X(f32_softmax_row__scalar, EMBER_ISA_SCALAR)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_SOFTMAX_ROW_KERNELS(X)                                                   \
    EMBER_F32_SOFTMAX_ROW_KERNELS_GENERIC(X) X(f32_softmax_row__avx2_fma, EMBER_ISA_AVX2_FMA)
#else
#define EMBER_F32_SOFTMAX_ROW_KERNELS(X) EMBER_F32_SOFTMAX_ROW_KERNELS_GENERIC(X)
#endif

#define EMBER_DECLARE_F32_SOFTMAX_ROW(name, isa)                                           \
    void ember_##name(size_t n, const float *x, float *y, ember_f32_vunary_fn vexp);
EMBER_F32_SOFTMAX_ROW_KERNELS(EMBER_DECLARE_F32_SOFTMAX_ROW)
#undef EMBER_DECLARE_F32_SOFTMAX_ROW

extern const ember_f32_softmax_row_kernel ember_f32_softmax_row_kernels[];
extern const size_t ember_f32_softmax_row_kernel_count;

/* ---------------------------------------------------------------- dispatch */

/* The kernel chosen for each family on this CPU: the last kernel of the family's list
 * whose ISA the CPU has. Filled once (pthread_once), thread-safe, never NULL.
 * EMBER_ISA in the environment, read at that first call, overrides the choice (for tests
 * and comparisons): "scalar" forces the scalar kernels; another ember_isa_name
 * ("avx2_fma", "avx512f", "neon_aarch64", ...) forces that ISA's kernel when the CPU has
 * it and the family has one, and is ignored otherwise, as is an unknown name. */
typedef struct ember_kernel_config {
    const ember_f32_gemm_kernel *f32_gemm;
    const ember_f32_vunary_kernel *f32_vexp;
    const ember_f32_vunary_kernel *f32_vsigmoid;
    const ember_f32_vunary_kernel *f32_vtanh;
    const ember_f32_vunary_kernel *f32_verf;
    const ember_f32_dwconv_kernel *f32_dwconv;
    const ember_f32_winograd_kernel *f32_winograd;
    const ember_f32_hard_swish_kernel *f32_hard_swish;
    const ember_f32_pack_scaled_kernel *f32_pack_scaled;
    const ember_f32_pool_row_kernel *f32_pool_row;
    const ember_f32_softmax_row_kernel *f32_softmax_row;
    ember_core_class core; /* CPUID's, or EMBER_CORE's ("generic", "zen5", "zen4",
                              "sapphire_rapids") */
} ember_kernel_config;

const ember_kernel_config *ember_kernel_config_get(void);

/* What is wrong with EMBER_ISA (it names no ISA, or one this CPU lacks) or EMBER_CORE (it
 * names no core class), written into `message`; 0 when they are unset or usable.
 * Runnables refuse to be made while one is. */
int ember_dispatch_problem(char *message, size_t size);

/* "family kernel" lines of the chosen kernels (ember_kernels in the public API). */
const char *ember_kernels_text(void);

#endif /* EMBER_KERNELS_H */
