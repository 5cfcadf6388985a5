/*
 * lib_dlpack.c — n4c_buffer_from_dlpack's validation: every rejected
 * tensor gets N4C_EINVAL and a message naming what is wrong, and leaves
 * *out alone. Includes the regressions for two fuzzer findings: a
 * byte_offset that wrapped the data pointer, and a C/F-order check that
 * overflowed int64_t on a huge extent.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "lib_mock.h"

static int64_t shape[4], strides[4];

/* A valid 2 x 3 float32 C-order tensor at a fake device address. */
static DLTensor tensor(void) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)(uintptr_t)0x10000;
  t.device.device_type = kDLCUDA;
  t.device.device_id = 1;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  shape[0] = 2, shape[1] = 3;
  t.shape = shape;
  t.strides = NULL;
  return t;
}

/* t is rejected with N4C_EINVAL, a message containing `want`, and *out
 * untouched. */
static void rejects(const DLTensor *t, const char *want) {
  n4c_buffer_t out = {(void *)1, 77, ncclInt8, 9};
  assert_int_equal(n4c_buffer_from_dlpack(t, &out), N4C_EINVAL);
  const char *msg = n4c_last_error_message();
  if (!strstr(msg, want)) fail_msg("message \"%s\" lacks \"%s\"", msg, want);
  assert_true(out.ptr == (void *)1 && out.count == 77 && out.dtype == ncclInt8 && out.device == 9);
}

static void test_resolves(void **state) {
  DLTensor t = tensor();
  n4c_buffer_t b;
  t.byte_offset = 64;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  assert_ptr_equal(b.ptr, (char *)t.data + 64);
  assert_int_equal(b.count, 6);
  assert_int_equal(b.dtype, ncclFloat32);
  assert_int_equal(b.device, 1);
  /* Dense strides in C order, then in F order. */
  t.strides = strides;
  strides[0] = 3, strides[1] = 1;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  strides[0] = 1, strides[1] = 2;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  /* A scalar (ndim 0) is one element; an empty tensor may have no data. */
  t.ndim = 0;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  assert_int_equal(b.count, 1);
  t = tensor();
  shape[1] = 0;
  t.data = NULL;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  assert_null(b.ptr);
  assert_int_equal(b.count, 0);
}

static void test_rejects_arguments(void **state) {
  DLTensor t = tensor();
  n4c_buffer_t b;
  assert_int_equal(n4c_buffer_from_dlpack(NULL, &b), N4C_EINVAL);
  assert_non_null(strstr(n4c_last_error_message(), "tensor"));
  assert_int_equal(n4c_buffer_from_dlpack(&t, NULL), N4C_EINVAL);
  assert_non_null(strstr(n4c_last_error_message(), "out"));
  t.ndim = -1;
  rejects(&t, "ndim is -1");
  t = tensor();
  t.shape = NULL;
  rejects(&t, "shape is NULL");
  t = tensor();
  t.device.device_type = kDLCPU;
  rejects(&t, "not kDLCUDA");
  t = tensor();
  t.device.device_id = -2;
  rejects(&t, "device_id is -2");
  t = tensor();
  t.dtype.lanes = 4;
  rejects(&t, "lanes 4");
  t = tensor();
  t.dtype.code = kDLComplex;
  rejects(&t, "no NCCL equivalent");
  t = tensor();
  shape[1] = -3;
  rejects(&t, "shape[1] is -3");
  t = tensor();
  t.strides = strides;
  strides[0] = 1, strides[1] = 1;
  rejects(&t, "not contiguous");
  t = tensor();
  t.data = NULL;
  rejects(&t, "data is NULL");
}

/* Fuzzer finding: 4 x 2394223218007536808 elements fits size_t but not
 * int64_t, and the C-order check multiplied the extents in int64_t
 * (UBSan: signed overflow). Such a tensor cannot be described by DLPack's
 * int64_t strides: it is rejected, strides or not. */
static void test_rejects_huge_extents(void **state) {
  DLTensor t = tensor();
  shape[0] = 4, shape[1] = 2394223218007536808;
  rejects(&t, "shape[1] is 2394223218007536808");
  t.strides = strides;
  strides[0] = 2394223218007536808, strides[1] = 1;
  rejects(&t, "shape[1]");
  /* Under INT64_MAX elements, but past SIZE_MAX bytes of float64. */
  t = tensor();
  t.ndim = 1;
  shape[0] = INT64_MAX / 2;
  t.dtype.bits = 64;
  rejects(&t, "size in bytes overflows");
}

/* Fuzzer finding: data + byte_offset wrapped around the address space
 * (UBSan: pointer overflow), and the wrapped pointer was returned. */
static void test_rejects_wrapping_offset(void **state) {
  DLTensor t = tensor();
  t.byte_offset = UINT64_MAX - 1;
  rejects(&t, "byte_offset 18446744073709551614");
  /* C pointer arithmetic spans PTRDIFF_MAX bytes at most. */
  t.byte_offset = (uintptr_t)PTRDIFF_MAX - (uintptr_t)t.data - 8; /* 8 bytes left; 24 wanted */
  rejects(&t, "past the end of the address space");
  t.byte_offset = (uintptr_t)PTRDIFF_MAX - (uintptr_t)t.data - 24; /* exactly fits */
  n4c_buffer_t b;
  assert_int_equal(n4c_buffer_from_dlpack(&t, &b), N4C_OK);
  t = tensor();
  t.data = NULL;
  shape[1] = 0;
  t.byte_offset = 8;
  rejects(&t, "data is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resolves),
      cmocka_unit_test(test_rejects_arguments),
      cmocka_unit_test(test_rejects_huge_extents),
      cmocka_unit_test(test_rejects_wrapping_offset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
