/*
 * vector_types.h — ncclsim's CUDA vector types (float2, int4, ...) and dim3,
 * with CUDA 13's members, sizes and alignments on a 64-bit host (the
 * compatibility test checks them against the real header). CUDA marks the
 * unsuffixed 4-wide 64-bit types (long4, double4, ...) deprecated in favour
 * of the _16a and _32a ones; ncclsim declares them without the warning.
 */
#ifndef NCCLSIM_VECTOR_TYPES_H_
#define NCCLSIM_VECTOR_TYPES_H_
#define __VECTOR_TYPES_H__ 1

/* A struct and its typedef; align 0 leaves the natural alignment. */
#define NCCLSIM_VEC(name, align, ...)                              \
  struct __attribute__((aligned((align) ? (align) : 1))) name {    \
    __VA_ARGS__;                                                   \
  };                                                               \
  typedef struct name name

NCCLSIM_VEC(char1, 0, signed char x);
NCCLSIM_VEC(char2, 2, signed char x, y);
NCCLSIM_VEC(char3, 0, signed char x, y, z);
NCCLSIM_VEC(char4, 4, signed char x, y, z, w);
NCCLSIM_VEC(uchar1, 0, unsigned char x);
NCCLSIM_VEC(uchar2, 2, unsigned char x, y);
NCCLSIM_VEC(uchar3, 0, unsigned char x, y, z);
NCCLSIM_VEC(uchar4, 4, unsigned char x, y, z, w);
NCCLSIM_VEC(short1, 0, short x);
NCCLSIM_VEC(short2, 4, short x, y);
NCCLSIM_VEC(short3, 0, short x, y, z);
NCCLSIM_VEC(short4, 8, short x, y, z, w);
NCCLSIM_VEC(ushort1, 0, unsigned short x);
NCCLSIM_VEC(ushort2, 4, unsigned short x, y);
NCCLSIM_VEC(ushort3, 0, unsigned short x, y, z);
NCCLSIM_VEC(ushort4, 8, unsigned short x, y, z, w);
NCCLSIM_VEC(int1, 0, int x);
NCCLSIM_VEC(int2, 8, int x, y);
NCCLSIM_VEC(int3, 0, int x, y, z);
NCCLSIM_VEC(int4, 16, int x, y, z, w);
NCCLSIM_VEC(uint1, 0, unsigned int x);
NCCLSIM_VEC(uint2, 8, unsigned int x, y);
NCCLSIM_VEC(uint3, 0, unsigned int x, y, z);
NCCLSIM_VEC(uint4, 16, unsigned int x, y, z, w);
NCCLSIM_VEC(long1, 0, long int x);
NCCLSIM_VEC(long2, 16, long int x, y);
NCCLSIM_VEC(long3, 0, long int x, y, z);
NCCLSIM_VEC(long4, 16, long int x, y, z, w);
NCCLSIM_VEC(long4_16a, 16, long int x, y, z, w);
NCCLSIM_VEC(long4_32a, 32, long int x, y, z, w);
NCCLSIM_VEC(ulong1, 0, unsigned long int x);
NCCLSIM_VEC(ulong2, 16, unsigned long int x, y);
NCCLSIM_VEC(ulong3, 0, unsigned long int x, y, z);
NCCLSIM_VEC(ulong4, 16, unsigned long int x, y, z, w);
NCCLSIM_VEC(ulong4_16a, 16, unsigned long int x, y, z, w);
NCCLSIM_VEC(ulong4_32a, 32, unsigned long int x, y, z, w);
NCCLSIM_VEC(float1, 0, float x);
NCCLSIM_VEC(float2, 8, float x, y);
NCCLSIM_VEC(float3, 0, float x, y, z);
NCCLSIM_VEC(float4, 16, float x, y, z, w);
NCCLSIM_VEC(longlong1, 0, long long int x);
NCCLSIM_VEC(longlong2, 16, long long int x, y);
NCCLSIM_VEC(longlong3, 0, long long int x, y, z);
NCCLSIM_VEC(longlong4, 16, long long int x, y, z, w);
NCCLSIM_VEC(longlong4_16a, 16, long long int x, y, z, w);
NCCLSIM_VEC(longlong4_32a, 32, long long int x, y, z, w);
NCCLSIM_VEC(ulonglong1, 0, unsigned long long int x);
NCCLSIM_VEC(ulonglong2, 16, unsigned long long int x, y);
NCCLSIM_VEC(ulonglong3, 0, unsigned long long int x, y, z);
NCCLSIM_VEC(ulonglong4, 16, unsigned long long int x, y, z, w);
NCCLSIM_VEC(ulonglong4_16a, 16, unsigned long long int x, y, z, w);
NCCLSIM_VEC(ulonglong4_32a, 32, unsigned long long int x, y, z, w);
NCCLSIM_VEC(double1, 0, double x);
NCCLSIM_VEC(double2, 16, double x, y);
NCCLSIM_VEC(double3, 0, double x, y, z);
NCCLSIM_VEC(double4, 16, double x, y, z, w);
NCCLSIM_VEC(double4_16a, 16, double x, y, z, w);
NCCLSIM_VEC(double4_32a, 32, double x, y, z, w);

#undef NCCLSIM_VEC

struct dim3 {
  unsigned int x, y, z;
#if defined(__cplusplus)
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3(void) const { return uint3{x, y, z}; }
#endif
};
typedef struct dim3 dim3;

#endif /* NCCLSIM_VECTOR_TYPES_H_ */
