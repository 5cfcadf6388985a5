// One rank on real NCCL (run on an H100 with NCCL 2.30.7, output in
// docs/conformance/nccl-2.30.7_H100x1_2026-11-23_onerank.txt):
//   onerank coll       reductions whose op NCCL runs as PreMulSum (ncclAvg, a PreMulSum
//                      op) on each float type (fp8 ones: ncclInvalidArgument)
//   onerank win-none   ncclPutSignal naming a deregistered window (ncclInternalError)
//   onerank win-reuse  the same after another window was registered (it gets the
//                      freed handle's value, and the put lands in it)
#include <nccl.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#define R(x) ncclGetErrorString(x)
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "coll"; // coll | win-none | win-reuse
  ncclComm_t comm; int dev = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) return 1;
  cudaStream_t s; cudaStreamCreate(&s);
  void *a, *b; cudaMalloc(&a, 256); cudaMalloc(&b, 256); cudaMemset(a, 0, 256);
  struct { ncclDataType_t t; const char *n; uint64_t one; } ty[] = {
    {ncclFloat8e4m3, "e4m3", 0x38}, {ncclFloat8e5m2, "e5m2", 0x3c}, {ncclFloat16, "f16", 0x3c00},
    {ncclBfloat16, "bf16", 0x3f80}, {ncclFloat32, "f32", 0x3f800000}};
  if (!strcmp(mode, "coll")) for (auto &x : ty) {
    ncclResult_t r1 = ncclAllReduce(a, b, 4, x.t, ncclSum, comm, s);
    ncclResult_t r2 = ncclAllReduce(a, b, 4, x.t, ncclAvg, comm, s);
    ncclResult_t r4 = ncclReduce(a, b, 4, x.t, ncclAvg, 0, comm, s);
    ncclRedOp_t op; uint64_t sc = x.one;
    ncclResult_t rc = ncclRedOpCreatePreMulSum(&op, &sc, x.t, ncclScalarHostImmediate, comm);
    ncclResult_t r3 = rc ? rc : ncclAllReduce(a, b, 4, x.t, op, comm, s);
    if (!rc) ncclRedOpDestroy(op, comm);
    cudaError_t ce = cudaStreamSynchronize(s);
    printf("%-5s allreduce sum: %s; avg: %s; reduce avg: %s; premulsum: %s; sync: %s\n", x.n, R(r1), R(r2), R(r4),
           R(r3), cudaGetErrorName(ce));
  }
  if (!strcmp(mode, "coll")) { ncclCommDestroy(comm); return 0; }
  const size_t W = 1 << 21;
  void *m[4]; ncclWindow_t w[4];
  for (int i = 0; i < 4; i++) ncclMemAlloc(&m[i], W);
  ncclCommWindowRegister(comm, m[0], W, &w[0], NCCL_WIN_COLL_SYMMETRIC); // the source, live throughout
  ncclCommWindowRegister(comm, m[1], W, &w[1], NCCL_WIN_COLL_SYMMETRIC);
  ncclWaitSignalDesc_t d = {1, 0, 0, 0};
  ncclResult_t r = ncclPutSignal(m[0], 16, ncclUint8, 0, w[1], 0, 0, 0, 0, comm, s);
  ncclResult_t q = ncclWaitSignal(1, &d, comm, s);
  printf("live window: put %s, wait %s, sync %s\n", R(r), R(q), cudaGetErrorName(cudaStreamSynchronize(s)));
  ncclCommWindowDeregister(comm, w[1]);
  if (!strcmp(mode, "win-none")) {
  r = ncclPutSignal(m[0], 16, ncclUint8, 0, w[1], 0, 0, 0, 0, comm, s);
  printf("deregistered %p, none registered since: put %s (%d)\n", (void *)w[1], R(r), (int)r);
  if (r == ncclSuccess) { q = ncclWaitSignal(1, &d, comm, s); printf("  wait %s, sync %s\n", R(q), cudaGetErrorName(cudaStreamSynchronize(s))); }
  }
  if (!strcmp(mode, "win-reuse")) {
  ncclCommWindowRegister(comm, m[2], W, &w[2], NCCL_WIN_COLL_SYMMETRIC);
  r = ncclPutSignal(m[0], 16, ncclUint8, 0, w[1], 0, 0, 0, 0, comm, s);
  printf("deregistered %p, then registered %p (same: %d): put %s (%d)\n", (void *)w[1], (void *)w[2], w[1] == w[2], R(r), (int)r);
  if (r == ncclSuccess) { q = ncclWaitSignal(1, &d, comm, s); printf("  wait %s, sync %s\n", R(q), cudaGetErrorName(cudaStreamSynchronize(s))); }
  }
  ncclCommDestroy(comm);
  return 0;
}
