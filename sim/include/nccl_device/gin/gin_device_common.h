/*
 * nccl_device/gin/gin_device_common.h — ncclsim's drop-in for NCCL
 * 2.30.7's header of that name: the GIN backends compiled in (all three
 * on ncclsim, which carries out each itself: sim/dev/gin*.c), the option
 * flags of ncclGin's calls, resource sharing modes, and the context and
 * descriptor types that ncclGin's methods take.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_DEVICE_COMMON_H_
#define NCCLSIM_NCCL_DEVICE_GIN_DEVICE_COMMON_H_

#include <stdint.h>
#include "../net_device.h"
#include "../utility.h"
#include "gin_device_host_common.h"

#ifndef NCCL_GIN_PROXY_ENABLE
#define NCCL_GIN_PROXY_ENABLE 1
#endif
#ifndef NCCL_GIN_GPI_ENABLE
#define NCCL_GIN_GPI_ENABLE 1
#endif
#ifndef NCCL_GIN_GDAKI_ENABLE
#define NCCL_GIN_GDAKI_ENABLE 1
#endif

enum ncclGinOptFlags {
  ncclGinOptFlagsDefault = 0,
  ncclGinOptFlagsMaySkipCreditCheck = (1 << 0),
  ncclGinOptFlagsAggregateRequests = (1 << 1),
};

/* One bit per backend compiled in, at its ncclNetDeviceType. */
#define NCCL_GIN_BACKEND_MASK_ALL                                                   \
  (((NCCL_GIN_PROXY_ENABLE) ? 1u : 0u) << (unsigned)NCCL_NET_DEVICE_GIN_PROXY |    \
   ((NCCL_GIN_GDAKI_ENABLE) ? 1u : 0u) << (unsigned)NCCL_NET_DEVICE_GIN_GDAKI |    \
   ((NCCL_GIN_GPI_ENABLE) ? 1u : 0u) << (unsigned)NCCL_NET_DEVICE_GIN_GPI)

#ifdef __cplusplus
/* How an ncclGin instance shares its context's resources (chosen per
 * instance). ncclsim serializes a context's operations whatever the mode. */
enum ncclGinResourceSharingMode : uint8_t {
  NCCL_GIN_RESOURCE_SHARING_GPU = 0,
  NCCL_GIN_RESOURCE_SHARING_CTA = 1,
  NCCL_GIN_RESOURCE_SHARING_THREAD = 2,
};

struct ncclGinCtx {
  unsigned backendMask;
  ncclNetDeviceType backend;
  int rank;
  int nRanks;
  void *handle;
  int contextId;
  uint8_t resourceSharingMode;
};

template <unsigned backendMask>
struct ncclGinCtx_M : ncclGinCtx {};

/* Space a kernel gives in __shared__ memory for an operation's descriptor.
 * ncclsim builds none there; the space is accepted and left alone. */
struct ncclGinDescriptorSmem {
  alignas(16) char space[64];
};

enum ncclGinSignalType {
  NCCL_GIN_SIGNAL_TYPE_NONE,
  NCCL_GIN_SIGNAL_TYPE_VA,
  NCCL_GIN_SIGNAL_TYPE_INDEXED,
};

struct ncclGinSignalDescriptor {
  ncclGinSignalType type;
  union {
    struct {
      ncclGinWindow_t signalWindow;
      size_t signalOffset;
      ncclWindow_t ncclWindow;
    } vaSignal;
    struct {
      ncclGinSignal_t signalId;
    } indexedSignal;
  };
  bool isStrong;
};

#endif /* __cplusplus */

#if NCCL_CHECK_CUDACC
struct ncclGinOffsetPtr {
  uint64_t *ptr;
  uint64_t offset;
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_GIN_DEVICE_COMMON_H_ */
