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
 * An array's data pointer and a scalar's value are read at their place in
 * NumPy's object layout, which NumPy keeps fixed for its C API's users
 * (PyArrayObject_fields.data, and every scalar's obval, right after the
 * object header): this file needs no NumPy header. launch.py checks both
 * against NumPy's own answers before it uses this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef void (*ax_kernel)(char* const*, const long long*, long long, long long, long long, long long, void*);

#define AX_MAX_BUFFERS 1024

static PyTypeObject* ndarray;
static PyTypeObject* generic;

static int address(PyObject* obj, char** out) {
    if (PyObject_TypeCheck(obj, ndarray)) {
        *out = *(char**)((char*)obj + sizeof(PyObject));
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

static PyObject* data_address(PyObject* self, PyObject* obj) {
    char* out;
    if (address(obj, &out) < 0) return NULL;
    return PyLong_FromVoidPtr(out);
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "Run a native kernel over buffers."},
    {"address", data_address, METH_O, "The address run passes for a buffer."},
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
    return PyModule_Create(&module);
}
