#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Big enough for a node name, an op, two shapes and a file path. */
#define EMBER_ERROR_CAPACITY 1024

static _Thread_local char error_message[EMBER_ERROR_CAPACITY];

ember_status ember_error_set(ember_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, args);
    va_end(args);
    return status;
}

ember_status ember_error_prefix(ember_status status, const char *fmt, ...) {
    char previous[EMBER_ERROR_CAPACITY];
    memcpy(previous, error_message, sizeof previous);
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(error_message, sizeof error_message, fmt, args);
    va_end(args);
    if (n >= 0 && (size_t)n < sizeof error_message)
        snprintf(error_message + n, sizeof error_message - (size_t)n, ": %s", previous);
    return status;
}

void ember_error_clear(void) { error_message[0] = '\0'; }

const char *ember_error_message(void) { return error_message; }
