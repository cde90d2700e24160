/* The OpenCL backend's events: native wait lists and events of its enqueues, waits, status,
 * callbacks, user events, profiling times; and fcl_event_cl / fcl_event_wrap. */
#include <stdlib.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl__cl_sync_waits(fcl__cl_sync *s, fcl_event *const *wait) {
  cl_event *list = s->inline_list;
  if (s->n > sizeof s->inline_list / sizeof *s->inline_list) {
    list = s->heap = malloc(s->n * sizeof *list);
    if (!list) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "a wait list of %u events", s->n);
  }
  for (unsigned i = 0; i < s->n; ++i) list[i] = wait[i]->native;
  s->list = list;
  return FCL_OK;
}

cl_int fcl__cl_sync_wrap(fcl__cl_sync *s) {
  fcl_event *e = malloc(sizeof *e);
  if (!e) {
    clReleaseEvent(s->ev);
    return CL_OUT_OF_HOST_MEMORY;
  }
  e->backend = &fcl__opencl_backend;
  atomic_init(&e->refs, 1);
  e->native = s->ev;
  *s->out = e;
  return CL_SUCCESS;
}

void fcl__opencl_event_release(fcl_event *e) { clReleaseEvent(e->native); }

static cl_int cl_status_of(cl_event ev, cl_int *status) {
  return clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, NULL);
}

fcl_status fcl__opencl_events_wait(unsigned n, fcl_event *const *events) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, n, events, NULL));
  cl_int err = clWaitForEvents(n, s.list);
  /* Some drivers return CL_SUCCESS for events that ended in error: look at each status. */
  for (unsigned i = 0; i < n; ++i) {
    cl_int st = CL_COMPLETE;
    cl_status_of(s.list[i], &st);
    if (st < 0) {
      fcl__cl_sync_end(&s, CL_SUCCESS);
      return fcl__error_set(FCL_ERR_OPENCL, st, __func__, __FILE__, __LINE__,
                            "event %u of %u ended in error %s (%d)", i, n, fcl_cl_error_name(st),
                            st);
    }
  }
  fcl__cl_sync_end(&s, CL_SUCCESS);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clWaitForEvents(%u events)", n);
  return FCL_OK;
}

/* OpenCL's CL_COMPLETE, CL_RUNNING, CL_SUBMITTED and CL_QUEUED are FCL_EVENT_*'s values. */
_Static_assert(CL_COMPLETE == FCL_EVENT_COMPLETE && CL_RUNNING == FCL_EVENT_RUNNING &&
                   CL_SUBMITTED == FCL_EVENT_SUBMITTED && CL_QUEUED == FCL_EVENT_QUEUED,
               "OpenCL's command states are flowcl's");

fcl_status fcl__opencl_event_status(const fcl_event *e, int *status) {
  cl_int st = CL_QUEUED;
  FCL_CL_TRY(cl_status_of(e->native, &st), "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  *status = st;
  return FCL_OK;
}

typedef struct {
  fcl_event *event; /* a reference kept until the callback has run */
  fcl_event_callback fn;
  void *user;
} callback_box;

static void CL_CALLBACK event_trampoline(cl_event native, cl_int status, void *data) {
  (void)native;
  callback_box box = *(callback_box *)data;
  free(data);
  box.fn(box.event, status, box.user);
  fcl_event_release(&box.event);
}

fcl_status fcl__opencl_event_on_complete(fcl_event *e, fcl_event_callback callback, void *user) {
  callback_box *box = malloc(sizeof *box);
  if (!box) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "event callback record");
  *box = (callback_box){fcl_event_retain(e), callback, user};
  cl_int err = clSetEventCallback(e->native, CL_COMPLETE, event_trampoline, box);
  if (err != CL_SUCCESS) {
    fcl_event_release(&box->event);
    free(box);
    return FCL_CL_ERROR(err, "clSetEventCallback");
  }
  return FCL_OK;
}

fcl_status fcl__opencl_user_event_create(const fcl_context *context, fcl_event **event) {
  cl_int err;
  cl_event native = clCreateUserEvent(fcl__context_cl(context), &err);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateUserEvent");
  return fcl__event_new(&fcl__opencl_backend, native, event);
}

fcl_status fcl__opencl_user_event_set(fcl_event *e, int status) {
  FCL_CL_TRY(clSetUserEventStatus(e->native, status), "clSetUserEventStatus(%d)", status);
  return FCL_OK;
}

fcl_status fcl__opencl_event_profile(const fcl_event *e, fcl_event_times *times) {
  static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED,
                                            CL_PROFILING_COMMAND_SUBMIT, CL_PROFILING_COMMAND_START,
                                            CL_PROFILING_COMMAND_END};
  cl_ulong t[4];
  /* NVIDIA's driver answers the profiling queries of a command not yet run with CL_SUCCESS
   * (and times that are not yet set): the status decides */
  cl_int status = CL_QUEUED;
  FCL_CL_TRY(cl_status_of(e->native, &status), "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  if (status != CL_COMPLETE)
    return fcl__error_set(FCL_ERR_NOT_SUPPORTED, CL_PROFILING_INFO_NOT_AVAILABLE, __func__,
                          __FILE__, __LINE__,
                          "no profiling times: the event is not complete (status %d)", status);
  for (int i = 0; i < 4; ++i) {
    cl_int err = clGetEventProfilingInfo(e->native, what[i], sizeof t[i], &t[i], NULL);
    if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
      return fcl__error_set(FCL_ERR_NOT_SUPPORTED, err, __func__, __FILE__, __LINE__,
                            "no profiling times: the event is not complete or its queue was "
                            "created without FCL_QUEUE_PROFILING");
    if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clGetEventProfilingInfo");
  }
  *times = (fcl_event_times){t[0], t[1], t[2], t[3]};
  return FCL_OK;
}

cl_event fcl_event_cl(const fcl_event *event) {
  return event && event->backend == &fcl__opencl_backend ? event->native : NULL;
}

fcl_status fcl_event_wrap(cl_event native, fcl_event **event) {
  FCL_CHECK_NULL(native, 1);
  FCL_CHECK_NULL(event, 2);
  *event = NULL;
  FCL_CL_TRY(clRetainEvent(native), "clRetainEvent");
  return fcl__event_new(&fcl__opencl_backend, native, event);
}
