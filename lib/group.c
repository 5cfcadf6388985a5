/*
 * group.c — NCCL groups. Groups are per thread in NCCL; so are these.
 */
#include "config.h"

#include "n4c_internal.h"

/* This thread's group depth, mirrored from NCCL's: inside a group NCCL may
 * fill out-handles (windows, split communicators) only at group end. */
static _Thread_local int depth;

int n4c_group_depth(void) { return depth; }

n4c_status_t n4c_group_start(void) {
  N4C_NCCLCHECK("n4c_group_start", ncclGroupStart, ());
  depth++;
  return N4C_OK;
}

n4c_status_t n4c_group_end(void) {
  /* NCCL closes the group level even when ncclGroupEnd reports an error. */
  if (depth > 0) depth--;
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
