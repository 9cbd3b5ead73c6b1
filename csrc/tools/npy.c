/*
 * The .npy format: "\x93NUMPY", major, minor, a little-endian header length (2 bytes in
 * 1.0, 4 in 2.0/3.0), then a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 8, 8), }
 * padded with spaces and a newline, then the raw items.
 */
#include "tools/npy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_HEADER (1 << 20)

static int fail(char *error, size_t size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(error, size, fmt, args);
    va_end(args);
    return -1;
}

/* The descr strings we read, and what they become. */
static const struct {
    const char *descr;
    ember_datum_type dt;
    size_t file_item;
} npy_types[] = {
    {"<f4", EMBER_F32, 4}, {"<f8", EMBER_F64, 8}, {"<f2", EMBER_F16, 2}, {"<i8", EMBER_I64, 8}, {"<i4", EMBER_I32, 4},
    {"|u1", EMBER_U8, 1},  {"|b1", EMBER_BOOL, 1}, {"|i1", EMBER_I8, 1}, {"<i2", EMBER_I16, 2},
    {"<u2", EMBER_U16, 2}, {"<u4", EMBER_U32, 4}, {"<u8", EMBER_U64, 8},
};
#define NPY_TYPE_COUNT (sizeof npy_types / sizeof npy_types[0])

/* The value text after 'key': in the header dict, or NULL. */
static const char *dict_value(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *p = strstr(header, quoted);
    if (p == NULL)
        return NULL;
    p += strlen(quoted);
    while (*p == ' ' || *p == ':')
        p++;
    return p;
}

static int parse_shape(const char *p, npy_array *out)
{
    if (p == NULL || *p != '(')
        return -1;
    p++;
    out->rank = 0;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            return 0;
        if (!isdigit((unsigned char)*p) || out->rank == EMBER_MAX_RANK)
            return -1;
        int64_t dim = 0;
        while (isdigit((unsigned char)*p)) {
            if (dim > (INT64_MAX - 9) / 10)
                return -1;
            dim = dim * 10 + (*p++ - '0');
        }
        out->shape[out->rank++] = dim;
    }
}

static int parse_header(const char *header, const char *path, npy_array *out, size_t *file_item,
                        char *error, size_t size)
{
    const char *descr = dict_value(header, "descr");
    const char *fortran = dict_value(header, "fortran_order");
    if (descr == NULL || *descr != '\'' || fortran == NULL)
        return fail(error, size, "%s: malformed .npy header", path);
    size_t t = 0;
    for (; t < NPY_TYPE_COUNT; t++)
        if (strncmp(descr + 1, npy_types[t].descr, 3) == 0 && descr[4] == '\'')
            break;
    if (t == NPY_TYPE_COUNT)
        return fail(error, size, "%s: unsupported dtype %.8s (expected little-endian f16, f32, "
                    "f64, i8, i16, i32, i64, u8, u16, u32, u64 or bool)", path, descr);
    if (strncmp(fortran, "False", 5) != 0)
        return fail(error, size, "%s: Fortran-order arrays are not supported; save a "
                    "C-contiguous array (np.ascontiguousarray)", path);
    if (parse_shape(dict_value(header, "shape"), out) != 0)
        return fail(error, size, "%s: malformed or too large shape in the .npy header", path);
    out->datum_type = npy_types[t].dt;
    *file_item = npy_types[t].file_item;
    return 0;
}

/* Item count × item size, refusing anything over half the address space. */
static int array_bytes(const npy_array *a, size_t item, size_t *out)
{
    uint64_t bytes = item;
    for (int i = 0; i < a->rank; i++) {
        if (a->shape[i] == 0) {
            *out = 0;
            return 0;
        }
        if ((uint64_t)a->shape[i] > (uint64_t)(SIZE_MAX / 2) / bytes)
            return -1;
        bytes *= (uint64_t)a->shape[i];
    }
    *out = (size_t)bytes;
    return 0;
}

static int fits(const ember_tensor *into, const npy_array *a)
{
    if (into == NULL || into->datum_type != a->datum_type || into->rank != a->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (into->shape[i] != a->shape[i])
            return 0;
    return 1;
}

static int read_payload(FILE *f, const char *path, const ember_tensor *into, npy_array *out,
                        size_t file_item, char *error, size_t size)
{
    size_t file_bytes;
    if (array_bytes(out, file_item, &file_bytes) != 0)
        return fail(error, size, "%s: array too large", path);
    out->in_place = file_bytes > 0 && fits(into, out); /* an empty slot may be NULL */
    void *raw = out->in_place ? into->data : malloc(file_bytes ? file_bytes : 1);
    if (raw == NULL)
        return fail(error, size, "%s: out of memory (%zu bytes)", path, file_bytes);
    if (fread(raw, 1, file_bytes, f) != file_bytes) {
        if (!out->in_place)
            free(raw);
        out->in_place = 0;
        return fail(error, size, "%s: truncated: the header announces %zu data bytes", path,
                    file_bytes);
    }
    out->data = raw;
    out->bytes = file_bytes;
    return 0;
}

int npy_read(const char *path, npy_array *out, char *error, size_t error_size)
{
    return npy_read_into(path, NULL, out, error, error_size);
}

int npy_read_into(const char *path, const ember_tensor *into, npy_array *out, char *error,
                  size_t error_size)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return fail(error, error_size, "%s: cannot open", path);
    unsigned char preamble[12];
    int status = -1;
    char *header = NULL;
    if (fread(preamble, 1, 10, f) != 10 || memcmp(preamble, NPY_MAGIC, 6) != 0) {
        fail(error, error_size, "%s: not a .npy file", path);
        goto done;
    }
    size_t header_len;
    if (preamble[6] == 1) {
        header_len = preamble[8] | (size_t)preamble[9] << 8;
    } else if (preamble[6] == 2 || preamble[6] == 3) {
        if (fread(preamble + 10, 1, 2, f) != 2) {
            fail(error, error_size, "%s: truncated header", path);
            goto done;
        }
        header_len = preamble[8] | (size_t)preamble[9] << 8 | (size_t)preamble[10] << 16 |
                     (size_t)preamble[11] << 24;
    } else {
        fail(error, error_size, "%s: unsupported .npy version %d", path, preamble[6]);
        goto done;
    }
    if (header_len > NPY_MAX_HEADER || (header = malloc(header_len + 1)) == NULL ||
        fread(header, 1, header_len, f) != header_len) {
        fail(error, error_size, "%s: truncated or oversized header", path);
        goto done;
    }
    header[header_len] = '\0';
    size_t file_item = 0;
    if (parse_header(header, path, out, &file_item, error, error_size) == 0)
        status = read_payload(f, path, into, out, file_item, error, error_size);
done:
    free(header);
    fclose(f);
    return status;
}

static const char *descr_of(ember_datum_type dt)
{
    for (size_t t = 0; t < NPY_TYPE_COUNT; t++)
        if (npy_types[t].dt == dt && 1)
            return npy_types[t].descr;
    return NULL;
}

int npy_write(const char *path, const ember_tensor *tensor, char *error, size_t error_size)
{
    const char *descr = descr_of(tensor->datum_type);
    if (descr == NULL)
        return fail(error, error_size, "%s: no .npy dtype for this datum type", path);
    char shape[256] = "";
    size_t used = 0;
    for (int i = 0; i < tensor->rank; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld%s",
                                 (long long)tensor->shape[i],
                                 tensor->rank == 1 ? "," : (i + 1 < tensor->rank ? ", " : ""));
    char header[400];
    int n = snprintf(header, sizeof header,
                     "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    /* Pad with spaces so magic + lengths + header + '\n' is a multiple of 64. */
    size_t total = 10 + (size_t)n + 1;
    const size_t padded = (total + 63) / 64 * 64;
    memset(header + n, ' ', padded - total);
    header[padded - 10 - 1] = '\n';
    const size_t header_len = padded - 10;

    npy_array facts;
    memset(&facts, 0, sizeof facts);
    facts.rank = tensor->rank;
    memcpy(facts.shape, tensor->shape, sizeof facts.shape);
    size_t bytes;
    if (array_bytes(&facts, ember_datum_type_size(tensor->datum_type), &bytes) != 0)
        return fail(error, error_size, "%s: tensor too large", path);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return fail(error, error_size, "%s: cannot create", path);
    unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                  (unsigned char)(header_len & 0xff),
                                  (unsigned char)(header_len >> 8)};
    int ok = fwrite(preamble, 1, 10, f) == 10 && fwrite(header, 1, header_len, f) == header_len &&
             (bytes == 0 || fwrite(tensor->data, 1, bytes, f) == bytes);
    ok &= fclose(f) == 0;
    return ok ? 0 : fail(error, error_size, "%s: write failed", path);
}

void npy_free(npy_array *array)
{
    if (!array->in_place)
        free(array->data);
    array->data = NULL;
    array->in_place = 0;
}
