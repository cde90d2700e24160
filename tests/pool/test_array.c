/* Device arrays against host reference arrays: creation, slicing views (strided, up to 5
 * dimensions), reads and writes of views, strided copies both ways, fill, map, reshape, item,
 * wrapped sub-buffers, dtypes, and the errors of each. */
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

/* Flat C index of the element of a sliced view at view-linear position pos: computed from the
 * slice specification alone, independently of the library's strides. */
static size_t source_index(int ndim, const size_t *shape, const fcl_slice *s, size_t pos) {
  size_t vshape[8], idx = 0, stride = 1;
  for (int i = 0; i < ndim; ++i) vshape[i] = (s[i].stop - s[i].start + s[i].step - 1) / s[i].step;
  for (int i = ndim - 1; i >= 0; --i) {
    size_t k = pos % vshape[i];
    pos /= vshape[i];
    idx += (s[i].start + k * s[i].step) * stride;
    stride *= shape[i];
  }
  return idx;
}

static size_t count(int ndim, const size_t *shape) {
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

static size_t view_count(int ndim, const fcl_slice *s) {
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= (s[i].stop - s[i].start + s[i].step - 1) / s[i].step;
  return n;
}

/* Read, write and copy through a sliced view of a float array of any rank. */
static void check_view(fcl_pool *pool, fcl_queue *q, int ndim, const size_t *shape,
                       const fcl_slice *s) {
  size_t n = count(ndim, shape), m = view_count(ndim, s);
  float *host = malloc(n * sizeof *host), *ref = malloc(n * sizeof *ref);
  float *got = malloc(n * sizeof *got), *vals = malloc(m * sizeof *vals);
  for (size_t i = 0; i < n; ++i) ref[i] = host[i] = (float)i;
  fcl_array *a = NULL, *v = NULL, *c = NULL;
  CHECK_OK(fcl_array_create_from_host(pool, q, FCL_FLOAT32, ndim, shape, host, &a));
  CHECK_OK(fcl_array_slice(a, s, &v));
  if (!a || !v) return;
  CHECK(fcl_array_size(v) == m);
  /* the view's layout: the array's strides times the steps, offset at the starts */
  size_t offset = 0;
  for (int i = 0; i < ndim; ++i) {
    offset += s[i].start * fcl_array_strides(a)[i];
    CHECK(fcl_array_strides(v)[i] == fcl_array_strides(a)[i] * s[i].step);
  }
  CHECK(fcl_array_strides(a)[ndim - 1] == sizeof(float) && fcl_array_offset(a) == 0);
  CHECK(fcl_array_ndim(v) == ndim && fcl_array_offset(v) == offset &&
        fcl_array_dtype(v) == FCL_FLOAT32);
  /* read of a view */
  CHECK_OK(fcl_array_read(v, NULL, FCL_BLOCKING, got, 0, NULL, NULL));
  int bad = 0;
  for (size_t i = 0; i < m; ++i) bad += got[i] != host[source_index(ndim, shape, s, i)];
  CHECKF(bad == 0, "%dD view read: %d wrong", ndim, bad);
  /* write of a view, then the whole array */
  for (size_t i = 0; i < m; ++i) {
    vals[i] = 100000.0f + (float)i;
    ref[source_index(ndim, shape, s, i)] = vals[i];
  }
  CHECK_OK(fcl_array_write(v, NULL, FCL_BLOCKING, vals, 0, NULL, NULL));
  CHECK_OK(fcl_array_read(a, NULL, FCL_BLOCKING, got, 0, NULL, NULL));
  bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != ref[i];
  CHECKF(bad == 0, "%dD view write: %d wrong", ndim, bad);
  /* strided -> contiguous copy, and contiguous -> strided */
  size_t vshape[8];
  memcpy(vshape, fcl_array_shape(v), (size_t)ndim * sizeof *vshape);
  CHECK_OK(fcl_array_create(pool, q, FCL_FLOAT32, ndim, vshape, &c));
  CHECK_OK(fcl_array_copy(v, c, NULL, 0, NULL, NULL));
  CHECK_OK(fcl_array_read(c, NULL, FCL_BLOCKING, got, 0, NULL, NULL));
  CHECK(memcmp(got, vals, m * sizeof *got) == 0);
  for (size_t i = 0; i < m; ++i) vals[i] = -(float)i;
  CHECK_OK(fcl_array_write(c, NULL, FCL_BLOCKING, vals, 0, NULL, NULL));
  fcl_event *ev = NULL;
  CHECK_OK(fcl_array_copy(c, v, NULL, 0, NULL, &ev));
  CHECK_OK(fcl_events_wait(1, &ev));
  fcl_event_release(&ev);
  for (size_t i = 0; i < m; ++i) ref[source_index(ndim, shape, s, i)] = vals[i];
  CHECK_OK(fcl_array_read(a, NULL, FCL_BLOCKING, got, 0, NULL, NULL));
  bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != ref[i];
  CHECKF(bad == 0, "%dD copy into a view: %d wrong", ndim, bad);
  /* fill of a view */
  const float seven = 7.5f;
  CHECK_OK(fcl_array_fill(v, NULL, &seven, 0, NULL, NULL));
  for (size_t i = 0; i < m; ++i) ref[source_index(ndim, shape, s, i)] = seven;
  CHECK_OK(fcl_array_read(a, NULL, FCL_BLOCKING, got, 0, NULL, NULL));
  bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != ref[i];
  CHECKF(bad == 0, "%dD view fill: %d wrong", ndim, bad);
  fcl_array_destroy(&v);
  fcl_array_destroy(&c);
  fcl_array_destroy(&a);
  free(host);
  free(ref);
  free(got);
  free(vals);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  fcl_allocator *alloc = NULL;
  fcl_pool *pool = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  CHECK_OK(fcl_allocator_create_deferred(ctx, FCL_MEM_DEVICE, &alloc));
  CHECK_OK(fcl_pool_create(alloc, NULL, &pool));
  if (!pool || !q) return;

  const size_t s3[3] = {4, 5, 6};
  const fcl_slice v3[3] = {{1, 4, 2}, {0, 5, 1}, {1, 6, 2}}; /* strided inner axis */
  check_view(pool, q, 3, s3, v3);
  const fcl_slice rows[3] = {{0, 4, 3}, {1, 4, 1}, {0, 6, 1}}; /* contiguous rows */
  check_view(pool, q, 3, s3, rows);
  const size_t s5[5] = {2, 3, 4, 3, 8};
  const fcl_slice v5[5] = {{0, 2, 1}, {1, 3, 1}, {0, 4, 3}, {0, 3, 2}, {2, 8, 3}};
  check_view(pool, q, 5, s5, v5);
  const size_t s1[1] = {1000};
  const fcl_slice v1[1] = {{3, 997, 7}};
  check_view(pool, q, 1, s1, v1);

  /* Contiguity, reshape, item, map. */
  float host[120];
  for (int i = 0; i < 120; ++i) host[i] = (float)i;
  fcl_array *a = NULL, *r = NULL, *v = NULL;
  CHECK_OK(fcl_array_create_from_host(pool, q, FCL_FLOAT32, 3, s3, host, &a));
  CHECK(fcl_array_is_contiguous(a) && fcl_array_nbytes(a) == sizeof host);
  const size_t s2[2] = {20, 6};
  CHECK_OK(fcl_array_reshape(a, 2, s2, &r));
  float x = 0;
  const size_t at[2] = {7, 3};
  CHECK_OK(fcl_array_item(r, at, &x));
  CHECK(x == 45.0f);
  CHECK_OK(fcl_array_slice(a, v3, &v));
  CHECK(!fcl_array_is_contiguous(v));
  const size_t vat[3] = {1, 2, 2}; /* a[3][2][5] */
  CHECK_OK(fcl_array_item(v, vat, &x));
  CHECK(x == (float)(3 * 30 + 2 * 6 + 5));
  void *mapped = NULL;
  CHECK_OK(fcl_array_map(r, NULL, CL_MAP_READ | CL_MAP_WRITE, &mapped));
  if (mapped) {
    CHECK(((float *)mapped)[119] == 119.0f);
    ((float *)mapped)[0] = -1.0f;
    fcl_event *ev = NULL;
    CHECK_OK(fcl_array_unmap(r, NULL, mapped, &ev));
    CHECK_OK(fcl_events_wait(1, &ev));
    fcl_event_release(&ev);
  }
  const size_t origin[3] = {0, 0, 0};
  CHECK_OK(fcl_array_item(a, origin, &x)); /* the views share storage */
  CHECK(x == -1.0f);

  /* Errors. */
  fcl_array *bad = NULL;
  const size_t s7[2] = {7, 17};
  CHECK_STATUS(fcl_array_reshape(a, 2, s7, &bad), FCL_ERR_INVALID_ARGUMENT, "119 elements");
  CHECK_STATUS(fcl_array_reshape(v, 1, (size_t[]){30}, &bad), FCL_ERR_INVALID_ARGUMENT,
               "only contiguous");
  const fcl_slice out_of_range[3] = {{0, 5, 1}, {0, 5, 1}, {0, 6, 1}};
  CHECK_STATUS(fcl_array_slice(a, out_of_range, &bad), FCL_ERR_INVALID_ARGUMENT, "axis 0");
  const fcl_slice zero_step[3] = {{0, 4, 0}, {0, 5, 1}, {0, 6, 1}};
  CHECK_STATUS(fcl_array_slice(a, zero_step, &bad), FCL_ERR_INVALID_ARGUMENT, "step");
  CHECK_STATUS(fcl_array_copy(v, a, NULL, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "same dtype and shape");
  CHECK_STATUS(fcl_array_map(v, NULL, CL_MAP_READ, &mapped), FCL_ERR_INVALID_ARGUMENT,
               "only contiguous");
  const size_t past[3] = {0, 5, 0};
  CHECK_STATUS(fcl_array_item(a, past, &x), FCL_ERR_INVALID_ARGUMENT, "axis 1 index 5");
  CHECK_STATUS(fcl_array_create(pool, q, FCL_FLOAT32, 0, s3, &bad), FCL_ERR_INVALID_ARGUMENT,
               "ndim");
  CHECK_STATUS(fcl_array_create(pool, q, (fcl_dtype)42, 3, s3, &bad), FCL_ERR_INVALID_ARGUMENT,
               "dtype");
  CHECK(bad == NULL);
  fcl_array_destroy(&r);
  fcl_array_destroy(&v);

  /* Integer and double dtypes; a view over a caller's sub-buffer. */
  int ints[64];
  for (int i = 0; i < 64; ++i) ints[i] = i * i - 500;
  fcl_array *ia = NULL, *da = NULL, *w = NULL;
  const size_t s64[1] = {64};
  CHECK_OK(fcl_array_create_from_host(pool, q, FCL_INT32, 1, s64, ints, &ia));
  int iback[64];
  CHECK_OK(fcl_array_read(ia, NULL, FCL_BLOCKING, iback, 0, NULL, NULL));
  CHECK(memcmp(ints, iback, sizeof ints) == 0);
  /* non-blocking: the data is there once the event completes; a value of no fcl_blocking
   * constant (an int converts to the enum silently) is refused */
  memset(iback, 0, sizeof iback);
  fcl_event *read = NULL;
  CHECK_OK(fcl_array_read(ia, NULL, FCL_NON_BLOCKING, iback, 0, NULL, &read));
  CHECK_OK(fcl_events_wait(1, &read));
  if (read) fcl_event_release(&read);
  CHECK(memcmp(ints, iback, sizeof ints) == 0);
  CHECK_STATUS(fcl_array_read(ia, NULL, (fcl_blocking)2, iback, 0, NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "argument 3 (blocking): 2 is neither FCL_BLOCKING nor");
  const size_t s88[2] = {8, 8};
  CHECK_OK(fcl_array_create(pool, q, FCL_FLOAT64, 2, s88, &da));
  const double pi = 3.141592653589793;
  CHECK_OK(fcl_array_fill(da, NULL, &pi, 0, NULL, NULL));
  double dback[64];
  CHECK_OK(fcl_array_read(da, NULL, FCL_BLOCKING, dback, 0, NULL, NULL));
  CHECK(dback[0] == pi && dback[63] == pi);
  fcl_mem *buf = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof ints, ints, &buf));
  const size_t s4[2] = {4, 4}, st4[2] = {16 * sizeof(int), 2 * sizeof(int)};
  CHECK_OK(fcl_array_wrap_buffer(buf, q, FCL_INT32, 2, s4, st4, sizeof(int), &w));
  int wback[16];
  CHECK_OK(fcl_array_read(w, NULL, FCL_BLOCKING, wback, 0, NULL, NULL));
  bad = NULL;
  int wrong = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) wrong += wback[i * 4 + j] != ints[i * 16 + 2 * j + 1];
  CHECK(wrong == 0);
  const size_t too_far[2] = {5, 4};
  CHECK_STATUS(fcl_array_wrap_buffer(buf, q, FCL_INT32, 2, too_far, st4, 0, &bad),
               FCL_ERR_INVALID_ARGUMENT, "do not fit");
  fcl_array_destroy(&w);
  fcl_mem_release(&buf);

  /* from host data: copied (later host changes do not show) or used in place; read-only when
   * kernels may not write it; a clone of a strided view is its elements, packed; a read-only
   * view refuses every write and passes it on to its views */
  int hv[24], got[24];
  for (int i = 0; i < 24; ++i) hv[i] = 3 * i - 7;
  const size_t s24[2] = {4, 6};
  fcl_array *hc = NULL, *hu = NULL, *hr = NULL;
  CHECK_OK(fcl_array_from_host(ctx, q, FCL_INT32, 2, s24, hv,
                               (fcl_host_array_options){true, true, true}, &hc));
  CHECK_OK(fcl_array_from_host(ctx, q, FCL_INT32, 2, s24, hv,
                               (fcl_host_array_options){false, true, true}, &hu));
  CHECK_OK(fcl_array_from_host(ctx, q, FCL_INT32, 2, s24, hv,
                               (fcl_host_array_options){true, true, false}, &hr));
  hv[5] = 1000; /* after the copies */
  if (hc && hu && hr) {
    if (!strcmp(fcl_device_backend(fcl_context_device(ctx, 0)), "opencl")) { /* OpenCL's view */
      fcl_mem_info mi;
      CHECK_OK(fcl_mem_get_info(fcl_mem_cl(fcl_array_buffer(hu)), &mi));
      CHECK(mi.host_ptr == hv && (mi.flags & CL_MEM_USE_HOST_PTR));
    }
    CHECK(fcl_mem_where(fcl_array_buffer(hu)) == FCL_MEM_HOST);
    CHECK(fcl_mem_where(fcl_array_buffer(hc)) == FCL_MEM_DEVICE);
    CHECK_OK(fcl_array_read(hc, q, FCL_BLOCKING, got, 0, NULL, NULL));
    CHECK(got[5] == 3 * 5 - 7 && got[23] == 3 * 23 - 7);
    CHECK(!fcl_array_readonly(hc) && fcl_array_readonly(hr));
    CHECK_STATUS(fcl_array_write(hr, q, FCL_BLOCKING, hv, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
                 "read-only");
  }
  CHECK_STATUS(fcl_array_from_host(ctx, q, FCL_INT32, 2, s24, hv,
                                   (fcl_host_array_options){true, false, false}, &bad),
               FCL_ERR_INVALID_ARGUMENT, "neither read nor write");
  fcl_array *sv = NULL, *cl = NULL, *ro = NULL, *ros = NULL;
  const fcl_slice every_other[2] = {{1, 4, 2}, {0, 6, 3}};
  if (hc) CHECK_OK(fcl_array_slice(hc, every_other, &sv));
  if (sv) CHECK_OK(fcl_array_clone(sv, pool, NULL, &cl));
  if (cl) {
    CHECK(fcl_array_is_contiguous(cl) && fcl_array_size(cl) == 4);
    CHECK_OK(fcl_array_read(cl, q, FCL_BLOCKING, got, 0, NULL, NULL));
    int cw = 0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) cw += got[i * 2 + j] != 3 * ((1 + 2 * i) * 6 + 3 * j) - 7;
    CHECKF(!cw, "clone of a strided view: %d wrong elements", cw);
  }
  if (hc) CHECK_OK(fcl_array_readonly_view(hc, &ro));
  if (ro) {
    const int zero = 0;
    void *m = NULL;
    CHECK_STATUS(fcl_array_write(ro, q, FCL_BLOCKING, hv, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
                 "read-only");
    CHECK_STATUS(fcl_array_fill(ro, q, &zero, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
                 "read-only");
    CHECK_STATUS(fcl_array_copy(hc, ro, q, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT, "read-only");
    CHECK_STATUS(fcl_array_map(ro, q, CL_MAP_WRITE, &m), FCL_ERR_INVALID_ARGUMENT, "read-only");
    CHECK_OK(fcl_array_map(ro, q, CL_MAP_READ, &m));
    if (m) {
      CHECK(((int *)m)[7] == 3 * 7 - 7);
      CHECK_OK(fcl_array_unmap(ro, q, m, NULL));
    }
    CHECK_OK(fcl_array_slice(ro, every_other, &ros));
    CHECK(ros && fcl_array_readonly(ros));
    CHECK_OK(fcl_array_fill(hc, q, &zero, 0, NULL, NULL)); /* the original still writes */
    CHECK_OK(fcl_array_read(ro, q, FCL_BLOCKING, got, 0, NULL, NULL));
    CHECK(got[0] == 0 && got[23] == 0);
  }
  fcl_array_destroy(&ros);
  fcl_array_destroy(&ro);
  fcl_array_destroy(&cl);
  fcl_array_destroy(&sv);
  fcl_array_destroy(&hr);
  fcl_array_destroy(&hu);
  fcl_array_destroy(&hc);
  fcl_array_destroy(&ia);
  fcl_array_destroy(&da);
  fcl_array_destroy(&a);
  CHECK(a == NULL);
  CHECK_OK(fcl_queue_finish(q));
  fcl_pool_stats stats;
  CHECK_OK(fcl_pool_statistics(pool, &stats));
  CHECK(stats.active_blocks == 0); /* every array's storage went back to the pool */
  fcl_pool_release(&pool);
  fcl_allocator_release(&alloc);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
