/*
 * test_dwconv — every f32_dwconv kernel of this build that the CPU can run, its generic
 * and its 3×3 stride-2 run, against a double-precision reference and the scalar kernel.
 *
 * For 1, 2, 6, 9 and 25 taps and every n in 0..200 (below, at and above every vector
 * width, chunk and their multiples up to three 64-output passes and more, so every tail
 * shape of the 8- and 16-float kernels): random inputs and weights, with
 * and without a clamp (ReLU6-like bounds inside the value range), each tap's input ending
 * exactly at a PROT_NONE page (reading past src[t][n) faults), out between sentinels (a
 * write outside out[0..n) is caught). Tolerance 1e-5 · (Σ|w·x| + |bias| + 1): FMA and
 * the armv7 kernel's twice-rounded multiply-add differ from the scalar kernel's rounding.
 * Also a NaN input must give NaN at its output (no clamp swallows it) and nowhere else
 * (no lane of a tail mixes outputs), and the dispatch choice is printed
 * ("dispatch: f32_dwconv -> name"). The 3×3 stride-2 run: the same for every n in 0..200,
 * each row ending at a PROT_NONE page after the 2n + 2 floats it may read, the last of
 * them a NaN no output may take in. An AVX-512 kernel adds each output's taps in the
 * order and with the fused multiply-adds of the AVX2 one: its runs and whole planes must
 * give the AVX2 kernel's bits exactly (but for 3×3 stride-2 runs under 8, which the AVX2
 * kernel leaves to the scalar one).
 * Prints "N passed, M failed" last; exits 1 on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_N 200
#define SENTINEL 12345.0f

static int passed, failed;

static void check(int ok, const char *kernel, size_t taps, size_t n, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 20)
        printf("FAIL %s taps %zu n %zu: %s\n", kernel, taps, n, what);
}

/* A buffer of `floats` floats ending exactly at an inaccessible page. */
typedef struct guarded {
    void *base;
    size_t bytes;
    float *data;
} guarded;

static guarded guarded_new(size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    guarded g = {NULL, data + page, NULL};
    g.base = mmap(NULL, g.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.base == MAP_FAILED || mprotect((char *)g.base + data, page, PROT_NONE) != 0) {
        perror("test_dwconv: mmap");
        exit(2);
    }
    g.data = (float *)((char *)g.base + data) - floats;
    return g;
}

static float uniform(void)
{
    return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

enum { MAX_TAPS = 25 };

/* The AVX2 kernel, for an AVX-512 one when the CPU runs both (their outputs must be the
 * same bits); NULL for any other. */
static const ember_f32_dwconv_kernel *fma_twin(const ember_f32_dwconv_kernel *kernel)
{
    if (kernel->isa != EMBER_ISA_AVX512F)
        return NULL;
    for (size_t i = 0; i < ember_f32_dwconv_kernel_count; i++)
        if (ember_f32_dwconv_kernels[i].isa == EMBER_ISA_AVX2_FMA &&
            ember_cpu_has(EMBER_ISA_AVX2_FMA))
            return &ember_f32_dwconv_kernels[i];
    return NULL;
}

/* Whether n floats are the same bits (any NaN equal to any NaN). */
static int same_bits(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i])))
            return 0;
    return 1;
}

static void run_case(const ember_f32_dwconv_kernel *kernel, size_t taps, size_t n, int clamp)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    guarded inputs[MAX_TAPS];
    const float *src[MAX_TAPS];
    float w[MAX_TAPS], bias = uniform();
    for (size_t t = 0; t < taps; t++) {
        inputs[t] = guarded_new(n);
        for (size_t x = 0; x < n; x++)
            inputs[t].data[x] = uniform();
        src[t] = inputs[t].data;
        w[t] = uniform();
    }
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    float out[MAX_N + 2], ref[MAX_N + 2];
    for (size_t o = 0; o < n + 2; o++)
        out[o] = ref[o] = SENTINEL;
    kernel->fn(n, taps, src, w, bias, out + 1, &params);
    scalar->fn(n, taps, src, w, bias, ref + 1, &params);
    int ok_exact = 1, ok_scalar = 1;
    for (size_t o = 0; o < n; o++) {
        double sum = bias, magnitude = fabs(bias) + 1.0;
        for (size_t t = 0; t < taps; t++) {
            const double term = (double)w[t] * src[t][o];
            sum += term;
            magnitude += fabs(term);
        }
        sum = sum < params.min ? params.min : sum;
        sum = sum > params.max ? params.max : sum;
        const double tolerance = 1e-5 * magnitude;
        ok_exact &= fabs(out[o + 1] - sum) <= tolerance;
        ok_scalar &= fabs(out[o + 1] - ref[o + 1]) <= 2 * tolerance;
    }
    check(ok_exact, kernel->name, taps, n, "differs from the double reference");
    check(ok_scalar, kernel->name, taps, n, "differs from the scalar kernel");
    check(out[0] == SENTINEL && out[n + 1] == SENTINEL, kernel->name, taps, n,
          "wrote outside out[0..n)");
    const ember_f32_dwconv_kernel *twin = fma_twin(kernel);
    if (twin) {
        float same[MAX_N + 2];
        twin->fn(n, taps, src, w, bias, same + 1, &params);
        check(same_bits(out + 1, same + 1, n), kernel->name, taps, n,
              "differs from the AVX2 kernel's bits");
    }
    if (n > 0 && !clamp) { /* a NaN input reaches its output, and only that one */
        const size_t at = (size_t)rand() % n;
        inputs[taps - 1].data[at] = NAN;
        kernel->fn(n, taps, src, w, bias, out + 1, &params);
        int others_finite = 1;
        for (size_t o = 0; o < n; o++)
            others_finite &= o == at || !isnan(out[o + 1]);
        check(isnan(out[at + 1]) && others_finite, kernel->name, taps, n,
              "NaN input did not give NaN exactly at its output");
    }
    for (size_t t = 0; t < taps; t++)
        munmap(inputs[t].base, inputs[t].bytes);
}

/* The 3×3 stride-2 run: each row holds exactly the 2n + 2 floats the contract lets it
 * read, the last one a NaN that no output may use. */
static void run_case_3x3s2(const ember_f32_dwconv_kernel *kernel, size_t n, int clamp)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    const size_t floats = 2 * n + 2;
    guarded rows[3];
    const float *row[3];
    float w[9], bias = uniform();
    for (size_t r = 0; r < 3; r++) {
        rows[r] = guarded_new(floats);
        for (size_t x = 0; x < floats; x++)
            rows[r].data[x] = x + 1 == floats ? NAN : uniform();
        row[r] = rows[r].data;
    }
    for (size_t t = 0; t < 9; t++)
        w[t] = uniform();
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    float out[MAX_N + 2], ref[MAX_N + 2];
    for (size_t o = 0; o < n + 2; o++)
        out[o] = ref[o] = SENTINEL;
    kernel->fn_3x3s2(n, row, w, bias, out + 1, &params);
    scalar->fn_3x3s2(n, row, w, bias, ref + 1, &params);
    int ok_exact = 1, ok_scalar = 1;
    for (size_t o = 0; o < n; o++) {
        double sum = bias, magnitude = fabs(bias) + 1.0;
        for (size_t t = 0; t < 9; t++) {
            const double term = (double)w[t] * row[t / 3][2 * o + t % 3];
            sum += term;
            magnitude += fabs(term);
        }
        sum = sum < params.min ? params.min : sum;
        sum = sum > params.max ? params.max : sum;
        const double tolerance = 1e-5 * magnitude;
        ok_exact &= fabs(out[o + 1] - sum) <= tolerance; /* false for a NaN */
        ok_scalar &= fabs(out[o + 1] - ref[o + 1]) <= 2 * tolerance;
    }
    check(ok_exact, kernel->name, 9, n, "3x3s2 differs from the double reference");
    check(ok_scalar, kernel->name, 9, n, "3x3s2 differs from the scalar kernel");
    check(out[0] == SENTINEL && out[n + 1] == SENTINEL, kernel->name, 9, n,
          "3x3s2 wrote outside out[0..n)");
    const ember_f32_dwconv_kernel *twin = fma_twin(kernel);
    if (twin && n >= 8) { /* shorter, the AVX2 kernel takes the scalar one's (unfused) */
        float same[MAX_N + 2];
        twin->fn_3x3s2(n, row, w, bias, same + 1, &params);
        check(same_bits(out + 1, same + 1, n), kernel->name, 9, n,
              "3x3s2 differs from the AVX2 kernel's bits");
    }
    if (n > 0 && !clamp) { /* an odd column is the middle tap of its output only */
        const size_t at = (size_t)rand() % n, r = (size_t)rand() % 3;
        rows[r].data[2 * at + 1] = NAN;
        kernel->fn_3x3s2(n, row, w, bias, out + 1, &params);
        int others_finite = 1;
        for (size_t o = 0; o < n; o++)
            others_finite &= o == at || !isnan(out[o + 1]);
        check(isnan(out[at + 1]) && others_finite, kernel->name, 9, n,
              "3x3s2: NaN input did not give NaN exactly at its output");
    }
    for (size_t r = 0; r < 3; r++)
        munmap(rows[r].base, rows[r].bytes);
}

/* The blocked kernel (or, `whole`, the whole-plane one): `channels` planes, each ending at
 * a guard page, outputs between sentinels, against the scalar blocked kernel and a double
 * reference, twice on one scratch (the blocked kernel's padding zeroed once: the second
 * call must find it still zero; the whole-plane kernel's zero row at a guard page). */
static void run_case_blocked(const ember_f32_dwconv_kernel *kernel,
                             const ember_f32_dwconv_geometry *g, size_t channels, int clamp,
                             int whole)
{
    const ember_f32_dwconv_kernel *scalar = &ember_f32_dwconv_kernels[0];
    const ember_f32_dwconv_blocked_fn fn = whole ? kernel->plane_3x3s2 : kernel->blocked;
    const size_t in_plane = g->in_h * g->in_w, out_plane = g->out_h * g->out_w;
    const size_t taps = g->kernel_h * g->kernel_w;
    guarded input = guarded_new(channels * in_plane);
    for (size_t x = 0; x < channels * in_plane; x++)
        input.data[x] = uniform();
    float w[EMBER_F32_DWCONV_MAX_BLOCK * EMBER_F32_DWCONV_MAX_TAPS];
    float bias[EMBER_F32_DWCONV_MAX_BLOCK];
    for (size_t x = 0; x < channels * taps; x++)
        w[x] = uniform();
    for (size_t c = 0; c < channels; c++)
        bias[c] = uniform();
    const ember_f32_dwconv_params params = {clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY};
    const size_t stride = out_plane + 2; /* a sentinel between planes */
    float *out = malloc(channels * stride * sizeof(float) + sizeof(float));
    float *ref = malloc(channels * out_plane * sizeof(float));
    guarded zero_row = guarded_new(g->in_w);
    for (size_t x = 0; x < g->in_w; x++)
        zero_row.data[x] = 0.0f;
    const size_t scratch_floats = ember_f32_dwconv_blocked_scratch(g, kernel->block);
    float *scratch = whole ? zero_row.data
                           : aligned_alloc(32, (scratch_floats + 8) * sizeof(float));
    if (!whole)
        memset(scratch, 0, scratch_floats * sizeof(float));
    scalar->blocked(g, channels, input.data, in_plane, w, bias, ref, out_plane, &params, NULL);
    char what[160];
    snprintf(what, sizeof what,
             "%s %zux%zu -> %zux%zu k %zux%zu s %zu,%zu d %zu,%zu pad %zu,%zu",
             whole ? "whole planes" : "blocked", g->in_h, g->in_w, g->out_h, g->out_w,
             g->kernel_h, g->kernel_w, g->stride_h, g->stride_w, g->dilation_h,
             g->dilation_w, g->pad_top, g->pad_left);
    for (int call = 0; call < 2; call++) {
        for (size_t x = 0; x < channels * stride + 1; x++)
            out[x] = SENTINEL;
        fn(g, channels, input.data, in_plane, w, bias, out + 1, stride, &params, scratch);
        int ok_exact = 1, ok_scalar = 1, ok_sentinels = out[0] == SENTINEL;
        for (size_t c = 0; c < channels; c++) {
            ok_sentinels &= out[1 + c * stride + out_plane] == SENTINEL &&
                            out[1 + c * stride + out_plane + 1] == SENTINEL;
            for (size_t r = 0; r < g->out_h; r++)
                for (size_t o = 0; o < g->out_w; o++) {
                    double sum = bias[c], magnitude = fabs(bias[c]) + 1.0;
                    for (size_t i = 0; i < g->kernel_h; i++)
                        for (size_t j = 0; j < g->kernel_w; j++) {
                            const size_t ih = r * g->stride_h + i * g->dilation_h;
                            const size_t iw = o * g->stride_w + j * g->dilation_w;
                            if (ih < g->pad_top || ih - g->pad_top >= g->in_h ||
                                iw < g->pad_left || iw - g->pad_left >= g->in_w)
                                continue;
                            const double term =
                                (double)w[c * taps + i * g->kernel_w + j] *
                                input.data[c * in_plane + (ih - g->pad_top) * g->in_w + iw -
                                           g->pad_left];
                            sum += term;
                            magnitude += fabs(term);
                        }
                    sum = sum < params.min ? params.min : sum;
                    sum = sum > params.max ? params.max : sum;
                    const float got = out[1 + c * stride + r * g->out_w + o];
                    const double tolerance = 1e-5 * magnitude;
                    ok_exact &= fabs(got - sum) <= tolerance;
                    ok_scalar &= fabs(got - ref[c * out_plane + r * g->out_w + o]) <= 2 * tolerance;
                }
        }
        check(ok_exact, kernel->name, taps, out_plane, what);
        check(ok_scalar, kernel->name, taps, out_plane,
              "differs from the scalar blocked kernel");
        check(ok_sentinels, kernel->name, taps, out_plane, "wrote outside its planes");
    }
    const ember_f32_dwconv_kernel *twin = fma_twin(kernel);
    if (twin && whole) {
        float *same = malloc(channels * stride * sizeof(float) + sizeof(float));
        twin->plane_3x3s2(g, channels, input.data, in_plane, w, bias, same + 1, stride,
                          &params, scratch);
        int ok = 1;
        for (size_t c = 0; c < channels; c++)
            ok &= same_bits(out + 1 + c * stride, same + 1 + c * stride, out_plane);
        check(ok, kernel->name, taps, out_plane, "whole planes differ from the AVX2 kernel's");
        free(same);
    }
    if (!clamp) { /* a NaN input reaches exactly the outputs whose taps read it */
        const size_t c = (size_t)rand() % channels, at = (size_t)rand() % in_plane;
        input.data[c * in_plane + at] = NAN;
        fn(g, channels, input.data, in_plane, w, bias, out + 1, stride, &params, scratch);
        scalar->blocked(g, channels, input.data, in_plane, w, bias, ref, out_plane, &params, NULL);
        int same = 1;
        for (size_t k = 0; k < channels; k++)
            for (size_t x = 0; x < out_plane; x++)
                same &= isnan(out[1 + k * stride + x]) == isnan(ref[k * out_plane + x]);
        check(same, kernel->name, taps, out_plane, "a NaN input reached other outputs");
        /* an infinite weight: NaN where its tap reads the padding (∞ · 0), ±∞ or NaN
         * elsewhere, as the scalar kernel has it */
        const size_t t = (size_t)rand() % taps;
        w[c * taps + t] = (rand() & 1) ? INFINITY : -INFINITY;
        fn(g, channels, input.data, in_plane, w, bias, out + 1, stride, &params, scratch);
        scalar->blocked(g, channels, input.data, in_plane, w, bias, ref, out_plane, &params, NULL);
        same = 1;
        for (size_t k = 0; k < channels; k++)
            for (size_t x = 0; x < out_plane; x++) {
                const float a = out[1 + k * stride + x], b = ref[k * out_plane + x];
                same &= isnan(a) ? isnan(b) : isinf(a) ? a == b : !isnan(b) && !isinf(b);
            }
        check(same, kernel->name, taps, out_plane, "an infinite weight's NaNs and infinities");
    }
    free(out);
    free(ref);
    if (!whole)
        free(scratch);
    munmap(zero_row.base, zero_row.bytes);
    munmap(input.base, input.bytes);
}

/* Random geometries: kernels 1..5 × 1..5, strides 1..3, dilations 1..2, padding 0..2,
 * planes of 1 to 20 rows and columns (fewer and more than a vector of pixels), 1 to 8
 * channels. */
static void run_blocked(const ember_f32_dwconv_kernel *kernel)
{
    for (int n = 0; n < 400; n++) {
        ember_f32_dwconv_geometry g;
        g.kernel_h = 1 + (size_t)rand() % 5;
        g.kernel_w = 1 + (size_t)rand() % 5;
        g.stride_h = 1 + (size_t)rand() % 3;
        g.stride_w = 1 + (size_t)rand() % 3;
        g.dilation_h = 1 + (size_t)rand() % 2;
        g.dilation_w = 1 + (size_t)rand() % 2;
        g.pad_top = (size_t)rand() % 3;
        g.pad_left = (size_t)rand() % 3;
        g.in_h = 1 + (size_t)rand() % 20;
        g.in_w = 1 + (size_t)rand() % 20;
        const size_t pad_bottom = (size_t)rand() % 3, pad_right = (size_t)rand() % 3;
        const size_t reach_h = (g.kernel_h - 1) * g.dilation_h + 1;
        const size_t reach_w = (g.kernel_w - 1) * g.dilation_w + 1;
        if (g.in_h + g.pad_top + pad_bottom < reach_h || g.in_w + g.pad_left + pad_right < reach_w)
            continue;
        g.out_h = (g.in_h + g.pad_top + pad_bottom - reach_h) / g.stride_h + 1;
        g.out_w = (g.in_w + g.pad_left + pad_right - reach_w) / g.stride_w + 1;
        run_case_blocked(kernel, &g, 1 + (size_t)rand() % kernel->block, n % 2, 0);
    }
    /* MobileNets' planes: 3×3 "same" at 7×7, 12×12 and 14×14, stride 2 from 14×14 and
     * 24×24, 5×5 "same" at 28×28 and stride 2 from 48×48 (conv_depthwise.c's
     * blocked_pays takes them all) */
    static const ember_f32_dwconv_geometry nets[] = {
        {7, 7, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1},
        {12, 12, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1},
        {14, 14, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1},
        {14, 14, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1},
        {24, 24, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1},
        {28, 28, 28, 28, 5, 5, 1, 1, 1, 1, 2, 2},
        {48, 48, 24, 24, 5, 5, 2, 2, 1, 1, 2, 2},
    };
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
        for (size_t channels = 1; channels <= kernel->block; channels += 7)
            run_case_blocked(kernel, &nets[i], channels, 0, 0);
}

/* The whole-plane kernel: 3×3 stride 2 padded by 1 on the left, 0 to 2 on top, 0 or 1 on
 * the right and bottom, planes of 1 to 40 rows and columns (rows of fewer than 8
 * outputs, of one or two vectors, wider; even and odd widths), then rows of 16 to 130
 * outputs, right padding up to 5, then MobileNets' planes (112 -> 56, 48 -> 24,
 * 24 -> 12 and 14 -> 7). */
static void run_whole_planes(const ember_f32_dwconv_kernel *kernel)
{
    for (int n = 0; n < 300; n++) {
        ember_f32_dwconv_geometry g = {0, 0, 0, 0, 3, 3, 2, 2, 1, 1, (size_t)rand() % 3, 1};
        g.in_h = 1 + (size_t)rand() % 40;
        g.in_w = 1 + (size_t)rand() % 40;
        const size_t pad_bottom = (size_t)rand() % 2, pad_right = (size_t)rand() % 2;
        if (g.in_h + g.pad_top + pad_bottom < 3 || g.in_w + 1 + pad_right < 3)
            continue;
        g.out_h = (g.in_h + g.pad_top + pad_bottom - 3) / 2 + 1;
        g.out_w = (g.in_w + 1 + pad_right - 3) / 2 + 1;
        run_case_blocked(kernel, &g, 1 + (size_t)rand() % 3, n % 2, 1);
    }
    /* rows of more than 16 outputs: every tail of the 16-float kernels' passes (out_w 17
     * .. 32, 33 .. 64, past 64 and 128), even and odd widths, top padding 0 to 2, right
     * padding 0 and 1 (rows at least 2·out_w − 1 wide) and 2 to 5 (shorter) */
    static const size_t widths[] = {31,  32,  33,  34,  35,  47,  48,  63,  64,  65,  66,
                                    67,  95,  96,  97,  98,  127, 128, 129, 130, 131, 159,
                                    160, 161, 191, 200, 257, 258};
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
        for (size_t pad_right = 0; pad_right < 6; pad_right++) {
            ember_f32_dwconv_geometry g = {1 + (size_t)rand() % 9, widths[i], 0, 0, 3, 3, 2,
                                           2, 1, 1, pad_right % 3, 1};
            const size_t pad_bottom = (size_t)rand() % 2;
            if (g.in_h + g.pad_top + pad_bottom < 3)
                g.in_h = 3;
            g.out_h = (g.in_h + g.pad_top + pad_bottom - 3) / 2 + 1;
            g.out_w = (g.in_w + 1 + pad_right - 3) / 2 + 1;
            run_case_blocked(kernel, &g, 1 + (size_t)rand() % 3, (int)(pad_right % 2), 1);
        }
    static const size_t nets[][2] = {{112, 56}, {48, 24}, {24, 12}, {14, 7}};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++) {
        const ember_f32_dwconv_geometry g = {nets[i][0], nets[i][0], nets[i][1], nets[i][1],
                                             3, 3, 2, 2, 1, 1, 1, 1};
        run_case_blocked(kernel, &g, 2, 0, 1);
    }
}

int main(void)
{
    srand(1);
    const ember_kernel_config *config = ember_kernel_config_get();
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch: f32_dwconv -> %s (EMBER_ISA=%s)\n", config->f32_dwconv->name,
           forced ? forced : "");
    check(config->f32_dwconv != NULL && ember_cpu_has(config->f32_dwconv->isa), "dispatch", 0,
          0, "chosen kernel not runnable");
    for (size_t i = 0; i < ember_f32_dwconv_kernel_count; i++) {
        const ember_f32_dwconv_kernel *kernel = &ember_f32_dwconv_kernels[i];
        if (!ember_cpu_has(kernel->isa)) {
            printf("skip %s (CPU lacks %s)\n", kernel->name, ember_isa_name(kernel->isa));
            continue;
        }
        static const size_t tap_counts[] = {1, 2, 6, 9, MAX_TAPS};
        for (size_t i_taps = 0; i_taps < sizeof tap_counts / sizeof *tap_counts; i_taps++)
            for (size_t n = 0; n <= MAX_N; n++)
                for (int clamp = 0; clamp <= 1; clamp++)
                    run_case(kernel, tap_counts[i_taps], n, clamp);
        for (size_t n = 0; n <= MAX_N; n++)
            for (int clamp = 0; clamp <= 1; clamp++)
                run_case_3x3s2(kernel, n, clamp);
        if (kernel->blocked)
            run_blocked(kernel);
        if (kernel->plane_3x3s2)
            run_whole_planes(kernel);
        printf("tested %s%s%s\n", kernel->name,
               kernel->blocked ? " (and its blocked kernel)" : "",
               kernel->plane_3x3s2 ? " (and its whole-plane kernel)" : "");
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
