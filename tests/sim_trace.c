/*
 * tests/sim_trace.c — ncclsim's timeline (NCCLSIM_TRACE) and flight
 * recorder (NCCLSIM_TRACE_RING, NCCLSIM_TRACE_DUMP): a small program's
 * trace parses as JSON, has one complete event per operation with its
 * arguments and one enqueue instant each, and its flows join each send to
 * its receive, each put to the wait that consumes it, and rank 0's
 * collective to the others'; a mismatched
 * collective leaves a dump, named in the diagnostic, whose last event on
 * every rank is that collective; times are in microseconds (the stamps
 * are the CPU's counter, util/ticks.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "sim.h"
#include "core/core.h"
#include "sim_ranks.h"

#define N 3
#define COUNT 256

static char path[256];

/* A ring of sends and receives, an allreduce, a put with signal to the
 * next rank and a wait for the previous one's. */
static void program(rank_ctx *c) {
  int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
  float *a, *b;
  assert_int_equal(cudaMalloc((void **)&a, COUNT * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&b, COUNT * sizeof(float)), cudaSuccess);
  cudaMemset(a, 0, COUNT * sizeof(float));
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(a, COUNT, ncclFloat32, next, c->comm, 0), ncclSuccess);
  assert_int_equal(ncclRecv(b, COUNT, ncclFloat32, prev, c->comm, 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(ncclAllReduce(a, b, COUNT, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  void *mem;
  ncclWindow_t win;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  /* From bytes [0, 64) into the next rank's [64, 128): the previous rank
   * writes this rank's [64, 128) meanwhile, never what it reads. */
  assert_int_equal(ncclPutSignal(mem, 64, ncclChar, next, win, 64, 0, 0, 0, c->comm, 0), ncclSuccess);
  ncclWaitSignalDesc_t d = {1, prev, 0, 0};
  assert_int_equal(ncclWaitSignal(1, &d, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, win), ncclSuccess);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
  cudaFree(a);
  cudaFree(b);
}

static json_t *load(const char *file) {
  json_error_t err;
  json_t *root = json_load_file(file, 0, &err);
  if (!root) fprintf(stderr, "%s: %s (line %d)\n", file, err.text, err.line);
  assert_non_null(root);
  assert_true(json_is_array(json_object_get(root, "traceEvents")));
  return root;
}

static const char *str(json_t *e, const char *k) { return json_string_value(json_object_get(e, k)); }
static json_int_t num(json_t *e, const char *k) { return json_integer_value(json_object_get(e, k)); }

/* The X event of track (pid, tid) that starts at ts. */
static json_t *slice_at(json_t *evs, json_t *flow) {
  size_t i;
  json_t *e;
  json_array_foreach(evs, i, e) {
    if (strcmp(str(e, "ph"), "X") == 0 && num(e, "pid") == num(flow, "pid") && num(e, "tid") == num(flow, "tid") &&
        json_real_value(json_object_get(e, "ts")) == json_real_value(json_object_get(flow, "ts")))
      return e;
  }
  return NULL;
}

static void test_timeline(void **state) {
  (void)state;
  snprintf(path, sizeof path, "/tmp/ncclsim-test-trace-%d.json", (int)getpid());
  assert_int_equal(ncclsimParamSet("TRACE", path), ncclSuccess);
  assert_int_equal(run_ranks(N, program, NULL), 0);
  assert_int_equal(ncclsimParamSet("TRACE", NULL), ncclSuccess);
  assert_int_equal(sim_trace_flush(), 0);
  json_t *root = load(path);
  json_t *evs = json_object_get(root, "traceEvents"), *e;
  static const char *names[] = {"ncclSend", "ncclRecv", "ncclAllReduce", "ncclPutSignal", "ncclWaitSignal"};
  int x[N][5] = {{0}}, enq = 0, nx = 0, flows_s = 0, puts_s = 0;
  size_t i;
  json_array_foreach(evs, i, e) {
    const char *ph = str(e, "ph");
    if (!strcmp(ph, "i")) enq++;
    if (strcmp(ph, "X") != 0) continue;
    nx++;
    int rank = (int)num(e, "tid") / 100;
    assert_true(rank >= 0 && rank < N);
    json_t *args = json_object_get(e, "args");
    assert_string_equal(str(args, "result"), "ncclSuccess");
    assert_non_null(str(args, "call"));
    int k;
    for (k = 0; k < 5 && strcmp(str(e, "name"), names[k]) != 0; k++) continue;
    assert_true(k < 5);
    x[rank][k]++;
    if (k == 0) { /* a send: its peer, bytes, describe text */
      assert_int_equal(num(args, "peer"), (rank + 1) % N);
      assert_int_equal(num(args, "bytes"), COUNT * 4);
      assert_non_null(strstr(str(args, "call"), "ncclSend(count=256"));
    }
    if (k == 2) assert_int_equal(num(args, "seq"), 0);
    if (k == 3) assert_int_equal(num(args, "peer"), (rank + 1) % N);
  }
  for (int r = 0; r < N; r++)
    for (int k = 0; k < 5; k++) assert_int_equal(x[r][k], 1);
  assert_int_equal(nx, 5 * N);
  assert_int_equal(enq, 5 * N);
  /* Every flow start has one finish; a send's goes to its peer's receive,
   * a put's to its peer's wait, rank 0's allreduce's to another rank's
   * allreduce. */
  json_array_foreach(evs, i, e) {
    if (strcmp(str(e, "ph"), "s") != 0) continue;
    flows_s++;
    json_t *from = slice_at(evs, e), *f, *to = NULL;
    assert_non_null(from);
    size_t j;
    int found = 0;
    json_array_foreach(evs, j, f) {
      if (!strcmp(str(f, "ph"), "f") && num(f, "id") == num(e, "id")) {
        found++;
        to = slice_at(evs, f);
      }
    }
    assert_int_equal(found, 1);
    assert_non_null(to);
    int rf = (int)num(from, "tid") / 100, rt = (int)num(to, "tid") / 100;
    if (!strcmp(str(from, "name"), "ncclSend")) {
      assert_string_equal(str(to, "name"), "ncclRecv");
      assert_int_equal(rt, (rf + 1) % N);
    } else if (!strcmp(str(from, "name"), "ncclPutSignal")) {
      assert_string_equal(str(to, "name"), "ncclWaitSignal");
      assert_int_equal(rt, (rf + 1) % N);
      puts_s++;
    } else {
      assert_string_equal(str(from, "name"), "ncclAllReduce");
      assert_string_equal(str(to, "name"), "ncclAllReduce");
      assert_int_equal(rf, 0);
      assert_int_not_equal(rt, 0);
    }
  }
  assert_int_equal(puts_s, N);
  assert_int_equal(flows_s, N + (N - 1) + N);
  json_decref(root);
  unlink(path);
}

/* One matching allreduce, then rank 1 calls with another count. */
static void mismatch_fn(rank_ctx *c) {
  float *b;
  assert_int_equal(cudaMalloc((void **)&b, 64 * sizeof(float)), cudaSuccess);
  cudaMemset(b, 0, 64 * sizeof(float));
  assert_int_equal(ncclAllReduce(b, b, 8, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(ncclAllReduce(b, b, c->rank ? 16 : 8, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
  const char *msg = ncclGetLastError(c->comm);
  assert_non_null(strstr(msg, "mismatched"));
  assert_non_null(strstr(msg, "flight recorder: "));
  assert_non_null(strstr(msg, path));
  cudaFree(b);
}

static void test_flight_mismatch(void **state) {
  (void)state;
  char fmt[256];
  snprintf(fmt, sizeof fmt, "/tmp/ncclsim-test-flight-%%p-%d.json", 7);
  snprintf(path, sizeof path, "/tmp/ncclsim-test-flight-%d-7.json", (int)getpid());
  assert_int_equal(ncclsimParamSet("TRACE_DUMP", fmt), ncclSuccess);
  assert_int_equal(run_ranks(2, mismatch_fn, NULL), 0);
  assert_int_equal(ncclsimParamSet("TRACE_DUMP", NULL), ncclSuccess);
  json_t *root = load(path);
  assert_string_equal(str(json_object_get(root, "ncclsim"), "why"), "mismatched collective");
  json_t *evs = json_object_get(root, "traceEvents"), *e;
  /* Each rank: two allreduces; the last one is the mismatched call,
   * with its own size. */
  for (int r = 0; r < 2; r++) {
    json_t *last = NULL;
    int n = 0;
    size_t i;
    json_array_foreach(evs, i, e) {
      if (strcmp(str(e, "ph"), "X") != 0 || num(e, "tid") / 100 != r) continue;
      n++;
      assert_string_equal(str(e, "name"), "ncclAllReduce");
      if (!last || json_real_value(json_object_get(e, "ts")) >= json_real_value(json_object_get(last, "ts")))
        last = e;
    }
    assert_int_equal(n, 2);
    json_t *args = json_object_get(last, "args");
    assert_int_equal(num(args, "seq"), 1);
    assert_int_equal(num(args, "bytes"), (r ? 16 : 8) * 4);
    assert_string_not_equal(str(args, "result"), "ncclSuccess");
  }
  json_decref(root);
  unlink(path);
}

/* Rank 0 waits for a signal that rank 1 sends 100 ms later; rank 0 times
 * the wait on the host clock, from before its enqueue to the end of its
 * synchronize, which the traced wait lies inside. A first signal sets up
 * the connection, whose first use blocks the host (core/connect.c). */
enum { DELAY_US = 100000 };
static double host_wait_us;
static double host_sig[4]; /* rank 1: before and after each of its two ncclSignal calls */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void delayed_signal(rank_ctx *c) {
  if (c->rank == 0) {
    ncclWaitSignalDesc_t d = {1, 1, 0, 0};
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, 0), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    double t0 = now_us();
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, 0), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    host_wait_us = now_us() - t0;
  } else {
    host_sig[0] = now_us();
    assert_int_equal(ncclSignal(0, 0, 0, 0, c->comm, 0), ncclSuccess);
    host_sig[1] = now_us();
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    usleep(DELAY_US);
    host_sig[2] = now_us();
    assert_int_equal(ncclSignal(0, 0, 0, 0, c->comm, 0), ncclSuccess);
    host_sig[3] = now_us();
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
}

/* Times in the file against the host's clock, each a bound that holds
 * however late a thread runs: the two signals' enqueues are as far apart
 * as the host saw between the calls (at least the 100 ms sleep, at most
 * from before the first call to after the second), and the second wait
 * lasts no longer than rank 0 measured around it. A stamp converted at
 * the wrong rate (the counter ran at 2.6 per ns where this was written)
 * fails the first. (Rank 0 may start its wait after rank 1 started to
 * sleep, so the wait itself can be shorter than the sleep.) */
static void test_times_us(void **state) {
  (void)state;
  snprintf(path, sizeof path, "/tmp/ncclsim-test-trace-us-%d.json", (int)getpid());
  assert_int_equal(ncclsimParamSet("TRACE", path), ncclSuccess);
  assert_int_equal(run_ranks(2, delayed_signal, NULL), 0);
  assert_int_equal(ncclsimParamSet("TRACE", NULL), ncclSuccess);
  assert_int_equal(sim_trace_flush(), 0);
  json_t *root = load(path);
  json_t *evs = json_object_get(root, "traceEvents"), *e;
  double dur = -1, ts = -1, enq[2] = {-1, -1}, sig[2] = {-1, -1};
  int waits = 0, sigs = 0;
  size_t i;
  json_array_foreach(evs, i, e) {
    if (!strcmp(str(e, "name"), "ncclSignal") && !strcmp(str(e, "ph"), "i") && sigs < 2)
      sig[sigs++] = json_real_value(json_object_get(e, "ts"));
    if (strcmp(str(e, "name"), "ncclWaitSignal") != 0) continue;
    if (!strcmp(str(e, "ph"), "i") && waits < 2) enq[waits++] = json_real_value(json_object_get(e, "ts"));
    if (!strcmp(str(e, "ph"), "X") && num(json_object_get(e, "args"), "seq") == 2) {
      dur = json_real_value(json_object_get(e, "dur"));
      ts = json_real_value(json_object_get(e, "ts"));
    }
  }
  json_decref(root);
  unlink(path);
  double apart = sig[1] - sig[0];
  if (sigs != 2 || apart < host_sig[2] - host_sig[1] || apart > host_sig[3] - host_sig[0])
    fail_msg("the signals' enqueues are %.0f us apart in the trace; the host saw %.0f to %.0f us", apart,
             host_sig[2] - host_sig[1], host_sig[3] - host_sig[0]);
  if (dur < 0 || dur > host_wait_us + 1000)
    fail_msg("the second wait lasted %.0f us in the trace, %.0f us on the host clock", dur, host_wait_us);
  /* It starts after its enqueue: its worker was idle in between, so its
   * start is not the end of the first wait. */
  if (ts < enq[1]) fail_msg("the second wait starts at %.3f us, before its enqueue at %.3f us", ts, enq[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeline),
      cmocka_unit_test(test_flight_mismatch),
      cmocka_unit_test(test_times_us),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
