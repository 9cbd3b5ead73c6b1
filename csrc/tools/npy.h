/*
 * csrc/tools/npy.h — reading and writing numpy .npy files (format 1.0; 2.0 and 3.0 are
 * read too), for ember-run. Little-endian, C order only; every header field is checked
 * against the file size, so a bad file is a message, never a crash.
 */
#ifndef EMBER_TOOLS_NPY_H
#define EMBER_TOOLS_NPY_H

#include <stddef.h>

#include "ember.h"

typedef struct npy_array {
    ember_datum_type datum_type; /* f64 files are converted to f32 on reading */
    int32_t rank;
    int64_t shape[EMBER_MAX_RANK];
    void *data;                  /* malloc'd (free with npy_free), or the caller's */
    size_t bytes;
    int in_place;                /* data is the `into` buffer of npy_read_into */
} npy_array;

/* 0 on success; otherwise -1 and a message in `error`. */
int npy_read(const char *path, npy_array *out, char *error, size_t error_size);
/* npy_read, but an array of exactly `into`'s datum type and shape is read straight into
 * into->data (out->in_place set, nothing allocated); any other into a new buffer. `into`
 * may be NULL. */
int npy_read_into(const char *path, const ember_tensor *into, npy_array *out, char *error,
                  size_t error_size);
int npy_write(const char *path, const ember_tensor *tensor, char *error, size_t error_size);
void npy_free(npy_array *array);

#endif /* EMBER_TOOLS_NPY_H */
