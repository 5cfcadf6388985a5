/*
 * ncclsim_device/launch.h — launches, kernels' prologues, __shared__ and
 * __device__ variables, and the C++ overloads of CUDA's calls on kernels
 * and symbols.
 *
 * What ncclsim's driver writes in place of CUDA's syntax calls into here
 * (namespace __ncclsim_rt); programs call only CUDA's names.
 */
#ifndef NCCLSIM_DEVICE_LAUNCH_H_
#define NCCLSIM_DEVICE_LAUNCH_H_

namespace __ncclsim_rt {

/* <<<grid, block, smem, stream>>> */
struct launch_config {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
};
static inline launch_config config(dim3 grid, dim3 block, size_t smem = 0, cudaStream_t stream = 0) {
  return launch_config{grid, block, smem, stream};
}

/* A launch's record: the engine's part, what calls the kernel, and the
 * arguments as the launch converted them. */
template <class Call, class Args>
struct record {
  __ncclsim_launch l;
  Call call;
  Args args;
};

template <class Rec, size_t... I>
static inline void invoke_with(Rec *r, std::index_sequence<I...>) {
  r->call(std::get<I>(r->args)...);
}
template <class Rec>
static void invoke(__ncclsim_launch *l) {
  Rec *r = reinterpret_cast<Rec *>(l);
  invoke_with(r, std::make_index_sequence<std::tuple_size<decltype(r->args)>::value>{});
}
template <class Rec>
static void destroy(__ncclsim_launch *l) {
  reinterpret_cast<Rec *>(l)->~Rec();
}

/* The record of a call of `call` with `args`, in stream's op pool; NULL
 * out of memory. */
template <class Call, class... A>
static inline __ncclsim_launch *make_record(cudaStream_t stream, Call &&call, A &&...args) {
  using Rec = record<typename std::decay<Call>::type, std::tuple<typename std::decay<A>::type...>>;
  void *mem = __ncclsim_launch_alloc(stream, sizeof(Rec));
  if (!mem) return nullptr;
  Rec *r = new (mem) Rec{__ncclsim_launch(), std::forward<Call>(call),
                         std::tuple<typename std::decay<A>::type...>(std::forward<A>(args)...)};
  r->l.invoke = &invoke<Rec>;
  r->l.destroy = &destroy<Rec>;
  r->l.args = &r->args;
  return &r->l;
}

static inline void configure(__ncclsim_launch *l, const launch_config &c, const char *name, const char *file,
                             int line) {
  l->grid = c.grid;
  l->block = c.block;
  l->smem = c.smem;
  l->stream = c.stream;
  l->name = name;
  l->file = file;
  l->line = line;
}

/* k<<<c>>>(args): `call` calls the kernel as the launch was written (a
 * template's arguments deduced, a pointer followed), with each argument
 * as copied at the launch. Errors go to cudaGetLastError, as CUDA's. */
template <class Call, class... A>
static inline void launch(const launch_config &c, const char *name, const char *file, int line, Call &&call,
                          A &&...args) {
  __ncclsim_launch *l = make_record(c.stream, std::forward<Call>(call), std::forward<A>(args)...);
  if (!l) {
    __ncclsim_launch_oom();
    return;
  }
  configure(l, c, name, file, line);
  __ncclsim_launch_submit(l);
}

/* k<<<c>>>(args) for a kernel named without template arguments to deduce
 * (a function, an instance, a pointer): the arguments convert to the
 * kernel's parameters at the call, as CUDA's launch converts them (NULL
 * and 0 become pointers). */
template <class... P>
struct binder {
  void (*kernel)(P...);
  launch_config c;
  const char *name, *file;
  int line;
  void operator()(P... args) const {
    void (*k)(P...) = kernel;
    __ncclsim_launch *l = make_record(
        c.stream, [k](typename std::decay<P>::type &...a) { k(a...); }, std::move(args)...);
    if (!l) {
      __ncclsim_launch_oom();
      return;
    }
    configure(l, c, name, file, line);
    __ncclsim_launch_submit(l);
  }
};
template <class... P>
static inline binder<P...> bind(const launch_config &c, const char *name, const char *file, int line,
                                void (*kernel)(P...)) {
  return binder<P...>{kernel, c, name, file, line};
}

/* ---- kernels: registration and the prologue ---- */

/* One per kernel: registers, at load, what builds its launch from an
 * array of pointers to its arguments (cudaLaunchKernel's form). */
template <class F, F f>
struct kreg;
template <class... P, void (*f)(P...)>
struct kreg<void (*)(P...), f> {
  static const int id;
  template <size_t... I>
  static __ncclsim_launch *pack_with(void *stream, void **args, std::index_sequence<I...>) {
    return make_record(
        static_cast<cudaStream_t>(stream),
        [](typename std::decay<P>::type &...a) { f(a...); },
        *static_cast<typename std::decay<P>::type *>(args[I])...);
  }
  static __ncclsim_launch *pack(void *stream, void **args) {
    return pack_with(stream, args, std::index_sequence_for<P...>{});
  }
};
template <class... P, void (*f)(P...)>
const int kreg<void (*)(P...), f>::id =
    __ncclsim_kernel_register(reinterpret_cast<const void *>(f), &kreg<void (*)(P...), f>::pack, sizeof...(P));

/* The prologue the driver writes at the top of kernel f: while a launch
 * probes, it answers who it is and the kernel returns. */
template <class F, F f>
static inline bool enter(const char *pretty, unsigned max_threads, unsigned min_blocks) {
  (void)&kreg<F, f>::id;
  return __ncclsim_kernel_enter(reinterpret_cast<const void *>(f), pretty, max_threads, min_blocks) != 0;
}
/* A kernel that cannot name itself (a nameless template parameter): its
 * signature's string stands for it, and it has no registration. */
static inline bool enter_unnamed(const char *pretty, unsigned max_threads, unsigned min_blocks) {
  return __ncclsim_kernel_enter(pretty, pretty, max_threads, min_blocks) != 0;
}

/* ---- __shared__ and __device__ variables ---- */

template <class T>
static inline T *shared(const void *key) {
  return static_cast<T *>(__ncclsim_shared(key, sizeof(T), alignof(T)));
}

template <class T>
static inline T *dsym(T &host) {
  return static_cast<T *>(__ncclsim_device_symbol(&host, sizeof(T), nullptr));
}

} /* namespace __ncclsim_rt */

/* ---- the C++ overloads of <cuda_runtime.h> ---- */

template <class T>
static inline cudaError_t cudaLaunchKernel(T *func, dim3 gridDim, dim3 blockDim, void **args,
                                           size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::cudaLaunchKernel(reinterpret_cast<const void *>(func), gridDim, blockDim, args, sharedMem, stream);
}

template <class T>
static inline cudaError_t cudaLaunchCooperativeKernel(T *func, dim3 gridDim, dim3 blockDim, void **args,
                                                      size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(func), gridDim, blockDim, args, sharedMem,
                                       stream);
}

template <class... ExpTypes, class... ActTypes>
static inline cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, void (*kernel)(ExpTypes...),
                                             ActTypes &&...args) {
  int cooperative = 0;
  int err = __ncclsim_config_attrs(config, &cooperative);
  if (err != cudaSuccess) return static_cast<cudaError_t>(err);
  __ncclsim_launch *l = __ncclsim_rt::make_record(
      config->stream, [kernel](typename std::decay<ExpTypes>::type &...a) { kernel(a...); },
      typename std::decay<ExpTypes>::type(std::forward<ActTypes>(args))...);
  if (!l) return static_cast<cudaError_t>(__ncclsim_launch_oom());
  __ncclsim_rt::configure(l, __ncclsim_rt::config(config->gridDim, config->blockDim, config->dynamicSmemBytes,
                                                  config->stream),
                          "cudaLaunchKernelEx", nullptr, 0);
  l->cooperative = cooperative;
  return static_cast<cudaError_t>(__ncclsim_launch_submit(l));
}

template <class T>
static inline cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, T *func, void **args) {
  return ::cudaLaunchKernelExC(config, reinterpret_cast<const void *>(func), args);
}

template <class T>
static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry) {
  return ::cudaFuncGetAttributes(attr, reinterpret_cast<const void *>(entry));
}

template <class T>
static inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(entry), attr, value);
}

template <class T>
static inline cudaError_t cudaFuncSetCacheConfig(T *func, enum cudaFuncCache cacheConfig) {
  return ::cudaFuncSetCacheConfig(reinterpret_cast<const void *>(func), cacheConfig);
}

template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, T func, int blockSize,
                                                                        size_t dynamicSMemSize) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      numBlocks, reinterpret_cast<const void *>(func), blockSize, dynamicSMemSize, 0);
}

template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, T func,
                                                                                 int blockSize,
                                                                                 size_t dynamicSMemSize,
                                                                                 unsigned int flags) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      numBlocks, reinterpret_cast<const void *>(func), blockSize, dynamicSMemSize, flags);
}

template <class T>
static inline cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, T func, int numBlocks,
                                                                   int blockSize) {
  return ::cudaOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, reinterpret_cast<const void *>(func),
                                                     numBlocks, blockSize);
}

/* The block size with the most resident threads (ties: the largest), and
 * the grid that fills the 132 multiprocessors with it. blockSizeToDynamicSMemSize
 * maps a block size to its dynamic shared memory. */
template <class UnaryFunction, class T>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
    int *minGridSize, int *blockSize, T func, UnaryFunction blockSizeToDynamicSMemSize, int blockSizeLimit = 0,
    unsigned int flags = 0) {
  if (!minGridSize || !blockSize) return cudaErrorInvalidValue;
  struct cudaFuncAttributes a;
  cudaError_t err = ::cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(func));
  if (err != cudaSuccess) return err;
  int most = a.maxThreadsPerBlock;
  if (blockSizeLimit > 0 && blockSizeLimit < most) most = blockSizeLimit;
  int best = 0, best_blocks = 0, best_threads = -1;
  for (int size = most; size > 0; size -= size % 32 ? size % 32 : 32) {
    int blocks = 0;
    err = ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &blocks, reinterpret_cast<const void *>(func), size, blockSizeToDynamicSMemSize(size), flags);
    if (err != cudaSuccess) return err;
    if (blocks * size > best_threads) {
      best_threads = blocks * size;
      best = size;
      best_blocks = blocks;
    }
  }
  *blockSize = best;
  *minGridSize = best_blocks * 132;
  return cudaSuccess;
}

template <class UnaryFunction, class T>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int *minGridSize, int *blockSize, T func,
                                                                         UnaryFunction blockSizeToDynamicSMemSize,
                                                                         int blockSizeLimit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(minGridSize, blockSize, func,
                                                                 blockSizeToDynamicSMemSize, blockSizeLimit, 0);
}

template <class T>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, T func,
                                                             size_t dynamicSMemSize = 0, int blockSizeLimit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
      minGridSize, blockSize, func, [dynamicSMemSize](int) { return dynamicSMemSize; }, blockSizeLimit, 0);
}

template <class T>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, T func,
                                                                      size_t dynamicSMemSize = 0,
                                                                      int blockSizeLimit = 0,
                                                                      unsigned int flags = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
      minGridSize, blockSize, func, [dynamicSMemSize](int) { return dynamicSMemSize; }, blockSizeLimit, flags);
}

template <class T>
static inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol(static_cast<const void *>(&symbol), src, count, offset, kind);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                               enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(dst, static_cast<const void *>(&symbol), count, offset, kind);
}
template <class T>
static inline cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                                  enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                                  cudaStream_t stream = 0) {
  return ::cudaMemcpyToSymbolAsync(static_cast<const void *>(&symbol), src, count, offset, kind, stream);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                                    enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                                    cudaStream_t stream = 0) {
  return ::cudaMemcpyFromSymbolAsync(dst, static_cast<const void *>(&symbol), count, offset, kind, stream);
}
template <class T>
static inline cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) {
  return ::cudaGetSymbolAddress(devPtr, static_cast<const void *>(&symbol));
}
template <class T>
static inline cudaError_t cudaGetSymbolSize(size_t *size, const T &symbol) {
  return ::cudaGetSymbolSize(size, static_cast<const void *>(&symbol));
}

#endif
