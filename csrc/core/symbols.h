/*
 * csrc/core/symbols.h — symbolic dimensions: named integers (`extension tract_symbol S;`)
 * that a plan's shapes and attributes may use (`[1, S, 40]`, `[S + 2]`, `2 * S`,
 * `(S - 3) / 2 + 1`, `min(S, 4)`), bound to values from the input shapes of each run.
 *
 * A model whose graph mentions symbols is kept as its AST (core/model.c) and built
 * concretely once per binding: every expression is substituted (symbols replaced by
 * their values, integer arithmetic folded) before the ordinary builder runs, so ops only
 * ever see numbers. Arithmetic is on int64 with overflow checks; `/` is floor division,
 * as the cook's dims (cook/dims.py) define it.
 */
#ifndef EMBER_CORE_SYMBOLS_H
#define EMBER_CORE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "plan/plan.h"

/* The most symbols a plan may declare. */
#define EMBER_MAX_SYMBOLS 32

/* Values of a model's symbols (names owned by the model); bound[i] says which are known. */
typedef struct ember_binding {
    size_t count;
    const char *const *names;
    int64_t values[EMBER_MAX_SYMBOLS];
    uint8_t bound[EMBER_MAX_SYMBOLS];
} ember_binding;

/* Index of symbol `name`, or -1. */
int ember_symbol_index(const ember_binding *binding, const char *name);

/* Whether `e` mentions one of the binding's symbols (bound or not). */
int ember_expr_has_symbol(const ember_nnef_expr *e, const ember_binding *binding);

/* Outcome of evaluating a dimension expression. */
typedef enum ember_dim_result {
    EMBER_DIM_OK = 0,
    EMBER_DIM_UNBOUND,     /* a symbol without a value: *problem is its name */
    EMBER_DIM_ARITHMETIC,  /* overflow, division by zero, or a non-integer: *problem says */
    EMBER_DIM_NOT_A_DIM    /* not an integer expression (a string, a tensor name, …) */
} ember_dim_result;

/* Evaluate an integer expression of numbers, symbols, + - * / (floor), unary -, and
 * min(…) / max(…). */
ember_dim_result ember_dim_eval(const ember_nnef_expr *e, const ember_binding *binding,
                                int64_t *out, const char **problem);

/* The expression as text ("S+2", "(S-3)/2+1"); always NUL-terminated, truncated if long. */
const char *ember_expr_format(const ember_nnef_expr *e, char *buf, size_t capacity);

/* Memory for substituted expressions, freed at once. */
typedef struct ember_expr_pool ember_expr_pool;
ember_expr_pool *ember_expr_pool_new(void);
void ember_expr_pool_free(ember_expr_pool *pool);
/* Zeroed memory that lives until the pool is freed; NULL when out of memory. */
void *ember_expr_pool_alloc(ember_expr_pool *pool, size_t size);

/* `e` with every bound symbol replaced by its value and every integer sub-expression that
 * became constant folded to a number. Sub-trees without symbols are shared with `e`, not
 * copied. `nested` is 0 for an assignment's right-hand side: an invocation there is an
 * operation, never folded as min/max of dims. NULL when out of memory or arithmetic
 * fails (the message is set). */
ember_nnef_expr *ember_expr_substitute(const ember_nnef_expr *e, const ember_binding *binding,
                                       ember_expr_pool *pool, int nested);

#endif /* EMBER_CORE_SYMBOLS_H */
