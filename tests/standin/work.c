// The stand-in driver's work (see cuda.c): the queue, streams, events,
// modules and launches.

#include "standin.h"

struct image {
    void *bytes;
    size_t size;
    char *library;
    struct image *next;
};
static struct image *images;   // the cubins registered, with their host libraries

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

CUresult live_stream(const char *entry, CUstream stream, CUcontext context) {
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return CUDA_SUCCESS;
    if (!stream->alive || stream->generation != stream->context->generation || stream->context != context) {
        standin_violation("%s: a destroyed stream, or one of another context", entry);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    return CUDA_SUCCESS;
}

// ---- the queue ----------------------------------------------------------------------

struct work *new_work(enum kind kind) {
    struct work *w = calloc(1, sizeof *w);
    w->kind = kind;
    return w;
}

void enqueue(CUcontext context, CUstream stream, struct work *w) {
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
CUresult run_until(CUcontext context, unsigned long long until) {
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

CUresult run_all(CUcontext context) { return run_until(context, context->queued); }

// Drop a destroyed context's queue.
void drop_queue(CUcontext context) {
    for (struct work *w = context->head, *next; w; w = next) {
        next = w->next;
        if (w->kind == KERNEL) w->function->module->queued--;
        free(w->staged);
        free(w);
    }
    context->head = context->tail = NULL;
}

static unsigned long long last_of(CUstream stream, CUcontext context) {
    // The legacy default stream waits for every stream of its context.
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return context->queued;
    return stream->last;
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
