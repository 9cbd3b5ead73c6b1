/*
 * The values of a model that no node produces — graph inputs, constants read from
 * .dat files, inline literals — and the bookkeeping every value goes through: the
 * growable arrays of the model, value creation, the shape check.
 *
 * Sources (external, variable) are not op-table entries: their few arguments are read
 * here directly, and their shapes must be static integers. Literals are materialised at
 * load into storage the model owns. See core/model_build.h for how this fits with
 * model.c (the walk) and model_bind.c (nodes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/attr.h"
#include "core/model_build.h"
#include "core/symbols.h"
#include "core/shape.h"

/* Inline literals are meant to be small; a larger one is a malformed plan. */
#define MAX_LITERAL_ITEMS (1 << 20)

/* ---------------------------------------------------------------- growing the model */

/* Make room for one more item in a doubling array; new slots are zeroed so a partly
 * built entry is always safe to free. 0 on success. */
int ember_array_grow(void **items, size_t *capacity, size_t count, size_t item_size)
{
    if (count < *capacity)
        return 0;
    const size_t bigger = *capacity ? *capacity * 2 : 32;
    void *p = realloc(*items, bigger * item_size);
    if (p == NULL)
        return -1;
    memset((char *)p + *capacity * item_size, 0, (bigger - *capacity) * item_size);
    *items = p;
    *capacity = bigger;
    return 0;
}

/* A new value named `name`, its id in *out_id. */
/* Values are created in graph order, so a value's id tells when it was defined; the
 * name is copied because the AST is freed after the build. */
ember_status ember_new_value(ember_model *model, const char *name, int *out_id)
{
    if (ember_array_grow((void **)&model->values, &model->value_capacity, model->value_count,
                         sizeof(ember_value)) != 0)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    ember_value *value = &model->values[model->value_count];
    memset(value, 0, sizeof *value);
    value->producer = -1;
    value->name = strdup(name);
    if (value->name == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    *out_id = (int)model->value_count++;
    return EMBER_OK;
}

/* Checks a value's shape is representable and sets it. */
/* Shapes come from the file (externals, variables) or from shape rules fed by the file,
 * so each one is checked to fit in memory before anything sizes a buffer from it. */
ember_status ember_set_value_shape(const ember_model *model, ember_value *value,
                                   ember_datum_type dt, int rank, const int64_t *shape,
                                   int line)
{
    size_t bytes;
    value->datum_type = dt;
    value->rank = rank;
    memcpy(value->shape, shape, (size_t)rank * sizeof(int64_t));
    if (ember_shape_bytes(shape, rank, ember_datum_size(dt), &bytes) != 0) {
        char text[EMBER_SHAPE_TEXT];
        return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s': shape %s is too large",
                               model->graph_origin, line, value->name,
                               ember_shape_format(shape, rank, text, sizeof text));
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- invocation arguments */

/* The argument named `name`, or else the positional argument `position`, or NULL. */
/* Sources (external, variable) are not op-table entries: their few arguments are
 * looked up here directly, positional or named, as NNEF allows both. */
static const ember_nnef_expr *find_arg(const ember_nnef_expr *invocation, const char *name,
                                       size_t position)
{
    size_t positional = 0;
    for (size_t i = 0; i < invocation->u.invocation.arg_count; i++) {
        const ember_nnef_arg *arg = &invocation->u.invocation.args[i];
        if (arg->name != NULL && strcmp(arg->name, name) == 0)
            return arg->value;
        if (arg->name == NULL && positional++ == position)
            return arg->value;
    }
    return NULL;
}

/* shape = [d, …] of an external or variable: integers only (static shapes for now). */
/* Symbols are refused by name so the user learns which dimension to fix with
 * set_input_fact on the cook side, rather than a generic parse error. */
static ember_status read_declared_shape(const builder *b, const char *what, int line,
                                        const ember_nnef_expr *e, int64_t *shape, int *rank)
{
    const char *origin = b->model->graph_origin;
    if (e == NULL || e->kind != EMBER_NNEF_ARRAY)
        return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s': missing or malformed shape",
                               origin, line, what);
    if (e->u.list.count > EMBER_MAX_RANK)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: '%s': rank %zu exceeds %d",
                               origin, line, what, e->u.list.count, EMBER_MAX_RANK);
    for (size_t i = 0; i < e->u.list.count; i++) {
        const ember_nnef_expr *dim = e->u.list.items[i];
        double value;
        int is_integer;
        if (dim->kind == EMBER_NNEF_IDENTIFIER)
            return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                                   "%s:%d: '%s': symbolic dimension '%s' is not supported "
                                   "yet (static shapes only)", origin, line, what,
                                   dim->u.string);
        if (!ember_expr_number(dim, &value, &is_integer))
            return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                                   "%s:%d: '%s': dimension %zu is an expression; symbolic "
                                   "dimensions are not supported yet", origin, line, what, i);
        if (!is_integer || value < 0 || value > 4e18)
            return ember_error_set(EMBER_ERROR_INVALID,
                                   "%s:%d: '%s': dimension %zu must be a non-negative integer",
                                   origin, line, what, i);
        shape[i] = (int64_t)value;
    }
    *rank = (int)e->u.list.count;
    return EMBER_OK;
}

/* ---------------------------------------------------------------- sources */

/* A graph input's datum type. NNEF's generic type picks it (scalar → f32, integer → i64,
 * logical → bool); tract's tract_core_external names it as a string instead. */
static ember_status external_type(const ember_model *model, const ember_value *value,
                                  const ember_nnef_expr *call, int line, ember_datum_type *dt)
{
    const char *generic = call->u.invocation.generic_type;
    *dt = EMBER_F32;
    if (strcmp(call->u.invocation.op, "tract_core_external") == 0) {
        const ember_nnef_expr *type = find_arg(call, "datum_type", 99);
        if (type != NULL && type->kind == EMBER_NNEF_STRING)
            *dt = ember_datum_type_from_name(type->u.string);
        if (type != NULL && (type->kind != EMBER_NNEF_STRING || *dt == 0))
            return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                                   "%s:%d: input '%s': unsupported datum_type %s%s%s",
                                   model->graph_origin, line, value->name,
                                   type->kind == EMBER_NNEF_STRING ? "'" : "(not a string)",
                                   type->kind == EMBER_NNEF_STRING ? type->u.string : "",
                                   type->kind == EMBER_NNEF_STRING ? "'" : "");
    } else if (generic != NULL && strcmp(generic, "integer") == 0) {
        *dt = EMBER_I64;
    } else if (generic != NULL && strcmp(generic, "logical") == 0) {
        *dt = EMBER_BOOL;
    } else if (generic != NULL && strcmp(generic, "scalar") != 0) {
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: input '%s': type '%s'",
                               model->graph_origin, line, value->name, generic);
    }
    return EMBER_OK;
}

ember_status ember_build_external(builder *b, int id, const ember_nnef_expr *call, int line)
{
    ember_model *model = b->model;
    ember_value *value = &model->values[id];
    ember_datum_type dt;
    int64_t shape[EMBER_MAX_RANK];
    int rank;
    ember_status status = external_type(model, value, call, line, &dt);
    if (status == EMBER_OK)
        status = read_declared_shape(b, value->name, line, find_arg(call, "shape", 0), shape,
                                     &rank);
    if (status != EMBER_OK)
        return status;
    return ember_set_value_shape(model, value, dt, rank, shape, line);
}

/* A template's input: dims that mention symbols are -1, their expressions kept in
 * model->input_dims (the AST outlives the template). */
ember_status ember_build_template_external(builder *b, int id, const ember_nnef_expr *call,
                                           int line, const ember_binding *binding)
{
    ember_model *model = b->model;
    ember_value *value = &model->values[id];
    const ember_nnef_expr *shape = find_arg(call, "shape", 0);
    ember_status status = external_type(model, value, call, line, &value->datum_type);
    if (status != EMBER_OK)
        return status;
    if (shape == NULL || shape->kind != EMBER_NNEF_ARRAY || shape->u.list.count > EMBER_MAX_RANK)
        return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s': missing or malformed shape "
                               "(at most %d dims)", model->graph_origin, line, value->name,
                               EMBER_MAX_RANK);
    value->rank = (int32_t)shape->u.list.count;
    for (int i = 0; i < value->rank; i++) {
        const ember_nnef_expr *dim = shape->u.list.items[i];
        const char *problem = "";
        char text[128];
        if (ember_expr_has_symbol(dim, binding)) {
            value->shape[i] = -1;
            continue;
        }
        if (ember_dim_eval(dim, binding, &value->shape[i], &problem) != EMBER_DIM_OK ||
            value->shape[i] < 0)
            return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s': dimension %d (%s) must "
                                   "be a non-negative integer or an expression of symbols",
                                   model->graph_origin, line, value->name, i,
                                   ember_expr_format(dim, text, sizeof text));
    }
    return EMBER_OK;
}

/* A constant from "<label>.dat" (leading '/' dropped). The .dat header decides the datum type (the NNEF generic
 * type only says "scalar" even for i64 weights written by tract); its shape must equal
 * the declared one, or the plan is inconsistent. The data stays in the archive. */
ember_status ember_build_variable(builder *b, int id, const ember_nnef_expr *call, int line)
{
    ember_model *model = b->model;
    const char *origin = model->graph_origin;
    const char *name = model->values[id].name;
    const ember_nnef_expr *label = find_arg(call, "label", 0);
    if (label == NULL || label->kind != EMBER_NNEF_STRING)
        return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: variable '%s': missing label",
                               origin, line, name);
    int64_t shape[EMBER_MAX_RANK];
    int rank;
    ember_status status = read_declared_shape(b, name, line, find_arg(call, "shape", 1), shape,
                                              &rank);
    if (status != EMBER_OK)
        return status;

    /* tract stores label "/stem/conv/Conv.bias" as stem/conv/Conv.bias.dat: entries are
     * relative to the archive's root */
    const char *path = label->u.string;
    while (*path == '/')
        path++;
    char entry_name[1024];
    if ((size_t)snprintf(entry_name, sizeof entry_name, "%s.dat", path) >=
        sizeof entry_name)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s:%d: variable '%s': label too long",
                               origin, line, name);
    const ember_archive_entry *entry = ember_archive_find(&model->archive, entry_name);
    if (entry == NULL)
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "%s:%d: variable '%s': the plan has no tensor file '%s'", origin,
                               line, name, entry_name);

    if (ember_array_grow((void **)&model->dats, &model->dat_capacity, model->dat_count,
                         sizeof(ember_dat)))
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory reading '%s'", entry_name);
    char where[1200];
    snprintf(where, sizeof where, "%s:%s", model->archive.origin ? model->archive.origin : "",
             entry_name);
    ember_dat *dat = &model->dats[model->dat_count];
    memset(dat, 0, sizeof *dat);
    status = ember_dat_parse(entry->data, entry->size, where, dat);
    if (status != EMBER_OK)
        return status;
    model->dat_count++;

    char declared[EMBER_SHAPE_TEXT], found[EMBER_SHAPE_TEXT];
    if (!ember_shape_equal(dat->shape, dat->rank, shape, rank))
        return ember_error_set(EMBER_ERROR_INVALID,
                               "%s:%d: variable '%s': %s holds shape %s, the graph declares %s",
                               origin, line, name, entry_name,
                               ember_shape_format(dat->shape, dat->rank, found, sizeof found),
                               ember_shape_format(shape, rank, declared, sizeof declared));
    size_t bytes;
    if (ember_datum_size(dat->datum_type) == 0 ||
        ember_shape_bytes(shape, rank, ember_datum_size(dat->datum_type), &bytes) != 0 ||
        bytes != dat->byte_size)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: size does not match its shape", where);
    status = ember_set_value_shape(model, &model->values[id], dat->datum_type, rank, shape, line);
    model->values[id].constant = dat->data;
    return status;
}

/* The archive is the root's for every model (bodies and stages borrow it), so an op
 * never needs to know which model's plan it reads. */
void ember_model_release_constant(const ember_model *model, const void *constant,
                                  size_t bytes)
{
    ember_archive_release(&model->archive, constant, bytes);
}

void ember_model_release_plan(const ember_model *model)
{
    const ember_archive *archive = &model->archive;
    ember_archive_release(archive, archive->mapped, archive->mapped_size);
}

/* ---------------------------------------------------------------- literals */

/* Shape of a nested array literal, from its first items; checked while filling. */
/* The shape of a nested array literal is read from its first items; literal_fill then
 * checks every item against it, which is where ragged literals are caught. */
static int literal_shape(const ember_nnef_expr *e, int64_t *shape, int *rank)
{
    *rank = 0;
    while (e->kind == EMBER_NNEF_ARRAY) {
        if (*rank == EMBER_MAX_RANK)
            return -1;
        shape[(*rank)++] = (int64_t)e->u.list.count;
        if (e->u.list.count == 0)
            break;
        e = e->u.list.items[0];
    }
    return 0;
}

/* Writes the items of `e` (at depth `axis`) into f32 or bool storage, in row-major order. */
static int literal_fill(const ember_nnef_expr *e, const int64_t *shape, int rank, int axis,
                        ember_datum_type dt, void *data, int64_t *next)
{
    if (axis < rank) {
        if (e->kind != EMBER_NNEF_ARRAY || (int64_t)e->u.list.count != shape[axis])
            return -1; /* ragged */
        for (size_t i = 0; i < e->u.list.count; i++)
            if (literal_fill(e->u.list.items[i], shape, rank, axis + 1, dt, data, next) != 0)
                return -1;
        return 0;
    }
    double value;
    int is_integer;
    if (dt == EMBER_BOOL && e->kind == EMBER_NNEF_LOGICAL) {
        ((uint8_t *)data)[(*next)++] = e->u.logical != 0;
        return 0;
    }
    if (dt == EMBER_F32 && ember_expr_number(e, &value, &is_integer)) {
        ((float *)data)[(*next)++] = (float)value;
        return 0;
    }
    return -1;
}

/* The first leaf of a literal decides its datum type: numbers are f32 (the compute type
 * of every math op), true/false are bool. */
static ember_datum_type literal_type(const ember_nnef_expr *e)
{
    double value;
    int is_integer;
    while (e->kind == EMBER_NNEF_ARRAY && e->u.list.count > 0)
        e = e->u.list.items[0];
    if (e->kind == EMBER_NNEF_LOGICAL)
        return EMBER_BOOL;
    if (e->kind == EMBER_NNEF_ARRAY || ember_expr_number(e, &value, &is_integer))
        return EMBER_F32;
    return (ember_datum_type)0;
}

/* Whether every item of literal `e` is written as an integer (NNEF's integer type). */
static int literal_is_integer(const ember_nnef_expr *e)
{
    double value;
    int is_integer;
    if (e->kind == EMBER_NNEF_ARRAY) {
        for (size_t i = 0; i < e->u.list.count; i++)
            if (!literal_is_integer(e->u.list.items[i]))
                return 0;
        return e->u.list.count > 0;
    }
    return ember_expr_number(e, &value, &is_integer) && is_integer;
}

/* Literals may appear as a whole right-hand side or as an argument; a UNARY is allowed
 * because "-1.5" may reach us as minus applied to 1.5 (literal_fill rejects others). */
int ember_is_literal(const ember_nnef_expr *e)
{
    return e->kind == EMBER_NNEF_NUMBER || e->kind == EMBER_NNEF_LOGICAL ||
           e->kind == EMBER_NNEF_ARRAY || e->kind == EMBER_NNEF_UNARY;
}

/* A constant value holding literal `e`, its id in *out_id. */
/* Literals are materialised once at load (they are small: MAX_LITERAL_ITEMS), so ops
 * treat them like any other constant. */
ember_status ember_build_literal(builder *b, const char *name, const ember_nnef_expr *e,
                                 int line, int *out_id)
{
    ember_model *model = b->model;
    int64_t shape[EMBER_MAX_RANK];
    int rank, id;
    const ember_datum_type dt = literal_type(e);
    if (dt == 0 || literal_shape(e, shape, &rank) != 0)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                               "%s:%d: '%s': unsupported literal (numbers or logicals, rank "
                               "<= %d)", model->graph_origin, line, name, EMBER_MAX_RANK);
    ember_status status = ember_new_value(model, name, &id);
    if (status != EMBER_OK)
        return status;
    ember_value *value = &model->values[id];
    status = ember_set_value_shape(model, value, dt, rank, shape, line);
    if (status != EMBER_OK)
        return status;
    const int64_t count = ember_shape_count(shape, rank);
    if (count > MAX_LITERAL_ITEMS)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: '%s': literal of %lld items "
                               "is too large", model->graph_origin, line, name,
                               (long long)count);
    value->owned = calloc((size_t)(count > 0 ? count : 1), ember_datum_size(dt));
    if (value->owned == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory reading literal '%s'", name);
    int64_t filled = 0;
    if (literal_fill(e, shape, rank, 0, dt, value->owned, &filled) != 0 || filled != count)
        return ember_error_set(EMBER_ERROR_INVALID,
                               "%s:%d: '%s': literal is ragged or mixes numbers and logicals",
                               model->graph_origin, line, name);
    value->constant = value->owned;
    value->integer_literal = dt == EMBER_F32 && literal_is_integer(e);
    *out_id = id;
    return EMBER_OK;
}
