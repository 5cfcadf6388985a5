# Benchmarks: `make bench` builds them; each prints key=value lines.
# They use nccl4c and the NCCL/CUDA host APIs, so they build on either
# backend.
BENCH_PROGRAMS += bench/p2p_bw
bench_p2p_bw_SOURCES = bench/p2p_bw.c
bench_p2p_bw_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) -lpthread
