/*
 * The public runnable: one prepared instance for a concrete model; for a template, its
 * stages run in turn, each from a cache of instances per binding. See core/runnable.h.
 */
#include "core/runnable.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/control.h"
#include "core/op.h"
#include "core/profile.h"

static ember_status oom(void)
{
    return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");
}

ember_status ember_runnable_create(const ember_model *model, ember_runnable **out)
{
    ember_runnable *runnable = calloc(1, sizeof *runnable);
    if (runnable == NULL)
        return oom();
    runnable->model = model;
    ember_status status = EMBER_OK;
    if (!model->symbolic) {
        status = ember_instance_create(model, &runnable->packed, &runnable->instance);
    } else {
        const ember_stage_plan *plan = model->stage_plan;
        runnable->cache_size = EMBER_BINDING_CACHE * plan->stage_count;
        runnable->cache = calloc(runnable->cache_size + 1, sizeof *runnable->cache);
        runnable->named = calloc(plan->name_count + 1, sizeof *runnable->named);
        runnable->outputs = calloc(model->output_count + 1, sizeof *runnable->outputs);
        runnable->controls = calloc(plan->stage_count + 1, sizeof *runnable->controls);
        if (!runnable->cache || !runnable->named || !runnable->outputs || !runnable->controls)
            status = oom();
    }
    if (status != EMBER_OK) {
        ember_runnable_destroy(runnable);
        return status;
    }
    *out = runnable;
    return EMBER_OK;
}

static void release(ember_bound_instance *slot)
{
    ember_instance_destroy(slot->instance);
    ember_model_destroy(slot->model);
    free(slot->decider_nodes);
    memset(slot, 0, sizeof *slot);
}

void ember_runnable_destroy(ember_runnable *runnable)
{
    if (runnable == NULL)
        return;
    ember_instance_destroy(runnable->instance);
    for (size_t i = 0; i < runnable->cache_size; i++)
        release(&runnable->cache[i]);
    free(runnable->cache);
    for (size_t s = 0; runnable->controls && s < runnable->model->stage_plan->stage_count; s++)
        ember_control_state_free(runnable->controls[s]);
    free(runnable->controls);
    free(runnable->named);
    free(runnable->outputs);
    ember_packed_store_free(&runnable->packed);
    free(runnable);
}

/* Public runnables only (the bodies of control flow are destroyed by their owner). */
ember_status ember_runnable_open(const ember_model *model, ember_runnable **out)
{
    ember_status status = ember_runnable_create(model, out);
    if (status == EMBER_OK) {
        (*out)->references = 1;
        ember_model_retain(model);
    }
    return status;
}

void ember_runnable_retain(ember_runnable *runnable)
{
    __atomic_add_fetch(&runnable->references, 1, __ATOMIC_RELAXED);
}

void ember_runnable_release(ember_runnable *runnable)
{
    if (runnable != NULL && __atomic_sub_fetch(&runnable->references, 1, __ATOMIC_ACQ_REL) == 0) {
        const ember_model *model = runnable->model;
        ember_runnable_destroy(runnable);
        ember_model_release(model);
    }
}

/* ---------------------------------------------------------------- the stage cache */

static int same_binding(const ember_bound_instance *slot, size_t stage,
                        const ember_binding *binding)
{
    if (slot->model == NULL || slot->stage != stage)
        return 0;
    for (size_t s = 0; s < binding->count; s++)
        if (slot->bound[s] != binding->bound[s] ||
            (binding->bound[s] && slot->values[s] != binding->values[s]))
            return 0;
    return 1;
}

/* The nodes of a stage's deciding ops in its concrete model, found by name once. */
static ember_status find_deciders(const ember_model *template_model, const ember_stage *stage,
                                  ember_bound_instance *slot)
{
    const ember_nnef_document *doc = &template_model->doc;
    slot->decider_nodes = calloc(stage->decider_count + 1, sizeof(int));
    if (slot->decider_nodes == NULL)
        return oom();
    for (size_t d = 0; d < stage->decider_count; d++) {
        const ember_nnef_expr *lvalue = doc->graph_body[stage->deciders[d].assignment].lvalue;
        const char *name = lvalue->kind == EMBER_NNEF_IDENTIFIER ? lvalue->u.string
                                                                 : lvalue->u.list.items[0]->u.string;
        slot->decider_nodes[d] = -1;
        for (size_t n = 0; n < slot->model->node_count; n++)
            if (strcmp(slot->model->nodes[n].name, name) == 0)
                slot->decider_nodes[d] = (int)n;
        if (slot->decider_nodes[d] < 0)
            return ember_error_set(EMBER_ERROR_INVALID, "node '%s' vanished from its stage",
                                   name);
    }
    return EMBER_OK;
}

/* The cached instance of stage `s` for `binding`, or a new one in the least recently
 * used slot. Slots used earlier in this run are more recent than any victim as long as
 * the cache holds more than one slot per stage, which it does. */
static ember_status instance_for(ember_runnable *runnable, size_t s,
                                 const ember_binding *binding, const ember_tensor *live_in,
                                 ember_bound_instance **out)
{
    ember_bound_instance *victim = &runnable->cache[0];
    for (size_t i = 0; i < runnable->cache_size; i++) {
        ember_bound_instance *slot = &runnable->cache[i];
        if (same_binding(slot, s, binding)) {
            slot->last_used = ++runnable->clock;
            *out = slot;
            return EMBER_OK;
        }
        if (slot->model == NULL ? victim->model != NULL : (victim->model != NULL &&
                                                          slot->last_used < victim->last_used))
            victim = slot;
    }
    release(victim);
    const ember_model *template_model = runnable->model;
    ember_status status = ember_stage_specialize(template_model, s, binding, live_in,
                                                 &victim->model);
    if (status == EMBER_OK)
        status = ember_instance_create(victim->model, &runnable->packed, &victim->instance);
    victim->stage = s;
    if (status == EMBER_OK)
        status = find_deciders(template_model, &template_model->stage_plan->stages[s], victim);
    if (status != EMBER_OK) {
        release(victim);
        return status;
    }
    memcpy(victim->values, binding->values, sizeof victim->values);
    memcpy(victim->bound, binding->bound, sizeof victim->bound);
    victim->last_used = ++runnable->clock;
    *out = victim;
    return EMBER_OK;
}

/* ---------------------------------------------------------------- running */

/* A control stage while profiling: one record, its bodies included. */
static ember_status profile_control(ember_runnable *runnable, size_t s, ember_binding *binding)
{
    static const char *const ops[] = {"ember_if", "ember_loop", "ember_scan"};
    const ember_stage_plan *plan = runnable->model->stage_plan;
    const ember_control *control = plan->stages[s].control;
    const double start = ember_profile_clock();
    ember_status status = ember_control_run(runnable, s, binding);
    if (status != EMBER_OK)
        return status;
    const int first = control->result_count > 0 ? control->results[0] : -1;
    const ember_tensor *output = first >= 0 ? &runnable->named[first] : NULL;
    return ember_profile_add(runnable->profile, ops[control->kind], NULL,
                             first >= 0 ? plan->names[first].name : "(control)",
                             ember_profile_clock() - start, NULL, 0, output);
}

/* Run stage s: its inputs from the tensors named so far, its outputs named for the
 * stages after it, and the sizes its deciding ops found bound. */
static ember_status run_stage(ember_runnable *runnable, size_t s, ember_binding *binding)
{
    const ember_stage_plan *plan = runnable->model->stage_plan;
    const ember_stage *stage = &plan->stages[s];
    if (stage->control != NULL && runnable->profile != NULL)
        return profile_control(runnable, s, binding);
    if (stage->control != NULL)
        return ember_control_run(runnable, s, binding);
    ember_tensor inputs[64];
    ember_tensor *live_in = stage->live_in_count <= 64
                                ? inputs : malloc(stage->live_in_count * sizeof *live_in);
    if (live_in == NULL)
        return oom();
    for (size_t i = 0; i < stage->live_in_count; i++)
        live_in[i] = runnable->named[stage->live_in[i]];
    ember_bound_instance *slot;
    ember_status status = instance_for(runnable, s, binding, live_in, &slot);
    if (status == EMBER_OK) {
        slot->instance->profile = runnable->profile;
        status = ember_instance_execute(slot->instance, stage->live_in_count, live_in);
    }
    if (live_in != inputs)
        free(live_in);
    if (status != EMBER_OK)
        return status;
    const ember_model *model = slot->model;
    for (size_t i = 0; i < stage->live_out_count; i++)
        runnable->named[stage->live_out[i]] = slot->instance->tensors[model->outputs[i]];
    for (size_t d = 0; d < stage->decider_count; d++) {
        const ember_node *node = &model->nodes[slot->decider_nodes[d]];
        const int64_t count = node->op->decided_count(
            node, &slot->instance->tensors[node->output], stage->deciders[d].item);
        binding->bound[stage->deciders[d].symbol] = 1;
        binding->values[stage->deciders[d].symbol] = count;
    }
    return EMBER_OK;
}

static ember_status run_template(ember_runnable *runnable, size_t n_inputs,
                                 const ember_tensor *inputs)
{
    const ember_model *model = runnable->model;
    const ember_stage_plan *plan = model->stage_plan;
    ember_binding binding;
    ember_status status = ember_bind_symbols(model, n_inputs, inputs, &binding);
    if (status != EMBER_OK)
        return status;
    runnable->has_run = 0;
    for (size_t i = 0; i < n_inputs; i++)
        if (plan->input_names[i] >= 0)
            runnable->named[plan->input_names[i]] = inputs[i];
    for (size_t s = 0; s < plan->stage_count && status == EMBER_OK; s++)
        status = run_stage(runnable, s, &binding);
    if (status != EMBER_OK)
        return status;
    for (size_t i = 0; i < model->output_count; i++)
        runnable->outputs[i] = runnable->named[plan->output_names[i]];
    runnable->has_run = 1;
    return EMBER_OK;
}

ember_status ember_runnable_execute(ember_runnable *runnable, size_t n_inputs,
                                    const ember_tensor *inputs)
{
    if (!runnable->model->symbolic) {
        runnable->instance->profile = runnable->profile;
        return ember_instance_execute(runnable->instance, n_inputs, inputs);
    }
    return run_template(runnable, n_inputs, inputs);
}

/* "input index 3 out of range (1 inputs)" */
static ember_status check_index(size_t index, size_t count, const char *what)
{
    if (index < count)
        return EMBER_OK;
    return ember_error_set(EMBER_ERROR_ARGUMENT, "%s index %zu out of range (%zu %ss)", what,
                           index, count, what);
}

ember_status ember_runnable_get_input(const ember_runnable *runnable, size_t index,
                                      ember_tensor *out)
{
    const ember_model *model = runnable->model;
    ember_status status = check_index(index, model->input_count, "input");
    if (status != EMBER_OK)
        return status;
    if (model->symbolic)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "input %zu '%s': the plan has "
                               "symbolic dims or control flow, so it makes its buffers at "
                               "each run: pass the input to ember_runnable_run", index,
                               model->input_names[index]);
    const ember_instance *instance = runnable->instance;
    *out = instance->tensors[instance->model->inputs[index]];
    return EMBER_OK;
}

ember_status ember_runnable_get_output(const ember_runnable *runnable, size_t index,
                                       ember_tensor *out)
{
    const ember_model *model = runnable->model;
    ember_status status = check_index(index, model->output_count, "output");
    if (status != EMBER_OK)
        return status;
    const ember_instance *instance = runnable->instance;
    if (model->symbolic ? !runnable->has_run : !instance->has_run)
        return ember_error_set(EMBER_ERROR_ARGUMENT,
                               "no output yet: call ember_runnable_run first");
    *out = model->symbolic ? runnable->outputs[index]
                           : instance->tensors[instance->model->outputs[index]];
    return EMBER_OK;
}

static size_t instance_working_bytes(const ember_instance *instance)
{
    return instance != NULL ? instance->arena_bytes + instance->packed_bytes : 0;
}

void ember_runnable_account(const ember_runnable *runnable, size_t *packed, size_t *working)
{
    *packed += runnable->packed.bytes;
    *working += instance_working_bytes(runnable->instance);
    for (size_t i = 0; i < runnable->cache_size; i++)
        *working += instance_working_bytes(runnable->cache[i].instance);
    for (size_t s = 0; runnable->controls && s < runnable->model->stage_plan->stage_count; s++)
        ember_control_state_account(runnable->controls[s], packed, working);
}

/* The model's constants are counted from its plan: every model a runnable builds (stages,
 * bodies) reads the root's archive. */
void ember_runnable_memory_report(const ember_runnable *runnable, ember_memory *out)
{
    memset(out, 0, sizeof *out);
    ember_archive_dat_bytes(&runnable->model->archive, &out->constant_bytes,
                            &out->constant_resident_bytes);
    ember_runnable_account(runnable, &out->packed_bytes, &out->arena_bytes);
}
