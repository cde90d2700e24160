/* Local transposes of a field component on the device: a kernel generated with the codegen
 * layer (tiles through local memory when the contiguous axis changes), tuned with fcl_tune,
 * and cached in the destination field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

enum { MAX_CACHED = 8 };

typedef struct {
  int perm[3];
  size_t src_padded[3];
  int src_origin[3];
  fcl_launcher *launcher;
  fcl_param_set *params;
} cached;

typedef struct {
  cached entry[MAX_CACHED];
  int n;
} transpose_cache;

void fcl__transpose_cache_free(fcl_field *f) {
  transpose_cache *c = f->transposes;
  if (!c) return;
  for (int i = 0; i < c->n; ++i) {
    fcl_param_set_destroy(&c->entry[i].params);
    fcl_launcher_destroy(&c->entry[i].launcher);
  }
  free(c);
  f->transposes = NULL;
}

static const char *const iname[3] = {"i", "j", "k"};

/* dst[axis a] = src[axis perm[a]] over src's interior. */
static fcl_status make_builder(const fcl_field *src, const fcl_field *dst, const int *perm,
                               fcl_kbuilder **out) {
  const fcl_topology *ts = src->topo, *td = dst->topo;
  char text[512];
  fcl_kbuilder *kb = NULL;
  FCL_TRY(fcl_kbuilder_create("field_transpose", &kb));
  snprintf(text, sizeof text, "%zu, %zu, %zu", src->padded[2], src->padded[1], src->padded[0]);
  fcl_status st = fcl_kbuilder_add_array(kb, "src", src->dtype, text);
  snprintf(text, sizeof text, "%zu, %zu, %zu", dst->padded[2], dst->padded[1], dst->padded[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_array(kb, "dst", dst->dtype, text);
  snprintf(text, sizeof text, "{ [k, j, i]: 0 <= k < %lld and 0 <= j < %lld and 0 <= i < %lld }",
           (long long)ts->local[2], (long long)ts->local[1], (long long)ts->local[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_domain(kb, text);
  snprintf(text, sizeof text, "dst[%s + %d, %s + %d, %s + %d] = src[k + %d, j + %d, i + %d]",
           iname[perm[2]], td->origin[2], iname[perm[1]], td->origin[1], iname[perm[0]],
           td->origin[0], ts->origin[2], ts->origin[1], ts->origin[0]);
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, text);
  if (st != FCL_OK) fcl_kbuilder_destroy(&kb);
  *out = kb;
  return st;
}

typedef struct {
  int perm[3];
  size_t max_wg, itemsize;
  uint64_t local_mem;
} mapping;

/* choice: tile, rows, staged. Same contiguous axis: float4 vectors along x, tile * 4 wide, rows of y
 * per work-group. Otherwise square tiles through local memory (padded against bank
 * conflicts) when staged (GPUs; CPU work-group barriers cost more than the strided reads they
 * save), each work-item moving tile / rows elements, work-items along dst's contiguous axis
 * when writing. */
static fcl_status apply(void *user, fcl_kbuilder *kb, const int64_t *choice) {
  const mapping *m = user;
  int64_t t = choice[0], rows = choice[1], staged = choice[2];
  int p0 = m->perm[0];
  if ((size_t)(t * rows) > m->max_wg || rows > t) return FCL_ERR_NOT_SUPPORTED;
  if (p0 == 0) {
    FCL_TRY(fcl_kbuilder_split_iname(kb, "i", t * 4, "g.0", NULL));
    FCL_TRY(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec"));
    FCL_TRY(fcl_kbuilder_split_iname(kb, "j", rows, "g.1", "l.1"));
    return fcl_kbuilder_tag_inames(kb, "k:g.2");
  }
  if (staged && (uint64_t)(t * (t + 1)) * m->itemsize > m->local_mem) return FCL_ERR_NOT_SUPPORTED;
  int other = 3 - p0; /* the axis that is neither x nor p0 */
  FCL_TRY(fcl_kbuilder_split_iname(kb, iname[p0], t, "g.0", "l.0"));
  FCL_TRY(fcl_kbuilder_split_iname(kb, "i", t, "g.1", NULL));
  FCL_TRY(fcl_kbuilder_split_iname(kb, "i_inner", rows, NULL, "l.1"));
  char tag[16];
  snprintf(tag, sizeof tag, "%s:g.2", iname[other]);
  FCL_TRY(fcl_kbuilder_tag_inames(kb, tag));
  if (!staged) return FCL_OK;
  char sweep[32];
  snprintf(sweep, sizeof sweep, "i_inner, %s_inner", iname[p0]);
  return fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "src", .sweep = sweep, .pad = 1});
}

static fcl_status build(const fcl_field *src, fcl_field *dst, const int *perm, cached *e) {
  fcl_kbuilder *base = NULL, *best = NULL;
  FCL_TRY(make_builder(src, dst, perm, &base));
  fcl_device *dev;
  fcl_device_info info;
  fcl_status st = fcl_queue_device(dst->queue, &dev);
  if (st == FCL_OK) st = fcl_device_get_info(dev, &info);
  mapping m = {{perm[0], perm[1], perm[2]},
               st == FCL_OK ? info.max_work_group_size : 1,
               src->itemsize,
               st == FCL_OK ? info.local_mem_size : 0};
  static const int64_t tiles[] = {32, 16, 64}, rows[] = {4, 8, 16, 1}, gpu_staged[] = {1, 0},
                       cpu_staged[] = {0, 1};
  bool gpu = st == FCL_OK && (info.type & FCL_DEVICE_GPU);
  const fcl_tune_axis axes[] = {
      {"tile", 3, tiles}, {"rows", 4, rows}, {"staged", 2, gpu ? gpu_staged : cpu_staged}};
  fcl_tune_options opt = {.effort = FCL_TUNE_AUTO}; /* measured once per GPU, remembered */
  fcl_tune_result r;
  if (st == FCL_OK) st = fcl_tune(base, 3, axes, apply, &m, dst->context, dev, &opt, &r, &best);
  if (st == FCL_OK) st = fcl_kbuilder_build(best, dst->context, NULL, dst->queue, &e->launcher);
  if (st == FCL_OK) st = fcl_param_set_create(e->launcher, &e->params);
  fcl_kbuilder_destroy(&base);
  fcl_kbuilder_destroy(&best);
  return st;
}

fcl_status fcl_field_transpose(const fcl_field *src, int src_comp, const int *perm, fcl_field *dst,
                               int dst_comp) {
  FCL_CHECK_NULL(src, 1);
  FCL_CHECK_NULL(perm, 3);
  FCL_CHECK_NULL(dst, 4);
  const int dim = src->topo->domain.dim;
  int p[3] = {0, 1, 2}, seen = 0;
  for (int a = 0; a < dim; ++a) {
    if (perm[a] < 0 || perm[a] >= dim || (seen & (1 << perm[a])))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 3 (perm): not a permutation of the "
                       "%d axes",
                       dim);
    seen |= 1 << perm[a];
    p[a] = perm[a];
  }
  if (src_comp < 0 || src_comp >= src->ncomp || dst_comp < 0 || dst_comp >= dst->ncomp)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "transpose: component %d of '%s' or %d of '%s' "
                     "does not exist",
                     src_comp, src->name, dst_comp, dst->name);
  if (src->dtype != dst->dtype)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "transpose: '%s' and '%s' differ in precision",
                     src->name, dst->name);
  for (int a = 0; a < 3; ++a)
    if (dst->topo->local[a] != src->topo->local[p[a]])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "transpose: '%s' has %lld points along axis %d, "
                       "'%s' has %lld along axis %d (perm)",
                       dst->name, (long long)dst->topo->local[a], a, src->name,
                       (long long)src->topo->local[p[a]], p[a]);
  if (!dst->transposes && !(dst->transposes = calloc(1, sizeof(transpose_cache))))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "transpose cache");
  transpose_cache *c = dst->transposes;
  cached *e = NULL;
  for (int i = 0; i < c->n && !e; ++i)
    if (!memcmp(c->entry[i].perm, p, sizeof p) &&
        !memcmp(c->entry[i].src_padded, src->padded, sizeof src->padded) &&
        !memcmp(c->entry[i].src_origin, src->topo->origin, sizeof c->entry[i].src_origin))
      e = &c->entry[i];
  if (!e) {
    if (c->n == MAX_CACHED) { /* forget the oldest */
      fcl_param_set_destroy(&c->entry[0].params);
      fcl_launcher_destroy(&c->entry[0].launcher);
      memmove(c->entry, c->entry + 1, (MAX_CACHED - 1) * sizeof *c->entry);
      c->n--;
    }
    e = &c->entry[c->n];
    memset(e, 0, sizeof *e);
    memcpy(e->perm, p, sizeof p);
    memcpy(e->src_padded, src->padded, sizeof src->padded);
    memcpy(e->src_origin, src->topo->origin, sizeof e->src_origin);
    fcl_status st = build(src, dst, p, e);
    if (st != FCL_OK) {
      fcl_param_set_destroy(&e->params);
      fcl_launcher_destroy(&e->launcher);
      return st;
    }
    c->n++;
  }
  FCL_TRY(fcl_param_set_buffer(e->params, "src", fcl_field_buffer(src, src_comp)));
  FCL_TRY(fcl_param_set_buffer(e->params, "dst", fcl_field_buffer(dst, dst_comp)));
  return fcl_launcher_call(e->launcher, dst->queue, e->params, 0, NULL, NULL);
}
