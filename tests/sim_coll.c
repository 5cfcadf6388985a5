/* tests/sim_coll.c — ncclsim's collectives: mismatch detection, timeout,
 * one thread driving every rank, PreMulSum misuse, unaligned 16-bit buffers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "capture.h"
#include "slow.h"
#include "sim_ranks.h"

enum { N = 3, COUNT = 64 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ mismatch */

/* One kind of mismatch: rank N-1 deviates from the others in one argument
 * (or, for "order", calls the two collectives the other way round). Every
 * rank, the agreeing ones included, must fail, and its diagnostic must
 * name both calls made. */
typedef struct {
  const char *what;
  const char *want[2]; /* substrings of every rank's diagnostic */
} mismatch;

static void mismatch_body(rank_ctx *c) {
  const mismatch *m = c->arg;
  bool odd = c->rank == N - 1;
  float *b;
  assert_int_equal(cudaMalloc((void **)&b, 2 * COUNT * sizeof(float)), cudaSuccess);
  cudaMemset(b, 0, 2 * COUNT * sizeof(float));
  ncclResult_t r1 = ncclSuccess, r2 = ncclSuccess;
  cudaStream_t s2;
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  if (!strcmp(m->what, "order")) {
    /* The second call on its own stream: on the first one it would be
     * skipped ("not run: its stream already failed"), and that text would
     * replace the mismatch's as the comm's last error. */
    if (!odd) {
      r1 = ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, c->comm, 0);
      r2 = ncclBroadcast(b, b, COUNT, ncclFloat32, 0, c->comm, s2);
    } else {
      r1 = ncclBroadcast(b, b, COUNT, ncclFloat32, 0, c->comm, 0);
      r2 = ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, c->comm, s2);
    }
  } else if (!strcmp(m->what, "count")) {
    r1 = ncclAllReduce(b, b, odd ? COUNT + 1 : COUNT, ncclFloat32, ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "datatype")) {
    r1 = ncclAllReduce(b, b, COUNT, odd ? ncclInt32 : ncclFloat32, ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "op")) {
    r1 = ncclReduceScatter(b, b, COUNT / N, ncclFloat32, odd ? ncclMax : ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "root")) {
    r1 = ncclReduce(b, b, COUNT, ncclFloat32, ncclSum, odd ? 2 : 1, c->comm, 0);
  } else if (!strcmp(m->what, "small count")) { /* small allreduces (sim/coll/small.c) */
    r1 = ncclAllReduce(b, b, odd ? 3 : 2, ncclFloat32, ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "small op")) {
    r1 = ncclAllReduce(b, b, 2, ncclFloat32, odd ? ncclMax : ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "small, large")) {
    r1 = ncclAllReduce(b, b, odd ? COUNT : 2, ncclFloat32, ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "large, small")) {
    r1 = ncclAllReduce(b, b, odd ? 2 : COUNT, ncclFloat32, ncclSum, c->comm, 0);
  } else if (!strcmp(m->what, "small kind")) {
    r1 = odd ? ncclBroadcast(b, b, 2, ncclFloat32, 0, c->comm, 0) : ncclAllReduce(b, b, 2, ncclFloat32, ncclSum, c->comm, 0);
  }
  /* Enqueueing succeeds (the ranks cannot know yet); a second call may see
   * the comm already failed. */
  assert_int_equal(r1, ncclSuccess);
  assert_true(r2 == ncclSuccess || r2 == ncclInvalidUsage);
  double t0 = now();
  assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
  if (!strcmp(m->what, "order")) assert_int_not_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_true(now() - t0 < scaled(60)); /* detected at once, not by the timeout */
  cudaStreamDestroy(s2);
  ncclResult_t ae = ncclSuccess;
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInvalidUsage);
  const char *msg = ncclGetLastError(c->comm);
  print_message("rank %d (%s): %s\n", c->rank, m->what, msg);
  assert_non_null(strstr(msg, "mismatched across ranks"));
  for (int i = 0; i < 2; i++) assert_non_null(strstr(msg, m->want[i]));
  cudaFree(b);
}

static void test_mismatch(void **state) {
  static const mismatch kinds[] = {
      /* #0 or #1, whichever failed last: either names both calls */
      {"order", {"ncclAllReduce(count=64, ncclFloat32, sum)", "ncclBroadcast(count=64, ncclFloat32, root=0)"}},
      {"count", {"ranks 0-1 ncclAllReduce(count=64, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=65, ncclFloat32, sum)"}},
      {"datatype", {"ranks 0-1 ncclAllReduce(count=64, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=64, ncclInt32, sum)"}},
      {"op", {"ranks 0-1 ncclReduceScatter(count=21, ncclFloat32, sum)", "rank 2 ncclReduceScatter(count=21, ncclFloat32, max)"}},
      {"root", {"ranks 0-1 ncclReduce(count=64, ncclFloat32, sum, root=1)", "rank 2 ncclReduce(count=64, ncclFloat32, sum, root=2)"}},
      /* Small allreduces, which skip the rendezvous unless the calls
       * differ: between two small calls, a small and a large one in both
       * roles, and a small allreduce against a broadcast. */
      {"small count", {"ranks 0-1 ncclAllReduce(count=2, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=3, ncclFloat32, sum)"}},
      {"small op", {"ranks 0-1 ncclAllReduce(count=2, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=2, ncclFloat32, max)"}},
      {"small, large", {"ranks 0-1 ncclAllReduce(count=2, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=64, ncclFloat32, sum)"}},
      {"large, small", {"ranks 0-1 ncclAllReduce(count=64, ncclFloat32, sum)", "rank 2 ncclAllReduce(count=2, ncclFloat32, sum)"}},
      {"small kind", {"ranks 0-1 ncclAllReduce(count=2, ncclFloat32, sum)", "rank 2 ncclBroadcast(count=2, ncclFloat32, root=0)"}},
  };
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  /* Small allreduces in the 3-rank communicators on any machine (auto is
   * the CPU count): every mismatch above also crosses small.c's parts. */
  ncclsimParamSet("SMALL_RANKS", "8");
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    assert_int_equal(run_ranks(N, mismatch_body, (void *)&kinds[i]), 0);
  ncclsimParamSet("SMALL_RANKS", NULL);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Many ranks: the diagnostic groups ranks making the same call, so each
 * rank's call is named within the comm's last-error text. */
static void many_body(rank_ctx *c) {
  int *b;
  assert_int_equal(cudaMalloc((void **)&b, 64 * sizeof(int)), cudaSuccess);
  size_t count = c->rank == 5 ? 7 : c->rank == 2 ? 9 : 8;
  assert_int_equal(ncclAllReduce(b, b, count, ncclInt32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_not_equal(cudaStreamSynchronize(0), cudaSuccess);
  const char *msg = ncclGetLastError(c->comm);
  assert_non_null(strstr(msg, "ranks 0-1,3-4,6-7 ncclAllReduce(count=8, ncclInt32, sum)"));
  assert_non_null(strstr(msg, "rank 2 ncclAllReduce(count=9, ncclInt32, sum)"));
  assert_non_null(strstr(msg, "rank 5 ncclAllReduce(count=7, ncclInt32, sum)"));
  assert_non_null(strstr(msg, "(ncclsim checks this"));
  cudaFree(b);
}

static void test_mismatch_many_ranks(void **state) {
  ncclsimParamSet("TIMEOUT", scaled_str(120).s); /* a mismatch, never a timeout, on a loaded machine */
  assert_int_equal(run_ranks(8, many_body, NULL), 0);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* ------------------------------------------------------------- timeout */

/* Rank N-1 does not call in time: the others fail with ncclTimeout
 * within NCCLSIM_TIMEOUT, naming their pending call, and withdraw. When
 * the late rank calls after they left, it finds no partner and times out
 * too (under ASan: nothing of theirs is touched after it was freed). */
static _Atomic int timed_out; /* ranks whose wait has ended */

static void timeout_body(rank_ctx *c) {
  float *b;
  assert_int_equal(cudaMalloc((void **)&b, COUNT * sizeof(float)), cudaSuccess);
  /* A first collective of every rank: as on a GPU, it connects the ring
   * and blocks each caller until all have come; what times out below is
   * the collective itself, on the stream. */
  assert_int_equal(ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  /* Short only now that every rank's init is done: a loaded machine can
   * take longer than 0.3 s to bring the ranks together. */
  ncclsimParamSet("TIMEOUT", "0.3");
  if (c->rank == N - 1) {
    /* Late for sure: only once every other rank has timed out and left
     * (bounded, so a bug here cannot hang the test). */
    for (int i = 0; i < 30000 * slowdown() && atomic_load(&timed_out) < N - 1; i++) {
      struct timespec ms = {0, 1000 * 1000};
      nanosleep(&ms, NULL);
    }
    assert_int_equal(atomic_load(&timed_out), N - 1);
    assert_int_equal(ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaErrorTimeout);
    ncclResult_t ae;
    assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
    assert_int_equal(ae, ncclTimeout);
    cudaFree(b);
    return;
  }
  double t0 = now();
  assert_int_equal(ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorTimeout);
  double dt = now() - t0;
  atomic_fetch_add(&timed_out, 1);
  assert_true(dt >= 0.25 && dt < scaled(60)); /* not the timeout of init */
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclTimeout);
  const char *msg = ncclGetLastError(c->comm);
  print_message("rank %d: %s\n", c->rank, msg);
  assert_non_null(strstr(msg, "ncclAllReduce(count=64, ncclFloat32, sum)"));
  cudaFree(b);
}

static void test_timeout(void **state) {
  atomic_store(&timed_out, 0);
  ncclsimParamSet("TIMEOUT", scaled_str(120).s); /* for init; the ranks then set 0.3 */
  assert_int_equal(run_ranks(N, timeout_body, NULL), 0);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* --------------------------------------------- one thread, every rank */

/* ncclCommInitAll, then one thread enqueues every rank's allreduces (two
 * per rank, different dtypes, on one stream per rank) inside a group.
 * (Ranks cannot share a stream: a stream belongs to one device.) */
static void test_one_thread_group(void **state) {
  enum { R = 4, C = 5000 };
  ncclComm_t comms[R];
  cudaStream_t st[R];
  float *f[R];
  int64_t *l[R];
  assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
    cudaMalloc((void **)&f[r], C * sizeof(float));
    cudaMalloc((void **)&l[r], C * sizeof(int64_t));
    static float hf[C];
    static int64_t hl[C];
    for (int i = 0; i < C; i++) hf[i] = (float)(r + i % 7), hl[i] = (int64_t)r << 40 | i;
    cudaMemcpy(f[r], hf, sizeof hf, cudaMemcpyHostToDevice);
    cudaMemcpy(l[r], hl, sizeof hl, cudaMemcpyHostToDevice);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclAllReduce(f[r], f[r], C, ncclFloat32, ncclSum, comms[r], st[r]), ncclSuccess);
    assert_int_equal(ncclAllReduce(l[r], l[r], C, ncclInt64, ncclMax, comms[r], st[r]), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
    static float hf[C];
    static int64_t hl[C];
    cudaMemcpy(hf, f[r], sizeof hf, cudaMemcpyDeviceToHost);
    cudaMemcpy(hl, l[r], sizeof hl, cudaMemcpyDeviceToHost);
    for (int i = 0; i < C; i++) {
      assert_true(hf[i] == (float)(0 + 1 + 2 + 3 + 4 * (i % 7)));
      assert_true(hl[i] == ((int64_t)(R - 1) << 40 | i));
    }
    cudaFree(f[r]);
    cudaFree(l[r]);
    cudaStreamDestroy(st[r]);
  }
  for (int r = 0; r < R; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* ------------------------------- sequence numbers of dropped calls */

/* A collective that never launches takes no sequence number: refused for
 * its stream, dropped with a failed group, or dropped by
 * ncclGroupSimulateEnd. Each of those happens on rank 0 alone; the next
 * collective of both ranks must still meet. Regression test: the number
 * was taken at the call, so rank 0 ran three ahead and the ranks' next
 * allreduces waited in different rounds until NCCLSIM_TIMEOUT. */
static void test_seq_of_dropped_calls(void **state) {
  enum { R = 2, C = 16 };
  ncclComm_t comms[R];
  cudaStream_t st[R], dead;
  float *b[R];
  assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
  ncclsimParamSet("TIMEOUT", scaled_str(5).s); /* the bug's allreduces waited until then */
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&b[r], C * sizeof(float)), cudaSuccess);
    float h[C];
    for (int i = 0; i < C; i++) h[i] = (float)(r + 1);
    cudaMemcpy(b[r], h, sizeof h, cudaMemcpyHostToDevice);
  }
  cudaSetDevice(0);
  assert_int_equal(cudaStreamCreate(&dead), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(dead), cudaSuccess);
  /* Refused: the stream is gone. */
  assert_int_equal(ncclAllReduce(b[0], b[0], C, ncclFloat32, ncclSum, comms[0], dead), ncclUnhandledCudaError);
  /* Dropped with its group: rank 1's call in it fails. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b[0], b[0], C, ncclFloat32, ncclSum, comms[0], st[0]), ncclSuccess);
  cudaSetDevice(1);
  assert_int_not_equal(ncclAllReduce(b[1], b[1], C, (ncclDataType_t)99, ncclSum, comms[1], st[1]), ncclSuccess);
  assert_int_not_equal(ncclGroupEnd(), ncclSuccess);
  /* Dropped by the simulation. */
  cudaSetDevice(0);
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(b[0], b[0], C, ncclFloat32, ncclSum, comms[0], st[0]), ncclSuccess);
  assert_int_equal(ncclGroupSimulateEnd(&info), ncclSuccess);
  /* Both ranks now: they must meet. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclAllReduce(b[r], b[r], C, ncclFloat32, ncclSum, comms[r], st[r]), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
    float h[C];
    cudaMemcpy(h, b[r], sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < C; i++) assert_true(h[i] == 3.0f);
    cudaFree(b[r]);
    cudaStreamDestroy(st[r]);
  }
  ncclsimParamSet("TIMEOUT", NULL);
  for (int r = 0; r < R; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* ------------------------------------------- unaligned 16-bit buffers */

/* Users' buffers need not be aligned to their element: float16 and
 * bfloat16 sums over buffers at an odd address. Regression test for a
 * misaligned uint16_t load in sim/coll/dtype.c, found by the fuzzer (UBSan
 * stops the test if it comes back). */
static void test_unaligned_narrow(void **state) {
  enum { R = 2, C = 33 };
  static const struct { ncclDataType_t dt; uint16_t one, two, three; } k[] = {
      {ncclFloat16, 0x3c00, 0x4000, 0x4200}, {ncclBfloat16, 0x3f80, 0x4000, 0x4040}};
  ncclComm_t comms[R];
  cudaStream_t st[R];
  unsigned char *raw[R];
  assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&raw[r], 2 * C + 1), cudaSuccess);
  }
  for (size_t t = 0; t < sizeof k / sizeof k[0]; t++) {
    unsigned char h[2 * C];
    for (int r = 0; r < R; r++) {
      uint16_t v = r ? k[t].two : k[t].one;
      for (int i = 0; i < C; i++) memcpy(h + 2 * i, &v, 2);
      cudaSetDevice(r);
      assert_int_equal(cudaMemcpy(raw[r] + 1, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    }
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      assert_int_equal(ncclAllReduce(raw[r] + 1, raw[r] + 1, C, k[t].dt, ncclSum, comms[r], st[r]),
                       ncclSuccess);
    }
    assert_int_equal(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
      assert_int_equal(cudaMemcpy(h, raw[r] + 1, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
      for (int i = 0; i < C; i++) {
        uint16_t v;
        memcpy(&v, h + 2 * i, 2);
        assert_int_equal(v, k[t].three);
      }
    }
  }
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    cudaFree(raw[r]);
    cudaStreamDestroy(st[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

/* The same for 4-byte types through the fused kernels (sim/coll/reduce.c):
 * their scalar tail stored through an aligned int32_t pointer (UBSan
 * "store to misaligned address", found by the fuzzer). Sum and max of
 * int32, sum of float, 33 elements at an odd address: two strips and a
 * tail. */
static void test_unaligned_wide(void **state) {
  enum { R = 2, C = 33 };
  static const struct { ncclDataType_t dt; ncclRedOp_t op; } k[] = {
      {ncclInt32, ncclSum}, {ncclInt32, ncclMax}, {ncclFloat32, ncclSum}};
  ncclComm_t comms[R];
  cudaStream_t st[R];
  unsigned char *raw[R];
  assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&raw[r], 4 * C + 1), cudaSuccess);
  }
  for (size_t t = 0; t < sizeof k / sizeof k[0]; t++) {
    unsigned char h[4 * C];
    for (int r = 0; r < R; r++) {
      for (int i = 0; i < C; i++) {
        int32_t iv = r + 1 + i;
        float fv = (float)(r + 1 + i);
        memcpy(h + 4 * i, k[t].dt == ncclInt32 ? (void *)&iv : (void *)&fv, 4);
      }
      cudaSetDevice(r);
      assert_int_equal(cudaMemcpy(raw[r] + 1, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    }
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      assert_int_equal(ncclAllReduce(raw[r] + 1, raw[r] + 1, C, k[t].dt, k[t].op, comms[r], st[r]), ncclSuccess);
    }
    assert_int_equal(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
      assert_int_equal(cudaMemcpy(h, raw[r] + 1, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
      for (int i = 0; i < C; i++) {
        int want = k[t].op == ncclMax ? 2 + i : 3 + 2 * i;
        if (k[t].dt == ncclInt32) {
          int32_t v;
          memcpy(&v, h + 4 * i, 4);
          assert_int_equal(v, want);
        } else {
          float v;
          memcpy(&v, h + 4 * i, 4);
          assert_true(v == (float)want);
        }
      }
    }
  }
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    cudaFree(raw[r]);
    cudaStreamDestroy(st[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

/* ------------------------------------------- stores around the cache */

/* NCCLSIM_STREAM_STORE_BYTES picks, from a collective's footprint, between
 * results stored through the cache and around it (sim/coll/work.c). Both
 * paths give the same results: allreduce, reduce-scatter, allgather and
 * all-to-all of 3 ranks, an odd count (strips and a tail) at an odd byte
 * offset, with 0 (every collective streams but the reduce-scatter, which
 * never does) and with a bound none reaches. */
static void test_stream_store(void **state) {
  (void)state;
  enum { R = 3, C = 3 * 20011 }; /* elements per rank's buffer */
  static const char *const bound[] = {"0", "1099511627776"};
  ncclComm_t comms[R];
  cudaStream_t st[R];
  unsigned char *sraw[R], *rraw[R];
  float *h = malloc(C * sizeof *h);
  assert_non_null(h);
  assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&sraw[r], C * sizeof(float) + 1), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&rraw[r], C * sizeof(float) + 1), cudaSuccess);
  }
  for (int b = 0; b < 2; b++) {
    assert_int_equal(ncclsimParamSet("STREAM_STORE_BYTES", bound[b]), ncclSuccess);
    for (int kind = 0; kind < 4; kind++) {
      for (int r = 0; r < R; r++) {
        for (int i = 0; i < C; i++) h[i] = (float)(1000 * r + i % 977);
        cudaSetDevice(r);
        assert_int_equal(cudaMemcpy(sraw[r] + 1, h, C * sizeof *h, cudaMemcpyHostToDevice), cudaSuccess);
      }
      assert_int_equal(ncclGroupStart(), ncclSuccess);
      for (int r = 0; r < R; r++) {
        void *s = sraw[r] + 1, *d = rraw[r] + 1;
        ncclResult_t res = kind == 0   ? ncclAllReduce(s, d, C, ncclFloat32, ncclSum, comms[r], st[r])
                           : kind == 1 ? ncclReduceScatter(s, d, C / R, ncclFloat32, ncclSum, comms[r], st[r])
                           : kind == 2 ? ncclAllGather(s, d, C / R, ncclFloat32, comms[r], st[r])
                                       : ncclAlltoAll(s, d, C / R, ncclFloat32, comms[r], st[r]);
        assert_int_equal(res, ncclSuccess);
      }
      assert_int_equal(ncclGroupEnd(), ncclSuccess);
      for (int r = 0; r < R; r++) {
        cudaSetDevice(r);
        assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
        int n = kind == 1 ? C / R : C;
        assert_int_equal(cudaMemcpy(h, rraw[r] + 1, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost), cudaSuccess);
        for (int i = 0; i < n; i++) {
          int blk = i / (C / R), at = i % (C / R), src;
          float want;
          switch (kind) {
          case 0: want = (float)(3000 + 3 * (i % 977)); break;
          case 1: src = r * (C / R) + i; want = (float)(3000 + 3 * (src % 977)); break;
          case 2: want = (float)(1000 * blk + at % 977); break;
          default: src = r * (C / R) + at; want = (float)(1000 * blk + src % 977); break;
          }
          if (h[i] != want) fail_msg("bound %s, kind %d, rank %d, element %d: %g, want %g", bound[b], kind, r, i,
                                     (double)h[i], (double)want);
        }
      }
    }
  }
  assert_int_equal(ncclsimParamSet("STREAM_STORE_BYTES", NULL), ncclSuccess);
  for (int r = 0; r < R; r++) {
    cudaSetDevice(r);
    cudaFree(sraw[r]);
    cudaFree(rraw[r]);
    cudaStreamDestroy(st[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
  free(h);
}

/* Which collectives store around the cache, as the plan's TRACE line says:
 * with the bound at 0 an allreduce does, at 2 ranks and 3; a reduce-scatter
 * (one output per result, where the stores around the cache cost more than
 * they save) never. */
/* The plan line of `call` at nranks in text ("ncclAllReduce 0, 3 ranks:
 * ...") says its results are stored `where` the cache; a missing line
 * fails the test. */
static void assert_plan(const char *text, const char *call, int nranks, const char *where) {
  char head[64], tag[32], line[512], want[64];
  snprintf(head, sizeof head, "%s ", call);
  snprintf(tag, sizeof tag, ", %d ranks:", nranks);
  snprintf(want, sizeof want, "stored %s the cache", where);
  for (const char *at = text; (at = strstr(at, head)) != NULL; at++) {
    const char *end = strchr(at, '\n');
    if (!end) break;
    snprintf(line, sizeof line, "%.*s", (int)(end - at), at);
    if (!strstr(line, tag)) continue;
    if (!strstr(line, want)) fail_msg("%s at %d ranks: want \"%s\", got: %s", call, nranks, want, line);
    return;
  }
  fail_msg("no %s plan line at %d ranks in:\n%s", call, nranks, text);
}

static void test_stream_store_choice(void **state) {
  (void)state;
  enum { MAXR = 3, C = 3 << 15 };
  assert_int_equal(ncclsimParamSet("STREAM_STORE_BYTES", "0"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG", "TRACE"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", "COLL"), ncclSuccess);
  capture cap;
  capture_start(&cap, 2);
  for (int R = 2; R <= MAXR; R++) {
    ncclComm_t comms[MAXR];
    cudaStream_t st[MAXR];
    void *sb[MAXR], *rb[MAXR];
    assert_int_equal(ncclCommInitAll(comms, R, NULL), ncclSuccess);
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      assert_int_equal(cudaStreamCreate(&st[r]), cudaSuccess);
      assert_int_equal(cudaMalloc(&sb[r], C * sizeof(float)), cudaSuccess);
      assert_int_equal(cudaMalloc(&rb[r], C * sizeof(float)), cudaSuccess);
    }
    for (int kind = 0; kind < 2; kind++) {
      assert_int_equal(ncclGroupStart(), ncclSuccess);
      for (int r = 0; r < R; r++)
        assert_int_equal(kind == 0 ? ncclAllReduce(sb[r], rb[r], C, ncclFloat32, ncclSum, comms[r], st[r])
                                   : ncclReduceScatter(sb[r], rb[r], C / R, ncclFloat32, ncclSum, comms[r], st[r]),
                         ncclSuccess);
      assert_int_equal(ncclGroupEnd(), ncclSuccess);
      for (int r = 0; r < R; r++) assert_int_equal(cudaStreamSynchronize(st[r]), cudaSuccess);
    }
    for (int r = 0; r < R; r++) {
      cudaSetDevice(r);
      cudaFree(sb[r]);
      cudaFree(rb[r]);
      cudaStreamDestroy(st[r]);
      ncclCommDestroy(comms[r]);
    }
  }
  char *text = capture_end(&cap);
  ncclsimParamSet("DEBUG", NULL);
  ncclsimParamSet("DEBUG_SUBSYS", NULL);
  ncclsimParamSet("STREAM_STORE_BYTES", NULL);
  assert_plan(text, "ncclAllReduce", 3, "around");
  assert_plan(text, "ncclAllReduce", 2, "around");
  assert_plan(text, "ncclReduceScatter", 3, "through");
  assert_plan(text, "ncclReduceScatter", 2, "through");
  free(text);
}

/* ----------------------------------------------------- PreMulSum misuse */

static void test_premulsum_misuse(void **state) {
  ncclComm_t a[2], b[2];
  assert_int_equal(ncclCommInitAll(a, 2, NULL), ncclSuccess);
  assert_int_equal(ncclCommInitAll(b, 2, NULL), ncclSuccess);
  cudaSetDevice(0);
  float *d, two = 2;
  assert_int_equal(cudaMalloc((void **)&d, 64 * sizeof(float)), cudaSuccess);
  ncclRedOp_t op;
  assert_int_equal(ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, a[0]), ncclSuccess);
  assert_true((int)op >= (int)ncclNumOps); /* never a built-in op's value */
  /* another communicator (rank 0 of b), another datatype */
  assert_int_equal(ncclAllReduce(d, d, 4, ncclFloat32, op, b[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclAllReduce(d, d, 4, ncclFloat64, op, a[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclReduce(d, d, 4, ncclInt32, op, 0, a[0], 0), ncclInvalidArgument);
  /* the other rank of the same communicator has its own ops */
  cudaSetDevice(1);
  float *d1;
  cudaMalloc((void **)&d1, 64 * sizeof(float));
  assert_int_equal(ncclAllReduce(d1, d1, 4, ncclFloat32, op, a[1], 0), ncclInvalidArgument);
  cudaSetDevice(0);
  /* after destroy */
  assert_int_equal(ncclRedOpDestroy(op, b[0]), ncclInvalidArgument);
  assert_int_equal(ncclRedOpDestroy(op, a[0]), ncclSuccess);
  assert_int_equal(ncclAllReduce(d, d, 4, ncclFloat32, op, a[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclRedOpDestroy(op, a[0]), ncclInvalidArgument);
  /* inside a group, the bad call fails it */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(d, d, 4, ncclFloat32, op, a[0], 0), ncclInvalidArgument);
  assert_int_equal(ncclGroupEnd(), ncclInvalidArgument);
  cudaFree(d);
  cudaFree(d1);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(ncclCommDestroy(a[r]), ncclSuccess);
    assert_int_equal(ncclCommDestroy(b[r]), ncclSuccess);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mismatch),         cmocka_unit_test(test_mismatch_many_ranks),
      cmocka_unit_test(test_timeout),          cmocka_unit_test(test_one_thread_group),
      cmocka_unit_test(test_premulsum_misuse), cmocka_unit_test(test_unaligned_narrow),
      cmocka_unit_test(test_unaligned_wide),   cmocka_unit_test(test_stream_store),
      cmocka_unit_test(test_stream_store_choice),
      cmocka_unit_test(test_seq_of_dropped_calls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
