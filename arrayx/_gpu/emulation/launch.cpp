// The grid walk of the emulated CUDA device (see host.h), built once into a
// shared library that kernel libraries resolve ax_run_grid against.
//
// Blocks run one after another, on the calling thread. A kernel without
// __syncthreads() runs its threads one after another (an order CUDA may also
// choose). In one with it, each CUDA thread of the block is a fiber of its
// own (ucontext): a round resumes every fiber until it reaches the next
// __syncthreads() or ends, so a barrier holds exactly as on the device,
// without one host thread per CUDA thread.
#include <ucontext.h>
#include <vector>

namespace {

const size_t STACK_BYTES = 64 << 10;

struct Fiber {
    ucontext_t context;
    std::vector<char> stack = std::vector<char>(STACK_BYTES);
    bool done = false;
};

ucontext_t scheduler;
std::vector<Fiber> fibers;
Fiber* current;
void (*block_thread)(void*, unsigned, unsigned, unsigned);
void* block_kernel;
unsigned block_x, block_y;

void fiber_main(unsigned t) {
    block_thread(block_kernel, block_x, block_y, t);
    fibers[t].done = true;
}

// Run block (x, y) of `bx` fibers; false when some threads ended while
// others wait at a __syncthreads() (on a device: a hang or worse).
bool run_block(unsigned x, unsigned y, unsigned bx) {
    block_x = x;
    block_y = y;
    for (unsigned t = 0; t < bx; t++) {
        Fiber& fiber = fibers[t];
        getcontext(&fiber.context);
        fiber.context.uc_stack.ss_sp = fiber.stack.data();
        fiber.context.uc_stack.ss_size = fiber.stack.size();
        fiber.context.uc_link = &scheduler;
        fiber.done = false;
        makecontext(&fiber.context, (void (*)())fiber_main, 1, t);
    }
    for (;;) {
        unsigned ended = 0;
        for (unsigned t = 0; t < bx; t++) {
            if (!fibers[t].done) {
                current = &fibers[t];
                swapcontext(&scheduler, &current->context);
            }
            ended += fibers[t].done;
        }
        if (ended == bx) return true;
        if (ended) return false;
    }
}

}  // namespace

extern "C" void ax_syncthreads(void) { swapcontext(&current->context, &scheduler); }

// 0, or -1 when a block's threads did not all reach the same __syncthreads().
extern "C" int ax_run_grid(unsigned gx, unsigned gy, unsigned bx, int synchronizes,
                           void (*run_thread)(void* kernel, unsigned x, unsigned y, unsigned t), void* kernel) {
    if (!synchronizes) {
        for (unsigned y = 0; y < gy; y++)
            for (unsigned x = 0; x < gx; x++)
                for (unsigned t = 0; t < bx; t++) run_thread(kernel, x, y, t);
        return 0;
    }
    if (fibers.size() < bx) fibers.resize(bx);
    block_thread = run_thread;
    block_kernel = kernel;
    for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++)
            if (!run_block(x, y, bx)) return -1;
    return 0;
}
