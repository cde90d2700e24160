/* The transport table and the one choice of a transport (FLOWCL_TRANSPORT) for every exchange. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

const fcl__transport_ops fcl__transport_staged = {"staged", &fcl__alltoall_staged,
                                                  &fcl__p2p_staged};
const fcl__transport_ops fcl__transport_mpi = {"mpi", &fcl__alltoall_mpi, &fcl__p2p_mpi};
const fcl__transport_ops fcl__transport_device = {"device", &fcl__alltoall_device,
                                                  &fcl__p2p_device};

const char *fcl__transport_name(fcl__transport t) {
  switch (t) {
    case FCL__TRANSPORT_AUTO: return "auto";
    case FCL__TRANSPORT_DEVICE: return "device";
    case FCL__TRANSPORT_STAGED: return "staged";
    case FCL__TRANSPORT_MPI: return "mpi";
  }
  return "?";
}

fcl_status fcl__transport_from_env(fcl__transport *out) {
  const char *v = getenv("FLOWCL_TRANSPORT");
  *out = FCL__TRANSPORT_AUTO;
  if (!v || !*v) return FCL_OK;
  for (int t = FCL__TRANSPORT_AUTO; t <= FCL__TRANSPORT_MPI; ++t)
    if (strcmp(v, fcl__transport_name((fcl__transport)t)) == 0) {
      *out = (fcl__transport)t;
      return FCL_OK;
    }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "FLOWCL_TRANSPORT='%s': unknown transport (auto, device, staged, mpi)", v);
}

/* One transport tried in turn: FCL_ERR_NOT_SUPPORTED is logged and cleared for the next. */
static fcl_status try_or_log(const char *what, fcl__transport_try try_, void *object,
                             const fcl__transport_ops *t, const char *next, bool *unsupported) {
  fcl_status st = try_(object, t);
  *unsupported = st == FCL_ERR_NOT_SUPPORTED;
  if (*unsupported) {
    fcl_log(FCL_LOG_INFO, "%s: %s transport unavailable (%s); trying %s", what, t->name,
            fcl_last_error(), next);
    fcl_clear_error();
  }
  return st;
}

fcl_status fcl__transport_select(fcl__transport kind, const char *what, fcl__transport_try try_,
                                 void *object) {
  /* a transport asked by name reports why it cannot run; auto falls through to the next */
  switch (kind) {
    case FCL__TRANSPORT_DEVICE: return try_(object, &fcl__transport_device);
    case FCL__TRANSPORT_STAGED: return try_(object, &fcl__transport_staged);
    case FCL__TRANSPORT_MPI: return try_(object, &fcl__transport_mpi);
    case FCL__TRANSPORT_AUTO: break;
  }
  bool unsupported;
  fcl_status st = try_or_log(what, try_, object, &fcl__transport_device, "staged", &unsupported);
  if (!unsupported) return st;
  st = try_or_log(what, try_, object, &fcl__transport_staged, "mpi", &unsupported);
  if (!unsupported) return st;
  return try_(object, &fcl__transport_mpi);
}
