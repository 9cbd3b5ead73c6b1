/*
 * Preparing a model into a instance, and running it. The steps are described in
 * instance.h; this file follows them in order.
 */
#include "core/instance.h"
#include "core/profile.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/shape.h"

/* Scratch data of one prepare, freed at its end whatever happens. */
typedef struct prepare_work {
    uint8_t *live;           /* per node: some graph output depends on it */
    int *fused_into;         /* per node: the GEMM node that absorbed it, or -1 */
    ember_epilogue *epilogues; /* per node */
    int *storage;            /* per value: the value whose bytes it uses */
    size_t *storage_offset;  /* per value: where in them (a concat's input) */
    int *parent;             /* per representative: the concat it was placed in, or -1 */
    size_t *parent_offset;   /* per representative: its byte offset there */
    uint8_t *pinned;         /* per value: a graph input's or output's storage (never placed
                                in another buffer) */
    size_t *scratch_bytes;   /* per node */
    ember_arena_request *requests; /* per value, then per node's scratch */
} prepare_work;

static void work_free(prepare_work *work, size_t node_count)
{
    for (size_t n = 0; work->epilogues && n < node_count; n++)
        free(work->epilogues[n].bias);
    free(work->live);
    free(work->fused_into);
    free(work->epilogues);
    free(work->storage);
    free(work->storage_offset);
    free(work->parent);
    free(work->parent_offset);
    free(work->pinned);
    free(work->scratch_bytes);
    free(work->requests);
}

/* ---------------------------------------------------------------- 1. liveness */

/* Walk backwards from the graph outputs: a node is live if a live node or an output
 * reads its result. Graph order is topological, so one reverse pass suffices. */
static void mark_live(const ember_model *model, uint8_t *live)
{
    uint8_t *needed = calloc(model->value_count + 1, 1);
    if (needed == NULL) { /* be conservative: run everything */
        memset(live, 1, model->node_count);
        return;
    }
    for (size_t i = 0; i < model->output_count; i++)
        needed[model->outputs[i]] = 1;
    for (size_t n = model->node_count; n-- > 0;) {
        const ember_node *node = &model->nodes[n];
        live[n] = 0;
        for (int k = 0; k < node->output_count; k++)
            live[n] |= needed[node->output + k];
        for (size_t i = 0; live[n] && i < node->input_count; i++)
            needed[node->inputs[i]] = 1;
    }
    free(needed);
}

/* ---------------------------------------------------------------- 3. storage */

/* Each value's storage representative. Aliases (absorbed consumers, views) resolve in
 * graph order, so a chain of views ends at the first real producer. */
static void assign_storage(const ember_model *model, const prepare_work *work)
{
    for (size_t v = 0; v < model->value_count; v++)
        work->storage[v] = (int)v;
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_node *node = &model->nodes[n];
        if (!work->live[n])
            continue;
        const int taker = work->epilogues[n].prologue_of;
        if (work->fused_into[n] >= 0)
            work->storage[node->output] =
                work->storage[model->nodes[work->fused_into[n]].output];
        else if (taker >= 0) /* its reader applies it to the operand, read in its place */
            work->storage[node->output] = work->storage[work->epilogues[taker].prologue.x];
        else if (node->op->flags & EMBER_OP_VIEW)
            work->storage[node->output] = work->storage[node->inputs[0]];
    }
}

/* ---------------------------------------------------------------- 3b. concat in place */

/*
 * A concat with nothing but 1s before its axis (batch 1, along the channels) lays its
 * inputs end to end: each is a slice of the output. Its inputs' producers can then write
 * straight into their slices and the concat copies nothing (concat.c skips an input
 * already in place): each input's representative is placed inside the concat's, at its
 * offset. Concats inside concats (DenseNet's growing features) nest. The arena sees one
 * buffer, alive from the first producer to the last reader of any part of it.
 *
 * Left in their own storage (the concat copies them): graph inputs and outputs,
 * constants, a representative already placed in an earlier concat or given twice to
 * this one, and outputs of ops that decide their size, run bodies (control flow) or
 * assign several results.
 */
static size_t value_bytes(const ember_value *value)
{
    size_t bytes = 0;
    ember_shape_bytes(value->shape, value->rank, ember_datum_size(value->datum_type), &bytes);
    return bytes; /* checked at load */
}

/* The axis a concat joins along when its inputs are slices of its output, else -1. */
static int sliced_axis(const ember_model *model, const ember_node *node)
{
    const ember_value *y = &model->values[node->output];
    int axis = 0;
    for (size_t i = 0; i < node->input_count; i++)
        for (int d = 0; d < y->rank; d++)
            if (model->values[node->inputs[i]].shape[d] != y->shape[d]) {
                axis = d;
                break;
            }
    return ember_shape_count(y->shape, axis) == 1 ? axis : -1;
}

static int may_write_into(const ember_model *model, const prepare_work *work,
                          int rep, size_t bytes)
{
    const ember_value *value = &model->values[rep];
    if (work->pinned[rep] || value->constant != NULL || work->parent[rep] >= 0 ||
        value->producer < 0 || value_bytes(value) != bytes)
        return 0;
    const ember_node *producer = &model->nodes[value->producer];
    return work->live[value->producer] && work->fused_into[value->producer] < 0 &&
           producer->output_count <= 1 &&
           !(producer->op->flags & (EMBER_OP_VIEW | EMBER_OP_CONTROL | EMBER_OP_DECIDES_SIZE));
}

static void place_concat_inputs(const ember_model *model, const prepare_work *work,
                                const ember_node *node)
{
    const int into = work->storage[node->output];
    size_t offset = 0;
    for (size_t i = 0; i < node->input_count; i++) {
        const int rep = work->storage[node->inputs[i]];
        const size_t bytes = value_bytes(&model->values[node->inputs[i]]);
        int repeated = 0;
        for (size_t j = 0; j < node->input_count; j++)
            repeated |= j != i && work->storage[node->inputs[j]] == rep;
        if (bytes > 0 && rep != into && !repeated &&
            may_write_into(model, work, rep, bytes)) {
            work->parent[rep] = into;
            work->parent_offset[rep] = offset;
        }
        offset += bytes;
    }
}

/* The graph inputs' and outputs' storage, which no placement moves. */
static void pin_graph_values(const ember_model *model, const prepare_work *work)
{
    for (size_t i = 0; i < model->input_count; i++)
        work->pinned[work->storage[model->inputs[i]]] = 1;
    for (size_t i = 0; i < model->output_count; i++)
        work->pinned[work->storage[model->outputs[i]]] = 1;
}

/* Place concat inputs, then resolve every value to its outermost buffer and offset. */
static void place_concats(const ember_model *model, const prepare_work *work)
{
    for (size_t v = 0; v < model->value_count; v++)
        work->parent[v] = -1;
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_node *node = &model->nodes[n];
        if (work->live[n] && work->fused_into[n] < 0 && strcmp(node->op->name, "concat") == 0 &&
            sliced_axis(model, node) >= 0)
            place_concat_inputs(model, work, node);
    }
    for (size_t v = 0; v < model->value_count; v++) {
        int rep = work->storage[v];
        size_t offset = 0;
        for (; work->parent[rep] >= 0; rep = work->parent[rep])
            offset += work->parent_offset[rep];
        work->storage[v] = rep;
        work->storage_offset[v] = offset;
    }
}

/* ---------------------------------------------------------------- 3c. residual in place */

/*
 * A GEMM op with a fused residual (a ResNet block's skip connection) whose residual
 * nothing reads after it writes its output into the residual's bytes: the op then adds
 * what its output already holds (conv.c skips the copy of the residual into the output,
 * 3.2 MB per block at ResNet50's 56×56 stage, and its paths add the residual at the same
 * element they write). Not when the residual is a graph input or output, sits inside a
 * concat's buffer, is of another size, or is one of the op's own inputs; nor when the
 * output is placed elsewhere already; nowhere in a model with control flow, whose bodies
 * run out of graph order.
 */
static int read_after(const ember_model *model, const prepare_work *work, size_t n, int rep)
{
    for (size_t m = 0; m < model->node_count; m++) {
        const ember_node *node = &model->nodes[m];
        if (!work->live[m] || m < n || work->fused_into[m] == (int)n)
            continue;
        for (size_t i = 0; i < node->input_count; i++)
            if (work->storage[node->inputs[i]] == rep)
                return 1;
    }
    return 0;
}

static void place_residual_outputs(const ember_model *model, const prepare_work *work)
{
    for (size_t n = 0; n < model->node_count; n++) /* bodies run out of graph order */
        if (work->live[n] && (model->nodes[n].op->flags & EMBER_OP_CONTROL))
            return;
    for (size_t n = 0; n < model->node_count; n++) {
        const int r = work->epilogues[n].residual, out = model->nodes[n].output;
        if (!work->live[n] || work->fused_into[n] >= 0 || r < 0)
            continue;
        const int rep = work->storage[r];
        if (work->pinned[rep] || work->pinned[out] || work->storage[out] != out ||
            work->storage_offset[out] != 0 || work->storage_offset[r] != 0 ||
            model->values[rep].constant != NULL ||
            value_bytes(&model->values[rep]) != value_bytes(&model->values[out]) ||
            read_after(model, work, n, rep))
            continue;
        for (size_t v = 0; v < model->value_count; v++)
            if (work->storage[v] == out)
                work->storage[v] = rep;
    }
}

/* ---------------------------------------------------------------- 4. prepare ops */

/* Prepare every node that will run. The kernel choice is made once for the instance
 * (the dispatch table is per CPU), and each op packs its weights for that kernel's tile
 * shape — a instance prepared here must not move to a different CPU type. */
static ember_status prepare_steps(ember_instance *instance, const prepare_work *work)
{
    const ember_model *model = instance->model;
    const ember_kernel_config *kernels = ember_kernel_config_get();
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_node *node = &model->nodes[n];
        ember_step *step = &instance->steps[n];
        step->node = node;
        step->active = work->live[n] && work->fused_into[n] < 0 &&
                       work->epilogues[n].prologue_of < 0 && !(node->op->flags & EMBER_OP_VIEW);
        work->scratch_bytes[n] = 0;
        if (!step->active || node->op->prepare == NULL)
            continue;
        ember_prepare_context ctx = {model, node, kernels, NULL, instance->packed_store, 0, 0};
        if (node->op->flags & EMBER_OP_FUSES_EPILOGUE) {
            ctx.epilogue = &work->epilogues[n];
            if (work->epilogues[n].residual >= 0) /* the tensor table is already there */
                step->residual = &instance->tensors[work->epilogues[n].residual];
        }
        step->free_prepared = node->op->free_prepared;
        ember_status status = node->op->prepare(&ctx, &step->prepared);
        if (status != EMBER_OK)
            return status;
        work->scratch_bytes[n] = ctx.scratch_bytes;
        instance->packed_bytes += ctx.packed_bytes;
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- 5. arena */

/* Lifetimes in steps: a value lives from its producer's step (graph inputs from step
 * 0) to the last step that reads it, or to the end when it is a graph output. Aliases
 * extend the lifetime of their storage representative. */
/* Requests are indexed by value id, then one scratch request per node after them; a
 * value that is not its own storage (alias, constant) requests 0 bytes. */
static void collect_requests(const ember_model *model, const prepare_work *work)
{
    const int end = (int)model->node_count;
    ember_arena_request *requests = work->requests;
    for (size_t v = 0; v < model->value_count; v++) {
        requests[v].bytes = 0;
        requests[v].first = end;
        requests[v].last = -1;
    }
    for (size_t v = 0; v < model->value_count; v++) {
        const ember_value *value = &model->values[v];
        const int rep = work->storage[v];
        if (model->values[rep].constant != NULL)
            continue;
        if (value->producer >= 0 && !work->live[value->producer])
            continue;
        if (rep == (int)v)
            requests[v].bytes = value_bytes(value);
        const int first = value->producer >= 0 ? value->producer : 0;
        if (first < requests[rep].first)
            requests[rep].first = first;
        if (first > requests[rep].last)
            requests[rep].last = first;
    }
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_node *node = &model->nodes[n];
        for (size_t i = 0; work->live[n] && i < node->input_count; i++) {
            const int rep = work->storage[node->inputs[i]];
            if ((int)n > requests[rep].last)
                requests[rep].last = (int)n;
        }
        ember_arena_request *scratch = &requests[model->value_count + n];
        scratch->bytes = work->scratch_bytes[n];
        scratch->first = scratch->last = (int)n;
    }
    for (size_t i = 0; i < model->output_count; i++)
        requests[work->storage[model->outputs[i]]].last = end;
    for (size_t i = 0; i < model->input_count; i++) {
        const int rep = work->storage[model->inputs[i]];
        requests[rep].first = 0; /* written before step 0 */
        if (requests[rep].last < 0)
            requests[rep].last = 0;
    }
}

/* Plan the arena and point every value's tensor at its bytes. Data pointers are fixed
 * from here on: running never recomputes addresses. */
static ember_status place_tensors(ember_instance *instance, const prepare_work *work)
{
    const ember_model *model = instance->model;
    const size_t count = model->value_count + model->node_count;
    size_t total;
    collect_requests(model, work);
    ember_status status = ember_arena_plan(work->requests, count, &total);
    if (status != EMBER_OK)
        return status;
    /* aligned_alloc wants a size that is a multiple of the alignment (total is). */
    instance->arena = aligned_alloc(EMBER_ARENA_ALIGNMENT, total ? total : EMBER_ARENA_ALIGNMENT);
    if (instance->arena == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory: the arena needs %zu bytes",
                               total);
    instance->arena_bytes = total;
    for (size_t v = 0; v < model->value_count; v++) {
        const ember_value *value = &model->values[v];
        const ember_value *rep = &model->values[work->storage[v]];
        ember_tensor *tensor = &instance->tensors[v];
        tensor->datum_type = value->datum_type;
        tensor->rank = value->rank;
        memcpy(tensor->shape, value->shape, sizeof tensor->shape);
        tensor->data = rep->constant != NULL
                           ? (void *)rep->constant /* read only: no op writes its inputs */
                           : instance->arena + work->requests[work->storage[v]].offset +
                                 work->storage_offset[v];
    }
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_arena_request *scratch = &work->requests[model->value_count + n];
        /* Never NULL, even for no scratch: ops may offset the pointer by zero. */
        instance->steps[n].scratch = instance->arena + (scratch->bytes ? scratch->offset : 0);
    }
    return EMBER_OK;
}

/* Every step's input pointers, from one block. */
/* Ops receive their inputs as pointers to the instance's tensors, built once here, so a
 * step's run is a single indirect call with no per-run setup. */
static ember_status wire_inputs(ember_instance *instance)
{
    const ember_model *model = instance->model;
    size_t total = 0;
    for (size_t n = 0; n < model->node_count; n++)
        total += model->nodes[n].input_count;
    instance->input_slots = calloc(total + 1, sizeof *instance->input_slots);
    if (instance->input_slots == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");
    const ember_tensor **slot = instance->input_slots;
    for (size_t n = 0; n < model->node_count; n++) {
        instance->steps[n].inputs = slot;
        for (size_t i = 0; i < model->nodes[n].input_count; i++)
            *slot++ = &instance->tensors[model->nodes[n].inputs[i]];
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- create / destroy */

/* The steps of instance.h in order. Any failure returns with the instance partly
 * built; ember_instance_destroy copes with that. */
static ember_status prepare(ember_instance *instance, prepare_work *work)
{
    const ember_model *model = instance->model;
    const size_t nodes = model->node_count, values = model->value_count;
    work->live = calloc(nodes + 1, 1);
    work->fused_into = calloc(nodes + 1, sizeof(int));
    work->epilogues = calloc(nodes + 1, sizeof(ember_epilogue));
    work->storage = calloc(values + 1, sizeof(int));
    work->storage_offset = calloc(values + 1, sizeof(size_t));
    work->parent = calloc(values + 1, sizeof(int));
    work->parent_offset = calloc(values + 1, sizeof(size_t));
    work->pinned = calloc(values + 1, 1);
    work->scratch_bytes = calloc(nodes + 1, sizeof(size_t));
    work->requests = calloc(values + nodes + 1, sizeof(ember_arena_request));
    instance->tensors = calloc(values + 1, sizeof(ember_tensor));
    instance->steps = calloc(nodes + 1, sizeof(ember_step));
    instance->step_count = instance->steps ? nodes : 0;
    if (!work->live || !work->fused_into || !work->epilogues || !work->storage ||
        !work->storage_offset || !work->parent || !work->parent_offset || !work->pinned ||
        !work->scratch_bytes ||
        !work->requests || !instance->tensors || !instance->steps)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");

    mark_live(model, work->live);
    ember_status status = ember_fuse_epilogues(model, work->live, work->fused_into,
                                               work->epilogues);
    if (status != EMBER_OK)
        return status;
    assign_storage(model, work);
    pin_graph_values(model, work);
    place_concats(model, work);
    place_residual_outputs(model, work);
    status = prepare_steps(instance, work);
    if (status == EMBER_OK)
        status = place_tensors(instance, work);
    if (status == EMBER_OK)
        status = wire_inputs(instance);
    return status;
}

ember_status ember_instance_create(const ember_model *model, ember_packed_store *packed,
                                   ember_instance **out)
{
    ember_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");
    instance->model = model;
    instance->packed_store = packed;
    prepare_work work;
    memset(&work, 0, sizeof work);
    ember_status status = prepare(instance, &work);
    work_free(&work, model->node_count);
    if (status != EMBER_OK) {
        ember_instance_destroy(instance);
        return status;
    }
    ember_model_release_plan(model);
    *out = instance;
    return EMBER_OK;
}

void ember_instance_destroy(ember_instance *instance)
{
    if (instance == NULL)
        return;
    /* Touches nothing of the model, which a careless caller may have freed first. */
    for (size_t n = 0; n < instance->step_count; n++) {
        const ember_step *step = &instance->steps[n];
        if (step->prepared != NULL && step->free_prepared != NULL)
            step->free_prepared(step->prepared);
    }
    free(instance->steps);
    free(instance->tensors);
    free(instance->input_slots);
    free(instance->arena);
    free(instance);
}

/* ---------------------------------------------------------------- running */

/* The caller's tensor must match the input fact exactly: the arena slot was sized from
 * the fact, and a mismatch is the most common integration mistake, so the message says
 * both what was expected and what was given. */
static ember_status check_input(const ember_model *model, size_t index, const ember_tensor *in)
{
    const ember_value *fact = &model->values[model->inputs[index]];
    char expected[EMBER_SHAPE_TEXT], got[EMBER_SHAPE_TEXT];
    const int rank_ok = in->rank >= 0 && in->rank <= EMBER_MAX_RANK;
    if (in->datum_type == fact->datum_type && rank_ok &&
        ember_shape_equal(in->shape, in->rank, fact->shape, fact->rank)) {
        if (in->data == NULL && ember_shape_count(fact->shape, fact->rank) > 0)
            return ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': data is NULL", index,
                                   model->input_names[index]);
        return EMBER_OK;
    }
    return ember_error_set(EMBER_ERROR_ARGUMENT, "input %zu '%s': expected %s %s, got %s %s",
                           index, model->input_names[index],
                           ember_datum_type_name(fact->datum_type),
                           ember_shape_format(fact->shape, fact->rank, expected, sizeof expected),
                           ember_datum_type_name(in->datum_type),
                           rank_ok ? ember_shape_format(in->shape, in->rank, got, sizeof got)
                                   : "(bad rank)");
}

/* An op deciding its output size writes the actual shape into its output tensors; each
 * run starts again from the largest shape, which its buffers were sized for. */
static void restore_bounds(ember_instance *instance, const ember_node *node)
{
    const ember_model *model = instance->model;
    for (int k = 0; k < node->output_count; k++) {
        const ember_value *value = &model->values[node->output + k];
        instance->tensors[node->output + k].rank = value->rank;
        memcpy(instance->tensors[node->output + k].shape, value->shape, sizeof value->shape);
    }
}

/* Check every input before touching the arena: a rejected call leaves the previous
 * run's outputs readable. Once copying starts, has_run stays cleared until the last step
 * finished, so a half-computed output is never handed out as a result. */
ember_status ember_instance_execute(ember_instance *instance, size_t n_inputs,
                                    const ember_tensor *inputs)
{
    const ember_model *model = instance->model;
    if (n_inputs != model->input_count)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "the model takes %zu inputs, got %zu",
                               model->input_count, n_inputs);
    for (size_t i = 0; i < n_inputs; i++) {
        ember_status status = check_input(model, i, &inputs[i]);
        if (status != EMBER_OK)
            return status;
    }
    instance->has_run = 0; /* outputs are undefined until this run completes */
    for (size_t i = 0; i < n_inputs; i++) {
        /* memmove: an input may be the last run's output, whose memory can overlap the
         * input's slot; an input written in place (ember_runnable_input) is the slot */
        void *slot = instance->tensors[model->inputs[i]].data;
        const size_t bytes = value_bytes(&model->values[model->inputs[i]]);
        if (bytes > 0 && slot != inputs[i].data)
            memmove(slot, inputs[i].data, bytes);
    }
    for (size_t n = 0; n < model->node_count; n++) {
        const ember_step *step = &instance->steps[n];
        if (!step->active)
            continue;
        ember_tensor *output = &instance->tensors[step->node->output];
        if (step->node->op->flags & EMBER_OP_DECIDES_SIZE)
            restore_bounds(instance, step->node); /* the last run shrank them */
        int empty = 1;
        for (int k = 0; k < step->node->output_count && empty; k++)
            empty = ember_shape_count(output[k].shape, output[k].rank) == 0;
        if (empty)
            continue; /* nothing to compute; ops may assume a non-empty output */
        const ember_op_io io = {step->inputs, step->node->input_count, output, step->scratch,
                                step->residual};
        if (instance->profile == NULL) {
            step->node->op->run(step->node, step->prepared, &io);
            continue;
        }
        const double start = ember_profile_clock();
        step->node->op->run(step->node, step->prepared, &io);
        const double seconds = ember_profile_clock() - start;
        const ember_op *op = step->node->op;
        ember_status status = ember_profile_add(
            instance->profile, op->name, op->form ? op->form(step->prepared) : NULL,
            step->node->name, seconds, step->inputs, step->node->input_count, output);
        if (status != EMBER_OK)
            return status;
    }
    instance->has_run = 1;
    return EMBER_OK;
}
