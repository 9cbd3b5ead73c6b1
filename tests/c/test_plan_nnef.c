/*
 * tests/c/test_plan_nnef.c — the plan layer's NNEF text parser (csrc/plan): tract's
 * output, fragments, expressions and parse errors, each tree checked as an S-expression.
 *
 *     build/host/tests/test_plan_nnef [fixtures-dir]     (default: tests/c/fixtures)
 *
 * All NNEF text is built here: no fixture is read, the argument is taken only so that
 * the plan programs run alike. The archive side (tar/tgz/directories, gzip) is
 * tests/c/test_plan_archive.c, .dat files tests/c/test_plan_dat.c.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_test_support.h"

/* ---------------------------------------------------------------- AST printer */

/* The AST as a compact S-expression, so a test states a whole tree in one string. */
typedef struct printer {
    char text[4096];
    size_t length;
} printer;

static void emit(printer *out, const char *format, ...) EMBER_PRINTF(2, 3);
#include <stdarg.h>
static void emit(printer *out, const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (out->length < sizeof out->text) {
        int n = vsnprintf(out->text + out->length, sizeof out->text - out->length, format, args);
        if (n > 0)
            out->length += (size_t)n;
    }
    va_end(args);
}

static void print_expr(printer *out, const ember_nnef_expr *e);

static void print_list(printer *out, const char *open, ember_nnef_expr *const *items, size_t count,
                       const char *close) {
    emit(out, "%s", open);
    for (size_t i = 0; i < count; i++) {
        emit(out, i ? " " : "");
        print_expr(out, items[i]);
    }
    emit(out, "%s", close);
}

static void print_optional(printer *out, const ember_nnef_expr *e) {
    if (e)
        print_expr(out, e);
    else
        emit(out, "_");
}

static void print_invocation(printer *out, const ember_nnef_expr *e) {
    emit(out, "(%s", e->u.invocation.op);
    if (e->u.invocation.generic_type)
        emit(out, "<%s>", e->u.invocation.generic_type);
    for (size_t i = 0; i < e->u.invocation.arg_count; i++) {
        emit(out, " ");
        if (e->u.invocation.args[i].name)
            emit(out, "%s=", e->u.invocation.args[i].name);
        print_expr(out, e->u.invocation.args[i].value);
    }
    emit(out, ")");
}

static void print_comprehension(printer *out, const ember_nnef_expr *e) {
    emit(out, "(for");
    for (size_t i = 0; i < e->u.comprehension.var_count; i++) {
        emit(out, " %s ", e->u.comprehension.vars[i].name);
        print_expr(out, e->u.comprehension.vars[i].iterable);
    }
    if (e->u.comprehension.condition) {
        emit(out, " if ");
        print_expr(out, e->u.comprehension.condition);
    }
    emit(out, " yield ");
    print_expr(out, e->u.comprehension.yield);
    emit(out, ")");
}

static void print_expr(printer *out, const ember_nnef_expr *e) {
    switch (e->kind) {
    case EMBER_NNEF_NUMBER:
        emit(out, e->u.number.is_integer ? "%.0f" : "%gf", e->u.number.value);
        break;
    case EMBER_NNEF_STRING: emit(out, "'%s'", e->u.string); break;
    case EMBER_NNEF_LOGICAL: emit(out, e->u.logical ? "true" : "false"); break;
    case EMBER_NNEF_IDENTIFIER: emit(out, "%s", e->u.string); break;
    case EMBER_NNEF_ARRAY: print_list(out, "[", e->u.list.items, e->u.list.count, "]"); break;
    case EMBER_NNEF_TUPLE: print_list(out, "(tuple ", e->u.list.items, e->u.list.count, ")"); break;
    case EMBER_NNEF_INVOCATION: print_invocation(out, e); break;
    case EMBER_NNEF_UNARY:
        emit(out, "(%s ", e->u.unary.op);
        print_expr(out, e->u.unary.operand);
        emit(out, ")");
        break;
    case EMBER_NNEF_BINARY:
        emit(out, "(%s ", e->u.binary.op);
        print_expr(out, e->u.binary.left);
        emit(out, " ");
        print_expr(out, e->u.binary.right);
        emit(out, ")");
        break;
    case EMBER_NNEF_IF:
        emit(out, "(if ");
        print_expr(out, e->u.if_else.cond);
        emit(out, " ");
        print_expr(out, e->u.if_else.then);
        emit(out, " ");
        print_expr(out, e->u.if_else.otherwise);
        emit(out, ")");
        break;
    case EMBER_NNEF_SUBSCRIPT:
        emit(out, e->u.subscript.is_range ? "(slice " : "(at ");
        print_expr(out, e->u.subscript.base);
        emit(out, " ");
        print_optional(out, e->u.subscript.begin);
        if (e->u.subscript.is_range) {
            emit(out, " ");
            print_optional(out, e->u.subscript.end);
        }
        emit(out, ")");
        break;
    case EMBER_NNEF_COMPREHENSION: print_comprehension(out, e); break;
    }
}

/* "lvalue = rvalue" of an assignment, printed. */
static const char *assignment_text(const ember_nnef_assignment *a) {
    static printer out;
    out.length = 0;
    out.text[0] = '\0';
    print_expr(&out, a->lvalue);
    emit(&out, " = ");
    print_expr(&out, a->rvalue);
    return out.text;
}

/* ---------------------------------------------------------------- NNEF: tract's output */

static const char TRACT_SAMPLE[] =
    "version 1.0;\n"
    "\n"
    "extension tract_registry tract_core;\n"
    "\n"
    "fragment tract_core_properties(\n"
    ") -> (properties: (string, tensor<scalar>)[])\n"
    "{\n"
    "  properties = [(\"onnx.ir_version\", tract_core_cast(3, to = \"i64\")), (\"tract_nnef_ser_version\", \"0.23.9\")];\n"
    "}\n"
    "\n"
    "graph network(data_0) -> (prob_1) {\n"
    "  data_0 = external(shape = [1, 3, 224, 224]);\n"
    "  n0_n3_kernel = variable<scalar>(label = \"n0.n3.kernel\", shape = [64, 3, 7, 7]);\n"
    "  n0_conv = conv(data_0, n0_n3_kernel, 0.0, dilation = [1, 1], stride = [2, 2], border = \"constant\", groups = 1, padding = [(3, 3), (3, 3)]);\n"
    "  n6_low_cst = [[[[0.0]]]];\n"
    "  n6_low = max(n0_conv, n6_low_cst);\n"
    "  prob_1 = softmax(n6_low, axes = [1]);\n"
    "}\n";

static void test_tract_sample(void) {
    ember_nnef_document doc;
    ember_status status = ember_nnef_parse(TRACT_SAMPLE, strlen(TRACT_SAMPLE), "model.nnef.tgz:graph.nnef", &doc);
    CHECK(status == EMBER_OK);
    if (status != EMBER_OK)
        return;
    CHECK(doc.version_major == 1 && doc.version_minor == 0);
    CHECK(doc.extension_count == 2);
    CHECK_TEXT(doc.extensions[0], "tract_registry");
    CHECK_TEXT(doc.extensions[1], "tract_core");

    CHECK(doc.fragment_count == 1);
    const ember_nnef_fragment *props = ember_nnef_find_fragment(&doc, "tract_core_properties");
    CHECK(props == &doc.fragments[0]);
    CHECK(ember_nnef_find_fragment(&doc, "conv") == NULL);
    CHECK(props->param_count == 0 && props->result_count == 1 && props->body_count == 1);
    CHECK_TEXT(props->results[0].name, "properties");
    CHECK_TEXT(props->results[0].type, "(string, tensor<scalar>)[]");
    CHECK(props->line == 5);
    CHECK_TEXT(assignment_text(&props->body[0]),
               "properties = [(tuple 'onnx.ir_version' (tract_core_cast 3 to='i64')) "
               "(tuple 'tract_nnef_ser_version' '0.23.9')]");

    CHECK_TEXT(doc.graph_name, "network");
    CHECK(doc.graph_input_count == 1 && doc.graph_output_count == 1);
    CHECK_TEXT(doc.graph_inputs[0], "data_0");
    CHECK_TEXT(doc.graph_outputs[0], "prob_1");
    CHECK(doc.graph_body_count == 6);
    if (doc.graph_body_count != 6) {
        ember_nnef_document_free(&doc);
        return;
    }
    CHECK_TEXT(assignment_text(&doc.graph_body[0]), "data_0 = (external shape=[1 3 224 224])");
    CHECK_TEXT(assignment_text(&doc.graph_body[1]),
               "n0_n3_kernel = (variable<scalar> label='n0.n3.kernel' shape=[64 3 7 7])");
    CHECK_TEXT(assignment_text(&doc.graph_body[2]),
               "n0_conv = (conv data_0 n0_n3_kernel 0f dilation=[1 1] stride=[2 2] border='constant' "
               "groups=1 padding=[(tuple 3 3) (tuple 3 3)])");
    CHECK_TEXT(assignment_text(&doc.graph_body[3]), "n6_low_cst = [[[[0f]]]]");
    CHECK_TEXT(assignment_text(&doc.graph_body[4]), "n6_low = (max n0_conv n6_low_cst)");
    CHECK_TEXT(assignment_text(&doc.graph_body[5]), "prob_1 = (softmax n6_low axes=[1])");

    /* Positions of nodes: the conv invocation starts at line 14, column 13. */
    const ember_nnef_assignment *conv = &doc.graph_body[2];
    CHECK(conv->line == 14);
    CHECK(conv->rvalue->kind == EMBER_NNEF_INVOCATION && conv->rvalue->line == 14 && conv->rvalue->column == 13);
    CHECK(conv->rvalue->u.invocation.arg_count == 8);
    CHECK(conv->rvalue->u.invocation.args[0].name == NULL);
    CHECK_TEXT(conv->rvalue->u.invocation.args[3].name, "dilation");
    const ember_nnef_expr *bias = conv->rvalue->u.invocation.args[2].value;
    CHECK(bias->kind == EMBER_NNEF_NUMBER && bias->u.number.value == 0.0 && !bias->u.number.is_integer);
    ember_nnef_document_free(&doc);
    ember_nnef_document_free(&doc); /* freeing twice is harmless: the struct is cleared */
}

/* ---------------------------------------------------------------- NNEF: fragments */

static const char FRAGMENTS[] =
    "version 1.0;\n"
    "extension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;\n"
    "extension tract_symbol S;\n"
    "fragment linear( input: tensor<scalar>, filter: tensor<scalar>, bias: tensor<scalar> = 0.0 )\n"
    "  -> ( output: tensor<scalar> )\n"
    "{ output = add(matmul(input, filter, transposeB = true), bias); }\n"
    "fragment generic<? = scalar>( x: tensor<?>, sizes: integer[] = [], pairs: (integer, integer)[] = [],\n"
    "                             label: string = 'a', flag: logical = false, any: tensor<> )\n"
    "  -> ( y: tensor<?>, z: scalar[][] );\n"
    "fragment pad_dims( input: tensor<scalar>, axes: integer[] ) -> ( output: tensor<scalar> )\n"
    "{\n"
    "  rank = length_of(shape_of(input));   # a comment\n"
    "  padding = [for i in range_of(axes) if axes[i] >= 0 yield (0, 1) if i < 2 else (0, 0)];\n"
    "  first, rest = split(input, axis = 0, ratios = [1, 1]);\n"
    "  [a, b] = unstack(rest, axis = 1);\n"
    "  output = first if rank > 2 && !(rank == 3) else rest[1:];\n"
    "}\n"
    "graph g( x ) -> ( y )\n"
    "{\n"
    "  x = external<scalar>(shape = [1, S + 3]);\n"
    "  y = linear(x, x);\n"
    "}\n";

static void test_fragments(void) {
    ember_nnef_document doc;
    ember_status status = ember_nnef_parse(FRAGMENTS, strlen(FRAGMENTS), "graph.nnef", &doc);
    CHECK(status == EMBER_OK);
    if (status != EMBER_OK)
        return;
    CHECK(doc.extension_count == 4);
    CHECK_TEXT(doc.extensions[1], "KHR_enable_operator_expressions");
    CHECK_TEXT(doc.extensions[3], "S");
    CHECK(doc.fragment_count == 3);

    const ember_nnef_fragment *linear = ember_nnef_find_fragment(&doc, "linear");
    CHECK(linear && linear->param_count == 3 && linear->result_count == 1 && linear->body_count == 1);
    if (linear && linear->param_count == 3) {
        CHECK_TEXT(linear->params[2].name, "bias");
        CHECK_TEXT(linear->params[2].type, "tensor<scalar>");
        CHECK(linear->params[0].default_value == NULL);
        CHECK(linear->params[2].default_value && linear->params[2].default_value->kind == EMBER_NNEF_NUMBER);
        CHECK_TEXT(assignment_text(&linear->body[0]),
                   "output = (add (matmul input filter transposeB=true) bias)");
        CHECK(linear->generic_param == NULL);
    }

    const ember_nnef_fragment *generic = ember_nnef_find_fragment(&doc, "generic");
    CHECK(generic && generic->body == NULL && generic->body_count == 0);
    if (generic) {
        CHECK_TEXT(generic->generic_param, "?");
        CHECK_TEXT(generic->generic_default, "scalar");
        CHECK(generic->param_count == 6 && generic->result_count == 2);
        CHECK_TEXT(generic->params[0].type, "tensor<?>");
        CHECK_TEXT(generic->params[1].type, "integer[]");
        CHECK_TEXT(generic->params[2].type, "(integer, integer)[]");
        CHECK_TEXT(generic->params[3].type, "string");
        CHECK_TEXT(generic->params[4].type, "logical");
        CHECK_TEXT(generic->params[5].type, "tensor<>");
        CHECK_TEXT(generic->results[1].type, "scalar[][]");
        CHECK(generic->params[1].default_value->kind == EMBER_NNEF_ARRAY &&
              generic->params[1].default_value->u.list.count == 0);
        CHECK(generic->params[4].default_value->kind == EMBER_NNEF_LOGICAL);
    }

    const ember_nnef_fragment *pad = ember_nnef_find_fragment(&doc, "pad_dims");
    CHECK(pad && pad->body_count == 5);
    if (pad && pad->body_count == 5) {
        CHECK_TEXT(assignment_text(&pad->body[0]), "rank = (length_of (shape_of input))");
        CHECK_TEXT(assignment_text(&pad->body[1]),
                   "padding = (for i (range_of axes) if (>= (at axes i) 0) yield "
                   "(if (< i 2) (tuple 0 1) (tuple 0 0)))");
        CHECK_TEXT(assignment_text(&pad->body[2]), "(tuple first rest) = (split input axis=0 ratios=[1 1])");
        CHECK_TEXT(assignment_text(&pad->body[3]), "[a b] = (unstack rest axis=1)");
        CHECK_TEXT(assignment_text(&pad->body[4]),
                   "output = (if (&& (> rank 2) (! (== rank 3))) first (slice rest 1 _))");
        CHECK(pad->body[4].line == 16);
    }
    CHECK(doc.graph_body_count == 2);
    CHECK_TEXT(assignment_text(&doc.graph_body[0]), "x = (external<scalar> shape=[1 (+ S 3)])");
    ember_nnef_document_free(&doc);
}

/* ---------------------------------------------------------------- NNEF: expressions */

/* Parse "version 1.0; graph g() -> () { <body> }" and print assignment `index`. */
static const char *expression_of(const char *body, size_t index) {
    static char text[4096];
    char source[2048];
    snprintf(source, sizeof source, "version 1.0;\ngraph g() -> ()\n{\n%s\n}\n", body);
    ember_nnef_document doc;
    if (ember_nnef_parse(source, strlen(source), "expr.nnef", &doc) != EMBER_OK) {
        snprintf(text, sizeof text, "error: %s", ember_error_message());
        return text;
    }
    snprintf(text, sizeof text, "%s", index < doc.graph_body_count ? assignment_text(&doc.graph_body[index]) : "?");
    ember_nnef_document_free(&doc);
    return text;
}

static void test_expressions(void) {
    static const char *const cases[][2] = {
        {"a = 1 + 2 * 3;", "a = (+ 1 (* 2 3))"},
        {"a = (1 + 2) * 3;", "a = (* (+ 1 2) 3)"},
        {"a = 1 / 2 - 3 * 4 + 5;", "a = (+ (- (/ 1 2) (* 3 4)) 5)"},
        {"a = 2 ^ 3 ^ 2;", "a = (^ 2 (^ 3 2))"},
        {"a = -x ^ 2;", "a = (- (^ x 2))"},
        {"a = 2 ^ -1;", "a = (^ 2 -1)"},
        {"a = -1;", "a = -1"},
        {"a = -1.5e-3;", "a = -0.0015f"},
        {"a = 2.5E+2;", "a = 250f"},
        {"a = 1e3;", "a = 1000f"},
        {"a = 2 - -3;", "a = (- 2 -3)"},
        {"a = - - x;", "a = (- (- x))"},
        {"a = +x;", "a = x"},
        {"a = !true || false && x < y;", "a = (|| (! true) (&& false (< x y)))"},
        {"a = i in axes && k != 0;", "a = (&& (in i axes) (!= k 0))"},
        {"a = x <= y == z >= w;", "a = (>= (== (<= x y) z) w)"},
        {"a = x if c else y if d else z;", "a = (if c x (if d y z))"},
        {"a = if c then x else y;", "a = (if c x y)"},
        {"a = b[0];", "a = (at b 0)"},
        {"a = b[1:3];", "a = (slice b 1 3)"},
        {"a = b[:2];", "a = (slice b _ 2)"},
        {"a = b[1:];", "a = (slice b 1 _)"},
        {"a = b[:];", "a = (slice b _ _)"},
        {"a = f(x)[0][i + 1];", "a = (at (at (f x) 0) (+ i 1))"},
        {"a = [for i in range_of(b), j in c if i < j yield b[i] * j];",
         "a = (for i (range_of b) j c if (< i j) yield (* (at b i) j))"},
        {"a = [for i in b yield i];", "a = (for i b yield i)"},
        {"a = 'single \\'q\\' and \"d\"';", "a = 'single 'q' and \"d\"'"},
        {"a = \"tab\\tx\";", "a = 'tab\tx'"},
        {"a = (x, y);", "a = (tuple x y)"},
        {"a = ((x));", "a = x"},
        {"a = [];", "a = []"},
        {"u, v = w, z;", "(tuple u v) = (tuple w z)"},
        {"(u, v) = split(x);", "(tuple u v) = (split x)"},
        {"[p, (q, r)] = f();", "[p (tuple q r)] = (f)"},
        {"a = i\"odd name.1\" + 1;", "a = (+ odd name.1 1)"},
        {"a = b < c;", "a = (< b c)"},
        {"a = b < c > (d);", "a = (> (< b c) d)"},
        {"a = cast<integer>(v);", "a = (cast<integer> v)"},
        {"a = f<?>(v);", "a = (f<?> v)"},
        {"a = true; # trailing comment", "a = true"},
        {"a = x * 2 if c else y;", "a = (if c (* x 2) y)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_TEXT(expression_of(cases[i][0], 0), cases[i][1]);

    /* Numbers: integer or not, exact values. */
    ember_nnef_document doc;
    const char *text = "version 1.0; graph g() -> () { a = [7, 7.0, 0.5, 12345678]; }";
    CHECK(ember_nnef_parse(text, strlen(text), "n", &doc) == EMBER_OK);
    if (doc.graph_body_count == 1) {
        ember_nnef_expr **items = doc.graph_body[0].rvalue->u.list.items;
        CHECK(items[0]->u.number.is_integer && items[0]->u.number.value == 7);
        CHECK(!items[1]->u.number.is_integer && items[1]->u.number.value == 7);
        CHECK(items[2]->u.number.value == 0.5);
        CHECK(items[3]->u.number.value == 12345678);
        CHECK(items[2]->line == 1 && items[2]->column == 45);
    }
    ember_nnef_document_free(&doc);

    /* Not NUL-terminated: only `size` bytes are read. */
    const char buffer[] = "version 1.0; graph g() -> () { a = b; }GARBAGE";
    CHECK(ember_nnef_parse(buffer, strlen(buffer) - 7, "n", &doc) == EMBER_OK);
    ember_nnef_document_free(&doc);
}

/* ---------------------------------------------------------------- NNEF: errors */

static ember_status parse_text(const char *text) {
    ember_nnef_document doc;
    ember_status status = ember_nnef_parse(text, strlen(text), "plan.tgz:graph.nnef", &doc);
    if (status == EMBER_OK)
        ember_nnef_document_free(&doc);
    else
        CHECK(doc.arena == NULL && doc.graph_body == NULL); /* nothing left behind */
    return status;
}

static void test_parse_errors(void) {
    CHECK_ERROR(parse_text("version 1.0;\ngraph g(x) -> (y)\n{\n  y = conv(x, w stride = [1]);\n}\n"),
                EMBER_ERROR_FORMAT,
                "plan.tgz:graph.nnef:4:17: expected ')' after arguments of 'conv', found 'stride'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g(x) -> (y)\n{\n  y = relu(x)\n}\n"), EMBER_ERROR_FORMAT,
                "plan.tgz:graph.nnef:5:1: expected ';' after the assignment to 'y', found '}'");
    CHECK_ERROR(parse_text(""), EMBER_ERROR_FORMAT,
                "plan.tgz:graph.nnef:1:1: expected 'version' at the start of the document, found end of file");
    CHECK_ERROR(parse_text("graph g() -> () {}"), EMBER_ERROR_FORMAT, "1:1: expected 'version'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = \"open; }"), EMBER_ERROR_FORMAT,
                "2:23: unterminated string");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = b @ c; }"), EMBER_ERROR_FORMAT,
                "2:25: unexpected character '@'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = 1e; }"), EMBER_ERROR_FORMAT,
                "malformed exponent");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = 1e999; }"), EMBER_ERROR_FORMAT,
                "2:23: number literal is out of range");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = b; }\nextra"), EMBER_ERROR_FORMAT,
                "3:1: expected end of file after the graph, found 'extra'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = b;"), EMBER_ERROR_FORMAT,
                "expected '}' to close the body of 'g', found end of file");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = f(x = 1, 2); }"), EMBER_ERROR_FORMAT,
                "2:32: expected a named argument (name = value) of 'f' after named ones, found '2'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = [1, 2; }"), EMBER_ERROR_FORMAT,
                "expected ',' or ']' after array items, found ';'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = ; }"), EMBER_ERROR_FORMAT,
                "2:23: expected an expression, found ';'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { 3 = a; }"), EMBER_ERROR_FORMAT,
                "expected an identifier, '[' or '(' on the left of '='");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = x if c; }"), EMBER_ERROR_FORMAT,
                "expected 'else' after the condition of 'if', found ';'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = [for i in b i]; }"), EMBER_ERROR_FORMAT,
                "expected 'yield' in comprehension, found 'i'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = b[1; }"), EMBER_ERROR_FORMAT,
                "expected ']' after subscript, found ';'");
    CHECK_ERROR(parse_text("version 1.0;\nfragment f(x: tensor<float>) -> (y: tensor<scalar>);\ngraph g() -> () { a = b; }"),
                EMBER_ERROR_FORMAT, "2:22: expected '>' after the tensor item type, found 'float'");
    CHECK_ERROR(parse_text("version 1.0;\nfragment f(x tensor<scalar>) -> (y: scalar);\ngraph g() -> () { a = b; }"),
                EMBER_ERROR_FORMAT, "2:14: expected ':' after parameter 'x', found 'tensor'");
    CHECK_ERROR(parse_text("version 1.0;\nfragment f(x: scalar) (y: scalar);\ngraph g() -> () { a = b; }"),
                EMBER_ERROR_FORMAT, "expected '->' after the parameters of 'f', found '('");
    CHECK_ERROR(parse_text("version 1.0;\nvariable x;"), EMBER_ERROR_FORMAT,
                "2:1: expected 'graph', 'fragment' or 'extension', found 'variable'");
    CHECK_ERROR(parse_text("version one;"), EMBER_ERROR_FORMAT, "expected a version number after 'version'");
    CHECK_ERROR(parse_text("version 1.0;\ngraph g() -> () { a = \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\" b; }"),
                EMBER_ERROR_FORMAT, "found 'b'");

    /* Hostile nesting: an error, never a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(depth * 2 + 64);
    strcpy(deep, "version 1.0; graph g() -> () { a = ");
    size_t n = strlen(deep);
    memset(deep + n, '[', depth);
    strcpy(deep + n + depth, "1");
    CHECK_ERROR(parse_text(deep), EMBER_ERROR_FORMAT, "nesting is too deep");
    memset(deep + n, '-', depth); /* unary chains recurse too */
    CHECK_ERROR(parse_text(deep), EMBER_ERROR_FORMAT, "nesting is too deep");
    memset(deep + n, '(', depth);
    CHECK_ERROR(parse_text(deep), EMBER_ERROR_FORMAT, "nesting is too deep");
    strcpy(deep, "version 1.0; fragment f(x: ");
    n = strlen(deep);
    memset(deep + n, '(', depth);
    strcpy(deep + n + depth, "scalar");
    CHECK_ERROR(parse_text(deep), EMBER_ERROR_FORMAT, "nesting is too deep");
    free(deep);

    /* 200 levels is legitimate. */
    char nested[1024] = "version 1.0; graph g() -> () { a = ";
    n = strlen(nested);
    for (int i = 0; i < 200; i++)
        nested[n++] = '[';
    nested[n++] = '1';
    for (int i = 0; i < 200; i++)
        nested[n++] = ']';
    strcpy(nested + n, "; }");
    CHECK(parse_text(nested) == EMBER_OK);

    CHECK(ember_nnef_parse(NULL, 5, "x", &(ember_nnef_document){0}) == EMBER_ERROR_ARGUMENT);

    /* Long flat constructs stay linear (joined once, not item by item). */
    size_t items = 50000;
    char *wide = malloc(items * 10 + 256);
    strcpy(wide, "version 1.0; fragment f(x: scalar");
    n = strlen(wide);
    for (size_t i = 0; i < items; i++, n += 2)
        memcpy(wide + n, "[]", 2);
    strcpy(wide + n, ", t: (");
    n += strlen(wide + n);
    for (size_t i = 0; i < items; i++, n += 8)
        memcpy(wide + n, "integer,", 8);
    strcpy(wide + n - 1, ")) -> (y: scalar); graph g() -> () { a = b; }");
    ember_nnef_document doc;
    CHECK(ember_nnef_parse(wide, strlen(wide), "wide", &doc) == EMBER_OK);
    CHECK(doc.fragment_count == 1 && strlen(doc.fragments[0].params[0].type) == 6 + 2 * items);
    CHECK(doc.fragment_count == 1 && strlen(doc.fragments[0].params[1].type) == 2 + 9 * items - 2);
    ember_nnef_document_free(&doc);
    free(wide);
}

int main(int argc, char **argv) {
    if (argc > 1)
        fixtures_dir = argv[1];
    test_tract_sample();
    test_fragments();
    test_expressions();
    test_parse_errors();
    printf("%d passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
