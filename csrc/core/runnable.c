/*
 * The public runnable: one prepared instance for a concrete model, a cache of them per
 * binding for a template. See core/runnable.h.
 */
#include "core/runnable.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

ember_status ember_runnable_create(const ember_model *model, ember_runnable **out)
{
    ember_runnable *runnable = calloc(1, sizeof *runnable);
    if (runnable == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory preparing the model");
    runnable->model = model;
    if (!model->symbolic) {
        ember_status status = ember_instance_create(model, &runnable->instance);
        if (status != EMBER_OK) {
            free(runnable);
            return status;
        }
    }
    *out = runnable;
    return EMBER_OK;
}

static void release(ember_bound_instance *slot)
{
    ember_instance_destroy(slot->instance);
    ember_model_destroy(slot->model);
    memset(slot, 0, sizeof *slot);
}

void ember_runnable_destroy(ember_runnable *runnable)
{
    if (runnable == NULL)
        return;
    if (!runnable->model->symbolic)
        ember_instance_destroy(runnable->instance);
    for (size_t i = 0; i < EMBER_BINDING_CACHE; i++)
        release(&runnable->cache[i]);
    free(runnable);
}

static int same_values(const ember_bound_instance *slot, const ember_binding *binding)
{
    return memcmp(slot->values, binding->values, binding->count * sizeof(int64_t)) == 0;
}

/* The cached instance of `binding`, or a new one in the least recently used slot. */
static ember_status instance_for(ember_runnable *runnable, const ember_binding *binding,
                                 ember_instance **out)
{
    ember_bound_instance *victim = &runnable->cache[0];
    for (size_t i = 0; i < EMBER_BINDING_CACHE; i++) {
        ember_bound_instance *slot = &runnable->cache[i];
        if (slot->model != NULL && same_values(slot, binding)) {
            slot->last_used = ++runnable->clock;
            *out = slot->instance;
            return EMBER_OK;
        }
        if (slot->model == NULL ? victim->model != NULL : (victim->model != NULL &&
                                                          slot->last_used < victim->last_used))
            victim = slot;
    }
    if (victim->instance == runnable->instance)
        runnable->instance = NULL; /* its outputs go with it */
    release(victim);
    ember_model *model = NULL;
    ember_instance *instance = NULL;
    ember_status status = ember_model_specialize(runnable->model, binding, &model);
    if (status == EMBER_OK)
        status = ember_instance_create(model, &instance);
    if (status != EMBER_OK) {
        ember_model_destroy(model);
        return status;
    }
    victim->model = model;
    victim->instance = instance;
    memcpy(victim->values, binding->values, binding->count * sizeof(int64_t));
    victim->last_used = ++runnable->clock;
    *out = instance;
    return EMBER_OK;
}

ember_status ember_runnable_execute(ember_runnable *runnable, size_t n_inputs,
                                    const ember_tensor *inputs)
{
    if (!runnable->model->symbolic)
        return ember_instance_execute(runnable->instance, n_inputs, inputs);
    ember_binding binding;
    ember_instance *instance;
    ember_status status = ember_bind_symbols(runnable->model, n_inputs, inputs, &binding);
    if (status == EMBER_OK)
        status = instance_for(runnable, &binding, &instance);
    if (status != EMBER_OK)
        return status;
    runnable->instance = instance;
    return ember_instance_execute(instance, n_inputs, inputs);
}

ember_status ember_runnable_get_output(const ember_runnable *runnable, size_t index,
                                       ember_tensor *out)
{
    const ember_model *model = runnable->model;
    if (index >= model->output_count)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "output index %zu out of range (%zu "
                               "outputs)", index, model->output_count);
    const ember_instance *instance = runnable->instance;
    if (instance == NULL || !instance->has_run)
        return ember_error_set(EMBER_ERROR_ARGUMENT,
                               "no output yet: call ember_runnable_run first");
    *out = instance->tensors[instance->model->outputs[index]];
    return EMBER_OK;
}

size_t ember_runnable_bytes(const ember_runnable *runnable)
{
    if (!runnable->model->symbolic)
        return runnable->instance->arena_bytes + runnable->instance->packed_bytes;
    size_t total = 0;
    for (size_t i = 0; i < EMBER_BINDING_CACHE; i++)
        if (runnable->cache[i].instance != NULL)
            total += runnable->cache[i].instance->arena_bytes +
                     runnable->cache[i].instance->packed_bytes;
    return total;
}
