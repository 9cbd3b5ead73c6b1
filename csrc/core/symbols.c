/*
 * Symbolic dimensions: evaluation, text form and substitution of NNEF expressions over
 * the symbols of a binding. See core/symbols.h.
 */
#include "core/symbols.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int ember_symbol_index(const ember_binding *binding, const char *name)
{
    for (size_t i = 0; binding != NULL && i < binding->count; i++)
        if (strcmp(binding->names[i], name) == 0)
            return (int)i;
    return -1;
}

static int is_min_max(const ember_nnef_expr *e)
{
    return e->kind == EMBER_NNEF_INVOCATION && (strcmp(e->u.invocation.op, "min") == 0 ||
                                                strcmp(e->u.invocation.op, "max") == 0);
}

int ember_expr_has_symbol(const ember_nnef_expr *e, const ember_binding *binding)
{
    if (e == NULL)
        return 0;
    switch (e->kind) {
    case EMBER_NNEF_IDENTIFIER:
        return ember_symbol_index(binding, e->u.string) >= 0;
    case EMBER_NNEF_ARRAY:
    case EMBER_NNEF_TUPLE:
        for (size_t i = 0; i < e->u.list.count; i++)
            if (ember_expr_has_symbol(e->u.list.items[i], binding))
                return 1;
        return 0;
    case EMBER_NNEF_INVOCATION:
        for (size_t i = 0; i < e->u.invocation.arg_count; i++)
            if (ember_expr_has_symbol(e->u.invocation.args[i].value, binding))
                return 1;
        return 0;
    case EMBER_NNEF_UNARY:
        return ember_expr_has_symbol(e->u.unary.operand, binding);
    case EMBER_NNEF_BINARY:
        return ember_expr_has_symbol(e->u.binary.left, binding) ||
               ember_expr_has_symbol(e->u.binary.right, binding);
    case EMBER_NNEF_IF:
        return ember_expr_has_symbol(e->u.if_else.then, binding) ||
               ember_expr_has_symbol(e->u.if_else.cond, binding) ||
               ember_expr_has_symbol(e->u.if_else.otherwise, binding);
    case EMBER_NNEF_SUBSCRIPT:
        return ember_expr_has_symbol(e->u.subscript.base, binding) ||
               ember_expr_has_symbol(e->u.subscript.begin, binding) ||
               ember_expr_has_symbol(e->u.subscript.end, binding);
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- evaluation */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static ember_dim_result binary(const char *op, int64_t a, int64_t b, int64_t *out,
                               const char **problem)
{
    int overflow = 0;
    if (strcmp(op, "+") == 0)
        overflow = __builtin_add_overflow(a, b, out);
    else if (strcmp(op, "-") == 0)
        overflow = __builtin_sub_overflow(a, b, out);
    else if (strcmp(op, "*") == 0)
        overflow = __builtin_mul_overflow(a, b, out);
    else if (strcmp(op, "/") == 0) {
        if (b == 0) {
            *problem = "division by zero";
            return EMBER_DIM_ARITHMETIC;
        }
        if (a == INT64_MIN && b == -1)
            overflow = 1;
        else
            *out = floor_div(a, b);
    } else {
        return EMBER_DIM_NOT_A_DIM;
    }
    if (overflow) {
        *problem = "integer overflow";
        return EMBER_DIM_ARITHMETIC;
    }
    return EMBER_DIM_OK;
}

ember_dim_result ember_dim_eval(const ember_nnef_expr *e, const ember_binding *binding,
                                int64_t *out, const char **problem)
{
    ember_dim_result r;
    int64_t a, b;
    switch (e->kind) {
    case EMBER_NNEF_NUMBER:
        if (!e->u.number.is_integer || fabs(e->u.number.value) > 9.0e18) {
            *problem = "a dimension must be an integer";
            return EMBER_DIM_ARITHMETIC;
        }
        *out = (int64_t)e->u.number.value;
        return EMBER_DIM_OK;
    case EMBER_NNEF_IDENTIFIER: {
        const int i = ember_symbol_index(binding, e->u.string);
        if (i < 0)
            return EMBER_DIM_NOT_A_DIM;
        if (!binding->bound[i]) {
            *problem = binding->names[i];
            return EMBER_DIM_UNBOUND;
        }
        *out = binding->values[i];
        return EMBER_DIM_OK;
    }
    case EMBER_NNEF_UNARY:
        if (strcmp(e->u.unary.op, "-") != 0)
            return EMBER_DIM_NOT_A_DIM;
        if ((r = ember_dim_eval(e->u.unary.operand, binding, &a, problem)) != EMBER_DIM_OK)
            return r;
        return binary("-", 0, a, out, problem);
    case EMBER_NNEF_BINARY:
        if ((r = ember_dim_eval(e->u.binary.left, binding, &a, problem)) != EMBER_DIM_OK ||
            (r = ember_dim_eval(e->u.binary.right, binding, &b, problem)) != EMBER_DIM_OK)
            return r;
        return binary(e->u.binary.op, a, b, out, problem);
    case EMBER_NNEF_INVOCATION: {
        if (!is_min_max(e) || e->u.invocation.arg_count == 0)
            return EMBER_DIM_NOT_A_DIM;
        const int is_min = e->u.invocation.op[1] == 'i';
        for (size_t i = 0; i < e->u.invocation.arg_count; i++) {
            const ember_nnef_arg *arg = &e->u.invocation.args[i];
            if (arg->name != NULL)
                return EMBER_DIM_NOT_A_DIM;
            if ((r = ember_dim_eval(arg->value, binding, &a, problem)) != EMBER_DIM_OK)
                return r;
            if (i == 0 || (is_min ? a < *out : a > *out))
                *out = a;
        }
        return EMBER_DIM_OK;
    }
    default:
        return EMBER_DIM_NOT_A_DIM;
    }
}

/* ---------------------------------------------------------------- text */

typedef struct text {
    char *buf;
    size_t capacity, used;
} text;

static void put(text *t, const char *s)
{
    const size_t n = strlen(s);
    if (t->used + n + 1 > t->capacity) {
        if (t->capacity >= 4)
            memcpy(t->buf + t->capacity - 4, "...", 4);
        t->used = t->capacity; /* full: everything after is dropped */
        return;
    }
    memcpy(t->buf + t->used, s, n + 1);
    t->used += n;
}

/* Binding strength, to parenthesise only where needed. */
static int precedence(const ember_nnef_expr *e)
{
    if (e->kind != EMBER_NNEF_BINARY)
        return 3;
    return (e->u.binary.op[0] == '+' || e->u.binary.op[0] == '-') ? 1 : 2;
}

static void format(text *t, const ember_nnef_expr *e)
{
    char number[32];
    switch (e->kind) {
    case EMBER_NNEF_NUMBER:
        snprintf(number, sizeof number, "%.17g", e->u.number.value);
        put(t, number);
        return;
    case EMBER_NNEF_IDENTIFIER:
        put(t, e->u.string);
        return;
    case EMBER_NNEF_UNARY:
        put(t, e->u.unary.op);
        if (precedence(e->u.unary.operand) < 3)
            put(t, "(");
        format(t, e->u.unary.operand);
        if (precedence(e->u.unary.operand) < 3)
            put(t, ")");
        return;
    case EMBER_NNEF_BINARY: {
        const int p = precedence(e);
        const int left = precedence(e->u.binary.left) < p;
        /* a - (b + c), a / (b * c): the right operand of a non-commutative op at the
         * same level needs its parentheses too. */
        const int right = precedence(e->u.binary.right) < p ||
                          (precedence(e->u.binary.right) == p && e->u.binary.op[0] != '+' &&
                           e->u.binary.op[0] != '*');
        put(t, left ? "(" : "");
        format(t, e->u.binary.left);
        put(t, left ? ")" : "");
        put(t, e->u.binary.op);
        put(t, right ? "(" : "");
        format(t, e->u.binary.right);
        put(t, right ? ")" : "");
        return;
    }
    case EMBER_NNEF_INVOCATION:
        put(t, e->u.invocation.op);
        put(t, "(");
        for (size_t i = 0; i < e->u.invocation.arg_count; i++) {
            put(t, i ? ", " : "");
            format(t, e->u.invocation.args[i].value);
        }
        put(t, ")");
        return;
    default:
        put(t, "?");
        return;
    }
}

const char *ember_expr_format(const ember_nnef_expr *e, char *buf, size_t capacity)
{
    text t = {buf, capacity, 0};
    if (capacity > 0)
        buf[0] = '\0';
    format(&t, e);
    return buf;
}

/* ---------------------------------------------------------------- substitution */

typedef struct pool_block {
    struct pool_block *next;
    max_align_t align[]; /* the allocation follows */
} pool_block;

struct ember_expr_pool {
    pool_block *head;
};

ember_expr_pool *ember_expr_pool_new(void)
{
    return calloc(1, sizeof(ember_expr_pool));
}

void ember_expr_pool_free(ember_expr_pool *pool)
{
    if (pool == NULL)
        return;
    for (pool_block *block = pool->head, *next; block != NULL; block = next) {
        next = block->next;
        free(block);
    }
    free(pool);
}

void *ember_expr_pool_alloc(ember_expr_pool *pool, size_t size)
{
    pool_block *block = calloc(1, sizeof(pool_block) + size);
    if (block == NULL)
        return NULL;
    block->next = pool->head;
    pool->head = block;
    return block->align;
}

static ember_nnef_expr *new_number(ember_expr_pool *pool, const ember_nnef_expr *like,
                                   int64_t value)
{
    ember_nnef_expr *n = ember_expr_pool_alloc(pool, sizeof *n);
    if (n != NULL) {
        n->kind = EMBER_NNEF_NUMBER;
        n->line = like->line;
        n->column = like->column;
        n->u.number.value = (double)value;
        n->u.number.is_integer = 1;
    }
    return n;
}

static ember_nnef_expr *copy_node(ember_expr_pool *pool, const ember_nnef_expr *e)
{
    ember_nnef_expr *n = ember_expr_pool_alloc(pool, sizeof *n);
    if (n != NULL)
        *n = *e;
    return n;
}

static ember_nnef_expr *oom(void)
{
    ember_error_set(EMBER_ERROR_MEMORY, "out of memory binding symbols");
    return NULL;
}

/* Substituted items of a list (array, tuple), into a new item array. */
static ember_nnef_expr *substitute_list(const ember_nnef_expr *e, const ember_binding *binding,
                                        ember_expr_pool *pool)
{
    ember_nnef_expr *n = copy_node(pool, e);
    ember_nnef_expr **items = ember_expr_pool_alloc(pool, (e->u.list.count + 1) * sizeof *items);
    if (n == NULL || items == NULL)
        return oom();
    for (size_t i = 0; i < e->u.list.count; i++)
        if ((items[i] = ember_expr_substitute(e->u.list.items[i], binding, pool, 1)) == NULL)
            return NULL;
    n->u.list.items = items;
    return n;
}

static ember_nnef_expr *substitute_invocation(const ember_nnef_expr *e,
                                              const ember_binding *binding,
                                              ember_expr_pool *pool)
{
    ember_nnef_expr *n = copy_node(pool, e);
    ember_nnef_arg *args = ember_expr_pool_alloc(pool, (e->u.invocation.arg_count + 1) * sizeof *args);
    if (n == NULL || args == NULL)
        return oom();
    for (size_t i = 0; i < e->u.invocation.arg_count; i++) {
        args[i].name = e->u.invocation.args[i].name;
        args[i].value = ember_expr_substitute(e->u.invocation.args[i].value, binding, pool, 1);
        if (args[i].value == NULL)
            return NULL;
    }
    n->u.invocation.args = args;
    return n;
}

ember_nnef_expr *ember_expr_substitute(const ember_nnef_expr *e, const ember_binding *binding,
                                       ember_expr_pool *pool, int nested)
{
    if (!ember_expr_has_symbol(e, binding))
        return (ember_nnef_expr *)e; /* shared: the pool never frees it */
    const int arithmetic = e->kind == EMBER_NNEF_IDENTIFIER || e->kind == EMBER_NNEF_UNARY ||
                           e->kind == EMBER_NNEF_BINARY || (nested && is_min_max(e));
    if (arithmetic) {
        int64_t value;
        const char *problem = "";
        char expression[128];
        switch (ember_dim_eval(e, binding, &value, &problem)) {
        case EMBER_DIM_OK: {
            ember_nnef_expr *number = new_number(pool, e, value);
            return number != NULL ? number : oom();
        }
        case EMBER_DIM_UNBOUND:
            ember_error_set(EMBER_ERROR_INVALID, "line %d: symbol '%s' has no value", e->line,
                            problem);
            return NULL;
        case EMBER_DIM_ARITHMETIC:
            ember_error_set(EMBER_ERROR_INVALID, "line %d: %s in %s", e->line, problem,
                            ember_expr_format(e, expression, sizeof expression));
            return NULL;
        case EMBER_DIM_NOT_A_DIM:
            break; /* e.g. a tensor expression mixing symbols: substitute the parts */
        }
    }
    switch (e->kind) {
    case EMBER_NNEF_ARRAY:
    case EMBER_NNEF_TUPLE:
        return substitute_list(e, binding, pool);
    case EMBER_NNEF_INVOCATION:
        return substitute_invocation(e, binding, pool);
    default:
        ember_error_set(EMBER_ERROR_UNSUPPORTED, "line %d: symbols are not supported in this "
                        "kind of expression", e->line);
        return NULL;
    }
}
