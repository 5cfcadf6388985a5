/*
 * devcomm_bridge.h — NCCL's device-API host functions behind C functions:
 * ncclDevCommCreate/Destroy, ncclCommQueryProperties and the window device
 * pointers (ncclGetLsaDevicePointer, ncclGetPeerDevicePointer,
 * ncclGetLsaMultimemDevicePointer).
 *
 * Real NCCL declares them in <nccl_device.h> (nccl_device/core.h), a C++
 * header, not in <nccl.h>, so these functions live in the one C++ file
 * devcomm_bridge.cc, on every backend (built with HAVE_NCCL_DEVCOMM). The
 * rest of lib/ sees an ncclDevComm_t only as a pointer to NCCL's struct.
 * Each of the later four exists only where configure found the NCCL
 * function (HAVE_BRIDGE_<NAME>, 0 or 1). Not installed.
 */
#ifndef N4C_DEVCOMM_BRIDGE_H_
#define N4C_DEVCOMM_BRIDGE_H_

#include "nccl4c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  N4C_DC_OK = 0,
  N4C_DC_ENCCL,  /* *nres holds NCCL's result */
  N4C_DC_ENOMEM, /* the ncclDevComm_t could not be allocated */
  N4C_DC_ENOTSUP /* *detail names a set field the linked NCCL lacks */
} n4c_dc_result_t;

/* Maps `reqs` (already checked: each field N4C_UNSET or in range; NULL
 * means all unset) onto NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER, an unset
 * field keeping its default, and calls ncclDevCommCreate. On N4C_DC_OK,
 * *out is a new ncclDevComm_t from n4c_malloc. */
n4c_dc_result_t n4c_dc_create(ncclComm_t comm, const n4c_dev_comm_requirements_t *reqs, void **out,
                              ncclResult_t *nres, const char **detail);
/* ncclDevCommDestroy(comm, dc); dc stays allocated. */
ncclResult_t n4c_dc_destroy(ncclComm_t comm, void *dc);
/* Frees what n4c_dc_create allocated (NULL: no-op). */
void n4c_dc_free(void *dc);

/* ncclCommQueryProperties(comm, ...) with NCCL_COMM_PROPERTIES_INITIALIZER,
 * converted into *out (written only on ncclSuccess); NCCL's result. */
#if HAVE_BRIDGE_NCCLCOMMQUERYPROPERTIES
ncclResult_t n4c_br_comm_properties(ncclComm_t comm, n4c_comm_properties_t *out);
#endif
/* The window pointer getters, NCCL's arguments and result. */
#if HAVE_BRIDGE_NCCLGETLSADEVICEPOINTER
ncclResult_t n4c_br_lsa_device_pointer(ncclWindow_t win, size_t offset, int lsa_rank, void **out);
#endif
#if HAVE_BRIDGE_NCCLGETPEERDEVICEPOINTER
ncclResult_t n4c_br_peer_device_pointer(ncclWindow_t win, size_t offset, int peer, void **out);
#endif
#if HAVE_BRIDGE_NCCLGETLSAMULTIMEMDEVICEPOINTER
ncclResult_t n4c_br_lsa_multimem_device_pointer(ncclWindow_t win, size_t offset, void **out);
#endif

/* From alloc.c (n4c_internal.h is C only). */
void *n4c_malloc(size_t size);
void n4c_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* N4C_DEVCOMM_BRIDGE_H_ */
