/*
 * props.c — what a communicator supports (ncclCommQueryProperties, NCCL
 * 2.29+) and the names of the GIN enums.
 *
 * NCCL declares ncclCommQueryProperties in <nccl_device.h>, which is C++:
 * the call goes through the bridge (devcomm_bridge.h), and gives
 * N4C_ENOTSUP where the bridge or the function is missing.
 */
#include "config.h"

#include "n4c_internal.h"
#include "devcomm_bridge.h"

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
#if HAVE_BRIDGE_NCCLCOMMQUERYPROPERTIES
  ncclResult_t r = n4c_br_comm_properties(comm->handle, out);
  if (r != ncclSuccess) return n4c_nccl_error(op, "ncclCommQueryProperties", r);
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommQueryProperties");
#endif
}
