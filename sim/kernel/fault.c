/*
 * sim/kernel/fault.c — a kernel's faults: a bad address (SIGSEGV, SIGBUS
 * in a kernel thread), a failed device assert, __trap.
 *
 * Each ends the kernel as a GPU's fault does: the error is sticky on the
 * device (every later call there returns it) and the stream's error. What
 * a GPU leaves out, ncclsim says: the kernel, block and thread, and the
 * address and what it belongs to.
 *
 * A signal in a kernel thread cannot return to the faulting instruction;
 * the handler jumps back to the worker's context (siglongjmp to the
 * sigsetjmp of sim_k_run), abandoning the kernel's fibers. A signal on any
 * other thread goes to the handler that was there before.
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"


static struct sigaction old_segv, old_bus;

static void pass_on(int sig, siginfo_t *si, void *uc) {
  const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
  if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
    old->sa_sigaction(sig, si, uc);
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  } else {
    /* The default: returning re-runs the access, which now kills. */
    signal(sig, SIG_DFL);
  }
}

/* What the address is, as far as ncclsim knows. */
static void describe_address(kgrid *g, const void *addr, char *buf, size_t len) {
  kthread *t = g->running;
  const char *a = addr;
  if (t && t->fiber && a < t->fiber->stack && a >= (const char *)t->fiber->map) {
    snprintf(buf, len, ": the thread's stack overflowed (NCCLSIM_KERNEL_STACK_KB=%s)",
             sim_param_text(SIM_P_KERNEL_STACK_KB));
    return;
  }
  if (!addr) {
    snprintf(buf, len, " (a null pointer)");
    return;
  }
  sim_alloc_info info;
  /* The nearest allocation below, within 64 KiB: an access just past the
   * end of an allocation is the usual bad address. */
  for (size_t back = 0; back <= 65536; back += 4096) {
    if ((uintptr_t)a < back) break;
    if (sim_mem_lookup(a - back, &info)) {
      size_t off = (size_t)(a - (const char *)info.base);
      if (off < info.size)
        snprintf(buf, len, ", %zu bytes into an allocation of %zu bytes on device %d", off, info.size, info.device);
      else
        snprintf(buf, len, ", %zu bytes past the end of an allocation of %zu bytes at %p on device %d",
                 off - info.size, info.size, info.base, info.device);
      return;
    }
  }
  snprintf(buf, len, ", in no allocation of ncclsim's");
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
  kgrid *g = sim_k_grid;
  if (!g || !g->jmp_armed || !g->running) {
    pass_on(sig, si, uc);
    return;
  }
  kthread *t = g->running;
  sim_k_engine_enter_handler();
  char where[256], what[256];
  sim_k_where(g, g->running, where, sizeof where);
  describe_address(g, si->si_addr, what, sizeof what);
  sim_k_fault(g, cudaErrorIllegalAddress, "%s: %s at address %p%s", where,
              sig == SIGSEGV ? "an access to memory it may not touch" : "a bus error", si->si_addr, what);
  g->running = NULL;
  sim_fiber_escape(t->fiber, g->home);
  siglongjmp(g->jmp, 1);
}

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static void install(int sig, struct sigaction *old) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, old);
}

/* At every run: a handler the program (or a test harness) installed since
 * is kept, to be called for faults outside kernels, and ours goes back.
 * One query of SIGSEGV's tells (both are ours, or neither). */
void sim_k_signals_install(void) {
  struct sigaction cur;
  if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) return;
  pthread_mutex_lock(&install_lock);
  install(SIGSEGV, &old_segv);
  install(SIGBUS, &old_bus);
  pthread_mutex_unlock(&install_lock);
}

SIM_EXPORT void __ncclsim_assert_fail(const char *expr, const char *file, unsigned line, const char *function) {
  kthread *t = (kthread *)__ncclsim_self;
  if (!t) {
    extern void __assert_fail(const char *, const char *, unsigned, const char *) __attribute__((noreturn));
    __assert_fail(expr, file, line, function);
  }
  kgrid *g = sim_k_grid;
  const kblock *b = t->pub.block;
  /* CUDA's line, as a failing thread prints it. */
  fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line, function,
          b->bid.x, b->bid.y, b->bid.z, t->tid.x, t->tid.y, t->tid.z, expr);
  char where[256];
  sim_k_where(g, t, where, sizeof where);
  sim_k_abort(g, cudaErrorAssert, "%s: %s:%u: assertion `%s` failed", where, file, line, expr);
}

SIM_EXPORT int __ncclsim_fault(int err, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  kthread *t = (kthread *)__ncclsim_self;
  if (!t) {
    fprintf(stderr, "ncclsim: %s\n", msg);
    return err;
  }
  kgrid *g = sim_k_grid;
  char where[256];
  sim_k_where(g, t, where, sizeof where);
  sim_k_abort(g, (cudaError_t)err, "%s: %s", where, msg);
}

SIM_EXPORT uint64_t __ncclsim_timeout_ns(void) { return sim_timeout_ns(); }
SIM_EXPORT uint64_t __ncclsim_now_ns(void) { return sim_now_ns(); }

SIM_EXPORT const char *__ncclsim_where(char *buf, size_t len) {
  kthread *t = (kthread *)__ncclsim_self;
  if (!t) snprintf(buf, len, "a host thread");
  else sim_k_where(sim_k_grid, t, buf, len);
  return buf;
}

SIM_EXPORT void __ncclsim_trap(const char *why) {
  kthread *t = (kthread *)__ncclsim_self;
  if (!t) {
    fprintf(stderr, "ncclsim: %s called outside a kernel\n", why);
    abort();
  }
  kgrid *g = sim_k_grid;
  char where[256];
  sim_k_where(g, t, where, sizeof where);
  sim_k_abort(g, cudaErrorLaunchFailure, "%s: %s", where, why);
}
