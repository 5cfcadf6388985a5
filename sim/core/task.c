/*
 * sim/core/task.c — a launch: the tasks that one stream runs as one op.
 *
 * The op posts every task before it waits on any, which is what lets a
 * ring of grouped sends and receives complete, and lets one thread drive
 * every rank. The op is the first task's own (sim_task.op) and the tasks
 * come from the stream's op pool, so a launch allocates nothing. A task
 * is shown as pending (`listed`) between its post and the end of its wait,
 * so that a timeout can say what every rank was doing: the dump finds it
 * through the op its stream runs (core/fail.c), and nothing is locked per
 * operation.
 *
 * NCCL runs one communicator's launches in the order they were issued,
 * whatever their streams: each launch's stream first waits for the
 * communicator's previous launch (enqueue.cc: the user stream waits on the
 * communicator's deviceStream, which then waits on the user stream; both
 * are stream waits on events, which CUDA does not bound). So a launch that
 * follows one of the rank's launches on another stream waits, before it
 * posts anything, until the rank's earlier tasks have ended. A group is one
 * launch: its streams do not wait for each other. Measured on 2 x H200 with
 * NCCL 2.30.7: a signal on a second stream stays behind a wait on the first
 * (conformance/probes/sig_stress.c, phase xstream).
 */
#include <errno.h>
#include <stdio.h>

#include "core_internal.h"

void *sim_task_alloc(size_t size, cudaStream_t stream) {
  return sim_stream_op_alloc(sim_stream_find(stream), size);
}

void sim_task_free(sim_task *t) { sim_stream_op_free(t); }

void sim_task_done(sim_task *t) {
  ncclComm_t comm = t->comm;
  if (t->replayed) atomic_fetch_sub(&comm->graph_inflight, 1);
  sim_trace_close(t);
  t->ops->release(t);
  sim_task_uncount(comm);
}

void sim_task_uncount(ncclComm_t comm) {
  /* Teardown waits for the count to reach 0, then takes the comm's lock
   * once before it frees the comm: the last task drops it and wakes the
   * waiter under that lock. Any other drop leaves it above 0, which keeps
   * the comm alive through it, and wakes nobody. */
  int64_t v = atomic_load_explicit(&comm->inflight, memory_order_relaxed);
  while (v > 1)
    if (atomic_compare_exchange_weak(&comm->inflight, &v, v - 1)) return;
  sim_mutex_lock(&comm->lock);
  atomic_fetch_sub(&comm->inflight, 1);
  sim_waitq_wake(&comm->inflight_wq);
  pthread_mutex_unlock(&comm->lock);
}

/* The op's start: posts every task (never blocks). */
static void launch_post(sim_op *op, cudaError_t stream_err) {
  sim_task *t, *tasks = (sim_task *)((char *)op - offsetof(sim_task, op));
  for (t = tasks; t; t = t->next) {
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
    sim_trace_begin(t, &op->stamp);
    atomic_store_explicit(&t->listed, true, memory_order_relaxed);
    t->result = t->ops->post(t);
    if (t->result != ncclSuccess) atomic_store_explicit(&t->listed, false, memory_order_relaxed);
  }
}

/* A launch behind the rank's earlier launches on other streams: waits for
 * them to end. Bounded: each of them ends by its own deadline. */
static void order_wait(sim_task *tasks) {
  for (sim_task *t = tasks; t; t = t->next) {
    if (!t->order_after || sim_count_get(&t->comm->order_done) >= t->order_after) continue;
    atomic_store(&t->order_blocked, true); /* the timeout dump says why it has not begun */
    sim_count_wait(&t->comm->order_done, t->order_after, UINT64_MAX);
    atomic_store(&t->order_blocked, false);
  }
}

/* The op's run: waits for every posted task (an ordered launch, which has no
 * start, first waits its turn and posts). */
static cudaError_t launch_run(sim_op *op, cudaError_t stream_err) {
  sim_task *t, *tasks = (sim_task *)((char *)op - offsetof(sim_task, op));
  if (!op->start) {
    order_wait(tasks);
    launch_post(op, stream_err);
  }
  /* NCCLSIM_TIMEOUT counts from the first wait that has to sleep: a launch
   * whose waits end while they spin reads no clock for it. */
  sim_due due = SIM_DUE_LAZY;
  cudaError_t err = cudaSuccess;
  for (t = tasks; t; t = t->next) {
    if (t->result == ncclSuccess) {
      t->result = t->ops->wait(t, &due);
      if (t->result == ncclTimeout) {
        char why[160], what[384];
        snprintf(why, sizeof why, "%s by rank %d timed out after NCCLSIM_TIMEOUT=%s s", t->ops->name, t->comm->rank,
                 sim_param_text(SIM_P_TIMEOUT));
        t->ops->describe(t, what, sizeof what);
        sim_comm_fail(t->comm, ncclTimeout, "rank %d timed out after NCCLSIM_TIMEOUT=%s s in %s", t->comm->rank,
                      sim_param_text(SIM_P_TIMEOUT), what);
        sim_clique_dump_pending(t->comm->clique, why);
      }
      atomic_store_explicit(&t->listed, false, memory_order_relaxed);
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
    sim_trace_end(t, &op->stamp);
    sim_count_add(&t->comm->order_done, 1);
  }
  return stream_err != cudaSuccess ? stream_err : err;
}

sim_task *sim_launch_tasks(sim_op *op) {
  return op->run == launch_run ? (sim_task *)((char *)op - offsetof(sim_task, op)) : NULL;
}

/* Releases every task of a list; the op lives in the first, which goes
 * first: nothing reads the op after. */
static void release_list(sim_task *t) {
  while (t) {
    sim_task *next = t->next;
    sim_task_done(t);
    t = next;
  }
}

static void launch_release(sim_op *op) { release_list(sim_launch_tasks(op)); }

/* The ranks the launch's tasks still wait for (the deadlock check of a
 * full stream); -1 if one of them cannot tell. */
static int launch_awaits(sim_op *op, sim_rank_ref *out, int max) {
  int n = 0;
  for (sim_task *t = sim_launch_tasks(op); t; t = t->next) {
    if (!t->ops->awaits) return -1;
    int k = t->ops->awaits(t, out + n, max - n);
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

void sim_task_order(sim_task *tasks) {
  bool on = sim_param_int(SIM_P_COMM_ORDER) != 0;
  for (sim_task *t = tasks; t; t = t->next) {
    ncclComm_t m = t->comm;
    if (m->order_mark != tasks) { /* m's first task in this launch */
      m->order_mark = tasks;
      m->order_base = m->order_launched;
      m->order_first = t->stream;
      m->order_streams = false;
    } else if (t->stream != m->order_first) {
      m->order_streams = true;
    }
    t->order_after = 0;
    if (on && t->stream != m->order_stream && sim_count_get(&m->order_done) < m->order_base)
      t->order_after = m->order_base;
    m->order_launched++;
  }
  for (sim_task *t = tasks; t; t = t->next) {
    ncclComm_t m = t->comm;
    if (m->order_mark != tasks) continue; /* done */
    m->order_mark = NULL;
    m->order_stream = m->order_streams ? NULL : m->order_first;
  }
}

/* The CUDA operations NCCL 2.30.7 puts on the stream for a launch, as the
 * stream's depth counts them. A kernel for its sends, receives and
 * collectives. For one-sided operations (rma/rma_ce.cc): a cuStreamWaitValue
 * batch per ncclWaitSignal (each is a launch of its own); puts and signals
 * go in rounds of at most one per peer, and a round is a staged sequence
 * write, a batch of data copies when one of its puts moves bytes, and a
 * batch of signal copies. So a lone put is 3, a lone signal 2. */
static unsigned launch_cost(sim_task *list) {
  unsigned kernel = 0, cost = 0, puts = 0;
  for (sim_task *t = list; t; t = t->next) {
    if (t->ops->cost == SIM_COST_KERNEL) kernel = 1;
    else if (t->ops->cost == SIM_COST_RMA_WAIT) cost++;
    else puts++;
  }
  if (puts == 1) {
    for (sim_task *t = list; t; t = t->next)
      if (t->ops->cost == SIM_COST_RMA_PUT) cost += t->bytes ? 3 : 2;
  } else if (puts > 1) {
    /* Rounds: the most puts and signals to one peer (of those, the most that
     * move bytes): counted pairwise, as groups are small. */
    unsigned rounds = 0, data = 0;
    for (sim_task *t = list; t; t = t->next) {
      if (t->ops->cost != SIM_COST_RMA_PUT) continue;
      unsigned same = 0, same_data = 0;
      for (sim_task *u = list; u; u = u->next)
        if (u->ops->cost == SIM_COST_RMA_PUT && u->comm == t->comm && u->peer == t->peer) {
          same++;
          same_data += u->bytes != 0;
        }
      if (same > rounds) rounds = same;
      if (same_data > data) data = same_data;
    }
    cost += 2 * rounds + data;
  }
  cost += kernel;
  return cost > UINT16_MAX ? UINT16_MAX : cost;
}

ncclResult_t sim_task_launch(sim_task *list) {
  sim_op *op = &list->op;
  op->cost = (uint16_t)launch_cost(list);
  op->start = launch_post;
  for (sim_task *t = list; t; t = t->next)
    if (t->order_after) op->start = NULL; /* posts in run(), after its turn */
  op->run = launch_run;
  op->release = launch_release;
  op->what = list->ops->name;
  op->awaits = launch_awaits;
  op->unbounded = false;
  for (sim_task *t = list; t; t = t->next) sim_trace_enqueue(t);
  cudaError_t err = sim_stream_enqueue(list->stream, op);
  if (err != cudaSuccess) {
    for (sim_task *t = list; t; t = t->next) sim_count_add(&t->comm->order_done, 1); /* never run */
    release_list(list);
    /* A full stream that times out or can never drain (a WARN said why),
     * or a worker that cannot start. */
    return err == cudaErrorTimeout ? ncclTimeout : err == cudaErrorLaunchFailure ? ncclInvalidUsage
                                                                                 : ncclUnhandledCudaError;
  }
  return ncclSuccess;
}
