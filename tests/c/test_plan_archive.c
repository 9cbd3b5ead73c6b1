/*
 * tests/c/test_plan_archive.c — the plan layer's byte-level readers (csrc/plan):
 * tar/tgz/directory archives, the DEFLATE/gzip decoder and .dat tensor files.
 *
 *     build/host/tests/test_plan_archive [fixtures-dir]     (default: tests/c/fixtures)
 *
 * The fixtures are written by tests/c/fixtures/make_fixtures.py with Python's gzip
 * and tarfile; everything else (broken tars, .dat files, hand-made DEFLATE) is built
 * here. The NNEF text parser is tests/c/test_plan_nnef.c.
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

static void store_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
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

/* ---------------------------------------------------------------- .dat */

/* A .dat file into `out` (which the caller keeps 8-byte aligned); returns its size. */
static size_t make_dat(uint8_t *out, unsigned item_type, unsigned bits, unsigned rank, const uint32_t *extents,
                       const void *data, size_t data_size) {
    memset(out, 0, 128);
    out[0] = 0x4e;
    out[1] = 0xef;
    out[2] = 1;
    store_le32(out + 4, (uint32_t)data_size);
    store_le32(out + 8, rank);
    for (unsigned i = 0; i < rank && i < 8; i++)
        store_le32(out + 12 + 4 * i, extents[i]);
    store_le32(out + 44, bits);
    out[48] = (uint8_t)item_type;
    if (data_size)
        memcpy(out + 128, data, data_size);
    return 128 + data_size;
}

static uint64_t dat_buffer[1024];

static void test_dat_integers(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    static const struct {
        unsigned item_type, bits;
        ember_datum_type expected;
    } kinds[] = {
        {4, 8, EMBER_I8}, {4, 16, EMBER_I16}, {4, 32, EMBER_I32}, {4, 64, EMBER_I64},
        {1, 8, EMBER_U8}, {1, 16, EMBER_U16}, {1, 32, EMBER_U32}, {1, 64, EMBER_U64},
        {3, 8, EMBER_I8}, {2, 8, EMBER_U8}, {0, 32, EMBER_F32},
    };
    uint8_t items[6 * 8];
    for (size_t i = 0; i < sizeof items; i++)
        items[i] = (uint8_t)(i * 37 + 1);
    uint32_t extents[2] = {2, 3};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t data_size = 6 * kinds[k].bits / 8;
        size_t size = make_dat(buf, kinds[k].item_type, kinds[k].bits, 2, extents, items, data_size);
        ember_dat dat;
        CHECK(ember_dat_parse(buf, size, "t.dat", &dat) == EMBER_OK);
        CHECK(dat.datum_type == kinds[k].expected && dat.rank == 2 && dat.shape[0] == 2 && dat.shape[1] == 3);
        CHECK(dat.byte_size == data_size && memcmp(dat.data, items, data_size) == 0);
        CHECK(dat.data == buf + 128 && dat.owned == NULL); /* read in place */
        ember_dat_free(&dat);
    }
    /* Misaligned in the archive: copied so the items are aligned. */
    uint8_t *odd = buf + 1;
    size_t size = make_dat(odd, 4, 32, 2, extents, items, 24);
    ember_dat dat;
    CHECK(ember_dat_parse(odd, size, "odd.dat", &dat) == EMBER_OK);
    CHECK(dat.owned != NULL && dat.data == dat.owned && ((uintptr_t)dat.data % 4) == 0);
    CHECK(memcmp(dat.data, items, 24) == 0);
    ember_dat_free(&dat);
    CHECK(dat.owned == NULL && dat.data == NULL);
    /* The tract vendor code is accepted. */
    size = make_dat(buf, 4, 64, 2, extents, items, 48);
    buf[50] = 'R';
    buf[51] = 'T';
    CHECK(ember_dat_parse(buf, size, "tract.dat", &dat) == EMBER_OK && dat.datum_type == EMBER_I64);
    ember_dat_free(&dat);
}

static void test_dat_conversions(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    ember_dat dat;
    uint32_t six[1] = {6};
    const uint16_t halves[6] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x7e00};
    size_t size = make_dat(buf, 0, 16, 1, six, halves, sizeof halves);
    /* f16 and f64 stay as they are, read in place. */
    CHECK(ember_dat_parse(buf, size, "h.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F16 && dat.byte_size == 12 && dat.owned == NULL);
    CHECK(dat.data && memcmp(dat.data, halves, sizeof halves) == 0);
    ember_dat_free(&dat);

    const double doubles[3] = {1.5, -1e300, 3.25};
    uint32_t three[1] = {3};
    size = make_dat(buf, 0, 64, 1, three, doubles, sizeof doubles);
    CHECK(ember_dat_parse(buf, size, "d.dat", &dat) == EMBER_OK);
    CHECK(dat.datum_type == EMBER_F64 && dat.byte_size == 24);
    CHECK(dat.data && memcmp(dat.data, doubles, sizeof doubles) == 0);
    ember_dat_free(&dat);

    /* 1-bit bools, most significant bit first: 10 items 1,0,1,1,0,0,0,1 | 1,1. */
    const uint8_t bits[2] = {0xb1, 0xc0};
    uint32_t ten[1] = {10};
    size = make_dat(buf, 5, 1, 1, ten, bits, 2);
    CHECK(ember_dat_parse(buf, size, "b.dat", &dat) == EMBER_OK);
    const uint8_t unpacked[10] = {1, 0, 1, 1, 0, 0, 0, 1, 1, 1};
    CHECK(dat.datum_type == EMBER_BOOL && dat.byte_size == 10 && dat.data && memcmp(dat.data, unpacked, 10) == 0);
    ember_dat_free(&dat);

    /* 8-bit bools in place, normalised to 0/1 when they are not. */
    const uint8_t bytes01[3] = {0, 1, 1}, bytes02[3] = {0, 2, 255};
    size = make_dat(buf, 5, 8, 1, three, bytes01, 3);
    CHECK(ember_dat_parse(buf, size, "b8.dat", &dat) == EMBER_OK && dat.data == buf + 128);
    ember_dat_free(&dat);
    size = make_dat(buf, 5, 8, 1, three, bytes02, 3);
    CHECK(ember_dat_parse(buf, size, "b8.dat", &dat) == EMBER_OK && dat.owned && memcmp(dat.data, bytes01, 3) == 0);
    ember_dat_free(&dat);

    /* Rank 0 is one item; a zero extent is no items. */
    const float one = 4.5f;
    size = make_dat(buf, 0, 32, 0, NULL, &one, 4);
    CHECK(ember_dat_parse(buf, size, "s.dat", &dat) == EMBER_OK && dat.rank == 0 && dat.byte_size == 4 &&
          *(const float *)dat.data == 4.5f);
    ember_dat_free(&dat);
    uint32_t empty[2] = {0, 3};
    size = make_dat(buf, 0, 32, 2, empty, NULL, 0);
    CHECK(ember_dat_parse(buf, size, "e.dat", &dat) == EMBER_OK && dat.byte_size == 0 && dat.shape[0] == 0);
    ember_dat_free(&dat);
}

static void test_dat_errors(void) {
    uint8_t *buf = (uint8_t *)dat_buffer;
    uint8_t items[64] = {0};
    uint32_t extents[2] = {4, 3};
    ember_dat dat;
    size_t size = make_dat(buf, 0, 32, 2, extents, items, 48);
    CHECK(ember_dat_parse(buf, size, "w.dat", &dat) == EMBER_OK);
    ember_dat_free(&dat);

    CHECK_ERROR(ember_dat_parse(buf, 100, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: 100 bytes, shorter than the 128-byte header");
    buf[0] = 0;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "w.dat: bad magic 00 ef");
    buf[0] = 0x4e;
    buf[2] = 2;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "unsupported .dat version 2");
    buf[2] = 1;
    buf[8] = 9;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "w.dat: rank 9 exceeds 8");
    buf[8] = 1; /* rank 1 but a second extent set */
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "extent 1 is 3 beyond rank 1");
    buf[8] = 2;
    buf[4] ^= 0x10; /* data length disagrees with the shape */
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: header says 32 data bytes, but 12 items of 32 bits need 48");
    buf[4] ^= 0x10;
    CHECK_ERROR(ember_dat_parse(buf, size - 5, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: file holds 43 data bytes, header says 48");
    CHECK_ERROR(ember_dat_parse(buf, size + 4, "w.dat", &dat), EMBER_ERROR_FORMAT,
                "w.dat: file holds 52 data bytes, header says 48");
    buf[50] = 7;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_FORMAT, "unknown item type vendor 0x7");
    buf[50] = 0;
    buf[44] = 24;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_UNSUPPORTED,
                "unsupported item type 0 with 24 bits");
    buf[44] = 32;
    buf[48] = 9;
    CHECK_ERROR(ember_dat_parse(buf, size, "w.dat", &dat), EMBER_ERROR_UNSUPPORTED, "unsupported item type 9");

    /* Extents whose product overflows 64 bits. */
    uint32_t huge[8] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 2, 1, 1, 1, 1};
    size = make_dat(buf, 0, 32, 8, huge, items, 0);
    CHECK_ERROR(ember_dat_parse(buf, size, "h.dat", &dat), EMBER_ERROR_FORMAT, "product of the extents overflows");
    uint32_t big[2] = {0xffffffffu, 0xffffffffu}; /* fits in 64 bits, but not the data */
    size = make_dat(buf, 0, 64, 2, big, items, 0);
    CHECK_ERROR(ember_dat_parse(buf, size, "h.dat", &dat), EMBER_ERROR_FORMAT, "");
    CHECK(ember_dat_parse(NULL, 10, "x", &dat) == EMBER_ERROR_ARGUMENT);
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
    test_dat_integers();
    test_dat_conversions();
    test_dat_errors();
    printf("%d passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
