/*
 * Reading a template's symbols from the shapes of the inputs of a run.
 *
 * Three passes over the inputs' symbolic dims (model->input_dims):
 *   1. a dim that is a bare symbol binds it (the common case: [1, S, 40]);
 *   2. a dim with one unbound symbol is solved for it (S+2, 2*S, (S-3)/2+1): exactly when
 *      affine, else by bisection, the expression being monotonic in its symbol as every
 *      shape arithmetic the cook writes is — and the solution is always checked;
 *   3. every dim is evaluated and must equal the input's.
 * Any disagreement names both inputs, the symbol and both values.
 */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "core/runnable.h"
#include "core/shape.h"

/* Who bound each symbol, for messages. */
typedef struct binder {
    size_t input[EMBER_MAX_SYMBOLS];
    int axis[EMBER_MAX_SYMBOLS];
} binder;

static const ember_nnef_expr *dim_expr(const ember_model *model, size_t input, int axis)
{
    return model->input_dims[input * EMBER_MAX_RANK + (size_t)axis];
}

static ember_status disagree(const ember_model *model, const ember_binding *binding,
                             const binder *who, int s, size_t input, int64_t value)
{
    const size_t first = who->input[s];
    return ember_error_set(EMBER_ERROR_ARGUMENT,
                           "input %zu '%s' gives %s=%lld, input %zu '%s' gave %s=%lld", input,
                           model->input_names[input], binding->names[s], (long long)value,
                           first, model->input_names[first], binding->names[s],
                           (long long)binding->values[s]);
}

static ember_status bind(const ember_model *model, ember_binding *binding, binder *who, int s,
                         size_t input, int axis, int64_t value)
{
    if (binding->bound[s])
        return binding->values[s] == value ? EMBER_OK
                                           : disagree(model, binding, who, s, input, value);
    if (value < 0)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': dim %d gives %s=%lld; "
                               "symbols are sizes and cannot be negative", input,
                               model->input_names[input], axis, binding->names[s],
                               (long long)value);
    binding->bound[s] = 1;
    binding->values[s] = value;
    who->input[s] = input;
    who->axis[s] = axis;
    return EMBER_OK;
}

/* The one unbound symbol of `e`, or -1 if none or several. */
static int single_unbound(const ember_nnef_expr *e, const ember_binding *binding)
{
    int found = -1;
    for (size_t s = 0; s < binding->count; s++) {
        if (binding->bound[s])
            continue;
        ember_binding probe = *binding;
        probe.count = binding->count;
        for (size_t t = 0; t < probe.count; t++)
            probe.bound[t] = 1; /* everything known but s */
        probe.bound[s] = 0;
        int64_t ignored;
        const char *problem;
        if (ember_dim_eval(e, &probe, &ignored, &problem) == EMBER_DIM_UNBOUND) {
            if (found >= 0)
                return -1;
            found = (int)s;
        }
    }
    return found;
}

/* f(x): `e` with symbol s = x; 0 on success. */
static int at(const ember_nnef_expr *e, ember_binding *binding, int s, int64_t x, int64_t *out)
{
    const char *problem;
    binding->bound[s] = 1;
    binding->values[s] = x;
    const int ok = ember_dim_eval(e, binding, out, &problem) == EMBER_DIM_OK;
    binding->bound[s] = 0;
    return ok ? 0 : -1;
}

/* The x ≥ 0 with f(x) = target, f monotonic; -1 if there is none. */
static int64_t solve(const ember_nnef_expr *e, ember_binding *binding, int s, int64_t target)
{
    int64_t f0, f1, fx;
    if (at(e, binding, s, 0, &f0) != 0 || at(e, binding, s, 1, &f1) != 0)
        return -1;
    const int64_t slope = f1 - f0;
    if (slope != 0 && (target - f0) % slope == 0 && (target - f0) / slope >= 0) {
        const int64_t x = (target - f0) / slope;
        if (at(e, binding, s, x, &fx) == 0 && fx == target)
            return x;
    }
    /* Bisection over [0, 2^40], increasing or decreasing as f(0) and f(2^40) say. */
    int64_t lo = 0, hi = (int64_t)1 << 40, fhi;
    if (at(e, binding, s, hi, &fhi) != 0)
        fhi = INT64_MAX;
    const int increasing = fhi >= f0;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        int64_t fm;
        if (at(e, binding, s, mid, &fm) != 0)
            fm = increasing ? INT64_MAX : INT64_MIN;
        if (increasing ? fm < target : fm > target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return at(e, binding, s, lo, &fx) == 0 && fx == target ? lo : -1;
}

static ember_status check_rank_and_type(const ember_model *model, size_t i,
                                        const ember_tensor *in)
{
    const ember_value *fact = &model->values[model->inputs[i]];
    if (in->datum_type == fact->datum_type && in->rank == fact->rank)
        return EMBER_OK;
    return ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': expected %s of rank %d, got "
                           "%s of rank %d", i, model->input_names[i],
                           ember_datum_type_name(fact->datum_type), (int)fact->rank,
                           ember_datum_type_name(in->datum_type), (int)in->rank);
}

ember_status ember_bind_symbols(const ember_model *model, size_t n_inputs,
                                const ember_tensor *inputs, ember_binding *binding)
{
    binder who;
    memset(binding, 0, sizeof *binding);
    binding->count = model->symbol_count;
    binding->names = (const char *const *)model->symbols;
    if (n_inputs != model->input_count)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "the model takes %zu inputs, got %zu",
                               model->input_count, n_inputs);
    ember_status status = EMBER_OK;
    for (size_t i = 0; i < n_inputs && status == EMBER_OK; i++) {
        status = check_rank_and_type(model, i, &inputs[i]);
        for (int d = 0; d < inputs[i].rank && status == EMBER_OK; d++) {
            const ember_nnef_expr *e = dim_expr(model, i, d);
            const int s = e && e->kind == EMBER_NNEF_IDENTIFIER
                              ? ember_symbol_index(binding, e->u.string) : -1;
            if (s >= 0)
                status = bind(model, binding, &who, s, i, d, inputs[i].shape[d]);
        }
    }
    for (int progress = 1; progress && status == EMBER_OK;) {
        progress = 0;
        for (size_t i = 0; i < n_inputs && status == EMBER_OK; i++)
            for (int d = 0; d < inputs[i].rank && status == EMBER_OK; d++) {
                const ember_nnef_expr *e = dim_expr(model, i, d);
                const int s = e ? single_unbound(e, binding) : -1;
                if (s < 0)
                    continue;
                const int64_t x = solve(e, binding, s, inputs[i].shape[d]);
                if (x < 0)
                    continue; /* pass 3 says which dim cannot be matched */
                status = bind(model, binding, &who, s, i, d, x);
                progress = 1;
            }
    }
    for (size_t i = 0; i < n_inputs && status == EMBER_OK; i++)
        for (int d = 0; d < inputs[i].rank && status == EMBER_OK; d++) {
            const ember_nnef_expr *e = dim_expr(model, i, d);
            const int64_t expected = model->values[model->inputs[i]].shape[d];
            int64_t value = expected;
            const char *problem = "";
            char text[128];
            if (e != NULL && ember_dim_eval(e, binding, &value, &problem) != EMBER_DIM_OK)
                status = ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': dim %d is %s, "
                                         "which the input shapes do not determine (%s)", i,
                                         model->input_names[i], d,
                                         ember_expr_format(e, text, sizeof text), problem);
            else if (value != inputs[i].shape[d])
                status = ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': dim %d must be "
                                         "%s%s%lld, got %lld", i, model->input_names[i], d,
                                         e ? ember_expr_format(e, text, sizeof text) : "",
                                         e ? " = " : "", (long long)value,
                                         (long long)inputs[i].shape[d]);
        }
    /* A symbol no input gives (a count decided inside the graph) is refused where an
     * expression needs it, when the binding's model is built. */
    return status;
}
