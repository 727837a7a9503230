/* Importer of msr-fiddle/dnn-partitioning splits (human-experts/ files and
 * the output of their tools) as placements of an imported graph. A split
 * lists node ids per CPU and per accelerator; nodes it leaves out, such as
 * the backward nodes of a training graph given an inference split, go where
 * the listed nodes of their colorClass are (docs/import.md). */
#include "dplace/import.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_util.h"

enum { LIST_NONE = 0, LIST_CPUS, LIST_FPGAS };

/* Where the split put each op: device, and which list entry said so. */
typedef struct split_state {
    const char *what;
    const dp_import_msr *imp;
    int32_t *dev;       /* [n_ops] device index, -1 unplaced */
    uint8_t *list;      /* [n_ops] LIST_* of the entry that named the op */
    int32_t *entry;     /* [n_ops] index of that entry in its list */
    int32_t n_unknown;  /* ids the graph lacks */
    char first_unknown[200];
    int32_t n_listed;
} split_state;

static const char *list_name(uint8_t list) { return list == LIST_CPUS ? "cpus" : "fpgas"; }

/* "node 12 \"name\"" for messages. */
static void node_label(const dp_import_msr *imp, int32_t op, char *buf, size_t size) {
    snprintf(buf, size, "node %lld \"%.80s\"", (long long)imp->node_id[op], imp->graph->ops[op].name);
}

/* Reads one list ("cpus" or "fpgas") of the split. */
static dp_status read_list(split_state *s, const json_t *root, uint8_t list, dp_error *err) {
    const char *key = list_name(list);
    const json_t *arr = NULL;
    dp_status st = dp_json_get_array(root, key, 1, &arr, s->what, err);
    if (st) return st;
    const dp_devices *ds = s->imp->devices;
    int32_t n_gpus = ds->kind_count[DP_DEVKIND_GPU];
    int32_t host = dp_devices_nth(ds, DP_DEVKIND_CPU, 0);
    for (size_t k = 0; k < json_array_size(arr); k++) {
        const json_t *ent = json_array_get(arr, k);
        char ctx[600];
        snprintf(ctx, sizeof ctx, "%s: %s[%zu]", s->what, key, k);
        if (!json_is_object(ent))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: must be an object with \"nodes\", got %s", ctx,
                                dp_json_type_name(ent));
        const json_t *nodes = NULL;
        if ((st = dp_json_get_array(ent, "nodes", 1, &nodes, ctx, err))) return st;
        size_t nn = json_array_size(nodes);
        if (nn == 0) continue;
        if (list == LIST_FPGAS && (int64_t)k >= n_gpus)
            return dp_error_set(err, DP_STATUS_INVALID,
                                "%s: puts %zu node%s on accelerator %zu, but %s has maxFPGAs %d: the split needs "
                                "more accelerators than this graph's machine has",
                                ctx, nn, nn == 1 ? "" : "s", k, s->imp->source, n_gpus);
        int32_t d = list == LIST_CPUS ? host : dp_devices_nth(ds, DP_DEVKIND_GPU, (int32_t)k);
        for (size_t j = 0; j < nn; j++) {
            char item[640], what[32];
            snprintf(item, sizeof item, "%s.nodes[%zu]", ctx, j);
            snprintf(what, sizeof what, "the node id");
            int64_t id = 0;
            if ((st = dp_json_to_int(json_array_get(nodes, j), &id, INT64_MIN + 1, INT64_MAX, item, what, err)))
                return st;
            int32_t op = dp_import_msr_find_node(s->imp, id);
            if (op < 0) {
                if (!s->n_unknown++)
                    snprintf(s->first_unknown, sizeof s->first_unknown, "%s[%zu].nodes[%zu]: node %lld", key, k, j,
                             (long long)id);
                continue;
            }
            if (s->dev[op] >= 0) {
                char lab[128];
                node_label(s->imp, op, lab, sizeof lab);
                return dp_error_set(err, DP_STATUS_INVALID, "%s: %s is also placed by %s[%d]", item, lab,
                                    list_name(s->list[op]), s->entry[op]);
            }
            s->dev[op] = d;
            s->list[op] = list;
            s->entry[op] = (int32_t)k;
            s->n_listed++;
        }
    }
    return DP_STATUS_OK;
}

/* Checks the listed nodes keep each colorClass together, then places the
 * unlisted nodes with their colorClass. group_dev/group_op are indexed by the
 * graph's colocation group (coloc_group). */
static dp_status infer(split_state *s, int32_t *group_dev, int32_t *group_op, dp_import_split_info *info,
                       dp_error *err) {
    const dp_import_msr *imp = s->imp;
    const dp_graph *g = imp->graph;
    int32_t n = g->n_ops;
    for (int32_t c = 0; c < g->n_colocate; c++) group_dev[c] = group_op[c] = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = g->coloc_group[i];
        if (c < 0 || s->dev[i] < 0) continue;
        if (group_dev[c] < 0) {
            group_dev[c] = s->dev[i];
            group_op[c] = i;
        } else if (group_dev[c] != s->dev[i]) {
            int32_t j = group_op[c];
            char a[128], b[128];
            node_label(imp, j, a, sizeof a);
            node_label(imp, i, b, sizeof b);
            return dp_error_set(err, DP_STATUS_INVALID,
                                "%s: colorClass %lld is split across devices: %s is in %s[%d] and %s in %s[%d] (the "
                                "nodes of one colorClass must share a device)",
                                s->what, (long long)imp->color_class[i], a, list_name(s->list[j]), s->entry[j], b,
                                list_name(s->list[i]), s->entry[i]);
        }
    }
    int32_t n_left = 0, first = -1;
    for (int32_t i = 0; i < n; i++) {
        if (s->dev[i] >= 0) continue;
        int32_t c = g->coloc_group[i];
        if (c >= 0 && group_dev[c] >= 0) {
            s->dev[i] = group_dev[c];
            info->n_inferred++;
        } else if (!n_left++) {
            first = i;
        }
    }
    if (n_left) {
        char lab[128];
        node_label(imp, first, lab, sizeof lab);
        if (imp->has_color[first])
            return dp_error_set(err, DP_STATUS_INVALID,
                                "%s: %s is in no entry of the split, nor is any other node of its colorClass %lld "
                                "(%d of the %d nodes of %s are left unplaced): the split does not cover this graph",
                                s->what, lab, (long long)imp->color_class[first], n_left, n, imp->source);
        return dp_error_set(err, DP_STATUS_INVALID,
                            "%s: %s is in no entry of the split and has no colorClass to place it by (%d of the %d "
                            "nodes of %s are left unplaced): the split does not cover this graph",
                            s->what, lab, n_left, n, imp->source);
    }
    return DP_STATUS_OK;
}

static dp_status read_split(const json_t *root, const char *what, const dp_import_msr *imp, int32_t *placement,
                            dp_import_split_info *info, dp_error *err) {
    if (!json_is_object(root))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: expected a JSON object at the top, got %s", what,
                            dp_json_type_name(root));
    if (json_object_get(root, "nodes") && !json_object_get(root, "fpgas"))
        return dp_error_set(err, DP_STATUS_PARSE,
                            "%s: missing field \"fpgas\"; this looks like a graph (nodes/edges), not a split", what);
    const dp_graph *g = imp->graph;
    int32_t n = g->n_ops, ng = g->n_colocate;
    assert(g->finalized);
    split_state s;
    memset(&s, 0, sizeof s);
    s.what = what;
    s.imp = imp;
    s.dev = malloc((size_t)n * sizeof(int32_t));
    s.list = calloc((size_t)n, 1);
    s.entry = malloc((size_t)n * sizeof(int32_t));
    int32_t *group_dev = malloc(((size_t)ng + 1) * sizeof(int32_t));
    int32_t *group_op = malloc(((size_t)ng + 1) * sizeof(int32_t));
    dp_status st = DP_STATUS_OK;
    if (!s.dev || !s.list || !s.entry || !group_dev || !group_op) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", what);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) s.dev[i] = s.entry[i] = -1;
    if ((st = read_list(&s, root, LIST_CPUS, err)) || (st = read_list(&s, root, LIST_FPGAS, err))) goto done;
    if (s.n_unknown) {
        st = dp_error_set(err, DP_STATUS_INVALID,
                          "%s: %s is not in %s (node ids missing there: %d of the split's %d): the split does not "
                          "belong to this graph",
                          what, s.first_unknown, imp->source, s.n_unknown, s.n_unknown + s.n_listed);
        goto done;
    }
    dp_import_split_info local;
    memset(&local, 0, sizeof local);
    local.n_listed = s.n_listed;
    if ((st = infer(&s, group_dev, group_op, &local, err))) goto done;
    int used[DP_MAX_DEVICES] = {0};
    for (int32_t i = 0; i < n; i++) {
        placement[i] = s.dev[i];
        used[s.dev[i]] = 1;
        if (imp->devices->devices[s.dev[i]].kind == DP_DEVKIND_CPU) local.n_on_cpu++;
    }
    for (int32_t d = 0; d < imp->devices->n_devices; d++)
        if (used[d] && imp->devices->devices[d].kind == DP_DEVKIND_GPU) local.n_gpus++;
    if (info) *info = local;
done:
    free(s.dev);
    free(s.list);
    free(s.entry);
    free(group_dev);
    free(group_op);
    return st;
}

dp_status dp_import_msr_read_split_string(const char *text, const char *what, const dp_import_msr *imp,
                                          int32_t *placement, dp_import_split_info *info, dp_error *err) {
    json_t *root = dp_json_load_string(text, what, err);
    if (!root) return err ? err->status : DP_STATUS_PARSE;
    dp_status st = read_split(root, what, imp, placement, info, err);
    json_decref(root);
    return st;
}

dp_status dp_import_msr_read_split(const char *path, const dp_import_msr *imp, int32_t *placement,
                                   dp_import_split_info *info, dp_error *err) {
    json_t *root = dp_json_load_file(path, err);
    if (!root) return err ? err->status : DP_STATUS_PARSE;
    dp_status st = read_split(root, path, imp, placement, info, err);
    json_decref(root);
    return st;
}
