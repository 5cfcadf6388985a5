/*
 * lib_alloc.c — allocation failure: every allocation that creating a
 * communicator makes is failed in turn. Each must give N4C_ENOMEM, leak
 * nothing, and happen before NCCL is called (no NCCL call is queued).
 */
#include "config.h"

#include <string.h>

#include "lib_mock.h"
#include "n4c_test.h"

static ncclUniqueId id0;

static int check_leaks(void **state) {
  n4c_test_alloc_fail_after(0);
  assert_no_leaks();
  return 0;
}

static void destroy_all(n4c_comm_t **c, int n) {
  for (int i = 0; i < n; i++) {
    will_return(__wrap_ncclCommDestroy, ncclSuccess);
    assert_int_equal(n4c_comm_free(c[i]), N4C_OK);
  }
}

static void test_new(void **state) {
  n4c_comm_t *comm = NULL;
  n4c_test_alloc_fail_after(1);
  assert_int_equal(n4c_comm_new(&comm), N4C_ENOMEM);
  assert_msg("n4c_comm_new", "out of memory", NULL);
  assert_null(comm);
}

static void test_init(void **state) {
  n4c_comm_t *comm = (n4c_comm_t *)&id0;
  n4c_test_alloc_fail_after(0);
  will_return(__wrap_ncclCommInitRankConfig, ncclSuccess);
  assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, NULL), N4C_OK);
  uint64_t n = n4c_test_alloc_fail_after(0);
  assert_true(n >= 1);
  destroy_all(&comm, 1);
  for (uint64_t k = 1; k <= n; k++) {
    n4c_test_alloc_fail_after(k);
    assert_int_equal(n4c_comm_init(&comm, 2, 0, &id0, 1, NULL), N4C_ENOMEM);
    assert_msg("n4c_comm_init", "out of memory", NULL);
    assert_null(comm);
    assert_no_leaks();
  }
}

static void test_init_all(void **state) {
  n4c_comm_t *comms[4];
  n4c_test_alloc_fail_after(0);
  will_return(__wrap_ncclCommInitAll, ncclSuccess);
  assert_int_equal(n4c_comm_init_all(comms, 4, NULL), N4C_OK);
  uint64_t n = n4c_test_alloc_fail_after(0);
  assert_true(n >= 4);
  destroy_all(comms, 4);
  for (uint64_t k = 1; k <= n; k++) {
    memset(comms, 0, sizeof comms);
    n4c_test_alloc_fail_after(k);
    assert_int_equal(n4c_comm_init_all(comms, 4, NULL), N4C_ENOMEM);
    assert_msg("n4c_comm_init_all", "out of memory", NULL);
    for (int i = 0; i < 4; i++) assert_null(comms[i]);
    assert_no_leaks();
  }
}

static void test_split(void **state) {
  n4c_comm_t *parent = mock_comm(2, 0, 0);
  n4c_comm_t *child = NULL;
  n4c_test_alloc_fail_after(0);
  expect_value(__wrap_ncclCommSplit, color, 0);
  will_return(__wrap_ncclCommSplit, ncclSuccess);
  assert_int_equal(n4c_comm_split(parent, 0, 0, NULL, &child), N4C_OK);
  uint64_t n = n4c_test_alloc_fail_after(0);
  destroy_all(&child, 1);
  for (uint64_t k = 1; k <= n; k++) {
    child = NULL;
    n4c_test_alloc_fail_after(k);
    assert_int_equal(n4c_comm_split(parent, 0, 0, NULL, &child), N4C_ENOMEM);
    assert_msg("n4c_comm_split", "out of memory", NULL);
    assert_null(child);
  }
  destroy_all(&parent, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_new, check_leaks),
      cmocka_unit_test_teardown(test_init, check_leaks),
      cmocka_unit_test_teardown(test_init_all, check_leaks),
      cmocka_unit_test_teardown(test_split, check_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
