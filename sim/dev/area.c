/* sim/dev/area.c — placeholder area until the dev simulation lands. */
#include "../sim.h"

const sim_area sim_area_dev = {"dev", NULL, NULL, NULL};
