/*
 * sim/cuda/props.c — what a simulated device says about itself:
 * cudaGetDeviceProperties, cudaDeviceGetAttribute and the stream priority
 * range.
 *
 * One description serves both queries, so a property and its attribute
 * cannot disagree. The values are an H100 SXM's as CUDA 13 reported them
 * (measured on one), since ncclsim reports compute capability 9.0 and real
 * NCCL was observed on Hopper; memory size and PCI location are ncclsim's
 * own. Texture and surface limits stay zero: no NCCL program reads them.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

/* CUDA's stream priorities on that H100: 0 is the least urgent, -5 the
 * most; lower numbers mean higher priority. */
#define PRIORITY_LEAST 0
#define PRIORITY_GREATEST (-5)

static void describe(struct cudaDeviceProp *p, int device) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "ncclsim device %d", device);
  /* A UUID stable per device, recognisably not a GPU's: "ncclsim" + ordinal. */
  memcpy(p->uuid.bytes, "ncclsim", 7);
  for (int i = 0; i < 4; i++) p->uuid.bytes[12 + i] = (char)((unsigned)device >> (8 * (3 - i)));
  p->totalGlobalMem = (size_t)sim_param(SIM_P_DEVICE_MEM);
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->multiProcessorCount = 132;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->pciBusID = device + 1;
  p->asyncEngineCount = 3;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->computePreemptionSupported = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = 232448;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
  p->hostRegisterReadOnlySupported = 1; /* an H100's (measured); ncclsim does not stop device writes */
  p->memoryPoolsSupported = 1;
  p->ipcEventSupported = 1;
  p->clusterLaunch = 1;
  p->deviceNumaId = -1; /* as on that H100: not a NUMA node of its own */
}

static bool device_ok(int device) { return device >= 0 && device < sim_device_count(); }

SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  if (!prop) return sim_cuda_error(cudaErrorInvalidValue);
  if (!device_ok(device)) return sim_cuda_error(cudaErrorInvalidDevice);
  describe(prop, device);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (!value) return sim_cuda_error(cudaErrorInvalidValue);
  if (!device_ok(device)) return sim_cuda_error(cudaErrorInvalidDevice);
  struct cudaDeviceProp p;
  describe(&p, device);
  int v;
  switch (attr) {
  case cudaDevAttrMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
  case cudaDevAttrMaxBlockDimX: v = p.maxThreadsDim[0]; break;
  case cudaDevAttrMaxBlockDimY: v = p.maxThreadsDim[1]; break;
  case cudaDevAttrMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
  case cudaDevAttrMaxGridDimX: v = p.maxGridSize[0]; break;
  case cudaDevAttrMaxGridDimY: v = p.maxGridSize[1]; break;
  case cudaDevAttrMaxGridDimZ: v = p.maxGridSize[2]; break;
  case cudaDevAttrMaxSharedMemoryPerBlock: v = (int)p.sharedMemPerBlock; break;
  case cudaDevAttrTotalConstantMemory: v = (int)p.totalConstMem; break;
  case cudaDevAttrWarpSize: v = p.warpSize; break;
  case cudaDevAttrMaxPitch: v = (int)p.memPitch; break;
  case cudaDevAttrMaxRegistersPerBlock: v = p.regsPerBlock; break;
  case cudaDevAttrTextureAlignment: v = (int)p.textureAlignment; break;
  case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
  case cudaDevAttrIntegrated: v = p.integrated; break;
  case cudaDevAttrCanMapHostMemory: v = p.canMapHostMemory; break;
  case cudaDevAttrConcurrentKernels: v = p.concurrentKernels; break;
  case cudaDevAttrEccEnabled: v = p.ECCEnabled; break;
  case cudaDevAttrPciBusId: v = p.pciBusID; break;
  case cudaDevAttrPciDeviceId: v = p.pciDeviceID; break;
  case cudaDevAttrPciDomainId: v = p.pciDomainID; break;
  case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
  case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
  case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
  case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
  case cudaDevAttrUnifiedAddressing: v = p.unifiedAddressing; break;
  case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
  case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
  case cudaDevAttrStreamPrioritiesSupported: v = p.streamPrioritiesSupported; break;
  case cudaDevAttrGlobalL1CacheSupported: v = p.globalL1CacheSupported; break;
  case cudaDevAttrLocalL1CacheSupported: v = p.localL1CacheSupported; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (int)p.sharedMemPerMultiprocessor; break;
  case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
  case cudaDevAttrManagedMemory: v = p.managedMemory; break;
  case cudaDevAttrComputePreemptionSupported: v = p.computePreemptionSupported; break;
  case cudaDevAttrCooperativeLaunch: v = p.cooperativeLaunch; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (int)p.sharedMemPerBlockOptin; break;
  case cudaDevAttrHostRegisterSupported: v = p.hostRegisterSupported; break;
  case cudaDevAttrHostRegisterReadOnlySupported: v = p.hostRegisterReadOnlySupported; break;
  case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
  case cudaDevAttrReservedSharedMemoryPerBlock: v = (int)p.reservedSharedMemPerBlock; break;
  case cudaDevAttrMemoryPoolsSupported: v = p.memoryPoolsSupported; break;
  case cudaDevAttrGPUDirectRDMASupported: v = p.gpuDirectRDMASupported; break;
  case cudaDevAttrClusterLaunch: v = p.clusterLaunch; break;
  case cudaDevAttrIpcEventSupport: v = p.ipcEventSupported; break;
  case cudaDevAttrNumaId: v = p.deviceNumaId; break;
  case cudaDevAttrHostNumaId: v = p.hostNumaId; break;
  case cudaDevAttrComputeMode: v = 0; break; /* cudaComputeModeDefault, as the H100 hosts measured */
  default:
    /* CUDA answers every attribute it knows; ncclsim answers those host
     * code asks, and says which it does not know rather than invent one. */
    SIM_WARN(SIM_STREAM, "cudaDeviceGetAttribute: attribute %d is not simulated (docs/ncclsim.md lists those that are)",
             (int)attr);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  *value = v;
  return cudaSuccess;
}

/* Either pointer may be NULL, as in CUDA. */
SIM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = PRIORITY_LEAST;
  if (greatest) *greatest = PRIORITY_GREATEST;
  return cudaSuccess;
}

int sim_stream_priority_clamp(int priority) {
  return priority > PRIORITY_LEAST ? PRIORITY_LEAST : priority < PRIORITY_GREATEST ? PRIORITY_GREATEST : priority;
}
