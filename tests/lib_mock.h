/*
 * lib_mock.h — link-time mocks of the NCCL calls nccl4c's first slice
 * makes (-Wl,--wrap=ncclX, see tests/lib.mk), for the CMocka tests.
 *
 * Every wrapped call takes its ncclResult_t from the CMocka queue:
 *   will_return(__wrap_ncclSend, ncclInternalError);
 * so a call the test did not queue fails the test. That is how the tests
 * prove that a rejected argument never reaches NCCL.
 *
 * Communicators are fakes (struct ncclComm below) counted in
 * mock_live_comms, to prove that no NCCL communicator leaks.
 */
#ifndef LIB_MOCK_H_
#define LIB_MOCK_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nccl4c.h"

struct ncclComm {
  int nranks, rank, device;
};

extern int mock_live_comms;          /* fake communicators not destroyed */
extern int mock_device;              /* device of the next InitRankConfig */
extern ncclResult_t mock_async;      /* what ncclCommGetAsyncError reports */
extern int mock_fail_with_comm;      /* init/split fail yet hand out a comm */

/* Queues what a successful lazy identity query takes (Count, UserRank,
 * CuDevice). */
void mock_identity_ok(void);

/* A live communicator: nranks, rank, on device `device`, identity read. */
n4c_comm_t *mock_comm(int nranks, int rank, int device);

/* Asserts the message of the last failure contains each of up to three
 * fragments (NULL: unused). */
void assert_msg(const char *a, const char *b, const char *c);

/* Leak check: no fake communicator and no allocation of lib/ left. */
void assert_no_leaks(void);

/* The wraps (declared for -Wmissing-prototypes). */
ncclResult_t __wrap_ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t __wrap_ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                           int rank, ncclConfig_t *config);
ncclResult_t __wrap_ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
                                             ncclUniqueId *ids, ncclConfig_t *config);
ncclResult_t __wrap_ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t __wrap_ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config);
ncclResult_t __wrap_ncclCommFinalize(ncclComm_t comm);
ncclResult_t __wrap_ncclCommDestroy(ncclComm_t comm);
ncclResult_t __wrap_ncclCommAbort(ncclComm_t comm);
ncclResult_t __wrap_ncclCommCount(const ncclComm_t comm, int *count);
ncclResult_t __wrap_ncclCommUserRank(const ncclComm_t comm, int *rank);
ncclResult_t __wrap_ncclCommCuDevice(const ncclComm_t comm, int *device);
ncclResult_t __wrap_ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err);
const char *__wrap_ncclGetLastError(ncclComm_t comm);
ncclResult_t __wrap_ncclSend(const void *buf, size_t count, ncclDataType_t dt, int peer,
                             ncclComm_t comm, cudaStream_t stream);
ncclResult_t __wrap_ncclRecv(void *buf, size_t count, ncclDataType_t dt, int peer,
                             ncclComm_t comm, cudaStream_t stream);
ncclResult_t __wrap_ncclGroupStart(void);
ncclResult_t __wrap_ncclGroupEnd(void);
ncclResult_t __wrap_ncclGroupSimulateEnd(ncclSimInfo_t *info);

#endif /* LIB_MOCK_H_ */
