/* FFT plans: argument checks, backend choice, spectral slots, dispatch to the backend. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_impl.h"

const char *fcl_fft_backend_name(fcl_fft_backend backend) {
  switch (backend) {
    case FCL_FFT_AUTO: return "auto";
    case FCL_FFT_VKFFT: return "vkfft";
    case FCL_FFT_FFTW: return "fftw";
  }
  return "unknown";
}

fcl_status fcl_fft_backend_parse(const char *name, fcl_fft_backend *out) {
  FCL_CHECK_NULL(name, 1);
  FCL_CHECK_NULL(out, 2);
  for (int b = FCL_FFT_AUTO; b <= FCL_FFT_FFTW; ++b)
    if (strcmp(name, fcl_fft_backend_name((fcl_fft_backend)b)) == 0) {
      *out = (fcl_fft_backend)b;
      return FCL_OK;
    }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "unknown FFT backend '%s' (auto, vkfft, fftw)", name);
}

bool fcl_fft_backend_available(fcl_fft_backend backend) {
  bool vk = FLOWCL_ENABLE_VKFFT, fftw = FLOWCL_ENABLE_FFTW;
  return backend == FCL_FFT_VKFFT ? vk : backend == FCL_FFT_FFTW ? fftw : vk || fftw;
}

void fcl__fft_device_layout(const fcl_topology *t, fcl_dtype dtype, fcl_fft_layout *l) {
  const int dim = t->domain.dim;
  memset(l, 0, sizeof *l);
  for (int a = 0; a < 3; ++a) {
    l->global[a] = a < dim ? t->domain.resolution[a] : 1;
    l->order[a] = a;
  }
  l->global[0] = l->global[0] / 2 + 1;
  for (int a = 0; a < 3; ++a) l->local[a] = l->global[a];
  if (fcl__fft_pencils(t)) {
    fcl__fft_split(l->global[0], t->procs[1], t->coords[1], &l->local[0], &l->offset[0]);
    fcl__fft_split(l->global[1], t->procs[2], t->coords[2], &l->local[1], &l->offset[1]);
  } else if (t->size > 1) {
    fcl__fft_split(l->global[dim - 2], t->size, t->rank, &l->local[dim - 2], &l->offset[dim - 2]);
  }
  l->count = (size_t)(l->local[0] * l->local[1] * l->local[2]);
  /* one rank: rows padded to a multiple of 8 values (fft.h); the distributed schemes'
   * transposes and axis plans take contiguous rows */
  l->pitch = t->size == 1 ? (l->local[0] + 7) / 8 * 8 : l->local[0];
  l->bytes = (size_t)(l->pitch * l->local[1] * l->local[2]) * 2 * fcl_dtype_size(dtype);
  l->padded_reals = 2 * (size_t)(t->size == 1 ? l->pitch : l->global[0]) *
                    (size_t)(t->local[1] * t->local[2]);
}

/* 2D or 3D, x whole; slabs along the last axis or (3D) pencils (a topology without walls: those
 * are extended first, fft_walls.c). */
static fcl_status check_field(const fcl_topology *t, const char *name) {
  const int dim = t->domain.dim;
  if (dim < 2)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "fft: field '%s' is 1D; transforms are 2D or 3D", name);
  if (t->procs[0] != 1)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: field '%s' is split over %d x %d x %d ranks; distributed transforms "
                     "need axis 0 whole: slabs (procs 1 x 1 x P) or, in 3D, pencils "
                     "(1 x P1 x P2); redistribute with fcl_field_redistribute",
                     name, t->procs[0], t->procs[1], t->procs[2]);
  const int64_t *n = t->domain.resolution, nxc = n[0] / 2 + 1;
  if (fcl__fft_pencils(t)) {
    /* the row transpose splits the complex x axis over P1, the column one y over P2 */
    if (t->procs[1] > nxc || t->procs[2] > n[1])
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "fft: field '%s' on pencils %d x %d: the transposes split the %lld "
                       "complex points of axis 0 over %d ranks and the %lld points of axis 1 "
                       "over %d; use fewer ranks along axis %d",
                       name, t->procs[1], t->procs[2], (long long)nxc, t->procs[1], (long long)n[1],
                       t->procs[2], t->procs[1] > nxc ? 1 : 2);
    return FCL_OK;
  }
  /* Slabs: the transpose splits the second-to-last complex axis over the ranks. */
  int64_t split = dim == 2 ? nxc : n[1];
  if (t->size > split)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: field '%s' on %d ranks, more than the %lld "
                     "complex points of axis %d the transpose splits; pencils "
                     "(procs 1 x P1 x P2) split two axes",
                     name, t->size, (long long)split, dim - 2);
  return FCL_OK;
}

static bool cpu_device(fcl_queue *q) {
  fcl_device *dev;
  fcl_device_info info;
  if (fcl_queue_device(q, &dev) != FCL_OK || fcl_device_get_info(dev, &info) != FCL_OK)
    return false;
  return (info.type & FCL_DEVICE_CPU) != 0;
}

/* The backend and its layout; collective (fftw-mpi's split is compared on every rank). */
static fcl_status resolve(const fcl_topology *t, fcl_dtype dtype, fcl_queue *queue,
                          const char *name, fcl_fft_backend want, fcl_fft_layout *l,
                          fcl_fft_backend *got) {
  FCL_TRY(check_field(t, name));
  if (!fcl_fft_backend_available(want))
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "fft: backend '%s' is not built in (FLOWCL_ENABLE_%s)",
                     fcl_fft_backend_name(want), want == FCL_FFT_VKFFT ? "VKFFT" : "FFTW");
#if FLOWCL_ENABLE_FFTW
  bool fftw_fits = !fcl__fft_pencils(t) && fcl__fft_fftw_layout(t, dtype, l);
#else
  bool fftw_fits = false;
#endif
  if (want == FCL_FFT_FFTW && fcl__fft_pencils(t))
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: fftw-mpi takes slabs only, field '%s' is on pencils %d x %d; use "
                     "the vkfft backend",
                     name, t->procs[1], t->procs[2]);
  if (want == FCL_FFT_FFTW && !fftw_fits)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: fftw-mpi splits axis %d of field '%s' (%lld "
                     "points) in blocks of ceil(n / %d), not as the topology does; use a "
                     "resolution divisible by the ranks or the vkfft backend",
                     t->domain.dim - 1, name, (long long)t->domain.resolution[t->domain.dim - 1],
                     t->size);
  if (want == FCL_FFT_AUTO)
    want = fftw_fits && (cpu_device(queue) || !FLOWCL_ENABLE_VKFFT) ? FCL_FFT_FFTW : FCL_FFT_VKFFT;
  if (want == FCL_FFT_VKFFT && !FLOWCL_ENABLE_VKFFT)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: field '%s' needs the vkfft backend (fftw-mpi "
                     "cannot take its decomposition), which is not built in",
                     name);
  if (want == FCL_FFT_VKFFT) fcl__fft_device_layout(t, dtype, l);
  *got = want;
  return FCL_OK;
}

/* The backend, chosen for the domain with every walled axis extended (the scheme the FFTW
 * backend runs), the walled axes it transforms itself, and its layout of the domain with the
 * others extended. Collective. */
static fcl_status plan_backend(const fcl_field *like, fcl_fft_backend want, fcl_fft_layout *l,
                               fcl_fft_backend *got, unsigned *native) {
  fcl_topology *ext = NULL;
  FCL_TRY(fcl__fft_walls_topology(like, 0, &ext));
  fcl_status st = resolve(ext ? ext : like->topo, like->dtype, like->queue, like->name, want, l,
                          got);
  fcl_topology_destroy(&ext);
  FCL_TRY(st);
  *native = fcl__fft_walls_native(&like->topo->domain, *got);
  if (!*native) return FCL_OK;
  FCL_TRY(fcl__fft_walls_topology(like, *native, &ext));
  st = resolve(ext ? ext : like->topo, like->dtype, like->queue, like->name, *got, l, got);
  fcl_topology_destroy(&ext);
  return st;
}

fcl_status fcl_fft_layout_query(const fcl_field *like, fcl_fft_backend backend,
                                fcl_fft_layout *layout, fcl_fft_backend *resolved) {
  FCL_CHECK_NULL(like, 1);
  FCL_CHECK_NULL(layout, 3);
  fcl_fft_backend got = FCL_FFT_AUTO;
  unsigned native;
  FCL_TRY(plan_backend(like, backend, layout, &got, &native));
  if (resolved) *resolved = got;
  return FCL_OK;
}

fcl_status fcl__fft_agree(MPI_Comm comm, fcl_status st, const char *what) {
  int ok = st == FCL_OK, all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
  if (st == FCL_OK && !all)
    return FCL_ERROR(FCL_ERR_FFT, "fft: %s failed on another rank (see its error)", what);
  return st;
}

/* Components in one exchange where a component's transform is small (latency-bound: on PoCL,
 * 2 ranks x 16 MiB, 0.79 of the time one at a time); large ones are bandwidth-bound (two H200,
 * 128 MiB: 1.05) and would only pay the work array and staging per component. Decided from the
 * global spectral shape (of the domain extended by its walls), the same on every rank (the
 * exchanges are collective; a rank's own share differs by a row where the split is uneven). */
static int batch_size(const fcl_field *like, int nslots) {
  const fcl_domain *d = &like->topo->domain;
  double values = 1;
  for (int a = 0; a < d->dim; ++a) {
    double n = (double)(d->bc[a][0] == FCL_BC_PERIODIC ? d->resolution[a]
                                                       : 2 * (d->resolution[a] - 1));
    values *= a == 0 ? (double)((int64_t)n / 2 + 1) : n;
  }
  const double share = values * 2.0 * (double)like->itemsize / (double)like->topo->size;
  if (share > (double)FCL__FFT_BATCH_BYTES) return 1;
  return nslots < FCL__FFT_BATCH ? nslots : FCL__FFT_BATCH;
}

fcl_status fcl_fft_create(const fcl_field *like, fcl_fft_backend backend, int nslots,
                          fcl_pool *pool, fcl_fft **out) {
  FCL_CHECK_NULL(like, 1);
  FCL_CHECK_ARG(backend >= FCL_FFT_AUTO && backend <= FCL_FFT_FFTW, 2, "backend",
                "unknown backend");
  FCL_CHECK_ARG(nslots >= 1 && nslots <= 16, 3, "nslots", "must be 1 to 16");
  FCL_CHECK_NULL(pool, 4);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  fcl_fft *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft plan for '%s'", like->name);
  p->field_topo = like->topo;
  memcpy(p->field_padded, like->padded, sizeof p->field_padded);
  for (int a = 0; a < like->topo->domain.dim; ++a)
    p->has_walls |= like->topo->domain.bc[a][0] != FCL_BC_PERIODIC;
  fcl__fft_walls_domain(&like->topo->domain, 0, &p->spectral);
  /* walls the backend does not transform itself: it transforms the extended field
   * (fft_walls.c), up to one batch of components of it */
  unsigned native = 0;
  fcl_status st = plan_backend(like, backend, &p->layout, &p->backend, &native);
  if (st == FCL_OK) st = fcl__fft_walls_create(like, native, batch_size(like, nslots), &p->walls);
  st = fcl__fft_agree(like->topo->comm, st, "the walls' extended field");
  if (st == FCL_OK && p->walls) like = fcl__fft_walls_field(p->walls);
  if (st != FCL_OK) {
    fcl__fft_walls_destroy(&p->walls);
    free(p);
    return st;
  }
  p->topo = like->topo;
  p->context = fcl_context_retain(like->context);
  p->queue = like->queue;
  fcl_queue_retain(p->queue);
  p->dtype = like->dtype;
  p->real_size = like->itemsize;
  memcpy(p->padded, like->padded, sizeof p->padded);
  p->dim = like->topo->domain.dim;
  p->distributed = like->topo->size > 1;
  p->nslots = nslots;
  p->batch = batch_size(like, nslots);
  p->slots = calloc((size_t)nslots, sizeof *p->slots);
  if (!p->slots) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft plan for '%s'", like->name);
  const size_t stored = p->layout.bytes / p->real_size; /* reals of the spectral layout */
  size_t reals = stored > p->layout.padded_reals ? stored : p->layout.padded_reals;
  if (!reals) reals = 2;
  p->slot_bytes = reals * p->real_size;
  for (int s = 0; st == FCL_OK && s < nslots; ++s)
    st = fcl_array_create(pool, p->queue, p->dtype, 1, &reals, &p->slots[s]);
#if FLOWCL_ENABLE_VKFFT
  if (st == FCL_OK && p->backend == FCL_FFT_VKFFT) st = fcl__fft_vkfft_plan(p, pool);
#endif
#if FLOWCL_ENABLE_FFTW
  if (st == FCL_OK && p->backend == FCL_FFT_FFTW) st = fcl__fft_fftw_plan(p);
#endif
  /* Planning is collective: a rank that failed must not leave the others in a transform. */
  st = fcl__fft_agree(p->topo->comm, st, "planning");
  if (st != FCL_OK) {
    fcl_fft_destroy(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

void fcl_fft_destroy(fcl_fft **fft) {
  if (!fft || !*fft) return;
  fcl_fft *p = *fft;
  if (p->queue) fcl_queue_finish(p->queue);
  if (p->ops) p->ops->destroy(p->state);
  fcl__fft_walls_destroy(&p->walls);
  for (int s = 0; p->slots && s < p->nslots; ++s) fcl_array_destroy(&p->slots[s]);
  free(p->slots);
  fcl_queue_release(&p->queue);
  fcl_context_release(&p->context);
  free(p);
  *fft = NULL;
}

/* The field (argument fpos, fname) must be one the plan was made for, and slot (argument spos)
 * one of its slots. */
static fcl_status check_use(const fcl_fft *p, const fcl_field *f, int fpos, const char *fname,
                            int slot, int spos) {
  if (f->topo != p->field_topo || f->dtype != p->dtype || f->queue != p->queue ||
      memcmp(f->padded, p->field_padded, sizeof p->field_padded) != 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (%s): field '%s' is not on the plan's "
                     "topology, precision, ghosts and queue",
                     fpos, fname, f->name);
  if (slot < 0 || slot >= p->nslots)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (slot): %d, the plan has %d slot(s)",
                     spos, slot, p->nslots);
  return FCL_OK;
}

/* The walls' parity of component comp of f (fcl__fft_walls_parity; 0 without walls). */
static fcl_status parity(const fcl_fft *fft, const fcl_field *f, int comp, unsigned *odd) {
  *odd = 0;
  return fft->has_walls ? fcl__fft_walls_parity(f, comp, odd) : FCL_OK;
}

fcl_status fcl_fft_forward(fcl_fft *fft, const fcl_field *src, int comp, int slot) {
  FCL_CHECK_NULL(fft, 1);
  FCL_CHECK_NULL(src, 2);
  FCL_TRY(fcl__field_check_comp(src, comp, 3));
  FCL_TRY(check_use(fft, src, 2, "src", slot, 4));
  fcl_mem *buf = fcl_array_buffer(fft->slots[slot]);
  unsigned odd;
  FCL_TRY(parity(fft, src, comp, &odd));
  if (!fft->walls) return fft->ops->forward(fft, src, 1, &comp, &odd, &buf);
  const int at = 0;
  FCL_TRY(fcl__fft_walls_extend(fft->walls, src, comp, at));
  return fft->ops->forward(fft, fcl__fft_walls_field(fft->walls), 1, &at, &odd, &buf);
}

fcl_status fcl_fft_backward(fcl_fft *fft, int slot, fcl_field *dst, int comp) {
  FCL_CHECK_NULL(fft, 1);
  FCL_CHECK_NULL(dst, 3);
  FCL_TRY(fcl__field_check_comp(dst, comp, 4));
  FCL_TRY(check_use(fft, dst, 3, "dst", slot, 2));
  fcl_mem *buf = fcl_array_buffer(fft->slots[slot]);
  unsigned odd;
  FCL_TRY(parity(fft, dst, comp, &odd));
  if (!fft->walls) return fft->ops->backward(fft, 1, &buf, dst, &comp, &odd);
  const int at = 0;
  FCL_TRY(
      fft->ops->backward(fft, 1, &buf, (fcl_field *)fcl__fft_walls_field(fft->walls), &at, &odd));
  return fcl__fft_walls_restrict(fft->walls, at, dst, comp);
}

/* Every component of f with slots slot, slot + 1, ...: batches of the plan's size (the
 * arguments' positions and the field's name as check_use takes them). */
static fcl_status components(fcl_fft *fft, fcl_field *f, int fpos, const char *fname, int slot,
                             int spos, bool forward) {
  const int ncomp = f->ncomp;
  FCL_TRY(check_use(fft, f, fpos, fname, slot, spos));
  if (slot + ncomp > fft->nslots)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (slot): %d, but field '%s' has %d components and the plan %d "
                     "slots",
                     spos, slot, f->name, ncomp, fft->nslots);
  for (int c0 = 0; c0 < ncomp; c0 += fft->batch) {
    int comp[FCL__FFT_BATCH], n = ncomp - c0 < fft->batch ? ncomp - c0 : fft->batch;
    fcl_mem *buf[FCL__FFT_BATCH];
    unsigned odd[FCL__FFT_BATCH];
    for (int i = 0; i < n; ++i) {
      comp[i] = c0 + i;
      buf[i] = fcl_array_buffer(fft->slots[slot + c0 + i]);
      FCL_TRY(parity(fft, f, comp[i], &odd[i]));
    }
    if (!fft->walls) {
      FCL_TRY(forward ? fft->ops->forward(fft, f, n, comp, odd, buf)
                      : fft->ops->backward(fft, n, buf, f, comp, odd));
      continue;
    }
    /* walls: through the extended field's components 0 .. n - 1 */
    fcl_field *e = (fcl_field *)fcl__fft_walls_field(fft->walls);
    const int at[FCL__FFT_BATCH] = {0, 1, 2};
    for (int i = 0; forward && i < n; ++i)
      FCL_TRY(fcl__fft_walls_extend(fft->walls, f, comp[i], at[i]));
    FCL_TRY(forward ? fft->ops->forward(fft, e, n, at, odd, buf)
                    : fft->ops->backward(fft, n, buf, e, at, odd));
    for (int i = 0; !forward && i < n; ++i)
      FCL_TRY(fcl__fft_walls_restrict(fft->walls, at[i], f, comp[i]));
  }
  return FCL_OK;
}

fcl_status fcl_fft_forward_components(fcl_fft *fft, const fcl_field *src, int slot) {
  FCL_CHECK_NULL(fft, 1);
  FCL_CHECK_NULL(src, 2);
  return components(fft, (fcl_field *)src, 2, "src", slot, 3, true);
}

fcl_status fcl_fft_backward_components(fcl_fft *fft, int slot, fcl_field *dst) {
  FCL_CHECK_NULL(fft, 1);
  FCL_CHECK_NULL(dst, 3);
  return components(fft, dst, 3, "dst", slot, 2, false);
}

static fcl_status inplace(fcl_fft *fft, int slot, bool forward) {
  FCL_CHECK_NULL(fft, 1);
  if (slot < 0 || slot >= fft->nslots)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (slot): %d, the plan has %d slot(s)",
                     slot, fft->nslots);
  if (fft->has_walls)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: in-place transforms take periodic plans; this one has walls");
  return fft->ops->inplace(fft, fcl_array_buffer(fft->slots[slot]), forward);
}

fcl_status fcl_fft_forward_inplace(fcl_fft *fft, int slot) { return inplace(fft, slot, true); }
fcl_status fcl_fft_backward_inplace(fcl_fft *fft, int slot) { return inplace(fft, slot, false); }

const fcl_fft_layout *fcl_fft_layout_of(const fcl_fft *fft) { return fft ? &fft->layout : NULL; }
const fcl_domain *fcl_fft_domain(const fcl_fft *fft) { return fft ? &fft->spectral : NULL; }
fcl_fft_backend fcl_fft_backend_used(const fcl_fft *fft) {
  return fft ? fft->backend : FCL_FFT_AUTO;
}
bool fcl_fft_distributed(const fcl_fft *fft) { return fft && fft->distributed; }
const char *fcl_fft_description(const fcl_fft *fft) { return fft ? fft->description : NULL; }
int fcl_fft_nslots(const fcl_fft *fft) { return fft ? fft->nslots : 0; }
fcl_mem *fcl_fft_slot(const fcl_fft *fft, int slot) {
  return fft && slot >= 0 && slot < fft->nslots ? fcl_array_buffer(fft->slots[slot]) : NULL;
}
