/*
 * Building an ember_model from a plan: graph.nnef's AST plus the archive's .dat files.
 *
 * The graph body is a flat list of assignments `name = rvalue;` and NNEF requires each
 * identifier to be defined before use, so one pass in order suffices. Each rvalue is:
 *
 *   external / tract_core_external   a graph input (a value with no producer);
 *   variable<T>(label, shape)        a constant read from "<label>.dat";
 *   a literal (0.5, [[1.0, 2.0]])    an inline constant;
 *   an identifier                    an alias: the name now also refers to that value;
 *   any other invocation             a node of the op table: arguments are bound to the
 *                                    op's parameters, attributes parsed, the shape rule
 *                                    run — so every inconsistency is found here, at
 *                                    load, with the file, line, node and op in the message.
 *
 * The AST is discarded once the model is built: nodes keep parsed attribute structs and
 * values keep copies of their names.
 */
#include "core/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/attr.h"
#include "core/op.h"
#include "core/shape.h"

/* Inline literals are meant to be small; a larger one is a malformed plan. */
#define MAX_LITERAL_ITEMS (1 << 20)

/* Every load-time failure about a node goes through here, so that all of them carry the
 * same "file:line: node 'name' (op):" prefix that users grep their graph.nnef with. */
ember_status ember_node_error(const ember_node *node, ember_status status, const char *fmt, ...)
{
    char message[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    return ember_error_set(status, "%s:%d: node '%s' (%s): %s", node->origin, node->line,
                           node->name, node->op ? node->op->name : "?", message);
}

/* ---------------------------------------------------------------- name → value map */

/* Open addressing over identifiers; keys point into the AST, which outlives the build. */
/* Identifiers of the graph body → value ids. Aliases (`y = x;`) add a second key for
 * an existing id, which is why names live here and not only on the values. */
typedef struct name_map {
    const char **keys;
    int *ids;
    size_t capacity, count;
} name_map;

/* FNV-1a: tiny, no tables, and good enough for identifiers like "n508" or
 * "_features_features_0_Conv" — collisions only cost a probe. */
static size_t name_hash(const char *s)
{
    size_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The value id of `key`, or -1. The table is never full (load factor ≤ 1/2), so the
 * probe always reaches an empty slot. */
static int name_map_get(const name_map *map, const char *key)
{
    if (map->capacity == 0)
        return -1;
    for (size_t i = name_hash(key) & (map->capacity - 1);; i = (i + 1) & (map->capacity - 1)) {
        if (map->keys[i] == NULL)
            return -1;
        if (strcmp(map->keys[i], key) == 0)
            return map->ids[i];
    }
}

/* Double the table and re-insert; 0 on success. Graphs of tens of thousands of nodes
 * would make a linear scan quadratic, hence a hash at all. */
static int name_map_grow(name_map *map)
{
    const size_t capacity = map->capacity ? map->capacity * 2 : 64;
    name_map bigger = {calloc(capacity, sizeof(char *)), calloc(capacity, sizeof(int)),
                       capacity, 0};
    if (bigger.keys == NULL || bigger.ids == NULL) {
        free(bigger.keys);
        free(bigger.ids);
        return -1;
    }
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->keys[i] == NULL)
            continue;
        size_t j = name_hash(map->keys[i]) & (capacity - 1);
        while (bigger.keys[j] != NULL)
            j = (j + 1) & (capacity - 1);
        bigger.keys[j] = map->keys[i];
        bigger.ids[j] = map->ids[i];
        bigger.count++;
    }
    free(map->keys);
    free(map->ids);
    *map = bigger;
    return 0;
}

/* The caller checked the key is absent. */
static ember_status name_map_put(name_map *map, const char *key, int id)
{
    if ((map->count + 1) * 2 > map->capacity && name_map_grow(map) != 0)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    size_t i = name_hash(key) & (map->capacity - 1);
    while (map->keys[i] != NULL)
        i = (i + 1) & (map->capacity - 1);
    map->keys[i] = key;
    map->ids[i] = id;
    map->count++;
    return EMBER_OK;
}

static void name_map_free(name_map *map)
{
    free(map->keys);
    free(map->ids);
}

/* ---------------------------------------------------------------- growing the model */

/* State of one build: the model being filled, the document it comes from, the names
 * defined so far. */
typedef struct builder {
    ember_model *model;
    const ember_nnef_document *doc;
    name_map names;
} builder;

/* Make room for one more item in a doubling array; new slots are zeroed so a partly
 * built entry is always safe to free. 0 on success. */
static int grow(void **items, size_t *capacity, size_t count, size_t item_size)
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
static ember_status new_value(ember_model *model, const char *name, int *out_id)
{
    if (grow((void **)&model->values, &model->value_capacity, model->value_count,
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
static ember_status set_value_shape(const ember_model *model, ember_value *value,
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

/* ---------------------------------------------------------------- properties */

/* tract_core_properties holds properties = [("key", value), …]; read the plan version. */
static ember_status read_properties(ember_model *model, const ember_nnef_document *doc)
{
    model->plan_version = 1; /* a plan without the property (tract's) is version 1 */
    const ember_nnef_fragment *fragment = ember_nnef_find_fragment(doc, "tract_core_properties");
    if (fragment == NULL)
        return EMBER_OK;
    for (size_t a = 0; a < fragment->body_count; a++) {
        const ember_nnef_expr *list = fragment->body[a].rvalue;
        if (list == NULL || list->kind != EMBER_NNEF_ARRAY)
            continue;
        for (size_t i = 0; i < list->u.list.count; i++) {
            const ember_nnef_expr *pair = list->u.list.items[i];
            double version;
            int is_integer;
            if (pair->kind != EMBER_NNEF_TUPLE || pair->u.list.count != 2 ||
                pair->u.list.items[0]->kind != EMBER_NNEF_STRING ||
                strcmp(pair->u.list.items[0]->u.string, "ember.plan_version") != 0)
                continue;
            if (!ember_expr_number(pair->u.list.items[1], &version, &is_integer) ||
                !is_integer || version < 1 || version > 1e9)
                return ember_error_set(EMBER_ERROR_FORMAT,
                                       "%s:%d: property ember.plan_version must be a "
                                       "positive integer", model->graph_origin, pair->line);
            model->plan_version = (int64_t)version;
        }
    }
    if (model->plan_version > EMBER_PLAN_VERSION)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                               "%s: plan format version %lld is newer than this runtime "
                               "reads (%d): update ember, or cook the plan with a matching "
                               "version", model->graph_origin, (long long)model->plan_version,
                               EMBER_PLAN_VERSION);
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

/* A graph input. NNEF's generic type picks the datum type (scalar → f32, integer → i64,
 * logical → bool); tract's tract_core_external names it as a string instead. */
static ember_status build_external(builder *b, int id, const ember_nnef_expr *call, int line)
{
    ember_model *model = b->model;
    ember_value *value = &model->values[id];
    ember_datum_type dt = EMBER_F32;
    const char *generic = call->u.invocation.generic_type;
    if (strcmp(call->u.invocation.op, "tract_core_external") == 0) {
        const ember_nnef_expr *type = find_arg(call, "datum_type", 99);
        if (type != NULL && type->kind == EMBER_NNEF_STRING)
            dt = ember_datum_type_from_name(type->u.string);
        if (type != NULL && (type->kind != EMBER_NNEF_STRING || dt == 0))
            return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                                   "%s:%d: input '%s': unsupported datum_type", model->graph_origin,
                                   line, value->name);
    } else if (generic != NULL && strcmp(generic, "integer") == 0) {
        dt = EMBER_I64;
    } else if (generic != NULL && strcmp(generic, "logical") == 0) {
        dt = EMBER_BOOL;
    } else if (generic != NULL && strcmp(generic, "scalar") != 0) {
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: input '%s': type '%s'",
                               model->graph_origin, line, value->name, generic);
    }
    int64_t shape[EMBER_MAX_RANK];
    int rank;
    ember_status status = read_declared_shape(b, value->name, line, find_arg(call, "shape", 0),
                                              shape, &rank);
    if (status != EMBER_OK)
        return status;
    return set_value_shape(model, value, dt, rank, shape, line);
}

/* A constant from "<label>.dat". The .dat header decides the datum type (the NNEF generic
 * type only says "scalar" even for i64 weights written by tract); its shape must equal
 * the declared one, or the plan is inconsistent. The data stays in the archive. */
static ember_status build_variable(builder *b, int id, const ember_nnef_expr *call, int line)
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

    char entry_name[1024];
    if ((size_t)snprintf(entry_name, sizeof entry_name, "%s.dat", label->u.string) >=
        sizeof entry_name)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s:%d: variable '%s': label too long",
                               origin, line, name);
    const ember_archive_entry *entry = ember_archive_find(&model->archive, entry_name);
    if (entry == NULL)
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "%s:%d: variable '%s': the plan has no tensor file '%s'", origin,
                               line, name, entry_name);

    if (grow((void **)&model->dats, &model->dat_capacity, model->dat_count, sizeof(ember_dat)))
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
    status = set_value_shape(model, &model->values[id], dat->datum_type, rank, shape, line);
    model->values[id].constant = dat->data;
    return status;
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

/* Literals may appear as a whole right-hand side or as an argument; a UNARY is allowed
 * because "-1.5" may reach us as minus applied to 1.5 (literal_fill rejects others). */
static int is_literal(const ember_nnef_expr *e)
{
    return e->kind == EMBER_NNEF_NUMBER || e->kind == EMBER_NNEF_LOGICAL ||
           e->kind == EMBER_NNEF_ARRAY || e->kind == EMBER_NNEF_UNARY;
}

/* A constant value holding literal `e`, its id in *out_id. */
/* Literals are materialised once at load (they are small: MAX_LITERAL_ITEMS), so ops
 * treat them like any other constant. */
static ember_status build_literal(builder *b, const char *name, const ember_nnef_expr *e,
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
    ember_status status = new_value(model, name, &id);
    if (status != EMBER_OK)
        return status;
    ember_value *value = &model->values[id];
    status = set_value_shape(model, value, dt, rank, shape, line);
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
    *out_id = id;
    return EMBER_OK;
}

/* ---------------------------------------------------------------- nodes */

/* The value an argument refers to: an identifier already defined, or a literal. */
/* Anonymous literals get a name derived from the node and parameter ("n7.bias") so
 * errors and debugging can still point at them. */
static ember_status tensor_argument(builder *b, const ember_node *node, const char *param,
                                    const ember_nnef_expr *e, int item, int *out_id)
{
    if (e->kind == EMBER_NNEF_IDENTIFIER) {
        *out_id = name_map_get(&b->names, e->u.string);
        if (*out_id < 0)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "argument '%s': undefined identifier '%s'", param,
                                    e->u.string);
        return EMBER_OK;
    }
    if (!is_literal(e))
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "argument '%s' must be an identifier or a literal", param);
    char name[512];
    if (item >= 0)
        snprintf(name, sizeof name, "%s.%s[%d]", node->name, param, item);
    else
        snprintf(name, sizeof name, "%s.%s", node->name, param);
    return build_literal(b, name, e, node->line, out_id);
}

/* Pair the invocation's arguments with the op's parameters: positional ones in order,
 * named ones by name. */
/* Errors here are the plan's fault (a writer bug or a hand edit), so they name the
 * offending argument; the op never sees an unbound or doubly bound parameter. */
static ember_status bind_arguments(const ember_node *node, const ember_nnef_expr *call,
                                   const ember_nnef_expr **bound)
{
    const ember_op *op = node->op;
    size_t positional = 0;
    for (size_t i = 0; i < op->param_count; i++)
        bound[i] = NULL;
    for (size_t a = 0; a < call->u.invocation.arg_count; a++) {
        const ember_nnef_arg *arg = &call->u.invocation.args[a];
        size_t index = op->param_count;
        if (arg->name == NULL) {
            index = positional++;
            if (index >= op->param_count)
                return ember_node_error(node, EMBER_ERROR_INVALID,
                                        "too many arguments (%s takes %zu)", op->name,
                                        op->param_count);
        } else {
            for (size_t p = 0; p < op->param_count; p++)
                if (strcmp(op->params[p].name, arg->name) == 0)
                    index = p;
            if (index == op->param_count)
                return ember_node_error(node, EMBER_ERROR_INVALID, "unknown argument '%s'",
                                        arg->name);
        }
        if (bound[index] != NULL)
            return ember_node_error(node, EMBER_ERROR_INVALID, "argument '%s' given twice",
                                    op->params[index].name);
        bound[index] = arg->value;
    }
    return EMBER_OK;
}

/* Append one input value id; concat's list makes the count open-ended. */
static ember_status add_node_input(ember_node *node, int id, size_t *capacity)
{
    if (node->input_count == *capacity) {
        const size_t bigger = *capacity ? *capacity * 2 : 4;
        int *p = realloc(node->inputs, bigger * sizeof(int));
        if (p == NULL)
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
        node->inputs = p;
        *capacity = bigger;
    }
    node->inputs[node->input_count++] = id;
    return EMBER_OK;
}

/* A constant f32 scalar for an omitted tensor parameter (conv's bias = 0.0). */
/* Defaults are materialised rather than special-cased so every op sees the same
 * number of inputs whatever the writer chose to spell out. */
static ember_status default_tensor(builder *b, const ember_node *node,
                                   const ember_op_param *param, int *out_id)
{
    char name[512];
    snprintf(name, sizeof name, "%s.%s", node->name, param->name);
    ember_status status = new_value(b->model, name, out_id);
    if (status != EMBER_OK)
        return status;
    ember_value *value = &b->model->values[*out_id];
    value->owned = malloc(sizeof(float));
    if (value->owned == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    *(float *)value->owned = param->default_value;
    value->constant = value->owned;
    value->datum_type = EMBER_F32;
    value->rank = 0;
    return EMBER_OK;
}

/* Turn each tensor parameter into input values (a default scalar when omitted). */
static ember_status bind_tensors(builder *b, ember_node *node, const ember_nnef_expr **bound)
{
    size_t capacity = 0;
    ember_status status = EMBER_OK;
    int id = -1;
    for (size_t p = 0; p < node->op->param_count && status == EMBER_OK; p++) {
        const ember_op_param *param = &node->op->params[p];
        const ember_nnef_expr *e = bound[p];
        if (param->kind == EMBER_PARAM_ATTRIBUTE)
            continue;
        if (e == NULL && !param->has_default)
            return ember_node_error(node, EMBER_ERROR_INVALID, "missing argument '%s'",
                                    param->name);
        if (param->kind == EMBER_PARAM_TENSOR_LIST) {
            if (e->kind != EMBER_NNEF_ARRAY || e->u.list.count == 0)
                return ember_node_error(node, EMBER_ERROR_INVALID,
                                        "argument '%s' must be a non-empty list of tensors",
                                        param->name);
            for (size_t i = 0; i < e->u.list.count && status == EMBER_OK; i++) {
                status = tensor_argument(b, node, param->name, e->u.list.items[i], (int)i, &id);
                if (status == EMBER_OK)
                    status = add_node_input(node, id, &capacity);
            }
            continue;
        }
        status = e == NULL ? default_tensor(b, node, param, &id)
                           : tensor_argument(b, node, param->name, e, -1, &id);
        if (status == EMBER_OK)
            status = add_node_input(node, id, &capacity);
    }
    return status;
}

/* A node of the op table: bind, parse attributes, run the shape rule. Errors leave the
 * node in the model, so ember_model_destroy frees whatever was built so far. */
static ember_status build_node(builder *b, const char *name, const ember_op *op,
                               const ember_nnef_expr *call, int line)
{
    ember_model *model = b->model;
    if (grow((void **)&model->nodes, &model->node_capacity, model->node_count,
             sizeof(ember_node)) != 0)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    /* The output value first: creating values may move the values array, so pointers to
     * values are taken only after the last one exists. */
    int output;
    ember_status status = new_value(model, name, &output);
    if (status != EMBER_OK)
        return status;
    const size_t index = model->node_count++;
    ember_node *node = &model->nodes[index];
    memset(node, 0, sizeof *node);
    node->op = op;
    node->name = model->values[output].name;
    node->origin = model->graph_origin;
    node->line = line;
    node->output = output;
    model->values[output].producer = (int)index;

    const ember_nnef_expr *bound[EMBER_OP_MAX_PARAMS];
    status = bind_arguments(node, call, bound);
    if (status == EMBER_OK)
        status = bind_tensors(b, node, bound);
    if (status == EMBER_OK && op->parse != NULL) {
        const ember_nnef_expr *attributes[EMBER_OP_MAX_PARAMS];
        for (size_t p = 0; p < op->param_count; p++)
            attributes[p] = op->params[p].kind == EMBER_PARAM_ATTRIBUTE ? bound[p] : NULL;
        status = op->parse(node, attributes, &node->attributes);
    }
    if (status != EMBER_OK)
        return status;

    const ember_value *inputs[64];
    const ember_value **input_values = inputs;
    if (node->input_count > 64) {
        input_values = malloc(node->input_count * sizeof *input_values);
        if (input_values == NULL)
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < node->input_count; i++)
        input_values[i] = &model->values[node->inputs[i]];
    status = op->infer(node, input_values, &model->values[output]);
    if (input_values != inputs)
        free(input_values);
    if (status != EMBER_OK)
        return status;
    ember_value *out = &model->values[output];
    return set_value_shape(model, out, out->datum_type, out->rank, out->shape, line);
}

/* ---------------------------------------------------------------- assignments */

/* One `name = rvalue;` of the graph body. Assigning a name twice is refused: NNEF is
 * single-assignment, and a silent rebinding would make graph outputs ambiguous. */
static ember_status build_assignment(builder *b, const ember_nnef_assignment *assignment)
{
    ember_model *model = b->model;
    const char *origin = model->graph_origin;
    const int line = assignment->line;
    const ember_nnef_expr *rvalue = assignment->rvalue;
    if (assignment->lvalue->kind != EMBER_NNEF_IDENTIFIER)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                               "%s:%d: operations with several results are not supported yet",
                               origin, line);
    const char *name = assignment->lvalue->u.string;
    if (name_map_get(&b->names, name) >= 0)
        return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s' is assigned twice", origin,
                               line, name);

    int id = -1;
    if (rvalue->kind == EMBER_NNEF_IDENTIFIER) {
        id = name_map_get(&b->names, rvalue->u.string);
        if (id < 0)
            return ember_error_set(EMBER_ERROR_INVALID, "%s:%d: '%s': undefined identifier '%s'",
                                   origin, line, name, rvalue->u.string);
    } else if (rvalue->kind == EMBER_NNEF_INVOCATION) {
        const char *op_name = rvalue->u.invocation.op;
        ember_status status;
        if (strcmp(op_name, "external") == 0 || strcmp(op_name, "tract_core_external") == 0 ||
            strcmp(op_name, "variable") == 0) {
            status = new_value(model, name, &id);
            if (status != EMBER_OK)
                return status;
            status = op_name[0] == 'v' ? build_variable(b, id, rvalue, line)
                                       : build_external(b, id, rvalue, line);
        } else {
            const ember_op *op = ember_op_find(op_name);
            if (op == NULL)
                return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: node '%s': unknown op '%s'",
                                       origin, line, name, op_name);
            status = build_node(b, name, op, rvalue, line);
            id = model->nodes[model->node_count - 1].output;
        }
        if (status != EMBER_OK)
            return status;
    } else if (is_literal(rvalue)) {
        ember_status status = build_literal(b, name, rvalue, line, &id);
        if (status != EMBER_OK)
            return status;
    } else {
        return ember_error_set(EMBER_ERROR_UNSUPPORTED,
                               "%s:%d: '%s': only invocations, identifiers and literals are "
                               "supported on the right of '='", origin, line, name);
    }
    return name_map_put(&b->names, name, id);
}

/* ---------------------------------------------------------------- graph inputs/outputs */

/* The graph declaration's input and output lists, in declaration order — the order of
 * the public API. Inputs must be externals; outputs may be any value (even a constant
 * or an input). */
static ember_status bind_graph_ends(builder *b)
{
    ember_model *model = b->model;
    const ember_nnef_document *doc = b->doc;
    const char *origin = model->graph_origin;
    model->inputs = calloc(doc->graph_input_count + 1, sizeof(int));
    model->outputs = calloc(doc->graph_output_count + 1, sizeof(int));
    model->input_names = calloc(doc->graph_input_count + 1, sizeof(char *));
    model->output_names = calloc(doc->graph_output_count + 1, sizeof(char *));
    if (!model->inputs || !model->outputs || !model->input_names || !model->output_names)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");

    for (size_t i = 0; i < doc->graph_input_count; i++) {
        const char *name = doc->graph_inputs[i];
        const int id = name_map_get(&b->names, name);
        if (id < 0 || model->values[id].producer >= 0 || model->values[id].constant != NULL)
            return ember_error_set(EMBER_ERROR_INVALID,
                                   "%s: graph input '%s' is not defined by external(…)", origin,
                                   name);
        for (size_t j = 0; j < i; j++)
            if (model->inputs[j] == id)
                return ember_error_set(EMBER_ERROR_INVALID, "%s: graph input '%s' listed twice",
                                       origin, name);
        model->inputs[i] = id;
        model->input_names[i] = strdup(name);
        model->input_count = i + 1;
        if (model->input_names[i] == NULL)
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    }
    /* An external the declaration does not list could never be given a value. */
    for (size_t v = 0; v < model->value_count; v++) {
        const ember_value *value = &model->values[v];
        int listed = value->producer >= 0 || value->constant != NULL;
        for (size_t j = 0; j < model->input_count && !listed; j++)
            listed = model->inputs[j] == (int)v;
        if (!listed)
            return ember_error_set(EMBER_ERROR_INVALID,
                                   "%s: external '%s' is not among the graph's inputs", origin,
                                   value->name);
    }
    for (size_t i = 0; i < doc->graph_output_count; i++) {
        const char *name = doc->graph_outputs[i];
        const int id = name_map_get(&b->names, name);
        if (id < 0)
            return ember_error_set(EMBER_ERROR_INVALID, "%s: graph output '%s' is never assigned",
                                   origin, name);
        model->outputs[i] = id;
        model->output_names[i] = strdup(name);
        model->output_count = i + 1;
        if (model->output_names[i] == NULL)
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory building the graph");
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- entry points */

/* Properties first: a plan too new for this runtime should say so, not fail on the
 * first op it does not know. */
static ember_status build(ember_model *model, const ember_nnef_document *doc)
{
    builder b = {model, doc, {NULL, NULL, 0, 0}};
    ember_status status = read_properties(model, doc);
    for (size_t i = 0; i < doc->graph_body_count && status == EMBER_OK; i++)
        status = build_assignment(&b, &doc->graph_body[i]);
    if (status == EMBER_OK)
        status = bind_graph_ends(&b);
    name_map_free(&b.names);
    return status;
}

/* Entry point from the API: the archive is opened by the caller (path or buffer), the
 * rest is here. The model owns the archive from the first line, so every failure path
 * is one ember_model_destroy. */
ember_status ember_model_from_archive(ember_archive *archive, ember_model **out_model)
{
    ember_model *model = calloc(1, sizeof *model);
    if (model == NULL) {
        ember_archive_close(archive);
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory loading the plan");
    }
    /* The model owns the archive from here on: constants point into its entries. */
    model->archive = *archive;
    memset(archive, 0, sizeof *archive);

    const char *origin = model->archive.origin ? model->archive.origin : "<plan>";
    const size_t origin_size = strlen(origin) + sizeof ":graph.nnef";
    model->graph_origin = malloc(origin_size);
    if (model->graph_origin == NULL) {
        ember_model_destroy(model);
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory loading the plan");
    }
    snprintf(model->graph_origin, origin_size, "%s:graph.nnef", origin);

    const ember_archive_entry *graph = ember_archive_find(&model->archive, "graph.nnef");
    if (graph == NULL) {
        ember_status status = ember_error_set(EMBER_ERROR_FORMAT, "%s: the plan has no graph.nnef",
                                              origin);
        ember_model_destroy(model);
        return status;
    }
    ember_nnef_document doc;
    memset(&doc, 0, sizeof doc);
    ember_status status = ember_nnef_parse((const char *)graph->data, graph->size,
                                           model->graph_origin, &doc);
    if (status == EMBER_OK) {
        status = build(model, &doc);
        ember_nnef_document_free(&doc);
    }
    if (status != EMBER_OK) {
        ember_model_destroy(model);
        return status;
    }
    *out_model = model;
    return EMBER_OK;
}

/* Frees everything a model may hold, including a partly built one (arrays are zeroed as
 * they grow, so unbuilt slots hold NULL). */
void ember_model_destroy(ember_model *model)
{
    if (model == NULL)
        return;
    for (size_t i = 0; i < model->node_count; i++) {
        free(model->nodes[i].inputs);
        free(model->nodes[i].attributes);
    }
    for (size_t i = 0; i < model->value_count; i++) {
        free(model->values[i].name);
        free(model->values[i].owned);
    }
    for (size_t i = 0; i < model->dat_count; i++)
        ember_dat_free(&model->dats[i]);
    for (size_t i = 0; i < model->input_count; i++)
        free(model->input_names[i]);
    for (size_t i = 0; i < model->output_count; i++)
        free(model->output_names[i]);
    free(model->nodes);
    free(model->values);
    free(model->dats);
    free(model->inputs);
    free(model->outputs);
    free(model->input_names);
    free(model->output_names);
    free(model->graph_origin);
    ember_archive_close(&model->archive);
    free(model->buffer_copy);
    free(model);
}
