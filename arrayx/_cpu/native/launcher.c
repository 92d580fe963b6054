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

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "Run a native kernel over buffers."},
    {"split", (PyCFunction)(void (*)(void))split, METH_FASTCALL, "Run a native kernel's pieces on a pool."},
    {"address", data_address, METH_O, "The address run passes for a buffer."},
    {"layout_key", (PyCFunction)(void (*)(void))layout_key, METH_FASTCALL, "Arrays' axes, shapes and strides as bytes."},
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
    pthread_atfork(NULL, NULL, ax_forget_pool);
    return PyModule_Create(&module);
}
