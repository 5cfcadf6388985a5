/* tests/sim_ranks.h — run a function on N rank threads of one communicator. */
#ifndef TESTS_SIM_RANKS_H_
#define TESTS_SIM_RANKS_H_

#include <pthread.h>
#include <nccl.h>
#include <ncclsim.h>

typedef struct {
  int rank, nranks;
  ncclComm_t comm;
  void *arg;
} rank_ctx;

typedef void (*rank_fn)(rank_ctx *ctx);

typedef struct {
  rank_ctx ctx;
  ncclUniqueId id;
  rank_fn fn;
  ncclResult_t init;
} rank_thread;

static void *rank_thread_main(void *p) {
  rank_thread *t = p;
  cudaSetDevice(t->ctx.rank % 8);
  t->init = ncclCommInitRank(&t->ctx.comm, t->ctx.nranks, t->id, t->ctx.rank);
  if (t->init == ncclSuccess) {
    t->fn(&t->ctx);
    ncclCommDestroy(t->ctx.comm);
  }
  return NULL;
}

/* Runs fn on n ranks; returns the number of ranks whose init failed. */
static inline int run_ranks(int n, rank_fn fn, void *arg) {
  rank_thread t[64];
  pthread_t th[64];
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  for (int r = 0; r < n; r++) {
    t[r] = (rank_thread){{r, n, NULL, arg}, id, fn, ncclSuccess};
    pthread_create(&th[r], NULL, rank_thread_main, &t[r]);
  }
  int failed = 0;
  for (int r = 0; r < n; r++) {
    pthread_join(th[r], NULL);
    failed += t[r].init != ncclSuccess;
  }
  return failed;
}

#endif
