/*
 * csrc/core/model_stages.h — a template's graph cut into stages at the sizes only a run
 * decides.
 *
 * An op with EMBER_OP_DECIDES_SIZE (NonZero, Unique, Compress, …) names in its `count`
 * attribute the symbol its output size is: `idx = ember_nonzero(x, count = n)`, or a list
 * of the symbols it decides: `d = ember_decide_values(v, count = [a, b])`. Nothing
 * that depends on n can be built before the op has run, so the template's body is cut
 * into stages (model_stages.c, at load): a stage ends before the first assignment that
 * reads an output of a deciding op of the same stage, or mentions a symbol such an op
 * decides. A template without deciding ops is one stage.
 *
 * A run then builds (or takes from the cache) and runs each stage in turn, as a concrete
 * model of its own: its inputs are the values it reads from earlier stages and from the
 * graph inputs (`live_in`, declared as externals of their actual shapes), it re-declares
 * the constants it reads (`imports`), and it hands on what later stages or the graph
 * outputs read (`live_out`). After a stage runs, each deciding op reports its size,
 * which binds its symbol for the stages after it.
 */
#ifndef EMBER_CORE_MODEL_STAGES_H
#define EMBER_CORE_MODEL_STAGES_H

#include <stddef.h>

#include "core/model.h"
#include "core/symbols.h"

/* A name of the template's body: one per identifier an assignment defines. */
typedef struct ember_stage_name {
    const char *name;
    size_t assignment;           /* index in doc.graph_body */
} ember_stage_name;

typedef struct ember_stage_decider {
    size_t assignment;           /* the deciding op's assignment */
    int symbol;                  /* a symbol it binds */
    size_t item;                 /* which of its `count` symbols that is */
} ember_stage_decider;

typedef struct ember_stage {
    size_t *body;                /* assignments computed here, in order */
    size_t body_count;
    size_t *imports;             /* constant assignments re-declared here, in order */
    size_t import_count;
    int *live_in;                /* name ids read from the graph inputs or earlier stages */
    size_t live_in_count;
    int *live_out;               /* name ids defined here, read later or graph outputs */
    size_t live_out_count;
    ember_stage_decider *deciders;
    size_t decider_count;
    struct ember_control *control; /* a stage of one control op (core/control.h), or NULL */
} ember_stage;

typedef struct ember_stage_plan {
    ember_stage *stages;
    size_t stage_count;
    ember_stage_name *names;     /* name ids: every defined identifier */
    size_t name_count;
    int *output_names;           /* name id of each graph output */
    int *input_names;            /* name id of each graph input */
} ember_stage_plan;

/* Cut the template's body into stages. */
ember_status ember_stage_plan_build(const ember_model *template_model, ember_stage_plan *plan);
void ember_stage_plan_free(ember_stage_plan *plan);

/* The concrete model of stage `s` for `binding` (every symbol the stage needs bound),
 * its live-in values being of the facts `live_in_facts` (one per stage->live_in). */
ember_status ember_stage_specialize(const ember_model *template_model, size_t s,
                                    const ember_binding *binding,
                                    const ember_tensor *live_in_facts,
                                    ember_model **out_model);

#endif /* EMBER_CORE_MODEL_STAGES_H */
