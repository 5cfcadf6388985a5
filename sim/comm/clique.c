/*
 * sim/comm/clique.c — a rank's comm, and the clique that binds the ranks
 * of one communicator: its topology and every area's state.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "comm_internal.h"
#include "../net/net.h"
#include "../transport.h"

/* The live cliques, for proc_exited: shared by the processes of a job. */
typedef struct {
  pthread_mutex_t lock;
  sim_clique *head;
} clique_list;
static void list_init(void *p) { sim_mutex_init(&((clique_list *)p)->lock); }
static clique_list *live(void) { return sim_shared(SIM_SHARED_CLIQUES, sizeof(clique_list), list_init); }

static void live_link(sim_clique *c) {
  clique_list *l = live();
  if (!l) return;
  sim_mutex_lock(&l->lock);
  c->live_prev = NULL;
  c->live_next = l->head;
  if (l->head) l->head->live_prev = c;
  l->head = c;
  pthread_mutex_unlock(&l->lock);
}

static void live_unlink(sim_clique *c) {
  clique_list *l = live();
  if (!l) return;
  sim_mutex_lock(&l->lock);
  if (c->live_prev) c->live_prev->live_next = c->live_next;
  else if (l->head == c) l->head = c->live_next;
  if (c->live_next) c->live_next->live_prev = c->live_prev;
  pthread_mutex_unlock(&l->lock);
}

/* Whether a rank of this process is alive in a communicator across hosts
 * (net's hook: at exit, UCX is closed only if none is). */
static bool net_comms_here(void) {
  clique_list *l = live();
  if (!l) return false;
  int pid = (int)getpid();
  bool found = false;
  sim_mutex_lock(&l->lock);
  for (sim_clique *c = l->head; c && !found; c = c->live_next) {
    if (!c->net) continue;
    sim_mutex_lock(&c->lock);
    for (int r = 0; r < c->nranks && !found; r++) found = c->ranks[r] && c->ranks[r]->pid == pid;
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&l->lock);
  return found;
}

void sim_clique_abort(sim_clique *c) {
  atomic_store(&c->aborted, 1);
  sim_mutex_lock(&c->lock); /* a rank's teardown clears its slot under it */
  for (int r = 0; r < c->nranks; r++)
    if (c->ranks[r]) atomic_store(&c->ranks[r]->cancel, 1);
  pthread_mutex_unlock(&c->lock);
  sim_waitq_wake(&c->splits.wq);
  for (int r = 0; r < c->nranks; r++) sim_wake_rank(c, r);
}

/* Process `pid` has exited (util/shm.c's monitor, which sim_comm_alloc
 * hands this): fails every communicator with ranks in it. Idempotent. */
static void proc_exited(int pid) {
  clique_list *l = live();
  if (!l) return;
  sim_mutex_lock(&l->lock);
  for (sim_clique *c = l->head; c; c = c->live_next) {
    int rank = -1;
    sim_mutex_lock(&c->lock); /* a rank's teardown clears its slot under it */
    for (int r = 0; r < c->nranks; r++)
      if (c->ranks[r] && c->ranks[r]->pid == pid) {
        atomic_store(&c->ranks[r]->gone, 1); /* a split or shrink expecting it fails at once */
        if (rank < 0) rank = r;
      }
    pthread_mutex_unlock(&c->lock);
    uint64_t none = 0;
    if (rank < 0 || !atomic_compare_exchange_strong(&c->exited, &none, (uint64_t)pid << 32 | (uint32_t)rank)) continue;
    SIM_WARN(SIM_INIT, "communicator %016llx: rank %d's process (pid %d) exited; its operations fail with "
             "ncclRemoteError", (unsigned long long)c->key, rank, pid);
    sim_clique_abort(c); /* every rank's operations end */
  }
  pthread_mutex_unlock(&l->lock);
}

/* What net tells the floors above it (sim/net/net.h), set before any
 * communicator exists. */
__attribute__((constructor)) static void net_hooks(void) {
  static const sim_net_hooks up = {.fail = sim_comm_fail, .abort = sim_clique_abort, .comms_here = net_comms_here};
  sim_net_set_hooks(&up);
}

static const sim_area *const areas[SIM_AREA_COUNT] = {&sim_area_conn, &sim_area_p2p, &sim_area_rma,
                                                      &sim_area_coll, &sim_area_dev};

ncclComm_t sim_comm_alloc(int nranks, int rank, int device, const ncclConfig_t *config) {
  ncclComm_t c = sim_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->magic = SIM_COMM_MAGIC;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  c->blocking = !(config && config->blocking == 0);
  c->pid = (int)getpid();
  sim_proc_register(proc_exited);
  atomic_store(&c->state, SIM_COMM_INITIALIZING);
  sim_mutex_init(&c->lock);
  sim_count_init(&c->order_done);
  sim_comm_driven(c); /* the init caller drives it until another thread calls */
  sim_options_resolve(&c->opts);
  uint64_t fault = (uint64_t)sim_param(SIM_P_FAULT);
  if (fault && (int)(fault >> 32) == rank) c->fault_at = fault & 0xffffffffu;
  return c;
}

void sim_comm_free(ncclComm_t c) {
  c->magic = 0;
  for (sim_comm_stream *n = atomic_load(&c->streams), *next; n; n = next) {
    next = n->next;
    sim_free(n);
  }
  sim_net_join_free(c->boot);
  sim_net_map_free(c->net_pending);
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_free) areas[i]->comm_free(c);
  pthread_mutex_destroy(&c->lock);
  sim_free(c);
}

/* Frees a clique whose first `nareas` areas were set up, last first. */
static void clique_free(sim_clique *c, int nareas) {
  if (nareas == SIM_AREA_COUNT) live_unlink(c);
  while (--nareas >= 0)
    if (areas[nareas]->clique_fini) areas[nareas]->clique_fini(c);
  sim_trace_clique_fini(c);
  sim_rv_table_fini(&c->splits);
  pthread_mutex_destroy(&c->lock);
  sim_free(c->ranks);
  sim_free(c->rank_wq);
  sim_net_map_free(c->net);
  sim_free(c);
}

ncclResult_t sim_clique_create(ncclComm_t *comms, int nranks, uint64_t key, sim_net_map *net) {
  ncclComm_t first = NULL; /* across hosts, rank 0 may be elsewhere */
  int here = 0;
  for (int r = 0; r < nranks; r++)
    if (comms[r]) here++, first = first ? first : comms[r];
  if (NEVER(!first)) return ncclInternalError;
  sim_clique *c = sim_calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  c->ranks = sim_calloc((size_t)nranks, sizeof *c->ranks);
  c->rank_wq = sim_aligned_alloc(64, (size_t)nranks * sizeof *c->rank_wq);
  if (c->rank_wq) memset(c->rank_wq, 0, (size_t)nranks * sizeof *c->rank_wq);
  if (!c->ranks || !c->rank_wq) {
    sim_free(c->ranks);
    sim_free(c->rank_wq);
    sim_free(c);
    return ncclSystemError;
  }
  c->key = key;
  c->nranks = nranks;
  c->tp = &sim_transport_local;
  sim_mutex_init(&c->lock);
  sim_rv_table_init(&c->splits);
  int rpn = first->opts.ranksPerNode;
  c->ranks_per_node = rpn > 0 && rpn < nranks ? rpn : nranks;
  c->nnodes = (nranks + c->ranks_per_node - 1) / c->ranks_per_node;
  if (net) { /* the LSA team is the host */
    c->ranks_per_node = net->host_size[0];
    c->nnodes = net->nhosts;
  }
  /* The areas see the ranks and the host map (rma takes the ranks' signal
   * rows); until they all succeed nothing is attached, and net stays the
   * caller's. */
  c->net = net;
  memcpy(c->ranks, comms, (size_t)nranks * sizeof *c->ranks);
  int i;
  for (i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->clique_init && areas[i]->clique_init(c) != ncclSuccess) break;
  bool traced = i == SIM_AREA_COUNT && sim_trace_clique_init(c) == ncclSuccess;
  if (!traced) {
    if (i < SIM_AREA_COUNT)
      SIM_WARN(SIM_INIT, "cannot allocate the %s state of a %d-rank communicator", areas[i]->name, nranks);
    else
      SIM_WARN(SIM_INIT, "cannot allocate the flight recorder of a %d-rank communicator", nranks);
    c->net = NULL;
    clique_free(c, i);
    return ncclSystemError;
  }
  atomic_store(&c->refs, here);
  for (int r = 0; r < nranks; r++) {
    ncclComm_t m = comms[r];
    if (!m) continue;
    m->clique = c;
    sim_trace_rank_device(c, r, m->device); /* its kernels on its track */
    if (net) {
      m->node = net->host[r];
      m->lsa_rank = net->host_rank[r];
      m->lsa_size = net->host_size[m->node];
      continue;
    }
    m->node = r / c->ranks_per_node;
    m->lsa_rank = r % c->ranks_per_node;
    int node0 = m->node * c->ranks_per_node;
    m->lsa_size = nranks - node0 < c->ranks_per_node ? nranks - node0 : c->ranks_per_node;
  }
  live_link(c);
  for (int r = 0; r < nranks; r++)
    if (comms[r]) atomic_store(&comms[r]->state, SIM_COMM_READY);
  if (net)
    SIM_INFO(SIM_INIT, "communicator %016llx: %d ranks on %d hosts, %d of them on this one (%s)",
             (unsigned long long)key, nranks, net->nhosts, here, sim_net_host_name());
  else
    SIM_INFO(SIM_INIT, "communicator %016llx: %d ranks on %d node(s) of %d", (unsigned long long)key, nranks,
             c->nnodes, c->ranks_per_node);
  return ncclSuccess;
}

void sim_clique_unref(sim_clique *c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  clique_free(c, SIM_AREA_COUNT);
}

void sim_comm_fini_areas(ncclComm_t comm) {
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_fini) areas[i]->comm_fini(comm);
}

ncclResult_t sim_comm_net_join(ncclComm_t comm, sim_net_rank_info *mine, char *why, size_t len) {
  for (int i = 0; i < SIM_AREA_COUNT; i++) {
    ncclResult_t res = areas[i]->net_join ? areas[i]->net_join(comm, mine, why, len) : ncclSuccess;
    if (res != ncclSuccess) return res;
  }
  return ncclSuccess;
}

void sim_comm_poll(ncclComm_t comm) {
  if (!comm->clique) return;
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_poll) areas[i]->comm_poll(comm);
  sim_revoke_poll(comm);
  sim_suspend_poll(comm);
}

size_t sim_clique_suspendable(sim_clique *c, int rank, bool now) {
  size_t n = 0;
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->rank_suspendable) n += areas[i]->rank_suspendable(c, rank, now);
  return n;
}

void sim_clique_rank_suspend(sim_clique *c, int rank) {
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->rank_suspend) areas[i]->rank_suspend(c, rank);
}

ncclResult_t sim_clique_rank_resume(sim_clique *c, int rank) {
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->rank_resume && areas[i]->rank_resume(c, rank) != ncclSuccess) {
      while (--i >= 0) /* the areas already remade are released again */
        if (areas[i]->rank_suspend) areas[i]->rank_suspend(c, rank);
      return ncclSystemError;
    }
  return ncclSuccess;
}
