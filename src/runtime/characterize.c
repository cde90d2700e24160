#define _GNU_SOURCE /* strcasestr */
/* Device characterization: SIMD width, local-memory banks, usable local memory, fast-math
 * options, NVIDIA compute capability, double support, bank-conflict analysis. The numbers for
 * NVIDIA and AMD GPUs follow their programming guides (32 banks of 4-byte words since NVIDIA
 * compute capability 2.0; 32 banks on AMD GCN). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "runtime_impl.h"

static bool is_nvidia(const fcl_device_info *d) {
  return (d->type & FCL_DEVICE_GPU) && (strcasestr(d->vendor, "nvidia") != NULL);
}
static bool is_amd_gpu(const fcl_device_info *d) {
  return (d->type & FCL_DEVICE_GPU) &&
         (strcasestr(d->vendor, "advanced micro") || strcasestr(d->vendor, "amd"));
}

/* Preferred work-group multiple of a trivial kernel: the SIMD width for GPUs we know nothing of. */
static fcl_status probe_simd(fcl_device *device, unsigned *out) {
  static const char *src =
      "FCL_KERNEL void fcl_probe(FCL_GLOBAL float *x) { x[get_global_id(0)] = 0; }";
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_kernel *k = NULL;
  fcl_kernel_work_group_info wg;
  fcl_status st = fcl_context_create(1, &device, &ctx);
  if (st == FCL_OK) st = fcl_program_create_source(ctx, src, "SIMD-width probe", &prog);
  if (st == FCL_OK) st = fcl_program_build(prog, NULL);
  if (st == FCL_OK) st = fcl_kernel_create(prog, "fcl_probe", &k);
  if (st == FCL_OK) st = fcl_kernel_get_work_group_info(k, device, &wg);
  if (st == FCL_OK) *out = (unsigned)wg.preferred_work_group_size_multiple;
  fcl_kernel_destroy(&k);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
  return st;
}

static fcl_status simd_size(const fcl_device_info *d, const fcl__device_vendor *v, size_t type_size,
                            unsigned *out) {
  if (is_nvidia(d) || is_amd_gpu(d)) { /* the vendor's own figure, else its guide's */
    *out = v->simd_width ? v->simd_width : is_nvidia(d) ? 32 : 64;
    return FCL_OK;
  }
  if (d->type & FCL_DEVICE_CPU) {
    /* Lanes of the native vector unit for this element size. */
    int idx = type_size == 1 ? 0 : type_size == 2 ? 1 : type_size == 4 ? 4 : 5;
    *out = d->native_vector_width[idx] ? d->native_vector_width[idx] : 1;
    return FCL_OK;
  }
  return probe_simd(d->id, out);
}

fcl_status fcl_device_simd_group_size(const fcl_device *device, size_t type_size, unsigned *out) {
  FCL_CHECK_NULL(device, 1);
  FCL_CHECK_ARG(type_size == 1 || type_size == 2 || type_size == 4 || type_size == 8, 2,
                "type_size", "must be 1, 2, 4 or 8");
  FCL_CHECK_NULL(out, 3);
  fcl_device_info d;
  fcl__device_vendor v;
  FCL_TRY(fcl_device_get_info(device, &d));
  FCL_TRY(device->backend->device_vendor(device, &d, &v));
  return simd_size(&d, &v, type_size, out);
}

fcl_status fcl_device_characterize(const fcl_device *device, fcl_device_characterization *out) {
  FCL_CHECK_NULL(device, 1);
  FCL_CHECK_NULL(out, 2);
  memset(out, 0, sizeof *out);
  fcl_device_info d;
  fcl__device_vendor v;
  FCL_TRY(fcl_device_get_info(device, &d));
  FCL_TRY(device->backend->device_vendor(device, &d, &v));
  FCL_TRY(simd_size(&d, &v, 4, &out->simd_group_size));
  out->nv_compute_capability_major = is_nvidia(&d) ? v.cc_major : -1;
  out->nv_compute_capability_minor = is_nvidia(&d) ? v.cc_minor : -1;
  bool banked = d.local_mem_dedicated;
  bool old_nv = is_nvidia(&d) && out->nv_compute_capability_major >= 0 &&
                out->nv_compute_capability_major < 2;
  out->local_mem_bank_count = !banked ? 0 : old_nv ? 16 : 32;
  out->local_mem_access_granularity = 4;
  out->simultaneous_local_access = !banked ? 1 : old_nv ? 16 : 32;
  /* Before compute capability 2.0, NVIDIA passed kernel arguments in shared memory. */
  out->usable_local_mem_size = d.local_mem_size > 256 && old_nv ? d.local_mem_size - 256
                                                                : d.local_mem_size;
  snprintf(out->fast_inaccurate_options, sizeof out->fast_inaccurate_options,
           "-cl-mad-enable -cl-fast-relaxed-math");
  out->double_support = fcl_device_has_extension(&d, "cl_khr_fp64") ||
                        fcl_device_has_extension(&d, "cl_amd_fp64") || d.double_fp_config != 0;
  return FCL_OK;
}

/* Distinct-word count on the busiest bank when consecutive work-items step along one axis. */
static unsigned axis_conflicts(const fcl_device_characterization *c, size_t itemsize, size_t stride,
                               size_t extent, unsigned *worst_bank) {
  enum { MAX_ITEMS = 64, MAX_WORDS = MAX_ITEMS * 4 };
  size_t items = c->simultaneous_local_access < extent ? c->simultaneous_local_access : extent;
  if (items > MAX_ITEMS) items = MAX_ITEMS;
  size_t gran = c->local_mem_access_granularity, banks = c->local_mem_bank_count;
  size_t words[MAX_WORDS];
  size_t nwords = 0;
  for (size_t w = 0; w < items; ++w) {
    size_t first = w * stride / gran, last = (w * stride + itemsize - 1) / gran;
    for (size_t word = first; word <= last && nwords < MAX_WORDS; ++word) {
      bool seen = false; /* the same word read by several work-items is a broadcast */
      for (size_t i = 0; i < nwords && !seen; ++i) seen = words[i] == word;
      if (!seen) words[nwords++] = word;
    }
  }
  unsigned worst = 0;
  for (size_t b = 0; b < banks; ++b) {
    unsigned count = 0;
    for (size_t i = 0; i < nwords; ++i) count += words[i] % banks == b;
    if (count > worst) {
      worst = count;
      *worst_bank = (unsigned)b;
    }
  }
  return worst ? worst : 1;
}

fcl_status fcl_local_access_conflicts(const fcl_device_characterization *device, size_t itemsize,
                                      int ndim, const size_t *shape, const size_t *stored_shape,
                                      unsigned *multiplicity, char *explanation,
                                      size_t explanation_size) {
  FCL_CHECK_NULL(device, 1);
  FCL_CHECK_ARG(itemsize > 0, 2, "itemsize", "must be > 0");
  FCL_CHECK_ARG(ndim >= 1 && ndim <= 8, 3, "ndim", "must be between 1 and 8");
  FCL_CHECK_NULL(shape, 4);
  FCL_CHECK_NULL(multiplicity, 6);
  if (!stored_shape) stored_shape = shape;
  for (int i = 0; i < ndim; ++i)
    if (stored_shape[i] < shape[i] || shape[i] == 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 5 (stored_shape): axis %d stores %zu "
                       "elements, fewer than shape's %zu (or shape is 0)",
                       i, stored_shape[i], shape[i]);
  char local_buf[2];
  if (!explanation || explanation_size == 0) {
    explanation = local_buf;
    explanation_size = sizeof local_buf;
  }
  *multiplicity = 1;
  if (device->local_mem_bank_count == 0 || device->local_mem_access_granularity == 0) {
    snprintf(explanation, explanation_size,
             "conflict free: the device's local memory is not banked");
    return FCL_OK;
  }
  size_t stride = itemsize;
  int worst_axis = ndim - 1;
  unsigned worst_bank = 0;
  size_t worst_stride = itemsize;
  for (int ax = ndim - 1; ax >= 0; --ax) {
    unsigned bank = 0;
    unsigned m = axis_conflicts(device, itemsize, stride, shape[ax], &bank);
    if (m > *multiplicity) {
      *multiplicity = m;
      worst_axis = ax;
      worst_bank = bank;
      worst_stride = stride;
    }
    stride *= stored_shape[ax];
  }
  if (*multiplicity == 1)
    snprintf(explanation, explanation_size, "conflict free along every axis (%u banks of %u bytes)",
             device->local_mem_bank_count, device->local_mem_access_granularity);
  else
    snprintf(explanation, explanation_size,
             "%u-way bank conflict when work-items step along axis %d (stride %zu bytes): bank %u "
             "serves %u distinct words (%u banks of %u bytes); pad that axis's stored extent",
             *multiplicity, worst_axis, worst_stride, worst_bank, *multiplicity,
             device->local_mem_bank_count, device->local_mem_access_granularity);
  return FCL_OK;
}
