/* ctx.c — what a case calls: verdicts, notes, collectives, deferred frees. */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "runner.h"
#ifdef NCCLSIM
#include <nccl_device.h>
#include <ncclsim.h>
#endif

struct ctx_defer {
  void (*fn)(void *);
  void *arg;
  struct ctx_defer *next;
};

static void vemit(case_ctx_t *ctx, enum event_kind kind, const char *prefix,
                  const char *fmt, va_list ap)
{
  struct case_event ev;
  int n;

  memset(&ev, 0, sizeof ev);
  ev.kind = kind;
  ev.rank = ctx->rank;
  n = snprintf(ev.text, sizeof ev.text, "%s", prefix ? prefix : "");
  vsnprintf(ev.text + n, sizeof ev.text - (size_t)n, fmt, ap);
  if (kind == EV_FAIL || kind == EV_SKIP)
    ctx->stopped = true;
  ctx->launch->emit(ctx, &ev);
}

void ctx_emit(case_ctx_t *ctx, enum event_kind kind, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vemit(ctx, kind, NULL, fmt, ap);
  va_end(ap);
}

bool case_expect_(case_ctx_t *ctx, bool ok, const char *file, int line,
                  const char *fmt, ...)
{
  const char *base = strrchr(file, '/');
  char where[256];
  va_list ap;

  if (ok)
    return true;
  snprintf(where, sizeof where, "%s:%d: ", base ? base + 1 : file, line);
  va_start(ap, fmt);
  vemit(ctx, EV_FAIL, where, fmt, ap);
  va_end(ap);
  return false;
}

void case_skip_(case_ctx_t *ctx, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vemit(ctx, EV_SKIP, NULL, fmt, ap);
  va_end(ap);
}

void case_divergence(case_ctx_t *ctx, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vemit(ctx, EV_DIVERGENCE, NULL, fmt, ap);
  va_end(ap);
}

void ctx_note(case_ctx_t *ctx, const char *fmt, ...)
{
  va_list ap;

  if (!ctx->verbose)
    return;
  va_start(ap, fmt);
  vemit(ctx, EV_NOTE, NULL, fmt, ap);
  va_end(ap);
}

void case_skip_nccl_version(case_ctx_t *ctx, const char *why)
{
  int v = 0;

  ncclGetVersion(&v);
  case_skip_(ctx, "not supported by NCCL %d.%d.%d%s%s%s", v / 10000, v / 100 % 100, v % 100, why ? " (" : "",
             why ? why : "", why ? ")" : "");
}

void case_skip_unsupported(case_ctx_t *ctx)
{
  case_skip_nccl_version(ctx, n4c_last_error_message());
}

bool case_sim_hosts(void)
{
#ifdef NCCLSIM
  const char *h = getenv("NCCLSIM_HOST_ID");
  return h && *h && strcmp(h, "auto") != 0;
#else
  return false;
#endif
}

int case_slowdown(void)
{
  const char *e = getenv("N4C_SLOWDOWN");
  char *end;
  long v = e ? strtol(e, &end, 10) : 0;

  if (e && *e && *end == '\0' && v >= 1 && v <= 1000)
    return (int)v;
  return N4C_SLOWDOWN;
}

bool case_skip_not_across_hosts(case_ctx_t *ctx, bool from_nccl4c)
{
#ifdef NCCLSIM
  /* ncclsim refuses what it does not yet run on a communicator that spans
   * simulated hosts (--sim-hosts) with one message: that is a skip that
   * says so, not a failure of the claim. */
  const char *e = ncclGetLastError(NULL);
  if (!e || !strstr(e, "does not yet run") || !strstr(e, "across hosts"))
    return false;
  /* Only for the NCCL call that just failed: ncclsim's message starts with
   * its name, and nccl4c's last message names it too (or it was called
   * directly, with its result checked at once). */
  char fn[64];
  size_t n = strcspn(e, ":");
  const char *m = n4c_last_error_message();
  if (n >= sizeof fn)
    return false;
  memcpy(fn, e, n);
  fn[n] = 0;
  if (from_nccl4c && (!m || !strstr(m, fn)))
    return false;
  case_skip_(ctx, "ncclsim does not yet run this across hosts: %s", e);
  return true;
#else
  (void)ctx, (void)from_nccl4c;
  return false;
#endif
}

bool case_refused_across_hosts(case_ctx_t *ctx, n4c_status_t st)
{
  return st == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidUsage && case_skip_not_across_hosts(ctx, true);
}

bool case_status_(case_ctx_t *ctx, n4c_status_t got, n4c_status_t want,
                  const char *call, const char *file, int line)
{
  const char *msg;
  char nccl[64] = "";

  if (got == want)
    return true;
  if (got == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidUsage && case_skip_not_across_hosts(ctx, true))
    return false;
  msg = n4c_last_error_message();
  /* A function the linked NCCL lacks is not a failure of the claim: the
   * case is a skip that names the version, so that a run on an older NCCL
   * (2.28 on the GPU hosts of docs/conformance/) reports no failure for
   * what it cannot check. */
  if (got == N4C_ENOTSUP) {
    case_skip_unsupported(ctx);
    return false;
  }
  if (got == N4C_ENCCL)
    snprintf(nccl, sizeof nccl, " (%s)", ncclGetErrorString(n4c_last_nccl_result()));
  return case_expect_(ctx, false, file, line, "%s returned %s%s, expected %s%s%s",
                      call, n4c_status_name(got), nccl, n4c_status_name(want),
                      msg && *msg ? "; last error: " : "", msg ? msg : "");
}

bool ctx_barrier(case_ctx_t *ctx)
{
  return ctx->launch->barrier(ctx);
}

bool ctx_allgather(case_ctx_t *ctx, const void *mine, size_t len, void *all, size_t all_bytes)
{
  if (len > CTX_XCHG_MAX || all_bytes / (size_t)ctx->nranks < len)
    abort(); /* a bug in the case, not in what it tests */
  return ctx->launch->allgather(ctx, mine, all, len);
}

bool ctx_bcast(case_ctx_t *ctx, void *buf, size_t len, int root)
{
  if (len > CTX_XCHG_MAX)
    abort();
  return ctx->launch->bcast(ctx, buf, len, root);
}

bool ctx_new_unique_id(case_ctx_t *ctx, ncclUniqueId *id)
{
  if (ctx->rank == 0 && !CASE_EXPECT(ctx, ncclGetUniqueId(id) == ncclSuccess,
                                     "ncclGetUniqueId failed"))
    memset(id, 0, sizeof *id); /* still join the broadcast below */
  return ctx_bcast(ctx, id, sizeof *id, 0);
}

void ctx_defer(case_ctx_t *ctx, void (*fn)(void *), void *arg)
{
  struct ctx_defer *d = malloc(sizeof *d);

  if (d == NULL) {
    /* Release now rather than leak silently; the case is failing anyway. */
    CASE_EXPECT(ctx, false, "out of memory registering a release");
    fn(arg);
    return;
  }
  d->fn = fn;
  d->arg = arg;
  d->next = ctx->defers;
  ctx->defers = d;
}

void ctx_run_defers(case_ctx_t *ctx)
{
#ifdef NCCLSIM
  /* A case that stopped inside a group (a failed or skipped call between
   * group start and end) must not leave it open: under --procs and --mpi
   * this thread runs the next case, whose calls would join the group. */
  if (ncclsimGroupDepth() > 0)
    ctx_note(ctx, "the case left %d group(s) open: ended here", ncclsimGroupDepth());
  while (ncclsimGroupDepth() > 0)
    (void)n4c_group_end();
#endif
  while (ctx->defers) {
    struct ctx_defer *d = ctx->defers;

    ctx->defers = d->next;
    d->fn(d->arg);
    free(d);
  }
}

static void comm_free(void *comm)
{
  n4c_comm_free(comm);
}

void ctx_defer_comm(case_ctx_t *ctx, n4c_comm_t *comm)
{
  ctx_defer(ctx, comm_free, comm);
}

n4c_status_t ctx_comm_init(case_ctx_t *ctx, n4c_comm_t **comm)
{
  n4c_status_t st = n4c_comm_init(comm, ctx->nranks, ctx->rank, &ctx->id, 1, NULL);

  if (st == N4C_OK)
    ctx_defer_comm(ctx, *comm);
  return st;
}

bool ctx_topology(case_ctx_t *ctx, n4c_comm_t *comm, case_topo_t *t)
{
  n4c_comm_properties_t p;
  n4c_status_t st = n4c_comm_properties(comm, &p);

  memset(t, 0, sizeof *t);
  if (st == N4C_ENOTSUP) {
    case_skip_unsupported(ctx);
    return false;
  }
  if (!CASE_EXPECT(ctx, st == N4C_OK, "n4c_comm_properties: %s; %s", n4c_status_name(st),
                   n4c_last_error_message()))
    return false;
  if (!CASE_EXPECT(ctx, p.n_lsa_teams >= 1 && p.n_lsa_teams <= p.nranks && p.nranks == ctx->nranks,
                   "properties give %d LSA team(s) for %d ranks (the case has %d)", p.n_lsa_teams,
                   p.nranks, ctx->nranks))
    return false;
  t->nnodes = p.n_lsa_teams;
#ifdef NCCLSIM
  /* ncclsim's <nccl_device.h> is C: ask NCCL for the team itself, which
   * also describes a short last node (NCCLSIM_RANKS_PER_NODE=3 of 4). */
  ncclTeam_t lsa = ncclTeamLsa(n4c_comm_handle(comm));
  if (!CASE_EXPECT(ctx, lsa.nRanks >= 1 && lsa.rank >= 0 && lsa.rank < lsa.nRanks && lsa.stride == 1 &&
                   lsa.rank <= ctx->rank && ctx->rank - lsa.rank + lsa.nRanks <= ctx->nranks,
                   "ncclTeamLsa gives %d ranks, rank %d, stride %d for rank %d of %d", lsa.nRanks,
                   lsa.rank, lsa.stride, ctx->rank, ctx->nranks))
    return false;
  t->lsa_size = lsa.nRanks;
  t->lsa_rank = lsa.rank;
#else
  /* Real NCCL's team queries are C++: with teams of equal size, the
   * properties say which ranks share one. */
  if (p.nranks % p.n_lsa_teams != 0) {
    case_skip_(ctx, "%d ranks in %d LSA teams: teams of unequal size, whose members the "
               "properties do not say", p.nranks, p.n_lsa_teams);
    return false;
  }
  t->lsa_size = p.nranks / p.n_lsa_teams;
  t->lsa_rank = ctx->rank % t->lsa_size;
#endif
  t->lsa_first = ctx->rank - t->lsa_rank;
  return true;
}

static void stream_destroy(void *s)
{
  cudaStreamDestroy(s);
}

cudaError_t ctx_stream_create(case_ctx_t *ctx, cudaStream_t *stream)
{
  cudaError_t e = cudaStreamCreate(stream);

  if (e == cudaSuccess)
    ctx_defer(ctx, stream_destroy, *stream);
  return e;
}

static void cuda_free(void *p)
{
  cudaFree(p);
}

cudaError_t ctx_cuda_malloc(case_ctx_t *ctx, void **ptr, size_t bytes)
{
  cudaError_t e = cudaMalloc(ptr, bytes);

  if (e == cudaSuccess)
    ctx_defer(ctx, cuda_free, *ptr);
  return e;
}

void *ctx_host_malloc(case_ctx_t *ctx, size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1);

  if (p)
    ctx_defer(ctx, free, p);
  return p;
}
