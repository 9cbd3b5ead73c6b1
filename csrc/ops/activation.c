#include "ops/activation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
    "sigmoid", "tanh", "relu", "affine", "leakyrelu", "thresholdedrelu", "scaledtanh",
    "hardsigmoid", "elu", "softsign", "softplus"};

int ember_activation_find(const char *name, ember_activation_kind *out)
{
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strcmp(names[k], name) == 0) {
            *out = (ember_activation_kind)k;
            return 1;
        }
    return 0;
}

void ember_activation_defaults(ember_activation *f)
{
    f->alpha = f->kind == ACT_LEAKY_RELU ? 0.01f : f->kind == ACT_HARD_SIGMOID ? 0.2f : 1.0f;
    f->beta = f->kind == ACT_HARD_SIGMOID ? 0.5f : f->kind == ACT_SCALED_TANH ? 1.0f : 0.0f;
}

void ember_activation_apply(const ember_activation *f, ember_f32_vunary_fn sigmoid,
                            ember_f32_vunary_fn tanh_, float *x, size_t n)
{
    const float alpha = f->alpha, beta = f->beta;
    switch (f->kind) {
    case ACT_SIGMOID: sigmoid(n, x, x); return;
    case ACT_TANH: tanh_(n, x, x); return;
    case ACT_SCALED_TANH:
        for (size_t i = 0; i < n; i++)
            x[i] *= beta;
        tanh_(n, x, x);
        for (size_t i = 0; i < n; i++)
            x[i] *= alpha;
        return;
    default: break;
    }
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        switch (f->kind) {
        case ACT_RELU: x[i] = v > 0.0f ? v : 0.0f; break;
        case ACT_AFFINE: x[i] = alpha * v + beta; break;
        case ACT_LEAKY_RELU: x[i] = v >= 0.0f ? v : alpha * v; break;
        case ACT_THRESHOLDED_RELU: x[i] = v > alpha ? v : 0.0f; break;
        case ACT_HARD_SIGMOID: x[i] = fminf(fmaxf(alpha * v + beta, 0.0f), 1.0f); break;
        case ACT_ELU: x[i] = v >= 0.0f ? v : alpha * (expf(v) - 1.0f); break;
        case ACT_SOFTSIGN: x[i] = v / (1.0f + fabsf(v)); break;
        case ACT_SOFTPLUS: x[i] = v > 20.0f ? v : log1pf(expf(v)); break;
        default: break;
        }
    }
}

ember_status ember_prepare_vunary(ember_prepare_context *ctx,
                                  const ember_f32_vunary_kernel *kernel, void **out)
{
    *out = NULL;
    if (kernel == NULL || kernel->fn == NULL)
        return EMBER_OK;
    ember_f32_vunary_fn *fn = malloc(sizeof *fn);
    if (fn == NULL)
        return ember_node_error(ctx->node, EMBER_ERROR_MEMORY, "out of memory");
    *fn = kernel->fn;
    *out = fn;
    return EMBER_OK;
}
