/*
 * tests/sim_comm.c — communicator life cycle in ncclsim: unique ids and
 * init (blocking, non-blocking, in a group, ncclCommInitAll/Scalable),
 * ncclCommSplit and ncclCommShrink, finalize/destroy/abort/revoke, the
 * queries, groups (nesting, ncclGroupSimulateEnd, failed calls inside one),
 * per-thread communicator options, and the argument checks shared by every
 * operation. Results are those of real NCCL 2.30 (its source, and runs on
 * H200) except where docs/ncclsim.md says ncclsim checks more.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "sim.h"
#include "comm/comm.h"
#include "sim_ranks.h"
#include "sim_comms.h"
#include "slow.h"
#include <nccl_device.h> /* ncclCommQueryProperties */

enum { MAXR = 8 };

static bool has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

/* Warnings are kept per thread; start a check from a clean slate. */
static const char *last_warning(void) { return ncclGetLastError(NULL); }

static void pause_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* One thread drives an allreduce of (index + 1) over the n comms: it only
 * completes if they are the ranks of one communicator. */
static void check_allreduce(ncclComm_t *comms, int n) { check_allreduce_ranks(comms, n, false); }

/* ---- unique ids and ncclCommInitRank* ---- */

static void test_init_arguments(void **state) {
  ncclUniqueId id, bad;
  ncclComm_t comm = (ncclComm_t)&id; /* must be reset to NULL by a failed init */
  assert_int_equal(ncclGetUniqueId(NULL), ncclInvalidArgument);
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  memset(&bad, 0, sizeof bad);
  assert_int_equal(ncclCommInitRank(NULL, 2, id, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  assert_null(comm);
  assert_true(has(last_warning(), "nranks is 0"));
  assert_int_equal(ncclCommInitRank(&comm, 2, id, -1), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  assert_true(has(last_warning(), "rank is 2, must be in [0, 2)"));
  assert_int_equal(ncclCommInitRank(&comm, 2, bad, 0), ncclInvalidArgument);
  assert_true(has(last_warning(), "not made by ncclGetUniqueId"));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  assert_int_equal(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  assert_true(has(last_warning(), "NCCL_CONFIG_INITIALIZER"));
  config = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  config.blocking = 2;
  assert_int_equal(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  assert_true(has(last_warning(), "blocking is 2"));
  assert_int_equal(ncclCommInitRankScalable(&comm, 1, 0, 0, &id, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRankScalable(&comm, 1, 0, 1, NULL, NULL), ncclInvalidArgument);
  assert_null(comm);
  /* None of these joined the id: a 1-rank init with it still works. */
  assert_int_equal(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
  assert_rank_of(comm, 0, 1);
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(NULL, &ae), ncclInvalidArgument);
  assert_int_equal(ncclCommGetAsyncError(comm, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Non-blocking ranks joining one id from one thread: a rank that disagrees
 * on nranks, or claims a rank that is in already, is refused with
 * ncclInvalidUsage, and so is every rank of the id: the one already in
 * learns it at its next look, with a message naming both values, and one
 * still to come is refused at once, though it agrees. A comm still
 * initialising cannot be used. */
static void test_init_conflicting_joins(void **state) {
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t c0, c1, other;
  assert_int_equal(ncclCommInitRankConfig(&c0, 2, id, 0, &config), ncclInProgress);
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(c0, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInProgress);
  ncclComm_t sub;
  assert_int_equal(ncclCommSplit(c0, 0, 0, &sub, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "still initializing"));
  assert_int_equal(ncclCommInitRankConfig(&other, 3, id, 1, &config), ncclInvalidUsage);
  assert_true(has(last_warning(), "says nranks is 3, but rank(s) before it said 2"));
  assert_null(other);
  assert_int_equal(ncclCommGetAsyncError(c0, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInvalidUsage);
  assert_true(has(ncclGetLastError(c0), "rank 0 of 2: the ranks of this unique id disagree"));
  assert_true(has(ncclGetLastError(c0), "rank 1 called ncclCommInitRank with nranks 3, but rank(s) before it said 2"));
  assert_int_equal(ncclCommInitRankConfig(&c1, 2, id, 1, &config), ncclInvalidUsage);
  assert_true(has(last_warning(), "rank 1 cannot join: the ranks of this unique id disagreed"));
  assert_true(has(last_warning(), "nranks 3"));
  assert_null(c1);
  assert_int_equal(ncclCommGetAsyncError(c0, &ae), ncclSuccess); /* and it stays so */
  assert_int_equal(ae, ncclInvalidUsage);
  assert_int_equal(ncclCommDestroy(c0), ncclSuccess);
  /* A rank claimed twice. */
  ncclGetUniqueId(&id);
  assert_int_equal(ncclCommInitRankConfig(&c0, 2, id, 0, &config), ncclInProgress);
  assert_int_equal(ncclCommInitRankConfig(&other, 2, id, 0, &config), ncclInvalidUsage);
  assert_true(has(last_warning(), "joined twice"));
  assert_null(other);
  assert_int_equal(ncclCommGetAsyncError(c0, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInvalidUsage);
  assert_true(has(ncclGetLastError(c0), "rank 0 of 2 was claimed twice"));
  assert_int_equal(ncclCommDestroy(c0), ncclSuccess);
  /* Ranks that agree, with a second open rendezvous in front of theirs in
   * the pending list. */
  ncclUniqueId id2;
  ncclGetUniqueId(&id);
  ncclGetUniqueId(&id2);
  ncclComm_t lone;
  assert_int_equal(ncclCommInitRankConfig(&c0, 2, id, 0, &config), ncclInProgress);
  assert_int_equal(ncclCommInitRankConfig(&lone, 2, id2, 0, &config), ncclInProgress);
  assert_int_equal(ncclCommInitRankConfig(&c1, 2, id, 1, &config), ncclSuccess); /* the last completes */
  assert_int_equal(ncclCommGetAsyncError(c0, &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
  assert_rank_of(c0, 0, 2);
  assert_rank_of(c1, 1, 2);
  ncclComm_t both[2] = {c0, c1};
  check_allreduce(both, 2);
  destroy_all(both, 2);
  /* Destroying the lone rank withdraws it: id2 can be used afresh. */
  assert_int_equal(ncclCommDestroy(lone), ncclSuccess);
  assert_int_equal(ncclCommInitRankConfig(&lone, 1, id2, 0, &config), ncclSuccess);
  assert_rank_of(lone, 0, 1);
  assert_int_equal(ncclCommDestroy(lone), ncclSuccess);
}

/* Blocking ranks as threads, each with what it says: nranks, rank, and
 * ranksPerNode (its thread's ncclsimSetCommOptions; 0 leaves the
 * environment's). A rank starts once `after` ranks have returned. */
typedef struct {
  int nranks, rank, ranks_per_node, after;
  ncclUniqueId id;
  _Atomic int *done;
  ncclResult_t res;
  char msg[512];
} conflict_rank;

static void *conflict_main(void *p) {
  conflict_rank *c = p;
  while (atomic_load(c->done) < c->after) pause_ms(1);
  if (c->ranks_per_node) {
    ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
    o.ranksPerNode = c->ranks_per_node;
    ncclsimSetCommOptions(&o);
  }
  cudaSetDevice(c->rank % MAXR);
  ncclComm_t comm = NULL;
  c->res = ncclCommInitRank(&comm, c->nranks, c->id, c->rank);
  snprintf(c->msg, sizeof c->msg, "%s", ncclGetLastError(comm));
  if (comm) ncclCommDestroy(comm);
  atomic_fetch_add(c->done, 1);
  return NULL;
}

/* Runs n conflict_ranks on threads with one unique id: every one must end
 * with ncclInvalidUsage, not the ncclTimeout of NCCLSIM_TIMEOUT (120 s
 * here: a rank left to wait would say so), its message saying `want` and
 * `want2`. */
static void run_conflict(conflict_rank *c, int n, const char *want, const char *want2) {
  _Atomic int done = 0;
  pthread_t th[MAXR];
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclsimParamSet("TIMEOUT", "120");
  for (int i = 0; i < n; i++) {
    c[i].id = id;
    c[i].done = &done;
    assert_int_equal(pthread_create(&th[i], NULL, conflict_main, &c[i]), 0);
  }
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  for (int i = 0; i < n; i++)
    if (c[i].res != ncclInvalidUsage || !has(c[i].msg, want) || !has(c[i].msg, want2))
      fail_msg("thread %d (nranks %d, rank %d): %s: %s", i, c[i].nranks, c[i].rank, ncclGetErrorString(c[i].res),
               c[i].msg);
}

/* Ranks as threads that disagree on nranks: every one fails at once with
 * ncclInvalidUsage, naming both values, in whatever order they came. */
static void test_init_threads_disagree_nranks(void **state) {
  conflict_rank c[2] = {{.nranks = 2, .rank = 0}, {.nranks = 3, .rank = 1}};
  run_conflict(c, 2, "nranks", "3");
  for (int i = 0; i < 2; i++) assert_true(has(c[i].msg, "2"));
}

/* Rank 2 comes once ranks 0 and 1 have disagreed and left: it is refused
 * at once with their reason, not left to wait for them. */
static void test_init_threads_late_rank(void **state) {
  conflict_rank c[3] = {{.nranks = 3, .rank = 0}, {.nranks = 2, .rank = 1}, {.nranks = 3, .rank = 2, .after = 2}};
  run_conflict(c, 3, "nranks", "2");
  assert_true(has(c[2].msg, "rank 2 cannot join: the ranks of this unique id disagreed"));
}

/* Two threads claim rank 1: both fail, and so does rank 0. */
static void test_init_threads_rank_twice(void **state) {
  conflict_rank c[3] = {{.nranks = 3, .rank = 0}, {.nranks = 3, .rank = 1}, {.nranks = 3, .rank = 1}};
  run_conflict(c, 3, "rank 1", "twice");
}

/* Ranks whose layouts of nodes differ (ranksPerNode 2 and 1): all fail
 * once the last is in, each naming both values. */
static void test_init_threads_disagree_layout(void **state) {
  conflict_rank c[3] = {{.nranks = 3, .rank = 0, .ranks_per_node = 2},
                        {.nranks = 3, .rank = 1, .ranks_per_node = 2},
                        {.nranks = 3, .rank = 2, .ranks_per_node = 1}};
  run_conflict(c, 3, "rank 0 has ranksPerNode 2 and rank 2 has 1", "disagree");
}

/* A non-blocking rank whose peers never come: ncclCommGetAsyncError says
 * ncclInProgress, then ncclTimeout (and keeps saying it), the text names
 * the missing rank, and the comm can only be destroyed. */
static void test_nonblocking_init_timeout(void **state) {
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm;
  ncclsimParamSet("TIMEOUT", "0.2");
  assert_int_equal(ncclCommInitRankConfig(&comm, 2, id, 0, &config), ncclInProgress);
  ncclResult_t ae = ncclInProgress;
  for (int i = 0; i < 20000 * slowdown() && ae == ncclInProgress; i++) {
    assert_int_equal(ncclCommGetAsyncError(comm, &ae), ncclSuccess);
    if (ae == ncclInProgress) pause_ms(1);
  }
  ncclsimParamSet("TIMEOUT", NULL);
  assert_int_equal(ae, ncclTimeout);
  assert_true(has(ncclGetLastError(comm), "rank(s) [1] to join"));
  assert_int_equal(ncclCommGetAsyncError(comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclTimeout);
  ncclComm_t sub;
  assert_int_equal(ncclCommSplit(comm, 0, 0, &sub, NULL), ncclInvalidUsage);
  assert_true(has(last_warning(), "failed to initialize"));
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Blocking inits of every rank from one thread inside a group, on the
 * devices current at each call; the wait happens at ncclGroupEnd. */
static void test_init_in_group(void **state) {
  enum { N = 3 };
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comms[N];
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    cudaSetDevice(N - 1 - r);
    assert_int_equal(ncclCommInitRank(&comms[r], N, id, r), ncclSuccess);
  }
  cudaSetDevice(0);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    assert_rank_of(comms[r], r, N);
    assert_int_equal(device_of(comms[r]), N - 1 - r);
  }
  check_allreduce(comms, N);
  destroy_all(comms, N);
}

/* ncclCommInitRankScalable: every rank passes the same ids. */
static void test_init_scalable(void **state) {
  ncclUniqueId ids[2];
  ncclGetUniqueId(&ids[0]);
  ncclGetUniqueId(&ids[1]);
  ncclComm_t comms[2];
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommInitRankScalable(&comms[r], 2, r, 2, ids, NULL), ncclSuccess);
  }
  cudaSetDevice(0);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_rank_of(comms[1], 1, 2);
  check_allreduce(comms, 2);
  destroy_all(comms, 2);
}

/* A failed init inside a group fails the group (as ncclGroupErrCheck does
 * in NCCL), and a failed call joined nothing. */
static void test_init_error_fails_group(void **state) {
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm;
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommInitRank(&comm, 1, id, 5), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommInitRankScalable(&comm, 1, 0, 0, &id, NULL), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_rank_of(comm, 0, 1);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Allocation-failure loop over a 1-rank init inside a group: each injected
 * failure fails the init call or the group with ncclSystemError, leaves no
 * handle (or one that can only be destroyed), and leaks nothing. */
static void test_init_in_group_alloc_failure(void **state) {
  for (uint64_t n = 1; n < 200; n++) {
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    ncclComm_t comm = NULL;
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    ncclsimAllocFailAfter(n);
    ncclResult_t r = ncclCommInitRank(&comm, 1, id, 0);
    bool reached = ncclsimAllocFailAfter(0) >= n;
    ncclResult_t e = ncclGroupEnd();
    if (r != ncclSuccess) {
      assert_int_equal(r, ncclSystemError);
      assert_int_equal(e, ncclSystemError);
      assert_null(comm);
      continue;
    }
    assert_non_null(comm);
    if (e == ncclSuccess) assert_rank_of(comm, 0, 1);
    else assert_int_equal(e, ncclSystemError);
    assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
    if (!reached) return;
  }
  fail_msg("the init never completed without an injected failure");
}

/* Allocation-failure loop over a 2-rank blocking init inside a group, with
 * the failure injected into the last rank's init, which builds the clique.
 * Asking ncclCommGetAsyncError inside the group does not use the failure
 * up: ncclGroupEnd still reports it, and the comms keep saying it after. */
static void test_init_in_group_async_error_alloc_failure(void **state) {
  bool clique_failed = false;
  /* Where rank 1's call itself fails, rank 0 waits for it at ncclGroupEnd
   * until NCCLSIM_TIMEOUT: keep that short. */
  ncclsimParamSet("TIMEOUT", "0.2");
  for (uint64_t n = 1; n < 200; n++) {
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    ncclComm_t comms[2] = {NULL, NULL};
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclCommInitRank(&comms[0], 2, id, 0), ncclSuccess);
    ncclsimAllocFailAfter(n);
    ncclResult_t r = ncclCommInitRank(&comms[1], 2, id, 1);
    bool reached = ncclsimAllocFailAfter(0) >= n;
    ncclResult_t ae[2] = {ncclSuccess, ncclSuccess};
    if (r == ncclSuccess)
      for (int k = 0; k < 2; k++) assert_int_equal(ncclCommGetAsyncError(comms[k], &ae[k]), ncclSuccess);
    ncclResult_t e = ncclGroupEnd();
    if (r != ncclSuccess) { /* the call itself failed: rank 0 waited alone */
      assert_int_equal(r, ncclSystemError);
      assert_int_not_equal(e, ncclSuccess);
      assert_null(comms[1]);
      assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
      continue;
    }
    assert_int_equal(ae[0], ae[1]);
    if (ae[0] != ncclSuccess) {
      clique_failed = true;
      assert_int_equal(ae[0], ncclSystemError);
      assert_int_equal(e, ncclSystemError);
      for (int k = 0; k < 2; k++) {
        assert_int_equal(ncclCommGetAsyncError(comms[k], &ae[k]), ncclSuccess);
        assert_int_equal(ae[k], ncclSystemError);
      }
    } else {
      assert_int_equal(e, ncclSuccess);
      assert_rank_of(comms[1], 1, 2);
    }
    destroy_all(comms, 2);
    if (!reached) {
      ncclsimParamSet("TIMEOUT", NULL);
      assert_true(clique_failed);
      return;
    }
  }
  fail_msg("the init never completed without an injected failure");
}

/* The same failure on non-blocking comms: every ncclCommGetAsyncError
 * after the failed clique creation says it, not only the first. */
static void test_nonblocking_init_alloc_failure_keeps_error(void **state) {
  bool clique_failed = false;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclsimParamSet("TIMEOUT", "0.2");
  for (uint64_t n = 1; n < 200; n++) {
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    ncclComm_t comms[2] = {NULL, NULL};
    assert_int_equal(ncclCommInitRankConfig(&comms[0], 2, id, 0, &config), ncclInProgress);
    ncclsimAllocFailAfter(n);
    ncclResult_t r = ncclCommInitRankConfig(&comms[1], 2, id, 1, &config);
    bool reached = ncclsimAllocFailAfter(0) >= n;
    if (comms[1] == NULL) { /* the call failed before joining: rank 0 times out */
      assert_int_equal(r, ncclSystemError);
      assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
      continue;
    }
    for (int k = 0; k < 2; k++)
      for (int again = 0; again < 2; again++) {
        ncclResult_t ae = ncclInProgress;
        assert_int_equal(ncclCommGetAsyncError(comms[k], &ae), ncclSuccess);
        assert_int_equal(ae, r);
      }
    if (r != ncclSuccess) {
      assert_int_equal(r, ncclSystemError);
      clique_failed = true;
    }
    destroy_all(comms, 2);
    if (!reached) {
      ncclsimParamSet("TIMEOUT", NULL);
      assert_true(clique_failed);
      return;
    }
  }
  fail_msg("the init never completed without an injected failure");
}

static void test_init_all(void **state) {
  ncclComm_t comms[2];
  int ndev = 0;
  assert_int_equal(cudaGetDeviceCount(&ndev), cudaSuccess);
  assert_int_equal(ncclCommInitAll(NULL, 2, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommInitAll(comms, -1, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommInitAll(comms, 0, NULL), ncclSuccess);
  int out_of_range[2] = {0, ndev};
  assert_int_equal(ncclCommInitAll(comms, 2, out_of_range), ncclInvalidArgument);
  assert_true(has(last_warning(), "devlist[1]"));
  assert_int_equal(ncclCommInitAll(comms, ndev + 1, NULL), ncclInvalidArgument);
  int negative[2] = {-1, 0};
  assert_int_equal(ncclCommInitAll(comms, 2, negative), ncclInvalidArgument);
  int twice[2] = {1, 1};
  assert_int_equal(ncclCommInitAll(comms, 2, twice), ncclInvalidUsage);
  assert_true(has(last_warning(), "appears twice"));
  int devlist[2] = {2, 0};
  assert_int_equal(ncclCommInitAll(comms, 2, devlist), ncclSuccess);
  assert_int_equal(device_of(comms[0]), 2);
  assert_int_equal(device_of(comms[1]), 0);
  assert_rank_of(comms[0], 0, 2);
  check_allreduce(comms, 2);
  destroy_all(comms, 2);
}

/* ---- ncclCommSplit ---- */

static void test_split_arguments(void **state) {
  ncclComm_t comms[2], sub[2];
  init_all(comms, 2);
  assert_int_equal(ncclCommSplit(NULL, 0, 0, &sub[0], NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, NULL, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommSplit(comms[0], -2, 0, &sub[0], NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "color is -2"));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 1;
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub[0], &config), ncclInvalidArgument);
  config = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  config.blocking = -3;
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub[0], &config), ncclInvalidArgument);
  /* inside a group the failure also fails the group */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[1], -7, 0, &sub[1], NULL), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  /* none of the failed calls took part in a split: a real one pairs up */
  config.blocking = 1;
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommSplit(comms[r], 3, 0, &sub[r], &config), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  check_allreduce(sub, 2);
  destroy_all(sub, 2);
  destroy_all(comms, 2);
}

/* Split from one thread per rank (the call blocks until every rank has
 * called it): colors by parity, ranks ordered by key, the new
 * communicators work. */
static void split_body(rank_ctx *c) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclComm_t sub;
  assert_int_equal(ncclCommSplit(c->comm, c->rank % 2, -c->rank, &sub, &config), ncclSuccess);
  assert_rank_of(sub, c->rank < 2 ? 1 : 0, 2);
  int *b;
  cudaMalloc((void **)&b, sizeof(int));
  int v = c->rank + 1;
  cudaMemcpy(b, &v, sizeof v, cudaMemcpyHostToDevice);
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, sub, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  cudaMemcpy(&v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v, c->rank % 2 ? 2 + 4 : 1 + 3);
  cudaFree(b);
  assert_int_equal(ncclCommDestroy(sub), ncclSuccess);
}

static void test_split_threads(void **state) { assert_int_equal(run_ranks(4, split_body, NULL), 0); }

/* Two splits of the same parent in one group: the n-th split of each rank
 * meets the n-th of the others, even with both rounds open at once. */
static void test_two_splits_in_one_group(void **state) {
  ncclComm_t comms[2], a[2], b[2];
  init_all(comms, 2);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &a[0], NULL), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[0], 0, 1, &b[0], NULL), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[1], 0, 0, &a[1], NULL), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[1], 0, 0, &b[1], NULL), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_rank_of(a[0], 0, 2);
  assert_rank_of(b[0], 1, 2); /* key 1 > key 0 */
  assert_rank_of(b[1], 0, 2);
  check_allreduce(a, 2);
  ncclComm_t b_by_rank[2] = {b[1], b[0]};
  check_allreduce(b_by_rank, 2);
  destroy_all(a, 2);
  destroy_all(b, 2);
  destroy_all(comms, 2);
}

/* A rank that splits alone gives up after NCCLSIM_TIMEOUT, naming the
 * parent ranks that never came. */
static void test_split_timeout(void **state) {
  ncclComm_t comms[3], sub;
  init_all(comms, 3);
  assert_int_equal(ncclsimParamSet("TIMEOUT", "0.3"), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[1], 0, 0, &sub, NULL), ncclTimeout);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_null(sub);
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(comms[1], &ae), ncclSuccess);
  assert_int_equal(ae, ncclTimeout);
  const char *msg = ncclGetLastError(comms[1]);
  assert_true(has(msg, "ncclCommSplit: rank 1 waited for rank(s) [0,2]"));
  assert_true(has(msg, "NCCLSIM_TIMEOUT expired"));
  destroy_all(comms, 3);
}

typedef struct {
  ncclComm_t comm, sub;
  ncclResult_t res;
  char error[512];
} split_arg;

static void *split_thread(void *p) {
  split_arg *a = p;
  cudaSetDevice(device_of(a->comm));
  a->res = ncclCommSplit(a->comm, 0, 0, &a->sub, NULL);
  snprintf(a->error, sizeof a->error, "%s", ncclGetLastError(a->comm));
  return NULL;
}

/* Revoke is local to the rank (NCCL 2.30): a split waiting on the parent
 * goes on waiting, and the revoked rank may still split (NCCL allows
 * destroy, split and shrink after revoke), which completes it. A revoked
 * comm refuses operations (ncclInvalidUsage), finalize and a second revoke
 * (ncclInvalidArgument). */
static void test_split_revoked_parent(void **state) {
  ncclComm_t comms[2];
  init_all(comms, 2);
  assert_int_equal(ncclsimParamSet("TIMEOUT", scaled_str(60).s), ncclSuccess);
  assert_int_equal(ncclCommRevoke(comms[1], 1), ncclInvalidArgument);
  assert_true(has(last_warning(), "revokeFlags is 1"));
  split_arg a = {comms[0], NULL, ncclSuccess, ""};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, split_thread, &a), 0);
  pause_ms(20); /* usually lets the thread start waiting; either order gives the same result */
  assert_int_equal(ncclCommRevoke(comms[1], NCCL_REVOKE_DEFAULT), ncclSuccess);
  int *b;
  cudaSetDevice(1);
  cudaMalloc((void **)&b, sizeof(int));
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, comms[1], 0), ncclInvalidUsage);
  assert_true(has(last_warning(), "revoked"));
  assert_int_equal(ncclCommFinalize(comms[1]), ncclInvalidArgument);
  assert_int_equal(ncclCommRevoke(comms[1], 0), ncclInvalidArgument);
  assert_true(has(last_warning(), "already revoked"));
  ncclComm_t sub;
  assert_int_equal(ncclCommSplit(comms[1], 0, 0, &sub, NULL), ncclSuccess);
  pthread_join(th, NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_int_equal(a.res, ncclSuccess);
  ncclComm_t subs[2] = {a.sub, sub};
  check_allreduce(subs, 2);
  destroy_all(subs, 2);
  cudaFree(b);
  destroy_all(comms, 2);
}

/* A rank that aborts its comm can no longer split: a split waiting for it
 * ends at once with ncclRemoteError, naming it, not at NCCLSIM_TIMEOUT. */
static void test_split_peer_aborted(void **state) {
  ncclComm_t comms[2];
  init_all(comms, 2);
  assert_int_equal(ncclsimParamSet("TIMEOUT", scaled_str(60).s), ncclSuccess);
  split_arg a = {comms[0], NULL, ncclSuccess, ""};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, split_thread, &a), 0);
  pause_ms(20);
  assert_int_equal(ncclCommAbort(comms[1]), ncclSuccess);
  pthread_join(th, NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_int_equal(a.res, ncclRemoteError);
  assert_null(a.sub);
  assert_true(has(a.error, "ncclCommSplit: rank 0 waited for rank(s) [1]"));
  assert_true(has(a.error, "rank 1 was destroyed or aborted"));
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
}

/* Allocation-failure loop over the split of a 1-rank communicator, outside
 * and inside a group: each failure is ncclSystemError with no new handle;
 * the parent stays usable for the next split. */
static void split_alloc_loop(bool grouped) {
  ncclComm_t comm;
  init_all(&comm, 1);
  for (uint64_t n = 1; n < 200; n++) {
    ncclComm_t sub = (ncclComm_t)&comm;
    if (grouped) assert_int_equal(ncclGroupStart(), ncclSuccess);
    ncclsimAllocFailAfter(n);
    ncclResult_t r = ncclCommSplit(comm, 0, 0, &sub, NULL);
    bool reached = ncclsimAllocFailAfter(0) >= n;
    if (grouped) {
      ncclResult_t e = ncclGroupEnd();
      if (r == ncclSuccess) r = e;
      else assert_int_equal(e, r);
    }
    if (r != ncclSuccess) {
      assert_int_equal(r, ncclSystemError);
      assert_null(sub);
      continue;
    }
    assert_rank_of(sub, 0, 1);
    assert_int_equal(ncclCommDestroy(sub), ncclSuccess);
    if (!reached) {
      assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
      return;
    }
  }
  fail_msg("the split never completed without an injected failure");
}

static void test_split_alloc_failure(void **state) { split_alloc_loop(false); }
static void test_split_alloc_failure_in_group(void **state) { split_alloc_loop(true); }

/* Two colors, the failure injected while the last rank builds them: both
 * ranks see ncclSystemError and no handle, whichever color failed (a color
 * already built is destroyed again). A failure of the last rank's own
 * call leaves the first waiting until NCCLSIM_TIMEOUT. */
static void test_split_two_colors_alloc_failure(void **state) {
  ncclsimParamSet("TIMEOUT", "0.3");
  for (uint64_t n = 1; n < 200; n++) {
    ncclComm_t comms[2], sub[2] = {NULL, NULL};
    init_all(comms, 2);
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub[0], NULL), ncclSuccess);
    ncclsimAllocFailAfter(n);
    ncclResult_t r = ncclCommSplit(comms[1], 1, 0, &sub[1], NULL);
    bool reached = ncclsimAllocFailAfter(0) >= n;
    ncclResult_t e = ncclGroupEnd();
    if (r == ncclSuccess && e == ncclSuccess) {
      assert_rank_of(sub[0], 0, 1);
      assert_rank_of(sub[1], 0, 1);
      destroy_all(sub, 2);
    } else {
      assert_int_equal(e, ncclSystemError);
      assert_null(sub[0]);
      assert_null(sub[1]);
    }
    destroy_all(comms, 2);
    if (!reached) {
      ncclsimParamSet("TIMEOUT", NULL);
      return;
    }
  }
  fail_msg("the split never completed without an injected failure");
}

/* Destroying a comm inside the group that holds its split drops the split:
 * before the round completes the rank withdraws from it; after, the
 * communicator built for it is destroyed, while the others' stay good.
 * Other comms' work in the group is kept. */
static void test_destroy_drops_pending_split(void **state) {
  ncclComm_t comms[2], one, sub[2] = {NULL, NULL};
  init_all(comms, 2);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub[0], NULL), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_null(sub[0]);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);

  init_all(comms, 2);
  cudaSetDevice(2);
  assert_int_equal(ncclCommInitAll(&one, 1, (int[]){2}), ncclSuccess);
  int *b;
  cudaMalloc((void **)&b, 2 * sizeof(int));
  cudaMemcpy(b, (int[]){5, 0}, 2 * sizeof(int), cudaMemcpyHostToDevice);
  cudaSetDevice(0);
  int *b0;
  cudaMalloc((void **)&b0, sizeof(int));
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  cudaSetDevice(2);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, one, 0), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclAllReduce(b0, b0, 1, ncclInt32, ncclSum, comms[0], 0), ncclSuccess);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommSplit(comms[r], 0, 0, &sub[r], NULL), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess); /* its allreduce and split go too */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_null(sub[0]);
  assert_rank_of(sub[1], 1, 2);
  cudaSetDevice(2);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  int v[2];
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 5);
  cudaFree(b);
  cudaSetDevice(0);
  cudaFree(b0);
  assert_int_equal(ncclCommDestroy(sub[1]), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  assert_int_equal(ncclCommDestroy(one), ncclSuccess);
}

/* ---- ncclCommShrink ---- */

static void test_shrink_arguments(void **state) {
  ncclComm_t comms[3], sub;
  init_all(comms, 3);
  int one[1] = {1};
  assert_int_equal(ncclCommShrink(NULL, one, 1, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_int_equal(ncclCommShrink(comms[0], one, 1, NULL, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_int_equal(ncclCommShrink(comms[0], one, -1, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  /* NCCL: a non-NULL list of at least one rank */
  assert_int_equal(ncclCommShrink(comms[0], NULL, 1, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_int_equal(ncclCommShrink(comms[0], one, 0, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_true(has(last_warning(), "excludeRanksCount 0"));
  assert_int_equal(ncclCommShrink(comms[0], NULL, 0, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  int all[3] = {0, 1, 2};
  assert_int_equal(ncclCommShrink(comms[0], all, 3, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_int_equal(ncclCommShrink(comms[0], one, 1, &sub, NULL, 2), ncclInvalidArgument);
  assert_true(has(last_warning(), "shrinkFlags 2"));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  assert_int_equal(ncclCommShrink(comms[0], one, 1, &sub, &config, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  int range[2] = {1, 3};
  assert_int_equal(ncclCommShrink(comms[0], range, 2, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_true(has(last_warning(), "excludeRanksList holds 3, not a rank"));
  range[1] = -1;
  assert_int_equal(ncclCommShrink(comms[0], range, 2, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  range[1] = 1;
  assert_int_equal(ncclCommShrink(comms[0], range, 2, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_true(has(last_warning(), "holds 1, listed twice"));
  assert_int_equal(range[0], 1); /* the caller's list is left as it was */
  /* NCCL: a rank in its own exclude list is ncclInvalidArgument */
  assert_int_equal(ncclCommShrink(comms[1], one, 1, &sub, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  assert_true(has(last_warning(), "holds 1, the caller"));
  assert_null(sub);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommShrink(comms[0], one, 1, &sub, NULL, 9), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  destroy_all(comms, 3);
}

/* The survivors of a shrink keep their order, with either flag. */
static void test_shrink(void **state) {
  enum { N = 4 };
  ncclComm_t comms[N], sub[N - 1];
  init_all(comms, N);
  int excl[1] = {1};
  int keep[N - 1] = {0, 2, 3};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < N - 1; i++)
    assert_int_equal(ncclCommShrink(comms[keep[i]], excl, 1, &sub[i], NULL,
                                    i ? NCCL_SHRINK_ABORT : NCCL_SHRINK_DEFAULT), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int i = 0; i < N - 1; i++) {
    assert_rank_of(sub[i], i, N - 1);
    assert_int_equal(device_of(sub[i]), keep[i]);
  }
  check_allreduce(sub, N - 1);
  destroy_all(sub, N - 1);
  destroy_all(comms, N);
}

/* ---- finalize, destroy, abort, revoke, suspend ---- */

static void test_finalize(void **state) {
  ncclComm_t comms[2], one, sub[2];
  init_all(comms, 2);
  assert_int_equal(ncclCommFinalize(NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommDestroy(NULL), ncclSuccess);
  assert_int_equal(ncclCommAbort(NULL), ncclSuccess);
  /* A split job of the comm in this thread's open group: finalize would
   * wait for it forever, so it is refused. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub[0], NULL), ncclSuccess);
  assert_int_equal(ncclCommFinalize(comms[0]), ncclInvalidUsage);
  assert_true(has(last_warning(), "call ncclGroupEnd first"));
  assert_int_equal(ncclCommSplit(comms[1], 0, 0, &sub[1], NULL), ncclSuccess);
  assert_int_equal(ncclCommFinalize(comms[1]), ncclInvalidUsage); /* found behind comms[0]'s job */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  check_allreduce(sub, 2);
  destroy_all(sub, 2);
  /* Another comm's task in the open group does not hold this one. */
  cudaSetDevice(3);
  assert_int_equal(ncclCommInitAll(&one, 1, (int[]){3}), ncclSuccess);
  int *b;
  cudaMalloc((void **)&b, sizeof(int));
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, one, 0), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclCommFinalize(comms[0]), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(ncclCommFinalize(comms[1]), ncclSuccess);
  assert_int_equal(ncclCommFinalize(comms[0]), ncclInvalidUsage);
  assert_true(has(last_warning(), "finalized"));
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, comms[0], 0), ncclInvalidUsage);
  cudaSetDevice(3);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  cudaFree(b);
  cudaSetDevice(0);
  assert_int_equal(ncclCommAbort(one), ncclSuccess);
  destroy_all(comms, 2);
}

static atomic_int release_host_fn;

static void blocking_host_fn(void *arg) {
  (void)arg;
  while (!atomic_load(&release_host_fn)) pause_ms(1);
}

static void *release_after_abort(void *p) {
  sim_clique *c = p;
  while (!atomic_load(&c->aborted)) pause_ms(1);
  atomic_store(&release_host_fn, 1);
  return NULL;
}

/* Destroy waits for the rank's queued work; if it is still queued after
 * NCCLSIM_TIMEOUT, destroy aborts it (it then fails fast) instead of
 * hanging. The work is held behind a host function that a helper releases
 * once destroy has aborted the communicator. */
static void test_destroy_aborts_stuck_work(void **state) {
  ncclComm_t comm;
  init_all(&comm, 1);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  int *b;
  cudaMalloc((void **)&b, sizeof(int));
  atomic_store(&release_host_fn, 0);
  assert_int_equal(cudaLaunchHostFunc(s, blocking_host_fn, NULL), cudaSuccess);
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, comm, s), ncclSuccess);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, release_after_abort, comm->clique), 0);
  ncclsimParamSet("TIMEOUT", "0.2");
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_true(has(last_warning(), "still has 1 operation(s) in flight after NCCLSIM_TIMEOUT"));
  pthread_join(th, NULL);
  assert_int_not_equal(cudaStreamSynchronize(s), cudaSuccess); /* the aborted allreduce */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);     /* reported once */
  cudaFree(b);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* NCCLSIM_FAULT with both ranks alive: rank 1 stops at its first
 * operation; rank 0's send to it times out (the dump lists rank 1 as
 * stopped) and rank 1's own receive fails with ncclRemoteError. */
static void test_fault_rank_still_alive(void **state) {
  ncclComm_t comms[2];
  assert_int_equal(ncclsimParamSet("FAULT", "1:1"), ncclSuccess);
  init_all(comms, 2);
  ncclsimParamSet("FAULT", NULL);
  ncclsimParamSet("TIMEOUT", "0.3");
  int *b[2];
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], 4 * sizeof(int));
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclSend(b[0], 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b[1], 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(ncclRecv(b[1], 4, ncclInt32, 0, comms[1], 0), ncclSuccess); /* still dead */
  ncclResult_t want[2] = {ncclTimeout, ncclRemoteError};
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
    ncclResult_t ae;
    assert_int_equal(ncclCommGetAsyncError(comms[r], &ae), ncclSuccess);
    assert_int_equal(ae, want[r]);
    cudaFree(b[r]);
  }
  ncclsimParamSet("TIMEOUT", NULL);
  assert_true(has(ncclGetLastError(comms[1]), "NCCLSIM_FAULT"));
  cudaSetDevice(0);
  destroy_all(comms, 2);
}

/* ---- queries ---- */

static void test_queries(void **state) {
  ncclComm_t comm;
  init_all(&comm, 1);
  int v;
  uint64_t u = 7;
  assert_int_equal(ncclCommCount(NULL, &v), ncclInvalidArgument);
  assert_int_equal(ncclCommCount(comm, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "output pointer is NULL"));
  assert_int_equal(ncclCommCuDevice(comm, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommUserRank(comm, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemTotal, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemSuspend, &u), ncclSuccess);
  assert_true(u > 0); /* its per-peer state, which ncclCommSuspend releases */
  uint64_t susp = u;
  u = 7;
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &u), ncclSuccess);
  assert_int_equal(u, 0);
  uint64_t total, persist;
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemTotal, &total), ncclSuccess);
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemPersist, &persist), ncclSuccess);
  assert_int_equal(total, persist + susp);
  assert_int_equal(ncclCommMemStats(comm, (ncclCommMemStat_t)9, &u), ncclInvalidArgument);
  assert_true(has(last_warning(), "stat 9"));
  assert_string_equal(ncclGetErrorString((ncclResult_t)99), "unknown result code");
  assert_int_equal(ncclGetVersion(NULL), ncclInvalidArgument);
  assert_int_equal(ncclGetVersion(&v), ncclSuccess);
  assert_int_equal(v, NCCL_VERSION_CODE);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Something that is not a live communicator (here, zeroed memory of the
 * right size) is refused by every entry point, not dereferenced further. */
static void test_not_a_communicator(void **state) {
  struct ncclComm fake;
  memset(&fake, 0, sizeof fake);
  int v;
  ncclResult_t ae;
  ncclComm_t sub;
  assert_int_equal(ncclCommCount(&fake, &v), ncclInvalidArgument);
  assert_true(has(last_warning(), "not a live communicator"));
  assert_int_equal(ncclCommSplit(&fake, 0, 0, &sub, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommGetAsyncError(&fake, &ae), ncclInvalidArgument);
  assert_int_equal(ncclCommDestroy(&fake), ncclInvalidArgument);
  assert_int_equal(ncclCommAbort(&fake), ncclInvalidArgument);
  /* ncclGetLastError of such a handle is the thread's last warning */
  assert_true(has(ncclGetLastError(&fake), "not a live communicator"));
}

/* Copies, since the texts live in the thread's own storage. */
static void *fresh_thread_last_error(void *p) {
  char(*out)[64] = p;
  struct ncclComm fake;
  memset(&fake, 0, sizeof fake);
  snprintf(out[0], sizeof out[0], "[%s]", ncclGetLastError(NULL));
  snprintf(out[1], sizeof out[1], "[%s]", ncclGetLastError(&fake));
  return NULL;
}

/* A thread that has had no warning gets "" from ncclGetLastError, for no
 * communicator as for something that is not one. */
static void test_last_error_of_fresh_thread(void **state) {
  char out[2][64] = {"x", "x"};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fresh_thread_last_error, out), 0);
  pthread_join(th, NULL);
  assert_string_equal(out[0], "[]");
  assert_string_equal(out[1], "[]");
}

/* ---- groups ---- */

/* Only the outermost ncclGroupEnd launches the group's work. */
static void test_nested_group(void **state) {
  ncclComm_t comm;
  init_all(&comm, 1);
  int *b;
  cudaMalloc((void **)&b, 2 * sizeof(int));
  cudaMemcpy(b, (int[]){42, 0}, 2 * sizeof(int), cudaMemcpyHostToDevice);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  int v[2];
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 0); /* not launched yet */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 42);
  cudaFree(b);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* ncclGroupSimulateEnd: sum over the operations of NCCLSIM_LAT_US plus
 * bytes / NCCLSIM_BW_GBS; nothing is launched, and the comms stay usable. */
static void test_simulate_end(void **state) {
  enum { COUNT = 1024 };
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER, bad = NCCL_SIM_INFO_INITIALIZER;
  bad.magic = 0;
  assert_int_equal(ncclGroupSimulateEnd(NULL), ncclInvalidArgument);
  assert_int_equal(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
  assert_int_equal(ncclGroupSimulateEnd(&info), ncclInvalidUsage);
  assert_true(has(last_warning(), "not inside a group"));
  ncclComm_t comms[2];
  init_all(comms, 2);
  float *b[2];
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], COUNT * sizeof(float));
    cudaMemset(b[r], 0, COUNT * sizeof(float));
  }
  ncclsimParamSet("LAT_US", "10");
  ncclsimParamSet("BW_GBS", "1");
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclAllReduce(b[r], b[r], COUNT, ncclFloat32, ncclSum, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupSimulateEnd(&info), ncclSuccess); /* inner */
  assert_true(info.estimatedTime < 0);                         /* untouched: still undefined */
  assert_int_equal(ncclGroupSimulateEnd(&info), ncclSuccess);
  /* allreduce over 2 ranks: each moves 2 * (n - 1) / n * 4096 bytes */
  assert_float_equal(info.estimatedTime, 2 * (10e-6 + 4096 / 1e9), 1e-9);
  ncclsimParamSet("BW_GBS", "0"); /* no bandwidth term */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclAllReduce(b[r], b[r], COUNT, ncclFloat32, ncclSum, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupSimulateEnd(&info), ncclSuccess);
  assert_float_equal(info.estimatedTime, 2 * 10e-6, 1e-9);
  ncclsimParamSet("LAT_US", NULL);
  ncclsimParamSet("BW_GBS", NULL);
  cudaSetDevice(0);
  check_allreduce(comms, 2);
  for (int r = 0; r < 2; r++) cudaFree(b[r]);
  destroy_all(comms, 2);
}

/* A stream that is not live, or that belongs to another device than the
 * comm's, is refused with ncclUnhandledCudaError; inside a group that
 * fails the group, and nothing of it is launched. */
static void test_bad_stream(void **state) {
  ncclComm_t comm;
  init_all(&comm, 1);
  int *b;
  cudaMalloc((void **)&b, 2 * sizeof(int));
  cudaMemcpy(b, (int[]){9, 0}, 2 * sizeof(int), cudaMemcpyHostToDevice);
  cudaStream_t dead, other;
  assert_int_equal(cudaStreamCreate(&dead), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(dead), cudaSuccess);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, dead), ncclUnhandledCudaError);
  assert_true(has(last_warning(), "not a live stream"));
  cudaSetDevice(1);
  assert_int_equal(cudaStreamCreate(&other), cudaSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, other), ncclUnhandledCudaError);
  assert_true(has(last_warning(), "belongs to device 1"));
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, 0), ncclSuccess);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, other), ncclUnhandledCudaError);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, dead), ncclUnhandledCudaError);
  assert_int_equal(ncclGroupEnd(), ncclUnhandledCudaError); /* the first error */
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  int v[2];
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 0);
  assert_int_equal(cudaStreamDestroy(other), cudaSuccess);
  cudaFree(b);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* Work queued behind a failed operation on a stream is not run: it moves
 * no data and does not replace the comm's first error; the stream reports
 * the failure once, and then works again. */
static void test_poisoned_stream(void **state) {
  ncclComm_t comm;
  init_all(&comm, 1);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  char *p;
  int *b;
  cudaMalloc((void **)&p, 16);
  cudaMalloc((void **)&b, 2 * sizeof(int));
  cudaMemcpy(b, (int[]){7, 0}, 2 * sizeof(int), cudaMemcpyHostToDevice);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(p, 16, ncclInt8, 0, comm, s), ncclSuccess);
  assert_int_equal(ncclRecv(p, 8, ncclInt8, 0, comm, s), ncclSuccess); /* count mismatch */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, s), ncclSuccess);
  assert_int_not_equal(cudaStreamSynchronize(s), cudaSuccess);
  int v[2];
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 0);
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInvalidUsage);
  sim_clear_warning(); /* else ncclGetLastError gives this thread's last warning */
  assert_true(has(ncclGetLastError(comm), "mismatched point-to-point pair"));
  assert_int_equal(ncclAllReduce(b, b + 1, 1, ncclInt32, ncclSum, comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaMemcpy(v, b, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v[1], 7);
  cudaFree(p);
  cudaFree(b);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* ---- per-thread communicator options ---- */

static ncclsimCommOptions_t opts(int gin, int railed, int host_rma, int dev_api, int rpn) {
  return (ncclsimCommOptions_t){gin, railed, host_rma, dev_api, rpn};
}

static void test_comm_options(void **state) {
  const int U = NCCLSIM_OPT_UNSET;
  ncclsimCommOptions_t bad[] = {opts(1, U, U, U, U), opts(5, U, U, U, U), opts(U, 1, U, U, U),
                                opts(0, 7, U, U, U), opts(2, 3, 2, U, U), opts(U, U, 0, -1, U),
                                opts(U, U, 1, 2, U), opts(U, U, U, 0, -1)};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ncclsimSetCommOptions(&bad[i]), ncclInvalidArgument);
    assert_true(has(last_warning(), "invalid options"));
  }
  ncclsimCommOptions_t o = opts(NCCL_GIN_TYPE_PROXY, NCCL_GIN_TYPE_GDAKI, 0, 1, 1);
  assert_int_equal(ncclsimSetCommOptions(&o), ncclSuccess);
  ncclComm_t comms[2];
  init_all(comms, 2);
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  assert_int_equal(ncclCommQueryProperties(comms[1], &p), ncclSuccess);
  assert_int_equal(p.ginType, NCCL_GIN_TYPE_PROXY);
  assert_int_equal(p.railedGinType, NCCL_GIN_TYPE_GDAKI);
  assert_false(p.hostRmaSupport);
  assert_int_equal(p.nLsaTeams, 2); /* one rank per node */
  destroy_all(comms, 2);
  o = opts(U, U, U, U, 4); /* more ranks per node than ranks: one node */
  assert_int_equal(ncclsimSetCommOptions(&o), ncclSuccess);
  init_all(comms, 2);
  assert_int_equal(ncclCommQueryProperties(comms[0], &p), ncclSuccess);
  assert_int_equal(p.nLsaTeams, 1);
  destroy_all(comms, 2);
  assert_int_equal(ncclsimSetCommOptions(NULL), ncclSuccess);
}

/* ---- argument checks shared by every operation ---- */

static void test_buffer_checks(void **state) {
  ncclComm_t comm;
  cudaSetDevice(1);
  assert_int_equal(ncclCommInitAll(&comm, 1, (int[]){1}), ncclSuccess);
  int *d;
  cudaMalloc((void **)&d, 16);
  assert_int_equal(ncclAllReduce(d, d, SIZE_MAX / 2, ncclInt32, ncclSum, comm, 0), ncclInvalidArgument);
  assert_true(has(last_warning(), "overflows"));
  assert_string_equal(sim_dtype_name((ncclDataType_t)ncclNumTypes), "(invalid datatype)");
  assert_string_equal(sim_dtype_name(ncclFloat8e5m2), "ncclFloat8e5m2");
  /* Pinned host memory and memory ncclsim did not allocate are host
   * memory: usable from a communicator on any device. */
  int *pinned, plain[2] = {11, 0};
  assert_int_equal(cudaMallocHost((void **)&pinned, 2 * sizeof(int)), cudaSuccess);
  pinned[0] = 13;
  pinned[1] = 0;
  assert_int_equal(ncclAllReduce(pinned, pinned + 1, 1, ncclInt32, ncclSum, comm, 0), ncclSuccess);
  assert_int_equal(ncclAllReduce(plain, plain + 1, 1, ncclInt32, ncclSum, comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(pinned[1], 13);
  assert_int_equal(plain[1], 11);
  cudaFreeHost(pinned);
  cudaFree(d);
  cudaSetDevice(0);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]); /* e.g. "test_split*" */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_arguments),
      cmocka_unit_test(test_init_conflicting_joins),
      cmocka_unit_test(test_init_threads_disagree_nranks),
      cmocka_unit_test(test_init_threads_late_rank),
      cmocka_unit_test(test_init_threads_rank_twice),
      cmocka_unit_test(test_init_threads_disagree_layout),
      cmocka_unit_test(test_nonblocking_init_timeout),
      cmocka_unit_test(test_init_in_group),
      cmocka_unit_test(test_init_scalable),
      cmocka_unit_test(test_init_error_fails_group),
      cmocka_unit_test(test_init_in_group_alloc_failure),
      cmocka_unit_test(test_init_in_group_async_error_alloc_failure),
      cmocka_unit_test(test_nonblocking_init_alloc_failure_keeps_error),
      cmocka_unit_test(test_init_all),
      cmocka_unit_test(test_split_arguments),
      cmocka_unit_test(test_split_threads),
      cmocka_unit_test(test_two_splits_in_one_group),
      cmocka_unit_test(test_split_timeout),
      cmocka_unit_test(test_split_revoked_parent),
      cmocka_unit_test(test_split_peer_aborted),
      cmocka_unit_test(test_split_alloc_failure),
      cmocka_unit_test(test_split_alloc_failure_in_group),
      cmocka_unit_test(test_split_two_colors_alloc_failure),
      cmocka_unit_test(test_destroy_drops_pending_split),
      cmocka_unit_test(test_shrink_arguments),
      cmocka_unit_test(test_shrink),
      cmocka_unit_test(test_finalize),
      cmocka_unit_test(test_destroy_aborts_stuck_work),
      cmocka_unit_test(test_fault_rank_still_alive),
      cmocka_unit_test(test_queries),
      cmocka_unit_test(test_not_a_communicator),
      cmocka_unit_test(test_last_error_of_fresh_thread),
      cmocka_unit_test(test_nested_group),
      cmocka_unit_test(test_simulate_end),
      cmocka_unit_test(test_bad_stream),
      cmocka_unit_test(test_poisoned_stream),
      cmocka_unit_test(test_comm_options),
      cmocka_unit_test(test_buffer_checks),
  };
  return cmocka_run_group_tests_name("sim_comm", tests, NULL, NULL);
}
