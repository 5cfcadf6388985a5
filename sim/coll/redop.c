/*
 * sim/coll/redop.c — ncclRedOpCreatePreMulSum and ncclRedOpDestroy.
 *
 * Each rank keeps its own list of ops. A value is opaque, as in NCCL: a
 * process-wide counter spread over large integers, so that an op of one
 * communicator is never mistaken for an op of another.
 */
#include <string.h>

#include "coll_internal.h"

static _Atomic uint32_t next_id;

static coll_state *state_of(ncclComm_t comm) { return comm->clique->area[SIM_AREA_COLL]; }

SIM_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                                 ncclScalarResidence_t residence, ncclComm_t comm) {
  static const char fn[] = "ncclRedOpCreatePreMulSum";
  ncclResult_t res;
  if ((res = sim_comm_check(comm, fn)) != ncclSuccess) return res;
  if (!op || !scalar) {
    SIM_WARN(SIM_COLL, "%s: %s is NULL", fn, !op ? "op" : "scalar");
    return ncclInvalidArgument;
  }
  if (!sim_dtype_size(datatype)) {
    SIM_WARN(SIM_COLL, "%s: datatype %d is not a ncclDataType_t", fn, (int)datatype);
    return ncclInvalidArgument;
  }
  sim_redop *o = sim_calloc(1, sizeof *o);
  if (!o) return ncclSystemError;
  o->dt = datatype;
  /* NCCL reads the scalar now only for ncclScalarHostImmediate; any other
   * residence, even an invalid one, is a pointer read by each collective. */
  if (residence == ncclScalarHostImmediate) memcpy(o->scalar, scalar, sim_dtype_size(datatype));
  else {
    o->device = true;
    o->scalar_ptr = scalar;
  }
  uint32_t id = atomic_fetch_add(&next_id, 1) % 0x3fffffu;
  o->value = (ncclRedOp_t)(0x40000000u | (id << 7) | 0x5au);
  coll_state *st = state_of(comm);
  sim_mutex_lock(&st->lock);
  o->next = st->ops[comm->rank];
  st->ops[comm->rank] = o;
  pthread_mutex_unlock(&st->lock);
  *op = o->value;
  SIM_INFO(SIM_COLL, "rank %d: PreMulSum op %d for %s, %s scalar", comm->rank, (int)o->value,
           sim_dtype_name(datatype), o->device ? "device" : "host-immediate");
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  static const char fn[] = "ncclRedOpDestroy";
  ncclResult_t res;
  if ((res = sim_comm_check(comm, fn)) != ncclSuccess) return res;
  coll_state *st = state_of(comm);
  sim_redop *found = NULL;
  sim_mutex_lock(&st->lock);
  for (sim_redop **pp = &st->ops[comm->rank]; *pp; pp = &(*pp)->next)
    if ((*pp)->value == op) {
      found = *pp;
      *pp = found->next;
      break;
    }
  pthread_mutex_unlock(&st->lock);
  if (!found) {
    SIM_WARN(SIM_COLL, "%s: op %d is not a live user-created op of rank %d's communicator", fn, (int)op, comm->rank);
    return ncclInvalidArgument;
  }
  sim_free(found);
  return ncclSuccess;
}

ncclResult_t sim_redop_lookup(ncclComm_t comm, ncclRedOp_t op, ncclDataType_t dt, const char *fn, sim_redop *out) {
  coll_state *st = state_of(comm);
  const sim_redop *o;
  sim_mutex_lock(&st->lock);
  for (o = st->ops[comm->rank]; o && o->value != op; o = o->next) {
  }
  if (o) *out = *o;
  pthread_mutex_unlock(&st->lock);
  if (!o) {
    SIM_WARN(SIM_COLL, "%s: op %d is neither a built-in op nor a live op of rank %d's communicator", fn, (int)op,
             comm->rank);
    return ncclInvalidArgument;
  }
  if (out->dt != dt) {
    SIM_WARN(SIM_COLL, "%s: op %d was created for %s, but the datatype is %s", fn, (int)op, sim_dtype_name(out->dt),
             sim_dtype_name(dt));
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

void sim_redop_comm_fini(ncclComm_t comm) {
  coll_state *st = state_of(comm);
  if (!st) return;
  sim_mutex_lock(&st->lock);
  sim_redop *o = st->ops[comm->rank];
  st->ops[comm->rank] = NULL;
  pthread_mutex_unlock(&st->lock);
  while (o) {
    sim_redop *next = o->next;
    sim_free(o);
    o = next;
  }
}
