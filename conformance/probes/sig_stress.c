/* Where SIG-STRESS stops on real NCCL: two ranks as two threads (GPUs 0
 * and 1), one-sided operations in phases, each phase watched. A phase that
 * has not ended after WATCH seconds is reported with how far each rank got,
 * and the program exits 3.
 *
 *   sig_stress N PHASE...        e.g. sig_stress 50000 signals waits
 *
 * Phases (after the connection: every rank's first signal and wait, grouped):
 *   signals  each rank enqueues N ncclSignal to its peer, then syncs
 *   waits    each rank waits for N signals from its peer in chunks of 1000
 *   puts     N ncclPutSignal of 64 bytes each, then a sync and N waits
 *   mixed    N operations, half puts half signals, no waits in between,
 *            then the waits (SIG-STRESS's order)
 *   xstream  a wait for one more signal on stream A, then the peer's signal
 *            sent from another stream B of each rank (SIG-STRESS's last step)
 *   lazyinit rank 0's stream holds a wait that only rank 1 can release;
 *            then each rank's first one-sided operation on a second,
 *            unconnected communicator (signal_latency's first chunk), then
 *            the release
 *   putdepth rank 0's stream holds a wait that rank 1 releases after 3 s;
 *            behind it rank 0 enqueues N ncclPutSignal of 64 bytes: how
 *            many went in before the host thread blocked
 *   sigdepth the same with N ncclSignal
 *
 * Build: cc sig_stress.c -I$NCCL/include -I$CUDA/include -L$NCCL/lib
 *        -L$CUDA/lib64 -lnccl -lcudart -lpthread */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <nccl.h>

#define WATCH 15
static ncclComm_t comms[2], comms2[2];
static ncclWindow_t wins[2];
static void *mem[2];
static long N;
static int nphase;
static char **phases;
static pthread_barrier_t bar;
static volatile long progress[2];
static volatile int cur = -1;
static volatile time_t started;

#define NC(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
  printf("rank %d: %s = %d (%s)\n", r, #x, (int)r_, ncclGetErrorString(r_)); fflush(stdout); exit(1); } } while (0)
#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("rank %d: %s = %s\n", r, #x, cudaGetErrorString(e_)); fflush(stdout); exit(1); } } while (0)

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void *watchdog(void *a) {
  (void)a;
  for (;;) {
    sleep(1);
    if (cur >= 0 && cur < nphase && time(NULL) - started > WATCH) {
      printf("STUCK in phase %s after %d s: rank0 at %ld, rank1 at %ld of %ld\n", phases[cur], WATCH,
             progress[0], progress[1], N);
      fflush(stdout);
      _exit(3);
    }
  }
  return NULL;
}

static void waitn(int r, long n, cudaStream_t s) {
  for (long done = 0; done < n;) {
    long c = n - done > 1000 ? 1000 : n - done;
    ncclWaitSignalDesc_t d = {(int)c, 1 - r, 0, 0};
    NC(ncclWaitSignal(1, &d, comms[r], s));
    done += c;
    progress[r] = done;
  }
}

static void *rank(void *a) {
  int r = (int)(long)a, peer = 1 - r;
  cudaStream_t s, s2;
  CU(cudaSetDevice(r));
  CU(cudaStreamCreate(&s));
  CU(cudaStreamCreate(&s2));
  NC(ncclMemAlloc(&mem[r], 1 << 20));
  NC(ncclCommWindowRegister(comms[r], mem[r], 1 << 20, &wins[r], NCCL_WIN_COLL_SYMMETRIC));
  ncclWaitSignalDesc_t one = {1, peer, 0, 0};
  NC(ncclGroupStart());
  NC(ncclSignal(peer, 0, 0, 0, comms[r], s));
  NC(ncclWaitSignal(1, &one, comms[r], s));
  NC(ncclGroupEnd());
  CU(cudaStreamSynchronize(s));
  if (r == 0) printf("connected\n");
  for (int p = 0; p < nphase; p++) {
    pthread_barrier_wait(&bar);
    if (r == 0) { progress[0] = progress[1] = 0; started = time(NULL); cur = p; }
    pthread_barrier_wait(&bar);
    double t0 = now();
    const char *ph = phases[p];
    if (!strcmp(ph, "signals")) {
      for (long i = 0; i < N; i++) { NC(ncclSignal(peer, 0, 0, 0, comms[r], s)); progress[r] = i + 1; }
      CU(cudaStreamSynchronize(s));
    } else if (!strcmp(ph, "waits")) {
      waitn(r, N, s);
      CU(cudaStreamSynchronize(s));
    } else if (!strcmp(ph, "puts") || !strcmp(ph, "mixed")) {
      long puts = 0;
      for (long i = 0; i < N; i++) {
        if (ph[0] == 'p' || (i & 1)) {
          NC(ncclPutSignal((char *)mem[r] + 64 * (i % 1024), 64, ncclUint8, peer, wins[r],
                           65536 + 64 * (i % 1024), 0, 0, 0, comms[r], s));
          puts++;
        } else {
          NC(ncclSignal(peer, 0, 0, 0, comms[r], s));
        }
        progress[r] = i + 1;
      }
      if (ph[0] == 'p') CU(cudaStreamSynchronize(s));
      waitn(r, N, s);
      CU(cudaStreamSynchronize(s));
    } else if (!strcmp(ph, "xstream")) {
      NC(ncclWaitSignal(1, &one, comms[r], s));
      progress[r] = 1;
      pthread_barrier_wait(&bar);
      NC(ncclSignal(peer, 0, 0, 0, comms[r], s2));
      progress[r] = 2;
      CU(cudaStreamSynchronize(s2));
      progress[r] = 3;
      CU(cudaStreamSynchronize(s));
      progress[r] = 4;
    } else if (!strcmp(ph, "lazyinit")) {
      if (r == 0) NC(ncclWaitSignal(1, &one, comms[r], s));
      progress[r] = 1;
      if (r == 0) NC(ncclSignal(peer, 0, 0, 0, comms2[r], s));
      else NC(ncclWaitSignal(1, &one, comms2[r], s));
      progress[r] = 2;
      pthread_barrier_wait(&bar);
      if (r == 1) NC(ncclSignal(peer, 0, 0, 0, comms[r], s2)); /* s holds rank 1's wait */
      progress[r] = 3;
      CU(cudaStreamSynchronize(s));
      CU(cudaStreamSynchronize(s2));
      progress[r] = 4;
    } else if (!strcmp(ph, "putdepth") || !strcmp(ph, "sigdepth")) {
      if (r == 0) {
        NC(ncclWaitSignal(1, &one, comms[r], s));
        for (long i = 0; i < N; i++) {
          if (ph[0] == 'p')
            NC(ncclPutSignal(mem[r], 64, ncclUint8, peer, wins[r], 65536, 0, 0, 0, comms[r], s));
          else
            NC(ncclSignal(peer, 0, 0, 0, comms[r], s));
          progress[r] = i + 1;
        }
      } else {
        sleep(3);
        printf("%s: rank 0 had enqueued %ld of %ld after 3 s\n", ph, progress[0], N);
        NC(ncclSignal(peer, 0, 0, 0, comms[r], s));
      }
      CU(cudaStreamSynchronize(s));
      if (r == 1) waitn(r, N, s); /* what rank 0 sent */
      CU(cudaStreamSynchronize(s));
    } else {
      printf("unknown phase %s\n", ph);
      exit(2);
    }
    printf("rank %d: phase %s done in %.3f s\n", r, ph, now() - t0);
    fflush(stdout);
  }
  pthread_barrier_wait(&bar);
  cur = -1;
  NC(ncclCommWindowDeregister(comms[r], wins[r]));
  NC(ncclMemFree(mem[r]));
  return NULL;
}

int main(int argc, char **argv) {
  int r = -1, devs[2] = {0, 1};
  if (argc < 3) { fprintf(stderr, "usage: sig_stress N PHASE...\n"); return 2; }
  N = atol(argv[1]);
  phases = argv + 2;
  nphase = argc - 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  NC(ncclCommInitAll(comms, 2, devs));
  NC(ncclCommInitAll(comms2, 2, devs));
  pthread_barrier_init(&bar, NULL, 2);
  pthread_t t[3];
  pthread_create(&t[2], NULL, watchdog, NULL);
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, rank, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("all phases done\n");
  for (int i = 0; i < 2; i++) ncclCommDestroy(comms[i]);
  for (int i = 0; i < 2; i++) ncclCommDestroy(comms2[i]);
  return 0;
}
