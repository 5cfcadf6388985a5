/*
 * devcomm_bridge.h — ncclDevCommCreate/Destroy behind C functions.
 *
 * Real NCCL declares the device-communicator API in C++ headers, so these
 * functions live in the one C++ file devcomm_bridge.cc, on every backend.
 * The rest of lib/ sees an ncclDevComm_t only as a pointer to NCCL's
 * struct. Not installed.
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

/* From alloc.c (n4c_internal.h is C only). */
void *n4c_malloc(size_t size);
void n4c_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* N4C_DEVCOMM_BRIDGE_H_ */
