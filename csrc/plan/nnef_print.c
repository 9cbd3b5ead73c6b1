/*
 * csrc/plan/nnef_print.c — a document back to NNEF text.
 *
 * The Python reader reads plans through this: the C parser and flattener make the flat
 * document, this prints it, and the Python side parses the flat text (cook/nnef). So
 * both readers accept the same grammar by construction.
 *
 * Each graph statement is printed on the line it had in the source (statements inlined
 * from one call share that line), so the Python reader's messages cite the user's lines.
 * Numbers print exactly (%.17g round-trips a double); identifiers that are not plain
 * NNEF identifiers print in tract's i"…" form.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plan/plan.h"

typedef struct printer {
    char *text;
    size_t size, capacity;
    int line;     /* of the output, 1-based */
    int failed;
} printer;

static void put(printer *p, const char *format, ...) EMBER_PRINTF(2, 3);
static void put(printer *p, const char *format, ...)
{
    if (p->failed)
        return;
    va_list args;
    for (;;) {
        va_start(args, format);
        const int n = vsnprintf(p->text + p->size, p->capacity - p->size, format, args);
        va_end(args);
        if (n < 0) {
            p->failed = 1;
            return;
        }
        if ((size_t)n < p->capacity - p->size) {
            for (int i = 0; i < n; i++)
                p->line += p->text[p->size + i] == '\n';
            p->size += (size_t)n;
            return;
        }
        const size_t capacity = (p->capacity + (size_t)n + 1) * 2;
        char *bigger = realloc(p->text, capacity);
        if (bigger == NULL) {
            p->failed = 1;
            return;
        }
        p->text = bigger;
        p->capacity = capacity;
    }
}

static int plain_identifier(const char *name)
{
    if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
          name[0] == '_'))
        return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
              (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    return 1;
}

static void put_quoted(printer *p, const char *text)
{
    put(p, "\"");
    for (const char *c = text; *c; c++)
        put(p, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
    put(p, "\"");
}

static void put_identifier(printer *p, const char *name)
{
    if (plain_identifier(name)) {
        put(p, "%s", name);
    } else {
        put(p, "i");
        put_quoted(p, name);
    }
}

static void put_number(printer *p, double value, int is_integer)
{
    if (is_integer) {
        put(p, "%.0f", value);
        return;
    }
    char text[40];
    snprintf(text, sizeof text, "%.17g", value);
    put(p, "%s%s", text, strpbrk(text, ".e") ? "" : ".0");
}

static void put_expr(printer *p, const ember_nnef_expr *e);

static void put_list(printer *p, ember_nnef_expr *const *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (i)
            put(p, ", ");
        put_expr(p, items[i]);
    }
}

static void put_operand(printer *p, const ember_nnef_expr *e)
{
    const int group = e->kind == EMBER_NNEF_BINARY || e->kind == EMBER_NNEF_IF;
    put(p, group ? "(" : "");
    put_expr(p, e);
    put(p, group ? ")" : "");
}

static void put_expr(printer *p, const ember_nnef_expr *e)
{
    switch (e->kind) {
    case EMBER_NNEF_NUMBER: put_number(p, e->u.number.value, e->u.number.is_integer); break;
    case EMBER_NNEF_STRING: put_quoted(p, e->u.string); break;
    case EMBER_NNEF_LOGICAL: put(p, e->u.logical ? "true" : "false"); break;
    case EMBER_NNEF_IDENTIFIER: put_identifier(p, e->u.string); break;
    case EMBER_NNEF_ARRAY:
        put(p, "[");
        put_list(p, e->u.list.items, e->u.list.count);
        put(p, "]");
        break;
    case EMBER_NNEF_TUPLE:
        put(p, "(");
        put_list(p, e->u.list.items, e->u.list.count);
        put(p, ")");
        break;
    case EMBER_NNEF_INVOCATION:
        put(p, "%s", e->u.invocation.op);
        if (e->u.invocation.generic_type)
            put(p, "<%s>", e->u.invocation.generic_type);
        put(p, "(");
        for (size_t i = 0; i < e->u.invocation.arg_count; i++) {
            put(p, i ? ", " : "");
            if (e->u.invocation.args[i].name)
                put(p, "%s = ", e->u.invocation.args[i].name);
            put_expr(p, e->u.invocation.args[i].value);
        }
        put(p, ")");
        break;
    case EMBER_NNEF_UNARY:
        put(p, "%s", e->u.unary.op);
        put_operand(p, e->u.unary.operand);
        break;
    case EMBER_NNEF_BINARY:
        put_operand(p, e->u.binary.left);
        put(p, " %s ", e->u.binary.op);
        put_operand(p, e->u.binary.right);
        break;
    case EMBER_NNEF_IF:
        put_operand(p, e->u.if_else.then);
        put(p, " if ");
        put_operand(p, e->u.if_else.cond);
        put(p, " else ");
        put_operand(p, e->u.if_else.otherwise);
        break;
    case EMBER_NNEF_SUBSCRIPT:
        put_operand(p, e->u.subscript.base);
        put(p, "[");
        if (e->u.subscript.begin)
            put_expr(p, e->u.subscript.begin);
        if (e->u.subscript.is_range) {
            put(p, ":");
            if (e->u.subscript.end)
                put_expr(p, e->u.subscript.end);
        }
        put(p, "]");
        break;
    case EMBER_NNEF_COMPREHENSION:
        put(p, "[for ");
        for (size_t i = 0; i < e->u.comprehension.var_count; i++) {
            put(p, i ? ", %s in " : "%s in ", e->u.comprehension.vars[i].name);
            put_expr(p, e->u.comprehension.vars[i].iterable);
        }
        if (e->u.comprehension.condition) {
            put(p, " if ");
            put_expr(p, e->u.comprehension.condition);
        }
        put(p, " yield ");
        put_expr(p, e->u.comprehension.yield);
        put(p, "]");
        break;
    }
}

static void put_assignment(printer *p, const ember_nnef_assignment *a, int keep_line)
{
    if (keep_line && a->line > p->line)
        while (p->line < a->line && !p->failed)
            put(p, "\n");
    else
        put(p, keep_line ? " " : "\n");
    put(p, "  ");
    put_expr(p, a->lvalue);
    put(p, " = ");
    put_expr(p, a->rvalue);
    put(p, ";");
}

static void put_params(printer *p, const ember_nnef_param *params, size_t count)
{
    put(p, "(");
    for (size_t i = 0; i < count; i++) {
        put(p, "%s%s: %s", i ? ", " : "", params[i].name, params[i].type);
        if (params[i].default_value) {
            put(p, " = ");
            put_expr(p, params[i].default_value);
        }
    }
    put(p, ")");
}

static void put_fragment(printer *p, const ember_nnef_fragment *f)
{
    put(p, "fragment %s", f->name);
    if (f->generic_param)
        put(p, f->generic_default ? "<%s = %s>" : "<%s>", f->generic_param, f->generic_default);
    put_params(p, f->params, f->param_count);
    put(p, " -> ");
    put_params(p, f->results, f->result_count);
    if (f->body == NULL) {
        put(p, ";\n");
        return;
    }
    put(p, " {");
    for (size_t i = 0; i < f->body_count; i++)
        put_assignment(p, &f->body[i], 0);
    put(p, " }\n");
}

static void put_names(printer *p, const char *const *names, size_t count)
{
    put(p, "(");
    for (size_t i = 0; i < count; i++) {
        put(p, i ? ", " : "");
        put_identifier(p, names[i]);
    }
    put(p, ")");
}

ember_status ember_nnef_print(const ember_nnef_document *doc, char **text, size_t *size)
{
    printer p = {NULL, 0, 0, 1, 0};
    put(&p, "version %d.%d;", doc->version_major, doc->version_minor);
    for (size_t i = 0; i < doc->extension_count; i++) {
        const int symbol = strcmp(doc->extensions[i], "tract_symbol") == 0 &&
                           i + 1 < doc->extension_count;
        put(&p, " extension ");
        put_identifier(&p, doc->extensions[i]);
        if (symbol) {
            put(&p, " ");
            put_identifier(&p, doc->extensions[++i]);
        }
        put(&p, ";");
    }
    put(&p, "\n");
    for (size_t i = 0; i < doc->fragment_count; i++)
        put_fragment(&p, &doc->fragments[i]);
    put(&p, "graph ");
    put_identifier(&p, doc->graph_name);
    put_names(&p, doc->graph_inputs, doc->graph_input_count);
    put(&p, " -> ");
    put_names(&p, doc->graph_outputs, doc->graph_output_count);
    put(&p, " {");
    for (size_t i = 0; i < doc->graph_body_count; i++)
        put_assignment(&p, &doc->graph_body[i], 1);
    put(&p, "\n}\n");
    if (p.failed) {
        free(p.text);
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory printing NNEF");
    }
    *text = p.text;
    *size = p.size;
    return EMBER_OK;
}
