/*
 * lib_resource.c — the resource base, through a test-only kind: reference
 * counts, idempotent close, tracking, close on destroy/abort/finalize,
 * close_all, both free orders, and close racing close_all.
 */
#include "config.h"

#include <pthread.h>

#include "lib_mock.h"
#include "n4c_internal.h"
#include "n4c_test.h"

typedef struct {
  n4c_resource_t base;
  int payload;
} test_res_t;

static atomic_int closes;
static int releases;
static n4c_status_t close_result;

static n4c_status_t test_close(n4c_resource_t *r) {
  /* Closing always happens while the NCCL communicator is still there. */
  assert_non_null(r->comm->handle);
  atomic_fetch_add(&closes, 1);
  if (close_result != N4C_OK) return n4c_error(close_result, "test_close: injected");
  return N4C_OK;
}

static void test_release(n4c_resource_t *r) { releases++; }

static const n4c_resource_kind_t test_kind = {"test resource", test_close, test_release};

static test_res_t *make_res(n4c_comm_t *comm) {
  test_res_t *t = NULL;
  assert_int_equal(n4c_resource_alloc("make_res", comm, &test_kind, sizeof *t, (void **)&t),
                   N4C_OK);
  assert_false(n4c_resource_is_valid(&t->base)); /* not before tracking */
  n4c_comm_track(&t->base);
  return t;
}

static int refs(const void *p) { return atomic_load(&((n4c_resource_t *)p)->refs); }
static int comm_refs(n4c_comm_t *c) { return atomic_load(&c->refs); }

static int reset(void **state) {
  atomic_store(&closes, 0);
  releases = 0;
  close_result = N4C_OK;
  return 0;
}

static int check_leaks(void **state) {
  assert_no_leaks();
  return 0;
}

static void test_refcount_and_close(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t = make_res(comm);
  assert_true(n4c_resource_is_valid(N4C_RESOURCE(t)));
  assert_int_equal(refs(t), 2); /* owner + the communicator's list */
  assert_int_equal(comm_refs(comm), 2);
  assert_int_equal(n4c_resource_check_open("op", "res", N4C_RESOURCE(t)), N4C_OK);

  assert_int_equal(n4c_resource_close(N4C_RESOURCE(t)), N4C_OK);
  assert_int_equal(closes, 1);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(t)));
  assert_int_equal(refs(t), 1);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(t)), N4C_OK); /* idempotent */
  assert_int_equal(closes, 1);
  assert_int_equal(n4c_resource_check_open("n4c_x_get", "res", N4C_RESOURCE(t)), N4C_ECLOSED);
  assert_msg("n4c_x_get", "res is closed", NULL);
  assert_int_equal(n4c_resource_check_open("n4c_x_get", "res", NULL), N4C_EINVAL);
  assert_msg("n4c_x_get", "res is NULL", NULL);

  assert_int_equal(n4c_resource_free(N4C_RESOURCE(t)), N4C_OK);
  assert_int_equal(releases, 1);
  assert_int_equal(closes, 1);
  assert_int_equal(comm_refs(comm), 1);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_null_args(void **state) {
  assert_int_equal(n4c_resource_close(NULL), N4C_EINVAL);
  assert_msg("n4c_resource_close", "r is NULL", NULL);
  assert_false(n4c_resource_is_valid(NULL));
  assert_int_equal(n4c_resource_free(NULL), N4C_OK);
}

/* RES-03/04 and finalize: teardown closes every tracked resource first. */
static void teardown_closes_all(int how) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t[3];
  for (int i = 0; i < 3; i++) t[i] = make_res(comm);
  assert_int_equal(comm_refs(comm), 4);
  if (how == 0) {
    will_return(__wrap_ncclCommDestroy, ncclSuccess);
    assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  } else if (how == 1) {
    will_return(__wrap_ncclCommAbort, ncclSuccess);
    assert_int_equal(n4c_comm_abort(comm), N4C_OK);
  } else {
    will_return(__wrap_ncclCommFinalize, ncclSuccess);
    assert_int_equal(n4c_comm_finalize(comm), N4C_OK);
  }
  assert_int_equal(closes, 3);
  for (int i = 0; i < 3; i++) {
    assert_false(n4c_resource_is_valid(N4C_RESOURCE(t[i])));
    assert_int_equal(refs(t[i]), 1);
    assert_int_equal(n4c_resource_close(N4C_RESOURCE(t[i])), N4C_OK); /* no-op */
  }
  assert_int_equal(closes, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(n4c_resource_free(N4C_RESOURCE(t[i])), N4C_OK);
  assert_int_equal(releases, 3);
  if (how == 2) will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

static void test_destroy_closes(void **state) { teardown_closes_all(0); }
static void test_abort_closes(void **state) { teardown_closes_all(1); }
static void test_finalize_closes(void **state) { teardown_closes_all(2); }

/* RES-05: close_all ignores errors, is idempotent, and the communicator
 * stays usable and keeps tracking new resources. */
static void test_close_all(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t[4];
  for (int i = 0; i < 4; i++) t[i] = make_res(comm);
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(t[1])), N4C_OK);
  close_result = N4C_ENCCL;
  assert_int_equal(n4c_comm_close_all_resources(comm), N4C_OK);
  assert_int_equal(closes, 4);
  assert_int_equal(n4c_comm_close_all_resources(comm), N4C_OK);
  assert_int_equal(closes, 4);
  assert_true(n4c_comm_is_valid(comm));
  close_result = N4C_OK;
  test_res_t *late = make_res(comm);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(closes, 5);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(late)));
  for (int i = 0; i < 4; i++) n4c_resource_free(N4C_RESOURCE(t[i]));
  n4c_resource_free(N4C_RESOURCE(late));
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* A failing close: the error is reported, the resource is closed anyway;
 * on destroy the error is ignored. */
static void test_close_error(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *a = make_res(comm), *b = make_res(comm);
  close_result = N4C_ENCCL;
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(a)), N4C_ENCCL);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(a)));
  assert_int_equal(n4c_resource_close(N4C_RESOURCE(a)), N4C_OK);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(closes, 2);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(b)));
  n4c_resource_free(N4C_RESOURCE(a));
  n4c_resource_free(N4C_RESOURCE(b));
  n4c_comm_free(comm);
}

/* Comm freed first: it is destroyed (closing the resource) but its memory
 * lives until the resource's reference goes. */
static void test_free_comm_first(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t = make_res(comm);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
  assert_int_equal(closes, 1);
  assert_false(n4c_resource_is_valid(N4C_RESOURCE(t)));
  assert_int_equal(comm_refs(t->base.comm), 1);
  assert_false(n4c_comm_is_valid(t->base.comm));
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(t)), N4C_OK);
  assert_int_equal(releases, 1);
}

/* Resource freed first, while open: closed once, untracked. */
static void test_free_resource_first(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t = make_res(comm);
  assert_int_equal(n4c_resource_free(N4C_RESOURCE(t)), N4C_OK);
  assert_int_equal(closes, 1);
  assert_int_equal(comm_refs(comm), 1);
  assert_null(comm->resources);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
  assert_int_equal(closes, 1);
}

/* A resource given up before tracking: released, never closed. */
static void test_discard_untracked(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t = NULL;
  assert_int_equal(n4c_resource_alloc("op", comm, &test_kind, sizeof *t, (void **)&t), N4C_OK);
  assert_int_equal(comm_refs(comm), 2);
  n4c_resource_unref(&t->base);
  assert_int_equal(closes, 0);
  assert_int_equal(releases, 1);
  assert_int_equal(comm_refs(comm), 1);
  /* Allocation failure. */
  n4c_test_alloc_fail_after(1);
  assert_int_equal(n4c_resource_alloc("n4c_comm_register_x", comm, &test_kind, sizeof *t,
                                      (void **)&t),
                   N4C_ENOMEM);
  assert_msg("n4c_comm_register_x", "test resource", NULL);
  assert_int_equal(comm_refs(comm), 1);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_free(comm), N4C_OK);
}

/* Many resources, closed in an interleaved order, then the rest by destroy. */
static void test_many(void **state) {
  enum { N = 200 };
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  test_res_t *t[N];
  for (int i = 0; i < N; i++) t[i] = make_res(comm);
  for (int i = 0; i < N; i += 3) n4c_resource_close(N4C_RESOURCE(t[i]));
  for (int i = 1; i < N; i += 3) n4c_resource_free(N4C_RESOURCE(t[i]));
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  assert_int_equal(n4c_comm_destroy(comm), N4C_OK);
  assert_int_equal(closes, N);
  for (int i = 0; i < N; i++)
    if (i % 3 != 1) n4c_resource_free(N4C_RESOURCE(t[i]));
  assert_int_equal(releases, N);
  n4c_comm_free(comm);
}

enum { RACE_N = 2000, RACE_THREADS = 4 };
static test_res_t *race[RACE_N];

static void *race_closer(void *arg) {
  int k = (int)(size_t)arg;
  for (int i = k; i < RACE_N; i += RACE_THREADS) n4c_resource_close(N4C_RESOURCE(race[i]));
  return NULL;
}

/* Close and close_all at once: each kind->close runs exactly once and no
 * reference is lost or dropped twice. */
static void test_close_race(void **state) {
  n4c_comm_t *comm = mock_comm(2, 0, 0);
  for (int i = 0; i < RACE_N; i++) race[i] = make_res(comm);
  pthread_t th[RACE_THREADS];
  for (int k = 0; k < RACE_THREADS; k++)
    assert_int_equal(pthread_create(&th[k], NULL, race_closer, (void *)(size_t)k), 0);
  n4c_comm_close_all_resources(comm);
  for (int k = 0; k < RACE_THREADS; k++) pthread_join(th[k], NULL);
  assert_int_equal(closes, RACE_N);
  for (int i = 0; i < RACE_N; i++) {
    assert_int_equal(refs(race[i]), 1);
    n4c_resource_free(N4C_RESOURCE(race[i]));
  }
  assert_int_equal(comm_refs(comm), 1);
  will_return(__wrap_ncclCommDestroy, ncclSuccess);
  n4c_comm_free(comm);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, reset, check_leaks)
  const struct CMUnitTest tests[] = {
      T(test_refcount_and_close), T(test_null_args),        T(test_destroy_closes),
      T(test_abort_closes),       T(test_finalize_closes),  T(test_close_all),
      T(test_close_error),        T(test_free_comm_first),  T(test_free_resource_first),
      T(test_discard_untracked),  T(test_many),             T(test_close_race),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
