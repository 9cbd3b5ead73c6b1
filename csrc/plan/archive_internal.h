/*
 * csrc/plan/archive_internal.h — what archive.c (tars) and archive_dir.c (directories)
 * share: the growing list of entries and the steps that make an ember_archive of it.
 */
#ifndef EMBER_PLAN_ARCHIVE_INTERNAL_H
#define EMBER_PLAN_ARCHIVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

typedef struct entry_list {
    ember_archive_entry *entries;
    size_t count, capacity;
} entry_list;

/* Take ownership of `name` (malloc'd) and add an entry. */
ember_status ember_entry_list_add(entry_list *list, char *name, const uint8_t *data,
                                  size_t size);
void ember_entry_list_free(entry_list *list);
/* A malloc'd NUL-terminated copy of `length` bytes of `text`, or NULL. */
char *ember_copy_text(const char *text, size_t length);
/* Read a whole file; `expected` (from stat) sizes the first allocation. */
ember_status ember_read_file(const char *path, size_t expected, uint8_t **out,
                             size_t *out_size);
/* The archive of `list`, whose entries point into `owned` (kept, or freed on failure). */
ember_status ember_archive_finish(ember_archive *out, entry_list *list, uint8_t *owned,
                                  const char *origin);
/* Map a whole regular file read-only and private (archive_map.c); 0 on success, -1 when
 * it cannot be mapped (then read it: ember_read_file reports why it cannot). */
int ember_map_file(const char *path, const uint8_t **out, size_t *out_size);
void ember_unmap_file(const uint8_t *data, size_t size);
/* A plan directory (archive_dir.c). */
ember_status ember_archive_from_directory(const char *path, ember_archive *out);

#endif /* EMBER_PLAN_ARCHIVE_INTERNAL_H */
