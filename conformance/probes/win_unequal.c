/* What real NCCL does when the ranks register windows of unequal sizes
 * (REG-04): two ranks as two threads (GPUs 0 and 1), rank 0 registers 1 MiB
 * and rank 1 2 MiB of ncclMemAlloc memory, NCCL_WIN_COLL_SYMMETRIC. Each
 * rank prints its result; a rank still inside the call after 15 s is
 * reported, and the program exits 3. Where both registrations succeed and
 * NCCL has one-sided RMA (2.30 and later), each rank then puts 4 KiB with a
 * signal at offset 0 of the peer's window, waits for the peer's, and checks
 * the bytes: whether windows of unequal sizes are usable.
 *
 * Build: cc win_unequal.c -I$NCCL/include -I$CUDA/include -L$NCCL/lib
 *        -L$CUDA/lib64 -lnccl -lcudart -lpthread */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <nccl.h>

static ncclComm_t comms[2];
static volatile int state[2]; /* 0 before the call, 1 inside it, 2 returned */
static pthread_barrier_t registered;
static volatile int ok[2];

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 0)
/* Rank r puts 4 KiB of bytes (r + 1) at offset 0 of the peer's window and
 * waits for the peer's put into its own; returns how many bytes differ. */
static int put_check(int r, void *mem, ncclWindow_t win) {
  enum { BYTES = 4096 };
  cudaStream_t s;
  unsigned char host[BYTES];
  int bad = 0;
  cudaStreamCreate(&s);
  /* the source must lie in a symmetric window too: the upper half of mine */
  void *src = (char *)mem + ((size_t)1 << 19);
  cudaMemset(src, r + 1, BYTES);
  cudaDeviceSynchronize();
  ncclWaitSignalDesc_t d = {.opCnt = 1, .peer = 1 - r, .sigIdx = 0, .ctx = 0};
  ncclResult_t a = ncclPutSignal(src, BYTES, ncclUint8, 1 - r, win, 0, 0, 0, 0, comms[r], s);
  ncclResult_t b = ncclWaitSignal(1, &d, comms[r], s);
  cudaError_t e = cudaStreamSynchronize(s);
  cudaMemcpy(host, mem, BYTES, cudaMemcpyDeviceToHost);
  for (int i = 0; i < BYTES; i++) bad += host[i] != (unsigned char)(2 - r);
  printf("rank %d: ncclPutSignal = %d, ncclWaitSignal = %d, stream %s, %d of %d bytes from the peer wrong\n", r,
         (int)a, (int)b, cudaGetErrorString(e), bad, BYTES);
  cudaStreamDestroy(s);
  return a == ncclSuccess && b == ncclSuccess && e == cudaSuccess && bad == 0;
}
#endif

static void *rank(void *a) {
  int r = (int)(long)a;
  void *mem;
  ncclWindow_t win = NULL;
  size_t size = (size_t)(r + 1) << 20;
  cudaSetDevice(r);
  ncclResult_t res = ncclMemAlloc(&mem, size);
  if (res != ncclSuccess) { printf("rank %d: ncclMemAlloc: %s\n", r, ncclGetErrorString(res)); exit(1); }
  state[r] = 1;
  res = ncclCommWindowRegister(comms[r], mem, size, &win, NCCL_WIN_COLL_SYMMETRIC);
  state[r] = 2;
  printf("rank %d: ncclCommWindowRegister(%zu bytes) = %d (%s), window %s; last error: %s\n", r, size, (int)res,
         ncclGetErrorString(res), win ? "set" : "NULL", ncclGetLastError(comms[r]));
  fflush(stdout);
  ok[r] = res == ncclSuccess && win;
  pthread_barrier_wait(&registered);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 0)
  if (ok[0] && ok[1]) put_check(r, mem, win);
#endif
  if (res == ncclSuccess && win) ncclCommWindowDeregister(comms[r], win);
  ncclMemFree(mem);
  return NULL;
}

int main(void) {
  int devs[2] = {0, 1};
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("NCCL_VERSION_CODE %d\n", NCCL_VERSION_CODE);
  pthread_barrier_init(&registered, NULL, 2);
  if (ncclCommInitAll(comms, 2, devs) != ncclSuccess) { printf("ncclCommInitAll failed\n"); return 1; }
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, rank, (void *)i);
  for (int s = 0; s < 15 && (state[0] != 2 || state[1] != 2); s++) sleep(1);
  if (state[0] != 2 || state[1] != 2) {
    printf("STUCK after 15 s: rank 0 %s, rank 1 %s\n", state[0] == 2 ? "returned" : "inside the call",
           state[1] == 2 ? "returned" : "inside the call");
    _exit(3);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) ncclCommDestroy(comms[i]);
  printf("done\n");
  return 0;
}
