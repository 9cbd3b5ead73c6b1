/*
 * csrc/plan/dat.c — NNEF tensor files (.dat): a 128-byte little-endian header, then
 * the items. The layout is the table in docs/plan-format.md; cook/nnef/dat.py is the
 * Python side and accepts exactly the same files.
 *
 * Integer and f32 items are used in place (the runtime runs on little-endian CPUs
 * only, f16 and f64 included) unless the archive left them misaligned; 1-bit bools
 * become one byte per item, so the rest of the runtime sees only ember_datum_types.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plan/plan.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .dat reader uses little-endian items in place"
#endif

enum {
    DAT_HEADER_SIZE = EMBER_DAT_HEADER_SIZE,
    DAT_MAX_RANK = 8,
    /* item type codes of the NNEF spec */
    ITEM_FLOAT = 0,
    ITEM_UNSIGNED = 1,
    ITEM_QUANT_UNSIGNED = 2,
    ITEM_QUANT_SIGNED = 3,
    ITEM_SIGNED = 4,
    ITEM_BOOL = 5,
    VENDOR_KHRONOS = 0,
    VENDOR_TRACT = ('T' << 8) | 'R'
};

/* How the items are stored in the file, and what they become in memory. */
typedef enum item_encoding {
    ENCODING_AS_IS,  /* used in place: floats, integers, 8-bit bool (normalised to 0/1) */
    ENCODING_BITS    /* 1-bit bool, unpacked to bytes */
} item_encoding;

typedef struct dat_header {
    unsigned version_major;
    uint32_t data_length, rank, extents[DAT_MAX_RANK], bits;
    unsigned item_type, vendor;
} dat_header;

static uint32_t load_u32(const uint8_t *p) {
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static dat_header read_header(const uint8_t *bytes) {
    dat_header h;
    h.version_major = bytes[2];
    h.data_length = load_u32(bytes + 4);
    h.rank = load_u32(bytes + 8);
    for (int i = 0; i < DAT_MAX_RANK; i++)
        h.extents[i] = load_u32(bytes + 12 + 4 * i);
    h.bits = load_u32(bytes + 44);
    h.item_type = bytes[48] | (unsigned)bytes[49] << 8;
    h.vendor = bytes[50] | (unsigned)bytes[51] << 8;
    return h;
}

/* Map (item type, bits) to a datum type and how to decode it; 0 if unsupported. */
static int datum_type_of(unsigned item_type, uint32_t bits, ember_datum_type *dt, item_encoding *enc) {
    static const ember_datum_type signed_types[] = {EMBER_I8, EMBER_I16, EMBER_I32, EMBER_I64};
    static const ember_datum_type unsigned_types[] = {EMBER_U8, EMBER_U16, EMBER_U32, EMBER_U64};
    int width = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
    *enc = ENCODING_AS_IS;
    switch (item_type) {
    case ITEM_FLOAT:
        *dt = bits == 16 ? EMBER_F16 : bits == 64 ? EMBER_F64 : EMBER_F32;
        return bits == 16 || bits == 32 || bits == 64;
    case ITEM_UNSIGNED:
    case ITEM_QUANT_UNSIGNED:
        if (width < 0)
            return 0;
        *dt = unsigned_types[width];
        return 1;
    case ITEM_SIGNED:
    case ITEM_QUANT_SIGNED:
        if (width < 0)
            return 0;
        *dt = signed_types[width];
        return 1;
    case ITEM_BOOL:
        *dt = EMBER_BOOL;
        if (bits == 1)
            *enc = ENCODING_BITS;
        return bits == 1 || bits == 8;
    default:
        return 0;
    }
}

/* Product of the extents, or an error if it does not fit in 64 bits. */
static ember_status item_count(const dat_header *h, const char *name, uint64_t *count) {
    *count = 1;
    for (uint32_t i = 0; i < h->rank; i++) {
        if (h->extents[i] != 0 && *count > UINT64_MAX / h->extents[i])
            return ember_error_set(EMBER_ERROR_FORMAT, "%s: the product of the extents overflows", name);
        *count *= h->extents[i];
    }
    return EMBER_OK;
}

/* The checks every header must pass, in the order a reader would want to hear them. */
static ember_status check_header(const dat_header *h, const char *name) {
    if (h->version_major != 1)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: unsupported .dat version %u", name,
                               h->version_major);
    if (h->rank > DAT_MAX_RANK)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: rank %u exceeds %d", name, (unsigned)h->rank,
                               DAT_MAX_RANK);
    for (uint32_t i = h->rank; i < DAT_MAX_RANK; i++)
        if (h->extents[i] != 0)
            return ember_error_set(EMBER_ERROR_FORMAT, "%s: extent %u is %u beyond rank %u (must be 0)",
                                   name, (unsigned)i, (unsigned)h->extents[i], (unsigned)h->rank);
    if (h->vendor != VENDOR_KHRONOS && h->vendor != VENDOR_TRACT)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: unknown item type vendor %#x", name, h->vendor);
    return EMBER_OK;
}

static ember_status expected_length(const dat_header *h, uint64_t count, item_encoding enc,
                                    const char *name, uint64_t *length) {
    if (enc == ENCODING_BITS) {
        *length = count / 8 + (count % 8 != 0);
        return EMBER_OK;
    }
    uint64_t item_bytes = h->bits / 8;
    if (count > UINT64_MAX / item_bytes)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: data size overflows", name);
    *length = count * item_bytes;
    return EMBER_OK;
}

/* NNEF packs bools most significant bit first (as numpy.packbits does). */
static void unpack_bits(const uint8_t *src, size_t count, uint8_t *dst) {
    for (size_t i = 0; i < count; i++)
        dst[i] = (src[i / 8] >> (7 - i % 8)) & 1;
}

static int has_non_boolean_byte(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] > 1)
            return 1;
    return 0;
}

/* Decide where the items live: in place, or in `owned` after conversion or copy. */
static ember_status place_items(const uint8_t *payload, size_t count, size_t file_item_size,
                                item_encoding enc, const char *name, ember_dat *out) {
    size_t item_size = out->datum_type == EMBER_BOOL ? 1 : file_item_size;
    if (count > SIZE_MAX / item_size)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: %zu items do not fit in memory", name, count);
    out->byte_size = count * item_size;
    int misaligned = ((uintptr_t)payload % item_size) != 0;
    int fix_bools = out->datum_type == EMBER_BOOL && enc == ENCODING_AS_IS &&
                    has_non_boolean_byte(payload, count);
    if (enc == ENCODING_AS_IS && !misaligned && !fix_bools) {
        out->data = payload;
        return EMBER_OK;
    }
    out->owned = malloc(out->byte_size ? out->byte_size : 1);
    if (!out->owned)
        return ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory for %zu bytes", name, out->byte_size);
    if (enc == ENCODING_BITS)
        unpack_bits(payload, count, out->owned);
    else if (fix_bools)
        for (size_t i = 0; i < count; i++)
            ((uint8_t *)out->owned)[i] = payload[i] != 0;
    else
        memcpy(out->owned, payload, out->byte_size);
    out->data = out->owned;
    return EMBER_OK;
}

ember_status ember_dat_parse(const uint8_t *bytes, size_t size, const char *name, ember_dat *out) {
    if (!out || (!bytes && size))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_dat_parse: NULL argument");
    if (!name)
        name = "<dat>";
    memset(out, 0, sizeof *out);
    if (size < DAT_HEADER_SIZE)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: %zu bytes, shorter than the 128-byte header",
                               name, size);
    if (bytes[0] != 0x4e || bytes[1] != 0xef)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: bad magic %02x %02x (expected 4e ef)", name,
                               bytes[0], bytes[1]);
    dat_header h = read_header(bytes);
    ember_status status = check_header(&h, name);
    if (status != EMBER_OK)
        return status;
    item_encoding enc;
    if (!datum_type_of(h.item_type, h.bits, &out->datum_type, &enc))
        return ember_error_set(EMBER_ERROR_UNSUPPORTED, "%s: unsupported item type %u with %u bits",
                               name, h.item_type, (unsigned)h.bits);
    uint64_t count = 0, length = 0;
    if ((status = item_count(&h, name, &count)) != EMBER_OK ||
        (status = expected_length(&h, count, enc, name, &length)) != EMBER_OK)
        return status;
    if (h.data_length != length)
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "%s: header says %u data bytes, but %llu items of %u bits need %llu",
                               name, (unsigned)h.data_length, (unsigned long long)count,
                               (unsigned)h.bits, (unsigned long long)length);
    if (size - DAT_HEADER_SIZE != h.data_length)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: file holds %zu data bytes, header says %u",
                               name, size - DAT_HEADER_SIZE, (unsigned)h.data_length);
    out->rank = (int32_t)h.rank;
    for (uint32_t i = 0; i < h.rank; i++)
        out->shape[i] = (int64_t)h.extents[i];
    /* count ≤ data_length · 8 ≤ SIZE_MAX · 8; the cast is checked on 32-bit targets */
    if (count > SIZE_MAX)
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: too many items for this machine", name);
    status = place_items(bytes + DAT_HEADER_SIZE, (size_t)count, h.bits / 8, enc, name, out);
    if (status != EMBER_OK)
        ember_dat_free(out);
    return status;
}

void ember_dat_free(ember_dat *dat) {
    if (!dat)
        return;
    free(dat->owned);
    dat->owned = NULL;
    dat->data = NULL;
    dat->byte_size = 0;
}

/* Counted over the archive's entries rather than a model's constants: a symbolic plan
 * reads its constants per binding, and every stage model of it shares one archive. */
void ember_archive_dat_bytes(const ember_archive *archive, size_t *out_stored,
                             size_t *out_resident) {
    size_t stored = 0, resident = 0;
    for (size_t i = 0; i < archive->count; i++) {
        const ember_archive_entry *entry = &archive->entries[i];
        const size_t length = strlen(entry->name);
        if (length < 4 || strcmp(entry->name + length - 4, ".dat") != 0 ||
            entry->size < DAT_HEADER_SIZE || ember_archive_find(archive, entry->name) != entry)
            continue; /* not a tensor file, or one a later entry of that name replaces */
        const size_t items = entry->size - DAT_HEADER_SIZE;
        stored += items;
        resident += ember_archive_resident_bytes(archive, entry->data + DAT_HEADER_SIZE, items);
    }
    *out_stored = stored;
    *out_resident = resident;
}
