# Benchmarks: `make bench` builds them; each prints key=value lines.
# They use only the NCCL and CUDA host APIs (or nccl4c), so they build on
# either backend.
BENCH_PROGRAMS += bench/p2p_bw
bench_p2p_bw_SOURCES = bench/p2p_bw.c
bench_p2p_bw_LDADD = $(BACKEND_LIBS)
