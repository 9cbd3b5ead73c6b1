#include "core/attr.h"

#include <math.h>
#include <string.h>

#include "core/op.h"

int ember_expr_number(const ember_nnef_expr *e, double *out_value, int *out_is_integer)
{
    if (e == NULL)
        return 0;
    if (e->kind == EMBER_NNEF_NUMBER) {
        *out_value = e->u.number.value;
        *out_is_integer = e->u.number.is_integer;
        return 1;
    }
    /* NNEF has no literal for them: ember writes the identifiers inf and nan. */
    if (e->kind == EMBER_NNEF_IDENTIFIER &&
        (strcmp(e->u.string, "inf") == 0 || strcmp(e->u.string, "nan") == 0)) {
        *out_value = e->u.string[0] == 'i' ? INFINITY : NAN;
        *out_is_integer = 0;
        return 1;
    }
    /* The parser may keep "-1" as unary minus over 1; fold it here. */
    if (e->kind == EMBER_NNEF_UNARY && strcmp(e->u.unary.op, "-") == 0 &&
        ember_expr_number(e->u.unary.operand, out_value, out_is_integer)) {
        *out_value = -*out_value;
        return 1;
    }
    return 0;
}

/* Integers in attributes must fit comfortably in int64 arithmetic (dims, pads). */
#define ATTR_INT_LIMIT 4611686018427387904.0 /* 2^62 */

/* An integer-valued number. 3.0 is accepted as 3: some writers print every number as a
 * float, and the value, not the spelling, is what matters. */
static int expr_int(const ember_nnef_expr *e, int64_t *out)
{
    double value;
    int is_integer;
    if (!ember_expr_number(e, &value, &is_integer))
        return 0;
    if (value != floor(value) || fabs(value) > ATTR_INT_LIMIT)
        return 0;
    *out = (int64_t)value;
    return 1;
}

/* The readers below share one shape: absent → default, wrong kind → an error naming the
 * node and the attribute, so a bad attribute reads like "node 'n7' (conv): attribute
 * 'stride' must be a list of integers". */
ember_status ember_attr_int(const ember_node *node, const char *name, const ember_nnef_expr *e,
                            int64_t default_value, int64_t *out)
{
    if (e == NULL) {
        *out = default_value;
        return EMBER_OK;
    }
    if (!expr_int(e, out))
        return ember_node_error(node, EMBER_ERROR_INVALID, "attribute '%s' must be an integer",
                                name);
    return EMBER_OK;
}

/* Integers are accepted where a float is expected (alpha = 1): NNEF's grammar does not
 * distinguish them in every writer. */
ember_status ember_attr_float(const ember_node *node, const char *name,
                              const ember_nnef_expr *e, double default_value, double *out)
{
    int is_integer;
    if (e == NULL) {
        *out = default_value;
        return EMBER_OK;
    }
    if (!ember_expr_number(e, out, &is_integer))
        return ember_node_error(node, EMBER_ERROR_INVALID, "attribute '%s' must be a number",
                                name);
    return EMBER_OK;
}

/* Only the logical literals: 0/1 would be accepted by some readers, but NNEF has true and
 * false and accepting more would hide writer bugs. */
ember_status ember_attr_bool(const ember_node *node, const char *name, const ember_nnef_expr *e,
                             int default_value, int *out)
{
    if (e == NULL) {
        *out = default_value;
        return EMBER_OK;
    }
    if (e->kind != EMBER_NNEF_LOGICAL)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "attribute '%s' must be true or false", name);
    *out = e->u.logical != 0;
    return EMBER_OK;
}

/* The returned pointer is into the AST: callers compare it during parse and store an enum,
 * never the pointer. */
ember_status ember_attr_string(const ember_node *node, const char *name,
                               const ember_nnef_expr *e, const char *default_value,
                               const char **out)
{
    if (e == NULL) {
        *out = default_value;
        return EMBER_OK;
    }
    if (e->kind != EMBER_NNEF_STRING)
        return ember_node_error(node, EMBER_ERROR_INVALID, "attribute '%s' must be a string",
                                name);
    *out = e->u.string;
    return EMBER_OK;
}

/* Lists are bounded by the caller's fixed array (usually EMBER_MAX_RANK entries), so the
 * attribute structs stay flat and are freed with one free(). */
/* The shared part of the list readers: absent → count 0; a list of at most `capacity`
 * entries, each read by `item` (what names the expected kind in messages). */
static ember_status attr_list(const ember_node *node, const char *name, const ember_nnef_expr *e,
                              int capacity, const char *what, int *out_count,
                              int (*item)(const ember_nnef_expr *, void *, size_t), void *out)
{
    *out_count = 0;
    if (e == NULL)
        return EMBER_OK;
    if (e->kind != EMBER_NNEF_ARRAY)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "attribute '%s' must be a list of %s", name, what);
    if (e->u.list.count > (size_t)capacity)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "attribute '%s' has %zu entries, at most %d are supported",
                                name, e->u.list.count, capacity);
    for (size_t i = 0; i < e->u.list.count; i++)
        if (!item(e->u.list.items[i], out, i))
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "attribute '%s' must be a list of %s (entry %zu)", name,
                                    what, i);
    *out_count = (int)e->u.list.count;
    return EMBER_OK;
}

static int int_item(const ember_nnef_expr *e, void *out, size_t i)
{
    return expr_int(e, (int64_t *)out + i);
}

static int number_item(const ember_nnef_expr *e, void *out, size_t i)
{
    int is_integer;
    return ember_expr_number(e, (double *)out + i, &is_integer);
}

ember_status ember_attr_int_list(const ember_node *node, const char *name,
                                 const ember_nnef_expr *e, int64_t *out, int capacity,
                                 int *out_count)
{
    return attr_list(node, name, e, capacity, "integers", out_count, int_item, out);
}

ember_status ember_attr_float_list(const ember_node *node, const char *name,
                                   const ember_nnef_expr *e, double *out, int capacity,
                                   int *out_count)
{
    return attr_list(node, name, e, capacity, "numbers", out_count, number_item, out);
}

/* NNEF padding is a list of (before, after) tuples, one per padded dim. Negative padding
 * (cropping) is valid in some frameworks but not something our loops handle, so it is
 * refused here rather than producing wrong windows later. */
ember_status ember_attr_padding(const ember_node *node, const char *name,
                                const ember_nnef_expr *e, int64_t *before, int64_t *after,
                                int capacity, int *out_count)
{
    *out_count = 0;
    if (e == NULL)
        return EMBER_OK;
    if (e->kind != EMBER_NNEF_ARRAY)
        return ember_node_error(node, EMBER_ERROR_INVALID,
                                "attribute '%s' must be a list of (before, after) pairs", name);
    if (e->u.list.count > (size_t)capacity)
        return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                "attribute '%s' has %zu entries, at most %d are supported",
                                name, e->u.list.count, capacity);
    for (size_t i = 0; i < e->u.list.count; i++) {
        const ember_nnef_expr *pair = e->u.list.items[i];
        /* (before, after) in the NNEF spelling; torch-to-nnef writes [before, after] */
        if ((pair->kind != EMBER_NNEF_TUPLE && pair->kind != EMBER_NNEF_ARRAY) ||
            pair->u.list.count != 2 ||
            !expr_int(pair->u.list.items[0], &before[i]) ||
            !expr_int(pair->u.list.items[1], &after[i]))
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "attribute '%s' must be a list of (before, after) integer "
                                    "pairs (entry %zu)", name, i);
        if (before[i] < 0 || after[i] < 0)
            return ember_node_error(node, EMBER_ERROR_UNSUPPORTED,
                                    "attribute '%s': negative padding (%lld, %lld)", name,
                                    (long long)before[i], (long long)after[i]);
    }
    *out_count = (int)e->u.list.count;
    return EMBER_OK;
}

/* Axis lists are normalised in place at load, so ops index dims directly at run time
 * without re-checking. */
ember_status ember_attr_axes(const ember_node *node, const char *name, int64_t *axes,
                             int count, int rank, int unique)
{
    for (int i = 0; i < count; i++) {
        const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank)
            return ember_node_error(node, EMBER_ERROR_INVALID,
                                    "%s: axis %lld is out of range for rank %d", name,
                                    (long long)axes[i], rank);
        axes[i] = axis;
        for (int j = 0; unique && j < i; j++)
            if (axes[j] == axis)
                return ember_node_error(node, EMBER_ERROR_INVALID, "%s: axis %lld repeated",
                                        name, (long long)axis);
    }
    return EMBER_OK;
}
