/*
 * csrc/kernels/f32_pack.h — the GEMM operands' packing of kernels.h (generic C, shared by
 * every kernel), and the f32_pack_scaled family that packs B with its rows scaled: part of
 * that header, which includes it where the GEMM sits; include kernels/kernels.h, not this.
 */
#ifndef EMBER_KERNELS_F32_PACK_H
#define EMBER_KERNELS_F32_PACK_H

#ifndef EMBER_KERNELS_H
#error "include kernels/kernels.h, which includes this"
#endif

/*
 * Packing (generic C, shared by every kernel: only mr/nr differ).
 * Element (i, p) of A is a[i * rs + p * cs] (strides in elements, so a transposed
 * operand packs without a copy). Panels are consecutive: panel t holds rows
 * [t*mr, t*mr + mr), k groups of mr floats, rows past m zero-filled.
 */
size_t ember_f32_packed_a_floats(size_t mr, size_t m, size_t k); /* = ceil(m/mr)*mr*k */
void ember_f32_pack_a(size_t mr, size_t m, size_t k, const float *a, size_t rs, size_t cs,
                      float *packed);
/* Element (p, j) of B is b[p * rs + j * cs]; panel t holds columns [t*nr, t*nr + nr). */
size_t ember_f32_packed_b_floats(size_t nr, size_t k, size_t n); /* = ceil(n/nr)*nr*k */
void ember_f32_pack_b(size_t nr, size_t k, size_t n, const float *b, size_t rs, size_t cs,
                      float *packed);
/* k rows of B into the first k rows of the panels of a taller packed B, whose panels are
 * panel_floats (≥ nr·k) apart: a B packed a few rows at a time (conv's im2col). */
void ember_f32_pack_b_rows(size_t nr, size_t k, size_t n, const float *b, size_t rs,
                           size_t cs, float *packed, size_t panel_floats);

/* Rows of B scaled as they are packed (a scale fused before a 1×1 conv, core/op.h's
 * prologue), B's rows contiguous (element (p, j) at b[p · rs + j]): row p becomes
 * clamp(b·scale[p] + shift[p], min, max), each step rounded on its own (a multiply, the
 * add only where shift is not NULL, the clamp by comparisons: a NaN stays NaN) as the
 * scale op rounds them, so every kernel gives the scalar one's bits; the panels as
 * ember_f32_pack_b lays them, the columns past n zeros. */
typedef struct ember_f32_scaled_rows {
    const float *scale, *shift; /* k items each (shift may be NULL) */
    float min, max;
} ember_f32_scaled_rows;
typedef void (*ember_f32_pack_scaled_fn)(size_t nr, size_t k, size_t n, const float *b,
                                         size_t rs, const ember_f32_scaled_rows *rows,
                                         float *packed);
typedef struct ember_f32_pack_scaled_kernel {
    const char *name; /* "f32_pack_scaled__avx2_fma" */
    ember_isa isa;
    ember_f32_pack_scaled_fn fn;
} ember_f32_pack_scaled_kernel;
/* X(name, isa), best last: the scalar one vectorised by the compiler where it may (as
 * the hard swish's: not armv7's NEON). */
#define EMBER_F32_PACK_SCALED_KERNELS_GENERIC(X) X(f32_pack_scaled__scalar, EMBER_ISA_SCALAR)
#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_F32_PACK_SCALED_KERNELS(X)                                                   \
    EMBER_F32_PACK_SCALED_KERNELS_GENERIC(X) X(f32_pack_scaled__avx2_fma, EMBER_ISA_AVX2_FMA)
#else
#define EMBER_F32_PACK_SCALED_KERNELS(X) EMBER_F32_PACK_SCALED_KERNELS_GENERIC(X)
#endif
#define EMBER_DECLARE_F32_PACK_SCALED(name, isa)                                           \
    void ember_##name(size_t nr, size_t k, size_t n, const float *b, size_t rs,            \
                      const ember_f32_scaled_rows *rows, float *packed);
EMBER_F32_PACK_SCALED_KERNELS(EMBER_DECLARE_F32_PACK_SCALED)
#undef EMBER_DECLARE_F32_PACK_SCALED
extern const ember_f32_pack_scaled_kernel ember_f32_pack_scaled_kernels[];
extern const size_t ember_f32_pack_scaled_kernel_count;

#endif /* EMBER_KERNELS_F32_PACK_H */
