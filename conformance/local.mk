# conformance/local.mk — n4c-conformance and its checks. Included by the top
# Makefile.am; appends only. The suite needs no CMocka: it is what builds
# on GPU hosts run (conformance/gpu-run.sh).
#
# A case is a line in conformance/cases.def and a function in
# conformance/case_<area>.c; a new area file goes into the SOURCES below.

bin_PROGRAMS += conformance/n4c-conformance
conformance_n4c_conformance_SOURCES = \
	conformance/case.h \
	conformance/runner.h \
	conformance/text.h \
	conformance/pattern.h \
	conformance/main.c \
	conformance/tap.c \
	conformance/cases.c \
	conformance/ctx.c \
	conformance/result.c \
	conformance/launch_threads.c \
	conformance/launch_mpi.c \
	conformance/launch_procs.c \
	conformance/report.c \
	conformance/junit.c \
	conformance/table.c \
	conformance/text.c \
	conformance/pattern.c \
	conformance/case_life.c \
	conformance/case_err.c \
	conformance/case_p2p.c \
	conformance/case_rma.h conformance/case_res.c conformance/case_win.c \
	conformance/case_reg.c conformance/case_sig.c \
	conformance/case_dev.c conformance/case_iop.c conformance/case_block.c conformance/case_ft.c \
	conformance/coll_check.h conformance/coll_check.c conformance/case_coll.c conformance/case_redop.c \
	conformance/case_graph.c
# MPI_CFLAGS and MPI_LIBS are empty unless configure --with-mpi (HAVE_MPI).
# JANSSON_CFLAGS and JANSSON_LIBS are empty unless configure found jansson
# (HAVE_JANSSON): the JSON reports and --table.
conformance_n4c_conformance_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS) $(JANSSON_CFLAGS)
conformance_n4c_conformance_LDADD = lib/libnccl4c.la $(BACKEND_LIBS) $(MPI_LIBS) \
	$(JANSSON_LIBS) -lm
if ENABLE_COVERAGE
# The suite is not what make coverage measures, and at -O0 its pattern fills
# and checks made P2P-01 alone take minutes: optimise it (a later -O wins).
conformance_n4c_conformance_CFLAGS = $(AM_CFLAGS) -O2
endif
EXTRA_DIST += conformance/cases.def
# What GPU hosts take from the tarball: gpu-run.sh, which builds it there,
# and the probes, small programs built and run there by hand against real
# NCCL (docs/conformance/README.md lists what each showed). The top
# Makefile.am's distcheck-hook checks that they are in.
EXTRA_DIST += conformance/gpu-run.sh conformance/probes/ft_inflight.c conformance/probes/ft_probe.c \
	conformance/probes/sig_stress.c conformance/probes/win_unequal.c conformance/probes/graph_probe.c \
	conformance/probes/graph_depth.cu

# make check: the suite on ncclsim at 2, 4 and 8 ranks as threads on one
# node, at 4 ranks on 2 simulated nodes (NCCLSIM_RANKS_PER_NODE=2), at 2 and
# 4 ranks as processes (--procs), configured --with-mpi as MPI processes,
# and with UCX across 2 simulated hosts (one rank a process, and 2 rank
# threads a process), through the TAP driver; each run leaves its JSON and JUnit
# reports in the build tree.
if BACKEND_SIM
TESTS += conformance/suite-n2.tap conformance/suite-n4.tap conformance/suite-n8.tap \
	conformance/suite-n4-2nodes.tap conformance/suite-procs2.tap conformance/suite-procs4.tap
if HAVE_MPI
TESTS += conformance/suite-mpi2.tap conformance/suite-mpi4.tap
endif
if HAVE_UCX
TESTS += conformance/suite-hosts.tap conformance/suite-hosts-threads.tap
endif
endif
EXTRA_DIST += conformance/suite-n2.tap conformance/suite-n4.tap conformance/suite-n8.tap \
	conformance/suite-n4-2nodes.tap conformance/suite-procs2.tap conformance/suite-procs4.tap \
	conformance/suite-mpi.sh conformance/suite-mpi2.tap conformance/suite-mpi4.tap \
	conformance/suite-hosts.tap conformance/suite-hosts-threads.tap
CLEANFILES += conformance/report-n2.json conformance/report-n4.json \
	conformance/report-n8.json conformance/report-n2.xml conformance/report-n4.xml \
	conformance/report-n8.xml conformance/report-n4-2nodes.json conformance/report-n4-2nodes.xml \
	conformance/report-procs2.json conformance/report-procs2.xml \
	conformance/report-procs4.json conformance/report-procs4.xml \
	conformance/report-mpi2.json conformance/report-mpi2.xml conformance/report-mpi4.json \
	conformance/report-mpi4.xml conformance/report-hosts.json conformance/report-hosts.xml \
	conformance/report-hosts-threads.json conformance/report-hosts-threads.xml

# --procs itself: what it refuses, its header and reports, and its watchdog
# (a case past --timeout, a rank process killed mid-case, the runner killed
# mid-case); NCCLSIM_FAULT makes the hang. Works in conformance/procs-check.d
# and removes it when it passes.
if BACKEND_SIM
TESTS += conformance/procs-check.sh
endif
EXTRA_DIST += conformance/procs-check.sh

# The side-by-side table (--table, --html) on two sample reports and on the
# reports in docs/conformance/; what it refuses; the page in a browser
# (skipped without chromium). --junit against the JSON report of one run.
# The last three work in conformance/<name>.d and remove it when they pass.
TESTS += conformance/table-check.sh conformance/table-errors.sh conformance/html-check.sh \
	conformance/junit-check.sh
EXTRA_DIST += conformance/table-check.sh conformance/table-errors.sh conformance/html-check.sh \
	conformance/junit-check.sh conformance/testdata/report-a.json \
	conformance/testdata/report-b.json conformance/testdata/table-expected.md \
	conformance/testdata/table-expected.html
CLEANFILES += conformance/table-check.out.md conformance/table-check.out.html \
	conformance/table-check.out.docs.md conformance/table-check.out.docs.html

# The report writers on hostile text (CMocka): UTF-8 repair, XML escaping,
# the JSON report read back with jansson, the JUnit report.
if HAVE_CMOCKA
check_PROGRAMS += tests/conf_report.tap
TESTS += tests/conf_report.tap
endif
tests_conf_report_tap_SOURCES = tests/conf_report.c conformance/report.c conformance/junit.c \
	conformance/text.c conformance/result.c
tests_conf_report_tap_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tests_conf_report_tap_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_conf_report_tap_LDADD = $(CMOCKA_LIBS) $(JANSSON_LIBS) -lm
CLEANFILES += tests/conf_report.out.json tests/conf_report.out.xml

# The DEVK cases' kernels (conformance/devk.h): one .cu per area, built by
# ncclsim-nvcc on ncclsim and by nvcc (N4C_NVCC) on real NCCL into a module
# the suite loads at its first DEVK case (conformance/case_devk.c says why
# not linked in); without a CUDA compiler the cases skip.
DEVK_CU = conformance/devk_lsa.cu conformance/devk_gin.cu conformance/devk_ll.cu
conformance_n4c_conformance_SOURCES += conformance/case_devk.c conformance/devk.h
conformance_n4c_conformance_CPPFLAGS += -DN4C_DEVK_INSTALLED='"$(pkglibdir)"'
conformance_n4c_conformance_LDADD += -ldl
EXTRA_DIST += $(DEVK_CU) conformance/devk_util.h
if HAVE_DEVK
if BACKEND_SIM
# The build's sanitizers go to the host compiler the driver runs, as in
# tests/kernel.mk, so the kernels and libncclsim are instrumented alike.
DEVK_NVCC = $(top_builddir)/sim/ncclsim-nvcc -g -O1 -forward-unknown-to-host-compiler $(SAN_CFLAGS) $(SAN_LDFLAGS)
DEVK_DEPS = sim/ncclsim-nvcc sim/libncclsim.la $(ncclsiminclude_HEADERS) $(ncclsimdeviceinclude_HEADERS) \
	$(ncclsimdeviceimplinclude_HEADERS) $(ncclsimkernelinclude_HEADERS)
DEVK_LIBS =
else
DEVK_NVCC = $(N4C_NVCC) -Xcompiler -fPIC $(BACKEND_CPPFLAGS)
DEVK_DEPS =
DEVK_LIBS = $(DEVK_NVCC_LIBS)
endif
devkdir = $(pkglibdir)
devk_DATA = conformance/n4c-devk.so
check_DATA = conformance/n4c-devk.so
CLEANFILES += conformance/n4c-devk.so
DEVK_SRC = $(srcdir)/conformance/devk_lsa.cu $(srcdir)/conformance/devk_gin.cu $(srcdir)/conformance/devk_ll.cu
conformance/n4c-devk.so: $(DEVK_SRC) $(srcdir)/conformance/devk.h $(srcdir)/conformance/devk_util.h $(DEVK_DEPS)
	$(AM_V_GEN)$(DEVK_NVCC) -std=c++17 -shared -I$(top_srcdir)/conformance -o $@ $(DEVK_SRC) $(DEVK_LIBS)
endif
