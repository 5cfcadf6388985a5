# CMocka unit tests of ncclsim's internals. They link the simulator's
# convenience library statically, so sim/sim.h internals are reachable.
if BACKEND_SIM
if HAVE_CMOCKA
SIM_TESTS = tests/sim_p2p tests/sim_stream tests/sim_timeout
check_PROGRAMS += $(SIM_TESTS)
TESTS += $(SIM_TESTS)
endif
endif
SIM_TEST_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/sim/include -I$(top_srcdir)/sim $(CMOCKA_CFLAGS)
SIM_TEST_LDADD = sim/libncclsim_core.la $(CMOCKA_LIBS) -lpthread -lm
tests_sim_p2p_SOURCES = tests/sim_p2p.c tests/sim_ranks.h
tests_sim_p2p_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_p2p_LDADD = $(SIM_TEST_LDADD)
tests_sim_stream_SOURCES = tests/sim_stream.c
tests_sim_stream_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_stream_LDADD = $(SIM_TEST_LDADD)
tests_sim_timeout_SOURCES = tests/sim_timeout.c tests/sim_ranks.h
tests_sim_timeout_CPPFLAGS = $(SIM_TEST_CPPFLAGS)
tests_sim_timeout_LDADD = $(SIM_TEST_LDADD)
