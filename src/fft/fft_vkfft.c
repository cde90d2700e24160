/* The VkFFT backend: VkFFT's plans (the runtime's binding, src/runtime/vkfft.h: VkFFT's build
 * for the field's device API) on the field's device. One rank: one r2c plan over
 * every axis, reading the field's padded storage in place (strides and offset, no packing) and
 * writing back into it on the inverse. Several ranks: r2c over the axes a rank holds whole into
 * a device work array, then transposes (fft_transpose.c) and c2c plans along the axes they make
 * whole: slabs, one transpose and the last axis; pencils, the row transpose and y, the column
 * transpose and z. In 3D, z may be flowcl's own pass (fft_columns.c): on one rank VkFFT's
 * plans then leave it out, on several it replaces the c2c plan of the last axis. Walled y and z
 * (fcl__fft_walls_native) are flowcl's mirrored column pass at the walls' own size, which
 * VkFFT's plans leave out: y after the r2c (before any transpose: a walled axis is whole on
 * every rank), z at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_columns_impl.h"
#include "fft_impl.h"
#include "vkfft.h"

typedef struct {
  fcl_queue *queue;
  fcl__vkfft *whole;   /* r2c over the axes held whole (all; slabs: all but the last; pencils: x) */
  fcl__vkfft *inplace; /* r2c in place on a slot (padded real rows), axes as `whole` */
  fcl__vkfft *middle;  /* c2c along y after the first transpose (pencils) */
  fcl__vkfft *last;    /* c2c along the last axis in the slot (distributed) */
  /* per component of a batch: */
  fcl_array *pre[FCL__FFT_BATCH]; /* complex work arrays after the r2c (distributed) */
  fcl_array *mid[FCL__FFT_BATCH]; /* between the two transposes (pencils, P2 > 1) */
  fcl__fft_transpose *first;      /* slabs: the transpose; pencils: along the rows (x <-> y) */
  fcl__fft_transpose *second;     /* pencils with P2 > 1: along the columns (y <-> z) */
  fcl__fft_columns *columns;      /* one rank, 3D: flowcl's pass along z (VkFFT's plans omit z) */
  fcl__fft_columns *last_columns; /* distributed, 3D: flowcl's pass along z instead of `last` */
  fcl__fft_columns *walls_y;      /* the mirrored pass along walled y, after the r2c */
  fcl__fft_columns *walls_z;      /* the same along walled z, in the slot, last */
  char description[128];
} vk_state;

static void vk_destroy(void *state) {
  vk_state *s = state;
  if (!s) return;
  fcl__vkfft_destroy(&s->whole);
  fcl__vkfft_destroy(&s->inplace);
  fcl__vkfft_destroy(&s->middle);
  fcl__vkfft_destroy(&s->last);
  for (int i = 0; i < FCL__FFT_BATCH; ++i) {
    fcl_array_destroy(&s->pre[i]);
    fcl_array_destroy(&s->mid[i]);
  }
  fcl__fft_transpose_destroy(&s->first);
  fcl__fft_transpose_destroy(&s->second);
  fcl__fft_columns_destroy(&s->columns);
  fcl__fft_columns_destroy(&s->last_columns);
  fcl__fft_columns_destroy(&s->walls_y);
  fcl__fft_columns_destroy(&s->walls_z);
  free(s);
}

/* One launch on the plan's queue: buf is the plan's buffer, in (or NULL) its input buffer (the
 * field, read on forward and written on backward); dir -1 forward, 1 backward. */
static fcl_status vk_append(vk_state *s, fcl__vkfft *plan, fcl_mem *in, fcl_mem *buf, int dir,
                            const char *what) {
  return fcl__vkfft_append(plan, s->queue, in, buf, dir, what);
}

static fcl_status copy(vk_state *s, fcl_mem *from, fcl_mem *to, size_t bytes) {
  return fcl_mem_copy(s->queue, from, 0, to, 0, bytes, 0, NULL, NULL);
}

/* The work array of component i between the transposes, or the slot itself. */
static fcl_mem *between(const vk_state *s, int i, fcl_mem *other, fcl_mem *slot) {
  if (s->second) return fcl_array_buffer(s->mid[i]);
  return other == slot ? fcl_array_buffer(s->pre[i]) : slot;
}

/* The distributed steps after the r2c, for n components at once (one exchange per transpose):
 * from[i] (the r2c's output: a work array, or the slot itself in place) through the transposes
 * and the c2c transforms into slot[i]. Where the first transpose would map the slot onto
 * itself, it goes through the work array and back. */
static fcl_status distributed_forward(vk_state *s, int n, fcl_mem *const *from,
                                      fcl_mem *const *slot) {
  fcl_mem *x[FCL__FFT_BATCH] = {0};
  for (int i = 0; i < n; ++i) x[i] = between(s, i, from[i], slot[i]);
  FCL_TRY(fcl__fft_transpose_run(s->first, n, from, x, true));
  for (int i = 0; i < n && s->middle; ++i)
    FCL_TRY(vk_append(s, s->middle, NULL, x[i], -1, "forward transform of y"));
  if (s->second) FCL_TRY(fcl__fft_transpose_run(s->second, n, x, slot, true));
  for (int i = 0; i < n && !s->second; ++i)
    if (x[i] != slot[i]) FCL_TRY(copy(s, x[i], slot[i], fcl__fft_transpose_bytes(s->first, true)));
  for (int i = 0; i < n && s->last; ++i)
    FCL_TRY(vk_append(s, s->last, NULL, slot[i], -1, "forward transform of the last axis"));
  for (int i = 0; i < n && s->last_columns; ++i)
    FCL_TRY(fcl__fft_columns_run(s->last_columns, s->queue, slot[i], true, false));
  return FCL_OK;
}

/* The reverse of distributed_forward: slot[i] into to[i], the c2r's input. */
static fcl_status distributed_backward(vk_state *s, int n, fcl_mem *const *slot,
                                       fcl_mem *const *to) {
  for (int i = 0; i < n && s->last; ++i)
    FCL_TRY(vk_append(s, s->last, NULL, slot[i], 1, "backward transform of the last axis"));
  for (int i = 0; i < n && s->last_columns; ++i)
    FCL_TRY(fcl__fft_columns_run(s->last_columns, s->queue, slot[i], false, false));
  fcl_mem *x[FCL__FFT_BATCH] = {0};
  for (int i = 0; i < n; ++i) x[i] = between(s, i, to[i], slot[i]);
  if (s->second) FCL_TRY(fcl__fft_transpose_run(s->second, n, x, slot, false));
  for (int i = 0; i < n && !s->second; ++i)
    if (x[i] != slot[i]) FCL_TRY(copy(s, slot[i], x[i], fcl__fft_transpose_bytes(s->first, true)));
  for (int i = 0; i < n && s->middle; ++i)
    FCL_TRY(vk_append(s, s->middle, NULL, x[i], 1, "backward transform of y"));
  return fcl__fft_transpose_run(s->first, n, to, x, false);
}

/* odd: bit a of the walls' parity (fft_impl.h), for the mirrored pass along a */
static bool odd_along(const unsigned *odd, int i, int a) { return odd[i] >> a & 1; }

static fcl_status vk_forward(fcl_fft *fft, const fcl_field *src, int n, const int *comp,
                             const unsigned *odd, fcl_mem *const *slot) {
  vk_state *s = fft->state;
  fcl_mem *work[FCL__FFT_BATCH] = {0};
  for (int i = 0; i < n; ++i) {
    work[i] = s->first ? fcl_array_buffer(s->pre[i]) : slot[i];
    FCL_TRY(
        vk_append(s, s->whole, fcl_field_buffer(src, comp[i]), work[i], -1, "forward transform"));
    if (s->columns) FCL_TRY(fcl__fft_columns_run(s->columns, s->queue, work[i], true, false));
    if (s->walls_y)
      FCL_TRY(fcl__fft_columns_run(s->walls_y, s->queue, work[i], true, odd_along(odd, i, 1)));
  }
  if (s->first) FCL_TRY(distributed_forward(s, n, work, slot));
  for (int i = 0; i < n && s->walls_z; ++i)
    FCL_TRY(fcl__fft_columns_run(s->walls_z, s->queue, slot[i], true, odd_along(odd, i, 2)));
  return FCL_OK;
}

static fcl_status vk_backward(fcl_fft *fft, int n, fcl_mem *const *slot, fcl_field *dst,
                              const int *comp, const unsigned *odd) {
  vk_state *s = fft->state;
  fcl_mem *work[FCL__FFT_BATCH] = {0};
  for (int i = 0; i < n && s->walls_z; ++i)
    FCL_TRY(fcl__fft_columns_run(s->walls_z, s->queue, slot[i], false, odd_along(odd, i, 2)));
  for (int i = 0; i < n; ++i) work[i] = s->first ? fcl_array_buffer(s->pre[i]) : slot[i];
  if (s->first) FCL_TRY(distributed_backward(s, n, slot, work));
  for (int i = 0; i < n; ++i) {
    if (s->walls_y)
      FCL_TRY(fcl__fft_columns_run(s->walls_y, s->queue, work[i], false, odd_along(odd, i, 1)));
    if (s->columns) FCL_TRY(fcl__fft_columns_run(s->columns, s->queue, work[i], false, false));
    FCL_TRY(
        vk_append(s, s->whole, fcl_field_buffer(dst, comp[i]), work[i], 1, "backward transform"));
  }
  return FCL_OK;
}

static fcl_status vk_inplace(fcl_fft *fft, fcl_mem *slot, bool forward) {
  vk_state *s = fft->state;
  if (forward) {
    FCL_TRY(vk_append(s, s->inplace, NULL, slot, -1, "in-place forward transform"));
    if (s->columns) FCL_TRY(fcl__fft_columns_run(s->columns, s->queue, slot, true, false));
    return s->first ? distributed_forward(s, 1, &slot, &slot) : FCL_OK;
  }
  if (s->first) FCL_TRY(distributed_backward(s, 1, &slot, &slot));
  if (s->columns) FCL_TRY(fcl__fft_columns_run(s->columns, s->queue, slot, false, false));
  return vk_append(s, s->inplace, NULL, slot, 1, "in-place backward transform");
}

static const fcl__fft_ops vk_ops = {vk_forward, vk_backward, vk_inplace, vk_destroy};

/* c2c along `axis` of a packed complex array of shape e: the axes before it taken as one batch
 * dimension and those after as another (VkFFT cannot omit an axis of one point, so batches of
 * one are left out). No plan for an axis of one point. */
static fcl_status plan_axis(vk_state *s, const fcl_fft *fft, fcl__vkfft **plan, const int64_t e[3],
                            int axis, fcl_mem *buf, const char *what) {
  if (e[axis] == 1) return FCL_OK;
  uint64_t lead = 1, trail = 1;
  for (int a = 0; a < axis; ++a) lead *= (uint64_t)e[a];
  for (int a = axis + 1; a < 3; ++a) trail *= (uint64_t)e[a];
  fcl__vkfft_config c = {.double_precision = fft->dtype == FCL_FLOAT64, .buffer = buf};
  unsigned d = 0;
  if (lead > 1) c.omit[d] = true, c.size[d++] = lead;
  c.size[d++] = (uint64_t)e[axis];
  if (trail > 1) c.omit[d] = true, c.size[d++] = trail;
  for (unsigned a = d; a < 3; ++a) c.size[a] = 1;
  c.dims = d;
  c.bytes = lead * trail * (uint64_t)e[axis] * 2 * fft->real_size;
  return fcl__vkfft_plan(s->queue, &c, what, plan);
}

/* The work arrays, transposes and c2c plans of the distributed schemes (walled_z: the last axis
 * is the walls' mirrored pass, planned with the one-rank passes). */
static fcl_status plan_distributed(vk_state *s, fcl_fft *fft, fcl_pool *pool, bool walled_z) {
  const fcl_topology *t = fft->topo;
  const fcl_fft_layout *l = &fft->layout;
  const int dim = fft->dim;
  int64_t pre[3] = {1, 1, 1};
  for (int a = 0; a < dim; ++a) pre[a] = t->local[a];
  pre[0] = t->domain.resolution[0] / 2 + 1;
  fcl_mem *slot = fcl_array_buffer(fft->slots[0]);
  fcl_status st = FCL_OK;
  if (!fcl__fft_pencils(t)) {
    FCL_TRY(fcl__fft_transpose_create(fft, t->comm, pre, dim - 2, dim - 1,
                                      t->domain.resolution[dim - 1], fft->batch, &s->first));
  } else {
    /* rows: the ranks of one z part, by y part; columns: those of one y part, by z part */
    MPI_Comm row = MPI_COMM_NULL, column = MPI_COMM_NULL;
    int rc = MPI_Comm_split(t->comm, t->coords[2], t->coords[1], &row);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_split(t->comm, t->coords[1], t->coords[2], &column);
    if (rc != MPI_SUCCESS) st = fcl__mpi_error(rc, "fft: pencil row and column communicators");
    int64_t mid[3] = {l->local[0], t->domain.resolution[1], pre[2]};
    if (st == FCL_OK)
      st = fcl__fft_transpose_create(fft, row, pre, 0, 1, t->domain.resolution[1], fft->batch,
                                     &s->first);
    /* the column transpose is collective over other ranks: all go on, or none */
    int ok = st == FCL_OK, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, t->comm);
    if (st == FCL_OK && !all)
      st = FCL_ERROR(FCL_ERR_FFT, "fft: the row transpose failed on another rank (see its error)");
    if (st == FCL_OK && t->procs[2] > 1)
      st = fcl__fft_transpose_create(fft, column, mid, 1, 2, t->domain.resolution[2], fft->batch,
                                     &s->second);
    if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
    if (column != MPI_COMM_NULL) MPI_Comm_free(&column);
    FCL_TRY(st);
    size_t reals = fcl__fft_transpose_bytes(s->first, true) / fft->real_size;
    for (int i = 0; i < fft->batch && s->second; ++i)
      FCL_TRY(fcl_array_create(pool, fft->queue, fft->dtype, 1, &reals, &s->mid[i]));
    fcl_mem *buf = s->second ? fcl_array_buffer(s->mid[0]) : slot;
    FCL_TRY(plan_axis(s, fft, &s->middle, mid, 1, buf, "planning the transform of y"));
  }
  /* pre holds the r2c's output and, in place without a second transpose, the first one's */
  size_t bytes = fcl__fft_transpose_bytes(s->first, false);
  if (!s->second && fcl__fft_transpose_bytes(s->first, true) > bytes)
    bytes = fcl__fft_transpose_bytes(s->first, true);
  size_t reals = bytes / fft->real_size;
  for (int i = 0; i < fft->batch; ++i)
    FCL_TRY(fcl_array_create(pool, fft->queue, fft->dtype, 1, &reals, &s->pre[i]));
  /* the last axis, z in 3D (memory order x, y, z): flowcl's column pass where it is chosen */
  if (dim == 3 && l->local[2] > 1 && !walled_z)
    FCL_TRY(fcl__fft_columns_create(fft, pool, l->local[2], (size_t)l->local[1],
                                    (size_t)l->local[0], (size_t)(l->local[0] * l->local[1]),
                                    (size_t)l->local[0], false, &s->last_columns));
  snprintf(s->description, sizeof s->description, "vkfft (%s, %s transport)%s",
           s->middle || s->second ? "pencils" : "slabs", fcl__fft_transpose_transport(s->first),
           s->last_columns ? ", z by flowcl's column pass" : "");
  fft->description = s->description;
  if (s->last_columns || walled_z) return FCL_OK;
  return plan_axis(s, fft, &s->last, l->local, dim - 1, slot,
                   "planning the transform of the last axis");
}

fcl_status fcl__fft_vkfft_plan(fcl_fft *fft, fcl_pool *pool) {
  vk_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: VkFFT plan");
  fft->state = s;
  fft->ops = &vk_ops;
  fft->description = "vkfft";
  s->queue = fft->queue;
  const fcl_topology *t = fft->topo;
  const int dim = fft->dim;
  const size_t *p = fft->padded;
  bool walled[3] = {false, false, false}; /* the mirrored passes' axes */
  for (int a = 1; a < dim; ++a) walled[a] = t->domain.bc[a][0] != FCL_BC_PERIODIC;
  if (fft->distributed) FCL_TRY(plan_distributed(s, fft, pool, walled[2]));
  /* The r2c over the axes a rank holds whole: x, and y and z unless split (the others are
   * batches). Axes of one point are left out (VkFFT cannot omit them). */
  const bool pencils = fcl__fft_pencils(t);
  uint64_t n[3] = {1, 1, 1}, nc[3] = {1, 1, 1}, in_stride[3], out_stride[3];
  for (int a = 0; a < dim; ++a) n[a] = (uint64_t)t->local[a];
  nc[0] = n[0] / 2 + 1;
  nc[1] = n[1];
  nc[2] = n[2];
  in_stride[0] = 1, in_stride[1] = p[0], in_stride[2] = p[0] * p[1];
  /* one rank: the slots' padded rows (fft.h); else the distributed schemes' own buffers */
  const uint64_t pitch = t->size == 1 ? (uint64_t)fft->layout.pitch : nc[0];
  out_stride[0] = 1, out_stride[1] = pitch, out_stride[2] = pitch * nc[1];
  const int *g = t->origin; /* interior point 0 in the padded storage */
  if (!fft->distributed && dim == 3 && n[2] > 1 && !walled[2]) {
    FCL_TRY(fcl__fft_columns_create(fft, pool, (int64_t)n[2], nc[1], nc[0], pitch * nc[1], pitch,
                                    false, &s->columns));
    if (s->columns) fft->description = "vkfft, z by flowcl's column pass";
  }
  if (walled[1])
    FCL_TRY(fcl__fft_columns_create(fft, pool, 2 * ((int64_t)n[1] - 1), nc[2], nc[0], pitch,
                                    pitch * nc[1], true, &s->walls_y));
  if (walled[2]) {
    const fcl_fft_layout *l = &fft->layout;
    FCL_TRY(fcl__fft_columns_create(fft, pool, 2 * (l->local[2] - 1), (size_t)l->local[1],
                                    (size_t)l->local[0], (size_t)(l->pitch * l->local[1]),
                                    (size_t)l->pitch, true, &s->walls_z));
  }
  if (walled[1] || walled[2]) {
    char base[88]; /* the longest description, of pencils with the column pass, has 62 */
    snprintf(base, sizeof base, "%s", fft->description);
    snprintf(s->description, sizeof s->description, "%s, walls by flowcl's mirrored pass", base);
    fft->description = s->description;
  }
  const uint64_t in_bytes = p[0] * p[1] * p[2] * fft->real_size;
  fcl__vkfft_config c = {.double_precision = fft->dtype == FCL_FLOAT64};
  unsigned d = 0;
  for (int a = 0; a < dim; ++a) {
    if (a > 0 && n[a] == 1) continue;
    c.size[d] = n[a];
    c.omit[d] = (fft->distributed && (pencils ? a > 0 : a == dim - 1)) || (a == 2 && s->columns) ||
                walled[a];
    if (d > 0) { /* VkFFT's stride i is that of its dimension i + 1 */
      c.input_stride[d - 1] = in_stride[a];
      c.stride[d - 1] = out_stride[a];
    }
    ++d;
  }
  c.dims = d;
  for (unsigned a = d; a < 3; ++a) c.size[a] = 1;
  for (unsigned a = d - 1; a < 3; ++a) { /* the dimensions after the last: the whole array */
    c.input_stride[a] = p[0] * p[1] * p[2];
    c.stride[a] = pitch * nc[1] * nc[2];
  }
  c.r2c = true;
  c.input_formatted = true;
  c.inverse_to_input = true;
  c.input_offset = ((g[2] * p[1] + g[1]) * p[0] + g[0]) * fft->real_size;
  c.input_bytes = in_bytes;
  c.bytes = pitch * nc[1] * nc[2] * 2 * fft->real_size;
  fcl_mem *probe = NULL; /* VkFFT wants buffers at planning; any will do */
  FCL_TRY(fcl_mem_create(fft->context, FCL_MEM_DEVICE, in_bytes, NULL, &probe));
  c.input = probe;
  c.buffer = s->pre[0] ? fcl_array_buffer(s->pre[0]) : fcl_array_buffer(fft->slots[0]);
  fcl_status st = fcl__vkfft_plan(s->queue, &c, "planning the r2c transform", &s->whole);
  fcl_mem_release(&probe);
  FCL_TRY(st);
  if (walled[1] || walled[2]) return FCL_OK; /* in-place transforms take periodic plans */
  /* The same axes in place on a slot, in the padded form (fft.h): the spectral strides stay
   * (padded rows); VkFFT takes the real rows of an in-place r2c as twice the complex ones */
  fcl__vkfft_config ip = c;
  ip.input_formatted = false;
  ip.inverse_to_input = false;
  memset(ip.input_stride, 0, sizeof ip.input_stride);
  ip.input_offset = 0;
  ip.input = NULL;
  ip.input_bytes = 0;
  ip.buffer = fcl_array_buffer(fft->slots[0]);
  ip.bytes = fft->slot_bytes;
  return fcl__vkfft_plan(s->queue, &ip, "planning the in-place r2c transform", &s->inplace);
}
