/*
 * lib_errors.c — status texts, the thread-local error state, dtypes and
 * buffers.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "lib_mock.h"

static void test_status_table(void **state) {
  static const n4c_status_t all[] = {N4C_OK,     N4C_EINVAL, N4C_ECLOSED, N4C_ENCCL,
                                     N4C_ECUDA,  N4C_ENOTSUP, N4C_ENOMEM, N4C_EINPROGRESS};
  size_t n = sizeof all / sizeof all[0];
  assert_int_equal(N4C_OK, 0);
  for (size_t i = 0; i < n; i++) {
    assert_non_null(n4c_strerror(all[i]));
    assert_true(strlen(n4c_strerror(all[i])) > 0);
    assert_true(strncmp(n4c_status_name(all[i]), "N4C_", 4) == 0);
    for (size_t j = 0; j < i; j++) {
      assert_int_not_equal(all[i], all[j]);
      assert_string_not_equal(n4c_strerror(all[i]), n4c_strerror(all[j]));
    }
  }
  assert_string_equal(n4c_status_name(N4C_EINVAL), "N4C_EINVAL");
  assert_string_equal(n4c_strerror((n4c_status_t)99), "unknown status");
  assert_string_equal(n4c_status_name((n4c_status_t)-1), "N4C_UNKNOWN");
}

static void test_dtypes(void **state) {
  static const struct { ncclDataType_t dt; size_t size; const char *name; } t[] = {
      {ncclInt8, 1, "int8"},         {ncclUint8, 1, "uint8"},
      {ncclInt32, 4, "int32"},       {ncclUint32, 4, "uint32"},
      {ncclInt64, 8, "int64"},       {ncclUint64, 8, "uint64"},
      {ncclFloat16, 2, "float16"},   {ncclFloat32, 4, "float32"},
      {ncclFloat64, 8, "float64"},   {ncclBfloat16, 2, "bfloat16"},
      {ncclFloat8e4m3, 1, "float8_e4m3"}, {ncclFloat8e5m2, 1, "float8_e5m2"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    assert_int_equal(n4c_dtype_size(t[i].dt), t[i].size);
    assert_string_equal(n4c_dtype_name(t[i].dt), t[i].name);
  }
  assert_int_equal(n4c_dtype_size(ncclNumTypes), 0);
  assert_int_equal(n4c_dtype_size((ncclDataType_t)-1), 0);
  assert_null(n4c_dtype_name(ncclNumTypes));
  assert_null(n4c_dtype_name((ncclDataType_t)-1));
}

static void test_buffer(void **state) {
  int x;
  n4c_buffer_t b = n4c_buffer(&x, 1, ncclInt32, 3);
  assert_ptr_equal(b.ptr, &x);
  assert_int_equal(b.count, 1);
  assert_int_equal(b.dtype, ncclInt32);
  assert_int_equal(b.device, 3);
}

/* An NCCL failure: N4C_ENCCL, the result kept, the message names the op,
 * the NCCL function and NCCL's text. */
static void test_nccl_failure_state(void **state) {
  ncclUniqueId id;
  assert_int_equal(n4c_get_unique_id(NULL), N4C_EINVAL);
  assert_msg("n4c_get_unique_id", "out is NULL", NULL);
  will_return(__wrap_ncclGetUniqueId, ncclSystemError);
  assert_int_equal(n4c_get_unique_id(&id), N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), ncclSystemError);
  assert_msg("n4c_get_unique_id", "ncclGetUniqueId", ncclGetErrorString(ncclSystemError));
  will_return(__wrap_ncclGetUniqueId, ncclSuccess);
  assert_int_equal(n4c_get_unique_id(&id), N4C_OK);
  assert_int_equal((unsigned char)id.internal[0], 0x5a);
}

static void *other_thread(void *arg) {
  (void)arg;
  /* Fresh thread: no message, no NCCL result. */
  return (void *)(size_t)(n4c_last_error_message()[0] == '\0' &&
                          n4c_last_nccl_result() == ncclSuccess);
}

static void test_thread_local(void **state) {
  assert_int_equal(n4c_comm_new(NULL), N4C_EINVAL);
  will_return(__wrap_ncclGetUniqueId, ncclInternalError);
  ncclUniqueId id;
  assert_int_equal(n4c_get_unique_id(&id), N4C_ENCCL);
  pthread_t t;
  void *ok = NULL;
  assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
  assert_int_equal(pthread_join(t, &ok), 0);
  assert_true(ok != NULL);
  assert_msg("n4c_get_unique_id", NULL, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_table),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_buffer),
      cmocka_unit_test(test_nccl_failure_state),
      cmocka_unit_test(test_thread_local),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
