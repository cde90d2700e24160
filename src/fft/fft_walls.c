/* Walls in FFT plans: a bounded axis of N points (both walls included, field.h) is transformed as
 * the periodic axis of its mirror image, 2 (N - 1) points over twice the length. A component is
 * extended odd about both walls where it is Dirichlet (the wall values taken as 0) and even
 * where it is Neumann; the periodic transform of the odd extension is the sine transform of the
 * N - 2 interior points (FFTW's RODFT00, times -2i), of the even one the cosine transform of the
 * N points (REDFT00). The walled axes a backend transforms itself (`native`: VkFFT's mirrored
 * column pass, fft_vkfft.c) stay as they are; the others are extended here, into a field the
 * periodic plan then transforms unchanged: its wavenumbers 2 pi / 2L * m are the walls' pi / L *
 * m, and a derivative turns a sine series into a cosine one by itself. Backward keeps the first
 * N points. Extensions and restrictions are box copies of kernels/field.cl (box_axpy, a stride of
 * -1 mirrors), kept per field buffer (its address and serial number) and component conditions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_columns_impl.h"
#include "fft_impl.h"

enum { CACHE = 24 };

typedef struct {
  fcl_mem *buf;       /* the caller's field buffer */
  uint64_t serial;    /* its fcl_mem_serial: a freed buffer's address can come back */
  int at;             /* component of the extended field */
  bool forward;       /* extend (true) or restrict */
  unsigned odd;       /* bit a: odd about the walls of axis a */
  fcl_launcher *list; /* the box copies */
} entry;

struct fcl__fft_walls {
  fcl_topology *topo; /* the extended domain (native walls kept), the field's ranks, no ghosts */
  fcl_field *field;   /* the extended components */
  bool walled[3];     /* the axes extended here */
  int64_t n[3];       /* the field's local points per axis (a walled axis: all N) */
  entry cache[CACHE];
  int next; /* the entry to replace next */
};

/* A box of a field's padded storage: from point `at` (storage indices), strides per axis. */
typedef struct {
  fcl_mem *buf;
  long off, s[3];
} box;

static box storage_box(const fcl_field *f, fcl_mem *buf, const int64_t *at) {
  const long px = (long)f->padded[0], pxy = px * (long)f->padded[1];
  return (box){buf, (long)(at[0] + at[1] * px + at[2] * pxy), {1, px, pxy}};
}

/* dst[box] = scale * src[box] over ext, appended to list (the extended field's program). */
static fcl_status push_copy(fcl__fft_walls *w, fcl_launcher *list, box dst, box src,
                            const int64_t *ext, double scale) {
  const fcl_field *e = w->field;
  if (!ext[0] || !ext[1] || !ext[2]) return FCL_OK;
  fcl_arg args[15] = {
      fcl_arg_buffer(0, dst.buf),
      fcl_arg_i64(1, dst.off),
      fcl_arg_i64(2, dst.s[0]),
      fcl_arg_i64(3, dst.s[1]),
      fcl_arg_i64(4, dst.s[2]),
      fcl_arg_buffer(5, src.buf),
      fcl_arg_i64(6, src.off),
      fcl_arg_i64(7, src.s[0]),
      fcl_arg_i64(8, src.s[1]),
      fcl_arg_i64(9, src.s[2]),
      fcl_arg_i32(10, (int32_t)ext[0]),
      fcl_arg_i32(11, (int32_t)ext[1]),
      fcl_arg_i32(12, (int32_t)ext[2]),
      e->dtype == FCL_FLOAT64 ? fcl_arg_f64(13, scale) : fcl_arg_f32(13, (float)scale),
      fcl_arg_i32(14, 0)};
  fcl_launch_config cfg = {
      .queue = e->queue,
      .work_dim = 3,
      .global = {(size_t)ext[0], (size_t)ext[1], (size_t)ext[2]},
      .bytes_per_launch = (size_t)(ext[0] * ext[1] * ext[2]) * e->itemsize * 2};
  char name[160];
  snprintf(name, sizeof name, "%s.fft_walls", e->name);
  fcl_launcher *l = NULL;
  FCL_TRY(fcl_launcher_create_kernel(e->program, name, "box_axpy", 15, args, 0, NULL, &cfg, &l));
  return fcl_launcher_list_push(list, l);
}

/* Planes 0 and N - 1 of walled axis a set to 0 over ext (a Dirichlet component's walls). */
static fcl_status push_zero_walls(fcl__fft_walls *w, fcl_launcher *list, const fcl_field *f,
                                  fcl_mem *buf, const int64_t *origin, const int64_t *ext, int a) {
  int64_t plane[3], at[3];
  memcpy(plane, ext, sizeof plane);
  plane[a] = 1;
  for (int side = 0; side < 2; ++side) {
    memcpy(at, origin, sizeof at);
    at[a] += side ? w->n[a] - 1 : 0;
    box b = storage_box(f, buf, at);
    FCL_TRY(push_copy(w, list, b, b, plane, 0.0));
  }
  return FCL_OK;
}

/* The copies extending f's component (its buffer buf) into extended component at: the
 * interior, then per walled axis the walls of an odd component zeroed and points N to
 * 2 N - 3 mirrored from N - 2 down to 1, over the axes extended so far. */
static fcl_status build_extend(fcl__fft_walls *w, fcl_launcher *list, const fcl_field *f,
                               fcl_mem *buf, int at, unsigned odd) {
  const fcl_field *e = w->field;
  fcl_mem *ebuf = fcl_field_buffer(e, at);
  const int64_t eo[3] = {e->topo->origin[0], e->topo->origin[1], e->topo->origin[2]};
  const int64_t fo[3] = {f->topo->origin[0], f->topo->origin[1], f->topo->origin[2]};
  int64_t ext[3];
  memcpy(ext, w->n, sizeof ext);
  FCL_TRY(push_copy(w, list, storage_box(e, ebuf, eo), storage_box(f, buf, fo), ext, 1.0));
  for (int a = 0; a < 3; ++a) {
    if (!w->walled[a]) continue;
    const bool is_odd = odd >> a & 1;
    if (is_odd) FCL_TRY(push_zero_walls(w, list, e, ebuf, eo, ext, a));
    int64_t to[3], from[3], run[3];
    memcpy(to, eo, sizeof to);
    memcpy(from, eo, sizeof from);
    memcpy(run, ext, sizeof run);
    to[a] += w->n[a];
    from[a] += w->n[a] - 2;
    run[a] = w->n[a] - 2;
    box src = storage_box(e, ebuf, from);
    src.s[a] = -src.s[a];
    FCL_TRY(push_copy(w, list, storage_box(e, ebuf, to), src, run, is_odd ? -1.0 : 1.0));
    ext[a] = 2 * (w->n[a] - 1);
  }
  return FCL_OK;
}

/* The copies restricting extended component at to f's component: the first N points of each
 * walled axis, an odd component's walls set to 0. */
static fcl_status build_restrict(fcl__fft_walls *w, fcl_launcher *list, const fcl_field *f,
                                 fcl_mem *buf, int at, unsigned odd) {
  const fcl_field *e = w->field;
  const int64_t eo[3] = {e->topo->origin[0], e->topo->origin[1], e->topo->origin[2]};
  const int64_t fo[3] = {f->topo->origin[0], f->topo->origin[1], f->topo->origin[2]};
  FCL_TRY(push_copy(w, list, storage_box(f, buf, fo), storage_box(e, fcl_field_buffer(e, at), eo),
                    w->n, 1.0));
  for (int a = 0; a < 3; ++a)
    if (w->walled[a] && odd >> a & 1) FCL_TRY(push_zero_walls(w, list, f, buf, fo, w->n, a));
  return FCL_OK;
}

fcl_status fcl__fft_walls_parity(const fcl_field *f, int comp, unsigned *odd) {
  *odd = 0;
  const fcl_domain *d = &f->topo->domain;
  for (int a = 0; a < d->dim; ++a) {
    if (d->bc[a][0] == FCL_BC_PERIODIC) continue;
    fcl_bc lo = f->bc[comp][a][0], hi = f->bc[comp][a][1];
    if (lo != hi)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "fft: component %d of field '%s' is %s on the lower wall of axis %d and "
                       "%s on the upper one; transforms need one condition on both walls",
                       comp, f->name, lo == FCL_BC_DIRICHLET ? "Dirichlet" : "Neumann", a,
                       hi == FCL_BC_DIRICHLET ? "Dirichlet" : "Neumann");
    if (lo == FCL_BC_DIRICHLET) *odd |= 1u << a;
  }
  return FCL_OK;
}

/* Run the cached copies for (buffer, at, direction, parity), building them on a miss. */
static fcl_status run(fcl__fft_walls *w, const fcl_field *f, int comp, int at, bool forward) {
  unsigned odd, extended = 0;
  FCL_TRY(fcl__fft_walls_parity(f, comp, &odd));
  for (int a = 0; a < 3; ++a) extended |= (unsigned)w->walled[a] << a;
  odd &= extended;
  fcl_mem *buf = fcl_field_buffer(f, comp);
  entry *hit = NULL;
  for (int i = 0; i < CACHE && !hit; ++i) {
    entry *c = &w->cache[i];
    if (c->list && c->buf == buf && c->serial == fcl_mem_serial(buf) && c->at == at &&
        c->forward == forward && c->odd == odd)
      hit = c;
  }
  if (!hit) {
    hit = &w->cache[w->next];
    w->next = (w->next + 1) % CACHE;
    fcl_launcher_destroy(&hit->list);
    *hit = (entry){buf, fcl_mem_serial(buf), at, forward, odd, NULL};
    FCL_TRY(
        fcl_launcher_create_list(forward ? "fft.walls.extend" : "fft.walls.restrict", &hit->list));
    fcl_status st = forward ? build_extend(w, hit->list, f, buf, at, odd)
                            : build_restrict(w, hit->list, f, buf, at, odd);
    /* every rank misses together (the calls are collective): none goes on into the transform
     * alone */
    st = fcl__fft_agree(w->topo->comm, st, "building the walls' copies");
    if (st != FCL_OK) {
      fcl_launcher_destroy(&hit->list);
      return st;
    }
  }
  return fcl_launcher_call(hit->list, w->field->queue, NULL, 0, NULL, NULL);
}

fcl_status fcl__fft_walls_extend(fcl__fft_walls *w, const fcl_field *src, int comp, int at) {
  return run(w, src, comp, at, true);
}

fcl_status fcl__fft_walls_restrict(fcl__fft_walls *w, int at, fcl_field *dst, int comp) {
  return run(w, dst, comp, at, false);
}

const fcl_field *fcl__fft_walls_field(const fcl__fft_walls *w) { return w->field; }

unsigned fcl__fft_walls_native(const fcl_domain *d, fcl_fft_backend backend) {
  unsigned native = 0;
  int n1, n2;
  for (int a = 1; a < d->dim && backend == FCL_FFT_VKFFT; ++a)
    if (d->bc[a][0] != FCL_BC_PERIODIC &&
        fcl__fft_columns_split(2 * (d->resolution[a] - 1), &n1, &n2))
      native |= 1u << a;
  return native;
}

void fcl__fft_walls_domain(const fcl_domain *d, unsigned native, fcl_domain *ext) {
  *ext = *d;
  for (int a = 0; a < d->dim; ++a) {
    if (d->bc[a][0] == FCL_BC_PERIODIC || native >> a & 1) continue;
    ext->resolution[a] = 2 * (d->resolution[a] - 1);
    ext->length[a] = 2 * d->length[a];
    ext->bc[a][0] = ext->bc[a][1] = FCL_BC_PERIODIC;
  }
}

fcl_status fcl__fft_walls_topology(const fcl_field *like, unsigned native, fcl_topology **out) {
  *out = NULL;
  const fcl_topology *t = like->topo;
  const fcl_domain *d = &t->domain;
  bool extend = false;
  for (int a = 0; a < d->dim; ++a) {
    if (d->bc[a][0] == FCL_BC_PERIODIC) continue;
    extend |= !(native >> a & 1);
    if (t->procs[a] != 1)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "fft: field '%s' has walls along axis %d, which is split over %d ranks; "
                       "a walled axis must be whole on every rank (axis 0 always is; axis 1 "
                       "with 3D slabs, procs 1 x 1 x P)",
                       like->name, a, t->procs[a]);
    if (d->resolution[a] < 3)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "fft: field '%s' has %lld points along walled axis %d; transforms need "
                       "at least 3 (two walls and an interior point)",
                       like->name, (long long)d->resolution[a], a);
  }
  if (!extend) return FCL_OK;
  fcl_domain ext;
  fcl__fft_walls_domain(d, native, &ext);
  /* the cartesian communicator with the field's process grid: the same coordinates per rank */
  return fcl_topology_create(t->comm, &ext, t->procs, NULL, out);
}

fcl_status fcl__fft_walls_create(const fcl_field *like, unsigned native, int ncomp,
                                 fcl__fft_walls **out) {
  *out = NULL;
  fcl_topology *topo = NULL;
  FCL_TRY(fcl__fft_walls_topology(like, native, &topo));
  if (!topo) return FCL_OK;
  fcl__fft_walls *w = calloc(1, sizeof *w);
  if (!w) {
    fcl_topology_destroy(&topo);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: walls of '%s'", like->name);
  }
  w->topo = topo;
  const fcl_topology *t = like->topo;
  for (int a = 0; a < 3; ++a) {
    w->walled[a] = a < t->domain.dim && t->domain.bc[a][0] != FCL_BC_PERIODIC && !(native >> a & 1);
    w->n[a] = t->local[a];
  }
  fcl_status st = fcl_field_create(w->topo, like->context, like->queue, like->pool, like->name,
                                   ncomp, like->dtype, &w->field);
  if (st != FCL_OK) {
    fcl__fft_walls_destroy(&w);
    return st;
  }
  *out = w;
  return FCL_OK;
}

void fcl__fft_walls_destroy(fcl__fft_walls **walls) {
  if (!walls || !*walls) return;
  fcl__fft_walls *w = *walls;
  for (int i = 0; i < CACHE; ++i) fcl_launcher_destroy(&w->cache[i].list);
  fcl_field_destroy(&w->field);
  fcl_topology_destroy(&w->topo);
  free(w);
  *walls = NULL;
}
