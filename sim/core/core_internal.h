/* sim/core/core_internal.h — shared by the files of the engine (sim/core). */
#ifndef NCCLSIM_CORE_INTERNAL_H_
#define NCCLSIM_CORE_INTERNAL_H_

#include "core.h"

/* Launches a list of tasks that share one stream, as one op of the stream
 * (task.c). On failure every task is completed unrun. */
ncclResult_t sim_task_launch(sim_task *list);
/* Before the launches of one call or one group (tasks linked by next): the
 * per-communicator issue order across streams (NCCLSIM_COMM_ORDER). */
void sim_task_order(sim_task *tasks);
/* Releases a task and drops its comm's in-flight count (task.c). */
void sim_task_done(sim_task *t);
/* The tasks of a launch's op, or NULL for another op (task.c). */
sim_task *sim_launch_tasks(sim_op *op);

#endif
