# examples/local.mk — example programs, built and run by make check (exit 77
# means skipped). Included by the top Makefile.am; appends only.

# Two ranks allreduce a DLPack tensor, then put_signal into it.
check_PROGRAMS += examples/dlpack_allreduce
TESTS += examples/dlpack_allreduce
examples_dlpack_allreduce_SOURCES = examples/dlpack_allreduce.c
examples_dlpack_allreduce_LDADD = lib/libnccl4c.la $(BACKEND_LIBS)
