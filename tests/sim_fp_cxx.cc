// tests/sim_fp_cxx.cc — tests/sim_fp.c built as C++, with its C++ tests
// (tests/sim_fp_cxx.h): the headers must work alike in both languages.
#include "sim_fp.c"
