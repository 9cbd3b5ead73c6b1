/*
 * tests/c/test_plan_archive.c — the plan layer's byte-level readers (csrc/plan):
 * tar/tgz/directory archives and the DEFLATE/gzip decoder.
 *
 *     build/host/tests/test_plan_archive [fixtures-dir]     (default: tests/c/fixtures)
 *
 * The fixtures are written by tests/c/fixtures/make_fixtures.py with Python's gzip
 * and tarfile; everything else (broken tars, hand-made DEFLATE) is built here. The NNEF
 * text parser is tests/c/test_plan_nnef.c, .dat files tests/c/test_plan_dat.c.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan_test_support.h"

/* ---------------------------------------------------------------- helpers */

/* Must match payload() in tests/c/fixtures/make_fixtures.py. */
static char *payload_text(size_t *length) {
    size_t capacity = 32 * 2000, n = 0;
    char *text = malloc(capacity);
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(text + n, capacity - n, "%d:%d\n", i, (i * 7919) % 1009);
    *length = n;
    return text;
}

static uint32_t test_crc32(const uint8_t *p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

/* ---------------------------------------------------------------- gzip */

static void check_gunzip_fixture(const char *name, const uint8_t *expected, size_t expected_size) {
    size_t size;
    uint8_t *gz = read_fixture(name, &size);
    uint8_t *out = NULL;
    size_t out_size = 0;
    ember_status status = ember_gunzip(gz, size, (size_t)1 << 30, &out, &out_size);
    CHECK(status == EMBER_OK);
    CHECK(out_size == expected_size && out && memcmp(out, expected, expected_size) == 0);
    if (status != EMBER_OK || out_size != expected_size)
        fprintf(stderr, "    fixture %s: %zu bytes, expected %zu\n", name, out_size, expected_size);
    free(out);
    free(gz);
}

static ember_status gunzip_status(const uint8_t *gz, size_t size, size_t max_output) {
    uint8_t *out = (uint8_t *)"sentinel";
    size_t out_size = 12345;
    ember_status status = ember_gunzip(gz, size, max_output, &out, &out_size);
    if (status == EMBER_OK)
        free(out);
    else
        CHECK(out_size == 12345); /* outputs untouched on failure */
    return status;
}

static void test_gzip_fixtures(void) {
    size_t payload_size;
    char *payload = payload_text(&payload_size);
    check_gunzip_fixture("payload_level0.gz", (uint8_t *)payload, payload_size); /* stored */
    check_gunzip_fixture("payload_level1.gz", (uint8_t *)payload, payload_size); /* dynamic */
    check_gunzip_fixture("payload_level9.gz", (uint8_t *)payload, payload_size); /* dynamic */
    const char *fixed = "ember ember ember ember, fixed Huffman codes";
    check_gunzip_fixture("fixed.gz", (const uint8_t *)fixed, strlen(fixed));
    const char *two = "first member\nsecond\n";
    check_gunzip_fixture("two_members.gz", (const uint8_t *)two, strlen(two));
    check_gunzip_fixture("header_fields.gz", (const uint8_t *)"header fields", 13);
    free(payload);
}

static void test_gzip_corruption(void) {
    size_t size;
    uint8_t *gz = read_fixture("payload_level9.gz", &size);
    if (!gz)
        return;
    uint8_t *copy = malloc(size + 16);
    size_t payload_size;
    free(payload_text(&payload_size));

    memcpy(copy, gz, size);
    copy[size - 8] ^= 1;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "CRC-32 mismatch");
    memcpy(copy, gz, size);
    copy[size - 4] ^= 1;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "size mismatch");
    CHECK_ERROR(gunzip_status(gz, size, payload_size - 1), EMBER_ERROR_FORMAT, "exceeds the limit");
    CHECK(gunzip_status(gz, size, payload_size) == EMBER_OK);
    memcpy(copy, gz, size);
    memcpy(copy + size, "junk", 4);
    CHECK_ERROR(gunzip_status(copy, size + 4, 1 << 30), EMBER_ERROR_FORMAT, "garbage after the data");
    memset(copy + size, 0, 16); /* zero padding after the member is accepted */
    CHECK(gunzip_status(copy, size + 16, 1 << 30) == EMBER_OK);
    memcpy(copy, gz, size);
    copy[0] = 0x1e;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "bad magic");
    memcpy(copy, gz, size);
    copy[2] = 7;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "unknown compression method");
    memcpy(copy, gz, size);
    copy[3] = 0x20;
    CHECK_ERROR(gunzip_status(copy, size, 1 << 30), EMBER_ERROR_FORMAT, "reserved header flags");

    /* Every truncation fails cleanly. */
    int truncations_rejected = 1;
    for (size_t n = 0; n < size; n++)
        if (gunzip_status(gz, n, 1 << 30) != EMBER_ERROR_FORMAT)
            truncations_rejected = 0;
    CHECK(truncations_rejected);

    /* Flipped bits anywhere in the compressed data: an error (a bad code, or output
     * the CRC rejects), never a crash. Only the padding bits after the last code may
     * change without consequence, so success must still mean the right output. */
    int flips_safe = 1;
    char *payload = payload_text(&payload_size);
    for (size_t at = 10; at < size - 8; at += 7) {
        memcpy(copy, gz, size);
        copy[at] ^= (uint8_t)(1u << (at % 8));
        uint8_t *out = NULL;
        size_t out_size = 0;
        if (ember_gunzip(copy, size, 1 << 30, &out, &out_size) == EMBER_OK &&
            (out_size != payload_size || memcmp(out, payload, payload_size) != 0))
            flips_safe = 0;
        free(out);
    }
    free(payload);
    CHECK(flips_safe);

    /* Garbage after a valid header. */
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        memcpy(copy, gz, 10);
        for (size_t i = 10; i < 300; i++)
            copy[i] = (uint8_t)rand();
        CHECK(gunzip_status(copy, 300, 1 << 20) != EMBER_OK);
    }
    free(copy);
    free(gz);
}

/* A gzip member around a hand-written raw DEFLATE stream. */
static size_t wrap_gzip(const uint8_t *deflate, size_t size, const uint8_t *data, size_t data_size,
                        uint8_t *out) {
    static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(out, header, 10);
    memcpy(out + 10, deflate, size);
    store_le32(out + 10 + size, test_crc32(data, data_size));
    store_le32(out + 14 + size, (uint32_t)data_size);
    return size + 18;
}

static void test_deflate_by_hand(void) {
    uint8_t gz[64], *out = NULL;
    size_t out_size;
    /* Two stored blocks: "abc" (not final), then "de" (final). */
    const uint8_t stored[] = {0x00, 3, 0, 0xfc, 0xff, 'a', 'b', 'c', 0x01, 2, 0, 0xfd, 0xff, 'd', 'e'};
    size_t n = wrap_gzip(stored, sizeof stored, (const uint8_t *)"abcde", 5, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 5 && memcmp(out, "abcde", 5) == 0);
    free(out);
    /* An empty stored block: empty output is fine. */
    const uint8_t empty[] = {0x01, 0, 0, 0xff, 0xff};
    n = wrap_gzip(empty, sizeof empty, NULL, 0, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 0);
    free(out);
    /* LEN and NLEN disagree. */
    const uint8_t bad_nlen[] = {0x01, 3, 0, 0xfc, 0xfe, 'a', 'b', 'c'};
    n = wrap_gzip(bad_nlen, sizeof bad_nlen, (const uint8_t *)"abc", 3, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "does not match its complement");
    /* Block type 3 is reserved. */
    const uint8_t reserved[] = {0x07, 0, 0, 0};
    n = wrap_gzip(reserved, sizeof reserved, NULL, 0, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "invalid block type 3");
    /* Fixed block: literal 'a' then a match of length 3 at distance 2 ("ab" → "ababa")
     * hand-encoded: header 1,01; 'a' = 0x91 (8 bits), 'b' = 0x92, len 3 = code 257
     * (7 bits 0000001), dist 2 = code 1 (5 bits 00001), EOB = 0000000. */
    const uint8_t fixed[] = {0x4b, 0x4c, 0x02, 0x42, 0x00};
    n = wrap_gzip(fixed, sizeof fixed, (const uint8_t *)"ababa", 5, gz);
    CHECK(ember_gunzip(gz, n, 100, &out, &out_size) == EMBER_OK && out_size == 5 && memcmp(out, "ababa", 5) == 0);
    free(out);
    /* The same match at distance 3, before the start of the output. */
    const uint8_t too_far[] = {0x4b, 0x4c, 0x02, 0x22, 0x00};
    n = wrap_gzip(too_far, sizeof too_far, (const uint8_t *)"ababa", 5, gz);
    CHECK_ERROR(gunzip_status(gz, n, 100), EMBER_ERROR_FORMAT, "before the start of the output");
    CHECK(ember_gunzip(NULL, 10, 100, &out, &out_size) == EMBER_ERROR_ARGUMENT);
    CHECK_ERROR(gunzip_status((const uint8_t *)"\x1f\x8b", 2, 100), EMBER_ERROR_FORMAT, "too short");
}

/* ---------------------------------------------------------------- tar */

typedef struct tar_builder {
    uint8_t data[16384];
    size_t size;
} tar_builder;

static void octal(char *field, size_t width, uint64_t value) {
    snprintf(field, width, "%0*llo", (int)width - 1, (unsigned long long)value);
}

static uint8_t *tar_header(tar_builder *t, const char *name, uint64_t size, char type, const char *prefix) {
    uint8_t *h = t->data + t->size;
    memset(h, 0, 512);
    memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
    octal((char *)h + 100, 8, 0644);
    octal((char *)h + 108, 8, 0);
    octal((char *)h + 116, 8, 0);
    octal((char *)h + 124, 12, size);
    octal((char *)h + 136, 12, 0);
    h[156] = (uint8_t)type;
    memcpy(h + 257, "ustar\0" "00", 8);
    if (prefix)
        memcpy(h + 345, prefix, strlen(prefix));
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    t->size += 512;
    return h;
}

static void tar_reseal(uint8_t *h) {
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

static void tar_file(tar_builder *t, const char *name, const void *data, size_t size, char type) {
    tar_header(t, name, size, type, NULL);
    memcpy(t->data + t->size, data, size);
    t->size += (size + 511) / 512 * 512;
}

static void tar_end(tar_builder *t) {
    memset(t->data + t->size, 0, 1024);
    t->size += 1024;
}

static void test_tar_by_hand(void) {
    static tar_builder t;
    ember_archive archive;
    memset(&t, 0, sizeof t);
    tar_file(&t, "./graph.nnef", "version 1.0;", 12, '0');
    tar_file(&t, "dir/", "", 0, '5');
    tar_header(&t, "w.dat", 3, '0', "deep/er");
    memcpy(t.data + t.size, "xyz", 3);
    t.size += 512;
    tar_file(&t, "././/two.dat", "2", 1, '\0'); /* old-style type NUL */
    const char *long_name = "a/very/long/name/that/does/not/fit/in/the/one/hundred/byte/name/field/of/a/ustar/header/file.dat";
    tar_file(&t, "././@LongLink", long_name, strlen(long_name) + 1, 'L');
    tar_file(&t, "truncated-name", "long", 4, '0');
    const char pax[] = "32 path=pax/overridden/name.dat\n";
    tar_file(&t, "PaxHeaders/x", pax, strlen(pax), 'x');
    tar_file(&t, "ignored-name", "pax", 3, '0');
    tar_file(&t, "w.dat", "later", 5, '0'); /* a later entry replaces an earlier one */
    tar_file(&t, "link", "", 0, '2');
    tar_end(&t);
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK);
    CHECK(archive.count == 6);
    if (archive.count == 6) {
        CHECK_TEXT(archive.entries[0].name, "graph.nnef");
        CHECK(archive.entries[0].size == 12 && archive.entries[0].data == t.data + 512);
        CHECK_TEXT(archive.entries[1].name, "deep/er/w.dat");
        CHECK_TEXT(archive.entries[2].name, "two.dat");
        CHECK_TEXT(archive.entries[3].name, long_name);
        CHECK(archive.entries[3].size == 4 && memcmp(archive.entries[3].data, "long", 4) == 0);
        CHECK_TEXT(archive.entries[4].name, "pax/overridden/name.dat");
        CHECK(archive.entries[4].size == 3 && memcmp(archive.entries[4].data, "pax", 3) == 0);
    }
    const ember_archive_entry *w = ember_archive_find(&archive, "w.dat");
    CHECK(w && w->size == 5 && memcmp(w->data, "later", 5) == 0);
    CHECK(ember_archive_find(&archive, "dir") == NULL && ember_archive_find(&archive, "link") == NULL);
    CHECK(archive.owned == NULL);
    CHECK_TEXT(archive.origin, "<memory>");
    ember_archive_close(&archive);
    ember_archive_close(&archive); /* cleared: closing twice is harmless */

    /* GNU base-256 size field. */
    memset(&t, 0, sizeof t);
    uint8_t *h = tar_header(&t, "big.dat", 0, '0', NULL);
    memset(h + 124, 0, 12);
    h[124] = 0x80;
    h[135] = 5;
    tar_reseal(h);
    memcpy(t.data + t.size, "12345", 5);
    t.size += 512;
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK && archive.count == 1 &&
          archive.entries[0].size == 5);
    ember_archive_close(&archive);

    /* An entry claiming more bytes than remain. */
    memset(&t, 0, sizeof t);
    tar_header(&t, "x.dat", 4096, '0', NULL);
    t.size += 100;
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: tar entry 'x.dat' claims 4096 bytes but only 100 remain");
    CHECK(archive.entries == NULL && archive.count == 0);

    /* A bad checksum. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    t.data[0] = 'G';
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: not a tar archive (bad header checksum)");
    /* ...in the second header. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    tar_file(&t, "w.dat", "y", 1, '0');
    t.data[1024 + 3] = 'Q';
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "<memory>: corrupt tar header at offset 1024");

    /* A size that is not octal. */
    memset(&t, 0, sizeof t);
    h = tar_header(&t, "x.dat", 0, '0', NULL);
    memcpy(h + 124, "0000000009x", 11);
    tar_reseal(h);
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "invalid size field");

    /* A header cut short. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "graph.nnef", "x", 1, '0');
    tar_file(&t, "w.dat", "x", 1, '0');
    CHECK_ERROR(ember_archive_open_buffer(t.data, 300, &archive), EMBER_ERROR_FORMAT,
                "<memory>: not a tar archive (300 bytes, less than one header)");
    CHECK_ERROR(ember_archive_open_buffer(t.data, 512 + 512 + 300, &archive), EMBER_ERROR_FORMAT,
                "<memory>: tar header at offset 1024 is truncated");
    /* Missing final padding of the last entry is tolerated. */
    CHECK(ember_archive_open_buffer(t.data, 1024 + 513, &archive) == EMBER_OK && archive.count == 2);
    ember_archive_close(&archive);

    /* Malformed pax record. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "pax", "99 path=x\n", 10, 'x');
    tar_file(&t, "x", "x", 1, '0');
    CHECK_ERROR(ember_archive_open_buffer(t.data, t.size, &archive), EMBER_ERROR_FORMAT,
                "malformed pax header record");

    /* pax size= overrides the header size. */
    memset(&t, 0, sizeof t);
    tar_file(&t, "pax", "10 size=7\n", 10, 'x');
    tar_file(&t, "s.dat", "sevenB!", 0, '0');
    memcpy(t.data + t.size, "sevenB!", 7);
    t.size += 512;
    CHECK(ember_archive_open_buffer(t.data, t.size, &archive) == EMBER_OK && archive.count == 1 &&
          archive.entries[0].size == 7);
    ember_archive_close(&archive);

    CHECK_ERROR(ember_archive_open_buffer("", 0, &archive), EMBER_ERROR_FORMAT, "empty");
    uint8_t garbage[3000];
    srand(3);
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)rand();
    CHECK_ERROR(ember_archive_open_buffer(garbage, sizeof garbage, &archive), EMBER_ERROR_FORMAT,
                "not a tar archive");
    uint8_t zeros[1024] = {0};
    CHECK(ember_archive_open_buffer(zeros, sizeof zeros, &archive) == EMBER_OK && archive.count == 0);
    ember_archive_close(&archive);
    CHECK(ember_archive_open_buffer(NULL, 10, &archive) == EMBER_ERROR_ARGUMENT);
}

static void check_plan_entries(const ember_archive *archive, const char *what) {
    const ember_archive_entry *graph = ember_archive_find(archive, "graph.nnef");
    const ember_archive_entry *w = ember_archive_find(archive, "layer/w.dat");
    CHECK(graph && w);
    if (!graph || !w) {
        fprintf(stderr, "    in %s\n", what);
        return;
    }
    ember_nnef_document doc;
    CHECK(ember_nnef_parse((const char *)graph->data, graph->size, "graph.nnef", &doc) == EMBER_OK);
    CHECK(doc.graph_body_count == 3);
    ember_nnef_document_free(&doc);
    ember_dat dat;
    CHECK(ember_dat_parse(w->data, w->size, "layer/w.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F32 && dat.rank == 2 && dat.shape[0] == 2 && dat.shape[1] == 3);
    CHECK(dat.byte_size == 24 && ((const float *)dat.data)[5] == 6.0f);
    ember_dat_free(&dat);
}

static void test_tar_fixtures(void) {
    static const char *const fixtures[] = {"plan_ustar.tar", "plan_gnu.tar", "plan_pax.tar", "plan.tgz"};
    static const char long_dir[] = "a_rather_long_directory_name_that_goes_on/a_rather_long_directory_name_that_goes_on/"
                                   "a_rather_long_directory_name_that_goes_on/";
    for (size_t i = 0; i < 4; i++) {
        size_t size;
        uint8_t *bytes = read_fixture(fixtures[i], &size);
        ember_archive archive;
        CHECK(ember_archive_open_buffer(bytes, size, &archive) == EMBER_OK);
        check_plan_entries(&archive, fixtures[i]);
        CHECK((archive.owned != NULL) == (i == 3)); /* only the tgz is inflated into owned memory */
        ember_archive_close(&archive);

        char path[512];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir, fixtures[i]);
        CHECK(ember_archive_open_path(path, &archive) == EMBER_OK);
        check_plan_entries(&archive, path);
        CHECK_TEXT(archive.origin, path);
        char name[256];
        const char *extra[] = {"x.dat", "gnu.dat", "pax.dat"};
        if (i < 3) {
            snprintf(name, sizeof name, "%s%s", long_dir, extra[i]);
            CHECK(ember_archive_find(&archive, name) != NULL);
            CHECK(archive.count == (i == 2 ? 4u : 3u));
        }
        if (i == 2)
            CHECK(ember_archive_find(&archive, "caf\xc3\xa9.dat") != NULL);
        ember_archive_close(&archive);
        free(bytes);
    }

    /* Damage inside a tgz is reported with the origin. */
    size_t size;
    uint8_t *tgz = read_fixture("plan.tgz", &size);
    if (tgz) {
        tgz[size - 3] ^= 0xff;
        ember_archive archive;
        CHECK_ERROR(ember_archive_open_buffer(tgz, size, &archive), EMBER_ERROR_FORMAT, "<memory>: gzip: size mismatch");
        CHECK_ERROR(ember_archive_open_buffer(tgz, size / 2, &archive), EMBER_ERROR_FORMAT, "<memory>: ");
        free(tgz);
    }
}

/* ---------------------------------------------------------------- directories */

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_directory(void) {
    char dir[] = "/tmp/ember_test_plan_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char sub[600], subsub[700];
    snprintf(sub, sizeof sub, "%s/layer", dir);
    snprintf(subsub, sizeof subsub, "%s/layer/deep", dir);
    mkdir(sub, 0700);
    mkdir(subsub, 0700);
    write_file(dir, "graph.nnef", "version 1.0;");
    write_file(dir, "README", "not part of the plan");
    write_file(dir, "a.dat", "A");
    write_file(dir, "layer/w.dat", "WW");
    write_file(dir, "layer/deep/z.dat", "ZZZ");
    write_file(dir, "layer/graph.nnef", "only the root graph counts");

    ember_archive archive;
    CHECK(ember_archive_open_path(dir, &archive) == EMBER_OK);
    CHECK(archive.count == 4);
    if (archive.count == 4) { /* sorted by name */
        CHECK_TEXT(archive.entries[0].name, "a.dat");
        CHECK_TEXT(archive.entries[1].name, "graph.nnef");
        CHECK_TEXT(archive.entries[2].name, "layer/deep/z.dat");
        CHECK_TEXT(archive.entries[3].name, "layer/w.dat");
        CHECK(archive.entries[2].size == 3 && memcmp(archive.entries[2].data, "ZZZ", 3) == 0);
        CHECK(archive.entries[1].size == 12 && memcmp(archive.entries[1].data, "version 1.0;", 12) == 0);
    }
    CHECK_TEXT(archive.origin, dir);
    ember_archive_close(&archive);

    char missing[600];
    snprintf(missing, sizeof missing, "%s/does-not-exist.tgz", dir);
    CHECK_ERROR(ember_archive_open_path(missing, &archive), EMBER_ERROR_IO, "does-not-exist.tgz");

    /* A plan file given by path: read into memory, then as a buffer. */
    char tar_path[600];
    snprintf(tar_path, sizeof tar_path, "%s/README", dir);
    CHECK_ERROR(ember_archive_open_path(tar_path, &archive), EMBER_ERROR_FORMAT, "/README: not a tar archive (20 bytes, less than one header)");

    char cleanup[800];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    CHECK(system(cleanup) == 0);
}

int main(int argc, char **argv) {
    if (argc > 1)
        fixtures_dir = argv[1];
    test_gzip_fixtures();
    test_gzip_corruption();
    test_deflate_by_hand();
    test_tar_by_hand();
    test_tar_fixtures();
    test_directory();
    printf("%d passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
