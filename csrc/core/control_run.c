/*
 * Running ember_if, ember_loop and ember_scan (core/control.h): a runnable per body, kept
 * across runs; carried values (states) double-buffered and scan outputs stacked in
 * buffers of the state, grown as needed (a run with sizes seen before allocates nothing).
 * A scan's items are views of its inputs where contiguous, copies otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/control.h"
#include "core/model_stages.h"
#include "core/runnable.h"
#include "core/shape.h"
#include "ops/items.h"

/* A tensor whose storage the state owns. */
typedef struct owned_tensor {
    ember_tensor tensor;
    size_t capacity;             /* bytes */
} owned_tensor;

struct ember_control_state {
    ember_runnable *bodies[2];
    ember_tensor *inputs;        /* the bodies' inputs: (loop: iteration, condition) operands */
    owned_tensor *carried[2];    /* loops: carried values, double-buffered */
    owned_tensor *scans;         /* loops, scans: stacked scan outputs */
    owned_tensor *items;         /* scans: the items of scan inputs not on axis 0 */
    int64_t iteration;           /* the body's first two inputs */
    uint8_t going;
};

void ember_control_state_free(ember_control_state *state)
{
    if (state == NULL)
        return;
    for (int b = 0; b < 2; b++) {
        if (b == 0 || state->bodies[1] != state->bodies[0])
            ember_runnable_destroy(state->bodies[b]);
    }
    for (int b = 0; b < 2; b++) {
        for (size_t i = 0; state->carried[b] && state->carried[b][i].capacity; i++)
            free(state->carried[b][i].tensor.data);
        free(state->carried[b]);
    }
    for (size_t i = 0; state->scans && state->scans[i].capacity; i++)
        free(state->scans[i].tensor.data);
    free(state->scans);
    for (size_t i = 0; state->items && state->items[i].capacity; i++)
        free(state->items[i].tensor.data);
    free(state->items);
    free(state->inputs);
    free(state);
}

void ember_control_state_account(const ember_control_state *state, size_t *packed,
                                 size_t *working)
{
    if (state == NULL)
        return;
    for (int b = 0; b < 2; b++)
        if (state->bodies[b] != NULL && (b == 0 || state->bodies[1] != state->bodies[0]))
            ember_runnable_account(state->bodies[b], packed, working);
    for (int b = 0; b < 2; b++)
        for (size_t i = 0; state->carried[b] && state->carried[b][i].capacity; i++)
            *working += state->carried[b][i].capacity;
    for (size_t i = 0; state->scans && state->scans[i].capacity; i++)
        *working += state->scans[i].capacity;
    for (size_t i = 0; state->items && state->items[i].capacity; i++)
        *working += state->items[i].capacity;
}

static ember_status oom(void)
{
    return ember_error_set(EMBER_ERROR_MEMORY, "out of memory in control flow");
}

static ember_status state_for(ember_runnable *runnable, const ember_control *c,
                              ember_control_state **out)
{
    if (*out != NULL)
        return EMBER_OK;
    ember_control_state *state = calloc(1, sizeof *state);
    if (state == NULL)
        return oom();
    const ember_model *model = runnable->model;
    /* +1 so a list always ends in a zero capacity (the free loops stop there) */
    const size_t scans = c->result_count - c->carried_count + 1;
    state->carried[0] = calloc(c->carried_count + 1, sizeof(owned_tensor));
    state->carried[1] = calloc(c->carried_count + 1, sizeof(owned_tensor));
    state->scans = calloc(scans, sizeof(owned_tensor));
    state->items = calloc(c->scan_count + 1, sizeof(owned_tensor));
    state->inputs = calloc(2 + c->operand_count + 1, sizeof(ember_tensor));
    ember_status status = state->carried[0] && state->carried[1] && state->scans &&
                                  state->items && state->inputs ? EMBER_OK : oom();
    for (int b = 0; b < 2 && status == EMBER_OK; b++) {
        if (b == 1 && c->bodies[1] == c->bodies[0])
            state->bodies[1] = state->bodies[0];
        else if (c->bodies[b] != EMBER_NO_BODY)
            status = ember_runnable_create(model->bodies[c->bodies[b]], &state->bodies[b]);
    }
    if (status != EMBER_OK) {
        ember_control_state_free(state);
        return status;
    }
    *out = state;
    return EMBER_OK;
}

/* Make `t` hold `bytes` (its shape set by the caller). */
static ember_status reserve(owned_tensor *t, size_t bytes)
{
    if (bytes <= t->capacity && t->capacity > 0)
        return EMBER_OK;
    size_t capacity = t->capacity ? t->capacity : 64;
    while (capacity < bytes)
        capacity *= 2;
    void *data = realloc(t->tensor.data, capacity);
    if (data == NULL)
        return oom();
    t->tensor.data = data;
    t->capacity = capacity;
    return EMBER_OK;
}

static size_t tensor_bytes(const ember_tensor *t)
{
    return (size_t)ember_shape_count(t->shape, t->rank) * ember_datum_size(t->datum_type);
}

static ember_status copy_into(owned_tensor *to, const ember_tensor *from)
{
    ember_status status = reserve(to, tensor_bytes(from));
    if (status != EMBER_OK)
        return status;
    void *data = to->tensor.data;
    if (from->data != data)
        memcpy(data, from->data, tensor_bytes(from));
    to->tensor = *from;
    to->tensor.data = data;
    return EMBER_OK;
}

/* Item 0 of t as a number: nonzero is true (bool, integers and floats alike). */
static int64_t item_true(const ember_tensor *t)
{
    const ember_item v = ember_item_get(t->datum_type, t->data, 0);
    const ember_item_kind kind = ember_item_kind_of(t->datum_type);
    return kind == ITEM_FLOAT ? v.f != 0.0 : kind == ITEM_UNSIGNED ? v.u != 0 : v.i;
}

/* The truth of a scalar operand: a literal, or the first item of a tensor. */
static ember_status truth(const ember_runnable *runnable, const ember_control *c,
                          const ember_control_operand *o, const char *what, int64_t *out)
{
    if (o->name < 0) {
        *out = o->literal;
        return EMBER_OK;
    }
    const ember_tensor *t = &runnable->named[o->name];
    if (ember_shape_count(t->shape, t->rank) != 1)
        return ember_error_set(EMBER_ERROR_INVALID, "line %d: %s of node '%s' must be one "
                               "item", c->assignment->line, what,
                               c->assignment->lvalue->kind == EMBER_NNEF_IDENTIFIER
                                   ? c->assignment->lvalue->u.string : "?");
    *out = item_true(t);
    return EMBER_OK;
}

/* Bind the op's `count` symbols from its results' shapes; check every other dim. */
static ember_status bind_results(const ember_runnable *runnable, const ember_control *c,
                                 ember_binding *binding)
{
    uint32_t fresh = 0;
    for (size_t r = 0; r < c->result_count; r++) {
        const ember_tensor *t = &runnable->named[c->results[r]];
        const ember_nnef_expr *dims = c->shapes->u.list.items[r];
        int mismatch = (size_t)t->rank != dims->u.list.count;
        for (size_t k = 0; !mismatch && k < dims->u.list.count; k++) {
            const ember_nnef_expr *e = dims->u.list.items[k];
            const int s = e->kind == EMBER_NNEF_IDENTIFIER
                              ? ember_symbol_index(binding, e->u.string) : -1;
            int mine = 0;
            for (int d = 0; s >= 0 && d < c->decided_count; d++)
                mine |= c->decided[d] == s;
            if (mine && !(fresh & (1u << s))) {
                binding->values[s] = t->shape[k];
                binding->bound[s] = 1;
                fresh |= 1u << s;
                continue;
            }
            int64_t value;
            const char *problem;
            mismatch = ember_dim_eval(e, binding, &value, &problem) != EMBER_DIM_OK ||
                       value != t->shape[k];
        }
        if (mismatch) {
            char got[EMBER_SHAPE_TEXT];
            return ember_error_set(EMBER_ERROR_INVALID, "line %d: node '%s': result %zu is "
                                   "%s, which its shape in the plan does not allow",
                                   c->assignment->line, runnable->model->stage_plan->names[
                                       c->results[0]].name, r,
                                   ember_shape_format(t->shape, t->rank, got, sizeof got));
        }
    }
    return EMBER_OK;
}

static ember_status run_if(ember_runnable *runnable, const ember_control *c,
                           ember_control_state *state, ember_tensor *inputs)
{
    int64_t cond;
    ember_status status = truth(runnable, c, &c->cond, "the condition", &cond);
    if (status != EMBER_OK)
        return status;
    ember_runnable *body = state->bodies[cond ? 0 : 1];
    if (body == NULL) {
        const char *which = cond ? "then_error" : "else_error";
        const ember_nnef_expr *call = c->assignment->rvalue, *why = NULL;
        for (size_t i = 0; i < call->u.invocation.arg_count; i++)
            if (call->u.invocation.args[i].name != NULL &&
                strcmp(call->u.invocation.args[i].name, which) == 0)
                why = call->u.invocation.args[i].value;
        return ember_error_set(EMBER_ERROR_INVALID, "line %d: node '%s' (ember_if): the %s "
                               "branch cannot run on inputs of these shapes: %s",
                               c->assignment->line,
                               runnable->model->stage_plan->names[c->results[0]].name,
                               cond ? "then" : "else",
                               why && why->kind == EMBER_NNEF_STRING ? why->u.string
                                                                    : "(no reason given)");
    }
    status = ember_runnable_execute(body, c->operand_count, inputs);
    for (size_t r = 0; r < c->result_count && status == EMBER_OK; r++)
        status = ember_runnable_get_output(body, r, &runnable->named[c->results[r]]);
    return status;
}

/* Append one iteration's scan outputs (outputs 1 + carried … of the body). */
static ember_status stack_scans(ember_control_state *state, const ember_control *c,
                                ember_runnable *body, int64_t iteration)
{
    const size_t scans = c->result_count - c->carried_count;
    for (size_t i = 0; i < scans; i++) {
        ember_tensor item;
        ember_status status = ember_runnable_get_output(body, 1 + c->carried_count + i, &item);
        if (status != EMBER_OK)
            return status;
        ember_tensor *stacked = &state->scans[i].tensor;
        if (iteration == 0) {
            stacked->datum_type = item.datum_type;
            stacked->rank = item.rank + 1;
            memcpy(stacked->shape + 1, item.shape, (size_t)item.rank * sizeof(int64_t));
        } else if (!ember_shape_equal(stacked->shape + 1, stacked->rank - 1, item.shape,
                                      item.rank) || stacked->datum_type != item.datum_type) {
            return ember_error_set(EMBER_ERROR_INVALID, "line %d: scan output %zu changes "
                                   "shape at iteration %lld", c->assignment->line, i,
                                   (long long)iteration);
        }
        if (item.rank + 1 > EMBER_MAX_RANK)
            return ember_error_set(EMBER_ERROR_UNSUPPORTED, "scan output %zu: rank too high", i);
        const size_t bytes = tensor_bytes(&item);
        stacked->shape[0] = iteration + 1;
        status = reserve(&state->scans[i], bytes * (size_t)(iteration + 1));
        if (status != EMBER_OK)
            return status;
        memcpy((uint8_t *)state->scans[i].tensor.data + bytes * (size_t)iteration, item.data,
               bytes);
    }
    return EMBER_OK;
}

/* The datum type of output `index` of `body`, as its plan declares it (for the outputs
 * of a loop or scan that ran no iteration); 0 when the plan does not say. */
static ember_datum_type body_output_type(const ember_model *body, size_t index)
{
    if (!body->symbolic)
        return body->values[body->outputs[index]].datum_type;
    return body->output_facts != NULL ? body->output_facts[index].datum_type : 0;
}

/* Scan outputs of a loop that ran no iteration: empty, shaped by the plan. */
static ember_status empty_scans(ember_control_state *state, const ember_control *c,
                                const ember_binding *binding)
{
    for (size_t i = 0; i < c->result_count - c->carried_count; i++) {
        const ember_nnef_expr *dims = c->shapes->u.list.items[c->carried_count + i];
        ember_tensor *t = &state->scans[i].tensor;
        t->datum_type = body_output_type(state->bodies[0]->model, 1 + c->carried_count + i);
        t->rank = (int32_t)dims->u.list.count;
        t->shape[0] = 0;
        for (size_t k = 1; k < dims->u.list.count; k++) {
            const char *problem;
            if (ember_dim_eval(dims->u.list.items[k], binding, &t->shape[k], &problem) !=
                EMBER_DIM_OK)
                return ember_error_set(EMBER_ERROR_UNSUPPORTED, "line %d: the loop ran no "
                                       "iteration and the shape of scan output %zu is "
                                       "decided by its body", c->assignment->line, i);
        }
        if (reserve(&state->scans[i], 1) != EMBER_OK)
            return oom();
    }
    return EMBER_OK;
}

static ember_status run_loop(ember_runnable *runnable, const ember_control *c,
                             ember_control_state *state, ember_tensor *inputs,
                             const ember_binding *binding)
{
    int64_t trips, going;
    ember_status status = truth(runnable, c, &c->trip_count, "the trip count", &trips);
    if (status == EMBER_OK)
        status = truth(runnable, c, &c->cond, "the condition", &going);
    const size_t n = c->carried_count;
    int current = 0;
    for (size_t i = 0; i < n && status == EMBER_OK; i++)
        status = copy_into(&state->carried[0][i], &inputs[2 + i]);
    ember_runnable *body = state->bodies[0];
    int64_t iteration = 0;
    inputs[0] = (ember_tensor){EMBER_I64, 0, {0}, &state->iteration};
    inputs[1] = (ember_tensor){EMBER_BOOL, 0, {0}, &state->going};
    for (; status == EMBER_OK && going && (trips < 0 || iteration < trips); iteration++) {
        state->iteration = iteration;
        state->going = 1;
        for (size_t i = 0; i < n; i++)
            inputs[2 + i] = state->carried[current][i].tensor;
        status = ember_runnable_execute(body, 2 + c->operand_count, inputs);
        ember_tensor out;
        if (status == EMBER_OK && c->cond.name >= 0 &&
            (status = ember_runnable_get_output(body, 0, &out)) == EMBER_OK)
            going = item_true(&out) != 0;
        for (size_t i = 0; i < n && status == EMBER_OK; i++) {
            status = ember_runnable_get_output(body, 1 + i, &out);
            if (status == EMBER_OK)
                status = copy_into(&state->carried[1 - current][i], &out);
        }
        if (status == EMBER_OK)
            status = stack_scans(state, c, body, iteration);
        current = 1 - current;
    }
    if (status == EMBER_OK && iteration == 0)
        status = empty_scans(state, c, binding);
    for (size_t i = 0; i < n && status == EMBER_OK; i++)
        runnable->named[c->results[i]] = state->carried[current][i].tensor;
    for (size_t i = n; i < c->result_count && status == EMBER_OK; i++)
        runnable->named[c->results[i]] = state->scans[i - n].tensor;
    return status;
}

/* ---------------------------------------------------------------- scan */

/* A tensor seen as [outer, length, inner bytes] around `axis`. */
typedef struct strided {
    size_t outer, length, inner;
} strided;

static strided around(const ember_tensor *t, int axis)
{
    strided s = {1, (size_t)t->shape[axis], ember_datum_size(t->datum_type)};
    for (int k = 0; k < axis; k++)
        s.outer *= (size_t)t->shape[k];
    for (int k = axis + 1; k < t->rank; k++)
        s.inner *= (size_t)t->shape[k];
    return s;
}

static ember_status scan_error(const ember_runnable *runnable, const ember_control *c,
                               const char *problem, size_t index)
{
    return ember_error_set(EMBER_ERROR_INVALID, "line %d: node '%s' (ember_scan): %s %zu",
                           c->assignment->line,
                           runnable->model->stage_plan->names[c->results[0]].name, problem,
                           index);
}

/* The iteration count: the scan inputs' common length along their axes. */
static ember_status scan_length(const ember_runnable *runnable, const ember_control *c,
                                const ember_tensor *inputs, int64_t *out)
{
    for (size_t i = 0; i < c->scan_count; i++) {
        const ember_tensor *x = &inputs[c->carried_count + i];
        const int axis = c->scan_axes[i] < 0 ? c->scan_axes[i] + x->rank : c->scan_axes[i];
        if (axis < 0 || axis >= x->rank)
            return scan_error(runnable, c, "has no scan axis in the rank of scan input", i);
        if (i > 0 && x->shape[axis] != *out)
            return scan_error(runnable, c, "scan inputs differ in length at input", i);
        *out = x->shape[axis];
    }
    return EMBER_OK;
}

/* Item `t` of scan input `x` along `axis` into inputs[slot]: a view when the items are
 * contiguous (only one outer block), else a copy into the state's buffer. */
static ember_status take_item(ember_control_state *state, size_t i, const ember_tensor *x,
                              int axis, int64_t t, ember_tensor *slot)
{
    const strided s = around(x, axis);
    ember_tensor item = {x->datum_type, x->rank - 1, {0}, NULL};
    for (int k = 0, j = 0; k < x->rank; k++)
        if (k != axis)
            item.shape[j++] = x->shape[k];
    const uint8_t *from = (const uint8_t *)x->data + (size_t)t * s.inner;
    if (s.outer == 1) {
        item.data = (void *)from;
        *slot = item;
        return EMBER_OK;
    }
    ember_status status = reserve(&state->items[i], s.outer * s.inner);
    if (status != EMBER_OK)
        return status;
    for (size_t o = 0; o < s.outer; o++)
        memcpy((uint8_t *)state->items[i].tensor.data + o * s.inner,
               from + o * s.length * s.inner, s.inner);
    item.data = state->items[i].tensor.data;
    *slot = item;
    return EMBER_OK;
}

/* Put body output `item` at position `at` of scan output j (n items along its axis);
 * the first iteration shapes the output, later ones must give items of that shape. */
static ember_status put_item(const ember_runnable *runnable, const ember_control *c,
                             ember_control_state *state, size_t j, const ember_tensor *item,
                             int64_t n, int64_t iteration, int64_t at)
{
    ember_tensor *stacked = &state->scans[j].tensor;
    const int rank = item->rank + 1;
    const int axis = c->output_axes[j] < 0 ? c->output_axes[j] + rank : c->output_axes[j];
    if (axis < 0 || axis >= rank || rank > EMBER_MAX_RANK)
        return scan_error(runnable, c, "has an axis out of the rank of scan output", j);
    ember_tensor shaped = {item->datum_type, rank, {0}, NULL};
    for (int k = 0, m = 0; k < rank; k++)
        shaped.shape[k] = k == axis ? n : item->shape[m++];
    const strided s = around(&shaped, axis);
    if (iteration == 0) {
        ember_status status = reserve(&state->scans[j], s.outer * s.length * s.inner);
        if (status != EMBER_OK)
            return status;
        shaped.data = state->scans[j].tensor.data;
        *stacked = shaped;
    } else if (stacked->datum_type != item->datum_type ||
               !ember_shape_equal(stacked->shape, stacked->rank, shaped.shape, rank)) {
        return scan_error(runnable, c, "changes the shape of scan output", j);
    }
    for (size_t o = 0; o < s.outer; o++)
        memcpy((uint8_t *)stacked->data + (o * s.length + (size_t)at) * s.inner,
               (const uint8_t *)item->data + o * s.inner, s.inner);
    return EMBER_OK;
}

/* Scan outputs of a scan over no item: empty along their axes, shaped by the plan. */
static ember_status empty_scan_outputs(const ember_runnable *runnable, const ember_control *c,
                                       ember_control_state *state, const ember_binding *binding)
{
    for (size_t j = 0; j < c->result_count - c->carried_count; j++) {
        const ember_nnef_expr *dims = c->shapes->u.list.items[c->carried_count + j];
        ember_tensor *t = &state->scans[j].tensor;
        t->datum_type = body_output_type(state->bodies[0]->model, c->carried_count + j);
        t->rank = (int32_t)dims->u.list.count;
        const int axis = c->output_axes[j] < 0 ? c->output_axes[j] + t->rank
                                               : c->output_axes[j];
        if (axis < 0 || axis >= t->rank)
            return scan_error(runnable, c, "has an axis out of the rank of scan output", j);
        for (int k = 0; k < t->rank; k++) {
            const char *problem;
            t->shape[k] = 0;
            if (k != axis && ember_dim_eval(dims->u.list.items[k], binding, &t->shape[k],
                                            &problem) != EMBER_DIM_OK)
                return scan_error(runnable, c, "scanned no item, and its body decides the "
                                  "shape of scan output", j);
        }
        if (reserve(&state->scans[j], 1) != EMBER_OK)
            return oom();
    }
    return EMBER_OK;
}

static ember_status run_scan(ember_runnable *runnable, const ember_control *c,
                             ember_control_state *state, ember_tensor *inputs,
                             const ember_binding *binding)
{
    const size_t n_states = c->carried_count, n_outputs = c->result_count - n_states;
    ember_tensor *scanned = &inputs[n_states];
    ember_tensor whole[EMBER_MAX_CONTROL_SCANS]; /* the inputs; their slots get items */
    memcpy(whole, scanned, c->scan_count * sizeof *whole);
    int64_t n = 0;
    ember_status status = scan_length(runnable, c, inputs, &n);
    int current = 0;
    for (size_t i = 0; i < n_states && status == EMBER_OK; i++)
        status = copy_into(&state->carried[0][i], &inputs[i]);
    ember_runnable *body = state->bodies[0];
    for (int64_t t = 0; t < n && status == EMBER_OK; t++) {
        for (size_t i = 0; i < n_states; i++)
            inputs[i] = state->carried[current][i].tensor;
        for (size_t i = 0; i < c->scan_count && status == EMBER_OK; i++) {
            const ember_tensor *x = &whole[i];
            const int axis = c->scan_axes[i] < 0 ? c->scan_axes[i] + x->rank : c->scan_axes[i];
            status = take_item(state, i, x, axis, c->scan_reverse[i] ? n - 1 - t : t,
                               &scanned[i]);
        }
        if (status == EMBER_OK)
            status = ember_runnable_execute(body, c->operand_count, inputs);
        ember_tensor out;
        for (size_t i = 0; i < n_states && status == EMBER_OK; i++) {
            status = ember_runnable_get_output(body, i, &out);
            if (status == EMBER_OK)
                status = copy_into(&state->carried[1 - current][i], &out);
        }
        for (size_t j = 0; j < n_outputs && status == EMBER_OK; j++) {
            status = ember_runnable_get_output(body, n_states + j, &out);
            if (status == EMBER_OK)
                status = put_item(runnable, c, state, j, &out, n, t,
                                  c->output_reverse[j] ? n - 1 - t : t);
        }
        current = 1 - current;
    }
    memcpy(scanned, whole, c->scan_count * sizeof *whole);
    if (status == EMBER_OK && n == 0)
        status = empty_scan_outputs(runnable, c, state, binding);
    for (size_t i = 0; i < n_states && status == EMBER_OK; i++)
        runnable->named[c->results[i]] = state->carried[current][i].tensor;
    for (size_t j = 0; j < n_outputs && status == EMBER_OK; j++)
        runnable->named[c->results[n_states + j]] = state->scans[j].tensor;
    return status;
}

ember_status ember_control_run(ember_runnable *runnable, size_t s, ember_binding *binding)
{
    const ember_stage *stage = &runnable->model->stage_plan->stages[s];
    const ember_control *c = stage->control;
    ember_status status = state_for(runnable, c, &runnable->controls[s]);
    if (status != EMBER_OK)
        return status;
    ember_control_state *state = runnable->controls[s];
    const size_t first = c->kind == EMBER_CONTROL_LOOP ? 2 : 0;
    for (size_t i = 0; i < c->operand_count; i++)
        state->inputs[first + i] = runnable->named[c->operands[i].name];
    if (c->kind == EMBER_CONTROL_IF)
        status = run_if(runnable, c, state, state->inputs);
    else if (c->kind == EMBER_CONTROL_LOOP)
        status = run_loop(runnable, c, state, state->inputs, binding);
    else
        status = run_scan(runnable, c, state, state->inputs, binding);
    if (status == EMBER_OK)
        status = bind_results(runnable, c, binding);
    return status;
}
