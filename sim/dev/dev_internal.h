/*
 * sim/dev/dev_internal.h — what the files of sim/dev/ share: the dev area's
 * per-clique state (device communicators and window tables, per rank).
 */
#ifndef NCCLSIM_DEV_INTERNAL_H_
#define NCCLSIM_DEV_INTERNAL_H_

#include "dev.h"
#include "../cuda/cuda.h"
#include "../core/core.h"
#include "../comm/comm.h"
#include "../net/net.h"
#include "nccl_device.h"

/* One live device communicator of a rank. */
typedef struct sim_devcomm {
  struct sim_devcomm *next;
  uint64_t id;
  void *resources; /* simulated device memory of the resource buffers, or NULL */
  size_t bytes;    /* of resources */
} sim_devcomm;

/* A rank's device state, guarded by its lock. */
typedef struct sim_dev_rank {
  pthread_mutex_t lock;
  sim_devcomm *devcomms;          /* live, newest first */
  ncclDevCommWindowTable windows; /* first chunk; more are chained as needed */
} sim_dev_rank;

typedef struct sim_dev_state {
  int nranks;
  _Atomic uint64_t next_id;
  sim_dev_rank *ranks; /* by rank */
} sim_dev_state;

static inline sim_dev_rank *sim_dev_rank_of(ncclComm_t comm) {
  sim_dev_state *st = comm->clique->area[SIM_AREA_DEV];
  return &st->ranks[comm->rank];
}

#endif /* NCCLSIM_DEV_INTERNAL_H_ */
