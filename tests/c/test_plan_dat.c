/*
 * tests/c/test_plan_dat.c — the plan layer's .dat tensor files (csrc/plan/dat.c): the
 * header's checks, every integer and float item type read, and the conversions.
 *
 *     build/host/tests/test_plan_dat
 *
 * Every file is built here, byte by byte. The archives around them are
 * tests/c/test_plan_archive.c, the NNEF text tests/c/test_plan_nnef.c.
 * Prints "N passed, M failed" last and exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_test_support.h"

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
    test_dat_integers();
    test_dat_conversions();
    test_dat_errors();
    printf("%d passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
