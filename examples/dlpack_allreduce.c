/*
 * dlpack_allreduce.c — a DLPack tensor through nccl4c, on two ranks (two
 * threads of this process, one device each).
 *
 * Each rank makes a tensor with n4c_dlpack_empty (NCCL-allocated, as
 * nccl.core's interop.empty), resolves it to an n4c_buffer_t, and
 *   1. allreduces its first half in place;
 *   2. registers the whole tensor as a symmetric window and put_signals its
 *      first half into the second half of the peer's tensor, then waits for
 *      the peer's signal and checks what arrived.
 *
 * Exit status: 0 on success, 77 (skipped) without two devices or where the
 * linked NCCL lacks a function, 1 on failure.
 */
#include "config.h"

#if HAVE_DLPACK
#define N4C_HAVE_DLPACK 1
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl4c.h"

#define N 1024 /* elements per half */

#ifdef N4C_DLPACK
typedef struct {
  int rank;
  ncclUniqueId id;
  int status; /* 0, 1 or 77 */
} rank_arg;

/* On failure: print the call and nccl4c's message, stop this rank. */
#define TRY(call)                                                                            \
  do {                                                                                       \
    n4c_status_t st_ = (call);                                                               \
    if (st_ != N4C_OK) {                                                                     \
      fprintf(stderr, "rank %d: %s: %s: %s\n", a->rank, #call, n4c_status_name(st_),         \
              n4c_last_error_message());                                                     \
      a->status = st_ == N4C_ENOTSUP ? 77 : 1;                                               \
      goto out;                                                                              \
    }                                                                                        \
  } while (0)
#define TRY_CUDA(call)                                                                       \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "rank %d: %s: %s\n", a->rank, #call, cudaGetErrorName(e_));            \
      a->status = 1;                                                                         \
      goto out;                                                                              \
    }                                                                                        \
  } while (0)

static void *run_rank(void *p) {
  rank_arg *a = p;
  int peer = 1 - a->rank;
  n4c_comm_t *comm = NULL;
  n4c_window_t *win = NULL;
  DLManagedTensor *tensor = NULL;
  cudaStream_t stream = NULL;
  float *host = malloc(2 * N * sizeof *host);
  const int64_t shape[] = {2, N};

  a->status = 1;
  if (!host) goto out;
  TRY_CUDA(cudaSetDevice(a->rank));
  TRY_CUDA(cudaStreamCreate(&stream));
  TRY(n4c_comm_init(&comm, 2, a->rank, &a->id, 1, NULL));

  /* A 2 x N float32 tensor in NCCL memory, seen as nccl.core sees it. */
  TRY(n4c_dlpack_empty(shape, 2, ncclFloat32, 'C', N4C_CURRENT_DEVICE, &tensor));
  n4c_buffer_t all, first, second;
  TRY(n4c_buffer_from_dlpack(&tensor->dl_tensor, &all));
  first = n4c_buffer(all.ptr, N, all.dtype, all.device);
  second = n4c_buffer((float *)all.ptr + N, N, all.dtype, all.device);

  /* 1. Allreduce: rank r contributes r + 1 + i; the sum is 3 + 2i. */
  for (int i = 0; i < N; i++) host[i] = (float)(a->rank + 1 + i);
  TRY_CUDA(cudaMemcpy(first.ptr, host, N * sizeof *host, cudaMemcpyHostToDevice));
  TRY(n4c_comm_allreduce(comm, &first, &first, ncclSum, stream));
  TRY_CUDA(cudaStreamSynchronize(stream));
  TRY_CUDA(cudaMemcpy(host, first.ptr, N * sizeof *host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (host[i] != (float)(3 + 2 * i)) {
      fprintf(stderr, "rank %d: allreduce: element %d is %g, expected %d\n", a->rank, i, host[i], 3 + 2 * i);
      goto out;
    }

  /* 2. The tensor as a window; our first half into the peer's second. */
  TRY(n4c_comm_register_window(comm, &all, N4C_WIN_COLL_SYMMETRIC, &win));
  if (!win) {
    fprintf(stderr, "rank %d: NCCL gives no window here\n", a->rank);
    a->status = 77;
    goto out;
  }
  for (int i = 0; i < N; i++) host[i] = (float)(100 * (a->rank + 1) + i);
  TRY_CUDA(cudaMemcpy(first.ptr, host, N * sizeof *host, cudaMemcpyHostToDevice));
  n4c_wait_signal_desc_t desc = N4C_WAIT_SIGNAL_DESC(peer);
  TRY(n4c_comm_put_signal(comm, &first, peer, win, N /* elements */, 0, 0, 0, stream));
  TRY(n4c_comm_wait_signal(comm, &desc, 1, stream));
  TRY_CUDA(cudaStreamSynchronize(stream));
  TRY_CUDA(cudaMemcpy(host, second.ptr, N * sizeof *host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (host[i] != (float)(100 * (peer + 1) + i)) {
      fprintf(stderr, "rank %d: put_signal: element %d is %g, expected %d\n", a->rank, i, host[i],
              100 * (peer + 1) + i);
      goto out;
    }
  printf("rank %d: allreduce and put_signal through a DLPack tensor: ok\n", a->rank);
  a->status = 0;
out:
  n4c_resource_free(N4C_RESOURCE(win));
  n4c_comm_free(comm); /* destroys it first */
  if (tensor) tensor->deleter(tensor);
  if (stream) cudaStreamDestroy(stream);
  free(host);
  return NULL;
}

int main(void) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
    printf("dlpack_allreduce: needs 2 devices, has %d: skipped\n", ndev);
    return 77;
  }
  rank_arg args[2] = {{.rank = 0}, {.rank = 1}};
  if (n4c_get_unique_id(&args[0].id) != N4C_OK) {
    fprintf(stderr, "n4c_get_unique_id: %s\n", n4c_last_error_message());
    return 1;
  }
  args[1].id = args[0].id;
  pthread_t t[2];
  for (int r = 0; r < 2; r++)
    if (pthread_create(&t[r], NULL, run_rank, &args[r]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int r = 0; r < 2; r++) pthread_join(t[r], NULL);
  if (args[0].status == 1 || args[1].status == 1) return 1;
  return args[0].status == 77 || args[1].status == 77 ? 77 : 0;
}
#else
int main(void) {
  printf("dlpack_allreduce: nccl4c was built without dlpack/dlpack.h: skipped\n");
  return 77;
}
#endif
