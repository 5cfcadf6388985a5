/* tests/sim_mempool.c — stream-ordered memory (sim/cuda/mempool.c):
 * cudaMallocAsync, cudaMallocFromPoolAsync and cudaFreeAsync, the default
 * and created pools with their attributes, reuse and trimming, and the
 * use of memory after its free in stream order, which ncclsim refuses
 * with a diagnostic naming the buffer, the free and the use. Error codes
 * are CUDA 13's where its documentation gives them (cuda_runtime_api.h
 * says which are assumed). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "sim.h" /* sim_last_warning, sim_mem_lookup */
#include "cuda/cuda.h" /* sim_mem_lookup */
#include "gate.h"

static unsigned long long attr(cudaMemPool_t p, enum cudaMemPoolAttr a) {
  unsigned long long v = 12345;
  assert_int_equal(cudaMemPoolGetAttribute(p, a, &v), cudaSuccess);
  return v;
}

static cudaMemPool_t default_pool(int device) {
  cudaMemPool_t p = NULL;
  assert_int_equal(cudaDeviceGetDefaultMemPool(&p, device), cudaSuccess);
  assert_non_null(p);
  return p;
}

static size_t live_allocs(void) {
  size_t n;
  ncclsimMemStats(&n, NULL);
  return n;
}

static void warned(const char *what) {
  if (!strstr(sim_last_warning(), what)) fail_msg("\"%s\" not in the last warning: %s", what, sim_last_warning());
}

/* ----------------------------------------------------------- default pools */

/* Each device has its own default pool, current until set otherwise. */
static void test_default_pools(void **state) {
  (void)state;
  cudaMemPool_t d0 = default_pool(0), d1 = default_pool(1), cur;
  assert_ptr_not_equal(d0, d1);
  assert_ptr_equal(default_pool(0), d0); /* the same each time */
  assert_int_equal(cudaDeviceGetMemPool(&cur, 1), cudaSuccess);
  assert_ptr_equal(cur, d1);
  assert_int_equal(cudaDeviceGetDefaultMemPool(NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetDefaultMemPool(&cur, 8), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceGetDefaultMemPool(&cur, -1), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceGetMemPool(NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetMemPool(&cur, 8), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
  /* CUDA's defaults: reuse allowed, nothing kept past a synchronize. */
  int v = -1;
  assert_int_equal(cudaMemPoolGetAttribute(d0, cudaMemPoolReuseFollowEventDependencies, &v), cudaSuccess);
  assert_int_equal(v, 1);
  assert_int_equal(cudaMemPoolGetAttribute(d0, cudaMemPoolReuseAllowOpportunistic, &v), cudaSuccess);
  assert_int_equal(v, 1);
  assert_int_equal(cudaMemPoolGetAttribute(d0, cudaMemPoolReuseAllowInternalDependencies, &v), cudaSuccess);
  assert_int_equal(v, 1);
  assert_int_equal(attr(d0, cudaMemPoolAttrReleaseThreshold), 0);
  /* A device's default pool cannot be destroyed. */
  assert_int_equal(cudaMemPoolDestroy(d0), cudaErrorInvalidValue);
  warned("default pool");
  assert_int_equal(cudaMemPoolTrimTo(d0, 0), cudaSuccess);
}

/* ------------------------------------------------------- alloc and free */

/* An allocation is usable in stream order at once; the pool's figures
 * follow it in 256-byte grains; the free returns it to the pool, and the
 * next synchronize releases it (release threshold 0). */
static void test_alloc_free(void **state) {
  (void)state;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  cudaMemPool_t p = default_pool(0);
  unsigned long long zero = 0;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReservedMemHigh, &zero), cudaSuccess);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  size_t n0 = live_allocs();
  char *d = NULL;
  assert_int_equal(cudaMallocAsync((void **)&d, 1000, s), cudaSuccess);
  assert_non_null(d);
  assert_int_equal((uintptr_t)d % 256, 0);
  assert_int_equal(live_allocs(), n0 + 1);
  /* used counts the request, as CUDA 13's (measured); reserved the block */
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 1000);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 1024);
  struct cudaPointerAttributes pa;
  assert_int_equal(cudaPointerGetAttributes(&pa, d), cudaSuccess);
  assert_int_equal(pa.type, cudaMemoryTypeDevice);
  assert_int_equal(pa.device, 0);
  char h[1000], back[1000];
  for (int i = 0; i < 1000; i++) h[i] = (char)i;
  assert_int_equal(cudaMemcpyAsync(d, h, 1000, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(back, d, 1000, cudaMemcpyDeviceToHost, s), cudaSuccess);
  /* Bounds are the request's, not the grain's. */
  assert_int_equal(cudaMemsetAsync(d, 0, 1001, s), cudaErrorInvalidValue);
  assert_int_equal(cudaFreeAsync(d, s), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 0);
  assert_int_equal(live_allocs(), n0); /* what the pool holds freed is not the program's */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_memory_equal(back, h, 1000);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 0);
  assert_false(sim_mem_lookup(d, NULL)); /* released */
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemHigh), 1024);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemHigh), 1000);
  /* Watermarks reset to what is current, and only to 0. */
  unsigned long long one = 1;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrUsedMemHigh, &one), cudaErrorInvalidValue);
  warned("reset to 0");
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemHigh), 0);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReservedMemHigh, &zero), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemHigh), 0);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* The stream's device's current pool serves cudaMallocAsync; stream 0 is
 * the current device's. */
static void test_stream_device_pool(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(3), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  void *a, *b;
  assert_int_equal(cudaMallocAsync(&a, 512, s), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&b, 512, 0), cudaSuccess);
  assert_int_equal(attr(default_pool(3), cudaMemPoolAttrUsedMemCurrent), 512);
  struct cudaPointerAttributes pa;
  assert_int_equal(cudaPointerGetAttributes(&pa, a), cudaSuccess);
  assert_int_equal(pa.device, 3);
  assert_int_equal(cudaPointerGetAttributes(&pa, b), cudaSuccess);
  assert_int_equal(pa.device, 0);
  assert_int_equal(cudaFreeAsync(a, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(b, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(attr(default_pool(3), cudaMemPoolAttrReservedMemCurrent), 0);
  assert_int_equal(attr(default_pool(0), cudaMemPoolAttrReservedMemCurrent), 0);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* Argument errors, each with CUDA's code and nothing allocated. */
static void test_alloc_free_errors(void **state) {
  (void)state;
  size_t n0 = live_allocs();
  void *p = (void *)&n0;
  assert_int_equal(cudaMallocAsync(NULL, 16, 0), cudaErrorInvalidValue);
  cudaStream_t dead;
  assert_int_equal(cudaStreamCreate(&dead), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(dead), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&p, 16, dead), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaMallocAsync(&p, SIZE_MAX, 0), cudaErrorMemoryAllocation);
  assert_int_equal(cudaMallocAsync(&p, SIZE_MAX - 100, 0), cudaErrorMemoryAllocation); /* past the grain's rounding */
  assert_ptr_equal(p, (void *)&n0);
  assert_int_equal(cudaMallocAsync(&p, 0, 0), cudaSuccess); /* as cudaMalloc(0); measured on an H100 */
  assert_null(p);
  assert_int_equal(live_allocs(), n0);

  assert_int_equal(cudaFreeAsync(NULL, 0), cudaSuccess); /* as free(NULL): measured on an H100 */
  char *d;
  assert_int_equal(cudaMallocAsync((void **)&d, 64, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(d, dead), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaFreeAsync(d + 1, 0), cudaErrorInvalidValue); /* not its start */
  warned("not the start");
  void *h;
  assert_int_equal(cudaMallocHost(&h, 64), cudaSuccess);
  assert_int_equal(cudaFreeAsync(h, 0), cudaErrorInvalidValue); /* pinned host memory */
  assert_int_equal(cudaFreeAsync(&n0, 0), cudaErrorInvalidValue); /* memory CUDA does not know */
  assert_int_equal(cudaFreeHost(h), cudaSuccess);
  assert_int_equal(cudaFreeAsync(d, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(d, 0), cudaErrorInvalidValue); /* twice */
  warned("freed already, by cudaFreeAsync on stream");
  assert_int_equal(cudaFree(d), cudaErrorInvalidValue); /* and once more */
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(d, 0), cudaErrorInvalidValue); /* released: unknown now */
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(live_allocs(), n0);
}

/* cudaFree takes pool memory back at once (no synchronize); a later
 * cudaFreeAsync or cudaFree of it is a double free. */
static void test_cudafree_of_pool_memory(void **state) {
  (void)state;
  cudaMemPool_t p = default_pool(0);
  void *d;
  assert_int_equal(cudaMallocAsync(&d, 300, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 0);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 512); /* held until a synchronize */
  assert_int_equal(cudaFree(d), cudaErrorInvalidValue);
  warned("freed already, by cudaFree");
  assert_int_equal(cudaFreeAsync(d, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaMemset(d, 0, 1), cudaErrorInvalidValue); /* a use after the free */
  warned("which cudaFree freed");
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess); /* releases too */
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 0);
  (void)cudaGetLastError();
}

/* cudaFreeAsync also takes cudaMalloc memory, freed when the stream gets
 * there; the memory is refused to every use from the call on. The stream is
 * held until the checks are done: had it run the free already, the
 * memory would be unknown, not "freed" (a race the test lost under
 * ThreadSanitizer). */
static void test_free_async_of_cudamalloc(void **state) {
  (void)state;
  size_t n0 = live_allocs();
  char *d;
  assert_int_equal(cudaMalloc((void **)&d, 100), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  gate g = GATE_INITIALIZER;
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaFreeAsync(d, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 10, s), cudaErrorInvalidValue);
  warned("from cudaMalloc");
  cudaIpcMemHandle_t h;
  assert_int_equal(cudaIpcGetMemHandle(&h, d), cudaErrorInvalidValue); /* nor exported */
  warned("was freed");
  assert_int_equal(cudaFree(d), cudaErrorInvalidValue);
  assert_true(sim_mem_lookup(d, NULL)); /* the free has not run */
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_false(sim_mem_lookup(d, NULL));
  assert_int_equal(live_allocs(), n0);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  (void)cudaGetLastError();
}

/* ---------------------------------------------------------- use after free */

static void *rank0(void *arg) {
  ncclComm_t *comm = arg;
  int dev = 0;
  assert_int_equal(ncclCommInitAll(comm, 1, &dev), ncclSuccess);
  return NULL;
}

/* A use enqueued after the free, on the freeing stream or any other, is
 * refused before it runs: copies and memsets with cudaErrorInvalidValue,
 * NCCL operations with ncclInvalidArgument, each with a warning that names
 * the buffer, the free and the use. */
static void test_use_after_free(void **state) {
  (void)state;
  ncclComm_t comm;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, rank0, &comm), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  cudaStream_t s1, s2;
  assert_int_equal(cudaStreamCreate(&s1), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  float *buf, *out, host[64];
  assert_int_equal(cudaMallocAsync((void **)&buf, sizeof host, s1), cudaSuccess);
  assert_int_equal(cudaMallocAsync((void **)&out, sizeof host, s1), cudaSuccess);
  assert_int_equal(ncclAllReduce(buf, out, 64, ncclFloat32, ncclSum, comm, s1), ncclSuccess);
  assert_int_equal(cudaFreeAsync(buf, s1), cudaSuccess);

  char expect[160];
  snprintf(expect, sizeof expect, "the buffer %p (256 bytes, device 0, from cudaMallocAsync), which cudaFreeAsync on "
           "stream %p freed", (void *)buf, (void *)s1);
  assert_int_equal(ncclAllReduce(buf, out, 64, ncclFloat32, ncclSum, comm, s1), ncclInvalidArgument);
  warned(expect);
  warned("ncclAllReduce sendbuff");
  assert_int_equal(ncclAllReduce(out, buf + 8, 8, ncclFloat32, ncclSum, comm, s2), ncclInvalidArgument);
  warned("ncclAllReduce recvbuff");
  snprintf(expect, sizeof expect, "%p lies in the buffer %p", (void *)(buf + 8), (void *)buf);
  warned(expect);
  assert_int_equal(cudaMemcpyAsync(host, buf + 8, 32, cudaMemcpyDeviceToHost, s2), cudaErrorInvalidValue);
  warned("cudaMemcpyAsync");
  warned(expect);
  assert_int_equal(cudaMemcpyAsync(buf + 8, host, 4, cudaMemcpyHostToDevice, s1), cudaErrorInvalidValue);
  assert_int_equal(cudaMemsetAsync(buf, 0, 4, s2), cudaErrorInvalidValue);
  warned("cudaMemsetAsync");
  assert_int_equal(cudaMemcpy(out, buf, 4, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  /* The buffer that was not freed is fine (once the allreduce on s1 that
   * writes it has run: s2 is another stream). */
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(out, 0, sizeof host, s2), cudaSuccess);
  assert_int_equal(cudaFreeAsync(out, s2), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
  (void)cudaGetLastError();
}

/* -------------------------------------------------------------- reuse */

/* A block is reused by an allocation of the same rounded size: on the
 * freeing stream at once (stream order), on another stream only once the
 * free has run, and then only with cudaMemPoolReuseAllowOpportunistic. A
 * reused block is a new allocation: its freed mark is gone. */
static void test_reuse(void **state) {
  (void)state;
  cudaMemPool_t p = default_pool(0);
  unsigned long long keep = 1 << 20;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReleaseThreshold), keep);
  cudaStream_t s1, s2;
  assert_int_equal(cudaStreamCreate(&s1), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  gate g = GATE_INITIALIZER;
  assert_int_equal(cudaLaunchHostFunc(s1, gate_wait, &g), cudaSuccess); /* the free stays pending */
  void *a, *b, *c, *d;
  assert_int_equal(cudaMallocAsync(&a, 1000, s1), cudaSuccess);
  assert_int_equal(cudaFreeAsync(a, s1), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&b, 1000, s2), cudaSuccess); /* the free has not run: not on s2 */
  assert_ptr_not_equal(b, a);
  assert_int_equal(cudaMallocAsync(&c, 2000, s1), cudaSuccess); /* another size */
  assert_ptr_not_equal(c, a);
  assert_int_equal(cudaMallocAsync(&d, 1024, s1), cudaSuccess); /* same grain, same stream: reused */
  assert_ptr_equal(d, a);
  assert_int_equal(cudaMemsetAsync(d, 0, 1024, s1), cudaSuccess); /* new, and 1024 bytes now */
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 1024 + 1024 + 2048);
  assert_int_equal(cudaFreeAsync(d, s1), cudaSuccess);
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess); /* threshold 1 MiB: kept */
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 1024 + 1024 + 2048);
  void *e;
  assert_int_equal(cudaMallocAsync(&e, 1000, s2), cudaSuccess); /* the free ran: any stream */
  assert_ptr_equal(e, a);
  assert_int_equal(cudaFreeAsync(e, s2), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  int no = 0;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowOpportunistic, &no), cudaSuccess);
  void *f;
  assert_int_equal(cudaMallocAsync(&f, 1000, s1), cudaSuccess); /* freed on s2: not for s1 now */
  assert_ptr_not_equal(f, a);
  int yes = 1;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowOpportunistic, &yes), cudaSuccess);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseFollowEventDependencies, &no), cudaSuccess);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowInternalDependencies, &no), cudaSuccess);
  int v = -1;
  assert_int_equal(cudaMemPoolGetAttribute(p, cudaMemPoolReuseAllowInternalDependencies, &v), cudaSuccess);
  assert_int_equal(v, 0);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseFollowEventDependencies, &yes), cudaSuccess);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolReuseAllowInternalDependencies, &yes), cudaSuccess);
  assert_int_equal(cudaFreeAsync(b, s2), cudaSuccess);
  assert_int_equal(cudaFreeAsync(c, s1), cudaSuccess);
  assert_int_equal(cudaFreeAsync(f, s1), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 0);
  /* Trimming: down to what is asked, in whole blocks; nothing when below. */
  unsigned long long r = attr(p, cudaMemPoolAttrReservedMemCurrent);
  assert_true(r >= 4096);
  assert_int_equal(cudaMemPoolTrimTo(p, r), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), r);
  assert_int_equal(cudaMemPoolTrimTo(p, 2048), cudaSuccess);
  assert_true(attr(p, cudaMemPoolAttrReservedMemCurrent) <= 2048);
  assert_int_equal(cudaMemPoolTrimTo(p, 0), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 0);
  keep = 0;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
}

/* An event synchronize releases as a stream synchronize does; a free
 * whose stream has not got there is outstanding, and stays. */
static void test_release_at_event_sync(void **state) {
  (void)state;
  cudaMemPool_t p = default_pool(0);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  cudaEvent_t ev;
  assert_int_equal(cudaEventCreate(&ev), cudaSuccess);
  gate g = GATE_INITIALIZER;
  void *a;
  assert_int_equal(cudaMallocAsync(&a, 256, s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaFreeAsync(a, s), cudaSuccess);
  assert_int_equal(cudaMemPoolTrimTo(p, 0), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 256); /* the free has not run */
  assert_int_equal(cudaEventRecord(ev, s), cudaSuccess);
  gate_open(&g);
  assert_int_equal(cudaEventSynchronize(ev), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 0);
  assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ------------------------------------------------------------ created pools */

static struct cudaMemPoolProps props_of(int device) {
  struct cudaMemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = device;
  return pp;
}

/* A created pool serves cudaMallocFromPoolAsync, on any stream, and
 * cudaMallocAsync once current; destroying it makes the default current
 * again and waits for its outstanding allocations. */
static void test_created_pool(void **state) {
  (void)state;
  struct cudaMemPoolProps pp = props_of(2);
  pp.maxSize = 4096;
  pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  cudaMemPool_t p, cur;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaSuccess);
  assert_ptr_not_equal(p, default_pool(2));
  void *a, *b;
  assert_int_equal(cudaMallocFromPoolAsync(&a, 3000, p, 0), cudaSuccess); /* stream on device 0 */
  struct cudaPointerAttributes pa;
  assert_int_equal(cudaPointerGetAttributes(&pa, a), cudaSuccess);
  assert_int_equal(pa.device, 2);
  /* maxSize: 3072 + 1280 > 4096, and nothing freed to give back. */
  assert_int_equal(cudaMallocFromPoolAsync(&b, 1200, p, 0), cudaErrorMemoryAllocation);
  warned("maxSize");
  assert_int_equal(cudaMallocFromPoolAsync(&b, 8192, p, 0), cudaErrorMemoryAllocation);
  assert_int_equal(cudaMallocFromPoolAsync(&b, 1024, p, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(b, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  unsigned long long keep = 1 << 20;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  assert_int_equal(cudaMallocFromPoolAsync(&b, 1024, p, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(b, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 4096); /* kept: threshold */
  /* A block of another size makes room by releasing a freed one. */
  assert_int_equal(cudaMallocFromPoolAsync(&b, 512, p, 0), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 3072 + 512);
  assert_int_equal(cudaFreeAsync(b, 0), cudaSuccess);

  assert_int_equal(cudaDeviceSetMemPool(2, p), cudaSuccess);
  assert_int_equal(cudaDeviceGetMemPool(&cur, 2), cudaSuccess);
  assert_ptr_equal(cur, p);
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  void *c;
  assert_int_equal(cudaMallocAsync(&c, 256, 0), cudaSuccess);
  assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 3000 + 256); /* requests, not blocks */
  assert_int_equal(cudaFreeAsync(c, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaDeviceSetMemPool(1, p), cudaErrorInvalidValue); /* device 2's pool */
  warned("not device 1's");
  assert_int_equal(cudaDeviceSetMemPool(8, p), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceSetMemPool(2, (cudaMemPool_t)&pp), cudaErrorInvalidValue);

  /* Destroyed with `a` outstanding: the handle is dead at once, the
   * allocation lives until freed, and the pool goes with it. */
  assert_int_equal(cudaMemPoolDestroy(p), cudaSuccess);
  assert_int_equal(cudaDeviceGetMemPool(&cur, 2), cudaSuccess);
  assert_ptr_equal(cur, default_pool(2));
  assert_int_equal(cudaMemPoolDestroy(p), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolTrimTo(p, 0), cudaErrorInvalidValue);
  unsigned long long v;
  assert_int_equal(cudaMemPoolGetAttribute(p, cudaMemPoolAttrUsedMemCurrent, &v), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &v), cudaErrorInvalidValue);
  assert_int_equal(cudaMallocFromPoolAsync(&b, 16, p, 0), cudaErrorInvalidValue);
  warned("not a live memory pool");
  assert_int_equal(cudaMemsetAsync(a, 7, 3000, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(a, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_false(sim_mem_lookup(a, NULL));
  /* Its object is made again for the next pool: a pool per call, no leak. */
  cudaMemPool_t q;
  pp = props_of(1);
  assert_int_equal(cudaMemPoolCreate(&q, &pp), cudaSuccess);
  assert_int_equal(attr(q, cudaMemPoolAttrReservedMemCurrent), 0);
  assert_int_equal(cudaMemPoolDestroy(q), cudaSuccess); /* nothing out: at once */
  (void)cudaGetLastError();
}

/* cudaMemPoolCreate's checks: CUDA's codes, a warning naming the field. */
static void test_create_errors(void **state) {
  (void)state;
  cudaMemPool_t p = NULL;
  struct cudaMemPoolProps pp = props_of(0);
  assert_int_equal(cudaMemPoolCreate(NULL, &pp), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolCreate(&p, NULL), cudaErrorInvalidValue);
  pp.allocType = cudaMemAllocationTypeManaged;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  warned("allocType");
  pp = props_of(0);
  pp.location.type = cudaMemLocationTypeHost;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorNotSupported);
  pp.location.type = cudaMemLocationTypeHostNuma;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorNotSupported);
  warned("host memory pools");
  pp.location.type = cudaMemLocationTypeInvalid;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  warned("location.type");
  pp = props_of(8);
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  warned("location.id");
  pp = props_of(0);
  pp.handleTypes = (enum cudaMemAllocationHandleType)0x10;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  pp.handleTypes = cudaMemHandleTypeFabric;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorNotSupported);
  pp.handleTypes = cudaMemHandleTypeWin32;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorNotSupported);
  pp = props_of(0);
  pp.win32SecurityAttributes = &pp;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  warned("win32SecurityAttributes");
  pp = props_of(0);
  pp.usage = 0x4;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  pp.usage = cudaMemPoolCreateUsageHwDecompress;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorNotSupported);
  pp = props_of(0);
  pp.reserved[53] = 1;
  assert_int_equal(cudaMemPoolCreate(&p, &pp), cudaErrorInvalidValue);
  warned("reserved");
  assert_null(p);
  (void)cudaGetLastError();
}

/* Attribute errors: NULL values, unknown attributes, read-only ones. */
static void test_attribute_errors(void **state) {
  (void)state;
  cudaMemPool_t p = default_pool(0);
  unsigned long long v = 0;
  assert_int_equal(cudaMemPoolGetAttribute(p, cudaMemPoolAttrUsedMemCurrent, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolGetAttribute(p, (enum cudaMemPoolAttr)9, &v), cudaErrorInvalidValue);
  warned("not a cudaMemPoolAttr");
  assert_int_equal(cudaMemPoolSetAttribute(p, (enum cudaMemPoolAttr)0, &v), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReservedMemCurrent, &v), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrUsedMemCurrent, &v), cudaErrorInvalidValue);
  warned("cannot be set");
  assert_int_equal(cudaMemPoolGetAttribute(NULL, cudaMemPoolAttrUsedMemCurrent, &v), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolTrimTo(NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaMemPoolDestroy(NULL), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

/* --------------------------------------------------- limits and faults */

/* A pool's freed blocks give way when the device runs out of memory, as
 * CUDA's allocator releases before it fails; cudaMemGetInfo counts what
 * pools hold. */
static void test_device_memory_pressure(void **state) {
  (void)state;
  cudaMemPool_t p = default_pool(5);
  unsigned long long keep = ~0ull;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", "1048576"), ncclSuccess);
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  size_t fr0, fr, tot;
  assert_int_equal(cudaMemGetInfo(&fr0, &tot), cudaSuccess);
  void *a, *b;
  assert_int_equal(cudaMallocAsync(&a, 600 * 1024, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(a, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, fr0 - 600 * 1024); /* held by the pool */
  assert_int_equal(cudaMallocAsync(&b, 700 * 1024, 0), cudaSuccess); /* only once the pool let go */
  assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 700 * 1024);
  assert_int_equal(cudaMallocAsync(&a, 700 * 1024, 0), cudaErrorMemoryAllocation);
  assert_int_equal(cudaFreeAsync(b, 0), cudaSuccess);
  keep = 0;
  assert_int_equal(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, fr0);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", NULL), ncclSuccess);
  (void)cudaGetLastError();
}

/* Each allocation these calls make may fail: the call fails with
 * cudaErrorMemoryAllocation and changes nothing, and the next succeeds. */
static void test_alloc_faults(void **state) {
  (void)state;
  size_t n0 = live_allocs();
  cudaMemPool_t p0 = default_pool(6), p = NULL;
  unsigned long long r0 = attr(p0, cudaMemPoolAttrReservedMemCurrent);
  for (uint64_t k = 1;; k++) { /* a new device's default pool: its tables, the pool */
    cudaMemPool_t q = NULL;
    ncclsimParamSet("DEVICES", "9");
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaDeviceGetMemPool(&q, 8);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_null(q);
    assert_true(k < 10);
  }
  for (uint64_t k = 1;; k++) {
    struct cudaMemPoolProps pp = props_of(6);
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaMemPoolCreate(&p, &pp);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_true(k < 10);
  }
  assert_int_equal(cudaDeviceSetMemPool(6, p), cudaSuccess);
  void *a = NULL;
  assert_int_equal(cudaSetDevice(6), cudaSuccess);
  for (uint64_t k = 1;; k++) { /* the stream, the block; the memory's failure is retried */
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaMallocAsync(&a, 100, 0);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_int_equal(attr(p, cudaMemPoolAttrReservedMemCurrent), 0);
    assert_true(k < 10);
  }
  for (uint64_t k = 1;; k++) {
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaFreeAsync(a, 0);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_int_equal(cudaMemsetAsync(a, 0, 100, 0), cudaSuccess); /* not freed */
    assert_int_equal(attr(p, cudaMemPoolAttrUsedMemCurrent), 100);
    assert_true(k < 10);
  }
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaMemPoolDestroy(p), cudaSuccess);
  assert_int_equal(attr(p0, cudaMemPoolAttrReservedMemCurrent), r0);
  assert_int_equal(live_allocs(), n0);
  ncclsimParamSet("DEVICES", NULL);
  (void)cudaGetLastError();
}

/* A stream whose worker cannot start takes no free: the memory stays
 * allocated and usable. */
static void test_free_refused_by_stream(void **state) {
  (void)state;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  void *a, *c;
  assert_int_equal(cudaMalloc(&c, 64), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&a, 64, s), cudaSuccess); /* no op: the worker is not started */
  assert_int_equal(ncclsimParamSet("STACK_KB", "999999999999"), ncclSuccess);
  assert_int_equal(cudaFreeAsync(a, s), cudaErrorMemoryAllocation);
  assert_int_equal(cudaFreeAsync(c, s), cudaErrorMemoryAllocation);
  assert_int_equal(ncclsimParamSet("STACK_KB", NULL), ncclSuccess);
  assert_int_equal(attr(default_pool(0), cudaMemPoolAttrUsedMemCurrent), 64);
  assert_int_equal(cudaMemsetAsync(a, 0, 64, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(c, 0, 64, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(a, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(c, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  (void)cudaGetLastError();
}

static int reset(void **state) {
  (void)state;
  ncclsimAllocFailAfter(0);
  ncclsimParamSet("DEVICES", NULL);
  ncclsimParamSet("DEVICE_MEM", NULL);
  ncclsimParamSet("STACK_KB", NULL);
  cudaSetDevice(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(void) {
  setenv("NCCLSIM_DEVICES", "8", 1);
  const struct CMUnitTest tests[] = {
      T(test_default_pools),        T(test_alloc_free),           T(test_stream_device_pool),
      T(test_alloc_free_errors),    T(test_cudafree_of_pool_memory), T(test_free_async_of_cudamalloc),
      T(test_use_after_free),       T(test_reuse),                T(test_release_at_event_sync),
      T(test_created_pool),         T(test_create_errors),        T(test_attribute_errors),
      T(test_device_memory_pressure), T(test_alloc_faults),       T(test_free_refused_by_stream),
  };
  return cmocka_run_group_tests_name("sim_mempool", tests, NULL, NULL);
}
