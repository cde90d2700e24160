/* The per-operator statistics report: host wall time per node, device time and bytes of the
 * operators' launchers, averaged over the ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "problem_impl.h"

fcl_status fcl__operator_device_stats(const fcl_operator *d, double *ns, double *bytes) {
  *ns = *bytes = 0;
  for (int i = 0; d->launcher; ++i) {
    fcl_launcher *l = d->launcher(d->data, i);
    if (!l) break;
    fcl_launch_stats s;
    FCL_TRY(fcl_launcher_statistics(l, &s));
    *ns += s.total_ns;
    *bytes += s.bytes;
  }
  return FCL_OK;
}

int fcl_problem_num_nodes(const fcl_problem *p) { return p && p->ready ? p->nnodes : 0; }

fcl_status fcl_problem_node_statistics(fcl_problem *p, int index, fcl_node_stats *out) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(out, 3);
  if (index < 0 || index >= fcl_problem_num_nodes(p))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': node %d (it has %d after setup)",
                     p->name, index, fcl_problem_num_nodes(p));
  const fcl__node *node = &p->nodes[index];
  *out = (fcl_node_stats){.calls = node->calls, .wall_s = node->wall_s};
  if (node->kind == FCL__NODE_GHOSTS) { /* device: timed node by node only */
    snprintf(out->name, sizeof out->name, "ghosts(%s)", fcl_field_name(p->fields[node->field]));
    out->device_ns = node->device_ns;
    out->bytes = node->bytes;
    return FCL_OK;
  }
  snprintf(out->name, sizeof out->name, "%s", p->ops[node->op].name);
  if (node->device_ns > 0) { /* timed node by node */
    out->device_ns = node->device_ns;
    out->bytes = node->bytes;
    return FCL_OK;
  }
  return fcl__operator_device_stats(&p->ops[node->op].desc, &out->device_ns, &out->bytes);
}

fcl_status fcl_problem_report(fcl_problem *p, FILE *out) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(out, 2);
  if (!p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': report after setup", p->name);
  FCL_TRY(fcl__problem_finish(p));
  MPI_Comm comm = fcl__problem_comm(p);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* per node: wall seconds, device ns, bytes (operators; ghost nodes with per-node timing) */
  double *v = calloc(3 * (size_t)p->nnodes, sizeof *v);
  if (!v) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "report");
  fcl_status st = FCL_OK;
  char(*names)[64] = calloc((size_t)p->nnodes, sizeof *names);
  if (!names) {
    free(v);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "report");
  }
  for (int n = 0; n < p->nnodes && st == FCL_OK; ++n) {
    fcl_node_stats ns;
    st = fcl_problem_node_statistics(p, n, &ns);
    v[3 * n] = ns.wall_s;
    v[3 * n + 1] = ns.device_ns;
    v[3 * n + 2] = ns.bytes;
    memcpy(names[n], ns.name, sizeof names[n]);
  }
  int ok = st == FCL_OK, all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (all_ok) MPI_Allreduce(MPI_IN_PLACE, v, 3 * p->nnodes, MPI_DOUBLE, MPI_SUM, comm);
  if (all_ok && rank == 0) {
    double total = 0;
    for (int n = 0; n < p->nnodes; ++n) total += v[3 * n] / size;
    fprintf(out, "problem '%s': %lld steps on %d rank(s), mean over ranks\n", p->name,
            (long long)p->steps, size);
    fprintf(out, "  %-34s %10s %8s %12s %10s\n", "node", "wall ms", "share", "device ms", "GB/s");
    for (int n = 0; n < p->nnodes; ++n) {
      const fcl__node *node = &p->nodes[n];
      const char *name = names[n];
      const double calls = node->calls ? (double)node->calls : 1;
      const double wall = v[3 * n] / size, dev = v[3 * n + 1] / size, bytes = v[3 * n + 2] / size;
      fprintf(out, "  %-34s %10.3f %7.1f%%", name, 1e3 * wall / calls,
              total > 0 ? 100 * wall / total : 0);
      if (dev > 0)
        fprintf(out, " %12.3f %10.1f\n", 1e-6 * dev / calls, bytes > 0 ? bytes / dev : 0);
      else
        fprintf(out, " %12s %10s\n", "-", "-");
    }
    if (p->timing)
      fprintf(out, "  (wall: host time per call, including waits; device: profiled kernel time "
                   "per call of flowcl's kernels, not an FFT library's, when the queue "
                   "profiles; of a ghost node: its exchange's kernels and copies, not the "
                   "messages)\n");
    else
      fprintf(out, "  (per-node timing is off: wall is the host's time to enqueue each node, not "
                   "its run time; fcl_problem_set_timing times each node; device: profiled "
                   "kernel time per call of flowcl's kernels, not an FFT library's, when the "
                   "queue profiles)\n");
  }
  free(v);
  free(names);
  if (st == FCL_OK && !all_ok)
    st = FCL_ERROR(FCL_ERR_INTERNAL, "problem '%s': statistics failed on another rank", p->name);
  return st;
}
