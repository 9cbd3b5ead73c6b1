/*
 * Control flow: loading the bodies of ember_if / ember_loop / ember_scan, describing
 * each such op for its stage, and running it. See core/control.h.
 */
#include "core/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/attr.h"
#include "core/model_stages.h"
#include "core/op.h"
#include "core/runnable.h"
#include "core/shape.h"

static ember_status oom(void)
{
    return ember_error_set(EMBER_ERROR_MEMORY, "out of memory in control flow");
}

static const char *control_op(const ember_nnef_assignment *a)
{
    const ember_nnef_expr *e = a->rvalue;
    if (e->kind != EMBER_NNEF_INVOCATION)
        return NULL;
    const ember_op *op = ember_op_find(e->u.invocation.op);
    return op != NULL && (op->flags & EMBER_OP_CONTROL) ? op->name : NULL;
}

int ember_control_mentioned(const ember_nnef_document *doc)
{
    for (size_t i = 0; i < doc->graph_body_count; i++)
        if (control_op(&doc->graph_body[i]) != NULL)
            return 1;
    return 0;
}

static const ember_nnef_expr *named_arg(const ember_nnef_expr *call, const char *name)
{
    for (size_t i = 0; i < call->u.invocation.arg_count; i++)
        if (call->u.invocation.args[i].name != NULL &&
            strcmp(call->u.invocation.args[i].name, name) == 0)
            return call->u.invocation.args[i].value;
    return NULL;
}

static const ember_nnef_expr *positional_arg(const ember_nnef_expr *call, size_t index)
{
    size_t seen = 0;
    for (size_t i = 0; i < call->u.invocation.arg_count; i++)
        if (call->u.invocation.args[i].name == NULL && seen++ == index)
            return call->u.invocation.args[i].value;
    return NULL;
}

static const char *first_result(const ember_nnef_assignment *a)
{
    const ember_nnef_expr *l = a->lvalue;
    if (l->kind == EMBER_NNEF_IDENTIFIER)
        return l->u.string;
    return l->u.list.count > 0 && l->u.list.items[0]->kind == EMBER_NNEF_IDENTIFIER
               ? l->u.list.items[0]->u.string : "?";
}

static ember_status op_error(const ember_model *model, const ember_nnef_assignment *a,
                             ember_status status, const char *message, const char *detail)
{
    return ember_error_set(status, "%s:%d: node '%s' (%s): %s%s", model->graph_origin,
                           a->line, first_result(a), a->rvalue->u.invocation.op, message,
                           detail ? detail : "");
}

/* ---------------------------------------------------------------- bodies */

/* Body names are identifiers: they become archive entry names. */
static int body_name_ok(const char *name)
{
    size_t n = 0;
    for (; name[n]; n++)
        if (!((name[n] >= 'a' && name[n] <= 'z') || (name[n] >= 'A' && name[n] <= 'Z') ||
              (name[n] >= '0' && name[n] <= '9') || name[n] == '_'))
            return 0;
    return n > 0 && n < 128;
}

/* Whether `document` is already being loaded above `model` (a body that runs itself). */
static int loading(const ember_model *model, const char *document)
{
    for (const ember_model *m = model; m != NULL; m = m->parent) {
        const char *own = strrchr(m->graph_origin, ':');
        if (own != NULL && strcmp(own + 1, document) == 0)
            return 1;
    }
    return 0;
}

static ember_status load_body(ember_model *model, const ember_nnef_assignment *a,
                              const char *attribute)
{
    const ember_nnef_expr *e = named_arg(a->rvalue, attribute);
    if (e != NULL && e->kind == EMBER_NNEF_STRING && e->u.string[0] == '\0' &&
        strcmp(attribute, "body") != 0)
        return EMBER_OK; /* a branch the cook could not type: taking it is an error */
    if (e == NULL || e->kind != EMBER_NNEF_STRING || !body_name_ok(e->u.string))
        return op_error(model, a, EMBER_ERROR_INVALID, "needs a body name (letters, digits, "
                        "_) as attribute ", attribute);
    for (size_t i = 0; i < model->body_count; i++)
        if (strcmp(model->body_names[i], e->u.string) == 0)
            return EMBER_OK;
    char document[160];
    snprintf(document, sizeof document, "%s.nnef", e->u.string);
    if (loading(model, document))
        return op_error(model, a, EMBER_ERROR_INVALID, "recursion: it runs a body that is "
                        "already running: ", document);
    if (model->depth + 1 > EMBER_MAX_BODY_DEPTH)
        return op_error(model, a, EMBER_ERROR_UNSUPPORTED, "bodies nest too deeply at ",
                        document);
    ember_model **bodies = realloc(model->bodies, (model->body_count + 1) * sizeof *bodies);
    if (bodies != NULL)
        model->bodies = bodies;
    char **names = realloc(model->body_names, (model->body_count + 1) * sizeof *names);
    if (names != NULL)
        model->body_names = names;
    if (bodies == NULL || names == NULL)
        return oom();
    model->body_names[model->body_count] = malloc(strlen(e->u.string) + 1);
    if (model->body_names[model->body_count] == NULL)
        return oom();
    strcpy(model->body_names[model->body_count], e->u.string);
    model->bodies[model->body_count] = NULL;
    model->body_count++;
    return ember_model_load_body(model, document, &model->bodies[model->body_count - 1]);
}

ember_status ember_control_load_bodies(ember_model *model)
{
    ember_status status = EMBER_OK;
    for (size_t i = 0; i < model->doc.graph_body_count && status == EMBER_OK; i++) {
        const ember_nnef_assignment *a = &model->doc.graph_body[i];
        const char *op = control_op(a);
        if (op == NULL)
            continue;
        if (strcmp(op, "ember_if") == 0) {
            status = load_body(model, a, "then");
            if (status == EMBER_OK)
                status = load_body(model, a, "else");
        } else {
            status = load_body(model, a, "body");
        }
    }
    return status;
}

/* ---------------------------------------------------------------- describing */

static size_t body_index(const ember_model *model, const ember_nnef_assignment *a,
                         const char *attribute)
{
    const char *name = named_arg(a->rvalue, attribute)->u.string;
    if (name[0] == '\0')
        return EMBER_NO_BODY;
    size_t i = 0;
    while (strcmp(model->body_names[i], name) != 0)
        i++;
    return i;
}

static int name_id(const ember_stage_plan *plan, const char *name, size_t before)
{
    for (size_t id = 0; id < plan->name_count; id++)
        if (plan->names[id].assignment < before && strcmp(plan->names[id].name, name) == 0)
            return (int)id;
    return -1;
}

static ember_status operand(const ember_model *model, const ember_stage_plan *plan,
                            const ember_nnef_assignment *a, const ember_nnef_expr *e,
                            int literal_ok, ember_control_operand *out)
{
    double value;
    int is_integer;
    out->name = -1;
    if (e != NULL && e->kind == EMBER_NNEF_IDENTIFIER) {
        out->name = name_id(plan, e->u.string, (size_t)(a - model->doc.graph_body));
        if (out->name < 0)
            return op_error(model, a, EMBER_ERROR_INVALID, "reads an undefined value ",
                            e->u.string);
        return EMBER_OK;
    }
    if (literal_ok && e != NULL && e->kind == EMBER_NNEF_LOGICAL) {
        out->literal = e->u.logical != 0;
        return EMBER_OK;
    }
    if (literal_ok && ember_expr_number(e, &value, &is_integer) && is_integer) {
        out->literal = (int64_t)value;
        return EMBER_OK;
    }
    return op_error(model, a, EMBER_ERROR_INVALID, "operands must be identifiers of "
                    "computed values or inputs", NULL);
}

static ember_status operand_list(const ember_model *model, const ember_stage_plan *plan,
                                 const ember_nnef_assignment *a, const ember_nnef_expr *list,
                                 ember_control *c)
{
    if (list == NULL || list->kind != EMBER_NNEF_ARRAY)
        return op_error(model, a, EMBER_ERROR_INVALID, "needs its operands as a list", NULL);
    ember_control_operand *grown = realloc(c->operands, (c->operand_count + list->u.list.count
                                                         + 1) * sizeof *grown);
    if (grown == NULL)
        return oom();
    c->operands = grown;
    for (size_t i = 0; i < list->u.list.count; i++) {
        ember_status status = operand(model, plan, a, list->u.list.items[i], 0,
                                      &c->operands[c->operand_count]);
        if (status != EMBER_OK)
            return status;
        c->operand_count++;
    }
    return EMBER_OK;
}

static ember_status results_and_shapes(const ember_model *model, const ember_stage_plan *plan,
                                       const ember_nnef_assignment *a, ember_control *c)
{
    const size_t here = (size_t)(a - model->doc.graph_body);
    c->results = calloc(plan->name_count + 1, sizeof(int));
    if (c->results == NULL)
        return oom();
    for (size_t id = 0; id < plan->name_count; id++)
        if (plan->names[id].assignment == here)
            c->results[c->result_count++] = (int)id;
    c->shapes = named_arg(a->rvalue, "shapes");
    if (c->shapes == NULL || c->shapes->kind != EMBER_NNEF_ARRAY ||
        c->shapes->u.list.count != c->result_count)
        return op_error(model, a, EMBER_ERROR_INVALID, "needs `shapes`: one list of dims per "
                        "result", NULL);
    for (size_t i = 0; i < c->result_count; i++)
        if (c->shapes->u.list.items[i]->kind != EMBER_NNEF_ARRAY ||
            c->shapes->u.list.items[i]->u.list.count > EMBER_MAX_RANK)
            return op_error(model, a, EMBER_ERROR_INVALID, "`shapes` must list dims", NULL);
    const ember_nnef_expr *count = named_arg(a->rvalue, "count");
    if (count == NULL)
        return EMBER_OK;
    if (count->kind != EMBER_NNEF_ARRAY || count->u.list.count > EMBER_MAX_SYMBOLS)
        return op_error(model, a, EMBER_ERROR_INVALID, "`count` must list symbols", NULL);
    for (size_t k = 0; k < count->u.list.count; k++) {
        const ember_nnef_expr *e = count->u.list.items[k];
        int s = -1;
        for (size_t i = 0; e->kind == EMBER_NNEF_IDENTIFIER && i < model->symbol_count; i++)
            if (strcmp(model->symbols[i], e->u.string) == 0)
                s = (int)i;
        if (s < 0)
            return op_error(model, a, EMBER_ERROR_INVALID, "`count` must list declared "
                            "symbols", NULL);
        c->decided[c->decided_count++] = s;
    }
    return EMBER_OK;
}

/* `name = [n, …]`: `count` integers into a new array (*out). */
static ember_status int_list(const ember_model *model, const ember_nnef_assignment *a,
                             const char *name, size_t count, int **out)
{
    const ember_nnef_expr *list = named_arg(a->rvalue, name);
    if (list == NULL || list->kind != EMBER_NNEF_ARRAY || list->u.list.count != count)
        return op_error(model, a, EMBER_ERROR_INVALID, "needs one integer per scan input or "
                        "output in ", name);
    *out = calloc(count + 1, sizeof **out);
    if (*out == NULL)
        return oom();
    for (size_t i = 0; i < count; i++) {
        double value;
        int is_integer;
        if (!ember_expr_number(list->u.list.items[i], &value, &is_integer) || !is_integer ||
            value < -EMBER_MAX_RANK || value > EMBER_MAX_RANK)
            return op_error(model, a, EMBER_ERROR_INVALID, "needs small integers in ", name);
        (*out)[i] = (int)value;
    }
    return EMBER_OK;
}

/* ember_scan's axes and directions, one per scan input and per scan output. Axes are
 * checked against ranks when the scan runs. */
static ember_status scan_axes(const ember_model *model, const ember_nnef_assignment *a,
                              ember_control *c)
{
    if (c->scan_count == 0 || c->scan_count > EMBER_MAX_CONTROL_SCANS ||
        c->result_count < c->carried_count)
        return op_error(model, a, EMBER_ERROR_INVALID, "needs 1 to 64 scan inputs, and a "
                        "result per state", NULL);
    const size_t outputs = c->result_count - c->carried_count;
    ember_status status = int_list(model, a, "scan_axes", c->scan_count, &c->scan_axes);
    if (status == EMBER_OK)
        status = int_list(model, a, "scan_reverse", c->scan_count, &c->scan_reverse);
    if (status == EMBER_OK)
        status = int_list(model, a, "output_axes", outputs, &c->output_axes);
    if (status == EMBER_OK)
        status = int_list(model, a, "output_reverse", outputs, &c->output_reverse);
    return status;
}

/* Whether the bodies take and give what the op passes and assigns. */
static ember_status check_arity(const ember_model *model, const ember_nnef_assignment *a,
                                const ember_control *c)
{
    if (c->bodies[0] == EMBER_NO_BODY && c->bodies[1] == EMBER_NO_BODY)
        return op_error(model, a, EMBER_ERROR_INVALID, "has no branch", NULL);
    for (int b = 0; b < 2; b++) {
        if (c->bodies[b] == EMBER_NO_BODY)
            continue;
        const ember_model *body = model->bodies[c->bodies[b]];
        const size_t inputs = c->operand_count + (c->kind == EMBER_CONTROL_LOOP ? 2 : 0);
        const size_t outputs = c->kind == EMBER_CONTROL_LOOP ? body->output_count - 1
                                                             : body->output_count;
        const int bad = body->input_count != inputs ||
                        (c->kind == EMBER_CONTROL_LOOP
                             ? body->output_count < 1 + c->carried_count || outputs !=
                                   c->result_count
                             : outputs != c->result_count);
        if (bad) {
            char detail[160];
            snprintf(detail, sizeof detail, "%zu inputs and %zu outputs (the op passes %zu "
                     "and assigns %zu)", body->input_count, body->output_count, inputs,
                     c->result_count);
            return op_error(model, a, EMBER_ERROR_INVALID, "its body has ", detail);
        }
    }
    return EMBER_OK;
}

ember_status ember_control_describe(const ember_model *model, const ember_stage_plan *plan,
                                    size_t index, ember_control **out)
{
    const ember_nnef_assignment *a = &model->doc.graph_body[index];
    const char *op = control_op(a);
    *out = NULL;
    if (op == NULL)
        return EMBER_OK;
    ember_control *c = calloc(1, sizeof *c);
    if (c == NULL)
        return oom();
    *out = c;
    c->assignment = a;
    const ember_nnef_expr *call = a->rvalue;
    ember_status status;
    if (strcmp(op, "ember_if") == 0) {
        c->kind = EMBER_CONTROL_IF;
        c->bodies[0] = body_index(model, a, "then");
        c->bodies[1] = body_index(model, a, "else");
        status = operand(model, plan, a, positional_arg(call, 0), 1, &c->cond);
        if (status == EMBER_OK)
            status = operand_list(model, plan, a, positional_arg(call, 1), c);
    } else if (strcmp(op, "ember_scan") == 0) {
        c->kind = EMBER_CONTROL_SCAN;
        c->bodies[0] = c->bodies[1] = body_index(model, a, "body");
        status = operand_list(model, plan, a, positional_arg(call, 0), c);
        c->carried_count = c->operand_count;
        if (status == EMBER_OK)
            status = operand_list(model, plan, a, positional_arg(call, 1), c);
        c->scan_count = c->operand_count - c->carried_count;
        if (status == EMBER_OK)
            status = operand_list(model, plan, a, positional_arg(call, 2), c);
    } else {
        c->kind = EMBER_CONTROL_LOOP;
        c->bodies[0] = c->bodies[1] = body_index(model, a, "body");
        status = operand(model, plan, a, positional_arg(call, 0), 1, &c->trip_count);
        if (status == EMBER_OK)
            status = operand(model, plan, a, positional_arg(call, 1), 1, &c->cond);
        if (status == EMBER_OK)
            status = operand_list(model, plan, a, positional_arg(call, 2), c);
        c->carried_count = c->operand_count;
        if (status == EMBER_OK)
            status = operand_list(model, plan, a, positional_arg(call, 3), c);
    }
    if (status == EMBER_OK)
        status = results_and_shapes(model, plan, a, c);
    if (status == EMBER_OK)
        status = check_arity(model, a, c);
    if (status == EMBER_OK && c->kind == EMBER_CONTROL_SCAN)
        status = scan_axes(model, a, c);
    return status;
}

void ember_control_free(ember_control *control)
{
    if (control == NULL)
        return;
    free(control->operands);
    free(control->results);
    free(control->scan_axes);
    free(control->scan_reverse);
    free(control->output_axes);
    free(control->output_reverse);
    free(control);
}

/* The op table's entries: found by name, bound by the stage planner, never built. */
static const ember_op_param if_params[] = {{"cond", EMBER_PARAM_ATTRIBUTE, 0, 0.0f}};
const ember_op ember_op_ember_if = {.name = "ember_if", .flags = EMBER_OP_CONTROL,
                                    .params = if_params, .param_count = 1, .max_outputs = 64};
const ember_op ember_op_ember_loop = {.name = "ember_loop", .flags = EMBER_OP_CONTROL,
                                      .params = if_params, .param_count = 1,
                                      .max_outputs = 64};
const ember_op ember_op_ember_scan = {.name = "ember_scan", .flags = EMBER_OP_CONTROL,
                                      .max_outputs = 64};
