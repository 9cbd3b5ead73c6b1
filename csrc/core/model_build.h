/*
 * csrc/core/model_build.h — private to the three files that build an ember_model from a
 * plan; nothing outside csrc/core/model*.c includes it.
 *
 *   model.c          the walk: the name map, properties and the plan version check, one
 *                    assignment at a time, the graph's input and output lists, entry
 *                    points and destroy;
 *   model_values.c   values that are not node outputs: externals, variables from .dat,
 *                    inline literals, plus the growable arrays and shape checks every
 *                    value goes through;
 *   model_bind.c     nodes: an invocation's arguments matched to the op's parameters,
 *                    tensor arguments turned into input values, attributes parsed, the
 *                    shape rule run.
 *
 * Every function here reports failures through ember_error_set / ember_node_error with
 * the same "file:line: …" prefixes, so a message does not depend on which file made it.
 */
#ifndef EMBER_CORE_MODEL_BUILD_H
#define EMBER_CORE_MODEL_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/op.h"

/* Open addressing over identifiers; keys point into the AST, which outlives the build. */
/* Identifiers of the graph body → value ids. Aliases (`y = x;`) add a second key for
 * an existing id, which is why names live here and not only on the values. */
typedef struct name_map {
    const char **keys;
    int *ids;
    size_t capacity, count;
} name_map;

/* State of one build: the model being filled, the document it comes from, the names
 * defined so far. */
typedef struct builder {
    ember_model *model;
    const ember_nnef_document *doc;
    name_map names;
} builder;

/* ---- model.c */

/* The value id of `key`, or -1. */
int ember_name_map_get(const name_map *map, const char *key);
/* Add `key` (absent; the map borrows the string). */
ember_status ember_name_map_put(name_map *map, const char *key, int id);
void ember_name_map_free(name_map *map);
/* The value of property `key` of the tract_core_properties fragment, or NULL. */
const ember_nnef_expr *ember_find_property(const ember_nnef_document *doc, const char *key);
/* The graph's declared inputs and outputs (their values found by name). */
ember_status ember_bind_graph_ends(builder *b, int is_template);

/* ---- model_template.c */

/* The declared symbols (`extension tract_symbol`) into model->symbols. */
ember_status ember_read_symbols(ember_model *model, const ember_nnef_document *doc);
/* Whether the graph body mentions a declared symbol. */
int ember_mentions_symbols(const ember_model *model, const ember_nnef_document *doc);
/* A template's interface: inputs with their dim expressions, the declared output facts. */
ember_status ember_build_template(builder *b);

/* ---- model_values.c */

/* Make room for one more item in a doubling array; new slots are zeroed so a partly
 * built entry is always safe to free. 0 on success. */
int ember_array_grow(void **items, size_t *capacity, size_t count, size_t item_size);

/* A new value named `name` (copied), its id in *out_id. */
ember_status ember_new_value(ember_model *model, const char *name, int *out_id);

/* Checks a value's shape is representable and sets it; `line` is for the message. */
ember_status ember_set_value_shape(const ember_model *model, ember_value *value,
                                   ember_datum_type dt, int rank, const int64_t *shape,
                                   int line);

/* Fill value `id` (already created) from `external<T>(…)` / `tract_core_external(…)`,
 * or from `variable<T>(label, shape)` and its .dat. */
ember_status ember_build_external(builder *b, int id, const ember_nnef_expr *call, int line);
ember_status ember_build_variable(builder *b, int id, const ember_nnef_expr *call, int line);
struct ember_binding;
/* A template's input (core/model.h): symbolic dims are -1. */
ember_status ember_build_template_external(builder *b, int id, const ember_nnef_expr *call,
                                           int line, const struct ember_binding *binding);

/* Whether `e` is spelled as a literal (number, logical, array, or a unary minus). */
int ember_is_literal(const ember_nnef_expr *e);

/* A new constant value named `name` holding literal `e`, its id in *out_id. */
ember_status ember_build_literal(builder *b, const char *name, const ember_nnef_expr *e,
                                 int line, int *out_id);

/* ---- model_bind.c */

/* A node of the op table for `name = call;`. Errors leave the node in the model, so
 * ember_model_destroy frees whatever was built so far. */
ember_status ember_build_node(builder *b, const char *const *names, int name_count,
                              const ember_op *op,
                              const ember_nnef_expr *call, int line);

#endif /* EMBER_CORE_MODEL_BUILD_H */
