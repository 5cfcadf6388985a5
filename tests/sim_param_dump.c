/* tests/sim_param_dump.c — prints every ncclsim parameter with its default
 * (ncclsimParamDump), for tests/readme-params.sh. */
#include <stdio.h>
#include <ncclsim.h>

int main(void) {
  ncclsimParamDump(stdout);
  return fflush(stdout) == 0 ? 0 : 1;
}
