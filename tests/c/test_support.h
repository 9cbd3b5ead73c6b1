/*
 * test_support.h — what the C kernel test programs share: pass/fail counting with a
 * bounded number of failure reports, and a crash handler that names the case running
 * when a guard page is touched. Header-only: every C file in tests/c is its own program.
 */
#ifndef EMBER_TEST_SUPPORT_H
#define EMBER_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* A buffer of `floats` floats ending exactly at an inaccessible page: a kernel that reads
 * one float past it crashes (on_crash names the case). */
static inline float *guarded_floats(size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    char *base = mmap(NULL, data + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base + data, page, PROT_NONE) != 0) {
        perror("guarded_floats: mmap");
        exit(2);
    }
    return (float *)(base + data) - floats;
}

static inline void guarded_floats_free(float *buffer, size_t floats)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    munmap((char *)(buffer + floats) - data, data + page);
}

#endif /* EMBER_TEST_SUPPORT_H */
