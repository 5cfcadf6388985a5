/*
 * lib_mock.c — the NCCL mocks of lib_mock.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib_mock.h"
#include "n4c_test.h"

int mock_live_comms;
int mock_device;
ncclResult_t mock_async = ncclSuccess;
int mock_fail_with_comm;

static ncclComm_t fake_new(int nranks, int rank, int device) {
  ncclComm_t c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->nranks = nranks;
  c->rank = rank;
  c->device = device;
  mock_live_comms++;
  return c;
}

static void fake_free(ncclComm_t c) {
  assert_non_null(c);
  mock_live_comms--;
  free(c);
}

void mock_identity_ok(void) {
  will_return(__wrap_ncclCommCount, ncclSuccess);
  will_return(__wrap_ncclCommUserRank, ncclSuccess);
  will_return(__wrap_ncclCommCuDevice, ncclSuccess);
}

n4c_comm_t *mock_comm(int nranks, int rank, int device) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  n4c_comm_t *comm = NULL;
  mock_device = device;
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, nranks, rank, &id, 1, NULL), N4C_OK);
  mock_identity_ok();
  int v;
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_OK);
  assert_int_equal(v, nranks);
  return comm;
}

void assert_msg(const char *a, const char *b, const char *c) {
  const char *m = n4c_last_error_message();
  const char *frag[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (frag[i] && !strstr(m, frag[i]))
      fail_msg("message \"%s\" lacks \"%s\"", m, frag[i]);
}

void assert_no_leaks(void) {
  assert_int_equal(mock_live_comms, 0);
  assert_int_equal(n4c_test_alloc_live(), 0);
}

ncclResult_t __wrap_ncclGetUniqueId(ncclUniqueId *id) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) memset(id, 0x5a, sizeof *id);
  return r;
}

ncclResult_t __wrap_ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                           int rank, ncclConfig_t *config) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess || r == ncclInProgress || mock_fail_with_comm)
    *comm = fake_new(nranks, rank, mock_device);
  return r;
}

ncclResult_t __wrap_ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
                                             ncclUniqueId *ids, ncclConfig_t *config) {
  check_expected(nids);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *comm = fake_new(nranks, rank, mock_device);
  return r;
}

ncclResult_t __wrap_ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r != ncclSuccess) return r;
  for (int i = 0; i < ndev; i++) comms[i] = fake_new(ndev, i, devlist ? devlist[i] : i);
  return r;
}

ncclResult_t __wrap_ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                  ncclConfig_t *config) {
  check_expected(color);
  ncclResult_t r = mock_type(ncclResult_t);
  if ((r == ncclSuccess || mock_fail_with_comm) && color != NCCL_SPLIT_NOCOLOR)
    *newcomm = fake_new(1, 0, comm->device);
  return r;
}

ncclResult_t __wrap_ncclCommFinalize(ncclComm_t comm) {
  assert_non_null(comm);
  return mock_type(ncclResult_t);
}

/* NCCL frees the communicator whatever it returns. */
ncclResult_t __wrap_ncclCommDestroy(ncclComm_t comm) {
  fake_free(comm);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclCommAbort(ncclComm_t comm) {
  fake_free(comm);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclCommCount(const ncclComm_t comm, int *count) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *count = comm->nranks;
  return r;
}

ncclResult_t __wrap_ncclCommUserRank(const ncclComm_t comm, int *rank) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *rank = comm->rank;
  return r;
}

ncclResult_t __wrap_ncclCommCuDevice(const ncclComm_t comm, int *device) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *device = comm->device;
  return r;
}

ncclResult_t __wrap_ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err) {
  assert_non_null(comm);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *err = mock_async;
  return r;
}

const char *__wrap_ncclGetLastError(ncclComm_t comm) {
  assert_non_null(comm);
  return "mock: last warning";
}

#if HAVE_DECL_NCCLCOMMMEMSTATS
ncclResult_t __wrap_ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t *value);
ncclResult_t __wrap_ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t *value) {
  check_expected(stat);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *value = 4096;
  return r;
}
#endif

ncclResult_t __wrap_ncclSend(const void *buf, size_t count, ncclDataType_t dt, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  check_expected_ptr(buf);
  check_expected(count);
  check_expected(dt);
  check_expected(peer);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclRecv(void *buf, size_t count, ncclDataType_t dt, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  check_expected_ptr(buf);
  check_expected(count);
  check_expected(dt);
  check_expected(peer);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclGroupStart(void) { return mock_type(ncclResult_t); }

ncclResult_t __wrap_ncclGroupEnd(void) { return mock_type(ncclResult_t); }

ncclResult_t __wrap_ncclGroupSimulateEnd(ncclSimInfo_t *info) {
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) info->estimatedTime = 0.25f;
  return r;
}
