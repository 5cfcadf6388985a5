/*
 * sim/kernel/volatile.c — device code's volatile accesses, as
 * ThreadSanitizer sees them.
 *
 * On a GPU a volatile load or store is a relaxed one at system scope (PTX:
 * ld.volatile has the semantics of ld.relaxed.sys), so threads that poll a
 * volatile flag another thread sets do not race, and CUDA code does that
 * (a spin on a flag, NCCL's own). To ThreadSanitizer a volatile access is
 * a plain one, and such a poll a race. So under ThreadSanitizer ncclsim's
 * compiler driver has the host compiler tell volatile accesses apart
 * (GCC's --param=tsan-distinguish-volatile=1, clang's
 * -tsan-distinguish-volatile), which calls these instead of the plain
 * checks, and each is checked as a relaxed atomic access of its size: it
 * races with a plain access, not with another volatile or atomic one, and
 * orders nothing. A write is a read-modify-write that adds 0 (it leaves
 * the value to the store that follows). An access not aligned to its size
 * is checked as a plain one.
 *
 * Built only with ThreadSanitizer; without, nothing calls them.
 */
#include "config.h"

#include "kernel_internal.h"

#if SIM_TSAN
#include <stdint.h>

/* libtsan's plain checks (sanitizer/tsan_interface.h does not declare
 * them). */
void __tsan_unaligned_read2(const void *addr);
void __tsan_unaligned_read4(const void *addr);
void __tsan_unaligned_read8(const void *addr);
void __tsan_unaligned_read16(const void *addr);
void __tsan_unaligned_write2(void *addr);
void __tsan_unaligned_write4(void *addr);
void __tsan_unaligned_write8(void *addr);
void __tsan_unaligned_write16(void *addr);

static bool aligned(const void *a, uintptr_t n) { return ((uintptr_t)a & (n - 1)) == 0; }

/* The compiler makes each __atomic below ThreadSanitizer's atomic of that
 * size. */
SIM_EXPORT void __tsan_volatile_read1(void *a) { (void)__atomic_load_n((uint8_t *)a, __ATOMIC_RELAXED); }
SIM_EXPORT void __tsan_volatile_write1(void *a) { (void)__atomic_fetch_add((uint8_t *)a, 0, __ATOMIC_RELAXED); }

SIM_EXPORT void __tsan_volatile_read2(void *a) {
  if (aligned(a, 2)) (void)__atomic_load_n((uint16_t *)a, __ATOMIC_RELAXED);
  else __tsan_unaligned_read2(a);
}
SIM_EXPORT void __tsan_volatile_write2(void *a) {
  if (aligned(a, 2)) (void)__atomic_fetch_add((uint16_t *)a, 0, __ATOMIC_RELAXED);
  else __tsan_unaligned_write2(a);
}

SIM_EXPORT void __tsan_volatile_read4(void *a) {
  if (aligned(a, 4)) (void)__atomic_load_n((uint32_t *)a, __ATOMIC_RELAXED);
  else __tsan_unaligned_read4(a);
}
SIM_EXPORT void __tsan_volatile_write4(void *a) {
  if (aligned(a, 4)) (void)__atomic_fetch_add((uint32_t *)a, 0, __ATOMIC_RELAXED);
  else __tsan_unaligned_write4(a);
}

SIM_EXPORT void __tsan_volatile_read8(void *a) {
  if (aligned(a, 8)) (void)__atomic_load_n((uint64_t *)a, __ATOMIC_RELAXED);
  else __tsan_unaligned_read8(a);
}
SIM_EXPORT void __tsan_volatile_write8(void *a) {
  if (aligned(a, 8)) (void)__atomic_fetch_add((uint64_t *)a, 0, __ATOMIC_RELAXED);
  else __tsan_unaligned_write8(a);
}

/* Two halves (a vector access: each element is one access on a GPU too). */
SIM_EXPORT void __tsan_volatile_read16(void *a) {
  if (aligned(a, 8)) {
    __tsan_volatile_read8(a);
    __tsan_volatile_read8((char *)a + 8);
  } else {
    __tsan_unaligned_read16(a);
  }
}
SIM_EXPORT void __tsan_volatile_write16(void *a) {
  if (aligned(a, 8)) {
    __tsan_volatile_write8(a);
    __tsan_volatile_write8((char *)a + 8);
  } else {
    __tsan_unaligned_write16(a);
  }
}
#endif
