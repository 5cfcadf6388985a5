/*
 * sim/kernel/fiber.c — the fibers a kernel's threads run on.
 *
 * The context switch is Boost.Context's (its C entry points make_fcontext
 * and jump_fcontext, which every Boost.Context API is built on). Around it,
 * what a fiber needs here: a stack with a guard page below it, a pool of
 * them per worker thread (a block of 512 threads would otherwise map 512
 * stacks at every launch; under ThreadSanitizer, a fiber per thread index
 * instead: slot_fiber), and the switch annotations that keep
 * AddressSanitizer and ThreadSanitizer right about which stack runs.
 *
 * A jump hands the resumed context the context it left (transfer_t); every
 * place that resumes stores it back into the fiber it came from, so a
 * fiber's `ctx` is where it will resume next.
 *
 * A fiber runs one kernel thread after another: when a thread's function
 * returns, the fiber parks in fiber_entry's loop and goes back to the
 * pool, to resume there for its next thread. No frame is left behind, so
 * ThreadSanitizer's record of the fiber's calls stays as deep as its
 * stack (a fresh context per thread left every ended thread's frames on
 * it, unpopped, until it overflowed). A fiber abandoned mid-thread (a
 * fault) starts from a fresh context, and a fresh ThreadSanitizer fiber.
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
#include <link.h>
#include <sanitizer/tsan_interface.h>
/* libtsan's (no header declares them; the ignores of reads and writes are
 * sim.h's sim_tsan_ignore_begin/end). */
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
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
  /* Under ThreadSanitizer: the fiber of each of the first POOL_MAX
   * threads of a ring (sim_fiber_alloc). */
  sim_fiber **slots;
  unsigned nslots;
  void *altstack;   /* for SIGSEGV on a fiber stack's guard page */
  size_t altsize;
} fiber_thread;

static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Thread_local fiber_thread *self_thread;

#if SIM_TSAN
/* The engine's own accesses on a kernel thread's fiber (kernel.h):
 * the depth of ignores of the ThreadSanitizer fiber that runs on this
 * worker now. A switch keeps the one it leaves in that fiber
 * (sim_fiber.tsan_ign), so that a fiber abandoned mid-call can have its
 * ignores ended before it is destroyed (ThreadSanitizer ends the process
 * otherwise). Read and written only while ignores are on. */
static _Thread_local int tsan_depth;

void sim_k_engine_enter(void) {
  sim_tsan_ignore_begin();
  tsan_depth++;
}

void sim_k_engine_leave(void) {
  tsan_depth--;
  sim_tsan_ignore_end();
}

void sim_k_engine_reset(void) {
  while (tsan_depth > 0) sim_k_engine_leave();
}

/* ThreadSanitizer runs a signal's handler with ignored synchronization
 * off, and a fault's handler, which never returns, leaves it so: nothing
 * to count. */
void sim_k_nosync_begin(void) { AnnotateIgnoreSyncBegin(__FILE__, __LINE__); }
void sim_k_nosync_end(void) { AnnotateIgnoreSyncEnd(__FILE__, __LINE__); }

/* ThreadSanitizer runs a signal's handler with the fiber's ignores off,
 * and puts them back when it returns, which a fault's handler never does:
 * the fiber has the handler's one. */
void sim_k_engine_enter_handler(void) {
  sim_tsan_ignore_begin();
  tsan_depth = 1;
}

/* A module's thread-local variables, in a library loaded with dlopen (a
 * kernel module, conformance's n4c-devk.so), are allocated for a thread at
 * its first use of them: by the first kernel thread to use one, with
 * malloc, a write to ThreadSanitizer that every later kernel thread's use
 * then races with. So the worker makes them, as engine code, before its
 * kernel threads run: each module the process has that has some, once per
 * module the process loads. */
typedef struct {
  unsigned long module, offset;
} tls_index;
extern void *__tls_get_addr(tls_index *ti);
static _Thread_local unsigned long long tls_adds; /* the loads seen */

static int tls_touch(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  if (info->dlpi_adds == tls_adds) return 1; /* none loaded since */
  *(unsigned long long *)arg = info->dlpi_adds;
  if (info->dlpi_tls_modid && !info->dlpi_tls_data) {
    tls_index ti = {info->dlpi_tls_modid, 0};
    (void)__tls_get_addr(&ti);
  }
  return 0;
}

void sim_fiber_tls_ready(void) {
  unsigned long long adds = tls_adds;
  sim_k_engine_enter();
  if (dl_iterate_phdr(tls_touch, &adds) == 0) tls_adds = adds;
  sim_k_engine_leave();
}

/* A new ThreadSanitizer fiber, made by the worker's own context: a fiber
 * starts after all that the one that made it did, and one made by a kernel
 * thread (the thread that hands the CPU to the next one gives it its
 * fiber) would order the next thread after it, hiding a race between
 * them. */
static void *tsan_create(void) {
  void *cur = __tsan_get_current_fiber(), *home = self_thread->home.tsan;
  if (cur != home) __tsan_switch_to_fiber(home, __tsan_switch_to_fiber_no_sync);
  void *f = __tsan_create_fiber(0);
  if (cur != home) __tsan_switch_to_fiber(cur, __tsan_switch_to_fiber_no_sync);
  return f;
}

/* Destroys f's ThreadSanitizer fiber, which does not run. Its ignores end
 * first, on its own state (one destroyed with ignores on ends the
 * process). `sync`: the switches there and back synchronize, so that what
 * its last thread did is ordered before what the caller does next (the
 * worker, freeing a block a fault abandoned). */
static void tsan_destroy(sim_fiber *f, bool sync) {
  int depth = f->tsan_ign;
  f->tsan_ign = 0;
  void *cur = __tsan_get_current_fiber();
  unsigned flags = sync ? 0 : __tsan_switch_to_fiber_no_sync;
  __tsan_switch_to_fiber(f->tsan, flags);
  for (int i = 0; i < depth; i++) sim_tsan_ignore_end();
  __tsan_switch_to_fiber(cur, flags);
  __tsan_destroy_fiber(f->tsan);
  f->tsan = NULL;
}
#endif

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
  if (f->tsan) tsan_destroy(f, false);
#endif
#if FIBER_ASAN
  /* A parked fiber's frames are still poisoned, and AddressSanitizer keeps
   * the shadow of unmapped memory: the next stack mapped here (another
   * worker's fiber) would start with their redzones inside its own frames,
   * which its compiler assumes clean. */
  ASAN_UNPOISON_MEMORY_REGION(f->stack, f->stack_size);
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
  for (unsigned i = 0; i < t->nslots; i++)
    if (t->slots[i]) fiber_unmap(t->slots[i]);
  sim_free(t->slots);
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

static sim_fiber *fiber_new(void) {
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
  f->tsan = tsan_create();
#endif
  return f;
}

#if SIM_TSAN
/* ThreadSanitizer takes a fiber for one thread: a kernel thread that ran
 * on a fiber another had ended on would come after all that one did, and a
 * race between them go unseen (a missing __syncthreads between threads
 * that each run to their end, the common case). So thread i of a ring
 * always runs on the worker's fiber i, apart from any other thread of the
 * ring; past POOL_MAX threads (a large cooperative launch), on the pool's. */
static sim_fiber *slot_fiber(fiber_thread *t, unsigned slot) {
  if (slot >= POOL_MAX) return NULL;
  if (slot >= t->nslots) {
    unsigned n = t->nslots ? t->nslots : 64;
    while (n <= slot) n *= 2;
    sim_fiber **s = sim_realloc(t->slots, n * sizeof *s);
    if (!s) return NULL;
    memset(s + t->nslots, 0, (n - t->nslots) * sizeof *s);
    t->slots = s;
    t->nslots = n;
  }
  sim_fiber *f = t->slots[slot];
  if (!f) {
    if (!(f = fiber_new())) return NULL;
    f->slot = true;
    t->slots[slot] = f;
  } else if (f->busy) {
    return NULL;
  }
  f->busy = true;
  return f;
}
#endif

sim_fiber *sim_fiber_alloc(unsigned slot) {
  fiber_thread *t = self_thread;
#if SIM_TSAN
  sim_fiber *s = slot_fiber(t, slot);
  if (s) return s;
#else
  (void)slot;
#endif
  if (t->pool) {
    sim_fiber *f = t->pool;
    t->pool = f->next;
    t->npool--;
    f->next = NULL;
    return f;
  }
  return fiber_new();
}

static void pool_put(fiber_thread *t, sim_fiber *f) {
  if (f->slot) {
    f->busy = false;
    return;
  }
  if (t->npool >= POOL_MAX) {
    fiber_unmap(f);
    return;
  }
  f->next = t->pool;
  t->pool = f;
  t->npool++;
}

/* A fiber whose thread did not end (abandoned by a fault) or never
 * started: its next thread starts from a fresh context. */
void sim_fiber_free(sim_fiber *f) {
  fiber_thread *t = self_thread;
#if SIM_TSAN
  /* Its record of calls holds frames that will never return: a new
   * ThreadSanitizer fiber for the next thread. */
  if (f->ctx && !f->fresh) {
    tsan_destroy(f, true);
    f->tsan = tsan_create();
  }
#endif
  f->ctx = NULL;
  f->parked = false;
#if FIBER_ASAN
  /* A fiber abandoned mid-call (an aborted kernel) leaves its frames'
   * poison behind; the next one to use the stack starts clean. */
  ASAN_UNPOISON_MEMORY_REGION(f->stack, f->stack_size);
#endif
  pool_put(t, f);
}

/* After every resume: what the jump handed over is the fiber left, which
 * resumes at from.fctx next; one whose thread ended goes back to the pool
 * now that nothing runs on its stack, parked where it resumes for its next
 * thread. Nothing here reads a thread-local: a switch costs no TLS lookup. */
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
    left->parked = true;
    pool_put(self_thread, left);
  }
}

static void jump(sim_fiber *from, sim_fiber *to, bool sync) {
  void *fake = NULL;
  /* All of it before the switch below: after it, ThreadSanitizer takes an
   * access for `to`'s, which a fresh fiber makes outside engine code. */
  to->fresh = false;
  from->target = to;
  void *ctx = to->ctx;
#if FIBER_ASAN
  __sanitizer_start_switch_fiber(&fake, to->stack, to->stack_size);
#endif
#if SIM_TSAN
  from->tsan_ign = tsan_depth;
  tsan_depth = to->tsan_ign;
  /* Threads of one block run one after another here, but on a GPU they run
   * at once: no order between them unless a barrier, an atomic or a warp
   * exchange says so (those annotate it), so that ThreadSanitizer reports
   * a missing __syncthreads as the race it is. */
  __tsan_switch_to_fiber(to->tsan, sync ? 0 : __tsan_switch_to_fiber_no_sync);
#else
  (void)sync;
#endif
  transfer_t back = jump_fcontext(ctx, from);
  resumed(back, fake);
}

/* A fiber's life: each thread it is prepared for runs to its end, then
 * the fiber parks here (resumed() pools it) until it is prepared and
 * switched to again. */
static void fiber_entry(transfer_t from) {
  /* A fiber runs engine code except inside the kernel (block.c's
   * thread_main); a fresh ThreadSanitizer fiber has no ignores yet. */
  sim_k_engine_enter();
  sim_fiber *self = ((sim_fiber *)from.data)->target;
  resumed(from, NULL);
  for (;;) {
    self->fn(self->arg);
    self->leaving = true;
    jump(self, self->exit_to, self->exit_sync);
  }
}

void sim_fiber_prepare(sim_fiber *f, void (*fn)(void *), void *arg) {
  f->fn = fn;
  f->arg = arg;
  if (!f->parked) {
    f->ctx = make_fcontext(f->stack + f->stack_size, f->stack_size, fiber_entry);
    f->fresh = true;
  }
}

void sim_fiber_switch(sim_fiber *from, sim_fiber *to, bool sync) {
  if (from == to) return;
  jump(from, to, sync);
}

void sim_fiber_exit_to(sim_fiber *from, sim_fiber *to, bool sync) {
  from->exit_to = to;
  from->exit_sync = sync;
}

void sim_fiber_escape(sim_fiber *from, sim_fiber *to) {
#if FIBER_ASAN
  __sanitizer_start_switch_fiber(NULL, to->stack, to->stack_size);
#endif
#if SIM_TSAN
  from->tsan_ign = tsan_depth;
  tsan_depth = to->tsan_ign;
  __tsan_switch_to_fiber(to->tsan, 0);
#endif
  (void)from;
  (void)to;
}
