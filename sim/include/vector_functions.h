/*
 * vector_functions.h — ncclsim's make_* constructors of the CUDA vector
 * types (make_float2, make_int4, ...), static inline as in CUDA.
 */
#ifndef NCCLSIM_VECTOR_FUNCTIONS_H_
#define NCCLSIM_VECTOR_FUNCTIONS_H_
#define __VECTOR_FUNCTIONS_H__ 1

#include <vector_types.h>

/* One constructor per vector type, all alike: made by these macros (the
 * names and signatures are CUDA's; tests/cuda-compat checks them). */
#define NCCLSIM_MAKE_VEC1(t, e) \
  static inline t make_##t(e x) { t v; v.x = x; return v; }
#define NCCLSIM_MAKE_VEC2(t, e) \
  static inline t make_##t(e x, e y) { t v; v.x = x; v.y = y; return v; }
#define NCCLSIM_MAKE_VEC3(t, e) \
  static inline t make_##t(e x, e y, e z) { t v; v.x = x; v.y = y; v.z = z; return v; }
#define NCCLSIM_MAKE_VEC4(t, e) \
  static inline t make_##t(e x, e y, e z, e w) { t v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
/* base1 .. base4 of element type e. */
#define NCCLSIM_MAKE_VECS(b, e) \
  NCCLSIM_MAKE_VEC1(b##1, e) NCCLSIM_MAKE_VEC2(b##2, e) NCCLSIM_MAKE_VEC3(b##3, e) NCCLSIM_MAKE_VEC4(b##4, e)
/* and the 16- and 32-byte aligned 4-vectors of the 8-byte types. */
#define NCCLSIM_MAKE_VECS_ALIGNED(b, e) \
  NCCLSIM_MAKE_VECS(b, e) NCCLSIM_MAKE_VEC4(b##4_16a, e) NCCLSIM_MAKE_VEC4(b##4_32a, e)

NCCLSIM_MAKE_VECS(char, signed char)
NCCLSIM_MAKE_VECS(uchar, unsigned char)
NCCLSIM_MAKE_VECS(short, short)
NCCLSIM_MAKE_VECS(ushort, unsigned short)
NCCLSIM_MAKE_VECS(int, int)
NCCLSIM_MAKE_VECS(uint, unsigned int)
NCCLSIM_MAKE_VECS_ALIGNED(long, long int)
NCCLSIM_MAKE_VECS_ALIGNED(ulong, unsigned long int)
NCCLSIM_MAKE_VECS(float, float)
NCCLSIM_MAKE_VECS_ALIGNED(longlong, long long int)
NCCLSIM_MAKE_VECS_ALIGNED(ulonglong, unsigned long long int)
NCCLSIM_MAKE_VECS_ALIGNED(double, double)

#undef NCCLSIM_MAKE_VECS_ALIGNED
#undef NCCLSIM_MAKE_VECS
#undef NCCLSIM_MAKE_VEC4
#undef NCCLSIM_MAKE_VEC3
#undef NCCLSIM_MAKE_VEC2
#undef NCCLSIM_MAKE_VEC1

#endif /* NCCLSIM_VECTOR_FUNCTIONS_H_ */
