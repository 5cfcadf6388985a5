/* sim/coll/area.c — placeholder area until the coll simulation lands. */
#include "../sim.h"

const sim_area sim_area_coll = {"coll", NULL, NULL, NULL};
