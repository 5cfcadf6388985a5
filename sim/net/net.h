/*
 * sim/net/net.h — ranks on other hosts.
 *
 * Inside a host (the processes that share one arena, util/shm.c, or one
 * process alone) the engine reaches every rank through memory. Between
 * hosts nothing is shared: ranks find each other through a bootstrap, as
 * NCCL's do, and UCX moves their bytes.
 *
 * The bootstrap (net/bootstrap.c). A unique id made with the network on
 * (NCCLSIM_NET) carries the address of its maker's bootstrap root (one
 * TCP listener per process, on the interface NCCLSIM_SOCKET_IFNAME picks)
 * and a random key. Every rank that inits with the id connects there and
 * sends its rank, its host and its UCX worker's address; once all nranks
 * have, the root answers each with the whole table. A key the root did not
 * make, or an id that served a communicator already, is refused.
 *
 * Hosts. A host is the set of processes that share memory: one arena
 * (sim_shm_job()), or one process. NCCLSIM_HOST_ID names this process's
 * host: processes of one launcher job with different names get separate
 * arenas, so that one machine plays several hosts. A communicator whose
 * ranks are on more than one host has a host map (sim_clique.net): its
 * ranks elsewhere have no comm in the clique (ranks[r] is NULL), and the
 * LSA team is the host.
 *
 * UCX (net/ucx.c): one context and worker per process, endpoints made at a
 * peer host's first use. Point-to-point operations to a rank elsewhere are
 * tagged messages (p2p/p2p_net.c); collectives go through the hosts'
 * leaders (coll/coll_net.c); puts and signals are UCX puts and atomic adds
 * into memory mapped with ucp_mem_map (rma/rma_net.c).
 */
#ifndef NCCLSIM_NET_H_
#define NCCLSIM_NET_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nccl.h"

struct sim_clique;

enum { SIM_NET_HOST_NAME = 64 };

/* A bootstrap root's address as the unique id carries it. */
typedef struct sim_net_addr {
  uint8_t family; /* AF_INET or AF_INET6; 0: none */
  uint8_t pad;
  uint16_t port; /* network order */
  uint8_t ip[16];
} sim_net_addr;

/* The ranks of a communicator that spans hosts, in the clique (shared by
 * the processes of a host). Hosts are numbered by their first rank. */
typedef struct sim_net_map {
  int nranks, nhosts;
  int my_host;             /* the host of the clique's ranks */
  int *host;               /* rank -> host */
  int *host_rank;          /* rank -> its index among its host's ranks */
  int *host_size;          /* host -> its ranks */
  uint64_t *group;         /* rank -> its host's identity (sim_net_group) */
  int *pid;                /* rank -> its process */
  char (*host_name)[SIM_NET_HOST_NAME]; /* rank -> NCCLSIM_HOST_ID or the machine's name */
  uint32_t *addr_off, *addr_len; /* rank -> its UCX worker address in addrs */
  uint32_t *extra_len;           /* rank -> what its rank added (sim_net_join's extra), after its address */
  uint8_t *addrs;
} sim_net_map;

/* Whether ncclGetUniqueId makes ids with a bootstrap root (NCCLSIM_NET). */
bool sim_net_on(void);
/* This host's identity: the arena's job, or a random number per process. */
uint64_t sim_net_group(void);
/* Whether NCCLSIM_HOST_ID names this process's host (it is not auto). */
bool sim_net_host_set(void);
/* NCCLSIM_HOST_ID, else the machine's name. */
const char *sim_net_host_name(void);

/* The root side: starts this process's bootstrap root if it is not running
 * and registers `secret` as a key it accepts for one round. `once`: an id
 * that ncclsim makes for its own use (a split's or shrink's child), whose
 * record goes as its round ends rather than stay to refuse a second use.
 * ncclSystemError (with a WARN) if no interface or socket can be had. */
ncclResult_t sim_net_root_open(uint64_t secret, bool once, sim_net_addr *addr);
/* Withdraws a key of this process's root that no rank will init with (it
 * must not be one this process's ranks have said hello with): its record
 * goes now; a round under way with it fails at once, every rank in it told
 * why. Nothing for a key that is spent or unknown. */
void sim_net_root_release(uint64_t secret);
/* The keys this process's root holds on record, spent or not; *open (may
 * be NULL) those not spent, each of which would still start a round or is
 * in one. Tests count them. */
int sim_net_root_keys(int *open);

/* A rank's side of the bootstrap. join connects and sends; it never waits
 * for other ranks. poll reads the root's answer: ncclInProgress until it
 * comes (or the deadline, in ns of sim_now_ns, when block is true), then
 * the map (sim_malloc'd, freed with sim_net_map_free) or the failure,
 * recorded with its reason in `why`. */
typedef struct sim_net_boot sim_net_boot;
/* `extra` (extra_len bytes, may be 0) reaches every rank with the map
 * (sim_net_extra): the rank's signal counters, for puts from elsewhere. */
ncclResult_t sim_net_join(const sim_net_addr *root, uint64_t secret, uint64_t key, int nranks, int rank,
                          const void *extra, size_t extra_len, sim_net_boot **out, char *why, size_t why_len);
ncclResult_t sim_net_join_poll(sim_net_boot *b, bool block, uint64_t deadline_ns, sim_net_map **out, char *why,
                               size_t why_len);
void sim_net_join_free(sim_net_boot *b);
void sim_net_map_free(sim_net_map *m);
/* "host NAME (ranks 2,3)" for diagnostics. */
void sim_net_describe_host(const sim_net_map *m, int host, char *buf, size_t len);

/* What rank r gave sim_net_join as extra; *len its bytes. */
static inline const void *sim_net_extra(const sim_net_map *m, int r, size_t *len) {
  *len = m->extra_len[r];
  return m->addrs + m->addr_off[r] + m->addr_len[r];
}

/* The tag of a message between hosts' leaders, of a management exchange,
 * or between two ranks' first-use connection (bit 63: p2p_net.c keeps it
 * clear): 15 bits of the communicator's key, 7 of a sequence number, 2 of
 * `space` (SIM_NET_TAG_*), 20 of each end (a host, a rank, or a place in
 * sim_net_exchange's peers). */
enum { SIM_NET_TAG_COLL = 0, SIM_NET_TAG_WINDOW = 1, SIM_NET_TAG_CONNECT = 2, SIM_NET_TAG_MGMT = 3 };
static inline uint64_t sim_net_leader_tag(uint64_t key, int space, uint64_t seq, int from, int to) {
  uint64_t k = key ^ (key >> 15) ^ (key >> 30) ^ (key >> 45);
  return (1ull << 63) | ((k & 0x7fffull) << 48) | ((seq & 0x7full) << 41) | ((uint64_t)(space & 3) << 39) |
         ((uint64_t)from << 20) | (uint64_t)to;
}

/* Host h's leader: its first rank. */
static inline int sim_net_leader(const sim_net_map *m, int h) {
  int r = 0;
  while (m->host[r] != h) r++;
  return r;
}

/* Whether `peer` is on another host than the clique of m (NULL: one host). */
static inline bool sim_net_remote(const sim_net_map *m, int peer) { return m && m->host[peer] != m->my_host; }

/* UCX (net/ucx.c). */
/* Makes the process's context and worker once; its address for the
 * bootstrap. ncclSystemError with the reason in why. */
ncclResult_t sim_ucx_init(const void **addr, size_t *len, char *why, size_t why_len);
/* One tagged send or receive in flight; the caller holds it. */
typedef struct sim_ucx_op {
  void *req;     /* UCX's request; NULL once ended */
  int status;    /* ucs_status_t once ended */
  size_t length; /* a receive's bytes, once ended */
  bool recv;
  bool cancelled;   /* ended by sim_ucx_cancel, not by UCX */
  _Atomic int done; /* set by UCX's completion callback (any progressing thread) */
  void *rkey;       /* a put's or add's unpacked remote key, destroyed when it ends */
  uint64_t operand; /* an add's: UCX reads it until the add ends */
} sim_ucx_op;
/* Memory a process registered for one-sided operations from elsewhere:
 * its address there and its remote key, packed (as sim_net_join's extra
 * and in window registrations). */
typedef struct sim_ucx_rkey {
  uint64_t addr;
  uint32_t len;
  uint8_t bytes[236];
} sim_ucx_rkey;
/* What each rank of a communicator across hosts gives the bootstrap
 * (sim_net_join's extra), for its peers on other hosts: its signal
 * counters (rma/rma_net.c) and its GIN types (ncclDevCommCreate's check
 * that every rank supports GIN, dev/devcomm.c). */
typedef struct sim_net_rank_info {
  int32_t gin_type, railed_gin_type; /* its communicator's options */
  sim_ucx_rkey row;                  /* its signal counters */
} sim_net_rank_info;
/* Rank r's info, copied out of the map (its bytes are not aligned); false
 * if r gave none of this size. */
static inline bool sim_net_rank_info_of(const sim_net_map *m, int r, sim_net_rank_info *out) {
  size_t len;
  const void *p = sim_net_extra(m, r, &len);
  if (len != sizeof *out) return false;
  __builtin_memcpy(out, p, sizeof *out);
  return true;
}
/* A tagged send to `peer`'s process, or a receive of one. ncclSystemError
 * (with a WARN) if UCX refuses it at once. A send ends once its bytes are
 * UCX's (they may still wait in UCX for the connection: this process must
 * progress UCX for them to leave), or, `sync`, once the peer's receive
 * has matched it. */
ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes, bool sync,
                          sim_ucx_op *op);
ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op);
/* Progresses the worker (*progressed, may be NULL: whether anything
 * happened); ncclInProgress, or the operation's end:
 * ncclSuccess (a receive's bytes in op->length), ncclInvalidUsage for a
 * message longer than the buffer, ncclRemoteError for a peer that is gone,
 * ncclSystemError for another UCX failure (op->status tells). */
ncclResult_t sim_ucx_test(sim_ucx_op *op, bool *progressed);
/* Registers [p, p + bytes) of this process for puts and adds from other
 * hosts: *memh (for sim_ucx_mem_unmap, in this process) and *rkey.
 * ncclSystemError (with a WARN) if UCX refuses. */
ncclResult_t sim_ucx_mem_map(void *p, size_t bytes, void **memh, sim_ucx_rkey *rkey);
void sim_ucx_mem_unmap(void *memh);
/* One put of `bytes` from src to k->addr + offset in peer's process, and an
 * atomic add of 1 to the 64-bit counter at k->addr + offset, with `fence`
 * ordered after every put this process issued before it. Each ends as a
 * send does (sim_ucx_test). */
ncclResult_t sim_ucx_put(const sim_net_map *m, int peer, const void *src, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op);
ncclResult_t sim_ucx_add(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, bool fence,
                         sim_ucx_op *op);
/* `bytes` from k->addr + offset in peer's process into dst (GIN's get):
 * ends as a receive, once dst holds them (sim_ucx_test). */
ncclResult_t sim_ucx_get(const sim_net_map *m, int peer, void *dst, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op);
/* The same as sim_ucx_add, adding `value` (GIN's signal adds). */
ncclResult_t sim_ucx_add_value(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, uint64_t value,
                               bool fence, sim_ucx_op *op);
/* Progresses the worker once (whether anything happened): puts and adds
 * from elsewhere land in this process only while it does. */
bool sim_ucx_progress(void);
/* Until every put and add this process issued is applied at its target
 * (each target acknowledges them, when it progresses), or deadline_ns: a
 * process must not leave before, or the target's acknowledgement to a
 * process gone is a fatal error in UCX 1.13. At once if it issued none
 * since the last flush. Called at exit. */
void sim_ucx_flush(uint64_t deadline_ns);
/* Sleeps until the worker has an event, or max_us. */
void sim_ucx_sleep(unsigned max_us);
/* Gives up an operation that has not ended (a timeout, a cancel): a
 * receive is cancelled, a send is left to UCX, which frees it once done. */
void sim_ucx_cancel(sim_ucx_op *op);
/* ucs_status_string of op->status. */
const char *sim_ucx_status_text(const sim_ucx_op *op);
/* Makes the endpoints to every process of m's other hosts now (at init),
 * so that a host that dies is noticed even by a rank that only receives
 * from it: UCX fails the endpoint when the connection drops. Returns once
 * the endpoints it made are wired up (a message each way), one of them
 * failed, or at deadline_ns. */
void sim_ucx_connect(const sim_net_map *m, uint64_t deadline_ns);
/* Why UCX gave up the endpoint to peer's process, or NULL while it is up. */
const char *sim_ucx_peer_failed(const sim_net_map *m, int peer);

/* What net tells the floors above it (net is below core and comm, and
 * calls them by no name): set by comm/clique.c at load, before any
 * communicator exists (net/peer_wait.c keeps them). */
typedef struct sim_net_hooks {
  /* Records a failure on comm (core/fail.c's sim_comm_fail); returns res. */
  ncclResult_t (*fail)(ncclComm_t comm, ncclResult_t res, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
  /* Ends every rank's operations of c (comm/clique.c's sim_clique_abort). */
  void (*abort)(struct sim_clique *c);
  /* Whether a rank of this process is alive in a communicator across
   * hosts: at exit, UCX is closed only if none is. */
  bool (*comms_here)(void);
} sim_net_hooks;
void sim_net_set_hooks(const sim_net_hooks *h);

/* Waiting on ranks elsewhere (net/peer_wait.c). */
struct sim_due;
/* If the process of `peer` (-1: of any rank elsewhere) is gone (UCX gave
 * its endpoint up): fails comm with ncclRemoteError, naming the peer, its
 * pid, its host and the host's ranks, aborts the clique so that every rank
 * of this host ends too (NCCL's error for a lost peer), and returns
 * ncclRemoteError. Else ncclSuccess. */
ncclResult_t sim_net_check_gone(ncclComm_t comm, int peer);
/* Progresses UCX until op ends: its result (sim_ucx_test). While nothing
 * moves for idle_spins polls it sleeps on the worker's events, 1 ms at a
 * time, checking comm's cancel (ncclRemoteError), `peer` as
 * sim_net_check_gone does, and the deadline (ncclTimeout); op is cancelled
 * in those three cases (op->cancelled tells them from UCX's own end). */
ncclResult_t sim_net_wait(ncclComm_t comm, sim_ucx_op *op, int peer, unsigned idle_spins, struct sim_due *due);
/* sim_net_wait, ended early by *cancel instead of comm's (NULL: nothing
 * but the deadline and a host gone ends it; a management call on a revoked
 * communicator waits so). */
ncclResult_t sim_net_wait_until(ncclComm_t comm, sim_ucx_op *op, int peer, unsigned idle_spins,
                                const _Atomic int *cancel, struct sim_due *due);
/* Waits for ops[from..n) as sim_net_wait does (any host gone ends them);
 * a failure of UCX's own fails comm, naming `what` ("a collective across
 * hosts"). */
ncclResult_t sim_net_wait_ops(ncclComm_t comm, sim_ucx_op *ops, int from, int n, struct sim_due *due,
                              const char *what);
/* Calls ready(arg, &moved), which progresses UCX, until it returns true:
 * ncclSuccess, or ncclRemoteError (*cancel set, may be NULL; a host gone)
 * or ncclTimeout as sim_net_wait. After idle_spins calls in a row that moved
 * nothing it sleeps on the worker's events, at most sleep_us at a time
 * (what ready() waits for may come from this host, which wakes no UCX
 * event). */
ncclResult_t sim_net_poll(ncclComm_t comm, bool (*ready)(void *arg, bool *moved), void *arg, int peer,
                          unsigned idle_spins, unsigned sleep_us, const _Atomic int *cancel,
                          struct sim_due *due);
/* An allgather among `peers` (ranks of comm, npeers of them, this rank at
 * index me; every participant lists the same ranks in the same order), one
 * tagged message from each to each (net/exchange.c). */
typedef struct sim_net_xchg {
  int space;            /* SIM_NET_TAG_* */
  uint64_t seq;         /* the tags' sequence number: distinct for exchanges that may overlap */
  const int *peers;
  int npeers, me;
  const void *mine;     /* what this rank sends each of the others */
  size_t mine_bytes;
  void *const *out;     /* out[i] receives peers[i]'s, exactly bytes[i] of it (out[me] unused) */
  const size_t *bytes;
  bool mgmt;            /* comm's cancel (a revoke) does not end it */
  const char *what;     /* for diagnostics: "ncclCommSplit across hosts" */
} sim_net_xchg;
/* ncclSuccess; or as the waits end early: ncclRemoteError for comm's
 * cancel (unless mgmt) or a host gone (reported there), ncclTimeout at the
 * deadline (the caller's to report); or comm failed, naming x->what, with
 * UCX's reason or ncclInternalError for a message of another length. */
ncclResult_t sim_net_exchange(ncclComm_t comm, const sim_net_xchg *x, struct sim_due *due);
/* The same in steps, for a caller that must not block (a management call
 * inside a group or on a non-blocking communicator): start posts every
 * receive and send and never waits (x's out buffers and mine must stay
 * until end); test looks once, progressing UCX: ncclInProgress while parts
 * are still to come or go (*moved, may be NULL: whether anything moved),
 * else as sim_net_exchange ends; with look it also checks for peers gone,
 * comm's cancel and the deadline, which cost more; wait tests until the
 * end, sleeping on UCX's events while nothing moves; end cancels what has
 * not ended and frees the run. */
typedef struct sim_net_xrun sim_net_xrun;
ncclResult_t sim_net_exchange_start(ncclComm_t comm, const sim_net_xchg *x, sim_net_xrun **out);
ncclResult_t sim_net_exchange_test(ncclComm_t comm, sim_net_xrun *r, bool look, struct sim_due *due, bool *moved);
ncclResult_t sim_net_exchange_wait(ncclComm_t comm, sim_net_xrun *r, struct sim_due *due);
void sim_net_exchange_end(sim_net_xrun *r);
/* sim_net_exchange of `bytes` from each of peers (NULL: every rank of
 * comm, n of them; this rank at index me): all[i * bytes ..] gets peers[i]'s
 * (this rank's copied from mine). */
ncclResult_t sim_net_allgather(ncclComm_t comm, int space, uint64_t seq, const int *peers, int n, int me,
                               const void *mine, size_t bytes, void *all, bool mgmt, struct sim_due *due,
                               const char *what);
/* Its start: then sim_net_exchange_test, _wait and _end (mine and all must
 * stay until end). */
ncclResult_t sim_net_allgather_start(ncclComm_t comm, int space, uint64_t seq, const int *peers, int n, int me,
                                     const void *mine, size_t bytes, void *all, bool mgmt, const char *what,
                                     sim_net_xrun **out);
/* sim_net_exchange among the hosts' leaders, each speaking for its host:
 * `mine` holds per_rank bytes for each rank of this host, in rank order;
 * `all` gets every host's, host after host, each in rank order (this
 * host's copied from mine). Called by this host's leader. */
ncclResult_t sim_net_leaders_allgather(ncclComm_t comm, int space, uint64_t seq, const void *mine, size_t per_rank,
                                       void *all, struct sim_due *due, const char *what);

#endif /* NCCLSIM_NET_H_ */
