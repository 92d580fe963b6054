/* Calls a native kernel from Python in a fraction of a microsecond: ctypes
 * takes microseconds to convert its arguments, and a small group at 1e3
 * points runs in less. Built once per Python (launch.py), like a kernel.
 *
 * run(kernel, meta, start, stop, rstart, rstop, partial, release, *buffers)
 * calls kernel(pointers, meta, start, stop, rstart, rstop, partial), where
 * pointers[i] is the data of buffers[i]: a NumPy array's data pointer, or the
 * address of a NumPy scalar's value. kernel, meta and partial are addresses
 * (partial may be None: NULL); with release true the call runs without the
 * GIL, so threads run kernels side by side.
 *
 * split(kernel, meta, outer, reduced, split_reduced, pieces, grain, partial,
 * partial_stride, helpers, *buffers) runs the same kernel over `pieces`
 * pieces, without the GIL, on the calling thread and up to `helpers` threads
 * of this module's pool: pieces of the outer range [0, outer) starting at
 * multiples of `grain`, or (split_reduced) of the reduced range, piece k
 * folding into the partial results at partial + k * partial_stride. The
 * pieces do not depend on `helpers`, so a reduction's partial results are
 * the same however many threads run it. The pool's threads wait for work
 * by spinning a few tens of microseconds, then on a condition variable:
 * waking a Python worker costs more than a piece of a 1e6-point call.
 *
 * layout_key(*arrays) is a bytes object holding each array's number of axes,
 * shape and strides: what a native group's loops depend on, as a dict key
 * built in one call (the shape and strides attributes make a tuple each).
 *
 * shortcut(table, args) runs a jitted function's call on the arrays `args`
 * as one kernel call, with no Python in between, where an entry of the
 * table was made for arrays like them; else it returns None (the caller
 * then takes its Python path, which checks everything again). A call on
 * 1e3 points otherwise costs several microseconds of Python around a
 * kernel of a fraction of one. table is (array type, node attribute,
 * guards, count, entries):
 *   - each argument must be of the array type, hold its node in the node
 *     attribute and the node its value in `buffer` (a NumPy array), and no
 *     argument may be passed twice;
 *   - guards: (object, attribute, value, equal) tuples; the table serves a
 *     call only while each attribute equals its value (`equal` true) or
 *     differs from it (`equal` false). An object that is a dict, a
 *     module's, holds the attribute as an item: read in a fifth of the time
 *     the module's attribute takes;
 *   - count: (dict, key): dict[key] grows by an entry's steps per call;
 *   - entries: a list of (dtypes, devices, layouts, sources, outputs,
 *     launch, results, steps, guards), tried in order: the arguments'
 *     nodes must have the `dtypes` and `devices` (by identity) and their
 *     buffers the layouts (layout_key of them all); the entry's own guards
 *     must hold, as the table's. The kernel's buffers are then the
 *     `sources` (an int: that argument's buffer; else a constant buffer)
 *     and one new array per output, allocate(shape, dtype) for each
 *     (allocate, shape, dtype) of `outputs`. launch is (kernel, meta,
 *     outer, reduced, release, keep), run's arguments for one call over
 *     every point (`keep` holds what keeps the kernel and meta alive).
 *     results is (node type, op, specs, unflatten): per (shape, dtype,
 *     device, k) of `specs`, an object of the array type whose node
 *     attribute holds node type(op, (), (), shape, dtype, device, output
 *     k), made as the array type's constructor-free `_new` makes one; the
 *     call's result is the one such array where unflatten is None, else
 *     unflatten(list of them).
 *
 * An array's data pointer, number of axes, shape and strides and a scalar's
 * value are read at their place in NumPy's object layout, which NumPy keeps
 * fixed for its C API's users (PyArrayObject_fields' first fields, and every
 * scalar's obval, right after the object header): this file needs no NumPy
 * header. launch.py checks them against NumPy's own answers before it uses
 * this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

typedef void (*ax_kernel)(char* const*, const long long*, long long, long long, long long, long long, void*);

#define AX_MAX_BUFFERS 1024

static PyTypeObject* ndarray;
static PyTypeObject* generic;

/* The leading fields of NumPy's PyArrayObject_fields. */
typedef struct {
    PyObject_HEAD
    char* data;
    int nd;
    Py_ssize_t* dimensions;
    Py_ssize_t* strides;
} ax_array;

static int address(PyObject* obj, char** out) {
    if (PyObject_TypeCheck(obj, ndarray)) {
        *out = ((ax_array*)obj)->data;
        return 0;
    }
    if (PyObject_TypeCheck(obj, generic)) {
        *out = (char*)obj + sizeof(PyObject);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "native kernel: a buffer must be a NumPy array or scalar, got %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

static void* pointer(PyObject* obj) {
    return obj == Py_None ? NULL : PyLong_AsVoidPtr(obj);
}

static PyObject* run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs < 8 || nargs - 8 > AX_MAX_BUFFERS) {
        PyErr_SetString(PyExc_TypeError, "run(kernel, meta, start, stop, rstart, rstop, partial, release, *buffers)");
        return NULL;
    }
    ax_kernel kernel = (ax_kernel)pointer(args[0]);
    const long long* meta = (const long long*)pointer(args[1]);
    long long start = PyLong_AsLongLong(args[2]), stop = PyLong_AsLongLong(args[3]);
    long long rstart = PyLong_AsLongLong(args[4]), rstop = PyLong_AsLongLong(args[5]);
    void* partial = pointer(args[6]);
    int release = PyObject_IsTrue(args[7]);
    char* buffers[AX_MAX_BUFFERS];
    for (Py_ssize_t i = 8; i < nargs; i++)
        if (address(args[i], &buffers[i - 8]) < 0) return NULL;
    if (PyErr_Occurred()) return NULL;
    if (kernel == NULL) {
        PyErr_SetString(PyExc_ValueError, "native kernel: no kernel address");
        return NULL;
    }
    if (release) {
        Py_BEGIN_ALLOW_THREADS
        kernel(buffers, meta, start, stop, rstart, rstop, partial);
        Py_END_ALLOW_THREADS
    } else {
        kernel(buffers, meta, start, stop, rstart, rstop, partial);
    }
    Py_RETURN_NONE;
}

/* ---- the pool that split() runs pieces on -------------------------------- */

#define AX_MAX_HELPERS 255
/* Polls of a waiting thread before it sleeps: tens of microseconds, enough
 * for the next group of a chain, short of taking a core from other work. */
#define AX_SPINS 4000

struct ax_job {
    ax_kernel kernel;
    char* const* buffers;
    const long long* meta;
    long long outer, reduced, pieces, grain, total, partial_stride;
    int split_reduced;
    char* partial;
};

static struct {
    pthread_mutex_t busy;   /* held by the call whose job the pool runs */
    pthread_mutex_t lock;   /* guards open, helpers, sleepers and joining */
    pthread_cond_t wake;
    struct ax_job job;
    atomic_ulong generation;
    atomic_llong next, done;
    atomic_int active;      /* threads inside the open job's claim loop */
    int open, helpers, started, sleepers;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static inline void ax_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void ax_piece(const struct ax_job* j, long long k) {
    long long lo = j->total * k / j->pieces / j->grain * j->grain;
    long long hi = k + 1 < j->pieces ? j->total * (k + 1) / j->pieces / j->grain * j->grain : j->total;
    if (hi <= lo) return;
    if (j->split_reduced)
        j->kernel(j->buffers, j->meta, 0, j->outer, lo, hi, j->partial + k * j->partial_stride);
    else
        j->kernel(j->buffers, j->meta, lo, hi, 0, j->reduced, NULL);
}

static void ax_claim(const struct ax_job* j) {
    long long k;
    while ((k = atomic_fetch_add(&pool.next, 1)) < j->pieces) {
        ax_piece(j, k);
        atomic_fetch_add(&pool.done, 1);
    }
}

static void* ax_helper(void* arg) {
    int index = (int)(long)arg;
    unsigned long seen = atomic_load(&pool.generation);
    for (;;) {
        int spins = 0;
        while (atomic_load(&pool.generation) == seen && ++spins < AX_SPINS) ax_relax();
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.generation) == seen) {
            pool.sleepers++;
            pthread_cond_wait(&pool.wake, &pool.lock);
            pool.sleepers--;
        }
        seen = atomic_load(&pool.generation);
        int join = pool.open && index < pool.helpers;
        if (join) atomic_fetch_add(&pool.active, 1);
        pthread_mutex_unlock(&pool.lock);
        if (join) {
            ax_claim(&pool.job);
            atomic_fetch_sub(&pool.active, 1);
        }
    }
    return NULL;
}

/* Helpers started so far, at most `wanted`. */
static int ax_start_helpers(int wanted) {
    while (pool.started < wanted) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&thread, &attr, ax_helper, (void*)(long)pool.started);
        pthread_attr_destroy(&attr);
        if (failed) break;
        pool.started++;
    }
    return pool.started < wanted ? pool.started : wanted;
}

/* Runs every piece of `job`: on the pool when it is free, else all here. */
static void ax_run_job(const struct ax_job* job, int helpers) {
    if (helpers == 0 || pthread_mutex_trylock(&pool.busy) != 0) {
        for (long long k = 0; k < job->pieces; k++) ax_piece(job, k);
        return;
    }
    helpers = ax_start_helpers(helpers);
    pthread_mutex_lock(&pool.lock);
    pool.job = *job;
    atomic_store(&pool.next, 0);
    atomic_store(&pool.done, 0);
    pool.helpers = helpers;
    pool.open = 1;
    atomic_fetch_add(&pool.generation, 1);
    if (pool.sleepers) pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    ax_claim(&pool.job);
    for (long spins = 0; atomic_load(&pool.done) < job->pieces; spins++)
        if (spins < AX_SPINS) ax_relax(); else sched_yield();
    /* No thread joins a closed job; those inside find no piece left. */
    pthread_mutex_lock(&pool.lock);
    pool.open = 0;
    pthread_mutex_unlock(&pool.lock);
    while (atomic_load(&pool.active) > 0) ax_relax();
    pthread_mutex_unlock(&pool.busy);
}

/* A forked child has none of the pool's threads. */
static void ax_forget_pool(void) {
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pool.started = pool.sleepers = pool.open = pool.helpers = 0;
    atomic_store(&pool.active, 0);
}

static PyObject* split(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs < 10 || nargs - 10 > AX_MAX_BUFFERS) {
        PyErr_SetString(PyExc_TypeError, "split(kernel, meta, outer, reduced, split_reduced, pieces, grain, "
                                         "partial, partial_stride, helpers, *buffers)");
        return NULL;
    }
    struct ax_job job;
    job.kernel = (ax_kernel)pointer(args[0]);
    job.meta = (const long long*)pointer(args[1]);
    job.outer = PyLong_AsLongLong(args[2]);
    job.reduced = PyLong_AsLongLong(args[3]);
    job.split_reduced = PyObject_IsTrue(args[4]);
    job.pieces = PyLong_AsLongLong(args[5]);
    job.grain = PyLong_AsLongLong(args[6]);
    job.partial = (char*)pointer(args[7]);
    job.partial_stride = PyLong_AsLongLong(args[8]);
    long helpers = PyLong_AsLong(args[9]);
    job.total = job.split_reduced ? job.reduced : job.outer;
    char* buffers[AX_MAX_BUFFERS];
    for (Py_ssize_t i = 10; i < nargs; i++)
        if (address(args[i], &buffers[i - 10]) < 0) return NULL;
    if (PyErr_Occurred()) return NULL;
    if (job.kernel == NULL || job.pieces < 1 || job.grain < 1 || (job.split_reduced && job.partial == NULL)) {
        PyErr_SetString(PyExc_ValueError, "native kernel: split needs a kernel, pieces and a grain of at least 1, "
                                          "and partial results to split the reduced range");
        return NULL;
    }
    job.buffers = buffers;
    helpers = helpers < 0 ? 0 : helpers > AX_MAX_HELPERS ? AX_MAX_HELPERS : helpers;
    Py_BEGIN_ALLOW_THREADS
    ax_run_job(&job, (int)helpers);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject* data_address(PyObject* self, PyObject* obj) {
    char* out;
    if (address(obj, &out) < 0) return NULL;
    return PyLong_FromVoidPtr(out);
}

static PyObject* layout_key(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    Py_ssize_t words = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (!PyObject_TypeCheck(args[i], ndarray)) {
            PyErr_Format(PyExc_TypeError, "layout_key: expected NumPy arrays, got %.100s", Py_TYPE(args[i])->tp_name);
            return NULL;
        }
        words += 1 + 2 * (Py_ssize_t)((ax_array*)args[i])->nd;
    }
    PyObject* key = PyBytes_FromStringAndSize(NULL, words * (Py_ssize_t)sizeof(long long));
    if (key == NULL) return NULL;
    long long* out = (long long*)PyBytes_AS_STRING(key);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        const ax_array* a = (const ax_array*)args[i];
        *out++ = a->nd;
        for (int d = 0; d < a->nd; d++) *out++ = a->dimensions[d];
        for (int d = 0; d < a->nd; d++) *out++ = a->strides[d];
    }
    return key;
}

/* ---- a jitted call's shortcut ------------------------------------------- */

#define AX_MAX_ARGUMENTS 16

static PyObject *name_buffer, *name_dtype, *name_device, *nothing;

/* Whether the buffers have the layout layout_key would give for them. */
static int same_layout(PyObject* key, PyObject* const* buffers, Py_ssize_t n) {
    const long long* word = (const long long*)PyBytes_AS_STRING(key);
    const long long* end = word + PyBytes_GET_SIZE(key) / (Py_ssize_t)sizeof(long long);
    for (Py_ssize_t i = 0; i < n; i++) {
        const ax_array* a = (const ax_array*)buffers[i];
        if (word >= end || *word++ != a->nd || end - word < 2 * (Py_ssize_t)a->nd) return 0;
        for (int d = 0; d < a->nd; d++)
            if (*word++ != a->dimensions[d]) return 0;
        for (int d = 0; d < a->nd; d++)
            if (*word++ != a->strides[d]) return 0;
    }
    return word == end;
}

/* Whether each guard holds (its attribute, a module's read as its dict's
 * item, equal or not to its value, as the guard says): 1, 0, or -1 with an
 * error. */
static int guards_hold(PyObject* guards) {
    for (Py_ssize_t g = 0; g < PyTuple_GET_SIZE(guards); g++) {
        PyObject* guard = PyTuple_GET_ITEM(guards, g);
        PyObject* holder = PyTuple_GET_ITEM(guard, 0);
        PyObject* name = PyTuple_GET_ITEM(guard, 1);
        PyObject* value;
        if (PyDict_CheckExact(holder)) {
            value = PyDict_GetItemWithError(holder, name);
            if (value == NULL) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
                return -1;
            }
            Py_INCREF(value);
        } else {
            value = PyObject_GetAttr(holder, name);
            if (value == NULL) return -1;
        }
        int equal = PyObject_RichCompareBool(value, PyTuple_GET_ITEM(guard, 2), Py_EQ);
        Py_DECREF(value);
        if (equal < 0) return -1;
        if (equal != PyObject_IsTrue(PyTuple_GET_ITEM(guard, 3))) return 0;
    }
    return 1;
}

/* The call's result from the kernel's outputs (see `results` above). */
static PyObject* results_of(PyObject* table, PyObject* results, PyObject* const* outputs) {
    PyTypeObject* array_type = (PyTypeObject*)PyTuple_GET_ITEM(table, 0);
    PyObject* node_attribute = PyTuple_GET_ITEM(table, 1);
    PyObject* specs = PyTuple_GET_ITEM(results, 2);
    PyObject* unflatten = PyTuple_GET_ITEM(results, 3);
    Py_ssize_t n = PyTuple_GET_SIZE(specs);
    PyObject* list = unflatten == Py_None ? NULL : PyList_New(n);
    if (unflatten != Py_None && list == NULL) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject* spec = PyTuple_GET_ITEM(specs, k);
        PyObject* args[7] = {PyTuple_GET_ITEM(results, 1), nothing, nothing, PyTuple_GET_ITEM(spec, 0),
                             PyTuple_GET_ITEM(spec, 1), PyTuple_GET_ITEM(spec, 2),
                             outputs[PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 3))]};
        PyObject* node = PyObject_Vectorcall(PyTuple_GET_ITEM(results, 0), args, 7, NULL);
        if (node == NULL) goto failed;
        PyObject* array = array_type->tp_alloc(array_type, 0);
        if (array == NULL || PyObject_SetAttr(array, node_attribute, node) < 0) {
            Py_XDECREF(array);
            Py_DECREF(node);
            goto failed;
        }
        Py_DECREF(node);
        if (list == NULL) return array;
        PyList_SET_ITEM(list, k, array);
    }
    if (list == NULL) {
        PyErr_SetString(PyExc_ValueError, "shortcut: an entry with no results");
        return NULL;
    }
    PyObject* result = PyObject_CallOneArg(unflatten, list);
    Py_DECREF(list);
    return result;
failed:
    Py_XDECREF(list);
    return NULL;
}

/* The result of entry's kernel over the argument buffers (the caller holds
 * a reference to the entry). */
static PyObject* run_entry(PyObject* table, PyObject* entry, PyObject* const* buffers) {
    PyObject* sources = PyTuple_GET_ITEM(entry, 3);
    PyObject* outputs = PyTuple_GET_ITEM(entry, 4);
    PyObject* launch = PyTuple_GET_ITEM(entry, 5);
    Py_ssize_t n_sources = PyTuple_GET_SIZE(sources), n_outputs = PyTuple_GET_SIZE(outputs);
    if (n_sources + n_outputs > AX_MAX_BUFFERS || n_outputs > AX_MAX_ARGUMENTS) {
        PyErr_SetString(PyExc_ValueError, "shortcut: too many buffers");
        return NULL;
    }
    char* pointers[AX_MAX_BUFFERS];
    for (Py_ssize_t k = 0; k < n_sources; k++) {
        PyObject* source = PyTuple_GET_ITEM(sources, k);
        if (PyLong_CheckExact(source))
            pointers[k] = ((ax_array*)buffers[PyLong_AsSsize_t(source)])->data;
        else if (address(source, &pointers[k]) < 0)
            return NULL;
    }
    PyObject* made[AX_MAX_ARGUMENTS];
    Py_ssize_t n_made = 0;
    PyObject* result = NULL;
    for (; n_made < n_outputs; n_made++) {
        PyObject* output = PyTuple_GET_ITEM(outputs, n_made);
        made[n_made] = PyObject_Vectorcall(PyTuple_GET_ITEM(output, 0), &PyTuple_GET_ITEM(output, 1), 2, NULL);
        if (made[n_made] == NULL) goto done;
        if (address(made[n_made], &pointers[n_sources + n_made]) < 0) {
            n_made++;
            goto done;
        }
    }
    ax_kernel kernel = (ax_kernel)pointer(PyTuple_GET_ITEM(launch, 0));
    const long long* meta = (const long long*)pointer(PyTuple_GET_ITEM(launch, 1));
    long long outer = PyLong_AsLongLong(PyTuple_GET_ITEM(launch, 2));
    long long reduced = PyLong_AsLongLong(PyTuple_GET_ITEM(launch, 3));
    if (PyErr_Occurred()) goto done;
    if (PyTuple_GET_ITEM(launch, 4) == Py_True) {
        /* The caller holds the entry, which keeps the kernel loaded whatever other threads do meanwhile. */
        Py_BEGIN_ALLOW_THREADS
        kernel(pointers, meta, 0, outer, 0, reduced, NULL);
        Py_END_ALLOW_THREADS
    } else {
        kernel(pointers, meta, 0, outer, 0, reduced, NULL);
    }
    PyObject* count = PyTuple_GET_ITEM(table, 3);
    PyObject* dict = PyTuple_GET_ITEM(count, 0);
    PyObject* key = PyTuple_GET_ITEM(count, 1);
    PyObject* before = PyDict_GetItemWithError(dict, key);
    if (before == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
        goto done;
    }
    PyObject* after = PyNumber_Add(before, PyTuple_GET_ITEM(entry, 7));
    if (after == NULL) goto done;
    int failed = PyDict_SetItem(dict, key, after);
    Py_DECREF(after);
    if (failed < 0) goto done;
    result = results_of(table, PyTuple_GET_ITEM(entry, 6), made);
done:
    for (Py_ssize_t j = 0; j < n_made; j++) Py_DECREF(made[j]);
    return result;
}

static PyObject* shortcut(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 5 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "shortcut(table, args): table is a 5-tuple, args a tuple");
        return NULL;
    }
    PyObject* table = args[0];
    PyObject* call = args[1];
    PyObject* entries = PyTuple_GET_ITEM(table, 4);
    Py_ssize_t n = PyTuple_GET_SIZE(call);
    if (!PyList_Check(entries) || PyList_GET_SIZE(entries) == 0 || n > AX_MAX_ARGUMENTS) Py_RETURN_NONE;
    int held = guards_hold(PyTuple_GET_ITEM(table, 2));
    if (held != 1) {
        if (held < 0) return NULL;
        Py_RETURN_NONE;
    }
    PyObject* array_type = PyTuple_GET_ITEM(table, 0);
    PyObject* node_attribute = PyTuple_GET_ITEM(table, 1);
    PyObject* nodes[AX_MAX_ARGUMENTS];
    PyObject* buffers[AX_MAX_ARGUMENTS];
    Py_ssize_t n_nodes = 0, n_buffers = 0;
    PyObject* result = Py_None;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject* arg = PyTuple_GET_ITEM(call, i);
        if ((PyObject*)Py_TYPE(arg) != array_type) goto done;
        for (Py_ssize_t j = 0; j < i; j++)
            if (PyTuple_GET_ITEM(call, j) == arg) goto done;
        nodes[i] = PyObject_GetAttr(arg, node_attribute);
        if (nodes[i] == NULL) goto failed;
        n_nodes++;
        buffers[i] = PyObject_GetAttr(nodes[i], name_buffer);
        if (buffers[i] == NULL) goto failed;
        n_buffers++;
        if (!PyObject_TypeCheck(buffers[i], ndarray)) goto done;   /* not computed yet */
    }
    for (Py_ssize_t e = 0; e < PyList_GET_SIZE(entries); e++) {
        PyObject* entry = PyList_GET_ITEM(entries, e);
        PyObject* dtypes = PyTuple_GET_ITEM(entry, 0);
        PyObject* devices = PyTuple_GET_ITEM(entry, 1);
        if (PyTuple_GET_SIZE(dtypes) != n || !same_layout(PyTuple_GET_ITEM(entry, 2), buffers, n)) continue;
        int same = 1;
        for (Py_ssize_t i = 0; i < n && same; i++) {
            PyObject* dtype = PyObject_GetAttr(nodes[i], name_dtype);
            PyObject* device = dtype == NULL ? NULL : PyObject_GetAttr(nodes[i], name_device);
            same = device != NULL && dtype == PyTuple_GET_ITEM(dtypes, i) && device == PyTuple_GET_ITEM(devices, i);
            Py_XDECREF(dtype);
            if (device == NULL) goto failed;
            Py_DECREF(device);
        }
        if (same) {
            held = guards_hold(PyTuple_GET_ITEM(entry, 8));
            if (held != 1) {
                if (held < 0) goto failed;
                goto done;
            }
            Py_INCREF(entry);
            result = run_entry(table, entry, buffers);
            Py_DECREF(entry);
            goto finished;
        }
    }
done:
    Py_INCREF(Py_None);
    goto finished;
failed:
    result = NULL;
finished:
    for (Py_ssize_t i = 0; i < n_nodes; i++) Py_DECREF(nodes[i]);
    for (Py_ssize_t i = 0; i < n_buffers; i++) Py_DECREF(buffers[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "Run a native kernel over buffers."},
    {"split", (PyCFunction)(void (*)(void))split, METH_FASTCALL, "Run a native kernel's pieces on a pool."},
    {"address", data_address, METH_O, "The address run passes for a buffer."},
    {"layout_key", (PyCFunction)(void (*)(void))layout_key, METH_FASTCALL, "Arrays' axes, shapes and strides as bytes."},
    {"shortcut", (PyCFunction)(void (*)(void))shortcut, METH_FASTCALL, "Run a jitted call as one kernel call."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "arrayx_native_launcher", NULL, -1, methods};

PyMODINIT_FUNC PyInit_arrayx_native_launcher(void) {
    PyObject* numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) return NULL;
    ndarray = (PyTypeObject*)PyObject_GetAttrString(numpy, "ndarray");
    generic = (PyTypeObject*)PyObject_GetAttrString(numpy, "generic");
    Py_DECREF(numpy);
    if (ndarray == NULL || generic == NULL) return NULL;
    name_buffer = PyUnicode_InternFromString("buffer");
    name_dtype = PyUnicode_InternFromString("dtype");
    name_device = PyUnicode_InternFromString("device");
    nothing = PyTuple_New(0);
    if (name_buffer == NULL || name_dtype == NULL || name_device == NULL || nothing == NULL) return NULL;
    pthread_atfork(NULL, NULL, ax_forget_pool);
    return PyModule_Create(&module);
}
