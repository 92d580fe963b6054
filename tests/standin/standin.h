// The stand-in CUDA driver's state and the helpers its files share:
// cuda.c (initialization, devices, contexts, violations, errors), memory.c
// (allocations, copies, memsets) and work.c (the queue, streams, events,
// modules, launches). See cuda.c for what it is.
#ifndef STANDIN_H
#define STANDIN_H

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

// Compiled with -fvisibility=hidden: what the library exports says so.
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

extern pthread_mutex_t lock;   // all of the driver's state

// cuda.c
EXPORT void standin_violation(const char *format, ...);
CUresult injected_failure(const char *name);
CUresult initialized(void);
CUresult need_context(const char *entry, CUcontext *out);

// An entry point that needs a current context: takes `lock`, sets
// `context` and `status`, and leaves through LEAVE.
#define ENTER(entry)                                 \
    CUcontext context;                               \
    pthread_mutex_lock(&lock);                       \
    CUresult status = need_context(entry, &context); \
    if (status) goto out;

#define LEAVE                    \
    out:                         \
    pthread_mutex_unlock(&lock); \
    return status;

// memory.c
CUresult reserve_memory(void);
struct allocation *allocation_of(CUdeviceptr ptr, size_t bytes);
CUresult device_range(const char *entry, CUdeviceptr ptr, size_t bytes);
void release_allocations(CUcontext context);

// work.c
CUresult live_stream(const char *entry, CUstream stream, CUcontext context);
struct work *new_work(enum kind kind);
void enqueue(CUcontext context, CUstream stream, struct work *w);
CUresult run_until(CUcontext context, unsigned long long until);
CUresult run_all(CUcontext context);
void drop_queue(CUcontext context);

#endif
