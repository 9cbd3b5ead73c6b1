/*
 * csrc/base — what every layer may use: the thread-local error message.
 *
 * A failing function calls ember_error_set once, at the place that knows the most
 * (file, node, op, shapes), and returns the status; callers pass the status up
 * without overwriting the message, or prepend context with ember_error_prefix.
 */
#ifndef EMBER_BASE_ERROR_H
#define EMBER_BASE_ERROR_H

#include "ember.h"

#if defined(__GNUC__)
#define EMBER_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define EMBER_PRINTF(fmt, args)
#endif

/* Record a printf-formatted message for ember_last_error() and return `status`. */
ember_status ember_error_set(ember_status status, const char *fmt, ...) EMBER_PRINTF(2, 3);
/* Prepend "<context>: " to the current message; returns `status`. */
ember_status ember_error_prefix(ember_status status, const char *fmt, ...) EMBER_PRINTF(2, 3);
/* Forget the current message (used on success paths of the public API). */
void ember_error_clear(void);
const char *ember_error_message(void);

#endif /* EMBER_BASE_ERROR_H */
