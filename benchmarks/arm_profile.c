/*
 * arm_profile.c — a QEMU TCG plugin (user mode) counting the guest instructions each
 * translation block runs: benchmarks/arm_profile.py builds it and turns its report into
 * instructions per function. Written against the QEMU 7.2 plugin API (version 1), as
 * Debian bookworm's qemu-user has it; only include/qemu/qemu-plugin.h is needed.
 *
 *   qemu-aarch64 -plugin ./arm_profile.so,out=blocks.txt PROGRAM ARGS
 *
 * Each translation gets a counter, bumped by an inline add when the block runs (exact for
 * one guest thread; a block left early by a fault counts whole). At exit the report has a
 * line per translation that ran: "START INSNS RUNS", hexadecimal start address. A block
 * translated twice has two lines; the script adds them up.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

typedef struct block {
    uint64_t start, insns, runs;
    struct block *next;
} block;

static block *blocks; /* every translation, newest first */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char out_path[4096];

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    block *b = calloc(1, sizeof *b);
    if (b == NULL)
        return; /* out of memory: this block goes uncounted */
    b->start = qemu_plugin_tb_vaddr(tb);
    b->insns = qemu_plugin_tb_n_insns(tb);
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
}

static void write_report(qemu_plugin_id_t id, void *data)
{
    (void)id;
    (void)data;
    FILE *out = out_path[0] ? fopen(out_path, "w") : stderr;
    if (out == NULL)
        return;
    for (const block *b = blocks; b != NULL; b = b->next)
        if (b->runs)
            fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->start, b->insns, b->runs);
    if (out != stderr)
        fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0)
            snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, write_report, NULL);
    return 0;
}
