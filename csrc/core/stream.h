/*
 * csrc/core/stream.h — what a pulsed plan says about its streaming (cook/pulse.py), read
 * from its tract_core_properties when it loads.
 *
 * A pulsed plan is made of ordinary ops. Its graph inputs are the user's, then the i64
 * scalars pulse_chunk (the call's number) and pulse_end (the stream's length, huge while
 * unknown), then the states; its outputs are the user's, then per user output the
 * position just past its last real frame, then the states' next values. ember_state
 * (stream.c) runs it pulse by pulse, feeding each run's next states to the next.
 */
#ifndef EMBER_CORE_STREAM_H
#define EMBER_CORE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "plan/plan.h"

typedef struct ember_pulse_meta {
    int64_t pulse;                /* frames per call of the streamed inputs */
    size_t input_count;           /* the user's inputs (the first of the graph) */
    int *input_axes;              /* per user input, -1 when it does not stream */
    size_t output_count;          /* the user's outputs */
    int *output_axes;
    int64_t *output_delays;
    size_t state_count;
} ember_pulse_meta;

struct ember_model;
/* Read the ember.pulse* properties of `doc` into model->pulse (left NULL when the plan
 * does not stream); a malformed one is an EMBER_ERROR_FORMAT naming it. */
ember_status ember_pulse_meta_read(struct ember_model *model, const ember_nnef_document *doc);
void ember_pulse_meta_free(ember_pulse_meta *meta);

#endif /* EMBER_CORE_STREAM_H */
