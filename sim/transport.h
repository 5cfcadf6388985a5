/*
 * sim/transport.h — how one simulated rank reaches another.
 *
 * The only transport is "local": every peer's memory is in our address
 * space, for ranks as threads of one process and for ranks as processes
 * alike (their shared arena is mapped at one address in every process of
 * the job, sim/util/shm.c). Every byte that moves between ranks (p2p, put,
 * the collectives) goes through this table, so that a transport to ranks
 * whose memory is not mapped here (other hosts) replaces the address
 * translation and the copies; the rendezvous, matching and signalling
 * state it would also need to reach lives in the clique's shared state.
 */
#ifndef NCCLSIM_TRANSPORT_H_
#define NCCLSIM_TRANSPORT_H_

#include <stddef.h>

struct sim_clique;

typedef struct sim_transport {
  const char *name;
  /* Address through which the calling rank loads and stores `peer`'s memory
   * at `ptr` (a pointer valid in the peer). */
  void *(*map_peer)(struct sim_clique *c, int peer, void *ptr);
  /* Copies `bytes` between two mapped addresses; the ranges do not overlap. */
  void (*copy)(void *dst, const void *src, size_t bytes);
  /* The same for results the reader will not find in cache anyway (large
   * collectives): stores may bypass the cache. Ordered by fence(). */
  void (*copy_stream)(void *dst, const void *src, size_t bytes);
  /* Makes every copy_stream of the calling thread visible before what
   * follows (a release of the completion count). */
  void (*fence)(void);
} sim_transport;

extern const sim_transport sim_transport_local;

#endif /* NCCLSIM_TRANSPORT_H_ */
