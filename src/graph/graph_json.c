/* dplace-graph v1: JSON reader and writer (see docs/formats.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_util.h"
#include "common/util.h"
#include "dplace/graph.h"

static dp_status prefix_error(dp_error *err, const char *what) { return dp_error_prefix(err, what); }

static dp_status read_outputs(dp_graph *g, int32_t id, const json_t *arr, const char *ctx, const char *what,
                              dp_error *err) {
    size_t k;
    const json_t *o;
    json_array_foreach(arr, k, o) {
        char octx[600];
        snprintf(octx, sizeof octx, "%s: output %zu", ctx, k);
        if (!json_is_object(o))
            return dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", octx, dp_json_type_name(o));
        const json_t *bytes = json_object_get(o, "bytes");
        const json_t *shape = json_object_get(o, "shape");
        dp_status st;
        if (bytes && !shape) {
            int64_t b = 0;
            if ((st = dp_json_get_int(o, "bytes", 1, &b, 0, INT64_MAX, octx, err))) return st;
            if ((st = dp_graph_add_output_bytes(g, id, (uint64_t)b, err))) return prefix_error(err, what);
            continue;
        }
        if (!shape)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: needs \"shape\" and \"dtype\", or \"bytes\"", octx);
        if (!json_is_array(shape))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"shape\" must be an array, got %s", octx,
                                dp_json_type_name(shape));
        const char *dtname = NULL;
        if ((st = dp_json_get_string(o, "dtype", 1, &dtname, octx, err))) return st;
        dp_dtype dt = dp_dtype_from_name(dtname);
        if (dt == DP_DTYPE_NONE)
            return dp_error_set(err, DP_STATUS_PARSE,
                                "%s: unknown dtype \"%s\" (known: float16, bfloat16, float32, float64, int8..int64, "
                                "uint8..uint64, bool, complex64, complex128)",
                                octx, dtname);
        size_t rank = json_array_size(shape);
        if (rank > 64) return dp_error_set(err, DP_STATUS_PARSE, "%s: shape has %zu dimensions (at most 64)", octx, rank);
        int64_t dims[64];
        for (size_t d = 0; d < rank; d++) {
            char dwhat[48];
            snprintf(dwhat, sizeof dwhat, "shape dimension %zu", d);
            if ((st = dp_json_to_int(json_array_get(shape, d), &dims[d], 0, INT64_MAX, octx, dwhat, err))) return st;
        }
        if ((st = dp_graph_add_output_shape(g, id, dt, dims, (int32_t)rank, err))) return prefix_error(err, what);
        if (bytes) { /* both given: they must agree */
            int64_t b = 0;
            if ((st = dp_json_get_int(o, "bytes", 1, &b, 0, INT64_MAX, octx, err))) return st;
            if ((uint64_t)b != g->outputs[g->n_outputs - 1].bytes)
                return dp_error_set(err, DP_STATUS_PARSE, "%s: \"bytes\" is %lld but shape and dtype give %llu", octx,
                                    (long long)b, (unsigned long long)g->outputs[g->n_outputs - 1].bytes);
        }
    }
    return DP_STATUS_OK;
}

static dp_status read_op(dp_graph *g, size_t i, const json_t *jo, const char *what, dp_error *err) {
    char ctx[512];
    snprintf(ctx, sizeof ctx, "%s: op %zu", what, i);
    if (!json_is_object(jo))
        return dp_error_set(err, DP_STATUS_PARSE, "%s must be an object, got %s", ctx, dp_json_type_name(jo));
    const char *name = NULL, *type = NULL, *scope = NULL, *coloc = NULL, *device = NULL;
    dp_status st;
    if ((st = dp_json_get_string(jo, "name", 1, &name, ctx, err))) return st;
    if (!*name) return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"name\" is empty", ctx);
    snprintf(ctx, sizeof ctx, "%s: op %zu \"%.200s\"", what, i, name);
    if ((st = dp_json_get_string(jo, "type", 1, &type, ctx, err))) return st;
    if ((st = dp_json_get_string(jo, "scope", 0, &scope, ctx, err))) return st;
    if ((st = dp_json_get_string(jo, "colocate", 0, &coloc, ctx, err))) return st;
    if ((st = dp_json_get_string(jo, "device", 0, &device, ctx, err))) return st;
    dp_devcon con = {DP_DEVCON_NONE, -1};
    if (device && dp_devcon_parse(device, &con) != 0)
        return dp_error_set(err, DP_STATUS_PARSE,
                            "%s: unknown device constraint \"%s\" (expected cpu, gpu, cpu:N or gpu:N)", ctx, device);
    int32_t id = dp_graph_add_op(g, name, type, scope, coloc, err);
    if (id < 0) return prefix_error(err, what);
    dp_op *op = &g->ops[id];
    op->device = con;
    double flops = 0;
    int64_t pb = 0, tb = 0;
    if ((st = dp_json_get_number(jo, "flops", 0, &flops, 0, ctx, err))) return st;
    if ((st = dp_json_get_int(jo, "param_bytes", 0, &pb, 0, INT64_MAX, ctx, err))) return st;
    if ((st = dp_json_get_int(jo, "temp_bytes", 0, &tb, 0, INT64_MAX, ctx, err))) return st;
    op->flops = flops;
    op->param_bytes = (uint64_t)pb;
    op->temp_bytes = (uint64_t)tb;
    int fused = 0;
    if ((st = dp_json_get_bool(jo, "fused", 0, &fused, ctx, err))) return st;
    op->fused = fused;

    const json_t *inputs = NULL, *outputs = NULL;
    if ((st = dp_json_get_array(jo, "inputs", 0, &inputs, ctx, err))) return st;
    if ((st = dp_json_get_array(jo, "outputs", 0, &outputs, ctx, err))) return st;
    if (inputs) {
        size_t k;
        const json_t *in;
        json_array_foreach(inputs, k, in) {
            int64_t p = 0, slot = 0;
            char w[48];
            snprintf(w, sizeof w, "input %zu", k);
            if (json_is_array(in)) {
                if (json_array_size(in) != 2)
                    return dp_error_set(err, DP_STATUS_PARSE,
                                        "%s: input %zu must be [producer_index, output_slot], got an array of %zu", ctx,
                                        k, json_array_size(in));
                if ((st = dp_json_to_int(json_array_get(in, 0), &p, 0, INT32_MAX, ctx, w, err))) return st;
                snprintf(w, sizeof w, "input %zu slot", k);
                if ((st = dp_json_to_int(json_array_get(in, 1), &slot, 0, INT32_MAX, ctx, w, err))) return st;
            } else if ((st = dp_json_to_int(in, &p, 0, INT32_MAX, ctx, w, err))) {
                return st;
            }
            if ((st = dp_graph_add_input(g, id, (int32_t)p, (int32_t)slot, err))) return prefix_error(err, what);
        }
    }
    if (outputs && (st = read_outputs(g, id, outputs, ctx, what, err))) return st;

    const json_t *cost = json_object_get(jo, "cost");
    if (cost) {
        if (!json_is_object(cost))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"cost\" must be an object, got %s", ctx,
                                dp_json_type_name(cost));
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)cost, key, v) {
            double sec = 0;
            char cctx[600];
            snprintf(cctx, sizeof cctx, "%s: cost", ctx);
            if ((st = dp_json_get_number(cost, key, 1, &sec, 0, cctx, err))) return st;
            if ((st = dp_graph_add_cost(g, id, key, sec, err))) return prefix_error(err, what);
        }
    }
    return DP_STATUS_OK;
}

/* Reads the graph's "tf32" object ({"matmul": false, "conv": true}; each
 * field optional, false when absent) into DP_GRAPH_TF32_* bits. */
static dp_status read_tf32(const json_t *root, unsigned *out, const char *what, dp_error *err) {
    *out = 0;
    const json_t *jt = json_object_get(root, "tf32");
    if (!jt) return DP_STATUS_OK;
    if (!json_is_object(jt))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"tf32\" must be an object, got %s", what,
                            dp_json_type_name(jt));
    const char *key;
    const json_t *jv;
    json_object_foreach((json_t *)jt, key, jv) {
        unsigned bit = !strcmp(key, "matmul") ? DP_GRAPH_TF32_MATMUL : !strcmp(key, "conv") ? DP_GRAPH_TF32_CONV : 0;
        if (!bit)
            return dp_error_set(err, DP_STATUS_PARSE, "%s: tf32: unknown field \"%.64s\" (expected \"matmul\" or "
                                "\"conv\")", what, key);
        if (!json_is_boolean(jv))
            return dp_error_set(err, DP_STATUS_PARSE, "%s: tf32: field \"%s\" must be true or false, got %s", what,
                                key, dp_json_type_name(jv));
        if (json_is_true(jv)) *out |= bit;
    }
    return DP_STATUS_OK;
}

/* Reads the graph's "executor" ("tf" or "torch"; TF when absent). */
static dp_status read_executor(const json_t *root, dp_executor *out, const char *what, dp_error *err) {
    const char *name = NULL;
    *out = DP_EXECUTOR_TF;
    dp_status st = dp_json_get_string(root, "executor", 0, &name, what, err);
    if (st) return st;
    if (!name) return DP_STATUS_OK;
    int e = dp_executor_from_name(name);
    if (e < 0)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: field \"executor\" must be \"tf\" or \"torch\", got \"%.64s\"",
                            what, name);
    *out = (dp_executor)e;
    return DP_STATUS_OK;
}

static dp_graph *graph_from_json(json_t *root, const char *what, dp_error *err) {
    if (dp_json_check_header(root, what, "dplace-graph", 1, err)) return NULL;
    const char *name = NULL;
    if (dp_json_get_string(root, "name", 0, &name, what, err)) return NULL;
    if (dp_graph_check_name(name, "graph name", err)) {
        dp_error_prefix(err, what);
        return NULL;
    }
    const json_t *ops = NULL;
    unsigned tf32 = 0;
    dp_executor executor = DP_EXECUTOR_TF;
    if (dp_json_get_array(root, "ops", 1, &ops, what, err) || read_tf32(root, &tf32, what, err) ||
        read_executor(root, &executor, what, err))
        return NULL;
    dp_graph *g = dp_graph_init(name ? name : "");
    if (!g) {
        dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    g->tf32 = tf32;
    g->executor = executor;
    size_t i;
    const json_t *jo;
    json_array_foreach(ops, i, jo) {
        if (read_op(g, i, jo, what, err)) {
            dp_graph_free(g);
            return NULL;
        }
    }
    if (dp_graph_finalize(g, what, err)) {
        dp_graph_free(g);
        return NULL;
    }
    return g;
}

dp_graph *dp_graph_read_file(const char *path, dp_error *err) {
    json_t *root = dp_json_load_file(path, err);
    if (!root) return NULL;
    dp_graph *g = graph_from_json(root, path, err);
    json_decref(root);
    return g;
}

dp_graph *dp_graph_read_string(const char *text, const char *what, dp_error *err) {
    json_t *root = dp_json_load_string(text, what, err);
    if (!root) return NULL;
    dp_graph *g = graph_from_json(root, what, err);
    json_decref(root);
    return g;
}

/* One op as a compact JSON object, fields in the documented order. */
static json_t *op_to_json(const dp_graph *g, int32_t i) {
    const dp_op *o = &g->ops[i];
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(o->name));
    json_object_set_new(j, "type", json_string(dp_graph_str(g, o->type)));
    json_t *ins = json_array();
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        if (in.slot == 0) json_array_append_new(ins, json_integer(in.op));
        else json_array_append_new(ins, json_pack("[ii]", in.op, in.slot));
    }
    json_object_set_new(j, "inputs", ins);
    json_t *outs = json_array();
    for (int32_t k = 0; k < o->n_outputs; k++) {
        const dp_output *out = &g->outputs[o->outputs_at + k];
        json_t *jo = json_object();
        if (out->dtype == DP_DTYPE_NONE) {
            json_object_set_new(jo, "bytes", json_integer((json_int_t)out->bytes));
        } else {
            json_t *shape = json_array();
            for (int32_t d = 0; d < out->rank; d++) json_array_append_new(shape, json_integer(g->dims[out->dims_at + d]));
            json_object_set_new(jo, "shape", shape);
            json_object_set_new(jo, "dtype", json_string(dp_dtype_name(out->dtype)));
        }
        json_array_append_new(outs, jo);
    }
    json_object_set_new(j, "outputs", outs);
    if (o->flops != 0) json_object_set_new(j, "flops", json_real(o->flops));
    if (o->param_bytes) json_object_set_new(j, "param_bytes", json_integer((json_int_t)o->param_bytes));
    if (o->temp_bytes) json_object_set_new(j, "temp_bytes", json_integer((json_int_t)o->temp_bytes));
    if (o->fused) json_object_set_new(j, "fused", json_true());
    if (o->n_costs) {
        json_t *c = json_object();
        for (int32_t k = 0; k < o->n_costs; k++) {
            const dp_cost *cc = &g->costs[o->costs_at + k];
            json_object_set_new(c, dp_graph_str(g, cc->key), json_real(cc->seconds));
        }
        json_object_set_new(j, "cost", c);
    }
    if (o->device.kind != DP_DEVCON_NONE) {
        char buf[32];
        dp_devcon_format(o->device, buf, sizeof buf);
        json_object_set_new(j, "device", json_string(buf));
    }
    if (o->colocate >= 0) json_object_set_new(j, "colocate", json_string(dp_graph_str(g, o->colocate)));
    if (o->scope >= 0) json_object_set_new(j, "scope", json_string(dp_graph_str(g, o->scope)));
    return j;
}

dp_status dp_graph_write_file(const dp_graph *g, const char *path, dp_error *err) {
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    json_t *name = json_string(g->name ? g->name : "");
    char *name_text = json_dumps(name, JSON_ENCODE_ANY);
    json_decref(name);
    fprintf(af.f, "{\"format\": \"dplace-graph\", \"version\": 1, \"name\": %s,\n", name_text ? name_text : "\"\"");
    free(name_text);
    /* written only when some product may use TF32, so that a graph without
     * the field is written as before */
    if (g->tf32)
        fprintf(af.f, " \"tf32\": {\"matmul\": %s, \"conv\": %s},\n", g->tf32 & DP_GRAPH_TF32_MATMUL ? "true" : "false",
                g->tf32 & DP_GRAPH_TF32_CONV ? "true" : "false");
    if (g->executor != DP_EXECUTOR_TF) fprintf(af.f, " \"executor\": \"%s\",\n", dp_executor_name(g->executor));
    fputs(" \"ops\": [\n", af.f);
    for (int32_t i = 0; i < g->n_ops; i++) {
        json_t *j = op_to_json(g, i);
        fputs("  ", af.f);
        if (!j || json_dumpf(j, af.f, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0) {
            json_decref(j);
            dp_atomic_abort(&af);
            return dp_error_set(err, DP_STATUS_IO, "%s: cannot write op %d", path, i);
        }
        json_decref(j);
        fputs(i + 1 < g->n_ops ? ",\n" : "\n", af.f);
    }
    fputs(" ]}\n", af.f);
    return dp_atomic_commit(&af, err);
}
