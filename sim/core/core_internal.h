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
/* Drops comm's in-flight count for a task that is not released (task.c:
 * a captured task, which a graph keeps instead). */
void sim_task_uncount(ncclComm_t comm);
/* Adds s to the streams comm launched on (group.c). */
ncclResult_t sim_comm_note_stream(ncclComm_t comm, sim_stream *s);
/* NCCL operations in graphs (capture.c). capture_tasks: a list of tasks,
 * each submitted on a capturing stream of one capture, becomes one node
 * of its graph (the list taken in any case). capture_group: at
 * ncclGroupEnd, takes out of *list the tasks of capturing streams and
 * makes a node of each capture's; ncclInvalidUsage if a communicator has
 * tasks both in and out of a capture, or in two (nothing taken then).
 * mixing: a task outside any capture of a communicator a graph launch
 * still has tasks of, refused when NCCL_GRAPH_MIXING_SUPPORT=0. */
ncclResult_t sim_capture_tasks(sim_task *list);
ncclResult_t sim_capture_group(sim_task **list);
/* Only sim_capture_group's rule on each communicator's captures (NCCL
 * applies it at the call, before the group's connections). */
ncclResult_t sim_capture_group_check(sim_task *list);
ncclResult_t sim_capture_mixing(sim_task *t);

#endif
