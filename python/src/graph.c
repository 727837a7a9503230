/* dplace.Graph: one training step's graph (include/dplace/graph.h), built
 * by the zoo or read from a dplace-graph file or text; read-only. Its ops'
 * names, types and scopes, the edge list and per-op features come out as
 * lists and numpy arrays. */
#include "dplace_py.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dplace/placement.h"
#include "dplace/zoo.h"

/* A new Graph owning g (freed on failure). */
static PyObject *graph_wrap(dp_graph *g, const char *zoo_name, int32_t batch) {
    dp_py_graph *self = PyObject_New(dp_py_graph, &dp_py_graph_type);
    if (!self) {
        dp_graph_free(g);
        return NULL;
    }
    self->g = g, self->zoo_name = NULL, self->batch = batch;
    if (zoo_name && !(self->zoo_name = strdup(zoo_name))) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void graph_dealloc(dp_py_graph *self) {
    dp_graph_free(self->g);
    free(self->zoo_name);
    PyObject_Free(self);
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyErr_SetString(PyExc_TypeError,
                    "dplace.Graph is made by Graph.from_zoo(name), Graph.from_file(path) or Graph.from_json(text)");
    return NULL;
}

static PyObject *graph_from_zoo(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"name", "batch", NULL};
    const char *name;
    PyObject *batch_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|O:Graph.from_zoo", kw, &name, &batch_obj)) return NULL;
    long batch = 0;
    if (batch_obj != Py_None) {
        if (!PyLong_Check(batch_obj) || PyBool_Check(batch_obj)) {
            PyErr_Format(PyExc_TypeError, "batch: an int or None (the model's default), not %s",
                         Py_TYPE(batch_obj)->tp_name);
            return NULL;
        }
        batch = PyLong_AsLong(batch_obj);
        if (batch == -1 && PyErr_Occurred()) return NULL;
        if (batch < 1 || batch > 1000000) {
            PyErr_Format(PyExc_ValueError, "batch: %ld, must be in 1..1000000 (None: the model's default)", batch);
            return NULL;
        }
    }
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g;
    Py_BEGIN_ALLOW_THREADS
    g = dp_zoo_build(name, (int32_t)batch, &err);
    Py_END_ALLOW_THREADS
    if (!g) return dp_py_raise(&err);
    return graph_wrap(g, name, (int32_t)batch);
}

static PyObject *graph_from_file(PyObject *cls, PyObject *arg) {
    PyObject *path = dp_py_path(arg, "Graph.from_file");
    if (!path) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g;
    Py_BEGIN_ALLOW_THREADS
    g = dp_graph_read_file(PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (!g) return dp_py_raise(&err);
    return graph_wrap(g, NULL, 0);
}

static PyObject *graph_from_json(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"text", "what", NULL};
    PyObject *text;
    const char *what = "<text>";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|s:Graph.from_json", kw, &text, &what)) return NULL;
    PyObject *b = PyUnicode_Check(text) ? PyUnicode_AsUTF8String(text) : (Py_INCREF(text), text);
    if (!b) return NULL;
    if (!PyBytes_Check(b)) {
        Py_DECREF(b);
        PyErr_Format(PyExc_TypeError, "Graph.from_json: text must be str or bytes, not %s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    if (memchr(PyBytes_AS_STRING(b), 0, (size_t)PyBytes_GET_SIZE(b))) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_ValueError, "Graph.from_json: the text holds a NUL byte");
        return NULL;
    }
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g;
    Py_BEGIN_ALLOW_THREADS
    g = dp_graph_read_string(PyBytes_AS_STRING(b), what, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (!g) return dp_py_raise(&err);
    return graph_wrap(g, NULL, 0);
}

static PyObject *graph_save(dp_py_graph *self, PyObject *arg) {
    PyObject *path = dp_py_path(arg, "Graph.save");
    if (!path) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_graph_write_file(self->g, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st) return dp_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *graph_to_json(dp_py_graph *self, PyObject *noargs) {
    char path[4096];
    if (dp_py_temp_path(path, sizeof path)) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_graph_write_file(self->g, path, &err);
    Py_END_ALLOW_THREADS
    if (st) {
        unlink(path);
        return dp_py_raise(&err);
    }
    return dp_py_take_text(path);
}

/* A zoo graph pickles as its recipe, any other as its JSON text. */
static PyObject *graph_reduce(dp_py_graph *self, PyObject *noargs) {
    PyObject *cls = (PyObject *)Py_TYPE(self);
    if (self->zoo_name && self->g->executor == DP_EXECUTOR_TF) { /* else the JSON, which names it */
        PyObject *f = PyObject_GetAttrString(cls, "from_zoo");
        if (!f) return NULL;
        return self->batch ? Py_BuildValue("(N(si))", f, self->zoo_name, (int)self->batch)
                           : Py_BuildValue("(N(sO))", f, self->zoo_name, Py_None);
    }
    PyObject *text = graph_to_json(self, NULL);
    if (!text) return NULL;
    PyObject *f = PyObject_GetAttrString(cls, "from_json");
    if (!f) {
        Py_DECREF(text);
        return NULL;
    }
    return Py_BuildValue("(N(N))", f, text);
}

/* with_executor(name) -> Graph: a copy whose steps run under that
 * executor (the graph itself is read-only: simulators made from it keep
 * its executor). */
static PyObject *graph_with_executor(dp_py_graph *self, PyObject *arg) {
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    int e = name ? dp_executor_from_name(name) : -1;
    if (e < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "Graph.with_executor: 'tf' or 'torch', not %R", arg);
        return NULL;
    }
    PyObject *recipe = graph_reduce(self, NULL);
    if (!recipe) return NULL;
    PyObject *copy = PyObject_CallObject(PyTuple_GET_ITEM(recipe, 0), PyTuple_GET_ITEM(recipe, 1));
    Py_DECREF(recipe);
    if (copy) ((dp_py_graph *)copy)->g->executor = (dp_executor)e;
    return copy;
}

static PyObject *graph_get_executor(dp_py_graph *self, void *c) {
    return PyUnicode_FromString(dp_executor_name(self->g->executor));
}

static Py_ssize_t graph_len(dp_py_graph *self) { return self->g->n_ops; }

static PyObject *graph_repr(dp_py_graph *self) {
    return PyUnicode_FromFormat("<dplace.Graph '%s': %d ops>", self->g->name ? self->g->name : "", (int)self->g->n_ops);
}

/* A list of one string per op: what 0 names, 1 types, 2 scopes, 3 constraints. */
static PyObject *op_strings(dp_py_graph *self, int what) {
    const dp_graph *g = self->g;
    PyObject *l = PyList_New(g->n_ops);
    for (int32_t i = 0; l && i < g->n_ops; i++) {
        const dp_op *op = &g->ops[i];
        char con[32];
        const char *s = what == 0   ? op->name
                        : what == 1 ? dp_graph_str(g, op->type)
                        : what == 2 ? dp_graph_str(g, op->scope)
                                    : (dp_devcon_format(op->device, con, sizeof con), con);
        PyObject *u = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
        if (!u) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, u);
    }
    return l;
}

static PyObject *graph_get_names(dp_py_graph *self, void *c) { return op_strings(self, 0); }
static PyObject *graph_get_types(dp_py_graph *self, void *c) { return op_strings(self, 1); }
static PyObject *graph_get_scopes(dp_py_graph *self, void *c) { return op_strings(self, 2); }
static PyObject *graph_get_constraints(dp_py_graph *self, void *c) { return op_strings(self, 3); }
static PyObject *graph_get_name(dp_py_graph *self, void *c) { return PyUnicode_FromString(self->g->name ? self->g->name : ""); }
static PyObject *graph_get_n_ops(dp_py_graph *self, void *c) { return PyLong_FromLong(self->g->n_ops); }
static PyObject *graph_get_zoo_name(dp_py_graph *self, void *c) {
    if (!self->zoo_name) Py_RETURN_NONE;
    return PyUnicode_FromString(self->zoo_name);
}

static PyObject *graph_index(dp_py_graph *self, PyObject *arg) {
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Graph.index: an op name (str), not %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    int32_t i = dp_graph_find_op(self->g, name);
    if (i < 0) {
        PyErr_Format(PyExc_KeyError, "no op named \"%.200s\" in graph %s", name, self->g->name ? self->g->name : "");
        return NULL;
    }
    return PyLong_FromLong(i);
}

/* edges() -> int32 [E, 2]: (producer, consumer) of every input of every op */
static PyObject *graph_edges(dp_py_graph *self, PyObject *noargs) {
    const dp_graph *g = self->g;
    npy_intp dims[2] = {(npy_intp)g->n_inputs, 2};
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_INT32);
    if (!a) return NULL;
    int32_t *e = PyArray_DATA((PyArrayObject *)a);
    int64_t k = 0;
    for (int32_t i = 0; i < g->n_ops; i++)
        for (int32_t j = 0; j < g->ops[i].n_inputs; j++, k++)
            e[2 * k] = g->inputs[g->ops[i].inputs_at + j].op, e[2 * k + 1] = i;
    return a;
}

/* edge_bytes() -> int64 [E]: the bytes of the tensor each edge carries */
static PyObject *graph_edge_bytes(dp_py_graph *self, PyObject *noargs) {
    const dp_graph *g = self->g;
    npy_intp n = (npy_intp)g->n_inputs;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT64);
    if (!a) return NULL;
    int64_t *b = PyArray_DATA((PyArrayObject *)a);
    int64_t k = 0;
    for (int32_t i = 0; i < g->n_ops; i++)
        for (int32_t j = 0; j < g->ops[i].n_inputs; j++, k++) {
            const dp_input *in = &g->inputs[g->ops[i].inputs_at + j];
            b[k] = (int64_t)g->outputs[dp_graph_tensor(g, in->op, in->slot)].bytes;
        }
    return a;
}

/* The per-op feature columns, in order. */
static const char *const feature_names[] = {
    "flops",        "param_bytes",  "temp_bytes",  "output_bytes", "input_bytes", "n_inputs",
    "n_outputs",    "n_consumers",  "cpu_only",    "gpu_only",     "colocated",   "topo_position",
};
enum { N_FEATURES = sizeof feature_names / sizeof feature_names[0] };

/* features() -> float64 [n_ops, F]: the columns of Graph.FEATURES */
static PyObject *graph_features(dp_py_graph *self, PyObject *noargs) {
    const dp_graph *g = self->g;
    npy_intp dims[2] = {g->n_ops, N_FEATURES};
    PyObject *a = PyArray_ZEROS(2, dims, NPY_FLOAT64, 0);
    if (!a) return NULL;
    double *f = PyArray_DATA((PyArrayObject *)a);
    for (int32_t i = 0; i < g->n_ops; i++) {
        const dp_op *op = &g->ops[i];
        double *r = f + (size_t)i * N_FEATURES;
        double out = 0, in = 0, consumers = 0;
        for (int32_t s = 0; s < op->n_outputs; s++) {
            int64_t t = dp_graph_tensor(g, i, s);
            out += (double)g->outputs[t].bytes;
            consumers += (double)(g->consumers_at[t + 1] - g->consumers_at[t]);
        }
        for (int32_t j = 0; j < op->n_inputs; j++) {
            const dp_input *x = &g->inputs[op->inputs_at + j];
            in += (double)g->outputs[dp_graph_tensor(g, x->op, x->slot)].bytes;
        }
        r[0] = op->flops, r[1] = (double)op->param_bytes, r[2] = (double)op->temp_bytes, r[3] = out, r[4] = in;
        r[5] = op->n_inputs, r[6] = op->n_outputs, r[7] = consumers;
        r[8] = op->device.kind == DP_DEVCON_CPU, r[9] = op->device.kind == DP_DEVCON_GPU;
        r[10] = g->coloc_group[i] >= 0;
    }
    for (int32_t k = 0; k < g->n_ops; k++) f[(size_t)g->topo[k] * N_FEATURES + 11] = k;
    return a;
}

/* type_ids() -> (int32 [n_ops], list of type names): each op's type as an
 * index into the graph's distinct types, numbered by first appearance */
static PyObject *graph_type_ids(dp_py_graph *self, PyObject *noargs) {
    const dp_graph *g = self->g;
    int32_t n_str = dp_graph_n_strings(g);
    int32_t *id_of = malloc(sizeof(int32_t) * (size_t)(n_str + 1));
    npy_intp n = g->n_ops;
    PyObject *a = id_of ? PyArray_SimpleNew(1, &n, NPY_INT32) : PyErr_NoMemory();
    PyObject *names = a ? PyList_New(0) : NULL;
    if (!names) {
        free(id_of);
        Py_XDECREF(a);
        return NULL;
    }
    for (int32_t s = 0; s < n_str; s++) id_of[s] = -1;
    int32_t *ids = PyArray_DATA((PyArrayObject *)a);
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t t = g->ops[i].type;
        if (t < 0 || t >= n_str) t = 0; /* "" has no id of its own: share the first */
        if (id_of[t] < 0) {
            PyObject *u = PyUnicode_FromString(dp_graph_str(g, g->ops[i].type));
            if (!u || PyList_Append(names, u)) {
                Py_XDECREF(u);
                free(id_of);
                Py_DECREF(a);
                Py_DECREF(names);
                return NULL;
            }
            Py_DECREF(u);
            id_of[t] = (int32_t)PyList_GET_SIZE(names) - 1;
        }
        ids[i] = id_of[t];
    }
    free(id_of);
    return Py_BuildValue("(NN)", a, names);
}

static PyObject *graph_colocation_groups(dp_py_graph *self, PyObject *noargs) {
    return dp_py_int32_array(self->g->coloc_group, self->g->n_ops);
}

static PyObject *graph_topo_order(dp_py_graph *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"depth_first", NULL};
    int depth_first = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:Graph.topo_order", kw, &depth_first)) return NULL;
    if (!depth_first) return dp_py_int32_array(self->g->topo, self->g->n_ops);
    npy_intp n = self->g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!a) return NULL;
    dp_error err;
    dp_error_clear(&err);
    if (dp_graph_topo_depth_first(self->g, PyArray_DATA((PyArrayObject *)a), &err)) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return a;
}

static PyObject *graph_stats(dp_py_graph *self, PyObject *noargs) {
    dp_graph_stats s;
    dp_graph_get_stats(self->g, &s);
    return Py_BuildValue("{s:i,s:L,s:L,s:d,s:K,s:K,s:i,s:i}", "ops", (int)s.n_ops, "edges", (long long)s.n_edges,
                         "tensors", (long long)s.n_tensors, "flops", s.total_flops, "param_bytes",
                         (unsigned long long)s.total_param_bytes, "output_bytes",
                         (unsigned long long)s.total_output_bytes, "constrained", (int)s.n_constrained,
                         "colocation_groups", (int)s.n_colocate_groups);
}

static dp_py_devices *devices_arg(PyObject *arg, const char *what) {
    if (!PyObject_TypeCheck(arg, &dp_py_devices_type)) {
        PyErr_Format(PyExc_TypeError, "%s: a dplace.Devices, not %s", what, Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return (dp_py_devices *)arg;
}

static PyObject *graph_expert_placement(dp_py_graph *self, PyObject *arg) {
    dp_py_devices *d = devices_arg(arg, "Graph.expert_placement");
    if (!d) return NULL;
    npy_intp n = self->g->n_ops;
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!a) return NULL;
    dp_error err;
    dp_error_clear(&err);
    dp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dp_zoo_expert_placement(self->g, d->ds, PyArray_DATA((PyArrayObject *)a), &err);
    Py_END_ALLOW_THREADS
    if (st) {
        Py_DECREF(a);
        return dp_py_raise(&err);
    }
    return a;
}

/* allowed(devices) -> bool [n_ops, D]: the devices each op's constraint allows */
static PyObject *graph_allowed(dp_py_graph *self, PyObject *arg) {
    dp_py_devices *d = devices_arg(arg, "Graph.allowed");
    if (!d) return NULL;
    npy_intp dims[2] = {self->g->n_ops, d->ds->n_devices};
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_BOOL);
    if (!a) return NULL;
    npy_bool *m = PyArray_DATA((PyArrayObject *)a);
    for (int32_t i = 0; i < self->g->n_ops; i++)
        for (int32_t k = 0; k < d->ds->n_devices; k++)
            m[(size_t)i * (size_t)dims[1] + (size_t)k] = (npy_bool)dp_placement_allowed(self->g, d->ds, i, k);
    return a;
}

static PyMethodDef graph_methods[] = {
    {"from_zoo", (PyCFunction)(void (*)(void))graph_from_zoo, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Graph.from_zoo(name, batch=None) -> Graph\n\nA built-in model (dplace.zoo_models(): inception_v3, nmt4, "
     "synthetic-600, ...) at its default batch, or at batch. Raises dplace.Error for an unknown name."},
    {"from_file", (PyCFunction)graph_from_file, METH_O | METH_CLASS,
     "Graph.from_file(path) -> Graph\n\nReads a dplace-graph v1 JSON file (docs/formats.md; PyTorch exports "
     "included). Raises dplace.Error naming the file, the op and the problem."},
    {"from_json", (PyCFunction)(void (*)(void))graph_from_json, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Graph.from_json(text, what='<text>') -> Graph\n\nThe same from dplace-graph JSON text (str or bytes); "
     "what names it in errors."},
    {"save", (PyCFunction)graph_save, METH_O, "save(path)\n\nWrites the graph as dplace-graph v1 JSON, atomically."},
    {"to_json", (PyCFunction)graph_to_json, METH_NOARGS, "to_json() -> str: the graph as dplace-graph v1 JSON"},
    {"index", (PyCFunction)graph_index, METH_O, "index(name) -> int: the op's index; KeyError when absent"},
    {"edges", (PyCFunction)graph_edges, METH_NOARGS,
     "edges() -> int32 array [E, 2]\n\n(producer, consumer) for each input of each op, ops in index order and "
     "inputs in slot order; an op reading two outputs of one producer gives two rows."},
    {"edge_bytes", (PyCFunction)graph_edge_bytes, METH_NOARGS,
     "edge_bytes() -> int64 array [E]: the bytes of the tensor each row of edges() carries"},
    {"features", (PyCFunction)graph_features, METH_NOARGS,
     "features() -> float64 array [n_ops, len(Graph.FEATURES)]\n\nPer-op features, one column per name of "
     "Graph.FEATURES: flops, param_bytes, temp_bytes, output_bytes (sum of its outputs), input_bytes (sum of the "
     "tensors it reads), n_inputs, n_outputs, n_consumers (edges out), cpu_only and gpu_only (its device "
     "constraint, 0/1), colocated (in a colocation group, 0/1), topo_position (its place in topo_order())."},
    {"type_ids", (PyCFunction)graph_type_ids, METH_NOARGS,
     "type_ids() -> (int32 array [n_ops], list of str): each op's type as an index into the graph's distinct op "
     "types, numbered in order of first appearance"},
    {"colocation_groups", (PyCFunction)graph_colocation_groups, METH_NOARGS,
     "colocation_groups() -> int32 array [n_ops]: each op's colocation group (0.., in order of each group's first "
     "op), -1 for an op in none"},
    {"topo_order", (PyCFunction)(void (*)(void))graph_topo_order, METH_VARARGS | METH_KEYWORDS,
     "topo_order(depth_first=False) -> int32 array [n_ops]\n\nA topological order: the graph's (level by level), "
     "or depth first (ops next to each other mostly neighbours in the graph)."},
    {"stats", (PyCFunction)graph_stats, METH_NOARGS, "stats() -> dict: ops, edges, tensors, flops, param_bytes, "
                                                     "output_bytes, constrained, colocation_groups"},
    {"expert_placement", (PyCFunction)graph_expert_placement, METH_O,
     "expert_placement(devices) -> int32 array [n_ops]\n\nThe papers' human-expert placement of a zoo graph on "
     "devices; dplace.Error (status 'unsupported') when the graph has none."},
    {"allowed", (PyCFunction)graph_allowed, METH_O,
     "allowed(devices) -> bool array [n_ops, len(devices)]: the devices each op's constraint allows"},
    {"with_executor", (PyCFunction)graph_with_executor, METH_O,
     "with_executor(name) -> Graph\n\nA copy of the graph whose step runs under executor name: 'tf' "
     "(TensorFlow's executor) or 'torch' (PyTorch's eager mode; docs/simulator.md, \"Executors\"). Simulators, "
     "environments and jobs made from the copy use it. Raises ValueError for another name."},
    {"__reduce__", (PyCFunction)graph_reduce, METH_NOARGS, "pickling: a zoo graph by its recipe, others as JSON"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef graph_getset[] = {
    {"name", (getter)graph_get_name, NULL, "the graph's name", NULL},
    {"n_ops", (getter)graph_get_n_ops, NULL, "the number of ops (also len(graph))", NULL},
    {"names", (getter)graph_get_names, NULL, "list of the ops' names, by index", NULL},
    {"types", (getter)graph_get_types, NULL, "list of the ops' types (\"MatMul\"), by index", NULL},
    {"scopes", (getter)graph_get_scopes, NULL, "list of the ops' layer scopes (\"\" for none), by index", NULL},
    {"constraints", (getter)graph_get_constraints, NULL,
     "list of the ops' device constraints (\"\" none, \"cpu\", \"gpu\", \"gpu:1\"), by index", NULL},
    {"zoo_name", (getter)graph_get_zoo_name, NULL, "the zoo model it was built from, or None", NULL},
    {"executor", (getter)graph_get_executor, NULL,
     "how its step runs: 'tf' or 'torch' (the file's \"executor\"; with_executor makes a copy under another)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods graph_as_sequence = {.sq_length = (lenfunc)graph_len};

PyTypeObject dp_py_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dplace.Graph",
    .tp_basicsize = sizeof(dp_py_graph),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_repr = (reprfunc)graph_repr,
    .tp_as_sequence = &graph_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A training step's graph (read-only): Graph.from_zoo(name, batch=None), Graph.from_file(path) or "
              "Graph.from_json(text). len(g) is its op count; names, types, scopes and constraints are lists by op "
              "index; edges(), edge_bytes(), features(), type_ids(), colocation_groups() and topo_order() numpy "
              "arrays.",
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
    .tp_new = graph_new,
};

int dp_py_graph_ready(PyObject *m) {
    if (PyType_Ready(&dp_py_graph_type)) return -1;
    PyObject *names = PyTuple_New(N_FEATURES);
    for (int k = 0; names && k < N_FEATURES; k++) PyTuple_SET_ITEM(names, k, PyUnicode_FromString(feature_names[k]));
    if (!names || PyDict_SetItemString(dp_py_graph_type.tp_dict, "FEATURES", names)) {
        Py_XDECREF(names);
        return -1;
    }
    Py_DECREF(names);
    PyType_Modified(&dp_py_graph_type);
    return PyModule_AddObjectRef(m, "Graph", (PyObject *)&dp_py_graph_type);
}
