/*
 * test_winograd — every f32_winograd kernel of this build that the CPU can run (the
 * Winograd F(2×2, 3×3) input, output and filter transforms, kernels.h) against a
 * double-precision evaluation of the matrix products Bᵀ d B, Aᵀ M A and G g Gᵀ, and bit
 * for bit against the scalar kernel (adds, subtracts and halvings in one order: any build
 * gives the same bits).
 *
 * For every n in 0..MAX_N (below, at and above every vector width, the input's chunk
 * of 32 tiles and the filter's run of 32 elements): random inputs, each ending exactly
 * at a PROT_NONE page after the floats it may read (the input's rows of `width`, the
 * filter's whole runs), the input's rows also starting right after one; the input's
 * rows at several geometries (patches starting left of the row, inside it, past its
 * end; a NULL row), whose columns outside the row read as zeros; outputs with strides
 * wider than n between sentinels (a write outside the 16 (input, filter) or 4 (output)
 * runs of n is caught). The x86 kernels' store (the output straight into two image rows,
 * with a residual and the clamp) against the scalar kernel's output and the caller's
 * residual and clamp, bit for bit, with a row clipped at the image's edge, a NULL second
 * row, a residual apart or in place, and NaN outputs. Prints the dispatch
 * choice ("dispatch: f32_winograd -> name"), then "N passed, M failed"; exits 1 on any
 * failure.
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

#define MAX_N 70
#define GAP 3 /* floats between the output runs, kept at the sentinel */
static const float SENTINEL = 12345.0f;

static int passed, failed;

static void check(int ok, const char *kernel, const char *what, size_t n)
{
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 20)
        printf("FAIL %s n %zu: %s\n", kernel, n, what);
}

static unsigned rng = 0x9e3779b9u;

static float random_float(void) /* in [-2, 2) */
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (float)(rng >> 8) * (4.0f / 16777216.0f) - 2.0f;
}

/* `floats` floats ending exactly at an inaccessible page. */
static float *guarded(size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    char *base = mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (base == MAP_FAILED || mprotect(base + data, page, PROT_NONE) != 0) {
        perror("test_winograd: mmap");
        exit(2);
    }
    return (float *)(base + data) - floats;
}

/* `floats` floats starting right after an inaccessible page. */
static float *guarded_before(size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    char *base = mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (base == MAP_FAILED || mprotect(base, page, PROT_NONE) != 0) {
        perror("test_winograd: mmap");
        exit(2);
    }
    return (float *)(base + page);
}

static const double BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/* Every float of `buffer` outside runs r < runs of n at r · stride is the sentinel. */
static int sentinels_kept(const float *buffer, size_t runs, size_t n, size_t stride)
{
    for (size_t i = 0; i < runs * stride; i++)
        if (i % stride >= n && buffer[i] != SENTINEL)
            return 0;
    return 1;
}

/* 16 runs of `stride` floats, every one the sentinel. */
static float *sixteen_runs(size_t stride)
{
    float *runs = malloc(16 * stride * sizeof(float) + 1);
    for (size_t i = 0; i < 16 * stride; i++)
        runs[i] = SENTINEL;
    return runs;
}

/* A kernel's 16 runs of n (`got`) against the scalar kernel's (`ref`): the same bits, and
 * nothing written between the runs; frees both. */
static void check_sixteen_runs(const char *kernel, const char *transform, float *got,
                               float *ref, size_t n, size_t stride)
{
    char what[96];
    snprintf(what, sizeof what, "%s transform: not the scalar kernel's bits", transform);
    check(memcmp(got, ref, 16 * stride * sizeof(float)) == 0, kernel, what, n);
    snprintf(what, sizeof what, "%s transform wrote outside its runs", transform);
    check(sentinels_kept(got, 16, n, stride), kernel, what, n);
    free(got);
    free(ref);
}

/* Column x of a row of `width` (NULL: none), zero outside it. */
static double column(const float *row, ptrdiff_t x, ptrdiff_t width)
{
    return row != NULL && x >= 0 && x < width ? row[x] : 0.0;
}

static void test_input(const ember_f32_winograd_kernel *k, const ember_f32_winograd_kernel *ref,
                       size_t n, const float *const rows[4], ptrdiff_t x0, ptrdiff_t width)
{
    const size_t stride = n + GAP;
    float *v = sixteen_runs(stride), *w = sixteen_runs(stride);
    k->input(n, rows, x0, width, v, stride);
    ref->input(n, rows, x0, width, w, stride);
    int close = 1;
    for (size_t t = 0; t < n; t++)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                double sum = 0.0; /* Bᵀ d B */
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        sum += BT[a][i] * column(rows[i], x0 + 2 * (ptrdiff_t)t + j, width) *
                               BT[b][j];
                close &= fabs(v[(size_t)(4 * a + b) * stride + t] - sum) <= 1e-5 * 8;
            }
    check(close, k->name, "input transform against Bᵀ d B", n);
    check_sixteen_runs(k->name, "input", v, w, n, stride);
}

/* The input's geometries for n tiles: where the patches start (x0) in a row of `width`
 * (the padding of a 3×3 conv, both sides or one; inside; past the row's end), and
 * whether row 1 is NULL (a row of the padding above or below). */
static void test_input_geometries(const ember_f32_winograd_kernel *k,
                                  const ember_f32_winograd_kernel *ref, size_t n)
{
    const ptrdiff_t span = 2 * (ptrdiff_t)n + 2;
    const struct {
        ptrdiff_t x0, width;
        int null_row;
    } cases[] = {{-1, span - 1, 0}, {-1, span - 2, 0}, {0, span, 0},  {3, span + 7, 0},
                 {-2, 3, 0},        {5, 4, 0},          {0, span, 1}, {-1, span - 1, 1}};
    for (size_t g = 0; g < sizeof cases / sizeof cases[0]; g++)
        for (int before = 0; before < 2; before++) {
            const size_t width = (size_t)cases[g].width;
            const float *rows[4];
            for (int r = 0; r < 4; r++) {
                float *row = before ? guarded_before(width) : guarded(width);
                for (size_t j = 0; j < width; j++)
                    row[j] = random_float();
                rows[r] = row;
            }
            if (cases[g].null_row)
                rows[1] = NULL;
            test_input(k, ref, n, rows, cases[g].x0, cases[g].width);
        }
}

static void test_output(const ember_f32_winograd_kernel *k, const ember_f32_winograd_kernel *ref,
                        size_t n, const float *m, size_t m_stride)
{
    const float bias = random_float();
    const size_t stride = n; /* y's runs are n apart: the sentinels go after all four */
    float *y = malloc((4 * n + GAP) * sizeof(float)), *z = malloc((4 * n + GAP) * sizeof(float));
    for (size_t i = 0; i < 4 * n + GAP; i++)
        y[i] = z[i] = SENTINEL;
    k->output(n, m, m_stride, bias, y);
    ref->output(n, m, m_stride, bias, z);
    int close = 1;
    for (size_t t = 0; t < n; t++)
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                double sum = bias; /* Aᵀ M A */
                for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 4; b++)
                        sum += AT[r][a] * m[(size_t)(4 * a + b) * m_stride + t] * AT[c][b];
                const float got = y[(size_t)(2 * r + c) * stride + t];
                close &= sum != sum ? got != got : fabs(got - sum) <= 1e-5 * 20;
            }
    check(close, k->name, "output transform against Aᵀ M A + bias", n);
    check(memcmp(y, z, (4 * n + GAP) * sizeof(float)) == 0, k->name,
          "output transform: not the scalar kernel's bits", n);
    int kept = 1;
    for (size_t i = 4 * n; i < 4 * n + GAP; i++)
        kept &= y[i] == SENTINEL;
    check(kept, k->name, "output transform wrote past its four runs", n);
    free(y);
    free(z);
}

/* The clamp of ops/conv_winograd.c's store_row: NaN kept. */
static float clamp(float v, float min, float max)
{
    const float low = v < min ? min : v;
    return low > max ? max : low;
}

static int same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* A store (x86 kernels) against the scalar kernel's output, then store_row's residual and
 * clamp: the same bits, `columns` of each row written and nothing past them (rows end at
 * an inaccessible page, or start after one). Residual none, apart, or the row itself. */
static void test_store_case(const ember_f32_winograd_kernel *k,
                            const ember_f32_winograd_kernel *ref, size_t n, const float *m,
                            size_t m_stride, size_t columns, int second_row, int residual,
                            int before, float min, float max)
{
    const float bias = random_float();
    float *y = malloc((4 * n + 1) * sizeof(float));
    ref->output(n, m, m_stride, bias, y);
    ember_f32_winograd_rows out = {.columns = columns, .bias = bias, .min = min, .max = max};
    float expect[2][2 * MAX_N + 2];
    for (int r = 0; r < 1 + second_row; r++) {
        float *row = before ? guarded_before(columns + 1) : guarded(columns);
        const float *res = NULL;
        for (size_t x = 0; x < columns; x++)
            row[x] = random_float();
        if (before)
            row[columns] = SENTINEL;
        if (residual == 1) {
            float *apart = guarded(columns);
            for (size_t x = 0; x < columns; x++)
                apart[x] = random_float();
            res = apart;
        } else if (residual == 2) {
            res = row;
        }
        for (size_t x = 0; x < columns; x++) {
            const float v = y[(size_t)(2 * r + (int)(x % 2)) * n + x / 2];
            expect[r][x] = clamp(res ? v + res[x] : v, min, max);
        }
        out.rows[r] = row;
        out.residual[r] = res;
    }
    k->store(n, m, m_stride, &out);
    int same = 1;
    for (int r = 0; r < 1 + second_row; r++) {
        for (size_t x = 0; x < columns; x++)
            same &= same_float(out.rows[r][x], expect[r][x]);
        if (before)
            check(out.rows[r][columns] == SENTINEL, k->name, "store wrote past its columns", n);
    }
    check(same, k->name, "store: not the output's bits with store_row's residual and clamp", n);
    free(y);
}

static void test_store(const ember_f32_winograd_kernel *k, const ember_f32_winograd_kernel *ref,
                       size_t n, const float *m, size_t m_stride)
{
    if (k->store == NULL || n == 0)
        return;
    for (int residual = 0; residual < 3; residual++)
        for (int before = 0; before < 2; before++) {
            test_store_case(k, ref, n, m, m_stride, 2 * n, 1, residual, before, -INFINITY,
                            INFINITY);
            test_store_case(k, ref, n, m, m_stride, 2 * n - 1, residual % 2, residual, before,
                            -0.5f, 0.5f);
        }
}

static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

static void test_filter(const ember_f32_winograd_kernel *k, const ember_f32_winograd_kernel *ref,
                        size_t n)
{
    enum { RUN = EMBER_F32_WINOGRAD_FILTER_RUN };
    const size_t g_floats = (n + RUN - 1) / RUN * 9 * RUN, stride = n + GAP;
    float *g = guarded(g_floats);
    for (size_t i = 0; i < g_floats; i++)
        g[i] = random_float();
    float *u = sixteen_runs(stride), *w = sixteen_runs(stride);
    k->filter(n, g, u, stride);
    ref->filter(n, g, w, stride);
    int close = 1;
    for (size_t e = 0; e < n; e++)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                double sum = 0.0; /* G g Gᵀ, tap (i, j) of element e in its run */
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        sum += G[a][i] * g[e / RUN * 9 * RUN + (size_t)(3 * i + j) * RUN + e % RUN] *
                               G[b][j];
                close &= fabs(u[(size_t)(4 * a + b) * stride + e] - sum) <= 1e-5 * 4;
            }
    check(close, k->name, "filter transform against G g Gᵀ", n);
    check_sixteen_runs(k->name, "filter", u, w, n, stride);
}

int main(void)
{
    const ember_kernel_config *config = ember_kernel_config_get();
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch: f32_winograd -> %s (EMBER_ISA=%s)\n", config->f32_winograd->name,
           forced ? forced : "");
    check(ember_cpu_has(config->f32_winograd->isa), "dispatch", "chose a kernel this CPU lacks",
          0);
    const ember_f32_winograd_kernel *ref = &ember_f32_winograd_kernels[0];
    for (size_t i = 0; i < ember_f32_winograd_kernel_count; i++) {
        const ember_f32_winograd_kernel *k = &ember_f32_winograd_kernels[i];
        if (!ember_cpu_has(k->isa)) {
            printf("%s: skipped, this CPU lacks %s\n", k->name, ember_isa_name(k->isa));
            continue;
        }
        const int before = failed;
        for (size_t n = 0; n <= MAX_N; n++) {
            test_input_geometries(k, ref, n);
            const size_t m_stride = n + GAP;
            float *m = guarded(16 * m_stride);
            for (size_t j = 0; j < 16 * m_stride; j++)
                m[j] = random_float();
            if (n > 3)
                m[5 * m_stride + 3] = NAN; /* tile 3's outputs NaN: the clamp keeps them */
            test_output(k, ref, n, m, m_stride);
            test_store(k, ref, n, m, m_stride);
            test_filter(k, ref, n);
        }
        printf("%s (%s): n 0..%d, %d failed\n", k->name, ember_isa_name(k->isa), MAX_N,
               failed - before);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
