/* The transport table and the one choice of a transport (FLOWCL_TRANSPORT) for every exchange. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

const fcl__transport_ops fcl__transport_staged = {"staged", &fcl__alltoall_staged,
                                                  &fcl__p2p_staged};
const fcl__transport_ops fcl__transport_mpi = {"mpi", &fcl__alltoall_mpi, &fcl__p2p_mpi};

const char *fcl__transport_name(fcl__transport t) {
  switch (t) {
    case FCL__TRANSPORT_AUTO: return "auto";
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
  if (strcmp(v, "device") == 0)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "FLOWCL_TRANSPORT=device: no device-direct transport "
                     "is built (the OpenCL drivers here offer no peer copy or importable "
                     "memory); use auto, staged or mpi");
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "FLOWCL_TRANSPORT='%s': unknown transport (auto, "
                   "staged, mpi)",
                   v);
}

fcl_status fcl__transport_select(fcl__transport kind, const char *what, fcl__transport_try try_,
                                 void *object) {
  if (kind != FCL__TRANSPORT_MPI) {
    fcl_status st = try_(object, &fcl__transport_staged);
    /* auto falls back to plain MPI; staged asked by name reports why it cannot run */
    if (st != FCL_ERR_NOT_SUPPORTED || kind == FCL__TRANSPORT_STAGED) return st;
    fcl_log(FCL_LOG_INFO, "%s: staged transport unavailable (%s); using mpi", what,
            fcl_last_error());
    fcl_clear_error();
  }
  return try_(object, &fcl__transport_mpi);
}
