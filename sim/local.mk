# ncclsim: the simulated NCCL and CUDA runtime (see docs/architecture.md).
ncclsiminclude_HEADERS += sim/include/nccl.h sim/include/cuda_runtime_api.h \
	sim/include/cuda_runtime.h sim/include/ncclsim.h sim/include/nccl_device.h \
	sim/include/ncclsim_fp.h sim/include/cuda_fp16.h sim/include/cuda_bf16.h sim/include/cuda_fp8.h \
	sim/include/vector_types.h sim/include/vector_functions.h sim/include/cuda.h
# <nccl_device/core.h>, under $(includedir)/ncclsim/nccl_device as in NCCL.
ncclsimdeviceincludedir = $(ncclsimincludedir)/nccl_device
ncclsimdeviceinclude_HEADERS = sim/include/nccl_device/core.h
noinst_HEADERS += sim/sim.h sim/transport.h sim/net/net.h sim/net/net_internal.h sim/p2p/p2p_internal.h sim/cuda/cuda_internal.h sim/core/core_internal.h sim/comm/comm_internal.h sim/coll/coll_internal.h \
	sim/cuda/cuda.h sim/core/core.h sim/comm/comm.h sim/dev/dev.h \
	sim/dev/dev_internal.h sim/rma/rma_internal.h \
	sim/kernel/kernel.h sim/kernel/kernel_internal.h sim/nvcc/nvcc.h
# The device side of CUDA, for programs built by ncclsim-nvcc: its headers
# under $(includedir)/ncclsim, laid out as CUDA's (cooperative_groups/,
# cuda/) and ncclsim's own (ncclsim_device/).
ncclsiminclude_HEADERS += sim/include/cooperative_groups.h sim/include/assert.h
ncclsimcgincludedir = $(ncclsimincludedir)/cooperative_groups
ncclsimcginclude_HEADERS = sim/include/cooperative_groups/reduce.h
ncclsimcudaincludedir = $(ncclsimincludedir)/cuda
ncclsimcudainclude_HEADERS = sim/include/cuda/atomic
ncclsimcudastdincludedir = $(ncclsimincludedir)/cuda/std
ncclsimcudastdinclude_HEADERS = sim/include/cuda/std/atomic
ncclsimkernelincludedir = $(ncclsimincludedir)/ncclsim_device
ncclsimkernelinclude_HEADERS = sim/include/ncclsim_device/abi.h sim/include/ncclsim_device/atomic.h \
	sim/include/ncclsim_device/intrinsics.h sim/include/ncclsim_device/launch.h \
	sim/include/ncclsim_device/prelude.h sim/include/ncclsim_device/ptx.h \
	sim/include/ncclsim_device/qualifiers.h sim/include/ncclsim_device/runtime.h \
	sim/include/ncclsim_device/sync.h

# The simulator is built once as a convenience library: libncclsim.la wraps
# it for users, and the unit tests link it statically to reach internals
# (sim/sim.h) that the shared library keeps hidden.
if BACKEND_SIM
lib_LTLIBRARIES += sim/libncclsim.la
noinst_LTLIBRARIES += sim/libncclsim_core.la
endif
sim_libncclsim_la_SOURCES =
sim_libncclsim_la_LIBADD = sim/libncclsim_core.la $(JANSSON_LIBS) $(BOOST_CONTEXT_LIBS) -ldl -lpthread -lm
sim_libncclsim_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0
sim_libncclsim_core_la_SOURCES = \
	sim/util/param.c sim/util/log.c sim/util/alloc.c sim/util/shm.c sim/util/job.c sim/util/wait.c sim/util/ticks.c sim/util/block.c \
	sim/cuda/device.c sim/cuda/props.c sim/cuda/peer.c sim/cuda/memory.c sim/cuda/stream.c sim/cuda/event.c sim/cuda/memcpy.c \
	sim/cuda/mempool.c sim/cuda/ipc.c sim/cuda/host_register.c sim/cuda/reset.c \
	sim/core/rendezvous.c sim/core/connect.c sim/core/task.c sim/core/group.c sim/core/fail.c sim/core/trace.c \
	sim/comm/clique.c sim/comm/comm.c sim/comm/init.c sim/comm/split.c sim/comm/child_net.c sim/comm/options.c \
	sim/comm/suspend.c sim/comm/grow.c \
	sim/comm/checks.c \
	sim/p2p/p2p.c sim/p2p/p2p_net.c \
	sim/net/socket.c sim/net/bootstrap.c sim/net/join.c sim/net/ucx.c sim/net/peer_wait.c sim/net/exchange.c \
	sim/rma/area.c sim/rma/win_registry.c sim/rma/win_register.c sim/rma/win_pointer.c \
	sim/rma/buf_register.c sim/rma/signal.c sim/rma/put.c sim/rma/rma_net.c \
	sim/coll/coll.c sim/coll/coll_net.c sim/coll/small.c sim/coll/work.c sim/coll/reduce.c sim/coll/dtype.c sim/coll/redop.c \
	sim/dev/props.c sim/dev/devcomm.c \
	sim/kernel/fiber.c sim/kernel/block.c sim/kernel/grid.c sim/kernel/launch.c sim/kernel/registry.c \
	sim/kernel/symbols.c sim/kernel/fault.c sim/kernel/printf.c sim/kernel/volatile.c \
	sim/transport_local.c
sim_libncclsim_core_la_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include $(JANSSON_CFLAGS) $(UCX_CFLAGS)
sim_libncclsim_core_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
sim_libncclsim_core_la_LIBADD = $(JANSSON_LIBS) $(BOOST_CONTEXT_LIBS) -ldl -lpthread -lm
# Stream capture and CUDA graphs (cuda), the kernels (kernel) and NCCL
# operations (core) that graph launches run again.
sim_libncclsim_core_la_SOURCES += sim/cuda/capture.c sim/cuda/graph.c sim/cuda/graph_node.c sim/cuda/graph_exec.c \
	sim/cuda/graph_mem.c \
	sim/cuda/graph_dot.c sim/kernel/graph.c sim/core/capture.c
noinst_HEADERS += sim/cuda/graph_internal.h

# ncclsim-nvcc: builds .cu programs for ncclsim (sim/nvcc/nvcc.h).
if BACKEND_SIM
if HAVE_LIBCLANG
bin_PROGRAMS += sim/ncclsim-nvcc
endif
endif
sim_ncclsim_nvcc_SOURCES = sim/nvcc/main.c sim/nvcc/options.c sim/nvcc/paths.c sim/nvcc/parse.c \
	sim/nvcc/rewrite.c sim/nvcc/ptx.c sim/nvcc/util.c
sim_ncclsim_nvcc_CPPFLAGS = -I$(top_builddir) $(LIBCLANG_CFLAGS) \
	-DNVCC_INSTALL_PREFIX='"$(prefix)"' -DNVCC_INSTALL_BINDIR='"$(bindir)"' \
	-DNVCC_INSTALL_INCLUDE='"$(ncclsimincludedir)"' -DNVCC_INSTALL_LIBDIR='"$(libdir)"' \
	-DNVCC_BUILD_INCLUDE='"$(abs_top_srcdir)/sim/include"' -DNVCC_BUILD_LIBDIR='"$(abs_top_builddir)/sim/.libs"' \
	-DNVCC_CLANG_RESOURCE='"$(NVCC_CLANG_RESOURCE)"' -DNVCC_CXX='"$(CXX)"' -DNVCC_SAN_LDFLAGS='"$(SAN_LDFLAGS)"'
sim_ncclsim_nvcc_LDADD = $(LIBCLANG_LIBS)

# ncclsim-trace-merge: one timeline from the per-process files of a job
# (NCCLSIM_TRACE with ranks as processes).
if BACKEND_SIM
if HAVE_JANSSON
bin_PROGRAMS += sim/ncclsim-trace-merge
endif
endif
sim_ncclsim_trace_merge_SOURCES = sim/trace_merge.c
sim_ncclsim_trace_merge_CPPFLAGS = -I$(top_builddir) $(JANSSON_CFLAGS)
sim_ncclsim_trace_merge_LDADD = $(JANSSON_LIBS)

# The binary drop-in: libnccl.so.2 and libcudart.so.13 under $(libdir)/ncclsim.
include $(srcdir)/sim/dropin/local.mk

# The device API (<nccl_device.h>, NCCL 2.30.7's layout: a face per API,
# impl/ behind it) and its kernel side in libncclsim (sim/dev/).
ncclsiminclude_HEADERS += sim/include/ncclsim_devcomm.h
ncclsimdeviceinclude_HEADERS += sim/include/nccl_device/utility.h sim/include/nccl_device/coop.h \
	sim/include/nccl_device/comm.h sim/include/nccl_device/ptr.h sim/include/nccl_device/lsa_barrier.h \
	sim/include/nccl_device/gin.h sim/include/nccl_device/gin_barrier.h sim/include/nccl_device/barrier.h \
	sim/include/nccl_device/ll_a2a.h sim/include/nccl_device/reduce_copy.h sim/include/nccl_device/net_device.h
ncclsimdeviceimplincludedir = $(ncclsimdeviceincludedir)/impl
ncclsimdeviceimplinclude_HEADERS = sim/include/nccl_device/impl/ncclsim__abi.h \
	sim/include/nccl_device/impl/core__types.h sim/include/nccl_device/impl/core__funcs.h \
	sim/include/nccl_device/impl/comm__types.h sim/include/nccl_device/impl/comm__funcs.h \
	sim/include/nccl_device/impl/ptr__types.h sim/include/nccl_device/impl/ptr__funcs.h \
	sim/include/nccl_device/impl/lsa_barrier__types.h sim/include/nccl_device/impl/lsa_barrier__funcs.h \
	sim/include/nccl_device/impl/gin__types.h sim/include/nccl_device/impl/gin__funcs.h \
	sim/include/nccl_device/impl/gin_barrier__types.h sim/include/nccl_device/impl/gin_barrier__funcs.h \
	sim/include/nccl_device/impl/barrier__types.h sim/include/nccl_device/impl/barrier__funcs.h \
	sim/include/nccl_device/impl/ll_a2a__types.h sim/include/nccl_device/impl/ll_a2a__funcs.h \
	sim/include/nccl_device/impl/reduce_copy__types.h sim/include/nccl_device/impl/reduce_copy__funcs.h
ncclsimdeviceginincludedir = $(ncclsimdeviceincludedir)/gin
ncclsimdevicegininclude_HEADERS = sim/include/nccl_device/gin/gin_device_api.h \
	sim/include/nccl_device/gin/gin_device_common.h sim/include/nccl_device/gin/gin_device_host_common.h
noinst_HEADERS += sim/rma/rma.h
sim_libncclsim_core_la_SOURCES += sim/rma/win_device.c sim/dev/require.c sim/dev/state.c sim/dev/window.c \
	sim/dev/wait.c sim/dev/gin.c sim/dev/gin_proxy.c sim/dev/gin_net.c sim/dev/coop.c sim/dev/trace.c
