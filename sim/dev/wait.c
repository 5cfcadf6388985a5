/*
 * sim/dev/wait.c — kernels' waits in the device API (barriers, signals,
 * counters, LL slots, GIN's own), and what they report when they cannot
 * complete.
 *
 * A wait polls, letting the block's other threads run between polls
 * (__ncclsim_yield) and progressing UCX when the device communicator
 * spans hosts (GIN from elsewhere lands only then). A GPU would spin
 * forever on a wait that cannot complete; here it ends at NCCLSIM_TIMEOUT
 * with a kernel fault (cudaErrorLaunchTimeout) whose message names the
 * rank, kernel, block and thread, what it waits for, the value it wants
 * and the value it has, and what every rank's kernels are doing with the
 * device communicator (each rank records its waits, sim_dev_activity).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

/* ---- activity ---- */

static void activity_lock(sim_dev_activity *a) {
  int expect = 0;
  while (!atomic_compare_exchange_weak_explicit(&a->lock, &expect, 1, memory_order_acquire, memory_order_relaxed)) {
    expect = 0;
    sim_cpu_relax();
  }
}
static void activity_unlock(sim_dev_activity *a) { atomic_store_explicit(&a->lock, 0, memory_order_release); }

void sim_dev_activity_set(struct ncclsimDevState *st, bool waiting, const char *fmt, ...) {
  sim_dev_activity *a = &st->act;
  char what[sizeof a->what], where[sizeof a->where];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  __ncclsim_where(where, sizeof where);
  activity_lock(a);
  memcpy(a->what, what, sizeof what);
  memcpy(a->where, where, sizeof where);
  activity_unlock(a);
  atomic_store_explicit(&a->since, __ncclsim_now_ns(), memory_order_relaxed);
  atomic_store_explicit(&a->waiting, waiting ? 1 : 0, memory_order_release);
}

static void activity_done(struct ncclsimDevState *st) {
  atomic_store_explicit(&st->act.since, __ncclsim_now_ns(), memory_order_relaxed);
  atomic_store_explicit(&st->act.waiting, 0, memory_order_release);
}

void sim_dev_activity_report(struct ncclsimDevState *st, char *buf, size_t len) {
  size_t n = 0;
  uint64_t now = __ncclsim_now_ns();
  const sim_net_map *m = st->clique->net;
  buf[0] = 0;
  for (int r = 0; r < st->nranks && n < len; r++) {
    int w;
    if (sim_net_remote(m, r)) {
      w = snprintf(buf + n, len - n, "%s rank %d: on another simulated host (not visible from here)", r ? ";" : ":", r);
    } else {
      struct ncclsimDevState *p = st->group ? atomic_load_explicit(&st->group->rank[r], memory_order_acquire) : NULL;
      if (!p) {
        w = snprintf(buf + n, len - n, "%s rank %d: has no device communicator #%llu (not created yet, or destroyed)",
                     r ? ";" : ":", r, (unsigned long long)st->seq);
      } else {
        int waiting = atomic_load_explicit(&p->act.waiting, memory_order_acquire);
        uint64_t since = atomic_load_explicit(&p->act.since, memory_order_relaxed);
        char what[sizeof p->act.what], where[sizeof p->act.where];
        activity_lock(&p->act);
        memcpy(what, p->act.what, sizeof what);
        memcpy(where, p->act.where, sizeof where);
        activity_unlock(&p->act);
        what[sizeof what - 1] = where[sizeof where - 1] = 0;
        double ago = since && now > since ? (double)(now - since) / 1e9 : 0.0;
        int kind = atomic_load_explicit(&p->act.op_kind, memory_order_acquire);
        uint64_t op_at = atomic_load_explicit(&p->act.op_at, memory_order_relaxed);
        if (kind && (!since || op_at > since) && !waiting) {
          /* its last GIN operation is later than its last wait */
          char sig[48] = "";
          int sig_type = atomic_load_explicit(&p->act.op_sig_type, memory_order_relaxed);
          if (sig_type == NCCLSIM_GIN_SIG_INDEXED)
            snprintf(sig, sizeof sig, ", signal %u", atomic_load_explicit(&p->act.op_signal, memory_order_relaxed));
          else if (sig_type == NCCLSIM_GIN_SIG_VA) snprintf(sig, sizeof sig, ", a VA signal");
          w = snprintf(buf + n, len - n, "%s rank %d: not waiting in the device API (last, %.1f s ago: %s to rank %d%s)",
                       r ? ";" : ":", r, now > op_at ? (double)(now - op_at) / 1e9 : 0.0, sim_dev_gin_op_name(kind),
                       atomic_load_explicit(&p->act.op_peer, memory_order_relaxed), sig);
        } else if (!since)
          w = snprintf(buf + n, len - n, "%s rank %d: no device-API call from a kernel yet", r ? ";" : ":", r);
        else if (waiting)
          w = snprintf(buf + n, len - n, "%s rank %d: %s: waits for %s (for %.1f s)", r ? ";" : ":", r, where, what, ago);
        else
          w = snprintf(buf + n, len - n, "%s rank %d: not waiting in the device API (last, %.1f s ago: %s, in %s)",
                       r ? ";" : ":", r, ago, what, where);
      }
    }
    if (w < 0) break;
    n += (size_t)w;
  }
}

/* ---- waits ---- */

enum { SPIN_POLLS = 64 };

/* How long a wait polls before its report. The kernel engine ends a
 * kernel whose threads all poll after NCCLSIM_TIMEOUT without progress,
 * timed from about when the wait began; its check runs first in each
 * round of the block's threads, so the wait ends a little earlier (a
 * twentieth, at most 50 ms), with its own, fuller, report. */
static uint64_t wait_limit(void) {
  uint64_t t = __ncclsim_timeout_ns(), margin = t / 20 < 50000000ull ? t / 20 : 50000000ull;
  return t - margin;
}

/* clock64()'s clock: the time-stamp counter, or ns where there is none. */
static uint64_t cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return __ncclsim_now_ns();
#endif
}

static uint64_t load(const void *addr, int bytes, int acquire) {
  int mo = acquire ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
  return bytes == 4 ? __atomic_load_n((const uint32_t *)addr, mo) : __atomic_load_n((const uint64_t *)addr, mo);
}

/* least <= v in `bits` bits of rolling arithmetic (nccl::utility::rollingLessEq). */
static bool met(uint64_t least, uint64_t v, int bits) {
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  return ((v - least) & mask) <= (mask >> 1);
}

static const char *kind_name(int kind) {
  switch (kind) {
  case NCCLSIM_WAIT_LSA_BARRIER: return "LSA barrier";
  case NCCLSIM_WAIT_GIN_BARRIER: return "GIN barrier";
  case NCCLSIM_WAIT_SIGNAL: return "GIN signal";
  case NCCLSIM_WAIT_VA_SIGNAL: return "GIN VA signal";
  case NCCLSIM_WAIT_COUNTER: return "GIN counter";
  case NCCLSIM_WAIT_LL_SLOT: return "LL all-to-all slot";
  default: return "device-API wait";
  }
}

/* "LSA barrier 3 (rank 1's arrival)" and the like. */
static void describe(const ncclsimDevWait *w, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s %d", kind_name(w->kind), w->index);
  if (n < 0 || (size_t)n >= len) return;
  if (w->kind == NCCLSIM_WAIT_VA_SIGNAL) n = snprintf(buf, len, "%s at window offset %d", kind_name(w->kind), w->index);
  if (n >= 0 && (size_t)n < len && w->context >= 0) n += snprintf(buf + n, len - n, " of GIN context %d", w->context);
  if (n >= 0 && (size_t)n < len && w->peer >= 0)
    snprintf(buf + n, len - n, w->kind == NCCLSIM_WAIT_LSA_BARRIER ? " (rank %d's arrival)" : " (rank %d's signal)",
             w->peer);
}

/* The kernel's fault (the engine prefixes the kernel, block and thread). */
static void __attribute__((noreturn)) timed_out(struct ncclsimDevState *st, const char *what, const char *values) {
  char peers[3072];
  peers[0] = 0;
  if (st) sim_dev_activity_report(st, peers, sizeof peers);
  __ncclsim_fault(cudaErrorLaunchTimeout,
                  "rank %d waited NCCLSIM_TIMEOUT=%s s for %s%s: it cannot complete (on a GPU this kernel would "
                  "hang). The ranks%s",
                  st ? st->rank : -1, sim_param_text(SIM_P_TIMEOUT), what, values, peers);
  abort(); /* a host thread that called device code */
}

/* Whether w goes to the timeline as a span of its own: waits on signals
 * and counters (barriers are their sessions' spans, LL slots too many). */
static bool traced(const ncclsimDevWait *w) {
  return w && w->comm && __atomic_load_n(&ncclsimDevTracing, __ATOMIC_RELAXED) &&
         (w->kind == NCCLSIM_WAIT_SIGNAL || w->kind == NCCLSIM_WAIT_VA_SIGNAL || w->kind == NCCLSIM_WAIT_COUNTER);
}

static void trace_wait(const ncclsimDevWait *w, uint64_t t0, uint64_t least, uint64_t v, bool timed_out_early) {
  struct ncclsimDevState *st = sim_dev_self(w->comm, "a device-API wait");
  char what[192];
  describe(w, what, sizeof what);
  sim_dev_trace(st, w->kind == NCCLSIM_WAIT_COUNTER ? "ncclGin::waitCounter" : "ncclGin::waitSignal", t0, -1, 0,
                "%s >= %llu, has %llu%s", what, (unsigned long long)least, (unsigned long long)v,
                timed_out_early ? " (its timeout ran out)" : "");
}

SIM_EXPORT uint64_t ncclsimDevWaitFor(const void *addr, int bytes, uint64_t least, int bits, int acquire,
                           const ncclsimDevWait *w) {
  uint64_t t_trace = traced(w) ? sim_ticks() : 0;
  uint64_t v = load(addr, bytes, acquire);
  /* A short spin first: a peer on another CPU answers within a few hundred
   * nanoseconds, faster than a round of the block's threads (the others
   * run meanwhile only once it ends, so it is kept short). */
  for (int i = 0; !met(least, v, bits) && i < SPIN_POLLS; i++) {
    sim_cpu_relax();
    v = load(addr, bytes, acquire);
  }
  if (met(least, v, bits)) {
    if (t_trace) trace_wait(w, t_trace, least, v, false);
    return v;
  }
  struct ncclsimDevState *st = w && w->comm ? sim_dev_self(w->comm, "a device-API wait") : NULL;
  char what[192];
  if (w) describe(w, what, sizeof what);
  else snprintf(what, sizeof what, "a device-API wait");
  if (st) sim_dev_activity_set(st, true, "%s (>= %llu)", what, (unsigned long long)least);
  uint64_t t0 = __ncclsim_now_ns(), limit = wait_limit();
  for (;;) {
    __ncclsim_yield(what);
    if (st && st->nhosts_elsewhere) sim_dev_net_progress(st);
    v = load(addr, bytes, acquire);
    if (met(least, v, bits)) break;
    if (__ncclsim_now_ns() - t0 > limit) {
      char values[128];
      uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
      snprintf(values, sizeof values, ": wants a value >= %llu, has %llu (%d-bit rolling compare)",
               (unsigned long long)(least & mask), (unsigned long long)(v & mask), bits);
      timed_out(st, what, values);
    }
  }
  if (st) activity_done(st);
  if (t_trace) trace_wait(w, t_trace, least, v, false);
  return v;
}

SIM_EXPORT int ncclsimDevWaitCycles(const void *addr, int bytes, uint64_t least, int bits, int acquire, uint64_t timeoutCycles,
                         const ncclsimDevWait *w) {
  uint64_t t_trace = traced(w) ? sim_ticks() : 0;
  uint64_t v = load(addr, bytes, acquire);
  if (met(least, v, bits)) {
    if (t_trace) trace_wait(w, t_trace, least, v, false);
    return 0;
  }
  struct ncclsimDevState *st = w && w->comm ? sim_dev_self(w->comm, "a device-API wait") : NULL;
  char what[192];
  if (w) describe(w, what, sizeof what);
  else snprintf(what, sizeof what, "a device-API wait");
  if (st) sim_dev_activity_set(st, true, "%s (>= %llu, timeout of %llu cycles)", what, (unsigned long long)least,
                               (unsigned long long)timeoutCycles);
  uint64_t c0 = cycles(), t0 = __ncclsim_now_ns(), limit = wait_limit();
  int rc = 0;
  for (;;) {
    __ncclsim_yield(what);
    if (st && st->nhosts_elsewhere) sim_dev_net_progress(st);
    v = load(addr, bytes, acquire);
    if (met(least, v, bits)) break;
    if (cycles() - c0 >= timeoutCycles) {
      rc = 1;
      break;
    }
    if (__ncclsim_now_ns() - t0 > limit) {
      char values[128];
      snprintf(values, sizeof values, ": wants a value >= %llu, has %llu", (unsigned long long)least,
               (unsigned long long)v);
      timed_out(st, what, values);
    }
  }
  if (st) activity_done(st);
  if (t_trace) trace_wait(w, t_trace, least, v, rc != 0);
  return rc;
}

void sim_dev_poll(struct ncclsimDevState *st, bool (*ready)(void *), void *arg, const char *what) {
  if (ready(arg)) return;
  sim_dev_activity_set(st, true, "%s", what);
  uint64_t t0 = __ncclsim_now_ns(), limit = wait_limit();
  while (!ready(arg)) {
    __ncclsim_yield(what);
    if (st->nhosts_elsewhere) sim_dev_net_progress(st);
    if (__ncclsim_now_ns() - t0 > limit) timed_out(st, what, "");
  }
  activity_done(st);
}
