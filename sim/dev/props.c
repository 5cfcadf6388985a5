/*
 * sim/dev/props.c — ncclCommQueryProperties and the host team queries.
 *
 * What a communicator says it supports comes from its options, fixed at
 * init (NCCLSIM_GIN_TYPE, NCCLSIM_RAILED_GIN_TYPE, NCCLSIM_HOST_RMA,
 * NCCLSIM_DEVICE_API, or ncclsimSetCommOptions). Multicast is never
 * simulated, and each simulated node is one LSA team.
 */
#include <stddef.h>

#include "dev_internal.h"

SIM_EXPORT ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t *props) {
  static const char op[] = "ncclCommQueryProperties";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!props) {
    SIM_WARN(SIM_DEV, "%s: props is NULL", op);
    return ncclInvalidArgument;
  }
  if (props->magic != NCCL_API_MAGIC || props->size < offsetof(ncclCommProperties_t, railedGinType) + sizeof props->railedGinType) {
    SIM_WARN(SIM_DEV, "%s: props (size %zu, magic 0x%x) was not initialised with NCCL_COMM_PROPERTIES_INITIALIZER", op,
             props->size, props->magic);
    return ncclInvalidArgument;
  }
  props->rank = comm->rank;
  props->nRanks = comm->nranks;
  props->cudaDev = comm->device;
  props->nvmlDev = comm->device; /* simulated devices are numbered alike */
  props->deviceApiSupport = comm->opts.deviceApi != 0;
  props->multimemSupport = false;
  props->ginType = (ncclGinType_t)comm->opts.ginType;
  props->nLsaTeams = comm->clique->nnodes;
  props->hostRmaSupport = comm->opts.hostRma != 0;
  props->railedGinType = (ncclGinType_t)comm->opts.railedGinType;
  return ncclSuccess;
}

static bool team_comm_ok(ncclComm_t comm, const char *op) {
  return sim_comm_check(comm, op) == ncclSuccess;
}

SIM_EXPORT ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  ncclTeam_t t = {0, 0, 0};
  if (!team_comm_ok(comm, "ncclTeamWorld")) return t;
  t.nRanks = comm->nranks;
  t.rank = comm->rank;
  t.stride = 1;
  return t;
}

SIM_EXPORT ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  ncclTeam_t t = {0, 0, 0};
  if (!team_comm_ok(comm, "ncclTeamLsa")) return t;
  t.nRanks = comm->lsa_size;
  t.rank = comm->lsa_rank;
  t.stride = 1;
  return t;
}

/* The ranks at this rank's LSA index on every node. With a short last node
 * a high LSA index has no member there, so the team may be smaller. */
SIM_EXPORT ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  ncclTeam_t t = {0, 0, 0};
  if (!team_comm_ok(comm, "ncclTeamRail")) return t;
  int rpn = comm->clique->ranks_per_node;
  t.nRanks = (comm->nranks - comm->lsa_rank + rpn - 1) / rpn;
  t.rank = comm->node;
  t.stride = rpn;
  return t;
}

/* NCCL's host rank conversions: team member `rank` as a world rank, or as
 * an LSA rank (this rank is team.rank; members are team.stride world ranks
 * apart). -1 for an invalid comm (NCCL ignores errors here). */
SIM_EXPORT int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  if (!team_comm_ok(comm, "ncclTeamRankToWorld")) return -1;
  return comm->rank + (rank - team.rank) * team.stride;
}

SIM_EXPORT int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  if (!team_comm_ok(comm, "ncclTeamRankToLsa")) return -1;
  return comm->lsa_rank + (rank - team.rank) * team.stride;
}
