/*
 * lib_p2p.c — send and recv: every argument check (the message names the
 * operation, the argument and its value) and the NCCL failure paths.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib_mock.h"

typedef n4c_status_t (*p2p_fn)(n4c_comm_t *, const n4c_buffer_t *, int, cudaStream_t);

typedef struct {
  p2p_fn fn;
  const char *op, *arg, *nccl;
  int is_send;
} p2p_case;

static const p2p_case send_case = {n4c_comm_send, "n4c_comm_send", "sendbuf", "ncclSend", 1};
static const p2p_case recv_case = {n4c_comm_recv, "n4c_comm_recv", "recvbuf", "ncclRecv", 0};

static int check_leaks(void **state) {
  assert_no_leaks();
  return 0;
}

static void expect_call(const p2p_case *c, void *ptr, size_t count, ncclDataType_t dt, int peer,
                        ncclResult_t r) {
  if (c->is_send) {
    expect_value(__wrap_ncclSend, buf, ptr);
    expect_value(__wrap_ncclSend, count, count);
    expect_value(__wrap_ncclSend, dt, dt);
    expect_value(__wrap_ncclSend, peer, peer);
    will_return(__wrap_ncclSend, r);
  } else {
    expect_value(__wrap_ncclRecv, buf, ptr);
    expect_value(__wrap_ncclRecv, count, count);
    expect_value(__wrap_ncclRecv, dt, dt);
    expect_value(__wrap_ncclRecv, peer, peer);
    will_return(__wrap_ncclRecv, r);
  }
}

/* A rejected call: N4C_EINVAL, the message holds the fragments, no NCCL
 * call (nothing is queued). */
static void rejected(const p2p_case *c, n4c_comm_t *comm, const n4c_buffer_t *b, int peer,
                     const char *f1, const char *f2) {
  assert_int_equal(c->fn(comm, b, peer, 0), N4C_EINVAL);
  assert_msg(c->op, f1, f2);
}

static void run_checks(const p2p_case *c) {
  char frag[128];
  float data[8];
  n4c_comm_t *comm = mock_comm(4, 1, 0);
  n4c_buffer_t b = n4c_buffer(data, 8, ncclFloat32, 0);

  rejected(c, NULL, &b, 0, "comm is NULL", NULL);
  rejected(c, comm, NULL, 0, c->arg, "is NULL");
  n4c_buffer_t bad = b;
  bad.dtype = (ncclDataType_t)12;
  snprintf(frag, sizeof frag, "%s.dtype is 12", c->arg);
  rejected(c, comm, &bad, 0, frag, NULL);
  bad.dtype = (ncclDataType_t)-1;
  snprintf(frag, sizeof frag, "%s.dtype is -1", c->arg);
  rejected(c, comm, &bad, 0, frag, NULL);
  bad = n4c_buffer(NULL, 5, ncclInt8, 0);
  snprintf(frag, sizeof frag, "%s.ptr is NULL, but %s.count is 5", c->arg, c->arg);
  rejected(c, comm, &bad, 0, frag, NULL);
  bad = n4c_buffer(data, SIZE_MAX / 2, ncclInt32, 0);
  snprintf(frag, sizeof frag, "%s.count is %zu", c->arg, (size_t)(SIZE_MAX / 2));
  rejected(c, comm, &bad, 0, frag, "int32");
  bad = n4c_buffer(data, 8, ncclFloat32, 1);
  snprintf(frag, sizeof frag, "%s is on device 1, but communicator is on device 0", c->arg);
  rejected(c, comm, &bad, 0, frag, NULL);
  rejected(c, comm, &b, -1, "peer is -1, but nranks is 4", NULL);
  rejected(c, comm, &b, 4, "peer is 4, but nranks is 4", NULL);
  rejected(c, comm, &b, 7, "peer is 7, but nranks is 4", NULL);

  /* Accepted: arguments reach NCCL unchanged. Zero elements at NULL too. */
  expect_call(c, data, 8, ncclFloat32, 3, ncclSuccess);
  assert_int_equal(c->fn(comm, &b, 3, 0), N4C_OK);
  n4c_buffer_t empty = n4c_buffer(NULL, 0, ncclBfloat16, 0);
  expect_call(c, NULL, 0, ncclBfloat16, 0, ncclSuccess);
  assert_int_equal(c->fn(comm, &empty, 0, 0), N4C_OK);

  /* NCCL failures. */
  expect_call(c, data, 8, ncclFloat32, 2, ncclInvalidUsage);
  assert_int_equal(c->fn(comm, &b, 2, 0), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclInvalidUsage);
  assert_msg(c->op, c->nccl, ncclGetErrorString(ncclInvalidUsage));
  expect_call(c, data, 8, ncclFloat32, 2, ncclInProgress);
  assert_int_equal(c->fn(comm, &b, 2, 0), N4C_EINPROGRESS);

  /* Destroyed and null communicators. */
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  rejected(c, comm, &b, 0, "comm is destroyed", NULL);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
  assert_int_equal(n4c_comm_new(&comm), N4C_OK);
  rejected(c, comm, &b, 0, "comm is a null communicator", NULL);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_send_checks(void **state) { run_checks(&send_case); }
static void test_recv_checks(void **state) { run_checks(&recv_case); }

/* The first buffer check reads the device from NCCL; its failure is
 * reported under the send's name. */
static void test_identity_failure(void **state) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  n4c_comm_t *comm;
  int x = 0;
  n4c_buffer_t b = n4c_buffer(&x, 1, ncclInt32, 0);
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id, 1, NULL), N4C_OK);
  will_return(__wrap_ncclCommCount, ncclSystemError);
  assert_int_equal(n4c_comm_send(comm, &b, 1, 0), N4C_ENCCL);
  assert_msg("n4c_comm_send", "ncclCommCount", NULL);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_send_checks, check_leaks),
      cmocka_unit_test_teardown(test_recv_checks, check_leaks),
      cmocka_unit_test_teardown(test_identity_failure, check_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
