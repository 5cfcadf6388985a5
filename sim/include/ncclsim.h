/*
 * ncclsim.h — knobs of the simulated NCCL that real NCCL does not have.
 *
 * Code that must also build against real NCCL guards their use with
 * `#ifdef NCCLSIM` (defined by ncclsim's <nccl.h>).
 *
 * Thread-safety: every function here may be called from any thread.
 */
#ifndef NCCLSIM_NCCLSIM_H_
#define NCCLSIM_NCCLSIM_H_

#include <stddef.h>
#include <stdint.h>
#include "nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-communicator options, fixed when a rank initialises. A field set to
 * NCCLSIM_OPT_UNSET takes its value from the NCCLSIM_* environment
 * variable of the same name. They are what ncclCommQueryProperties reports
 * (ginType, railedGinType, hostRmaSupport, deviceApiSupport; nLsaTeams is
 * the number of nodes ranksPerNode gives) and what ncclDevCommCreate
 * checks requirements against (<nccl_device.h>): a FULL connection needs a
 * ginType on every rank, RAIL a railedGinType, and deviceApi 0 makes it
 * fail with ncclInvalidUsage. */
#define NCCLSIM_OPT_UNSET INT_MIN
typedef struct {
  int ginType;       /* ncclGinType_t; NCCLSIM_GIN_TYPE */
  int railedGinType; /* ncclGinType_t; NCCLSIM_RAILED_GIN_TYPE */
  int hostRma;       /* 0 or 1; NCCLSIM_HOST_RMA */
  int deviceApi;     /* 0 or 1; NCCLSIM_DEVICE_API */
  int ranksPerNode;  /* > 0, or 0 for one node; NCCLSIM_RANKS_PER_NODE */
} ncclsimCommOptions_t;
#define NCCLSIM_COMM_OPTIONS_INIT \
  { NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET, NCCLSIM_OPT_UNSET }

/* Sets the options the calling thread's next communicator inits
 * (ncclCommInitRank*, ncclCommInitAll, ncclCommSplit) use; NULL restores
 * the environment's. Thread-local; stays in force until changed.
 * Returns ncclInvalidArgument for an unknown GIN type or a negative
 * ranksPerNode. The ranks of a communicator must lay their nodes out
 * alike: ranks whose ranksPerNode differ (0 and nranks or more are one
 * node) all fail their init with ncclInvalidUsage. */
ncclResult_t ncclsimSetCommOptions(const ncclsimCommOptions_t *opts);

/* Overrides an NCCLSIM_* parameter at run time; `name` is given without the
 * NCCLSIM_ prefix ("TIMEOUT"), `value` as its environment text, NULL to go
 * back to the environment. ncclInvalidArgument for an unknown name. Takes
 * effect for operations started afterwards. */
ncclResult_t ncclsimParamSet(const char *name, const char *value);
/* Current text of a parameter, NULL for an unknown name. */
const char *ncclsimParamGet(const char *name);
/* Prints every parameter, its value and its meaning to `out` (a FILE*). */
void ncclsimParamDump(void *out);

/* Fault injection: the nth allocation from now (1 = the next) of the
 * simulator's state or of simulated memory fails; 0 disables. Returns how
 * many allocations have been made since the last call. */
uint64_t ncclsimAllocFailAfter(uint64_t n);

/* The calling thread's ncclGroupStart depth (0: outside any group). No
 * NCCL counterpart; a test harness that runs several tests on one thread
 * checks with it that a test which stopped early left no group open.
 * Thread-safe: each thread has its own. */
int ncclsimGroupDepth(void);

/* Live simulated-memory allocations (cudaMalloc, cudaMallocHost,
 * ncclMemAlloc) and their total size in bytes. */
void ncclsimMemStats(size_t *count, size_t *bytes);

/* The simulator's memory that rank `comm` holds at this moment, in bytes:
 * what ncclCommMemStats calls ncclStatGpuMemTotal, less what
 * ncclCommSuspend(NCCL_SUSPEND_MEM) released while the communicator is
 * suspended. ncclInvalidArgument (and a WARN) for a comm that is not live
 * or a NULL bytes. No NCCL counterpart: on a GPU, cudaMemGetInfo shows
 * what a suspend gave back. */
ncclResult_t ncclsimCommMemInUse(ncclComm_t comm, uint64_t *bytes);

/* Ranks as processes (docs/ncclsim.md, "Ranks as processes"). Makes
 * ncclsim keep its state and simulated device memory in memory shared with
 * the processes this one forks from now on, so that ranks in those
 * processes join one communicator through a unique id carried by any means
 * (a pipe, a file, the environment). Call it before the first fork and
 * before any other ncclsim call; NCCLSIM_PROCESSES=1 in the environment at
 * start does the same. As with CUDA, a child must not use streams, events
 * or memory that its parent made before the fork.
 * Returns ncclSuccess, also when already on; ncclInvalidUsage when ncclsim
 * has already made state of its own in this process (a WARN says what);
 * ncclSystemError when the shared memory cannot be mapped (NCCLSIM_SHM_SIZE).
 * Thread-safety: call it once, before other threads use ncclsim.
 * No NCCL counterpart: real NCCL needs none. */
ncclResult_t ncclsimProcessesInit(void);

#ifdef __cplusplus
}
#endif
#endif /* NCCLSIM_NCCLSIM_H_ */
