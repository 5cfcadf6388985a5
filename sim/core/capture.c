/*
 * sim/core/capture.c — NCCL operations in CUDA graphs.
 *
 * An NCCL call on a capturing stream does on the host what it does
 * outside a capture (argument checks, and the first-use connections, at
 * which real NCCL blocks the host during a capture too: its ncclGroupEnd
 * prepares the plan there), then, instead of being launched, its tasks
 * become one kernel node of the capture's graph: a template of each task,
 * never posted. Each launch of the graph issues the operation again, as
 * if the user had called it then on the launch stream: a byte copy of
 * each template, committed (a collective takes its sequence number, a
 * send its place among the pair's), ordered after the communicator's
 * earlier operations, and launched as one op of the stream. So each
 * launch runs the operation on the buffers it was captured with, in the
 * graph's order, and a graph launch takes its place among the
 * communicator's operations when the host launches it, as NCCL's graph
 * mixing (the default, NCCL_GRAPH_MIXING_SUPPORT=1) serializes graph
 * launches and uncaptured operations of one communicator.
 *
 * A group's tasks of one capture are one node and one launch, whatever
 * their streams (NCCL makes their kernels one, on the first stream, which
 * waits for the others): the node depends on what each of those streams
 * captured last, and each stream's next work depends on the node. A
 * communicator whose tasks of one group are some captured and some not,
 * or captured in two graphs, is refused as NCCL refuses it.
 *
 * With NCCL_GRAPH_MIXING_SUPPORT=0 NCCL does not order a graph launch
 * against the communicator's uncaptured operations, and does not support
 * an uncaptured operation while a graph launch of the communicator is
 * outstanding (from cudaGraphLaunch to the end of its kernels, whatever
 * the streams): ncclsim refuses that call (ncclInvalidUsage), where NCCL
 * would race. Its other unsupported case (graph launches of one
 * communicator on streams not ordered to each other) is not detected.
 *
 * A communicator's destroy releases its templates: a later launch of a
 * graph holding them fails with cudaErrorLaunchFailure and a WARN, where
 * NCCL would use freed memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

typedef struct nccl_work {
  sim_graph_work w;
  pthread_mutex_t lock; /* a launch against a communicator's destroy */
  sim_task *tasks;      /* the templates, in call order */
  struct nccl_work *prev, *next; /* every work, for sim_capture_forget_comm */
  int ntasks;
  char what[96];  /* the node's name: the call, or a group's calls */
  char gone[160]; /* why the templates went (a communicator destroyed) */
} nccl_work;

static pthread_mutex_t works_lock = PTHREAD_MUTEX_INITIALIZER;
static nccl_work *works;

/* Graphs are the process's own (cuda/capture.c). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&works_lock, NULL);
  works = NULL;
}
__attribute__((constructor)) static void capture_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

/* Releases every template of w; under w->lock or with w private. */
static void drop_templates(nccl_work *w) {
  while (w->tasks) {
    sim_task *t = w->tasks;
    w->tasks = t->next;
    t->ops->release(t);
  }
}

/* A copy of template t, fresh for a launch on s. */
static sim_task *copy_task(const sim_task *t, sim_stream *s) {
  size_t size = sim_stream_op_size(t);
  sim_task *c = sim_stream_op_alloc(s, size);
  if (!c) return NULL;
  memcpy(c, t, size);
  c->next = NULL;
  c->stream = s;
  memset(&c->op, 0, sizeof c->op);
  atomic_store_explicit(&c->listed, false, memory_order_relaxed);
  c->result = ncclSuccess;
  c->order_after = 0;
  atomic_store_explicit(&c->order_blocked, false, memory_order_relaxed);
  c->replayed = true;
  if (t->ops->retain) t->ops->retain(c);
  return c;
}

static cudaError_t work_launch(sim_graph_work *gw, sim_stream *s) {
  nccl_work *w = (nccl_work *)gw;
  sim_task *head = NULL, **tail = &head;
  ncclResult_t res = ncclSuccess;
  sim_mutex_lock(&w->lock);
  if (!w->tasks)
    SIM_WARN(SIM_STREAM, "cudaGraphLaunch: the graph holds %s, but %s", w->what, w->gone);
  /* On the launch stream, whatever its device: a graph's nodes keep the
   * device they were captured on, and the device is only a tag here. */
  for (sim_task *t = w->tasks; t; t = t->next) {
    ncclComm_t comm = t->comm;
    sim_task *c = copy_task(t, s);
    if (!c || sim_comm_note_stream(comm, s) != ncclSuccess) {
      if (c) t->ops->release(c);
      res = ncclSystemError;
      break;
    }
    /* Counted now, under w's lock: a destroy of the communicator that
     * begins after this waits for the copy to end. */
    atomic_fetch_add(&comm->inflight, 1);
    atomic_fetch_add(&comm->graph_inflight, 1);
    sim_comm_driven(comm);
    *tail = c;
    tail = &c->next;
  }
  bool empty = !w->tasks;
  pthread_mutex_unlock(&w->lock);
  if (res != ncclSuccess || empty) {
    while (head) {
      sim_task *c = head;
      head = c->next;
      sim_task_done(c);
    }
    return res != ncclSuccess ? cudaErrorMemoryAllocation : cudaErrorLaunchFailure;
  }
  for (sim_task *c = head; c; c = c->next)
    if (c->ops->commit) c->ops->commit(c);
  sim_task_order(head);
  res = sim_task_launch(head);
  return res == ncclSuccess ? cudaSuccess : cudaErrorLaunchFailure;
}

static void work_describe(sim_graph_work *gw, char *buf, size_t len) {
  nccl_work *w = (nccl_work *)gw;
  sim_mutex_lock(&w->lock);
  size_t k = (size_t)snprintf(buf, len, "%s", w->tasks ? "" : "(gone) ");
  for (sim_task *t = w->tasks; t && k < len; t = t->next) {
    char d[256];
    t->ops->describe(t, d, sizeof d);
    /* A template was never posted: its description's state is moot, only
     * the call counts (up to ':'). */
    char *colon = strchr(d, ':');
    if (colon) *colon = 0;
    k += (size_t)snprintf(buf + k, len - k, "%s%s, rank %d", t == w->tasks ? "" : "; ", d, t->comm->rank);
  }
  if (!w->tasks && k < len) snprintf(buf + k, len - k, "%s", w->what);
  pthread_mutex_unlock(&w->lock);
}

static void work_release(sim_graph_work *gw) {
  nccl_work *w = (nccl_work *)gw;
  sim_mutex_lock(&works_lock);
  if (w->prev) w->prev->next = w->next;
  else works = w->next;
  if (w->next) w->next->prev = w->prev;
  pthread_mutex_unlock(&works_lock);
  drop_templates(w);
  pthread_mutex_destroy(&w->lock);
  sim_free(w);
}

/* A graph launch of NCCL operations takes far more of the stream's queue
 * than their kernels would alone, for a reason not known here: measured,
 * not derived (sim.h, NCCLSIM_GRAPH_NCCL_DEPTH). */
static unsigned work_places(sim_graph_work *w) {
  (void)w;
  int n = sim_param_int(SIM_P_GRAPH_NCCL_DEPTH);
  return n > 0 ? (unsigned)n : 1;
}

static const sim_graph_work_ops work_ops = {"NCCL", work_launch, work_describe, work_release, NULL, work_places};

ncclResult_t sim_capture_tasks(sim_task *list) {
  sim_stream *streams[16];
  int ns = 0, n = 0;
  ncclResult_t res = ncclSuccess;
  nccl_work *w = sim_calloc(1, sizeof *w);
  for (sim_task *t = list; t; t = t->next) {
    sim_task_uncount(t->comm); /* kept by the graph, not in flight */
    n++;
    bool seen = false;
    for (int i = 0; i < ns && !seen; i++) seen = streams[i] == t->stream;
    if (!seen && ns < (int)(sizeof streams / sizeof streams[0])) streams[ns++] = t->stream;
  }
  if (!w) {
    res = ncclSystemError;
    goto fail;
  }
  w->w.ops = &work_ops;
  w->tasks = list;
  w->ntasks = n;
  sim_mutex_init(&w->lock);
  if (n == 1) snprintf(w->what, sizeof w->what, "%s", list->ops->name);
  else snprintf(w->what, sizeof w->what, "a group of %d NCCL operations (%s, ...)", n, list->ops->name);
  cudaError_t err = sim_capture_add_work(streams, ns, &w->w);
  if (err != cudaSuccess) {
    SIM_WARN(SIM_STREAM, "%s on a capturing stream: %s (%s)", w->what, cudaGetErrorName(err),
             err == cudaErrorStreamCaptureInvalidated ? "the capture was invalidated before" : "not captured");
    w->tasks = NULL;
    pthread_mutex_destroy(&w->lock);
    sim_free(w);
    res = ncclUnhandledCudaError; /* NCCL's, for a launch its capture refuses */
    goto fail;
  }
  sim_mutex_lock(&works_lock);
  w->next = works;
  if (works) works->prev = w;
  works = w;
  pthread_mutex_unlock(&works_lock);
  SIM_INFO(SIM_STREAM, "%s captured (rank %d, stream %p)", w->what, list->comm->rank, (void *)list->stream);
  return ncclSuccess;
fail:
  while (list) {
    sim_task *t = list;
    list = t->next;
    t->ops->release(t);
  }
  return res;
}

/* Every task's capture into *ids (sim_free it; NULL when none captures):
 * ncclSystemError out of memory, ncclInvalidUsage (with NCCL's WARN) when
 * a communicator's tasks are some captured and some not, or captured in
 * two graphs. */
static ncclResult_t group_ids(sim_task *list, uint64_t **out) {
  *out = NULL;
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed)) return ncclSuccess;
  int n = 0;
  for (sim_task *t = list; t; t = t->next) n++;
  uint64_t *ids = sim_malloc((size_t)(n ? n : 1) * sizeof *ids);
  if (!ids) return ncclSystemError;
  int k = 0;
  bool any = false;
  for (sim_task *t = list; t; t = t->next) any |= (ids[k++] = sim_stream_capture_id(t->stream)) != 0;
  if (!any) {
    sim_free(ids);
    return ncclSuccess;
  }
  int i = 0;
  for (sim_task *t = list; t; t = t->next, i++) {
    int j = 0;
    for (sim_task *u = list; u != t; u = u->next, j++)
      if (u->comm == t->comm && ids[j] != ids[i]) {
        SIM_WARN(SIM_INIT,
                 "Streams given to a communicator within a NCCL group must either be all uncaptured or all captured "
                 "by the same graph (rank %d: %s on stream %p and %s on stream %p)",
                 t->comm->rank, u->ops->name, (void *)u->stream, t->ops->name, (void *)t->stream);
        sim_free(ids);
        return ncclInvalidUsage;
      }
  }
  *out = ids;
  return ncclSuccess;
}

ncclResult_t sim_capture_group_check(sim_task *list) {
  uint64_t *ids;
  ncclResult_t res = group_ids(list, &ids);
  sim_free(ids);
  return res;
}

ncclResult_t sim_capture_group(sim_task **list) {
  uint64_t *ids;
  ncclResult_t res = group_ids(*list, &ids);
  if (res != ncclSuccess || !ids) return res;
  int n = 0, i;
  for (sim_task *t = *list; t; t = t->next) n++;
  /* Each capture's tasks, in call order, become its node. */
  ncclResult_t first = ncclSuccess;
  for (;;) {
    uint64_t id = 0;
    i = 0;
    for (sim_task *t = *list; t && !id; t = t->next, i++) id = ids[i];
    if (!id) break;
    sim_task *mine = NULL, **mt = &mine, **pt = list;
    i = 0;
    for (sim_task *t = *list, *next; t; t = next, i++) {
      next = t->next;
      if (ids[i] == id) {
        *pt = next;
        t->next = NULL;
        *mt = t;
        mt = &t->next;
        ids[i] = UINT64_MAX; /* taken (keeps the indices of the rest) */
      } else {
        pt = &t->next;
      }
    }
    /* ids[] still follows the original list: drop the taken entries. */
    int w = 0;
    for (int r = 0; r < n; r++)
      if (ids[r] != UINT64_MAX) ids[w++] = ids[r];
    n = w;
    ncclResult_t r = sim_capture_tasks(mine);
    if (first == ncclSuccess) first = r;
  }
  sim_free(ids);
  return first;
}

/* NCCL_GRAPH_MIXING_SUPPORT, as NCCL reads it (init.cc): 0 turns mixing
 * off, 1 on; any other value leaves the default, on. */
static bool mixing_supported(void) {
  const char *e = getenv("NCCL_GRAPH_MIXING_SUPPORT");
  return !e || strcmp(e, "0") != 0;
}

ncclResult_t sim_capture_mixing(sim_task *t) {
  if (mixing_supported() || sim_stream_capturing(t->stream)) return ncclSuccess;
  SIM_WARN(SIM_INIT,
           "%s on rank %d outside a graph while a graph launch of the communicator is outstanding: NCCL does not "
           "support it with NCCL_GRAPH_MIXING_SUPPORT=0 (ncclsim refuses it; synchronize the graph's stream first, "
           "or leave graph mixing on)",
           t->ops->name, t->comm->rank);
  return ncclInvalidUsage;
}

void sim_capture_forget_comm(ncclComm_t comm) {
  sim_mutex_lock(&works_lock);
  for (nccl_work *w = works; w; w = w->next) {
    sim_mutex_lock(&w->lock);
    bool mine = false;
    for (sim_task *t = w->tasks; t && !mine; t = t->next) mine = t->comm == comm;
    if (mine) {
      /* The node is one launch: without one of its communicators the
       * rest cannot run either. */
      snprintf(w->gone, sizeof w->gone, "rank %d's communicator was destroyed after the capture (ncclsim refuses the "
               "launch; NCCL would use freed memory)", comm->rank);
      drop_templates(w);
    }
    pthread_mutex_unlock(&w->lock);
  }
  pthread_mutex_unlock(&works_lock);
}
