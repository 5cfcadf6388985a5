/*
 * lib_comm.c — the communicator: argument checks, every NCCL failure path
 * of the lifecycle and status methods, groups. NCCL is mocked
 * (lib_mock.h): an unqueued NCCL call fails the test.
 */
#include "config.h"

#include <string.h>

#include "lib_mock.h"
#include "n4c_test.h"

static ncclUniqueId id0;

static int check_leaks(void **state) {
  assert_no_leaks();
  return 0;
}

static void test_null_communicator(void **state) {
  n4c_comm_t *comm;
  int v;
  ncclResult_t r;
  const char *s;
  uint64_t u;
  n4c_comm_t *child;
  assert_int_equal(n4c_comm_new(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_new", "out is NULL", NULL);
  assert_int_equal(n4c_comm_new(&comm), N4C_OK);
  assert_false(n4c_comm_is_valid(comm));
  assert_null(n4c_comm_handle(comm));
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_EINVAL);
  assert_msg("n4c_comm_nranks", "comm is a null communicator", NULL);
  assert_int_equal(n4c_comm_rank(comm, &v), N4C_EINVAL);
  assert_msg("n4c_comm_rank", "comm", NULL);
  assert_int_equal(n4c_comm_device(comm, &v), N4C_EINVAL);
  assert_msg("n4c_comm_device", "comm", NULL);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_EINVAL);
  assert_msg("n4c_comm_get_async_error", "null communicator", NULL);
  assert_int_equal(n4c_comm_last_error(comm, &s), N4C_EINVAL);
  assert_msg("n4c_comm_last_error", "null communicator", NULL);
  assert_int_equal(n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_TOTAL, &u), N4C_EINVAL);
  assert_msg("n4c_comm_mem_stat", "null communicator", NULL);
  assert_int_equal(n4c_comm_split(comm, 0, 0, NULL, &child), N4C_EINVAL);
  assert_msg("n4c_comm_split", "null communicator", NULL);
  /* Teardown of a null communicator is a no-op (no NCCL call queued). */
  assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_int_equal(n4c_comm_close_all_resources(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_null_pointers(void **state) {
  int v;
  assert_false(n4c_comm_is_valid(NULL));
  assert_null(n4c_comm_handle(NULL));
  assert_int_equal(n4c_comm_nranks(NULL, &v), N4C_EINVAL);
  assert_msg("n4c_comm_nranks", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_destroy(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_destroy", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_abort(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_abort", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_finalize(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_finalize", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_close_all_resources(NULL), N4C_EINVAL);
  assert_msg("n4c_comm_close_all_resources", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_free(NULL), N4C_OK);

  n4c_comm_t *comm = mock_comm(2, 0, 0);
  assert_int_equal(n4c_comm_nranks(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_nranks", "out is NULL", NULL);
  assert_int_equal(n4c_comm_rank(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_rank", "out is NULL", NULL);
  assert_int_equal(n4c_comm_device(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_device", "out is NULL", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_initialize_args(void **state) {
  n4c_comm_t *comm;
  assert_int_equal(n4c_comm_new(&comm), N4C_OK);
  assert_int_equal(n4c_comm_initialize(NULL, 4, 0, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "comm is NULL", NULL);
  assert_int_equal(n4c_comm_initialize(comm, 0, 0, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "nranks is 0", NULL);
  assert_int_equal(n4c_comm_initialize(comm, -3, 0, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "nranks is -3", NULL);
  assert_int_equal(n4c_comm_initialize(comm, 4, -1, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "rank is -1, but nranks is 4", NULL);
  assert_int_equal(n4c_comm_initialize(comm, 4, 4, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "rank is 4, but nranks is 4", NULL);
  assert_int_equal(n4c_comm_initialize(comm, 4, 0, NULL, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "ids is NULL", NULL);
  assert_int_equal(n4c_comm_initialize(comm, 4, 0, &id0, 0, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "nids is 0", NULL);
  assert_false(n4c_comm_is_valid(comm));
  n4c_comm_t *out = (n4c_comm_t *)&id0;
  assert_int_equal(n4c_comm_init(NULL, 4, 0, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_init", "out is NULL", NULL);
  assert_int_equal(n4c_comm_init(&out, 4, 9, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_init", "rank is 9, but nranks is 4", NULL);
  assert_null(out);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_init_identity(void **state) {
  n4c_comm_t *comm = mock_comm(4, 2, 3);
  int v;
  assert_true(n4c_comm_is_valid(comm));
  assert_non_null(n4c_comm_handle(comm));
  /* Cached: no further NCCL queries. */
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_OK);
  assert_int_equal(v, 4);
  assert_int_equal(n4c_comm_rank(comm, &v), N4C_OK);
  assert_int_equal(v, 2);
  assert_int_equal(n4c_comm_device(comm, &v), N4C_OK);
  assert_int_equal(v, 3);
  /* LIFE-06: initialize twice. */
  assert_int_equal(n4c_comm_initialize(comm, 4, 2, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "already initialized", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_initialize(comm, 4, 2, &id0, 1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_initialize", "destroyed", NULL);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_init_failure(void **state) {
  n4c_comm_t *comm = (n4c_comm_t *)&id0;
  will_return(__wrap_ncclCommInitRankConfig, ncclInvalidArgument);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, NULL), N4C_ENCCL);
  assert_null(comm);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidArgument);
  assert_msg("n4c_comm_init", "ncclCommInitRankConfig", ncclGetErrorString(ncclInvalidArgument));
  assert_no_leaks();

  /* initialize: the communicator stays null and can be initialized later. */
  assert_int_equal(n4c_comm_new(&comm), N4C_OK);
  will_return(__wrap_ncclCommInitRankConfig, ncclUnhandledCudaError);
  assert_int_equal(n4c_comm_initialize(comm, 2, 1, &id0, 1, NULL), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclUnhandledCudaError);
  assert_msg("n4c_comm_initialize", "ncclCommInitRankConfig", NULL);
  assert_false(n4c_comm_is_valid(comm));
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_initialize(comm, 2, 1, &id0, 1, NULL), N4C_OK);
  assert_true(n4c_comm_is_valid(comm));
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* A non-blocking init or split may hand out a communicator and then fail:
 * nccl4c must abort it, not leak it. */
static void test_failure_with_handle(void **state) {
  n4c_comm_t *comm = (n4c_comm_t *)&id0, *child = NULL;
  mock_fail_with_comm = 1;
  will_return(__wrap_ncclCommInitRankConfig, ncclRemoteError);
  will_return(__wrap_ncclCommAbort, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, NULL), N4C_ENCCL);
  assert_null(comm);
  assert_int_equal(n4c_last_nccl_result(), ncclRemoteError);
  mock_fail_with_comm = 0;
  comm = mock_comm(2, 0, 0);
  mock_fail_with_comm = 1;
  expect_value(__wrap_ncclCommSplit, color, 0);
  will_return(__wrap_ncclCommSplit, ncclSystemError);
  will_return(__wrap_ncclCommAbort, ncclSuccess);
  assert_int_equal(n4c_comm_split(comm, 0, 0, NULL, &child), N4C_ENCCL);
  assert_null(child);
  assert_int_equal(n4c_last_nccl_result(), ncclSystemError);
  mock_fail_with_comm = 0;
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_init_scalable(void **state) {
  ncclUniqueId ids[3];
  memset(ids, 0, sizeof ids);
  n4c_comm_t *comm;
  expect_value(__wrap_ncclCommInitRankScalable, nids, 3);
  will_return(__wrap_ncclCommInitRankScalable, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 8, 5, ids, 3, NULL), N4C_OK);
  expect_value(__wrap_ncclCommInitRankScalable, nids, 2);
  will_return(__wrap_ncclCommInitRankScalable, ncclRemoteError);
  n4c_comm_t *c2;
  assert_int_equal(n4c_comm_init(&c2, 8, 5, ids, 2, NULL), N4C_ENCCL);
  assert_msg("n4c_comm_init", "ncclCommInitRankScalable", NULL);
  will_return(__wrap_ncclCommAbort, ncclSuccess);
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_init_nonblocking(void **state) {
  n4c_comm_t *comm;
  int v;
  ncclResult_t r;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  will_return(__wrap_ncclCommInitRankConfig, ncclInProgress);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, &config), N4C_EINPROGRESS);
  assert_non_null(comm);
  assert_int_equal(n4c_last_nccl_result(), ncclInProgress);
  assert_true(n4c_comm_is_valid(comm));
  will_return(__wrap_ncclCommCount, ncclInProgress);
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_EINPROGRESS);
  assert_msg("n4c_comm_nranks", "ncclCommCount", "in progress");
  mock_async = ncclInProgress;
  will_return(__wrap_ncclCommGetAsyncError, ncclSuccess);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_OK);
  assert_int_equal(r, ncclInProgress);
  mock_async = ncclSuccess;
  will_return(__wrap_ncclCommGetAsyncError, ncclSuccess);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_OK);
  assert_int_equal(r, ncclSuccess);
  mock_identity_ok();
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_OK);
  assert_int_equal(v, 2);
  /* A non-blocking finalize: poll, then destroy. */
  will_return(__wrap_ncclCommFinalize, ncclInProgress);
  assert_int_equal(n4c_comm_finalize(comm), N4C_EINPROGRESS);
  assert_false(n4c_comm_is_valid(comm));
  will_return(__wrap_ncclCommGetAsyncError, ncclSuccess);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_OK);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_identity_failures(void **state) {
  n4c_comm_t *comm;
  int v;
  mock_device = 0;
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, NULL), N4C_OK);
  will_return(__wrap_ncclCommCount, ncclInternalError);
  assert_int_equal(n4c_comm_nranks(comm, &v), N4C_ENCCL);
  assert_msg("n4c_comm_nranks", "ncclCommCount", ncclGetErrorString(ncclInternalError));
  will_return(__wrap_ncclCommCount, ncclSuccess);
  will_return(__wrap_ncclCommUserRank, ncclInvalidUsage);
  assert_int_equal(n4c_comm_rank(comm, &v), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidUsage);
  assert_msg("n4c_comm_rank", "ncclCommUserRank", NULL);
  will_return(__wrap_ncclCommCount, ncclSuccess);
  will_return(__wrap_ncclCommUserRank, ncclSuccess);
  will_return(__wrap_ncclCommCuDevice, ncclSystemError);
  assert_int_equal(n4c_comm_device(comm, &v), N4C_ENCCL);
  assert_msg("n4c_comm_device", "ncclCommCuDevice", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_init_all(void **state) {
  n4c_comm_t *comms[3] = {NULL, NULL, NULL};
  n4c_comm_t *sentinel = (n4c_comm_t *)&id0;
  int v;
  assert_int_equal(n4c_comm_init_all(NULL, 0, NULL), N4C_OK); /* LIFE-02: nothing */
  assert_int_equal(n4c_comm_init_all(comms, -1, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_init_all", "ndev is -1", NULL);
  assert_int_equal(n4c_comm_init_all(NULL, 2, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_init_all", "comms is NULL", NULL);
  int bad[2] = {0, -2};
  assert_int_equal(n4c_comm_init_all(comms, 2, bad), N4C_EINVAL);
  assert_msg("n4c_comm_init_all", "devlist[1] is -2", NULL);

  int devs[3] = {3, 1, 2};
  will_return(__wrap_ncclCommInitAll, ncclSuccess);
  assert_int_equal(n4c_comm_init_all(comms, 3, devs), N4C_OK);
  for (int i = 0; i < 3; i++) {
    mock_identity_ok();
    assert_int_equal(n4c_comm_rank(comms[i], &v), N4C_OK);
    assert_int_equal(v, i);
    assert_int_equal(n4c_comm_device(comms[i], &v), N4C_OK);
    assert_int_equal(v, devs[i]);
    will_return(__wrap_ncclCommDestroy, ncclSuccess);
    assert_int_equal(n4c_comm_free(comms[i]), N4C_OK);
  }
  will_return(__wrap_ncclCommInitAll, ncclSuccess);
  assert_int_equal(n4c_comm_init_all(comms, 2, NULL), N4C_OK);
  mock_identity_ok();
  assert_int_equal(n4c_comm_device(comms[1], &v), N4C_OK);
  assert_int_equal(v, 1);
  for (int i = 0; i < 2; i++) {
    will_return(__wrap_ncclCommDestroy, ncclSuccess);
    assert_int_equal(n4c_comm_free(comms[i]), N4C_OK);
  }

  comms[0] = comms[1] = comms[2] = sentinel;
  will_return(__wrap_ncclCommInitAll, ncclUnhandledCudaError);
  assert_int_equal(n4c_comm_init_all(comms, 3, NULL), N4C_ENCCL);
  assert_msg("n4c_comm_init_all", "ncclCommInitAll", NULL);
  assert_int_equal(n4c_last_nccl_result(), ncclUnhandledCudaError);
  for (int i = 0; i < 3; i++) assert_ptr_equal(comms[i], sentinel);
}

static void test_split(void **state) {
  n4c_comm_t *parent = mock_comm(4, 1, 2);
  n4c_comm_t *child = NULL;
  int v;
  assert_int_equal(n4c_comm_split(parent, 0, 0, NULL, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_split", "out is NULL", NULL);
  assert_int_equal(n4c_comm_split(parent, -5, 0, NULL, &child), N4C_EINVAL);
  assert_msg("n4c_comm_split", "color is -5", NULL);
  assert_int_equal(n4c_comm_split(NULL, 0, 0, NULL, &child), N4C_EINVAL);
  assert_msg("n4c_comm_split", "comm is NULL", NULL);

  /* NOCOLOR: NCCL is still called (collective), the child is null. */
  expect_value(__wrap_ncclCommSplit, color, N4C_SPLIT_NOCOLOR);
  will_return(__wrap_ncclCommSplit, ncclSuccess);
  assert_int_equal(n4c_comm_split(parent, N4C_SPLIT_NOCOLOR, 0, NULL, &child), N4C_OK);
  assert_non_null(child);
  assert_false(n4c_comm_is_valid(child));
  assert_null(n4c_comm_handle(child));
  assert_int_equal(n4c_comm_rank(child, &v), N4C_EINVAL);
  assert_int_equal(n4c_comm_free(child), N4C_OK);

  expect_value(__wrap_ncclCommSplit, color, 7);
  will_return(__wrap_ncclCommSplit, ncclSuccess);
  assert_int_equal(n4c_comm_split(parent, 7, 3, NULL, &child), N4C_OK);
  assert_true(n4c_comm_is_valid(child));
  mock_identity_ok();
  assert_int_equal(n4c_comm_device(child, &v), N4C_OK);
  assert_int_equal(v, 2);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(child), N4C_OK);

  n4c_comm_t *keep = (n4c_comm_t *)&id0;
  child = keep;
  expect_value(__wrap_ncclCommSplit, color, 1);
  will_return(__wrap_ncclCommSplit, ncclInvalidUsage);
  assert_int_equal(n4c_comm_split(parent, 1, 0, NULL, &child), N4C_ENCCL);
  assert_ptr_equal(child, keep);
  assert_msg("n4c_comm_split", "ncclCommSplit", ncclGetErrorString(ncclInvalidUsage));

  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(parent), N4C_OK);
  assert_int_equal(n4c_comm_split(parent, 0, 0, NULL, &child), N4C_EINVAL);
  assert_msg("n4c_comm_split", "comm is destroyed", NULL);
  assert_int_equal(n4c_comm_free(parent), N4C_OK);
}

/* LIFE-04: each teardown twice; the second is a no-op (nothing queued). */
static void test_teardown_twice(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_false(n4c_comm_is_valid(comm));
  assert_null(n4c_comm_handle(comm));
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommAbort, ncclSuccess);
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_false(n4c_comm_is_valid(comm));
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommFinalize, ncclSuccess);
  assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  assert_false(n4c_comm_is_valid(comm));
  assert_null(n4c_comm_handle(comm));
  assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  int v;
  assert_int_equal(n4c_comm_rank(comm, &v), N4C_EINVAL);
  assert_msg("n4c_comm_rank", "comm is finalized", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess); /* still frees the NCCL comm */
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0); /* free after finalize destroys */
  will_return(__wrap_ncclCommFinalize, ncclSuccess);
  assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_teardown_failures(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommDestroy, ncclInternalError);
  assert_int_equal(n4c_comm_destroy(comm), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInternalError);
  assert_msg("n4c_comm_destroy", "ncclCommDestroy", ncclGetErrorString(ncclInternalError));
  assert_false(n4c_comm_is_valid(comm));
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommAbort, ncclRemoteError);
  assert_int_equal(n4c_comm_abort(comm), N4C_ENCCL);
  assert_msg("n4c_comm_abort", "ncclCommAbort", NULL);
  assert_false(n4c_comm_is_valid(comm));
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0);
  will_return(__wrap_ncclCommFinalize, ncclSystemError);
  assert_int_equal(n4c_comm_finalize(comm), N4C_ENCCL);
  assert_msg("n4c_comm_finalize", "ncclCommFinalize", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);

  comm = mock_comm(2, 0, 0); /* free reports the destroy's failure, frees anyway */
  will_return(__wrap_ncclCommDestroy, ncclInvalidUsage);
  assert_int_equal(n4c_comm_free(comm), N4C_ENCCL);
  assert_msg("n4c_comm_free", "ncclCommDestroy", NULL);
}

static void test_status_methods(void **state) {
  n4c_comm_t *comm = mock_comm(2, 1, 0);
  ncclResult_t r;
  const char *s = NULL;
  uint64_t u = 0;
  assert_int_equal(n4c_comm_get_async_error(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_get_async_error", "out is NULL", NULL);
  mock_async = ncclRemoteError;
  will_return(__wrap_ncclCommGetAsyncError, ncclSuccess);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_OK);
  assert_int_equal(r, ncclRemoteError);
  mock_async = ncclSuccess;
  will_return(__wrap_ncclCommGetAsyncError, ncclInvalidArgument);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_ENCCL);
  assert_msg("n4c_comm_get_async_error", "ncclCommGetAsyncError", NULL);

  assert_int_equal(n4c_comm_last_error(comm, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_last_error", "out is NULL", NULL);
  assert_int_equal(n4c_comm_last_error(comm, &s), N4C_OK);
  assert_string_equal(s, "mock: last warning");

  assert_int_equal(n4c_comm_mem_stat(comm, (n4c_mem_stat_t)7, &u), N4C_EINVAL);
  assert_msg("n4c_comm_mem_stat", "stat is 7", NULL);
  assert_int_equal(n4c_comm_mem_stat(comm, (n4c_mem_stat_t)-1, &u), N4C_EINVAL);
  assert_msg("n4c_comm_mem_stat", "stat is -1", NULL);
  assert_int_equal(n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_TOTAL, NULL), N4C_EINVAL);
  assert_msg("n4c_comm_mem_stat", "out is NULL", NULL);
#if HAVE_DECL_NCCLCOMMMEMSTATS
  expect_value(__wrap_ncclCommMemStats, stat, 3);
  will_return(__wrap_ncclCommMemStats, ncclSuccess);
  assert_int_equal(n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_TOTAL, &u), N4C_OK);
  assert_int_equal(u, 4096);
  expect_value(__wrap_ncclCommMemStats, stat, 1);
  will_return(__wrap_ncclCommMemStats, ncclInternalError);
  assert_int_equal(n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_SUSPENDED, &u), N4C_ENCCL);
  assert_msg("n4c_comm_mem_stat", "ncclCommMemStats", NULL);
#else
  assert_int_equal(n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_TOTAL, &u), N4C_ENOTSUP);
  assert_msg("n4c_comm_mem_stat", "not supported by the linked NCCL 2.", NULL);
#endif
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_comm_get_async_error(comm, &r), N4C_EINVAL);
  assert_msg("n4c_comm_get_async_error", "comm is destroyed", NULL);
  assert_int_equal(n4c_comm_last_error(comm, &s), N4C_EINVAL);
  assert_msg("n4c_comm_last_error", "comm is destroyed", NULL);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_groups(void **state) {
  double t = -1;
  will_return(__wrap_ncclGroupStart, ncclSuccess);
  assert_int_equal(n4c_group_start(), N4C_OK);
  will_return(__wrap_ncclGroupEnd, ncclSuccess);
  assert_int_equal(n4c_group_end(), N4C_OK);
  will_return(__wrap_ncclGroupStart, ncclInvalidUsage);
  assert_int_equal(n4c_group_start(), N4C_ENCCL);
  assert_msg("n4c_group_start", "ncclGroupStart", NULL);
  will_return(__wrap_ncclGroupEnd, ncclRemoteError);
  assert_int_equal(n4c_group_end(), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclRemoteError);
  assert_msg("n4c_group_end", "ncclGroupEnd", NULL);
  will_return(__wrap_ncclGroupEnd, ncclInProgress);
  assert_int_equal(n4c_group_end(), N4C_EINPROGRESS);
  assert_int_equal(n4c_group_simulate_end(NULL), N4C_EINVAL);
  assert_msg("n4c_group_simulate_end", "seconds is NULL", NULL);
  will_return(__wrap_ncclGroupSimulateEnd, ncclSuccess);
  assert_int_equal(n4c_group_simulate_end(&t), N4C_OK);
  assert_true(t == 0.25);
  will_return(__wrap_ncclGroupSimulateEnd, ncclInvalidUsage);
  assert_int_equal(n4c_group_simulate_end(&t), N4C_ENCCL);
  assert_msg("n4c_group_simulate_end", "ncclGroupSimulateEnd", NULL);
}

int main(void) {
#define T(f) cmocka_unit_test_teardown(f, check_leaks)
  const struct CMUnitTest tests[] = {
      T(test_null_communicator), T(test_null_pointers),   T(test_initialize_args),
      T(test_init_identity),     T(test_init_failure),    T(test_failure_with_handle), T(test_init_scalable),
      T(test_init_nonblocking),  T(test_identity_failures), T(test_init_all),
      T(test_split),             T(test_teardown_twice),  T(test_teardown_failures),
      T(test_status_methods),    T(test_groups),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
