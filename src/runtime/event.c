/* Events: status, waits, completion callbacks, user events, profiling times. */
#include <stdlib.h>

#include "check.h"
#include "runtime_impl.h"

fcl_status fcl_events_wait(cl_uint num_events, const cl_event *events) {
  if (num_events == 0) return FCL_OK;
  FCL_CHECK_NULL(events, 2);
  for (cl_uint i = 0; i < num_events; ++i) {
    cl_int s = CL_QUEUED;
    clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    if (s > CL_COMPLETE) { /* one not done: this wait holds the host */
      fcl__count_host_sync();
      break;
    }
  }
  cl_int err = clWaitForEvents(num_events, events);
  /* Some drivers return CL_SUCCESS for events that ended in error: look at each status. */
  for (cl_uint i = 0; i < num_events; ++i) {
    cl_int s = CL_COMPLETE;
    clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    if (s < 0)
      return fcl__error_set(FCL_ERR_OPENCL, s, __func__, __FILE__, __LINE__,
                            "event %u of %u ended in error %s (%d)", i, num_events,
                            fcl_cl_error_name(s), s);
  }
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clWaitForEvents(%u events)", num_events);
  return FCL_OK;
}

fcl_status fcl_event_status(cl_event event, cl_int *status) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(status, 2);
  FCL_CL_TRY(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, NULL),
             "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  return FCL_OK;
}

const char *fcl_event_status_name(cl_int status) {
  switch (status) {
    case CL_COMPLETE: return "complete";
    case CL_RUNNING: return "running";
    case CL_SUBMITTED: return "submitted";
    case CL_QUEUED: return "queued";
    default: return "error";
  }
}

typedef struct {
  fcl_event_callback fn;
  void *user;
} callback_box;

static void CL_CALLBACK event_trampoline(cl_event event, cl_int status, void *data) {
  callback_box box = *(callback_box *)data;
  free(data);
  box.fn(event, status, box.user);
}

fcl_status fcl_event_on_complete(cl_event event, fcl_event_callback callback, void *user) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(callback, 2);
  callback_box *box = malloc(sizeof *box);
  if (!box) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "event callback record");
  *box = (callback_box){callback, user};
  cl_int err = clSetEventCallback(event, CL_COMPLETE, event_trampoline, box);
  if (err != CL_SUCCESS) {
    free(box);
    return FCL_CL_ERROR(err, "clSetEventCallback");
  }
  return FCL_OK;
}

fcl_status fcl_user_event_create(const fcl_context *context, cl_event *event) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(event, 2);
  cl_int err;
  *event = clCreateUserEvent(context->cl, &err);
  if (err != CL_SUCCESS) {
    *event = NULL;
    return FCL_CL_ERROR(err, "clCreateUserEvent");
  }
  return FCL_OK;
}

fcl_status fcl_user_event_complete(cl_event event) {
  FCL_CHECK_NULL(event, 1);
  FCL_CL_TRY(clSetUserEventStatus(event, CL_COMPLETE), "clSetUserEventStatus(CL_COMPLETE)");
  return FCL_OK;
}

fcl_status fcl_user_event_fail(cl_event event, cl_int error) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_ARG(error < 0, 2, "error", "must be a negative error code");
  FCL_CL_TRY(clSetUserEventStatus(event, error), "clSetUserEventStatus(%d)", error);
  return FCL_OK;
}

fcl_status fcl_event_profile(cl_event event, fcl_event_times *times) {
  FCL_CHECK_NULL(event, 1);
  FCL_CHECK_NULL(times, 2);
  static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED,
                                            CL_PROFILING_COMMAND_SUBMIT, CL_PROFILING_COMMAND_START,
                                            CL_PROFILING_COMMAND_END};
  cl_ulong *out[4] = {&times->queued_ns, &times->submit_ns, &times->start_ns, &times->end_ns};
  /* NVIDIA's driver answers the profiling queries of a command not yet run with CL_SUCCESS
   * (and times that are not yet set): the status decides */
  cl_int status = CL_QUEUED;
  FCL_CL_TRY(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
             "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  if (status != CL_COMPLETE)
    return fcl__error_set(FCL_ERR_NOT_SUPPORTED, CL_PROFILING_INFO_NOT_AVAILABLE, __func__,
                          __FILE__, __LINE__,
                          "no profiling times: the event is not complete (status %d)", status);
  for (int i = 0; i < 4; ++i) {
    cl_int err = clGetEventProfilingInfo(event, what[i], sizeof(cl_ulong), out[i], NULL);
    if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
      return fcl__error_set(FCL_ERR_NOT_SUPPORTED, err, __func__, __FILE__, __LINE__,
                            "no profiling times: the event is not complete or its queue was "
                            "created without FCL_QUEUE_PROFILING");
    if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clGetEventProfilingInfo");
  }
  return FCL_OK;
}
