/*
 * Epilogue fusion: let a GEMM-based op (conv, matmul) do the cheap elementwise work that
 * follows it while the result is still in registers; and a mul by a per-axis constant
 * (a BatchNorm's scale left before a conv) the add and clamp after it, in its one pass.
 *
 * Starting from the GEMM node's output, we follow the chain of single consumers and
 * absorb, in order:
 *   - add(x, k) / add(k, x), k a constant f32 that is a scalar or varies along one
 *     output axis the op accepts (conv: channels; matmul: rows or columns), into the
 *     bias — only before any clamp, since the kernel adds the bias before clamping;
 *   - add(x, r) / add(r, x), r a computed f32 tensor of the output's shape produced
 *     before the GEMM node runs, as the residual (ops that accept one; before any clamp):
 *     a ResNet block's skip connection then costs no pass of its own;
 *   - relu(x), max(x, k), min(x, k) with k a constant scalar, and clamp(x, a, b) with
 *     constant scalar bounds, into the clamp bounds;
 *   - mul(x, g) / mul(g, x), g a computed tensor the host op accepts as a gate (a scale
 *     takes its own operand: hardswish), last: nothing is absorbed after it.
 * A value that is a graph output, or read by more than one node, stops the chain: its
 * bytes must exist unclamped. But for one case, also last: the plan's hardswish of the
 * chain's value x, its four nodes mul(x, a), add(·, b), clamp(·, lo, hi), mul(x, ·) (x read
 * twice), into an op that accepts a hard swish (a conv: MobileNetV3's every other conv).
 * Or, also last, a channel shuffle of the chain's value (reshape, transpose, reshape: see
 * fuse_shuffle) into an op that stores its output channels shuffled (a grouped conv).
 * Each absorbed node becomes an alias of the GEMM output.
 *
 * Then, the other way: a scale whose result (after what it absorbed) has one reader, an
 * op that takes it as a prologue on its input 0 (a 1×1 conv, applying it as it packs that
 * input), hands it all over (fuse_prologue); the scale's result becomes an alias of its
 * operand, which the reader now reads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/instance.h"
#include "core/shape.h"
#include "ops/scale.h"
#include "ops/transpose.h"

typedef struct use_info {
    int *count;     /* live readers of each value (a node reading twice counts twice) */
    int *first;     /* the first live reader of each value */
    int *consumer;  /* the last live reader of each value */
    uint8_t *is_output;
} use_info;

/* Fusion matches by NNEF name: it reasons about what the consumer computes, which is
 * exactly what the name means in docs/plan-format.md. */
static int is_op(const ember_node *node, const char *name)
{
    return strcmp(node->op->name, name) == 0;
}

/* The single f32 item of a constant holding exactly one element; 0 if not such a value. */
static int constant_scalar(const ember_value *value, float *out)
{
    if (value == NULL || value->constant == NULL || value->datum_type != EMBER_F32 ||
        ember_shape_count(value->shape, value->rank) != 1)
        return 0;
    *out = *(const float *)value->constant;
    return !isnan(*out);
}

/* Fold clamp bounds [lo, hi] into the epilogue; refuses bounds that would not compose
 * (disjoint intervals clamp to a constant the kernel cannot express). */
static int fuse_clamp(ember_epilogue *epilogue, float lo, float hi)
{
    const float new_min = lo > epilogue->min ? lo : epilogue->min;
    const float new_max = hi < epilogue->max ? hi : epilogue->max;
    if (new_min > new_max)
        return 0;
    epilogue->min = new_min;
    epilogue->max = new_max;
    return 1;
}

/* Fold constant `k` into the epilogue bias along the axis it varies on. The bias is
 * accumulated in a float array of the output axis' length, so several adds (tract may
 * emit a bias add and a BatchNorm shift) fold into one. Returns 1 when fused. */
static int fuse_bias(const ember_model *model, const ember_node *gemm, const ember_value *out,
                     const ember_value *k, ember_epilogue *epilogue)
{
    if (k->constant == NULL || k->datum_type != EMBER_F32 || epilogue->min != -INFINITY ||
        epilogue->max != INFINITY)
        return 0;
    int axis = ember_shape_varying_axis(k->shape, k->rank, out->shape, out->rank);
    if (axis == -1)
        return 0;
    if (axis == -2) { /* scalar: along the axis already used, or the op's first choice */
        axis = epilogue->bias != NULL ? epilogue->bias_axis : -1;
        for (int a = out->rank - 1; a >= 0 && axis < 0; a--)
            if (gemm->op->accepts_bias_axis(model, gemm, out, a))
                axis = a;
        if (axis < 0)
            return 0;
    }
    if (!gemm->op->accepts_bias_axis(model, gemm, out, axis) ||
        (epilogue->bias != NULL && epilogue->bias_axis != axis))
        return 0;
    const int64_t length = out->shape[axis];
    if (epilogue->bias == NULL) {
        epilogue->bias = calloc((size_t)(length > 0 ? length : 1), sizeof(float));
        if (epilogue->bias == NULL)
            return 0; /* not fusing is always correct */
        epilogue->bias_length = length;
        epilogue->bias_axis = axis;
    }
    const float *items = k->constant;
    const int scalar = ember_shape_count(k->shape, k->rank) == 1;
    for (int64_t i = 0; i < length; i++)
        epilogue->bias[i] += scalar ? items[0] : items[i];
    return 1;
}

/* Take computed value `r` as the residual: of the output's shape, written before the GEMM
 * node's step (its producer comes earlier in graph order), and kept alive until then by
 * the absorbed add's read (arena lifetimes count every live reader). */
static int fuse_residual(const ember_model *model, const ember_node *gemm, const ember_value *out,
                         int r, ember_epilogue *epilogue)
{
    const ember_value *residual = &model->values[r];
    if (gemm->op->accepts_residual == NULL || !gemm->op->accepts_residual(gemm) ||
        epilogue->residual >= 0 || epilogue->min != -INFINITY || epilogue->max != INFINITY ||
        residual->constant != NULL || residual->datum_type != EMBER_F32 ||
        residual->producer >= (int)(gemm - model->nodes) ||
        !ember_shape_equal(residual->shape, residual->rank, out->shape, out->rank))
        return 0;
    epilogue->residual = r;
    return 1;
}

/* Try to absorb `consumer`, which reads the GEMM chain's current value `v`. */
static int absorb(const ember_model *model, const ember_node *gemm, const ember_node *consumer,
                  int v, ember_epilogue *epilogue)
{
    const ember_value *out = &model->values[v];
    const ember_value *result = &model->values[consumer->output];
    if (result->datum_type != EMBER_F32 ||
        !ember_shape_equal(result->shape, result->rank, out->shape, out->rank))
        return 0;
    /* For binary ops, the operand that is not the chain's value. */
    const ember_value *other = NULL;
    if (consumer->input_count == 2)
        other = &model->values[consumer->inputs[consumer->inputs[0] == v ? 1 : 0]];
    float k, lo, hi;
    if (epilogue->gate >= 0) /* the gate comes last */
        return 0;
    if (is_op(consumer, "mul") && other->constant == NULL && gemm->op->accepts_gate != NULL &&
        gemm->op->accepts_gate(model, gemm, (int)(other - model->values))) {
        epilogue->gate = (int)(other - model->values);
        return 1;
    }
    if (is_op(consumer, "relu"))
        return fuse_clamp(epilogue, 0.0f, INFINITY);
    if (is_op(consumer, "max") && constant_scalar(other, &k))
        return fuse_clamp(epilogue, k, INFINITY);
    if (is_op(consumer, "min") && constant_scalar(other, &k))
        return fuse_clamp(epilogue, -INFINITY, k);
    if (is_op(consumer, "clamp") && consumer->inputs[0] == v &&
        constant_scalar(&model->values[consumer->inputs[1]], &lo) &&
        constant_scalar(&model->values[consumer->inputs[2]], &hi))
        return lo <= hi && fuse_clamp(epilogue, lo, hi);
    if (is_op(consumer, "add") && other->constant != NULL)
        return fuse_bias(model, gemm, out, other, epilogue);
    if (is_op(consumer, "add"))
        return fuse_residual(model, gemm, out, (int)(other - model->values), epilogue);
    return 0;
}

/* The one live reader of value v, when it is an f32 op `name` and v is no graph output;
 * else NULL. */
static const ember_node *only_reader(const ember_model *model, const use_info *uses, int v,
                                     const char *name)
{
    if (uses->is_output[v] || uses->count[v] != 1)
        return NULL;
    const ember_node *reader = &model->nodes[uses->consumer[v]];
    return is_op(reader, name) && model->values[reader->output].datum_type == EMBER_F32
               ? reader
               : NULL;
}

/* The same, its output of v's shape. */
static const ember_node *sole_reader(const ember_model *model, const use_info *uses, int v,
                                     const char *name)
{
    const ember_node *reader = only_reader(model, uses, v, name);
    const ember_value *in = &model->values[v];
    return reader != NULL && ember_shape_equal(model->values[reader->output].shape,
                                               model->values[reader->output].rank, in->shape,
                                               in->rank)
               ? reader
               : NULL;
}

/* Absorb a channel shuffle of value v [n, c, …] (ShuffleNet's, as the cook writes it:
 * reshape to [n, g, c/g, …], transpose(axes = [0, 2, 1]), reshape back to v's shape) into
 * a host that stores its channels so (ember_epilogue.shuffle_groups): the transpose's
 * copy of the whole tensor is then not made. Returns 1 when absorbed. */
static int fuse_shuffle(const ember_model *model, const use_info *uses, size_t g, int v,
                        int *fused_into, ember_epilogue *epilogue)
{
    const ember_node *host = &model->nodes[g];
    const ember_value *x = &model->values[v];
    const ember_node *split = only_reader(model, uses, v, "reshape");
    if (host->op->accepts_shuffle == NULL || split == NULL || x->rank < 2 ||
        x->rank >= EMBER_MAX_RANK)
        return 0;
    const ember_value *s = &model->values[split->output];
    if (s->rank != x->rank + 1 || s->shape[0] != x->shape[0] || s->shape[1] < 2 ||
        s->shape[1] * s->shape[2] != x->shape[1] ||
        !ember_shape_equal(s->shape + 3, s->rank - 3, x->shape + 2, x->rank - 2))
        return 0;
    const ember_node *swap = only_reader(model, uses, split->output, "transpose");
    if (swap == NULL || !ember_transpose_swaps(swap, 1, 2))
        return 0;
    const ember_node *merge = only_reader(model, uses, swap->output, "reshape");
    if (merge == NULL ||
        !ember_shape_equal(model->values[merge->output].shape,
                           model->values[merge->output].rank, x->shape, x->rank) ||
        !host->op->accepts_shuffle(host, epilogue, s->shape[1]))
        return 0;
    const ember_node *nodes[3] = {split, swap, merge};
    for (int i = 0; i < 3; i++)
        fused_into[nodes[i] - model->nodes] = (int)g;
    epilogue->shuffle_groups = s->shape[1];
    epilogue->chain_end = merge->output;
    return 1;
}

/* The scalar constant of binary `node` beside operand v, or 0. */
static int scalar_beside(const ember_model *model, const ember_node *node, int v, float *k)
{
    const int other = node->inputs[node->inputs[0] == v ? 1 : 0];
    return node->input_count == 2 && (node->inputs[0] == v || node->inputs[1] == v) &&
           constant_scalar(&model->values[other], k);
}

/* Absorb the plan's hardswish of value v (cook/ops/elementwise.py writes it mul(v, alpha),
 * add(·, beta), clamp(·, lo, hi), mul(v, ·)): v's two readers are its first and last
 * nodes, the last reading v and the clamp. Returns 1 when absorbed. */
static int fuse_hard_swish(const ember_model *model, const use_info *uses, size_t g, int v,
                           int *fused_into, ember_epilogue *epilogue)
{
    const ember_node *host = &model->nodes[g];
    if (host->op->accepts_hard_swish == NULL || !host->op->accepts_hard_swish(host) ||
        epilogue->gate >= 0 || uses->is_output[v] || uses->count[v] != 2)
        return 0;
    const ember_node *first = &model->nodes[uses->first[v]];
    const ember_node *last = &model->nodes[uses->consumer[v]];
    ember_f32_hard_swish gate = {0.0f, 0.0f, 0.0f, 0.0f, NULL};
    if (first == last || !is_op(first, "mul") || !scalar_beside(model, first, v, &gate.alpha))
        return 0;
    const ember_node *shift = sole_reader(model, uses, first->output, "add");
    if (shift == NULL || !scalar_beside(model, shift, first->output, &gate.beta))
        return 0;
    const ember_node *clamp = sole_reader(model, uses, shift->output, "clamp");
    if (clamp == NULL || clamp->inputs[0] != shift->output ||
        !constant_scalar(&model->values[clamp->inputs[1]], &gate.lo) ||
        !constant_scalar(&model->values[clamp->inputs[2]], &gate.hi) || gate.lo > gate.hi ||
        sole_reader(model, uses, clamp->output, "mul") != last ||
        !((last->inputs[0] == v && last->inputs[1] == clamp->output) ||
          (last->inputs[1] == v && last->inputs[0] == clamp->output)))
        return 0;
    const ember_node *nodes[4] = {first, shift, clamp, last};
    for (int i = 0; i < 4; i++)
        fused_into[nodes[i] - model->nodes] = (int)g;
    epilogue->hard_swished = 1;
    epilogue->chain_end = last->output;
    epilogue->hard_swish = gate;
    return 1;
}

/* Follow single consumers from the GEMM's output, absorbing while `absorb` accepts; then
 * a hard swish or a channel shuffle of the last value. The chain stops at the first value
 * someone else needs as is. */
static void fuse_chain(const ember_model *model, const use_info *uses, size_t g,
                       int *fused_into, ember_epilogue *epilogue)
{
    const ember_node *gemm = &model->nodes[g];
    int v = gemm->output;
    while (!uses->is_output[v] && uses->count[v] == 1) {
        const ember_node *consumer = &model->nodes[uses->consumer[v]];
        if (!absorb(model, gemm, consumer, v, epilogue))
            break;
        fused_into[uses->consumer[v]] = (int)g;
        v = consumer->output;
    }
    epilogue->chain_end = v;
    if (!fuse_hard_swish(model, uses, g, v, fused_into, epilogue))
        fuse_shuffle(model, uses, g, v, fused_into, epilogue);
}

/* Hand scale s's whole work (the add and clamp it absorbed included) to the one node that
 * reads its result, as that node's prologue (op.h), where the reader takes it: the
 * scale's result is then never written nor read back (DenseNet's BatchNorm and relu
 * before each 1×1 conv, a pass over the growing concat each: 5% of its run on x86). */
static void fuse_prologue(const ember_model *model, const use_info *uses, size_t s,
                          const int *fused_into, ember_epilogue *epilogues)
{
    const int v = epilogues[s].chain_end;
    ember_prologue prologue;
    if (v < 0 || uses->is_output[v] || uses->count[v] != 1 ||
        !ember_scale_prologue(model, &model->nodes[s], &epilogues[s], &prologue) ||
        model->values[prologue.x].constant != NULL)
        return;
    const size_t r = (size_t)uses->consumer[v];
    const ember_node *reader = &model->nodes[r];
    ember_epilogue *e = &epilogues[r];
    if (fused_into[r] >= 0 || reader->inputs[0] != v || /* it reads v: it has inputs */
        reader->op->accepts_prologue == NULL || e->prologue.scale != NULL ||
        !(reader->op->flags & EMBER_OP_FUSES_EPILOGUE) ||
        !reader->op->accepts_prologue(model, reader, e, &prologue))
        return;
    e->prologue = prologue;
    epilogues[s].prologue_of = (int)r;
}

/* Use counts are over live nodes only: a dead reader (pruned later) must not prevent a
 * fusion, and a node reading a value twice (add(c, c)) counts twice, which blocks it. */
ember_status ember_fuse_epilogues(const ember_model *model, const uint8_t *live,
                                  int *fused_into, ember_epilogue *epilogues)
{
    use_info uses;
    uses.count = calloc(model->value_count + 1, sizeof(int));
    uses.first = calloc(model->value_count + 1, sizeof(int));
    uses.consumer = calloc(model->value_count + 1, sizeof(int));
    uses.is_output = calloc(model->value_count + 1, 1);
    if (uses.count == NULL || uses.first == NULL || uses.consumer == NULL ||
        uses.is_output == NULL) {
        free(uses.count);
        free(uses.first);
        free(uses.consumer);
        free(uses.is_output);
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");
    }
    for (size_t i = 0; i < model->output_count; i++)
        uses.is_output[model->outputs[i]] = 1;
    for (size_t n = 0; n < model->node_count; n++) {
        fused_into[n] = -1;
        epilogues[n].min = -INFINITY;
        epilogues[n].max = INFINITY;
        epilogues[n].bias = NULL;
        epilogues[n].bias_length = 0;
        epilogues[n].bias_axis = -1;
        epilogues[n].residual = -1;
        epilogues[n].gate = -1;
        epilogues[n].hard_swished = 0;
        epilogues[n].shuffle_groups = 0;
        epilogues[n].chain_end = -1;
        memset(&epilogues[n].prologue, 0, sizeof epilogues[n].prologue);
        epilogues[n].prologue_of = -1;
        memset(&epilogues[n].hard_swish, 0, sizeof epilogues[n].hard_swish);
        for (size_t i = 0; live[n] && i < model->nodes[n].input_count; i++) {
            const int v = model->nodes[n].inputs[i];
            if (uses.count[v]++ == 0)
                uses.first[v] = (int)n;
            uses.consumer[v] = (int)n;
        }
    }
    for (size_t n = 0; n < model->node_count; n++)
        if (live[n] && fused_into[n] < 0 && (model->nodes[n].op->flags & EMBER_OP_FUSES_EPILOGUE))
            fuse_chain(model, &uses, n, fused_into, &epilogues[n]);
    /* after every chain: a reader's epilogue is complete before it is asked */
    for (size_t n = 0; n < model->node_count; n++)
        if (live[n] && fused_into[n] < 0 && (model->nodes[n].op->flags & EMBER_OP_FUSES_EPILOGUE))
            fuse_prologue(model, &uses, n, fused_into, epilogues);
    free(uses.count);
    free(uses.first);
    free(uses.consumer);
    free(uses.is_output);
    return EMBER_OK;
}
