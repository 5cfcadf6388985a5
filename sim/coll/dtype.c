/*
 * sim/coll/dtype.c — float16, bfloat16 and float8 in software.
 *
 * One encoder serves every narrow format: it rounds the float's bits to
 * nearest even at the format's precision (for subnormal results, at the
 * subnormal quantum), letting a carry out of the mantissa bump the
 * exponent, then handles overflow as the format does on the GPU.
 */
#include <pthread.h>
#include <string.h>

#include "coll_internal.h"

typedef struct {
  int mbits, bias;
  uint32_t max_finite; /* encoding of the largest finite magnitude */
  uint32_t inf;        /* overflow result when not saturating */
  uint32_t nan;
  bool satfinite;
  int width; /* total bits */
} narrow_fmt;

static const narrow_fmt F16 = {10, 15, 0x7bff, 0x7c00, 0x7e00, false, 16};
static const narrow_fmt E4M3 = {3, 7, 0x7e, 0x7e, 0x7f, true, 8};
static const narrow_fmt E5M2 = {2, 15, 0x7b, 0x7c, 0x7f, true, 8};

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* x >> s rounded to nearest, ties to even; s in [1, 40]. */
static uint64_t rne_shift(uint64_t x, unsigned s) {
  uint64_t q = x >> s, rem = x & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

static uint32_t encode(float f, const narrow_fmt *fm) {
  uint32_t u = f2u(f), sign = (u >> 31) << (fm->width - 1), a = u & 0x7fffffffu, r;
  if (a > 0x7f800000u) return sign | fm->nan;
  if (a == 0x7f800000u) return sign | (fm->satfinite ? fm->max_finite : fm->inf);
  int e = (int)(a >> 23) - 127; /* unbiased; float subnormals count as -127 */
  int field = e + fm->bias;
  if (field >= 1) {
    r = (uint32_t)rne_shift(a - ((uint32_t)(127 - fm->bias) << 23), 23 - fm->mbits);
  } else {
    uint64_t mant = (a & 0x7fffffu) | (a >> 23 ? 0x800000u : 0);
    unsigned s = (unsigned)(23 - fm->mbits + 1 - field);
    r = s > 40 ? 0 : (uint32_t)rne_shift(mant, s);
  }
  /* For e4m3, the encoding past max_finite is NaN, not a larger number. */
  if (r > fm->max_finite) r = fm->satfinite ? fm->max_finite : fm->inf;
  return sign | r;
}

static float decode(uint32_t b, const narrow_fmt *fm) {
  int ebits = fm->width - 1 - fm->mbits;
  uint32_t sign = (b >> (fm->width - 1)) & 1, e = (b >> fm->mbits) & ((1u << ebits) - 1),
           m = b & ((1u << fm->mbits) - 1);
  float v;
  if (fm == &E4M3 ? (e == 15 && m == 7) : e == (1u << ebits) - 1) {
    v = (fm == &E4M3 || m) ? u2f(0x7fc00000u) : u2f(0x7f800000u);
  } else if (e == 0) {
    v = (float)m * u2f((uint32_t)(127 + 1 - fm->bias - fm->mbits) << 23);
  } else {
    v = u2f(((e - (uint32_t)fm->bias + 127) << 23) | (m << (23 - fm->mbits)));
  }
  return sign ? -v : v;
}

/* Decoding through tables: the reductions decode every input element. */
static float f16_table[65536], e4m3_table[256], e5m2_table[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static void tables_init(void) {
  for (uint32_t i = 0; i < 65536; i++) f16_table[i] = decode(i, &F16);
  for (uint32_t i = 0; i < 256; i++) {
    e4m3_table[i] = decode(i, &E4M3);
    e5m2_table[i] = decode(i, &E5M2);
  }
}
static inline void tables(void) { pthread_once(&tables_once, tables_init); }

float sim_f16_to_f32(uint16_t h) {
  tables();
  return f16_table[h];
}
uint16_t sim_f32_to_f16(float f) { return (uint16_t)encode(f, &F16); }
float sim_e4m3_to_f32(uint8_t b) {
  tables();
  return e4m3_table[b];
}
uint8_t sim_f32_to_e4m3(float f) { return (uint8_t)encode(f, &E4M3); }
float sim_e5m2_to_f32(uint8_t b) {
  tables();
  return e5m2_table[b];
}
uint8_t sim_f32_to_e5m2(float f) { return (uint8_t)encode(f, &E5M2); }

float sim_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }
uint16_t sim_f32_to_bf16(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  return (uint16_t)(rne_shift(u, 16)); /* a carry into the exponent is right, up to inf */
}

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
