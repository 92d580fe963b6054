// The stand-in driver's memory (see cuda.c): allocations, copies, memsets,
// pointer attributes.

#include "standin.h"

static char *reserved, *next_free;
static size_t in_use;
static struct allocation *allocations;        // sorted by base (carved in order)
static size_t allocation_count, allocation_capacity;

// Reserve the address space every allocation is carved from (cuInit).
CUresult reserve_memory(void) {
    reserved = mmap(NULL, RESERVED, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    next_free = reserved;
    return CUDA_SUCCESS;
}

// The live allocation holding [ptr, ptr + bytes), or NULL.
struct allocation *allocation_of(CUdeviceptr ptr, size_t bytes) {
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

CUresult device_range(const char *entry, CUdeviceptr ptr, size_t bytes) {
    if (allocation_of(ptr, bytes ? bytes : 1)) return CUDA_SUCCESS;
    standin_violation("%s: [%#llx, +%zu) is in no live allocation", entry, (unsigned long long)ptr, bytes);
    return CUDA_ERROR_INVALID_VALUE;
}

static size_t span_of(size_t bytes) { return (bytes + PAGE - 1) / PAGE * PAGE; }

static void release_pages(struct allocation *a) {
    size_t span = span_of(a->size);
    madvise((void *)a->base, span, MADV_DONTNEED);
    mprotect((void *)a->base, span, PROT_NONE);
    in_use -= span;
}

// Free the memory of a destroyed context.
void release_allocations(CUcontext context) {
    size_t kept = 0;
    for (size_t i = 0; i < allocation_count; i++) {
        struct allocation *a = &allocations[i];
        if (a->context == context)
            release_pages(a);
        else
            allocations[kept++] = *a;
    }
    allocation_count = kept;
}

// The number of live allocations (a test checks that freed memory is freed).
EXPORT size_t standin_allocation_count(void) {
    pthread_mutex_lock(&lock);
    size_t count = allocation_count;
    pthread_mutex_unlock(&lock);
    return count;
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
