/*
 * sim/rma/win_registry.c — where windows live: each rank's list of its
 * handles, the process-wide list of live handles, and deregistered (dead)
 * handles; the collective window's reference count.
 *
 * A handle is published when its registration round completes
 * (win_register.c): it enters its rank's list, the process-wide list (the
 * pointer getters take no communicator, and must reject what is not a
 * window), the rank's memory count and the device window table (sim/dev/dev.h).
 * Deregistration is local and retires it from all four. A retired handle is
 * kept (dead) until the communicator goes, so that a second deregistration
 * or a put naming it is recognised rather than being a use after free.
 */
#include "config.h"

#include <stdlib.h>
#include "rma_internal.h"

/* ---- collective windows ---- */

void rma_cwin_ref(rma_cwin *cw, int rank) { atomic_fetch_add_explicit(&cw->rank[rank].n, 1, memory_order_relaxed); }

void rma_cwin_unref(rma_cwin *cw, int rank) {
  /* acq_rel, as any reference count: what this holder did with cw happens
   * before the last drop frees it. */
  if (atomic_fetch_sub_explicit(&cw->rank[rank].n, 1, memory_order_acq_rel) != 1) return;
  if (atomic_fetch_sub_explicit(&cw->refs, 1, memory_order_acq_rel) != 1) return;
  sim_free(cw->ptr);
  sim_free(cw->key);
  sim_free(cw);
}

/* ---- process-wide list of live handles ---- */

/* Both lists below are shared by the processes of a job (util/shm.c): a
 * registration round, completed by any rank, links every rank's handle. */
typedef struct dead_win dead_win;
typedef struct {
  pthread_mutex_t glock, dead_lock;
  struct ncclWindow_vidmem *glive;
  dead_win *dead_list; /* all ranks; searched only on errors */
} win_lists;
static void lists_init(void *p) {
  win_lists *l = p;
  sim_mutex_init(&l->glock);
  sim_mutex_init(&l->dead_lock);
}
static win_lists *lists(void) {
  win_lists *l = sim_shared(SIM_SHARED_WIN, sizeof *l, lists_init);
  if (!l) abort(); /* no memory at all */
  return l;
}
#define glock (lists()->glock)
#define glive (lists()->glive)
#define dead_lock (lists()->dead_lock)
#define dead_list (lists()->dead_list)

static void glink(struct ncclWindow_vidmem *w) {
  sim_mutex_lock(&glock);
  w->gprev = NULL;
  w->gnext = glive;
  if (glive) glive->gprev = w;
  glive = w;
  pthread_mutex_unlock(&glock);
}

static void gunlink(struct ncclWindow_vidmem *w) {
  sim_mutex_lock(&glock);
  if (w->gprev) w->gprev->gnext = w->gnext;
  else if (ALWAYS(glive == w)) glive = w->gnext;
  if (w->gnext) w->gnext->gprev = w->gprev;
  w->gnext = w->gprev = NULL;
  pthread_mutex_unlock(&glock);
}

bool rma_win_live_owner(ncclWindow_t win, ncclComm_t *owner) {
  bool found = false;
  sim_mutex_lock(&glock);
  for (struct ncclWindow_vidmem *g = glive; g; g = g->gnext)
    if (g == win) found = true, *owner = g->comm;
  pthread_mutex_unlock(&glock);
  return found;
}

bool rma_win_lookup(ncclWindow_t win, rma_win_view *v, const char *op) {
  bool found = false;
  sim_mutex_lock(&glock);
  for (struct ncclWindow_vidmem *w = glive; w; w = w->gnext)
    if (w == win) {
      v->cw = w->cw;
      v->comm = w->comm;
      v->size = w->size;
      found = true;
      break;
    }
  pthread_mutex_unlock(&glock);
  if (!found) SIM_WARN(SIM_RMA, "%s: window %p is not a registered window", op, (void *)win);
  return found;
}

/* ---- each rank's handles ---- */

struct ncclWindow_vidmem **rma_win_find_in(struct ncclWindow_vidmem **head, ncclWindow_t win) {
  for (struct ncclWindow_vidmem **pp = head; *pp; pp = &(*pp)->next)
    if (*pp == win) return pp;
  return NULL;
}

void rma_win_publish(ncclComm_t comm, struct ncclWindow_vidmem *w) {
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  w->next = rk->wins;
  rk->wins = w;
  pthread_mutex_unlock(&rk->lock);
  glink(w);
  atomic_fetch_add(&comm->mem_bytes, (uint64_t)w->size);
  /* The rank's device communicators see it in their window table. */
  if (sim_dev_window_add(comm, w, w->ptr, w->size) != ncclSuccess)
    SIM_WARN(SIM_RMA, "rank %d: window %p is missing from the device window table (out of memory)", comm->rank,
             (void *)w);
}

/* ---- dead handles: deregistered, kept per rank until the communicator
 * goes ---- */

struct dead_win {
  struct dead_win *next;
  struct ncclWindow_vidmem *w;
};

bool rma_win_is_dead(ncclWindow_t win, ncclComm_t *owner) {
  bool found = false;
  sim_mutex_lock(&dead_lock);
  for (dead_win *d = dead_list; d; d = d->next)
    if (d->w == win) {
      found = true;
      if (owner) *owner = d->w->comm;
      break;
    }
  pthread_mutex_unlock(&dead_lock);
  return found;
}

void rma_win_retire(ncclComm_t comm, struct ncclWindow_vidmem *w) {
  gunlink(w);
  sim_dev_window_remove(comm, w);
  atomic_fetch_sub(&comm->mem_bytes, (uint64_t)w->size);
  w->magic = 0;
  /* Puts from elsewhere still in flight find no mapping: as in real NCCL,
   * deregistering a window others still write to is the user's error. */
  sim_ucx_mem_unmap(w->memh);
  w->memh = NULL;
  rma_cwin_unref(w->cw, comm->rank);
  w->cw = NULL;
  dead_win *d = sim_calloc(1, sizeof *d);
  if (d) {
    d->w = w;
    sim_mutex_lock(&dead_lock);
    d->next = dead_list;
    dead_list = d;
    pthread_mutex_unlock(&dead_lock);
  } else {
    sim_free(w); /* cannot remember it: a later misuse reads as "not a window" */
  }
}

void rma_wins_fini(ncclComm_t comm) {
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  struct ncclWindow_vidmem *wins = rk->wins;
  rk->wins = NULL;
  pthread_mutex_unlock(&rk->lock);
  while (wins) {
    struct ncclWindow_vidmem *w = wins;
    wins = w->next;
    gunlink(w);
    sim_dev_window_remove(comm, w);
    rma_cwin_unref(w->cw, comm->rank);
    w->magic = 0;
    sim_free(w);
  }
  sim_mutex_lock(&dead_lock);
  for (dead_win **pp = &dead_list; *pp;) {
    dead_win *d = *pp;
    if (d->w->comm == comm) {
      *pp = d->next;
      sim_free(d->w);
      sim_free(d);
    } else {
      pp = &d->next;
    }
  }
  pthread_mutex_unlock(&dead_lock);
}

/* ---- lookups for puts ---- */

struct ncclWindow_vidmem *rma_find_own(ncclComm_t comm, ncclWindow_t win, rma_cwin **cw, const char *op) {
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  struct ncclWindow_vidmem **pp = rma_win_find_in(&rk->wins, win), *w = pp ? *pp : NULL;
  if (w) {
    rma_cwin_ref(w->cw, comm->rank);
    *cw = w->cw;
  }
  pthread_mutex_unlock(&rk->lock);
  if (w) return w;
  /* Real NCCL: "Device object does not exist in shadow pool." */
  ncclComm_t owner = NULL;
  rma_win_view v;
  if (rma_win_is_dead(win, &owner))
    SIM_WARN(SIM_RMA, "%s: device object does not exist in shadow pool: window %p was deregistered", op,
             (void *)win);
  else if (rma_win_lookup(win, &v, op))
    SIM_WARN(SIM_RMA,
             "%s: device object does not exist in shadow pool: window %p is rank %d's handle; name the target by "
             "rank %d's own handle of the collective window",
             op, (void *)win, v.comm->rank, comm->rank);
  else
    SIM_WARN(SIM_RMA, "%s: device object does not exist in shadow pool: window %p", op, (void *)win);
  return NULL;
}

bool rma_in_symmetric(ncclComm_t comm, const void *p, size_t bytes) {
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  bool ok = false;
  sim_mutex_lock(&rk->lock);
  for (struct ncclWindow_vidmem *w = rk->wins; w && !ok; w = w->next) {
    if (!(w->flags & NCCL_WIN_COLL_SYMMETRIC)) continue;
    size_t off = (size_t)((const char *)p - (const char *)w->ptr);
    ok = (const char *)p >= (const char *)w->ptr && off <= w->size && bytes <= w->size - off;
  }
  pthread_mutex_unlock(&rk->lock);
  return ok;
}
