/* Revoke with an operation in flight: a 1-rank communicator's recv from
 * itself that no send matches; another thread revokes after 3 s. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <nccl.h>

static ncclComm_t comm;
static double t0;
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9 - t0; }

static void *revoker(void *arg) {
  sleep(3);
  ncclResult_t r = ncclCommRevoke(comm, 0);
  printf("t=%.2f revoke=%d (%s)\n", now(), (int)r, ncclGetErrorString(r)); fflush(stdout);
  return NULL;
}

int main(void) {
  t0 = now();
  ncclUniqueId id;
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  float *buf;
  cudaMalloc((void **)&buf, 4096 * sizeof(float));
  ncclGetUniqueId(&id);
  ncclResult_t r = ncclCommInitRank(&comm, 1, id, 0);
  printf("init=%d\n", (int)r);
  pthread_t th;
  pthread_create(&th, NULL, revoker, NULL);
  r = ncclRecv(buf, 4096, ncclFloat, 0, comm, s);
  printf("t=%.2f recv=%d (%s)\n", now(), (int)r, ncclGetErrorString(r)); fflush(stdout);
  cudaError_t e = cudaStreamSynchronize(s);
  printf("t=%.2f sync=%d (%s)\n", now(), (int)e, cudaGetErrorString(e)); fflush(stdout);
  pthread_join(th, NULL);
  ncclResult_t a = ncclInProgress;
  for (int i = 0; i < 1000 && a == ncclInProgress; i++) { ncclCommGetAsyncError(comm, &a); usleep(10000); }
  printf("t=%.2f async=%d (%s)\n", now(), (int)a, ncclGetErrorString(a));
  r = ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, comm, s);
  printf("t=%.2f allreduce_after=%d (%s)\n", now(), (int)r, ncclGetErrorString(r));
  r = ncclCommDestroy(comm);
  printf("t=%.2f destroy=%d (%s)\n", now(), (int)r, ncclGetErrorString(r));
  return 0;
}
