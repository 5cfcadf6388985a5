/* cases.c — the case table, built from cases.def. */
#include "config.h"

#include "runner.h"

const struct n4c_case n4c_cases[] = {
#define N4C_CASE(sym, id, claim) { id, claim, case_##sym },
#include "cases.def"
#undef N4C_CASE
};

const size_t n4c_ncases = sizeof n4c_cases / sizeof n4c_cases[0];
