/*
 * The op table: every descriptor of EMBER_OPS (ops.h), looked up by NNEF name.
 * A linear scan: it runs once per node at load, over a few dozen names.
 */
#include <string.h>

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
