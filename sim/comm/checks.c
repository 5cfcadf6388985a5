/* sim/comm/checks.c — argument checks shared by every NCCL entry point. */
#include <stdio.h>
#include <string.h>

#include "comm_internal.h"
#include "../net/net.h"

static const struct {
  const char *name;
  size_t size;
} dtypes[ncclNumTypes] = {
    [ncclInt8] = {"ncclInt8", 1},       [ncclUint8] = {"ncclUint8", 1},
    [ncclInt32] = {"ncclInt32", 4},     [ncclUint32] = {"ncclUint32", 4},
    [ncclInt64] = {"ncclInt64", 8},     [ncclUint64] = {"ncclUint64", 8},
    [ncclFloat16] = {"ncclFloat16", 2}, [ncclFloat32] = {"ncclFloat32", 4},
    [ncclFloat64] = {"ncclFloat64", 8}, [ncclBfloat16] = {"ncclBfloat16", 2},
    [ncclFloat8e4m3] = {"ncclFloat8e4m3", 1}, [ncclFloat8e5m2] = {"ncclFloat8e5m2", 1},
};

size_t sim_dtype_size(ncclDataType_t dt) {
  return (unsigned)dt < ncclNumTypes ? dtypes[dt].size : 0;
}

const char *sim_dtype_name(ncclDataType_t dt) {
  return (unsigned)dt < ncclNumTypes ? dtypes[dt].name : "(invalid datatype)";
}

ncclResult_t sim_check_peer(ncclComm_t comm, int peer, const char *op) {
  if (peer < 0 || peer >= comm->nranks) {
    SIM_WARN(SIM_P2P, "%s: peer is %d, but the communicator has %d ranks", op, peer, comm->nranks);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclResult_t sim_check_buffer(ncclComm_t comm, const void *buf, size_t count, ncclDataType_t dt, const char *op,
                              const char *argname) {
  size_t size = sim_dtype_size(dt);
  if (!size) {
    SIM_WARN(SIM_P2P, "%s: datatype %d is not a ncclDataType_t", op, (int)dt);
    return ncclInvalidArgument;
  }
  if (count == 0) return ncclSuccess;
  if (!buf) {
    SIM_WARN(SIM_P2P, "%s: %s is NULL with count %zu", op, argname, count);
    return ncclInvalidArgument;
  }
  if (count > SIZE_MAX / size) {
    SIM_WARN(SIM_P2P, "%s: count %zu of %s overflows", op, count, sim_dtype_name(dt));
    return ncclInvalidArgument;
  }
  sim_alloc_info a;
  if (!sim_mem_lookup(buf, &a)) return ncclSuccess; /* host memory outside the registry: not checked */
  if (a.kind != SIM_MEM_HOST && a.device != comm->device) {
    SIM_WARN(SIM_P2P, "%s: %s %p is on device %d, but rank %d's communicator is on device %d", op, argname, buf,
             a.device, comm->rank, comm->device);
    return ncclInvalidArgument;
  }
  return sim_mem_range_in(&a, buf, count * size, op, argname) ? ncclSuccess : ncclInvalidArgument;
}

static const char *const state_names[] = {"still initializing", "ready", "finalized", "failed to initialize",
                                          "revoked", "suspended"};

/* comm non-NULL and alive, in a state of `allowed` (a mask of 1 << state). */
static ncclResult_t check_state(ncclComm_t comm, const char *op, unsigned allowed) {
  sim_trace_poll();
  if (!comm) {
    SIM_WARN(SIM_INIT, "%s: comm is NULL", op);
    return ncclInvalidArgument;
  }
  if (comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: comm %p is not a live communicator", op, (void *)comm);
    return ncclInvalidArgument;
  }
  int st = atomic_load(&comm->state);
  if (!(allowed & 1u << st)) {
    if (st == SIM_COMM_SUSPENDED)
      SIM_WARN(SIM_INIT, "%s: communicator rank %d is suspended; call ncclCommResume first (ncclsim checks this: "
               "NCCL 2.30 does not, and its kernels would use the memory that ncclCommSuspend released)", op,
               comm->rank);
    else
      SIM_WARN(SIM_INIT, "%s: communicator rank %d is %s", op, comm->rank, state_names[st]);
    return st == SIM_COMM_INITIALIZING ? ncclInvalidArgument : ncclInvalidUsage;
  }
  sim_comm_driven(comm); /* every entry point checks its comm here */
  return ncclSuccess;
}

/* A communicator across hosts (sim/net) has, so far, point-to-point
 * operations, collectives, windows, the one-sided calls, device
 * communicators, split, shrink, grow, revoke, suspend and the queries: the rest is refused at once
 * with this diagnostic, not left to wait out NCCLSIM_TIMEOUT for ranks
 * that cannot arrive. */
static ncclResult_t check_hosts(ncclComm_t comm, const char *op) {
  if (!comm->clique || !comm->clique->net) return ncclSuccess;
  static const char *const built[] = {"ncclSend", "ncclRecv", "ncclCommFinalize", "ncclAllReduce",
                                      "ncclBroadcast", "ncclBcast", "ncclReduce", "ncclAllGather",
                                      "ncclReduceScatter", "ncclAlltoAll", "ncclGather", "ncclScatter",
                                      "ncclRedOpCreatePreMulSum", "ncclRedOpDestroy", "ncclCommWindowRegister",
                                      "ncclCommWindowDeregister", "ncclPutSignal", "ncclSignal", "ncclWaitSignal",
                                      "ncclCommRegister", "ncclCommDeregister", "ncclWinGetUserPtr",
                                      "ncclDevCommCreate", "ncclDevCommDestroy", "ncclCommSplit", "ncclCommShrink",
                                      "ncclCommGetUniqueId", "ncclCommGrow", "ncclCommRevoke", "ncclCommSuspend"};
  for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
    if (!strcmp(op, built[i])) return ncclSuccess;
  if (!strcmp(op, "ncclCommQueryProperties") || !strncmp(op, "ncclTeam", 8))
    return ncclSuccess; /* the queries report the hosts as LSA teams */
  SIM_WARN(SIM_INIT, "%s: rank %d's communicator spans %d hosts, and ncclsim does not yet run %s across hosts: "
           "point-to-point operations, collectives, windows, the one-sided calls, device communicators, split, "
           "shrink, grow, revoke, suspend and the queries only "
           "(docs/ncclsim.md, \"Ranks on other hosts\")", op, comm->rank, comm->clique->net->nhosts, op);
  return ncclInvalidUsage;
}

ncclResult_t sim_comm_check(ncclComm_t comm, const char *op) {
  SIM_CHECK(check_state(comm, op, 1u << SIM_COMM_READY));
  return check_hosts(comm, op);
}

ncclResult_t sim_comm_check_mgmt(ncclComm_t comm, const char *op) {
  SIM_CHECK(check_state(comm, op, 1u << SIM_COMM_READY | 1u << SIM_COMM_REVOKED));
  SIM_CHECK(check_hosts(comm, op));
  if (atomic_load(&comm->dead)) {
    SIM_WARN(SIM_INIT, "%s: rank %d stopped at its operation %llu (NCCLSIM_FAULT): as if its process had died, it "
             "takes part in nothing more", op, comm->rank, (unsigned long long)comm->fault_at);
    return ncclRemoteError;
  }
  return ncclSuccess;
}
