/*
 * launch_mpi.c — ranks as MPI processes (--mpi; built with --with-mpi).
 *
 *   mpirun -np 2 n4c-conformance --mpi [--json FILE] ...
 *
 * Every process runs every case in turn, on the GPU of its local rank (mod
 * the device count); rank 0 makes each case's unique id and sends it by
 * MPI_Bcast, gathers the verdicts, and alone prints TAP and JSON.
 *
 * The watchdog: a process cannot kill one case and go on when its peers
 * may be stuck inside NCCL or MPI, so a case that outlives --timeout ends
 * the run. Rank 0's watchdog thread reports the case as failed ("timed
 * out"), prints "Bail out!", writes the JSON report of the cases so far,
 * and calls MPI_Abort. A rank that returns from a case early (a failed
 * check, a skip) keeps answering its peers' ctx collectives until all
 * ranks have returned (status_round), so those end with false; only a peer
 * blocked inside NCCL itself, waiting for the rank that left, still ends
 * in the watchdog.
 */
#include "config.h"

#ifdef HAVE_MPI
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runner.h"

/* What a rank tells rank 0 about a case: its first failure, skip and
 * divergence (kind -1 where there was none). */
enum { SUMMARY_FAIL, SUMMARY_SKIP, SUMMARY_DIVERGENCE, SUMMARY_N };
struct summary {
  struct case_event ev[SUMMARY_N];
};

static struct {
  struct run *run;
  int rank;
  struct summary mine;
  /* The watchdog. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct timespec deadline;
  bool armed;
  size_t current; /* index of the case being run */
} M = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void mpi_emit(case_ctx_t *ctx, const struct case_event *ev)
{
  (void)ctx; /* one rank per process: the summary is this process's */
  int slot = ev->kind == EV_FAIL ? SUMMARY_FAIL : ev->kind == EV_SKIP ? SUMMARY_SKIP
             : ev->kind == EV_DIVERGENCE ? SUMMARY_DIVERGENCE : -1;

  if (ev->kind == EV_NOTE) {
    if (M.run->tap)
      run_event(M.run, NULL, ev);
    else
      fprintf(stderr, "# rank %d: %s\n", ev->rank, ev->text);
  }
  if (slot >= 0 && M.mine.ev[slot].kind < 0)
    M.mine.ev[slot] = *ev;
}

/* One round of the case's status exchange. Every ctx collective starts
 * with one, and so does the drain after a case: a rank that returned from
 * its case early keeps answering rounds until every rank has returned, so
 * its peers' barriers end (returning false) instead of waiting for it. All
 * ranks see the same result, so they agree on whether a data phase
 * follows. */
static bool status_round(case_ctx_t *ctx, bool returned, bool *all_returned)
{
  int mine[2] = { ctx->stopped || returned, !returned }, all[2];

  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (all_returned)
    *all_returned = !all[1];
  return !all[0];
}

static bool mpi_barrier(case_ctx_t *ctx)
{
  return status_round(ctx, false, NULL);
}

static bool mpi_allgather(case_ctx_t *ctx, const void *mine, void *all, size_t len)
{
  if (!status_round(ctx, false, NULL))
    return false;
  MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, MPI_COMM_WORLD);
  return true;
}

static bool mpi_bcast(case_ctx_t *ctx, void *buf, size_t len, int root)
{
  if (!status_round(ctx, false, NULL))
    return false;
  MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
  return true;
}

static const struct launch_ops mpi_ops = { mpi_emit, mpi_barrier, mpi_allgather, mpi_bcast };

static void *watchdog(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&M.mu);
  for (;;) {
    while (!M.armed)
      pthread_cond_wait(&M.cv, &M.mu);
    if (pthread_cond_timedwait(&M.cv, &M.mu, &M.deadline) != ETIMEDOUT || !M.armed)
      continue;
    /* Keep the lock: the main thread must not write the result now. */
    if (M.rank == 0) {
      struct run *run = M.run;
      struct case_result *res = &run->results[M.current];

      for (int k = 0; k < SUMMARY_N; k++)
        if (M.mine.ev[k].kind >= 0)
          result_add(res, &M.mine.ev[k]);
      result_abort(res, "timed out after %d s; the run was aborted (MPI_Abort), the cases "
                   "after it did not run", run->opts->timeout);
      run->ndone = M.current + 1;
      run_report_case(run, M.current);
      fprintf(run->tap, "Bail out! %s timed out under --mpi\n", run->cases[M.current]->id);
      fflush(run->tap);
      run_finish(run);
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return NULL;
}

/* Arms the watchdog for case i, `grace` seconds after the timeout. */
static void arm(size_t i, int seconds)
{
  pthread_mutex_lock(&M.mu);
  clock_gettime(CLOCK_REALTIME, &M.deadline);
  M.deadline.tv_sec += seconds;
  M.current = i;
  M.armed = true;
  pthread_cond_signal(&M.cv);
  pthread_mutex_unlock(&M.mu);
}

static void disarm(void)
{
  pthread_mutex_lock(&M.mu);
  M.armed = false;
  pthread_cond_signal(&M.cv);
  pthread_mutex_unlock(&M.mu);
}

static void run_case(struct run *run, size_t i, int local_rank, int ndev)
{
  case_ctx_t ctx;
  struct summary *all = NULL;
  ncclResult_t r = ncclSuccess;
  cudaError_t e;
  double t0 = MPI_Wtime();

  memset(&ctx, 0, sizeof ctx);
  for (int k = 0; k < SUMMARY_N; k++)
    M.mine.ev[k].kind = -1;
  ctx.rank = M.rank;
  ctx.nranks = run->nranks;
  ctx.ndevices = ndev;
  ctx.device = ndev > 0 ? local_rank % ndev : 0;
  ctx.verbose = run->opts->verbose;
  ctx.shared_process = true;
  ctx.local_ranks = 1;
  ctx.launch = &mpi_ops;

  /* Rank 0 waits longest, so that its report, not a peer's abort, ends
   * a hung run. */
  arm(i, run->opts->timeout + (M.rank == 0 ? 0 : 10));
  if (M.rank == 0)
    r = ncclGetUniqueId(&ctx.id);
  MPI_Bcast(&ctx.id, sizeof ctx.id, MPI_BYTE, 0, MPI_COMM_WORLD);
  e = ndev > 0 ? cudaSetDevice(ctx.device) : cudaErrorNoDevice;
  if (CASE_EXPECT(&ctx, r == ncclSuccess, "ncclGetUniqueId on rank 0: %s",
                  ncclGetErrorString(r)) &&
      CASE_EXPECT(&ctx, e == cudaSuccess, "cudaSetDevice(%d) with %d devices: %s",
                  ctx.device, ndev, cudaGetErrorName(e)))
    run->cases[i]->fn(&ctx);
  for (bool done = false; !done;)
    status_round(&ctx, true, &done);
  ctx_run_defers(&ctx);

  if (M.rank == 0 && (all = calloc((size_t)run->nranks, sizeof *all)) == NULL) {
    fputs("n4c-conformance: out of memory\n", stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Gather(&M.mine, sizeof M.mine, MPI_BYTE, all, sizeof M.mine, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  disarm();
  if (M.rank == 0) {
    struct case_result *res = &run->results[i];
    struct case_event done = { .kind = EV_DONE };

    result_init(res, run->nranks);
    for (int rk = 0; rk < run->nranks; rk++) {
      for (int k = 0; k < SUMMARY_N; k++)
        if (all[rk].ev[k].kind >= 0)
          result_add(res, &all[rk].ev[k]);
      done.rank = rk;
      result_add(res, &done);
    }
    res->seconds = MPI_Wtime() - t0;
    free(all);
  }
}

int mpi_main(struct run *run)
{
  int provided, local_rank = 0, version = 0, ndev = 0;
  MPI_Comm local;
  pthread_t wd;

  /* The watchdog calls MPI_Abort from its own thread. */
  MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &M.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &run->nranks);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, M.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  M.run = run;
  run->launch = "mpi";
  run->tap = run_take_stdout();
  if (M.rank != 0) {
    fclose(run->tap);
    run->tap = NULL;
  }
  if (run->opts->nranks != 4 && M.rank == 0)
    fprintf(stderr, "n4c-conformance: --mpi: -n is ignored; the ranks are the %d processes\n",
            run->nranks);
  if (pthread_create(&wd, NULL, watchdog, NULL) != 0) {
    fputs("n4c-conformance: cannot start the watchdog thread\n", stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  ncclGetVersion(&version);
  cudaGetDeviceCount(&ndev);
  run->nccl_version = version;
  run->ndevices = ndev;
  if (run->tap) {
    fprintf(run->tap, "1..%zu\n", run->ncases);
    fprintf(run->tap, "# backend %s, NCCL %d, %d ranks as MPI processes, %d devices on rank 0%s\n",
            run_backend(), version, run->nranks, ndev,
            provided < MPI_THREAD_MULTIPLE ? " (MPI without THREAD_MULTIPLE)" : "");
  }
  for (size_t i = 0; i < run->ncases; i++) {
    run_case(run, i, local_rank, ndev);
    run->ndone = i + 1;
    run_report_case(run, i);
  }
  int rc = M.rank == 0 ? run_finish(run) : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
#endif /* HAVE_MPI */
