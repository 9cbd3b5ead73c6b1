/*
 * csrc/core/op.h — what an op is to the core: a descriptor in the op table.
 *
 * Each op family (csrc/ops/<family>.c) defines one `const ember_op` per NNEF name it
 * serves. The descriptor tells the core everything it needs, in the order it needs it:
 *
 *   params    how to bind an invocation's arguments: which are tensors (become input
 *             values, literals included), which is a list of tensors (concat), which
 *             are attributes (handed to parse as AST expressions);
 *   parse     attributes → a flat, malloc'd struct (node->attributes), validated;
 *   infer     the shape rule: input facts + attributes → output fact, or an error
 *             naming the shapes. A pure function, re-runnable once symbolic dims exist;
 *   prepare   for one runnable on this CPU: choose kernels, pack constant weights,
 *             take in a fused epilogue, say how much scratch the run needs;
 *   run       compute, from tensors whose data the executor placed in the arena.
 *             It cannot fail and allocates nothing: everything was checked before.
 *
 * The list of all descriptors is csrc/ops/op_table.c (generated from EMBER_OPS in
 * csrc/ops/ops.h), so adding an op is one line there plus its family file.
 */
#ifndef EMBER_CORE_OP_H
#define EMBER_CORE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/packed.h"
#include "kernels/kernels.h"

typedef enum ember_op_param_kind {
    EMBER_PARAM_TENSOR,      /* one tensor: an identifier or a literal */
    EMBER_PARAM_TENSOR_LIST, /* [a, b, …]: every item becomes an input (concat) */
    EMBER_PARAM_INDICES,     /* one tensor of indices: an integer literal is read as i64 */
    EMBER_PARAM_ATTRIBUTE    /* anything else: given to parse as an expression */
} ember_op_param_kind;

typedef struct ember_op_param {
    const char *name;
    ember_op_param_kind kind;
    int has_default;         /* a tensor that may be omitted ... */
    float default_value;     /* ... and is then this f32 scalar (conv's bias = 0.0) */
} ember_op_param;

/* The most parameters an op declares. */
#define EMBER_OP_MAX_PARAMS 16

/* Flags of a descriptor. */
enum {
    /* The output holds exactly the bytes of input 0 (reshape, squeeze, unsqueeze):
     * the executor points it at input 0's storage and never calls run. */
    EMBER_OP_VIEW = 1u << 0,
    /* The op computes through the GEMM and accepts a fused epilogue (conv, matmul). */
    EMBER_OP_FUSES_EPILOGUE = 1u << 1,
    /* A size of the output is decided by the input values (NonZero, Unique, Compress):
     * the attribute `count` names the symbol it binds (core/model_stages.h). The op is
     * built with count = -1; infer gives the largest possible shape, run writes the
     * actual one into io->output[…].shape and `decided_count` reads it back. */
    EMBER_OP_DECIDES_SIZE = 1u << 2,
    /* Control flow (ember_if, ember_loop: core/control.h): the op runs body graphs, as a
     * stage of its own; it has no infer or run, and the shapes it gives bind the symbols
     * of its `count`. */
    EMBER_OP_CONTROL = 1u << 3,
    /* Two operands of one datum type, broadcast (add, lt, and, …). When their types
     * differ and one is a constant, the constant takes the other's type at load
     * (core/model_bind.c), as tract reads NNEF: a scalar first, then any constant. */
    EMBER_OP_BINARY = 1u << 4,
};

/* Work folded into an op from the node that produced its input 0 (fuse.c): a scale of
 * that input per channel (axis 1) with the add and clamp it had absorbed, DenseNet's
 * pre-activation BatchNorm and relu before a 1×1 conv. The op reads the scale's operand
 * x and applies, item by item and rounded as the scale rounds, clamp(x·scale[c] +
 * shift[c], min, max), with no shift added where there is none (x·s stays a signed
 * zero); the scale's own output is never made. */
typedef struct ember_prologue {
    const float *scale;      /* `channels` items, or one for every channel; NULL: none */
    const float *shift;      /* as many, or NULL */
    int64_t scale_count, shift_count;
    float min, max;
    int x;                   /* value id of the scale's operand: the op's input now */
} ember_prologue;

/* Work folded into a GEMM-based op from the nodes that consumed its result:
 * out = clamp(op(x) + bias + residual, min, max), bias broadcast along one output axis,
 * residual a computed tensor of the output's shape (a ResNet block's skip connection);
 * then, with a gate, out · g (hardswish: x · clamp(x/6 + 1/2, 0, 1), the host being the
 * scale x/6 and g its own operand x), or with a hard swish, out · clamp(out · alpha +
 * beta, lo, hi) (the hardswish of a conv's result: the four nodes of it, the host being
 * the conv). */
typedef struct ember_epilogue {
    float min, max;          /* -INFINITY / INFINITY when no clamp was fused */
    float *bias;             /* bias_length floats along output axis bias_axis, or NULL */
    int64_t bias_length;
    int bias_axis;
    int residual;            /* value id of the residual, -1 for none: the run finds its
                                tensor in ember_op_io.residual */
    int gate;                /* value id of the gate, -1 for none (the host reads it) */
    int hard_swished;        /* nonzero: hard_swish's alpha, beta, lo and hi apply, last */
    ember_f32_hard_swish hard_swish; /* its apply is the host's to choose (NULL here) */
    int64_t shuffle_groups;  /* 0, or the channel shuffle of g groups after all the rest:
                                output channel G·(c/g) + i stored as channel i·g + G */
    int chain_end;           /* the value the host and what it absorbed produce */
    ember_prologue prologue; /* what the op applies to its input 0 first (scale NULL: none) */
    int prologue_of;         /* the node that took this one's work as its prologue, or -1 */
} ember_epilogue;

/* What prepare works with, and what it reports back. */
typedef struct ember_prepare_context {
    const ember_model *model;
    const ember_node *node;
    const ember_kernel_config *kernels;
    const ember_epilogue *epilogue; /* non-NULL only for EMBER_OP_FUSES_EPILOGUE ops */
    struct ember_packed_store *packed; /* packed constants shared by the runnable's
                                          instances (core/packed.h): not the op's to free */
    size_t scratch_bytes;    /* out: arena bytes the run needs, live during this node only */
    size_t packed_bytes;     /* out: bytes the prepared state holds (not the shared ones) */
} ember_prepare_context;

/* The tensors of one run of a node. Shapes are the output/input facts; data points
 * into the arena, a constant, or (for scratch) the node's slice of the arena. */
typedef struct ember_op_io {
    const ember_tensor *const *inputs;
    size_t input_count;
    ember_tensor *output;    /* node->output_count consecutive tensors */
    void *scratch;           /* scratch_bytes asked by prepare, 64-byte aligned */
    const ember_tensor *residual; /* the fused epilogue's residual, or NULL */
} ember_op_io;

typedef struct ember_op {
    const char *name;        /* the NNEF name */
    int variant;             /* which member of the family (add vs mul …) */
    unsigned flags;
    const ember_op_param *params;
    size_t param_count;

    /* attributes[i] is the expression bound to params[i] when it is an attribute,
     * NULL when absent (the op applies its default). NULL parse: no attributes. */
    ember_status (*parse)(const ember_node *node, const ember_nnef_expr *const *attributes,
                          void **out_attributes);
    /* Fill output->datum_type/rank/shape. May complete node->attributes with values
     * that depend on the input shapes (auto padding, axis lists). */
    ember_status (*infer)(ember_node *node, const ember_value *const *inputs,
                          ember_value *output);
    /* For EMBER_OP_FUSES_EPILOGUE ops: whether a bias along output `axis` can be fused
     * (after whatever ctx already holds); `model` holds the node's operands. */
    int (*accepts_bias_axis)(const ember_model *model, const ember_node *node,
                             const ember_value *output, int axis);
    /* For EMBER_OP_FUSES_EPILOGUE ops, may be NULL (never): whether the run can add a
     * residual tensor of the output's shape before the clamp. */
    int (*accepts_residual)(const ember_node *node);
    /* For EMBER_OP_FUSES_EPILOGUE ops, may be NULL (never): whether the run can multiply
     * its clamped result by value `gate`, last. */
    int (*accepts_gate)(const ember_model *model, const ember_node *node, int gate);
    /* For EMBER_OP_FUSES_EPILOGUE ops, may be NULL (never): whether the run can apply a hard
     * swish to its clamped result, last (ember_epilogue). */
    int (*accepts_hard_swish)(const ember_node *node);
    /* May be NULL (never): whether the run can store its output channels shuffled in
     * `groups` groups (ember_epilogue.shuffle_groups), with this epilogue. */
    int (*accepts_shuffle)(const ember_node *node, const ember_epilogue *epilogue,
                           int64_t groups);
    /* May be NULL (never): whether the op can take `prologue` on its input 0
     * (ember_epilogue.prologue), with this epilogue. */
    int (*accepts_prologue)(const ember_model *model, const ember_node *node,
                            const ember_epilogue *epilogue, const ember_prologue *prologue);
    /* NULL: no prepared state and no scratch. */
    ember_status (*prepare)(ember_prepare_context *ctx, void **out_prepared);
    void (*run)(const ember_node *node, void *prepared, const ember_op_io *io);
    void (*free_prepared)(void *prepared);
    /* May be NULL (one form): the name of the form prepare chose, for profiles (static
     * storage; ember_node_profile.form). */
    const char *(*form)(const void *prepared);
    /* How many results an invocation may assign (`a, b = split(…)`): 0 means exactly one.
     * infer and run then see node->output_count consecutive outputs. */
    int max_outputs;
    /* EMBER_OP_DECIDES_SIZE: the value the last run decided for the item-th symbol of
     * its `count` (an op deciding one size has item 0), from its outputs. */
    int64_t (*decided_count)(const ember_node *node, const ember_tensor *outputs,
                             size_t item);
} ember_op;

/* The descriptor serving NNEF name `name`, or NULL (csrc/ops/op_table.c). */
const ember_op *ember_op_find(const char *name);

/* The error for an op the table does not have, at node `node` of `origin`:`line`. */
ember_status ember_op_unknown(const char *origin, int line, const char *node, const char *op);

#endif /* EMBER_CORE_OP_H */
