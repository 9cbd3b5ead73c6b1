/*
 * csrc/plan — reading a plan: the archive (directory, tar, gzip'd tar), the NNEF
 * tensor files (.dat) and the NNEF text (lexer, parser, AST).
 *
 * This layer knows nothing of ops or execution: it turns bytes into an AST and
 * tensors, validating every length and offset it reads, and reports errors through
 * ember_error_set (csrc/base/error.h) naming the file and, for graph.nnef, the line
 * and column. Nothing here may crash, hang or read out of bounds on any input: this
 * is the code the fuzzer targets.
 */
#ifndef EMBER_PLAN_H
#define EMBER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

/* ---------------------------------------------------------------- archive */

typedef struct ember_archive_entry {
    char *name;          /* path inside the plan, '/' separated, no leading "./" */
    const uint8_t *data; /* file contents */
    size_t size;
} ember_archive_entry;

typedef struct ember_archive {
    ember_archive_entry *entries;
    size_t count;
    uint8_t *owned;      /* storage the entries point into (NULL when borrowing) */
    char *origin;        /* path or "<memory>", for error messages */
    const uint8_t *mapped; /* a .tar opened by path, mapped read-only: the entries point
                              into it (archive_map.c); NULL otherwise */
    size_t mapped_size;
} ember_archive;

/* Open a directory (reads graph.nnef and every *.dat below it), a .tar, or a gzip'd
 * tar (detected by content, not by name). A .tar is mapped and read in place where the
 * system can map files (archive_map.c: the file must then stay unchanged while the
 * archive is open), else read into memory; a gzip'd tar is inflated into memory. */
ember_status ember_archive_open_path(const char *path, ember_archive *out);
/* Open an in-memory .tar or gzip'd tar. A tar is read in place (entries point into
 * `data`, which must outlive the archive); a gzip'd tar is inflated into owned memory. */
ember_status ember_archive_open_buffer(const void *data, size_t size, ember_archive *out);
/* The entry with this exact name, or NULL. */
const ember_archive_entry *ember_archive_find(const ember_archive *archive, const char *name);
void ember_archive_close(ember_archive *archive);
/* `size` bytes at `data` (an entry's, or part of one) will not be read again soon: when
 * they lie in the archive's mapping, give the whole pages inside them back to the
 * system (read again from the file if touched later: no value ever changes). Otherwise
 * nothing. Thread-safe: the archive is not changed (archive_map.c). */
void ember_archive_release(const ember_archive *archive, const void *data, size_t size);
/* How many of the `size` bytes at `data` are in this process's memory now: a mapped
 * range is measured page by page (Linux: /proc/self/pagemap); bytes read into memory,
 * or where residency cannot be measured, count in full. */
size_t ember_archive_resident_bytes(const ember_archive *archive, const void *data,
                                    size_t size);

/* Inflate a gzip member (RFC 1952) into a newly malloc'd buffer. The output is bounded
 * by `max_output` bytes (an error past it), so a hostile file cannot exhaust memory. */
ember_status ember_gunzip(const uint8_t *in, size_t in_size, size_t max_output,
                          uint8_t **out, size_t *out_size);

/* ---------------------------------------------------------------- .dat tensors */

/* Bytes before the items of a .dat file. */
#define EMBER_DAT_HEADER_SIZE 128

typedef struct ember_dat {
    ember_datum_type datum_type;
    int32_t rank;
    int64_t shape[EMBER_MAX_RANK];
    const void *data;     /* little-endian items, points into the archive entry ... */
    void *owned;          /* ... or into this buffer when converted (1-bit bool → u8, or misaligned items) */
    size_t byte_size;     /* bytes at `data` */
} ember_dat;

/* Parse an NNEF tensor file; `name` is used in error messages. */
ember_status ember_dat_parse(const uint8_t *bytes, size_t size, const char *name, ember_dat *out);
void ember_dat_free(ember_dat *dat);
/* The items of the archive's tensor files (every *.dat entry past its header), as
 * stored, and how many of those bytes are in memory now (ember_archive_resident_bytes). */
void ember_archive_dat_bytes(const ember_archive *archive, size_t *out_stored,
                             size_t *out_resident);

/* ---------------------------------------------------------------- NNEF AST */

typedef enum ember_nnef_expr_kind {
    EMBER_NNEF_NUMBER,     /* number literal; is_integer tells 3 from 3.0; a '-' written
                              before a literal is folded in: -1 is a NUMBER */
    EMBER_NNEF_STRING,
    EMBER_NNEF_LOGICAL,    /* true / false */
    EMBER_NNEF_IDENTIFIER, /* also tract's quoted form i"a.b", unquoted */
    EMBER_NNEF_ARRAY,      /* [a, b, …] */
    EMBER_NNEF_TUPLE,      /* (a, b, …), or a, b without parentheses on either side of = */
    EMBER_NNEF_INVOCATION, /* op<type>(args…, name = value…) */
    EMBER_NNEF_UNARY,      /* op "-" or "!" (a unary + is dropped) */
    EMBER_NNEF_BINARY,     /* op "+" "-" "*" "/" "^" "<" "<=" ">" ">=" "==" "!=" "&&" "||" "in" */
    EMBER_NNEF_IF,         /* a if c else b (or if c then a else b) — `then`, `cond`, `otherwise` */
    EMBER_NNEF_SUBSCRIPT,  /* a[i] or a[i:j] */
    EMBER_NNEF_COMPREHENSION /* [for i in a, j in b if c yield e] */
} ember_nnef_expr_kind;

typedef struct ember_nnef_expr ember_nnef_expr;

typedef struct ember_nnef_arg {
    const char *name;       /* NULL for a positional argument */
    ember_nnef_expr *value;
} ember_nnef_arg;

typedef struct ember_nnef_loop_var {
    const char *name;
    ember_nnef_expr *iterable;
} ember_nnef_loop_var;

struct ember_nnef_expr {
    ember_nnef_expr_kind kind;
    int line, column;       /* where it starts in graph.nnef, 1-based */
    union {
        struct { double value; int is_integer; } number;
        const char *string;        /* STRING (unescaped) and IDENTIFIER */
        int logical;
        struct { ember_nnef_expr **items; size_t count; } list; /* ARRAY, TUPLE */
        struct {
            const char *op;
            const char *generic_type; /* "scalar" in variable<scalar>(…), or NULL */
            ember_nnef_arg *args;
            size_t arg_count;
        } invocation;
        struct { const char *op; ember_nnef_expr *operand; } unary;
        struct { const char *op; ember_nnef_expr *left, *right; } binary;
        struct { ember_nnef_expr *then, *cond, *otherwise; } if_else;
        struct { ember_nnef_expr *base, *begin, *end; int is_range; } subscript; /* begin/end may be NULL in a range */
        struct {
            ember_nnef_loop_var *vars;
            size_t var_count;
            ember_nnef_expr *condition; /* may be NULL */
            ember_nnef_expr *yield;
        } comprehension;
    } u;
};

/* A type as written: scalar, integer, logical, string, tensor<scalar>, ?, arrays (T[])
 * and tuples ((T, U)). Kept as text: the runtime only needs it for diagnostics. */
typedef struct ember_nnef_param {
    const char *name;
    const char *type;          /* e.g. "tensor<scalar>", "integer[]" */
    ember_nnef_expr *default_value; /* NULL if none */
} ember_nnef_param;

typedef struct ember_nnef_assignment {
    ember_nnef_expr *lvalue;   /* IDENTIFIER, or ARRAY/TUPLE of identifiers */
    ember_nnef_expr *rvalue;
    int line;
} ember_nnef_assignment;

typedef struct ember_nnef_fragment {
    const char *name;
    const char *generic_param; /* "?" in fragment f<? = scalar>(…), or NULL */
    const char *generic_default; /* "scalar" in fragment f<? = scalar>(…), or NULL */
    ember_nnef_param *params;
    size_t param_count;
    ember_nnef_param *results; /* default_value always NULL */
    size_t result_count;
    ember_nnef_assignment *body; /* NULL/0 for a declaration without a body */
    size_t body_count;
    int line;
} ember_nnef_fragment;

typedef struct ember_nnef_document {
    int version_major, version_minor;
    const char **extensions;   /* each "extension a b;" contributes its words */
    size_t extension_count;
    ember_nnef_fragment *fragments;
    size_t fragment_count;
    const char *graph_name;
    const char **graph_inputs;
    size_t graph_input_count;
    const char **graph_outputs;
    size_t graph_output_count;
    ember_nnef_assignment *graph_body;
    size_t graph_body_count;
    struct ember_nnef_arena *arena; /* owns every node and string above */
} ember_nnef_document;

/* Parse graph.nnef text (not NUL-terminated). `origin` names the file in errors,
 * e.g. "model.nnef.tgz:graph.nnef". Depth of nesting is bounded, so hostile input
 * cannot overflow the stack. */
ember_status ember_nnef_parse(const char *text, size_t size, const char *origin,
                              ember_nnef_document *out);
void ember_nnef_document_free(ember_nnef_document *doc);

/* The fragment with this name, or NULL. */
const ember_nnef_fragment *ember_nnef_find_fragment(const ember_nnef_document *doc,
                                                    const char *name);

/* The arena a document's nodes and strings live in (csrc/plan/nnef_arena.c). Memory
 * from it is zeroed; NULL when out of memory. */
struct ember_nnef_arena *ember_nnef_arena_new(void);
void *ember_nnef_arena_alloc(struct ember_nnef_arena *arena, size_t size);
char *ember_nnef_arena_strdup(struct ember_nnef_arena *arena, const char *text);
void ember_nnef_arena_free(struct ember_nnef_arena *arena);

/* ---------------------------------------------------------------- flat form */

/* Rewrite the graph body of a parsed document into the flat form the model builder
 * reads (csrc/plan/nnef_flatten.c): every right side is one invocation of an op that
 * is not a compound fragment, an identifier or a literal; compound fragments (the
 * document's own and the NNEF standard library's) are inlined; operators, nested
 * invocations and `a if c else b` on tensors become invocations of their own
 * (`a + b` is add(a, b)); expressions on literals and symbols stay expressions. */
ember_status ember_nnef_flatten(ember_nnef_document *doc, const char *origin);

/* The NNEF standard library's compound fragments that ember inlines, as NNEF text
 * (csrc/plan/nnef_stdlib.c). */
extern const char ember_nnef_stdlib_text[];

/* A document as NNEF text, in a malloc'd NUL-terminated buffer (csrc/plan/nnef_print.c):
 * what the Python reader reads after flattening, so both readers share one grammar. */
ember_status ember_nnef_print(const ember_nnef_document *doc, char **text, size_t *size);

#endif /* EMBER_PLAN_H */
