/* tests/sim_reduce.c — ncclsim's fused reduction kernels (sim/coll/
 * reduce.c) give the bits of its block kernels, which the collectives
 * use for everything else: every native type, sum, product, max and min,
 * 1 to 9 inputs, 1 to 3 outputs, lengths around the 64-byte strip,
 * inputs and outputs at odd byte offsets, and an output that is an input.
 * The values wrap the integers, cross zero for the signed compares, and
 * put NaN and signed zeros in the floats' max and min. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "coll/coll_internal.h"

enum { MAXN = 200, MAXIN = 9, MAXOUT = 3, PAD = 8 };

/* Element i of input r as bytes of dt: small integers and values near the
 * type's ends, both signs; for floats also NaN and -0. */
static void fill(ncclDataType_t dt, unsigned char *p, int r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t k = (i * 7 + (size_t)r * 13) % 23;
    int64_t v = (int64_t)k - 11;
    if (k == 22) v = INT64_MAX - (int64_t)r; /* wraps the integer sums and products */
    switch (dt) {
    case ncclInt8:
    case ncclUint8: p[i] = (unsigned char)(k == 22 ? 0x7f + r : v); break;
    case ncclInt32:
    case ncclUint32: {
      int32_t x = k == 22 ? INT32_MAX - r : (int32_t)v;
      memcpy(p + 4 * i, &x, 4);
      break;
    }
    case ncclInt64:
    case ncclUint64: memcpy(p + 8 * i, &v, 8); break;
    case ncclFloat32: {
      float f = k == 22 ? NAN : k == 21 ? -0.0f : k == 20 ? 0.0f : (float)v * 1.25f;
      memcpy(p + 4 * i, &f, 4);
      break;
    }
    default: {
      double d = k == 22 ? NAN : k == 21 ? -0.0 : k == 20 ? 0.0 : (double)v * 1.25;
      memcpy(p + 8 * i, &d, 8);
      break;
    }
    }
  }
}

static void check(ncclDataType_t dt, red_kind kind, int nin, int nout, size_t n, size_t off, bool in_place) {
  static unsigned char inb[MAXIN][MAXN * 8 + PAD + 64], outb[MAXOUT][MAXN * 8 + PAD + 64];
  static unsigned char want[MAXN * 8], tmp[COLL_TMP_BYTES + 64];
  size_t es = sim_dtype_size(dt);
  const void *in[MAXIN];
  void *out[MAXOUT];
  for (int r = 0; r < nin; r++) {
    in[r] = inb[r] + off;
    fill(dt, inb[r] + off, r, n);
  }
  red_args a = {dt, kind, nin, in, NULL, 0};
  unsigned char *t64 = (unsigned char *)(((uintptr_t)tmp + 63) & ~(uintptr_t)63);
  sim_reduce_block(&a, n, want, t64);
  for (int o = 0; o < nout; o++) {
    out[o] = outb[o] + (off + (size_t)o) % PAD; /* each output at its own offset */
    memset(outb[o], 0xa5, sizeof outb[o]);
  }
  if (in_place) out[0] = (void *)in[0];
  assert_true(sim_reduce_fused(&a, n, out, nout));
  for (int o = 0; o < nout; o++) {
    if (memcmp(out[o], want, n * es) != 0)
      fail_msg("dt %d kind %d nin %d nout %d n %zu off %zu in_place %d: output %d differs", (int)dt, (int)kind, nin,
               nout, n, off, (int)in_place, o);
    /* Nothing past the output's end is written. */
    unsigned char *end = (unsigned char *)out[o] + n * es;
    if (!(in_place && o == 0)) assert_int_equal(end[0], 0xa5);
  }
}

static void test_fused_is_block(void **state) {
  (void)state;
  const ncclDataType_t dts[] = {ncclInt8,  ncclUint8,  ncclInt32,   ncclUint32,
                                ncclInt64, ncclUint64, ncclFloat32, ncclFloat64};
  const red_kind kinds[] = {RED_SUM, RED_PROD, RED_MAX, RED_MIN};
  const size_t lens[] = {0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 127, 129, MAXN};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t k = 0; k < 4; k++)
      for (int nin = 1; nin <= MAXIN; nin += nin < 3 ? 1 : 3)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
          for (size_t off = 0; off < 4; off += 3) {
            check(dts[d], kinds[k], nin, 1 + (int)(l % MAXOUT), lens[l], off, false);
            check(dts[d], kinds[k], nin, 2, lens[l], off, true);
          }
}

/* What the fused kernels do not take they leave alone, and say so. */
static void test_fused_refuses(void **state) {
  (void)state;
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  const void *in[1] = {x};
  void *out[1] = {y};
  red_args a = {ncclFloat32, RED_PREMULSUM, 1, in, NULL, 0};
  assert_false(sim_reduce_fused(&a, 4, out, 1));
  red_args h = {ncclFloat16, RED_SUM, 1, in, NULL, 0};
  assert_false(sim_reduce_fused(&h, 4, out, 1));
  assert_true(y[0] == 0 && y[3] == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fused_is_block),
      cmocka_unit_test(test_fused_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
