/*
 * tests/sim_rendezvous.c — the rendezvous primitive (sim/core/rendezvous.c)
 * on its own: rounds keyed within a table, slots and payload, the
 * completion callback, holders and detached arrivals, withdrawal (leave,
 * withdraw, each_open), mismatched and repeated arrivals (which fail the
 * round for every rank, and for ranks still to come), waits that
 * complete, time out or are cancelled, and allocation failure.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"

typedef struct {
  int value;
  int out; /* written by complete() */
} slot_t;

typedef struct {
  int completions;
  int sum;
} payload_t;

static int releases; /* ops.release calls, i.e. rounds freed */

/* Whether this thread's last WARN says s. */
static bool has_warning(const char *s) { return strstr(ncclGetLastError(NULL), s) != NULL; }

/* Sums the present slots into the payload and hands each rank the sum. */
static ncclResult_t complete(sim_rv *rv, void *arg) {
  payload_t *p = sim_rv_payload(rv);
  p->completions++;
  for (int r = 0; r < sim_rv_nranks(rv); r++)
    if (sim_rv_present(rv, r)) p->sum += ((slot_t *)sim_rv_slot(rv, r))->value;
  for (int r = 0; r < sim_rv_nranks(rv); r++)
    if (sim_rv_present(rv, r)) ((slot_t *)sim_rv_slot(rv, r))->out = p->sum;
  return arg ? *(ncclResult_t *)arg : ncclSuccess;
}

static void release(sim_rv *rv) {
  (void)rv;
  releases++;
}

static const sim_rv_ops ops = {"test", "test key", sizeof(payload_t), sizeof(slot_t), complete, release, false};

static int setup(void **state) {
  (void)state;
  releases = 0;
  ncclsimParamSet("TIMEOUT", "30");
  return 0;
}

static void test_complete_and_leave(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  sim_rv *rv[3];
  for (int r = 0; r < 3; r++) {
    slot_t s = {r + 1, 0};
    assert_int_equal(sim_rv_arrive(&t, &ops, 7, 3, 3, r, 0, &s, NULL, &rv[r]), ncclSuccess);
    assert_ptr_equal(rv[r], rv[0]); /* one round per key */
    assert_int_equal(sim_rv_done(rv[0]), r == 2);
    assert_int_equal(sim_rv_arrived(rv[0]), r + 1);
  }
  assert_int_equal(sim_rv_key(rv[0]), 7);
  assert_int_equal(((payload_t *)sim_rv_payload(rv[0]))->completions, 1);
  assert_int_equal(((slot_t *)sim_rv_slot(rv[0], 1))->out, 6);
  assert_int_equal(sim_rv_wait(&t, rv[0], NULL, sim_now_ns()), 0); /* done: no wait */
  char buf[32];
  sim_rv_missing(rv[0], buf, sizeof buf);
  assert_string_equal(buf, "");
  assert_int_equal(sim_rv_leave(&t, rv[0], 0), ncclSuccess);
  assert_int_equal(sim_rv_leave(&t, rv[0], 1), ncclSuccess);
  assert_int_equal(releases, 0); /* rank 2 still holds it */
  assert_false(sim_rv_withdraw(&t, rv[0], 2)); /* complete: nothing to withdraw */
  assert_int_equal(sim_rv_leave(&t, rv[0], 2), ncclSuccess);
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t);
}

static void test_result_of_complete(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  ncclResult_t fail = ncclInvalidUsage;
  slot_t s = {1, 0};
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &ops, 1, 1, 1, 0, 0, &s, &fail, &rv), ncclSuccess);
  assert_true(sim_rv_done(rv));
  assert_int_equal(sim_rv_result(rv), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t);
}

static void test_keys_are_separate(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *a, *b;
  assert_int_equal(sim_rv_arrive(&t, &ops, 1, 2, 2, 0, 0, &s, NULL, &a), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 2, 2, 2, 0, 0, &s, NULL, &b), ncclSuccess);
  assert_ptr_not_equal(a, b);
  assert_false(sim_rv_done(a));
  assert_int_equal(sim_rv_arrive(&t, &ops, 2, 2, 2, 1, 0, &s, NULL, NULL), ncclSuccess);
  assert_true(sim_rv_done(b));
  assert_false(sim_rv_done(a));
  assert_int_equal(sim_rv_leave(&t, b, 0), ncclSuccess);
  assert_int_equal(sim_rv_leave(&t, b, 1), ncclSuccess);
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t); /* a, still open */
  assert_int_equal(releases, 2);
}

/* Opens round `key` of 4 ranks with rank 0 and 1 in it, then rank 2
 * arrives as `bad` says: the round fails for all, done with
 * ncclInvalidUsage, and sim_rv_conflict says why; nothing of rank 2 is
 * posted. Returns the round, held by ranks 0 and 1. */
static sim_rv *disagree(sim_rv_table *t, uint64_t key, int nranks, int expected, int rank, const char *want1,
                        const char *want2) {
  slot_t s = {1, 0};
  sim_rv *rv, *rv1, *other = (sim_rv *)t;
  char why[256];
  assert_int_equal(sim_rv_arrive(t, &ops, key, 4, 4, 0, 0, &s, NULL, &rv), ncclSuccess);
  assert_int_equal(sim_rv_arrive(t, &ops, key, 4, 4, 1, 0, &s, NULL, &rv1), ncclSuccess);
  assert_false(sim_rv_conflict(rv, why, sizeof why));
  assert_string_equal(why, "");
  assert_int_equal(sim_rv_arrive(t, &ops, key, nranks, expected, rank, 0, &s, NULL, &other), ncclInvalidUsage);
  assert_null(other);
  assert_true(sim_rv_done(rv));
  assert_int_equal(sim_rv_result(rv), ncclInvalidUsage);
  assert_int_equal(sim_rv_arrived(rv), 2); /* the newcomer was not posted */
  assert_true(sim_rv_conflict(rv, why, sizeof why));
  assert_non_null(strstr(why, want1) ? "" : NULL);
  assert_non_null(strstr(why, want2) ? "" : NULL);
  return rv;
}

/* A rank that disagrees with the round (nranks, expected, a rank twice)
 * fails it for every rank at once: the holders' wait ends, they leave with
 * ncclInvalidUsage, and sim_rv_conflict names both values. */
static void test_mismatch_and_twice(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  sim_rv *rv = disagree(&t, 5, 3, 3, 2, "nranks 3", "said 4");
  assert_int_equal(sim_rv_wait(&t, rv, NULL, sim_deadline()), 0); /* done: no wait */
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInvalidUsage);
  rv = disagree(&t, 6, 4, 3, 2, "expects 3", "expected 4");
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInvalidUsage);
  rv = disagree(&t, 7, 4, 4, 1, "rank 1 of 4 was claimed twice", "gave rank 1");
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInvalidUsage);
  assert_int_equal(releases, 0); /* all three kept for the ranks still to come */
  sim_rv_table_fini(&t);
  assert_int_equal(releases, 3);
}

/* A failed round refuses the ranks still to come, agreeing or not, with the
 * reason, while it is held and after, until its deadline; past it, and
 * unheld, it goes and the key opens a new round. */
static void test_failed_round_refuses_later_ranks(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *rv = disagree(&t, 5, 3, 3, 2, "nranks 3", "said 4");
  assert_int_equal(sim_rv_arrive(&t, &ops, 5, 4, 4, 3, 0, &s, NULL, NULL), ncclInvalidUsage);
  assert_true(has_warning("rank 3 cannot join: the ranks of this test key disagreed: rank 2 called test with "
                          "nranks 3, but rank(s) before it said 4"));
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInvalidUsage);
  assert_int_equal(sim_rv_arrive(&t, &ops, 5, 4, 4, 2, 0, &s, NULL, NULL), ncclInvalidUsage);
  assert_int_equal(releases, 0);
  /* A round whose deadline passes at once: once it has passed, the next
   * arrival under its key drops it and opens a new round. */
  ncclsimParamSet("TIMEOUT", "0.001");
  rv = disagree(&t, 9, 3, 3, 2, "nranks 3", "said 4");
  ncclsimParamSet("TIMEOUT", "30");
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInvalidUsage);
  while (sim_now_ns() < sim_rv_deadline(rv)) usleep(1000);
  sim_rv *fresh;
  assert_int_equal(sim_rv_arrive(&t, &ops, 9, 3, 3, 2, 0, &s, NULL, &fresh), ncclSuccess);
  assert_int_equal(releases, 1);
  assert_false(sim_rv_done(fresh));
  assert_int_equal(sim_rv_arrived(fresh), 1);
  assert_int_equal(sim_rv_leave(&t, fresh, 2), ncclInProgress);
  sim_rv_table_fini(&t); /* round 5, kept */
  assert_int_equal(releases, 3);
}

/* A round of untimed ops is never kept: its callers never come late. One
 * of detached arrivals only goes at the conflict itself. */
static void test_untimed_failed_round_goes(void **state) {
  (void)state;
  static const sim_rv_ops quick = {"test", "test key", sizeof(payload_t), sizeof(slot_t), complete, release, true};
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  assert_int_equal(sim_rv_arrive(&t, &quick, 1, 2, 2, 0, SIM_RV_DETACHED, &s, NULL, NULL), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &quick, 1, 2, 2, 0, SIM_RV_DETACHED, &s, NULL, NULL), ncclInvalidUsage);
  assert_int_equal(releases, 1);
  assert_null(t.open);
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &quick, 2, 2, 2, 0, 0, &s, NULL, &rv), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &quick, 2, 3, 3, 1, 0, &s, NULL, NULL), ncclInvalidUsage);
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInvalidUsage);
  assert_int_equal(releases, 2);
  assert_null(t.open);
  sim_rv_table_fini(&t);
}

typedef struct {
  sim_rv_table *t;
  sim_rv *rv;
  int rc;
} blocked;

static void *wait_blocked(void *arg) {
  blocked *b = arg;
  b->rc = sim_rv_wait(b->t, b->rv, NULL, sim_deadline());
  return NULL;
}

/* A rank blocked in the round's wait is woken by the rank that disagrees,
 * not by its deadline (NCCLSIM_TIMEOUT 30 s: a wait that ran out would say
 * ETIMEDOUT). */
static void test_conflict_wakes_waiter(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  blocked b = {&t, NULL, -1};
  assert_int_equal(sim_rv_arrive(&t, &ops, 4, 2, 2, 0, 0, &s, NULL, &b.rv), ncclSuccess);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_blocked, &b), 0);
  assert_int_equal(sim_rv_arrive(&t, &ops, 4, 3, 3, 1, 0, &s, NULL, NULL), ncclInvalidUsage);
  pthread_join(th, NULL);
  assert_int_equal(b.rc, 0);
  assert_int_equal(sim_rv_leave(&t, b.rv, 0), ncclInvalidUsage);
  sim_rv_table_fini(&t);
}

static void test_withdraw_and_rejoin(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s0 = {10, 0}, s1 = {20, 0}, s2 = {30, 0};
  sim_rv *r0, *r1, *r2;
  assert_int_equal(sim_rv_arrive(&t, &ops, 9, 3, 3, 0, 0, &s0, NULL, &r0), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 9, 3, 3, 1, 0, &s1, NULL, &r1), ncclSuccess);
  char buf[32];
  sim_rv_missing(r0, buf, sizeof buf);
  assert_string_equal(buf, "2");
  assert_true(sim_rv_withdraw(&t, r1, 1)); /* rank 1 times out */
  assert_false(sim_rv_present(r0, 1));
  sim_rv_missing(r0, buf, sizeof buf);
  assert_string_equal(buf, "1,2");
  assert_int_equal(sim_rv_arrive(&t, &ops, 9, 3, 3, 2, 0, &s2, NULL, &r2), ncclSuccess);
  assert_false(sim_rv_done(r0)); /* rank 1's slot is empty again */
  s1.value = 25;
  assert_int_equal(sim_rv_arrive(&t, &ops, 9, 3, 3, 1, 0, &s1, NULL, &r1), ncclSuccess);
  assert_true(sim_rv_done(r0));
  assert_int_equal(((slot_t *)sim_rv_slot(r0, 0))->out, 65); /* the value it came back with */
  for (int r = 0; r < 3; r++) assert_int_equal(sim_rv_leave(&t, r0, r), ncclSuccess);
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t);
}

/* The last holder withdrawing frees the round, even with others' slots
 * withdrawn before it. */
static void test_all_withdraw(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &ops, 3, 3, 3, 0, 0, &s, NULL, &rv), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 3, 3, 3, 1, 0, &s, NULL, NULL), ncclSuccess);
  assert_int_equal(sim_rv_leave(&t, rv, 1), ncclInProgress);
  assert_int_equal(releases, 0);
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInProgress);
  assert_int_equal(releases, 1);
  assert_null(t.open);
  sim_rv_table_fini(&t);
}

/* Detached arrivals: never held; complete() settles them; a round of only
 * detached arrivals goes at completion. */
static void test_detached(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {4, 0};
  sim_rv *out = (sim_rv *)&t;
  assert_int_equal(sim_rv_arrive(&t, &ops, 11, 2, 2, 0, SIM_RV_DETACHED, &s, NULL, &out), ncclSuccess);
  assert_null(out);
  assert_non_null(t.open);
  assert_int_equal(sim_rv_arrive(&t, &ops, 11, 2, 2, 1, SIM_RV_DETACHED, &s, NULL, NULL), ncclSuccess);
  assert_int_equal(releases, 1);
  assert_null(t.open);
  /* A detached and a holding rank: the holder frees it. */
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &ops, 12, 2, 2, 0, 0, &s, NULL, &rv), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 12, 2, 2, 1, SIM_RV_DETACHED, &s, NULL, NULL), ncclSuccess);
  assert_true(sim_rv_done(rv));
  assert_int_equal(releases, 1);
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclSuccess);
  assert_int_equal(releases, 2);
  sim_rv_table_fini(&t);
}

static int expired;
static void expire_rank1(sim_rv_table *t, sim_rv *rv, void *arg) {
  (void)arg;
  if (sim_rv_present(rv, 1)) {
    expired++;
    sim_rv_leave_locked(t, rv, 1);
  }
}

/* each_open visits open rounds only; a detached arrival withdrawn there
 * frees a round nobody else is in. */
static void test_each_open(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *held;
  assert_int_equal(sim_rv_arrive(&t, &ops, 1, 2, 2, 1, SIM_RV_DETACHED, &s, NULL, NULL), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 2, 2, 2, 1, SIM_RV_DETACHED, &s, NULL, NULL), ncclSuccess);
  assert_int_equal(sim_rv_arrive(&t, &ops, 2, 2, 2, 0, 0, &s, NULL, &held), ncclSuccess); /* completes 2 */
  assert_int_equal(sim_rv_arrive(&t, &ops, 3, 2, 2, 0, 0, &s, NULL, NULL), ncclSuccess);
  expired = 0;
  sim_rv_lock(&t);
  sim_rv_each_open(&t, expire_rank1, NULL);
  sim_rv_unlock(&t);
  assert_int_equal(expired, 1); /* round 1 only: round 2 is complete, round 3 lacks rank 1 */
  assert_int_equal(releases, 1); /* round 1 had nobody else */
  assert_int_equal(sim_rv_leave(&t, held, 0), ncclSuccess);
  assert_int_equal(releases, 2);
  sim_rv_table_fini(&t); /* round 3, still open */
  assert_int_equal(releases, 3);
}

typedef struct {
  sim_rv_table *t;
  int rank;
  int rc;
  sim_rv *rv;
} waiter;

static void *wait_thread(void *arg) {
  waiter *w = arg;
  slot_t s = {w->rank, 0};
  assert_int_equal(sim_rv_arrive(w->t, &ops, 42, 2, 2, w->rank, 0, &s, NULL, &w->rv), ncclSuccess);
  w->rc = sim_rv_wait(w->t, w->rv, NULL, sim_deadline());
  return NULL;
}

static void test_wait_across_threads(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  waiter w[2] = {{&t, 0, -1, NULL}, {&t, 1, -1, NULL}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, wait_thread, &w[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(w[i].rc, 0);
    assert_int_equal(((slot_t *)sim_rv_slot(w[i].rv, i))->out, 1);
  }
  for (int i = 0; i < 2; i++) assert_int_equal(sim_rv_leave(&t, w[i].rv, i), ncclSuccess);
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t);
}

static void test_wait_timeout_and_cancel(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &ops, 8, 2, 2, 0, 0, &s, NULL, &rv), ncclSuccess);
  uint64_t t0 = sim_now_ns();
  assert_int_equal(sim_rv_wait(&t, rv, NULL, t0 + 20 * 1000 * 1000), ETIMEDOUT);
  assert_true(sim_now_ns() - t0 >= 20 * 1000 * 1000);
  _Atomic int cancel = 1;
  assert_int_equal(sim_rv_wait(&t, rv, &cancel, sim_deadline()), ECANCELED);
  assert_true(sim_rv_deadline(rv) > t0);
  assert_true(sim_rv_withdraw(&t, rv, 0));
  assert_int_equal(releases, 1);
  sim_rv_table_fini(&t);
}

static void test_out_of_memory(void **state) {
  (void)state;
  sim_rv_table t;
  sim_rv_table_init(&t);
  slot_t s = {1, 0};
  sim_rv *rv = (sim_rv *)&t;
  ncclsimAllocFailAfter(1);
  assert_int_equal(sim_rv_arrive(&t, &ops, 1, 2, 2, 0, 0, &s, NULL, &rv), ncclSystemError);
  ncclsimAllocFailAfter(0);
  assert_null(rv);
  assert_null(t.open);
  assert_int_equal(sim_rv_arrive(&t, &ops, 1, 2, 2, 0, 0, &s, NULL, &rv), ncclSuccess);
  assert_int_equal(sim_rv_leave(&t, rv, 0), ncclInProgress);
  sim_rv_table_fini(&t);
}

/* Slots and payload are reached by offsets and aligned for any type. */
static void test_layout(void **state) {
  (void)state;
  static const sim_rv_ops odd = {"test", "test key", 3, 5, complete, NULL, false};
  sim_rv_table t;
  sim_rv_table_init(&t);
  unsigned char slot[5] = {1, 2, 3, 4, 5};
  sim_rv *rv;
  assert_int_equal(sim_rv_arrive(&t, &odd, 1, 9, 9, 8, 0, slot, NULL, &rv), ncclSuccess);
  assert_int_equal((uintptr_t)sim_rv_payload(rv) % 16, 0);
  for (int r = 0; r < 9; r++) assert_int_equal((uintptr_t)sim_rv_slot(rv, r) % 16, 0);
  assert_memory_equal(sim_rv_slot(rv, 8), slot, 5);
  assert_true((char *)sim_rv_slot(rv, 0) >= (char *)sim_rv_payload(rv) + 3);
  assert_int_equal(sim_rv_leave(&t, rv, 8), ncclInProgress);
  sim_rv_table_fini(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_complete_and_leave, setup),
      cmocka_unit_test_setup(test_result_of_complete, setup),
      cmocka_unit_test_setup(test_keys_are_separate, setup),
      cmocka_unit_test_setup(test_mismatch_and_twice, setup),
      cmocka_unit_test_setup(test_failed_round_refuses_later_ranks, setup),
      cmocka_unit_test_setup(test_untimed_failed_round_goes, setup),
      cmocka_unit_test_setup(test_conflict_wakes_waiter, setup),
      cmocka_unit_test_setup(test_withdraw_and_rejoin, setup),
      cmocka_unit_test_setup(test_all_withdraw, setup),
      cmocka_unit_test_setup(test_detached, setup),
      cmocka_unit_test_setup(test_each_open, setup),
      cmocka_unit_test_setup(test_wait_across_threads, setup),
      cmocka_unit_test_setup(test_wait_timeout_and_cancel, setup),
      cmocka_unit_test_setup(test_out_of_memory, setup),
      cmocka_unit_test_setup(test_layout, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
