/* What real NCCL does when the ranks register windows of unequal sizes
 * (REG-04): two ranks as two threads (GPUs 0 and 1), rank 0 registers 1 MiB
 * and rank 1 2 MiB of ncclMemAlloc memory, NCCL_WIN_COLL_SYMMETRIC. Each
 * rank prints its result; a rank still inside the call after 15 s is
 * reported, and the program exits 3.
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
  if (res == ncclSuccess && win) ncclCommWindowDeregister(comms[r], win);
  ncclMemFree(mem);
  return NULL;
}

int main(void) {
  int devs[2] = {0, 1};
  setvbuf(stdout, NULL, _IOLBF, 0);
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
