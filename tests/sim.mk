# CMocka unit tests of ncclsim's internals. They link the simulator's
# convenience library statically, so sim/sim.h internals are reachable.
if BACKEND_SIM
if HAVE_CMOCKA
SIM_TESTS = tests/sim_p2p tests/sim_stream tests/sim_timeout tests/sim_rma
SIM_TESTS += tests/sim_coll tests/sim_small tests/sim_dtype tests/sim_reduce tests/sim_fault tests/sim_ft
SIM_TESTS += tests/sim_scale
SIM_TESTS += tests/sim_cuda tests/sim_comm tests/sim_util tests/sim_dev
SIM_TESTS += tests/sim_cuda_api
SIM_TESTS += tests/sim_rendezvous tests/sim_block tests/sim_procs
if HAVE_JANSSON
SIM_TESTS += tests/sim_trace
endif
check_PROGRAMS += $(SIM_TESTS)
TESTS += $(SIM_TESTS)
endif
endif
# tests/slow.h: the build's slowdown (configure's N4C_SLOWDOWN), by which
# the tests multiply their deadlines.
noinst_HEADERS += tests/slow.h tests/id_file.h tests/gate.h
SIM_TEST_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include -I$(top_srcdir)/sim $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS)
SIM_TEST_LDADD = sim/libncclsim_core.la $(CMOCKA_LIBS) $(JANSSON_LIBS) -lpthread -lm
tests_sim_p2p_SOURCES = tests/sim_p2p.c tests/sim_ranks.h
tests_sim_p2p_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_p2p_LDADD = $(SIM_TEST_LDADD)
tests_sim_stream_SOURCES = tests/sim_stream.c
tests_sim_stream_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_stream_LDADD = $(SIM_TEST_LDADD)
tests_sim_timeout_SOURCES = tests/sim_timeout.c tests/sim_ranks.h
tests_sim_timeout_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_timeout_LDADD = $(SIM_TEST_LDADD)
tests_sim_block_SOURCES = tests/sim_block.c tests/sim_ranks.h tests/capture.h
tests_sim_block_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_block_LDADD = $(SIM_TEST_LDADD)
tests_sim_procs_SOURCES = tests/sim_procs.c
tests_sim_procs_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_procs_LDADD = $(SIM_TEST_LDADD)
tests_sim_rendezvous_SOURCES = tests/sim_rendezvous.c
tests_sim_rendezvous_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_rendezvous_LDADD = $(SIM_TEST_LDADD)
tests_sim_trace_SOURCES = tests/sim_trace.c tests/sim_ranks.h
tests_sim_trace_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_trace_LDADD = $(SIM_TEST_LDADD)
tests_sim_rma_SOURCES = tests/sim_rma.c tests/sim_ranks.h
tests_sim_rma_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_rma_LDADD = $(SIM_TEST_LDADD)

# ncclsim's public headers (nccl.h, cuda_runtime_api.h, ncclsim.h,
# nccl_device.h) compile as C++, against the public library.
if BACKEND_SIM
if HAVE_CXX
check_PROGRAMS += tests/sim_cxx_headers
TESTS += tests/sim_cxx_headers
endif
endif
tests_sim_cxx_headers_SOURCES = tests/sim_cxx_headers.cc
tests_sim_cxx_headers_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_sim_cxx_headers_LDADD = sim/libncclsim.la
tests_sim_coll_SOURCES = tests/sim_coll.c tests/sim_ranks.h tests/capture.h
tests_sim_coll_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_coll_LDADD = $(SIM_TEST_LDADD)
tests_sim_small_SOURCES = tests/sim_small.c tests/sim_ranks.h
tests_sim_small_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_small_LDADD = $(SIM_TEST_LDADD)
tests_sim_dtype_SOURCES = tests/sim_dtype.c
tests_sim_dtype_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_dtype_LDADD = $(SIM_TEST_LDADD)
tests_sim_reduce_SOURCES = tests/sim_reduce.c
tests_sim_reduce_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_reduce_LDADD = $(SIM_TEST_LDADD)
tests_sim_ft_SOURCES = tests/sim_ft.c tests/sim_ranks.h tests/sim_comms.h
tests_sim_ft_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_ft_LDADD = $(SIM_TEST_LDADD)
tests_sim_fault_SOURCES = tests/sim_fault.c tests/sim_ranks.h
tests_sim_fault_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_fault_LDADD = $(SIM_TEST_LDADD)
tests_sim_scale_SOURCES = tests/sim_scale.c
tests_sim_scale_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_scale_LDADD = $(SIM_TEST_LDADD)

# Allocation-failure loop over nccl4c on ncclsim: links both
# convenience libraries, for n4c_test.h and ncclsimAllocFailAfter.
if BACKEND_SIM
if HAVE_CMOCKA
check_PROGRAMS += tests/fault_alloc
TESTS += tests/fault_alloc
endif
endif
tests_fault_alloc_SOURCES = tests/fault_alloc.c
tests_fault_alloc_CPPFLAGS = $(SIM_TEST_CPPFLAGS) -I$(top_srcdir)/lib
tests_fault_alloc_LDADD = lib/libnccl4c_static.la $(SIM_TEST_LDADD)
tests_sim_cuda_SOURCES = tests/sim_cuda.c tests/sim_ranks.h
tests_sim_cuda_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_cuda_LDADD = $(SIM_TEST_LDADD)
tests_sim_comm_SOURCES = tests/sim_comm.c tests/sim_ranks.h tests/sim_comms.h
tests_sim_comm_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_comm_LDADD = $(SIM_TEST_LDADD)
tests_sim_util_SOURCES = tests/sim_util.c tests/sim_ranks.h tests/capture.h
tests_sim_util_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_util_LDADD = $(SIM_TEST_LDADD)
tests_sim_dev_SOURCES = tests/sim_dev.c tests/sim_ranks.h
tests_sim_dev_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_dev_LDADD = $(SIM_TEST_LDADD)

# README.md's NCCLSIM_* table against the simulator's parameters, through
# ncclsimParamDump (the script reads README.md from $(srcdir)).
# libncclsim.so loads with dlopen: no STATIC_TLS flag (tests/dlopen-tls.sh).
if BACKEND_SIM
check_PROGRAMS += tests/sim_param_dump
TESTS += tests/readme-params.sh
TESTS += tests/dlopen-tls.sh
endif
EXTRA_DIST += tests/dlopen-tls.sh
# The engine's floors: no room of sim/ calls or includes a room above it.
if BACKEND_SIM
TESTS += tests/floors.sh
endif
EXTRA_DIST += tests/floors.sh tests/floors.py
tests_sim_param_dump_SOURCES = tests/sim_param_dump.c
tests_sim_param_dump_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_sim_param_dump_LDADD = sim/libncclsim.la
EXTRA_DIST += tests/readme-params.sh
# The flight recorder's dumps of tests that fail on purpose (run-test.sh).
CLEANFILES += tests/flight-*.json
CLEANFILES += tests/readme-params.dump tests/readme-params.want \
	tests/readme-params.got tests/readme-params.diff

# The two programs that measured real NCCL 2.30.7's host-blocking rules on
# GPUs (tests/nccl_2_30_7, unchanged), built against ncclsim as C++, and a
# script that checks they print what they printed there.
if BACKEND_SIM
if HAVE_CXX
check_PROGRAMS += tests/nccl_depth tests/nccl_block
TESTS += tests/nccl-blocking.sh
endif
endif
tests_nccl_depth_SOURCES = tests/nccl_2_30_7/depth.cc
tests_nccl_depth_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_nccl_depth_CXXFLAGS = $(AM_CXXFLAGS) -w
tests_nccl_depth_LDADD = sim/libncclsim.la -lpthread
tests_nccl_block_SOURCES = tests/nccl_2_30_7/block.cc
tests_nccl_block_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_nccl_block_CXXFLAGS = $(AM_CXXFLAGS) -w
tests_nccl_block_LDADD = sim/libncclsim.la -lpthread
EXTRA_DIST += tests/nccl-blocking.sh
# The one-rank program of the H100 run (tests/nccl_2_30_7: fp8 PreMulSum, stale window
# handles): kept compiling against ncclsim, not run (what it shows is real
# NCCL's behaviour).
if BACKEND_SIM
if HAVE_CXX
check_PROGRAMS += tests/nccl_onerank
endif
endif
tests_nccl_onerank_SOURCES = tests/nccl_2_30_7/onerank.cc
tests_nccl_onerank_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_nccl_onerank_LDADD = sim/libncclsim.la

# Ranks as processes write a timeline each; ncclsim-trace-merge joins them.
if BACKEND_SIM
if HAVE_CMOCKA
if HAVE_JANSSON
TESTS += tests/trace-merge.sh
endif
endif
endif
EXTRA_DIST += tests/trace-merge.sh

# The narrow-float headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h).
include $(srcdir)/tests/fp.mk
tests_sim_cuda_api_SOURCES = tests/sim_cuda_api.c
tests_sim_cuda_api_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_cuda_api_LDADD = $(SIM_TEST_LDADD)
# ncclsim's headers against CUDA's and NCCL's.
include $(srcdir)/tests/compat.mk
# CUDA kernels: .cu programs built by ncclsim-nvcc.
include $(srcdir)/tests/kernel.mk
include $(srcdir)/tests/devapi.mk

# Ranks on several simulated hosts, through UCX (sim/net); the bootstrap's
# refusals in one process (tests/sim_net).
if BACKEND_SIM
if HAVE_UCX
check_PROGRAMS += tests/hosts_rank tests/hosts_mgmt
TESTS += tests/sim-hosts.sh
if HAVE_CMOCKA
check_PROGRAMS += tests/sim_net
TESTS += tests/sim_net
endif
endif
endif
tests_sim_net_SOURCES = tests/sim_net.c
tests_sim_net_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_net_LDADD = $(SIM_TEST_LDADD)
tests_hosts_rank_SOURCES = tests/hosts_rank.c
tests_hosts_rank_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include
tests_hosts_rank_LDADD = sim/libncclsim.la -lpthread
# The management calls across hosts; linked with the simulator's internals,
# to count the bootstrap root's keys.
tests_hosts_mgmt_SOURCES = tests/hosts_mgmt.c
tests_hosts_mgmt_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include -I$(top_srcdir)/sim
tests_hosts_mgmt_LDADD = sim/libncclsim_core.la $(JANSSON_LIBS) -lpthread -lm
EXTRA_DIST += tests/sim-hosts.sh

# The CUDA runtime's stream-ordered memory, interprocess handles (ranks as
# processes) and host registration (sim/cuda/mempool.c, ipc.c,
# host_register.c, reset.c).
if BACKEND_SIM
if HAVE_CMOCKA
check_PROGRAMS += tests/sim_mempool tests/sim_hostmem tests/sim_ipc
TESTS += tests/sim_mempool tests/sim_hostmem tests/sim_ipc
endif
endif
tests_sim_mempool_SOURCES = tests/sim_mempool.c
tests_sim_mempool_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_mempool_LDADD = $(SIM_TEST_LDADD)
tests_sim_hostmem_SOURCES = tests/sim_hostmem.c
tests_sim_hostmem_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_hostmem_LDADD = $(SIM_TEST_LDADD)
tests_sim_ipc_SOURCES = tests/sim_ipc.c
tests_sim_ipc_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_ipc_LDADD = $(SIM_TEST_LDADD)

# Stream capture and CUDA graphs (sim/cuda/capture.c, graph*.c), with NCCL
# operations in them (sim/core/capture.c) and memory nodes (graph_mem.c).
if BACKEND_SIM
if HAVE_CMOCKA
check_PROGRAMS += tests/sim_graph tests/sim_graph_nccl tests/sim_graph_mem
TESTS += tests/sim_graph tests/sim_graph_nccl tests/sim_graph_mem
endif
endif
tests_sim_graph_SOURCES = tests/sim_graph.c
tests_sim_graph_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_graph_LDADD = $(SIM_TEST_LDADD)
tests_sim_graph_nccl_SOURCES = tests/sim_graph_nccl.c tests/sim_ranks.h
tests_sim_graph_nccl_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_graph_nccl_LDADD = $(SIM_TEST_LDADD)
tests_sim_graph_mem_SOURCES = tests/sim_graph_mem.c
tests_sim_graph_mem_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_graph_mem_LDADD = $(SIM_TEST_LDADD)
