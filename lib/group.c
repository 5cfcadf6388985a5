/*
 * group.c — NCCL groups. Groups are per thread in NCCL; so are these.
 */
#include "config.h"

#include "n4c_internal.h"

n4c_status_t n4c_group_start(void) {
  N4C_NCCLCHECK("n4c_group_start", ncclGroupStart, ());
  return N4C_OK;
}

n4c_status_t n4c_group_end(void) {
  N4C_NCCLCHECK("n4c_group_end", ncclGroupEnd, ());
  return N4C_OK;
}

n4c_status_t n4c_group_simulate_end(double *seconds) {
  static const char op[] = "n4c_group_simulate_end";
  N4C_CHECK(n4c_check_ptr(op, "seconds", seconds));
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  N4C_NCCLCHECK(op, ncclGroupSimulateEnd, (&info));
  *seconds = (double)info.estimatedTime;
  return N4C_OK;
}
