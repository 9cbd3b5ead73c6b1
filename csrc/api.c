/*
 * The public API (include/ember.h): argument checks, then a call into the core.
 *
 * Every failure sets the thread-local message (csrc/base/error.h) at the place that
 * knows the most; this layer only adds checks on what the caller passed. Successful
 * fallible calls clear the message, so ember_last_error() never shows a stale failure
 * after a success.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/model.h"
#include "core/profile.h"
#include "core/runnable.h"
#include "core/shape.h"
#include "kernels/kernels.h"
#include "plan/plan.h"

#define EMBER_STRINGIFY2(x) #x
#define EMBER_STRINGIFY(x) EMBER_STRINGIFY2(x)

EMBER_API const char *ember_version(void)
{
    return EMBER_STRINGIFY(EMBER_VERSION_MAJOR) "." EMBER_STRINGIFY(
        EMBER_VERSION_MINOR) "." EMBER_STRINGIFY(EMBER_VERSION_PATCH);
}

EMBER_API const char *ember_kernels(void)
{
    return ember_kernels_text();
}

EMBER_API const char *ember_last_error(void)
{
    return ember_error_message();
}

EMBER_API size_t ember_datum_type_size(ember_datum_type dt)
{
    return ember_datum_size(dt);
}

/* ---------------------------------------------------------------- models */

EMBER_API ember_status ember_model_load(const char *path, ember_model **out_model)
{
    if (path == NULL || out_model == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_model_load: NULL argument");
    *out_model = NULL;
    ember_archive archive;
    memset(&archive, 0, sizeof archive);
    ember_status status = ember_archive_open_path(path, &archive);
    if (status != EMBER_OK)
        return status;
    status = ember_model_from_archive(&archive, out_model);
    if (status == EMBER_OK)
        ember_error_clear();
    return status;
}

EMBER_API ember_status ember_model_load_buffer(const void *data, size_t size,
                                               ember_model **out_model)
{
    if (data == NULL || out_model == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_model_load_buffer: NULL argument");
    *out_model = NULL;
    /* A tar is read in place, so the model keeps its own copy of the bytes: the caller
     * may free theirs after this call. */
    void *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory copying a %zu-byte plan",
                               size);
    memcpy(copy, data, size);
    ember_archive archive;
    memset(&archive, 0, sizeof archive);
    ember_status status = ember_archive_open_buffer(copy, size, &archive);
    if (status != EMBER_OK) {
        free(copy);
        return status;
    }
    if (archive.owned != NULL) { /* a gzip'd tar was inflated: the copy is not needed */
        free(copy);
        copy = NULL;
    }
    status = ember_model_from_archive(&archive, out_model);
    if (status != EMBER_OK) {
        free(copy);
        return status;
    }
    (*out_model)->buffer_copy = copy;
    ember_error_clear();
    return EMBER_OK;
}

EMBER_API void ember_model_free(ember_model *model)
{
    ember_model_release(model);
}

EMBER_API size_t ember_model_input_count(const ember_model *model)
{
    return model ? model->input_count : 0;
}

EMBER_API size_t ember_model_output_count(const ember_model *model)
{
    return model ? model->output_count : 0;
}

EMBER_API const char *ember_model_input_name(const ember_model *model, size_t index)
{
    return model && index < model->input_count ? model->input_names[index] : NULL;
}

EMBER_API const char *ember_model_output_name(const ember_model *model, size_t index)
{
    return model && index < model->output_count ? model->output_names[index] : NULL;
}

static void fill_fact(const ember_value *value, ember_fact *fact)
{
    memset(fact, 0, sizeof *fact);
    fact->datum_type = value->datum_type;
    fact->rank = value->rank;
    memcpy(fact->shape, value->shape, (size_t)value->rank * sizeof(int64_t));
}

EMBER_API ember_status ember_model_input_fact(const ember_model *model, size_t index,
                                              ember_fact *out_fact)
{
    if (model == NULL || out_fact == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_model_input_fact: NULL argument");
    if (index >= model->input_count)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "input index %zu out of range (%zu inputs)",
                               index, model->input_count);
    fill_fact(&model->values[model->inputs[index]], out_fact);
    return EMBER_OK;
}

EMBER_API ember_status ember_model_output_fact(const ember_model *model, size_t index,
                                               ember_fact *out_fact)
{
    if (model == NULL || out_fact == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_model_output_fact: NULL argument");
    if (index >= model->output_count)
        return ember_error_set(EMBER_ERROR_ARGUMENT,
                               "output index %zu out of range (%zu outputs)", index,
                               model->output_count);
    if (model->symbolic && model->output_facts == NULL)
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "output %zu '%s': this plan does not "
                               "record its symbolic output facts (property ember.output_facts); "
                               "they are known after a run", index, model->output_names[index]);
    fill_fact(model->symbolic ? &model->output_facts[index]
                              : &model->values[model->outputs[index]], out_fact);
    return EMBER_OK;
}

static const char *dim_text(char *const *texts, size_t count, size_t index, int axis)
{
    if (texts == NULL || index >= count || axis < 0 || axis >= EMBER_MAX_RANK)
        return NULL;
    return texts[index * EMBER_MAX_RANK + (size_t)axis];
}

EMBER_API const char *ember_model_input_dim(const ember_model *model, size_t index, int axis)
{
    return model ? dim_text(model->input_dim_texts, model->input_count, index, axis) : NULL;
}

EMBER_API const char *ember_model_output_dim(const ember_model *model, size_t index, int axis)
{
    return model ? dim_text(model->output_dim_texts, model->output_count, index, axis) : NULL;
}

EMBER_API size_t ember_model_symbol_count(const ember_model *model)
{
    return model ? model->symbol_count : 0;
}

EMBER_API const char *ember_model_symbol_name(const ember_model *model, size_t index)
{
    return model && index < model->symbol_count ? model->symbols[index] : NULL;
}

EMBER_API size_t ember_model_node_count(const ember_model *model)
{
    return model ? (model->symbolic ? model->template_node_count : model->node_count) : 0;
}

/* ---------------------------------------------------------------- runnables */

EMBER_API ember_status ember_runnable_new(const ember_model *model,
                                          ember_runnable **out_runnable)
{
    if (model == NULL || out_runnable == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_new: NULL argument");
    *out_runnable = NULL;
    char problem[256];
    if (ember_dispatch_problem(problem, sizeof problem))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "%s", problem);
    ember_status status = ember_runnable_open(model, out_runnable);
    if (status == EMBER_OK)
        ember_error_clear();
    return status;
}

EMBER_API void ember_runnable_free(ember_runnable *runnable)
{
    ember_runnable_release(runnable);
}

EMBER_API ember_status ember_runnable_run(ember_runnable *runnable, size_t n_inputs,
                                          const ember_tensor *inputs)
{
    if (runnable == NULL || (inputs == NULL && n_inputs > 0))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_run: NULL argument");
    ember_status status = ember_runnable_execute(runnable, n_inputs, inputs);
    if (status == EMBER_OK)
        ember_error_clear();
    return status;
}

EMBER_API ember_status ember_runnable_profile(ember_runnable *runnable, size_t n_inputs,
                                             const ember_tensor *inputs, int runs,
                                             ember_profile **out_profile)
{
    if (runnable == NULL || out_profile == NULL || (inputs == NULL && n_inputs > 0))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_profile: NULL argument");
    *out_profile = NULL;
    if (runs < 1)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_profile: %d runs", runs);
    ember_profile *profile = calloc(1, sizeof *profile);
    if (profile == NULL)
        return ember_error_set(EMBER_ERROR_MEMORY, "out of memory profiling");
    ember_status status = ember_runnable_execute(runnable, n_inputs, inputs); /* warm-up */
    runnable->profile = profile;
    for (int r = 0; r < runs && status == EMBER_OK; r++, profile->runs++) {
        ember_profile_run_start(profile);
        status = ember_runnable_execute(runnable, n_inputs, inputs);
    }
    runnable->profile = NULL;
    if (status != EMBER_OK) {
        ember_profile_free(profile);
        return status;
    }
    *out_profile = profile;
    ember_error_clear();
    return EMBER_OK;
}

EMBER_API ember_status ember_runnable_output(const ember_runnable *runnable, size_t index,
                                             ember_tensor *out_tensor)
{
    if (runnable == NULL || out_tensor == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_output: NULL argument");
    return ember_runnable_get_output(runnable, index, out_tensor);
}

EMBER_API ember_status ember_runnable_input(ember_runnable *runnable, size_t index,
                                            ember_tensor *out_tensor)
{
    if (runnable == NULL || out_tensor == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_input: NULL argument");
    return ember_runnable_get_input(runnable, index, out_tensor);
}

EMBER_API size_t ember_runnable_memory_bytes(const ember_runnable *runnable)
{
    size_t packed = 0, working = 0;
    if (runnable != NULL)
        ember_runnable_account(runnable, &packed, &working);
    return packed + working;
}

EMBER_API ember_status ember_runnable_memory(const ember_runnable *runnable,
                                             ember_memory *out_memory)
{
    if (runnable == NULL || out_memory == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_runnable_memory: NULL argument");
    ember_runnable_memory_report(runnable, out_memory);
    return EMBER_OK;
}

EMBER_API ember_status ember_nnef_flatten_text(const char *text, size_t size,
                                               const char *origin, char **out_text,
                                               size_t *out_size)
{
    if ((text == NULL && size) || out_text == NULL || out_size == NULL)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_nnef_flatten_text: NULL argument");
    *out_text = NULL;
    *out_size = 0;
    origin = origin ? origin : "<text>";
    ember_nnef_document doc;
    ember_status status = ember_nnef_parse(text, size, origin, &doc);
    if (status != EMBER_OK)
        return status;
    status = ember_nnef_flatten(&doc, origin);
    if (status == EMBER_OK)
        status = ember_nnef_print(&doc, out_text, out_size);
    ember_nnef_document_free(&doc);
    if (status == EMBER_OK)
        ember_error_clear();
    return status;
}

EMBER_API void ember_text_free(char *text)
{
    free(text);
}

EMBER_API int ember_op_takes_argument(const char *op, const char *name)
{
    const ember_op *found = op != NULL ? ember_op_find(op) : NULL;
    /* a control op (ember_if, ember_loop) reads its arguments itself, not by the table */
    if (found == NULL || (found->flags & EMBER_OP_CONTROL) || name == NULL)
        return -1;
    for (size_t p = 0; p < found->param_count; p++)
        if (strcmp(found->params[p].name, name) == 0)
            return 1;
    return 0;
}
