/*
 * csrc/core/runnable.h — the public ember_runnable: a model prepared to run.
 *
 * A concrete model (every dim an integer) has one instance (core/instance.h), prepared
 * once. A template (a plan with symbolic dims, core/symbols.h) is prepared per binding
 * of its symbols: each run reads the symbols' values from its input shapes, then runs
 * the template's stages in order (core/model_stages.h; one stage unless some size is
 * decided by values). The instance of a stage for a binding — a concrete model built
 * from the stage with the symbols replaced, then prepared as any other — is taken from
 * a small cache, or built and put there, evicting the least recently used. So
 * alternating between a few input lengths prepares each once, and a run with a binding
 * seen before allocates nothing.
 */
#ifndef EMBER_CORE_RUNNABLE_H
#define EMBER_CORE_RUNNABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/instance.h"
#include "core/model.h"
#include "core/model_stages.h"
#include "core/symbols.h"

/* How many bindings a runnable keeps prepared per stage (documented in ember.h). */
#define EMBER_BINDING_CACHE 4

/* One stage of a template, built and prepared for one binding of the symbols. */
typedef struct ember_bound_instance {
    ember_model *model;          /* the concrete model of this stage; NULL: free slot */
    ember_instance *instance;
    size_t stage;
    int64_t values[EMBER_MAX_SYMBOLS]; /* the binding at the start of the stage */
    uint8_t bound[EMBER_MAX_SYMBOLS];
    int *decider_nodes;          /* node of each of the stage's deciding ops */
    uint64_t last_used;
} ember_bound_instance;

struct ember_runnable {
    int references;              /* public runnables: the creator's handle, one per state */
    const ember_model *model;    /* a public runnable holds one of the model's references */
    ember_instance *instance;    /* a concrete model's one instance */
    ember_packed_store packed;   /* packed weights, shared by every instance */
    /* templates */
    ember_bound_instance *cache; /* EMBER_BINDING_CACHE per stage */
    size_t cache_size;
    ember_tensor *named;         /* per name id of the stage plan: its tensor in this run */
    ember_tensor *outputs;       /* per graph output, after the last complete run */
    struct ember_control_state **controls; /* per stage: a control stage's state, or NULL */
    int has_run;
    uint64_t clock;
    struct ember_profile *profile;   /* while ember_runnable_profile runs, else NULL */
};

ember_status ember_runnable_create(const ember_model *model, ember_runnable **out);
void ember_runnable_destroy(ember_runnable *runnable);
/* A public runnable: created with one handle, holding one of its model's. Take and drop
 * handles (see `references`); the last one destroys the runnable and drops the model.
 * Runnables made with ember_runnable_create (control-flow bodies) are not counted. */
ember_status ember_runnable_open(const ember_model *model, ember_runnable **out);
void ember_runnable_retain(ember_runnable *runnable);
void ember_runnable_release(ember_runnable *runnable);
/* Bind the symbols (templates), check the inputs, run. */
ember_status ember_runnable_execute(ember_runnable *runnable, size_t n_inputs,
                                    const ember_tensor *inputs);
/* Input `index`'s buffer in a concrete model's arena (ember_runnable_input). */
ember_status ember_runnable_get_input(const ember_runnable *runnable, size_t index,
                                      ember_tensor *out);
/* Output `index` of the last run; EMBER_ERROR_ARGUMENT if there was none. */
ember_status ember_runnable_get_output(const ember_runnable *runnable, size_t index,
                                       ember_tensor *out);
/* Add what the runnable holds to *packed (its store of packed weights, and its
 * control-flow bodies') and *working (the arena and per-instance prepared state of
 * every prepared instance, control-flow buffers). */
void ember_runnable_account(const ember_runnable *runnable, size_t *packed,
                            size_t *working);
/* The report of ember_runnable_memory (include/ember.h). */
void ember_runnable_memory_report(const ember_runnable *runnable, ember_memory *out);

/* The binding of a template's symbols given by these inputs, or an error naming the
 * input and symbol that disagree ("input 1 'h' gives S=37, input 0 'x' gave S=100"). */
ember_status ember_bind_symbols(const ember_model *model, size_t n_inputs,
                                const ember_tensor *inputs, ember_binding *binding);

#endif /* EMBER_CORE_RUNNABLE_H */
