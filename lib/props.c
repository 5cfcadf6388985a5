/*
 * props.c — what a communicator supports (ncclCommQueryProperties, NCCL
 * 2.29+) and the names of the GIN enums.
 */
#include "config.h"

#include "n4c_internal.h"

const char *n4c_gin_type_name(n4c_gin_type_t type) {
  switch (type) {
  case N4C_GIN_NONE: return "none";
  case N4C_GIN_PROXY: return "proxy";
  case N4C_GIN_GDAKI: return "gdaki";
  case N4C_GIN_GPI: return "gpi";
  default: return NULL;
  }
}

const char *n4c_gin_connection_type_name(n4c_gin_connection_type_t type) {
  switch (type) {
  case N4C_GIN_CONNECTION_NONE: return "none";
  case N4C_GIN_CONNECTION_FULL: return "full";
  case N4C_GIN_CONNECTION_RAIL: return "rail";
  default: return NULL;
  }
}

n4c_status_t n4c_comm_properties(n4c_comm_t *comm, n4c_comm_properties_t *out) {
  static const char op[] = "n4c_comm_properties";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
#if HAVE_DECL_NCCLCOMMQUERYPROPERTIES
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  N4C_NCCLCHECK(op, ncclCommQueryProperties, (comm->handle, &p));
  out->rank = p.rank;
  out->nranks = p.nRanks;
  out->cuda_dev = p.cudaDev;
  out->nvml_dev = p.nvmlDev;
  out->device_api_support = p.deviceApiSupport;
  out->multimem_support = p.multimemSupport;
  out->gin_type = (n4c_gin_type_t)p.ginType;
  out->n_lsa_teams = p.nLsaTeams;
  out->host_rma_support = p.hostRmaSupport;
  out->railed_gin_type = (n4c_gin_type_t)p.railedGinType;
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommQueryProperties");
#endif
}
