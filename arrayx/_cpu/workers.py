"""The threads fused groups run on: the calling thread and a pool of
THREADS - 1 workers, which claim a blocked call's pieces in order (a worker
that starts late leaves its share to the threads already running), and the
estimate of how long a worker takes to start, which decides whether a call
wakes them at all."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# A blocked call wakes workers only when its group's previous call took at
# least WAKE_MARGIN times as long as a worker takes to start (smoothed over
# calls): a worker that starts after the caller has done most of the work
# saves little, and the caller may wait for the piece it holds. A worker
# starts in tens of microseconds on an idle machine and in milliseconds on
# a loaded one, where medium groups then run faster on the calling thread
# alone. The pieces stay the same either way, so sums do not change.
WAKE_MARGIN = 2
# Each call that skips waking workers shrinks the estimate by this factor,
# so that a later call wakes them again and measures the latency anew.
LATENCY_DECAY = 0.9


def _threads_from_environment():
    """The thread count ARRAYX_NUM_THREADS asks for, or one per core this process may run on."""
    value = os.environ.get("ARRAYX_NUM_THREADS")
    if value is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"ARRAYX_NUM_THREADS={value!r}: expected a positive integer (the number of threads "
                         f"a fused group runs on)")
    return int(value)


THREADS = _threads_from_environment()

_pool = None
_pool_lock = threading.Lock()
# Seconds from submitting a worker to its first claim, smoothed (see WAKE_MARGIN).
_start_latency = 0.0


def threads():
    """The number of threads fused groups run on."""
    return THREADS


def set_threads(n):
    """Run fused groups on `n` threads (a positive int) from the next force point on."""
    global THREADS, _pool
    with _pool_lock:
        THREADS = n
        # A force point still running holds the old pool; its workers exit once it lets go.
        _pool = None


def thread_pool():
    """The pool of THREADS - 1 workers (made at first use, and again after set_threads)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=THREADS - 1, thread_name_prefix="arrayx-cpu")
    return _pool


def _forget_pool():
    # A forked child has none of the parent's threads: it starts its own pool.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def worth_waking(seconds):
    """Whether a blocked call whose previous call took `seconds` (None: the
    first call) wakes the workers (see WAKE_MARGIN); when not, the estimate
    shrinks (see LATENCY_DECAY)."""
    global _start_latency
    if seconds is None or seconds >= WAKE_MARGIN * _start_latency:
        return True
    _start_latency *= LATENCY_DECAY
    return False


class _Claims:
    """The pieces of one blocked call, which the threads computing them claim
    in order: each thread takes the next piece when it is free."""

    def __init__(self, pieces, compute, temporaries):
        self.pieces = pieces
        self.compute = compute            # compute(piece, temps) -> its partial reduction or None
        self.temporaries = temporaries    # () -> a thread's block temporaries
        self.results = [None] * len(pieces)
        self.claimed = 0
        self.finished = 0
        self.error = None
        self.changed = threading.Condition()
        self.latencies = []               # seconds from submitting each worker that started to its start

    def take(self, submitted=None):
        """Compute pieces until none is left to claim; a worker passes the
        time it was `submitted` at."""
        if submitted is not None:
            self.latencies.append(time.perf_counter() - submitted)
        temps = None
        n = len(self.pieces)
        while True:
            with self.changed:
                i = self.claimed
                if i == n:
                    return
                self.claimed = i + 1
            if temps is None:
                temps = self.temporaries()
            try:
                self.results[i] = self.compute(self.pieces[i], temps)
            except BaseException as error:   # raised in the calling thread, once every piece is done
                self.error = error
            with self.changed:
                self.finished += 1
                if self.finished == n:
                    self.changed.notify_all()


def claimed(pieces, compute, temporaries, threads):
    """[compute(piece, temps) for piece in pieces], computed by the calling
    thread and up to `threads` - 1 workers. The calling thread waits only for
    pieces a worker has claimed: a worker that starts after every piece was
    claimed does nothing. Updates the workers' start latency estimate."""
    global _start_latency
    if len(pieces) == 1:
        return [compute(pieces[0], temporaries())]
    claims = _Claims(pieces, compute, temporaries)
    workers = min(threads, len(pieces)) - 1
    pool = thread_pool() if workers else None
    submitted = time.perf_counter()
    futures = [pool.submit(claims.take, submitted) for _ in range(workers)]
    claims.take()
    with claims.changed:
        claims.changed.wait_for(lambda: claims.finished == len(pieces))
    # A worker holds `claims` for a moment after its last piece. Without the
    # closure over the group's buffers it reaches none of them, so the next
    # step sees the group's output held by the plan alone: an update then
    # writes into it instead of copying it.
    claims.compute = None
    for future in futures:
        future.cancel()   # not started yet: it would find nothing to claim
    if futures:
        # The first worker's start, or (none started) at least the whole call.
        first = min(claims.latencies, default=time.perf_counter() - submitted)
        _start_latency += (first - _start_latency) / 4
    if claims.error is not None:
        raise claims.error
    return claims.results
