/* tests/sim_cuda_api.c — the CUDA host API that NCCL programs' host code
 * calls beyond the basics of tests/sim_cuda.c: device properties and
 * attributes, stream priorities, host allocation flags, the copy kinds,
 * interprocess events, peer access, host functions in stream order. The
 * expected error codes are CUDA 13's, measured on an H100. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cuda_runtime.h>

/* Properties: the fields host code reads, as an H100 reports them; the
 * argument checks in CUDA's order. */
static void test_properties(void **state) {
  (void)state;
  struct cudaDeviceProp p;
  memset(&p, 0xab, sizeof p);
  assert_int_equal(cudaGetDeviceProperties(&p, 3), cudaSuccess);
  assert_string_equal(p.name, "ncclsim device 3");
  assert_int_equal(p.major, 9);
  assert_int_equal(p.minor, 0);
  assert_int_equal(p.multiProcessorCount, 132);
  assert_int_equal(p.warpSize, 32);
  assert_int_equal(p.pciBusID, 4);
  assert_int_equal(p.unifiedAddressing, 1);
  assert_int_equal(p.maxThreadsDim[2], 64);
  assert_int_equal(p.sharedMemPerBlockOptin, 232448);
  assert_int_equal(p.maxTexture1D, 0); /* not simulated: zero, not garbage */
  assert_int_equal(p.reserved[55], 0);
  assert_true(p.totalGlobalMem > 0);
  struct cudaDeviceProp q;
  assert_int_equal(cudaGetDeviceProperties(&q, 4), cudaSuccess);
  assert_memory_not_equal(p.uuid.bytes, q.uuid.bytes, 16); /* one UUID per device */
  assert_int_equal(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaGetDeviceProperties(&p, 8), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetDeviceProperties(&p, -1), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
}

/* Each attribute ncclsim answers agrees with its property (the list is
 * every one props.c maps); an attribute ncclsim does not
 * simulate, or none at all, is cudaErrorInvalidValue, as CUDA's unknown
 * ones are. */
static void test_attributes(void **state) {
  (void)state;
  struct cudaDeviceProp p;
  assert_int_equal(cudaGetDeviceProperties(&p, 1), cudaSuccess);
  struct {
    enum cudaDeviceAttr a;
    long want;
  } cases[] = {
      {cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock},
      {cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0]},
      {cudaDevAttrMaxBlockDimY, p.maxThreadsDim[1]},
      {cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2]},
      {cudaDevAttrMaxGridDimX, p.maxGridSize[0]},
      {cudaDevAttrMaxGridDimY, p.maxGridSize[1]},
      {cudaDevAttrMaxGridDimZ, p.maxGridSize[2]},
      {cudaDevAttrMaxSharedMemoryPerBlock, (long)p.sharedMemPerBlock},
      {cudaDevAttrTotalConstantMemory, (long)p.totalConstMem},
      {cudaDevAttrWarpSize, p.warpSize},
      {cudaDevAttrMaxPitch, (long)p.memPitch},
      {cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock},
      {cudaDevAttrTextureAlignment, (long)p.textureAlignment},
      {cudaDevAttrMultiProcessorCount, p.multiProcessorCount},
      {cudaDevAttrIntegrated, p.integrated},
      {cudaDevAttrCanMapHostMemory, p.canMapHostMemory},
      {cudaDevAttrConcurrentKernels, p.concurrentKernels},
      {cudaDevAttrEccEnabled, p.ECCEnabled},
      {cudaDevAttrPciBusId, p.pciBusID},
      {cudaDevAttrPciDeviceId, p.pciDeviceID},
      {cudaDevAttrPciDomainId, p.pciDomainID},
      {cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth},
      {cudaDevAttrL2CacheSize, p.l2CacheSize},
      {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor},
      {cudaDevAttrAsyncEngineCount, p.asyncEngineCount},
      {cudaDevAttrUnifiedAddressing, p.unifiedAddressing},
      {cudaDevAttrComputeCapabilityMajor, p.major},
      {cudaDevAttrComputeCapabilityMinor, p.minor},
      {cudaDevAttrStreamPrioritiesSupported, p.streamPrioritiesSupported},
      {cudaDevAttrGlobalL1CacheSupported, p.globalL1CacheSupported},
      {cudaDevAttrLocalL1CacheSupported, p.localL1CacheSupported},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, (long)p.sharedMemPerMultiprocessor},
      {cudaDevAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor},
      {cudaDevAttrManagedMemory, p.managedMemory},
      {cudaDevAttrComputePreemptionSupported, p.computePreemptionSupported},
      {cudaDevAttrCooperativeLaunch, p.cooperativeLaunch},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, (long)p.sharedMemPerBlockOptin},
      {cudaDevAttrHostRegisterSupported, p.hostRegisterSupported},
      {cudaDevAttrHostRegisterReadOnlySupported, p.hostRegisterReadOnlySupported},
      {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor},
      {cudaDevAttrReservedSharedMemoryPerBlock, (long)p.reservedSharedMemPerBlock},
      {cudaDevAttrMemoryPoolsSupported, p.memoryPoolsSupported},
      {cudaDevAttrGPUDirectRDMASupported, p.gpuDirectRDMASupported},
      {cudaDevAttrClusterLaunch, p.clusterLaunch},
      {cudaDevAttrIpcEventSupport, p.ipcEventSupported},
      {cudaDevAttrNumaId, p.deviceNumaId},
      {cudaDevAttrHostNumaId, p.hostNumaId},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int v = -12345;
    assert_int_equal(cudaDeviceGetAttribute(&v, cases[i].a, 1), cudaSuccess);
    assert_int_equal(v, cases[i].want);
  }
  int v = 77;
  assert_int_equal(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)0, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)9999, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrMaxTexture1DWidth, 0), cudaErrorInvalidValue);
  assert_int_equal(v, 77); /* untouched on failure */
  assert_int_equal(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 8), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
}

/* Priorities clamp into [-5, 0] as on the H100; either range pointer may
 * be NULL; flags and priority read back. */
static void test_stream_priority(void **state) {
  (void)state;
  int lo = 99, hi = 99;
  assert_int_equal(cudaDeviceGetStreamPriorityRange(&lo, &hi), cudaSuccess);
  assert_int_equal(lo, 0);
  assert_int_equal(hi, -5);
  assert_int_equal(cudaDeviceGetStreamPriorityRange(NULL, NULL), cudaSuccess);
  cudaStream_t s;
  int prio = 1;
  unsigned flags = 7;
  assert_int_equal(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -100), cudaSuccess);
  assert_int_equal(cudaStreamGetPriority(s, &prio), cudaSuccess);
  assert_int_equal(prio, -5);
  assert_int_equal(cudaStreamGetFlags(s, &flags), cudaSuccess);
  assert_int_equal(flags, cudaStreamNonBlocking);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaStreamGetPriority(s, &prio), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamCreateWithPriority(&s, 0, 100), cudaSuccess);
  assert_int_equal(cudaStreamGetPriority(s, &prio), cudaSuccess);
  assert_int_equal(prio, 0);
  assert_int_equal(cudaStreamGetPriority(s, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamGetFlags(s, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaStreamGetPriority(0, &prio), cudaSuccess); /* the default stream */
  assert_int_equal(prio, 0);
  assert_int_equal(cudaStreamCreateWithPriority(&s, 2, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamCreateWithPriority(NULL, 0, 0), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

/* cudaHostAlloc's flags: the known ones in any mix, nothing else; a
 * zero-byte pinned allocation is NULL. */
static void test_host_alloc_flags(void **state) {
  (void)state;
  void *h = (void *)1;
  assert_int_equal(cudaHostAlloc(&h, 64, cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined),
                   cudaSuccess);
  struct cudaPointerAttributes a;
  assert_int_equal(cudaPointerGetAttributes(&a, h), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeHost);
  assert_int_equal(cudaFreeHost(h), cudaSuccess);
  assert_int_equal(cudaHostAlloc(&h, 64, 0x10), cudaErrorInvalidValue);
  assert_int_equal(cudaHostAlloc(NULL, 64, 0), cudaErrorInvalidValue);
  h = (void *)1;
  assert_int_equal(cudaMallocHost(&h, 0), cudaSuccess);
  assert_null(h);
  assert_int_equal(cudaFreeHost(h), cudaSuccess);
  (void)cudaGetLastError();
}

/* Every copy kind, with device, pinned and pageable memory on each side:
 * a "device" side must be memory CUDA knows; cudaMemcpyDefault and "host"
 * sides take anything; an unknown kind is cudaErrorInvalidMemcpyDirection.
 * The same for the Async forms, then memset. */
static void test_copy_kinds(void **state) {
  (void)state;
  char *d, *pin, page[64];
  assert_int_equal(cudaMalloc((void **)&d, 64), cudaSuccess);
  assert_int_equal(cudaMallocHost((void **)&pin, 64), cudaSuccess);
  char *mem[3] = {d, pin, page}; /* known, known, unknown */
  for (int kind = 0; kind <= 4; kind++)
    for (int di = 0; di < 3; di++)
      for (int si = 0; si < 3; si++) {
        if (di == si) continue;
        bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
        bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
        cudaError_t want = (dst_dev && di == 2) || (src_dev && si == 2) ? cudaErrorInvalidValue : cudaSuccess;
        memset(mem[si], 'a' + kind, 64);
        memset(mem[di], 0, 64);
        assert_int_equal(cudaMemcpy(mem[di], mem[si], 64, (enum cudaMemcpyKind)kind), want);
        if (want == cudaSuccess) assert_int_equal(mem[di][63], 'a' + kind);
        assert_int_equal(cudaMemcpyAsync(mem[di], mem[si], 64, (enum cudaMemcpyKind)kind, 0), want);
        assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
      }
  assert_int_equal(cudaMemcpy(d, pin, 8, (enum cudaMemcpyKind)5), cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaMemcpyAsync(d, pin, 8, (enum cudaMemcpyKind)-1, 0), cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaMemcpy(NULL, pin, 8, cudaMemcpyDefault), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpy(NULL, NULL, 0, cudaMemcpyDeviceToDevice), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 7, 64, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(pin, 7, 64, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(page, 7, 64, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaMemset(page, 7, 64), cudaErrorInvalidValue);
  assert_int_equal(cudaMemset(NULL, 7, 8), cudaErrorInvalidValue);
  assert_int_equal(cudaMemset(NULL, 7, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(d[63] + pin[0], 14);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(cudaFreeHost(pin), cudaSuccess);
  (void)cudaGetLastError();
}

/* An interprocess event must not time, as CUDA requires. */
static void test_interprocess_event(void **state) {
  (void)state;
  cudaEvent_t e;
  assert_int_equal(cudaEventCreateWithFlags(&e, cudaEventInterprocess), cudaErrorInvalidValue);
  assert_int_equal(cudaEventCreateWithFlags(&e, 0x100), cudaErrorInvalidValue);
  assert_int_equal(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, 0), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  float ms;
  assert_int_equal(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  (void)cudaGetLastError();
}

/* Peer access: any two distinct devices; enabling is remembered per
 * (current device, peer), so twice fails and so does disabling what was
 * not enabled; a device and itself is unsupported. */
static void test_peer_access(void **state) {
  (void)state;
  int can = -1;
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 2, 2), cudaSuccess);
  assert_int_equal(can, 0);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 2, 5), cudaSuccess);
  assert_int_equal(can, 1);
  assert_int_equal(cudaDeviceCanAccessPeer(NULL, 2, 5), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 2, 8), cudaErrorInvalidDevice);
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  assert_int_equal(cudaDeviceEnablePeerAccess(2, 0), cudaErrorPeerAccessUnsupported);
  assert_int_equal(cudaDeviceEnablePeerAccess(5, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceEnablePeerAccess(8, 0), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceDisablePeerAccess(5), cudaErrorPeerAccessNotEnabled);
  assert_int_equal(cudaDeviceEnablePeerAccess(5, 0), cudaSuccess);
  assert_int_equal(cudaDeviceEnablePeerAccess(5, 0), cudaErrorPeerAccessAlreadyEnabled);
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  assert_int_equal(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess); /* the other direction is its own */
  assert_int_equal(cudaDeviceDisablePeerAccess(2), cudaSuccess);
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  assert_int_equal(cudaDeviceDisablePeerAccess(5), cudaSuccess);
  assert_int_equal(cudaDeviceDisablePeerAccess(5), cudaErrorPeerAccessNotEnabled);
  assert_int_equal(cudaDeviceDisablePeerAccess(-1), cudaErrorInvalidDevice);
  assert_string_equal(cudaGetErrorName(cudaErrorPeerAccessAlreadyEnabled), "cudaErrorPeerAccessAlreadyEnabled");
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  (void)cudaGetLastError();
}

/* Host functions run on the stream's worker, in order with the copies
 * around them: each sees the memset before it and none after. */
typedef struct {
  const char *buf;
  char seen[4];
  int n;
  pthread_t thread;
} trail;

static void note(void *arg) {
  trail *t = arg;
  t->seen[t->n++] = t->buf[0];
  t->thread = pthread_self();
}

static void test_host_func_order(void **state) {
  (void)state;
  char *d;
  trail t = {0};
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  assert_int_equal(cudaMallocHost((void **)&d, 8), cudaSuccess);
  t.buf = d;
  for (int i = 0; i < 4; i++) {
    assert_int_equal(cudaMemsetAsync(d, 'w' + i, 8, s), cudaSuccess);
    assert_int_equal(cudaLaunchHostFunc(s, note, &t), cudaSuccess);
  }
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(t.n, 4);
  assert_memory_equal(t.seen, "wxyz", 4);
  assert_false(pthread_equal(t.thread, pthread_self()));
  assert_int_equal(cudaLaunchHostFunc(s, NULL, &t), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaFreeHost(d), cudaSuccess);
  (void)cudaGetLastError();
}

int main(void) {
  setenv("NCCLSIM_DEVICES", "8", 1); /* the tests use devices 0..7 */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_properties),      cmocka_unit_test(test_attributes),
      cmocka_unit_test(test_stream_priority), cmocka_unit_test(test_host_alloc_flags),
      cmocka_unit_test(test_copy_kinds),      cmocka_unit_test(test_interprocess_event),
      cmocka_unit_test(test_peer_access),     cmocka_unit_test(test_host_func_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
