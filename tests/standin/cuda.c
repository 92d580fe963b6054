// A stand-in for libcuda.so.1, the CUDA driver, for running PyCUDA, NVRTC's
// cubins and arrayx's CUDA runtime on a machine without a GPU (the tests
// build it with the system compiler: tests/standin_driver.py).
//
// It keeps the driver's rules that the code above it must follow: nothing
// works before cuInit or in a child forked after it, an operation without a
// current context fails, each thread has its own context stack, memory is
// valid from its allocation to its free and never again, launches run in
// stream order when something waits for them, and a module with queued
// launches cannot be unloaded. Breaking a rule returns the driver's error
// and records a violation (standin_take_violations), which the tests check.
//
// Device memory is host memory: allocations are carved, in order and never
// reused, out of one reserved address range, each followed by an unmapped
// guard page, and freed memory is unmapped, so a stale or overrunning
// access faults. Kernels run on the host: the tests register, for each
// cubin NVRTC made, the emulated device's library of the same source
// (arrayx/_gpu/emulation/host_kernels.py, one `launch_<name>(gx, gy, bx,
// void** args)` a kernel), and cuModuleLoadData loads that library. Work
// queued on any stream of a context goes on one queue in the order it was
// queued (an order the device could also run it in); waiting for a stream
// or an event runs the queue up to that point, on the waiting thread.
//
// This file: initialization, devices, contexts, violations and errors;
// memory.c and work.c the rest (standin.h). Entry points the driver has and
// these files lack return CUDA_ERROR_NOT_SUPPORTED (unsupported.c, generated
// from cuda.h).

#include "standin.h"

// ---- state -------------------------------------------------------------------

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t violations_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t initialized_by;                  // the process that called cuInit (0: none)
static struct CUctx_st primary[DEVICES];
static __thread CUcontext stack[MAX_STACK];   // this thread's context stack
static __thread int depth;

static char violations[1 << 16];
static size_t violations_length;
static int violation_count;

struct injected {
    const char *name;
    CUresult error;
};
static struct injected injected[8];

// ---- violations, failures the tests inject -------------------------------------

EXPORT void standin_violation(const char *format, ...) {
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    fprintf(stderr, "stand-in CUDA driver: %s\n", message);
    pthread_mutex_lock(&violations_lock);
    violation_count++;
    violations_length += snprintf(violations + violations_length, sizeof violations - violations_length, "%s\n",
                                  message);
    if (violations_length >= sizeof violations) violations_length = sizeof violations - 1;
    pthread_mutex_unlock(&violations_lock);
}

// The violations recorded since the last call, as text into `out`; their number.
EXPORT int standin_take_violations(char *out, size_t size) {
    pthread_mutex_lock(&violations_lock);
    int count = violation_count;
    snprintf(out, size, "%s", violations);
    violation_count = 0;
    violations_length = 0;
    violations[0] = 0;
    pthread_mutex_unlock(&violations_lock);
    return count;
}

// Make the next call of entry point `name` fail with `error` (what a real
// device does when it runs out of resources).
EXPORT void standin_fail_next(const char *name, int error) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 8; i++)
        if (!injected[i].name) {
            injected[i].name = strdup(name);
            injected[i].error = (CUresult)error;
            break;
        }
    pthread_mutex_unlock(&lock);
}

CUresult injected_failure(const char *name) {
    for (int i = 0; i < 8; i++)
        if (injected[i].name && !strcmp(injected[i].name, name)) {
            free((void *)injected[i].name);
            injected[i].name = NULL;
            return injected[i].error;
        }
    return CUDA_SUCCESS;
}

// The bytes of the ELF file at `image` (the furthest end of its headers and

// ---- checks every entry point makes ---------------------------------------------

CUresult initialized(void) {
    if (!initialized_by) return CUDA_ERROR_NOT_INITIALIZED;
    if (initialized_by != getpid()) {
        standin_violation("CUDA used in process %d, forked from process %d after it initialized CUDA", getpid(),
                          initialized_by);
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    return CUDA_SUCCESS;
}

static CUcontext current(void) { return depth ? stack[depth - 1] : NULL; }

// The current context, or the error for its absence. Called with `lock` held.
CUresult need_context(const char *entry, CUcontext *out) {
    CUresult status = initialized();
    if (status) return status;
    CUcontext context = current();
    if (!context) {
        standin_violation("%s without a current context", entry);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (!context->retains) {
        standin_violation("%s with a destroyed context current", entry);
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    }
    *out = context;
    return CUDA_SUCCESS;
}


// ---- initialization, devices --------------------------------------------------------------

EXPORT CUresult cuInit(unsigned int flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    CUresult status = CUDA_SUCCESS;
    if (initialized_by && initialized_by != getpid()) {
        status = initialized();
    } else if (!initialized_by && !(status = reserve_memory())) {
        initialized_by = getpid();
        for (int d = 0; d < DEVICES; d++) primary[d].device = d;
    }
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
    *version = CUDA_VERSION;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
    CUresult status = initialized();
    if (!status) *count = DEVICES;
    return status;
}

static CUresult valid_device(CUdevice device) {
    CUresult status = initialized();
    if (status) return status;
    return device >= 0 && device < DEVICES ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    CUresult status = valid_device(ordinal);
    if (!status) *device = ordinal;
    return status;
}

EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
    CUresult status = valid_device(device);
    if (!status) snprintf(name, length, "arrayx stand-in CUDA device %d", device);
    return status;
}

EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice device) {
    CUresult status = valid_device(device);
    if (!status) *bytes = TOTAL_MEMORY;
    return status;
}

EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice device) {
    CUresult status = valid_device(device);
    if (!status) *major = 9, *minor = 0;
    return status;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
    CUresult status = valid_device(device);
    if (status) return status;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = MAX_BLOCK; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *value = MAX_BLOCK; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = MAX_BLOCK; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 << 10; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = SM_COUNT; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
}

// ---- contexts --------------------------------------------------------------------------

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *out, CUdevice device) {
    pthread_mutex_lock(&lock);
    CUresult status = valid_device(device);
    if (!status) {
        primary[device].retains++;
        *out = &primary[device];
    }
    pthread_mutex_unlock(&lock);
    return status;
}

// The last release destroys the context: its work is dropped (a device
// would finish it), its memory freed, its modules, streams and events made
// stale.
static void destroy(CUcontext context) {
    drop_queue(context);
    release_allocations(context);
    context->generation++;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
    pthread_mutex_lock(&lock);
    CUresult status = valid_device(device);
    if (!status && !primary[device].retains) {
        standin_violation("cuDevicePrimaryCtxRelease of a primary context not retained");
        status = CUDA_ERROR_INVALID_CONTEXT;
    }
    if (!status && !--primary[device].retains) destroy(&primary[device]);
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuCtxPushCurrent(CUcontext context) {
    pthread_mutex_lock(&lock);
    CUresult status = initialized();
    if (!status && (!context || !context->retains)) status = CUDA_ERROR_INVALID_CONTEXT;
    if (!status && depth == MAX_STACK) status = CUDA_ERROR_OUT_OF_MEMORY;
    if (!status) stack[depth++] = context;
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuCtxPopCurrent(CUcontext *out) {
    CUresult status = initialized();
    if (status) return status;
    if (!depth) {
        standin_violation("cuCtxPopCurrent with no context current");
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUcontext context = stack[--depth];
    if (out) *out = context;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *out) {
    CUresult status = initialized();
    if (!status) *out = current();
    return status;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
    CUresult status = initialized();
    if (status) return status;
    if (!context) {
        if (depth) depth--;
    } else if (depth) {
        stack[depth - 1] = context;
    } else {
        stack[depth++] = context;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
    ENTER("cuCtxGetDevice");
    *device = context->device;
    LEAVE
}

EXPORT CUresult cuCtxGetApiVersion(CUcontext context, unsigned int *version) {
    (void)context;
    *version = 3020;   // the context API version of every CUDA since 3.2
    return initialized();
}

EXPORT CUresult cuCtxSynchronize(void) {
    ENTER("cuCtxSynchronize");
    status = run_all(context);
    LEAVE
}


// ---- errors ------------------------------------------------------------------------------------

static const struct {
    CUresult code;
    const char *name, *text;
} ERRORS[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

static int error_index(CUresult code) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == code) return (int)i;
    return -1;
}

EXPORT CUresult cuGetErrorString(CUresult code, const char **text) {
    int i = error_index(code);
    *text = i < 0 ? "unknown error" : ERRORS[i].text;
    return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult code, const char **name) {
    int i = error_index(code);
    *name = i < 0 ? "CUDA_ERROR_UNKNOWN" : ERRORS[i].name;
    return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
