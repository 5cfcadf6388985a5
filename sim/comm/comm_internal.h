/* sim/comm/comm_internal.h — shared by the communicator files. */
#ifndef NCCLSIM_COMM_INTERNAL_H_
#define NCCLSIM_COMM_INTERNAL_H_

#include "comm.h"
#include "../cuda/cuda.h"
#include "../core/core.h"

/* A rank's comm, before it joins a clique. */
ncclComm_t sim_comm_alloc(int nranks, int rank, int device, const ncclConfig_t *config);
void sim_comm_free(ncclComm_t comm);
/* Makes the clique of `comms` (nranks of them, indexed by rank; across
 * hosts NULL for the ranks elsewhere, and `net` the host map, which the
 * clique then owns), sets the topology and READY on each. On failure
 * nothing is attached (and net stays the caller's). */
ncclResult_t sim_clique_create(ncclComm_t *comms, int nranks, uint64_t key, struct sim_net_map *net);
/* A fresh random communicator key. */
uint64_t sim_unique_key(void);
void sim_clique_unref(sim_clique *c);
/* Every area's comm_fini for a rank that goes (destroy, abort). */
void sim_comm_fini_areas(ncclComm_t comm);
/* Runs every area's comm_poll (comm/comm.c). */
void sim_comm_poll(ncclComm_t comm);
/* The same check as sim_comm_check (comm.h) for the calls NCCL still
 * allows on a revoked communicator (split, shrink, grow,
 * ncclCommGetUniqueId): READY or REVOKED. A rank that NCCLSIM_FAULT
 * stopped is ncclRemoteError: its process is dead. */
ncclResult_t sim_comm_check_mgmt(ncclComm_t comm, const char *op);
/* Ends every rank's operations at once (ncclCommAbort, a dead process, a
 * destroy stuck past NCCLSIM_TIMEOUT, a host gone: net's hook): sets
 * aborted and each rank's cancel, wakes the waiters (comm/clique.c). */
void sim_clique_abort(sim_clique *c);
/* Every area's net_join, before the rank's bootstrap (sim_area). */
ncclResult_t sim_comm_net_join(ncclComm_t comm, struct sim_net_rank_info *mine, char *why, size_t len);
/* The calling thread's options (ncclsimSetCommOptions) resolved against the
 * environment. */
void sim_options_resolve(ncclsimCommOptions_t *out);
/* Validates a config: NULL is fine; bad magic is ncclInvalidArgument. */
ncclResult_t sim_config_check(const ncclConfig_t *config, const char *op);
/* Unique ids (comm/init.c). What an id says: the key of its round; for an
 * id of ncclCommGetUniqueId also the parent's clique key, the grow's number
 * (grow_seq, from 1; 0 for an id of ncclGetUniqueId) and the parent's
 * size. sim_id_read is false for bytes that are not an id of ncclsim. */
typedef struct {
  uint64_t key, parent_key, grow_seq;
  int parent_nranks;
} sim_id_info;
bool sim_id_read(const ncclUniqueId *id, sim_id_info *out);
/* Whether this process can meet the id's maker (else a WARN says why). */
bool sim_id_reachable(const ncclUniqueId *id, const char *op);
/* The key of grow number seq of the clique of parent_key, and an id of it. */
uint64_t sim_grow_key(uint64_t parent_key, uint64_t seq);
void sim_grow_id_make(ncclUniqueId *id, uint64_t parent_key, uint64_t seq, int parent_nranks);
/* A unique id with a bootstrap root in this process, whatever NCCLSIM_NET
 * says (a split across hosts makes its colors' ids so). */
ncclResult_t sim_net_id_make(ncclUniqueId *id);
/* The same for ncclCommGetUniqueId: an id of grow number seq of the clique
 * of parent_key, as sim_grow_id_make's, with a bootstrap root here. */
ncclResult_t sim_net_grow_id_make(ncclUniqueId *id, uint64_t parent_key, uint64_t seq, int parent_nranks);
/* Whether id has a bootstrap root (it was made with the network on). */
bool sim_id_net(const ncclUniqueId *id);
/* The same, registered `once` (the root forgets it as its round ends:
 * net/net.h): a child's id of a split or shrink across hosts; *secret its
 * key, for sim_net_root_release. */
ncclResult_t sim_net_child_id_make(ncclUniqueId *id, uint64_t *secret);
/* ncclCommInitRank's path on `device`, with `opts` (NULL: the calling
 * thread's, resolved against the environment); op names the caller. */
ncclResult_t sim_init_rank(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                           const ncclConfig_t *config, int device, const ncclsimCommOptions_t *opts, const char *op);
/* sim_init_rank in steps, whatever the comm's mode and the caller's group
 * (a split or shrink across hosts, whose exchange ends at ncclGroupEnd):
 * start makes the comm and sends its hello to the bootstrap root, never
 * waiting (*out set on success; on failure nothing was sent); boot waits
 * for the root's answer and joins this host's ranks (a failure is recorded
 * for wait); wait waits for the rest: the init's result. In a group every
 * rank's start comes before any boot, and every boot before any wait. */
ncclResult_t sim_init_start(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                            const ncclConfig_t *config, int device, const ncclsimCommOptions_t *opts,
                            const char *op);
void sim_init_boot(ncclComm_t comm);
ncclResult_t sim_init_wait(ncclComm_t comm);
/* An init whose unique id is not known at its call (a grow across hosts,
 * whose existing ranks first exchange it, comm/child_net.c): step says
 * ncclInProgress until it is known (block: waits until then), then
 * ncclSuccess with *id, which must have a bootstrap root, or its failure,
 * recorded on comm. end is called once, as the init goes on or the comm
 * goes. op names the call. */
typedef struct sim_init_pre {
  ncclResult_t (*step)(struct sim_init_pre *p, ncclComm_t comm, bool block, ncclUniqueId *id);
  void (*end)(struct sim_init_pre *p);
  const char *op;
} sim_init_pre;
/* Makes the comm (config and opts as sim_init_rank's) and goes on as
 * sim_init_join does: *out set at once; then the wait (blocking), the job
 * of the open group (blocking, in a group: pre's step in the group's start
 * phase) or ncclInProgress (non-blocking), each asking pre for the id
 * first. On failure pre is ended. */
ncclResult_t sim_init_later(ncclComm_t *out, int nranks, int rank, const ncclConfig_t *config, int device,
                            const ncclsimCommOptions_t *opts, sim_init_pre *pre);
/* The child communicators of a communicator across hosts
 * (comm/child_net.c), their arguments checked; *newcomm is NULL until the
 * call succeeds (a grow's: until its child is made). Inside a group they
 * complete at ncclGroupEnd. ncclCommSplit: */
ncclResult_t sim_split_net(ncclComm_t comm, int color, int key, ncclConfig_t *config, ncclComm_t *newcomm);
/* ncclCommShrink: excl sorted, its hash as split.c makes it, and
 * NCCL_SHRINK_ABORT's stop done. */
ncclResult_t sim_shrink_net(ncclComm_t comm, const int *excl, int nexcl, uint64_t excl_hash, ncclConfig_t *config,
                            ncclComm_t *newcomm);
/* ncclCommGrow on an existing rank: grow number seq, id NULL or checked to
 * be this parent's; also for a parent on one host whose grow id has a
 * bootstrap root (new ranks may come from other hosts). */
ncclResult_t sim_grow_net(ncclComm_t comm, int nranks, const ncclUniqueId *id, uint64_t seq, ncclConfig_t *config,
                          ncclComm_t *newcomm);
/* Ends the exchanges of parent's grows still in flight for their children
 * (non-blocking): each child's init then fails. Its teardown calls it. */
void sim_child_net_forget(ncclComm_t parent);
/* Joins comm (fresh from sim_comm_alloc) to the init round of key (a grow's
 * when comm->grow_join), as ncclCommInitRank does: sets *out once posted,
 * then waits (blocking), defers the wait to ncclGroupEnd (blocking, inside
 * a group) or returns ncclInProgress (non-blocking). On a failure to post,
 * frees comm. */
ncclResult_t sim_init_join(ncclComm_t comm, uint64_t key, ncclComm_t *out);
/* An init's result as a group sees it: a failure also fails the open
 * group; ncclInProgress does not. */
ncclResult_t sim_init_group_check(ncclResult_t res);
/* Withdraws a rank from an unfinished init rendezvous (no-op otherwise). */
ncclResult_t sim_init_cancel(ncclComm_t comm);
/* Stops the rank's operations in flight and waits until they have ended
 * (NCCL_SHRINK_ABORT); a comm that is not revoked takes new ones again. */
void sim_comm_stop_ops(ncclComm_t comm, const char *op);
/* A revoked rank with nothing left in flight: its async error goes from
 * ncclInProgress to ncclSuccess (ncclCommGetAsyncError polls it). */
void sim_revoke_poll(ncclComm_t comm);
/* Waits for rv, a round of the clique's management table (split, shrink,
 * suspend, resume) that comm holds: 0 once it completed, ETIMEDOUT at its
 * deadline, ECANCELED as soon as a rank it still waits for cannot come —
 * destroyed or aborted, its process exited, or stopped by NCCLSIM_FAULT —
 * which `why` then names. The excl ranks (nexcl) are not waited for. With
 * poll, looks once: EINPROGRESS when none of these holds yet. */
int sim_mgmt_wait(ncclComm_t comm, sim_rv *rv, const int *excl, int nexcl, bool poll, char *why, size_t len);
/* Every area's share of suspend and resume for one rank (comm/clique.c):
 * bytes of its suspendable state (now: what is allocated at the moment, 0
 * while suspended), and their release and remaking. */
size_t sim_clique_suspendable(sim_clique *c, int rank, bool now);
void sim_clique_rank_suspend(sim_clique *c, int rank);
ncclResult_t sim_clique_rank_resume(sim_clique *c, int rank);
/* Non-blocking suspend or resume in progress (comm/suspend.c): settled by
 * ncclCommGetAsyncError. */
void sim_suspend_poll(ncclComm_t comm);
/* Withdraws the rank from such a round (destroy, abort). */
void sim_suspend_cancel(ncclComm_t comm);

#endif
