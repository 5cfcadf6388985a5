/* sim/rma/area.c — placeholder area until the rma simulation lands. */
#include "../sim.h"

const sim_area sim_area_rma = {"rma", NULL, NULL, NULL};
