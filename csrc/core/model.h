/*
 * csrc/core/model.h — the loaded graph: values (tensors) and nodes (operations).
 *
 * An ember_model is built once from a plan (csrc/plan turns bytes into an archive and
 * an NNEF AST; model*.c turn the AST into this) and is immutable afterwards, so any
 * number of runnables on any threads may share it.
 *
 * Values are numbered 0..value_count-1. A value is a graph input (produced by no node),
 * a constant (a `variable` read from its .dat, or an inline literal), or the output of
 * exactly one node. Nodes are kept in graph-body order, which NNEF guarantees to be a
 * topological order (an identifier must be defined before it is used), so the executor
 * simply walks them in sequence.
 *
 * Shapes are static today: every dimension is a known integer after loading. The shape
 * rule of each op (ember_op.infer) is a pure function of its input facts and
 * attributes, so symbolic dimensions can later be resolved at run time by re-running
 * the same rules once the input shapes are known.
 */
#ifndef EMBER_CORE_MODEL_H
#define EMBER_CORE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "plan/plan.h"

struct ember_op;

/* The most results one operation may assign. */
#define EMBER_MAX_RESULTS 16

/* A tensor of the graph: its fact (datum type and shape) and, for constants, its data. */
typedef struct ember_value {
    char *name;                   /* identifier in graph.nnef (owned), for messages */
    ember_datum_type datum_type;
    int32_t rank;
    int64_t shape[EMBER_MAX_RANK];
    const void *constant;         /* the items of a constant, NULL for computed values */
    void *owned;                  /* storage of an inline literal (freed with the model) */
    int integer_literal;          /* a literal of integers only ([2, 0]), stored as f32 */
    int producer;                 /* index of the producing node, -1 if none */
} ember_value;

/* One operation: an op of the op table applied to input values, giving output_count
 * values with consecutive ids output, output + 1, … (a tuple assignment `a, b = f(x)`
 * gives two), so an op's infer and run see its outputs as one array. */
typedef struct ember_node {
    const struct ember_op *op;
    const char *name;             /* the first result identifier (its value's name) */
    const char *origin;           /* "plan.tgz:graph.nnef", for messages */
    int line;                     /* line of the assignment in graph.nnef */
    int *inputs;                  /* value ids, in the op's parameter order */
    size_t input_count;
    int output;                   /* value id of the first output */
    int output_count;             /* 1, or the length of the assigned tuple */
    void *attributes;             /* op-specific struct from op->parse (malloc'd), or NULL */
} ember_node;

struct ember_model {
    /* Handles on a loaded model: the loader's and one per runnable, so ember_model_free
     * and ember_runnable_free may come in either order (a garbage collector picks one at
     * random). 0 for the models built inside the runtime (stages, bodies). */
    int references;
    ember_archive archive;        /* .dat contents stay in here: constants point into it */
    void *buffer_copy;            /* a caller's tar bytes, copied (the archive borrows) */
    char *graph_origin;           /* "<archive origin>:graph.nnef" */

    ember_value *values;
    size_t value_count, value_capacity;
    ember_node *nodes;
    size_t node_count, node_capacity;

    int *inputs;                  /* graph inputs, declaration order */
    size_t input_count;
    int *outputs;                 /* graph outputs, declaration order */
    size_t output_count;
    char **input_names;           /* identifiers of the graph declaration (owned) */
    char **output_names;

    ember_dat *dats;              /* every .dat read, for their converted storage */
    size_t dat_count, dat_capacity;

    int64_t plan_version;         /* property "ember.plan_version", 1 when absent */
    struct ember_pulse_meta *pulse; /* a pulsed plan's streaming (core/stream.h), or NULL */

    /* Symbolic plans (core/symbols.h). A model whose graph mentions a declared symbol is
     * a template: it keeps its AST, its inputs are values whose symbolic dims are -1
     * (their expressions in input_dims), and it has no nodes; each binding of the
     * symbols builds concrete models of its stages (core/model_stages.h). */
    char **symbols;               /* `extension tract_symbol S;` names (owned) */
    size_t symbol_count;
    int symbolic;                 /* a template: see above */
    ember_nnef_document doc;      /* kept by a template; empty otherwise */
    const ember_nnef_expr **input_dims; /* template: input_count × EMBER_MAX_RANK, NULL
                                           where the dim is a plain integer */
    char **input_dim_texts;       /* template: input_count × EMBER_MAX_RANK, "S+2" or NULL */
    ember_value *output_facts;    /* template: from property ember.output_facts, dims -1
                                     where symbolic; NULL when the plan does not say */
    char **output_dim_texts;      /* template: output_count × EMBER_MAX_RANK */
    size_t template_node_count;   /* the operations of a template's graph */
    struct ember_stage_plan *stage_plan; /* template: its body in stages (model_stages.h) */
    int archive_borrowed;         /* a specialisation or body reads its root's archive */
    /* Control flow (core/control.h): the body graphs its ember_if / ember_loop run,
     * loaded from documents of the archive, and where this model sits among them. */
    struct ember_model **bodies;
    char **body_names;            /* "then_3": the body read from then_3.nnef */
    size_t body_count;
    const struct ember_model *parent; /* the model whose op runs this body, or NULL */
    int depth;                    /* bodies between this model and graph.nnef */
    int is_stage;                 /* built by ember_model_build_document */
};

/* Load from an opened archive: find and parse graph.nnef, build. Takes ownership of
 * the archive in every case (closes it on failure). */
ember_status ember_model_from_archive(ember_archive *archive, ember_model **out_model);

void ember_model_destroy(ember_model *model);
/* Take and drop a handle (see `references`); the last one destroys the model. */
void ember_model_retain(const ember_model *model);
void ember_model_release(const ember_model *model);

/* An op has packed the `bytes` at `constant` (one of the model's constants) into its own
 * layout and its run never reads them: the plan's pages under them may go back to the
 * system (ember_archive_release: when the plan file is mapped; nothing otherwise). Any
 * later reader (another op, another runnable packing again) still reads the same
 * values, from the file. Thread-safe; the model is not changed. */
void ember_model_release_constant(const ember_model *model, const void *constant,
                                  size_t bytes);
/* A prepare has read what it needs of the plan: every page of a mapped plan file may go
 * back (ember_archive_release over the whole mapping). What a run reads in place comes
 * back from the file at its first touch, and stays; what only the prepare read (tar
 * headers, the small constants ops copied, the edges of packed ones, which share pages
 * with their neighbours) does not. Thread-safe, as above. */
void ember_model_release_plan(const ember_model *model);

/* The body graph of archive entry `document` of `parent`'s plan (it borrows the archive:
 * the root model must outlive it). */
ember_status ember_model_load_body(const ember_model *parent, const char *document,
                                   ember_model **out_model);

/* A concrete model built from `doc` (a stage of a template, its symbols substituted:
 * core/model_stages.c). It borrows the template's archive, so the template must outlive
 * it. */
ember_status ember_model_build_document(const ember_model *template_model,
                                        const ember_nnef_document *doc,
                                        ember_model **out_model);

/* Record "<origin>:<line>: node '<name>' (<op>): <message>" and return `status`. */
ember_status ember_node_error(const ember_node *node, ember_status status, const char *fmt,
                              ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The input value `index` of a node. */
static inline const ember_value *ember_node_input(const ember_model *model,
                                                  const ember_node *node, size_t index)
{
    return &model->values[node->inputs[index]];
}

#endif /* EMBER_CORE_MODEL_H */
