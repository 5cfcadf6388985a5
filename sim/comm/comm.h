/*
 * sim/comm/comm.h — what the communicators (sim/comm) offer the areas
 * above them: the checks of a call's communicator, peer and buffers, and
 * the datatypes' sizes and names. A communicator's and a clique's types
 * are in sim/sim.h, which every room shares.
 */
#ifndef NCCLSIM_COMM_H_
#define NCCLSIM_COMM_H_

#include "../sim.h"

/* Validates a comm handle: non-NULL, alive, READY. Logs a WARN naming `op`
 * and returns ncclInvalidArgument (NULL/dead) or ncclInvalidUsage (not
 * ready) otherwise (comm/checks.c). */
ncclResult_t sim_comm_check(ncclComm_t comm, const char *op);

/* Helpers shared by the areas (comm/checks.c). */
size_t sim_dtype_size(ncclDataType_t dt); /* 0 for an unknown type */
const char *sim_dtype_name(ncclDataType_t dt);
/* Checks a peer rank for `op` (WARN + ncclInvalidArgument if out of range). */
ncclResult_t sim_check_peer(ncclComm_t comm, int peer, const char *op);
/* Checks datatype and buffer: dtype known, buf non-NULL when count > 0,
 * buf's device (if registered) equals comm's, range within its allocation.
 * WARN + ncclInvalidArgument otherwise. */
ncclResult_t sim_check_buffer(ncclComm_t comm, const void *buf, size_t count, ncclDataType_t dt,
                              const char *op, const char *argname);

#endif /* NCCLSIM_COMM_H_ */
