/* pattern.c — byte patterns; word at a time, for 64 MiB buffers. */
#include "config.h"

#include <string.h>
#include "pattern.h"

static uint64_t splitmix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t pattern_seed(int src, int tag)
{
  return splitmix64(((uint64_t)(unsigned)src << 32) ^ (uint64_t)(unsigned)tag);
}

uint8_t pattern_byte(uint64_t seed, size_t i)
{
  return (uint8_t)(splitmix64(seed + i / 8) >> (8 * (i % 8)));
}

/* Byte k of a word is (word >> 8k) whatever the host's byte order; on a
 * little-endian host that is one 8-byte store. */
static void put_word(unsigned char *p, uint64_t w, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n == 8) {
    memcpy(p, &w, 8);
    return;
  }
#endif
  for (size_t k = 0; k < n; k++)
    p[k] = (unsigned char)(w >> (8 * k));
}

static void fill(void *buf, size_t bytes, uint64_t seed, uint64_t mask)
{
  unsigned char *p = buf;
  size_t w = 0;

  for (; (w + 1) * 8 <= bytes; w++)
    put_word(p + w * 8, splitmix64(seed + w) ^ mask, 8);
  put_word(p + w * 8, splitmix64(seed + w) ^ mask, bytes - w * 8);
}

void pattern_fill(void *buf, size_t bytes, uint64_t seed)
{
  fill(buf, bytes, seed, 0);
}

void pattern_fill_not(void *buf, size_t bytes, uint64_t seed)
{
  fill(buf, bytes, seed, ~(uint64_t)0);
}

size_t pattern_check(const void *buf, size_t bytes, uint64_t seed, size_t *ndiff)
{
  const unsigned char *p = buf;
  size_t first = bytes, n = 0;

  for (size_t w = 0; w * 8 < bytes; w++) {
    unsigned char want[8];
    size_t len = bytes - w * 8 < 8 ? bytes - w * 8 : 8;
    uint64_t word = splitmix64(seed + w);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* A whole word compared as one load, not a call of memcmp: under the
     * sanitizers an intercepted call per word made the check of a 64 MiB
     * buffer cost seconds. */
    if (len == 8) {
      uint64_t got;
      memcpy(&got, p + w * 8, 8);
      if (got == word)
        continue;
    }
#endif
    put_word(want, word, len);
    if (memcmp(p + w * 8, want, len) == 0)
      continue;
    for (size_t k = 0; k < len; k++) {
      if (p[w * 8 + k] != want[k]) {
        if (first == bytes)
          first = w * 8 + k;
        n++;
      }
    }
  }
  if (ndiff)
    *ndiff = n;
  return first;
}
