/*
 * nccl_device/net_device.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/net_device.h>: the network device types, which number the
 * GIN backends (NCCL_NET_DEVICE_GIN_PROXY, _GDAKI, _GPI have the values
 * of NCCL_GIN_TYPE_PROXY, _GDAKI, _GPI), and the device handle of NCCL's
 * net plugin interface. Plain C.
 */
#ifndef NCCLSIM_NCCL_DEVICE_NET_DEVICE_H_
#define NCCLSIM_NCCL_DEVICE_NET_DEVICE_H_

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_MTU_SIZE 4096
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7

typedef enum {
  NCCL_NET_DEVICE_HOST = 0,
  NCCL_NET_DEVICE_UNPACK = 1,
  NCCL_NET_DEVICE_GIN_PROXY = 2,
  NCCL_NET_DEVICE_GIN_GDAKI = 3,
  NCCL_NET_DEVICE_GIN_GPI = 4,
} ncclNetDeviceType;

typedef struct {
  ncclNetDeviceType netDeviceType;
  int netDeviceVersion;
  void *handle;
  size_t size;
  int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;

typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v9_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v10_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v11_t ncclNetDeviceHandle_v12_t;
typedef ncclNetDeviceHandle_v12_t ncclNetDeviceHandle_t;

#endif /* NCCLSIM_NCCL_DEVICE_NET_DEVICE_H_ */
