/*
 * lib_rma.c — nccl4c's registered buffers, windows and one-sided calls
 * against mocked NCCL: every NCCL call a resource makes is made to fail
 * once (status, message, NCCL result), and afterwards no reference, fake
 * communicator or allocation of lib/ is left (assert_no_leaks; the
 * sanitizer build checks memory too).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "lib_mock.h"

/* The wraps of this file (tests/lib.mk: tests_lib_rma_tap_LDFLAGS). */
ncclResult_t __wrap_ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle);
ncclResult_t __wrap_ncclCommDeregister(const ncclComm_t comm, void *handle);
ncclResult_t __wrap_ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                           int flags);
ncclResult_t __wrap_ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
ncclResult_t __wrap_ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void **out);
ncclResult_t __wrap_ncclGetLsaDevicePointer(ncclWindow_t win, size_t offset, int lsa, void **out);
ncclResult_t __wrap_ncclGetPeerDevicePointer(ncclWindow_t win, size_t offset, int peer, void **out);
ncclResult_t __wrap_ncclGetLsaMultimemDevicePointer(ncclWindow_t win, size_t offset, void **out);
ncclResult_t __wrap_ncclSignal(int peer, int sig, int ctx, unsigned flags, ncclComm_t comm, cudaStream_t s);
ncclResult_t __wrap_ncclWaitSignal(int n, ncclWaitSignalDesc_t *d, ncclComm_t comm, cudaStream_t s);
ncclResult_t __wrap_ncclPutSignal(const void *buf, size_t count, ncclDataType_t dt, int peer,
                                  ncclWindow_t win, size_t off, int sig, int ctx, unsigned flags,
                                  ncclComm_t comm, cudaStream_t s);

static char fake_handle, fake_win_obj;
static int live_regs, live_wins; /* registered and not deregistered */

ncclResult_t __wrap_ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  check_expected(size);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *handle = &fake_handle, live_regs++;
  return r;
}
ncclResult_t __wrap_ncclCommDeregister(const ncclComm_t comm, void *handle) {
  ncclResult_t r = mock_type(ncclResult_t);
  live_regs--; /* NCCL drops it even when it reports an error */
  return r;
}
ncclResult_t __wrap_ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                           int flags) {
  check_expected(size);
  check_expected(flags);
  ncclResult_t r = mock_type(ncclResult_t);
  int give = mock_type(int); /* 1: a window, 0: NULL */
  *win = give ? (ncclWindow_t)&fake_win_obj : NULL;
  live_wins += give;
  return r;
}
ncclResult_t __wrap_ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  ncclResult_t r = mock_type(ncclResult_t);
  live_wins--;
  return r;
}
ncclResult_t __wrap_ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void **out) {
  ncclResult_t r = mock_type(ncclResult_t);
  *out = r == ncclSuccess ? &fake_handle : NULL;
  return r;
}
ncclResult_t __wrap_ncclGetLsaDevicePointer(ncclWindow_t win, size_t offset, int lsa, void **out) {
  ncclResult_t r = mock_type(ncclResult_t);
  *out = r == ncclSuccess ? &fake_handle : NULL;
  return r;
}
ncclResult_t __wrap_ncclGetPeerDevicePointer(ncclWindow_t win, size_t offset, int peer, void **out) {
  ncclResult_t r = mock_type(ncclResult_t);
  *out = r == ncclSuccess ? &fake_handle : NULL;
  return r;
}
ncclResult_t __wrap_ncclGetLsaMultimemDevicePointer(ncclWindow_t win, size_t offset, void **out) {
  *out = NULL;
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclSignal(int peer, int sig, int ctx, unsigned flags, ncclComm_t comm, cudaStream_t s) {
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclWaitSignal(int n, ncclWaitSignalDesc_t *d, ncclComm_t comm, cudaStream_t s) {
  check_expected(n);
  assert_int_equal(d[n - 1].opCnt, 3); /* the last descriptor, converted */
  assert_int_equal(d[n - 1].peer, 1);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclPutSignal(const void *buf, size_t count, ncclDataType_t dt, int peer,
                                  ncclWindow_t win, size_t off, int sig, int ctx, unsigned flags,
                                  ncclComm_t comm, cudaStream_t s) {
  check_expected(off);
  return mock_type(ncclResult_t);
}

static int check_leaks(void **state) {
  assert_int_equal(live_regs, 0);
  assert_int_equal(live_wins, 0);
  assert_no_leaks();
  return 0;
}

static void free_comm(n4c_comm_t *comm) {
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_buffer(void **state) {
  double data[100];
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_buffer_t b = n4c_buffer(data, 100, ncclFloat64, 0), wrong = n4c_buffer(data, 100, ncclFloat64, 1);
  n4c_buffer_reg_t *reg = (n4c_buffer_reg_t *)1;
  void *h;

  assert_int_equal(n4c_comm_register_buffer(comm, &wrong, &reg), N4C_EINVAL);
  assert_null(reg);
  assert_msg("n4c_comm_register_buffer", "buf", "device 1");
  /* Injected failure: N4C_ENCCL, result kept, nothing left. */
  expect_value(__wrap_ncclCommRegister, size, 800);
  will_return(__wrap_ncclCommRegister, ncclInvalidArgument);
  assert_int_equal(n4c_comm_register_buffer(comm, &b, &reg), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidArgument);
  assert_msg("n4c_comm_register_buffer", "ncclCommRegister", NULL);
  assert_null(reg);
  /* Success, then a failing deregistration: closed all the same. */
  expect_value(__wrap_ncclCommRegister, size, 800);
  will_return(__wrap_ncclCommRegister, ncclSuccess);
  assert_int_equal(n4c_comm_register_buffer(comm, &b, &reg), N4C_OK);
  assert_int_equal(n4c_buffer_reg_size(reg), 800);
  assert_int_equal(n4c_buffer_reg_handle(reg, &h), N4C_OK);
  assert_ptr_equal(h, &fake_handle);
  will_return(__wrap_ncclCommDeregister, ncclInternalError);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(reg)), N4C_ENCCL);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(reg)));
  assert_int_equal(n4c_buffer_reg_handle(reg, &h), N4C_ECLOSED);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(reg)), N4C_OK);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(reg)), N4C_OK);
  /* One left open: the communicator's destroy deregisters it. */
  expect_value(__wrap_ncclCommRegister, size, 800);
  will_return(__wrap_ncclCommRegister, ncclSuccess);
  assert_int_equal(n4c_comm_register_buffer(comm, &b, &reg), N4C_OK);
  will_return(__wrap_ncclCommDeregister, ncclSuccess);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(n4c_buffer_reg_handle(reg, &h), N4C_ECLOSED);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(reg)), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void expect_winreg(size_t size, int flags, ncclResult_t r, int give) {
  expect_value(__wrap_ncclCommWindowRegister, size, size);
  expect_value(__wrap_ncclCommWindowRegister, flags, flags);
  will_return(__wrap_ncclCommWindowRegister, r);
  will_return(__wrap_ncclCommWindowRegister, give);
}

static void test_window(void **state) {
  float data[64];
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_buffer_t b = n4c_buffer(data, 64, ncclFloat32, 0);
  n4c_window_t *w = (n4c_window_t *)1;
  void *p;

  assert_int_equal(n4c_comm_register_window(comm, &b, 4, &w), N4C_EINVAL);
  assert_msg("n4c_comm_register_window", "flags", NULL);
  expect_winreg(256, 1, ncclUnhandledCudaError, 0);
  assert_int_equal(n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &w), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclUnhandledCudaError);
  assert_null(w);
  expect_winreg(256, 0, ncclSuccess, 0); /* no windows here: None */
  assert_int_equal(n4c_comm_register_window(comm, &b, 0, &w), N4C_OK);
  assert_null(w);
  expect_winreg(256, 3, ncclSuccess, 1);
  assert_int_equal(n4c_comm_register_window(comm, &b, 3, &w), N4C_OK);
  assert_non_null(n4c_window_handle(w));
  assert_int_equal(n4c_window_size(w), 256);
  /* Each getter's NCCL failure, then success. */
  will_return(__wrap_ncclWinGetUserPtr, ncclInvalidArgument);
  assert_int_equal(n4c_window_user_ptr(w, &p), N4C_ENCCL);
  assert_msg("n4c_window_user_ptr", "ncclWinGetUserPtr", NULL);
  will_return(__wrap_ncclGetLsaDevicePointer, ncclInvalidArgument);
  assert_int_equal(n4c_window_lsa_ptr(w, 5, 0, &p), N4C_ENCCL);
  assert_null(p);
  will_return(__wrap_ncclGetPeerDevicePointer, ncclInvalidArgument);
  assert_int_equal(n4c_window_peer_ptr(w, 5, 0, &p), N4C_ENCCL);
  will_return(__wrap_ncclGetLsaMultimemDevicePointer, ncclInternalError);
  assert_int_equal(n4c_window_lsa_multimem_ptr(w, 0, &p), N4C_ENCCL);
  will_return(__wrap_ncclGetLsaMultimemDevicePointer, ncclSuccess);
  assert_int_equal(n4c_window_lsa_multimem_ptr(w, 0, &p), N4C_OK);
  assert_null(p);
  will_return(__wrap_ncclWinGetUserPtr, ncclSuccess);
  assert_int_equal(n4c_window_user_ptr(w, &p), N4C_OK);
  assert_int_equal(n4c_window_lsa_ptr(w, -1, 0, &p), N4C_EINVAL);
  /* Failing deregistration, then every getter is ECLOSED. */
  will_return(__wrap_ncclCommWindowDeregister, ncclInternalError);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(w)), N4C_ENCCL);
  assert_int_equal(n4c_window_user_ptr(w, &p), N4C_ECLOSED);
  assert_int_equal(n4c_window_lsa_ptr(w, 0, 0, &p), N4C_ECLOSED);
  assert_int_equal(n4c_window_peer_ptr(w, 0, 0, &p), N4C_ECLOSED);
  assert_int_equal(n4c_window_lsa_multimem_ptr(w, 0, &p), N4C_ECLOSED);
  assert_null(n4c_window_handle(w));
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(w)), N4C_OK);
  /* Aborting the communicator closes an open window. */
  expect_winreg(256, 1, ncclSuccess, 1);
  assert_int_equal(n4c_comm_register_window(comm, &b, 1, &w), N4C_OK);
  will_return(__wrap_ncclCommWindowDeregister, ncclSuccess);
  will_return(__wrap_ncclCommAbort, ncclSuccess);
  assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(w)));
  assert_int_equal(n4c_window_user_ptr(w, &p), N4C_ECLOSED);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(w)), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* Regression: on a non-blocking communicator, a registration NCCL refused
 * at once (here ncclInvalidUsage, as ncclsim refuses one across hosts) was
 * taken for one in progress: N4C_OK and a window that never filled. */
static void test_window_nonblocking_refused(void **state) {
  float data[64];
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  n4c_comm_t *comm = NULL;
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id, 1, &config), N4C_OK);
  mock_identity_ok();
  n4c_buffer_t b = n4c_buffer(data, 64, ncclFloat32, 0);
  n4c_window_t *w = (n4c_window_t *)1;
  expect_winreg(256, 1, ncclInvalidUsage, 0);
  assert_int_equal(n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &w), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidUsage);
  assert_msg("ncclCommWindowRegister", NULL, NULL);
  assert_null(w);
  /* In progress, it is still a window to be filled. */
  expect_winreg(256, 1, ncclInProgress, 0);
  assert_int_equal(n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &w), N4C_OK);
  assert_non_null(w);
  assert_null(n4c_window_handle(w));
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(w)), N4C_OK);
  free_comm(comm);
}

static void test_signals(void **state) {
  double data[16];
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_buffer_t b = n4c_buffer(data, 16, ncclFloat64, 0);
  n4c_window_t *w;
  n4c_wait_signal_desc_t d[2] = {N4C_WAIT_SIGNAL_DESC(0), N4C_WAIT_SIGNAL_DESC(1)};
  d[1].op_count = 3;

  assert_int_equal(n4c_comm_signal(comm, 2, 0, 0, 0, 0), N4C_EINVAL);
  assert_msg("n4c_comm_signal", "peer", NULL);
  will_return(__wrap_ncclSignal, ncclInvalidArgument);
  assert_int_equal(n4c_comm_signal(comm, 1, 1, 0, 0, 0), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidArgument);
  assert_int_equal(n4c_comm_wait_signal(comm, d, 0, 0), N4C_EINVAL);
  d[0].op_count = 0;
  assert_int_equal(n4c_comm_wait_signal(comm, d, 2, 0), N4C_EINVAL);
  assert_msg("descs[0].op_count", NULL, NULL);
  d[0].op_count = 1;
  expect_value(__wrap_ncclWaitSignal, n, 2);
  will_return(__wrap_ncclWaitSignal, ncclInternalError);
  assert_int_equal(n4c_comm_wait_signal(comm, d, 2, 0), N4C_ENCCL);
  expect_value(__wrap_ncclWaitSignal, n, 2);
  will_return(__wrap_ncclWaitSignal, ncclSuccess);
  assert_int_equal(n4c_comm_wait_signal(comm, d, 2, 0), N4C_OK);

  assert_int_equal(n4c_comm_put_signal(comm, &b, 1, NULL, 0, 0, 0, 0, 0), N4C_EINVAL);
  assert_msg("n4c_comm_put_signal", "peer_window", NULL);
  expect_winreg(128, 1, ncclSuccess, 1);
  assert_int_equal(n4c_comm_register_window(comm, &b, 1, &w), N4C_OK);
  expect_value(__wrap_ncclPutSignal, off, 5 * 8); /* elements of float64 -> bytes */
  will_return(__wrap_ncclPutSignal, ncclSuccess);
  assert_int_equal(n4c_comm_put_signal(comm, &b, 1, w, 5, 0, 0, 0, 0), N4C_OK);
  expect_value(__wrap_ncclPutSignal, off, 0);
  will_return(__wrap_ncclPutSignal, ncclInternalError);
  assert_int_equal(n4c_comm_put_signal(comm, &b, 1, w, 0, 0, 0, 0, 0), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInternalError);
  assert_int_equal(n4c_comm_put_signal(comm, &b, 1, w, SIZE_MAX / 4, 0, 0, 0, 0), N4C_EINVAL);
  will_return(__wrap_ncclCommWindowDeregister, ncclSuccess);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(w)), N4C_OK);
  assert_int_equal(n4c_comm_put_signal(comm, &b, 1, w, 0, 0, 0, 0, 0), N4C_EINVAL);
  assert_msg("peer_window is closed", NULL, NULL);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(w)), N4C_OK);
  free_comm(comm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_buffer, check_leaks),
      cmocka_unit_test_teardown(test_window, check_leaks),
      cmocka_unit_test_teardown(test_window_nonblocking_refused, check_leaks),
      cmocka_unit_test_teardown(test_signals, check_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
