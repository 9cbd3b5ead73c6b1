/*
 * csrc/plan/archive_map.c — a plan file read in place: mapped, not copied.
 *
 * A .tar opened by path is mapped read-only and private (archive.c parses it in place),
 * so its weights cost no copy and no read at load: pages come from the file as they are
 * first touched. Once an op has packed a constant into its own layout and will not read
 * it again, ember_archive_release gives those pages back. For a private mapping that
 * nobody writes, that is always safe: a page given back and touched again is simply
 * read again from the file, with the same bytes. So the raw weights and their packed
 * copy are not both resident — the point of mapping rather than reading.
 *
 * The limit (documented at ember_model_load): the file must stay as it is while the
 * model lives. A file truncated under a mapping makes the next touch of a page past the
 * new end fault (SIGBUS), and a file rewritten in place changes the constants the
 * mapping shows. Writing a new file and renaming it over the old is safe (the mapping
 * keeps the old one). Whoever cannot promise this loads with ember_model_load_buffer,
 * which keeps a copy. Plan directories are read into memory, not mapped.
 *
 * Without mmap (EMBER_NO_MMAP defined, or a system without POSIX mapped files) every
 * file is read into memory, releasing does nothing and every byte counts as resident.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise and MADV_DONTNEED (beyond POSIX) */
#endif
#define _FILE_OFFSET_BITS 64 /* files and pagemap offsets past 2 GiB on 32-bit targets */

#include <stdint.h>
#include <stdlib.h>

#include "plan/archive_internal.h"
#include "plan/plan.h"

#if !defined(EMBER_NO_MMAP) && (defined(__unix__) || defined(__APPLE__))
#include <unistd.h>
#if defined(_POSIX_MAPPED_FILES) && _POSIX_MAPPED_FILES > 0
#define EMBER_MAPS_FILES 1
#endif
#endif

#ifdef EMBER_MAPS_FILES
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

int ember_map_file(const char *path, const uint8_t **out, size_t *out_size) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    struct stat info;
    void *mapped = MAP_FAILED;
    /* an empty file cannot be mapped; the reading path reports it */
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 &&
        (uintmax_t)info.st_size < SIZE_MAX)
        mapped = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd); /* the mapping keeps the file */
    if (mapped == MAP_FAILED)
        return -1;
    *out = mapped;
    *out_size = (size_t)info.st_size;
    return 0;
}

void ember_unmap_file(const uint8_t *data, size_t size) {
    if (data != NULL)
        munmap((void *)data, size);
}

static size_t page_size(void) {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? (size_t)size : 4096;
}
#else
int ember_map_file(const char *path, const uint8_t **out, size_t *out_size) {
    (void)path, (void)out, (void)out_size;
    return -1;
}

void ember_unmap_file(const uint8_t *data, size_t size) {
    (void)data, (void)size;
}
#endif

/* Whether [data, data + size) lies inside the archive's mapping. */
#if defined(EMBER_MAPS_FILES)
static int in_mapping(const ember_archive *archive, const void *data, size_t size) {
    const uintptr_t begin = (uintptr_t)data, map = (uintptr_t)archive->mapped;
    return archive->mapped != NULL && size > 0 && begin >= map &&
           size <= archive->mapped_size && begin - map <= archive->mapped_size - size;
}
#endif

void ember_archive_release(const ember_archive *archive, const void *data, size_t size) {
#if defined(EMBER_MAPS_FILES) && defined(MADV_DONTNEED)
    if (archive == NULL || !in_mapping(archive, data, size))
        return;
    /* whole pages only: the bytes around the range may belong to other entries, and
     * the start of the mapping is page-aligned */
    const uintptr_t page = page_size();
    const uintptr_t first = ((uintptr_t)data + page - 1) / page * page;
    const uintptr_t end = ((uintptr_t)data + size) / page * page;
    if (first < end)
        madvise((void *)first, end - first, MADV_DONTNEED); /* advice: failing is harmless */
#else
    (void)archive, (void)data, (void)size;
#endif
}

#if defined(EMBER_MAPS_FILES) && defined(__linux__)
/* Resident bytes of a mapped range, from /proc/self/pagemap (bit 63 of a page's entry:
 * present in this process's memory). mincore() would not do: for a file mapping it
 * reports the page cache, which still holds a page this process gave back. -1 when
 * pagemap cannot be read. */
static long long pagemap_resident(uintptr_t begin, uintptr_t end) {
    const int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0)
        return -1;
    const uintptr_t page = page_size();
    uint64_t entries[512];
    long long resident = 0;
    for (uintptr_t at = begin / page * page; at < end;) {
        const uintptr_t pages_left = (end - at + page - 1) / page;
        const size_t count = pages_left < 512 ? (size_t)pages_left : 512;
        const ssize_t got = pread(fd, entries, count * sizeof entries[0],
                                  (off_t)(at / page) * (off_t)sizeof entries[0]);
        if (got != (ssize_t)(count * sizeof entries[0])) {
            resident = -1;
            break;
        }
        for (size_t i = 0; i < count; i++, at += page) {
            const uintptr_t low = at > begin ? at : begin;
            const uintptr_t high = at + page < end ? at + page : end;
            if (entries[i] >> 63)
                resident += (long long)(high - low);
        }
    }
    close(fd);
    return resident;
}
#endif

size_t ember_archive_resident_bytes(const ember_archive *archive, const void *data,
                                    size_t size) {
#if defined(EMBER_MAPS_FILES) && defined(__linux__)
    if (archive != NULL && in_mapping(archive, data, size)) {
        const long long resident = pagemap_resident((uintptr_t)data, (uintptr_t)data + size);
        if (resident >= 0)
            return (size_t)resident;
    }
#else
    (void)archive, (void)data;
#endif
    return size; /* read into memory, or residency not measurable here: all of it */
}
