/*
 * Cutting a template into stages at value-decided sizes, and building one stage as a
 * concrete model. See core/model_stages.h.
 */
#include "core/model_stages.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/control.h"
#include "core/model_build.h"
#include "core/op.h"
#include "core/shape.h"

typedef enum def_kind { DEF_INPUT, DEF_CONST, DEF_COMPUTED } def_kind;

/* Working state of the planner. */
typedef struct planner {
    const ember_model *model;
    const ember_nnef_document *doc;
    ember_stage_plan *plan;
    name_map names;              /* identifier → name id */
    def_kind *kind;              /* per assignment */
    int *stage_of;               /* per assignment: its stage, -1 for inputs/constants */
    uint8_t *dynamic;            /* per assignment: an output of a deciding op */
    int *last_reader;            /* per name id: the last stage reading it (-1: none) */
} planner;

static ember_status oom(void)
{
    return ember_error_set(EMBER_ERROR_MEMORY, "out of memory loading the plan");
}

static int grow(void *items, size_t count, size_t item_size)
{
    /* Arrays grow by one at each power of two: amortised O(1) without a capacity. */
    if (count != 0 && (count & (count - 1)) != 0)
        return 0;
    void *bigger = realloc(*(void **)items, (count ? count * 2 : 1) * item_size);
    if (bigger == NULL)
        return -1;
    *(void **)items = bigger;
    return 0;
}

#define PUSH(array, count, value)                                                          \
    (grow(&(array), (count), sizeof *(array)) == 0 ? ((array)[(count)++] = (value), 0) : -1)

static const char *op_of(const ember_nnef_expr *e)
{
    return e->kind == EMBER_NNEF_INVOCATION ? e->u.invocation.op : NULL;
}

static def_kind classify(const planner *p, const ember_nnef_assignment *a)
{
    const char *op = op_of(a->rvalue);
    if (op != NULL && (strcmp(op, "external") == 0 || strcmp(op, "tract_core_external") == 0))
        return DEF_INPUT;
    if ((op != NULL && strcmp(op, "variable") == 0) || ember_is_literal(a->rvalue))
        return DEF_CONST;
    if (a->rvalue->kind == EMBER_NNEF_IDENTIFIER) { /* an alias: a constant's is one too */
        const int id = ember_name_map_get(&p->names, a->rvalue->u.string);
        if (id >= 0 && p->kind[p->plan->names[id].assignment] == DEF_CONST)
            return DEF_CONST;
    }
    return DEF_COMPUTED;
}

/* Calls visit(p, name id) for every identifier of `e` that names a value. */
static ember_status each_reference(planner *p, const ember_nnef_expr *e,
                                   ember_status (*visit)(planner *, int, void *), void *arg)
{
    ember_status status = EMBER_OK;
    switch (e->kind) {
    case EMBER_NNEF_IDENTIFIER: {
        const int id = ember_name_map_get(&p->names, e->u.string);
        return id >= 0 ? visit(p, id, arg) : EMBER_OK;
    }
    case EMBER_NNEF_ARRAY:
    case EMBER_NNEF_TUPLE:
        for (size_t i = 0; i < e->u.list.count && status == EMBER_OK; i++)
            status = each_reference(p, e->u.list.items[i], visit, arg);
        return status;
    case EMBER_NNEF_INVOCATION:
        for (size_t i = 0; i < e->u.invocation.arg_count && status == EMBER_OK; i++)
            status = each_reference(p, e->u.invocation.args[i].value, visit, arg);
        return status;
    default:
        return EMBER_OK;
    }
}

/* Bit i: `e` mentions symbol i. */
static uint32_t symbol_mask(const ember_model *model, const ember_nnef_expr *e)
{
    ember_binding one;
    memset(&one, 0, sizeof one);
    one.names = (const char *const *)model->symbols;
    uint32_t mask = 0;
    for (size_t s = 0; s < model->symbol_count; s++) {
        one.count = 1;
        one.names = (const char *const *)&model->symbols[s];
        if (ember_expr_has_symbol(e, &one))
            mask |= 1u << s;
    }
    return mask;
}

/* The index of the symbol identifier `e` names, or -1. */
static int symbol_named(const ember_model *model, const ember_nnef_expr *e)
{
    if (e->kind != EMBER_NNEF_IDENTIFIER)
        return -1;
    for (size_t s = 0; s < model->symbol_count; s++)
        if (strcmp(model->symbols[s], e->u.string) == 0)
            return (int)s;
    return -1;
}

/* The symbols a deciding op binds, in order, into `symbols`: its `count` argument, an
 * identifier naming a symbol or a list of them. Returns how many; -2 for an op that
 * decides nothing; -1 when `count` is missing or names anything else. */
static int decided_symbols(const ember_model *model, const ember_nnef_assignment *a,
                           int symbols[EMBER_MAX_SYMBOLS])
{
    const ember_nnef_expr *call = a->rvalue;
    const ember_op *op = call->kind == EMBER_NNEF_INVOCATION ? ember_op_find(op_of(call)) : NULL;
    if (op == NULL || !(op->flags & (EMBER_OP_DECIDES_SIZE | EMBER_OP_CONTROL)))
        return -2;
    const int control = (op->flags & EMBER_OP_CONTROL) != 0; /* may decide no symbol */
    for (size_t i = 0; i < call->u.invocation.arg_count; i++) {
        const ember_nnef_arg *arg = &call->u.invocation.args[i];
        if (arg->name == NULL || strcmp(arg->name, "count") != 0)
            continue;
        const ember_nnef_expr *v = arg->value;
        if (v->kind != EMBER_NNEF_ARRAY) {
            symbols[0] = symbol_named(model, v);
            return symbols[0] < 0 ? -1 : 1;
        }
        if ((v->u.list.count == 0 && !control) || v->u.list.count > EMBER_MAX_SYMBOLS)
            return -1;
        for (size_t k = 0; k < v->u.list.count; k++)
            if ((symbols[k] = symbol_named(model, v->u.list.items[k])) < 0)
                return -1;
        return (int)v->u.list.count;
    }
    return control ? 0 : -1;
}

static int is_control(const ember_nnef_assignment *a)
{
    const ember_op *op = a->rvalue->kind == EMBER_NNEF_INVOCATION
                             ? ember_op_find(op_of(a->rvalue)) : NULL;
    return op != NULL && (op->flags & EMBER_OP_CONTROL);
}

/* ---------------------------------------------------------------- names */

static ember_status add_names(planner *p)
{
    ember_stage_plan *plan = p->plan;
    for (size_t a = 0; a < p->doc->graph_body_count; a++) {
        const ember_nnef_expr *lvalue = p->doc->graph_body[a].lvalue;
        const size_t n = lvalue->kind == EMBER_NNEF_IDENTIFIER ? 1 : lvalue->u.list.count;
        for (size_t k = 0; k < n; k++) {
            const ember_nnef_expr *item = n == 1 && lvalue->kind == EMBER_NNEF_IDENTIFIER
                                              ? lvalue : lvalue->u.list.items[k];
            if (item->kind != EMBER_NNEF_IDENTIFIER ||
                ember_name_map_get(&p->names, item->u.string) >= 0)
                continue; /* the concrete build reports it */
            ember_stage_name name = {item->u.string, a};
            if (PUSH(plan->names, plan->name_count, name) != 0 ||
                ember_name_map_put(&p->names, item->u.string, (int)plan->name_count - 1))
                return oom();
        }
        p->kind[a] = classify(p, &p->doc->graph_body[a]);
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- cutting */

typedef struct cut_state {
    int stage;
    int cut;                     /* out: the assignment must start a new stage */
} cut_state;

static ember_status reads_dynamic(planner *p, int id, void *arg)
{
    cut_state *state = arg;
    const size_t a = p->plan->names[id].assignment;
    if (p->dynamic[a] && p->stage_of[a] == state->stage)
        state->cut = 1;
    return EMBER_OK;
}

static ember_status new_stage(ember_stage_plan *plan)
{
    ember_stage empty;
    memset(&empty, 0, sizeof empty);
    return PUSH(plan->stages, plan->stage_count, empty) == 0 ? EMBER_OK : oom();
}

/* One pass in body order: a computed assignment joins the current stage unless it reads
 * a value or mentions a symbol that a deciding op of that stage decides. */
static ember_status cut(planner *p)
{
    ember_stage_plan *plan = p->plan;
    uint32_t pending = 0;
    int after_control = 0;       /* a control op is a stage of its own */
    ember_status status = new_stage(plan);
    for (size_t a = 0; a < p->doc->graph_body_count && status == EMBER_OK; a++) {
        p->stage_of[a] = -1;
        if (p->kind[a] != DEF_COMPUTED)
            continue;
        const ember_nnef_assignment *assignment = &p->doc->graph_body[a];
        ember_stage *stage = &plan->stages[plan->stage_count - 1];
        cut_state state = {(int)plan->stage_count - 1, 0};
        each_reference(p, assignment->rvalue, reads_dynamic, &state);
        int decided[EMBER_MAX_SYMBOLS];
        const int decides = decided_symbols(p->model, assignment, decided);
        uint32_t own = 0;
        for (int i = 0; i < decides; i++)
            own |= 1u << decided[i];
        uint32_t mentions = symbol_mask(p->model, assignment->rvalue) & ~own; /* its own
                                                                 count is not a use */
        const int control = is_control(assignment);
        if ((state.cut || (mentions & pending) || control || after_control) &&
            stage->body_count > 0) {
            if ((status = new_stage(plan)) != EMBER_OK)
                break;
            stage = &plan->stages[plan->stage_count - 1];
            pending = 0;
        }
        p->stage_of[a] = (int)plan->stage_count - 1;
        if (PUSH(stage->body, stage->body_count, a) != 0)
            return oom();
        if (decides == -1)
            return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: a size-deciding op needs "
                                   "`count = <symbol>` (or a list of them) naming declared "
                                   "symbols", p->model->graph_origin, assignment->line);
        after_control = control;
        for (int i = 0; i < decides && !control; i++) {
            ember_stage_decider decider = {a, decided[i], (size_t)i};
            if (PUSH(stage->deciders, stage->decider_count, decider) != 0)
                return oom();
        }
        if (decides >= 0) {
            p->dynamic[a] = 1;
            pending |= own;
        }
        if (assignment->rvalue->kind == EMBER_NNEF_IDENTIFIER) { /* an alias is what it names */
            const int id = ember_name_map_get(&p->names, assignment->rvalue->u.string);
            if (id >= 0)
                p->dynamic[a] = p->dynamic[plan->names[id].assignment];
        }
    }
    return status;
}

/* ---------------------------------------------------------------- what crosses stages */

typedef struct collect_state {
    int stage;
    ember_stage *target;
} collect_state;

static int contains(const int *items, size_t count, int value)
{
    for (size_t i = 0; i < count; i++)
        if (items[i] == value)
            return 1;
    return 0;
}

static int contains_size(const size_t *items, size_t count, size_t value)
{
    for (size_t i = 0; i < count; i++)
        if (items[i] == value)
            return 1;
    return 0;
}

/* A constant read by the stage: re-declared there, after what its alias names. */
static ember_status import(planner *p, ember_stage *stage, size_t a)
{
    const ember_nnef_expr *rvalue = p->doc->graph_body[a].rvalue;
    if (rvalue->kind == EMBER_NNEF_IDENTIFIER) {
        const int id = ember_name_map_get(&p->names, rvalue->u.string);
        ember_status status = id >= 0 ? import(p, stage, p->plan->names[id].assignment)
                                      : EMBER_OK;
        if (status != EMBER_OK)
            return status;
    }
    if (contains_size(stage->imports, stage->import_count, a))
        return EMBER_OK;
    return PUSH(stage->imports, stage->import_count, a) == 0 ? EMBER_OK : oom();
}

static ember_status note_read(planner *p, int id, void *arg)
{
    const collect_state *state = arg;
    ember_stage *stage = state->target;
    const size_t a = p->plan->names[id].assignment;
    if (p->kind[a] == DEF_CONST)
        return import(p, stage, a);
    if (p->stage_of[a] == state->stage)
        return EMBER_OK;
    if (p->last_reader[id] < state->stage)
        p->last_reader[id] = state->stage;
    if (contains(stage->live_in, stage->live_in_count, id))
        return EMBER_OK;
    return PUSH(stage->live_in, stage->live_in_count, id) == 0 ? EMBER_OK : oom();
}

static ember_status add_live_out(ember_stage *stage, int id)
{
    if (contains(stage->live_out, stage->live_out_count, id))
        return EMBER_OK;
    return PUSH(stage->live_out, stage->live_out_count, id) == 0 ? EMBER_OK : oom();
}

/* Graph outputs: computed ones leave the stage that computes them; an input or constant
 * given as an output goes through the last stage. */
static ember_status route_outputs(planner *p)
{
    ember_stage_plan *plan = p->plan;
    const ember_nnef_document *doc = p->doc;
    ember_stage *last = &plan->stages[plan->stage_count - 1];
    plan->output_names = calloc(doc->graph_output_count + 1, sizeof(int));
    plan->input_names = calloc(doc->graph_input_count + 1, sizeof(int));
    if (plan->output_names == NULL || plan->input_names == NULL)
        return oom();
    for (size_t i = 0; i < doc->graph_input_count; i++)
        plan->input_names[i] = ember_name_map_get(&p->names, doc->graph_inputs[i]);
    for (size_t i = 0; i < doc->graph_output_count; i++) {
        const int id = ember_name_map_get(&p->names, doc->graph_outputs[i]);
        plan->output_names[i] = id;
        if (id < 0)
            return ember_error_set(EMBER_ERROR_INVALID, "%s: graph output '%s' is never "
                                   "assigned", p->model->graph_origin, doc->graph_outputs[i]);
        const size_t a = plan->names[id].assignment;
        ember_stage *stage = p->stage_of[a] >= 0 ? &plan->stages[p->stage_of[a]] : last;
        collect_state state = {(int)(stage - plan->stages), stage};
        ember_status status = note_read(p, id, &state);
        if (status == EMBER_OK)
            status = add_live_out(stage, id);
        if (status != EMBER_OK)
            return status;
    }
    return EMBER_OK;
}

static ember_status collect(planner *p)
{
    ember_stage_plan *plan = p->plan;
    for (size_t s = 0; s < plan->stage_count; s++) {
        ember_stage *stage = &plan->stages[s];
        collect_state state = {(int)s, stage};
        for (size_t i = 0; i < stage->body_count; i++) {
            ember_status status = each_reference(p, p->doc->graph_body[stage->body[i]].rvalue,
                                                 note_read, &state);
            if (status != EMBER_OK)
                return status;
        }
    }
    ember_status status = route_outputs(p);
    /* A value computed in stage s and read by a later stage leaves s. */
    for (size_t id = 0; id < plan->name_count && status == EMBER_OK; id++) {
        const int s = p->stage_of[plan->names[id].assignment];
        if (s >= 0 && p->last_reader[id] > s)
            status = add_live_out(&plan->stages[s], (int)id);
    }
    /* A deciding op's results are read after its stage ran (decided_count): they leave
     * the stage, so the arena keeps them to the end of it. */
    for (size_t id = 0; id < plan->name_count && status == EMBER_OK; id++) {
        const int s = p->stage_of[plan->names[id].assignment];
        for (size_t d = 0; s >= 0 && d < plan->stages[s].decider_count; d++)
            if (plan->stages[s].deciders[d].assignment == plan->names[id].assignment)
                status = add_live_out(&plan->stages[s], (int)id);
    }
    return status;
}

/* Each control op's description (core/control.h); its operands must be computed values
 * or inputs, which the runnable names (a constant is copied first by the writer). */
static ember_status describe_controls(planner *p)
{
    ember_stage_plan *plan = p->plan;
    for (size_t s = 0; s < plan->stage_count; s++) {
        ember_stage *stage = &plan->stages[s];
        if (stage->body_count != 1)
            continue;
        ember_status status = ember_control_describe(p->model, plan, stage->body[0],
                                                     &stage->control);
        if (status != EMBER_OK)
            return status;
        const ember_control *c = stage->control;
        for (size_t i = 0; c != NULL && i < c->operand_count + 2; i++) {
            const ember_control_operand *o = i < c->operand_count ? &c->operands[i]
                                             : i == c->operand_count ? &c->cond : &c->trip_count;
            if (o->name >= 0 && p->kind[plan->names[o->name].assignment] == DEF_CONST)
                return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: a control op takes "
                                       "computed values or inputs; '%s' is a constant",
                                       p->model->graph_origin, c->assignment->line,
                                       plan->names[o->name].name);
        }
    }
    return EMBER_OK;
}

ember_status ember_stage_plan_build(const ember_model *template_model, ember_stage_plan *plan)
{
    const ember_nnef_document *doc = &template_model->doc;
    const size_t n = doc->graph_body_count + 1;
    planner p = {template_model, doc, plan, {NULL, NULL, 0, 0}, calloc(n, sizeof(def_kind)),
                 calloc(n, sizeof(int)), calloc(n, 1), NULL};
    memset(plan, 0, sizeof *plan);
    ember_status status = p.kind && p.stage_of && p.dynamic ? add_names(&p) : oom();
    if (status == EMBER_OK && (p.last_reader = malloc((plan->name_count + 1) * sizeof(int))) == NULL)
        status = oom();
    for (size_t i = 0; status == EMBER_OK && i < plan->name_count; i++)
        p.last_reader[i] = -1;
    if (status == EMBER_OK)
        status = cut(&p);
    if (status == EMBER_OK)
        status = collect(&p);
    if (status == EMBER_OK)
        status = describe_controls(&p);
    ember_name_map_free(&p.names);
    free(p.kind);
    free(p.stage_of);
    free(p.dynamic);
    free(p.last_reader);
    return status;
}

void ember_stage_plan_free(ember_stage_plan *plan)
{
    if (plan == NULL)
        return;
    for (size_t s = 0; s < plan->stage_count; s++) {
        free(plan->stages[s].body);
        free(plan->stages[s].imports);
        free(plan->stages[s].live_in);
        free(plan->stages[s].live_out);
        free(plan->stages[s].deciders);
        ember_control_free(plan->stages[s].control);
    }
    free(plan->stages);
    free(plan->names);
    free(plan->output_names);
    free(plan->input_names);
    memset(plan, 0, sizeof *plan);
}

/* ---------------------------------------------------------------- one stage, concrete */

static ember_nnef_expr *expr(ember_expr_pool *pool, ember_nnef_expr_kind kind)
{
    ember_nnef_expr *e = ember_expr_pool_alloc(pool, sizeof *e);
    if (e != NULL)
        e->kind = kind;
    return e;
}

/* `name = tract_core_external(shape = [dims], datum_type = "t");` of a live-in value. */
static ember_status external_of(ember_expr_pool *pool, const char *name, const ember_tensor *fact,
                                int line, ember_nnef_assignment *out)
{
    ember_nnef_expr *lvalue = expr(pool, EMBER_NNEF_IDENTIFIER);
    ember_nnef_expr *call = expr(pool, EMBER_NNEF_INVOCATION);
    ember_nnef_expr *shape = expr(pool, EMBER_NNEF_ARRAY);
    ember_nnef_expr *type = expr(pool, EMBER_NNEF_STRING);
    ember_nnef_arg *args = ember_expr_pool_alloc(pool, 2 * sizeof *args);
    ember_nnef_expr **dims = ember_expr_pool_alloc(pool, (EMBER_MAX_RANK + 1) * sizeof *dims);
    if (!lvalue || !call || !shape || !type || !args || !dims)
        return oom();
    for (int d = 0; d < fact->rank; d++) {
        if ((dims[d] = expr(pool, EMBER_NNEF_NUMBER)) == NULL)
            return oom();
        dims[d]->u.number.value = (double)fact->shape[d];
        dims[d]->u.number.is_integer = 1;
    }
    lvalue->u.string = name;
    shape->u.list.items = dims;
    shape->u.list.count = (size_t)fact->rank;
    type->u.string = ember_datum_type_name(fact->datum_type);
    args[0].name = "shape";
    args[0].value = shape;
    args[1].name = "datum_type";
    args[1].value = type;
    call->u.invocation.op = "tract_core_external";
    call->u.invocation.args = args;
    call->u.invocation.arg_count = 2;
    out->lvalue = lvalue;
    out->rvalue = call;
    out->line = line;
    return EMBER_OK;
}

/* The document of stage s: live-in externals, imported constants, the stage's body; every
 * symbol substituted (a deciding op's own count by -1: "decided by the run"). */
static ember_status stage_document(const ember_model *template_model, size_t s,
                                   const ember_binding *binding, const ember_tensor *live_in,
                                   ember_expr_pool *pool, ember_nnef_document *out)
{
    const ember_stage_plan *plan = template_model->stage_plan;
    const ember_stage *stage = &plan->stages[s];
    const ember_nnef_document *doc = &template_model->doc;
    ember_binding bound = *binding;
    for (size_t i = 0; i < stage->decider_count; i++) {
        bound.bound[stage->deciders[i].symbol] = 1;
        bound.values[stage->deciders[i].symbol] = -1;
    }
    const size_t count = stage->live_in_count + stage->import_count + stage->body_count;
    ember_nnef_assignment *body = ember_expr_pool_alloc(pool, (count + 1) * sizeof *body);
    const char **inputs = ember_expr_pool_alloc(pool, (stage->live_in_count + 1) * sizeof(char *));
    const char **outputs = ember_expr_pool_alloc(pool, (stage->live_out_count + 1) * sizeof(char *));
    if (!body || !inputs || !outputs)
        return oom();
    *out = *doc;
    out->arena = NULL; /* the template owns the AST; this copy owns nothing */
    size_t n = 0;
    for (size_t i = 0; i < stage->live_in_count; i++) {
        const ember_stage_name *name = &plan->names[stage->live_in[i]];
        inputs[i] = name->name;
        ember_status status = external_of(pool, name->name, &live_in[i],
                                          doc->graph_body[name->assignment].line, &body[n++]);
        if (status != EMBER_OK)
            return status;
    }
    for (size_t i = 0; i < stage->import_count + stage->body_count; i++) {
        const size_t a = i < stage->import_count ? stage->imports[i]
                                                 : stage->body[i - stage->import_count];
        body[n] = doc->graph_body[a];
        body[n].rvalue = ember_expr_substitute(doc->graph_body[a].rvalue, &bound, pool, 0);
        if (body[n++].rvalue == NULL)
            return ember_error_prefix(EMBER_ERROR_INVALID, "%s", template_model->graph_origin);
    }
    for (size_t i = 0; i < stage->live_out_count; i++)
        outputs[i] = plan->names[stage->live_out[i]].name;
    out->graph_body = body;
    out->graph_body_count = n;
    out->graph_inputs = inputs;
    out->graph_input_count = stage->live_in_count;
    out->graph_outputs = outputs;
    out->graph_output_count = stage->live_out_count;
    return EMBER_OK;
}

ember_status ember_stage_specialize(const ember_model *template_model, size_t s,
                                    const ember_binding *binding,
                                    const ember_tensor *live_in_facts, ember_model **out_model)
{
    ember_expr_pool *pool = ember_expr_pool_new();
    ember_nnef_document doc;
    memset(&doc, 0, sizeof doc);
    ember_status status = pool ? stage_document(template_model, s, binding, live_in_facts,
                                                pool, &doc)
                               : oom();
    if (status == EMBER_OK)
        status = ember_model_build_document(template_model, &doc, out_model);
    ember_expr_pool_free(pool);
    return status;
}
