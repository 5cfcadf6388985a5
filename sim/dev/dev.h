/*
 * sim/dev/dev.h — what the device-API area (sim/dev) offers the area
 * beside it: rma keeps a rank's device window table up to date.
 */
#ifndef NCCLSIM_DEV_H_
#define NCCLSIM_DEV_H_

#include "../sim.h"

/* Device communicators (dev/devcomm.c). A window registered or deregistered
 * by `comm`'s rank (rma/) appears in / leaves the table that every device
 * communicator of that rank points to (ncclDevComm.windowTable). Add
 * returns ncclSystemError when a new chunk cannot be allocated. */
ncclResult_t sim_dev_window_add(ncclComm_t comm, ncclWindow_t win, void *base, size_t size);
void sim_dev_window_remove(ncclComm_t comm, ncclWindow_t win);

#endif /* NCCLSIM_DEV_H_ */
