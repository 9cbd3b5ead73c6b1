/*
 * tests/fuzz/fuzz_plan.c — libFuzzer target for the plan layer (csrc/plan).
 *
 * Each input is read the way the loader reads a plan: as a tar or gzip'd tar, then
 * every entry as NNEF text or a .dat tensor. The same bytes also go straight to the
 * NNEF parser, the .dat parser and the gzip decoder, so the fuzzer can explore each
 * of them without first having to discover a valid tar header. Build and run: see
 * tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

static int ends_with(const char *name, const char *suffix) {
    size_t ln = strlen(name), ls = strlen(suffix);
    return ln >= ls && strcmp(name + ln - ls, suffix) == 0;
}

static void parse_nnef(const uint8_t *data, size_t size) {
    ember_nnef_document doc;
    if (ember_nnef_parse((const char *)data, size, "fuzz:graph.nnef", &doc) == EMBER_OK) {
        (void)ember_nnef_find_fragment(&doc, "tract_core_properties");
        ember_nnef_document_free(&doc);
    }
}

static void parse_dat(const uint8_t *data, size_t size) {
    ember_dat dat;
    if (ember_dat_parse(data, size, "fuzz.dat", &dat) == EMBER_OK) {
        /* Touch every byte the parser claims is there. */
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < dat.byte_size; i++)
            sink ^= ((const uint8_t *)dat.data)[i];
        (void)sink;
        ember_dat_free(&dat);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ember_archive archive;
    if (ember_archive_open_buffer(data, size, &archive) == EMBER_OK) {
        for (size_t i = 0; i < archive.count; i++) {
            const ember_archive_entry *entry = &archive.entries[i];
            if (ends_with(entry->name, ".dat"))
                parse_dat(entry->data, entry->size);
            else
                parse_nnef(entry->data, entry->size);
        }
        (void)ember_archive_find(&archive, "graph.nnef");
        ember_archive_close(&archive);
    }
    parse_nnef(data, size);
    parse_dat(data, size);
    uint8_t *out;
    size_t out_size;
    if (ember_gunzip(data, size, (size_t)1 << 24, &out, &out_size) == EMBER_OK)
        free(out);
    return 0;
}
