/*
 * ember.h — the public C API of the ember inference runtime.
 *
 * ember runs a plan: a neural network cooked once on a workstation (see cook/, the
 * Python side) into an NNEF directory, .tar or .tgz. This header is the only one a
 * program needs; link with libember (static or shared) and libm.
 *
 * A complete program (examples/digits.c, which the tests build and run):
 *
 *     #include <stdio.h>
 *     #include "ember.h"
 *
 *     // Classify one 8x8 digit (64 pixel values, 0 to 16, on stdin) with the plan that
 *     // examples/digits.py cooks. Build: cc digits.c $(pkg-config --cflags --libs ember)
 *     int main(int argc, char **argv) {
 *         ember_model *model = NULL;
 *         ember_runnable *run = NULL;
 *         if (argc != 2 || ember_model_load(argv[1], &model) != EMBER_OK ||
 *             ember_runnable_new(model, &run) != EMBER_OK) {
 *             fprintf(stderr, "usage: digits PLAN < pixels\n%s\n", ember_last_error());
 *             return 1;
 *         }
 *         float image[1 * 1 * 8 * 8];                  // the input, in model order
 *         for (int i = 0; i < 64; i++) {
 *             if (scanf("%f", &image[i]) != 1) {
 *                 fprintf(stderr, "digits: 64 pixel values expected on stdin\n");
 *                 return 1;
 *             }
 *             image[i] /= 16.0f;                       // as the model was trained
 *         }
 *         ember_tensor in = {EMBER_F32, 4, {1, 1, 8, 8}, image};
 *         if (ember_runnable_run(run, 1, &in) != EMBER_OK) {
 *             fprintf(stderr, "ember: %s\n", ember_last_error());
 *             return 1;
 *         }
 *         ember_tensor out;
 *         ember_runnable_output(run, 0, &out);         // valid until the next run or free
 *         const float *logits = out.data;
 *         int best = 0;
 *         for (int k = 1; k < 10; k++)
 *             if (logits[k] > logits[best])
 *                 best = k;
 *         printf("%d\n", best);
 *         ember_runnable_free(run);
 *         ember_model_free(model);
 *         return 0;
 *     }
 *
 * Conventions
 * - Every fallible call returns an ember_status; EMBER_OK is 0. On failure,
 *   ember_last_error() returns a message naming the file, node, op and reason. It is
 *   thread-local and valid until the next failing call on the same thread.
 * - Handles are opaque. Every _free function accepts NULL and does nothing.
 * - Output parameters come last. On failure they are left as NULL / untouched.
 * - Inputs are owned by the caller and only read during the call.
 * - An ember_model is immutable once loaded: it may be shared between threads, and
 *   several runnables may be created from it. An ember_runnable holds the working
 *   memory of one execution and is used by one thread at a time.
 * - No global state: nothing to initialise, nothing to tear down.
 */
#ifndef EMBER_H
#define EMBER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(EMBER_BUILDING) && defined(__GNUC__)
#define EMBER_API __attribute__((visibility("default")))
#else
#define EMBER_API
#endif

/* The version of this library. Released signatures never change; a changed call is
 * added with a _v2 suffix. */
#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 1
#define EMBER_VERSION_PATCH 0
/* The newest plan format this runtime reads (property "ember.plan_version"). */
#define EMBER_PLAN_VERSION 1
/* The largest rank a tensor may have. */
#define EMBER_MAX_RANK 8

/* Status codes. The list only grows. */
typedef enum ember_status {
    EMBER_OK = 0,
    EMBER_ERROR_IO = 1,          /* a file could not be opened or read */
    EMBER_ERROR_FORMAT = 2,      /* the archive, a .dat file or graph.nnef is malformed */
    EMBER_ERROR_UNSUPPORTED = 3, /* a valid plan uses an op, type or feature ember lacks */
    EMBER_ERROR_INVALID = 4,     /* inconsistent model: shapes, attributes, references */
    EMBER_ERROR_ARGUMENT = 5,    /* a bad argument from the caller: NULL, index, shape */
    EMBER_ERROR_MEMORY = 6       /* an allocation failed */
} ember_status;

/* Datum types. Values are stable. */
typedef enum ember_datum_type {
    EMBER_F32 = 1,
    EMBER_I64 = 2,
    EMBER_I32 = 3,
    EMBER_I8 = 4,
    EMBER_U8 = 5,
    EMBER_BOOL = 6,
    EMBER_I16 = 7,
    EMBER_U16 = 8,
    EMBER_U32 = 9,
    EMBER_U64 = 10,
    EMBER_F16 = 11,              /* IEEE binary16, stored as such */
    EMBER_F64 = 12
} ember_datum_type;

/* A dense, row-major tensor. `data` is not owned by the struct. */
typedef struct ember_tensor {
    ember_datum_type datum_type;
    int32_t rank;
    int64_t shape[EMBER_MAX_RANK];
    void *data;
} ember_tensor;

/* What is known of a model input or output before running: datum type and shape. A
 * symbolic dim (the plan keeps it as an expression of symbols: "S", "S+2", "2*S") is
 * -1 in `shape`; ember_model_input_dim / ember_model_output_dim give its text. */
typedef struct ember_fact {
    ember_datum_type datum_type;
    int32_t rank;
    int64_t shape[EMBER_MAX_RANK];
} ember_fact;

typedef struct ember_model ember_model;       /* a loaded plan; immutable, shareable */
typedef struct ember_runnable ember_runnable; /* a model prepared for this CPU, with its memory */

/* "0.1.0". Static storage. Thread-safe. */
EMBER_API const char *ember_version(void);

/* The kernels dispatch chose for this CPU, one "family kernel" line each
 * ("f32_gemm f32_gemm_6x16__avx2_fma\n..."), then "core <class>": the class of core the
 * cost models choose between an op's forms for ("generic", "zen5", "zen4",
 * "sapphire_rapids", "zen3"). The environment variable EMBER_ISA forces an ISA ("scalar",
 * "avx2_fma", "neon_aarch64", ...): one that is unknown or not on this CPU makes
 * ember_runnable_new fail with EMBER_ERROR_ARGUMENT naming the usable ones; EMBER_CORE forces a class, and one it does not name fails the
 * same way. Static storage. Thread-safe. */
EMBER_API const char *ember_kernels(void);

/* The message of the last failure on this thread, or "" if none. Thread-local;
 * valid until the next failing ember call on this thread. */
EMBER_API const char *ember_last_error(void);

/* The byte size of one item of a datum type, 0 if unknown. */
EMBER_API size_t ember_datum_type_size(ember_datum_type dt);

/* Load a plan from a path: a directory holding graph.nnef, a .tar, or a gzip'd tar.
 * A .tar is mapped into memory and read in place, not copied: its weights are read from
 * the file as they are first used, and the pages of the weights that preparing packs
 * are given back to the system (see ember_runnable_memory). So the file must stay as
 * it is while the model (or a runnable of it) lives: a file truncated under it makes the
 * next read of a page past the new end fault (SIGBUS), and a file rewritten in place
 * changes the weights the model sees. Replacing it (write a new file, rename it over
 * the old one) is safe. Whoever cannot promise that reads the file and loads it with
 * ember_model_load_buffer, which keeps its own copy. A gzip'd tar and a directory are
 * read into memory. (Without mmap — a build with EMBER_NO_MMAP defined, or a system
 * without it — a .tar is read into memory too.)
 * Errors: EMBER_ERROR_IO, _FORMAT, _UNSUPPORTED, _INVALID, _MEMORY.
 * On success *out_model is a new model, to be released with ember_model_free. */
EMBER_API ember_status ember_model_load(const char *path, ember_model **out_model);

/* Load a plan from memory: the bytes of a .tar or a gzip'd tar. The buffer is copied
 * (a .tar; a gzip'd tar is inflated), so the caller may free it after the call; the
 * copy stays resident beside the weights preparing packs. Errors as ember_model_load. */
EMBER_API ember_status ember_model_load_buffer(const void *data, size_t size,
                                               ember_model **out_model);

EMBER_API void ember_model_free(ember_model *model);

/* Inputs and outputs, in the order of the graph declaration. Thread-safe. */
EMBER_API size_t ember_model_input_count(const ember_model *model);
EMBER_API size_t ember_model_output_count(const ember_model *model);
/* Name of input/output `index`, owned by the model; NULL if the index is out of range. */
EMBER_API const char *ember_model_input_name(const ember_model *model, size_t index);
EMBER_API const char *ember_model_output_name(const ember_model *model, size_t index);
/* Errors: EMBER_ERROR_ARGUMENT for a bad index. */
EMBER_API ember_status ember_model_input_fact(const ember_model *model, size_t index,
                                              ember_fact *out_fact);
EMBER_API ember_status ember_model_output_fact(const ember_model *model, size_t index,
                                               ember_fact *out_fact);
/* Symbolic dims. A plan cooked with symbolic shapes (a time axis "S", a batch "N")
 * runs with any input shapes consistent with it: each run reads the symbols' values
 * from its input shapes ("1,S,40" given 1×100×40 binds S = 100), checks every input
 * against them (an inconsistency names both inputs, the symbol and both values), and
 * computes every shape from there. The text of a symbolic dim, owned by the model, or
 * NULL for a dim that is an integer or a bad index. Thread-safe. */
EMBER_API const char *ember_model_input_dim(const ember_model *model, size_t index, int axis);
EMBER_API const char *ember_model_output_dim(const ember_model *model, size_t index, int axis);
/* The plan's symbols (`extension tract_symbol S;`), in declaration order. */
EMBER_API size_t ember_model_symbol_count(const ember_model *model);
EMBER_API const char *ember_model_symbol_name(const ember_model *model, size_t index);

/* The number of nodes (operations) of the loaded graph. */
EMBER_API size_t ember_model_node_count(const ember_model *model);

/* Prepare a model for this CPU: choose a kernel per op, pack weights, plan the memory
 * arena. The runnable holds a reference to the model: ember_model_free and
 * ember_runnable_free may come in either order, the model goes with the last.
 * Errors: EMBER_ERROR_MEMORY, EMBER_ERROR_UNSUPPORTED. */
EMBER_API ember_status ember_runnable_new(const ember_model *model,
                                          ember_runnable **out_runnable);

EMBER_API void ember_runnable_free(ember_runnable *runnable);

/* Run once. `inputs` holds ember_model_input_count(model) tensors, in model order,
 * each matching its input fact. The inputs are read during the call only, and may be
 * the last run's outputs (a recurrent state fed back) or the buffers of
 * ember_runnable_input. Results are then read with ember_runnable_output. Running
 * allocates nothing.
 * With symbolic dims: the first run with a new binding of the symbols prepares the model
 * for it (builds its shapes, packs weights, plans memory: as ember_runnable_new does);
 * the runnable keeps the last 4 bindings prepared, so a run whose binding is one of them
 * allocates nothing, and the least recently used one is released for a fifth.
 * Errors: EMBER_ERROR_ARGUMENT (count, type or shape mismatch, naming the input). */
EMBER_API ember_status ember_runnable_run(ember_runnable *runnable, size_t n_inputs,
                                          const ember_tensor *inputs);

/* The output `index` of the last successful run, with its concrete shape (for a
 * symbolic plan, the shape of this run). out_tensor->data points into the runnable's
 * memory and is valid until the next run or ember_runnable_free.
 * Errors: EMBER_ERROR_ARGUMENT for a bad index or when nothing was run yet. */
EMBER_API ember_status ember_runnable_output(const ember_runnable *runnable, size_t index,
                                             ember_tensor *out_tensor);

/* Input `index`'s own buffer in the runnable's memory, for writing an input in place:
 * fill out_tensor->data (out_tensor has the input's fact), then pass *out_tensor to
 * ember_runnable_run, which copies nothing for it. That saves the caller's buffer and one
 * copy per run (a 224x224 RGB image: 0.6 MB). The run reuses the buffer once the input is
 * read: write the input again before every run; writing it may overwrite the last run's
 * outputs. Valid until ember_runnable_free.
 * Errors: EMBER_ERROR_ARGUMENT for a bad index; EMBER_ERROR_UNSUPPORTED for a plan with
 * symbolic dims or control flow (ember_if, ember_loop, ember_scan), which makes its
 * buffers at each run, for the shapes and branches of that run. */
EMBER_API ember_status ember_runnable_input(ember_runnable *runnable, size_t index,
                                            ember_tensor *out_tensor);

/* Bytes of working memory held by the runnable: packed_bytes + arena_bytes of
 * ember_runnable_memory. */
EMBER_API size_t ember_runnable_memory_bytes(const ember_runnable *runnable);

/* Where a runnable's memory goes. Its peak is about the resident constants +
 * packed_bytes + arena_bytes; a program's peak resident size is the process's business
 * (ember-run --memory prints it). */
typedef struct ember_memory {
    size_t constant_bytes;          /* the plan's constants (its tensor files' items), as
                                       stored: the same for every runnable of a model */
    size_t constant_resident_bytes; /* of those, in this process's memory now. A model
                                       loaded by path from a .tar maps the file: its pages
                                       are read when first used, and those of the weights
                                       preparing packed for good (conv's, matmul's, the
                                       recurrent ops') are given back, so this drops once runnables
                                       are prepared. Counted page by page on
                                       Linux; elsewhere, and for a plan read into memory
                                       (a buffer, a .tgz, a directory), all of them */
    size_t packed_bytes;            /* weights packed into this CPU's kernels' layouts */
    size_t arena_bytes;             /* activations, scratch and per-instance prepared state
                                       of every prepared binding; control-flow buffers */
} ember_memory;

/* Fill *out_memory. The constants are the model's (shared by its runnables); packed and
 * arena bytes are this runnable's, for the bindings prepared so far (a symbolic plan
 * prepares one at its first run with new symbol values). Like a run, not while the
 * runnable runs on another thread. Errors: EMBER_ERROR_ARGUMENT for a NULL argument. */
EMBER_API ember_status ember_runnable_memory(const ember_runnable *runnable,
                                             ember_memory *out_memory);

/* ---- streaming ----
 *
 * A pulsed plan (cooked with model.pulse(P)) runs a stream P frames per call and gives
 * the batch model's outputs, each `delay` frames late. An ember_state carries what the
 * plan needs from the past between calls; many states may share one runnable (its
 * weights and working memory), running one at a time.
 *
 *     ember_state *s;  ember_state_new(run, &s);
 *     for each pulse:  [ember_state_end(s, total_frames) before the pulse holding the
 *                       last frame; fill that pulse's missing frames with anything]
 *                      ember_state_run(s, n_inputs, pulse);
 *                      ember_state_output(s, i, &y, &first, &count);  use frames
 *                      [first, first + count) of y along its time axis
 *     after the last:  while (ember_state_pending(s)) { ember_state_run(s, 0, NULL);
 *                      ember_state_output(…) }   the frames the delay still owes
 *
 * The frames so collected equal the batch model's outputs, frame for frame, the last
 * ones included: the plan pads past the end of the stream as the batch model pads past
 * the end of its input. Running allocates nothing. */
typedef struct ember_state ember_state;
typedef struct ember_frozen_state ember_frozen_state;

/* The pulse size of a pulsed plan (frames per call on its streamed inputs), or 0 for a
 * plan that does not stream. Then per user input its time axis (-1: not streamed), per
 * user output its time axis and its delay in frames; -1 for a bad index. The user's
 * inputs and outputs come first among the plan's (the others are the state's). */
EMBER_API int64_t ember_model_pulse(const ember_model *model);
EMBER_API size_t ember_model_stream_input_count(const ember_model *model);
EMBER_API size_t ember_model_stream_output_count(const ember_model *model);
EMBER_API int ember_model_stream_input_axis(const ember_model *model, size_t index);
EMBER_API int ember_model_stream_output_axis(const ember_model *model, size_t index);
EMBER_API int64_t ember_model_stream_output_delay(const ember_model *model, size_t index);

/* A new stream on a runnable of a pulsed plan. The state holds a reference to the
 * runnable (as the runnable to its model): free them in any order.
 * Errors: EMBER_ERROR_ARGUMENT (the plan does not stream), EMBER_ERROR_MEMORY. */
EMBER_API ember_status ember_state_new(ember_runnable *runnable, ember_state **out_state);
EMBER_API void ember_state_free(ember_state *state);
/* Start a new stream: states back to zeros, nothing given yet. */
EMBER_API void ember_state_reset(ember_state *state);
/* Run one pulse: `inputs` are the user inputs, each one pulse as its fact says; or
 * n_inputs = 0 and inputs NULL for a filler pulse once every frame was given.
 * Errors: EMBER_ERROR_ARGUMENT naming the input. */
EMBER_API ember_status ember_state_run(ember_state *state, size_t n_inputs,
                                       const ember_tensor *inputs);
/* The stream has `frames` frames in all. Give it before running the pulse that holds the
 * last one (EMBER_ERROR_ARGUMENT after). */
EMBER_API ember_status ember_state_end(ember_state *state, int64_t frames);
/* Whether, every frame given, some output still owes frames: run a filler pulse. */
EMBER_API int ember_state_pending(const ember_state *state);
/* Output `index` of the last run (valid until the runnable runs again), and which of its
 * frames along its time axis are real: [*out_first, *out_first + *out_count) (either
 * pointer may be NULL). The frames before a stream's delay and past its end are not. */
EMBER_API ember_status ember_state_output(const ember_state *state, size_t index,
                                          ember_tensor *out_tensor, int64_t *out_first,
                                          int64_t *out_count);
/* Bytes the state holds (its buffers: what the plan carries from call to call). */
EMBER_API size_t ember_state_bytes(const ember_state *state);
/* A snapshot of the state, and a new state from it (on the same runnable, which the
 * snapshot holds); both cost one copy of the buffers and no preparation. */
EMBER_API ember_status ember_state_freeze(const ember_state *state,
                                          ember_frozen_state **out_frozen);
EMBER_API ember_status ember_frozen_state_unfreeze(const ember_frozen_state *frozen,
                                                   ember_state **out_state);
EMBER_API void ember_frozen_state_free(ember_frozen_state *frozen);

/* ---- profiling ----
 *
 * Where a run's time goes, node by node: ember_runnable_profile runs the runnable once
 * to warm up, then `runs` times timing every node (the normal run path pays nothing for
 * this: a pointer stays NULL). Nodes are the plan's, by the name of their first output,
 * in the order they first ran; a node the runtime fused into a convolution or GEMM (an
 * activation, a bias) is counted in that node; a control-flow node (ember_if, ember_loop,
 * ember_scan) is one node, its bodies included. */
typedef struct ember_profile ember_profile;

typedef struct ember_node_profile {
    const char *name;             /* owned by the profile */
    const char *op;               /* "conv", "matmul", "ember_lstm", … (static storage) */
    double seconds;               /* mean per run */
    double flops;                 /* per run: 2 per multiply-add for conv, matmul and the
                                     recurrent ops; one per output item for the others */
    double bytes;                 /* per run: bytes of the inputs read and output written */
    int32_t rank;                 /* the (first) output's shape on the first profiled run */
    int64_t shape[EMBER_MAX_RANK];
    const char *form;             /* the form the op was prepared in, for an op of several
                                     ("winograd", "im2col", "pointwise", "depthwise_blocked",
                                     … for conv); "" for the others (static storage) */
} ember_node_profile;

/* Errors: those of ember_runnable_run, EMBER_ERROR_ARGUMENT for runs < 1. On success
 * *out_profile is to be freed with ember_profile_free. */
EMBER_API ember_status ember_runnable_profile(ember_runnable *runnable, size_t n_inputs,
                                             const ember_tensor *inputs, int runs,
                                             ember_profile **out_profile);
EMBER_API size_t ember_profile_node_count(const ember_profile *profile);
/* Node `index` (< ember_profile_node_count); EMBER_ERROR_ARGUMENT for a bad index. */
EMBER_API ember_status ember_profile_node(const ember_profile *profile, size_t index,
                                          ember_node_profile *out_node);
/* Mean seconds per run spent in nodes (the sum over nodes). */
EMBER_API double ember_profile_seconds(const ember_profile *profile);
EMBER_API void ember_profile_free(ember_profile *profile);

/* ---- tooling ---- */

/* NNEF text (a graph document) in the flat form the loader builds models from:
 * compound fragments (the document's own and the NNEF standard library's) inlined,
 * operators and nested invocations as invocations of their own. The Python reader reads
 * plans through this, so that it and the loader accept the same grammar. `origin` names
 * the text in error messages. On success *out_text is a malloc'd NUL-terminated string
 * of *out_size bytes, to free with ember_text_free. */
EMBER_API ember_status ember_nnef_flatten_text(const char *text, size_t size,
                                               const char *origin, char **out_text,
                                               size_t *out_size);
EMBER_API void ember_text_free(char *text);

/* Whether the runtime's op `op` (an NNEF name: "conv", "tract_core_gather") takes an
 * argument called `name`: 1 if it does, 0 if it does not, -1 if the runtime has no op
 * of that name or the op's arguments are not a fixed list (ember_if, ember_loop,
 * ember_scan). The Python reader asks this so that it refuses the arguments the loader
 * refuses. Thread-safe; sets no error. */
EMBER_API int ember_op_takes_argument(const char *op, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_H */
