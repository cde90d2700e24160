/* Self-check kernels run by flowcl-info and the runtime tests: results are exact in float, so
 * the host can compare bit for bit. */

/* y[i] = a * x[i] + y[i] */
FCL_KERNEL void axpy(const float a, FCL_GLOBAL const float *x, FCL_GLOBAL float *y, const int n) {
  const int i = (int)get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

/* out[i] = i + offset, over a 1-3 dimensional range flattened in C order (x fastest). */
FCL_KERNEL void iota(FCL_GLOBAL int *out, const int offset) {
  const size_t i = get_global_id(0) +
                   get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
  out[i] = (int)i + offset;
}

/* Sum of each work-group's slice through local memory: exercises local-memory arguments and
 * barriers. sums[group] = sum of x over the group's items. */
FCL_KERNEL void group_sum(FCL_GLOBAL const int *x, FCL_GLOBAL int *sums,
                          FCL_LOCAL_PARAM(int, scratch)) {
  const size_t l = get_local_id(0), n = get_local_size(0);
  scratch[l] = x[get_global_id(0)];
  FCL_BARRIER_LOCAL();
  for (size_t s = n / 2; s > 0; s /= 2) {
    if (l < s) scratch[l] += scratch[l + s];
    FCL_BARRIER_LOCAL();
  }
  if (l == 0) sums[get_group_id(0)] = scratch[0];
}
