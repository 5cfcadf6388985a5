/*
 * sim/comm/options.c — per-thread communicator options (ncclsim.h), so a
 * test can make communicators of different GIN types and topologies in one
 * process without touching the environment.
 */
#include "comm_internal.h"

static _Thread_local bool have_opts;
static _Thread_local ncclsimCommOptions_t opts;

static bool gin_ok(int v) { return v == NCCLSIM_OPT_UNSET || v == 0 || (v >= 2 && v <= 4); }
static bool bool_ok(int v) { return v == NCCLSIM_OPT_UNSET || v == 0 || v == 1; }

SIM_EXPORT ncclResult_t ncclsimSetCommOptions(const ncclsimCommOptions_t *o) {
  if (!o) {
    have_opts = false;
    return ncclSuccess;
  }
  if (!gin_ok(o->ginType) || !gin_ok(o->railedGinType) || !bool_ok(o->hostRma) || !bool_ok(o->deviceApi) ||
      (o->ranksPerNode != NCCLSIM_OPT_UNSET && o->ranksPerNode < 0)) {
    SIM_WARN(SIM_INIT,
             "ncclsimSetCommOptions: invalid options (ginType %d, railedGinType %d, hostRma %d, deviceApi %d, "
             "ranksPerNode %d)",
             o->ginType, o->railedGinType, o->hostRma, o->deviceApi, o->ranksPerNode);
    return ncclInvalidArgument;
  }
  opts = *o;
  have_opts = true;
  return ncclSuccess;
}

static int pick(int set, sim_param_id id) { return set != NCCLSIM_OPT_UNSET ? set : (int)sim_param_int(id); }

void sim_options_resolve(ncclsimCommOptions_t *out) {
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  if (have_opts) o = opts;
  out->ginType = pick(o.ginType, SIM_P_GIN_TYPE);
  out->railedGinType = pick(o.railedGinType, SIM_P_RAILED_GIN_TYPE);
  out->hostRma = pick(o.hostRma, SIM_P_HOST_RMA) != 0;
  out->deviceApi = pick(o.deviceApi, SIM_P_DEVICE_API) != 0;
  out->ranksPerNode = pick(o.ranksPerNode, SIM_P_RANKS_PER_NODE);
}
