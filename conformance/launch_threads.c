/*
 * launch_threads.c — ranks as threads of one process.
 *
 * Each case runs in a child process of its own (unless --no-fork), libuv
 * style: the child makes the unique id, runs one thread per rank, and
 * streams the ranks' events up a pipe; the parent reads them until the
 * child exits or the case's time is up, and then kills it. A hung or
 * crashed case so costs one case, not the run. The parent calls no CUDA
 * or NCCL function, so the real backend starts fresh in every child.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "runner.h"

#ifdef N4C_COVERAGE_TEST
/* libgcov: write this process's counters now (gcc >= 11). */
void __gcov_dump(void);
#endif

/* What the rank threads of one case share. */
struct shared {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int active;        /* ranks that have not returned */
  int arrived;       /* at the current barrier */
  unsigned gen;      /* barrier generation */
  bool stopped;      /* a rank failed, skipped or returned */
  bool snap_stopped; /* `stopped` when the last barrier released */
  unsigned char *xchg; /* nranks slots of CTX_XCHG_MAX */
  /* Where events go: the pipe (fd >= 0), or straight to the result. */
  int fd;
  struct run *run;
  struct case_result *res;
};

/* Events go up `fd` when it is >= 0, else straight into `res`. */
static void shared_init(struct shared *sh, int fd, struct run *run, struct case_result *res)
{
  memset(sh, 0, sizeof *sh);
  pthread_mutex_init(&sh->mu, NULL);
  pthread_cond_init(&sh->cv, NULL);
  sh->fd = fd;
  sh->run = run;
  sh->res = res;
}

static void emit_event(struct shared *sh, const struct case_event *ev)
{
  if (ev->kind == EV_FAIL || ev->kind == EV_SKIP) {
    pthread_mutex_lock(&sh->mu);
    sh->stopped = true;
    pthread_mutex_unlock(&sh->mu);
  }
  if (sh->fd >= 0) {
    /* One write of at most PIPE_BUF bytes: atomic among the rank threads.
     * If the parent is gone there is nobody to tell. */
    ssize_t n;
    do
      n = write(sh->fd, ev, sizeof *ev);
    while (n < 0 && errno == EINTR);
  } else {
    pthread_mutex_lock(&sh->mu);
    run_event(sh->run, sh->res, ev);
    pthread_mutex_unlock(&sh->mu);
  }
}

static void emit_runner(struct shared *sh, enum event_kind kind, int64_t value,
                        const char *text)
{
  struct case_event ev;

  memset(&ev, 0, sizeof ev);
  ev.kind = kind;
  ev.rank = -1;
  ev.value = value;
  snprintf(ev.text, sizeof ev.text, "%s", text);
  emit_event(sh, &ev);
}

static void thr_emit(case_ctx_t *ctx, const struct case_event *ev)
{
  emit_event(ctx->launch_data, ev);
}

/* Called with mu held. */
static void release(struct shared *sh)
{
  sh->arrived = 0;
  sh->gen++;
  sh->snap_stopped = sh->stopped;
  pthread_cond_broadcast(&sh->cv);
}

static bool thr_barrier(case_ctx_t *ctx)
{
  struct shared *sh = ctx->launch_data;
  bool ok;

  pthread_mutex_lock(&sh->mu);
  unsigned gen = sh->gen;
  if (++sh->arrived >= sh->active)
    release(sh);
  else
    while (gen == sh->gen)
      pthread_cond_wait(&sh->cv, &sh->mu);
  /* Stable until this rank arrives at the next barrier. */
  ok = !sh->snap_stopped;
  pthread_mutex_unlock(&sh->mu);
  return ok;
}

/* A rank that returned no longer holds up barriers. */
static void thr_leave(case_ctx_t *ctx)
{
  struct shared *sh = ctx->launch_data;

  pthread_mutex_lock(&sh->mu);
  sh->active--;
  sh->stopped = true;
  if (sh->arrived > 0 && sh->arrived >= sh->active)
    release(sh);
  pthread_mutex_unlock(&sh->mu);
}

static bool thr_allgather(case_ctx_t *ctx, const void *mine, void *all, size_t len)
{
  struct shared *sh = ctx->launch_data;
  bool ok;

  memcpy(sh->xchg + (size_t)ctx->rank * CTX_XCHG_MAX, mine, len);
  ok = thr_barrier(ctx);
  for (int r = 0; r < ctx->nranks; r++)
    memcpy((unsigned char *)all + (size_t)r * len, sh->xchg + (size_t)r * CTX_XCHG_MAX, len);
  return thr_barrier(ctx) && ok; /* nobody writes a slot before all have read */
}

static bool thr_bcast(case_ctx_t *ctx, void *buf, size_t len, int root)
{
  struct shared *sh = ctx->launch_data;
  bool ok;

  if (ctx->rank == root)
    memcpy(sh->xchg, buf, len);
  ok = thr_barrier(ctx);
  if (ctx->rank != root)
    memcpy(buf, sh->xchg, len);
  return thr_barrier(ctx) && ok;
}

static const struct launch_ops thr_ops = {
  thr_emit, thr_barrier, thr_allgather, thr_bcast
};

struct rank_arg {
  case_ctx_t ctx;
  case_fn *fn;
  pthread_t thread;
};

static void *rank_main(void *p)
{
  struct rank_arg *a = p;
  case_ctx_t *ctx = &a->ctx;
  cudaError_t e = cudaSetDevice(ctx->device);

  if (CASE_EXPECT(ctx, e == cudaSuccess, "cudaSetDevice(%d): %s", ctx->device,
                  cudaGetErrorName(e)))
    a->fn(ctx);
  thr_leave(ctx);
  ctx_run_defers(ctx);
  ctx_emit(ctx, EV_DONE, "%s", "");
  return NULL;
}

static void run_ranks(const struct run *run, const struct n4c_case *c, struct shared *sh)
{
  int nranks = run->nranks, ndev = 0;
  struct rank_arg *ranks;
  ncclUniqueId id;
  ncclResult_t r;
  cudaError_t e;
  char msg[256];

  if ((e = cudaGetDeviceCount(&ndev)) != cudaSuccess || ndev < 1) {
    snprintf(msg, sizeof msg, "no CUDA device: cudaGetDeviceCount gives %d (%s)",
             ndev, cudaGetErrorName(e));
    emit_runner(sh, EV_FAIL, 0, msg);
    return;
  }
  if ((r = ncclGetUniqueId(&id)) != ncclSuccess) {
    snprintf(msg, sizeof msg, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    emit_runner(sh, EV_FAIL, 0, msg);
    return;
  }
  sh->xchg = calloc((size_t)nranks, CTX_XCHG_MAX);
  ranks = calloc((size_t)nranks, sizeof *ranks);
  if (sh->xchg == NULL || ranks == NULL) {
    emit_runner(sh, EV_FAIL, 0, "out of memory starting the ranks");
    goto out;
  }
  sh->active = nranks;
  int started = 0;
  for (; started < nranks; started++) {
    struct rank_arg *a = &ranks[started];

    a->fn = c->fn;
    a->ctx.rank = started;
    a->ctx.nranks = nranks;
    a->ctx.device = started % ndev;
    a->ctx.ndevices = ndev;
    a->ctx.id = id;
    a->ctx.verbose = run->opts->verbose;
    a->ctx.shared_process = run->opts->no_fork;
    a->ctx.local_ranks = run->nranks;
    a->ctx.launch = &thr_ops;
    a->ctx.launch_data = sh;
    if (pthread_create(&a->thread, NULL, rank_main, a) != 0)
      break;
  }
  if (started < nranks) {
    /* The started ranks would wait for the others: end the process. */
    snprintf(msg, sizeof msg, "pthread_create failed for rank %d", started);
    emit_runner(sh, EV_FAIL, 0, msg);
    if (sh->fd >= 0)
      _exit(1);
    abort();
  }
  for (int i = 0; i < nranks; i++)
    pthread_join(ranks[i].thread, NULL);
out:
  free(ranks);
  free(sh->xchg);
}

static void probe(struct shared *sh)
{
  int version = 0, ndev = 0;

  if (ncclGetVersion(&version) == ncclSuccess)
    emit_runner(sh, EV_VERSION, version, "");
  if (cudaGetDeviceCount(&ndev) == cudaSuccess)
    emit_runner(sh, EV_DEVICES, ndev, "");
}

static double now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads events until the child closes the pipe or the deadline passes;
 * false on timeout. */
static bool collect(struct run *run, struct case_result *res, int fd, double deadline)
{
  struct case_event ev;
  size_t have = 0;

  for (;;) {
    double left = deadline - now();
    struct pollfd pfd = { fd, POLLIN, 0 };
    int n;

    if (left <= 0)
      return false;
    n = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      continue; /* deadline re-checked above */
    ssize_t got = read(fd, (char *)&ev + have, sizeof ev - have);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return true; /* EOF: the child has exited or closed its end */
    have += (size_t)got;
    if (have == sizeof ev) {
      run_event(run, res, &ev);
      have = 0;
    }
  }
}

/* Runs `c` (NULL: the probe) in a child; its events go to `res`. */
static void run_forked(struct run *run, const struct n4c_case *c, struct case_result *res)
{
  struct shared sh;
  int p[2], status;
  pid_t pid;

  if (pipe(p) != 0) {
    result_abort(res, "pipe: %s", strerror(errno));
    return;
  }
  fflush(NULL); /* or the child's exit would print our buffers twice */
  pid = fork();
  if (pid < 0) {
    result_abort(res, "fork: %s", strerror(errno));
    close(p[0]);
    close(p[1]);
    return;
  }
  if (pid == 0) {
    close(p[0]);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* die with an interrupted parent */
#endif
    shared_init(&sh, p[1], run, res);
    if (c)
      run_ranks(run, c, &sh);
    else
      probe(&sh);
#ifdef N4C_COVERAGE_TEST
    __gcov_dump(); /* _exit skips gcov's exit handler, and the case's counts */
#endif
    _exit(0);
  }
  close(p[1]);
  bool finished = collect(run, res, p[0], now() + run->opts->timeout);
  if (!finished)
    kill(pid, SIGKILL);
  close(p[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!finished) {
    char left[512];

    result_unfinished(res, left, sizeof left);
    result_abort(res, "timed out after %d s (ranks not finished: %s)",
                 run->opts->timeout, left);
  } else if (WIFSIGNALED(status)) {
    result_abort(res, "the case's process died of signal %d (%s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (WEXITSTATUS(status) != 0) {
    result_abort(res, "the case's process exited with status %d", WEXITSTATUS(status));
  }
}

void threads_probe(struct run *run)
{
  struct case_result res;

  result_init(&res, 0);
  if (run->opts->no_fork) {
    struct shared sh;

    shared_init(&sh, -1, run, &res);
    probe(&sh);
  } else {
    run_forked(run, NULL, &res);
  }
  if (res.verdict == VERDICT_FAIL)
    fprintf(run->tap, "# probe of the backend failed: %s\n", res.detail);
}

void threads_run_case(struct run *run, size_t i)
{
  struct case_result *res = &run->results[i];
  double t0 = now();

  result_init(res, run->nranks);
  if (run->opts->no_fork) {
    struct shared sh;

    shared_init(&sh, -1, run, res);
    run_ranks(run, run->cases[i], &sh);
  } else {
    run_forked(run, run->cases[i], res);
  }
  if (res->verdict != VERDICT_FAIL && res->ndone < res->nranks) {
    char left[512];

    result_unfinished(res, left, sizeof left);
    result_abort(res, "ranks %s did not report the end of the case", left);
  }
  res->seconds = now() - t0;
}
