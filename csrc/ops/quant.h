/*
 * csrc/ops/quant.h — what the quantized op families share (quant.c, quant_matmul.c,
 * quant_conv.c): reading scales and zero points of any numeric type, the checks on
 * them, ONNX's rounding and saturation, and the datum-type attribute.
 *
 * Scales and zero points are small tensors (one value, or one per channel/row/column).
 * They may be plan literals, which are f32 whatever the ONNX type was, so they are read
 * as numbers: a zero point is either of the quantized type or an f32 constant holding
 * integers in that type's range (checked at load).
 */
#ifndef EMBER_OPS_QUANT_H
#define EMBER_OPS_QUANT_H

#include <math.h>
#include <stdint.h>

#include "core/model.h"

/* Item i of a tensor of any datum type, as a double (exact for every type but
 * i64/u64 beyond 2^53, which no scale or zero point reaches). */
double ember_quant_load(const void *data, ember_datum_type dt, int64_t i);

/* Store v, already rounded and within the type's range, as item i. */
void ember_quant_store(void *data, ember_datum_type dt, int64_t i, int64_t v);

/* Range of a quantized type (i8, u8, i16, u16, i32); 0 if dt is not one. */
int ember_quant_range(ember_datum_type dt, int64_t *low, int64_t *high);

/* d rounded once to f16 (round to odd into f32, then to nearest even into f16). */
uint16_t ember_quant_f64_to_f16(double d);

static inline int64_t ember_quant_clamp(double r, int64_t low, int64_t high)
{
    if (r <= (double)low)
        return low;
    if (r >= (double)high)
        return high;
    return (int64_t)r;
}

/* QuantizeLinear: saturate(rint(q) + zero), q = x / scale. A NaN q counts as 0 (so NaN
 * quantizes to the zero point); infinities saturate. */
static inline int64_t ember_quant_round_add(double q, double zero, int64_t low, int64_t high)
{
    double r = rint(q);
    if (r != r)
        r = 0.0;
    r = r + zero;
    return ember_quant_clamp(r, low, high);
}

/* Requantization (QLinear*): saturate(rint(p + zero)), p = accumulator · multiplier
 * computed by the caller in double in its own statement (so no compiler fuses it into
 * this addition: ONNX rounds the product first). A NaN p counts as 0. */
static inline int64_t ember_quant_add_round(double p, double zero, int64_t low, int64_t high)
{
    if (p != p)
        p = 0.0;
    p = p + zero;
    return ember_quant_clamp(rint(p), low, high);
}

/* The datum type attribute `to` (a string such as "u8"), which must be one of
 * `allowed` (count entries); `fallback` when absent. */
ember_status ember_quant_attr_type(const ember_node *node, const char *name,
                                   const ember_nnef_expr *e, ember_datum_type fallback,
                                   const ember_datum_type *allowed, int count,
                                   ember_datum_type *out);

/* `value` holds one item, or (per axis) a vector of `count` items. Sets *per_axis. */
ember_status ember_quant_check_count(const ember_node *node, const char *what,
                                     const ember_value *value, int64_t count, int *per_axis);

/* A scale: f32, f16 or f64. */
ember_status ember_quant_check_scale(const ember_node *node, const char *what,
                                     const ember_value *scale);

/* A zero point of `quantized` type, or an f32 constant of integers in its range. */
ember_status ember_quant_check_zero_point(const ember_node *node, const char *what,
                                          const ember_value *zero, ember_datum_type quantized);

#endif /* EMBER_OPS_QUANT_H */
