/*
 * coll_check.h — shared by case_coll.c and case_redop.c: values of every
 * dtype through double, and one collective run checked against a host
 * reference.
 */
#ifndef N4C_CONFORMANCE_COLL_CHECK_H_
#define N4C_CONFORMANCE_COLL_CHECK_H_

#include <stdint.h>

#include "case.h"

typedef enum { K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCESCATTER, K_ALLTOALL, K_GATHER, K_SCATTER } coll_k;

/* One run: `count` is NCCL's count argument (per rank / per peer). op_class
 * is ncclSum..ncclAvg, or ncclNumOps for a PreMulSum whose per-rank scalar
 * is scalars[r]. */
typedef struct {
  coll_k kind;
  ncclDataType_t dt;
  int op_class;
  ncclRedOp_t op;
  const double *scalars;
  size_t count;
  int root;
  bool inplace;
  bool selftest; /* also check that corrupted results are rejected */
} coll_run;

/* Runs it on every rank and checks this rank's output. */
bool coll_check(case_ctx_t *ctx, n4c_comm_t *comm, cudaStream_t stream, const coll_run *run);
/* Compares `out`, this rank's rcount result elements, with the host
 * reference: the index of the first element out of tolerance (and `why`),
 * or SIZE_MAX. */
size_t coll_compare(const coll_run *run, int nranks, int me, const void *out, size_t rcount, char *why, size_t len);
/* Encodes one value of dt (exact for the test values). */
void coll_encode(ncclDataType_t dt, double v, void *out);

#endif
