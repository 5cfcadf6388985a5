/*
 * sim/rma/rma_internal.h — shared by the files of sim/rma:
 *   area.c          the area's per-clique state and a rank's cleanup
 *   win_registry.c  where windows live: per-rank and process-wide handle
 *                   lists, deregistered handles
 *   win_register.c  ncclCommWindowRegister / Deregister, registration rounds
 *   win_pointer.c   ncclWinGetUserPtr, LSA, peer and multimem pointers
 *   buf_register.c  registered buffers (ncclCommRegister / Deregister)
 *   signal.c        signal counters, ncclSignal, ncclWaitSignal
 *   put.c           ncclPutSignal
 *   rma_net.c       the same with ranks on other hosts: signal counters and
 *                   windows mapped for UCX, registrations across hosts,
 *                   puts and signals as UCX puts and atomic adds
 *
 * A collective window (rma_cwin) is what every rank's ncclCommWindowRegister
 * of one round built together: each rank's pointer and size. Sizes may
 * differ between ranks, as real NCCL allows since 2.28 (the dev runtime
 * reserves the largest of them on every rank).
 * Each rank holds its own handle (struct ncclWindow_vidmem) of it, as in
 * real NCCL, where a put names the target by the caller's own handle. The
 * cwin lives until the last handle and the last task using it are gone.
 */
#ifndef NCCLSIM_RMA_INTERNAL_H_
#define NCCLSIM_RMA_INTERNAL_H_

#include "../cuda/cuda.h"
#include "../core/core.h"
#include "../comm/comm.h"
#include "../dev/dev.h"
#include "../net/net.h"
#include "../transport.h"

enum { RMA_WIN_MAGIC = 0x57494e44u, RMA_REG_MAGIC = 0x52454721u };

typedef struct rma_cwin {
  int nranks;
  int flags;    /* rank 0's; flags may differ per rank */
  void **ptr;   /* by rank: that rank's window memory (in its process, for a rank elsewhere) */
  size_t *size; /* by rank: that rank's window, bytes (one allocation with ptr) */
  sim_ucx_rkey *key; /* across hosts, by rank: the remote key of a rank elsewhere; else NULL */
  /* The ranks here that hold it: those whose count below is above 0. */
  _Alignas(64) _Atomic int refs;
  /* By rank: its live handle (1) + its tasks in flight. A put takes and
   * drops a reference of its own rank, which only that rank's threads
   * touch, on a line of its own. One count for all ranks took a line
   * from the peer's core at every put and every put's release (6% of
   * bench/signal_latency's CPU samples); next to `ptr`, which every put
   * reads, it had cost 25 ns a put. */
  struct {
    _Alignas(64) _Atomic int n;
  } rank[];
} rma_cwin;

struct ncclWindow_vidmem {
  uint32_t magic; /* RMA_WIN_MAGIC while registered */
  rma_cwin *cw;
  ncclComm_t comm; /* the rank that owns this handle */
  void *ptr;
  size_t size;
  int flags;
  void *memh; /* across hosts: UCX's mapping of ptr, in the owner's process */
  struct ncclWindow_vidmem *next; /* in the rank's list */
  struct ncclWindow_vidmem *gnext, *gprev; /* in the process-wide list */
};

typedef struct rma_reg {
  uint32_t magic;
  ncclComm_t comm;
  void *ptr;
  size_t size;
  struct rma_reg *next;
} rma_reg;

/* Signal counts from one source to one target, on its own cache line:
 * `arrived` is bumped (release) by the source after its put's copy;
 * `claimed` hands each wait its ticket, so concurrent waits on one target
 * consume in the order they were posted. */
typedef struct {
  _Alignas(64) _Atomic uint64_t arrived;
  _Atomic uint64_t claimed;
  _Atomic uint64_t called; /* signals the source's calls committed, posted or not (the deadlock check) */
} rma_sig;

/* A non-blocking registration's result, queued by the round's completer
 * for the caller, who takes it at its next poll (win_register.c): the
 * completer may be another thread, or another process, whose writes to the
 * caller's handle would race with the caller or miss its memory. */
typedef struct rma_delivery {
  struct rma_delivery *next;
  ncclWindow_t *out, handle;
  ncclResult_t status;
} rma_delivery;

typedef struct {
  _Alignas(64) sim_waitq wq; /* waits of this rank sleep here */
  pthread_mutex_t lock;      /* guards wins, regs, nb */
  struct ncclWindow_vidmem *wins;
  rma_reg *regs;      /* live registrations */
  rma_reg *dead_regs; /* deregistered, kept to recognise a second deregister */
  uint64_t win_rounds;     /* this rank's ncclCommWindowRegister calls so far (under rounds' lock) */
  uint64_t withdrawn_from; /* its oldest withdrawn round, until it rewinds (UINT64_MAX: none) */
  int nb_pending;          /* non-blocking registrations not yet complete */
  rma_delivery *deliveries; /* results for it to take, oldest first */
} rma_rank;

typedef struct {
  int nranks;
  sim_rv_table rounds; /* window registration rounds (win_register.c) */
  rma_rank *rank; /* by rank */
  /* By target, its counters by source: one block on one host; across
   * hosts each rank's own row, which it made before the bootstrap and
   * mapped for UCX (rma_net.c), and a row of local use only for each rank
   * elsewhere. */
  rma_sig **row;
  rma_sig *sig; /* the one block; NULL across hosts */
} rma_state;

static inline rma_state *rma_of(ncclComm_t comm) { return comm->clique->area[SIM_AREA_RMA]; }
static inline rma_sig *rma_slot(rma_state *st, int target, int source) { return &st->row[target][source]; }

/* A rank's part of a registration round (win_register.c). */
typedef struct {
  void *ptr;
  size_t size;
  int flags;
  rma_delivery *nb; /* non-blocking: the caller's result, allocated before it arrives */
  struct ncclWindow_vidmem *handle; /* once done */
  void *memh;       /* across hosts: UCX's mapping of ptr, in the rank's process */
  sim_ucx_rkey key; /* across hosts: its remote key */
  bool exchanged;   /* across hosts, a non-blocking leader's: its poll took the round to the other hosts */
} reg_slot;

/* ---- signals (signal.c) ---- */

/* One signal from source to target: bumps the (target, source) count and
 * wakes the target's waits. A put ends with it (put.c). */
void rma_signal_emit(sim_clique *c, int target, int source);
/* The commit of a put or signal to `peer` (sim_task_ops.commit), and the
 * awaits of a task that completes when posted. */
void rma_signal_commit(sim_task *t, int peer);
int rma_awaits_none(sim_task *t, sim_rank_ref *out, int max);
/* Common enqueue checks of put and signal: comm, host RMA, peer,
 * sigIdx/ctx/flags. */
ncclResult_t rma_check_signal_args(ncclComm_t comm, int peer, int sigIdx, int ctx, unsigned flags, const char *op);
/* Host RMA enabled for comm (opts.hostRma); else a WARN and
 * ncclInvalidUsage. */
ncclResult_t rma_check_host_rma(ncclComm_t comm, const char *op);

/* ---- where windows live (win_registry.c) ---- */

/* A reference of rank `rank` to cw; its drop (the last of every rank
 * frees cw). */
void rma_cwin_ref(rma_cwin *cw, int rank);
void rma_cwin_unref(rma_cwin *cw, int rank);
/* A new handle of a completed round enters its rank's list, the
 * process-wide list, the rank's memory count and its device window table. */
void rma_win_publish(ncclComm_t comm, struct ncclWindow_vidmem *w);
/* A handle already unlinked from its rank's list leaves the rest, drops its
 * cwin reference and is kept dead until the communicator goes. */
void rma_win_retire(ncclComm_t comm, struct ncclWindow_vidmem *w);
/* The rank's list entry for win (NULL if none); caller holds the rank's
 * lock. */
struct ncclWindow_vidmem **rma_win_find_in(struct ncclWindow_vidmem **head, ncclWindow_t win);
/* True if win was deregistered (and its communicator is still there);
 * *owner, if owner is non-NULL, is the rank that held it. */
bool rma_win_is_dead(ncclWindow_t win, ncclComm_t *owner);
/* True if win is a live handle of any rank; *owner is that rank. */
bool rma_win_live_owner(ncclWindow_t win, ncclComm_t *owner);
/* The topology of a live handle, read under the process-wide lock (the
 * handle may be deregistered right after; the values stay meaningful). */
typedef struct {
  rma_cwin *cw;
  ncclComm_t comm;
  size_t size;
} rma_win_view;
/* Fills v from a live handle, or logs a WARN naming op and returns false. */
bool rma_win_lookup(ncclWindow_t win, rma_win_view *v, const char *op);
/* The handle `win` of comm's own windows (takes a cwin reference), or NULL
 * with a WARN naming why. Locks the rank. */
struct ncclWindow_vidmem *rma_find_own(ncclComm_t comm, ncclWindow_t win, rma_cwin **cw, const char *op);
/* True if [p, p + bytes) lies inside one of comm's windows registered with
 * NCCL_WIN_COLL_SYMMETRIC. */
bool rma_in_symmetric(ncclComm_t comm, const void *p, size_t bytes);
/* Frees comm's live and dead handles (destroy/abort). */
void rma_wins_fini(ncclComm_t comm);

/* ---- window registration (win_register.c) ---- */

/* Non-blocking window registrations of comm still in progress:
 * ncclInProgress while any is, else ncclSuccess. Checks their deadlines.
 * ncclCommGetAsyncError may call it (through the area's comm_poll). */
ncclResult_t sim_rma_poll(ncclComm_t comm);
/* comm leaves its open rounds, so that no completion writes to it, and has
 * no non-blocking registration pending any more (destroy/abort). */
void rma_register_comm_fini(ncclComm_t comm);

/* ---- ranks on other hosts (rma_net.c) ---- */

/* The area's net_join and comm_free (sim_area): makes comm's signal row
 * and maps it for UCX, its remote key in mine->row; frees what is left of
 * it (a comm that never joined a clique, and at destroy). */
ncclResult_t rma_net_join(ncclComm_t comm, sim_net_rank_info *mine, char *why, size_t why_len);
void rma_net_comm_free(ncclComm_t comm);

/* The signal rows of a clique across hosts, taken from its ranks here
 * (rma_clique_init); rma_net_rows_fini frees them. */
ncclResult_t rma_net_rows_init(sim_clique *c, rma_state *st);
void rma_net_rows_fini(rma_state *st);
/* The leader of this host (its first rank), once every rank here is in
 * registration round rv: sends their parts to the other hosts' leaders,
 * receives theirs and arrives for the ranks elsewhere. */
ncclResult_t rma_net_exchange(ncclComm_t comm, sim_rv *rv, const sim_rv_ops *ops, sim_due *due);
/* Across hosts: maps a registration's memory for UCX (into slot). */
ncclResult_t rma_net_map(ncclComm_t comm, reg_slot *slot);
/* A put's bytes and its signal, or a signal alone (src NULL), to a rank
 * elsewhere: UCX operations into ops[2], awaited by rma_net_done. */
ncclResult_t rma_net_put(ncclComm_t comm, int peer, const void *src, size_t bytes, rma_cwin *cw, size_t off,
                         sim_ucx_op ops[2]);
ncclResult_t rma_net_done(ncclComm_t comm, int peer, sim_ucx_op ops[2], sim_due *due);
/* A wait on a communicator across hosts: UCX is progressed while it
 * waits, since puts and signals from elsewhere land only then. */
ncclResult_t rma_net_wait(ncclComm_t comm, bool (*arrived)(void *), void *arg, sim_due *due);

/* ---- registered buffers (buf_register.c) ---- */

/* Frees comm's registered buffers, live and deregistered. */
void rma_regs_fini(ncclComm_t comm);

#endif /* NCCLSIM_RMA_INTERNAL_H_ */
