/*
 * sim/dropin/cudart.c — ncclsim's drop-in libcudart.so.13: a library with
 * CUDA 13's soname and version node and nothing else of its own. Programs
 * linked against the real libcudart.so.13 check at load time that a
 * library of that name defines that version; their cuda* references then
 * bind to the simulator in libnccl.so.2, which this library needs, so
 * NCCL and CUDA calls share one simulator.
 */
__attribute__((visibility("default"))) const int ncclsim_dropin_cudart = 1;

/* A reference into libnccl.so.2 keeps it needed where the linker drops
 * libraries nothing uses (--as-needed, Debian's and Ubuntu's default):
 * else a program linked with -lcudart alone finds no cuda* function. */
extern int ncclGetVersion(int *version);
__attribute__((visibility("default"), used)) int (*const ncclsim_dropin_needs_nccl)(int *) = ncclGetVersion;
