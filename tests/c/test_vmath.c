/*
 * test_vmath — every f32 elementwise transcendental kernel (vexp, vsigmoid, vtanh, verf)
 * of this build against double-precision libm, and the hard-swish kernels.
 *
 * For each kernel of the EMBER_F32_V<OP>_KERNELS lists that this CPU can run:
 *   - accuracy: a dense sweep over the float bit patterns of [-128, 128] (every
 *     STRIDE-th float of each sign; STRIDE = 223 by default, about 10^7 points, from the
 *     smallest subnormal up, so every binade gets ~37,000 points), a uniform sweep of the
 *     family's interesting interval (10^6 points), and the special values (±0, ±inf,
 *     NaNs, subnormals, FLT_MAX, range thresholds ± 1 ulp). The error of each result is
 *     measured in ulp of the exact (double) value, and as absolute and relative error;
 *     the maxima per kernel are printed in a table and checked against the bounds of
 *     csrc/kernels/README.md (BOUNDS below). NaN must give NaN, an infinite exact result
 *     the same infinity, and tanh / erf must keep the sign of zero.
 *   - tails: every n in 0..40, x ending at an inaccessible page (a read past x[n) faults),
 *     y inside sentinels (a write outside y[0..n) is caught), and in place (y == x); the
 *     results must equal, bit for bit, the same inputs computed in one long call (lanes
 *     are independent, so the tail path must agree with the vector path).
 *   - the AVX-512 kernels, which run the AVX2 recipe on 16 lanes: the same bits as the
 *     AVX2 kernel at every point of the sweeps.
 *   - dispatch: the chosen kernel of each family, and EMBER_ISA.
 *   - the hard-swish epilogue (f32_hard_swish): every kernel bit for bit against its
 *     definition, over strided rows with guards, specials included.
 *
 * The armv7 NEON kernels flush subnormals to zero (the ARMv7 Advanced SIMD unit always
 * does): for them a subnormal input may be taken as ±0, and a result whose exact value
 * is below FLT_MIN may be anything of magnitude ≤ FLT_MIN.
 *
 *   test_vmath [--quick] [--stride N]
 *
 * --quick (for QEMU) takes every 16th point of the default sweeps. Prints the table and,
 * last, "N passed, M failed"; exits 1 on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_support.h"

#define CHUNK 4096
#define MAX_TAIL 40

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ---------------------------------------------------------------- families */

static double ref_exp(double x)
{
    return exp(x);
}

static double ref_sigmoid(double x)
{
    if (x >= 0) {
        return 1.0 / (1.0 + exp(-x));
    }
    const double e = exp(x);
    return e / (1.0 + e);
}

static double ref_tanh(double x)
{
    return tanh(x);
}

static double ref_erf(double x)
{
    return erf(x);
}

/* Bounds, per family and kind of kernel: what README.md states, from the measured maxima
 * over the sweeps (rounded up). max_abs is not bounded for exp (its values span 2^±128;
 * its ulp bound is the relative one). */
enum kind { KIND_LIBM, KIND_SIMD_FMA, KIND_SIMD_NO_FMA, KIND_COUNT };
static const char *const KIND_NAMES[KIND_COUNT] = {"libm", "SIMD+FMA", "SIMD no FMA"};

typedef struct bound {
    double ulp, abs;
} bound;

typedef struct family {
    const char *name;
    const ember_f32_vunary_kernel *kernels;
    size_t count;
    double (*reference)(double);
    double lo, hi;       /* the uniform sweep */
    int odd;             /* f(-0) = -0 */
    bound bounds[KIND_COUNT];
} family;

static family FAMILIES[] = {
    {"vexp", ember_f32_vexp_kernels, 0, ref_exp, -104.0, 89.0, 0,
     {{1.0, INFINITY}, {1.0, INFINITY}, {1.5, INFINITY}}},
    {"vsigmoid", ember_f32_vsigmoid_kernels, 0, ref_sigmoid, -104.0, 20.0, 0,
     {{2.5, 1.0e-7}, {2.5, 1.0e-7}, {4.0, 2.0e-7}}},
    {"vtanh", ember_f32_vtanh_kernels, 0, ref_tanh, -10.0, 10.0, 1,
     {{2.5, 1.2e-7}, {2.5, 1.0e-7}, {4.5, 1.5e-7}}},
    {"verf", ember_f32_verf_kernels, 0, ref_erf, -4.5, 4.5, 1,
     {{1.0, 1.0e-7}, {1.5, 1.0e-7}, {2.0, 1.0e-7}}},
};
#define FAMILY_COUNT (sizeof FAMILIES / sizeof FAMILIES[0])

static void families_init(void)
{
    FAMILIES[0].count = ember_f32_vexp_kernel_count;
    FAMILIES[1].count = ember_f32_vsigmoid_kernel_count;
    FAMILIES[2].count = ember_f32_vtanh_kernel_count;
    FAMILIES[3].count = ember_f32_verf_kernel_count;
}

static enum kind kind_of(const ember_f32_vunary_kernel *kernel)
{
    switch (kernel->isa) {
    case EMBER_ISA_SCALAR:
        return KIND_LIBM;
    case EMBER_ISA_NEON_ARMV7:
        return KIND_SIMD_NO_FMA;
    default:
        return KIND_SIMD_FMA;
    }
}

static int flushes_subnormals(const ember_f32_vunary_kernel *kernel)
{
    return kernel->isa == EMBER_ISA_NEON_ARMV7;
}

/* ---------------------------------------------------------------- error statistics */

typedef struct stats {
    unsigned long points, special_failures;
    double max_ulp, max_abs, max_rel;
    float at_ulp, at_abs, at_rel; /* the inputs where the maxima were */
    char first_special[160];
} stats;

/* Spacing of floats at |v| (a finite double): 2^(e-24) for |v| in [2^(e-1), 2^e). */
static double float_ulp(double v)
{
    const double a = fabs(v);
    if (a < FLT_MIN) {
        return 0x1p-149;
    }
    int e;
    frexp(a, &e);
    return ldexp(1.0, e - 24);
}

static void special_failure(stats *s, float x, float y, double ref, const char *why)
{
    if (s->special_failures++ == 0) {
        snprintf(s->first_special, sizeof s->first_special,
                 "x = %.9g (0x%08x): got %.9g, exact %.9g: %s", x, (unsigned)to_bits(x), y,
                 ref, why);
    }
}

/* One result against the exact value. */
static void measure(stats *s, const family *f, const ember_f32_vunary_kernel *kernel,
                    float x, float y, double ref)
{
    s->points++;
    const int ftz = flushes_subnormals(kernel);
    if (ftz && x != 0.0f && fabsf(x) < FLT_MIN) {
        ref = f->reference(x < 0 ? -0.0 : 0.0); /* the unit saw ±0 */
    }
    if (isnan(ref)) {
        if (!isnan(y)) {
            special_failure(s, x, y, ref, "NaN expected");
        }
        return;
    }
    const float rounded = (float)ref;
    if (isinf(rounded)) {
        if (y != rounded) {
            special_failure(s, x, y, ref, "infinity expected");
        }
        return;
    }
    if (isnan(y) || isinf(y)) {
        special_failure(s, x, y, ref, "finite result expected");
        return;
    }
    if (ref == 0.0 && f->odd && !signbit(y) != !signbit(ref)) {
        special_failure(s, x, y, ref, "sign of zero");
        return;
    }
    const double abs_err = fabs((double)y - ref);
    if (ftz && fabs(ref) < FLT_MIN) {
        if (!(fabsf(y) <= FLT_MIN)) {
            special_failure(s, x, y, ref, "subnormal result flushed wrongly");
        }
        return;
    }
    const double ulp_err = abs_err / float_ulp(ref);
    if (ulp_err > s->max_ulp) {
        s->max_ulp = ulp_err;
        s->at_ulp = x;
    }
    if (abs_err > s->max_abs) {
        s->max_abs = abs_err;
        s->at_abs = x;
    }
    if (fabs(ref) >= FLT_MIN && abs_err / fabs(ref) > s->max_rel) {
        s->max_rel = abs_err / fabs(ref);
        s->at_rel = x;
    }
}

/* ---------------------------------------------------------------- accuracy sweeps */

/* Inputs are produced a chunk at a time by a generator: returns how many it wrote. */
typedef struct sweep {
    uint64_t next, end;    /* position in the sweep */
    uint32_t stride;       /* bit-pattern sweep */
    double lo, step;       /* uniform sweep */
    int kind;              /* 0 bits, 1 uniform, 2 specials */
} sweep;

static const uint32_t SPECIAL_BITS[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, /* ±0, ±inf */
    0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, /* quiet NaNs, signalling NaNs */
    0x00000001u, 0x80000001u, 0x00000002u, 0x00400000u, 0x807fffffu, 0x007fffffu, /* subn. */
    0x00800000u, 0x80800000u,                           /* ±FLT_MIN */
    0x7f7fffffu, 0xff7fffffu, 0x7149f2cau, 0xf149f2cau, /* ±FLT_MAX, ±1e30 */
    0x42b17217u, 0x42b17218u, 0x42b17216u,              /* around ln(FLT_MAX) */
    0xc2aeac4fu, 0xc2aeac50u, 0xc2aeac51u,              /* around ln(FLT_MIN) */
    0xc2cff1b4u, 0xc2cff1b5u, 0xc2cff1b3u, 0xc2d00000u, /* around ln(2^-150), -104 */
    0x3f6c0000u, 0x3f6bffffu, 0x3f6c0001u,              /* erf split 0.921875 */
    0x40800000u, 0x407fffffu, 0x40800001u,              /* 4 (erf saturation) */
    0x41200000u, 0x411fffffu, 0x41200001u, 0x41102000u, /* 10, 9.0078 (tanh) */
    0x3f800000u, 0xbf800000u, 0x3f317218u, 0xbf317218u, /* ±1, ±ln2 */
    0x33800000u, 0xb3800000u, 0x39800000u, 0x2f800000u, /* small: 2^-24, 2^-12, 2^-32 */
};
#define SPECIAL_COUNT (sizeof SPECIAL_BITS / sizeof SPECIAL_BITS[0])

static size_t sweep_fill(sweep *w, float *x)
{
    size_t count = 0;
    while (count < CHUNK && w->next < w->end) {
        const uint64_t i = w->next++;
        switch (w->kind) {
        case 0: { /* i = 2·k + sign: bit pattern k·stride of each sign */
            const uint32_t bits = (uint32_t)((i >> 1) * w->stride);
            x[count++] = from_bits(bits | ((i & 1) ? 0x80000000u : 0u));
            break;
        }
        case 1:
            x[count++] = (float)(w->lo + w->step * (double)i);
            break;
        default:
            x[count++] = from_bits(SPECIAL_BITS[i]);
            break;
        }
    }
    return count;
}

/* The AVX-512 kernels run the AVX2 ones' recipe lane for lane: counts the points of a
 * chunk where their bits differ (NaN against NaN is the same). */
static unsigned long long avx512_differences;

static void compare_with_avx2(const ember_f32_vunary_kernel *kernel, const float *y,
                              const float *y_avx2, int have_avx2, size_t count)
{
    if (kernel->isa != EMBER_ISA_AVX512F || !have_avx2)
        return;
    for (size_t i = 0; i < count; i++)
        if (to_bits(y[i]) != to_bits(y_avx2[i]) && !(isnan(y[i]) && isnan(y_avx2[i])))
            avx512_differences++;
}

/* Runs the three sweeps through every usable kernel of the family. */
static void test_accuracy(const family *f, stats *all, uint32_t stride, uint64_t uniform_points)
{
    static float x[CHUNK], y[CHUNK], y_avx2[CHUNK];
    static double ref[CHUNK];
    const uint32_t top = to_bits(128.0f);
    sweep sweeps[3] = {
        {0, 2 * ((uint64_t)top / stride + 1), stride, 0, 0, 0},
        {0, uniform_points + 1, 0, f->lo, (f->hi - f->lo) / (double)uniform_points, 1},
        {0, SPECIAL_COUNT, 0, 0, 0, 2},
    };
    for (int which = 0; which < 3; which++) {
        sweep *w = &sweeps[which];
        size_t count;
        while ((count = sweep_fill(w, x)) > 0) {
            for (size_t i = 0; i < count; i++) {
                ref[i] = f->reference((double)x[i]);
            }
            int have_avx2 = 0; /* the AVX2 kernel ran on this chunk (listed before AVX-512) */
            for (size_t k = 0; k < f->count; k++) {
                const ember_f32_vunary_kernel *kernel = &f->kernels[k];
                if (!ember_cpu_has(kernel->isa)) {
                    continue;
                }
                snprintf(current_case, sizeof current_case, "%s accuracy sweep %d",
                         kernel->name, which);
                kernel->fn(count, x, y);
                for (size_t i = 0; i < count; i++) {
                    measure(&all[k], f, kernel, x[i], y[i], ref[i]);
                }
                compare_with_avx2(kernel, y, y_avx2, have_avx2, count);
                if (kernel->isa == EMBER_ISA_AVX2_FMA) {
                    memcpy(y_avx2, y, count * sizeof(float));
                    have_avx2 = 1;
                }
            }
        }
    }
}

static void report_accuracy(const family *f, const stats *all)
{
    char what[300];
    for (size_t k = 0; k < f->count; k++) {
        const ember_f32_vunary_kernel *kernel = &f->kernels[k];
        if (!ember_cpu_has(kernel->isa)) {
            continue;
        }
        const stats *s = &all[k];
        const enum kind kind = kind_of(kernel);
        const bound *b = &f->bounds[kind];
        printf("%-26s %-11s %9lu %8.3f %-15.9g %10.3g %-15.9g %10.3g  %5.1f %8.2g\n",
               kernel->name, KIND_NAMES[kind], s->points, s->max_ulp, s->at_ulp, s->max_abs,
               s->at_abs, s->max_rel, b->ulp, b->abs);
        snprintf(what, sizeof what, "%s: %lu special values wrong, first %s", kernel->name,
                 s->special_failures, s->first_special);
        check(s->special_failures == 0, what);
        snprintf(what, sizeof what, "%s: max error %.3f ulp at x = %.9g, bound %.1f",
                 kernel->name, s->max_ulp, s->at_ulp, b->ulp);
        check(s->max_ulp <= b->ulp, what);
        snprintf(what, sizeof what, "%s: max abs error %.3g at x = %.9g, bound %.3g",
                 kernel->name, s->max_abs, s->at_abs, b->abs);
        check(s->max_abs <= b->abs, what);
    }
}

/* ---------------------------------------------------------------- tails */

typedef struct guarded {
    unsigned char *base;
    size_t bytes;
    float *end; /* first inaccessible float */
} guarded;

static guarded guarded_new(size_t max_floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (max_floats * sizeof(float) + page - 1) / page * page;
    guarded g;
    g.bytes = data + page;
    g.base = mmap(NULL, g.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.base == MAP_FAILED || mprotect(g.base + data, page, PROT_NONE) != 0) {
        perror("test_vmath: mmap");
        exit(2);
    }
    g.end = (float *)(g.base + data);
    return g;
}

static void test_tails(const family *f, const ember_f32_vunary_kernel *kernel)
{
    enum { GUARD = 8 };
    static const uint32_t SENTINEL = 0x7fc0dead; /* a NaN no kernel produces */
    float input[MAX_TAIL], expected[MAX_TAIL], frame[GUARD + MAX_TAIL + GUARD];
    guarded gx = guarded_new(MAX_TAIL), gy = guarded_new(MAX_TAIL);
    char what[200];
    uint32_t rng = 0x9e3779b9u;
    for (size_t i = 0; i < MAX_TAIL; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        input[i] = (float)((int32_t)rng) * 0x1p-27f; /* in [-16, 16) */
    }
    input[3] = -0.0f;
    input[11] = NAN;
    input[17] = INFINITY;
    kernel->fn(MAX_TAIL, input, expected);
    (void)f;

    for (size_t n = 0; n <= MAX_TAIL; n++) {
        int ok = 1;
        snprintf(current_case, sizeof current_case, "%s tail n=%zu", kernel->name, n);
        /* x and y end at a PROT_NONE page: reading or writing past [0, n) faults. */
        float *x = gx.end - n, *y = gy.end - n;
        memcpy(x, input, n * sizeof(float));
        kernel->fn(n, x, y);
        ok &= memcmp(y, expected, n * sizeof(float)) == 0;
        ok &= memcmp(x, input, n * sizeof(float)) == 0;
        /* y inside sentinels: nothing before or after [0, n) is written. */
        for (size_t i = 0; i < GUARD + MAX_TAIL + GUARD; i++) {
            memcpy(&frame[i], &SENTINEL, sizeof SENTINEL);
        }
        kernel->fn(n, x, frame + GUARD);
        ok &= memcmp(frame + GUARD, expected, n * sizeof(float)) == 0;
        for (size_t i = 0; i < GUARD + MAX_TAIL + GUARD; i++) {
            if (i < GUARD || i >= GUARD + n) {
                ok &= memcmp(&frame[i], &SENTINEL, sizeof SENTINEL) == 0;
            }
        }
        /* In place. */
        kernel->fn(n, x, x);
        ok &= memcmp(x, expected, n * sizeof(float)) == 0;
        snprintf(what, sizeof what, "%s: n = %zu (tail results, guards or in place)",
                 kernel->name, n);
        check(ok, what);
    }
    munmap(gx.base, gx.bytes);
    munmap(gy.base, gy.bytes);
}

/* ---------------------------------------------------------------- hard swish */

/* The definition, step by step in float (this file contracts nothing into an FMA). */
static float hard_swish_reference(float v, const ember_f32_hard_swish *g)
{
    float t = v * g->alpha + g->beta;
    t = t < g->lo ? g->lo : t;
    t = t > g->hi ? g->hi : t;
    return v * t;
}

/* Every f32_hard_swish kernel the CPU runs, bit for bit against the definition: rows of
 * n = 0..MAX_TAIL floats (random, specials, the clamp's edges) 3 rows apart by a stride
 * past n, sentinels around and between the rows, the last row ending at a PROT_NONE page;
 * the hardswish gate and one with a negative slope and other bounds. */
static void test_hard_swish(void)
{
    enum { ROWS = 3, GAP = 5 };
    static const uint32_t SENTINEL = 0x7fc0dead;
    static const float SPECIALS[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f,
                                     3.0f, -3.0f, 2.9999998f, -3.0000002f, 1e30f, -1e30f};
    const ember_f32_hard_swish gates[2] = {{1.0f / 6, 0.5f, 0.0f, 1.0f, NULL},
                                           {-0.25f, 0.1f, -1.0f, 2.0f, NULL}};
    const size_t pitch = MAX_TAIL + GAP, floats = ROWS * pitch;
    guarded g = guarded_new(floats);
    float *y = g.end - floats + GAP; /* the last row's last float at the guard page */
    uint32_t rng = 0x1234567u;
    char what[200];
    for (size_t k = 0; k < ember_f32_hard_swish_kernel_count; k++) {
        const ember_f32_hard_swish_kernel *kernel = &ember_f32_hard_swish_kernels[k];
        if (!ember_cpu_has(kernel->isa))
            continue;
        for (size_t gi = 0; gi < 2; gi++)
            for (size_t n = 0; n <= MAX_TAIL; n++) {
                float input[ROWS * MAX_TAIL];
                for (size_t i = 0; i < ROWS * n; i++) {
                    rng ^= rng << 13;
                    rng ^= rng >> 17;
                    rng ^= rng << 5;
                    input[i] = i % 5 == 4 ? SPECIALS[(rng >> 8) % (sizeof SPECIALS / 4)]
                                          : (float)((int32_t)rng) * 0x1p-28f; /* [-8, 8) */
                }
                for (size_t i = 0; i < floats; i++)
                    memcpy(&g.end[-(ptrdiff_t)floats + (ptrdiff_t)i], &SENTINEL, 4);
                for (size_t r = 0; r < ROWS; r++)
                    memcpy(y + r * pitch + (pitch - GAP - n), input + r * n, n * sizeof(float));
                snprintf(current_case, sizeof current_case, "%s gate %zu n=%zu", kernel->name,
                         gi, n);
                float *first = y + (pitch - GAP - n);
                kernel->fn(ROWS, n, first, pitch * sizeof(float), &gates[gi]);
                int ok = 1;
                for (size_t i = 0; i < floats; i++) {
                    const float *at = &g.end[-(ptrdiff_t)floats + (ptrdiff_t)i];
                    const ptrdiff_t from_first = at - first;
                    const size_t r = from_first >= 0 ? (size_t)from_first / pitch : ROWS;
                    const size_t j = from_first >= 0 ? (size_t)from_first % pitch : 0;
                    if (r < ROWS && j < n) {
                        const float want = hard_swish_reference(input[r * n + j], &gates[gi]);
                        ok &= memcmp(at, &want, 4) == 0 || (isnan(*at) && isnan(want));
                    } else {
                        ok &= memcmp(at, &SENTINEL, 4) == 0;
                    }
                }
                snprintf(what, sizeof what, "%s: gate %zu, %d rows of n = %zu (bits or guards)",
                         kernel->name, gi, ROWS, n);
                check(ok, what);
            }
    }
    munmap(g.base, g.bytes);
    const ember_f32_hard_swish_kernel *chosen = ember_kernel_config_get()->f32_hard_swish;
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch: f32_hard_swish -> %s\n", chosen->name);
    check(ember_cpu_has(chosen->isa), "dispatch chose a usable f32_hard_swish kernel");
    if (forced && strcmp(forced, "scalar") == 0)
        check(chosen->isa == EMBER_ISA_SCALAR, "f32_hard_swish: EMBER_ISA=scalar forces scalar");
}

/* ---------------------------------------------------------------- dispatch */

static void test_dispatch(void)
{
    const ember_kernel_config *config = ember_kernel_config_get();
    const ember_f32_vunary_kernel *chosen[FAMILY_COUNT] = {
        config->f32_vexp, config->f32_vsigmoid, config->f32_vtanh, config->f32_verf};
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch:");
    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        printf(" f32_%s -> %s", FAMILIES[i].name, chosen[i] ? chosen[i]->name : "(none)");
    }
    printf(" (EMBER_ISA=%s)\n", forced ? forced : "<unset>");

    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        const family *f = &FAMILIES[i];
        char what[160];
        snprintf(what, sizeof what, "dispatch chose a usable f32_%s kernel", f->name);
        check(chosen[i] != NULL && ember_cpu_has(chosen[i]->isa), what);
        if (!chosen[i]) {
            continue;
        }
        const ember_f32_vunary_kernel *best = NULL, *of_forced = NULL;
        for (size_t k = 0; k < f->count; k++) {
            if (ember_cpu_has(f->kernels[k].isa)) {
                best = &f->kernels[k];
                if (forced && strcmp(forced, ember_isa_name(f->kernels[k].isa)) == 0) {
                    of_forced = &f->kernels[k];
                }
            }
        }
        snprintf(what, sizeof what, "f32_%s: dispatch picks %s", f->name,
                 of_forced ? "the forced ISA" : "the last usable kernel of the list");
        check(chosen[i] == (of_forced ? of_forced : best), what);
        if (forced && strcmp(forced, "scalar") == 0) {
            snprintf(what, sizeof what, "f32_%s: EMBER_ISA=scalar forces scalar", f->name);
            check(chosen[i]->isa == EMBER_ISA_SCALAR, what);
        }
        snprintf(what, sizeof what, "f32_%s: the first kernel of the list is scalar", f->name);
        check(f->kernels[0].isa == EMBER_ISA_SCALAR, what);
    }
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    uint32_t stride = 223;
    uint64_t uniform_points = 1000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            stride = 223 * 16 + 1; /* odd multiples keep every mantissa residue reachable */
            uniform_points /= 16;
        } else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = (uint32_t)strtoul(argv[++i], NULL, 10);
            if (stride == 0) {
                stride = 1;
            }
        } else {
            fprintf(stderr, "usage: %s [--quick] [--stride N]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    families_init();
    test_dispatch();
    test_hard_swish();

    printf("sweep: every %u-th float of [-128, 128], %llu uniform points, %zu special "
           "values\n", (unsigned)stride, (unsigned long long)uniform_points, SPECIAL_COUNT);
    printf("%-26s %-11s %9s %8s %-15s %10s %-15s %10s  %5s %8s\n", "kernel", "kind", "points",
           "max ulp", "at x", "max abs", "at x", "max rel", "bound", "abs bnd");
    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        const family *f = &FAMILIES[i];
        stats *all = calloc(f->count, sizeof *all);
        if (!all) {
            return 2;
        }
        avx512_differences = 0;
        test_accuracy(f, all, stride, uniform_points);
        report_accuracy(f, all);
        char what[128];
        snprintf(what, sizeof what, "%s: the AVX-512 kernel gives the AVX2 kernel's bits "
                 "(%llu points differ)", f->name, avx512_differences);
        check(avx512_differences == 0, what);
        free(all);
        for (size_t k = 0; k < f->count; k++) {
            if (ember_cpu_has(f->kernels[k].isa)) {
                test_tails(f, &f->kernels[k]);
            }
        }
    }
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
