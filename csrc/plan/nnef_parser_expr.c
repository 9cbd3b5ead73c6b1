/*
 * csrc/plan/nnef_parser_expr.c — NNEF expressions, for nnef_parser.c.
 *
 * Loosest first (binary operators associate to the left except '^'):
 *
 *   x if c else y   (also the prefix form: if c then x else y)
 *   ||   &&   in   == != < <= > >=   + -   * /   unary - ! +   ^   x[i] x[i:j]
 *
 * so -x^2 is -(x^2) and 2^-1 is 2^(-1). A '-' written before a number literal is
 * folded into a negative NUMBER (axis = -1), since that is how every reader wants it.
 * Nesting goes through ember_nnef_enter, which bounds it.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "plan/nnef_parser_internal.h"

static ember_nnef_expr *parse_operand_chain(parser *p, int min_precedence);
static ember_nnef_expr *parse_unary(parser *p);

typedef struct binary_operator {
    const char *text;
    int precedence;
} binary_operator;

enum { PREC_OR = 1, PREC_AND, PREC_IN, PREC_COMPARE, PREC_ADD, PREC_MUL, PREC_POWER };

static const binary_operator binary_operators[] = {
    {"||", PREC_OR}, {"&&", PREC_AND}, {"in", PREC_IN},
    {"==", PREC_COMPARE}, {"!=", PREC_COMPARE}, {"<", PREC_COMPARE}, {"<=", PREC_COMPARE},
    {">", PREC_COMPARE}, {">=", PREC_COMPARE},
    {"+", PREC_ADD}, {"-", PREC_ADD}, {"*", PREC_MUL}, {"/", PREC_MUL}, {"^", PREC_POWER},
};

/* The binary operator at the current token, or NULL. */
static const binary_operator *current_binary_operator(const parser *p) {
    for (size_t i = 0; i < sizeof binary_operators / sizeof *binary_operators; i++) {
        const binary_operator *op = &binary_operators[i];
        if (ember_nnef_at_punct(p, op->text) || ember_nnef_at_word(p, op->text))
            return op;
    }
    return NULL;
}

static ember_nnef_expr *parse_literal(parser *p) {
    const nnef_token t = p->token;
    ember_nnef_expr *e;
    if (t.kind == NNEF_TOKEN_NUMBER) {
        e = ember_nnef_new_expr(p, EMBER_NNEF_NUMBER, t.line, t.column);
        if (e && !ember_nnef_parse_number_text(p, &t, &e->u.number.value, &e->u.number.is_integer))
            return NULL;
    } else if (t.kind == NNEF_TOKEN_STRING) {
        e = ember_nnef_new_expr(p, EMBER_NNEF_STRING, t.line, t.column);
        if (e)
            e->u.string = ember_nnef_unquote(p, t.text, t.length);
    } else { /* true / false */
        e = ember_nnef_new_expr(p, EMBER_NNEF_LOGICAL, t.line, t.column);
        if (e)
            e->u.logical = ember_nnef_at_word(p, "true");
    }
    ember_nnef_next_token(p);
    return ember_nnef_failed(p) ? NULL : e;
}

/* Comma-separated expressions up to `close`; `context` completes "expected ',' or ']' …". */
static ember_nnef_expr **parse_expression_list(parser *p, const char *close, const char *context,
                                               size_t *count) {
    ember_nnef_expr **items = NULL;
    size_t capacity = 0;
    *count = 0;
    if (ember_nnef_accept_punct(p, close))
        return ember_nnef_parser_alloc(p, 1); /* empty, but not NULL (NULL means failure) */
    do {
        ember_nnef_expr *item = ember_nnef_parse_expression(p);
        if (!item || !(items = ember_nnef_grow(p, items, *count, &capacity, sizeof *items)))
            return NULL;
        items[(*count)++] = item;
    } while (ember_nnef_accept_punct(p, ","));
    if (!ember_nnef_accept_punct(p, close)) {
        ember_nnef_fail_expected(p, "',' or '%s' %s", close, context);
        return NULL;
    }
    return items;
}

/* One "name in iterable" of a comprehension. The iterable cannot hold an unparenthesised
 * `x if c else y`, which would swallow the comprehension's own `if`. */
static int parse_loop_var(parser *p, ember_nnef_loop_var *var) {
    var->name = ember_nnef_expect_identifier(p, "a loop variable after 'for'");
    if (!var->name || !ember_nnef_expect_word(p, "in", "after the loop variable"))
        return 0;
    if (!ember_nnef_enter(p))
        return 0;
    var->iterable = parse_operand_chain(p, PREC_OR);
    ember_nnef_leave(p);
    return var->iterable != NULL;
}

/* After "[for": loop variables, an optional condition, the yielded expression. */
static ember_nnef_expr *parse_comprehension(parser *p, int line, int column) {
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_COMPREHENSION, line, column);
    size_t capacity = 0;
    if (!e)
        return NULL;
    do {
        ember_nnef_loop_var *vars = ember_nnef_grow(p, e->u.comprehension.vars, e->u.comprehension.var_count,
                                         &capacity, sizeof *vars);
        if (!vars)
            return NULL;
        e->u.comprehension.vars = vars;
        if (!parse_loop_var(p, &vars[e->u.comprehension.var_count++]))
            return NULL;
    } while (ember_nnef_accept_punct(p, ","));
    if (ember_nnef_at_word(p, "if")) {
        ember_nnef_next_token(p);
        if (!(e->u.comprehension.condition = ember_nnef_parse_expression(p)))
            return NULL;
    }
    if (!ember_nnef_expect_word(p, "yield", "in comprehension") || !(e->u.comprehension.yield = ember_nnef_parse_expression(p)))
        return NULL;
    return ember_nnef_expect_punct(p, "]", "after comprehension", NULL) ? e : NULL;
}

static ember_nnef_expr *parse_array(parser *p) {
    int line = p->token.line, column = p->token.column;
    ember_nnef_next_token(p); /* [ */
    if (ember_nnef_at_word(p, "for")) {
        ember_nnef_next_token(p);
        return parse_comprehension(p, line, column);
    }
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_ARRAY, line, column);
    if (!e)
        return NULL;
    e->u.list.items = parse_expression_list(p, "]", "after array items", &e->u.list.count);
    return e->u.list.items ? e : NULL;
}

/* "(x)" is x; "(x, y, …)" is a tuple. */
static ember_nnef_expr *parse_parenthesized(parser *p) {
    int line = p->token.line, column = p->token.column;
    ember_nnef_next_token(p); /* ( */
    ember_nnef_expr *first = ember_nnef_parse_expression(p);
    if (!first)
        return NULL;
    if (ember_nnef_accept_punct(p, ")"))
        return first;
    if (!ember_nnef_expect_punct(p, ",", "or ')' in parentheses", NULL))
        return NULL;
    ember_nnef_expr *tuple = ember_nnef_new_expr(p, EMBER_NNEF_TUPLE, line, column);
    size_t rest_count;
    ember_nnef_expr **rest = parse_expression_list(p, ")", "after tuple items", &rest_count);
    if (!tuple || !rest || !(tuple->u.list.items = ember_nnef_parser_alloc(p, (rest_count + 1) * sizeof *rest)))
        return NULL;
    tuple->u.list.items[0] = first;
    memcpy(tuple->u.list.items + 1, rest, rest_count * sizeof *rest);
    tuple->u.list.count = rest_count + 1;
    return tuple;
}

/* At NAME: is this "NAME<type>(" — a generic invocation rather than a comparison? */
static int at_generic_invocation(const parser *p) {
    nnef_token open = ember_nnef_peek_token(p, 1), type = ember_nnef_peek_token(p, 2);
    nnef_token close = ember_nnef_peek_token(p, 3), paren = ember_nnef_peek_token(p, 4);
    return ember_nnef_token_is_punct(&open, "<") && ember_nnef_is_type_name(&type) && ember_nnef_token_is_punct(&close, ">") &&
           ember_nnef_token_is_punct(&paren, "(");
}

/* One argument: "name = value" or a positional value. */
static int parse_argument(parser *p, ember_nnef_arg *arg, const char *op, int *seen_named) {
    nnef_token after = ember_nnef_peek_token(p, 1);
    if (p->token.kind == NNEF_TOKEN_IDENTIFIER && ember_nnef_token_is_punct(&after, "=")) {
        arg->name = ember_nnef_identifier_text(p, &p->token);
        ember_nnef_next_token(p); /* name */
        ember_nnef_next_token(p); /* = */
        *seen_named = 1;
    } else if (*seen_named) {
        ember_nnef_fail_expected(p, "a named argument (name = value) of '%s' after named ones", op);
        return 0;
    }
    arg->value = ember_nnef_parse_expression(p);
    return arg->value != NULL;
}

/* NAME ['<' type '>'] '(' args ')' — at NAME. */
static ember_nnef_expr *parse_invocation(parser *p, int generic) {
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_INVOCATION, p->token.line, p->token.column);
    if (!e || !(e->u.invocation.op = ember_nnef_identifier_text(p, &p->token)))
        return NULL;
    const char *op = e->u.invocation.op;
    ember_nnef_next_token(p);
    if (generic) {
        ember_nnef_next_token(p); /* < */
        e->u.invocation.generic_type = ember_nnef_copy_text(p, p->token.text, p->token.length);
        ember_nnef_next_token(p); /* type */
        ember_nnef_next_token(p); /* > */
    }
    ember_nnef_next_token(p); /* ( */
    if (ember_nnef_accept_punct(p, ")"))
        return ember_nnef_failed(p) ? NULL : e;
    size_t capacity = 0;
    int seen_named = 0;
    do {
        ember_nnef_arg *args = ember_nnef_grow(p, e->u.invocation.args, e->u.invocation.arg_count, &capacity, sizeof *args);
        if (!args)
            return NULL;
        e->u.invocation.args = args;
        if (!parse_argument(p, &args[e->u.invocation.arg_count++], op, &seen_named))
            return NULL;
    } while (ember_nnef_accept_punct(p, ","));
    return ember_nnef_expect_punct(p, ")", "after arguments of", op) ? e : NULL;
}

/* The prefix conditional "if c then x else y", after 'if'. */
static ember_nnef_expr *parse_prefix_if(parser *p, int line, int column) {
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_IF, line, column);
    if (!e || !(e->u.if_else.cond = ember_nnef_parse_expression(p)) || !ember_nnef_expect_word(p, "then", "after the condition") ||
        !(e->u.if_else.then = ember_nnef_parse_expression(p)) || !ember_nnef_expect_word(p, "else", "in conditional") ||
        !(e->u.if_else.otherwise = ember_nnef_parse_expression(p)))
        return NULL;
    return e;
}

static ember_nnef_expr *parse_name(parser *p) {
    int line = p->token.line, column = p->token.column;
    if (ember_nnef_at_word(p, "true") || ember_nnef_at_word(p, "false"))
        return parse_literal(p);
    if (ember_nnef_at_word(p, "if")) {
        ember_nnef_next_token(p);
        return parse_prefix_if(p, line, column);
    }
    if (ember_nnef_is_reserved_word(&p->token)) {
        ember_nnef_fail_expected(p, "an expression");
        return NULL;
    }
    nnef_token after = ember_nnef_peek_token(p, 1);
    if (ember_nnef_token_is_punct(&after, "("))
        return parse_invocation(p, 0);
    if (at_generic_invocation(p))
        return parse_invocation(p, 1);
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_IDENTIFIER, line, column);
    if (!e || !(e->u.string = ember_nnef_identifier_text(p, &p->token)))
        return NULL;
    ember_nnef_next_token(p);
    return ember_nnef_failed(p) ? NULL : e;
}

static ember_nnef_expr *parse_primary(parser *p) {
    if (ember_nnef_failed(p))
        return NULL;
    switch (p->token.kind) {
    case NNEF_TOKEN_NUMBER:
    case NNEF_TOKEN_STRING:
        return parse_literal(p);
    case NNEF_TOKEN_IDENTIFIER:
        return parse_name(p);
    default:
        break;
    }
    if (ember_nnef_at_punct(p, "["))
        return parse_array(p);
    if (ember_nnef_at_punct(p, "("))
        return parse_parenthesized(p);
    ember_nnef_fail_expected(p, "an expression");
    return NULL;
}

/* After '[': an index "i", or a range "i:j" where either end may be missing. */
static ember_nnef_expr *parse_subscript(parser *p, ember_nnef_expr *base) {
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_SUBSCRIPT, base->line, base->column);
    if (!e)
        return NULL;
    e->u.subscript.base = base;
    ember_nnef_next_token(p); /* [ */
    if (!ember_nnef_at_punct(p, ":") && !(e->u.subscript.begin = ember_nnef_parse_expression(p)))
        return NULL;
    if (ember_nnef_accept_punct(p, ":")) {
        e->u.subscript.is_range = 1;
        if (!ember_nnef_at_punct(p, "]") && !(e->u.subscript.end = ember_nnef_parse_expression(p)))
            return NULL;
    }
    return ember_nnef_expect_punct(p, "]", "after subscript", NULL) ? e : NULL;
}

static ember_nnef_expr *parse_postfix(parser *p) {
    ember_nnef_expr *e = parse_primary(p);
    while (e && ember_nnef_at_punct(p, "["))
        e = parse_subscript(p, e);
    return e;
}

/* Unary operators bind looser than '^' (-x^2 is -(x^2)) and tighter than the rest. */
static ember_nnef_expr *parse_unary(parser *p) {
    if (!ember_nnef_at_punct(p, "-") && !ember_nnef_at_punct(p, "!") && !ember_nnef_at_punct(p, "+"))
        return parse_postfix(p);
    if (!ember_nnef_enter(p))
        return NULL;
    nnef_token op = p->token;
    ember_nnef_next_token(p);
    ember_nnef_expr *operand = parse_operand_chain(p, PREC_POWER);
    ember_nnef_leave(p);
    if (!operand || ember_nnef_token_is_punct(&op, "+"))
        return operand;
    if (ember_nnef_token_is_punct(&op, "-") && operand->kind == EMBER_NNEF_NUMBER) {
        operand->u.number.value = -operand->u.number.value;
        operand->line = op.line;
        operand->column = op.column;
        return operand;
    }
    ember_nnef_expr *e = ember_nnef_new_expr(p, EMBER_NNEF_UNARY, op.line, op.column);
    if (e) {
        e->u.unary.op = ember_nnef_token_is_punct(&op, "-") ? "-" : "!";
        e->u.unary.operand = operand;
    }
    return e;
}

/* Precedence climbing over binary operators of at least `min_precedence`. */
static ember_nnef_expr *parse_operand_chain(parser *p, int min_precedence) {
    ember_nnef_expr *left = parse_unary(p);
    const binary_operator *op;
    while (left && (op = current_binary_operator(p)) != NULL && op->precedence >= min_precedence) {
        int line = p->token.line, column = p->token.column;
        ember_nnef_next_token(p);
        /* '^' is right-associative: its right side may hold another '^' */
        int right_min = op->precedence == PREC_POWER ? PREC_POWER : op->precedence + 1;
        if (!ember_nnef_enter(p))
            return NULL;
        ember_nnef_expr *right = parse_operand_chain(p, right_min);
        ember_nnef_leave(p);
        ember_nnef_expr *e = right ? ember_nnef_new_expr(p, EMBER_NNEF_BINARY, line, column) : NULL;
        if (!e)
            return NULL;
        e->u.binary.op = op->text;
        e->u.binary.left = left;
        e->u.binary.right = right;
        left = e;
    }
    return ember_nnef_failed(p) ? NULL : left;
}

/* A full expression: operators, then an optional "if c else y" (right-associative). */
ember_nnef_expr *ember_nnef_parse_expression(parser *p) {
    if (!ember_nnef_enter(p))
        return NULL;
    ember_nnef_expr *e = parse_operand_chain(p, PREC_OR);
    if (e && ember_nnef_at_word(p, "if")) {
        ember_nnef_expr *choice = ember_nnef_new_expr(p, EMBER_NNEF_IF, e->line, e->column);
        ember_nnef_next_token(p);
        if (choice && (choice->u.if_else.cond = parse_operand_chain(p, PREC_OR)) &&
            ember_nnef_expect_word(p, "else", "after the condition of 'if'") &&
            (choice->u.if_else.otherwise = ember_nnef_parse_expression(p)) != NULL) {
            choice->u.if_else.then = e;
            e = choice;
        } else {
            e = NULL;
        }
    }
    ember_nnef_leave(p);
    return ember_nnef_failed(p) ? NULL : e;
}
