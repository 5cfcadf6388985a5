/*
 * sim/core/group.c — submission of tasks, ncclGroupStart/End and the work
 * a group defers to its end.
 *
 * Outside a group a task is launched alone. Inside one, ncclGroupEnd
 * launches one op per stream holding every task of the group on that
 * stream, in call order (core/task.c). Streams of one group are not joined
 * to each other (NCCL joins them; ncclsim documents the difference).
 */
#include <errno.h>
#include <stdio.h>

#include "core_internal.h"

static _Thread_local int depth;
static _Thread_local sim_task *tasks_head, *tasks_tail;
static _Thread_local sim_group_job *jobs_head, *jobs_tail;
static _Thread_local ncclResult_t group_error; /* first error of a call inside the group */

int sim_group_depth(void) { return depth; }

/* Adds s to the streams comm launched on (sim_comm_stream), unless it is
 * there: pushed without a lock, as the timeout dump reads the list. */
ncclResult_t sim_comm_note_stream(ncclComm_t comm, sim_stream *s) {
  sim_comm_stream *head = atomic_load_explicit(&comm->streams, memory_order_acquire);
  for (sim_comm_stream *n = head; n; n = n->next)
    if (n->s == s) {
      atomic_store_explicit(&comm->last_stream, s, memory_order_relaxed);
      return ncclSuccess;
    }
  sim_comm_stream *n = sim_malloc(sizeof *n);
  if (!n) return ncclSystemError;
  n->s = s;
  n->next = head;
  while (!atomic_compare_exchange_weak_explicit(&comm->streams, &n->next, n, memory_order_release,
                                                memory_order_acquire)) {
  }
  atomic_store_explicit(&comm->last_stream, s, memory_order_relaxed);
  return ncclSuccess;
}

ncclResult_t sim_task_submit(sim_task *t, cudaStream_t stream) {
  cudaError_t err;
  ncclComm_t comm = t->comm;
  t->next = NULL;
  t->result = ncclSuccess;
  atomic_store_explicit(&t->listed, false, memory_order_relaxed);
  sim_stream *s = sim_stream_resolve(stream, &err);
  ncclResult_t res = ncclSuccess;
  if (!s) {
    SIM_WARN(SIM_STREAM, "%s: stream %p is not a live stream (%s)", t->ops->name, (void *)stream,
             cudaGetErrorName(err));
    res = ncclUnhandledCudaError;
  } else if (sim_stream_device(s) != comm->device) {
    SIM_WARN(SIM_STREAM, "%s: stream %p belongs to device %d, but rank %d's communicator is on device %d",
             t->ops->name, (void *)stream, sim_stream_device(s), comm->rank, comm->device);
    res = ncclUnhandledCudaError;
  }
  if (res != ncclSuccess) {
    t->ops->release(t);
    if (depth > 0 && group_error == ncclSuccess) group_error = res;
    return res;
  }
  t->stream = s;
  if (atomic_load_explicit(&comm->last_stream, memory_order_relaxed) != s &&
      (res = sim_comm_note_stream(comm, s)) != ncclSuccess) {
    t->ops->release(t);
    if (depth > 0 && group_error == ncclSuccess) group_error = res;
    return res;
  }
  if (comm->fault_at && ++comm->ntasks >= comm->fault_at && !atomic_exchange(&comm->dead, 1)) {
    const char *fr = sim_trace_dump(comm->clique, "NCCLSIM_FAULT");
    SIM_WARN(SIM_INIT, "rank %d stops at its NCCL operation %llu (%s), as NCCLSIM_FAULT asks%s%s", comm->rank,
             (unsigned long long)comm->fault_at, t->ops->name, fr ? "; flight recorder: " : "", fr ? fr : "");
  }
  if (atomic_load_explicit(&comm->graph_inflight, memory_order_relaxed) && (res = sim_capture_mixing(t)) != ncclSuccess) {
    t->ops->release(t);
    if (depth > 0 && group_error == ncclSuccess) group_error = res;
    return res;
  }
  atomic_fetch_add(&comm->inflight, 1);
  if (depth == 0) {
    /* A lone call is its own group: it connects, then launches. */
    if ((res = sim_connect(t)) != ncclSuccess) {
      sim_task_done(t);
      return res;
    }
    /* On a capturing stream it becomes a node of a graph (capture.c). */
    if (sim_stream_capturing(t->stream)) return sim_capture_tasks(t);
    if (t->ops->commit) t->ops->commit(t);
    sim_task_order(t);
    return sim_task_launch(t);
  }
  if (tasks_tail) tasks_tail->next = t;
  else tasks_head = t;
  tasks_tail = t;
  return ncclSuccess;
}

ncclResult_t sim_group_add_job(sim_group_job *job) {
  job->next = NULL;
  if (jobs_tail) jobs_tail->next = job;
  else jobs_head = job;
  jobs_tail = job;
  return ncclSuccess;
}

ncclResult_t sim_group_error(ncclResult_t res) {
  if (depth > 0 && res != ncclSuccess && group_error == ncclSuccess) group_error = res;
  return res;
}

bool sim_group_holds(ncclComm_t comm) {
  for (sim_task *t = tasks_head; t; t = t->next)
    if (t->comm == comm) return true;
  for (sim_group_job *j = jobs_head; j; j = j->next)
    if (j->comm == comm) return true;
  return false;
}

static void forget(ncclComm_t comm, bool jobs);

void sim_group_forget(ncclComm_t comm) { forget(comm, true); }
void sim_group_forget_tasks(ncclComm_t comm) { forget(comm, false); }

static void forget(ncclComm_t comm, bool jobs) {
  sim_task **tp = &tasks_head;
  tasks_tail = NULL;
  while (*tp) {
    sim_task *t = *tp;
    if (t->comm == comm) {
      *tp = t->next;
      sim_task_done(t);
    } else {
      tasks_tail = t;
      tp = &t->next;
    }
  }
  if (!jobs) return;
  sim_group_job **jp = &jobs_head;
  jobs_tail = NULL;
  while (*jp) {
    sim_group_job *j = *jp;
    if (j->comm == comm) {
      *jp = j->next;
      j->release(j);
    } else {
      jobs_tail = j;
      jp = &j->next;
    }
  }
}

SIM_EXPORT int ncclsimGroupDepth(void) { return depth; }

SIM_EXPORT ncclResult_t ncclGroupStart(void) {
  depth++;
  return ncclSuccess;
}

static ncclResult_t run_jobs(void) {
  ncclResult_t first = ncclSuccess;
  /* Every job's first steps before any job waits (an init across hosts
   * hears from its bootstrap root, and only then joins its host's ranks,
   * which may be the group's later jobs; a management call across hosts
   * first completes its exchange, with every rank of the group posted). */
  for (sim_group_job *j = jobs_head; j; j = j->next)
    if (j->start) j->start(j);
  for (sim_group_job *j = jobs_head; j; j = j->next)
    if (j->prepare) j->prepare(j);
  while (jobs_head) {
    sim_group_job *j = jobs_head;
    jobs_head = j->next;
    ncclResult_t r = j->run(j);
    if (first == ncclSuccess) first = r;
    j->release(j);
  }
  jobs_tail = NULL;
  return first;
}

static void drop_tasks(void) {
  while (tasks_head) {
    sim_task *t = tasks_head;
    tasks_head = t->next;
    sim_task_done(t);
  }
  tasks_tail = NULL;
}

SIM_EXPORT ncclResult_t ncclGroupEnd(void) {
  if (depth == 0) {
    SIM_WARN(SIM_INIT, "ncclGroupEnd: not inside a group (no matching ncclGroupStart)");
    return ncclInvalidUsage;
  }
  if (--depth > 0) return ncclSuccess;
  ncclResult_t res = run_jobs();
  if (group_error != ncclSuccess) {
    /* NCCL launches nothing from a group in which a call failed. */
    drop_tasks();
    res = group_error;
    group_error = ncclSuccess;
    return res;
  }
  ncclResult_t cres = sim_capture_group_check(tasks_head);
  if (cres == ncclSuccess) cres = sim_connect(tasks_head);
  if (cres == ncclSuccess) cres = sim_capture_group(&tasks_head); /* capturing streams' tasks: graph nodes */
  if (cres != ncclSuccess) {
    drop_tasks();
    return cres;
  }
  tasks_tail = NULL;
  if (!tasks_head) return res;
  for (sim_task *t = tasks_head; t; t = t->next)
    if (t->ops->commit) t->ops->commit(t);
  sim_task_order(tasks_head);
  /* Partition by stream, keeping call order within each. */
  while (tasks_head) {
    sim_stream *s = tasks_head->stream;
    sim_task *mine = NULL, **mt = &mine, *rest = NULL, **rt = &rest;
    for (sim_task *t = tasks_head, *next; t; t = next) {
      next = t->next;
      t->next = NULL;
      if (t->stream == s) {
        *mt = t;
        mt = &t->next;
      } else {
        *rt = t;
        rt = &t->next;
      }
    }
    tasks_head = rest;
    ncclResult_t r = sim_task_launch(mine);
    if (res == ncclSuccess) res = r;
  }
  tasks_tail = NULL;
  return res;
}

SIM_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *info) {
  if (!info || info->magic != 0x74685283u) {
    SIM_WARN(SIM_INIT, "ncclGroupSimulateEnd: simInfo %p was not initialised with NCCL_SIM_INFO_INITIALIZER",
             (void *)info);
    return ncclInvalidArgument;
  }
  if (depth == 0) {
    SIM_WARN(SIM_INIT, "ncclGroupSimulateEnd: not inside a group");
    return ncclInvalidUsage;
  }
  if (--depth > 0) return ncclSuccess;
  /* Model: each operation costs NCCLSIM_LAT_US plus its bytes over
   * NCCLSIM_BW_GBS; operations of the group run one after another. */
  double lat = sim_param(SIM_P_LAT_US) * 1e-6, bw = sim_param(SIM_P_BW_GBS) * 1e9;
  double t = 0;
  for (sim_task *k = tasks_head; k; k = k->next) t += lat + (bw > 0 ? (double)k->bytes / bw : 0);
  info->estimatedTime = (float)t;
  drop_tasks();
  run_jobs();
  ncclResult_t res = group_error;
  group_error = ncclSuccess;
  return res;
}
