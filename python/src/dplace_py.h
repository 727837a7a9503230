/* The extension module dplace._dplace: the library's graphs, device sets,
 * simulator, placers, groupers and optimisation jobs as Python objects
 * (docs/python.md). What its files share: the object layouts, the numpy
 * set-up, the conversions and the error rule.
 *
 * Rules every function of the module keeps:
 *  - a library error becomes a dplace.Error carrying the library's one-line
 *    message (its status in .status), of the subclass that is also Python's
 *    own exception for its status (dp_py_raise); bad arguments raise
 *    TypeError or ValueError naming the argument and the problem; nothing
 *    crashes;
 *  - the GIL is released while the library runs, so that other Python
 *    threads go on; a call that runs the library holds strong references
 *    to every object whose C data it reads;
 *  - graphs and device sets never change after they are made, so a
 *    simulator context built on them stays valid for their lifetime, which
 *    the Simulator extends by holding them. */
#ifndef DPLACE_PY_H
#define DPLACE_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL dp_py_array_api
#ifndef DP_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/sim.h"

/* ---- objects ---------------------------------------------------------------- */

/* dplace.Graph: a finalized graph, owned. zoo_name is set (with batch, 0 for
 * the model's default) for a zoo graph, so that pickling rebuilds it. */
typedef struct dp_py_graph {
    PyObject_HEAD
    dp_graph *g;
    char *zoo_name;
    int32_t batch;
} dp_py_graph;

/* dplace.Devices: a finalized device set, owned; preset names the preset
 * it came from ("" otherwise). */
typedef struct dp_py_devices {
    PyObject_HEAD
    dp_devices *ds;
    char preset[DP_NAME_MAX];
} dp_py_devices;

/* dplace.Simulator: a context for a graph on a device set, and a pool of
 * workspaces. The pool is only touched with the GIL held; a call takes
 * workspaces from it, releases the GIL to run, and gives them back. */
typedef struct dp_py_sim {
    PyObject_HEAD
    dp_py_graph *graph;
    dp_py_devices *devices;
    dp_sim *sim;
    dp_sim_workspace **pool;
    int n_pool, cap_pool;
} dp_py_sim;

extern PyTypeObject dp_py_graph_type, dp_py_devices_type, dp_py_sim_type, dp_py_result_type, dp_py_batch_type,
    dp_py_delta_type;

/* dplace.Error, the base of every library error's exception. */
extern PyObject *dp_py_error;

/* ---- errors ----------------------------------------------------------------- */

/* Raises err's message as the dplace.Error subclass of its status (io:
 * MissingFileError when os_errno is ENOENT, else FileError; parse and
 * invalid: InputError; nomem: OutOfMemoryError; unsupported: Error), with
 * .status its name and .errno its os_errno; returns NULL. */
PyObject *dp_py_raise(const dp_error *err);
/* The same with a printf-style message and the status (no errno); NULL. */
PyObject *dp_py_raise_status(dp_status status, const char *fmt, ...);

/* ---- conversions -------------------------------------------------------------- */

/* The placement(s) in obj as a new C-contiguous int32 array: rank 1 of
 * shape (n_ops,) or rank 2 of shape (k, n_ops); every value a device index
 * in 0..n_devices-1. Integer arrays and sequences of any integer dtype are
 * converted; floats, booleans, objects and strings raise TypeError, a wrong
 * shape or an index out of range ValueError, each naming `what` (n_ops < 0:
 * a rank-1 array of any length). NULL with the exception set. */
PyArrayObject *dp_py_placements(PyObject *obj, int rank, int32_t n_ops, int32_t n_devices, const char *what);

/* The same without the range check when obj is an int32 C-contiguous
 * array used as it is (the library checks every index itself, and then
 * dp_py_placements_explain names the bad one); other dtypes are checked
 * while they are converted. For the calls whose cost matters. */
PyArrayObject *dp_py_placements_unchecked(PyObject *obj, int rank, int32_t n_ops, int32_t n_devices,
                                          const char *what);
/* Raises ValueError naming the first index of a (from the two above) out
 * of 0..n_devices-1 and returns -1; 0 when there is none. */
int dp_py_placements_explain(PyArrayObject *a, int rank, int32_t n_ops, int32_t n_devices, const char *what);

/* A new 1-D int32 array holding a copy of v[n]. */
PyObject *dp_py_int32_array(const int32_t *v, npy_intp n);

/* A path argument (str, bytes or os.PathLike) as a new bytes object; NULL
 * with TypeError. */
PyObject *dp_py_path(PyObject *obj, const char *what);

/* A Python float of v, NaN and infinities kept. */
static inline PyObject *dp_py_float(double v) { return PyFloat_FromDouble(v); }

/* Sets d[key] = value and drops the reference to value; -1 when value is
 * NULL or the set fails. */
int dp_py_dict_steal(PyObject *d, const char *key, PyObject *value);

/* A fresh temporary file's path in $TMPDIR (or /tmp) into buf (the file
 * exists, empty); -1 with OSError set. */
int dp_py_temp_path(char *buf, size_t size);
/* The text of a file as a new str, then the file removed; NULL with the
 * exception set (the file removed all the same). */
PyObject *dp_py_take_text(const char *path);

/* ---- simulator -------------------------------------------------------------- */

/* Takes a workspace from sim's pool, or makes one (GIL held). NULL with
 * the exception set. */
dp_sim_workspace *dp_py_sim_take(dp_py_sim *sim);
/* Gives ws back to sim's pool (GIL held). */
void dp_py_sim_give(dp_py_sim *sim, dp_sim_workspace *ws);

/* A new dplace.SimResult holding a copy of r (with its link statistics)
 * for the device set of devices. */
PyObject *dp_py_result_new(const dp_sim_result *r, dp_py_devices *devices);

/* A new dplace.SimBatch of the k results res[k] on n_devices devices. */
PyObject *dp_py_batch_new(const dp_sim_result *res, npy_intp k, int32_t n_devices);

/* Fills o from the simulate options of kwargs-style arguments (steps,
 * warmup, noise, seed, mean), checked; -1 with ValueError. */
int dp_py_sim_options(dp_sim_options *o, long steps, long warmup, double noise, unsigned long long seed, int mean);

/* Seconds of a monotonic clock. */
double dp_py_now(void);

/* ---- locks ---------------------------------------------------------------------- */

/* The process-wide lock of the placers and groupers (METIS points the
 * process's stdout at /dev/null while it runs; Scotch and METIS keep
 * state of their own): taken and released with the GIL released. */
void dp_py_placers_lock(void);
void dp_py_placers_unlock(void);

/* ---- the module's functions, by file --------------------------------------------- */

int dp_py_graph_ready(PyObject *m);
int dp_py_devices_ready(PyObject *m);
int dp_py_sim_ready(PyObject *m);
int dp_py_result_ready(PyObject *m);
int dp_py_delta_ready(PyObject *m);
extern PyMethodDef dp_py_units_methods[], dp_py_jobs_methods[], dp_py_optimize_methods[];

#endif
