/* sim/comm/comm_internal.h — shared by the communicator files. */
#ifndef NCCLSIM_COMM_INTERNAL_H_
#define NCCLSIM_COMM_INTERNAL_H_

#include "../sim.h"

/* A rank's comm, before it joins a clique. */
ncclComm_t sim_comm_alloc(int nranks, int rank, int device, const ncclConfig_t *config);
void sim_comm_free(ncclComm_t comm);
/* Makes the clique of `comms` (nranks of them, indexed by rank), sets the
 * topology and READY on each. On failure nothing is attached. */
ncclResult_t sim_clique_create(ncclComm_t *comms, int nranks, uint64_t key);
void sim_clique_unref(sim_clique *c);
/* Every area's comm_fini for a rank that goes (destroy, abort). */
void sim_comm_fini_areas(ncclComm_t comm);
/* The calling thread's options (ncclsimSetCommOptions) resolved against the
 * environment. */
void sim_options_resolve(ncclsimCommOptions_t *out);
/* Validates a config: NULL is fine; bad magic is ncclInvalidArgument. */
ncclResult_t sim_config_check(const ncclConfig_t *config, const char *op);
/* Withdraws a rank from an unfinished init rendezvous (no-op otherwise). */
ncclResult_t sim_init_cancel(ncclComm_t comm);

#endif
