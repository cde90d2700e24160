/* Self-check kernels run by flowcl-info and the runtime tests: results are exact in float, so
 * the host can compare bit for bit. */

/* y[i] = a * x[i] + y[i] */
__kernel void axpy(const float a, __global const float *x, __global float *y, const int n) {
  const int i = (int)get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

/* out[i] = i + offset, over a 1-3 dimensional range flattened in C order (x fastest). */
__kernel void iota(__global int *out, const int offset) {
  const size_t i = get_global_id(0) +
                   get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
  out[i] = (int)i + offset;
}

/* Sum of each work-group's slice through local memory: exercises __local arguments and
 * barriers. sums[group] = sum of x over the group's items. */
__kernel void group_sum(__global const int *x, __global int *sums, __local int *scratch) {
  const size_t l = get_local_id(0), n = get_local_size(0);
  scratch[l] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = n / 2; s > 0; s /= 2) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) sums[get_group_id(0)] = scratch[0];
}
