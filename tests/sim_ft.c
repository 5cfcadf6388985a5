/*
 * tests/sim_ft.c — fault tolerance in ncclsim, as NCCL 2.30 does it:
 * ncclCommGetUniqueId and ncclCommGrow, ncclCommRevoke, ncclCommShrink after
 * a rank's death (NCCLSIM_FAULT) with and without NCCL_SHRINK_ABORT,
 * ncclCommSuspend and ncclCommResume. Ranks as threads here; as processes
 * in tests/sim_procs.c. docs/ncclsim.md ("Fault tolerance") states each rule
 * and where ncclsim checks more than NCCL.
 */
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
#include "sim_ranks.h"
#include "sim_comms.h"
#include "slow.h"

enum { MAXR = 8 };

static bool has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }
static const char *last_warning(void) { return ncclGetLastError(NULL); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pause_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* comms[0..n) are ranks 0..n-1 of one communicator; checks the sum of an
 * allreduce everywhere. */
static void check_allreduce(ncclComm_t *comms, int n) { check_allreduce_ranks(comms, n, true); }

/* Two non-blocking ranks, driven from this thread: the first init returns
 * ncclInProgress, the second completes both. */
static void nb_pair(ncclComm_t comms[2]) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclUniqueId id;
  ncclResult_t ae;
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitRankConfig(&comms[0], 2, id, 0, &cfg), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclCommInitRankConfig(&comms[1], 2, id, 1, &cfg), ncclSuccess);
  assert_int_equal(ncclCommGetAsyncError(comms[0], &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
}

/* ------------------------------------------------------------------ grow */

/* One thread grows two ranks to four inside a group: the coordinator
 * passes the id, the other existing rank NULL, the new ranks the id and
 * their ranks. Existing ranks keep theirs; the parent stays usable; an id
 * asked for twice is the same; a consumed id serves no second grow. */
static void test_grow_in_group(void **state) {
  ncclComm_t old[2], grown[4];
  init_all(old, 2);
  ncclUniqueId id, id2;
  assert_int_equal(ncclCommGetUniqueId(old[0], &id), ncclSuccess);
  /* Asked again before the grow: as NCCL 2.30.7 (measured on a GPU), it
   * succeeds; the id is the same one. */
  assert_int_equal(ncclCommGetUniqueId(old[1], &id2), ncclSuccess);
  assert_memory_equal(&id, &id2, sizeof id);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclCommGrow(old[0], 4, &id, -1, &grown[0], NULL), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclCommGrow(old[1], 4, NULL, -1, &grown[1], NULL), ncclSuccess);
  for (int r = 2; r < 4; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommGrow(NULL, 4, &id, r, &grown[r], NULL), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 4; r++) assert_int_equal(device_of(grown[r]), r);
  check_allreduce(grown, 4);
  check_allreduce(old, 2); /* the parent is as it was */
  /* The grow consumed the id: a new one may be made, by another rank. */
  assert_int_equal(ncclCommGetUniqueId(old[1], &id2), ncclSuccess);
  /* A consumed id joins nobody: the new rank waits out NCCLSIM_TIMEOUT. */
  ncclsimParamSet("TIMEOUT", "0.3");
  ncclComm_t late = NULL;
  cudaSetDevice(4);
  assert_int_equal(ncclCommGrow(NULL, 4, &id, 2, &late, NULL), ncclTimeout);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_non_null(late);
  assert_true(has(ncclGetLastError(late), "rank(s) [0,1,3]"));
  assert_true(has(ncclGetLastError(late), "an id serves one grow only"));
  assert_int_equal(ncclCommDestroy(late), ncclSuccess);
  destroy_all(grown, 4);
  destroy_all(old, 2);
}

/* Ranks as threads: each existing rank blocks in ncclCommGrow until the
 * new rank, a thread the coordinator starts with the id, joins. */
typedef struct {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclResult_t res;
  int sum;
} grow_arg;

static int allreduce_rank(ncclComm_t comm) {
  int r, *b, v;
  ncclCommUserRank(comm, &r);
  cudaMalloc((void **)&b, sizeof(int));
  v = r + 1;
  cudaMemcpy(b, &v, sizeof v, cudaMemcpyHostToDevice);
  if (ncclAllReduce(b, b, 1, ncclInt32, ncclSum, comm, 0) != ncclSuccess || cudaStreamSynchronize(0) != cudaSuccess)
    v = -1;
  else cudaMemcpy(&v, b, sizeof v, cudaMemcpyDeviceToHost);
  cudaFree(b);
  return v;
}

static void *new_rank_main(void *p) {
  grow_arg *a = p;
  cudaSetDevice(2);
  a->res = ncclCommGrow(NULL, 3, &a->id, 2, &a->comm, NULL);
  if (a->res == ncclSuccess) {
    a->sum = allreduce_rank(a->comm);
    ncclCommDestroy(a->comm);
  }
  return NULL;
}

static void grow_body(rank_ctx *c) {
  grow_arg *a = c->arg;
  pthread_t th;
  if (c->rank == 0) {
    assert_int_equal(ncclCommGetUniqueId(c->comm, &a->id), ncclSuccess);
    assert_int_equal(pthread_create(&th, NULL, new_rank_main, a), 0);
  }
  ncclComm_t grown;
  assert_int_equal(ncclCommGrow(c->comm, 3, c->rank == 0 ? &a->id : NULL, -1, &grown, NULL), ncclSuccess);
  assert_rank_of(grown, c->rank, 3);
  assert_int_equal(allreduce_rank(grown), 6);
  assert_int_equal(ncclCommDestroy(grown), ncclSuccess);
  if (c->rank == 0) {
    pthread_join(th, NULL);
    assert_int_equal(a->res, ncclSuccess);
    assert_int_equal(a->sum, 6);
  }
}

static void test_grow_threads(void **state) {
  grow_arg a;
  memset(&a, 0, sizeof a);
  assert_int_equal(run_ranks(2, grow_body, &a), 0);
}

static void test_grow_arguments(void **state) {
  ncclComm_t old[2], out = (ncclComm_t)&out, sub[2];
  init_all(old, 2);
  ncclUniqueId id, plain;
  assert_int_equal(ncclGetUniqueId(&plain), ncclSuccess);
  assert_int_equal(ncclCommGetUniqueId(NULL, &id), ncclInvalidArgument);
  assert_int_equal(ncclCommGetUniqueId(old[0], NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "uniqueId is NULL"));
  setenv("NCCL_COMM_ID", "127.0.0.1:1234", 1);
  assert_int_equal(ncclCommGetUniqueId(old[0], &id), ncclInvalidUsage);
  assert_true(has(last_warning(), "NCCL_COMM_ID"));
  unsetenv("NCCL_COMM_ID");
  assert_int_equal(ncclCommGetUniqueId(old[0], &id), ncclSuccess);
  /* both kinds of rank */
  assert_int_equal(ncclCommGrow(old[0], 3, &id, -1, NULL, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "newcomm is NULL"));
  assert_int_equal(ncclCommGrow(NULL, 0, &id, 2, &out, NULL), ncclInvalidArgument);
  assert_null(out);
  assert_true(has(last_warning(), "total ranks must be positive, got 0"));
  /* existing ranks */
  assert_int_equal(ncclCommGrow(old[0], 2, &id, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "nRanks 2 is not more than the parent's 2 ranks"));
  assert_int_equal(ncclCommGrow(old[0], 3, &id, 0, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "existing ranks must pass rank -1, got 0"));
  assert_int_equal(ncclCommGrow(old[0], 3, &plain, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "did not make for this communicator"));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 7;
  assert_int_equal(ncclCommGrow(old[0], 3, &id, -1, &out, &config), ncclInvalidArgument);
  /* new ranks */
  assert_int_equal(ncclCommGrow(NULL, 3, &id, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "must pass their rank in the new communicator, got -1"));
  assert_int_equal(ncclCommGrow(NULL, 3, NULL, 2, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "got NULL"));
  assert_int_equal(ncclCommGrow(NULL, 3, &id, 3, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "new rank 3 exceeds total ranks 3"));
  assert_int_equal(ncclCommGrow(NULL, 3, &plain, 2, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "not made by ncclCommGetUniqueId"));
  assert_int_equal(ncclCommGrow(NULL, 3, &id, 1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "the parent has 2 ranks, which keep ranks 0..1"));
  assert_int_equal(ncclCommGrow(NULL, 3, &id, 2, &out, &config), ncclInvalidArgument);
  /* a grow id is not an init id, at any of the public inits, in any place
   * of ncclCommInitRankScalable's ids */
  assert_int_equal(ncclCommInitRank(&out, 3, id, 2), ncclInvalidArgument);
  assert_true(has(last_warning(), "ncclCommInitRank: the unique id was made by ncclCommGetUniqueId, for ncclCommGrow"));
  assert_int_equal(ncclCommInitRankConfig(&out, 3, id, 2, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "ncclCommInitRankConfig: the unique id was made by ncclCommGetUniqueId"));
  ncclUniqueId ids[2] = {plain, id};
  assert_int_equal(ncclCommInitRankScalable(&out, 3, 2, 2, ids, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "ncclCommInitRankScalable: commIds[1] was made by ncclCommGetUniqueId"));
  ids[0] = id;
  assert_int_equal(ncclCommInitRankScalable(&out, 3, 2, 1, ids, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "commIds[0] was made by ncclCommGetUniqueId"));
  /* inside a group, a refused grow fails the group */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommGrow(NULL, 3, &id, 9, &out, NULL), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  /* None of that consumed the id; a split does (NCCL: "magic mismatch"). */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommSplit(old[r], 0, r, &sub[r], NULL), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  destroy_all(sub, 2);
  assert_int_equal(ncclCommGrow(old[0], 3, &id, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "made for the parent's child 1"));
  assert_int_equal(ncclCommGrow(old[1], 3, NULL, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "make a new id with ncclCommGetUniqueId"));
  destroy_all(old, 2);
}

/* A grow whose new rank never comes: every existing rank ends with
 * ncclTimeout at NCCLSIM_TIMEOUT, naming the missing rank, and holds a
 * failed communicator to destroy; the parent still works. */
static void test_grow_timeout(void **state) {
  ncclComm_t old[2], grown[2];
  init_all(old, 2);
  ncclUniqueId id;
  assert_int_equal(ncclCommGetUniqueId(old[1], &id), ncclSuccess);
  ncclsimParamSet("TIMEOUT", "0.3");
  double t0 = now();
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommGrow(old[r], 3, r ? &id : NULL, -1, &grown[r], NULL), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclTimeout);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_true(now() - t0 < scaled(30));
  for (int r = 0; r < 2; r++) {
    assert_non_null(grown[r]);
    const char *msg = grown[r]->last_error; /* ncclGetLastError gives this thread's last warning first */
    assert_true(has(msg, "ncclCommGrow: rank"));
    /* rank 1 waits after rank 0 withdrew: [0,2] */
    assert_true(has(msg, r ? "for rank(s) [0,2]" : "for rank(s) [2]"));
    assert_true(has(msg, "waited NCCLSIM_TIMEOUT=0.3 s"));
    ncclResult_t ae;
    assert_int_equal(ncclCommGetAsyncError(grown[r], &ae), ncclSuccess);
    assert_int_equal(ae, ncclTimeout);
    assert_int_equal(ncclCommDestroy(grown[r]), ncclSuccess);
  }
  check_allreduce(old, 2);
  assert_int_equal(ncclCommGetUniqueId(old[0], &id), ncclSuccess); /* the failed grow used its number */
  destroy_all(old, 2);
}

/* Non-blocking: existing ranks inherit the parent's mode (config NULL), a
 * new rank takes its config's; the grow returns ncclInProgress until its
 * round completes, and ncclCommGetAsyncError then says ncclSuccess. */
static void test_grow_nonblocking(void **state) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclUniqueId id;
  ncclComm_t old[2], grown[3];
  nb_pair(old);
  assert_int_equal(ncclCommGetUniqueId(old[0], &id), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommGrow(old[r], 3, r ? NULL : &id, -1, &grown[r], NULL), ncclInProgress);
  }
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(grown[0], &ae), ncclSuccess);
  assert_int_equal(ae, ncclInProgress);
  cudaSetDevice(2);
  assert_int_equal(ncclCommGrow(NULL, 3, &id, 2, &grown[2], &cfg), ncclSuccess); /* the last one completes it */
  for (int r = 0; r < 3; r++) {
    ae = ncclInProgress;
    for (int i = 0; i < 10000 && ae == ncclInProgress; i++) ncclCommGetAsyncError(grown[r], &ae);
    assert_int_equal(ae, ncclSuccess);
    assert_false(grown[r]->blocking);
  }
  check_allreduce(grown, 3);
  destroy_all(grown, 3);
  destroy_all(old, 2);
}

/* ---------------------------------------------------------------- revoke */

/* A non-blocking rank's revoke returns ncclInProgress while its stopped
 * operations end; ncclCommGetAsyncError then moves to ncclSuccess. Inside a
 * group, the operations of the rank not yet launched are dropped. */
static void test_revoke_nonblocking(void **state) {
  ncclComm_t comms[2];
  nb_pair(comms);
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  int *b;
  cudaSetDevice(1);
  cudaMalloc((void **)&b, 64);
  /* a receive from rank 0, which never sends */
  assert_int_equal(ncclRecv(b, 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  pause_ms(20);
  ncclResult_t r = ncclCommRevoke(comms[1], 0);
  assert_true(r == ncclInProgress || r == ncclSuccess);
  ncclResult_t ae = ncclInProgress;
  double t0 = now();
  while (ae == ncclInProgress && now() - t0 < scaled(60)) assert_int_equal(ncclCommGetAsyncError(comms[1], &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  /* rank 0: a send in this thread's open group, then a revoke in it */
  cudaSetDevice(0);
  int *b0;
  cudaMalloc((void **)&b0, 64);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(b0, 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  assert_int_equal(ncclCommRevoke(comms[0], 0), ncclSuccess); /* nothing launched: quiescent at once */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess); /* the send never ran */
  ncclsimParamSet("TIMEOUT", NULL);
  cudaFree(b0);
  cudaSetDevice(1);
  cudaFree(b);
  destroy_all(comms, 2);
}

/* --------------------------------------------------------------- shrink */

/* Revoked ranks shrink (NCCL allows it); ranks that disagree on the
 * exclude list all fail with ncclInvalidUsage, and may then shrink right. */
static void test_shrink_after_revoke(void **state) {
  ncclComm_t comms[4], sub[3];
  init_all(comms, 4);
  int bad[3][1] = {{3}, {3}, {1}};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 3; r++) assert_int_equal(ncclCommShrink(comms[r], bad[r], 1, &sub[r], NULL, 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclInvalidUsage);
  for (int r = 0; r < 3; r++) assert_null(sub[r]);
  for (int r = 0; r < 3; r++) assert_int_equal(ncclCommRevoke(comms[r], 0), ncclSuccess);
  int excl[1] = {3};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 3; r++) assert_int_equal(ncclCommShrink(comms[r], excl, 1, &sub[r], NULL, 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  check_allreduce(sub, 3);
  destroy_all(sub, 3);
  destroy_all(comms, 4);
}

/* A shrink that waits for a rank NCCLSIM_FAULT stopped fails at once with
 * ncclRemoteError naming it; the stopped rank itself takes part in nothing
 * more. */
static void test_shrink_waits_for_dead_rank(void **state) {
  ncclComm_t comms[3], sub[2];
  assert_int_equal(ncclsimParamSet("FAULT", "1:1"), ncclSuccess);
  init_all(comms, 3);
  ncclsimParamSet("FAULT", NULL);
  /* an allreduce of every rank: rank 1 stops at it, the others time out */
  ncclsimParamSet("TIMEOUT", "0.3");
  int *b[3];
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], 64);
    assert_int_equal(ncclAllReduce(b[r], b[r], 1, ncclInt32, ncclSum, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
    cudaFree(b[r]);
  }
  ncclsimParamSet("TIMEOUT", scaled_str(60).s);
  cudaSetDevice(1);
  int wrong[1] = {2}, one[1] = {0};
  assert_int_equal(ncclCommShrink(comms[1], one, 1, &sub[0], NULL, 0), ncclRemoteError);
  assert_true(has(last_warning(), "NCCLSIM_FAULT"));
  double t0 = now();
  cudaSetDevice(0);
  assert_int_equal(ncclCommShrink(comms[0], wrong, 1, &sub[0], NULL, NCCL_SHRINK_ABORT), ncclRemoteError);
  assert_true(now() - t0 < scaled(30));
  assert_true(has(ncclGetLastError(comms[0]), "rank 1 was stopped by NCCLSIM_FAULT"));
  /* excluding the dead rank works */
  int dead[1] = {1};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 3; r += 2) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommShrink(comms[r], dead, 1, &sub[r / 2], NULL, 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  ncclsimParamSet("TIMEOUT", NULL);
  check_allreduce(sub, 2);
  destroy_all(sub, 2);
  destroy_all(comms, 3);
}

/* NCCL_SHRINK_ABORT stops the caller's operations in flight on the parent
 * before it shrinks; NCCL_SHRINK_DEFAULT leaves them (the caller must have
 * none). The parent of an ABORT shrink is not revoked. */
static void test_shrink_abort_flag(void **state) {
  ncclComm_t comms[3], sub[2];
  init_all(comms, 3);
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  int *b[3];
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], 64);
  }
  /* connect 2->0 and 2->1, then receives from rank 2, which never sends */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(2);
    assert_int_equal(ncclSend(b[2], 4, ncclInt32, r, comms[2], 0), ncclSuccess);
    cudaSetDevice(r);
    assert_int_equal(ncclRecv(b[r], 4, ncclInt32, 2, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclRecv(b[r], 4, ncclInt32, 2, comms[r], 0), ncclSuccess);
  }
  double t0 = now();
  int excl[1] = {2};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommShrink(comms[r], excl, 1, &sub[r], NULL, r == 0 ? NCCL_SHRINK_ABORT : 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure); /* stopped */
  cudaSetDevice(1);
  assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady); /* still waiting */
  assert_int_equal(ncclCommRevoke(comms[1], 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  assert_true(now() - t0 < scaled(60));
  check_allreduce(sub, 2);
  /* rank 0 of the parent still takes operations after its ABORT shrink */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  cudaSetDevice(2);
  assert_int_equal(ncclSend(b[2], 4, ncclInt32, 0, comms[2], 0), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclRecv(b[0], 4, ncclInt32, 2, comms[0], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 3; r += 2) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
  ncclsimParamSet("TIMEOUT", NULL);
  destroy_all(sub, 2);
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    cudaFree(b[r]);
  }
  destroy_all(comms, 3);
}

/* ------------------------------------------------ the whole scenario */

/* Four ranks as threads; NCCLSIM_FAULT stops rank 2 in the middle of an
 * allreduce. The survivors see ncclTimeout within NCCLSIM_TIMEOUT, revoke,
 * shrink to three (one with NCCL_SHRINK_ABORT), check an allreduce, then
 * grow back to four with a new rank (a thread) and check again. */
typedef struct {
  pthread_barrier_t all;
  double detect[4];
  grow_arg newcomer;
} ft_arg;

static void *newcomer_main(void *p) {
  grow_arg *a = p;
  cudaSetDevice(5);
  a->res = ncclCommGrow(NULL, 4, &a->id, 3, &a->comm, NULL);
  if (a->res == ncclSuccess) {
    a->sum = allreduce_rank(a->comm);
    ncclCommDestroy(a->comm);
  }
  return NULL;
}

static void ft_body(rank_ctx *c) {
  ft_arg *a = c->arg;
  int *b;
  cudaMalloc((void **)&b, 16 * sizeof(int));
  assert_int_equal(ncclAllReduce(b, b, 16, ncclInt32, ncclSum, c->comm, 0), ncclSuccess); /* operation 1 */
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  pthread_barrier_wait(&a->all);
  if (c->rank == 0) {
    ncclsimParamSet("FAULT", NULL); /* the communicators made from now on have no fault */
    ncclsimParamSet("TIMEOUT", "1");
  }
  pthread_barrier_wait(&a->all);
  double t0 = now();
  assert_int_equal(ncclAllReduce(b, b, 16, ncclInt32, ncclSum, c->comm, 0), ncclSuccess); /* rank 2 stops */
  cudaError_t e = cudaStreamSynchronize(0);
  a->detect[c->rank] = now() - t0;
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_not_equal(e, cudaSuccess);
  pthread_barrier_wait(&a->all);
  if (c->rank == 0) ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  pthread_barrier_wait(&a->all);
  if (c->rank == 2) { /* as if dead: it takes part in nothing more */
    assert_int_equal(ae, ncclRemoteError);
    pthread_barrier_wait(&a->all);
    cudaFree(b);
    return;
  }
  assert_int_equal(ae, ncclTimeout);
  assert_true(a->detect[c->rank] < scaled(30));
  assert_int_equal(ncclCommRevoke(c->comm, 0), ncclSuccess);
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
  int dead[1] = {2};
  ncclComm_t sub;
  assert_int_equal(ncclCommShrink(c->comm, dead, 1, &sub, NULL, c->rank == 0 ? NCCL_SHRINK_ABORT : 0), ncclSuccess);
  assert_rank_of(sub, c->rank < 2 ? c->rank : 2, 3);
  assert_int_equal(allreduce_rank(sub), 6);
  /* grow back: sub's rank 0 coordinates; the new rank is a new thread */
  pthread_t th;
  if (c->rank == 0) {
    assert_int_equal(ncclCommGetUniqueId(sub, &a->newcomer.id), ncclSuccess);
    assert_int_equal(pthread_create(&th, NULL, newcomer_main, &a->newcomer), 0);
  }
  ncclComm_t grown;
  assert_int_equal(ncclCommGrow(sub, 4, c->rank == 0 ? &a->newcomer.id : NULL, -1, &grown, NULL), ncclSuccess);
  assert_int_equal(ncclCommDestroy(sub), ncclSuccess); /* NCCL's advice once grown */
  assert_int_equal(allreduce_rank(grown), 10);
  assert_int_equal(ncclCommDestroy(grown), ncclSuccess);
  if (c->rank == 0) {
    pthread_join(th, NULL);
    assert_int_equal(a->newcomer.res, ncclSuccess);
    assert_int_equal(a->newcomer.sum, 10);
  }
  pthread_barrier_wait(&a->all);
  cudaFree(b);
}

static void test_ft_scenario_threads(void **state) {
  ft_arg a;
  memset(&a, 0, sizeof a);
  pthread_barrier_init(&a.all, NULL, 4);
  assert_int_equal(ncclsimParamSet("TIMEOUT", scaled_str(120).s), ncclSuccess);
  assert_int_equal(ncclsimParamSet("FAULT", "2:2"), ncclSuccess);
  assert_int_equal(run_ranks(4, ft_body, &a), 0);
  ncclsimParamSet("FAULT", NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  pthread_barrier_destroy(&a.all);
}

/* ------------------------------------------------------ suspend, resume */

static uint64_t stat_of(ncclComm_t comm, ncclCommMemStat_t s) {
  uint64_t v = 77;
  assert_int_equal(ncclCommMemStats(comm, s, &v), ncclSuccess);
  return v;
}

static uint64_t in_use(ncclComm_t comm) {
  uint64_t v = 77;
  assert_int_equal(ncclsimCommMemInUse(comm, &v), ncclSuccess);
  return v;
}

static ncclResult_t suspend_all(ncclComm_t *comms, int n, int flags) {
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; r++) assert_int_equal(ncclCommSuspend(comms[r], flags), ncclSuccess);
  return ncclGroupEnd();
}

/* Suspend with NCCL_SUSPEND_MEM releases every rank's per-peer state (the
 * memory in use goes down; the suspendable bytes stay what they were, the
 * suspended flag is 1); a suspended comm refuses operations; resume brings
 * it all back and the comm works. */
static void test_suspend_resume(void **state) {
  ncclComm_t comms[2];
  init_all(comms, 2);
  uint64_t susp = stat_of(comms[0], ncclStatGpuMemSuspend), used = in_use(comms[0]);
  assert_true(susp > 0);
  assert_int_equal(stat_of(comms[0], ncclStatGpuMemTotal), stat_of(comms[0], ncclStatGpuMemPersist) + susp);
  assert_int_equal(used, stat_of(comms[0], ncclStatGpuMemTotal));
  /* without NCCL_SUSPEND_MEM, nothing happens (as NCCL) */
  assert_int_equal(ncclCommSuspend(comms[0], 0), ncclSuccess);
  assert_int_equal(stat_of(comms[0], ncclStatGpuMemSuspended), 0);
  assert_int_equal(suspend_all(comms, 2, NCCL_SUSPEND_MEM), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(stat_of(comms[r], ncclStatGpuMemSuspended), 1);
    assert_int_equal(stat_of(comms[r], ncclStatGpuMemSuspend), susp);
    assert_int_equal(in_use(comms[r]), used - susp);
  }
  int *b;
  cudaSetDevice(0);
  cudaMalloc((void **)&b, 64);
  assert_int_equal(ncclAllReduce(b, b, 1, ncclInt32, ncclSum, comms[0], 0), ncclInvalidUsage);
  assert_true(has(last_warning(), "is suspended; call ncclCommResume first"));
  assert_int_equal(ncclSend(b, 1, ncclInt32, 1, comms[0], 0), ncclInvalidUsage);
  ncclComm_t sub;
  assert_int_equal(ncclCommSplit(comms[0], 0, 0, &sub, NULL), ncclInvalidUsage);
  assert_int_equal(ncclCommRevoke(comms[0], 0), ncclInvalidUsage);
  assert_int_equal(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclInvalidUsage);
  assert_true(has(last_warning(), "already suspended"));
  assert_int_equal(ncclCommSuspend(comms[0], 0), ncclSuccess); /* no MEM: nothing checked, as NCCL */
  /* resume is collective: one rank alone times out and stays suspended */
  ncclsimParamSet("TIMEOUT", "0.3");
  assert_int_equal(ncclCommResume(comms[0]), ncclTimeout);
  assert_true(has(last_warning(), "waited for rank(s) [1]"));
  ncclsimParamSet("TIMEOUT", NULL);
  assert_int_equal(stat_of(comms[0], ncclStatGpuMemSuspended), 1);
  /* Out of memory at any allocation of the resume: ncclSystemError, and
   * both ranks still suspended; a rank whose call failed leaves the other
   * to time out (short here). */
  ncclsimParamSet("TIMEOUT", "0.3");
  for (uint64_t n = 1;; n++) {
    assert_true(n < 50);
    ncclsimAllocFailAfter(n);
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    ncclResult_t r0 = ncclCommResume(comms[0]), r1 = ncclCommResume(comms[1]), e = ncclGroupEnd();
    ncclsimAllocFailAfter(0);
    if (r0 == ncclSuccess && r1 == ncclSuccess && e == ncclSuccess) break;
    assert_true(r0 == ncclSuccess || r0 == ncclSystemError);
    assert_true(r1 == ncclSuccess || r1 == ncclSystemError);
    assert_true(e == ncclSystemError || e == ncclTimeout);
    for (int r = 0; r < 2; r++) {
      assert_int_equal(stat_of(comms[r], ncclStatGpuMemSuspended), 1);
      assert_int_equal(in_use(comms[r]), used - susp);
    }
  }
  ncclsimParamSet("TIMEOUT", NULL);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(stat_of(comms[r], ncclStatGpuMemSuspended), 0);
    assert_int_equal(in_use(comms[r]), used);
  }
  assert_int_equal(ncclCommResume(comms[0]), ncclInvalidUsage);
  assert_true(has(last_warning(), "is not suspended"));
  check_allreduce(comms, 2);
  /* point to point runs through the remade mailboxes */
  int *b1;
  cudaSetDevice(1);
  cudaMalloc((void **)&b1, 64);
  int v = 42;
  cudaSetDevice(0);
  cudaMemcpy(b, &v, sizeof v, cudaMemcpyHostToDevice);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(b, 1, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b1, 1, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  v = 0;
  cudaMemcpy(&v, b1, sizeof v, cudaMemcpyDeviceToHost);
  assert_int_equal(v, 42);
  cudaFree(b1);
  cudaSetDevice(0);
  cudaFree(b);
  /* a suspended comm can be destroyed */
  assert_int_equal(suspend_all(comms, 2, NCCL_SUSPEND_MEM | 0x10), ncclSuccess);
  assert_true(has(last_warning(), "flags 0x11 has bits other than NCCL_SUSPEND_MEM"));
  destroy_all(comms, 2);
}

static atomic_int hold;

static void held(void *arg) {
  (void)arg;
  while (atomic_load(&hold)) pause_ms(1);
}

static void test_suspend_arguments(void **state) {
  ncclComm_t comms[2];
  init_all(comms, 2);
  assert_int_equal(ncclCommSuspend(NULL, NCCL_SUSPEND_MEM), ncclInvalidArgument);
  assert_int_equal(ncclCommResume(NULL), ncclInvalidArgument);
  uint64_t v;
  assert_int_equal(ncclsimCommMemInUse(NULL, &v), ncclInvalidArgument);
  assert_int_equal(ncclsimCommMemInUse(comms[0], NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommResume(comms[0]), ncclInvalidUsage);
  /* suspend is collective: alone, it times out and the comm stays usable */
  ncclsimParamSet("TIMEOUT", "0.3");
  assert_int_equal(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclTimeout);
  assert_true(has(last_warning(), "waited for rank(s) [0]"));
  /* an operation in flight that cannot end: nothing is suspended */
  int *b;
  cudaSetDevice(1);
  cudaMalloc((void **)&b, 64);
  assert_int_equal(ncclGroupStart(), ncclSuccess); /* connect 0 -> 1 first */
  cudaSetDevice(0);
  assert_int_equal(ncclSend(b, 0, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b, 0, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  /* The receive (rank 0 never sends) waits on its stream behind a host
   * function that holds it until the suspend has given up. */
  atomic_store(&hold, 1);
  assert_int_equal(cudaLaunchHostFunc(0, held, NULL), cudaSuccess);
  assert_int_equal(ncclRecv(b, 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclTimeout);
  assert_true(has(last_warning(), "still has 1 operation(s) in flight"));
  ncclsimParamSet("TIMEOUT", NULL);
  atomic_store(&hold, 0);
  assert_int_equal(stat_of(comms[1], ncclStatGpuMemSuspended), 0);
  /* a revoked comm is not suspended (ncclsim checks this) */
  assert_int_equal(ncclCommRevoke(comms[1], 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  assert_int_equal(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclInvalidUsage);
  assert_true(has(last_warning(), "revoked"));
  cudaFree(b);
  cudaSetDevice(0);
  /* inside a group holding the comm's operations: refused */
  int *b0;
  cudaMalloc((void **)&b0, 64);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b0, b0, 1, ncclInt32, ncclSum, comms[0], 0), ncclSuccess);
  assert_int_equal(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclInvalidUsage);
  assert_true(has(last_warning(), "operations in this thread's open group"));
  assert_int_equal(ncclGroupEnd(), ncclInvalidUsage); /* the refused call fails the group: nothing launched */
  cudaFree(b0);
  /* NCCL_DISABLE_MEM_MANAGER=1: no memory manager, as NCCL */
  setenv("NCCL_DISABLE_MEM_MANAGER", "1", 1);
  assert_int_equal(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclInvalidUsage);
  assert_int_equal(ncclCommMemStats(comms[0], ncclStatGpuMemTotal, &v), ncclInvalidUsage);
  unsetenv("NCCL_DISABLE_MEM_MANAGER");
  destroy_all(comms, 2);
}

/* One thread per rank: suspend and resume block until every rank calls. */
static void suspend_body(rank_ctx *c) {
  assert_int_equal(ncclCommSuspend(c->comm, NCCL_SUSPEND_MEM), ncclSuccess);
  assert_int_equal(stat_of(c->comm, ncclStatGpuMemSuspended), 1);
  assert_int_equal(ncclCommResume(c->comm), ncclSuccess);
  assert_int_equal(allreduce_rank(c->comm), 6);
}

static void test_suspend_threads(void **state) { assert_int_equal(run_ranks(3, suspend_body, NULL), 0); }

/* Non-blocking ranks: suspend and resume return ncclInProgress until the
 * last rank calls; ncclCommGetAsyncError settles them. */
static void test_suspend_nonblocking(void **state) {
  ncclComm_t comms[2];
  ncclResult_t ae;
  nb_pair(comms);
  for (int step = 0; step < 2; step++) {
    ncclResult_t first = step ? ncclCommResume(comms[0]) : ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM);
    assert_int_equal(first, ncclInProgress);
    assert_int_equal(ncclCommGetAsyncError(comms[0], &ae), ncclSuccess);
    assert_int_equal(ae, ncclInProgress);
    /* a second call before the first settled: as NCCL, ncclInvalidArgument */
    assert_int_equal(ncclCommResume(comms[0]), ncclInvalidArgument);
    ncclResult_t last = step ? ncclCommResume(comms[1]) : ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM);
    assert_int_equal(last, ncclSuccess);
    assert_int_equal(ncclCommGetAsyncError(comms[0], &ae), ncclSuccess);
    assert_int_equal(ae, ncclSuccess);
    assert_int_equal(stat_of(comms[0], ncclStatGpuMemSuspended), step ? 0 : 1);
  }
  check_allreduce(comms, 2);
  destroy_all(comms, 2);
}

/* A rank destroyed while its suspend waits (in this thread's open group,
 * or non-blocking and not yet settled) leaves the round: the others fail
 * at once, naming it, and it is gone cleanly. */
static void test_suspend_then_destroy(void **state) {
  ncclComm_t comms[2];
  init_all(comms, 2);
  ncclsimParamSet("TIMEOUT", scaled_str(60).s);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess); /* its job goes with it */
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  double t0 = now();
  assert_int_equal(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclRemoteError);
  assert_true(has(last_warning(), "rank 0 was destroyed or aborted"));
  assert_true(now() - t0 < scaled(30));
  assert_int_equal(stat_of(comms[1], ncclStatGpuMemSuspended), 0);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  nb_pair(comms);
  assert_int_equal(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclInProgress);
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
  assert_int_equal(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclRemoteError);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Out of memory at any allocation of a grow: the call fails with
 * ncclSystemError (or, for a rank whose peer's call failed, ncclTimeout),
 * and the next try succeeds. */
static void test_grow_alloc_failure(void **state) {
  ncclComm_t old;
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitAll(&old, 1, NULL), ncclSuccess);
  ncclsimParamSet("TIMEOUT", "0.3");
  ncclUniqueId id;
  for (uint64_t n = 1;; n++) {
    assert_true(n < 200);
    ncclComm_t grown[2] = {NULL, NULL};
    /* A new id, unless the last try failed before it consumed the last one. */
    ncclResult_t g = ncclCommGetUniqueId(old, &id), r0, r1, e;
    assert_true(g == ncclSuccess || (n > 1 && g == ncclInvalidUsage));
    ncclsimAllocFailAfter(n);
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    cudaSetDevice(0);
    r0 = ncclCommGrow(old, 2, &id, -1, &grown[0], NULL);
    cudaSetDevice(1);
    r1 = ncclCommGrow(NULL, 2, &id, 1, &grown[1], NULL);
    e = ncclGroupEnd();
    ncclsimAllocFailAfter(0);
    if (r0 == ncclSuccess && r1 == ncclSuccess && e == ncclSuccess) {
      check_allreduce(grown, 2);
      destroy_all(grown, 2);
      break;
    }
    assert_true(r0 == ncclSuccess || r0 == ncclSystemError);
    assert_true(r1 == ncclSuccess || r1 == ncclSystemError);
    assert_true(e == ncclSystemError || e == ncclTimeout);
    for (int r = 0; r < 2; r++)
      if (grown[r]) assert_int_equal(ncclCommDestroy(grown[r]), ncclSuccess);
  }
  ncclsimParamSet("TIMEOUT", NULL);
  cudaSetDevice(0);
  check_allreduce(&old, 1);
  assert_int_equal(ncclCommDestroy(old), ncclSuccess);
}

/* Odd callers: an id of another communicator, a resume while a
 * non-blocking init is in progress. */
static void test_grow_and_resume_odd_callers(void **state) {
  ncclComm_t a, b, nb[2];
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitAll(&a, 1, NULL), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclCommInitAll(&b, 1, (int[]){1}), ncclSuccess);
  ncclUniqueId id;
  assert_int_equal(ncclCommGetUniqueId(a, &id), ncclSuccess);
  ncclComm_t out;
  assert_int_equal(ncclCommGrow(b, 2, &id, -1, &out, NULL), ncclInvalidArgument);
  assert_true(has(last_warning(), "did not make for this communicator"));
  assert_int_equal(ncclCommDestroy(a), ncclSuccess);
  assert_int_equal(ncclCommDestroy(b), ncclSuccess);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitRankConfig(&nb[0], 2, id, 0, &cfg), ncclInProgress);
  assert_int_equal(ncclCommResume(nb[0]), ncclInvalidArgument);
  assert_true(has(last_warning(), "still initializing"));
  assert_int_equal(ncclCommRevoke(nb[0], 0), ncclInvalidArgument);
  cudaSetDevice(1);
  assert_int_equal(ncclCommInitRankConfig(&nb[1], 2, id, 1, &cfg), ncclSuccess);
  destroy_all(nb, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grow_in_group),          cmocka_unit_test(test_grow_threads),
      cmocka_unit_test(test_grow_arguments),         cmocka_unit_test(test_grow_timeout),
      cmocka_unit_test(test_grow_nonblocking),       cmocka_unit_test(test_revoke_nonblocking),
      cmocka_unit_test(test_shrink_after_revoke),    cmocka_unit_test(test_shrink_waits_for_dead_rank),
      cmocka_unit_test(test_shrink_abort_flag),      cmocka_unit_test(test_ft_scenario_threads),
      cmocka_unit_test(test_suspend_resume),         cmocka_unit_test(test_suspend_arguments),
      cmocka_unit_test(test_suspend_threads),        cmocka_unit_test(test_suspend_nonblocking),
      cmocka_unit_test(test_suspend_then_destroy),   cmocka_unit_test(test_grow_alloc_failure),
      cmocka_unit_test(test_grow_and_resume_odd_callers),
  };
  return cmocka_run_group_tests_name("sim_ft", tests, NULL, NULL);
}
