/*
 * csrc/plan/nnef_arena.c — the memory of an NNEF document: every AST node and string of
 * a parsed (and then flattened) document lives in one arena, freed at once.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

enum { ARENA_BLOCK = 64 * 1024 };

typedef struct arena_block {
    struct arena_block *next;
    size_t used, capacity;
    max_align_t data[]; /* max_align_t elements keep every allocation aligned */
} arena_block;

struct ember_nnef_arena {
    arena_block *head;
};

struct ember_nnef_arena *ember_nnef_arena_new(void) {
    return calloc(1, sizeof(struct ember_nnef_arena));
}

/* Zeroed, aligned memory that lives until the arena is freed; NULL when out of memory. */
void *ember_nnef_arena_alloc(struct ember_nnef_arena *arena, size_t size) {
    const size_t align = sizeof(max_align_t);
    if (size > SIZE_MAX - align)
        return NULL;
    size = (size + align - 1) / align * align;
    arena_block *block = arena->head;
    if (!block || block->capacity - block->used < size) {
        size_t capacity = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        if (capacity > SIZE_MAX - sizeof *block)
            return NULL;
        block = calloc(1, sizeof *block + capacity);
        if (!block)
            return NULL;
        block->capacity = capacity;
        block->next = arena->head;
        arena->head = block;
    }
    void *memory = (char *)block->data + block->used;
    block->used += size;
    return memory;
}

void ember_nnef_arena_free(struct ember_nnef_arena *arena) {
    if (!arena)
        return;
    for (arena_block *block = arena->head, *next; block; block = next) {
        next = block->next;
        free(block);
    }
    free(arena);
}


char *ember_nnef_arena_strdup(struct ember_nnef_arena *arena, const char *text) {
    const size_t length = strlen(text);
    char *copy = ember_nnef_arena_alloc(arena, length + 1);
    if (copy)
        memcpy(copy, text, length); /* arena memory is zeroed: already terminated */
    return copy;
}
