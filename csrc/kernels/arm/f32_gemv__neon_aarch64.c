/*
 * f32_gemv__neon_aarch64 — a row vector by B packed in panels of 8 columns (kernels.h,
 * ember_f32_gemv_fn; the 8x8 kernel's panels), AArch64 Advanced SIMD.
 *
 * A GEMV reads every weight once, so the loads and the loop are the cost beside the
 * multiply-adds: per 16 rows of a panel two ldp bring x[p..p+16), eight ld1 bring the 128
 * weights (two rows each), and 32 fmla by lane use them — 21.5 instructions per 64
 * multiply-adds (23 with 8 rows an iteration), where the GEMM's one-row tile (A packed,
 * a scalar load per row) spends 36. Rows go round-robin to four accumulator pairs so the
 * fmla latency never bounds the loop. The k loop is assembly (GCC's unrolling of the same C spends register moves per
 * accumulator); the epilogue is the GEMM kernel's (f32_gemm_epilogue__neon.h). Columns
 * past n come from the panel's zero fill and are not stored.
 */
#include "kernels/kernels.h"

#include "kernels/arm/f32_gemm_epilogue__neon.h"

/* Four rows of the panel (32 weights, two ld1, into v4-v7 and v24-v27) times the lanes of
 * x in X, rows 4i..4i+3 into the accumulator pairs v16/v17, v18/v19, v20/v21, v22/v23:
 * row r always goes to pair r % 4, whatever loop takes it, so every sum runs in one order
 * (the same as with 8 rows an iteration: bit for bit). */
#define FOUR_ROWS(X)                                                                         \
    "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[b]], #64\n"                                        \
    "fmla v16.4s, v4.4s, " X ".s[0]\n" "fmla v17.4s, v5.4s, " X ".s[0]\n"                   \
    "fmla v18.4s, v6.4s, " X ".s[1]\n" "fmla v19.4s, v7.4s, " X ".s[1]\n"                   \
    "ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [%[b]], #64\n"                                    \
    "fmla v20.4s, v24.4s, " X ".s[2]\n" "fmla v21.4s, v25.4s, " X ".s[2]\n"                 \
    "fmla v22.4s, v26.4s, " X ".s[3]\n" "fmla v23.4s, v27.4s, " X ".s[3]\n"

/* One panel's sums (8 columns) over k rows, into out[0..8): 16 rows an iteration (one
 * loop branch and two ldp of x per 128 multiply-adds: 43 instructions, 21.5 per 64), then
 * 8, then one at a time. */
static void panel(size_t k, const float *x, const float *b, float *out)
{
    size_t sixteens = k / 16, eights = k % 16 / 8, rest = k % 8;
    __asm__ volatile(
        "movi v16.4s, #0\n" "movi v17.4s, #0\n" "movi v18.4s, #0\n" "movi v19.4s, #0\n"
        "movi v20.4s, #0\n" "movi v21.4s, #0\n" "movi v22.4s, #0\n" "movi v23.4s, #0\n"
        "cbz %[sixteens], 5f\n"
        "6:\n"
        "ldp q0, q1, [%[x]], #32\n"
        "ldp q2, q3, [%[x]], #32\n"
        FOUR_ROWS("v0") FOUR_ROWS("v1") FOUR_ROWS("v2") FOUR_ROWS("v3")
        "subs %[sixteens], %[sixteens], #1\n"
        "b.ne 6b\n"
        "5:\n"
        "cbz %[eights], 2f\n"
        "ldp q0, q1, [%[x]], #32\n"
        FOUR_ROWS("v0") FOUR_ROWS("v1")
        "2:\n"
        "cbz %[rest], 4f\n"
        "3:\n"
        "ldr s0, [%[x]], #4\n"
        "ldp q4, q5, [%[b]], #32\n"
        "fmla v16.4s, v4.4s, v0.s[0]\n" "fmla v17.4s, v5.4s, v0.s[0]\n"
        "subs %[rest], %[rest], #1\n"
        "b.ne 3b\n"
        "4:\n"
        "fadd v16.4s, v16.4s, v18.4s\n" "fadd v20.4s, v20.4s, v22.4s\n"
        "fadd v17.4s, v17.4s, v19.4s\n" "fadd v21.4s, v21.4s, v23.4s\n"
        "fadd v16.4s, v16.4s, v20.4s\n" "fadd v17.4s, v17.4s, v21.4s\n"
        "st1 {v16.4s, v17.4s}, [%[out]]\n"
        : [x] "+r"(x), [b] "+r"(b), [sixteens] "+r"(sixteens), [eights] "+r"(eights),
          [rest] "+r"(rest)
        : [out] "r"(out)
        : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",
          "v21", "v22", "v23", "v24", "v25", "v26", "v27", "memory", "cc");
}
#undef FOUR_ROWS

void ember_f32_gemv__neon_aarch64(size_t nr, size_t n, size_t k, const float *x,
                                  const float *b, float *y, const ember_f32_gemm_params *params)
{
    (void)nr; /* 8: the panels of the kernel this GEMV is paired with */
    EMBER_F32_GEMV_NEON_PANELS(n, k, x, b, y, params);
}
