/*
 * csrc/core/attr.h — reading op attributes from NNEF expressions, with errors that name
 * the node, the op and the attribute. A NULL expression means "not given": the
 * function stores the default and succeeds.
 */
#ifndef EMBER_CORE_ATTR_H
#define EMBER_CORE_ATTR_H

#include <stdint.h>

#include "core/model.h"

/* A number literal, with unary minus folded in ("-1" may parse as -(1)). */
int ember_expr_number(const ember_nnef_expr *e, double *out_value, int *out_is_integer);

ember_status ember_attr_int(const ember_node *node, const char *name, const ember_nnef_expr *e,
                            int64_t default_value, int64_t *out);
ember_status ember_attr_float(const ember_node *node, const char *name,
                              const ember_nnef_expr *e, double default_value, double *out);
ember_status ember_attr_bool(const ember_node *node, const char *name, const ember_nnef_expr *e,
                             int default_value, int *out);
/* The string, pointing into the AST (valid during parse only); default when absent. */
ember_status ember_attr_string(const ember_node *node, const char *name,
                               const ember_nnef_expr *e, const char *default_value,
                               const char **out);
/* [i, j, …] of at most `capacity` integers; an absent list has count 0. */
ember_status ember_attr_int_list(const ember_node *node, const char *name,
                                 const ember_nnef_expr *e, int64_t *out, int capacity,
                                 int *out_count);
/* [x, y, …] of at most `capacity` numbers; an absent list has count 0. */
ember_status ember_attr_float_list(const ember_node *node, const char *name,
                                   const ember_nnef_expr *e, double *out, int capacity,
                                   int *out_count);
/* [(b, a), …] of at most `capacity` pairs; an absent list has count 0. */
ember_status ember_attr_padding(const ember_node *node, const char *name,
                                const ember_nnef_expr *e, int64_t *before, int64_t *after,
                                int capacity, int *out_count);

/* Normalise an axis list against `rank` (negative axes count from the end), checking
 * range and, when `unique`, duplicates. */
ember_status ember_attr_axes(const ember_node *node, const char *name, int64_t *axes,
                             int count, int rank, int unique);

#endif /* EMBER_CORE_ATTR_H */
