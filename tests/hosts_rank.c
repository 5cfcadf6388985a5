/*
 * tests/hosts_rank.c — one process of tests/sim-hosts.sh: a few ranks of a
 * communicator whose ranks are on several simulated hosts (NCCLSIM_HOST_ID).
 *
 *   hosts_rank MODE NRANKS FIRST COUNT IDFILE
 *
 * The process inits ranks FIRST..FIRST+COUNT-1 from one thread in a group.
 * The process with rank 0 makes the unique id and writes IDFILE; the others
 * wait for it. Exit status 0 when the mode's expectation holds, 1 when not
 * (a line on stderr says what), 2 on bad arguments.
 *
 * MODE:
 *   ring     every rank sends to rank+1 and receives from rank-1, 8 bytes,
 *            then 6 MiB and 0 bytes, checking every byte; then every
 *            collective (colls); windows and the one-sided calls (rma);
 *            device communicators (devcomms); splits (splits): by rank
 *            parity with keys in reverse, then one where rank 0 gives
 *            NOCOLOR, then a shrink without the last rank, each new
 *            communicator checked by an allreduce (tests/hosts_mgmt.c
 *            makes them inside groups and on non-blocking communicators);
 *            destroy.
 *   sendexit rank 1 (h1) sends rank 0 (h0) two 8-byte messages and one of
 *            6 MiB, destroys its communicator and exits at once; rank 0
 *            receives the last two a second later, every byte checked.
 *   gin      ranks on host "h1" make their communicators with GIN type
 *            NONE, the others with PROXY as in every other mode
 *            (ncclsimSetCommOptions): a device communicator that
 *            needs GIN fails on every rank, as not all ranks support it;
 *            one without GIN is made everywhere.
 *   badkey   the id's key (its last 8 bytes) is changed before init, except
 *            in rank 0's process: the root refuses the others
 *            (ncclInvalidUsage, the last error names the key), and rank 0's
 *            init times out for want of them.
 *   missing  init is expected to fail with ncclTimeout (run with too few
 *            processes and a short NCCLSIM_TIMEOUT).
 *   disagree the ranks of every process but rank 0's say nranks NRANKS+1:
 *            every rank's init fails with ncclInvalidUsage, at once (not
 *            ncclTimeout), its last error naming nranks.
 *   twice    the process with FIRST 1 claims rank 0 instead: every rank's
 *            init fails with ncclInvalidUsage, at once, its last error
 *            saying rank 0 was claimed twice.
 *   die      after init, ranks on host "h1" exit at once; the others'
 *            receive from them (its first-use connection, in the call)
 *            fails within NCCLSIM_TIMEOUT.
 *   diesig   the same with an ncclWaitSignal for a signal from them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nccl_device.h>
#include <ncclsim.h>

#include "slow.h"
#include "id_file.h"

enum { MAXR = 8 };

static int fail(const char *what, ncclResult_t r) {
  fprintf(stderr, "hosts_rank: %s: %s (%d); last error: %s\n", what, ncclGetErrorString(r), (int)r,
          ncclGetLastError(NULL));
  return 1;
}

/* disagree and twice: the process of rank 0 holds the bootstrap root, which
 * must outlive the others' inits (a rank whose hello comes after it ended
 * could not reach it). The others leave IDFILE.done.FIRST, holding their
 * COUNT, once their init has ended; rank 0's process waits (up to 120 s:
 * a sibling's progress, not a timing) until the others' ranks are all
 * done. */
static void init_ended(const char *idfile, int first, int count, int nranks) {
  char path[4096];
  if (first != 0) {
    snprintf(path, sizeof path, "%s.done.%d", idfile, first);
    FILE *f = fopen(path, "w");
    if (f) fprintf(f, "%d\n", count), fclose(f);
    return;
  }
  for (int i = 0; i < 12000; i++) {
    int done = 0;
    for (int r = 1; r < nranks; r++) {
      snprintf(path, sizeof path, "%s.done.%d", idfile, r);
      FILE *f = fopen(path, "r");
      int c = 0;
      if (f && fscanf(f, "%d", &c) == 1) done += c;
      if (f) fclose(f);
    }
    if (done >= nranks - count) return;
    usleep(10000);
  }
}

static unsigned char pattern(int sender, size_t i) { return (unsigned char)(sender * 31 + i * 7 + 1); }

/* One ring step of `bytes` for every local rank, checked. */
static int ring(ncclComm_t *comms, int first, int count, int nranks, size_t bytes) {
  void *sb[MAXR], *rb[MAXR];
  cudaStream_t s[MAXR];
  for (int i = 0; i < count; i++) {
    cudaSetDevice(i);
    cudaStreamCreate(&s[i]);
    cudaMalloc(&sb[i], bytes ? bytes : 1);
    cudaMalloc(&rb[i], bytes ? bytes : 1);
    unsigned char *h = malloc(bytes ? bytes : 1);
    for (size_t k = 0; k < bytes; k++) h[k] = pattern(first + i, k);
    cudaMemcpy(sb[i], h, bytes, cudaMemcpyHostToDevice);
    cudaMemset(rb[i], 0, bytes ? bytes : 1);
    free(h);
  }
  ncclResult_t r;
  ncclGroupStart();
  for (int i = 0; i < count; i++) {
    int me = first + i;
    if ((r = ncclSend(sb[i], bytes, ncclUint8, (me + 1) % nranks, comms[i], s[i])) != ncclSuccess) return fail("ncclSend", r);
    if ((r = ncclRecv(rb[i], bytes, ncclUint8, (me - 1 + nranks) % nranks, comms[i], s[i])) != ncclSuccess)
      return fail("ncclRecv", r);
  }
  if ((r = ncclGroupEnd()) != ncclSuccess) return fail("ncclGroupEnd", r);
  int bad = 0;
  for (int i = 0; i < count; i++) {
    if (cudaStreamSynchronize(s[i]) != cudaSuccess) {
      fprintf(stderr, "hosts_rank: rank %d: stream failed\n", first + i);
      bad = 1;
    }
    ncclResult_t a;
    ncclCommGetAsyncError(comms[i], &a);
    if (a != ncclSuccess) bad = fail("async error after the ring", a);
    unsigned char *h = malloc(bytes ? bytes : 1);
    cudaMemcpy(h, rb[i], bytes, cudaMemcpyDeviceToHost);
    int from = (first + i - 1 + nranks) % nranks;
    for (size_t k = 0; k < bytes && !bad; k++)
      if (h[k] != pattern(from, k)) {
        fprintf(stderr, "hosts_rank: rank %d: byte %zu of %zu from rank %d is %u, want %u\n", first + i, k, bytes,
                from, h[k], pattern(from, k));
        bad = 1;
      }
    free(h);
    cudaFree(sb[i]);
    cudaFree(rb[i]);
    cudaStreamDestroy(s[i]);
  }
  return bad;
}

/* The collectives across hosts, each for every local rank in one group,
 * every element checked: allreduce (sum, avg, prod, min, int32 avg,
 * PreMulSum), broadcast, reduce (max),
 * allgather, reducescatter, alltoall and gather, with roots on either
 * host. */
static int colls(ncclComm_t *comms, int first, int count, int nranks) {
  enum { C = 1000 };
  int n = nranks, bad = 0;
  size_t big = (size_t)C * (size_t)n;
  float *sf[MAXR], *rf[MAXR];
  int32_t *si[MAXR], *ri[MAXR];
  double *sd[MAXR], *rd[MAXR];
  cudaStream_t s[MAXR];
  for (int i = 0; i < count; i++) {
    cudaSetDevice(i);
    cudaStreamCreate(&s[i]);
    cudaMallocHost((void **)&sf[i], big * sizeof(float));
    cudaMallocHost((void **)&rf[i], big * sizeof(float));
    cudaMallocHost((void **)&si[i], big * sizeof(int32_t));
    cudaMallocHost((void **)&ri[i], big * sizeof(int32_t));
    cudaMallocHost((void **)&sd[i], big * sizeof(double));
    cudaMallocHost((void **)&rd[i], big * sizeof(double));
  }
#define RUN(what, call)                                                                   \
  do {                                                                                    \
    ncclResult_t r_;                                                                      \
    ncclGroupStart();                                                                     \
    for (int i = 0; i < count; i++)                                                       \
      if ((r_ = (call)) != ncclSuccess) return fail(what, r_);                            \
    if ((r_ = ncclGroupEnd()) != ncclSuccess) return fail(what, r_);                       \
    for (int i = 0; i < count; i++)                                                       \
      if (cudaStreamSynchronize(s[i]) != cudaSuccess) return fail(what, ncclSystemError); \
  } while (0)
#define CHECK(what, got, want)                                                                            \
  do {                                                                                                    \
    if ((double)(got) != (double)(want) && !bad) {                                                        \
      fprintf(stderr, "hosts_rank: rank %d: %s: %s is %g, want %g\n", me, what, #got, (double)(got), (double)(want)); \
      bad = 1;                                                                                            \
    }                                                                                                     \
  } while (0)
  /* allreduce sum and avg, float32 */
  for (int i = 0; i < count; i++)
    for (int k = 0; k < C; k++) sf[i][k] = (float)((first + i + 1) * (k % 7 + 1));
  RUN("allreduce sum", ncclAllReduce(sf[i], rf[i], C, ncclFloat32, ncclSum, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("allreduce sum", rf[i][k], (k % 7 + 1) * n * (n + 1) / 2);
  RUN("allreduce avg", ncclAllReduce(sf[i], rf[i], C, ncclFloat32, ncclAvg, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("allreduce avg", rf[i][k], (float)((k % 7 + 1) * (n + 1)) / 2);
  /* allreduce prod, min and avg on int32 (avg: the wrapped sum divided
   * once), and a PreMulSum of factor rank+1 on float32: a host whose ranks
   * reduce alike sends one reduced input (sim/coll/coll_net.c) */
  for (int i = 0; i < count; i++)
    for (int k = 0; k < C; k++) si[i][k] = (k % 3 == 0 && (first + i) % 2 == 0) ? 2 : 1;
  RUN("allreduce prod", ncclAllReduce(si[i], ri[i], C, ncclInt32, ncclProd, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("allreduce prod", ri[i][k], k % 3 == 0 ? 1 << ((n + 1) / 2) : 1);
  for (int i = 0; i < count; i++)
    for (int k = 0; k < C; k++) si[i][k] = (first + i) * 7 - k;
  RUN("allreduce min", ncclAllReduce(si[i], ri[i], C, ncclInt32, ncclMin, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("allreduce min", ri[i][k], -k);
  RUN("allreduce avg int32", ncclAllReduce(si[i], ri[i], C, ncclInt32, ncclAvg, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("allreduce avg int32", ri[i][k], (7 * n * (n - 1) / 2 - n * k) / n);
  {
    ncclRedOp_t op[MAXR];
    for (int i = 0; i < count; i++) {
      float f = (float)(first + i + 1);
      ncclResult_t r_;
      if ((r_ = ncclRedOpCreatePreMulSum(&op[i], &f, ncclFloat32, ncclScalarHostImmediate, comms[i])) != ncclSuccess)
        return fail("ncclRedOpCreatePreMulSum", r_);
      for (int k = 0; k < C; k++) sf[i][k] = (float)(k % 5);
    }
    RUN("allreduce premulsum", ncclAllReduce(sf[i], rf[i], C, ncclFloat32, op[i], comms[i], s[i]));
    for (int i = 0, me = first; i < count; i++, me++)
      for (int k = 0; k < C; k++) CHECK("allreduce premulsum", rf[i][k], (k % 5) * n * (n + 1) / 2);
    for (int i = 0; i < count; i++) ncclRedOpDestroy(op[i], comms[i]);
  }
  /* broadcast int32 from the last rank */
  for (int i = 0; i < count; i++)
    for (int k = 0; k < C; k++) si[i][k] = (first + i) * 100000 + k, ri[i][k] = -1;
  RUN("broadcast", ncclBroadcast(si[i], ri[i], C, ncclInt32, n - 1, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("broadcast", ri[i][k], (n - 1) * 100000 + k);
  /* reduce max int32 to rank 1 */
  RUN("reduce", ncclReduce(si[i], ri[i], C, ncclInt32, ncclMax, 1, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; me == 1 && k < C; k++) CHECK("reduce max", ri[i][k], (n - 1) * 100000 + k);
  /* allgather int32 */
  RUN("allgather", ncclAllGather(si[i], ri[i], C, ncclInt32, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int q = 0; q < n; q++)
      for (int k = 0; k < C; k++) CHECK("allgather", ri[i][(size_t)q * C + k], q * 100000 + k);
  /* reducescatter float64 sum */
  for (int i = 0; i < count; i++)
    for (size_t k = 0; k < big; k++) sd[i][k] = (double)(first + i) + (double)k;
  RUN("reducescatter", ncclReduceScatter(sd[i], rd[i], C, ncclFloat64, ncclSum, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int k = 0; k < C; k++) CHECK("reducescatter", rd[i][k], (double)n * ((double)me * C + k) + n * (n - 1) / 2.0);
  /* alltoall int32 */
  for (int i = 0; i < count; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < C; k++) si[i][(size_t)j * C + k] = (first + i) * 1000000 + j * 1000 + k;
  RUN("alltoall", ncclAlltoAll(si[i], ri[i], C, ncclInt32, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < C; k++) CHECK("alltoall", ri[i][(size_t)j * C + k], j * 1000000 + me * 1000 + k);
  /* gather int32 to the last rank */
  RUN("gather", ncclGather(si[i], ri[i], C, ncclInt32, n - 1, comms[i], s[i]));
  for (int i = 0, me = first; i < count; i++, me++)
    for (int q = 0; me == n - 1 && q < n; q++)
      for (int k = 0; k < C; k++) CHECK("gather", ri[i][(size_t)q * C + k], q * 1000000 + k);
#undef RUN
#undef CHECK
  for (int i = 0; i < count; i++) {
    cudaFreeHost(sf[i]), cudaFreeHost(rf[i]), cudaFreeHost(si[i]), cudaFreeHost(ri[i]), cudaFreeHost(sd[i]), cudaFreeHost(rd[i]);
    cudaStreamDestroy(s[i]);
  }
  return bad;
}

/* Windows across hosts: every rank registers a window of its own size
 * (unequal sizes), puts S bytes into every other rank's window at its own
 * slot with ncclPutSignal, waits for one signal from each, and checks every
 * byte; then ncclSignal alone, twice to each peer, and one wait of opCnt 2
 * per peer; then the pointer queries: a rank elsewhere has no peer
 * pointer, and LSA rank 0 is the host's first rank. */
static int rma(ncclComm_t *comms, int first, int count, int nranks) {
  enum { S = 64 << 10 };
  int n = nranks, bad = 0;
  void *mem[MAXR];
  ncclWindow_t win[MAXR];
  cudaStream_t s[MAXR];
  ncclResult_t r;
  ncclGroupStart();
  for (int i = 0; i < count; i++) {
    size_t size = (size_t)S * (size_t)(n + 1) + (size_t)(first + i) * 4096;
    cudaSetDevice(i);
    cudaStreamCreate(&s[i]);
    if ((r = ncclMemAlloc(&mem[i], size)) != ncclSuccess) return fail("ncclMemAlloc", r);
    unsigned char *h = malloc(size);
    for (size_t k = 0; k < size; k++) h[k] = k < S ? pattern(first + i, k) : 0;
    cudaMemcpy(mem[i], h, size, cudaMemcpyHostToDevice);
    free(h);
    if ((r = ncclCommWindowRegister(comms[i], mem[i], size, &win[i], NCCL_WIN_COLL_SYMMETRIC)) != ncclSuccess)
      return fail("ncclCommWindowRegister", r);
  }
  if ((r = ncclGroupEnd()) != ncclSuccess) return fail("ncclCommWindowRegister (group)", r);
  ncclWaitSignalDesc_t d[64];
  /* One thread drives this process's ranks: their first one-sided calls
   * in one group, or the first would wait for the others' (NCCL sets up
   * one-sided operations at their first use, on every rank). */
  ncclGroupStart();
  for (int i = 0; i < count; i++) {
    int me = first + i;
    for (int p = 0; p < n; p++)
      if (p != me && (r = ncclPutSignal(mem[i], S, ncclUint8, p, win[i], (size_t)S * (size_t)(me + 1), 0, 0, 0,
                                        comms[i], s[i])) != ncclSuccess)
        return fail("ncclPutSignal", r);
    int k = 0;
    for (int p = 0; p < n; p++)
      if (p != me) d[k++] = (ncclWaitSignalDesc_t){.opCnt = 1, .peer = p, .sigIdx = 0, .ctx = 0};
    if ((r = ncclWaitSignal(k, d, comms[i], s[i])) != ncclSuccess) return fail("ncclWaitSignal", r);
  }
  if ((r = ncclGroupEnd()) != ncclSuccess) return fail("ncclPutSignal (group)", r);
  for (int i = 0; i < count; i++)
    if (cudaStreamSynchronize(s[i]) != cudaSuccess) return fail("put_signal: stream", ncclSystemError);
  for (int i = 0; i < count && !bad; i++) {
    int me = first + i;
    unsigned char *h = malloc((size_t)S * (size_t)(n + 1));
    cudaMemcpy(h, mem[i], (size_t)S * (size_t)(n + 1), cudaMemcpyDeviceToHost);
    for (int p = 0; p < n && !bad; p++)
      for (size_t k = 0; p != me && k < S; k++)
        if (h[(size_t)S * (size_t)(p + 1) + k] != pattern(p, k)) {
          fprintf(stderr, "hosts_rank: rank %d: byte %zu put by rank %d is %u, want %u\n", me, k, p,
                  h[(size_t)S * (size_t)(p + 1) + k], pattern(p, k));
          bad = 1;
          break;
        }
    free(h);
  }
  for (int i = 0; i < count && !bad; i++) {
    int me = first + i;
    for (int p = 0; p < n; p++)
      for (int t = 0; p != me && t < 2; t++)
        if ((r = ncclSignal(p, 0, 0, 0, comms[i], s[i])) != ncclSuccess) return fail("ncclSignal", r);
    int k = 0;
    for (int p = 0; p < n; p++)
      if (p != me) d[k++] = (ncclWaitSignalDesc_t){.opCnt = 2, .peer = p, .sigIdx = 0, .ctx = 0};
    if ((r = ncclWaitSignal(k, d, comms[i], s[i])) != ncclSuccess) return fail("ncclWaitSignal (signals)", r);
  }
  for (int i = 0; i < count; i++)
    if (cudaStreamSynchronize(s[i]) != cudaSuccess) return fail("signal: stream", ncclSystemError);
  for (int i = 0; i < count && !bad; i++) {
    int me = first + i, other = (me + n / 2) % n; /* on the other host, with 2 hosts of n/2 */
    void *pp = (void *)1;
    if ((r = ncclGetPeerDevicePointer(win[i], 0, other, &pp)) != ncclSuccess) return fail("ncclGetPeerDevicePointer", r);
    if (pp) bad = fail("a rank on another host has a peer pointer", ncclInternalError);
    if ((r = ncclGetLsaDevicePointer(win[i], 0, 0, &pp)) != ncclSuccess) return fail("ncclGetLsaDevicePointer", r);
    if (!pp) bad = fail("LSA rank 0 has no pointer", ncclInternalError);
  }
  for (int i = 0; i < count; i++) {
    ncclResult_t a;
    ncclCommGetAsyncError(comms[i], &a);
    if (a != ncclSuccess) bad = fail("async error after the one-sided calls", a);
    if ((r = ncclCommWindowDeregister(comms[i], win[i])) != ncclSuccess) bad = fail("ncclCommWindowDeregister", r);
    ncclMemFree(mem[i]);
    cudaStreamDestroy(s[i]);
  }
  return bad;
}

/* Device communicators on each of the process's ranks: one without GIN,
 * then one with a FULL GIN connection and 4 signals, which succeeds when
 * every rank of every host supports GIN (want_gin) and fails with
 * ncclInvalidArgument naming GIN when one host's ranks do not. What they
 * report: the rank, the LSA team (the host) and the teams (the hosts).
 * Across hosts a creation waits for every rank (its memory is registered
 * for the other hosts, as NCCL's creation registers a window), and it is
 * not offered inside a group: each rank of the process creates from a
 * thread of its own. */
typedef struct {
  ncclComm_t comm;
  int me, device, nranks, hosts;
  bool want_gin;
  int bad;
} devcomm_job;

static int devcomm_rank(ncclComm_t comm, int me, int nranks, int hosts, bool want_gin) {
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  ncclResult_t r = ncclCommQueryProperties(comm, &props);
  if (r != ncclSuccess) return fail("ncclCommQueryProperties", r);
  for (int gin = 0; gin < 2; gin++) {
    ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    ncclDevComm_t dc;
    if (gin) {
      reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
      reqs.ginSignalCount = 4;
    }
    r = ncclDevCommCreate(comm, &reqs, &dc);
    if (gin && !want_gin) {
      if (r != ncclInvalidArgument) return fail("a GIN device communicator with a host without GIN was not refused", r);
      if (!strstr(ncclGetLastError(NULL), "not all ranks support GIN"))
        return fail("the GIN device communicator's refusal does not say not all ranks support GIN", r);
      continue;
    }
    if (r != ncclSuccess) return fail(gin ? "ncclDevCommCreate (FULL GIN)" : "ncclDevCommCreate (no GIN)", r);
    int want_type = gin ? (int)NCCL_GIN_TYPE_PROXY : (int)NCCL_GIN_TYPE_NONE;
    if (dc.rank != me || dc.nRanks != nranks || dc.nLsaTeams != hosts || dc.lsaSize != nranks / hosts ||
        dc.lsaRank != me % (nranks / hosts) || (int)dc.ginType != want_type || dc.ginSignalCount != (gin ? 4 : 0)) {
      fprintf(stderr,
              "hosts_rank: rank %d: device communicator (GIN %d): rank %d of %d, LSA %d of %d, %d teams, GIN type "
              "%d (want %d), %d signals\n",
              me, gin, dc.rank, dc.nRanks, dc.lsaRank, dc.lsaSize, dc.nLsaTeams, (int)dc.ginType, want_type,
              dc.ginSignalCount);
      return 1;
    }
    if ((r = ncclDevCommDestroy(comm, &dc)) != ncclSuccess) return fail("ncclDevCommDestroy", r);
  }
  return 0;
}

static void *devcomm_thread(void *arg) {
  devcomm_job *j = arg;
  cudaSetDevice(j->device); /* the rank's own, as at its init */
  j->bad = devcomm_rank(j->comm, j->me, j->nranks, j->hosts, j->want_gin);
  return NULL;
}

static int devcomms(ncclComm_t *comms, int first, int count, int nranks, int hosts, bool want_gin) {
  devcomm_job jobs[MAXR];
  pthread_t th[MAXR];
  int bad = 0;
  for (int i = 0; i < count; i++) {
    jobs[i] = (devcomm_job){comms[i], first + i, i, nranks, hosts, want_gin, 0};
    if (pthread_create(&th[i], NULL, devcomm_thread, &jobs[i]) != 0) return fail("pthread_create", ncclSystemError);
  }
  for (int i = 0; i < count; i++) {
    pthread_join(th[i], NULL);
    bad |= jobs[i].bad;
  }
  return bad;
}

/* One rank's splits, on a thread of its own: a split is collective and
 * blocks its caller until every rank of the parent has called it. */
typedef struct {
  ncclComm_t comm;
  int rank, nranks, device, bad;
} split_arg;

/* The allreduce of (parent rank + 1) over sub, which holds nsame ranks of
 * the parent, whose sum is `want`. */
static int split_allreduce(ncclComm_t sub, int rank, int64_t want) {
  cudaStream_t s;
  int64_t *buf;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc((void **)&buf, sizeof *buf) != cudaSuccess)
    return fail("split: stream or memory", ncclSystemError);
  *buf = rank + 1; /* simulated device memory is the host's */
  ncclResult_t r = ncclAllReduce(buf, buf, 1, ncclInt64, ncclSum, sub, s);
  int bad = r != ncclSuccess ? fail("split: ncclAllReduce", r) : 0;
  if (!bad && cudaStreamSynchronize(s) != cudaSuccess) bad = fail("split: the allreduce's stream", ncclSystemError);
  if (!bad && *buf != want) {
    fprintf(stderr, "hosts_rank: rank %d: allreduce on its split gave %lld, want %lld\n", rank, (long long)*buf,
            (long long)want);
    bad = 1;
  }
  cudaFree(buf);
  cudaStreamDestroy(s);
  return bad;
}

static void *split_thread(void *p) {
  split_arg *a = p;
  int me = a->rank, n = a->nranks, color = me % 2, nsame = 0, below = 0, cnt = -1, r1 = -1;
  int64_t sum = 0;
  cudaSetDevice(a->device);
  for (int r = 0; r < n; r++)
    if (r % 2 == color) {
      nsame++;
      below += r > me; /* keys run backwards */
      sum += r + 1;
    }
  ncclComm_t sub = NULL;
  ncclResult_t r = ncclCommSplit(a->comm, color, n - me, &sub, NULL);
  if (r != ncclSuccess) {
    a->bad = fail("ncclCommSplit across hosts", r);
    return NULL;
  }
  ncclCommCount(sub, &cnt);
  ncclCommUserRank(sub, &r1);
  if (cnt != nsame || r1 != below) {
    fprintf(stderr, "hosts_rank: rank %d: split(color %d) gave rank %d of %d, want %d of %d\n", me, color, r1, cnt,
            below, nsame);
    a->bad = 1;
  }
  if (!a->bad) a->bad = split_allreduce(sub, me, sum);
  if ((r = ncclCommDestroy(sub)) != ncclSuccess && !a->bad) a->bad = fail("ncclCommDestroy of a split", r);
  /* Rank 0 opts out; the others keep their order. */
  sub = (ncclComm_t)1;
  r = ncclCommSplit(a->comm, me == 0 ? NCCL_SPLIT_NOCOLOR : 0, me, &sub, NULL);
  if (r != ncclSuccess) {
    if (!a->bad) a->bad = fail("ncclCommSplit with NOCOLOR across hosts", r);
    return NULL;
  }
  if (me == 0) {
    if (sub != NULL && !a->bad) a->bad = fail("split(NOCOLOR) gave a communicator", ncclInternalError);
  } else {
    ncclCommUserRank(sub, &r1);
    if (r1 != me - 1 && !a->bad) a->bad = fail("split beside a NOCOLOR rank 0: wrong rank", ncclInternalError);
    if (!a->bad) a->bad = split_allreduce(sub, me, (int64_t)n * (n + 1) / 2 - 1);
    ncclCommDestroy(sub);
  }
  /* A shrink without the last rank, which does not call it: the others
   * keep their order. */
  if (me == n - 1 || a->bad) return NULL;
  int ex[1] = {n - 1};
  r = ncclCommShrink(a->comm, ex, 1, &sub, NULL, NCCL_SHRINK_DEFAULT);
  if (r != ncclSuccess) {
    a->bad = fail("ncclCommShrink across hosts", r);
    return NULL;
  }
  ncclCommCount(sub, &cnt);
  ncclCommUserRank(sub, &r1);
  if (cnt != n - 1 || r1 != me) {
    fprintf(stderr, "hosts_rank: rank %d: shrink gave rank %d of %d, want %d of %d\n", me, r1, cnt, me, n - 1);
    a->bad = 1;
  }
  if (!a->bad) a->bad = split_allreduce(sub, me, (int64_t)n * (n + 1) / 2 - n);
  ncclCommDestroy(sub);
  return NULL;
}

static int splits(ncclComm_t *comms, int first, int count, int nranks) {
  split_arg a[MAXR];
  pthread_t t[MAXR];
  int bad = 0;
  for (int i = 0; i < count; i++) {
    a[i] = (split_arg){comms[i], first + i, nranks, i, 0};
    if (pthread_create(&t[i], NULL, split_thread, &a[i]) != 0) {
      fprintf(stderr, "hosts_rank: pthread_create\n");
      exit(1); /* the peers' splits would wait for this rank */
    }
  }
  for (int i = 0; i < count; i++) {
    pthread_join(t[i], NULL);
    bad |= a[i].bad;
  }
  return bad;
}

/* sendexit: rank 1 (on h1) sends rank 0 two messages of 8 bytes and one of
 * 6 MiB, destroys its communicator and exits; rank 0 takes the first, then
 * waits a second before the others, which must still come (the last two
 * were sent before the sender left, or its sends would not have ended). */
static int send_exit(ncclComm_t comm, int rank) {
  cudaStream_t s;
  unsigned char *buf;
  size_t big = 6u << 20;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc((void **)&buf, 16 + big) != cudaSuccess)
    return fail("sendexit: stream or memory", ncclSystemError);
  for (size_t i = 0; i < 16 + big; i++) buf[i] = rank ? pattern(1, i) : 0; /* device memory is the host's */
  ncclResult_t r = ncclSuccess;
  for (int k = 0; k < 3 && r == ncclSuccess; k++) {
    size_t off = k == 2 ? 16 : (size_t)k * 8, n = k == 2 ? big : 8;
    if (rank == 0 && k == 1) sleep(1); /* the sender is gone by now */
    r = rank ? ncclSend(buf + off, n, ncclUint8, 0, comm, s) : ncclRecv(buf + off, n, ncclUint8, 1, comm, s);
    if (r == ncclSuccess && cudaStreamSynchronize(s) != cudaSuccess) ncclCommGetAsyncError(comm, &r);
  }
  if (r != ncclSuccess) return fail(rank ? "sendexit: ncclSend" : "sendexit: ncclRecv after the sender left", r);
  for (size_t i = 0; rank == 0 && i < 16 + big; i++)
    if (buf[i] != pattern(1, i)) {
      fprintf(stderr, "hosts_rank: sendexit: byte %zu is %u, want %u\n", i, buf[i], pattern(1, i));
      return 1;
    }
  return (r = ncclCommDestroy(comm)) != ncclSuccess ? fail("sendexit: ncclCommDestroy", r) : 0;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: hosts_rank ring|badkey|missing|disagree|twice|die|diesig|gin|sendexit NRANKS FIRST COUNT "
            "IDFILE\n");
    return 2;
  }
  const char *mode = argv[1];
  int nranks = atoi(argv[2]), first = atoi(argv[3]), count = atoi(argv[4]);
  if (nranks < 1 || first < 0 || count < 1 || count > MAXR || first + count > nranks) return 2;
  ncclUniqueId id;
  ncclResult_t r;
  if (first == 0) {
    if ((r = ncclGetUniqueId(&id)) != ncclSuccess) return fail("ncclGetUniqueId", r);
    if (write_id(argv[5], &id) != 0) return fail("write the id file", ncclSystemError);
  } else if (read_id(argv[5], &id, 30) != 0) {
    fprintf(stderr, "hosts_rank: no id in %s\n", argv[5]);
    return 1;
  }
  /* The root's own process keeps the right key (it must outlive the
   * others' refusals): its init then times out waiting for them. */
  bool badkey = !strcmp(mode, "badkey") && first != 0;
  if (badkey) id.internal[sizeof id.internal - 1] ^= 0x5a;
  /* GIN (simulated proxy) on every rank, but for gin mode's host h1. */
  const char *host_id = getenv("NCCLSIM_HOST_ID");
  bool gin_mode = !strcmp(mode, "gin");
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ginType = gin_mode && host_id && !strcmp(host_id, "h1") ? NCCL_GIN_TYPE_NONE : NCCL_GIN_TYPE_PROXY;
  if ((r = ncclsimSetCommOptions(&o)) != ncclSuccess) return fail("ncclsimSetCommOptions", r);
  ncclComm_t comms[MAXR] = {0};
  bool disagree = !strcmp(mode, "disagree"), twice = !strcmp(mode, "twice");
  ncclGroupStart();
  for (int i = 0; i < count; i++) {
    cudaSetDevice(i);
    r = ncclCommInitRank(&comms[i], disagree && first != 0 ? nranks + 1 : nranks, id,
                         twice && first == 1 ? 0 : first + i);
    if (r != ncclSuccess) break;
  }
  ncclResult_t g = ncclGroupEnd();
  if (r == ncclSuccess) r = g;
  if (r != ncclSuccess) { /* a failed init still returns its comm: abort frees it */
    char last[1024];
    snprintf(last, sizeof last, "%s", ncclGetLastError(NULL));
    for (int i = 0; i < count; i++)
      if (comms[i]) ncclCommAbort(comms[i]);
    fprintf(stderr, "hosts_rank: rank %d: init failed as %s: %s\n", first, ncclGetErrorString(r), last);
    if (disagree || twice) init_ended(argv[5], first, count, nranks);
    if (badkey)
      return r == ncclInvalidUsage && strstr(last, "key") ? 0 : fail("badkey: init did not fail with ncclInvalidUsage naming the key", r);
    if (!strcmp(mode, "missing") || !strcmp(mode, "badkey"))
      return r == ncclTimeout && strstr(last, "rank") ? 0 : fail("missing: init did not fail with ncclTimeout naming a rank", r);
    if (disagree)
      return r == ncclInvalidUsage && strstr(last, "disagree") && strstr(last, "nranks")
                 ? 0 : fail("disagree: init did not fail with ncclInvalidUsage naming nranks", r);
    if (twice)
      return r == ncclInvalidUsage && strstr(last, "disagree") && strstr(last, "rank 0 of 2 was claimed twice")
                 ? 0 : fail("twice: init did not fail with ncclInvalidUsage saying rank 0 was claimed twice", r);
    return fail("init", r);
  }
  if (!strcmp(mode, "badkey") || !strcmp(mode, "missing") || disagree || twice) return fail("init succeeded", r);
  int n;
  ncclCommCount(comms[0], &n);
  if (n != nranks) return fail("ncclCommCount", ncclInternalError);
  /* The LSA team is the host: HOSTS (from the environment) teams of
   * nranks/HOSTS ranks. */
  const char *hv = getenv("HOSTS_RANK_HOSTS");
  if (hv) {
    ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
    if ((r = ncclCommQueryProperties(comms[0], &props)) != ncclSuccess) return fail("ncclCommQueryProperties", r);
    ncclTeam_t lsa = ncclTeamLsa(comms[0]);
    int hosts = atoi(hv);
    if (props.nLsaTeams != hosts || lsa.nRanks != nranks / hosts || lsa.rank != first % (nranks / hosts)) {
      fprintf(stderr, "hosts_rank: rank %d: nLsaTeams %d (want %d), LSA team of %d (want %d), LSA rank %d (want %d)\n",
              first, props.nLsaTeams, hosts, lsa.nRanks, nranks / hosts, lsa.rank, first % (nranks / hosts));
      return 1;
    }
  }
  if (gin_mode) {
    int bad = devcomms(comms, first, count, nranks, hv ? atoi(hv) : 1, false);
    for (int i = 0; i < count; i++)
      if ((r = ncclCommDestroy(comms[i])) != ncclSuccess) bad = fail("ncclCommDestroy", r);
    return bad;
  }
  if (!strcmp(mode, "sendexit")) return send_exit(comms[0], first);
  bool sig = !strcmp(mode, "diesig");
  if (!strcmp(mode, "die") || sig) {
    const char *host = getenv("NCCLSIM_HOST_ID");
    if (host && !strcmp(host, "h1")) _exit(0);
    /* Receive from the previous rank, which is on h1 for first == 2 of 4. */
    void *buf;
    cudaStream_t s, si[MAXR];
    for (int i = count - 1; i >= 0; i--) cudaSetDevice(i), cudaStreamCreate(&si[i]);
    s = si[0]; /* on device 0, now current */
    cudaMalloc(&buf, 64);
    ncclWaitSignalDesc_t d = {.opCnt = 1, .peer = (first - 1 + nranks) % nranks, .sigIdx = 0, .ctx = 0};
    time_t t0 = time(NULL);
    /* The first use connects, in the call: a receive's link, whose hello
     * finds the host gone; every rank's one-sided setup, so this
     * process's other ranks make their first one-sided call in the same
     * group, and the leaders' hellos find the host gone. */
    if (sig) {
      ncclGroupStart();
      for (int i = 0; i < count; i++) {
        ncclWaitSignalDesc_t di = {.opCnt = 1, .peer = (first + i - 1 + nranks) % nranks, .sigIdx = 0, .ctx = 0};
        ncclResult_t ri = ncclWaitSignal(1, &di, comms[i], si[i]);
        if (i == 0) r = ri;
      }
      ncclResult_t ge = ncclGroupEnd();
      if (r == ncclSuccess) r = ge;
    } else {
      r = ncclRecv(buf, 64, ncclUint8, d.peer, comms[0], s);
    }
    cudaError_t e = r == ncclSuccess ? cudaStreamSynchronize(s) : cudaErrorUnknown;
    long took = (long)(time(NULL) - t0);
    ncclResult_t a;
    ncclCommGetAsyncError(comms[0], &a);
    if (a == ncclSuccess) a = r;
    char last[1024];
    snprintf(last, sizeof last, "%s", ncclGetLastError(comms[0]));
    fprintf(stderr, "hosts_rank: rank %d: the %s from the dead host ended after %ld s: %s: %s\n", first,
            sig ? "wait for a signal" : "receive", took, ncclGetErrorString(a), last);
    if (e == cudaSuccess && a == ncclSuccess) return fail("die: the wait on a dead host succeeded", a);
    /* NCCL's error for a lost peer, well before NCCLSIM_TIMEOUT (30 s
     * times the build's slowdown here), naming the host and its ranks. */
    const char *timeout = getenv("NCCLSIM_TIMEOUT");
    double half = (timeout ? atof(timeout) : 30.0) / 2;
    if (a != ncclRemoteError) return fail("die: not ncclRemoteError", a);
    if (took > half) return fail("die: the dead host was noticed only at the timeout", a);
    if (!strstr(last, "host h1 (ranks 2,3)")) return fail("die: the error does not name host h1 and its ranks", a);
    for (int i = 0; i < count; i++) ncclCommAbort(comms[i]);
    return 0;
  }
  int bad = ring(comms, first, count, nranks, 8) || ring(comms, first, count, nranks, 6u << 20) ||
            ring(comms, first, count, nranks, 0);
  if (!bad) bad = colls(comms, first, count, nranks);
  if (!bad) bad = rma(comms, first, count, nranks);
  if (!bad && hv) bad = devcomms(comms, first, count, nranks, atoi(hv), true);
  if (!bad) bad = splits(comms, first, count, nranks);
  for (int i = 0; i < count; i++)
    if ((r = ncclCommDestroy(comms[i])) != ncclSuccess) bad = fail("ncclCommDestroy", r);
  return bad;
}
