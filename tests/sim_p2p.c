/* tests/sim_p2p.c — ncclsim's send/recv matching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim_ranks.h"

/* Sends between a pair are matched in call order: rank 0 sends 3 messages,
 * rank 1 receives them into 3 buffers, each gets its own. */
static void ordered_body(rank_ctx *c) {
  int *buf[3];
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cudaMalloc((void **)&buf[i], 64 * sizeof(int)), cudaSuccess);
    int h[64];
    for (int k = 0; k < 64; k++) h[k] = c->rank == 0 ? i * 100 + k : -1;
    cudaMemcpy(buf[i], h, sizeof h, cudaMemcpyHostToDevice);
  }
  for (int i = 0; i < 3; i++) {
    ncclResult_t r = c->rank == 0 ? ncclSend(buf[i], 64, ncclInt32, 1, c->comm, 0)
                                  : ncclRecv(buf[i], 64, ncclInt32, 0, c->comm, 0);
    assert_int_equal(r, ncclSuccess);
  }
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  for (int i = 0; i < 3; i++) {
    int h[64];
    cudaMemcpy(h, buf[i], sizeof h, cudaMemcpyDeviceToHost);
    for (int k = 0; k < 64; k++) assert_int_equal(h[k], i * 100 + k);
    cudaFree(buf[i]);
  }
}

static void test_matched_in_order(void **state) { assert_int_equal(run_ranks(2, ordered_body, NULL), 0); }

/* Several operations queued on one side of a pair, then matched one at a
 * time: the side in `arg` (0: the sender, 1: the receiver) posts three of
 * different counts in one group; the other, 20 ms later, posts its three
 * one after another. Each message lands in its own buffer, whole: the
 * matcher reads the queue head's buffer and count from the pair's line,
 * which must follow the head as it moves. */
static void queued_body(rank_ctx *c) {
  static const size_t counts[3] = {16, 48, 32};
  int early = *(const int *)c->arg;
  int *buf[3];
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cudaMalloc((void **)&buf[i], counts[i] * sizeof(int)), cudaSuccess);
    int h[48];
    for (size_t k = 0; k < counts[i]; k++) h[k] = c->rank == 0 ? (int)(i * 100 + k) : -1;
    cudaMemcpy(buf[i], h, counts[i] * sizeof(int), cudaMemcpyHostToDevice);
  }
  bool grouped = c->rank == early;
  if (!grouped) usleep(20000);
  if (grouped) assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < 3; i++) {
    ncclResult_t r = c->rank == 0 ? ncclSend(buf[i], counts[i], ncclInt32, 1, c->comm, 0)
                                  : ncclRecv(buf[i], counts[i], ncclInt32, 0, c->comm, 0);
    assert_int_equal(r, ncclSuccess);
  }
  if (grouped) assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  for (int i = 0; i < 3; i++) {
    int h[48];
    cudaMemcpy(h, buf[i], counts[i] * sizeof(int), cudaMemcpyDeviceToHost);
    for (size_t k = 0; k < counts[i]; k++) assert_int_equal(h[k], (int)(i * 100 + k));
    cudaFree(buf[i]);
  }
}

static void test_queued_sends(void **state) {
  static const int early = 0;
  assert_int_equal(run_ranks(2, queued_body, (void *)&early), 0);
}

static void test_queued_recvs(void **state) {
  static const int early = 1;
  assert_int_equal(run_ranks(2, queued_body, (void *)&early), 0);
}

/* A count mismatch fails both sides with ncclInvalidUsage and a diagnostic
 * naming both calls; nothing is truncated into the receive buffer. */
static void mismatch_body(rank_ctx *c) {
  char *b;
  cudaMalloc((void **)&b, 16);
  cudaMemset(b, 7, 16);
  if (c->rank == 0) ncclSend(b, 16, ncclInt8, 1, c->comm, 0);
  else ncclRecv(b, 8, ncclInt8, 0, c->comm, 0);
  assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
  ncclResult_t ae = ncclSuccess;
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInvalidUsage);
  const char *msg = ncclGetLastError(c->comm);
  assert_non_null(strstr(msg, "mismatched point-to-point pair"));
  assert_non_null(strstr(msg, "count=16"));
  assert_non_null(strstr(msg, "count=8"));
  cudaFree(b);
}

static void test_mismatch_fails_both(void **state) { assert_int_equal(run_ranks(2, mismatch_body, NULL), 0); }

/* One thread drives every rank through a group (ncclCommInitAll). */
static void test_one_thread_drives_all(void **state) {
  enum { N = 4, COUNT = 1000 };
  ncclComm_t comms[N];
  assert_int_equal(ncclCommInitAll(comms, N, NULL), ncclSuccess);
  float *s[N], *d[N];
  for (int r = 0; r < N; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&s[r], COUNT * sizeof(float));
    cudaMalloc((void **)&d[r], COUNT * sizeof(float));
    float h[COUNT];
    for (int i = 0; i < COUNT; i++) h[i] = (float)(r * COUNT + i);
    cudaMemcpy(s[r], h, sizeof h, cudaMemcpyHostToDevice);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclSend(s[r], COUNT, ncclFloat32, (r + 1) % N, comms[r], 0), ncclSuccess);
    assert_int_equal(ncclRecv(d[r], COUNT, ncclFloat32, (r + N - 1) % N, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    float h[COUNT];
    cudaMemcpy(h, d[r], sizeof h, cudaMemcpyDeviceToHost);
    int from = (r + N - 1) % N;
    for (int i = 0; i < COUNT; i++) assert_true(h[i] == (float)(from * COUNT + i));
    cudaFree(s[r]);
    cudaFree(d[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

/* Argument errors are NCCL's codes, and a bad call inside a group makes
 * ncclGroupEnd fail and launch nothing. */
static void test_argument_errors(void **state) {
  ncclComm_t comms[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  cudaSetDevice(0);
  char *b;
  cudaMalloc((void **)&b, 64);
  assert_int_equal(ncclSend(b, 4, ncclInt8, 2, comms[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclSend(b, 4, ncclInt8, -1, comms[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclSend(NULL, 4, ncclInt8, 1, comms[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclSend(b, 4, (ncclDataType_t)12, 1, comms[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclSend(b, 4, ncclInt8, 1, NULL, 0), ncclInvalidArgument);
  /* past the end of the 64-byte allocation: ncclsim checks bounds */
  assert_int_equal(ncclSend(b, 65, ncclInt8, 1, comms[0], 0), ncclInvalidArgument);
  assert_non_null(strstr(ncclGetLastError(NULL), "run past the end"));
  /* buffer of device 0 used by the rank on device 1 */
  assert_int_equal(ncclSend(b, 4, ncclInt8, 0, comms[1], 0), ncclInvalidArgument);
  assert_non_null(strstr(ncclGetLastError(NULL), "is on device 0"));
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(b, 4, ncclInt8, 9, comms[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidUsage); /* unbalanced */
  cudaFree(b);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* One thread splits every rank inside a group: handles filled at group
 * end, ranks ordered by key, NOCOLOR gives NULL. */
static void test_split_in_group(void **state) {
  enum { N = 4 };
  ncclComm_t comms[N], sub[N];
  assert_int_equal(ncclCommInitAll(comms, N, NULL), ncclSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++)
    assert_int_equal(ncclCommSplit(comms[r], r == 3 ? NCCL_SPLIT_NOCOLOR : r % 2, -r, &sub[r], NULL), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_null(sub[3]);
  int n, rank;
  assert_int_equal(ncclCommCount(sub[0], &n), ncclSuccess);
  assert_int_equal(n, 2); /* ranks 0 and 2 */
  assert_int_equal(ncclCommUserRank(sub[0], &rank), ncclSuccess);
  assert_int_equal(rank, 1); /* key -0 > key -2 */
  assert_int_equal(ncclCommUserRank(sub[2], &rank), ncclSuccess);
  assert_int_equal(rank, 0);
  assert_int_equal(ncclCommCount(sub[1], &n), ncclSuccess);
  assert_int_equal(n, 1);
  for (int r = 0; r < N; r++) {
    assert_int_equal(ncclCommDestroy(sub[r]), ncclSuccess);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matched_in_order),
      cmocka_unit_test(test_queued_sends),
      cmocka_unit_test(test_queued_recvs),
      cmocka_unit_test(test_mismatch_fails_both),
      cmocka_unit_test(test_one_thread_drives_all),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_split_in_group),
  };
  return cmocka_run_group_tests_name("sim_p2p", tests, NULL, NULL);
}
