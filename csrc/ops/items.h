/*
 * csrc/ops/items.h — one item of any datum type as a number, for the type-generic
 * reference ops (binary_any.c, cast.c, …): read into the widest type of its kind, write
 * back with the target type's rules. Integers wrap modulo 2^bits on the way back (two's
 * complement, as numpy and ONNX define integer overflow); f16 goes through f32.
 */
#ifndef EMBER_OPS_ITEMS_H
#define EMBER_OPS_ITEMS_H

#include <math.h>
#include <stdint.h>

#include "core/half.h"
#include "ember.h"

typedef enum ember_item_kind { ITEM_SIGNED, ITEM_UNSIGNED, ITEM_FLOAT } ember_item_kind;

typedef union ember_item {
    int64_t i;               /* signed integers and bool */
    uint64_t u;              /* unsigned integers */
    double f;                /* floats */
} ember_item;

static inline ember_item_kind ember_item_kind_of(ember_datum_type dt)
{
    switch (dt) {
    case EMBER_F32: case EMBER_F64: case EMBER_F16: return ITEM_FLOAT;
    case EMBER_U8: case EMBER_U16: case EMBER_U32: case EMBER_U64: return ITEM_UNSIGNED;
    default: return ITEM_SIGNED;
    }
}

static inline ember_item ember_item_get(ember_datum_type dt, const void *data, int64_t i)
{
    ember_item v;
    switch (dt) {
    case EMBER_F32: v.f = ((const float *)data)[i]; break;
    case EMBER_F64: v.f = ((const double *)data)[i]; break;
    case EMBER_F16: v.f = ember_f16_to_f32(((const uint16_t *)data)[i]); break;
    case EMBER_I8: v.i = ((const int8_t *)data)[i]; break;
    case EMBER_I16: v.i = ((const int16_t *)data)[i]; break;
    case EMBER_I32: v.i = ((const int32_t *)data)[i]; break;
    case EMBER_I64: v.i = ((const int64_t *)data)[i]; break;
    case EMBER_BOOL: v.i = ((const uint8_t *)data)[i] != 0; break;
    case EMBER_U8: v.u = ((const uint8_t *)data)[i]; break;
    case EMBER_U16: v.u = ((const uint16_t *)data)[i]; break;
    case EMBER_U32: v.u = ((const uint32_t *)data)[i]; break;
    case EMBER_U64: v.u = ((const uint64_t *)data)[i]; break;
    default: v.u = 0; break;
    }
    return v;
}

/* Store `v`, of kind `kind`, as item i of a `dt` tensor: the value converted the way a
 * C cast does between numbers of the same kind (integers wrap). */
static inline void ember_item_put(ember_datum_type dt, void *data, int64_t i, ember_item v)
{
    switch (dt) {
    case EMBER_F32: ((float *)data)[i] = (float)v.f; break;
    case EMBER_F64: ((double *)data)[i] = v.f; break;
    case EMBER_F16: ((uint16_t *)data)[i] = ember_f32_to_f16((float)v.f); break;
    case EMBER_I8: case EMBER_U8: ((uint8_t *)data)[i] = (uint8_t)v.u; break;
    case EMBER_I16: case EMBER_U16: ((uint16_t *)data)[i] = (uint16_t)v.u; break;
    case EMBER_I32: case EMBER_U32: ((uint32_t *)data)[i] = (uint32_t)v.u; break;
    case EMBER_I64: case EMBER_U64: ((uint64_t *)data)[i] = v.u; break;
    case EMBER_BOOL: ((uint8_t *)data)[i] = v.u != 0; break;
    default: break;
    }
}

#endif /* EMBER_OPS_ITEMS_H */
