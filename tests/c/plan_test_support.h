/*
 * plan_test_support.h — what the plan-layer test programs (tests/c/test_plan_nnef.c,
 * tests/c/test_plan_archive.c) share: the pass/failure counters, CHECK, CHECK_TEXT and
 * CHECK_ERROR (a failure names the file and line and the last error message), and the
 * fixtures directory with read_fixture. Header-only: every C file in tests/c is its own
 * program.
 */
#ifndef EMBER_PLAN_TEST_SUPPORT_H
#define EMBER_PLAN_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plan/plan.h"

static int passed, failures;
static const char *fixtures_dir = "tests/c/fixtures";

static void check(int ok, const char *what, const char *file, int line) {
    if (ok) {
        passed++;
        return;
    }
    failures++;
    fprintf(stderr, "%s:%d: FAILED: %s\n    last error: %s\n", file, line, what, ember_error_message());
}
#define CHECK(cond) check((cond) != 0, #cond, __FILE__, __LINE__)

static inline void check_text(const char *actual, const char *expected, const char *file, int line) {
    int ok = actual && strcmp(actual, expected) == 0;
    check(ok, expected, file, line);
    if (!ok)
        fprintf(stderr, "    expected: %s\n    actual:   %s\n", expected, actual ? actual : "(null)");
}
#define CHECK_TEXT(actual, expected) check_text((actual), (expected), __FILE__, __LINE__)

/* The last error must contain `part`. */
static inline void check_error(ember_status status, ember_status expected, const char *part, const char *file,
                        int line) {
    int ok = status == expected && strstr(ember_error_message(), part) != NULL;
    check(ok, part, file, line);
    if (!ok)
        fprintf(stderr, "    status %d (want %d), message: %s\n", status, expected, ember_error_message());
}
#define CHECK_ERROR(status, expected, part) check_error((status), (expected), (part), __FILE__, __LINE__)

/* v little-endian at p (tar sizes, gzip trailers, .dat headers). */
static inline void store_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A fixture file read whole into malloc'd memory; NULL (counted as a failure) if it
 * cannot be opened. Inline: not every program that includes this reads fixtures. */
static inline uint8_t *read_fixture(const char *name, size_t *size) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open fixture %s\n", path);
        failures++;
        *size = 0;
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(length > 0 ? (size_t)length : 1);
    *size = fread(data, 1, (size_t)length, f);
    fclose(f);
    return data;
}

#endif /* EMBER_PLAN_TEST_SUPPORT_H */
