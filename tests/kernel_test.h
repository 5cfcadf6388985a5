/* tests/kernel_test.h — what the .cu tests of kernels (tests/kernel_*.cu,
 * built by ncclsim-nvcc) share: CMocka, whose header has no C++ linkage of
 * its own, and small helpers. */
#ifndef TESTS_KERNEL_TEST_H_
#define TESTS_KERNEL_TEST_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}

#include <cuda_runtime.h>

/* cudaGetLastError after a launch: the launch's own error. */
static inline cudaError_t launched(void) { return cudaGetLastError(); }

#endif
