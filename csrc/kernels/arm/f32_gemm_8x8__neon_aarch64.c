/*
 * f32_gemm_8x8__neon_aarch64 — 8 rows × 8 columns, AArch64 Advanced SIMD with FMA.
 *
 * Register budget (32 q): 16 accumulators (8 rows × 2 q of 4 columns, v16-v31), 2 q for
 * the 8 A values of a k step, 2 q for the 8 B values, twice (v0-v7, so one step's loads
 * overlap the other's multiply-adds). Per k step: 2 q-pair loads, 16 FMAs by lane (fmla
 * by element multiplies by one lane of a q register, so A needs no broadcast). The loops
 * over k are assembly (accumulate_packed / _indirect); the epilogue is C.
 *
 * Tails: panels are read exactly (k*8 floats each); rows ≥ m are computed but never
 * loaded or stored; a partial row (n < 8) goes through an 8-float stack copy so C and
 * bias_col are touched only in columns < n. No alignment is assumed.
 */
#include "kernels/kernels.h"

#include <arm_neon.h>
#include <string.h>

#include "kernels/arm/f32_gemm_epilogue__neon.h"

enum { MR = 8, NR = 8 };

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Row p of B: packed (offsets NULL, the branch folds away) or in place (kernels.h). */
#define B_ROW(b, offsets, p) ((offsets) ? (b) + (offsets)[p] : (b) + (p) * NR)
#define one_row_madd vfmaq_n_f32
#include "kernels/arm/f32_gemm_one_row__neon.h"

/*
 * The k loops in assembly. GCC's own unrolling of them spends a register move per
 * accumulator per iteration (its scheduler hoists the next step's loads past the register
 * budget), which cancels what unrolling saves. Here several k steps share one subs / b.ne
 * and the loads post-increment: 74 instructions per 256 multiply-adds for packed B
 * instead of 92 (23 per step). Steps alternate between two sets of load registers
 * (v0-v3, v4-v7) so one step's loads overlap the other's multiply-adds; the 16
 * accumulators are v16-v31, acc[2·i + h] = row i, columns 4h..4h+3 once stored.
 */

/* One k step's 16 multiply-adds: the 8 A values in A0 (rows 0-3) and A1 (rows 4-7), the
 * B row in B0 (columns 0-3) and B1 (columns 4-7). Arguments are register names. */
#define FMLA_ROW(A, LANE, LO, HI, B0, B1)                                                    \
    "fmla v" LO ".4s, " B0 ".4s, " A ".s[" #LANE "]\n"                                      \
    "fmla v" HI ".4s, " B1 ".4s, " A ".s[" #LANE "]\n"
#define FMLA_STEP(A0, A1, B0, B1)                                                            \
    FMLA_ROW(A0, 0, "16", "17", B0, B1) FMLA_ROW(A0, 1, "18", "19", B0, B1)                  \
    FMLA_ROW(A0, 2, "20", "21", B0, B1) FMLA_ROW(A0, 3, "22", "23", B0, B1)                  \
    FMLA_ROW(A1, 0, "24", "25", B0, B1) FMLA_ROW(A1, 1, "26", "27", B0, B1)                  \
    FMLA_ROW(A1, 2, "28", "29", B0, B1) FMLA_ROW(A1, 3, "30", "31", B0, B1)

/* A packed step on load set 0 or 1: A and B rows post-incremented. */
#define PACKED_STEP_0                                                                        \
    "ldp q0, q1, [%[a]], #32\n" "ldp q2, q3, [%[b]], #32\n" FMLA_STEP("v0", "v1", "v2", "v3")
#define PACKED_STEP_1                                                                        \
    "ldp q4, q5, [%[a]], #32\n" "ldp q6, q7, [%[b]], #32\n" FMLA_STEP("v4", "v5", "v6", "v7")
/* An in-place step: B's row at b + offsets[p] (X: a scratch register). */
#define INDIRECT_STEP(X, QA0, QA1, QB0, QB1, A0, A1, B0, B1)                                 \
    "ldrsw " X ", [%[offsets]], #4\n"                                                        \
    "ldp " QA0 ", " QA1 ", [%[a]], #32\n"                                                    \
    "add " X ", %[b], " X ", lsl #2\n"                                                       \
    "ldp " QB0 ", " QB1 ", [" X "]\n" FMLA_STEP(A0, A1, B0, B1)
#define INDIRECT_STEP_0 INDIRECT_STEP("x9", "q0", "q1", "q2", "q3", "v0", "v1", "v2", "v3")
#define INDIRECT_STEP_1 INDIRECT_STEP("x10", "q4", "q5", "q6", "q7", "v4", "v5", "v6", "v7")

#define ZERO_V16_TO_V23                                                                      \
    "movi v16.4s, #0\n" "movi v17.4s, #0\n" "movi v18.4s, #0\n" "movi v19.4s, #0\n"          \
    "movi v20.4s, #0\n" "movi v21.4s, #0\n" "movi v22.4s, #0\n" "movi v23.4s, #0\n"
#define ZERO_ACCUMULATORS                                                                    \
    ZERO_V16_TO_V23                                                                          \
    "movi v24.4s, #0\n" "movi v25.4s, #0\n" "movi v26.4s, #0\n" "movi v27.4s, #0\n"          \
    "movi v28.4s, #0\n" "movi v29.4s, #0\n" "movi v30.4s, #0\n" "movi v31.4s, #0\n"
#define STORE_ACCUMULATORS                                                                   \
    "st1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[acc]], #64\n"                                  \
    "st1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[acc]], #64\n"                                  \
    "st1 {v24.4s, v25.4s, v26.4s, v27.4s}, [%[acc]], #64\n"                                  \
    "st1 {v28.4s, v29.4s, v30.4s, v31.4s}, [%[acc]], #64\n"
#define CLOBBERED                                                                            \
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", \
        "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc"

/* A packed tile of m > 1 rows: 4 k steps per iteration, then the rest one by one. */
static void accumulate_packed(size_t k, const float *a, const float *b, float *acc)
{
    size_t quads = k / 4, rest = k % 4;
    __asm__ volatile(ZERO_ACCUMULATORS
                     "cbz %[quads], 2f\n"
                     "1:\n" PACKED_STEP_0 PACKED_STEP_1 PACKED_STEP_0 PACKED_STEP_1
                     "subs %[quads], %[quads], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[rest], 4f\n"
                     "3:\n" PACKED_STEP_0
                     "subs %[rest], %[rest], #1\n"
                     "b.ne 3b\n"
                     "4:\n" STORE_ACCUMULATORS
                     : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest),
                       [acc] "+r"(acc)
                     :
                     : CLOBBERED);
}

/* The same for B in place (kernels.h), 2 k steps per iteration: an offset load and an
 * address add more per step than the packed form. */
static void accumulate_indirect(size_t k, const float *a, const float *b,
                                const int32_t *offsets, float *acc)
{
    size_t pairs = k / 2, rest = k % 2;
    __asm__ volatile(ZERO_ACCUMULATORS
                     "cbz %[pairs], 2f\n"
                     "1:\n" INDIRECT_STEP_0 INDIRECT_STEP_1
                     "subs %[pairs], %[pairs], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[rest], 3f\n" INDIRECT_STEP_0
                     "3:\n" STORE_ACCUMULATORS
                     : [a] "+r"(a), [offsets] "+r"(offsets), [pairs] "+r"(pairs),
                       [rest] "+r"(rest), [acc] "+r"(acc)
                     : [b] "r"(b)
                     : "x9", "x10", CLOBBERED);
}

/* A tile of one row (m = 1: a recurrent step) over packed B: row 0 of each A group (MR
 * floats apart) by B's row, 4 k steps per iteration into 4 pairs of accumulators (so the
 * multiply-add latency does not bound it), summed at the end: 18 instructions per 4 steps
 * where GCC's unrolled C spent 30. */
#define ONE_ROW_STEP(S, V, QB0, QB1, VB0, VB1, LO, HI)                                       \
    "ldr " S ", [%[a]], #32\n"                                                               \
    "ldp " QB0 ", " QB1 ", [%[b]], #32\n"                                                    \
    "fmla v" LO ".4s, " VB0 ".4s, " V ".s[0]\n"                                              \
    "fmla v" HI ".4s, " VB1 ".4s, " V ".s[0]\n"
static void one_row_packed(size_t k, const float *a, const float *b, float32x4_t *lo,
                           float32x4_t *hi)
{
    size_t quads = k / 4, rest = k % 4;
    float acc[8];
    float *out = acc;
    __asm__ volatile(ZERO_V16_TO_V23
                     "cbz %[quads], 2f\n"
                     "1:\n"
                     ONE_ROW_STEP("s0", "v0", "q4", "q5", "v4", "v5", "16", "17")
                     ONE_ROW_STEP("s1", "v1", "q6", "q7", "v6", "v7", "18", "19")
                     ONE_ROW_STEP("s2", "v2", "q24", "q25", "v24", "v25", "20", "21")
                     ONE_ROW_STEP("s3", "v3", "q26", "q27", "v26", "v27", "22", "23")
                     "subs %[quads], %[quads], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[rest], 4f\n"
                     "3:\n"
                     ONE_ROW_STEP("s0", "v0", "q4", "q5", "v4", "v5", "16", "17")
                     "subs %[rest], %[rest], #1\n"
                     "b.ne 3b\n"
                     "4:\n"
                     "fadd v16.4s, v16.4s, v18.4s\n"
                     "fadd v20.4s, v20.4s, v22.4s\n"
                     "fadd v17.4s, v17.4s, v19.4s\n"
                     "fadd v21.4s, v21.4s, v23.4s\n"
                     "fadd v16.4s, v16.4s, v20.4s\n"
                     "fadd v17.4s, v17.4s, v21.4s\n"
                     "st1 {v16.4s, v17.4s}, [%[acc]]\n"
                     : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest)
                     : [acc] "r"(out)
                     : CLOBBERED);
    *lo = vld1q_f32(acc);
    *hi = vld1q_f32(acc + 4);
}

static ALWAYS_INLINE void tile(size_t m, size_t n, size_t k, const float *a, const float *b,
                               const int32_t *offsets, float *c, size_t c_row_stride,
                               const ember_f32_gemm_params *params)
{
    float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
    float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    float32x4_t c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    float32x4_t c60 = c00, c61 = c00, c70 = c00, c71 = c00;

    if (m == 1 && offsets == NULL)
        one_row_packed(k, a, b, &c00, &c01);
    else if (m == 1)
        one_row(k, a, b, offsets, &c00, &c01);
    if (m > 1) {
        float acc[64];
        if (offsets == NULL)
            accumulate_packed(k, a, b, acc);
        else
            accumulate_indirect(k, a, b, offsets, acc);
        c00 = vld1q_f32(acc), c01 = vld1q_f32(acc + 4), c10 = vld1q_f32(acc + 8);
        c11 = vld1q_f32(acc + 12), c20 = vld1q_f32(acc + 16), c21 = vld1q_f32(acc + 20);
        c30 = vld1q_f32(acc + 24), c31 = vld1q_f32(acc + 28), c40 = vld1q_f32(acc + 32);
        c41 = vld1q_f32(acc + 36), c50 = vld1q_f32(acc + 40), c51 = vld1q_f32(acc + 44);
        c60 = vld1q_f32(acc + 48), c61 = vld1q_f32(acc + 52), c70 = vld1q_f32(acc + 56);
        c71 = vld1q_f32(acc + 60);
    }

    float32x4_t bias_lo, bias_hi;
    load_bias_col(params->bias_col, n, &bias_lo, &bias_hi);
    const float *bias_row = params->bias_row;
    const int accumulate = params->accumulate != 0;
    const float32x4_t vmin = vdupq_n_f32(params->min);
    const float32x4_t vmax = vdupq_n_f32(params->max);

#define EMBER_ROW(r, lo, hi)                                                                 \
    if (m > r) {                                                                             \
        store_row(lo, hi, (float *)((char *)c + r * c_row_stride), n,                       \
                  bias_row ? bias_row[r] : 0.0f, bias_lo, bias_hi, accumulate, vmin, vmax); \
    }
    EMBER_ROW(0, c00, c01)
    EMBER_ROW(1, c10, c11)
    EMBER_ROW(2, c20, c21)
    EMBER_ROW(3, c30, c31)
    EMBER_ROW(4, c40, c41)
    EMBER_ROW(5, c50, c51)
    EMBER_ROW(6, c60, c61)
    EMBER_ROW(7, c70, c71)
#undef EMBER_ROW
}

void ember_f32_gemm_8x8__neon_aarch64(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                                      size_t c_row_stride, const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_8x8__neon_aarch64_indirect(size_t m, size_t n, size_t k, const float *a, const float *b,
                                               const int32_t *offsets, float *c, size_t c_row_stride,
                                               const ember_f32_gemm_params *params)
{
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
