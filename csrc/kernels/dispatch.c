/*
 * Dispatch: which ISAs this CPU runs, and which kernel serves each family.
 *
 * This is the one file with architecture #ifs. Kernels are compiled per ISA with per-file
 * flags (SConstruct), so one x86 binary carries scalar, AVX2+FMA (and later) kernels and
 * picks among them here, once, at first use:
 *
 *   - x86: CPUID says what the core implements; XGETBV says whether the OS saves the
 *     wider registers on context switch (an OS without AVX state support faults on
 *     the first ymm instruction, so both must agree);
 *   - aarch64: Advanced SIMD is mandatory in the architecture;
 *   - armv7: the kernel reports NEON in AT_HWCAP.
 *
 * The choice is the last kernel of the family's X-macro list whose ISA this CPU has
 * (the list is ordered worst to best). EMBER_ISA in the environment overrides it, for
 * tests and comparisons: "scalar" forces the scalar kernels; another ISA name (as
 * ember_isa_name spells it, e.g. "avx2_fma") forces that ISA when the CPU has it and is
 * ignored otherwise, as is an unknown name (a family with no kernel of the forced ISA
 * keeps its default).
 */
#include "kernels/kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__arm__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_NEON
#define HWCAP_NEON (1 << 12) /* arch/arm/include/uapi/asm/hwcap.h */
#endif
#endif

/* ---------------------------------------------------------------- CPU features */

#if defined(__x86_64__) || defined(__i386__)
/* XCR0 bits: the OS saves SSE (1) and AVX (2) state; opmask (5), ZMM0-15 upper halves (6)
 * and ZMM16-31 (7) for AVX-512. */
#define XCR0_AVX_STATE 0x06u
#define XCR0_AVX512_STATE 0xe6u

static unsigned long long read_xcr0(void)
{
    unsigned int eax, edx;
    /* xgetbv spelled as an instruction so this file needs no -mxsave. */
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

/* CPUID leaf 7's EBX and EDX (the extended features), zeros where the CPU has no leaf 7. */
static void cpuid_leaf7(unsigned int *ebx, unsigned int *edx)
{
    unsigned int eax, ecx;
    *ebx = *edx = 0;
    if (__get_cpuid_max(0, NULL) >= 7)
        __cpuid_count(7, 0, eax, *ebx, ecx, *edx);
}

static int x86_has(ember_isa isa)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    const int sse2 = (edx >> 26) & 1;
    const int fma = (ecx >> 12) & 1;
    const int osxsave = (ecx >> 27) & 1;
    const int avx = (ecx >> 28) & 1;
    if (isa == EMBER_ISA_SSE2) {
        return sse2;
    }
    if (!osxsave || !avx) {
        return 0;
    }
    const unsigned long long xcr0 = read_xcr0();
    unsigned int ebx7, edx7;
    cpuid_leaf7(&ebx7, &edx7);
    const int avx2 = (ebx7 >> 5) & 1;
    const int avx512f = (ebx7 >> 16) & 1;
    switch (isa) {
    case EMBER_ISA_AVX2_FMA:
        return avx2 && fma && (xcr0 & XCR0_AVX_STATE) == XCR0_AVX_STATE;
    case EMBER_ISA_AVX512F: /* its kernels are built with FMA and fall back on AVX2 ones
                               for some shapes (the depthwise blocked kernel) */
        return avx512f && avx2 && fma && (xcr0 & XCR0_AVX512_STATE) == XCR0_AVX512_STATE &&
               (xcr0 & XCR0_AVX_STATE) == XCR0_AVX_STATE;
    default:
        return 0;
    }
}
#endif

int ember_cpu_has(ember_isa isa)
{
    if (isa == EMBER_ISA_SCALAR) {
        return 1;
    }
#if defined(__x86_64__) || defined(__i386__)
    return x86_has(isa);
#elif defined(__aarch64__)
    return isa == EMBER_ISA_NEON_AARCH64;
#elif defined(__arm__) && defined(__linux__)
    return isa == EMBER_ISA_NEON_ARMV7 && (getauxval(AT_HWCAP) & HWCAP_NEON) != 0;
#else
    return 0;
#endif
}

/* ---------------------------------------------------------------- core class */

static const char *const core_class_names[] = {"generic", "zen5", "zen4", "sapphire_rapids",
                                                "zen3"};
#define CORE_CLASS_COUNT (sizeof core_class_names / sizeof core_class_names[0])

const char *ember_core_class_name(ember_core_class core)
{
    return (size_t)core < CORE_CLASS_COUNT ? core_class_names[core] : "unknown";
}

#if defined(__x86_64__) || defined(__i386__)
/* Intel's family 6 models of the server cores since Sapphire Rapids: Sapphire Rapids 8Fh,
 * Emerald Rapids CFh, Granite Rapids ADh and AEh. */
static int intel_rapids_model(unsigned int eax1)
{
    const unsigned int family = (eax1 >> 8) & 0xfu;
    const unsigned int model = ((eax1 >> 12) & 0xf0u) | ((eax1 >> 4) & 0xfu);
    return family == 6 &&
           (model == 0x8fu || model == 0xcfu || model == 0xadu || model == 0xaeu);
}
#endif

/* CPUID's vendor and family: AMD's family 1Ah is Zen 5, and 19h Zen 4 with AVX-512 or
 * Zen 3 (and 3+) without (the family is the base family plus the extended one when the
 * base is 0Fh). An Intel core with AVX-512 is a Sapphire Rapids or a later Xeon when it
 * has AMX tiles (leaf 7, EDX bit 24) or a model number of theirs: virtual machines forge
 * either, the model (one measured with AMX reported A7h, a desktop part's) or the
 * features (an Emerald Rapids, model CFh, showed Ice Lake's: no AMX, no AVX512-FP16). */
static ember_core_class detected_core_class(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
        return EMBER_CORE_GENERIC;
    const int amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u;
    const int intel = ebx == 0x756e6547u && edx == 0x49656e69u && ecx == 0x6c65746eu;
    if (intel) {
        unsigned int ebx7, edx7;
        cpuid_leaf7(&ebx7, &edx7);
        const int amx_tile = (edx7 >> 24) & 1;
        const int rapids = amx_tile || (__get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
                                        intel_rapids_model(eax));
        return rapids && ember_cpu_has(EMBER_ISA_AVX512F) ? EMBER_CORE_SAPPHIRE_RAPIDS
                                                          : EMBER_CORE_GENERIC;
    }
    if (!amd || !__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return EMBER_CORE_GENERIC;
    const unsigned int base = (eax >> 8) & 0xfu;
    const unsigned int family = base == 0xfu ? base + ((eax >> 20) & 0xffu) : base;
    if (family == 0x1au)
        return EMBER_CORE_ZEN5;
    if (family == 0x19u)
        return ember_cpu_has(EMBER_ISA_AVX512F) ? EMBER_CORE_ZEN4 : EMBER_CORE_ZEN3;
    return EMBER_CORE_GENERIC;
#else
    return EMBER_CORE_GENERIC;
#endif
}

/* The class EMBER_CORE names, or -1 when it is unset or names none. */
static int forced_core_class(void)
{
    const char *name = getenv("EMBER_CORE");
    for (size_t i = 0; name != NULL && i < CORE_CLASS_COUNT; i++)
        if (strcmp(name, core_class_names[i]) == 0)
            return (int)i;
    return -1;
}

const char *ember_isa_name(ember_isa isa)
{
    switch (isa) {
    case EMBER_ISA_SCALAR:
        return "scalar";
    case EMBER_ISA_SSE2:
        return "sse2";
    case EMBER_ISA_AVX2_FMA:
        return "avx2_fma";
    case EMBER_ISA_AVX512F:
        return "avx512f";
    case EMBER_ISA_NEON_AARCH64:
        return "neon_aarch64";
    case EMBER_ISA_NEON_ARMV7:
        return "neon_armv7";
    }
    return "unknown";
}

/* ---------------------------------------------------------------- kernel tables */

#define INDIRECT(name) ember_##name##_indirect
#define NONE(name) NULL
#define EMBER_F32_GEMM_ENTRY(name, mr, nr, narrow_nr, isa, indirect, gemv)                 \
    {#name, mr, nr, narrow_nr, isa, ember_##name, indirect(name), #gemv, ember_##gemv},
const ember_f32_gemm_kernel ember_f32_gemm_kernels[] = {
    EMBER_F32_GEMM_KERNELS(EMBER_F32_GEMM_ENTRY)
};
#undef EMBER_F32_GEMM_ENTRY
#undef INDIRECT
#undef NONE
const size_t ember_f32_gemm_kernel_count =
    sizeof(ember_f32_gemm_kernels) / sizeof(ember_f32_gemm_kernels[0]);

const ember_f32_gemm_kernel *ember_f32_gemm_for_rows(const ember_f32_gemm_kernel *kernel,
                                                     size_t m)
{
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        const ember_f32_gemm_kernel *taller = &ember_f32_gemm_kernels[i];
        const size_t empty = (m + taller->mr - 1) / taller->mr * taller->mr - m;
        if (taller->isa == kernel->isa && taller->nr == kernel->nr && taller->mr > kernel->mr &&
            m >= taller->mr && (empty * 20 <= m || m % kernel->mr != 0))
            return taller;
    }
    return kernel;
}

/* The table of a family whose kernels are {name, isa, fn} (the elementwise ones, hard
 * swish, pool rows): `type` its entries', LIST its X(name, isa) list from kernels.h. */
#define EMBER_NAMED_KERNEL_ENTRY(name, isa) {#name, isa, ember_##name},
#define EMBER_NAMED_KERNEL_TABLE(type, family, LIST)                                       \
    const type ember_f32_##family##_kernels[] = {LIST(EMBER_NAMED_KERNEL_ENTRY)};          \
    const size_t ember_f32_##family##_kernel_count =                                       \
        sizeof(ember_f32_##family##_kernels) / sizeof(ember_f32_##family##_kernels[0]);
EMBER_NAMED_KERNEL_TABLE(ember_f32_vunary_kernel, vexp, EMBER_F32_VEXP_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_vunary_kernel, vsigmoid, EMBER_F32_VSIGMOID_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_vunary_kernel, vtanh, EMBER_F32_VTANH_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_vunary_kernel, verf, EMBER_F32_VERF_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_hard_swish_kernel, hard_swish, EMBER_F32_HARD_SWISH_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_pack_scaled_kernel, pack_scaled, EMBER_F32_PACK_SCALED_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_pool_row_kernel, pool_row, EMBER_F32_POOL_ROW_KERNELS)
EMBER_NAMED_KERNEL_TABLE(ember_f32_softmax_row_kernel, softmax_row,
                         EMBER_F32_SOFTMAX_ROW_KERNELS)
#undef EMBER_NAMED_KERNEL_TABLE
#undef EMBER_NAMED_KERNEL_ENTRY

#define EMBER_F32_DWCONV_ENTRY(suffix, isa, blocked, plane, block)                         \
    {"f32_dwconv__" #suffix, isa, ember_f32_dwconv__##suffix,                              \
     ember_f32_dwconv_3x3s2__##suffix, blocked, plane, block},
const ember_f32_dwconv_kernel ember_f32_dwconv_kernels[] = {
    EMBER_F32_DWCONV_KERNELS(EMBER_F32_DWCONV_ENTRY)
};
#undef EMBER_F32_DWCONV_ENTRY
const size_t ember_f32_dwconv_kernel_count =
    sizeof(ember_f32_dwconv_kernels) / sizeof(ember_f32_dwconv_kernels[0]);

#define EMBER_F32_WINOGRAD_ENTRY(suffix, isa, in_place, store)                             \
    {"f32_winograd__" #suffix, isa, in_place, ember_f32_winograd_input__##suffix,          \
     ember_f32_winograd_output__##suffix, store, ember_f32_winograd_filter__##suffix},
const ember_f32_winograd_kernel ember_f32_winograd_kernels[] = {
    EMBER_F32_WINOGRAD_KERNELS(EMBER_F32_WINOGRAD_ENTRY)
};
#undef EMBER_F32_WINOGRAD_ENTRY
const size_t ember_f32_winograd_kernel_count =
    sizeof(ember_f32_winograd_kernels) / sizeof(ember_f32_winograd_kernels[0]);

/* ---------------------------------------------------------------- choice */

static ember_kernel_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* The ISA named by EMBER_ISA, or -1 when unset, unknown or not on this CPU. */
static int forced_isa(void)
{
    const char *name = getenv("EMBER_ISA");
    if (!name || !*name) {
        return -1;
    }
    for (int isa = EMBER_ISA_SCALAR; isa <= EMBER_ISA_NEON_ARMV7; isa++) {
        if (strcmp(name, ember_isa_name((ember_isa)isa)) == 0) {
            return ember_cpu_has((ember_isa)isa) ? isa : -1;
        }
    }
    return -1;
}

/* chosen = the last kernel of a family's table whose ISA this CPU has, or the forced
 * ISA's when the family has one (a macro: the families' tables are of different types). */
#define CHOOSE_LAST_USABLE(chosen, table, count, forced)                                   \
    do {                                                                                   \
        (chosen) = &(table)[0];                                                            \
        for (size_t i_ = 0; i_ < (count); i_++)                                            \
            if (ember_cpu_has((table)[i_].isa))                                            \
                (chosen) = &(table)[i_];                                                   \
        for (size_t i_ = 0; (forced) >= 0 && i_ < (count); i_++)                           \
            if ((table)[i_].isa == (ember_isa)(forced))                                    \
                (chosen) = &(table)[i_];                                                   \
    } while (0)

/* The same rule for an elementwise family: the last usable kernel, or the forced ISA's. */
static const ember_f32_vunary_kernel *choose_vunary(const ember_f32_vunary_kernel *kernels,
                                                    size_t count, int forced)
{
    const ember_f32_vunary_kernel *chosen;
    CHOOSE_LAST_USABLE(chosen, kernels, count, forced);
    return chosen;
}

static void config_fill(void)
{
    /* The scalar kernel is first in every list and always usable. */
    config.f32_gemm = &ember_f32_gemm_kernels[0];
    for (size_t i = 0; i < ember_f32_gemm_kernel_count; i++) {
        if (ember_cpu_has(ember_f32_gemm_kernels[i].isa)) {
            config.f32_gemm = &ember_f32_gemm_kernels[i];
        }
    }
    /* A forced ISA without a kernel in this family leaves the family's default. */
    const int forced = forced_isa();
    for (size_t i = 0; forced >= 0 && i < ember_f32_gemm_kernel_count; i++) {
        if (ember_f32_gemm_kernels[i].isa == (ember_isa)forced) {
            config.f32_gemm = &ember_f32_gemm_kernels[i];
        }
    }
    config.f32_vexp =
        choose_vunary(ember_f32_vexp_kernels, ember_f32_vexp_kernel_count, forced);
    config.f32_vsigmoid =
        choose_vunary(ember_f32_vsigmoid_kernels, ember_f32_vsigmoid_kernel_count, forced);
    config.f32_vtanh =
        choose_vunary(ember_f32_vtanh_kernels, ember_f32_vtanh_kernel_count, forced);
    config.f32_verf =
        choose_vunary(ember_f32_verf_kernels, ember_f32_verf_kernel_count, forced);
    /* Depthwise conv and the Winograd transforms: the same rule. */
    CHOOSE_LAST_USABLE(config.f32_dwconv, ember_f32_dwconv_kernels,
                       ember_f32_dwconv_kernel_count, forced);
    CHOOSE_LAST_USABLE(config.f32_winograd, ember_f32_winograd_kernels,
                       ember_f32_winograd_kernel_count, forced);
    CHOOSE_LAST_USABLE(config.f32_hard_swish, ember_f32_hard_swish_kernels,
                       ember_f32_hard_swish_kernel_count, forced);
    CHOOSE_LAST_USABLE(config.f32_pack_scaled, ember_f32_pack_scaled_kernels,
                       ember_f32_pack_scaled_kernel_count, forced);
    CHOOSE_LAST_USABLE(config.f32_pool_row, ember_f32_pool_row_kernels,
                       ember_f32_pool_row_kernel_count, forced);
    CHOOSE_LAST_USABLE(config.f32_softmax_row, ember_f32_softmax_row_kernels,
                       ember_f32_softmax_row_kernel_count, forced);
    const int core = forced_core_class();
    config.core = core >= 0 ? (ember_core_class)core : detected_core_class();
}

const ember_kernel_config *ember_kernel_config_get(void)
{
    pthread_once(&config_once, config_fill);
    return &config;
}

static int core_class_problem(char *message, size_t size)
{
    const char *name = getenv("EMBER_CORE");
    if (name == NULL || *name == '\0' || forced_core_class() >= 0)
        return 0;
    int used = snprintf(message, size, "EMBER_CORE=%s names no core class (", name);
    for (size_t i = 0; i < CORE_CLASS_COUNT && used >= 0 && (size_t)used < size; i++)
        used += snprintf(message + used, size - (size_t)used, "%s%s", i ? ", " : "",
                         core_class_names[i]);
    if (used >= 0 && (size_t)used < size)
        snprintf(message + used, size - (size_t)used, ")");
    return 1;
}

static int isa_problem(char *message, size_t size)
{
    const char *name = getenv("EMBER_ISA");
    if (!name || !*name) {
        return 0;
    }
    char usable[128] = "";
    for (int isa = EMBER_ISA_SCALAR; isa <= EMBER_ISA_NEON_ARMV7; isa++) {
        const char *known = ember_isa_name((ember_isa)isa);
        if (strcmp(name, known) == 0 && ember_cpu_has((ember_isa)isa)) {
            return 0;
        }
        if (strcmp(name, known) == 0) {
            snprintf(message, size, "EMBER_ISA=%s: this CPU has no %s", name, name);
            return 1;
        }
        if (ember_cpu_has((ember_isa)isa)) {
            const size_t used = strlen(usable);
            snprintf(usable + used, sizeof usable - used, "%s%s", used ? ", " : "", known);
        }
    }
    snprintf(message, size, "EMBER_ISA=%s names no ISA; this CPU has %s", name, usable);
    return 1;
}

int ember_dispatch_problem(char *message, size_t size)
{
    return core_class_problem(message, size) || isa_problem(message, size);
}

static char kernels_text[768];

static void kernels_text_fill(void)
{
    const ember_kernel_config *c = ember_kernel_config_get();
    snprintf(kernels_text, sizeof kernels_text,
             "f32_gemm %s\nf32_gemv %s\nf32_vexp %s\nf32_vsigmoid %s\nf32_vtanh %s\n"
             "f32_verf %s\nf32_dwconv %s\nf32_winograd %s\nf32_hard_swish %s\n"
             "f32_pool_row %s\nf32_softmax_row %s\nf32_pack_scaled %s\ncore %s\n",
             c->f32_gemm->name, c->f32_gemm->gemv_name, c->f32_vexp->name,
             c->f32_vsigmoid->name, c->f32_vtanh->name, c->f32_verf->name, c->f32_dwconv->name,
             c->f32_winograd->name, c->f32_hard_swish->name, c->f32_pool_row->name,
             c->f32_softmax_row->name, c->f32_pack_scaled->name, ember_core_class_name(c->core));
}

const char *ember_kernels_text(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, kernels_text_fill);
    return kernels_text;
}
