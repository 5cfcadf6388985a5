/*
 * launch_procs.c — ranks as processes of one fork tree (--procs N), no MPI.
 *
 *   n4c-conformance --procs 4 [--ranks-per-proc T] [--json FILE] ...
 *
 * The parent forks N rank processes once and they run every case in turn,
 * as MPI processes do (so ctx->shared_process is true): rank r runs as rank
 * r of every case, on device r mod the device count. With --ranks-per-proc
 * T, process p runs ranks p*T .. p*T+T-1 as threads of its own, started
 * for each case (N*T ranks in all), as a job of T GPUs per node does. Forking once, rather
 * than once per case, is the faster choice (a real CUDA backend starts once
 * per process, not once per case and rank), and isolation does not suffer:
 * when a case times out or a rank process dies, the parent kills the whole
 * set (SIGKILL) and forks a fresh one for the next case, so a hang or a
 * crash costs that case, not the run.
 *
 * The parent only orchestrates and reports; like the threads launcher it
 * calls no CUDA or NCCL function (a real CUDA context does not survive
 * fork): rank 0 reports the NCCL version and device count. On ncclsim the
 * parent calls ncclsimProcessesInit() before the first fork, which is what
 * lets the rank processes join one communicator through a unique id.
 *
 *   - Commands: the parent sends each rank the index of the next case on a
 *     socket of its own; end of file there ends the rank process.
 *   - Events: the ranks write their events (struct case_event, atomic pipe
 *     writes) up one pipe, and the parent reads them as the threads launcher
 *     does, so a rank's notes appear under -v and what it said before a hang
 *     or a crash is still reported. A case ends when every rank has sent
 *     EV_DONE.
 *   - The ctx collectives (barrier, allgather, bcast): a control block in
 *     memory shared by the rank processes (mmap MAP_SHARED|MAP_ANONYMOUS
 *     before the fork), with a process-shared mutex and condition variable,
 *     on the same algorithm as the rank threads of launch_threads.c: a rank
 *     that returns from the case no longer holds up barriers and marks the
 *     case stopped, so its peers' ctx collectives end with false instead of
 *     waiting for it. The parent never takes the mutex, so a rank killed
 *     while holding it cannot block the parent; for a fresh set of ranks the
 *     parent initialises the block anew.
 *   - Rank 0 makes each case's unique id and passes it through the control
 *     block.
 *
 * The watchdog is the parent: a case still running --timeout seconds after
 * the parent sent it (no grace: no rank-side watchdog needs to go first)
 * fails "timed out", naming the ranks (and their pids) that had not
 * finished. A rank process that dies (a signal, or an exit)
 * before the case ended fails the case, naming the rank, its pid and the
 * signal or status. Either way the parent kills the rest of the set, the
 * run goes on with fresh processes (their startup is checked as at the
 * start of the run; if that fails, the run ends with "Bail out!"), and it
 * ends with status 1. On ncclsim the engine's shared state outlives the
 * killed processes; should they have left it unusable, the later cases say
 * so. A rank process that exits badly after the last case (a crash in its
 * teardown, or a sanitizer's status: ThreadSanitizer's 66 after a report)
 * is reported as a "#" diagnostic and also makes the status 1. Rank
 * processes die with the parent (PR_SET_PDEATHSIG, on Linux). Under -v the
 * parent lists the rank processes' pids whenever it starts a set.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "runner.h" /* <nccl.h>, which defines NCCLSIM on ncclsim */
#ifdef NCCLSIM
#include <ncclsim.h>
#endif

#ifdef N4C_COVERAGE_TEST
/* libgcov: write this process's counters now (gcc >= 11). */
void __gcov_dump(void);
#endif

/* The control block, shared by the rank processes of one set. */
struct ctl {
  pthread_mutex_t mu; /* process-shared */
  pthread_cond_t cv;  /* process-shared */
  int active;         /* ranks that have not returned from the case */
  int arrived;        /* at the current barrier */
  unsigned gen;       /* barrier generation */
  bool stopped;       /* a rank failed, skipped or returned */
  bool snap_stopped;  /* `stopped` when the last barrier released */
  ncclUniqueId id;    /* the case's, from rank 0 */
  unsigned char xchg[]; /* nranks slots of CTX_XCHG_MAX */
};

/* A rank process: ranks proc * per .. proc * per + per - 1. */
struct child {
  pid_t pid;   /* 0: not running */
  int cmd;     /* the parent's end of the command socket, -1 when closed */
  int status;  /* from waitpid, once reaped */
  bool reaped;
};

static struct {
  struct run *run;
  int nranks;      /* nprocs * per */
  int nprocs, per; /* rank processes; ranks (threads) in each */
  struct ctl *ctl;
  size_t ctl_size;
  struct child *kids;
  bool alive;      /* a set of rank processes is running */
  int events;      /* the read end of the event pipe */
  int sigchld[2];  /* self-pipe: a byte per SIGCHLD */
  pid_t parent;
  /* In a rank process. */
  int proc, evfd, ndev;
} P = { .events = -1, .sigchld = { -1, -1 } };

static double now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------ in a rank process */

static void write_event(const struct case_event *ev)
{
  /* At most PIPE_BUF bytes: one atomic write among the rank processes. If
   * the parent is gone there is nobody to tell (and PDEATHSIG ends us). */
  ssize_t n;

  do
    n = write(P.evfd, ev, sizeof *ev);
  while (n < 0 && errno == EINTR);
}

static void proc_emit(case_ctx_t *ctx, const struct case_event *ev)
{
  struct ctl *c = ctx->launch_data;

  if (ev->kind == EV_FAIL || ev->kind == EV_SKIP) {
    pthread_mutex_lock(&c->mu);
    c->stopped = true;
    pthread_mutex_unlock(&c->mu);
  }
  write_event(ev);
}

static void emit_self(int rank, enum event_kind kind, int64_t value)
{
  struct case_event ev;

  memset(&ev, 0, sizeof ev);
  ev.kind = kind;
  ev.rank = rank;
  ev.value = value;
  write_event(&ev);
}

/* Called with mu held. */
static void release(struct ctl *c)
{
  c->arrived = 0;
  c->gen++;
  c->snap_stopped = c->stopped;
  pthread_cond_broadcast(&c->cv);
}

static bool proc_barrier(case_ctx_t *ctx)
{
  struct ctl *c = ctx->launch_data;
  bool ok;

  pthread_mutex_lock(&c->mu);
  unsigned gen = c->gen;
  if (++c->arrived >= c->active)
    release(c);
  else
    while (gen == c->gen)
      pthread_cond_wait(&c->cv, &c->mu);
  /* Stable until this rank arrives at the next barrier. */
  ok = !c->snap_stopped;
  pthread_mutex_unlock(&c->mu);
  return ok;
}

/* A rank that returned no longer holds up barriers. */
static void proc_leave(case_ctx_t *ctx)
{
  struct ctl *c = ctx->launch_data;

  pthread_mutex_lock(&c->mu);
  c->active--;
  c->stopped = true;
  if (c->arrived > 0 && c->arrived >= c->active)
    release(c);
  pthread_mutex_unlock(&c->mu);
}

static bool proc_allgather(case_ctx_t *ctx, const void *mine, void *all, size_t len)
{
  struct ctl *c = ctx->launch_data;
  bool ok;

  memcpy(c->xchg + (size_t)ctx->rank * CTX_XCHG_MAX, mine, len);
  ok = proc_barrier(ctx);
  for (int r = 0; r < ctx->nranks; r++)
    memcpy((unsigned char *)all + (size_t)r * len, c->xchg + (size_t)r * CTX_XCHG_MAX, len);
  return proc_barrier(ctx) && ok; /* nobody writes a slot before all have read */
}

static bool proc_bcast(case_ctx_t *ctx, void *buf, size_t len, int root)
{
  struct ctl *c = ctx->launch_data;
  bool ok;

  if (ctx->rank == root)
    memcpy(c->xchg, buf, len);
  ok = proc_barrier(ctx);
  if (ctx->rank != root)
    memcpy(buf, c->xchg, len);
  return proc_barrier(ctx) && ok;
}

static const struct launch_ops proc_ops = {
  proc_emit, proc_barrier, proc_allgather, proc_bcast
};

/* One rank's run of case cs, on the calling thread; `why` set: the rank
 * could not start (its thread), and fails with that. */
static void rank_case(const struct n4c_case *cs, int rank, const char *why)
{
  struct ctl *c = P.ctl;
  case_ctx_t ctx;
  ncclResult_t r = ncclSuccess;
  cudaError_t e;
  bool ok = true;

  memset(&ctx, 0, sizeof ctx);
  ctx.rank = rank;
  ctx.nranks = P.nranks;
  ctx.ndevices = P.ndev;
  ctx.device = P.ndev > 0 ? rank % P.ndev : 0;
  ctx.verbose = P.run->opts->verbose;
  ctx.shared_process = true;
  ctx.local_ranks = P.per;
  ctx.launch = &proc_ops;
  ctx.launch_data = c;

  if (why) {
    CASE_EXPECT(&ctx, false, "%s", why);
    proc_leave(&ctx);
    ctx_emit(&ctx, EV_DONE, "%s", "");
    return;
  }
  if (rank == 0) {
    r = ncclGetUniqueId(&c->id);
    ok = CASE_EXPECT(&ctx, r == ncclSuccess, "ncclGetUniqueId on rank 0: %s",
                     ncclGetErrorString(r));
  }
  /* The id is there for all after this; false if rank 0 could not make it
   * (it said why). */
  ok = proc_barrier(&ctx) && ok;
  ctx.id = c->id;
  if (ok) {
    e = P.ndev > 0 ? cudaSetDevice(ctx.device) : cudaErrorNoDevice;
    if (CASE_EXPECT(&ctx, e == cudaSuccess, "cudaSetDevice(%d) with %d devices: %s",
                    ctx.device, P.ndev, cudaGetErrorName(e)))
      cs->fn(&ctx);
  }
  proc_leave(&ctx);
  ctx_run_defers(&ctx);
  ctx_emit(&ctx, EV_DONE, "%s", "");
}

struct rank_thread {
  const struct n4c_case *cs;
  int rank;
  pthread_t thread;
};

static void *rank_thread_main(void *p)
{
  struct rank_thread *t = p;

  rank_case(t->cs, t->rank, NULL);
  return NULL;
}

/* The process's ranks' run of case cs: its first rank on this thread, the
 * others on threads of their own, started for the case and joined after
 * it, as the threads launcher does. */
static void proc_case(const struct n4c_case *cs)
{
  struct rank_thread t[MAX_RANKS];
  int first = P.proc * P.per;
  bool started[MAX_RANKS] = { false };

  for (int i = 1; i < P.per; i++) {
    t[i].cs = cs;
    t[i].rank = first + i;
    started[i] = pthread_create(&t[i].thread, NULL, rank_thread_main, &t[i]) == 0;
    if (!started[i]) {
      char why[96];

      snprintf(why, sizeof why, "pthread_create failed for rank %d (rank thread %d of its process)",
               first + i, i);
      rank_case(cs, first + i, why);
    }
  }
  rank_case(cs, first, NULL);
  for (int i = 1; i < P.per; i++)
    if (started[i])
      pthread_join(t[i].thread, NULL);
}

static void rank_exit(int status)
{
#ifdef N4C_COVERAGE_TEST
  __gcov_dump(); /* _exit skips gcov's exit handler */
#endif
  /* _exit: no atexit handler of the parent's libraries (ncclsim's shared
   * state is the parent's to end), no stdio buffer flushed twice. */
  _exit(status);
}

/* The life of rank process `proc`: a probe, then the cases the parent
 * sends. */
static void rank_main(int proc, int cmd, int evfd)
{
  struct sigaction sa;
  int version = 0, ndev = 0;
  size_t idx;

#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* die with the parent */
  if (getppid() != P.parent)
    _exit(1); /* it died before prctl */
#endif
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &sa, NULL);
  close(P.sigchld[0]);
  close(P.sigchld[1]);
  close(P.events);
  /* The peers' command sockets are the parent's alone: a copy here would
   * keep a peer from seeing the end of its commands. */
  for (int k = 0; k < P.nprocs; k++)
    if (P.kids[k].cmd >= 0)
      close(P.kids[k].cmd);
  P.proc = proc;
  P.evfd = evfd;

  /* The probe: every rank needs the device count; rank 0 reports it and
   * NCCL's version, and each rank says it is ready with EV_DONE. */
  if (cudaGetDeviceCount(&ndev) != cudaSuccess)
    ndev = 0;
  P.ndev = ndev;
  if (proc == 0) {
    if (ncclGetVersion(&version) == ncclSuccess)
      emit_self(0, EV_VERSION, version);
    emit_self(0, EV_DEVICES, ndev);
  }
  for (int i = 0; i < P.per; i++)
    emit_self(proc * P.per + i, EV_DONE, 0);

  for (;;) {
    size_t have = 0;

    while (have < sizeof idx) {
      ssize_t n = read(cmd, (char *)&idx + have, sizeof idx - have);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        rank_exit(0); /* the parent has no more cases (or is gone) */
      have += (size_t)n;
    }
    if (idx >= P.run->ncases)
      rank_exit(3);
    proc_case(P.run->cases[idx]);
  }
}

/* ------------------------------------------------------- in the parent */

static void on_sigchld(int sig)
{
  int saved = errno;
  char b = 0;

  (void)sig;
  if (write(P.sigchld[1], &b, 1) < 0) {
    /* Full: a wakeup is pending already. */
  }
  errno = saved;
}

static int set_flags(int fd, int fl, int fdfl)
{
  int a = fcntl(fd, F_GETFL), b = fcntl(fd, F_GETFD);

  if (a < 0 || b < 0 || fcntl(fd, F_SETFL, a | fl) < 0 || fcntl(fd, F_SETFD, b | fdfl) < 0)
    return -1;
  return 0;
}

static void drain_sigchld(void)
{
  char buf[64];

  while (read(P.sigchld[0], buf, sizeof buf) > 0)
    ;
}

/* Reaps the rank processes that have ended; returns how many were
 * reaped now. */
static int reap(bool block)
{
  int n = 0;

  for (int p = 0; p < P.nprocs; p++) {
    struct child *k = &P.kids[p];
    pid_t got;

    if (k->pid <= 0 || k->reaped)
      continue;
    while ((got = waitpid(k->pid, &k->status, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
      ;
    if (got == k->pid || (got < 0 && errno == ECHILD)) {
      if (got < 0)
        k->status = 0;
      k->reaped = true;
      n++;
    }
  }
  return n;
}

/* Process p's ranks: "rank 1", or "ranks 2-3" with --ranks-per-proc. */
static const char *ranks_of(char *buf, size_t len, int p)
{
  if (P.per == 1)
    snprintf(buf, len, "rank %d", p);
  else
    snprintf(buf, len, "ranks %d-%d", p * P.per, p * P.per + P.per - 1);
  return buf;
}

/* "rank 1 (pid 4242) died of signal 11 (Segmentation fault)". */
static size_t describe_death(char *buf, size_t len, int p)
{
  const struct child *k = &P.kids[p];
  char who[48];
  int n;

  ranks_of(who, sizeof who, p);
  if (WIFSIGNALED(k->status))
    n = snprintf(buf, len, "%s (pid %ld) died of signal %d (%s)", who, (long)k->pid,
                 WTERMSIG(k->status), strsignal(WTERMSIG(k->status)));
  else
    n = snprintf(buf, len, "%s (pid %ld) exited with status %d", who, (long)k->pid,
                 WIFEXITED(k->status) ? WEXITSTATUS(k->status) : -1);
  return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* Kills and reaps the whole set, closing the parent's ends. */
static void kill_all(void)
{
  for (int p = 0; p < P.nprocs; p++)
    if (P.kids[p].pid > 0 && !P.kids[p].reaped)
      kill(P.kids[p].pid, SIGKILL);
  reap(true);
  for (int p = 0; p < P.nprocs; p++) {
    if (P.kids[p].cmd >= 0)
      close(P.kids[p].cmd);
    P.kids[p].cmd = -1;
    P.kids[p].pid = 0;
  }
  if (P.events >= 0)
    close(P.events);
  P.events = -1;
  drain_sigchld();
  P.alive = false;
}

enum outcome { DONE, TIMED_OUT, DIED };

/* Reads events into `res` until every rank has sent EV_DONE, the deadline
 * passes, or a rank process ends. */
static enum outcome collect(struct case_result *res, double deadline)
{
  struct case_event ev;
  size_t have = 0;

  for (;;) {
    struct pollfd pfd[2] = { { P.events, POLLIN, 0 }, { P.sigchld[0], POLLIN, 0 } };
    double left = deadline - now();
    int n;

    if (res->ndone >= P.nranks)
      return DONE;
    if (left <= 0)
      return TIMED_OUT;
    n = poll(pfd, 2, (int)(left * 1000) + 1);
    if (n < 0 && errno != EINTR)
      return TIMED_OUT; /* cannot wait: say so rather than spin */
    if (n <= 0)
      continue;
    if (pfd[0].revents & (POLLIN | POLLHUP)) {
      ssize_t got = read(P.events, (char *)&ev + have, sizeof ev - have);

      if (got > 0) {
        have += (size_t)got;
        if (have == sizeof ev) {
          run_event(P.run, res, &ev);
          have = 0;
        }
        continue; /* events first: what a rank said before it died */
      }
      if (got == 0) {
        /* Every rank process has closed the pipe: they are ending. */
        for (int k = 0; k < 100 && reap(false) == 0; k++)
          poll(NULL, 0, 10);
        return DIED;
      }
    }
    if (pfd[1].revents & POLLIN) {
      drain_sigchld();
      if (reap(false) > 0) {
        /* Take what the dead rank wrote before it ended. */
        while ((n = poll(pfd, 1, 0)) > 0 && (pfd[0].revents & POLLIN)) {
          ssize_t got = read(P.events, (char *)&ev + have, sizeof ev - have);

          if (got <= 0)
            break;
          have += (size_t)got;
          if (have == sizeof ev) {
            run_event(P.run, res, &ev);
            have = 0;
          }
        }
        return DIED;
      }
    }
  }
}

/* Ends a case that did not finish: kills the set and says why. */
static void abort_case(struct case_result *res, enum outcome how)
{
  char what[1024], left[1024];
  size_t n = 0, m = 0;
  bool any = false;

  left[0] = what[0] = '\0';
  /* Who died on their own, before the others were killed. */
  if (how == DIED) {
    for (int p = 0; p < P.nprocs && n < sizeof what - 1; p++) {
      if (!P.kids[p].reaped)
        continue;
      if (any)
        n += (size_t)snprintf(what + n, sizeof what - n, ", ");
      if (n < sizeof what - 1)
        n += describe_death(what + n, sizeof what - n, p);
      any = true;
    }
  }
  for (int r = 0; r < P.nranks && r < MAX_RANKS && m < sizeof left - 1; r++)
    if (!res->done[r]) {
      int k = snprintf(left + m, sizeof left - m, "%s%d (pid %ld)", m ? ", " : "", r,
                       (long)P.kids[r / P.per].pid);
      m += k < 0 ? 0 : (size_t)k;
    }
  kill_all();
  if (how == TIMED_OUT)
    result_abort(res, "timed out after %d s (ranks not finished: %s); the rank processes "
                 "were killed", P.run->opts->timeout, left);
  else if (any)
    result_abort(res, "%s before the case ended (ranks not finished: %s)", what,
                 left[0] ? left : "none");
  else
    result_abort(res, "the rank processes closed their event pipe before the case ended "
                 "(ranks not finished: %s)", left);
}

/* Forks a fresh set of rank processes and waits for their probe. False,
 * with the reason in `why`, when it cannot. */
/* --sim-hosts H: process p plays host p / (N / H). Processes of a
 * host share an arena (one ncclsim job, named after the runner and the
 * set of processes); ranks meet through the unique id's bootstrap root
 * (NCCLSIM_NET, on with NCCLSIM_HOST_ID) and UCX between hosts. */
static unsigned sets; /* sets of rank processes started so far */

static void rank_host(int p) {
  int hosts = P.run->opts->sim_hosts;
  if (!hosts) return;
  char v[64];
  snprintf(v, sizeof v, "n4c-%d-%u", (int)P.parent, sets);
  setenv("NCCLSIM_JOB", v, 1);
  snprintf(v, sizeof v, "h%d", p / (P.nprocs / hosts));
  setenv("NCCLSIM_HOST_ID", v, 1);
}

static bool start_ranks(char *why, size_t len)
{
  struct case_result probe;
  int ev[2];
  enum outcome how;

  memset(P.ctl, 0, P.ctl_size);
  {
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;

    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    if (pthread_mutex_init(&P.ctl->mu, &ma) != 0 || pthread_cond_init(&P.ctl->cv, &ca) != 0) {
      snprintf(why, len, "cannot make a process-shared mutex and condition variable");
      return false;
    }
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_destroy(&ca);
  }
  if (pipe(ev) != 0) {
    snprintf(why, len, "pipe: %s", strerror(errno));
    return false;
  }
  set_flags(ev[0], 0, FD_CLOEXEC);
  P.events = ev[0];
  for (int p = 0; p < P.nprocs; p++) {
    P.kids[p].pid = 0;
    P.kids[p].cmd = -1;
    P.kids[p].reaped = false;
    P.kids[p].status = 0;
  }
  P.alive = true;
  sets++;
  fflush(NULL); /* or a rank process would print our buffers again */
  for (int p = 0; p < P.nprocs; p++) {
    int sv[2];
    pid_t pid;
    char who[48];

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
      snprintf(why, len, "socketpair for %s: %s", ranks_of(who, sizeof who, p), strerror(errno));
      goto fail;
    }
    pid = fork();
    if (pid < 0) {
      snprintf(why, len, "fork for %s: %s", ranks_of(who, sizeof who, p), strerror(errno));
      close(sv[0]);
      close(sv[1]);
      goto fail;
    }
    if (pid == 0) {
      close(sv[0]);
      rank_host(p);
      rank_main(p, sv[1], ev[1]);
      rank_exit(0);
    }
    close(sv[1]);
    P.kids[p].pid = pid;
    P.kids[p].cmd = sv[0];
  }
  close(ev[1]);

  result_init(&probe, P.nranks);
  how = collect(&probe, now() + P.run->opts->timeout);
  if (how == DONE)
    return true;
  abort_case(&probe, how);
  snprintf(why, len, "their start-up failed: %s", probe.detail);
  return false;

fail:
  close(ev[1]);
  kill_all();
  return false;
}

/* Sends case i to every rank; false (the set killed, res says why) when a
 * rank process is gone. */
static bool send_case(struct case_result *res, size_t i)
{
  for (int p = 0; p < P.nprocs; p++) {
    if (send(P.kids[p].cmd, &i, sizeof i, MSG_NOSIGNAL) != (ssize_t)sizeof i) {
      char what[256], who[48];

      reap(false);
      if (P.kids[p].reaped)
        describe_death(what, sizeof what, p);
      else
        snprintf(what, sizeof what, "%s (pid %ld) did not take the case: %s", ranks_of(who, sizeof who, p),
                 (long)P.kids[p].pid, strerror(errno));
      kill_all();
      result_abort(res, "%s before the case started", what);
      return false;
    }
  }
  return true;
}

static void run_case(struct run *run, size_t i)
{
  struct case_result *res = &run->results[i];
  double t0 = now();

  result_init(res, P.nranks);
  /* The ranks are idle, past their last use of the block: a fresh start. */
  P.ctl->active = P.nranks;
  P.ctl->arrived = 0;
  P.ctl->stopped = false;
  P.ctl->snap_stopped = false;
  if (send_case(res, i)) {
    enum outcome how = collect(res, t0 + run->opts->timeout);

    if (how != DONE)
      abort_case(res, how);
  }
  res->seconds = now() - t0;
}

/* Ends the rank processes after the last case: end of file on their
 * commands. True when all exited with status 0. */
static bool stop_ranks(struct run *run)
{
  double deadline = now() + run->opts->timeout;
  bool clean = true;

  if (!P.alive)
    return true; /* the last case's set was killed, and that case reported it */
  for (int p = 0; p < P.nprocs; p++) {
    if (P.kids[p].cmd >= 0)
      close(P.kids[p].cmd);
    P.kids[p].cmd = -1;
  }
  for (;;) {
    bool all = true;

    reap(false);
    for (int p = 0; p < P.nprocs; p++)
      all &= P.kids[p].reaped;
    if (all || now() >= deadline)
      break;
    poll(NULL, 0, 10);
  }
  for (int p = 0; p < P.nprocs; p++) {
    struct child *k = &P.kids[p];
    char what[256], who[48];

    if (!k->reaped) {
      fprintf(run->tap, "# %s (pid %ld) did not exit %d s after the last case; killed\n",
              ranks_of(who, sizeof who, p), (long)k->pid, run->opts->timeout);
      clean = false;
    } else if (!WIFEXITED(k->status) || WEXITSTATUS(k->status) != 0) {
      describe_death(what, sizeof what, p);
      fprintf(run->tap, "# after the last case, %s\n", what);
      clean = false;
    }
  }
  kill_all();
  return clean;
}

/* -v: which process is which rank, for a debugger or a kill. */
static void print_pids(struct run *run)
{
  if (!run->opts->verbose)
    return;
  fputs("# rank processes:", run->tap);
  for (int p = 0; p < P.nprocs; p++) {
    char who[48];

    if (P.per == 1)
      snprintf(who, sizeof who, "%d", p);
    else
      snprintf(who, sizeof who, "%d-%d", p * P.per, p * P.per + P.per - 1);
    fprintf(run->tap, " %s (pid %ld)%s", who, (long)P.kids[p].pid, p + 1 < P.nprocs ? "," : "\n");
  }
  fflush(run->tap);
}

int procs_main(struct run *run)
{
  struct sigaction sa;
  char why[2200];
  int rc;
  bool clean;

  P.run = run;
  P.nprocs = run->opts->procs;
  P.per = run->opts->ranks_per_proc > 0 ? run->opts->ranks_per_proc : 1;
  P.nranks = run->nranks = P.nprocs * P.per;
  P.parent = getpid();
  run->launch = "procs";
  run->tap = run_take_stdout();
#ifdef NCCLSIM
  /* Before the first fork and any other ncclsim call. With --sim-hosts the
   * rank processes share no fork-tree arena: each joins its host's, named
   * by the job and host the parent puts in its environment (rank_host). */
  ncclResult_t r = run->opts->sim_hosts ? ncclSuccess : ncclsimProcessesInit();
  if (r != ncclSuccess) {
    fprintf(stderr, "n4c-conformance: --procs: ncclsimProcessesInit: %s\n",
            ncclGetErrorString(r));
    return 2;
  }
#endif
  P.ctl_size = sizeof *P.ctl + (size_t)P.nranks * CTX_XCHG_MAX;
  P.ctl = mmap(NULL, P.ctl_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  P.kids = calloc((size_t)P.nprocs, sizeof *P.kids);
  if (P.ctl == MAP_FAILED || P.kids == NULL) {
    fprintf(stderr, "n4c-conformance: --procs: cannot map the control block: %s\n",
            strerror(errno));
    return 2;
  }
  if (pipe(P.sigchld) != 0 || set_flags(P.sigchld[0], O_NONBLOCK, FD_CLOEXEC) != 0 ||
      set_flags(P.sigchld[1], O_NONBLOCK, FD_CLOEXEC) != 0) {
    fprintf(stderr, "n4c-conformance: --procs: self-pipe: %s\n", strerror(errno));
    return 2;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);

  if (!start_ranks(why, sizeof why)) {
    fprintf(run->tap, "Bail out! cannot start %d rank processes: %s\n", P.nprocs, why);
    fflush(run->tap);
    return 2;
  }
  fprintf(run->tap, "1..%zu\n", run->ncases);
  if (P.per == 1)
    fprintf(run->tap, "# backend %s, NCCL %d, %d ranks as processes (--procs), %d devices\n",
            run_backend(), run->nccl_version, run->nranks, run->ndevices);
  else
    fprintf(run->tap, "# backend %s, NCCL %d, %d ranks as %d processes of %d threads (--procs, "
            "--ranks-per-proc), %d devices\n", run_backend(), run->nccl_version, run->nranks, P.nprocs,
            P.per, run->ndevices);
  if (run->opts->sim_hosts)
    fprintf(run->tap, "# as %d simulated hosts of %d processes (--sim-hosts)\n", run->opts->sim_hosts,
            P.nprocs / run->opts->sim_hosts);
  print_pids(run);
  for (size_t i = 0; i < run->ncases; i++) {
    if (!P.alive) {
      if (!start_ranks(why, sizeof why)) {
        fprintf(run->tap, "Bail out! cannot start %d fresh rank processes for %s: %s\n",
                P.nprocs, run->cases[i]->id, why);
        fflush(run->tap);
        run_finish(run);
        return 2;
      }
      print_pids(run);
    }
    run_case(run, i);
    run->ndone = i + 1;
    run_report_case(run, i);
  }
  clean = stop_ranks(run);
  rc = run_finish(run);
  fflush(run->tap);
  munmap(P.ctl, P.ctl_size);
  free(P.kids);
  return rc == 0 && !clean ? 1 : rc;
}
