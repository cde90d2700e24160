/* The all-to-all transpose of the distributed slab scheme. Before it ("pre"), a rank holds its
 * slab of the last axis with the second-to-last axis whole; after it (the slot layout), the
 * second-to-last axis is split and the last one whole. Blocks to each rank leave through
 * rectangular device-to-host copies into pinned memory, cross with MPI_Alltoallv, and land in
 * the slot with one copy (the blocks arrive in slot order); the way back mirrors it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_impl.h"

struct fcl__slab_transpose {
  cl_command_queue queue;
  MPI_Comm comm;
  MPI_Datatype complex; /* one complex value, so counts stay small */
  int size, split;      /* ranks; memory dimension split after the transpose (0 or 1) */
  size_t cbytes;        /* bytes of a complex value */
  size_t pre_dims[3];   /* pre array, memory order, complex values */
  size_t pre_bytes, slot_bytes;
  int *counts;          /* 4 x size: pre-side counts/displs, slot-side counts/displs */
  int64_t *split_lo, *split_n;
  cl_mem stage[2];      /* pinned: [0] holds pre-side data, [1] slot-side data */
  void *host[2];
};

size_t fcl__slab_transpose_pre_bytes(const fcl__slab_transpose *t) { return t->pre_bytes; }

void fcl__slab_transpose_destroy(fcl__slab_transpose **tp) {
  if (!tp || !*tp) return;
  fcl__slab_transpose *t = *tp;
  for (int i = 0; i < 2; ++i)
    if (t->stage[i]) {
      if (t->host[i]) clEnqueueUnmapMemObject(t->queue, t->stage[i], t->host[i], 0, NULL, NULL);
      clFinish(t->queue);
      clReleaseMemObject(t->stage[i]);
    }
  if (t->complex != MPI_DATATYPE_NULL) MPI_Type_free(&t->complex);
  free(t->counts);
  free(t->split_lo);
  free(t->split_n);
  free(t);
  *tp = NULL;
}

fcl_status fcl__slab_transpose_create(const fcl_fft *fft, fcl__slab_transpose **out) {
  const fcl_topology *topo = fft->topo;
  const fcl_fft_layout *l = &fft->layout;
  const int dim = fft->dim, P = topo->size;
  fcl__slab_transpose *t = calloc(1, sizeof *t);
  if (!t) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft transpose");
  t->queue = fft->queue;
  t->comm = topo->comm;
  t->complex = MPI_DATATYPE_NULL;
  t->size = P;
  t->split = dim - 2;
  t->cbytes = 2 * fft->real_size;
  for (int a = 0; a < 3; ++a) t->pre_dims[a] = (size_t)l->global[a];
  t->pre_dims[dim - 1] = (size_t)topo->local[dim - 1];
  t->pre_bytes = t->pre_dims[0] * t->pre_dims[1] * t->pre_dims[2] * t->cbytes;
  t->slot_bytes = l->bytes;
  t->counts = calloc(4 * (size_t)P, sizeof *t->counts);
  t->split_lo = calloc((size_t)P, sizeof *t->split_lo);
  t->split_n = calloc((size_t)P, sizeof *t->split_n);
  fcl_status st = t->counts && t->split_lo && t->split_n
                      ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft transpose");
  if (st == FCL_OK) {
    int rc = MPI_Type_contiguous((int)t->cbytes, MPI_BYTE, &t->complex);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t->complex);
    if (rc != MPI_SUCCESS) st = fcl__mpi_error(rc, "fft transpose: complex datatype");
  }
  /* Per peer q: the pre-side block is the part of q's split range in this slab; the slot-side
   * block is this rank's split range in q's slab. */
  int *pre_count = t->counts, *pre_displ = t->counts + P, *slot_count = t->counts + 2 * P,
      *slot_displ = t->counts + 3 * P;
  size_t pre_at = 0, slot_at = 0;
  const int64_t my_split = l->local[dim - 2];
  for (int q = 0; st == FCL_OK && q < P; ++q) {
    fcl__fft_split(l->global[dim - 2], P, q, &t->split_n[q], &t->split_lo[q]);
    int64_t last_n, last_lo;
    fcl__fft_split(topo->domain.resolution[dim - 1], P, q, &last_n, &last_lo);
    size_t pre_vals = t->pre_dims[0] * t->pre_dims[1] * t->pre_dims[2] / t->pre_dims[dim - 2] *
                      (size_t)t->split_n[q];
    size_t slot_vals = (size_t)last_n * (size_t)my_split * (dim == 3 ? t->pre_dims[0] : 1);
    pre_count[q] = (int)pre_vals;
    pre_displ[q] = (int)pre_at;
    slot_count[q] = (int)slot_vals;
    slot_displ[q] = (int)slot_at;
    pre_at += pre_vals;
    slot_at += slot_vals;
  }
  cl_context ctx = fcl_context_cl(fft->context);
  size_t bytes[2] = {t->pre_bytes, t->slot_bytes};
  for (int i = 0; st == FCL_OK && i < 2; ++i) {
    cl_int err;
    t->stage[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes[i], NULL,
                                 &err);
    if (err == CL_SUCCESS) /* mapped for the plan's lifetime: pinned host memory */
      t->host[i] = clEnqueueMapBuffer(t->queue, t->stage[i], CL_TRUE,
                                      CL_MAP_READ | CL_MAP_WRITE, 0, bytes[i], 0, NULL, NULL,
                                      &err);
    if (err != CL_SUCCESS) st = FCL_CL_ERROR(err, "fft transpose: %zu bytes of pinned staging",
                                             bytes[i]);
  }
  if (st != FCL_OK) {
    fcl__slab_transpose_destroy(&t);
    return st;
  }
  *out = t;
  return FCL_OK;
}

/* The rectangle of the pre array holding peer q's split range. */
static void pre_rect(const fcl__slab_transpose *t, int q, size_t origin[3], size_t region[3],
                     size_t *row, size_t *slice) {
  const size_t *d = t->pre_dims;
  origin[0] = origin[1] = origin[2] = 0;
  region[0] = d[0] * t->cbytes;
  region[1] = d[1];
  region[2] = d[2];
  if (t->split == 0) {
    origin[0] = (size_t)t->split_lo[q] * t->cbytes;
    region[0] = (size_t)t->split_n[q] * t->cbytes;
  } else {
    origin[1] = (size_t)t->split_lo[q];
    region[1] = (size_t)t->split_n[q];
  }
  *row = d[0] * t->cbytes;
  *slice = *row * d[1];
}

fcl_status fcl__slab_transpose_run(fcl__slab_transpose *t, cl_mem pre, cl_mem slot,
                                   bool forward) {
  const int P = t->size;
  int *pre_count = t->counts, *pre_displ = t->counts + P, *slot_count = t->counts + 2 * P,
      *slot_displ = t->counts + 3 * P;
  char *pre_host = t->host[0], *slot_host = t->host[1];
  if (forward) {
    for (int q = 0; q < P; ++q) {
      if (!pre_count[q]) continue;
      size_t origin[3], region[3], row, slice, zero[3] = {0, 0, 0};
      pre_rect(t, q, origin, region, &row, &slice);
      FCL_CL_TRY(clEnqueueReadBufferRect(t->queue, pre, CL_FALSE, origin, zero, region, row,
                                         slice, region[0], region[0] * region[1],
                                         pre_host + (size_t)pre_displ[q] * t->cbytes, 0, NULL,
                                         NULL),
                 "fft transpose: read the block for rank %d", q);
    }
    FCL_CL_TRY(clFinish(t->queue), "fft transpose: read blocks");
    FCL_MPI_TRY(MPI_Alltoallv(pre_host, pre_count, pre_displ, t->complex, slot_host, slot_count,
                              slot_displ, t->complex, t->comm),
                "fft transpose: MPI_Alltoallv");
    FCL_CL_TRY(clEnqueueWriteBuffer(t->queue, slot, CL_TRUE, 0, t->slot_bytes, slot_host, 0,
                                    NULL, NULL),
               "fft transpose: write the slot");
    return FCL_OK;
  }
  FCL_CL_TRY(clEnqueueReadBuffer(t->queue, slot, CL_TRUE, 0, t->slot_bytes, slot_host, 0, NULL,
                                 NULL),
             "fft transpose: read the slot");
  FCL_MPI_TRY(MPI_Alltoallv(slot_host, slot_count, slot_displ, t->complex, pre_host, pre_count,
                            pre_displ, t->complex, t->comm),
              "fft transpose: MPI_Alltoallv");
  for (int q = 0; q < P; ++q) {
    if (!pre_count[q]) continue;
    size_t origin[3], region[3], row, slice, zero[3] = {0, 0, 0};
    pre_rect(t, q, origin, region, &row, &slice);
    FCL_CL_TRY(clEnqueueWriteBufferRect(t->queue, pre, CL_FALSE, origin, zero, region, row,
                                        slice, region[0], region[0] * region[1],
                                        pre_host + (size_t)pre_displ[q] * t->cbytes, 0, NULL,
                                        NULL),
               "fft transpose: write the block from rank %d", q);
  }
  FCL_CL_TRY(clFinish(t->queue), "fft transpose: write blocks");
  return FCL_OK;
}
