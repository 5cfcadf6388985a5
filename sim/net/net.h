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
 * tagged messages (p2p/p2p_net.c).
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
 * and registers `secret` as a key it accepts once. ncclSystemError (with a
 * WARN) if no interface or socket can be had. */
ncclResult_t sim_net_root_open(uint64_t secret, sim_net_addr *addr);

/* A rank's side of the bootstrap. join connects and sends; it never waits
 * for other ranks. poll reads the root's answer: ncclInProgress until it
 * comes (or the deadline, in ns of sim_now_ns, when block is true), then
 * the map (sim_malloc'd, freed with sim_net_map_free) or the failure,
 * recorded with its reason in `why`. */
typedef struct sim_net_boot sim_net_boot;
ncclResult_t sim_net_join(const sim_net_addr *root, uint64_t secret, uint64_t key, int nranks, int rank,
                          sim_net_boot **out, char *why, size_t why_len);
ncclResult_t sim_net_join_poll(sim_net_boot *b, bool block, uint64_t deadline_ns, sim_net_map **out, char *why,
                               size_t why_len);
void sim_net_join_free(sim_net_boot *b);
void sim_net_map_free(sim_net_map *m);
/* "host NAME (ranks 2,3)" for diagnostics. */
void sim_net_describe_host(const sim_net_map *m, int host, char *buf, size_t len);

/* Whether `peer` is on another host than the clique of m (NULL: one host). */
static inline bool sim_net_remote(const sim_net_map *m, int peer) { return m && m->host[peer] != m->my_host; }

/* UCX (net/ucx.c). */
/* Makes the process's context and worker once; its address for the
 * bootstrap. ncclSystemError with the reason in why. */
ncclResult_t sim_ucx_init(const void **addr, size_t *len, char *why, size_t why_len);
/* Whether a rank of this process is alive in a communicator across hosts
 * (comm/clique.c): at exit, UCX is closed only if none is. */
bool sim_net_comms_here(void);
/* One tagged send or receive in flight; the caller holds it. */
typedef struct sim_ucx_op {
  void *req;     /* UCX's request; NULL once ended */
  int status;    /* ucs_status_t once ended */
  size_t length; /* a receive's bytes, once ended */
  bool recv;
  bool cancelled;   /* ended by sim_ucx_cancel, not by UCX */
  _Atomic int done; /* set by UCX's completion callback (any progressing thread) */
} sim_ucx_op;
/* A tagged send to `peer`'s process, or a receive of one. ncclSystemError
 * (with a WARN) if UCX refuses it at once. */
ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes,
                          sim_ucx_op *op);
ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op);
/* Progresses the worker (*progressed, may be NULL: whether anything
 * happened); ncclInProgress, or the operation's end:
 * ncclSuccess (a receive's bytes in op->length), ncclInvalidUsage for a
 * message longer than the buffer, ncclRemoteError for a peer that is gone,
 * ncclSystemError for another UCX failure (op->status tells). */
ncclResult_t sim_ucx_test(sim_ucx_op *op, bool *progressed);
/* Sleeps until the worker has an event, or max_ms. */
void sim_ucx_sleep(int max_ms);
/* Gives up an operation that has not ended (a timeout, a cancel): a
 * receive is cancelled, a send is left to UCX, which frees it once done. */
void sim_ucx_cancel(sim_ucx_op *op);
/* ucs_status_string of op->status. */
const char *sim_ucx_status_text(const sim_ucx_op *op);
/* Makes the endpoints to every process of m's other hosts now (at init),
 * so that a host that dies is noticed even by a rank that only receives
 * from it: UCX fails the endpoint when the connection drops. */
void sim_ucx_connect(const sim_net_map *m);
/* Why UCX gave up the endpoint to peer's process, or NULL while it is up. */
const char *sim_ucx_peer_failed(const sim_net_map *m, int peer);

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

#endif /* NCCLSIM_NET_H_ */
