/* The operator graph: registration, resolution (checks, inserted ghost exchanges), step and
 * description. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "problem_impl.h"

fcl_status fcl_problem_create(const char *name, fcl_problem **out) {
  FCL_CHECK_NULL(name, 1);
  FCL_CHECK_NULL(out, 2);
  fcl_problem *p = calloc(1, sizeof *p);
  if (!p || !(p->name = strdup(name))) {
    free(p);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "problem '%s'", name);
  }
  *out = p;
  return FCL_OK;
}

void fcl_problem_destroy(fcl_problem **problem) {
  if (!problem || !*problem) return;
  fcl_problem *p = *problem;
  for (int o = 0; o < p->nops; ++o) {
    if (p->ops[o].desc.destroy) p->ops[o].desc.destroy(p->ops[o].desc.data);
    free(p->ops[o].name);
  }
  free(p->ops);
  free(p->fields);
  free(p->state);
  free(p->nodes);
  free(p->prologue);
  free(p->prologue_unwrapped);
  free(p->name);
  free(p);
  *problem = NULL;
}

static int field_index(const fcl_problem *p, const fcl_field *f) {
  for (int i = 0; i < p->nfields; ++i)
    if (p->fields[i] == f) return i;
  return -1;
}

fcl_status fcl_problem_add_field(fcl_problem *p, fcl_field *field, bool state) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(field, 2);
  if (p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': fields are added before setup",
                     p->name);
  for (int i = 0; i < p->nfields; ++i)
    if (!strcmp(fcl_field_name(p->fields[i]), fcl_field_name(field)))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "problem '%s': a field named '%s' is already "
                       "registered",
                       p->name, fcl_field_name(field));
  int cmp = MPI_IDENT;
  if (p->nfields)
    MPI_Comm_compare(fcl_topology_comm(fcl_field_topology(p->fields[0])),
                     fcl_topology_comm(fcl_field_topology(field)), &cmp);
  if (cmp == MPI_UNEQUAL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "problem '%s': field '%s' is on another "
                     "communicator than '%s'",
                     p->name, fcl_field_name(field), fcl_field_name(p->fields[0]));
  fcl_field **fields = realloc(p->fields, (size_t)(p->nfields + 1) * sizeof *fields);
  if (fields) p->fields = fields;
  bool *st = realloc(p->state, (size_t)(p->nfields + 1) * sizeof *st);
  if (st) p->state = st;
  if (!fields || !st) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "problem '%s'", p->name);
  p->fields[p->nfields] = field;
  p->state[p->nfields++] = state;
  return FCL_OK;
}

fcl_status fcl_problem_add_operator(fcl_problem *p, const fcl_operator *op) {
  if (op && op->destroy && (!p || p->ready || !op->name || !op->apply)) op->destroy(op->data);
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(op, 2);
  if (p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': operators are added before setup",
                     p->name);
  if (!op->name || !op->apply)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (op): name and apply are required");
  fcl_status st = FCL_OK;
  if (!(op->dt_fraction >= 0 && op->dt_fraction <= 1))
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "operator '%s': dt_fraction %g (0 to 1)", op->name,
                   op->dt_fraction);
  if (st == FCL_OK && (op->nuses < 0 || op->nuses > FCL_OPERATOR_MAX_USES))
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "operator '%s': %d uses (0 to %d)", op->name,
                   op->nuses, FCL_OPERATOR_MAX_USES);
  fcl__op *ops = st == FCL_OK ? realloc(p->ops, (size_t)(p->nops + 1) * sizeof *ops) : NULL;
  char *name = ops ? strdup(op->name) : NULL;
  if (st == FCL_OK && ops) p->ops = ops;
  if (st == FCL_OK && !name) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "operator '%s'", op->name);
  if (st != FCL_OK) {
    if (op->destroy) op->destroy(op->data);
    return st;
  }
  p->ops[p->nops].desc = *op;
  p->ops[p->nops].desc.name = name;
  p->ops[p->nops++].name = name;
  return FCL_OK;
}

/* The checks of one operator's uses: registered, one precision, enough ghosts. */
static fcl_status check_uses(const fcl_problem *p, const fcl__op *op) {
  const fcl_operator *d = &op->desc;
  for (int u = 0; u < d->nuses; ++u) {
    const fcl_field *f = d->uses[u].field;
    if (!f)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "problem '%s': operator '%s', use %d: no "
                       "field",
                       p->name, op->name, u);
    if (field_index(p, f) < 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "problem '%s': operator '%s' uses field '%s', "
                       "which is not a field of the problem (fcl_problem_add_field)",
                       p->name, op->name, fcl_field_name(f));
    const fcl_field *f0 = d->uses[0].field;
    if (fcl_field_dtype(f) != fcl_field_dtype(f0))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "problem '%s': operator '%s' mixes precisions: "
                       "field '%s' is %s, field '%s' is %s",
                       p->name, op->name, fcl_field_name(f0),
                       fcl_dtype_cl_name(fcl_field_dtype(f0)), fcl_field_name(f),
                       fcl_dtype_cl_name(fcl_field_dtype(f)));
    const fcl_topology *t = fcl_field_topology(f);
    for (int a = 0; a < fcl_topology_domain(t)->dim; ++a)
      if (fcl_topology_ghosts(t)[a] < d->uses[u].ghosts)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "problem '%s': operator '%s' reads %d ghosts "
                         "of field '%s', whose topology has %d on axis %d",
                         p->name, op->name, d->uses[u].ghosts, fcl_field_name(f),
                         fcl_topology_ghosts(t)[a], a);
  }
  return FCL_OK;
}

/* How current a field's ghosts are: not, all but the wrapping axes', all. */
enum { STALE, UNWRAPPED, FRESH };

/* Walk the operators once from the ghost state `fresh` (per field: STALE, ...), appending the
 * exchanges needed when nodes is non-NULL; fresh ends as the state after the step. */
static int walk(const fcl_problem *p, unsigned char *fresh, fcl__node *nodes) {
  int n = 0;
  for (int o = 0; o < p->nops; ++o) {
    const fcl_operator *d = &p->ops[o].desc;
    for (int u = 0; u < d->nuses; ++u) {
      const int f = field_index(p, d->uses[u].field);
      if (!d->uses[u].read || d->uses[u].ghosts <= 0) continue;
      /* one exchange for the widest read of this field by this operator, the wrapping axes
       * left out where every such read takes periodic images */
      int width = 0;
      bool images = true;
      for (int v = 0; v < d->nuses; ++v)
        if (d->uses[v].field == d->uses[u].field && d->uses[v].read && d->uses[v].ghosts > 0) {
          if (d->uses[v].ghosts > width) width = d->uses[v].ghosts;
          images = images && d->uses[v].periodic_images;
        }
      if (fresh[f] >= (images ? UNWRAPPED : FRESH)) continue;
      if (nodes)
        nodes[n] = (fcl__node){
            .kind = FCL__NODE_GHOSTS, .op = o, .field = f, .width = width, .unwrapped = images};
      ++n;
      fresh[f] = images ? UNWRAPPED : FRESH;
    }
    if (nodes) nodes[n] = (fcl__node){.kind = FCL__NODE_OPERATOR, .op = o};
    ++n;
    for (int u = 0; u < d->nuses; ++u)
      if (d->uses[u].written) fresh[field_index(p, d->uses[u].field)] = STALE;
  }
  return n;
}

/* Whether operator o names field f among its uses (read or written). */
static bool uses_field(const fcl_problem *p, int o, int f) {
  const fcl_operator *d = &p->ops[o].desc;
  for (int u = 0; u < d->nuses; ++u)
    if (field_index(p, d->uses[u].field) == f) return true;
  return false;
}

/* Overlap: an exchange begins before the earliest node of the step after which nothing up to
 * its reader touches the field (no operator using it, no other exchange of it), so that the
 * operators in between run while its messages travel; it ends before its reader. */
static void plan_overlap(fcl_problem *p) {
  for (int n = 0; n < p->nnodes; ++n) {
    fcl__node *node = &p->nodes[n];
    node->begin_at = n;
    if (node->kind != FCL__NODE_GHOSTS) continue;
    for (int m = n - 1; m >= 0; --m) {
      const fcl__node *before = &p->nodes[m];
      if (before->kind == FCL__NODE_GHOSTS ? before->field == node->field
                                           : uses_field(p, before->op, node->field))
        break;
      node->begin_at = m;
    }
  }
}

fcl_status fcl_problem_setup(fcl_problem *p) {
  FCL_CHECK_NULL(p, 1);
  if (p->ready) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': already set up", p->name);
  if (!p->nops) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': no operators", p->name);
  for (int o = 0; o < p->nops; ++o) FCL_TRY(check_uses(p, &p->ops[o]));
  /* values: a field is read only after an operator wrote it, or if it is state */
  bool *valid = calloc((size_t)p->nfields, sizeof *valid);
  unsigned char *fresh = calloc((size_t)p->nfields, sizeof *fresh),
                *after = calloc((size_t)p->nfields, sizeof *after);
  if (!valid || !fresh || !after) {
    free(valid);
    free(fresh);
    free(after);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "problem '%s'", p->name);
  }
  fcl_status st = FCL_OK;
  for (int i = 0; i < p->nfields; ++i) valid[i] = p->state[i];
  for (int o = 0; o < p->nops && st == FCL_OK; ++o) {
    const fcl_operator *d = &p->ops[o].desc;
    for (int u = 0; u < d->nuses && st == FCL_OK; ++u)
      if (d->uses[u].read && !valid[field_index(p, d->uses[u].field)])
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "problem '%s': operator '%s' reads field '%s' "
                       "before any operator writes it (register it as state if it holds "
                       "initial values)",
                       p->name, p->ops[o].name, fcl_field_name(d->uses[u].field));
    for (int u = 0; u < d->nuses; ++u)
      if (d->uses[u].written) valid[field_index(p, d->uses[u].field)] = true;
  }
  /* ghosts: the step is a cycle, so plan from the state a step leaves (a second walk from
   * it reproduces it); fields current at that point are refreshed once before the first step */
  int nnodes = 0;
  if (st == FCL_OK) {
    walk(p, fresh, NULL);
    memcpy(after, fresh, (size_t)p->nfields * sizeof *after);
    nnodes = walk(p, fresh, NULL);
    memcpy(fresh, after, (size_t)p->nfields * sizeof *after);
    p->nodes = calloc((size_t)nnodes, sizeof *p->nodes);
    p->prologue = calloc((size_t)p->nfields + 1, sizeof *p->prologue);
    p->prologue_unwrapped = calloc((size_t)p->nfields + 1, sizeof *p->prologue_unwrapped);
    if (!p->nodes || !p->prologue || !p->prologue_unwrapped)
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "problem '%s'", p->name);
  }
  if (st == FCL_OK) {
    for (int i = 0; i < p->nfields; ++i)
      if (fresh[i]) {
        p->prologue_unwrapped[p->nprologue] = fresh[i] == UNWRAPPED;
        p->prologue[p->nprologue++] = i;
      }
    p->nnodes = walk(p, fresh, p->nodes);
    plan_overlap(p);
    p->ready = true;
  }
  free(valid);
  free(fresh);
  free(after);
  return st;
}

double fcl_problem_max_dt(const fcl_problem *p) {
  double m = INFINITY;
  for (int o = 0; p && o < p->nops; ++o) {
    const fcl_operator *d = &p->ops[o].desc;
    /* an operator that advances a share of the step bounds the step at its bound / share */
    const double share = d->dt_fraction > 0 ? d->dt_fraction : 1;
    if (d->max_dt) m = fmin(m, d->max_dt(d->data) / share);
  }
  return m;
}

fcl_status fcl_problem_set_timing(fcl_problem *p, bool synchronize) {
  FCL_CHECK_NULL(p, 1);
  /* earlier work completes first, so that no node is charged for it */
  if (synchronize && !p->timing) FCL_TRY(fcl__problem_finish(p));
  p->timing = synchronize;
  for (int n = 0; n < p->nnodes; ++n) { /* the statistics restart with the new mode */
    p->nodes[n].wall_s = p->nodes[n].device_ns = p->nodes[n].bytes = 0;
    p->nodes[n].calls = 0;
  }
  return FCL_OK;
}

/* A ghost node's field's ghost statistics so far (fcl_field_ghost_statistics). */
static fcl_status ghost_device_stats(fcl_problem *p, const fcl__node *node, double *ns,
                                     double *bytes) {
  fcl_launch_stats s;
  FCL_TRY(fcl_field_ghost_statistics(p->fields[node->field], &s));
  *ns = s.total_ns;
  *bytes = s.bytes;
  return FCL_OK;
}

/* The nodes of one step in order, exchanges begun early where planned. */
static fcl_status run_nodes(fcl_problem *p, const fcl_step_info *info) {
  for (int n = 0; n < p->nnodes; ++n) {
    fcl__node *node = &p->nodes[n];
    double ns0 = 0, bytes0 = 0; /* per-node timing: the launchers' totals before the node */
    fcl_status st = FCL_OK;
    for (int m = n + 1; m < p->nnodes && st == FCL_OK; ++m) /* exchanges begun early, here */
      if (p->nodes[m].kind == FCL__NODE_GHOSTS && p->nodes[m].begin_at == n) {
        const double b0 = MPI_Wtime(); /* charged to the exchange's node */
        if (p->timing)
          st = ghost_device_stats(p, &p->nodes[m], &p->nodes[m].ns0, &p->nodes[m].bytes0);
        fcl_field *f = p->fields[p->nodes[m].field];
        if (st == FCL_OK)
          st = p->nodes[m].unwrapped ? fcl_field_ghosts_begin_unwrapped(f)
                                     : fcl_field_ghosts_begin(f);
        p->nodes[m].in_flight = st == FCL_OK;
        p->nodes[m].wall_s += MPI_Wtime() - b0;
      }
    if (st != FCL_OK) return st;
    const double t0 = MPI_Wtime();
    if (node->kind == FCL__NODE_GHOSTS) {
      fcl_field *f = p->fields[node->field];
      if (p->timing && !node->in_flight)
        st = ghost_device_stats(p, node, &node->ns0, &node->bytes0);
      if (st == FCL_OK)
        st = node->in_flight   ? fcl_field_ghosts_end(f)
             : node->unwrapped ? fcl_field_ghosts_update_unwrapped(f)
                               : fcl_field_ghosts_update(f);
      node->in_flight = false;
    } else {
      const fcl_operator *d = &p->ops[node->op].desc;
      if (p->timing) FCL_TRY(fcl__operator_device_stats(d, &ns0, &bytes0));
      fcl_step_info part = *info;
      if (d->dt_fraction > 0) part.dt *= d->dt_fraction;
      fcl_clear_error(); /* an apply that fails without a message leaves none of another's */
      st = d->apply(d->data, &part);
      if (st != FCL_OK) {
        char why[512]; /* the operator's message, kept under the problem's context */
        snprintf(why, sizeof why, "%s",
                 fcl_last_status() != FCL_OK ? fcl_last_error() : "failed without a message");
        return FCL_ERROR(st,
                         "problem '%s': operator '%s' failed at step %lld (t = %g, "
                         "dt = %g): %s",
                         p->name, p->ops[node->op].name, (long long)info->step, info->t, info->dt,
                         why);
      }
    }
    if (st == FCL_OK && p->timing) st = fcl__problem_finish(p);
    if (st == FCL_OK && p->timing) {
      double ns1 = 0, bytes1 = 0;
      if (node->kind == FCL__NODE_OPERATOR) {
        st = fcl__operator_device_stats(&p->ops[node->op].desc, &ns1, &bytes1);
      } else { /* from before its begin, early or here */
        st = ghost_device_stats(p, node, &ns1, &bytes1);
        ns0 = node->ns0;
        bytes0 = node->bytes0;
      }
      node->device_ns += ns1 - ns0;
      node->bytes += bytes1 - bytes0;
    }
    if (st != FCL_OK) return st;
    node->wall_s += MPI_Wtime() - t0;
    ++node->calls;
  }
  return FCL_OK;
}

/* After a failed node: the exchanges begun early are completed (their messages were posted;
 * the peers posted theirs at the same nodes), so that nothing stays in flight on the fields'
 * staging; the failure's message is kept. */
static void end_in_flight(fcl_problem *p, fcl_status failed) {
  char why[1024];
  snprintf(why, sizeof why, "%s", fcl_last_error());
  bool lost = false;
  for (int n = 0; n < p->nnodes; ++n)
    if (p->nodes[n].in_flight) {
      lost |= fcl_field_ghosts_end(p->fields[p->nodes[n].field]) != FCL_OK;
      p->nodes[n].in_flight = false;
    }
  if (lost) (void)FCL_ERROR(failed, "%s; completing the exchanges begun early failed too", why);
}

fcl_status fcl_problem_step(fcl_problem *p, const fcl_step_info *info) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(info, 2);
  if (!p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': step before setup", p->name);
  if (!(isfinite(info->dt) && info->dt > 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': dt = %g (must be > 0)", p->name,
                     info->dt);
  if (p->steps == 0)
    for (int i = 0; i < p->nprologue; ++i)
      FCL_TRY(p->prologue_unwrapped[i]
                  ? fcl_field_ghosts_update_unwrapped(p->fields[p->prologue[i]])
                  : fcl_field_ghosts_update(p->fields[p->prologue[i]]));
  fcl_status st = run_nodes(p, info);
  if (st != FCL_OK) {
    end_in_flight(p, st);
    return st;
  }
  ++p->steps;
  return FCL_OK;
}

fcl_status fcl_problem_describe(const fcl_problem *p, char **text) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(text, 2);
  *text = NULL;
  if (!p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': describe after setup", p->name);
  size_t size = 256 + (size_t)(p->nnodes + p->nprologue) * 512, len = 0;
  char *s = malloc(size);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "problem '%s'", p->name);
#define PUT(...) len += (size_t)snprintf(s + len, len < size ? size - len : 0, __VA_ARGS__)
  PUT("problem '%s': %d fields, %d operators, %d nodes per step\n", p->name, p->nfields, p->nops,
      p->nnodes);
  for (int i = 0; i < p->nprologue; ++i)
    PUT("   0. ghosts(%s)%s [first step only: state read with ghosts]\n",
        fcl_field_name(p->fields[p->prologue[i]]),
        p->prologue_unwrapped[i] ? ", the wrapping axes left out" : "");
  for (int n = 0; n < p->nnodes; ++n) {
    const fcl__node *node = &p->nodes[n];
    const fcl_operator *d = &p->ops[node->op].desc;
    if (node->kind == FCL__NODE_GHOSTS) {
      PUT("  %2d. ghosts(%s) width %d%s [inserted: read by '%s'", n + 1,
          fcl_field_name(p->fields[node->field]), node->width,
          node->unwrapped ? ", the wrapping axes left out" : "", d->name);
      if (node->begin_at < n) PUT("; begun before node %d", node->begin_at + 1);
      PUT("]\n");
      continue;
    }
    PUT("  %2d. %s", n + 1, d->name);
    if (d->dt_fraction > 0 && d->dt_fraction != 1) PUT(" (dt x %g)", d->dt_fraction);
    const char *sep = " reads ";
    for (int u = 0; u < d->nuses; ++u)
      if (d->uses[u].read) {
        PUT("%s%s", sep, fcl_field_name(d->uses[u].field));
        if (d->uses[u].ghosts) PUT("(+%d)", d->uses[u].ghosts);
        sep = ", ";
      }
    sep = "; writes ";
    for (int u = 0; u < d->nuses; ++u)
      if (d->uses[u].written) {
        PUT("%s%s", sep, fcl_field_name(d->uses[u].field));
        sep = ", ";
      }
    PUT("\n");
  }
#undef PUT
  if (len >= size) {
    free(s);
    return FCL_ERROR(FCL_ERR_INTERNAL, "problem description too long");
  }
  *text = s;
  return FCL_OK;
}

MPI_Comm fcl__problem_comm(const fcl_problem *p) {
  return p->nfields ? fcl_topology_comm(fcl_field_topology(p->fields[0])) : MPI_COMM_SELF;
}

fcl_status fcl__problem_finish(const fcl_problem *p) {
  for (int i = 0; i < p->nfields; ++i) {
    fcl_queue *q = fcl_field_queue(p->fields[i]);
    bool seen = false; /* fields usually share one queue: each is finished once */
    for (int j = 0; j < i && !seen; ++j) seen = fcl_field_queue(p->fields[j]) == q;
    if (!seen) FCL_TRY(fcl_queue_finish(q));
  }
  return FCL_OK;
}

fcl_status fcl__problem_settle(fcl_problem *p, const char *when) {
  fcl_status first = FCL_OK;
  char why[1024] = "";
  for (int i = 0; i < p->nops; ++i) {
    const fcl_operator *d = &p->ops[i].desc;
    fcl_clear_error(); /* a callback that fails without a message leaves none of another's */
    const fcl_status st = d->settle ? d->settle(d->data) : FCL_OK;
    if (st != FCL_OK && first == FCL_OK) {
      first = st;
      snprintf(why, sizeof why, "problem '%s': operator '%s'%s: %s", p->name, p->ops[i].name, when,
               fcl_last_status() != FCL_OK ? fcl_last_error() : "failed without a message");
    }
  }
  return first == FCL_OK ? FCL_OK : FCL_ERROR(first, "%s", why);
}

fcl_status fcl_problem_settle(fcl_problem *p) {
  FCL_CHECK_NULL(p, 1);
  return fcl__problem_settle(p, "");
}
