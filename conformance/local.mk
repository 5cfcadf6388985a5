# conformance/local.mk — n4c-conformance and its checks. Included by the top
# Makefile.am; appends only. The suite needs no CMocka: it is what cluster
# builds run (issue 8).
#
# A case is a line in conformance/cases.def and a function in
# conformance/case_<area>.c; a new area file goes into the SOURCES below.

bin_PROGRAMS += conformance/n4c-conformance
conformance_n4c_conformance_SOURCES = \
	conformance/case.h \
	conformance/runner.h \
	conformance/json.h \
	conformance/pattern.h \
	conformance/main.c \
	conformance/tap.c \
	conformance/cases.c \
	conformance/ctx.c \
	conformance/result.c \
	conformance/launch_threads.c \
	conformance/launch_mpi.c \
	conformance/report.c \
	conformance/json.c \
	conformance/pattern.c \
	conformance/case_life.c \
	conformance/case_err.c \
	conformance/case_p2p.c \
	conformance/case_rma.h conformance/case_res.c conformance/case_win.c \
	conformance/case_reg.c conformance/case_sig.c \
	conformance/case_dev.c conformance/case_iop.c \
	conformance/coll_check.h conformance/coll_check.c conformance/case_coll.c conformance/case_redop.c
# MPI_CFLAGS and MPI_LIBS are empty unless configure --with-mpi (HAVE_MPI).
conformance_n4c_conformance_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
conformance_n4c_conformance_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) $(MPI_LIBS) -lm
if ENABLE_COVERAGE
# The suite is not what make coverage measures, and at -O0 its pattern fills
# and checks made P2P-01 alone take minutes: optimise it (a later -O wins).
conformance_n4c_conformance_CFLAGS = $(AM_CFLAGS) -O2
endif
EXTRA_DIST += conformance/cases.def

# make check: the suite on ncclsim at 2, 4 and 8 ranks on one node, and at
# 4 ranks on 2 simulated nodes (NCCLSIM_RANKS_PER_NODE=2), through the TAP
# driver; each run leaves its JSON report in the build tree.
if BACKEND_SIM
TESTS += conformance/suite-n2.tap conformance/suite-n4.tap conformance/suite-n8.tap \
	conformance/suite-n4-2nodes.tap
endif
EXTRA_DIST += conformance/suite-n2.tap conformance/suite-n4.tap conformance/suite-n8.tap \
	conformance/suite-n4-2nodes.tap
CLEANFILES += conformance/report-n2.json conformance/report-n4.json \
	conformance/report-n8.json conformance/report-n4-2nodes.json

# The side-by-side table (--table), on two sample reports.
TESTS += conformance/table-check.sh
EXTRA_DIST += conformance/table-check.sh conformance/testdata/report-a.json \
	conformance/testdata/report-b.json conformance/testdata/table-expected.md
CLEANFILES += conformance/table-check.out conformance/table-check.bad.json
