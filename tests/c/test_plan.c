/*
 * tests/c/test_plan.c — the plan layer (csrc/plan): NNEF parser, tar/tgz/directory
 * archives, the DEFLATE/gzip decoder and .dat tensor files.
 *
 *     build/host/tests/test_plan [fixtures-dir]     (default: tests/c/fixtures)
 *
 * The fixtures are written by tests/c/fixtures/make_fixtures.py with Python's gzip
 * and tarfile; everything else (broken tars, .dat files, NNEF text) is built here.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "plan/plan.h"

static int passed, failures;
static const char *fixtures_dir = "tests/c/fixtures";

static void check(int ok, const char *what, const char *file, int line) {
    if (ok) {
        passed++;
        return;
    }
    failures++;
    fprintf(stderr, "%s:%d: FAILED: %s\n    last error: %s\n", file, line, what, ember_error_message());
}
#define CHECK(cond) check((cond) != 0, #cond, __FILE__, __LINE__)

static void check_text(const char *actual, const char *expected, const char *file, int line) {
    int ok = actual && strcmp(actual, expected) == 0;
    check(ok, expected, file, line);
    if (!ok)
        fprintf(stderr, "    expected: %s\n    actual:   %s\n", expected, actual ? actual : "(null)");
}
#define CHECK_TEXT(actual, expected) check_text((actual), (expected), __FILE__, __LINE__)

/* The last error must contain `part`. */
static void check_error(ember_status status, ember_status expected, const char *part, const char *file,
                        int line) {
    int ok = status == expected && strstr(ember_error_message(), part) != NULL;
    check(ok, part, file, line);
    if (!ok)
        fprintf(stderr, "    status %d (want %d), message: %s\n", status, expected, ember_error_message());
}
#define CHECK_ERROR(status, expected, part) check_error((status), (expected), (part), __FILE__, __LINE__)

/* ---------------------------------------------------------------- helpers */

static uint8_t *read_fixture(const char *name, size_t *size) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open fixture %s\n", path);
        failures++;
        *size = 0;
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(length > 0 ? (size_t)length : 1);
    *size = fread(data, 1, (size_t)length, f);
    fclose(f);
    return data;
}

/* Must match payload() in tests/c/fixtures/make_fixtures.py. */
static char *payload_text(size_t *length) {
    size_t capacity = 32 * 2000, n = 0;
    char *text = malloc(capacity);
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(text + n, capacity - n, "%d:%d\n", i, (i * 7919) % 1009);
    *length = n;
    return text;
}

static uint32_t test_crc32(const uint8_t *p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

static void store_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

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

/* ---------------------------------------------------------------- gzip */

static void check_gunzip_fixture(const char *name, const uint8_t *expected, size_t expected_size) {
    size_t size;
    uint8_t *gz = read_fixture(name, &size);
    uint8_t *out = NULL;
    size_t out_size = 0;
    ember_status status = ember_gunzip(gz, size, (size_t)1 << 30, &out, &out_size);
    CHECK(status == EMBER_OK);
    CHECK(out_size == expected_size && out && memcmp(out, expected, expected_size) == 0);
    if (status != EMBER_OK || out_size != expected_size)
        fprintf(stderr, "    fixture %s: %zu bytes, expected %zu\n", name, out_size, expected_size);
    free(out);
    free(gz);
}

static ember_status gunzip_status(const uint8_t *gz, size_t size, size_t max_output) {
    uint8_t *out = (uint8_t *)"sentinel";
    size_t out_size = 12345;
    ember_status status = ember_gunzip(gz, size, max_output, &out, &out_size);
    if (status == EMBER_OK)
        free(out);
    else
        CHECK(out_size == 12345); /* outputs untouched on failure */
    return status;
}

static void test_gzip_fixtures(void) {
    size_t payload_size;
    char *payload = payload_text(&payload_size);
    check_gunzip_fixture("payload_level0.gz", (uint8_t *)payload, payload_size); /* stored */
    check_gunzip_fixture("payload_level1.gz", (uint8_t *)payload, payload_size); /* dynamic */
    check_gunzip_fixture("payload_level9.gz", (uint8_t *)payload, payload_size); /* dynamic */
    const char *fixed = "ember ember ember ember, fixed Huffman codes";
    check_gunzip_fixture("fixed.gz", (const uint8_t *)fixed, strlen(fixed));
    const char *two = "first member\nsecond\n";
    check_gunzip_fixture("two_members.gz", (const uint8_t *)two, strlen(two));
    check_gunzip_fixture("header_fields.gz", (const uint8_t *)"header fields", 13);
    free(payload);
}

static void test_gzip_corruption(void) {
    size_t size;
    uint8_t *gz = read_fixture("payload_level9.gz", &size);
    if (!gz)
        return;
    uint8_t *copy = malloc(size + 16);
    size_t payload_size;
    free(payload_text(&payload_size));

    memcpy(copy, gz, size);
    copy[size - 8] ^= 1;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "CRC-32 mismatch");
    memcpy(copy, gz, size);
    copy[size - 4] ^= 1;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "size mismatch");
    CHECK_ERROR(gunzip_status(gz, size, payload_size - 1), EMBER_ERROR_FORMAT, "exceeds the limit");
    CHECK(gunzip_status(gz, size, payload_size) == EMBER_OK);
    memcpy(copy, gz, size);
    memcpy(copy + size, "junk", 4);
    CHECK_ERROR(gunzip_status(copy, size + 4, 1 << 30), EMBER_ERROR_FORMAT, "garbage after the data");
    memset(copy + size, 0, 16); /* zero padding after the member is accepted */
    CHECK(gunzip_status(copy, size + 16, 1 << 30) == EMBER_OK);
    memcpy(copy, gz, size);
    copy[0] = 0x1e;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "bad magic");
    memcpy(copy, gz, size);
    copy[2] = 7;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "unknown compression method");
    memcpy(copy, gz, size);
    copy[3] = 0x20;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "reserved header flags");

    /* Every truncation fails cleanly. */
    int truncations_rejected = 1;
    for (size_t n = 0; n < size; n++)
        if (gunzip_status(gz, n, 1 << 30) != EMBER_ERROR_FORMAT)
            truncations_rejected = 0;
    CHECK(truncations_rejected);

    /* Flipped bits anywhere in the compressed data: an error (a bad code, or output
     * the CRC rejects), never a crash. Only the padding bits after the last code may
     * change without consequence, so success must still mean the right output. */
    int flips_safe = 1;
    char *payload = payload_text(&payload_size);
    for (size_t at = 10; at < size - 8; at += 7) {
        memcpy(copy, gz, size);
        copy[at] ^= (uint8_t)(1u << (at % 8));
        uint8_t *out = NULL;
        size_t out_size = 0;
        if (ember_gunzip(copy, size, 1 << 30, &out, &out_size) == EMBER_OK &&
            (out_size != payload_size || memcmp(out, payload, payload_size) != 0))
            flips_safe = 0;
        free(out);
    }
    free(payload);
    CHECK(flips_safe);

    /* Garbage after a valid header. */
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        memcpy(copy, gz, 10);
        for (size_t i = 10; i < 300; i++)
            copy[i] = (uint8_t)rand();
        CHECK(gunzip_status(copy, 300, 1 << 20) != EMBER_OK);
    }
    free(copy);
    free(gz);
}

/* A gzip member around a hand-written raw DEFLATE stream. */
static size_t wrap_gzip(const uint8_t *deflate, size_t size, const uint8_t *data, size_t data_size,
                        uint8_t *out) {
    static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(out, header, 10);
    memcpy(out + 10, deflate, size);
    store_le32(out + 10 + size, test_crc32(data, data_size));
    store_le32(out + 14 + size, (uint32_t)data_size);
    return size + 18;
}

static void test_deflate_by_hand(void) {
    uint8_t gz[64], *out = NULL;
    size_t out_size;
    /* Two stored blocks: "abc" (not final), then "de" (final). */
    const uint8_t stored[] = {0x00, 3, 0, 0xfc, 0xff, 'a', 'b', 'c', 0x01, 2, 0, 0xfd, 0xff, 'd', 'e'};
    size_t n = wrap_gzip(stored, sizeof stored, (const uint8_t *)"abcde", 5, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 5 && memcmp(out, "abcde", 5) == 0);
    free(out);
    /* An empty stored block: empty output is fine. */
    const uint8_t empty[] = {0x01, 0, 0, 0xff, 0xff};
    n = wrap_gzip(empty, sizeof empty, NULL, 0, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 0);
    free(out);
    /* LEN and NLEN disagree. */
    const uint8_t bad_nlen[] = {0x01, 3, 0, 0xfc, 0xfe, 'a', 'b', 'c'};
    n = wrap_gzip(bad_nlen, sizeof bad_nlen, (const uint8_t *)"abc", 3, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "does not match its complement");
    /* Block type 3 is reserved. */
    const uint8_t reserved[] = {0x07, 0, 0, 0};
    n = wrap_gzip(reserved, sizeof reserved, NULL, 0, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "invalid block type 3");
    /* Fixed block: literal 'a' then a match of length 3 at distance 2 ("ab" → "ababa")
     * hand-encoded: header 1,01; 'a' = 0x91 (8 bits), 'b' = 0x92, len 3 = code 257
     * (7 bits 0000001), dist 2 = code 1 (5 bits 00001), EOB = 0000000. */
    const uint8_t fixed[] = {0x4b, 0x4c, 0x02, 0x42, 0x00};
    n = wrap_gzip(fixed, sizeof fixed, (const uint8_t *)"ababa", 5, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 5 && memcmp(out, "ababa", 5) == 0);
    free(out);
    /* The same match at distance 3, before the start of the output. */
    const uint8_t too_far[] = {0x4b, 0x4c, 0x02, 0x22, 0x00};
    n = wrap_gzip(too_far, sizeof too_far, (const uint8_t *)"ababa", 5, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "before the start of the output");
    CHECK(ember_gunzip(NULL, 10, 100, &out, &out_size) == EMBER_ERROR_ARGUMENT);
    CHECK_ERROR(gunzip_status((const uint8_t *)"\x1f\x8b", 2, 100), EMBER_ERROR_FORMAT, "too short");
}

/* ---------------------------------------------------------------- tar */

typedef struct tar_builder {
    uint8_t data[16384];
    size_t size;
} tar_builder;

static void octal(char *field, size_t width, uint64_t value) {
    snprintf(field, width, "%0*llo", (int)width - 1, (unsigned long long)value);
}

static uint8_t *tar_header(tar_builder *t, const char *name, uint64_t size, char type, const char *prefix) {
    uint8_t *h = t->data + t->size;
    memset(h, 0, 512);
    memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
    octal((char *)h + 100, 8, 0644);
    octal((char *)h + 108, 8, 0);
    octal((char *)h + 116, 8, 0);
    octal((char *)h + 124, 12, size);
    octal((char *)h + 136, 12, 0);
    h[156] = (uint8_t)type;
    memcpy(h + 257, "ustar\0" "00", 8);
    if (prefix)
        memcpy(h + 345, prefix, strlen(prefix));
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    t->size += 512;
    return h;
}

static void tar_reseal(uint8_t *h) {
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

static void tar_file(tar_builder *t, const char *name, const void *data, size_t size, char type) {
    tar_header(t, name, size, type, NULL);
    memcpy(t->data + t->size, data, size);
    t->size += (size + 511) / 512 * 512;
}

static void tar_end(tar_builder *t) {
    memset(t->data + t->size, 0, 1024);
    t->size += 1024;
}

static void test_tar_by_hand(void) {
    static tar_builder t;
    ember_archive archive;
    memset(&t, 0, sizeof t);
    tar_file(&t, "./graph.nnef", "version 1.0;", 12, '0');
    tar_file(&t, "dir/", "", 0, '5');
    tar_header(&t, "w.dat", 3, '0', "deep/er");
    memcpy(t.data + t.size, "xyz", 3);
    t.size += 512;
    tar_file(&t, "././/two.dat", "2", 1, '\0'); /* old-style type NUL */
    const char *long_name = "a/very/long/name/that/does/not/fit/in/the/one/hundred/byte/name/field/of/a/ustar/header/file.dat";
    tar_file(&t, "././@LongLink", long_name, strlen(long_name) + 1, 'L');
    tar_file(&t, "truncated-name", "long", 4, '0');
    const char pax[] = "32 path=pax/overridden/name.dat\n";
    tar_file(&t, "PaxHeaders/x", pax, strlen(pax), 'x');
    tar_file(&t, "ignored-name", "pax", 3, '0');
    tar_file(&t, "w.dat", "later", 5, '0'); /* a later entry replaces an earlier one */
    tar_file(&t, "link", "", 0, '2');
    tar_end(&t);
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK);
    CHECK(archive.count == 6);
    if (archive.count == 6) {
        CHECK_TEXT(archive.entries[0].name, "graph.nnef");
        CHECK(archive.entries[0].size == 12 && archive.entries[0].data == t.data + 512);
        CHECK_TEXT(archive.entries[1].name, "deep/er/w.dat");
        CHECK_TEXT(archive.entries[2].name, "two.dat");
        CHECK_TEXT(archive.entries[3].name, long_name);
        CHECK(archive.entries[3].size == 4 && memcmp(archive.entries[3].data, "long", 4) == 0);
        CHECK_TEXT(archive.entries[4].name, "pax/overridden/name.dat");
        CHECK(archive.entries[4].size == 3 && memcmp(archive.entries[4].data, "pax", 3) == 0);
    }
    const ember_archive_entry *w = ember_archive_find(&archive, "w.dat");
    CHECK(w && w->size == 5 && memcmp(w->data, "later", 5) == 0);
    CHECK(ember_archive_find(&archive, "dir") == NULL && ember_archive_find(&archive, "link") == NULL);
    CHECK(archive.owned == NULL);
    CHECK_TEXT(archive.origin, "<memory>");
    ember_archive_close(&archive);
    ember_archive_close(&archive); /* cleared: closing twice is harmless */

    /* GNU base-256 size field. */
    memset(&t, 0, sizeof t);
    uint8_t *h = tar_header(&t, "big.dat", 0, '0', NULL);
    memset(h + 124, 0, 12);
    h[124] = 0x80;
    h[135] = 5;
    tar_reseal(h);
    memcpy(t.data + t.size, "12345", 5);
    t.size += 512;
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK && archive.count == 1 &&
          archive.entries[0].size == 5);
    ember_archive_close(&archive);

    /* An entry claiming more bytes than remain. */
    memset(&t, 0, sizeof t);
    tar_header(&t, "x.dat", 4096, '0', NULL);
    t.size += 100;
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: tar entry 'x.dat' claims 4096 bytes but only 100 remain");
    CHECK(archive.entries == NULL && archive.count == 0);

    /* A bad checksum. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    t.data[0] = 'G';
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: not a tar archive (bad header checksum)");
    /* ...in the second header. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    tar_file(&t, "w.dat", "y", 1, '0');
    t.data[1024 + 3] = 'Q';
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: corrupt tar header at offset 1024");

    /* A size that is not octal. */
    memset(&t, 0, sizeof t);
    h = tar_header(&t, "x.dat", 0, '0', NULL);
    memcpy(h + 124, "0000000009x", 11);
    tar_reseal(h);
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "invalid size field");

    /* A header cut short. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    tar_file(&t, "w.dat", "x", 1, '0');
    CHECK_ERROR(ember_archive_open_buffer(t.data, 300, &archive), EMBER_ERROR_FORMAT,
                "<memory>: not a tar archive (300 bytes, less than one header)");
    CHECK_ERROR(ember_archive_open_buffer(t.data, 512 + 512 + 300, &archive), EMBER_ERROR_FORMAT,
                "<memory>: tar header at offset 1024 is truncated");
    /* Missing final padding of the last entry is tolerated. */
    CHECK(ember_archive_open_buffer(t.data, 1024 + 513, &archive) == EMBER_OK && archive.count == 2);
    ember_archive_close(&archive);

    /* Malformed pax record. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "pax", "99 path=x\n", 10, 'x');
    tar_file(&t, "x", "x", 1, '0');
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "malformed pax header record");

    /* pax size= overrides the header size. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "pax", "10 size=7\n", 10, 'x');
    tar_file(&t, "s.dat", "sevenB!", 0, '0');
    memcpy(t.data + t.size, "sevenB!", 7);
    t.size += 512;
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK && archive.count == 1 &&
          archive.entries[0].size == 7);
    ember_archive_close(&archive);

    CHECK_ERROR(ember_archive_open_buffer("", 0, &archive), EMBER_ERROR_FORMAT, "empty");
    uint8_t garbage[3000];
    srand(3);
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)rand();
    CHECK_ERROR(ember_archive_open_buffer(garbage, sizeof garbage, &archive), EMBER_ERROR_FORMAT,
                "not a tar archive");
    uint8_t zeros[1024] = {0};
    CHECK(ember_archive_open_buffer(zeros, sizeof zeros, &archive) == EMBER_OK && archive.count == 0);
    ember_archive_close(&archive);
    CHECK(ember_archive_open_buffer(NULL, 10, &archive) == EMBER_ERROR_ARGUMENT);
}

static void check_plan_entries(const ember_archive *archive, const char *what) {
    const ember_archive_entry *graph = ember_archive_find(archive, "graph.nnef");
    const ember_archive_entry *w = ember_archive_find(archive, "layer/w.dat");
    CHECK(graph && w);
    if (!graph || !w) {
        fprintf(stderr, "    in %s\n", what);
        return;
    }
    ember_nnef_document doc;
    CHECK(ember_nnef_parse((const char *)graph->data, graph->size, "graph.nnef", &doc) == EMBER_OK);
    CHECK(doc.graph_body_count == 3);
    ember_nnef_document_free(&doc);
    ember_dat dat;
    CHECK(ember_dat_parse(w->data, w->size, "layer/w.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F32 && dat.rank == 2 && dat.shape[0] == 2 && dat.shape[1] == 3);
    CHECK(dat.byte_size == 24 && ((const float *)dat.data)[5] == 6.0f);
    ember_dat_free(&dat);
}

static void test_tar_fixtures(void) {
    static const char *const fixtures[] = {"plan_ustar.tar", "plan_gnu.tar", "plan_pax.tar", "plan.tgz"};
    static const char long_dir[] = "a_rather_long_directory_name_that_goes_on/a_rather_long_directory_name_that_goes_on/"
                                   "a_rather_long_directory_name_that_goes_on/";
    for (size_t i = 0; i < 4; i++) {
        size_t size;
        uint8_t *bytes = read_fixture(fixtures[i], &size);
        ember_archive archive;
        CHECK(ember_archive_open_buffer(bytes, size, &archive) == EMBER_OK);
        check_plan_entries(&archive, fixtures[i]);
        CHECK((archive.owned != NULL) == (i == 3)); /* only the tgz is inflated into owned memory */
        ember_archive_close(&archive);

        char path[512];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir, fixtures[i]);
        CHECK(ember_archive_open_path(path, &archive) == EMBER_OK);
        check_plan_entries(&archive, path);
        CHECK_TEXT(archive.origin, path);
        char name[256];
        const char *extra[] = {"x.dat", "gnu.dat", "pax.dat"};
        if (i < 3) {
            snprintf(name, sizeof name, "%s%s", long_dir, extra[i]);
            CHECK(ember_archive_find(&archive, name) != NULL);
            CHECK(archive.count == (i == 2 ? 4u : 3u));
        }
        if (i == 2)
            CHECK(ember_archive_find(&archive, "caf\xc3\xa9.dat") != NULL);
        ember_archive_close(&archive);
        free(bytes);
    }

    /* Damage inside a tgz is reported with the origin. */
    size_t size;
    uint8_t *tgz = read_fixture("plan.tgz", &size);
    if (tgz) {
        tgz[size - 3] ^= 0xff;
        ember_archive archive;
        CHECK_ERROR(ember_archive_open_buffer(tgz, size, &archive), EMBER_ERROR_FORMAT, "<memory>: gzip: size mismatch");
        CHECK_ERROR(ember_archive_open_buffer(tgz, size / 2, &archive), EMBER_ERROR_FORMAT, "<memory>: ");
        free(tgz);
    }
}

/* ---------------------------------------------------------------- directories */

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_directory(void) {
    char dir[] = "/tmp/ember_test_plan_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char sub[600], subsub[700];
    snprintf(sub, sizeof sub, "%s/layer", dir);
    snprintf(subsub, sizeof subsub, "%s/layer/deep", dir);
    mkdir(sub, 0700);
    mkdir(subsub, 0700);
    write_file(dir, "graph.nnef", "version 1.0;");
    write_file(dir, "README", "not part of the plan");
    write_file(dir, "a.dat", "A");
    write_file(dir, "layer/w.dat", "WW");
    write_file(dir, "layer/deep/z.dat", "ZZZ");
    write_file(dir, "layer/graph.nnef", "only the root graph counts");

    ember_archive archive;
    CHECK(ember_archive_open_path(dir, &archive) == EMBER_OK);
    CHECK(archive.count == 4);
    if (archive.count == 4) { /* sorted by name */
        CHECK_TEXT(archive.entries[0].name, "a.dat");
        CHECK_TEXT(archive.entries[1].name, "graph.nnef");
        CHECK_TEXT(archive.entries[2].name, "layer/deep/z.dat");
        CHECK_TEXT(archive.entries[3].name, "layer/w.dat");
        CHECK(archive.entries[2].size == 3 && memcmp(archive.entries[2].data, "ZZZ", 3) == 0);
        CHECK(archive.entries[1].size == 12 && memcmp(archive.entries[1].data, "version 1.0;", 12) == 0);
    }
    CHECK_TEXT(archive.origin, dir);
    ember_archive_close(&archive);

    char missing[600];
    snprintf(missing, sizeof missing, "%s/does-not-exist.tgz", dir);
    CHECK_ERROR(ember_archive_open_path(missing, &archive), EMBER_ERROR_IO, "does-not-exist.tgz");

    /* A plan file given by path: read into memory, then as a buffer. */
    char tar_path[600];
    snprintf(tar_path, sizeof tar_path, "%s/README", dir);
    CHECK_ERROR(ember_archive_open_path(tar_path, &archive), EMBER_ERROR_FORMAT, "/README: not a tar archive (20 bytes, less than one header)");

    char cleanup[800];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    CHECK(system(cleanup) == 0);
}

/* ---------------------------------------------------------------- .dat */

/* A .dat file into `out` (which the caller keeps 8-byte aligned); returns its size. */
static size_t make_dat(uint8_t *out, unsigned item_type, unsigned bits, unsigned rank, const uint32_t *extents,
                       const void *data, size_t data_size) {
    memset(out, 0, 128);
    out[0] = 0x4e;
    out[1] = 0xef;
    out[2] = 1;
    store_le32(out + 4, (uint32_t)data_size);
    store_le32(out + 8, rank);
    for (unsigned i = 0; i < rank && i < 8; i++)
        store_le32(out + 12 + 4 * i, extents[i]);
    store_le32(out + 44, bits);
    out[48] = (uint8_t)item_type;
    if (data_size)
        memcpy(out + 128, data, data_size);
    return 128 + data_size;
}

static uint64_t dat_buffer[1024];

static void test_dat_integers(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    static const struct {
        unsigned item_type, bits;
        ember_datum_type expected;
    } kinds[] = {
        {4, 8, EMBER_I8}, {4, 16, EMBER_I16}, {4, 32, EMBER_I32}, {4, 64, EMBER_I64},
        {1, 8, EMBER_U8}, {1, 16, EMBER_U16}, {1, 32, EMBER_U32}, {1, 64, EMBER_U64},
        {3, 8, EMBER_I8}, {2, 8, EMBER_U8}, {0, 32, EMBER_F32},
    };
    uint8_t items[6 * 8];
    for (size_t i = 0; i < sizeof items; i++)
        items[i] = (uint8_t)(i * 37 + 1);
    uint32_t extents[2] = {2, 3};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t data_size = 6 * kinds[k].bits / 8;
        size_t size = make_dat(buf, kinds[k].item_type, kinds[k].bits, 2, extents, items, data_size);
        ember_dat dat;
        CHECK(ember_dat_parse(buf, size, "t.dat", &dat) == EMBER_OK);
        CHECK(dat.datum_type == kinds[k].expected && dat.rank == 2 && dat.shape[0] == 2 && dat.shape[1] == 3);
        CHECK(dat.byte_size == data_size && memcmp(dat.data, items, data_size) == 0);
        CHECK(dat.data == buf + 128 && dat.owned == NULL); /* read in place */
        ember_dat_free(&dat);
    }
    /* Misaligned in the archive: copied so the items are aligned. */
    uint8_t *odd = buf + 1;
    size_t size = make_dat(odd, 4, 32, 2, extents, items, 24);
    ember_dat dat;
    CHECK(ember_dat_parse(odd, size, "odd.dat", &dat) == EMBER_OK);
    CHECK(dat.owned != NULL && dat.data == dat.owned && ((uintptr_t)dat.data % 4) == 0);
    CHECK(memcmp(dat.data, items, 24) == 0);
    ember_dat_free(&dat);
    CHECK(dat.owned == NULL && dat.data == NULL);
    /* The tract vendor code is accepted. */
    size = make_dat(buf, 4, 64, 2, extents, items, 48);
    buf[50] = 'R';
    buf[51] = 'T';
    CHECK(ember_dat_parse(buf, size, "tract.dat", &dat) == EMBER_OK && dat.datum_type == EMBER_I64);
    ember_dat_free(&dat);
}

static void test_dat_conversions(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    ember_dat dat;
    uint32_t six[1] = {6};
    const uint16_t halves[6] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x7e00};
    size_t size = make_dat(buf, 0, 16, 1, six, halves, sizeof halves);
    /* f16 and f64 stay as they are, read in place. */
    CHECK(ember_dat_parse(buf, size, "h.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F16 && dat.byte_size == 12 && dat.owned == NULL);
    CHECK(dat.data && memcmp(dat.data, halves, sizeof halves) == 0);
    ember_dat_free(&dat);

    const double doubles[3] = {1.5, -1e300, 3.25};
    uint32_t three[1] = {3};
    size = make_dat(buf, 0, 64, 1, three, doubles, sizeof doubles);
    CHECK(ember_dat_parse(buf, size, "d.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F64 && dat.byte_size == 24);
    CHECK(dat.data && memcmp(dat.data, doubles, sizeof doubles) == 0);
    ember_dat_free(&dat);

    /* 1-bit bools, most significant bit first: 10 items 1,0,1,1,0,0,0,1 | 1,1. */
    const uint8_t bits[2] = {0xb1, 0xc0};
    uint32_t ten[1] = {10};
    size = make_dat(buf, 5, 1, 1, ten, bits, 2);
    CHECK(ember_dat_parse(buf, size, "b.dat", &dat) == EMBER_OK);
    const uint8_t unpacked[10] = {1, 0, 1, 1, 0, 0, 0, 1, 1, 1};
    CHECK(dat.datum_type == EMBER_BOOL && dat.byte_size == 10 && dat.data && memcmp(dat.data, unpacked, 10) == 0);
    ember_dat_free(&dat);

    /* 8-bit bools in place, normalised to 0/1 when they are not. */
    const uint8_t bytes01[3] = {0, 1, 1}, bytes02[3] = {0, 2, 255};
    size = make_dat(buf, 5, 8, 1, three, bytes01, 3);
    CHECK(ember_dat_parse(buf, size, "b8.dat", &dat) == EMBER_OK && dat.data == buf + 128);
    ember_dat_free(&dat);
    size = make_dat(buf, 5, 8, 1, three, bytes02, 3);
    CHECK(ember_dat_parse(buf, size, "b8.dat", &dat) == EMBER_OK && dat.owned && memcmp(dat.data, bytes01, 3) == 0);
    ember_dat_free(&dat);

    /* Rank 0 is one item; a zero extent is no items. */
    const float one = 4.5f;
    size = make_dat(buf, 0, 32, 0, NULL, &one, 4);
    CHECK(ember_dat_parse(buf, size, "s.dat", &dat) == EMBER_OK && dat.rank == 0 && dat.byte_size == 4 &&
          *(const float *)dat.data == 4.5f);
    ember_dat_free(&dat);
    uint32_t empty[2] = {0, 3};
    size = make_dat(buf, 0, 32, 2, empty, NULL, 0);
    CHECK(ember_dat_parse(buf, size, "e.dat", &dat) == EMBER_OK && dat.byte_size == 0 && dat.shape[0] == 0);
    ember_dat_free(&dat);
}

static void test_dat_errors(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    uint8_t items[64] = {0};
    uint32_t extents[2] = {4, 3};
    ember_dat dat;
    size_t size = make_dat(buf, 0, 32, 2, extents, items, 48);
    CHECK(ember_dat_parse(buf, size, "w.dat", &dat) == EMBER_OK);
    ember_dat_free(&dat);

    CHECK_ERROR(ember_dat_parse(buf, 100, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: 100 bytes, shorter than the 128-byte header");
    buf[0] = 0;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "w.dat: bad magic 00 ef");
    buf[0] = 0x4e;
    buf[2] = 2;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "unsupported .dat version 2");
    buf[2] = 1;
    buf[8] = 9;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "w.dat: rank 9 exceeds 8");
    buf[8] = 1; /* rank 1 but a second extent set */
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "extent 1 is 3 beyond rank 1");
    buf[8] = 2;
    buf[4] ^= 0x10; /* data length disagrees with the shape */
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: header says 32 data bytes, but 12 items of 32 bits need 48");
    buf[4] ^= 0x10;
    CHECK_ERROR(ember_dat_parse(buf, size - 5, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: file holds 43 data bytes, header says 48");
    CHECK_ERROR(ember_dat_parse(buf, size + 4, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: file holds 52 data bytes, header says 48");
    buf[50] = 7;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "unknown item type vendor 0x7");
    buf[50] = 0;
    buf[44] = 24;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_UNSUPPORTED,
                "unsupported item type 0 with 24 bits");
    buf[44] = 32;
    buf[48] = 9;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_UNSUPPORTED, "unsupported item type 9");

    /* Extents whose product overflows 64 bits. */
    uint32_t huge[8] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 2, 1, 1, 1, 1};
    size = make_dat(buf, 0, 32, 8, huge, items, 0);
    CHECK_ERROR(ember_dat_parse(buf, size, "h.dat", &dat), EMBER_ERROR_FORMAT, "product of the extents overflows");
    uint32_t big[2] = {0xffffffffu, 0xffffffffu}; /* fits in 64 bits, but not the data */
    size = make_dat(buf, 0, 64, 2, big, items, 0);
    CHECK_ERROR(ember_dat_parse(buf, size, "h.dat", &dat), EMBER_ERROR_FORMAT, "");
    CHECK(ember_dat_parse(NULL, 10, "x", &dat) == EMBER_ERROR_ARGUMENT);
}

int main(int argc, char **argv) {
    if (argc > 1)
        fixtures_dir = argv[1];
    test_tract_sample();
    test_fragments();
    test_expressions();
    test_parse_errors();
    test_gzip_fixtures();
    test_gzip_corruption();
    test_deflate_by_hand();
    test_tar_by_hand();
    test_tar_fixtures();
    test_directory();
    test_dat_integers();
    test_dat_conversions();
    test_dat_errors();
    printf("%d passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
