/*
 * csrc/plan/nnef_parser.c — NNEF 1.0 text to the AST of plan.h.
 *
 * A recursive-descent parser over the whole NNEF 1.0 grammar:
 *
 *   document   := 'version' NUMBER ';' ( extension | fragment )* graph END
 *   extension  := 'extension' word (','? word)* ';'
 *   fragment   := 'fragment' NAME ['<' '?' ['=' type-name] '>']
 *                 '(' [param (',' param)*] ')' '->' '(' [result (',' result)*] ')'
 *                 ( '{' assignment* '}' | ';' )
 *   param      := NAME ':' type ['=' expr]          result := NAME ':' type
 *   type       := ( type-name | 'tensor' '<' [type-name] '>' | '(' type (',' type)* ')' ) ('[' ']')*
 *   graph      := 'graph' NAME '(' [NAME (',' NAME)*] ')' '->' '(' [NAME (',' NAME)*] ')'
 *                 '{' assignment* '}'
 *   assignment := lvalue (',' lvalue)* '=' expr (',' expr)* ';'
 *
 * Expressions are parsed in nnef_parser_expr.c; this file has the parser's state and
 * token helpers (nnef_parser_internal.h), assignments, types and declarations.
 *
 * Every node and string lives in one arena freed by ember_nnef_document_free. The
 * first error stops the parse; it names the origin, line and column, what was
 * expected and what was found. Nesting is bounded by MAX_DEPTH, so hostile input
 * cannot exhaust the stack.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plan/nnef_lexer.h"
#include "plan/nnef_parser_internal.h"
#include "plan/plan.h"

enum {
    MAX_DEPTH = 256,
    MAX_NUMBER_LENGTH = 64
};

/* ---------------------------------------------------------------- parser state */


int ember_nnef_failed(const parser *p) { return p->status != EMBER_OK; }

void *ember_nnef_parser_alloc(parser *p, size_t size) {
    void *memory = ember_nnef_arena_alloc(p->arena, size);
    if (!memory && !ember_nnef_failed(p))
        p->status = ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory parsing NNEF",
                                    p->lexer.origin);
    return memory;
}

/* Room for one more item in an arena array; growing copies into a block twice the
 * size (the old one stays in the arena until the end: at most doubles the memory). */
void *ember_nnef_grow(parser *p, void *items, size_t count, size_t *capacity, size_t item_size) {
    if (count < *capacity)
        return items;
    size_t new_capacity = *capacity ? *capacity * 2 : 4;
    if (new_capacity > SIZE_MAX / item_size)
        return ember_nnef_parser_alloc(p, SIZE_MAX);
    void *grown = ember_nnef_parser_alloc(p, new_capacity * item_size);
    if (grown && count)
        memcpy(grown, items, count * item_size);
    *capacity = new_capacity;
    return grown;
}

void ember_nnef_next_token(parser *p) {
    if (ember_nnef_failed(p))
        return;
    p->status = ember_nnef_lexer_next(&p->lexer, &p->token);
}

/* The token `ahead` tokens after the current one (1 = the next), without consuming. */
nnef_token ember_nnef_peek_token(const parser *p, int ahead) {
    nnef_lexer copy = p->lexer;
    nnef_token token = p->token;
    for (int i = 0; i < ahead; i++)
        if (ember_nnef_lexer_next(&copy, &token) != EMBER_OK) {
            token.kind = NNEF_TOKEN_END;
            break;
        }
    return token;
}

int ember_nnef_at_punct(const parser *p, const char *punct) { return ember_nnef_token_is_punct(&p->token, punct); }
int ember_nnef_at_word(const parser *p, const char *word) { return ember_nnef_token_is_word(&p->token, word); }

/* Consume the punctuation if it is next. */
int ember_nnef_accept_punct(parser *p, const char *punct) {
    if (ember_nnef_failed(p) || !ember_nnef_at_punct(p, punct))
        return 0;
    ember_nnef_next_token(p);
    return 1;
}

/* "<origin>:<line>:<col>: expected <what>, found <token>" at the current token. */
void ember_nnef_fail_expected(parser *p, const char *format, ...) {
    if (ember_nnef_failed(p))
        return;
    char what[256], found[64];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    const nnef_token *t = &p->token;
    int shown = t->length > 40 ? 40 : (int)t->length;
    if (t->kind == NNEF_TOKEN_END)
        snprintf(found, sizeof found, "end of file");
    else if (t->kind == NNEF_TOKEN_STRING)
        snprintf(found, sizeof found, "string %.*s%s", shown, t->text, t->length > 40 ? "…" : "");
    else
        snprintf(found, sizeof found, "'%.*s%s'", shown, t->text, t->length > 40 ? "…" : "");
    p->status = ember_error_set(EMBER_ERROR_FORMAT, "%s:%d:%d: expected %s, found %s", p->lexer.origin,
                                t->line, t->column, what, found);
}

static void fail_at(parser *p, int line, int column, const char *what) {
    if (!ember_nnef_failed(p))
        p->status = ember_error_set(EMBER_ERROR_FORMAT, "%s:%d:%d: %s", p->lexer.origin, line, column, what);
}

/* Consume `punct`, or fail with "expected '<punct>' <context>". */
int ember_nnef_expect_punct(parser *p, const char *punct, const char *context, const char *name) {
    if (ember_nnef_accept_punct(p, punct))
        return 1;
    if (name)
        ember_nnef_fail_expected(p, "'%s' %s '%s'", punct, context, name);
    else
        ember_nnef_fail_expected(p, "'%s' %s", punct, context);
    return 0;
}

int ember_nnef_expect_word(parser *p, const char *word, const char *context) {
    if (!ember_nnef_failed(p) && ember_nnef_at_word(p, word)) {
        ember_nnef_next_token(p);
        return 1;
    }
    ember_nnef_fail_expected(p, "'%s' %s", word, context);
    return 0;
}

/* Bound recursion: every nested expression, lvalue and type passes through here. */
int ember_nnef_enter(parser *p) {
    if (ember_nnef_failed(p))
        return 0;
    if (p->depth >= MAX_DEPTH) {
        fail_at(p, p->token.line, p->token.column, "nesting is too deep (more than 256 levels)");
        return 0;
    }
    p->depth++;
    return 1;
}

void ember_nnef_leave(parser *p) { p->depth--; }

/* ---------------------------------------------------------------- tokens to values */

char *ember_nnef_copy_text(parser *p, const char *text, size_t length) {
    char *copy = ember_nnef_parser_alloc(p, length + 1);
    if (copy)
        memcpy(copy, text, length); /* arena memory is zeroed: already terminated */
    return copy;
}

static char escaped_char(char c) {
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': return '\0';
    default: return c; /* \\ \' \" and anything else stand for themselves */
    }
}

/* The contents of a quoted literal ("…" or '…', the lexer checked the closing quote). */
char *ember_nnef_unquote(parser *p, const char *quoted, size_t length) {
    char *text = ember_nnef_parser_alloc(p, length);
    if (!text)
        return NULL;
    size_t n = 0;
    for (size_t i = 1; i + 1 < length; i++)
        text[n++] = quoted[i] == '\\' && i + 2 < length ? escaped_char(quoted[++i]) : quoted[i];
    return text;
}

/* An identifier token as a string: plain, or tract's i"quoted" form. */
char *ember_nnef_identifier_text(parser *p, const nnef_token *t) {
    if (t->length >= 3 && t->text[0] == 'i' && (t->text[1] == '"' || t->text[1] == '\''))
        return ember_nnef_unquote(p, t->text + 1, t->length - 1);
    return ember_nnef_copy_text(p, t->text, t->length);
}

/* Consume an identifier and return its text, or fail saying what it should name. */
const char *ember_nnef_expect_identifier(parser *p, const char *what) {
    if (ember_nnef_failed(p))
        return NULL;
    if (p->token.kind != NNEF_TOKEN_IDENTIFIER) {
        ember_nnef_fail_expected(p, "%s", what);
        return NULL;
    }
    char *name = ember_nnef_identifier_text(p, &p->token);
    ember_nnef_next_token(p);
    return name;
}

int ember_nnef_parse_number_text(parser *p, const nnef_token *t, double *value, int *is_integer) {
    char buffer[MAX_NUMBER_LENGTH];
    if (t->length >= sizeof buffer) {
        fail_at(p, t->line, t->column, "number literal is too long");
        return 0;
    }
    memcpy(buffer, t->text, t->length);
    buffer[t->length] = '\0';
    errno = 0;
    *value = strtod(buffer, NULL);
    if (isinf(*value)) {
        fail_at(p, t->line, t->column, "number literal is out of range");
        return 0;
    }
    *is_integer = strpbrk(buffer, ".eE") == NULL;
    return 1;
}

/* ---------------------------------------------------------------- AST nodes, token classes */

ember_nnef_expr *ember_nnef_new_expr(parser *p, ember_nnef_expr_kind kind, int line, int column) {
    ember_nnef_expr *e = ember_nnef_parser_alloc(p, sizeof *e);
    if (e) {
        e->kind = kind;
        e->line = line;
        e->column = column;
    }
    return e;
}

int ember_nnef_is_type_name(const nnef_token *t) {
    return ember_nnef_token_is_word(t, "scalar") || ember_nnef_token_is_word(t, "integer") ||
           ember_nnef_token_is_word(t, "logical") || ember_nnef_token_is_word(t, "string") ||
           ember_nnef_token_is_punct(t, "?");
}

int ember_nnef_is_reserved_word(const nnef_token *t) {
    static const char *const reserved[] = {"if", "else", "then", "for", "in", "yield",
                                           "graph", "fragment", "version", "extension"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (ember_nnef_token_is_word(t, reserved[i]))
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- assignments */

static ember_nnef_expr *parse_lvalue(parser *p);

/* "[a, b]" or "(a, b)" on the left of '='. */
static ember_nnef_expr *parse_lvalue_list(parser *p, const char *close, ember_nnef_expr_kind kind) {
    ember_nnef_expr *e = ember_nnef_new_expr(p, kind, p->token.line, p->token.column);
    size_t capacity = 0;
    ember_nnef_next_token(p); /* [ or ( */
    if (!e)
        return NULL;
    if (ember_nnef_accept_punct(p, close))
        return e;
    do {
        ember_nnef_expr *item = parse_lvalue(p);
        ember_nnef_expr **items = item ? ember_nnef_grow(p, e->u.list.items, e->u.list.count, &capacity, sizeof *items) : NULL;
        if (!items)
            return NULL;
        e->u.list.items = items;
        items[e->u.list.count++] = item;
    } while (ember_nnef_accept_punct(p, ","));
    if (!ember_nnef_accept_punct(p, close)) {
        ember_nnef_fail_expected(p, "',' or '%s' on the left of '='", close);
        return NULL;
    }
    if (kind == EMBER_NNEF_TUPLE && e->u.list.count == 1)
        return e->u.list.items[0]; /* (a) is just a */
    return e;
}

static ember_nnef_expr *parse_lvalue(parser *p) {
    if (!ember_nnef_enter(p))
        return NULL;
    ember_nnef_expr *e = NULL;
    if (ember_nnef_at_punct(p, "["))
        e = parse_lvalue_list(p, "]", EMBER_NNEF_ARRAY);
    else if (ember_nnef_at_punct(p, "("))
        e = parse_lvalue_list(p, ")", EMBER_NNEF_TUPLE);
    else if (p->token.kind == NNEF_TOKEN_IDENTIFIER && !ember_nnef_is_reserved_word(&p->token)) {
        e = ember_nnef_new_expr(p, EMBER_NNEF_IDENTIFIER, p->token.line, p->token.column);
        if (e && (e->u.string = ember_nnef_identifier_text(p, &p->token)) != NULL)
            ember_nnef_next_token(p);
    } else
        ember_nnef_fail_expected(p, "an identifier, '[' or '(' on the left of '='");
    ember_nnef_leave(p);
    return ember_nnef_failed(p) ? NULL : e;
}

/* `first` followed by ", item, item…": an unparenthesised tuple (or just `first`). */
static ember_nnef_expr *continue_bare_tuple(parser *p, ember_nnef_expr *first, int lvalue) {
    if (!first || !ember_nnef_at_punct(p, ","))
        return first;
    ember_nnef_expr *tuple = ember_nnef_new_expr(p, EMBER_NNEF_TUPLE, first->line, first->column);
    size_t capacity = 0;
    ember_nnef_expr *item = first;
    while (tuple && item) {
        ember_nnef_expr **items = ember_nnef_grow(p, tuple->u.list.items, tuple->u.list.count, &capacity, sizeof *items);
        if (!items)
            return NULL;
        tuple->u.list.items = items;
        items[tuple->u.list.count++] = item;
        if (!ember_nnef_accept_punct(p, ","))
            return tuple;
        item = lvalue ? parse_lvalue(p) : ember_nnef_parse_expression(p);
    }
    return NULL;
}

static int parse_assignment(parser *p, ember_nnef_assignment *a) {
    a->line = p->token.line;
    a->lvalue = continue_bare_tuple(p, parse_lvalue(p), 1);
    if (!a->lvalue)
        return 0;
    const char *target = a->lvalue->kind == EMBER_NNEF_IDENTIFIER ? a->lvalue->u.string : NULL;
    if (!(target ? ember_nnef_expect_punct(p, "=", "after", target) : ember_nnef_expect_punct(p, "=", "after the left-hand side", NULL)))
        return 0;
    a->rvalue = continue_bare_tuple(p, ember_nnef_parse_expression(p), 0);
    if (!a->rvalue)
        return 0;
    return target ? ember_nnef_expect_punct(p, ";", "after the assignment to", target)
                  : ember_nnef_expect_punct(p, ";", "after the assignment", NULL);
}

/* '{' assignment* '}' */
static int parse_body(parser *p, ember_nnef_assignment **body, size_t *count, const char *owner) {
    size_t capacity = 0;
    if (!ember_nnef_expect_punct(p, "{", "to open the body of", owner))
        return 0;
    while (!ember_nnef_failed(p) && !ember_nnef_at_punct(p, "}")) {
        if (p->token.kind == NNEF_TOKEN_END) {
            ember_nnef_fail_expected(p, "'}' to close the body of '%s'", owner);
            return 0;
        }
        ember_nnef_assignment *items = ember_nnef_grow(p, *body, *count, &capacity, sizeof *items);
        if (!items)
            return 0;
        *body = items;
        if (!parse_assignment(p, &items[(*count)++]))
            return 0;
    }
    ember_nnef_next_token(p); /* } */
    return !ember_nnef_failed(p);
}

/* ---------------------------------------------------------------- types */

static const char *concat3(parser *p, const char *a, const char *b, const char *c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *joined = ember_nnef_parser_alloc(p, la + lb + lc + 1);
    if (joined) {
        memcpy(joined, a, la);
        memcpy(joined + la, b, lb);
        memcpy(joined + la + lb, c, lc);
    }
    return joined;
}

static const char *parse_type(parser *p);

/* "(T, U, …)" — at '('. The text is joined once at the end: joining item by item
 * would be quadratic in the number of items, which hostile input controls. */
static const char *parse_tuple_type(parser *p) {
    const char **items = NULL;
    size_t count = 0, capacity = 0, length = 2;
    ember_nnef_next_token(p); /* ( */
    do {
        const char *item = parse_type(p);
        if (!item || !(items = ember_nnef_grow(p, (void *)items, count, &capacity, sizeof *items)))
            return NULL;
        items[count++] = item;
        length += strlen(item) + 2;
    } while (ember_nnef_accept_punct(p, ","));
    if (!ember_nnef_expect_punct(p, ")", "after tuple type", NULL))
        return NULL;
    char *text = ember_nnef_parser_alloc(p, length + 1);
    if (!text)
        return NULL;
    size_t at = 0;
    text[at++] = '(';
    for (size_t i = 0; i < count; i++) {
        if (i) {
            memcpy(text + at, ", ", 2);
            at += 2;
        }
        size_t item_length = strlen(items[i]);
        memcpy(text + at, items[i], item_length);
        at += item_length;
    }
    text[at] = ')';
    return text;
}

static const char *parse_base_type(parser *p) {
    if (ember_nnef_at_punct(p, "("))
        return parse_tuple_type(p);
    if (ember_nnef_at_word(p, "tensor")) {
        ember_nnef_next_token(p);
        if (!ember_nnef_expect_punct(p, "<", "after 'tensor'", NULL))
            return NULL;
        const char *item = "";
        if (ember_nnef_is_type_name(&p->token)) {
            item = ember_nnef_copy_text(p, p->token.text, p->token.length);
            ember_nnef_next_token(p);
        }
        if (!item || !ember_nnef_expect_punct(p, ">", "after the tensor item type", NULL))
            return NULL;
        return concat3(p, "tensor<", item, ">");
    }
    if (ember_nnef_is_type_name(&p->token)) {
        const char *name = ember_nnef_copy_text(p, p->token.text, p->token.length);
        ember_nnef_next_token(p);
        return name;
    }
    ember_nnef_fail_expected(p, "a type (scalar, integer, logical, string, ?, tensor<…> or a tuple)");
    return NULL;
}

/* A type followed by any number of "[]" (counted first, appended once). */
static const char *parse_type(parser *p) {
    if (!ember_nnef_enter(p))
        return NULL;
    const char *base = parse_base_type(p);
    size_t dimensions = 0;
    while (base && ember_nnef_accept_punct(p, "[")) {
        if (!ember_nnef_expect_punct(p, "]", "after '[' in an array type", NULL))
            break;
        dimensions++;
    }
    ember_nnef_leave(p);
    if (ember_nnef_failed(p) || !base)
        return NULL;
    if (dimensions == 0)
        return base;
    size_t base_length = strlen(base);
    if (dimensions > (SIZE_MAX - base_length - 1) / 2)
        return ember_nnef_parser_alloc(p, SIZE_MAX);
    char *text = ember_nnef_parser_alloc(p, base_length + 2 * dimensions + 1);
    if (text) {
        memcpy(text, base, base_length);
        for (size_t i = 0; i < dimensions; i++)
            memcpy(text + base_length + 2 * i, "[]", 2);
    }
    return text;
}

/* ---------------------------------------------------------------- declarations */

/* NAME ':' type ['=' default] (defaults only when `with_default`). */
static int parse_param(parser *p, ember_nnef_param *param, int with_default) {
    param->name = ember_nnef_expect_identifier(p, "a parameter name");
    if (!param->name || !ember_nnef_expect_punct(p, ":", "after parameter", param->name) || !(param->type = parse_type(p)))
        return 0;
    if (with_default && ember_nnef_accept_punct(p, "=") && !(param->default_value = ember_nnef_parse_expression(p)))
        return 0;
    return 1;
}

/* '(' [param (',' param)*] ')' */
static int parse_param_list(parser *p, ember_nnef_param **params, size_t *count, const char *fragment,
                            int with_default) {
    size_t capacity = 0;
    const char *context = with_default ? "after the parameters of" : "after the results of";
    if (!ember_nnef_expect_punct(p, "(", with_default ? "before the parameters of" : "before the results of", fragment))
        return 0;
    if (ember_nnef_accept_punct(p, ")"))
        return 1;
    do {
        ember_nnef_param *items = ember_nnef_grow(p, *params, *count, &capacity, sizeof *items);
        if (!items)
            return 0;
        *params = items;
        if (!parse_param(p, &items[(*count)++], with_default))
            return 0;
    } while (ember_nnef_accept_punct(p, ","));
    return ember_nnef_expect_punct(p, ")", context, fragment);
}

/* "<?>" or "<? = type>" after a fragment name. */
static int parse_generic_declaration(parser *p, ember_nnef_fragment *f) {
    ember_nnef_next_token(p); /* < */
    if (!ember_nnef_at_punct(p, "?")) {
        ember_nnef_fail_expected(p, "'?' in the generic declaration of '%s'", f->name);
        return 0;
    }
    f->generic_param = "?";
    ember_nnef_next_token(p);
    if (ember_nnef_accept_punct(p, "=")) {
        if (!ember_nnef_is_type_name(&p->token) || ember_nnef_at_punct(p, "?")) {
            ember_nnef_fail_expected(p, "a type name as the generic default of '%s'", f->name);
            return 0;
        }
        f->generic_default = ember_nnef_copy_text(p, p->token.text, p->token.length);
        ember_nnef_next_token(p);
    }
    return ember_nnef_expect_punct(p, ">", "after the generic declaration of", f->name);
}

static int parse_fragment(parser *p, ember_nnef_fragment *f) {
    f->line = p->token.line;
    ember_nnef_next_token(p); /* fragment */
    if (!(f->name = ember_nnef_expect_identifier(p, "a fragment name after 'fragment'")))
        return 0;
    if (ember_nnef_at_punct(p, "<") && !parse_generic_declaration(p, f))
        return 0;
    if (!parse_param_list(p, &f->params, &f->param_count, f->name, 1) ||
        !ember_nnef_expect_punct(p, "->", "after the parameters of", f->name) ||
        !parse_param_list(p, &f->results, &f->result_count, f->name, 0))
        return 0;
    if (ember_nnef_accept_punct(p, ";"))
        return 1; /* a declaration: an atomic operation */
    return parse_body(p, &f->body, &f->body_count, f->name);
}

/* '(' [NAME (',' NAME)*] ')' of the graph declaration. */
static int parse_name_list(parser *p, const char ***names, size_t *count, const char *what) {
    size_t capacity = 0;
    if (!ember_nnef_expect_punct(p, "(", what, NULL))
        return 0;
    if (ember_nnef_accept_punct(p, ")"))
        return 1;
    do {
        const char **items = ember_nnef_grow(p, (void *)*names, *count, &capacity, sizeof *items);
        if (!items || !(items[*count] = ember_nnef_expect_identifier(p, "an identifier in the graph declaration")))
            return 0;
        *names = items;
        (*count)++;
    } while (ember_nnef_accept_punct(p, ","));
    return ember_nnef_expect_punct(p, ")", "after the graph's identifiers", NULL);
}

static int parse_graph(parser *p, ember_nnef_document *doc) {
    ember_nnef_next_token(p); /* graph */
    if (!(doc->graph_name = ember_nnef_expect_identifier(p, "a graph name after 'graph'")) ||
        !parse_name_list(p, &doc->graph_inputs, &doc->graph_input_count, "before the graph inputs") ||
        !ember_nnef_expect_punct(p, "->", "after the graph inputs", NULL) ||
        !parse_name_list(p, &doc->graph_outputs, &doc->graph_output_count, "before the graph outputs"))
        return 0;
    return parse_body(p, &doc->graph_body, &doc->graph_body_count, doc->graph_name);
}

/* "version 1.0;" — the number token is split at its '.' into major and minor. */
static int parse_version(parser *p, ember_nnef_document *doc) {
    if (!ember_nnef_expect_word(p, "version", "at the start of the document"))
        return 0;
    const nnef_token t = p->token;
    if (t.kind != NNEF_TOKEN_NUMBER) {
        ember_nnef_fail_expected(p, "a version number after 'version'");
        return 0;
    }
    long parts[2] = {0, 0};
    int part = 0;
    for (size_t i = 0; i < t.length && part < 2; i++) {
        char c = t.text[i];
        if (c == '.')
            part++;
        else if (c < '0' || c > '9' || parts[part] > 100000) {
            fail_at(p, t.line, t.column, "malformed version number");
            return 0;
        } else
            parts[part] = parts[part] * 10 + (c - '0');
    }
    doc->version_major = (int)parts[0];
    doc->version_minor = (int)parts[1];
    ember_nnef_next_token(p);
    return ember_nnef_expect_punct(p, ";", "after the version", NULL);
}

/* "extension word word…;" (commas between the words are accepted too). */
static int parse_extension(parser *p, ember_nnef_document *doc, size_t *capacity) {
    ember_nnef_next_token(p); /* extension */
    do {
        const char **words = ember_nnef_grow(p, (void *)doc->extensions, doc->extension_count, capacity, sizeof *words);
        if (!words || !(words[doc->extension_count] = ember_nnef_expect_identifier(p, "an extension name")))
            return 0;
        doc->extensions = words;
        doc->extension_count++;
        ember_nnef_accept_punct(p, ",");
    } while (!ember_nnef_failed(p) && p->token.kind == NNEF_TOKEN_IDENTIFIER);
    return ember_nnef_expect_punct(p, ";", "after the extension names", NULL);
}

static int parse_document(parser *p, ember_nnef_document *doc) {
    size_t extension_capacity = 0, fragment_capacity = 0;
    if (!parse_version(p, doc))
        return 0;
    for (;;) {
        if (ember_nnef_at_word(p, "extension")) {
            if (!parse_extension(p, doc, &extension_capacity))
                return 0;
        } else if (ember_nnef_at_word(p, "fragment")) {
            ember_nnef_fragment *items = ember_nnef_grow(p, doc->fragments, doc->fragment_count, &fragment_capacity,
                                              sizeof *items);
            if (!items)
                return 0;
            doc->fragments = items;
            if (!parse_fragment(p, &items[doc->fragment_count++]))
                return 0;
        } else {
            break;
        }
    }
    if (!ember_nnef_at_word(p, "graph")) {
        ember_nnef_fail_expected(p, "'graph', 'fragment' or 'extension'");
        return 0;
    }
    return parse_graph(p, doc);
}

ember_status ember_nnef_parse(const char *text, size_t size, const char *origin, ember_nnef_document *out) {
    if (!out || (!text && size))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_nnef_parse: NULL argument");
    memset(out, 0, sizeof *out);
    parser p = {0};
    p.arena = ember_nnef_arena_new();
    if (!p.arena)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory parsing NNEF");
    ember_nnef_lexer_init(&p.lexer, text ? text : "", size, origin);
    ember_nnef_next_token(&p);
    out->arena = p.arena;
    if (!ember_nnef_failed(&p))
        parse_document(&p, out);
    if (!ember_nnef_failed(&p) && p.token.kind != NNEF_TOKEN_END)
        ember_nnef_fail_expected(&p, "end of file after the graph");
    if (ember_nnef_failed(&p)) {
        ember_nnef_document_free(out);
        return p.status;
    }
    return EMBER_OK;
}

void ember_nnef_document_free(ember_nnef_document *doc) {
    if (!doc)
        return;
    ember_nnef_arena_free(doc->arena);
    memset(doc, 0, sizeof *doc);
}

const ember_nnef_fragment *ember_nnef_find_fragment(const ember_nnef_document *doc, const char *name) {
    if (!doc || !name)
        return NULL;
    for (size_t i = 0; i < doc->fragment_count; i++)
        if (strcmp(doc->fragments[i].name, name) == 0)
            return &doc->fragments[i];
    return NULL;
}
