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
 * bias_col are touched only in columns < n; a tile of 4 columns or fewer runs narrow
 * loops (B's low half: 8 FMAs a step, the same sums). No alignment is assumed.
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
/* An in-place step: B's row at b + offsets[p] (X: a scratch register), loaded by
 * LOAD_B (from X) and multiplied by FMLAS. */
#define INDIRECT_STEP(X, QA0, QA1, LOAD_B, FMLAS)                                            \
    "ldrsw " X ", [%[offsets]], #4\n"                                                        \
    "ldp " QA0 ", " QA1 ", [%[a]], #32\n"                                                    \
    "add " X ", %[b], " X ", lsl #2\n"                                                       \
    LOAD_B FMLAS
#define INDIRECT_STEP_0                                                                      \
    INDIRECT_STEP("x9", "q0", "q1", "ldp q2, q3, [x9]\n", FMLA_STEP("v0", "v1", "v2", "v3"))
/* Two in-place steps sharing one load of their offsets (ldp of two int32): B's rows at
 * x9 and x10, each loaded and multiplied as the step's LOAD_B / FMLAS. */
#define INDIRECT_PAIR_OF(LOAD_B0, FMLAS0, LOAD_B1, FMLAS1)                                   \
    "ldp w9, w10, [%[offsets]], #8\n"                                                        \
    "ldp q0, q1, [%[a]], #32\n"                                                              \
    "add x9, %[b], w9, sxtw #2\n"                                                            \
    "add x10, %[b], w10, sxtw #2\n"                                                          \
    LOAD_B0 FMLAS0                                                                           \
    "ldp q4, q5, [%[a]], #32\n"                                                              \
    LOAD_B1 FMLAS1
#define INDIRECT_PAIR                                                                        \
    INDIRECT_PAIR_OF("ldp q2, q3, [x9]\n", FMLA_STEP("v0", "v1", "v2", "v3"),                \
                     "ldp q6, q7, [x10]\n", FMLA_STEP("v4", "v5", "v6", "v7"))

/* Narrow steps (a tile of 4 columns or fewer: the last of 196, 49 or 3025 pixels): the
 * low half of B's row into the low accumulators (v16, v18, … v30) only, the same sums. */
#define FMLA_NARROW_STEP(A0, A1, B0)                                                         \
    "fmla v16.4s, " B0 ".4s, " A0 ".s[0]\n" "fmla v18.4s, " B0 ".4s, " A0 ".s[1]\n"          \
    "fmla v20.4s, " B0 ".4s, " A0 ".s[2]\n" "fmla v22.4s, " B0 ".4s, " A0 ".s[3]\n"          \
    "fmla v24.4s, " B0 ".4s, " A1 ".s[0]\n" "fmla v26.4s, " B0 ".4s, " A1 ".s[1]\n"          \
    "fmla v28.4s, " B0 ".4s, " A1 ".s[2]\n" "fmla v30.4s, " B0 ".4s, " A1 ".s[3]\n"
#define NARROW_PACKED_STEP_0                                                                 \
    "ldp q0, q1, [%[a]], #32\n" "ldr q2, [%[b]], #32\n" FMLA_NARROW_STEP("v0", "v1", "v2")
#define NARROW_PACKED_STEP_1                                                                 \
    "ldp q4, q5, [%[a]], #32\n" "ldr q6, [%[b]], #32\n" FMLA_NARROW_STEP("v4", "v5", "v6")
#define NARROW_INDIRECT_STEP_0                                                               \
    INDIRECT_STEP("x9", "q0", "q1", "ldr q2, [x9]\n", FMLA_NARROW_STEP("v0", "v1", "v2"))
#define NARROW_INDIRECT_PAIR                                                                 \
    INDIRECT_PAIR_OF("ldr q2, [x9]\n", FMLA_NARROW_STEP("v0", "v1", "v2"),                   \
                     "ldr q6, [x10]\n", FMLA_NARROW_STEP("v4", "v5", "v6"))

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

/* The k loops, 4 steps per iteration (QUAD), then the rest one by one (ONE), leaving the
 * tile in v16-v31. An in-place step costs an address add and half an offset load more
 * than a packed one (80 instructions per 4 steps against 74); a narrow one has 8
 * multiply-adds (42 instructions per 4 packed steps), the high accumulators left at
 * zero. */
#define K_LOOP(QUAD, ONE)                                                                    \
    ZERO_ACCUMULATORS                                                                        \
    "cbz %[quads], 2f\n"                                                                     \
    "1:\n" QUAD                                                                              \
    "subs %[quads], %[quads], #1\n"                                                          \
    "b.ne 1b\n"                                                                              \
    "2:\n"                                                                                   \
    "cbz %[rest], 4f\n"                                                                      \
    "3:\n" ONE                                                                               \
    "subs %[rest], %[rest], #1\n"                                                            \
    "b.ne 3b\n"                                                                              \
    "4:\n"
#define PACKED_LOOP                                                                          \
    K_LOOP(PACKED_STEP_0 PACKED_STEP_1 PACKED_STEP_0 PACKED_STEP_1, PACKED_STEP_0)
#define INDIRECT_LOOP K_LOOP(INDIRECT_PAIR INDIRECT_PAIR, INDIRECT_STEP_0)
#define NARROW_PACKED_LOOP                                                                   \
    K_LOOP(NARROW_PACKED_STEP_0 NARROW_PACKED_STEP_1 NARROW_PACKED_STEP_0                    \
           NARROW_PACKED_STEP_1, NARROW_PACKED_STEP_0)
#define NARROW_INDIRECT_LOOP                                                                 \
    K_LOOP(NARROW_INDIRECT_PAIR NARROW_INDIRECT_PAIR, NARROW_INDIRECT_STEP_0)

/*
 * The epilogue of a whole tile (8 × 8) in assembly: per row, its bias (ld1r, post-indexed
 * by 4, or by 0 over a zero), the column biases (v4, v5: zeros when there are none), C
 * when accumulating, the clamp (v6, v7: fmax/fmin keep a NaN) and one stp. 11 instructions
 * a row (14 accumulating) where the C epilogue, which reloads the tile from memory and
 * branches per row, spends about 30. With a hard swish, 10 more a row: its four constants
 * (v10-v13, one ld4r from the gate's alpha, beta, lo, hi) and two temporaries (v8, v9),
 * registers the plain tiles leave alone (the compiler saves their lower halves only
 * around the gated calls). Partial tiles take the C epilogue.
 */
#define EPILOGUE_ROW(LO, HI, ACCUMULATE, GATE)                                               \
    "ld1r {v0.4s}, [%[bias_row]], %[bias_step]\n"                                            \
    "fadd v" LO ".4s, v" LO ".4s, v0.4s\n" "fadd v" HI ".4s, v" HI ".4s, v0.4s\n"             \
    "fadd v" LO ".4s, v" LO ".4s, v4.4s\n" "fadd v" HI ".4s, v" HI ".4s, v5.4s\n"             \
    ACCUMULATE(LO, HI)                                                                       \
    "fmax v" LO ".4s, v" LO ".4s, v6.4s\n" "fmax v" HI ".4s, v" HI ".4s, v6.4s\n"             \
    "fmin v" LO ".4s, v" LO ".4s, v7.4s\n" "fmin v" HI ".4s, v" HI ".4s, v7.4s\n"             \
    GATE(LO, HI)                                                                             \
    "stp q" LO ", q" HI ", [%[c]]\n"                                                          \
    "add %[c], %[c], %[stride]\n"
#define ADD_C(LO, HI)                                                                        \
    "ldp q2, q3, [%[c]]\n"                                                                   \
    "fadd v" LO ".4s, v" LO ".4s, v2.4s\n" "fadd v" HI ".4s, v" HI ".4s, v3.4s\n"
#define KEEP(LO, HI) ""
/* v · clamp(v · alpha + beta, lo, hi), each step rounded (fmul then fadd, no fmla), the
 * clamp by fmax/fmin, which keep a NaN. */
#define HARD_SWISH(LO, HI)                                                                   \
    "fmul v8.4s, v" LO ".4s, v10.4s\n" "fmul v9.4s, v" HI ".4s, v10.4s\n"                    \
    "fadd v8.4s, v8.4s, v11.4s\n" "fadd v9.4s, v9.4s, v11.4s\n"                              \
    "fmax v8.4s, v8.4s, v12.4s\n" "fmax v9.4s, v9.4s, v12.4s\n"                              \
    "fmin v8.4s, v8.4s, v13.4s\n" "fmin v9.4s, v9.4s, v13.4s\n"                              \
    "fmul v" LO ".4s, v" LO ".4s, v8.4s\n" "fmul v" HI ".4s, v" HI ".4s, v9.4s\n"
#define EPILOGUE_ROWS(ACCUMULATE, GATE)                                                      \
    EPILOGUE_ROW("16", "17", ACCUMULATE, GATE) EPILOGUE_ROW("18", "19", ACCUMULATE, GATE)    \
    EPILOGUE_ROW("20", "21", ACCUMULATE, GATE) EPILOGUE_ROW("22", "23", ACCUMULATE, GATE)    \
    EPILOGUE_ROW("24", "25", ACCUMULATE, GATE) EPILOGUE_ROW("26", "27", ACCUMULATE, GATE)    \
    EPILOGUE_ROW("28", "29", ACCUMULATE, GATE) EPILOGUE_ROW("30", "31", ACCUMULATE, GATE)
#define WHOLE_TILE_EPILOGUE_WITH(GATE)                                                       \
    "ldp q4, q5, [%[bias_col]]\n"                                                            \
    "ld1r {v6.4s}, [%[bounds]]\n"                                                            \
    "ld1r {v7.4s}, [%[bounds_max]]\n"                                                        \
    "cbnz %w[accumulate], 5f\n" EPILOGUE_ROWS(KEEP, GATE) "b 6f\n"                           \
    "5:\n" EPILOGUE_ROWS(ADD_C, GATE) "6:\n"
#define WHOLE_TILE_EPILOGUE WHOLE_TILE_EPILOGUE_WITH(KEEP)
#define GATED_TILE_EPILOGUE                                                                  \
    "ld4r {v10.4s, v11.4s, v12.4s, v13.4s}, [%[gate]]\n" WHOLE_TILE_EPILOGUE_WITH(HARD_SWISH)
#define GATE_CLOBBERED "v8", "v9", "v10", "v11", "v12", "v13"

/* What the assembly epilogue reads: pointers to zeros stand in for absent biases. */
typedef struct whole_tile {
    float *c;
    size_t stride;
    const float *bias_row, *bias_col, *bounds; /* bounds: {min, max} */
    size_t bias_step;                          /* 4 (bytes) or 0 over a zero */
    int accumulate;
    const float *gate; /* the hard swish's alpha, beta, lo, hi (consecutive), or NULL */
} whole_tile;

static const float zeros[NR];

static whole_tile whole_tile_of(float *c, size_t c_row_stride,
                                const ember_f32_gemm_params *params, float *bounds)
{
    bounds[0] = params->min, bounds[1] = params->max;
    const whole_tile t = {c, c_row_stride, params->bias_row ? params->bias_row : zeros,
                          params->bias_col ? params->bias_col : zeros, bounds,
                          params->bias_row ? sizeof(float) : 0, params->accumulate != 0,
                          params->hard_swish ? &params->hard_swish->alpha : NULL};
    return t;
}

#define WHOLE_TILE_OPERANDS(t)                                                               \
    [c] "+r"(t.c), [bias_row] "+r"(t.bias_row)
#define WHOLE_TILE_INPUTS(t)                                                                 \
    [stride] "r"(t.stride), [bias_step] "r"(t.bias_step), [bias_col] "r"(t.bias_col),       \
        [bounds] "r"(t.bounds), [bounds_max] "r"(t.bounds + 1), [accumulate] "r"(t.accumulate)

/* A packed tile of m > 1 rows, stored to acc[64] for the C epilogue; `narrow`: its
 * columns are 4 or fewer. */
static void accumulate_packed(size_t k, const float *a, const float *b, int narrow,
                              float *acc)
{
    size_t quads = k / 4, rest = k % 4;
    if (narrow)
        __asm__ volatile(NARROW_PACKED_LOOP STORE_ACCUMULATORS
                         : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest),
                           [acc] "+r"(acc)
                         :
                         : CLOBBERED);
    else
        __asm__ volatile(PACKED_LOOP STORE_ACCUMULATORS
                         : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest),
                           [acc] "+r"(acc)
                         :
                         : CLOBBERED);
}

/* The same for B in place (kernels.h). */
static void accumulate_indirect(size_t k, const float *a, const float *b,
                                const int32_t *offsets, int narrow, float *acc)
{
    size_t quads = k / 4, rest = k % 4;
    if (narrow)
        __asm__ volatile(NARROW_INDIRECT_LOOP STORE_ACCUMULATORS
                         : [a] "+r"(a), [offsets] "+r"(offsets), [quads] "+r"(quads),
                           [rest] "+r"(rest), [acc] "+r"(acc)
                         : [b] "r"(b)
                         : "x9", "x10", CLOBBERED);
    else
        __asm__ volatile(INDIRECT_LOOP STORE_ACCUMULATORS
                         : [a] "+r"(a), [offsets] "+r"(offsets), [quads] "+r"(quads),
                           [rest] "+r"(rest), [acc] "+r"(acc)
                         : [b] "r"(b)
                         : "x9", "x10", CLOBBERED);
}

/* A whole packed tile, epilogue included (the hard swish's in its own asm: its registers
 * are saved only where it runs). */
static void whole_packed(size_t k, const float *a, const float *b, whole_tile t)
{
    size_t quads = k / 4, rest = k % 4;
    if (t.gate != NULL)
        __asm__ volatile(PACKED_LOOP GATED_TILE_EPILOGUE
                         : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest),
                           WHOLE_TILE_OPERANDS(t)
                         : WHOLE_TILE_INPUTS(t), [gate] "r"(t.gate)
                         : GATE_CLOBBERED, CLOBBERED);
    else
        __asm__ volatile(PACKED_LOOP WHOLE_TILE_EPILOGUE
                         : [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads), [rest] "+r"(rest),
                           WHOLE_TILE_OPERANDS(t)
                         : WHOLE_TILE_INPUTS(t)
                         : CLOBBERED);
}

/* A whole in-place tile, epilogue included. */
static void whole_indirect(size_t k, const float *a, const float *b, const int32_t *offsets,
                           whole_tile t)
{
    size_t quads = k / 4, rest = k % 4;
    if (t.gate != NULL)
        __asm__ volatile(INDIRECT_LOOP GATED_TILE_EPILOGUE
                         : [a] "+r"(a), [offsets] "+r"(offsets), [quads] "+r"(quads),
                           [rest] "+r"(rest), WHOLE_TILE_OPERANDS(t)
                         : [b] "r"(b), WHOLE_TILE_INPUTS(t), [gate] "r"(t.gate)
                         : "x9", "x10", GATE_CLOBBERED, CLOBBERED);
    else
        __asm__ volatile(INDIRECT_LOOP WHOLE_TILE_EPILOGUE
                         : [a] "+r"(a), [offsets] "+r"(offsets), [quads] "+r"(quads),
                           [rest] "+r"(rest), WHOLE_TILE_OPERANDS(t)
                         : [b] "r"(b), WHOLE_TILE_INPUTS(t)
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

/* A partial tile (m < 8 or n < 8): the C epilogue. Kept out of line so the whole tiles'
 * path does not pay its stack frame. */
static __attribute__((noinline)) void tile(size_t m, size_t n, size_t k, const float *a,
                                           const float *b, const int32_t *offsets, float *c,
                                           size_t c_row_stride,
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
            accumulate_packed(k, a, b, n <= NR / 2, acc);
        else
            accumulate_indirect(k, a, b, offsets, n <= NR / 2, acc);
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
                  bias_row ? bias_row[r] : 0.0f, bias_lo, bias_hi, accumulate, vmin, vmax, \
                  params->hard_swish);                                                      \
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
    if (m == MR && n == NR) {
        float bounds[2];
        whole_packed(k, a, b, whole_tile_of(c, c_row_stride, params, bounds));
        return;
    }
    tile(m, n, k, a, b, NULL, c, c_row_stride, params);
}

void ember_f32_gemm_8x8__neon_aarch64_indirect(size_t m, size_t n, size_t k, const float *a, const float *b,
                                               const int32_t *offsets, float *c, size_t c_row_stride,
                                               const ember_f32_gemm_params *params)
{
    if (m == MR && n == NR) {
        float bounds[2];
        whole_indirect(k, a, b, offsets, whole_tile_of(c, c_row_stride, params, bounds));
        return;
    }
    tile(m, n, k, a, b, offsets, c, c_row_stride, params);
}
