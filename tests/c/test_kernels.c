/*
 * test_kernels — every f32 GEMM kernel of this build against the reference.
 *
 * For each kernel of EMBER_F32_GEMM_KERNELS that this CPU can run:
 *   - direct: the micro-kernel itself, every m ≤ mr, n ≤ nr, k in K_VALUES;
 *   - driver: ember_f32_gemm_packed, every m in 1..2mr+1, n in 1..2nr+1, k in K_VALUES,
 *     operands packed from row-major or transposed matrices, compared with the scalar
 *     kernel through the same driver; plus a few sizes large enough to cross the
 *     driver's A blocks and the in-place form's passes over K;
 *   - the in-place form (ember_f32_gemm_indirect), where the kernel has one, on the same
 *     cases: B's rows in reverse order and apart, the last row's whole tiles ending at an
 *     inaccessible page (the form reads whole tiles, never past them);
 * each with every epilogue combination (bias_row, bias_col, accumulate, clamp none /
 * [0, inf) / [0, 6] / [-2, 6] then the hardswish). Every result is checked against a double-precision reference
 * with the tolerance 1e-5 · (Σ_p |a_ip b_pj| + |biases| + |C before| + 1), and every
 * float of C outside the m × n tile (guard rows and columns, row stride > n) must keep
 * its sentinel bits. Packed panels and biases end exactly at a PROT_NONE page, so a
 * kernel that reads past them crashes the test instead of passing by luck.
 *
 * Also: dispatch (the chosen kernel, and EMBER_ISA); packing is test_pack.c's. Prints one line per kernel and, last,
 * "N passed, M failed"; exits 1 on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "kernels/kernels.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_support.h"

static const size_t K_VALUES[] = {0, 1, 2, 3, 7, 16, 33, 100};
#define K_COUNT (sizeof(K_VALUES) / sizeof(K_VALUES[0]))

/* Epilogue combinations: bit 0 bias_row, bit 1 bias_col, bit 2 accumulate; × 3 clamps and
 * a clamp [-2, 6] then the hardswish. */
#define EPILOGUES 32
static const ember_f32_hard_swish HARDSWISH = {1.0f / 6, 0.5f, 0.0f, 1.0f, NULL};

/* Sizes that cross the driver's A blocks (EMBER_F32_GEMM_A_BLOCK_BYTES) and the in-place
 * form's passes over K (EMBER_F32_GEMM_INDIRECT_KC = 256), (the fifth) the packed form's
 * passes for a B past 1 MB with more rows than one A block, (the sixth and seventh) shallow
 * products walked in spans of columns (EMBER_F32_GEMM_SHALLOW: 32 KiB of panels, several
 * spans and a partial one, partial row and column tiles), then a last A block of one row
 * that joins the block before it (blocks of 24 rows at K = 960 for every kernel), (the
 * last two) packed B past EMBER_F32_GEMM_STREAMED_BYTES, whose next panel the driver has
 * the x86 kernels prefetch as they run (past 1 MB, in passes of K, with the AVX-512
 * kernels' 32 columns): m, n, k. */
static const size_t LARGE[][3] = {{257, 37, 300}, {61, 70, 1000}, {130, 3, 129}, {7, 20, 513},
                                  {70, 400, 800}, {20, 1100, 16}, {13, 1201, 32},
                                  {49, 40, 960},  {30, 33, 4000}, {49, 100, 1400}};

/* ---------------------------------------------------------------- helpers */

static uint32_t rng = 0x2545f491u;

static float random_float(void) /* uniform in [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (float)(rng >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

static void fill_random(float *x, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        x[i] = random_float();
    }
}

/* A buffer whose last float touches an inaccessible page: `guarded_tail(g, count)` is
 * where `count` floats start so that reading or writing one past them faults. */
typedef struct guarded {
    unsigned char *base;
    size_t bytes;
    float *end;
} guarded;

static guarded guarded_new(size_t max_floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (max_floats * sizeof(float) + page - 1) / page * page;
    guarded g;
    g.bytes = data + page;
    g.base = mmap(NULL, g.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.base == MAP_FAILED || mprotect(g.base + data, page, PROT_NONE) != 0) {
        perror("test_kernels: mmap");
        exit(2);
    }
    g.end = (float *)(g.base + data);
    return g;
}

static float *guarded_tail(const guarded *g, size_t count)
{
    return g->end - count;
}

static void guarded_free(guarded *g)
{
    munmap(g->base, g->bytes);
}

/* ---------------------------------------------------------------- one GEMM case */

typedef struct gemm_case {
    size_t m, n, k;
    const float *a; /* m × k, element (i, p) at a[i * a_rs + p * a_cs] */
    size_t a_rs, a_cs;
    const float *b; /* k × n, element (p, j) at b[p * b_rs + j * b_cs] */
    size_t b_rs, b_cs;
    const float *c_before; /* m × n, dense: C's contents before the call */
    ember_f32_gemm_params params;
} gemm_case;

static const float SENTINEL_BITS_SOURCE = -1234.5f;

/* C lives in a (m + 2) × ldc buffer filled with the sentinel, the tile at row 1, column
 * `col0`; everything but the tile must be untouched afterwards. */
typedef struct c_frame {
    float *buffer;
    size_t ldc, col0, floats;
    float *tile;
} c_frame;

static void c_frame_init(c_frame *f, float *storage, const gemm_case *g, size_t ldc, size_t col0)
{
    f->buffer = storage;
    f->ldc = ldc;
    f->col0 = col0;
    f->floats = (g->m + 2) * ldc;
    for (size_t i = 0; i < f->floats; i++) {
        f->buffer[i] = SENTINEL_BITS_SOURCE;
    }
    f->tile = f->buffer + ldc + col0;
    for (size_t i = 0; i < g->m; i++) {
        memcpy(f->tile + i * ldc, g->c_before + i * g->n, g->n * sizeof(float));
    }
}

/* Checks a computed C against the double reference (and, when `other` is given, against
 * another kernel's result with twice the tolerance), and the guard floats. */
static int c_frame_verify(const c_frame *f, const gemm_case *g, const c_frame *other,
                          const char *label)
{
    int ok = 1;
    char what[256];
    for (size_t i = 0; i < g->m && ok; i++) {
        for (size_t j = 0; j < g->n && ok; j++) {
            double sum = 0.0, magnitude = 1.0;
            for (size_t p = 0; p < g->k; p++) {
                const double prod = (double)g->a[i * g->a_rs + p * g->a_cs] *
                                    (double)g->b[p * g->b_rs + j * g->b_cs];
                sum += prod;
                magnitude += fabs(prod);
            }
            if (g->params.bias_row) {
                sum += g->params.bias_row[i];
                magnitude += fabs(g->params.bias_row[i]);
            }
            if (g->params.bias_col) {
                sum += g->params.bias_col[j];
                magnitude += fabs(g->params.bias_col[j]);
            }
            if (g->params.accumulate) {
                sum += g->c_before[i * g->n + j];
                magnitude += fabs(g->c_before[i * g->n + j]);
            }
            if (sum < g->params.min) {
                sum = g->params.min;
            }
            if (sum > g->params.max) {
                sum = g->params.max;
            }
            double tolerance = 1e-5 * magnitude;
            if (g->params.hard_swish) { /* its slope is at most 1.5 over the clamp's range */
                const ember_f32_hard_swish *h = g->params.hard_swish;
                const double t = sum * h->alpha + h->beta;
                sum *= t < h->lo ? h->lo : t > h->hi ? h->hi : t;
                tolerance *= 2;
            }
            const float got = f->tile[i * f->ldc + j];
            if (!(fabs(got - sum) <= tolerance)) {
                snprintf(what, sizeof what, "%s: C[%zu][%zu] = %.9g, reference %.9g (tol %.3g)",
                         label, i, j, got, sum, tolerance);
                ok = 0;
            } else if (other) {
                const float theirs = other->tile[i * other->ldc + j];
                if (!(fabs(got - theirs) <= 2 * tolerance)) {
                    snprintf(what, sizeof what, "%s: C[%zu][%zu] = %.9g, scalar kernel %.9g",
                             label, i, j, got, theirs);
                    ok = 0;
                }
            }
        }
    }
    for (size_t idx = 0; idx < f->floats && ok; idx++) {
        const size_t row = idx / f->ldc, col = idx % f->ldc;
        const int inside = row >= 1 && row <= g->m && col >= f->col0 && col < f->col0 + g->n;
        if (!inside && memcmp(&f->buffer[idx], &SENTINEL_BITS_SOURCE, sizeof(float)) != 0) {
            snprintf(what, sizeof what, "%s: wrote outside the tile at frame row %zu col %zu",
                     label, row, col);
            ok = 0;
        }
    }
    check(ok, ok ? "" : what);
    return ok;
}

static void set_epilogue(gemm_case *g, int epilogue, const float *bias_row,
                         const float *bias_col)
{
    g->params.bias_row = (epilogue & 1) ? bias_row : NULL;
    g->params.bias_col = (epilogue & 2) ? bias_col : NULL;
    g->params.accumulate = (epilogue & 4) != 0;
    g->params.hard_swish = NULL;
    switch (epilogue >> 3) {
    case 0:
        g->params.min = -INFINITY;
        g->params.max = INFINITY;
        break;
    case 1:
        g->params.min = 0.0f;
        g->params.max = INFINITY;
        break;
    case 2:
        g->params.min = 0.0f;
        g->params.max = 6.0f;
        break;
    default:
        g->params.min = -2.0f;
        g->params.max = 6.0f;
        g->params.hard_swish = &HARDSWISH;
        break;
    }
}

static void describe(char *out, size_t size, const char *kind, const ember_f32_gemm_kernel *kr,
                     const gemm_case *g, int epilogue)
{
    snprintf(out, size, "%s %s m=%zu n=%zu k=%zu bias_row=%d bias_col=%d accumulate=%d clamp=%d",
             kr->name, kind, g->m, g->n, g->k, epilogue & 1, (epilogue >> 1) & 1,
             (epilogue >> 2) & 1, epilogue >> 3);
}

/* ---------------------------------------------------------------- direct micro-kernel */

static unsigned long test_direct(const ember_f32_gemm_kernel *kernel)
{
    const size_t mr = kernel->mr, nr = kernel->nr, kmax = 100;
    guarded ga = guarded_new(mr * kmax), gb = guarded_new(nr * kmax);
    guarded gbr = guarded_new(mr), gbc = guarded_new(nr);
    float *a = malloc(mr * kmax * sizeof(float)), *b = malloc(kmax * nr * sizeof(float));
    float *c_before = malloc(mr * nr * sizeof(float));
    float *c_storage = malloc((mr + 2) * (nr + 8) * sizeof(float));
    unsigned long cases = 0;
    char label[200];

    for (size_t m = 1; m <= mr; m++) {
        for (size_t n = 1; n <= nr; n++) {
            for (size_t ki = 0; ki < K_COUNT; ki++) {
                const size_t k = K_VALUES[ki];
                /* The packed panels are the matrices: A[i][p] = a[p*mr + i], B = b[p*nr + j],
                 * padding zero as the packer leaves it. */
                for (size_t p = 0; p < k; p++) {
                    for (size_t i = 0; i < mr; i++) {
                        a[p * mr + i] = i < m ? random_float() : 0.0f;
                    }
                    for (size_t j = 0; j < nr; j++) {
                        b[p * nr + j] = j < n ? random_float() : 0.0f;
                    }
                }
                float *pa = guarded_tail(&ga, k * mr), *pb = guarded_tail(&gb, k * nr);
                memcpy(pa, a, k * mr * sizeof(float));
                memcpy(pb, b, k * nr * sizeof(float));
                float *bias_row = guarded_tail(&gbr, m), *bias_col = guarded_tail(&gbc, n);
                fill_random(bias_row, m);
                fill_random(bias_col, n);
                fill_random(c_before, m * n);

                gemm_case g = {m, n, k, a, 1, mr, b, nr, 1, c_before, {0}};
                for (int epilogue = 0; epilogue < EPILOGUES; epilogue++) {
                    set_epilogue(&g, epilogue, bias_row, bias_col);
                    /* A prefetch changes nothing: spread over the k loop (B's own panel,
                     * or a range ending past the guard page: a prefetch never faults),
                     * or more than a line a step, asked for at once. */
                    g.params.prefetch = epilogue % 4 == 1 ? (const void *)pb
                                        : epilogue % 4 == 2 ? (const void *)(pb + k * nr)
                                        : epilogue % 4 == 3 ? (const void *)pa : NULL;
                    g.params.prefetch_bytes = epilogue % 4 == 3 ? 65 * k + 64
                                                                : k * nr * sizeof(float);
                    /* Row strides: n + 2 (one guard column each side) and, for some
                     * cases, wider with an odd offset. */
                    const size_t ldc = n + 2 + (epilogue % 3) * 3;
                    c_frame frame;
                    c_frame_init(&frame, c_storage, &g, ldc, 1);
                    describe(label, sizeof label, "direct", kernel, &g, epilogue);
                    memcpy(current_case, label, sizeof label);
                    kernel->fn(m, n, k, pa, pb, frame.tile, ldc * sizeof(float), &g.params);
                    c_frame_verify(&frame, &g, NULL, label);
                    cases++;
                }
            }
        }
    }
    free(a);
    free(b);
    free(c_before);
    free(c_storage);
    guarded_free(&ga);
    guarded_free(&gb);
    guarded_free(&gbr);
    guarded_free(&gbc);
    return cases;
}

/* ---------------------------------------------------------------- driver */

/* Buffers of the driver cases, allocated once per kernel at the largest size. */
typedef struct driver_buffers {
    guarded packed_a, packed_b, bias_row, bias_col, b_in_place;
    float *c, *c_scalar;
} driver_buffers;

/* Floats between the starts of two in-place B rows: whole tiles plus a gap. */
static size_t in_place_pitch(const ember_f32_gemm_kernel *kernel, size_t n)
{
    return (n + kernel->nr - 1) / kernel->nr * kernel->nr + 3;
}

/* The same GEMM through the in-place form: row p of B at offsets[p], rows stored in
 * reverse order, the first row's tiles (stored last) ending at the guard page. */
static void indirect_case(const ember_f32_gemm_kernel *kernel, const gemm_case *g,
                          const c_frame *reference, const char *label,
                          const driver_buffers *buffers)
{
    const size_t pitch = in_place_pitch(kernel, g->n);
    float *b = guarded_tail(&buffers->b_in_place, g->k * pitch);
    int32_t *offsets = malloc((g->k + 1) * sizeof *offsets);
    fill_random(b, g->k * pitch); /* the gaps too: what lies between rows is not B */
    for (size_t p = 0; p < g->k; p++) {
        offsets[p] = (int32_t)((g->k - 1 - p) * pitch + 3);
        for (size_t j = 0; j < g->n; j++)
            b[offsets[p] + j] = g->b[p * g->b_rs + j * g->b_cs];
    }
    c_frame frame;
    c_frame_init(&frame, buffers->c, g, reference->ldc, reference->col0);
    char indirect_label[260];
    snprintf(indirect_label, sizeof indirect_label, "%s (in place)", label);
    memcpy(current_case, indirect_label, sizeof current_case - 1);
    ember_f32_gemm_indirect(kernel, g->m, g->n, g->k, guarded_tail(&buffers->packed_a,
                            ember_f32_packed_a_floats(kernel->mr, g->m, g->k)), b, offsets,
                            frame.tile, frame.ldc * sizeof(float), &g->params);
    c_frame_verify(&frame, g, reference, indirect_label);
    free(offsets);
}

/* One driver GEMM of `kernel` and of the scalar kernel on the same matrices. */
static void driver_case(const ember_f32_gemm_kernel *kernel,
                        const ember_f32_gemm_kernel *scalar, size_t m, size_t n, size_t k,
                        int transposed, int epilogue, const driver_buffers *buffers)
{
    float *a = malloc((m * k + 1) * sizeof(float)), *b = malloc((k * n + 1) * sizeof(float));
    float *c_before = malloc(m * n * sizeof(float));
    fill_random(a, m * k);
    fill_random(b, k * n);
    fill_random(c_before, m * n);
    gemm_case g = {m, n, k, a, k, 1, b, n, 1, c_before, {0}};
    if (transposed & 1) { /* A given as k × m row-major */
        g.a_rs = 1;
        g.a_cs = m;
    }
    if (transposed & 2) { /* B given as n × k row-major */
        g.b_rs = 1;
        g.b_cs = k;
    }

    float *pa = guarded_tail(&buffers->packed_a, ember_f32_packed_a_floats(kernel->mr, m, k));
    float *pb = guarded_tail(&buffers->packed_b, ember_f32_packed_b_floats(kernel->nr, k, n));
    ember_f32_pack_a(kernel->mr, m, k, a, g.a_rs, g.a_cs, pa);
    ember_f32_pack_b(kernel->nr, k, n, b, g.b_rs, g.b_cs, pb);
    float *spa = malloc((ember_f32_packed_a_floats(scalar->mr, m, k) + 1) * sizeof(float));
    float *spb = malloc((ember_f32_packed_b_floats(scalar->nr, k, n) + 1) * sizeof(float));
    ember_f32_pack_a(scalar->mr, m, k, a, g.a_rs, g.a_cs, spa);
    ember_f32_pack_b(scalar->nr, k, n, b, g.b_rs, g.b_cs, spb);
    float *bias_row = guarded_tail(&buffers->bias_row, m);
    float *bias_col = guarded_tail(&buffers->bias_col, n);
    fill_random(bias_row, m);
    fill_random(bias_col, n);
    set_epilogue(&g, epilogue, bias_row, bias_col);
    /* the caller's prefetch (shared out over the tiles, or at once where B streams)
     * changes nothing */
    g.params.prefetch = epilogue % 3 == 1 ? (const void *)b : NULL;
    g.params.prefetch_bytes = k * n * sizeof(float);

    /* Row stride exactly n (tile flush left, guards above and below) or wider. */
    const size_t ldc = epilogue % 2 ? n : n + 5;
    const size_t col0 = epilogue % 2 ? 0 : 2;
    c_frame frame, reference;
    c_frame_init(&frame, buffers->c, &g, ldc, col0);
    c_frame_init(&reference, buffers->c_scalar, &g, ldc, col0);
    char label[240];
    describe(label, sizeof label, transposed ? "driver(transposed)" : "driver", kernel, &g,
             epilogue);
    memcpy(current_case, label, sizeof label);
    ember_f32_gemm_packed(scalar, m, n, k, spa, spb, reference.tile, ldc * sizeof(float),
                          &g.params);
    ember_f32_gemm_packed(kernel, m, n, k, pa, pb, frame.tile, ldc * sizeof(float), &g.params);
    c_frame_verify(&frame, &g, &reference, label);
    if (kernel->indirect)
        indirect_case(kernel, &g, &reference, label, buffers);

    free(a);
    free(b);
    free(c_before);
    free(spa);
    free(spb);
}

static unsigned long test_driver(const ember_f32_gemm_kernel *kernel,
                                 const ember_f32_gemm_kernel *scalar)
{
    unsigned long cases = 0;
    /* Largest sizes: the big cases, or m = 2mr+1, n = 2nr+1, k = 100. */
    size_t c_floats = (2 * kernel->mr + 3) * (2 * kernel->nr + 6);
    size_t a_floats = ember_f32_packed_a_floats(kernel->mr, 2 * kernel->mr + 1, 100);
    size_t b_floats = ember_f32_packed_b_floats(kernel->nr, 100, 2 * kernel->nr + 1);
    size_t m_max = 2 * kernel->mr + 1, n_max = 2 * kernel->nr + 1;
    size_t in_place_floats = 100 * in_place_pitch(kernel, n_max);
    for (size_t i = 0; i < sizeof LARGE / sizeof LARGE[0]; i++) {
        const size_t m = LARGE[i][0], n = LARGE[i][1], k = LARGE[i][2];
        const size_t c = (m + 2) * (n + 5);
        const size_t pa = ember_f32_packed_a_floats(kernel->mr, m, k);
        const size_t pb = ember_f32_packed_b_floats(kernel->nr, k, n);
        c_floats = c > c_floats ? c : c_floats;
        a_floats = pa > a_floats ? pa : a_floats;
        b_floats = pb > b_floats ? pb : b_floats;
        m_max = m > m_max ? m : m_max;
        n_max = n > n_max ? n : n_max;
        const size_t in_place = k * in_place_pitch(kernel, n);
        in_place_floats = in_place > in_place_floats ? in_place : in_place_floats;
    }
    driver_buffers buffers = {guarded_new(a_floats), guarded_new(b_floats), guarded_new(m_max),
                              guarded_new(n_max), guarded_new(in_place_floats),
                              malloc(c_floats * sizeof(float)), malloc(c_floats * sizeof(float))};

    for (size_t m = 1; m <= 2 * kernel->mr + 1; m++) {
        for (size_t n = 1; n <= 2 * kernel->nr + 1; n++) {
            for (size_t ki = 0; ki < K_COUNT; ki++) {
                for (int epilogue = 0; epilogue < EPILOGUES; epilogue++) {
                    /* Every layout of the operands, rotating with the case. */
                    const int transposed = (int)((m + n + ki + (size_t)epilogue) % 4);
                    driver_case(kernel, scalar, m, n, K_VALUES[ki], transposed, epilogue,
                                &buffers);
                    cases++;
                }
            }
        }
    }
    for (size_t i = 0; i < sizeof LARGE / sizeof LARGE[0]; i++) {
        for (int epilogue = 0; epilogue < EPILOGUES; epilogue += 7) {
            driver_case(kernel, scalar, LARGE[i][0], LARGE[i][1], LARGE[i][2], (int)i % 4,
                        epilogue, &buffers);
            cases++;
        }
    }
    free(buffers.c);
    free(buffers.c_scalar);
    guarded_free(&buffers.packed_a);
    guarded_free(&buffers.packed_b);
    guarded_free(&buffers.bias_row);
    guarded_free(&buffers.bias_col);
    guarded_free(&buffers.b_in_place);
    return cases;
}

/* ---------------------------------------------------------------- dispatch */

static void test_dispatch(void)
{
    const ember_kernel_config *config = ember_kernel_config_get();
    const ember_f32_gemm_kernel *chosen = config->f32_gemm;
    const char *forced = getenv("EMBER_ISA");
    printf("dispatch: f32_gemm -> %s (EMBER_ISA=%s)\n", chosen ? chosen->name : "(none)",
           forced ? forced : "<unset>");
    check(chosen != NULL && ember_cpu_has(chosen->isa), "dispatch chose a usable kernel");
    check(ember_kernel_config_get() == config, "dispatch config is filled once");
    check(ember_cpu_has(EMBER_ISA_SCALAR), "scalar is always available");
    if (!chosen) {
        return;
    }

    const ember_f32_gemm_kernel *best = NULL, *of_forced = NULL;
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *kernel = &ember_f32_gemm_kernels[i];
        if (ember_cpu_has(kernel->isa)) {
            best = kernel;
            if (forced && strcmp(forced, ember_isa_name(kernel->isa)) == 0) {
                of_forced = kernel;
            }
        }
    }
    if (of_forced) {
        check(chosen == of_forced, "EMBER_ISA forces the named ISA");
    } else {
        check(chosen == best, "dispatch picks the last usable kernel of the list");
    }
    if (forced && strcmp(forced, "scalar") == 0) {
        check(chosen->isa == EMBER_ISA_SCALAR, "EMBER_ISA=scalar forces the scalar kernel");
    }
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    test_dispatch();

    const ember_f32_gemm_kernel *scalar = &ember_f32_gemm_kernels[0];
    if (scalar->isa != EMBER_ISA_SCALAR) {
        printf("FAIL the first kernel of the list is not the scalar one\n");
        return 1;
    }
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *kernel = &ember_f32_gemm_kernels[i];
        if (!ember_cpu_has(kernel->isa)) {
            printf("%s: skipped, this CPU lacks %s\n", kernel->name, ember_isa_name(kernel->isa));
            continue;
        }
        const unsigned long before = failed;
        const unsigned long direct = test_direct(kernel);
        const unsigned long driver = test_driver(kernel, scalar);
        printf("%s (%s, %zux%zu): %lu direct, %lu driver cases%s, %lu failed\n", kernel->name,
               ember_isa_name(kernel->isa), kernel->mr, kernel->nr, direct, driver,
               kernel->indirect ? " (packed and in place)" : "", failed - before);
    }
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
