/*
 * ember-run --profile N: the nodes sorted by time, descending — time per run, share of
 * the total, GFLOP/s, op, the form it was prepared in ("-": its only one), name, output
 * shape — then the time per op kind, and under an op of several forms, per form.
 */
#include "tools/profile_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_total {
    const char *key; /* the op, or within an op the form */
    int nodes;
    double seconds;
} op_total;

static int by_time(const void *a, const void *b)
{
    const double x = ((const ember_node_profile *)a)->seconds;
    const double y = ((const ember_node_profile *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int op_by_time(const void *a, const void *b)
{
    const double x = ((const op_total *)a)->seconds, y = ((const op_total *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void print_nodes(const ember_node_profile *nodes, size_t count, double total)
{
    printf("%4s %10s %6s %8s  %-20s %-22s %s\n", "#", "us/run", "%", "GFLOP/s", "op", "form",
           "node [shape]");
    for (size_t i = 0; i < count; i++) {
        const ember_node_profile *n = &nodes[i];
        char shape[160] = "";
        for (int d = 0; d < n->rank && strlen(shape) < sizeof shape - 24; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld",
                     d ? "," : "", (long long)n->shape[d]);
        const double gflops = n->seconds > 0 ? n->flops / n->seconds * 1e-9 : 0.0;
        printf("%4zu %10.2f %6.2f %8.2f  %-20s %-22s %s [%s]\n", i + 1, n->seconds * 1e6,
               total > 0 ? 100.0 * n->seconds / total : 0.0, gflops, n->op,
               n->form[0] ? n->form : "-", n->name, shape);
    }
}

/* Totals per op kind, or with `op`, per form of that op's nodes, by time; `totals` has
 * room for `count` entries. The number of totals. */
static size_t totals_of(const ember_node_profile *nodes, size_t count, const char *op,
                        op_total *totals)
{
    size_t kinds = 0;
    for (size_t i = 0; i < count; i++) {
        if (op != NULL && strcmp(nodes[i].op, op) != 0)
            continue;
        const char *key = op != NULL ? nodes[i].form : nodes[i].op;
        size_t k = 0;
        while (k < kinds && strcmp(totals[k].key, key) != 0)
            k++;
        if (k == kinds)
            totals[kinds++] = (op_total){key, 0, 0.0};
        totals[k].nodes++;
        totals[k].seconds += nodes[i].seconds;
    }
    qsort(totals, kinds, sizeof *totals, op_by_time);
    return kinds;
}

static void print_total(const char *indent, const op_total *t, double total)
{
    printf("%s%-*s %6d %10.2f %6.2f\n", indent, (int)(24 - strlen(indent)), t->key, t->nodes,
           t->seconds * 1e6, total > 0 ? 100.0 * t->seconds / total : 0.0);
}

/* The op kinds, each with its forms under it when its nodes were prepared in any. */
static void print_ops(const ember_node_profile *nodes, size_t count, double total,
                      op_total *ops, op_total *forms)
{
    printf("\n%-24s %6s %10s %6s\n", "op", "nodes", "us/run", "%");
    const size_t kinds = totals_of(nodes, count, NULL, ops);
    for (size_t k = 0; k < kinds; k++) {
        print_total("", &ops[k], total);
        const size_t n = totals_of(nodes, count, ops[k].key, forms);
        const int one_form = n == 1 && forms[0].key[0] == '\0'; /* "": the op's only one */
        for (size_t f = 0; f < n && !one_form; f++)
            print_total("  ", &forms[f], total);
    }
}

int ember_run_profile(ember_runnable *run, size_t n_inputs, const ember_tensor *inputs,
                      int runs)
{
    ember_profile *profile = NULL;
    if (ember_runnable_profile(run, n_inputs, inputs, runs, &profile) != EMBER_OK) {
        fprintf(stderr, "ember-run: profile: %s\n", ember_last_error());
        return 1;
    }
    const size_t count = ember_profile_node_count(profile);
    ember_node_profile *nodes = calloc(count + 1, sizeof *nodes);
    op_total *ops = calloc(2 * (count + 1), sizeof *ops); /* the kinds, then one's forms */
    if (nodes == NULL || ops == NULL) {
        fprintf(stderr, "ember-run: out of memory\n");
        free(nodes);
        free(ops);
        ember_profile_free(profile);
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        ember_profile_node(profile, i, &nodes[i]);
    const double total = ember_profile_seconds(profile);
    qsort(nodes, count, sizeof *nodes, by_time);
    printf("profile: %d runs, %.3f ms per run in %zu nodes\n", runs, total * 1e3, count);
    print_nodes(nodes, count, total);
    print_ops(nodes, count, total, ops, ops + count + 1);
    free(nodes);
    free(ops);
    ember_profile_free(profile);
    return 0;
}
