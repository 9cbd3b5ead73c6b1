/*
 * test_support.h — what the C kernel test programs share: pass/fail counting with a
 * bounded number of failure reports, and a crash handler that names the case running
 * when a guard page is touched. Header-only: every C file in tests/c is its own program.
 */
#ifndef EMBER_TEST_SUPPORT_H
#define EMBER_TEST_SUPPORT_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPORTS 20

static unsigned long passed, failed;
static unsigned reports;

/* The case being run, for the crash report: an over-read into a guard page ends here. */
static char current_case[256];

/* A signal handler: only async-signal-safe calls. */
static void on_crash(int sig)
{
    static const char prefix[] = "CRASH (read or write outside a buffer) during: ";
    (void)sig;
    if (write(STDOUT_FILENO, prefix, sizeof prefix - 1) < 0 ||
        write(STDOUT_FILENO, current_case, strlen(current_case)) < 0 ||
        write(STDOUT_FILENO, "\n", 1) < 0) {
        _exit(3);
    }
    _exit(3);
}

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (reports++ < MAX_REPORTS) {
        printf("FAIL %s\n", what);
    }
}

#endif /* EMBER_TEST_SUPPORT_H */
