/*
 * sim/kernel/fiber.c — the fibers a kernel's threads run on.
 *
 * The context switch is Boost.Context's (its C entry points make_fcontext
 * and jump_fcontext, which every Boost.Context API is built on). Around it,
 * what a fiber needs here: a stack with a guard page below it, a pool of
 * them per worker thread (a block of 512 threads would otherwise map 512
 * stacks at every launch), and the switch annotations that keep
 * AddressSanitizer and ThreadSanitizer right about which stack runs.
 *
 * A jump hands the resumed context the context it left (transfer_t); every
 * place that resumes stores it back into the fiber it came from, so a
 * fiber's `ctx` is where it will resume next.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define FIBER_ASAN 1
#else
#define FIBER_ASAN 0
#endif
#if SIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* Boost.Context's C interface (boost/context/detail/fcontext.hpp, which is
 * C++ only); libboost_context exports these with C linkage. */
typedef void *fcontext_t;
typedef struct {
  fcontext_t fctx;
  void *data;
} transfer_t;
extern transfer_t jump_fcontext(fcontext_t const to, void *vp);
extern fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

enum { POOL_MAX = 1024 }; /* a block's worth of stacks kept per worker */

typedef struct fiber_thread {
  sim_fiber home;   /* the worker's own stack */
  sim_fiber *pool;  /* stacks to reuse */
  unsigned npool;
  void *altstack;   /* for SIGSEGV on a fiber stack's guard page */
  size_t altsize;
} fiber_thread;

static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Thread_local fiber_thread *self_thread;

static size_t page_size(void) {
  static size_t p;
  if (!p) p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

size_t sim_fiber_stack_size(void) {
  size_t kb = (size_t)sim_param_int(SIM_P_KERNEL_STACK_KB);
  if (kb < 16) kb = 16;
  size_t b = kb * 1024, p = page_size();
  return (b + p - 1) / p * p;
}

static void fiber_unmap(sim_fiber *f) {
#if SIM_TSAN
  if (f->tsan) __tsan_destroy_fiber(f->tsan);
#endif
  munmap(f->map, f->map_size);
  sim_free(f);
}

static void thread_gone(void *arg) {
  fiber_thread *t = arg;
  while (t->pool) {
    sim_fiber *f = t->pool;
    t->pool = f->next;
    fiber_unmap(f);
  }
  if (t->altstack) {
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    munmap(t->altstack, t->altsize);
  }
  sim_free(t);
}

static void make_key(void) { pthread_key_create(&thread_key, thread_gone); }

sim_fiber *sim_fiber_home(void) {
  if (self_thread) return &self_thread->home;
  pthread_once(&key_once, make_key);
  fiber_thread *t = sim_calloc(1, sizeof *t);
  if (!t) return NULL;
  /* The worker's stack, for the sanitizers' view of a switch back to it. */
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      t->home.stack = addr;
      t->home.stack_size = size;
    }
    pthread_attr_destroy(&attr);
  }
#if SIM_TSAN
  t->home.tsan = __tsan_get_current_fiber();
#endif
  /* A fiber that overflows its stack faults on the guard page, and the
   * handler (kernel/fault.c) needs a stack of its own to report it. */
  t->altsize = 64 * 1024;
  t->altstack = mmap(NULL, t->altsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (t->altstack == MAP_FAILED) {
    t->altstack = NULL;
  } else {
    stack_t ss = {.ss_sp = t->altstack, .ss_size = t->altsize};
    if (sigaltstack(&ss, NULL) != 0) {
      munmap(t->altstack, t->altsize);
      t->altstack = NULL;
    }
  }
  pthread_setspecific(thread_key, t);
  self_thread = t;
  return &t->home;
}

sim_fiber *sim_fiber_alloc(void) {
  fiber_thread *t = self_thread;
  if (t->pool) {
    sim_fiber *f = t->pool;
    t->pool = f->next;
    t->npool--;
    f->next = NULL;
    return f;
  }
  size_t guard = page_size(), size = sim_fiber_stack_size();
  sim_fiber *f = sim_calloc(1, sizeof *f);
  if (!f) return NULL;
  /* MAP_NORESERVE: a stack costs what it touches. */
  f->map_size = guard + size;
  f->map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (f->map == MAP_FAILED) {
    sim_free(f);
    return NULL;
  }
  if (mprotect(f->map, guard, PROT_NONE) != 0) {
    munmap(f->map, f->map_size);
    sim_free(f);
    return NULL;
  }
  f->stack = (char *)f->map + guard;
  f->stack_size = size;
#if SIM_TSAN
  f->tsan = __tsan_create_fiber(0);
#endif
  return f;
}

void sim_fiber_free(sim_fiber *f) {
  fiber_thread *t = self_thread;
  f->ctx = NULL;
#if FIBER_ASAN
  /* A fiber abandoned mid-call (an aborted kernel) leaves its frames'
   * poison behind; the next one to use the stack starts clean. */
  ASAN_UNPOISON_MEMORY_REGION(f->stack, f->stack_size);
#endif
  if (t->npool >= POOL_MAX) {
    fiber_unmap(f);
    return;
  }
  f->next = t->pool;
  t->pool = f;
  t->npool++;
}

/* After every resume: pool the fiber that ended to get here (its stack is
 * no longer under anyone). */
/* What the jump handed over: the fiber left, which resumes at from.fctx
 * next, or, if it ended, goes back to the pool now that its stack is left.
 * Nothing here reads a thread-local: a switch costs no TLS lookup. */
static void resumed(transfer_t from, void *fake_stack) {
  sim_fiber *left = from.data;
  left->ctx = from.fctx;
#if FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
#else
  (void)fake_stack;
#endif
  if (left->leaving) {
    left->leaving = false;
    sim_fiber_free(left);
  }
}

static void fiber_entry(transfer_t from) {
  sim_fiber *self = ((sim_fiber *)from.data)->target;
  resumed(from, NULL);
  self->fn(self->arg);
  /* fn never returns: a thread ends with sim_fiber_leave. */
  abort();
}

void sim_fiber_prepare(sim_fiber *f, void (*fn)(void *), void *arg) {
  f->fn = fn;
  f->arg = arg;
  f->ctx = make_fcontext(f->stack + f->stack_size, f->stack_size, fiber_entry);
  f->fresh = true;
}

static void jump(sim_fiber *from, sim_fiber *to, bool sync, bool ending) {
  void *fake = NULL;
#if FIBER_ASAN
  __sanitizer_start_switch_fiber(ending ? NULL : &fake, to->stack, to->stack_size);
#endif
#if SIM_TSAN
  /* Threads of one block run one after another here, but on a GPU they run
   * at once: no order between them unless a barrier, an atomic or a warp
   * exchange says so (those annotate it), so that ThreadSanitizer reports
   * a missing __syncthreads as the race it is. */
  __tsan_switch_to_fiber(to->tsan, sync ? 0 : __tsan_switch_to_fiber_no_sync);
#else
  (void)sync;
#endif
  (void)ending;
  to->fresh = false;
  from->target = to;
  transfer_t back = jump_fcontext(to->ctx, from);
  resumed(back, fake);
}

void sim_fiber_switch(sim_fiber *from, sim_fiber *to, bool sync) {
  if (from == to) return;
  jump(from, to, sync, false);
}

void sim_fiber_leave(sim_fiber *from, sim_fiber *to, bool sync) {
  from->leaving = true;
  jump(from, to, sync, true);
  abort(); /* nothing resumes a fiber that left */
}
