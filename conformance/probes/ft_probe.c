/* What real NCCL returns around revoke, suspend/resume and the
 * communicator's unique id, on a 1-rank communicator (one GPU). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <nccl.h>

#define P(name, expr) do { ncclResult_t r_ = (expr); printf("%s=%d (%s)\n", name, (int)r_, ncclGetErrorString(r_)); fflush(stdout); } while (0)

static void stats(ncclComm_t c, const char *when) {
  for (int s = 0; s < 4; s++) {
    uint64_t v = 12345;
    ncclResult_t r = ncclCommMemStats(c, (ncclCommMemStat_t)s, &v);
    printf("memstat[%s][%d]=%llu r=%d\n", when, s, (unsigned long long)v, (int)r);
  }
}

static ncclResult_t async_settle(ncclComm_t c, double secs) {
  ncclResult_t a = ncclInProgress;
  for (int i = 0; i < (int)(secs * 100); i++) {
    ncclCommGetAsyncError(c, &a);
    if (a != ncclInProgress) break;
    usleep(10000);
  }
  return a;
}

int main(int argc, char **argv) {
  int blocking = argc > 1 ? 0 : 1;
  ncclUniqueId id;
  ncclComm_t comm, c2 = NULL;
  cudaSetDevice(0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  float *buf;
  cudaMalloc((void **)&buf, 4096 * sizeof(float));
  ncclGetUniqueId(&id);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = blocking;
  printf("blocking=%d\n", blocking);
  P("init", ncclCommInitRankConfig(&comm, 1, id, 0, &cfg));
  printf("init_async=%d\n", (int)async_settle(comm, 20));
  P("allreduce0", ncclAllReduce(buf, buf, 4096, ncclFloat, ncclSum, comm, s));
  printf("sync0=%d\n", (int)cudaStreamSynchronize(s));
  stats(comm, "before");
  P("suspend_flags0", ncclCommSuspend(comm, 0));
  P("suspend_flags2", ncclCommSuspend(comm, 2));
  P("resume_not_suspended", ncclCommResume(comm));
  P("suspend_mem", ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
  printf("suspend_async=%d\n", (int)async_settle(comm, 5));
  stats(comm, "suspended");
  P("suspend_again", ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
  P("allreduce_suspended", ncclAllReduce(buf, buf, 4096, ncclFloat, ncclSum, comm, s));
  printf("sync_suspended=%d\n", (int)cudaStreamSynchronize(s));
  printf("async_after_suspended_op=%d\n", (int)async_settle(comm, 2));
  P("resume", ncclCommResume(comm));
  printf("resume_async=%d\n", (int)async_settle(comm, 5));
  stats(comm, "resumed");
  P("resume_again", ncclCommResume(comm));
  P("allreduce_resumed", ncclAllReduce(buf, buf, 4096, ncclFloat, ncclSum, comm, s));
  printf("sync_resumed=%d\n", (int)cudaStreamSynchronize(s));
  printf("async_resumed=%d\n", (int)async_settle(comm, 2));

  ncclUniqueId gid, gid2;
  P("comm_get_unique_id", ncclCommGetUniqueId(comm, &gid));
  P("comm_get_unique_id_again", ncclCommGetUniqueId(comm, &gid2));
  P("comm_get_unique_id_null", ncclCommGetUniqueId(comm, NULL));
  P("grow_smaller", ncclCommGrow(comm, 1, NULL, -1, &c2, NULL));
  P("grow_newrank_with_comm", ncclCommGrow(comm, 2, &gid, 1, &c2, NULL));
  P("grow_null_comm_rank_minus1", ncclCommGrow(NULL, 2, &gid, -1, &c2, NULL));

  P("revoke_flags1", ncclCommRevoke(comm, 1));
  P("revoke", ncclCommRevoke(comm, 0));
  printf("revoke_async=%d\n", (int)async_settle(comm, 10));
  P("revoke_again", ncclCommRevoke(comm, 0));
  P("allreduce_revoked", ncclAllReduce(buf, buf, 4096, ncclFloat, ncclSum, comm, s));
  printf("sync_revoked=%d\n", (int)cudaStreamSynchronize(s));
  printf("async_after_revoked_op=%d\n", (int)async_settle(comm, 2));
  P("suspend_revoked", ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
  P("finalize_revoked", ncclCommFinalize(comm));
  P("split_revoked", ncclCommSplit(comm, 0, 0, &c2, NULL));
  if (c2) { printf("split_async=%d\n", (int)async_settle(c2, 10)); P("split_child_destroy", ncclCommDestroy(c2)); c2 = NULL; }
  P("shrink_revoked", ncclCommShrink(comm, NULL, 0, &c2, NULL, NCCL_SHRINK_DEFAULT));
  if (c2) {
    printf("shrink_async=%d\n", (int)async_settle(c2, 10));
    P("allreduce_shrunk", ncclAllReduce(buf, buf, 4096, ncclFloat, ncclSum, c2, s));
    printf("sync_shrunk=%d\n", (int)cudaStreamSynchronize(s));
    P("shrunk_destroy", ncclCommDestroy(c2));
    c2 = NULL;
  }
  P("shrink_abort_revoked", ncclCommShrink(comm, NULL, 0, &c2, NULL, NCCL_SHRINK_ABORT));
  if (c2) { printf("shrink_abort_async=%d\n", (int)async_settle(c2, 10)); P("shrunk2_destroy", ncclCommDestroy(c2)); }
  P("destroy_revoked", ncclCommDestroy(comm));
  return 0;
}
