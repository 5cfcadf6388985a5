/*
 * devk.h — the DEVK cases' kernels (conformance/devk_*.cu): NCCL's device
 * API used from CUDA kernels. One .cu per area (LSA, GIN, LL all-to-all),
 * compiled by nvcc against real NCCL (2.30 or later) and by ncclsim's
 * compiler driver (ncclsim-nvcc) against ncclsim; conformance/case_devk.c
 * calls them. A build with neither has conformance/devk_none.c, whose
 * functions skip.
 *
 * Each function runs on one rank of `comm`, with the rank's device
 * current, as every rank of the case does at once: it allocates and
 * registers its windows, creates its device communicator (collective
 * calls, made in the same order on every rank), launches its kernels on
 * the device's default stream, waits for them, checks what they wrote,
 * and frees everything, even after a failure, so that no peer waits for
 * it. It returns DEVK_PASS, DEVK_FAIL or DEVK_SKIP, and for the last two
 * says why in msg (len bytes).
 */
#ifndef N4C_CONFORMANCE_DEVK_H_
#define N4C_CONFORMANCE_DEVK_H_

#include <stddef.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { DEVK_PASS = 0, DEVK_FAIL = 1, DEVK_SKIP = 2 };

/* Barrier memory orders of DEVK-02: sync with acq_rel; sync with
 * seq_cst; arrive with release then wait with acquire. */
enum { DEVK_ORDER_ACQ_REL, DEVK_ORDER_SEQ_CST, DEVK_ORDER_SPLIT, DEVK_ORDER_COUNT };
/* GIN signal actions of DEVK-05, in this order. */
enum {
  DEVK_SIG_INC, DEVK_SIG_STRONG_INC, DEVK_SIG_WEAK_INC,
  DEVK_SIG_ADD, DEVK_SIG_STRONG_ADD, DEVK_SIG_WEAK_ADD,
  DEVK_SIG_VA_INC, DEVK_SIG_STRONG_VA_INC, DEVK_SIG_WEAK_VA_INC,
  DEVK_SIG_VA_ADD, DEVK_SIG_STRONG_VA_ADD, DEVK_SIG_WEAK_VA_ADD,
  DEVK_SIG_COUNT
};
/* The GIN barrier's fence levels of DEVK-04: Put|Get, Put, Get, None. */
enum { DEVK_FENCE_PUT_GET, DEVK_FENCE_PUT, DEVK_FENCE_GET, DEVK_FENCE_NONE, DEVK_FENCE_COUNT };

/* Names of the variants above, for messages. */
const char *devk_order_name(int order);
const char *devk_signal_name(int action);
const char *devk_fence_name(int fence);

/* devk_lsa.cu */
/* DEVK-01: stores through ncclGetLsaPointer into every LSA peer's window,
 * an LSA barrier, and loads of what the peers stored (ncclGetLocalPointer);
 * ncclGetPeerPointer agrees with ncclGetLsaPointer in the LSA team and is
 * NULL outside it. */
int devk_lsa_pointers(ncclComm_t comm, char *msg, size_t len);
/* DEVK-02: rounds of stores to every LSA peer and a barrier session of
 * memory order `order` (DEVK_ORDER_*): after each, every peer's stores of
 * the round are seen. */
int devk_lsa_barrier(ncclComm_t comm, int order, char *msg, size_t len);
/* DEVK-09: devComm, made by nccl4c (n4c_comm_create_dev_comm with two LSA
 * barriers), used from a kernel as DEVK-01's. */
int devk_lsa_devcomm(ncclComm_t comm, const void *devComm, char *msg, size_t len);

/* devk_gin.cu: the communicator must support GIN (its ginType). */
/* DEVK-03: GIN puts to every rank, then the hybrid barrier
 * (ncclBarrierSession, world) with the Put fence: every rank's puts of the
 * round are seen after it. */
int devk_hybrid_barrier(ncclComm_t comm, char *msg, size_t len);
/* DEVK-04: the same with a world GIN barrier session and fence `fence`
 * (DEVK_FENCE_*; without Put only the ranks' arrival is checked). */
int devk_gin_barrier(ncclComm_t comm, int fence, char *msg, size_t len);
/* DEVK-05: a put to every rank with remote action `action`
 * (DEVK_SIG_*); each rank waits for its signal to count every put, and
 * then sees every put's bytes. */
int devk_gin_signal(ncclComm_t comm, int action, char *msg, size_t len);
/* DEVK-06: puts with a counter (local action): waitCounter, readCounter
 * and flush see every put's source consumed; resetCounter zeroes it. */
int devk_gin_counter(ncclComm_t comm, char *msg, size_t len);
/* DEVK-07: putValue of 1, 2, 4 and 8 bytes with a signal. */
int devk_gin_put_value(ncclComm_t comm, char *msg, size_t len);

/* devk_ll.cu */
/* DEVK-08: the LL all-to-all: every LSA rank sends each peer a value in
 * its slot, every rank receives them all, over several epochs. */
int devk_ll_a2a(ncclComm_t comm, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* N4C_CONFORMANCE_DEVK_H_ */
