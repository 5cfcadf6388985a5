/*
 * sim/comm/init.c — unique ids and the rendezvous that turns ranks calling
 * ncclCommInitRank* into one communicator.
 *
 * A rendezvous is keyed by the unique id. Each rank posts its comm into its
 * slot; the last to arrive builds the clique for everyone. Posting never
 * blocks, so one thread can post every rank inside a group (the wait then
 * happens at ncclGroupEnd) and a non-blocking communicator returns
 * ncclInProgress until ncclCommGetAsyncError sees the rendezvous complete.
 * A rank that waits longer than NCCLSIM_TIMEOUT withdraws and fails with a
 * diagnostic naming the ranks that never came. Ranks that disagree (nranks,
 * a rank claimed twice, the layout of nodes) fail at once, every one of
 * them, each with a message naming both values.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "comm_internal.h"
#include "../net/net.h"

#define ID_MAGIC "NCCLSIM-ID"

typedef struct {
  char magic[16];
  uint64_t key;
  int32_t pid;  /* the process that made it */
  int32_t pad;
  uint64_t job; /* sim_shm_job() there: which processes share its state */
  /* An id of ncclCommGetUniqueId (comm/grow.c): the parent's clique key,
   * the grow's number among the parent's splits, shrinks and grows (from
   * 1; 0 for an id of ncclGetUniqueId), and the parent's size. */
  uint64_t parent_key;
  uint64_t grow_seq;
  int32_t parent_nranks;
  int32_t pad2;
  /* With the network on (sim/net): the maker's bootstrap root; family 0:
   * none. The root's key for this id is the id's last 8 bytes (ID_SECRET). */
  sim_net_addr root;
} id_layout;
enum { ID_SECRET = NCCL_UNIQUE_ID_BYTES - 8 };
_Static_assert(sizeof(id_layout) <= ID_SECRET, "the id's layout overlaps its key");

/* Open init rounds, by the unique id's key; a slot is the rank's comm.
 * Shared by every process of a job (util/shm.c). */
static void table_init(void *t) { sim_rv_table_init(t); }
static sim_rv_table *init_table(void) { return sim_shared(SIM_SHARED_INIT, sizeof(sim_rv_table), table_init); }
#define table (*init_table())

static void id_write(ncclUniqueId *id, uint64_t key, uint64_t parent_key, uint64_t grow_seq, int parent_nranks,
                     const sim_net_addr *root, uint64_t secret) {
  id_layout l;
  memset(&l, 0, sizeof l);
  memcpy(l.magic, ID_MAGIC, sizeof ID_MAGIC);
  l.key = key;
  l.pid = (int32_t)getpid();
  l.job = sim_shm_job();
  l.parent_key = parent_key;
  l.grow_seq = grow_seq;
  l.parent_nranks = parent_nranks;
  if (root) l.root = *root;
  memset(id, 0, sizeof *id);
  memcpy(id->internal, &l, sizeof l);
  memcpy(id->internal + ID_SECRET, &secret, sizeof secret);
}

uint64_t sim_unique_key(void) {
  static _Atomic uint64_t counter;
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) rnd = sim_now_ns();
  return rnd ^ ((uint64_t)getpid() << 32) ^ atomic_fetch_add(&counter, 1);
}

SIM_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id) {
    SIM_WARN(SIM_INIT, "ncclGetUniqueId: uniqueId is NULL");
    return ncclInvalidArgument;
  }
  if (!sim_net_on()) {
    id_write(id, sim_unique_key(), 0, 0, 0, NULL, 0);
    return ncclSuccess;
  }
  return sim_net_id_make(id);
}

static ncclResult_t net_id(ncclUniqueId *id, uint64_t key, uint64_t parent_key, uint64_t seq, int parent_nranks,
                           bool once, uint64_t *secret_out) {
  uint64_t secret = sim_unique_key() | 1;
  sim_net_addr root;
  SIM_CHECK(sim_net_root_open(secret, once, &root));
  id_write(id, key, parent_key, seq, parent_nranks, &root, secret);
  if (secret_out) *secret_out = secret;
  return ncclSuccess;
}

ncclResult_t sim_net_id_make(ncclUniqueId *id) { return net_id(id, sim_unique_key(), 0, 0, 0, false, NULL); }

ncclResult_t sim_net_child_id_make(ncclUniqueId *id, uint64_t *secret) {
  return net_id(id, sim_unique_key(), 0, 0, 0, true, secret);
}

ncclResult_t sim_net_grow_id_make(ncclUniqueId *id, uint64_t parent_key, uint64_t seq, int parent_nranks) {
  return net_id(id, sim_grow_key(parent_key, seq), parent_key, seq, parent_nranks, false, NULL);
}

/* The bootstrap root of an id made with the network on, and its key. */
static bool id_root(const ncclUniqueId *id, sim_net_addr *root, uint64_t *secret) {
  id_layout l;
  memcpy(&l, id->internal, sizeof l);
  memcpy(secret, id->internal + ID_SECRET, sizeof *secret);
  *root = l.root;
  return l.root.family != 0;
}

uint64_t sim_grow_key(uint64_t parent_key, uint64_t seq) {
  uint64_t z = parent_key ^ (seq * 0x9e3779b97f4a7c15ull) ^ 0x67726f77ull; /* splitmix64 of both */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void sim_grow_id_make(ncclUniqueId *id, uint64_t parent_key, uint64_t seq, int parent_nranks) {
  id_write(id, sim_grow_key(parent_key, seq), parent_key, seq, parent_nranks, NULL, 0);
}

bool sim_id_read(const ncclUniqueId *id, sim_id_info *out) {
  id_layout l;
  memcpy(&l, id->internal, sizeof l);
  if (memcmp(l.magic, ID_MAGIC, sizeof ID_MAGIC) != 0) return false;
  *out = (sim_id_info){l.key, l.parent_key, l.grow_seq, l.parent_nranks};
  return true;
}

bool sim_id_net(const ncclUniqueId *id) {
  sim_net_addr root;
  uint64_t secret;
  return id_root(id, &root, &secret);
}

static bool id_key(const ncclUniqueId *id, uint64_t *key) {
  sim_id_info info;
  if (!sim_id_read(id, &info)) return false;
  *key = info.key;
  return true;
}

/* Whether this process can meet the id's maker: itself, or a process of
 * the same job (util/shm.c). Otherwise a WARN says why: without it both
 * sides would wait out NCCLSIM_TIMEOUT for ranks they can never see. */
bool sim_id_reachable(const ncclUniqueId *id, const char *op) {
  id_layout l;
  memcpy(&l, id->internal, sizeof l);
  int self = (int)getpid();
  uint64_t job = sim_shm_job();
  if (l.job == job && (job != 0 || l.pid == self)) return true;
  if (!job)
    SIM_WARN(SIM_INIT, "%s: the unique id was made by process %d and this is process %d, which does not share "
             "ncclsim's state with it. Processes share it when a launcher (mpirun, srun) started them, or when the "
             "process that forks them set NCCLSIM_PROCESSES=1 (or called ncclsimProcessesInit()) before the fork; "
             "NCCLSIM_PROCESSES=0 turns sharing off (docs/ncclsim.md, \"Ranks as processes\")", op, (int)l.pid, self);
  else
    SIM_WARN(SIM_INIT, "%s: the unique id was made by process %d of another ncclsim job (%016llx; this process, "
             "pid %d, is in job %016llx): the ranks of one communicator must be processes of one launcher job, "
             "or descend from one process that set NCCLSIM_PROCESSES=1", op, (int)l.pid, (unsigned long long)l.job,
             self, (unsigned long long)job);
  return false;
}

ncclResult_t sim_config_check(const ncclConfig_t *config, const char *op) {
  if (config && config->magic != NCCL_API_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: config was not initialised with NCCL_CONFIG_INITIALIZER (magic 0x%x)", op,
             config->magic);
    return ncclInvalidArgument;
  }
  if (config && config->blocking != NCCL_CONFIG_UNDEF_INT && config->blocking != 0 && config->blocking != 1) {
    SIM_WARN(SIM_INIT, "%s: config->blocking is %d, must be 0 or 1", op, config->blocking);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

/* Marks comm's init failed with res, which stays its async error: every
 * later look (ncclCommGetAsyncError, ncclGroupEnd's wait) reports it, not
 * only the first to leave the round. */
static void init_failed(ncclComm_t comm, ncclResult_t res) {
  int none = ncclSuccess;
  atomic_compare_exchange_strong(&comm->async_error, &none, (int)res);
  atomic_store(&comm->state, SIM_COMM_FAILED);
}

/* The round's payload: two ranks whose layouts of nodes differ, which
 * build finds once every rank is in (zeroed: none). */
typedef struct {
  int rank[2];
  int ranks_per_node[2];
} init_payload;

/* The ranks a node of m's layout holds: its ranksPerNode, where 0 and
 * nranks or more all mean one node (comm/clique.c). */
static int node_size(ncclComm_t m) {
  int rpn = m->opts.ranksPerNode;
  return rpn > 0 && rpn < m->nranks ? rpn : m->nranks;
}

/* Whether the ranks of rv lay their nodes out alike; if not, which two
 * differ, in the payload. */
static bool layouts_agree(sim_rv *rv) {
  init_payload *p = sim_rv_payload(rv);
  ncclComm_t first = NULL;
  for (int r = 0; r < sim_rv_nranks(rv); r++) {
    ncclComm_t m = *(ncclComm_t *)sim_rv_slot(rv, r);
    if (!m) continue;
    if (!first) first = m;
    if (node_size(m) == node_size(first)) continue;
    *p = (init_payload){{first->rank, m->rank}, {first->opts.ranksPerNode, m->opts.ranksPerNode}};
    return false;
  }
  return true;
}

/* The round's completion: the last rank to arrive builds the clique. Across
 * hosts only this host's ranks arrive (the others' slots stay NULL) and the
 * clique takes one of their host maps, all alike (the hosts are the nodes
 * then). Ranks whose layouts differ fail, each reporting it as it leaves
 * (fail_disagreed). */
static ncclResult_t build(sim_rv *rv, void *arg) {
  (void)arg;
  int n = sim_rv_nranks(rv);
  ncclComm_t *comms = sim_calloc((size_t)n, sizeof *comms);
  ncclResult_t res = ncclSystemError;
  sim_net_map *net = NULL;
  for (int r = 0; r < n; r++) {
    ncclComm_t m = *(ncclComm_t *)sim_rv_slot(rv, r);
    if (comms) comms[r] = m;
    if (!m || !m->net_pending) continue;
    if (!net) net = m->net_pending;
    else sim_net_map_free(m->net_pending);
    m->net_pending = NULL;
  }
  if (!net && !layouts_agree(rv)) {
    sim_free(comms);
    return ncclInvalidUsage;
  }
  if (comms) res = sim_clique_create(comms, n, sim_rv_key(rv), net);
  sim_free(comms);
  if (res != ncclSuccess) {
    sim_net_map_free(net);
    for (int r = 0; r < n; r++) {
      ncclComm_t m = *(ncclComm_t *)sim_rv_slot(rv, r);
      if (m) init_failed(m, res);
    }
  }
  return res;
}

static const sim_rv_ops init_rv = {"ncclCommInitRank", "unique id", sizeof(init_payload), sizeof(ncclComm_t), build,
                                   NULL, false};
static const sim_rv_ops grow_rv = {"ncclCommGrow", "grow unique id", sizeof(init_payload), sizeof(ncclComm_t), build,
                                   NULL, false};

/* Posts comm into the round of key, which `expected` ranks complete (all,
 * or this host's). Never blocks. */
static ncclResult_t post(ncclComm_t comm, uint64_t key, int expected) {
  sim_rv *rv;
  SIM_CHECK(sim_rv_arrive(&table, comm->grow_join ? &grow_rv : &init_rv, key, comm->nranks, expected,
                          comm->rank, 0, &comm, NULL, &rv));
  sim_rv_lock(&table); /* pollers read it under the lock */
  comm->init_rv = rv;
  sim_rv_unlock(&table);
  return ncclSuccess;
}

/* How an init that has left its round ended: the failure it recorded, or
 * success. */
static ncclResult_t settled(ncclComm_t comm) {
  if (atomic_load(&comm->state) != SIM_COMM_FAILED) return ncclSuccess;
  ncclResult_t res = (ncclResult_t)atomic_load(&comm->async_error);
  /* init_failed and sim_comm_fail record a failure before the state. */
  return ALWAYS(res != ncclSuccess) ? res : ncclInternalError;
}

/* Detaches comm from its round: the round's result if it completed, else
 * ncclInProgress after withdrawing. Once detached, the result it settled
 * on. Caller holds the table's lock. */
static ncclResult_t leave(ncclComm_t comm) {
  sim_rv *rv = comm->init_rv;
  if (!rv) return settled(comm); /* not joining: already settled */
  comm->init_rv = NULL;
  return sim_rv_leave_locked(&table, rv, comm->rank);
}

/* Whether the ranks of rv disagreed, and how, naming both values: at an
 * arrival (the rendezvous's conflict) or in their layouts (build). */
static bool disagreement(sim_rv *rv, char *why, size_t len) {
  if (sim_rv_conflict(rv, why, len)) return true;
  const init_payload *p = sim_rv_payload(rv);
  if (p->rank[0] == p->rank[1]) return false; /* zeroed: none */
  snprintf(why, len, "rank %d has ranksPerNode %d and rank %d has %d (ncclsimSetCommOptions, else "
           "NCCLSIM_RANKS_PER_NODE; 0: one node)", p->rank[0], p->ranks_per_node[0], p->rank[1], p->ranks_per_node[1]);
  return true;
}

/* Records, for a rank leaving a round whose ranks disagreed, why: every
 * rank of it fails so, each in its own thread (and process). */
static void fail_disagreed(ncclComm_t comm, ncclResult_t res, const char *why) {
  sim_comm_fail(comm, res, "%s: rank %d of %d: the ranks of this %s disagree, so none of them can init: %s",
                comm->grow_join ? "ncclCommGrow" : "ncclCommInitRank", comm->rank, comm->nranks,
                comm->grow_join ? "grow unique id" : "unique id", why);
  init_failed(comm, res);
}

static void pend_remove(ncclComm_t comm);

ncclResult_t sim_init_cancel(ncclComm_t comm) {
  pend_remove(comm);
  sim_init_pre *p = comm->init_pre;
  comm->init_pre = NULL;
  if (p) p->end(p);
  sim_rv_lock(&table);
  leave(comm);
  sim_rv_unlock(&table);
  return ncclSuccess;
}

static void report_missing(ncclComm_t comm, sim_rv *rv) {
  char missing[256];
  sim_net_map *m = comm->net_pending;
  if (!m) {
    sim_rv_missing(rv, missing, sizeof missing);
  } else { /* across hosts, only this host's ranks arrive here */
    int n = 0;
    missing[0] = 0;
    for (int r = 0; r < m->nranks && n < (int)sizeof missing - 12; r++)
      if (m->host[r] == m->my_host && !sim_rv_present(rv, r))
        n += snprintf(missing + n, sizeof missing - (size_t)n, n ? ",%d" : "%d", r);
  }
  if (comm->grow_join) {
    sim_comm_fail(comm, ncclTimeout,
                  "ncclCommGrow: rank %d of %d waited NCCLSIM_TIMEOUT=%s s for rank(s) [%s] to join the grown "
                  "communicator %016llx; they never called ncclCommGrow for this grow (existing ranks with their "
                  "parent communicator, new ranks with the id that ncclCommGetUniqueId made for it; an id serves "
                  "one grow only)",
                  comm->rank, sim_rv_nranks(rv), sim_param_text(SIM_P_TIMEOUT), missing,
                  (unsigned long long)sim_rv_key(rv));
    return;
  }
  sim_comm_fail(comm, ncclTimeout,
                "ncclCommInitRank: rank %d of %d waited NCCLSIM_TIMEOUT=%s s for rank(s) [%s] to join "
                "communicator %016llx; they never called init with this unique id",
                comm->rank, sim_rv_nranks(rv), sim_param_text(SIM_P_TIMEOUT), missing,
                (unsigned long long)sim_rv_key(rv));
}

/* Across hosts, the bootstrap comes first (sim/net): once the root has
 * answered, comm knows which ranks share its host and joins their round.
 * ncclSuccess once posted there (or when there is no bootstrap),
 * ncclInProgress before, else the failure, recorded. Only the thread that
 * inits or polls comm calls it. */
static ncclResult_t boot_step(ncclComm_t comm, bool block) {
  if (!comm->boot) return ncclSuccess;
  char why[512];
  sim_net_map *m = NULL;
  ncclResult_t res = sim_net_join_poll(comm->boot, block, comm->boot_deadline, &m, why, sizeof why);
  if (res == ncclInProgress) {
    if (sim_now_ns() < comm->boot_deadline) return res;
    snprintf(why, sizeof why, "rank %d of %d waited NCCLSIM_TIMEOUT=%s s for the bootstrap root's answer, which "
             "comes once every rank has called init with the unique id", comm->rank, comm->nranks,
             sim_param_text(SIM_P_TIMEOUT));
    res = ncclTimeout;
  }
  sim_net_join_free(comm->boot);
  comm->boot = NULL;
  if (res == ncclSuccess) {
    int expected = m->host_size[m->my_host];
    sim_ucx_connect(m, comm->boot_deadline); /* so that a host that dies is seen (sim/net/ucx.c) */
    if (m->nhosts == 1) { /* every rank is here: an ordinary communicator */
      sim_net_map_free(m);
      m = NULL;
    }
    comm->net_pending = m;
    res = post(comm, comm->boot_key, expected);
    if (res == ncclSuccess) return ncclSuccess;
    snprintf(why, sizeof why, "rank %d cannot join this host's ranks", comm->rank);
  }
  sim_comm_fail(comm, res, "ncclCommInitRank: %s", why);
  init_failed(comm, res);
  return res;
}

/* The bootstrap join of comm, made, with id (which has a root): its hello
 * to the root. On failure a WARN says why, and comm is the caller's. */
static ncclResult_t net_join(ncclComm_t comm, const sim_net_addr *root, uint64_t secret, uint64_t key,
                             const char *op) {
  char why[512] = "";
  sim_net_rank_info mine; /* for its peers on other hosts */
  memset(&mine, 0, sizeof mine);
  mine.gin_type = comm->opts.ginType;
  mine.railed_gin_type = comm->opts.railedGinType;
  ncclResult_t res = sim_comm_net_join(comm, &mine, why, sizeof why);
  if (res == ncclSuccess)
    res = sim_net_join(root, secret, key, comm->nranks, comm->rank, &mine, sizeof mine, &comm->boot, why,
                       sizeof why);
  if (res != ncclSuccess) {
    SIM_WARN(SIM_INIT, "%s: rank %d: %s", op, comm->rank, why);
    return res;
  }
  comm->boot_key = key;
  /* A second past the root's own deadline, whose answer names the ranks
   * that never came. */
  comm->boot_deadline = sim_now_ns() + sim_timeout_ns() + 1000000000ull;
  return ncclSuccess;
}

/* An init whose id comes later (sim_init_later): asks its prelude, and
 * once the id is known sends the hello. ncclSuccess once sent (or with no
 * prelude), ncclInProgress before, else the failure, recorded. Only the
 * thread that inits or polls comm calls it. */
static ncclResult_t pre_step(ncclComm_t comm, bool block) {
  sim_init_pre *p = comm->init_pre;
  if (!p) return ncclSuccess;
  ncclUniqueId id;
  ncclResult_t res = p->step(p, comm, block, &id);
  if (res == ncclInProgress) return res;
  const char *op = p->op;
  comm->init_pre = NULL;
  p->end(p);
  sim_net_addr root;
  uint64_t secret = 0, key = 0;
  if (res == ncclSuccess && (!id_key(&id, &key) || !id_root(&id, &root, &secret)))
    res = sim_comm_fail(comm, ncclInternalError, "%s: rank %d: the unique id its peers gave has no bootstrap root",
                        op, comm->rank);
  if (res == ncclSuccess && (res = net_join(comm, &root, secret, key, op)) != ncclSuccess)
    sim_comm_fail(comm, res, "%s: rank %d could not reach the bootstrap root of its unique id", op, comm->rank);
  if (res != ncclSuccess) init_failed(comm, res);
  return res;
}

/* Non-blocking inits of this process still at their bootstrap (a prelude,
 * or the root's answer to come). A poll of any of them advances them all,
 * as NCCL's background threads would: a rank joins its host's ranks only
 * once it has heard from the root, so a thread that inits several ranks
 * and polls them one after another (NCCL's own example) would otherwise
 * wait on the first for a second that nobody advances. `busy` keeps each
 * comm to one thread at a time. */
static struct {
  pthread_mutex_t lock;
  ncclComm_t head;
} pend = {PTHREAD_MUTEX_INITIALIZER, NULL};

static void pend_add(ncclComm_t comm) {
  if (!comm->boot && !comm->init_pre) return;
  pthread_mutex_lock(&pend.lock);
  comm->pend_next = pend.head;
  pend.head = comm;
  comm->pend_listed = true;
  pthread_mutex_unlock(&pend.lock);
}

static void pend_unlink_locked(ncclComm_t comm) {
  ncclComm_t *pp = &pend.head;
  while (*pp != comm) pp = &(*pp)->pend_next;
  *pp = comm->pend_next;
  comm->pend_listed = false;
}

/* Takes comm off the list (its teardown), once no other thread advances it. */
static void pend_remove(ncclComm_t comm) {
  pthread_mutex_lock(&pend.lock);
  while (comm->pend_listed && comm->pend_busy) {
    pthread_mutex_unlock(&pend.lock);
    sched_yield();
    pthread_mutex_lock(&pend.lock);
  }
  if (comm->pend_listed) pend_unlink_locked(comm);
  pthread_mutex_unlock(&pend.lock);
}

/* Advances every listed init one step (non-blocking); whether comm is
 * still at its bootstrap. A failure is recorded on its comm, which its
 * own poll then reports. */
static bool pend_advance(ncclComm_t comm) {
  enum { MAX = 64 };
  ncclComm_t mine[MAX];
  int n = 0;
  pthread_mutex_lock(&pend.lock);
  if (comm->pend_listed && !comm->pend_busy) comm->pend_busy = true, mine[n++] = comm; /* itself first */
  for (ncclComm_t c = pend.head; c && n < MAX; c = c->pend_next)
    if (!c->pend_busy) c->pend_busy = true, mine[n++] = c;
  pthread_mutex_unlock(&pend.lock);
  for (int i = 0; i < n; i++) {
    ncclComm_t c = mine[i];
    if (c->init_pre && pre_step(c, false) != ncclSuccess) continue;
    if (c->boot) boot_step(c, false);
  }
  pthread_mutex_lock(&pend.lock);
  for (int i = 0; i < n; i++) {
    mine[i]->pend_busy = false;
    if (!mine[i]->boot && !mine[i]->init_pre) pend_unlink_locked(mine[i]);
  }
  bool pending = comm->pend_listed;
  pthread_mutex_unlock(&pend.lock);
  return pending;
}

/* Non-blocking progress: the round's result once complete (and again at
 * every later call), ncclInProgress before, ncclTimeout past the deadline
 * (the rank then withdraws). */
static ncclResult_t poll_init(ncclComm_t comm) {
  if (pend_advance(comm)) return ncclInProgress;
  sim_rv_lock(&table);
  sim_rv *rv = comm->init_rv;
  ncclResult_t res;
  if (!rv || sim_rv_done(rv)) {
    char why[320];
    bool disagreed = rv && disagreement(rv, why, sizeof why);
    res = leave(comm);
    if (disagreed) fail_disagreed(comm, res, why);
  } else if (sim_now_ns() >= sim_rv_deadline(rv)) {
    report_missing(comm, rv);
    leave(comm);
    atomic_store(&comm->state, SIM_COMM_FAILED);
    res = ncclTimeout;
  } else {
    res = ncclInProgress;
  }
  sim_rv_unlock(&table);
  return res;
}

/* Blocks until comm's round completes or times out. */
static ncclResult_t wait_init(ncclComm_t comm) {
  if (comm->init_pre) {
    ncclResult_t p = pre_step(comm, true);
    if (p != ncclSuccess) return p == ncclInProgress ? ncclInternalError : p;
  }
  if (comm->boot) {
    ncclResult_t b = boot_step(comm, true);
    if (b != ncclSuccess) return b == ncclInProgress ? ncclInternalError : b;
  }
  if (atomic_load(&comm->state) == SIM_COMM_FAILED && !comm->init_rv) return settled(comm); /* failed in its boot */
  sim_rv_lock(&table);
  sim_rv *rv = comm->init_rv;
  sim_rv_unlock(&table);
  /* Only this thread leaves the round for comm: rv stays valid. */
  if (rv) sim_rv_wait(&table, rv, NULL, sim_rv_deadline(rv));
  ncclResult_t res = poll_init(comm);
  /* The wait ends once the round is done or its deadline has passed,
   * after which poll_init says ncclTimeout: never still in progress. */
  if (NEVER(res == ncclInProgress)) {
    sim_rv_lock(&table);
    if (comm->init_rv) report_missing(comm, comm->init_rv);
    leave(comm);
    sim_rv_unlock(&table);
    atomic_store(&comm->state, SIM_COMM_FAILED);
    res = ncclTimeout;
  }
  return res;
}

typedef struct {
  sim_group_job job;
  ncclComm_t comm;
} init_job;

static ncclResult_t init_job_run(sim_group_job *job) { return wait_init(((init_job *)job)->comm); }
static void init_job_start(sim_group_job *job) {
  ncclComm_t comm = ((init_job *)job)->comm;
  if (comm->init_pre) pre_step(comm, true);
}
static void init_job_prepare(sim_group_job *job) { sim_init_boot(((init_job *)job)->comm); }
static void init_job_free(sim_group_job *job) { sim_free(job); }

void sim_init_boot(ncclComm_t comm) {
  if (comm->boot) boot_step(comm, true);
}

ncclResult_t sim_init_wait(ncclComm_t comm) { return wait_init(comm); }

/* sim_init_rank up to its wait: the arguments checked, the comm made and,
 * across hosts, its hello sent to the bootstrap root; *key the round's. */
static ncclResult_t init_make(ncclComm_t *made, uint64_t *keyp, int nranks, const ncclUniqueId *id, int rank,
                              const ncclConfig_t *config, int device, const ncclsimCommOptions_t *opts,
                              const char *op) {
  uint64_t key;
  if (nranks < 1) {
    SIM_WARN(SIM_INIT, "%s: nranks is %d, must be at least 1", op, nranks);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= nranks) {
    SIM_WARN(SIM_INIT, "%s: rank is %d, must be in [0, %d)", op, rank, nranks);
    return ncclInvalidArgument;
  }
  if (!id_key(id, &key)) { /* id: never NULL, the callers pass an address */
    SIM_WARN(SIM_INIT, "%s: the unique id was not made by ncclGetUniqueId", op);
    return ncclInvalidArgument;
  }
  sim_net_addr root;
  uint64_t secret;
  bool net = id_root(id, &root, &secret);
  if (!net && !sim_id_reachable(id, op)) return ncclInvalidUsage;
  if (net && nranks > (1 << 20)) {
    SIM_WARN(SIM_INIT, "%s: nranks is %d; ncclsim's communicators across hosts hold at most %d ranks", op, nranks,
             1 << 20);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, op));
  ncclComm_t comm = sim_comm_alloc(nranks, rank, device, config);
  if (!comm) return ncclSystemError;
  if (opts) comm->opts = *opts;
  ncclResult_t res = net ? net_join(comm, &root, secret, key, op) : ncclSuccess;
  if (res != ncclSuccess) {
    sim_comm_free(comm);
    return res;
  }
  *made = comm;
  *keyp = key;
  return ncclSuccess;
}

/* The common path of every ncclCommInitRank* call (on the current
 * device, with the calling thread's options) and of a grow whose id has a
 * bootstrap root. */
ncclResult_t sim_init_rank(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                           const ncclConfig_t *config, int device, const ncclsimCommOptions_t *opts, const char *op) {
  if (!out) {
    SIM_WARN(SIM_INIT, "%s: comm is NULL", op);
    return ncclInvalidArgument;
  }
  *out = NULL;
  ncclComm_t comm;
  uint64_t key;
  SIM_CHECK(init_make(&comm, &key, nranks, id, rank, config, device, opts, op));
  return sim_init_join(comm, key, out);
}

ncclResult_t sim_init_start(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                            const ncclConfig_t *config, int device, const ncclsimCommOptions_t *opts,
                            const char *op) {
  *out = NULL;
  ncclComm_t comm;
  uint64_t key;
  SIM_CHECK(init_make(&comm, &key, nranks, id, rank, config, device, opts, op));
  /* With a bootstrap, the post waits for the root's answer (boot_step). */
  ncclResult_t res = comm->boot ? ncclSuccess : post(comm, key, comm->nranks);
  if (res != ncclSuccess) {
    sim_comm_free(comm);
    return res;
  }
  *out = comm;
  return ncclSuccess;
}

ncclResult_t sim_init_later(ncclComm_t *out, int nranks, int rank, const ncclConfig_t *config, int device,
                            const ncclsimCommOptions_t *opts, sim_init_pre *pre) {
  *out = NULL;
  ncclComm_t comm = sim_comm_alloc(nranks, rank, device, config);
  if (!comm) {
    pre->end(pre);
    return ncclSystemError;
  }
  if (opts) comm->opts = *opts;
  comm->init_pre = pre;
  return sim_init_join(comm, 0, out);
}

ncclResult_t sim_init_join(ncclComm_t comm, uint64_t key, ncclComm_t *out) {
  /* A blocking init inside a group waits at ncclGroupEnd. Its job is made
   * before posting: once posted, the last rank builds the clique, which a
   * failure afterwards could no longer take this comm back out of. */
  init_job *job = NULL;
  if (comm->blocking && sim_group_depth() > 0 && !(job = sim_calloc(1, sizeof *job))) {
    sim_init_cancel(comm); /* its prelude, if any */
    sim_comm_free(comm);
    return ncclSystemError;
  }
  /* With a bootstrap, the post waits for the root's answer (boot_step);
   * with a prelude, for the id too. */
  ncclResult_t res = comm->boot || comm->init_pre ? ncclSuccess : post(comm, key, comm->nranks);
  if (res != ncclSuccess) {
    sim_free(job);
    sim_comm_free(comm);
    return res;
  }
  *out = comm;
  if (!comm->blocking) {
    pend_add(comm);
    return poll_init(comm);
  }
  if (job) {
    job->job.comm = comm;
    job->job.run = init_job_run;
    job->job.release = init_job_free;
    job->job.start = init_job_start;
    job->job.prepare = init_job_prepare;
    job->comm = comm;
    return sim_group_add_job(&job->job);
  }
  return wait_init(comm);
}

/* As in NCCL, an init that fails inside a group also fails the group
 * (ncclInProgress, a non-blocking init under way, is no failure). */
ncclResult_t sim_init_group_check(ncclResult_t res) {
  return res == ncclInProgress ? res : sim_group_error(res);
}

/* Whether id is a grow's (ncclCommGetUniqueId), which the public inits
 * refuse (sim_init_rank takes either: grow.c joins through it). `which`
 * names the argument. */
static bool grow_id(const ncclUniqueId *id, const char *op, const char *which) {
  sim_id_info info;
  if (!sim_id_read(id, &info) || !info.grow_seq) return false;
  SIM_WARN(SIM_INIT, "%s: %s was made by ncclCommGetUniqueId, for ncclCommGrow (ncclsim checks this)", op, which);
  return true;
}

SIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  if (grow_id(&id, "ncclCommInitRank", "the unique id")) return sim_group_error(ncclInvalidArgument);
  return sim_init_group_check(
      sim_init_rank(comm, nranks, &id, rank, NULL, sim_current_device(), NULL, "ncclCommInitRank"));
}

SIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                               ncclConfig_t *config) {
  if (grow_id(&id, "ncclCommInitRankConfig", "the unique id")) return sim_group_error(ncclInvalidArgument);
  return sim_init_group_check(
      sim_init_rank(comm, nranks, &id, rank, config, sim_current_device(), NULL, "ncclCommInitRankConfig"));
}

SIM_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId,
                                                 ncclUniqueId *ids, ncclConfig_t *config) {
  if (nId < 1 || !ids) {
    SIM_WARN(SIM_INIT, "ncclCommInitRankScalable: nId is %d and commIds is %p; need at least one id", nId,
             (void *)ids);
    return sim_group_error(ncclInvalidArgument);
  }
  for (int i = 0; i < nId; i++) {
    char which[32];
    snprintf(which, sizeof which, "commIds[%d]", i);
    if (grow_id(&ids[i], "ncclCommInitRankScalable", which)) return sim_group_error(ncclInvalidArgument);
  }
  /* Every rank passes the same ids; the first names the communicator. */
  return sim_init_group_check(
      sim_init_rank(comm, nranks, &ids[0], rank, config, sim_current_device(), NULL, "ncclCommInitRankScalable"));
}

SIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  if (!comms) {
    SIM_WARN(SIM_INIT, "ncclCommInitAll: comms is NULL");
    return ncclInvalidArgument;
  }
  if (ndev < 0) {
    SIM_WARN(SIM_INIT, "ncclCommInitAll: ndev is %d", ndev);
    return ncclInvalidArgument;
  }
  if (ndev == 0) return ncclSuccess;
  int ndevices = sim_device_count();
  for (int i = 0; i < ndev; i++) {
    int d = devlist ? devlist[i] : i;
    if (d < 0 || d >= ndevices) {
      SIM_WARN(SIM_INIT, "ncclCommInitAll: devlist[%d] is %d, but there are %d devices", i, d, ndevices);
      return ncclInvalidArgument;
    }
    for (int k = 0; devlist && k < i; k++)
      if (devlist[k] == d) {
        SIM_WARN(SIM_INIT, "ncclCommInitAll: device %d appears twice in devlist (%d and %d)", d, k, i);
        return ncclInvalidUsage;
      }
  }
  uint64_t key = sim_unique_key();
  int i;
  for (i = 0; i < ndev; i++)
    if (!(comms[i] = sim_comm_alloc(ndev, i, devlist ? devlist[i] : i, NULL))) break;
  ncclResult_t res = i < ndev ? ncclSystemError : sim_clique_create(comms, ndev, key, NULL);
  if (res != ncclSuccess) {
    while (--i >= 0) {
      sim_comm_free(comms[i]);
      comms[i] = NULL;
    }
  }
  return res;
}

SIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err) {
  if (!comm || comm->magic != SIM_COMM_MAGIC || !err) {
    SIM_WARN(SIM_INIT, "ncclCommGetAsyncError: comm %p or asyncError %p is invalid", (void *)comm, (void *)err);
    return ncclInvalidArgument;
  }
  /* The last rank to join sets comm->clique under the table's lock
   * (non-blocking init). */
  sim_rv_lock(&table);
  bool has_clique = comm->clique != NULL;
  sim_rv_unlock(&table);
  if (!has_clique) {
    ncclResult_t r = poll_init(comm);
    if (r != ncclSuccess) {
      *err = r;
      return ncclSuccess;
    }
  }
  sim_comm_poll(comm);
  *err = (ncclResult_t)atomic_load(&comm->async_error);
  return ncclSuccess;
}
