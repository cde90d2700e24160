/* Vortex stretching, conservative formulation: d w_i / dt = d_j (u_i w_j), equal to (w . grad) u
 * for divergence-free u and w, with u frozen over dt. The fluxes u_i w_j are differentiated by
 * fourth-order centred differences, so the sum of w over a periodic grid is conserved to
 * rounding. With a viscosity nu, the right side also has nu lap w (fourth-order differences of
 * the same neighbours the fluxes read: diffusion with no pass of its own). The right side reads
 * w at neighbours, so every Runge-Kutta stage is a kernel over the whole field and the stage
 * values' ghosts are filled in between (host steps). Along the axes a rank holds whole and
 * periodic, the plane-tile kernels read periodic images of the interior instead: on one rank of
 * a periodic box no ghost of u, w or the stage values is read or filled; on slabs and pencils
 * only the ghosts of the split axes are (the exchanges leave the wrapping axes out). RK2, where
 * every split axis is periodic with 4 ghosts: the first stage also computes the ghost layers
 * along the split axes that the second reads (from its inputs' wider ghosts, 2 planes more per
 * face), and the stage values never cross ranks: one vector exchange less per call; otherwise
 * their ghosts are exchanged:
 *   RK2 (midpoint)  s = w + dt/2 F(w);  w <- w + dt F(s)
 *   RK3 (SSP)       s = w + dt F(w);  r = 3/4 w + 1/4 s + 1/4 dt F(s);
 *                   w <- 1/3 w + 2/3 r + 2/3 dt F(r)
 * Each stage is out = alpha base + beta a + gamma dt F(a). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

/* d_axis (u_c a_j) with fourth-order centred differences of the product. */
static void flux_derivative(char *buf, size_t size, int c, char a, int j, const fcl_field *f,
                            int axis) {
  const double dx = fcl_domain_spacing(fcl_topology_domain(fcl_field_topology(f)), axis);
  const bool f64 = fcl_field_dtype(f) == FCL_FLOAT64;
  char un[8], an[8], e[4][2][96];
  snprintf(un, sizeof un, "u%d", c);
  snprintf(an, sizeof an, "%c%d", a, j);
  static const int shifts[4] = {1, -1, 2, -2};
  for (int s = 0; s < 4; ++s) {
    int o[3] = {0, 0, 0};
    o[axis] = shifts[s];
    fcl__fd_element(e[s][0], sizeof e[s][0], un, f, o[0], o[1], o[2]);
    fcl__fd_element(e[s][1], sizeof e[s][1], an, f, o[0], o[1], o[2]);
  }
  snprintf(buf, size,
           f64 ? "(%.17e * (%s * %s - %s * %s) - %.17e * (%s * %s - %s * %s))"
               : "(%.9ef * (%s * %s - %s * %s) - %.9ef * (%s * %s - %s * %s))",
           2.0 / 3.0 / dx, e[0][0], e[0][1], e[1][0], e[1][1], 1.0 / 12.0 / dx, e[2][0], e[2][1],
           e[3][0], e[3][1]);
}

/* The host step between stages: refresh the ghosts of the stage values. */
static fcl_status exchange(void *user, fcl_queue *queue) {
  (void)queue;
  return fcl_field_ghosts_update(user);
}

/* The same along the axes a plane-tile kernel does not wrap. */
static fcl_status exchange_unwrapped(void *user, fcl_queue *queue) {
  (void)queue;
  return fcl_field_ghosts_update_unwrapped(user);
}

/* The same when the stages computed their ghost layers along the split axes: the rest only. */
static fcl_status fill_local(void *user, fcl_queue *queue) {
  (void)queue;
  return fcl_field_ghosts_update_local(user);
}

/* Whether the first RK2 stage can also cover the 2 ghost layers along the split axes that the
 * second reads, so that no stage value crosses ranks: every split axis periodic (a rank's ghosts
 * are its neighbours' interior, not a mirror) with 4 ghosts (the first stage's reach). Not RK3:
 * its grown second stage would read the first's values at edges that no local fill provides. */
static bool stages_grow(const fcl_topology *t, int rk_order) {
  const int *procs = fcl_topology_procs(t), *g = fcl_topology_ghosts(t);
  const fcl_domain *d = fcl_topology_domain(t);
  bool split = false;
  for (int a = 0; a < d->dim; ++a) {
    if (procs[a] == 1) continue;
    split = true;
    if (d->bc[a][0] != FCL_BC_PERIODIC || g[a] < 4) return false;
  }
  return split && rk_order == 2;
}

/* The first stage covers the 2 ghost layers along the split axes that the second reads. */
static void grow_first_stage(fcl_fd *op, const fcl_topology *t) {
  for (int a = 0; a < 3; ++a) op->grow[a] = fcl_topology_procs(t)[a] > 1 ? 2 : 0;
}

/* How the stages are made: plane-tile kernels where they apply (reading periodic images along
 * the axes of wrap, fcl__fd_planes_wraps), else generated ones; whether every stage so far reads
 * no ghosts, and whether every one is a plane-tile kernel. */
typedef struct {
  bool planes;
  unsigned wrap;
  bool wrapped, images;
  bool grown;          /* the first stage covers the ghost layers of the split axes */
  unsigned whole;      /* the axes this rank holds whole (bit a for axis a) */
  fcl_host_fn between; /* the stage values' ghost fill before a generated stage */
} stage_mode;

/* The instructions of a generated stage kernel (add_stage) into text. */
static void stage_text(fcl__str *text, const fcl_fd *op, const fcl_field *u, const fcl_field *a,
                       const fcl_field *base, const fcl_field *out, const char *letters,
                       double alpha, double beta, double gamma) {
  const bool f64 = fcl_field_dtype(u) == FCL_FLOAT64;
  const char *real = f64 ? "double" : "float", *fmt = f64 ? "%.17e" : "%.9ef";
  char d[1024], e[96], ca[40], cb[40], cg[40], cn[40];
  snprintf(ca, sizeof ca, fmt, alpha);
  snprintf(cb, sizeof cb, fmt, beta);
  snprintf(cg, sizeof cg, fmt, gamma);
  snprintf(cn, sizeof cn, fmt, op->nu);
  /* loads of the point's own values first, so that out may be base or a (in place) */
  for (int c = 0; c < 3; ++c) {
    fcl__fd_element(e, sizeof e, "a", a, 0, 0, 0);
    fcl__str_printf(text, "<%s> va%d = %c%d%s  {dep=}\n", real, c, letters[0], c, e + 1);
    if (base) fcl__str_printf(text, "<%s> vb%d = %c%d%s  {dep=}\n", real, c, letters[1], c, e + 1);
  }
  for (int c = 0; c < 3; ++c) {
    fcl__str_printf(text, "<%s> fx%d = ", real, c);
    for (int j = 0; j < 3; ++j) {
      flux_derivative(d, sizeof d, c, letters[0], j, u, j);
      fcl__str_printf(text, "%s%s", j ? " + " : "", d);
    }
    if (op->nu > 0) { /* + nu lap a_c */
      char an[8];
      snprintf(an, sizeof an, "%c%d", letters[0], c);
      fcl__str_printf(text, " + %s * (", cn);
      for (int j = 0; j < 3; ++j) {
        fcl__fd_second_derivative(d, sizeof d, an, a, j, 4);
        fcl__str_printf(text, "%s%s", j ? " + " : "", d);
      }
      fcl__str_printf(text, ")");
    }
    fcl__str_printf(text, "  {dep=}\n");
  }
  for (int c = 0; c < 3; ++c) {
    char on[8];
    snprintf(on, sizeof on, "%c%d", letters[2], c);
    fcl__fd_element(e, sizeof e, on, out, 0, 0, 0);
    char bterm[64] = "";
    if (base) snprintf(bterm, sizeof bterm, "%s * vb%d + ", ca, c);
    fcl__str_printf(text, "%s = %s%s * va%d + %s * dt * fx%d\n", e, bterm, cb, c, cg, c);
  }
}

/* One stage kernel: out = alpha base + beta a + gamma dt F(a) (base NULL when alpha = 0), the
 * plane-tile kernel if m->planes and it applies, else a generated one; after a first stage
 * (fill names the fill of a), the fill of a's ghosts before it unless it reads periodic images.
 * Arrays are named after their field (u, w, s, r: one name, one buffer across the list's
 * kernels, which share the parameters): a letter per field in the order a, base, out. */
static fcl_status add_stage(fcl_fd *op, stage_mode *m, const char *fill, const char *kernel,
                            fcl_field *u, fcl_field *a, fcl_field *base, fcl_field *out,
                            const char *letters, double alpha, double beta, double gamma) {
  /* each field once (out may be base: written through the same name); an extrapolating
   * operator's first stage also reads u_prev (p) and writes u_mid (m), its later stages read
   * their velocity u_mid as m */
  const bool extrapolates = op->extrap[0] && u == op->extrap[0];
  static const char names[] = "uwsrpm";
  fcl_field *const fields[6] = {
      u, a, base, out, extrapolates ? op->extrap[1] : NULL, extrapolates ? op->extrap[2] : NULL};
  const char roles[6] = {
      op->extrap[0] && !extrapolates ? 'm' : 'u', letters[0], letters[1], letters[2], 'p', 'm'};
  char array_names[6][3][3]; /* used during the call only (the list copies names) */
  fcl__fd_array arrays[18];
  size_t n = 0;
  for (int f = 0; f < 6; ++f) {
    if (!fields[f] || (f == 3 && out == base)) continue;
    const int id = (int)(strchr(names, roles[f]) - names);
    for (int c = 0; c < 3; ++c) {
      array_names[id][c][0] = roles[f];
      array_names[id][c][1] = (char)('0' + c);
      array_names[id][c][2] = '\0';
      arrays[n++] = (fcl__fd_array){array_names[id][c], fields[f], c};
    }
  }
  const int64_t *ln = fcl_topology_local_resolution(fcl_field_topology(u));
  /* bytes moved: u, a and base read, out written (base read and written when out is base);
   * extrapolating, u_prev read and u_mid written */
  const double bytes = ((base ? 12.0 : 9.0) + (extrapolates ? 6.0 : 0.0)) *
                       (double)(ln[0] * ln[1] * ln[2]) * (double)fcl_dtype_size(fcl_field_dtype(u));
  fcl_launcher *k = NULL;
  if (m->planes) {
    char pk[48];
    snprintf(pk, sizeof pk, "%s_planes", kernel);
    const fcl_status st = fcl__fd_planes_stage(op, pk, u, a, base, out, letters, alpha, beta, gamma,
                                               m->wrap, bytes, &k);
    if (st != FCL_OK && st != FCL_ERR_NOT_SUPPORTED) return st;
  }
  const bool wraps = k && m->wrap == 7u;
  m->wrapped &= wraps;
  m->images &= k != NULL;
  /* a plane-tile stage reads the stage values' ghosts along the axes it does not wrap: the split
   * axes' (none to fill where the first stage covered them) and a whole axis's between walls
   * (mirrored by the local fill) */
  const fcl_host_fn between = !k || !m->wrap                     ? m->between
                              : !m->grown                        ? exchange_unwrapped
                              : (m->wrap & m->whole) == m->whole ? NULL
                                                                 : fill_local;
  fcl_status st = FCL_OK;
  if (fill && !wraps && between) {
    fcl_launcher *host = NULL;
    st = fcl_launcher_create_host_enqueue(fill, between, a, &host);
    if (st == FCL_OK) {
      st = fcl_launcher_list_push(op->list, host);
      if (st != FCL_OK) fcl_launcher_destroy(&host); /* not taken */
    }
  }
  if (st != FCL_OK || !k) {
    fcl_launcher_destroy(&k);
    if (st == FCL_OK && op->extrap[0]) /* the generated kernels do not extrapolate */
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "%s: the plane-tile kernels do not apply here (a GPU and one rank holding "
                       "every periodic axis)",
                       kernel);
    if (st != FCL_OK) return st;
    fcl__str text = {0};
    stage_text(&text, op, u, a, base, out, letters, alpha, beta, gamma);
    st = fcl__fd_add_kernel(op, kernel, u, n, arrays, &text, bytes);
    free(text.s);
    return st;
  }
  return fcl__fd_push_kernel(op, k, n, arrays);
}

/* Whether the stages take the plane-tile kernels: FLOWCL_STRETCHING_KERNEL = planes or
 * generated, or auto (or unset): planes on GPUs (one H200, 512^3: see stretching_planes.c). */
static fcl_status want_planes(const fcl_field *u, bool *planes) {
  const char *v = getenv("FLOWCL_STRETCHING_KERNEL");
  if (v && *v && strcmp(v, "auto")) {
    if (strcmp(v, "planes") && strcmp(v, "generated"))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "FLOWCL_STRETCHING_KERNEL='%s': expected auto, planes or generated", v);
    *planes = !strcmp(v, "planes");
    return FCL_OK;
  }
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(fcl_field_queue(u), &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  *planes = info.type & FCL_DEVICE_GPU;
  return FCL_OK;
}

/* The kernel of a stage ("rk2_s1", ...), named apart with diffusion (the name is copied). */
static const char *stage_kernel(char *buf, size_t size, double nu, const char *stage) {
  snprintf(buf, size, "fd_stretch_%s_%s", nu > 0 ? "diff" : "cons", stage);
  return buf;
}

/* The fields and rk_order (argument pos) of a constructor without extrapolation. */
static fcl_status check_fields_rk_order(const fcl_field *u, const fcl_field *w, int rk_order,
                                        int pos) {
  FCL_TRY(fcl__fd_check_stretching(u, w));
  if (rk_order != 2 && rk_order != 3)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (rk_order): %d (2 or 3 for the "
                     "conservative formulation)",
                     pos, rk_order);
  return FCL_OK;
}

/* Every constructor (its arguments checked): nu = 0, stretching alone; nu > 0, with diffusion.
 * With un and prev, the extrapolating first half of share (made over u = u_mid): its stage
 * values are share's. */
static fcl_status create(fcl_field *u, fcl_field *w, double nu, int rk_order, fcl_pool *pool,
                         fcl_field *un, fcl_field *prev, fcl_fd *share, fcl_fd **out) {
  *out = NULL;
  fcl_fd *op = NULL;
  FCL_TRY(fcl__fd_new(un       ? nu > 0 ? "fd.stretching_diffusion_extrapolated"
                                        : "fd.stretching_conservative_extrapolated"
                      : nu > 0 ? "fd.stretching_diffusion"
                               : "fd.stretching_conservative",
                      &op));
  op->extrap[0] = un;
  op->extrap[1] = prev;
  op->extrap[2] = un ? u : NULL;
  op->order = 4;
  op->dt_param = "dt";
  op->dt_scale = 1;
  fcl_topology *t = fcl_field_topology(u);
  if (nu > 0) {
    op->nu = nu;
    op->max_dt = fcl__fd_diffusion_max_dt(w, nu, 4); /* RK2 and RK3 */
    op->irreversible = true;
  }
  char name[96], kn[32];
  snprintf(name, sizeof name, "%s.stages", fcl_field_name(w));
  fcl_field *s = NULL, *r = NULL;
  fcl_status st = FCL_OK;
  if (share) {
    op->scratch = share->scratch;
    op->scratch2 = share->scratch2;
    op->lender = share;
    ++share->borrowers;
  } else {
    st = fcl_field_create(t, fcl_field_context(w), fcl_field_queue(w), pool, name, 3,
                          fcl_field_dtype(w), &op->scratch);
  }
  s = op->scratch;
  if (st == FCL_OK && rk_order == 3 && !share) {
    snprintf(name, sizeof name, "%s.stages2", fcl_field_name(w));
    st = fcl_field_create(t, fcl_field_context(w), fcl_field_queue(w), pool, name, 3,
                          fcl_field_dtype(w), &op->scratch2);
    r = op->scratch2;
  }
  /* a grown first stage reads its inputs 4 deep along the split axes (the uses say 2, the
   * least on any axis: a ghost update fills every layer the topology has) */
  const bool grown = stages_grow(t, rk_order);
  stage_mode m = {.wrap = fcl__fd_planes_wraps(t),
                  .wrapped = true,
                  .images = true,
                  .grown = grown,
                  .between = grown ? fill_local : exchange};
  for (int a = 0; a < fcl_topology_domain(t)->dim; ++a)
    if (fcl_topology_procs(t)[a] == 1) m.whole |= 1u << a;
  r = op->scratch2;
  if (st == FCL_OK) st = want_planes(u, &m.planes);
  if (st == FCL_OK && un && !(m.planes && m.wrap == 7u))
    st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                   "%s: the extrapolating stage is a plane-tile kernel reading periodic images "
                   "(a GPU, FLOWCL_STRETCHING_KERNEL not generated, one rank holding every axis, "
                   "periodic)",
                   op->name);
  if (st == FCL_OK && un) { /* u_mid is written by the first stage before any stage reads it */
    st = fcl__fd_use(op, un, 2, true, false);
    if (st == FCL_OK) st = fcl__fd_use(op, prev, 2, true, false);
    if (st == FCL_OK) st = fcl__fd_use(op, u, 0, false, true);
  } else if (st == FCL_OK) {
    st = fcl__fd_use(op, u, 2, true, false);
  }
  if (st == FCL_OK) st = fcl__fd_use(op, w, 2, true, true);
  if (rk_order == 2) {
    if (grown) grow_first_stage(op, t);
    if (st == FCL_OK)
      st = add_stage(op, &m, NULL, stage_kernel(kn, sizeof kn, nu, un ? "rk2_s1x" : "rk2_s1"),
                     un ? un : u, w, NULL, s, "w-s", 0, 1, 0.5);
    if (st == FCL_OK)
      st = add_stage(op, &m, "ghosts(stage)", stage_kernel(kn, sizeof kn, nu, "rk2_s2"), u, s, w, w,
                     "sww", 1, 0, 1);
  } else {
    if (st == FCL_OK)
      st = add_stage(op, &m, NULL, stage_kernel(kn, sizeof kn, nu, un ? "rk3_s1x" : "rk3_s1"),
                     un ? un : u, w, NULL, s, "w-s", 0, 1, 1);
    if (st == FCL_OK)
      st = add_stage(op, &m, "ghosts(stage1)", stage_kernel(kn, sizeof kn, nu, "rk3_s2"), u, s, w,
                     r, "swr", 0.75, 0.25, 0.25);
    if (st == FCL_OK)
      st = add_stage(op, &m, "ghosts(stage2)", stage_kernel(kn, sizeof kn, nu, "rk3_s3"), u, r, w,
                     w, "rww", 1.0 / 3, 2.0 / 3, 2.0 / 3);
  }
  /* where every stage reads periodic images, no ghost of u or w is read: the problem inserts
   * no exchange for them; where they do along the axes held whole, none of those axes */
  for (int i = 0; st == FCL_OK && i < op->nuses; ++i) {
    if (m.wrapped) op->uses[i].ghosts = 0;
    op->uses[i].periodic_images = m.images && m.wrap;
  }
  if (st != FCL_OK) fcl_fd_destroy(&op);
  *out = op;
  return st;
}

fcl_status fcl_fd_stretching_conservative_create(fcl_field *u, fcl_field *w, int rk_order,
                                                 fcl_pool *pool, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(w, 2);
  FCL_CHECK_NULL(pool, 4);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_TRY(check_fields_rk_order(u, w, rk_order, 3));
  return create(u, w, 0, rk_order, pool, NULL, NULL, NULL, out);
}

fcl_status fcl_fd_stretching_diffusion_create(fcl_field *u, fcl_field *w, double nu, int rk_order,
                                              fcl_pool *pool, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(w, 2);
  FCL_CHECK_NULL(pool, 5);
  FCL_CHECK_NULL(out, 6);
  *out = NULL;
  if (!(nu > 0 && isfinite(nu)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (nu): %g (must be finite and > 0)", nu);
  FCL_TRY(check_fields_rk_order(u, w, rk_order, 4));
  return create(u, w, nu, rk_order, pool, NULL, NULL, NULL, out);
}

fcl_status fcl_fd_stretching_extrapolated_create(fcl_field *u, fcl_field *u_prev,
                                                 fcl_fd *stretching, fcl_fd **out) {
  FCL_CHECK_NULL(u, 1);
  FCL_CHECK_NULL(u_prev, 2);
  FCL_CHECK_NULL(stretching, 3);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  if (!stretching->scratch || stretching->extrap[0] || stretching->nuses < 2 ||
      strncmp(stretching->name, "fd.stretching_", 14))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (stretching): '%s' is not a conservative stretching (with or "
                     "without diffusion)",
                     stretching->name);
  fcl_field *u_mid = stretching->uses[0].field, *w = stretching->out;
  const fcl_field *const distinct[4] = {u, u_prev, u_mid, w};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (distinct[i] == distinct[j])
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "extrapolated stretching: u, u_prev, the stretching's velocity and "
                         "vorticity must be four fields ('%s' twice)",
                         fcl_field_name(distinct[i]));
  FCL_TRY(fcl__fd_check_stretching(u, w));
  FCL_TRY(fcl__fd_check_stretching(u_prev, w));
  return create(u_mid, w, stretching->nu, stretching->scratch2 ? 3 : 2, NULL, u, u_prev, stretching,
                out);
}
