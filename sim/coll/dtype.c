/*
 * sim/coll/dtype.c — float16, bfloat16 and float8 elements of reductions.
 *
 * The conversions are ncclsim_fp.h's, the ones the public cuda_fp16.h,
 * cuda_bf16.h and cuda_fp8.h use: a user's host conversion and one inside
 * an allreduce round alike, bit for bit as CUDA's. Float8 results saturate
 * (__NV_SATFINITE), as NCCL's float8 reductions do.
 */
#include <pthread.h>
#include <string.h>

#include <ncclsim_fp.h>

#include "coll_internal.h"

/* Decoding through tables: the reductions decode every input element. */
static float f16_table[65536], e4m3_table[256], e5m2_table[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static void tables_init(void) {
  for (uint32_t i = 0; i < 65536; i++) f16_table[i] = ncclsim_fp_f16_to_float((uint16_t)i);
  for (uint32_t i = 0; i < 256; i++) {
    e4m3_table[i] = ncclsim_fp_fp8_to_float((uint8_t)i, 0);
    e5m2_table[i] = ncclsim_fp_fp8_to_float((uint8_t)i, 1);
  }
}
static inline void tables(void) { pthread_once(&tables_once, tables_init); }

float sim_f16_to_f32(uint16_t h) {
  tables();
  return f16_table[h];
}
uint16_t sim_f32_to_f16(float f) { return ncclsim_fp_to_f16(f, NCCLSIM_FP_RN); }
float sim_e4m3_to_f32(uint8_t b) {
  tables();
  return e4m3_table[b];
}
uint8_t sim_f32_to_e4m3(float f) { return ncclsim_fp_to_fp8(f, 1, 0); }
float sim_e5m2_to_f32(uint8_t b) {
  tables();
  return e5m2_table[b];
}
uint8_t sim_f32_to_e5m2(float f) { return ncclsim_fp_to_fp8(f, 1, 1); }

float sim_bf16_to_f32(uint16_t h) { return ncclsim_fp_bf16_to_float(h); }
uint16_t sim_f32_to_bf16(float f) { return ncclsim_fp_to_bf16(f, NCCLSIM_FP_RN); }

/* Users' buffers need not be aligned to 2 bytes: 16-bit elements go
 * through memcpy (one load or store once optimised). */
static uint16_t load16(const void *p, size_t i) {
  uint16_t h;
  memcpy(&h, (const char *)p + 2 * i, 2);
  return h;
}
static void store16(void *p, size_t i, uint16_t h) { memcpy((char *)p + 2 * i, &h, 2); }

float sim_narrow_load(ncclDataType_t dt, const void *p, size_t i) {
  switch (dt) {
  case ncclFloat16: return sim_f16_to_f32(load16(p, i));
  case ncclBfloat16: return sim_bf16_to_f32(load16(p, i));
  case ncclFloat8e4m3: return sim_e4m3_to_f32(((const uint8_t *)p)[i]);
  case ncclFloat8e5m2: return sim_e5m2_to_f32(((const uint8_t *)p)[i]);
  default: return 0;
  }
}

void sim_narrow_store(ncclDataType_t dt, void *p, size_t i, float v) {
  switch (dt) {
  case ncclFloat16: store16(p, i, sim_f32_to_f16(v)); break;
  case ncclBfloat16: store16(p, i, sim_f32_to_bf16(v)); break;
  case ncclFloat8e4m3: ((uint8_t *)p)[i] = sim_f32_to_e4m3(v); break;
  case ncclFloat8e5m2: ((uint8_t *)p)[i] = sim_f32_to_e5m2(v); break;
  default: break;
  }
}
