/*
 * The activation functions ONNX's recurrent layers name (ember_lstm, ember_gru,
 * ember_rnn: parsed in recurrent.c, run in recurrent_run.c), applied in place over a
 * span, sigmoid and tanh through the vectorised kernels. Names are ONNX's in lower case;
 * alpha and beta default as ONNX's.
 */
#ifndef EMBER_OPS_ACTIVATION_H
#define EMBER_OPS_ACTIVATION_H

#include <stddef.h>

#include "core/op.h"
#include "kernels/kernels.h"

typedef enum ember_activation_kind {
    ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
} ember_activation_kind;

typedef struct ember_activation {
    ember_activation_kind kind;
    float alpha, beta;
} ember_activation;

/* The function named `name` ("leakyrelu"); 0 when there is none. */
int ember_activation_find(const char *name, ember_activation_kind *out);
/* Set alpha and beta to ONNX's defaults for f->kind. */
void ember_activation_defaults(ember_activation *f);
/* x[i] = f(x[i]) for i < n. */
void ember_activation_apply(const ember_activation *f, ember_f32_vunary_fn sigmoid,
                            ember_f32_vunary_fn tanh_, float *x, size_t n);

/* The prepared state of an op that runs one vectorised kernel (exp, sigmoid, tanh, erf,
 * softmax's exp): *out becomes a malloc'd copy of kernel's function (an
 * ember_f32_vunary_fn *, released with free), or NULL when kernel is NULL or has none. */
ember_status ember_prepare_vunary(ember_prepare_context *ctx,
                                  const ember_f32_vunary_kernel *kernel, void **out);

#endif /* EMBER_OPS_ACTIVATION_H */
