/*
 * The op table: every descriptor of EMBER_OPS (ops.h), looked up by NNEF name.
 * A linear scan: it runs once per node at load, over a few dozen names.
 */
#include <string.h>

#include "base/error.h"
#include "ops/ops.h"

#define EMBER_OP_ENTRY(name) &ember_op_##name,
static const ember_op *const op_table[] = {EMBER_OPS(EMBER_OP_ENTRY)};
#undef EMBER_OP_ENTRY

const ember_op *ember_op_find(const char *name)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(op_table[i]->name, name) == 0)
            return op_table[i];
    return NULL;
}

ember_status ember_op_unknown(const char *origin, int line, const char *node, const char *op)
{
    /* tract's scan runs a fragment whose types only the cook infers */
    const char *hint = strcmp(op, "tract_core_scan") == 0
                           ? " (read this plan with the cook, ember.nnef().load(path): it "
                             "types the scan's body and writes it as ember_scan)"
                           : "";
    return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s:%d: node '%s': unknown op '%s'%s",
                           origin, line, node, op, hint);
}
