/*
 * The conv's filter in the forms its runs read (conv.c chooses the form): packed as the
 * GEMM's A, slice by slice along K (at prepare for a constant filter, per run into
 * scratch for a computed one), and a constant filter made the conv's own in the packed
 * store, whatever its form, with the plan's pages under it given back.
 */
#include <string.h>

#include "core/op.h"
#include "core/packed.h"
#include "core/shape.h"
#include "ops/conv.h"

void ember_conv_pack_filter(const conv_prepared *p, const float *filter, float *packed)
{
    const int64_t taps = ember_conv_taps(p);
    for (int64_t g = 0; g < p->groups; g++)
        for (int64_t c0 = 0; c0 < p->group_in; c0 += p->slice_channels) {
            const int64_t channels = ember_conv_slice_width(p, c0);
            float *slice = packed + (size_t)g * p->group_filter_floats +
                           ember_conv_slice_offset(p, c0);
            ember_f32_pack_a(p->kernel->mr, (size_t)p->group_out, (size_t)(channels * taps),
                             filter + g * p->group_out * p->depth + c0 * taps,
                             (size_t)p->depth, 1, slice);
        }
}

/* The constant filter w in the run's form `kind` ('W' Winograd, 'B' packed as B, 'C' as
 * A, 'D' the depthwise loops' plan layout, copied), once per model and layout: the store
 * shares it between runnables. Every run reads packed_filter only, so the plan's pages
 * under w go back (a run touching them would fault in its neighbours' too). */
ember_status ember_conv_own_filter(conv_prepared *p, ember_prepare_context *ctx,
                                   const ember_node *node, const ember_value *w, int64_t kind,
                                   int64_t panel, size_t bytes)
{
    const int64_t layout[] = {kind, panel, p->groups, p->group_out, p->depth, p->slice_channels};
    const size_t w_bytes = (size_t)ember_shape_count(w->shape, w->rank) * sizeof(float);
    int fresh = 0;
    p->packed_filter = ember_packed_acquire(ctx->packed, w->constant,
                                            ember_packed_layout(layout, 6),
                                            bytes + sizeof(float), &fresh);
    if (p->packed_filter == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory packing the filter");
    if (!fresh)
        return EMBER_OK;
    if (kind == 'W')
        ember_conv_winograd_pack_filter(p, w->constant, p->packed_filter);
    else if (kind == 'B')
        ember_conv_pack_filter_as_b(p, w->constant, p->packed_filter);
    else if (kind == 'C')
        ember_conv_pack_filter(p, w->constant, p->packed_filter);
    else
        memcpy(p->packed_filter, w->constant, w_bytes);
    ember_model_release_constant(ctx->model, w->constant, w_bytes);
    return EMBER_OK;
}
