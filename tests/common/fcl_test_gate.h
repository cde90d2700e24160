/* Holding the device back: a user event that a second thread completes, or fails, after a
 * delay, optionally as a barrier on a queue. What is enqueued behind it waits on the device
 * while the host goes on, so the host runs ahead of the device (as on PoCL, whose host often
 * enqueues a whole run before the device has finished its first command): a check that polls
 * the device instead of waiting for it then finds nothing and stays silent. */
#ifndef FLOWCL_TEST_GATE_H
#define FLOWCL_TEST_GATE_H

#include "fcl_test.h"

typedef struct fcl_test_gate fcl_test_gate;

/* A user event of ctx, behind a barrier on queue (NULL: none, for wait lists only), that a
 * thread sets to status (FCL_EVENT_COMPLETE, or a negative code: a failure) after seconds.
 * NULL when it cannot be made (a test failure is recorded). */
fcl_test_gate *fcl_test_gate_hold(fcl_context *ctx, fcl_queue *queue, double seconds, int status);
/* The user event (owned by the gate). */
fcl_event *fcl_test_gate_event(const fcl_test_gate *gate);
/* Whether the thread has set the event: true just before it does, so a wait that the event
 * ends sees true, and a call that returns while it is false did not wait for the device. */
bool fcl_test_gate_opened(fcl_test_gate *gate);
/* Wait for the thread, release the event and free the gate; accepts NULL; sets *gate = NULL. */
void fcl_test_gate_join(fcl_test_gate **gate);

#endif
