/*
 * mem.h — NCCL memory allocation shared by mem.c and dlpack.c. Not
 * installed.
 */
#ifndef N4C_MEM_H_
#define N4C_MEM_H_

#include "n4c_internal.h"

/* n4c_mem_alloc for the public function `op` (named in messages): on
 * success *out holds `bytes` bytes (NULL for 0) on `device`, resolved to a
 * device number in *resolved (may be NULL). The current device is the
 * same afterwards, also on failure. */
n4c_status_t n4c_mem_alloc_op(const char *op, size_t bytes, int device, void **out, int *resolved);

#endif /* N4C_MEM_H_ */
