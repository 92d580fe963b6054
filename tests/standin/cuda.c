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
// and records a violation (standin_violations), which the tests check.
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
// Entry points the driver has and this file lacks return
// CUDA_ERROR_NOT_SUPPORTED (unsupported.c, generated from cuda.h).
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { DEVICES = 1, SM_COUNT = 2, MAX_BLOCK = 1024, MAX_PARAMS = 64, MAX_STACK = 64 };
static const size_t TOTAL_MEMORY = (size_t)4 << 30;   // what the device reports and allows in use
static const size_t RESERVED = (size_t)1 << 40;       // address space for every allocation ever made
static const size_t PAGE = 4096;

// ---- state -------------------------------------------------------------------

struct work;

struct CUctx_st {
    CUdevice device;
    int retains;            // primary context: alive while retained
    unsigned generation;    // bumped when it is destroyed: older objects are stale
    struct work *head, *tail;
    unsigned long long queued;   // sequence number of the last work queued
};

struct CUstream_st {
    CUcontext context;
    unsigned generation;
    int alive;
    unsigned long long last;     // sequence number of its last work
};

struct CUevent_st {
    CUcontext context;
    unsigned generation;
    int alive;
    unsigned long long recorded; // sequence number of its marker (0: never recorded)
    int done;
    struct timespec when;
};

struct CUfunc_st;

struct CUmod_st {
    CUcontext context;
    unsigned generation;
    int alive;
    void *library;
    long queued;                 // launches of its kernels not yet run
    struct CUfunc_st *functions;
};

struct CUfunc_st {
    CUmodule module;
    char name[256];
    int (*launch)(unsigned, unsigned, unsigned, void **);
    const char *kinds;           // one letter a parameter: p address, i int, l long long
    struct CUfunc_st *next;
};

enum kind { KERNEL, COPY, MEMSET, MARKER };

struct work {
    enum kind kind;
    unsigned long long sequence;
    struct work *next;
    // KERNEL
    CUfunction function;
    unsigned grid_x, grid_y, block_x;
    unsigned long long values[MAX_PARAMS];
    // COPY (from `staged` when the source was host memory) and MEMSET
    CUdeviceptr dst, src;
    void *staged;
    size_t bytes;
    unsigned value, width;
    // MARKER
    CUevent event;
};

struct allocation {
    CUdeviceptr base;
    size_t size;
    CUcontext context;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;         // all of the driver's state
static pthread_mutex_t violations_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t initialized_by;                  // the process that called cuInit (0: none)
static struct CUctx_st primary[DEVICES];
static __thread CUcontext stack[MAX_STACK];   // this thread's context stack
static __thread int depth;

static char *reserved, *next_free;
static size_t in_use;
static struct allocation *allocations;        // sorted by base (carved in order)
static size_t allocation_count, allocation_capacity;

struct image {
    void *bytes;
    size_t size;
    char *library;
    struct image *next;
};
static struct image *images;

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

static CUresult injected_failure(const char *name) {
    for (int i = 0; i < 8; i++)
        if (injected[i].name && !strcmp(injected[i].name, name)) {
            free((void *)injected[i].name);
            injected[i].name = NULL;
            return injected[i].error;
        }
    return CUDA_SUCCESS;
}

// The bytes of the ELF file at `image` (the furthest end of its headers and
// sections), or 0 when it is no 64-bit ELF file.
static size_t elf_size(const unsigned char *elf) {
    if (memcmp(elf, "\177ELF", 4) || elf[4] != 2) return 0;
    uint64_t section_headers, program_headers, offset, size;
    uint16_t section_entry, sections, program_entry, programs;
    uint32_t type;
    memcpy(&program_headers, elf + 0x20, 8);
    memcpy(&section_headers, elf + 0x28, 8);
    memcpy(&program_entry, elf + 0x36, 2);
    memcpy(&programs, elf + 0x38, 2);
    memcpy(&section_entry, elf + 0x3a, 2);
    memcpy(&sections, elf + 0x3c, 2);
    size_t end = section_headers + (size_t)section_entry * sections;
    size_t programs_end = program_headers + (size_t)program_entry * programs;
    if (programs_end > end) end = programs_end;
    for (uint16_t i = 0; i < sections; i++) {
        const unsigned char *header = elf + section_headers + (size_t)i * section_entry;
        memcpy(&type, header + 4, 4);
        memcpy(&offset, header + 0x18, 8);
        memcpy(&size, header + 0x20, 8);
        if (type != 8 && offset + size > end) end = offset + size;   // 8: SHT_NOBITS, no bytes in the file
    }
    return end;
}

// Register the host library of the kernels in `bytes` (a cubin NVRTC made).
// Images are told apart by their ELF contents, which is all a loader sees.
EXPORT void standin_register_image(const void *bytes, const char *library) {
    size_t size = elf_size(bytes);
    if (!size) {
        standin_violation("standin_register_image: not a 64-bit ELF cubin");
        return;
    }
    pthread_mutex_lock(&lock);
    struct image *found = NULL;
    for (struct image *i = images; i; i = i->next)
        if (i->size == size && !memcmp(i->bytes, bytes, size)) found = i;
    if (!found) {
        found = calloc(1, sizeof *found);
        found->bytes = malloc(size);
        memcpy(found->bytes, bytes, size);
        found->size = size;
        found->next = images;
        images = found;
    }
    free(found->library);
    found->library = strdup(library);
    pthread_mutex_unlock(&lock);
}

// The number of live allocations (a test checks that freed memory is freed).
EXPORT size_t standin_allocation_count(void) {
    pthread_mutex_lock(&lock);
    size_t count = allocation_count;
    pthread_mutex_unlock(&lock);
    return count;
}

// ---- checks every entry point makes ---------------------------------------------

static CUresult initialized(void) {
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
static CUresult need_context(const char *entry, CUcontext *out) {
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

#define ENTER(entry)                                \
    CUcontext context;                              \
    pthread_mutex_lock(&lock);                      \
    CUresult status = need_context(entry, &context); \
    if (status) goto out;

#define LEAVE                       \
    out:                            \
    pthread_mutex_unlock(&lock);    \
    return status;

// The live allocation holding [ptr, ptr + bytes), or NULL.
static struct allocation *allocation_of(CUdeviceptr ptr, size_t bytes) {
    size_t low = 0, high = allocation_count;
    while (low < high) {
        size_t middle = (low + high) / 2;
        if (allocations[middle].base <= ptr)
            low = middle + 1;
        else
            high = middle;
    }
    if (!low) return NULL;
    struct allocation *a = &allocations[low - 1];
    if (ptr >= a->base + a->size || bytes > a->base + a->size - ptr) return NULL;
    return a;
}

static CUresult device_range(const char *entry, CUdeviceptr ptr, size_t bytes) {
    if (allocation_of(ptr, bytes ? bytes : 1)) return CUDA_SUCCESS;
    standin_violation("%s: [%#llx, +%zu) is in no live allocation", entry, (unsigned long long)ptr, bytes);
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult live_stream(const char *entry, CUstream stream, CUcontext context) {
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return CUDA_SUCCESS;
    if (!stream->alive || stream->generation != stream->context->generation || stream->context != context) {
        standin_violation("%s: a destroyed stream, or one of another context", entry);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    return CUDA_SUCCESS;
}

// ---- the queue ----------------------------------------------------------------------

static struct work *new_work(enum kind kind) {
    struct work *w = calloc(1, sizeof *w);
    w->kind = kind;
    return w;
}

static void enqueue(CUcontext context, CUstream stream, struct work *w) {
    w->sequence = ++context->queued;
    if (context->tail)
        context->tail->next = w;
    else
        context->head = w;
    context->tail = w;
    if (stream && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) stream->last = w->sequence;
}

static CUresult run(struct work *w) {
    switch (w->kind) {
    case KERNEL: {
        void *args[MAX_PARAMS];
        for (size_t i = 0; i < strlen(w->function->kinds); i++) args[i] = &w->values[i];
        w->function->module->queued--;
        if (w->function->launch(w->grid_x, w->grid_y, w->block_x, args)) {
            standin_violation("kernel %s: the threads of a block did not all reach the same __syncthreads()",
                              w->function->name);
            return CUDA_ERROR_LAUNCH_FAILED;
        }
        return CUDA_SUCCESS;
    }
    case COPY:
        memmove((void *)w->dst, w->staged ? w->staged : (void *)w->src, w->bytes);
        free(w->staged);
        return CUDA_SUCCESS;
    case MEMSET:
        for (size_t i = 0; i < w->bytes; i++) {
            unsigned shift = 8 * (i % w->width);
            ((unsigned char *)w->dst)[i] = (unsigned char)(w->value >> shift);
        }
        return CUDA_SUCCESS;
    case MARKER:
        clock_gettime(CLOCK_MONOTONIC, &w->event->when);
        w->event->done = 1;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_UNKNOWN;
}

// Run the context's queue up to and including the work numbered `until`.
static CUresult run_until(CUcontext context, unsigned long long until) {
    CUresult result = CUDA_SUCCESS;
    while (context->head && context->head->sequence <= until) {
        struct work *w = context->head;
        context->head = w->next;
        if (!context->head) context->tail = NULL;
        CUresult status = run(w);
        if (status && !result) result = status;
        free(w);
    }
    return result;
}

static CUresult run_all(CUcontext context) { return run_until(context, context->queued); }

static size_t span_of(size_t bytes) { return (bytes + PAGE - 1) / PAGE * PAGE; }

static void release_pages(struct allocation *a) {
    size_t span = span_of(a->size);
    madvise((void *)a->base, span, MADV_DONTNEED);
    mprotect((void *)a->base, span, PROT_NONE);
    in_use -= span;
}

static unsigned long long last_of(CUstream stream, CUcontext context) {
    // The legacy default stream waits for every stream of its context.
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return context->queued;
    return stream->last;
}

// ---- initialization, devices --------------------------------------------------------------

EXPORT CUresult cuInit(unsigned int flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    CUresult status = CUDA_SUCCESS;
    if (initialized_by && initialized_by != getpid()) {
        status = initialized();
    } else if (!initialized_by) {
        reserved = mmap(NULL, RESERVED, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (reserved == MAP_FAILED) {
            status = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            next_free = reserved;
            initialized_by = getpid();
            for (int d = 0; d < DEVICES; d++) primary[d].device = d;
        }
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
// would finish it), its memory freed, its modules unloaded.
static void destroy(CUcontext context) {
    for (struct work *w = context->head, *next; w; w = next) {
        next = w->next;
        if (w->kind == KERNEL) w->function->module->queued--;
        free(w->staged);
        free(w);
    }
    context->head = context->tail = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < allocation_count; i++) {
        struct allocation *a = &allocations[i];
        if (a->context == context)
            release_pages(a);
        else
            allocations[kept++] = *a;
    }
    allocation_count = kept;
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

// ---- memory ------------------------------------------------------------------------------

EXPORT CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
    ENTER("cuMemAlloc");
    if ((status = injected_failure("cuMemAlloc"))) goto out;
    if (!bytes) {
        status = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    size_t span = span_of(bytes);
    if (in_use + span > TOTAL_MEMORY || (size_t)(next_free - reserved) + span + PAGE > RESERVED) {
        status = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    char *base = next_free;
    next_free += span + PAGE;   // and a guard page
    if (mprotect(base, span, PROT_READ | PROT_WRITE)) {
        status = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    memset(base, 0xff, span);   // uninitialized device memory is not zeros
    if (allocation_count == allocation_capacity) {
        allocation_capacity = allocation_capacity ? 2 * allocation_capacity : 1024;
        allocations = realloc(allocations, allocation_capacity * sizeof *allocations);
    }
    allocations[allocation_count++] = (struct allocation){(CUdeviceptr)base, bytes, context};
    in_use += span;
    *ptr = (CUdeviceptr)base;
    LEAVE
}

EXPORT CUresult cuMemFree(CUdeviceptr ptr) {
    ENTER("cuMemFree");
    struct allocation *a = allocation_of(ptr, 1);
    if (!a || a->base != ptr) {
        standin_violation("cuMemFree(%#llx): not the start of a live allocation", (unsigned long long)ptr);
        status = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    // Freeing waits for the work queued before it, as on the device.
    status = run_all(context);
    a = allocation_of(ptr, 1);
    release_pages(a);
    memmove(a, a + 1, (allocation_count - (a - allocations) - 1) * sizeof *a);
    allocation_count--;
    LEAVE
}

EXPORT CUresult cuMemGetInfo(size_t *free, size_t *total) {
    ENTER("cuMemGetInfo");
    *free = TOTAL_MEMORY - in_use;
    *total = TOTAL_MEMORY;
    LEAVE
}

EXPORT CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
    ENTER("cuMemGetAddressRange");
    struct allocation *a = allocation_of(ptr, 1);
    if (!a) {
        status = CUDA_ERROR_NOT_FOUND;
        goto out;
    }
    if (base) *base = a->base;
    if (size) *size = a->size;
    LEAVE
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    pthread_mutex_lock(&lock);
    CUresult status = initialized();
    struct allocation *a = status ? NULL : allocation_of(ptr, 1);
    if (!status && !a) status = CUDA_ERROR_INVALID_VALUE;
    if (!status) switch (attribute) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = a->context; break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = CU_MEMORYTYPE_DEVICE; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->context->device; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = a->base; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = a->size; break;
        default: status = CUDA_ERROR_NOT_SUPPORTED;
        }
    pthread_mutex_unlock(&lock);
    return status;
}

// A copy: queued on `stream`, or (`sync`) run after all queued work. A
// source in host memory is staged when queued, as the driver stages
// pageable memory; a destination in host memory (pageable) is written
// before the call returns, as the driver does.
static CUresult copy(const char *entry, CUdeviceptr dst, int dst_on_device, CUdeviceptr src, int src_on_device,
                     size_t bytes, CUstream stream, int sync) {
    ENTER(entry);
    if ((dst_on_device && (status = device_range(entry, dst, bytes))) ||
        (src_on_device && (status = device_range(entry, src, bytes))) ||
        (status = live_stream(entry, stream, context)))
        goto out;
    struct work *w = new_work(COPY);
    w->dst = dst;
    w->src = src;
    w->bytes = bytes;
    if (!src_on_device) {
        w->staged = malloc(bytes ? bytes : 1);
        memcpy(w->staged, (void *)src, bytes);
    }
    enqueue(context, stream, w);
    if (sync || !dst_on_device) status = run_until(context, w->sequence);
    LEAVE
}

EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
    return copy("cuMemcpyHtoD", dst, 1, (CUdeviceptr)src, 0, bytes, NULL, 1);
}

EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
    return copy("cuMemcpyDtoH", (CUdeviceptr)dst, 0, src, 1, bytes, NULL, 1);
}

EXPORT CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return copy("cuMemcpyDtoD", dst, 1, src, 1, bytes, NULL, 1);
}

EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
    return copy("cuMemcpyHtoDAsync", dst, 1, (CUdeviceptr)src, 0, bytes, stream, 0);
}

EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return copy("cuMemcpyDtoHAsync", (CUdeviceptr)dst, 0, src, 1, bytes, stream, 0);
}

EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
    return copy("cuMemcpyDtoDAsync", dst, 1, src, 1, bytes, stream, 0);
}

static CUresult memset_device(const char *entry, CUdeviceptr dst, unsigned value, unsigned width, size_t count,
                              CUstream stream, int sync) {
    ENTER(entry);
    if ((status = device_range(entry, dst, count * width)) || (status = live_stream(entry, stream, context)))
        goto out;
    struct work *w = new_work(MEMSET);
    w->dst = dst;
    w->value = value;
    w->width = width;
    w->bytes = count * width;
    enqueue(context, stream, w);
    if (sync) status = run_until(context, w->sequence);
    LEAVE
}

EXPORT CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) {
    return memset_device("cuMemsetD8", dst, value, 1, count, NULL, 1);
}
EXPORT CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t count) {
    return memset_device("cuMemsetD16", dst, value, 2, count, NULL, 1);
}
EXPORT CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t count) {
    return memset_device("cuMemsetD32", dst, value, 4, count, NULL, 1);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
    return memset_device("cuMemsetD8Async", dst, value, 1, count, stream, 0);
}
EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
    return memset_device("cuMemsetD16Async", dst, value, 2, count, stream, 0);
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
    return memset_device("cuMemsetD32Async", dst, value, 4, count, stream, 0);
}

// ---- streams and events --------------------------------------------------------------------

EXPORT CUresult cuStreamCreate(CUstream *out, unsigned int flags) {
    (void)flags;
    ENTER("cuStreamCreate");
    if ((status = injected_failure("cuStreamCreate"))) goto out;
    CUstream stream = calloc(1, sizeof *stream);
    stream->context = context;
    stream->generation = context->generation;
    stream->alive = 1;
    *out = stream;
    LEAVE
}

// Streams and events name their context: these need none current (the
// default stream does, as on the driver).
static CUresult stream_context(const char *entry, CUstream stream, CUcontext *context) {
    CUresult status = initialized();
    if (status) return status;
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
        return need_context(entry, context);
    *context = stream->context;
    return live_stream(entry, stream, stream->context);
}

EXPORT CUresult cuStreamDestroy(CUstream stream) {
    pthread_mutex_lock(&lock);
    CUcontext context;
    CUresult status = stream_context("cuStreamDestroy", stream, &context);
    if (!status) stream->alive = 0;   // its queued work still runs
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuStreamSynchronize(CUstream stream) {
    pthread_mutex_lock(&lock);
    CUcontext context;
    CUresult status = stream_context("cuStreamSynchronize", stream, &context);
    if (!status) status = run_until(context, last_of(stream, context));
    pthread_mutex_unlock(&lock);
    return status;
}

// Queued work runs when something waits for it: a query finds it done.
EXPORT CUresult cuStreamQuery(CUstream stream) { return cuStreamSynchronize(stream); }

EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
    (void)event, (void)flags;
    pthread_mutex_lock(&lock);
    CUcontext context;
    // One queue a context: what follows already waits for what came before.
    CUresult status = stream_context("cuStreamWaitEvent", stream, &context);
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuEventCreate(CUevent *out, unsigned int flags) {
    (void)flags;
    ENTER("cuEventCreate");
    CUevent event = calloc(1, sizeof *event);
    event->context = context;
    event->generation = context->generation;
    event->alive = 1;
    *out = event;
    LEAVE
}

static CUresult live_event(const char *entry, CUevent event) {
    CUresult status = initialized();
    if (status) return status;
    if (!event || !event->alive || event->generation != event->context->generation) {
        standin_violation("%s: a destroyed event", entry);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
    pthread_mutex_lock(&lock);
    CUcontext context;
    CUresult status = live_event("cuEventRecord", event);
    if (!status) status = stream_context("cuEventRecord", stream, &context);
    if (!status && context != event->context) status = CUDA_ERROR_INVALID_HANDLE;
    if (!status) {
        struct work *w = new_work(MARKER);
        w->event = event;
        event->done = 0;
        enqueue(context, stream, w);
        event->recorded = w->sequence;
    }
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuEventSynchronize(CUevent event) {
    pthread_mutex_lock(&lock);
    CUresult status = live_event("cuEventSynchronize", event);
    if (!status) status = run_until(event->context, event->recorded);
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuEventQuery(CUevent event) { return cuEventSynchronize(event); }

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
    pthread_mutex_lock(&lock);
    CUresult status = live_event("cuEventElapsedTime", start);
    if (!status) status = live_event("cuEventElapsedTime", end);
    if (!status && !(start->done && end->done)) status = CUDA_ERROR_NOT_READY;
    if (!status)
        *ms = (float)((end->when.tv_sec - start->when.tv_sec) * 1e3 + (end->when.tv_nsec - start->when.tv_nsec) / 1e6);
    pthread_mutex_unlock(&lock);
    return status;
}

EXPORT CUresult cuEventDestroy(CUevent event) {
    pthread_mutex_lock(&lock);
    CUresult status = live_event("cuEventDestroy", event);
    if (!status) event->alive = 0;
    pthread_mutex_unlock(&lock);
    return status;
}

// ---- modules and launches --------------------------------------------------------------------

// Load the host library registered for `image`; a failure's reason goes
// to `message`, which cuModuleLoadDataEx passes on as the JIT's error log.
static CUresult load(const char *entry, CUmodule *out, const void *image, char *message, size_t message_size) {
    ENTER(entry);
    size_t size = elf_size(image);
    if (!size) {
        snprintf(message, message_size, "the image is not a 64-bit ELF cubin");
        status = CUDA_ERROR_INVALID_IMAGE;
        goto out;
    }
    struct image *found = NULL;
    for (struct image *i = images; i && !found; i = i->next)
        if (i->size == size && !memcmp(i->bytes, image, size)) found = i;
    if (!found) {
        snprintf(message, message_size, "no host library registered for this cubin of %zu bytes", size);
        status = CUDA_ERROR_INVALID_IMAGE;
        goto out;
    }
    void *library = dlopen(found->library, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(message, message_size, "%s", dlerror());
        status = CUDA_ERROR_INVALID_IMAGE;
        goto out;
    }
    CUmodule module = calloc(1, sizeof *module);
    module->context = context;
    module->generation = context->generation;
    module->alive = 1;
    module->library = library;
    *out = module;
    LEAVE
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
    char message[512] = "";
    CUresult status = load("cuModuleLoadData", module, image, message, sizeof message);
    if (*message) standin_violation("cuModuleLoadData: %s", message);
    return status;
}

// A cubin needs no JIT: of the JIT options only the logs matter, which get
// the failure's reason (and their sizes what was written, as on the driver).
EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int count, CUjit_option *options,
                                   void **values) {
    char message[512] = "";
    CUresult status = load("cuModuleLoadDataEx", module, image, message, sizeof message);
    if (*message) standin_violation("cuModuleLoadDataEx: %s", message);
    char *error_log = NULL;
    for (unsigned i = 0; i < count; i++)
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) error_log = values[i];
    for (unsigned i = 0; i < count; i++) {
        if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) values[i] = (void *)0;
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            size_t room = (size_t)values[i], length = error_log && room ? strlen(message) : 0;
            if (length >= room) length = room ? room - 1 : 0;
            if (error_log && room) {
                memcpy(error_log, message, length);
                error_log[length] = 0;
            }
            values[i] = (void *)length;
        }
    }
    return status;
}

static CUresult live_module(const char *entry, CUmodule module, CUcontext context) {
    if (!module || !module->alive || module->generation != module->context->generation) {
        standin_violation("%s: an unloaded module", entry);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (module->context != context) {
        standin_violation("%s: a module of another context", entry);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    return CUDA_SUCCESS;
}

static void unload(CUmodule module) {
    dlclose(module->library);
    module->alive = 0;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
    ENTER("cuModuleUnload");
    if ((status = live_module("cuModuleUnload", module, context))) goto out;
    if (module->queued) {
        standin_violation("cuModuleUnload: %ld launches of the module's kernels are still queued", module->queued);
        status = CUDA_ERROR_NOT_PERMITTED;
        goto out;
    }
    unload(module);
    LEAVE
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule module, const char *name) {
    ENTER("cuModuleGetFunction");
    if ((status = live_module("cuModuleGetFunction", module, context))) goto out;
    for (CUfunction f = module->functions; f; f = f->next)
        if (!strcmp(f->name, name)) {
            *out = f;
            goto out;
        }
    char symbol[300];
    snprintf(symbol, sizeof symbol, "launch_%s", name);
    void *launch = dlsym(module->library, symbol);
    snprintf(symbol, sizeof symbol, "ax_params_%s", name);
    const char *kinds = dlsym(module->library, symbol);
    if (!launch || !kinds || strlen(name) >= 256) {
        status = CUDA_ERROR_NOT_FOUND;
        goto out;
    }
    CUfunction f = calloc(1, sizeof *f);
    f->module = module;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->launch = (int (*)(unsigned, unsigned, unsigned, void **))launch;
    f->kinds = kinds;
    f->next = module->functions;
    module->functions = f;
    *out = f;
    LEAVE
}

EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction f) {
    (void)f;
    switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = MAX_BLOCK; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    default: *value = 0;
    }
    return initialized();
}

static int valid_block(unsigned x, unsigned y, unsigned z) {
    return x >= 1 && y >= 1 && z >= 1 && x <= MAX_BLOCK && y <= MAX_BLOCK && z <= 64 && x * y * z <= MAX_BLOCK;
}

// PyCUDA sets the block shape (an API of CUDA 1) before each launch.
EXPORT CUresult cuFuncSetBlockShape(CUfunction f, int x, int y, int z) {
    (void)f;
    CUresult status = initialized();
    if (!status && !(x > 0 && y > 0 && z > 0 && valid_block(x, y, z))) status = CUDA_ERROR_INVALID_VALUE;
    return status;
}

static size_t size_of(char kind) { return kind == 'i' ? 4 : 8; }

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                               unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                               void **params, void **extra) {
    ENTER("cuLaunchKernel");
    if (!f || (status = live_module("cuLaunchKernel", f->module, context)) ||
        (status = live_stream("cuLaunchKernel", stream, context)))
        goto out;
    if (!valid_block(bx, by, bz) || !gx || !gy || !gz || gx > 0x7fffffffu || gy > 65535 || gz > 65535) {
        standin_violation("kernel %s: invalid launch configuration grid (%u, %u, %u) block (%u, %u, %u)", f->name,
                          gx, gy, gz, bx, by, bz);
        status = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if (by != 1 || bz != 1 || gz != 1 || shared) {
        standin_violation("kernel %s: the stand-in runs blocks and grids of one and two dimensions without "
                          "dynamic shared memory", f->name);
        status = CUDA_ERROR_NOT_SUPPORTED;
        goto out;
    }
    struct work *w = new_work(KERNEL);
    size_t n = strlen(f->kinds);
    const char *buffer = NULL;
    size_t buffer_size = 0;
    for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
        if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = e[1];
        else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE) buffer_size = *(size_t *)e[1];
    }
    if (n && !params && !buffer) {
        standin_violation("kernel %s: launched without its parameters", f->name);
        status = CUDA_ERROR_INVALID_VALUE;
    }
    // Parameters lie at their natural alignment, as in a C struct.
    size_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        size_t size = size_of(f->kinds[i]);
        offset = (offset + size - 1) / size * size;
        const void *value = params ? params[i] : buffer ? buffer + offset : NULL;
        if (!value || (!params && offset + size > buffer_size)) break;
        memcpy(&w->values[i], value, size);
        offset += size;
        if (f->kinds[i] == 'p' && w->values[i] && !allocation_of(w->values[i], 1)) {
            standin_violation("kernel %s: parameter %zu, %#llx, is in no live allocation", f->name, i,
                              w->values[i]);
            status = CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (!status && !params && offset != buffer_size) {
        standin_violation("kernel %s: a parameter buffer of %zu bytes for parameters of %zu", f->name, buffer_size,
                          offset);
        status = CUDA_ERROR_INVALID_VALUE;
    }
    if (status) {
        free(w);
        goto out;
    }
    w->function = f;
    w->grid_x = gx;
    w->grid_y = gy;
    w->block_x = bx;
    f->module->queued++;
    enqueue(context, stream, w);
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
