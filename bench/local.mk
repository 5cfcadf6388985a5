# Benchmarks: `make bench` builds them; each prints key=value lines.
# They use nccl4c and the NCCL/CUDA host APIs, so they build on either
# backend.
BENCH_PROGRAMS += bench/p2p_bw
bench_p2p_bw_SOURCES = bench/p2p_bw.c
bench_p2p_bw_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) -lpthread

BENCH_PROGRAMS += bench/signal_latency bench/put_bw
bench_signal_latency_SOURCES = bench/signal_latency.c
bench_signal_latency_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) -lpthread
bench_put_bw_SOURCES = bench/put_bw.c
bench_put_bw_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) -lpthread
BENCH_PROGRAMS += bench/allreduce_bw
bench_allreduce_bw_SOURCES = bench/allreduce_bw.c
bench_allreduce_bw_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) -lpthread
noinst_HEADERS += bench/bench.h
# NCCL operations replayed by CUDA graphs against direct calls, and a
# 1000-node graph's instantiation.
BENCH_PROGRAMS += bench/graph_replay
bench_graph_replay_SOURCES = bench/graph_replay.c
bench_graph_replay_LDADD = $(BACKEND_LIBS) -lpthread
# Collectives against the all-core streaming bandwidth (the roofline).
BENCH_PROGRAMS += bench/coll_roofline
bench_coll_roofline_SOURCES = bench/coll_roofline.c
bench_coll_roofline_LDADD = $(BACKEND_LIBS) -lpthread

# Ranks as processes (ncclsimProcessesInit) are ncclsim's alone.
if BACKEND_SIM
BENCH_PROGRAMS += bench/procs_bw
bench_procs_bw_SOURCES = bench/procs_bw.c
bench_procs_bw_LDADD = $(BACKEND_LIBS) -lpthread
endif

# Ranks on two simulated hosts, through UCX (sim/net): bench/hosts-vs-ucx.sh.
if HAVE_UCX
BENCH_PROGRAMS += bench/hosts_bw
endif
bench_hosts_bw_SOURCES = bench/hosts_bw.c
bench_hosts_bw_LDADD = $(BACKEND_LIBS) -lpthread

# The Open MPI peer of procs_bw (configure --with-mpi): mpirun -np 2 / -np 4.
if HAVE_MPI
BENCH_PROGRAMS += bench/mpi_peer
bench_mpi_peer_SOURCES = bench/mpi_peer.c
bench_mpi_peer_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
bench_mpi_peer_LDADD = $(MPI_LIBS)
endif
# sh bench/procs-vs-mpi.sh: procs_bw against mpi_peer, rounds back to back.
EXTRA_DIST += bench/procs-vs-mpi.sh bench/trace-cost.sh bench/latency-vs-mpi.sh bench/hosts-vs-ucx.sh

# CUDA kernels on ncclsim (bench/kernels.cu, built by the tree's
# ncclsim-nvcc): launch, __syncthreads, a copy kernel and the memory of a
# kernel's threads, each against its peer in the same run.
if BACKEND_SIM
if HAVE_LIBCLANG
BENCH_CU += bench/kernels
endif
endif
EXTRA_DIST += bench/kernels.cu
CLEANFILES += bench/kernels
bench/kernels: $(srcdir)/bench/kernels.cu sim/ncclsim-nvcc sim/libncclsim.la $(ncclsimkernelinclude_HEADERS)
	$(AM_V_GEN)$(top_builddir)/sim/ncclsim-nvcc -O2 -o $@ $(srcdir)/bench/kernels.cu \
	  -forward-unknown-to-host-compiler $(SAN_CFLAGS) $(SAN_LDFLAGS) -lboost_context

# NCCL's device API on ncclsim (bench/devapi.cu, built by the tree's
# ncclsim-nvcc): an LSA barrier in a kernel against the host's signal
# ping-pong, GIN put bandwidth against memcpy, the LSA allreduce kernel
# against a C loop, each against its peer in the same run.
if BACKEND_SIM
if HAVE_LIBCLANG
BENCH_CU += bench/devapi
endif
endif
EXTRA_DIST += bench/devapi.cu
CLEANFILES += bench/devapi
bench/devapi: $(srcdir)/bench/devapi.cu sim/ncclsim-nvcc sim/libncclsim.la $(ncclsimkernelinclude_HEADERS) \
	$(ncclsimdeviceinclude_HEADERS) $(ncclsimdeviceimplinclude_HEADERS)
	$(AM_V_GEN)$(top_builddir)/sim/ncclsim-nvcc -O2 -o $@ $(srcdir)/bench/devapi.cu \
	  -forward-unknown-to-host-compiler $(SAN_CFLAGS) $(SAN_LDFLAGS)
