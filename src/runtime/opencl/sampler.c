/* Samplers: created from a description, and their description read back. */
#include "../check.h"
#include "flowcl/image.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl_sampler_create(fcl_context *ctx, const fcl_sampler_desc *d, cl_sampler *out) {
  FCL_CHECK_NULL(ctx, 1);
  FCL_CHECK_NULL(d, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  FCL_CHECK_OPENCL(ctx->backend, 1, "ctx");
  if (d->filter != CL_FILTER_NEAREST && d->filter != CL_FILTER_LINEAR)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "sampler: filter 0x%x (CL_FILTER_NEAREST or "
                     "CL_FILTER_LINEAR)",
                     d->filter);
  switch (d->addressing) {
    case CL_ADDRESS_NONE:
    case CL_ADDRESS_CLAMP_TO_EDGE:
    case CL_ADDRESS_CLAMP: break;
    case CL_ADDRESS_REPEAT:
    case CL_ADDRESS_MIRRORED_REPEAT:
      if (!d->normalized)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "sampler: repeating addressing needs "
                                                   "normalized coordinates");
      break;
    default:
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "sampler: addressing mode 0x%x", d->addressing);
  }
  for (cl_uint i = 0; i < ctx->num_devices; ++i) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(fcl_context_device(ctx, i), &info));
    if (!info.image_support)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "samplers: device '%s' has no image support",
                       info.name);
  }
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                         d->normalized,
                                         CL_SAMPLER_ADDRESSING_MODE,
                                         d->addressing,
                                         CL_SAMPLER_FILTER_MODE,
                                         d->filter,
                                         0};
  cl_int err;
  *out = clCreateSamplerWithProperties(fcl__context_cl(ctx), props, &err);
  FCL_CL_TRY(err, "clCreateSamplerWithProperties");
  return FCL_OK;
}

fcl_status fcl_sampler_get_desc(cl_sampler sampler, fcl_sampler_desc *out) {
  FCL_CHECK_NULL(sampler, 1);
  FCL_CHECK_NULL(out, 2);
  cl_bool normalized = CL_FALSE;
  FCL_CL_TRY(
      clGetSamplerInfo(sampler, CL_SAMPLER_NORMALIZED_COORDS, sizeof normalized, &normalized, NULL),
      "clGetSamplerInfo");
  FCL_CL_TRY(clGetSamplerInfo(sampler, CL_SAMPLER_ADDRESSING_MODE, sizeof out->addressing,
                              &out->addressing, NULL),
             "clGetSamplerInfo");
  FCL_CL_TRY(
      clGetSamplerInfo(sampler, CL_SAMPLER_FILTER_MODE, sizeof out->filter, &out->filter, NULL),
      "clGetSamplerInfo");
  out->normalized = normalized == CL_TRUE;
  return FCL_OK;
}
