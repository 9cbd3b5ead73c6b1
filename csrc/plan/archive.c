/*
 * csrc/plan/archive.c — the container of a plan: a directory, a tar, or a gzip'd tar.
 *
 * Whatever the container, the result is the same flat list of (name, bytes) entries,
 * names relative to the plan root with '/' separators. A tar in memory is read in
 * place (entries point into the caller's buffer, so weights are not copied); a tar
 * file is mapped and read in place too, or read into memory where it cannot be mapped
 * (EMBER_NO_MMAP, or mmap failing); a gzip'd tar is inflated once into owned memory; a
 * directory is read into one owned buffer (a limit: its weights stay resident beside
 * their packed copies, as a .tgz's do).
 *
 * The limit of mapping (archive_map.c): the file must stay unchanged while the archive
 * is open. A file truncated under the mapping faults (SIGBUS) when a page past its new
 * end is touched, and one rewritten in place shows its new bytes. ember_model_load_buffer
 * reads a copy, for callers who cannot promise that (include/ember.h says so at
 * ember_model_load).
 *
 * The tar reader understands what Python's tarfile, GNU tar and bsdtar write: ustar
 * (with the 155-byte prefix field), GNU long names ('L') and pax extended headers
 * ('x', whose path= and size= override the next entry). Anything that is not a regular
 * file (directories, links, devices, global pax headers) is skipped. Every header is
 * checksummed and every size checked against the bytes that remain. Directories are
 * read by archive_dir.c.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* opendir, stat */
#endif
/* 64-bit st_size and d_ino on 32-bit targets: without it stat() and readdir() fail
 * with EOVERFLOW on files past 2 GiB or on filesystems with large inode numbers. */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "plan/archive_internal.h"
#include "plan/plan.h"

enum {
    TAR_BLOCK = 512,
    /* DEFLATE expands at most 1032:1; a larger output cannot come from valid data */
    MAX_DEFLATE_RATIO = 1032
};

/* Offsets of the ustar header fields we read. */
enum {
    TAR_NAME = 0, TAR_NAME_LEN = 100,
    TAR_SIZE = 124, TAR_SIZE_LEN = 12,
    TAR_CHECKSUM = 148, TAR_CHECKSUM_LEN = 8,
    TAR_TYPE = 156,
    TAR_MAGIC = 257,
    TAR_PREFIX = 345, TAR_PREFIX_LEN = 155
};

/* ---------------------------------------------------------------- entry list */

/* Take ownership of `name` (malloc'd) and add an entry. */
ember_status ember_entry_list_add(entry_list *list, char *name, const uint8_t *data, size_t size) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        ember_archive_entry *grown =
            capacity > SIZE_MAX / sizeof *grown ? NULL : realloc(list->entries, capacity * sizeof *grown);
        if (!grown) {
            free(name);
            return ember_error_set(EMBER_ERROR_MEMORY, "out of memory listing archive entries");
        }
        list->entries = grown;
        list->capacity = capacity;
    }
    list->entries[list->count++] = (ember_archive_entry){name, data, size};
    return EMBER_OK;
}

void ember_entry_list_free(entry_list *list) {
    for (size_t i = 0; i < list->count; i++)
        free(list->entries[i].name);
    free(list->entries);
    *list = (entry_list){0};
}

char *ember_copy_text(const char *text, size_t length) {
    char *copy = malloc(length + 1);
    if (copy) {
        memcpy(copy, text, length);
        copy[length] = '\0';
    }
    return copy;
}

/* ---------------------------------------------------------------- tar */

/* Pending overrides for the next entry, from 'L' and 'x' headers. */
typedef struct tar_overrides {
    char *long_name;
    char *pax_path;
    int has_pax_size;
    uint64_t pax_size;
} tar_overrides;

static void tar_overrides_clear(tar_overrides *o) {
    free(o->long_name);
    free(o->pax_path);
    *o = (tar_overrides){0};
}

static size_t field_length(const uint8_t *field, size_t capacity) {
    const uint8_t *nul = memchr(field, 0, capacity);
    return nul ? (size_t)(nul - field) : capacity;
}

/* A numeric header field: octal digits padded with spaces or NULs, or GNU base-256
 * (high bit of the first byte set) for sizes past 8 GiB. */
static int parse_tar_number(const uint8_t *field, size_t length, uint64_t *value) {
    *value = 0;
    if (field[0] & 0x80) {
        if (field[0] != 0x80) /* negative or absurdly large */
            return 0;
        for (size_t i = 1; i < length; i++) {
            if (*value >> 56)
                return 0;
            *value = *value << 8 | field[i];
        }
        return 1;
    }
    size_t i = 0;
    while (i < length && field[i] == ' ')
        i++;
    int digits = 0;
    for (; i < length && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
        if (*value >> 61)
            return 0;
        *value = *value << 3 | (uint64_t)(field[i] - '0');
    }
    for (; i < length; i++) /* only terminators may follow */
        if (field[i] != ' ' && field[i] != '\0')
            return 0;
    return digits > 0;
}

/* The header checksum counts its own field as spaces; old tars summed signed bytes. */
static int tar_checksum_ok(const uint8_t *header) {
    uint64_t stored;
    if (!parse_tar_number(header + TAR_CHECKSUM, TAR_CHECKSUM_LEN, &stored))
        return 0;
    long unsigned_sum = 0, signed_sum = 0;
    for (int i = 0; i < TAR_BLOCK; i++) {
        int in_field = i >= TAR_CHECKSUM && i < TAR_CHECKSUM + TAR_CHECKSUM_LEN;
        unsigned char byte = in_field ? ' ' : header[i];
        unsigned_sum += byte;
        signed_sum += (signed char)byte;
    }
    return (long)stored == unsigned_sum || (long)stored == signed_sum;
}

static int is_zero_block(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The name a ustar header gives, joined with its prefix field ("prefix/name"). */
static char *tar_header_name(const uint8_t *header) {
    size_t name_len = field_length(header + TAR_NAME, TAR_NAME_LEN);
    int posix = memcmp(header + TAR_MAGIC, "ustar\0", 6) == 0; /* GNU uses this area otherwise */
    size_t prefix_len = posix ? field_length(header + TAR_PREFIX, TAR_PREFIX_LEN) : 0;
    char *name = malloc(prefix_len + 1 + name_len + 1);
    if (!name)
        return NULL;
    size_t at = 0;
    if (prefix_len) {
        memcpy(name, header + TAR_PREFIX, prefix_len);
        name[prefix_len] = '/';
        at = prefix_len + 1;
    }
    memcpy(name + at, header + TAR_NAME, name_len);
    name[at + name_len] = '\0';
    return name;
}

/* Strip leading "./" (and stray '/'), in place; returns the name or NULL when what is
 * left names a directory ("" or ending in '/'). */
static char *normalize_name(char *name) {
    char *start = name;
    for (;;) {
        if (start[0] == '.' && start[1] == '/')
            start += 2;
        else if (start[0] == '/')
            start++;
        else
            break;
    }
    size_t length = strlen(start);
    if (length == 0 || start[length - 1] == '/' || strcmp(start, ".") == 0)
        return NULL;
    memmove(name, start, length + 1);
    return name;
}

/* One "<length> <key>=<value>\n" record of a pax header; returns its length or 0. */
static size_t pax_record(const uint8_t *p, size_t available, tar_overrides *o, int *oom) {
    size_t length = 0, i = 0;
    for (; i < available && p[i] >= '0' && p[i] <= '9'; i++) {
        if (length > available / 10)
            return 0;
        length = length * 10 + (size_t)(p[i] - '0');
    }
    if (i == 0 || i >= available || p[i] != ' ' || length > available || length <= i + 1 ||
        p[length - 1] != '\n')
        return 0;
    const uint8_t *key = p + i + 1, *end = p + length - 1;
    const uint8_t *equals = memchr(key, '=', (size_t)(end - key));
    if (!equals)
        return 0;
    size_t key_len = (size_t)(equals - key), value_len = (size_t)(end - equals - 1);
    if (key_len == 4 && memcmp(key, "path", 4) == 0) {
        free(o->pax_path);
        o->pax_path = ember_copy_text((const char *)equals + 1, value_len);
        *oom = o->pax_path == NULL;
    } else if (key_len == 4 && memcmp(key, "size", 4) == 0) {
        uint64_t size = 0;
        if (value_len == 0 || value_len > 19)
            return 0;
        for (size_t k = 1; k <= value_len; k++) {
            if (equals[k] < '0' || equals[k] > '9')
                return 0;
            size = size * 10 + (uint64_t)(equals[k] - '0');
        }
        o->pax_size = size;
        o->has_pax_size = 1;
    }
    return length;
}

static ember_status parse_pax(const uint8_t *data, size_t size, const char *origin, tar_overrides *o) {
    size_t at = 0;
    while (at < size) {
        if (data[at] == '\0') /* some writers pad the record block with NULs */
            break;
        int oom = 0;
        size_t length = pax_record(data + at, size - at, o, &oom);
        if (oom)
            return ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", origin);
        if (length == 0)
            return ember_error_set(EMBER_ERROR_FORMAT, "%s: malformed pax header record at byte %zu",
                                   origin, at);
        at += length;
    }
    return EMBER_OK;
}

/* A regular file: settle its name from the overrides and add it. */
static ember_status tar_add_file(const uint8_t *header, const uint8_t *data, size_t size,
                                 tar_overrides *o, entry_list *list, const char *origin) {
    char *name;
    if (o->pax_path) {
        name = o->pax_path;
        o->pax_path = NULL;
    } else if (o->long_name) {
        name = o->long_name;
        o->long_name = NULL;
    } else {
        name = tar_header_name(header);
    }
    if (!name)
        return ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", origin);
    if (!normalize_name(name)) {
        free(name);
        return EMBER_OK;
    }
    return ember_entry_list_add(list, name, data, size);
}

static int is_metadata_type(uint8_t type) {
    return type == 'x' || type == 'g' || type == 'L' || type == 'K';
}

/* Size of the entry whose header is at `header`: a pending pax size= wins, except
 * for the metadata headers that come between it and its file. */
static ember_status tar_entry_size(const uint8_t *header, const tar_overrides *o, size_t offset,
                                   const char *origin, uint64_t *size) {
    if (!parse_tar_number(header + TAR_SIZE, TAR_SIZE_LEN, size))
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: tar header at offset %zu has an invalid size field",
                               origin, offset);
    if (o->has_pax_size && !is_metadata_type(header[TAR_TYPE]))
        *size = o->pax_size;
    return EMBER_OK;
}

/* Describe the entry for an error message without allocating. */
static void tar_entry_label(const uint8_t *header, const tar_overrides *o, char *label, size_t capacity) {
    const char *name = o->pax_path ? o->pax_path : o->long_name;
    if (name)
        snprintf(label, capacity, "%s", name);
    else
        snprintf(label, capacity, "%.*s", (int)field_length(header + TAR_NAME, TAR_NAME_LEN),
                 (const char *)header + TAR_NAME);
}

/* Handle the entry at `header`, whose data (size bytes) starts at `data`. */
static ember_status tar_entry(const uint8_t *header, const uint8_t *data, size_t size,
                              tar_overrides *o, entry_list *list, const char *origin) {
    ember_status status = EMBER_OK;
    switch (header[TAR_TYPE]) {
    case '0': case '\0': case '7': /* regular and contiguous files */
        status = tar_add_file(header, data, size, o, list, origin);
        tar_overrides_clear(o);
        return status;
    case 'L': /* GNU long name of the next entry */
        free(o->long_name);
        o->long_name = ember_copy_text((const char *)data, field_length(data, size));
        return o->long_name ? EMBER_OK : ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", origin);
    case 'x': /* pax extended header of the next entry */
        return parse_pax(data, size, origin, o);
    case 'K': case 'g': /* long link names, global pax headers: nothing we use */
        return EMBER_OK;
    default: /* directories, links, devices: not plan files */
        tar_overrides_clear(o);
        return EMBER_OK;
    }
}

static ember_status tar_parse(const uint8_t *data, size_t size, const char *origin, entry_list *list) {
    tar_overrides o = {0};
    ember_status status = EMBER_OK;
    size_t at = 0;
    while (status == EMBER_OK && at < size) {
        const uint8_t *header = data + at;
        size_t rest = size - at;
        if (rest < TAR_BLOCK || is_zero_block(header, TAR_BLOCK)) {
            if (is_zero_block(header, rest < TAR_BLOCK ? rest : TAR_BLOCK))
                break; /* a zero block ends the archive */
            if (at == 0)
                status = ember_error_set(EMBER_ERROR_FORMAT,
                                         "%s: not a tar archive (%zu bytes, less than one header)", origin, size);
            else
                status = ember_error_set(EMBER_ERROR_FORMAT, "%s: tar header at offset %zu is truncated",
                                         origin, at);
            break;
        }
        if (!tar_checksum_ok(header)) {
            status = ember_error_set(EMBER_ERROR_FORMAT, at == 0 ? "%s: not a tar archive (bad header checksum)"
                                                                 : "%s: corrupt tar header at offset %zu",
                                     origin, at);
            break;
        }
        uint64_t entry_size;
        if ((status = tar_entry_size(header, &o, at, origin, &entry_size)) != EMBER_OK)
            break;
        at += TAR_BLOCK;
        if (entry_size > size - at) {
            char label[128];
            tar_entry_label(header, &o, label, sizeof label);
            status = ember_error_set(EMBER_ERROR_FORMAT, "%s: tar entry '%s' claims %llu bytes but only %zu remain",
                                     origin, label, (unsigned long long)entry_size, size - at);
            break;
        }
        status = tar_entry(header, data + at, (size_t)entry_size, &o, list, origin);
        size_t padded = (size_t)entry_size + (TAR_BLOCK - (size_t)entry_size % TAR_BLOCK) % TAR_BLOCK;
        at = padded > size - at ? size : at + padded; /* the last padding may be missing */
    }
    tar_overrides_clear(&o);
    return status;
}

/* ---------------------------------------------------------------- opening */

ember_status ember_archive_finish(ember_archive *out, entry_list *list, uint8_t *owned, const char *origin) {
    char *origin_copy = ember_copy_text(origin, strlen(origin));
    if (!origin_copy) {
        ember_entry_list_free(list);
        free(owned);
        return ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", origin);
    }
    *out = (ember_archive){.entries = list->entries, .count = list->count, .owned = owned,
                           .origin = origin_copy};
    return EMBER_OK;
}

/* Parse `data` as a tar; `owned` (may be NULL) is the allocation holding it, which
 * the archive keeps (or frees on failure). */
static ember_status archive_from_tar(const uint8_t *data, size_t size, uint8_t *owned,
                                     const char *origin, ember_archive *out) {
    if (size == 0) {
        free(owned);
        return ember_error_set(EMBER_ERROR_FORMAT, "%s: empty file, not a tar or gzip'd tar", origin);
    }
    entry_list list = {0};
    ember_status status = tar_parse(data, size, origin, &list);
    if (status != EMBER_OK) {
        ember_entry_list_free(&list);
        free(owned);
        return status;
    }
    return ember_archive_finish(out, &list, owned, origin);
}

static int is_gzip(const uint8_t *data, size_t size) {
    return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* The tar inside gzip'd `data`, inflated into owned memory (one level only: a gzip
 * inside the gzip is not a plan, and gzip quines exist). */
static ember_status archive_from_gzip(const uint8_t *data, size_t size, const char *origin,
                                      ember_archive *out) {
    uint8_t *tar;
    size_t tar_size;
    size_t limit = size > SIZE_MAX / MAX_DEFLATE_RATIO ? SIZE_MAX : size * MAX_DEFLATE_RATIO;
    ember_status status = ember_gunzip(data, size, limit, &tar, &tar_size);
    if (status != EMBER_OK)
        return ember_error_prefix(status, "%s", origin);
    return archive_from_tar(tar, tar_size, tar, origin, out);
}

/* Parse `data` as a tar or gzip'd tar. `owned` as for archive_from_tar. */
static ember_status archive_from_bytes(const uint8_t *data, size_t size, uint8_t *owned,
                                       const char *origin, ember_archive *out) {
    if (is_gzip(data, size)) {
        ember_status status = archive_from_gzip(data, size, origin, out);
        free(owned);
        return status;
    }
    return archive_from_tar(data, size, owned, origin, out);
}

/* Parse a mapped file: a tar in place (the archive keeps the mapping), a gzip'd tar
 * inflated into memory (the mapping is dropped). */
static ember_status archive_from_mapping(const uint8_t *data, size_t size, const char *origin,
                                         ember_archive *out) {
    if (is_gzip(data, size)) {
        ember_status status = archive_from_gzip(data, size, origin, out);
        ember_unmap_file(data, size);
        return status;
    }
    ember_status status = archive_from_tar(data, size, NULL, origin, out);
    if (status != EMBER_OK) {
        ember_unmap_file(data, size);
        return status;
    }
    out->mapped = data;
    out->mapped_size = size;
    return EMBER_OK;
}

ember_status ember_archive_open_buffer(const void *data, size_t size, ember_archive *out) {
    if (!out || (!data && size))
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_archive_open_buffer: NULL argument");
    memset(out, 0, sizeof *out);
    return archive_from_bytes(data, size, NULL, "<memory>", out);
}

/* ---------------------------------------------------------------- files */

/* Read a whole file; `expected` (from stat) sizes the first allocation. */
ember_status ember_read_file(const char *path, size_t expected, uint8_t **out, size_t *out_size) {
    FILE *file = fopen(path, "rb");
    if (!file)
        return ember_error_set(EMBER_ERROR_IO, "%s: %s", path, strerror(errno));
    size_t capacity = expected + 1, size = 0; /* +1 to see EOF without a second growth */
    uint8_t *buffer = capacity ? malloc(capacity) : NULL;
    ember_status status = buffer ? EMBER_OK : ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", path);
    while (status == EMBER_OK) {
        if (size == capacity) {
            size_t grown_capacity = capacity > SIZE_MAX / 2 ? SIZE_MAX : capacity * 2;
            uint8_t *grown = size == SIZE_MAX ? NULL : realloc(buffer, grown_capacity);
            if (!grown) {
                status = ember_error_set(EMBER_ERROR_MEMORY, "%s: out of memory", path);
                break;
            }
            buffer = grown;
            capacity = grown_capacity;
        }
        size_t n = fread(buffer + size, 1, capacity - size, file);
        size += n;
        if (n == 0) {
            if (ferror(file))
                status = ember_error_set(EMBER_ERROR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(file);
    if (status != EMBER_OK) {
        free(buffer);
        return status;
    }
    *out = buffer;
    *out_size = size;
    return EMBER_OK;
}

/* ---------------------------------------------------------------- paths */

ember_status ember_archive_open_path(const char *path, ember_archive *out) {
    if (!path || !out)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_archive_open_path: NULL argument");
    memset(out, 0, sizeof *out);
    struct stat info;
    if (stat(path, &info) != 0)
        return ember_error_set(EMBER_ERROR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(info.st_mode))
        return ember_archive_from_directory(path, out);
    if ((uintmax_t)info.st_size >= SIZE_MAX)
        return ember_error_set(EMBER_ERROR_IO, "%s: too large for this machine", path);
    const uint8_t *mapped;
    size_t mapped_size;
    if (ember_map_file(path, &mapped, &mapped_size) == 0)
        return archive_from_mapping(mapped, mapped_size, path, out);
    uint8_t *bytes;
    size_t size;
    ember_status status = ember_read_file(path, (size_t)info.st_size, &bytes, &size);
    if (status != EMBER_OK)
        return status;
    return archive_from_bytes(bytes, size, bytes, path, out);
}

/* The last entry of that name: in a tar, a later entry replaces an earlier one. */
const ember_archive_entry *ember_archive_find(const ember_archive *archive, const char *name) {
    if (!archive || !name)
        return NULL;
    for (size_t i = archive->count; i-- > 0;)
        if (strcmp(archive->entries[i].name, name) == 0)
            return &archive->entries[i];
    return NULL;
}

void ember_archive_close(ember_archive *archive) {
    if (!archive)
        return;
    for (size_t i = 0; i < archive->count; i++)
        free(archive->entries[i].name);
    free(archive->entries);
    free(archive->owned);
    free(archive->origin);
    ember_unmap_file(archive->mapped, archive->mapped_size);
    memset(archive, 0, sizeof *archive);
}
