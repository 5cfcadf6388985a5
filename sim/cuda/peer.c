/*
 * sim/cuda/peer.c — peer access between simulated devices.
 *
 * Every pair of distinct devices can reach each other (one address space,
 * as GPUs on one NVLink node). Enabling is remembered per (device, peer),
 * as CUDA remembers it per context, so that enabling twice and disabling
 * what was never enabled fail as they do on a GPU.
 */
#include <pthread.h>
#include <string.h>

#include "cuda_internal.h"

static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *enabled; /* n x n, [device * n + peer] */
static int enabled_n;

/* The slot of (device, peer), growing the table when NCCLSIM_DEVICES grew.
 * NULL if out of memory. Caller holds peer_lock. */
static unsigned char *slot(int device, int peer) {
  int n = sim_device_count();
  if (n > enabled_n) {
    unsigned char *t = sim_calloc((size_t)n * (size_t)n, 1);
    if (!t) return NULL;
    for (int d = 0; d < enabled_n; d++) memcpy(t + (size_t)d * (size_t)n, enabled + (size_t)d * (size_t)enabled_n, (size_t)enabled_n);
    sim_free(enabled);
    enabled = t;
    enabled_n = n;
  }
  return &enabled[(size_t)device * (size_t)enabled_n + (size_t)peer];
}

/* Peer access is the process's own, as a CUDA context is: a forked rank
 * starts with none enabled (and a lock no other thread of the parent holds). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&peer_lock, NULL);
  if (enabled) memset(enabled, 0, (size_t)enabled_n * (size_t)enabled_n); /* kept, so still reachable */
}
__attribute__((constructor)) static void peer_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static bool device_ok(int device) { return device >= 0 && device < sim_device_count(); }

SIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer) {
  if (!can) return sim_cuda_error(cudaErrorInvalidValue);
  if (!device_ok(device) || !device_ok(peer)) return sim_cuda_error(cudaErrorInvalidDevice);
  *can = device != peer; /* CUDA says 0 for a device and itself */
  return cudaSuccess;
}

/* Error order as measured with CUDA 13: flags, then the peer's ordinal,
 * then the peer being the current device itself. Forbidden during a
 * global or thread-local capture (capture.c): NCCL 2.30.7's call from a
 * capturing rank thread got cudaErrorStreamCaptureUnsupported on an H100;
 * that this check comes before the table's (an already enabled peer) is
 * assumed. */
SIM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  if (flags != cudaPeerAccessDefault) return sim_cuda_error(cudaErrorInvalidValue);
  if (!device_ok(peer)) return sim_cuda_error(cudaErrorInvalidDevice);
  int self = sim_current_device();
  if (peer == self) return sim_cuda_error(cudaErrorPeerAccessUnsupported);
  cudaError_t cap = sim_capture_unsafe("cudaDeviceEnablePeerAccess");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  sim_mutex_lock(&peer_lock);
  unsigned char *s = slot(self, peer);
  cudaError_t err = !s ? cudaErrorMemoryAllocation : *s ? cudaErrorPeerAccessAlreadyEnabled : cudaSuccess;
  if (err == cudaSuccess) *s = 1;
  pthread_mutex_unlock(&peer_lock);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  if (!device_ok(peer)) return sim_cuda_error(cudaErrorInvalidDevice);
  sim_mutex_lock(&peer_lock);
  unsigned char *s = slot(sim_current_device(), peer);
  cudaError_t err = !s ? cudaErrorMemoryAllocation : !*s ? cudaErrorPeerAccessNotEnabled : cudaSuccess;
  if (err == cudaSuccess) *s = 0;
  pthread_mutex_unlock(&peer_lock);
  return sim_cuda_error(err);
}

void sim_peer_reset_device(int device) {
  sim_mutex_lock(&peer_lock);
  if (device < enabled_n) memset(enabled + (size_t)device * (size_t)enabled_n, 0, (size_t)enabled_n);
  pthread_mutex_unlock(&peer_lock);
}
