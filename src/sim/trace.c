/* Chrome trace-event export of a workspace's last traced simulation. */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "sim/sim_internal.h"

/* Writes s as a JSON string literal (quotes and escapes included). */
static void put_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void put_meta(FILE *f, const char *what, int pid, int tid, const char *name, int *first) {
    fprintf(f, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", *first ? "" : ",", what,
            pid, tid);
    put_json_string(f, name);
    fputs("}}", f);
    *first = 0;
}

dp_status dp_trace_write_ws(const dp_sim *s, const dp_sim_workspace *w, const char *path, dp_error *err) {
    if (w->sim != s)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: the simulator workspace was made for another context", path);
    if (!w->have_trace)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: no trace: the last simulation did not record one", path);
    const dp_graph *g = s->g;
    const dp_devices *ds = s->ds;
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (st) return st;
    FILE *f = af.f;
    int first = 1;
    char buf[256];
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"dplace\",\"graph\":", f);
    put_json_string(f, g->name);
    fputs(",\"devices\":", f);
    put_json_string(f, ds->name);
    fputs("},\n\"traceEvents\":[", f);
    for (int32_t d = 0; d < s->D; d++) {
        const dp_device *dev = &ds->devices[d];
        snprintf(buf, sizeof buf, "%s (%s)", dev->name, dev->model);
        put_meta(f, "process_name", d, 0, buf, &first);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}}", d, d);
        for (int32_t k = 0; k < dev->streams; k++) {
            snprintf(buf, sizeof buf, "stream %d", k);
            put_meta(f, "thread_name", d, k, buf, &first);
        }
    }
    int32_t link_pid = s->D;
    if (s->L) {
        put_meta(f, "process_name", link_pid, 0, "links", &first);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
                link_pid, link_pid);
        for (int32_t l = 0; l < s->L; l++) {
            snprintf(buf, sizeof buf, "%s -> %s", ds->devices[ds->links[l].from].name, ds->devices[ds->links[l].to].name);
            put_meta(f, "thread_name", link_pid, l, buf, &first);
        }
    }
    for (int32_t i = 0; i < s->n; i++) {
        const dp_op *o = &g->ops[i];
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":", w->tr_place[i],
                w->tr_stream[i], w->tr_start[i] * 1e6, (w->tr_end[i] - w->tr_start[i]) * 1e6);
        put_json_string(f, o->name);
        fputs(",\"cat\":", f);
        put_json_string(f, dp_graph_str(g, o->type));
        fprintf(f, ",\"args\":{\"op\":%d,\"flops\":%.6g", i, o->flops);
        if (o->scope >= 0) {
            fputs(",\"scope\":", f);
            put_json_string(f, dp_graph_str(g, o->scope));
        }
        fputs("}}", f);
    }
    for (int32_t h = 0; h < w->n_hops; h++) {
        int32_t x = w->hop_x[h], l = w->hop_link[h];
        int32_t t = w->x[x].tensor;
        int32_t op = s->tensors[t].op;
        snprintf(buf, sizeof buf, "%.200s:%lld", g->ops[op].name, (long long)(t - g->tensor_at[op]));
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":", link_pid, l,
                w->hop_start[h] * 1e6, (w->hop_end[h] - w->hop_start[h]) * 1e6);
        put_json_string(f, buf);
        fprintf(f, ",\"cat\":\"transfer\",\"args\":{\"bytes\":%llu,\"to\":",
                (unsigned long long)s->tensors[t].bytes);
        put_json_string(f, ds->devices[w->x[x].dst].name);
        fputs("}}", f);
    }
    fputs("\n]}\n", f);
    return dp_atomic_commit(&af, err);
}

dp_status dp_trace_write(const dp_sim *s, const char *path, dp_error *err) {
    return dp_trace_write_ws(s, s->own, path, err);
}
