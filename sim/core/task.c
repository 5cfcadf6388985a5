/*
 * sim/core/task.c — a launch: the tasks that one stream runs as one op.
 *
 * The op posts every task before it waits on any, which is what lets a
 * ring of grouped sends and receives complete, and lets one thread drive
 * every rank. A task is listed as pending between its post and the end of
 * its wait, so that a timeout can say what every rank was doing.
 */
#include <errno.h>
#include <stdio.h>

#include "core_internal.h"

typedef struct {
  sim_op op;
  sim_task *tasks;
} launch_op;

static void describe_pending(sim_pending *p, char *buf, size_t len) {
  sim_task *t = (sim_task *)((char *)p - offsetof(sim_task, pending));
  t->ops->describe(t, buf, len);
}

void sim_task_done(sim_task *t) {
  ncclComm_t comm = t->comm;
  t->ops->release(t);
  /* Under the lock: teardown frees the comm only after taking it. */
  sim_mutex_lock(&comm->lock);
  atomic_fetch_sub(&comm->inflight, 1);
  sim_waitq_wake(&comm->inflight_wq);
  pthread_mutex_unlock(&comm->lock);
}

static cudaError_t launch_run(sim_op *op, cudaError_t stream_err) {
  launch_op *l = (launch_op *)op;
  sim_task *t;
  for (t = l->tasks; t; t = t->next) {
    t->trace_slot = UINT64_MAX; /* not begun: sim_trace_end begins it */
    if (stream_err != cudaSuccess) {
      t->result = ncclUnhandledCudaError;
      sim_comm_fail(t->comm, t->result, "%s not run: its stream already failed (%s)", t->ops->name,
                    cudaGetErrorName(stream_err));
      continue;
    }
    if (atomic_load(&t->comm->dead)) {
      /* NCCLSIM_FAULT: as if the process died, nothing reaches the peers. */
      t->result = ncclRemoteError;
      sim_comm_fail(t->comm, t->result, "%s not run: rank %d stopped at its operation %llu (NCCLSIM_FAULT)",
                    t->ops->name, t->comm->rank, (unsigned long long)t->comm->fault_at);
      continue;
    }
    if (atomic_load(sim_comm_cancel(t->comm))) {
      /* Its rank revoked the communicator, or the clique was aborted. */
      t->result = ncclRemoteError;
      int rank, pid = sim_clique_exited(t->comm->clique, &rank);
      if (pid)
        sim_comm_fail(t->comm, t->result, "%s not run: rank %d's process (pid %d) exited", t->ops->name, rank, pid);
      else
        sim_comm_fail(t->comm, t->result, "%s not run: the communicator was aborted or revoked", t->ops->name);
      continue;
    }
    t->pending.describe = describe_pending;
    sim_trace_begin(t);
    sim_comm_pending_add(t->comm, &t->pending);
    t->result = t->ops->post(t);
    if (t->result != ncclSuccess) sim_comm_pending_del(t->comm, &t->pending);
  }
  uint64_t deadline = sim_deadline();
  cudaError_t err = cudaSuccess;
  for (t = l->tasks; t; t = t->next) {
    if (t->result == ncclSuccess) {
      t->result = t->ops->wait(t, deadline);
      if (t->result == ncclTimeout) {
        char why[160], what[384];
        snprintf(why, sizeof why, "%s by rank %d timed out after NCCLSIM_TIMEOUT=%s s", t->ops->name, t->comm->rank,
                 sim_param_text(SIM_P_TIMEOUT));
        t->ops->describe(t, what, sizeof what);
        sim_comm_fail(t->comm, ncclTimeout, "rank %d timed out after NCCLSIM_TIMEOUT=%s s in %s", t->comm->rank,
                      sim_param_text(SIM_P_TIMEOUT), what);
        sim_clique_dump_pending(t->comm->clique, why);
      }
      sim_comm_pending_del(t->comm, &t->pending);
    }
    if (t->result != ncclSuccess) {
      int rank, pid = sim_clique_exited(t->comm->clique, &rank);
      if (t->result == ncclRemoteError && pid)
        sim_comm_fail(t->comm, t->result, "%s by rank %d failed: rank %d's process (pid %d) exited", t->ops->name,
                      t->comm->rank, rank, pid);
      if (atomic_load(&t->comm->async_error) == ncclSuccess)
        sim_comm_fail(t->comm, t->result, "%s by rank %d failed: %s", t->ops->name, t->comm->rank,
                      ncclGetErrorString(t->result));
      if (err == cudaSuccess) err = t->result == ncclTimeout ? cudaErrorTimeout : cudaErrorLaunchFailure;
    }
    sim_trace_end(t);
  }
  return stream_err != cudaSuccess ? stream_err : err;
}

static void launch_release(sim_op *op) {
  launch_op *l = (launch_op *)op;
  while (l->tasks) {
    sim_task *t = l->tasks;
    l->tasks = t->next;
    sim_task_done(t);
  }
  sim_free(l);
}

/* The ranks the launch's tasks still wait for (the deadlock check of a
 * full stream); -1 if one of them cannot tell. */
static int launch_awaits(sim_op *op, sim_rank_ref *out, int max) {
  int n = 0;
  for (sim_task *t = ((launch_op *)op)->tasks; t; t = t->next) {
    if (!t->ops->awaits) return -1;
    int k = t->ops->awaits(t, out + n, max - n);
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

ncclResult_t sim_task_launch(sim_task *list) {
  launch_op *l = sim_calloc(1, sizeof *l);
  if (!l) {
    while (list) {
      sim_task *t = list;
      list = t->next;
      sim_task_done(t);
    }
    return ncclSystemError;
  }
  l->op.run = launch_run;
  l->op.release = launch_release;
  l->op.what = list->ops->name;
  l->op.awaits = launch_awaits;
  l->tasks = list;
  for (sim_task *t = list; t; t = t->next) sim_trace_enqueue(t);
  sim_stream *s = list->stream;
  cudaError_t err = sim_stream_enqueue(s, &l->op);
  if (err != cudaSuccess) {
    launch_release(&l->op);
    /* A full stream that times out or can never drain (a WARN said why),
     * or a worker that cannot start. */
    return err == cudaErrorTimeout ? ncclTimeout : err == cudaErrorLaunchFailure ? ncclInvalidUsage
                                                                                 : ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

