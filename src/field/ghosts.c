/* Ghost exchange plans: built once per field as three list launchers (wrap, begin, end) of
 * device box operations (kernels/field.cl box_axpy), copies to and from host staging, and the
 * host steps of the comm layer's point-to-point messages (p2p.c: one group per axis, on the
 * transport FLOWCL_TRANSPORT chooses for every exchange); three per field: every ghost, the
 * ghosts a rank fills alone (no message), and the accumulation. A face that is one run of
 * memory (the last split axis's) goes between the field and host staging as it is (on a device
 * transport, straight from one rank's field into the other's ghosts), others are packed on the
 * device. The leading axes that are periodic on this rank fill their ghosts by wrapping, edges
 * and corners included (ghosts_wrap: one launch per axis and up to three components on a GPU,
 * per axis and component on a CPU), in a list of their own before begin, which also runs alone
 * for readers that take periodic images along those axes; a plan that wraps every axis, or
 * whose messages go over the device transport (posted on the queue), on an in-order queue, has
 * no host step and returns without waiting. Calling them allocates nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

struct fcl__ghost_plan {
  fcl_field *f;
  bool accumulate;
  fcl_launcher *wrap, *begin, *end; /* begin runs after wrap, or alone (unwrapped) */
  fcl_array *device_stage;          /* packed faces on the device, from the field's pool */
  fcl__p2p *p2p;                    /* the messages across ranks; NULL: none */
  size_t stage_bytes, stage_used;
  bool device_only; /* no host step: the queue's order is enough */
  bool begun;       /* begun and not yet ended */
};

/* A box in an array: element (i, j, k) of the box at off + i * s[0] + j * s[1] + k * s[2]. */
typedef struct {
  fcl_mem *buf;
  long off, s[3];
} box;

static box padded_box(const fcl_field *f, fcl_mem *buf, const int64_t *origin) {
  long px = (long)f->padded[0], pxy = px * (long)f->padded[1];
  return (box){buf, origin[0] + origin[1] * px + origin[2] * pxy, {1, px, pxy}};
}

static fcl_status push_box(fcl__ghost_plan *p, fcl_launcher *list, const char *what, box dst,
                           box src, const int64_t *ext, double scale, bool add) {
  const fcl_field *f = p->f;
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
      f->dtype == FCL_FLOAT64 ? fcl_arg_f64(13, scale) : fcl_arg_f32(13, (float)scale),
      fcl_arg_i32(14, add)};
  fcl_launch_config cfg = {
      .queue = f->queue,
      .work_dim = 3,
      .global = {(size_t)ext[0], (size_t)ext[1], (size_t)ext[2]},
      .bytes_per_launch = (size_t)(ext[0] * ext[1] * ext[2]) * f->itemsize * (add ? 3 : 2)};
  char name[160];
  snprintf(name, sizeof name, "%s.%s", f->name, what);
  fcl_launcher *l = NULL;
  FCL_TRY(fcl_launcher_create_kernel(f->program, name, "box_axpy", 15, args, 0, NULL, &cfg, &l));
  return fcl_launcher_list_push(list, l);
}

/* The box of axis a's exchange: along the other axes, full padded extent for the axes before
 * a (their ghosts are already filled, which carries edges and corners; the padding beyond the
 * ghosts goes along, so that a face of the last axis stays one run of memory) and the interior
 * for those after; along a, width g from start (a storage index). */
static void face_box(const fcl_field *f, int a, int64_t start, int64_t g, int64_t *origin,
                     int64_t *ext) {
  const fcl_topology *t = f->topo;
  for (int b = 0; b < 3; ++b) {
    origin[b] = b < a ? 0 : t->origin[b];
    ext[b] = b < a ? (int64_t)f->padded[b] : t->local[b];
  }
  origin[a] = start;
  ext[a] = g;
}

/* Whether a box of the padded array is one run of memory; its first element's index. */
static bool box_contiguous(const fcl_field *f, const int64_t *origin, const int64_t *ext,
                           size_t *first) {
  *first = (size_t)(origin[0] + origin[1] * (int64_t)f->padded[0] +
                    origin[2] * (int64_t)(f->padded[0] * f->padded[1]));
  return ext[0] == (int64_t)f->padded[0] && (ext[1] == (int64_t)f->padded[1] || ext[2] == 1);
}

static size_t take_stage(fcl__ghost_plan *p, size_t bytes) {
  size_t at = p->stage_used;
  p->stage_used += bytes;
  return at;
}

/* A face that crosses ranks: the sent slab is packed into device staging (unless it is one run
 * of memory) and copied to host staging; the received one copied up and unpacked (or added). */
typedef struct {
  int64_t send_start, recv_start;
  int peer, send_tag, recv_tag;
} remote_face;

/* Axis a's faces through a transport whose staging is device memory (fcl__p2p_on_device): every
 * component packed into the group's staging, the messages posted, the received faces unpacked
 * (or added); every step enqueued on the field's queue. */
static fcl_status push_step(fcl__p2p_group *group, fcl__p2p_step step, const char *kind, int a,
                            fcl_launcher *list);
static fcl_status device_faces(fcl__ghost_plan *p, fcl__p2p_group *group, int a,
                               const remote_face *faces, int nfaces, const fcl__message *msg,
                               fcl_launcher *pre, fcl_launcher *postl) {
  fcl_field *f = p->f;
  const int64_t g = f->topo->ghosts[a];
  const char *kind = p->accumulate ? "accumulate" : "ghosts";
  int64_t origin[3], ext[3];
  char what[64];
  for (int side = 0; side < 2; ++side) /* 0: pack the sends, 1: unpack the receives */
    for (int i = 0; i < nfaces; ++i) {
      face_box(f, a, side ? faces[i].recv_start : faces[i].send_start, g, origin, ext);
      const size_t one = (size_t)(ext[0] * ext[1] * ext[2]) * f->itemsize,
                   at = msg[2 * i + side].at;
      snprintf(what, sizeof what, "%s.%s.%c%d", kind, side ? "unpack" : "pack", "xyz"[a], i);
      for (int c = 0; c < f->ncomp; ++c) {
        box stage = {group->stage,
                     (long)((at + (size_t)c * one) / f->itemsize),
                     {1, (long)ext[0], (long)(ext[0] * ext[1])}};
        box field = padded_box(f, fcl_field_buffer(f, c), origin);
        FCL_TRY(side ? push_box(p, postl, what, field, stage, ext, 1.0, p->accumulate)
                     : push_box(p, pre, what, stage, field, ext, 1.0, false));
      }
      if (side == 0 && i == nfaces - 1) FCL_TRY(push_step(group, FCL__P2P_POST, kind, a, pre));
    }
  return FCL_OK;
}

/* Axis a's faces, runs of memory, on a device transport (up to 3 components): each component's
 * face sent from the field and received into its ghosts as it is (tag 3 x the face's + the
 * component, so that the link pairs them in one order on both ranks); the messages posted on
 * the field's queue, nothing to unpack. */
static fcl_status direct_faces(fcl__ghost_plan *p, int a, const remote_face *faces, int nfaces,
                               fcl_launcher *pre) {
  fcl_field *f = p->f;
  const int64_t g = f->topo->ghosts[a];
  int64_t origin[3], ext[3];
  _Static_assert(2 * 2 * 3 <= FCL__P2P_MAX_MESSAGES, "two faces, both ways, three components");
  fcl__message msg[FCL__P2P_MAX_MESSAGES];
  int n = 0;
  for (int i = 0; i < nfaces; ++i)
    for (int side = 0; side < 2; ++side) { /* 0: the send, 1: the receive */
      size_t first;
      face_box(f, a, side ? faces[i].recv_start : faces[i].send_start, g, origin, ext);
      box_contiguous(f, origin, ext, &first);
      const size_t one = (size_t)(ext[0] * ext[1] * ext[2]) * f->itemsize;
      for (int c = 0; c < f->ncomp; ++c)
        msg[n++] = (fcl__message){faces[i].peer,
                                  3 * (side ? faces[i].recv_tag : faces[i].send_tag) + c,
                                  !side,
                                  one,
                                  first * f->itemsize,
                                  fcl_field_buffer(f, c)};
    }
  fcl__p2p_group *group = NULL;
  FCL_TRY(fcl__p2p_group_create(p->p2p, n, msg, &group));
  return push_step(group, FCL__P2P_POST, "ghosts", a, pre);
}

/* The transport's host step of an axis's group into list, where it has one. */
static fcl_status push_step(fcl__p2p_group *group, fcl__p2p_step step, const char *kind, int a,
                            fcl_launcher *list) {
  static const char *const names[FCL__P2P_STEPS] = {"reuse", "post", "wait", "release"};
  char what[64];
  snprintf(what, sizeof what, "%s.%s.%c", kind, names[step], "xyz"[a]);
  fcl_launcher *l = NULL;
  FCL_TRY(fcl__p2p_launcher(group, step, what, &l));
  return l ? fcl_launcher_list_push(list, l) : FCL_OK;
}

/* Every component's steps of axis a; across ranks, one message per face carries all the
 * components (packed one after the other). */
static fcl_status axis_steps(fcl__ghost_plan *p, int a, fcl_launcher *pre, fcl_launcher *postl) {
  fcl_field *f = p->f;
  const fcl_topology *t = f->topo;
  const int64_t g = t->ghosts[a], n = t->local[a], o = t->origin[a];
  const int nc = f->ncomp;
  const bool self = t->procs[a] == 1 && t->domain.bc[a][0] == FCL_BC_PERIODIC;
  int64_t origin[3], ext[3], src_origin[3], dummy[3];
  char what[64];
  remote_face faces[2];
  int nfaces = 0;
  for (int side = 0; side < 2; ++side) {
    /* forward: the slab next to this face goes out, the ghost of this face comes in;
     * accumulate: the ghost goes out, the received values are added next to the face */
    int64_t ghost = side == 0 ? o - g : o + n, inner = side == 0 ? o : o + n - g;
    int peer = t->neighbour[a][side];
    snprintf(what, sizeof what, "%s.%c%s", p->accumulate ? "accumulate" : "ghosts", "xyz"[a],
             side ? "+" : "-");
    if (self) {
      /* periodic on one rank: the face's ghost stands for the other side's interior */
      int64_t partner = side == 0 ? o + n - g : o; /* interior slab the ghost copies */
      face_box(f, a, p->accumulate ? partner : ghost, g, origin, ext);
      face_box(f, a, p->accumulate ? ghost : partner, g, src_origin, dummy);
      for (int c = 0; c < nc; ++c) {
        fcl_mem *buf = fcl_field_buffer(f, c);
        FCL_TRY(push_box(p, pre, what, padded_box(f, buf, origin), padded_box(f, buf, src_origin),
                         ext, 1.0, p->accumulate));
      }
    } else if (peer == MPI_PROC_NULL) {
      /* a wall: mirror about the wall point w (ghost w -/+ 1 + m <-> interior w +/- 1 + m) */
      int64_t w = side == 0 ? o : o + n - 1, step = side == 0 ? -1 : 1;
      face_box(f, a, w + step, g, origin, ext);       /* ghost run, walking away from the wall */
      face_box(f, a, w - step, g, src_origin, dummy); /* interior run, walking inwards */
      for (int c = 0; c < nc; ++c) {
        const double sign = f->bc[c][a][side] == FCL_BC_DIRICHLET ? -1.0 : 1.0;
        fcl_mem *buf = fcl_field_buffer(f, c);
        box gb = padded_box(f, buf, origin), ib = padded_box(f, buf, src_origin);
        gb.s[a] *= step;
        ib.s[a] *= -step;
        FCL_TRY(push_box(p, pre, what, p->accumulate ? ib : gb, p->accumulate ? gb : ib, ext, sign,
                         p->accumulate));
      }
    } else {
      faces[nfaces++] = (remote_face){p->accumulate ? ghost : inner, p->accumulate ? inner : ghost,
                                      peer, 2 * a + side, 2 * a + 1 - side};
    }
  }
  if (!nfaces) return FCL_OK;
  /* faces that are runs of memory (the last split axis's) go between the field and host
   * memory as they are; others are packed into device staging and unpacked from it */
  bool runs = true;
  size_t first;
  for (int i = 0; i < nfaces; ++i) {
    face_box(f, a, faces[i].send_start, g, origin, ext);
    runs = runs && box_contiguous(f, origin, ext, &first);
    face_box(f, a, faces[i].recv_start, g, origin, ext);
    runs = runs && box_contiguous(f, origin, ext, &first);
  }
  const char *kind = p->accumulate ? "accumulate" : "ghosts";
  /* on a device transport such faces go straight from the field into the peer's ghosts, a
   * message per component, no kernel (a sum needs the staging) */
  if (runs && !p->accumulate && fcl__p2p_on_device(p->p2p) && nc <= 3)
    return direct_faces(p, a, faces, nfaces, pre);
  /* one message each way per face, every component in it: the group of this axis */
  face_box(f, a, 0, g, origin, ext);
  const size_t one = (size_t)(ext[0] * ext[1] * ext[2]) * f->itemsize, bytes = one * (size_t)nc;
  fcl__message msg[4];
  for (int i = 0; i < nfaces; ++i) {
    msg[2 * i] = (fcl__message){faces[i].peer, faces[i].send_tag,    true,
                                bytes,         take_stage(p, bytes), NULL};
    msg[2 * i + 1] = (fcl__message){faces[i].peer, faces[i].recv_tag,    false,
                                    bytes,         take_stage(p, bytes), NULL};
  }
  fcl__p2p_group *group = NULL;
  FCL_TRY(fcl__p2p_group_create(p->p2p, 2 * nfaces, msg, &group));
  fcl_mem *stage_buf = fcl_array_buffer(p->device_stage);
  fcl_launcher *l = NULL;
  FCL_TRY(push_step(group, FCL__P2P_REUSE, kind, a, pre));
  if (fcl__p2p_on_device(p->p2p)) /* the transport's staging is device memory: pack there */
    return device_faces(p, group, a, faces, nfaces, msg, pre, postl);
  for (int i = 0; i < nfaces; ++i) { /* pack and send */
    face_box(f, a, faces[i].send_start, g, origin, ext);
    box_contiguous(f, origin, ext, &first);
    const size_t at = msg[2 * i].at;
    char *host = group->host[2 * i];
    snprintf(what, sizeof what, "%s.pack.%c%d", kind, "xyz"[a], i);
    for (int c = 0; c < nc; ++c) {
      if (runs) {
        FCL_TRY(fcl_launcher_create_copy_d2h(what, fcl_field_buffer(f, c), first * f->itemsize,
                                             host + (size_t)c * one, one, &l));
        FCL_TRY(fcl_launcher_list_push(pre, l));
        continue;
      }
      box stage = {stage_buf,
                   (long)((at + (size_t)c * one) / f->itemsize),
                   {1, (long)ext[0], (long)(ext[0] * ext[1])}};
      FCL_TRY(push_box(p, pre, what, stage, padded_box(f, fcl_field_buffer(f, c), origin), ext, 1.0,
                       false));
    }
    if (!runs) {
      FCL_TRY(fcl_launcher_create_copy_d2h(what, stage_buf, at, host, bytes, &l));
      FCL_TRY(fcl_launcher_list_push(pre, l));
    }
  }
  FCL_TRY(push_step(group, FCL__P2P_POST, kind, a, pre));
  FCL_TRY(push_step(group, FCL__P2P_COMPLETE, kind, a, postl));
  for (int i = 0; i < nfaces; ++i) { /* copy up and unpack */
    face_box(f, a, faces[i].recv_start, g, origin, ext);
    box_contiguous(f, origin, ext, &first);
    const size_t at = msg[2 * i + 1].at;
    const char *host = group->host[2 * i + 1];
    snprintf(what, sizeof what, "%s.unpack.%c%d", kind, "xyz"[a], i);
    if (runs && !p->accumulate) { /* straight into the ghosts */
      for (int c = 0; c < nc; ++c) {
        FCL_TRY(fcl_launcher_create_copy_h2d(what, host + (size_t)c * one, fcl_field_buffer(f, c),
                                             first * f->itemsize, one, &l));
        FCL_TRY(fcl_launcher_list_push(postl, l));
      }
      continue;
    }
    FCL_TRY(fcl_launcher_create_copy_h2d(what, host, stage_buf, at, bytes, &l));
    FCL_TRY(fcl_launcher_list_push(postl, l));
    for (int c = 0; c < nc; ++c) {
      box stage = {stage_buf,
                   (long)((at + (size_t)c * one) / f->itemsize),
                   {1, (long)ext[0], (long)(ext[0] * ext[1])}};
      FCL_TRY(push_box(p, postl, what, padded_box(f, fcl_field_buffer(f, c), origin), stage, ext,
                       1.0, p->accumulate));
    }
  }
  return push_step(group, FCL__P2P_RELEASE, kind, a, postl);
}

/* The number of leading axes whose forward ghosts ghosts_wrap fills: periodic, held whole by
 * this rank, and at least as long as their ghosts (a wrapped index lands inside). A periodic
 * axis held whole after a split one keeps the per-side box copies (axes chain in order). */
static int wrapped_axes(const fcl_field *f) {
  const fcl_topology *t = f->topo;
  int m = 0;
  while (m < t->domain.dim && t->procs[m] == 1 && t->domain.bc[m][0] == FCL_BC_PERIODIC &&
         t->local[m] >= t->ghosts[m])
    ++m;
  return m;
}

static size_t pow2_at_least(int64_t v, size_t cap) {
  size_t p = 1;
  while (p < cap && (int64_t)p < v) p *= 2;
  return p;
}

/* The ghosts of the first m axes, one launch per axis and three components on a GPU, per axis
 * and component on a CPU (see ghosts_wrap in field.cl). On a GPU, work-groups of up to 64
 * points along x and 256 in all, the global range rounded up to them (the kernel drops the
 * points past the group): left to the driver, the x faces (4 points along x) may get
 * work-groups of a few items. A CPU device (PoCL) does best with its own choice (64^3, one
 * rank: 66-89 us an exchange against 92-96 us). */
static fcl_status push_wrap(fcl__ghost_plan *p, int m) {
  const fcl_field *f = p->f;
  const fcl_topology *t = f->topo;
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(f->queue, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  const bool gpu = info.type & FCL_DEVICE_GPU;
  const int batch = gpu ? 3 : 1; /* components per launch (finding its component divides) */
  int64_t n[3], g[3];
  for (int b = 0; b < 3; ++b) {
    n[b] = t->local[b];
    g[b] = t->ghosts[b];
  }
  for (int a = 0; a < m; ++a) {
    if (!g[a]) continue;
    int64_t e[3], w[3]; /* work-items (the axes below a: whole padded rows), points written */
    for (int b = 0; b < 3; ++b) {
      e[b] = b < a ? (int64_t)f->padded[b] : b == a ? 2 * g[b] : n[b];
      w[b] = b < a ? n[b] + 2 * g[b] : e[b];
    }
    const size_t l0 = gpu ? pow2_at_least(e[0], 64) : 1,
                 l1 = gpu ? pow2_at_least(e[1], 256 / l0) : 1;
    fcl_launch_config cfg = {.queue = f->queue,
                             .work_dim = 3,
                             .local = {gpu ? l0 : 0, gpu ? l1 : 0, gpu ? 1 : 0},
                             .global = {(size_t)(e[0] + (int64_t)l0 - 1) / l0 * l0,
                                        (size_t)(e[1] + (int64_t)l1 - 1) / l1 * l1, (size_t)e[2]},
                             .bytes_per_launch = (size_t)(w[0] * w[1] * w[2]) * f->itemsize * 2};
    char name[160];
    snprintf(name, sizeof name, "%s.ghosts.wrap.%c", f->name, "xyz"[a]);
    for (int c = 0; c < f->ncomp; c += batch) {
      const int nc = f->ncomp - c < batch ? f->ncomp - c : batch;
      fcl_mem *u[3];
      for (int i = 0; i < 3; ++i) u[i] = fcl_field_buffer(f, c + (i < nc ? i : 0));
      fcl_launch_config one = cfg;
      one.global[2] *= (size_t)nc;
      one.bytes_per_launch *= (size_t)nc;
      fcl_arg args[14] = {fcl_arg_buffer(0, u[0]),
                          fcl_arg_buffer(1, u[1]),
                          fcl_arg_buffer(2, u[2]),
                          fcl_arg_i32(3, nc),
                          fcl_arg_i32(4, a),
                          fcl_arg_i32(5, (int32_t)n[0]),
                          fcl_arg_i32(6, (int32_t)n[1]),
                          fcl_arg_i32(7, (int32_t)n[2]),
                          fcl_arg_i32(8, (int32_t)g[0]),
                          fcl_arg_i32(9, (int32_t)g[1]),
                          fcl_arg_i32(10, (int32_t)g[2]),
                          fcl_arg_i32(11, t->origin[0]),
                          fcl_arg_i32(12, t->origin[1]),
                          fcl_arg_i32(13, t->origin[2])};
      fcl_launcher *l = NULL;
      FCL_TRY(
          fcl_launcher_create_kernel(f->program, name, "ghosts_wrap", 14, args, 0, NULL, &one, &l));
      fcl_status st = fcl_launcher_list_push(p->wrap, l);
      if (st != FCL_OK) {
        fcl_launcher_destroy(&l);
        return st;
      }
    }
  }
  return FCL_OK;
}

/* Staging bytes: two messages per face of each axis, for the largest face box. */
static size_t stage_size(const fcl_field *f) {
  size_t total = 0;
  for (int a = 0; a < 3; ++a) {
    int64_t origin[3], ext[3];
    face_box(f, a, 0, f->topo->ghosts[a], origin, ext);
    total += 4 * (size_t)(ext[0] * ext[1] * ext[2]) * f->itemsize;
  }
  return total * (size_t)f->ncomp;
}

fcl_status fcl__ghost_plan_create(fcl_field *f, fcl_pool *pool, bool accumulate, bool local,
                                  fcl__ghost_plan **out) {
  *out = NULL;
  fcl__ghost_plan *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "field '%s': ghost plan", f->name);
  p->f = f;
  p->accumulate = accumulate;
  p->stage_bytes = local ? 0 : stage_size(f);
  fcl__transport kind;
  fcl_status st = fcl__transport_from_env(&kind);
  if (st == FCL_OK && p->stage_bytes && f->topo->size > 1) { /* messages across ranks */
    size_t bytes = p->stage_bytes;
    st = fcl__p2p_create(f->context, f->queue, f->topo->comm, bytes, kind, &p->p2p);
    if (st == FCL_OK && !fcl__p2p_on_device(p->p2p)) /* packing for host staging */
      st = fcl_array_create(pool, f->queue, FCL_UINT8, 1, &bytes, &p->device_stage);
  }
  char name[160];
  const char *kind_name = accumulate ? "accumulate" : local ? "ghosts_local" : "ghosts";
  snprintf(name, sizeof name, "%s.%s.begin", f->name, kind_name);
  if (st == FCL_OK) st = fcl_launcher_create_list(name, &p->begin);
  snprintf(name, sizeof name, "%s.%s.end", f->name, kind_name);
  if (st == FCL_OK) st = fcl_launcher_create_list(name, &p->end);
  snprintf(name, sizeof name, "%s.%s.wrap", f->name, kind_name);
  if (st == FCL_OK) st = fcl_launcher_create_list(name, &p->wrap);
  /* the leading axes that wrap on this rank in one pass; every other axis but the last
   * completes inside begin, the last one's messages complete in end */
  const int dim = f->topo->domain.dim, wrapped = accumulate ? 0 : wrapped_axes(f);
  if (st == FCL_OK && wrapped) st = push_wrap(p, wrapped);
  /* nothing but kernels: an in-order queue orders them before what follows, no wait needed */
  if (st == FCL_OK && (wrapped == dim || local || !p->p2p || fcl__p2p_on_device(p->p2p)))
    p->device_only = !(fcl_queue_flags(f->queue) & FCL_QUEUE_OUT_OF_ORDER);
  fcl_launcher *tail = NULL;
  for (int i = wrapped; st == FCL_OK && i < dim; ++i) {
    int a = accumulate ? dim - 1 - i : i;
    if (!f->topo->ghosts[a] || (local && f->topo->procs[a] > 1)) continue;
    if (tail) st = fcl_launcher_list_push(p->begin, tail);
    tail = NULL;
    if (st == FCL_OK) st = fcl_launcher_create_list("axis", &tail);
    if (st == FCL_OK) st = axis_steps(p, a, p->begin, tail);
  }
  if (st == FCL_OK && tail) {
    st = fcl_launcher_list_push(p->end, tail);
    tail = NULL;
  }
  fcl_launcher_destroy(&tail);
  if (st != FCL_OK) {
    fcl__ghost_plan_destroy(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

void fcl__ghost_plan_destroy(fcl__ghost_plan **plan) {
  if (!plan || !*plan) return;
  fcl__ghost_plan *p = *plan;
  fcl_launcher_destroy(&p->wrap);
  fcl_launcher_destroy(&p->begin);
  fcl_launcher_destroy(&p->end);
  fcl__p2p_destroy(&p->p2p);
  fcl_array_destroy(&p->device_stage);
  free(p);
  *plan = NULL;
}

fcl_status fcl__ghost_plan_rebind(fcl__ghost_plan *p, size_t n, fcl_mem *const *old,
                                  fcl_mem *const *now) {
  fcl__p2p_rebind(p->p2p, n, old, now); /* the direct faces' messages */
  FCL_TRY(fcl_launcher_rebind(p->wrap, n, old, now));
  FCL_TRY(fcl_launcher_rebind(p->begin, n, old, now));
  return fcl_launcher_rebind(p->end, n, old, now);
}

/* l after the event `after` (NULL: none), waited for on the host. */
static fcl_status run(fcl_launcher *l, fcl_queue *q, fcl_event *after) {
  fcl_event *ev = NULL;
  FCL_TRY(fcl_launcher_call(l, q, NULL, after ? 1 : 0, after ? &after : NULL, &ev));
  if (!ev) return FCL_OK;
  fcl_status st = fcl_events_wait(1, &ev);
  fcl_event_release(&ev);
  return st;
}

/* every: the wrapping of the leading axes, then the rest; else the rest alone */
static fcl_status plan_begin(fcl__ghost_plan *p, bool every) {
  fcl_queue *q = p->f->queue;
  fcl_event *wrapped = NULL;
  p->begun = true;
  if (every)
    FCL_TRY(fcl_launcher_call(p->wrap, q, NULL, 0, NULL, p->device_only ? NULL : &wrapped));
  if (p->device_only) return fcl_launcher_call(p->begin, q, NULL, 0, NULL, NULL);
  fcl_status st = run(p->begin, q, wrapped);
  fcl_event_release(&wrapped);
  return st;
}
static fcl_status plan_end(fcl__ghost_plan *p) {
  p->begun = false;
  if (p->device_only) return fcl_launcher_call(p->end, p->f->queue, NULL, 0, NULL, NULL);
  return run(p->end, p->f->queue, NULL);
}

bool fcl__ghost_plan_begun(const fcl__ghost_plan *p) { return p && p->begun; }

static fcl_status add_statistics(const fcl__ghost_plan *p, fcl_launch_stats *sum) {
  fcl_launcher *lists[3] = {p ? p->wrap : NULL, p ? p->begin : NULL, p ? p->end : NULL};
  for (int i = 0; i < 3; ++i) {
    if (!lists[i]) continue;
    fcl_launch_stats s;
    FCL_TRY(fcl_launcher_statistics(lists[i], &s));
    fcl_launch_stats_add(sum, &s);
  }
  return FCL_OK;
}

fcl_status fcl_field_ghost_statistics(fcl_field *f, fcl_launch_stats *stats) {
  FCL_CHECK_NULL(f, 1);
  FCL_CHECK_NULL(stats, 2);
  fcl_launch_stats sum = {0};
  FCL_TRY(add_statistics(f->ghosts, &sum));
  FCL_TRY(add_statistics(f->local, &sum));
  FCL_TRY(add_statistics(f->accumulate, &sum));
  *stats = sum;
  return FCL_OK;
}

fcl_status fcl_field_ghosts_begin(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  return plan_begin(f->ghosts, true);
}
fcl_status fcl_field_ghosts_begin_unwrapped(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  return plan_begin(f->ghosts, false);
}
fcl_status fcl_field_ghosts_end(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  return plan_end(f->ghosts);
}
fcl_status fcl_field_ghosts_update(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  FCL_TRY(plan_begin(f->ghosts, true));
  return plan_end(f->ghosts);
}
fcl_status fcl_field_ghosts_update_unwrapped(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  FCL_TRY(plan_begin(f->ghosts, false));
  return plan_end(f->ghosts);
}
fcl_status fcl_field_ghosts_update_local(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  FCL_TRY(plan_begin(f->local, true));
  return plan_end(f->local);
}
fcl_status fcl_field_ghosts_accumulate(fcl_field *f) {
  FCL_CHECK_NULL(f, 1);
  FCL_TRY(plan_begin(f->accumulate, true));
  return plan_end(f->accumulate);
}
