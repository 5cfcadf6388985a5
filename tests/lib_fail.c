/*
 * lib_fail.c — the NCCL call sites of lib/ that the other CMocka tests do
 * not wrap: the collectives (coll.c), PreMulSum ops (redop.c), ncclMemAlloc
 * / ncclMemFree (mem.c, dlpack.c) and device communicators (devcomm.c).
 * Each call is made to fail once (status N4C_ENCCL, the NCCL result, a
 * message naming both functions) and to succeed once, which proves the
 * wrap is reached; afterwards no fake NCCL object, fake communicator or
 * allocation of lib/ is left (check_leaks; the sanitizer build checks
 * memory too).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib_mock.h"
#include "n4c_test.h"

/* The dev comm test reads ncclsim's ncclDevComm; lib/ needs its C++ bridge. */
#if defined(NCCLSIM) && defined(HAVE_NCCL_DEVCOMM)
#define TEST_DEV_COMM 1
#include <nccl_device.h>
#endif

/* The wraps of this file (tests/lib.mk: tests_lib_fail_tap_LDFLAGS). */
ncclResult_t __wrap_ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                                  ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                               int root, ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
                                  cudaStream_t st);
ncclResult_t __wrap_ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t dt,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
                                 cudaStream_t st);
ncclResult_t __wrap_ncclGather(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                               ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclScatter(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                                ncclComm_t comm, cudaStream_t st);
ncclResult_t __wrap_ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t dt,
                                             ncclScalarResidence_t res, ncclComm_t comm);
ncclResult_t __wrap_ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
ncclResult_t __wrap_ncclMemAlloc(void **ptr, size_t size);
ncclResult_t __wrap_ncclMemFree(void *ptr);

#define FAKE_OP ((ncclRedOp_t)(ncclNumOps + 3))

static int live_ops, live_mem, live_dcs; /* created by a wrap and not destroyed */

/* The collectives: each checks the count nccl4c derived from the buffers. */
ncclResult_t __wrap_ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                                  ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                               int root, ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
                                  cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t dt,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
                                 cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclGather(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                               ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}
ncclResult_t __wrap_ncclScatter(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
                                ncclComm_t comm, cudaStream_t st) {
  check_expected(count);
  return mock_type(ncclResult_t);
}

ncclResult_t __wrap_ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t dt,
                                             ncclScalarResidence_t res, ncclComm_t comm) {
  check_expected(res);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) *op = FAKE_OP, live_ops++;
  return r;
}
ncclResult_t __wrap_ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  assert_int_equal(op, FAKE_OP);
  live_ops--; /* NCCL drops it even when it reports an error */
  return mock_type(ncclResult_t);
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
/* A failed free keeps the memory: the caller still owns it. */
ncclResult_t __wrap_ncclMemFree(void *ptr) {
  assert_non_null(ptr);
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) free(ptr), live_mem--;
  return r;
}

#ifdef TEST_DEV_COMM
static ncclDevCommRequirements_t last_reqs; /* what the last ncclDevCommCreate got */

ncclResult_t __wrap_ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *reqs,
                                      ncclDevComm_t *out);
ncclResult_t __wrap_ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *dc);

ncclResult_t __wrap_ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *reqs,
                                      ncclDevComm_t *out) {
  int barriers = reqs->barrierCount; /* proves the requirements were mapped */
  check_expected(barriers);
  last_reqs = *reqs;
  ncclResult_t r = mock_type(ncclResult_t);
  if (r == ncclSuccess) {
    memset(out, 0, sizeof *out);
    out->id = 42;
    live_dcs++;
  }
  return r;
}
ncclResult_t __wrap_ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *dc) {
  assert_int_equal(dc->id, 42);
  live_dcs--;
  return mock_type(ncclResult_t);
}
#endif

static int check_leaks(void **state) {
  assert_int_equal(live_ops, 0);
  assert_int_equal(live_mem, 0);
  assert_int_equal(live_dcs, 0);
  assert_no_leaks();
  return 0;
}

/* A failure injected into NCCL: N4C_ENCCL, the result kept, both names. */
static void assert_enccl(n4c_status_t st, ncclResult_t r, const char *fn, const char *nccl_fn) {
  assert_int_equal(st, N4C_ENCCL);
  assert_int_equal(n4c_last_nccl_result(), r);
  assert_msg(fn, nccl_fn, " failed: ");
}

static void free_comm(n4c_comm_t *comm) {
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* Queues one call of a collective wrap: the count it must get and its result. */
#define QUEUE(wrap, n, r)                                                      \
  do {                                                                         \
    expect_value(wrap, count, n);                                              \
    will_return(wrap, r);                                                      \
  } while (0)

static void test_collectives(void **state) {
  float a[8], b[8];
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_buffer_t s8 = n4c_buffer(a, 8, ncclFloat32, 0), r8 = n4c_buffer(b, 8, ncclFloat32, 0);
  n4c_buffer_t s4 = n4c_buffer(a, 4, ncclFloat32, 0), r4 = n4c_buffer(b, 4, ncclFloat32, 0);
  ncclResult_t res[2] = {ncclInternalError, ncclSuccess};

  for (int i = 0; i < 2; i++) {
    ncclResult_t r = res[i];
    n4c_status_t st;
    QUEUE(__wrap_ncclAllReduce, 8, r);
    st = n4c_comm_allreduce(comm, &s8, &r8, ncclSum, 0);
    if (r) assert_enccl(st, r, "n4c_comm_allreduce", "ncclAllReduce");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclBroadcast, 8, r);
    st = n4c_comm_broadcast(comm, &s8, &r8, 1, 0);
    if (r) assert_enccl(st, r, "n4c_comm_broadcast", "ncclBroadcast");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclReduce, 8, r);
    st = n4c_comm_reduce(comm, &s8, &r8, ncclMax, 0, 0);
    if (r) assert_enccl(st, r, "n4c_comm_reduce", "ncclReduce");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclAllGather, 4, r);
    st = n4c_comm_allgather(comm, &s4, &r8, 0);
    if (r) assert_enccl(st, r, "n4c_comm_allgather", "ncclAllGather");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclReduceScatter, 4, r);
    st = n4c_comm_reduce_scatter(comm, &s8, &r4, ncclSum, 0);
    if (r) assert_enccl(st, r, "n4c_comm_reduce_scatter", "ncclReduceScatter");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclAlltoAll, 4, r); /* per peer: 8 / nranks */
    st = n4c_comm_alltoall(comm, &s8, &r8, 0);
    if (r) assert_enccl(st, r, "n4c_comm_alltoall", "ncclAlltoAll");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclGather, 4, r);
    st = n4c_comm_gather(comm, &s4, &r8, 0, 0);
    if (r) assert_enccl(st, r, "n4c_comm_gather", "ncclGather");
    else assert_int_equal(st, N4C_OK);
    QUEUE(__wrap_ncclScatter, 4, r);
    st = n4c_comm_scatter(comm, &s8, &r4, 0, 0);
    if (r) assert_enccl(st, r, "n4c_comm_scatter", "ncclScatter");
    else assert_int_equal(st, N4C_OK);
  }
  /* In progress (non-blocking communicator) is not an error but its own status. */
  QUEUE(__wrap_ncclAllReduce, 8, ncclInProgress);
  assert_int_equal(n4c_comm_allreduce(comm, &s8, &r8, ncclSum, 0), N4C_EINPROGRESS);
  assert_msg("n4c_comm_allreduce", "ncclAllReduce", "in progress");
  free_comm(comm);
}

static void test_redop(void **state) {
  float x = 0.5f, dev[1];
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_buffer_t scalar = n4c_buffer(dev, 1, ncclFloat32, 0);
  n4c_redop_t *o = NULL;
  ncclRedOp_t op;

  /* Failed creation: *out untouched, nothing tracked (the destroy below
   * would otherwise call the unqueued ncclRedOpDestroy), nothing leaked. */
  expect_value(__wrap_ncclRedOpCreatePreMulSum, res, ncclScalarHostImmediate);
  will_return(__wrap_ncclRedOpCreatePreMulSum, ncclInternalError);
  assert_enccl(n4c_comm_create_pre_mul_sum_host(comm, &x, ncclFloat32, &o), ncclInternalError,
               "n4c_comm_create_pre_mul_sum_host", "ncclRedOpCreatePreMulSum");
  assert_null(o);
  expect_value(__wrap_ncclRedOpCreatePreMulSum, res, ncclScalarDevice);
  will_return(__wrap_ncclRedOpCreatePreMulSum, ncclSystemError);
  assert_enccl(n4c_comm_create_pre_mul_sum_device(comm, &scalar, &o), ncclSystemError,
               "n4c_comm_create_pre_mul_sum_device", "ncclRedOpCreatePreMulSum");
  assert_null(o);

  /* Success, then a failing ncclRedOpDestroy: the op is closed all the same. */
  expect_value(__wrap_ncclRedOpCreatePreMulSum, res, ncclScalarHostImmediate);
  will_return(__wrap_ncclRedOpCreatePreMulSum, ncclSuccess);
  assert_int_equal(n4c_comm_create_pre_mul_sum_host(comm, &x, ncclFloat32, &o), N4C_OK);
  assert_int_equal(n4c_redop_op(o, &op), N4C_OK);
  assert_int_equal(op, FAKE_OP);
  will_return(__wrap_ncclRedOpDestroy, ncclInternalError);
  assert_enccl(n4c_resource_close(N4C_RESOURCE(o)), ncclInternalError, "n4c_resource_close",
               "ncclRedOpDestroy");
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(o)));
  assert_int_equal(n4c_redop_op(o, &op), N4C_ECLOSED);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(o)), N4C_OK); /* idempotent: no NCCL call */
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(o)), N4C_OK);

  /* One left open: the communicator's destroy closes it; its error is ignored. */
  o = NULL;
  expect_value(__wrap_ncclRedOpCreatePreMulSum, res, ncclScalarDevice);
  will_return(__wrap_ncclRedOpCreatePreMulSum, ncclSuccess);
  assert_int_equal(n4c_comm_create_pre_mul_sum_device(comm, &scalar, &o), N4C_OK);
  will_return(__wrap_ncclRedOpDestroy, ncclSystemError);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(o)));
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(o)), N4C_OK);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_mem(void **state) {
  char sentinel;
  void *p = &sentinel;

  /* bytes 0 and a NULL free never reach NCCL (nothing is queued). */
  assert_int_equal(n4c_mem_alloc(0, N4C_CURRENT_DEVICE, &p), N4C_OK);
  assert_null(p);
  assert_int_equal(n4c_mem_free(NULL), N4C_OK);

  p = &sentinel;
  expect_value(__wrap_ncclMemAlloc, size, 64);
  will_return(__wrap_ncclMemAlloc, ncclSystemError);
  assert_enccl(n4c_mem_alloc(64, N4C_CURRENT_DEVICE, &p), ncclSystemError, "n4c_mem_alloc", "ncclMemAlloc");
  assert_ptr_equal(p, &sentinel); /* *out untouched */

  expect_value(__wrap_ncclMemAlloc, size, 64);
  will_return(__wrap_ncclMemAlloc, ncclSuccess);
  assert_int_equal(n4c_mem_alloc(64, N4C_CURRENT_DEVICE, &p), N4C_OK);
  assert_ptr_not_equal(p, &sentinel);
  assert_int_equal(live_mem, 1);
  will_return(__wrap_ncclMemFree, ncclInternalError);
  assert_enccl(n4c_mem_free(p), ncclInternalError, "n4c_mem_free", "ncclMemFree");
  will_return(__wrap_ncclMemFree, ncclSuccess); /* still ours: free it for real */
  assert_int_equal(n4c_mem_free(p), N4C_OK);
}

#ifdef N4C_DLPACK
static void test_dlpack_empty(void **state) {
  int64_t shape[2] = {2, 3};
  DLManagedTensor *t = NULL;

  /* ncclMemAlloc fails: the tensor allocated before it is freed. */
  expect_value(__wrap_ncclMemAlloc, size, 24);
  will_return(__wrap_ncclMemAlloc, ncclInternalError);
  assert_enccl(n4c_dlpack_empty(shape, 2, ncclFloat32, 'C', N4C_CURRENT_DEVICE, &t), ncclInternalError,
               "n4c_dlpack_empty", "ncclMemAlloc");
  assert_null(t);
  assert_int_equal(n4c_test_alloc_live(), 0);

  expect_value(__wrap_ncclMemAlloc, size, 24);
  will_return(__wrap_ncclMemAlloc, ncclSuccess);
  assert_int_equal(n4c_dlpack_empty(shape, 2, ncclFloat32, 'C', N4C_CURRENT_DEVICE, &t), N4C_OK);
  will_return(__wrap_ncclMemFree, ncclSuccess);
  t->deleter(t);

  /* The deleter cannot report a failed ncclMemFree, but still frees the
   * tensor; the memory NCCL kept is freed here. */
  expect_value(__wrap_ncclMemAlloc, size, 24);
  will_return(__wrap_ncclMemAlloc, ncclSuccess);
  assert_int_equal(n4c_dlpack_empty(shape, 2, ncclFloat32, 'F', N4C_CURRENT_DEVICE, &t), N4C_OK);
  void *data = t->dl_tensor.data;
  will_return(__wrap_ncclMemFree, ncclInternalError);
  t->deleter(t);
  assert_int_equal(n4c_test_alloc_live(), 0);
  will_return(__wrap_ncclMemFree, ncclSuccess);
  assert_int_equal(__wrap_ncclMemFree(data), ncclSuccess);
}
#endif

#ifdef TEST_DEV_COMM
static void test_dev_comm(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  n4c_dev_comm_requirements_t reqs = N4C_DEV_COMM_REQUIREMENTS_INIT;
  n4c_dev_comm_t *d = NULL;
  void *p;

  /* Failed creation: nothing tracked, the ncclDevComm_t freed (check_leaks). */
  reqs.barrier_count = 3;
  expect_value(__wrap_ncclDevCommCreate, barriers, 3);
  will_return(__wrap_ncclDevCommCreate, ncclInternalError);
  assert_enccl(n4c_comm_create_dev_comm(comm, &reqs, &d), ncclInternalError, "n4c_comm_create_dev_comm",
               "ncclDevCommCreate");
  assert_null(d);

  /* Success, then a failing ncclDevCommDestroy: closed all the same. */
  expect_value(__wrap_ncclDevCommCreate, barriers, 3);
  will_return(__wrap_ncclDevCommCreate, ncclSuccess);
  assert_int_equal(n4c_comm_create_dev_comm(comm, &reqs, &d), N4C_OK);
  assert_int_equal(n4c_dev_comm_ptr(d, &p), N4C_OK);
  assert_int_equal(((ncclDevComm_t *)p)->id, 42);
  will_return(__wrap_ncclDevCommDestroy, ncclSystemError);
  assert_enccl(n4c_resource_close(N4C_RESOURCE(d)), ncclSystemError, "n4c_resource_close",
               "ncclDevCommDestroy");
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(d)));
  assert_int_equal(n4c_dev_comm_ptr(d, &p), N4C_ECLOSED);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(d)), N4C_OK); /* no second destroy */

  /* One left open (default requirements): destroyed with the communicator. */
  d = NULL;
  ncclDevCommRequirements_t def = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  expect_value(__wrap_ncclDevCommCreate, barriers, def.barrierCount);
  will_return(__wrap_ncclDevCommCreate, ncclSuccess);
  assert_int_equal(n4c_comm_create_dev_comm(comm, NULL, &d), N4C_OK);
  will_return(__wrap_ncclDevCommDestroy, ncclSuccess);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(d)));
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(d)), N4C_OK); /* after its comm: either order */
}

/* X(n4c field, NCCL member, a value that is not NCCL's default). */
#define DC_FIELDS(X)                                                                                    \
  X(lsa_multimem, lsaMultimem, 1) X(barrier_count, barrierCount, 2)                                     \
  X(lsa_barrier_count, lsaBarrierCount, 3) X(rail_gin_barrier_count, railGinBarrierCount, 4)            \
  X(lsa_ll_a2a_block_count, lsaLLA2ABlockCount, 5) X(lsa_ll_a2a_slot_count, lsaLLA2ASlotCount, 6)       \
  X(gin_force_enable, ginForceEnable, 1) X(gin_context_count, ginContextCount, 0)                       \
  X(gin_signal_count, ginSignalCount, 8) X(gin_counter_count, ginCounterCount, 9)                       \
  X(gin_connection_type, ginConnectionType, N4C_GIN_CONNECTION_RAIL)                                    \
  X(gin_exclusive_contexts, ginExclusiveContexts, 1) X(gin_queue_depth, ginQueueDepth, 10)              \
  X(world_gin_barrier_count, worldGinBarrierCount, 11)                                                  \
  X(gin_strong_signals_required, ginStrongSignalsRequired, 0)                                           \
  X(gin_va_signals_required, ginVaSignalsRequired, 0)
enum { ALL_FIELDS = -1, NO_FIELD = -2 };

/* Creates a device communicator from reqs, checks what NCCL got: field
 * `set` (an index into DC_FIELDS, or ALL_FIELDS) its value, every other
 * member NCCL's default; frees it. */
static void create_and_check(n4c_comm_t *comm, const n4c_dev_comm_requirements_t *reqs, int set) {
  const ncclDevCommRequirements_t def = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  n4c_dev_comm_t *d = NULL;
  int i = 0;
  expect_any(__wrap_ncclDevCommCreate, barriers);
  will_return(__wrap_ncclDevCommCreate, ncclSuccess);
  assert_int_equal(n4c_comm_create_dev_comm(comm, reqs, &d), N4C_OK);
  assert_int_equal(last_reqs.size, def.size);
  assert_int_equal(last_reqs.magic, def.magic);
  assert_int_equal(last_reqs.version, def.version);
  assert_null(last_reqs.resourceRequirementsList);
  assert_null(last_reqs.teamRequirementsList);
  assert_int_equal(last_reqs.ginTrafficClass, def.ginTrafficClass);
#define CHECK_ONE(f, m, v) assert_int_equal(last_reqs.m, (set == ALL_FIELDS || set == i++) ? (v) : def.m);
  DC_FIELDS(CHECK_ONE)
#undef CHECK_ONE
  will_return(__wrap_ncclDevCommDestroy, ncclSuccess);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(d)), N4C_OK);
}

/* Each requirements field reaches its NCCL member, alone and all together;
 * NULL and N4C_UNSET keep NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER's values. */
static void test_dev_comm_fields(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  const n4c_dev_comm_requirements_t unset = N4C_DEV_COMM_REQUIREMENTS_INIT;
  n4c_dev_comm_requirements_t all = unset;
  create_and_check(comm, NULL, NO_FIELD);
  create_and_check(comm, &unset, NO_FIELD);
  int k = 0;
#define ONE(f, m, v)                                        \
  {                                                         \
    n4c_dev_comm_requirements_t r = unset;                  \
    r.f = all.f = (v);                                      \
    create_and_check(comm, &r, k++);                        \
  }
  DC_FIELDS(ONE)
#undef ONE
  create_and_check(comm, &all, ALL_FIELDS);
  free_comm(comm);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_collectives, check_leaks),
      cmocka_unit_test_teardown(test_redop, check_leaks),
      cmocka_unit_test_teardown(test_mem, check_leaks),
#ifdef N4C_DLPACK
      cmocka_unit_test_teardown(test_dlpack_empty, check_leaks),
#endif
#ifdef TEST_DEV_COMM
      cmocka_unit_test_teardown(test_dev_comm, check_leaks),
      cmocka_unit_test_teardown(test_dev_comm_fields, check_leaks),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
