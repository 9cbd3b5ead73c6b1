/*
 * f32_gemm_4x8__neon_armv7 — 4 rows × 8 columns, ARMv7 NEON (hard-float ABI).
 *
 * ARMv7 NEON has no fused multiply-add before VFPv4, so the kernel uses vmla (multiply,
 * round, add, round): results differ from the scalar kernel by rounding, which the
 * tests allow for (tolerance relative to Σ|a·b|).
 *
 * Register budget (16 q): 8 accumulators (4 rows × 2 q of 4 columns), 1 q for the 4 A
 * values of a k step, 2 q for the 8 B values, twice (alternate steps): 14. vmla by scalar
 * multiplies by one lane of a d register, so A needs no broadcast. Per k step: 2 loads,
 * 8 vmla; the k loops are assembly (accumulate_packed / _indirect), the epilogue C.
 *
 * Tails: as the aarch64 kernel — panels read exactly, rows ≥ m never loaded or stored,
 * a partial row (n < 8) goes through an 8-float stack copy. No alignment is assumed.
 */
#include "kernels/kernels.h"

#include <arm_neon.h>
#include <string.h>

#include "kernels/arm/f32_gemm_epilogue__neon.h"

enum { MR = 4, NR = 8 };

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Row p of B: packed (offsets NULL, the branch folds away) or in place (kernels.h). */
#define B_ROW(b, offsets, p) ((offsets) ? (b) + (offsets)[p] : (b) + (p) * NR)
#define one_row_madd vmlaq_n_f32
#include "kernels/arm/f32_gemm_one_row__neon.h"

/*
 * The k loops of a tile of m > 1 rows, in assembly: 4 (packed) or 2 (in place) k steps
 * per iteration share one subs / bne and the loads post-increment (42 instructions per 4
 * packed steps instead of ~54: GCC spends an add, a compare and a branch per step). Steps
 * alternate between two register sets (A in d0-d1 / d6-d7, which vmla by scalar needs
 * below d16; B in q1-q2 / q12-q13) so one step's loads overlap the other's multiplies.
 */
#define ACCUMULATORS                                                                         \
    float32x4_t *c00, float32x4_t *c01, float32x4_t *c10, float32x4_t *c11,                 \
        float32x4_t *c20, float32x4_t *c21, float32x4_t *c30, float32x4_t *c31
#define ACCUMULATOR_OPERANDS                                                                 \
    [c00] "+w"(*c00), [c01] "+w"(*c01), [c10] "+w"(*c10), [c11] "+w"(*c11),                 \
        [c20] "+w"(*c20), [c21] "+w"(*c21), [c30] "+w"(*c30), [c31] "+w"(*c31)
#define CLOBBERED "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d24", "d25", "d26", "d27"

/* One k step's 8 multiply-adds: A's 4 values in D0 (rows 0-1) and D1 (rows 2-3), the B
 * row in Q0 (columns 0-3) and Q1 (columns 4-7). Arguments are register names. */
#define VMLA_STEP(D0, D1, Q0, Q1)                                                            \
    "vmla.f32 %q[c00], " Q0 ", " D0 "[0]\n" "vmla.f32 %q[c01], " Q1 ", " D0 "[0]\n"          \
    "vmla.f32 %q[c10], " Q0 ", " D0 "[1]\n" "vmla.f32 %q[c11], " Q1 ", " D0 "[1]\n"          \
    "vmla.f32 %q[c20], " Q0 ", " D1 "[0]\n" "vmla.f32 %q[c21], " Q1 ", " D1 "[0]\n"          \
    "vmla.f32 %q[c30], " Q0 ", " D1 "[1]\n" "vmla.f32 %q[c31], " Q1 ", " D1 "[1]\n"
/* Load set 0: A in d0-d1, B in q1-q2; set 1: A in d6-d7, B in q12-q13. */
#define PACKED_STEP_0                                                                        \
    "vld1.32 {d0-d1}, [%[a]]!\n" "vld1.32 {d2-d5}, [%[b]]!\n" VMLA_STEP("d0", "d1", "q1", "q2")
#define PACKED_STEP_1                                                                        \
    "vld1.32 {d6-d7}, [%[a]]!\n" "vld1.32 {d24-d27}, [%[b]]!\n"                              \
    VMLA_STEP("d6", "d7", "q12", "q13")
/* In place: B's row at b + offsets[p], through r12, into B's registers; VMLAS multiply. */
#define INDIRECT_STEP(A, B, VMLAS)                                                           \
    "ldr r12, [%[offsets]], #4\n"                                                            \
    "vld1.32 {" A "}, [%[a]]!\n"                                                             \
    "add r12, %[b], r12, lsl #2\n"                                                           \
    "vld1.32 {" B "}, [r12]\n" VMLAS
#define INDIRECT_STEP_0 INDIRECT_STEP("d0-d1", "d2-d5", VMLA_STEP("d0", "d1", "q1", "q2"))
#define INDIRECT_STEP_1 INDIRECT_STEP("d6-d7", "d24-d27", VMLA_STEP("d6", "d7", "q12", "q13"))
/* Narrow steps (a tile of 4 columns or fewer: the last of 196, 49 or 3025 pixels): B's
 * low half into the low accumulators only, 4 vmla a step, the same sums. Packed, the
 * load still takes the whole row (one instruction, and it steps b). */
#define VMLA_NARROW_STEP(D0, D1, Q0)                                                         \
    "vmla.f32 %q[c00], " Q0 ", " D0 "[0]\n" "vmla.f32 %q[c10], " Q0 ", " D0 "[1]\n"          \
    "vmla.f32 %q[c20], " Q0 ", " D1 "[0]\n" "vmla.f32 %q[c30], " Q0 ", " D1 "[1]\n"
#define NARROW_PACKED_STEP_0                                                                 \
    "vld1.32 {d0-d1}, [%[a]]!\n" "vld1.32 {d2-d5}, [%[b]]!\n"                                \
    VMLA_NARROW_STEP("d0", "d1", "q1")
#define NARROW_PACKED_STEP_1                                                                 \
    "vld1.32 {d6-d7}, [%[a]]!\n" "vld1.32 {d24-d27}, [%[b]]!\n"                              \
    VMLA_NARROW_STEP("d6", "d7", "q12")
#define NARROW_INDIRECT_STEP_0                                                               \
    INDIRECT_STEP("d0-d1", "d2-d3", VMLA_NARROW_STEP("d0", "d1", "q1"))
#define NARROW_INDIRECT_STEP_1                                                               \
    INDIRECT_STEP("d6-d7", "d24-d25", VMLA_NARROW_STEP("d6", "d7", "q12"))

/* The packed k loop with steps S0 / S1 (whole or narrow). */
#define PACKED_LOOP(S0, S1)                                                                  \
    size_t quads = k / 4, rest = k % 4;                                                      \
    if (quads > 0)                                                                           \
        __asm__ volatile("1:\n" S0 S1 S0 S1                                                  \
                         "subs %[quads], %[quads], #1\n"                                     \
                         "bne 1b\n"                                                          \
                         : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads),                    \
                           ACCUMULATOR_OPERANDS                                              \
                         :                                                                   \
                         : CLOBBERED, "memory", "cc");                                       \
    if (rest > 0)                                                                            \
        __asm__ volatile("1:\n" S0                                                           \
                         "subs %[rest], %[rest], #1\n"                                       \
                         "bne 1b\n"                                                          \
                         : [a] "+r"(a), [b] "+r"(b), [rest] "+r"(rest), ACCUMULATOR_OPERANDS  \
                         :                                                                   \
                         : CLOBBERED, "memory", "cc");
/* The in-place k loop, the same way. */
#define INDIRECT_LOOP(S0, S1)                                                                \
    size_t pairs = k / 2, rest = k % 2;                                                      \
    if (pairs > 0)                                                                           \
        __asm__ volatile("1:\n" S0 S1                                                        \
                         "subs %[pairs], %[pairs], #1\n"                                     \
                         "bne 1b\n"                                                          \
                         : [a] "+r"(a), [offsets] "+r"(offsets), [pairs] "+r"(pairs),        \
                           ACCUMULATOR_OPERANDS                                              \
                         : [b] "r"(b)                                                        \
                         : "r12", CLOBBERED, "memory", "cc");                                \
    if (rest > 0)                                                                            \
        __asm__ volatile(S0                                                                  \
                         : [a] "+r"(a), [offsets] "+r"(offsets), ACCUMULATOR_OPERANDS         \
                         : [b] "r"(b)                                                        \
                         : "r12", CLOBBERED, "memory", "cc");

/* `narrow`: the tile's columns are 4 or fewer. */
static ALWAYS_INLINE void accumulate_packed(size_t k, const float *a, const float *b,
                                            int narrow, ACCUMULATORS)
{
    if (narrow) {
        PACKED_LOOP(NARROW_PACKED_STEP_0, NARROW_PACKED_STEP_1)
    } else {
        PACKED_LOOP(PACKED_STEP_0, PACKED_STEP_1)
    }
}

static ALWAYS_INLINE void accumulate_indirect(size_t k, const float *a, const float *b,
                                              const int32_t *offsets, int narrow,
                                              ACCUMULATORS)
{
    if (narrow) {
        INDIRECT_LOOP(NARROW_INDIRECT_STEP_0, NARROW_INDIRECT_STEP_1)
    } else {
        INDIRECT_LOOP(INDIRECT_STEP_0, INDIRECT_STEP_1)
    }
}
#undef PACKED_LOOP
#undef INDIRECT_LOOP
#undef ACCUMULATORS
#undef ACCUMULATOR_OPERANDS
#undef CLOBBERED

static ALWAYS_INLINE void tile(size_t m, size_t n, size_t k, const float *a, const float *b,
                               const int32_t *offsets, float *c, size_t c_row_stride,
                               const ember_f32_gemm_params *params)
{
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;

    if (m == 1)
        one_row(k, a, b, offsets, &c00, &c01);
    const int narrow = n <= NR / 2;
    if (m > 1 && offsets == NULL)
        accumulate_packed(k, a, b, narrow, &c00, &c01, &c10, &c11, &c20, &c21, &c30, &c31);
    else if (m > 1)
        accumulate_indirect(k, a, b, offsets, narrow, &c00, &c01, &c10, &c11, &c20, &c21,
                            &c30, &c31);

    float32x4_t bias_lo, bias_hi;
    load_bias_col(params->bias_col, n, &bias_lo, &bias_hi);
    const float *bias_row = params->bias_row;
    const int accumulate = params->accumulate != 0;
    const float32x4_t vmin = vdupq_n_f32(params->min);
    const float32x4_t vmax = vdupq_n_f32(params->max);

#define EMBER_ROW(r, lo, hi)                                                                 \
    if (m > r) {                                                                             \
        store_row(lo, hi, (float *)((char *)c + r * c_row_stride), n,                       \
                  bias_row ? bias_row[r] : 0.0f, bias_lo, bias_hi, accumulate, vmin, vmax, \
                  params->hard_swish);                                                      \
    }
    EMBER_ROW(0, c00, c01)
    EMBER_ROW(1, c10, c11)
    EMBER_ROW(2, c20, c21)
    EMBER_ROW(3, c30, c31)
#undef EMBER_ROW
}

void ember_f32_gemm_4x8__neon_armv7(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                                    size_t c_row_stride, const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_4x8__neon_armv7_indirect(size_t m, size_t n, size_t k, const float *a, const float *b,
                                             const int32_t *offsets, float *c, size_t c_row_stride,
                                             const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
