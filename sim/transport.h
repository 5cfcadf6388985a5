/*
 * sim/transport.h — how one simulated rank reaches another.
 *
 * Today every rank is a thread of one process and the only transport is
 * "local": peers' memory is in our address space. Rendezvous, matching and
 * signalling already live in shared clique state; what a multi-process
 * transport (memfd-backed device memory mapped by peers) would replace is
 * the address translation and the data copies, so every byte that moves
 * between ranks (p2p, put, the collectives) goes through this table.
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
