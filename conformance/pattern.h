/*
 * pattern.h — reproducible byte patterns for checking transfers.
 *
 * Byte i of pattern `seed` is a byte of splitmix64(seed + i / 8), so every
 * byte depends on its index and on the seed, and a check can regenerate
 * what it expects instead of keeping a copy.
 */
#ifndef N4C_CONFORMANCE_PATTERN_H_
#define N4C_CONFORMANCE_PATTERN_H_

#include <stddef.h>
#include <stdint.h>

/* A seed for the data that rank `src` sends, told apart by `tag` (the dtype,
 * the direction, ...). */
uint64_t pattern_seed(int src, int tag);
/* Fills buf[0..bytes) with the pattern, or with its bitwise complement:
 * a poison that differs from the pattern in every byte. */
void pattern_fill(void *buf, size_t bytes, uint64_t seed);
void pattern_fill_not(void *buf, size_t bytes, uint64_t seed);
/* Index of the first byte differing from the pattern, or `bytes` if none;
 * *ndiff (if not NULL) gets how many bytes differ. */
size_t pattern_check(const void *buf, size_t bytes, uint64_t seed, size_t *ndiff);
/* Byte i of the pattern. */
uint8_t pattern_byte(uint64_t seed, size_t i);

#endif /* N4C_CONFORMANCE_PATTERN_H_ */
