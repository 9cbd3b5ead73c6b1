/*
 * csrc/core/runnable.h — the public ember_runnable: a model prepared to run.
 *
 * A concrete model (every dim an integer) has one instance (core/instance.h), prepared
 * once. A template (a plan with symbolic dims, core/symbols.h) is prepared per binding
 * of its symbols: each run reads the symbols' values from its input shapes, and the
 * instance of that binding — a concrete model built from the plan with the symbols
 * replaced, then prepared as any other — is taken from a small cache, or built and put
 * there, evicting the least recently used. So alternating between a few input lengths
 * prepares each once, and a run with a binding seen before allocates nothing.
 */
#ifndef EMBER_CORE_RUNNABLE_H
#define EMBER_CORE_RUNNABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/instance.h"
#include "core/model.h"
#include "core/symbols.h"

/* How many bindings a runnable keeps prepared (documented in include/ember.h). */
#define EMBER_BINDING_CACHE 4

typedef struct ember_bound_instance {
    ember_model *model;          /* the concrete model of this binding; NULL: free slot */
    ember_instance *instance;
    int64_t values[EMBER_MAX_SYMBOLS];
    uint64_t last_used;
} ember_bound_instance;

struct ember_runnable {
    const ember_model *model;
    ember_instance *instance;    /* the concrete model's, or the last run's binding's */
    ember_bound_instance cache[EMBER_BINDING_CACHE];
    uint64_t clock;
};

ember_status ember_runnable_create(const ember_model *model, ember_runnable **out);
void ember_runnable_destroy(ember_runnable *runnable);
/* Bind the symbols (templates), check the inputs, run. */
ember_status ember_runnable_execute(ember_runnable *runnable, size_t n_inputs,
                                    const ember_tensor *inputs);
/* Output `index` of the last run; EMBER_ERROR_ARGUMENT if there was none. */
ember_status ember_runnable_get_output(const ember_runnable *runnable, size_t index,
                                       ember_tensor *out);
/* Arena and packed weights of every prepared instance. */
size_t ember_runnable_bytes(const ember_runnable *runnable);

/* The binding of a template's symbols given by these inputs, or an error naming the
 * input and symbol that disagree ("input 1 'h' gives S=37, input 0 'x' gave S=100"). */
ember_status ember_bind_symbols(const ember_model *model, size_t n_inputs,
                                const ember_tensor *inputs, ember_binding *binding);

#endif /* EMBER_CORE_RUNNABLE_H */
