/*
 * assert.h — ncclsim: the C library's assert, and in code built by
 * ncclsim's compiler driver CUDA's device assert: a failing assert in a
 * kernel prints CUDA's message (file, line, function, block and thread)
 * and ends the kernel with cudaErrorAssert, sticky on its device, as a GPU
 * does; outside a kernel it is the C library's. No include guard: assert.h
 * may be included again with NDEBUG changed, as the C standard says.
 */
#include_next <assert.h>
#if defined(__NCCLSIM_NVCC__) && defined(__cplusplus)
#undef assert
#ifdef NDEBUG
#define assert(expr) ((void)0)
#else
#ifndef NCCLSIM_ASSERT_FAIL_DECLARED
#define NCCLSIM_ASSERT_FAIL_DECLARED 1
extern "C" void __ncclsim_assert_fail(const char *expr, const char *file, unsigned line, const char *function)
    __attribute__((noreturn));
#endif
#define assert(expr) \
  (static_cast<bool>(expr) ? (void)0 : __ncclsim_assert_fail(#expr, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
#endif
