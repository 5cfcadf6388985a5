/*
 * lib_mem.c — n4c_mem_alloc on a device other than the current one
 * (lib/mem.c): it makes the device current for ncclMemAlloc and makes the
 * previous one current again. cudaSetDevice is wrapped (tests/lib.mk), so
 * each of the two switches can be made to fail: the status, the message,
 * which NCCL calls were made, and that nothing is left allocated.
 * ncclMemAlloc and ncclMemFree are wrapped too: live_mem counts what they
 * handed out and did not take back.
 */
#include "config.h"

#include <stdlib.h>

#include "lib_mock.h"
#include "n4c_test.h"

/* The wraps of this file (tests/lib.mk: tests_lib_mem_tap_LDFLAGS). */
cudaError_t __wrap_cudaSetDevice(int device);
ncclResult_t __wrap_ncclMemAlloc(void **ptr, size_t size);
ncclResult_t __wrap_ncclMemFree(void *ptr);

static int live_mem; /* handed out by the ncclMemAlloc wrap, not freed */

/* Changes no device: the test says which device each call names and what
 * it returns. */
cudaError_t __wrap_cudaSetDevice(int device) {
  check_expected(device);
  return mock_type(cudaError_t);
}

ncclResult_t __wrap_ncclMemAlloc(void **ptr, size_t size) {
  check_expected(size);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) {
    *ptr = malloc(size);
    assert_non_null(*ptr);
    live_mem++;
  }
  return r;
}

ncclResult_t __wrap_ncclMemFree(void *ptr) {
  assert_non_null(ptr);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) free(ptr), live_mem--;
  return r;
}

static int check_leaks(void **state) {
  (void)state;
  assert_int_equal(live_mem, 0);
  assert_no_leaks();
  return 0;
}

/* The device current now, and another one to allocate on. */
static void devices(int *cur, int *other) {
  assert_int_equal(cudaGetDevice(cur), cudaSuccess);
  *other = *cur + 1;
}

/* Both switches succeed: the memory comes back, made on `other`, and the
 * current device is restored. */
static void test_other_device(void **state) {
  (void)state;
  int cur, other;
  void *p = NULL;
  devices(&cur, &other);
  expect_value(__wrap_cudaSetDevice, device, other);
  will_return(__wrap_cudaSetDevice, cudaSuccess);
  expect_value(__wrap_ncclMemAlloc, size, 64);
  will_return(__wrap_ncclMemAlloc, ncclSuccess);
  expect_value(__wrap_cudaSetDevice, device, cur);
  will_return(__wrap_cudaSetDevice, cudaSuccess);
  assert_int_equal(n4c_mem_alloc(64, other, &p), N4C_OK);
  assert_non_null(p);
  assert_int_equal(live_mem, 1);
  will_return(__wrap_ncclMemFree, ncclSuccess);
  assert_int_equal(n4c_mem_free(p), N4C_OK);
}

/* The switch to `other` fails: N4C_ECUDA naming cudaSetDevice, and
 * ncclMemAlloc is never called (nothing is queued for it). */
static void test_switch_fails(void **state) {
  (void)state;
  int cur, other;
  char sentinel;
  void *p = &sentinel;
  devices(&cur, &other);
  expect_value(__wrap_cudaSetDevice, device, other);
  will_return(__wrap_cudaSetDevice, cudaErrorInvalidDevice);
  assert_int_equal(n4c_mem_alloc(64, other, &p), N4C_ECUDA);
  assert_msg("n4c_mem_alloc", "cudaSetDevice failed", NULL);
  assert_ptr_equal(p, &sentinel); /* *out untouched */
}

/* The memory was made but the previous device cannot be made current
 * again: the allocation is freed (ncclMemFree is called, live_mem back to
 * 0), *out is untouched, and the failure is the restore's: N4C_ECUDA
 * naming cudaSetDevice. */
static void test_restore_fails_after_alloc(void **state) {
  (void)state;
  int cur, other;
  char sentinel;
  void *p = &sentinel;
  devices(&cur, &other);
  expect_value(__wrap_cudaSetDevice, device, other);
  will_return(__wrap_cudaSetDevice, cudaSuccess);
  expect_value(__wrap_ncclMemAlloc, size, 64);
  will_return(__wrap_ncclMemAlloc, ncclSuccess);
  expect_value(__wrap_cudaSetDevice, device, cur);
  will_return(__wrap_cudaSetDevice, cudaErrorInvalidDevice);
  will_return(__wrap_ncclMemFree, ncclSuccess);
  assert_int_equal(n4c_mem_alloc(64, other, &p), N4C_ECUDA);
  assert_msg("n4c_mem_alloc", "cudaSetDevice failed", NULL);
  assert_ptr_equal(p, &sentinel);
  assert_int_equal(live_mem, 0);
}

/* ncclMemAlloc fails and so does the restore: NCCL's failure is the
 * status (N4C_ENCCL, its result kept), and the message adds the restore's. */
static void test_alloc_and_restore_fail(void **state) {
  (void)state;
  int cur, other;
  char sentinel;
  void *p = &sentinel;
  devices(&cur, &other);
  expect_value(__wrap_cudaSetDevice, device, other);
  will_return(__wrap_cudaSetDevice, cudaSuccess);
  expect_value(__wrap_ncclMemAlloc, size, 64);
  will_return(__wrap_ncclMemAlloc, ncclSystemError);
  expect_value(__wrap_cudaSetDevice, device, cur);
  will_return(__wrap_cudaSetDevice, cudaErrorInvalidDevice);
  assert_int_equal(n4c_mem_alloc(64, other, &p), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclSystemError);
  assert_msg("ncclMemAlloc", "then cudaSetDevice", "to restore the current device failed");
  assert_ptr_equal(p, &sentinel);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_other_device, check_leaks),
      cmocka_unit_test_teardown(test_switch_fails, check_leaks),
      cmocka_unit_test_teardown(test_restore_fails_after_alloc, check_leaks),
      cmocka_unit_test_teardown(test_alloc_and_restore_fail, check_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
