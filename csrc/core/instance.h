/*
 * csrc/core/instance.h — a model prepared for this CPU, with its working memory.
 *
 * Preparing (instance.c) turns the immutable model into a list of steps:
 *
 *   1. liveness   nodes that no graph output depends on are dropped;
 *   2. fusion     (fuse.c) a conv/matmul absorbs the relu/clamp/min/max and per-channel
 *                 add that consume it alone; those consumers become aliases; a 1×1 conv
 *                 takes the scale (BatchNorm, relu) before it, which becomes an alias of
 *                 its operand;
 *   3. storage    every value gets a storage representative: itself, or for an alias
 *                 (fused consumer, view op such as reshape) the value whose bytes it
 *                 shares; constants are their own storage and never copied; a one-row
 *                 concat's inputs are placed inside its output (an offset there);
 *                 a fused residual nothing reads afterwards lends its bytes to the
 *                 output of the op that adds it;
 *   4. prepare    each remaining node's op packs weights and asks for scratch;
 *   5. arena      (arena.c) one block holds every representative and scratch buffer,
 *                 placed by lifetime so that values not alive at the same time share
 *                 bytes.
 *
 * Running is then: copy the inputs into the arena, call each step's run. Nothing is
 * allocated and nothing can fail once the inputs are checked.
 */
#ifndef EMBER_CORE_INSTANCE_H
#define EMBER_CORE_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "core/op.h"
#include "core/packed.h"

/* Alignment of every buffer in the arena: a cache line, and enough for any SIMD load. */
#define EMBER_ARENA_ALIGNMENT 64

typedef struct ember_step {
    const ember_node *node;
    void *prepared;                  /* the op's prepared state, or NULL */
    void (*free_prepared)(void *);   /* copied from the op: freeing never reads the model */
    const ember_tensor **inputs;     /* node->input_count pointers into instance->tensors */
    void *scratch;                   /* into the arena, or NULL */
    const ember_tensor *residual;    /* the fused epilogue's residual, or NULL */
    int active;                      /* 0: dead, fused away or a view — never run */
} ember_step;

typedef struct ember_instance ember_instance;

struct ember_instance {
    const ember_model *model;
    ember_tensor *tensors;           /* one per value: fact and where its bytes live */
    ember_step *steps;               /* one per node, in graph order */
    size_t step_count;
    const ember_tensor **input_slots; /* storage behind every step's `inputs` */
    uint8_t *arena;
    size_t arena_bytes;
    size_t packed_bytes;             /* held by prepared states (bias; not the shared store) */
    ember_packed_store *packed_store; /* the runnable's, shared */
    struct ember_profile *profile;   /* while profiling (core/profile.h), else NULL */
    int has_run;
};

/* A request for arena space: `bytes` alive from step `first` to step `last` inclusive. */
typedef struct ember_arena_request {
    size_t bytes;
    int first, last;
    size_t offset;                   /* out */
} ember_arena_request;

/* Place every request (greedy first-fit by offset, biggest first, aligned to
 * EMBER_ARENA_ALIGNMENT) so that requests alive at the same time never overlap.
 * *out_total is the arena size. Fails only on size overflow or out of memory. */
ember_status ember_arena_plan(ember_arena_request *requests, size_t count, size_t *out_total);

/* Fusion (fuse.c). For each node, `fused_into[i]` becomes the index of the GEMM node
 * that absorbed node i, or -1; `epilogues[i]` the epilogue of GEMM node i. Only nodes
 * with live[i] are considered. Epilogue bias arrays are malloc'd (free them). */
ember_status ember_fuse_epilogues(const ember_model *model, const uint8_t *live,
                                  int *fused_into, ember_epilogue *epilogues);

/* `packed`: the runnable's store of packed weights, shared with its other instances. */
ember_status ember_instance_create(const ember_model *model, ember_packed_store *packed,
                                   ember_instance **out);
void ember_instance_destroy(ember_instance *instance);
/* Check the inputs against the model's input facts, then run every step. */
ember_status ember_instance_execute(ember_instance *instance, size_t n_inputs,
                                    const ember_tensor *inputs);

#endif /* EMBER_CORE_INSTANCE_H */
