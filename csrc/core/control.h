/*
 * csrc/core/control.h — control flow: ops that run body graphs.
 *
 *   (y, …) = ember_if(cond, [a, …], then = "then_3", else = "else_3",
 *                     shapes = [[N, IF_0], …], count = [IF_0, …])
 *   (c, …, s, …) = ember_loop(trip_count, cond, [c0, …], [o, …], body = "body_5",
 *                             shapes = […], count = […])
 *   (c, …, s, …) = ember_scan([c0, …], [x, …], [o, …], body = "body_7",
 *                             scan_axes = […], scan_reverse = […], output_axes = […],
 *                             output_reverse = […], shapes = […], count = […])
 *
 * A body is a complete NNEF graph in its own document of the plan archive, "then_3.nnef",
 * loaded with the plan (so a bad body fails the load) as a model of its own, which may
 * have symbols and control flow of its own (nesting is bounded, recursion refused).
 *
 * ember_if runs `then` when cond (bool, or a number: nonzero) is true, else `else`, on
 * the inputs [a, …]; the results are that body's outputs. ember_loop follows ONNX Loop:
 * the body takes (iteration i64, condition bool, carried…, outer…) and gives (condition,
 * carried…, scan outputs…); it runs while the iteration is below trip_count (an i64
 * scalar, or -1 for no limit) and the condition (a bool scalar, or true) holds; the
 * results are the last carried values, then each scan output stacked on a new axis 0.
 * Without a condition input (cond = true), the body's condition is ignored. ember_scan
 * follows ONNX Scan: the body takes (states…, one item of each scan input…, outer…) and
 * gives (states…, one item of each scan output…); an item is the input at one index of
 * its axis, the axis removed (backwards where scan_reverse is 1), and the inputs' lengths
 * along their axes, which must agree, count the iterations. The results are the last
 * states, then each scan output's items stacked on a new axis (output_axes, negative
 * counted from the result's rank; reversed where output_reverse is 1).
 *
 * `shapes` gives each result's shape in the plan's symbols; the symbols of `count` are
 * bound from the shapes a run gives (a dim spelled as one of them), and every other dim
 * is checked against its expression, so the stages after the op are built for what it
 * actually gave. Operands are identifiers of computed values or graph inputs (the cook
 * copies a constant first) or, for trip_count and cond, literals.
 *
 * Such an op is a stage of its own in a template (core/model_stages.h): the runnable
 * calls ember_control_run for it, with a runnable per body, kept across runs.
 */
#ifndef EMBER_CORE_CONTROL_H
#define EMBER_CORE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/symbols.h"

/* A branch left empty (then = ""): the cook could not type it for the plan's inputs, and
 * a run that takes it fails with its `then_error` / `else_error` message. */
#define EMBER_NO_BODY ((size_t)-1)

/* The most scan inputs an ember_scan may have. */
#define EMBER_MAX_CONTROL_SCANS 64

/* How deep bodies may nest (a body of a body of …). */
#define EMBER_MAX_BODY_DEPTH 16

typedef enum ember_control_kind {
    EMBER_CONTROL_IF,
    EMBER_CONTROL_LOOP,
    EMBER_CONTROL_SCAN
} ember_control_kind;

/* An operand: a value of the template (name id of its stage plan) or a literal. */
typedef struct ember_control_operand {
    int name;                    /* name id, or -1 for a literal */
    int64_t literal;
} ember_control_operand;

typedef struct ember_control {
    ember_control_kind kind;
    const ember_nnef_assignment *assignment;
    size_t bodies[2];            /* indices in model->bodies: then, else (or body twice) */
    ember_control_operand trip_count, cond;     /* loops */
    ember_control_operand *operands;            /* if: inputs; loop: carried, then outer;
                                                   scan: states, scan inputs, outer */
    size_t operand_count, carried_count;
    size_t scan_count;                          /* scan: scan inputs */
    int *scan_axes, *scan_reverse;              /* scan: per scan input */
    int *output_axes, *output_reverse;          /* scan: per scan output (axes as given) */
    int *results;                /* name ids of the assigned results */
    size_t result_count;
    const ember_nnef_expr *shapes; /* [[dim, …], …] per result (in the template's AST) */
    int decided[EMBER_MAX_SYMBOLS]; /* the symbols of `count` */
    int decided_count;
} ember_control;

struct ember_stage_plan;
struct ember_runnable;

/* Whether the document has a control op (such a graph is built as a template). */
int ember_control_mentioned(const ember_nnef_document *doc);

/* Load every body the template's control ops name (model->bodies). */
ember_status ember_control_load_bodies(ember_model *model);

/* The description of the control op of assignment `a`, its names resolved in `plan`;
 * NULL *out for an assignment that is no control op. */
ember_status ember_control_describe(const ember_model *model,
                                    const struct ember_stage_plan *plan, size_t a,
                                    ember_control **out);
void ember_control_free(ember_control *control);

/* Per-runnable state of one control stage: the body runnables and the loop's or the
 * scan's buffers. */
typedef struct ember_control_state ember_control_state;
void ember_control_state_free(ember_control_state *state);
/* Add what the state holds to *packed (its bodies' packed weights) and *working (their
 * arenas and prepared states, the loop's and the scan's buffers). */
void ember_control_state_account(const ember_control_state *state, size_t *packed,
                                 size_t *working);

/* Run the control op of stage `s` of the runnable's template: its operands are the
 * runnable's named tensors, its results become named ones, and the sizes it gave bind
 * the symbols of its `count` in `binding`. */
ember_status ember_control_run(struct ember_runnable *runnable, size_t s,
                               ember_binding *binding);

#endif /* EMBER_CORE_CONTROL_H */
