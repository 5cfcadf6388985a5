/*
 * tests/sim_scale.c — what ncclsim itself costs per rank, at 256 ranks.
 *
 * One thread drives a 256-rank communicator (ncclCommInitAll, one device
 * per rank, one stream per rank) through a grouped send/recv ring and an
 * allreduce of a few elements, and measures what the simulator added:
 * heap bytes (mallinfo2, every arena), resident memory (VmRSS) and threads
 * (/proc/self/status). User buffers are allocated before the baseline, so
 * they are not counted. It also checks ncclAvg on int8 at 256 ranks (the
 * divisor once wrapped to 0 in the element type: SIGFPE). docs/ncclsim.md ("Scale") quotes these figures.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <nccl.h>
#include <ncclsim.h>

#include "slow.h"

enum { N = 256, COUNT = 256 /* floats per rank: user buffers stay small */ };

/* The budget: simulator memory per rank, beyond user buffers. */
#define BUDGET_PER_RANK ((size_t)1 << 20)

/* Sanitizers replace malloc and add shadow memory per thread: the memory
 * figures are then printed, not checked. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* A "Name:  value kB" field of /proc/self/status. */
static long status_field(const char *name) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t n = strlen(name);
  long v = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, name, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

typedef struct {
  size_t heap; /* bytes in use, every arena, mmapped chunks included */
  long rss_kb, threads;
} usage;

static usage measure(void) {
  struct mallinfo2 mi = mallinfo2();
  return (usage){mi.uordblks + mi.hblkhd, status_field("VmRSS"), status_field("Threads")};
}

static void report(const char *what, usage a, usage b) {
  print_message("%-32s heap %+8.1f KiB/rank, RSS %+8.1f KiB/rank, threads %+ld (%.2f/rank)\n", what,
                ((double)b.heap - (double)a.heap) / 1024.0 / N, (double)(b.rss_kb - a.rss_kb) / N,
                b.threads - a.threads, (double)(b.threads - a.threads) / N);
}

static void test_cost_per_rank(void **state) {
  (void)state;
  static ncclComm_t comms[N];
  static cudaStream_t streams[N];
  static float *sbuf[N], *rbuf[N];
  float h[COUNT];

  assert_int_equal(ncclsimParamSet("DEVICES", "256"), ncclSuccess);
  /* 256 ranks' ring under TSan on a loaded 2-core machine outlasted the
   * 10 s of make check; this test measures memory, and a hang still fails
   * after 120 s (times the build's slowdown). */
  assert_int_equal(ncclsimParamSet("TIMEOUT", scaled_str(120).s), ncclSuccess);
  for (int r = 0; r < N; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&sbuf[r], COUNT * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&rbuf[r], COUNT * sizeof(float)), cudaSuccess);
    for (int i = 0; i < COUNT; i++) h[i] = (float)(r + i);
    assert_int_equal(cudaMemcpy(sbuf[r], h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  }
  usage base = measure();

  assert_int_equal(ncclCommInitAll(comms, N, NULL), ncclSuccess);
  for (int r = 0; r < N; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaStreamCreate(&streams[r]), cudaSuccess);
  }
  usage inited = measure();

  /* Ring: each rank sends to the next and receives from the previous. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    assert_int_equal(ncclSend(sbuf[r], COUNT, ncclFloat32, (r + 1) % N, comms[r], streams[r]), ncclSuccess);
    assert_int_equal(ncclRecv(rbuf[r], COUNT, ncclFloat32, (r + N - 1) % N, comms[r], streams[r]), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < N; r++) assert_int_equal(cudaStreamSynchronize(streams[r]), cudaSuccess);
  for (int r = 0; r < N; r++) {
    int from = (r + N - 1) % N;
    assert_int_equal(cudaMemcpy(h, rbuf[r], sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < COUNT; i += 37) assert_true(h[i] == (float)(from + i));
  }

  /* Allreduce (sum) in place over the received data. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++)
    assert_int_equal(ncclAllReduce(rbuf[r], rbuf[r], COUNT, ncclFloat32, ncclSum, comms[r], streams[r]),
                     ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < N; r++) assert_int_equal(cudaStreamSynchronize(streams[r]), cudaSuccess);
  for (int r = 0; r < N; r += 51) {
    assert_int_equal(cudaMemcpy(h, rbuf[r], sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    /* sum over ranks of (rank + i): exact in float for these magnitudes */
    for (int i = 0; i < COUNT; i += 37) assert_true(h[i] == (float)(N * (N - 1) / 2 + N * i));
  }

  /* ncclAvg on int8 and int32: the divisor, 256, does not fit in int8. The
   * int8 sum (100 ranks give 1) stays in range, and 100 / 256 is 0. */
  for (int r = 0; r < N; r++) {
    int8_t b[16];
    int32_t w[16];
    memset(b, r < 100, sizeof b);
    for (int i = 0; i < 16; i++) w[i] = r;
    assert_int_equal(cudaMemcpy(sbuf[r], b, sizeof b, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy((char *)sbuf[r] + 64, w, sizeof w, cudaMemcpyHostToDevice), cudaSuccess);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < N; r++) {
    assert_int_equal(ncclAllReduce(sbuf[r], rbuf[r], 16, ncclInt8, ncclAvg, comms[r], streams[r]), ncclSuccess);
    assert_int_equal(ncclAllReduce((char *)sbuf[r] + 64, (char *)rbuf[r] + 64, 16, ncclInt32, ncclAvg, comms[r],
                                   streams[r]),
                     ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < N; r++) assert_int_equal(cudaStreamSynchronize(streams[r]), cudaSuccess);
  for (int r = 0; r < N; r += 85) {
    int8_t b[16];
    int32_t w[16];
    assert_int_equal(cudaMemcpy(b, rbuf[r], sizeof b, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(cudaMemcpy(w, (char *)rbuf[r] + 64, sizeof w, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 16; i++) {
      assert_int_equal(b[i], 0);
      assert_int_equal(w[i], (N - 1) / 2); /* sum of 0..255 is 32640; / 256 is 127 */
    }
  }
  usage ran = measure();

  for (int r = 0; r < N; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  for (int r = 0; r < N; r++) assert_int_equal(cudaStreamDestroy(streams[r]), cudaSuccess);
  usage after = measure();

  report("init + one stream per rank", base, inited);
  report("after ring and allreduce", base, ran);
  report("after destroy", base, after);

  /* Heap: what the simulator allocated. RSS also holds thread stacks and
   * glibc's per-thread arenas (up to 8 x cores of them, shared by all).
   * Neither means anything under a sanitizer or valgrind (make
   * check-valgrind sets N4C_VALGRIND=1): they replace malloc and keep
   * memory of their own per thread (memcheck: about 1.2 MiB per rank). */
  const char *vg = getenv("N4C_VALGRIND");
  if (!SANITIZED && !(vg && strcmp(vg, "1") == 0)) {
    assert_true(ran.heap < base.heap || ran.heap - base.heap <= BUDGET_PER_RANK * N);
    assert_true(ran.rss_kb - base.rss_kb <= (long)(BUDGET_PER_RANK / 1024) * N);
  }
  /* Threads: one worker per stream that ran work, nothing per peer. */
  assert_true(ran.threads - base.threads <= N);
  /* Destroyed streams stop their workers. */
  assert_true(after.threads <= base.threads);

  for (int r = 0; r < N; r++) {
    cudaFree(sbuf[r]);
    cudaFree(rbuf[r]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cost_per_rank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
