/*
 * sim/dev/dev_internal.h — what the files of sim/dev/ share: the dev area's
 * per-clique state (device communicators and window tables, per rank),
 * and the device API's kernel side:
 *
 *   devcomm.c    ncclDevCommCreate/Destroy, the area, window tables
 *   require.c    the requirement helpers (ncclLsaBarrierCreateRequirement, ...)
 *   state.c      a device communicator's state per rank, and its ranks found
 *                through their group
 *   window.c     window pointers in kernels (ncclGet*Pointer), resource buffers
 *   wait.c       kernels' polling waits, their report, what each rank is doing
 *   gin.c        GIN operations, direct (GDAKI, GPI); signals and counters
 *   gin_proxy.c  GIN's PROXY type: a proxy thread per rank and device communicator
 *   gin_net.c    GIN to ranks on other simulated hosts, over UCX
 *   coop.c       named barriers of a block (ncclCoopWarpSpan), kernel faults
 *   trace.c      the device API's events on NCCLSIM_TRACE's timeline
 *
 * A device communicator's kernel-side state (struct ncclsimDevState) is
 * made by each rank's ncclDevCommCreate, in memory its host's ranks share
 * (the arena, with ranks as processes). Creation is local to the rank, as
 * ncclsim's has always been; the k-th device communicator of every rank of
 * a communicator is the same one (NCCL's creation is collective), and
 * they find each other through a group keyed by k, in which each rank
 * publishes its state. Kernels reach a peer's state there, waiting (at
 * NCCLSIM_TIMEOUT, a report) if it has not been made yet.
 */
#ifndef NCCLSIM_DEV_INTERNAL_H_
#define NCCLSIM_DEV_INTERNAL_H_

#include <stdlib.h>

#include "dev.h"
#include "../cuda/cuda.h"
#include "../core/core.h"
#include "../comm/comm.h"
#include "../net/net.h"
#include "../rma/rma.h"
#include "nccl_device.h"
#include "nccl_device/impl/ncclsim__abi.h"
#include "ncclsim_device/abi.h"

/* A device communicator's ranks: every rank's seq-th creation. */
typedef struct sim_dev_group {
  struct sim_dev_group *next;
  uint64_t seq;
  int nranks;
  int refs; /* ranks of this host that joined and have not left (under the dev state's lock) */
  _Atomic(struct ncclsimDevState *) rank[];
} sim_dev_group;

/* What a rank's kernels last did with a device communicator, for the
 * reports of waits that cannot complete: written by the rank's kernel
 * threads (several may race, and a reader may see a mix of two: it is a
 * report), read by any. */
typedef struct sim_dev_activity {
  _Atomic int lock;       /* guards where and what (a spin: both are copies of a few hundred bytes) */
  _Atomic int waiting;    /* 1 while a wait is under way */
  _Atomic uint64_t since; /* sim_now_ns of that wait's start, or of the last activity */
  char where[192];        /* "kernel K, block (x,y,z), thread (x,y,z)" */
  char what[256];         /* what it waits for, or did last */
  /* The last GIN operation issued (cheap to record: no text), if later
   * than the text above: its kind (NCCLSIM_GIN_*, 0: none), peer, signal
   * type and signal, and when. */
  _Atomic int op_kind, op_peer, op_sig_type;
  _Atomic uint32_t op_signal;
  _Atomic uint64_t op_at;
} sim_dev_activity;

/* A GIN context of one rank: what its kernels issued and what was carried
 * out (the source consumed). With PROXY, the ring the proxy thread takes
 * operations from (tail: issued; head: taken). */
typedef struct sim_dev_ctx {
  _Alignas(64) _Atomic uint64_t issued;
  _Atomic uint64_t done;
  _Alignas(64) _Atomic uint64_t head;
  ncclsimGinOp *ring; /* PROXY: depth operations */
  uint32_t depth;
} sim_dev_ctx;

struct sim_dev_proxy;
struct sim_dev_net;

enum { SIM_DEV_STATE_MAGIC = 0x44455653u /* "DEVS" */ };

/* One rank's device communicator, as its kernels and its peers see it. */
struct ncclsimDevState {
  uint32_t magic;
  int rank, nranks;
  int lsa_rank, lsa_size;
  int *lsa_world; /* LSA index -> world rank */
  int nhosts_elsewhere; /* 0 on one host */
  ncclComm_t comm;      /* valid in the rank's own process */
  sim_clique *clique;
  sim_dev_group *group;
  uint64_t seq, id;
  /* What peers reach, one block of device memory: the resource buffers
   * (the barriers', then the requirements'), then the signals at sig_off. */
  char *block;
  size_t block_bytes, sig_off;
  char *res; /* block, or NULL without resource buffers */
  size_t res_bytes;
  /* GIN. */
  int gin_type;         /* ncclGinType_t, NONE without GIN */
  bool railed;          /* RAIL connection: only this rank's rail is reachable */
  bool strong_ok, va_ok; /* ginStrongSignalsRequired, ginVaSignalsRequired */
  int nctx, nsig, nctr;
  int queue_depth;     /* ginQueueDepth (0: the proxy's default) */
  uint64_t *signals;  /* [nctx][nsig], in block: written by peers */
  uint64_t *shadows;  /* [nctx][nsig] */
  uint64_t *counters; /* [nctx][nctr] */
  sim_dev_ctx *ctx;   /* [nctx] */
  struct sim_dev_proxy *proxy; /* PROXY: the proxy thread, in the rank's process */
  struct sim_dev_net *net;     /* across hosts: UCX keys of the peers' signals and resources */
  int barriers;        /* counts for reports: lsaBarrierCount, ... */
  sim_dev_activity act;
  /* ncclDevComm.resourceWindow: its address stands for the resource buffers. */
  char res_window;
};

/* A rank's device state, guarded by its lock. */
typedef struct sim_devcomm {
  struct sim_devcomm *next;
  uint64_t id;
  struct ncclsimDevState *st;
} sim_devcomm;

typedef struct sim_dev_rank {
  pthread_mutex_t lock;
  sim_devcomm *devcomms;          /* live, newest first */
  uint64_t created;               /* ncclDevCommCreate calls that succeeded: the next one's seq */
  ncclDevCommWindowTable windows; /* first chunk; more are chained as needed */
} sim_dev_rank;

typedef struct sim_dev_state {
  int nranks;
  _Atomic uint64_t next_id;
  pthread_mutex_t lock; /* guards groups */
  sim_dev_group *groups;
  sim_dev_rank *ranks; /* by rank */
} sim_dev_state;

static inline sim_dev_rank *sim_dev_rank_of(ncclComm_t comm) {
  sim_dev_state *st = comm->clique->area[SIM_AREA_DEV];
  return &st->ranks[comm->rank];
}

/* ---- state.c ---- */
/* Makes comm's seq-th device communicator's state from dc (filled but for
 * sim, resourceBase and what follows from the state), with res_bytes of
 * resource buffers, and joins its group: ncclSystemError out of memory,
 * with a WARN; across hosts, what the exchange of its keys returns. */
ncclResult_t sim_dev_state_make(ncclComm_t comm, const ncclDevComm *dc, size_t res_bytes, uint64_t seq,
                                struct ncclsimDevState **out);
/* Leaves the group and frees st (its proxy stopped, its memory freed). */
void sim_dev_state_free(struct ncclsimDevState *st);
/* Frees the groups left in a clique's dev state (clique_fini). */
void sim_dev_groups_fini(sim_dev_state *ds);
/* The state of c's device communicator (checked), or a kernel fault. */
struct ncclsimDevState *sim_dev_self(const struct ncclDevComm *c, const char *op);
/* Rank peer's state of st's device communicator, in this host's memory:
 * waits (a kernel's poll) until the peer has made it; a fault naming the
 * peer when it is on another host, or at NCCLSIM_TIMEOUT. */
struct ncclsimDevState *sim_dev_peer(struct ncclsimDevState *st, int peer, const char *op);
/* The world ranks of comm's LSA team, by LSA index, into out (lsa_size):
 * its simulated node on one host, its host across hosts (as
 * sim/rma/win_pointer.c counts them). */
void sim_dev_lsa_members(ncclComm_t comm, int *out);
/* Whether world rank peer is in st's LSA team; its LSA index in *lsa. */
bool sim_dev_in_lsa(const struct ncclsimDevState *st, int peer, int *lsa);

/* ---- wait.c ---- */
/* Records what the calling kernel thread is doing with st (what: a
 * message), waiting or not, for the reports. */
void sim_dev_activity_set(struct ncclsimDevState *st, bool waiting, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* What every rank of st's device communicator is doing, one line each,
 * into buf. */
void sim_dev_activity_report(struct ncclsimDevState *st, char *buf, size_t len);
/* Polls until ready(arg) for a kernel thread (yielding between polls,
 * progressing UCX when st spans hosts), or fails at NCCLSIM_TIMEOUT with
 * the report: `what` names the wait. For the waits of GIN itself (a full
 * proxy queue, a flush). */
void sim_dev_poll(struct ncclsimDevState *st, bool (*ready)(void *), void *arg, const char *what);

/* ---- gin.c ---- */
/* "ncclGin::put" and the like, for an NCCLSIM_GIN_* kind. */
const char *sim_dev_gin_op_name(int kind);
/* Carries op out now, in the calling thread (GDAKI, GPI, and the proxy
 * thread for PROXY): the copy or value, then the signal, then the local
 * counter; st is the issuing rank's. */
void sim_dev_gin_execute(struct ncclsimDevState *st, const ncclsimGinOp *op);

/* ---- gin_proxy.c ---- */
/* Starts st's proxy thread (PROXY): ncclSystemError if it cannot. */
ncclResult_t sim_dev_proxy_start(struct ncclsimDevState *st);
/* Hands op to the proxy: waits (polling) while the context's ring is full. */
void sim_dev_proxy_enqueue(struct ncclsimDevState *st, const ncclsimGinOp *op);
/* Stops and joins the proxy thread, after it carried out what is queued. */
void sim_dev_proxy_stop(struct ncclsimDevState *st);

/* ---- gin_net.c ---- */
/* Across hosts: maps st's signals and resources for UCX and exchanges
 * their keys with every rank (ncclDevCommCreate is then collective, as
 * NCCL's is). ncclSuccess at once on one host. */
ncclResult_t sim_dev_net_setup(struct ncclsimDevState *st);
void sim_dev_net_free(struct ncclsimDevState *st);
/* op to a rank on another host: its bytes (a put, a value) and its
 * signal, as UCX puts and atomic adds; waits for UCX to be done with the
 * source. */
void sim_dev_net_execute(struct ncclsimDevState *st, const ncclsimGinOp *op, const void *src, size_t bytes,
                         uint64_t dst_addr, const sim_ucx_rkey *dst_key);
/* op's get from a rank on another host: its bytes at addr (key) into dst;
 * waits for them. */
void sim_dev_net_get(struct ncclsimDevState *st, const ncclsimGinOp *op, void *dst, uint64_t addr,
                     const sim_ucx_rkey *key);
/* Where rank peer's (on another host) resource buffers are at offset,
 * for UCX. */
void sim_dev_net_res_at(struct ncclsimDevState *st, int peer, size_t offset, uint64_t *addr,
                        const sim_ucx_rkey **key);
/* Progresses UCX for waits on a communicator across hosts. */
void sim_dev_net_progress(struct ncclsimDevState *st);

/* ---- window.c ---- */
/* A window as kernels see it, made at its first use in this process. */
typedef struct sim_dev_win {
  struct sim_dev_win *next;
  ncclWindow_t win;
  ncclComm_t comm;           /* the handle's owner */
  struct ncclsimDevState *res; /* a resource window: its rank's state (peers found through its group) */
  int rank, nranks, lsa_rank, lsa_size;
  sim_rma_win_info info;     /* every rank's memory (a window) */
  char **lsa_ptr;            /* by LSA index: that rank's memory, mapped here (a window) */
  size_t *lsa_bytes;         /* by LSA index: its size (a window) */
  int *lsa_world;            /* by LSA index: its world rank */
} sim_dev_win;
/* The view of w for the calling thread; a kernel fault naming op when w
 * is not a live window. */
sim_dev_win *sim_dev_win_of(ncclWindow_t w, const char *op);
/* Rank `peer`'s memory of w at offset, for `bytes` bytes, in this
 * process (NULL for a rank elsewhere: *addr and *key then say where, for
 * UCX); a kernel fault naming the window, the peer and the offset when
 * the range is outside it. */
char *sim_dev_win_at(sim_dev_win *v, int peer, size_t offset, size_t bytes, const char *op, uint64_t *addr,
                     const sim_ucx_rkey **key);
/* Forget the view of st's resource window (its destroy), and every view
 * of comm's windows (comm's destroy). */
void sim_dev_res_window_forget(struct ncclsimDevState *st);
/* Drops the view of win (rma deregistered it). */
void sim_dev_view_forget(ncclWindow_t win);
void sim_dev_views_fini(ncclComm_t comm);

/* ---- trace.c ---- */
/* Sets ncclsimDevTracing when st's communicator is on the timeline. */
void sim_dev_trace_enable(const struct ncclsimDevState *st);
/* A span of st's rank's kernels from t0 (sim_ticks) to now, named `name`
 * (static storage), with the calling thread's kernel, block and thread,
 * then fmt's text (may be NULL); peer -1: none; bytes 0: none. */
void sim_dev_trace(struct ncclsimDevState *st, const char *name, uint64_t t0, int peer, size_t bytes,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- coop.c: faults ---- */
/* Ends the kernel with err and the message, prefixed by the rank. */
void sim_dev_fault(const struct ncclsimDevState *st, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#endif /* NCCLSIM_DEV_INTERNAL_H_ */
