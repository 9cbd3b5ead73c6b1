/*
 * ember_grid_sample(input, grid, mode = "linear", padding = "zeros", align_corners = false)
 * ONNX GridSample: input [N, C, D1…Dk], grid [N, O1…Om, k] of positions in [-1, 1] (the
 * last entry is the first spatial axis reversed: x, y, z), output [N, C, O1…Om].
 * Per spatial axis of size d, a grid value g maps to the coordinate
 *   align_corners:  (g + 1) / 2 · (d - 1)      otherwise:  ((g + 1) · d - 1) / 2
 * padding "border" clamps it to [0, d - 1]; "reflection" folds it back into the bounds
 * ([0, d - 1], or [-0.5, d - 0.5] without align_corners) and clamps (except for cubic,
 * which pads its taps instead: onnxruntime's and PyTorch's rule). Then
 *   nearest   the item at rint(coordinate) (half to even)
 *   linear    2 taps, weights 1 - f and f
 *   cubic     4 taps, Keys' kernel with a = -0.75
 * A tap outside the axis weighs 0 with "zeros" padding; with "reflection" its index is
 * reflected back inside, clamped and truncated; with "border" it is clamped. Computed in double,
 * rounded once; f16, f32 and f64.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"
#include "ops/items.h"
#include "ops/ops.h"

#define MAX_SPATIAL 3
#define MAX_TAPS 4

enum { NEAREST, LINEAR, CUBIC };
enum { ZEROS, BORDER, REFLECTION };

typedef struct grid_attributes {
    int mode, padding, align_corners;
} grid_attributes;

static const ember_op_param grid_params[] = {
    {"input", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"grid", EMBER_PARAM_TENSOR, 0, 0.0f},
    {"mode", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"padding", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
    {"align_corners", EMBER_PARAM_ATTRIBUTE, 0, 0.0f},
};

static int choose(const char *value, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

static ember_status grid_parse(const ember_node *node, const ember_nnef_expr *const *attrs,
                               void **out)
{
    grid_attributes *a = calloc(1, sizeof *a);
    if (a == NULL)
        return ember_node_error(node, EMBER_ERROR_MEMORY, "out of memory");
    *out = a;
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const paddings[] = {"zeros", "border", "reflection"};
    const char *mode = "linear", *padding = "zeros";
    ember_status status = ember_attr_string(node, "mode", attrs[2], "linear", &mode);
    if (status == EMBER_OK)
        status = ember_attr_string(node, "padding", attrs[3], "zeros", &padding);
    if (status == EMBER_OK)
        status = ember_attr_bool(node, "align_corners", attrs[4], 0, &a->align_corners);
    if (status != EMBER_OK)
        return status;
    a->mode = choose(mode, modes, 3);
    a->padding = choose(padding, paddings, 3);
    if (a->mode < 0 || a->padding < 0)
        return ember_node_error(node, EMBER_ERROR_INVALID, "mode '%s' / padding '%s': modes are "
                                "nearest, linear, cubic; paddings zeros, border, reflection",
                                mode, padding);
    return EMBER_OK;
}

static int is_float(ember_datum_type dt)
{
    return dt == EMBER_F32 || dt == EMBER_F64 || dt == EMBER_F16;
}

static ember_status grid_infer(ember_node *node, const ember_value *const *inputs,
                               ember_value *output)
{
    const ember_value *x = inputs[0], *grid = inputs[1];
    const int spatial = x->rank - 2;
    int ok = spatial >= 1 && spatial <= MAX_SPATIAL && grid->rank >= 3 &&
             grid->rank - 2 + 2 <= EMBER_MAX_RANK && grid->shape[0] == x->shape[0] &&
             grid->shape[grid->rank - 1] == spatial;
    if (!ok) {
        char xs[EMBER_SHAPE_TEXT], gs[EMBER_SHAPE_TEXT];
        return ember_node_error(node, EMBER_ERROR_INVALID, "grid %s does not fit input %s "
                                "(input [N, C, 1 to 3 spatial dims], grid [N, …, spatial])",
                                ember_shape_format(grid->shape, grid->rank, gs, sizeof gs),
                                ember_shape_format(x->shape, x->rank, xs, sizeof xs));
    }
    if (!is_float(x->datum_type) || !is_float(grid->datum_type))
        return ember_node_error(node, EMBER_ERROR_INVALID, "input %s and grid %s must be "
                                "floats", ember_datum_type_name(x->datum_type),
                                ember_datum_type_name(grid->datum_type));
    output->datum_type = x->datum_type;
    output->rank = grid->rank;
    output->shape[0] = x->shape[0];
    output->shape[1] = x->shape[1];
    memcpy(output->shape + 2, grid->shape + 1, (size_t)(grid->rank - 2) * sizeof(int64_t));
    return EMBER_OK;
}

/* x folded back into [low, high] (mirror images, as the cook's _reflect). */
static double reflect(double x, double low, double high)
{
    const double span = high - low;
    if (span <= 0)
        return low;
    const double offset = fabs(x - low);
    const double flips = floor(offset / span);
    const double extra = offset - flips * span;
    return fmod(flips, 2.0) == 0 ? low + extra : high - extra;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double cubic_weight(double d)
{
    const double a = -0.75;
    if (d <= 1)
        return ((a + 2) * d - (a + 3)) * d * d + 1;
    return d < 2 ? ((a * d - 5 * a) * d + 8 * a) * d - 4 * a : 0.0;
}

/* The taps of one axis of size `size` for grid value g: indices and weights; count. */
static int axis_taps(const grid_attributes *a, double g, int64_t size, int64_t *index,
                     double *weight)
{
    const double low = a->align_corners ? 0.0 : -0.5;
    const double high = a->align_corners ? (double)size - 1 : (double)size - 0.5;
    double c = a->align_corners ? (g + 1) / 2 * (double)(size - 1)
                                : ((g + 1) * (double)size - 1) / 2;
    if (a->padding == BORDER && a->mode != CUBIC)
        c = clampd(c, 0, (double)size - 1);
    else if (a->padding == REFLECTION && a->mode != CUBIC)
        c = clampd(reflect(c, low, high), 0, (double)size - 1);
    double position[MAX_TAPS];
    int count;
    if (a->mode == NEAREST) {
        position[0] = rint(c);
        weight[0] = 1.0;
        count = 1;
    } else {
        const double base = floor(c), f = c - base;
        count = a->mode == LINEAR ? 2 : 4;
        for (int t = 0; t < count; t++) {
            const double offset = a->mode == LINEAR ? t : t - 1;
            position[t] = base + offset;
            weight[t] = a->mode == LINEAR ? (t == 0 ? 1 - f : f) : cubic_weight(fabs(f - offset));
        }
    }
    for (int t = 0; t < count; t++) {
        double p = position[t];
        if (!(p >= 0 && p < (double)size)) { /* also NaN */
            if (a->padding == ZEROS)
                weight[t] = 0.0;
            else if (a->padding == REFLECTION)
                p = trunc(clampd(reflect(p, low, high), 0, (double)size - 1));
        }
        p = p != p ? 0 : clampd(p, 0, (double)size - 1);
        index[t] = (int64_t)p;
    }
    return count;
}

static void grid_run(const ember_node *node, void *prepared, const ember_op_io *io)
{
    (void)prepared;
    const grid_attributes *a = node->attributes;
    const ember_tensor *x = io->inputs[0], *grid = io->inputs[1], *y = io->output;
    const int spatial = x->rank - 2;
    const int64_t channels = x->shape[1];
    const int64_t points = ember_shape_count(grid->shape + 1, grid->rank - 2);
    const int64_t plane = ember_shape_count(x->shape + 2, spatial);
    int64_t strides[EMBER_MAX_RANK];
    ember_shape_strides(x->shape, x->rank, strides);
    for (int64_t n = 0; n < x->shape[0]; n++)
        for (int64_t p = 0; p < points; p++) {
            int64_t index[MAX_SPATIAL][MAX_TAPS];
            double weight[MAX_SPATIAL][MAX_TAPS];
            int count[MAX_SPATIAL];
            const int64_t g = (n * points + p) * spatial;
            for (int s = 0; s < spatial; s++)
                count[s] = axis_taps(a, ember_item_get(grid->datum_type, grid->data,
                                                       g + spatial - 1 - s).f,
                                     x->shape[2 + s], index[s], weight[s]);
            for (int64_t c = 0; c < channels; c++) {
                const int64_t base = (n * channels + c) * plane;
                double sum = 0.0;
                int tap[MAX_SPATIAL] = {0};
                for (;;) {
                    double w = 1.0;
                    int64_t offset = base;
                    for (int s = 0; s < spatial; s++) {
                        w *= weight[s][tap[s]];
                        offset += index[s][tap[s]] * strides[2 + s];
                    }
                    sum += w * ember_item_get(x->datum_type, x->data, offset).f;
                    int s = spatial - 1;
                    while (s >= 0 && ++tap[s] == count[s])
                        tap[s--] = 0;
                    if (s < 0)
                        break;
                }
                ember_item v;
                v.f = sum;
                ember_item_put(y->datum_type, y->data, (n * channels + c) * points + p, v);
            }
        }
}

const ember_op ember_op_grid_sample = {.name = "ember_grid_sample", .params = grid_params,
                                       .param_count = 5, .parse = grid_parse,
                                       .infer = grid_infer, .run = grid_run};
