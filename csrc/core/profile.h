/*
 * csrc/core/profile.h — per-node timings (ember_runnable_profile in include/ember.h).
 *
 * While a runnable profiles, each instance it executes carries the profile and times
 * every node it runs; records are kept by node name in first-run order, so stages of a
 * symbolic plan and repeated runs land on the same record. A control-flow stage (if,
 * loop, scan) is one record, its bodies included.
 */
#ifndef EMBER_CORE_PROFILE_H
#define EMBER_CORE_PROFILE_H

#include "core/model.h"
#include "ember.h"

struct ember_profile {
    ember_node_profile *nodes;    /* names and ops copied: instances may be evicted */
    size_t count, capacity;
    size_t cursor;                /* where the next record of this run is expected */
    int runs;
    double seconds;               /* all runs, every node */
};

double ember_profile_clock(void);
/* Start a run: records are matched from the first again. */
void ember_profile_run_start(ember_profile *profile);
/* One node's run: `seconds` more for the record of `name`, with its costs (computed
 * from the tensors on its first run). `form`: the op's (static storage), or NULL. */
ember_status ember_profile_add(ember_profile *profile, const char *op, const char *form,
                               const char *name, double seconds,
                               const ember_tensor *const *inputs, size_t input_count,
                               const ember_tensor *output);

#endif /* EMBER_CORE_PROFILE_H */
