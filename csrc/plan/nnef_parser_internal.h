/*
 * csrc/plan/nnef_parser_internal.h — what the NNEF parser's two files share: the parser
 * state and its token helpers (nnef_parser.c) and the expression parser
 * (nnef_parser_expr.c). Private to csrc/plan.
 */
#ifndef EMBER_PLAN_NNEF_PARSER_INTERNAL_H
#define EMBER_PLAN_NNEF_PARSER_INTERNAL_H

#include <stddef.h>

#include "base/error.h"
#include "plan/nnef_lexer.h"
#include "plan/plan.h"

typedef struct parser {
    nnef_lexer lexer;
    nnef_token token; /* the current, not yet consumed token */
    struct ember_nnef_arena *arena;
    int depth;
    ember_status status; /* the first error; once set, parsing unwinds */
} parser;

/* Token helpers and AST building (nnef_parser.c). Once p->status is set they do nothing
 * and return failure / NULL, so callers unwind. */
int ember_nnef_accept_punct(parser *p, const char *punct);
int ember_nnef_at_punct(const parser *p, const char *punct);
int ember_nnef_at_word(const parser *p, const char *word);
char *ember_nnef_copy_text(parser *p, const char *text, size_t length);
int ember_nnef_enter(parser *p);
const char *ember_nnef_expect_identifier(parser *p, const char *what);
int ember_nnef_expect_punct(parser *p, const char *punct, const char *context, const char *name);
int ember_nnef_expect_word(parser *p, const char *word, const char *context);
void ember_nnef_fail_expected(parser *p, const char *format, ...) EMBER_PRINTF(2, 3);
int ember_nnef_failed(const parser *p);
void *ember_nnef_grow(parser *p, void *items, size_t count, size_t *capacity, size_t item_size);
char *ember_nnef_identifier_text(parser *p, const nnef_token *t);
int ember_nnef_is_reserved_word(const nnef_token *t);
int ember_nnef_is_type_name(const nnef_token *t);
void ember_nnef_leave(parser *p);
ember_nnef_expr *ember_nnef_new_expr(parser *p, ember_nnef_expr_kind kind, int line, int column);
void ember_nnef_next_token(parser *p);
int ember_nnef_parse_number_text(parser *p, const nnef_token *t, double *value, int *is_integer);
void *ember_nnef_parser_alloc(parser *p, size_t size);
nnef_token ember_nnef_peek_token(const parser *p, int ahead);
char *ember_nnef_unquote(parser *p, const char *quoted, size_t length);

/* One expression (nnef_parser_expr.c). */
ember_nnef_expr *ember_nnef_parse_expression(parser *p);

#endif /* EMBER_PLAN_NNEF_PARSER_INTERNAL_H */
